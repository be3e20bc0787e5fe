/* interp.h: the statement language's interpreter, the main header of py/.
 *
 * py/ is the Python subset: lexer (lex.c), parser (syntax.c), interpreter
 * (interp.c), object model (objects.c), classes (class.c), Python's
 * built-ins (builtins_py.c), re (re.c) and range (range.c).  It uses the layers below it (util/, ir/
 * values, text/ for the jaxpr literals the grammar holds) and knows nothing
 * of JAX: it includes no header of jax/, exec/, check/ or cmd/ and calls
 * none of their functions.  Everything shardrepl adds to Python -- JAX's
 * modules, the colon commands, calling and checking jaxprs, the state of
 * JAX and of the evaluator -- comes in through one table of hooks, SrPyInit
 * below, that the layer above defines (lib/cmd/linit.c's sr_linit, as Lua's
 * linit.c opens Lua's libraries) and passes to sr_interp_new.
 *
 * The interpreter evaluates the syntax tree of ast.h over SrVals.  Errors
 * are Python exceptions: a function that fails raises (sr_raise) and
 * returns NULL (or -1); the exception carries JAX's type name and message
 * and the location of the innermost statement or expression that raised
 * it.  An uncaught exception becomes a located diagnostic and never ends
 * the session: bindings made before it stay.
 *
 * Built-in functions and modules live in one registry keyed by qualified
 * name ("jax.numpy.sin"); an embedding adds module aliases and the
 * prefixes bare names fall back to (objects.h: shardrepl's make jnp
 * jax.numpy, and jax., jax.numpy., jax.lax. and jax.sharding. optional).
 */
#ifndef SR_LANG_INTERP_H
#define SR_LANG_INTERP_H

#include <stdio.h>
#include <stdint.h>

#include "core/core.h"
#include "ir/val.h"
#include "py/ast.h"
#include "util/buf.h"
#include "util/diag.h"

/* A call's arguments, as a builtin sees them (all borrowed). */
typedef struct SrArgs {
  int n;
  SrVal **v;
  int nkw;
  const char **kw; /* interned */
  SrVal **kwv;
  SrVal *self;     /* bound methods: the object; else NULL */
} SrArgs;

typedef SrVal *(*SrBuiltinFn)(SrInterp *I, SrArgs *a);

/* What SR_V_OBJ values of a class can do.  Every slot may be NULL. */
typedef struct SrLangOps {
  SrVal *(*call)(SrInterp *I, SrVal *self, SrArgs *a);
  SrVal *(*getattr)(SrInterp *I, SrVal *self, const char *name); /* NULL: not found
                                                                   (no exception set) */
  int (*setattr)(SrInterp *I, SrVal *self, const char *name, SrVal *v);
  SrVal *(*getitem)(SrInterp *I, SrVal *self, SrVal *key);
  int (*setitem)(SrInterp *I, SrVal *self, SrVal *key, SrVal *v);
  /* the items to iterate over, as a new list */
  SrVal *(*iter)(SrInterp *I, SrVal *self);
  /* a op b; reflected when self is b.  Returns NULL without an exception
     for "not implemented" (I->exc unset). */
  SrVal *(*binop)(SrInterp *I, int op, SrVal *a, SrVal *b);
  SrVal *(*unop)(SrInterp *I, int op, SrVal *a);
  SrVal *(*compare)(SrInterp *I, int op, SrVal *a, SrVal *b);
  int64_t (*len)(SrInterp *I, SrVal *self); /* -1: no len */
  int (*truthy)(SrInterp *I, SrVal *self);  /* -1 with an exception */
  /* Pytree nodes (a registered pytree class: VJP objects, NotNeeded()):
     the children as a new list, and a node like self rebuilt from new
     children (borrowed), a new reference.  NULL: the object is a leaf. */
  SrVal *(*tree_children)(SrVal *self);
  SrVal *(*tree_rebuild)(SrVal *self, SrVal *children);
  /* A node's head as a PyTreeDef prints it, its type's name and aux data:
     MyStruct[('add',)], namedtuple[Point] (jaxlib's pytree.cc ToString).
     NULL: NAME[...]. */
  void (*tree_head)(SrVal *self, SrBuf *out);
  /* isinstance(x, self) for an object that stands for a type (jnp.ndarray,
     lax.Precision): 1 or 0.  NULL: not a type. */
  int (*instancecheck)(SrInterp *I, SrVal *self, SrVal *x);
  /* type(self) for an object whose class is a value of its own
     (SymbolicZero), a new reference.  NULL: the class's name as a type. */
  SrVal *(*type_of)(SrVal *self);
  /* 1 when hash(self) is TypeError: unhashable type (a numpy array; its
     scalars hash).  NULL: hashed by identity. */
  int (*unhashable)(const SrVal *self);
  /* hash(self) where it is by value (a ShapeDtypeStruct's): 0 with *out
     set, -1 with an exception, 1 to hash by identity.  NULL: identity. */
  int (*hash)(SrInterp *I, SrVal *self, int64_t *out);
  /* a op= b in place (__iadd__ and the like): a itself, mutated, a new
     reference.  NULL without an exception: a op b, rebound. */
  SrVal *(*inplace)(SrInterp *I, int op, SrVal *a, SrVal *b);
} SrLangOps;

static inline const SrLangOps *sr_ops(const SrVal *v) {
  return v->kind == SR_V_OBJ ? (const SrLangOps *)v->obj.cls->lang : NULL;
}

/* Calling a jaxpr value (SrPyInit.call_jaxpr). */
typedef SrVal *(*SrJaxprCallFn)(SrInterp *I, SrVal *fn, SrArgs *a);

/* ---- the init table ----
 *
 * The hooks py/ calls into the language built on it, the one way py/
 * reaches JAX, the evaluator and the colon commands.  sr_interp_new takes
 * the table (borrowed: it must outlive the interpreters; lib/cmd/linit.c's
 * is static).  Every slot may be NULL, and so may the table:
 * sr_interp_new(NULL) is plain Python, with jaxpr literals that parse
 * but are neither checked nor callable, and no colon commands. */
typedef struct SrPyInit {
  /* Registers the embedding's modules (sr_def, sr_register, and commands,
     classes, attribute handlers of its own), after Python's built-ins.
     Called once per process, by the first sr_interp_new given a table
     with it (the registry is global). */
  void (*open_modules)(void);
  /* Makes the embedding's state of a new session (JAX's state, the
     evaluator's), last thing in sr_interp_new. */
  void (*state_new)(SrInterp *I);
  /* Drops what the embedding holds of user values (caches of a statement),
     first thing in sr_interp_free and sr_interp_reset, before the
     bindings go. */
  void (*state_clear)(SrInterp *I);
  /* Puts the state back as a new session has it (no mesh in context),
     last thing in sr_interp_reset. */
  void (*state_reset)(SrInterp *I);
  /* Frees the state, in sr_interp_free once the bindings and the cycles
     through them are freed. */
  void (*state_free)(SrInterp *I);
  /* Called before each statement sr_interp_run runs (not before colon
     commands). */
  void (*stmt_begin)(SrInterp *I);
  /* Runs the colon command line src->text[off..end) (off at its ':'):
     0, or -1 with diagnostics appended to I->py->diags or an exception
     raised.  NULL: a colon command is a usage error. */
  int (*command)(SrInterp *I, SrSrc *src, size_t off, size_t end);
  /* Calls a jaxpr value (SR_V_JAXPR) on a call's arguments, as sr_call's
     callee; a new reference, or NULL with an exception.  NULL:
     NotImplementedError. */
  SrJaxprCallFn call_jaxpr;
  /* Calls a dtype object (jnp.float32(x)) on a call's arguments; a new
     reference, or NULL with an exception.  NULL: dtypes are not
     callable. */
  SrVal *(*call_dtype)(SrInterp *I, SrVal *dtype, SrArgs *a);
  /* isinstance(x, dtype) for a dtype object as a scalar type (np.int32,
     jnp.int32's _ScalarMeta): 1 or 0.  NULL: never. */
  int (*dtype_instancecheck)(SrInterp *I, SrVal *dtype, SrVal *x);
  /* Type-checks a jaxpr literal when it is first evaluated: appends its
     errors to d and returns their number (0: the literal is fine).  NULL:
     literals are trusted as written. */
  int (*check_jaxpr)(SrInterp *I, const SrJaxpr *j, SrDiags *d);
  /* The mesh jaxpr literals are parsed under (its axis names and types
     resolve `@X` in types), or NULL. */
  const SrMesh *(*literal_mesh)(SrInterp *I);
} SrPyInit;

/* The Python interpreter's own state, I->py (core/core.h has the
   runtime's part of the session: exceptions, interrupts, traces...). */
typedef struct SrPyState {
  struct SrEnv *globals;
  const SrPyInit *init;  /* the embedding's hooks (never NULL: an empty table) */
  FILE *out;             /* print() and echoes; NULL: discard (non-zero ranks) */
  SrDiags diags;         /* uncaught errors, for the driver to render */
  SrVal *handled;        /* the exception an except block is handling */
  char *handled_tb;      /* its traceback as traceback.format_exc() gives it */
  SrVal *last_echo;      /* the last value echoed: `_` where no variable is
                            named so (CPython's builtins._) */
  /* where evaluation is, for locating exceptions */
  SrCode *code;
  uint32_t cur_off;
  int depth;             /* call depth, against runaway recursion */
  int eval_depth;        /* expressions under evaluation, likewise */
  int echo;              /* echo bare expression statements: 1 each one
                            (the REPL), 2 only the last statement of the
                            source sr_interp_run runs (a notebook cell) */
  /* NULL, or where an echo goes instead of out (the kernel's
     execute_result): the value's repr and a newline */
  void (*on_echo)(SrInterp *I, const char *text, size_t n);
  /* NULL, or how input() reads a line (without its newline) after the
     prompt: 0, or -1 at the end of the input (or with an exception set).
     NULL: the prompt goes to out and the line comes from stdin. */
  int (*read_line)(SrInterp *I, const char *prompt, SrBuf *line);
  /* NULL, or how the ranks of an MPI job share input()'s line: rank 0
     reads it with read (as read_line), every rank gets it in line; the
     same return values */
  int (*share_line)(SrInterp *I, const char *prompt, SrBuf *line,
                    int (*read)(SrInterp *I, const char *prompt, SrBuf *line));
  /* NULL, or where a warning goes instead of stderr (a cell's stderr) */
  void (*on_warn)(SrInterp *I, const char *text, size_t n);
  int keep_going;        /* :load and scripts continue after an error */
  /* called after each failed statement, with its diagnostics in diags (the
     driver prints them then, so they interleave with the output) */
  void (*on_error)(SrInterp *I);
  /* Under MPI (src/mpi_driver.c): called at the end of every statement
     sr_interp_run runs (at every depth: a :load runs one inside another),
     failed or not, before on_error; all ranks agree there whether it
     failed (it may put another rank's diagnostics in diags).  Returns 0
     (it did not fail), 1 (it failed) or 2 (it failed, and the source it
     is in stops even with keep_going: another rank has left that
     source).  NULL: the statement's own outcome. */
  int (*on_stmt_end)(SrInterp *I, int failed);
  int run_depth;         /* sr_interp_run calls under way */
  int first_error;       /* SrErrKind of the first error reported, or 0 */
  char **warned;         /* the places warnings were shown at ("file:line") */
  int nwarned;
  int quit;              /* :quit was run */
  /* the statements and colon commands of the outermost sources that
     succeeded, in order, with what each wrote (for :save and :history) */
  struct SrLogEntry *log;
  int nlog, caplog;
  SrBuf stmt_out, stmt_res; /* what the outermost statement running wrote, and its echo */
  int in_echo;              /* sr_write is writing an echo */
  /* Python's script semantics (py/script.h), for the sources run from now
     on: their names are their own bindings and Python's built-ins alone
     (SrCode.python; a function keeps its source's) */
  int python;
  const char *cur_func;     /* the user function running, NULL at module level */
  const char *cur_qual;     /* and its __qualname__ (co_qualname, which JAX's
                               source info names), NULL at module level */
  /* the frames of the callers of the function running, innermost first
     (each a call's, on the C stack): where each was when it called */
  struct SrPyCaller *callers;
  struct SrTraceback *tb;   /* the frames the exception being raised left */
} SrPyState;

/* A caller's frame: its code, the offset of the call and its function
   (NULL: module level). */
typedef struct SrPyCaller {
  const SrCode *code;
  uint32_t off;
  const char *func;
  struct SrPyCaller *up;
  const char *qual;         /* its function's __qualname__ */
} SrPyCaller;
/* source_info_util.summarize(current(), num_frames=n): the last n frames
   of the running code as "file:line (function)" lines, outermost first
   (interned; NULL with no code running). */
const char *sr_py_frames_summary(SrInterp *I, int n);

/* One statement of the session's log. */
typedef struct SrLogEntry {
  char *text;   /* the statement as written */
  char *out;    /* what it wrote (print(), a command, a :load), or NULL */
  char *result; /* its echo (a bare expression's repr), or NULL */
} SrLogEntry;

/* A new session whose hooks are init's (NULL: plain Python); the first
   one registers the built-ins. */
SrInterp *sr_interp_new(const SrPyInit *init);
void sr_interp_free(SrInterp *I);
/* Forgets every user binding (keeps the built-ins). */
void sr_interp_reset(SrInterp *I);

/* Runs the statements of a source one at a time.  With keep_going, an
   error does not stop the rest.  Errors are appended to I->py->diags.  Returns
   the number of statements that failed. */
int sr_interp_run(SrInterp *I, SrSrc *src, int keep_going);
/* Evaluates the expression starting at byte pos of src (for :type /
   :print); NULL on error. */
SrVal *sr_interp_eval_text(SrInterp *I, SrSrc *src, size_t pos);

/* ---- exceptions ---- */

/* A Python warning (warnings.warn): `file:line:col: warning: Category:
   message` on stderr, once per place, as Python's default filter shows
   it; an error status it is not.  Only the rank that prints speaks. */
void sr_warn(SrInterp *I, const char *category, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Writes the lines text (a warning's, a log record's) where the session's
   stderr goes: the front end's on_warn, else stderr once stdout's pending
   output is out, colored as diagnostics when color is set.  A silent
   session (an MPI job's ranks but 0: no out) writes nothing. */
void sr_write_stderr(SrInterp *I, const char *text, size_t len, int color);

/* Installs the attributes of exception values (args) into core's
   sr_exception_class (from sr_objects_init). */
void sr_exc_methods_init(void);

/* ---- calling and attributes ---- */

SrVal *sr_call(SrInterp *I, SrVal *fn, SrArgs *a);
SrVal *sr_call1(SrInterp *I, SrVal *fn, SrVal *arg);
/* fn(*args, **kwargs): n positional arguments and a dict of str keys
   (NULL: none), all borrowed. */
SrVal *sr_call_kwdict(SrInterp *I, SrVal *fn, int n, SrVal **args, SrVal *kwargs);
SrVal *sr_getattr(SrInterp *I, SrVal *obj, const char *name);
/* Python truthiness, -1 on error. */
int sr_truthy(SrInterp *I, SrVal *v);
/* The items of an iterable, as a new list value. */
SrVal *sr_iterate(SrInterp *I, SrVal *v);
/* a op b for SR_OP_* binary and comparison ops. */
SrVal *sr_binop(SrInterp *I, int op, SrVal *a, SrVal *b);
/* a op= b: in place where a's type does it (a list's += and *=, an
   object's __iadd__), else a op b */
SrVal *sr_inplace_binop(SrInterp *I, int op, SrVal *a, SrVal *b);
SrVal *sr_unop(SrInterp *I, int op, SrVal *a);
/* Writes text to I->py->out (nothing on a silent rank). */
void sr_write(SrInterp *I, const char *s, size_t n);

/* Parses a builtin's arguments against a spec: "x, axis=, *, keepdims="
   names the parameters; a trailing '=' makes one optional (out[i] NULL
   when absent), a '*' makes the rest keyword-only.  Values are borrowed. */
int sr_args_parse(SrInterp *I, SrArgs *a, const char *fname, const char *spec, SrVal **out);
/* Conversions with TypeError on mismatch. */
int sr_as_int(SrInterp *I, SrVal *v, const char *what, int64_t *out);
/* operator.index(v): an int or bool's value, or an object's __index__
   (SR_OP_INDEX); "'X' object cannot be interpreted as an integer" else. */
int sr_as_index(SrInterp *I, SrVal *v, int64_t *out);
int sr_as_float(SrInterp *I, SrVal *v, const char *what, double *out);
const char *sr_as_str(SrInterp *I, SrVal *v, const char *what); /* interned */
/* The same for a file name, which may not hold a NUL (ValueError). */
const char *sr_as_path(SrInterp *I, SrVal *v, const char *what);

/* ---- the registry of built-ins ---- */

/* Registers v under a qualified name ("jax.numpy.sin"), stealing it. */
void sr_register(const char *qualname, SrVal *v);
/* A builtin function object, registered under each of its names; the
   first name is its own.  `names` is a space-separated list. */
SrVal *sr_def(const char *names, SrBuiltinFn fn, const char *doc);
/* A builtin method: fn receives the object as a->self. */
SrVal *sr_bound_method(SrVal *self, const char *name, SrBuiltinFn fn);
SrVal *sr_lookup_qualname(const char *qualname); /* borrowed, or NULL */
SrVal *sr_lookup_interned(const char *name);     /* the same, name interned */
/* Every registered name starting with prefix, for completion. */
void sr_registry_names(const char *prefix, void (*fn)(const char *name, void *ctx), void *ctx);
const char *sr_builtin_doc(SrVal *fn);
const char *sr_builtin_name(SrVal *fn);
/* Whether v can be called (a function, a jaxpr, a callable object, a
   dtype when the init table can call one). */
int sr_is_callable(SrInterp *I, const SrVal *v);
/* Module objects ("jax.numpy"). */
SrVal *sr_module(const char *qualname);
/* a module attribute computed when read (a property of a module-like
   object, e.g. jax.config.x64_enabled): qualname's value is get(I) */
void sr_def_module_property(const char *qualname, SrVal *(*get)(SrInterp *I));
/* a module's private name that JAX's tests read (jax.config._read,
   jax._src.dtypes._jax_types): v under qualname, reachable as an attribute
   though its name starts with '_' (takes v's reference) */
void sr_def_private(const char *qualname, SrVal *v);

/* Variables of the global scope (borrowed / stealing). */
SrVal *sr_global_get(SrInterp *I, const char *name);
void sr_global_set(SrInterp *I, const char *name, SrVal *v);
void sr_global_names(SrInterp *I, void (*fn)(const char *name, void *ctx), void *ctx);

/* Each family of built-ins registers itself: Python's here (from
   sr_interp_new), the embedding's from its SrPyInit.open_modules. */
void sr_builtins_py_init(void);
/* The input() built-in (input.c); sr_builtins_py_init calls it. */
void sr_input_init(void);
void sr_re_init(void); /* re.c: Python's re module */

#endif

/* objects.h: the language's object classes and value operations.
 *
 * Environments, user functions, built-in functions and methods, modules,
 * exception types, slices, and Python's operators on plain data.  Other
 * parts (arrays, jaxprs, VJP objects) add classes of their own with an
 * SrLangOps table, and hook attribute lookup for the data kinds of ir/val.h
 * with sr_kind_getattr_set().
 */
#ifndef SR_LANG_OBJECTS_H
#define SR_LANG_OBJECTS_H

#include "py/interp.h"

typedef struct SrEnv {
  int rc;
  struct SrEnv *parent;
  const char **keys; /* interned */
  SrVal **vals;
  size_t cap, n;
  struct SrEnv *prev, *next; /* every live environment, for sr_env_break_cycles */
} SrEnv;

SrEnv *sr_env_new(SrEnv *parent);
SrEnv *sr_env_ref(SrEnv *e);
void sr_env_unref(SrEnv *e);
void sr_env_clear(SrEnv *e);
SrVal *sr_env_lookup(const SrEnv *e, const char *k); /* borrowed; searches parents */
void sr_env_set(SrEnv *e, const char *k, SrVal *v); /* steals */
int sr_env_del(SrEnv *e, const char *k);
/* A closure's environment and the function bound in it hold each other:
   counting never frees them.  Once nothing can reach an environment below
   `root` any more (the interpreter is being freed or reset), this empties
   every one still alive, which frees them and what they held. */
void sr_env_break_cycles(SrEnv *root);
/* How many environments are alive (for tests). */
size_t sr_env_live(void);

/* A def or lambda. */
typedef struct SrFunction {
  SrCode *code;
  SrNode *node;      /* SR_N_DEF or SR_N_LAMBDA */
  SrEnv *closure;
  SrVal **defaults;  /* one per parameter, NULL where none */
  const char *name;  /* interned */
  SrVal *attrs;      /* a dict of attributes set on the function, or NULL */
  const char *qualname; /* a method's "C.f" (interned), or NULL: name */
  SrVal *owner;      /* the class whose body defined it (super()), or NULL */
} SrFunction;

extern const SrClass sr_function_class;
SrVal *sr_function_new(SrCode *code, SrNode *node, SrEnv *closure, SrVal **defaults,
                       const char *name);
SrVal *sr_function_call(SrInterp *I, SrVal *fnval, SrArgs *a);
static inline SrFunction *sr_as_function(SrVal *v) {
  return sr_is_obj(v, &sr_function_class) ? v->obj.data : NULL;
}

/* Built-in functions; a bound one carries its object as a->self. */
typedef struct SrBuiltin {
  SrBuiltinFn fn;
  const char *name;
  const char *doc;
  SrVal *self;
  void *data;        /* free-form: partial arguments, a wrapped function... */
  void (*free_data)(void *);
  SrVal *wrapped;    /* functools.wraps's __wrapped__ (owned), or NULL */
} SrBuiltin;
extern const SrClass sr_builtin_class;
/* A builtin with data (freed with free_data). */
SrVal *sr_builtin_with(const char *name, SrBuiltinFn fn, void *data, void (*free_data)(void *));
/* Gives builtin b the __wrapped__ fn (as JAX's transforms' functools.wraps
   do; inspect.signature follows it); returns b. */
SrVal *sr_builtin_set_wrapped(SrVal *b, SrVal *fn);
/* Gives builtin b the __doc__ doc (copied); returns b. */
SrVal *sr_builtin_set_doc(SrVal *b, const char *doc);
/* The function inspect.signature reads for f: f with __wrapped__ followed
   (a builtin's, or one set on a function); f itself where none. */
SrVal *sr_signature_target(SrInterp *I, SrVal *f);
/* The order JAX's pytrees sort dict keys in (sorted(d)): strings by code
   point, numbers by value, keys of other kinds equal (a stable sort keeps
   their place); <0, 0, >0 (mod_collections.c) */
int sr_tree_key_cmp(const SrVal *a, const SrVal *b);
/* The SrBuiltin of the builtin being called (for its data). */
SrBuiltin *sr_current_builtin(SrInterp *I);

extern const SrClass sr_module_class;
extern const SrClass sr_exctype_class;
extern const SrClass sr_slice_class;

/* Slices: start, stop, step (each an int or None). */
SrVal *sr_slice_new(SrVal *start, SrVal *stop, SrVal *step);
/* The start (0), stop (1) or step (2) of a slice, borrowed. */
SrVal *sr_slice_part(SrVal *slice, int i);
/* Normalises a slice for a sequence of length n (Python's indices()). */
int sr_slice_indices(SrInterp *I, SrVal *slice, int64_t n, int64_t *start, int64_t *stop,
                     int64_t *step, int64_t *count);
/* A Python index into a sequence of length n, with negative indices. */
int sr_index(SrInterp *I, SrVal *key, int64_t n, int64_t *out);

SrVal *sr_getitem(SrInterp *I, SrVal *obj, SrVal *key);
/* obj[i] for an int index. */
SrVal *sr_getindex(SrInterp *I, SrVal *obj, int64_t i);
int sr_setitem(SrInterp *I, SrVal *obj, SrVal *key, SrVal *v);
int sr_delitem(SrInterp *I, SrVal *obj, SrVal *key);
int sr_setattr(SrInterp *I, SrVal *obj, const char *name, SrVal *v);

/* The name a bare identifier falls back to: Python's builtins, then the
   prefixes of sr_name_prefix in their order (shardrepl's: jax.,
   jax.numpy., jax.lax., jax.sharding.). */
SrVal *sr_lookup_builtin_name(const char *name);
/* Is anything registered under this module name? */
int sr_module_known(const char *qualname);
/* A qualified name with its module alias replaced, the first of
   sr_module_alias's that applies ("jnp.sin" -> "jax.numpy.sin"); q itself
   when none does. */
const char *sr_canonical_module(const char *qualname);
/* The names an embedding adds, from its SrPyInit.open_modules, before it
   registers anything under them: a module alias (alias and alias.x name
   full and full.x), and a prefix bare identifiers fall back to.  At most
   16 of each; tried in the order added. */
void sr_module_alias(const char *alias, const char *full);
void sr_name_prefix(const char *prefix);

/* Exception types: ValueError etc. as values. */
const char *sr_exception_type_name(const SrVal *v); /* NULL if not an exception type */
int sr_exception_is_a(const char *type, const char *want);
/* A new exception type named name deriving from parent (class E(ValueError)
   of a class statement); a new reference.  A name made again gets the new
   parent. */
SrVal *sr_exception_type_new(const char *name, const char *parent);

/* Attribute lookup for the plain data kinds (SR_V_SPEC, SR_V_MESH...):
   other parts register a handler per kind. */
typedef SrVal *(*SrKindGetattr)(SrInterp *I, SrVal *self, const char *name);
void sr_kind_getattr_set(int kind, SrKindGetattr fn);
/* The handler set for kind (NULL: none), for one that adds attributes
   before it and falls back to it. */
SrKindGetattr sr_kind_getattr_get(int kind);
/* Calling a value of a plain data kind: other parts register a handler. */
typedef SrVal *(*SrKindCall)(SrInterp *I, SrVal *self, SrArgs *a);
void sr_kind_call_set(int kind, SrKindCall fn);


/* Context managers (with statements): objects whose class is registered
   here are entered and exited. */
typedef struct SrContextOps {
  const SrClass *cls;
  SrVal *(*enter)(SrInterp *I, SrVal *self);
  void (*exit)(SrInterp *I, SrVal *self);
  int kind; /* with cls NULL: the value kind entered (SR_V_MESH...) */
} SrContextOps;
void sr_context_register(const SrContextOps *ops);
SrVal *sr_context_enter(SrInterp *I, SrVal *m);
void sr_context_exit(SrInterp *I, SrVal *m);
/* Whether m's class registered C hooks (the with statement calls any
   other object's __enter__ and __exit__). */
int sr_context_builtin(const SrVal *m);

/* format(value, spec) */
SrVal *sr_format(SrInterp *I, SrVal *v, const char *spec);
/* Python's MemoryError, raised before allocating, for count items of size
   bytes past what the process may get (sr_mem_limit): -1 then, else 0. */
int sr_check_mem(SrInterp *I, uint64_t count, uint64_t size);
/* The str of the n bytes at p repeated k times ('ab' * k): OverflowError
   or MemoryError as CPython raises them, KeyboardInterrupt on Ctrl-C. */
SrVal *sr_str_repeat(SrInterp *I, const char *p, size_t n, uint64_t k);

void sr_objects_init(void);

#endif

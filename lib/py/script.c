/* script.c: what running a file as a Python script adds to the
 * interpreter (script.h): Python's built-in names alone, NameError's "Did
 * you mean" as CPython computes it, and the traceback an uncaught
 * exception prints. */
#include "py/script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py/objects.h"
#include "util/intern.h"
#include "util/mem.h"

/* ---- Python's built-in names ---- */

/* list(builtins.__dict__) of CPython 3.11, in its order (the order its
   suggestions are tried in) */
static const char *const py_builtins[] = {
    "__name__", "__doc__", "__package__", "__loader__", "__spec__", "__build_class__",
    "__import__", "abs", "all", "any", "ascii", "bin", "breakpoint", "callable", "chr",
    "compile", "delattr", "dir", "divmod", "eval", "exec", "format", "getattr", "globals",
    "hasattr", "hash", "hex", "id", "input", "isinstance", "issubclass", "iter", "aiter",
    "len", "locals", "max", "min", "next", "anext", "oct", "ord", "pow", "print", "repr",
    "round", "setattr", "sorted", "sum", "vars", "None", "Ellipsis", "NotImplemented",
    "False", "True", "bool", "memoryview", "bytearray", "bytes", "classmethod", "complex",
    "dict", "enumerate", "filter", "float", "frozenset", "property", "int", "list", "map",
    "object", "range", "reversed", "set", "slice", "staticmethod", "str", "super",
    "tuple", "type", "zip", "__debug__", "BaseException", "BaseExceptionGroup",
    "Exception", "GeneratorExit", "KeyboardInterrupt", "SystemExit", "ArithmeticError",
    "AssertionError", "AttributeError", "BufferError", "EOFError", "ImportError",
    "LookupError", "MemoryError", "NameError", "OSError", "ReferenceError",
    "RuntimeError", "StopAsyncIteration", "StopIteration", "SyntaxError", "SystemError",
    "TypeError", "ValueError", "Warning", "FloatingPointError", "OverflowError",
    "ZeroDivisionError", "BytesWarning", "DeprecationWarning", "EncodingWarning",
    "FutureWarning", "ImportWarning", "PendingDeprecationWarning", "ResourceWarning",
    "RuntimeWarning", "SyntaxWarning", "UnicodeWarning", "UserWarning", "BlockingIOError",
    "ChildProcessError", "ConnectionError", "FileExistsError", "FileNotFoundError",
    "InterruptedError", "IsADirectoryError", "NotADirectoryError", "PermissionError",
    "ProcessLookupError", "TimeoutError", "IndentationError", "IndexError", "KeyError",
    "ModuleNotFoundError", "NotImplementedError", "RecursionError", "UnboundLocalError",
    "UnicodeError", "BrokenPipeError", "ConnectionAbortedError", "ConnectionRefusedError",
    "ConnectionResetError", "TabError", "UnicodeDecodeError", "UnicodeEncodeError",
    "UnicodeTranslateError", "ExceptionGroup", "EnvironmentError", "IOError", "open",
    "quit", "exit", "copyright", "credits", "license", "help",
};

enum { NBUILTINS = sizeof py_builtins / sizeof *py_builtins };

int sr_py_is_builtin_name(const char *name) {
  for (int i = 0; i < NBUILTINS; i++)
    if (strcmp(py_builtins[i], name) == 0) return 1;
  return 0;
}

SrVal *sr_py_builtin(const char *name) {
  if (!sr_py_is_builtin_name(name)) return NULL;
  char q[64];
  snprintf(q, sizeof q, "builtins.%s", name);
  return sr_lookup_qualname(q);
}

/* ---- sys.argv ---- */

void sr_script_argv(const char *src_name) {
  const char *name = strcmp(src_name, "<stdin>") == 0 ? "" : strcmp(src_name, "<-e>") == 0 ? "-c" : src_name;
  SrVal *cur = sr_lookup_qualname("sys.argv");
  if (cur && cur->kind == SR_V_LIST && cur->seq.n == 1 && cur->seq.items[0]->kind == SR_V_STR &&
      strcmp(cur->seq.items[0]->str.s, name) == 0)
    return;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 1);
  sr_seq_push(NULL, l, sr_str_cstr(NULL, name));
  sr_register("sys.argv", l);
}

/* ---- suggestions: CPython's Python/suggestions.c ---- */

enum { MAX_CANDIDATE_ITEMS = 750, MAX_STRING_SIZE = 40, MOVE_COST = 2, CASE_COST = 1 };

static int substitution_cost(char a, char b) {
  if ((a & 31) != (b & 31)) return MOVE_COST;
  if (a == b) return 0;
  if ('A' <= a && a <= 'Z') a += 'a' - 'A';
  if ('A' <= b && b <= 'Z') b += 'a' - 'A';
  return a == b ? CASE_COST : MOVE_COST;
}

/* The Levenshtein distance of a and b with CPython's costs (a case flip
   costs 1, any other edit 2), or more than max_cost once it must be. */
static size_t levenshtein(const char *a, size_t na, const char *b, size_t nb, size_t max_cost) {
  if (a == b) return 0;
  while (na && nb && a[0] == b[0]) {
    a++, b++;
    na--, nb--;
  }
  while (na && nb && a[na - 1] == b[nb - 1]) na--, nb--;
  if (na == 0 || nb == 0) return (na + nb) * MOVE_COST;
  if (na > MAX_STRING_SIZE || nb > MAX_STRING_SIZE) return max_cost + 1;
  if (nb < na) {
    const char *t = a;
    a = b;
    b = t;
    size_t tn = na;
    na = nb;
    nb = tn;
  }
  if ((nb - na) * MOVE_COST > max_cost) return max_cost + 1;
  size_t buffer[MAX_STRING_SIZE];
  size_t tmp = MOVE_COST;
  for (size_t i = 0; i < na; i++) {
    buffer[i] = tmp;
    tmp += MOVE_COST;
  }
  size_t result = 0;
  for (size_t bi = 0; bi < nb; bi++) {
    char code = b[bi];
    size_t distance = result = bi * MOVE_COST;
    size_t minimum = (size_t)-1;
    for (size_t i = 0; i < na; i++) {
      size_t substitute = distance + substitution_cost(code, a[i]);
      distance = buffer[i];
      size_t insert_delete = (result < distance ? result : distance) + MOVE_COST;
      result = insert_delete < substitute ? insert_delete : substitute;
      buffer[i] = result;
      if (result < minimum) minimum = result;
    }
    if (minimum > max_cost) return max_cost + 1;
  }
  return result;
}

typedef struct Best {
  const char *name; /* the suggestion so far, or NULL */
  size_t distance;
} Best;

/* One candidate, as calculate_suggestions weighs it.  ordered: candidates
   come in CPython's order, so the first of equals wins; else (a hash
   table's order) the alphabetically first does, so that the choice does
   not depend on where the table put them. */
static void consider(Best *best, const char *wrong, const char *cand, int ordered) {
  if (strcmp(cand, wrong) == 0) return;
  size_t nw = strlen(wrong), nc = strlen(cand);
  /* no more than a third of the characters involved may change, and a
     candidate must beat the best so far (or, unordered, equal it) */
  size_t max_distance = (nw + nc + 3) * MOVE_COST / 6;
  if (best->name) {
    size_t limit = ordered ? best->distance - 1 : best->distance;
    if (limit < max_distance) max_distance = limit;
  }
  size_t d = levenshtein(wrong, nw, cand, nc, max_distance);
  if (d > max_distance) return;
  if (!best->name || d < best->distance || strcmp(cand, best->name) < 0) {
    best->name = cand;
    best->distance = d;
  }
}

/* The best of an environment's own names (not its parents'), or NULL; as
   CPython, none when there are too many to weigh. */
static const char *suggest_env(const SrEnv *e, const char *wrong) {
  if (!e || e->n >= MAX_CANDIDATE_ITEMS) return NULL;
  Best best = {NULL, 0};
  for (size_t i = 0; i < e->cap; i++)
    if (e->keys[i]) consider(&best, wrong, e->keys[i], 0);
  return best.name;
}

const char *sr_name_suggestion(const SrEnv *locals, const SrEnv *globals, const char *name) {
  if (strlen(name) > MAX_STRING_SIZE) return NULL;
  const char *s = suggest_env(locals, name);
  if (!s) s = suggest_env(globals, name);
  if (s) return s;
  Best best = {NULL, 0};
  for (int i = 0; i < NBUILTINS; i++) consider(&best, name, py_builtins[i], 1);
  return best.name;
}

/* ---- tracebacks ---- */

typedef struct TbFrame {
  SrSrc *src;
  size_t off;
  const char *func; /* interned; NULL: <module> */
} TbFrame;

/* The frames the exception being raised has left, innermost first, and
   the hint its message gets; both belong to exc (held, so that no other
   exception can take its address) and are forgotten once another one
   is raised. */
struct SrTraceback {
  SrVal *exc;
  TbFrame *v;
  int n, cap;
  SrSrc *inner;     /* where exc was raised, when it first left a call */
  size_t inner_off;
  char *hint;
};

static void tb_forget(struct SrTraceback *tb) {
  for (int i = 0; i < tb->n; i++) sr_src_unref(tb->v[i].src);
  tb->n = 0;
  sr_src_unref(tb->inner);
  tb->inner = NULL;
  free(tb->hint);
  tb->hint = NULL;
  sr_unref(tb->exc);
  tb->exc = NULL;
}

/* The traceback of the exception being raised, emptied if it was
   another's. */
static struct SrTraceback *tb_of(SrInterp *I) {
  if (!I->py->tb) I->py->tb = sr_xcalloc(1, sizeof *I->py->tb);
  struct SrTraceback *tb = I->py->tb;
  if (tb->exc != I->exc) {
    tb_forget(tb);
    tb->exc = sr_ref(I->exc);
  }
  return tb;
}

/* More frames than any call chain has (an exception object raised again
   and again gathers them): the rest are not kept. */
enum { TB_MAX = 4096 };

void sr_tb_push(SrInterp *I, SrSrc *src, size_t off, const char *func) {
  if (!I->exc || I->exc_located != 1 || !src) return;
  struct SrTraceback *tb = tb_of(I);
  if (tb->n >= TB_MAX) return;
  if (!tb->inner) {
    tb->inner = sr_src_ref(I->exc_src);
    tb->inner_off = I->exc_off;
  }
  if (tb->n == tb->cap) {
    tb->cap = tb->cap ? 2 * tb->cap : 8;
    tb->v = sr_xrealloc(tb->v, (size_t)tb->cap * sizeof *tb->v);
  }
  /* interned: the function's syntax tree may go before the report */
  tb->v[tb->n++] = (TbFrame){sr_src_ref(src), off, func ? sr_intern_cstr(func) : NULL};
}

void sr_tb_hint(SrInterp *I, const char *fmt, const char *arg) {
  if (!I->exc) return;
  struct SrTraceback *tb = tb_of(I);
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, fmt, arg);
  free(tb->hint);
  tb->hint = sr_buf_steal(&b);
}

SrVal *sr_raise_name_error(SrInterp *I, const SrEnv *locals, const SrEnv *globals, const char *name) {
  sr_raise(I, "NameError", "name '%s' is not defined", name);
  const char *s = sr_name_suggestion(locals, globals, name);
  if (s) sr_tb_hint(I, ". Did you mean: '%s'?", s);
  return NULL;
}

/* As CPython's traceback: after 3 frames alike (the same place in the
   same function) the rest of the run is one line saying how many; and a
   long chain of frames unlike each other shows its first callers and its
   last. */
enum { TB_RECURSIVE_CUTOFF = 3, TB_HEAD = 20, TB_TAIL = 20 };

static int same_frame(const TbFrame *a, const TbFrame *b) {
  return a->src == b->src && a->off == b->off && a->func == b->func;
}

static void render_frame(SrBuf *b, const TbFrame *f) {
  uint32_t line, col;
  sr_src_linecol(f->src, f->off, &line, &col);
  sr_buf_printf(b, "%s:%u:%u: in %s\n", f->src->name, line, col, f->func ? f->func : "<module>");
  sr_src_render_caret(f->src, f->off, b);
}

static void render_repeats(SrBuf *b, int repeats) {
  if (repeats > TB_RECURSIVE_CUTOFF)
    sr_buf_printf(b, "[Previous line repeated %d more time%s]\n", repeats - TB_RECURSIVE_CUTOFF,
                  repeats - TB_RECURSIVE_CUTOFF == 1 ? "" : "s");
}

void sr_tb_attach(SrInterp *I, SrDiag *g) {
  struct SrTraceback *tb = I->py->tb;
  if (!tb || !I->exc || tb->exc != I->exc) return;
  if (g && tb->n) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "Traceback (most recent call last):\n");
    /* the frames shown, outermost first: runs of one frame cut to 3 */
    int *shown = sr_xmalloc((size_t)tb->n * sizeof *shown), nshown = 0, repeats = 0;
    for (int i = tb->n - 1; i >= 0; i--) {
      repeats = i < tb->n - 1 && same_frame(&tb->v[i], &tb->v[i + 1]) ? repeats + 1 : 1;
      shown[nshown++] = repeats <= TB_RECURSIVE_CUTOFF ? i : -repeats;
    }
    for (int k = 0; k < nshown; k++) {
      if (nshown > TB_HEAD + TB_TAIL && k == TB_HEAD) {
        sr_buf_printf(&b, "... %d more frames ...\n", nshown - TB_HEAD - TB_TAIL);
        k = nshown - TB_TAIL;
      }
      if (shown[k] >= 0) {
        render_frame(&b, &tb->v[shown[k]]);
        continue;
      }
      /* the end of a run of repeats: say how many */
      while (k + 1 < nshown && shown[k + 1] < 0) k++;
      render_repeats(&b, -shown[k]);
    }
    free(shown);
    free(g->note);
    g->note = sr_buf_steal(&b);
    /* raised again (a bare raise in an except block): where it was first
       raised is the innermost place, as Python's traceback keeps it */
    if (tb->inner && g->src) {
      sr_src_unref(g->src);
      g->src = sr_src_ref(tb->inner);
      g->off = tb->inner_off;
    }
  }
  if (g && tb->hint) {
    size_t n = strlen(g->msg), m = strlen(tb->hint);
    g->msg = sr_xrealloc(g->msg, n + m + 1);
    memcpy(g->msg + n, tb->hint, m + 1);
  }
  tb_forget(tb);
}

char *sr_tb_format(SrInterp *I) {
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, "Traceback (most recent call last):\n");
  struct SrTraceback *tb = I->py->tb;
  int mine = tb && I->exc && tb->exc == I->exc;
  for (int i = mine ? tb->n - 1 : -1; i >= 0; i--) render_frame(&b, &tb->v[i]);
  const SrSrc *src = mine && tb->inner ? tb->inner : I->exc_located ? I->exc_src : NULL;
  size_t off = mine && tb->inner ? tb->inner_off : I->exc_off;
  if (src) {
    uint32_t line, col;
    sr_src_linecol(src, off, &line, &col);
    sr_buf_printf(&b, "%s:%u:%u:\n", src->name, line, col);
    sr_src_render_caret(src, off, &b);
  }
  const char *msg = I->exc ? sr_exc_msg(I->exc) : "";
  sr_buf_printf(&b, "%s%s%s\n", I->exc ? sr_exc_type(I->exc) : "NoneType", msg && *msg ? ": " : "",
                msg ? msg : "");
  return sr_buf_steal(&b);
}

void sr_tb_free(SrInterp *I) {
  if (!I->py->tb) return;
  tb_forget(I->py->tb);
  free(I->py->tb->v);
  free(I->py->tb);
  I->py->tb = NULL;
}

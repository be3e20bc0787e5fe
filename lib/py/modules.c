/* modules.c: import statements over the registry (modules.h), and the
 * small modules: typing, __future__, time. */
#include "py/modules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "py/objects.h"
#include "util/intern.h"

/* ---- what is a module ---- */

struct Under {
  size_t n;  /* the length of the prefix "q." */
  int found; /* a name under it */
  int pkg;   /* a name under a submodule of it */
};

static void under_visit(const char *name, void *ctx) {
  struct Under *u = ctx;
  u->found = 1;
  const char *rest = name + u->n, *dot = strchr(rest, '.');
  if (!dot || u->pkg) return;
  /* q.x.y: x is a submodule unless q.x is a value of its own (a class
     with attributes, as jax.sharding.PartitionSpec.UNCONSTRAINED) */
  SrVal *x = sr_lookup_qualname(sr_intern(name, (size_t)(dot - name)));
  if (!x || sr_is_obj(x, &sr_module_class)) u->pkg = 1;
}

static struct Under under(const char *q) {
  SrBuf prefix = SR_BUF_INIT;
  sr_buf_printf(&prefix, "%s.", q);
  struct Under u = {prefix.len, 0, 0};
  sr_registry_names(prefix.p, under_visit, &u);
  sr_buf_free(&prefix);
  return u;
}

/* q names a module: a module object is registered as q, or nothing is
   and values are registered under it.  A short name of the embedding's
   (np for numpy) is no module of its own: `import np` fails as in Python. */
static int is_module(const char *q) {
  const char *dot = strchr(q, '.');
  char top[256];
  snprintf(top, sizeof top, "%.*s", (int)(dot ? (size_t)(dot - q) : strlen(q)), q);
  if (strcmp(sr_canonical_module(top), top) != 0) return 0;
  SrVal *v = sr_lookup_qualname(q);
  if (v) return sr_is_obj(v, &sr_module_class);
  return under(q).found;
}

int sr_import_check(SrInterp *I, const char *dotted) {
  char q[512];
  size_t n = strlen(dotted);
  if (n >= sizeof q) {
    sr_raise(I, "ModuleNotFoundError", "No module named '%s'", dotted);
    return -1;
  }
  for (size_t i = 0; i <= n; i++) {
    if (dotted[i] != '.' && dotted[i]) continue;
    memcpy(q, dotted, i);
    q[i] = 0;
    if (is_module(q)) continue;
    const char *dot = strrchr(q, '.');
    if (dot) {
      char parent[512];
      snprintf(parent, sizeof parent, "%.*s", (int)(dot - q), q);
      if (!under(parent).pkg) {
        sr_raise(I, "ModuleNotFoundError", "No module named '%s'; '%s' is not a package", q, parent);
        return -1;
      }
    }
    sr_raise(I, "ModuleNotFoundError", "No module named '%s'", q);
    return -1;
  }
  return 0;
}

SrVal *sr_import_name(SrInterp *I, const char *module, const char *name) {
  char q[512];
  snprintf(q, sizeof q, "%s.%s", module, name);
  SrVal *v = sr_lookup_qualname(sr_canonical_module(q));
  if (v) return sr_ref(v);
  if (strcmp(module, "__future__") == 0) {
    if (strcmp(name, "braces") == 0) return sr_raise(I, "SyntaxError", "not a chance");
    return sr_raise(I, "SyntaxError", "future feature %s is not defined", name);
  }
  if (is_module(q)) return sr_module(q);
  return sr_raise(I, "ImportError", "cannot import name '%s' from '%s' (unknown location)", name, module);
}

struct Star {
  size_t n;
  const char **names;
  size_t count, cap;
};

static void star_visit(const char *name, void *ctx) {
  struct Star *s = ctx;
  const char *rest = name + s->n;
  if (rest[0] == '_' || !rest[0]) return;
  for (const char *c = rest; *c; c++)
    if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
      return; /* a dotted name under a submodule, or no identifier */
  if (s->count == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 64;
    s->names = sr_xrealloc(s->names, s->cap * sizeof *s->names);
  }
  s->names[s->count++] = name;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void sr_import_star(const char *module, void (*bind)(const char *name, SrVal *v, void *ctx), void *ctx) {
  SrBuf prefix = SR_BUF_INIT;
  sr_buf_printf(&prefix, "%s.", module);
  struct Star s = {prefix.len, NULL, 0, 0};
  sr_registry_names(prefix.p, star_visit, &s);
  sr_buf_free(&prefix);
  if (s.count) qsort(s.names, s.count, sizeof *s.names, cmp_names);
  for (size_t i = 0; i < s.count; i++) {
    SrVal *v = sr_lookup_qualname(s.names[i]);
    if (v) bind(s.names[i] + s.n, v, ctx);
  }
  free(s.names);
}

/* ---- values that are only a repr: __future__'s features, typing's names ---- */

static void tag_repr(SrBuf *out, const SrVal *v) { sr_buf_puts(out, v->obj.data); }

static const SrClass future_class = {"_Feature", NULL, tag_repr, NULL, NULL};

/* typing's names: subscriptable (Optional[int], Callable[[int], float])
   to themselves, callable to the identity where typing's are (cast,
   NewType's result), and ignored otherwise, as annotations are at run
   time. */
static SrVal *typing_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  (void)I, (void)key;
  return sr_ref(self);
}

static const SrLangOps typing_ops = {.getitem = typing_getitem};
static const SrClass typing_class = {"typing._SpecialForm", NULL, tag_repr, NULL, &typing_ops};

static void def_typing(const char *name, const char *repr) {
  char q[128];
  snprintf(q, sizeof q, "typing.%s", name);
  sr_register(q, sr_obj(&typing_class, (void *)sr_intern_cstr(repr)));
}

static SrVal *typing_cast(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "cast", "typ, val", p) < 0) return NULL;
  return sr_ref(p[1]);
}

static SrVal *typing_typevar(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->v[0]->kind != SR_V_STR)
    return sr_raise(I, "TypeError", "TypeVar() missing required argument 'name' (pos 1)");
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "~%s", a->v[0]->str.s);
  SrVal *v = sr_obj(&typing_class, (void *)sr_intern(b.p, b.len));
  sr_buf_free(&b);
  return v;
}

static SrVal *identity_call(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "%s() takes exactly one argument", "NewType");
  return sr_ref(a->v[0]);
}

static SrVal *typing_newtype(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "NewType", "name, tp", p) < 0) return NULL;
  const char *name = sr_as_str(I, p[0], "NewType() argument 'name'");
  if (!name) return NULL;
  return sr_builtin_with(name, identity_call, NULL, NULL);
}

/* @typing.overload, @typing.final, runtime_checkable: the function itself */
static SrVal *typing_decorator(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "%s() takes exactly one argument", "decorator");
  return sr_ref(a->v[0]);
}

static void typing_init(void) {
  static const char *const forms[] = {
    "Any", "Callable", "Sequence", "Mapping", "MutableMapping", "MutableSequence", "Iterable",
    "Iterator", "Generator", "Optional", "Union", "Tuple", "List", "Dict", "Set", "FrozenSet",
    "Type", "Literal", "Final", "ClassVar", "Hashable", "Sized", "Collection", "Container",
    "Protocol", "Generic", "Annotated", "TypeAlias", "NoReturn", "Never", "Self", "AbstractSet",
    "DefaultDict", "OrderedDict", "Counter", "Deque", "ParamSpec", "Concatenate", "SupportsInt",
    "SupportsFloat", "SupportsIndex", "Awaitable", "Coroutine", "AsyncIterator", "IO", "TextIO",
    NULL,
  };
  char repr[64];
  for (int i = 0; forms[i]; i++) {
    snprintf(repr, sizeof repr, "typing.%s", forms[i]);
    def_typing(forms[i], repr);
  }
  sr_register("typing.TYPE_CHECKING", sr_bool(0));
  sr_def("typing.cast", typing_cast, "typing.cast(typ, val): val (types are not checked at run time)");
  sr_def("typing.TypeVar", typing_typevar, "typing.TypeVar(name, ...): a type variable, for annotations");
  sr_def("typing.NewType", typing_newtype, "typing.NewType(name, tp): a callable that returns its argument");
  sr_def("typing.overload typing.final typing.runtime_checkable typing.no_type_check", typing_decorator,
         "a decorator that returns the function it decorates");
}

/* ---- __future__ ---- */

static void future_init(void) {
  static const char *const features[][2] = {
    {"nested_scopes", "_Feature((2, 1, 0, 'beta', 1), (2, 2, 0, 'alpha', 0), 16)"},
    {"generators", "_Feature((2, 2, 0, 'alpha', 1), (2, 3, 0, 'final', 0), 0)"},
    {"division", "_Feature((2, 2, 0, 'alpha', 2), (3, 0, 0, 'alpha', 0), 131072)"},
    {"absolute_import", "_Feature((2, 5, 0, 'alpha', 1), (3, 0, 0, 'alpha', 0), 262144)"},
    {"with_statement", "_Feature((2, 5, 0, 'alpha', 1), (2, 6, 0, 'alpha', 0), 524288)"},
    {"print_function", "_Feature((2, 6, 0, 'alpha', 2), (3, 0, 0, 'alpha', 0), 1048576)"},
    {"unicode_literals", "_Feature((2, 6, 0, 'alpha', 2), (3, 0, 0, 'alpha', 0), 2097152)"},
    {"barry_as_FLUFL", "_Feature((3, 1, 0, 'alpha', 2), (4, 0, 0, 'alpha', 0), 4194304)"},
    {"generator_stop", "_Feature((3, 5, 0, 'beta', 1), (3, 7, 0, 'alpha', 0), 8388608)"},
    {"annotations", "_Feature((3, 7, 0, 'beta', 1), None, 16777216)"},
  };
  char q[64];
  for (size_t i = 0; i < sizeof features / sizeof *features; i++) {
    snprintf(q, sizeof q, "__future__.%s", features[i][0]);
    sr_register(q, sr_obj(&future_class, (void *)sr_intern_cstr(features[i][1])));
  }
}

/* ---- time: the wall clock and sleeping (the other clocks are in
   builtins_py.c) ---- */

static SrVal *time_time(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "time.time() takes no arguments (%d given)", a->n + a->nkw);
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return sr_float(NULL, (double)t.tv_sec + (double)t.tv_nsec * 1e-9);
}

/* Sleeps in slices of at most 50 ms, so that Ctrl-C ends it. */
static SrVal *time_sleep(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "time.sleep() takes no keyword arguments");
  if (a->n != 1) return sr_raise(I, "TypeError", "time.sleep() takes exactly one argument (%d given)", a->n);
  double s;
  SrVal *v = a->v[0];
  if (v->kind != SR_V_INT && v->kind != SR_V_FLOAT && v->kind != SR_V_BOOL)
    return sr_raise(I, "TypeError", "'%s' object cannot be interpreted as an integer", sr_val_kind_name(v));
  if (sr_as_float(I, v, "time.sleep()", &s) < 0) return NULL;
  if (s != s) return sr_raise(I, "ValueError", "Invalid value NaN (not a number)");
  if (s < 0) return sr_raise(I, "ValueError", "sleep length must be non-negative");
  /* CPython's pytime.c: infinity has no time_t */
  if (isinf(s)) return sr_raise(I, "OverflowError", "timestamp out of range for platform time_t");
  while (s > 0) {
    double step = s < 0.05 ? s : 0.05;
    struct timespec t = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
    nanosleep(&t, NULL);
    s -= step;
    if (sr_interrupt_point(I)) return sr_raise(I, "KeyboardInterrupt", "interrupted");
  }
  return sr_none();
}

static SrVal *time_time_ns(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "time.time_ns() takes no arguments (%d given)", a->n + a->nkw);
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return sr_int(NULL, (int64_t)t.tv_sec * 1000000000 + t.tv_nsec);
}

static SrVal *time_monotonic(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "time.monotonic() takes no arguments (%d given)", a->n + a->nkw);
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return sr_float(NULL, (double)t.tv_sec + (double)t.tv_nsec * 1e-9);
}

static void time_init(void) {
  sr_def("time.time", time_time, "time.time(): seconds since the Epoch, as a float");
  sr_def("time.time_ns", time_time_ns, "time.time_ns(): nanoseconds since the Epoch, as an int");
  sr_def("time.monotonic", time_monotonic, "time.monotonic(): seconds on a clock that never goes back");
  sr_def("time.sleep", time_sleep, "time.sleep(seconds): waits (Ctrl-C ends it)");
}

/* ---- copy: copy.copy and copy.deepcopy.  Lists, tuples and dicts are
   copied (deepcopy: their items too, a tuple of unchanged items is
   itself, as in CPython); every other value is its own copy here (CPython
   copies a class instance's __dict__; functions, arrays' data and other
   atomic values it shares too). ---- */

static SrVal *deep_copy(SrInterp *I, SrVal *v, int depth) {
  if (depth > 256) return sr_raise(I, "RecursionError", "maximum recursion depth exceeded while calling a Python object");
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    SrVal *r = sr_seq(NULL, v->kind, v->seq.n);
    int same = 1;
    for (int i = 0; i < v->seq.n; i++) {
      SrVal *x = deep_copy(I, v->seq.items[i], depth + 1);
      if (!x) {
        sr_unref(r);
        return NULL;
      }
      same &= x == v->seq.items[i];
      sr_seq_push(NULL, r, x);
    }
    if (v->kind == SR_V_TUPLE && same) {
      sr_unref(r);
      return sr_ref(v);
    }
    return r;
  }
  if (v->kind == SR_V_DICT) {
    SrVal *r = sr_dict(NULL);
    for (int i = 0; i < v->dict.n; i++) {
      SrVal *x = deep_copy(I, v->dict.vals[i], depth + 1);
      if (!x) {
        sr_unref(r);
        return NULL;
      }
      sr_dict_set(NULL, r, sr_ref(v->dict.keys[i]), x);
    }
    return r;
  }
  return sr_ref(v);
}

static SrVal *copy_copy(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "copy() takes 1 positional argument");
  SrVal *v = a->v[0];
  if (v->kind == SR_V_LIST) {
    SrVal *r = sr_seq(NULL, SR_V_LIST, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) sr_seq_push(NULL, r, sr_ref(v->seq.items[i]));
    return r;
  }
  if (v->kind == SR_V_DICT) {
    SrVal *r = sr_dict(NULL);
    for (int i = 0; i < v->dict.n; i++) sr_dict_set(NULL, r, sr_ref(v->dict.keys[i]), sr_ref(v->dict.vals[i]));
    return r;
  }
  return sr_ref(v);
}

static SrVal *copy_deepcopy(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->n > 2 || a->nkw) return sr_raise(I, "TypeError", "deepcopy() takes 1 or 2 positional arguments");
  return deep_copy(I, a->v[0], 0);
}

static void copy_init(void) {
  sr_def("copy.copy", copy_copy, "copy.copy(x): a shallow copy of x (a new list or dict; other values are shared)");
  sr_def("copy.deepcopy", copy_deepcopy, "copy.deepcopy(x): a deep copy of x's lists, tuples and dicts");
}

void sr_modules_init(void) {
  copy_init();
  typing_init();
  future_init();
  time_init();
  sr_functools_init();
  sr_itertools_init();
  sr_math_init();
  sr_cmath_init();
  sr_collections_init();
}

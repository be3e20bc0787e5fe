/* objects.c: classes of the language and Python's operators on data. */
#include "py/objects.h"
#include "py/introspect.h"

#include "py/class.h"
#include "py/modules.h"
#include "py/range.h"
#include "py/strfmt.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"

#include "text/print.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"
#include "util/pyfmt.h"

/* ---- the registry ---- */

typedef struct Reg {
  const char *name; /* interned */
  SrVal *v;
} Reg;

static Reg *reg;
static size_t regcap, regn;

static size_t reg_slot(const char *k) { return ((uintptr_t)k >> 3) * 2654435761u; }

static Reg *reg_find(const char *k) {
  size_t m = regcap - 1;
  size_t i = reg_slot(k) & m;
  while (reg[i].name && reg[i].name != k) i = (i + 1) & m;
  return &reg[i];
}

void sr_register(const char *qualname, SrVal *v) {
  if (2 * (regn + 1) > regcap) {
    Reg *old = reg;
    size_t oldcap = regcap;
    regcap = regcap ? 2 * regcap : 1024;
    reg = sr_xcalloc(regcap, sizeof *reg);
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].name) *reg_find(old[i].name) = old[i];
    free(old);
  }
  const char *k = sr_intern_cstr(qualname);
  Reg *r = reg_find(k);
  if (r->name) {
    sr_unref(r->v);
  } else {
    r->name = k;
    regn++;
  }
  r->v = v;
}

SrVal *sr_lookup_qualname(const char *qualname) {
  if (!regcap) return NULL;
  Reg *r = reg_find(sr_intern_cstr(qualname));
  return r->name ? r->v : NULL;
}

SrVal *sr_lookup_interned(const char *name) {
  if (!regcap) return NULL;
  Reg *r = reg_find(name);
  return r->name ? r->v : NULL;
}

void sr_registry_names(const char *prefix, void (*fn)(const char *, void *), void *ctx) {
  size_t n = strlen(prefix);
  for (size_t i = 0; i < regcap; i++)
    if (reg[i].name && strncmp(reg[i].name, prefix, n) == 0) fn(reg[i].name, ctx);
}

/* the names the embedding adds (sr_module_alias, sr_name_prefix) */
#define MAX_NAMES 16
static struct {
  const char *alias, *full;
} module_aliases[MAX_NAMES + 1];
static int naliases;
static const char *name_prefixes[MAX_NAMES + 3] = {"builtins.", ""};
static int nprefixes = 2;

void sr_module_alias(const char *alias, const char *full) {
  if (naliases == MAX_NAMES) return;
  module_aliases[naliases].alias = sr_intern_cstr(alias);
  module_aliases[naliases++].full = sr_intern_cstr(full);
}

void sr_name_prefix(const char *prefix) {
  if (nprefixes < MAX_NAMES + 2) name_prefixes[nprefixes++] = sr_intern_cstr(prefix);
}

const char *sr_canonical_module(const char *q) {
  for (int i = 0; module_aliases[i].alias; i++) {
    size_t n = strlen(module_aliases[i].alias);
    if (strncmp(q, module_aliases[i].alias, n) == 0 && (q[n] == 0 || q[n] == '.')) {
      static char buf[512];
      snprintf(buf, sizeof buf, "%s%s", module_aliases[i].full, q + n);
      return buf;
    }
  }
  return q;
}

SrVal *sr_lookup_builtin_name(const char *name) {
  char buf[256];
  for (int i = 0; name_prefixes[i]; i++) {
    snprintf(buf, sizeof buf, "%s%s", name_prefixes[i], name);
    SrVal *v = sr_lookup_qualname(sr_canonical_module(buf));
    if (v) return v;
  }
  return NULL;
}

int sr_module_known(const char *qualname) {
  char q[512];
  snprintf(q, sizeof q, "%s", sr_canonical_module(qualname));
  size_t n = strlen(q);
  if (sr_lookup_qualname(q)) return 1;
  for (size_t i = 0; i < regcap; i++)
    if (reg[i].name && strncmp(reg[i].name, q, n) == 0 && reg[i].name[n] == '.') return 1;
  return 0;
}

/* ---- modules ---- */

static void module_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<module '%s'>", (const char *)v->obj.data);
}

static struct {
  const char *name;
  SrVal *(*get)(SrInterp *I);
  SrVal *val;
} module_props[32];

static void def_module_prop(const char *qualname, SrVal *(*get)(SrInterp *I), SrVal *v) {
  for (size_t i = 0; i < sizeof module_props / sizeof *module_props; i++)
    if (!module_props[i].name) {
      module_props[i].name = sr_intern_cstr(qualname);
      module_props[i].get = get;
      module_props[i].val = v;
      return;
    }
  abort();
}

void sr_def_module_property(const char *qualname, SrVal *(*get)(SrInterp *I)) { def_module_prop(qualname, get, NULL); }

void sr_def_private(const char *qualname, SrVal *v) { def_module_prop(qualname, NULL, v); }

static SrVal *module_getattr(SrInterp *I, SrVal *self, const char *name) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s.%s", (const char *)self->obj.data, name);
  const char *q = sr_canonical_module(buf);
  for (size_t i = 0; i < sizeof module_props / sizeof *module_props && module_props[i].name; i++)
    if (strcmp(module_props[i].name, q) == 0)
      return module_props[i].get ? module_props[i].get(I) : sr_ref(module_props[i].val);
  if (sr_name_internal(q)) return NULL; /* the implementation's: jax.numpy._getitem */
  SrVal *v = sr_lookup_qualname(q);
  if (v) return sr_ref(v);
  /* a submodule that exists because something is registered under it */
  size_t n = strlen(q);
  for (size_t i = 0; i < regcap; i++)
    if (reg[i].name && strncmp(reg[i].name, q, n) == 0 && reg[i].name[n] == '.') return sr_module(q);
  (void)I;
  return NULL;
}

/* isinstance(x, jax.Array): jax.Array is the module of the arrays'
   methods here; its instances are the arrays, tracers included (not
   ShapeDtypeStructs) */
static int module_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  const SrArrayObj *a = sr_array_of(x);
  return strcmp((const char *)self->obj.data, "jax.Array") == 0 && a && (a->kind != SR_AV_ABSTRACT || a->has_value);
}

static const SrLangOps module_ops = {.getattr = module_getattr, .instancecheck = module_instancecheck};
const SrClass sr_module_class = {"module", NULL, module_repr, NULL, &module_ops};

SrVal *sr_module(const char *qualname) {
  return sr_obj(&sr_module_class, (void *)sr_intern_cstr(sr_canonical_module(qualname)));
}

/* ---- builtin functions ---- */

static void builtin_free(void *d) {
  SrBuiltin *b = d;
  sr_unref(b->self);
  sr_unref(b->wrapped);
  if (b->free_data) b->free_data(b->data);
  free(b);
}

static void builtin_repr(SrBuf *out, const SrVal *v) {
  const SrBuiltin *b = v->obj.data;
  if (sr_builtin_type_name(v)) sr_buf_printf(out, "<class '%s'>", sr_builtin_type_name(v));
  else if (b->self) sr_buf_printf(out, "<bound method %s>", b->name);
  else sr_buf_printf(out, "<function %s>", b->name);
}

static SrBuiltin *calling;

SrBuiltin *sr_current_builtin(SrInterp *I) {
  (void)I;
  return calling;
}

static SrVal *builtin_call(SrInterp *I, SrVal *self, SrArgs *a) {
  SrBuiltin *b = self->obj.data;
  SrArgs args = *a;
  args.self = b->self;
  SrBuiltin *saved = calling;
  calling = b;
  SrVal *r = b->fn(I, &args);
  calling = saved;
  if (!r && !I->exc) r = sr_raise(I, "RuntimeError", "%s() failed", b->name);
  return r;
}

/* attributes of a builtin: what is registered under its name
   (jax.P.UNCONSTRAINED, jax.config.update) */
static SrVal *builtin_getattr(SrInterp *I, SrVal *self, const char *name) {
  const SrBuiltin *b = self->obj.data;
  if (b->wrapped && strcmp(name, "__wrapped__") == 0) return sr_ref(b->wrapped);
  char buf[512];
  snprintf(buf, sizeof buf, "%s.%s", b->name, name);
  SrVal *v = sr_lookup_qualname(buf);
  (void)I;
  return v ? sr_ref(v) : NULL;
}

static const SrLangOps builtin_ops = {.call = builtin_call, .getattr = builtin_getattr};
const SrClass sr_builtin_class = {"builtin_function_or_method", builtin_free, builtin_repr, NULL,
                                  &builtin_ops};

SrVal *sr_builtin_set_doc(SrVal *b, const char *doc) {
  if (b && doc && sr_is_obj(b, &sr_builtin_class)) ((SrBuiltin *)b->obj.data)->doc = sr_intern_cstr(doc);
  return b;
}

SrVal *sr_builtin_set_wrapped(SrVal *b, SrVal *fn) {
  if (b && fn && sr_is_obj(b, &sr_builtin_class)) {
    SrBuiltin *bb = b->obj.data;
    sr_unref(bb->wrapped);
    bb->wrapped = sr_ref(fn);
  }
  return b;
}

SrVal *sr_signature_target(SrInterp *I, SrVal *f) {
  for (int depth = 0; f && depth < 100; depth++) {
    if (f->kind != SR_V_OBJ || !f->obj.cls->lang) break;
    const SrLangOps *ops = f->obj.cls->lang;
    SrVal *w = ops->getattr ? ops->getattr(I, f, "__wrapped__") : NULL;
    if (!w) {
      if (I->exc) sr_exc_clear(I);
      break;
    }
    sr_unref(w); /* held by f */
    f = w;
  }
  return f;
}

SrVal *sr_builtin_with(const char *name, SrBuiltinFn fn, void *data, void (*free_data)(void *)) {
  SrBuiltin *b = sr_xcalloc(1, sizeof *b);
  b->fn = fn;
  b->name = sr_intern_cstr(name);
  b->data = data;
  b->free_data = free_data;
  return sr_obj(&sr_builtin_class, b);
}

SrVal *sr_def(const char *names, SrBuiltinFn fn, const char *doc) {
  const char *sp = strchr(names, ' ');
  size_t n0 = sp ? (size_t)(sp - names) : strlen(names);
  SrBuiltin *b = sr_xcalloc(1, sizeof *b);
  b->fn = fn;
  b->name = sr_intern(names, n0);
  b->doc = doc;
  SrVal *v = sr_obj(&sr_builtin_class, b);
  const char *s = names;
  while (*s) {
    while (*s == ' ') s++;
    const char *e = s;
    while (*e && *e != ' ') e++;
    if (e > s) sr_register(sr_intern(s, (size_t)(e - s)), sr_ref(v));
    s = e;
  }
  sr_unref(v);
  return v;
}

SrVal *sr_bound_method(SrVal *self, const char *name, SrBuiltinFn fn) {
  SrBuiltin *b = sr_xcalloc(1, sizeof *b);
  b->fn = fn;
  b->name = sr_intern_cstr(name);
  b->self = sr_ref(self);
  return sr_obj(&sr_builtin_class, b);
}

const char *sr_builtin_doc(SrVal *fn) {
  return sr_is_obj(fn, &sr_builtin_class) ? ((SrBuiltin *)fn->obj.data)->doc : NULL;
}

const char *sr_builtin_name(SrVal *fn) {
  /* a partial is named after its function, as JAX's api_util.fun_name has it */
  if (sr_partial_func(fn)) return sr_builtin_name(sr_partial_func(fn));
  if (sr_is_obj(fn, &sr_builtin_class)) return ((SrBuiltin *)fn->obj.data)->name;
  if (sr_is_obj(fn, &sr_function_class)) return ((SrFunction *)fn->obj.data)->name;
  return NULL;
}

/* ---- user functions ---- */

static void function_free(void *d) {
  SrFunction *f = d;
  for (int i = 0; i < f->node->params->n; i++) sr_unref(f->defaults[i]);
  free(f->defaults);
  sr_env_unref(f->closure);
  sr_code_unref(f->code);
  sr_unref(f->attrs);
  sr_unref(f->owner);
  free(f);
}

/* a function's attributes and defaults may hold it (f.attr = [f]) */
static void function_traverse(void *d, SrValVisit visit, void *arg) {
  SrFunction *f = d;
  for (int i = 0; i < f->node->params->n; i++)
    if (f->defaults[i]) visit(f->defaults[i], arg);
  if (f->attrs) visit(f->attrs, arg);
  if (f->owner) visit(f->owner, arg);
}

static void function_clear(void *d) {
  SrFunction *f = d;
  for (int i = 0; i < f->node->params->n; i++) {
    sr_unref(f->defaults[i]);
    f->defaults[i] = NULL;
  }
  sr_unref(f->attrs);
  f->attrs = NULL;
  sr_unref(f->owner);
  f->owner = NULL;
}

static void function_repr(SrBuf *out, const SrVal *v) {
  const SrFunction *f = v->obj.data;
  sr_buf_printf(out, "<function %s>", f->qualname ? f->qualname : f->name);
}

static SrVal *function_call(SrInterp *I, SrVal *self, SrArgs *a) {
  return sr_function_call(I, self, a);
}

static SrVal *function_getattr(SrInterp *I, SrVal *self, const char *name) {
  SrFunction *f = self->obj.data;
  if (strcmp(name, "__name__") == 0) return sr_str_cstr(NULL, f->name);
  if (strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, f->qualname ? f->qualname : f->name);
  if (f->attrs) {
    SrVal *k = sr_str_cstr(NULL, name);
    SrVal *v = sr_dict_get(f->attrs, k);
    sr_unref(k);
    if (v) return sr_ref(v);
  }
  (void)I;
  return NULL;
}

static int function_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *v) {
  SrFunction *f = self->obj.data;
  if (strcmp(name, "__name__") == 0) { /* functools.wraps renames */
    if (v->kind != SR_V_STR) return sr_raise(I, "TypeError", "__name__ must be set to a string object"), -1;
    f->name = sr_intern(v->str.s, v->str.n);
    return 0;
  }
  if (!f->attrs) f->attrs = sr_dict(NULL);
  sr_dict_set(NULL, f->attrs, sr_str_cstr(NULL, name), sr_ref(v));
  (void)I;
  return 0;
}

static const SrLangOps function_ops = {.call = function_call, .getattr = function_getattr,
                                       .setattr = function_setattr};
const SrClass sr_function_class = {"function", function_free, function_repr, NULL, &function_ops};

SrVal *sr_function_new(SrCode *code, SrNode *node, SrEnv *closure, SrVal **defaults,
                       const char *name) {
  static int traversed;
  if (!traversed) {
    traversed = 1;
    sr_val_traverse_class(&sr_function_class, function_traverse, function_clear);
  }
  SrFunction *f = sr_xcalloc(1, sizeof *f);
  f->code = sr_code_ref(code);
  f->node = node;
  f->closure = sr_env_ref(closure);
  f->defaults = defaults;
  f->name = sr_intern_cstr(name);
  return sr_obj(&sr_function_class, f);
}

/* ---- exception types ---- */

static const struct {
  const char *name, *parent;
} exc_tree[] = {
  {"BaseException", NULL},
  {"Exception", "BaseException"},
  {"KeyboardInterrupt", "BaseException"},
  {"ArithmeticError", "Exception"},
  {"ZeroDivisionError", "ArithmeticError"},
  {"OverflowError", "ArithmeticError"},
  {"AssertionError", "Exception"},
  {"AttributeError", "Exception"},
  {"MemoryError", "Exception"},
  {"ImportError", "Exception"},
  {"ModuleNotFoundError", "ImportError"},
  {"LookupError", "Exception"},
  {"IndexError", "LookupError"},
  {"KeyError", "LookupError"},
  {"NameError", "Exception"},
  {"UnboundLocalError", "NameError"},
  {"OSError", "Exception"},
  {"FileNotFoundError", "OSError"},
  {"RuntimeError", "Exception"},
  {"NotImplementedError", "RuntimeError"},
  {"RecursionError", "RuntimeError"},
  {"SyntaxError", "Exception"},
  {"TypeError", "Exception"},
  {"ValueError", "Exception"},
  {"FrozenInstanceError", "AttributeError"}, /* dataclasses' */
  {"AxisError", "ValueError"}, /* numpy's (an IndexError too there) */
  {"StopIteration", "Exception"},
  {"GeneratorExit", "BaseException"},
  {"EOFError", "Exception"},
  {"StdinNotImplementedError", "NotImplementedError"}, /* ipykernel's, for input() */
  /* JAX's; from JAXTypeError on, jax.errors' (registered there, not as
     builtins) */
  {"ShardingTypeError", "Exception"},
  {"JAXTypeError", "TypeError"},
  {"JAXIndexError", "IndexError"},
  {"ConcretizationTypeError", "JAXTypeError"},
  {"NonConcreteBooleanIndexError", "JAXIndexError"},
  {"TracerArrayConversionError", "JAXTypeError"},
  {"TracerIntegerConversionError", "JAXTypeError"},
  {"TracerBoolConversionError", "ConcretizationTypeError"},
  {"UnexpectedTracerError", "JAXTypeError"},
  {"KeyReuseError", "JAXTypeError"},
  {"JaxprTypeError", "TypeError"},
  {"DuplicateSpecError", "Exception"},
  {"IndivisibleError", "ValueError"},
  {"XlaRuntimeError", "RuntimeError"},
  {"JaxRuntimeError", "RuntimeError"},
  {"InconclusiveDimensionOperation", "Exception"},
  {"TypePromotionError", "ValueError"}, /* jax.dtypes' */
  {NULL, NULL},
};
#define FIRST_JAX_ERRORS "JAXTypeError"

/* the exception classes class statements made: name and base (interned) */
static struct {
  const char *name, *parent;
} user_exc[256];
static int nuser_exc;

SrVal *sr_exception_type_new(const char *name, const char *parent) {
  name = sr_intern_cstr(name);
  int i = 0;
  while (i < nuser_exc && user_exc[i].name != name) i++;
  if (i == nuser_exc && nuser_exc < 256) nuser_exc++;
  if (i < nuser_exc) {
    user_exc[i].name = name;
    user_exc[i].parent = sr_intern_cstr(parent);
  }
  return sr_obj(&sr_exctype_class, (void *)name);
}

int sr_exception_is_a(const char *type, const char *want) {
  for (int guard = 0; type && guard < 64; guard++) {
    if (strcmp(type, want) == 0) return 1;
    const char *parent = NULL;
    for (int i = 0; exc_tree[i].name; i++)
      if (strcmp(exc_tree[i].name, type) == 0) parent = exc_tree[i].parent;
    for (int i = 0; !parent && i < nuser_exc; i++)
      if (strcmp(user_exc[i].name, type) == 0) parent = user_exc[i].parent;
    /* unknown types derive from Exception */
    if (!parent && strcmp(type, "BaseException") != 0 && strcmp(type, "Exception") != 0)
      parent = "Exception";
    type = parent;
  }
  return 0;
}

static void exctype_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<class '%s'>", (const char *)v->obj.data);
}

static SrVal *exctype_call(SrInterp *I, SrVal *self, SrArgs *a) {
  SrBuf b = SR_BUF_INIT;
  if (a->n > 0) sr_to_str(I, &b, a->v[0]);
  SrVal *e = sr_exc_new(self->obj.data, sr_buf_str(&b), SR_E_RUNTIME);
  sr_buf_free(&b);
  return e;
}

static SrVal *exctype_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "__name__") == 0) return sr_str_cstr(NULL, self->obj.data);
  return NULL;
}

static const SrLangOps exctype_ops = {.call = exctype_call, .getattr = exctype_getattr};
const SrClass sr_exctype_class = {"type", NULL, exctype_repr, NULL, &exctype_ops};

const char *sr_exception_type_name(const SrVal *v) {
  return sr_is_obj(v, &sr_exctype_class) ? v->obj.data : NULL;
}

/* ---- slices ---- */

typedef struct Slice {
  SrVal *start, *stop, *step;
} Slice;

static void slice_free(void *d) {
  Slice *s = d;
  sr_unref(s->start);
  sr_unref(s->stop);
  sr_unref(s->step);
  free(s);
}

static void slice_repr(SrBuf *out, const SrVal *v) {
  const Slice *s = v->obj.data;
  sr_buf_puts(out, "slice(");
  sr_val_repr(out, s->start);
  sr_buf_puts(out, ", ");
  sr_val_repr(out, s->stop);
  sr_buf_puts(out, ", ");
  sr_val_repr(out, s->step);
  sr_buf_putc(out, ')');
}

static SrVal *slice_getattr(SrInterp *I, SrVal *self, const char *name) {
  const Slice *s = self->obj.data;
  (void)I;
  if (strcmp(name, "start") == 0) return sr_ref(s->start);
  if (strcmp(name, "stop") == 0) return sr_ref(s->stop);
  if (strcmp(name, "step") == 0) return sr_ref(s->step);
  return NULL;
}

/* slice.__eq__: the same start, stop and step */
static int slice_equal(const SrVal *a, const SrVal *b) {
  const Slice *x = a->obj.data, *y = b->obj.data;
  return sr_val_equal(x->start, y->start) && sr_val_equal(x->stop, y->stop) && sr_val_equal(x->step, y->step);
}

static SrVal *slice_compare(SrInterp *I, int op, SrVal *a, SrVal *b) {
  (void)I;
  if (!sr_is_obj(a, &sr_slice_class) || !sr_is_obj(b, &sr_slice_class)) return NULL;
  if (op == SR_OP_EQ) return sr_bool(slice_equal(a, b));
  if (op == SR_OP_NE) return sr_bool(!slice_equal(a, b));
  return NULL;
}

static const SrLangOps slice_ops = {.getattr = slice_getattr, .compare = slice_compare};
const SrClass sr_slice_class = {"slice", slice_free, slice_repr, NULL, &slice_ops};

SrVal *sr_slice_new(SrVal *start, SrVal *stop, SrVal *step) {
  Slice *s = sr_xcalloc(1, sizeof *s);
  s->start = start;
  s->stop = stop;
  s->step = step;
  return sr_obj(&sr_slice_class, s);
}

SrVal *sr_slice_part(SrVal *slice, int i) {
  Slice *s = slice->obj.data;
  return i == 0 ? s->start : i == 1 ? s->stop : s->step;
}

int sr_slice_indices(SrInterp *I, SrVal *slice, int64_t n, int64_t *start, int64_t *stop,
                     int64_t *step, int64_t *count) {
  Slice *s = slice->obj.data;
  int64_t st = 1;
  if (s->step->kind != SR_V_NONE && sr_as_int(I, s->step, "slice step", &st) < 0) return -1;
  if (st == 0) return sr_raise(I, "ValueError", "slice step cannot be zero"), -1;
  int64_t lo = st > 0 ? 0 : n - 1, hi = st > 0 ? n : -1;
  if (s->start->kind != SR_V_NONE) {
    if (sr_as_int(I, s->start, "slice index", &lo) < 0) return -1;
    if (lo < 0) lo += n;
    if (lo < 0) lo = st > 0 ? 0 : -1;
    if (lo >= n) lo = st > 0 ? n : n - 1;
  }
  if (s->stop->kind != SR_V_NONE) {
    if (sr_as_int(I, s->stop, "slice index", &hi) < 0) return -1;
    if (hi < 0) hi += n;
    if (hi < 0) hi = st > 0 ? 0 : -1;
    if (hi >= n) hi = st > 0 ? n : n - 1;
  }
  /* lo and hi lie in [-1, n], so their difference fits; the step may be
     INT64_MIN, whose negation does not, hence the unsigned division */
  int64_t c = 0;
  if (st > 0 && hi > lo) c = (int64_t)((uint64_t)(hi - lo - 1) / (uint64_t)st + 1);
  if (st < 0 && lo > hi) c = (int64_t)((uint64_t)(lo - hi - 1) / (0 - (uint64_t)st) + 1);
  *start = lo;
  *stop = hi;
  *step = st;
  *count = c;
  return 0;
}

int sr_index(SrInterp *I, SrVal *key, int64_t n, int64_t *out) {
  int64_t i;
  if (sr_as_int(I, key, "index", &i) < 0) return -1;
  if (i < 0) i += n;
  if (i < 0 || i >= n) {
    sr_raise(I, "IndexError", "index %lld is out of range", (long long)(i < 0 ? i - n : i));
    return -1;
  }
  *out = i;
  return 0;
}

/* ---- calling ---- */

/* calls of the plain data kinds (a Mesh is a ContextDecorator) */
static SrKindCall kind_call[SR_V_OBJ + 1];

int sr_is_callable(SrInterp *I, const SrVal *v) {
  const SrLangOps *ops = sr_ops(v);
  int inst = sr_class_instance_callable(v);
  if (inst >= 0) return inst;
  return v->kind == SR_V_JAXPR || (ops && ops->call) || (v->kind == SR_V_DTYPE && I->py->init->call_dtype) ||
         kind_call[v->kind] != NULL;
}

SrVal *sr_call(SrInterp *I, SrVal *fn, SrArgs *a) {
  if (fn->kind == SR_V_DTYPE && I->py->init->call_dtype) return I->py->init->call_dtype(I, fn, a);
  if (fn->kind == SR_V_JAXPR) {
    if (I->py->init->call_jaxpr) return I->py->init->call_jaxpr(I, fn, a);
    return sr_raise(I, "NotImplementedError", "calling a jaxpr is not available");
  }
  const SrLangOps *ops = sr_ops(fn);
  if (ops && ops->call) return ops->call(I, fn, a);
  if (kind_call[fn->kind]) return kind_call[fn->kind](I, fn, a);
  return sr_raise(I, "TypeError", "'%s' object is not callable", sr_val_kind_name(fn));
}

SrVal *sr_call1(SrInterp *I, SrVal *fn, SrVal *arg) {
  SrArgs a = {1, &arg, 0, NULL, NULL, NULL};
  return sr_call(I, fn, &a);
}

SrVal *sr_call_kwdict(SrInterp *I, SrVal *fn, int n, SrVal **args, SrVal *kwargs) {
  int nkw = kwargs ? kwargs->dict.n : 0;
  const char **kw = sr_xcalloc((size_t)nkw + 1, sizeof *kw);
  for (int i = 0; i < nkw; i++) kw[i] = sr_intern(kwargs->dict.keys[i]->str.s, kwargs->dict.keys[i]->str.n);
  SrArgs a = {n, args, nkw, kw, nkw ? kwargs->dict.vals : NULL, NULL};
  SrVal *r = sr_call(I, fn, &a);
  free(kw);
  return r;
}

/* ---- conversions to text ---- */

/* ---- truthiness and iteration ---- */

int sr_truthy(SrInterp *I, SrVal *v) {
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->truthy) return ops->truthy(I, v);
  if (ops && ops->len) {
    int64_t n = ops->len(I, v);
    if (n >= 0) return n != 0;
  }
  return sr_val_truthy(v);
}

SrVal *sr_iterate(SrInterp *I, SrVal *v) {
  SrVal *l;
  switch (v->kind) {
  case SR_V_TUPLE:
  case SR_V_LIST:
  case SR_V_SET:
  case SR_V_FROZENSET:
    l = sr_seq(NULL, SR_V_LIST, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) sr_seq_push(NULL, l, sr_ref(v->seq.items[i]));
    return l;
  case SR_V_DICT:
    l = sr_seq(NULL, SR_V_LIST, v->dict.n);
    for (int i = 0; i < v->dict.n; i++) sr_seq_push(NULL, l, sr_ref(v->dict.keys[i]));
    return l;
  case SR_V_STR:
    l = sr_seq(NULL, SR_V_LIST, (int)v->str.n);
    for (size_t i = 0; i < v->str.n;) {
      size_t e = i + 1;
      while (e < v->str.n && ((unsigned char)v->str.s[e] & 0xC0) == 0x80) e++;
      sr_seq_push(NULL, l, sr_str(NULL, v->str.s + i, e - i));
      i = e;
    }
    return l;
  case SR_V_SPEC:
    l = sr_seq(NULL, SR_V_LIST, v->spec->n);
    for (int i = 0; i < v->spec->n; i++) sr_seq_push(NULL, l, sr_getindex(I, v, i));
    return l;
  default: {
    const SrLangOps *ops = sr_ops(v);
    if (ops && ops->iter) return ops->iter(I, v);
    return sr_raise(I, "TypeError", "'%s' object is not iterable", sr_val_kind_name(v));
  }
  }
}

/* ---- indexing ---- */

static SrVal *spec_entry(const SrSpecEntry *e) {
  if (e->n == 0) return sr_none();
  if (e->n == 1 && e->names[0] == SR_SPEC_UNCONSTRAINED) return sr_word(NULL, "UNCONSTRAINED", 13);
  if (e->n == 1) return sr_str_cstr(NULL, e->names[0]);
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, e->n);
  for (int i = 0; i < e->n; i++) sr_seq_push(NULL, t, sr_str_cstr(NULL, e->names[i]));
  return t;
}

SrVal *sr_getindex(SrInterp *I, SrVal *obj, int64_t i) {
  SrVal *key = sr_int(NULL, i);
  SrVal *r = sr_getitem(I, obj, key);
  sr_unref(key);
  return r;
}

/* ---- types.GenericAlias: tuple[int, int], list[X], dict[K, V] ----
 * A built-in container type subscripted, as annotations and type aliases
 * write them at run time: it prints as tuple[int, jax.Array] (each
 * argument's class named as <class '...'> names it) and calls the type. */
typedef struct {
  SrVal *origin;
  char *text;
} Alias;

static void alias_free(void *d) {
  Alias *a = d;
  sr_unref(a->origin);
  free(a->text);
  free(a);
}

static void alias_repr(SrBuf *out, const SrVal *v) { sr_buf_puts(out, ((const Alias *)v->obj.data)->text); }

static SrVal *alias_call(SrInterp *I, SrVal *self, SrArgs *a) { return sr_call(I, ((Alias *)self->obj.data)->origin, a); }

static const SrLangOps alias_ops = {.call = alias_call};
static const SrClass alias_class = {"types.GenericAlias", alias_free, alias_repr, NULL, &alias_ops};

/* _type_repr: a class by its name (builtins unqualified), ... for
   Ellipsis, anything else by its repr */
static void alias_arg(SrInterp *I, SrBuf *b, SrVal *x) {
  SrBuf r = SR_BUF_INIT;
  sr_to_repr(I, &r, x);
  const char *t = sr_buf_str(&r);
  size_t n = strlen(t);
  if (n > 10 && strncmp(t, "<class '", 8) == 0 && strcmp(t + n - 2, "'>") == 0) sr_buf_putn(b, t + 8, n - 10);
  else if (strcmp(t, "Ellipsis") == 0) sr_buf_puts(b, "...");
  else sr_buf_puts(b, t);
  sr_buf_free(&r);
}

static SrVal *generic_alias(SrInterp *I, SrVal *origin, const char *name, SrVal *key) {
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "%s[", name);
  if (key->kind == SR_V_TUPLE) {
    if (!key->seq.n) sr_buf_puts(&b, "()");
    for (int i = 0; i < key->seq.n; i++) {
      if (i) sr_buf_puts(&b, ", ");
      alias_arg(I, &b, key->seq.items[i]);
    }
  } else if (key->kind == SR_V_LIST) {
    sr_buf_putc(&b, '[');
    for (int i = 0; i < key->seq.n; i++) {
      if (i) sr_buf_puts(&b, ", ");
      alias_arg(I, &b, key->seq.items[i]);
    }
    sr_buf_putc(&b, ']');
  } else {
    alias_arg(I, &b, key);
  }
  sr_buf_putc(&b, ']');
  Alias *a = sr_xcalloc(1, sizeof *a);
  a->origin = sr_ref(origin);
  a->text = sr_xstrdup(sr_buf_str(&b));
  sr_buf_free(&b);
  return sr_obj(&alias_class, a);
}

SrVal *sr_getitem(SrInterp *I, SrVal *obj, SrVal *key) {
  const SrLangOps *ops = sr_ops(obj);
  if (ops && ops->getitem) return ops->getitem(I, obj, key);
  int64_t i, n;
  switch (obj->kind) {
  case SR_V_TUPLE:
  case SR_V_LIST:
    n = obj->seq.n;
    if (sr_is_obj(key, &sr_slice_class)) {
      int64_t st, sp, step, cnt;
      if (sr_slice_indices(I, key, n, &st, &sp, &step, &cnt) < 0) return NULL;
      SrVal *r = sr_seq(NULL, obj->kind, (int)cnt);
      for (int64_t k = 0; k < cnt; k++) sr_seq_push(NULL, r, sr_ref(obj->seq.items[st + k * step]));
      return r;
    }
    if (sr_index(I, key, n, &i) < 0) {
      if (I->exc && strcmp(sr_exc_type(I->exc), "IndexError") == 0)
        return sr_raise(I, "IndexError", "%s index out of range", obj->kind == SR_V_TUPLE ? "tuple" : "list");
      return NULL;
    }
    return sr_ref(obj->seq.items[i]);
  case SR_V_STR: {
    /* index characters, not bytes: the offset where each one starts */
    size_t *at = sr_xmalloc((obj->str.n + 1) * sizeof *at);
    n = 0;
    for (size_t k = 0; k < obj->str.n; k++)
      if (((unsigned char)obj->str.s[k] & 0xC0) != 0x80) at[n++] = k;
    at[n] = obj->str.n;
    SrVal *r = NULL;
    if (sr_is_obj(key, &sr_slice_class)) {
      int64_t st, sp, step, cnt;
      if (sr_slice_indices(I, key, n, &st, &sp, &step, &cnt) == 0) {
        SrBuf b = SR_BUF_INIT;
        for (int64_t k = 0; k < cnt; k++) {
          int64_t c = st + k * step;
          sr_buf_putn(&b, obj->str.s + at[c], at[c + 1] - at[c]);
        }
        r = sr_str(NULL, sr_buf_str(&b), b.len);
        sr_buf_free(&b);
      }
    } else if (sr_index(I, key, n, &i) == 0) {
      r = sr_str(NULL, obj->str.s + at[i], at[i + 1] - at[i]);
    }
    free(at);
    return r;
  }
  case SR_V_DICT: {
    SrVal *v = sr_dict_get(obj, key);
    if (v) return sr_ref(v);
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, key);
    sr_raise(I, "KeyError", "%s", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  case SR_V_SPEC:
    if (sr_is_obj(key, &sr_slice_class)) {
      /* PartitionSpec.__getitem__: a slice of its partitions, a tuple */
      int64_t st, sp, step, cnt;
      if (sr_slice_indices(I, key, obj->spec->n, &st, &sp, &step, &cnt) < 0) return NULL;
      SrVal *t = sr_seq(NULL, SR_V_TUPLE, (int)cnt);
      for (int64_t k = 0, j = st; k < cnt; k++, j += step) sr_seq_push(NULL, t, spec_entry(&obj->spec->e[j]));
      return t;
    }
    if (sr_index(I, key, obj->spec->n, &i) < 0) return NULL;
    return spec_entry(&obj->spec->e[i]);
  default:
    if (sr_is_obj(obj, &sr_builtin_class)) {
      /* the built-in container types' __class_getitem__ */
      static const char *const types[] = {"tuple", "list", "dict", "set", "frozenset", "type", NULL};
      const char *bn = sr_builtin_name(obj);
      const char *dot = bn && strncmp(bn, "builtins.", 9) == 0 ? bn + 9 : NULL;
      for (int k = 0; dot && types[k]; k++)
        if (strcmp(dot, types[k]) == 0) return generic_alias(I, obj, dot, key);
    }
    return sr_raise(I, "TypeError", "'%s' object is not subscriptable", sr_val_kind_name(obj));
  }
}

/* l[start:stop:step] = items */
static int list_set_slice(SrInterp *I, SrVal *l, SrVal *key, SrVal *v) {
  int64_t st, sp, step, cnt;
  if (sr_slice_indices(I, key, l->seq.n, &st, &sp, &step, &cnt) < 0) return -1;
  SrVal *items = sr_iterate(I, v);
  if (!items) return -1;
  if (step != 1) {
    if (items->seq.n != cnt) {
      sr_raise(I, "ValueError", "attempt to assign sequence of size %d to extended slice of size %lld",
               items->seq.n, (long long)cnt);
      sr_unref(items);
      return -1;
    }
    for (int64_t k = 0; k < cnt; k++) {
      sr_unref(l->seq.items[st + k * step]);
      l->seq.items[st + k * step] = sr_ref(items->seq.items[k]);
    }
    sr_unref(items);
    return 0;
  }
  if (sp < st) sp = st;
  int64_t n = l->seq.n, m = items->seq.n, removed = sp - st;
  SrVal **nv = sr_xmalloc((size_t)(n - removed + m + 1) * sizeof *nv);
  int64_t k = 0;
  for (int64_t i = 0; i < st; i++) nv[k++] = l->seq.items[i];
  for (int64_t i = 0; i < m; i++) nv[k++] = sr_ref(items->seq.items[i]);
  for (int64_t i = sp; i < n; i++) nv[k++] = l->seq.items[i];
  for (int64_t i = st; i < sp; i++) sr_unref(l->seq.items[i]);
  free(l->seq.items);
  l->seq.items = nv;
  l->seq.n = (int)k;
  l->seq.cap = (int)(n - removed + m + 1);
  sr_unref(items);
  return 0;
}

int sr_setitem(SrInterp *I, SrVal *obj, SrVal *key, SrVal *v) {
  const SrLangOps *ops = sr_ops(obj);
  if (ops && ops->setitem) return ops->setitem(I, obj, key, v);
  if (obj->kind == SR_V_LIST && sr_is_obj(key, &sr_slice_class)) return list_set_slice(I, obj, key, v);
  if (obj->kind == SR_V_LIST) {
    int64_t i;
    if (sr_index(I, key, obj->seq.n, &i) < 0) return -1;
    sr_unref(obj->seq.items[i]);
    obj->seq.items[i] = sr_ref(v);
    return 0;
  }
  if (obj->kind == SR_V_DICT && obj->rc > 0) {
    sr_dict_set(NULL, obj, sr_ref(key), sr_ref(v));
    return 0;
  }
  sr_raise(I, "TypeError", "'%s' object does not support item assignment", sr_val_kind_name(obj));
  return -1;
}

int sr_delitem(SrInterp *I, SrVal *obj, SrVal *key) {
  if (obj->kind == SR_V_LIST && sr_is_obj(key, &sr_slice_class)) {
    int64_t st, sp, step, cnt;
    if (sr_slice_indices(I, key, obj->seq.n, &st, &sp, &step, &cnt) < 0) return -1;
    uint8_t *gone = sr_xcalloc((size_t)obj->seq.n + 1, 1);
    for (int64_t k = 0; k < cnt; k++) gone[st + k * step] = 1;
    int w = 0;
    for (int i = 0; i < obj->seq.n; i++) {
      if (gone[i]) sr_unref(obj->seq.items[i]);
      else obj->seq.items[w++] = obj->seq.items[i];
    }
    obj->seq.n = w;
    free(gone);
    return 0;
  }
  if (obj->kind == SR_V_LIST) {
    int64_t i;
    if (sr_index(I, key, obj->seq.n, &i) < 0) return -1;
    sr_unref(obj->seq.items[i]);
    memmove(obj->seq.items + i, obj->seq.items + i + 1, (size_t)(obj->seq.n - i - 1) * sizeof(SrVal *));
    obj->seq.n--;
    return 0;
  }
  if (obj->kind == SR_V_DICT) {
    for (int i = 0; i < obj->dict.n; i++)
      if (sr_val_equal(obj->dict.keys[i], key)) {
        sr_unref(obj->dict.keys[i]);
        sr_unref(obj->dict.vals[i]);
        memmove(obj->dict.keys + i, obj->dict.keys + i + 1, (size_t)(obj->dict.n - i - 1) * sizeof(SrVal *));
        memmove(obj->dict.vals + i, obj->dict.vals + i + 1, (size_t)(obj->dict.n - i - 1) * sizeof(SrVal *));
        obj->dict.n--;
        return 0;
      }
    sr_raise(I, "KeyError", "key not found");
    return -1;
  }
  sr_raise(I, "TypeError", "'%s' object doesn't support item deletion", sr_val_kind_name(obj));
  return -1;
}

/* ---- attributes of plain data ---- */

static SrKindGetattr kind_getattr[SR_V_OBJ + 1];

void sr_kind_getattr_set(int kind, SrKindGetattr fn) { kind_getattr[kind] = fn; }

void sr_kind_call_set(int kind, SrKindCall fn) { kind_call[kind] = fn; }
SrKindGetattr sr_kind_getattr_get(int kind) { return kind_getattr[kind]; }

static SrVal *m_str_join(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "join() takes exactly one argument");
  SrVal *items = sr_iterate(I, a->v[0]);
  if (!items) return NULL;
  /* the separator repeats: the result may be far larger than the items */
  uint64_t total = 0, sep = a->self->str.n;
  for (int i = 0; i < items->seq.n; i++)
    if (items->seq.items[i]->kind == SR_V_STR) total += items->seq.items[i]->str.n + (i ? sep : 0);
  if (sr_check_mem(I, total, 1) < 0) {
    sr_unref(items);
    return NULL;
  }
  SrBuf b = SR_BUF_INIT;
  for (int i = 0; i < items->seq.n; i++) {
    if (i) sr_buf_putn(&b, a->self->str.s, a->self->str.n);
    SrVal *it = items->seq.items[i];
    if (it->kind != SR_V_STR) {
      sr_unref(items);
      sr_buf_free(&b);
      return sr_raise(I, "TypeError", "sequence item %d: expected str instance, %s found", i,
                      sr_val_kind_name(it));
    }
    sr_buf_putn(&b, it->str.s, it->str.n);
  }
  sr_unref(items);
  SrVal *r = sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

static SrVal *m_str_count(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->v[0]->kind != SR_V_STR) return sr_raise(I, "TypeError", "count() takes a string");
  const char *s = a->self->str.s, *end = s + a->self->str.n;
  const char *sub = a->v[0]->str.s;
  size_t n = a->v[0]->str.n;
  int64_t c = 0;
  if (n == 0) return sr_int(NULL, (int64_t)a->self->str.n + 1);
  while ((s = memmem(s, (size_t)(end - s), sub, n)) != NULL) {
    c++;
    s += n;
  }
  return sr_int(NULL, c);
}

static SrVal *str_list(const char *s, size_t n, const char *sep, size_t sn, int lines) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  size_t i = 0, st = 0;
  if (!sep && !lines) {
    while (i < n) {
      while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) i++;
      st = i;
      while (i < n && !(s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) i++;
      if (i > st) sr_seq_push(NULL, l, sr_str(NULL, s + st, i - st));
    }
    return l;
  }
  if (lines) {
    while (i < n) {
      st = i;
      while (i < n && s[i] != '\n') i++;
      sr_seq_push(NULL, l, sr_str(NULL, s + st, i - st));
      if (i < n) i++;
    }
    return l;
  }
  for (;;) {
    const char *p = sn ? memmem(s + st, n - st, sep, sn) : NULL;
    if (!p) {
      sr_seq_push(NULL, l, sr_str(NULL, s + st, n - st));
      return l;
    }
    sr_seq_push(NULL, l, sr_str(NULL, s + st, (size_t)(p - (s + st))));
    st = (size_t)(p - s) + sn;
  }
}

static SrVal *m_str_split(SrInterp *I, SrArgs *a) {
  (void)I;
  if (a->n >= 1 && a->v[0]->kind == SR_V_STR)
    return str_list(a->self->str.s, a->self->str.n, a->v[0]->str.s, a->v[0]->str.n, 0);
  return str_list(a->self->str.s, a->self->str.n, NULL, 0, 0);
}

static SrVal *m_str_splitlines(SrInterp *I, SrArgs *a) {
  (void)I;
  return str_list(a->self->str.s, a->self->str.n, NULL, 0, 1);
}


static SrVal *m_str_startswith(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->v[0]->kind != SR_V_STR) return sr_raise(I, "TypeError", "startswith() takes a string");
  size_t n = a->v[0]->str.n;
  return sr_bool(a->self->str.n >= n && memcmp(a->self->str.s, a->v[0]->str.s, n) == 0);
}

static SrVal *m_str_endswith(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->v[0]->kind != SR_V_STR) return sr_raise(I, "TypeError", "endswith() takes a string");
  size_t n = a->v[0]->str.n, m = a->self->str.n;
  return sr_bool(m >= n && memcmp(a->self->str.s + m - n, a->v[0]->str.s, n) == 0);
}

static SrVal *m_str_replace(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->v[0]->kind != SR_V_STR || a->v[1]->kind != SR_V_STR)
    return sr_raise(I, "TypeError", "replace() takes two strings");
  SrVal *parts = str_list(a->self->str.s, a->self->str.n, a->v[0]->str.s, a->v[0]->str.n, 0);
  SrBuf b = SR_BUF_INIT;
  for (int i = 0; i < parts->seq.n; i++) {
    if (i) sr_buf_putn(&b, a->v[1]->str.s, a->v[1]->str.n);
    sr_buf_putn(&b, parts->seq.items[i]->str.s, parts->seq.items[i]->str.n);
  }
  sr_unref(parts);
  SrVal *r = sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

/* ASCII and the Latin-1 letters (U+00C0-U+00FE, encoded C3 80-BE) */
static SrVal *change_case(SrArgs *a, int up) {
  SrVal *r = sr_str(NULL, a->self->str.s, a->self->str.n);
  unsigned char *p = (unsigned char *)r->str.s;
  for (size_t i = 0; i < r->str.n; i++) {
    if (up && p[i] >= 'a' && p[i] <= 'z') p[i] = (unsigned char)(p[i] - 32);
    else if (!up && p[i] >= 'A' && p[i] <= 'Z') p[i] = (unsigned char)(p[i] + 32);
    else if (p[i] == 0xC3 && i + 1 < r->str.n) {
      unsigned char c = p[i + 1];
      if (up && c >= 0xA0 && c <= 0xBE && c != 0xB7) p[i + 1] = (unsigned char)(c - 0x20);
      else if (!up && c >= 0x80 && c <= 0x9E && c != 0x97) p[i + 1] = (unsigned char)(c + 0x20);
      i++;
    }
  }
  return r;
}

static SrVal *m_str_upper(SrInterp *I, SrArgs *a) { (void)I; return change_case(a, 1); }
static SrVal *m_str_lower(SrInterp *I, SrArgs *a) { (void)I; return change_case(a, 0); }

static SrVal *m_str_find(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->v[0]->kind != SR_V_STR) return sr_raise(I, "TypeError", "find() takes a string");
  const char *p = memmem(a->self->str.s, a->self->str.n, a->v[0]->str.s, a->v[0]->str.n);
  return sr_int(NULL, p ? (int64_t)(p - a->self->str.s) : -1);
}

static SrVal *m_str_format(SrInterp *I, SrArgs *a) { return sr_str_format(I, a->self, a); }

static SrVal *m_list_append(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "append() takes exactly one argument");
  sr_seq_push(NULL, a->self, sr_ref(a->v[0]));
  return sr_none();
}

static SrVal *m_list_extend(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "extend() takes exactly one argument");
  SrVal *items = sr_iterate(I, a->v[0]);
  if (!items) return NULL;
  for (int i = 0; i < items->seq.n; i++) sr_seq_push(NULL, a->self, sr_ref(items->seq.items[i]));
  sr_unref(items);
  return sr_none();
}

static SrVal *m_list_pop(SrInterp *I, SrArgs *a) {
  SrVal *l = a->self;
  if (l->seq.n == 0) return sr_raise(I, "IndexError", "pop from empty list");
  int64_t i = l->seq.n - 1;
  if (a->n == 1 && sr_index(I, a->v[0], l->seq.n, &i) < 0) return NULL;
  SrVal *v = l->seq.items[i];
  memmove(l->seq.items + i, l->seq.items + i + 1, (size_t)(l->seq.n - i - 1) * sizeof(SrVal *));
  l->seq.n--;
  return v;
}

static SrVal *m_list_insert(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "insert() takes exactly two arguments");
  int64_t i;
  if (sr_as_int(I, a->v[0], "index", &i) < 0) return NULL;
  SrVal *l = a->self;
  if (i < 0) i += l->seq.n;
  if (i < 0) i = 0;
  if (i > l->seq.n) i = l->seq.n;
  sr_seq_push(NULL, l, sr_none());
  memmove(l->seq.items + i + 1, l->seq.items + i, (size_t)(l->seq.n - 1 - i) * sizeof(SrVal *));
  l->seq.items[i] = sr_ref(a->v[1]);
  return sr_none();
}

static SrVal *m_seq_index(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "index() takes exactly one argument");
  for (int i = 0; i < a->self->seq.n; i++)
    if (sr_val_equal(a->self->seq.items[i], a->v[0])) return sr_int(NULL, i);
  return sr_raise(I, "ValueError", "value is not in the sequence");
}

static SrVal *m_seq_count(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "count() takes exactly one argument");
  int64_t c = 0;
  for (int i = 0; i < a->self->seq.n; i++) c += sr_val_equal(a->self->seq.items[i], a->v[0]);
  return sr_int(NULL, c);
}

static SrVal *m_dict_items(SrInterp *I, SrArgs *a) {
  (void)I;
  SrVal *d = a->self, *l = sr_seq(NULL, SR_V_LIST, d->dict.n);
  for (int i = 0; i < d->dict.n; i++) {
    SrVal *kv[2] = {sr_ref(d->dict.keys[i]), sr_ref(d->dict.vals[i])};
    sr_seq_push(NULL, l, sr_tuple(NULL, 2, kv));
  }
  return l;
}

static SrVal *m_dict_keys(SrInterp *I, SrArgs *a) { return sr_iterate(I, a->self); }

static SrVal *m_dict_values(SrInterp *I, SrArgs *a) {
  (void)I;
  SrVal *d = a->self, *l = sr_seq(NULL, SR_V_LIST, d->dict.n);
  for (int i = 0; i < d->dict.n; i++) sr_seq_push(NULL, l, sr_ref(d->dict.vals[i]));
  return l;
}

static SrVal *m_dict_get(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->n > 2) return sr_raise(I, "TypeError", "get() takes one or two arguments");
  SrVal *v = sr_dict_get(a->self, a->v[0]);
  return sr_ref(v ? v : a->n == 2 ? a->v[1] : sr_none());
}

static SrVal *m_dict_update(SrInterp *I, SrArgs *a) {
  if (a->n == 1 && a->v[0]->kind == SR_V_DICT)
    for (int i = 0; i < a->v[0]->dict.n; i++)
      sr_dict_set(NULL, a->self, sr_ref(a->v[0]->dict.keys[i]), sr_ref(a->v[0]->dict.vals[i]));
  for (int i = 0; i < a->nkw; i++) sr_dict_set(NULL, a->self, sr_str_cstr(NULL, a->kw[i]), sr_ref(a->kwv[i]));
  (void)I;
  return sr_none();
}

static SrVal *m_set_add(SrInterp *I, SrArgs *a) {
  (void)I;
  if (a->n != 1) return sr_raise(I, "TypeError", "add() takes exactly one argument");
  for (int i = 0; i < a->self->seq.n; i++)
    if (sr_val_equal(a->self->seq.items[i], a->v[0])) return sr_none();
  sr_seq_push(NULL, a->self, sr_ref(a->v[0]));
  return sr_none();
}

static SrVal *m_list_remove(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "remove() takes exactly one argument");
  SrVal *l = a->self;
  for (int i = 0; i < l->seq.n; i++)
    if (sr_val_equal(l->seq.items[i], a->v[0])) {
      sr_unref(l->seq.items[i]);
      memmove(l->seq.items + i, l->seq.items + i + 1, (size_t)(l->seq.n - i - 1) * sizeof(SrVal *));
      l->seq.n--;
      return sr_none();
    }
  return sr_raise(I, "ValueError", "list.remove(x): x not in list");
}

static SrVal *m_list_sort(SrInterp *I, SrArgs *a) {
  SrVal *fn = sr_lookup_qualname("builtins.sorted");
  SrVal *argv[1] = {a->self};
  SrArgs sa = {1, argv, a->nkw, a->kw, a->kwv, NULL};
  SrVal *sorted = sr_call(I, fn, &sa);
  if (!sorted) return NULL;
  for (int i = 0; i < a->self->seq.n; i++) {
    sr_unref(a->self->seq.items[i]);
    a->self->seq.items[i] = sr_ref(sorted->seq.items[i]);
  }
  sr_unref(sorted);
  return sr_none();
}

static SrVal *m_list_reverse(SrInterp *I, SrArgs *a) {
  (void)I;
  SrVal *l = a->self;
  for (int i = 0, j = l->seq.n - 1; i < j; i++, j--) {
    SrVal *t = l->seq.items[i];
    l->seq.items[i] = l->seq.items[j];
    l->seq.items[j] = t;
  }
  return sr_none();
}

static SrVal *m_clear(SrInterp *I, SrArgs *a) {
  (void)I;
  SrVal *l = a->self;
  if (l->kind == SR_V_DICT) {
    for (int i = 0; i < l->dict.n; i++) {
      sr_unref(l->dict.keys[i]);
      sr_unref(l->dict.vals[i]);
    }
    l->dict.n = 0;
  } else {
    for (int i = 0; i < l->seq.n; i++) sr_unref(l->seq.items[i]);
    l->seq.n = 0;
  }
  return sr_none();
}

static SrVal *m_copy(SrInterp *I, SrArgs *a) {
  SrVal *v = a->self;
  if (v->kind == SR_V_DICT) {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < v->dict.n; i++) sr_dict_set(NULL, d, sr_ref(v->dict.keys[i]), sr_ref(v->dict.vals[i]));
    return d;
  }
  SrVal *items = sr_iterate(I, v);
  if (items) items->kind = v->kind;
  return items;
}

static SrVal *m_dict_pop(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->n > 2) return sr_raise(I, "TypeError", "pop expected 1 or 2 arguments");
  SrVal *d = a->self;
  for (int i = 0; i < d->dict.n; i++)
    if (sr_val_equal(d->dict.keys[i], a->v[0])) {
      SrVal *v = d->dict.vals[i];
      sr_unref(d->dict.keys[i]);
      memmove(d->dict.keys + i, d->dict.keys + i + 1, (size_t)(d->dict.n - i - 1) * sizeof(SrVal *));
      memmove(d->dict.vals + i, d->dict.vals + i + 1, (size_t)(d->dict.n - i - 1) * sizeof(SrVal *));
      d->dict.n--;
      return v;
    }
  if (a->n == 2) return sr_ref(a->v[1]);
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, a->v[0]);
  sr_raise(I, "KeyError", "%s", b.p);
  sr_buf_free(&b);
  return NULL;
}

static SrVal *m_dict_setdefault(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->n > 2) return sr_raise(I, "TypeError", "setdefault expected 1 or 2 arguments");
  SrVal *v = sr_dict_get(a->self, a->v[0]);
  if (v) return sr_ref(v);
  SrVal *dflt = a->n == 2 ? a->v[1] : sr_none();
  sr_dict_set(NULL, a->self, sr_ref(a->v[0]), sr_ref(dflt));
  return sr_ref(dflt);
}

static SrVal *str_strip_side(SrArgs *a, int left, int right) {
  const char *s = a->self->str.s;
  const char *chars = a->n >= 1 && a->v[0]->kind == SR_V_STR ? a->v[0]->str.s : " \t\n\r\f\v";
  size_t nc = a->n >= 1 && a->v[0]->kind == SR_V_STR ? a->v[0]->str.n : 6;
  size_t st = 0, e = a->self->str.n;
  while (left && st < e && memchr(chars, s[st], nc)) st++;
  while (right && e > st && memchr(chars, s[e - 1], nc)) e--;
  return sr_str(NULL, s + st, e - st);
}

static SrVal *m_str_strip2(SrInterp *I, SrArgs *a) { (void)I; return str_strip_side(a, 1, 1); }
static SrVal *m_str_lstrip(SrInterp *I, SrArgs *a) { (void)I; return str_strip_side(a, 1, 0); }
static SrVal *m_str_rstrip(SrInterp *I, SrArgs *a) { (void)I; return str_strip_side(a, 0, 1); }

static SrVal *m_str_rsplit(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->v[0]->kind != SR_V_STR) return m_str_split(I, a);
  int64_t max = -1;
  if (a->n == 2 && sr_as_int(I, a->v[1], "maxsplit", &max) < 0) return NULL;
  const char *s = a->self->str.s, *sep = a->v[0]->str.s;
  size_t n = a->self->str.n, sn = a->v[0]->str.n;
  SrVal *parts = sr_seq(NULL, SR_V_LIST, 0);
  size_t end = n;
  while (max != 0 && sn && end >= sn) {
    size_t k = end - sn + 1;
    int found = 0;
    while (k-- > 0)
      if (memcmp(s + k, sep, sn) == 0) {
        found = 1;
        break;
      }
    if (!found) break;
    sr_seq_push(NULL, parts, sr_str(NULL, s + k + sn, end - k - sn));
    end = k;
    if (max > 0) max--;
  }
  sr_seq_push(NULL, parts, sr_str(NULL, s, end));
  SrArgs ra = {0, NULL, 0, NULL, NULL, parts};
  m_list_reverse(I, &ra);
  return parts;
}

static SrVal *m_str_partition(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->v[0]->kind != SR_V_STR) return sr_raise(I, "TypeError", "partition() takes a string");
  const char *s = a->self->str.s;
  size_t n = a->self->str.n;
  const char *p = memmem(s, n, a->v[0]->str.s, a->v[0]->str.n);
  SrVal *t[3];
  if (!p) {
    t[0] = sr_str(NULL, s, n);
    t[1] = sr_str(NULL, "", 0);
    t[2] = sr_str(NULL, "", 0);
  } else {
    t[0] = sr_str(NULL, s, (size_t)(p - s));
    t[1] = sr_ref(a->v[0]);
    size_t after = (size_t)(p - s) + a->v[0]->str.n;
    t[2] = sr_str(NULL, s + after, n - after);
  }
  return sr_tuple(NULL, 3, t);
}

static SrVal *m_str_title(SrInterp *I, SrArgs *a) {
  (void)I;
  SrVal *r = sr_str(NULL, a->self->str.s, a->self->str.n);
  char *p = (char *)r->str.s;
  int prev_alpha = 0;
  for (size_t i = 0; i < r->str.n; i++) {
    int al = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z');
    if (al && !prev_alpha && p[i] >= 'a') p[i] = (char)(p[i] - 32);
    else if (al && prev_alpha && p[i] <= 'Z') p[i] = (char)(p[i] + 32);
    prev_alpha = al;
  }
  return r;
}

static SrVal *str_all(SrArgs *a, int (*pred)(int)) {
  if (!a->self->str.n) return sr_bool(0);
  for (size_t i = 0; i < a->self->str.n; i++)
    if (!pred((unsigned char)a->self->str.s[i])) return sr_bool(0);
  return sr_bool(1);
}
static int is_digit_c(int c) { return c >= '0' && c <= '9'; }
static int is_alpha_c(int c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }
static SrVal *m_str_isdigit(SrInterp *I, SrArgs *a) { (void)I; return str_all(a, is_digit_c); }
static SrVal *m_str_isalpha(SrInterp *I, SrArgs *a) { (void)I; return str_all(a, is_alpha_c); }

static SrVal *m_str_index(SrInterp *I, SrArgs *a) {
  SrVal *r = m_str_find(I, a);
  if (r && r->i < 0) {
    sr_unref(r);
    return sr_raise(I, "ValueError", "substring not found");
  }
  return r;
}

static SrVal *m_str_zfill(SrInterp *I, SrArgs *a) {
  int64_t w;
  if (a->n != 1 || sr_as_int(I, a->v[0], "width", &w) < 0) return NULL;
  SrBuf b = SR_BUF_INIT;
  const char *s = a->self->str.s;
  size_t n = a->self->str.n;
  size_t sign = n && (s[0] == '-' || s[0] == '+');
  if ((int64_t)n < w && sr_check_mem(I, (uint64_t)w, 1) < 0) return NULL;
  sr_buf_putn(&b, s, sign);
  if ((int64_t)n < w) sr_buf_fill(&b, '0', (size_t)(w - (int64_t)n));
  sr_buf_putn(&b, s + sign, n - sign);
  SrVal *r = sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

static SrVal *m_str_center(SrInterp *I, SrArgs *a) {
  int64_t w;
  if (a->n < 1 || sr_as_int(I, a->v[0], "width", &w) < 0) return NULL;
  char fill = a->n == 2 && a->v[1]->kind == SR_V_STR && a->v[1]->str.n == 1 ? a->v[1]->str.s[0] : ' ';
  size_t n = a->self->str.n;
  if ((int64_t)n >= w) return sr_ref(a->self);
  if (sr_check_mem(I, (uint64_t)w, 1) < 0) return NULL;
  size_t pad = (size_t)w - n, left = pad / 2 + (pad & (size_t)w & 1);
  SrBuf b = SR_BUF_INIT;
  sr_buf_fill(&b, fill, left);
  sr_buf_putn(&b, a->self->str.s, n);
  sr_buf_fill(&b, fill, pad - left);
  SrVal *r = sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

static SrVal *set_binop(SrInterp *I, SrArgs *a, int op) {
  if (a->n != 1) return sr_raise(I, "TypeError", "set operation takes one argument");
  SrVal *other = sr_iterate(I, a->v[0]);
  if (!other) return NULL;
  other->kind = SR_V_SET;
  SrVal *r = sr_binop(I, op, a->self, other);
  sr_unref(other);
  return r;
}
static SrVal *m_set_union(SrInterp *I, SrArgs *a) { return set_binop(I, a, SR_OP_BITOR); }
static SrVal *m_set_intersection(SrInterp *I, SrArgs *a) { return set_binop(I, a, SR_OP_BITAND); }
static SrVal *m_set_difference(SrInterp *I, SrArgs *a) { return set_binop(I, a, SR_OP_SUB); }

static SrVal *m_set_issubset(SrInterp *I, SrArgs *a) {
  SrVal *inter = set_binop(I, a, SR_OP_BITAND);
  if (!inter) return NULL;
  int r = inter->seq.n == a->self->seq.n;
  sr_unref(inter);
  return sr_bool(r);
}

static SrVal *m_set_discard(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "discard() takes exactly one argument");
  SrVal *l = a->self;
  for (int i = 0; i < l->seq.n; i++)
    if (sr_val_equal(l->seq.items[i], a->v[0])) {
      sr_unref(l->seq.items[i]);
      memmove(l->seq.items + i, l->seq.items + i + 1, (size_t)(l->seq.n - i - 1) * sizeof(SrVal *));
      l->seq.n--;
      return sr_none();
    }
  return sr_none();
}

static SrVal *m_set_update(SrInterp *I, SrArgs *a) {
  for (int k = 0; k < a->n; k++) {
    SrVal *items = sr_iterate(I, a->v[k]);
    if (!items) return NULL;
    for (int i = 0; i < items->seq.n; i++) {
      SrArgs one = {1, &items->seq.items[i], 0, NULL, NULL, a->self};
      sr_unref(m_set_add(I, &one));
    }
    sr_unref(items);
  }
  return sr_none();
}

typedef struct Method {
  int kind;
  const char *name;
  SrBuiltinFn fn;
} Method;

static const Method methods[] = {
  {SR_V_STR, "join", m_str_join}, {SR_V_STR, "count", m_str_count},
  {SR_V_STR, "split", m_str_split}, {SR_V_STR, "splitlines", m_str_splitlines},
  {SR_V_STR, "strip", m_str_strip2}, {SR_V_STR, "startswith", m_str_startswith},
  {SR_V_STR, "endswith", m_str_endswith}, {SR_V_STR, "replace", m_str_replace},
  {SR_V_STR, "upper", m_str_upper}, {SR_V_STR, "lower", m_str_lower},
  {SR_V_STR, "find", m_str_find}, {SR_V_STR, "format", m_str_format},
  {SR_V_LIST, "append", m_list_append}, {SR_V_LIST, "extend", m_list_extend},
  {SR_V_LIST, "pop", m_list_pop}, {SR_V_LIST, "insert", m_list_insert},
  {SR_V_LIST, "index", m_seq_index}, {SR_V_LIST, "count", m_seq_count},
  {SR_V_TUPLE, "index", m_seq_index}, {SR_V_TUPLE, "count", m_seq_count},
  {SR_V_DICT, "items", m_dict_items}, {SR_V_DICT, "keys", m_dict_keys},
  {SR_V_DICT, "values", m_dict_values}, {SR_V_DICT, "get", m_dict_get},
  {SR_V_DICT, "update", m_dict_update}, {SR_V_SET, "add", m_set_add},
  {SR_V_LIST, "remove", m_list_remove}, {SR_V_LIST, "sort", m_list_sort},
  {SR_V_LIST, "reverse", m_list_reverse}, {SR_V_LIST, "clear", m_clear}, {SR_V_LIST, "copy", m_copy},
  {SR_V_DICT, "pop", m_dict_pop}, {SR_V_DICT, "setdefault", m_dict_setdefault},
  {SR_V_DICT, "clear", m_clear}, {SR_V_DICT, "copy", m_copy},
  {SR_V_STR, "lstrip", m_str_lstrip}, {SR_V_STR, "rstrip", m_str_rstrip},
  {SR_V_STR, "rsplit", m_str_rsplit}, {SR_V_STR, "partition", m_str_partition},
  {SR_V_STR, "title", m_str_title}, {SR_V_STR, "isdigit", m_str_isdigit},
  {SR_V_STR, "isalpha", m_str_isalpha}, {SR_V_STR, "index", m_str_index},
  {SR_V_STR, "zfill", m_str_zfill}, {SR_V_STR, "center", m_str_center},
  {SR_V_SET, "union", m_set_union}, {SR_V_SET, "intersection", m_set_intersection},
  {SR_V_SET, "difference", m_set_difference}, {SR_V_SET, "issubset", m_set_issubset},
  {SR_V_SET, "discard", m_set_discard}, {SR_V_SET, "remove", m_set_discard},
  {SR_V_SET, "update", m_set_update}, {SR_V_SET, "copy", m_copy}, {SR_V_SET, "clear", m_clear},
  {SR_V_FROZENSET, "union", m_set_union}, {SR_V_FROZENSET, "intersection", m_set_intersection},
  {SR_V_FROZENSET, "issubset", m_set_issubset},
  {0, NULL, NULL},
};

SrVal *sr_getattr(SrInterp *I, SrVal *obj, const char *name) {
  SrVal *r = NULL;
  const SrLangOps *ops = sr_ops(obj);
  if (ops && ops->getattr) {
    r = ops->getattr(I, obj, name);
    if (r || I->exc) return r;
  }
  if (kind_getattr[obj->kind]) {
    r = kind_getattr[obj->kind](I, obj, name);
    if (r || I->exc) return r;
  }
  for (const Method *m = methods; m->name; m++)
    if (m->kind == obj->kind && strcmp(m->name, name) == 0) return sr_bound_method(obj, name, m->fn);
  if ((obj->kind == SR_V_FLOAT || obj->kind == SR_V_INT) && strcmp(name, "real") == 0) return sr_ref(obj);
  if (obj->kind == SR_V_COMPLEX && strcmp(name, "real") == 0) return sr_float(NULL, obj->c.re);
  if (obj->kind == SR_V_COMPLEX && strcmp(name, "imag") == 0) return sr_float(NULL, obj->c.im);
  r = sr_generic_getattr(I, obj, name);
  if (r || I->exc) return r;
  if (sr_is_obj(obj, &sr_module_class)) {
    /* a name the module removed after deprecating it (deprecations.py's
       deprecation_getattr with no function): its message, registered as
       the string MODULE.__removed__.NAME */
    char q[512];
    snprintf(q, sizeof q, "%s.__removed__.%s", (const char *)obj->obj.data, name);
    SrVal *msg = sr_lookup_qualname(q);
    if (msg && msg->kind == SR_V_STR) return sr_raise(I, "AttributeError", "%s", msg->str.s);
    return sr_raise(I, "AttributeError", "module '%s' has no attribute '%s'",
                    (const char *)obj->obj.data, name);
  }
  return sr_raise(I, "AttributeError", "'%s' object has no attribute '%s'", sr_val_kind_name(obj), name);
}

void sr_kind_attr_names(const SrVal *v, SrDirAdd add, void *ctx) {
  for (const Method *m = methods; m->name; m++)
    if (m->kind == v->kind) add(m->name, ctx);
  if (v->kind == SR_V_FLOAT || v->kind == SR_V_INT || v->kind == SR_V_COMPLEX) add("real", ctx);
  if (v->kind == SR_V_COMPLEX) add("imag", ctx), add("conjugate", ctx);
}

int sr_setattr(SrInterp *I, SrVal *obj, const char *name, SrVal *v) {
  const SrLangOps *ops = sr_ops(obj);
  if (ops && ops->setattr) return ops->setattr(I, obj, name, v);
  sr_raise(I, "AttributeError", "'%s' object attribute '%s' is read-only", sr_val_kind_name(obj), name);
  return -1;
}

/* ---- operators ---- */

static int is_num(const SrVal *v) {
  return v->kind == SR_V_INT || v->kind == SR_V_BOOL || v->kind == SR_V_FLOAT || v->kind == SR_V_COMPLEX;
}

static double num_f(const SrVal *v) { return v->kind == SR_V_FLOAT ? v->f : (double)v->i; }

static const char *op_symbol(int op) {
  switch (op) {
  case SR_OP_ADD: return "+";
  case SR_OP_SUB: return "-";
  case SR_OP_MUL: return "*";
  case SR_OP_DIV: return "/";
  case SR_OP_FLOORDIV: return "//";
  case SR_OP_MOD: return "%";
  case SR_OP_POW: return "** or pow()";
  case SR_OP_MATMUL: return "@";
  case SR_OP_LSHIFT: return "<<";
  case SR_OP_RSHIFT: return ">>";
  case SR_OP_BITAND: return "&";
  case SR_OP_BITOR: return "|";
  case SR_OP_BITXOR: return "^";
  case SR_OP_LT: return "<";
  case SR_OP_LE: return "<=";
  case SR_OP_GT: return ">";
  case SR_OP_GE: return ">=";
  default: return "?";
  }
}

static SrVal *int_overflow(SrInterp *I) {
  return sr_raise(I, "OverflowError", "integer overflow: shardrepl's Python ints are 64-bit");
}

/* x ** y for y >= 0. Only 0, 1 and -1 have powers that fit in 64 bits for
   every y, so they are answered directly; any other base overflows within
   64 multiplications, so the loop is short however large y is. */
static SrVal *int_pow(SrInterp *I, int64_t x, int64_t y) {
  if (x == 0) return sr_int(NULL, y == 0);
  if (x == 1) return sr_int(NULL, 1);
  if (x == -1) return sr_int(NULL, y & 1 ? -1 : 1);
  int64_t r = 1;
  for (int64_t k = 0; k < y; k++)
    if (__builtin_mul_overflow(r, x, &r)) return int_overflow(I);
  return sr_int(NULL, r);
}

static SrVal *num_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  if (a->kind == SR_V_COMPLEX || b->kind == SR_V_COMPLEX) {
    double ar = a->kind == SR_V_COMPLEX ? a->c.re : num_f(a), ai = a->kind == SR_V_COMPLEX ? a->c.im : 0;
    double br = b->kind == SR_V_COMPLEX ? b->c.re : num_f(b), bi = b->kind == SR_V_COMPLEX ? b->c.im : 0;
    switch (op) {
    case SR_OP_ADD: return sr_complex(NULL, ar + br, ai + bi);
    case SR_OP_SUB: return sr_complex(NULL, ar - br, ai - bi);
    case SR_OP_MUL: return sr_complex(NULL, ar * br - ai * bi, ar * bi + ai * br);
    case SR_OP_DIV: {
      double d = br * br + bi * bi;
      if (d == 0) return sr_raise(I, "ZeroDivisionError", "complex division by zero");
      return sr_complex(NULL, (ar * br + ai * bi) / d, (ai * br - ar * bi) / d);
    }
    case SR_OP_EQ: return sr_bool(ar == br && ai == bi);
    case SR_OP_NE: return sr_bool(ar != br || ai != bi);
    case SR_OP_POW: {
      double pr, pi;
      if (bi == 0 && br == floor(br) && fabs(br) <= 64) {
        /* integer powers by repeated multiplication, as CPython */
        pr = 1, pi = 0;
        for (int k = 0; k < (int)fabs(br); k++) {
          double t = pr * ar - pi * ai;
          pi = pr * ai + pi * ar;
          pr = t;
        }
        if (br < 0) {
          double d = pr * pr + pi * pi;
          if (d == 0) return sr_raise(I, "ZeroDivisionError", "zero to a negative power");
          pr = pr / d;
          pi = -pi / d;
        }
      } else if (ar == 0 && ai == 0) {
        pr = pi = 0;
      } else {
        /* z**w = exp(w log z) */
        double lr = log(hypot(ar, ai)), th = atan2(ai, ar);
        double er = br * lr - bi * th, ei = br * th + bi * lr;
        pr = exp(er) * cos(ei);
        pi = exp(er) * sin(ei);
      }
      return sr_complex(NULL, pr, pi);
    }
    default: return NULL;
    }
  }
  int ints = a->kind != SR_V_FLOAT && b->kind != SR_V_FLOAT;
  if (ints) {
    int64_t x = a->i, y = b->i, r;
    switch (op) {
    case SR_OP_ADD:
      if (__builtin_add_overflow(x, y, &r)) return int_overflow(I);
      return sr_int(NULL, r);
    case SR_OP_SUB:
      if (__builtin_sub_overflow(x, y, &r)) return int_overflow(I);
      return sr_int(NULL, r);
    case SR_OP_MUL:
      if (__builtin_mul_overflow(x, y, &r)) return int_overflow(I);
      return sr_int(NULL, r);
    case SR_OP_DIV:
      if (y == 0) return sr_raise(I, "ZeroDivisionError", "division by zero");
      return sr_float(NULL, (double)x / (double)y);
    case SR_OP_FLOORDIV:
    case SR_OP_MOD: {
      if (y == 0) return sr_raise(I, "ZeroDivisionError", "integer division or modulo by zero");
      /* INT64_MIN / -1 traps in C; its quotient does not fit, its
         remainder is 0 */
      if (y == -1) {
        if (op == SR_OP_MOD) return sr_int(NULL, 0);
        if (x == INT64_MIN) return int_overflow(I);
      }
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        q--;
        m += y;
      }
      return sr_int(NULL, op == SR_OP_FLOORDIV ? q : m);
    }
    case SR_OP_POW:
      if (y < 0) return sr_float(NULL, pow((double)x, (double)y));
      return int_pow(I, x, y);
    case SR_OP_LSHIFT:
      if (y < 0) return sr_raise(I, "ValueError", "negative shift count");
      if (x == 0) return sr_int(NULL, 0);
      /* the shift overflows unless shifting back gives x again */
      if (y >= 64 || (int64_t)((uint64_t)x << y) >> y != x) return int_overflow(I);
      return sr_int(NULL, (int64_t)((uint64_t)x << y));
    case SR_OP_RSHIFT:
      if (y < 0) return sr_raise(I, "ValueError", "negative shift count");
      return sr_int(NULL, y >= 64 ? (x < 0 ? -1 : 0) : x >> y);
    case SR_OP_BITAND: return a->kind == SR_V_BOOL && b->kind == SR_V_BOOL ? sr_bool((int)(x & y)) : sr_int(NULL, x & y);
    case SR_OP_BITOR: return a->kind == SR_V_BOOL && b->kind == SR_V_BOOL ? sr_bool((int)(x | y)) : sr_int(NULL, x | y);
    case SR_OP_BITXOR: return a->kind == SR_V_BOOL && b->kind == SR_V_BOOL ? sr_bool((int)(x ^ y)) : sr_int(NULL, x ^ y);
    case SR_OP_EQ: return sr_bool(x == y);
    case SR_OP_NE: return sr_bool(x != y);
    case SR_OP_LT: return sr_bool(x < y);
    case SR_OP_LE: return sr_bool(x <= y);
    case SR_OP_GT: return sr_bool(x > y);
    case SR_OP_GE: return sr_bool(x >= y);
    default: return NULL;
    }
  }
  double x = num_f(a), y = num_f(b);
  switch (op) {
  case SR_OP_ADD: return sr_float(NULL, x + y);
  case SR_OP_SUB: return sr_float(NULL, x - y);
  case SR_OP_MUL: return sr_float(NULL, x * y);
  case SR_OP_DIV:
    if (y == 0) return sr_raise(I, "ZeroDivisionError", "float division by zero");
    return sr_float(NULL, x / y);
  case SR_OP_FLOORDIV:
    if (y == 0) return sr_raise(I, "ZeroDivisionError", "float floor division by zero");
    return sr_float(NULL, floor(x / y));
  case SR_OP_MOD: {
    if (y == 0) return sr_raise(I, "ZeroDivisionError", "float modulo");
    double r = fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return sr_float(NULL, r);
  }
  case SR_OP_POW: return sr_float(NULL, pow(x, y));
  case SR_OP_EQ: return sr_bool(x == y);
  case SR_OP_NE: return sr_bool(x != y);
  case SR_OP_LT: return sr_bool(x < y);
  case SR_OP_LE: return sr_bool(x <= y);
  case SR_OP_GT: return sr_bool(x > y);
  case SR_OP_GE: return sr_bool(x >= y);
  default: return NULL;
  }
}

/* <, <= ... on sequences and strings: lexicographic */
static int seq_cmp(SrInterp *I, SrVal *a, SrVal *b, int *out);

static int val_cmp(SrInterp *I, SrVal *a, SrVal *b, int *out) {
  if (is_num(a) && is_num(b) && a->kind != SR_V_COMPLEX && b->kind != SR_V_COMPLEX) {
    double x = num_f(a), y = num_f(b);
    if (a->kind != SR_V_FLOAT && b->kind != SR_V_FLOAT) *out = (a->i > b->i) - (a->i < b->i);
    else *out = (x > y) - (x < y);
    return 0;
  }
  if (a->kind == SR_V_STR && b->kind == SR_V_STR) {
    size_t n = a->str.n < b->str.n ? a->str.n : b->str.n;
    int c = memcmp(a->str.s, b->str.s, n);
    *out = c ? (c > 0) - (c < 0) : (a->str.n > b->str.n) - (a->str.n < b->str.n);
    return 0;
  }
  if ((a->kind == SR_V_TUPLE || a->kind == SR_V_LIST) && a->kind == b->kind) return seq_cmp(I, a, b, out);
  return -1;
}

static int seq_cmp(SrInterp *I, SrVal *a, SrVal *b, int *out) {
  int n = a->seq.n < b->seq.n ? a->seq.n : b->seq.n;
  for (int i = 0; i < n; i++) {
    if (sr_val_equal(a->seq.items[i], b->seq.items[i])) continue;
    return val_cmp(I, a->seq.items[i], b->seq.items[i], out);
  }
  *out = (a->seq.n > b->seq.n) - (a->seq.n < b->seq.n);
  return 0;
}

static SrVal *contains(SrInterp *I, SrVal *item, SrVal *c) {
  if (c->kind == SR_V_STR) {
    if (item->kind != SR_V_STR) return sr_raise(I, "TypeError", "'in <string>' requires string as left operand");
    return sr_bool(memmem(c->str.s, c->str.n, item->str.s, item->str.n) != NULL);
  }
  if (c->kind == SR_V_DICT) return sr_bool(sr_dict_get(c, item) != NULL);
  int cin = sr_class_contains(I, item, c);
  if (cin != -2) return cin < 0 ? NULL : sr_bool(cin);
  const SrRange *r = sr_as_range(c);
  if (r) {
    int in = sr_range_contains(I, r, item);
    return in < 0 ? NULL : sr_bool(in);
  }
  SrVal *items = sr_iterate(I, c);
  if (!items) return NULL;
  int found = 0;
  for (int i = 0; i < items->seq.n && !found; i++) found = sr_val_equal(items->seq.items[i], item);
  sr_unref(items);
  return sr_bool(found);
}

static SrVal *seq_concat(SrVal *a, SrVal *b) {
  SrVal *r = sr_seq(NULL, a->kind, a->seq.n + b->seq.n);
  for (int i = 0; i < a->seq.n; i++) sr_seq_push(NULL, r, sr_ref(a->seq.items[i]));
  for (int i = 0; i < b->seq.n; i++) sr_seq_push(NULL, r, sr_ref(b->seq.items[i]));
  return r;
}

static SrVal *set_op(int op, SrVal *a, SrVal *b) {
  SrVal *r = sr_seq(NULL, a->kind, 0);
  if (op == SR_OP_BITOR) {
    for (int i = 0; i < a->seq.n; i++) sr_seq_push(NULL, r, sr_ref(a->seq.items[i]));
    for (int i = 0; i < b->seq.n; i++) {
      int dup = 0;
      for (int k = 0; k < a->seq.n && !dup; k++) dup = sr_val_equal(a->seq.items[k], b->seq.items[i]);
      if (!dup) sr_seq_push(NULL, r, sr_ref(b->seq.items[i]));
    }
    return r;
  }
  for (int i = 0; i < a->seq.n; i++) {
    int inb = 0;
    for (int k = 0; k < b->seq.n && !inb; k++) inb = sr_val_equal(a->seq.items[i], b->seq.items[k]);
    if ((op == SR_OP_BITAND && inb) || (op == SR_OP_SUB && !inb)) sr_seq_push(NULL, r, sr_ref(a->seq.items[i]));
  }
  return r;
}

int sr_check_mem(SrInterp *I, uint64_t count, uint64_t size) {
  uint64_t n;
  if (__builtin_mul_overflow(count, size, &n) || n > sr_mem_limit()) {
    sr_raise(I, "MemoryError", "%s", "");
    return -1;
  }
  /* a big block is asked for once here, so that an address-space limit
     (ulimit -v, a sanitizer's allocator) shows as MemoryError before the
     caller's allocation would abort */
  if (n >= ((uint64_t)64 << 20)) {
    void *p = malloc((size_t)n);
    if (!p) {
      sr_raise(I, "MemoryError", "%s", "");
      return -1;
    }
    free(p);
  }
  return 0;
}

/* Copies the n bytes at p k times into a new str by doubling (a few
   memcpys, polling Ctrl-C between them).  CPython's unicode_repeat:
   OverflowError past PY_SSIZE_T_MAX, MemoryError past what may be had. */
SrVal *sr_str_repeat(SrInterp *I, const char *p, size_t n, uint64_t k) {
  uint64_t total;
  if (__builtin_mul_overflow((uint64_t)n, k, &total) || total > INT64_MAX)
    return sr_raise(I, "OverflowError", "repeated string is too long");
  char *out = total < sr_mem_limit() ? sr_try_malloc((size_t)total + 1) : NULL;
  if (!out) return sr_raise(I, "MemoryError", "%s", "");
  size_t done = total ? n : 0;
  if (done) memcpy(out, p, n);
  while (done < total) {
    if (I->interrupted) {
      free(out);
      return sr_raise(I, "KeyboardInterrupt", "interrupted");
    }
    size_t m = done < total - done ? done : (size_t)(total - done);
    memcpy(out + done, out, m);
    done += m;
  }
  out[total] = 0;
  return sr_str_take(out, (size_t)total);
}

/* Python's list, tuple and dict ==: items compare with their own == and
   its truth value (an array's __eq__ gives an array, whose bool is asked
   for), after the identity shortcut; 1 equal, 0 not, -1 an exception. */
static int rich_equal(SrInterp *I, SrVal *a, SrVal *b, int depth) {
  if (a == b) return 1;
  if (depth > SR_VAL_MAX_NEST) return sr_raise(I, "RecursionError", "maximum recursion depth exceeded in comparison"), -1;
  if ((a->kind == SR_V_TUPLE || a->kind == SR_V_LIST) && a->kind == b->kind) {
    if (a->seq.n != b->seq.n) return 0;
    for (int i = 0; i < a->seq.n && i < b->seq.n; i++) {
      int e = rich_equal(I, a->seq.items[i], b->seq.items[i], depth + 1);
      if (e <= 0) return e;
    }
    return a->seq.n == b->seq.n;
  }
  if (a->kind == SR_V_DICT && b->kind == SR_V_DICT) {
    if (a->dict.n != b->dict.n) return 0;
    for (int i = 0; i < a->dict.n; i++) {
      SrVal *o = sr_dict_get(b, a->dict.keys[i]);
      if (!o) return 0;
      int e = rich_equal(I, a->dict.vals[i], o, depth + 1);
      if (e <= 0) return e;
    }
    return 1;
  }
  const SrLangOps *oa = sr_ops(a), *ob = sr_ops(b);
  if ((oa && oa->binop) || (ob && ob->binop)) {
    SrVal *r = sr_binop(I, SR_OP_EQ, a, b);
    if (!r) return -1;
    int t = sr_truthy(I, r);
    sr_unref(r);
    return t;
  }
  sr_val_too_deep();
  int eq = sr_val_equal(a, b);
  if (sr_val_too_deep()) return sr_raise(I, "RecursionError", "maximum recursion depth exceeded in comparison"), -1;
  return eq;
}

SrVal *sr_inplace_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  const SrLangOps *oa = sr_ops(a);
  if (oa && oa->inplace) {
    SrVal *r = oa->inplace(I, op, a, b);
    if (r || I->exc) return r;
  }
  if (a->kind == SR_V_LIST && a->rc > 0 && op == SR_OP_ADD) {
    /* list.__iadd__ is extend: any iterable */
    SrVal *items = sr_iterate(I, b);
    if (!items) return NULL;
    for (int i = 0; i < items->seq.n; i++) sr_seq_push(NULL, a, sr_ref(items->seq.items[i]));
    sr_unref(items);
    return sr_ref(a);
  }
  if (a->kind == SR_V_LIST && a->rc > 0 && op == SR_OP_MUL && (b->kind == SR_V_INT || b->kind == SR_V_BOOL)) {
    int n = a->seq.n;
    int64_t k = b->i;
    if (k <= 0) {
      for (int i = 0; i < n; i++) sr_unref(a->seq.items[i]);
      a->seq.n = 0;
    } else {
      for (int64_t j = 1; j < k; j++)
        for (int i = 0; i < n; i++) sr_seq_push(NULL, a, sr_ref(a->seq.items[i]));
    }
    return sr_ref(a);
  }
  return sr_binop(I, op, a, b);
}

/* `a is b`: one object; None and bools are singletons, and Meshes and
   PartitionSpecs are interned (mesh.py's and P's caches: equal ones are
   one object) */
static int same_object(const SrVal *a, const SrVal *b) {
  if (a == b) return 1;
  if (a->kind != b->kind) return 0;
  switch (a->kind) {
  case SR_V_NONE: return 1;
  case SR_V_BOOL: return a->i == b->i;
  case SR_V_MESH: return a->mesh == b->mesh;
  case SR_V_SPEC: return sr_val_equal(a, b);
  default: return 0;
  }
}


SrVal *sr_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  /* objects first (arrays), then the reflected operand */
  const SrLangOps *oa = sr_ops(a), *ob = sr_ops(b);
  if (op != SR_OP_IS && op != SR_OP_ISNOT && op != SR_OP_IN && op != SR_OP_NOTIN) {
    if (oa && oa->binop) {
      SrVal *r = oa->binop(I, op, a, b);
      if (r || I->exc) return r;
    }
    if (ob && ob->binop && ob != oa) {
      SrVal *r = ob->binop(I, op, a, b);
      if (r || I->exc) return r;
    }
  }
  switch (op) {
  case SR_OP_IS: return sr_bool(same_object(a, b));
  case SR_OP_ISNOT: return sr_bool(!same_object(a, b));
  case SR_OP_IN: return contains(I, a, b);
  case SR_OP_NOTIN: {
    SrVal *r = contains(I, a, b);
    if (!r) return NULL;
    int t = (int)r->i;
    sr_unref(r);
    return sr_bool(!t);
  }
  case SR_OP_EQ:
  case SR_OP_NE: {
    if (((a->kind == SR_V_TUPLE || a->kind == SR_V_LIST) && a->kind == b->kind) ||
        (a->kind == SR_V_DICT && b->kind == SR_V_DICT)) {
      int e = rich_equal(I, a, b, 0);
      if (e < 0) return NULL;
      return sr_bool(op == SR_OP_EQ ? e : !e);
    }
    sr_val_too_deep();
    int eq = sr_val_equal(a, b);
    if (sr_val_too_deep()) return sr_raise(I, "RecursionError", "maximum recursion depth exceeded in comparison");
    return sr_bool(op == SR_OP_EQ ? eq : !eq);
  }
  default: break;
  }
  if (is_num(a) && is_num(b)) {
    SrVal *r = num_binop(I, op, a, b);
    if (r || I->exc) return r;
  }
  if (op == SR_OP_MOD && a->kind == SR_V_STR) return sr_str_percent(I, a, b);
  if (op == SR_OP_LT || op == SR_OP_LE || op == SR_OP_GT || op == SR_OP_GE) {
    int c;
    if (val_cmp(I, a, b, &c) == 0)
      return sr_bool(op == SR_OP_LT ? c < 0 : op == SR_OP_LE ? c <= 0 : op == SR_OP_GT ? c > 0 : c >= 0);
  }
  if (op == SR_OP_ADD && a->kind == SR_V_STR && b->kind == SR_V_STR) {
    SrBuf s = SR_BUF_INIT;
    sr_buf_putn(&s, a->str.s, a->str.n);
    sr_buf_putn(&s, b->str.s, b->str.n);
    SrVal *r = sr_str(NULL, sr_buf_str(&s), s.len);
    sr_buf_free(&s);
    return r;
  }
  if (op == SR_OP_ADD && (a->kind == SR_V_TUPLE || a->kind == SR_V_LIST) && a->kind == b->kind)
    return seq_concat(a, b);
  if (op == SR_OP_MUL && ((a->kind == SR_V_INT && (b->kind == SR_V_LIST || b->kind == SR_V_TUPLE || b->kind == SR_V_STR)) ||
                          (b->kind == SR_V_INT && (a->kind == SR_V_LIST || a->kind == SR_V_TUPLE || a->kind == SR_V_STR)))) {
    SrVal *s = a->kind == SR_V_INT ? b : a;
    int64_t k = a->kind == SR_V_INT ? a->i : b->i;
    if (k < 0) k = 0;
    if (s->kind == SR_V_STR) return sr_str_repeat(I, s->str.s, s->str.n, (uint64_t)k);
    /* list_repeat / tuple_repeat: MemoryError past what a list holds */
    uint64_t total;
    if (__builtin_mul_overflow((uint64_t)s->seq.n, (uint64_t)k, &total) || total > INT_MAX ||
        sr_check_mem(I, total, sizeof(SrVal *)) < 0)
      return sr_raise(I, "MemoryError", "%s", "");
    SrVal *r = sr_seq(NULL, s->kind, (int)total);
    for (int64_t i = 0; i < k && s->seq.n; i++) {
      if (I->interrupted && (i & 1023) == 0) {
        sr_unref(r);
        return sr_raise(I, "KeyboardInterrupt", "interrupted");
      }
      for (int j = 0; j < s->seq.n; j++) sr_seq_push(NULL, r, sr_ref(s->seq.items[j]));
    }
    return r;
  }
  if ((op == SR_OP_BITOR || op == SR_OP_BITAND || op == SR_OP_SUB) &&
      (a->kind == SR_V_SET || a->kind == SR_V_FROZENSET) && (b->kind == SR_V_SET || b->kind == SR_V_FROZENSET))
    return set_op(op, a, b);
  if (op == SR_OP_LT || op == SR_OP_LE || op == SR_OP_GT || op == SR_OP_GE)
    return sr_raise(I, "TypeError", "'%s' not supported between instances of '%s' and '%s'", op_symbol(op),
                    sr_val_kind_name(a), sr_val_kind_name(b));
  /* PartitionSpec's __add__ / __radd__ (the jax layer defines them) */
  if (op == SR_OP_ADD && (a->kind == SR_V_SPEC || b->kind == SR_V_SPEC)) {
    SrVal *fn = sr_lookup_qualname(a->kind == SR_V_SPEC ? "jax.sharding.PartitionSpec.__add__"
                                                        : "jax.sharding.PartitionSpec.__radd__");
    SrVal *argv[2] = {a->kind == SR_V_SPEC ? a : b, a->kind == SR_V_SPEC ? b : a};
    SrArgs ca = {2, argv, 0, NULL, NULL, NULL};
    SrVal *r = fn ? sr_call(I, fn, &ca) : NULL;
    if (r || I->exc) return r;
  }
  return sr_raise(I, "TypeError", "unsupported operand type(s) for %s: '%s' and '%s'", op_symbol(op),
                  sr_val_kind_name(a), sr_val_kind_name(b));
}

SrVal *sr_unop(SrInterp *I, int op, SrVal *a) {
  const SrLangOps *ops = sr_ops(a);
  if (ops && ops->unop) {
    SrVal *r = ops->unop(I, op, a);
    if (r || I->exc) return r;
  }
  switch (a->kind) {
  case SR_V_INT:
  case SR_V_BOOL:
    if (op == SR_OP_NEG) return a->i == INT64_MIN ? int_overflow(I) : sr_int(NULL, -a->i);
    if (op == SR_OP_POS) return sr_int(NULL, a->i);
    if (op == SR_OP_INVERT) return sr_int(NULL, ~a->i);
    break;
  case SR_V_FLOAT:
    if (op == SR_OP_NEG) return sr_float(NULL, -a->f);
    if (op == SR_OP_POS) return sr_ref(a);
    break;
  case SR_V_COMPLEX:
    if (op == SR_OP_NEG) return sr_complex(NULL, -a->c.re, -a->c.im);
    if (op == SR_OP_POS) return sr_ref(a);
    break;
  default: break;
  }
  return sr_raise(I, "TypeError", "bad operand type for unary %s: '%s'",
                  op == SR_OP_NEG ? "-" : op == SR_OP_POS ? "+" : "~", sr_val_kind_name(a));
}

/* ---- context managers ---- */

static const SrContextOps *contexts[16];
static int ncontexts;

static int context_matches(const SrContextOps *c, const SrVal *m) {
  return c->cls ? m->kind == SR_V_OBJ && m->obj.cls == c->cls : m->kind == c->kind;
}

void sr_context_register(const SrContextOps *ops) {
  if (ncontexts < 16) contexts[ncontexts++] = ops;
}

SrVal *sr_context_enter(SrInterp *I, SrVal *m) {
  for (int i = 0; i < ncontexts; i++)
    if (context_matches(contexts[i], m)) return contexts[i]->enter(I, m);
  return sr_raise(I, "TypeError", "'%s' object does not support the context manager protocol",
                  sr_val_kind_name(m));
}

int sr_context_builtin(const SrVal *m) {
  for (int i = 0; i < ncontexts; i++)
    if (context_matches(contexts[i], m)) return 1;
  return 0;
}

void sr_context_exit(SrInterp *I, SrVal *m) {
  for (int i = 0; i < ncontexts; i++)
    if (context_matches(contexts[i], m)) contexts[i]->exit(I, m);
}

/* ---- initialisation ---- */

void sr_objects_init(void) {
  sr_val_equal_class(&sr_slice_class, slice_equal);
  static int done;
  if (done) return;
  done = 1;
  sr_exc_methods_init();
  int jax_errors = 0;
  for (int i = 0; exc_tree[i].name; i++) {
    char q[80];
    jax_errors |= strcmp(exc_tree[i].name, FIRST_JAX_ERRORS) == 0;
    snprintf(q, sizeof q, "%s.%s",
             strcmp(exc_tree[i].name, "TypePromotionError") == 0 ? "jax.dtypes" : jax_errors ? "jax.errors" : "builtins",
             exc_tree[i].name);
    sr_register(q, sr_obj(&sr_exctype_class, (void *)sr_intern_cstr(exc_tree[i].name)));
    if (jax_errors && exc_tree[i].name[0] == 'C') sr_register("jax.core.ConcretizationTypeError", sr_obj(&sr_exctype_class, (void *)sr_intern_cstr(exc_tree[i].name)));
  }
  sr_register("jax.errors", sr_module("jax.errors"));
  /* jax.errors re-exports these two */
  sr_register("jax.errors.JaxprTypeError", sr_obj(&sr_exctype_class, (void *)sr_intern_cstr("JaxprTypeError")));
  sr_register("jax.errors.JaxRuntimeError", sr_obj(&sr_exctype_class, (void *)sr_intern_cstr("JaxRuntimeError")));
  sr_register("jax._src.sharding.IndivisibleError", sr_obj(&sr_exctype_class, (void *)sr_intern_cstr("IndivisibleError")));
  sr_builtins_py_init();
}

/* class.c: Python's classes (class.h), after CPython's typeobject.c and
 * the library's typing.NamedTuple, collections.namedtuple and
 * dataclasses. */
#include "py/class.h"
#include "py/introspect.h"
#include "py/generator.h"
#include "py/range.h"
#include "py/enum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text/print_val.h"
#include "util/intern.h"

typedef struct SrPyClass {
  const char *name;     /* interned */
  SrVal *base;          /* the first base, a class object, or NULL: object */
  SrVal **bases;        /* the other bases (held), after base */
  int nbases;           /* how many: base and bases */
  const struct SrPyClass **mro; /* C3's linearization, this class first,
                                   object left out; borrowed (the bases
                                   hold them) */
  int nmro;
  SrVal *dict;          /* the namespace: str keys */
  /* a namedtuple's or a dataclass's fields, in order */
  int nfields;
  const char **fields;  /* interned */
  SrVal **defaults;     /* per field: its default, or NULL */
  SrVal **factories;    /* a dataclass's default_factory per field, or NULL */
  uint8_t *statics;     /* a dataclass's: field(metadata={'static': True}) per field */
  SrVal **fobjs;        /* a dataclass's: the field() object per field (held), or NULL */
  uint8_t namedtuple;   /* its instances are tuples with these fields */
  uint8_t nt_marker;    /* typing.NamedTuple itself */
  uint8_t dataclass, dc_init, dc_repr, dc_eq, frozen;
  uint8_t tree;         /* SR_TREE_* */
  SrVal *tree_a, *tree_b;
  SrVal *tree_keys;     /* flatten_with_keys, or NULL */
  SrVal *builtin;       /* a built-in base (int, float, str, tuple, list, dict), held, or NULL */
} SrPyClass;

typedef struct SrInstance {
  SrVal *cls;   /* its class object */
  SrVal *dict;  /* its attributes (NULL for a namedtuple) */
  SrVal *items; /* a namedtuple's: a tuple */
  SrVal *base;  /* an instance of a subclass of a built-in: its value (int(...), tuple(...)) */
} SrInstance;

static SrInterp *class_interp;

void sr_class_set_interp(SrInterp *I) { class_interp = I; }

int sr_class_repr_or_fail(SrBuf *out, const SrVal *v) {
  int pending = class_interp && class_interp->exc;
  size_t at = out->len;
  sr_val_repr(out, v);
  if (pending || !class_interp || !class_interp->exc) return 0;
  sr_exc_clear(class_interp);
  out->len = at;
  if (out->p) out->p[at] = 0;
  return -1;
}
void sr_class_forget_interp(SrInterp *I) {
  if (class_interp == I) class_interp = NULL;
}

static SrPyClass *pyclass(const SrVal *v) { return sr_is_obj(v, &sr_type_class) ? v->obj.data : NULL; }
static SrInstance *instance(const SrVal *v) { return sr_is_obj(v, &sr_instance_class) ? v->obj.data : NULL; }
static SrPyClass *class_of(const SrInstance *o) { return o->cls->obj.data; }
static SrPyClass *base_of(const SrPyClass *c) { return c->base ? c->base->obj.data : NULL; }
/* the built-in type a class derives from (class C(int)), or NULL */
static SrVal *builtin_base(const SrPyClass *c) {
  for (; c; c = base_of(c))
    if (c->builtin) return c->builtin;
  return NULL;
}

SrVal *sr_class_of(const SrVal *v) {
  const SrInstance *o = instance(v);
  return o ? o->cls : NULL;
}

/* d[name] for a dict of str keys (borrowed), or NULL */
static SrVal *dget(const SrVal *d, const char *name) {
  if (!d) return NULL;
  size_t n = strlen(name);
  for (int i = 0; i < d->dict.n; i++) {
    const SrVal *k = d->dict.keys[i];
    if (k->kind == SR_V_STR && k->str.n == n && memcmp(k->str.s, name, n) == 0) return d->dict.vals[i];
  }
  return NULL;
}

static void dset(SrVal *d, const char *name, SrVal *v) { sr_dict_set(NULL, d, sr_str_cstr(NULL, name), v); }

static void ddel(SrVal *d, const char *name) {
  size_t n = strlen(name);
  for (int i = 0; i < d->dict.n; i++) {
    SrVal *k = d->dict.keys[i];
    if (k->kind == SR_V_STR && k->str.n == n && memcmp(k->str.s, name, n) == 0) {
      sr_unref(k);
      sr_unref(d->dict.vals[i]);
      memmove(d->dict.keys + i, d->dict.keys + i + 1, (size_t)(d->dict.n - i - 1) * sizeof(SrVal *));
      memmove(d->dict.vals + i, d->dict.vals + i + 1, (size_t)(d->dict.n - i - 1) * sizeof(SrVal *));
      d->dict.n--;
      return;
    }
  }
}

/* name along c's MRO (C3's: c, then its bases' linearizations merged);
   borrowed */
static SrVal *mro_lookup(const SrPyClass *c, const char *name, const SrPyClass **where) {
  if (!c) return NULL;
  for (int i = 0; i < c->nmro; i++) {
    SrVal *v = dget(c->mro[i]->dict, name);
    if (v) {
      if (where) *where = c->mro[i];
      return v;
    }
  }
  return NULL;
}

/* the class of c's MRO that gives its fields (a namedtuple's) */
static const SrPyClass *nt_class(const SrPyClass *c) {
  for (; c; c = base_of(c))
    if (c->namedtuple) return c;
  return NULL;
}

int sr_class_instance_callable(const SrVal *v) {
  const SrInstance *o = instance(v);
  return o ? mro_lookup(class_of(o), "__call__", NULL) != NULL : -1;
}

static int is_subclass(const SrPyClass *c, const SrPyClass *of) {
  for (int i = 0; c && i < c->nmro; i++)
    if (c->mro[i] == of) return 1;
  return 0;
}

/* what a value that is not a class of ours is called in errors: int for
   the builtin int, else its type's name */
static const char *what_class(const SrVal *v) {
  const char *e = sr_exception_type_name(v);
  if (e) return e;
  const char *n = sr_is_obj(v, &sr_builtin_class) ? sr_builtin_name((SrVal *)v) : NULL;
  if (n && strncmp(n, "builtins.", 9) == 0) return n + 9;
  return n ? n : sr_val_kind_name(v);
}

/* ---- descriptors: property, staticmethod, classmethod ---- */

typedef struct Wrapper {
  int kind; /* 'p', 's', 'c' */
  SrVal *fn, *fset;
} Wrapper;

static void wrapper_free(void *d) {
  Wrapper *w = d;
  sr_unref(w->fn);
  sr_unref(w->fset);
  free(w);
}

static void wrapper_traverse(void *d, SrValVisit visit, void *arg) {
  Wrapper *w = d;
  if (w->fn) visit(w->fn, arg);
  if (w->fset) visit(w->fset, arg);
}

static void wrapper_clear(void *d) {
  Wrapper *w = d;
  sr_unref(w->fn);
  sr_unref(w->fset);
  w->fn = w->fset = NULL;
}

static void wrapper_repr(SrBuf *out, const SrVal *v) {
  const Wrapper *w = v->obj.data;
  /* Python 3.10: <staticmethod(<function f at ...>)>, and classmethod's */
  if ((w->kind == 's' || w->kind == 'c') && w->fn) {
    sr_buf_printf(out, "<%s(", w->kind == 's' ? "staticmethod" : "classmethod");
    sr_val_repr(out, w->fn);
    sr_buf_puts(out, ")>");
    return;
  }
  sr_buf_printf(out, "<%s object>", w->kind == 'p' ? "property" : w->kind == 's' ? "staticmethod" : w->kind == 'k' ? "functools.cached_property" : "classmethod");
}

static const char *wrapper_type_name(const SrVal *v) {
  const Wrapper *w = v->obj.data;
  return w->kind == 'p' ? "property" : w->kind == 's' ? "staticmethod" : w->kind == 'k' ? "cached_property" : "classmethod";
}

static SrVal *wrapper_new(int kind, SrVal *fn, SrVal *fset);

static SrVal *m_property_setter(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "setter() takes exactly one argument (%d given)", a->n);
  const Wrapper *w = a->self->obj.data;
  return wrapper_new('p', sr_ref(w->fn), sr_ref(a->v[0]));
}

static SrVal *wrapper_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const Wrapper *w = self->obj.data;
  if (w->kind == 'p' && strcmp(name, "setter") == 0) return sr_bound_method(self, name, m_property_setter);
  if (w->kind == 'p' && strcmp(name, "fget") == 0) return sr_ref(w->fn ? w->fn : sr_none());
  if (w->kind == 'p' && strcmp(name, "fset") == 0) return sr_ref(w->fset ? w->fset : sr_none());
  if (w->kind != 'p' && strcmp(name, "__func__") == 0) return sr_ref(w->fn);
  if (w->fn && (strcmp(name, "__doc__") == 0 || strcmp(name, "__name__") == 0)) return sr_getattr(I, w->fn, name);
  return NULL;
}

static SrVal *wrapper_call(SrInterp *I, SrVal *self, SrArgs *a) {
  const Wrapper *w = self->obj.data;
  if (w->kind == 's') return sr_call(I, w->fn, a);
  return sr_raise(I, "TypeError", "'%s' object is not callable", wrapper_type_name(self));
}

/* callable() is true of a staticmethod (Python 3.10), not of the others:
   they are two classes, one with a call */
static const SrLangOps wrapper_ops = {.getattr = wrapper_getattr};
static const SrLangOps static_wrapper_ops = {.getattr = wrapper_getattr, .call = wrapper_call};
static SrClass wrapper_class = {"property", wrapper_free, wrapper_repr, NULL, &wrapper_ops};
static SrClass static_wrapper_class = {"staticmethod", wrapper_free, wrapper_repr, NULL, &static_wrapper_ops};

static int is_wrapper(const SrVal *v) { return sr_is_obj(v, &wrapper_class) || sr_is_obj(v, &static_wrapper_class); }

static SrVal *wrapper_new(int kind, SrVal *fn, SrVal *fset) {
  Wrapper *w = sr_xcalloc(1, sizeof *w);
  w->kind = kind;
  w->fn = fn;
  w->fset = fset;
  return sr_obj(kind == 's' ? &static_wrapper_class : &wrapper_class, w);
}

static const Wrapper *as_wrapper(const SrVal *v, int kind) {
  const Wrapper *w = is_wrapper(v) ? v->obj.data : NULL;
  return w && w->kind == kind ? w : NULL;
}

static SrVal *bi_property(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "property", "fget=, fset=", p) < 0) return NULL;
  return wrapper_new('p', p[0] ? sr_ref(p[0]) : NULL, p[1] ? sr_ref(p[1]) : NULL);
}

static SrVal *bi_cached_property(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "cached_property.__init__() takes 2 positional arguments but %d were given", a->n + 1);
  return wrapper_new('k', sr_ref(a->v[0]), NULL);
}

static SrVal *bi_staticmethod(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "staticmethod expected 1 argument, got %d", a->n);
  return wrapper_new('s', sr_ref(a->v[0]), NULL);
}

static SrVal *bi_classmethod(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "classmethod expected 1 argument, got %d", a->n);
  return wrapper_new('c', sr_ref(a->v[0]), NULL);
}

/* ---- bound methods ---- */

typedef struct Method {
  SrVal *fn, *self;
} Method;

static void method_free(void *d) {
  Method *m = d;
  sr_unref(m->fn);
  sr_unref(m->self);
  free(m);
}

static void method_traverse(void *d, SrValVisit visit, void *arg) {
  Method *m = d;
  if (m->fn) visit(m->fn, arg);
  if (m->self) visit(m->self, arg);
}

static void method_clear(void *d) {
  Method *m = d;
  sr_unref(m->fn);
  sr_unref(m->self);
  m->fn = m->self = NULL;
}

static const char *fn_qualname(SrVal *fn) {
  SrFunction *f = sr_as_function(fn);
  if (f) return f->qualname ? f->qualname : f->name;
  const char *n = sr_builtin_name(fn);
  return n ? n : "?";
}

static void method_repr(SrBuf *out, const SrVal *v) {
  const Method *m = v->obj.data;
  sr_buf_printf(out, "<bound method %s of ", m->fn ? fn_qualname(m->fn) : "?");
  if (m->self) sr_val_repr(out, m->self);
  sr_buf_putc(out, '>');
}

static SrVal *call_with_self(SrInterp *I, SrVal *fn, SrVal *self, SrArgs *a) {
  SrVal *stack[8], **v = a->n + 1 <= 8 ? stack : sr_xmalloc((size_t)(a->n + 1) * sizeof *v);
  v[0] = self;
  for (int i = 0; i < a->n; i++) v[i + 1] = a->v[i];
  SrArgs b = {a->n + 1, v, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = sr_call(I, fn, &b);
  if (v != stack) free(v);
  return r;
}

static SrVal *method_call(SrInterp *I, SrVal *self, SrArgs *a) {
  const Method *m = self->obj.data;
  if (!m->fn) return sr_raise(I, "TypeError", "'method' object is not callable");
  return call_with_self(I, m->fn, m->self, a);
}

static SrVal *method_getattr(SrInterp *I, SrVal *self, const char *name) {
  const Method *m = self->obj.data;
  if (strcmp(name, "__self__") == 0 && m->self) return sr_ref(m->self);
  if (strcmp(name, "__func__") == 0 && m->fn) return sr_ref(m->fn);
  return m->fn ? sr_getattr(I, m->fn, name) : NULL;
}

static const SrLangOps method_ops = {.call = method_call, .getattr = method_getattr};
static const SrClass method_class = {"method", method_free, method_repr, NULL, &method_ops};

static SrVal *method_new(SrVal *fn, SrVal *self) {
  Method *m = sr_xcalloc(1, sizeof *m);
  m->fn = sr_ref(fn);
  m->self = sr_ref(self);
  return sr_obj(&method_class, m);
}

static const SrClass *binding_classes[8];

void sr_class_binds(const SrClass *cls) {
  for (int i = 0; i < 8; i++)
    if (!binding_classes[i] || binding_classes[i] == cls) {
      binding_classes[i] = cls;
      return;
    }
}

static int binds(const SrVal *v) {
  if (sr_as_function((SrVal *)v)) return 1;
  for (int i = 0; v->kind == SR_V_OBJ && i < 8 && binding_classes[i]; i++)
    if (v->obj.cls == binding_classes[i]) return 1;
  return 0;
}

/* What an attribute found in a class's namespace is when read through
   an instance (self) or the class (self NULL): functions bind,
   classmethods bind to the class, staticmethods unwrap, properties run.
   A new reference. */
static SrVal *bind(SrInterp *I, SrVal *v, SrVal *self, SrVal *cls) {
  const Wrapper *w;
  if ((w = as_wrapper(v, 'p')) && self) {
    if (!w->fn) return sr_raise(I, "AttributeError", "property object has no getter");
    return sr_call1(I, w->fn, self);
  }
  if ((w = as_wrapper(v, 's'))) return sr_ref(w->fn);
  if ((w = as_wrapper(v, 'c'))) return method_new(w->fn, cls);
  if (self && binds(v)) return method_new(v, self);
  return sr_ref(v);
}

/* ---- class objects ---- */

static void type_free(void *d) {
  SrPyClass *c = d;
  sr_unref(c->base);
  for (int i = 1; i < c->nbases; i++) sr_unref(c->bases[i - 1]);
  free(c->bases);
  free(c->mro);
  sr_unref(c->dict);
  for (int i = 0; i < c->nfields; i++) {
    if (c->defaults) sr_unref(c->defaults[i]);
    if (c->factories) sr_unref(c->factories[i]);
  }
  free(c->fields);
  free(c->defaults);
  free(c->factories);
  free(c->statics);
  for (int i = 0; c->fobjs && i < c->nfields; i++) sr_unref(c->fobjs[i]);
  free(c->fobjs);
  sr_unref(c->tree_a);
  sr_unref(c->tree_b);
  sr_unref(c->tree_keys);
  sr_unref(c->builtin);
  free(c);
}

static void type_traverse(void *d, SrValVisit visit, void *arg) {
  SrPyClass *c = d;
  if (c->base) visit(c->base, arg);
  for (int i = 1; i < c->nbases; i++) visit(c->bases[i - 1], arg);
  if (c->dict) visit(c->dict, arg);
  for (int i = 0; i < c->nfields; i++) {
    if (c->defaults && c->defaults[i]) visit(c->defaults[i], arg);
    if (c->factories && c->factories[i]) visit(c->factories[i], arg);
    if (c->fobjs && c->fobjs[i]) visit(c->fobjs[i], arg);
  }
  if (c->tree_a) visit(c->tree_a, arg);
  if (c->tree_b) visit(c->tree_b, arg);
  if (c->tree_keys) visit(c->tree_keys, arg);
  if (c->builtin) visit(c->builtin, arg);
}

static void type_clear(void *d) {
  SrPyClass *c = d;
  sr_unref(c->base);
  c->base = NULL;
  for (int i = 1; i < c->nbases; i++) sr_unref(c->bases[i - 1]);
  free(c->bases);
  c->bases = NULL;
  c->nbases = 0;
  c->nmro = 1; /* itself: what was after it may be freed now */
  for (int i = 0; i < c->nfields; i++) {
    if (c->defaults) sr_unref(c->defaults[i]), c->defaults[i] = NULL;
    if (c->factories) sr_unref(c->factories[i]), c->factories[i] = NULL;
    if (c->fobjs) sr_unref(c->fobjs[i]), c->fobjs[i] = NULL;
  }
  sr_unref(c->tree_a);
  sr_unref(c->tree_b);
  sr_unref(c->tree_keys);
  c->tree_a = c->tree_b = c->tree_keys = NULL;
  /* the namespace last: its values may be what is being freed */
  SrVal *dict = c->dict;
  c->dict = sr_dict(NULL);
  sr_unref(dict);
}

static void type_repr(SrBuf *out, const SrVal *v) {
  const SrPyClass *c = v->obj.data;
  if (c->nt_marker) sr_buf_puts(out, "<function NamedTuple>");
  else if (c->dict && !dget(c->dict, "__module__")) sr_buf_printf(out, "<class '%s'>", c->name);
  else sr_buf_printf(out, "<class '__main__.%s'>", c->name);
}

static SrVal *type_call(SrInterp *I, SrVal *self, SrArgs *a);
static SrVal *type_getattr(SrInterp *I, SrVal *self, const char *name);
static int type_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *v);

static const SrLangOps type_ops = {.call = type_call, .getattr = type_getattr, .setattr = type_setattr};
const SrClass sr_type_class = {"type", type_free, type_repr, NULL, &type_ops};

static SrPyClass *class_alloc(const char *name, SrVal *base, SrVal *dict) {
  static int traversed;
  if (!traversed) {
    traversed = 1;
    sr_val_traverse_class(&sr_type_class, type_traverse, type_clear);
  }
  SrPyClass *c = sr_xcalloc(1, sizeof *c);
  c->name = sr_intern_cstr(name);
  c->base = sr_ref(base);
  c->nbases = base != NULL;
  c->dict = dict;
  const SrPyClass *b = base ? base->obj.data : NULL;
  c->nmro = 1 + (b ? b->nmro : 0);
  c->mro = sr_xcalloc((size_t)c->nmro, sizeof *c->mro);
  c->mro[0] = c;
  for (int i = 1; i < c->nmro; i++) c->mro[i] = b->mro[i - 1];
  return c;
}

static void set_fields(SrPyClass *c, int n, const char **names, SrVal **defaults, SrVal **factories) {
  c->nfields = n;
  free(c->statics);
  c->statics = sr_xcalloc((size_t)n + 1, 1);
  c->fields = sr_xcalloc((size_t)n + 1, sizeof *c->fields);
  c->defaults = sr_xcalloc((size_t)n + 1, sizeof *c->defaults);
  c->factories = sr_xcalloc((size_t)n + 1, sizeof *c->factories);
  for (int i = 0; i < n; i++) {
    c->fields[i] = names[i];
    c->defaults[i] = defaults ? defaults[i] : NULL;
    c->factories[i] = factories ? factories[i] : NULL;
  }
}

/* Gives each function of the namespace its owner (super()) and the
   qualified name its errors say: C.f(). */
static void own_functions(SrVal *cls) {
  SrPyClass *c = cls->obj.data;
  for (int i = 0; i < c->dict->dict.n; i++) {
    SrVal *v = c->dict->dict.vals[i];
    const Wrapper *w = is_wrapper(v) ? v->obj.data : NULL;
    for (int k = 0; k < 2; k++) {
      SrVal *fv = w ? (k ? w->fset : w->fn) : (k ? NULL : v);
      SrFunction *f = fv ? sr_as_function(fv) : NULL;
      if (!f || f->owner) continue;
      f->owner = sr_ref(cls);
      char q[512];
      snprintf(q, sizeof q, "%s.%s", c->name, f->name);
      f->qualname = sr_intern_cstr(q);
    }
  }
}

SrVal *sr_class_new(SrInterp *I, const char *name, SrVal *base, SrVal *ns) {
  if (base && sr_enum_is_class(base)) return sr_enum_class_new(I, name, base, ns);
  SrPyClass *b = base ? pyclass(base) : NULL;
  if (base && base == sr_lookup_qualname("builtins.object")) base = NULL, b = NULL;
  const char *exc_base = base ? sr_exception_type_name(base) : NULL;
  if (exc_base) {
    /* class E(ValueError): a new exception type; its body may hold a
       docstring and attributes, not methods */
    for (int i = 0; i < ns->dict.n; i++)
      if (sr_is_callable(I, ns->dict.vals[i]) || is_wrapper(ns->dict.vals[i])) {
        sr_raise(I, "NotImplementedError", "an exception class of a class statement cannot define methods (%s.%s)",
                 name, ns->dict.keys[i]->str.s);
        sr_unref(ns);
        return NULL;
      }
    sr_unref(ns);
    return sr_exception_type_new(name, exc_base);
  }
  if (base && !b) {
    const char *bn = sr_builtin_name(base);
    /* P.__init_subclass__ */
    if (bn && strcmp(bn, "jax.sharding.PartitionSpec") == 0) {
      sr_unref(ns);
      return sr_raise(I, "TypeError", "Subclassing `jax.P` is prohibited.");
    }
    static const char *const subclassable[] = {"builtins.int", "builtins.float", "builtins.str",
                                               "builtins.tuple", "builtins.list", "builtins.dict"};
    int builtin = 0;
    for (size_t k = 0; bn && k < sizeof subclassable / sizeof *subclassable; k++)
      builtin |= strcmp(bn, subclassable[k]) == 0;
    if (builtin) {
      /* class C(int): an instance holds its int (SrInstance.base), whose
         methods and operators are its own where the class has none */
      SrVal *cls = sr_class_new(I, name, NULL, ns);
      if (cls) pyclass(cls)->builtin = sr_ref(base);
      return cls;
    }
    if (bn && (strcmp(bn, "typing.Generic") == 0 || strcmp(bn, "typing.Protocol") == 0)) {
      base = NULL;
    } else {
      sr_unref(ns);
      return sr_raise(I, "TypeError", "shardrepl cannot subclass '%s' (a class statement's base must be a class it defines, object or typing.NamedTuple)",
                      what_class(base));
    }
  }
  ddel(ns, "__qualname__"); /* type.__new__ takes it out of the namespace */
  SrVal *cls;
  if (b && b->nt_marker) {
    /* class P(NamedTuple): the annotated names are the fields, their
       values the defaults */
    SrVal *ann = dget(ns, "__annotations__");
    int n = ann && ann->kind == SR_V_DICT ? ann->dict.n : 0;
    const char **names = sr_xcalloc((size_t)n + 1, sizeof *names);
    SrVal **defs = sr_xcalloc((size_t)n + 1, sizeof *defs);
    int seen_default = 0;
    for (int i = 0; i < n; i++) {
      SrVal *k = ann->dict.keys[i];
      names[i] = sr_intern(k->str.s, k->str.n);
      SrVal *d = dget(ns, names[i]);
      if (d) {
        defs[i] = sr_ref(d);
        seen_default = 1;
        ddel(ns, names[i]);
      } else if (seen_default) {
        sr_raise(I, "TypeError", "Non-default namedtuple field %s cannot follow default field%s %s", names[i],
                 "", names[i - 1]);
        for (int k2 = 0; k2 < i; k2++) sr_unref(defs[k2]);
        free(names);
        free(defs);
        sr_unref(ns);
        return NULL;
      }
    }
    SrPyClass *c = class_alloc(name, NULL, ns);
    c->namedtuple = 1;
    c->tree = SR_TREE_NONE;
    set_fields(c, n, names, defs, NULL);
    free(names);
    free(defs);
    cls = sr_obj(&sr_type_class, c);
  } else {
    SrPyClass *c = class_alloc(name, base, ns);
    cls = sr_obj(&sr_type_class, c);
  }
  own_functions(cls);
  return cls;
}

/* C3's merge of the bases' linearizations and the list of the bases
   (CPython's mro_implementation): into out (room for every class of
   them), the count, or -1 with CPython's TypeError. */
static int c3_merge(SrInterp *I, SrPyClass **b, int n, const SrPyClass **out) {
  /* sequence i < n is b[i]'s MRO, sequence n the bases themselves */
  const SrPyClass ***seq = sr_xcalloc((size_t)n + 1, sizeof *seq);
  int *len = sr_xcalloc((size_t)n + 1, sizeof *len), *at = sr_xcalloc((size_t)n + 1, sizeof *at);
  for (int i = 0; i < n; i++) seq[i] = b[i]->mro, len[i] = b[i]->nmro;
  seq[n] = (const SrPyClass **)b;
  len[n] = n;
  int nout = 0;
  for (;;) {
    const SrPyClass *pick = NULL;
    int left = 0;
    for (int i = 0; i <= n && !pick; i++) {
      if (at[i] >= len[i]) continue;
      left = 1;
      const SrPyClass *h = seq[i][at[i]];
      int in_tail = 0;
      for (int j = 0; j <= n && !in_tail; j++)
        for (int k = at[j] + 1; k < len[j] && !in_tail; k++) in_tail = seq[j][k] == h;
      if (!in_tail) pick = h;
    }
    if (!left) break;
    if (!pick) {
      /* the heads left, each once, in order */
      SrBuf m = SR_BUF_INIT;
      const SrPyClass *seen[64];
      int nseen = 0;
      for (int i = 0; i <= n; i++) {
        if (at[i] >= len[i]) continue;
        const SrPyClass *h = seq[i][at[i]];
        int dup = 0;
        for (int k = 0; k < nseen; k++) dup |= seen[k] == h;
        if (dup || nseen == 64) continue;
        seen[nseen++] = h;
        sr_buf_printf(&m, "%s%s", nseen > 1 ? ", " : "", h->name);
      }
      sr_raise(I, "TypeError", "Cannot create a consistent method resolution\norder (MRO) for bases %s", sr_buf_str(&m));
      sr_buf_free(&m);
      nout = -1;
      break;
    }
    out[nout++] = pick;
    for (int i = 0; i <= n; i++)
      if (at[i] < len[i] && seq[i][at[i]] == pick) at[i]++;
  }
  free(seq);
  free(len);
  free(at);
  return nout;
}

SrVal *sr_class_new_bases(SrInterp *I, const char *name, SrVal **bases, int n, SrVal *ns) {
  SrVal *keep[64];
  int nk = 0;
  for (int i = 0; i < n; i++) {
    const char *bn = sr_is_obj(bases[i], &sr_builtin_class) ? sr_builtin_name(bases[i]) : NULL;
    if (n > 1 && bn && (strcmp(bn, "typing.Generic") == 0 || strcmp(bn, "typing.Protocol") == 0)) continue;
    if (nk == 64) {
      sr_unref(ns);
      return sr_raise(I, "TypeError", "class %s has too many bases", name);
    }
    keep[nk++] = bases[i];
  }
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < i; j++)
      if (keep[i] == keep[j]) {
        sr_unref(ns);
        return sr_raise(I, "TypeError", "duplicate base class %s", pyclass(keep[i]) ? pyclass(keep[i])->name : what_class(keep[i]));
      }
  if (nk <= 1) return sr_class_new(I, name, nk ? keep[0] : NULL, ns);
  /* object among several bases adds nothing to the MRO but its place */
  SrVal *object = sr_lookup_qualname("builtins.object");
  SrPyClass *pb[64];
  int np = 0;
  for (int i = 0; i < nk; i++) {
    if (keep[i] == object) continue;
    SrPyClass *c = pyclass(keep[i]);
    if (!c || c->nt_marker || c->namedtuple) {
      sr_unref(ns);
      if (c) return sr_raise(I, "TypeError", "can only inherit from a NamedTuple type and Generic");
      return sr_raise(I, "TypeError", "shardrepl cannot subclass '%s' (a class statement's base must be a class it defines, object or typing.NamedTuple)",
                      what_class(keep[i]));
    }
    pb[np++] = c;
  }
  if (np <= 1) {
    SrVal *only = NULL;
    for (int i = 0; i < nk && !only; i++)
      if (keep[i] != object) only = keep[i];
    if (only && keep[0] == object) {
      /* class C(object, A): object before A is no consistent order */
      sr_unref(ns);
      return sr_raise(I, "TypeError", "Cannot create a consistent method resolution\norder (MRO) for bases object, %s", pyclass(only)->name);
    }
    return sr_class_new(I, name, only, ns);
  }
  int total = 0;
  for (int i = 0; i < np; i++) total += pb[i]->nmro;
  const SrPyClass **lin = sr_xcalloc((size_t)total + 1, sizeof *lin);
  int nl = c3_merge(I, pb, np, lin);
  if (nl < 0) {
    free(lin);
    sr_unref(ns);
    return NULL;
  }
  SrVal *first = NULL;
  for (int i = 0; i < nk && !first; i++)
    if (keep[i] != object) first = keep[i];
  SrVal *cls = sr_class_new(I, name, first, ns);
  if (!cls) {
    free(lin);
    return NULL;
  }
  SrPyClass *c = cls->obj.data;
  c->bases = sr_xcalloc((size_t)np, sizeof *c->bases);
  c->nbases = 1;
  for (int i = 0; i < nk; i++)
    if (keep[i] != object && keep[i] != first) c->bases[c->nbases++ - 1] = sr_ref(keep[i]);
  free(c->mro);
  c->mro = sr_xcalloc((size_t)nl + 1, sizeof *c->mro);
  c->mro[0] = c;
  for (int i = 0; i < nl; i++) c->mro[i + 1] = lin[i];
  c->nmro = nl + 1;
  free(lin);
  return cls;
}

static int bind_fields(SrInterp *I, const char *fname, int self_count, const SrPyClass *c, SrArgs *a,
                       SrVal **out);
static void instance_traverse(void *d, SrValVisit visit, void *arg);
static void instance_clear(void *d);

static SrVal *instance_new(SrVal *cls) {
  static int traversed;
  if (!traversed) {
    traversed = 1;
    sr_val_traverse_class(&sr_instance_class, instance_traverse, instance_clear);
  }
  SrInstance *o = sr_xcalloc(1, sizeof *o);
  o->cls = sr_ref(cls);
  if (!nt_class(cls->obj.data)) o->dict = sr_dict(NULL);
  return sr_obj(&sr_instance_class, o);
}

static SrVal *nt_make(SrVal *cls, SrVal **items, int n) {
  SrVal *v = instance_new(cls);
  SrInstance *o = v->obj.data;
  o->items = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, o->items, sr_ref(items[i]));
  return v;
}

static int field_init(const SrVal *fobj);

/* a dataclass's generated __init__, of the fields of c */
static int dc_init(SrInterp *I, const SrPyClass *c, SrVal *self, SrArgs *a) {
  char fname[300];
  snprintf(fname, sizeof fname, "%s.__init__", c->name);
  /* the parameters are the fields with init=True (field(init=False) is
     set to its default, if it has one) */
  int n = c->nfields, nin = 0;
  SrPyClass view = *c;
  view.fields = sr_xcalloc((size_t)n + 1, sizeof *view.fields);
  view.defaults = sr_xcalloc((size_t)n + 1, sizeof *view.defaults);
  view.factories = sr_xcalloc((size_t)n + 1, sizeof *view.factories);
  int *at = sr_xcalloc((size_t)n + 1, sizeof *at);
  for (int i = 0; i < n; i++) {
    if (c->fobjs && c->fobjs[i] && !field_init(c->fobjs[i])) continue;
    view.fields[nin] = c->fields[i];
    view.defaults[nin] = c->defaults[i];
    view.factories[nin] = c->factories ? c->factories[i] : NULL;
    at[nin++] = i;
  }
  view.nfields = nin;
  SrVal **vals = sr_xcalloc((size_t)n + 1, sizeof *vals);
  int rc = bind_fields(I, fname, 1, &view, a, vals);
  free(view.fields);
  free(view.defaults);
  free(view.factories);
  if (rc < 0) {
    free(vals);
    free(at);
    return -1;
  }
  SrInstance *o = self->obj.data;
  for (int k = 0, i = 0; i < n; i++) {
    if (k < nin && at[k] == i) {
      dset(o->dict, c->fields[i], vals[k++]);
    } else if (c->defaults[i]) {
      dset(o->dict, c->fields[i], sr_ref(c->defaults[i]));
    } else if (c->factories && c->factories[i]) {
      SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
      SrVal *d = sr_call(I, c->factories[i], &none);
      if (!d) {
        free(vals);
        free(at);
        return -1;
      }
      dset(o->dict, c->fields[i], d);
    }
  }
  free(vals);
  free(at);
  SrVal *post = mro_lookup(class_of(o), "__post_init__", NULL);
  if (post) {
    SrVal *m = bind(I, post, self, o->cls);
    SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
    SrVal *r = m ? sr_call(I, m, &none) : NULL;
    sr_unref(m);
    if (!r) return -1;
    sr_unref(r);
  }
  return 0;
}

static SrVal *namedtuple_call(SrInterp *I, SrVal *cls, const SrPyClass *nt, SrArgs *a);

static SrVal *type_call(SrInterp *I, SrVal *self, SrArgs *a) {
  SrPyClass *c = self->obj.data;
  if (c->nt_marker) return namedtuple_call(I, self, c, a);
  const SrPyClass *nt = nt_class(c);
  if (nt) {
    char fname[300];
    snprintf(fname, sizeof fname, "%s.__new__", c->name);
    SrVal **vals = sr_xcalloc((size_t)nt->nfields + 1, sizeof *vals);
    if (bind_fields(I, fname, 1, nt, a, vals) < 0) {
      free(vals);
      return NULL;
    }
    SrVal *r = nt_make(self, vals, nt->nfields);
    for (int i = 0; i < nt->nfields; i++) sr_unref(vals[i]);
    free(vals);
    return r;
  }
  SrVal *obj = instance_new(self);
  SrVal *bb = builtin_base(c);
  if (bb) {
    /* the built-in's __new__ makes the value; an __init__ of the class
       then sees the same arguments (the built-in's own takes them all) */
    SrInstance *o = obj->obj.data;
    o->base = sr_call(I, bb, a);
    if (!o->base) {
      sr_unref(obj);
      return NULL;
    }
    int has_init = 0;
    for (const SrPyClass *k = c; k && !has_init; k = base_of(k)) has_init = dget(k->dict, "__init__") != NULL;
    if (!has_init) return obj;
  }
  /* __init__ along the MRO: the class's own, or a dataclass's generated one */
  for (const SrPyClass *k = c; k; k = base_of(k)) {
    SrVal *init = dget(k->dict, "__init__");
    if (init) {
      SrVal *r = call_with_self(I, init, obj, a);
      if (!r) {
        sr_unref(obj);
        return NULL;
      }
      if (r->kind != SR_V_NONE) {
        sr_raise(I, "TypeError", "__init__() should return None, not '%s'", sr_val_kind_name(r));
        sr_unref(r);
        sr_unref(obj);
        return NULL;
      }
      sr_unref(r);
      return obj;
    }
    if (k->dc_init) {
      if (dc_init(I, k, obj, a) < 0) {
        sr_unref(obj);
        return NULL;
      }
      return obj;
    }
  }
  if (a->n || a->nkw) {
    sr_unref(obj);
    return sr_raise(I, "TypeError", "%s() takes no arguments", c->name);
  }
  return obj;
}

static SrVal *str_tuple(const char **names, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_str_cstr(NULL, names[i]));
  return t;
}

static SrVal *m_nt_make(SrInterp *I, SrArgs *a);

/* The class object of k, one of the classes of cls's MRO: a base of cls or
   of one of its bases (borrowed). */
static SrVal *class_value(SrVal *cls, const SrPyClass *k) {
  const SrPyClass *c = cls->obj.data;
  for (int i = 0; i < c->nbases; i++) {
    SrVal *b = i ? c->bases[i - 1] : c->base;
    if (b->obj.data == k) return b;
    SrVal *r = class_value(b, k);
    if (r) return r;
  }
  return NULL;
}

static SrVal *type_getattr(SrInterp *I, SrVal *self, const char *name) {
  SrPyClass *c = self->obj.data;
  if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, c->name);
  if (strcmp(name, "__module__") == 0) return sr_str_cstr(NULL, dget(c->dict, "__module__") ? "__main__" : "builtins");
  if (strcmp(name, "__base__") == 0 && !c->base && c->builtin) return sr_ref(c->builtin);
  if (strcmp(name, "__bases__") == 0 && !c->base && c->builtin) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, 1);
    sr_seq_push(NULL, t, sr_ref(c->builtin));
    return t;
  }
  if (strcmp(name, "__bases__") == 0) {
    SrVal *o = sr_lookup_qualname("builtins.object");
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, c->nbases + 1);
    if (c->base) sr_seq_push(NULL, t, sr_ref(c->base));
    for (int i = 1; i < c->nbases; i++) sr_seq_push(NULL, t, sr_ref(c->bases[i - 1]));
    if (!c->base && o && o != self) sr_seq_push(NULL, t, sr_ref(o));
    return t;
  }
  if (strcmp(name, "__mro__") == 0) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, c->nmro + 1);
    sr_seq_push(NULL, t, sr_ref(self));
    /* the classes of the MRO are found through the bases' objects */
    for (int i = 1; i < c->nmro; i++) {
      SrVal *k = class_value(self, c->mro[i]);
      if (k) sr_seq_push(NULL, t, sr_ref(k));
    }
    SrVal *o = sr_lookup_qualname("builtins.object");
    if (o && o != self) sr_seq_push(NULL, t, sr_ref(o));
    return t;
  }
  if (strcmp(name, "__dict__") == 0) return sr_ref(c->dict);
  const SrPyClass *nt = nt_class(c);
  if (nt && strcmp(name, "_fields") == 0) return str_tuple(nt->fields, nt->nfields);
  if (nt && strcmp(name, "_field_defaults") == 0) {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < nt->nfields; i++)
      if (nt->defaults[i]) dset(d, nt->fields[i], sr_ref(nt->defaults[i]));
    return d;
  }
  if (nt && strcmp(name, "_make") == 0) return sr_bound_method(self, name, m_nt_make);
  SrVal *v = mro_lookup(c, name, NULL);
  if (v) return bind(I, v, NULL, self);
  if (strcmp(name, "__doc__") == 0) return sr_none();
  return sr_raise(I, "AttributeError", "type object '%s' has no attribute '%s'", c->name, name);
}

static int type_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *v) {
  (void)I;
  SrPyClass *c = self->obj.data;
  dset(c->dict, name, sr_ref(v));
  return 0;
}

/* ---- binding arguments to fields (namedtuple __new__, dataclass __init__) ---- */

/* Python's messages, for a function fname(self, field0, field1...) whose
   defaults are c's; out[i] new references. */
static int bind_fields(SrInterp *I, const char *fname, int self_count, const SrPyClass *c, SrArgs *a,
                       SrVal **out) {
  int n = c->nfields, ndef = 0;
  for (int i = 0; i < n; i++) ndef += c->defaults[i] || (c->factories && c->factories[i]);
  if (a->n > n) {
    if (ndef)
      sr_raise(I, "TypeError", "%s() takes from %d to %d positional arguments but %d were given", fname,
               n - ndef + self_count, n + self_count, a->n + self_count);
    else
      sr_raise(I, "TypeError", "%s() takes %d positional argument%s but %d were given", fname, n + self_count,
               n + self_count == 1 ? "" : "s", a->n + self_count);
    return -1;
  }
  for (int i = 0; i < a->n; i++) out[i] = sr_ref(a->v[i]);
  for (int k = 0; k < a->nkw; k++) {
    int found = -1;
    for (int i = 0; i < n; i++)
      if (c->fields[i] == a->kw[k]) found = i;
    const char *err = found < 0 ? "%s() got an unexpected keyword argument '%s'"
                      : out[found] ? "%s() got multiple values for argument '%s'" : NULL;
    if (err) {
      sr_raise(I, "TypeError", err, fname, a->kw[k]);
      for (int i = 0; i < n; i++) sr_unref(out[i]), out[i] = NULL;
      return -1;
    }
    out[found] = sr_ref(a->kwv[k]);
  }
  const char *missing[64];
  int nmissing = 0;
  for (int i = 0; i < n; i++) {
    if (out[i]) continue;
    if (c->defaults[i]) {
      out[i] = sr_ref(c->defaults[i]);
    } else if (c->factories && c->factories[i]) {
      SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
      out[i] = sr_call(I, c->factories[i], &none);
      if (!out[i]) {
        for (int k = 0; k < n; k++) sr_unref(out[k]), out[k] = NULL;
        return -1;
      }
    } else if (nmissing < 64) {
      missing[nmissing++] = c->fields[i];
    }
  }
  if (nmissing) {
    SrBuf b = SR_BUF_INIT;
    for (int i = 0; i < nmissing; i++) {
      if (i) sr_buf_puts(&b, i == nmissing - 1 ? (nmissing > 2 ? ", and " : " and ") : ", ");
      sr_buf_printf(&b, "'%s'", missing[i]);
    }
    sr_raise(I, "TypeError", "%s() missing %d required positional argument%s: %s", fname, nmissing,
             nmissing == 1 ? "" : "s", b.p);
    sr_buf_free(&b);
    for (int i = 0; i < n; i++) sr_unref(out[i]), out[i] = NULL;
    return -1;
  }
  return 0;
}

/* ---- instances ---- */

static void instance_traverse(void *d, SrValVisit visit, void *arg) {
  SrInstance *o = d;
  if (o->cls) visit(o->cls, arg);
  if (o->dict) visit(o->dict, arg);
  if (o->items) visit(o->items, arg);
  if (o->base) visit(o->base, arg);
}

static void instance_clear(void *d) {
  SrInstance *o = d;
  SrVal *dict = o->dict, *items = o->items, *base = o->base;
  o->dict = o->dict ? sr_dict(NULL) : NULL;
  o->items = o->items ? sr_seq(NULL, SR_V_TUPLE, 0) : NULL;
  o->base = NULL;
  sr_unref(dict);
  sr_unref(items);
  sr_unref(base);
}

static void instance_free(void *d) {
  SrInstance *o = d;
  sr_unref(o->dict);
  sr_unref(o->items);
  sr_unref(o->base);
  sr_unref(o->cls);
  free(o);
}

static const char *instance_type_name(const SrVal *v) {
  const SrInstance *o = v->obj.data;
  return class_of(o)->name;
}

/* the value of a field of a dataclass instance (borrowed) */
static SrVal *field_value(const SrInstance *o, const char *name) { return dget(o->dict, name); }

/* Calls the dunder `name` of o's class on (self, args...); *found says
   whether the class has it.  A new reference, or NULL. */
static SrVal *call_dunder(SrInterp *I, SrVal *self, const char *name, int n, SrVal **args, int *found) {
  const SrInstance *o = self->obj.data;
  SrVal *fn = mro_lookup(class_of(o), name, NULL);
  *found = fn != NULL;
  if (!fn) return NULL;
  SrVal *m = bind(I, fn, self, o->cls);
  if (!m) return NULL;
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, m, &a);
  sr_unref(m);
  return r;
}

int sr_class_instance_has(const SrVal *v, const char *name) {
  const SrInstance *o = instance(v);
  return o && mro_lookup(class_of(o), name, NULL) != NULL;
}

SrVal *sr_class_call_method0(SrInterp *I, SrVal *v, const char *name) {
  if (!sr_class_instance_has(v, name)) return NULL;
  int found;
  return call_dunder(I, v, name, 0, NULL, &found);
}

static int in_printer;

static void instance_print(SrBuf *out, const SrVal *v, int repr) {
  const SrInstance *o = v->obj.data;
  const SrPyClass *c = class_of(o);
  const char *want = repr ? "__repr__" : "__str__";
  for (const SrPyClass *k = c; k; k = base_of(k)) {
    SrVal *fn = dget(k->dict, want);
    if (!fn && !repr && dget(k->dict, "__repr__")) fn = dget(k->dict, want = "__repr__");
    if (fn) {
      SrInterp *I = class_interp;
      if (!I || in_printer > 50) break;
      int found;
      in_printer++;
      SrVal *r = call_dunder(I, (SrVal *)v, want, 0, NULL, &found);
      in_printer--;
      if (!r) return; /* the exception stays raised: the print fails */
      if (r->kind != SR_V_STR) {
        sr_raise(I, "TypeError", "%s returned non-string (type %s)", want, sr_val_kind_name(r));
      } else {
        sr_buf_putn(out, r->str.s, r->str.n);
      }
      sr_unref(r);
      return;
    }
    if (k->namedtuple) {
      sr_buf_printf(out, "%s(", c->name);
      for (int i = 0; i < k->nfields && i < o->items->seq.n; i++) {
        sr_buf_printf(out, "%s%s=", i ? ", " : "", k->fields[i]);
        sr_val_repr(out, o->items->seq.items[i]);
      }
      sr_buf_putc(out, ')');
      return;
    }
    if (k->dataclass && k->dc_repr) {
      sr_buf_printf(out, "%s(", c->name);
      for (int i = 0; i < k->nfields; i++) {
        SrVal *x = field_value(o, k->fields[i]);
        sr_buf_printf(out, "%s%s=", i ? ", " : "", k->fields[i]);
        if (x) sr_val_repr(out, x);
      }
      sr_buf_putc(out, ')');
      return;
    }
  }
  if (o->base) { /* the built-in's repr and str */
    if (repr) sr_val_repr(out, o->base);
    else sr_val_str(out, o->base);
    return;
  }
  /* object.__repr__: the module of the class first, but for a built-in
     one (object itself, whose namespace has no __module__) */
  if (c->dict && !dget(c->dict, "__module__")) sr_buf_printf(out, "<%s object at %p>", c->name, (const void *)o);
  else sr_buf_printf(out, "<__main__.%s object at %p>", c->name, (const void *)o);
}

static void instance_repr(SrBuf *out, const SrVal *v) { instance_print(out, v, 1); }
static void instance_str(SrBuf *out, const SrVal *v) { instance_print(out, v, 0); }

static SrVal *m_nt_replace(SrInterp *I, SrArgs *a) {
  const SrInstance *o = a->self->obj.data;
  const SrPyClass *nt = nt_class(class_of(o));
  if (a->n) return sr_raise(I, "TypeError", "%s._replace() takes 1 positional argument but %d were given", class_of(o)->name, a->n + 1);
  SrVal *items = sr_seq(NULL, SR_V_TUPLE, nt->nfields);
  for (int i = 0; i < o->items->seq.n; i++) sr_seq_push(NULL, items, sr_ref(o->items->seq.items[i]));
  SrBuf bad = SR_BUF_INIT;
  int nbad = 0;
  for (int k = 0; k < a->nkw; k++) {
    int found = -1;
    for (int i = 0; i < nt->nfields; i++)
      if (nt->fields[i] == a->kw[k]) found = i;
    if (found < 0 || found >= items->seq.n) {
      sr_buf_printf(&bad, "%s'%s'", nbad++ ? ", " : "", a->kw[k]);
      continue;
    }
    sr_unref(items->seq.items[found]);
    items->seq.items[found] = sr_ref(a->kwv[k]);
  }
  SrVal *r = NULL;
  if (nbad) sr_raise(I, "ValueError", "Got unexpected field names: [%s]", bad.p);
  else r = nt_make(o->cls, items->seq.items, items->seq.n);
  sr_buf_free(&bad);
  sr_unref(items);
  return r;
}

static SrVal *m_nt_asdict(SrInterp *I, SrArgs *a) {
  (void)I;
  const SrInstance *o = a->self->obj.data;
  const SrPyClass *nt = nt_class(class_of(o));
  SrVal *d = sr_dict(NULL);
  for (int i = 0; i < nt->nfields && i < o->items->seq.n; i++) dset(d, nt->fields[i], sr_ref(o->items->seq.items[i]));
  return d;
}

static SrVal *m_nt_make(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "_make() takes 2 positional arguments but %d were given", a->n + 1);
  const SrPyClass *nt = nt_class(a->self->obj.data);
  SrVal *items = sr_iterate(I, a->v[0]);
  if (!items) return NULL;
  SrVal *r = NULL;
  if (items->seq.n != nt->nfields)
    sr_raise(I, "TypeError", "Expected %d arguments, got %d", nt->nfields, items->seq.n);
  else
    r = nt_make(a->self, items->seq.items, items->seq.n);
  sr_unref(items);
  return r;
}

static SrVal *instance_getattr(SrInterp *I, SrVal *self, const char *name) {
  const SrInstance *o = self->obj.data;
  const SrPyClass *c = class_of(o);
  const SrPyClass *nt = nt_class(c);
  if (nt) {
    for (int i = 0; i < nt->nfields && i < o->items->seq.n; i++)
      if (strcmp(nt->fields[i], name) == 0) return sr_ref(o->items->seq.items[i]);
    if (strcmp(name, "_replace") == 0) return sr_bound_method(self, name, m_nt_replace);
    if (strcmp(name, "_asdict") == 0) return sr_bound_method(self, name, m_nt_asdict);
    if (strcmp(name, "_fields") == 0 || strcmp(name, "_field_defaults") == 0 || strcmp(name, "_make") == 0)
      return type_getattr(I, o->cls, name);
    if (strcmp(name, "count") == 0 || strcmp(name, "index") == 0) {
      SrVal *m = sr_getattr(I, o->items, name);
      return m;
    }
  }
  if (strcmp(name, "__class__") == 0) return sr_ref(o->cls);
  if (o->dict && strcmp(name, "__dict__") == 0) return sr_ref(o->dict);
  /* a property (a data descriptor) wins over the instance's dict */
  SrVal *cv = mro_lookup(c, name, NULL);
  if (cv && as_wrapper(cv, 'p')) return bind(I, cv, self, o->cls);
  SrVal *v = o->dict ? dget(o->dict, name) : NULL;
  if (v) return sr_ref(v);
  if (cv && as_wrapper(cv, 'k') && o->dict) {
    /* functools.cached_property: computed once, then kept in the instance's dict */
    SrVal *r = sr_call1(I, as_wrapper(cv, 'k')->fn, self);
    if (r) dset(o->dict, name, sr_ref(r));
    return r;
  }
  if (cv) return bind(I, cv, self, o->cls);
  if (strcmp(name, "__doc__") == 0) return sr_none();
  if (mro_lookup(c, "__getattr__", NULL)) {
    int found;
    SrVal *k = sr_str_cstr(NULL, name);
    SrVal *r = call_dunder(I, self, "__getattr__", 1, &k, &found);
    sr_unref(k);
    return r;
  }
  if (o->base) { /* the built-in's methods (keys, count, real...) */
    SrVal *r = sr_getattr(I, o->base, name);
    if (r || !I->exc || strcmp(sr_exc_type(I->exc), "AttributeError") != 0) return r;
    sr_exc_clear(I);
  }
  return sr_raise(I, "AttributeError", "'%s' object has no attribute '%s'", c->name, name);
}

static int instance_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *v) {
  const SrInstance *o = self->obj.data;
  const SrPyClass *c = class_of(o);
  SrVal *cv = mro_lookup(c, name, NULL);
  const Wrapper *p = cv ? as_wrapper(cv, 'p') : NULL;
  if (p) {
    if (!p->fset) {
      sr_raise(I, "AttributeError", "property '%s' of '%s' object has no setter", name, c->name);
      return -1;
    }
    SrVal *args[2] = {self, v};
    SrArgs a = {2, args, 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, p->fset, &a);
    if (!r) return -1;
    sr_unref(r);
    return 0;
  }
  const SrPyClass *nt = nt_class(c);
  if (nt) {
    for (int i = 0; i < nt->nfields; i++)
      if (strcmp(nt->fields[i], name) == 0) {
        sr_raise(I, "AttributeError", "can't set attribute");
        return -1;
      }
    sr_raise(I, "AttributeError", "'%s' object has no attribute '%s'", c->name, name);
    return -1;
  }
  for (const SrPyClass *k = c; k; k = base_of(k))
    if (k->frozen) {
      sr_raise(I, "FrozenInstanceError", "cannot assign to field '%s'", name);
      return -1;
    }
  dset(o->dict, name, sr_ref(v));
  return 0;
}

static SrVal *instance_call(SrInterp *I, SrVal *self, SrArgs *a) {
  const SrInstance *o = self->obj.data;
  SrVal *fn = mro_lookup(class_of(o), "__call__", NULL);
  if (!fn) return sr_raise(I, "TypeError", "'%s' object is not callable", class_of(o)->name);
  SrVal *m = bind(I, fn, self, o->cls);
  SrVal *r = m ? sr_call(I, m, a) : NULL;
  sr_unref(m);
  return r;
}

static SrVal *instance_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  const SrInstance *o = self->obj.data;
  int found;
  SrVal *r = call_dunder(I, self, "__getitem__", 1, &key, &found);
  if (found) return r;
  if (o->items) {
    r = sr_getitem(I, o->items, key);
    return r;
  }
  if (o->base) return sr_getitem(I, o->base, key);
  return sr_raise(I, "TypeError", "'%s' object is not subscriptable", class_of(o)->name);
}

static int instance_setitem(SrInterp *I, SrVal *self, SrVal *key, SrVal *v) {
  const SrInstance *o = self->obj.data;
  int found;
  SrVal *args[2] = {key, v};
  SrVal *r = call_dunder(I, self, "__setitem__", 2, args, &found);
  if (found) {
    if (!r) return -1;
    sr_unref(r);
    return 0;
  }
  sr_raise(I, "TypeError", "'%s' object does not support item assignment", class_of(o)->name);
  return -1;
}

static int64_t instance_len(SrInterp *I, SrVal *self) {
  const SrInstance *o = self->obj.data;
  if (o->items) return o->items->seq.n;
  int found;
  SrVal *r = call_dunder(I, self, "__len__", 0, NULL, &found);
  if (!found && o->base) {
    const SrLangOps *bo = sr_ops(o->base);
    if (sr_is_seq(o->base)) return o->base->seq.n;
    if (o->base->kind == SR_V_DICT) return o->base->dict.n;
    if (o->base->kind == SR_V_STR) return (int64_t)o->base->str.n;
    return bo && bo->len ? bo->len(I, o->base) : -1;
  }
  if (!found) return -1;
  if (!r) return -2;
  int64_t n = -2;
  if (r->kind == SR_V_INT || r->kind == SR_V_BOOL) {
    n = r->i;
    if (n < 0) sr_raise(I, "ValueError", "__len__() should return >= 0"), n = -2;
  } else {
    sr_raise(I, "TypeError", "'%s' object cannot be interpreted as an integer", sr_val_kind_name(r));
  }
  sr_unref(r);
  return n;
}

/* An iterator object's items: it.__next__() until StopIteration. */
static SrVal *step_iterator(SrInterp *I, SrVal *it) {
  if (!mro_lookup(class_of(instance(it)), "__next__", NULL))
    return sr_raise(I, "TypeError", "iter() returned non-iterator of type '%s'", class_of(instance(it))->name);
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  for (;;) {
    if (sr_interrupt_point(I)) {
      sr_unref(l);
      return sr_raise(I, "KeyboardInterrupt", "interrupted");
    }
    if (l->seq.n >= INT32_MAX / 2 || sr_check_mem(I, (uint64_t)l->seq.n + 1, 2 * sizeof(SrVal *)) < 0) {
      sr_unref(l);
      return NULL;
    }
    int found;
    SrVal *x = call_dunder(I, it, "__next__", 0, NULL, &found);
    if (!x) {
      if (I->exc && strcmp(sr_exc_type(I->exc), "StopIteration") == 0) {
        sr_exc_clear(I);
        return l;
      }
      sr_unref(l);
      return NULL;
    }
    sr_seq_push(NULL, l, x);
  }
}

static SrVal *instance_iter(SrInterp *I, SrVal *self) {
  const SrInstance *o = self->obj.data;
  if (o->items) return sr_iterate(I, o->items);
  int found;
  SrVal *r = call_dunder(I, self, "__iter__", 0, NULL, &found);
  if (!found && o->base) return sr_iterate(I, o->base);
  if (found) {
    if (!r) return NULL;
    SrVal *l = instance(r) ? step_iterator(I, r) : sr_iterate(I, r);
    if (!l && !instance(r) && I->exc && strcmp(sr_exc_type(I->exc), "TypeError") == 0) {
      sr_exc_clear(I);
      sr_raise(I, "TypeError", "iter() returned non-iterator of type '%s'", sr_val_kind_name(r));
    }
    sr_unref(r);
    return l;
  }
  if (mro_lookup(class_of(o), "__getitem__", NULL)) {
    /* the old protocol: self[0], self[1]... until IndexError */
    SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
    for (int64_t i = 0;; i++) {
      if (sr_interrupt_point(I)) {
        sr_unref(l);
        return sr_raise(I, "KeyboardInterrupt", "interrupted");
      }
      SrVal *k = sr_int(NULL, i);
      SrVal *x = call_dunder(I, self, "__getitem__", 1, &k, &found);
      sr_unref(k);
      if (!x) {
        if (I->exc && (strcmp(sr_exc_type(I->exc), "IndexError") == 0 || strcmp(sr_exc_type(I->exc), "StopIteration") == 0)) {
          sr_exc_clear(I);
          return l;
        }
        sr_unref(l);
        return NULL;
      }
      sr_seq_push(NULL, l, x);
    }
  }
  return sr_raise(I, "TypeError", "'%s' object is not iterable", class_of(o)->name);
}

static int instance_truthy(SrInterp *I, SrVal *self) {
  const SrInstance *o = self->obj.data;
  int found;
  SrVal *r = call_dunder(I, self, "__bool__", 0, NULL, &found);
  if (found) {
    if (!r) return -1;
    int t = r->kind == SR_V_BOOL ? (int)r->i : -1;
    if (t < 0) sr_raise(I, "TypeError", "__bool__ should return bool, returned %s", sr_val_kind_name(r));
    sr_unref(r);
    return t;
  }
  if (o->base && !mro_lookup(class_of(o), "__len__", NULL)) return sr_truthy(I, o->base);
  int64_t n = instance_len(I, self);
  if (n == -2) return -1;
  if (n >= 0) return n != 0;
  return 1;
}

static const char *dunder(int op, int reflected) {
  switch (op) {
  case SR_OP_ADD: return reflected ? "__radd__" : "__add__";
  case SR_OP_SUB: return reflected ? "__rsub__" : "__sub__";
  case SR_OP_MUL: return reflected ? "__rmul__" : "__mul__";
  case SR_OP_DIV: return reflected ? "__rtruediv__" : "__truediv__";
  case SR_OP_FLOORDIV: return reflected ? "__rfloordiv__" : "__floordiv__";
  case SR_OP_MOD: return reflected ? "__rmod__" : "__mod__";
  case SR_OP_POW: return reflected ? "__rpow__" : "__pow__";
  case SR_OP_MATMUL: return reflected ? "__rmatmul__" : "__matmul__";
  case SR_OP_LSHIFT: return reflected ? "__rlshift__" : "__lshift__";
  case SR_OP_RSHIFT: return reflected ? "__rrshift__" : "__rshift__";
  case SR_OP_BITAND: return reflected ? "__rand__" : "__and__";
  case SR_OP_BITOR: return reflected ? "__ror__" : "__or__";
  case SR_OP_BITXOR: return reflected ? "__rxor__" : "__xor__";
  /* comparisons reflect to their mirror */
  case SR_OP_EQ: return "__eq__";
  case SR_OP_NE: return "__ne__";
  case SR_OP_LT: return reflected ? "__gt__" : "__lt__";
  case SR_OP_LE: return reflected ? "__ge__" : "__le__";
  case SR_OP_GT: return reflected ? "__lt__" : "__gt__";
  case SR_OP_GE: return reflected ? "__le__" : "__ge__";
  default: return NULL;
  }
}

static SrVal *not_implemented;

/* self.name(other); NULL without an exception when self's class lacks it
   or it returned NotImplemented */
static SrVal *try_dunder(SrInterp *I, SrVal *self, const char *name, SrVal *other) {
  int found;
  SrVal *r = call_dunder(I, self, name, 1, &other, &found);
  if (r && r == not_implemented) {
    sr_unref(r);
    return NULL;
  }
  return r;
}

/* a namedtuple's items, or a tuple itself (borrowed), for comparing */
static SrVal *as_tuple(SrVal *v) {
  const SrInstance *o = instance(v);
  if (o && o->items) return o->items;
  return v->kind == SR_V_TUPLE ? v : NULL;
}

/* the generated __eq__ of a dataclass: the same class, equal fields */
static SrVal *dc_equal(SrInterp *I, SrVal *a, SrVal *b) {
  const SrInstance *x = instance(a), *y = instance(b);
  if (!x || !y || x->cls != y->cls) return NULL;
  const SrPyClass *c = class_of(x);
  for (; c && !(c->dataclass && c->dc_eq); c = base_of(c))
    if (dget(c->dict, "__eq__")) return NULL;
  if (!c) return NULL;
  for (int i = 0; i < c->nfields; i++) {
    SrVal *u = field_value(x, c->fields[i]), *v = field_value(y, c->fields[i]);
    if (!u || !v) return sr_bool(u == v);
    SrVal *r = sr_binop(I, SR_OP_EQ, u, v);
    if (!r) return NULL;
    int t = sr_truthy(I, r);
    sr_unref(r);
    if (t < 0) return NULL;
    if (!t) return sr_bool(0);
  }
  return sr_bool(1);
}

static SrVal *instance_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  const char *fwd = dunder(op, 0), *rev = dunder(op, 1);
  if (!fwd) return NULL;
  SrVal *r = NULL;
  if (instance(a) && (r = try_dunder(I, a, fwd, b))) return r;
  if (I->exc) return NULL;
  if (instance(b) && b != a && (r = try_dunder(I, b, rev, a))) return r;
  if (I->exc) return NULL;
  if (op == SR_OP_NE) {
    /* != is the negation of a defined == */
    SrVal *e = NULL;
    if (instance(a) && mro_lookup(class_of(instance(a)), "__eq__", NULL)) e = try_dunder(I, a, "__eq__", b);
    else if (instance(b) && mro_lookup(class_of(instance(b)), "__eq__", NULL)) e = try_dunder(I, b, "__eq__", a);
    if (!e && !I->exc) e = dc_equal(I, a, b);
    if (e) {
      int t = sr_truthy(I, e);
      sr_unref(e);
      return t < 0 ? NULL : sr_bool(!t);
    }
    if (I->exc) return NULL;
  }
  if (op == SR_OP_EQ && (r = dc_equal(I, a, b))) return r;
  if (I->exc) return NULL;
  /* a subclass of a built-in: the built-in's operators, on its value */
  const SrInstance *ia = instance(a), *ib = instance(b);
  if ((ia && ia->base) || (ib && ib->base))
    return sr_binop(I, op, ia && ia->base ? ia->base : a, ib && ib->base ? ib->base : b);
  /* a namedtuple is a tuple: its operators are a tuple's */
  SrVal *ta = as_tuple(a), *tb = as_tuple(b);
  if ((ta && ta != a) || (tb && tb != b)) {
    if (op == SR_OP_ADD || op == SR_OP_EQ || op == SR_OP_NE || op == SR_OP_LT || op == SR_OP_LE ||
        op == SR_OP_GT || op == SR_OP_GE)
      return ta && tb ? sr_binop(I, op, ta, tb) : op == SR_OP_EQ ? sr_bool(0) : op == SR_OP_NE ? sr_bool(1) : NULL;
    if (op == SR_OP_MUL) return sr_binop(I, op, ta ? ta : a, tb ? tb : b);
  }
  return NULL;
}

/* a op= b: a.__iadd__(b) and the like where a's class has it */
static SrVal *instance_inplace(SrInterp *I, int op, SrVal *a, SrVal *b) {
  const char *fwd = dunder(op, 0);
  if (!fwd || op == SR_OP_EQ || op == SR_OP_NE || op == SR_OP_LT || op == SR_OP_LE || op == SR_OP_GT ||
      op == SR_OP_GE || !instance(a))
    return NULL;
  char name[32];
  snprintf(name, sizeof name, "__i%s", fwd + 2);
  return try_dunder(I, a, name, b);
}

static SrVal *instance_unop(SrInterp *I, int op, SrVal *a) {
  const char *name = op == SR_OP_NEG ? "__neg__" : op == SR_OP_POS ? "__pos__" : op == SR_OP_INVERT ? "__invert__" : NULL;
  SrVal *base = instance(a) ? instance(a)->base : NULL;
  if (!name && base) {
    /* a subclass of int or float: its value is its __index__ (an int's)
       and its Python scalar */
    int num = base->kind == SR_V_INT || base->kind == SR_V_BOOL;
    if (op == SR_OP_INDEX) return num ? sr_ref(base) : NULL;
    if (op == SR_OP_ITEM) return num || base->kind == SR_V_FLOAT ? sr_ref(base) : NULL;
    if (op == SR_OP_ABS) return sr_unop(I, op, base);
    return NULL;
  }
  if (!name) return NULL;
  int found;
  SrVal *r = call_dunder(I, a, name, 0, NULL, &found);
  if (!found && instance(a) && instance(a)->base) return sr_unop(I, op, instance(a)->base);
  return found ? r : NULL;
}

int sr_class_contains(SrInterp *I, SrVal *item, SrVal *c) {
  if (!instance(c) || !mro_lookup(class_of(instance(c)), "__contains__", NULL)) return -2;
  int found;
  SrVal *r = call_dunder(I, c, "__contains__", 1, &item, &found);
  if (!r) return -1;
  int t = sr_truthy(I, r);
  sr_unref(r);
  return t;
}

/* ---- instances as pytree nodes ---- */

/* JAX registers a type, not its subclasses; any namedtuple is a node */
static const SrPyClass *tree_class(const SrInstance *o) {
  const SrPyClass *c = class_of(o);
  return c->tree ? c : nt_class(c);
}

/* flatten(x) or x.tree_flatten(): (children, aux), a new reference */
static SrVal *user_flatten(const SrPyClass *c, SrVal *self) {
  SrInterp *I = class_interp;
  if (!I) return NULL;
  SrVal *r;
  if (c->tree == SR_TREE_FUNCS) {
    r = sr_call1(I, c->tree_a, self);
  } else {
    SrVal *m = sr_getattr(I, self, "tree_flatten");
    SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
    r = m ? sr_call(I, m, &none) : NULL;
    sr_unref(m);
  }
  if (!r) return NULL;
  /* pytree.cc's checks: a pair, its children iterable */
  int bad = r->kind != SR_V_TUPLE || r->seq.n != 2;
  if (!bad) {
    SrVal *it = sr_iterate(I, r->seq.items[0]);
    if (!it) sr_exc_clear(I);
    bad = it ? 0 : 2;
    sr_unref(it);
  }
  if (bad) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, r);
    sr_raise(I, "ValueError",
             "The to_iterable function for a custom PyTree node should return a (children, aux_data) tuple%s, got %s",
             bad == 2 ? " where 'children' is iterable" : "", sr_buf_str(&b));
    sr_buf_free(&b);
    sr_unref(r);
    return NULL;
  }
  return r;
}

static SrVal *instance_tree_children(SrVal *self) {
  const SrInstance *o = self->obj.data;
  const SrPyClass *c = tree_class(o);
  if (!c) return NULL;
  if (c->namedtuple && !c->tree) return sr_iterate(class_interp, o->items);
  switch (c->tree) {
  case SR_TREE_STATIC: return sr_seq(NULL, SR_V_LIST, 0);
  case SR_TREE_DATACLASS: {
    SrVal *l = sr_seq(NULL, SR_V_LIST, c->tree_a->seq.n);
    for (int i = 0; i < c->tree_a->seq.n; i++) {
      SrVal *k = c->tree_a->seq.items[i];
      SrVal *x = dget(o->dict, sr_intern(k->str.s, k->str.n));
      sr_seq_push(NULL, l, sr_ref(x ? x : sr_none()));
    }
    return l;
  }
  default: {
    SrVal *pair = user_flatten(c, self);
    if (!pair) return sr_seq(NULL, SR_V_LIST, 0); /* the exception stays raised */
    SrInterp *I = class_interp;
    SrVal *l = sr_iterate(I, pair->seq.items[0]);
    sr_unref(pair);
    return l ? l : sr_seq(NULL, SR_V_LIST, 0);
  }
  }
}

static SrVal *instance_tree_rebuild(SrVal *like, SrVal *children) {
  const SrInstance *o = like->obj.data;
  const SrPyClass *c = tree_class(o);
  if (!c) return sr_ref(like);
  if (c->namedtuple && !c->tree) return nt_make(o->cls, children->seq.items, children->seq.n);
  switch (c->tree) {
  case SR_TREE_STATIC: return sr_ref(like);
  case SR_TREE_DATACLASS: {
    /* a copy with the data fields replaced (JAX's makes it without __init__ too) */
    SrVal *v = instance_new(o->cls);
    SrInstance *n = v->obj.data;
    for (int i = 0; i < o->dict->dict.n; i++)
      sr_dict_set(NULL, n->dict, sr_ref(o->dict->dict.keys[i]), sr_ref(o->dict->dict.vals[i]));
    for (int i = 0; i < c->tree_a->seq.n && i < children->seq.n; i++) {
      SrVal *k = c->tree_a->seq.items[i];
      sr_dict_set(NULL, n->dict, sr_ref(k), sr_ref(children->seq.items[i]));
    }
    return v;
  }
  default: {
    SrInterp *I = class_interp;
    SrVal *pair = user_flatten(c, like);
    if (!pair) return sr_ref(like);
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, children->seq.n);
    for (int i = 0; i < children->seq.n; i++) sr_seq_push(NULL, t, sr_ref(children->seq.items[i]));
    SrVal *args[2] = {pair->seq.items[1], t};
    SrArgs a = {2, args, 0, NULL, NULL, NULL};
    SrVal *fn = c->tree == SR_TREE_FUNCS ? sr_ref(c->tree_b) : sr_getattr(I, o->cls, "tree_unflatten");
    SrVal *r = fn ? sr_call(I, fn, &a) : NULL;
    sr_unref(fn);
    sr_unref(t);
    sr_unref(pair);
    return r ? r : sr_ref(like);
  }
  }
}

/* NAME[AUX] of a node (pytree.cc's ToString): a namedtuple's
   namedtuple[NAME], a static one's repr, a dataclass's meta fields, a
   flatten function's aux data */
static void instance_tree_head(SrVal *self, SrBuf *out) {
  const SrInstance *o = self->obj.data;
  const SrPyClass *c = tree_class(o);
  if (!c) return;
  if (c->namedtuple && !c->tree) {
    sr_buf_printf(out, "namedtuple[%s]", class_of(o)->name);
    return;
  }
  sr_buf_printf(out, "%s[", class_of(o)->name);
  switch (c->tree) {
  case SR_TREE_STATIC: sr_val_str(out, self); break;
  case SR_TREE_DATACLASS: {
    int n = c->tree_b ? c->tree_b->seq.n : 0;
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
    for (int i = 0; i < n; i++) {
      SrVal *k = c->tree_b->seq.items[i];
      SrVal *x = dget(o->dict, sr_intern(k->str.s, k->str.n));
      sr_seq_push(NULL, t, sr_ref(x ? x : sr_none()));
    }
    sr_val_repr(out, t);
    sr_unref(t);
    break;
  }
  default: {
    SrVal *pair = user_flatten(c, self);
    if (pair) sr_val_str(out, pair->seq.items[1]); /* pytree.cc prints str(aux_data) */
    else sr_buf_puts(out, "...");
    sr_unref(pair);
  }
  }
  sr_buf_putc(out, ']');
}

static const SrLangOps instance_ops = {
  .call = instance_call, .getattr = instance_getattr, .setattr = instance_setattr,
  .getitem = instance_getitem, .setitem = instance_setitem, .iter = instance_iter,
  .binop = instance_binop, .unop = instance_unop, .inplace = instance_inplace, .len = instance_len, .truthy = instance_truthy,
  .tree_children = instance_tree_children, .tree_rebuild = instance_tree_rebuild,
  .tree_head = instance_tree_head,
};
const SrClass sr_instance_class = {"object", instance_free, instance_repr, instance_str, &instance_ops};

/* namedtuples compare equal as tuples do, and dataclasses by their fields
   (sets, dict keys, `in`) */
static int instance_equal(const SrVal *a, const SrVal *b) {
  const SrInstance *x = a->obj.data, *y = b->obj.data;
  if (x->base || y->base) return x->base && y->base && sr_val_equal(x->base, y->base);
  if (x->items || y->items) return x->items && y->items && sr_val_equal(x->items, y->items);
  if (x->cls != y->cls) return 0;
  const SrPyClass *c = class_of(x);
  for (; c && !(c->dataclass && c->dc_eq); c = base_of(c))
    if (dget(c->dict, "__eq__")) return 0;
  if (!c) return 0;
  for (int i = 0; i < c->nfields; i++) {
    SrVal *u = field_value(x, c->fields[i]), *v = field_value(y, c->fields[i]);
    if (!u || !v ? u != v : !sr_val_equal(u, v)) return 0;
  }
  return 1;
}

int sr_class_register_pytree(SrInterp *I, SrVal *cls, int how, SrVal *a, SrVal *b) {
  SrPyClass *c = pyclass(cls);
  if (!c || c->nt_marker) {
    sr_raise(I, "TypeError", "shardrepl registers only classes defined by a class statement as pytree nodes, not '%s'",
             what_class(cls));
    return -1;
  }
  if (c->tree) {
    SrBuf b2 = SR_BUF_INIT;
    sr_val_repr(&b2, cls);
    sr_raise(I, "ValueError", "Duplicate custom PyTreeDef type registration for %s.", b2.p);
    sr_buf_free(&b2);
    return -1;
  }
  if (how == SR_TREE_DATACLASS) {
    SrVal *data = a ? sr_iterate(I, a) : NULL;
    if (a && !data) return -1;
    if (!data) {
      const SrPyClass *dc = c;
      while (dc && !dc->dataclass) dc = base_of(dc);
      if (!dc) {
        SrBuf b2 = SR_BUF_INIT;
        sr_val_repr(&b2, cls);
        sr_raise(I, "TypeError", "register_dataclass: data_fields and meta_fields are required when nodetype is not a dataclass. Got nodetype=%s.",
                 b2.p);
        sr_buf_free(&b2);
        return -1;
      }
      /* every field is data but the static ones (field(metadata={'static': True})) */
      data = sr_seq(NULL, SR_V_LIST, dc->nfields);
      for (int i = 0; i < dc->nfields; i++)
        if (!dc->statics[i]) sr_seq_push(NULL, data, sr_str_cstr(NULL, dc->fields[i]));
    }
    for (int i = 0; i < data->seq.n; i++)
      if (data->seq.items[i]->kind != SR_V_STR) {
        sr_raise(I, "TypeError", "data_fields must be names (str), not %s", sr_val_kind_name(data->seq.items[i]));
        sr_unref(data);
        return -1;
      }
    /* the meta fields, whose values are the aux data a PyTreeDef prints */
    SrVal *meta = a && b ? sr_iterate(I, b) : NULL;
    if (a && b && !meta) {
      sr_unref(data);
      return -1;
    }
    if (!meta) {
      meta = sr_seq(NULL, SR_V_LIST, 0);
      const SrPyClass *dc = c;
      while (dc && !dc->dataclass) dc = base_of(dc);
      for (int i = 0; dc && i < dc->nfields; i++) {
        int is_data = 0;
        for (int k = 0; k < data->seq.n; k++)
          is_data |= data->seq.items[k]->str.n == strlen(dc->fields[i]) &&
                     !memcmp(data->seq.items[k]->str.s, dc->fields[i], data->seq.items[k]->str.n);
        if (!is_data) sr_seq_push(NULL, meta, sr_str_cstr(NULL, dc->fields[i]));
      }
    }
    for (int i = 0; i < meta->seq.n; i++)
      if (meta->seq.items[i]->kind != SR_V_STR) {
        sr_raise(I, "TypeError", "meta_fields must be names (str), not %s", sr_val_kind_name(meta->seq.items[i]));
        sr_unref(data);
        sr_unref(meta);
        return -1;
      }
    c->tree_a = data;
    c->tree_b = meta;
  } else {
    c->tree_a = sr_ref(a);
    c->tree_b = sr_ref(b);
  }
  c->tree = (uint8_t)how;
  return 0;
}

int sr_class_set_tree_keys(SrInterp *I, SrVal *cls, SrVal *fn) {
  SrPyClass *c = pyclass(cls);
  if (!c || !c->tree) {
    sr_raise(I, "TypeError", "set_tree_keys: not a registered class");
    return -1;
  }
  sr_unref(c->tree_keys);
  c->tree_keys = sr_ref(fn);
  return 0;
}

static SrVal *attr_keys(const char *const *names, int n) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) {
    SrVal *it[2] = {sr_int(NULL, 1), sr_str_cstr(NULL, names[i])};
    sr_seq_push(NULL, l, sr_tuple(NULL, 2, it));
  }
  return l;
}

SrVal *sr_class_tree_keys(SrInterp *I, SrVal *v) {
  if (v->kind != SR_V_OBJ || v->obj.cls != &sr_instance_class) return NULL;
  const SrInstance *o = v->obj.data;
  const SrPyClass *c = tree_class(o);
  if (!c) return NULL;
  if (c->namedtuple && !c->tree) return attr_keys(c->fields, c->nfields);
  if (c->tree == SR_TREE_DATACLASS) {
    int n = c->tree_a->seq.n;
    const char **names = sr_xcalloc((size_t)n + 1, sizeof *names);
    for (int i = 0; i < n; i++) names[i] = c->tree_a->seq.items[i]->str.s;
    SrVal *l = attr_keys(names, n);
    free(names);
    return l;
  }
  if (!c->tree_keys) return NULL;
  SrVal *r = sr_call1(I, c->tree_keys, v);
  if (!r) return NULL;
  /* pytree.cc's ToIterableWithKeys and its messages */
  static const char what[] = "The to_iterable_with_keys function for a custom PyTree node should return a "
                             "(key_leaf_pairs, aux_data) tuple";
  SrBuf m = SR_BUF_INIT;
  if (r->kind != SR_V_TUPLE || r->seq.n != 2) {
    sr_to_repr(I, &m, r);
    sr_raise(I, "ValueError", "%s, got %s", what, sr_buf_str(&m));
    sr_buf_free(&m);
    sr_unref(r);
    return NULL;
  }
  SrVal *kc = sr_iterate(I, r->seq.items[0]);
  if (!kc) {
    sr_exc_clear(I);
    sr_to_repr(I, &m, r);
    sr_raise(I, "ValueError", "%s where 'key_leaf_pairs' is iterable, got %s", what, sr_buf_str(&m));
    sr_buf_free(&m);
    sr_unref(r);
    return NULL;
  }
  sr_unref(r);
  SrVal *l = sr_seq(NULL, SR_V_LIST, kc->seq.n);
  for (int i = 0; i < kc->seq.n; i++) {
    SrVal *e = kc->seq.items[i];
    if (e->kind != SR_V_TUPLE || e->seq.n != 2) {
      sr_unref(l);
      sr_to_repr(I, &m, e);
      sr_unref(kc);
      sr_raise(I, "ValueError", "%s where 'child%s", what, sr_buf_str(&m)); /* sic */
      sr_buf_free(&m);
      return NULL;
    }
    SrVal *it[2] = {sr_int(NULL, 0), sr_ref(e->seq.items[0])};
    sr_seq_push(NULL, l, sr_tuple(NULL, 2, it));
  }
  sr_unref(kc);
  return l;
}

int sr_class_namedtuple_kind(const SrVal *v) {
  const SrInstance *o = instance(v);
  if (!o || !o->items) return 0;
  const SrPyClass *c = tree_class(o);
  return c && c->namedtuple && !c->tree ? 2 : 1;
}

int sr_class_tree_kind(const SrVal *v) {
  const SrInstance *o = instance(v);
  const SrPyClass *c = o ? tree_class(o) : NULL;
  return c ? c->tree : SR_TREE_NONE;
}

int sr_class_is_tree_node(const SrVal *cls) {
  const SrPyClass *c = pyclass(cls);
  return c && !c->nt_marker && (c->tree || nt_class(c));
}

SrVal *sr_class_tree_aux(SrInterp *I, SrVal *v) {
  if (v->kind != SR_V_OBJ || v->obj.cls != &sr_instance_class) return NULL;
  const SrInstance *o = v->obj.data;
  const SrPyClass *c = tree_class(o);
  if (!c) return NULL;
  if (c->namedtuple && !c->tree) return sr_ref(o->cls);
  switch (c->tree) {
  case SR_TREE_STATIC: return sr_ref(v);
  case SR_TREE_DATACLASS: {
    int n = c->tree_b ? c->tree_b->seq.n : 0;
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
    for (int i = 0; i < n; i++) {
      SrVal *k = c->tree_b->seq.items[i];
      SrVal *x = dget(o->dict, sr_intern(k->str.s, k->str.n));
      sr_seq_push(NULL, t, sr_ref(x ? x : sr_none()));
    }
    return t;
  }
  default: {
    (void)I;
    SrVal *pair = user_flatten(c, v);
    if (!pair) return NULL;
    SrVal *aux = sr_ref(pair->seq.items[1]);
    sr_unref(pair);
    return aux;
  }
  }
}

/* ---- isinstance, issubclass, super ---- */

static int type_like(SrVal *v);

int sr_class_isinstance(SrVal *x, SrVal *t) {
  if (t == sr_lookup_qualname("builtins.object")) return 1;
  /* isinstance(c, type): classes, built-in types and the objects standing
     for one */
  if (t == sr_lookup_qualname("builtins.type")) return pyclass(x) || type_like(x) || sr_exception_type_name(x);
  const SrInstance *o = instance(x);
  if (t == sr_lookup_qualname("builtins.tuple") && o && o->items) return 1;
  if (o && o->base) { /* class C(int): an int (bool's subclass int too) */
    SrVal *bb = builtin_base(class_of(o));
    if (t == bb || (t == sr_lookup_qualname("builtins.int") && bb == sr_lookup_qualname("builtins.bool"))) return 1;
  }
  SrPyClass *c = pyclass(t);
  if (!c) return -1;
  return o ? is_subclass(class_of(o), c) : 0;
}

/* A type object that no class statement made: a built-in type, or an
   object standing for one (jax.Array, with its isinstance check). */
static int type_like(SrVal *v) {
  const SrLangOps *ops = v->kind == SR_V_OBJ ? sr_ops(v) : NULL;
  return sr_builtin_type_name(v) != NULL || (ops && ops->instancecheck);
}

static SrVal *bi_issubclass(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "issubclass expected 2 arguments, got %d", a->n);
  const char *e1 = sr_exception_type_name(a->v[0]), *e2 = sr_exception_type_name(a->v[1]);
  if (e1 && e2) return sr_bool(sr_exception_is_a(e1, e2));
  SrPyClass *c = pyclass(a->v[0]);
  int builtin_type = !c && type_like(a->v[0]);
  if (!c && !builtin_type && a->v[0] != sr_lookup_qualname("builtins.object"))
    return sr_raise(I, "TypeError", "issubclass() arg 1 must be a class");
  SrVal *t = a->v[1];
  if (t->kind == SR_V_TUPLE) {
    for (int i = 0; i < t->seq.n; i++) {
      SrArgs b = {2, (SrVal *[]){a->v[0], t->seq.items[i]}, 0, NULL, NULL, NULL};
      SrVal *r = bi_issubclass(I, &b);
      if (!r || r->i) return r;
    }
    return sr_bool(0);
  }
  if (t == sr_lookup_qualname("builtins.object")) return sr_bool(1);
  if (t == sr_lookup_qualname("builtins.tuple")) return sr_bool((c && nt_class(c)) || a->v[0] == t);
  /* a built-in type (int, numpy.ndarray, jax.Array): a subclass of itself,
     bool of int; of no class a class statement made, nor they of it */
  /* ArrayImpl is jax.Array's implementation (basearray.Array's subclass) */
  const char *n1 = builtin_type ? sr_builtin_type_name(a->v[0]) : NULL;
  if (n1 && strcmp(n1, "jaxlib._jax.ArrayImpl") == 0 && t == sr_lookup_qualname("jax.Array")) return sr_bool(1);
  if (builtin_type || (!pyclass(t) && type_like(t)))
    return sr_bool(a->v[0] == t ||
                   (a->v[0] == sr_lookup_qualname("builtins.bool") && t == sr_lookup_qualname("builtins.int")));
  SrPyClass *d = pyclass(t);
  if (!d) return sr_raise(I, "TypeError", "issubclass() arg 2 must be a class, a tuple of classes, or a union");
  return sr_bool(c && is_subclass(c, d));
}

typedef struct Super {
  SrVal *cls, *self;
} Super;

static void super_free(void *d) {
  Super *s = d;
  sr_unref(s->cls);
  sr_unref(s->self);
  free(s);
}

static void super_repr(SrBuf *out, const SrVal *v) {
  const Super *s = v->obj.data;
  sr_buf_printf(out, "<super: <class '%s'>, <%s object>>", ((SrPyClass *)s->cls->obj.data)->name,
                sr_val_kind_name(s->self));
}

static SrVal *super_getattr(SrInterp *I, SrVal *self, const char *name) {
  const Super *s = self->obj.data;
  SrVal *owner = pyclass(s->self) ? s->self : sr_class_of(s->self);
  int is_inst = !pyclass(s->self);
  /* the classes after s->cls in the MRO of self's class */
  const SrPyClass *oc = owner->obj.data, *sc = s->cls->obj.data;
  int at = 0;
  while (at < oc->nmro && oc->mro[at] != sc) at++;
  for (int i = at + 1; i < oc->nmro; i++) {
    const SrPyClass *k = oc->mro[i];
    SrVal *v = dget(k->dict, name);
    if (v) return bind(I, v, is_inst ? s->self : NULL, owner);
    if (strcmp(name, "__init__") == 0 && k->dc_init && is_inst) {
      /* a dataclass's generated __init__ */
      return method_new(sr_lookup_qualname("dataclasses._init"), s->self);
    }
  }
  if (strcmp(name, "__init__") == 0 && is_inst) return method_new(sr_lookup_qualname("builtins.object.__init__"), s->self);
  return sr_raise(I, "AttributeError", "'super' object has no attribute '%s'", name);
}

static const SrLangOps super_ops = {.getattr = super_getattr};
static const SrClass super_class = {"super", super_free, super_repr, NULL, &super_ops};

SrVal *sr_class_super(SrInterp *I, SrVal *cls, SrVal *self) {
  if (!pyclass(cls)) return sr_raise(I, "TypeError", "super() argument 1 must be a type, not %s", sr_val_kind_name(cls));
  SrPyClass *sc = pyclass(self);
  const SrInstance *o = instance(self);
  if (!(sc && is_subclass(sc, cls->obj.data)) && !(o && is_subclass(class_of(o), cls->obj.data)))
    return sr_raise(I, "TypeError", "super(type, obj): obj must be an instance or subtype of type");
  Super *s = sr_xcalloc(1, sizeof *s);
  s->cls = sr_ref(cls);
  s->self = sr_ref(self);
  return sr_obj(&super_class, s);
}

static SrVal *bi_super(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "RuntimeError", "super(): no arguments");
  return sr_class_super(I, a->v[0], a->v[1]);
}

/* object.__init__(self): accepts no arguments */
static SrVal *bi_object_init(SrInterp *I, SrArgs *a) {
  if (a->n > 1 || a->nkw) return sr_raise(I, "TypeError", "object.__init__() takes exactly one argument (the instance to initialize)");
  return sr_none();
}

/* the generated __init__ of a dataclass, called through super() */
static SrVal *bi_dc_init(SrInterp *I, SrArgs *a) {
  const SrInstance *o = a->n ? instance(a->v[0]) : NULL;
  if (!o) return sr_raise(I, "TypeError", "__init__() needs an instance");
  const SrPyClass *c = class_of(o);
  while (c && !c->dc_init) c = base_of(c);
  if (!c) return sr_raise(I, "TypeError", "__init__() of a class that is not a dataclass");
  SrArgs b = {a->n - 1, a->v + 1, a->nkw, a->kw, a->kwv, NULL};
  return dc_init(I, c, a->v[0], &b) < 0 ? NULL : sr_none();
}

/* ---- typing.NamedTuple and collections.namedtuple ---- */

static int valid_identifier(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
          (unsigned char)*s >= 0x80))
      return 0;
  return 1;
}

/* a namedtuple class named name with fields names[n] (defaults: the last
   ones' values, or NULL) */
static SrVal *make_namedtuple(SrInterp *I, const char *name, const char **names, int n, SrVal *defaults) {
  if (!valid_identifier(name))
    return sr_raise(I, "ValueError", "Type names and field names must be valid identifiers: '%s'", name);
  for (int i = 0; i < n; i++) {
    if (!valid_identifier(names[i]))
      return sr_raise(I, "ValueError", "Type names and field names must be valid identifiers: '%s'", names[i]);
    if (names[i][0] == '_')
      return sr_raise(I, "ValueError", "Field names cannot start with an underscore: '%s'", names[i]);
    for (int k = 0; k < i; k++)
      if (names[k] == names[i]) return sr_raise(I, "ValueError", "Encountered duplicate field name: '%s'", names[i]);
  }
  SrVal **defs = sr_xcalloc((size_t)n + 1, sizeof *defs);
  if (defaults) {
    SrVal *dl = sr_iterate(I, defaults);
    if (!dl) {
      free(defs);
      return NULL;
    }
    if (dl->seq.n > n) {
      sr_unref(dl);
      free(defs);
      return sr_raise(I, "TypeError", "Got more default values than field names");
    }
    for (int i = 0; i < dl->seq.n; i++) defs[n - dl->seq.n + i] = sr_ref(dl->seq.items[i]);
    sr_unref(dl);
  }
  SrVal *ns = sr_dict(NULL);
  dset(ns, "__module__", sr_str_cstr(NULL, "__main__"));
  SrPyClass *c = class_alloc(name, NULL, ns);
  c->namedtuple = 1;
  set_fields(c, n, names, defs, NULL);
  free(defs);
  return sr_obj(&sr_type_class, c);
}

/* field names: a list of str, or one str of names split at commas and blanks */
static const char **field_names(SrInterp *I, SrVal *v, int *n) {
  SrVal *l;
  if (v->kind == SR_V_STR) {
    l = sr_seq(NULL, SR_V_LIST, 0);
    const char *s = v->str.s, *e = s + v->str.n;
    while (s < e) {
      while (s < e && (*s == ',' || *s == ' ' || *s == '\t' || *s == '\n')) s++;
      const char *w = s;
      while (s < e && !(*s == ',' || *s == ' ' || *s == '\t' || *s == '\n')) s++;
      if (s > w) sr_seq_push(NULL, l, sr_str(NULL, w, (size_t)(s - w)));
    }
  } else if (!(l = sr_iterate(I, v))) {
    return NULL;
  }
  const char **names = sr_xcalloc((size_t)l->seq.n + 1, sizeof *names);
  for (int i = 0; i < l->seq.n; i++) {
    SrVal *x = l->seq.items[i];
    /* NamedTuple('P', [('x', int), ...]) */
    if (x->kind == SR_V_TUPLE && x->seq.n == 2) x = x->seq.items[0];
    if (!(names[i] = sr_as_str(I, x, "Type names and field names"))) {
      free(names);
      sr_unref(l);
      return NULL;
    }
  }
  *n = l->seq.n;
  sr_unref(l);
  return names;
}

static SrVal *bi_namedtuple(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "namedtuple", "typename, field_names, *, rename=, defaults=, module=", p) < 0) return NULL;
  const char *name = sr_as_str(I, p[0], "typename");
  if (!name) return NULL;
  int n;
  const char **names = field_names(I, p[1], &n);
  if (!names) return NULL;
  SrVal *r = make_namedtuple(I, name, names, n, p[3] && p[3]->kind != SR_V_NONE ? p[3] : NULL);
  free(names);
  return r;
}

/* NamedTuple('P', [('x', int), ('y', float)]) */
static SrVal *namedtuple_call(SrInterp *I, SrVal *cls, const SrPyClass *nt, SrArgs *a) {
  (void)cls, (void)nt;
  if (a->n != 2) return sr_raise(I, "TypeError", "NamedTuple() takes a name and a list of (name, type) pairs");
  const char *name = sr_as_str(I, a->v[0], "typename");
  if (!name) return NULL;
  int n;
  const char **names = field_names(I, a->v[1], &n);
  if (!names) return NULL;
  SrVal *r = make_namedtuple(I, name, names, n, NULL);
  free(names);
  return r;
}

/* ---- dataclasses ---- */

/* dataclasses.MISSING, one object (a field's default `is` it) */
static SrVal *dc_missing(void) {
  static SrVal *missing;
  if (!missing) missing = sr_word(NULL, "MISSING", 7);
  return sr_ref(missing);
}

typedef struct Field {
  const char *name;
  SrVal *deflt, *factory, *type, *metadata;
  int init, repr, compare;
} Field;

/* field(metadata={'static': True}): JAX's register_dataclass makes it a meta field */
static int field_static(const Field *f) {
  if (!f->metadata || f->metadata->kind != SR_V_DICT) return 0;
  SrVal *v = dget(f->metadata, "static");
  return v && sr_val_truthy(v);
}

static void field_free(void *d) {
  Field *f = d;
  sr_unref(f->deflt);
  sr_unref(f->factory);
  sr_unref(f->type);
  sr_unref(f->metadata);
  free(f);
}

static void field_repr(SrBuf *out, const SrVal *v) {
  const Field *f = v->obj.data;
  sr_buf_printf(out, "Field(name=%s%s%s,type=", f->name ? "'" : "", f->name ? f->name : "None", f->name ? "'" : "");
  if (f->type) sr_val_str(out, f->type);
  else sr_buf_puts(out, "None");
  sr_buf_puts(out, ",default=");
  if (f->deflt) sr_val_repr(out, f->deflt);
  else sr_buf_puts(out, "<dataclasses._MISSING_TYPE object>");
  sr_buf_puts(out, ")");
}

static SrVal *field_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const Field *f = self->obj.data;
  if (strcmp(name, "name") == 0) return f->name ? sr_str_cstr(NULL, f->name) : sr_none();
  if (strcmp(name, "type") == 0) return sr_ref(f->type ? f->type : sr_none());
  if (strcmp(name, "default") == 0) return f->deflt ? sr_ref(f->deflt) : dc_missing();
  if (strcmp(name, "default_factory") == 0) return f->factory ? sr_ref(f->factory) : dc_missing();
  if (strcmp(name, "init") == 0) return sr_bool(f->init);
  if (strcmp(name, "repr") == 0) return sr_bool(f->repr);
  if (strcmp(name, "compare") == 0) return sr_bool(f->compare);
  if (strcmp(name, "metadata") == 0) return f->metadata ? sr_ref(f->metadata) : sr_dict(NULL);
  return NULL;
}

static const SrLangOps field_ops = {.getattr = field_getattr};

static int field_init(const SrVal *fobj) { return ((const Field *)fobj->obj.data)->init; }
static const SrClass field_class = {"Field", field_free, field_repr, NULL, &field_ops};

static SrVal *bi_field(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  if (a->n) return sr_raise(I, "TypeError", "field() takes 0 positional arguments but %d were given", a->n);
  if (sr_args_parse(I, a, "field", "*, default=, default_factory=, init=, repr=, hash=, compare=, metadata=, kw_only=", p) < 0)
    return NULL;
  if (p[0] && p[1]) return sr_raise(I, "ValueError", "cannot specify both default and default_factory");
  Field *f = sr_xcalloc(1, sizeof *f);
  f->deflt = sr_ref(p[0]);
  f->factory = sr_ref(p[1]);
  f->init = p[2] ? sr_val_truthy(p[2]) : 1;
  f->repr = p[3] ? sr_val_truthy(p[3]) : 1;
  f->compare = p[5] ? sr_val_truthy(p[5]) : 1;
  f->metadata = p[6] && p[6]->kind == SR_V_DICT ? sr_ref(p[6]) : NULL;
  return sr_obj(&field_class, f);
}

static int is_mutable_default(const SrVal *v) {
  return v->kind == SR_V_LIST || v->kind == SR_V_DICT || v->kind == SR_V_SET;
}

/* dataclass(cls) with the options of opts (frozen, eq, repr, init) */
static SrVal *make_dataclass(SrInterp *I, SrVal *cls, int frozen, int eq, int repr, int init) {
  SrPyClass *c = pyclass(cls);
  if (!c || c->nt_marker || c->namedtuple)
    return sr_raise(I, "TypeError", "dataclass() should be called on a class defined by a class statement, not %s",
                    sr_val_kind_name(cls));
  /* the base dataclasses' fields first, then this class's annotations */
  const SrPyClass *bc = base_of(c);
  while (bc && !bc->dataclass) bc = base_of(bc);
  SrVal *ann = dget(c->dict, "__annotations__");
  int nann = ann && ann->kind == SR_V_DICT ? ann->dict.n : 0;
  int cap = (bc ? bc->nfields : 0) + nann;
  const char **names = sr_xcalloc((size_t)cap + 1, sizeof *names);
  SrVal **defs = sr_xcalloc((size_t)cap + 1, sizeof *defs), **facts = sr_xcalloc((size_t)cap + 1, sizeof *facts);
  uint8_t *statics = sr_xcalloc((size_t)cap + 1, 1);
  SrVal **fobjs = sr_xcalloc((size_t)cap + 1, sizeof *fobjs);
  int n = 0;
  for (int i = 0; bc && i < bc->nfields; i++, n++) {
    names[n] = bc->fields[i];
    statics[n] = bc->statics[i];
    fobjs[n] = bc->fobjs ? sr_ref(bc->fobjs[i]) : NULL;
    defs[n] = sr_ref(bc->defaults[i]);
    facts[n] = sr_ref(bc->factories[i]);
  }
  SrVal *err = NULL;
  for (int i = 0; i < nann && !err; i++) {
    SrVal *k = ann->dict.keys[i], *t = ann->dict.vals[i];
    const char *fname = sr_intern(k->str.s, k->str.n);
    if (t->kind == SR_V_STR && (strncmp(t->str.s, "ClassVar", 8) == 0 || strncmp(t->str.s, "typing.ClassVar", 15) == 0))
      continue;
    int at = n;
    for (int q = 0; q < n; q++)
      if (names[q] == fname) at = q;
    SrVal *d = dget(c->dict, fname), *deflt = NULL, *fact = NULL;
    statics[at] = 0;
    if (at < n) sr_unref(fobjs[at]);
    fobjs[at] = d && sr_is_obj(d, &field_class) ? sr_ref(d) : NULL;
    if (d && sr_is_obj(d, &field_class)) {
      const Field *f = d->obj.data;
      statics[at] = (uint8_t)field_static(f);
      deflt = sr_ref(f->deflt);
      fact = sr_ref(f->factory);
      if (f->deflt) dset(c->dict, fname, sr_ref(f->deflt));
      else ddel(c->dict, fname);
    } else if (d) {
      if (is_mutable_default(d)) {
        err = sr_raise(I, "ValueError", "mutable default <class '%s'> for field %s is not allowed: use default_factory",
                       sr_val_kind_name(d), fname);
        break;
      }
      deflt = sr_ref(d);
    }
    if (at == n) n++;
    else sr_unref(defs[at]), sr_unref(facts[at]);
    names[at] = fname;
    defs[at] = deflt;
    facts[at] = fact;
  }
  /* the fields of __init__ (init=True): no default after a default */
  for (int i = 0, prev = 0; i < n && !err && init; i++) {
    if (fobjs[i] && !((const Field *)fobjs[i]->obj.data)->init) continue;
    int has = defs[i] || facts[i];
    if (!has && prev) err = sr_raise(I, "TypeError", "non-default argument '%s' follows default argument", names[i]);
    prev |= has;
  }
  if (err || I->exc) {
    for (int i = 0; i < n; i++) sr_unref(defs[i]), sr_unref(facts[i]), sr_unref(fobjs[i]);
    free(fobjs);
    free(names);
    free(defs);
    free(facts);
    free(statics);
    return NULL;
  }
  for (int i = 0; i < c->nfields; i++) {
    sr_unref(c->defaults[i]);
    sr_unref(c->factories[i]);
  }
  for (int i = 0; c->fobjs && i < c->nfields; i++) sr_unref(c->fobjs[i]);
  free(c->fobjs);
  free(c->fields);
  free(c->defaults);
  free(c->factories);
  set_fields(c, n, names, defs, facts);
  memcpy(c->statics, statics, (size_t)n);
  c->fobjs = fobjs;
  free(names);
  free(defs);
  free(facts);
  free(statics);
  c->dataclass = 1;
  c->frozen = (uint8_t)frozen;
  c->dc_eq = (uint8_t)eq && !dget(c->dict, "__eq__");
  c->dc_repr = (uint8_t)repr && !dget(c->dict, "__repr__");
  c->dc_init = (uint8_t)init && !dget(c->dict, "__init__");
  return sr_ref(cls);
}

typedef struct DcOpts {
  int frozen, eq, repr, init;
} DcOpts;

static SrVal *dc_decorator(SrInterp *I, SrArgs *a) {
  const DcOpts *o = sr_current_builtin(I)->data;
  if (a->n != 1) return sr_raise(I, "TypeError", "dataclass() takes one class");
  return make_dataclass(I, a->v[0], o->frozen, o->eq, o->repr, o->init);
}

static SrVal *bi_dataclass(SrInterp *I, SrArgs *a) {
  SrVal *p[10];
  if (sr_args_parse(I, a, "dataclass", "cls=, *, init=, repr=, eq=, order=, unsafe_hash=, frozen=, match_args=, kw_only=, slots=", p) < 0)
    return NULL;
  DcOpts o = {p[6] && sr_val_truthy(p[6]), !p[3] || sr_val_truthy(p[3]), !p[2] || sr_val_truthy(p[2]),
              !p[1] || sr_val_truthy(p[1])};
  if (p[0] && p[0]->kind != SR_V_NONE) return make_dataclass(I, p[0], o.frozen, o.eq, o.repr, o.init);
  DcOpts *d = sr_xmalloc(sizeof *d);
  *d = o;
  return sr_builtin_with("dataclass", dc_decorator, d, free);
}

static const SrPyClass *dc_class(SrVal *v) {
  const SrInstance *o = instance(v);
  const SrPyClass *c = o ? class_of(o) : pyclass(v);
  while (c && !c->dataclass) c = base_of(c);
  return c;
}

static SrVal *bi_is_dataclass(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "is_dataclass() takes exactly one argument");
  return sr_bool(dc_class(a->v[0]) != NULL);
}

static SrVal *bi_fields(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "fields() takes exactly one argument");
  const SrPyClass *c = dc_class(a->v[0]);
  if (!c) return sr_raise(I, "TypeError", "must be called with a dataclass type or instance");
  SrVal *ann = NULL;
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, c->nfields);
  for (int i = 0; i < c->nfields; i++) {
    Field *f = sr_xcalloc(1, sizeof *f);
    f->name = c->fields[i];
    f->deflt = sr_ref(c->defaults[i]);
    f->factory = sr_ref(c->factories[i]);
    for (const SrPyClass *k = c; k && !f->type; k = base_of(k))
      if ((ann = dget(k->dict, "__annotations__")) && ann->kind == SR_V_DICT) f->type = sr_ref(dget(ann, f->name));
    f->init = f->repr = f->compare = 1;
    const Field *given = c->fobjs && c->fobjs[i] ? c->fobjs[i]->obj.data : NULL;
    if (given) { /* what field(...) said */
      f->init = given->init;
      f->repr = given->repr;
      f->compare = given->compare;
      f->metadata = sr_ref(given->metadata);
    }
    sr_seq_push(NULL, t, sr_obj(&field_class, f));
  }
  return t;
}

/* asdict: dataclasses, and the lists, tuples and dicts around them, copied */
static SrVal *asdict_rec(SrInterp *I, SrVal *v, int depth) {
  if (depth > SR_VAL_MAX_NEST) return sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
  const SrPyClass *c = instance(v) ? dc_class(v) : NULL;
  if (c) {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < c->nfields; i++) {
      SrVal *x = field_value(instance(v), c->fields[i]);
      SrVal *y = asdict_rec(I, x ? x : sr_none(), depth + 1);
      if (!y) {
        sr_unref(d);
        return NULL;
      }
      dset(d, c->fields[i], y);
    }
    return d;
  }
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    SrVal *r = sr_seq(NULL, v->kind, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) {
      SrVal *y = asdict_rec(I, v->seq.items[i], depth + 1);
      if (!y) {
        sr_unref(r);
        return NULL;
      }
      sr_seq_push(NULL, r, y);
    }
    return r;
  }
  if (v->kind == SR_V_DICT) {
    SrVal *r = sr_dict(NULL);
    for (int i = 0; i < v->dict.n; i++) {
      SrVal *y = asdict_rec(I, v->dict.vals[i], depth + 1);
      if (!y) {
        sr_unref(r);
        return NULL;
      }
      sr_dict_set(NULL, r, sr_ref(v->dict.keys[i]), y);
    }
    return r;
  }
  return sr_ref(v);
}

static SrVal *bi_asdict(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "asdict() takes exactly one argument");
  if (!instance(a->v[0]) || !dc_class(a->v[0])) return sr_raise(I, "TypeError", "asdict() should be called on dataclass instances");
  return asdict_rec(I, a->v[0], 0);
}

static SrVal *bi_replace(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "replace() takes 1 positional argument but %d were given", a->n);
  const SrInstance *o = instance(a->v[0]);
  const SrPyClass *c = o ? dc_class(a->v[0]) : NULL;
  if (!c) return sr_raise(I, "TypeError", "replace() should be called on dataclass instances");
  for (int k = 0; k < a->nkw; k++) {
    int found = 0;
    for (int i = 0; i < c->nfields; i++) found |= c->fields[i] == a->kw[k];
    if (!found)
      return sr_raise(I, "TypeError", "%s.__init__() got an unexpected keyword argument '%s'", class_of(o)->name, a->kw[k]);
  }
  /* the fields as keywords, the changes over them */
  const char **kw = sr_xcalloc((size_t)c->nfields + 1, sizeof *kw);
  SrVal **kwv = sr_xcalloc((size_t)c->nfields + 1, sizeof *kwv);
  for (int i = 0; i < c->nfields; i++) {
    kw[i] = c->fields[i];
    kwv[i] = field_value(o, c->fields[i]);
    for (int k = 0; k < a->nkw; k++)
      if (a->kw[k] == kw[i]) kwv[i] = a->kwv[k];
    if (!kwv[i]) kwv[i] = sr_none();
  }
  SrArgs b = {0, NULL, c->nfields, kw, kwv, NULL};
  SrVal *r = sr_call(I, o->cls, &b);
  free(kw);
  free(kwv);
  return r;
}

/* ---- hash() ---- */

/* CPython's numeric hashes (Python/pyhash.c, Objects/longobject.c), so
   that equal numbers hash alike and ints hash as CPython's do; tuples
   by CPython's xxHash-based tuplehash; strings by FNV-1a (CPython's are
   salted per process anyway). */
#define HASH_MODULUS (((uint64_t)1 << 61) - 1)

static int64_t hash_int(int64_t v) {
  uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  int64_t h = (int64_t)(m % HASH_MODULUS);
  if (v < 0) h = -h;
  return h == -1 ? -2 : h;
}

static int64_t hash_float(double v) {
  if (isinf(v)) return v > 0 ? 314159 : -314159;
  if (isnan(v)) return 0;
  int e;
  double m = frexp(v, &e);
  int sign = 1;
  if (m < 0) sign = -1, m = -m;
  uint64_t x = 0;
  while (m) {
    x = ((x << 28) & HASH_MODULUS) | x >> (61 - 28);
    m *= 268435456.0;
    e -= 28;
    uint64_t y = (uint64_t)m;
    m -= (double)y;
    x += y;
    if (x >= HASH_MODULUS) x -= HASH_MODULUS;
  }
  e = e >= 0 ? e % 61 : 61 - 1 - ((-1 - e) % 61);
  x = ((x << e) & HASH_MODULUS) | x >> (61 - e);
  int64_t h = (int64_t)x * sign;
  return h == -1 ? -2 : h;
}

static int hash_value(SrInterp *I, SrVal *v, int64_t *out, int depth) {
  if (depth > SR_VAL_MAX_NEST) {
    sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
    return -1;
  }
  SrInstance *o = instance(v);
  switch (v->kind) {
  case SR_V_NONE: *out = 0x5f1e; return 0;
  case SR_V_BOOL:
  case SR_V_INT: *out = hash_int(v->i); return 0;
  case SR_V_FLOAT: *out = v->f == (double)(int64_t)v->f && fabs(v->f) < 9e18 ? hash_int((int64_t)v->f) : hash_float(v->f); return 0;
  case SR_V_COMPLEX: {
    uint64_t h = (uint64_t)hash_float(v->c.re) + 1000003u * (uint64_t)hash_float(v->c.im);
    *out = (int64_t)h == -1 ? -2 : (int64_t)h;
    return 0;
  }
  case SR_V_STR:
  case SR_V_WORD: {
    uint64_t h = 14695981039346656037u;
    for (size_t i = 0; i < v->str.n; i++) h = (h ^ (unsigned char)v->str.s[i]) * 1099511628211u;
    *out = (int64_t)(h >> 1);
    return 0;
  }
  case SR_V_TUPLE:
  case SR_V_FROZENSET: {
    const uint64_t p1 = 11400714785074694791u, p2 = 14029467366897019727u, p5 = 2870177450012600261u;
    uint64_t acc = p5;
    for (int i = 0; i < v->seq.n; i++) {
      int64_t lane;
      if (hash_value(I, v->seq.items[i], &lane, depth + 1) < 0) return -1;
      acc += (uint64_t)lane * p2;
      acc = (acc << 31) | (acc >> 33);
      acc *= p1;
    }
    acc += (uint64_t)v->seq.n ^ (p5 ^ 3527539u);
    *out = acc == (uint64_t)-1 ? 1546275796 : (int64_t)acc;
    return 0;
  }
  case SR_V_LIST:
  case SR_V_SET:
  case SR_V_DICT:
    sr_raise(I, "TypeError", "unhashable type: '%s'", sr_val_kind_name(v));
    return -1;
  case SR_V_SPEC: {
    /* PartitionSpecs are interned (equal ones are one object): the hash
       of its canonical text */
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, v);
    SrVal *t = sr_str(NULL, b.p ? b.p : "", b.len);
    sr_buf_free(&b);
    int rc = hash_value(I, t, out, depth + 1);
    sr_unref(t);
    return rc;
  }
  case SR_V_MESH: *out = (int64_t)((uintptr_t)v->mesh >> 4); return 0; /* meshes are interned */
  default: break;
  }
  if (o && o->items) return hash_value(I, o->items, out, depth + 1);
  if (sr_ops(v) && sr_ops(v)->unhashable && sr_ops(v)->unhashable(v)) {
    sr_raise(I, "TypeError", "unhashable type: '%s'", sr_val_kind_name(v));
    return -1;
  }
  if (o) {
    const SrPyClass *c = class_of(o);
    for (const SrPyClass *k = c; k; k = base_of(k)) {
      SrVal *fn = dget(k->dict, "__hash__");
      if (fn && fn->kind == SR_V_NONE) break;
      if (fn) {
        int found;
        SrVal *r = call_dunder(I, v, "__hash__", 0, NULL, &found);
        if (!r) return -1;
        int ok = r->kind == SR_V_INT || r->kind == SR_V_BOOL;
        if (ok) *out = hash_int(r->i);
        else sr_raise(I, "TypeError", "__hash__ method should return an integer");
        sr_unref(r);
        return ok ? 0 : -1;
      }
      /* a class that defines __eq__ without __hash__ is unhashable, and so
         is a dataclass that compares but is not frozen */
      if (dget(k->dict, "__eq__") || (k->dataclass && k->dc_eq && !k->frozen)) {
        sr_raise(I, "TypeError", "unhashable type: '%s'", c->name);
        return -1;
      }
      if (k->dataclass && k->dc_eq && k->frozen) {
        SrVal *t = sr_seq(NULL, SR_V_TUPLE, k->nfields);
        for (int i = 0; i < k->nfields; i++) {
          SrVal *x = field_value(o, k->fields[i]);
          sr_seq_push(NULL, t, sr_ref(x ? x : sr_none()));
        }
        int rc = hash_value(I, t, out, depth + 1);
        sr_unref(t);
        return rc;
      }
    }
    if (o->base) return hash_value(I, o->base, out, depth + 1); /* the built-in's hash */
  }
  const SrLangOps *ops = v->kind == SR_V_OBJ ? sr_ops(v) : NULL;
  if (ops && ops->hash) {
    int rc = ops->hash(I, v, out);
    if (rc <= 0) return rc;
  }
  /* other objects hash by identity, as object's does */
  *out = (int64_t)((uintptr_t)(v->kind == SR_V_OBJ ? v->obj.data : (void *)v) >> 4);
  return 0;
}

static SrVal *bi_hash(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "hash() takes exactly one argument (%d given)", a->n);
  int64_t h;
  return hash_value(I, a->v[0], &h, 0) < 0 ? NULL : sr_int(NULL, h);
}

/* ---- iter() and next() ----
   The iterator of a built-in value holds its items (sr_iterate's list)
   and how many next() has taken; iter(f, sentinel) calls f until it
   returns sentinel.  A for loop over one takes what is left. */

typedef struct Iter {
  SrVal *items;         /* a list, or NULL for iter(f, sentinel) */
  int pos;
  SrVal *fn, *sentinel; /* iter(f, sentinel); NULL once exhausted */
  const char *type;     /* list_iterator, ... */
} Iter;

static void iter_free(void *d) {
  Iter *it = d;
  sr_unref(it->items);
  sr_unref(it->fn);
  sr_unref(it->sentinel);
  free(it);
}

static void iter_traverse(void *d, SrValVisit visit, void *arg) {
  Iter *it = d;
  if (it->items) visit(it->items, arg);
  if (it->fn) visit(it->fn, arg);
  if (it->sentinel) visit(it->sentinel, arg);
}

static void iter_clear(void *d) {
  Iter *it = d;
  sr_unref(it->items);
  sr_unref(it->fn);
  sr_unref(it->sentinel);
  it->items = it->fn = it->sentinel = NULL;
}

static void iter_repr(SrBuf *out, const SrVal *v) {
  const Iter *it = v->obj.data;
  sr_buf_printf(out, "<%s object at %p>", it->type, (const void *)v);
}

static const char *iter_type_name(const SrVal *v) { return ((const Iter *)v->obj.data)->type; }

/* The next item (a new reference), or NULL: with an exception, or
   without one at the end. */
static SrVal *iter_step(SrInterp *I, Iter *it) {
  if (it->items) return it->pos < it->items->seq.n ? sr_ref(it->items->seq.items[it->pos++]) : NULL;
  if (!it->fn) return NULL;
  SrVal *x = sr_call(I, it->fn, &(SrArgs){0});
  if (x && sr_val_equal(x, it->sentinel)) {
    sr_unref(x);
    x = NULL;
  }
  if (!x) {
    if (I->exc && strcmp(sr_exc_type(I->exc), "StopIteration") == 0) sr_exc_clear(I);
    sr_unref(it->fn);
    sr_unref(it->sentinel);
    it->fn = it->sentinel = NULL;
  }
  return x;
}

static SrVal *iter_rest(SrInterp *I, SrVal *self) {
  Iter *it = self->obj.data;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  for (;;) {
    if (sr_interrupt_point(I)) {
      sr_unref(l);
      return sr_raise(I, "KeyboardInterrupt", "interrupted");
    }
    SrVal *x = iter_step(I, it);
    if (!x) {
      if (I->exc) {
        sr_unref(l);
        return NULL;
      }
      return l;
    }
    sr_seq_push(NULL, l, x);
  }
}

static const SrLangOps iter_ops = {.iter = iter_rest};
static const SrClass iter_class = {"iterator", iter_free, iter_repr, NULL, &iter_ops};

static const char *iter_type_of(const SrVal *v) {
  switch (v->kind) {
  case SR_V_LIST: return "list_iterator";
  case SR_V_TUPLE: return "tuple_iterator";
  case SR_V_DICT: return "dict_keyiterator";
  case SR_V_STR:
    for (size_t i = 0; i < v->str.n; i++)
      if ((unsigned char)v->str.s[i] >= 0x80) return "str_iterator";
    return "str_ascii_iterator";
  case SR_V_SET: case SR_V_FROZENSET: return "set_iterator";
  default: break;
  }
  const char *k = sr_val_kind_name(v);
  if (strcmp(k, "range") == 0) return "range_iterator";
  if (strcmp(k, "dict_keys") == 0) return "dict_keyiterator";
  if (strcmp(k, "dict_values") == 0) return "dict_valueiterator";
  if (strcmp(k, "dict_items") == 0) return "dict_itemiterator";
  return "iterator";
}

static SrVal *bi_iter(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "iter() takes no keyword arguments");
  if (a->n == 2) {
    if (!sr_is_callable(I, a->v[0])) return sr_raise(I, "TypeError", "iter(v, w): v must be callable");
    Iter *it = sr_xcalloc(1, sizeof *it);
    it->fn = sr_ref(a->v[0]);
    it->sentinel = sr_ref(a->v[1]);
    it->type = "callable_iterator";
    return sr_obj(&iter_class, it);
  }
  if (a->n != 1) return sr_raise(I, "TypeError", "iter expected %s argument%s, got %d", a->n ? "at most 2" : "at least 1", a->n ? "s" : "", a->n);
  SrVal *x = a->v[0];
  if (sr_is_obj(x, &iter_class) || sr_is_gen(x) || sr_is_lazy_iter(x) || sr_is_range_iter(x)) return sr_ref(x);
  const SrInstance *o = instance(x);
  if (o && !o->items && mro_lookup(class_of(o), "__iter__", NULL)) {
    int found;
    SrVal *r = call_dunder(I, x, "__iter__", 0, NULL, &found);
    if (!r) return NULL;
    if (sr_is_obj(r, &iter_class) || sr_is_gen(r) || sr_is_lazy_iter(r) || (instance(r) && mro_lookup(class_of(instance(r)), "__next__", NULL))) return r;
    sr_raise(I, "TypeError", "iter() returned non-iterator of type '%s'", sr_val_kind_name(r));
    sr_unref(r);
    return NULL;
  }
  SrVal *items = sr_iterate(I, x);
  if (!items) return NULL;
  Iter *it = sr_xcalloc(1, sizeof *it);
  it->items = items;
  it->type = o ? "iterator" : iter_type_of(x);
  return sr_obj(&iter_class, it);
}

static SrVal *bi_next(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "next() takes no keyword arguments");
  if (a->n < 1 || a->n > 2) return sr_raise(I, "TypeError", "next expected %s, got %d", a->n ? "at most 2 arguments" : "at least 1 argument", a->n);
  SrVal *x = a->v[0], *r;
  if (sr_is_obj(x, &iter_class)) {
    r = iter_step(I, x->obj.data);
    if (!r && !I->exc) {
      if (a->n == 2) return sr_ref(a->v[1]);
      return sr_raise(I, "StopIteration", "%s", "");
    }
    return r;
  }
  if (sr_is_lazy_iter(x) || sr_is_range_iter(x)) {
    r = sr_is_range_iter(x) ? sr_range_iter_step(x) : sr_lazy_iter_step(I, x);
    if (!r && !I->exc) {
      if (a->n == 2) return sr_ref(a->v[1]);
      return sr_raise(I, "StopIteration", "%s", "");
    }
    return r;
  }
  if (sr_is_gen(x)) {
    SrVal *m = sr_getattr(I, x, "__next__");
    r = m ? sr_call(I, m, &(SrArgs){0}) : NULL;
    sr_unref(m);
    if (!r && a->n == 2 && I->exc && strcmp(sr_exc_type(I->exc), "StopIteration") == 0) {
      sr_exc_clear(I);
      return sr_ref(a->v[1]);
    }
    return r;
  }
  const SrInstance *o = instance(x);
  if (!o || !mro_lookup(class_of(o), "__next__", NULL))
    return sr_raise(I, "TypeError", "'%s' object is not an iterator", sr_val_kind_name(x));
  int found;
  r = call_dunder(I, x, "__next__", 0, NULL, &found);
  if (!r && a->n == 2 && I->exc && strcmp(sr_exc_type(I->exc), "StopIteration") == 0) {
    sr_exc_clear(I);
    return sr_ref(a->v[1]);
  }
  return r;
}

void sr_class_init(void) {
  static int done;
  if (done) return;
  done = 1;
  sr_val_traverse_class(&wrapper_class, wrapper_traverse, wrapper_clear);
  sr_val_traverse_class(&static_wrapper_class, wrapper_traverse, wrapper_clear);
  sr_val_traverse_class(&method_class, method_traverse, method_clear);
  sr_val_equal_class(&sr_instance_class, instance_equal);
  sr_val_type_name_class(&sr_instance_class, instance_type_name);
  sr_val_type_name_class(&wrapper_class, wrapper_type_name);
  sr_val_type_name_class(&static_wrapper_class, wrapper_type_name);
  /* object: the root every class statement's class derives from */
  SrPyClass *obj = class_alloc("object", NULL, sr_dict(NULL));
  sr_register("builtins.object", sr_obj(&sr_type_class, obj));
  sr_def("builtins.object.__init__", bi_object_init, "object.__init__(self)");
  sr_def("dataclasses._init", bi_dc_init, "a dataclass's generated __init__");
  sr_def("builtins.property", bi_property, "property(fget=None, fset=None): an attribute computed by a method");
  sr_def("builtins.staticmethod", bi_staticmethod, "staticmethod(f): a method without self");
  sr_def("builtins.classmethod", bi_classmethod, "classmethod(f): a method whose first argument is the class");
  sr_def("builtins.super", bi_super, "super(): the methods of the base class, bound to self");
  sr_def("builtins.issubclass", bi_issubclass, "issubclass(cls, classinfo)");
  sr_val_traverse_class(&iter_class, iter_traverse, iter_clear);
  sr_val_type_name_class(&iter_class, iter_type_name);
  sr_def("builtins.iter", bi_iter, "iter(x) or iter(f, sentinel): an iterator over x, or calling f until it returns sentinel");
  sr_def("builtins.next", bi_next, "next(it[, default]): the next item of an iterator, else default or StopIteration");
  sr_def("functools.cached_property", bi_cached_property, "cached_property(f): an attribute computed by a method once per instance");
  if (!sr_lookup_qualname("builtins.hash")) sr_def("builtins.hash", bi_hash, "hash(x): x's hash, equal for equal values");
  not_implemented = sr_word(NULL, "NotImplemented", 14);
  sr_register("builtins.NotImplemented", not_implemented);
  sr_register("builtins.Ellipsis", sr_word(NULL, "Ellipsis", 8)); /* the value of `...` */
  /* typing.NamedTuple: a base class marker (and a function) */
  SrPyClass *nt = class_alloc("NamedTuple", NULL, sr_dict(NULL));
  nt->nt_marker = 1;
  sr_register("typing.NamedTuple", sr_obj(&sr_type_class, nt));
  sr_def("collections.namedtuple", bi_namedtuple,
         "namedtuple(typename, field_names, *, defaults=None): a tuple class with named fields");
  sr_def("dataclasses.dataclass", bi_dataclass,
         "dataclass(cls=None, *, init=True, repr=True, eq=True, frozen=False): a class with generated __init__, __repr__ and __eq__");
  /* a field without a default: field.default is dataclasses.MISSING */
  sr_register("dataclasses.MISSING", dc_missing());
  sr_def("dataclasses.field", bi_field, "field(*, default, default_factory, init, repr, compare): a dataclass field's options");
  sr_def("dataclasses.fields", bi_fields, "fields(dc): a dataclass's fields, as Field objects");
  sr_def("dataclasses.asdict", bi_asdict, "asdict(obj): a dataclass instance as a dict (recursively)");
  sr_def("dataclasses.replace", bi_replace, "replace(obj, **changes): a copy of a dataclass instance with fields changed");
  sr_def("dataclasses.is_dataclass", bi_is_dataclass, "is_dataclass(x): whether x is a dataclass or an instance of one");
  SrVal *fe = sr_lookup_qualname("builtins.FrozenInstanceError");
  if (fe) sr_register("dataclasses.FrozenInstanceError", sr_ref(fe));
}

/* introspect_py.c: Python's introspection (introspect.h), after CPython's
 * bltinmodule.c (dir, vars, globals, locals, ord, chr, delattr), object.c's
 * _dir_object and pydoc's text of a function. */
#include "py/introspect.h"

#include <stdlib.h>
#include <string.h>

#include "py/class.h"
#include "py/enum.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- built-in type objects ---- */

/* A built-in type object is a builtin (the constructor, or one that raises
   when called) marked here with the qualified name its repr prints. */
enum { MAX_TYPES = 128 };
static struct {
  const SrBuiltin *b;
  const char *qual; /* interned */
  SrVal *v;         /* the synthesized ones, held for good */
} types[MAX_TYPES];
static int ntypes;

const char *sr_builtin_type_name(const SrVal *v) {
  if (!sr_is_obj(v, &sr_builtin_class)) return NULL;
  const SrBuiltin *b = v->obj.data;
  for (int i = 0; i < ntypes; i++)
    if (types[i].b == b) return types[i].qual;
  return NULL;
}

static void mark_type(SrVal *v, const char *qual, int hold) {
  if (!v || !sr_is_obj(v, &sr_builtin_class) || ntypes == MAX_TYPES) return;
  types[ntypes].b = v->obj.data;
  types[ntypes].qual = sr_intern_cstr(qual);
  types[ntypes].v = hold ? v : NULL;
  ntypes++;
}

void sr_mark_builtin_type(SrVal *v, const char *qual) { mark_type(v, qual, 0); }

static SrVal *bi_no_instances(SrInterp *I, SrArgs *a) {
  (void)a;
  return sr_raise(I, "TypeError", "cannot create '%s' instances", sr_current_builtin(I)->name);
}

/* The module a kind of another layer lives in, as its type prints. */
static const char *kind_module(const char *kind) {
  static const char *const map[][2] = {
    {"ArrayImpl", "jaxlib._jax"},         {"PartitionSpec", "jax.sharding"},
    {"NamedSharding", "jax.sharding"},    {"Mesh", "jax.sharding"},
    {"AbstractMesh", "jax.sharding"},     {"AxisType", "jax.sharding"},
    {"Jaxpr", "jax.extend.core"},         {"dtype", "numpy"},
    {"EnumType", "enum"},                 {"ShapeDtypeStruct", "jax"},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (strcmp(map[i][0], kind) == 0) return map[i][1];
  return NULL;
}

static SrVal *kind_type(const char *kind) {
  char q[256];
  snprintf(q, sizeof q, "builtins.%s", kind);
  SrVal *v = sr_lookup_qualname(q);
  if (v && sr_builtin_type_name(v)) return sr_ref(v);
  const char *ik = sr_intern_cstr(kind);
  for (int i = 0; i < ntypes; i++)
    if (types[i].v && ((const SrBuiltin *)types[i].b)->name == ik) return sr_ref(types[i].v);
  const char *mod = kind_module(kind);
  if (mod) snprintf(q, sizeof q, "%s.%s", mod, kind);
  else snprintf(q, sizeof q, "%s", kind);
  /* a type another layer marked (numpy.ndarray): that very object */
  const char *iq = sr_intern_cstr(q);
  for (int i = 0; i < ntypes; i++) {
    SrVal *hit = types[i].qual == iq ? sr_lookup_qualname(iq) : NULL;
    if (hit && sr_builtin_type_name(hit) == iq) return sr_ref(hit);
  }
  v = sr_builtin_with(ik, bi_no_instances, NULL, NULL);
  mark_type(v, q, 1);
  return sr_ref(v);
}

SrVal *sr_type_of(SrInterp *I, SrVal *v) {
  (void)I;
  SrVal *c = sr_class_of(v);
  if (!c) c = sr_enum_type_of(v);
  if (c) return sr_ref(c);
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->type_of) {
    SrVal *t = ops->type_of(v);
    if (t) return t;
  }
  if (sr_enum_is_class(v)) return kind_type("EnumType");
  if (sr_is_obj(v, &sr_type_class) || sr_is_obj(v, &sr_exctype_class) || sr_builtin_type_name(v))
    return kind_type("type");
  if (sr_is_obj(v, &sr_builtin_class)) return kind_type("builtin_function_or_method");
  if (sr_is_obj(v, &sr_function_class)) return kind_type("function");
  return kind_type(sr_val_kind_name(v));
}

/* ---- the attributes every object has ---- */

static const char *last_segment(const char *q) {
  const char *d = strrchr(q, '.');
  return d ? d + 1 : q;
}

static SrVal *module_part(const char *q, const char *dflt) {
  const char *d = strrchr(q, '.');
  if (!d) return sr_str_cstr(NULL, dflt);
  if ((size_t)(d - q) == 8 && strncmp(q, "builtins", 8) == 0) return sr_str_cstr(NULL, "builtins");
  return sr_str(NULL, q, (size_t)(d - q));
}

/* A def's docstring: its body's first statement when that is a str. */
static SrVal *function_doc(const SrFunction *f) {
  const SrNode *d = f->node;
  if (d->kind != SR_N_DEF || d->n < 1) return NULL;
  const SrNode *s = d->list[0];
  if (s->kind != SR_N_EXPR || !s->a || s->a->kind != SR_N_CONST || s->a->val->kind != SR_V_STR) return NULL;
  return s->a->val;
}

SrVal *sr_generic_getattr(SrInterp *I, SrVal *v, const char *name) {
  if (strcmp(name, "__class__") == 0) return sr_type_of(I, v);
  const char *tq = sr_builtin_type_name(v);
  if (tq) {
    if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, last_segment(tq));
    if (strcmp(name, "__module__") == 0) return module_part(tq, "builtins");
  }
  if (sr_is_obj(v, &sr_builtin_class)) {
    const SrBuiltin *b = v->obj.data;
    if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0)
      return sr_str_cstr(NULL, last_segment(b->name));
    if (strcmp(name, "__module__") == 0) return b->self ? sr_none() : module_part(b->name, "builtins");
    if (strcmp(name, "__doc__") == 0) return b->doc ? sr_str_cstr(NULL, b->doc) : sr_none();
  }
  SrFunction *f = sr_as_function(v);
  if (f) {
    if (strcmp(name, "__doc__") == 0) {
      SrVal *d = function_doc(f);
      return d ? sr_ref(d) : sr_none();
    }
    if (strcmp(name, "__module__") == 0) return sr_str_cstr(NULL, "__main__");
  }
  if (sr_is_obj(v, &sr_module_class) && strcmp(name, "__name__") == 0)
    return sr_str_cstr(NULL, (const char *)v->obj.data);
  return NULL;
}

/* ---- names ---- */

int sr_name_internal(const char *q) {
  const char *seg = strchr(q, '.');
  while (seg) {
    const char *s = seg + 1, *e = strchr(s, '.');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    /* a dunder, and _src (JAX's private modules, jax._src.core, which
       JAX's own tests import) are not the implementation's */
    if (s[0] == '_' && !(n > 4 && s[1] == '_' && s[n - 1] == '_' && s[n - 2] == '_') &&
        !(n == 4 && strncmp(s, "_src", 4) == 0))
      return 1;
    if ((n == 6 && strncmp(s, "method", 6) == 0) || (n == 8 && strncmp(s, "property", 8) == 0)) {
      /* a folder of what the attributes of a class's objects are
         made of (jax.Array.method.item), under a class's name */
      const char *ps = seg;
      while (ps > q && ps[-1] != '.') ps--;
      if (*ps >= 'A' && *ps <= 'Z') return 1;
    }
    seg = e;
  }
  return 0;
}

typedef struct {
  const char **v;
  int n, cap;
} Names;

static void names_add(const char *name, void *ctx) {
  Names *ns = ctx;
  const char *in = sr_intern_cstr(name);
  for (int i = 0; i < ns->n; i++)
    if (ns->v[i] == in) return;
  if (ns->n == ns->cap) {
    ns->cap = ns->cap ? 2 * ns->cap : 64;
    ns->v = sr_xrealloc(ns->v, (size_t)ns->cap * sizeof *ns->v);
  }
  ns->v[ns->n++] = in;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static SrVal *names_list(Names *ns) {
  if (ns->n) qsort(ns->v, (size_t)ns->n, sizeof *ns->v, cmp_names);
  SrVal *l = sr_seq(NULL, SR_V_LIST, ns->n);
  for (int i = 0; i < ns->n; i++) sr_seq_push(NULL, l, sr_str_cstr(NULL, ns->v[i]));
  free(ns->v);
  return l;
}

/* the registered children of prefix q ("jax.numpy"): each next segment */
typedef struct {
  Names *ns;
  size_t n;
  const char *q;
  SrVal *obj; /* NULL: a module; else only what getattr finds on it */
  SrInterp *I;
} Children;

static void child_visit(const char *name, void *ctx) {
  Children *c = ctx;
  if (strncmp(name, c->q, c->n) != 0 || name[c->n] != '.' || sr_name_internal(name)) return;
  const char *s = name + c->n + 1, *e = strchr(s, '.');
  char seg[256];
  snprintf(seg, sizeof seg, "%.*s", (int)(e ? (size_t)(e - s) : strlen(s)), s);
  if (!seg[0] || seg[0] == '_') return;
  if (c->obj) {
    SrVal *r = sr_getattr(c->I, c->obj, seg);
    if (!r) {
      sr_exc_clear(c->I);
      return;
    }
    sr_unref(r);
  }
  names_add(seg, c->ns);
}

static void add_registered(SrInterp *I, Names *ns, const char *q, SrVal *obj) {
  char prefix[512];
  snprintf(prefix, sizeof prefix, "%s.", q);
  Children c = {ns, strlen(q), q, obj, I};
  sr_registry_names(prefix, child_visit, &c);
}

static void add_dict_keys(Names *ns, const SrVal *d) {
  if (!d || d->kind != SR_V_DICT) return;
  for (int i = 0; i < d->dict.n; i++)
    if (d->dict.keys[i]->kind == SR_V_STR) names_add(d->dict.keys[i]->str.s, ns);
}

/* a class of another layer's lister */
enum { MAX_DIR_CLASSES = 16 };
static struct {
  const SrClass *cls;
  void (*names)(SrVal *self, SrDirAdd add, void *ctx);
} dir_classes[MAX_DIR_CLASSES];
static int ndir_classes;

void sr_dir_class(const SrClass *cls, void (*names)(SrVal *self, SrDirAdd add, void *ctx)) {
  if (ndir_classes < MAX_DIR_CLASSES) dir_classes[ndir_classes].cls = cls, dir_classes[ndir_classes++].names = names;
}

/* attr's value on v, a new reference, or NULL (no exception) */
static SrVal *try_attr(SrInterp *I, SrVal *v, const char *attr) {
  SrVal *r = sr_getattr(I, v, attr);
  if (!r) sr_exc_clear(I);
  return r;
}

/* the dicts of the classes of an __mro__ (builtins.object's is empty) */
static void add_mro(SrInterp *I, Names *ns, SrVal *cls) {
  SrVal *mro = try_attr(I, cls, "__mro__");
  if (mro && mro->kind == SR_V_TUPLE)
    for (int i = 0; i < mro->seq.n; i++) {
      SrVal *d = try_attr(I, mro->seq.items[i], "__dict__");
      add_dict_keys(ns, d);
      sr_unref(d);
    }
  sr_unref(mro);
}

SrVal *sr_dir(SrInterp *I, SrVal *v) {
  Names ns = {0};
  if (sr_is_obj(v, &sr_module_class)) {
    add_registered(I, &ns, v->obj.data, NULL);
    return names_list(&ns);
  }
  names_add("__class__", &ns);
  if (sr_is_obj(v, &sr_builtin_class) || sr_is_obj(v, &sr_function_class)) {
    static const char *const fattrs[] = {"__doc__", "__module__", "__name__", "__qualname__", NULL};
    for (int i = 0; fattrs[i]; i++) names_add(fattrs[i], &ns);
    if (sr_is_obj(v, &sr_builtin_class) && !((SrBuiltin *)v->obj.data)->self)
      add_registered(I, &ns, ((SrBuiltin *)v->obj.data)->name, v);
    if (sr_is_obj(v, &sr_function_class)) {
      SrVal *d = try_attr(I, v, "__dict__");
      add_dict_keys(&ns, d);
      sr_unref(d);
    }
  }
  if (sr_is_obj(v, &sr_type_class)) {
    static const char *const cattrs[] = {"__dict__", "__doc__", "__module__", "__mro__", "__name__", "__qualname__", NULL};
    for (int i = 0; cattrs[i]; i++) names_add(cattrs[i], &ns);
    add_mro(I, &ns, v);
  } else if (sr_class_of(v)) {
    SrVal *d = try_attr(I, v, "__dict__");
    add_dict_keys(&ns, d);
    if (d) names_add("__dict__", &ns);
    sr_unref(d);
    names_add("__doc__", &ns);
    add_mro(I, &ns, sr_class_of(v));
    SrVal *fields = try_attr(I, v, "_fields");
    if (fields && fields->kind == SR_V_TUPLE) {
      for (int i = 0; i < fields->seq.n; i++)
        if (fields->seq.items[i]->kind == SR_V_STR) names_add(fields->seq.items[i]->str.s, &ns);
      static const char *const ntattrs[] = {"_asdict", "_field_defaults", "_fields", "_make", "_replace", "count", "index", NULL};
      for (int i = 0; ntattrs[i]; i++) names_add(ntattrs[i], &ns);
    }
    sr_unref(fields);
  }
  for (int i = 0; i < ndir_classes; i++)
    if (sr_is_obj(v, dir_classes[i].cls)) dir_classes[i].names(v, names_add, &ns);
  sr_kind_attr_names(v, names_add, &ns);
  return names_list(&ns);
}

/* ---- the caller's scope ---- */

static SrVal *env_dict(const SrEnv *e) {
  Names ns = {0};
  for (size_t i = 0; i < e->cap; i++)
    if (e->keys[i]) names_add(e->keys[i], &ns);
  if (ns.n) qsort(ns.v, (size_t)ns.n, sizeof *ns.v, cmp_names);
  SrVal *d = sr_dict(NULL);
  for (int i = 0; i < ns.n; i++) {
    SrVal *x = sr_env_lookup(e, ns.v[i]);
    if (x) sr_dict_set(NULL, d, sr_str_cstr(NULL, ns.v[i]), sr_ref(x));
  }
  free(ns.v);
  return d;
}

static SrVal *bi_locals(SrInterp *I, SrArgs *a);
static SrVal *bi_vars(SrInterp *I, SrArgs *a);
static SrVal *bi_dir(SrInterp *I, SrArgs *a);

int sr_is_scope_fn(const SrVal *fn) {
  if (!sr_is_obj(fn, &sr_builtin_class)) return 0;
  SrBuiltinFn f = ((const SrBuiltin *)fn->obj.data)->fn;
  return f == bi_locals || f == bi_vars || f == bi_dir;
}

SrVal *sr_scope_call(SrInterp *I, SrVal *fn, SrEnv *env) {
  SrVal *d = env_dict(env);
  if (((const SrBuiltin *)fn->obj.data)->fn != bi_dir) return d;
  Names ns = {0};
  add_dict_keys(&ns, d);
  sr_unref(d);
  (void)I;
  return names_list(&ns);
}

/* ---- the built-ins ---- */

static SrVal *bi_dir(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "dir() takes no keyword arguments");
  if (a->n > 1) return sr_raise(I, "TypeError", "dir expected at most 1 argument, got %d", a->n);
  if (a->n == 0) return sr_scope_call(I, sr_lookup_qualname("builtins.dir"), I->py->globals);
  return sr_dir(I, a->v[0]);
}

static SrVal *bi_globals(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "globals() takes no arguments (%d given)", a->n + a->nkw);
  return env_dict(I->py->globals);
}

static SrVal *bi_locals(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "locals() takes no arguments (%d given)", a->n + a->nkw);
  return env_dict(I->py->globals);
}

static SrVal *bi_vars(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "vars() takes no keyword arguments");
  if (a->n > 1) return sr_raise(I, "TypeError", "vars expected at most 1 argument, got %d", a->n);
  if (a->n == 0) return env_dict(I->py->globals);
  SrVal *v = a->v[0];
  SrVal *d = sr_is_obj(v, &sr_module_class) ? NULL : sr_getattr(I, v, "__dict__");
  if (d) return d;
  sr_exc_clear(I);
  if (sr_is_obj(v, &sr_module_class)) {
    /* a module's namespace: what dir() lists, with the values */
    SrVal *names = sr_dir(I, v);
    d = sr_dict(NULL);
    for (int i = 0; i < names->seq.n; i++) {
      SrVal *x = try_attr(I, v, names->seq.items[i]->str.s);
      if (x) sr_dict_set(NULL, d, sr_ref(names->seq.items[i]), x);
    }
    sr_unref(names);
    return d;
  }
  return sr_raise(I, "TypeError", "vars() argument must have __dict__ attribute");
}

static SrVal *bi_delattr(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "delattr() takes no keyword arguments");
  if (a->n != 2) return sr_raise(I, "TypeError", "delattr expected 2 arguments, got %d", a->n);
  const char *name = sr_as_str(I, a->v[1], "attribute name");
  if (!name) return NULL;
  SrVal *d = sr_class_of(a->v[0]) ? sr_getattr(I, a->v[0], "__dict__") : NULL;
  if (!d) {
    sr_exc_clear(I);
    if (sr_class_of(a->v[0]) || sr_is_obj(a->v[0], &sr_type_class))
      return sr_raise(I, "AttributeError", "'%s' object has no attribute '%s'", sr_val_kind_name(a->v[0]), name);
    return sr_raise(I, "AttributeError", "'%s' object attribute '%s' is read-only", sr_val_kind_name(a->v[0]), name);
  }
  SrVal *k = sr_str_cstr(NULL, name);
  int found = sr_dict_get(d, k) != NULL;
  int ok = found ? sr_delitem(I, d, k) : 0;
  sr_unref(k);
  sr_unref(d);
  if (ok < 0) return NULL;
  if (!found) return sr_raise(I, "AttributeError", "'%s' object has no attribute '%s'", sr_val_kind_name(a->v[0]), name);
  return sr_none();
}

static SrVal *bi_ord(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "ord() takes no keyword arguments");
  if (a->n != 1) return sr_raise(I, "TypeError", "ord() takes exactly one argument (%d given)", a->n);
  SrVal *s = a->v[0];
  if (s->kind != SR_V_STR)
    return sr_raise(I, "TypeError", "ord() expected string of length 1, but %s found", sr_val_kind_name(s));
  const unsigned char *p = (const unsigned char *)s->str.s;
  size_t n = s->str.n, len = 0;
  for (size_t i = 0; i < n; i++) len += (p[i] & 0xc0) != 0x80;
  if (len != 1) return sr_raise(I, "TypeError", "ord() expected a character, but string of length %zu found", len);
  uint32_t cp = p[0];
  if (cp >= 0xf0 && n >= 4) cp = (cp & 7) << 18 | (p[1] & 0x3fu) << 12 | (p[2] & 0x3fu) << 6 | (p[3] & 0x3fu);
  else if (cp >= 0xe0 && n >= 3) cp = (cp & 15) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu);
  else if (cp >= 0xc0 && n >= 2) cp = (cp & 31) << 6 | (p[1] & 0x3fu);
  return sr_int(NULL, cp);
}

static SrVal *bi_chr(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "chr() takes no keyword arguments");
  if (a->n != 1) return sr_raise(I, "TypeError", "chr() takes exactly one argument (%d given)", a->n);
  if (a->v[0]->kind != SR_V_INT && a->v[0]->kind != SR_V_BOOL)
    return sr_raise(I, "TypeError", "'%s' object cannot be interpreted as an integer", sr_val_kind_name(a->v[0]));
  int64_t c = a->v[0]->i;
  if (c < 0 || c > 0x10ffff) return sr_raise(I, "ValueError", "chr() arg not in range(0x110000)");
  char b[4];
  size_t n;
  if (c < 0x80) b[0] = (char)c, n = 1;
  else if (c < 0x800) b[0] = (char)(0xc0 | (c >> 6)), b[1] = (char)(0x80 | (c & 0x3f)), n = 2;
  else if (c < 0x10000)
    b[0] = (char)(0xe0 | (c >> 12)), b[1] = (char)(0x80 | ((c >> 6) & 0x3f)), b[2] = (char)(0x80 | (c & 0x3f)), n = 3;
  else
    b[0] = (char)(0xf0 | (c >> 18)), b[1] = (char)(0x80 | ((c >> 12) & 0x3f)), b[2] = (char)(0x80 | ((c >> 6) & 0x3f)),
    b[3] = (char)(0x80 | (c & 0x3f)), n = 4;
  return sr_str(NULL, b, n);
}

/* pydoc's text of a function: its signature, then its docstring cleaned
   as inspect.cleandoc does, indented by four */
static void help_function(SrBuf *b, const SrFunction *f) {
  const SrParams *p = f->node->params;
  int lambda = f->node->kind == SR_N_LAMBDA;
  sr_buf_printf(b, "Help on function %s in module __main__:\n\n%s%s", f->name, f->name, lambda ? " lambda" : "(");
  if (lambda && p && (p->n || p->star || p->kwstar)) sr_buf_putc(b, ' ');
  int first = 1;
#define SEP() (first ? (void)(first = 0) : sr_buf_puts(b, ", "))
  for (int i = 0; p && i < p->n; i++) {
    if (i == p->n - p->nkwonly) {
      SEP();
      sr_buf_puts(b, p->star ? "*" : "*");
      if (p->star) sr_buf_puts(b, p->star);
    }
    SEP();
    sr_buf_puts(b, p->names[i]);
    if (f->defaults && f->defaults[i]) {
      sr_buf_putc(b, '=');
      sr_val_repr(b, f->defaults[i]);
    }
    if (p->nposonly && i == p->nposonly - 1) sr_buf_puts(b, ", /");
  }
  if (p && p->star && p->nkwonly == 0) {
    SEP();
    sr_buf_printf(b, "*%s", p->star);
  }
  if (p && p->kwstar) {
    SEP();
    sr_buf_printf(b, "**%s", p->kwstar);
  }
#undef SEP
  sr_buf_puts(b, lambda ? "\n" : ")\n");
  SrVal *doc = function_doc(f);
  if (doc) {
    /* inspect.cleandoc: the first line stripped, the rest dedented */
    const char *s = doc->str.s, *end = s + doc->str.n;
    size_t indent = (size_t)-1;
    const char *nl = memchr(s, '\n', doc->str.n);
    for (const char *l = nl ? nl + 1 : end; l < end;) {
      const char *e = memchr(l, '\n', (size_t)(end - l));
      if (!e) e = end;
      size_t k = 0;
      while (l + k < e && (l[k] == ' ' || l[k] == '\t')) k++;
      if (l + k < e && k < indent) indent = k;
      l = e + 1;
    }
    SrBuf lines = SR_BUF_INIT;
    for (const char *l = s; l < end;) {
      const char *e = memchr(l, '\n', (size_t)(end - l));
      if (!e) e = end;
      const char *ls = l;
      if (l == s) while (ls < e && (*ls == ' ' || *ls == '\t')) ls++;
      else if (indent != (size_t)-1) ls = (size_t)(e - l) > indent ? l + indent : e;
      const char *le = e;
      while (le > ls && (le[-1] == ' ' || le[-1] == '\t')) le--;
      sr_buf_putn(&lines, ls, (size_t)(le - ls));
      sr_buf_putc(&lines, '\n');
      l = e + 1;
    }
    /* leading and trailing blank lines go */
    const char *t = sr_buf_str(&lines), *te = t + lines.len;
    while (t < te && *t == '\n') t++;
    while (te > t && te[-1] == '\n' && (te - 1 == t || te[-2] == '\n')) te--;
    for (const char *l = t; l < te;) {
      const char *e = memchr(l, '\n', (size_t)(te - l));
      if (!e) e = te;
      sr_buf_puts(b, "    ");
      sr_buf_putn(b, l, (size_t)(e - l));
      sr_buf_putc(b, '\n');
      l = e + 1;
    }
    sr_buf_free(&lines);
  }
  sr_buf_putc(b, '\n');
}

static SrVal *bi_help(SrInterp *I, SrArgs *a) {
  if (a->nkw || a->n > 1) return sr_raise(I, "TypeError", "help() takes at most 1 argument");
  SrBuf b = SR_BUF_INIT;
  SrVal *v = a->n ? a->v[0] : NULL;
  if (v && v->kind == SR_V_STR) {
    SrVal *f = sr_lookup_qualname(sr_canonical_module(v->str.s));
    if (!f) f = sr_lookup_builtin_name(v->str.s);
    if (!f) {
      sr_buf_printf(&b, "No Python documentation found for '%s'.\n", v->str.s);
      v = NULL;
    } else {
      v = f;
    }
  }
  SrFunction *f = v ? sr_as_function(v) : NULL;
  if (!v) {
    if (!b.len)
      sr_buf_puts(&b, "Type help(x) for the help of x, :help for the commands and :help NAME for a built-in.\n");
  } else if (f) {
    help_function(&b, f);
  } else if (sr_is_obj(v, &sr_builtin_class) && sr_builtin_doc(v) && I->py->init->command) {
    /* the text :help NAME gives, from the command itself */
    SrBuf cmd = SR_BUF_INIT;
    sr_buf_printf(&cmd, ":help %s", sr_builtin_name(v));
    SrSrc *src = sr_src_new("<help>", sr_buf_str(&cmd), cmd.len, 1);
    int rc = I->py->init->command(I, src, 0, cmd.len);
    sr_src_unref(src);
    sr_buf_free(&cmd);
    sr_buf_free(&b);
    if (rc < 0 && !I->exc) return sr_raise(I, "ValueError", "no help for %s", sr_builtin_name(v));
    return rc < 0 ? NULL : sr_none();
  } else if (sr_is_obj(v, &sr_builtin_class) && sr_builtin_doc(v)) {
    sr_buf_printf(&b, "%s\n    %s\n", sr_builtin_name(v), sr_builtin_doc(v));
  } else if (sr_is_obj(v, &sr_type_class) || sr_class_of(v)) {
    SrVal *cls = sr_is_obj(v, &sr_type_class) ? v : sr_class_of(v);
    SrVal *name = try_attr(I, cls, "__name__"), *doc = try_attr(I, cls, "__doc__");
    sr_buf_printf(&b, "Help on class %s in module __main__:\n\nclass %s\n", name ? name->str.s : "?",
                  name ? name->str.s : "?");
    if (doc && doc->kind == SR_V_STR) sr_buf_printf(&b, " |  %s\n", doc->str.s);
    SrVal *d = try_attr(I, cls, "__dict__");
    if (d && d->kind == SR_V_DICT) {
      int head = 0;
      for (int i = 0; i < d->dict.n; i++) {
        SrFunction *m = sr_as_function(d->dict.vals[i]);
        if (!m) continue;
        if (!head++) sr_buf_puts(&b, " |  \n |  Methods defined here:\n");
        SrBuf fb = SR_BUF_INIT;
        help_function(&fb, m);
        /* drop "Help on ...:\n\n", indent each line by " |  " */
        const char *t = strstr(sr_buf_str(&fb), ":\n\n");
        t = t ? t + 3 : sr_buf_str(&fb);
        sr_buf_puts(&b, " |  \n");
        for (const char *l = t; *l;) {
          const char *e = strchr(l, '\n');
          if (!e) e = l + strlen(l);
          if (e > l) sr_buf_printf(&b, " |  %.*s\n", (int)(e - l), l);
          l = *e ? e + 1 : e;
        }
        sr_buf_free(&fb);
      }
    }
    sr_unref(d);
    sr_unref(name);
    sr_unref(doc);
    sr_buf_putc(&b, '\n');
  } else {
    SrVal *t = sr_type_of(I, v);
    sr_buf_puts(&b, "Help on ");
    sr_val_repr(&b, v);
    sr_buf_puts(&b, ", an object of ");
    sr_val_repr(&b, t);
    sr_buf_puts(&b, "; dir(x) lists its attributes.\n");
    sr_unref(t);
  }
  sr_write(I, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return sr_none();
}

void sr_py_introspect_init(void) {
  sr_def("builtins.dir", bi_dir, "dir([x]): the sorted names of x's attributes, or of the current scope");
  sr_def("builtins.vars", bi_vars, "vars([x]): x's __dict__ (a module's names and values), or locals()");
  sr_def("builtins.globals", bi_globals, "globals(): a dict of the module's variables (a copy: assigning to it binds nothing)");
  sr_def("builtins.locals", bi_locals, "locals(): a dict of the current scope's variables");
  sr_def("builtins.help", bi_help, "help(x): x's documentation (a built-in's :help text, a function's docstring)");
  sr_def("builtins.delattr", bi_delattr, "delattr(x, name): removes the attribute name of x");
  sr_def("builtins.ord", bi_ord, "ord(c): the code point of the character c");
  sr_def("builtins.chr", bi_chr, "chr(i): the character of code point i");
  static const char *const builtin_types[] = {
    "int", "float", "bool", "str", "list", "tuple", "dict", "set", "frozenset", "complex", "slice",
    "range", "zip", "map", "enumerate", "reversed", "property", "staticmethod", "classmethod", "super", "type", NULL,
  };
  for (int i = 0; builtin_types[i]; i++) {
    char q[64];
    snprintf(q, sizeof q, "builtins.%s", builtin_types[i]);
    mark_type(sr_lookup_qualname(q), builtin_types[i], 0);
  }
}

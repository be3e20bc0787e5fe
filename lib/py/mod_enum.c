/* mod_enum.c: Python's enum module (enum.h), after CPython 3.11's
 * Lib/enum.py: Enum, IntEnum, Flag, IntFlag and auto.
 *
 * `class Color(Enum)` makes an enum class of this file (sr_class_new
 * hands it over): each name its body binds to a value that is not a
 * function or descriptor becomes a member, an object with .name and
 * .value; a second name for a value already taken is an alias of that
 * member.  The class is iterable (its members, not the aliases), has a
 * len, finds a member by value (Color(1)) and by name (Color['RED']),
 * and its methods bind to members.  IntEnum and IntFlag members are ints
 * in arithmetic and comparisons; Flag members combine with | & ^ ~. */
#include "py/enum.h"

#include <stdlib.h>
#include <string.h>

#include "text/print_val.h"
#include "util/intern.h"

enum { E_ENUM, E_INT, E_FLAG, E_INTFLAG };

typedef struct EnumClass {
  const char *name; /* interned */
  int kind;         /* E_* */
  int root;         /* enum.Enum, IntEnum, Flag, IntFlag themselves */
  SrVal *ns;        /* the body's namespace without the members */
  int n, cap;       /* members by name, the aliases too, in order */
  const char **names;
  SrVal **members;  /* held */
  uint8_t *alias;
  int npseudo, cappseudo;
  SrVal **pseudo;   /* a Flag's combinations made so far (held) */
} EnumClass;

typedef struct Member {
  SrVal *cls;
  const char *name; /* interned; a Flag combination's "R|W" */
  SrVal *value;
} Member;

static void eclass_free(void *d);
static void eclass_repr(SrBuf *out, const SrVal *v);
static SrVal *eclass_call(SrInterp *I, SrVal *self, SrArgs *a);
static SrVal *eclass_getattr(SrInterp *I, SrVal *self, const char *name);
static int eclass_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *v);
static SrVal *eclass_getitem(SrInterp *I, SrVal *self, SrVal *key);
static SrVal *eclass_iter(SrInterp *I, SrVal *self);
static int64_t eclass_len(SrInterp *I, SrVal *self);
static const SrLangOps eclass_ops = {.call = eclass_call, .getattr = eclass_getattr, .setattr = eclass_setattr,
                                     .getitem = eclass_getitem, .iter = eclass_iter, .len = eclass_len};
static const SrClass eclass_class = {"EnumType", eclass_free, eclass_repr, NULL, &eclass_ops};

static void member_free(void *d);
static void member_repr(SrBuf *out, const SrVal *v);
static void member_str(SrBuf *out, const SrVal *v);
static SrVal *member_getattr(SrInterp *I, SrVal *self, const char *name);
static int member_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *v);
static SrVal *member_binop(SrInterp *I, int op, SrVal *a, SrVal *b);
static SrVal *member_unop(SrInterp *I, int op, SrVal *a);
static int member_truthy(SrInterp *I, SrVal *self);
static const SrLangOps member_ops = {.getattr = member_getattr, .setattr = member_setattr, .binop = member_binop,
                                     .unop = member_unop, .truthy = member_truthy};
static const SrClass member_class = {"enum member", member_free, member_repr, member_str, &member_ops};

static void auto_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "auto(_auto_null)");
}
static const SrClass auto_class = {"auto", NULL, auto_repr, NULL, NULL};

static EnumClass *eclass(const SrVal *v) { return sr_is_obj(v, &eclass_class) ? v->obj.data : NULL; }
static Member *member(const SrVal *v) { return sr_is_obj(v, &member_class) ? v->obj.data : NULL; }
static EnumClass *class_of(const Member *m) { return m->cls->obj.data; }
static int is_int_kind(int kind) { return kind == E_INT || kind == E_INTFLAG; }
static int is_flag_kind(int kind) { return kind == E_FLAG || kind == E_INTFLAG; }

/* ---- cycles: a class holds its members, each member its class ---- */

static void eclass_traverse(void *d, SrValVisit visit, void *arg) {
  EnumClass *c = d;
  if (c->ns) visit(c->ns, arg);
  for (int i = 0; i < c->n; i++) visit(c->members[i], arg);
  for (int i = 0; i < c->npseudo; i++) visit(c->pseudo[i], arg);
}

static void eclass_clear(void *d) {
  EnumClass *c = d;
  SrVal *ns = c->ns;
  c->ns = NULL;
  int n = c->n, np = c->npseudo;
  c->n = c->npseudo = 0;
  for (int i = 0; i < n; i++) sr_unref(c->members[i]);
  for (int i = 0; i < np; i++) sr_unref(c->pseudo[i]);
  sr_unref(ns);
}

static void eclass_free(void *d) {
  EnumClass *c = d;
  eclass_clear(c);
  free(c->names);
  free(c->members);
  free(c->alias);
  free(c->pseudo);
  free(c);
}

static void member_traverse(void *d, SrValVisit visit, void *arg) {
  Member *m = d;
  if (m->cls) visit(m->cls, arg);
  if (m->value) visit(m->value, arg);
}

static void member_clear(void *d) {
  Member *m = d;
  SrVal *c = m->cls, *v = m->value;
  m->cls = m->value = NULL;
  sr_unref(c);
  sr_unref(v);
}

static void member_free(void *d) {
  member_clear(d);
  free(d);
}

static const char *member_type_name(const SrVal *v) {
  const Member *m = member(v);
  return m->cls ? class_of(m)->name : "enum";
}

static void enum_gc_init(void) {
  static int done;
  if (done) return;
  done = 1;
  sr_val_type_name_class(&member_class, member_type_name);
  sr_val_traverse_class(&eclass_class, eclass_traverse, eclass_clear);
  sr_val_traverse_class(&member_class, member_traverse, member_clear);
}

/* ---- printing ---- */

static void eclass_repr(SrBuf *out, const SrVal *v) { sr_buf_printf(out, "<enum '%s'>", eclass(v)->name); }

static void member_repr(SrBuf *out, const SrVal *v) {
  const Member *m = member(v);
  sr_buf_printf(out, "<%s.%s: ", m->cls ? class_of(m)->name : "?", m->name);
  if (m->value) sr_val_repr(out, m->value);
  sr_buf_putc(out, '>');
}

/* 3.11: an IntEnum's or IntFlag's str is its int's */
static void member_str(SrBuf *out, const SrVal *v) {
  const Member *m = member(v);
  if (m->cls && is_int_kind(class_of(m)->kind) && m->value) sr_val_str(out, m->value);
  else sr_buf_printf(out, "%s.%s", m->cls ? class_of(m)->name : "?", m->name);
}

/* ---- members ---- */

static SrVal *member_new(SrVal *cls, const char *name, SrVal *value) {
  Member *m = sr_xcalloc(1, sizeof *m);
  m->cls = sr_ref(cls);
  m->name = sr_intern_cstr(name);
  m->value = value;
  return sr_obj(&member_class, m);
}

static void add_member(EnumClass *c, const char *name, SrVal *m, int alias) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 8;
    c->names = sr_xrealloc(c->names, (size_t)c->cap * sizeof *c->names);
    c->members = sr_xrealloc(c->members, (size_t)c->cap * sizeof *c->members);
    c->alias = sr_xrealloc(c->alias, (size_t)c->cap);
  }
  c->names[c->n] = sr_intern_cstr(name);
  c->members[c->n] = m;
  c->alias[c->n++] = (uint8_t)alias;
}

static SrVal *by_name(const EnumClass *c, const char *name) {
  const char *in = sr_intern_cstr(name);
  for (int i = 0; i < c->n; i++)
    if (c->names[i] == in) return c->members[i];
  return NULL;
}

static SrVal *by_value(const EnumClass *c, const SrVal *v) {
  for (int i = 0; i < c->n; i++)
    if (!c->alias[i] && sr_val_equal(member(c->members[i])->value, v)) return c->members[i];
  for (int i = 0; i < c->npseudo; i++)
    if (sr_val_equal(member(c->pseudo[i])->value, v)) return c->pseudo[i];
  return NULL;
}

/* A Flag's member for value bits (a new reference): a member, or the
   combination of those whose bits it holds, made once and kept; NULL when
   bits holds one no member has. */
static SrVal *flag_member(SrVal *cls, int64_t bits) {
  EnumClass *c = cls->obj.data;
  SrVal *v = sr_int(NULL, bits);
  SrVal *m = by_value(c, v);
  if (m) {
    sr_unref(v);
    return sr_ref(m);
  }
  SrBuf name = SR_BUF_INIT;
  int64_t covered = 0;
  /* 3.11 names a combination by its members, in their order */
  for (int i = 0; i < c->n; i++) {
    const Member *k = member(c->members[i]);
    if (c->alias[i] || k->value->kind != SR_V_INT) continue;
    int64_t b = k->value->i;
    if (b && (b & (b - 1)) == 0 && (bits & b)) {
      if (name.len) sr_buf_putc(&name, '|');
      sr_buf_puts(&name, k->name);
      covered |= b;
    }
  }
  if (covered != bits && bits != 0) {
    sr_buf_free(&name);
    sr_unref(v);
    return NULL;
  }
  m = member_new(cls, bits ? sr_buf_str(&name) : "0", v);
  sr_buf_free(&name);
  if (c->npseudo == c->cappseudo) {
    c->cappseudo = c->cappseudo ? 2 * c->cappseudo : 8;
    c->pseudo = sr_xrealloc(c->pseudo, (size_t)c->cappseudo * sizeof *c->pseudo);
  }
  c->pseudo[c->npseudo++] = sr_ref(m);
  return m;
}

/* a bound method of a function of the class's body: fn(self, ...) */
typedef struct {
  SrVal *fn, *self;
} Bound;

static void bound_free(void *d) {
  Bound *b = d;
  sr_unref(b->fn);
  sr_unref(b->self);
  free(b);
}

static SrVal *bound_call(SrInterp *I, SrArgs *a) {
  Bound *b = sr_current_builtin(I)->data;
  SrVal *stack[16], **v = a->n + 1 <= 16 ? stack : sr_xmalloc((size_t)(a->n + 1) * sizeof *v);
  v[0] = b->self;
  for (int i = 0; i < a->n; i++) v[i + 1] = a->v[i];
  SrArgs ca = {a->n + 1, v, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = sr_call(I, b->fn, &ca);
  if (v != stack) free(v);
  return r;
}

static SrVal *member_getattr(SrInterp *I, SrVal *self, const char *name) {
  Member *m = member(self);
  if (!m->cls) return NULL;
  EnumClass *c = class_of(m);
  if (strcmp(name, "name") == 0 || strcmp(name, "_name_") == 0) return sr_str_cstr(NULL, m->name);
  if (strcmp(name, "value") == 0 || strcmp(name, "_value_") == 0) return sr_ref(m->value);
  SrVal *k = sr_str_cstr(NULL, name);
  SrVal *v = c->ns ? sr_dict_get(c->ns, k) : NULL;
  sr_unref(k);
  if (v && sr_is_obj(v, &sr_function_class)) {
    Bound *b = sr_xcalloc(1, sizeof *b);
    b->fn = sr_ref(v);
    b->self = sr_ref(self);
    return sr_builtin_with(name, bound_call, b, bound_free);
  }
  if (v) return sr_ref(v);
  if (is_int_kind(c->kind)) {
    /* the int's own attributes: real, conjugate... */
    SrVal *r = sr_getattr(I, m->value, name);
    if (r) return r;
    sr_exc_clear(I);
  }
  return NULL; /* sr_getattr goes on: __class__, or its AttributeError */
}

static int member_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *v) {
  (void)self;
  (void)v;
  if (strcmp(name, "name") == 0 || strcmp(name, "value") == 0)
    sr_raise(I, "AttributeError", "<enum 'Enum'> cannot set attribute '%s'", name);
  else
    sr_raise(I, "AttributeError", "'%s' object attribute '%s' is read-only", class_of(member(self))->name, name);
  return -1;
}

/* the int an IntEnum's or IntFlag's member stands for, or v itself */
static SrVal *as_int(SrVal *v) {
  const Member *m = member(v);
  return m && m->cls && is_int_kind(class_of(m)->kind) ? m->value : v;
}

static SrVal *member_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  const Member *ma = member(a), *mb = member(b);
  const Member *m = ma ? ma : mb;
  if (!m->cls) return NULL;
  EnumClass *c = class_of(m);
  if (is_flag_kind(c->kind) && (op == SR_OP_BITOR || op == SR_OP_BITAND || op == SR_OP_BITXOR)) {
    /* Flag | Flag of the same class is a member of it; an IntFlag with
       an int too */
    int same = ma && mb && ma->cls == mb->cls;
    SrVal *other = ma ? b : a;
    if (same || (c->kind == E_INTFLAG && (other->kind == SR_V_INT || other->kind == SR_V_BOOL))) {
      int64_t x = (ma ? ma->value : a)->i, y = (mb ? mb->value : b)->i;
      int64_t r = op == SR_OP_BITOR ? x | y : op == SR_OP_BITAND ? x & y : x ^ y;
      SrVal *fm = flag_member(m->cls, r);
      if (fm) return fm;
      if (c->kind == E_INTFLAG) return sr_int(NULL, r);
    }
  }
  if (!is_int_kind(c->kind)) {
    /* an Enum's members compare by identity, and have no operators */
    (void)I;
    return NULL;
  }
  return sr_binop(I, op, as_int(a), as_int(b));
}

static SrVal *member_unop(SrInterp *I, int op, SrVal *a) {
  const Member *m = member(a);
  if (!m->cls) return NULL;
  EnumClass *c = class_of(m);
  if (is_flag_kind(c->kind) && op == SR_OP_INVERT) {
    /* ~member: the members' bits it lacks */
    int64_t all = 0;
    for (int i = 0; i < c->n; i++)
      if (!c->alias[i] && member(c->members[i])->value->kind == SR_V_INT) all |= member(c->members[i])->value->i;
    SrVal *fm = flag_member(m->cls, all & ~m->value->i);
    if (fm) return fm;
  }
  if (!is_int_kind(c->kind)) return NULL;
  if (op == SR_OP_ITEM) return sr_ref(m->value); /* int(x), an index */
  return sr_unop(I, op, m->value);
}

static int member_truthy(SrInterp *I, SrVal *self) {
  const Member *m = member(self);
  if (!m->cls) return 1;
  EnumClass *c = class_of(m);
  if (is_int_kind(c->kind) || is_flag_kind(c->kind)) return sr_truthy(I, m->value);
  return 1;
}

/* ---- enum classes ---- */

static SrVal *eclass_call(SrInterp *I, SrVal *self, SrArgs *a) {
  EnumClass *c = eclass(self);
  if (c->root) return sr_raise(I, "NotImplementedError", "the functional API of enum (%s('Name', 'A B')) is not provided: write a class statement", c->name);
  if (a->nkw || a->n != 1) return sr_raise(I, "TypeError", "%s() takes exactly one argument (%d given)", c->name, a->n + a->nkw);
  SrVal *v = a->v[0];
  if (member(v) && member(v)->cls == self) return sr_ref(v);
  SrVal *m = by_value(c, as_int(v));
  if (m) return sr_ref(m);
  if (is_flag_kind(c->kind) && (v->kind == SR_V_INT || v->kind == SR_V_BOOL)) {
    m = flag_member(self, v->i);
    if (m) return m;
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, v);
  sr_raise(I, "ValueError", "%s is not a valid %s", sr_buf_str(&b), c->name);
  sr_buf_free(&b);
  return NULL;
}

static SrVal *eclass_getattr(SrInterp *I, SrVal *self, const char *name) {
  EnumClass *c = eclass(self);
  SrVal *m = by_name(c, name);
  if (m) return sr_ref(m);
  if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, c->name);
  if (strcmp(name, "__module__") == 0) return sr_str_cstr(NULL, c->root ? "enum" : "__main__");
  if (strcmp(name, "__members__") == 0) {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < c->n; i++) sr_dict_set(NULL, d, sr_str_cstr(NULL, c->names[i]), sr_ref(c->members[i]));
    return d;
  }
  SrVal *k = sr_str_cstr(NULL, name);
  SrVal *v = c->ns ? sr_dict_get(c->ns, k) : NULL;
  sr_unref(k);
  if (v) return sr_ref(v);
  if (strcmp(name, "__doc__") == 0) return sr_none();
  if (strcmp(name, "__class__") == 0) return NULL; /* sr_getattr's */
  return sr_raise(I, "AttributeError", "%s", name);
}

static int eclass_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *v) {
  EnumClass *c = eclass(self);
  if (by_name(c, name)) {
    sr_raise(I, "AttributeError", "cannot reassign member '%s'", name);
    return -1;
  }
  if (!c->ns) c->ns = sr_dict(NULL);
  sr_dict_set(NULL, c->ns, sr_str_cstr(NULL, name), sr_ref(v));
  return 0;
}

static SrVal *eclass_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  EnumClass *c = eclass(self);
  SrVal *m = key->kind == SR_V_STR ? by_name(c, key->str.s) : NULL;
  if (m) return sr_ref(m);
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, key);
  sr_raise(I, "KeyError", "%s", sr_buf_str(&b));
  sr_buf_free(&b);
  return NULL;
}

static SrVal *eclass_iter(SrInterp *I, SrVal *self) {
  EnumClass *c = eclass(self);
  SrVal *l = sr_seq(NULL, SR_V_LIST, c->n);
  for (int i = 0; i < c->n; i++)
    if (!c->alias[i]) sr_seq_push(NULL, l, sr_ref(c->members[i]));
  (void)I;
  return l;
}

static int64_t eclass_len(SrInterp *I, SrVal *self) {
  EnumClass *c = eclass(self);
  int64_t n = 0;
  for (int i = 0; i < c->n; i++) n += !c->alias[i];
  (void)I;
  return n;
}

int sr_enum_is_class(const SrVal *v) { return eclass(v) != NULL; }

/* what a body's value is: a member's value, or something the class keeps
   (a function, a descriptor, a dunder or _sunder_ name) */
static int becomes_member(SrInterp *I, const char *name, SrVal *v) {
  size_t n = strlen(name);
  if (n >= 2 && name[0] == '_' && name[n - 1] == '_') return 0;
  if (sr_is_obj(v, &auto_class)) return 1;
  if (sr_is_callable(I, v) || sr_is_obj(v, &eclass_class)) return 0;
  if (v->kind == SR_V_OBJ && !sr_is_obj(v, &member_class)) {
    /* property, staticmethod, classmethod: descriptors stay attributes */
    const char *k = v->obj.cls->name;
    if (strcmp(k, "property") == 0 || strcmp(k, "staticmethod") == 0 || strcmp(k, "classmethod") == 0) return 0;
  }
  return 1;
}

SrVal *sr_enum_class_new(SrInterp *I, const char *name, SrVal *base, SrVal *ns) {
  EnumClass *b = eclass(base);
  if (!b->root && b->n) {
    sr_unref(ns);
    return sr_raise(I, "TypeError", "<enum '%s'> cannot extend <enum '%s'>", name, b->name);
  }
  enum_gc_init();
  EnumClass *c = sr_xcalloc(1, sizeof *c);
  c->name = sr_intern_cstr(name);
  c->kind = b->kind;
  SrVal *cls = sr_obj(&eclass_class, c);
  c->ns = sr_dict(NULL);
  /* a base without members lends its methods */
  if (b->ns)
    for (int i = 0; i < b->ns->dict.n; i++)
      sr_dict_set(NULL, c->ns, sr_ref(b->ns->dict.keys[i]), sr_ref(b->ns->dict.vals[i]));
  int64_t last = 0;
  int any = 0;
  for (int i = 0; i < ns->dict.n; i++) {
    SrVal *k = ns->dict.keys[i], *v = ns->dict.vals[i];
    if (k->kind != SR_V_STR) continue;
    if (!becomes_member(I, k->str.s, v)) {
      sr_dict_set(NULL, c->ns, sr_ref(k), sr_ref(v));
      continue;
    }
    SrVal *value;
    if (sr_is_obj(v, &auto_class)) {
      /* _generate_next_value_: one past the last int, a Flag's next bit */
      int64_t next = !any ? 1 : is_flag_kind(c->kind) ? (last <= 0 ? 1 : (int64_t)1 << (64 - __builtin_clzll((unsigned long long)last))) : last + 1;
      value = sr_int(NULL, next);
    } else {
      value = sr_ref(v);
    }
    if (is_int_kind(c->kind) && value->kind != SR_V_INT && value->kind != SR_V_BOOL) {
      SrBuf r = SR_BUF_INIT;
      sr_val_repr(&r, value);
      sr_raise(I, "ValueError", "invalid literal for int() with base 10: %s", sr_buf_str(&r));
      sr_buf_free(&r);
      sr_unref(value);
      sr_unref(ns);
      sr_unref(cls);
      return NULL;
    }
    if (value->kind == SR_V_INT || value->kind == SR_V_BOOL) last = value->i, any = 1;
    SrVal *same = by_value(c, value);
    if (same) {
      sr_unref(value);
      add_member(c, k->str.s, sr_ref(same), 1);
    } else {
      add_member(c, k->str.s, member_new(cls, k->str.s, value), 0);
    }
  }
  sr_unref(ns);
  return cls;
}

int sr_enum_isinstance(SrVal *x, SrVal *t) {
  EnumClass *tc = eclass(t);
  const Member *m = member(x);
  if (tc) {
    if (!m || !m->cls) return 0;
    if (m->cls == t) return 1;
    if (!tc->root) return 0;
    int k = class_of(m)->kind;
    /* IntEnum is an Enum, IntFlag a Flag */
    return tc->kind == k || tc->kind == E_ENUM || (tc->kind == E_FLAG && k == E_INTFLAG);
  }
  if (m && m->cls && is_int_kind(class_of(m)->kind) && t == sr_lookup_qualname("builtins.int")) return 1;
  return -1;
}

SrVal *sr_enum_type_of(const SrVal *v) {
  const Member *m = member(v);
  return m && m->cls ? m->cls : NULL;
}

int sr_enum_kind_value(const SrVal *v, SrVal **value) {
  const Member *m = member(v);
  if (!m || !m->cls || !is_int_kind(class_of(m)->kind)) return 0;
  *value = m->value;
  return 1;
}

static SrVal *bi_auto(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "auto() takes no arguments");
  return sr_obj(&auto_class, NULL);
}

static void root(const char *qual, const char *name, int kind) {
  EnumClass *c = sr_xcalloc(1, sizeof *c);
  c->name = sr_intern_cstr(name);
  c->kind = kind;
  c->root = 1;
  sr_register(qual, sr_obj(&eclass_class, c));
}

void sr_enum_init(void) {
  root("enum.Enum", "Enum", E_ENUM);
  root("enum.IntEnum", "IntEnum", E_INT);
  root("enum.Flag", "Flag", E_FLAG);
  root("enum.IntFlag", "IntFlag", E_INTFLAG);
  sr_def("enum.auto", bi_auto, "auto(): the next value of an enum's members (one past the last; a Flag's next bit)");
}

/* lax_precision.c: jax.lax.Precision and jax.lax.DotAlgorithmPreset, the
 * enums a dot product's precision= takes, and lax.canonicalize_precision,
 * which every dot and convolution of the API puts its precision through
 * before it binds (sr_lax_canon_precision, jax/lax.h).
 *
 * A member is an object whose repr is Precision.HIGHEST and whose str is
 * HIGHEST, as JAX's enums define them; a class is callable (Precision(2),
 * Precision('highest')), iterable and an isinstance target.  The value a
 * precision becomes in an equation's params is what JAX's printer shows:
 * a pair of words Precision.X, or a preset's bare name, so that a parsed
 * jaxpr and a traced one hold the same thing.  Registered by
 * sr_lax_precision_init (jax.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"

typedef struct Member {
  const struct Enum *e;
  int index; /* into e->names */
} Member;

typedef struct Enum {
  const char *name;
  const char *const *names;
  int n, first_value; /* the members' values are first_value, first_value + 1, ... */
  SrVal **members;    /* made at init, immortal */
  SrVal *cls;
  const char *const *svalues; /* the members' values when strings, or NULL */
} Enum;

static const char *const precision_names[] = {"DEFAULT", "HIGH", "HIGHEST"};
static const char *const preset_names[] = {
    "DEFAULT",          "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32",
    "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3",
    "F32_F32_F32",      "F64_F64_F64"};

static Enum precision_enum = {"Precision", precision_names, 3, 0, NULL, NULL, NULL};
static Enum preset_enum = {"DotAlgorithmPreset", preset_names, 16, 1, NULL, NULL, NULL};
/* api.Inline */
static const char *const inline_names[] = {"JAX_EARLY", "JAX_LATE", "XLA_EARLY", "XLA_LATE", "AUTO"};
static const char *const inline_values[] = {"jax_early", "jax_late", "xla_early", "xla_late", "auto"};
static Enum inline_enum = {"Inline", inline_names, 5, 0, NULL, NULL, inline_values};

/* lax._precision_strings, in its order */
static const struct {
  const char *s;
  int p;
} precision_strings[] = {{"highest", 2}, {"float32", 2},  {"high", 1},    {"bfloat16_3x", 1},
                         {"tensorfloat32", 1}, {"default", 0}, {"bfloat16", 0}, {"fastest", 0}};
enum { NSTRINGS = sizeof precision_strings / sizeof precision_strings[0] };

/* ---- members ---- */

/* Precision's and DotAlgorithmPreset's repr is Class.NAME and str NAME
   (lax.py's); a plain enum.Enum's (Inline's) <Class.NAME: 'value'> and
   Class.NAME */
static void member_repr(SrBuf *out, const SrVal *v) {
  const Member *m = v->obj.data;
  if (m->e->svalues) sr_buf_printf(out, "<%s.%s: '%s'>", m->e->name, m->e->names[m->index], m->e->svalues[m->index]);
  else sr_buf_printf(out, "%s.%s", m->e->name, m->e->names[m->index]);
}

static void member_str(SrBuf *out, const SrVal *v) {
  const Member *m = v->obj.data;
  if (m->e->svalues) sr_buf_printf(out, "%s.%s", m->e->name, m->e->names[m->index]);
  else sr_buf_puts(out, m->e->names[m->index]);
}

static SrVal *member_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const Member *m = self->obj.data;
  if (strcmp(name, "name") == 0 || strcmp(name, "_name_") == 0) return sr_str_cstr(NULL, m->e->names[m->index]);
  if ((strcmp(name, "value") == 0 || strcmp(name, "_value_") == 0) && m->e->svalues)
    return sr_str_cstr(NULL, m->e->svalues[m->index]);
  if (strcmp(name, "value") == 0 || strcmp(name, "_value_") == 0) return sr_int(NULL, m->e->first_value + m->index);
  if (strcmp(name, "__class__") == 0) return sr_ref(m->e->cls);
  return NULL;
}

static const SrLangOps member_ops = {.getattr = member_getattr};
static const SrClass member_class = {"enum member", free, member_repr, member_str, &member_ops};

static const Member *as_member(const SrVal *v, const Enum *e) {
  const Member *m = sr_is_obj(v, &member_class) ? v->obj.data : NULL;
  return m && (!e || m->e == e) ? m : NULL;
}

/* ---- the classes ---- */

static Enum *enum_of(const SrVal *cls) { return cls->obj.data; }

static int member_index(const Enum *e, const char *s, size_t n) {
  for (int i = 0; i < e->n; i++)
    if (strlen(e->names[i]) == n && memcmp(e->names[i], s, n) == 0) return i;
  return -1;
}

/* Precision(x): a member, its value, or (Precision._missing_) one of
   _precision_strings; DotAlgorithmPreset(x): a member or its value. */
static SrVal *enum_call(SrInterp *I, SrVal *self, SrArgs *a) {
  Enum *e = enum_of(self);
  if (a->n != 1 || a->nkw)
    return sr_raise(I, "TypeError", "EnumType.__call__() takes 1 positional argument but %d were given", a->n + 1);
  SrVal *v = a->v[0];
  if (as_member(v, e)) return sr_ref(v);
  if (e->svalues && v->kind == SR_V_STR)
    for (int i = 0; i < e->n; i++)
      if (strlen(e->svalues[i]) == v->str.n && memcmp(e->svalues[i], v->str.s, v->str.n) == 0) return sr_ref(e->members[i]);
  if (!e->svalues && v->kind == SR_V_INT && v->i >= e->first_value && v->i < e->first_value + e->n)
    return sr_ref(e->members[v->i - e->first_value]);
  if (e == &precision_enum) {
    if (v->kind == SR_V_NONE) return sr_ref(e->members[0]);
    if (v->kind == SR_V_STR)
      for (int i = 0; i < NSTRINGS; i++)
        if (strlen(precision_strings[i].s) == v->str.n && memcmp(precision_strings[i].s, v->str.s, v->str.n) == 0)
          return sr_ref(e->members[precision_strings[i].p]);
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, v);
  SrVal *r = sr_raise(I, "ValueError", "%s is not a valid %s", sr_buf_str(&b), e->name);
  sr_buf_free(&b);
  return r;
}

static SrVal *enum_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  Enum *e = enum_of(self);
  int i = member_index(e, name, strlen(name));
  if (i >= 0) return sr_ref(e->members[i]);
  if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, e->name);
  if (strcmp(name, "__members__") == 0) {
    SrVal *d = sr_dict(NULL);
    for (int k = 0; k < e->n; k++) sr_dict_set(NULL, d, sr_str_cstr(NULL, e->names[k]), sr_ref(e->members[k]));
    return d;
  }
  return NULL;
}

static SrVal *enum_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  Enum *e = enum_of(self);
  int i = key->kind == SR_V_STR ? member_index(e, key->str.s, key->str.n) : -1;
  if (i >= 0) return sr_ref(e->members[i]);
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, key);
  SrVal *r = sr_raise(I, "KeyError", "%s", sr_buf_str(&b));
  sr_buf_free(&b);
  return r;
}

static SrVal *enum_iter(SrInterp *I, SrVal *self) {
  (void)I;
  Enum *e = enum_of(self);
  SrVal *l = sr_seq(NULL, SR_V_LIST, e->n);
  for (int i = 0; i < e->n; i++) sr_seq_push(NULL, l, sr_ref(e->members[i]));
  return l;
}

static int64_t enum_len(SrInterp *I, SrVal *self) {
  (void)I;
  return enum_of(self)->n;
}

static int enum_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  return as_member(x, enum_of(self)) != NULL;
}

static void enum_repr(SrBuf *out, const SrVal *v) { sr_buf_printf(out, "<enum '%s'>", enum_of(v)->name); }

static const SrLangOps enum_ops = {.call = enum_call,
                                   .getattr = enum_getattr,
                                   .getitem = enum_getitem,
                                   .iter = enum_iter,
                                   .len = enum_len,
                                   .instancecheck = enum_instancecheck};
static const SrClass enum_class = {"EnumType", NULL, enum_repr, NULL, &enum_ops};

static void make_enum(Enum *e, const char *qualname) {
  e->cls = sr_obj(&enum_class, e);
  e->members = sr_xcalloc((size_t)e->n, sizeof *e->members);
  for (int i = 0; i < e->n; i++) {
    Member *m = sr_xcalloc(1, sizeof *m);
    m->e = e;
    m->index = i;
    e->members[i] = sr_obj(&member_class, m);
  }
  sr_register(qualname, sr_ref(e->cls));
}

/* ---- canonicalize_precision ---- */

static SrVal *precision_word(int p) {
  char w[32];
  int n = snprintf(w, sizeof w, "Precision.%s", precision_names[p]);
  return sr_word(NULL, w, (size_t)n);
}

/* The Precision a value names, or -1: a member, a string of
   _precision_strings, or the word Precision.X a canonical pair holds. */
static int precision_of(const SrVal *v) {
  const Member *m = as_member(v, &precision_enum);
  if (m) return m->index;
  if (v->kind == SR_V_STR)
    for (int i = 0; i < NSTRINGS; i++)
      if (strlen(precision_strings[i].s) == v->str.n && memcmp(precision_strings[i].s, v->str.s, v->str.n) == 0)
        return precision_strings[i].p;
  if (v->kind == SR_V_WORD && v->str.n > 10 && memcmp(v->str.s, "Precision.", 10) == 0)
    return member_index(&precision_enum, v->str.s + 10, v->str.n - 10);
  return -1;
}

static SrVal *pair(int p0, int p1) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, t, precision_word(p0));
  sr_seq_push(NULL, t, precision_word(p1));
  return t;
}

int sr_lax_canon_precision(SrInterp *I, SrVal *v, SrVal **out) {
  *out = NULL;
  if (!v || v->kind == SR_V_NONE) {
    /* None: the jax_default_matmul_precision flag's, when set */
    const char *d = sr_jax_matmul_precision(I->jax);
    if (!d) return 0;
    SrVal *dv = sr_str(NULL, d, strlen(d));
    int rc = sr_lax_canon_precision(I, dv, out);
    sr_unref(dv);
    if (rc < 0) {
      sr_exc_clear(I);
      sr_raise(I, "ValueError",
               "jax_default_matmul_precision flag must be set to None, a value in ['highest', 'float32', 'high', "
               "'bfloat16_3x', 'tensorfloat32', 'default', 'bfloat16', 'fastest', None], or the name of a "
               "lax.DotAlgorithmPreset, but got %s",
               d);
    }
    return rc;
  }
  int p = precision_of(v);
  if (p >= 0 && (v->kind == SR_V_STR || as_member(v, &precision_enum))) {
    *out = pair(p, p);
    return 0;
  }
  const Member *m = as_member(v, &preset_enum);
  int preset = m ? m->index : -1;
  if (preset < 0 && (v->kind == SR_V_STR || v->kind == SR_V_WORD))
    preset = member_index(&preset_enum, v->str.s, v->str.n);
  if (preset >= 0) {
    *out = sr_word(NULL, preset_names[preset], strlen(preset_names[preset]));
    return 0;
  }
  if ((v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) && v->seq.n == 2) {
    SrVal *x = v->seq.items[0], *y = v->seq.items[1];
    int p0 = precision_of(x), p1 = precision_of(y);
    int both_members = as_member(x, &precision_enum) && as_member(y, &precision_enum);
    int both_strings = x->kind == SR_V_STR && y->kind == SR_V_STR;
    int both_words = x->kind == SR_V_WORD && y->kind == SR_V_WORD;
    if (p0 >= 0 && p1 >= 0 && (both_members || both_strings || both_words)) {
      *out = pair(p0, p1);
      return 0;
    }
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  sr_raise(I, "ValueError",
           "Precision argument must be one of:\n"
           "- None,\n"
           "- a string in ['highest', 'float32', 'high', 'bfloat16_3x', 'tensorfloat32', 'default', 'bfloat16', "
           "'fastest', None],\n"
           "- a lax.Precision value,\n"
           "- a tuple of two lax.Precision values or strings,\n"
           "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
           "- a lax.DotAlgorithm value;\n"
           "but got %s.",
           sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

int sr_lax_inline_early(SrInterp *I, SrVal *v, int *early) {
  *early = 0;
  const Member *m = as_member(v, &inline_enum);
  if (m) {
    *early = m->index == 0;
    return 0;
  }
  if (v->kind == SR_V_BOOL) {
    *early = (int)v->i;
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, v);
  sr_raise(I, "ValueError", "Invalid inline option: %s", sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

void sr_lax_precision_init(void) {
  make_enum(&inline_enum, "jax.Inline");
  make_enum(&precision_enum, "jax.lax.Precision");
  make_enum(&preset_enum, "jax.lax.DotAlgorithmPreset");
}

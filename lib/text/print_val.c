/* print_val.c: str() and repr() of values, as Python prints them (the
 * value half of the printer; a jaxpr value prints with print.c). */
#include "text/print_val.h"

#include <stdlib.h>
#include <string.h>

#include "text/print.h"
#include "text/color.h"
#include "util/pyfmt.h"

/* Enters container v for printing; 0 when it is being printed already (it
   holds itself) or the nesting is too deep, and then prints the stand-in. */
static int nest_enter(SrBuf *out, const SrVal *v) {
  const char *again = v->kind == SR_V_DICT ? "{...}" : v->kind == SR_V_LIST ? "[...]" : "(...)";
  int r = sr_val_nest_enter(v);
  if (r == 0) sr_buf_puts(out, again);
  if (r < 0) sr_buf_puts(out, "...");
  return r > 0;
}

static void seq_repr(SrBuf *out, const SrVal *v, const char *open, const char *close) {
  if (!nest_enter(out, v)) return;
  sr_buf_puts(out, open);
  for (int i = 0; i < v->seq.n; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_val_repr(out, v->seq.items[i]);
  }
  if (v->kind == SR_V_TUPLE && v->seq.n == 1) sr_buf_putc(out, ',');
  sr_buf_puts(out, close);
  sr_val_nest_leave();
}

/* Sets of small ints show ascending, which is CPython's hash order for
   them; other sets show in insertion order (CPython's varies by run). */
static int cmp_ints(const void *x, const void *y) {
  int64_t a = (*(SrVal *const *)x)->i, b = (*(SrVal *const *)y)->i;
  return (a > b) - (a < b);
}

static void set_repr(SrBuf *out, const SrVal *v, const char *open, const char *close) {
  int ints = 1;
  for (int i = 0; i < v->seq.n; i++) {
    const SrVal *x = v->seq.items[i];
    ints &= (x->kind == SR_V_INT || x->kind == SR_V_BOOL) && x->i >= 0 && x->i < (1 << 20);
  }
  if (!ints) {
    seq_repr(out, v, open, close);
    return;
  }
  SrVal copy = *v;
  copy.seq.items = sr_xmalloc((size_t)v->seq.n * sizeof(SrVal *));
  sr_copy(copy.seq.items, v->seq.items, (size_t)v->seq.n * sizeof(SrVal *));
  qsort(copy.seq.items, (size_t)v->seq.n, sizeof(SrVal *), cmp_ints);
  seq_repr(out, &copy, open, close);
  free(copy.seq.items);
}

static void print_val(SrBuf *out, const SrVal *v, int repr) {
  if (v->text && !(v->kind == SR_V_STR && !repr)) {
    sr_buf_putn(out, v->text, v->textlen);
    return;
  }
  switch (v->kind) {
  case SR_V_NONE: sr_buf_puts(out, "None"); break;
  case SR_V_BOOL: sr_buf_puts(out, v->i ? "True" : "False"); break;
  case SR_V_INT: sr_buf_printf(out, "%lld", (long long)v->i); break;
  case SR_V_FLOAT: sr_py_float_repr(out, v->f); break;
  case SR_V_COMPLEX: sr_py_complex_str(out, v->c.re, v->c.im); break;
  case SR_V_STR:
    if (repr)
      sr_py_str_repr(out, v->str.s, v->str.n);
    else
      sr_buf_putn(out, v->str.s, v->str.n);
    break;
  case SR_V_WORD: sr_buf_putn(out, v->str.s, v->str.n); break;
  case SR_V_TUPLE: seq_repr(out, v, "(", ")"); break;
  case SR_V_LIST: seq_repr(out, v, "[", "]"); break;
  case SR_V_SET:
    if (v->seq.n == 0)
      sr_buf_puts(out, "set()");
    else
      set_repr(out, v, "{", "}");
    break;
  case SR_V_FROZENSET:
    if (v->seq.n == 0)
      sr_buf_puts(out, "frozenset()");
    else
      seq_repr(out, v, "frozenset({", "})");
    break;
  case SR_V_DICT:
    if (!nest_enter(out, v)) break;
    sr_buf_putc(out, '{');
    for (int i = 0; i < v->dict.n; i++) {
      if (i) sr_buf_puts(out, ", ");
      sr_val_repr(out, v->dict.keys[i]);
      sr_buf_puts(out, ": ");
      sr_val_repr(out, v->dict.vals[i]);
    }
    sr_buf_putc(out, '}');
    sr_val_nest_leave();
    break;
  case SR_V_DTYPE:
    if (repr) {
      /* numpy's own dtypes quote their names; ml_dtypes' (bfloat16, the
         float8s, int4...) print as the scalar type: dtype(bfloat16) */
      SrDtype d = v->dtype;
      int native = d == SR_BOOL || d == SR_I8 || d == SR_I16 || d == SR_I32 || d == SR_I64 || d == SR_U8 ||
                   d == SR_U16 || d == SR_U32 || d == SR_U64 || d == SR_F16 || d == SR_F32 || d == SR_F64 ||
                   d == SR_C64 || d == SR_C128 || sr_dtype_kind(d) == SR_DK_OTHER || sr_dtype_kind(d) == SR_DK_FLOAT0;
      if (strncmp(sr_dtype_name(d), "key<", 4) == 0) sr_buf_puts(out, sr_dtype_name(d)); /* prng.KeyTy's repr */
      else sr_buf_printf(out, native ? "dtype('%s')" : "dtype(%s)", sr_dtype_name(d));
    } else {
      sr_buf_puts(out, sr_dtype_name(v->dtype));
    }
    break;
  case SR_V_SPEC: sr_spec_repr(out, v->spec); break;
  case SR_V_SHARDING: sr_sharding_repr(out, v->sh.mesh, v->sh.spec, v->sh.memory_kind); break;
  case SR_V_MESH:
    if (repr)
      sr_mesh_repr(out, v->mesh);
    else
      sr_mesh_str(out, v->mesh);
    break;
  case SR_V_AXISTYPE: sr_buf_puts(out, sr_axis_type_name(v->axistype)); break;
  case SR_V_JAXPR:
    if (sr_color_on() && sr_pprint_use_color) {
      SrBuf plain = SR_BUF_INIT;
      sr_print_jaxpr(&plain, v->jx.jaxpr);
      sr_color_jaxpr(out, plain.p, plain.len);
      sr_buf_free(&plain);
    } else {
      sr_print_jaxpr(out, v->jx.jaxpr);
    }
    break;
  case SR_V_JAXPR_REF: sr_buf_puts(out, v->ref.name); break;
  case SR_V_OBJ: sr_obj_print(out, v, repr); break;
  }
}

void sr_val_str(SrBuf *out, const SrVal *v) { print_val(out, v, 0); }
void sr_val_repr(SrBuf *out, const SrVal *v) { print_val(out, v, 1); }

void sr_tree_node_free(SrTreeNode *t) {
  if (!t) return;
  for (int i = 0; i < t->n; i++) sr_tree_node_free(t->kid[i]);
  free(t->kid);
  free(t->keys);
  free(t->head);
  sr_unref(t->like);
  free(t);
}

void sr_tree_node_print(SrBuf *b, const SrTreeNode *t) {
  const SrVal *v = t->like;
  if (!v) {
    sr_buf_putc(b, '*');
  } else if (v->kind == SR_V_NONE) {
    sr_buf_puts(b, "None");
  } else if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    sr_buf_putc(b, v->kind == SR_V_TUPLE ? '(' : '[');
    for (int i = 0; i < t->n; i++) {
      if (i) sr_buf_puts(b, ", ");
      sr_tree_node_print(b, t->kid[i]);
    }
    if (v->kind == SR_V_TUPLE && t->n == 1) sr_buf_putc(b, ',');
    sr_buf_putc(b, v->kind == SR_V_TUPLE ? ')' : ']');
  } else if (v->kind == SR_V_DICT) {
    sr_buf_putc(b, '{');
    for (int i = 0; i < t->n; i++) {
      if (i) sr_buf_puts(b, ", ");
      if (t->keys && t->keys[i]) sr_val_repr(b, t->keys[i]);
      sr_buf_puts(b, ": ");
      sr_tree_node_print(b, t->kid[i]);
    }
    sr_buf_putc(b, '}');
  } else {
    if (t->head) sr_buf_printf(b, "CustomNode(%s, [", t->head);
    else sr_buf_printf(b, "CustomNode(%s[...], [", sr_val_kind_name(v));
    for (int i = 0; i < t->n; i++) {
      if (i) sr_buf_puts(b, ", ");
      sr_tree_node_print(b, t->kid[i]);
    }
    sr_buf_puts(b, "])");
  }
}

/* The structure of a value-shaped tree: None, tuples and lists always
   expand; any other node expands when children() gives its children. */
static SrTreeNode *node_of_value(const SrVal *v, SrVal *(*children)(SrVal *v)) {
  SrTreeNode *t = sr_xcalloc(1, sizeof *t);
  SrVal *ch = NULL;
  const SrVal *const *kids = NULL;
  if (v->kind == SR_V_NONE) {
    t->like = sr_ref((SrVal *)v);
    return t;
  }
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    t->n = v->seq.n;
    kids = (const SrVal *const *)v->seq.items;
  } else {
    ch = children ? children((SrVal *)v) : NULL;
    if (!ch) return t; /* a leaf */
    t->n = ch->seq.n;
    kids = (const SrVal *const *)ch->seq.items;
  }
  t->like = sr_ref((SrVal *)v);
  t->kid = sr_xcalloc(t->n ? t->n : 1, sizeof *t->kid);
  if (v->kind == SR_V_DICT) t->keys = sr_xcalloc(t->n ? t->n : 1, sizeof *t->keys);
  for (int i = 0; i < t->n; i++) {
    t->kid[i] = node_of_value(kids[i], children);
    if (t->keys) /* the key whose value this child is */
      for (int q = 0; q < v->dict.n; q++)
        if (v->dict.vals[q] == kids[i]) {
          t->keys[i] = v->dict.keys[q];
          break;
        }
  }
  sr_unref(ch);
  return t;
}

void sr_treedef_str(SrBuf *b, const SrVal *tree, SrVal *(*children)(SrVal *v)) {
  SrTreeNode *t = node_of_value(tree, children);
  sr_buf_puts(b, "PyTreeDef(");
  sr_tree_node_print(b, t);
  sr_buf_putc(b, ')');
  sr_tree_node_free(t);
}

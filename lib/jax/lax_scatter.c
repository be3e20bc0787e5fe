/* lax_scatter.c: lax.scatter_apply and x.at[idx].apply (slicing.py's
 * scatter_apply: a scatter whose update_jaxpr is func's, traced on
 * scalars, that the evaluator applies at each index in turn), and lax's
 * public gather/scatter API: lax.gather, lax.scatter and its kin,
 * GatherDimensionNumbers, ScatterDimensionNumbers and GatherScatterMode.
 *
 * The dimension numbers are NamedTuples as JAX's are; the primitives
 * take them as the text JAX prints (ScatterDimensionNumbers(update_...)),
 * their fields as tuples of ints.  A GatherScatterMode member is the word
 * GatherScatterMode.CLIP (its str; JAX's repr is <GatherScatterMode.CLIP: 1>). */
#include <stdlib.h>
#include <string.h>

#include "jax/api.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/lax_scatter.h"
#include "jax/numpy.h"
#include "check/rule.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- update_jaxpr: lax._reduction_jaxpr(lambda x, _: func(x), aval) ---- */

static SrVal *apply_body(SrInterp *I, SrArgs *a) {
  SrVal *func = sr_current_builtin(I)->data;
  if (a->n != 2) return sr_raise(I, "TypeError", "_apply takes 2 arguments");
  SrArgs ca = {1, a->v, 0, NULL, NULL, NULL};
  return sr_call(I, func, &ca);
}

static void unref_data(void *p) { sr_unref(p); }

/* The ClosedJaxpr of func(x) on x of zero's type (and an unused second
   argument), and its consts; NULL with JAX's exception. */
static SrJaxpr *reduction_jaxpr(SrInterp *I, SrVal *func, SrVal *zero) {
  SrVal *wrap = sr_builtin_with("_apply", apply_body, sr_ref(func), unref_data);
  SrVal *args[2] = {zero, zero}, *out_tree = NULL, *captured = NULL;
  SrJaxpr *j = sr_trace_fn(I, wrap, 2, args, 0, NULL, NULL, SR_TRACE_CONSTVARS, &out_tree, &captured);
  sr_unref(wrap);
  if (j && captured && captured->seq.n > 0) {
    sr_raise(I, "NotImplementedError",
             "Reduction computations can't close over Tracers. Please open an issue at https://github.com/jax-ml/jax.");
    sr_program_unref(j->prog);
    j = NULL;
  } else if (j && (j->nout != 1 || !sr_array_of(out_tree))) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, out_tree);
    sr_raise(I, "ValueError",
             "Invalid return type from reduction function: <class '%s'>\nReduction functions should only return an "
             "array.\nFull return value: %s",
             sr_val_kind_name(out_tree), sr_buf_str(&b));
    sr_buf_free(&b);
    sr_program_unref(j->prog);
    j = NULL;
  }
  sr_unref(out_tree);
  sr_unref(captured);
  return j;
}

SrVal *sr_lax_scatter_apply_bind(SrInterp *I, SrVal *x, SrVal *ix, SrVal *func, SrVal *dnums,
                                 const int64_t *ushape, int nu, int sorted, int unique, SrVal *mode) {
  SrVal *r = NULL, *zero = NULL, *unused = NULL;
  const SrType *t = sr_value_type(I, x);
  /* unused = lax.full(update_shape, 0, operand.dtype) */
  SrVal *z0 = sr_int(NULL, 0);
  zero = t ? sr_jnp_asarray(I, z0, t->dtype) : NULL;
  sr_unref(z0);
  if (zero) unused = sr_lax_broadcast_to(I, zero, ushape, nu, NULL);
  SrJaxpr *j = unused ? reduction_jaxpr(I, func, zero) : NULL;
  if (j) {
    SrVal *consts = sr_seq(NULL, SR_V_TUPLE, (int)j->nconst);
    for (uint32_t i = 0; i < j->nconst; i++) sr_seq_push(NULL, consts, j->consts[i] ? sr_ref(j->consts[i]) : sr_none());
    SrVal *jv = sr_jaxpr_val(NULL, j);
    sr_program_unref(j->prog);
    SrVal *in[3] = {sr_ref(x), sr_ref(ix), sr_ref(unused)};
    if (sr_auto_insert_reshard(I, 3, in) == 0) {
      r = sr_bindv(I, SR_P_scatter, 3, in, "dimension_numbers", sr_ref(dnums), "indices_are_sorted", sr_bool(sorted),
                   "mode", sr_ref(mode), "unique_indices", sr_bool(unique), "update_consts", consts, "update_jaxpr",
                   jv, NULL);
    } else {
      sr_unref(consts);
      sr_unref(jv);
    }
    for (int i = 0; i < 3; i++) sr_unref(in[i]);
  }
  sr_unref(zero);
  sr_unref(unused);
  return r;
}

/* ---- GatherDimensionNumbers, ScatterDimensionNumbers ---- */

static const char *const dn_names[2] = {"GatherDimensionNumbers", "ScatterDimensionNumbers"};
static const char *const dn_fields[2][5] = {
    {"offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims", "start_indices_batching_dims"},
    {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "operand_batching_dims",
     "scatter_indices_batching_dims"}};

/* The NamedTuple classes (their last two fields default to ()), made on
   first use. */
static SrVal *dn_class[2];

static SrVal *dn_make(SrInterp *I, SrArgs *a, int scatter) {
  if (!dn_class[scatter]) {
    SrVal *nt = sr_lookup_qualname("collections.namedtuple");
    if (!nt) return sr_raise(I, "NotImplementedError", "collections.namedtuple is not available");
    SrBuf f = SR_BUF_INIT;
    for (int i = 0; i < 5; i++) {
      if (i) sr_buf_putc(&f, ' ');
      sr_buf_puts(&f, dn_fields[scatter][i]);
    }
    SrVal *empty = sr_seq(NULL, SR_V_TUPLE, 0), *defaults = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, defaults, sr_ref(empty));
    sr_seq_push(NULL, defaults, empty);
    SrVal *v[2] = {sr_str(NULL, dn_names[scatter], strlen(dn_names[scatter])), sr_str(NULL, sr_buf_str(&f), f.len)};
    const char *kw[1] = {sr_intern_cstr("defaults")};
    SrArgs na = {2, v, 1, kw, &defaults, NULL};
    dn_class[scatter] = sr_call(I, nt, &na);
    sr_unref(v[0]);
    sr_unref(v[1]);
    sr_unref(defaults);
    sr_buf_free(&f);
    if (!dn_class[scatter]) return NULL;
  }
  SrArgs ca = {a->n, a->v, a->nkw, a->kw, a->kwv, NULL};
  return sr_call(I, dn_class[scatter], &ca);
}

static SrVal *lax_gdn(SrInterp *I, SrArgs *a) { return dn_make(I, a, 0); }
static SrVal *lax_sdn(SrInterp *I, SrArgs *a) { return dn_make(I, a, 1); }

/* A GatherDimensionNumbers (scatter 0) or ScatterDimensionNumbers (1), or
   a tuple of its fields, as the param text JAX prints. */
static SrVal *dn_word(SrInterp *I, SrVal *v, int scatter) {
  int plain = v && v->kind == SR_V_TUPLE;
  if (!v || (plain && (v->seq.n < 3 || v->seq.n > 5)))
    return sr_raise(I, "TypeError", "dimension_numbers must be a %s", dn_names[scatter]);
  SrBuf s = SR_BUF_INIT;
  sr_buf_puts(&s, dn_names[scatter]);
  sr_buf_putc(&s, '(');
  for (int i = 0; i < 5; i++) {
    int64_t d[SR_MAX_RANK + 1];
    int n = 0;
    /* a plain tuple's items, else the NamedTuple's fields */
    SrVal *f = plain ? (i < v->seq.n ? sr_ref(v->seq.items[i]) : NULL) : sr_getattr(I, v, dn_fields[scatter][i]);
    int bad = !plain && !f;
    if (!bad && f) bad = sr_ints_arg(I, f, d, &n, dn_fields[scatter][i]) < 0;
    sr_unref(f);
    if (bad) {
      sr_buf_free(&s);
      return NULL;
    }
    if (i) sr_buf_puts(&s, ", ");
    sr_buf_printf(&s, "%s=", dn_fields[scatter][i]);
    sr_ints_str(&s, d, n);
  }
  sr_buf_putc(&s, ')');
  SrVal *r = sr_word(NULL, sr_buf_str(&s), s.len);
  sr_buf_free(&s);
  return r;
}

static int flag(SrInterp *I, SrVal *v) { return v ? sr_truthy(I, v) : 0; }

/* ---- lax.gather ---- */

static SrVal *lax_gather(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  if (sr_args_parse(I, a, "gather",
                    "operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=, "
                    "indices_are_sorted=, mode=, fill_value=",
                    p) < 0)
    return NULL;
  int64_t ss[SR_MAX_RANK + 1];
  int nss = 0, unique = flag(I, p[4]), sorted = unique < 0 ? -1 : flag(I, p[5]);
  const char *mode = sorted < 0 ? NULL : sr_gs_mode_name(I, p[6], 1);
  if (!mode || sr_ints_arg(I, p[3], ss, &nss, "slice_sizes") < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *ix = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  SrVal *gdn = ix ? dn_word(I, p[2], 0) : NULL, *r = NULL;
  if (gdn) r = sr_gs_bind_gather(I, x, ix, gdn, ss, nss, mode, p[7], unique, sorted);
  sr_unref(x);
  sr_unref(ix);
  return r;
}

/* ---- lax.scatter and its kin ---- */

static SrVal *scatter_kin(SrInterp *I, SrArgs *a, const char *name, int prim) {
  SrVal *p[7];
  if (sr_args_parse(I, a, name,
                    "operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=, unique_indices=, "
                    "mode=",
                    p) < 0)
    return NULL;
  int sorted = flag(I, p[4]), unique = sorted < 0 ? -1 : flag(I, p[5]);
  const char *mode = unique < 0 ? NULL : sr_gs_mode_name(I, p[6], 0);
  if (!mode) return NULL;
  SrVal *in[3] = {NULL, NULL, NULL}, *dn = NULL, *r = NULL;
  for (int i = 0; i < 3; i++)
    if (!(in[i] = sr_jnp_asarray(I, p[i], -1))) goto out;
  if (!(dn = dn_word(I, p[3], 1))) goto out;
  SrDtype dt = sr_value_type(I, in[0])->dtype;
  if (sr_auto_insert_reshard(I, 3, in) == 0)
    r = sr_bindv(I, prim, 3, in, "dimension_numbers", dn, "indices_are_sorted", sr_bool(sorted), "mode",
                 sr_gs_mode_word(mode), "unique_indices", sr_bool(unique), "update_consts",
                 sr_seq(NULL, SR_V_TUPLE, 0), "update_jaxpr", sr_lax_scatter_update_jaxpr(prim, dt), NULL);
  else sr_unref(dn);
out:
  for (int i = 0; i < 3; i++) sr_unref(in[i]);
  return r;
}

static SrVal *lax_scatter(SrInterp *I, SrArgs *a) { return scatter_kin(I, a, "scatter", SR_P_scatter); }
static SrVal *lax_scatter_add(SrInterp *I, SrArgs *a) { return scatter_kin(I, a, "scatter_add", SR_P_scatter_add); }
static SrVal *lax_scatter_sub(SrInterp *I, SrArgs *a) { return scatter_kin(I, a, "scatter_sub", SR_P_scatter_sub); }
static SrVal *lax_scatter_mul(SrInterp *I, SrArgs *a) { return scatter_kin(I, a, "scatter_mul", SR_P_scatter_mul); }
static SrVal *lax_scatter_min(SrInterp *I, SrArgs *a) { return scatter_kin(I, a, "scatter_min", SR_P_scatter_min); }
static SrVal *lax_scatter_max(SrInterp *I, SrArgs *a) { return scatter_kin(I, a, "scatter_max", SR_P_scatter_max); }

static SrVal *lax_scatter_apply(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  if (sr_args_parse(I, a, "scatter_apply",
                    "operand, scatter_indices, func, dimension_numbers, *, update_shape=, indices_are_sorted=, "
                    "unique_indices=, mode=",
                    p) < 0)
    return NULL;
  int64_t us[SR_MAX_RANK + 1];
  int nu = 0, sorted = flag(I, p[5]), unique = sorted < 0 ? -1 : flag(I, p[6]);
  const char *mode = unique < 0 ? NULL : sr_gs_mode_name(I, p[7], 0);
  if (!mode || (p[4] && sr_ints_arg(I, p[4], us, &nu, "update_shape") < 0)) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *ix = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  SrVal *dn = ix ? dn_word(I, p[3], 1) : NULL, *r = NULL;
  if (dn) {
    SrVal *mw = sr_gs_mode_word(mode);
    r = sr_lax_scatter_apply_bind(I, x, ix, p[2], dn, us, nu, sorted, unique, mw);
    sr_unref(mw);
  }
  sr_unref(dn);
  sr_unref(x);
  sr_unref(ix);
  return r;
}

/* ---- GatherScatterMode ---- */

/* The enum class: its members are the param words, from_any a method. */
static SrVal *gs_from_any(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "from_any", "s", p) < 0) return NULL;
  const char *m = sr_gs_mode_name(I, p[0], 0);
  return m ? sr_gs_mode_word(m) : NULL;
}

static const char *const gs_members[4] = {"CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS", "ONE_HOT"};

static SrVal *gs_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  for (int i = 0; i < 4; i++)
    if (strcmp(name, gs_members[i]) == 0) return sr_gs_mode_word(gs_members[i]);
  if (strcmp(name, "from_any") == 0) return sr_bound_method(self, "from_any", gs_from_any);
  if (strcmp(name, "__name__") == 0) return sr_str(NULL, "GatherScatterMode", 17);
  return NULL;
}

static void gs_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<enum 'GatherScatterMode'>");
}

static const SrLangOps gs_ops = {.getattr = gs_getattr};
static const SrClass gs_class = {"EnumType", free, gs_repr, NULL, &gs_ops};

void sr_lax_scatter_init(void) {
  sr_def("jax.lax.GatherDimensionNumbers", lax_gdn,
         "GatherDimensionNumbers(offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims=(), "
         "start_indices_batching_dims=()): a gather's dimension numbers (a NamedTuple)");
  sr_def("jax.lax.ScatterDimensionNumbers", lax_sdn,
         "ScatterDimensionNumbers(update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, "
         "operand_batching_dims=(), scatter_indices_batching_dims=()): a scatter's dimension numbers (a NamedTuple)");
  sr_def("jax.lax.gather", lax_gather,
         "gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False, "
         "indices_are_sorted=False, mode=None, fill_value=None): XLA's gather (mode PROMISE_IN_BOUNDS by default)");
  sr_def("jax.lax.scatter", lax_scatter,
         "scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False, "
         "unique_indices=False, mode=None): XLA's scatter, the updates replacing (mode FILL_OR_DROP by default)");
  sr_def("jax.lax.scatter_add", lax_scatter_add,
         "scatter_add(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False, "
         "unique_indices=False, mode=None): the updates added at the indices");
  sr_def("jax.lax.scatter_sub", lax_scatter_sub,
         "scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, ...): the updates subtracted");
  sr_def("jax.lax.scatter_mul", lax_scatter_mul,
         "scatter_mul(operand, scatter_indices, updates, dimension_numbers, *, ...): multiplied by the updates");
  sr_def("jax.lax.scatter_min", lax_scatter_min,
         "scatter_min(operand, scatter_indices, updates, dimension_numbers, *, ...): the least of each and its updates");
  sr_def("jax.lax.scatter_max", lax_scatter_max,
         "scatter_max(operand, scatter_indices, updates, dimension_numbers, *, ...): the greatest of each and its "
         "updates");
  sr_def("jax.lax.scatter_apply", lax_scatter_apply,
         "scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), "
         "indices_are_sorted=False, unique_indices=False, mode=None): func applied at the indices, again at a "
         "repeated one");
  sr_register("jax.lax.GatherScatterMode", sr_obj(&gs_class, sr_xcalloc(1, 1)));
}

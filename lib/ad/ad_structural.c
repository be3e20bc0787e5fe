/* ad_structural.c: JVP and transpose rules of contractions, reductions
 * and the structural primitives (lax/lax.py, lax/slicing.py).
 *
 * The transposes take their output shardings from the cotangent type of
 * the operand they produce a cotangent for: that is how a dot_general
 * whose weights were {R:X} comes out {U:X} with no communication, and how
 * a reduce_sum's cotangent is broadcast back onto the operand's sharding.
 */
#include "ad/ad_rules.h"

#include <stdlib.h>
#include <string.h>

#include "util/intern.h"

int sr_ad_jvp_linear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)
#define JVP(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

/* An int tuple param (NULL or None: n = 0). */
static int param_ints(const SrEqn *e, const char *key, int64_t *out, int max) {
  SrVal *v = param(e, key);
  int n = 0;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (sr_val_ints(v, out, max, &n) < 0) return -1;
  return n;
}

static int64_t param_int(const SrEqn *e, const char *key, int64_t dflt) {
  SrVal *v = param(e, key);
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? v->i : dflt;
}

static const SrType *ct_of(const SrEqn *e, int i) { return sr_ad_ct_type(e->in[i]->type); }

static void argsort(const int64_t *v, int n, int64_t *out) {
  for (int i = 0; i < n; i++) out[i] = i;
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && v[out[k - 1]] > v[out[k]]; k--) {
      int64_t s = out[k];
      out[k] = out[k - 1];
      out[k - 1] = s;
    }
}

static int contains(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

/* ---- dot_general ---- */

typedef struct Dims {
  int64_t lc[SR_MAX_RANK], rc[SR_MAX_RANK], lb[SR_MAX_RANK], rb[SR_MAX_RANK];
  int nc, nb;
} Dims;

static int seq_ints(const SrVal *v, int64_t *out, int *n) {
  if (!v || !sr_is_seq(v)) return -1;
  return sr_val_ints(v, out, SR_MAX_RANK, n);
}

static int dot_dims(SrAd *ad, const SrEqn *e, Dims *d) {
  SrVal *v = param(e, "dimension_numbers");
  int n1, n2, n3, n4;
  if (!v || !sr_is_seq(v) || v->seq.n != 2 || !sr_is_seq(v->seq.items[0]) || !sr_is_seq(v->seq.items[1]) ||
      v->seq.items[0]->seq.n != 2 || v->seq.items[1]->seq.n != 2 ||
      seq_ints(v->seq.items[0]->seq.items[0], d->lc, &n1) < 0 ||
      seq_ints(v->seq.items[0]->seq.items[1], d->rc, &n2) < 0 ||
      seq_ints(v->seq.items[1]->seq.items[0], d->lb, &n3) < 0 ||
      seq_ints(v->seq.items[1]->seq.items[1], d->rb, &n4) < 0 || n1 != n2 || n3 != n4) {
    sr_raise(ad->I, "TypeError", "dot_general: malformed dimension_numbers");
    return -1;
  }
  d->nc = n1;
  d->nb = n3;
  return 0;
}

static SrVal *dims_val(const int64_t *lc, const int64_t *rc, int nc, const int64_t *lb, const int64_t *rb, int nb) {
  SrVal *c = sr_seq(NULL, SR_V_TUPLE, 2), *b = sr_seq(NULL, SR_V_TUPLE, 2), *r = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, c, ad_ints(lc, nc));
  sr_seq_push(NULL, c, ad_ints(rc, nc));
  sr_seq_push(NULL, b, ad_ints(lb, nb));
  sr_seq_push(NULL, b, ad_ints(rb, nb));
  sr_seq_push(NULL, r, c);
  sr_seq_push(NULL, r, b);
  return r;
}

JVP(jvp_dot_general) {
  /* defbilinear: dot(g, y) + dot(x, g'), each with the equation's params */
  y[0] = ad_bind_eqn1(ad, e, x);
  SrVal *a = NULL, *b = NULL;
  if (t[0]) {
    SrVal *in[2] = {t[0], x[1]};
    a = ad_bind_eqn1(ad, e, in);
    if (!a) return -1;
  }
  if (t[1]) {
    SrVal *in[2] = {x[0], t[1]};
    b = ad_bind_eqn1(ad, e, in);
    if (!b) return -1;
  }
  ty[0] = ad_add_tangents(ad, a, b);
  return y[0] && ty[0] ? 0 : -1;
}

/* _dot_general_transpose_lhs: the cotangent of x (ct type xt) from the
   output cotangent g and the other operand yv. */
static SrVal *dot_transpose_lhs(SrAd *ad, const SrEqn *e, SrVal *g, const SrType *xt, SrVal *yv,
                                const int64_t *xc, const int64_t *yc, int nc, const int64_t *xb,
                                const int64_t *yb, int nb, int swap_ans) {
  const SrType *ytype = ad_type(ad, yv);
  if (!ytype || !g) return NULL;
  int xn = xt->ndim, yn = ytype->ndim;
  int64_t xk[SR_MAX_RANK], yk[SR_MAX_RANK];
  int nxk = 0, nyk = 0;
  for (int i = 0; i < xn; i++)
    if (!contains(xc, nc, i) && !contains(xb, nb, i)) xk[nxk++] = i;
  for (int i = 0; i < yn; i++)
    if (!contains(yc, nc, i) && !contains(yb, nb, i)) yk[nyk++] = i;
  int64_t ans_batch[SR_MAX_RANK], ans_y[SR_MAX_RANK];
  for (int i = 0; i < nb; i++) ans_batch[i] = i;
  int ystart = swap_ans ? nb : nb + nxk;
  for (int i = 0; i < nyk; i++) ans_y[i] = ystart + i;
  /* x_contract sorted by y_contract */
  int64_t ord[SR_MAX_RANK], xcs[SR_MAX_RANK];
  argsort(yc, nc, ord);
  for (int i = 0; i < nc; i++) xcs[i] = xc[ord[i]];
  int64_t unsorted[SR_MAX_RANK] = {0}, out_axes[SR_MAX_RANK];
  int nu = 0;
  for (int i = 0; i < nb; i++) unsorted[nu++] = xb[i];
  for (int i = 0; i < nxk; i++) unsorted[nu++] = xk[i];
  for (int i = 0; i < nc; i++) unsorted[nu++] = xcs[i];
  argsort(unsorted, nu, out_axes);
  /* ds: x's cotangent sharding, its partitions in the dot's output order */
  SrTypeBuilder b;
  sr_type_builder(&b, xt);
  for (int i = 0; i < nu; i++) b.dims[i] = xt->dims[unsorted[i]];
  const SrType *ds = sr_type_get(&b);
  SrVal *in[2] = {g, yv};
  SrVal *prec = param(e, "precision"), *pet = param(e, "preferred_element_type");
  SrVal *r = ad_bindv(ad, SR_P_dot_general, 2, in, "dimension_numbers", dims_val(ans_y, yk, nyk, ans_batch, yb, nb),
                      "precision", prec ? sr_ref(prec) : sr_none(), "preferred_element_type",
                      pet ? sr_ref(pet) : sr_none(), "out_sharding", ad_sharding_param(ad, ds), NULL);
  r = ad_transpose(ad, r, out_axes, nu);
  const SrType *rt = ad_type(ad, r);
  if (rt && rt->dtype != xt->dtype) r = ad_convert(ad, r, xt->dtype, xt->weak);
  return r;
}

TR(tr_dot_general) {
  Dims d;
  if (dot_dims(ad, e, &d) < 0) return -1;
  if (!x[0] && !x[1]) return sr_raise(ad->I, "ValueError", "dot_general is bilinear: it transposes in one operand only"), -1;
  if (!x[0]) {
    cx[0] = dot_transpose_lhs(ad, e, ct[0], ct_of(e, 0), x[1], d.lc, d.rc, d.nc, d.lb, d.rb, d.nb, 0);
    return cx[0] ? 0 : -1;
  }
  cx[1] = dot_transpose_lhs(ad, e, ct[0], ct_of(e, 1), x[0], d.rc, d.lc, d.nc, d.rb, d.lb, d.nb, 1);
  return cx[1] ? 0 : -1;
}

/* ---- reductions ---- */

TR(tr_reduce_sum) {
  (void)x;
  int64_t axes[SR_MAX_RANK], bd[SR_MAX_RANK];
  int na = param_ints(e, "axes", axes, SR_MAX_RANK);
  if (na < 0) return sr_raise(ad->I, "TypeError", "reduce_sum: malformed axes"), -1;
  const SrType *ot = ct_of(e, 0);
  int nb = 0;
  for (int i = 0; i < ot->ndim; i++)
    if (!contains(axes, na, i)) bd[nb++] = i;
  cx[0] = ad_broadcast_in_dim(ad, ct[0], ot, bd, nb, 1);
  return cx[0] ? 0 : -1;
}



JVP(jvp_reduce_chooser) {
  /* div(reduce_sum(mul(g, loc), axes), reduce_sum(loc, axes)) with
     loc = convert(eq(operand, reshape(ans, shape with 1s)), g.dtype) */
  SrVal *ans = y[0] = ad_bind_eqn1(ad, e, x);
  const SrType *xt = ad_type(ad, x[0]);
  if (!ans || !xt) return -1;
  int64_t axes[SR_MAX_RANK];
  int na = param_ints(e, "axes", axes, SR_MAX_RANK);
  SrTypeBuilder b;
  sr_type_builder(&b, xt);
  for (int i = 0; i < b.ndim; i++) {
    b.dims[i].nax = 0;
    if (contains(axes, na, i)) b.dims[i].size = 1;
  }
  b.unreduced = b.reduced = 0;
  SrVal *r = ad_reshape_plain(ad, ans, sr_type_get(&b));
  SrVal *loc = ad_convert(ad, ad_binop(ad, SR_P_eq, x[0], r), ad_type(ad, t[0])->dtype, 0);
  SrVal *counts = ad_reduce_sum(ad, loc, axes, na, NULL);
  ty[0] = ad_div(ad, ad_reduce_sum(ad, ad_mul(ad, t[0], loc), axes, na, NULL), counts);
  return ty[0] ? 0 : -1;
}

static SrVal *triples(const int64_t *lo, const int64_t *hi, const int64_t *in, int n);

/* lax.slice_in_dim(v, lo, hi) on axis 0, strides all 1. */
static SrVal *slice_rows(SrAd *ad, SrVal *v, int64_t lo, int64_t hi) {
  const SrType *vt = ad_type(ad, v);
  if (!vt) return NULL;
  int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK], str[SR_MAX_RANK];
  for (int i = 0; i < vt->ndim; i++) {
    st[i] = 0;
    lim[i] = vt->dims[i].size;
    str[i] = 1;
  }
  st[0] = lo;
  lim[0] = hi;
  return ad_bindv(ad, SR_P_slice, 1, &v, "start_indices", ad_ints(st, vt->ndim), "limit_indices",
                  ad_ints(lim, vt->ndim), "strides", ad_ints(str, vt->ndim), NULL);
}

/* lax.pad(v, fill, [(0, 1, 0)] on axis 0): one more row of fill. */
static SrVal *pad_row(SrAd *ad, SrVal *v, SrVal *fill) {
  const SrType *vt = ad_type(ad, v);
  if (!vt || !fill) return NULL;
  int64_t lo[SR_MAX_RANK] = {0}, hi[SR_MAX_RANK] = {0}, in[SR_MAX_RANK] = {0};
  hi[0] = 1;
  SrVal *pin[2] = {v, fill};
  return ad_bindv(ad, SR_P_pad, 2, pin, "padding_config", triples(lo, hi, in, vt->ndim), NULL);
}

/* _reduce_prod_jvp_rule, i.e. _reduce_jvp with mul: the reduced axes
   moved to the front and flattened, then halved by a pairwise product
   tree (an odd half padded with ones) under the JVP of mul.  Nothing
   divides by the product, so zeros in the operand are exact, and the
   tangent is built by slice, pad with 0, mul by primal values and add_any
   alone: linear in t, so linearize and transpose work. */
JVP(jvp_reduce_prod) {
  const SrType *xt = ad_type(ad, x[0]);
  if (!xt) return -1;
  int64_t axes[SR_MAX_RANK], perm[SR_MAX_RANK];
  int na = param_ints(e, "axes", axes, SR_MAX_RANK);
  if (na < 0) return sr_raise(ad->I, "TypeError", "reduce_prod: malformed axes"), -1;
  int64_t n = 1;
  for (int i = 0; i < na; i++) {
    perm[i] = axes[i];
    n *= xt->dims[axes[i]].size;
  }
  int np = na;
  for (int i = 0; i < xt->ndim; i++)
    if (!contains(axes, na, i)) perm[np++] = i;
  /* new_shape = (n,) + the kept dimensions */
  SrTypeBuilder b;
  sr_type_builder(&b, xt);
  b.ndim = (uint8_t)(xt->ndim - na + 1);
  b.dims[0].size = n;
  b.dims[0].nax = 0;
  for (int i = na; i < xt->ndim; i++) b.dims[i - na + 1] = xt->dims[perm[i]];
  b.unreduced = b.reduced = 0;
  const SrType *flat = sr_type_get(&b);
  SrVal *p = ad_reshape_plain(ad, ad_transpose(ad, x[0], perm, xt->ndim), flat);
  SrVal *g = t[0] ? ad_reshape_plain(ad, ad_transpose(ad, t[0], perm, xt->ndim), flat) : NULL;
  if (!p || (t[0] && !g)) return -1;
  if (n == 0) {
    /* an empty product: full(kept shape, 1), a zero tangent */
    SrTypeBuilder k;
    sr_type_builder(&k, flat);
    k.ndim--;
    memmove(k.dims, k.dims + 1, k.ndim * sizeof k.dims[0]);
    y[0] = ad_full(ad, sr_type_get(&k), 1.0);
    ty[0] = NULL;
    return y[0] ? 0 : -1;
  }
  for (int64_t m = n; m > 1;) {
    int64_t n1 = (m + 1) / 2;
    /* in JAX's order: each primal operation, then its tangent */
    SrVal *p1 = slice_rows(ad, p, 0, n1), *g1 = g ? slice_rows(ad, g, 0, n1) : NULL;
    SrVal *p2 = slice_rows(ad, p, n1, m), *g2 = g ? slice_rows(ad, g, n1, m) : NULL;
    if (m - n1 != n1) {
      p2 = pad_row(ad, p2, ad_scalar(ad, xt->dtype, 0, 1.0));
      /* the padding value is a constant: its tangent is zero */
      if (g) g2 = pad_row(ad, g2, ad_scalar(ad, ad_type(ad, g)->dtype, 0, 0.0));
    }
    /* jvp of mul: p1 * p2, then g1 * p2 + p1 * g2 */
    SrVal *prod = ad_mul(ad, p1, p2);
    if (g) {
      SrVal *a = ad_mul(ad, g1, p2);
      g = ad_add_any(ad, a, ad_mul(ad, p1, g2));
    }
    p = prod;
    if (!p || (t[0] && !g)) return -1;
    m = n1;
  }
  int64_t zero = 0;
  y[0] = ad_bindv(ad, SR_P_squeeze, 1, &p, "dimensions", ad_ints(&zero, 1), NULL);
  ty[0] = g ? ad_bindv(ad, SR_P_squeeze, 1, &g, "dimensions", ad_ints(&zero, 1), NULL) : NULL;
  return y[0] && (ty[0] || !g) ? 0 : -1;
}

TR(tr_cumsum) {
  (void)x;
  SrVal *c = ct[0];
  cx[0] = ad_bindv(ad, SR_P_cumsum, 1, &c, "axis", sr_int(NULL, param_int(e, "axis", 0)), "reverse",
                   sr_bool(!param_int(e, "reverse", 0)), NULL);
  return cx[0] ? 0 : -1;
}

/* ---- structure ---- */

TR(tr_broadcast_in_dim) {
  if (x[0]) return 0; /* transpose wrt a literal */
  const SrType *ot = ct_of(e, 0);
  int64_t bdims[SR_MAX_RANK];
  int nbd = param_ints(e, "broadcast_dimensions", bdims, SR_MAX_RANK);
  const SrType *outt = e->out[0]->type;
  /* unit dims: size 1 and not sharded */
  int64_t unit[SR_MAX_RANK], bd2[SR_MAX_RANK], axes[SR_MAX_RANK];
  int nunit = 0, nbd2 = 0, na = 0;
  for (int i = 0; i < ot->ndim; i++)
    if (ot->dims[i].size == 1 && ot->dims[i].nax == 0) unit[nunit++] = i;
  for (int i = 0; i < nbd; i++)
    if (!contains(unit, nunit, i)) bd2[nbd2++] = bdims[i];
  for (int i = 0; i < outt->ndim; i++)
    if (!contains(bd2, nbd2, i)) axes[na++] = i;
  SrTypeBuilder b;
  sr_type_builder(&b, ot);
  int nd = 0;
  for (int i = 0; i < ot->ndim; i++)
    if (!contains(unit, nunit, i)) b.dims[nd++] = ot->dims[i];
  b.ndim = (uint8_t)nd;
  SrVal *s = ad_reduce_sum(ad, ct[0], axes, na, sr_type_get(&b));
  cx[0] = ad_expand_dims(ad, s, unit, nunit);
  return cx[0] ? 0 : -1;
}

TR(tr_reshape) {
  (void)x;
  SrVal *dims = param(e, "dimensions");
  if (dims && dims->kind != SR_V_NONE)
    return sr_raise(ad->I, "NotImplementedError", "transposing a reshape with dimensions is not supported"), -1;
  cx[0] = ad_reshape(ad, ct[0], ct_of(e, 0));
  return cx[0] ? 0 : -1;
}

TR(tr_transpose) {
  (void)x;
  int64_t perm[SR_MAX_RANK], inv[SR_MAX_RANK];
  int n = param_ints(e, "permutation", perm, SR_MAX_RANK);
  argsort(perm, n, inv);
  cx[0] = ad_transpose(ad, ct[0], inv, n);
  return cx[0] ? 0 : -1;
}

TR(tr_squeeze) {
  (void)x;
  int64_t dims[SR_MAX_RANK];
  int n = param_ints(e, "dimensions", dims, SR_MAX_RANK);
  cx[0] = ad_expand_dims(ad, ct[0], dims, n);
  return cx[0] ? 0 : -1;
}

/* the same op on the cotangent (rev) */
TR(tr_self) {
  (void)x;
  cx[0] = ad_bind_eqn1(ad, e, ct);
  return cx[0] ? 0 : -1;
}

TR(tr_concatenate) {
  int64_t dim = param_int(e, "dimension", 0);
  int64_t sizes[256];
  uint32_t n = e->nin < 256 ? e->nin : 256;
  for (uint32_t i = 0; i < n; i++) sizes[i] = e->in[i]->type->dims[dim].size;
  SrVal *c = ct[0];
  SrVal *r = ad_bindv(ad, SR_P_split, 1, &c, "sizes", ad_ints(sizes, (int)n), "axis", sr_int(NULL, dim), NULL);
  if (!r) return -1;
  for (uint32_t i = 0; i < n; i++)
    if (!x[i]) cx[i] = r->seq.items[i];
  return 0;
}

TR(tr_split) {
  (void)x;
  SrVal *cs[256];
  uint32_t n = e->nout < 256 ? e->nout : 256;
  for (uint32_t i = 0; i < n; i++) cs[i] = ct[i] ? ct[i] : ad_zeros(ad, sr_ad_ct_type(e->out[i]->type));
  cx[0] = ad_bindv(ad, SR_P_concatenate, (int)n, cs, "dimension", sr_int(NULL, param_int(e, "axis", 0)), NULL);
  return cx[0] ? 0 : -1;
}

static SrVal *triples(const int64_t *lo, const int64_t *hi, const int64_t *in, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) {
    int64_t v[3] = {lo[i], hi[i], in[i]};
    sr_seq_push(NULL, t, ad_ints(v, 3));
  }
  return t;
}

TR(tr_pad) {
  int64_t cfg[3 * SR_MAX_RANK], lo[SR_MAX_RANK], hi[SR_MAX_RANK], in[SR_MAX_RANK];
  int n = param_ints(e, "padding_config", cfg, 3 * SR_MAX_RANK) / 3;
  for (int i = 0; i < n; i++) {
    lo[i] = -cfg[3 * i];
    hi[i] = -cfg[3 * i + 1];
    in[i] = 0;
  }
  SrVal *t = ct[0], *top = NULL;
  const SrType *tt = ad_type(ad, t);
  if (!tt) return -1;
  if (!x[0] || !x[1]) {
    SrVal *pin[2] = {t, ad_scalar(ad, tt->dtype, 0, 0.0)};
    SrVal *unpadded = ad_bindv(ad, SR_P_pad, 2, pin, "padding_config", triples(lo, hi, in, n), NULL);
    const SrType *ut = ad_type(ad, unpadded);
    if (!ut) return -1;
    int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK], str[SR_MAX_RANK];
    for (int i = 0; i < n; i++) {
      st[i] = 0;
      lim[i] = ut->dims[i].size;
      str[i] = cfg[3 * i + 2] + 1;
    }
    top = ad_bindv(ad, SR_P_slice, 1, &unpadded, "start_indices", ad_ints(st, n), "limit_indices", ad_ints(lim, n),
                   "strides", ad_ints(str, n), NULL);
    if (!top) return -1;
  }
  if (!x[0]) cx[0] = top;
  if (!x[1]) {
    int64_t all[SR_MAX_RANK];
    for (int i = 0; i < n; i++) all[i] = i;
    cx[1] = ad_binop(ad, SR_P_sub, ad_reduce_sum(ad, t, all, n, NULL), ad_reduce_sum(ad, top, all, n, NULL));
    if (!cx[1]) return -1;
  }
  return 0;
}

TR(tr_slice) {
  (void)x;
  const SrType *ot = ct_of(e, 0);
  int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK], str[SR_MAX_RANK], lo[SR_MAX_RANK], hi[SR_MAX_RANK],
      in[SR_MAX_RANK];
  int n = param_ints(e, "start_indices", st, SR_MAX_RANK);
  param_ints(e, "limit_indices", lim, SR_MAX_RANK);
  int ns = param_ints(e, "strides", str, SR_MAX_RANK);
  const SrType *ctt = ad_type(ad, ct[0]);
  if (!ctt) return -1;
  int unit = 1;
  for (int i = 0; i < ns; i++) unit &= str[i] == 1;
  for (int i = 0; i < n; i++) {
    lo[i] = st[i];
    if (ns == 0 || unit) {
      hi[i] = ot->dims[i].size - lim[i];
      in[i] = 0;
    } else {
      int64_t real = ctt->dims[i].size == 0 ? st[i] : st[i] + 1 + (ctt->dims[i].size - 1) * str[i];
      hi[i] = ot->dims[i].size - real;
      in[i] = str[i] - 1;
    }
  }
  /* the padding value varies as the cotangent does (lax.pad's
     standard_insert_pvary), or pad refuses the mix inside shard_map */
  SrVal *pin[2] = {ct[0], ad_scalar_like(ad, ct[0], 0.0)};
  cx[0] = ad_bindv(ad, SR_P_pad, 2, pin, "padding_config", triples(lo, hi, in, n), NULL);
  return cx[0] ? 0 : -1;
}

JVP(jvp_dynamic_slice) {
  y[0] = ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0]) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *in[SR_MAX_RANK + 1];
  in[0] = t[0];
  for (uint32_t i = 1; i < e->nin && i <= SR_MAX_RANK; i++) in[i] = x[i];
  ty[0] = ad_bind_eqn1(ad, e, in);
  return ty[0] ? 0 : -1;
}

TR(tr_dynamic_slice) {
  const SrType *ot = ct_of(e, 0);
  SrTypeBuilder b;
  sr_type_builder(&b, ot);
  b.dtype = ad_type(ad, ct[0])->dtype;
  SrVal *zeros = ad_full(ad, sr_type_get(&b), 0.0);
  SrVal *in[SR_MAX_RANK + 2];
  in[0] = zeros;
  in[1] = ct[0];
  for (uint32_t i = 1; i < e->nin && i <= SR_MAX_RANK; i++) in[i + 1] = x[i];
  cx[0] = ad_bind(ad, SR_P_dynamic_update_slice, (int)e->nin + 1, in, 0, NULL);
  return cx[0] ? 0 : -1;
}

JVP(jvp_dynamic_update_slice) {
  y[0] = ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0] && !t[1]) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *in[SR_MAX_RANK + 2];
  in[0] = t[0] ? t[0] : ad_zeros(ad, sr_ad_tangent_type(ad_type(ad, x[0])));
  in[1] = t[1] ? t[1] : ad_zeros(ad, sr_ad_tangent_type(ad_type(ad, x[1])));
  for (uint32_t i = 2; i < e->nin && i < SR_MAX_RANK + 2; i++) in[i] = x[i];
  ty[0] = ad_bind_eqn1(ad, e, in);
  return ty[0] ? 0 : -1;
}

TR(tr_dynamic_update_slice) {
  const SrType *ut = x[1] ? sr_ad_ct_type(ad_type(ad, x[1])) : ct_of(e, 1);
  SrVal *in[SR_MAX_RANK + 2];
  for (uint32_t i = 2; i < e->nin && i < SR_MAX_RANK + 2; i++) in[i] = x[i];
  if (!x[0]) {
    in[0] = ct[0];
    in[1] = ad_full(ad, ut, 0.0);
    if (!(cx[0] = ad_bind(ad, SR_P_dynamic_update_slice, (int)e->nin, in, 0, NULL))) return -1;
  }
  if (!x[1]) {
    int64_t sizes[SR_MAX_RANK];
    for (int i = 0; i < ut->ndim; i++) sizes[i] = ut->dims[i].size;
    in[1] = ct[0];
    cx[1] = ad_bindv(ad, SR_P_dynamic_slice, (int)e->nin - 1, in + 1, "slice_sizes", ad_ints(sizes, ut->ndim), NULL);
    if (!cx[1]) return -1;
  }
  return 0;
}

/* stack and unstack: rows the table may lack (made on first lookup) */
TR(tr_stack) {
  SrVal *c = ct[0];
  SrPList ps = {0};
  sr_plist_add(&ps, "axis", sr_int(NULL, param_int(e, "axis", 0)));
  SrVal *r = NULL;
  const SrPrim *un = sr_prim_lookup("unstack", 7);
  if (c) {
    const SrType *written[256];
    uint32_t n = e->nin < 256 ? e->nin : 256;
    for (uint32_t i = 0; i < n; i++) written[i] = sr_ad_ct_type(e->in[i]->type);
    SrInterp *I = ad->I;
    r = ad_keep(ad, sr_bind_prim(I, un, 1, &c, ps.n, ps.p, written, n));
  }
  sr_plist_free(&ps);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nin; i++)
    if (!x[i]) cx[i] = r->seq.items[i];
  return 0;
}

TR(tr_unstack) {
  (void)x;
  SrVal *cs[256];
  uint32_t n = e->nout < 256 ? e->nout : 256;
  for (uint32_t i = 0; i < n; i++) cs[i] = ct[i] ? ct[i] : ad_zeros(ad, sr_ad_ct_type(e->out[i]->type));
  SrPList ps = {0};
  sr_plist_add(&ps, "axis", sr_int(NULL, param_int(e, "axis", 0)));
  const SrType *written[1] = {sr_ad_ct_type(e->in[0]->type)};
  cx[0] = ad_keep(ad, sr_bind_prim(ad->I, sr_prim_lookup("stack", 5), (int)n, cs, ps.n, ps.p, written, 1));
  sr_plist_free(&ps);
  if (cx[0] && cx[0]->kind == SR_V_TUPLE) cx[0] = cx[0]->seq.items[0];
  return cx[0] ? 0 : -1;
}

static void set_by_name(const char *name, SrJvpRule j, SrTransposeRule t) {
  SrPrim *p = (SrPrim *)sr_prim_lookup(name, strlen(name));
  p->jvp = (void *)j;
  p->transpose = (void *)t;
}

void sr_ad_rules_structural_init(void) {
  set_by_name("stack", sr_ad_jvp_linear, tr_stack);
  set_by_name("unstack", sr_ad_jvp_linear, tr_unstack);
  sr_ad_set_jvp(SR_P_dot_general, jvp_dot_general);
  sr_ad_set_transpose(SR_P_dot_general, tr_dot_general);
  sr_ad_set_jvp(SR_P_reduce_sum, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_reduce_sum, tr_reduce_sum);
  sr_ad_set_jvp(SR_P_reduce_max, jvp_reduce_chooser);
  sr_ad_set_jvp(SR_P_reduce_min, jvp_reduce_chooser);
  sr_ad_set_jvp(SR_P_reduce_prod, jvp_reduce_prod);
  sr_ad_set_jvp(SR_P_cumsum, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_cumsum, tr_cumsum);
  sr_ad_set_jvp(SR_P_broadcast_in_dim, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_broadcast_in_dim, tr_broadcast_in_dim);
  sr_ad_set_jvp(SR_P_reshape, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_reshape, tr_reshape);
  sr_ad_set_jvp(SR_P_transpose, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_transpose, tr_transpose);
  sr_ad_set_jvp(SR_P_squeeze, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_squeeze, tr_squeeze);
  sr_ad_set_jvp(SR_P_rev, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_rev, tr_self);
  sr_ad_set_jvp(SR_P_concatenate, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_concatenate, tr_concatenate);
  sr_ad_set_jvp(SR_P_split, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_split, tr_split);
  sr_ad_set_jvp(SR_P_pad, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_pad, tr_pad);
  sr_ad_set_jvp(SR_P_slice, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_slice, tr_slice);
  sr_ad_set_jvp(SR_P_dynamic_slice, jvp_dynamic_slice);
  sr_ad_set_transpose(SR_P_dynamic_slice, tr_dynamic_slice);
  sr_ad_set_jvp(SR_P_dynamic_update_slice, jvp_dynamic_update_slice);
  sr_ad_set_transpose(SR_P_dynamic_update_slice, tr_dynamic_update_slice);
}

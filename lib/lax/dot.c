/* dot.c: the rules of dot_general (lax/lax.py).
 *
 * The family's shared helpers, then each primitive's (or group's) type,
 * eval, JVP and transpose rules and communication note side by side, in
 * that order, under a heading per group, then the family's registration
 * sr_lax_dot_init (lax/lax.h says what a family file holds and uses).
 */
#include "lax/lax.h"

#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "exec/eval.h"
#include "exec/fold.h"
#include "exec/kern.h"
#include "check/rule.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ==== dot_general ==== */

/* the type rule of dot_general (reference 3.4).
 *
 * The result's dimensions are the batch dimensions, then the free
 * dimensions of lhs, then those of rhs, each keeping its spec.  Batch
 * dimensions must be sharded alike; a contraction sharded on both sides is
 * ambiguous unless `out_sharding` says what to make of it, which is also
 * the only way to an unreduced result.  The printer drops `out_sharding`,
 * so a parsed equation takes it from its binder.
 */

typedef struct DimNums {
  int64_t lc[SR_MAX_RANK], rc[SR_MAX_RANK], lb[SR_MAX_RANK], rb[SR_MAX_RANK];
  int nlc, nrc, nlb, nrb;
} DimNums;

static int read_list(const SrVal *v, int64_t *out, int *n) {
  if (!v || !sr_is_seq(v)) return -1;
  *n = 0;
  for (int i = 0; i < v->seq.n; i++) {
    const SrVal *x = v->seq.items[i];
    if ((x->kind != SR_V_INT && x->kind != SR_V_BOOL) || *n >= SR_MAX_RANK) return -1;
    out[(*n)++] = x->i;
  }
  return 0;
}

/* dimension_numbers=(([1], [0]), ([], [])) */
static int read_dimnums(SrTypeCtx *cx, const SrRuleEqn *e, DimNums *dn) {
  const SrVal *v = sr_rparam(e, "dimension_numbers");
  if (!v) return sr_terr(cx, "TypeError", "dot_general equation has no 'dimension_numbers' param");
  if (sr_is_seq(v) && v->seq.n == 2 && sr_is_seq(v->seq.items[0]) && sr_is_seq(v->seq.items[1]) &&
      v->seq.items[0]->seq.n == 2 && v->seq.items[1]->seq.n == 2 &&
      read_list(v->seq.items[0]->seq.items[0], dn->lc, &dn->nlc) == 0 &&
      read_list(v->seq.items[0]->seq.items[1], dn->rc, &dn->nrc) == 0 &&
      read_list(v->seq.items[1]->seq.items[0], dn->lb, &dn->nlb) == 0 &&
      read_list(v->seq.items[1]->seq.items[1], dn->rb, &dn->nrb) == 0)
    return 0;
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  sr_terr(cx, "TypeError", "dot_general's dimension_numbers=%s is not ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))",
          sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

static int has_dup(const int64_t *v, int n) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < i; k++)
      if (v[i] == v[k]) return 1;
  return 0;
}

static int contains(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

static int shape_error(SrTypeCtx *cx, const char *fmt, const int64_t *a, int na, const int64_t *b, int nb) {
  SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
  sr_ints_str(&x, a, na);
  if (b) sr_ints_str(&y, b, nb);
  sr_terr(cx, "TypeError", fmt, sr_buf_str(&x), sr_buf_str(&y));
  sr_buf_free(&x);
  sr_buf_free(&y);
  return -1;
}

/* lax._dot_general_shape_rule */
static int dot_shape(SrTypeCtx *cx, const SrType *l, const SrType *r, const DimNums *d) {
  for (int i = 0; i < d->nlc + d->nlb; i++) {
    int64_t x = i < d->nlc ? d->lc[i] : d->lb[i - d->nlc];
    if (x < 0 || x >= l->ndim) {
      SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_ints_str(&a, d->lb, d->nlb);
      sr_ints_str(&c, d->lc, d->nlc);
      sr_terr(cx, "TypeError",
              "dot_general requires lhs dimension numbers to be nonnegative and less than the number of axes of the "
              "lhs value, got lhs_batch of %s and lhs_contracting of %s for lhs of rank %d",
              sr_buf_str(&a), sr_buf_str(&c), l->ndim);
      sr_buf_free(&a);
      sr_buf_free(&c);
      return -1;
    }
  }
  for (int i = 0; i < d->nrc + d->nrb; i++) {
    int64_t x = i < d->nrc ? d->rc[i] : d->rb[i - d->nrc];
    if (x < 0 || x >= r->ndim) {
      SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_ints_str(&a, d->rb, d->nrb);
      sr_ints_str(&c, d->rc, d->nrc);
      sr_terr(cx, "TypeError",
              "dot_general requires rhs dimension numbers to be nonnegative and less than the number of axes of the "
              "rhs value, got rhs_batch of %s and rhs_contracting of %s for rhs of rank %d",
              sr_buf_str(&a), sr_buf_str(&c), r->ndim);
      sr_buf_free(&a);
      sr_buf_free(&c);
      return -1;
    }
  }
  if (d->nlb != d->nrb)
    return shape_error(cx, "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch %s and rhs_batch %s.",
                       d->lb, d->nlb, d->rb, d->nrb);
  if (has_dup(d->lb, d->nlb))
    return shape_error(cx, "dot_general requires lhs batch dimensions to be distinct, got lhs_batch %s.%s", d->lb, d->nlb, NULL, -1);
  if (has_dup(d->rb, d->nrb))
    return shape_error(cx, "dot_general requires rhs batch dimensions to be distinct, got rhs_batch %s.%s", d->rb, d->nrb, NULL, -1);
  if (has_dup(d->lc, d->nlc))
    return shape_error(cx, "dot_general requires lhs contracting dimensions to be distinct, got lhs_contracting %s.%s", d->lc,
                       d->nlc, NULL, -1);
  if (has_dup(d->rc, d->nrc))
    return shape_error(cx, "dot_general requires rhs contracting dimensions to be distinct, got rhs_contracting %s.%s", d->rc,
                       d->nrc, NULL, -1);
  for (int i = 0; i < d->nlc; i++)
    if (contains(d->lb, d->nlb, d->lc[i]))
      return shape_error(cx, "dot_general requires lhs batch dimensions to be disjoint from contracting dimensions, got lhs_batch %s and lhs_contracting %s.",
                         d->lb, d->nlb, d->lc, d->nlc);
  for (int i = 0; i < d->nrc; i++)
    if (contains(d->rb, d->nrb, d->rc[i]))
      return shape_error(cx, "dot_general requires rhs batch dimensions to be disjoint from contracting dimensions, got rhs_batch %s and rhs_contracting %s.",
                         d->rb, d->nrb, d->rc, d->nrc);
  int64_t ls[SR_MAX_RANK], rs[SR_MAX_RANK];
  int ok = 1;
  for (int i = 0; i < d->nlb; i++) {
    ls[i] = l->dims[d->lb[i]].size;
    rs[i] = r->dims[d->rb[i]].size;
    if (!sr_dim_same(&l->dims[d->lb[i]], &r->dims[d->rb[i]])) ok = 0;
  }
  if (!ok)
    return shape_error(cx, "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, got %s and %s.",
                       ls, d->nlb, rs, d->nrb);
  ok = d->nlc == d->nrc;
  for (int i = 0; i < d->nlc; i++) ls[i] = l->dims[d->lc[i]].size;
  for (int i = 0; i < d->nrc; i++) rs[i] = r->dims[d->rc[i]].size;
  for (int i = 0; ok && i < d->nlc; i++)
    if (!sr_dim_same(&l->dims[d->lc[i]], &r->dims[d->rc[i]])) ok = 0;
  if (!ok)
    return shape_error(cx, "dot_general requires contracting dimensions to have the same shape, got %s and %s.", ls, d->nlc,
                       rs, d->nrc);
  return 0;
}

/* lax._dot_general_dtype_rule's type_properties: (complex, maxexp, nmant,
   bit width, signed), compared as a tuple. */
static void type_properties(SrDtype d, int p[5]) {
  static const struct { SrDtype d; int maxexp, nmant; } fi[] = {
    {SR_F16, 16, 10}, {SR_BF16, 128, 7}, {SR_F32, 128, 23}, {SR_F64, 1024, 52},
    {SR_F8_E4M3FN, 9, 3}, {SR_F8_E5M2, 16, 2}, {SR_F8_E4M3FNUZ, 8, 3}, {SR_F8_E5M2FNUZ, 16, 2},
    {SR_F8_E4M3B11FNUZ, 5, 3}, {SR_F8_E3M4, 4, 4}, {SR_F8_E4M3, 8, 3}, {SR_F8_E8M0FNU, 128, 0},
    {SR_F4_E2M1FN, 3, 1}, {SR_F6_E2M3FN, 3, 3}, {SR_F6_E3M2FN, 5, 2},
  };
  p[0] = sr_dtype_kind(d) == SR_DK_COMPLEX;
  SrDtype c = d == SR_C64 ? SR_F32 : d == SR_C128 ? SR_F64 : d;
  p[1] = p[2] = -1;
  for (size_t i = 0; i < sizeof fi / sizeof fi[0]; i++)
    if (fi[i].d == c) p[1] = fi[i].maxexp, p[2] = fi[i].nmant;
  p[3] = c == SR_BOOL ? 1 : sr_dtype_info(c)->bits;
  p[4] = sr_dtype_kind(c) != SR_DK_UINT;
}

static int bit_width(SrDtype d) { return d == SR_BOOL ? 1 : sr_dtype_info(d)->bits; }

/* lax._dot_general_dtype_rule and _maybe_upcast. */
static int dot_dtype(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *l, const SrType *r, SrDtype *out) {
  int lp[5], rp[5], cmp = 0;
  type_properties(l->dtype, lp);
  type_properties(r->dtype, rp);
  for (int i = 0; i < 5 && !cmp; i++) cmp = lp[i] > rp[i] ? 1 : lp[i] < rp[i] ? -1 : 0;
  SrDtype res = cmp > 0 ? l->dtype : cmp < 0 ? r->dtype : l->dtype;
  if (!cmp && l->dtype != r->dtype)
    return sr_terr(cx, "TypeError", "lax.dot_general argument type error: %s, %s", sr_dtype_name(l->dtype),
                   sr_dtype_name(r->dtype));
  SrDtype pref = 0;
  int has = 0;
  if (sr_rparam_dtype(cx, e, "preferred_element_type", &pref, &has) < 0) return -1;
  *out = res;
  if (!has || pref == res) return 0;
  /* a DotAlgorithm(Preset) precision prints as a bare name */
  const SrVal *prec = sr_rparam(e, "precision");
  int algorithm = prec && prec->kind == SR_V_WORD && !(prec->str.n >= 9 && memcmp(prec->str.s, "Precision", 9) == 0);
  if (!algorithm && !sr_dtype_is_float(res) && bit_width(pref) < bit_width(res))
    return sr_terr(cx, "TypeError",
                   "`preferred_element_type` must not be narrower than the original type, got preferred_element_type "
                   "of %s for result type of %s.",
                   sr_dtype_name(pref), sr_dtype_name(res));
  *out = pref;
  return 0;
}

static int spec_pair_error(SrTypeCtx *cx, const char *fmt, const SrType *l, const int64_t *ld, int nl, const SrType *r,
                           const int64_t *rd, int nr) {
  SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
  sr_partitions_str(&a, l, ld, nl);
  sr_partitions_str(&b, r, rd, nr);
  sr_terr(cx, "ShardingTypeError", fmt, sr_buf_str(&a), sr_buf_str(&b));
  sr_buf_free(&a);
  sr_buf_free(&b);
  return -1;
}

/* lax.dot_general_p: _dot_general_shape_rule, _dot_general_dtype_rule,
   _dot_general_sharding_rule and _dot_general_ur_rule. */
static int type_dot_general(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *ts[2];
  sr_resolve_bare_literals(e, ts);
  const SrType *l = ts[0], *r = ts[1];
  DimNums d;
  if (read_dimnums(cx, e, &d) < 0 || dot_shape(cx, l, r, &d) < 0) return -1;
  SrDtype dt = 0;
  if (dot_dtype(cx, e, l, r, &dt) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  /* the result's dims: batch, lhs free, rhs free */
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = dt;
  b.weak = (uint8_t)(l->weak && r->weak);
  b.mesh = l->mesh ? l->mesh : r->mesh ? r->mesh : s.mesh;
  const SrType *src[SR_MAX_RANK];
  int srcdim[SR_MAX_RANK];
  for (int i = 0; i < d.nlb; i++) src[b.ndim] = l, srcdim[b.ndim++] = (int)d.lb[i];
  for (int i = 0; i < l->ndim; i++)
    if (!contains(d.lc, d.nlc, i) && !contains(d.lb, d.nlb, i)) src[b.ndim] = l, srcdim[b.ndim++] = i;
  for (int i = 0; i < r->ndim; i++)
    if (!contains(d.rc, d.nrc, i) && !contains(d.rb, d.nrb, i)) src[b.ndim] = r, srcdim[b.ndim++] = i;
  for (int i = 0; i < b.ndim; i++) {
    b.dims[i].size = src[i]->dims[srcdim[i]].size;
    b.dims[i].sym = src[i]->dims[srcdim[i]].sym;
  }
  /* out_sharding, or the binder the printer let stand for it */
  SrShardSpec g;
  int given = 0;
  if (sr_rparam(e, "out_sharding")) {
    if (sr_rparam_sharding(cx, e, "out_sharding", b.ndim, &g, &given) < 0) return -1;
  } else if (sr_written(e, 0) && sr_written(e, 0)->ndim == b.ndim) {
    sr_shard_of_type(sr_written(e, 0), &g);
    given = 1;
  }
  if (s.mode == SR_MODE_EXPLICIT) {
    if (l->mesh && r->mesh && l->mesh != r->mesh) {
      SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_mesh_for_msg(&a, cx, l->mesh);
      sr_mesh_for_msg(&c, cx, r->mesh);
      sr_terr(cx, "ShardingTypeError", "Mesh of both lhs and rhs should match. Got lhs: %s and rhs: %s", sr_buf_str(&a),
              sr_buf_str(&c));
      sr_buf_free(&a);
      sr_buf_free(&c);
      return -1;
    }
    if (given) {
      if (g.mesh) b.mesh = g.mesh;
      for (int i = 0; i < b.ndim; i++) {
        b.dims[i].nax = g.nax[i];
        memcpy(b.dims[i].ax, g.ax[i], SR_MAX_DIM_AXES);
      }
    } else {
      for (int i = 0; i < d.nlb; i++)
        if (!sr_spec_entry_eq(l, (int)d.lb[i], r, (int)d.rb[i]))
          return spec_pair_error(cx,
                                 "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same "
                                 "sharding, got %s and %s.",
                                 l, d.lb, d.nlb, r, d.rb, d.nrb);
      for (int i = 0; i < d.nlc; i++)
        if (l->dims[d.lc[i]].nax && r->dims[d.rc[i]].nax) {
          SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
          sr_partitions_str(&a, l, d.lc, d.nlc);
          sr_partitions_str(&c, r, d.rc, d.nrc);
          sr_terr(cx, "ShardingTypeError",
                  "Contracting dimensions are sharded and it is ambiguous how the output should be sharded. Please "
                  "specify the output sharding via the `out_sharding` parameter. Got lhs_contracting_spec=%s and "
                  "rhs_contracting_spec=%s",
                  sr_buf_str(&a), sr_buf_str(&c));
          sr_buf_free(&a);
          sr_buf_free(&c);
          return -1;
        }
      for (int i = 0; i < b.ndim; i++) {
        const SrDim *x = &src[i]->dims[srcdim[i]];
        b.dims[i].nax = x->nax;
        for (int k = 0; k < x->nax; k++) {
          int a = b.mesh ? sr_mesh_axis(b.mesh, src[i]->mesh->names[x->ax[k]]) : -1;
          b.dims[i].ax[k] = (uint8_t)(a < 0 ? x->ax[k] : a);
        }
      }
    }
  }
  /* _dot_general_unreduced_rule; reduced inputs are accepted and dropped */
  if (s.mode != SR_MODE_AUTO) {
    SrAxes lu, ru;
    if (sr_getu(cx, l, &lu) < 0 || sr_getu(cx, r, &ru) < 0) return -1;
    if (lu || ru) {
      SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_aval_repr(&a, l);
      sr_aval_repr(&c, r);
      sr_terr(cx, "ShardingTypeError", "lhs or rhs passed to dot_general cannot be unreduced. Got lhs=%s and rhs=%s",
              sr_buf_str(&a), sr_buf_str(&c));
      sr_buf_free(&a);
      sr_buf_free(&c);
      return -1;
    }
    if (given && g.unreduced && s.mode == SR_MODE_EXPLICIT) {
      int same = d.nlc == d.nrc;
      SrAxes flat = 0;
      for (int i = 0; same && i < d.nlc; i++) same = sr_spec_entry_eq(l, (int)d.lc[i], r, (int)d.rc[i]);
      if (!same)
        return spec_pair_error(cx,
                               "lhs and rhs contracting dims should be sharded identically when out_sharding provided "
                               "to dot_general mentions unreduced_axes. Got lhs_contracting_spec=%s, "
                               "rhs_contracting_spec=%s",
                               l, d.lc, d.nlc, r, d.rc, d.nrc);
      for (int i = 0; i < d.nlc; i++) flat |= sr_dim_axes(&l->dims[d.lc[i]]);
      if (sr_axes_remap(g.unreduced, g.mesh, l->mesh ? l->mesh : g.mesh) != flat) {
        SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
        sr_axes_frozenset_str(&a, g.mesh, g.unreduced);
        sr_partitions_str(&c, l, d.lc, d.nlc);
        sr_terr(cx, "ShardingTypeError",
                "out_sharding's unreduced axes should be equal to the contracting specs. Got unreduced axes=%s and "
                "contracting spec=%s",
                sr_buf_str(&a), sr_buf_str(&c));
        sr_buf_free(&a);
        sr_buf_free(&c);
        return -1;
      }
      if (g.ukind != SR_UK_SUM) {
        SrTypeBuilder gb = b;
        gb.unreduced = g.unreduced;
        gb.ukind = g.ukind;
        SrBuf a = SR_BUF_INIT;
        sr_type_sharding_str(&a, cx, sr_type_get(&gb));
        sr_terr(cx, "ValueError", "`out_sharding` passed to `dot_general` can only contain unreduced of kind `sum`. Got out_sharding=%s",
                sr_buf_str(&a));
        sr_buf_free(&a);
        return -1;
      }
      b.unreduced = g.unreduced;
      b.ukind = SR_UK_SUM;
    }
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* dot_general over sharded operands.
 *
 * A contracting dim split the same way on both sides stays split: each
 * device contracts its blocks, and the partial products are the result
 * unreduced over those axes; redistribute.c then gives the result's layout
 * (all-reduce for a replicated result, reduce-scatter for one split over
 * those axes, nothing for an unreduced out_sharding).  A contracting dim
 * split on one side only, or differently, is gathered on both sides, as
 * the FSDP pattern f32[8,4] . f32[4@X,16] -> f32[8,16] all-gathers the
 * weight.  Batch and free dims take the result's axes. */

typedef struct DotArg {
  int nb, nc, lnd, rnd;
  int lb[SR_MAX_RANK], rb[SR_MAX_RANK], lc[SR_MAX_RANK], rc[SR_MAX_RANK];
  SrDtype ldt, rdt, odt;
  int acc;  /* add into the output (an accumulating destination) */
} DotArg;

static int dot_fn(SrShardIO *io) {
  DotArg *d = io->arg;
  if (sr_kern_dot(d->ldt, d->rdt, d->odt, d->lnd, io->in_shape[0], io->in[0]->data, d->rnd, io->in_shape[1],
                  io->in[1]->data, d->nb, d->lb, d->rb, d->nc, d->lc, d->rc, d->acc, io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "dot_general of %s and %s into %s", sr_dtype_name(d->ldt),
                     sr_dtype_name(d->rdt), sr_dtype_name(d->odt));
  return 0;
}

static int ints_of(const SrVal *v, int *out, int *n) {
  int64_t tmp[SR_MAX_RANK];
  if (!v || sr_val_ints(v, tmp, SR_MAX_RANK, n) < 0) return -1;
  for (int i = 0; i < *n; i++) out[i] = (int)tmp[i];
  return 0;
}

/* dimension_numbers=(((lc), (rc)), ((lb), (rb))) */
static int dims_param(SrEvalCtx *cx, const SrEvalEqn *e, DotArg *d) {
  SrVal *v = sr_ev_param(e, "dimension_numbers");
  if (!v || !sr_is_seq(v) || v->seq.n != 2 || !sr_is_seq(v->seq.items[0]) || !sr_is_seq(v->seq.items[1]) ||
      v->seq.items[0]->seq.n != 2 || v->seq.items[1]->seq.n != 2)
    return sr_ev_err(cx, "TypeError", "dot_general equation has no valid dimension_numbers");
  int n1, n2, n3, n4;
  if (ints_of(v->seq.items[0]->seq.items[0], d->lc, &n1) < 0 || ints_of(v->seq.items[0]->seq.items[1], d->rc, &n2) < 0 ||
      ints_of(v->seq.items[1]->seq.items[0], d->lb, &n3) < 0 || ints_of(v->seq.items[1]->seq.items[1], d->rb, &n4) < 0 ||
      n1 != n2 || n3 != n4)
    return sr_ev_err(cx, "TypeError", "dot_general equation has no valid dimension_numbers");
  d->nc = n1;
  d->nb = n3;
  return 0;
}

static int same_axes(const SrDim *a, const SrDim *b) {
  if (a->nax != b->nax) return 0;
  for (int k = 0; k < a->nax; k++)
    if (a->ax[k] != b->ax[k]) return 0;
  return 1;
}

static void set_dim(SrTypeBuilder *b, int i, const SrDim *src, SrAxes forbid, const SrMesh *mesh) {
  SrDim *d = &b->dims[i];
  if (!src || (sr_dim_axes(src) & forbid) || !src->nax) {
    d->nax = 0;
    return;
  }
  d->nax = src->nax;
  memcpy(d->ax, src->ax, SR_MAX_DIM_AXES);
  b->mesh = mesh;
}

/* Auto mode: where the result's type leaves a batch or free dimension
   unsplit, it keeps the Auto axes the operand's dimension it comes from is
   split over (the lhs's first, then the rhs's; an axis once), as XLA's
   partitioner does -- so (8,2)[x,y] @ (2,8)[y,x] gives P('x', None), and
   with only the contracting dimensions split the result is replicated. */
static const SrType *auto_free_dims(const SrType *l, const SrType *xl, const SrType *yl, const DotArg *d,
                                    const int *lf, int nlf, const int *rf, int nrf, const SrMesh *m) {
  SrAxes au = m ? sr_mesh_axes_of_type(m, SR_AXIS_AUTO) : 0;
  if (!au || (!xl && !yl)) return l;
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  SrAxes used = sr_type_sharded_axes(l);
  int changed = 0;
  for (int o = 0; o < l->ndim; o++) {
    if (b.dims[o].nax) continue;
    /* the operand dimensions result dimension o comes from */
    const SrDim *src[2] = {NULL, NULL};
    if (o < d->nb) {
      src[0] = xl ? &xl->dims[d->lb[o]] : NULL;
      src[1] = yl ? &yl->dims[d->rb[o]] : NULL;
    } else if (o < d->nb + nlf) {
      src[0] = xl ? &xl->dims[lf[o - d->nb]] : NULL;
    } else if (o - d->nb - nlf < nrf) {
      src[1] = yl ? &yl->dims[rf[o - d->nb - nlf]] : NULL;
    }
    for (int k = 0; k < 2; k++) {
      const SrDim *sd = src[k];
      if (!sd || !sd->nax) continue;
      SrAxes want = sr_dim_axes(sd);
      if ((want & ~au) || (want & used) || b.dims[o].size % sr_mesh_axes_size(m, want)) continue;
      b.dims[o].nax = sd->nax;
      memcpy(b.dims[o].ax, sd->ax, SR_MAX_DIM_AXES);
      used |= want;
      changed = 1;
      break;
    }
  }
  if (!changed) return l;
  b.mesh = sr_mesh_shape(m);
  return sr_type_get(&b);
}

static int ev_dot_general(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x = e->in[0], *y = e->in[1];
  DotArg d;
  memset(&d, 0, sizeof d);
  if (dims_param(cx, e, &d) < 0) return -1;
  d.lnd = x->type->ndim;
  d.rnd = y->type->ndim;
  d.ldt = x->type->dtype;
  d.rdt = y->type->dtype;
  d.odt = t->dtype;
  /* operands on another mesh (meshless ones) count as replicated */
  const SrType *xl = x->mesh == m ? x->layout : NULL, *yl = y->mesh == m ? y->layout : NULL;
  /* contracting pairs split alike stay split */
  SrAxes contract = 0;
  int keep[SR_MAX_RANK] = {0};
  for (int k = 0; k < d.nc; k++) {
    if (!xl || !yl) continue;
    const SrDim *a = &xl->dims[d.lc[k]], *b = &yl->dims[d.rc[k]];
    if (a->nax && same_axes(a, b) && !(sr_dim_axes(a) & contract)) {
      keep[k] = 1;
      contract |= sr_dim_axes(a);
    }
  }
  /* operand layouts */
  SrTypeBuilder lb_, rb_;
  sr_type_builder(&lb_, sr_layout_of_type(sr_type_strip_sharding(x->type)));
  sr_type_builder(&rb_, sr_layout_of_type(sr_type_strip_sharding(y->type)));
  int lf[SR_MAX_RANK], rf[SR_MAX_RANK], nlf = 0, nrf = 0;
  for (int i = 0; i < d.lnd; i++) {
    int used = 0;
    for (int k = 0; k < d.nb; k++) used |= d.lb[k] == i;
    for (int k = 0; k < d.nc; k++) used |= d.lc[k] == i;
    if (!used) lf[nlf++] = i;
  }
  for (int i = 0; i < d.rnd; i++) {
    int used = 0;
    for (int k = 0; k < d.nb; k++) used |= d.rb[k] == i;
    for (int k = 0; k < d.nc; k++) used |= d.rc[k] == i;
    if (!used) rf[nrf++] = i;
  }
  l = auto_free_dims(l, xl, yl, &d, lf, nlf, rf, nrf, m);
  const SrMesh *sh = l->mesh ? l->mesh : (xl && xl->mesh ? xl->mesh : NULL);
  SrTypeBuilder nat;
  sr_type_builder(&nat, l);
  for (int k = 0; k < d.nb; k++) {
    set_dim(&lb_, d.lb[k], &l->dims[k], contract, sh);
    set_dim(&rb_, d.rb[k], &l->dims[k], contract, sh);
    set_dim(&nat, k, &l->dims[k], contract, sh);
  }
  for (int k = 0; k < nlf; k++) {
    set_dim(&lb_, lf[k], &l->dims[d.nb + k], contract, sh);
    set_dim(&nat, d.nb + k, &l->dims[d.nb + k], contract, sh);
  }
  for (int k = 0; k < nrf; k++) {
    set_dim(&rb_, rf[k], &l->dims[d.nb + nlf + k], contract, sh);
    set_dim(&nat, d.nb + nlf + k, &l->dims[d.nb + nlf + k], contract, sh);
  }
  for (int k = 0; k < d.nc; k++) {
    set_dim(&lb_, d.lc[k], keep[k] ? &xl->dims[d.lc[k]] : NULL, 0, sh);
    set_dim(&rb_, d.rc[k], keep[k] ? &yl->dims[d.rc[k]] : NULL, 0, sh);
  }
  SrArray *ins[2];
  ins[0] = sr_redistribute(cx, x, m, sr_type_get(&lb_));
  if (!ins[0]) return -1;
  ins[1] = sr_redistribute(cx, y, m, sr_type_get(&rb_));
  if (!ins[1]) {
    sr_array_unref(ins[0]);
    return -1;
  }
  nat.unreduced = contract;
  nat.ukind = contract ? SR_UK_SUM : SR_UK_NONE;
  nat.reduced = 0;
  if (contract && !nat.mesh) nat.mesh = sh;
  SrArray *r = sr_array_new(t, sr_type_get(&nat), m);
  /* a scan's accumulator for this result (SrEvAccum, exec/eval.h): the
     gemm adds into it where the result needs no moving afterwards; each
     device its own, so devices with the same operands do not share one */
  d.acc = sr_ev_dest_acc(cx, 0) && r->layout == l && (d.odt == SR_F32 || d.odt == SR_F64) && d.ldt == d.odt &&
          d.rdt == d.odt;
  cx->take_acc = d.acc;
  int rc = sr_ev_map(cx, 2, ins, 1, &r, d.acc ? SR_MAP_POS : 0, dot_fn, &d);
  cx->take_acc = 0;
  sr_array_unref(ins[0]);
  sr_array_unref(ins[1]);
  if (rc == 0) e->out[0] = sr_redistribute_typed(cx, r, m, l, t);
  sr_array_unref(r);
  return rc < 0 || !e->out[0] ? -1 : 0;
}

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

/* An int tuple param (NULL or None: n = 0). */
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
  sr_seq_push(NULL, c, sr_ad_ints(lc, nc));
  sr_seq_push(NULL, c, sr_ad_ints(rc, nc));
  sr_seq_push(NULL, b, sr_ad_ints(lb, nb));
  sr_seq_push(NULL, b, sr_ad_ints(rb, nb));
  sr_seq_push(NULL, r, c);
  sr_seq_push(NULL, r, b);
  return r;
}

/* _dot_general_transpose_lhs: the cotangent of x (ct type xt) from the
   output cotangent g and the other operand yv. */
static SrVal *dot_transpose_lhs(SrAd *ad, const SrEqn *e, SrVal *g, const SrType *xt, SrVal *yv,
                                const int64_t *xc, const int64_t *yc, int nc, const int64_t *xb,
                                const int64_t *yb, int nb, int swap_ans) {
  const SrType *ytype = sr_ad_type(ad, yv);
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
  SrVal *r = sr_ad_bindv(ad, SR_P_dot_general, 2, in, "dimension_numbers", dims_val(ans_y, yk, nyk, ans_batch, yb, nb),
                      "precision", prec ? sr_ref(prec) : sr_none(), "preferred_element_type",
                      pet ? sr_ref(pet) : sr_none(), "out_sharding", sr_ad_sharding_param(ad, ds), NULL);
  r = sr_ad_transpose_dims(ad, r, out_axes, nu);
  const SrType *rt = sr_ad_type(ad, r);
  if (rt && rt->dtype != xt->dtype) r = sr_ad_convert(ad, r, xt->dtype, xt->weak);
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

#undef TR
#undef JVP

/* Axes a type's dims are sharded over, named on the type's mesh. */
static SrAxes dims_axes(const SrType *t, const int64_t *dims, int n) {
  SrAxes a = 0;
  for (int i = 0; i < n; i++)
    if (dims[i] >= 0 && dims[i] < t->ndim) a |= sr_dim_axes(&t->dims[dims[i]]);
  return a;
}

/* A contraction over dims both sides shard all-reduces (or
   reduce-scatters into a sharded result); one side's sharded contracting
   dims are gathered. */
static int comm_dot_general(const SrEqn *e, SrCommNote *out, int max) {
  int n = 0;
  const SrType *o0 = e->nout ? e->out[0]->type : NULL;
  SrVal *d = param(e, "dimension_numbers");
  if (!d || !sr_is_seq(d) || d->seq.n != 2 || !sr_is_seq(d->seq.items[0]) || e->nin < 2) return 0;
  int64_t lc[SR_MAX_RANK], rc[SR_MAX_RANK];
  int nl = 0, nr = 0;
  if (sr_val_ints(d->seq.items[0]->seq.items[0], lc, SR_MAX_RANK, &nl) < 0 ||
      sr_val_ints(d->seq.items[0]->seq.items[1], rc, SR_MAX_RANK, &nr) < 0)
    return 0;
  const SrType *lt = e->in[0]->type, *rt = e->in[1]->type;
  if (!lt || !rt || !o0) return 0;
  SrAxes la = dims_axes(lt, lc, nl), ra = rt->mesh && lt->mesh ? sr_axes_remap(dims_axes(rt, rc, nr), rt->mesh, lt->mesh) : dims_axes(rt, rc, nr);
  const SrMesh *m = lt->mesh ? lt->mesh : rt->mesh;
  SrAxes ou = o0->mesh && m ? sr_axes_remap(o0->unreduced, o0->mesh, m) : 0;
  SrAxes os = o0->mesh && m ? sr_axes_remap(sr_type_sharded_axes(o0), o0->mesh, m) : 0;
  SrAxes both = la & ra;
  if (both & ~ou & ~os) n = sr_comm_note(out, max, n, "all-reduce (contraction over sharded dims)", m, both & ~ou & ~os);
  else if (both & os) n = sr_comm_note(out, max, n, "reduce-scatter (contraction over sharded dims)", m, both & os);
  SrAxes one = (la ^ ra) & ~both;
  if (one) n = sr_comm_note(out, max, n, "all-gather (one side of a contraction sharded)", m, one);
  return n;
}

/* lax._dot_batch_rule and _dot_general_batch_dim_nums: two mapped
   operands make the map a new first batch dimension of the dot; one makes
   it a free dimension of its side, which the result has where that side's
   free dims go.  The other dims are bumped past the batch dim. */
static void bump_dims(int64_t *dims, int n, int at) {
  for (int i = 0; i < n; i++)
    if (dims[i] >= at) dims[i]++;
}

static int batch_dot_general(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  Dims d, o;
  if (e->nin != 2) return sr_batch_no_rule(b, e->prim);
  if (dot_dims(&b->ad, e, &d) < 0) return -1;
  const SrType *lt = sr_ad_type(&b->ad, x[0]), *rt = sr_ad_type(&b->ad, x[1]);
  if (!lt || !rt) return -1;
  int lbd = bd[0], rbd = bd[1], out = 0;
  o = d;
  if (lbd != SR_NOT_MAPPED && rbd != SR_NOT_MAPPED) {
    o.lb[0] = lbd;
    o.rb[0] = rbd;
    memcpy(o.lb + 1, d.lb, (size_t)d.nb * sizeof *d.lb);
    memcpy(o.rb + 1, d.rb, (size_t)d.nb * sizeof *d.rb);
    bump_dims(o.lb + 1, d.nb, lbd);
    bump_dims(o.rb + 1, d.nb, rbd);
    o.nb = d.nb + 1;
    bump_dims(o.lc, d.nc, lbd);
    bump_dims(o.rc, d.nc, rbd);
  } else if (lbd != SR_NOT_MAPPED) {
    out = d.nb;
    for (int i = 0; i < lbd; i++) out += !contains(d.lb, d.nb, i) && !contains(d.lc, d.nc, i);
    bump_dims(o.lb, d.nb, lbd);
    bump_dims(o.lc, d.nc, lbd);
  } else {
    out = lt->ndim - d.nc;
    for (int i = 0; i < rbd; i++) out += !contains(d.rb, d.nb, i) && !contains(d.rc, d.nc, i);
    bump_dims(o.rb, d.nb, rbd);
    bump_dims(o.rc, d.nc, rbd);
  }
  SrVal *dn = dims_val(o.lc, o.rc, o.nc, o.lb, o.rb, o.nb), *os = param(e, "out_sharding");
  if (os && os->kind != SR_V_NONE) {
    int src = lbd != SR_NOT_MAPPED ? 0 : 1;
    y[0] = sr_batch_bind_with(b, e, (int)e->nin, x, "dimension_numbers", dn, "out_sharding",
                              sr_batch_sharding_for_vmap(os, out, src ? rt : lt, bd[src]), NULL);
  } else {
    y[0] = sr_batch_bind_with(b, e, (int)e->nin, x, "dimension_numbers", dn, NULL);
  }
  ybd[0] = out;
  return y[0] ? 0 : -1;
}

/* ==== registration ==== */

static void type_rules_dot(void) { sr_set_type_rule(SR_P_dot_general, type_dot_general); }

static void eval_rules_dot(void) {
  sr_set_eval_rule(SR_P_dot_general, ev_dot_general);
  sr_ev_fold = (SrEvFold){1, SR_P_transpose, SR_P_dot_general};
}

static void ad_rules_dot(void) {
  sr_ad_set_jvp(SR_P_dot_general, sr_ad_jvp_bilinear); /* ad.defbilinear */
  sr_ad_set_transpose(SR_P_dot_general, tr_dot_general);
}

void sr_lax_dot_init(void) {
  type_rules_dot();
  eval_rules_dot();
  ad_rules_dot();
  sr_prims[SR_P_dot_general].comm = comm_dot_general;
  sr_prims[SR_P_dot_general].batch = batch_dot_general;
}

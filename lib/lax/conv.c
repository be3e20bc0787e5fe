/* conv.c: the rules of conv_general_dilated (lax/convolution.py).
 *
 * The family's shared helpers (reading the params in the three forms the
 * stages hold them), then the type, eval, JVP and transpose rules, then
 * the registration sr_lax_conv_init (lax/lax.h says what a family file
 * holds and uses).
 *
 * dimension_numbers is JAX's ConvDimensionNumbers, printed
 * ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(...),
 * out_spec=(...)); the param holds that text (a word), as gather's
 * GatherDimensionNumbers.  Each spec lists the dimensions of its operand
 * in canonical order: batch (out feature for rhs), feature (in feature),
 * then the spatial dimensions.
 */
#include "lax/lax.h"

#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "exec/kern.h"
#include "exec/kern_conv.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ==== the family's helpers ==== */

typedef struct Conv {
  int nd;                      /* rank of the operands */
  int64_t ls[SR_MAX_RANK], rs[SR_MAX_RANK], os[SR_MAX_RANK]; /* lhs_spec, rhs_spec, out_spec */
  int nsp;                     /* spatial dims */
  int64_t ws[SR_MAX_RANK], lo[SR_MAX_RANK], hi[SR_MAX_RANK], ld[SR_MAX_RANK], rd[SR_MAX_RANK];
  int nws, npad, nld, nrd;
  int64_t fgc, bgc;
} Conv;

/* dimension_numbers: the printed ConvDimensionNumbers, or a tuple of the
   three specs. */
static int read_dn(const SrVal *v, Conv *c) {
  int n1 = 0, n2 = 0, n3 = 0;
  if (!v) return -1;
  size_t n;
  const char *s = sr_lax_param_text(v, &n);
  if (s) {
    if (n < 21 || memcmp(s, "ConvDimensionNumbers(", 21) != 0) return -1;
    if (sr_lax_text_ints(s, n, "lhs_spec", c->ls, &n1) != 0 || sr_lax_text_ints(s, n, "rhs_spec", c->rs, &n2) != 0 ||
        sr_lax_text_ints(s, n, "out_spec", c->os, &n3) != 0)
      return -1;
  } else {
    if (!sr_is_seq(v) || v->seq.n != 3 || sr_val_ints(v->seq.items[0], c->ls, SR_MAX_RANK, &n1) < 0 ||
        sr_val_ints(v->seq.items[1], c->rs, SR_MAX_RANK, &n2) < 0 ||
        sr_val_ints(v->seq.items[2], c->os, SR_MAX_RANK, &n3) < 0)
      return -1;
  }
  if (n1 != n2 || n1 != n3 || n1 < 2) return -1;
  c->nd = n1;
  c->nsp = n1 - 2;
  return 0;
}

/* All params but precision and preferred_element_type; `get` reads one.
   Returns NULL or what is malformed. */
static const char *read_conv(SrLaxParamGet get, const void *e, Conv *c) {
  memset(c, 0, sizeof *c);
  if (read_dn(get(e, "dimension_numbers"), c) < 0) return "dimension_numbers";
  if (sr_lax_ints_of(get(e, "window_strides"), c->ws, &c->nws) < 0) return "window_strides";
  if (sr_lax_ints_of(get(e, "lhs_dilation"), c->ld, &c->nld) < 0) return "lhs_dilation";
  if (sr_lax_ints_of(get(e, "rhs_dilation"), c->rd, &c->nrd) < 0) return "rhs_dilation";
  if (sr_lax_pads_of(get(e, "padding"), c->lo, c->hi, &c->npad) < 0) return "padding";
  SrVal *f = get(e, "feature_group_count"), *b = get(e, "batch_group_count");
  c->fgc = f && f->kind == SR_V_INT ? f->i : 1;
  c->bgc = b && b->kind == SR_V_INT ? b->i : 1;
  return NULL;
}

/* The text of ConvDimensionNumbers(lhs, rhs, out), as JAX prints it
   (counted). */
static SrVal *dn_val(const int64_t *l, const int64_t *r, const int64_t *o, int nd) {
  static const char *const keys[3] = {"lhs_spec", "rhs_spec", "out_spec"};
  const int64_t *f[3] = {l, r, o};
  int c[3] = {nd, nd, nd};
  return sr_lax_dn_text("ConvDimensionNumbers", 3, keys, f, c);
}

SrVal *sr_lax_conv_dn_val(const int64_t *lhs_spec, const int64_t *rhs_spec, const int64_t *out_spec, int nd) {
  return dn_val(lhs_spec, rhs_spec, out_spec, nd);
}

/* The result shape (_conv_general_dilated_shape_rule's arithmetic); -1
   with msg filled when it is not one. */
static int out_shape(const Conv *c, const int64_t *lshape, const int64_t *rshape, int64_t *out) {
  int64_t lt[SR_MAX_RANK + 2], rt[SR_MAX_RANK + 2], ot[SR_MAX_RANK + 2];
  lt[0] = lshape[c->ls[0]];
  rt[0] = rshape[c->rs[0]];
  for (int i = 0; i < c->nsp; i++) {
    lt[2 + i] = sr_lax_dilate(lshape[c->ls[2 + i]], c->ld[i]);
    rt[2 + i] = sr_lax_dilate(rshape[c->rs[2 + i]], c->rd[i]);
  }
  ot[0] = c->bgc > 1 ? lt[0] / c->bgc : lt[0];
  ot[1] = rt[0];
  for (int i = 0; i < c->nsp; i++) {
    int64_t padded = lt[2 + i] + c->lo[i] + c->hi[i];
    if (padded < 0) return -1;
    int64_t v = sr_lax_floordiv(padded - rt[2 + i], c->ws[i]) + 1;
    ot[2 + i] = v < 0 ? 0 : v;
  }
  for (int i = 0; i < c->nd; i++) out[c->os[i]] = ot[i];
  return 0;
}

/* ==== conv_general_dilated ==== */

static int64_t spec_size(const SrType *t, int d) {
  int64_t n = 1;
  for (int k = 0; k < t->dims[d].nax; k++) n *= t->mesh->sizes[t->dims[d].ax[k]];
  return n;
}

/* slicing._get_sharding_for_varying_out_shape (structural.c has the same
   for the slicing family). */
int sr_lax_varying_out_sharding(SrTypeCtx *cx, const SrType *x, SrTypeBuilder *b, const char *name) {
  int all1 = 1;
  for (int i = 0; i < b->ndim; i++)
    if (b->dims[i].size != 1) all1 = 0;
  for (int i = 0; i < b->ndim; i++) b->dims[i].nax = 0;
  if (all1) return 0;
  for (int i = 0; i < b->ndim && i < x->ndim; i++) {
    const SrDim *d = &x->dims[i];
    if (d->size != b->dims[i].size && d->nax && !x->mesh->unsized) {
      int64_t sz = spec_size(x, i);
      if (sz && b->dims[i].size % sz != 0) {
        SrBuf sp = SR_BUF_INIT, ts = SR_BUF_INIT, sh = SR_BUF_INIT;
        if (x->dims[i].nax == 1) sr_buf_puts(&sp, x->mesh->names[x->dims[i].ax[0]]);
        else sr_dim_spec_str(&sp, x, i);
        sr_type_str(&ts, x, 1);
        int64_t shp[SR_MAX_RANK];
        for (int k = 0; k < b->ndim; k++) shp[k] = b->dims[k].size;
        sr_ints_str(&sh, shp, b->ndim);
        sr_terr(cx, "ShardingTypeError",
                "%s on sharded dims where out dim (%lld) is not divisible by mesh axes (%lld) with spec (%s) is not "
                "implemented. Got input type=%s and output shape=%s",
                name, (long long)b->dims[i].size, (long long)sz, sr_buf_str(&sp), sr_buf_str(&ts), sr_buf_str(&sh));
        sr_buf_free(&sp);
        sr_buf_free(&ts);
        sr_buf_free(&sh);
        return -1;
      }
    }
  }
  for (int i = 0; i < b->ndim && i < x->ndim; i++) {
    b->dims[i].nax = x->dims[i].nax;
    memcpy(b->dims[i].ax, x->dims[i].ax, SR_MAX_DIM_AXES);
    if (x->mesh) b->mesh = x->mesh;
  }
  return 0;
}

static int shape_err(SrTypeCtx *cx, const char *fmt, const SrType *l, const SrType *r) {
  SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
  sr_shape_str(&a, l);
  sr_shape_str(&b, r);
  sr_terr(cx, "ValueError", fmt, sr_buf_str(&a), sr_buf_str(&b));
  sr_buf_free(&a);
  sr_buf_free(&b);
  return -1;
}

static int type_conv(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *ts[2];
  sr_resolve_bare_literals(e, ts);
  const SrType *l = ts[0], *r = ts[1];
  Conv c;
  const char *bad = read_conv(sr_lax_get_rule, e, &c);
  if (bad) return sr_terr(cx, "TypeError", "conv_general_dilated equation has no valid '%s' param", bad);
  if (l->ndim != r->ndim)
    return shape_err(cx, "conv_general_dilated lhs and rhs must have the same number of dimensions, but got %s and %s.",
                     l, r);
  if (c.nd != l->ndim) return sr_terr(cx, "TypeError", "conv_general_dilated's dimension_numbers do not fit rank %d", l->ndim);
  for (int i = 0; i < c.nd; i++)
    if (c.ls[i] < 0 || c.ls[i] >= c.nd || c.rs[i] < 0 || c.rs[i] >= c.nd || c.os[i] < 0 || c.os[i] >= c.nd)
      return sr_terr(cx, "TypeError", "conv_general_dilated's dimension_numbers are out of range");
  int64_t ls[SR_MAX_RANK], rs[SR_MAX_RANK];
  for (int i = 0; i < l->ndim; i++) ls[i] = l->dims[i].size, rs[i] = r->dims[i].size;
  if (c.fgc <= 0)
    return sr_terr(cx, "ValueError", "conv_general_dilated feature_group_count must be a positive integer, got %lld.",
                   (long long)c.fgc);
  int64_t lf = ls[c.ls[1]];
  if (lf % c.fgc)
    return sr_terr(cx, "ValueError",
                   "conv_general_dilated feature_group_count must divide lhs feature dimension size, but %lld does not "
                   "divide %lld.",
                   (long long)c.fgc, (long long)lf);
  if (lf / c.fgc != rs[c.rs[1]])
    return sr_terr(cx, "ValueError",
                   "conv_general_dilated lhs feature dimension size divided by feature_group_count must equal the rhs "
                   "input feature dimension size, but %lld // %lld != %lld.",
                   (long long)lf, (long long)c.fgc, (long long)rs[c.rs[1]]);
  if (rs[c.rs[0]] % c.fgc)
    return sr_terr(cx, "ValueError",
                   "conv_general_dilated rhs output feature dimension size must be a multiple of feature_group_count, "
                   "but %lld is not a multiple of %lld.",
                   (long long)rs[c.rs[0]], (long long)c.fgc);
  if (c.bgc <= 0)
    return sr_terr(cx, "ValueError", "conv_general_dilated batch_group_count must be a positive integer, got %lld.",
                   (long long)c.bgc);
  int64_t lb = ls[c.ls[0]];
  if (c.bgc > 1 && lb % c.bgc)
    return sr_terr(cx, "ValueError",
                   "conv_general_dilated batch_group_count must divide lhs batch dimension size, but %lld does not "
                   "divide %lld.",
                   (long long)c.bgc, (long long)lb);
  if (rs[c.rs[0]] % c.bgc)
    return sr_terr(cx, "ValueError",
                   "conv_general_dilated rhs output feature dimension size must be a multiple of batch_group_count, "
                   "but %lld is not a multiple of %lld.",
                   (long long)rs[c.rs[0]], (long long)c.bgc);
  if (c.bgc > 1 && c.fgc > 1)
    return sr_terr(cx, "ValueError",
                   "At most one of batch_group_count and feature_group_count may be > 1, got batch_group_count=%lld "
                   "and feature_group_count=%lld",
                   (long long)c.bgc, (long long)c.fgc);
  if (c.nsp != c.nws)
    return sr_terr(cx, "ValueError",
                   "conv_general_dilated window and window_strides must have the same number of dimensions, but got "
                   "%d and %d",
                   c.nsp, c.nws);
  if (c.npad != c.nsp)
    return sr_terr(cx, "TypeError", "Wrong number of explicit pads for convolution: expected %d, got %d.", c.nsp,
                   c.npad);
  if (c.nld != c.nsp || c.nrd != c.nsp)
    return sr_terr(cx, "TypeError", "conv_general_dilated's dilations must have %d entries", c.nsp);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < c.nsp; i++)
      if ((k ? c.rd : c.ld)[i] <= 0) {
        SrBuf db = SR_BUF_INIT;
        sr_ints_str(&db, k ? c.rd : c.ld, c.nsp);
        sr_terr(cx, "TypeError", "All dilations must be positive, got %s.", sr_buf_str(&db));
        sr_buf_free(&db);
        return -1;
      }
  for (int i = 0; i < c.nsp; i++)
    if (c.ws[i] <= 0) return sr_terr(cx, "ZeroDivisionError", "integer division or modulo by zero");
  int64_t shape[SR_MAX_RANK];
  if (out_shape(&c, ls, rs, shape) < 0) {
    SrBuf p = SR_BUF_INIT, s = SR_BUF_INIT;
    sr_buf_putc(&p, '(');
    for (int i = 0; i < c.nsp; i++) sr_buf_printf(&p, "%s(%lld, %lld)", i ? ", " : "", (long long)c.lo[i], (long long)c.hi[i]);
    sr_buf_puts(&p, c.nsp == 1 ? ",)" : ")");
    /* lhs_shape[2:] holds numpy ints (np.take's) */
    sr_buf_putc(&s, '(');
    for (int i = 0; i < c.nsp; i++)
      sr_buf_printf(&s, "%snp.int64(%lld)", i ? ", " : "", (long long)sr_lax_dilate(ls[c.ls[2 + i]], c.ld[i]));
    sr_buf_puts(&s, c.nsp == 1 ? ",)" : ")");
    sr_terr(cx, "ValueError",
            "Negative padding is larger than the size of the corresponding dimension: got padding=%s for "
            "lhs_shape[2:]=%s",
            sr_buf_str(&p), sr_buf_str(&s));
    sr_buf_free(&p);
    sr_buf_free(&s);
    return -1;
  }
  /* _conv_general_dilated_dtype_rule */
  if (l->dtype != r->dtype)
    return sr_terr(cx, "TypeError", "lax.conv_general_dilated requires arguments to have the same dtypes, got %s, %s.",
                   sr_dtype_name(l->dtype), sr_dtype_name(r->dtype));
  SrDtype dt = l->dtype, pref = 0;
  int has = 0;
  if (sr_rparam_dtype(cx, e, "preferred_element_type", &pref, &has) < 0) return -1;
  if (has) dt = pref;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = dt;
  b.weak = (uint8_t)(l->weak && r->weak && !has);
  b.mem = l->mem;
  b.mesh = l->mesh ? l->mesh : r->mesh ? r->mesh : s.mesh;
  b.ndim = (uint8_t)l->ndim;
  for (int i = 0; i < l->ndim; i++) b.dims[i].size = shape[i];
  SrAxes out_ur = 0;
  if (s.mode == SR_MODE_EXPLICIT) {
    SrShardSpec g;
    int given = 0;
    SrVal *os = sr_rparam(e, "out_sharding");
    if (os && os->kind != SR_V_NONE) {
      if (sr_rparam_sharding(cx, e, "out_sharding", b.ndim, &g, &given) < 0) return -1;
    } else if (!os && sr_written(e, 0) && sr_written(e, 0)->ndim == b.ndim) {
      sr_shard_of_type(sr_written(e, 0), &g);
      given = 1;
    }
    if (given) {
      out_ur = g.unreduced | g.reduced;
      if (g.mesh) b.mesh = g.mesh;
      for (int i = 0; i < b.ndim; i++) {
        b.dims[i].nax = g.nax[i];
        memcpy(b.dims[i].ax, g.ax[i], SR_MAX_DIM_AXES);
      }
    } else {
      int rrep = 1;
      for (int i = 0; i < r->ndim; i++)
        if (r->dims[i].nax) rrep = 0;
      /* lhs.sharding.spec[...] trips the spec's guard */
      if (rrep && (l->unreduced | l->reduced))
        return sr_terr(cx, "ValueError",
                       "Using pspec[...] is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please "
                       "use spec.partitions[...]");
      if (!rrep || l->dims[c.ls[1]].nax)
        return sr_terr(cx, "ShardingTypeError",
                       "Please specify the output sharding via `out_sharding` parameter of `conv_general_dilated`");
      if (sr_lax_varying_out_sharding(cx, l, &b, "conv_general_dilated") < 0) return -1;
    }
  }
  /* no ur rule: utils.call_ur_rule refuses unreduced and reduced inputs
     and out_shardings */
  if (sr_ur_none(cx, e, &s, out_ur) < 0) return -1;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* Each device computes the result's batch block from its lhs batch block
   and the whole kernel: a result batch dim split over axes takes the lhs
   batch dim split alike (batch_group_count 1); every other dim is
   gathered first. */

typedef struct ConvArg {
  Conv c;
  SrDtype dt, odt;
} ConvArg;

static int conv_fn(SrShardIO *io) {
  ConvArg *a = io->arg;
  const Conv *c = &a->c;
  SrConvGeom g;
  memset(&g, 0, sizeof g);
  const int64_t *lsh = io->in_shape[0], *rsh = io->in_shape[1], *osh = io->out_shape[0];
  int64_t lst[SR_MAX_RANK], rst[SR_MAX_RANK], ost[SR_MAX_RANK];
  sr_kern_row_strides(c->nd, lsh, lst);
  sr_kern_row_strides(c->nd, rsh, rst);
  sr_kern_row_strides(c->nd, osh, ost);
  g.nsp = c->nsp;
  g.n = lsh[c->ls[0]];
  g.c = lsh[c->ls[1]];
  g.o = rsh[c->rs[0]];
  g.i = rsh[c->rs[1]];
  g.nout = osh[c->os[0]];
  for (int k = 0; k < c->nd; k++) {
    g.lstr[k] = lst[c->ls[k]];
    g.rstr[k] = rst[c->rs[k]];
    g.ostr[k] = ost[c->os[k]];
  }
  for (int d = 0; d < c->nsp; d++) {
    g.in_sp[d] = lsh[c->ls[2 + d]];
    g.k_sp[d] = rsh[c->rs[2 + d]];
    g.out_sp[d] = osh[c->os[2 + d]];
    g.stride[d] = c->ws[d];
    g.lo[d] = c->lo[d];
    g.ldil[d] = c->ld[d];
    g.rdil[d] = c->rd[d];
  }
  g.fgc = c->fgc;
  g.bgc = c->bgc;
  if (sr_kern_conv(a->dt, a->odt, &g, io->in[0]->data, io->in[1]->data, io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "conv_general_dilated of %s into %s", sr_dtype_name(a->dt),
                     sr_dtype_name(a->odt));
  return 0;
}

/* A layout of type t's shape with no axes, but dim d taking dim od of
   layout l's axes when keep. */
static const SrType *batch_layout(const SrType *t, int d, const SrType *l, int od, int keep) {
  SrTypeBuilder b;
  sr_type_builder(&b, sr_layout_of_type(sr_type_strip_sharding(t)));
  if (keep && l->dims[od].nax) {
    b.dims[d].nax = l->dims[od].nax;
    memcpy(b.dims[d].ax, l->dims[od].ax, SR_MAX_DIM_AXES);
    b.mesh = l->mesh;
  }
  return sr_type_get(&b);
}

static int ev_conv(SrEvalCtx *cx, const SrEvalEqn *e) {
  ConvArg a;
  const char *bad = read_conv(sr_lax_get_ev, e, &a.c);
  if (bad) return sr_ev_err(cx, "TypeError", "conv_general_dilated equation has no valid '%s' param", bad);
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x = e->in[0], *y = e->in[1];
  a.dt = x->type->dtype;
  a.odt = t->dtype;
  int lb = (int)a.c.ls[0], ob = (int)a.c.os[0];
  int keep = a.c.bgc == 1 && l->dims[ob].size == x->type->dims[lb].size;
  SrArray *ins[2];
  ins[0] = sr_redistribute(cx, x, m, batch_layout(x->type, lb, l, ob, keep));
  if (!ins[0]) return -1;
  ins[1] = sr_redistribute(cx, y, m, sr_layout_of_type(sr_type_strip_sharding(y->type)));
  if (!ins[1]) {
    sr_array_unref(ins[0]);
    return -1;
  }
  SrArray *r = sr_array_new(t, batch_layout(t, ob, l, ob, keep), m);
  int rc = sr_ev_map(cx, 2, ins, 1, &r, 0, conv_fn, &a);
  sr_array_unref(ins[0]);
  sr_array_unref(ins[1]);
  if (rc == 0) e->out[0] = sr_redistribute_typed(cx, r, m, l, t);
  sr_array_unref(r);
  return rc < 0 || !e->out[0] ? -1 : 0;
}

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)

static SrVal *param_or_none(const SrEqn *e, const char *k) {
  SrVal *v = sr_lax_get_eqn(e, k);
  return v ? sr_ref(v) : sr_none();
}

static SrVal *bind_conv(SrAd *ad, const SrEqn *e, SrVal *lhs, SrVal *rhs, const int64_t *ws, const int64_t *lo,
                        const int64_t *hi, const int64_t *ld, const int64_t *rd, int nsp, SrVal *dn, int64_t fgc,
                        int64_t bgc, const SrType *out_t) {
  SrVal *in[2] = {lhs, rhs};
  return sr_ad_bindv(ad, SR_P_conv_general_dilated, 2, in, "window_strides", sr_int_tuple(ws, nsp), "padding",
                     sr_lax_pads_val(lo, hi, nsp), "lhs_dilation", sr_int_tuple(ld, nsp), "rhs_dilation",
                     sr_int_tuple(rd, nsp), "dimension_numbers", dn, "feature_group_count", sr_int(NULL, fgc),
                     "batch_group_count", sr_int(NULL, bgc), "precision", param_or_none(e, "precision"),
                     "preferred_element_type", param_or_none(e, "preferred_element_type"), "out_sharding",
                     sr_ad_sharding_param(ad, out_t), NULL);
}

/* _reshape_axis_out_of(src, size1, x): dim src split into (size1, rest). */
static SrVal *axis_out_of(SrAd *ad, int src, int64_t size1, SrVal *x) {
  const SrType *t = sr_ad_type(ad, x);
  if (!t) return NULL;
  SrTypeBuilder b;
  sr_type_builder(&b, sr_type_strip_sharding(t));
  for (int i = b.ndim; i > src + 1; i--) b.dims[i] = b.dims[i - 1];
  b.ndim++;
  b.dims[src].size = size1;
  b.dims[src + 1].size = t->dims[src].size / size1;
  return sr_ad_reshape_plain(ad, x, sr_type_get(&b));
}

/* _reshape_axis_into(src, dst, x): dim src merged into dim dst (numbered
   without src) as its major part: a transpose, then a reshape. */
static SrVal *axis_into(SrAd *ad, int src, int dst, SrVal *x) {
  const SrType *t = sr_ad_type(ad, x);
  if (!t) return NULL;
  int64_t perm[SR_MAX_RANK];
  int n = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != src) perm[n++] = i;
  memmove(perm + dst + 1, perm + dst, (size_t)(n - dst) * sizeof *perm);
  perm[dst] = src;
  int ident = 1;
  for (int i = 0; i < t->ndim; i++) ident &= perm[i] == i;
  if (!ident) x = sr_ad_transpose_dims(ad, x, perm, t->ndim);
  if (!x) return NULL;
  SrTypeBuilder b;
  sr_type_builder(&b, sr_type_strip_sharding(t));
  int k = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != src) b.dims[k++] = t->dims[i];
  b.ndim--;
  b.dims[dst].size *= t->dims[src].size;
  for (int i = 0; i < b.ndim; i++) b.dims[i].nax = 0;
  return sr_ad_reshape_plain(ad, x, sr_type_get(&b));
}

/* _conv_general_dilated_transpose_lhs */
static SrVal *transpose_lhs(SrAd *ad, const SrEqn *e, const Conv *c, SrVal *g, SrVal *rhs) {
  const SrType *lt = e->in[0]->type, *gt = sr_ad_type(ad, g);
  const SrType *rt = sr_ad_type(ad, rhs);
  if (!gt || !rt) return NULL;
  int nsp = c->nsp;
  int64_t trs[SR_MAX_RANK];
  memcpy(trs, c->rs, sizeof trs);
  trs[0] = c->rs[1];
  trs[1] = c->rs[0];
  int64_t fgc = c->fgc;
  if (c->fgc > 1 || c->bgc > 1) {
    int64_t gc = c->fgc > 1 ? c->fgc : c->bgc;
    rhs = axis_out_of(ad, (int)c->rs[0], gc, rhs);
    if (rhs) rhs = axis_into(ad, (int)c->rs[0], (int)c->rs[1], rhs);
    if (!rhs) return NULL;
    fgc = gc;
  }
  /* _conv_general_vjp_lhs_padding */
  int64_t lo[SR_MAX_RANK], hi[SR_MAX_RANK];
  for (int i = 0; i < nsp; i++) {
    int64_t ld = sr_lax_dilate(lt->dims[c->ls[2 + i]].size, c->ld[i]);
    int64_t rd = sr_lax_dilate(rt->dims[c->rs[2 + i]].size, c->rd[i]);
    int64_t od = sr_lax_dilate(gt->dims[c->os[2 + i]].size, c->ws[i]);
    lo[i] = rd - c->lo[i] - 1;
    hi[i] = ld + rd - 1 - od - lo[i];
  }
  int64_t sd[SR_MAX_RANK];
  for (int i = 0; i < nsp; i++) sd[i] = c->rs[2 + i];
  SrVal *w = sr_ad_keep(ad, sr_op_rev(SR_AD_BINDER(ad), rhs, sd, nsp));
  if (!w) return NULL;
  if (gt->dtype != rt->dtype) w = sr_ad_convert(ad, w, gt->dtype, 0);
  if (!w) return NULL;
  const SrType *want = sr_ad_ct_type(lt);
  SrVal *out = bind_conv(ad, e, g, w, c->ld, lo, hi, c->ws, c->rd, nsp, dn_val(c->os, trs, c->ls, c->nd), fgc, 1,
                         want);
  if (!out) return NULL;
  const SrType *ot = sr_ad_type(ad, out);
  if (ot && ot->dtype != lt->dtype) out = sr_ad_convert(ad, out, lt->dtype, lt->weak);
  if (out && c->bgc > 1) {
    out = axis_out_of(ad, (int)c->ls[1], c->bgc, out);
    if (out) out = axis_into(ad, (int)c->ls[1], (int)c->ls[0], out);
  }
  return out;
}

/* _conv_general_dilated_transpose_rhs */
static SrVal *transpose_rhs(SrAd *ad, const SrEqn *e, const Conv *c, SrVal *g, SrVal *lhs) {
  const SrType *rt = e->in[1]->type, *gt = sr_ad_type(ad, g), *lt = sr_ad_type(ad, lhs);
  if (!gt || !lt) return NULL;
  int nsp = c->nsp, nd = c->nd;
  int64_t lts[SR_MAX_RANK], rts[SR_MAX_RANK], ots[SR_MAX_RANK];
  memcpy(lts, c->ls, sizeof lts);
  memcpy(rts, c->rs, sizeof rts);
  memcpy(ots, c->os, sizeof ots);
  lts[0] = c->ls[1], lts[1] = c->ls[0];
  rts[0] = c->rs[1], rts[1] = c->rs[0];
  ots[0] = c->os[1], ots[1] = c->os[0];
  int64_t fgc = c->fgc, bgc = c->bgc;
  if (bgc > 1) fgc = bgc, bgc = 1;
  else if (fgc > 1) bgc = fgc, fgc = 1;
  /* _conv_general_vjp_rhs_padding */
  int64_t lo[SR_MAX_RANK], hi[SR_MAX_RANK];
  for (int i = 0; i < nsp; i++) {
    int64_t ld = sr_lax_dilate(lt->dims[c->ls[2 + i]].size, c->ld[i]);
    int64_t rd = sr_lax_dilate(rt->dims[c->rs[2 + i]].size, c->rd[i]);
    int64_t od = sr_lax_dilate(gt->dims[c->os[2 + i]].size, c->ws[i]);
    lo[i] = c->lo[i];
    hi[i] = (od - ld) + (rd - c->lo[i] - 1);
  }
  if (gt->dtype != lt->dtype) lhs = sr_ad_convert(ad, lhs, gt->dtype, 0);
  if (!lhs) return NULL;
  SrVal *out = bind_conv(ad, e, lhs, g, c->rd, lo, hi, c->ld, c->ws, nsp, dn_val(lts, ots, rts, nd), fgc, bgc,
                         sr_ad_ct_type(rt));
  const SrType *ot = out ? sr_ad_type(ad, out) : NULL;
  if (ot && ot->dtype != rt->dtype) out = sr_ad_convert(ad, out, rt->dtype, rt->weak);
  return out;
}

TR(tr_conv) {
  Conv c;
  const char *bad = read_conv(sr_lax_get_eqn, e, &c);
  if (bad) return sr_raise(ad->I, "TypeError", "conv_general_dilated: malformed %s", bad), -1;
  if (!x[0] && !x[1])
    return sr_raise(ad->I, "ValueError", "conv_general_dilated is bilinear: it transposes in one operand only"), -1;
  if (!x[0]) {
    cx[0] = transpose_lhs(ad, e, &c, ct[0], x[1]);
    return cx[0] ? 0 : -1;
  }
  cx[1] = transpose_rhs(ad, e, &c, ct[0], x[0]);
  return cx[1] ? 0 : -1;
}

#undef TR
#undef JVP

/* ==== batching ==== */

/* conv_general_dilated with e's params but the group counts (the
   operands' shapes change, the dimension numbers do not) */
static SrVal *rebind_conv(SrAd *ad, const SrEqn *e, const Conv *c, SrVal *lhs, SrVal *rhs, int64_t fgc, int64_t bgc,
                          SrVal *osh) {
  if (!lhs || !rhs) {
    sr_unref(osh);
    return NULL;
  }
  SrVal *in[2] = {lhs, rhs};
  return sr_ad_bindv(ad, SR_P_conv_general_dilated, 2, in, "window_strides", sr_int_tuple(c->ws, c->nsp), "padding",
                     sr_lax_pads_val(c->lo, c->hi, c->nsp), "lhs_dilation", sr_int_tuple(c->ld, c->nsp),
                     "rhs_dilation", sr_int_tuple(c->rd, c->nsp), "dimension_numbers",
                     dn_val(c->ls, c->rs, c->os, c->nd), "feature_group_count", sr_int(NULL, fgc), "batch_group_count",
                     sr_int(NULL, bgc), "precision", param_or_none(e, "precision"), "preferred_element_type",
                     param_or_none(e, "preferred_element_type"), "out_sharding", osh, NULL);
}

/* The batch rule's get_out_sharding(axis): e's out_sharding (None stays
   None) with its entry `axis` the batch axis' Explicit mesh axes, where it
   has some; NULL (NotImplementedError) if that entry is already sharded. */
static SrVal *conv_out_sharding(SrBatch *b, const SrEqn *e, int axis) {
  SrVal *osh = sr_lax_get_eqn(e, "out_sharding");
  if (!osh || osh->kind != SR_V_SHARDING) return osh && osh->kind != SR_V_NONE ? sr_ref(osh) : sr_none();
  if (!b->spmd_explicit || !b->nspmd) return sr_ref(osh);
  const SrSpec *s = osh->sh.spec;
  if (axis < s->n && s->e[axis].n) return sr_raise(b->ad.I, "NotImplementedError", "%s", ""), NULL;
  int n = s->n > axis ? s->n : axis + 1;
  SrSpecEntry *ent = sr_xcalloc((size_t)n, sizeof *ent);
  for (int i = 0; i < s->n; i++) ent[i] = s->e[i];
  ent[axis].n = b->nspmd;
  ent[axis].names = (const char **)b->spmd;
  SrSpec spec = *s;
  spec.n = n;
  spec.e = ent;
  SrVal *r = sr_sharding_val(NULL, osh->sh.mesh, &spec, osh->sh.memory_kind);
  free(ent);
  return r;
}

/* _conv_general_dilated_batch_rule: the batch dim folded into the lhs
   batch dim (only the lhs mapped), the rhs output features (only the
   rhs), or into the feature (or batch) groups (both), the groups kept
   outermost where there are some; the result's dim split again. */
static int batch_conv(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrAd *ad = &b->ad;
  Conv c;
  const char *bad = read_conv(sr_lax_get_eqn, e, &c);
  if (bad) return sr_raise(ad->I, "TypeError", "conv_general_dilated: malformed %s", bad), -1;
  SrVal *osh = sr_lax_get_eqn(e, "out_sharding");
  int has_osh = osh && osh->kind != SR_V_NONE;
  if (b->size == 0) {
    /* an empty batch: zeros of the example result's shape behind a 0
       (the rule's lax.full((0,) + shape, 0)) */
    const SrType *o = e->nout ? e->out[0]->type : NULL;
    if (!o || o->ndim + 1 > SR_MAX_RANK)
      return sr_raise(ad->I, "NotImplementedError", "vmap of conv_general_dilated over an axis of size 0"), -1;
    int64_t shape[SR_MAX_RANK];
    shape[0] = 0;
    for (int i = 0; i < o->ndim; i++) shape[i + 1] = o->dims[i].size;
    SrVal *sh = has_osh ? sr_batch_sharding_for_vmap(osh, 0, NULL, SR_NOT_MAPPED) : NULL;
    SrVal *zero = sr_ad_scalar(ad, o->dtype, 0, 0);
    y[0] = zero ? sr_ad_keep(ad, sr_op_full(SR_AD_BINDER(ad), shape, o->ndim + 1, zero, (int)o->dtype, sh)) : NULL;
    sr_unref(sh);
    ybd[0] = 0;
    return y[0] ? 0 : -1;
  }
  int lb = bd[0], rb = bd[1];
  int64_t n = b->size, fgc = c.fgc, bgc = c.bgc;
  int ls0 = (int)c.ls[0], ls1 = (int)c.ls[1], rs0 = (int)c.rs[0], os0 = (int)c.os[0], os1 = (int)c.os[1];
  SrVal *out;
  if (lb != SR_NOT_MAPPED && rb != SR_NOT_MAPPED) {
    SrVal *nl;
    if (bgc > 1) {
      nl = axis_into(ad, lb, ls0, x[0]);
      bgc *= n;
    } else {
      nl = axis_into(ad, lb, ls1, x[0]);
      fgc *= n;
    }
    SrVal *ns = conv_out_sharding(b, e, os1);
    out = ns ? rebind_conv(ad, e, &c, nl, axis_into(ad, rb, rs0, x[1]), fgc, bgc, ns) : NULL;
    out = out ? axis_out_of(ad, os1, n, out) : NULL;
    ybd[0] = os1;
  } else if (lb != SR_NOT_MAPPED) {
    SrVal *nl;
    if (bgc == 1) {
      nl = axis_into(ad, lb, ls0, x[0]);
    } else {
      nl = axis_out_of(ad, ls0 + (lb <= ls0), bgc, x[0]);
      nl = nl ? axis_into(ad, lb + (ls0 < lb), ls0 + 1, nl) : NULL;
      nl = nl ? axis_into(ad, ls0, ls0, nl) : NULL;
    }
    SrVal *ns = conv_out_sharding(b, e, os0);
    out = ns ? rebind_conv(ad, e, &c, nl, x[1], fgc, bgc, ns) : NULL;
    out = out ? axis_out_of(ad, os0, n, out) : NULL;
    ybd[0] = os0;
  } else {
    SrVal *nr;
    int64_t g = fgc > 1 ? fgc : bgc;
    if (fgc == 1 && bgc == 1) {
      nr = axis_into(ad, rb, rs0, x[1]);
    } else if (has_osh) {
      return sr_raise(ad->I, "NotImplementedError", "%s", ""), -1;
    } else {
      nr = axis_out_of(ad, rs0 + (rb <= rs0), g, x[1]);
      nr = nr ? axis_into(ad, rb + (rs0 < rb), rs0 + 1, nr) : NULL;
      nr = nr ? axis_into(ad, rs0, rs0, nr) : NULL;
    }
    SrVal *ns = conv_out_sharding(b, e, os1);
    out = ns ? rebind_conv(ad, e, &c, x[0], nr, fgc, bgc, ns) : NULL;
    if (fgc == 1 && bgc == 1) {
      out = out ? axis_out_of(ad, os1, n, out) : NULL;
    } else {
      out = out ? axis_out_of(ad, os1, g, out) : NULL;
      out = out ? axis_out_of(ad, os1 + 1, n, out) : NULL;
      out = out ? axis_into(ad, os1, os1 + 1, out) : NULL;
    }
    ybd[0] = os1;
  }
  y[0] = out;
  return out ? 0 : -1;
}

/* ==== registration ==== */

void sr_lax_conv_init(void) {
  sr_set_type_rule(SR_P_conv_general_dilated, type_conv);
  sr_set_eval_rule(SR_P_conv_general_dilated, ev_conv);
  sr_ad_set_jvp(SR_P_conv_general_dilated, sr_ad_jvp_bilinear); /* ad.defbilinear */
  sr_ad_set_transpose(SR_P_conv_general_dilated, tr_conv);
  sr_prims[SR_P_conv_general_dilated].batch = batch_conv;
}

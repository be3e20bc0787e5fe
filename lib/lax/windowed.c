/* windowed.c: the rules of the windowed reductions
 * (lax/windowed_reductions.py): reduce_window_sum, reduce_window_max,
 * reduce_window_min, select_and_gather_add (the JVP of the max/min
 * pools) and select_and_scatter_add (its transpose).
 *
 * The family's helpers (their params), then each group's type, eval, JVP
 * and transpose rules, then the registration sr_lax_windowed_init
 * (lax/lax.h says what a family file holds and uses).  A dim whose window
 * is 1 wide, unstrided, unpadded and undilated maps one to one onto the
 * result's and may stay sharded through the eval rules; the others are
 * gathered.
 */
#include "lax/lax.h"

#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "exec/kern_window.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ==== the family's helpers ==== */

typedef struct Win {
  int n;                   /* window_dimensions' length */
  int64_t win[SR_MAX_RANK], st[SR_MAX_RANK], lo[SR_MAX_RANK], hi[SR_MAX_RANK], bd[SR_MAX_RANK], wd[SR_MAX_RANK];
  int nst, npad, nbd, nwd;
  int ge;                  /* select_prim is ge (else le) */
} Win;

/* The params (dilations optional: select_and_scatter_add has none);
   NULL or the malformed one. */
static const char *read_win(SrLaxParamGet get, const void *e, Win *w) {
  memset(w, 0, sizeof *w);
  if (sr_lax_ints_of(get(e, "window_dimensions"), w->win, &w->n) < 0) return "window_dimensions";
  if (sr_lax_ints_of(get(e, "window_strides"), w->st, &w->nst) < 0) return "window_strides";
  if (sr_lax_pads_of(get(e, "padding"), w->lo, w->hi, &w->npad) < 0) return "padding";
  SrVal *b = get(e, "base_dilation"), *d = get(e, "window_dilation");
  if (b && sr_lax_ints_of(b, w->bd, &w->nbd) < 0) return "base_dilation";
  if (d && sr_lax_ints_of(d, w->wd, &w->nwd) < 0) return "window_dilation";
  if (!b)
    for (w->nbd = w->n; w->nbd > 0; w->nbd--) w->bd[w->nbd - 1] = 1;
  if (!d)
    for (w->nwd = w->n; w->nwd > 0; w->nwd--) w->wd[w->nwd - 1] = 1;
  if (!b) w->nbd = w->n;
  if (!d) w->nwd = w->n;
  SrVal *s = get(e, "select_prim");
  w->ge = !(s && (s->kind == SR_V_WORD || s->kind == SR_V_STR) && s->str.n == 2 && memcmp(s->str.s, "le", 2) == 0);
  return NULL;
}

/* reduce_window_shape_tuple */
static void win_shape(const Win *w, const int64_t *in, int64_t *out) {
  /* in 128 bits, so that huge params give a huge size (which the shape
     rules refuse) instead of an overflow */
  for (int i = 0; i < w->n; i++) {
    __int128 padded = (__int128)sr_lax_dilate(in[i], w->bd[i]) + w->lo[i] + w->hi[i];
    __int128 num = padded - sr_lax_dilate(w->win[i], w->wd[i]), st = w->st[i] ? w->st[i] : 1;
    __int128 q = num / st;
    if (num % st != 0 && (num < 0) != (st < 0)) q--;
    __int128 v = q + 1;
    out[i] = v < 0 ? 0 : v > INT64_MAX ? INT64_MAX : (int64_t)v;
  }
}

static int trivial(const Win *w, int d) {
  return w->win[d] == 1 && w->st[d] == 1 && w->lo[d] == 0 && w->hi[d] == 0 && w->bd[d] == 1 && w->wd[d] == 1;
}

static const char *ints_s(SrBuf *b, const int64_t *v, int n) {
  sr_ints_str(b, v, n);
  return sr_buf_str(b);
}

/* lax._check_shapelike for one param */
static int check_shapelike(SrTypeCtx *cx, const char *fun, const char *arg, const int64_t *v, int n, int nonzero) {
  for (int i = 0; i < n; i++)
    if (v[i] < (nonzero ? 1 : 0)) {
      SrBuf b = SR_BUF_INIT;
      sr_terr(cx, "TypeError", "%s %s must have every element be %s, got %s.", fun, arg,
              nonzero ? "strictly positive" : "nonnegative", ints_s(&b, v, n));
      sr_buf_free(&b);
      return -1;
    }
  return 0;
}

/* _common_reduce_window_shape_rule: the result shape into out. */
static int common_shape(SrTypeCtx *cx, const SrType *x, const Win *w, int64_t *out) {
  if (check_shapelike(cx, "reduce_window", "window_dimensions", w->win, w->n, 1) < 0 ||
      check_shapelike(cx, "reduce_window", "window_strides", w->st, w->nst, 1) < 0 ||
      check_shapelike(cx, "reduce_window", "base_dilation", w->bd, w->nbd, 0) < 0 ||
      check_shapelike(cx, "reduce_window", "window_dilation", w->wd, w->nwd, 0) < 0)
    return -1;
  SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
  int rc = 0;
  if (x->ndim != w->n) {
    sr_shape_str(&a, x);
    rc = sr_terr(cx, "TypeError",
                 "reduce_window got the wrong number of window_dimensions for operand: got operand shape %s with "
                 "window_dimensions %s.",
                 sr_buf_str(&a), ints_s(&b, w->win, w->n));
  } else if (w->nst != w->n) {
    rc = sr_terr(cx, "TypeError",
                 "reduce_window got inconsistent window_strides and window_dimensions: got window_strides %s and "
                 "window_dimensions %s.",
                 ints_s(&a, w->st, w->nst), ints_s(&b, w->win, w->n));
  } else if (w->nbd != w->n) {
    rc = sr_terr(cx, "TypeError",
                 "reduce_window got inconsistent base_dilation and window_dimensions: got base_dilation %s and "
                 "window_dimensions %s.",
                 ints_s(&a, w->bd, w->nbd), ints_s(&b, w->win, w->n));
  } else if (w->nwd != w->n) {
    rc = sr_terr(cx, "TypeError",
                 "reduce_window got inconsistent window_dilation and window_dimensions: got window_dilation %s and "
                 "window_dimensions %s.",
                 ints_s(&a, w->wd, w->nwd), ints_s(&b, w->win, w->n));
  } else if (w->npad != w->n) {
    rc = sr_terr(cx, "TypeError", "reduce_window got %d padding pairs for an operand of rank %d", w->npad, w->n);
  }
  sr_buf_free(&a);
  sr_buf_free(&b);
  if (rc) return -1;
  for (int i = 0; i < w->n; i++)
    if (w->st[i] <= 0 || w->bd[i] <= 0 || w->wd[i] <= 0)
      return sr_terr(cx, "ValueError", "reduce_window strides and dilations must be positive");
  int64_t in[SR_MAX_RANK];
  for (int i = 0; i < x->ndim; i++) in[i] = x->dims[i].size;
  win_shape(w, in, out);
  return 0;
}

/* A standard result of shape `shape` from operand x, sharded by
   reduce_window_sharding_rule. */
static int finish_std(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *x, const int64_t *shape, int nd,
                      const SrType **out) {
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = x->dtype;
  b.weak = x->weak;
  b.mem = x->mem;
  b.mesh = x->mesh ? x->mesh : s.mesh;
  b.ndim = (uint8_t)nd;
  for (int i = 0; i < nd; i++) b.dims[i].size = shape[i];
  if (s.mode == SR_MODE_EXPLICIT && sr_lax_varying_out_sharding(cx, x, &b, "reduce_window") < 0) return -1;
  /* no ur rule: utils.call_ur_rule refuses unreduced and reduced inputs */
  if (sr_ur_none(cx, e, &s, 0) < 0) return -1;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* The kernel geometry of operand shape in and result shape out. */
static void geom(const Win *w, const int64_t *in, const int64_t *out, SrWindowGeom *g) {
  memset(g, 0, sizeof *g);
  g->nd = w->n;
  for (int i = 0; i < w->n; i++) {
    g->in[i] = in[i];
    g->out[i] = out[i];
    g->win[i] = w->win[i];
    g->stride[i] = w->st[i];
    g->lo[i] = w->lo[i];
    g->bdil[i] = w->bd[i];
    g->wdil[i] = w->wd[i];
  }
}

/* A layout of t's shape keeping layout l's axes on the trivial dims. */
static const SrType *keep_trivial(const SrType *t, const Win *w, const SrType *l) {
  SrTypeBuilder b;
  sr_type_builder(&b, sr_layout_of_type(sr_type_strip_sharding(t)));
  for (int d = 0; d < b.ndim && d < w->n; d++)
    if (trivial(w, d) && l->dims[d].nax && l->dims[d].size == b.dims[d].size) {
      b.dims[d].nax = l->dims[d].nax;
      memcpy(b.dims[d].ax, l->dims[d].ax, SR_MAX_DIM_AXES);
      b.mesh = l->mesh;
    }
  return sr_type_get(&b);
}

typedef struct WinArg {
  Win w;
  int op;      /* SR_WIN_* for reduce_window_*, else 0 */
  int kind;    /* 0 reduce, 1 select_and_gather_add, 2 select_and_scatter_add */
  SrDtype dt;
} WinArg;

static int win_fn(SrShardIO *io) {
  WinArg *a = io->arg;
  SrWindowGeom g;
  int rc;
  if (a->kind == 2) {
    /* (source, operand) -> operand-shaped */
    geom(&a->w, io->in_shape[1], io->in_shape[0], &g);
    rc = sr_kern_select_scatter(a->w.ge, a->dt, &g, io->in[0]->data, io->in[1]->data, io->out[0]->data);
  } else if (a->kind == 1) {
    geom(&a->w, io->in_shape[1], io->out_shape[0], &g);
    rc = sr_kern_select_gather(a->w.ge, a->dt, &g, io->in[0]->data, io->in[1]->data, io->out[0]->data);
  } else {
    geom(&a->w, io->in_shape[0], io->out_shape[0], &g);
    rc = sr_kern_reduce_window(a->op, a->dt, &g, io->in[0]->data, io->out[0]->data);
  }
  if (rc < 0) return sr_ev_err(io->cx, "NotImplementedError", "%s of %s", io->cx ? "a windowed reduction" : "",
                               sr_dtype_name(a->dt));
  return 0;
}

/* Runs a windowed rule over its inputs (1 or 2), the trivial dims kept
   sharded like the result. */
static int ev_win(SrEvalCtx *cx, const SrEvalEqn *e, int kind, int op) {
  WinArg a;
  memset(&a, 0, sizeof a);
  const char *bad = read_win(sr_lax_get_ev, e, &a.w);
  if (bad) return sr_ev_err(cx, "TypeError", "%s equation has no valid '%s' param", e->prim->name, bad);
  a.kind = kind;
  a.op = op;
  a.dt = e->in[0]->type->dtype;
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  int nin = (int)e->nin;
  SrArray *ins[2] = {NULL, NULL};
  for (int i = 0; i < nin; i++) {
    ins[i] = sr_redistribute(cx, e->in[i], m, keep_trivial(e->in[i]->type, &a.w, l));
    if (!ins[i]) {
      if (i) sr_array_unref(ins[0]);
      return -1;
    }
  }
  SrArray *r = sr_array_new(t, keep_trivial(t, &a.w, l), m);
  int rc = sr_ev_map(cx, nin, ins, 1, &r, 0, win_fn, &a);
  for (int i = 0; i < nin; i++) sr_array_unref(ins[i]);
  if (rc == 0) e->out[0] = sr_redistribute_typed(cx, r, m, l, t);
  sr_array_unref(r);
  return rc < 0 || !e->out[0] ? -1 : 0;
}

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)
#define JVP(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

static SrVal *select_prim_val(int ge) { return sr_word(NULL, ge ? "ge" : "le", 2); }

/* _select_and_gather_add(t, operand, ...) */
static SrVal *bind_sga(SrAd *ad, SrVal *t, SrVal *x, const Win *w, int ge, const int64_t *bd, const int64_t *wd) {
  SrVal *in[2] = {t, x};
  return sr_ad_bindv(ad, SR_P_select_and_gather_add, 2, in, "select_prim", select_prim_val(ge), "window_dimensions",
                     sr_int_tuple(w->win, w->n), "window_strides", sr_int_tuple(w->st, w->n), "padding",
                     sr_lax_pads_val(w->lo, w->hi, w->n), "base_dilation", sr_int_tuple(bd, w->n), "window_dilation",
                     sr_int_tuple(wd, w->n), NULL);
}

/* _select_and_scatter_add(source, operand, ...) */
static SrVal *bind_ssa(SrAd *ad, SrVal *s, SrVal *x, const Win *w, int ge) {
  SrVal *in[2] = {s, x};
  return sr_ad_bindv(ad, SR_P_select_and_scatter_add, 2, in, "select_prim", select_prim_val(ge), "window_dimensions",
                     sr_int_tuple(w->win, w->n), "window_strides", sr_int_tuple(w->st, w->n), "padding",
                     sr_lax_pads_val(w->lo, w->hi, w->n), NULL);
}

static int read_eqn_win(SrAd *ad, const SrEqn *e, Win *w) {
  const char *bad = read_win(sr_lax_get_eqn, e, w);
  if (bad) return sr_raise(ad->I, "TypeError", "%s: malformed %s", e->prim->name, bad), -1;
  return 0;
}

/* ==== reduce_window_sum, reduce_window_max, reduce_window_min ==== */

static int type_rw(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *ts[1];
  sr_resolve_bare_literals(e, ts);
  const SrType *x = ts[0];
  Win w;
  const char *bad = read_win(sr_lax_get_rule, e, &w);
  if (bad) return sr_terr(cx, "TypeError", "%s equation has no valid '%s' param", e->prim->name, bad);
  if (e->prim == &sr_prims[SR_P_reduce_window_sum] && (x->dtype == SR_BOOL || !sr_dtype_info(x->dtype)))
    return sr_terr(cx, "TypeError", "operand to reduce_window_sum must have a number dtype, got %s",
                   sr_dtype_name(x->dtype));
  int64_t shape[SR_MAX_RANK];
  if (common_shape(cx, x, &w, shape) < 0) return -1;
  return finish_std(cx, e, x, shape, x->ndim, out);
}

static int ev_rw_sum(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_win(cx, e, 0, SR_WIN_SUM); }
static int ev_rw_max(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_win(cx, e, 0, SR_WIN_MAX); }
static int ev_rw_min(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_win(cx, e, 0, SR_WIN_MIN); }

/* _reduce_window_chooser_jvp_rule: the tangent at each window's max (min) */
JVP(jvp_rw_chooser) {
  Win w;
  if (read_eqn_win(ad, e, &w) < 0) return -1;
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0]) {
    ty[0] = NULL;
    return 0;
  }
  ty[0] = bind_sga(ad, t[0], x[0], &w, e->prim == &sr_prims[SR_P_reduce_window_max], w.bd, w.wd);
  return ty[0] ? 0 : -1;
}

/* _reduce_window_sum_transpose_rule: the cotangent padded (interior
   stride - 1) and summed over windows strided by the base dilation. */
TR(tr_rw_sum) {
  (void)x;
  Win w;
  if (read_eqn_win(ad, e, &w) < 0) return -1;
  const SrType *it = e->in[0]->type, *gt = sr_ad_type(ad, ct[0]);
  if (!gt) return -1;
  int n = w.n;
  int64_t cfg[3 * SR_MAX_RANK], ones[SR_MAX_RANK], zeros[SR_MAX_RANK];
  for (int i = 0; i < n; i++) {
    /* _conv_general_vjp_lhs_padding */
    int64_t ld = sr_lax_dilate(it->dims[i].size, w.bd[i]), rd = sr_lax_dilate(w.win[i], w.wd[i]);
    int64_t od = sr_lax_dilate(gt->dims[i].size, w.st[i]);
    int64_t before = rd - w.lo[i] - 1;
    cfg[3 * i] = before;
    cfg[3 * i + 1] = ld + rd - 1 - od - before;
    cfg[3 * i + 2] = w.st[i] - 1;
    ones[i] = 1;
    zeros[i] = 0;
  }
  SrVal *zero = sr_ad_scalar(ad, gt->dtype, 0, 0.0);
  SrVal *p = sr_ad_keep(ad, sr_op_pad(SR_AD_BINDER(ad), ct[0], zero, cfg, n));
  if (!p) return -1;
  cx[0] = sr_ad_bindv(ad, SR_P_reduce_window_sum, 1, &p, "window_dimensions", sr_int_tuple(w.win, n),
                      "window_strides", sr_int_tuple(w.bd, n), "padding", sr_lax_pads_val(zeros, zeros, n), "base_dilation",
                      sr_int_tuple(ones, n), "window_dilation", sr_int_tuple(w.wd, n), NULL);
  return cx[0] ? 0 : -1;
}

/* ==== select_and_gather_add ==== */

static int type_sga(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *ts[2];
  sr_resolve_bare_literals(e, ts);
  const SrType *t = ts[0], *x = ts[1];
  Win w;
  const char *bad = read_win(sr_lax_get_rule, e, &w);
  if (bad) return sr_terr(cx, "TypeError", "select_and_gather_add equation has no valid '%s' param", bad);
  int same = t->ndim == x->ndim;
  for (int i = 0; same && i < t->ndim; i++) same = t->dims[i].size == x->dims[i].size;
  if (!same) {
    SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
    sr_shape_str(&a, t);
    sr_shape_str(&b, x);
    sr_terr(cx, "TypeError", "select_and_gather_add tangents and operand shapes must match, got %s and %s.",
            sr_buf_str(&a), sr_buf_str(&b));
    sr_buf_free(&a);
    sr_buf_free(&b);
    return -1;
  }
  int64_t shape[SR_MAX_RANK];
  if (common_shape(cx, x, &w, shape) < 0) return -1;
  return finish_std(cx, e, t, shape, x->ndim, out);
}

static int ev_sga(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_win(cx, e, 1, 0); }

/* _select_and_gather_add_jvp: linear in the tangents */
JVP(jvp_sga) {
  Win w;
  if (read_eqn_win(ad, e, &w) < 0) return -1;
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0]) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *in[2] = {t[0], x[1]};
  ty[0] = sr_ad_bind_eqn1(ad, e, in);
  return ty[0] ? 0 : -1;
}

/* _select_and_gather_add_transpose */
TR(tr_sga) {
  Win w;
  if (read_eqn_win(ad, e, &w) < 0) return -1;
  if (!x[1] || x[0]) return sr_raise(ad->I, "ValueError", "select_and_gather_add transposes in its tangents only"), -1;
  for (int i = 0; i < w.n; i++)
    if (w.wd[i] != 1) {
      SrBuf b = SR_BUF_INIT;
      sr_ints_str(&b, w.wd, w.n);
      sr_raise(ad->I, "NotImplementedError",
               "VJP not implemented for select_and_gather (MaxPool) with window dilation, got window_dilation=%s.",
               sr_buf_str(&b));
      sr_buf_free(&b);
      return -1;
    }
  SrVal *op = x[1];
  int based = 0;
  for (int i = 0; i < w.n; i++) based |= w.bd[i] != 1;
  const SrType *xt = sr_ad_type(ad, op);
  if (!xt) return -1;
  if (based) {
    int64_t cfg[3 * SR_MAX_RANK];
    for (int i = 0; i < w.n; i++) cfg[3 * i] = cfg[3 * i + 1] = 0, cfg[3 * i + 2] = w.bd[i] - 1;
    double id = w.ge ? -INFINITY : INFINITY;
    SrVal *idv = sr_ad_scalar(ad, xt->dtype, 0, id);
    op = sr_ad_keep(ad, sr_op_pad(SR_AD_BINDER(ad), op, idv, cfg, w.n));
    if (!op) return -1;
  }
  SrVal *r = bind_ssa(ad, ct[0], op, &w, w.ge);
  if (r && based) {
    const SrType *rt = sr_ad_type(ad, r);
    int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK];
    for (int i = 0; i < w.n; i++) st[i] = 0, lim[i] = rt->dims[i].size;
    r = sr_ad_keep(ad, sr_op_slice(SR_AD_BINDER(ad), r, st, lim, w.bd));
  }
  cx[0] = r;
  return r ? 0 : -1;
}

/* ==== select_and_scatter_add ==== */

static int type_ssa(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *ts[2];
  sr_resolve_bare_literals(e, ts);
  const SrType *s = ts[0], *x = ts[1];
  Win w;
  const char *bad = read_win(sr_lax_get_rule, e, &w);
  if (bad) return sr_terr(cx, "TypeError", "select_and_scatter_add equation has no valid '%s' param", bad);
  if (w.n != w.nst) {
    SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
    sr_terr(cx, "TypeError",
            "select_and_scatter got inconsistent window_strides and window_dimensions: got window_strides %s and "
            "window_dimensions %s.",
            ints_s(&a, w.st, w.nst), ints_s(&b, w.win, w.n));
    sr_buf_free(&a);
    sr_buf_free(&b);
    return -1;
  }
  if (w.n != x->ndim || w.npad != x->ndim)
    return sr_terr(cx, "TypeError", "select_and_scatter_add's window does not fit its operand of rank %d", x->ndim);
  int64_t in[SR_MAX_RANK], want[SR_MAX_RANK];
  for (int i = 0; i < x->ndim; i++) in[i] = x->dims[i].size;
  win_shape(&w, in, want);
  int same = s->ndim == x->ndim;
  for (int i = 0; same && i < s->ndim; i++) same = s->dims[i].size == want[i];
  if (!same) return sr_terr(cx, "TypeError", "select_and_scatter_add's source does not have the shape of its windows");
  SrStd st;
  if (sr_std_begin(cx, e, &st) < 0 || sr_ur_none(cx, e, &st, 0) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, x);
  b.dtype = s->dtype;
  b.weak = s->weak;
  if (st.mode != SR_MODE_EXPLICIT)
    for (int i = 0; i < b.ndim; i++) b.dims[i].nax = 0;
  b.unreduced = b.reduced = 0;
  b.ukind = SR_UK_NONE;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

static int ev_ssa(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_win(cx, e, 2, 0); }

/* _select_and_scatter_add_jvp */
JVP(jvp_ssa) {
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0]) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *in[2] = {t[0], x[1]};
  ty[0] = sr_ad_bind_eqn1(ad, e, in);
  return ty[0] ? 0 : -1;
}

/* _select_and_scatter_add_transpose */
TR(tr_ssa) {
  Win w;
  if (read_eqn_win(ad, e, &w) < 0) return -1;
  if (!x[1] || x[0]) return sr_raise(ad->I, "ValueError", "select_and_scatter_add transposes in its source only"), -1;
  int64_t ones[SR_MAX_RANK];
  for (int i = 0; i < w.n; i++) ones[i] = 1;
  cx[0] = bind_sga(ad, ct[0], x[1], &w, w.ge, ones, ones);
  return cx[0] ? 0 : -1;
}

#undef TR

/* ==== batching (windowed_reductions.py's batch rules) ==== */

/* A unit window at dim k: size 1, stride 1, no padding, no dilation. */
static void win_insert(Win *w, int k) {
  int64_t *v[6] = {w->win, w->st, w->lo, w->hi, w->bd, w->wd};
  const int64_t unit[6] = {1, 1, 0, 0, 1, 1};
  for (int a = 0; a < 6; a++) {
    memmove(v[a] + k + 1, v[a] + k, (size_t)(w->n - k) * sizeof *v[a]);
    v[a][k] = unit[a];
  }
  w->n++;
  w->nst = w->npad = w->nbd = w->nwd = w->n;
}

static int win_batch_params(SrBatch *b, const SrEqn *e, Win *w, int k) {
  if (read_eqn_win(&b->ad, e, w) < 0) return -1;
  if (w->n >= SR_MAX_RANK) return sr_raise(b->ad.I, "ValueError", "%s: too many dimensions to batch", e->prim->name), -1;
  win_insert(w, k);
  return 0;
}

/* _reduce_window_batch_rule: a unit window at the batch dim, which stays */
static int batch_rw(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  Win w;
  if (win_batch_params(b, e, &w, bd[0]) < 0) return -1;
  y[0] = sr_batch_bind_with(b, e, 1, x, "window_dimensions", sr_int_tuple(w.win, w.n), "window_strides",
                            sr_int_tuple(w.st, w.n), "padding", sr_lax_pads_val(w.lo, w.hi, w.n), "base_dilation",
                            sr_int_tuple(w.bd, w.n), "window_dilation", sr_int_tuple(w.wd, w.n), NULL);
  ybd[0] = bd[0];
  return y[0] ? 0 : -1;
}

/* _select_and_gather_add_batching_rule and
   _select_and_scatter_add_batch_rule: both operands' batch dims to the
   front, a unit window there */
static int batch_select(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  Win w;
  if (win_batch_params(b, e, &w, 0) < 0) return -1;
  SrVal *in[2];
  for (int i = 0; i < 2; i++) in[i] = sr_batch_at_front(b, x[i], bd[i], b->size);
  if (!in[0] || !in[1]) return -1;
  if (e->prim == &sr_prims[SR_P_select_and_gather_add])
    y[0] = sr_batch_bind_with(b, e, 2, in, "window_dimensions", sr_int_tuple(w.win, w.n), "window_strides",
                              sr_int_tuple(w.st, w.n), "padding", sr_lax_pads_val(w.lo, w.hi, w.n), "base_dilation",
                              sr_int_tuple(w.bd, w.n), "window_dilation", sr_int_tuple(w.wd, w.n), NULL);
  else
    y[0] = sr_batch_bind_with(b, e, 2, in, "window_dimensions", sr_int_tuple(w.win, w.n), "window_strides",
                              sr_int_tuple(w.st, w.n), "padding", sr_lax_pads_val(w.lo, w.hi, w.n), NULL);
  ybd[0] = 0;
  return y[0] ? 0 : -1;
}

/* ==== reduce_window (lax.reduce_window with a computation of the user's) ==== */

/* reduce_window_p binds the operands, then one scalar init value per
 * operand, with the computation's jaxpr (the accumulators, then the
 * elements, to the new accumulators), its consts and the window params. */

static void dtype_list(SrBuf *b, const SrType *const *t, uint32_t n) {
  sr_buf_putc(b, '[');
  for (uint32_t k = 0; k < n; k++) sr_buf_printf(b, "%sdtype('%s')", k ? ", " : "", sr_dtype_name(t[k]->dtype));
  sr_buf_putc(b, ']');
}

/* _reduce_window_abstract_eval_rule */
static int type_rw_general(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  uint32_t n = e->nin / 2;
  if (e->nin == 0 || e->nin % 2)
    return sr_terr(cx, "TypeError", "reduce_window takes as many init values as operands, got %u inputs", e->nin);
  if (sr_rule_arity(cx, e, -1, (int)n) < 0) return -1;
  int rc = 0;
  SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
  for (uint32_t i = 0; i < n && !rc; i++)
    if (e->in[i]->dtype != e->in[n + i]->dtype) {
      dtype_list(&a, e->in, n);
      dtype_list(&b, e->in + n, n);
      rc = sr_terr(cx, "TypeError",
                   "reduce_window got inconsistent dtypes for operands and init_values: got operand dtypes %s and "
                   "init_value dtypes %s.",
                   sr_buf_str(&a), sr_buf_str(&b));
    }
  for (uint32_t i = 0; i < n && !rc; i++)
    if (e->in[n + i]->ndim != 0) {
      sr_buf_putc(&a, '[');
      for (uint32_t k = 0; k < n; k++) {
        if (k) sr_buf_puts(&a, ", ");
        sr_shape_str(&a, e->in[n + k]);
      }
      sr_buf_putc(&a, ']');
      rc = sr_terr(cx, "TypeError", "reduce_window expected init_values to be scalars but init_values have shapes %s.",
                   sr_buf_str(&a));
    }
  sr_buf_free(&a);
  sr_buf_free(&b);
  if (rc) return -1;
  Win w;
  const char *bad = read_win(sr_lax_get_rule, e, &w);
  if (bad) return sr_terr(cx, "TypeError", "reduce_window equation has no valid '%s' param", bad);
  int64_t shape[SR_MAX_RANK];
  if (common_shape(cx, e->in[0], &w, shape) < 0) return -1;
  for (uint32_t i = 0; i < n; i++) {
    if (e->in[i]->unreduced || e->in[i]->reduced)
      return sr_terr(cx, "NotImplementedError", "%s", ""); /* raised bare */
    if (finish_std(cx, e, e->in[i], shape, e->in[i]->ndim, &out[i]) < 0) return -1;
  }
  return 0;
}

/* XLA's ReduceWindow on the host: each result element starts at the init
   values and takes the jaxpr of the accumulators and the window's next
   elements, the window in row-major order; a position in the padding or
   between base-dilated elements is the init value. */
static int ev_rw_general(SrEvalCtx *cx, const SrEvalEqn *e) {
  uint32_t n = e->nin / 2;
  const SrJaxpr *j = sr_ev_param_jaxpr(e, "jaxpr");
  if (!j || sr_nargs(j) != 2 * n || j->nout != n)
    return sr_ev_err(cx, "TypeError", "reduce_window's jaxpr must take %u arguments and give %u results", 2 * n, n);
  Win w;
  const char *bad = read_win(sr_lax_get_ev, e, &w);
  if (bad) return sr_ev_err(cx, "TypeError", "reduce_window equation has no valid '%s' param", bad);
  const SrType *xt = e->in[0]->type, *ot = e->out_type[0];
  int nd = xt->ndim;
  int64_t total = sr_type_numel(xt), nres = sr_type_numel(ot), nwin = 1;
  for (int d = 0; d < nd; d++) nwin *= w.win[d];
  unsigned char **xs = sr_xcalloc(3 * (size_t)n, sizeof *xs), **acc = xs + n, **iv = xs + 2 * n;
  size_t *es = sr_xcalloc(n, sizeof *es);
  int rc = 0;
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    es[i] = sr_elem_size(e->in[i]->type->dtype);
    xs[i] = sr_xmalloc((size_t)total * es[i] + 1);
    acc[i] = sr_xmalloc((size_t)nres * es[i] + 1);
    iv[i] = sr_xmalloc(es[i] + 1);
    rc = sr_array_to_host(cx, e->in[i], xs[i]);
    if (rc == 0) rc = sr_array_to_host(cx, e->in[n + i], iv[i]);
  }
  unsigned char **pa = sr_xcalloc(2 * (size_t)n, sizeof *pa), **pe = pa + n;
  int64_t oi[SR_MAX_RANK] = {0};
  for (int64_t o = 0; rc == 0 && o < nres; o++) {
    for (uint32_t i = 0; i < n; i++) memcpy(acc[i] + (size_t)o * es[i], iv[i], es[i]);
    int64_t ki[SR_MAX_RANK] = {0};
    for (int64_t k = 0; rc == 0 && k < nwin; k++) {
      /* the window element's place in the operand, or -1 for the init value */
      int64_t flat = 0;
      for (int d = 0; d < nd && flat >= 0; d++) {
        int64_t pos = oi[d] * w.st[d] + ki[d] * w.wd[d] - w.lo[d];
        if (pos < 0 || pos % w.bd[d] || pos / w.bd[d] >= xt->dims[d].size) flat = -1;
        else flat = flat * xt->dims[d].size + pos / w.bd[d];
      }
      for (uint32_t i = 0; i < n; i++) {
        pa[i] = acc[i] + (size_t)o * es[i];
        pe[i] = flat < 0 ? iv[i] : xs[i] + (size_t)flat * es[i];
      }
      rc = sr_lax_reducer_step(cx, e, j, "reduce_window", pa, pe);
      for (int d = nd - 1; d >= 0 && ++ki[d] == w.win[d]; d--) ki[d] = 0;
    }
    for (int d = nd - 1; d >= 0 && ++oi[d] == ot->dims[d].size; d--) oi[d] = 0;
    if (rc == 0 && cx->I && (o & 255) == 255 && sr_interrupt_point(cx->I))
      rc = sr_ev_err(cx, "KeyboardInterrupt", "interrupted");
  }
  if (rc == 0) rc = sr_lax_host_outputs(cx, e, n, acc);
  for (uint32_t i = 0; i < 3 * n; i++) free(xs[i]);
  free(xs);
  free(es);
  free(pa);
  return rc;
}

static SrVal *win_params_bind(SrAd *ad, const SrEqn *e, int nin, SrVal **in, SrVal *jaxpr) {
  Win w;
  if (read_eqn_win(ad, e, &w) < 0) return NULL;
  SrVal *consts = sr_lax_get_eqn(e, "consts");
  return sr_ad_bindv(ad, SR_P_reduce_window, nin, in, "base_dilation", sr_int_tuple(w.bd, w.n), "consts",
                     consts ? sr_ref(consts) : sr_seq(NULL, SR_V_TUPLE, 0), "jaxpr", jaxpr, "padding",
                     sr_lax_pads_val(w.lo, w.hi, w.n), "window_dilation", sr_int_tuple(w.wd, w.n),
                     "window_dimensions", sr_int_tuple(w.win, w.n), "window_strides", sr_int_tuple(w.st, w.n), NULL);
}

/* reduce_window_jvp: the reduction of the primals and tangents side by
   side, its computation the computation's JVP with each side's primals
   and tangents together; tangents of the init values are not supported. */
JVP(jvp_rw_general) {
  SrInterp *I = ad->I;
  uint32_t n = e->nin / 2;
  for (uint32_t i = n; i < e->nin; i++)
    if (t[i]) return sr_raise(I, "TypeError", "reduce_window jvp does not support non-zero init_value_tangent."), -1;
  SrVal *jv = sr_lax_get_eqn(e, "jaxpr");
  const SrJaxpr *red = jv && jv->kind == SR_V_JAXPR ? jv->jx.jaxpr : NULL;
  if (!red || sr_nargs(red) != 2 * n) return sr_raise(I, "TypeError", "reduce_window: malformed jaxpr"), -1;
  uint8_t *nz = sr_xmalloc(4 * (size_t)n + 1), *out_nz = sr_xmalloc(2 * (size_t)n + 1);
  memset(nz, 1, 4 * (size_t)n + 1);
  SrJaxpr *jj = sr_ad_jvp_jaxpr(ad, red, nz, nz, out_nz);
  free(nz);
  free(out_nz);
  if (!jj) return -1;
  /* (left primals, left tangents, right primals, right tangents) in the
     order jvp_jaxpr takes them: (left, right primals; left, right tangents) */
  int *order = sr_xmalloc(4 * (size_t)n * sizeof *order);
  for (uint32_t i = 0; i < n; i++) {
    order[i] = (int)i;
    order[n + i] = (int)(2 * n + i);
    order[2 * n + i] = (int)(n + i);
    order[3 * n + i] = (int)(3 * n + i);
  }
  SrJaxpr *wj = sr_ad_permute(jj, order, NULL);
  free(order);
  if (!wj) return -1;
  SrVal **in = sr_xcalloc(4 * (size_t)n, sizeof *in);
  int rc = 0;
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    in[i] = x[i];
    in[n + i] = t[i] ? t[i] : sr_ad_zeros_staged(ad, sr_ad_type(ad, x[i]));
    in[2 * n + i] = x[n + i];
    in[3 * n + i] = sr_ad_zeros_staged(ad, sr_ad_type(ad, x[n + i]));
    if (!in[n + i] || !in[3 * n + i]) rc = -1;
  }
  SrVal *r = rc == 0 ? win_params_bind(ad, e, (int)(4 * n), in, sr_jaxpr_val(NULL, wj)) : NULL;
  sr_program_unref(wj->prog);
  free(in);
  if (!r) return -1;
  for (uint32_t i = 0; i < n; i++) {
    y[i] = r->seq.items[i];
    ty[i] = r->seq.items[n + i];
  }
  return 0;
}

/* _generic_reduce_window_batch_rule: the operands' batch dims to the
   front, a unit window there; batched init values are not supported. */
static int batch_rw_general(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  uint32_t n = e->nin / 2;
  for (uint32_t i = n; i < e->nin; i++)
    if (bd[i] != SR_NOT_MAPPED)
      return sr_raise(b->ad.I, "NotImplementedError", "reduce_window batching is not implemented for initial values"),
             -1;
  Win w;
  if (win_batch_params(b, e, &w, 0) < 0) return -1;
  SrVal **in = sr_xcalloc(e->nin, sizeof *in);
  for (uint32_t i = 0; i < e->nin; i++) in[i] = i < n ? sr_batch_at_front(b, x[i], bd[i], b->size) : x[i];
  SrVal *r = sr_batch_bind_with(b, e, (int)e->nin, in, "window_dimensions", sr_int_tuple(w.win, w.n),
                                "window_strides", sr_int_tuple(w.st, w.n), "padding", sr_lax_pads_val(w.lo, w.hi, w.n),
                                "base_dilation", sr_int_tuple(w.bd, w.n), "window_dilation", sr_int_tuple(w.wd, w.n),
                                NULL);
  free(in);
  if (!r) return -1;
  for (uint32_t i = 0; i < n; i++) {
    y[i] = r->seq.items[i];
    ybd[i] = 0;
  }
  return 0;
}

#undef JVP

/* ==== registration ==== */

void sr_lax_windowed_init(void) {
  int rw[3] = {SR_P_reduce_window_sum, SR_P_reduce_window_max, SR_P_reduce_window_min};
  for (int i = 0; i < 3; i++) sr_set_type_rule(rw[i], type_rw);
  sr_set_type_rule(SR_P_select_and_gather_add, type_sga);
  sr_set_type_rule(SR_P_select_and_scatter_add, type_ssa);
  sr_set_eval_rule(SR_P_reduce_window_sum, ev_rw_sum);
  sr_set_eval_rule(SR_P_reduce_window_max, ev_rw_max);
  sr_set_eval_rule(SR_P_reduce_window_min, ev_rw_min);
  sr_set_eval_rule(SR_P_select_and_gather_add, ev_sga);
  sr_set_eval_rule(SR_P_select_and_scatter_add, ev_ssa);
  sr_ad_set_jvp(SR_P_reduce_window_sum, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_reduce_window_sum, tr_rw_sum);
  sr_ad_set_jvp(SR_P_reduce_window_max, jvp_rw_chooser);
  sr_ad_set_jvp(SR_P_reduce_window_min, jvp_rw_chooser);
  sr_ad_set_jvp(SR_P_select_and_gather_add, jvp_sga);
  sr_ad_set_transpose(SR_P_select_and_gather_add, tr_sga);
  sr_ad_set_jvp(SR_P_select_and_scatter_add, jvp_ssa);
  sr_ad_set_transpose(SR_P_select_and_scatter_add, tr_ssa);
  for (int i = 0; i < 3; i++) sr_prims[rw[i]].batch = batch_rw;
  sr_set_type_rule(SR_P_reduce_window, type_rw_general);
  sr_set_eval_rule(SR_P_reduce_window, ev_rw_general);
  sr_ad_set_jvp(SR_P_reduce_window, jvp_rw_general);
  sr_prims[SR_P_reduce_window].batch = batch_rw_general;
  sr_prims[SR_P_select_and_gather_add].batch = batch_select;
  sr_prims[SR_P_select_and_scatter_add].batch = batch_select;
}

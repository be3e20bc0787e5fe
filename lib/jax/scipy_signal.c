/* scipy_signal.c: jax.scipy.signal's convolutions and detrend
 * (jax/_src/scipy/signal.py): convolve, correlate, convolve2d,
 * correlate2d, fftconvolve and detrend.
 *
 * Each is written with JAX's calls in JAX's order: _convolve_nd promotes
 * to an inexact dtype, flips the smaller operand (jnp.flip, a jit of rev)
 * and binds one conv_general_dilated on x[None, None]; correlate flips
 * in2.conj() first.  None of them is jitted in JAX, so their equations land
 * in the caller's jaxpr.  fftconvolve (and method='fft') multiplies the
 * operands' jnp.fft.rfftn (fftn for complex ones) at the full shape.
 * Registered by
 * sr_scipy_signal_init (jax.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/mem.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define KEEP(v) sr_nn_keep(s, v)
#define DONE(v) sr_nn_done(s, v)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define C1(q, x) sr_nn_call1(s, q, x)
#define INT(i) sr_nn_int(s, i)

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }

/* the shape of t as Python prints a tuple: (3,), (2, 3) */
static void shape_str(SrBuf *b, const SrType *t) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < t->ndim; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
  sr_buf_puts(b, t->ndim == 1 ? ",)" : ")");
}

/* x[key] (key a new reference), kept by the scope */
static SrVal *take_key(SrNnScope *s, SrVal *x, SrVal *key) {
  KEEP(key);
  return x ? KEEP(sr_getitem(s->I, x, key)) : NULL;
}

static int str_is(const SrVal *v, const char *w) {
  return v->kind == SR_V_STR && v->str.n == strlen(w) && memcmp(v->str.s, w, v->str.n) == 0;
}

/* mode as one of full, same, valid; NULL otherwise */
static const char *mode_of(SrVal *m, const char *dflt) {
  if (!m) return dflt;
  if (m->kind != SR_V_STR) return NULL;
  static const char *modes[3] = {"full", "same", "valid"};
  for (int i = 0; i < 3; i++)
    if (m->str.n == strlen(modes[i]) && memcmp(m->str.s, modes[i], m->str.n) == 0) return modes[i];
  return NULL;
}

/* _convolve_nd(in1, in2, mode, precision=precision) */
static SrVal *convolve_nd(SrNnScope *s, SrVal *in1, SrVal *in2, const char *mode, SrVal *precision) {
  SrInterp *I = s->I;
  if (!in1 || !in2) return NULL;
  if (!mode) return sr_raise(I, "ValueError", "mode must be one of ['full', 'same', 'valid']");
  const SrType *t1 = ty(I, in1), *t2 = ty(I, in2);
  if (t1->ndim != t2->ndim) return sr_raise(I, "ValueError", "in1 and in2 must have the same number of dimensions");
  int64_t n1 = 1, n2 = 1;
  for (int i = 0; i < t1->ndim; i++) n1 *= t1->dims[i].size, n2 *= t2->dims[i].size;
  if (n1 == 0 || n2 == 0) {
    SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
    shape_str(&a, t1);
    shape_str(&b, t2);
    sr_raise(I, "ValueError", "zero-size arrays not supported in convolutions, got shapes %s and %s.", a.p, b.p);
    sr_buf_free(&a);
    sr_buf_free(&b);
    return NULL;
  }
  SrVal *v[2] = {in1, in2};
  if (sr_nn_promote_inexact(s, 2, v, "convolve") < 0) return NULL;
  in1 = v[0], in2 = v[1];
  t1 = ty(I, in1), t2 = ty(I, in2);
  int nd = t1->ndim, no_swap = 1, swap = 1;
  for (int i = 0; i < nd; i++) {
    no_swap &= t1->dims[i].size >= t2->dims[i].size;
    swap &= t1->dims[i].size <= t2->dims[i].size;
  }
  if (!(no_swap || swap)) return sr_raise(I, "ValueError", "One input must be smaller than the other in every dimension.");
  int64_t shape_o[SR_MAX_RANK], shape[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) shape_o[i] = t2->dims[i].size;
  if (swap) {
    SrVal *t = in1;
    in1 = in2;
    in2 = t;
  }
  for (int i = 0; i < nd; i++) shape[i] = ty(I, in2)->dims[i].size;
  in2 = C1("jax.numpy.flip", in2);
  if (!in2) return NULL;
  SrVal *pad = KEEP(sr_seq(NULL, SR_V_LIST, nd));
  for (int i = 0; i < nd; i++) {
    int64_t lo, hi, k = shape[i], ko = shape_o[i];
    if (mode[0] == 'v') lo = hi = 0;
    else if (mode[0] == 's') lo = k - 1 - (ko - 1) / 2, hi = k - ko + (ko - 1) / 2;
    else lo = hi = k - 1;
    sr_seq_push(NULL, pad, sr_pair(sr_int(NULL, lo), sr_int(NULL, hi)));
  }
  int64_t ones[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) ones[i] = 1;
  SrVal *strides = KEEP(sr_int_tuple(ones, nd));
  SrVal *lhs = take_key(s, in1, sr_pair(sr_none(), sr_none()));
  SrVal *rhs = take_key(s, in2, sr_pair(sr_none(), sr_none()));
  if (!lhs || !rhs) return NULL;
  SrVal *args[4] = {lhs, rhs, strides, pad};
  const char *kw[1] = {"precision"};
  SrVal *kv[1] = {sr_nn_given(precision) ? precision : NULL};
  SrVal *r = sr_nn_call(s, "jax.lax.conv_general_dilated", 4, args, 1, kw, kv);
  return take_key(s, r, sr_pair(sr_int(NULL, 0), sr_int(NULL, 0)));
}

/* the operands as arrays (JAX reads in1.ndim, in1.shape of Arrays) */
static int arrays(SrNnScope *s, SrVal **p) {
  for (int i = 0; i < 2; i++)
    if (!(p[i] = KEEP(sr_jnp_asarray(s->I, p[i], -1)))) return -1;
  return 0;
}

/* ---- fftconvolve ---- */

static SrVal *int_tuple(SrNnScope *s, const int64_t *v, int n) { return KEEP(sr_int_tuple(v, n)); }

/* _fftconvolve_unbatched(in1, in2, mode): the product of the operands'
   n-d FFTs (rfftn for real ones) at the full shape, transformed back and
   sliced (lax.dynamic_slice) to mode's shape */
static SrVal *fftconv1(SrNnScope *s, SrVal *in1, SrVal *in2, const char *mode) {
  SrInterp *I = s->I;
  const SrType *a = ty(I, in1), *b = ty(I, in2);
  if (!a || !b) return NULL;
  int nd = a->ndim;
  int64_t full[SR_MAX_RANK], outs[SR_MAX_RANK], start[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) full[i] = a->dims[i].size + b->dims[i].size - 1;
  if (strcmp(mode, "valid") == 0) {
    int no_swap = 1, swap = 1;
    for (int i = 0; i < nd; i++) {
      no_swap &= a->dims[i].size >= b->dims[i].size;
      swap &= a->dims[i].size <= b->dims[i].size;
    }
    if (!no_swap && !swap)
      return sr_raise(I, "ValueError", "For 'valid' mode, One input must be at least as large as the other in every "
                                       "dimension.");
    if (swap) {
      SrVal *t = in1;
      in1 = in2, in2 = t;
      const SrType *tt = a;
      a = b, b = tt;
    }
  }
  int ones = 1;
  for (int i = 0; i < nd; i++) ones &= a->dims[i].size == 1 || b->dims[i].size == 1;
  SrVal *conv;
  if (ones) {
    conv = OP(MUL, in1, in2);
  } else {
    int cplx = sr_dtype_kind(a->dtype) == SR_DK_COMPLEX;
    SrVal *fs = int_tuple(s, full, nd);
    SrVal *s1 = sr_nn_call2(s, cplx ? "jax.numpy.fft.fftn" : "jax.numpy.fft.rfftn", in1, fs);
    SrVal *s2 = s1 ? sr_nn_call2(s, cplx ? "jax.numpy.fft.fftn" : "jax.numpy.fft.rfftn", in2, fs) : NULL;
    conv = s2 ? sr_nn_call2(s, cplx ? "jax.numpy.fft.ifftn" : "jax.numpy.fft.irfftn", OP(MUL, s1, s2), fs) : NULL;
  }
  if (!conv) return NULL;
  for (int i = 0; i < nd; i++) {
    outs[i] = mode[0] == 'f' ? full[i] : mode[0] == 's' ? a->dims[i].size : a->dims[i].size - b->dims[i].size + 1;
    start[i] = (full[i] - outs[i]) / 2;
  }
  SrVal *v[3] = {conv, int_tuple(s, start, nd), int_tuple(s, outs, nd)};
  return sr_nn_call(s, "jax.lax.dynamic_slice", 3, v, 0, NULL, NULL);
}

static SrVal *fftconv_call(SrInterp *I, SrArgs *a) {
  const char *mode = sr_current_builtin(I)->data;
  SCOPE(I);
  return DONE(fftconv1(s, a->v[0], a->v[1], mode));
}

/* fftconvolve(in1, in2, mode='full', axes=None): over the axes given,
   vmapped over the others */
static SrVal *fftconvolve(SrNnScope *s, SrVal *in1, SrVal *in2, const char *mode, SrVal *axes) {
  SrInterp *I = s->I;
  SrVal *p[2] = {in1, in2};
  if (sr_nn_promote_inexact(s, 2, p, "fftconvolve") < 0) return NULL;
  const SrType *a = ty(I, p[0]), *b = ty(I, p[1]);
  if (a->ndim != b->ndim) return sr_raise(I, "ValueError", "in1 and in2 should have the same dimensionality");
  if (!mode) return sr_raise(I, "ValueError", "mode must be one of ['same', 'full', 'valid']");
  if (!sr_nn_given(axes)) return fftconv1(s, p[0], p[1], mode);
  int64_t ax[SR_MAX_RANK];
  int nax = 0;
  if (sr_nn_axes(I, axes, a->ndim, ax, &nax) < 0) return NULL;
  int mapped[SR_MAX_RANK] = {0}, any = 0;
  for (int i = 0; i < a->ndim; i++) mapped[i] = 1;
  for (int k = 0; k < nax; k++) mapped[ax[k]] = 0;
  for (int i = 0; i < a->ndim; i++) any |= mapped[i] && a->dims[i].size != b->dims[i].size;
  if (any) {
    SrBuf m = SR_BUF_INIT;
    sr_buf_puts(&m, "mapped axes must have same shape; got in1.shape=");
    shape_str(&m, a);
    sr_buf_puts(&m, " in2.shape=");
    shape_str(&m, b);
    sr_buf_puts(&m, " axes=(");
    for (int k = 0; k < nax; k++) sr_buf_printf(&m, k ? ", %lld" : "%lld", (long long)ax[k]);
    sr_buf_puts(&m, nax == 1 ? ",)" : ")");
    sr_raise(I, "ValueError", "%s", sr_buf_str(&m));
    sr_buf_free(&m);
    return NULL;
  }
  SrVal *fn = KEEP(sr_builtin_with("_fftconvolve_unbatched", fftconv_call, (void *)mode, NULL));
  for (int i = 0; i < a->ndim; i++) {
    if (!mapped[i]) continue;
    const char *kw[2] = {"in_axes", "out_axes"};
    SrVal *kv[2] = {INT(i), INT(i)};
    fn = sr_nn_call(s, "jax.vmap", 1, &fn, 2, kw, kv);
    if (!fn) return NULL;
  }
  SrArgs ca = {2, p, 0, NULL, NULL, NULL};
  return KEEP(sr_call(I, fn, &ca));
}

static SrVal *sig_fftconvolve(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "fftconvolve", "in1, in2, mode=, axes=", p) < 0) return NULL;
  SCOPE(I);
  if (arrays(s, p) < 0) return DONE(NULL);
  return DONE(fftconvolve(s, p[0], p[1], mode_of(p[2], "full"), p[3]));
}

/* convolve's and correlate's method: 0 direct (or auto), 1 fft, -1 raised */
static int method_of(SrInterp *I, SrVal *m) {
  if (!m) return 0;
  if (str_is(m, "auto") || str_is(m, "direct")) return 0;
  if (str_is(m, "fft")) return 1;
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, m);
  sr_raise(I, "ValueError", "Got method=%s; expected 'auto', 'fft', or 'direct'.", sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

/* convolve(in1, in2, mode='full', method='auto', precision=None) and
   correlate: convolve(in1, jnp.flip(in2.conj()), ...) */
static SrVal *conv_or_corr(SrInterp *I, SrArgs *a, int correlate) {
  const char *name = correlate ? "correlate" : "convolve";
  SrVal *p[5];
  if (sr_args_parse(I, a, name, "in1, in2, mode=, method=, precision=", p) < 0) return NULL;
  SCOPE(I);
  if (arrays(s, p) < 0) return DONE(NULL);
  /* correlate: convolve(in1, jnp.flip(in2.conj()), ...) */
  if (correlate && !(p[1] = C1("jax.numpy.flip", C1("jax.numpy.conj", p[1])))) return DONE(NULL);
  int method = method_of(I, p[3]);
  if (method < 0) return DONE(NULL);
  if (method == 1) return DONE(fftconvolve(s, p[0], p[1], mode_of(p[2], "full"), NULL));
  return DONE(convolve_nd(s, p[0], p[1], mode_of(p[2], "full"), p[4]));
}

static SrVal *sig_convolve(SrInterp *I, SrArgs *a) { return conv_or_corr(I, a, 0); }
static SrVal *sig_correlate(SrInterp *I, SrArgs *a) { return conv_or_corr(I, a, 1); }

/* convolve2d's and correlate2d's checks: boundary='fill', fillvalue=0, 2-d */
static int check_2d(SrNnScope *s, SrVal **p, const char *name) {
  SrInterp *I = s->I;
  int fill = !p[3] || str_is(p[3], "fill");
  double fv = 0;
  if (p[4]) {
    if (sr_as_float(I, p[4], "fillvalue", &fv) < 0) return -1;
  }
  if (!fill || fv != 0) {
    sr_raise(I, "NotImplementedError", "%s() only supports boundary='fill', fillvalue=0", name);
    return -1;
  }
  if (arrays(s, p) < 0) return -1;
  if (ty(I, p[0])->ndim != 2 || ty(I, p[1])->ndim != 2) {
    sr_raise(I, "ValueError", "%s() only supports 2-dimensional inputs.", name);
    return -1;
  }
  return 0;
}

/* convolve2d(in1, in2, mode='full', boundary='fill', fillvalue=0, precision=None) */
static SrVal *sig_convolve2d(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "convolve2d", "in1, in2, mode=, boundary=, fillvalue=, precision=", p) < 0) return NULL;
  SCOPE(I);
  if (check_2d(s, p, "convolve2d") < 0) return DONE(NULL);
  return DONE(convolve_nd(s, p[0], p[1], mode_of(p[2], "full"), p[5]));
}

/* correlate2d: the input flipped around a convolution, which of the two
   by the mode and the shapes, as signal.py's correlate2d */
static SrVal *sig_correlate2d(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "correlate2d", "in1, in2, mode=, boundary=, fillvalue=, precision=", p) < 0) return NULL;
  SCOPE(I);
  if (check_2d(s, p, "correlate2d") < 0) return DONE(NULL);
  const SrType *t1 = ty(I, p[0]), *t2 = ty(I, p[1]);
  int swap = 1, same_shape = 1;
  for (int i = 0; i < 2; i++) {
    swap &= t1->dims[i].size <= t2->dims[i].size;
    same_shape &= t1->dims[i].size == t2->dims[i].size;
  }
  const char *mode = mode_of(p[2], "full");
  SrVal *r;
  int swapped = mode && mode[0] == 'v' ? swap && !same_shape : mode && mode[0] == 's' ? 0 : swap;
  if (swapped) {
    r = convolve_nd(s, C1("jax.numpy.flip", p[1]), p[0], mode, p[5]);
  } else {
    r = C1("jax.numpy.flip", convolve_nd(s, C1("jax.numpy.flip", p[0]), p[1], mode, p[5]));
  }
  return DONE(r);
}

/* ---- detrend ---- */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* detrend(data, axis=-1, type='linear', bp=0, overwrite_data=None) */
static SrVal *sig_detrend(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "detrend", "data, axis=, type=, bp=, overwrite_data=", p) < 0) return NULL;
  if (sr_nn_given(p[4])) return sr_raise(I, "NotImplementedError", "overwrite_data argument not implemented.");
  int constant = 0;
  if (p[2]) {
    if (str_is(p[2], "constant")) constant = 1;
    else if (!str_is(p[2], "linear"))
      return sr_raise(I, "ValueError", "Trend type must be 'linear' or 'constant'.");
  }
  SCOPE(I);
  SrVal *x = p[0];
  if (sr_nn_promote_inexact(s, 1, &x, "detrend") < 0) return DONE(NULL);
  SrVal *axis = p[1] ? p[1] : INT(-1);
  if (constant) {
    SrVal *v[2] = {x, axis};
    const char *kw[1] = {"keepdims"};
    SrVal *kv[1] = {KEEP(sr_bool(1))};
    return DONE(OP(SUB, x, sr_nn_call(s, "jax.numpy.mean", 2, v, 1, kw, kv)));
  }
  const SrType *t = ty(I, x);
  int64_t ax;
  if (axis->kind != SR_V_INT) return DONE(sr_raise(I, "TypeError", "detrend: axis must be an int"));
  ax = axis->i;
  if (ax < -t->ndim || ax >= t->ndim)
    return DONE(sr_raise(I, "IndexError", "tuple index out of range"));
  if (ax < 0) ax += t->ndim;
  int64_t N = t->dims[ax].size;
  /* bp_arr = np.sort(np.unique(np.r_[0, bp, N])) */
  int64_t bps[64];
  int nb = 0;
  bps[nb++] = 0;
  if (p[3]) {
    int64_t more[60];
    int nm;
    if (sr_ints_arg(I, p[3], more, &nm, "bp") < 0) return DONE(NULL);
    if (nm > 60) return DONE(sr_raise(I, "NotImplementedError", "detrend: at most 60 breakpoints"));
    for (int i = 0; i < nm; i++) bps[nb++] = more[i];
  }
  bps[nb++] = N;
  qsort(bps, (size_t)nb, sizeof *bps, cmp_i64);
  int u = 0;
  for (int i = 0; i < nb; i++)
    if (!u || bps[i] != bps[u - 1]) bps[u++] = bps[i];
  nb = u;
  if (bps[0] < 0 || bps[nb - 1] > N)
    return DONE(sr_raise(I, "ValueError",
                         "Breakpoints must be non-negative and less than length of data along given axis."));
  SrDtype dt = t->dtype;
  SrVal *dtv = KEEP(sr_dtype_val(NULL, dt));
  x = sr_nn_call3(s, "jax.numpy.moveaxis", x, INT(ax), INT(0));
  if (!x) return DONE(NULL);
  int64_t sh[SR_MAX_RANK];
  for (int i = 0; i < ty(I, x)->ndim; i++) sh[i] = ty(I, x)->dims[i].size;
  SrVal *shape = KEEP(sr_int_tuple(sh, ty(I, x)->ndim));
  x = sr_nn_call2(s, "jax.numpy.reshape", x, KEEP(sr_pair(sr_int(NULL, N), sr_int(NULL, -1))));
  for (int m = 0; m + 1 < nb && x; m++) {
    SrNnScope inner = {I, {0}, 0}, *s2 = &inner;
    int64_t npts = bps[m + 1] - bps[m];
    SrVal *n = sr_nn_keep(s2, sr_int(NULL, npts));
    const char *kwd[1] = {"dtype"};
    SrVal *ones = sr_nn_call(s2, "jax.numpy.ones", 1, &n, 1, kwd, &dtv);
    SrVal *ar[2] = {sr_nn_int(s2, 1), sr_nn_int(s2, npts + 1)};
    SrVal *rng = sr_nn_call(s2, "jax.numpy.arange", 2, ar, 1, kwd, &dtv);
    rng = sr_nn_op(s2, SR_OP_DIV, rng, sr_nn_typed_scalar(s2, (double)npts, dt));
    SrVal *rows = ones && rng ? sr_nn_keep(s2, sr_seq(NULL, SR_V_LIST, 2)) : NULL;
    if (rows) {
      sr_seq_push(NULL, rows, sr_ref(ones));
      sr_seq_push(NULL, rows, sr_ref(rng));
    }
    SrVal *A = rows ? sr_nn_call1(s2, "jax.numpy.vstack", rows) : NULL;
    A = A ? sr_nn_keep(s2, sr_getattr(I, A, "T")) : NULL;
    SrVal *sl = sr_nn_keep(s2, sr_slice_new(sr_int(NULL, bps[m]), sr_int(NULL, bps[m + 1]), sr_none()));
    SrVal *seg = A ? sr_nn_keep(s2, sr_getitem(I, x, sl)) : NULL;
    SrVal *res = seg ? sr_nn_call2(s2, "jax.numpy.linalg.lstsq", A, seg) : NULL;
    SrVal *coef = res ? sr_nn_keep(s2, sr_getitem(I, res, sr_nn_int(s2, 0))) : NULL;
    SrVal *mv[2] = {A, coef};
    SrVal *hi = sr_nn_keep(s2, sr_str(NULL, "highest", 7));
    const char *kwp[1] = {"precision"};
    SrVal *fit = coef ? sr_nn_call(s2, "jax.numpy.matmul", 2, mv, 1, kwp, &hi) : NULL;
    SrVal *neg = fit ? sr_nn_call1(s2, "jax.numpy.negative", fit) : NULL;
    /* data_arr.at[sl].add(-fit) */
    SrVal *at = neg ? sr_nn_keep(s2, sr_getattr(I, x, "at")) : NULL;
    SrVal *ix = at ? sr_nn_keep(s2, sr_getitem(I, at, sl)) : NULL;
    SrVal *add = ix ? sr_nn_keep(s2, sr_getattr(I, ix, "add")) : NULL;
    SrArgs aa = {1, &neg, 0, NULL, NULL, NULL};
    SrVal *nx = add ? sr_call(I, add, &aa) : NULL;
    sr_nn_done(s2, NULL);
    x = KEEP(nx);
  }
  x = x ? sr_nn_call2(s, "jax.numpy.reshape", x, shape) : NULL;
  return DONE(x ? sr_nn_call3(s, "jax.numpy.moveaxis", x, INT(0), INT(ax)) : NULL);
}

void sr_scipy_signal_init(void) {
  sr_def("jax.scipy.signal.convolve", sig_convolve,
         "convolve(in1, in2, mode='full', method='auto', precision=None): the N-d convolution (a "
         "conv_general_dilated; method='fft': fftconvolve)");
  sr_def("jax.scipy.signal.fftconvolve", sig_fftconvolve,
         "fftconvolve(in1, in2, mode='full', axes=None): the N-d convolution through jnp.fft (rfftn for real "
         "operands), vmapped over the axes not in axes");
  sr_def("jax.scipy.signal.correlate", sig_correlate,
         "correlate(in1, in2, mode='full', method='auto', precision=None): the N-d cross-correlation, "
         "convolve(in1, flip(in2.conj()))");
  sr_def("jax.scipy.signal.convolve2d", sig_convolve2d,
         "convolve2d(in1, in2, mode='full', boundary='fill', fillvalue=0, precision=None): the 2-d convolution");
  sr_def("jax.scipy.signal.correlate2d", sig_correlate2d,
         "correlate2d(in1, in2, mode='full', boundary='fill', fillvalue=0, precision=None): the 2-d "
         "cross-correlation");
  sr_def("jax.scipy.signal.detrend", sig_detrend,
         "detrend(data, axis=-1, type='linear', bp=0, overwrite_data=None): data less its least-squares linear "
         "(piecewise at bp) or constant trend");
}

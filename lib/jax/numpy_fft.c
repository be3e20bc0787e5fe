/* numpy_fft.c: jax.lax.fft and jax.numpy.fft (jax/_src/lax/fft.py's
 * fft, a jit with static fft_type and fft_lengths; jax/_src/numpy/fft.py,
 * whose functions are not jitted, so their equations land in the
 * caller's jaxpr around a `jit[name=fft]` per transform).
 *
 * Each function is written with JAX's calls in JAX's order: _fft_core
 * (ensure_arraylike, the s= and axes= checks, moveaxis to the minor
 * dims, cropping by indexing and padding with jnp.pad, _fft_core_nd's
 * transforms of at most three dims each, the norm as a product with
 * _fft_norm's array, moveaxis back), the 1-d and 2-d fronts, hfft/ihfft,
 * fftfreq/rfftfreq and fftshift/ifftshift (jnp.roll).  lax.FftType's
 * members are the ints of JAX's IntEnum (FFT 0 .. IRFFT 3, printed as JAX
 * prints the param).  The file also fills sr_lax_fft_hooks: the jits
 * that fft's transpose and batching rules call (lax/fft.c).  Registered
 * by sr_jnp_fft_init (jax.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "exec/kern_fft.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/np_host.h"
#include "jax/numpy.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/intern.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define KEEP(v) sr_nn_keep(s, v)
#define DONE(v) sr_nn_done(s, v)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define C1(q, x) sr_nn_call1(s, q, x)
#define INT(i) sr_nn_int(s, i)

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }

/* ==== lax.fft ==== */

typedef struct FftJit {
  int type, n;
  int64_t len[SR_MAX_RANK];
} FftJit;

/* dtypes.to_inexact_dtype and to_complex_dtype */
static SrDtype to_inexact(SrInterp *I, SrDtype d) {
  if (sr_dtype_is_inexact(d)) return d;
  return I->jax->enable_x64 ? SR_F64 : SR_F32;
}
static SrDtype to_complex(SrInterp *I, SrDtype d) {
  SrDtype f = to_inexact(I, d);
  return f == SR_F64 || f == SR_C128 ? SR_C128 : SR_C64;
}

/* the body of lax.fft's jit */
static SrVal *fft_body(SrInterp *I, SrArgs *a) {
  FftJit *d = sr_current_builtin(I)->data;
  SrVal *x = a->v[0];
  SrDtype dt = ty(I, x)->dtype, to;
  if (d->type == SR_FFT_RFFT) {
    if (sr_dtype_kind(dt) == SR_DK_COMPLEX) return sr_raise(I, "ValueError", "only real valued inputs supported for rfft");
    to = to_inexact(I, dt);
  } else {
    to = to_complex(I, dt);
  }
  SrVal *c = sr_lax_convert(I, x, to, 0, NULL);
  if (!c || d->n == 0) return c;
  SrVal *r = sr_bindv(I, SR_P_fft, 1, &c, "fft_type", sr_int(NULL, d->type), "fft_lengths",
                      sr_int_tuple(d->len, d->n), NULL);
  sr_unref(c);
  return r;
}

/* lax.fft(x, fft_type, fft_lengths) on an array x: the jit named fft (a
   new reference). */
static SrVal *lax_fft_call(SrInterp *I, SrVal *x, int type, const int64_t *len, int n) {
  FftJit *d = sr_xcalloc(1, sizeof *d);
  d->type = type;
  d->n = n;
  memcpy(d->len, len, sizeof(int64_t) * (size_t)n);
  return sr_api_jit(I, "fft", fft_body, d, 1, &x);
}

static int str_is(const SrVal *v, const char *w) {
  return v->kind == SR_V_STR && v->str.n == strlen(w) && memcmp(v->str.s, w, v->str.n) == 0;
}

/* _str_to_fft_type, or an FftType member (an int here) */
static int fft_type_arg(SrInterp *I, SrVal *v) {
  if (v->kind == SR_V_STR) {
    static const char *const names[4][2] = {{"fft", "FFT"}, {"ifft", "IFFT"}, {"rfft", "RFFT"}, {"irfft", "IRFFT"}};
    for (int t = 0; t < 4; t++)
      if (str_is(v, names[t][0]) || str_is(v, names[t][1])) return t;
    sr_raise(I, "ValueError", "Unknown FFT type '%.*s'", (int)v->str.n, v->str.s);
    return -1;
  }
  if (v->kind == SR_V_INT && v->i >= 0 && v->i <= 3) return (int)v->i;
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  sr_raise(I, "TypeError", "Unknown FFT type value '%s'", sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

static SrVal *bi_lax_fft(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "fft", "x, fft_type, fft_lengths", p) < 0) return NULL;
  int type = fft_type_arg(I, p[1]);
  if (type < 0) return NULL;
  int64_t len[SR_MAX_RANK];
  int n = 0;
  if (sr_ints_arg(I, p[2], len, &n, "fft_lengths") < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrVal *r = lax_fft_call(I, x, type, len, n);
  sr_unref(x);
  return r;
}

/* ==== the jits of fft's transpose rules (lax/fft.c's hooks) ==== */

/* lax.full_like(t, v, shape=(m,)[, dtype=dt]) */
static SrVal *full_vec(SrNnScope *s, SrVal *t, double v, int64_t m, int dt) {
  SrVal *args[2] = {t, sr_nn_float(s, v)};
  const char *kw[2] = {"shape", "dtype"};
  SrVal *kv[2] = {KEEP(sr_int_tuple(&m, 1)), dt >= 0 ? KEEP(sr_dtype_val(NULL, (SrDtype)dt)) : NULL};
  return sr_nn_call(s, "jax.lax.full_like", 2, args, 2, kw, kv);
}

/* the mask of _rfft_transpose and _irfft_transpose: 2 but 1 at the zero
   frequency and, for an even length, at the last */
static SrVal *fft_mask(SrNnScope *s, SrVal *t, int64_t m, int odd, int dt) {
  SrVal *mask = full_vec(s, t, 2.0, m, dt);
  SrVal *args[3] = {mask, full_vec(s, t, 1.0, 1, dt), KEEP(sr_int_tuple((int64_t[]){0}, 1))};
  mask = args[0] && args[1] ? sr_nn_call(s, "jax.lax.dynamic_update_slice", 3, args, 0, NULL, NULL) : NULL;
  if (!odd && mask) {
    SrVal *a2[3] = {mask, full_vec(s, t, 1.0, 1, dt), KEEP(sr_int_tuple((int64_t[]){m - 1}, 1))};
    mask = a2[1] ? sr_nn_call(s, "jax.lax.dynamic_update_slice", 3, a2, 0, NULL, NULL) : NULL;
  }
  return mask;
}

/* lax.expand_dims(x, range(k)) */
static SrVal *expand_lead(SrNnScope *s, SrVal *x, int k) {
  int64_t d[SR_MAX_RANK];
  for (int i = 0; i < k; i++) d[i] = i;
  return x ? sr_nn_call2(s, "jax.lax.expand_dims", x, KEEP(sr_int_tuple(d, k))) : NULL;
}

typedef struct LenData {
  int n;
  int64_t len[SR_MAX_RANK];
} LenData;

/* _rfft_transpose's body (a jit with static fft_lengths) */
static SrVal *rfft_transpose_body(SrInterp *I, SrArgs *a) {
  LenData *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *t = a->v[0];
  const SrType *tt = ty(I, t);
  int64_t n = d->len[d->n - 1], m = tt->dims[tt->ndim - 1].size, N = 1;
  for (int i = 0; i < d->n; i++) N *= d->len[i];
  SrVal *mask = expand_lead(s, fft_mask(s, t, m, (int)(n % 2), -1), tt->ndim - 1);
  SrVal *q = mask ? OP(DIV, C1("jax.lax.conj", t), mask) : NULL;
  SrVal *f = q ? KEEP(lax_fft_call(I, q, SR_FFT_IRFFT, d->len, d->n)) : NULL;
  return DONE(f ? OP(MUL, INT(N), f) : NULL);
}

static SrVal *rfft_transpose_hook(SrInterp *I, SrVal *t, const int64_t *len, int n) {
  LenData *d = sr_xcalloc(1, sizeof *d);
  d->n = n;
  memcpy(d->len, len, sizeof(int64_t) * (size_t)n);
  return sr_api_jit(I, "_rfft_transpose", rfft_transpose_body, d, 1, &t);
}

/* _irfft_transpose (no jit of its own) */
static SrVal *irfft_transpose_hook(SrInterp *I, SrVal *t, const int64_t *len, int n) {
  SCOPE(I);
  SrVal *x = KEEP(lax_fft_call(I, t, SR_FFT_RFFT, len, n));
  if (!x) return DONE(NULL);
  const SrType *xt = ty(I, x);
  int64_t m = xt->dims[xt->ndim - 1].size, N = 1;
  for (int i = 0; i < n; i++) N *= len[i];
  SrVal *mask = fft_mask(s, t, m, (int)(len[n - 1] % 2), xt->dtype);
  SrVal *out = mask ? OP(MUL, OP(MUL, sr_nn_float(s, 1.0 / (double)N), expand_lead(s, mask, xt->ndim - 1)), x) : NULL;
  return DONE(out ? C1("jax.lax.conj", out) : NULL);
}

/* ==== jax.numpy.fft ==== */

/* ensure_arraylike(name, v) */
static SrVal *arraylike(SrNnScope *s, const char *name, SrVal *v) {
  if (!(v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL || v->kind == SR_V_COMPLEX ||
        sr_array_of(v) || sr_is_ndarray(v)))
    return sr_raise(s->I, "TypeError", "%s requires ndarray or scalar arguments, got <class '%s'> at position 0.", name,
                    sr_val_kind_name(v));
  return KEEP(sr_jnp_asarray(s->I, v, -1));
}

static SrVal *int_list(SrNnScope *s, const int64_t *v, int n) {
  SrVal *l = KEEP(sr_seq(NULL, SR_V_LIST, n));
  for (int i = 0; i < n; i++) sr_seq_push(NULL, l, sr_int(NULL, v[i]));
  return l;
}

/* _fft_core_nd */
static SrVal *fft_core_nd(SrNnScope *s, SrVal *arr, int type, const int64_t *sz, int ns) {
  SrInterp *I = s->I;
  if (!arr) return NULL;
  if (ns <= 3) return KEEP(lax_fft_call(I, arr, type, sz, ns));
  int k = ns == 4 ? 2 : 3, nd = ty(I, arr)->ndim;
  int64_t src[SR_MAX_RANK], dst[SR_MAX_RANK];
  int nm = ns - k;
  for (int i = 0; i < nm; i++) src[i] = nd - ns + i, dst[i] = nd - ns + k + i;
  SrVal *sv = KEEP(sr_int_tuple(src, nm)), *dv = KEEP(sr_int_tuple(dst, nm));
  SrVal *args[3];
  if (type == SR_FFT_RFFT || type == SR_FFT_FFT) {
    arr = KEEP(lax_fft_call(I, arr, type, sz + nm, k));
    args[0] = arr, args[1] = sv, args[2] = dv;
    arr = arr ? sr_nn_call(s, "jax.numpy.moveaxis", 3, args, 0, NULL, NULL) : NULL;
    arr = fft_core_nd(s, arr, SR_FFT_FFT, sz, nm);
    args[0] = arr, args[1] = dv, args[2] = sv;
    return arr ? sr_nn_call(s, "jax.numpy.moveaxis", 3, args, 0, NULL, NULL) : NULL;
  }
  args[0] = arr, args[1] = sv, args[2] = dv;
  arr = sr_nn_call(s, "jax.numpy.moveaxis", 3, args, 0, NULL, NULL);
  arr = fft_core_nd(s, arr, SR_FFT_IFFT, sz, nm);
  args[0] = arr, args[1] = dv, args[2] = sv;
  arr = arr ? sr_nn_call(s, "jax.numpy.moveaxis", 3, args, 0, NULL, NULL) : NULL;
  return arr ? KEEP(lax_fft_call(I, arr, type, sz + nm, k)) : NULL;
}

/* _fft_norm(jnp.array(s, dtype), func_name, norm) */
static SrVal *fft_norm(SrNnScope *s, SrVal *sarr, const char *func, SrVal *norm) {
  SrInterp *I = s->I;
  if (!sarr) return NULL;
  if (str_is(norm, "backward")) return C1("jax.numpy.array", INT(1));
  int inv = func[0] == 'i';
  if (str_is(norm, "ortho")) {
    SrVal *r = C1("jax.numpy.sqrt", C1("jax.numpy.prod", sarr));
    return inv ? r : OP(DIV, INT(1), r);
  }
  if (str_is(norm, "forward")) {
    SrVal *r = C1("jax.numpy.prod", sarr);
    return inv ? r : OP(DIV, INT(1), r);
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, norm);
  sr_raise(I, "ValueError", "Invalid norm value %s; should be \"backward\",\"ortho\" or \"forward\".", sr_buf_str(&b));
  sr_buf_free(&b);
  return NULL;
}

/* _fft_core(func_name, fft_type, a, s, axes, norm); sv and axesv NULL or
   None for None */
static SrVal *fft_core(SrNnScope *s, const char *func, int type, SrVal *a, SrVal *sv, SrVal *axesv, SrVal *norm) {
  SrInterp *I = s->I;
  char full[64];
  snprintf(full, sizeof full, "jax.numpy.fft.%s", func);
  SrVal *arr = arraylike(s, full, a);
  if (!arr) return NULL;
  int64_t sz[SR_MAX_RANK], axes[SR_MAX_RANK];
  int ns = 0, nax = 0, has_s = sr_nn_given(sv), has_axes = sr_nn_given(axesv);
  if (has_s) {
    if (sr_ints_arg(I, sv, sz, &ns, "s") < 0) return NULL;
    for (int i = 0; i < ns; i++)
      if (sz[i] <= 0) return sr_raise(I, "ValueError", "Shape should be positive.");
  }
  if (has_axes && sr_ints_arg(I, axesv, axes, &nax, "axes") < 0) return NULL;
  if (has_s && has_axes && ns != nax) return sr_raise(I, "ValueError", "Shape and axes have different lengths.");
  int nd = ty(I, arr)->ndim;
  if (!has_axes) {
    int from = has_s ? nd - ns : 0;
    nax = nd - from;
    for (int i = 0; i < nax; i++) axes[i] = from + i;
  }
  for (int i = 0; i < nax; i++)
    for (int j = 0; j < i; j++)
      if (axes[i] == axes[j]) {
        SrBuf b = SR_BUF_INIT;
        sr_val_str(&b, axesv);
        sr_raise(I, "ValueError", "%s does not support repeated axes. Got axes %s.", full, sr_buf_str(&b));
        sr_buf_free(&b);
        return NULL;
      }
  SrVal *canon = NULL;
  if (has_axes) {
    for (int i = 0; i < nax; i++) axes[i] = nd - nax + i;
    canon = KEEP(sr_int_tuple(axes, nax));
    SrVal *args[3] = {arr, axesv, canon};
    if (!(arr = sr_nn_call(s, "jax.numpy.moveaxis", 3, args, 0, NULL, NULL))) return NULL;
  }
  const SrType *at = ty(I, arr);
  if (has_s) {
    int64_t in_s[SR_MAX_RANK];
    for (int i = 0; i < nd; i++) in_s[i] = at->dims[i].size;
    for (int i = 0; i < ns && i < nax; i++) {
      int64_t ax = axes[i] < 0 ? axes[i] + nd : axes[i];
      if (ax < 0 || ax >= nd) return sr_raise(I, "IndexError", "list assignment index out of range");
      in_s[ax] = sz[i];
    }
    if (type == SR_FFT_IRFFT && nd) in_s[nd - 1] = in_s[nd - 1] / 2 + 1;
    SrVal *key = KEEP(sr_seq(NULL, SR_V_TUPLE, nd));
    for (int i = 0; i < nd; i++) sr_seq_push(NULL, key, sr_slice_new(sr_none(), sr_int(NULL, in_s[i]), sr_none()));
    if (!(arr = KEEP(sr_getitem(I, arr, key)))) return NULL;
    at = ty(I, arr);
    SrVal *pads = KEEP(sr_seq(NULL, SR_V_LIST, nd));
    for (int i = 0; i < nd; i++) sr_seq_push(NULL, pads, sr_pair(sr_int(NULL, 0), sr_int(NULL, in_s[i] - at->dims[i].size)));
    if (!(arr = sr_nn_call2(s, "jax.numpy.pad", arr, pads))) return NULL;
  } else {
    ns = nax;
    for (int i = 0; i < nax; i++) sz[i] = at->dims[axes[i]].size;
    if (type == SR_FFT_IRFFT && nax) {
      int64_t last = 2 * (at->dims[axes[nax - 1]].size - 1);
      sz[nax - 1] = last > 0 ? last : 0;
    }
  }
  SrVal *tr = fft_core_nd(s, arr, type, sz, ns);
  if (!tr) return NULL;
  if (sr_nn_given(norm)) {
    const char *kw[1] = {"dtype"};
    SrVal *lst = int_list(s, sz, ns);
    SrVal *kv[1] = {KEEP(sr_dtype_val(NULL, ty(I, tr)->dtype))};
    SrVal *sarr = sr_nn_call(s, "jax.numpy.array", 1, &lst, 1, kw, kv);
    tr = OP(MUL, tr, fft_norm(s, sarr, func, norm));
    if (!tr) return NULL;
  }
  if (has_axes) {
    SrVal *args[3] = {tr, canon, axesv};
    tr = sr_nn_call(s, "jax.numpy.moveaxis", 3, args, 0, NULL, NULL);
  }
  return tr;
}

/* _axis_check_1d */
static int axis_check_1d(SrInterp *I, const char *func, SrVal *axis) {
  if (axis && (axis->kind == SR_V_LIST || axis->kind == SR_V_TUPLE)) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, axis);
    sr_raise(I, "ValueError", "jax.numpy.fft.%s does not support multiple axes. Please use jax.numpy.fft.%sn. Got axis = %s.",
             func, func, sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  return 0;
}

/* _fft_core_1d(func_name, fft_type, a, n, axis, norm) */
static SrVal *fft_core_1d(SrNnScope *s, const char *func, int type, SrVal *a, SrVal *n, SrVal *axis, SrVal *norm) {
  if (axis_check_1d(s->I, func, axis) < 0) return NULL;
  SrVal *axes = NULL, *sv = NULL;
  if (sr_nn_given(axis)) {
    axes = KEEP(sr_seq(NULL, SR_V_LIST, 1));
    sr_seq_push(NULL, axes, sr_ref(axis));
  }
  if (sr_nn_given(n)) {
    sv = KEEP(sr_seq(NULL, SR_V_LIST, 1));
    sr_seq_push(NULL, sv, sr_ref(n));
  }
  return fft_core(s, func, type, a, sv, axes, norm);
}

/* axis=-1 when absent */
static SrVal *axis_or_last(SrNnScope *s, SrVal *axis) { return axis ? axis : INT(-1); }

#define FFT_1D(cname, func, type)                                                                  \
  static SrVal *cname(SrInterp *I, SrArgs *a) {                                                    \
    SrVal *p[4];                                                                                   \
    if (sr_args_parse(I, a, func, "a, n=, axis=, norm=", p) < 0) return NULL;                      \
    SCOPE(I);                                                                                      \
    return DONE(fft_core_1d(s, func, type, p[0], p[1], axis_or_last(s, p[2]), p[3]));              \
  }
FFT_1D(np_fft, "fft", SR_FFT_FFT)
FFT_1D(np_ifft, "ifft", SR_FFT_IFFT)
FFT_1D(np_rfft, "rfft", SR_FFT_RFFT)
FFT_1D(np_irfft, "irfft", SR_FFT_IRFFT)

#define FFT_ND(cname, func, type)                                                                  \
  static SrVal *cname(SrInterp *I, SrArgs *a) {                                                    \
    SrVal *p[4];                                                                                   \
    if (sr_args_parse(I, a, func, "a, s=, axes=, norm=", p) < 0) return NULL;                      \
    SCOPE(I);                                                                                      \
    return DONE(fft_core(s, func, type, p[0], p[1], p[2], p[3]));                                  \
  }
FFT_ND(np_fftn, "fftn", SR_FFT_FFT)
FFT_ND(np_ifftn, "ifftn", SR_FFT_IFFT)
FFT_ND(np_rfftn, "rfftn", SR_FFT_RFFT)
FFT_ND(np_irfftn, "irfftn", SR_FFT_IRFFT)

/* _fft_core_2d: axes default (-2, -1), exactly two */
static SrVal *fft_2d(SrInterp *I, SrArgs *a, const char *func, int type) {
  SrVal *p[4];
  if (sr_args_parse(I, a, func, "a, s=, axes=, norm=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *axes = p[2];
  if (!axes) axes = KEEP(sr_int_tuple((int64_t[]){-2, -1}, 2));
  int64_t ax[SR_MAX_RANK];
  int n = 0;
  if (sr_nn_given(axes) && sr_ints_arg(I, axes, ax, &n, "axes") < 0) return DONE(NULL);
  if (!sr_nn_given(axes) || n != 2) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, axes);
    sr_raise(I, "ValueError", "jax.numpy.fft.%s only supports 2 axes. Got axes = %s.", func, sr_buf_str(&b));
    sr_buf_free(&b);
    return DONE(NULL);
  }
  return DONE(fft_core(s, func, type, p[0], p[1], axes, p[3]));
}
static SrVal *np_fft2(SrInterp *I, SrArgs *a) { return fft_2d(I, a, "fft2", SR_FFT_FFT); }
static SrVal *np_ifft2(SrInterp *I, SrArgs *a) { return fft_2d(I, a, "ifft2", SR_FFT_IFFT); }
static SrVal *np_rfft2(SrInterp *I, SrArgs *a) { return fft_2d(I, a, "rfft2", SR_FFT_RFFT); }
static SrVal *np_irfft2(SrInterp *I, SrArgs *a) { return fft_2d(I, a, "irfft2", SR_FFT_IRFFT); }

/* The length along axis of x (Python's negative indexing), or -1 with
   JAX's IndexError. */
static int64_t axis_len(SrInterp *I, SrVal *x, SrVal *axis) {
  int64_t ax;
  if (sr_as_int(I, axis, "axis", &ax) < 0) return -1;
  const SrType *t = ty(I, x);
  if (ax < 0) ax += t->ndim;
  if (ax < 0 || ax >= t->ndim) {
    sr_raise(I, "IndexError", "tuple index out of range");
    return -1;
  }
  return t->dims[ax].size;
}

/* hfft: irfft of conj(a), times the output length */
static SrVal *np_hfft(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "hfft", "a, n=, axis=, norm=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *conj_a = C1("jax.numpy.conj", p[0]);
  SrVal *axis = axis_or_last(s, p[2]);
  if (!conj_a || axis_check_1d(I, "hfft", axis) < 0) return DONE(NULL);
  int64_t nn;
  if (sr_nn_given(p[1])) {
    if (sr_as_int(I, p[1], "n", &nn) < 0) return DONE(NULL);
  } else {
    int64_t l = axis_len(I, conj_a, axis);
    if (l < 0) return DONE(NULL);
    nn = (l - 1) * 2;
  }
  SrVal *r = fft_core_1d(s, "hfft", SR_FFT_IRFFT, conj_a, p[1], axis, p[3]);
  return DONE(r ? OP(MUL, r, INT(nn)) : NULL);
}

/* ihfft: conj(rfft(a)) / n */
static SrVal *np_ihfft(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "ihfft", "a, n=, axis=, norm=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *axis = axis_or_last(s, p[2]);
  if (axis_check_1d(I, "ihfft", axis) < 0) return DONE(NULL);
  SrVal *arr = C1("jax.numpy.asarray", p[0]);
  if (!arr) return DONE(NULL);
  int64_t nn;
  if (sr_nn_given(p[1])) {
    if (sr_as_int(I, p[1], "n", &nn) < 0) return DONE(NULL);
  } else if ((nn = axis_len(I, arr, axis)) < 0) {
    return DONE(NULL);
  }
  SrVal *out = fft_core_1d(s, "ihfft", SR_FFT_RFFT, arr, p[1], axis, p[3]);
  return DONE(out ? OP(MUL, C1("jax.numpy.conj", out), sr_nn_float(s, 1.0 / (double)nn)) : NULL);
}

/* fftfreq's and rfftfreq's checks of n and d */
static int freq_args(SrInterp *I, const char *func, SrVal *n, SrVal *d) {
  SrBuf b = SR_BUF_INIT;
  int bad_n = n->kind == SR_V_LIST || n->kind == SR_V_TUPLE, bad_d = d && (d->kind == SR_V_LIST || d->kind == SR_V_TUPLE);
  if (!bad_n && !bad_d) return 0;
  SrVal *v = bad_n ? n : d;
  /* list(v) */
  SrVal *l = sr_seq(NULL, SR_V_LIST, v->seq.n);
  for (int i = 0; i < v->seq.n; i++) sr_seq_push(NULL, l, sr_ref(v->seq.items[i]));
  sr_val_repr(&b, l);
  sr_unref(l);
  if (bad_n)
    sr_raise(I, "ValueError", "The n argument of jax.numpy.fft.%s only takes an int. Got n = %s.", func, sr_buf_str(&b));
  else
    sr_raise(I, "ValueError", "The d argument of jax.numpy.fft.%s only takes a single value. Got d = %s.", func,
             sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

/* jnp.array(d * n, dtype=dtype) */
static SrVal *dn_array(SrNnScope *s, SrVal *d, SrVal *n, SrVal *dtv) {
  SrVal *dn = OP(MUL, d, n);
  const char *kw[1] = {"dtype"};
  SrVal *kv[1] = {dtv};
  return dn ? sr_nn_call(s, "jax.numpy.array", 1, &dn, 1, kw, kv) : NULL;
}

/* jnp.arange(start, stop, dtype=dt) */
static SrVal *arange(SrNnScope *s, int64_t start, int64_t stop, SrVal *dtv, int two) {
  SrVal *args[2] = {INT(two ? start : stop), INT(stop)};
  const char *kw[1] = {"dtype"};
  SrVal *kv[1] = {dtv};
  return sr_nn_call(s, "jax.numpy.arange", two ? 2 : 1, args, 1, kw, kv);
}

static SrVal *np_fftfreq(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "fftfreq", "n, d=, *, dtype=, device=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *d = p[1] ? p[1] : sr_nn_float(s, 1.0);
  if (freq_args(I, "fftfreq", p[0], d) < 0) return DONE(NULL);
  int dt = I->jax->enable_x64 ? SR_F64 : SR_F32;
  if (sr_nn_given(p[2]) && sr_dtype_arg(I, p[2], &dt, "dtype") < 0) return DONE(NULL);
  SrDtype out_dt = (SrDtype)dt, rdt = to_inexact(I, (SrDtype)dt);
  if (rdt == SR_C64) rdt = SR_F32;
  if (rdt == SR_C128) rdt = SR_F64;
  int64_t n;
  if (sr_as_int(I, p[0], "n", &n) < 0) return DONE(NULL);
  SrVal *dtv = KEEP(sr_dtype_val(NULL, rdt));
  SrVal *i = arange(s, 0, n, dtv, 0);
  SrVal *k = OP(SUB, OP(MOD, OP(ADD, i, INT(sr_lax_floordiv(n, 2))), INT(n)), INT(sr_lax_floordiv(n, 2)));
  SrVal *ka = k ? sr_nn_call2(s, "jax.numpy.astype", k, dtv) : NULL;
  SrVal *r = ka ? OP(DIV, ka, dn_array(s, d, p[0], dtv)) : NULL;
  return DONE(r ? sr_nn_call2(s, "jax.numpy.astype", r, KEEP(sr_dtype_val(NULL, out_dt))) : NULL);
}

static SrVal *np_rfftfreq(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "rfftfreq", "n, d=, *, dtype=, device=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *d = p[1] ? p[1] : sr_nn_float(s, 1.0);
  if (freq_args(I, "rfftfreq", p[0], d) < 0) return DONE(NULL);
  int dt = I->jax->enable_x64 ? SR_F64 : SR_F32;
  if (sr_nn_given(p[2]) && sr_dtype_arg(I, p[2], &dt, "dtype") < 0) return DONE(NULL);
  int64_t n;
  if (sr_as_int(I, p[0], "n", &n) < 0) return DONE(NULL);
  SrVal *dtv = KEEP(sr_dtype_val(NULL, (SrDtype)dt));
  int64_t stop = n % 2 == 0 ? sr_lax_floordiv(n, 2) + 1 : sr_lax_floordiv(n - 1, 2) + 1;
  SrVal *k = arange(s, 0, stop, dtv, 1);
  return DONE(k ? OP(DIV, k, dn_array(s, d, p[0], dtv)) : NULL);
}

/* fftshift and ifftshift: jnp.roll by half of each axis */
static SrVal *shift(SrInterp *I, SrArgs *a, const char *func, int sign) {
  SrVal *p[2];
  if (sr_args_parse(I, a, func, "x, axes=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = arraylike(s, func, p[0]);
  if (!x) return DONE(NULL);
  const SrType *t = ty(I, x);
  SrVal *axes = p[1], *sh;
  if (!sr_nn_given(axes)) {
    int64_t ax[SR_MAX_RANK], v[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) ax[i] = i, v[i] = sign * (t->dims[i].size / 2);
    axes = KEEP(sr_int_tuple(ax, t->ndim));
    sh = int_list(s, v, t->ndim);
  } else if (axes->kind == SR_V_INT) {
    int64_t l = axis_len(I, x, axes);
    if (l < 0) return DONE(NULL);
    sh = INT(sign * (l / 2));
  } else {
    int64_t ax[SR_MAX_RANK], v[SR_MAX_RANK];
    int n = 0;
    if (sr_ints_arg(I, axes, ax, &n, "axes") < 0) return DONE(NULL);
    for (int i = 0; i < n; i++) {
      int64_t l = axis_len(I, x, KEEP(sr_int(NULL, ax[i])));
      if (l < 0) return DONE(NULL);
      v[i] = sign * (l / 2);
    }
    sh = int_list(s, v, n);
  }
  return DONE(sr_nn_call3(s, "jax.numpy.roll", x, sh, axes));
}
static SrVal *np_fftshift(SrInterp *I, SrArgs *a) { return shift(I, a, "fftshift", 1); }
static SrVal *np_ifftshift(SrInterp *I, SrArgs *a) { return shift(I, a, "ifftshift", -1); }

void sr_jnp_fft_init(void) {
  sr_lax_fft_hooks.fft = lax_fft_call;
  sr_lax_fft_hooks.rfft_transpose = rfft_transpose_hook;
  sr_lax_fft_hooks.irfft_transpose = irfft_transpose_hook;
  sr_def("jax.lax.fft", bi_lax_fft,
         "fft(x, fft_type, fft_lengths): the FFT over the last len(fft_lengths) dims (a jit of the fft primitive; "
         "fft_type an FftType or 'fft', 'ifft', 'rfft', 'irfft')");
  static const char *const members[4] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  for (int t = 0; t < 4; t++) {
    char q[64];
    snprintf(q, sizeof q, "jax.lax.FftType.%s", members[t]);
    sr_register(q, sr_int(NULL, t));
  }
  sr_def("jax.numpy.fft.fft", np_fft, "fft(a, n=None, axis=-1, norm=None): the 1-d discrete Fourier transform");
  sr_def("jax.numpy.fft.ifft", np_ifft, "ifft(a, n=None, axis=-1, norm=None): the 1-d inverse DFT");
  sr_def("jax.numpy.fft.rfft", np_rfft, "rfft(a, n=None, axis=-1, norm=None): the 1-d DFT of a real input (n//2+1 "
         "frequencies)");
  sr_def("jax.numpy.fft.irfft", np_irfft, "irfft(a, n=None, axis=-1, norm=None): the inverse of rfft (real output)");
  sr_def("jax.numpy.fft.hfft", np_hfft, "hfft(a, n=None, axis=-1, norm=None): the DFT of a Hermitian-symmetric signal");
  sr_def("jax.numpy.fft.ihfft", np_ihfft, "ihfft(a, n=None, axis=-1, norm=None): the inverse of hfft");
  sr_def("jax.numpy.fft.fft2", np_fft2, "fft2(a, s=None, axes=(-2, -1), norm=None): the 2-d DFT");
  sr_def("jax.numpy.fft.ifft2", np_ifft2, "ifft2(a, s=None, axes=(-2, -1), norm=None): the 2-d inverse DFT");
  sr_def("jax.numpy.fft.rfft2", np_rfft2, "rfft2(a, s=None, axes=(-2, -1), norm=None): the 2-d DFT of a real input");
  sr_def("jax.numpy.fft.irfft2", np_irfft2, "irfft2(a, s=None, axes=(-2, -1), norm=None): the inverse of rfft2");
  sr_def("jax.numpy.fft.fftn", np_fftn, "fftn(a, s=None, axes=None, norm=None): the N-d DFT");
  sr_def("jax.numpy.fft.ifftn", np_ifftn, "ifftn(a, s=None, axes=None, norm=None): the N-d inverse DFT");
  sr_def("jax.numpy.fft.rfftn", np_rfftn, "rfftn(a, s=None, axes=None, norm=None): the N-d DFT of a real input");
  sr_def("jax.numpy.fft.irfftn", np_irfftn, "irfftn(a, s=None, axes=None, norm=None): the inverse of rfftn");
  sr_def("jax.numpy.fft.fftfreq", np_fftfreq,
         "fftfreq(n, d=1.0, *, dtype=None, device=None): the sample frequencies of an n-point DFT");
  sr_def("jax.numpy.fft.rfftfreq", np_rfftfreq,
         "rfftfreq(n, d=1.0, *, dtype=None, device=None): the nonnegative sample frequencies of an n-point rfft");
  sr_def("jax.numpy.fft.fftshift", np_fftshift, "fftshift(x, axes=None): the zero frequency moved to the center");
  sr_def("jax.numpy.fft.ifftshift", np_ifftshift, "ifftshift(x, axes=None): the inverse of fftshift");
}

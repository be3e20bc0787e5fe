/* fft.c: the rules of the fft primitive (jax/_src/lax/fft.py's fft_p):
 * its type rule (fft_abstract_eval, JAX's errors), its eval rule (the
 * kernel of exec/kern_fft.h on each device's block, the transformed
 * dimensions gathered whole), its JVP (deflinear2: fft of the tangent),
 * its transpose (_fft_transpose_rule: fft of the same type for FFT and
 * IFFT, _rfft_transpose and _irfft_transpose for the real ones) and its
 * batching rule (_fft_batching_rule: the batch dim moved to the front).
 *
 * The params are fft_type, an FftType (an IntEnum: printed as its int,
 * 0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT, since Python 3.11's str of an IntEnum
 * is the int's; an older text's `FftType.FFT` or
 * `jaxlib.xla_extension.FftType.FFT` reads too) and fft_lengths.  The
 * transposes and the batching rule call lax.fft, a jit in JAX, and
 * _rfft_transpose is one too: the jax layer binds those through
 * sr_lax_fft_hooks (lax.h); without the hooks the rules bind fft itself.
 * Registered by sr_lax_fft_init.
 */
#include "lax/lax.h"

#include <stdlib.h>
#include <string.h>

#include "ad/batch.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "exec/kern_fft.h"
#include "util/buf.h"
#include "util/intern.h"

SrLaxFftHooks sr_lax_fft_hooks;

/* ==== shared helpers ==== */

static const char *const type_names[4] = {"FFT", "IFFT", "RFFT", "IRFFT"};

/* The FftType of a param: its int, or a text ending in .FFT etc. */
int sr_lax_fft_type_of(const SrVal *v) {
  if (!v) return -1;
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) return v->i >= 0 && v->i <= 3 ? (int)v->i : -1;
  size_t n;
  const char *s = sr_lax_param_text(v, &n);
  if (!s) return -1;
  size_t k = n;
  while (k > 0 && s[k - 1] != '.') k--;
  for (int t = 0; t < 4; t++)
    if (n - k == strlen(type_names[t]) && memcmp(s + k, type_names[t], n - k) == 0) return t;
  return -1;
}

static int param_lengths(const SrVal *v, int64_t *len, int *n) {
  return v && sr_val_ints(v, len, SR_MAX_RANK, n) == 0 ? 0 : -1;
}

/* ==== type rule (fft_abstract_eval) ==== */

static int tuple_eq(const SrType *x, int from, int to, const int64_t *v, int nv) {
  if (to - from != nv) return 0;
  for (int i = 0; i < nv; i++)
    if (x->dims[from + i].size != v[i]) return 0;
  return 1;
}

static int type_fft(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  SrVal *tv = sr_rparam(e, "fft_type");
  int type = sr_lax_fft_type_of(tv);
  if (!tv) return sr_terr(cx, "TypeError", "fft is missing its param fft_type");
  if (type < 0) return sr_terr(cx, "TypeError", "fft: fft_type must be an FftType (0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT)");
  int64_t len[SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_ints(cx, e, "fft_lengths", 1, len, SR_MAX_RANK, &n) < 0) return -1;
  SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
  int rc = 0, nd = x->ndim;
  sr_shape_str(&a, x);
  sr_ints_str(&b, len, n);
  if (n > nd) {
    rc = sr_terr(cx, "ValueError",
                 "FFT input shape %s must have at least as many input dimensions as fft_lengths %s.", a.p, b.p);
    goto done;
  }
  /* x.shape[-0:] is the whole shape, as Python slices it */
  int from = n ? nd - n : 0;
  SrTypeBuilder ob;
  sr_type_builder(&ob, x);
  if (type == SR_FFT_RFFT) {
    if (x->dtype != SR_F32 && x->dtype != SR_F64) {
      rc = sr_terr(cx, "ValueError", "RFFT input must be float32 or float64, got %s", sr_dtype_name(x->dtype));
      goto done;
    }
    if (!tuple_eq(x, from, nd, len, n)) {
      rc = sr_terr(cx, "ValueError", "RFFT input shape %s minor dimensions must be equal to fft_lengths %s", a.p, b.p);
      goto done;
    }
    if (!n) {
      rc = sr_terr(cx, "IndexError", "tuple index out of range");
      goto done;
    }
    ob.dims[nd - 1].size = len[n - 1] / 2 + 1;
    ob.dtype = x->dtype == SR_F32 ? SR_C64 : SR_C128;
  } else if (type == SR_FFT_IRFFT) {
    if (sr_dtype_kind(x->dtype) != SR_DK_COMPLEX) {
      rc = sr_terr(cx, "ValueError", "IRFFT input must be complex64 or complex128, got %s", sr_dtype_name(x->dtype));
      goto done;
    }
    if (!tuple_eq(x, from, nd - 1 > from ? nd - 1 : from, len, n ? n - 1 : 0)) {
      rc = sr_terr(cx, "ValueError",
                   "IRFFT input shape %s minor dimensions must be equal to all except the last fft_length, got "
                   "fft_lengths=%s",
                   a.p, b.p);
      goto done;
    }
    if (!n) {
      rc = sr_terr(cx, "IndexError", "tuple index out of range");
      goto done;
    }
    ob.dims[nd - 1].size = len[n - 1];
    ob.dtype = x->dtype == SR_C64 ? SR_F32 : SR_F64;
  } else {
    if (sr_dtype_kind(x->dtype) != SR_DK_COMPLEX) {
      rc = sr_terr(cx, "ValueError", "FFT input must be complex64 or complex128, got %s", sr_dtype_name(x->dtype));
      goto done;
    }
    if (!tuple_eq(x, from, nd, len, n)) {
      rc = sr_terr(cx, "ValueError", "FFT input shape %s minor dimensions must be equal to fft_lengths %s", a.p, b.p);
      goto done;
    }
  }
  if (x->unreduced || x->reduced) {
    rc = sr_terr(cx, "NotImplementedError", "%s", "");
    goto done;
  }
  out[0] = sr_type_get(&ob);
done:
  sr_buf_free(&a);
  sr_buf_free(&b);
  return rc;
}

/* ==== eval rule ==== */

typedef struct FftArg {
  int type, nd, nlen;
  int64_t len[SR_MAX_RANK];
  SrDtype in_dt;
} FftArg;

static int fft_fn(SrShardIO *io) {
  FftArg *a = io->arg;
  if (sr_kern_fft(a->type, a->in_dt, io->in[0]->data, io->in_shape[0], io->out[0]->data, io->out_shape[0], a->nd,
                  a->len, a->nlen) < 0)
    return sr_ev_err(io->cx, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory for the FFT's scratch");
  return 0;
}

/* A layout l with the last n dims whole. */
static const SrType *whole_minor(const SrType *l, int n) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  for (int i = b.ndim - n; i < b.ndim; i++) b.dims[i].nax = 0;
  return sr_type_get(&b);
}

/* Each device transforms its block: the input laid out as the result's
   leading dims, the transformed ones whole. */
static int ev_fft(SrEvalCtx *cx, const SrEvalEqn *e) {
  FftArg a;
  memset(&a, 0, sizeof a);
  a.type = sr_lax_fft_type_of(sr_ev_param(e, "fft_type"));
  if (a.type < 0) return sr_ev_err(cx, "TypeError", "fft: bad fft_type");
  if (sr_ev_param_ints(cx, e, "fft_lengths", a.len, SR_MAX_RANK, &a.nlen) < 0) return -1;
  a.nd = e->out_type[0]->ndim;
  a.in_dt = e->in[0]->type->dtype;
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  const SrType *ol = whole_minor(l, a.nlen);
  SrTypeBuilder ib;
  sr_type_builder(&ib, e->in[0]->layout);
  for (int i = 0; i < ib.ndim; i++) {
    ib.dims[i].nax = ol->dims[i].nax;
    memcpy(ib.dims[i].ax, ol->dims[i].ax, SR_MAX_DIM_AXES);
    if (ib.dims[i].nax) ib.mesh = ol->mesh;
  }
  SrArray *x = sr_redistribute(cx, e->in[0], m, sr_type_get(&ib));
  if (!x) return -1;
  SrArray *r = sr_array_new(e->out_type[0], ol, m);
  int rc = sr_ev_map(cx, 1, &x, 1, &r, 0, fft_fn, &a);
  sr_array_unref(x);
  if (rc == 0 && !(e->out[0] = sr_redistribute_typed(cx, r, m, l, e->out_type[0]))) rc = -1;
  sr_array_unref(r);
  return rc;
}

/* ==== transpose (_fft_transpose_rule) ==== */

/* lax.fft(x, type, lengths): the jax layer's jit, or the primitive. */
static SrVal *fft_call(SrAd *ad, SrVal *x, int type, const int64_t *len, int n) {
  if (!x) return NULL;
  if (sr_lax_fft_hooks.fft) return sr_ad_keep(ad, sr_lax_fft_hooks.fft(ad->I, x, type, len, n));
  return sr_ad_bindv(ad, SR_P_fft, 1, &x, "fft_lengths", sr_ad_ints(len, n), "fft_type", sr_int(NULL, type), NULL);
}

static int tr_fft(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)x;
  int64_t len[SR_MAX_RANK];
  int n = 0, type = sr_lax_fft_type_of(sr_eqn_param(e, sr_intern_cstr("fft_type")));
  if (type < 0 || param_lengths(sr_eqn_param(e, sr_intern_cstr("fft_lengths")), len, &n) < 0)
    return sr_ad_no_transpose(ad, e->prim);
  SrVal *t = ct[0];
  if (!t) return 0;
  if (type == SR_FFT_RFFT || type == SR_FFT_IRFFT) {
    SrVal *(*h)(SrInterp *, SrVal *, const int64_t *, int) =
        type == SR_FFT_RFFT ? sr_lax_fft_hooks.rfft_transpose : sr_lax_fft_hooks.irfft_transpose;
    if (!h) return sr_ad_no_transpose(ad, e->prim);
    cx[0] = sr_ad_keep(ad, h(ad->I, t, len, n));
  } else {
    cx[0] = fft_call(ad, t, type, len, n);
  }
  return cx[0] ? 0 : -1;
}

/* ==== batching (_fft_batching_rule) ==== */

static int batch_fft(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  int64_t len[SR_MAX_RANK];
  int n = 0, type = sr_lax_fft_type_of(sr_eqn_param(e, sr_intern_cstr("fft_type")));
  if (type < 0 || param_lengths(sr_eqn_param(e, sr_intern_cstr("fft_lengths")), len, &n) < 0)
    return sr_batch_no_rule(b, e->prim);
  SrVal *v = sr_batch_moveaxis(b, x[0], bd[0], 0);
  y[0] = fft_call(&b->ad, v, type, len, n);
  ybd[0] = 0;
  return y[0] ? 0 : -1;
}

/* ==== registration ==== */

void sr_lax_fft_init(void) {
  sr_set_type_rule(SR_P_fft, type_fft);
  sr_set_eval_rule(SR_P_fft, ev_fft);
  sr_ad_set_jvp(SR_P_fft, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_fft, tr_fft);
  sr_prims[SR_P_fft].batch = batch_fft;
}

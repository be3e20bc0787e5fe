/* kern_conv.c: conv_general_dilated on one shard (kern_conv.h).
 *
 * A direct loop over the result's elements: for each result position, the
 * window's taps that land on an input element (after lhs dilation and
 * padding) are found once, then every input feature of the result
 * feature's group is summed over them.  Sums are kept in double (int64
 * for integers), so float32 results are the correctly rounded sums of
 * their products up to the order of the terms. */
#include "exec/kern_conv.h"
#include "exec/kern.h"
#include "exec/array.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

/* The lhs offset (spatial part) of each kernel tap for result position
   osp, or -1 where the tap falls in padding or between dilated inputs. */
static void taps(const SrConvGeom *g, const int64_t *osp, int64_t ntap, int64_t *off, int64_t *roff) {
  int64_t k[SR_MAX_RANK] = {0};
  for (int64_t t = 0; t < ntap; t++) {
    int64_t lo = 0, ro = 0;
    int ok = 1;
    for (int d = 0; d < g->nsp; d++) {
      int64_t q = osp[d] * g->stride[d] + k[d] * g->rdil[d] - g->lo[d];
      if (q < 0 || q % g->ldil[d] || q / g->ldil[d] >= g->in_sp[d]) ok = 0;
      else lo += q / g->ldil[d] * g->lstr[2 + d];
      ro += k[d] * g->rstr[2 + d];
    }
    off[t] = ok ? lo : -1;
    roff[t] = ro;
    for (int d = g->nsp - 1; d >= 0; d--) {
      if (++k[d] < g->k_sp[d]) break;
      k[d] = 0;
    }
  }
}

#define CONV_LOOP(T, ACC, OT)                                                                          \
  do {                                                                                                 \
    const T *L = lhs, *R = rhs;                                                                        \
    OT *O = out;                                                                                       \
    int64_t osp[SR_MAX_RANK] = {0};                                                                    \
    for (int64_t p = 0; p < nsp_out; p++) {                                                            \
      taps(g, osp, ntap, off, roff);                                                                   \
      int64_t ospo = 0;                                                                                \
      for (int d = 0; d < g->nsp; d++) ospo += osp[d] * g->ostr[2 + d];                                \
      for (int64_t ob = 0; ob < g->nout; ob++)                                                         \
        for (int64_t of = 0; of < g->o; of++) {                                                        \
          int64_t gf = of / (g->o / g->fgc), gb = of / (g->o / g->bgc);                                \
          const T *lb = L + (gb * g->nout + ob) * g->lstr[0] + gf * g->i * g->lstr[1];                 \
          const T *rb = R + of * g->rstr[0];                                                           \
          ACC acc = 0;                                                                                 \
          for (int64_t t = 0; t < ntap; t++) {                                                         \
            if (off[t] < 0) continue;                                                                  \
            const T *lt = lb + off[t], *rt = rb + roff[t];                                             \
            for (int64_t i = 0; i < g->i; i++) acc += (ACC)lt[i * g->lstr[1]] * (ACC)rt[i * g->rstr[1]]; \
          }                                                                                            \
          O[ob * g->ostr[0] + of * g->ostr[1] + ospo] = (OT)acc;                                       \
        }                                                                                              \
      for (int d = g->nsp - 1; d >= 0; d--) {                                                          \
        if (++osp[d] < g->out_sp[d]) break;                                                            \
        osp[d] = 0;                                                                                    \
      }                                                                                                \
    }                                                                                                  \
  } while (0)

static int is_real_float(SrDtype d) { return d == SR_F16 || d == SR_BF16 || d == SR_F32 || d == SR_F64; }

/* 16-bit floats (or a 16-bit result): the operands widened to float32
   (float64 where either side is), convolved there, the result rounded to
   odt. */
static int is_int_or_bool(SrDtype d) { return d == SR_BOOL || sr_dtype_is_int(d); }

static int conv_widened(SrDtype dt, SrDtype odt, SrDtype wt, const SrConvGeom *g, const void *lhs, const void *rhs,
                        void *out) {
  size_t nl = (size_t)(g->n * g->c), nr = (size_t)(g->o * g->i), no = (size_t)(g->nout * g->o);
  for (int d = 0; d < g->nsp; d++) {
    nl *= (size_t)g->in_sp[d];
    nr *= (size_t)g->k_sp[d];
    no *= (size_t)g->out_sp[d];
  }
  size_t es = sr_elem_size(wt);
  void *wl = sr_xmalloc(es * (nl ? nl : 1)), *wr = sr_xmalloc(es * (nr ? nr : 1)), *wo = sr_xmalloc(es * (no ? no : 1));
  int rc = sr_kern_convert(dt, wt, nl, lhs, wl);
  if (rc == 0) rc = sr_kern_convert(dt, wt, nr, rhs, wr);
  if (rc == 0) rc = sr_kern_conv(wt, wt, g, wl, wr, wo);
  if (rc == 0) rc = sr_kern_convert(wt, odt, no, wo, out);
  free(wl);
  free(wr);
  free(wo);
  return rc < 0 ? -1 : 0;
}

int sr_kern_conv(SrDtype dt, SrDtype odt, const SrConvGeom *g, const void *lhs, const void *rhs, void *out) {
  int64_t ntap = 1, nsp_out = 1;
  for (int d = 0; d < g->nsp; d++) ntap *= g->k_sp[d], nsp_out *= g->out_sp[d];
  if (g->nout == 0 || g->o == 0 || nsp_out == 0) return 0;
  if ((dt == SR_F16 || dt == SR_BF16 || odt == SR_F16 || odt == SR_BF16) && is_real_float(dt) && is_real_float(odt))
    return conv_widened(dt, odt, dt == SR_F64 || odt == SR_F64 ? SR_F64 : SR_F32, g, lhs, rhs, out);
  /* narrower integers and bools (a bool conv ORs ANDs: a nonzero int64
     sum) in int64, wrapped to odt; integers into a float type in it */
  if (is_int_or_bool(dt) && is_int_or_bool(odt) && !(dt == odt && (dt == SR_I32 || dt == SR_I64)))
    return conv_widened(dt, odt, SR_I64, g, lhs, rhs, out);
  if (is_int_or_bool(dt) && is_real_float(odt))
    return conv_widened(dt, odt, odt == SR_F64 ? SR_F64 : SR_F32, g, lhs, rhs, out);
  int64_t *off = sr_xmalloc(sizeof *off * (size_t)(ntap ? ntap : 1) * 2), *roff = off + ntap;
  int rc = 0;
  if (dt == SR_F32 && odt == SR_F32) CONV_LOOP(float, double, float);
  else if (dt == SR_F32 && odt == SR_F64) CONV_LOOP(float, double, double);
  else if (dt == SR_F64 && odt == SR_F64) CONV_LOOP(double, double, double);
  else if (dt == SR_C64 && odt == SR_C64) CONV_LOOP(float _Complex, double _Complex, float _Complex);
  else if (dt == SR_C128 && odt == SR_C128) CONV_LOOP(double _Complex, double _Complex, double _Complex);
  else if (dt == SR_I32 && odt == SR_I32) CONV_LOOP(int32_t, int64_t, int32_t);
  else if (dt == SR_I64 && odt == SR_I64) CONV_LOOP(int64_t, int64_t, int64_t);
  else rc = -1;
  free(off);
  return rc;
}

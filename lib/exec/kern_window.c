/* kern_window.c: the windowed reductions on one shard (kern_window.h).
 *
 * Each result element walks its window's taps; a tap is an operand
 * element when, after the low padding and base dilation, it lands on one
 * (padding and dilation holes hold the identity, which changes nothing).
 * The taps' operand offsets are found per result element, in row-major
 * window order, so "the first" selected element is XLA's. */
#include "exec/kern_window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

/* Operand offsets of the taps of result position o (-1: no element). */
static void win_taps(const SrWindowGeom *g, const int64_t *o, const int64_t *istr, int64_t ntap, int64_t *off) {
  int64_t k[SR_MAX_RANK] = {0};
  for (int64_t t = 0; t < ntap; t++) {
    int64_t p = 0;
    int ok = 1;
    for (int d = 0; d < g->nd; d++) {
      int64_t q = o[d] * g->stride[d] + k[d] * g->wdil[d] - g->lo[d];
      if (q < 0 || q % g->bdil[d] || q / g->bdil[d] >= g->in[d]) ok = 0;
      else p += q / g->bdil[d] * istr[d];
    }
    off[t] = ok ? p : -1;
    for (int d = g->nd - 1; d >= 0; d--) {
      if (++k[d] < g->win[d]) break;
      k[d] = 0;
    }
  }
}

typedef struct Walk {
  int64_t ntap, nout, istr[SR_MAX_RANK], o[SR_MAX_RANK];
  int64_t *off;
} Walk;

static void walk_begin(Walk *w, const SrWindowGeom *g) {
  w->ntap = 1;
  w->nout = 1;
  for (int d = 0; d < g->nd; d++) w->nout *= g->out[d];
  /* no outputs, no taps: a window may then be larger than any product
     of sizes holds */
  for (int d = 0; d < g->nd && w->nout; d++) w->ntap *= g->win[d];
  if (!w->nout) w->ntap = 0;
  int64_t s = 1;
  for (int d = g->nd - 1; d >= 0; d--) w->istr[d] = s, s *= g->in[d];
  memset(w->o, 0, sizeof w->o);
  w->off = sr_xmalloc(sizeof *w->off * (size_t)(w->ntap ? w->ntap : 1));
}

static void walk_next(Walk *w, const SrWindowGeom *g) {
  for (int d = g->nd - 1; d >= 0; d--) {
    if (++w->o[d] < g->out[d]) break;
    w->o[d] = 0;
  }
}

#define RW_LOOP(T, ACC)                                                              \
  do {                                                                               \
    const T *X = in;                                                                 \
    T *O = out;                                                                      \
    for (int64_t p = 0; p < w.nout; p++) {                                           \
      win_taps(g, w.o, w.istr, w.ntap, w.off);                                       \
      ACC acc = 0;                                                                   \
      int any = 0;                                                                   \
      for (int64_t t = 0; t < w.ntap; t++) {                                         \
        if (w.off[t] < 0) continue;                                                  \
        ACC v = (ACC)X[w.off[t]];                                                    \
        if (op == SR_WIN_SUM) acc += v;                                              \
        else if (!any) acc = v;                                                      \
        else if (acc == acc && (v != v || (op == SR_WIN_MAX ? v > acc : v < acc))) acc = v; \
        any = 1;                                                                     \
      }                                                                              \
      if (!any && op != SR_WIN_SUM) O[p] = op == SR_WIN_MAX ? lowest : highest;      \
      else O[p] = (T)acc;                                                            \
      walk_next(&w, g);                                                              \
    }                                                                                \
  } while (0)

int sr_kern_reduce_window(int op, SrDtype dt, const SrWindowGeom *g, const void *in, void *out) {
  Walk w;
  walk_begin(&w, g);
  int rc = 0;
  if (dt == SR_F32) {
    float lowest = -INFINITY, highest = INFINITY;
    RW_LOOP(float, double);
  } else if (dt == SR_F64) {
    double lowest = -INFINITY, highest = INFINITY;
    RW_LOOP(double, double);
  } else if (dt == SR_I32) {
    int32_t lowest = INT32_MIN, highest = INT32_MAX;
    RW_LOOP(int32_t, int64_t);
  } else if (dt == SR_I64) {
    int64_t lowest = INT64_MIN, highest = INT64_MAX;
    RW_LOOP(int64_t, int64_t);
  } else {
    rc = -1;
  }
  free(w.off);
  return rc;
}

/* The offset of the selected element of the current window, or -1. */
#define SELECT(T, X)                                                        \
  int64_t sel = -1;                                                         \
  for (int64_t t = 0; t < w.ntap; t++) {                                    \
    if (w.off[t] < 0) continue;                                             \
    if (sel < 0 || !(ge ? X[sel] >= X[w.off[t]] : X[sel] <= X[w.off[t]])) sel = w.off[t]; \
  }

#define SG_LOOP(T)                                            \
  do {                                                        \
    const T *TT = t_, *X = x_;                                \
    T *O = out;                                               \
    for (int64_t p = 0; p < w.nout; p++) {                    \
      win_taps(g, w.o, w.istr, w.ntap, w.off);                \
      SELECT(T, X)                                            \
      O[p] = sel < 0 ? (T)0 : TT[sel];                        \
      walk_next(&w, g);                                       \
    }                                                         \
  } while (0)

int sr_kern_select_gather(int ge, SrDtype dt, const SrWindowGeom *g, const void *t_, const void *x_, void *out) {
  Walk w;
  walk_begin(&w, g);
  int rc = 0;
  if (dt == SR_F32) SG_LOOP(float);
  else if (dt == SR_F64) SG_LOOP(double);
  else if (dt == SR_I32) SG_LOOP(int32_t);
  else if (dt == SR_I64) SG_LOOP(int64_t);
  else rc = -1;
  free(w.off);
  return rc;
}

#define SS_LOOP(T)                                            \
  do {                                                        \
    const T *S = src, *X = x_;                                \
    T *O = out;                                               \
    for (int64_t i = 0; i < nin; i++) O[i] = 0;               \
    for (int64_t p = 0; p < w.nout; p++) {                    \
      win_taps(g, w.o, w.istr, w.ntap, w.off);                \
      SELECT(T, X)                                            \
      if (sel >= 0) O[sel] += S[p];                           \
      walk_next(&w, g);                                       \
    }                                                         \
  } while (0)

int sr_kern_select_scatter(int ge, SrDtype dt, const SrWindowGeom *g, const void *src, const void *x_, void *out) {
  Walk w;
  walk_begin(&w, g);
  int64_t nin = 1;
  for (int d = 0; d < g->nd; d++) nin *= g->in[d];
  int rc = 0;
  if (dt == SR_F32) SS_LOOP(float);
  else if (dt == SR_F64) SS_LOOP(double);
  else if (dt == SR_I32) SS_LOOP(int32_t);
  else if (dt == SR_I64) SS_LOOP(int64_t);
  else rc = -1;
  free(w.off);
  return rc;
}

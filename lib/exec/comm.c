/* comm.c: what every communication backend shares -- groups of devices
 * along mesh axes, and the one reduction step. */
#include "exec/comm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kern_simd.h"
#include "exec/prng.h"
#include "util/mem.h"

void sr_comm_free(SrComm *c) {
  if (!c) return;
  SrGroups *g = c->groups;
  while (g) {
    SrGroups *next = g->next;
    if (c->ops->groups_free) c->ops->groups_free(c, g);
    free(g->members);
    free(g->group_of);
    free(g->index_of);
    free(g->sub);
    free(g);
    g = next;
  }
  c->groups = NULL;
  c->ops->free(c);
}

void sr_comm_resize(SrComm *c, int ndev) {
  c->ndev = ndev;
  c->dev_lo = (int)((int64_t)c->rank * ndev / c->nranks);
  c->dev_hi = (int)((int64_t)(c->rank + 1) * ndev / c->nranks);
  if (c->ops->resize) c->ops->resize(c);
}

const SrGroups *sr_comm_groups(SrComm *c, const SrMesh *m, const int *axes, int naxes, SrDiags *d) {
  /* an axis named twice makes no groups: JAX's lowering fails in
     pxla._axis_groups, whose np.moveaxis refuses it */
  for (int i = 0; i < naxes; i++)
    for (int k = 0; k < i; k++)
      if (axes[k] == axes[i]) {
        sr_error_exc(d, SR_E_RUNTIME, "ValueError", NULL, 0, "repeated axis in `source` argument");
        return NULL;
      }
  for (SrGroups *g = c->groups; g; g = g->next)
    if (!g->nsub && g->mesh == m && g->naxes == naxes && memcmp(g->axes, axes, (size_t)naxes * sizeof *axes) == 0)
      return g;
  SrGroups *g = sr_xcalloc(1, sizeof *g);
  g->mesh = m;
  g->naxes = naxes;
  memcpy(g->axes, axes, (size_t)naxes * sizeof *axes);
  int n = sr_mesh_ndev(m);
  int size = 1;
  for (int i = 0; i < naxes; i++) size *= (int)m->sizes[axes[i]];
  g->size = size;
  g->count = n / size;
  g->members = sr_xmalloc((size_t)n * sizeof(int));
  g->group_of = sr_xmalloc((size_t)n * sizeof(int));
  g->index_of = sr_xmalloc((size_t)n * sizeof(int));
  for (int p = 0; p < n; p++) g->group_of[p] = -1;
  int ng = 0;
  for (int p = 0; p < n; p++) {
    if (g->group_of[p] >= 0) continue;
    /* p is the member with coordinate 0 along the group's axes; walk the
       others row-major over the listed axes */
    int base = p;
    int grp = ng++;
    for (int i = 0; i < size; i++) {
      int q = base, rem = i;
      for (int k = naxes - 1; k >= 0; k--) {
        int64_t sz = m->sizes[axes[k]];
        q += (int)((rem % sz) * sr_mesh_stride(m, axes[k]));
        rem /= (int)sz;
      }
      g->members[grp * size + i] = q;
      g->group_of[q] = grp;
      g->index_of[q] = i;
    }
  }
  if (c->ops->groups_init && c->ops->groups_init(c, g, d) < 0) {
    free(g->members);
    free(g->group_of);
    free(g->index_of);
    free(g);
    return NULL;
  }
  g->next = c->groups;
  c->groups = g;
  return g;
}

const SrGroups *sr_comm_groups_sub(SrComm *c, const SrMesh *m, const int *axes, int naxes, int nsub, int subsize,
                                   const int *sub, SrDiags *d) {
  const SrGroups *base = sr_comm_groups(c, m, axes, naxes, d);
  if (!base || nsub <= 0) return base;
  for (SrGroups *g = c->groups; g; g = g->next)
    if (g->nsub == nsub && g->size == subsize && g->mesh == m && g->naxes == naxes &&
        memcmp(g->axes, axes, (size_t)naxes * sizeof *axes) == 0 &&
        memcmp(g->sub, sub, (size_t)nsub * (size_t)subsize * sizeof *sub) == 0)
      return g;
  if (nsub * subsize != base->size) {
    sr_error_exc(d, SR_E_RUNTIME, "ValueError", NULL, 0, "axis_index_groups must cover all indices exactly once");
    return NULL;
  }
  SrGroups *g = sr_xcalloc(1, sizeof *g);
  g->mesh = m;
  g->naxes = naxes;
  memcpy(g->axes, axes, (size_t)naxes * sizeof *axes);
  int n = sr_mesh_ndev(m);
  g->size = subsize;
  g->count = n / subsize;
  g->nsub = nsub;
  g->sub = sr_xmalloc((size_t)nsub * (size_t)subsize * sizeof(int));
  memcpy(g->sub, sub, (size_t)nsub * (size_t)subsize * sizeof(int));
  g->members = sr_xmalloc((size_t)n * sizeof(int));
  g->group_of = sr_xmalloc((size_t)n * sizeof(int));
  g->index_of = sr_xmalloc((size_t)n * sizeof(int));
  /* groups numbered in order of their first member's position */
  int *first = sr_xmalloc((size_t)g->count * sizeof(int)), *order = sr_xmalloc((size_t)g->count * sizeof(int));
  for (int bg = 0; bg < base->count; bg++)
    for (int k = 0; k < nsub; k++) first[bg * nsub + k] = base->members[bg * base->size + sub[k * subsize]];
  for (int i = 0; i < g->count; i++) order[i] = i;
  for (int i = 1; i < g->count; i++)
    for (int j = i; j > 0 && first[order[j - 1]] > first[order[j]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int grp = 0; grp < g->count; grp++) {
    int bg = order[grp] / nsub, k = order[grp] % nsub;
    for (int j = 0; j < subsize; j++) {
      int q = base->members[bg * base->size + sub[k * subsize + j]];
      g->members[grp * subsize + j] = q;
      g->group_of[q] = grp;
      g->index_of[q] = j;
    }
  }
  free(first);
  free(order);
  if (c->ops->groups_init && c->ops->groups_init(c, g, d) < 0) {
    free(g->members);
    free(g->group_of);
    free(g->index_of);
    free(g->sub);
    free(g);
    return NULL;
  }
  g->next = c->groups;
  c->groups = g;
  return g;
}

const SrGroups *sr_comm_groups_set(SrComm *c, const SrMesh *m, SrAxes axes, SrDiags *d) {
  int list[SR_MAX_AXES], n = 0;
  for (int i = 0; i < m->n; i++)
    if (axes & (1u << i)) list[n++] = i;
  return sr_comm_groups(c, m, list, n, d);
}

/* ---- the reduction step ---- */

int sr_comm_fold_supported(SrDtype dt) {
  switch (dt) {
  case SR_BOOL: case SR_I8: case SR_I16: case SR_I32: case SR_I64:
  case SR_U8: case SR_U16: case SR_U32: case SR_U64:
  case SR_F16: case SR_BF16: case SR_F32: case SR_F64: case SR_C64: case SR_C128:
    return 1;
  default:
    return 0;
  }
}

#define FOLD_INT(T)                                                          \
  do {                                                                       \
    T *a = acc;                                                              \
    const T *b = x;                                                          \
    switch (op) {                                                            \
    case SR_RED_SUM:                                                         \
      for (size_t i = 0; i < n; i++) a[i] = (T)(a[i] + b[i]);                \
      break;                                                                 \
    case SR_RED_MAX:                                                         \
      for (size_t i = 0; i < n; i++) a[i] = a[i] < b[i] ? b[i] : a[i];       \
      break;                                                                 \
    case SR_RED_MIN:                                                         \
      for (size_t i = 0; i < n; i++) a[i] = b[i] < a[i] ? b[i] : a[i];       \
      break;                                                                 \
    }                                                                        \
  } while (0)

/* unsigned arithmetic for signed sums: they wrap as XLA's do */
#define FOLD_SINT(T, U)                                                      \
  do {                                                                       \
    if (op == SR_RED_SUM) {                                                  \
      T *a = acc;                                                            \
      const T *b = x;                                                        \
      for (size_t i = 0; i < n; i++) a[i] = (T)((U)a[i] + (U)b[i]);          \
    } else {                                                                 \
      FOLD_INT(T);                                                           \
    }                                                                        \
  } while (0)

#define FOLD_FLOAT(T)                                                        \
  do {                                                                       \
    T *a = acc;                                                              \
    const T *b = x;                                                          \
    switch (op) {                                                            \
    case SR_RED_SUM:                                                         \
      for (size_t i = 0; i < n; i++) a[i] = a[i] + b[i];                     \
      break;                                                                 \
    case SR_RED_MAX:                                                         \
      for (size_t i = 0; i < n; i++)                                         \
        a[i] = (a[i] != a[i] || b[i] != b[i]) ? a[i] + b[i] : (a[i] < b[i] ? b[i] : a[i]); \
      break;                                                                 \
    case SR_RED_MIN:                                                         \
      for (size_t i = 0; i < n; i++)                                         \
        a[i] = (a[i] != a[i] || b[i] != b[i]) ? a[i] + b[i] : (b[i] < a[i] ? b[i] : a[i]); \
      break;                                                                 \
    }                                                                        \
  } while (0)

/* complex: sums part by part; max and min by the lexicographic order of
   (real, imaginary), as lax's complex comparisons order them */
#define FOLD_COMPLEX(T)                                                      \
  do {                                                                       \
    T *a = acc;                                                              \
    const T *b = x;                                                          \
    if (op == SR_RED_SUM) {                                                  \
      for (size_t i = 0; i < 2 * n; i++) a[i] = a[i] + b[i];                 \
      break;                                                                 \
    }                                                                        \
    for (size_t i = 0; i < n; i++) {                                         \
      int less = a[2 * i] < b[2 * i] || (a[2 * i] == b[2 * i] && a[2 * i + 1] < b[2 * i + 1]); \
      if (less == (op == SR_RED_MAX)) a[2 * i] = b[2 * i], a[2 * i + 1] = b[2 * i + 1]; \
    }                                                                        \
  } while (0)

static void fold_half(SrRedOp op, int bf, size_t n, uint16_t *a, const uint16_t *b) {
  for (size_t i = 0; i < n; i++) {
    float x = bf ? sr_prng_bf16_to_float(a[i]) : sr_prng_f16_to_float(a[i]);
    float y = bf ? sr_prng_bf16_to_float(b[i]) : sr_prng_f16_to_float(b[i]);
    float r;
    if (x != x || y != y) r = x + y;
    else if (op == SR_RED_SUM) r = x + y;
    else if (op == SR_RED_MAX) r = x < y ? y : x;
    else r = y < x ? y : x;
    a[i] = bf ? sr_prng_bf16_from_double(r) : sr_prng_f16_from_double(r);
  }
}

/* vectorized by the CPU (kern_simd.h): elementwise, no trapping operation */
SR_KERN_VEC int sr_comm_fold(SrRedOp op, SrDtype dt, size_t n, void *acc, const void *x) {
  switch (dt) {
  case SR_BOOL: {
    uint8_t *a = acc;
    const uint8_t *b = x;
    if (op == SR_RED_MIN)
      for (size_t i = 0; i < n; i++) a[i] = a[i] & b[i];
    else
      for (size_t i = 0; i < n; i++) a[i] = a[i] | b[i];
    return 0;
  }
  case SR_I8: FOLD_SINT(int8_t, uint8_t); return 0;
  case SR_I16: FOLD_SINT(int16_t, uint16_t); return 0;
  case SR_I32: FOLD_SINT(int32_t, uint32_t); return 0;
  case SR_I64: FOLD_SINT(int64_t, uint64_t); return 0;
  case SR_U8: FOLD_INT(uint8_t); return 0;
  case SR_U16: FOLD_INT(uint16_t); return 0;
  case SR_U32: FOLD_INT(uint32_t); return 0;
  case SR_U64: FOLD_INT(uint64_t); return 0;
  case SR_F32: FOLD_FLOAT(float); return 0;
  case SR_F64: FOLD_FLOAT(double); return 0;
  case SR_F16: fold_half(op, 0, n, acc, x); return 0;
  case SR_BF16: fold_half(op, 1, n, acc, x); return 0;
  case SR_C64: FOLD_COMPLEX(float); return 0;
  case SR_C128: FOLD_COMPLEX(double); return 0;
  default: return -1;
  }
}

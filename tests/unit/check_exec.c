/* check_exec.c: unit tests of lib/exec -- the local kernels, the
 * in-process communication backend, redistribution between layouts, and the
 * evaluator on parsed jaxprs.
 *
 * The kernels are checked against plain loops written here; redistribution
 * by round trips (a random array laid out one way, moved to another layout,
 * read back whole must be the same array, unreduced layouts included) and by
 * the collectives each move must use; the evaluator by jaxprs whose results
 * are known, and by the memory a 1000-equation chain may hold. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/array.h"
#include "lax/lax.h"
#include "exec/comm.h"
#include "exec/bufpool.h"
#include "exec/eval.h"
#include "exec/kern.h"
#include "exec/kern_fft.h"
#include "exec/prng.h"
#include "text/parse.h"
#include "util/intern.h"
#include "util/mem.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int rndi(int n) { return (int)(rnd() % (uint64_t)n); }
static float rndf(void) { return (float)((double)(rnd() >> 11) / 9007199254740992.0 * 2 - 1); }

/* ---- a context without an interpreter ---- */

static SrExec ex;
static SrEvalCtx cx;
static SrDiags diags = SR_DIAGS_INIT;

static void setup(void) {
  sr_lax_init();
  memset(&ex, 0, sizeof ex);
  ex.comm = sr_comm_local_new(8);
  sr_eval_ctx_init(&cx, NULL, &ex, &diags);
}

static void teardown(void) {
  sr_comm_free(ex.comm);
  free(ex.ledger);
  memset(&ex, 0, sizeof ex);
  sr_diags_clear(&diags);
}

static const SrMesh *mesh_of(int n, const char *const *names, const int64_t *sizes) {
  SrMesh m = {0};
  m.n = n;
  for (int i = 0; i < n; i++) {
    m.names[i] = sr_intern_cstr(names[i]);
    m.sizes[i] = sizes[i];
    m.types[i] = SR_AXIS_EXPLICIT;
  }
  return sr_mesh_intern(&m);
}

/* A layout: dims[i] lists mesh axes (-1 ends), u the unreduced axes. */
static const SrType *layout_of(SrDtype dt, int nd, const int64_t *shape, const SrMesh *m, int dims[][4], SrAxes u) {
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = dt;
  b.ndim = (uint8_t)nd;
  b.mesh = sr_mesh_shape(m);
  for (int i = 0; i < nd; i++) {
    b.dims[i].size = shape[i];
    for (int k = 0; dims && k < 4 && dims[i][k] >= 0; k++) b.dims[i].ax[b.dims[i].nax++] = (uint8_t)dims[i][k];
  }
  b.unreduced = u;
  b.ukind = u ? SR_UK_SUM : SR_UK_NONE;
  return sr_type_get(&b);
}

static SrArray *host_array(SrDtype dt, int nd, const int64_t *shape, const void *data) {
  return sr_array_from_data(sr_type_array(dt, nd, shape), NULL, data);
}

static int ledger_has(const char *kind) {
  for (int i = 0; i < ex.nledger; i++)
    if (strcmp(ex.ledger[i].kind, kind) == 0) return 1;
  return 0;
}

/* ---- kernels ---- */

START_TEST(test_transpose) {
  for (int iter = 0; iter < 200; iter++) {
    int nd = 1 + rndi(4);
    int64_t shape[4], st[4], n = 1;
    for (int i = 0; i < nd; i++) n *= shape[i] = 1 + rndi(9);
    int perm[4];
    for (int i = 0; i < nd; i++) perm[i] = i;
    for (int i = nd - 1; i > 0; i--) {
      int j = rndi(i + 1), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    int32_t *in = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) in[i] = (int32_t)i;
    sr_kern_transpose(4, nd, shape, perm, in, out);
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) st[i] = s, s *= shape[i];
    /* walk out in row-major order */
    int64_t idx[4] = {0}, osh[4];
    for (int k = 0; k < nd; k++) osh[k] = shape[perm[k]];
    for (int64_t o = 0; o < n; o++) {
      int64_t src = 0;
      for (int k = 0; k < nd; k++) src += idx[k] * st[perm[k]];
      ck_assert_int_eq(out[o], in[src]);
      for (int k = nd - 1; k >= 0; k--) {
        if (++idx[k] < osh[k]) break;
        idx[k] = 0;
      }
    }
    free(in);
    free(out);
  }
}
END_TEST

START_TEST(test_boxes) {
  int64_t shape[3] = {5, 6, 7}, start[3] = {1, 2, 3}, count[3] = {3, 4, 2};
  int32_t in[210], box[24], back[210];
  for (int i = 0; i < 210; i++) in[i] = i;
  sr_kern_copy_box(4, 3, shape, start, count, in, box);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 4; b++)
      for (int c = 0; c < 2; c++) ck_assert_int_eq(box[(a * 4 + b) * 2 + c], in[((a + 1) * 6 + b + 2) * 7 + c + 3]);
  memset(back, 0, sizeof back);
  sr_kern_paste_box(4, 3, shape, start, count, box, back);
  for (int i = 0; i < 210; i++) {
    int a = i / 42, b = i / 7 % 6, c = i % 7;
    int inside = a >= 1 && a < 4 && b >= 2 && b < 6 && c >= 3 && c < 5;
    ck_assert_int_eq(back[i], inside ? in[i] : 0);
  }
  /* reversed rows */
  int64_t s2[2] = {2, 3}, st2[2] = {0, 2}, step[2] = {1, -1}, o2[2] = {2, 3};
  int32_t r[6];
  sr_kern_strided(4, 2, s2, st2, step, o2, in, r);
  int32_t want[6] = {2, 1, 0, 5, 4, 3};
  ck_assert_mem_eq(r, want, sizeof want);
}
END_TEST

START_TEST(test_reduce) {
  for (int iter = 0; iter < 100; iter++) {
    int nd = 1 + rndi(4);
    int64_t shape[4], n = 1;
    for (int i = 0; i < nd; i++) n *= shape[i] = 1 + rndi(6);
    uint32_t axes = (uint32_t)rndi(1 << nd);
    int32_t *in = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) in[i] = (int32_t)(rndi(200) - 100);
    int64_t nout = 1, ost[4], ish[4];
    for (int i = 0; i < nd; i++)
      if (!(axes >> i & 1)) nout *= shape[i];
    int32_t *got = malloc((size_t)nout * 4), *want = calloc((size_t)nout, 4), *mx = malloc((size_t)nout * 4);
    for (int64_t i = 0; i < nout; i++) mx[i] = INT32_MIN;
    /* naive: each input element to its output slot */
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
      ost[i] = (axes >> i & 1) ? 0 : s;
      if (!(axes >> i & 1)) s *= shape[i];
    }
    int64_t idx[4] = {0};
    for (int64_t e = 0; e < n; e++) {
      int64_t o = 0;
      for (int i = 0; i < nd; i++) o += idx[i] * ost[i];
      want[o] += in[e];
      if (in[e] > mx[o]) mx[o] = in[e];
      for (int i = nd - 1; i >= 0; i--) {
        if (++idx[i] < shape[i]) break;
        idx[i] = 0;
      }
    }
    (void)ish;
    ck_assert_int_eq(sr_kern_reduce(SR_KR_SUM, SR_I32, nd, shape, axes, in, got), 0);
    ck_assert_mem_eq(got, want, (size_t)nout * 4);
    ck_assert_int_eq(sr_kern_reduce(SR_KR_MAX, SR_I32, nd, shape, axes, in, got), 0);
    if (axes) ck_assert_mem_eq(got, mx, (size_t)nout * 4);
    free(in);
    free(got);
    free(want);
    free(mx);
  }
}
END_TEST

START_TEST(test_dot) {
  /* lhs [2, 3, 4] (batch 0, contract 2), rhs [4, 2, 5] (contract 0, batch 1) */
  int64_t ls[3] = {2, 3, 4}, rs[3] = {4, 2, 5};
  float l[24], r[40], out[30];
  double want[30] = {0};
  for (int i = 0; i < 24; i++) l[i] = rndf();
  for (int i = 0; i < 40; i++) r[i] = rndf();
  int lb[1] = {0}, rb[1] = {1}, lc[1] = {2}, rc[1] = {0};
  ck_assert_int_eq(sr_kern_dot(SR_F32, SR_F32, SR_F32, 3, ls, l, 3, rs, r, 1, lb, rb, 1, lc, rc, 0, out), 0);
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 5; j++)
        for (int k = 0; k < 4; k++) want[(b * 3 + i) * 5 + j] += (double)l[(b * 3 + i) * 4 + k] * r[(k * 2 + b) * 5 + j];
  for (int i = 0; i < 30; i++) ck_assert_double_eq_tol(out[i], want[i], 1e-5);
  /* acc: the products added into what out holds (beta = 1), bit for bit
     the plain product plus it for so short a contraction */
  float base[30], sum[30];
  for (int i = 0; i < 30; i++) sum[i] = base[i] = rndf();
  ck_assert_int_eq(sr_kern_dot(SR_F32, SR_F32, SR_F32, 3, ls, l, 3, rs, r, 1, lb, rb, 1, lc, rc, 1, sum), 0);
  for (int i = 0; i < 30; i++) ck_assert(sum[i] == base[i] + out[i]);
  /* int32, transposed operands */
  int64_t a2[2] = {3, 2}, b2[2] = {4, 3};
  int32_t A[6] = {1, 2, 3, 4, 5, 6}, B[12] = {1, 0, 2, 0, 1, 0, 3, 0, 1, 1, 1, 1}, C[8];
  int lc2[1] = {0}, rc2[1] = {1};
  /* acc only for a gemm in the output's own float type */
  ck_assert_int_eq(sr_kern_dot(SR_I32, SR_I32, SR_I32, 2, a2, A, 2, b2, B, 0, NULL, NULL, 1, lc2, rc2, 1, C), -1);
  ck_assert_int_eq(sr_kern_dot(SR_I32, SR_I32, SR_I32, 2, a2, A, 2, b2, B, 0, NULL, NULL, 1, lc2, rc2, 0, C), 0);
  /* C[i][j] = sum_k A[k][i] * B[j][k] */
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++) {
      int w = 0;
      for (int k = 0; k < 3; k++) w += A[k * 2 + i] * B[j * 3 + k];
      ck_assert_int_eq(C[i * 4 + j], w);
    }
  /* bfloat16 in, float32 out */
  uint16_t hb[2] = {sr_prng_bf16_from_double(1.5), sr_prng_bf16_from_double(2.0)};
  int64_t v1[1] = {2};
  int c1[1] = {0};
  float f;
  ck_assert_int_eq(sr_kern_dot(SR_BF16, SR_BF16, SR_F32, 1, v1, hb, 1, v1, hb, 0, NULL, NULL, 1, c1, c1, 0, &f), 0);
  ck_assert(f == 6.25f);
}
END_TEST

START_TEST(test_elementwise) {
  sr_lax_init(); /* the rows' kernels */
  int32_t a[4] = {7, -7, INT32_MIN, 5}, b[4] = {2, 0, -1, -2}, o[4];
  ck_assert_int_eq(sr_kern_binary(sr_prims[SR_P_div].kern, SR_I32, 4, a, 0, b, 0, o), 0);
  ck_assert_int_eq(o[0], 3);
  ck_assert_int_eq(o[1], -1);
  ck_assert_int_eq(o[2], INT32_MIN);
  ck_assert_int_eq(o[3], -2);
  ck_assert_int_eq(sr_kern_binary(sr_prims[SR_P_rem].kern, SR_I32, 4, a, 0, b, 0, o), 0);
  ck_assert_int_eq(o[1], -7);
  ck_assert_int_eq(o[2], 0);
  float f[3] = {NAN, 1.0f, -2.5f}, g[3];
  int32_t i3[3];
  ck_assert_int_eq(sr_kern_convert(SR_F32, SR_I32, 3, f, i3), 0);
  ck_assert_int_eq(i3[0], 0);
  ck_assert_int_eq(i3[2], -2);
  float big = 3e9f;
  ck_assert_int_eq(sr_kern_convert(SR_F32, SR_I32, 1, &big, i3), 0);
  ck_assert_int_eq(i3[0], INT32_MAX);
  float two = 2.0f;
  ck_assert_int_eq(sr_kern_binary(sr_prims[SR_P_max].kern, SR_F32, 3, f, 0, &two, 1, g), 0);
  ck_assert(isnan(g[0]) && g[1] == 2.0f && g[2] == 2.0f);
  /* bfloat16 rounds to nearest even */
  float x = 1.00390625f; /* exactly halfway between two bfloat16s */
  uint16_t h;
  ck_assert_int_eq(sr_kern_convert(SR_F32, SR_BF16, 1, &x, &h), 0);
  ck_assert_uint_eq(h, 0x3f80);
  /* integer_pow: x**3 and x**-2 */
  float p[2] = {2.0f, 3.0f}, q[2];
  int64_t y3 = 3, ym2 = -2;
  ck_assert_int_eq(sr_kern_unary(sr_prims[SR_P_integer_pow].kern, SR_F32, 2, p, q, &y3), 0);
  ck_assert(q[0] == 8.0f && q[1] == 27.0f);
  ck_assert_int_eq(sr_kern_unary(sr_prims[SR_P_integer_pow].kern, SR_F32, 2, p, q, &ym2), 0);
  ck_assert(q[0] == 0.25f);
}
END_TEST

/* ---- the communication backend ---- */

START_TEST(test_groups) {
  const char *names[2] = {"X", "Y"};
  int64_t sizes[2] = {4, 2};
  const SrMesh *m = mesh_of(2, names, sizes);
  int yx[2] = {1, 0};
  const SrGroups *g = sr_comm_groups(ex.comm, m, yx, 2, &diags);
  ck_assert_ptr_nonnull(g);
  ck_assert_int_eq(g->count, 1);
  /* members row-major over (Y, X): y major */
  int want[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  for (int i = 0; i < 8; i++) ck_assert_int_eq(g->members[i], want[i]);
  int x1[1] = {0};
  g = sr_comm_groups(ex.comm, m, x1, 1, &diags);
  ck_assert_int_eq(g->count, 2);
  ck_assert_int_eq(g->members[0 * 4 + 3], 6);
  ck_assert_int_eq(g->members[1 * 4 + 0], 1);
  ck_assert_ptr_eq(sr_comm_groups(ex.comm, m, x1, 1, &diags), g); /* cached */
}
END_TEST

START_TEST(test_fold_order) {
  /* float sums depend on order: the fold is left to right in member order */
  const char *names[1] = {"A"};
  int64_t sizes[1] = {3};
  const SrMesh *m = mesh_of(1, names, sizes);
  float v[3] = {1e8f, 1.0f, -1e8f};
  SrBuffer *in[3], *out[3] = {0};
  for (int i = 0; i < 3; i++) {
    in[i] = sr_buffer_new(4);
    memcpy(in[i]->data, &v[i], 4);
  }
  int ax[1] = {0};
  const SrGroups *g = sr_comm_groups(ex.comm, m, ax, 1, &diags);
  ck_assert_int_eq(ex.comm->ops->all_reduce(ex.comm, g, SR_RED_SUM, SR_F32, 1, in, out, &diags), 0);
  float want = (1e8f + 1.0f) + -1e8f;
  for (int i = 0; i < 3; i++) {
    ck_assert(*(float *)out[i]->data == want);
    sr_buffer_unref(out[i]);
  }
  /* reduce_scatter: chunk j of the sum goes to member j */
  for (int i = 0; i < 3; i++) {
    sr_buffer_unref(in[i]);
    in[i] = sr_buffer_new(12);
    for (int j = 0; j < 3; j++) ((float *)in[i]->data)[j] = (float)(10 * i + j);
  }
  ck_assert_int_eq(ex.comm->ops->reduce_scatter(ex.comm, g, SR_RED_SUM, SR_F32, 1, in, out, &diags), 0);
  for (int j = 0; j < 3; j++) {
    ck_assert(*(float *)out[j]->data == (float)(30 + 3 * j));
    sr_buffer_unref(out[j]);
  }
  /* all_to_all: chunk i of out[j] is chunk j of in[i] */
  ck_assert_int_eq(ex.comm->ops->all_to_all(ex.comm, g, 4, in, out, &diags), 0);
  for (int j = 0; j < 3; j++) {
    for (int i = 0; i < 3; i++) ck_assert(((float *)out[j]->data)[i] == (float)(10 * i + j));
    sr_buffer_unref(out[j]);
  }
  /* ppermute: 0 -> 2, 2 -> 1; member 0 receives zeros */
  int src[2] = {0, 2}, dst[2] = {2, 1};
  ck_assert_int_eq(ex.comm->ops->ppermute(ex.comm, g, 2, src, dst, 12, in, out, &diags), 0);
  ck_assert(((float *)out[0]->data)[1] == 0.0f);
  ck_assert(((float *)out[1]->data)[1] == 21.0f);
  ck_assert(((float *)out[2]->data)[1] == 1.0f);
  for (int i = 0; i < 3; i++) {
    sr_buffer_unref(out[i]);
    sr_buffer_unref(in[i]);
  }
}
END_TEST

/* ---- redistribution ---- */

/* A random layout of an array of `nd` dims (sizes multiples of 8) on m:
   each axis goes to no dim, to a dim (in a random order) or, when allowed,
   to the unreduced set. */
static const SrType *random_layout(SrDtype dt, int nd, const int64_t *shape, const SrMesh *m, int allow_u) {
  int dims[SR_MAX_RANK][4];
  int nax[SR_MAX_RANK] = {0};
  for (int i = 0; i < nd; i++)
    for (int k = 0; k < 4; k++) dims[i][k] = -1;
  SrAxes u = 0;
  int order[SR_MAX_AXES];
  for (int a = 0; a < m->n; a++) order[a] = a;
  for (int a = m->n - 1; a > 0; a--) {
    int j = rndi(a + 1), t = order[a];
    order[a] = order[j];
    order[j] = t;
  }
  for (int k = 0; k < m->n; k++) {
    int a = order[k], c = rndi(nd + 2);
    if (c < nd) {
      int64_t splits = 1;
      for (int q = 0; q < nax[c]; q++) splits *= m->sizes[dims[c][q]];
      if (shape[c] % (splits * m->sizes[a]) == 0 && nax[c] < 3) dims[c][nax[c]++] = a;
    } else if (c == nd && allow_u) {
      u |= 1u << a;
    }
  }
  return layout_of(dt, nd, shape, m, dims, u);
}

START_TEST(test_redistribute_roundtrip) {
  const char *n2[2] = {"X", "Y"}, *n3[3] = {"a", "b", "c"}, *n1[1] = {"A"};
  int64_t s2[2] = {4, 2}, s3[3] = {2, 2, 2}, s1[1] = {8};
  const SrMesh *meshes[3] = {mesh_of(2, n2, s2), mesh_of(3, n3, s3), mesh_of(1, n1, s1)};
  for (int iter = 0; iter < 300; iter++) {
    const SrMesh *m = meshes[iter % 3];
    int nd = 1 + rndi(3);
    int64_t shape[3], n = 1;
    for (int i = 0; i < nd; i++) n *= shape[i] = 8 * (1 + rndi(3));
    SrDtype dt = iter % 5 == 4 ? SR_F64 : SR_I32;
    size_t es = sr_elem_size(dt);
    char *data = malloc((size_t)n * es), *back = malloc((size_t)n * es);
    for (int64_t i = 0; i < n; i++) sr_kern_set_scalar(dt, (double)(rndi(1000) - 500), rndi(1000) - 500, data + i * es);
    SrArray *h = host_array(dt, nd, shape, data);
    const SrType *l1 = random_layout(dt, nd, shape, m, 1), *l2 = random_layout(dt, nd, shape, m, 1),
                 *l3 = random_layout(dt, nd, shape, m, 0);
    SrArray *a = sr_redistribute(&cx, h, m, l1);
    ck_assert_ptr_nonnull(a);
    SrArray *b = sr_redistribute(&cx, a, m, l2);
    ck_assert_ptr_nonnull(b);
    SrArray *c = sr_redistribute(&cx, b, m, l3);
    ck_assert_ptr_nonnull(c);
    SrArray *three[3] = {a, b, c};
    for (int q = 0; q < 3; q++) {
      SrArray *x = three[q];
      memset(back, 0x5a, (size_t)n * es);
      ck_assert_int_eq(sr_array_to_host(&cx, x, back), 0);
      if (memcmp(back, data, (size_t)n * es) != 0)
        ck_abort_msg("round trip %d: %s -> %s -> %s differs", iter, sr_type_short(l1), sr_type_short(l2),
                     sr_type_short(l3));
    }
    /* every shard has its layout's size */
    for (int p = 0; p < c->ndev; p++) ck_assert_uint_eq(c->shard[p]->nbytes, sr_array_shard_bytes(c));
    sr_array_unref(a);
    sr_array_unref(b);
    sr_array_unref(c);
    sr_array_unref(h);
    free(data);
    free(back);
  }
}
END_TEST

static SrArray *laid_out(const SrMesh *m, const SrType *l, float *data) {
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < l->ndim; i++) shape[i] = l->dims[i].size;
  SrArray *h = host_array(SR_F32, l->ndim, shape, data);
  SrArray *a = sr_redistribute(&cx, h, m, l);
  sr_array_unref(h);
  return a;
}

START_TEST(test_redistribute_collectives) {
  const char *names[2] = {"X", "Y"};
  int64_t sizes[2] = {4, 2}, shape[2] = {8, 4};
  const SrMesh *m = mesh_of(2, names, sizes);
  float data[32];
  for (int i = 0; i < 32; i++) data[i] = (float)i;
  int px[2][4] = {{0, -1}, {-1}}, pnx[2][4] = {{-1}, {0, -1}}, pxy[2][4] = {{0, -1}, {1, -1}}, none[2][4] = {{-1}, {-1}};
  const SrType *lx = layout_of(SR_F32, 2, shape, m, px, 0), *lnx = layout_of(SR_F32, 2, shape, m, pnx, 0),
               *lxy = layout_of(SR_F32, 2, shape, m, pxy, 0), *lr = layout_of(SR_F32, 2, shape, m, none, 0),
               *lxuy = layout_of(SR_F32, 2, shape, m, px, 2), *lux = layout_of(SR_F32, 2, shape, m, none, 1);
  SrArray *a = laid_out(m, lxy, data);
  /* placing from the host slices locally: nothing moves */
  ck_assert_int_eq(ex.nledger, 0);
  /* the seed's P('X', None, unreduced={'Y'}): each device keeps its Y block
     in place, zeros elsewhere */
  SrArray *u = sr_redistribute(&cx, a, m, lxuy);
  ck_assert_int_eq(ex.nledger, 0);
  float *s1 = u->shard[1]->data;
  float want1[8] = {0, 0, 2, 3, 0, 0, 6, 7};
  ck_assert_mem_eq(s1, want1, sizeof want1);
  /* P('X', 'Y') -> P('X', None): an all-gather over Y */
  SrArray *g = sr_redistribute(&cx, a, m, lx);
  ck_assert(ledger_has("all-gather"));
  ex.nledger = 0;
  /* P('X', None) -> P(None, 'X'): an all-to-all */
  SrArray *t = sr_redistribute(&cx, g, m, lnx);
  ck_assert(ledger_has("all-to-all") && !ledger_has("all-gather"));
  ex.nledger = 0;
  /* unreduced over X -> P('X', None): a reduce-scatter; -> P(): an all-reduce */
  SrArray *r = laid_out(m, lr, data);
  SrArray *ux = sr_redistribute(&cx, r, m, lux);
  ck_assert_int_eq(ex.nledger, 0);
  float zero[32] = {0};
  ck_assert_mem_eq(ux->shard[2]->data, zero, sizeof zero); /* x = 1 holds zeros */
  SrArray *rs = sr_redistribute(&cx, ux, m, lx);
  ck_assert(ledger_has("reduce-scatter") && !ledger_has("all-reduce"));
  ex.nledger = 0;
  SrArray *ar = sr_redistribute(&cx, ux, m, lr);
  ck_assert(ledger_has("all-reduce"));
  float back[32];
  ck_assert_int_eq(sr_array_to_host(&cx, rs, back), 0);
  ck_assert_mem_eq(back, data, sizeof data);
  ck_assert_int_eq(sr_array_to_host(&cx, ar, back), 0);
  ck_assert_mem_eq(back, data, sizeof data);
  /* replicated results share one buffer across devices */
  ck_assert_ptr_eq(ar->shard[0], ar->shard[6]);
  SrArray *all[] = {a, u, g, t, r, ux, rs, ar};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) sr_array_unref(all[i]);
}
END_TEST

/* ---- the evaluator ---- */

static SrProgram *parse(const char *text, const SrMesh *m) {
  SrSrc *src = sr_src_new("<test>", text, strlen(text), 1);
  size_t end;
  SrParseOpts o = {m};
  SrProgram *p = sr_parse_program(src, 0, &end, &o, &diags);
  sr_src_unref(src);
  if (!p && diags.first) ck_abort_msg("parse: %s", diags.first->msg);
  return p;
}

START_TEST(test_eval_jaxpr) {
  SrProgram *p = parse("{ lambda ; a:f32[3] b:i32[]. let\n"
                       "    c:f32[3] = mul a 2.0:f32[]\n"
                       "    d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n"
                       "    e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
                       "    f:f32[] = add d e\n"
                       "    g:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,) sharding=None] f\n"
                       "    h:f32[3] = select_n True:bool[] c g\n"
                       "  in (f, h) }",
                       NULL);
  float av[3] = {1, 2, 3};
  int32_t bv = 10;
  int64_t s3[1] = {3};
  SrArray *in[2] = {host_array(SR_F32, 1, s3, av), host_array(SR_I32, 0, NULL, &bv)}, *out[2] = {0};
  ck_assert_int_eq(sr_ev_jaxpr(&cx, p->top, in, out), 0);
  ck_assert(*(float *)out[0]->shard[0]->data == 22.0f);
  float want[3] = {22, 22, 22};
  ck_assert_mem_eq(out[1]->shard[0]->data, want, sizeof want);
  for (int i = 0; i < 2; i++) {
    sr_array_unref(in[i]);
    sr_array_unref(out[i]);
  }
  sr_program_unref(p);
}
END_TEST

START_TEST(test_eval_sharded) {
  /* a dot over a contracting dim split on X, reduced into P('X', None) */
  const char *names[2] = {"X", "Y"};
  int64_t sizes[2] = {4, 2};
  const SrMesh *m = mesh_of(2, names, sizes);
  SrProgram *p = parse("{ lambda ; a:f32[8,4@X] b:f32[4@X,16]. let\n"
                       "    c:f32[8@X,16] = dot_general[dimension_numbers=(([1], [0]), ([], [])) out_sharding=P('X', None) "
                       "preferred_element_type=float32] a b\n"
                       "    d:f32[16] = reduce_sum[axes=(0,) out_sharding=None] c\n"
                       "  in (c, d) }",
                       m);
  float x[32], y[64];
  for (int i = 0; i < 32; i++) x[i] = (float)i;
  for (int i = 0; i < 64; i++) y[i] = (float)(i % 7);
  int64_t sx[2] = {8, 4}, sy[2] = {4, 16};
  int px[2][4] = {{-1}, {0, -1}}, py[2][4] = {{0, -1}, {-1}};
  SrArray *hx = host_array(SR_F32, 2, sx, x), *hy = host_array(SR_F32, 2, sy, y);
  SrArray *in[2] = {sr_redistribute(&cx, hx, m, layout_of(SR_F32, 2, sx, m, px, 0)),
                    sr_redistribute(&cx, hy, m, layout_of(SR_F32, 2, sy, m, py, 0))};
  in[0]->type = sr_args(p->top)[0]->type;
  in[1]->type = sr_args(p->top)[1]->type;
  SrArray *out[2] = {0};
  ex.nledger = 0;
  cx.mesh = m;
  ck_assert_int_eq(sr_ev_jaxpr(&cx, p->top, in, out), 0);
  cx.mesh = NULL;
  ck_assert(ledger_has("reduce-scatter"));
  ck_assert(ledger_has("all-reduce"));
  float c[128], d[16];
  ck_assert_int_eq(sr_array_to_host(&cx, out[0], c), 0);
  ck_assert_int_eq(sr_array_to_host(&cx, out[1], d), 0);
  for (int j = 0; j < 16; j++) {
    float col = 0;
    for (int i = 0; i < 8; i++) {
      float w = 0;
      for (int k = 0; k < 4; k++) w += x[i * 4 + k] * y[k * 16 + j];
      ck_assert(c[i * 16 + j] == w);
      col += w;
    }
    ck_assert_float_eq_tol(d[j], col, 1e-3);
  }
  SrArray *all[] = {hx, hy, in[0], in[1], out[0], out[1]};
  for (size_t i = 0; i < 6; i++) sr_array_unref(all[i]);
  sr_program_unref(p);
}
END_TEST

/* JAX's var names: a..z, ba, bb, ... */
static void var_name(int i, char *out) {
  char t[8];
  int n = 0;
  do {
    t[n++] = (char)('a' + i % 26);
    i = i / 26 - 1;
  } while (i >= 0);
  for (int k = 0; k < n; k++) out[k] = t[n - 1 - k];
  out[n] = 0;
}

START_TEST(test_memory_chain) {
  /* 1000 elementwise equations on a 16 MiB array hold at most a few arrays */
  const int neq = 1000;
  const int64_t n = 4 << 20;
  SrBuf t = SR_BUF_INIT;
  sr_buf_printf(&t, "{ lambda ; a:f32[%lld]. let\n", (long long)n);
  char v[16], w[16];
  for (int i = 0; i < neq; i++) {
    var_name(i, v);
    var_name(i + 1, w);
    sr_buf_printf(&t, "    %s:f32[%lld] = %s %s\n", w, (long long)n, i % 2 ? "neg" : "abs", v);
  }
  var_name(neq, w);
  sr_buf_printf(&t, "  in (%s,) }", w);
  SrProgram *p = parse(t.p, NULL);
  sr_buf_free(&t);
  float *x = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 100) - 50;
  int64_t shape[1] = {n};
  SrArray *in = host_array(SR_F32, 1, shape, x), *out = NULL;
  size_t before, peak;
  sr_buffer_stats(&before, NULL);
  sr_buffer_stats_reset_peak();
  ck_assert_int_eq(sr_ev_jaxpr(&cx, p->top, &in, &out), 0);
  sr_buffer_stats(NULL, &peak);
  /* the input stays alive throughout, so the chain itself may add 3x */
  ck_assert_msg(peak - before < (size_t)(3 * n * 4), "peak %zu MiB over %zu MiB", (peak - before) >> 20, (size_t)n * 4 >> 20);
  float *r = out->shard[0]->data;
  ck_assert(r[0] == -50.0f && r[60] == -10.0f);
  sr_array_unref(in);
  sr_array_unref(out);
  free(x);
  sr_program_unref(p);
}
END_TEST

/* A scan over n iterations of f32[1024] values: the new carry c + x, and
   the stacked result (c + x) * x.  Returns the owner buffers it allocated
   (*fresh: of them, from the system rather than the pool) and checks the
   values. */
static size_t scan_allocs(int n, size_t *fresh) {
  SrBuf t = SR_BUF_INIT;
  sr_buf_printf(&t,
                "{ lambda ; a:f32[1024] b:f32[%d,1024]. let\n"
                "    c:f32[1024] d:f32[%d,1024] = scan[\n"
                "      jaxpr={ lambda ; e:f32[1024] f:f32[1024]. let\n"
                "          g:f32[1024] = add e f\n"
                "          h:f32[1024] = mul g f\n"
                "        in (g, h) }\n"
                "      length=%d linear=(False, False) num_carry=1 num_consts=0 reverse=False unroll=1\n"
                "    ] a b\n"
                "  in (c, d) }",
                n, n, n);
  SrProgram *p = parse(t.p, NULL);
  sr_buf_free(&t);
  float *x = malloc((size_t)n * 1024 * sizeof *x), a0[1024];
  for (int i = 0; i < n * 1024; i++) x[i] = (float)(i % 7) - 3;
  for (int k = 0; k < 1024; k++) a0[k] = (float)k;
  int64_t sa[1] = {1024}, sb[2] = {n, 1024};
  SrArray *in[2] = {host_array(SR_F32, 1, sa, a0), host_array(SR_F32, 2, sb, x)}, *out[2] = {0};
  SrBufCounts before, after;
  sr_buffer_counts(&before);
  ck_assert_int_eq(sr_ev_jaxpr(&cx, p->top, in, out), 0);
  sr_buffer_counts(&after);
  const float *c = out[0]->shard[0]->data, *d = out[1]->shard[0]->data;
  for (int k = 0; k < 1024; k++) {
    float carry = a0[k];
    for (int i = 0; i < n; i++) {
      carry += x[i * 1024 + k];
      ck_assert(d[i * 1024 + k] == carry * x[i * 1024 + k]);
    }
    ck_assert(c[k] == carry);
  }
  /* the input is unchanged (the first carry is the caller's) */
  const float *a = in[0]->shard[0]->data;
  for (int k = 0; k < 1024; k++) ck_assert(a[k] == (float)k);
  for (int i = 0; i < 2; i++) sr_array_unref(in[i]), sr_array_unref(out[i]);
  free(x);
  sr_program_unref(p);
  *fresh = after.fresh - before.fresh;
  return after.allocs - before.allocs;
}

START_TEST(test_scan_buffers) {
  /* each iteration's stacked result is made in its slice of the stack and
     the carry is updated in place, so a scan allocates as many buffers for
     64 iterations as for 4 */
  size_t f4, f64;
  size_t a4 = scan_allocs(4, &f4), a64 = scan_allocs(64, &f64);
  ck_assert_msg(a64 == a4, "%zu buffers for 4 iterations, %zu for 64", a4, a64);
  ck_assert_msg(f64 <= f4 + 1, "%zu fresh buffers for 4 iterations, %zu for 64", f4, f64);
}
END_TEST

/* Big zeros are one kept buffer (exec/array.h: sr_buffer_zeros_shared):
   a broadcast of 0.0 made twice shares it and fills nothing the second
   time, while an add into the result (its holder is not the sole one)
   leaves the zeros as they were. */
START_TEST(test_zeros_shared) {
  const int64_t n = 1 << 20;
  SrBuf t = SR_BUF_INIT;
  sr_buf_printf(&t,
                "{ lambda ; a:f32[]. let\n"
                "    b:f32[%lld] = broadcast_in_dim[broadcast_dimensions=() shape=(%lld,) sharding=None] 0.0:f32[]\n"
                "    c:f32[%lld] = add b a\n"
                "  in (b, c) }",
                (long long)n, (long long)n, (long long)n);
  SrProgram *p = parse(t.p, NULL);
  sr_buf_free(&t);
  float one = 1;
  SrArray *in = host_array(SR_F32, 0, NULL, &one), *out[2][2] = {{0}};
  for (int r = 0; r < 2; r++) ck_assert_int_eq(sr_ev_jaxpr(&cx, p->top, &in, out[r]), 0);
  ck_assert_ptr_eq(out[0][0]->shard[0], out[1][0]->shard[0]);
  for (int r = 0; r < 2; r++) {
    const float *z = out[r][0]->shard[0]->data, *c = out[r][1]->shard[0]->data;
    for (int64_t i = 0; i < n; i += 4099) ck_assert(z[i] == 0 && c[i] == 1);
    ck_assert(z[n - 1] == 0 && c[n - 1] == 1);
  }
  for (int r = 0; r < 2; r++) sr_array_unref(out[r][0]), sr_array_unref(out[r][1]);
  /* kept for the next request of its size, a new one for another size */
  SrBuffer *a = sr_buffer_zeros_shared(4 * (size_t)n), *b = sr_buffer_zeros_shared(4 * (size_t)n + 64);
  ck_assert_ptr_ne(a, b);
  ck_assert_int_ge(a->rc, 2);
  ck_assert(((const float *)b->data)[n] == 0);
  sr_buffer_unref(a);
  sr_buffer_unref(b);
  /* small ones are not kept: their holder may write them */
  SrBuffer *s = sr_buffer_zeros_shared(64);
  ck_assert(sr_buffer_unique(s) && ((const char *)s->data)[63] == 0);
  sr_buffer_unref(s);
  sr_array_unref(in);
  sr_program_unref(p);
}
END_TEST

/* The FFT kernel against a direct DFT in long double: radix-2, mixed
   radix (3, 5, 12, 17, 30, 100, 1000) and Bluestein (97) lengths, both precisions, forward and inverse, and the real
   transforms' round trip (irfft(rfft(x)) == x). */
static void dft_ref(const double *x, long double *y, int64_t n, int inv) {
  for (int64_t k = 0; k < n; k++) {
    long double re = 0, im = 0;
    for (int64_t j = 0; j < n; j++) {
      long double a = (inv ? 2 : -2) * 3.14159265358979323846264338327950288L * (long double)((j * k) % n) / n;
      re += x[2 * j] * cosl(a) - x[2 * j + 1] * sinl(a);
      im += x[2 * j] * sinl(a) + x[2 * j + 1] * cosl(a);
    }
    y[2 * k] = re, y[2 * k + 1] = im;
  }
}

START_TEST(test_fft) {
  static const int64_t ns[] = {1, 2, 3, 5, 8, 12, 16, 17, 30, 64, 97, 100, 256, 1000};
  for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
    int64_t n = ns[t];
    double *x = malloc(16 * (size_t)n), *yd = malloc(16 * (size_t)n);
    float *yf = malloc(8 * (size_t)n);
    long double *ref = malloc(sizeof(long double) * 2 * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
      x[2 * i] = (double)((i * 7919) % 101) / 50.0 - 1;
      x[2 * i + 1] = (double)((i * 104729) % 97) / 48.0 - 1;
    }
    for (int inv = 0; inv < 2; inv++) {
      dft_ref(x, ref, n, inv);
      for (int64_t i = 0; i < 2 * n; i++) yd[i] = x[i], yf[i] = (float)x[i];
      ck_assert_int_eq(sr_kern_fft_1d(yd, n, 1, inv), 0);
      ck_assert_int_eq(sr_kern_fft_1d(yf, n, 0, inv), 0);
      long double mx = 1e-30L, ed = 0, ef = 0;
      for (int64_t i = 0; i < 2 * n; i++) {
        if (fabsl(ref[i]) > mx) mx = fabsl(ref[i]);
        if (fabsl(yd[i] - ref[i]) > ed) ed = fabsl(yd[i] - ref[i]);
        if (fabsl(yf[i] - ref[i]) > ef) ef = fabsl(yf[i] - ref[i]);
      }
      ck_assert_msg(ed / mx < 1e-14L, "n=%lld inv=%d: double error %Lg", (long long)n, inv, ed / mx);
      ck_assert_msg(ef / mx < 1e-6L, "n=%lld inv=%d: float error %Lg", (long long)n, inv, ef / mx);
    }
    /* rfft then irfft over (2, n): the input back */
    int64_t is[2] = {2, n}, cs[2] = {2, n / 2 + 1}, len[2] = {2, n};
    double *r = malloc(16 * (size_t)n), *back = malloc(16 * (size_t)n);
    double *c = malloc(16 * (size_t)(2 * (n / 2 + 1)));
    for (int64_t i = 0; i < 2 * n; i++) r[i] = x[i];
    ck_assert_int_eq(sr_kern_fft(SR_FFT_RFFT, SR_F64, r, is, c, cs, 2, len, 2), 0);
    ck_assert_int_eq(sr_kern_fft(SR_FFT_IRFFT, SR_C128, c, cs, back, is, 2, len, 2), 0);
    for (int64_t i = 0; i < 2 * n; i++) ck_assert_msg(fabs(back[i] - r[i]) < 1e-13, "n=%lld: irfft(rfft(x))", (long long)n);
    free(r), free(back), free(c);
    free(x), free(yd), free(yf), free(ref);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("exec");
  TCase *k = tcase_create("kernels");
  tcase_add_test(k, test_transpose);
  tcase_add_test(k, test_boxes);
  tcase_add_test(k, test_reduce);
  tcase_add_test(k, test_dot);
  tcase_add_test(k, test_elementwise);
  tcase_add_test(k, test_fft);
  suite_add_tcase(s, k);
  TCase *c = tcase_create("comm");
  tcase_add_checked_fixture(c, setup, teardown);
  tcase_add_test(c, test_groups);
  tcase_add_test(c, test_fold_order);
  tcase_add_test(c, test_redistribute_roundtrip);
  tcase_add_test(c, test_redistribute_collectives);
  suite_add_tcase(s, c);
  TCase *e = tcase_create("eval");
  tcase_add_checked_fixture(e, setup, teardown);
  tcase_add_test(e, test_eval_jaxpr);
  tcase_add_test(e, test_eval_sharded);
  tcase_add_test(e, test_memory_chain);
  tcase_add_test(e, test_scan_buffers);
  tcase_add_test(e, test_zeros_shared);
  tcase_set_timeout(e, 120);
  suite_add_tcase(s, e);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

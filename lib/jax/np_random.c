/* np_random.c: numpy.random -- np.random.default_rng(seed) and its
 * Generator (PCG64), np.random.RandomState and the legacy module functions
 * on numpy's global RandomState (MT19937): the streams numpy 1.24 draws,
 * bit for bit, from the bit generators and distributions of
 * exec/np_rng.h.  Each function follows its namesake in numpy's
 * numpy/random/_generator.pyx or mtrand.pyx (argument handling, the order
 * of the draws, the errors in numpy's words).
 *
 * Results are host arrays of numpy's dtypes (float64, int64), all made by
 * np_result; a draw with size=None is a Python float or int, as numpy's
 * is.  Parameters (loc, scale, low, high) are numbers or array-likes,
 * broadcast against each other and size as numpy broadcasts them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/trace.h"
#include "exec/array.h"
#include "exec/kern.h"
#include "exec/np_rng.h"
#include "jax/api.h"
#include "jax/builtins_exec.h"
#include "jax/jax.h"
#include "jax/np_host.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"

/* ---- the one constructor of results ---- */

/* A host array of dt with shape, a copy of data (row-major). */
static SrVal *np_result(SrDtype dt, int rank, const int64_t *shape, const void *data) {
  void *buf;
  SrVal *r = sr_ndarray_new(dt, rank, shape, &buf);
  if (!r) return NULL;
  int64_t numel = 1;
  for (int i = 0; i < rank; i++) numel *= shape[i];
  size_t n = (size_t)numel * sr_elem_size(dt);
  if (n) memcpy(buf, data, n);
  return r;
}

/* An array argument: a numpy ndarray (its host array) or a concrete
   jax.Array; NULL for anything else. */
static int is_array(SrVal *v) { return sr_is_ndarray(v) || sr_array_of(v) != NULL; }

static const SrType *array_type(SrVal *v) {
  if (sr_is_ndarray(v)) return sr_ndarray_array(v)->type;
  SrArrayObj *o = sr_array_of(v);
  return o ? o->type : NULL;
}

/* ---- generator objects ---- */

typedef struct NpRng {
  SrNpBitgen g;
} NpRng;

/* a Generator holds its bit generator, a PCG64 or MT19937 object */
typedef struct GenObj {
  SrVal *bg;
} GenObj;

/* a SeedSequence: the entropy as given and as words */
typedef struct SeedSeq {
  SrVal *entropy;
  uint32_t *w;
  size_t n;
} SeedSeq;

static void gen_free(void *p) {
  sr_unref(((GenObj *)p)->bg);
  free(p);
}

static void seedseq_free(void *p) {
  SeedSeq *q = p;
  sr_unref(q->entropy);
  free(q->w);
  free(q);
}

static void rng_repr(SrBuf *out, const SrVal *v);
static void rng_str(SrBuf *out, const SrVal *v);
static void bitgen_repr(SrBuf *out, const SrVal *v);
static void seedseq_repr(SrBuf *out, const SrVal *v);
static const SrLangOps generator_ops, randomstate_ops, seedseq_ops;
static const SrClass generator_class = {"numpy.random._generator.Generator", gen_free, rng_repr, rng_str,
                                        &generator_ops};
static const SrClass randomstate_class = {"numpy.random.mtrand.RandomState", free, rng_repr, rng_str,
                                          &randomstate_ops};
static const SrClass pcg64_class = {"numpy.random._pcg64.PCG64", free, bitgen_repr, NULL, NULL};
static const SrClass mt19937_class = {"numpy.random._mt19937.MT19937", free, bitgen_repr, NULL, NULL};
static const SrClass seedseq_class = {"numpy.random.bit_generator.SeedSequence", seedseq_free, seedseq_repr, NULL,
                                      &seedseq_ops};

static int is_bitgen(const SrVal *v) { return sr_is_obj(v, &pcg64_class) || sr_is_obj(v, &mt19937_class); }

/* str: Generator(PCG64); repr adds the address, as numpy's does */
static void rng_str(SrBuf *out, const SrVal *v) {
  if (sr_is_obj(v, &generator_class)) {
    const SrVal *bg = ((const GenObj *)v->obj.data)->bg;
    sr_buf_puts(out, sr_is_obj(bg, &pcg64_class) ? "Generator(PCG64)" : "Generator(MT19937)");
  } else {
    sr_buf_puts(out, "RandomState(MT19937)");
  }
}

static void rng_repr(SrBuf *out, const SrVal *v) {
  rng_str(out, v);
  sr_buf_printf(out, " at 0x%llX", (unsigned long long)(uintptr_t)v->obj.data);
}

/* an object's default repr */
static void bitgen_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<%s object at 0x%llx>", v->obj.cls->name, (unsigned long long)(uintptr_t)v->obj.data);
}

static void seedseq_repr(SrBuf *out, const SrVal *v) {
  const SeedSeq *q = v->obj.data;
  sr_buf_puts(out, "SeedSequence(\n    entropy=");
  sr_val_repr(out, q->entropy);
  sr_buf_puts(out, ",\n)");
}

/* fresh entropy, as numpy pulls it from the OS for seed=None */
static void os_entropy(uint32_t *w, size_t n) {
  /* getentropy gives at most 256 bytes a call */
  size_t done = 0;
  while (done < n) {
    size_t k = n - done < 64 ? n - done : 64;
    if (getentropy(w + done, k * sizeof *w) != 0) break;
    done += k;
  }
  if (done == n) return;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 20 ^ (uint64_t)getpid() << 40;
  for (size_t i = done; i < n; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL; /* Knuth's MMIX LCG, only as a last resort */
    w[i] = (uint32_t)(x >> 32);
  }
}

/* numpy's global RandomState (np.random.seed, rand, randn...) */
static NpRng global_rs;
static int global_seeded;

static NpRng *legacy_state(SrArgs *a) {
  if (a->self) return a->self->obj.data;
  if (!global_seeded) {
    uint32_t w[624];
    os_entropy(w, 624);
    sr_np_mt_seed_array(&global_rs.g, w, 624);
    global_seeded = 1;
  }
  return &global_rs;
}

static SrNpBitgen *gen_state(SrArgs *a) {
  const GenObj *o = a->self->obj.data;
  return &((NpRng *)o->bg->obj.data)->g;
}

/* ---- arguments ---- */

static int is_number(const SrVal *v) { return v->kind == SR_V_INT || v->kind == SR_V_BOOL || v->kind == SR_V_FLOAT; }

/* numpy's errors for a shape no array can have (its nonzero dimensions
   times the item size past the largest size, as numpy checks it, a zero
   dimension notwithstanding); n, or -2 */
static int check_dims(SrInterp *I, int n, const int64_t *shape) {
  uint64_t total = 8;
  int big = 0;
  for (int i = 0; i < n; i++) {
    if (shape[i] < 0) {
      sr_raise(I, "ValueError", "negative dimensions are not allowed");
      return -2;
    }
    if (shape[i] == 0) continue;
    if (total > (uint64_t)INT64_MAX / (uint64_t)shape[i]) big = 1;
    else total *= (uint64_t)shape[i];
  }
  if (big) {
    sr_raise(I, "ValueError",
             "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.");
    return -2;
  }
  return n;
}

/* size: -1 for None (a scalar), else the rank with shape filled; numpy's
   errors for a negative or non-integer size */
static int size_arg(SrInterp *I, SrVal *v, int64_t *shape) {
  if (!v || v->kind == SR_V_NONE) return -1;
  int n = 0;
  SrVal *one[1] = {v};
  SrVal **items = one;
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    items = v->seq.items;
    n = v->seq.n;
    if (n > SR_MAX_RANK) {
      sr_raise(I, "ValueError", "maximum supported dimension for an ndarray is %d, found %d", SR_MAX_RANK, n);
      return -2;
    }
  } else {
    n = 1;
  }
  for (int i = 0; i < n; i++) {
    const SrType *it = array_type(items[i]);
    if (it && it->ndim == 0 && sr_dtype_is_int(it->dtype)) {
      if (sr_as_int(I, items[i], "size", &shape[i]) < 0) return -2;
      continue;
    }
    if (items[i]->kind != SR_V_INT && items[i]->kind != SR_V_BOOL) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, items[i]);
      sr_raise(I, "TypeError", "expected a sequence of integers or a single integer, got '%s'", b.p);
      sr_buf_free(&b);
      return -2;
    }
    shape[i] = items[i]->i;
  }
  return check_dims(I, n, shape);
}

/* rand(*args) / randn(*args): the arguments are the shape */
static int shape_args(SrInterp *I, SrArgs *a, const char *fn, int64_t *shape) {
  if (a->nkw) {
    sr_raise(I, "TypeError", "%s() got an unexpected keyword argument '%s'", fn, a->kw[0]);
    return -2;
  }
  if (a->n == 0) return -1;
  if (a->n > SR_MAX_RANK) {
    sr_raise(I, "ValueError", "maximum supported dimension for an ndarray is %d, found %d", SR_MAX_RANK, a->n);
    return -2;
  }
  for (int i = 0; i < a->n; i++) {
    if (a->v[i]->kind != SR_V_INT && a->v[i]->kind != SR_V_BOOL) {
      sr_raise(I, "TypeError", "'%s' object cannot be interpreted as an integer", sr_val_kind_name(a->v[i]));
      return -2;
    }
    shape[i] = a->v[i]->i;
  }
  return check_dims(I, a->n, shape);
}

static size_t numel(int nd, const int64_t *shape) {
  size_t n = 1;
  for (int i = 0; i < nd; i++) n *= (size_t)shape[i];
  return n;
}

static void shape_str(SrBuf *b, int nd, const int64_t *shape) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < nd; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)shape[i]);
  if (nd == 1) sr_buf_putc(b, ',');
  sr_buf_putc(b, ')');
}

/* An array-like on the host: a number, nested lists or tuples of numbers
   (bool, then int64, then float64, as numpy infers them), or an array. */
typedef struct Host {
  SrDtype dt;
  int nd;
  int64_t shape[SR_MAX_RANK];
  size_t n;
  void *data; /* malloc'ed */
} Host;

static void host_free(Host *h) {
  free(h->data);
  h->data = NULL;
}

/* the shape of nested lists and the widest kind (0 bool, 1 int, 2 float);
   *leaf is the depth of the numbers (-1 before the first) */
static int list_scan(SrInterp *I, SrVal *v, int depth, Host *h, int *kind, int *leaf) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    if (*leaf >= 0 && depth >= *leaf) goto ragged;
    if (depth >= SR_MAX_RANK) {
      sr_raise(I, "ValueError", "maximum supported dimension for an ndarray is %d, found %d", SR_MAX_RANK, depth + 1);
      return -1;
    }
    if (depth == h->nd) {
      h->nd++;
      h->shape[depth] = v->seq.n;
    } else if (depth > h->nd || h->shape[depth] != v->seq.n) {
      goto ragged;
    }
    for (int i = 0; i < v->seq.n; i++)
      if (list_scan(I, v->seq.items[i], depth + 1, h, kind, leaf) < 0) return -1;
    return 0;
  }
  if (!is_number(v)) {
    sr_raise(I, "NotImplementedError", "shardrepl: numpy.random takes numbers and arrays of numbers here, not '%s'",
             sr_val_kind_name(v));
    return -1;
  }
  if (depth != h->nd || (*leaf >= 0 && depth != *leaf)) goto ragged;
  *leaf = depth;
  int k = v->kind == SR_V_FLOAT ? 2 : v->kind == SR_V_INT ? 1 : 0;
  if (k > *kind) *kind = k;
  return 0;
ragged:;
  int d = depth < h->nd ? depth : h->nd;
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "setting an array element with a sequence. The requested array has an inhomogeneous shape after %d "
                "dimensions. The detected shape was ", d);
  shape_str(&b, d, h->shape);
  sr_buf_puts(&b, " + inhomogeneous part.");
  sr_raise(I, "ValueError", "%s", b.p);
  sr_buf_free(&b);
  return -1;
}

static void list_fill(SrVal *v, Host *h, size_t *at) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    for (int i = 0; i < v->seq.n; i++) list_fill(v->seq.items[i], h, at);
    return;
  }
  char *p = (char *)h->data + *at * sr_elem_size(h->dt);
  (*at)++;
  if (h->dt == SR_F64) {
    double d = v->kind == SR_V_FLOAT ? v->f : (double)v->i;
    memcpy(p, &d, sizeof d);
  } else if (h->dt == SR_I64) {
    memcpy(p, &v->i, sizeof v->i);
  } else {
    *(uint8_t *)p = (uint8_t)(v->i != 0);
  }
}

static int host_of(SrInterp *I, SrVal *v, Host *h) {
  memset(h, 0, sizeof *h);
  if (sr_is_ndarray(v)) {
    const SrArray *arr = sr_ndarray_array(v);
    h->dt = arr->type->dtype;
    h->nd = arr->type->ndim;
    for (int i = 0; i < h->nd; i++) h->shape[i] = arr->type->dims[i].size;
    h->n = numel(h->nd, h->shape);
    size_t bytes = h->n * sr_elem_size(h->dt);
    h->data = sr_xmalloc(bytes + 1);
    if (bytes) memcpy(h->data, arr->shard[0]->data, bytes);
    return 0;
  }
  if (sr_array_of(v)) {
    SrArray *arr = sr_concrete_of(I, v, NULL);
    if (!arr) {
      if (!I->exc) sr_raise(I, "TypeError", "numpy.random needs concrete values, not a traced array");
      return -1;
    }
    h->dt = arr->type->dtype;
    h->nd = arr->type->ndim;
    for (int i = 0; i < h->nd; i++) h->shape[i] = arr->type->dims[i].size;
    h->n = numel(h->nd, h->shape);
    h->data = sr_concrete_host_data(I, arr);
    sr_array_unref(arr);
    return h->data || h->n == 0 ? 0 : -1;
  }
  int kind = 0, leaf = -1;
  if (list_scan(I, v, 0, h, &kind, &leaf) < 0) return -1;
  h->dt = kind == 2 ? SR_F64 : kind == 1 ? SR_I64 : SR_BOOL;
  h->n = numel(h->nd, h->shape);
  if (sr_check_mem(I, h->n, sr_elem_size(h->dt)) < 0) return -1;
  h->data = sr_xmalloc(h->n * sr_elem_size(h->dt) + 1);
  size_t at = 0;
  list_fill(v, h, &at);
  return 0;
}

static double host_f64(const Host *h, size_t i) {
  return sr_kern_get_f64(h->dt, (const char *)h->data + i * sr_elem_size(h->dt));
}

/* ---- continuous distributions (_common.pyx's cont) ---- */

enum {
  D_RANDOM, D_RANDOM_F32, D_STD_NORMAL_F32, D_STD_NORMAL, D_NORMAL, D_UNIFORM, D_GAUSS, D_LEGACY_NORMAL,
  D_STD_EXP, D_EXP, D_LEGACY_STD_EXP, D_LEGACY_EXP, D_LOGNORMAL, D_LEGACY_LOGNORMAL,
  D_GAMMA, D_LEGACY_GAMMA, D_BETA, D_LEGACY_BETA, D_STD_GAMMA, D_LEGACY_STD_GAMMA,
  /* two parameters (loc, scale), the same for both generators */
  D_LAPLACE, D_GUMBEL, D_LOGISTIC,
  /* one parameter (b), and none */
  D_CHISQUARE, D_LEGACY_CHISQUARE, D_STANDARD_T, D_LEGACY_STANDARD_T, D_RAYLEIGH, D_LEGACY_RAYLEIGH,
  D_WEIBULL, D_LEGACY_WEIBULL, D_PARETO, D_LEGACY_PARETO, D_POWER, D_LEGACY_POWER, D_CAUCHY, D_LEGACY_CAUCHY,
};

/* RandomState's standard exponential, -log(1 - U) */
static double legacy_std_exp(SrNpBitgen *g) { return -log(1.0 - sr_np_next_double(g)); }

/* random_laplace, random_gumbel, random_logistic: a rejected U draws again */
static double laplace(SrNpBitgen *g, double loc, double scale) {
  for (;;) {
    double u = sr_np_next_double(g);
    if (u >= 0.5) return loc - scale * log(2.0 - u - u);
    if (u > 0.0) return loc + scale * log(u + u);
  }
}

static double gumbel(SrNpBitgen *g, double loc, double scale) {
  for (;;) {
    double u = 1.0 - sr_np_next_double(g);
    if (u < 1.0) return loc - scale * log(-log(u));
  }
}

static double logistic(SrNpBitgen *g, double loc, double scale) {
  for (;;) {
    double u = sr_np_next_double(g);
    if (u > 0.0) return loc + scale * log(u / (1.0 - u));
  }
}

static double draw(SrNpBitgen *g, int d, double a, double b) {
  switch (d) {
  case D_RANDOM: return sr_np_next_double(g);
  case D_RANDOM_F32: return sr_np_next_float(g);
  case D_STD_NORMAL_F32: return sr_np_standard_normal_f(g);
  case D_STD_NORMAL: return sr_np_standard_normal(g);
  case D_NORMAL: return a + b * sr_np_standard_normal(g);
  case D_UNIFORM: return a + b * sr_np_next_double(g);
  case D_GAUSS: return sr_np_legacy_gauss(g);
  case D_LEGACY_NORMAL: return a + b * sr_np_legacy_gauss(g);
  case D_STD_EXP: return sr_np_standard_exponential(g);
  case D_EXP: return b * sr_np_standard_exponential(g);
  case D_LEGACY_STD_EXP: return -log(1.0 - sr_np_next_double(g));
  case D_LEGACY_EXP: return b * -log(1.0 - sr_np_next_double(g));
  case D_LOGNORMAL: return exp(a + b * sr_np_standard_normal(g));
  case D_LEGACY_LOGNORMAL: return exp(a + b * sr_np_legacy_gauss(g));
  /* gamma(shape a, scale b) */
  case D_GAMMA: return b * sr_np_standard_gamma(g, a, 0);
  case D_LEGACY_GAMMA: return b * sr_np_standard_gamma(g, a, 1);
  case D_STD_GAMMA: return sr_np_standard_gamma(g, b, 0);
  case D_LEGACY_STD_GAMMA: return sr_np_standard_gamma(g, b, 1);
  case D_BETA: return sr_np_beta(g, a, b, 0);
  case D_LEGACY_BETA: return sr_np_beta(g, a, b, 1);
  case D_LAPLACE: return laplace(g, a, b);
  case D_GUMBEL: return gumbel(g, a, b);
  case D_LOGISTIC: return logistic(g, a, b);
  case D_CHISQUARE: return 2.0 * sr_np_standard_gamma(g, b / 2.0, 0);
  case D_LEGACY_CHISQUARE: return 2.0 * sr_np_standard_gamma(g, b / 2.0, 1);
  case D_STANDARD_T: {
    double num = sr_np_standard_normal(g), den = sr_np_standard_gamma(g, b / 2, 0);
    return sqrt(b / 2) * num / sqrt(den);
  }
  case D_LEGACY_STANDARD_T: {
    double num = sr_np_legacy_gauss(g), den = sr_np_standard_gamma(g, b / 2, 1);
    return sqrt(b / 2) * num / sqrt(den);
  }
  case D_RAYLEIGH: return b * sqrt(2.0 * sr_np_standard_exponential(g));
  case D_LEGACY_RAYLEIGH: return b * sqrt(-2.0 * log1p(-sr_np_next_double(g)));
  case D_WEIBULL: return b == 0.0 ? 0.0 : pow(sr_np_standard_exponential(g), 1. / b);
  case D_LEGACY_WEIBULL: return b == 0.0 ? 0.0 : pow(legacy_std_exp(g), 1. / b);
  case D_PARETO: return expm1(sr_np_standard_exponential(g) / b);
  case D_LEGACY_PARETO: return exp(legacy_std_exp(g) / b) - 1;
  case D_POWER: return pow(-expm1(-sr_np_standard_exponential(g)), 1. / b);
  case D_LEGACY_POWER: return pow(1 - exp(-legacy_std_exp(g)), 1. / b);
  case D_CAUCHY: {
    double x = sr_np_standard_normal(g);
    return x / sr_np_standard_normal(g);
  }
  default: {
    double x = sr_np_legacy_gauss(g);
    return x / sr_np_legacy_gauss(g);
  }
  }
}

/* size (rank nd, or -1) draws of d without parameters */
static SrVal *fill0(SrInterp *I, SrNpBitgen *g, int d, int nd, const int64_t *shape) {
  if (nd < 0) return sr_float(NULL, draw(g, d, 0, 0));
  size_t n = numel(nd, shape);
  if (d == D_RANDOM_F32 || d == D_STD_NORMAL_F32) {
    if (sr_check_mem(I, n, sizeof(float)) < 0) return NULL;
    float *out = sr_xmalloc(n * sizeof *out + 1);
    for (size_t i = 0; i < n; i++) out[i] = (float)draw(g, d, 0, 0);
    SrVal *r = np_result(SR_F32, nd, shape, out);
    free(out);
    return r;
  }
  if (sr_check_mem(I, n, sizeof(double)) < 0) return NULL;
  double *out = sr_xmalloc(n * sizeof *out + 1);
  for (size_t i = 0; i < n; i++) out[i] = draw(g, d, 0, 0);
  SrVal *r = np_result(SR_F64, nd, shape, out);
  free(out);
  return r;
}

/* PyArray_Broadcast: the broadcast shape of k shapes, or -1 with numpy's
   error -- np.broadcast's naming the first pair that disagrees, or (ufunc)
   a ufunc's naming both operands */
static int broadcast_shapes(SrInterp *I, int k, const int *nds, const int64_t *const *shapes, int64_t *out, int ufunc) {
  int nd = 0, src = 0;
  for (int j = 0; j < k; j++)
    if (nds[j] > nd) nd = nds[j];
  for (int i = 0; i < nd; i++) {
    out[i] = 1;
    for (int j = 0; j < k; j++) {
      int kk = i + nds[j] - nd;
      if (kk < 0 || shapes[j][kk] == 1) continue;
      if (out[i] == 1) {
        out[i] = shapes[j][kk];
        src = j;
      } else if (out[i] != shapes[j][kk]) {
        SrBuf b = SR_BUF_INIT;
        if (ufunc) {
          sr_buf_puts(&b, "operands could not be broadcast together with shapes ");
          for (int m = 0; m < k; m++) {
            shape_str(&b, nds[m], shapes[m]);
            sr_buf_putc(&b, ' ');
          }
        } else {
          sr_buf_printf(&b,
                        "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between "
                        "arg %d with shape ",
                        src);
          shape_str(&b, nds[src], shapes[src]);
          sr_buf_printf(&b, " and arg %d with shape ", j);
          shape_str(&b, nds[j], shapes[j]);
          sr_buf_putc(&b, '.');
        }
        sr_raise(I, "ValueError", "%s", b.p);
        sr_buf_free(&b);
        return -1;
      }
    }
  }
  return nd;
}

/* validate_output_shape: size (nd) must be the broadcast shape (ond) */
static int check_output(SrInterp *I, int nd, const int64_t *shape, int ond, const int64_t *os) {
  if (ond == nd && memcmp(os, shape, sizeof(int64_t) * (size_t)nd) == 0) return 0;
  SrBuf m = SR_BUF_INIT;
  sr_buf_puts(&m, "Output size ");
  shape_str(&m, nd, shape);
  sr_buf_puts(&m, " is not compatible with broadcast dimensions of inputs ");
  shape_str(&m, ond, os);
  sr_buf_putc(&m, '.');
  sr_raise(I, "ValueError", "%s", m.p);
  sr_buf_free(&m);
  return -1;
}

/* the flat index into h of the element at flat index i of shape (nd) */
static size_t bcast_index(const Host *h, int nd, const int64_t *shape, size_t i) {
  size_t at = 0, mul = 1;
  for (int d = nd - 1; d >= 0; d--) {
    size_t c = i % (size_t)shape[d];
    i /= (size_t)shape[d];
    int hd = d - (nd - h->nd);
    if (hd < 0) break;
    if (h->shape[hd] != 1) at += c * mul;
    mul *= (size_t)h->shape[hd];
  }
  return at;
}

/* What a distribution of two parameters checks. */
typedef struct Cont2 {
  int d;              /* what draw() draws with a and b */
  const char *b_name; /* CONS_NON_NEGATIVE on b (CONS_POSITIVE with b_pos), or NULL */
  int uniform;        /* b is high - low: 1 Generator's, 2 RandomState's */
  const char *a_name; /* the same for a, checked first */
  int a_pos, b_pos;
  int one;            /* one parameter: b alone (cont_broadcast_1) */
} Cont2;

/* check_constraint and check_array_constraint alike: CONS_NON_NEGATIVE
   (NaN passes), CONS_POSITIVE (NaN passes too) */
static int cons_check(SrInterp *I, double v, const char *name, int positive) {
  if (!name) return 0;
  if (positive ? v <= 0 : !isnan(v) && signbit(v)) {
    sr_raise(I, "ValueError", "%s %s 0", name, positive ? "<=" : "<");
    return -1;
  }
  return 0;
}

/* cont(func, size, a, b): scalars draw size values (or one float); array
   parameters broadcast against each other and size */
static SrVal *cont2(SrInterp *I, SrNpBitgen *g, const Cont2 *c, SrVal *av, SrVal *bv, SrVal *sizev) {
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, sizev, shape);
  if (nd < -1) return NULL;
  Host ha, hb;
  if (host_of(I, av, &ha) < 0) return NULL;
  if (host_of(I, bv, &hb) < 0) {
    host_free(&ha);
    return NULL;
  }
  SrVal *res = NULL;
  double *b = sr_xmalloc(hb.n * sizeof *b + 1);
  for (size_t i = 0; i < hb.n; i++) b[i] = host_f64(&hb, i);
  int scalar = ha.nd == 0 && hb.nd == 0;
  if (c->uniform) {
    /* b is high, made high - low: broadcast low and high first */
    int nds[2] = {hb.nd, ha.nd};
    const int64_t *shs[2] = {hb.shape, ha.shape};
    int64_t rs[SR_MAX_RANK];
    int rnd = broadcast_shapes(I, 2, nds, shs, rs, 1);
    if (rnd < 0) goto done;
    size_t rn = numel(rnd, rs);
    double *r = sr_xmalloc(rn * sizeof *r + 1);
    int finite = 1;
    for (size_t i = 0; i < rn; i++) {
      r[i] = b[bcast_index(&hb, rnd, rs, i)] - host_f64(&ha, bcast_index(&ha, rnd, rs, i));
      if (!isfinite(r[i])) finite = 0;
    }
    free(b);
    b = r;
    hb.nd = rnd;
    memcpy(hb.shape, rs, sizeof(int64_t) * (size_t)rnd);
    hb.n = rn;
    if (!finite) {
      sr_raise(I, "OverflowError", "%s",
               scalar && c->uniform == 1 ? "high - low range exceeds valid bounds" : "Range exceeds valid bounds");
      goto done;
    }
  }
  for (size_t i = 0; i < ha.n; i++)
    if (cons_check(I, host_f64(&ha, i), c->a_name, c->a_pos) < 0) goto done;
  for (size_t i = 0; i < hb.n; i++)
    if (cons_check(I, b[i], c->b_name, c->b_pos) < 0) goto done;
  if (scalar) {
    double a0 = host_f64(&ha, 0);
    if (nd < 0) {
      res = sr_float(NULL, draw(g, c->d, a0, b[0]));
      goto done;
    }
    size_t n = numel(nd, shape);
    if (sr_check_mem(I, n, sizeof(double)) < 0) goto done;
    double *out = sr_xmalloc(n * sizeof *out + 1);
    for (size_t i = 0; i < n; i++) out[i] = draw(g, c->d, a0, b[0]);
    res = np_result(SR_F64, nd, shape, out);
    free(out);
    goto done;
  }
  /* MultiIterNew2(a, b), or MultiIterNew3(out, a, b) with size; one
     parameter: b's shape, or MultiIterNew2(out, b) */
  int64_t os[SR_MAX_RANK];
  int nds[3] = {nd, ha.nd, hb.nd};
  const int64_t *shs[3] = {shape, ha.shape, hb.shape};
  if (c->one) {
    nds[1] = hb.nd;
    shs[1] = hb.shape;
  }
  int k = c->one ? 1 : 2;
  int ond = nd < 0 ? broadcast_shapes(I, k, nds + 1, shs + 1, os, 0) : broadcast_shapes(I, k + 1, nds, shs, os, 0);
  if (ond < 0 || (nd >= 0 && check_output(I, nd, shape, ond, os) < 0)) goto done;
  size_t n = numel(ond, os);
  if (sr_check_mem(I, n, sizeof(double)) < 0) goto done;
  double *out = sr_xmalloc(n * sizeof *out + 1);
  for (size_t i = 0; i < n; i++)
    out[i] = draw(g, c->d, host_f64(&ha, bcast_index(&ha, ond, os, i)), b[bcast_index(&hb, ond, os, i)]);
  res = np_result(SR_F64, ond, os, out);
  free(out);
done:
  free(b);
  host_free(&ha);
  host_free(&hb);
  return res;
}

/* ---- dtypes ---- */

/* a dtype argument: SR_F64..., or -1 (Python's float, int and bool are
   numpy's float64, int64 and bool) */
static int dtype_of(SrVal *v, SrDtype dflt) {
  if (!v || v->kind == SR_V_NONE) return (int)dflt;
  if (v->kind == SR_V_DTYPE) return (int)v->dtype;
  if (v->kind == SR_V_STR || v->kind == SR_V_WORD) {
    int d = sr_dtype_lookup(v->str.s, v->str.n);
    return d >= 0 && d < SR_NBUILTIN_DTYPES ? d : -1;
  }
  const char *nm = sr_is_obj(v, &sr_builtin_class) ? sr_builtin_name(v) : NULL;
  if (nm && strcmp(nm, "builtins.float") == 0) return SR_F64;
  if (nm && strcmp(nm, "builtins.int") == 0) return SR_I64;
  if (nm && strcmp(nm, "builtins.bool") == 0) return SR_BOOL;
  return -1;
}

static SrVal *bad_dtype(SrInterp *I, SrVal *v, int d, const char *fn) {
  if (d < 0) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, v);
    sr_raise(I, "TypeError", "data type %s not understood", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  return sr_raise(I, "TypeError", "Unsupported dtype dtype('%s') for %s", sr_dtype_name((SrDtype)d), fn);
}

/* ---- Generator's methods ---- */

/* random and standard_normal: (size=None, dtype=float64, out=None),
   filled by the f64 or the f32 distribution. */
static SrVal *gen_fill_f(SrInterp *I, SrArgs *a, const char *fn, int f64, int f32) {
  SrVal *p[3];
  if (sr_args_parse(I, a, fn, "size=, dtype=, out=", p) < 0) return NULL;
  int d = dtype_of(p[1], SR_F64);
  if (d != SR_F64 && d != SR_F32) return bad_dtype(I, p[1], d, fn);
  if (p[2] && p[2]->kind != SR_V_NONE) return sr_raise(I, "NotImplementedError", "shardrepl: %s(out=...)", fn);
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, p[0], shape);
  if (nd < -1) return NULL;
  return fill0(I, gen_state(a), d == SR_F64 ? f64 : f32, nd, shape);
}

static SrVal *gen_random(SrInterp *I, SrArgs *a) { return gen_fill_f(I, a, "random", D_RANDOM, D_RANDOM_F32); }

static SrVal *gen_standard_normal(SrInterp *I, SrArgs *a) {
  return gen_fill_f(I, a, "standard_normal", D_STD_NORMAL, D_STD_NORMAL_F32);
}

static SrVal *zero(void) { return sr_float(NULL, 0.0); }
static SrVal *one(void) { return sr_float(NULL, 1.0); }

static SrVal *cont2_call(SrInterp *I, SrArgs *a, SrNpBitgen *g, const char *fn, const char *spec,
                         SrVal *(*da)(void), SrVal *(*db)(void), const Cont2 *c) {
  SrVal *p[3];
  if (sr_args_parse(I, a, fn, spec, p) < 0) return NULL;
  SrVal *av = p[0] ? sr_ref(p[0]) : da(), *bv = p[1] ? sr_ref(p[1]) : db();
  SrVal *r = cont2(I, g, c, av, bv, p[2]);
  sr_unref(av);
  sr_unref(bv);
  return r;
}

static SrVal *gen_normal(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_NORMAL, "scale", 0, NULL, 0, 0, 0};
  return cont2_call(I, a, gen_state(a), "normal", "loc=, scale=, size=", zero, one, &c);
}

static SrVal *gen_uniform(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_UNIFORM, "high - low", 1, NULL, 0, 0, 0};
  return cont2_call(I, a, gen_state(a), "uniform", "low=, high=, size=", zero, one, &c);
}

/* int(f) for the bounds checks: past +-2**100 (and NaN) it is out of every
   dtype's bounds all the same */
static __int128 float_int(double f) {
  const double big = 1267650600228229401496703205376.0; /* 2**100 */
  if (isnan(f) || f >= big) return (__int128)1 << 100;
  if (f <= -big) return -((__int128)1 << 100);
  return (__int128)f;
}

/* an element of an array-like low or high as numpy casts it to an integer
   (a float truncated) */
static __int128 host_int(const Host *h, size_t i) {
  const char *p = (const char *)h->data + i * sr_elem_size(h->dt);
  if (sr_dtype_is_float(h->dt)) return float_int(sr_kern_get_f64(h->dt, p));
  if (h->dt == SR_U64) {
    uint64_t u;
    memcpy(&u, p, sizeof u);
    return u;
  }
  return sr_kern_get_i64(h->dt, p);
}

static SrVal *bounds_error(SrInterp *I, int closed, const Host *low) {
  int any = 0;
  for (size_t i = 0; i < low->n && !any; i++) any = host_int(low, i) != 0;
  if (!any) return sr_raise(I, "ValueError", "high %s 0", closed ? "<" : "<=");
  return sr_raise(I, "ValueError", "low %s high", closed ? ">" : ">=");
}

/* _rand_*_broadcast: array-like low and high, one bounded draw per element
   of the broadcast shape (or size), in C order */
static SrVal *bounded_bcast(SrInterp *I, SrNpBitgen *g, SrVal *lowv, SrVal *highv, int nd, const int64_t *shape,
                            int d, __int128 lb, __int128 ub, int closed, int masked) {
  Host hl, hh;
  SrVal *zero_v = lowv ? NULL : sr_int(NULL, 0);
  int rc = host_of(I, lowv ? lowv : zero_v, &hl);
  sr_unref(zero_v);
  if (rc < 0) return NULL;
  if (host_of(I, highv, &hh) < 0) {
    host_free(&hl);
    return NULL;
  }
  SrVal *res = NULL;
  uint64_t *u = NULL;
  const char *dn = sr_dtype_name((SrDtype)d);
  for (size_t i = 0; i < hl.n; i++)
    if (host_int(&hl, i) < lb) {
      sr_raise(I, "ValueError", "low is out of bounds for %s", dn);
      goto done;
    }
  int big = d == SR_I64 || d == SR_U64;
  for (size_t i = 0; i < hh.n; i++) {
    __int128 h1 = host_int(&hh, i) - !closed;
    if (big && h1 < lb) {
      bounds_error(I, closed, &hl);
      goto done;
    }
    if (h1 > ub) {
      sr_raise(I, "ValueError", "high is out of bounds for %s", dn);
      goto done;
    }
  }
  int64_t os[SR_MAX_RANK];
  int nds[3] = {hl.nd, hh.nd, nd < 0 ? 0 : nd};
  const int64_t *shs[3] = {hl.shape, hh.shape, shape};
  /* low > high - 1 anywhere, over the pairs broadcasting meets */
  int pnd = broadcast_shapes(I, 2, nds, shs, os, 1);
  if (pnd < 0) goto done;
  size_t pn = numel(pnd, os);
  for (size_t i = 0; i < pn; i++)
    if (host_int(&hl, bcast_index(&hl, pnd, os, i)) > host_int(&hh, bcast_index(&hh, pnd, os, i)) - !closed) {
      bounds_error(I, closed, &hl);
      goto done;
    }
  /* MultiIterNew3(low, high, out) with size */
  int ond = broadcast_shapes(I, nd < 0 ? 2 : 3, nds, shs, os, 0);
  if (ond < 0 || (nd >= 0 && check_output(I, nd, shape, ond, os) < 0)) goto done;
  size_t n = numel(ond, os);
  if (sr_check_mem(I, n, sizeof(uint64_t)) < 0) goto done;
  u = sr_xmalloc(n * sizeof *u + 1);
  for (size_t i = 0; i < n; i++) {
    __int128 lo = host_int(&hl, bcast_index(&hl, ond, os, i));
    __int128 hi = host_int(&hh, bcast_index(&hh, ond, os, i)) - !closed;
    sr_np_bounded_uint64_fill(g, (uint64_t)lo, (uint64_t)(hi - lo), 1, masked, &u[i]);
  }
  if (d == SR_I32 || d == SR_U32) {
    uint32_t *w = sr_xmalloc(n * sizeof *w + 1);
    for (size_t i = 0; i < n; i++) w[i] = (uint32_t)u[i];
    res = np_result((SrDtype)d, ond, os, w);
    free(w);
  } else {
    res = np_result((SrDtype)d, ond, os, u);
  }
done:
  free(u);
  host_free(&hl);
  host_free(&hh);
  return res;
}

static SrVal *gen_lognormal(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_LOGNORMAL, "sigma", 0, NULL, 0, 0, 0};
  return cont2_call(I, a, gen_state(a), "lognormal", "mean=, sigma=, size=", zero, one, &c);
}

/* exponential(scale=1.0, size=None): a one-parameter cont, here as the
   second parameter of cont2 with a scalar first */
static SrVal *exponential(SrInterp *I, SrArgs *a, SrNpBitgen *g, int d) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "exponential", "scale=, size=", p) < 0) return NULL;
  static const Cont2 gen = {D_EXP, "scale", 0, NULL, 0, 0, 1}, leg = {D_LEGACY_EXP, "scale", 0, NULL, 0, 0, 1};
  SrVal *av = zero(), *bv = p[0] ? sr_ref(p[0]) : one();
  SrVal *r = cont2(I, g, d == D_EXP ? &gen : &leg, av, bv, p[1]);
  sr_unref(av);
  sr_unref(bv);
  return r;
}

static SrVal *gen_exponential(SrInterp *I, SrArgs *a) { return exponential(I, a, gen_state(a), D_EXP); }

static SrVal *gen_standard_exponential(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "standard_exponential", "size=, dtype=, method=, out=", p) < 0) return NULL;
  int d = dtype_of(p[1], SR_F64);
  if (d == SR_F32) return sr_raise(I, "NotImplementedError", "shardrepl: standard_exponential(dtype=float32)");
  if (d != SR_F64) return bad_dtype(I, p[1], d, "standard_exponential");
  if (p[2] && (p[2]->kind != SR_V_STR || strcmp(p[2]->str.s, "zig") != 0))
    return sr_raise(I, "NotImplementedError", "shardrepl: standard_exponential(method=...) other than 'zig'");
  if (p[3] && p[3]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "shardrepl: standard_exponential(out=...)");
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, p[0], shape);
  if (nd < -1) return NULL;
  return fill0(I, gen_state(a), D_STD_EXP, nd, shape);
}

/* poisson(lam=1.0, size=None): _common.pyx's disc with CONS_POISSON (the
   scalar's checks in check_constraint's order, an array's in
   check_array_constraint's) */
static SrVal *poisson(SrInterp *I, SrArgs *a, SrNpBitgen *g, int legacy) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "poisson", "lam=, size=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, p[1], shape);
  if (nd < -1) return NULL;
  Host h;
  SrVal *lamv = p[0] ? sr_ref(p[0]) : one();
  int rc = host_of(I, lamv, &h);
  sr_unref(lamv);
  if (rc < 0) return NULL;
  /* np.iinfo('int64').max - np.sqrt(np.iinfo('int64').max) * 10, in doubles */
  const double lam_max = (double)INT64_MAX - sqrt((double)INT64_MAX) * 10;
  SrVal *res = NULL;
  int64_t *out = NULL;
  for (size_t i = 0; i < h.n; i++) {
    double l = host_f64(&h, i);
    const char *msg = NULL;
    if (h.nd == 0) msg = !(l >= 0) ? "lam < 0 or lam is NaN" : !(l <= lam_max) ? "lam value too large" : NULL;
    else msg = !(l <= lam_max) ? "lam value too large" : !(l >= 0) ? "lam < 0 or lam contains NaNs" : NULL;
    if (msg) {
      sr_raise(I, "ValueError", "%s", msg);
      goto done;
    }
  }
  if (h.nd == 0 && nd < 0) {
    res = sr_int(NULL, sr_np_poisson(g, host_f64(&h, 0)));
    goto done;
  }
  int64_t os[SR_MAX_RANK];
  int ond = h.nd;
  if (h.nd == 0) {
    ond = nd;
    memcpy(os, shape, sizeof(int64_t) * (size_t)nd);
  } else if (nd < 0) {
    memcpy(os, h.shape, sizeof(int64_t) * (size_t)h.nd);
  } else {
    /* MultiIterNew2(randoms, lam), then validate_output_shape */
    int nds[2] = {nd, h.nd};
    const int64_t *shs[2] = {shape, h.shape};
    ond = broadcast_shapes(I, 2, nds, shs, os, 0);
    if (ond < 0 || check_output(I, nd, shape, ond, os) < 0) goto done;
  }
  size_t n = numel(ond, os);
  if (sr_check_mem(I, n, sizeof(int64_t)) < 0) goto done;
  out = sr_xmalloc(n * sizeof *out + 1);
  for (size_t i = 0; i < n; i++) out[i] = sr_np_poisson(g, host_f64(&h, h.nd ? bcast_index(&h, ond, os, i) : 0));
  res = np_result(SR_I64, ond, os, out);
done:
  (void)legacy; /* legacy_random_poisson is random_poisson; LEGACY_POISSON_LAM_MAX is the same on LP64 */
  free(out);
  host_free(&h);
  return res;
}

static SrVal *gen_poisson(SrInterp *I, SrArgs *a) { return poisson(I, a, gen_state(a), 0); }

/* binomial(n, p, size=None): n truncated to an integer, p a float, the
   checks p's first (bounded to [0, 1]) then n's (not negative), in the
   scalar's words or an array's */
static SrVal *binomial(SrInterp *I, SrArgs *a, SrNpBitgen *g, int legacy) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "binomial", "n, p, size=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, p[2], shape);
  if (nd < -1) return NULL;
  Host hp, hn;
  if (host_of(I, p[1], &hp) < 0) return NULL;
  if (host_of(I, p[0], &hn) < 0) {
    host_free(&hp);
    return NULL;
  }
  SrVal *res = NULL;
  int64_t *out = NULL;
  int scalar = hp.nd == 0 && hn.nd == 0;
  for (size_t i = 0; i < hp.n; i++) {
    double v = host_f64(&hp, i);
    if (!(v >= 0) || !(v <= 1)) {
      sr_raise(I, "ValueError", scalar ? "p < 0, p > 1 or p is NaN" : "p < 0, p > 1 or p contains NaNs");
      goto done;
    }
  }
  for (size_t i = 0; i < hn.n; i++)
    if (host_int(&hn, i) < 0) {
      sr_raise(I, "ValueError", "n < 0");
      goto done;
    }
  if (scalar && nd < 0) {
    res = sr_int(NULL, sr_np_binomial(g, host_f64(&hp, 0), (int64_t)host_int(&hn, 0), legacy));
    goto done;
  }
  int64_t os[SR_MAX_RANK];
  int ond = nd;
  if (scalar) {
    memcpy(os, shape, sizeof(int64_t) * (size_t)nd);
  } else {
    /* MultiIterNew2(p, n), or MultiIterNew3(randoms, p, n) with size */
    int nds[3] = {nd, hp.nd, hn.nd};
    const int64_t *shs[3] = {shape, hp.shape, hn.shape};
    ond = nd < 0 ? broadcast_shapes(I, 2, nds + 1, shs + 1, os, 0) : broadcast_shapes(I, 3, nds, shs, os, 0);
    if (ond < 0 || (nd >= 0 && check_output(I, nd, shape, ond, os) < 0)) goto done;
  }
  size_t n = numel(ond, os);
  if (sr_check_mem(I, n, sizeof(int64_t)) < 0) goto done;
  out = sr_xmalloc(n * sizeof *out + 1);
  for (size_t i = 0; i < n; i++) {
    double pv = host_f64(&hp, scalar ? 0 : bcast_index(&hp, ond, os, i));
    int64_t nv = (int64_t)host_int(&hn, scalar ? 0 : bcast_index(&hn, ond, os, i));
    out[i] = sr_np_binomial(g, pv, nv, legacy);
  }
  res = np_result(SR_I64, ond, os, out);
done:
  free(out);
  host_free(&hp);
  host_free(&hn);
  return res;
}

static SrVal *gen_binomial(SrInterp *I, SrArgs *a) { return binomial(I, a, gen_state(a), 0); }

static SrVal *gen_gamma(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_GAMMA, "scale", 0, "shape", 0, 0, 0};
  return cont2_call(I, a, gen_state(a), "gamma", "shape, scale=, size=", one, one, &c);
}

static SrVal *gen_beta(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_BETA, "b", 0, "a", 1, 1, 0};
  return cont2_call(I, a, gen_state(a), "beta", "a, b, size=", one, one, &c);
}

/* standard_gamma(shape, size=None): gamma with scale 1 */
static SrVal *standard_gamma(SrInterp *I, SrArgs *a, SrNpBitgen *g, int legacy) {
  SrVal *p[4] = {0};
  if (sr_args_parse(I, a, "standard_gamma", legacy ? "shape, size=" : "shape, size=, dtype=, out=", p) < 0) return NULL;
  if (!legacy) {
    int d = dtype_of(p[2], SR_F64);
    if (d == SR_F32) return sr_raise(I, "NotImplementedError", "shardrepl: standard_gamma(dtype=float32)");
    if (d != SR_F64) return bad_dtype(I, p[2], d, "standard_gamma");
    if (p[3] && p[3]->kind != SR_V_NONE)
      return sr_raise(I, "NotImplementedError", "shardrepl: standard_gamma(out=...)");
  }
  static const Cont2 gen = {D_STD_GAMMA, "shape", 0, NULL, 0, 0, 1};
  static const Cont2 leg = {D_LEGACY_STD_GAMMA, "shape", 0, NULL, 0, 0, 1};
  SrVal *av = zero();
  SrVal *r = cont2(I, g, legacy ? &leg : &gen, av, p[0], p[1]);
  sr_unref(av);
  return r;
}

static SrVal *gen_standard_gamma(SrInterp *I, SrArgs *a) { return standard_gamma(I, a, gen_state(a), 0); }

/* The distributions that are one cont() call: (loc, scale) ones, one
   parameter ones, and standard_cauchy with none. */
typedef struct Simple {
  const char *name;
  int gen, legacy;  /* draw()'s codes */
  const char *param; /* one parameter's name (NULL: loc and scale) */
  int positive;      /* CONS_POSITIVE, else CONS_NON_NEGATIVE */
  int required;      /* the one parameter has no default (else 1.0) */
} Simple;

static const Simple simple[] = {
  {"laplace", D_LAPLACE, D_LAPLACE, NULL, 0, 0},
  {"gumbel", D_GUMBEL, D_GUMBEL, NULL, 0, 0},
  {"logistic", D_LOGISTIC, D_LOGISTIC, NULL, 0, 0},
  {"chisquare", D_CHISQUARE, D_LEGACY_CHISQUARE, "df", 1, 1},
  {"standard_t", D_STANDARD_T, D_LEGACY_STANDARD_T, "df", 1, 1},
  {"rayleigh", D_RAYLEIGH, D_LEGACY_RAYLEIGH, "scale", 0, 0},
  {"weibull", D_WEIBULL, D_LEGACY_WEIBULL, "a", 0, 1},
  {"pareto", D_PARETO, D_LEGACY_PARETO, "a", 1, 1},
  {"power", D_POWER, D_LEGACY_POWER, "a", 1, 1},
  {"standard_cauchy", D_CAUCHY, D_LEGACY_CAUCHY, NULL, 0, 0},
  {NULL, 0, 0, NULL, 0, 0},
};

static SrVal *simple_call(SrInterp *I, SrArgs *a, SrNpBitgen *g, const Simple *t, int legacy) {
  int d = legacy ? t->legacy : t->gen;
  if (d == D_CAUCHY || d == D_LEGACY_CAUCHY) {
    SrVal *p[1];
    if (sr_args_parse(I, a, t->name, "size=", p) < 0) return NULL;
    int64_t shape[SR_MAX_RANK];
    int nd = size_arg(I, p[0], shape);
    return nd < -1 ? NULL : fill0(I, g, d, nd, shape);
  }
  Cont2 c = {d, t->param ? t->param : "scale", 0, NULL, 0, t->positive, t->param != NULL};
  if (!t->param) return cont2_call(I, a, g, t->name, "loc=, scale=, size=", zero, one, &c);
  SrVal *p[2];
  if (sr_args_parse(I, a, t->name, t->required ? (t->param[0] == 'd' ? "df, size=" : "a, size=") : "scale=, size=", p) <
      0)
    return NULL;
  SrVal *av = zero(), *bv = p[0] ? sr_ref(p[0]) : one();
  SrVal *r = cont2(I, g, &c, av, bv, p[1]);
  sr_unref(av);
  sr_unref(bv);
  return r;
}

/* each one's Generator method and RandomState method (the module's function) */
#define SIMPLE(NAME, I_)                                                                                         \
  static SrVal *gen_##NAME(SrInterp *I, SrArgs *a) { return simple_call(I, a, gen_state(a), &simple[I_], 0); } \
  static SrVal *rs_##NAME(SrInterp *I, SrArgs *a) { return simple_call(I, a, &legacy_state(a)->g, &simple[I_], 1); }
SIMPLE(laplace, 0)
SIMPLE(gumbel, 1)
SIMPLE(logistic, 2)
SIMPLE(chisquare, 3)
SIMPLE(standard_t, 4)
SIMPLE(rayleigh, 5)
SIMPLE(weibull, 6)
SIMPLE(pareto, 7)
SIMPLE(power, 8)
SIMPLE(standard_cauchy, 9)
#undef SIMPLE

/* _bounded_integers.pyx's _rand_{int64,int32,uint64,uint32}: masked
   rejection for RandomState, Lemire's for Generator; array-like low or
   high go to bounded_bcast */
static SrVal *bounded(SrInterp *I, SrNpBitgen *g, SrVal *lowv, SrVal *highv, SrVal *sizev, SrVal *dtv,
                      int closed, int masked, const char *fn) {
  if (!highv || highv->kind == SR_V_NONE) {
    highv = lowv;
    lowv = NULL;
  }
  int d = dtype_of(dtv, SR_I64);
  __int128 lb, ub;
  switch (d) {
  case SR_I64: lb = INT64_MIN, ub = INT64_MAX; break;
  case SR_I32: lb = INT32_MIN, ub = INT32_MAX; break;
  case SR_U64: lb = 0, ub = UINT64_MAX; break;
  case SR_U32: lb = 0, ub = UINT32_MAX; break;
  default:
    if (d == SR_BOOL || d == SR_I8 || d == SR_I16 || d == SR_U8 || d == SR_U16)
      return sr_raise(I, "NotImplementedError", "shardrepl: %s(dtype=%s)", fn, sr_dtype_name((SrDtype)d));
    return bad_dtype(I, dtv, d, fn);
  }
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, sizev, shape);
  if (nd < -1) return NULL;
  size_t n = nd < 0 ? 1 : numel(nd, shape);
  if (nd >= 0 && n == 0) return np_result((SrDtype)d, nd, shape, "");
  __int128 lim[2] = {0, 0};
  SrVal *vs[2] = {lowv, highv};
  for (int k = 0; k < 2; k++) {
    SrVal *v = vs[k];
    if (!v) continue;
    if (v->kind == SR_V_FLOAT) {
      if (isnan(v->f)) return sr_raise(I, "ValueError", "cannot convert float NaN to integer");
      if (!isfinite(v->f)) return sr_raise(I, "OverflowError", "cannot convert float infinity to integer");
      lim[k] = float_int(v->f); /* int(low), as numpy takes it */
    } else if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
      lim[k] = v->i;
    } else {
      return bounded_bcast(I, g, lowv, highv, nd, shape, d, lb, ub, closed, masked);
    }
  }
  __int128 low = lim[0], high = lim[1];
  if (!closed) high -= 1;
  if (low < lb) return sr_raise(I, "ValueError", "low is out of bounds for %s", sr_dtype_name((SrDtype)d));
  if (high > ub) return sr_raise(I, "ValueError", "high is out of bounds for %s", sr_dtype_name((SrDtype)d));
  if (low > high) {
    if (low == 0) return sr_raise(I, "ValueError", "high %s 0", closed ? "<" : "<=");
    return sr_raise(I, "ValueError", "low %s high", closed ? ">" : ">=");
  }
  if (sr_check_mem(I, n, sizeof(uint64_t)) < 0) return NULL;
  uint64_t *u = sr_xmalloc(n * sizeof *u);
  sr_np_bounded_uint64_fill(g, (uint64_t)low, (uint64_t)(high - low), n, masked, u);
  SrVal *r;
  if (nd < 0) {
    r = sr_int(NULL, d == SR_I32 ? (int32_t)u[0] : d == SR_U32 ? (int64_t)(uint32_t)u[0] : (int64_t)u[0]);
  } else if (d == SR_I32 || d == SR_U32) {
    uint32_t *w = sr_xmalloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++) w[i] = (uint32_t)u[i];
    r = np_result((SrDtype)d, nd, shape, w);
    free(w);
  } else {
    r = np_result((SrDtype)d, nd, shape, u);
  }
  free(u);
  return r;
}

static SrVal *gen_integers(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "integers", "low, high=, size=, dtype=, endpoint=", p) < 0) return NULL;
  int closed = p[4] ? sr_truthy(I, p[4]) : 0;
  if (closed < 0) return NULL;
  return bounded(I, gen_state(a), p[0], p[1], p[2], p[3], closed, 0, "integers");
}

/* ---- shuffle and permutation ---- */

/* Fisher-Yates over the rows along axis of h, in place (as shuffle's
   index array: the draws are random_interval(n-1) ... random_interval(1)) */
static void shuffle_axis(SrNpBitgen *g, Host *h, int axis) {
  int64_t n = h->shape[axis];
  if (n <= 1) return;
  int64_t *idx = sr_xmalloc((size_t)n * sizeof *idx);
  for (int64_t i = 0; i < n; i++) idx[i] = i;
  sr_np_shuffle(g, idx, (size_t)n, sizeof *idx);
  size_t es = sr_elem_size(h->dt), outer = 1, inner = es;
  for (int d = 0; d < axis; d++) outer *= (size_t)h->shape[d];
  for (int d = axis + 1; d < h->nd; d++) inner *= (size_t)h->shape[d];
  char *src = h->data, *dst = sr_xmalloc(h->n * es + 1);
  for (size_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < n; k++)
      memcpy(dst + (o * (size_t)n + (size_t)k) * inner, src + (o * (size_t)n + (size_t)idx[k]) * inner, inner);
  free(h->data);
  h->data = dst;
  free(idx);
}

static int axis_arg(SrInterp *I, SrVal *v, int nd, int *axis) {
  int64_t ax = 0;
  if (v && sr_as_int(I, v, "axis", &ax) < 0) return -1;
  if (ax < -nd || ax >= nd) {
    sr_raise(I, "AxisError", "axis %lld is out of bounds for array of dimension %d", (long long)ax, nd);
    return -1;
  }
  *axis = (int)(ax < 0 ? ax + nd : ax);
  return 0;
}

/* permutation(x[, axis]): an int is arange(x) shuffled; an array-like a
   shuffled copy */
static SrVal *permutation(SrInterp *I, SrNpBitgen *g, SrVal *x, SrVal *axisv, int legacy) {
  Host h;
  if (x->kind == SR_V_INT || x->kind == SR_V_BOOL) {
    int64_t n = x->i < 0 ? 0 : x->i;
    if (sr_check_mem(I, (uint64_t)n, sizeof(int64_t)) < 0) return NULL;
    int64_t *v = sr_xmalloc((size_t)n * sizeof *v + 1);
    for (int64_t i = 0; i < n; i++) v[i] = i;
    sr_np_shuffle(g, v, (size_t)n, sizeof *v);
    SrVal *r = np_result(SR_I64, 1, &n, v);
    free(v);
    return r;
  }
  if (host_of(I, x, &h) < 0) return NULL;
  int axis = 0;
  if (h.nd == 0 && legacy) {
    host_free(&h);
    return sr_raise(I, "IndexError", "x must be an integer or at least 1-dimensional");
  }
  if (axis_arg(I, axisv, h.nd, &axis) < 0) {
    host_free(&h);
    return NULL;
  }
  shuffle_axis(g, &h, axis);
  SrVal *r = np_result(h.dt, h.nd, h.shape, h.data);
  host_free(&h);
  return r;
}

/* shuffle(x[, axis]): in place -- a list's items, an array's rows */
static SrVal *shuffle(SrInterp *I, SrNpBitgen *g, SrVal *x, SrVal *axisv) {
  if (x->kind == SR_V_LIST) {
    int64_t ax = 0;
    if (axisv && sr_as_int(I, axisv, "axis", &ax) < 0) return NULL;
    if (ax != 0) return sr_raise(I, "NotImplementedError", "Axis argument is only supported on ndarray objects");
    sr_np_shuffle(g, x->seq.items, (size_t)x->seq.n, sizeof *x->seq.items);
    return sr_none();
  }
  if (x->kind == SR_V_TUPLE || x->kind == SR_V_STR) {
    if ((x->kind == SR_V_TUPLE ? x->seq.n : (int64_t)x->str.n) > 1)
      return sr_raise(I, "TypeError", "'%s' object does not support item assignment", sr_val_kind_name(x));
    return sr_none();
  }
  SrArray *arr = sr_is_ndarray(x) ? sr_ndarray_array(x) : NULL;
  if (!arr) {
    SrArrayObj *o = sr_array_of(x);
    if (!o) return sr_raise(I, "TypeError", "object of type '%s' has no len()", sr_val_kind_name(x));
    if (o->kind != SR_AV_CONCRETE || !o->data)
      return sr_raise(I, "TypeError", "numpy.random.shuffle needs a concrete array, not a traced one");
    arr = o->data;
  }
  if (arr->type->ndim == 0) return sr_raise(I, "TypeError", "len() of unsized object");
  if (arr->ndev != 1 || arr->local || !arr->shard[0])
    return sr_raise(I, "NotImplementedError", "shardrepl: shuffle of an array on more than one device");
  Host h;
  if (host_of(I, x, &h) < 0) return NULL;
  int axis = 0;
  if (axis_arg(I, axisv, h.nd, &axis) < 0) {
    host_free(&h);
    return NULL;
  }
  if (h.n) {
    shuffle_axis(g, &h, axis);
    memcpy(arr->shard[0]->data, h.data, h.n * sr_elem_size(h.dt));
  }
  host_free(&h);
  return sr_none();
}

static SrVal *gen_permutation(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "permutation", "x, axis=", p) < 0) return NULL;
  return permutation(I, gen_state(a), p[0], p[1], 0);
}

static SrVal *gen_shuffle(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "shuffle", "x, axis=", p) < 0) return NULL;
  return shuffle(I, gen_state(a), p[0], p[1]);
}

/* ---- RandomState's methods (and the module's functions) ---- */

static SrVal *rs_random_sample(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "random_sample", "size=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, p[0], shape);
  if (nd < -1) return NULL;
  return fill0(I, &legacy_state(a)->g, D_RANDOM, nd, shape);
}

static SrVal *rs_rand(SrInterp *I, SrArgs *a) {
  int64_t shape[SR_MAX_RANK];
  int nd = shape_args(I, a, "rand", shape);
  if (nd < -1) return NULL;
  return fill0(I, &legacy_state(a)->g, D_RANDOM, nd, shape);
}

static SrVal *rs_randn(SrInterp *I, SrArgs *a) {
  int64_t shape[SR_MAX_RANK];
  int nd = shape_args(I, a, "randn", shape);
  if (nd < -1) return NULL;
  return fill0(I, &legacy_state(a)->g, D_GAUSS, nd, shape);
}

static SrVal *rs_standard_normal(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "standard_normal", "size=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, p[0], shape);
  if (nd < -1) return NULL;
  return fill0(I, &legacy_state(a)->g, D_GAUSS, nd, shape);
}

static SrVal *rs_normal(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_LEGACY_NORMAL, "scale", 0, NULL, 0, 0, 0};
  return cont2_call(I, a, &legacy_state(a)->g, "normal", "loc=, scale=, size=", zero, one, &c);
}

static SrVal *rs_uniform(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_UNIFORM, NULL, 2, NULL, 0, 0, 0};
  return cont2_call(I, a, &legacy_state(a)->g, "uniform", "low=, high=, size=", zero, one, &c);
}

static SrVal *rs_lognormal(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_LEGACY_LOGNORMAL, "sigma", 0, NULL, 0, 0, 0};
  return cont2_call(I, a, &legacy_state(a)->g, "lognormal", "mean=, sigma=, size=", zero, one, &c);
}

static SrVal *rs_exponential(SrInterp *I, SrArgs *a) { return exponential(I, a, &legacy_state(a)->g, D_LEGACY_EXP); }

static SrVal *rs_standard_exponential(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "standard_exponential", "size=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, p[0], shape);
  if (nd < -1) return NULL;
  return fill0(I, &legacy_state(a)->g, D_LEGACY_STD_EXP, nd, shape);
}

static SrVal *rs_poisson(SrInterp *I, SrArgs *a) { return poisson(I, a, &legacy_state(a)->g, 1); }

static SrVal *rs_binomial(SrInterp *I, SrArgs *a) { return binomial(I, a, &legacy_state(a)->g, 1); }

static SrVal *rs_gamma(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_LEGACY_GAMMA, "scale", 0, "shape", 0, 0, 0};
  return cont2_call(I, a, &legacy_state(a)->g, "gamma", "shape, scale=, size=", one, one, &c);
}

static SrVal *rs_beta(SrInterp *I, SrArgs *a) {
  static const Cont2 c = {D_LEGACY_BETA, "b", 0, "a", 1, 1, 0};
  return cont2_call(I, a, &legacy_state(a)->g, "beta", "a, b, size=", one, one, &c);
}

static SrVal *rs_standard_gamma(SrInterp *I, SrArgs *a) { return standard_gamma(I, a, &legacy_state(a)->g, 1); }

static SrVal *rs_randint(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "randint", "low, high=, size=, dtype=", p) < 0) return NULL;
  return bounded(I, &legacy_state(a)->g, p[0], p[1], p[2], p[3], 0, 1, "randint");
}

static SrVal *rs_permutation(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "permutation", "x", p) < 0) return NULL;
  return permutation(I, &legacy_state(a)->g, p[0], NULL, 1);
}

static SrVal *rs_shuffle(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "shuffle", "x", p) < 0) return NULL;
  return shuffle(I, &legacy_state(a)->g, p[0], NULL);
}

/* _legacy_seeding: an int in [0, 2**32), a non-empty 1-d list of them
   (init_by_array), or None (fresh entropy); the gauss cache is cleared */
static int legacy_seed(SrInterp *I, SrNpBitgen *g, SrVal *s) {
  if (!s || s->kind == SR_V_NONE) {
    uint32_t w[624];
    os_entropy(w, 624);
    sr_np_mt_seed_array(g, w, 624);
    g->key[0] = 0x80000000u;
    return 0;
  }
  if (s->kind == SR_V_INT || s->kind == SR_V_BOOL) {
    if (s->i < 0 || s->i > (int64_t)UINT32_MAX) {
      sr_raise(I, "ValueError", "Seed must be between 0 and 2**32 - 1");
      return -1;
    }
    sr_np_mt_seed(g, (uint32_t)s->i);
    return 0;
  }
  Host h;
  if (host_of(I, s, &h) < 0) return -1;
  int rc = -1;
  if (h.dt == SR_F64 || !(sr_dtype_is_int(h.dt) || h.dt == SR_BOOL)) {
    sr_raise(I, "TypeError", "Cannot cast %s from dtype('%s') to dtype('int64') according to the rule 'safe'",
             h.nd ? "array data" : "scalar", sr_dtype_name(h.dt));
  } else if (h.n == 0) {
    sr_raise(I, "ValueError", "Seed must be non-empty");
  } else if (h.nd != 1) {
    if (h.nd == 0) {
      int64_t v = sr_kern_get_i64(h.dt, h.data);
      if (v < 0 || v > (int64_t)UINT32_MAX) sr_raise(I, "ValueError", "Seed must be between 0 and 2**32 - 1");
      else sr_np_mt_seed(g, (uint32_t)v), rc = 0;
    } else {
      sr_raise(I, "ValueError", "Seed array must be 1-d");
    }
  } else {
    uint32_t *k = sr_xmalloc(h.n * sizeof *k);
    rc = 0;
    for (size_t i = 0; i < h.n && rc == 0; i++) {
      int64_t v = sr_kern_get_i64(h.dt, (char *)h.data + i * sr_elem_size(h.dt));
      if (v < 0 || v > (int64_t)UINT32_MAX) {
        sr_raise(I, "ValueError", "Seed must be between 0 and 2**32 - 1");
        rc = -1;
      }
      k[i] = (uint32_t)v;
    }
    if (rc == 0) sr_np_mt_seed_array(g, k, (int)h.n);
    free(k);
  }
  host_free(&h);
  return rc;
}

static SrVal *rs_seed(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "seed", "seed=", p) < 0) return NULL;
  NpRng *r = legacy_state(a);
  SrNpBitgen g;
  if (legacy_seed(I, &g, p[0]) < 0) return NULL;
  r->g = g;
  return sr_none();
}

/* get_state(legacy=True): ('MT19937', key, pos, has_gauss, gauss), or
   the dict of MT19937.state with the gauss cache */
static SrVal *rs_get_state(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "get_state", "legacy=", p) < 0) return NULL;
  int legacy = p[0] ? sr_truthy(I, p[0]) : 1;
  if (legacy < 0) return NULL;
  const SrNpBitgen *g = &legacy_state(a)->g;
  int64_t n = 624;
  SrVal *key = np_result(SR_U32, 1, &n, g->key), *name = sr_str_cstr(NULL, "MT19937");
  SrVal *pos = sr_int(NULL, g->pos), *hg = sr_int(NULL, g->has_gauss), *gs = sr_float(NULL, g->gauss);
  if (legacy) {
    SrVal *items[5] = {name, key, pos, hg, gs};
    return sr_tuple(NULL, 5, items);
  }
  SrVal *st = sr_dict(NULL), *d = sr_dict(NULL);
  sr_dict_set(NULL, st, sr_str_cstr(NULL, "key"), key);
  sr_dict_set(NULL, st, sr_str_cstr(NULL, "pos"), pos);
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "bit_generator"), name);
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "state"), st);
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "has_gauss"), hg);
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "gauss"), gs);
  return d;
}

static SrVal *dict_item(SrVal *d, const char *k) {
  SrVal *key = sr_str_cstr(NULL, k), *v = sr_dict_get(d, key);
  sr_unref(key);
  return v;
}

/* set_state(state): the tuple get_state makes (3 or 5 items) or its dict */
static SrVal *rs_set_state(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "set_state", "state", p) < 0) return NULL;
  SrVal *st = p[0], *name = NULL, *keyv = NULL, *posv = NULL, *hgv = NULL, *gsv = NULL;
  if (st->kind == SR_V_DICT) {
    SrVal *inner = dict_item(st, "state");
    name = dict_item(st, "bit_generator");
    if (!name || !inner) return sr_raise(I, "ValueError", "state dictionary is not valid.");
    if (inner->kind == SR_V_DICT) {
      keyv = dict_item(inner, "key");
      posv = dict_item(inner, "pos");
    }
    hgv = dict_item(st, "has_gauss");
    gsv = dict_item(st, "gauss");
  } else if (st->kind == SR_V_TUPLE || st->kind == SR_V_LIST) {
    if (st->seq.n < 1) return sr_raise(I, "IndexError", "tuple index out of range");
    name = st->seq.items[0];
    if (name->kind != SR_V_STR || strcmp(name->str.s, "MT19937") != 0)
      return sr_raise(I, "ValueError", "set_state can only be used with legacy MT19937state instances.");
    if (st->seq.n != 3 && st->seq.n != 5) return sr_raise(I, "ValueError", "state is not a legacy MT19937 state");
    keyv = st->seq.items[1];
    posv = st->seq.items[2];
    if (st->seq.n == 5) {
      hgv = st->seq.items[3];
      gsv = st->seq.items[4];
    }
  } else {
    return sr_raise(I, "TypeError", "state must be a dict or a tuple.");
  }
  if (name->kind != SR_V_STR || strcmp(name->str.s, "MT19937") != 0)
    return sr_raise(I, "ValueError", "state must be for a MT19937 PRNG");
  if (!keyv || !posv) return sr_raise(I, "KeyError", "'%s'", keyv ? "pos" : "key");
  int64_t pos, hg = 0;
  double gs = 0.0;
  if (sr_as_int(I, posv, "pos", &pos) < 0 || (hgv && sr_as_int(I, hgv, "has_gauss", &hg) < 0) ||
      (gsv && sr_as_float(I, gsv, "gauss", &gs) < 0))
    return NULL;
  if (pos < 0 || pos > 624)
    return sr_raise(I, "ValueError", "shardrepl: an MT19937 state's pos is in [0, 624], not %lld", (long long)pos);
  Host h;
  if (host_of(I, keyv, &h) < 0) return NULL;
  if (h.nd != 1 || h.n != 624 || !(sr_dtype_is_int(h.dt) || h.dt == SR_BOOL)) {
    host_free(&h);
    return sr_raise(I, "ValueError", "shardrepl: an MT19937 state's key is 624 integers");
  }
  SrNpBitgen *g = &legacy_state(a)->g;
  g->kind = SR_NP_MT19937;
  for (size_t i = 0; i < 624; i++) g->key[i] = (uint32_t)host_int(&h, i);
  host_free(&h);
  g->pos = (int)pos;
  g->has_gauss = hg != 0;
  g->gauss = gs;
  return sr_none();
}

static SrVal *np_random_state(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "RandomState", "seed=", p) < 0) return NULL;
  NpRng *r = sr_xcalloc(1, sizeof *r);
  if (legacy_seed(I, &r->g, p[0]) < 0) {
    free(r);
    return NULL;
  }
  return sr_obj(&randomstate_class, r);
}

/* default_rng(seed): SeedSequence's entropy from an int or a sequence of
   ints, or fresh; a Generator passes through */
static int entropy_words(SrInterp *I, SrVal *v, uint32_t **w, size_t *n, int top) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    if (v->i < 0) {
      sr_raise(I, "ValueError", "expected non-negative integer");
      return -1;
    }
    *w = realloc(*w, (*n + 4) * sizeof **w);
    *n += sr_np_int_words((unsigned __int128)v->i, *w + *n);
    return 0;
  }
  if ((v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) || (!top && is_array(v))) {
    SrVal *items = sr_iterate(I, v);
    if (!items) return -1;
    for (int i = 0; i < items->seq.n; i++)
      if (entropy_words(I, items->seq.items[i], w, n, 0) < 0) {
        sr_unref(items);
        return -1;
      }
    sr_unref(items);
    return 0;
  }
  if (is_array(v)) {
    Host h;
    if (host_of(I, v, &h) < 0) return -1;
    int rc = 0;
    if (!sr_dtype_is_int(h.dt) && h.dt != SR_BOOL) {
      sr_raise(I, "TypeError", "SeedSequence expects int or sequence of ints for entropy not %s",
               "an array of floats");
      rc = -1;
    }
    for (size_t i = 0; i < h.n && rc == 0; i++) {
      SrVal *e = sr_int(NULL, sr_kern_get_i64(h.dt, (char *)h.data + i * sr_elem_size(h.dt)));
      rc = entropy_words(I, e, w, n, 0);
      sr_unref(e);
    }
    host_free(&h);
    return rc;
  }
  if (v->kind == SR_V_FLOAT && !top) {
    sr_raise(I, "TypeError", "seed must be integer");
    return -1;
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  sr_raise(I, "TypeError", "SeedSequence expects int or sequence of ints for entropy not %s", b.p);
  sr_buf_free(&b);
  return -1;
}

/* SeedSequence(entropy): the entropy's words (fresh ones for None) */
static SrVal *seedseq_new(SrInterp *I, SrVal *entropy) {
  SeedSeq *q = sr_xcalloc(1, sizeof *q);
  if (!entropy || entropy->kind == SR_V_NONE) {
    /* numpy's randbits(128), here 63 bits: shardrepl's ints are 64-bit,
       and SeedSequence(ss.entropy) must make the same stream */
    uint32_t w[2];
    os_entropy(w, 2);
    SrVal *e = sr_int(NULL, (int64_t)(((uint64_t)w[1] << 32 | w[0]) & INT64_MAX));
    int rc = entropy_words(I, e, &q->w, &q->n, 1);
    (void)rc; /* a non-negative int */
    q->entropy = e;
  } else if (entropy_words(I, entropy, &q->w, &q->n, 1) < 0) {
    free(q->w);
    free(q);
    return NULL;
  } else {
    q->entropy = sr_ref(entropy);
  }
  return sr_obj(&seedseq_class, q);
}

/* BitGenerator.__init__: a SeedSequence as given, else one from seed */
static SrVal *bitgen_new(SrInterp *I, const SrClass *cls, SrVal *seed) {
  SrVal *ss = seed && sr_is_obj(seed, &seedseq_class) ? sr_ref(seed) : seedseq_new(I, seed);
  if (!ss) return NULL;
  const SeedSeq *q = ss->obj.data;
  NpRng *r = sr_xcalloc(1, sizeof *r);
  if (cls == &pcg64_class) sr_np_pcg64_seed(&r->g, q->w, q->n);
  else sr_np_mt_seed_seq(&r->g, q->w, q->n);
  sr_unref(ss);
  return sr_obj(cls, r);
}

static SrVal *generator_of(SrVal *bg) {
  GenObj *o = sr_xcalloc(1, sizeof *o);
  o->bg = bg;
  return sr_obj(&generator_class, o);
}

static SrVal *np_default_rng(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "default_rng", "seed=", p) < 0) return NULL;
  if (p[0] && sr_is_obj(p[0], &generator_class)) return sr_ref(p[0]);
  if (p[0] && is_bitgen(p[0])) return generator_of(sr_ref(p[0]));
  SrVal *bg = bitgen_new(I, &pcg64_class, p[0]);
  return bg ? generator_of(bg) : NULL;
}

static SrVal *np_generator(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "Generator", "bit_generator", p) < 0) return NULL;
  if (!is_bitgen(p[0]))
    return sr_raise(I, "AttributeError", "'%s' object has no attribute 'capsule'", sr_val_kind_name(p[0]));
  return generator_of(sr_ref(p[0]));
}

static SrVal *np_pcg64(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "PCG64", "seed=", p) < 0) return NULL;
  return bitgen_new(I, &pcg64_class, p[0]);
}

static SrVal *np_mt19937(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "MT19937", "seed=", p) < 0) return NULL;
  return bitgen_new(I, &mt19937_class, p[0]);
}

static SrVal *np_seedseq(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "SeedSequence", "entropy=", p) < 0) return NULL;
  return seedseq_new(I, p[0]);
}

/* SeedSequence.generate_state(n_words, dtype=np.uint32) */
static SrVal *ss_generate_state(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "generate_state", "n_words, dtype=", p) < 0) return NULL;
  int64_t n;
  if (sr_as_int(I, p[0], "n_words", &n) < 0) return NULL;
  int d = dtype_of(p[1], SR_U32);
  if (d != SR_U32 && d != SR_U64) return sr_raise(I, "ValueError", "only support uint32 or uint64");
  if (n < 0) return sr_raise(I, "ValueError", "negative dimensions are not allowed");
  size_t words = (size_t)n * (d == SR_U64 ? 2 : 1);
  if (sr_check_mem(I, words, sizeof(uint32_t)) < 0) return NULL;
  const SeedSeq *q = a->self->obj.data;
  uint32_t *w = sr_xmalloc(words * sizeof *w + 1);
  sr_np_seedseq_state(q->w, q->n, w, words);
  SrVal *r;
  if (d == SR_U64) {
    uint64_t *u = sr_xmalloc((size_t)n * sizeof *u + 1);
    for (int64_t i = 0; i < n; i++) u[i] = (uint64_t)w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
    r = np_result(SR_U64, 1, &n, u);
    free(u);
  } else {
    r = np_result(SR_U32, 1, &n, w);
  }
  free(w);
  return r;
}

/* ---- choice (_generator.pyx and mtrand.pyx) ---- */

static double kahan_sum(const double *d, size_t n) {
  if (n == 0) return 0.0;
  double sum = d[0], c = 0.0;
  for (size_t i = 1; i < n; i++) {
    double y = d[i] - c, t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  return sum;
}

/* the smallest mask of ones >= max (gen_mask) */
static uint64_t gen_mask_of(uint64_t max) {
  for (int sh = 1; sh < 64; sh *= 2) max |= max >> sh;
  return max;
}

/* cdf.searchsorted(u, side='right') */
static int64_t search_right(const double *cdf, int64_t n, double u) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] <= u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void cdf_of(const double *p, int64_t n, double *cdf) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; i++) cdf[i] = acc += p[i];
  double last = n ? cdf[n - 1] : 1.0;
  for (int64_t i = 0; i < n; i++) cdf[i] /= last;
}

/* _shuffle_int: Fisher-Yates by Lemire's bounded draws, n-1 down to first */
static void shuffle_int(SrNpBitgen *g, int64_t n, int64_t first, int64_t *data) {
  for (int64_t i = n - 1; i >= first; i--) {
    uint64_t j;
    sr_np_bounded_uint64_fill(g, 0, (uint64_t)i, 1, 0, &j);
    int64_t t = data[j];
    data[j] = data[i];
    data[i] = t;
  }
}

/* the indices choice draws (size of them), or -1 with an exception */
static int choice_indices(SrInterp *I, SrNpBitgen *g, int legacy, int64_t pop, double *p, size_t size, int replace,
                          int shuffle, int64_t *idx) {
  if (replace) {
    if (p) {
      double *cdf = sr_xmalloc((size_t)pop * sizeof *cdf + 1);
      cdf_of(p, pop, cdf);
      for (size_t i = 0; i < size; i++) idx[i] = search_right(cdf, pop, sr_np_next_double(g));
      free(cdf);
    } else {
      uint64_t *u = sr_xmalloc(size * sizeof *u + 1);
      sr_np_bounded_uint64_fill(g, 0, (uint64_t)(pop - 1), size, legacy, u);
      for (size_t i = 0; i < size; i++) idx[i] = (int64_t)u[i];
      free(u);
    }
    return 0;
  }
  if (size > (size_t)pop) {
    sr_raise(I, "ValueError", "Cannot take a larger sample than population when %s",
             legacy ? "'replace=False'" : "replace is False");
    return -1;
  }
  if (p) {
    size_t nz = 0;
    for (int64_t i = 0; i < pop; i++) nz += p[i] > 0;
    if (nz < size) {
      sr_raise(I, "ValueError", "Fewer non-zero entries in p than size");
      return -1;
    }
    double *cdf = sr_xmalloc((size_t)pop * sizeof *cdf + 1);
    int64_t *nw = sr_xmalloc(size * sizeof *nw + 1);
    size_t n_uniq = 0;
    while (n_uniq < size) {
      size_t k = size - n_uniq;
      double *x = sr_xmalloc(k * sizeof *x);
      for (size_t i = 0; i < k; i++) x[i] = sr_np_next_double(g);
      for (size_t i = 0; i < n_uniq; i++) p[idx[i]] = 0;
      cdf_of(p, pop, cdf);
      /* np.unique(new, return_index=True), the first of each in order */
      size_t m = 0;
      for (size_t i = 0; i < k; i++) {
        int64_t v = search_right(cdf, pop, x[i]);
        int seen = 0;
        for (size_t j = 0; j < m && !seen; j++) seen = nw[j] == v;
        if (!seen) nw[m++] = v;
      }
      memcpy(idx + n_uniq, nw, m * sizeof *nw);
      n_uniq += m;
      free(x);
    }
    free(cdf);
    free(nw);
    return 0;
  }
  if (legacy) {
    int64_t *perm = sr_xmalloc((size_t)pop * sizeof *perm + 1);
    for (int64_t i = 0; i < pop; i++) perm[i] = i;
    sr_np_shuffle(g, perm, (size_t)pop, sizeof *perm);
    memcpy(idx, perm, size * sizeof *idx);
    free(perm);
    return 0;
  }
  int64_t cutoff = shuffle ? 50 : 20;
  if (pop > 10000 && (int64_t)size > pop / cutoff) {
    int64_t *all = sr_xmalloc((size_t)pop * sizeof *all);
    for (int64_t i = 0; i < pop; i++) all[i] = i;
    shuffle_int(g, pop, pop - (int64_t)size > 1 ? pop - (int64_t)size : 1, all);
    memcpy(idx, all + (pop - (int64_t)size), size * sizeof *idx);
    free(all);
    return 0;
  }
  /* Floyd's algorithm with numpy's open-addressing set */
  uint64_t mask = gen_mask_of((uint64_t)(1.2 * (double)size)), set_size = mask + 1;
  uint64_t *set = sr_xmalloc(set_size * sizeof *set);
  for (uint64_t i = 0; i < set_size; i++) set[i] = UINT64_MAX;
  for (int64_t j = pop - (int64_t)size; j < pop; j++) {
    uint64_t val;
    sr_np_bounded_uint64_fill(g, 0, (uint64_t)j, 1, 0, &val);
    uint64_t loc = val & mask;
    while (set[loc] != UINT64_MAX && set[loc] != val) loc = (loc + 1) & mask;
    if (set[loc] == UINT64_MAX) {
      set[loc] = val;
      idx[j - pop + (int64_t)size] = (int64_t)val;
    } else {
      loc = (uint64_t)j & mask;
      while (set[loc] != UINT64_MAX) loc = (loc + 1) & mask;
      set[loc] = (uint64_t)j;
      idx[j - pop + (int64_t)size] = j;
    }
  }
  free(set);
  if (shuffle) shuffle_int(g, (int64_t)size, 1, idx);
  return 0;
}

static SrVal *choice(SrInterp *I, SrNpBitgen *g, int legacy, SrVal **p) {
  SrVal *av = p[0], *sizev = p[1], *pv = p[3];
  int replace = p[2] ? sr_truthy(I, p[2]) : 1, shuf = !legacy && p[5] ? sr_truthy(I, p[5]) : 1;
  if (replace < 0 || shuf < 0) return NULL;
  if (!legacy && p[4]) {
    int64_t ax;
    if (sr_as_int(I, p[4], "axis", &ax) < 0) return NULL;
    if (ax != 0) return sr_raise(I, "NotImplementedError", "shardrepl: choice(axis=%lld)", (long long)ax);
  }
  int64_t shape[SR_MAX_RANK];
  int nd = size_arg(I, sizev, shape);
  if (nd < -1) return NULL;
  size_t size = nd < 0 ? 1 : numel(nd, shape);
  Host h;
  /* a list of other things (strings): choose among its indices */
  SrVal *objs = NULL;
  if (av->kind == SR_V_LIST || av->kind == SR_V_TUPLE)
    for (int i = 0; i < av->seq.n && !objs; i++) {
      SrVal *it = av->seq.items[i];
      if (!is_number(it) && it->kind != SR_V_LIST && it->kind != SR_V_TUPLE && !is_array(it)) objs = av;
    }
  if (objs) {
    memset(&h, 0, sizeof h);
    h.dt = SR_I64;
    h.nd = 1;
    h.n = (size_t)objs->seq.n;
    h.shape[0] = objs->seq.n;
    int64_t *ix = sr_xmalloc(h.n * sizeof *ix + 1);
    for (size_t i = 0; i < h.n; i++) ix[i] = (int64_t)i;
    h.data = ix;
  } else if (host_of(I, av, &h) < 0) {
    return NULL;
  }
  SrVal *res = NULL;
  double *pp = NULL;
  int64_t pop;
  if (h.nd == 0) {
    if (!sr_dtype_is_int(h.dt) && h.dt != SR_BOOL) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_printf(&b,
                    legacy ? "a must be 1-dimensional or an integer"
                           : "a must be a sequence or an integer, not <class '%s'>",
                    sr_val_kind_name(av));
      sr_raise(I, "ValueError", "%s", b.p);
      sr_buf_free(&b);
      goto done;
    }
    pop = sr_kern_get_i64(h.dt, h.data);
    if (pop <= 0 && size != 0) {
      sr_raise(I, "ValueError", legacy ? "a must be greater than 0 unless no samples are taken"
                                       : "a must be a positive integer unless no samples are taken");
      goto done;
    }
  } else if (legacy && h.nd != 1) {
    sr_raise(I, "ValueError", "a must be 1-dimensional");
    goto done;
  } else {
    pop = h.shape[0];
    if (pop == 0 && size != 0) {
      sr_raise(I, "ValueError", legacy ? "'a' cannot be empty unless no samples are taken"
                                       : "a cannot be empty unless no samples are taken");
      goto done;
    }
  }
  if (pv && pv->kind != SR_V_NONE) {
    Host hp;
    if (host_of(I, pv, &hp) < 0) goto done;
    int bad = hp.nd != 1 ? 1 : (int64_t)hp.n != pop ? 2 : 0;
    if (bad) {
      host_free(&hp);
      if (bad == 1) sr_raise(I, "ValueError", legacy ? "'p' must be 1-dimensional" : "p must be 1-dimensional");
      else sr_raise(I, "ValueError", legacy ? "'a' and 'p' must have same size" : "a and p must have same size");
      goto done;
    }
    pp = sr_xmalloc(hp.n * sizeof *pp + 1);
    int neg = 0;
    for (size_t i = 0; i < hp.n; i++) neg |= (pp[i] = host_f64(&hp, i)) < 0;
    host_free(&hp);
    double sum = kahan_sum(pp, (size_t)pop);
    const char *msg = isnan(sum) ? "probabilities contain NaN" : neg ? "probabilities are not non-negative"
                      : fabs(sum - 1.0) > sqrt(2.220446049250313e-16) ? "probabilities do not sum to 1" : NULL;
    if (msg) {
      sr_raise(I, "ValueError", "%s", msg);
      goto done;
    }
  }
  if (sr_check_mem(I, size, sizeof(int64_t)) < 0) goto done;
  int64_t *idx = sr_xmalloc(size * sizeof *idx + 1);
  if (choice_indices(I, g, legacy, pop, pp, size, replace, shuf, idx) < 0) {
    free(idx);
    goto done;
  }
  if (objs) {
    if (nd < 0) res = sr_ref(objs->seq.items[idx[0]]);
    else
      sr_raise(I, "NotImplementedError",
               "shardrepl: choice among non-numbers takes size=None (numpy's string arrays are not there yet)");
  } else if (h.nd == 0) {
    res = nd < 0 ? sr_int(NULL, idx[0]) : np_result(SR_I64, nd, shape, idx);
  } else {
    /* a.take(idx, axis=0) */
    size_t es = sr_elem_size(h.dt), row = es;
    for (int d = 1; d < h.nd; d++) row *= (size_t)h.shape[d];
    int64_t rs[SR_MAX_RANK];
    int rnd = (nd < 0 ? 0 : nd) + h.nd - 1;
    if (rnd > SR_MAX_RANK) {
      free(idx);
      sr_raise(I, "ValueError", "maximum supported dimension for an ndarray is %d, found %d", SR_MAX_RANK, rnd);
      goto done;
    }
    if (nd > 0) memcpy(rs, shape, sizeof(int64_t) * (size_t)nd);
    for (int d = 1; d < h.nd; d++) rs[(nd < 0 ? 0 : nd) + d - 1] = h.shape[d];
    char *out = sr_xmalloc(size * row + 1);
    for (size_t i = 0; i < size; i++) memcpy(out + i * row, (char *)h.data + (size_t)idx[i] * row, row);
    if (rnd == 0 && nd < 0) {
      /* a scalar item, as a Python number */
      if (h.dt == SR_F64 || h.dt == SR_F32) res = sr_float(NULL, sr_kern_get_f64(h.dt, out));
      else if (h.dt == SR_BOOL) res = sr_bool(*(uint8_t *)out != 0);
      else res = sr_int(NULL, sr_kern_get_i64(h.dt, out));
    } else {
      res = np_result(h.dt, rnd, rs, out);
    }
    free(out);
  }
  free(idx);
done:
  free(pp);
  host_free(&h);
  return res;
}

static SrVal *gen_choice(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "choice", "a, size=, replace=, p=, axis=, shuffle=", p) < 0) return NULL;
  return choice(I, gen_state(a), 0, p);
}

static SrVal *rs_choice(SrInterp *I, SrArgs *a) {
  SrVal *p[6] = {0};
  if (sr_args_parse(I, a, "choice", "a, size=, replace=, p=", p) < 0) return NULL;
  return choice(I, &legacy_state(a)->g, 1, p);
}

/* random_multinomial: sequential binomials (Generator's random_binomial
   for RandomState too, as numpy's legacy_random_multinomial has it) */
static void multinomial_draw(SrNpBitgen *g, int64_t n, int64_t *out, const double *pix, int64_t d) {
  double remaining = 1.0;
  int64_t dn = n;
  for (int64_t j = 0; j < d - 1; j++) {
    out[j] = sr_np_binomial(g, pix[j] / remaining, dn, 0);
    dn -= out[j];
    if (dn <= 0) break;
    remaining -= pix[j];
  }
  if (dn > 0) out[d - 1] = dn;
}

/* multinomial(n, pvals, size=None): an int n and 1-d pvals (Generator's
   broadcasting over arrays of n and pvals is not here) */
static SrVal *multinomial(SrInterp *I, SrArgs *a, SrNpBitgen *g, int legacy) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "multinomial", "n, pvals, size=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK + 1];
  int nd = size_arg(I, p[2], shape);
  if (nd < -1) return NULL;
  if (nd == SR_MAX_RANK)
    return sr_raise(I, "ValueError", "maximum supported dimension for an ndarray is %d, found %d", SR_MAX_RANK,
                    nd + 1);
  Host hp, hn;
  if (host_of(I, p[1], &hp) < 0) return NULL;
  if (host_of(I, p[0], &hn) < 0) {
    host_free(&hp);
    return NULL;
  }
  SrVal *res = NULL;
  double *pix = NULL;
  int64_t *out = NULL;
  if (hp.nd == 0) {
    if (legacy) sr_raise(I, "TypeError", "pvals must be a 1-d sequence");
    else
      sr_raise(I, "ValueError",
               "pvals must have at least 1 dimension and the last dimension of pvals must be greater than 0.");
    goto done;
  }
  if (hp.nd > 1 || hn.nd > 0) {
    if (legacy && hp.nd > 1) sr_raise(I, "ValueError", "object too deep for desired array");
    else sr_raise(I, "NotImplementedError", "shardrepl: multinomial of arrays of n or of pvals");
    goto done;
  }
  int64_t d = hp.shape[0];
  if (d == 0 && !legacy) {
    sr_raise(I, "ValueError",
             "pvals must have at least 1 dimension and the last dimension of pvals must be greater than 0.");
    goto done;
  }
  pix = sr_xmalloc((size_t)d * sizeof *pix + 1);
  for (int64_t i = 0; i < d; i++) {
    pix[i] = host_f64(&hp, (size_t)i);
    if (!(pix[i] >= 0) || !(pix[i] <= 1)) {
      sr_raise(I, "ValueError", "pvals < 0, pvals > 1 or pvals contains NaNs");
      goto done;
    }
  }
  if (d && kahan_sum(pix, (size_t)d - 1) > 1.0 + 1e-12) {
    sr_raise(I, "ValueError", "sum(pvals[:-1]) > 1.0");
    goto done;
  }
  int64_t ni = (int64_t)host_int(&hn, 0);
  if (ni < 0) {
    sr_raise(I, "ValueError", "n < 0");
    goto done;
  }
  int ond = nd < 0 ? 1 : nd + 1;
  if (nd < 0) shape[0] = d;
  else shape[nd] = d;
  size_t n = numel(ond, shape);
  if (sr_check_mem(I, n, sizeof(int64_t)) < 0) goto done;
  out = sr_xcalloc(n + 1, sizeof *out);
  for (size_t off = 0; d && off < n; off += (size_t)d) multinomial_draw(g, ni, out + off, pix, d);
  res = np_result(SR_I64, ond, shape, out);
done:
  free(pix);
  free(out);
  host_free(&hp);
  host_free(&hn);
  return res;
}

static SrVal *gen_multinomial(SrInterp *I, SrArgs *a) { return multinomial(I, a, gen_state(a), 0); }
static SrVal *rs_multinomial(SrInterp *I, SrArgs *a) { return multinomial(I, a, &legacy_state(a)->g, 1); }

/* ---- attribute tables ---- */

typedef struct Method {
  const char *name;
  SrBuiltinFn fn;
} Method;

static const Method generator_methods[] = {
  {"random", gen_random},   {"standard_normal", gen_standard_normal}, {"normal", gen_normal},
  {"uniform", gen_uniform}, {"integers", gen_integers},               {"permutation", gen_permutation},
  {"shuffle", gen_shuffle}, {"choice", gen_choice},
  {"exponential", gen_exponential}, {"standard_exponential", gen_standard_exponential},
  {"lognormal", gen_lognormal}, {"poisson", gen_poisson},
  {"binomial", gen_binomial}, {"gamma", gen_gamma}, {"standard_gamma", gen_standard_gamma},
  {"beta", gen_beta}, {"laplace", gen_laplace}, {"gumbel", gen_gumbel}, {"logistic", gen_logistic},
  {"chisquare", gen_chisquare}, {"standard_t", gen_standard_t}, {"rayleigh", gen_rayleigh},
  {"weibull", gen_weibull}, {"pareto", gen_pareto}, {"power", gen_power}, {"standard_cauchy", gen_standard_cauchy},
  {"multinomial", gen_multinomial}, {NULL, NULL},
};

static const Method randomstate_methods[] = {
  {"seed", rs_seed},         {"random_sample", rs_random_sample}, {"random", rs_random_sample},
  {"rand", rs_rand},         {"randn", rs_randn},                 {"standard_normal", rs_standard_normal},
  {"normal", rs_normal},     {"uniform", rs_uniform},             {"randint", rs_randint},
  {"permutation", rs_permutation}, {"shuffle", rs_shuffle},       {"choice", rs_choice},
  {"get_state", rs_get_state}, {"set_state", rs_set_state}, {"exponential", rs_exponential},
  {"standard_exponential", rs_standard_exponential}, {"lognormal", rs_lognormal},
  {"poisson", rs_poisson}, {"binomial", rs_binomial}, {"gamma", rs_gamma},
  {"standard_gamma", rs_standard_gamma}, {"beta", rs_beta}, {"laplace", rs_laplace}, {"gumbel", rs_gumbel},
  {"logistic", rs_logistic}, {"chisquare", rs_chisquare}, {"standard_t", rs_standard_t}, {"rayleigh", rs_rayleigh},
  {"weibull", rs_weibull}, {"pareto", rs_pareto}, {"power", rs_power}, {"standard_cauchy", rs_standard_cauchy},
  {"multinomial", rs_multinomial}, {NULL, NULL},
};

static SrVal *method_of(SrVal *self, const Method *m, const char *name) {
  for (int i = 0; m[i].name; i++)
    if (strcmp(m[i].name, name) == 0) return sr_bound_method(self, m[i].name, m[i].fn);
  return NULL;
}

static SrVal *generator_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "bit_generator") == 0) return sr_ref(((GenObj *)self->obj.data)->bg);
  return method_of(self, generator_methods, name);
}

static SrVal *seedseq_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const SeedSeq *q = self->obj.data;
  if (strcmp(name, "entropy") == 0) return sr_ref(q->entropy);
  if (strcmp(name, "pool_size") == 0) return sr_int(NULL, 4);
  if (strcmp(name, "generate_state") == 0) return sr_bound_method(self, name, ss_generate_state);
  return NULL;
}

static SrVal *randomstate_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  return method_of(self, randomstate_methods, name);
}

static const SrLangOps generator_ops = {.getattr = generator_getattr};
static const SrLangOps randomstate_ops = {.getattr = randomstate_getattr};
static const SrLangOps seedseq_ops = {.getattr = seedseq_getattr};

void sr_np_random_init(void) {
  sr_register("numpy.random", sr_module("numpy.random"));
  sr_def("numpy.random.default_rng", np_default_rng,
         "np.random.default_rng(seed=None): a Generator on PCG64 seeded through SeedSequence, numpy's streams");
  sr_def("numpy.random.Generator", np_generator,
         "np.random.Generator(bit_generator): a Generator on a PCG64 or MT19937");
  sr_def("numpy.random.PCG64", np_pcg64,
         "np.random.PCG64(seed=None): numpy's PCG64 bit generator, seeded through SeedSequence");
  sr_def("numpy.random.MT19937", np_mt19937,
         "np.random.MT19937(seed=None): numpy's Mersenne Twister, seeded through SeedSequence");
  sr_def("numpy.random.SeedSequence", np_seedseq,
         "np.random.SeedSequence(entropy=None): numpy's seed mixing (entropy, generate_state(n_words, dtype))");
  sr_def("numpy.random.RandomState", np_random_state,
         "np.random.RandomState(seed=None): numpy's legacy generator (MT19937)");
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } legacy[] = {
    {"numpy.random.seed", rs_seed, "np.random.seed(seed=None): reseeds numpy's global RandomState"},
    {"numpy.random.random_sample numpy.random.random numpy.random.sample numpy.random.ranf", rs_random_sample,
     "np.random.random_sample(size=None): uniform floats in [0, 1)"},
    {"numpy.random.rand", rs_rand, "np.random.rand(d0, d1, ...): uniform floats in [0, 1) of that shape"},
    {"numpy.random.randn", rs_randn, "np.random.randn(d0, d1, ...): standard normal floats of that shape"},
    {"numpy.random.standard_normal", rs_standard_normal, "np.random.standard_normal(size=None)"},
    {"numpy.random.normal", rs_normal, "np.random.normal(loc=0.0, scale=1.0, size=None)"},
    {"numpy.random.uniform", rs_uniform, "np.random.uniform(low=0.0, high=1.0, size=None)"},
    {"numpy.random.randint", rs_randint, "np.random.randint(low, high=None, size=None, dtype=int)"},
    {"numpy.random.permutation", rs_permutation, "np.random.permutation(x): arange(x) or a copy of x, shuffled"},
    {"numpy.random.shuffle", rs_shuffle, "np.random.shuffle(x): shuffles a list or an array's rows in place"},
    {"numpy.random.choice", rs_choice, "np.random.choice(a, size=None, replace=True, p=None)"},
    {"numpy.random.exponential", rs_exponential, "np.random.exponential(scale=1.0, size=None)"},
    {"numpy.random.standard_exponential", rs_standard_exponential, "np.random.standard_exponential(size=None)"},
    {"numpy.random.lognormal", rs_lognormal, "np.random.lognormal(mean=0.0, sigma=1.0, size=None)"},
    {"numpy.random.poisson", rs_poisson, "np.random.poisson(lam=1.0, size=None)"},
    {"numpy.random.binomial", rs_binomial, "np.random.binomial(n, p, size=None)"},
    {"numpy.random.gamma", rs_gamma, "np.random.gamma(shape, scale=1.0, size=None)"},
    {"numpy.random.standard_gamma", rs_standard_gamma, "np.random.standard_gamma(shape, size=None)"},
    {"numpy.random.beta", rs_beta, "np.random.beta(a, b, size=None)"},
    {"numpy.random.laplace", rs_laplace, "np.random.laplace(loc=0.0, scale=1.0, size=None)"},
    {"numpy.random.gumbel", rs_gumbel, "np.random.gumbel(loc=0.0, scale=1.0, size=None)"},
    {"numpy.random.logistic", rs_logistic, "np.random.logistic(loc=0.0, scale=1.0, size=None)"},
    {"numpy.random.chisquare", rs_chisquare, "np.random.chisquare(df, size=None)"},
    {"numpy.random.standard_t", rs_standard_t, "np.random.standard_t(df, size=None)"},
    {"numpy.random.rayleigh", rs_rayleigh, "np.random.rayleigh(scale=1.0, size=None)"},
    {"numpy.random.weibull", rs_weibull, "np.random.weibull(a, size=None)"},
    {"numpy.random.pareto", rs_pareto, "np.random.pareto(a, size=None)"},
    {"numpy.random.power", rs_power, "np.random.power(a, size=None)"},
    {"numpy.random.standard_cauchy", rs_standard_cauchy, "np.random.standard_cauchy(size=None)"},
    {"numpy.random.multinomial", rs_multinomial, "np.random.multinomial(n, pvals, size=None)"},
    {"numpy.random.get_state", rs_get_state, "np.random.get_state(legacy=True): the global RandomState's state"},
    {"numpy.random.set_state", rs_set_state, "np.random.set_state(state): restores what get_state returned"},
  };
  for (size_t i = 0; i < sizeof legacy / sizeof *legacy; i++) sr_def(legacy[i].names, legacy[i].fn, legacy[i].doc);
}

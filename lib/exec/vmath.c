/* vmath.c: the transcendental functions of the elementwise kernels, eight
 * or sixteen floats at a time, through glibc's vector math library.
 *
 * libmvec (glibc 2.35 and later) has each function in an AVX2 and an
 * AVX-512 form (the _ZGVdN8v_ and _ZGVeN16v_ names of the x86-64 vector
 * ABI).  The form is chosen once, by what the CPU has, so one binary runs
 * on any x86-64; elsewhere, or without libmvec, sr_vmath_* says no and the
 * kernels run libm's scalar functions.  glibc documents the vector forms
 * to within 4 ulp of the exact result (libm's own are within 1 or 2);
 * tests/unit/check_vmath.c measures it against libm in float64.
 */
#include "config.h"

#include "exec/vmath.h"

#include <stdlib.h>
#include <string.h>

#if defined(HAVE_LIBMVEC) && defined(__x86_64__)

enum { L_NONE, L_AVX2, L_AVX512 };

static int level = -1;

static int vmath_level(void) {
  if (level < 0) {
    __builtin_cpu_init();
    const char *env = getenv("SHARDREPL_VMATH");
    if (env && strcmp(env, "0") == 0) level = L_NONE;
    else if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) level = L_AVX512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) level = L_AVX2;
    else level = L_NONE;
  }
  return level;
}

/* X(ID, float32 name, float64 name) for each function of SrVmathFn */
#define VMATH_FUNCS(X)                                                                  \
  X(SR_VM_TANH, tanhf, tanh) X(SR_VM_EXP, expf, exp) X(SR_VM_EXP2, exp2f, exp2)           \
  X(SR_VM_EXPM1, expm1f, expm1) X(SR_VM_LOG, logf, log) X(SR_VM_LOG1P, log1pf, log1p)     \
  X(SR_VM_SIN, sinf, sin) X(SR_VM_COS, cosf, cos) X(SR_VM_TAN, tanf, tan)                 \
  X(SR_VM_ERF, erff, erf) X(SR_VM_ERFC, erfcf, erfc) X(SR_VM_CBRT, cbrtf, cbrt)

/* n elements through one vector function, W at a time; the tail is
   padded with zeros (the results past n are dropped) */
#define VMATH_RUN(NAME, T, V, W)                                        \
  static void NAME(V (*fn)(V), size_t n, const T *x, T *y) {            \
    size_t i = 0;                                                       \
    for (; i + W <= n; i += W) {                                        \
      V v;                                                              \
      memcpy(&v, x + i, sizeof v);                                      \
      v = fn(v);                                                        \
      memcpy(y + i, &v, sizeof v);                                      \
    }                                                                   \
    if (i < n) {                                                        \
      V v;                                                              \
      memset(&v, 0, sizeof v);                                          \
      memcpy(&v, x + i, (n - i) * sizeof(T));                           \
      v = fn(v);                                                        \
      memcpy(y + i, &v, (n - i) * sizeof(T));                           \
    }                                                                   \
  }

#pragma GCC push_options
#pragma GCC target("avx2,fma")
typedef float f8 __attribute__((vector_size(32)));
typedef double d4 __attribute__((vector_size(32)));
#define DECL_AVX2(ID, F, D) f8 _ZGVdN8v_##F(f8); d4 _ZGVdN4v_##D(d4);
VMATH_FUNCS(DECL_AVX2)
VMATH_RUN(run_f8, float, f8, 8)
VMATH_RUN(run_d4, double, d4, 4)
#define TAB_F8(ID, F, D) [ID] = _ZGVdN8v_##F,
#define TAB_D4(ID, F, D) [ID] = _ZGVdN4v_##D,
static f8 (*const avx2_f32[SR_VM_COUNT])(f8) = {VMATH_FUNCS(TAB_F8)};
static d4 (*const avx2_f64[SR_VM_COUNT])(d4) = {VMATH_FUNCS(TAB_D4)};
static void avx2_run(SrVmathFn fn, int f64, size_t n, const void *x, void *y) {
  if (f64) run_d4(avx2_f64[fn], n, x, y);
  else run_f8(avx2_f32[fn], n, x, y);
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
typedef float f16 __attribute__((vector_size(64)));
typedef double d8 __attribute__((vector_size(64)));
#define DECL_AVX512(ID, F, D) f16 _ZGVeN16v_##F(f16); d8 _ZGVeN8v_##D(d8);
VMATH_FUNCS(DECL_AVX512)
VMATH_RUN(run_f16, float, f16, 16)
VMATH_RUN(run_d8, double, d8, 8)
#define TAB_F16(ID, F, D) [ID] = _ZGVeN16v_##F,
#define TAB_D8(ID, F, D) [ID] = _ZGVeN8v_##D,
static f16 (*const avx512_f32[SR_VM_COUNT])(f16) = {VMATH_FUNCS(TAB_F16)};
static d8 (*const avx512_f64[SR_VM_COUNT])(d8) = {VMATH_FUNCS(TAB_D8)};
static void avx512_run(SrVmathFn fn, int f64, size_t n, const void *x, void *y) {
  if (f64) run_d8(avx512_f64[fn], n, x, y);
  else run_f16(avx512_f32[fn], n, x, y);
}
#pragma GCC pop_options

static int run(SrVmathFn fn, int f64, size_t n, const void *x, void *y) {
  switch (vmath_level()) {
  case L_AVX512: avx512_run(fn, f64, n, x, y); return 0;
  case L_AVX2: avx2_run(fn, f64, n, x, y); return 0;
  default: return -1;
  }
}

const char *sr_vmath_form(void) {
  switch (vmath_level()) {
  case L_AVX512: return "libmvec AVX-512";
  case L_AVX2: return "libmvec AVX2";
  default: return NULL;
  }
}

#else

static int run(SrVmathFn fn, int f64, size_t n, const void *x, void *y) {
  (void)fn, (void)f64, (void)n, (void)x, (void)y;
  return -1;
}

const char *sr_vmath_form(void) { return NULL; }

#endif

int sr_vmath_f32(SrVmathFn fn, size_t n, const float *x, float *y) { return run(fn, 0, n, x, y); }
int sr_vmath_f64(SrVmathFn fn, size_t n, const double *x, double *y) { return run(fn, 1, n, x, y); }

/* numpy_info.c: jax.numpy.finfo and jax.numpy.iinfo (jax/_src/dtypes.py:
 * ml_dtypes' finfo and iinfo, numpy's for the standard dtypes), with
 * numpy's attributes, str and repr (numpy/core/getlimits.py).  A float
 * attribute is a scalar of the dtype, an int one a Python int.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/prng.h"
#include "jax/jax.h"
#include "jax/numpy.h"
#include "jax/np_host.h"
#include "py/objects.h"
#include "text/print_val.h"

typedef struct Info {
  SrDtype dt;
  int is_float;
} Info;

static void info_free(void *d) { free(d); }

/* The parameters of a float dtype (numpy's MachAr, ml_dtypes'). */
typedef struct FloatParams {
  int bits, nmant, nexp, minexp, maxexp, precision;
  const char *fmt; /* numpy's _MACHAR_PARAMS fmt, without its width */
} FloatParams;

static int float_params(SrDtype dt, FloatParams *p) {
  switch (dt) {
  case SR_F16: *p = (FloatParams){16, 10, 5, -14, 16, 3, "%.5e"}; return 0;
  case SR_BF16: *p = (FloatParams){16, 7, 8, -126, 128, 2, "%.5e"}; return 0;
  case SR_F32: *p = (FloatParams){32, 23, 8, -126, 128, 6, "%.7e"}; return 0;
  case SR_F64: *p = (FloatParams){64, 52, 11, -1022, 1024, 15, "%.16e"}; return 0;
  default: return -1;
  }
}

/* v rounded to dt (numpy's str formats the dtype's values) */
static double in_dtype(SrDtype dt, double v) {
  switch (dt) {
  case SR_F32: return (double)(float)v;
  case SR_F16: return (double)sr_prng_f16_to_float(sr_prng_f16_from_double(v));
  case SR_BF16: return (double)sr_prng_bf16_to_float(sr_prng_bf16_from_double(v));
  default: return v;
  }
}

static double fmax_of(const FloatParams *p) { return ldexp(2.0 - ldexp(1.0, -p->nmant), p->maxexp - 1); }

static int int_params(SrDtype dt, int *bits, int64_t *lo, uint64_t *hi) {
  switch (dt) {
  case SR_I8: *bits = 8, *lo = INT8_MIN, *hi = INT8_MAX; return 0;
  case SR_I16: *bits = 16, *lo = INT16_MIN, *hi = INT16_MAX; return 0;
  case SR_I32: *bits = 32, *lo = INT32_MIN, *hi = INT32_MAX; return 0;
  case SR_I64: *bits = 64, *lo = INT64_MIN, *hi = INT64_MAX; return 0;
  case SR_U8: *bits = 8, *lo = 0, *hi = UINT8_MAX; return 0;
  case SR_U16: *bits = 16, *lo = 0, *hi = UINT16_MAX; return 0;
  case SR_U32: *bits = 32, *lo = 0, *hi = UINT32_MAX; return 0;
  case SR_U64: *bits = 64, *lo = 0, *hi = UINT64_MAX; return 0;
  default: return -1;
  }
}

/* a scalar of dt (a numpy scalar: strongly typed) */
static SrVal *scalar(SrInterp *I, SrDtype dt, double v) {
  SrVal *f = sr_float(NULL, v);
  SrVal *r = sr_jnp_asarray(I, f, (int)dt);
  sr_unref(f);
  return r;
}

/* repr(10.0 ** -p), Python's (the resolution's str, which reads back) */
static void resolution_str(SrBuf *b, int p) {
  if (p >= 5) {
    sr_buf_printf(b, "1e-%02d", p);
    return;
  }
  sr_buf_puts(b, "0.");
  for (int i = 1; i < p; i++) sr_buf_putc(b, '0');
  sr_buf_putc(b, '1');
}

static void float_repr(SrBuf *out, const SrVal *v) {
  const Info *in = v->obj.data;
  FloatParams p;
  float_params(in->dt, &p);
  char mx[64];
  snprintf(mx, sizeof mx, p.fmt, fmax_of(&p));
  sr_buf_puts(out, "finfo(resolution=");
  resolution_str(out, p.precision);
  sr_buf_printf(out, ", min=-%s, max=%s, dtype=%s)", mx, mx, sr_dtype_name(in->dt));
}

static void float_str(SrBuf *out, const SrVal *v) {
  const Info *in = v->obj.data;
  FloatParams p;
  float_params(in->dt, &p);
  char res[64], eps[64], epsneg[64], tiny[64], mx[64], sub[64];
  snprintf(res, sizeof res, p.fmt, in_dtype(in->dt, pow(10.0, -p.precision)));
  snprintf(eps, sizeof eps, p.fmt, ldexp(1.0, -p.nmant));
  snprintf(epsneg, sizeof epsneg, p.fmt, ldexp(1.0, -p.nmant - 1));
  snprintf(tiny, sizeof tiny, p.fmt, ldexp(1.0, p.minexp));
  snprintf(mx, sizeof mx, p.fmt, fmax_of(&p));
  snprintf(sub, sizeof sub, p.fmt, ldexp(1.0, p.minexp - p.nmant));
  sr_buf_printf(out,
                "Machine parameters for %s\n"
                "---------------------------------------------------------------\n"
                "precision = %3d   resolution = %s\n"
                "machep = %6d   eps =        %s\n"
                "negep =  %6d   epsneg =     %s\n"
                "minexp = %6d   tiny =       %s\n"
                "maxexp = %6d   max =        %s\n"
                "nexp =   %6d   min =        -max\n"
                "smallest_normal = %s   smallest_subnormal = %s\n"
                "---------------------------------------------------------------\n",
                sr_dtype_name(in->dt), p.precision, res, -p.nmant, eps, -p.nmant - 1, epsneg, p.minexp, tiny,
                p.maxexp, mx, p.nexp, tiny, sub);
}

static void int_repr(SrBuf *out, const SrVal *v) {
  const Info *in = v->obj.data;
  int bits;
  int64_t lo;
  uint64_t hi;
  int_params(in->dt, &bits, &lo, &hi);
  sr_buf_printf(out, "iinfo(min=%lld, max=%llu, dtype=%s)", (long long)lo, (unsigned long long)hi,
                sr_dtype_name(in->dt));
}

static void int_str(SrBuf *out, const SrVal *v) {
  const Info *in = v->obj.data;
  int bits;
  int64_t lo;
  uint64_t hi;
  int_params(in->dt, &bits, &lo, &hi);
  sr_buf_printf(out,
                "Machine parameters for %s\n"
                "---------------------------------------------------------------\n"
                "min = %lld\nmax = %llu\n"
                "---------------------------------------------------------------\n",
                sr_dtype_name(in->dt), (long long)lo, (unsigned long long)hi);
}

static SrVal *float_getattr(SrInterp *I, SrVal *self, const char *name) {
  const Info *in = self->obj.data;
  FloatParams p;
  float_params(in->dt, &p);
  SrDtype dt = in->dt;
  if (!strcmp(name, "bits")) return sr_int(NULL, p.bits);
  if (!strcmp(name, "nmant")) return sr_int(NULL, p.nmant);
  if (!strcmp(name, "nexp") || !strcmp(name, "iexp")) return sr_int(NULL, p.nexp);
  if (!strcmp(name, "minexp")) return sr_int(NULL, p.minexp);
  if (!strcmp(name, "maxexp")) return sr_int(NULL, p.maxexp);
  if (!strcmp(name, "machep")) return sr_int(NULL, -p.nmant);
  if (!strcmp(name, "negep")) return sr_int(NULL, -p.nmant - 1);
  if (!strcmp(name, "precision")) return sr_int(NULL, p.precision);
  if (!strcmp(name, "dtype")) return sr_dtype_val(NULL, dt);
  if (!strcmp(name, "eps")) return scalar(I, dt, ldexp(1.0, -p.nmant));
  if (!strcmp(name, "epsneg")) return scalar(I, dt, ldexp(1.0, -p.nmant - 1));
  if (!strcmp(name, "max")) return scalar(I, dt, fmax_of(&p));
  if (!strcmp(name, "min")) return scalar(I, dt, -fmax_of(&p));
  if (!strcmp(name, "tiny") || !strcmp(name, "smallest_normal")) return scalar(I, dt, ldexp(1.0, p.minexp));
  if (!strcmp(name, "smallest_subnormal")) return scalar(I, dt, ldexp(1.0, p.minexp - p.nmant));
  if (!strcmp(name, "resolution")) return scalar(I, dt, pow(10.0, -p.precision));
  return NULL;
}

static SrVal *int_getattr(SrInterp *I, SrVal *self, const char *name) {
  const Info *in = self->obj.data;
  int bits;
  int64_t lo;
  uint64_t hi;
  (void)I;
  int_params(in->dt, &bits, &lo, &hi);
  if (!strcmp(name, "bits")) return sr_int(NULL, bits);
  if (!strcmp(name, "min")) return sr_int(NULL, lo);
  if (!strcmp(name, "max")) {
    if (hi > (uint64_t)INT64_MAX) return sr_float(NULL, (double)hi); /* not an int64 */
    return sr_int(NULL, (int64_t)hi);
  }
  if (!strcmp(name, "dtype")) return sr_dtype_val(NULL, in->dt);
  if (!strcmp(name, "kind")) return sr_str(NULL, lo < 0 ? "i" : "u", 1);
  return NULL;
}

static const SrLangOps float_ops = {.getattr = float_getattr};
static const SrLangOps int_ops = {.getattr = int_getattr};
static const SrClass finfo_class = {"finfo", info_free, float_repr, float_str, &float_ops};
static const SrClass iinfo_class = {"iinfo", info_free, int_repr, int_str, &int_ops};

/* The dtype of a dtype-like or array argument, as numpy reads it: no
   canonicalization (finfo(float64) without x64 is float64's; Python's
   float and int are float64 and int64). */
static int dtype_of(SrInterp *I, SrVal *v, const char *what, SrDtype *dt) {
  if (sr_array_of(v)) return *dt = SR_NBUILTIN_DTYPES, 0; /* numpy.object_ */
  if (v->kind == SR_V_DTYPE) {
    *dt = v->dtype;
    return 0;
  }
  if (v->kind == SR_V_STR || v->kind == SR_V_WORD) {
    int d = sr_dtype_lookup(v->str.s, v->str.n);
    if (d >= 0 && d < SR_NBUILTIN_DTYPES) {
      *dt = (SrDtype)d;
      return 0;
    }
  }
  const char *nm = sr_is_obj(v, &sr_builtin_class) ? sr_builtin_name(v) : NULL;
  if (nm && strcmp(nm, "builtins.float") == 0) return *dt = SR_F64, 0;
  if (nm && strcmp(nm, "builtins.int") == 0) return *dt = SR_I64, 0;
  if (nm && strcmp(nm, "builtins.complex") == 0) return *dt = SR_C128, 0;
  int d;
  if (sr_dtype_arg(I, v, &d, what) < 0) return -1;
  if (d < 0) return sr_raise(I, "ValueError", "data type <class 'NoneType'> not inexact"), -1;
  *dt = (SrDtype)d;
  return 0;
}

static SrVal *bi_finfo(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "finfo", "dtype", p) < 0) return NULL;
  SrDtype dt;
  if (dtype_of(I, p[0], "finfo", &dt) < 0) return NULL;
  if (dt == SR_C64) dt = SR_F32;
  else if (dt == SR_C128) dt = SR_F64;
  FloatParams fp;
  if (float_params(dt, &fp) < 0)
    return sr_raise(I, "ValueError", "data type <class 'numpy.%s'> not inexact",
                    dt == SR_NBUILTIN_DTYPES ? "object_" : dt == SR_BOOL ? "bool_" : sr_dtype_name(dt));
  Info *in = sr_xcalloc(1, sizeof *in);
  in->dt = dt;
  in->is_float = 1;
  return sr_obj(&finfo_class, in);
}

static SrVal *bi_iinfo(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "iinfo", "int_type", p) < 0) return NULL;
  SrDtype dt;
  if (dtype_of(I, p[0], "iinfo", &dt) < 0) return NULL;
  int bits;
  int64_t lo;
  uint64_t hi;
  if (int_params(dt, &bits, &lo, &hi) < 0)
    return sr_raise(I, "ValueError", "Invalid integer data type '%c'.",
                    dt == SR_NBUILTIN_DTYPES ? 'O'
                    : dt == SR_BOOL          ? 'b'
                    : dt == SR_C64 || dt == SR_C128 ? 'c'
                                             : 'f');
  Info *in = sr_xcalloc(1, sizeof *in);
  in->dt = dt;
  return sr_obj(&iinfo_class, in);
}

/* A dtype's numpy attributes: name, itemsize (bytes an element of a
   numpy array takes: sub-byte types one) and kind ('V' for ml_dtypes'
   types: bfloat16, the float8s, int2/int4). */
static SrVal *dtype_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  SrDtype d = self->dtype;
  int k = sr_dtype_kind(d);
  if (sr_prng_impl_of(d) >= 0) {
    /* prng.KeyTy: its name (key<fry>) and the bytes of one key's data */
    if (!strcmp(name, "name")) return sr_str_cstr(NULL, sr_dtype_name(d));
    if (!strcmp(name, "itemsize")) return sr_int(NULL, sr_dtype_info(d)->size);
    return NULL;
  }
  if (k == SR_DK_OTHER || k == SR_DK_FLOAT0) return NULL;
  if (!strcmp(name, "name")) return sr_str_cstr(NULL, sr_dtype_name(d));
  if (!strcmp(name, "itemsize")) return sr_int(NULL, sr_dtype_info(d)->size);
  int ml = sr_dtype_info(d)->bits < 8 || d == SR_BF16 || (k == SR_DK_FLOAT && sr_dtype_info(d)->bits == 8);
  if (!strcmp(name, "type")) {
    /* the scalar type: numpy.float32(0); ml_dtypes' (bfloat16, int4,
       the float8s...) makes numpy scalars of its type too */
    if (ml) return sr_ref(sr_np_scalar_type(d));
    char q[64];
    snprintf(q, sizeof q, "numpy.%s", sr_dtype_name(d));
    SrVal *t = sr_lookup_qualname(q);
    return t ? sr_ref(t) : NULL;
  }
  if (!strcmp(name, "kind")) {
    const char *c = ml ? "V" : k == SR_DK_BOOL ? "b" : k == SR_DK_INT ? "i" : k == SR_DK_UINT ? "u" : k == SR_DK_FLOAT ? "f" : "c";
    return sr_str(NULL, c, 1);
  }
  return NULL;
}

void sr_jnp_info_init(void) {
  sr_kind_getattr_set(SR_V_DTYPE, dtype_getattr);
  sr_def("jax.numpy.finfo", bi_finfo,
         "finfo(dtype): machine limits of a float dtype (bits, eps, epsneg, max, min, tiny, smallest_normal, "
         "smallest_subnormal, resolution, precision, nmant, nexp, minexp, maxexp, machep, negep, dtype)");
  sr_def("jax.numpy.iinfo numpy.iinfo", bi_iinfo, "iinfo(int_type): machine limits of an integer dtype (bits, min, max, dtype, kind)");
}

/* dtype.h: element types.
 *
 * A dtype is a small integer.  The builtin ones are the enum below, in the
 * order of the table in dtype.c; dtypes a text names that shardrepl does not
 * know (`foo`, `key<fry>`) are registered on first sight so that the text
 * still parses and prints back.
 */
#ifndef SR_IR_DTYPE_H
#define SR_IR_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef uint16_t SrDtype;

enum {
  SR_BOOL,
  SR_I2, SR_I4, SR_I8, SR_I16, SR_I32, SR_I64,
  SR_U2, SR_U4, SR_U8, SR_U16, SR_U32, SR_U64,
  SR_F16, SR_BF16, SR_F32, SR_F64,
  SR_C64, SR_C128,
  SR_FLOAT0,
  SR_F8_E4M3FN, SR_F8_E5M2, SR_F8_E4M3FNUZ, SR_F8_E5M2FNUZ,
  SR_F8_E4M3B11FNUZ, SR_F8_E3M4, SR_F8_E4M3, SR_F8_E8M0FNU, SR_F4_E2M1FN,
  SR_F6_E2M3FN, SR_F6_E3M2FN,
  SR_NBUILTIN_DTYPES
};

typedef enum {
  SR_DK_BOOL,
  SR_DK_INT,
  SR_DK_UINT,
  SR_DK_FLOAT,
  SR_DK_COMPLEX,
  SR_DK_FLOAT0,
  SR_DK_OTHER, /* PRNG keys and dtypes shardrepl only names */
} SrDtypeKind;

typedef struct SrDtypeInfo {
  const char *name;  /* long name, as jax.typeof prints it: "float32" */
  const char *short_name; /* as jaxprs print it: "f32" */
  uint8_t kind;      /* SrDtypeKind */
  uint8_t bits;      /* storage bits per element (sub-byte types: 2, 4) */
  uint8_t size;      /* bytes per element in shardrepl's buffers */
} SrDtypeInfo;

const SrDtypeInfo *sr_dtype_info(SrDtype d);
static inline const char *sr_dtype_name(SrDtype d) { return sr_dtype_info(d)->name; }
static inline const char *sr_dtype_short(SrDtype d) { return sr_dtype_info(d)->short_name; }
static inline int sr_dtype_kind(SrDtype d) { return sr_dtype_info(d)->kind; }

/* Finds a dtype by its long or short name; -1 if there is none. */
int sr_dtype_lookup(const char *name, size_t n);
/* The same, registering an unknown name as an opaque dtype. */
SrDtype sr_dtype_intern(const char *name, size_t n);

int sr_dtype_is_float(SrDtype d);   /* real floating point */
int sr_dtype_is_inexact(SrDtype d); /* float or complex */
int sr_dtype_is_int(SrDtype d);     /* signed or unsigned integer */
static inline int sr_dtype_is_complex(SrDtype d) { return d == SR_C64 || d == SR_C128; }
/* lax._complex_basetype: complex64 -> float32, complex128 -> float64,
   others themselves; dtypes.to_complex_dtype: float64 (and complex128)
   -> complex128, complex64 itself, every other dtype complex64. */
static inline SrDtype sr_dtype_real_of(SrDtype d) { return d == SR_C64 ? SR_F32 : d == SR_C128 ? SR_F64 : d; }
static inline SrDtype sr_dtype_complex_of(SrDtype d) {
  return d == SR_C64 ? SR_C64 : d == SR_C128 || d == SR_F64 ? SR_C128 : SR_C64;
}
/* The dtype of a tangent or cotangent: float0 for ints and bools. */
SrDtype sr_dtype_tangent(SrDtype d);

/* A double to int64 as XLA converts floats to integers: toward zero,
   saturating, NaN to 0.  A C cast of a value out of range is undefined, so
   every float -> int conversion of a program's value goes through here
   (or the kernels' f2i, which is the same for narrower types). */
static inline int64_t sr_f2i64(double x) {
  if (x != x) return 0;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  if (x >= 9223372036854775808.0) return INT64_MAX;
  return (int64_t)x;
}

#endif

/* dtype.c: the dtype table. */
#include "ir/dtype.h"

#include <string.h>

#include "util/intern.h"
#include "util/mem.h"

static const SrDtypeInfo builtin[SR_NBUILTIN_DTYPES] = {
  [SR_BOOL] = {"bool", "bool", SR_DK_BOOL, 8, 1},
  [SR_I2] = {"int2", "i2", SR_DK_INT, 2, 1},
  [SR_I4] = {"int4", "i4", SR_DK_INT, 4, 1},
  [SR_I8] = {"int8", "i8", SR_DK_INT, 8, 1},
  [SR_I16] = {"int16", "i16", SR_DK_INT, 16, 2},
  [SR_I32] = {"int32", "i32", SR_DK_INT, 32, 4},
  [SR_I64] = {"int64", "i64", SR_DK_INT, 64, 8},
  [SR_U2] = {"uint2", "u2", SR_DK_UINT, 2, 1},
  [SR_U4] = {"uint4", "u4", SR_DK_UINT, 4, 1},
  [SR_U8] = {"uint8", "u8", SR_DK_UINT, 8, 1},
  [SR_U16] = {"uint16", "u16", SR_DK_UINT, 16, 2},
  [SR_U32] = {"uint32", "u32", SR_DK_UINT, 32, 4},
  [SR_U64] = {"uint64", "u64", SR_DK_UINT, 64, 8},
  [SR_F16] = {"float16", "f16", SR_DK_FLOAT, 16, 2},
  [SR_BF16] = {"bfloat16", "bf16", SR_DK_FLOAT, 16, 2},
  [SR_F32] = {"float32", "f32", SR_DK_FLOAT, 32, 4},
  [SR_F64] = {"float64", "f64", SR_DK_FLOAT, 64, 8},
  [SR_C64] = {"complex64", "c64", SR_DK_COMPLEX, 64, 8},
  [SR_C128] = {"complex128", "c128", SR_DK_COMPLEX, 128, 16},
  [SR_FLOAT0] = {"float0", "float0", SR_DK_FLOAT0, 0, 1},
  [SR_F8_E4M3FN] = {"float8_e4m3fn", "f8_e4m3fn", SR_DK_FLOAT, 8, 1},
  [SR_F8_E5M2] = {"float8_e5m2", "f8_e5m2", SR_DK_FLOAT, 8, 1},
  [SR_F8_E4M3FNUZ] = {"float8_e4m3fnuz", "f8_e4m3fnuz", SR_DK_FLOAT, 8, 1},
  [SR_F8_E5M2FNUZ] = {"float8_e5m2fnuz", "f8_e5m2fnuz", SR_DK_FLOAT, 8, 1},
  [SR_F8_E4M3B11FNUZ] = {"float8_e4m3b11fnuz", "f8_e4m3b11fnuz", SR_DK_FLOAT, 8, 1},
  [SR_F8_E3M4] = {"float8_e3m4", "f8_e3m4", SR_DK_FLOAT, 8, 1},
  [SR_F8_E4M3] = {"float8_e4m3", "f8_e4m3", SR_DK_FLOAT, 8, 1},
  [SR_F8_E8M0FNU] = {"float8_e8m0fnu", "f8_e8m0fnu", SR_DK_FLOAT, 8, 1},
  [SR_F4_E2M1FN] = {"float4_e2m1fn", "f4_e2m1fn", SR_DK_FLOAT, 4, 1},
  [SR_F6_E2M3FN] = {"float6_e2m3fn", "f6_e2m3fn", SR_DK_FLOAT, 6, 1},
  [SR_F6_E3M2FN] = {"float6_e3m2fn", "f6_e3m2fn", SR_DK_FLOAT, 6, 1},
};

/* Opaque dtypes registered at run time, after the builtins. */
static SrDtypeInfo *extra;
static size_t nextra, capextra;

const SrDtypeInfo *sr_dtype_info(SrDtype d) {
  if (d < SR_NBUILTIN_DTYPES) return &builtin[d];
  return &extra[d - SR_NBUILTIN_DTYPES];
}

int sr_dtype_lookup(const char *name, size_t n) {
  for (int i = 0; i < SR_NBUILTIN_DTYPES; i++) {
    const SrDtypeInfo *t = &builtin[i];
    if ((strlen(t->short_name) == n && memcmp(t->short_name, name, n) == 0) ||
        (strlen(t->name) == n && memcmp(t->name, name, n) == 0))
      return i;
  }
  /* numpy spells float0's dtype "void" */
  if (n == 4 && memcmp(name, "void", 4) == 0) return SR_FLOAT0;
  for (size_t i = 0; i < nextra; i++)
    if (strlen(extra[i].name) == n && memcmp(extra[i].name, name, n) == 0)
      return (int)(SR_NBUILTIN_DTYPES + i);
  return -1;
}

SrDtype sr_dtype_intern(const char *name, size_t n) {
  int d = sr_dtype_lookup(name, n);
  if (d >= 0) return (SrDtype)d;
  if (nextra == capextra) {
    capextra = capextra ? 2 * capextra : 8;
    extra = sr_xrealloc(extra, capextra * sizeof *extra);
  }
  const char *s = sr_intern(name, n);
  /* PRNG keys hold two uint32 words under the default threefry impl,
     four under rbg and unsafe_rbg (key<rbg>, key<urbg>) */
  int key = n > 4 && memcmp(name, "key<", 4) == 0;
  int wide = key && (strcmp(s, "key<rbg>") == 0 || strcmp(s, "key<urbg>") == 0);
  extra[nextra] = (SrDtypeInfo){s, s, SR_DK_OTHER, key ? (wide ? 128 : 64) : 0, key ? (wide ? 16 : 8) : 0};
  return (SrDtype)(SR_NBUILTIN_DTYPES + nextra++);
}

int sr_dtype_is_float(SrDtype d) { return sr_dtype_kind(d) == SR_DK_FLOAT; }

int sr_dtype_is_inexact(SrDtype d) {
  int k = sr_dtype_kind(d);
  return k == SR_DK_FLOAT || k == SR_DK_COMPLEX;
}

int sr_dtype_is_int(SrDtype d) {
  int k = sr_dtype_kind(d);
  return k == SR_DK_INT || k == SR_DK_UINT;
}

SrDtype sr_dtype_tangent(SrDtype d) { return sr_dtype_is_inexact(d) ? d : SR_FLOAT0; }

/* kern_ew.h: the loops elementwise kernels are made of.
 *
 * An elementwise row's kernels (SrKernEw, exec/kern.h) are defined by its
 * family file (lax/elementwise.c), beside its other rules, with the macros
 * here: each makes one static function, one loop over n elements, for one
 * dtype.  In an expression the operands are p (and q); an integer
 * kernel also sees their C type T, U (the unsigned type of T's width),
 * BITS and MINV (T's least value), and every unary kernel the integer
 * params ip
 * (NULL when the equation has none).  The family then lists a row's
 * functions by dtype in a table that its registration hangs on the row
 * (sr_prims[id].kern).  float16 and bfloat16 run the float32 kernel
 * (sr_kern_unary, sr_kern_binary).
 */
#ifndef SR_EXEC_KERN_EW_H
#define SR_EXEC_KERN_EW_H

#include <stddef.h>
#include <stdint.h>

#include "exec/kern.h"
#include "exec/kern_simd.h"

/* Whether two types are one (GCC and Clang know it at compile time). */
#define SR_KERN_SAME_TYPE(T, U) __builtin_types_compatible_p(T, U)

/* o[i] = EXPR(p, q) with either side possibly a broadcast scalar */
#define SR_KERN_BIN_LOOP(T, OT, EXPR)                                        \
  do {                                                                       \
    const T *x_ = a, *y_ = b;                                                \
    OT *o_ = out;                                                            \
    /* out may be an operand's buffer (exactly: SR_MAP_REUSE): then the   \
       loop reads that operand through out, so that the vectorizer sees   \
       one stream fewer to check for overlap */                           \
    int ia_ = SR_KERN_SAME_TYPE(T, OT) && (const void *)o_ == a;             \
    int ib_ = SR_KERN_SAME_TYPE(T, OT) && (const void *)o_ == b && !ia_;     \
    if (!sa && !sb && ia_) {                                                 \
      for (size_t i = 0; i < n; i++) {                                       \
        T p = (T)o_[i], q = y_[i];                                           \
        o_[i] = (OT)(EXPR);                                                  \
      }                                                                      \
    } else if (!sa && !sb && ib_) {                                          \
      for (size_t i = 0; i < n; i++) {                                       \
        T p = x_[i], q = (T)o_[i];                                           \
        o_[i] = (OT)(EXPR);                                                  \
      }                                                                      \
    } else if (!sa && !sb) {                                                 \
      for (size_t i = 0; i < n; i++) {                                       \
        T p = x_[i], q = y_[i];                                              \
        o_[i] = (OT)(EXPR);                                                  \
      }                                                                      \
    } else if (sa && !sb) {                                                  \
      T p = x_[0];                                                           \
      if (ib_)                                                               \
        for (size_t i = 0; i < n; i++) {                                     \
          T q = (T)o_[i];                                                    \
          o_[i] = (OT)(EXPR);                                                \
        }                                                                    \
      else                                                                   \
        for (size_t i = 0; i < n; i++) {                                     \
          T q = y_[i];                                                       \
          o_[i] = (OT)(EXPR);                                                \
        }                                                                    \
    } else if (!sa) {                                                        \
      T q = y_[0];                                                           \
      if (ia_)                                                               \
        for (size_t i = 0; i < n; i++) {                                     \
          T p = (T)o_[i];                                                    \
          o_[i] = (OT)(EXPR);                                                \
        }                                                                    \
      else                                                                   \
        for (size_t i = 0; i < n; i++) {                                     \
          T p = x_[i];                                                       \
          o_[i] = (OT)(EXPR);                                                \
        }                                                                    \
    } else {                                                                 \
      T p = x_[0], q = y_[0];                                                \
      for (size_t i = 0; i < n; i++) o_[i] = (OT)(EXPR);                     \
    }                                                                        \
    return 0;                                                                \
  } while (0)

/* o[i] = EXPR(p) */
#define SR_KERN_UN_LOOP(T, OT, EXPR)                                         \
  do {                                                                       \
    const T *x_ = a;                                                         \
    OT *o_ = out;                                                            \
    for (size_t i = 0; i < n; i++) {                                         \
      T p = x_[i];                                                           \
      o_[i] = (OT)(EXPR);                                                    \
    }                                                                        \
    return 0;                                                                \
  } while (0)

/* The integer names an expression may use, for TY of NB bits. */
#define SR_KERN_INT_NAMES(TY, UT, NB, MN)                                    \
  typedef TY T;                                                              \
  typedef UT U;                                                              \
  enum { BITS = NB };                                                        \
  const T MINV = (T)(MN);                                                    \
  (void)sizeof(U);                                                           \
  (void)MINV

/* A binary kernel NAME on T to OT; the integer one with T, U, BITS, MINV.
   The float (and bool) ones are vectorized, with AVX-512, AVX2 or SSE2 by
   the CPU (SR_KERN_VEC, exec/kern_simd.h): their operations do not trap,
   and each element's IEEE result is the scalar loop's.  The integer ones
   stay scalar: an integer division's guard must not be speculated. */
#define SR_KERN_BIN(NAME, T, OT, EXPR)                                                      \
  SR_KERN_VEC static int NAME(size_t n, const void *a, int sa, const void *b, int sb, void *out) {      \
    SR_KERN_BIN_LOOP(T, OT, EXPR);                                                          \
  }
#define SR_KERN_BIN_INT(NAME, TY, UT, NB, MN, OT, EXPR)                                     \
  static int NAME(size_t n, const void *a, int sa, const void *b, int sb, void *out) {      \
    SR_KERN_INT_NAMES(TY, UT, NB, MN);                                                      \
    SR_KERN_BIN_LOOP(T, OT, EXPR);                                                          \
  }
/* A unary kernel NAME on T to OT; the integer one with U, BITS, MINV. */
#define SR_KERN_UN(NAME, T, OT, EXPR)                                                       \
  static int NAME(size_t n, const void *a, void *out, const int64_t *ip) {                  \
    SR_KERN_UN_LOOP(T, OT, EXPR);                                                           \
  }
#define SR_KERN_UN_INT(NAME, TY, UT, NB, MN, OT, EXPR)                                      \
  static int NAME(size_t n, const void *a, void *out, const int64_t *ip) {                  \
    SR_KERN_INT_NAMES(TY, UT, NB, MN);                                                      \
    SR_KERN_UN_LOOP(T, OT, EXPR);                                                           \
  }

/* The kernels OP_i8 .. OP_i64 (signed) and OP_u8 .. OP_u64 (unsigned) of
   one expression, with results of the operand's type (of bool for the
   CMP ones). */
#define SR_KERN_BINS_(OP, OT8, OT16, OT32, OT64, EXPR)                                 \
  SR_KERN_BIN_INT(OP##_i8, int8_t, uint8_t, 8, INT8_MIN, OT8, EXPR)                    \
  SR_KERN_BIN_INT(OP##_i16, int16_t, uint16_t, 16, INT16_MIN, OT16, EXPR)              \
  SR_KERN_BIN_INT(OP##_i32, int32_t, uint32_t, 32, INT32_MIN, OT32, EXPR)              \
  SR_KERN_BIN_INT(OP##_i64, int64_t, uint64_t, 64, INT64_MIN, OT64, EXPR)
#define SR_KERN_BINU_(OP, OT8, OT16, OT32, OT64, EXPR)                                 \
  SR_KERN_BIN_INT(OP##_u8, uint8_t, uint8_t, 8, 0, OT8, EXPR)                          \
  SR_KERN_BIN_INT(OP##_u16, uint16_t, uint16_t, 16, 0, OT16, EXPR)                     \
  SR_KERN_BIN_INT(OP##_u32, uint32_t, uint32_t, 32, 0, OT32, EXPR)                     \
  SR_KERN_BIN_INT(OP##_u64, uint64_t, uint64_t, 64, 0, OT64, EXPR)
#define SR_KERN_BIN_SINTS(OP, EXPR) SR_KERN_BINS_(OP, int8_t, int16_t, int32_t, int64_t, EXPR)
#define SR_KERN_BIN_UINTS(OP, EXPR) SR_KERN_BINU_(OP, uint8_t, uint16_t, uint32_t, uint64_t, EXPR)
#define SR_KERN_CMP_SINTS(OP, EXPR) SR_KERN_BINS_(OP, uint8_t, uint8_t, uint8_t, uint8_t, EXPR)
#define SR_KERN_CMP_UINTS(OP, EXPR) SR_KERN_BINU_(OP, uint8_t, uint8_t, uint8_t, uint8_t, EXPR)
#define SR_KERN_UN_SINTS(OP, EXPR)                                                     \
  SR_KERN_UN_INT(OP##_i8, int8_t, uint8_t, 8, INT8_MIN, int8_t, EXPR)                  \
  SR_KERN_UN_INT(OP##_i16, int16_t, uint16_t, 16, INT16_MIN, int16_t, EXPR)            \
  SR_KERN_UN_INT(OP##_i32, int32_t, uint32_t, 32, INT32_MIN, int32_t, EXPR)            \
  SR_KERN_UN_INT(OP##_i64, int64_t, uint64_t, 64, INT64_MIN, int64_t, EXPR)
#define SR_KERN_UN_UINTS(OP, EXPR)                                                     \
  SR_KERN_UN_INT(OP##_u8, uint8_t, uint8_t, 8, 0, uint8_t, EXPR)                       \
  SR_KERN_UN_INT(OP##_u16, uint16_t, uint16_t, 16, 0, uint16_t, EXPR)                  \
  SR_KERN_UN_INT(OP##_u32, uint32_t, uint32_t, 32, 0, uint32_t, EXPR)                  \
  SR_KERN_UN_INT(OP##_u64, uint64_t, uint64_t, 64, 0, uint64_t, EXPR)

/* Table entries for the kernels the macros above named OP_*. */
#define SR_KERN_SINTS(OP) [SR_I8] = OP##_i8, [SR_I16] = OP##_i16, [SR_I32] = OP##_i32, [SR_I64] = OP##_i64
#define SR_KERN_UINTS(OP) [SR_U8] = OP##_u8, [SR_U16] = OP##_u16, [SR_U32] = OP##_u32, [SR_U64] = OP##_u64
#define SR_KERN_INTS(OP) SR_KERN_SINTS(OP), SR_KERN_UINTS(OP)
#define SR_KERN_FLOATS(OP) [SR_F32] = OP##_f32, [SR_F64] = OP##_f64
#define SR_KERN_COMPLEX(OP) [SR_C64] = OP##_c64, [SR_C128] = OP##_c128

/* IEEE max and min that propagate NaN, as XLA's do */
#define SR_KERN_FMAX(p, q) ((p) != (p) || (q) != (q) ? (p) + (q) : ((p) < (q) ? (q) : (p)))
#define SR_KERN_FMIN(p, q) ((p) != (p) || (q) != (q) ? (p) + (q) : ((q) < (p) ? (q) : (p)))

#endif

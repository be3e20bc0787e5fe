/* numfmt.h: numpy's text forms of arrays and scalars.
 *
 * shardrepl's golden tests compare with what JAX printed, and JAX prints
 * arrays with numpy: str(x) is str(np.asarray(x)) and repr(x) is
 * "Array(" + np.array2string(...) + ", dtype=...)".  This module redoes
 * numpy's array2string (default print options: precision 8, threshold 1000,
 * edgeitems 3, linewidth 75, floatmode 'maxprec', legacy off) and numpy's
 * Dragon4 float formatting, in shardrepl's own code.
 *
 * Data is row-major and contiguous, one element per sr_dtype_info(dt)->size
 * bytes: bool as one byte 0/1, ints native (int2/int4/uint2/uint4 one per
 * byte), float16 and bfloat16 as their 16 bits, complex as two floats.
 *
 * What each dtype looks like, as JAX prints it:
 *   - bool, int8..int64, uint8..uint64, float16/32/64, complex64/128 are
 *     numpy's own types: padded columns, shortest round-trip digits for the
 *     element's own type (float16 digits for float16), positional or
 *     scientific for the whole array at once.
 *   - bfloat16, the float8 types, float4_e2m1fn and int2/int4/uint2/uint4
 *     are ml_dtypes types that numpy formats with the scalar's own repr:
 *     C++ `ostream << float` (printf "%g", six significant digits) for the
 *     floats, plain decimals for the ints, and no column padding:
 *     Array([2, 4, 6, 8], dtype=bfloat16).
 *
 * numpy has changed its rules twice in ways that show in output; the
 * default follows numpy 2.3 and later (what current JAX runs with), and
 * SrNumfmtOpts.rules selects the older ones (the test oracle is numpy 1.x).
 */
#ifndef SR_EXEC_NUMFMT_H
#define SR_EXEC_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

#include "ir/dtype.h"
#include "util/buf.h"

typedef enum {
  /* numpy 1.x: the scientific-notation thresholds 1e8 and 1e-4 are
     compared in float64. */
  SR_NUMPY_1 = 100,
  /* numpy 2.0-2.2: NEP 50, so the thresholds are first rounded to the
     array's dtype (float32(1e-4) is not < float32(1e-4)). */
  SR_NUMPY_2_0 = 200,
  /* numpy 2.3 on: the upper threshold is 10**min(8, finfo.precision):
     1e3 for float16, 1e6 for float32, 1e8 for float64. */
  SR_NUMPY_2_3 = 203,
} SrNumpyRules;

/* numpy's floatmode print option */
typedef enum {
  SR_FM_MAXPREC,        /* at most precision digits, as few as each needs */
  SR_FM_MAXPREC_EQUAL,  /* at most precision, all elements with as many */
  SR_FM_FIXED,          /* always precision digits */
  SR_FM_UNIQUE,         /* the shortest round-trip digits, no cut */
} SrFloatMode;

typedef struct SrNumfmtOpts {
  int precision;  /* fraction digits at most (numpy's precision), 8 */
  int threshold;  /* summarise above this many elements, 1000 */
  int edgeitems;  /* items kept at each edge when summarising, 3 */
  int linewidth;  /* 75 */
  int rules;      /* SrNumpyRules */
  int suppress;   /* never scientific for small values, 0 */
  int floatmode;  /* SrFloatMode */
  int sign;       /* '-', '+' or ' ' before non-negative floats */
  char nanstr[16], infstr[16];
} SrNumfmtOpts;

#define SR_NUMFMT_OPTS_INIT {8, 1000, 3, 75, SR_NUMPY_2_3, 0, SR_FM_MAXPREC, '-', "nan", "inf"}

/* numpy's defaults, with the newest rules. */
extern const SrNumfmtOpts sr_numfmt_defaults;
/* The print options in force (np.set_printoptions, np.printoptions):
   what sr_numfmt_str and sr_numfmt_repr use; numpy's defaults at start. */
extern SrNumfmtOpts sr_numfmt_opts;

/* Whether this module can print dt (the opaque and float0 dtypes it cannot:
   they print as "?" elements). */
int sr_numfmt_supported(SrDtype dt);

/* str(np.asarray(x)): what print(x) shows for a jax.Array.  A rank-0 array
   prints as its scalar (sr_numfmt_scalar), an empty one as "[]". */
void sr_numfmt_str(SrBuf *out, SrDtype dt, int ndim, const int64_t *shape,
                   const void *data);
/* repr(x) of a fully addressable jax.Array, following ArrayImpl.__repr__:
   "Array([[0., 1.],\n       [2., 3.]], dtype=float32)", "Array(1., dtype=
   float32)", "Array([], shape=(0, 3), dtype=int32)"; weak_type adds
   ", weak_type=True" after the dtype. */
void sr_numfmt_repr(SrBuf *out, SrDtype dt, int ndim, const int64_t *shape,
                    const void *data, int weak_type);
/* One element as numpy's scalar str() shows it: "1.0", "1e-05", "(1+2j)",
   "True"; for f-strings and item(). */
void sr_numfmt_scalar(SrBuf *out, SrDtype dt, const void *elem);

/* The same three with explicit options. */
void sr_numfmt_str_opts(SrBuf *out, const SrNumfmtOpts *o, SrDtype dt,
                        int ndim, const int64_t *shape, const void *data);
void sr_numfmt_repr_opts(SrBuf *out, const SrNumfmtOpts *o, SrDtype dt,
                         int ndim, const int64_t *shape, const void *data,
                         int weak_type);

/* np.array2string(a, separator=sep, prefix=" "*prefix_len,
   suffix=" "*suffix_len): the prefix's and suffix's lengths only shift the
   wrapping, they are not printed.  A rank-0 array gives its one element as
   the array formatter shows it ("1." rather than str's "1.0"). */
void sr_numfmt_array2string(SrBuf *out, const SrNumfmtOpts *o, SrDtype dt,
                            int ndim, const int64_t *shape, const void *data,
                            const char *sep, int prefix_len, int suffix_len);

/* numpy's trim modes for float formatting, by numpy's letters. */
typedef enum {
  SR_TRIM_KEEP = 'k',      /* keep trailing zeros and the point */
  SR_TRIM_ZEROS = '.',     /* drop trailing zeros, keep the point: "1." */
  SR_TRIM_ONE_ZERO = '0',  /* keep one zero after the point: "1.0" */
  SR_TRIM_POINT = '-',     /* drop zeros and the point: "1" */
} SrFloatTrim;

/* np.format_float_positional / np.format_float_scientific with
   unique=True; -1 means None for precision, min_digits, pad_left,
   pad_right and exp_digits. */
typedef struct SrFloatFmt {
  int scientific;
  int precision;
  int min_digits;
  int fractional;   /* positional: precision counts fraction digits */
  int trim;         /* SrFloatTrim */
  int sign;         /* print '+' on non-negative values */
  int pad_left, pad_right, exp_digits;
} SrFloatFmt;

/* Formats one float16, float32 or float64 element (elem points at its
   bits) with Dragon4's shortest digits for that type. */
void sr_numfmt_float(SrBuf *out, SrDtype dt, const void *elem,
                     const SrFloatFmt *f);

#endif

/* pyfmt.h: Python's text forms of scalars and strings.
 *
 * JAX prints literals and params with Python's str()/repr(), so shardrepl
 * needs the same algorithms: the shortest repr of a double that reads back
 * exactly, with Python's choice between fixed and exponent notation, and
 * repr() of a str with its choice of quotes.
 */
#ifndef SR_UTIL_PYFMT_H
#define SR_UTIL_PYFMT_H

#include <stdint.h>

#include "util/buf.h"

/* repr(float(x)): "2.0", "0.1", "1e-05", "1e+20", "inf", "-inf", "nan". */
void sr_py_float_repr(SrBuf *out, double x);
/* The shortest decimal digits that read back as x (x finite, > 0):
   digits in buf (no dot), returns the decimal exponent e such that
   x = 0.DIGITS * 10^e. */
int sr_shortest_digits(double x, char *buf, int *ndigits);
/* The same for a float32 value read back as float32. */
int sr_shortest_digits_f32(float x, char *buf, int *ndigits);
/* repr(str): 'abc', "it's", with Python's escapes. */
void sr_py_str_repr(SrBuf *out, const char *s, size_t n);
/* str(complex(re, im)): "(1+2j)", "2j", "(-0-1j)". */
void sr_py_complex_str(SrBuf *out, double re, double im);

#endif

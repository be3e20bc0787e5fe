/* strfmt.h: printf-style string formatting (strfmt.c). */
#ifndef SR_LANG_STRFMT_H
#define SR_LANG_STRFMT_H

#include "py/interp.h"

/* fmt % args for a str fmt: a tuple gives the values in turn, a dict (or
   another mapping) the %(key)s values, anything else is the one value.
   A new str, or NULL with CPython's TypeError or ValueError raised. */
SrVal *sr_str_percent(SrInterp *I, SrVal *fmt, SrVal *args);

/* fmt.format(*args, **kwargs) (a->self is not read): fields {}, {0},
   {name}, with .attr and [key] parts, !r / !s / !a, and specs that hold
   fields of their own ({:{w}.{p}f}), in CPython's rules and messages. */
SrVal *sr_str_format(SrInterp *I, SrVal *fmt, SrArgs *a);

#endif

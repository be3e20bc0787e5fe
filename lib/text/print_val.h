/* print_val.h: str() and repr() of values, as Python prints them.
 *
 * The value half of the one printer (print.h prints jaxprs; a jaxpr value
 * prints as print.h prints it).  Values parsed from a jaxpr print their
 * text verbatim, so that what was read prints back; an object (SR_V_OBJ)
 * prints through its class's slots (sr_obj_print).  Containers go at most
 * SR_VAL_MAX_NEST deep (ir/val.h, sr_val_too_deep).
 */
#ifndef SR_TEXT_PRINT_VAL_H
#define SR_TEXT_PRINT_VAL_H

#include "ir/val.h"
#include "util/buf.h"

/* str(v) and repr(v), as Python prints them.  A container that holds
   itself prints as [...] or {...}. */
void sr_val_str(SrBuf *out, const SrVal *v);
void sr_val_repr(SrBuf *out, const SrVal *v);

#endif

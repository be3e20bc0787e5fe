/* enum.h: Python's enum module (mod_enum.c): Enum, IntEnum, Flag,
 * IntFlag and auto.  A class statement whose base is an enum class makes
 * another (sr_class_new hands it over); isinstance and type() ask here. */
#ifndef SR_LANG_ENUM_H
#define SR_LANG_ENUM_H

#include "py/objects.h"

/* Whether v is an enum class (enum.Enum itself, or one a class statement
   made). */
int sr_enum_is_class(const SrVal *v);
/* The enum class named name, of base (an enum class, borrowed) from the
   namespace ns (a dict of str keys in the body's order, stolen): a new
   reference, or NULL with CPython's exception. */
SrVal *sr_enum_class_new(SrInterp *I, const char *name, SrVal *base, SrVal *ns);
/* isinstance(x, t) when t is an enum class, or t is int and x an
   IntEnum's member: 1 or 0; -1 when neither. */
int sr_enum_isinstance(SrVal *x, SrVal *t);
/* The enum class of a member (borrowed), or NULL. */
SrVal *sr_enum_type_of(const SrVal *v);
/* Whether v is a member of an IntEnum or IntFlag, with its int in *value
   (borrowed). */
int sr_enum_kind_value(const SrVal *v, SrVal **value);
/* Registers enum.Enum, IntEnum, Flag, IntFlag and auto. */
void sr_enum_init(void);

#endif

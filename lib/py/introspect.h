/* introspect.h: Python's introspection (introspect_py.c): type objects for
 * the built-in kinds (type(1) is int, type(x).__name__), the attributes
 * every object has (__class__, a function's __doc__ and __module__), dir(),
 * vars(), globals(), locals(), help(), delattr(), ord() and chr().
 *
 * dir(x) lists the names getattr(x, name) finds: a module's registered
 * names, an object's __dict__ and its class's MRO, a kind's methods, and
 * what a class of another layer lists through sr_dir_class (arrays).
 * Names starting with '_' that are registered for the implementation
 * (jax.numpy._getitem) and the registry's own folders (jax.Array.method)
 * are never listed, nor found by getattr on a module.
 */
#ifndef SR_LANG_INTROSPECT_H
#define SR_LANG_INTROSPECT_H

#include "py/objects.h"

/* The type of v, as type(v) returns it: a class of class.c, an exception
   type, or a built-in type object (int, str, function,
   jaxlib._jax.ArrayImpl...).  A new reference. */
SrVal *sr_type_of(SrInterp *I, SrVal *v);
/* The qualified class name a built-in type object prints ("int",
   "jaxlib._jax.ArrayImpl"), or NULL when b is not one. */
const char *sr_builtin_type_name(const SrVal *b);
/* Marks builtin v (a constructor of another layer's values: numpy.ndarray)
   as the built-in type object of that qualified name. */
void sr_mark_builtin_type(SrVal *v, const char *qual);
/* The attributes every object has, which sr_getattr tries last:
   __class__, and __name__ / __qualname__ / __module__ / __doc__ of
   functions, built-ins and modules.  NULL without an exception when v has
   none of that name. */
SrVal *sr_generic_getattr(SrInterp *I, SrVal *v, const char *name);

/* The names of v's attributes, sorted, deduplicated: a new list of str. */
SrVal *sr_dir(SrInterp *I, SrVal *v);
/* How the objects of a class of another layer list their attributes
   (each one that getattr finds, by add). */
typedef void (*SrDirAdd)(const char *name, void *ctx);
void sr_dir_class(const SrClass *cls, void (*names)(SrVal *self, SrDirAdd add, void *ctx));

/* The methods and attributes of v's plain kind (objects.c's table: a
   str's upper, a complex's real). */
void sr_kind_attr_names(const SrVal *v, SrDirAdd add, void *ctx);

/* Whether a registered name is the implementation's, not an attribute a
   user sees: a segment after the first starting with '_' that is not a
   dunder, or a folder "method" or "property" under a class's (capitalized)
   name: jax.Array.method.item. */
int sr_name_internal(const char *qualname);

/* locals(), vars() and dir() without arguments read the caller's scope:
   interp.c calls sr_scope_call for a call of one of them (sr_is_scope_fn)
   with no arguments, with the environment of the calling frame. */
int sr_is_scope_fn(const SrVal *fn);
SrVal *sr_scope_call(SrInterp *I, SrVal *fn, struct SrEnv *env);

/* Registers the built-ins above; called from sr_builtins_py_init. */
void sr_py_introspect_init(void);

#endif

/* class.h: Python's classes (class.c): class objects, their instances,
 * bound methods, property / staticmethod / classmethod, super(), and the
 * classes the standard library makes: typing.NamedTuple and
 * collections.namedtuple (tuples with named fields), dataclasses.
 *
 * A class statement runs its body in a namespace of its own (interp.c);
 * sr_class_new makes the class of it.  A class object is an SR_V_OBJ of
 * sr_type_class, an instance one of sr_instance_class whose type name
 * (sr_val_kind_name) is its class's name, so that errors say
 * "'TrainState' object has no attribute 'step'".  An instance's
 * operators, len, iteration, indexing, calls, str and repr go to the
 * dunder methods its class defines.  Instances of a class registered as
 * a pytree (namedtuples always; jax.tree_util's register_* for the rest)
 * are pytree nodes through SrLangOps.tree_children / tree_rebuild.
 */
#ifndef SR_LANG_CLASS_H
#define SR_LANG_CLASS_H

#include "py/objects.h"

extern const SrClass sr_type_class;
extern const SrClass sr_instance_class;

/* The class named name (interned) with the given base (borrowed; NULL:
   object) from the namespace ns (a dict of str keys, stolen) that its
   body made, whose __annotations__ (a dict of the names the body
   annotated, in order) give a NamedTuple's and a dataclass's fields.  A
   new reference, or NULL with an exception. */
SrVal *sr_class_new(SrInterp *I, const char *name, SrVal *base, SrVal *ns);
/* The class of a statement with n bases (borrowed): sr_class_new for one
   (or none), else the MRO by C3's linearization, with CPython's
   TypeErrors for an inconsistent order or a duplicate base. */
SrVal *sr_class_new_bases(SrInterp *I, const char *name, SrVal **bases, int n, SrVal *ns);
/* Whether x is an instance of t (1 or 0), or -1 when t is not a class of
   this file (the caller goes on with its own). */
int sr_class_isinstance(SrVal *x, SrVal *t);
/* `item in c` by c's __contains__: 1 or 0, -1 with an exception, -2 when
   c is not an instance whose class defines it. */
int sr_class_contains(SrInterp *I, SrVal *item, SrVal *c);
/* The class object of an instance (borrowed), or NULL for other values. */
SrVal *sr_class_of(const SrVal *v);
/* Whether v is an instance whose class defines __call__ (1), an instance
   whose class does not (0), or no instance (-1). */
int sr_class_instance_callable(const SrVal *v);
/* repr(v) into out for a printer with no interpreter at hand: -1 (out
   as it was, the exception cleared) when a class's __repr__ raised. */
int sr_class_repr_or_fail(SrBuf *out, const SrVal *v);
/* Whether v is an instance whose class (along its MRO) defines `name`. */
int sr_class_instance_has(const SrVal *v, const char *name);
/* v.name() for an instance whose class defines the method `name`: a new
   reference, or NULL (with an exception raised by the call; none when the
   class does not define it). */
SrVal *sr_class_call_method0(SrInterp *I, SrVal *v, const char *name);
/* super() in a method of cls called with self: a proxy whose attributes
   are looked up past cls in self's class's MRO. */
SrVal *sr_class_super(SrInterp *I, SrVal *cls, SrVal *self);
/* The interpreter whose Python a printer or a pytree walk calls (repr,
   tree_flatten), which have no interpreter of their own: the newest. */
void sr_class_set_interp(SrInterp *I);
void sr_class_forget_interp(SrInterp *I);

/* Pytree registrations (jax.tree_util): how a class's instances flatten. */
enum {
  SR_TREE_NONE,
  SR_TREE_FUNCS,     /* register_pytree_node(cls, flatten, unflatten) */
  SR_TREE_METHODS,   /* register_pytree_node_class: tree_flatten / tree_unflatten */
  SR_TREE_DATACLASS, /* register_dataclass(cls, data_fields, meta_fields) */
  SR_TREE_STATIC,    /* register_static: a node without children */
};
/* Registers cls (a class object of this file: else TypeError) as a
   pytree node of kind how, with a and b (borrowed): the flatten and
   unflatten functions, or the data and meta field names (lists of str;
   NULL for a dataclass's: its fields).  0, or -1 with an exception. */
int sr_class_register_pytree(SrInterp *I, SrVal *cls, int how, SrVal *a, SrVal *b);
/* A registered class's flatten_with_keys (borrowed): called on an
   instance it gives ((key, child), ...), aux_data), the keys of its key
   paths (register_pytree_with_keys).  0, or -1 with an exception. */
int sr_class_set_tree_keys(SrInterp *I, SrVal *cls, SrVal *flatten_with_keys);
/* The key path entries of a pytree node's children, as a new list of
   (tag, value) pairs: tag 0 a key as the flatten function gave it, 1 an
   attribute's name (GetAttrKey: a namedtuple's or a dataclass's field).
   NULL (no exception): the node has no keys (FlattenedIndexKey), or v is
   no instance of a registered class. */
SrVal *sr_class_tree_keys(SrInterp *I, SrVal *v);
/* The aux data of a registered class's instance v as flatten_one_level
   gives it (a new reference): a namedtuple's class, a dataclass's meta
   field values, a static node's None, a flatten function's aux_data.
   NULL: v is no such instance, or an exception. */
SrVal *sr_class_tree_aux(SrInterp *I, SrVal *v);
/* Whether cls is a class object registered as a pytree node or a
   namedtuple class (tree_util.is_tree_node). */
int sr_class_is_tree_node(const SrVal *cls);
/* Whether v is a namedtuple instance (1), one that is a pytree node as a
   namedtuple, its class not registered otherwise (2), or neither (0). */
int sr_class_namedtuple_kind(const SrVal *v);
/* How v's class is registered as a pytree node (SR_TREE_*), or
   SR_TREE_NONE. */
int sr_class_tree_kind(const SrVal *v);

/* Objects of cls read through an instance become methods bound to it,
   as functions do (descriptors with a __get__: jax.jit's PjitFunction). */
void sr_class_binds(const SrClass *cls);

/* Registers the built-ins of this file: object, property, staticmethod,
   classmethod, super, issubclass, iter, next, functools.cached_property,
   typing.NamedTuple,
   collections.namedtuple and the dataclasses module. */
void sr_class_init(void);

#endif

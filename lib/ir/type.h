/* type.h: array types (JAX's avals) with shardings.
 *
 * An SrType is immutable and hash-consed: types that are equal are the same
 * pointer, so comparing types is comparing pointers.  A type is a dtype, a
 * shape, and a sharding: for each dimension the mesh axes it is split over
 * (major first), and the sets of axes it is unreduced, reduced and varying
 * over.  The axes index the type's mesh, which is a mesh *shape* (see
 * mesh.h); a type with no mesh axes at all may have mesh == NULL.
 *
 * Build one with an SrTypeBuilder and sr_type_get().  Types are never freed.
 */
#ifndef SR_IR_TYPE_H
#define SR_IR_TYPE_H

#include <stdint.h>

#include "ir/dtype.h"
#include "ir/mesh.h"
#include "util/buf.h"

#define SR_MAX_RANK 32
#define SR_MAX_DIM_AXES 6

typedef struct SrDim {
  int64_t size;        /* -1 when symbolic */
  const char *sym;     /* a symbolic size's name (old dynamic shapes) */
  uint8_t nax;         /* axes this dimension is split over; 0 = none */
  uint8_t ax[SR_MAX_DIM_AXES]; /* mesh axis indices, major first */
} SrDim;

typedef struct SrType {
  uint32_t hash;
  SrDtype dtype;
  uint8_t weak;        /* a weakly typed value (~float32[]); never printed
                          in jaxprs */
  uint8_t ukind;       /* SrUnreducedKind of `unreduced` */
  uint8_t ndim;
  uint8_t ref;         /* a mutable array reference (AbstractRef) to an
                          array of this type otherwise: Ref{f32[3]}; 2 for
                          one of kind 'no_grad_no_remat' (not printed) */
  const char *mem;     /* memory space ("host", "any"); NULL for device */
  const char *named;   /* an old printer's named shape ("a:8" in
                          f16[4;a:8]), or NULL */
  SrAxes unreduced, reduced, varying;
  const SrMesh *mesh;  /* mesh shape; NULL when no axis is named */
  char *short_str;     /* cached f32[8@X,4] */
  SrDim dims[];
} SrType;

typedef struct SrTypeBuilder {
  SrDtype dtype;
  uint8_t weak, ukind, ndim, ref;
  const char *mem, *named;
  SrAxes unreduced, reduced, varying;
  const SrMesh *mesh;
  SrDim dims[SR_MAX_RANK];
} SrTypeBuilder;

const SrType *sr_type_get(const SrTypeBuilder *b);
/* jax_remove_size_one_mesh_axis_from_type: while on, the types made name
   no mesh axis of size 1 (in dimensions, unreduced, reduced or varying
   sets), as core.get_sharding and get_mat drop them. */
void sr_type_set_remove_size_one(int on);
int sr_type_remove_size_one(void);
extern int sr_type_drop_unit_axes; /* the option itself, for scopes that set and restore it */
/* A builder filled from t, to derive a new type from it. */
void sr_type_builder(SrTypeBuilder *b, const SrType *t);

/* Replicated, unsharded types. */
const SrType *sr_type_array(SrDtype dt, int ndim, const int64_t *shape);
const SrType *sr_type_scalar(SrDtype dt);

/* Copies of t with one thing changed. */
const SrType *sr_type_with_dtype(const SrType *t, SrDtype dt);
const SrType *sr_type_with_weak(const SrType *t, int weak);
/* The Ref type of an array type (AbstractRef(t)) and the array type a
   Ref holds (its inner_aval); each is t itself when t already is one. */
const SrType *sr_type_ref(const SrType *t);
/* The Ref type of kind k (1 plain, 2 no_grad_no_remat). */
const SrType *sr_type_ref_kind(const SrType *t, int k);
const SrType *sr_type_deref(const SrType *t);
/* No sharding at all: no axes, no unreduced/reduced/varying, no mesh. */
const SrType *sr_type_strip_sharding(const SrType *t);

static inline int sr_type_rank(const SrType *t) { return t->ndim; }
/* Element counts, checked: -1 if a size is symbolic (or negative) or the
   product does not fit in int64.  A type rule refuses a type whose count or
   byte size overflows (sr_type_rule), so -1 only reaches code that handles
   types no rule has made: parsed text and abstract values. */
int64_t sr_shape_numel(int ndim, const int64_t *shape);
int64_t sr_type_numel(const SrType *t);
/* numel * itemsize does not fit in int64: numpy's "array is too big" (the
   product of the nonzero sizes, so that no partial product overflows). */
int sr_type_too_big(const SrType *t);
/* numpy's ValueError for such a shape (_multiarray_umath) */
#define SR_TOO_BIG_MSG "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size."
/* The axes all dimensions are split over. */
SrAxes sr_type_sharded_axes(const SrType *t);
static inline SrAxes sr_dim_axes(const SrDim *d) {
  SrAxes a = 0;
  for (int i = 0; i < d->nax; i++) a |= 1u << d->ax[i];
  return a;
}
/* Everything but the mesh pointer is equal (a parsed text and a traced
   value may name the same axes through different meshes). */
int sr_type_equal_mod_mesh(const SrType *a, const SrType *b);

/* f32[8@X,4]{U:Y} (short dtype names, for jaxprs) or float32[8@X,4]{U:Y}
   (long names, for jax.typeof).  The short form is cached. */
const char *sr_type_short(const SrType *t);
void sr_type_str(SrBuf *out, const SrType *t, int short_dtype);
/* str(aval) as jax.typeof prints it: ~float32[] for weak types. */
void sr_type_long(SrBuf *out, const SrType *t);

#endif

/* mesh.h: meshes, PartitionSpecs and axis sets.
 *
 * An SrMesh is immutable and interned: equal meshes are the same pointer.
 * It names up to SR_MAX_AXES axes with their sizes and axis types.  Sizes
 * are 0 in an "unsized" mesh, the mesh a parsed text gets when nothing says
 * how big its axes are; such a mesh can be printed and checked for names,
 * but not run.
 *
 * Types (type.h) point at the mesh's *shape*: the same names and sizes with
 * every axis Explicit and no device fields, so that whether an axis is
 * Explicit, Auto or Manual is a fact of the context, not of the type.
 */
#ifndef SR_IR_MESH_H
#define SR_IR_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define SR_MAX_AXES 16

typedef uint32_t SrAxes; /* a set of a mesh's axes: bit i is axis i */

typedef enum { SR_AXIS_EXPLICIT, SR_AXIS_AUTO, SR_AXIS_MANUAL } SrAxisType;

typedef struct SrMesh {
  int n;
  const char *names[SR_MAX_AXES]; /* interned */
  int64_t sizes[SR_MAX_AXES];     /* 0: unknown */
  uint8_t types[SR_MAX_AXES];     /* SrAxisType */
  uint8_t abstract;      /* an AbstractMesh rather than a Mesh */
  uint8_t device_fields; /* AbstractMesh derived from a concrete mesh: prints
                            device_kind=cpu, num_cores=None, platform=cpu */
  uint8_t unsized;       /* names only (sizes are 0) */
  const int *devices;    /* a concrete mesh's device ids, row-major; NULL
                            for the default order 0..size-1 */
} SrMesh;

/* Interns a mesh described by *m (its names must be interned). */
const SrMesh *sr_mesh_intern(const SrMesh *m);
/* The empty mesh, Mesh() / AbstractMesh((), axis_types=()). */
const SrMesh *sr_mesh_empty(void);
/* Same names and sizes, every axis Explicit, abstract, no device fields. */
const SrMesh *sr_mesh_shape(const SrMesh *m);
/* A copy with new axis types, or with the abstract flags changed. */
const SrMesh *sr_mesh_with_types(const SrMesh *m, const uint8_t *types);
const SrMesh *sr_mesh_abstract(const SrMesh *m, int device_fields);

/* Index of an axis by interned name, or -1. */
static inline int sr_mesh_axis(const SrMesh *m, const char *name) {
  for (int i = 0; i < m->n; i++)
    if (m->names[i] == name) return i;
  return -1;
}
int64_t sr_mesh_size(const SrMesh *m); /* product of the axis sizes */
/* The product of n axis sizes (each >= 0), or -1 when it does not fit in
   64 bits.  make_mesh, Mesh, AbstractMesh and a jaxpr's mesh= param check
   their sizes with it; only --mesh's meshes, which are never run, may be
   larger (the type rules count their partitions without overflow). */
int64_t sr_mesh_size_of(const int64_t *sizes, int n);
/* Product of the sizes of the axes in a set. */
int64_t sr_mesh_axes_size(const SrMesh *m, SrAxes axes);
/* The axes of a given type. */
SrAxes sr_mesh_axes_of_type(const SrMesh *m, SrAxisType t);

/* str(mesh): Mesh('X': 4, 'Y': 2, axis_types=(Explicit, Explicit)), or the
   AbstractMesh form for abstract meshes. */
void sr_mesh_str(SrBuf *out, const SrMesh *m);
/* repr(mesh): Mesh(axis_sizes=(4, 2), axis_names=('X', 'Y'), ...). */
void sr_mesh_repr(SrBuf *out, const SrMesh *m);
/* "('X',)" or "('X', 'Y')": names of a set in mesh order, as a tuple. */
void sr_axes_tuple_str(SrBuf *out, const SrMesh *m, SrAxes axes);
/* The set's names in mesh order for the {V:(a,b)} type suffix. */
void sr_axes_suffix_str(SrBuf *out, const SrMesh *m, SrAxes axes);
const char *sr_axis_type_name(int t); /* "Explicit", "Auto", "Manual" */

static inline int sr_axes_count(SrAxes a) { return __builtin_popcount(a); }

/* ---- PartitionSpec ---- */

#define SR_SPEC_UNCONSTRAINED ((const char *)1)

typedef enum { SR_UK_NONE, SR_UK_SUM, SR_UK_MAX, SR_UK_MIN } SrUnreducedKind;

/* One entry of a PartitionSpec: None (n == 0), one axis (n == 1) or a tuple
   of axes.  An UNCONSTRAINED entry has n == 1 and names[0] ==
   SR_SPEC_UNCONSTRAINED. */
typedef struct SrSpecEntry {
  int n;
  const char **names; /* interned */
} SrSpecEntry;

typedef struct SrSpec {
  int n;
  SrSpecEntry *e;
  int nunreduced, nreduced;
  const char **unreduced, **reduced; /* in insertion order */
  uint8_t ukind; /* SrUnreducedKind; SR_UK_NONE iff nunreduced == 0 */
} SrSpec;

/* repr(P): P('X', None, unreduced={'Y'}, unreduced_kind=sum) */
void sr_spec_repr(SrBuf *out, const SrSpec *s);
const char *sr_ukind_name(int k); /* "sum", "max", "min" */
/* str() of the UnreducedKind member: "UnreducedKind.sum", or "None" */
const char *sr_ukind_str(int k);

/* repr (and str) of NamedSharding(mesh=m, spec=s), with memory_kind
   when it is not NULL: NamedSharding(mesh=Mesh('X': 4, ...), spec=P('X',)) */
void sr_sharding_repr(SrBuf *out, const SrMesh *m, const SrSpec *s, const char *memory_kind);

#endif

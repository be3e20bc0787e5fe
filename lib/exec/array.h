/* array.h: concrete arrays -- a global type, a mesh of devices, one shard
 * per device.
 *
 * An SrArray is what a jax.Array is: its type (what jax.typeof shows), its
 * layout (how the data is really spread over the devices: the type's
 * sharding plus any Auto mesh axes the evaluator chose), the concrete mesh
 * (device ids and axis types; NULL for a single-device array on device 0),
 * and one buffer per device of the mesh, indexed by mesh position
 * (row-major over the mesh axes; device id = mesh->devices[pos], or pos).
 *
 * What a device's buffer holds, from the layout:
 *  - a dimension split over mesh axes (major first): the device's block of
 *    that dimension;
 *  - an axis no dimension is split over: the same data on every device of
 *    the axis (replicated, or "reduced", which is replicated with a mark),
 *    or, if the axis is in the layout's unreduced set, a partial value:
 *    the true value is the sum (max, min for those kinds) over the axis;
 *  - a Manual axis (inside shard_map): whatever the device computed; the
 *    types of a shard_map body are per-device types, so the buffer is the
 *    device's whole local value.
 * Every shard is contiguous and row-major, laid out as numfmt.h describes,
 * unless the array has a device-local layout (`local`, exec/layout.h).
 *
 * Ownership, the one rule: SrBuffer and SrArray are reference counted;
 * constructors return a new reference, sr_*_unref drops one.  An array
 * holds one reference on each of its buffers, and several devices (in one
 * process) may share one buffer.  A buffer is immutable once it is in an
 * array, except by a holder of its only reference (sr_buffer_unique).
 *
 * Under MPI a rank holds only the buffers of its own devices; the others
 * are NULL.  A meshless array (mesh == NULL) is held by every rank.
 */
#ifndef SR_EXEC_ARRAY_H
#define SR_EXEC_ARRAY_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/mesh.h"
#include "ir/type.h"
#include "ir/val.h"

/* ---- buffers ---- */

typedef struct SrBuffer {
  int rc;
  size_t nbytes;
  void *data;             /* 64-byte aligned for owners */
  struct SrBuffer *base;  /* a view holds its base; NULL for an owner */
} SrBuffer;

/* A new buffer of n bytes, uninitialised (aborts when out of memory).  For
   buffers whose size a program chooses -- the results of equations -- the
   evaluator uses sr_ev_buffer (eval.h), which fails with JAX's error. */
SrBuffer *sr_buffer_new(size_t nbytes);
/* The same, or NULL when out of memory or past sr_mem_limit(). */
SrBuffer *sr_buffer_try(size_t nbytes);
SrBuffer *sr_buffer_zeros(size_t nbytes);
/* nbytes of zeros that may be shared: the same buffer again for the same
   size when it is big (XLA makes a program's zeros -- jnp.zeros_like, the
   devices an unreduced value is not on -- constants; made afresh they
   cost a fill and a page fault per 4 KiB at every step).  A kept buffer
   stays zero because only a sole holder may write a buffer, and the keeper
   is always one more holder.  NULL when out of memory. */
SrBuffer *sr_buffer_zeros_shared(size_t nbytes);
SrBuffer *sr_buffer_copy(const SrBuffer *b);
/* Bytes [off, off + n) of b, sharing its memory. */
SrBuffer *sr_buffer_view(SrBuffer *b, size_t off, size_t nbytes);
static inline SrBuffer *sr_buffer_ref(SrBuffer *b) {
  if (b) b->rc++;
  return b;
}
void sr_buffer_unref(SrBuffer *b);
/* The caller holds the only reference to b and to its memory. */
static inline int sr_buffer_unique(const SrBuffer *b) {
  return b->rc == 1 && (!b->base || b->base->rc == 1);
}
/* Bytes held by live owner buffers now, and the most ever held since the
   last reset (for memory tests and :comm's figures). */
void sr_buffer_stats(size_t *live, size_t *peak);
void sr_buffer_stats_reset_peak(void);

/* ---- meshes as the evaluator sees them ---- */

/* Devices of a mesh (1 for NULL), and the device id at a position.  An
   abstract mesh may be bigger than any device count: its count saturates
   at INT_MAX, which no run has. */
static inline int sr_mesh_ndev(const SrMesh *m) {
  if (!m) return 1;
  int64_t n = sr_mesh_size_of(m->sizes, m->n); /* -1: past 64 bits (--mesh) */
  return n < 0 || n > INT_MAX ? INT_MAX : (int)n;
}
static inline int sr_mesh_device(const SrMesh *m, int pos) {
  return m && m->devices ? m->devices[pos] : pos;
}
/* The coordinate of a position along mesh axis a. */
int64_t sr_mesh_coord(const SrMesh *m, int pos, int axis);
/* Row-major stride of mesh axis a (positions between neighbours). */
int64_t sr_mesh_stride(const SrMesh *m, int axis);

/* ---- layouts ----
 *
 * A layout is an SrType (hash-consed) whose sharding describes storage:
 * dims split over axes of any type, unreduced (with its kind), reduced.
 * It never has weak or varying marks, and its mesh is the mesh shape. */

/* The layout a type implies: the type without weak and varying. */
const SrType *sr_layout_of_type(const SrType *t);
/* Same storage? (dims' axes, unreduced and its kind; reduced and dtype
   are ignored, since reduced data is replicated data). */
int sr_layout_same(const SrType *a, const SrType *b);
/* How many pieces dim i is split into. */
int64_t sr_layout_splits(const SrType *l, int dim);
/* A layout whose shards all have the same shape: a dimension that the
   mesh axes it is split over do not divide (which XLA pads, the last
   shards short) stored whole instead, replicated over those axes, so
   that an unevenly sharded result holds JAX's values.  l itself when
   every split divides. */
const SrType *sr_layout_even(const SrType *l);
/* The shape of every shard. */
void sr_layout_shard_shape(const SrType *l, int64_t *shape);
int64_t sr_layout_shard_numel(const SrType *l);
/* Where the block of the device at pos starts, per dim (elements). */
void sr_layout_block_start(const SrType *l, const SrMesh *m, int pos, int64_t *start);
/* The index of the device's block along dim i (0 .. splits-1). */
int64_t sr_layout_block_index(const SrType *l, const SrMesh *m, int pos, int dim);
/* Bytes per element of a dtype in buffers (8 for key<fry>). */
size_t sr_elem_size(SrDtype dt);

/* ---- arrays ---- */

typedef struct SrArray {
  int rc;
  const SrType *type;    /* the language's type (jax.typeof) */
  const SrType *layout;  /* storage, see above */
  const SrMesh *mesh;    /* concrete; NULL: one device (0) */
  int ndev;              /* sr_mesh_ndev(mesh) */
  SrVal *sharding;       /* the sharding jax.device_put was given (x.sharding
                            shows it as given), or NULL */
  uint8_t local;         /* shards stored in m2m's order, not row-major */
  uint8_t committed;     /* placed on purpose (jax's committed) */
  uint8_t m2m[SR_MAX_RANK]; /* major_to_minor, when local (exec/layout.h) */
  SrBuffer *shard[];     /* by mesh position; NULL where not held */
} SrArray;

/* a, just made in the even layout of l for the sharding sh (a
   NamedSharding over a's concrete mesh), shows sh as its sharding when l
   is uneven: the layout it is stored in does not say it. */
void sr_array_note_uneven(SrArray *a, const SrType *l, const SrVal *sh);
/* A new array with no buffers yet. */
SrArray *sr_array_new(const SrType *type, const SrType *layout, const SrMesh *mesh);
static inline SrArray *sr_array_ref(SrArray *a) {
  if (a) a->rc++;
  return a;
}
void sr_array_unref(SrArray *a);
/* The same buffers under another type (a cast that moves no data); a type
   of the same rank keeps the device-local layout, and the array stays
   committed if it was. */
SrArray *sr_array_retype(SrArray *a, const SrType *type, const SrType *layout);
/* A single-device (or, with mesh, replicated) array from host data laid
   out row-major; the bytes are copied. */
SrArray *sr_array_from_data(const SrType *t, const SrMesh *mesh, const void *data);
/* Size in bytes of the array's shards. */
size_t sr_array_shard_bytes(const SrArray *a);
/* The buffer a device holds: the shard at pos, or the one buffer of a
   meshless array for any pos.  NULL if not held here. */
static inline SrBuffer *sr_array_buf(const SrArray *a, int pos) {
  return a->mesh ? a->shard[pos] : a->shard[0];
}

#endif

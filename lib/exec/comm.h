/* comm.h: the communication interface of the evaluator.
 *
 * Every collective the evaluator runs -- the data movement of explicit
 * mode (redistribute.c) and the collectives of manual mode -- is one call
 * through an SrCommOps table.  There are two implementations: comm_local.c
 * (every device in this process) and comm_mpi.c (one or more devices per
 * Open MPI rank; the only file that includes mpi.h).  They must give
 * byte-identical results, so each operation below defines its result
 * exactly, reduction order included.
 *
 * Devices and ranks.  The world has `ndev` devices, numbered 0..ndev-1,
 * and `nranks` ranks; rank r holds devices [dev_lo, dev_hi) =
 * [r * ndev / nranks, (r + 1) * ndev / nranks).  Every rank runs the same
 * statements and makes the same calls in the same order; a call passes only
 * the buffers of the calling rank's devices.
 *
 * Groups.  A collective runs over the mesh axes it names: the devices of
 * one group differ only in those axes.  An SrGroups describes all groups
 * of a (concrete mesh, ordered axis list) pair: each group lists its
 * members by mesh position; member i of a group is the device whose
 * coordinates along the listed axes, read row-major in the listed order,
 * make i.  Groups are built once per pair and cached (sr_comm_groups), and
 * the backend may attach what it needs (an MPI communicator per group) in
 * groups_init.
 *
 * Buffers.  `in` and `out` are indexed by mesh position and have one entry
 * per position of g->mesh.  A rank reads in[p] and fills out[p] exactly for
 * the positions p of its own devices and leaves every other entry alone.
 * An output is a new reference; members of one group whose results are
 * equal may share one buffer (comm_local does).  Inputs are not modified.
 *
 * Reductions.  All reductions fold the members' values in member order,
 * elementwise: acc = v0; acc = acc OP v1; ...; acc = acc OP v(n-1), each
 * step as sr_comm_fold() computes it (float16 and bfloat16 in float32,
 * rounded to nearest even after every step; integers wrap; max and min
 * propagate NaN).  A backend must produce exactly these bytes: for example
 * a pipelined chain 0 -> 1 -> ... -> n-1 per chunk followed by a
 * broadcast, or an all-gather followed by a local fold with sr_comm_fold.
 * A ring all-reduce that starts each chunk at a different member does not.
 *
 * Errors.  Operations return 0, or -1 after appending a diagnostic; a
 * backend must make every rank of the call return the same status.
 */
#ifndef SR_EXEC_COMM_H
#define SR_EXEC_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "exec/array.h"
#include "ir/dtype.h"
#include "ir/mesh.h"
#include "ir/type.h"
#include "util/diag.h"

typedef enum { SR_RED_SUM, SR_RED_MAX, SR_RED_MIN } SrRedOp;

typedef struct SrGroups {
  const SrMesh *mesh;  /* concrete (interned) */
  int naxes;
  int axes[SR_MAX_AXES]; /* mesh axis indices, in member order (major first) */
  int size;            /* members per group: product of the axes' sizes */
  int count;           /* number of groups: mesh size / size */
  int *members;        /* [count * size]: mesh position of member i of group
                          g at members[g * size + i]; groups are numbered in
                          order of their first member's position */
  int *group_of;       /* [mesh size]: the group of each position */
  int *index_of;       /* [mesh size]: the member index of each position */
  int nsub;            /* axis_index_groups: how many, 0 for none; the */
  int *sub;            /* [nsub * size] member indices of the whole
                          groups over the axes that make each subgroup */
  void *impl;          /* the backend's (groups_init / groups_free) */
  struct SrGroups *next; /* the cache's list */
} SrGroups;

struct SrComm;

typedef struct SrCommOps {
  const char *name; /* "local", "mpi" */
  void (*free)(struct SrComm *c);
  /* Optional: attach/detach backend data to a new group set. */
  int (*groups_init)(struct SrComm *c, SrGroups *g, SrDiags *d);
  void (*groups_free)(struct SrComm *c, SrGroups *g);

  /* out[p] = fold over the members of p's group of in[member] (count
     elements of dt each). */
  int (*all_reduce)(struct SrComm *c, const SrGroups *g, SrRedOp op, SrDtype dt, size_t count,
                    SrBuffer *const *in, SrBuffer **out, SrDiags *d);
  /* out[p] = in[member 0] ++ in[member 1] ++ ... (nbytes each). */
  int (*all_gather)(struct SrComm *c, const SrGroups *g, size_t nbytes, SrBuffer *const *in,
                    SrBuffer **out, SrDiags *d);
  /* in[p] is size chunks of count elements; out[member j] = fold over
     the members i of chunk j of in[member i]. */
  int (*reduce_scatter)(struct SrComm *c, const SrGroups *g, SrRedOp op, SrDtype dt, size_t count,
                        SrBuffer *const *in, SrBuffer **out, SrDiags *d);
  /* in[p] is size chunks of nbytes; chunk i of out[member j] = chunk j of
     in[member i]. */
  int (*all_to_all)(struct SrComm *c, const SrGroups *g, size_t nbytes, SrBuffer *const *in,
                    SrBuffer **out, SrDiags *d);
  /* For each pair k, out[member dst[k]] = in[member src[k]] in every
     group; a member that is no pair's destination gets nbytes of zeros.
     The dst are distinct. */
  int (*ppermute)(struct SrComm *c, const SrGroups *g, int npairs, const int *src, const int *dst,
                  size_t nbytes, SrBuffer *const *in, SrBuffer **out, SrDiags *d);
  /* Every rank gets the nbytes the device `device` holds (buf, on the
     rank that holds it; ignored elsewhere): printing, item(), host
     copies.  *out is a new reference. */
  int (*fetch)(struct SrComm *c, int device, SrBuffer *buf, size_t nbytes, SrBuffer **out,
               SrDiags *d);
  /* Logical OR of a flag over all ranks (errors and loop predicates are
     agreed on before anyone goes on); -1 when the statement has failed on
     some rank (the MPI backend), and the caller fails too. */
  int (*any)(struct SrComm *c, int flag);
  /* Optional: sr_comm_resize changed ndev and this rank's devices; the
     backend updates what it keeps per device.  No communication. */
  void (*resize)(struct SrComm *c);
  /* Optional: fails on every rank (with a diagnostic) when the ranks'
     operands (SrComm.operands) differ, without moving data: the check the
     other operations make first, for a host copy of an array every rank
     holds whole. */
  int (*check)(struct SrComm *c, SrDiags *d);
} SrCommOps;

/* The global types of the operation under way: the inputs of the
   equation being run, or the array being copied to the host.  The MPI
   backend agrees on their dtypes and shapes with the other ranks before
   it moves data, so a name bound to arrays of different shapes on
   different ranks is an error where they meet, not a wrong result.  Set
   with sr_comm_operands, which returns what to restore. */
typedef struct SrCommOperands {
  const SrType *const *types;
  int n;
} SrCommOperands;

typedef struct SrComm {
  const SrCommOps *ops;
  int ndev;            /* devices in the world */
  int nranks, rank;
  int dev_lo, dev_hi;  /* this rank's devices */
  SrGroups *groups;    /* the cache */
  SrCommOperands operands;
} SrComm;

static inline SrCommOperands sr_comm_operands(SrComm *c, const SrType *const *types, int n) {
  SrCommOperands old = c->operands;
  c->operands.types = types;
  c->operands.n = n;
  return old;
}

/* The in-process implementation: every device is local. */
SrComm *sr_comm_local_new(int ndev);
void sr_comm_free(SrComm *c);
/* Makes c a backend for ndev devices (a multiple of c->nranks) before it
   ran any operation: jax_num_cpu_devices before a device is first used.
   Each rank does it alone; rank r then holds devices [r * ndev / nranks,
   (r + 1) * ndev / nranks). */
void sr_comm_resize(SrComm *c, int ndev);

/* Does this rank hold the device at position pos of mesh m?  (A meshless
   array is held everywhere.) */
static inline int sr_comm_local(const SrComm *c, const SrMesh *m, int pos) {
  if (!m) return 1;
  int dev = sr_mesh_device(m, pos);
  return dev >= c->dev_lo && dev < c->dev_hi;
}

/* The groups of (mesh, axes in order), built once and cached in c.
   NULL (with a diagnostic) if the backend cannot make them. */
const SrGroups *sr_comm_groups(SrComm *c, const SrMesh *m, const int *axes, int naxes, SrDiags *d);
/* The groups of (mesh, axes) split by axis_index_groups: each group over
   the axes becomes nsub groups of subsize members, subgroup k holding the
   members sub[k * subsize + j] (indices along the axes), in that order. */
const SrGroups *sr_comm_groups_sub(SrComm *c, const SrMesh *m, const int *axes, int naxes, int nsub, int subsize,
                                   const int *sub, SrDiags *d);
/* The same for a set of axes, in mesh order. */
const SrGroups *sr_comm_groups_set(SrComm *c, const SrMesh *m, SrAxes axes, SrDiags *d);

/* acc[i] = acc[i] OP x[i] for n elements of dt: the one reduction step
   every backend uses.  Returns -1 for a dtype it cannot reduce. */
int sr_comm_fold(SrRedOp op, SrDtype dt, size_t n, void *acc, const void *x);
int sr_comm_fold_supported(SrDtype dt);

#endif

/* layout.h: device-local layouts -- the order of a shard's elements in its
 * device's memory (jax.experimental.layout.Layout).
 *
 * A distributed layout (array.h) says which block of an array a device
 * holds; a device-local layout says how that block is laid out in the
 * device's buffer.  JAX names it by major_to_minor: the dims from the
 * slowest-varying to the fastest, so (0, 1) is row-major and (1, 0)
 * column-major for two dims.  XLA's minor_to_major is its reverse.
 *
 * An SrArray with `local` clear is row-major (every shard contiguous,
 * C order), the default layout of every array.  With `local` set, every
 * shard of the array is stored in the order m2m names, with the strides
 * sr_local_strides() gives: the buffers really are laid out so.
 *
 * The rule for eval rules, one sentence: every eval rule sees row-major
 * inputs.  sr_ev_eqn() relays out any other input before it calls a rule
 * (a local copy on each device, no communication), except for the
 * primitives that only pass arrays along and say what layout they leave
 * (the rows flagged SR_PF_LAYOUT in prims/prim.def: the calls, whose
 * bodies' equations relay out in their turn, layout_constraint,
 * optimization_barrier).  Rules make
 * row-major results.  sr_redistribute() and sr_array_to_host() relay out
 * first too, so collectives, printing and np.save see row-major data.
 * What makes a non-default layout: device_put with a Format, a jit
 * equation's in_layouts / out_layouts, and layout_constraint.
 *
 * Committed arrays (`committed`): JAX's notion of an array placed on
 * devices on purpose.  jax.device_put commits; an operation commits its
 * results when an input is committed, a mesh is in context or it runs on
 * several devices (pxla.py: lower_sharding_computation); jnp.ones(...)
 * with no mesh makes an uncommitted array.  A compiled function accepts
 * an uncommitted argument in any layout (it is relaid out) but requires a
 * committed one to have the layout it was compiled for.
 */
#ifndef SR_EXEC_LAYOUT_H
#define SR_EXEC_LAYOUT_H

#include <stdint.h>

#include "exec/array.h"
#include "util/buf.h"

/* Is m2m (nd dims) the identity, row-major?  NULL is row-major. */
int sr_local_is_row_major(int nd, const uint8_t *m2m);
/* Is m2m a permutation of 0 .. nd-1? */
int sr_local_valid(int nd, const int64_t *m2m);
/* Element strides of a shard of `shape` stored in order m2m (NULL:
   row-major). */
void sr_local_strides(int nd, const int64_t *shape, const uint8_t *m2m, int64_t *strides);
/* The device-local layout of an array: m2m filled (row-major when not
   local). */
void sr_array_local(const SrArray *a, uint8_t *m2m);

/* a with every shard stored in order m2m (NULL: row-major); a new
   reference, a itself when nothing changes.  Devices that share a buffer
   share the relaid-out one. */
SrArray *sr_array_relayout(SrArray *a, const uint8_t *m2m);
/* a in the default (row-major) layout; a new reference. */
static inline SrArray *sr_array_row_major(SrArray *a) {
  return a->local ? sr_array_relayout(a, NULL) : sr_array_ref(a);
}

/* Layout(major_to_minor=(1, 0), tiling=None, sub_byte_element_size_in_bits=0) */
void sr_local_repr(SrBuf *out, int nd, const uint8_t *m2m);
/* A layout param value (a Layout's repr text, as a jaxpr prints it and a
   trace stores it, or a tuple of ints): 1 with m2m filled for a concrete
   layout of nd dims, 0 for None, AUTO or an absent param, -1 when the
   text is not a layout of nd dims. */
int sr_local_parse(const SrVal *v, int nd, uint8_t *m2m);

struct SrJaxpr;
struct SrEvalCtx;
struct SrEvalEqn;

/* Layout.AUTO for input `arg` (an index into sr_args(j)) of nd dims: the
   layout the compiled function requests.  XLA:CPU keeps row-major
   layouts; the one choice made here is for an input the body reads only
   as lines along one dim (each use's row says so with its minor rule,
   prims/prim.h: a slice whose extent is more than 1 in that dim alone, as
   x[:, 0] reads column 0): that dim becomes the most minor, so each line
   is contiguous, and the others keep their order.  Anything else gets
   row-major.  Outputs under AUTO are row-major. */
void sr_local_auto(const struct SrJaxpr *j, uint32_t arg, int nd, uint8_t *m2m);

/* The jit / pjit params of a call equation, applied around its body:
   sr_ev_call_inputs moves in[i] (a new reference in place) to
   in_shardings[i] and in_layouts[i] (AUTO chosen by sr_local_auto);
   sr_ev_call_outputs moves e->out[i] to out_shardings[i] and lays it out
   as out_layouts[i] says (row-major unless it names a Layout), and marks
   the results committed when JAX's dispatch would (a committed input, a
   mesh in context, several devices, or a sharding given). */
int sr_ev_call_inputs(struct SrEvalCtx *cx, const struct SrEvalEqn *e, const struct SrJaxpr *j, SrArray **in);
int sr_ev_call_outputs(struct SrEvalCtx *cx, const struct SrEvalEqn *e);

#endif

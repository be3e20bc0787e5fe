/* layout.h: jax.experimental.layout (Layout, Format, Layout.AUTO,
 * with_layout_constraint), SingleDeviceSharding, x.format (layout.c), and
 * the stages of jax.jit (stages.c, jax._src.stages) -- jit(f,
 * in_shardings=, out_shardings=).trace(*args).lower().compile(), with
 * input_formats / output_formats and the checks a compiled function makes
 * of its arguments.
 *
 * Layout, Format and SingleDeviceSharding values are interned: equal
 * values share their data, so == on them, and on tuples of them, is
 * Python's ==.  In a jaxpr's params a Layout is the text of its repr
 * (exec/layout.h reads it back), a SingleDeviceSharding too.
 */
#ifndef SR_LANG_LAYOUT_API_H
#define SR_LANG_LAYOUT_API_H

#include <stdint.h>

#include "py/interp.h"

struct SrType;

/* SingleDeviceSharding(device=CpuDevice(id=dev)), a new reference; the
   device of one, or -1 for any other value. */
SrVal *sr_single_device_sharding(int dev);
int sr_single_device_sharding_id(const SrVal *v);

/* The parts of a Format value: *sharding (borrowed; NULL for None) and
   its layout: *has_layout 1 with *layout (borrowed) the Layout, -1 for
   Layout.AUTO, 0 for None.  Returns 0, or -1 (nothing set) when v is not a
   Format. */
int sr_format_parts(SrVal *v, SrVal **sharding, SrVal **layout, int *has_layout);

/* The dims of a Layout, in m2m[]: their number, or -1 when they are not
   a permutation of 0..n-1 (check with sr_layout_misfit first). */
int sr_layout_dims(const SrVal *layout, uint8_t *m2m);

/* Why the Layout `layout` does not fit a value of type t: 0 when it does;
   1 with JAX's ValueError text in out for a rank that differs ("Length of
   major_to_minor and the rank of the value should match. Got
   major_to_minor=(1, 0) and shape=(8,)"); 2 with XLA's JaxRuntimeError
   text for dims that are not a permutation. */
int sr_layout_misfit(SrBuf *out, const SrVal *layout, const struct SrType *t);

/* The params in_shardings, out_shardings, in_layouts and out_layouts of a
   jit equation (four new tuples in p[0..3], in that order), from the
   in_shardings / out_shardings given to jax.jit (NULL: unspecified) --
   shardings, P (with the mesh in context), Formats, or pytree prefixes of
   the positional arguments and of the result -- for a body with
   ncaptured captured inputs first.  Also JAX's checks of committed
   arguments against them.  Returns -1 with an exception. */
int sr_jit_formats(SrInterp *I, SrVal *fn, SrVal *in_sh, SrVal *out_sh, int nargs, SrVal **args, int ncaptured,
                   SrVal *out_tree, SrVal **p);

/* What stages.c uses of the layouts and jit's shardings: */
/* Whether v is a Layout; Layout.AUTO. */
int sr_is_layout(const SrVal *v);
int sr_is_layout_auto(const SrVal *v);
/* The (interned) Layout of nd dims m2m, and the Format of a layout and a
   sharding (borrowed; None or NULL for none); new references. */
SrVal *sr_layout_val(int nd, const uint8_t *m2m);
SrVal *sr_format_val(SrVal *layout, SrVal *sharding);
/* One flat entry of in_shardings / out_shardings: a sharding (or NULL:
   unspecified) and a layout (a Layout, AUTO, or NULL). */
typedef struct SrJitEntry {
  SrVal *sh, *lay; /* borrowed from the user's values or from `keep` */
} SrJitEntry;
typedef struct SrJitFlat {
  SrJitEntry *e;
  int n, cap;
  SrVal *keep; /* a list holding the values made here */
} SrJitFlat;
/* The flat entries of a jit's in_shardings (spec, for the nargs
   positional arguments args, tree NULL) or out_shardings (for the result
   tree); what names the option in errors.  0, or -1 with an exception;
   free f with sr_jit_flat_free either way. */
int sr_jit_flat_entries(SrInterp *I, SrVal *spec, int nargs, SrVal **args, SrVal *tree, const char *what,
                        SrJitFlat *f);
void sr_jit_flat_free(SrJitFlat *f);
/* prepare_axis_resources' checks of in_shardings / out_shardings' leaves
   (what names the option): 0, or -1 with TypeError / ValueError. */
int sr_jit_check_axis_resources(SrInterp *I, SrVal *v, const char *what, int depth);
/* The concrete array of an argument leaf, or NULL. */
struct SrArray *sr_jit_leaf_array(SrVal *v);
/* Does a committed array's placement differ from a jit sharding?  (P('X')
   and P('X', None) are one placement.) */
int sr_jit_sharding_differs(struct SrArray *x, SrVal *sh);
/* The sharding JAX gives a value of type t that was given none (a new
   reference). */
SrVal *sr_jit_default_sharding(SrInterp *I, const struct SrType *t);

/* The stages (stages.c). */
/* jax.jit(f, ...).trace(*args, **kwargs): a Traced stage (.jaxpr,
   .lower()); donated says which of the arguments' leaves (positional,
   then keyword in sorted order; ndon of them) are donated, or is NULL. */
SrVal *sr_jit_stage_trace(SrInterp *I, SrVal *fn, const char *name, SrVal *in_sh, SrVal *out_sh, SrArgs *a,
                          const uint8_t *donated, int ndon);
/* The Traced stage of a trace already made (SR_TRACE_KWARGS): takes body's
   program reference, out_tree and captured (NULL: none). */
SrVal *sr_jit_stage_of_trace(SrInterp *I, struct SrJaxpr *body, SrVal *out_tree, SrVal *captured, SrVal *fn,
                             const char *name, SrVal *in_sh, SrVal *out_sh, SrArgs *a, const uint8_t *donated,
                             int ndon);
/* jit's device= on a traced stage: its compiled calls' results are put
   on that device */
void sr_jit_stage_set_device(SrVal *stage, SrVal *device);
/* traced.lower() */
SrVal *sr_jit_stage_lower(SrInterp *I, SrVal *traced);

/* From builtins_exec.c: a device value (CpuDevice(id=...)) and the id of
   one (-1 for another value); an array's concrete sharding (x.sharding). */
struct SrArray;
SrVal *sr_concrete_device_val(int id);
int sr_concrete_device_id(const SrVal *v);
SrVal *sr_concrete_array_sharding(struct SrArray *a);
/* sharding.devices_indices_map(shape): {device: index} */
SrVal *sr_devices_indices_map(SrInterp *I, SrVal *sharding, SrVal *shape);

void sr_layout_api_init(void);

/* pjit.pjit_check_aval_sharding for one leaf of type t given sharding sh
   (NULL: unspecified): the spec fits t's rank and, unless uneven, divides
   its shape.  -1 with JAX's ValueError / IndivisibleError raised. */
int sr_jit_check_aval_sharding(SrInterp *I, const SrVal *sh, const SrType *t, const char *what_aval, const char *name,
                               int uneven);

#endif

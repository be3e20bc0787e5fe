/* lax_scatter.c: lax.scatter_apply and x.at[idx].apply (slicing.py's
 * scatter_apply: a scatter whose update_jaxpr is func's, traced on
 * scalars, that the evaluator applies at each index in turn), and lax's
 * public gather/scatter API: lax.gather, lax.scatter and its kin,
 * GatherDimensionNumbers, ScatterDimensionNumbers and GatherScatterMode.
 *
 * The dimension numbers are NamedTuples as JAX's are; the primitives
 * take them as the text JAX prints (ScatterDimensionNumbers(update_...)),
 * their fields as tuples of ints.  A GatherScatterMode member is the word
 * GatherScatterMode.CLIP (its str; JAX's repr is <GatherScatterMode.CLIP: 1>). */
#include <stdlib.h>
#include <string.h>

#include "jax/api.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/lax_scatter.h"
#include "jax/numpy.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- update_jaxpr: lax._reduction_jaxpr(lambda x, _: func(x), aval) ---- */

static SrVal *apply_body(SrInterp *I, SrArgs *a) {
  SrVal *func = sr_current_builtin(I)->data;
  if (a->n != 2) return sr_raise(I, "TypeError", "_apply takes 2 arguments");
  SrArgs ca = {1, a->v, 0, NULL, NULL, NULL};
  return sr_call(I, func, &ca);
}

static void unref_data(void *p) { sr_unref(p); }

/* The ClosedJaxpr of func(x) on x of zero's type (and an unused second
   argument), and its consts; NULL with JAX's exception. */
static SrJaxpr *reduction_jaxpr(SrInterp *I, SrVal *func, SrVal *zero) {
  SrVal *wrap = sr_builtin_with("_apply", apply_body, sr_ref(func), unref_data);
  SrVal *args[2] = {zero, zero}, *out_tree = NULL, *captured = NULL;
  SrJaxpr *j = sr_trace_fn(I, wrap, 2, args, 0, NULL, NULL, SR_TRACE_CONSTVARS, NULL, &out_tree, &captured);
  sr_unref(wrap);
  if (j && captured && captured->seq.n > 0) {
    sr_raise(I, "NotImplementedError",
             "Reduction computations can't close over Tracers. Please open an issue at https://github.com/jax-ml/jax.");
    sr_program_unref(j->prog);
    j = NULL;
  } else if (j && (j->nout != 1 || !sr_array_of(out_tree))) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, out_tree);
    sr_raise(I, "ValueError",
             "Invalid return type from reduction function: <class '%s'>\nReduction functions should only return an "
             "array.\nFull return value: %s",
             sr_val_kind_name(out_tree), sr_buf_str(&b));
    sr_buf_free(&b);
    sr_program_unref(j->prog);
    j = NULL;
  }
  sr_unref(out_tree);
  sr_unref(captured);
  return j;
}

SrVal *sr_lax_scatter_apply_bind(SrInterp *I, SrVal *x, SrVal *ix, SrVal *func, SrVal *dnums,
                                 const int64_t *ushape, int nu, int sorted, int unique, SrVal *mode) {
  SrVal *r = NULL, *zero = NULL, *unused = NULL;
  const SrType *t = sr_value_type(I, x);
  /* unused = lax.full(update_shape, 0, operand.dtype) */
  SrVal *z0 = sr_int(NULL, 0);
  zero = t ? sr_jnp_asarray(I, z0, t->dtype) : NULL;
  sr_unref(z0);
  if (zero) unused = sr_lax_broadcast_to(I, zero, ushape, nu, NULL);
  SrJaxpr *j = unused ? reduction_jaxpr(I, func, zero) : NULL;
  if (j) {
    SrVal *consts = sr_seq(NULL, SR_V_TUPLE, (int)j->nconst);
    for (uint32_t i = 0; i < j->nconst; i++) sr_seq_push(NULL, consts, j->consts[i] ? sr_ref(j->consts[i]) : sr_none());
    SrVal *jv = sr_jaxpr_val(NULL, j);
    sr_program_unref(j->prog);
    SrVal *in[3] = {sr_ref(x), sr_ref(ix), sr_ref(unused)};
    if (sr_auto_insert_reshard(I, 3, in) == 0) {
      r = sr_bindv(I, SR_P_scatter, 3, in, "dimension_numbers", sr_ref(dnums), "indices_are_sorted", sr_bool(sorted),
                   "mode", sr_ref(mode), "unique_indices", sr_bool(unique), "update_consts", consts, "update_jaxpr",
                   jv, NULL);
    } else {
      sr_unref(consts);
      sr_unref(jv);
    }
    for (int i = 0; i < 3; i++) sr_unref(in[i]);
  }
  sr_unref(zero);
  sr_unref(unused);
  return r;
}

void sr_lax_scatter_init(void) {}

/* lax_prims.c: jax.lax's primitive objects (lax.add_p, lax.dot_general_p,
 * ...): JAX's core.Primitive, with .name (the printed name, 'scatter-add'
 * for scatter_add_p), str and repr the name, and .bind(*args, **params),
 * which binds the primitive as JAX's Primitive.bind does (the params as
 * given, no defaults).  There is one object per primitive: a jaxpr
 * equation's .primitive is that object, so `eqn.primitive is
 * lax.dot_general_p` holds, as in JAX.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/numpy.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "util/intern.h"
#include "util/mem.h"

typedef struct PrimObj {
  const char *name; /* interned printed name */
} PrimObj;

static void prim_free(void *d) { free(d); }
static void prim_repr(SrBuf *out, const SrVal *v) { sr_buf_puts(out, ((const PrimObj *)v->obj.data)->name); }

static SrVal *prim_bind(SrInterp *I, SrArgs *a) {
  const PrimObj *p = a->self ? a->self->obj.data : NULL;
  if (!p) return sr_raise(I, "TypeError", "bind() needs a primitive");
  const SrPrim *row = sr_prim_lookup(p->name, strlen(p->name));
  if (!row || row->id < 0) return sr_raise(I, "NotImplementedError", "no rules for %s", p->name);
  int id = row->id;
  SrVal **in = sr_xmalloc(sizeof *in * (size_t)(a->n + 1));
  SrParam *ps = sr_xmalloc(sizeof *ps * (size_t)(a->nkw + 1));
  int n = 0;
  SrVal *r = NULL;
  for (; n < a->n; n++) {
    in[n] = sr_jnp_asarray(I, a->v[n], -1);
    if (!in[n]) goto done;
  }
  for (int k = 0; k < a->nkw; k++) {
    ps[k].key = a->kw[k];
    ps[k].val = a->kwv[k];
  }
  r = sr_bind(I, id, n, in, a->nkw, ps);
done:
  for (int i = 0; i < n; i++) sr_unref(in[i]);
  free(in);
  free(ps);
  return r;
}

static SrVal *prim_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const PrimObj *p = self->obj.data;
  if (strcmp(name, "name") == 0) return sr_str_cstr(NULL, p->name);
  if (strcmp(name, "bind") == 0) {
    SrVal *b = sr_builtin_with("bind", prim_bind, NULL, NULL);
    ((SrBuiltin *)b->obj.data)->self = sr_ref(self);
    return b;
  }
  if (strcmp(name, "multiple_results") == 0) {
    const SrPrim *row = sr_prim_lookup(p->name, strlen(p->name));
    return sr_bool(row && (row->flags & SR_PF_MULTI));
  }
  return NULL;
}

static const SrLangOps prim_ops = {.getattr = prim_getattr};
static const SrClass prim_class = {"Primitive", prim_free, prim_repr, NULL, &prim_ops};

static int prim_equal(const SrVal *a, const SrVal *b) {
  return ((const PrimObj *)a->obj.data)->name == ((const PrimObj *)b->obj.data)->name;
}

/* The objects made so far, one per printed name; they live as long as the
   process. */
static struct {
  const char *name;
  SrVal *obj;
} *objs;
static int nobjs, capobjs;

SrVal *sr_lax_prim_obj(const char *name) {
  const char *k = sr_intern_cstr(name);
  for (int i = 0; i < nobjs; i++)
    if (objs[i].name == k) return sr_ref(objs[i].obj);
  if (nobjs == capobjs) {
    capobjs = capobjs ? 2 * capobjs : 64;
    objs = sr_xrealloc(objs, sizeof *objs * (size_t)capobjs);
  }
  PrimObj *p = sr_xcalloc(1, sizeof *p);
  p->name = k;
  objs[nobjs].name = k;
  objs[nobjs].obj = sr_obj(&prim_class, p);
  return sr_ref(objs[nobjs++].obj);
}

/* The rows' identifiers, in the table's order (their SR_P_ ids). */
static const char *const row_ids[] = {
#define SR_PRIM(id, name, flags, pp) #id,
#include "prims/prim.def"
#undef SR_PRIM
};

/* jax.lax's *_p exports (JAX 0.11's lax/__init__.py) */
static const char *const lax_p_names =
    " abs acos acosh add after_all all_gather all_to_all and approx_top_k argmax argmin asin asinh atan2 atan atanh"
    " axis_index bessel_i0e bessel_i1e bitcast_convert_type broadcast_in_dim cbrt ceil clamp clz complex"
    " concatenate cond conj conv_general_dilated convert_element_type copy cos cosh create_token cumlogsumexp"
    " cummax cummin cumprod cumsum dce_sink digamma div dot_general dynamic_slice dynamic_update_slice eq eq_to"
    " erf_inv erf erfc exp2 exp expm1 fft floor gather ge gt igamma_grad_a igamma igammac imag integer_pow iota"
    " is_finite le le_to lgamma linear_solve log1p log logistic lt lt_to max min mul mulhi ne neg nextafter not"
    " optimization_barrier or pad pmax pmin polygamma population_count pow ppermute psum ragged_all_to_all real"
    " reduce_and reduce_max reduce_min reduce_or reduce reduce_precision reduce_prod reduce_sum reduce_window_max"
    " reduce_window_min reduce_window reduce_window_sum reduce_xor regularized_incomplete_beta rem reshape rev"
    " rng_bit_generator rng_uniform round rsqrt scan scatter_add scatter_max scatter_min scatter_mul scatter"
    " scatter_sub select_and_gather_add select_and_scatter_add select_and_scatter select_n shift_left"
    " shift_right_arithmetic shift_right_logical sign sin sinh slice sort split sqrt square squeeze stack stage"
    " sub tan tanh tile top_k transpose unstack while xor zeta stop_gradient sharding_constraint device_put ";

void sr_lax_prims_init(void) {
  sr_lax_init();
  sr_val_equal_class(&prim_class, prim_equal);
  for (int i = 0; i < SR_NPRIMS; i++) {
    char key[96];
    snprintf(key, sizeof key, " %s ", row_ids[i]);
    if (!strstr(lax_p_names, key)) continue;
    char q[128];
    snprintf(q, sizeof q, "jax.lax.%s_p", row_ids[i]);
    SrVal *o = sr_lax_prim_obj(sr_prims[i].name);
    sr_register(q, o); /* steals o */
  }
  sr_register("jax.random.random_gamma_p", sr_lax_prim_obj("random_gamma")); /* random/core.py's */
  /* partial_eval.py's eval_jaxpr_p (call_jaxpr= a closed jaxpr), its rules
     in lax/eval_jaxpr.py; core's name for it too */
  sr_register("jax._src.interpreters.partial_eval.eval_jaxpr_p", sr_lax_prim_obj("eval_jaxpr"));
  sr_register("jax._src.lax.eval_jaxpr.eval_jaxpr_p", sr_lax_prim_obj("eval_jaxpr"));
  sr_register("jax._src.core.eval_jaxpr_p", sr_lax_prim_obj("eval_jaxpr"));
}

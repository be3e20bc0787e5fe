/* nn.c: jax.nn (jax/_src/nn/functions.py). */
#include "jax/jax.h"
#include "jax/lax.h"
#include "py/objects.h"

static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }

/* jax.nn.sigmoid is lax.logistic, with no promotion */
static SrVal *nn_sigmoid(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "sigmoid() takes 1 positional argument");
  SrVal *x = arr(I, a->v[0]);
  SrVal *r = x ? sr_lax_unary(I, SR_P_logistic, x) : NULL;
  sr_unref(x);
  return r;
}

/* ---- registration ---- */

void sr_nn_init(void) {
  sr_def("jax.nn.sigmoid", nn_sigmoid, "sigmoid(x): lax.logistic");
}

/* numpy_apiC.c: jax.numpy's tensordot and vdot
 * (numpy/tensor_contractions.py), binding what JAX's bind.  Registered
 * by sr_jnp_apiC_init (jax.h). */
#include <stdlib.h>
#include <string.h>

#include "check/rule.h"
#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/mem.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static int given(const SrVal *v) { return v && v->kind != SR_V_NONE; }

static int is_list_or_tuple(const SrVal *v) { return v->kind == SR_V_TUPLE || v->kind == SR_V_LIST; }

/* util.canonicalize_axis: a ValueError, not numpy's AxisError */
static int canon_axis(SrInterp *I, int64_t axis, int nd, int64_t *out) {
  if (axis < -nd || axis >= nd) {
    sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, nd);
    return -1;
  }
  *out = axis < 0 ? axis + nd : axis;
  return 0;
}

/* the axes of one side of tensordot's pair: an int or a list/tuple of ints */
static int side_axes(SrInterp *I, SrVal *v, int nd, int64_t *out, int *n) {
  if (v->kind == SR_V_INT) {
    *n = 1;
    return canon_axis(I, v->i, nd, out);
  }
  *n = v->seq.n;
  for (int i = 0; i < v->seq.n; i++) {
    int64_t ax;
    if (sr_as_int(I, v->seq.items[i], "axes", &ax) < 0 || canon_axis(I, ax, nd, &out[i]) < 0) return -1;
  }
  return 0;
}

/* jnp.tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
   out_sharding=None): one dot_general over the contracted axes, converted
   to the result dtype (not a jit) */
static SrVal *jnp_tensordot(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "tensordot", "a, b, axes=, *, precision=, preferred_element_type=, out_sharding=", p) < 0)
    return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *y = x ? sr_jnp_asarray(I, p[1], -1) : NULL, *r = NULL;
  int pt;
  if (!y || sr_dtype_arg(I, p[4], &pt, "tensordot") < 0) goto done;
  const SrType *tx = vtype(I, x), *ty = vtype(I, y);
  SrDtype pref;
  int weak = 0;
  if (pt >= 0) {
    pref = (SrDtype)pt;
  } else {
    SrVal *xs[2] = {x, y};
    pref = sr_jnp_result_dtype(I, 2, xs, &weak);
  }
  int64_t lc[SR_MAX_RANK], rc[SR_MAX_RANK];
  int nl = 0, nr = 0;
  SrVal *axes = p[2];
  if (!axes || axes->kind == SR_V_INT) {
    int64_t k = axes ? axes->i : 2;
    if (k > tx->ndim || k > ty->ndim) {
      SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
      sr_shape_str(&b1, tx);
      sr_shape_str(&b2, ty);
      sr_raise(I, "TypeError", "Number of tensordot axes (axes %lld) exceeds input ranks (%s and %s)", (long long)k,
               sr_buf_str(&b1), sr_buf_str(&b2));
      sr_buf_free(&b1);
      sr_buf_free(&b2);
      goto done;
    }
    for (int64_t i = 0; i < k; i++) {
      lc[nl++] = tx->ndim - k + i;
      rc[nr++] = i;
    }
  } else if (is_list_or_tuple(axes) && axes->seq.n == 2) {
    SrVal *a1 = axes->seq.items[0], *a2 = axes->seq.items[1];
    int ints = a1->kind == SR_V_INT && a2->kind == SR_V_INT;
    int seqs = is_list_or_tuple(a1) && is_list_or_tuple(a2);
    if (!ints && !seqs) {
      SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
      sr_val_repr(&b1, a1);
      sr_val_repr(&b2, a2);
      sr_raise(I, "TypeError", "tensordot requires both axes lists to be either ints, tuples or lists, got %s and %s",
               sr_buf_str(&b1), sr_buf_str(&b2));
      sr_buf_free(&b1);
      sr_buf_free(&b2);
      goto done;
    }
    if (seqs && a1->seq.n != a2->seq.n) {
      SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
      sr_val_repr(&b1, a1);
      sr_val_repr(&b2, a2);
      sr_raise(I, "TypeError", "tensordot requires axes lists to have equal length, got %s and %s.",
               sr_buf_str(&b1), sr_buf_str(&b2));
      sr_buf_free(&b1);
      sr_buf_free(&b2);
      goto done;
    }
    if ((seqs && (a1->seq.n > SR_MAX_RANK)) || side_axes(I, a1, tx->ndim, lc, &nl) < 0 ||
        side_axes(I, a2, ty->ndim, rc, &nr) < 0)
      goto done;
  } else {
    sr_raise(I, "TypeError",
             "tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples of ints.");
    goto done;
  }
  SrVal *d = sr_lax_dot_general(I, x, y, lc, nl, rc, nr, NULL, 0, NULL, 0, given(p[3]) ? p[3] : NULL, pref,
                                given(p[5]) ? p[5] : NULL);
  if (d) r = sr_lax_convert(I, d, pref, weak, NULL);
  sr_unref(d);
done:
  sr_unref(x);
  sr_unref(y);
  return r;
}

/* jnp.vdot(a, b, *, precision=None, preferred_element_type=None): an
   inlined jit: dot(conj(a).ravel(), b.ravel()) */
static SrVal *jnp_vdot(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "vdot", "a, b, *, precision=, preferred_element_type=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *y = x ? sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (y && sr_dtype_kind(vtype(I, x)->dtype) == SR_DK_COMPLEX) x = sr_nn_call1(&s, "jax.numpy.conj", x);
  SrVal *xr = y ? sr_nn_call1(&s, "jax.numpy.ravel", x) : NULL;
  SrVal *yr = xr ? sr_nn_call1(&s, "jax.numpy.ravel", y) : NULL;
  SrVal *r = NULL;
  if (yr) {
    const char *kw[] = {"precision", "preferred_element_type"};
    SrVal *kwv[] = {given(p[2]) ? p[2] : NULL, given(p[3]) ? p[3] : NULL};
    SrVal *args[2] = {xr, yr};
    r = sr_nn_call(&s, "jax.numpy.dot", 2, args, 2, kw, kwv);
  }
  return sr_nn_done(&s, r);
}

void sr_jnp_apiC_init(void) {
  static const struct {
    const char *name;
    SrBuiltinFn fn;
    const char *doc;
  } fns[] = {
      {"jax.numpy.tensordot jax.numpy.linalg.tensordot", jnp_tensordot,
       "tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None): a dot_general over the axes axes names"},
      {"jax.numpy.vdot", jnp_vdot,
       "vdot(a, b, *, precision=None, preferred_element_type=None): the dot product of conj(a) and b, flattened"},
  };
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) sr_def(fns[i].name, fns[i].fn, fns[i].doc);
}

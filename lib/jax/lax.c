/* lax.c: jax.lax's primitives.
 *
 * The lax functions themselves (one per lax function of JAX, binding the
 * primitives JAX binds, with JAX's params and skips) are the one op layer
 * of ad/ops.h, which lax.h's sr_lax_* bind into the current trace.  This
 * file has what only the API needs (the context's mesh, canonicalize_sharding,
 * jax.reshard's checks), then registers the jax.lax built-ins (lax/lax.py,
 * lax/slicing.py), each saying which JAX function it follows; the rest of
 * jax.lax is in lax_control_flow.c and lax_parallel.c.
 */
#include "jax/lax.h"
#include "jax/np_host.h"
#include "jax/jax.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "py/enum.h"
#include "py/introspect.h"
#include "py/range.h"
#include "jax/vjp.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- values and context ---- */

const SrMesh *sr_api_mesh(SrInterp *I) { return sr_jax_abstract_mesh(I->jax); }

SrVal *sr_api_type_spec(const SrType *t) {
  SrShardSpec s;
  sr_shard_of_type(t, &s);
  if (!s.mesh) s.mesh = sr_mesh_empty();
  return sr_shard_to_spec_val(&s);
}

int sr_api_axis_names(SrInterp *I, SrVal *v, const SrMesh *m, SrAxes *out, const char *what) {
  *out = 0;
  int n = 1;
  SrVal **items = &v;
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST || v->kind == SR_V_SET || v->kind == SR_V_FROZENSET) {
    n = v->seq.n;
    items = v->seq.items;
  }
  for (int i = 0; i < n; i++) {
    const char *s = sr_as_str(I, items[i], what);
    if (!s) return -1;
    int a = sr_mesh_axis(m, s);
    if (a < 0) {
      SrBuf b = SR_BUF_INIT;
      sr_mesh_str(&b, m);
      sr_raise(I, "NameError", "unbound axis name: %s. The following axis names (e.g. defined by pmap) are available to collective operations: %s",
               s, b.p ? b.p : "");
      sr_buf_free(&b);
      return -1;
    }
    *out |= 1u << a;
  }
  return 0;
}

int sr_api_axis(SrInterp *I, int64_t axis, int nd, int64_t *out) {
  if (axis < -nd || axis >= nd) {
    sr_raise(I, "AxisError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, nd);
    return -1;
  }
  *out = axis < 0 ? axis + nd : axis;
  return 0;
}

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

/* The op layer's helpers under the names this file's built-ins use. */
static inline SrVal *sharding_or_none(SrVal *sh) { return sh ? sr_ref(sh) : sr_none(); }
static inline SrVal *normalized_sharding(SrVal *sh, int nd) { return sr_op_normalized_sharding(sh, nd); }
static inline int same_sharding(SrInterp *I, SrVal *x, SrVal *sh) { return sr_op_has_sharding(I, x, sh); }

/* ---- canonicalize_sharding ---- */

static int spec_mentions_non_explicit(SrInterp *I, const SrMesh *m, const SrSpec *s, const char *api) {
  for (int pass = 0; pass < 3; pass++) {
    int n = pass == 0 ? s->n : pass == 1 ? s->nunreduced : s->nreduced;
    for (int i = 0; i < n; i++) {
      int cnt = pass == 0 ? s->e[i].n : 1;
      for (int k = 0; k < cnt; k++) {
        const char *nm = pass == 0 ? s->e[i].names[k] : pass == 1 ? s->unreduced[i] : s->reduced[i];
        if (nm == SR_SPEC_UNCONSTRAINED) continue;
        int a = sr_mesh_axis(m, nm);
        if (a >= 0 && m->types[a] != SR_AXIS_EXPLICIT) {
          SrBuf b = SR_BUF_INIT;
          sr_spec_repr(&b, s);
          sr_raise(I, "ValueError",
                   "PartitionSpec passed to %s cannot contain axis names that are of type Auto or Manual. Got "
                   "PartitionSpec: %s with axis name: %s of type: %s.",
                   api, b.p, nm, sr_axis_type_name(m->types[a]));
          sr_buf_free(&b);
          return -1;
        }
      }
    }
  }
  return 0;
}

/* sharding_impls.canonicalize_sharding: None, a P over the context mesh, or
   a NamedSharding over an abstract mesh.  *out is NULL for None. */
static int canon_sharding(SrInterp *I, SrVal *v, const char *api, int check_mesh, SrVal **out) {
  *out = NULL;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (v->kind == SR_V_SHARDING && v->sh.mesh->n == 0) return 0;
  const SrMesh *cur = sr_api_mesh(I);
  if (v->kind == SR_V_SPEC) {
    if (!cur->n) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, v);
      sr_raise(I, "ValueError",
               "Using PartitionSpec when you are not under a mesh context is not allowed. Please pass a "
               "NamedSharding instance or enter into a mesh context via `jax.set_mesh`. Got %s",
               b.p);
      sr_buf_free(&b);
      return -1;
    }
    if (sr_api_check_spec(I, v->spec, NULL, -1) < 0 || spec_mentions_non_explicit(I, cur, v->spec, api) < 0) return -1;
    *out = sr_sharding_val(NULL, cur, v->spec, NULL);
    return 0;
  }
  if (v->kind != SR_V_SHARDING) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, v);
    sr_raise(I, "TypeError",
             "`out_sharding` argument of %s only supports instances of `NamedSharding` or `PartitionSpec`. Got %s "
             "of type: <class '%s'>",
             api, b.p ? b.p : "", sr_val_kind_name(v));
    sr_buf_free(&b);
    return -1;
  }
  const SrMesh *m = v->sh.mesh->abstract ? v->sh.mesh : sr_mesh_abstract(v->sh.mesh, 1);
  int all_auto = 1;
  for (int i = 0; i < m->n; i++) all_auto &= m->types[i] == SR_AXIS_AUTO;
  int cur_auto = 1;
  for (int i = 0; i < cur->n; i++) cur_auto &= cur->types[i] == SR_AXIS_AUTO;
  /* the abstract meshes differ in their names, sizes or axis types */
  int differ = sr_mesh_shape(m) != sr_mesh_shape(cur) || memcmp(m->types, cur->types, (size_t)m->n) != 0;
  if (check_mesh && !(all_auto && cur_auto) && cur->n && differ) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_mesh_str(&b, cur);
    sr_mesh_str(&c, m);
    sr_raise(I, "ValueError", "Context mesh %s should match the mesh of sharding %s passed to %s.", b.p, c.p, api);
    sr_buf_free(&b);
    sr_buf_free(&c);
    return -1;
  }
  if (spec_mentions_non_explicit(I, m, v->sh.spec, api) < 0) return -1;
  if (v->sh.mesh->abstract && v->sh.memory_kind) {
    /* core.get_sharding, on the aval the sharding types (a concrete mesh's
       sharding was made abstract, its memory kind dropped) */
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, v);
    sr_raise(I, "ValueError",
             "sharding with memory_kind is not allowed. Please use `jax.device_put` to transfer to different memory "
             "spaces. Got sharding=%s",
             b.p);
    sr_buf_free(&b);
    return -1;
  }
  *out = sr_sharding_val(NULL, m, v->sh.spec, NULL);
  return 0;
}

int sr_api_check_spec(SrInterp *I, const SrSpec *s, const SrVal *sharding, int ndim) {
  if (sr_api_check_unique(I, s, "NamedSharding spec") < 0) return -1;
  /* NamedSharding.check_compatible_aval */
  if (ndim >= 0 && s->n > ndim) {
    SrBuf b = SR_BUF_INIT;
    if (sharding) sr_val_str(&b, sharding);
    else sr_spec_repr(&b, s);
    sr_raise(I, "ValueError",
             "Sharding %s is only valid for values of rank at least %d, but was applied to a value of rank %d.%s",
             b.p, s->n, ndim, ndim == 0 ? " For scalars the PartitionSpec should be P()" : "");
    sr_buf_free(&b);
    return -1;
  }
  return 0;
}

int sr_api_check_unique(SrInterp *I, const SrSpec *s, const char *arg_name) {
  /* named_sharding._check_unique_resources */
  const char *seen[SR_MAX_RANK * SR_MAX_DIM_AXES], *dup[SR_MAX_RANK * SR_MAX_DIM_AXES];
  int ns = 0, nd = 0;
  for (int i = 0; i < s->n; i++)
    for (int k = 0; k < s->e[i].n; k++) {
      const char *nm = s->e[i].names[k];
      if (nm == SR_SPEC_UNCONSTRAINED) continue;
      int j = 0, again = 0;
      while (j < ns && seen[j] != nm) j++;
      if (j == ns) {
        if (ns < (int)(sizeof seen / sizeof *seen)) seen[ns++] = nm;
        continue;
      }
      for (j = 0; j < nd; j++) again |= dup[j] == nm;
      if (!again) dup[nd++] = nm;
    }
  if (nd) {
    /* mesh_lib.show_axes: sorted, each in backquotes */
    for (int i = 1; i < nd; i++)
      for (int j = i; j > 0 && strcmp(dup[j - 1], dup[j]) > 0; j--) {
        const char *t = dup[j];
        dup[j] = dup[j - 1];
        dup[j - 1] = t;
      }
    SrBuf b = SR_BUF_INIT, ax = SR_BUF_INIT;
    sr_spec_repr(&b, s);
    for (int i = 0; i < nd; i++) sr_buf_printf(&ax, i ? ", `%s`" : "`%s`", dup[i]);
    sr_raise(I, "DuplicateSpecError",
             "A single %s specification can map every mesh axis to at most one positional "
             "dimension, but %s has duplicate entries for %s",
             arg_name, b.p, ax.p);
    sr_buf_free(&b);
    sr_buf_free(&ax);
    return -1;
  }
  return 0;
}

int sr_api_canon_sharding(SrInterp *I, SrVal *v, const char *api, SrVal **out) {
  return canon_sharding(I, v, api, 1, out);
}

/* ---- jax.reshard ---- */

SrVal *sr_lax_reshard(SrInterp *I, SrVal *x, SrVal *arg) {
  SrVal *ds;
  if (canon_sharding(I, arg, "reshard", 0, &ds) < 0) return NULL;
  if (!ds) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, arg ? arg : sr_none());
    sr_raise(I, "ValueError",
             "Reshard should only be used with out_shardings which are non-None and have a non-empty mesh. Got "
             "sharding %s.",
             b.p);
    sr_buf_free(&b);
    return NULL;
  }
  const SrType *t = vtype(I, x);
  if (!t) {
    sr_unref(ds);
    return sr_raise(I, "TypeError", "reshard expects arrays, got %s", sr_val_kind_name(x));
  }
  SrVal *cm = arg->kind == SR_V_SHARDING && !arg->sh.mesh->abstract ? sr_mesh_val(NULL, arg->sh.mesh) : NULL;
  SrVal *r = sr_op_reshard(SR_BINDER(I), x, ds, cm);
  sr_unref(ds);
  sr_unref(cm);
  return r;
}

/* ---- calls ---- */

typedef struct ApiJit {
  SrBuiltinFn fn;
  void *data;
} ApiJit;

SrVal *sr_api_jit(SrInterp *I, const char *name, SrBuiltinFn fn, void *data, int n, SrVal **args) {
  SrVal *b = sr_builtin_with(name, fn, data, free);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, name, &a);
  sr_unref(b);
  return r;
}

SrVal *sr_api_bind_typed(SrInterp *I, int prim, int nin, SrVal **in, SrPList *ps, const SrType **outs,
                         uint32_t nout) {
  sr_lax_init();
  if (sr_prims[prim].type) return sr_bind(I, prim, nin, in, ps->n, ps->p);
  return sr_bind_prim(I, &sr_prims[prim], nin, in, ps->n, ps->p, outs, nout);
}

/* ======================================================================
 * jax.lax built-ins
 * ====================================================================== */

/* An int or a sequence of ints (a shape, axes, a permutation); None: none
   (the name the built-ins of this file use). */
static int ints_arg(SrInterp *I, SrVal *v, int64_t *out, int *n, const char *what) {
  return sr_ints_arg(I, v, out, n, what);
}


static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }

/* An operand of a primitive's lax function: core.Primitive.bind's error
   for a value that is no JAX type */
static SrVal *operand(SrInterp *I, SrVal *v, const char *prim, int pos) {
  SrVal *x = arr(I, v);
  if (x || !I->exc || !sr_exception_is_a(sr_exc_type(I->exc), "TypeError")) return x;
  sr_exc_clear(I);
  SrVal *t = sr_type_of(I, v);
  SrBuf b = SR_BUF_INIT;
  if (t) sr_to_repr(I, &b, t);
  sr_unref(t);
  sr_raise(I, "TypeError",
           "Error interpreting argument to %s as a JAX value. The problematic value is of type %s and was passed to "
           "%s at position %d.\n",
           prim, sr_buf_str(&b), prim, pos);
  sr_buf_free(&b);
  return NULL;
}

/* lax.AccuracyMode (an enum.Enum: HIGHEST = 1, DEFAULT = 2), made once */
static SrVal *accuracy_mode;

static SrVal *get_accuracy_mode(SrInterp *I) {
  if (!accuracy_mode) {
    SrVal *base = sr_lookup_qualname("enum.Enum");
    if (!base) return sr_raise(I, "RuntimeError", "enum.Enum is not registered");
    SrVal *ns = sr_dict(NULL);
    sr_dict_set(NULL, ns, sr_str(NULL, "HIGHEST", 7), sr_int(NULL, 1));
    sr_dict_set(NULL, ns, sr_str(NULL, "DEFAULT", 7), sr_int(NULL, 2));
    accuracy_mode = sr_enum_class_new(I, "AccuracyMode", base, ns);
    if (!accuracy_mode) return NULL;
  }
  return sr_ref(accuracy_mode);
}

static SrVal *lax_unary_fn(SrInterp *I, SrArgs *a, int prim, const char *name) {
  if (a->n != 1) return sr_raise(I, "TypeError", "%s() takes 1 positional argument but %d were given", name, a->n);
  /* accuracy= (a lax.Tolerance or lax.AccuracyMode) of the ops that have
     one: the equation's accuracy param */
  SrVal *acc = NULL;
  for (int i = 0; i < a->nkw; i++) {
    if (strcmp(a->kw[i], "accuracy") != 0 || sr_prims[prim].pp != SR_PP_ACCURACY)
      return sr_raise(I, "TypeError", "%s() got an unexpected keyword argument '%s'", name, a->kw[i]);
    acc = a->kwv[i];
  }
  SrVal *x = operand(I, a->v[0], sr_prims[prim].name, 0);
  if (!x) return NULL;
  SrVal *r;
  if (acc && acc->kind != SR_V_NONE) {
    /* the param prints as str(accuracy) (core.pp_kv_pair): an
       AccuracyMode member as AccuracyMode.HIGHEST */
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, acc);
    SrVal *pv = sr_enum_type_of(acc) ? sr_word(NULL, sr_buf_str(&b), b.len) : sr_ref(acc);
    sr_buf_free(&b);
    r = sr_bindv(I, prim, 1, &x, "accuracy", pv, NULL);
  } else {
    r = sr_lax_unary(I, prim, x);
  }
  sr_unref(x);
  return r;
}

static SrVal *lax_binary_fn(SrInterp *I, SrArgs *a, int prim, const char *name) {
  if (a->n != 2) return sr_raise(I, "TypeError", "%s() takes 2 positional arguments but %d were given", name, a->n);
  SrVal *x = operand(I, a->v[0], sr_prims[prim].name, 0), *y = x ? operand(I, a->v[1], sr_prims[prim].name, 1) : NULL;
  SrVal *r = x && y ? sr_lax_binary(I, prim, x, y) : NULL;
  sr_unref(x);
  sr_unref(y);
  return r;
}

#define LAX_UNARY(fn, prim, name) \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return lax_unary_fn(I, a, prim, name); }
#define LAX_BINARY(fn, prim, name) \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return lax_binary_fn(I, a, prim, name); }
LAX_UNARY(lax_neg, SR_P_neg, "neg")
LAX_UNARY(lax_sin, SR_P_sin, "sin")
LAX_UNARY(lax_cos, SR_P_cos, "cos")
LAX_UNARY(lax_tan, SR_P_tan, "tan")
LAX_UNARY(lax_tanh, SR_P_tanh, "tanh")
LAX_UNARY(lax_exp, SR_P_exp, "exp")
LAX_UNARY(lax_exp2, SR_P_exp2, "exp2")
LAX_UNARY(lax_log, SR_P_log, "log")
LAX_UNARY(lax_log1p, SR_P_log1p, "log1p")
LAX_UNARY(lax_expm1, SR_P_expm1, "expm1")
LAX_UNARY(lax_sqrt, SR_P_sqrt, "sqrt")
LAX_UNARY(lax_rsqrt, SR_P_rsqrt, "rsqrt")
LAX_UNARY(lax_cbrt, SR_P_cbrt, "cbrt")
LAX_UNARY(lax_abs, SR_P_abs, "abs")
LAX_UNARY(lax_sign, SR_P_sign, "sign")
LAX_UNARY(lax_floor, SR_P_floor, "floor")
LAX_UNARY(lax_ceil, SR_P_ceil, "ceil")
LAX_UNARY(lax_logistic, SR_P_logistic, "logistic")
LAX_UNARY(lax_square, SR_P_square, "square")
LAX_UNARY(lax_is_finite, SR_P_is_finite, "is_finite")
LAX_UNARY(lax_not, SR_P_not, "bitwise_not")
LAX_UNARY(lax_erf, SR_P_erf, "erf")
LAX_UNARY(lax_erfc, SR_P_erfc, "erfc")
LAX_BINARY(lax_add, SR_P_add, "add")
LAX_BINARY(lax_sub, SR_P_sub, "sub")
/* lax.mul(x, y, *, out_dtype=None): mul_p with out_dtype (the product
   computed in that dtype; the operands' dtypes may then differ) */
static SrVal *lax_mul(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "mul", "x, y, *, out_dtype=", p) < 0) return NULL;
  if (!p[2] || p[2]->kind == SR_V_NONE) {
    SrArgs b = {2, p, 0, NULL, NULL, NULL};
    return lax_binary_fn(I, &b, SR_P_mul, "mul");
  }
  int dt;
  if (sr_dtype_arg(I, p[2], &dt, "mul") < 0) return NULL;
  SrVal *x = operand(I, p[0], "mul", 0), *y = x ? operand(I, p[1], "mul", 1) : NULL;
  SrVal *in[2] = {x, y};
  SrVal *r = x && y ? sr_bindv(I, SR_P_mul, 2, in, "out_dtype", sr_dtype_val(NULL, (SrDtype)dt), NULL) : NULL;
  sr_unref(x);
  sr_unref(y);
  return r;
}
LAX_BINARY(lax_div, SR_P_div, "div")
LAX_BINARY(lax_rem, SR_P_rem, "rem")
LAX_BINARY(lax_pow, SR_P_pow, "pow")
LAX_BINARY(lax_max, SR_P_max, "max")
LAX_BINARY(lax_min, SR_P_min, "min")
LAX_BINARY(lax_atan2, SR_P_atan2, "atan2")
LAX_UNARY(lax_real, SR_P_real, "real")
LAX_UNARY(lax_imag, SR_P_imag, "imag")
LAX_BINARY(lax_complex, SR_P_complex, "complex")

/* lax.conj: conj_p with the operand's dtype as input_dtype */
static SrVal *lax_conj(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "conj", "x", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  SrVal *r = t ? sr_bindv(I, SR_P_conj, 1, &x, "input_dtype", sr_dtype_val(NULL, t->dtype), NULL) : NULL;
  sr_unref(x);
  return r;
}
LAX_BINARY(lax_eq, SR_P_eq, "eq")
LAX_BINARY(lax_ne, SR_P_ne, "ne")
LAX_BINARY(lax_lt, SR_P_lt, "lt")
LAX_BINARY(lax_le, SR_P_le, "le")
LAX_BINARY(lax_gt, SR_P_gt, "gt")
LAX_BINARY(lax_ge, SR_P_ge, "ge")
LAX_BINARY(lax_and, SR_P_and, "bitwise_and")
LAX_BINARY(lax_or, SR_P_or, "bitwise_or")
LAX_BINARY(lax_xor, SR_P_xor, "bitwise_xor")

static SrVal *lax_integer_pow(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "integer_pow", "x, y", p) < 0) return NULL;
  int64_t y;
  if (sr_as_int(I, p[1], "y", &y) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_integer_pow, 1, &x, "y", sr_int(NULL, y), NULL);
  sr_unref(x);
  return r;
}

static SrVal *lax_round(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "round", "x, rounding_method=", p) < 0) return NULL;
  int64_t m = 0;
  if (p[1] && sr_as_int(I, p[1], "rounding_method", &m) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_round, 1, &x, "rounding_method", sr_int(NULL, m), NULL);
  sr_unref(x);
  return r;
}

/* lax.reduce_precision: the operand rounded to a float format of
   exponent_bits and mantissa_bits, as XLA's ReducePrecision does */
static SrVal *lax_reduce_precision(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "reduce_precision", "operand, exponent_bits, mantissa_bits", p) < 0) return NULL;
  int64_t eb, mb;
  if (sr_as_int(I, p[1], "exponent_bits argument of lax.reduce_precision", &eb) < 0 ||
      sr_as_int(I, p[2], "mantissa_bits argument of lax.reduce_precision", &mb) < 0)
    return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_reduce_precision, 1, &x, "exponent_bits", sr_int(NULL, eb), "mantissa_bits",
                      sr_int(NULL, mb), NULL);
  sr_unref(x);
  return r;
}

static SrVal *lax_convert_element_type(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int dt;
  if (sr_args_parse(I, a, "convert_element_type", "operand, new_dtype", p) < 0) return NULL;
  if (sr_dtype_arg(I, p[1], &dt, "convert_element_type") < 0) return NULL;
  if (dt < 0) return sr_raise(I, "TypeError", "convert_element_type: new_dtype must be a dtype");
  /* extended dtypes (keys): their rules allow no conversion */
  const SrType *t = sr_value_type(I, p[0]);
  int from_key = t && strncmp(sr_dtype_name(t->dtype), "key<", 4) == 0;
  int to_key = strncmp(sr_dtype_name((SrDtype)dt), "key<", 4) == 0;
  if (t && (from_key || to_key)) {
    if (t->dtype == (SrDtype)dt) return sr_ref(p[0]);
    if (from_key && to_key)
      return sr_raise(I, "ValueError",
                      "cannot directly convert between extended dtypes: from %s to %s. Instead, convert to and from "
                      "their representation dtypes, e.g.:\n%s -> uint32 -> uint32 -> %s",
                      sr_dtype_name(t->dtype), sr_dtype_name((SrDtype)dt), sr_dtype_name(t->dtype),
                      sr_dtype_name((SrDtype)dt));
    return sr_raise(I, "ValueError", "Cannot convert_element_type from %s to %s", sr_dtype_name(t->dtype),
                    sr_dtype_name((SrDtype)dt));
  }
  /* a numpy array or scalar is staged as an array even when its dtype is
     already the one asked for (lax.py's TypedNdArray and stage) */
  if (sr_is_ndarray(p[0]) || sr_np_is_scalar(p[0])) {
    SrVal *x = sr_jnp_asarray(I, p[0], -1);
    SrVal *r = x ? sr_lax_convert(I, x, (SrDtype)dt, 0, NULL) : NULL;
    sr_unref(x);
    return r;
  }
  return sr_lax_convert(I, p[0], (SrDtype)dt, 0, NULL);
}

/* jax._src.lax.lax._convert_element_type(operand, new_dtype=None,
   weak_type=False): convert_element_type with the result's weak type */
static SrVal *lax_convert_element_type_weak(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "_convert_element_type", "operand, new_dtype=, weak_type=", p) < 0) return NULL;
  int dt = -1;
  if (p[1] && sr_dtype_arg(I, p[1], &dt, "convert_element_type") < 0) return NULL;
  if (dt < 0) {
    const SrType *t = sr_value_type(I, p[0]);
    if (!t) return NULL;
    dt = (int)t->dtype;
  }
  /* a Python scalar becomes an array (lax.py binds convert_element_type
     on its TypedNdArray) */
  SrVal *x = p[0]->kind == SR_V_INT || p[0]->kind == SR_V_FLOAT || p[0]->kind == SR_V_BOOL || p[0]->kind == SR_V_COMPLEX ||
                     sr_is_ndarray(p[0])
                 ? sr_jnp_asarray(I, p[0], dt)
                 : sr_ref(p[0]);
  SrVal *r = x ? sr_lax_convert(I, x, (SrDtype)dt, p[2] && sr_val_truthy(p[2]), NULL) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_broadcast_in_dim(SrInterp *I, SrArgs *a) {
  SrVal *p[4], *sh = NULL;
  if (sr_args_parse(I, a, "broadcast_in_dim", "operand, shape, broadcast_dimensions, *, out_sharding=", p) < 0)
    return NULL;
  int64_t shape[SR_MAX_RANK], bd[SR_MAX_RANK];
  int nd, nb;
  if (ints_arg(I, p[1], shape, &nd, "shape") < 0 || ints_arg(I, p[2], bd, &nb, "broadcast_dimensions") < 0) return NULL;
  if (canon_sharding(I, p[3], "broadcast_in_dim", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_broadcast_in_dim(I, x, shape, nd, bd, nb, sh) : NULL;
  sr_unref(x);
  sr_unref(sh);
  return r;
}

static SrVal *lax_broadcast(SrInterp *I, SrArgs *a) {
  SrVal *p[3], *sh = NULL;
  if (sr_args_parse(I, a, "broadcast", "operand, sizes, *, out_sharding=", p) < 0) return NULL;
  int64_t sizes[SR_MAX_RANK], shape[SR_MAX_RANK], bd[SR_MAX_RANK];
  int ns;
  if (ints_arg(I, p[1], sizes, &ns, "sizes") < 0) return NULL;
  if (canon_sharding(I, p[2], "broadcast", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  if (ns + t->ndim > SR_MAX_RANK) return sr_raise(I, "ValueError", "too many dimensions");
  for (int i = 0; i < ns; i++) shape[i] = sizes[i];
  for (int i = 0; i < t->ndim; i++) {
    shape[ns + i] = t->dims[i].size;
    bd[i] = ns + i;
  }
  SrVal *r = ns == 0 && !sh ? sr_ref(x) : sr_lax_broadcast_in_dim(I, x, shape, ns + t->ndim, bd, t->ndim, sh);
  sr_unref(x);
  sr_unref(sh);
  return r;
}

static SrVal *lax_reshape(SrInterp *I, SrArgs *a) {
  SrVal *p[4], *sh = NULL;
  if (sr_args_parse(I, a, "reshape", "operand, new_sizes, dimensions=, *, out_sharding=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  /* core.canonicalize_shape: operator.index of each size; a concrete value
     that is no integer (a float, an array) is _invalid_shape_error's */
  if (p[1]->kind == SR_V_TUPLE || p[1]->kind == SR_V_LIST) {
    for (int i = 0; i < p[1]->seq.n; i++) {
      SrVal *d = p[1]->seq.items[i];
      const SrArrayObj *ao = sr_array_of(d);
      int64_t v;
      if (ao && ao->kind != SR_AV_CONCRETE) continue;
      if (sr_as_index(I, d, &v) == 0) continue;
      sr_exc_clear(I);
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, p[1]);
      sr_raise(I, "TypeError", "Shapes must be 1D sequences of concrete values of integer type, got %s.", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
  }
  if (ints_arg(I, p[1], shape, &nd, "new_sizes") < 0) return NULL;
  /* dimensions: the operand's dimensions in the order they are read
     (a transpose first); the identity order is as good as none */
  int64_t dims[SR_MAX_RANK];
  int ndims = -1;
  if (p[2] && p[2]->kind != SR_V_NONE && ints_arg(I, p[2], dims, &ndims, "dimensions") < 0) return NULL;
  if (canon_sharding(I, p[3], "reshape", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  int permuted = x && ndims >= 0 && ndims != vtype(I, x)->ndim;
  for (int i = 0; x && i < ndims; i++) permuted |= dims[i] != i;
  SrVal *r = NULL;
  if (x && permuted)
    r = sr_op_bindv(SR_BINDER(I), SR_P_reshape, 1, &x, "new_sizes", sr_int_tuple(shape, nd), "dimensions",
                    sr_int_tuple(dims, ndims), "sharding", sh ? sr_ref(sh) : sr_none(), NULL);
  else if (x)
    r = sr_lax_reshape(I, x, shape, nd, sh);
  sr_unref(x);
  sr_unref(sh);
  return r;
}

static SrVal *lax_transpose(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "transpose", "operand, permutation", p) < 0) return NULL;
  int64_t perm[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], perm, &n, "permutation") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_transpose(I, x, perm, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_squeeze(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "squeeze", "array, dimensions", p) < 0) return NULL;
  int64_t d[SR_MAX_RANK];
  int n = 0;
  SrVal *x = arr(I, p[0]);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  if (!t) {
    sr_unref(x);
    return NULL;
  }
  /* lax.py: sorted(canonicalize_axis(i, ndim) for i in dimensions), whose
     operator.index raises TypeError and the range check ValueError */
  if (p[1]->kind == SR_V_TUPLE || p[1]->kind == SR_V_LIST) {
    for (int i = 0; i < p[1]->seq.n; i++) {
      int64_t v;
      if (n == SR_MAX_RANK) break;
      if (sr_as_index(I, p[1]->seq.items[i], &v) < 0) {
        sr_unref(x);
        return NULL;
      }
      if (v < -t->ndim || v >= t->ndim) {
        sr_unref(x);
        return sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)v,
                        t->ndim);
      }
      v = v < 0 ? v + t->ndim : v;
      int j = n++;
      for (; j > 0 && d[j - 1] > v; j--) d[j] = d[j - 1];
      d[j] = v;
    }
  } else if (ints_arg(I, p[1], d, &n, "dimensions") < 0) {
    sr_unref(x);
    return NULL;
  }
  SrVal *r = x ? sr_lax_squeeze(I, x, d, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_expand_dims(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "expand_dims", "array, dimensions", p) < 0) return NULL;
  int64_t d[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], d, &n, "dimensions") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_expand_dims(I, x, d, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_reduce_fn(SrInterp *I, SrArgs *a, int prim, const char *name, int has_sharding) {
  SrVal *p[3], *sh = NULL;
  if (sr_args_parse(I, a, name, has_sharding ? "operand, axes, *, out_sharding=" : "operand, axes", p) < 0)
    return NULL;
  int64_t axes[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], axes, &n, "axes") < 0) return NULL;
  if (has_sharding && canon_sharding(I, p[2], name, 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_reduce(I, prim, x, axes, n, sh) : NULL;
  sr_unref(x);
  sr_unref(sh);
  return r;
}

static SrVal *lax_reduce_sum(SrInterp *I, SrArgs *a) { return lax_reduce_fn(I, a, SR_P_reduce_sum, "reduce_sum", 1); }
static SrVal *lax_reduce_max(SrInterp *I, SrArgs *a) { return lax_reduce_fn(I, a, SR_P_reduce_max, "reduce_max", 1); }
static SrVal *lax_reduce_min(SrInterp *I, SrArgs *a) { return lax_reduce_fn(I, a, SR_P_reduce_min, "reduce_min", 1); }
static SrVal *lax_reduce_prod(SrInterp *I, SrArgs *a) {
  return lax_reduce_fn(I, a, SR_P_reduce_prod, "reduce_prod", 0);
}

static SrVal *lax_argfn(SrInterp *I, SrArgs *a, int prim, const char *name) {
  SrVal *p[3];
  if (sr_args_parse(I, a, name, "operand, axis, index_dtype", p) < 0) return NULL;
  int64_t ax;
  int dt;
  if (sr_as_int(I, p[1], "axis", &ax) < 0 || sr_dtype_arg(I, p[2], &dt, name) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_argminmax(I, prim, x, ax, dt < 0 ? SR_I32 : (SrDtype)dt) : NULL;
  sr_unref(x);
  return r;
}
static SrVal *lax_argmax(SrInterp *I, SrArgs *a) { return lax_argfn(I, a, SR_P_argmax, "argmax"); }
static SrVal *lax_argmin(SrInterp *I, SrArgs *a) { return lax_argfn(I, a, SR_P_argmin, "argmin"); }

/* ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)) */
static int dimension_numbers(SrInterp *I, SrVal *v, int64_t d[4][SR_MAX_RANK], int n[4]) {
  if (!sr_is_seq(v) || v->seq.n != 2 || !sr_is_seq(v->seq.items[0]) || !sr_is_seq(v->seq.items[1]) ||
      v->seq.items[0]->seq.n != 2 || v->seq.items[1]->seq.n != 2)
    return sr_raise(I, "TypeError", "dimension_numbers must be ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))"), -1;
  for (int k = 0; k < 4; k++)
    if (ints_arg(I, v->seq.items[k / 2]->seq.items[k % 2], d[k], &n[k], "dimension_numbers") < 0) return -1;
  return 0;
}

static SrVal *lax_dot_general(SrInterp *I, SrArgs *a) {
  SrVal *p[6], *sh = NULL;
  if (sr_args_parse(I, a, "dot_general",
                    "lhs, rhs, dimension_numbers, precision=, preferred_element_type=, *, out_sharding=", p) < 0)
    return NULL;
  int64_t d[4][SR_MAX_RANK];
  int n[4], pref;
  if (dimension_numbers(I, p[2], d, n) < 0 || sr_dtype_arg(I, p[4], &pref, "dot_general") < 0) return NULL;
  if (canon_sharding(I, p[5], "dot_general", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL;
  SrVal *r = x && y ? sr_lax_dot_general(I, x, y, d[0], n[0], d[1], n[1], d[2], n[2], d[3], n[3], p[3], pref, sh)
                    : NULL;
  sr_unref(x);
  sr_unref(y);
  sr_unref(sh);
  return r;
}

/* a shape as Python prints the tuple: (2, 3), (4,), () */
static void shape_str(SrBuf *b, const SrType *t) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < t->ndim; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
  sr_buf_puts(b, t->ndim == 1 ? ",)" : ")");
}

/* lax.dot(lhs, rhs, *, dimension_numbers=None, ...): dot_general, its
   dimension numbers those of a matrix or vector product when not given. */
static SrVal *lax_dot(SrInterp *I, SrArgs *a) {
  SrVal *p[6], *sh = NULL;
  if (sr_args_parse(I, a, "dot",
                    "lhs, rhs, *, dimension_numbers=, precision=, preferred_element_type=, out_sharding=", p) < 0)
    return NULL;
  int64_t d[4][SR_MAX_RANK];
  int n[4] = {0, 0, 0, 0}, pref;
  if (p[2] && p[2]->kind != SR_V_NONE && dimension_numbers(I, p[2], d, n) < 0) return NULL;
  if (sr_dtype_arg(I, p[4], &pref, "dot") < 0) return NULL;
  if (canon_sharding(I, p[5], "dot_general", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL;
  SrVal *r = NULL;
  if (x && y) {
    const SrType *tx = vtype(I, x), *ty = vtype(I, y);
    if (p[2] && p[2]->kind != SR_V_NONE) {
      r = sr_lax_dot_general(I, x, y, d[0], n[0], d[1], n[1], d[2], n[2], d[3], n[3], p[3], pref, sh);
    } else if (tx->ndim < 1 || tx->ndim > 2 || ty->ndim < 1 || ty->ndim > 2 ||
               tx->dims[tx->ndim - 1].size != ty->dims[0].size) {
      SrBuf ls = SR_BUF_INIT, rs = SR_BUF_INIT;
      shape_str(&ls, tx);
      shape_str(&rs, ty);
      r = sr_raise(I, "ValueError",
                   "jax.lax.dot: dimension_numbers must be specified when not performing simple un-batched "
                   "matrix-matrix, matrix-vector, or vector-vector products; got lhs_shape=%s rhs_shape=%s",
                   sr_buf_str(&ls), sr_buf_str(&rs));
      sr_buf_free(&ls);
      sr_buf_free(&rs);
    } else {
      int64_t lc = tx->ndim - 1, rc = 0;
      r = sr_lax_dot_general(I, x, y, &lc, 1, &rc, 1, NULL, 0, NULL, 0, p[3], pref, sh);
    }
  }
  sr_unref(x);
  sr_unref(y);
  sr_unref(sh);
  return r;
}

static SrVal *lax_select(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "select", "pred, on_true, on_false", p) < 0) return NULL;
  SrVal *c = arr(I, p[0]), *t = c ? arr(I, p[1]) : NULL, *f = t ? arr(I, p[2]) : NULL;
  SrVal *r = f ? sr_lax_select(I, c, t, f) : NULL;
  sr_unref(c);
  sr_unref(t);
  sr_unref(f);
  return r;
}

static SrVal *lax_select_n(SrInterp *I, SrArgs *a) {
  if (a->n < 2) return sr_raise(I, "ValueError", "select_n called with no cases");
  SrVal **args = sr_xcalloc((size_t)a->n + 1, sizeof *args);
  SrVal *r = NULL;
  int ok = 1;
  for (int i = 0; i < a->n && ok; i++) ok = (args[i] = arr(I, a->v[i])) != NULL;
  if (ok) r = sr_op_select_n(SR_BINDER(I), a->n, args);
  for (int i = 0; i < a->n; i++) sr_unref(args[i]);
  free(args);
  return r;
}

static SrVal *lax_clamp(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "clamp", "min, x, max", p) < 0) return NULL;
  SrVal *args[3] = {NULL, NULL, NULL};
  SrVal *r = NULL;
  int ok = 1;
  for (int i = 0; i < 3 && ok; i++) ok = (args[i] = arr(I, p[i])) != NULL;
  if (ok && sr_auto_insert_reshard(I, 3, args) == 0) r = sr_bind(I, SR_P_clamp, 3, args, 0, NULL);
  for (int i = 0; i < 3; i++) sr_unref(args[i]);
  return r;
}

static SrVal *lax_concatenate(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "concatenate", "operands, dimension", p) < 0) return NULL;
  int64_t dim;
  if (sr_as_int(I, p[1], "dimension", &dim) < 0) return NULL;
  if (!sr_is_seq(p[0])) return sr_raise(I, "TypeError", "concatenate: operands must be a sequence of arrays");
  int n = p[0]->seq.n;
  SrVal **xs = sr_xcalloc((size_t)n + 1, sizeof *xs);
  int ok = 1;
  for (int i = 0; i < n && ok; i++) ok = (xs[i] = arr(I, p[0]->seq.items[i])) != NULL;
  SrVal *r = ok ? sr_lax_concatenate(I, n, xs, (int)dim) : NULL;
  for (int i = 0; i < n; i++) sr_unref(xs[i]);
  free(xs);
  return r;
}

static SrVal *lax_slice(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "slice", "operand, start_indices, limit_indices, strides=", p) < 0) return NULL;
  int64_t s[SR_MAX_RANK], l[SR_MAX_RANK], st[SR_MAX_RANK];
  int ns, nl, nst = 0;
  if (ints_arg(I, p[1], s, &ns, "start_indices") < 0 || ints_arg(I, p[2], l, &nl, "limit_indices") < 0 ||
      ints_arg(I, p[3], st, &nst, "strides") < 0)
    return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r;
  if (ns != vtype(I, x)->ndim || nl != ns || (nst && nst != ns))
    r = sr_raise(I, "TypeError", "slice start_indices must have length equal to the number of dimensions of the operand");
  else
    r = sr_lax_slice(I, x, s, l, nst ? st : NULL);
  sr_unref(x);
  return r;
}

/* lax._dynamic_slice_indices: static ints normalized (negative ones
   counted from the end) and converted to int32, tracers wrapped with a
   select for negative values, unsigned ones as they are.  Fills starts[]
   with new references (all NULL on error). */
static int slice_indices(SrInterp *I, const SrType *t, SrVal *const *items, SrVal **starts) {
  int ok = 1;
  for (int i = 0; i < t->ndim; i++) starts[i] = NULL;
  for (int i = 0; i < t->ndim && ok; i++) {
    SrVal *s = items[i];
    /* lax._dynamic_slice_indices: static ints normalized, tracers
       wrapped with a select for negative values */
    const SrType *nt = s->kind != SR_V_INT && sr_np_is_scalar(s) ? vtype(I, s) : NULL;
    if (nt && !sr_dtype_is_int(nt->dtype)) nt = NULL;
    if (s->kind == SR_V_INT || nt) {
      /* an int or a numpy integer: folded, in its own dtype (int32 for
         a Python int) */
      int64_t v0 = s->i;
      if (nt) {
        SrVal *it = sr_unop(I, SR_OP_ITEM, s);
        if (!it) break;
        v0 = it->i;
        sr_unref(it);
      }
      int64_t v = v0 < 0 ? v0 + t->dims[i].size : v0;
      SrVal *iv = sr_int(NULL, v);
      starts[i] = sr_lax_convert(I, iv, nt ? nt->dtype : SR_I32, 0, NULL);
      sr_unref(iv);
    } else {
      SrVal *iv = arr(I, s);
      const SrType *it = iv ? vtype(I, iv) : NULL;
      if (it && sr_dtype_kind(it->dtype) == SR_DK_UINT) {
        starts[i] = iv;
      } else if (it) {
        SrVal *zero = sr_int(NULL, 0), *d = sr_int(NULL, t->dims[i].size);
        SrVal *dd = sr_lax_convert(I, d, it->dtype, 0, NULL);
        SrVal *lv[2] = {iv, zero}, *av[2] = {iv, dd};
        SrArgs la = {2, lv, 0, NULL, NULL, NULL}, aa = {2, av, 0, NULL, NULL, NULL};
        SrVal *neg = dd ? sr_call(I, sr_lookup_qualname("jax.numpy.less"), &la) : NULL;
        SrVal *sum = neg ? sr_call(I, sr_lookup_qualname("jax.numpy.add"), &aa) : NULL;
        starts[i] = sum ? sr_lax_select(I, neg, sum, iv) : NULL;
        sr_unref(zero);
        sr_unref(d);
        sr_unref(dd);
        sr_unref(neg);
        sr_unref(sum);
        sr_unref(iv);
      }
    }
    ok = starts[i] != NULL;
  }
  if (ok) return 0;
  for (int i = 0; i < t->ndim; i++) {
    sr_unref(starts[i]);
    starts[i] = NULL;
  }
  return -1;
}

/* _dynamic_slice_indices: an array of start indices (numpy's or JAX's)
   is its list of elements; it must be 1-D. */
static SrVal *start_indices_list(SrInterp *I, SrVal *v) {
  if (sr_is_seq(v) || !(sr_is_ndarray(v) || sr_array_of(v))) return sr_ref(v);
  const SrType *t = sr_is_ndarray(v) ? sr_ndarray_array(v)->type : vtype(I, v);
  if (t && t->ndim != 1) {
    SrBuf sb = SR_BUF_INIT;
    sr_shape_str(&sb, t);
    sr_raise(I, "ValueError", "Slice indices must be a 1D sequence, got %s", sr_buf_str(&sb));
    sr_buf_free(&sb);
    return NULL;
  }
  SrVal *f = sr_lookup_qualname("builtins.list");
  SrArgs la = {1, &v, 0, NULL, NULL, NULL};
  return f ? sr_call(I, f, &la) : sr_raise(I, "RuntimeError", "internal error: no builtins.list");
}

static SrVal *lax_dynamic_slice(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "dynamic_slice", "operand, start_indices, slice_sizes", p) < 0) return NULL;
  int64_t sz[SR_MAX_RANK];
  int nsz;
  if (ints_arg(I, p[2], sz, &nsz, "slice_sizes") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *si = start_indices_list(I, p[1]);
  if (!si) {
    sr_unref(x);
    return NULL;
  }
  const SrType *t = vtype(I, x);
  if (!sr_is_seq(si) || si->seq.n != t->ndim || nsz != t->ndim) {
    int n = sr_is_seq(si) ? si->seq.n : 1;
    sr_unref(x);
    sr_unref(si);
    return sr_raise(I, "ValueError", "Length of slice indices must match number of operand dimensions (%d vs %d)",
                    n, t->ndim);
  }
  SrVal *starts[SR_MAX_RANK];
  int ok = slice_indices(I, t, si->seq.items, starts) == 0;
  SrVal *r = ok ? sr_lax_dynamic_slice(I, x, starts, sz) : NULL;
  for (int i = 0; ok && i < t->ndim; i++) sr_unref(starts[i]);
  sr_unref(x);
  sr_unref(si);
  return r;
}

/* The update at the normalized starts (x's rank of them, in items). */
static SrVal *update_slice_at(SrInterp *I, SrVal *x, SrVal *update, SrVal *const *items) {
  const SrType *t = vtype(I, x);
  SrVal *starts[SR_MAX_RANK];
  if (slice_indices(I, t, items, starts) < 0) return NULL;
  SrVal *r = sr_lax_dynamic_update_slice(I, x, update, starts);
  for (int i = 0; i < t->ndim; i++) sr_unref(starts[i]);
  return r;
}

static SrVal *lax_dynamic_update_slice(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "dynamic_update_slice", "operand, update, start_indices", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *u = x ? arr(I, p[1]) : NULL;
  SrVal *r = NULL, *si = u ? start_indices_list(I, p[2]) : NULL;
  if (si) {
    const SrType *t = vtype(I, x);
    if (!sr_is_seq(si) || si->seq.n != t->ndim) {
      SrBuf sb = SR_BUF_INIT;
      sr_shape_str(&sb, t);
      sr_raise(I, "ValueError", "Length of slice indices must match number of operand dimensions (%d vs %s)",
               sr_is_seq(si) ? si->seq.n : 1, sr_buf_str(&sb));
      sr_buf_free(&sb);
    } else {
      r = update_slice_at(I, x, u, si->seq.items);
    }
  }
  sr_unref(x);
  sr_unref(u);
  sr_unref(si);
  return r;
}

/* lax.dynamic_update_index_in_dim: an update one smaller in rank gets the
   axis back (expand_dims), then dynamic_update_slice_in_dim: index on the
   axis, 0 elsewhere. */
static SrVal *lax_dynamic_update_index_in_dim(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "dynamic_update_index_in_dim", "operand, update, index, axis", p) < 0) return NULL;
  int64_t axis;
  if (sr_as_int(I, p[3], "axis", &axis) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *u = x ? arr(I, p[1]) : NULL;
  SrVal *r = NULL;
  if (u) {
    const SrType *t = vtype(I, x), *ut = vtype(I, u);
    if (axis < 0 || axis >= t->ndim) {
      sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, t->ndim);
    } else if (ut->ndim != t->ndim && ut->ndim + 1 != t->ndim) {
      sr_raise(I, "ValueError", "dynamic_update_index_in_dim: update of rank %d for an operand of rank %d", ut->ndim,
               t->ndim);
    } else {
      SrVal *uu = ut->ndim == t->ndim ? sr_ref(u) : sr_lax_expand_dims(I, u, &axis, 1);
      SrVal *items[SR_MAX_RANK], *zero = sr_int(NULL, 0);
      for (int i = 0; i < t->ndim; i++) items[i] = i == axis ? p[2] : zero;
      if (uu) r = update_slice_at(I, x, uu, items);
      sr_unref(uu);
      sr_unref(zero);
    }
  }
  sr_unref(x);
  sr_unref(u);
  return r;
}

static SrVal *lax_pad(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "pad", "operand, padding_value, padding_config", p) < 0) return NULL;
  if (!sr_is_seq(p[2]) || p[2]->seq.n > SR_MAX_RANK)
    return sr_raise(I, "TypeError", "pad: padding_config must be a sequence of (low, high, interior) tuples");
  int nd = p[2]->seq.n, n3;
  int64_t cfg[3 * SR_MAX_RANK];
  for (int i = 0; i < nd; i++) {
    SrVal *c = p[2]->seq.items[i];
    if (!sr_is_seq(c) || c->seq.n != 3)
      return sr_raise(I, "TypeError", "pad: padding_config must be a sequence of (low, high, interior) tuples");
    if (ints_arg(I, c, cfg + 3 * i, &n3, "padding_config") < 0) return NULL;
  }
  SrVal *x = arr(I, p[0]);
  SrVal *pv = x ? arr(I, p[1]) : NULL;
  SrVal *r = pv ? sr_lax_pad(I, x, pv, cfg, nd) : NULL;
  sr_unref(x);
  sr_unref(pv);
  return r;
}

static SrVal *lax_iota(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int dt;
  int64_t size;
  if (sr_args_parse(I, a, "iota", "dtype, size", p) < 0) return NULL;
  if (sr_dtype_arg(I, p[0], &dt, "iota") < 0 || sr_as_int(I, p[1], "size", &size) < 0) return NULL;
  return sr_lax_iota(I, dt < 0 ? SR_I32 : (SrDtype)dt, &size, 1, 0, NULL);
}

static SrVal *lax_broadcasted_iota(SrInterp *I, SrArgs *a) {
  SrVal *p[4], *sh = NULL;
  int dt;
  int64_t shape[SR_MAX_RANK], dim;
  int nd;
  if (sr_args_parse(I, a, "broadcasted_iota", "dtype, shape, dimension, *, out_sharding=", p) < 0) return NULL;
  if (sr_dtype_arg(I, p[0], &dt, "broadcasted_iota") < 0 || ints_arg(I, p[1], shape, &nd, "shape") < 0 ||
      sr_as_int(I, p[2], "dimension", &dim) < 0)
    return NULL;
  if (canon_sharding(I, p[3], "broadcasted_iota", 1, &sh) < 0) return NULL;
  SrVal *r = sr_lax_iota(I, dt < 0 ? SR_I32 : (SrDtype)dt, shape, nd, (int)dim, sh);
  sr_unref(sh);
  return r;
}

static SrVal *lax_full(SrInterp *I, SrArgs *a) {
  SrVal *p[4], *sh = NULL;
  int dt;
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_args_parse(I, a, "full", "shape, fill_value, dtype=, *, sharding=", p) < 0) return NULL;
  if (ints_arg(I, p[0], shape, &nd, "shape") < 0 || sr_dtype_arg(I, p[2], &dt, "full") < 0) return NULL;
  if (canon_sharding(I, p[3], "full", 1, &sh) < 0) return NULL;
  SrVal *f = arr(I, p[1]);
  SrVal *r = f ? sr_lax_full(I, shape, nd, f, dt, sh) : NULL;
  sr_unref(f);
  sr_unref(sh);
  if (r && (r->kind == SR_V_INT || r->kind == SR_V_FLOAT || r->kind == SR_V_BOOL || r->kind == SR_V_COMPLEX)) {
    /* full((), x) of a Python scalar: lax.py's _convert_element_type makes
       it a weakly typed array */
    const SrType *t = sr_value_type(I, r);
    SrVal *x = t ? sr_jnp_asarray(I, r, (int)t->dtype) : NULL;
    SrVal *w = x ? sr_lax_convert(I, x, t->dtype, r->kind != SR_V_BOOL, NULL) : NULL;
    sr_unref(x);
    sr_unref(r);
    r = w;
  }
  return r;
}

/* lax_utils.int_dtype_for_dim / int_dtype_for_shape: int32 (uint32)
   unless a dimension passes its maximum */
static SrDtype int_dtype_for(const int64_t *d, int n, int is_signed) {
  for (int i = 0; i < n; i++)
    if (is_signed ? d[i] > INT32_MAX : (uint64_t)d[i] > UINT32_MAX) return is_signed ? SR_I64 : SR_U64;
  return is_signed ? SR_I32 : SR_U32;
}

static SrVal *lax_utils_int_dtype(SrInterp *I, SrArgs *a, int shape) {
  SrVal *p[2];
  if (sr_args_parse(I, a, shape ? "int_dtype_for_shape" : "int_dtype_for_dim", shape ? "shape, *, signed" : "d, *, signed",
                    p) < 0)
    return NULL;
  int64_t d[SR_MAX_RANK];
  int n = 1;
  if (shape ? ints_arg(I, p[0], d, &n, "shape") < 0 : sr_as_int(I, p[0], "d", &d[0]) < 0) return NULL;
  return sr_dtype_val(NULL, int_dtype_for(d, n, sr_val_truthy(p[1])));
}
static SrVal *lax_utils_int_dtype_for_dim(SrInterp *I, SrArgs *a) { return lax_utils_int_dtype(I, a, 0); }
static SrVal *lax_utils_int_dtype_for_shape(SrInterp *I, SrArgs *a) { return lax_utils_int_dtype(I, a, 1); }

/* lax.shape_as_value of a static shape: an empty array (lax.full) or the
   numpy array of the sizes */
static SrVal *lax_shape_as_value(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "shape_as_value", "shape", p) < 0) return NULL;
  int64_t d[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[0], d, &n, "shape") < 0) return NULL;
  SrDtype dt = int_dtype_for(d, n, 1);
  if (n == 0) {
    int64_t zero = 0;
    SrVal *f = sr_int(NULL, 0);
    SrVal *r = sr_lax_full(I, &zero, 1, f, (int)dt, NULL);
    sr_unref(f);
    return r;
  }
  void *data;
  int64_t len = n;
  SrVal *r = sr_ndarray_new(dt, 1, &len, &data);
  if (!r) return sr_raise(I, "MemoryError", "%s", "");
  for (int i = 0; i < n; i++) {
    if (dt == SR_I32) ((int32_t *)data)[i] = (int32_t)d[i];
    else ((int64_t *)data)[i] = d[i];
  }
  return r;
}

/* lax.dce_sink(val, *, prevent_mlir_dce=False): dce_sink_p on each leaf */
static SrVal *lax_dce_sink(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "dce_sink", "val, *, prevent_mlir_dce=", p) < 0) return NULL;
  SrVal *leaves = sr_pytree_flatten(I, p[0]);
  if (!leaves) return NULL;
  int rc = 0;
  for (int i = 0; i < leaves->seq.n && rc == 0; i++) {
    SrVal *x = arr(I, leaves->seq.items[i]);
    SrVal *r = x ? sr_bindv(I, SR_P_dce_sink, 1, &x, "prevent_mlir_dce", sr_bool(p[1] && sr_val_truthy(p[1])), NULL)
                 : NULL;
    if (!r) rc = -1;
    sr_unref(r);
    sr_unref(x);
  }
  sr_unref(leaves);
  return rc == 0 ? sr_none() : NULL;
}

static SrVal *lax_rev(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "rev", "operand, dimensions", p) < 0) return NULL;
  int64_t d[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], d, &n, "dimensions") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_rev(I, x, d, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_cumsum(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "cumsum", "operand, axis=, reverse=", p) < 0) return NULL;
  int64_t ax = 0;
  if (p[1] && sr_as_int(I, p[1], "axis", &ax) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  int64_t c;
  SrVal *r = NULL;
  if (sr_api_axis(I, ax, vtype(I, x)->ndim, &c) == 0)
    r = sr_bindv(I, SR_P_cumsum, 1, &x, "axis", sr_int(NULL, c), "reverse", sr_bool(p[2] && sr_val_truthy(p[2])),
                 NULL);
  sr_unref(x);
  return r;
}

/* lax.optimization_barrier: one multi-result equation over the leaves. */
static SrVal *lax_optimization_barrier(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "optimization_barrier", "operand", p) < 0) return NULL;
  SrVal *leaves = sr_pytree_flatten(I, p[0]);
  if (!leaves) return NULL;
  SrVal *r = sr_bind(I, SR_P_optimization_barrier, leaves->seq.n, leaves->seq.items, 0, NULL);
  SrVal *out = r ? sr_pytree_unflatten(p[0], r) : NULL;
  sr_unref(r);
  sr_unref(leaves);
  return out;
}

/* lax.stop_gradient: a stop_gradient equation on each leaf, as JAX's
   tree_map of _stop_gradient binds (its JVP rule gives a zero tangent). */
static SrVal *lax_stop_gradient(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "stop_gradient", "x", p) < 0) return NULL;
  SrVal *leaves = sr_pytree_flatten(I, p[0]);
  if (!leaves) return NULL;
  SrVal *outs = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < leaves->seq.n; i++) {
    SrVal *r = sr_bind(I, SR_P_stop_gradient, 1, &leaves->seq.items[i], 0, NULL);
    if (!r) {
      sr_unref(outs);
      sr_unref(leaves);
      return NULL;
    }
    sr_seq_push(NULL, outs, r);
  }
  SrVal *out = sr_pytree_unflatten(p[0], outs);
  sr_unref(outs);
  sr_unref(leaves);
  return out;
}

/* ======================================================================
 * registration
 * ====================================================================== */

void sr_lax_api_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax.lax.neg", lax_neg, "neg(x): -x"},
    {"jax.lax.sin", lax_sin, "sin(x)"},
    {"jax.lax.cos", lax_cos, "cos(x)"},
    {"jax.lax.tan", lax_tan, "tan(x)"},
    {"jax.lax.tanh", lax_tanh, "tanh(x)"},
    {"jax.lax.exp", lax_exp, "exp(x)"},
    {"jax.lax.exp2", lax_exp2, "exp2(x)"},
    {"jax.lax.log", lax_log, "log(x)"},
    {"jax.lax.log1p", lax_log1p, "log1p(x)"},
    {"jax.lax.expm1", lax_expm1, "expm1(x)"},
    {"jax.lax.sqrt", lax_sqrt, "sqrt(x)"},
    {"jax.lax.rsqrt", lax_rsqrt, "rsqrt(x)"},
    {"jax.lax.cbrt", lax_cbrt, "cbrt(x)"},
    {"jax.lax.abs", lax_abs, "abs(x)"},
    {"jax.lax.sign", lax_sign, "sign(x)"},
    {"jax.lax.floor", lax_floor, "floor(x)"},
    {"jax.lax.ceil", lax_ceil, "ceil(x)"},
    {"jax.lax.logistic", lax_logistic, "logistic(x): 1 / (1 + exp(-x))"},
    {"jax.lax.square", lax_square, "square(x)"},
    {"jax.lax.is_finite", lax_is_finite, "is_finite(x)"},
    {"jax.lax.bitwise_not", lax_not, "bitwise_not(x)"},
    {"jax.lax.erf", lax_erf, "erf(x)"},
    {"jax.lax.erfc", lax_erfc, "erfc(x)"},
    {"jax.lax.add", lax_add, "add(x, y)"},
    {"jax.lax.sub", lax_sub, "sub(x, y)"},
    {"jax.lax.mul", lax_mul, "mul(x, y)"},
    {"jax.lax.div", lax_div, "div(x, y)"},
    {"jax.lax.rem", lax_rem, "rem(x, y)"},
    {"jax.lax.pow", lax_pow, "pow(x, y)"},
    {"jax.lax.max", lax_max, "max(x, y)"},
    {"jax.lax.min", lax_min, "min(x, y)"},
    {"jax.lax.atan2", lax_atan2, "atan2(x, y)"},
    {"jax.lax.real", lax_real, "real(x): the real part of a complex array"},
    {"jax.lax.imag", lax_imag, "imag(x): the imaginary part of a complex array"},
    {"jax.lax.complex", lax_complex, "complex(x, y): x + iy, from two float32 or float64 arrays"},
    {"jax.lax.conj", lax_conj, "conj(x): the complex conjugate (a real x becomes complex)"},
    {"jax.lax.eq", lax_eq, "eq(x, y)"},
    {"jax.lax.ne", lax_ne, "ne(x, y)"},
    {"jax.lax.lt", lax_lt, "lt(x, y)"},
    {"jax.lax.le", lax_le, "le(x, y)"},
    {"jax.lax.gt", lax_gt, "gt(x, y)"},
    {"jax.lax.ge", lax_ge, "ge(x, y)"},
    {"jax.lax.bitwise_and", lax_and, "bitwise_and(x, y)"},
    {"jax.lax.bitwise_or", lax_or, "bitwise_or(x, y)"},
    {"jax.lax.bitwise_xor", lax_xor, "bitwise_xor(x, y)"},
    {"jax.lax.integer_pow", lax_integer_pow, "integer_pow(x, y): x ** y for a Python int y"},
    {"jax.lax.round", lax_round, "round(x, rounding_method=0)"},
    {"jax.lax.reduce_precision", lax_reduce_precision,
     "reduce_precision(operand, exponent_bits, mantissa_bits): rounded to a float format with those bits"},
    {"jax.lax.convert_element_type", lax_convert_element_type, "convert_element_type(operand, new_dtype)"},
    {"jax.lax.broadcast_in_dim", lax_broadcast_in_dim,
     "broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None)"},
    {"jax.lax.broadcast", lax_broadcast, "broadcast(operand, sizes): new leading dimensions"},
    {"jax.lax.dce_sink", lax_dce_sink,
     "dce_sink(val, *, prevent_mlir_dce=False): marks each leaf used (a dce_sink equation, no results)"},
    {"jax.lax.shape_as_value", lax_shape_as_value,
     "shape_as_value(shape): the sizes of a shape as an int32 array (int64 when one passes int32's maximum)"},
    {"jax.lax.reshape", lax_reshape, "reshape(operand, new_sizes, dimensions=None, *, out_sharding=None)"},
    {"jax.lax.transpose", lax_transpose, "transpose(operand, permutation)"},
    {"jax.lax.squeeze", lax_squeeze, "squeeze(array, dimensions)"},
    {"jax.lax.expand_dims", lax_expand_dims, "expand_dims(array, dimensions)"},
    {"jax.lax.reduce_sum", lax_reduce_sum, "reduce_sum(operand, axes, *, out_sharding=None)"},
    {"jax.lax.reduce_max", lax_reduce_max, "reduce_max(operand, axes, *, out_sharding=None)"},
    {"jax.lax.reduce_min", lax_reduce_min, "reduce_min(operand, axes, *, out_sharding=None)"},
    {"jax.lax.reduce_prod", lax_reduce_prod, "reduce_prod(operand, axes)"},
    {"jax.lax.argmax", lax_argmax, "argmax(operand, axis, index_dtype)"},
    {"jax.lax.argmin", lax_argmin, "argmin(operand, axis, index_dtype)"},
    {"jax.lax.dot_general", lax_dot_general,
     "dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *, out_sharding=None)"},
    {"jax.lax.dot", lax_dot,
     "dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None, out_sharding=None)"},
    {"jax.lax.select", lax_select, "select(pred, on_true, on_false): a select_n (false case first)"},
    {"jax.lax.select_n", lax_select_n, "select_n(which, *cases)"},
    {"jax.lax.clamp", lax_clamp, "clamp(min, x, max)"},
    {"jax.lax.concatenate", lax_concatenate, "concatenate(operands, dimension)"},
    {"jax.lax.slice", lax_slice, "slice(operand, start_indices, limit_indices, strides=None)"},
    {"jax.lax.dynamic_slice", lax_dynamic_slice, "dynamic_slice(operand, start_indices, slice_sizes)"},
    {"jax.lax.dynamic_update_slice", lax_dynamic_update_slice, "dynamic_update_slice(operand, update, start_indices)"},
    {"jax.lax.dynamic_update_index_in_dim", lax_dynamic_update_index_in_dim,
     "dynamic_update_index_in_dim(operand, update, index, axis)"},
    {"jax.lax.pad", lax_pad, "pad(operand, padding_value, padding_config): (low, high, interior) per dimension"},
    {"jax.lax.iota", lax_iota, "iota(dtype, size)"},
    {"jax.lax.broadcasted_iota", lax_broadcasted_iota,
     "broadcasted_iota(dtype, shape, dimension, *, out_sharding=None)"},
    {"jax.lax.full", lax_full, "full(shape, fill_value, dtype=None, *, sharding=None)"},
    {"jax.lax.rev", lax_rev, "rev(operand, dimensions)"},
    {"jax.lax.cumsum", lax_cumsum, "cumsum(operand, axis=0, reverse=False)"},
    {"jax.lax.optimization_barrier", lax_optimization_barrier,
     "optimization_barrier(operand): one optimization_barrier equation over the leaves"},
    {"jax.lax.stop_gradient jax.stop_gradient", lax_stop_gradient,
     "stop_gradient(x): a stop_gradient equation on each leaf; no gradient flows through it"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  /* jax._src.lax.lax, as JAX's tests import it (from jax._src.lax import
     lax as lax_internal) */
  sr_register("jax._src.lax.lax.convert_element_type", sr_ref(sr_lookup_qualname("jax.lax.convert_element_type")));
  sr_register("jax._src.lax.utils.int_dtype_for_dim",
                 sr_builtin_with("jax._src.lax.utils.int_dtype_for_dim", lax_utils_int_dtype_for_dim, NULL, NULL));
  sr_register("jax._src.lax.utils.int_dtype_for_shape",
                 sr_builtin_with("jax._src.lax.utils.int_dtype_for_shape", lax_utils_int_dtype_for_shape, NULL, NULL));
  sr_def_module_property("jax.lax.AccuracyMode", get_accuracy_mode);
  sr_def_private("jax._src.lax.lax._convert_element_type",
                 sr_builtin_with("jax._src.lax.lax._convert_element_type", lax_convert_element_type_weak, NULL, NULL));
  sr_sharding_api_init();
  sr_shard_map_init();
  sr_experimental_init();
  sr_remat_policies_init();
  sr_lax_parallel_init();
  sr_lax_control_flow_init();
  sr_tree_util_init();
}

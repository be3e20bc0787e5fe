/* array_methods.c: the Python face of array values and avals (core's
 * sr_array_class, sr_aval_class): operators, attributes and methods, which
 * go to the jax.numpy functions, as jax/_src/numpy/array_methods.py sets
 * them on ArrayImpl and Tracer; and tracing a Python function. */
#include "jax/array_methods.h"
#include "jax/introspect.h"
#include "jax/jax.h"
#include "jax/ref.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "jax/np_host.h"
#include "jax/tracers.h"

#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "core/trace.h"
#include "py/introspect.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

SrVal *sr_type_sharding(SrInterp *I, const SrType *t) {
  const SrMesh *ctx = sr_jax_abstract_mesh(I->jax);
  const SrMesh *m = ctx;
  /* no mesh in context: the traced arguments' mesh, when the type names
     it or no mesh at all (aval.sharding.mesh) */
  const SrMesh *vm = !ctx->n && I->trace ? I->trace->vmesh : NULL;
  if (vm && (!t->mesh || t->mesh == sr_mesh_shape(vm))) m = vm;
  else if (t->mesh && sr_mesh_shape(ctx) != t->mesh) m = t->mesh;
  SrShardSpec s;
  sr_shard_of_type(t, &s);
  s.mesh = t->mesh ? t->mesh : sr_mesh_shape(m);
  SrVal *spec = sr_shard_to_spec_val(&s);
  SrVal *r = sr_sharding_val(NULL, m, spec->spec, NULL);
  sr_unref(spec);
  return r;
}

static SrVal *axes_set(const SrType *t, SrAxes axes) {
  SrVal *s = sr_seq(NULL, SR_V_FROZENSET, 0);
  for (int i = 0; t->mesh && i < t->mesh->n; i++)
    if (axes & (1u << i)) sr_seq_push(NULL, s, sr_str_cstr(NULL, t->mesh->names[i]));
  return s;
}

static void unref_data(void *p) { sr_unref(p); }

/* mat.invarying(mesh): the mesh's manual axes that the value neither
   varies over nor is unreduced or reduced over (its data: those sets'
   union, a frozenset of names) */
static SrVal *mat_invarying(SrInterp *I, SrArgs *a) {
  const SrVal *vur = sr_current_builtin(I)->data;
  SrVal *p[1];
  if (sr_args_parse(I, a, "invarying", "mesh", p) < 0) return NULL;
  SrVal *manual = sr_getattr(I, p[0], "manual_axes");
  if (!manual) return NULL;
  if (!sr_is_seq(manual)) {
    sr_unref(manual);
    return sr_raise(I, "TypeError", "invarying expects a mesh");
  }
  SrVal *r = sr_seq(NULL, SR_V_FROZENSET, 0);
  for (size_t i = 0; i < manual->seq.n; i++) {
    SrVal *n = manual->seq.items[i];
    int in = 0;
    for (size_t k = 0; k < vur->seq.n && !in; k++) in = sr_val_equal(vur->seq.items[k], n);
    if (!in) sr_seq_push(NULL, r, sr_ref(n));
  }
  sr_unref(manual);
  return r;
}

/* The attributes arrays and avals share. */
static SrVal *type_attr(SrInterp *I, const SrType *t, const char *name) {
  if (strcmp(name, "shape") == 0) return sr_shape_tuple(t);
  if (strcmp(name, "dtype") == 0) return sr_dtype_val(NULL, t->dtype);
  if (strcmp(name, "ndim") == 0) return sr_int(NULL, t->ndim);
  if (strcmp(name, "size") == 0) return sr_int(NULL, sr_type_numel(t));
  if (strcmp(name, "weak_type") == 0) return sr_bool(t->weak);
  if (strcmp(name, "mat") == 0 || strcmp(name, "manual_axis_type") == 0 || strcmp(name, "vma") == 0) {
    SrVal *d = sr_dict(NULL);
    sr_dict_set(NULL, d, sr_str_cstr(NULL, "varying"), axes_set(t, t->varying));
    sr_dict_set(NULL, d, sr_str_cstr(NULL, "unreduced"), axes_set(t, t->unreduced));
    sr_dict_set(NULL, d, sr_str_cstr(NULL, "reduced"), axes_set(t, t->reduced));
    sr_dict_set(NULL, d, sr_str_cstr(NULL, "unreduced_kind"), sr_ukind_val(t->unreduced ? t->ukind : SR_UK_NONE));
    if (strcmp(name, "vma") == 0) {
      SrVal *v = sr_ref(sr_dict_get(d, sr_str_cstr(NULL, "varying")));
      sr_unref(d);
      return v;
    }
    sr_dict_set(NULL, d, sr_str_cstr(NULL, "invarying"),
                sr_builtin_with("invarying", mat_invarying, axes_set(t, t->varying | t->unreduced | t->reduced),
                                unref_data));
    return sr_namespace(d);
  }
  (void)I;
  return NULL;
}

/* aval.str_short(short_dtypes=False, mesh_axis_types=False) */
static SrVal *aval_str_short(SrInterp *I, SrArgs *a) {
  const SrType *t = a->self->obj.data;
  SrVal *p[2];
  if (sr_args_parse(I, a, "str_short", "short_dtypes=, mesh_axis_types=", p) < 0) return NULL;
  SrBuf b = SR_BUF_INIT;
  if (p[1] && sr_val_truthy(p[1])) {
    SrTypeCtx cx;
    SrDiags d = SR_DIAGS_INIT;
    sr_type_ctx(I, &cx, &d);
    sr_aval_str_short(&b, &cx, t, p[0] && sr_val_truthy(p[0]), 1);
    sr_diags_clear(&d);
  } else {
    sr_type_str(&b, t, p[0] && sr_val_truthy(p[0]));
  }
  SrVal *r = sr_str_cstr(NULL, b.p ? b.p : "");
  sr_buf_free(&b);
  return r;
}

/* aval.update(shape=None, dtype=None, weak_type=None, sharding=None) */
static SrVal *aval_update(SrInterp *I, SrArgs *a) {
  const SrType *t = a->self->obj.data;
  SrVal *p[4];
  if (sr_args_parse(I, a, "update", "shape=, dtype=, weak_type=, sharding=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = t->ndim;
  for (int i = 0; i < nd; i++) shape[i] = t->dims[i].size;
  if (p[0] && p[0]->kind != SR_V_NONE && sr_shape_arg(I, p[0], shape, &nd, "shape") < 0) return NULL;
  SrDtype dt = t->dtype;
  if (p[1] && p[1]->kind != SR_V_NONE) {
    if (p[1]->kind != SR_V_DTYPE) return sr_raise(I, "TypeError", "update's dtype must be a dtype");
    dt = p[1]->dtype;
  }
  SrTypeBuilder b;
  sr_type_builder(&b, sr_type_array(dt, nd, shape));
  b.weak = p[2] && p[2]->kind != SR_V_NONE ? (uint8_t)sr_val_truthy(p[2]) : t->weak;
  if (p[3] && p[3]->kind != SR_V_NONE) {
    const SrType *r = sr_api_typed_with_sharding(I, sr_type_get(&b), p[3], "update's sharding");
    return r ? sr_aval_new(r) : NULL;
  }
  /* the sharding kept when the shape is */
  if (nd == t->ndim) {
    int same = 1;
    for (int i = 0; i < nd; i++) same &= shape[i] == t->dims[i].size;
    if (same) {
      SrTypeBuilder k;
      sr_type_builder(&k, t);
      k.dtype = dt;
      k.weak = b.weak;
      return sr_aval_new(sr_type_get(&k));
    }
  }
  return sr_aval_new(sr_type_get(&b));
}

static SrVal *aval_getattr(SrInterp *I, SrVal *self, const char *name) {
  const SrType *t = self->obj.data;
  if (strcmp(name, "sharding") == 0) return sr_type_sharding(I, t);
  if (strcmp(name, "str_short") == 0) return sr_bound_method(self, "str_short", aval_str_short);
  if (strcmp(name, "update") == 0) return sr_bound_method(self, "update", aval_update);
  return type_attr(I, t, name);
}

static const SrLangOps aval_ops = {.getattr = aval_getattr};

/* operators go to the jax.numpy functions, which promote and bind */
static const char *binop_fn(int op) {
  switch (op) {
  case SR_OP_ADD: return "jax.numpy.add";
  case SR_OP_SUB: return "jax.numpy.subtract";
  case SR_OP_MUL: return "jax.numpy.multiply";
  case SR_OP_DIV: return "jax.numpy.true_divide";
  case SR_OP_FLOORDIV: return "jax.numpy.floor_divide";
  case SR_OP_MOD: return "jax.numpy.remainder";
  case SR_OP_POW: return "jax.numpy.power";
  case SR_OP_MATMUL: return "jax.numpy.matmul";
  case SR_OP_LSHIFT: return "jax.numpy.left_shift";
  case SR_OP_RSHIFT: return "jax.numpy.right_shift";
  case SR_OP_BITAND: return "jax.numpy.bitwise_and";
  case SR_OP_BITOR: return "jax.numpy.bitwise_or";
  case SR_OP_BITXOR: return "jax.numpy.bitwise_xor";
  case SR_OP_EQ: return "jax.numpy.equal";
  case SR_OP_NE: return "jax.numpy.not_equal";
  case SR_OP_LT: return "jax.numpy.less";
  case SR_OP_LE: return "jax.numpy.less_equal";
  case SR_OP_GT: return "jax.numpy.greater";
  case SR_OP_GE: return "jax.numpy.greater_equal";
  default: return NULL;
  }
}

/* array_methods._accepted_binop_types: Python numbers and arrays (a list
   or tuple is no operand of an array's operator) */
static int array_like(SrVal *v) {
  return sr_array_of(v) || v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL ||
         v->kind == SR_V_COMPLEX;
}

/* The operators' explicit rejections (_operator_eq/_ne: a dict, list, set
   or tuple, both in "=="'s words; _operator_add/_mul and their reflections:
   a tuple or list); NULL (NotImplemented) otherwise. */
static SrVal *binop_reject(SrInterp *I, int op, SrVal *a, SrVal *b) {
  int fwd = sr_array_of(a) != NULL;
  SrVal *o = fwd ? b : a;
  int seq = o->kind == SR_V_LIST || o->kind == SR_V_TUPLE;
  const char *sym = NULL;
  if ((op == SR_OP_EQ || op == SR_OP_NE) && (seq || o->kind == SR_V_DICT || o->kind == SR_V_SET)) sym = "==";
  else if (op == SR_OP_ADD && seq) sym = "+";
  else if (op == SR_OP_MUL && seq) sym = "*";
  if (!sym) return NULL;
  return sr_raise(I, "TypeError", "unsupported operand type(s) for %s: '%s' and '%s'", sym, sr_val_kind_name(a),
                  sr_val_kind_name(b));
}

/* qualname is a string literal: its interned name is kept by its address
   (the operators of an eager loop look theirs up on every call). */
static SrVal *call_fn(SrInterp *I, const char *qualname, int n, SrVal **args) {
  static struct {
    const char *lit, *name;
  } seen[32];
  size_t h = ((uintptr_t)qualname >> 3) & 31;
  if (seen[h].lit != qualname) {
    seen[h].lit = qualname;
    seen[h].name = sr_intern_cstr(qualname);
  }
  SrVal *fn = sr_lookup_interned(seen[h].name);
  if (!fn) return sr_raise(I, "NotImplementedError", "%s is not available", qualname);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  return sr_call(I, fn, &a);
}

/* float0 values are numpy arrays in JAX (np.zeros(shape, float0)): numpy
   compares two of them field by field, and a structured dtype with no
   fields is equal everywhere, so == is all True and != all False over the
   broadcast shape.  Every other operation on them is lax's float0 error. */
static SrVal *float0_compare(SrInterp *I, int op, SrVal *a, SrVal *b) {
  SrVal *z[2] = {NULL, NULL}, *r = NULL;
  for (int i = 0; i < 2; i++) {
    SrVal *args[2] = {sr_shape_tuple(sr_array_of(i ? b : a)->type), sr_dtype_val(NULL, SR_BOOL)};
    z[i] = call_fn(I, "jax.numpy.zeros", 2, args);
    sr_unref(args[0]);
    sr_unref(args[1]);
    if (!z[i]) break;
  }
  if (z[0] && z[1]) r = call_fn(I, op == SR_OP_EQ ? "jax.numpy.equal" : "jax.numpy.not_equal", 2, z);
  sr_unref(z[0]);
  if (z[1]) sr_unref(z[1]);
  return r;
}

static SrVal *array_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  const char *fn = binop_fn(op);
  if (!fn) return NULL;
  if (!array_like(a) || !array_like(b)) return binop_reject(I, op, a, b);
  if ((op == SR_OP_EQ || op == SR_OP_NE) && sr_array_of(a) && sr_array_of(b) &&
      sr_array_of(a)->type->dtype == SR_FLOAT0 && sr_array_of(b)->type->dtype == SR_FLOAT0)
    return float0_compare(I, op, a, b);
  if (op == SR_OP_EQ || op == SR_OP_NE) {
    /* ShapeDtypeStruct.__eq__: another one of the same shape, dtype, weak
       type and sharding; anything else is unequal */
    SrArrayObj *x = sr_array_of(a), *y = sr_array_of(b);
    int sx = x && x->kind == SR_AV_ABSTRACT && !x->has_value, sy = y && y->kind == SR_AV_ABSTRACT && !y->has_value;
    if (sx || sy) {
      int eq = sx && sy && x->type == y->type &&
               ((!x->sharding && !y->sharding) || (x->sharding && y->sharding && sr_val_equal(x->sharding, y->sharding)));
      return sr_bool(op == SR_OP_EQ ? eq : !eq);
    }
  }
  /* a ShapeDtypeStruct has no arithmetic (core.ShapeDtypeStruct defines
     no operators): Python's TypeError */
  {
    SrArrayObj *x = sr_array_of(a), *y = sr_array_of(b);
    if ((x && x->kind == SR_AV_ABSTRACT && !x->has_value) || (y && y->kind == SR_AV_ABSTRACT && !y->has_value))
      return NULL;
  }
  SrVal *args[2] = {a, b};
  return call_fn(I, fn, 2, args);
}

/* The operators as methods (x.__add__(y), y.__radd__(x)): the operator's
   result, or NotImplemented */
static const struct {
  const char *name;
  int op;
} dunder_ops[] = {
  {"add", SR_OP_ADD}, {"sub", SR_OP_SUB}, {"mul", SR_OP_MUL}, {"truediv", SR_OP_DIV},
  {"floordiv", SR_OP_FLOORDIV}, {"mod", SR_OP_MOD}, {"pow", SR_OP_POW}, {"matmul", SR_OP_MATMUL},
  {"lshift", SR_OP_LSHIFT}, {"rshift", SR_OP_RSHIFT}, {"and", SR_OP_BITAND}, {"or", SR_OP_BITOR},
  {"xor", SR_OP_BITXOR}, {"eq", SR_OP_EQ}, {"ne", SR_OP_NE}, {"lt", SR_OP_LT}, {"le", SR_OP_LE},
  {"gt", SR_OP_GT}, {"ge", SR_OP_GE}, {NULL, 0},
};

/* the op of "__NAME__" or "__rNAME__" (*reflected set), or -1 */
static int dunder_op(const char *name, int *reflected) {
  size_t n = strlen(name);
  if (n < 6 || strncmp(name, "__", 2) != 0 || strcmp(name + n - 2, "__") != 0) return -1;
  for (int r = 0; r < 2; r++)
    for (int i = 0; dunder_ops[i].name; i++) {
      size_t k = strlen(dunder_ops[i].name);
      if (r && (dunder_ops[i].op >= SR_OP_EQ && dunder_ops[i].op <= SR_OP_GE)) continue;
      if (n == k + 4 + (size_t)r && (!r || name[2] == 'r') && strncmp(name + 2 + r, dunder_ops[i].name, k) == 0) {
        *reflected = r;
        return dunder_ops[i].op;
      }
    }
  return -1;
}

static SrVal *array_binop(SrInterp *I, int op, SrVal *a, SrVal *b);

static SrVal *array_dunder(SrInterp *I, SrArgs *a) {
  SrBuiltin *b = sr_current_builtin(I);
  int refl = 0, op = dunder_op(b->name, &refl);
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "expected 1 argument, got %d", a->n);
  SrVal *x = refl ? a->v[0] : b->self, *y = refl ? b->self : a->v[0];
  SrVal *r = array_binop(I, op, x, y);
  if (r || I->exc) return r;
  return sr_ref(sr_lookup_qualname("builtins.NotImplemented"));
}

static SrVal *array_unop(SrInterp *I, int op, SrVal *x) {
  SrArrayObj *a = x->obj.data;
  if (op == SR_OP_INDEX) {
    /* Array/Tracer.__index__: core.check_integer_conversion, then a
       tracer's TracerIntegerConversionError */
    int k = sr_dtype_kind(a->type->dtype);
    if (a->type->ndim != 0 || (k != SR_DK_INT && k != SR_DK_UINT))
      return sr_raise(I, "TypeError", "Only integer scalar arrays can be converted to a scalar index.");
    SrVal *cv = a->kind == SR_AV_TRACER && !a->has_value ? sr_tracers_value(I, x) : NULL;
    if (cv) {
      SrVal *r = sr_array_of(cv) ? array_unop(I, SR_OP_ITEM, cv) : sr_ref(cv);
      sr_unref(cv);
      return r;
    }
    if (a->kind == SR_AV_TRACER && !a->has_value) {
      SrBuf b = SR_BUF_INIT, og = SR_BUF_INIT;
      sr_type_str(&b, a->type, 0);
      sr_tracer_origin_msg(I, x, &og);
      sr_raise(I, "TracerIntegerConversionError", "The __index__() method was called on traced array with shape %s%s",
               sr_buf_str(&b), sr_buf_str(&og));
      sr_buf_free(&b);
      sr_buf_free(&og);
      return NULL;
    }
    return array_unop(I, SR_OP_ITEM, x);
  }
  if (op == SR_OP_ITEM) {
    if (a->kind == SR_AV_CONCRETE && sr_backend_hooks.array_item) return sr_backend_hooks.array_item(I, a->data);
    if (a->has_value) {
      if (a->type->dtype == SR_BOOL) return sr_bool((int)a->value.i);
      if (sr_dtype_is_inexact(a->type->dtype)) return sr_float(NULL, a->value.f);
      return sr_int(NULL, a->value.i);
    }
    SrVal *cv = a->kind == SR_AV_TRACER ? sr_tracers_value(I, x) : NULL;
    if (cv) {
      /* a Python scalar passed in stays one */
      SrVal *r = sr_array_of(cv) ? array_unop(I, SR_OP_ITEM, cv) : sr_ref(cv);
      sr_unref(cv);
      return r;
    }
    if (a->kind == SR_AV_TRACER) {
      /* core.concretization_function_error: the Tracer's __int__,
         __float__, __complex__ and __index__; _item's concrete_or_error */
      SrBuf b = SR_BUF_INIT, og = SR_BUF_INIT;
      sr_type_str(&b, a->type, 0); /* aval.str_short() */
      sr_tracer_origin_msg(I, x, &og);
      const char *f = I->item_for;
      if (f && strcmp(f, "index") == 0)
        sr_raise(I, "TracerIntegerConversionError", "The __index__() method was called on traced array with shape %s%s",
                 b.p, og.p ? og.p : "");
      else if (f)
        sr_raise(I, "ConcretizationTypeError",
                 "Abstract tracer value encountered where concrete value is expected: traced array with shape %s\n"
                 "The problem arose with the `%s` function. If trying to convert the data type of a value, try using "
                 "`x.astype(%s)` or `jnp.array(x, %s)` instead.%s",
                 b.p, f, f, f, og.p ? og.p : "");
      else
        sr_raise(I, "ConcretizationTypeError",
                 "Abstract tracer value encountered where concrete value is expected: traced array with shape %s\n"
                 "This occurred in the item() method of jax.Array%s",
                 b.p, og.p ? og.p : "");
      sr_buf_free(&b);
      sr_buf_free(&og);
      return NULL;
    }
    return sr_raise(I, "TypeError", "an abstract array has no value");
  }
  const char *fn = op == SR_OP_NEG ? "jax.numpy.negative" : op == SR_OP_POS ? "jax.numpy.positive"
                   : op == SR_OP_INVERT ? "jax.numpy.invert" : op == SR_OP_ABS ? "jax.numpy.abs" : NULL;
  if (!fn) return NULL;
  return call_fn(I, fn, 1, &x);
}

static int array_truthy(SrInterp *I, SrVal *x) {
  SrArrayObj *a = x->obj.data;
  /* core.check_bool_conversion */
  if (sr_type_numel(a->type) == 0) {
    sr_raise(I, "ValueError",
             "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an array is not empty.");
    return -1;
  }
  if (sr_type_numel(a->type) != 1) {
    sr_raise(I, "ValueError", "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
    return -1;
  }
  SrVal *cv = a->kind == SR_AV_TRACER ? sr_tracers_value(I, x) : NULL;
  if (cv) {
    int t = sr_array_of(cv) ? array_truthy(I, cv) : sr_val_truthy(cv);
    sr_unref(cv);
    return t;
  }
  if (a->kind == SR_AV_TRACER) {
    SrBuf b = SR_BUF_INIT, og = SR_BUF_INIT;
    sr_type_str(&b, a->type, 0); /* aval.str_short() */
    sr_tracer_origin_msg(I, x, &og);
    sr_raise(I, "TracerBoolConversionError", "Attempted boolean conversion of traced array with shape %s.%s", b.p,
             sr_buf_str(&og));
    sr_buf_free(&b);
    sr_buf_free(&og);
    return -1;
  }
  SrVal *item = array_unop(I, SR_OP_ITEM, x);
  if (!item) return -1;
  int t = sr_val_truthy(item);
  sr_unref(item);
  return t;
}

static int64_t array_len(SrInterp *I, SrVal *x) {
  SrArrayObj *a = x->obj.data;
  if (a->type->ndim == 0) {
    sr_raise(I, "TypeError", "len() of unsized object");
    return -1;
  }
  return a->type->dims[0].size;
}

static SrVal *array_getitem(SrInterp *I, SrVal *x, SrVal *key) {
  if (sr_jax_is_ref(x)) return sr_jax_ref_get(I, x, key);
  SrVal *args[2] = {x, key};
  return call_fn(I, "jax.numpy._getitem", 2, args);
}

SrVal *sr_iter_by_index(SrInterp *I, SrVal *x, int64_t n, SrVal *(*getitem)(SrInterp *I, SrVal *x, SrVal *key)) {
  if (n < 0) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)n);
  for (int64_t i = 0; i < n; i++) {
    SrVal *k = sr_int(NULL, i);
    SrVal *v = getitem(I, x, k);
    sr_unref(k);
    if (!v) {
      sr_unref(l);
      return NULL;
    }
    sr_seq_push(NULL, l, v);
  }
  return l;
}

/* ArrayImpl.__iter__ of a sharded array: device_put(self._value[i]), its
   rows from the host (a row of a sharded dimension is no slice the
   sharding rules allow) */
static SrVal *host_row(SrInterp *I, SrVal *h, SrVal *key) {
  SrVal *row = sr_getitem(I, h, key);
  SrVal *r = row ? call_fn(I, "jax.device_put", 1, &row) : NULL;
  sr_unref(row);
  return r;
}

static SrVal *array_iter(SrInterp *I, SrVal *x) {
  SrArrayObj *o = sr_array_of(x);
  int sharded = 0;
  for (int i = 0; o && o->kind == SR_AV_CONCRETE && i < o->type->ndim; i++) sharded |= o->type->dims[i].nax > 0;
  if (sharded && o->type->ndim > 0) {
    SrVal *h = sr_np_asarray(I, x, -1);
    SrVal *r = h ? sr_iter_by_index(I, h, o->type->dims[0].size, host_row) : NULL;
    sr_unref(h);
    return r;
  }
  if (o && o->kind != SR_AV_CONCRETE && o->type->ndim > 0) {
    /* a tracer: lax._iter, the results of one unstack equation */
    SrVal *r = call_fn(I, "jax.lax.unstack", 1, &x);
    SrVal *it = r ? sr_iterate(I, r) : NULL;
    sr_unref(r);
    return it;
  }
  return sr_iter_by_index(I, x, array_len(I, x), array_getitem);
}

SrVal *sr_method_forward(SrInterp *I, SrArgs *a, const char *own, const char *module, const char *cls) {
  const char *name = sr_current_builtin(I)->data;
  char q[128];
  snprintf(q, sizeof q, "%s.%s", own, name);
  SrVal *fn = sr_lookup_qualname(q);
  if (!fn) {
    snprintf(q, sizeof q, "%s.%s", module, name);
    fn = sr_lookup_qualname(q);
  }
  if (!fn) return sr_raise(I, "AttributeError", "'%s' object has no attribute '%s'", cls, name);
  int pack = (strcmp(name, "reshape") == 0 || strcmp(name, "transpose") == 0) && a->n > 1;
  SrVal *argv[64];
  int n = 0;
  argv[n++] = a->self;
  SrVal *packed = NULL;
  if (pack) {
    packed = sr_seq(NULL, SR_V_TUPLE, a->n);
    for (int i = 0; i < a->n; i++) sr_seq_push(NULL, packed, sr_ref(a->v[i]));
    argv[n++] = packed;
  } else {
    for (int i = 0; i < a->n && n < 64; i++) argv[n++] = a->v[i];
  }
  SrArgs ca = {n, argv, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = sr_call(I, fn, &ca);
  sr_unref(packed);
  return r;
}

/* x.method(...): jax.Array's own method, or jax.numpy.method(x, ...) */
static SrVal *array_method(SrInterp *I, SrArgs *a) {
  return sr_method_forward(I, a, "jax.Array.method", "jax.numpy", "ArrayImpl");
}

static const char *const methods[] = {
  "reshape", "sum", "max", "min", "mean", "prod", "astype", "transpose", "squeeze", "argmax",
  "argmin", "cumsum", "ravel", "flatten", "clip", "dot", "any", "all", "round", "conj", "var",
  "std", "swapaxes", "repeat", "item", "tolist", "block_until_ready", "copy", "argsort", "sort", "argpartition",
  "choose", "conjugate", "cumprod", "diagonal", "ptp", "searchsorted", "take", "trace", NULL,
};

/* whether x.name is a method that array_method can call (hasattr is
   true exactly when calling it can work) */
static int array_has_method(const char *name) {
  char q[128];
  snprintf(q, sizeof q, "jax.Array.method.%s", name);
  if (sr_lookup_qualname(q)) return 1;
  for (int i = 0; methods[i]; i++)
    if (strcmp(methods[i], name) == 0) {
      snprintf(q, sizeof q, "jax.numpy.%s", name);
      return sr_lookup_qualname(q) != NULL;
    }
  return 0;
}

typedef struct {
  SrDirAdd add;
  void *ctx;
  size_t n;
} DirCtx;

static void dir_registered(const char *name, void *ctx) {
  DirCtx *d = ctx;
  if (!strchr(name + d->n, '.')) d->add(name + d->n, d->ctx);
}

/* dir(x) of an array: what array_getattr finds */
static void array_dir(SrVal *self, SrDirAdd add, void *ctx) {
  static const char *const attrs[] = {"shape", "dtype", "ndim", "size", "weak_type", "T", "mT", "real", "imag", "aval", "sharding", NULL};
  for (int i = 0; attrs[i]; i++) add(attrs[i], ctx);
  DirCtx d = {add, ctx, strlen("jax.Array.property.")};
  sr_registry_names("jax.Array.property.", dir_registered, &d);
  d.n = strlen("jax.Array.method.");
  sr_registry_names("jax.Array.method.", dir_registered, &d);
  for (int i = 0; methods[i]; i++)
    if (array_has_method(methods[i])) add(methods[i], ctx);
  (void)self;
}

/* ShapeDtypeStruct.update(**kwargs): a new one with shape, dtype,
   sharding and weak_type replaced where given */
static SrVal *sds_update(SrInterp *I, SrArgs *a) {
  if (a->n) return sr_raise(I, "TypeError", "update() takes keyword arguments only");
  static const char *const keys[] = {"shape", "dtype", "sharding", "weak_type"};
  SrVal *v[4] = {NULL, NULL, NULL, NULL};
  for (int k = 0; k < a->nkw; k++) {
    int found = 0;
    for (int q = 0; q < 4; q++)
      if (strcmp(a->kw[k], keys[q]) == 0) {
        v[q] = sr_ref(a->kwv[k]);
        found = 1;
      }
    if (!found) return sr_raise(I, "TypeError", "update() got an unexpected keyword argument '%s'", a->kw[k]);
  }
  for (int q = 0; q < 4; q++)
    if (!v[q] && !(v[q] = sr_getattr(I, a->self, keys[q]))) {
      for (int k = 0; k < 4; k++) sr_unref(v[k]);
      return NULL;
    }
  const char *kw[2] = {sr_intern_cstr("sharding"), sr_intern_cstr("weak_type")};
  SrVal *kwv[2] = {v[2], v[3]};
  SrArgs ca = {2, v, 2, kw, kwv, NULL};
  SrVal *r = sr_call(I, sr_lookup_qualname("jax.ShapeDtypeStruct"), &ca);
  for (int k = 0; k < 4; k++) sr_unref(v[k]);
  return r;
}

static SrVal *array_getattr(SrInterp *I, SrVal *self, const char *name) {
  SrArrayObj *a = self->obj.data;
  SrVal *r = type_attr(I, a->type, name);
  if (r) return r;
  if (a->type->ref) {
    r = sr_jax_ref_getattr(I, self, name);
    if (r || I->exc) return r;
  }
  if (strcmp(name, "T") == 0) return call_fn(I, "jax.numpy.transpose", 1, &self);
  if (strcmp(name, "real") == 0) return call_fn(I, "jax.numpy.real", 1, &self);
  if (strcmp(name, "imag") == 0) return call_fn(I, "jax.numpy.imag", 1, &self);
  if (strcmp(name, "mT") == 0) {
    /* lax_numpy.matrix_transpose: the last two axes swapped */
    int nd = a->type->ndim;
    if (nd < 2)
      return sr_raise(I, "ValueError", "x must be at least two-dimensional for matrix_transpose; got ndim=%d", nd);
    int64_t perm[SR_MAX_RANK];
    for (int i = 0; i < nd; i++) perm[i] = i;
    perm[nd - 2] = nd - 1;
    perm[nd - 1] = nd - 2;
    return sr_lax_transpose(I, self, perm, nd);
  }
  if (strcmp(name, "aval") == 0) return sr_aval_new(a->type);
  if (strcmp(name, "val") == 0 && a->kind == SR_AV_TRACER && (r = sr_tracers_vmap_val(I, self))) return r;
  if (strcmp(name, "_debug_info") == 0) return sr_introspect_tracer_debug_info(I, self);
  if (strcmp(name, "update") == 0 && a->kind == SR_AV_ABSTRACT) return sr_bound_method(self, name, sds_update);
  if (strcmp(name, "sharding") == 0 && a->kind == SR_AV_ABSTRACT) {
    if (a->sharding && a->sharding->kind == SR_V_SPEC) {
      if (!I->jax->mesh)
        return sr_raise(I, "TypeError",
                        "When specifying PartitionSpec to `ShapeDtypeStruct`, the context mesh cannot be empty. Please "
                        "use `jax.set_mesh` to set the mesh context.");
      /* NamedSharding(cur_mesh, P): its checks of the axes too */
      SrVal *mv = sr_mesh_val(NULL, I->jax->mesh);
      SrVal *av[2] = {mv, a->sharding};
      SrArgs na = {2, av, 0, NULL, NULL, NULL};
      SrVal *ns = sr_call(I, sr_lookup_qualname("jax.sharding.NamedSharding"), &na);
      sr_unref(mv);
      return ns;
    }
    if (a->sharding) return sr_ref(a->sharding);
    if (a->no_sharding) return sr_none();
    return sr_type_sharding(I, a->type);
  }
  char q[128];
  snprintf(q, sizeof q, "jax.Array.property.%s", name);
  SrVal *prop = sr_lookup_qualname(q);
  if (prop) {
    SrArgs pa = {0, NULL, 0, NULL, NULL, NULL};
    SrVal *bound = sr_bound_method(self, name, ((SrBuiltin *)prop->obj.data)->fn);
    r = sr_call(I, bound, &pa);
    sr_unref(bound);
    return r;
  }
  int refl;
  if (dunder_op(name, &refl) >= 0) {
    SrVal *m = sr_builtin_with(name, array_dunder, NULL, NULL);
    ((SrBuiltin *)m->obj.data)->self = sr_ref(self);
    return m;
  }
  if (array_has_method(name)) {
    SrVal *m = sr_builtin_with(name, array_method, (void *)sr_intern_cstr(name), NULL);
    ((SrBuiltin *)m->obj.data)->self = sr_ref(self);
    return m;
  }
  return NULL;
}

/* ShapeDtypeStruct.__hash__: hash((shape, dtype, sharding, layout,
   weak_type)) -- by its type (interned) and its sharding's text; an array
   or a tracer has none (ArrayImpl.__hash__ = None) */
static int array_hash(SrInterp *I, SrVal *x, int64_t *out) {
  SrArrayObj *a = x->obj.data;
  if (a->kind != SR_AV_ABSTRACT) {
    /* a tracer's class is its trace's (Tracer.__hash__ = None) */
    const char *cl = a->kind == SR_AV_TRACER ? strrchr(sr_tracers_class_name(x), '.') + 1 : sr_val_kind_name(x);
    sr_raise(I, "TypeError", "unhashable type: '%s'", cl);
    return -1;
  }
  uint64_t h = (uint64_t)(uintptr_t)a->type >> 4;
  if (a->sharding) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, a->sharding);
    for (size_t i = 0; i < b.len; i++) h = (h ^ (unsigned char)b.p[i]) * 1099511628211u;
    sr_buf_free(&b);
  }
  *out = (int64_t)(h >> 1);
  return 0;
}

/* ArrayImpl.__setitem__ and a tracer's (_unimplemented_setitem in
   numpy/array_methods.py); a ShapeDtypeStruct has none */
static int array_setitem(SrInterp *I, SrVal *x, SrVal *key, SrVal *v) {
  SrArrayObj *a = x->obj.data;
  if (a->type->ref) return sr_jax_ref_set(I, x, key, v);
  if (a->kind == SR_AV_ABSTRACT)
    sr_raise(I, "TypeError", "'%s' object does not support item assignment", sr_val_kind_name(x));
  else
    sr_raise(I, "TypeError", "JAX arrays are immutable and do not support in-place item assignment."
             " Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method:"
             " https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html");
  return -1;
}

static const SrLangOps array_ops = {
  .hash = array_hash,
  .setitem = array_setitem,
  .getattr = array_getattr,
  .getitem = array_getitem,
  .iter = array_iter,
  .binop = array_binop,
  .unop = array_unop,
  .len = array_len,
  .truthy = array_truthy,
};

/* ---- namespaces: objects whose attributes are a dict (ManualAxisType) ---- */

static void ns_free(void *d) { sr_unref(d); }

static void ns_repr(SrBuf *out, const SrVal *v) {
  const SrVal *d = v->obj.data;
  sr_buf_puts(out, "namespace(");
  for (int i = 0; i < d->dict.n; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_val_str(out, d->dict.keys[i]);
    sr_buf_putc(out, '=');
    sr_val_repr(out, d->dict.vals[i]);
  }
  sr_buf_putc(out, ')');
}

static SrVal *ns_getattr(SrInterp *I, SrVal *self, const char *name) {
  SrVal *k = sr_str_cstr(NULL, name);
  SrVal *v = sr_dict_get(self->obj.data, k);
  sr_unref(k);
  (void)I;
  return v ? sr_ref(v) : NULL;
}

static const SrLangOps ns_ops = {.getattr = ns_getattr};
static const SrClass ns_class = {"namespace", ns_free, ns_repr, NULL, &ns_ops};

SrVal *sr_namespace(SrVal *dict) { return sr_obj(&ns_class, dict); }

/* ---- tracing a function ---- */

SrVal *sr_trace_call(SrInterp *I, SrVal *fn, SrArgs *a) {
  if (I->trace_calls >= SR_JAXPR_MAX_DEPTH) return sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
  I->trace_calls++;
  SrVal *r = sr_call(I, fn, a);
  I->trace_calls--;
  return r;
}

/* type(x): an abstract array is a jax.ShapeDtypeStruct (what makes one
   in JAX), the others jaxlib's ArrayImpl */
static const char *array_type_name(const SrVal *v) {
  const SrArrayObj *o = sr_array_of(v);
  return o && o->kind == SR_AV_ABSTRACT ? "ShapeDtypeStruct" : "ArrayImpl";
}

void sr_array_methods_init(void) {
  sr_val_type_name_class(&sr_array_class, array_type_name);
  sr_array_class.lang = &array_ops;
  sr_aval_class.lang = &aval_ops;
  sr_dir_class(&sr_array_class, array_dir);
}

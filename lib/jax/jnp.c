/* jnp.c: promotion and the core of jax.numpy, and the tracing entry points
 * (jax.typeof, ShapeDtypeStruct, make_jaxpr, jit). */
#include "jax/jnp.h"

#include "jax/api.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/layout_api.h"
#include "jax/array_methods.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- param helpers ---- */

SrVal *sr_int_tuple(const int64_t *v, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_int(NULL, v[i]));
  return t;
}

SrVal *sr_none_tuple(int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_none());
  return t;
}

SrVal *sr_bindv(SrInterp *I, int prim_id, int nin, SrVal **in, ...) {
  SrPList ps = {0};
  va_list ap;
  va_start(ap, in);
  for (;;) {
    const char *k = va_arg(ap, const char *);
    if (!k) break;
    SrVal *v = va_arg(ap, SrVal *);
    sr_plist_add(&ps, k, v);
  }
  va_end(ap);
  SrVal *r = sr_bind(I, prim_id, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

int sr_dtype_arg(SrInterp *I, SrVal *v, int *out, const char *what) {
  *out = -1;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (v->kind == SR_V_DTYPE) *out = (int)v->dtype;
  if (v->kind == SR_V_STR || v->kind == SR_V_WORD) {
    int d = sr_dtype_lookup(v->str.s, v->str.n);
    if (d >= 0 && d < SR_NBUILTIN_DTYPES) *out = d;
  }
  if (*out >= 0) {
    /* dtypes._maybe_canonicalize_explicit_dtype: without x64 a 64-bit
       request is truncated, with jax_explicit_x64_dtypes' default warning */
    int c = *out == SR_F64 ? SR_F32 : *out == SR_I64 ? SR_I32 : *out == SR_U64 ? SR_U32 : *out == SR_C128 ? SR_C64 : *out;
    if (c != *out && !I->jax->enable_x64) {
      sr_warn(I, "UserWarning",
              "Explicitly requested dtype %s requested in %s is not available, and will be truncated to dtype %s. "
              "To enable more dtypes, set the jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
              "environment variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
              sr_dtype_name((SrDtype)*out), what, sr_dtype_name((SrDtype)c));
      *out = c;
    }
    return 0;
  }
  /* Python's types are the built-ins registered under builtins.* */
  const char *nm = sr_is_obj(v, &sr_builtin_class) ? sr_builtin_name(v) : NULL;
  int x64 = I->jax->enable_x64;
  if (nm && strcmp(nm, "builtins.float") == 0) *out = x64 ? SR_F64 : SR_F32;
  else if (nm && strcmp(nm, "builtins.int") == 0) *out = x64 ? SR_I64 : SR_I32;
  else if (nm && strcmp(nm, "builtins.bool") == 0) *out = SR_BOOL;
  else if (nm && strcmp(nm, "builtins.complex") == 0) *out = x64 ? SR_C128 : SR_C64;
  if (*out >= 0) return 0;
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, v);
  sr_raise(I, "TypeError", "%s: cannot interpret %s as a data type", what, b.p);
  sr_buf_free(&b);
  return -1;
}

int sr_shape_arg(SrInterp *I, SrVal *v, int64_t *shape, int *ndim, const char *what) {
  SrVal *ints = sr_int_seq_arg(v);
  if (ints != v) {
    int rc = sr_shape_arg(I, ints, shape, ndim, what);
    sr_unref(ints);
    return rc;
  }
  if (v->kind == SR_V_INT) {
    shape[0] = v->i;
    *ndim = 1;
    return 0;
  }
  if (!sr_is_seq(v) || v->seq.n > SR_MAX_RANK) {
    sr_raise(I, "TypeError", "%s must be an int or a tuple of ints", what);
    return -1;
  }
  for (int i = 0; i < v->seq.n; i++)
    if (sr_as_int(I, v->seq.items[i], what, &shape[i]) < 0) return -1;
  *ndim = v->seq.n;
  for (int i = 0; i < *ndim; i++)
    if (shape[i] < 0) {
      sr_raise(I, "ValueError", "%s: negative dimensions are not allowed", what);
      return -1;
    }
  return 0;
}

SrVal *sr_sharding_arg(SrInterp *I, SrVal *v, int ndim, const char *what) {
  (void)ndim;
  if (!v || v->kind == SR_V_NONE) return NULL;
  if ((v->kind == SR_V_SPEC || v->kind == SR_V_SHARDING) &&
      sr_api_check_spec(I, v->kind == SR_V_SPEC ? v->spec : v->sh.spec, NULL, -1) < 0)
    return NULL;
  if (v->kind == SR_V_SPEC) {
    const SrMesh *m = sr_jax_abstract_mesh(I->jax);
    if (!m->n) {
      sr_raise(I, "ValueError", "%s: a PartitionSpec needs a mesh in context (jax.set_mesh) or a NamedSharding", what);
      return NULL;
    }
    return sr_sharding_val(NULL, m, v->spec, NULL);
  }
  if (v->kind == SR_V_SHARDING) {
    const SrMesh *m = v->sh.mesh->abstract ? v->sh.mesh : sr_mesh_abstract(v->sh.mesh, 1);
    return sr_sharding_val(NULL, m, v->sh.spec, NULL);
  }
  sr_raise(I, "TypeError", "%s must be a PartitionSpec or a NamedSharding, got %s", what, sr_val_kind_name(v));
  return NULL;
}

/* ---- promotion ---- */

static int kind_rank(SrDtype d) {
  switch (sr_dtype_kind(d)) {
  case SR_DK_BOOL: return 0;
  case SR_DK_UINT: return 1;
  case SR_DK_INT: return 2;
  case SR_DK_FLOAT: return 3;
  case SR_DK_COMPLEX: return 4;
  default: return 5;
  }
}

static SrDtype default_of_kind(SrInterp *I, int rank) {
  int x64 = I->jax->enable_x64;
  switch (rank) {
  case 0: return SR_BOOL;
  case 1: return x64 ? SR_U64 : SR_U32;
  case 2: return x64 ? SR_I64 : SR_I32;
  case 3: return x64 ? SR_F64 : SR_F32;
  default: return x64 ? SR_C128 : SR_C64;
  }
}

/* promote_types for two strong dtypes (JAX's lattice, simplified to what
   the documents use) */
static SrDtype promote2(SrDtype a, SrDtype b) {
  if (a == b) return a;
  int ka = kind_rank(a), kb = kind_rank(b);
  if (ka != kb) {
    if (ka > kb) return (ka == 2 && kb == 1 && sr_dtype_info(b)->bits >= sr_dtype_info(a)->bits)
                            ? (sr_dtype_info(b)->bits >= 32 ? SR_I64 : sr_dtype_info(b)->bits == 16 ? SR_I32 : SR_I16)
                            : a;
    return promote2(b, a);
  }
  /* same kind: the wider; bf16 with f16 gives f32 */
  if ((a == SR_BF16 && b == SR_F16) || (a == SR_F16 && b == SR_BF16)) return SR_F32;
  return sr_dtype_info(a)->bits >= sr_dtype_info(b)->bits ? a : b;
}

SrDtype sr_jnp_result_dtype(SrInterp *I, int n, SrVal **args, int *weak) {
  int have_strong = 0, weak_rank = -1;
  SrDtype strong = SR_BOOL, weakd = SR_BOOL;
  for (int i = 0; i < n; i++) {
    const SrType *t = sr_value_type(I, args[i]);
    if (!t) continue;
    if (t->weak) {
      if (kind_rank(t->dtype) > weak_rank) {
        weak_rank = kind_rank(t->dtype);
        weakd = t->dtype;
      }
    } else {
      strong = have_strong ? promote2(strong, t->dtype) : t->dtype;
      have_strong = 1;
    }
  }
  if (!have_strong) {
    *weak = 1;
    return weakd;
  }
  *weak = 0;
  /* JAX's lattice puts a weak int below every integer type, unsigned ones
     included: uint32 array + 1 is uint32 */
  if (weak_rank == kind_rank(SR_I32) && kind_rank(strong) == kind_rank(SR_U32)) return strong;
  if (weak_rank > kind_rank(strong)) return default_of_kind(I, weak_rank);
  return strong;
}

SrVal *sr_jnp_convert(SrInterp *I, SrVal *x, SrDtype dt, int weak) {
  const SrType *t = sr_value_type(I, x);
  if (!t) return sr_raise(I, "TypeError", "cannot convert %s to an array", sr_val_kind_name(x));
  if (t->dtype == dt && t->weak == weak) return sr_ref(x);
  SrArrayObj *a = sr_array_of(x);
  /* Python scalars (and literal values) become literals of the new dtype */
  if (!a || (a->has_value && a->kind == SR_AV_ABSTRACT)) {
    double re = 0, im = 0;
    int64_t iv = 0;
    if (a) {
      if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) re = a->value.c[0], im = a->value.c[1];
      else if (sr_dtype_is_inexact(t->dtype)) re = a->value.f, iv = sr_f2i64(a->value.f);
      else iv = a->value.i, re = (double)a->value.i;
    } else if (x->kind == SR_V_FLOAT) {
      re = x->f;
      iv = sr_f2i64(x->f);
    } else if (x->kind == SR_V_COMPLEX) {
      re = x->c.re;
      im = x->c.im;
    } else {
      iv = x->i;
      re = (double)x->i;
    }
    const SrType *nt = sr_type_with_weak(sr_type_scalar(dt), weak);
    if (sr_exec_hooks.from_scalar && !I->trace) {
      struct SrArray *arr = sr_exec_hooks.from_scalar(I, nt, re, im, iv);
      return arr ? sr_array_concrete(arr) : NULL;
    }
    return sr_array_scalar(nt, re, im, iv);
  }
  /* an array whose weakness alone changes still gets an equation
     (lax._convert_element_type binds whenever dtype or weak_type differ) */
  return sr_bindv(I, SR_P_convert_element_type, 1, &x, "new_dtype", sr_dtype_val(NULL, dt), "weak_type",
                  sr_bool(weak), "sharding", sr_none(), NULL);
}

/* broadcast_in_dim adding leading dims to reach rank nd */
static SrVal *to_rank(SrInterp *I, SrVal *x, int nd, const int64_t *shape) {
  const SrType *t = sr_value_type(I, x);
  if (!t || t->ndim == 0 || t->ndim == nd) return sr_ref(x);
  int64_t dims[SR_MAX_RANK], bshape[SR_MAX_RANK];
  int lead = nd - t->ndim;
  for (int i = 0; i < t->ndim; i++) dims[i] = lead + i;
  for (int i = 0; i < nd; i++) bshape[i] = i < lead ? 1 : t->dims[i - lead].size;
  (void)shape;
  return sr_bindv(I, SR_P_broadcast_in_dim, 1, &x, "shape", sr_int_tuple(bshape, nd), "broadcast_dimensions",
                  sr_int_tuple(dims, t->ndim), "sharding", sr_none(), NULL);
}

int sr_jnp_promote(SrInterp *I, int n, SrVal **args, const char *fname) {
  for (int i = 0; i < n; i++) {
    SrVal *a = sr_jnp_asarray(I, args[i], -1);
    if (!a) {
      for (int k = 0; k < i; k++) sr_unref(args[k]);
      return -1;
    }
    args[i] = a;
  }
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, n, args, &weak);
  int nd = 0;
  for (int i = 0; i < n; i++) {
    const SrType *t = sr_value_type(I, args[i]);
    if (t && t->ndim > nd) nd = t->ndim;
  }
  /* promote_args: every dtype first (promote_dtypes), then the ranks
     (promote_shapes) */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++) {
      const SrType *t = sr_value_type(I, args[i]);
      SrVal *r = pass == 0 ? sr_jnp_convert(I, args[i], dt, weak && t->weak) : to_rank(I, args[i], nd, NULL);
      sr_unref(args[i]);
      args[i] = r;
      if (!r) {
        for (int k = 0; k < n; k++)
          if (k != i) sr_unref(args[k]);
        (void)fname;
        return -1;
      }
    }
  return 0;
}

/* ---- asarray ---- */

/* nested lists of numbers -> flat doubles/ints with a shape */
typedef struct Flat {
  double *re, *im;
  int64_t *iv;
  int64_t n, cap;
  int64_t shape[SR_MAX_RANK];
  int ndim, kind; /* max kind rank seen */
  int dtype;      /* the dtype asked for, or -1 */
} Flat;

/* At the first number the shape is known (a list deeper or shallower
   than the first is an error), so the whole is checked against the
   memory limit and its buffers allocated at once: nested lists that share
   their items hold more numbers than memory, with no one big allocation
   of their own.  XLA's RESOURCE_EXHAUSTED on the array's bytes, as for an
   array whose shape is too big. */
static int flat_reserve(SrInterp *I, Flat *f, int kind) {
  uint64_t count = 1, bytes, host;
  int over = 0;
  for (int d = 0; d < f->ndim; d++) over |= __builtin_mul_overflow(count, (uint64_t)f->shape[d], &count);
  SrDtype dt = f->dtype >= 0 ? (SrDtype)f->dtype : default_of_kind(I, kind);
  over |= __builtin_mul_overflow(count, (uint64_t)sr_dtype_info(dt)->size, &bytes);
  if (over || bytes > INT64_MAX) return sr_raise(I, "ValueError", "%s", SR_TOO_BIG_MSG), -1;
  /* the array, and re, im and iv on the host before it */
  if (bytes > sr_mem_limit() || __builtin_mul_overflow(count, 3 * sizeof(double), &host) ||
      host > sr_mem_limit() - bytes)
    return sr_raise(I, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate %llu bytes.",
                    (unsigned long long)bytes), -1;
  size_t cap = count ? (size_t)count : 1;
  f->re = sr_try_malloc(cap * sizeof *f->re);
  f->im = sr_try_malloc(cap * sizeof *f->im);
  f->iv = sr_try_malloc(cap * sizeof *f->iv);
  if (!f->re || !f->im || !f->iv)
    return sr_raise(I, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate %llu bytes.",
                    (unsigned long long)bytes), -1;
  f->cap = (int64_t)cap;
  return 0;
}

static int flat_add(SrInterp *I, Flat *f, SrVal *v, int depth) {
  if (sr_as_range(v)) {
    /* numpy takes a range as the list of its ints */
    SrVal *l = sr_iterate(I, v);
    int rc = l ? flat_add(I, f, l, depth) : -1;
    sr_unref(l);
    return rc;
  }
  if (sr_is_seq(v) && (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE)) {
    if (depth >= SR_MAX_RANK) return sr_raise(I, "ValueError", "too many dimensions"), -1;
    if (depth >= f->ndim) {
      /* deeper than the numbers before it */
      if (f->n > 0)
        return sr_raise(I, "ValueError", "setting an array element with a sequence. The requested array has an inhomogeneous shape"), -1;
      f->ndim = depth + 1;
      f->shape[depth] = v->seq.n;
    } else if (f->shape[depth] != v->seq.n) {
      return sr_raise(I, "ValueError", "setting an array element with a sequence. The requested array has an inhomogeneous shape"), -1;
    }
    for (int i = 0; i < v->seq.n; i++)
      if (flat_add(I, f, v->seq.items[i], depth + 1) < 0) return -1;
    return 0;
  }
  if (depth < f->ndim && f->n > 0)
    return sr_raise(I, "ValueError", "setting an array element with a sequence. The requested array has an inhomogeneous shape"), -1;
  double re = 0, im = 0;
  int64_t iv = 0;
  int k;
  switch (v->kind) {
  case SR_V_BOOL: k = 0; iv = v->i; re = (double)iv; break;
  case SR_V_INT: k = 2; iv = v->i; re = (double)iv; break;
  case SR_V_FLOAT: k = 3; re = v->f; iv = sr_f2i64(re); break;
  case SR_V_COMPLEX: k = 4; re = v->c.re; im = v->c.im; break;
  default: {
    SrArrayObj *a = sr_array_of(v);
    if (a && a->type->ndim == 0) {
      SrVal *item = sr_unop(I, SR_OP_ITEM, v);
      if (!item) return -1;
      int rc = flat_add(I, f, item, depth);
      sr_unref(item);
      return rc;
    }
    /* an array of devices (np.array(jax.devices())) holds their ids:
       the values an array can hold, and what Mesh needs of it */
    if (v->kind == SR_V_OBJ && strcmp(sr_val_kind_name(v), "CpuDevice") == 0) {
      SrVal *id = sr_getattr(I, v, "id");
      if (!id) return -1;
      int rc = flat_add(I, f, id, depth);
      sr_unref(id);
      return rc;
    }
    return sr_raise(I, "TypeError", "cannot make an array of %s", sr_val_kind_name(v)), -1;
  }
  }
  if (k > f->kind) f->kind = k;
  if (f->n == 0 && !f->re && flat_reserve(I, f, k) < 0) return -1;
  if ((f->n & 0xffff) == 0xffff && I->interrupted) return sr_raise(I, "KeyboardInterrupt", "interrupted"), -1;
  if (f->n == f->cap) {
    f->cap = f->cap ? 2 * f->cap : 64;
    f->re = sr_xrealloc(f->re, (size_t)f->cap * sizeof *f->re);
    f->im = sr_xrealloc(f->im, (size_t)f->cap * sizeof *f->im);
    f->iv = sr_xrealloc(f->iv, (size_t)f->cap * sizeof *f->iv);
  }
  f->re[f->n] = re;
  f->im[f->n] = im;
  f->iv[f->n++] = iv;
  return 0;
}

SrVal *sr_jnp_asarray(SrInterp *I, SrVal *x, int dtype) {
  if (sr_array_of(x) || x->kind == SR_V_INT || x->kind == SR_V_FLOAT || x->kind == SR_V_BOOL ||
      x->kind == SR_V_COMPLEX) {
    if (dtype < 0) return sr_ref(x);
    return sr_jnp_convert(I, x, (SrDtype)dtype, 0);
  }
  if (x->kind != SR_V_LIST && x->kind != SR_V_TUPLE && !sr_as_range(x)) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, x);
    sr_raise(I, "TypeError", "Value %s with type <class '%s'> is not a valid JAX type", sr_buf_str(&b),
             sr_val_kind_name(x));
    sr_buf_free(&b);
    return NULL;
  }
  Flat f;
  memset(&f, 0, sizeof f);
  f.dtype = dtype;
  if (flat_add(I, &f, x, 0) < 0) {
    free(f.re);
    free(f.im);
    free(f.iv);
    return NULL;
  }
  /* no items at all: numpy's default, a float (np.array([]) is float64) */
  if (f.n == 0) f.kind = 3;
  SrDtype dt = dtype >= 0 ? (SrDtype)dtype : default_of_kind(I, f.kind);
  const SrType *t = sr_type_array(dt, f.ndim, f.shape);
  SrVal *r;
  if (sr_exec_hooks.from_host) {
    struct SrArray *arr = sr_exec_hooks.from_host(I, t, f.re, f.im, f.iv);
    r = arr ? sr_array_concrete(arr) : NULL;
  } else {
    r = sr_array_abstract(t);
  }
  free(f.re);
  free(f.im);
  free(f.iv);
  return r;
}

/* ---- elementwise functions ---- */

static SrVal *binary(SrInterp *I, SrArgs *a, int prim, const char *name) {
  if (a->n != 2) return sr_raise(I, "TypeError", "%s() takes 2 positional arguments but %d were given", name, a->n);
  SrVal *args[2] = {a->v[0], a->v[1]};
  if (sr_jnp_promote(I, 2, args, name) < 0) return NULL;
  SrVal *r = sr_lax_binary(I, prim, args[0], args[1]);
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

#define BINARY(fn, prim, name)                                          \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return binary(I, a, prim, name); }
BINARY(jnp_add, SR_P_add, "add")
BINARY(jnp_subtract, SR_P_sub, "subtract")
BINARY(jnp_multiply, SR_P_mul, "multiply")
BINARY(jnp_maximum, SR_P_max, "maximum")
BINARY(jnp_minimum, SR_P_min, "minimum")
BINARY(jnp_equal, SR_P_eq, "equal")
BINARY(jnp_not_equal, SR_P_ne, "not_equal")
BINARY(jnp_less, SR_P_lt, "less")
BINARY(jnp_less_equal, SR_P_le, "less_equal")
BINARY(jnp_greater, SR_P_gt, "greater")
BINARY(jnp_greater_equal, SR_P_ge, "greater_equal")
BINARY(jnp_bitwise_and, SR_P_and, "bitwise_and")
BINARY(jnp_bitwise_or, SR_P_or, "bitwise_or")
BINARY(jnp_bitwise_xor, SR_P_xor, "bitwise_xor")

/* true_divide: integers divide as floats */
static SrVal *jnp_true_divide(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "true_divide() takes 2 positional arguments");
  SrVal *args[2] = {a->v[0], a->v[1]};
  if (sr_jnp_promote(I, 2, args, "true_divide") < 0) return NULL;
  const SrType *t = sr_value_type(I, args[0]);
  if (!sr_dtype_is_inexact(t->dtype)) {
    for (int i = 0; i < 2; i++) {
      SrVal *c = sr_jnp_convert(I, args[i], default_of_kind(I, 3), 0);
      sr_unref(args[i]);
      args[i] = c;
      if (!c) {
        sr_unref(args[1 - i]);
        return NULL;
      }
    }
  }
  SrVal *r = sr_lax_binary(I, SR_P_div, args[0], args[1]);
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

/* x ** y: an integer Python exponent is integer_pow, as jnp.power does */
static SrVal *jnp_power(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "power() takes 2 positional arguments");
  SrVal *y = a->v[1];
  if (y->kind == SR_V_INT && sr_array_of(a->v[0])) {
    SrVal *x = a->v[0];
    return sr_bindv(I, SR_P_integer_pow, 1, &x, "y", sr_int(NULL, y->i), NULL);
  }
  return binary(I, a, SR_P_pow, "power");
}

static SrVal *unary(SrInterp *I, SrArgs *a, int prim, const char *name, int want_float) {
  if (a->n != 1) return sr_raise(I, "TypeError", "%s() takes 1 positional argument but %d were given", name, a->n);
  SrVal *x = sr_jnp_asarray(I, a->v[0], -1);
  if (!x) return NULL;
  const SrType *t = sr_value_type(I, x);
  if (want_float && !sr_dtype_is_inexact(t->dtype)) {
    SrVal *c = sr_jnp_convert(I, x, default_of_kind(I, 3), t->weak);
    sr_unref(x);
    if (!c) return NULL;
    x = c;
  }
  SrPList ps = {0};
  if (sr_prims[prim].pp == SR_PP_ACCURACY) sr_plist_add(&ps, "accuracy", sr_none());
  SrVal *r = sr_bind(I, prim, 1, &x, ps.n, ps.p);
  sr_plist_free(&ps);
  sr_unref(x);
  return r;
}

#define UNARY(fn, prim, name, fl)                                       \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return unary(I, a, prim, name, fl); }
UNARY(jnp_sin, SR_P_sin, "sin", 1)
UNARY(jnp_cos, SR_P_cos, "cos", 1)
UNARY(jnp_tan, SR_P_tan, "tan", 1)
UNARY(jnp_tanh, SR_P_tanh, "tanh", 1)
UNARY(jnp_exp, SR_P_exp, "exp", 1)
UNARY(jnp_log, SR_P_log, "log", 1)
UNARY(jnp_sqrt, SR_P_sqrt, "sqrt", 1)
UNARY(jnp_negative, SR_P_neg, "negative", 0)
UNARY(jnp_abs, SR_P_abs, "abs", 0)
UNARY(jnp_sign, SR_P_sign, "sign", 0)
UNARY(jnp_invert, SR_P_not, "invert", 0)

static SrVal *jnp_positive(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "positive() takes 1 positional argument");
  return sr_jnp_asarray(I, a->v[0], -1);
}

/* ---- jax.typeof and ShapeDtypeStruct ---- */

static SrVal *jax_typeof(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "typeof() takes exactly one argument");
  if (sr_is_obj(a->v[0], &sr_aval_class)) return sr_ref(a->v[0]);
  const SrType *t = sr_value_type(I, a->v[0]);
  if (!t) {
    SrVal *arr = sr_jnp_asarray(I, a->v[0], -1);
    if (!arr) return NULL;
    t = sr_value_type(I, arr);
    sr_unref(arr);
  }
  return sr_aval_new(t);
}

static SrVal *jax_shape_dtype_struct(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "ShapeDtypeStruct", "shape, dtype, *, sharding=, weak_type=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_shape_arg(I, p[0], shape, &nd, "shape") < 0) return NULL;
  if (p[1]->kind != SR_V_DTYPE) return sr_raise(I, "TypeError", "ShapeDtypeStruct's dtype must be a dtype");
  SrTypeBuilder b;
  sr_type_builder(&b, sr_type_array(p[1]->dtype, nd, shape));
  if (p[3]) b.weak = (uint8_t)sr_val_truthy(p[3]);
  SrVal *sh = NULL;
  if (p[2] && p[2]->kind != SR_V_NONE) {
    sh = sr_sharding_arg(I, p[2], nd, "ShapeDtypeStruct's sharding");
    if (!sh) return NULL;
    SrTypeCtx cx;
    SrDiags d = SR_DIAGS_INIT;
    sr_type_ctx(I, &cx, &d);
    SrShardSpec s;
    if (sr_spec_to_shard(&cx, sh, sr_mesh_shape(sh->sh.mesh), nd, &s) < 0) {
      sr_unref(sh);
      return sr_raise_diags(I, &d, "ValueError");
    }
    /* the type names Explicit axes only: Auto and Manual ones are None
       there (modify_spec_for_auto_manual) */
    const SrMesh *sm = sh->sh.mesh;
    for (int i = 0; i < nd; i++) {
      int n = 0;
      for (int k = 0; k < s.nax[i]; k++)
        if (sm->types[s.ax[i][k]] == SR_AXIS_EXPLICIT) s.ax[i][n++] = s.ax[i][k];
      s.nax[i] = (uint8_t)n;
    }
    sr_apply_shard(&b, &s);
    SrRuleEqn re = {&sr_prims[SR_P_copy], 0, 1, 0, NULL, NULL, NULL, NULL};
    const SrType *t;
    if (sr_finish_type(&cx, &re, &b, &t) < 0) {
      sr_unref(sh);
      return sr_raise_diags(I, &d, "ValueError");
    }
  }
  SrVal *r = sr_array_abstract(sr_type_get(&b));
  /* .sharding: a P is a NamedSharding over the concrete mesh in context */
  SrVal *keep = p[2] && p[2]->kind != SR_V_NONE ? sr_ref(p[2]) : NULL;
  if (keep && keep->kind == SR_V_SPEC && I->jax->mesh) {
    sr_unref(keep);
    keep = sr_sharding_val(NULL, I->jax->mesh, p[2]->spec, sr_intern_cstr("device"));
  }
  ((SrArrayObj *)r->obj.data)->sharding = keep;
  sr_unref(sh);
  return r;
}

/* ---- tracing functions ---- */

/* ---- pytrees ---- */

/* JAX flattens a dict in sorted key order (strings by code point,
   numbers by value; keys of other kinds keep their place). */
static int key_cmp(const SrVal *a, const SrVal *b) {
  if ((a->kind == SR_V_STR || a->kind == SR_V_WORD) && (b->kind == SR_V_STR || b->kind == SR_V_WORD)) {
    size_t n = a->str.n < b->str.n ? a->str.n : b->str.n;
    int c = memcmp(a->str.s, b->str.s, n);
    return c ? c : (a->str.n > b->str.n) - (a->str.n < b->str.n);
  }
  int an = a->kind == SR_V_INT || a->kind == SR_V_BOOL || a->kind == SR_V_FLOAT;
  int bn = b->kind == SR_V_INT || b->kind == SR_V_BOOL || b->kind == SR_V_FLOAT;
  if (an && bn) {
    double x = a->kind == SR_V_FLOAT ? a->f : (double)a->i, y = b->kind == SR_V_FLOAT ? b->f : (double)b->i;
    return (x > y) - (x < y);
  }
  return 0;
}

/* The order of a dict's entries when flattened (a stable sort). */
static int *dict_order(const SrVal *d) {
  int n = d->dict.n, *o = sr_xcalloc((size_t)n + 1, sizeof *o);
  for (int i = 0; i < n; i++) {
    int k = i;
    while (k > 0 && key_cmp(d->dict.keys[o[k - 1]], d->dict.keys[i]) > 0) {
      o[k] = o[k - 1];
      k--;
    }
    o[k] = i;
  }
  return o;
}

SrVal *sr_pytree_children(SrVal *v) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) sr_seq_push(NULL, l, sr_ref(v->seq.items[i]));
    return l;
  }
  if (v->kind == SR_V_DICT) {
    int *o = dict_order(v);
    SrVal *l = sr_seq(NULL, SR_V_LIST, v->dict.n);
    for (int i = 0; i < v->dict.n; i++) sr_seq_push(NULL, l, sr_ref(v->dict.vals[o[i]]));
    free(o);
    return l;
  }
  if (v->kind == SR_V_NONE) return sr_seq(NULL, SR_V_LIST, 0);
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->tree_children) return ops->tree_children(v);
  return NULL;
}

static int tree_depth_ok(SrVal *v, int depth) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) return 1;
  int ok = depth < SR_VAL_MAX_NEST;
  for (int i = 0; i < ch->seq.n && ok; i++) ok = tree_depth_ok(ch->seq.items[i], depth + 1);
  sr_unref(ch);
  return ok;
}

int sr_pytree_check_depth(SrInterp *I, SrVal *v) {
  if (tree_depth_ok(v, 0)) return 0;
  sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
  return -1;
}

SrVal *sr_pytree_rebuild(SrVal *like, SrVal *children) {
  if (like->kind == SR_V_LIST || like->kind == SR_V_TUPLE) {
    SrVal *r = sr_seq(NULL, like->kind, children->seq.n);
    for (int i = 0; i < children->seq.n; i++) sr_seq_push(NULL, r, sr_ref(children->seq.items[i]));
    return r;
  }
  if (like->kind == SR_V_DICT) {
    int *o = dict_order(like);
    SrVal *r = sr_dict(NULL);
    for (int i = 0; i < like->dict.n && i < children->seq.n; i++)
      sr_dict_set(NULL, r, sr_ref(like->dict.keys[o[i]]), sr_ref(children->seq.items[i]));
    free(o);
    return r;
  }
  if (like->kind == SR_V_NONE) return sr_none();
  const SrLangOps *ops = sr_ops(like);
  if (ops && ops->tree_rebuild) return ops->tree_rebuild(like, children);
  return sr_ref(like);
}

/* The arguments of a traced call as leaves: arrays and Python scalars;
   lists, tuples, dicts and registered classes are pytree nodes. */
static int flatten(SrInterp *I, SrVal *v, SrVal *leaves) {
  SrVal *ch = sr_pytree_children(v);
  if (ch) {
    int rc = 0;
    for (int i = 0; i < ch->seq.n && rc == 0; i++) rc = flatten(I, ch->seq.items[i], leaves);
    sr_unref(ch);
    return rc;
  }
  if (!sr_value_type(I, v)) {
    SrBuf b = SR_BUF_INIT;
    sr_to_str(I, &b, v);
    sr_raise(I, "TypeError", "Argument '%s' of type <class '%s'> is not a valid JAX type.", sr_buf_str(&b),
             sr_val_kind_name(v));
    sr_buf_free(&b);
    return -1;
  }
  sr_seq_push(NULL, leaves, sr_ref(v));
  return 0;
}

/* Rebuilds v's structure with the next leaves from `it`. */
static SrVal *unflatten(SrVal *v, SrVal *leaves, int *it) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) return *it < leaves->seq.n ? sr_ref(leaves->seq.items[(*it)++]) : sr_none();
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *x = unflatten(ch->seq.items[i], leaves, it);
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = x;
  }
  SrVal *r = sr_pytree_rebuild(v, ch);
  sr_unref(ch);
  return r;
}

SrVal *sr_pytree_flatten(SrInterp *I, SrVal *v) {
  if (sr_pytree_check_depth(I, v) < 0) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  if (flatten(I, v, l) < 0) {
    sr_unref(l);
    return NULL;
  }
  return l;
}

SrVal *sr_pytree_numbered(SrVal *v, int *k) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) return sr_int(NULL, (*k)++);
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *s = sr_pytree_numbered(ch->seq.items[i], k);
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = s;
  }
  SrVal *r = sr_pytree_rebuild(v, ch);
  sr_unref(ch);
  return r;
}

int sr_int_fits(int64_t v, SrDtype d) {
  int bits = sr_dtype_info(d)->bits;
  if (sr_dtype_kind(d) == SR_DK_UINT) return v >= 0 && (bits >= 64 || (uint64_t)v < (uint64_t)1 << bits);
  if (sr_dtype_kind(d) == SR_DK_INT) return bits >= 64 || (v >= -((int64_t)1 << (bits - 1)) && v < (int64_t)1 << (bits - 1));
  return 1;
}

int sr_check_py_int(SrInterp *I, const SrVal *v) {
  SrDtype d = I->jax->enable_x64 ? SR_I64 : SR_I32;
  if (v->kind != SR_V_INT || sr_int_fits(v->i, d)) return 0;
  sr_raise(I, "OverflowError", "Python int %lld too large to convert to %s", (long long)v->i, sr_dtype_name(d));
  return -1;
}

SrVal *sr_pytree_array_leaves(SrInterp *I, SrVal *v) {
  SrVal *l = sr_pytree_flatten(I, v);
  for (int i = 0; l && i < l->seq.n; i++)
    if (!sr_array_of(l->seq.items[i])) {
      SrVal *arr = sr_jnp_asarray(I, l->seq.items[i], -1);
      if (!arr) {
        sr_unref(l);
        return NULL;
      }
      sr_unref(l->seq.items[i]);
      l->seq.items[i] = arr;
    }
  return l;
}

const char *sr_callable_name(SrVal *f) {
  SrFunction *uf = sr_as_function(f);
  if (uf) return uf->name;
  const char *n = sr_builtin_name(f);
  if (n && strrchr(n, '.')) n = strrchr(n, '.') + 1;
  return sr_intern_cstr(n ? n : "<unnamed function>");
}

SrVal *sr_pytree_unflatten(SrVal *like, SrVal *leaves) {
  int it = 0;
  return unflatten(like, leaves, &it);
}

/* Traces fn on the types of args: a jaxpr of the flattened arguments and
   results.  *out_tree gets the result's structure (with the leaves of the
   first trace's outputs, for rebuilding), *captured the outer values the
   jaxpr's leading inputs stand for. */
SrJaxpr *sr_trace_fn(SrInterp *I, SrVal *fn, int nargs, SrVal **args, int nkw, const char **kw,
                     SrVal **kwv, SrVal **out_tree, SrVal **captured) {
  SrTrace *t = sr_trace_begin(I);
  SrVal **targs = sr_xcalloc((size_t)nargs + 1, sizeof *targs);
  int ok = 1;
  for (int i = 0; i < nargs && ok; i++) {
    SrVal *leaves = sr_pytree_flatten(I, args[i]);
    if (!leaves) {
      ok = 0;
      break;
    }
    /* api_util.py: _make_abstract_python_scalar refuses an int the
       default int dtype cannot hold */
    for (int k = 0; k < leaves->seq.n && ok; k++) ok = sr_check_py_int(I, leaves->seq.items[k]) == 0;
    if (!ok) {
      sr_unref(leaves);
      break;
    }
    SrVal *tl = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
    for (int k = 0; k < leaves->seq.n; k++)
      sr_seq_push(NULL, tl, sr_trace_arg(I, t, sr_value_type(I, leaves->seq.items[k])));
    targs[i] = sr_pytree_unflatten(args[i], tl);
    sr_unref(tl);
    sr_unref(leaves);
  }
  SrVal *res = NULL;
  if (ok) {
    SrArgs ca = {nargs, targs, nkw, kw, kwv, NULL};
    res = sr_trace_call(I, fn, &ca);
  }
  for (int i = 0; i < nargs; i++) sr_unref(targs[i]);
  free(targs);
  if (!res) {
    sr_trace_abort(I, t);
    return NULL;
  }
  SrVal *outs = sr_pytree_flatten(I, res);
  if (!outs) {
    sr_unref(res);
    sr_trace_abort(I, t);
    return NULL;
  }
  SrJaxpr *j = sr_trace_end(I, t, outs->seq.items, outs->seq.n, captured);
  if (!j) {
    sr_unref(res);
    sr_unref(outs);
    return NULL;
  }
  j->name = sr_builtin_name(fn) ? sr_arena_strndup(j->prog->arena, sr_builtin_name(fn), strlen(sr_builtin_name(fn))) : NULL;
  if (out_tree) *out_tree = res;
  else sr_unref(res);
  sr_unref(outs);
  return j;
}

int sr_custom_call_trace(SrInterp *I, SrVal *fun, const char *name, SrArgs *a, SrCustomCall *cc) {
  memset(cc, 0, sizeof *cc);
  cc->args = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, cc->args, sr_ref(a->v[i]));
  cc->leaves = sr_pytree_array_leaves(I, cc->args);
  cc->body = cc->leaves ? sr_trace_fn(I, fun, a->n, a->v, 0, NULL, NULL, &cc->out_tree, &cc->captured) : NULL;
  if (!cc->body) {
    sr_unref(cc->args);
    sr_unref(cc->leaves);
    return -1;
  }
  cc->body->name = name;
  return 0;
}

SrVal *sr_custom_call_bind(SrInterp *I, int prim, SrCustomCall *cc, SrPList *ps) {
  SrVal *ins = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < cc->captured->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(cc->captured->seq.items[i]));
  for (int i = 0; i < cc->leaves->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(cc->leaves->seq.items[i]));
  SrVal *r = sr_bind(I, prim, ins->seq.n, ins->seq.items, ps->n, ps->p);
  sr_plist_free(ps);
  sr_program_unref(cc->body->prog);
  SrVal *res = r ? sr_pytree_unflatten(cc->out_tree, r) : NULL;
  sr_unref(r);
  sr_unref(ins);
  sr_unref(cc->captured);
  sr_unref(cc->out_tree);
  sr_unref(cc->leaves);
  sr_unref(cc->args);
  return res;
}

/* jax.make_jaxpr(f)(*args) */
static SrVal *make_jaxpr_call(SrInterp *I, SrArgs *a) {
  SrBuiltin *b = sr_current_builtin(I);
  SrVal *fn = b->data;
  SrJaxpr *j = sr_trace_fn(I, fn, a->n, a->v, a->nkw, a->kw, a->kwv, NULL, NULL);
  if (!j) return NULL;
  SrVal *r = sr_jaxpr_val(NULL, j);
  sr_program_unref(j->prog); /* the value holds it now */
  return r;
}

static SrVal *jax_make_jaxpr(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "make_jaxpr", "fun, static_argnums=", p) < 0) return NULL;
  if (!sr_is_callable(p[0])) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(p[0]));
  return sr_builtin_with("make_jaxpr(fun)", make_jaxpr_call, sr_ref(p[0]), (void (*)(void *))sr_unref);
}

/* ---- jax.jit ---- */

typedef struct Jit {
  SrVal *fn;
  const char *name;
  SrVal *in_sh, *out_sh; /* in_shardings= and out_shardings=, or NULL */
} Jit;

static void jit_free(void *d) {
  Jit *j = d;
  sr_unref(j->fn);
  sr_unref(j->in_sh);
  sr_unref(j->out_sh);
  free(j);
}

static void jit_repr(SrBuf *out, const SrVal *v) {
  const Jit *j = v->obj.data;
  sr_buf_printf(out, "<PjitFunction of <function %s>>", j->name);
}

/* The params of a jit equation, in JAX's order (pjit.py: _pjit_call);
   formats: in_shardings, out_shardings, in_layouts, out_layouts (stolen),
   or NULL when jit was given none. */
static void jit_params(SrInterp *I, SrPList *ps, SrJaxpr *body, const char *name, SrVal **formats) {
  uint32_t n = body->nin, m = body->nout;
  SrVal *unspec_in = sr_seq(NULL, SR_V_TUPLE, (int)n), *unspec_out = sr_seq(NULL, SR_V_TUPLE, (int)m);
  SrVal *donated = sr_seq(NULL, SR_V_TUPLE, (int)n);
  for (uint32_t i = 0; i < n; i++) {
    sr_seq_push(NULL, unspec_in, sr_word(NULL, "UnspecifiedValue", 16));
    sr_seq_push(NULL, donated, sr_bool(0));
  }
  for (uint32_t i = 0; i < m; i++) sr_seq_push(NULL, unspec_out, sr_word(NULL, "UnspecifiedValue", 16));
  sr_plist_add(ps, "jaxpr", sr_jaxpr_val(NULL, body));
  if (formats) {
    sr_unref(unspec_in);
    sr_unref(unspec_out);
    sr_plist_add(ps, "in_shardings", formats[0]);
    sr_plist_add(ps, "out_shardings", formats[1]);
    sr_plist_add(ps, "in_layouts", formats[2]);
    sr_plist_add(ps, "out_layouts", formats[3]);
  } else {
    sr_plist_add(ps, "in_shardings", unspec_in);
    sr_plist_add(ps, "out_shardings", unspec_out);
    sr_plist_add(ps, "in_layouts", sr_none_tuple((int)n));
    sr_plist_add(ps, "out_layouts", sr_none_tuple((int)m));
  }
  sr_plist_add(ps, "donated_invars", donated);
  const SrMesh *mesh = I->jax->mesh;
  SrMesh empty = {0};
  sr_plist_add(ps, "ctx_mesh", sr_mesh_val(NULL, mesh ? mesh : sr_mesh_intern(&empty)));
  sr_plist_add(ps, "name", sr_str_cstr(NULL, name));
  sr_plist_add(ps, "keep_unused", sr_bool(0));
  sr_plist_add(ps, "inline", sr_bool(0));
  sr_plist_add(ps, "compiler_options_kvs", sr_seq(NULL, SR_V_TUPLE, 0));
}

/* Calls a jitted function: traces it, then binds a jit equation (which a
   trace records, and concrete arguments run). */
/* Traces fn on a's arguments and binds a call primitive on them: jit
   (params from jit_params) or remat2 (jax.checkpoint). */
static SrVal *call_traced(SrInterp *I, SrVal *fn, const char *name, SrArgs *a, int prim, int prevent_cse,
                          SrVal *in_sh, SrVal *out_sh);

SrVal *sr_jit_call(SrInterp *I, SrVal *fn, const char *name, SrArgs *a) {
  return call_traced(I, fn, name, a, SR_P_jit, 0, NULL, NULL);
}

SrVal *sr_jit_call_sharded(SrInterp *I, SrVal *fn, const char *name, SrArgs *a, SrVal *in_sh, SrVal *out_sh) {
  return call_traced(I, fn, name, a, SR_P_jit, 0, in_sh, out_sh);
}

static SrVal *bind_body(SrInterp *I, SrJaxpr *body, SrVal *out_tree, SrVal *captured, const char *name, SrArgs *a,
                        int prim, int prevent_cse, SrVal *in_sh, SrVal *out_sh);

static SrVal *call_traced(SrInterp *I, SrVal *fn, const char *name, SrArgs *a, int prim, int prevent_cse,
                          SrVal *in_sh, SrVal *out_sh) {
  if (in_sh && a->nkw) return sr_raise(I, "ValueError", "pjit does not support kwargs when in_shardings is specified.");
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *body = sr_trace_fn(I, fn, a->n, a->v, a->nkw, a->kw, a->kwv, &out_tree, &captured);
  if (!body) return NULL;
  return bind_body(I, body, out_tree, captured, name, a, prim, prevent_cse, in_sh, out_sh);
}

/* Binds the call primitive on a traced body: the captured values, then the
   arguments' leaves.  Takes body's program reference, out_tree and
   captured (NULL for none). */
static SrVal *bind_body(SrInterp *I, SrJaxpr *body, SrVal *out_tree, SrVal *captured, const char *name, SrArgs *a,
                        int prim, int prevent_cse, SrVal *in_sh, SrVal *out_sh) {
  if (!captured) captured = sr_seq(NULL, SR_V_LIST, 0);
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < captured->seq.n; i++) sr_seq_push(NULL, leaves, sr_ref(captured->seq.items[i]));
  for (int i = 0; i < a->n; i++) {
    SrVal *l = sr_pytree_flatten(I, a->v[i]);
    for (int k = 0; l && k < l->seq.n; k++) sr_seq_push(NULL, leaves, sr_ref(l->seq.items[k]));
    sr_unref(l);
  }
  SrPList ps = {0};
  SrVal *formats[4];
  if (prim == SR_P_jit && (in_sh || out_sh) &&
      sr_jit_formats(I, in_sh, out_sh, a->n, a->v, captured->seq.n, out_tree, formats) < 0) {
    sr_program_unref(body->prog);
    sr_unref(leaves);
    sr_unref(captured);
    sr_unref(out_tree);
    return NULL;
  }
  if (prim == SR_P_jit) {
    jit_params(I, &ps, body, name, in_sh || out_sh ? formats : NULL);
  } else {
    /* ad_checkpoint.py: remat_p.bind(*consts, *args, jaxpr=, prevent_cse=,
       differentiated=False, policy=) */
    sr_plist_add(&ps, "jaxpr", sr_jaxpr_val(NULL, body));
    sr_plist_add(&ps, "prevent_cse", sr_bool(prevent_cse));
    sr_plist_add(&ps, "differentiated", sr_bool(0));
    sr_plist_add(&ps, "policy", sr_none());
  }
  SrVal *r = sr_bind(I, prim, leaves->seq.n, leaves->seq.items, ps.n, ps.p);
  sr_plist_free(&ps);
  sr_program_unref(body->prog);
  sr_unref(leaves);
  sr_unref(captured);
  SrVal *res = NULL;
  if (r) {
    SrVal *outs = sr_pytree_flatten(I, out_tree);
    if (outs && outs->seq.n == r->seq.n) res = sr_pytree_unflatten(out_tree, r);
    else if (outs) res = sr_raise(I, "RuntimeError", "jit: the outputs do not match the traced structure");
    sr_unref(outs);
  }
  sr_unref(r);
  sr_unref(out_tree);
  return res;
}

/* ---- the traces of jitted functions ----
   JAX traces a jitted function once per signature (pjit's cache: the
   function, the structure and abstract values of its arguments, the
   context) and reuses the jaxpr: two calls in one trace bind one jaxpr
   object, which the printer hoists (`let inner_fn = { ... } in`), and the
   body's trace-time effects (a print) happen once.  Here a trace is kept
   for the rest of the statement; each entry holds its jitted function, so
   that no other function can match it at a reused address.  A trace that
   captured outer values is not kept: they are the trace's own. */

typedef struct JitEntry {
  SrVal *self;     /* the jitted function */
  char *sig;       /* what the trace depends on */
  SrJaxpr *body;   /* holds a ref to its program */
  SrVal *out_tree;
} JitEntry;

struct SrJitCache {
  JitEntry *e;
  int n, cap;
};

void sr_jit_cache_clear(SrInterp *I) {
  struct SrJitCache *c = I->jit_cache;
  if (!c) return;
  for (int i = 0; i < c->n; i++) {
    sr_unref(c->e[i].self);
    free(c->e[i].sig);
    sr_program_unref(c->e[i].body->prog);
    sr_unref(c->e[i].out_tree);
  }
  free(c->e);
  free(c);
  I->jit_cache = NULL;
}

/* The arguments' structure and interned types; -1 for a node that is not
   a list, tuple, dict, None or typed leaf.  The caller has checked the
   depth (sr_pytree_check_depth). */
static int arg_sig(SrInterp *I, SrVal *v, SrBuf *b) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    sr_buf_putc(b, v->kind == SR_V_LIST ? '[' : '(');
    for (int i = 0; i < v->seq.n; i++)
      if (arg_sig(I, v->seq.items[i], b) < 0) return -1;
    sr_buf_putc(b, ')');
    return 0;
  }
  if (v->kind == SR_V_DICT) {
    sr_buf_putc(b, '{');
    for (int i = 0; i < v->dict.n; i++) {
      sr_val_repr(b, v->dict.keys[i]);
      sr_buf_putc(b, ':');
      if (arg_sig(I, v->dict.vals[i], b) < 0) return -1;
    }
    sr_buf_putc(b, '}');
    return 0;
  }
  if (v->kind == SR_V_NONE) {
    sr_buf_putc(b, 'N');
    return 0;
  }
  const SrType *t = sr_is_obj(v, &sr_array_class) ? sr_value_type(I, v) : NULL;
  if (!t) return -1;
  sr_buf_printf(b, "%p,", (const void *)t);
  return 0;
}

static char *jit_sig(SrInterp *I, SrArgs *a) {
  if (a->nkw) return NULL;
  SrBuf b = SR_BUF_INIT;
  const SrJaxState *s = I->jax;
  sr_buf_printf(&b, "%p %p %d %d|", (const void *)s->mesh, (const void *)sr_jax_abstract_mesh(s), s->enable_x64,
                s->check_vma);
  for (int i = 0; i < a->n; i++)
    if (sr_pytree_check_depth(I, a->v[i]) < 0 || arg_sig(I, a->v[i], &b) < 0) {
      sr_buf_free(&b);
      return NULL;
    }
  return sr_buf_str(&b) == b.p ? b.p : NULL;
}

static SrVal *jit_call(SrInterp *I, SrVal *self, SrArgs *a) {
  Jit *j = self->obj.data;
  if (j->in_sh || j->out_sh) return call_traced(I, j->fn, j->name, a, SR_P_jit, 0, j->in_sh, j->out_sh);
  char *sig = jit_sig(I, a);
  if (!sig && I->exc) return NULL;
  struct SrJitCache *c = I->jit_cache;
  for (int i = 0; sig && c && i < c->n; i++)
    if (c->e[i].self == self && strcmp(c->e[i].sig, sig) == 0) {
      free(sig);
      sr_program_ref(c->e[i].body->prog);
      return bind_body(I, c->e[i].body, sr_ref(c->e[i].out_tree), NULL, j->name, a, SR_P_jit, 0, NULL, NULL);
    }
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *body = sr_trace_fn(I, j->fn, a->n, a->v, a->nkw, a->kw, a->kwv, &out_tree, &captured);
  if (!body) {
    free(sig);
    return NULL;
  }
  if (sig && captured->seq.n == 0) {
    /* the trace may have made the cache (a jitted call inside) */
    c = I->jit_cache;
    if (!c) c = I->jit_cache = sr_xcalloc(1, sizeof *c);
    if (c->n == c->cap) c->e = sr_xrealloc(c->e, (size_t)(c->cap = c->cap ? 2 * c->cap : 8) * sizeof *c->e);
    c->e[c->n++] = (JitEntry){sr_ref(self), sig, body, sr_ref(out_tree)};
    sr_program_ref(body->prog);
    sig = NULL;
  }
  free(sig);
  return bind_body(I, body, out_tree, captured, j->name, a, SR_P_jit, 0, NULL, NULL);
}

/* jax.jit(f).trace(*args): the Traced stage, whose .jaxpr is f's jaxpr
   (layout_api.c) */
static SrVal *jit_trace(SrInterp *I, SrArgs *a) {
  Jit *j = a->self->obj.data;
  return sr_jit_stage_trace(I, j->fn, j->name, j->in_sh, j->out_sh, a);
}

/* jax.jit(f).lower(*args) = .trace(*args).lower() */
static SrVal *jit_lower(SrInterp *I, SrArgs *a) {
  SrVal *t = jit_trace(I, a);
  SrVal *r = t ? sr_jit_stage_lower(I, t) : NULL;
  sr_unref(t);
  return r;
}

static SrVal *jit_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "trace") == 0) return sr_bound_method(self, "trace", jit_trace);
  if (strcmp(name, "lower") == 0) return sr_bound_method(self, "lower", jit_lower);
  if (strcmp(name, "__name__") == 0) return sr_str_cstr(NULL, ((Jit *)self->obj.data)->name);
  char q[128];
  snprintf(q, sizeof q, "jax.jit.method.%s", name);
  SrVal *m = sr_lookup_qualname(q);
  if (m) return sr_bound_method(self, name, ((SrBuiltin *)m->obj.data)->fn);
  return NULL;
}

static const SrLangOps jit_ops = {.call = jit_call, .getattr = jit_getattr};
const SrClass sr_jit_class = {"PjitFunction", jit_free, jit_repr, NULL, &jit_ops};

static SrVal *jax_jit(SrInterp *I, SrArgs *a) {
  if (a->n < 1) {
    /* @jax.jit(...) with options only: not supported yet */
    return sr_raise(I, "TypeError", "jit() missing required argument: 'fun'");
  }
  SrVal *fn = a->v[0];
  if (!sr_is_callable(fn)) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(fn));
  Jit *j = sr_xcalloc(1, sizeof *j);
  j->fn = sr_ref(fn);
  /* in_shardings= / out_shardings= (the other options change nothing here) */
  for (int k = 0; k < a->nkw; k++) {
    SrVal **slot = strcmp(a->kw[k], "in_shardings") == 0 ? &j->in_sh : strcmp(a->kw[k], "out_shardings") == 0 ? &j->out_sh : NULL;
    if (slot) {
      sr_unref(*slot);
      *slot = sr_ref(a->kwv[k]);
    }
  }
  const char *nm = sr_builtin_name(fn);
  /* a built-in's __name__ is its last component: jit(jnp.cos) is "cos" */
  if (nm && strrchr(nm, '.')) nm = strrchr(nm, '.') + 1;
  if (fn->kind == SR_V_JAXPR && fn->jx.jaxpr->name) nm = fn->jx.jaxpr->name;
  /* jit of a jitted function: functools.wraps passes the name on */
  if (sr_is_obj(fn, &sr_jit_class)) nm = ((Jit *)fn->obj.data)->name;
  j->name = sr_intern_cstr(nm ? nm : "<unnamed function>");
  return sr_obj(&sr_jit_class, j);
}

/* jax.checkpoint(fun, prevent_cse=True, policy=None) / jax.remat */
typedef struct Remat {
  SrVal *fn;
  int prevent_cse;
} Remat;

static void remat_free(void *d) {
  Remat *r = d;
  sr_unref(r->fn);
  free(r);
}

static SrVal *remat_call(SrInterp *I, SrArgs *a) {
  Remat *r = sr_current_builtin(I)->data;
  const char *nm = sr_builtin_name(r->fn);
  return call_traced(I, r->fn, nm ? nm : "<unnamed function>", a, SR_P_remat2, r->prevent_cse, NULL, NULL);
}

static SrVal *jax_checkpoint(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "checkpoint", "fun, *, prevent_cse=, policy=, static_argnums=", p) < 0) return NULL;
  if (!sr_is_callable(p[0])) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(p[0]));
  if (p[2] && p[2]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "jax.checkpoint: policies are not supported here");
  Remat *r = sr_xcalloc(1, sizeof *r);
  r->fn = sr_ref(p[0]);
  r->prevent_cse = p[1] ? sr_val_truthy(p[1]) : 1;
  return sr_builtin_with("checkpoint(fun)", remat_call, r, remat_free);
}

/* bool < int < float < complex: how far a weak type may be promoted */
static int dtype_kind(SrDtype d) {
  return d == SR_BOOL ? 0 : sr_dtype_is_int(d) ? 1 : sr_dtype_is_float(d) ? 2 : 3;
}

/* A jaxpr is a computation typed once and for all, like a compiled one:
   each argument must have its binder's shape and dtype (shardings aside,
   as in pxla.check_arg_avals_for_call, whose message this is), or an
   equation would run on the wrong shape or fail later in some rule's
   words.  A weak-typed value (a Python scalar) takes the binder's dtype
   where JAX's promotion would give it that dtype, as in a jitted
   function: 2 and 2.0 both pass for f32[].  args[i] is replaced by a new
   reference (converted or not); returns -1 with nothing replaced. */
static int check_jaxpr_args(SrInterp *I, const SrJaxpr *j, int n, SrVal **args) {
  SrBuf errs = SR_BUF_INIT;
  int nerr = 0;
  int *to = sr_xmalloc(((size_t)n + 1) * sizeof *to); /* a dtype to convert to, or -1 */
  for (int i = 0; i < n; i++) {
    const SrType *want = sr_args(j)[i]->type, *got = sr_value_type(I, args[i]);
    to[i] = -1;
    if (!got || !want) continue;
    int same = got->ndim == want->ndim;
    for (int d = 0; same && d < got->ndim; d++)
      same = got->dims[d].sym || want->dims[d].sym || got->dims[d].size == want->dims[d].size;
    if (same && got->dtype != want->dtype) {
      if (got->weak && dtype_kind(got->dtype) <= dtype_kind(want->dtype))
        to[i] = (int)want->dtype;
      else
        same = 0;
    }
    if (same) continue;
    if (++nerr > 5) continue;
    sr_buf_printf(&errs, "\nArgument %d/%d compiled with ", i + 1, n);
    sr_type_str(&errs, want, 0);
    sr_buf_puts(&errs, " and called with ");
    sr_type_str(&errs, got, 0);
  }
  if (nerr) {
    char lead[32];
    if (nerr >= 5)
      snprintf(lead, sizeof lead, "The first 5 of %d", nerr);
    else
      snprintf(lead, sizeof lead, "The");
    sr_raise(I, "TypeError",
             "Argument types differ from the types for which this computation was compiled. %s mismatches are:%s",
             lead, sr_buf_str(&errs));
    sr_buf_free(&errs);
    free(to);
    return -1;
  }
  sr_buf_free(&errs);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    SrVal *c = to[i] >= 0 ? sr_jnp_convert(I, args[i], (SrDtype)to[i], 0) : sr_ref(args[i]);
    if (!c) {
      for (int k = 0; k < i; k++) sr_unref(args[k]);
      rc = -1;
    } else {
      args[i] = c;
    }
  }
  free(to);
  return rc;
}

/* Calling a jaxpr value: its equations are bound one by one. */
static SrVal *call_jaxpr_value(SrInterp *I, SrVal *fn, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "a jaxpr takes positional arguments only");
  const SrJaxpr *j = fn->jx.jaxpr;
  if ((uint32_t)a->n != sr_nargs(j)) return sr_eval_jaxpr(I, j, a->n, a->v); /* which says so */
  SrVal **args = sr_xmalloc(((size_t)a->n + 1) * sizeof *args);
  memcpy(args, a->v, (size_t)a->n * sizeof *args);
  SrVal *r = NULL;
  if (check_jaxpr_args(I, j, a->n, args) == 0) {
    r = sr_eval_jaxpr(I, j, a->n, args);
    for (int i = 0; i < a->n; i++) sr_unref(args[i]);
  }
  free(args);
  if (r && r->seq.n == 1) {
    SrVal *x = sr_ref(r->seq.items[0]);
    sr_unref(r);
    return x;
  }
  return r;
}

void sr_ad_api_init(void); /* lib/jax/ad_api.c: jax.grad and the autodiff API */

void sr_jnp_init(void) {
  sr_ad_api_init();
  sr_def("jax.numpy.add", jnp_add, "add(x, y): elementwise x + y, with JAX's dtype promotion");
  sr_def("jax.numpy.subtract", jnp_subtract, "subtract(x, y)");
  sr_def("jax.numpy.multiply", jnp_multiply, "multiply(x, y)");
  sr_def("jax.numpy.true_divide jax.numpy.divide", jnp_true_divide, "divide(x, y)");
  sr_def("jax.numpy.power", jnp_power, "power(x, y): integer_pow for a Python int exponent");
  sr_def("jax.numpy.maximum", jnp_maximum, "maximum(x, y)");
  sr_def("jax.numpy.minimum", jnp_minimum, "minimum(x, y)");
  sr_def("jax.numpy.equal", jnp_equal, "equal(x, y)");
  sr_def("jax.numpy.not_equal", jnp_not_equal, "not_equal(x, y)");
  sr_def("jax.numpy.less", jnp_less, "less(x, y)");
  sr_def("jax.numpy.less_equal", jnp_less_equal, "less_equal(x, y)");
  sr_def("jax.numpy.greater", jnp_greater, "greater(x, y)");
  sr_def("jax.numpy.greater_equal", jnp_greater_equal, "greater_equal(x, y)");
  sr_def("jax.numpy.bitwise_and", jnp_bitwise_and, "bitwise_and(x, y)");
  sr_def("jax.numpy.bitwise_or", jnp_bitwise_or, "bitwise_or(x, y)");
  sr_def("jax.numpy.bitwise_xor", jnp_bitwise_xor, "bitwise_xor(x, y)");
  sr_def("jax.numpy.sin", jnp_sin, "sin(x)");
  sr_def("jax.numpy.cos", jnp_cos, "cos(x)");
  sr_def("jax.numpy.tan", jnp_tan, "tan(x)");
  sr_def("jax.numpy.tanh", jnp_tanh, "tanh(x)");
  sr_def("jax.numpy.exp", jnp_exp, "exp(x)");
  sr_def("jax.numpy.log", jnp_log, "log(x)");
  sr_def("jax.numpy.sqrt", jnp_sqrt, "sqrt(x)");
  sr_def("jax.numpy.negative", jnp_negative, "negative(x)");
  sr_def("jax.numpy.positive", jnp_positive, "positive(x)");
  sr_def("jax.numpy.abs jax.numpy.absolute", jnp_abs, "abs(x)");
  sr_def("jax.numpy.sign", jnp_sign, "sign(x)");
  sr_def("jax.numpy.invert", jnp_invert, "invert(x)");
  sr_def("jax.typeof", jax_typeof, "typeof(x): x's type with its sharding, as float32[8@X,4]");
  sr_def("jax.ShapeDtypeStruct", jax_shape_dtype_struct,
         "ShapeDtypeStruct(shape, dtype, sharding=None): an abstract array");
  sr_def("jax.make_jaxpr", jax_make_jaxpr, "make_jaxpr(f)(*args): the jaxpr of f traced on args' types");
  sr_def("jax.jit", jax_jit, "jit(f): f compiled; jit(f).trace(*args).jaxpr is its jaxpr");
  sr_def("jax.checkpoint jax.remat", jax_checkpoint,
         "checkpoint(f, prevent_cse=True): f whose residuals are recomputed in the backward pass (a remat2 equation)");
  sr_jnp_api_init();
  sr_lax_api_init();
}

SrJaxprCallFn sr_jaxpr_call_hook(void) { return call_jaxpr_value; }

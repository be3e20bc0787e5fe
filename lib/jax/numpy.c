/* numpy.c: jax.numpy.
 *
 * First the numpy-level layer of numpy.h (promotion, asarray, the
 * arguments of API calls) and the elementwise core, then the rest.  Each
 * function follows its namesake in jax/_src/numpy (lax_numpy.py,
 * reductions.py, tensor_contractions.py, einsum.py, indexing.py,
 * array_creation.py, ufuncs.py) closely enough that a trace records the
 * equations JAX records: the same promotions, the same skips, and the
 * same jit equations where JAX decorates a function with a plain
 * (non-inlined) jax.jit -- clip, round, where, isclose, allclose, cumsum
 * and linspace show up as jit[name=...] in a jaxpr, as they do in JAX.
 */
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/misc16.h"
#include "jax/nn.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/array_create.h"
#include "exec/array.h"
#include "jax/array_methods.h"
#include "jax/np_host.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "jax/tracers.h"
#include "jax/layout.h"
#include "check/rule.h"

/* ---- param helpers ---- */

SrVal *sr_none_tuple(int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_none());
  return t;
}

int sr_dtype_arg(SrInterp *I, SrVal *v, int *out, const char *what) { return sr_dtype_arg_fn(I, v, out, what, what); }

int sr_dtype_arg_fn(SrInterp *I, SrVal *v, int *out, const char *what, const char *fun_name) {
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
    if (c != *out && !I->jax->enable_x64 && I->jax->explicit_x64 == 2) return 0; /* ALLOW: as requested */
    if (c != *out && !I->jax->enable_x64 && I->jax->explicit_x64 == 1) {
      sr_raise(I, "ValueError",
               "Explicitly requested dtype %s%s%s is not available. To enable more dtypes, set the "
               "jax_enable_x64 or allow_explicit_x64_dtypes configuration options.See "
               "https://github.com/jax-ml/jax#current-gotchas for more.",
               sr_dtype_name((SrDtype)*out), *fun_name ? " requested in " : "", fun_name);
      return -1;
    }
    if (c != *out && !I->jax->enable_x64) {
      sr_warn(I, "UserWarning",
              "Explicitly requested dtype %s%s%s is not available, and will be truncated to dtype %s. "
              "To enable more dtypes, set the jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
              "environment variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
              sr_dtype_name((SrDtype)*out), *fun_name ? " requested in " : "", fun_name, sr_dtype_name((SrDtype)c));
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

/* core._invalid_shape_error: a shape with a tracer among its dims (or a
   tracer as the shape) */
static int shape_traced_error(SrInterp *I, SrVal *v) {
  int traced = sr_array_of(v) && sr_array_of(v)->kind != SR_AV_CONCRETE;
  for (int i = 0; sr_is_seq(v) && i < v->seq.n && !traced; i++)
    traced = sr_array_of(v->seq.items[i]) && sr_array_of(v->seq.items[i])->kind != SR_AV_CONCRETE;
  if (traced) {
    SrBuf b = SR_BUF_INIT;
    if (sr_is_seq(v)) sr_val_repr(&b, v);
    else {
      sr_buf_putc(&b, '(');
      sr_val_repr(&b, v);
      sr_buf_puts(&b, ",)");
    }
    /* and each traced dim's origin */
    SrBuf og = SR_BUF_INIT;
    if (sr_is_seq(v))
      for (int i = 0; i < v->seq.n; i++) sr_tracer_origin_msg(I, v->seq.items[i], &og);
    else
      sr_tracer_origin_msg(I, v, &og);
    sr_raise(I, "TypeError",
             "Shapes must be 1D sequences of concrete values of integer type, got %s.\nIf using `jit`, try using "
             "`static_argnums` or applying `jit` to smaller subfunctions.%s",
             sr_buf_str(&b), sr_buf_str(&og));
    sr_buf_free(&b);
    sr_buf_free(&og);
    return -1;
  }
  return 0;
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
  if (shape_traced_error(I, v) < 0) return -1;
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

int sr_ints_arg(SrInterp *I, SrVal *v, int64_t *out, int *n, const char *what) {
  SrVal *ints = sr_int_seq_arg(v);
  if (ints != v) {
    int rc = sr_ints_arg(I, ints, out, n, what);
    sr_unref(ints);
    return rc;
  }
  if (!v || v->kind == SR_V_NONE) {
    *n = 0;
    return 0;
  }
  const SrArrayObj *ao = sr_array_of(v);
  if ((sr_is_ndarray(v) && sr_ndarray_array(v)->type->ndim == 1) ||
      (ao && ao->kind == SR_AV_CONCRETE && ao->type->ndim == 1)) {
    /* a 1-D numpy or concrete jax array of ints reads as its list
       (np.array(in_shape), jnp.array(slice_sizes)) */
    SrVal *tl = sr_getattr(I, v, "tolist");
    SrArgs none = {0};
    SrVal *l = tl ? sr_call(I, tl, &none) : NULL;
    sr_unref(tl);
    int rc = l && sr_is_seq(l) ? sr_ints_arg(I, l, out, n, what) : -1;
    sr_unref(l);
    return rc;
  }
  if (!sr_is_seq(v)) {
    *n = 1;
    return sr_as_int(I, v, what, out);
  }
  if (v->seq.n > SR_MAX_RANK) return sr_raise(I, "ValueError", "%s: too many entries", what), -1;
  for (int i = 0; i < v->seq.n; i++)
    if (sr_as_int(I, v->seq.items[i], what, &out[i]) < 0) return -1;
  *n = v->seq.n;
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

/* JAX's type promotion lattice (dtypes._type_promotion_lattice): its
   nodes are the dtypes below SR_NBUILTIN_DTYPES (float0 left out) and the
   weak types of Python's int, float and complex; each node's upper bounds
   are a bit set, computed once per lattice (standard x64, standard x32,
   strict). */
enum { W_INT = SR_NBUILTIN_DTYPES, W_FLOAT, W_COMPLEX, NNODES };
typedef uint64_t NodeSet;
_Static_assert(NNODES <= 64, "the lattice's nodes fit a 64-bit set");
#define BIT(n) ((NodeSet)1 << (n))

/* the 8-, 6- and 4-bit floats */
static int small_float(int d) {
  return (d >= SR_F8_E4M3FN && d <= SR_F4_E2M1FN) || d == SR_F6_E2M3FN || d == SR_F6_E3M2FN;
}

static int lattice_node(int d) { return d >= 0 && d < NNODES && d != SR_FLOAT0; }

/* the nodes right above node n */
static NodeSet lattice_edges(int strict, int x64, int n) {
  NodeSet all_ints = 0, all_floats = 0;
  for (int d = 0; d < SR_NBUILTIN_DTYPES; d++) {
    int k = sr_dtype_kind((SrDtype)d);
    if (k == SR_DK_INT || k == SR_DK_UINT) all_ints |= BIT(d);
    if (k == SR_DK_FLOAT) all_floats |= BIT(d);
  }
  if (strict) {
    if (n == W_INT) return BIT(W_FLOAT) | all_ints;
    if (n == W_FLOAT) return BIT(W_COMPLEX) | all_floats;
    if (n == W_COMPLEX) return BIT(SR_C64) | BIT(SR_C128);
    return 0;
  }
  switch (n) {
  case SR_BOOL: return BIT(W_INT);
  case W_INT: return BIT(SR_U8) | BIT(SR_U2) | BIT(SR_U4) | BIT(SR_I8) | BIT(SR_I2) | BIT(SR_I4);
  case SR_U8: return BIT(SR_I16) | BIT(SR_U16);
  case SR_U16: return BIT(SR_I32) | BIT(SR_U32);
  /* without x64 no promotion forms a 64-bit type from narrower ones:
     uint32 with int32 is int32 */
  case SR_U32: return (x64 ? BIT(SR_I64) : BIT(SR_I32)) | BIT(SR_U64);
  case SR_U64: return BIT(W_FLOAT);
  case SR_I8: return BIT(SR_I16);
  case SR_I16: return BIT(SR_I32);
  case SR_I32: return BIT(SR_I64);
  case SR_I64: return BIT(W_FLOAT);
  case W_FLOAT: {
    NodeSet r = BIT(SR_BF16) | BIT(SR_F16) | BIT(W_COMPLEX);
    for (int d = 0; d < SR_NBUILTIN_DTYPES; d++)
      if (small_float(d)) r |= BIT(d);
    return r;
  }
  case SR_BF16: case SR_F16: return BIT(SR_F32);
  case SR_F32: return BIT(SR_F64) | BIT(SR_C64);
  case SR_F64: return BIT(SR_C128);
  case W_COMPLEX: return BIT(SR_C64);
  case SR_C64: return BIT(SR_C128);
  default: return 0;
  }
}

/* dtypes._make_lattice_upper_bounds: each node's upper bounds, itself
   included (the transitive closure of the edges) */
static const NodeSet *lattice_upper_bounds(int strict, int x64) {
  static NodeSet ub[3][NNODES];
  static int done[3];
  int which = strict ? 2 : x64;
  if (!done[which]) {
    for (int n = 0; n < NNODES; n++) {
      if (!lattice_node(n)) continue;
      NodeSet s = BIT(n), prev = 0;
      while (s != prev) {
        prev = s;
        for (int m = 0; m < NNODES; m++)
          if (s & BIT(m)) s |= lattice_edges(strict, x64, m);
      }
      ub[which][n] = s;
    }
    done[which] = 1;
  }
  return ub[which];
}

static void node_str(SrBuf *b, int n) {
  if (n == W_INT) sr_buf_puts(b, "<class 'int'>");
  else if (n == W_FLOAT) sr_buf_puts(b, "<class 'float'>");
  else if (n == W_COMPLEX) sr_buf_puts(b, "<class 'complex'>");
  else sr_buf_puts(b, sr_dtype_info((SrDtype)n)->name);
}

/* dtypes._least_upper_bound of nodes[0..n): the node, or -1 with
   TypePromotionError in JAX's words */
static int least_upper_bound(SrInterp *I, int n, const int *nodes) {
  int strict = I->jax->strict_promotion;
  const NodeSet *ub = lattice_upper_bounds(strict, I->jax->enable_x64);
  NodeSet N = 0, cub = ~(NodeSet)0;
  for (int i = 0; i < n; i++) {
    N |= BIT(nodes[i]);
    cub &= ub[nodes[i]];
  }
  NodeSet lub = cub & N;
  if (!lub)
    for (int c = 0; c < NNODES; c++)
      if ((cub & BIT(c)) && (cub & ~ub[c]) == 0) lub |= BIT(c);
  if (lub && !(lub & (lub - 1))) return __builtin_ctzll(lub);
  SrBuf names = SR_BUF_INIT;
  int f8 = 0, f6 = 0, f4 = 0, intn = 0;
  sr_buf_putc(&names, '(');
  for (int i = 0; i < n; i++) {
    /* the repr of a tuple of str(node): "<class 'int'>" in double quotes */
    char q = nodes[i] >= W_INT ? '"' : '\'';
    if (i) sr_buf_puts(&names, ", ");
    sr_buf_putc(&names, q);
    node_str(&names, nodes[i]);
    sr_buf_putc(&names, q);
    if (nodes[i] < SR_NBUILTIN_DTYPES) {
      int bits = sr_dtype_info((SrDtype)nodes[i])->bits;
      if (small_float(nodes[i])) {
        f8 |= bits == 8;
        f6 |= bits == 6;
        f4 |= bits == 4;
      }
      int k = sr_dtype_kind((SrDtype)nodes[i]);
      intn |= (k == SR_DK_INT || k == SR_DK_UINT) && bits < 8;
    }
  }
  sr_buf_puts(&names, n == 1 ? ",)" : ")");
  const char *nm = sr_buf_str(&names);
  if (lub)
    sr_raise(I, "TypePromotionError",
             "Internal Type Promotion error: %s do not have a unique least upper bound on the specified lattice. This "
             "is an unexpected error in JAX's internal logic; please report it to the JAX maintainers.",
             nm);
  else if (strict)
    sr_raise(I, "TypePromotionError",
             "Input dtypes %s have no available implicit dtype promotion path when jax_numpy_dtype_promotion=strict. "
             "Try explicitly casting inputs to the desired output type, or set jax_numpy_dtype_promotion=standard.",
             nm);
  else if (f8 || f6 || f4)
    sr_raise(I, "TypePromotionError",
             "Input dtypes %s have no available implicit dtype promotion path. To avoid unintended promotion, %d-bit "
             "floats do not support implicit promotion. If you'd like your inputs to be promoted to another type, you "
             "can do so explicitly using e.g. x.astype('float32')",
             nm, f8 ? 8 : f6 ? 6 : 4);
  else if (intn)
    sr_raise(I, "TypePromotionError",
             "Input dtypes %s have no available implicit dtype promotion path. To avoid unintended promotion, 1-bit, "
             "2-bit and 4-bit integers do not support implicit promotion. If you'd like your inputs to be promoted to "
             "another type, you can do so explicitly using e.g. x.astype('int32')",
             nm);
  else
    sr_raise(I, "TypePromotionError",
             "Input dtypes %s have no available implicit dtype promotion path. Try explicitly casting inputs to the "
             "desired output type.",
             nm);
  sr_buf_free(&names);
  return -1;
}

/* dtypes._jax_type: a weak dtype's node is Python's type of its kind
   (bool stays bool) */
static int jax_node(SrDtype d, int weak) {
  if (!weak || d == SR_BOOL) return (int)d;
  switch (sr_dtype_kind(d)) {
  case SR_DK_INT: case SR_DK_UINT: return W_INT;
  case SR_DK_FLOAT: return W_FLOAT;
  case SR_DK_COMPLEX: return W_COMPLEX;
  default: return (int)d;
  }
}

static SrDtype node_dtype(SrInterp *I, int node) {
  return node == W_INT ? default_of_kind(I, 2) : node == W_FLOAT ? default_of_kind(I, 3)
       : node == W_COMPLEX ? default_of_kind(I, 4) : (SrDtype)node;
}

int sr_jnp_lattice_result(SrInterp *I, int n, const SrDtype *dts, const int *weaks, SrDtype *out, int *weak) {
  int same = 1, all_weak = 1, valid = 1;
  for (int i = 0; i < n; i++) {
    same &= dts[i] == dts[0];
    all_weak &= weaks[i] != 0;
    valid &= lattice_node((int)dts[i]);
  }
  if (n == 1 || (same && !all_weak)) {
    *out = dts[0];
    *weak = n == 1 ? weaks[0] : 0;
  } else {
    if (!valid) {
      for (int i = 0; i < n; i++)
        if (!lattice_node((int)dts[i]))
          return sr_raise(I, "ValueError", "dtype=%s is not a valid dtype for JAX type promotion.",
                          sr_dtype_info(dts[i])->name), -1;
    }
    /* all weak (standard): the bound of their strong dtypes, weak */
    int strong_bound = all_weak && !I->jax->strict_promotion;
    int nodes[64], nn = 0;
    for (int i = 0; i < n; i++) {
      int node = jax_node(dts[i], strong_bound ? 0 : weaks[i]);
      int seen = 0;
      for (int k = 0; k < nn; k++) seen |= nodes[k] == node;
      if (!seen && nn < 64) nodes[nn++] = node;
    }
    int r = least_upper_bound(I, nn, nodes);
    if (r < 0) return -1;
    *out = node_dtype(I, r);
    *weak = strong_bound || r >= W_INT;
  }
  if (*out == SR_BOOL) *weak = 0;
  return 0;
}

int sr_jnp_result_dtype_checked(SrInterp *I, int n, SrVal **args, SrDtype *out, int *weak) {
  SrDtype dts[64];
  int weaks[64], m = 0;
  for (int i = 0; i < n && m < 64; i++) {
    const SrType *t = sr_value_type(I, args[i]);
    if (!t) continue;
    dts[m] = t->dtype;
    weaks[m++] = t->weak;
  }
  if (m == 0) {
    *out = SR_BOOL;
    *weak = 1;
    return 0;
  }
  return sr_jnp_lattice_result(I, m, dts, weaks, out, weak);
}

/* the old join, for operands off the lattice (PRNG keys) */
static SrDtype result_dtype_fallback(SrInterp *I, int n, SrVal **args, int *weak) {
  int have_strong = 0, weak_rank = -1, u64_signed = 0;
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
      if (have_strong && ((strong == SR_U64 && sr_dtype_kind(t->dtype) == SR_DK_INT) ||
                          (t->dtype == SR_U64 && sr_dtype_kind(strong) == SR_DK_INT)))
        u64_signed = 1;
      strong = have_strong ? promote2(strong, t->dtype) : t->dtype;
      have_strong = 1;
    }
  }
  /* the lattice joins uint64 and a signed int at f*, a weak float (JAX's
     type promotion table), unless a float or complex operand is above */
  if (u64_signed && kind_rank(strong) <= kind_rank(SR_I64)) {
    if (weak_rank < kind_rank(SR_F32)) weak_rank = kind_rank(SR_F32);
    strong = SR_BOOL;
  }
  if (!have_strong) {
    *weak = 1;
    return weakd;
  }
  *weak = 0;
  /* JAX's lattice puts a weak int below every integer type, unsigned ones
     included: uint32 array + 1 is uint32 */
  if (weak_rank == kind_rank(SR_I32) && kind_rank(strong) == kind_rank(SR_U32)) return strong;
  /* a weak operand of a higher kind wins, weak: int32 array * 1.5 is f*,
     float32 with weak_type=True (docs/type_promotion.rst, row i4, column
     f*) */
  if (weak_rank > kind_rank(strong)) {
    /* but a float reaches c* through its own complex type (the lattice's
       f32 -> c64, f64 -> c128): float32 array * 1j is complex64, strong */
    if (weak_rank == kind_rank(SR_C64) && kind_rank(strong) == kind_rank(SR_F32))
      return strong == SR_F64 ? SR_C128 : SR_C64;
    *weak = 1;
    return default_of_kind(I, weak_rank);
  }
  return strong;
}

/* the result dtype of the operands' promotion (dtypes.result_type's
   lattice_result_type), where a failure is no error: off the lattice,
   the old join */
int sr_jnp_promote_types(SrInterp *I, int a, int b, SrDtype *out) {
  int nodes[2];
  int ab[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    nodes[i] = ab[i] == SR_JNP_WEAK_INT ? W_INT : ab[i] == SR_JNP_WEAK_FLOAT ? W_FLOAT
             : ab[i] == SR_JNP_WEAK_COMPLEX ? W_COMPLEX : ab[i];
    if (!lattice_node(nodes[i]))
      return sr_raise(I, "ValueError", "dtype=%s is not a valid dtype for JAX type promotion.",
                      sr_dtype_info((SrDtype)ab[i])->name), -1;
  }
  int r = least_upper_bound(I, nodes[0] == nodes[1] ? 1 : 2, nodes);
  if (r < 0) return -1;
  /* np.dtype of Python's type: 64 bits, whatever jax_enable_x64 */
  *out = r == W_INT ? SR_I64 : r == W_FLOAT ? SR_F64 : r == W_COMPLEX ? SR_C128 : (SrDtype)r;
  return 0;
}

SrDtype sr_jnp_result_dtype(SrInterp *I, int n, SrVal **args, int *weak) {
  SrDtype d;
  SrVal *saved = I->exc;
  if (!saved && sr_jnp_result_dtype_checked(I, n, args, &d, weak) == 0) return d;
  if (!saved) sr_exc_clear(I);
  return result_dtype_fallback(I, n, args, weak);
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
  return sr_lax_broadcast_in_dim(I, x, bshape, nd, dims, t->ndim, NULL);
}

/* promote_args; with shapes set, as a ufunc's: lax.broadcast_shapes'
   ValueError where ranks are promoted (util.promote_shapes) */
static int promote_args(SrInterp *I, int n, SrVal **args, const char *fname, int shapes);

int sr_jnp_promote(SrInterp *I, int n, SrVal **args, const char *fname) {
  return promote_args(I, n, args, fname, 0);
}

static int promote_args(SrInterp *I, int n, SrVal **args, const char *fname, int shapes) {
  for (int i = 0; i < n; i++) {
    SrVal *a = sr_jnp_asarray(I, args[i], -1);
    if (!a) {
      for (int k = 0; k < i; k++) sr_unref(args[k]);
      return -1;
    }
    args[i] = a;
  }
  /* util.promote_args: check_no_float0s before any promotion */
  for (int i = 0; i < n; i++) {
    const SrType *t = sr_value_type(I, args[i]);
    if (t && t->dtype == SR_FLOAT0) {
      for (int k = 0; k < n; k++) sr_unref(args[k]);
      sr_raise(I, "TypeError",
               "Called %s with a float0 array. float0s do not support any operations by design because they are "
               "not compatible with non-trivial vector spaces. No implicit dtype conversion is done. You can use "
               "np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular zeros array. \n"
               "If you didn't expect to get a float0 you might have accidentally taken a gradient with respect "
               "to an integer argument.",
               fname ? fname : "a jax.numpy function");
      return -1;
    }
  }
  /* util.check_for_prngkeys: keys among operands of other dtypes */
  int mixed = 0, key = 0;
  for (int i = 0; i < n; i++) {
    const SrType *t = sr_value_type(I, args[i]), *t0 = sr_value_type(I, args[0]);
    if (t && t0 && t->dtype != t0->dtype) mixed = 1;
    if (t && strncmp(sr_dtype_name(t->dtype), "key<", 4) == 0) key = 1;
  }
  if (mixed && key) {
    SrBuf b = SR_BUF_INIT;
    for (int i = 0; i < n; i++) {
      const SrType *t = sr_value_type(I, args[i]);
      sr_buf_printf(&b, i ? ", %s" : "%s", t ? sr_dtype_name(t->dtype) : "?");
    }
    for (int k = 0; k < n; k++) sr_unref(args[k]);
    sr_raise(I, "TypeError", "%s does not accept dtypes %s.", fname ? fname : "a jax.numpy function", b.p);
    sr_buf_free(&b);
    return -1;
  }
  int weak;
  SrDtype dt;
  if (sr_jnp_result_dtype_checked(I, n, args, &dt, &weak) < 0) {
    for (int k = 0; k < n; k++) sr_unref(args[k]);
    return -1;
  }
  int nd = 0;
  for (int i = 0; i < n; i++) {
    const SrType *t = sr_value_type(I, args[i]);
    if (t && t->ndim > nd) nd = t->ndim;
  }
  /* util.promote_shapes: ranks that differ among the non-scalars follow
     jax_numpy_rank_promotion (_rank_promotion_warning_or_error) */
  int differ = 0;
  if (n >= 2) {
    int r0 = -1;
    for (int i = 0; i < n; i++) {
      const SrType *t = sr_value_type(I, args[i]);
      if (!t || t->ndim == 0) continue;
      if (r0 >= 0 && t->ndim != r0) differ = 1;
      r0 = t->ndim;
    }
  }
  if (I->jax->rank_promotion && n >= 2) {
    if (differ) {
      SrBuf b = SR_BUF_INIT;
      for (int i = 0; i < n; i++) {
        const SrType *t = sr_value_type(I, args[i]);
        if (i) sr_buf_putc(&b, ' ');
        if (t) sr_shape_str(&b, t);
      }
      const char *fn = fname ? fname : "a jax.numpy function";
      if (I->jax->rank_promotion == 1) {
        sr_warn(I, "UserWarning",
                "Following NumPy automatic rank promotion for %s on shapes %s. Set the jax_numpy_rank_promotion config "
                "option to 'allow' to disable this warning; for more information, see "
                "https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
                fn, sr_buf_str(&b));
      } else {
        sr_raise(I, "ValueError",
                 "Operands could not be broadcast together for %s on shapes %s and with the config option "
                 "jax_numpy_rank_promotion='raise'. For more information, see "
                 "https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
                 fn, sr_buf_str(&b));
        sr_buf_free(&b);
        for (int k = 0; k < n; k++) sr_unref(args[k]);
        return -1;
      }
      sr_buf_free(&b);
    }
  }
  /* promote_shapes' lax.broadcast_shapes where ranks are promoted: its
     ValueError for trailing dimensions that differ, neither 1 */
  for (int i = 0; shapes && differ && i < n; i++)
    for (int j = i + 1; j < n; j++) {
      const SrType *u = sr_value_type(I, args[i]), *w = sr_value_type(I, args[j]);
      int bad = 0;
      for (int k = 1; u && w && k <= u->ndim && k <= w->ndim; k++) {
        int64_t x = u->dims[u->ndim - k].size, y = w->dims[w->ndim - k].size;
        bad |= x != y && x != 1 && y != 1;
      }
      if (!bad) continue;
      SrBuf b = SR_BUF_INIT;
      for (int q = 0; q < n; q++) {
        const SrType *t = sr_value_type(I, args[q]);
        if (q) sr_buf_puts(&b, ", ");
        if (t) sr_shape_str(&b, t);
        else sr_buf_puts(&b, "()");
      }
      sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=[%s]", sr_buf_str(&b));
      sr_buf_free(&b);
      for (int k = 0; k < n; k++) sr_unref(args[k]);
      return -1;
    }
  /* promote_args: every dtype first (promote_dtypes), then the ranks
     (promote_shapes) */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++) {
      SrVal *r = pass == 0 ? sr_jnp_convert(I, args[i], dt, weak) : to_rank(I, args[i], nd, NULL);
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
    for (int i = 0; i < v->seq.n; i++) {
      int64_t n0 = f->n;
      if (flat_add(I, f, v->seq.items[i], depth + 1) < 0) return -1;
      /* the same item again ([[]] * 2**20): one that added no numbers
         adds none the next time and passes the same shape checks, so the
         run of it is skipped, as walking 2**40 empty lists would never end */
      if (f->n == n0)
        while (i + 1 < v->seq.n && v->seq.items[i + 1] == v->seq.items[i]) i++;
      if (sr_interrupt_point(I)) return sr_raise(I, "KeyboardInterrupt", "interrupted"), -1;
    }
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
    /* an object with __jax_array__ holds the array it gives */
    SrVal *x = !a && v->kind == SR_V_OBJ && sr_as_array_hook ? sr_as_array_hook(I, v) : NULL;
    if (x) {
      int rc = flat_add(I, f, x, depth);
      sr_unref(x);
      return rc;
    }
    if (v->kind == SR_V_NONE) return sr_raise(I, "ValueError", "None is not a valid value for jnp.array"), -1;
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
  /* numpy's ndarrays (jax/np_host.c) as JAX canonicalizes them */
  SrVal *h = NULL;
  /* with a dtype asked for, the ndarray's values as they are, then cast
     (jnp.int64(np.array(1 << 40)) under jax_explicit_x64_dtypes='allow') */
  if (dtype >= 0 && x->kind == SR_V_OBJ && sr_ndarray_array(x)) h = sr_ndarray_to_jax(I, x, 1);
  else if (x->kind == SR_V_OBJ && !sr_array_of(x) && sr_as_array_hook) h = sr_as_array_hook(I, x);
  if (h) {
    if (dtype < 0) return h;
    SrVal *c = sr_jnp_convert(I, h, (SrDtype)dtype, 0);
    sr_unref(h);
    return c;
  }
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
  if (sr_backend_hooks.from_host) {
    struct SrArray *arr = sr_backend_hooks.from_host(I, t, f.re, f.im, f.iv);
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

/* A binary ufunc is jit(func) (ufuncs.binary_ufunc): called eagerly on
   arrays committed to different devices, pjit's "Received incompatible
   devices" names its parameters x and y (not apply_primitive's args[i]).
   With a mesh in context the evaluator places values itself. */
static void ufunc_arg_devices(SrInterp *I, SrBuf *b, const char *param, const char *name, SrVal *v,
                              const struct SrArray *x) {
  SrTypeCtx tc;
  SrDiags d = SR_DIAGS_INIT;
  sr_type_ctx(I, &tc, &d);
  sr_buf_printf(b, "argument %s of %s with shape ", param, name);
  sr_aval_str_short(b, &tc, sr_value_type(I, v), 0, 0);
  sr_diags_clear(&d);
  sr_buf_puts(b, " and with device ids [");
  for (int p = 0; p < x->ndev; p++) sr_buf_printf(b, "%s%d", p ? ", " : "", x->mesh ? sr_mesh_device(x->mesh, p) : 0);
  sr_buf_puts(b, "] on platform CPU");
}

static int check_ufunc_devices(SrInterp *I, const char *name, SrVal *v0, SrVal *v1) {
  if (I->trace || I->jax->mesh) return 0;
  struct SrArray *x = sr_jit_leaf_array(v0), *y = sr_jit_leaf_array(v1);
  if (!x || !y || !x->committed || !y->committed) return 0;
  int same = x->ndev == y->ndev;
  for (int p = 0; same && p < x->ndev; p++)
    same = (x->mesh ? sr_mesh_device(x->mesh, p) : 0) == (y->mesh ? sr_mesh_device(y->mesh, p) : 0);
  if (same) return 0;
  SrBuf b = SR_BUF_INIT;
  ufunc_arg_devices(I, &b, "x", name, v0, x);
  sr_buf_puts(&b, " and ");
  ufunc_arg_devices(I, &b, "y", name, v1, y);
  sr_raise(I, "ValueError", "Received incompatible devices for jitted computation. Got %s", b.p);
  sr_buf_free(&b);
  return -1;
}

static SrVal *binary(SrInterp *I, SrArgs *a, int prim, const char *name) {
  if (a->n != 2) return sr_raise(I, "TypeError", "%s() takes 2 positional arguments but %d were given", name, a->n);
  /* check_arraylike: a list or tuple is no operand of a ufunc */
  for (int i = 0; i < 2; i++)
    if (a->v[i]->kind == SR_V_LIST || a->v[i]->kind == SR_V_TUPLE)
      return sr_raise(I, "TypeError", "%s requires ndarray or scalar arguments, got <class '%s'> at position %d.", name,
                      sr_val_kind_name(a->v[i]), i);
  if (check_ufunc_devices(I, name, a->v[0], a->v[1]) < 0) return NULL;
  SrVal *args[2] = {a->v[0], a->v[1]};
  if (promote_args(I, 2, args, name, 1) < 0) return NULL;
  /* ufuncs.py: add and multiply of bools are bitwise_or and bitwise_and */
  const SrType *pt = sr_value_type(I, args[0]);
  if (pt && pt->dtype == SR_BOOL && (prim == SR_P_add || prim == SR_P_mul)) prim = prim == SR_P_add ? SR_P_or : SR_P_and;
  SrVal *r;
  if (pt && sr_dtype_kind(pt->dtype) == SR_DK_COMPLEX &&
      (prim == SR_P_lt || prim == SR_P_le || prim == SR_P_gt || prim == SR_P_ge)) {
    /* _complex_comparison: select(eq(x.real, y.real), op(x.imag, y.imag), op(x.real, y.real)) */
    SrVal *rx = sr_lax_unary(I, SR_P_real, args[0]), *ry = rx ? sr_lax_unary(I, SR_P_real, args[1]) : NULL;
    SrVal *ix = ry ? sr_lax_unary(I, SR_P_imag, args[0]) : NULL, *iy = ix ? sr_lax_unary(I, SR_P_imag, args[1]) : NULL;
    SrVal *eq = iy ? sr_lax_binary(I, SR_P_eq, rx, ry) : NULL;
    SrVal *oi = eq ? sr_lax_binary(I, prim, ix, iy) : NULL, *orr = oi ? sr_lax_binary(I, prim, rx, ry) : NULL;
    SrVal *sel[3] = {eq, orr, oi};
    r = orr ? sr_bindv(I, SR_P_select_n, 3, sel, NULL) : NULL;
    SrVal *tmp[] = {rx, ry, ix, iy, eq, oi, orr};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) sr_unref(tmp[i]);
  } else {
    r = sr_lax_binary(I, prim, args[0], args[1]);
  }
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

static SrDtype to_inexact(SrInterp *I, SrDtype d);

/* true_divide: integers divide as floats */
static SrVal *jnp_true_divide(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "true_divide() takes 2 positional arguments");
  SrVal *args[2] = {a->v[0], a->v[1]};
  if (promote_args(I, 2, args, "true_divide", 1) < 0) return NULL;
  /* promote_args_inexact: the promoted dtype made inexact, weak if the
     promotion is */
  const SrType *t = sr_value_type(I, args[0]);
  if (!sr_dtype_is_inexact(t->dtype)) {
    SrDtype fd = to_inexact(I, t->dtype);
    int weak = t->weak;
    for (int i = 0; i < 2; i++) {
      SrVal *c = sr_jnp_convert(I, args[i], fd, weak);
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

/* ---- power (ufuncs.py: power, _power, _pow_int_int) ---- */

static SrVal *where_body(SrInterp *I, SrArgs *a);
static const SrType *vtype(SrInterp *I, SrVal *v);

/* _pow_int_int: binary exponentiation over the exponent's 6 low bits */
static SrVal *pow_int_int(SrInterp *I, SrVal *x1, SrVal *x2) {
  SrDtype dt = vtype(I, x2)->dtype;
  /* _constant_like(x2, c): jnp.array(c, dtype=x2.dtype) */
  SrVal *z = sr_int(NULL, 0), *o = sr_int(NULL, 1);
  SrVal *zero = sr_lax_convert(I, z, dt, 0, NULL), *one = sr_lax_convert(I, o, dt, 0, NULL);
  sr_unref(z);
  sr_unref(o);
  x1 = sr_ref(x1);
  x2 = sr_ref(x2);
  SrVal *acc = NULL;
  SrVal *e = sr_lax_binary(I, SR_P_eq, x1, zero), *n = e ? sr_lax_binary(I, SR_P_ne, x2, zero) : NULL;
  SrVal *c = n ? sr_lax_binary(I, SR_P_and, e, n) : NULL;
  if (c) {
    SrVal *w[3] = {c, zero, one};
    SrArgs wa = {3, w, 0, NULL, NULL, NULL};
    acc = where_body(I, &wa);
  }
  sr_unref(e);
  sr_unref(n);
  sr_unref(c);
  for (int k = 0; k < 6 && acc; k++) {
    SrVal *b = sr_lax_binary(I, SR_P_and, x2, one), *m = b ? sr_lax_binary(I, SR_P_mul, acc, x1) : NULL, *na = NULL;
    if (m) {
      SrVal *w[3] = {b, m, acc};
      SrArgs wa = {3, w, 0, NULL, NULL, NULL};
      na = where_body(I, &wa);
    }
    sr_unref(b);
    sr_unref(m);
    sr_unref(acc);
    acc = na;
    SrVal *x1n = acc ? sr_lax_binary(I, SR_P_mul, x1, x1) : NULL;
    SrVal *x2n = x1n ? sr_lax_binary(I, SR_P_shift_right_logical, x2, one) : NULL;
    sr_unref(x1);
    sr_unref(x2);
    x1 = x1n;
    x2 = x2n;
    if (!x2) {
      sr_unref(acc);
      acc = NULL;
    }
  }
  sr_unref(x1);
  sr_unref(x2);
  sr_unref(zero);
  sr_unref(one);
  return acc;
}

/* The exponent as an int when it is a concrete integer scalar
   (operator.index(x2) of a concrete value succeeds). */
static int concrete_index(SrInterp *I, SrVal *y, int64_t *out) {
  if (y->kind == SR_V_INT || y->kind == SR_V_BOOL) {
    *out = y->i;
    return 1;
  }
  SrArrayObj *a = sr_array_of(y);
  if (!a || a->type->ndim != 0) return 0;
  SrDtypeKind k = sr_dtype_kind(a->type->dtype);
  if (k != SR_DK_INT && k != SR_DK_UINT) return 0;
  /* a constant made under a trace (jnp.int32(3)) */
  if (a->kind == SR_AV_ABSTRACT && a->has_value) {
    *out = a->value.i;
    return 1;
  }
  if (a->kind != SR_AV_CONCRETE || !sr_backend_hooks.array_item) return 0;
  SrVal *item = sr_backend_hooks.array_item(I, a->data);
  int ok = item && item->kind == SR_V_INT;
  if (ok) *out = item->i;
  sr_unref(item);
  if (!item) sr_exc_clear(I);
  return ok;
}

/* jnp.power (x ** y and y.__rpow__(x)): a concrete integer scalar exponent
   is integer_pow; else (_power, inlined) integer operands go by binary
   exponentiation, an inexact base with an integer exponent is pow without
   promotion, and anything else pow after promotion. */
static SrVal *jnp_power(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "power() takes 2 positional arguments but %d were given", a->n);
  int64_t y;
  if (concrete_index(I, a->v[1], &y)) {
    /* promote_dtypes_numeric(x1): bool becomes the default int */
    SrVal *x = sr_jnp_asarray(I, a->v[0], -1);
    if (!x) return NULL;
    const SrType *t = vtype(I, x);
    if (t->dtype == SR_BOOL) {
      SrVal *c = sr_jnp_convert(I, x, default_of_kind(I, 1), t->weak);
      sr_unref(x);
      if (!(x = c)) return NULL;
    }
    SrVal *r = sr_bindv(I, SR_P_integer_pow, 1, &x, "y", sr_int(NULL, y), NULL);
    sr_unref(x);
    return r;
  }
  SrVal *orig[2];
  for (int i = 0; i < 2; i++) {
    orig[i] = sr_array_of(a->v[i]) ? sr_ref(a->v[i]) : sr_jnp_asarray(I, a->v[i], -1);
    if (!orig[i]) {
      if (i) sr_unref(orig[0]);
      return NULL;
    }
  }
  SrVal *args[2] = {orig[0], orig[1]};
  SrVal *r = NULL;
  if (sr_jnp_promote(I, 2, args, "power") == 0) {
    SrDtype d = vtype(I, args[0])->dtype;
    SrDtypeKind k2 = sr_dtype_kind(vtype(I, orig[1])->dtype);
    if (d == SR_BOOL) {
      /* promote_args_numeric: bool operands are the default int */
      for (int i = 0; i < 2; i++) {
        SrVal *c = sr_jnp_convert(I, args[i], default_of_kind(I, 1), vtype(I, args[i])->weak);
        sr_unref(args[i]);
        args[i] = c;
      }
      d = args[0] && args[1] ? vtype(I, args[0])->dtype : SR_BOOL;
    }
    if (!args[0] || !args[1]) {
      r = NULL;
    } else if (!sr_dtype_is_inexact(d)) {
      r = pow_int_int(I, args[0], args[1]);
    } else if (sr_dtype_is_inexact(vtype(I, orig[0])->dtype) && (k2 == SR_DK_INT || k2 == SR_DK_UINT)) {
      /* case 3: pow(x1, x2) on the shapes promoted (promote_shapes:
         leading dims), the dtypes not */
      int nd = vtype(I, args[0])->ndim > vtype(I, args[1])->ndim ? vtype(I, args[0])->ndim : vtype(I, args[1])->ndim;
      SrVal *b[2];
      for (int i = 0; i < 2; i++) b[i] = to_rank(I, orig[i], nd, NULL);
      r = b[0] && b[1] ? sr_lax_binary(I, SR_P_pow, b[0], b[1]) : NULL;
      sr_unref(b[0]);
      sr_unref(b[1]);
    } else {
      r = sr_lax_binary(I, SR_P_pow, args[0], args[1]);
    }
    sr_unref(args[0]);
    sr_unref(args[1]);
  }
  sr_unref(orig[0]);
  sr_unref(orig[1]);
  return r;
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
/* ufuncs.absolute: a bool or unsigned array is its own abs */
static SrVal *jnp_abs(SrInterp *I, SrArgs *a) {
  if (a->n == 1 && !a->nkw) {
    SrVal *x = sr_jnp_asarray(I, a->v[0], -1);
    if (!x) return NULL;
    SrDtype d = sr_value_type(I, x)->dtype;
    if (d == SR_BOOL || sr_dtype_kind(d) == SR_DK_UINT) return x;
    sr_unref(x);
  }
  return unary(I, a, SR_P_abs, "abs", 0);
}
UNARY(jnp_sign, SR_P_sign, "sign", 0)
UNARY(jnp_invert, SR_P_not, "invert", 0)

static SrVal *jnp_positive(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "positive() takes 1 positional argument");
  return sr_jnp_asarray(I, a->v[0], -1);
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

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }

static SrDtype default_float(SrInterp *I) { return I->jax->enable_x64 ? SR_F64 : SR_F32; }
static SrDtype default_int(SrInterp *I) { return I->jax->enable_x64 ? SR_I64 : SR_I32; }

/* dtypes.to_inexact_dtype */
/* dtypes.to_inexact_dtype: 64-bit integers to float64, the rest (bool
   and narrower integers) to float32 (numpy's on host arrays) */
static SrDtype to_inexact(SrInterp *I, SrDtype d) {
  if (sr_dtype_is_inexact(d)) return d;
  /* numpy's own functions on host arrays: integers to float64 */
  if (I->jax->host_numpy) return SR_F64;
  return d == SR_I64 || d == SR_U64 ? SR_F64 : SR_F32;
}


/* An int or a sequence of ints (None is not one: sr_as_int's error). */
static int ints_arg(SrInterp *I, SrVal *v, int64_t *out, int *n, const char *what) {
  if (v && v->kind == SR_V_NONE) {
    *n = 1;
    return sr_as_int(I, v, what, out);
  }
  return sr_ints_arg(I, v, out, n, what);
}

/* util.promote_dtypes (with no rank promotion): every arg converted to the
   result dtype; args hold new references afterwards. */
static int promote_dtypes(SrInterp *I, int n, SrVal **args, int kind /* 0 any, 1 inexact, 2 numeric */) {
  for (int i = 0; i < n; i++) {
    SrVal *a = arr(I, args[i]);
    if (!a) {
      for (int k = 0; k < i; k++) sr_unref(args[k]);
      return -1;
    }
    args[i] = a;
  }
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, n, args, &weak);
  if (kind == 1) dt = to_inexact(I, dt);
  if (kind == 2 && dt == SR_BOOL) dt = default_int(I);
  for (int i = 0; i < n; i++) {
    SrVal *c = sr_lax_convert(I, args[i], dt, weak, NULL);
    sr_unref(args[i]);
    args[i] = c;
    if (!c) {
      for (int k = 0; k < n; k++)
        if (k != i) sr_unref(args[k]);
      return -1;
    }
  }
  return 0;
}

static void unref_all(int n, SrVal **v) {
  for (int i = 0; i < n; i++) sr_unref(v[i]);
}

/* Calls a registered jax.numpy function. */
static SrVal *call_np(SrInterp *I, const char *name, int n, SrVal **args) {
  char q[96];
  snprintf(q, sizeof q, "jax.numpy.%s", name);
  SrVal *fn = sr_lookup_qualname(q);
  if (!fn) return sr_raise(I, "NotImplementedError", "%s is not available", q);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  return sr_call(I, fn, &a);
}

static SrVal *call_np2(SrInterp *I, const char *name, SrVal *x, SrVal *y) {
  SrVal *args[2] = {x, y};
  return call_np(I, name, 2, args);
}

/* ======================================================================
 * shapes: reshape, ravel, transpose, swapaxes, moveaxis, squeeze,
 * expand_dims, broadcast_to
 * ====================================================================== */

/* array_methods._compute_newshape: resolves one -1. */
static int new_shape(SrInterp *I, const SrType *t, SrVal *shape_v, int64_t *shape, int *nd) {
  if (ints_arg(I, shape_v, shape, nd, "shape") < 0) return -1;
  int64_t size = sr_type_numel(t), known = 1;
  int neg = -1;
  for (int i = 0; i < *nd; i++) {
    if (shape[i] == -1) {
      if (neg >= 0) {
        SrBuf b = SR_BUF_INIT;
        sr_val_repr(&b, shape_v);
        sr_raise(I, "TypeError", "can only specify one unknown axis size with a `-1` value, got %s", b.p);
        sr_buf_free(&b);
        return -1;
      }
      neg = i;
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      /* no array of that shape can exist, whatever this one's size */
      sr_raise(I, "ValueError", "%s", SR_TOO_BIG_MSG);
      return -1;
    }
  }
  SrBuf b = SR_BUF_INIT, s = SR_BUF_INIT;
  sr_shape_str(&s, t);
  sr_val_repr(&b, shape_v);
  int rc = 0;
  if (neg >= 0) {
    if (known == 0 || size % known) {
      sr_raise(I, "TypeError",
               "cannot reshape array of shape %s (size %lld) into shape %s because the product of specified axis "
               "sizes (%lld) does not evenly divide %lld",
               s.p, (long long)size, b.p, (long long)known, (long long)size);
      rc = -1;
    } else {
      shape[neg] = size / known;
    }
  } else if (known != size) {
    sr_raise(I, "TypeError", "cannot reshape array of shape %s (size %lld) into shape %s (size %lld)", s.p,
             (long long)size, b.p, (long long)known);
    rc = -1;
  }
  sr_buf_free(&b);
  sr_buf_free(&s);
  return rc;
}

/* array_methods._reshape: order 'C' is one reshape; 'F' reshapes the
   reversed axes to the reversed shape and reverses the result's axes
   (lax.reshape's dimensions= is a transpose first) */
static SrVal *do_reshape(SrInterp *I, SrVal *a, SrVal *shape_v, SrVal *order, SrVal *out_sharding) {
  int fortran = 0;
  if (order && order->kind != SR_V_NONE) {
    const char *o = sr_as_str(I, order, "order");
    if (!o) return NULL;
    if (strcmp(o, "A") == 0) return sr_raise(I, "NotImplementedError", "np.reshape order=A is not implemented.");
    if (strcmp(o, "F") == 0) fortran = 1;
    else if (strcmp(o, "C") != 0) return sr_raise(I, "ValueError", "Unexpected value for 'order' argument: %s.", o);
  }
  SrVal *x = arr(I, a);
  if (!x) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  SrVal *sh = NULL, *r = NULL;
  if (new_shape(I, vtype(I, x), shape_v, shape, &nd) == 0 &&
      sr_api_canon_sharding(I, out_sharding, fortran ? "jnp.reshape" : "reshape", &sh) == 0) {
    if (!fortran) {
      r = sr_lax_reshape(I, x, shape, nd, sh);
    } else {
      int xn = vtype(I, x)->ndim;
      int64_t perm[SR_MAX_RANK], rev[SR_MAX_RANK], back[SR_MAX_RANK];
      for (int i = 0; i < xn; i++) perm[i] = xn - 1 - i;
      for (int i = 0; i < nd; i++) rev[i] = shape[nd - 1 - i], back[i] = nd - 1 - i;
      int ident = xn <= 1;
      /* the out_sharding's partitions reversed as they were given (not
         padded to the rank first), its unreduced and reduced sets kept */
      SrVal *rsh = NULL;
      if (sh) {
        SrSpec c = *sh->sh.spec;
        SrSpecEntry e[SR_MAX_RANK];
        for (int i = 0; i < c.n && i < SR_MAX_RANK; i++) e[i] = c.e[c.n - 1 - i];
        c.e = e;
        rsh = sr_sharding_val(NULL, sh->sh.mesh, &c, sh->sh.memory_kind);
      }
      SrVal *t = ident ? sr_ref(x) : sr_lax_transpose(I, x, perm, xn);
      SrVal *m = t ? sr_lax_reshape(I, t, rev, nd, rsh) : NULL;
      sr_unref(rsh);
      r = m ? (nd <= 1 ? sr_ref(m) : sr_lax_transpose(I, m, back, nd)) : NULL;
      sr_unref(t);
      sr_unref(m);
    }
  }
  sr_unref(sh);
  sr_unref(x);
  return r;
}

static SrVal *jnp_reshape(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "reshape", "a, shape, order=, *, copy=, out_sharding=", p) < 0) return NULL;
  return do_reshape(I, p[0], p[1], p[2], p[4]);
}

static SrVal *jnp_ravel(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "ravel", "a, order=, *, out_sharding=", p) < 0) return NULL;
  if (p[1] && p[1]->kind == SR_V_STR && strcmp(p[1]->str.s, "K") == 0)
    return sr_raise(I, "NotImplementedError", "Ravel not implemented for order='K'.");
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *n = sr_int(NULL, sr_type_numel(vtype(I, x)));
  SrVal *r = do_reshape(I, x, n, p[1], p[2]);
  sr_unref(n);
  sr_unref(x);
  return r;
}

static SrVal *jnp_transpose(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "transpose", "a, axes=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  int64_t perm[SR_MAX_RANK];
  int n = t->ndim, ok = 1;
  if (p[1] && p[1]->kind != SR_V_NONE) {
    ok = ints_arg(I, p[1], perm, &n, "axes") == 0;
    if (ok && n != t->ndim) {
      sr_raise(I, "ValueError", "axes don't match array");
      ok = 0;
    }
    for (int i = 0; ok && i < n; i++) ok = sr_api_axis(I, perm[i], t->ndim, &perm[i]) == 0;
  } else {
    for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
  }
  SrVal *r = ok ? sr_lax_transpose(I, x, perm, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *jnp_swapaxes(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "swapaxes", "a, axis1, axis2", p) < 0) return NULL;
  int64_t a1, a2;
  if (sr_as_int(I, p[1], "axis1", &a1) < 0 || sr_as_int(I, p[2], "axis2", &a2) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  int64_t perm[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) perm[i] = i;
  SrVal *r = NULL;
  if (sr_api_axis(I, a1, t->ndim, &a1) == 0 && sr_api_axis(I, a2, t->ndim, &a2) == 0) {
    int64_t tmp = perm[a1];
    perm[a1] = perm[a2];
    perm[a2] = tmp;
    r = sr_lax_transpose(I, x, perm, t->ndim);
  }
  sr_unref(x);
  return r;
}

/* jnp.moveaxis(a, source, destination): source and destination an int or
   a sequence of ints each (_moveaxis: the other axes in order, then each
   source inserted at its destination, destinations in increasing order) */
static SrVal *jnp_moveaxis(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "moveaxis", "a, source, destination", p) < 0) return NULL;
  int64_t s[SR_MAX_RANK], d[SR_MAX_RANK];
  int ns = 0, nd = 0;
  if (ints_arg(I, p[1], s, &ns, "source") < 0 || ints_arg(I, p[2], d, &nd, "destination") < 0) return NULL;
  if (ns != nd) return sr_raise(I, "ValueError", "Inconsistent number of elements: %d vs %d", ns, nd);
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  SrVal *r = NULL;
  int ok = 1;
  for (int i = 0; i < ns && ok; i++)
    ok = sr_api_axis(I, s[i], t->ndim, &s[i]) == 0 && sr_api_axis(I, d[i], t->ndim, &d[i]) == 0;
  if (ok) {
    int64_t perm[SR_MAX_RANK];
    int k = 0, order[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) {
      int moved = 0;
      for (int j = 0; j < ns; j++) moved |= s[j] == i;
      if (!moved) perm[k++] = i;
    }
    for (int i = 0; i < ns; i++) order[i] = i;
    for (int i = 1; i < ns; i++) /* sorted(zip(destination, source)) */
      for (int j = i; j > 0 && (d[order[j]] < d[order[j - 1]] ||
                                (d[order[j]] == d[order[j - 1]] && s[order[j]] < s[order[j - 1]]));
           j--) {
        int tmp = order[j];
        order[j] = order[j - 1];
        order[j - 1] = tmp;
      }
    for (int i = 0; i < ns; i++) {
      int64_t dd = d[order[i]];
      if (dd > k) dd = k;
      memmove(perm + dd + 1, perm + dd, (size_t)(k - dd) * sizeof *perm);
      perm[dd] = s[order[i]];
      k++;
    }
    r = sr_lax_transpose(I, x, perm, t->ndim);
  }
  sr_unref(x);
  return r;
}

static SrVal *jnp_squeeze(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "squeeze", "a, axis=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  int64_t d[SR_MAX_RANK];
  int n = 0, ok = 1;
  if (p[1] && p[1]->kind != SR_V_NONE) {
    ok = ints_arg(I, p[1], d, &n, "axis") == 0;
    /* an axis of size other than 1 is lax.squeeze's error, as in JAX */
    for (int i = 0; ok && i < n; i++) ok = sr_api_axis(I, d[i], t->ndim, &d[i]) == 0;
  } else {
    for (int i = 0; i < t->ndim; i++)
      if (t->dims[i].size == 1) d[n++] = i;
  }
  SrVal *r = ok ? sr_lax_squeeze(I, x, d, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *jnp_expand_dims(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "expand_dims", "a, axis", p) < 0) return NULL;
  int64_t d[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], d, &n, "axis") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_expand_dims(I, x, d, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *jnp_broadcast_to(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "broadcast_to", "array, shape, *, out_sharding=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  SrVal *sh = NULL;
  if (ints_arg(I, p[1], shape, &nd, "shape") < 0 || sr_api_canon_sharding(I, p[2], "jnp.broadcast_to", &sh) < 0)
    return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_broadcast_to(I, x, shape, nd, sh) : NULL;
  sr_unref(x);
  sr_unref(sh);
  return r;
}

/* ======================================================================
 * reductions (reductions.py: _reduction, _mean)
 * ====================================================================== */

/* _reduction_dims: the axes, canonical and checked. */
static int reduction_dims(SrInterp *I, SrVal *axis, int nd, int64_t *dims, int *n) {
  if (!axis || axis->kind == SR_V_NONE) {
    for (int i = 0; i < nd; i++) dims[i] = i;
    *n = nd;
    return 0;
  }
  if (ints_arg(I, axis, dims, n, "axis") < 0) return -1;
  for (int i = 0; i < *n; i++) {
    if (sr_api_axis(I, dims[i], nd, &dims[i]) < 0) return -1;
    for (int k = 0; k < i; k++)
      if (dims[k] == dims[i]) {
        SrBuf b = SR_BUF_INIT;
        sr_val_repr(&b, axis);
        sr_raise(I, "ValueError", "duplicate value in 'axis': %s", b.p);
        sr_buf_free(&b);
        return -1;
      }
  }
  return 0;
}

/* _promote_integer_dtype */
static SrDtype promote_integer(SrInterp *I, SrDtype d) {
  if (d == SR_BOOL) return default_int(I);
  if (sr_dtype_kind(d) == SR_DK_UINT) {
    SrDtype u = I->jax->enable_x64 ? SR_U64 : SR_U32;
    return sr_dtype_info(d)->bits < sr_dtype_info(u)->bits ? u : d;
  }
  if (sr_dtype_kind(d) == SR_DK_INT) {
    SrDtype i = default_int(I);
    return sr_dtype_info(d)->bits < sr_dtype_info(i)->bits ? i : d;
  }
  return d;
}

static SrDtype upcast_f16(SrDtype d) { return d == SR_F16 || d == SR_BF16 ? SR_F32 : d; }

typedef enum { RED_SUM, RED_PROD, RED_MAX, RED_MIN, RED_ALL, RED_ANY } RedKind;

/* _reduction_init_val(a, init_val) for kind k in dtype dt: a concrete
   scalar (0, 1, -inf / inf as the least / greatest value, True/False) */
static SrVal *reduction_init(SrInterp *I, RedKind k, SrDtype dt) {
  int lo = k == RED_MAX || k == RED_ANY, one = k == RED_PROD || k == RED_ALL;
  SrVal *v;
  if (dt == SR_BOOL) v = sr_bool(k == RED_MIN || one);
  else if (k == RED_SUM || k == RED_PROD) v = sr_int(NULL, one);
  else if (sr_dtype_is_inexact(dt)) v = sr_float(NULL, lo ? -INFINITY : INFINITY);
  else {
    int bits = sr_dtype_info(dt)->bits;
    int64_t mx = bits >= 64 ? INT64_MAX : (int64_t)((1ull << (bits - (sr_dtype_kind(dt) == SR_DK_UINT ? 0 : 1))) - 1);
    int64_t mn = sr_dtype_kind(dt) == SR_DK_UINT ? 0 : bits >= 64 ? INT64_MIN : -mx - 1;
    v = sr_int(NULL, lo ? mn : mx);
    if (sr_dtype_kind(dt) == SR_DK_UINT && bits >= 64 && !lo) {
      sr_unref(v);
      v = sr_int(NULL, -1); /* the bits of uint64's max */
      SrVal *x = sr_jnp_asarray(I, v, SR_I64), *y = x ? sr_lax_convert(I, x, SR_U64, 0, NULL) : NULL;
      sr_unref(v);
      sr_unref(x);
      return y;
    }
  }
  SrVal *r = sr_jnp_asarray(I, v, dt);
  sr_unref(v);
  return r;
}

static SrVal *reduction_iw(SrInterp *I, SrVal *a_in, RedKind k, const char *name, SrVal *axis, int dtype,
                           int keepdims, int promote_integers, SrVal *out_sharding, SrVal *initial, SrVal *where);

static SrVal *reduction(SrInterp *I, SrVal *a_in, RedKind k, const char *name, SrVal *axis, int dtype, int keepdims,
                        int promote_integers, SrVal *out_sharding) {
  return reduction_iw(I, a_in, k, name, axis, dtype, keepdims, promote_integers, out_sharding, NULL, NULL);
}

int sr_jnp_check_where(SrInterp *I, const char *name, SrVal *where) {
  if (!where || where->kind == SR_V_NONE) return 0;
  SrVal *w = arr(I, where);
  if (!w) return -1;
  SrDtype d = vtype(I, w)->dtype;
  sr_unref(w);
  if (d == SR_BOOL) return 0;
  sr_raise(I, "ValueError", "jnp.%s: where must be None or a boolean array; got where.dtype=dtype('%s').", name,
           sr_dtype_name(d));
  return -1;
}

/* _reduction, with initial= and where= (None: NULL) */
static SrVal *reduction_iw(SrInterp *I, SrVal *a_in, RedKind k, const char *name, SrVal *axis, int dtype,
                           int keepdims, int promote_integers, SrVal *out_sharding, SrVal *initial, SrVal *where) {
  if (initial && initial->kind == SR_V_NONE) initial = NULL;
  if (where && where->kind == SR_V_NONE) where = NULL;
  SrVal *a = arr(I, a_in);
  if (!a) return NULL;
  SrVal *wh = NULL; /* check_where */
  if (where) {
    if (!(wh = arr(I, where))) {
      sr_unref(a);
      return NULL;
    }
    if (vtype(I, wh)->dtype != SR_BOOL) {
      sr_raise(I, "ValueError", "jnp.%s: where must be None or a boolean array; got where.dtype=dtype('%s').", name,
               sr_dtype_name(vtype(I, wh)->dtype));
      sr_unref(wh);
      sr_unref(a);
      return NULL;
    }
    if (!initial && (k == RED_MAX || k == RED_MIN)) {
      sr_raise(I, "ValueError",
               "reduction operation %s does not have an identity, so to use a where mask one has to specify 'initial'",
               name);
      sr_unref(wh);
      sr_unref(a);
      return NULL;
    }
  }
  /* preproc: sum and prod make bools numeric, all and any make bools */
  if (k == RED_SUM || k == RED_PROD) {
    /* promote_dtypes takes borrowed args and leaves new references */
    SrVal *owned = a;
    int rc = promote_dtypes(I, 1, &a, 2);
    sr_unref(owned);
    if (rc < 0) return NULL;
  } else if (k == RED_ALL || k == RED_ANY) {
    SrVal *b = sr_lax_convert(I, a, SR_BOOL, 0, NULL);
    sr_unref(a);
    if (!(a = b)) return NULL;
  }
  const SrType *t = vtype(I, a);
  int64_t dims[SR_MAX_RANK];
  int nd;
  SrVal *r = NULL, *sh = NULL;
  if (reduction_dims(I, axis, t->ndim, dims, &nd) < 0) goto done;
  if ((k == RED_MAX || k == RED_MIN) && !initial) {
    for (int i = 0; i < nd; i++)
      if (t->dims[dims[i]].size == 0) {
        sr_raise(I, "ValueError", "zero-size array to reduction operation %s which has no identity", name);
        goto done;
      }
  }
  SrDtype result = dtype >= 0 ? (SrDtype)dtype : t->dtype;
  if (dtype < 0 && promote_integers) result = promote_integer(I, result);
  SrDtype comp = (dtype < 0 && (k == RED_SUM || k == RED_PROD) && sr_dtype_is_inexact(result)) ? upcast_f16(result)
                                                                                             : result;
  SrVal *c = sr_lax_convert(I, a, comp, 0, NULL);
  if (!c) goto done;
  sr_unref(a);
  a = c;
  int prim = k == RED_SUM ? SR_P_reduce_sum : k == RED_PROD ? SR_P_reduce_prod : k == RED_MAX ? SR_P_reduce_max
             : k == RED_MIN ? SR_P_reduce_min : k == RED_ALL ? SR_P_reduce_and : SR_P_reduce_or;
  if (comp == SR_BOOL) {
    if (k == RED_SUM) prim = SR_P_reduce_or;
    else if (k == RED_PROD) prim = SR_P_reduce_and;
  }
  if (wh) {
    /* a = _where(where_, a, init_val) */
    SrVal *iv = reduction_init(I, k, comp), *w = NULL;
    SrVal *args[3] = {wh, a, iv};
    SrVal *fn = sr_lookup_qualname("jax.numpy.where");
    if (iv && fn) {
      SrArgs ca = {3, args, 0, NULL, NULL, NULL};
      w = sr_call(I, fn, &ca);
    }
    sr_unref(iv);
    if (!w) goto done;
    sr_unref(a);
    a = w;
  }
  if (out_sharding && sr_api_canon_sharding(I, out_sharding, name, &sh) < 0) goto done;
  r = sr_lax_reduce(I, prim, a, dims, nd, sh);
  if (r && initial) {
    /* op(convert_element_type(initial, a.dtype), result) */
    SrVal *iv = sr_lax_convert(I, initial, comp, 0, NULL), *q = NULL;
    const SrType *it = iv ? vtype(I, iv) : NULL;
    if (it && it->ndim != 0) {
      SrBuf b = SR_BUF_INIT;
      sr_shape_str(&b, it);
      sr_raise(I, "ValueError", "initial value must be a scalar. Got array of shape %s", sr_buf_str(&b));
      sr_buf_free(&b);
    } else if (it) {
      int op = prim == SR_P_reduce_sum ? SR_P_add : prim == SR_P_reduce_prod ? SR_P_mul : prim == SR_P_reduce_max ? SR_P_max
               : prim == SR_P_reduce_min ? SR_P_min : prim == SR_P_reduce_and ? SR_P_and : SR_P_or;
      q = sr_lax_binary(I, op, iv, r);
    }
    sr_unref(iv);
    sr_unref(r);
    r = q;
  }
  if (r && keepdims) {
    SrVal *e = sr_lax_expand_dims(I, r, dims, nd);
    sr_unref(r);
    r = e;
  }
  if (r) {
    SrVal *e = sr_lax_convert(I, r, dtype >= 0 ? (SrDtype)dtype : result, 0, NULL);
    sr_unref(r);
    r = e;
  }
done:
  sr_unref(sh);
  sr_unref(a);
  sr_unref(wh);
  return r;
}

/* _reduction's ensure_arraylike(name, a): a list or a tuple (a container,
   not np.isscalar) is refused */
static int red_arraylike(SrInterp *I, const char *name, SrVal *x) {
  if (x->kind != SR_V_LIST && x->kind != SR_V_TUPLE && x->kind != SR_V_NONE && x->kind != SR_V_DICT &&
      x->kind != SR_V_SET)
    return 0;
  sr_raise(I, "TypeError", "%s requires ndarray or scalar arguments, got <class '%s'> at position 0.", name,
           sr_val_kind_name(x));
  return -1;
}

static SrVal *red_api(SrInterp *I, SrArgs *a, RedKind k, const char *name) {
  SrVal *p[10];
  int dt;
  if (sr_args_parse(I, a, name,
                    "a, axis=, dtype=, out=, keepdims=, initial=, where=, promote_integers=, *, out_sharding=", p) < 0)
    return NULL;
  if (p[3] && p[3]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.%s is not supported.", name);
  if (red_arraylike(I, name, p[0]) < 0) return NULL;
  if (sr_dtype_arg(I, p[2], &dt, name) < 0) return NULL;
  int promote = (k == RED_SUM || k == RED_PROD) && (!p[7] || sr_val_truthy(p[7]));
  return reduction_iw(I, p[0], k, name, p[1], dt, p[4] && sr_val_truthy(p[4]), promote, p[8], p[5], p[6]);
}

static SrVal *jnp_sum(SrInterp *I, SrArgs *a) { return red_api(I, a, RED_SUM, "sum"); }
static SrVal *jnp_prod(SrInterp *I, SrArgs *a) { return red_api(I, a, RED_PROD, "prod"); }
static SrVal *jnp_max(SrInterp *I, SrArgs *a) { return red_api(I, a, RED_MAX, "max"); }
static SrVal *jnp_min(SrInterp *I, SrArgs *a) { return red_api(I, a, RED_MIN, "min"); }
static SrVal *jnp_all(SrInterp *I, SrArgs *a) { return red_api(I, a, RED_ALL, "all"); }
static SrVal *jnp_any(SrInterp *I, SrArgs *a) { return red_api(I, a, RED_ANY, "any"); }

/* _mean: a sum in the computation dtype divided by the count (a literal);
   float16 upcast only when dtype is None (upcast_f16_for_computation) */
static SrVal *jnp_mean(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  int dt;
  if (sr_args_parse(I, a, "mean", "a, axis=, dtype=, out=, keepdims=, *, where=, out_sharding=", p) < 0) return NULL;
  SrVal *where = p[5] && p[5]->kind != SR_V_NONE ? p[5] : NULL;
  if (red_arraylike(I, "mean", p[0]) < 0) return NULL;
  if (sr_dtype_arg(I, p[2], &dt, "mean") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  if (where) {
    /* _count: sum(_broadcast_to(where, a.shape), axis, dtype, keepdims);
       then sum(a, ..., where=where) / count */
    SrVal *w = arr(I, where), *bw = NULL, *r = NULL;
    const SrType *t = vtype(I, x);
    if (w && vtype(I, w)->dtype != SR_BOOL) {
      sr_raise(I, "ValueError", "jnp.mean: where must be None or a boolean array; got where.dtype=dtype('%s').",
               sr_dtype_name(vtype(I, w)->dtype));
    } else if (w) {
      SrDtype result = dt >= 0 ? (SrDtype)dt : to_inexact(I, t->dtype);
      SrDtype comp = dt < 0 && sr_dtype_is_inexact(result) ? upcast_f16(result) : result;
      int64_t shape[SR_MAX_RANK];
      for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
      int same = vtype(I, w)->ndim == t->ndim;
      for (int i = 0; same && i < t->ndim; i++) same = vtype(I, w)->dims[i].size == shape[i];
      bw = same ? sr_ref(w) : sr_lax_broadcast_to(I, w, shape, t->ndim, NULL);
      int keep = p[4] && sr_val_truthy(p[4]);
      SrVal *cnt = bw ? reduction(I, bw, RED_SUM, "sum", p[1], comp, keep, 1, NULL) : NULL;
      SrVal *s = cnt ? reduction_iw(I, x, RED_SUM, "sum", p[1], comp, keep, 1, p[6], NULL, w) : NULL;
      SrVal *q = s ? sr_lax_binary(I, SR_P_div, s, cnt) : NULL;
      r = q ? sr_lax_convert(I, q, result, 0, NULL) : NULL;
      sr_unref(q);
      sr_unref(s);
      sr_unref(cnt);
    }
    sr_unref(bw);
    sr_unref(w);
    sr_unref(x);
    return r;
  }
  const SrType *t = vtype(I, x);
  SrDtype result = dt >= 0 ? (SrDtype)dt : to_inexact(I, t->dtype);
  SrDtype comp = dt < 0 && sr_dtype_is_inexact(result) ? upcast_f16(result) : result;
  int64_t dims[SR_MAX_RANK];
  int nd;
  SrVal *r = NULL;
  if (reduction_dims(I, p[1], t->ndim, dims, &nd) == 0) {
    int64_t count = 1;
    for (int i = 0; i < nd; i++) count *= t->dims[dims[i]].size;
    SrVal *cnt = sr_int(NULL, count);
    SrVal *norm = sr_lax_convert(I, cnt, comp, 0, NULL);
    sr_unref(cnt);
    SrVal *s = norm ? reduction(I, x, RED_SUM, "sum", p[1], comp, p[4] && sr_val_truthy(p[4]), 1, p[6]) : NULL;
    SrVal *q = NULL;
    if (s && !I->trace && (comp == SR_F32 || comp == SR_F64) && count > 0) {
      /* _mean is a jit: run, XLA folds the division by the constant count
         into a product with its reciprocal, rounded in comp (46 / 12 is
         3.8333335 in float32, as in jnp.mean's docstring) */
      double rcp = comp == SR_F32 ? (double)(1.0f / (float)count) : 1.0 / (double)count;
      SrVal *rv = sr_float(NULL, rcp), *rc = sr_lax_convert(I, rv, comp, 0, NULL);
      q = rc ? sr_lax_binary(I, SR_P_mul, s, rc) : NULL;
      sr_unref(rv);
      sr_unref(rc);
    } else if (s) {
      q = sr_lax_binary(I, SR_P_div, s, norm);
    }
    r = q ? sr_lax_convert(I, q, result, 0, NULL) : NULL;
    sr_unref(q);
    sr_unref(s);
    sr_unref(norm);
  }
  sr_unref(x);
  return r;
}

/* argmax / argmin (lax_numpy._argmax): an int32 index; axis=None ravels */
static SrVal *argfn(SrInterp *I, SrArgs *a, int prim, const char *name) {
  SrVal *p[4];
  if (sr_args_parse(I, a, name, "a, axis=, out=, keepdims=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  int64_t axis = 0, dims[SR_MAX_RANK];
  int nd = 0, keep = p[3] && sr_val_truthy(p[3]);
  SrVal *r = NULL;
  if (!p[1] || p[1]->kind == SR_V_NONE) {
    for (int i = 0; i < t->ndim; i++) dims[nd++] = i;
    int64_t n = sr_type_numel(t);
    SrVal *y = sr_lax_reshape(I, x, &n, 1, NULL);
    sr_unref(x);
    if (!(x = y)) return NULL;
  } else {
    if (sr_as_int(I, p[1], "axis", &axis) < 0) goto done;
    dims[nd++] = axis;
  }
  t = vtype(I, x);
  if (sr_api_axis(I, axis, t->ndim, &axis) < 0) goto done;
  if (t->dims[axis].size == 0) {
    sr_raise(I, "ValueError", "attempt to get %s of an empty sequence", name);
    goto done;
  }
  r = sr_lax_argminmax(I, prim, x, axis, default_int(I));
  if (r && keep) {
    SrVal *e = sr_lax_expand_dims(I, r, dims, nd);
    sr_unref(r);
    r = e;
  }
done:
  sr_unref(x);
  return r;
}

static SrVal *jnp_argmax(SrInterp *I, SrArgs *a) { return argfn(I, a, SR_P_argmax, "argmax"); }
static SrVal *jnp_argmin(SrInterp *I, SrArgs *a) { return argfn(I, a, SR_P_argmin, "argmin"); }

/* cumsum: a jit of its own (reductions.cumsum is @jit) */
typedef struct CumData {
  int has_axis;
  int64_t axis;
  int dtype;
  int prim; /* 0: cumsum; else SR_P_cumprod (jnp.cumprod) */
} CumData;

static SrVal *cumsum_body(SrInterp *I, SrArgs *a) {
  CumData *d = sr_current_builtin(I)->data;
  SrVal *x = sr_ref(a->v[0]);
  const SrType *t = vtype(I, x);
  int64_t axis = d->axis;
  if (!d->has_axis || t->ndim == 0) {
    for (int i = 0; i < t->ndim; i++)
      if (t->dims[i].nax) {
        SrBuf b = SR_BUF_INIT;
        sr_type_long(&b, t);
        sr_raise(I, "ShardingTypeError",
                 "The input should be fully replicated when axis is not specified to %s. Got input type=%s",
                 d->prim ? "cumprod" : "cumsum", b.p);
        sr_buf_free(&b);
        sr_unref(x);
        return NULL;
      }
    int64_t n = sr_type_numel(t);
    SrVal *y = sr_lax_reshape(I, x, &n, 1, NULL);
    sr_unref(x);
    if (!(x = y)) return NULL;
    if (!d->has_axis) axis = 0;
    t = vtype(I, x);
  }
  if (sr_api_axis(I, axis, t->ndim, &axis) < 0) {
    sr_unref(x);
    return NULL;
  }
  SrDtype result = t->dtype, comp;
  if (d->dtype < 0) {
    result = t->dtype == SR_BOOL ? promote_integer(I, t->dtype) : t->dtype;
    comp = result;
  } else if (d->dtype == SR_BOOL) {
    /* a != 0 first: [-1, 1] must not cancel */
    result = SR_BOOL;
    comp = promote_integer(I, SR_BOOL);
    if (t->dtype != SR_BOOL) {
      SrVal *zi = sr_int(NULL, 0), *z = sr_lax_convert(I, zi, t->dtype, 0, NULL);
      SrVal *ne = z ? sr_lax_binary(I, SR_P_ne, x, z) : NULL;
      sr_unref(zi);
      sr_unref(z);
      sr_unref(x);
      if (!(x = ne)) return NULL;
    }
  } else {
    result = comp = (SrDtype)d->dtype;
  }
  SrVal *c = sr_lax_convert(I, x, comp, 0, NULL);
  sr_unref(x);
  if (!c) return NULL;
  SrVal *r = sr_bindv(I, d->prim ? d->prim : SR_P_cumsum, 1, &c, "axis", sr_int(NULL, axis), "reverse", sr_bool(0), NULL);
  sr_unref(c);
  if (!r) return NULL;
  SrVal *o = sr_lax_convert(I, r, result, 0, NULL);
  sr_unref(r);
  return o;
}

static SrVal *cum_api(SrInterp *I, SrArgs *a, int prim, const char *name) {
  SrVal *p[4];
  if (sr_args_parse(I, a, name, "a, axis=, dtype=, out=", p) < 0) return NULL;
  CumData *d = sr_xcalloc(1, sizeof *d);
  d->prim = prim;
  d->has_axis = p[1] && p[1]->kind != SR_V_NONE;
  if ((d->has_axis && sr_as_int(I, p[1], "axis", &d->axis) < 0) || sr_dtype_arg(I, p[2], &d->dtype, "cumsum") < 0) {
    free(d);
    return NULL;
  }
  SrVal *x = arr(I, p[0]);
  if (!x) {
    free(d);
    return NULL;
  }
  SrVal *r = sr_api_jit(I, name, cumsum_body, d, 1, &x);
  sr_unref(x);
  return r;
}

static SrVal *jnp_cumsum(SrInterp *I, SrArgs *a) { return cum_api(I, a, 0, "cumsum"); }
static SrVal *jnp_cumprod(SrInterp *I, SrArgs *a) { return cum_api(I, a, SR_P_cumprod, "cumprod"); }

/* ======================================================================
 * contractions: dot, matmul, einsum
 * ====================================================================== */

static SrVal *finish_dot(SrInterp *I, SrVal *r, SrDtype pref, int weak) {
  if (!r) return NULL;
  SrVal *c = sr_lax_convert(I, r, pref, weak, NULL);
  sr_unref(r);
  return c;
}

static int pref_type(SrInterp *I, SrVal *pv, SrVal *x, SrVal *y, SrDtype *pref, int *weak) {
  int pt;
  if (sr_dtype_arg(I, pv, &pt, "dot") < 0) return -1;
  if (pt >= 0) {
    *pref = (SrDtype)pt;
    *weak = 0;
  } else {
    SrVal *xs[2] = {x, y};
    *pref = sr_jnp_result_dtype(I, 2, xs, weak);
  }
  return 0;
}

static SrVal *jnp_dot(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "dot", "a, b, *, precision=, preferred_element_type=, out_sharding=", p) < 0) return NULL;
  for (int i = 0; i < 2; i++) /* ensure_arraylike("dot", a, b) */
    if (p[i]->kind == SR_V_LIST || p[i]->kind == SR_V_TUPLE)
      return sr_raise(I, "TypeError", "dot requires ndarray or scalar arguments, got <class '%s'> at position %d.",
                      sr_val_kind_name(p[i]), i);
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL, *sh = NULL, *r = NULL;
  SrDtype pref;
  int weak;
  if (y && pref_type(I, p[3], x, y, &pref, &weak) == 0 && sr_api_canon_sharding(I, p[4], "dot_general", &sh) == 0) {
    const SrType *tx = vtype(I, x), *ty = vtype(I, y);
    int64_t lc = tx->ndim - 1, rc = ty->ndim == 1 ? 0 : ty->ndim - 2;
    int nc = tx->ndim && ty->ndim ? 1 : 0;
    r = finish_dot(I,
                   sr_lax_dot_general(I, x, y, &lc, nc, &rc, nc, NULL, 0, NULL, 0,
                                      p[2] && p[2]->kind != SR_V_NONE ? p[2] : NULL, pref, sh),
                   pref, weak);
  }
  sr_unref(x);
  sr_unref(y);
  sr_unref(sh);
  return r;
}

/* tensor_contractions.matmul */
static SrVal *matmul(SrInterp *I, SrVal *a0, SrVal *b0, SrVal *precision, SrVal *pref_v, SrVal *out_sharding) {
  SrVal *a = arr(I, a0), *b = a ? arr(I, b0) : NULL, *sh = NULL, *r = NULL;
  SrVal *as = NULL, *bs = NULL, *out = NULL;
  if (!b) goto done;
  const SrType *ta = vtype(I, a), *tb = vtype(I, b);
  for (int i = 0; i < 2; i++) {
    const SrType *t = i ? tb : ta;
    if (t->ndim < 1) {
      sr_raise(I, "ValueError", "matmul input operand %d must have ndim at least 1, but it has ndim %d", i, t->ndim);
      goto done;
    }
  }
  SrDtype pref;
  int weak;
  if (pref_type(I, pref_v, a, b, &pref, &weak) < 0) goto done;
  if (sr_api_canon_sharding(I, out_sharding, "dot_general", &sh) < 0) goto done;
  int a_mat = ta->ndim > 1, b_mat = tb->ndim > 1;
  int na = a_mat ? ta->ndim - 2 : 0, nb = b_mat ? tb->ndim - 2 : 0;
  int nbatch = na > nb ? na : nb;
  int64_t a_sq[SR_MAX_RANK], b_sq[SR_MAX_RANK], both_sq[SR_MAX_RANK], a_batch[SR_MAX_RANK], b_batch[SR_MAX_RANK];
  int64_t idx_batch[SR_MAX_RANK], idx_a[SR_MAX_RANK], idx_b[SR_MAX_RANK];
  int nas = 0, nbs = 0, nboth = 0, nab = 0, nbb = 0, nib = 0, nia = 0, nibo = 0;
  for (int i = 0; i < nbatch; i++) {
    int ai = i - (nbatch - na), bi = i - (nbatch - nb);
    int64_t ba = ai >= 0 ? ta->dims[ai].size : -2, bb = bi >= 0 ? tb->dims[bi].size : -2;
    int sa_none = ai < 0 || ta->dims[ai].nax == 0, sb_none = bi < 0 || tb->dims[bi].nax == 0;
    if (ba == -2) {
      idx_b[nibo++] = i;
    } else if (bb == -2) {
      idx_a[nia++] = i;
    } else if (ba == 1 && bb == 1 && sa_none && sb_none) {
      a_sq[nas] = nib + nia + nas;
      nas++;
      b_sq[nbs] = nib + nibo + nbs;
      nbs++;
      both_sq[nboth++] = i;
    } else if (ba == 1 && sa_none) {
      idx_b[nibo++] = i;
      a_sq[nas] = nib + nia + nas;
      nas++;
    } else if (bb == 1 && sb_none) {
      idx_a[nia++] = i;
      b_sq[nbs] = nib + nibo + nbs;
      nbs++;
    } else if (ba == bb && sr_spec_entry_eq(ta, ai, tb, bi)) {
      a_batch[nab++] = nib + nia;
      b_batch[nbb++] = nib + nibo;
      idx_batch[nib++] = i;
    } else {
      SrBuf x1 = SR_BUF_INIT, x2 = SR_BUF_INIT;
      sr_type_long(&x1, ta);
      sr_type_long(&x2, tb);
      sr_raise(I, "ValueError", "Incompatible types for matmul arguments: %s and %s", x1.p, x2.p);
      sr_buf_free(&x1);
      sr_buf_free(&x2);
      goto done;
    }
  }
  if (a_mat) idx_a[nia++] = nbatch;
  if (b_mat) idx_b[nibo++] = nbatch + a_mat;
  /* perm = argsort(concat(idx_batch, idx_a, idx_b)) */
  int64_t cat[SR_MAX_RANK * 3], perm[SR_MAX_RANK];
  int ncat = 0;
  for (int i = 0; i < nib; i++) cat[ncat++] = idx_batch[i];
  for (int i = 0; i < nia; i++) cat[ncat++] = idx_a[i];
  for (int i = 0; i < nibo; i++) cat[ncat++] = idx_b[i];
  for (int i = 0; i < ncat; i++) {
    int rank = 0;
    for (int k = 0; k < ncat; k++) rank += cat[k] < cat[i];
    perm[rank] = i;
  }
  as = sr_lax_squeeze(I, a, a_sq, nas);
  bs = as ? sr_lax_squeeze(I, b, b_sq, nbs) : NULL;
  if (!bs) goto done;
  int64_t lc = vtype(I, as)->ndim - 1, rc = vtype(I, bs)->ndim - 1 - b_mat;
  out = sr_lax_dot_general(I, as, bs, &lc, 1, &rc, 1, a_batch, nab, b_batch, nbb,
                           precision && precision->kind != SR_V_NONE ? precision : NULL, pref, sh);
  if (!out) goto done;
  r = sr_lax_transpose(I, out, perm, ncat);
  if (r && nboth) {
    SrVal *e = sr_lax_expand_dims(I, r, both_sq, nboth);
    sr_unref(r);
    r = e;
  }
  r = finish_dot(I, r, pref, weak);
done:
  sr_unref(a);
  sr_unref(b);
  sr_unref(as);
  sr_unref(bs);
  sr_unref(out);
  sr_unref(sh);
  return r;
}

static SrVal *jnp_matmul(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "matmul", "a, b, *, precision=, preferred_element_type=, out_sharding=", p) < 0) return NULL;
  return matmul(I, p[0], p[1], p[2], p[3], p[4]);
}

/* ======================================================================
 * creation: zeros, ones, full, empty, *_like, arange, eye, linspace
 * ====================================================================== */

static SrVal *fill_api(SrInterp *I, SrArgs *a, const char *name, int fill /* 0, 1; -1: an argument */) {
  SrVal *p[5];
  const char *spec = fill < 0 ? "shape, fill_value, dtype=, *, device=, out_sharding="
                              : "shape, dtype=, *, device=, out_sharding=";
  if (sr_args_parse(I, a, name, spec, p) < 0) return NULL;
  int o = fill < 0 ? 1 : 0;
  int64_t shape[SR_MAX_RANK];
  int nd, dt;
  SrVal *sh = NULL;
  if (shape_traced_error(I, p[0]) < 0 || ints_arg(I, p[0], shape, &nd, "shape") < 0 ||
      sr_dtype_arg(I, p[1 + o], &dt, name) < 0)
    return NULL;
  SrVal *dev = NULL; /* array_create.c: a Device is put on afterwards */
  if (sr_jnp_device_arg(I, p[2 + o], p[3 + o], name, &sh, &dev) < 0) return NULL;
  SrVal *fv = fill < 0 ? arr(I, p[1]) : sr_int(NULL, fill);
  SrVal *r = NULL;
  if (fv && fill < 0 && vtype(I, fv)->ndim > 0) {
    /* an array fill_value: asarray(fill_value, dtype) broadcast to shape */
    SrVal *c = sr_jnp_asarray(I, fv, dt);
    r = c ? sr_lax_broadcast_to(I, c, shape, nd, sh) : NULL;
    sr_unref(c);
  } else if (fv) {
    if (fill >= 0 && dt < 0) dt = default_float(I);
    r = sr_lax_full(I, shape, nd, fv, dt, sh);
  }
  sr_unref(fv);
  sr_unref(sh);
  r = sr_jnp_put_on(I, r, dev);
  sr_unref(dev);
  return r;
}

static SrVal *jnp_zeros(SrInterp *I, SrArgs *a) { return fill_api(I, a, "zeros", 0); }
static SrVal *jnp_ones(SrInterp *I, SrArgs *a) { return fill_api(I, a, "ones", 1); }
static SrVal *jnp_empty(SrInterp *I, SrArgs *a) { return fill_api(I, a, "empty", 0); }
static SrVal *jnp_full(SrInterp *I, SrArgs *a) { return fill_api(I, a, "full", -1); }

/* lax.full_like: the fill in x's dtype, shape and sharding (a tracer's
   type gives the sharding), with x's varying axes */
static SrVal *full_like(SrInterp *I, SrVal *x, SrVal *fill, int dt, SrVal *shape_v, SrVal *out_sharding) {
  const SrType *t = vtype(I, x);
  if (!t) {
    SrVal *y = arr(I, x);
    if (!y) return NULL;
    SrVal *r = full_like(I, y, fill, dt, shape_v, out_sharding);
    sr_unref(y);
    return r;
  }
  int64_t shape[SR_MAX_RANK];
  int nd = t->ndim;
  for (int i = 0; i < nd; i++) shape[i] = t->dims[i].size;
  if (shape_v && shape_v->kind != SR_V_NONE && ints_arg(I, shape_v, shape, &nd, "shape") < 0) return NULL;
  int weak = dt < 0 && t->weak;
  SrDtype d = dt < 0 ? t->dtype : (SrDtype)dt;
  SrVal *sh = NULL;
  if (sr_api_canon_sharding(I, out_sharding, "full_like", &sh) < 0) return NULL;
  SrArrayObj *xso = sr_array_of(x);
  static int placing; /* the inner full_like of the case below */
  /* a committed concrete array whose type names no axes (Auto ones, no
     mesh in context): its concrete sharding too, as lax.full_like's
     use_x_sharding takes x.sharding */
  int concrete_auto = xso && xso->kind == SR_AV_CONCRETE && xso->data->committed && !t->mesh && !sr_api_mesh(I)->n;
  if (!placing && !sh && !weak && (!xso || (xso->kind != SR_AV_CONCRETE && xso->kind != SR_AV_TRACER) || concrete_auto) &&
      (!shape_v || shape_v->kind == SR_V_NONE)) {
    /* a ShapeDtypeStruct: its concrete sharding (it has no _committed,
       taken as committed) */
    SrVal *xs = sr_getattr(I, x, "sharding");
    if (I->exc) sr_exc_clear(I);
    if (xs && xs->kind == SR_V_SHARDING && !xs->sh.mesh->abstract && xs->sh.mesh->n) {
      /* lax.full with a concrete sharding: make_array_from_callback */
      placing = 1;
      SrVal *y = full_like(I, x, fill, dt, shape_v, NULL);
      placing = 0;
      SrVal *pa[2] = {y, xs};
      SrArgs pargs = {.n = 2, .v = pa};
      SrVal *r = y ? sr_call(I, sr_lookup_qualname("jax.device_put"), &pargs) : NULL;
      sr_unref(y);
      sr_unref(xs);
      return r;
    }
    sr_unref(xs);
  }
  if (!sh && (!shape_v || shape_v->kind == SR_V_NONE)) {
    /* x's own sharding: a tracer's aval.sharding, or an array's sharding
       when a mesh is in context or its mesh's axes are Explicit (with no
       mesh in context, a type names only Explicit axes) */
    const SrMesh *m = sr_api_mesh(I);
    SrArrayObj *xa = sr_array_of(x);
    int tracer = xa && xa->kind == SR_AV_TRACER;
    if (m->n ? !weak : t->mesh && (tracer || !weak)) {
      SrVal *ts = sr_type_sharding(I, t);
      if (sr_api_canon_sharding(I, ts, "full_like", &sh) < 0) {
        sr_unref(ts);
        return NULL;
      }
      sr_unref(ts);
    }
  }
  SrVal *f = arr(I, fill), *r = NULL;
  /* a key dtype: lax.full's extended-dtype rule (prng.KeyTyRules.full)
     takes the fill value as it is */
  int key = strncmp(sr_dtype_name(d), "key<", 4) == 0;
  SrVal *fc = f && !key ? sr_lax_convert(I, f, d, weak, NULL) : f ? sr_ref(f) : NULL;
  if (fc) r = sr_lax_full(I, shape, nd, fc, key ? (int)d : -1, sh);
  /* full() with x's concrete sharding makes the array with that very
     sharding (make_array_from_callback), spec as x.sharding has it */
  SrArrayObj *xo = sr_array_of(x), *ro = sr_array_of(r);
  if (sh && xo && xo->kind == SR_AV_CONCRETE && xo->data->sharding && ro && ro->kind == SR_AV_CONCRETE &&
      ro->data->rc == 1 && !ro->data->sharding && ro->data->mesh == xo->data->mesh && ro->type == xo->type)
    ro->data->sharding = sr_ref(xo->data->sharding);
  sr_unref(f);
  sr_unref(fc);
  sr_unref(sh);
  /* _full_like_insert_pvary */
  if (r && I->jax->check_vma && !I->jax->no_auto_pcast) {
    SrVal *pair[2] = {r, sr_ref(x)};
    if (sr_auto_insert_reshard(I, 2, pair) < 0) {
      sr_unref(pair[1]);
      return NULL;
    }
    sr_unref(pair[1]);
    r = pair[0];
  }
  return r;
}

static SrVal *like_api(SrInterp *I, SrArgs *a, const char *name, int fill) {
  SrVal *p[6];
  const char *spec = fill < 0 ? "a, fill_value, dtype=, shape=, *, device=, out_sharding="
                              : "a, dtype=, shape=, *, device=, out_sharding=";
  if (sr_args_parse(I, a, name, spec, p) < 0) return NULL;
  int o = fill < 0 ? 1 : 0, dt;
  if (sr_dtype_arg(I, p[1 + o], &dt, name) < 0) return NULL;
  SrVal *fv = fill < 0 ? arr(I, p[1]) : sr_int(NULL, fill);
  if (!fv) return NULL;
  SrVal *r;
  if (fill < 0 && vtype(I, fv)->ndim > 0) {
    /* an array fill_value: asarray(fill_value, dtype or a's) broadcast to
       shape or a's shape */
    SrVal *x = arr(I, p[0]);
    const SrType *t = x ? vtype(I, x) : NULL;
    int64_t shape[SR_MAX_RANK];
    int nd = t ? t->ndim : 0;
    for (int i = 0; i < nd; i++) shape[i] = t->dims[i].size;
    SrVal *sh = NULL, *c = NULL;
    r = NULL;
    if (t && (!p[2 + o] || p[2 + o]->kind == SR_V_NONE || ints_arg(I, p[2 + o], shape, &nd, "shape") == 0) &&
        sr_api_canon_sharding(I, p[4 + o], name, &sh) == 0 && (c = sr_jnp_asarray(I, fv, dt < 0 ? t->dtype : dt)))
      r = sr_lax_broadcast_to(I, c, shape, nd, sh);
    sr_unref(c);
    sr_unref(sh);
    sr_unref(x);
  } else {
    r = full_like(I, p[0], fv, dt, p[2 + o], p[4 + o]);
  }
  sr_unref(fv);
  return r;
}

static SrVal *jnp_zeros_like(SrInterp *I, SrArgs *a) { return like_api(I, a, "zeros_like", 0); }
static SrVal *jnp_ones_like(SrInterp *I, SrArgs *a) { return like_api(I, a, "ones_like", 1); }
static SrVal *jnp_empty_like(SrInterp *I, SrArgs *a) { return like_api(I, a, "empty_like", 0); }
static SrVal *jnp_full_like(SrInterp *I, SrArgs *a) { return like_api(I, a, "full_like", -1); }

static int scalar_value(SrInterp *I, SrVal *v, double *out, int *is_float) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = (double)v->i;
    *is_float = 0;
    return 0;
  }
  if (v->kind == SR_V_FLOAT) {
    *out = v->f;
    *is_float = 1;
    return 0;
  }
  SrVal *it = sr_unop(I, SR_OP_ITEM, v);
  if (!it) return -1;
  int rc = scalar_value(I, it, out, is_float);
  sr_unref(it);
  return rc;
}

/* max(0, int(np.ceil(q))), with Python's errors for NaN and infinity, and
   numpy's for a length no array can have */
static int arange_size(SrInterp *I, double q, int64_t *size) {
  double c = ceil(q);
  if (isnan(c)) return sr_raise(I, "ValueError", "cannot convert float NaN to integer"), -1;
  if (isinf(c)) return sr_raise(I, "OverflowError", "cannot convert float infinity to integer"), -1;
  if (c >= 9223372036854775808.0) return sr_raise(I, "ValueError", "%s", SR_TOO_BIG_MSG), -1;
  *size = c > 0 ? (int64_t)c : 0;
  return 0;
}

static SrVal *arange_rest(SrInterp *I, SrVal **p, int dt, SrVal *sh);

/* lax_numpy._arange */
static SrVal *jnp_arange(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "arange", "start, stop=, step=, dtype=, *, device=, out_sharding=", p) < 0) return NULL;
  int dt;
  SrVal *sh = NULL;
  SrVal *dev = NULL; /* array_create.c: a Device is put on afterwards */
  if (sr_dtype_arg(I, p[3], &dt, "arange") < 0 || sr_jnp_device_arg(I, p[4], p[5], "jnp.arange", &sh, &dev) < 0)
    return NULL;
  SrVal *r = sr_jnp_put_on(I, arange_rest(I, p, dt, sh), dev);
  sr_unref(dev);
  return r;
}

/* the rest of arange, taking sh */
static SrVal *arange_rest(SrInterp *I, SrVal **p, int dt, SrVal *sh) {
  SrVal *vals[3] = {p[0], p[1] && p[1]->kind != SR_V_NONE ? p[1] : NULL, p[2] && p[2]->kind != SR_V_NONE ? p[2] : NULL};
  for (int i = 0; i < 3; i++) {
    const SrType *ct = vals[i] && !(sr_array_of(vals[i]) && sr_array_of(vals[i])->kind == SR_AV_TRACER) ? vtype(I, vals[i]) : NULL;
    if (ct && sr_dtype_kind(ct->dtype) == SR_DK_COMPLEX) {
      sr_unref(sh);
      return sr_raise(I, "ValueError",
                      "Passing complex start/stop/step to jnp.arange is no longer supported starting in JAX v0.10.0.");
    }
  }
  double v[3] = {0, 0, 0};
  int isf = 0, any_float = 0;
  for (int i = 0; i < 3; i++) {
    if (!vals[i]) continue;
    SrArrayObj *ao = sr_array_of(vals[i]);
    if (ao && ao->kind == SR_AV_TRACER && !ao->has_value) {
      /* core.concrete_or_error(None, start, "It arose in the jnp.arange argument 'start'") */
      char ctx[64];
      snprintf(ctx, sizeof ctx, "It arose in the jnp.arange argument '%s'",
               i == 0 ? (vals[1] || vals[2] ? "start" : "stop") : i == 1 ? "stop" : "step");
      sr_unref(sh);
      return sr_raise_concretization(I, vals[i], ctx);
    }
    if (scalar_value(I, vals[i], &v[i], &isf) < 0) {
      sr_unref(sh);
      return NULL;
    }
    any_float |= isf;
  }
  SrDtype d;
  if (dt >= 0) {
    d = (SrDtype)dt;
  } else {
    SrVal *args[3];
    int n = 0;
    for (int i = 0; i < 3; i++)
      if (vals[i]) args[n++] = vals[i];
    int weak;
    d = sr_jnp_result_dtype(I, n, args, &weak);
  }
  double start = v[0], stop = v[1];
  if (!vals[1]) {
    stop = start;
    start = 0;
  }
  SrVal *r = NULL;
  int64_t size;
  if (vals[2]) {
    SrDtype wd = sr_dtype_is_float(d) && sr_dtype_info(d)->bits < 32 ? SR_F32 : d;
    double step = v[2];
    /* JAX divides Python scalars: (stop - start) / step */
    if (step == 0) {
      sr_unref(sh);
      return sr_raise(I, "ZeroDivisionError", any_float ? "float division by zero" : "division by zero");
    }
    if (arange_size(I, (stop - start) / step, &size) < 0) {
      sr_unref(sh);
      return NULL;
    }
    SrVal *io = sr_lax_iota(I, wd, &size, 1, 0, sh);
    SrVal *sv = sr_float(NULL, step), *st = sr_float(NULL, start);
    SrVal *stepc = io ? sr_lax_convert(I, sv, wd, 0, NULL) : NULL;
    SrVal *m = stepc ? sr_lax_binary(I, SR_P_mul, stepc, io) : NULL;
    SrVal *startc = m ? sr_lax_convert(I, st, wd, 0, NULL) : NULL;
    SrVal *ad = startc ? sr_lax_binary(I, SR_P_add, startc, m) : NULL;
    r = ad ? sr_lax_convert(I, ad, d, 0, NULL) : NULL;
    sr_unref(io);
    sr_unref(sv);
    sr_unref(st);
    sr_unref(stepc);
    sr_unref(m);
    sr_unref(startc);
    sr_unref(ad);
  } else if (start == 0) {
    if (arange_size(I, stop, &size) == 0) r = sr_lax_iota(I, d, &size, 1, 0, sh);
  } else if (arange_size(I, stop - start, &size) == 0) {
    SrVal *st = sr_dtype_is_inexact(d) ? sr_float(NULL, start) : sr_int(NULL, sr_f2i64(start));
    SrVal *startc = sr_lax_convert(I, st, d, 0, NULL);
    SrVal *io = startc ? sr_lax_iota(I, d, &size, 1, 0, sh) : NULL;
    r = io ? sr_lax_binary(I, SR_P_add, startc, io) : NULL;
    sr_unref(st);
    sr_unref(startc);
    sr_unref(io);
  }
  sr_unref(sh);
  return r;
}

/* lax_numpy._eye: (iota_0 + k == iota_1).astype(dtype) */
static SrVal *jnp_eye(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "eye", "N, M=, k=, dtype=, *, device=", p) < 0) return NULL;
  int64_t n, m;
  int dt;
  if (sr_as_int(I, p[0], "N", &n) < 0) return NULL;
  m = n;
  if (p[1] && p[1]->kind != SR_V_NONE && sr_as_int(I, p[1], "M", &m) < 0) return NULL;
  if (sr_dtype_arg(I, p[3], &dt, "eye") < 0) return NULL;
  if (n < 0 || m < 0) return sr_raise(I, "ValueError", "negative dimensions are not allowed, got %lld and %lld", (long long)n, (long long)m);
  SrVal *k = p[2] ? arr(I, p[2]) : sr_int(NULL, 0);
  if (!k) return NULL;
  const SrType *kt = vtype(I, k);
  if (kt->ndim != 0 || !sr_dtype_is_int(kt->dtype)) {
    sr_unref(k);
    return sr_raise(I, "ValueError", "k must be a scalar integer");
  }
  int64_t shape[2] = {n, m};
  SrVal *i = sr_lax_iota(I, kt->dtype, shape, 2, 0, NULL);
  SrVal *j = i ? sr_lax_iota(I, kt->dtype, shape, 2, 1, NULL) : NULL;
  SrVal *s = j ? call_np2(I, "add", i, k) : NULL;
  SrVal *e = s ? call_np2(I, "equal", s, j) : NULL;
  SrVal *r = e ? sr_lax_convert(I, e, dt < 0 ? default_float(I) : (SrDtype)dt, 0, NULL) : NULL;
  sr_unref(k);
  sr_unref(i);
  sr_unref(j);
  sr_unref(s);
  sr_unref(e);
  return r;
}

/* linspace: array_creation._linspace, a jit of its own */
typedef struct LinData {
  int64_t num;
  int endpoint, retstep, dtype;
  int64_t axis;
} LinData;

static SrVal *linspace_body(SrInterp *I, SrArgs *a) {
  LinData *d = sr_current_builtin(I)->data;
  SrVal *start = a->v[0], *stop = a->v[1];
  SrVal *ss[2] = {start, stop};
  int weak;
  SrDtype dt = d->dtype >= 0 ? (SrDtype)d->dtype : to_inexact(I, sr_jnp_result_dtype(I, 2, ss, &weak));
  SrDtype comp = to_inexact(I, dt);
  SrVal *s = sr_lax_convert(I, start, comp, 0, NULL), *e = s ? sr_lax_convert(I, stop, comp, 0, NULL) : NULL;
  SrVal *out = NULL, *delta = NULL, *r = NULL;
  if (!e) goto done;
  const SrType *st = vtype(I, s), *et = vtype(I, e);
  /* bounds_shape = broadcast_shapes(start, stop) */
  int64_t bshape[SR_MAX_RANK];
  int bn = st->ndim > et->ndim ? st->ndim : et->ndim;
  for (int i = 0; i < bn; i++) {
    int si = i - (bn - st->ndim), ei = i - (bn - et->ndim);
    int64_t a1 = si >= 0 ? st->dims[si].size : 1, a2 = ei >= 0 ? et->dims[ei].size : 1;
    bshape[i] = a1 == 1 ? a2 : a1;
  }
  SrVal *bs = sr_lax_broadcast_to(I, s, bshape, bn, NULL);
  SrVal *be = bs ? sr_lax_broadcast_to(I, e, bshape, bn, NULL) : NULL;
  if (!be) {
    sr_unref(bs);
    goto done;
  }
  int64_t axis = d->axis < 0 ? bn + d->axis + 1 : d->axis;
  int64_t rshape[SR_MAX_RANK];
  for (int i = 0, k = 0; i <= bn; i++) rshape[i] = i == axis ? 1 : bshape[k++];
  int64_t div = d->endpoint ? d->num - 1 : d->num;
  if (d->num > 1) {
    SrVal *diff = sr_lax_binary(I, SR_P_sub, e, s);
    SrVal *dv = sr_float(NULL, (double)div), *dvc = sr_lax_convert(I, dv, comp, 0, NULL);
    delta = diff && dvc ? call_np2(I, "true_divide", diff, dvc) : NULL;
    int64_t ishape[SR_MAX_RANK];
    for (int i = 0; i <= bn; i++) ishape[i] = i == axis ? div : 1;
    SrVal *io = delta ? sr_lax_iota(I, comp, &div, 1, 0, NULL) : NULL;
    SrVal *ior = io ? sr_lax_reshape(I, io, ishape, bn + 1, NULL) : NULL;
    SrVal *step = ior ? call_np2(I, "true_divide", ior, dvc) : NULL;
    SrVal *one = sr_int(NULL, 1);
    SrVal *sr1 = step ? sr_lax_reshape(I, bs, rshape, bn + 1, NULL) : NULL;
    SrVal *oms = sr1 ? call_np2(I, "subtract", one, step) : NULL;
    SrVal *m1 = oms ? call_np2(I, "multiply", sr1, oms) : NULL;
    SrVal *er1 = m1 ? sr_lax_reshape(I, be, rshape, bn + 1, NULL) : NULL;
    SrVal *m2 = er1 ? call_np2(I, "multiply", er1, step) : NULL;
    out = m2 ? call_np2(I, "add", m1, m2) : NULL;
    if (out && d->endpoint) {
      SrVal *ex = sr_lax_expand_dims(I, be, &axis, 1);
      SrVal *cat[2] = {out, ex};
      SrVal *c = ex ? sr_lax_concatenate(I, 2, cat, (int)axis) : NULL;
      sr_unref(ex);
      sr_unref(out);
      out = c;
    }
    sr_unref(diff);
    sr_unref(dv);
    sr_unref(dvc);
    sr_unref(io);
    sr_unref(ior);
    sr_unref(step);
    sr_unref(one);
    sr_unref(sr1);
    sr_unref(oms);
    sr_unref(m1);
    sr_unref(er1);
    sr_unref(m2);
  } else {
    /* delta is nan, or for one sample without the endpoint stop - start */
    SrVal *nan = sr_float(NULL, NAN);
    delta = d->num == 1 && !d->endpoint ? sr_lax_binary(I, SR_P_sub, e, s) : sr_lax_convert(I, nan, comp, 0, NULL);
    sr_unref(nan);
    if (d->num == 1) {
      out = delta ? sr_lax_reshape(I, bs, rshape, bn + 1, NULL) : NULL;
    } else if (delta) {
      /* num == 0: empty(bounds shape with a 0 at axis, dtype) */
      rshape[axis] = 0;
      SrVal *zero = sr_int(NULL, 0);
      out = sr_lax_full(I, rshape, bn + 1, zero, dt, NULL);
      sr_unref(zero);
    }
  }
  sr_unref(bs);
  sr_unref(be);
  if (!out) goto done;
  if (sr_dtype_is_int(dt) && !sr_dtype_is_int(vtype(I, out)->dtype)) {
    SrVal *f = sr_lax_unary(I, SR_P_floor, out);
    sr_unref(out);
    if (!(out = f)) goto done;
  }
  r = sr_lax_convert(I, out, dt, 0, NULL);
  if (r && d->retstep) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, t, r);
    sr_seq_push(NULL, t, delta ? sr_ref(delta) : sr_none());
    r = t;
  }
done:
  sr_unref(s);
  sr_unref(e);
  sr_unref(out);
  sr_unref(delta);
  return r;
}

static SrVal *jnp_linspace(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  if (sr_args_parse(I, a, "linspace", "start, stop, num=, endpoint=, retstep=, dtype=, axis=, *, device=", p) < 0)
    return NULL;
  LinData *d = sr_xcalloc(1, sizeof *d);
  d->num = 50;
  d->endpoint = !p[3] || sr_val_truthy(p[3]);
  d->retstep = p[4] && sr_val_truthy(p[4]);
  if ((p[2] && sr_as_int(I, p[2], "num", &d->num) < 0) || sr_dtype_arg(I, p[5], &d->dtype, "linspace") < 0 ||
      (p[6] && sr_as_int(I, p[6], "axis", &d->axis) < 0)) {
    free(d);
    return NULL;
  }
  if (d->num < 0) {
    long long num = (long long)d->num;
    free(d);
    return sr_raise(I, "ValueError", "Number of samples, %lld, must be non-negative.", num);
  }
  SrVal *args[2] = {p[0], p[1]};
  return sr_api_jit(I, "_linspace", linspace_body, d, 2, args);
}

/* ======================================================================
 * stack, concatenate, where, clip, round, isclose, allclose
 * ====================================================================== */

/* _concatenate_array: concatenate of one array (an ndarray or a
   jax.Array rather than a list) along axis: a reshape of it, reading its
   leading axis where axis + 1 is */
static SrVal *concatenate_array(SrInterp *I, SrVal *arrays, SrVal *axisv, SrVal *dtype) {
  int dt;
  if (sr_dtype_arg(I, dtype, &dt, "concatenate") < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, arrays, dt);
  const SrType *t = x ? vtype(I, x) : NULL;
  SrVal *r = NULL;
  int64_t axis = 0;
  if (!t) return NULL;
  if (t->ndim == 0 || t->dims[0].size == 0) {
    sr_raise(I, "ValueError", "Need at least one array to concatenate.");
  } else if (axisv && axisv->kind == SR_V_NONE) {
    int64_t n = sr_type_numel(t);
    r = sr_lax_reshape(I, x, &n, 1, NULL);
  } else if (t->ndim == 1) {
    sr_raise(I, "ValueError", "Zero-dimensional arrays cannot be concatenated.");
  } else if ((!axisv || sr_as_int(I, axisv, "axis", &axis) == 0) && sr_api_axis(I, axis, t->ndim - 1, &axis) == 0) {
    int64_t shape[SR_MAX_RANK], dims[SR_MAX_RANK];
    int nd = 0, k = 0;
    for (int i = 1; i <= axis; i++) shape[nd++] = t->dims[i].size;
    shape[nd++] = t->dims[0].size * t->dims[axis + 1].size;
    for (int i = (int)axis + 2; i < t->ndim; i++) shape[nd++] = t->dims[i].size;
    for (int i = 1; i <= axis; i++) dims[k++] = i;
    dims[k++] = 0;
    for (int i = (int)axis + 1; i < t->ndim; i++) dims[k++] = i;
    SrNnScope s_ = {I, {0}, 0}, *s = &s_;
    SrVal *v[3] = {x, sr_nn_keep(s, sr_int_tuple(shape, nd)), sr_nn_keep(s, sr_int_tuple(dims, k))};
    r = sr_nn_done(s, sr_nn_call(s, "jax.lax.reshape", 3, v, 0, NULL, NULL));
  }
  sr_unref(x);
  return r;
}

static int is_one_array(SrVal *v) { return !sr_is_seq(v) && sr_array_of(v) != NULL; }

static SrVal *jnp_concatenate(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "concatenate", "arrays, axis=, dtype=", p) < 0) return NULL;
  if (is_one_array(p[0])) return concatenate_array(I, p[0], p[1], p[2]);
  if (!sr_is_seq(p[0])) return sr_raise(I, "TypeError", "concatenate: arrays must be a sequence of arrays");
  int n = p[0]->seq.n, dt;
  if (!n) return sr_raise(I, "ValueError", "Need at least one array to concatenate.");
  if (sr_dtype_arg(I, p[2], &dt, "concatenate") < 0) return NULL;
  SrVal **xs = sr_xcalloc((size_t)n + 1, sizeof *xs);
  for (int i = 0; i < n; i++) xs[i] = p[0]->seq.items[i];
  SrVal *r = NULL;
  int rc;
  if (dt < 0) {
    rc = promote_dtypes(I, n, xs, 0);
  } else {
    rc = 0;
    for (int i = 0; i < n && !rc; i++) {
      xs[i] = sr_jnp_asarray(I, p[0]->seq.items[i], dt);
      if (!xs[i]) {
        unref_all(i, xs);
        rc = -1;
      }
    }
  }
  if (rc == 0) {
    const SrType *t0 = vtype(I, xs[0]);
    int64_t axis = 0;
    if (p[1] && p[1]->kind == SR_V_NONE) {
      /* concatenate([ravel(a) for a in arrays], axis=0) */
      int ok = 1;
      for (int i = 0; i < n && ok; i++) {
        int64_t sz = sr_type_numel(vtype(I, xs[i]));
        SrVal *rv = sr_lax_reshape(I, xs[i], &sz, 1, NULL);
        if (rv) {
          sr_unref(xs[i]);
          xs[i] = rv;
        } else {
          ok = 0;
        }
      }
      if (ok) r = sr_lax_concatenate(I, n, xs, 0);
    } else if (t0->ndim == 0) {
      sr_raise(I, "ValueError", "Zero-dimensional arrays cannot be concatenated.");
    } else if ((!p[1] || sr_as_int(I, p[1], "axis", &axis) == 0) && sr_api_axis(I, axis, t0->ndim, &axis) == 0) {
      r = sr_lax_concatenate(I, n, xs, (int)axis);
    }
    unref_all(n, xs);
  }
  free(xs);
  return r;
}

/* jnp.stack of a sequence: lax.stack, one stack primitive (JAX's stack_p) */
static SrVal *jnp_stack(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "stack", "arrays, axis=, out=, dtype=", p) < 0) return NULL;
  if (is_one_array(p[0])) {
    /* one array: concatenate(expand_dims(arrays, axis + 1), axis=axis) */
    const SrType *t = vtype(I, p[0]);
    int64_t axis = 0;
    if (!t) return NULL;
    if (t->ndim == 0 || t->dims[0].size == 0) return sr_raise(I, "ValueError", "Need at least one array to stack.");
    if (p[2] && p[2]->kind != SR_V_NONE)
      return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.stack is not supported.");
    if ((p[1] && sr_as_int(I, p[1], "axis", &axis) < 0) || sr_api_axis(I, axis, t->ndim, &axis) < 0) return NULL;
    SrNnScope s_ = {I, {0}, 0}, *s = &s_;
    SrVal *e = sr_nn_call2(s, "jax.numpy.expand_dims", p[0], sr_nn_int(s, axis + 1));
    SrVal *ax = sr_nn_keep(s, sr_int(NULL, axis));
    return sr_nn_done(s, e ? sr_nn_keep(s, concatenate_array(I, e, ax, p[3])) : NULL);
  }
  if (!sr_is_seq(p[0])) return sr_raise(I, "TypeError", "stack: arrays must be a sequence of arrays");
  int n = p[0]->seq.n, dt;
  if (!n) return sr_raise(I, "ValueError", "Need at least one array to stack.");
  if (sr_dtype_arg(I, p[3], &dt, "stack") < 0) return NULL;
  SrVal **xs = sr_xcalloc((size_t)n + 1, sizeof *xs);
  for (int i = 0; i < n; i++) xs[i] = p[0]->seq.items[i];
  SrVal *r = NULL;
  int rc = 0;
  if (dt < 0) {
    rc = promote_dtypes(I, n, xs, 0);
  } else {
    for (int i = 0; i < n && !rc; i++)
      if (!(xs[i] = sr_jnp_asarray(I, p[0]->seq.items[i], dt))) {
        unref_all(i, xs);
        rc = -1;
      }
  }
  if (rc == 0) {
    const SrType *t0 = vtype(I, xs[0]);
    int64_t axis = 0;
    if ((!p[1] || sr_as_int(I, p[1], "axis", &axis) == 0) && sr_api_axis(I, axis, t0->ndim + 1, &axis) == 0 &&
        sr_auto_insert_reshard(I, n, xs) == 0) {
      const SrPrim *prim = sr_prim_lookup("stack", 5);
      SrPList ps = {0};
      sr_plist_add(&ps, "axis", sr_int(NULL, axis));
      r = sr_bind_prim(I, prim, n, xs, ps.n, ps.p, NULL, 0);
      sr_plist_free(&ps);
    }
    unref_all(n, xs);
  }
  free(xs);
  return r;
}

/* lax.broadcast_shardings: the sharding of n operands broadcast to nd
   dimensions, each dimension taking the first sharded entry among the
   operands that are not size 1 there (the rule of the primitive that
   follows reports entries that disagree); NULL when none is sharded. */
static SrVal *broadcast_shardings(SrInterp *I, int n, SrVal *const *xs, int nd) {
  SrShardSpec r;
  memset(&r, 0, sizeof r);
  r.ndim = nd;
  int any = 0;
  for (int i = 0; i < n; i++) {
    const SrType *t = vtype(I, xs[i]);
    SrShardSpec s;
    sr_shard_of_type(t, &s);
    for (int d = 0; d < t->ndim; d++) {
      int o = nd - t->ndim + d;
      if (!s.nax[d] || t->dims[d].size == 1 || r.nax[o]) continue;
      if (r.mesh && r.mesh != s.mesh) continue;
      r.mesh = s.mesh;
      r.nax[o] = s.nax[d];
      memcpy(r.ax[o], s.ax[d], sizeof r.ax[o]);
      any = 1;
    }
  }
  if (!any) return NULL;
  SrVal *spec = sr_shard_to_spec_val(&r), *sh = NULL;
  if (sr_api_canon_sharding(I, spec, "jnp.broadcast_to", &sh) < 0) sr_exc_clear(I);
  sr_unref(spec);
  return sh;
}

/* util._where (a jit named _where) */
static SrVal *where_body(SrInterp *I, SrArgs *a) {
  SrVal *c = sr_ref(a->v[0]), *xy[2] = {a->v[1], a->v[2]}, *r = NULL;
  const SrType *ct = vtype(I, c);
  if (ct->dtype != SR_BOOL) {
    SrVal *z = sr_int(NULL, 0), *zc = sr_lax_convert(I, z, ct->dtype, ct->weak, NULL);
    SrVal *nc = zc ? sr_lax_binary(I, SR_P_ne, c, zc) : NULL;
    sr_unref(z);
    sr_unref(zc);
    sr_unref(c);
    if (!(c = nc)) return NULL;
  }
  if (promote_dtypes(I, 2, xy, 0) < 0) {
    sr_unref(c);
    return NULL;
  }
  /* _broadcast_arrays: to the broadcast shape of (cond,) x, y */
  SrVal *all[3] = {c, xy[0], xy[1]};
  int first = vtype(I, c)->ndim == 0 ? 1 : 0;
  int64_t shape[SR_MAX_RANK];
  int nd = 0, ok = 1;
  for (int i = first; i < 3; i++) nd = vtype(I, all[i])->ndim > nd ? vtype(I, all[i])->ndim : nd;
  for (int d = 0; d < nd; d++) shape[d] = 1;
  for (int i = first; i < 3 && ok; i++) {
    const SrType *t = vtype(I, all[i]);
    for (int d = 0; d < t->ndim; d++) {
      int64_t s = t->dims[d].size, *o = &shape[nd - t->ndim + d];
      if (s != 1 && *o != 1 && *o != s) ok = 0;
      else if (s != 1) *o = s;
    }
  }
  if (!ok) {
    /* lax.broadcast_shapes' ValueError, the shapes of its arguments */
    SrBuf m = SR_BUF_INIT;
    for (int i = first; i < 3; i++) {
      if (i > first) sr_buf_puts(&m, ", ");
      sr_shape_str(&m, vtype(I, all[i]));
    }
    sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=[%s]", sr_buf_str(&m));
    sr_buf_free(&m);
  } else {
    SrVal *b[3] = {sr_ref(c), NULL, NULL};
    SrVal *sh = broadcast_shardings(I, 3 - first, all + first, nd);
    int good = 1;
    for (int i = first; i < 3 && good; i++) {
      if (i == 0) sr_unref(b[0]);
      b[i] = sr_lax_broadcast_to(I, all[i], shape, nd, sh);
      good = b[i] != NULL;
    }
    if (good) r = sr_lax_select(I, b[0], b[1], b[2]);
    unref_all(3, b);
    sr_unref(sh);
  }
  sr_unref(c);
  unref_all(2, xy);
  return r;
}

static SrVal *jnp_where(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "where", "condition, x=, y=, *, size=, fill_value=", p) < 0) return NULL;
  if (!p[1] && !p[2]) return sr_jnp_where_nonzero(I, p[0], p[3], p[4]);
  if (!p[1] || !p[2])
    return sr_raise(I, "ValueError", "Either both or neither of the x and y arguments should be provided to jax.numpy.where");
  SrVal *args[3];
  int ok = 1;
  for (int i = 0; i < 3 && ok; i++) ok = (args[i] = arr(I, p[i])) != NULL;
  if (!ok) return NULL;
  SrVal *r = sr_api_jit(I, "_where", where_body, NULL, 3, args);
  unref_all(3, args);
  return r;
}

/* clip: maximum(min, arr), then minimum(max, arr) (a jit named clip) */
static SrVal *clip_body(SrInterp *I, SrArgs *a) {
  int *which = sr_current_builtin(I)->data;
  SrVal *x = sr_ref(a->v[0]);
  int k = 1;
  for (int pass = 0; pass < 2 && x; pass++) {
    if (!(which[0] & (1 << pass))) continue;
    SrVal *y = call_np2(I, pass == 0 ? "maximum" : "minimum", a->v[k++], x);
    sr_unref(x);
    x = y;
  }
  return x;
}

static SrVal *jnp_clip(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "clip", "arr, min=, max=", p) < 0) return NULL;
  for (int i = 0; i < 3; i++) {
    const SrType *t = p[i] && p[i]->kind != SR_V_NONE ? vtype(I, p[i]) : NULL;
    if (t && sr_dtype_kind(t->dtype) == SR_DK_COMPLEX)
      return sr_raise(I, "ValueError", "Clip received a complex value either through the input or the min/max keywords. Complex values have no ordering and cannot be clipped. Please convert to a real value or array by taking the real or imaginary components via jax.numpy.real/imag respectively.");
  }
  int *which = sr_xcalloc(1, sizeof *which);
  SrVal *args[3] = {p[0], NULL, NULL};
  int n = 1;
  if (p[1] && p[1]->kind != SR_V_NONE) {
    which[0] |= 1;
    args[n++] = p[1];
  }
  if (p[2] && p[2]->kind != SR_V_NONE) {
    which[0] |= 2;
    args[n++] = p[2];
  }
  return sr_api_jit(I, "clip", clip_body, which, n, args);
}

/* _round_float: round[rounding_method=1] of x * 10**dec, / 10**dec */
static SrVal *round_float(SrInterp *I, SrVal *x, int64_t dec) {
  const SrType *t = vtype(I, x);
  if (dec == 0) return sr_bindv(I, SR_P_round, 1, &x, "rounding_method", sr_int(NULL, 1), NULL);
  SrVal *xx = t->dtype == SR_F16 ? sr_lax_convert(I, x, SR_F32, 0, NULL) : sr_ref(x);
  SrVal *f = sr_float(NULL, pow(10.0, (double)dec));
  SrVal *fc = xx ? sr_lax_convert(I, f, vtype(I, xx)->dtype, 0, NULL) : NULL;
  SrVal *m = fc ? sr_lax_binary(I, SR_P_mul, xx, fc) : NULL;
  SrVal *rd = m ? sr_bindv(I, SR_P_round, 1, &m, "rounding_method", sr_int(NULL, 1), NULL) : NULL;
  SrVal *r = rd ? sr_lax_binary(I, SR_P_div, rd, fc) : NULL;
  if (r && t->dtype == SR_F16) {
    SrVal *c = sr_lax_convert(I, r, SR_F16, 0, NULL);
    sr_unref(r);
    r = c;
  }
  sr_unref(xx);
  sr_unref(f);
  sr_unref(fc);
  sr_unref(m);
  sr_unref(rd);
  return r;
}

/* round: a jit named round; round[rounding_method=1] for floats, of each
   part for complex numbers */
static SrVal *round_body(SrInterp *I, SrArgs *a) {
  int64_t dec = *(int64_t *)sr_current_builtin(I)->data;
  SrVal *x = a->v[0];
  const SrType *t = vtype(I, x);
  if (sr_dtype_is_int(t->dtype) || t->dtype == SR_BOOL) {
    if (dec < 0) return sr_raise(I, "NotImplementedError", "integer np.round not implemented for decimals < 0");
    return sr_ref(x);
  }
  /* decimals > log10(finfo(dtype).max): rounding beyond the precision is a no-op */
  double lmax = t->dtype == SR_F16 ? 4.816 : (t->dtype == SR_F64 || t->dtype == SR_C128) ? 308.25 : 38.53;
  if ((double)dec > lmax) return sr_ref(x);
  if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    SrVal *re = sr_lax_unary(I, SR_P_real, x), *im = re ? sr_lax_unary(I, SR_P_imag, x) : NULL;
    SrVal *rr = im ? round_float(I, re, dec) : NULL, *ri = rr ? round_float(I, im, dec) : NULL;
    SrVal *r = ri ? sr_lax_binary(I, SR_P_complex, rr, ri) : NULL;
    sr_unref(re);
    sr_unref(im);
    sr_unref(rr);
    sr_unref(ri);
    return r;
  }
  return round_float(I, x, dec);
}

static SrVal *jnp_round(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "round", "a, decimals=, out=", p) < 0) return NULL;
  int64_t *dec = sr_xcalloc(1, sizeof *dec);
  if (p[1] && sr_as_int(I, p[1], "decimals", dec) < 0) {
    free(dec);
    return NULL;
  }
  SrVal *x = arr(I, p[0]);
  if (!x) {
    free(dec);
    return NULL;
  }
  SrVal *r = sr_api_jit(I, "round", round_body, dec, 1, &x);
  sr_unref(x);
  return r;
}

/* isclose (a jit named isclose; equal_nan is static).  rtol and atol are
   arguments of the jit only when the caller passes them; the defaults stay
   Python floats inside, as with JAX's jit of a function with defaults. */
typedef struct CloseData {
  int equal_nan, dyn_rtol, dyn_atol;
} CloseData;

static SrVal *isclose_body(SrInterp *I, SrArgs *a) {
  CloseData *cd = sr_current_builtin(I)->data;
  int k = 2;
  SrVal *rtol_v = cd->dyn_rtol ? sr_ref(a->v[k++]) : sr_float(NULL, 1e-05);
  SrVal *atol_v = cd->dyn_atol ? sr_ref(a->v[k++]) : sr_float(NULL, 1e-08);
  SrVal *ab[2] = {a->v[0], a->v[1]};
  if (sr_jnp_promote(I, 2, ab, "isclose") < 0) {
    sr_unref(rtol_v);
    sr_unref(atol_v);
    return NULL;
  }
  SrVal *ab2[2] = {ab[0], ab[1]};
  int rc = promote_dtypes(I, 2, ab2, 1);
  unref_all(2, ab);
  if (rc < 0) {
    sr_unref(rtol_v);
    sr_unref(atol_v);
    return NULL;
  }
  SrVal *x = ab2[0], *y = ab2[1];
  SrDtype dt = vtype(I, x)->dtype;
  if (dt == SR_C64) dt = SR_F32;
  if (dt == SR_C128) dt = SR_F64;
  SrVal *rtol = sr_lax_convert(I, rtol_v, dt, 0, NULL);
  SrVal *atol = rtol ? sr_lax_convert(I, atol_v, dt, 0, NULL) : NULL;
  SrVal *nx = atol ? sr_lax_binary(I, SR_P_ne, x, x) : NULL;
  SrVal *ny = nx ? sr_lax_binary(I, SR_P_ne, y, y) : NULL;
  SrVal *both_nan = ny ? sr_lax_binary(I, SR_P_and, nx, ny) : NULL;
  SrVal *fin = both_nan ? sr_call1(I, sr_lookup_qualname("jax.numpy.isfinite"), y) : NULL; /* ufuncs.isfinite */
  SrVal *d = fin ? sr_lax_binary(I, SR_P_sub, x, y) : NULL;
  SrVal *ad = d ? sr_lax_unary(I, SR_P_abs, d) : NULL;
  SrVal *ay = ad ? sr_lax_unary(I, SR_P_abs, y) : NULL;
  SrVal *m = ay ? sr_lax_binary(I, SR_P_mul, rtol, ay) : NULL;
  SrVal *s = m ? sr_lax_binary(I, SR_P_add, atol, m) : NULL;
  SrVal *in_range = s ? sr_lax_binary(I, SR_P_le, ad, s) : NULL;
  SrVal *eq = in_range ? sr_lax_binary(I, SR_P_eq, x, y) : NULL;
  SrVal *fr = eq ? sr_lax_binary(I, SR_P_and, fin, in_range) : NULL;
  SrVal *out = fr ? sr_lax_binary(I, SR_P_or, eq, fr) : NULL;
  if (out && cd->equal_nan) {
    SrVal *o2 = sr_lax_binary(I, SR_P_or, out, both_nan);
    sr_unref(out);
    out = o2;
  }
  SrVal *tmp[] = {x, y, rtol, atol, nx, ny, both_nan, fin, d, ad, ay, m, s, in_range, eq, fr, rtol_v, atol_v};
  unref_all((int)(sizeof tmp / sizeof tmp[0]), tmp);
  return out;
}

static int close_args(SrInterp *I, SrArgs *a, const char *name, SrVal **args, int *n, CloseData **cdp) {
  SrVal *p[5];
  if (sr_args_parse(I, a, name, "a, b, rtol=, atol=, equal_nan=", p) < 0) return -1;
  args[0] = arr(I, p[0]);
  args[1] = args[0] ? arr(I, p[1]) : NULL;
  if (!args[1]) {
    sr_unref(args[0]);
    return -1;
  }
  CloseData *cd = sr_xcalloc(1, sizeof *cd);
  *n = 2;
  if (p[2]) {
    args[(*n)++] = sr_ref(p[2]);
    cd->dyn_rtol = 1;
  }
  if (p[3]) {
    args[(*n)++] = sr_ref(p[3]);
    cd->dyn_atol = 1;
  }
  cd->equal_nan = p[4] && sr_val_truthy(p[4]);
  *cdp = cd;
  return 0;
}

static SrVal *jnp_isclose(SrInterp *I, SrArgs *a) {
  SrVal *args[4];
  int n;
  CloseData *cd;
  if (close_args(I, a, "isclose", args, &n, &cd) < 0) return NULL;
  SrVal *r = sr_api_jit(I, "isclose", isclose_body, cd, n, args);
  unref_all(n, args);
  return r;
}

/* allclose: all(isclose(a, b, rtol, atol, equal_nan)), rtol and atol
   passed on to isclose's jit explicitly */
static SrVal *allclose_body(SrInterp *I, SrArgs *a) {
  CloseData *outer = sr_current_builtin(I)->data;
  CloseData *cd = sr_xcalloc(1, sizeof *cd);
  cd->equal_nan = outer->equal_nan;
  cd->dyn_rtol = cd->dyn_atol = 1;
  int k = 2;
  SrVal *args[4] = {a->v[0], a->v[1], NULL, NULL};
  args[2] = outer->dyn_rtol ? sr_ref(a->v[k++]) : sr_float(NULL, 1e-05);
  args[3] = outer->dyn_atol ? sr_ref(a->v[k++]) : sr_float(NULL, 1e-08);
  SrVal *c = sr_api_jit(I, "isclose", isclose_body, cd, 4, args);
  sr_unref(args[2]);
  sr_unref(args[3]);
  if (!c) return NULL;
  SrVal *r = reduction(I, c, RED_ALL, "all", NULL, -1, 0, 0, NULL);
  sr_unref(c);
  return r;
}

static SrVal *jnp_allclose(SrInterp *I, SrArgs *a) {
  SrVal *args[4];
  int n;
  CloseData *cd;
  if (close_args(I, a, "allclose", args, &n, &cd) < 0) return NULL;
  SrVal *r = sr_api_jit(I, "allclose", allclose_body, cd, n, args);
  unref_all(n, args);
  return r;
}

/* ======================================================================
 * elementwise: square, exp2, log1p, expm1, floor, ceil, sigmoid, astype
 * ====================================================================== */

/* promote_args_inexact (kind 1) / promote_dtypes_numeric (kind 2), then
   one lax primitive */
static SrVal *unary_promoted(SrInterp *I, SrArgs *a, const char *name, int prim, int kind) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "%s() takes 1 positional argument", name);
  SrVal *x = a->v[0];
  if (promote_dtypes(I, 1, &x, kind) < 0) return NULL;
  SrVal *r = sr_lax_unary(I, prim, x);
  sr_unref(x);
  return r;
}

static SrVal *jnp_square(SrInterp *I, SrArgs *a) { return unary_promoted(I, a, "square", SR_P_square, 2); }
static SrVal *jnp_exp2(SrInterp *I, SrArgs *a) { return unary_promoted(I, a, "exp2", SR_P_exp2, 1); }
static SrVal *jnp_log1p(SrInterp *I, SrArgs *a) { return unary_promoted(I, a, "log1p", SR_P_log1p, 1); }
static SrVal *jnp_expm1(SrInterp *I, SrArgs *a) { return unary_promoted(I, a, "expm1", SR_P_expm1, 1); }

static SrVal *floor_ceil(SrInterp *I, SrArgs *a, const char *name, int prim) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "%s() takes 1 positional argument", name);
  SrVal *x = arr(I, a->v[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  if (sr_dtype_is_int(t->dtype) || t->dtype == SR_BOOL) return x;
  sr_unref(x);
  return unary_promoted(I, a, name, prim, 1);
}

static SrVal *jnp_floor(SrInterp *I, SrArgs *a) { return floor_ceil(I, a, "floor", SR_P_floor); }
static SrVal *jnp_ceil(SrInterp *I, SrArgs *a) { return floor_ceil(I, a, "ceil", SR_P_ceil); }

static SrVal *jnp_astype(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  int dt;
  if (sr_args_parse(I, a, "astype", "x, dtype, *, copy=, device=", p) < 0) return NULL;
  if (sr_dtype_arg(I, p[1], &dt, "astype") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  SrVal *r;
  if (dt == SR_BOOL && sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    SrVal *z = sr_int(NULL, 0), *zc = sr_lax_convert(I, z, t->dtype, 0, NULL);
    r = zc ? sr_lax_binary(I, SR_P_ne, x, zc) : NULL;
    sr_unref(z);
    sr_unref(zc);
  } else {
    r = sr_lax_convert(I, x, dt < 0 ? default_float(I) : (SrDtype)dt, 0, NULL);
  }
  sr_unref(x);
  return r;
}

/* ufuncs._to_bool */
static SrVal *to_bool(SrInterp *I, SrVal *x) {
  const SrType *t = vtype(I, x);
  if (t->dtype == SR_BOOL) return sr_ref(x);
  SrVal *z = sr_int(NULL, 0), *zc = sr_lax_convert(I, z, t->dtype, 0, NULL);
  SrVal *r = zc ? sr_lax_binary(I, SR_P_ne, x, zc) : NULL;
  sr_unref(z);
  sr_unref(zc);
  return r;
}

/* logical_and / logical_or / logical_xor: bitwise ops on bools */
static SrVal *logical2(SrInterp *I, SrArgs *a, const char *name, int prim) {
  if (a->n != 2 || a->nkw) return sr_raise(I, "TypeError", "%s() takes 2 positional arguments", name);
  SrVal *args[2] = {a->v[0], a->v[1]};
  if (sr_jnp_promote(I, 2, args, name) < 0) return NULL;
  SrVal *x = to_bool(I, args[0]), *y = x ? to_bool(I, args[1]) : NULL;
  SrVal *r = y ? sr_lax_binary(I, prim, x, y) : NULL;
  SrVal *tmp[] = {args[0], args[1], x, y};
  unref_all(4, tmp);
  return r;
}

static SrVal *jnp_logical_and(SrInterp *I, SrArgs *a) { return logical2(I, a, "logical_and", SR_P_and); }
static SrVal *jnp_logical_or(SrInterp *I, SrArgs *a) { return logical2(I, a, "logical_or", SR_P_or); }
static SrVal *jnp_logical_xor(SrInterp *I, SrArgs *a) { return logical2(I, a, "logical_xor", SR_P_xor); }

static SrVal *jnp_logical_not(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "logical_not() takes 1 positional argument");
  SrVal *x = arr(I, a->v[0]);
  SrVal *b = x ? to_bool(I, x) : NULL;
  SrVal *r = b ? sr_lax_unary(I, SR_P_not, b) : NULL;
  sr_unref(x);
  sr_unref(b);
  return r;
}

static SrVal *jnp_isnan(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "isnan() takes 1 positional argument");
  SrVal *x = arr(I, a->v[0]);
  SrVal *r = x ? sr_lax_binary(I, SR_P_ne, x, x) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *jnp_isfinite(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "isfinite() takes 1 positional argument");
  SrVal *x = arr(I, a->v[0]);
  if (!x) return NULL;
  SrVal *r;
  SrDtype dt = vtype(I, x)->dtype;
  if (sr_dtype_is_float(dt)) {
    r = sr_lax_unary(I, SR_P_is_finite, x);
  } else if (sr_dtype_kind(dt) == SR_DK_COMPLEX) {
    /* both parts finite */
    SrVal *re = sr_lax_unary(I, SR_P_real, x), *im = re ? sr_lax_unary(I, SR_P_imag, x) : NULL;
    SrVal *fr = im ? sr_lax_unary(I, SR_P_is_finite, re) : NULL, *fi = fr ? sr_lax_unary(I, SR_P_is_finite, im) : NULL;
    r = fi ? sr_lax_binary(I, SR_P_and, fr, fi) : NULL;
    sr_unref(re);
    sr_unref(im);
    sr_unref(fr);
    sr_unref(fi);
  } else {
    SrVal *t = sr_bool(1);
    r = full_like(I, x, t, SR_BOOL, NULL, NULL);
    sr_unref(t);
  }
  sr_unref(x);
  return r;
}

/* reciprocal: integer_pow(x, -1) */
static SrVal *jnp_reciprocal(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "reciprocal() takes 1 positional argument");
  SrVal *x = a->v[0];
  if (promote_dtypes(I, 1, &x, 1) < 0) return NULL;
  SrVal *r = sr_bindv(I, SR_P_integer_pow, 1, &x, "y", sr_int(NULL, -1), NULL);
  sr_unref(x);
  return r;
}

/* jnp's _where, called from inside another jnp function */
static SrVal *jit_where(SrInterp *I, SrVal *c, SrVal *x, SrVal *y) {
  SrVal *args[3] = {c, x, y};
  return sr_api_jit(I, "_where", where_body, NULL, 3, args);
}

/* floor_divide (a jit named floor_divide) */
static SrVal *floor_divide_body(SrInterp *I, SrArgs *a) {
  SrVal *xy[2] = {a->v[0], a->v[1]};
  if (promote_dtypes(I, 2, xy, 2) < 0) return NULL;
  SrVal *ab[2] = {xy[0], xy[1]};
  int rc = sr_jnp_promote(I, 2, ab, "floor_divide");
  unref_all(2, xy);
  if (rc < 0) return NULL;
  SrVal *x1 = ab[0], *x2 = ab[1], *r = NULL;
  SrDtype dt = vtype(I, x1)->dtype;
  SrVal *zero = sr_int(NULL, 0), *one = sr_int(NULL, 1);
  if (sr_dtype_kind(dt) == SR_DK_UINT) {
    r = sr_lax_binary(I, SR_P_div, x1, x2);
  } else if (sr_dtype_is_int(dt)) {
    SrVal *q = sr_lax_binary(I, SR_P_div, x1, x2);
    SrVal *s1 = q ? sr_lax_unary(I, SR_P_sign, x1) : NULL;
    SrVal *s2 = s1 ? sr_lax_unary(I, SR_P_sign, x2) : NULL;
    SrVal *ne1 = s2 ? call_np2(I, "not_equal", s1, s2) : NULL;
    SrVal *rm = ne1 ? sr_lax_binary(I, SR_P_rem, x1, x2) : NULL;
    SrVal *ne2 = rm ? call_np2(I, "not_equal", rm, zero) : NULL;
    SrVal *sel = ne2 ? call_np2(I, "logical_and", ne1, ne2) : NULL;
    SrVal *qm = sel ? call_np2(I, "subtract", q, one) : NULL;
    r = qm ? jit_where(I, sel, qm, q) : NULL;
    SrVal *tmp[] = {q, s1, s2, ne1, rm, ne2, sel, qm};
    unref_all(8, tmp);
  } else if (sr_dtype_kind(dt) == SR_DK_COMPLEX) {
    sr_raise(I, "TypeError", "floor_divide does not support complex-valued inputs");
  } else {
    /* _float_divmod(x1, x2)[0] */
    SrVal *fz = sr_float(NULL, 0.), *fo = sr_float(NULL, 1.);
    SrVal *mod = sr_lax_binary(I, SR_P_rem, x1, x2);
    SrVal *z2 = mod ? call_np2(I, "equal", x2, fz) : NULL;
    SrVal *sub = z2 ? sr_lax_binary(I, SR_P_sub, x1, mod) : NULL;
    SrVal *x1c = sub ? jit_where(I, z2, x1, sub) : NULL;
    SrVal *dv = x1c ? sr_lax_binary(I, SR_P_div, x1c, x2) : NULL;
    SrVal *mnz = dv ? call_np2(I, "not_equal", mod, fz) : NULL;
    SrVal *sx2 = mnz ? sr_lax_unary(I, SR_P_sign, x2) : NULL;
    SrVal *smod = sx2 ? sr_lax_unary(I, SR_P_sign, mod) : NULL;
    SrVal *sne = smod ? call_np2(I, "not_equal", sx2, smod) : NULL;
    SrVal *ind = sne ? sr_lax_binary(I, SR_P_and, mnz, sne) : NULL;
    SrVal *mp = ind ? call_np2(I, "add", mod, x2) : NULL;
    SrVal *mod2 = mp ? sr_lax_select(I, ind, mp, mod) : NULL;
    SrVal *dm = mod2 ? call_np2(I, "subtract", dv, fo) : NULL;
    SrVal *div2 = dm ? sr_lax_select(I, ind, dm, dv) : NULL;
    r = div2 ? sr_bindv(I, SR_P_round, 1, &div2, "rounding_method", sr_int(NULL, 0), NULL) : NULL;
    SrVal *tmp[] = {fz, fo, mod, z2, sub, x1c, dv, mnz, sx2, smod, sne, ind, mp, mod2, dm, div2};
    unref_all(16, tmp);
  }
  SrVal *tmp[] = {x1, x2, zero, one};
  unref_all(4, tmp);
  return r;
}

static SrVal *jnp_floor_divide(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->nkw) return sr_raise(I, "TypeError", "floor_divide() takes 2 positional arguments");
  return sr_api_jit(I, "floor_divide", floor_divide_body, NULL, 2, a->v);
}

/* remainder (a jit named remainder); mod is remainder */
static SrVal *remainder_body(SrInterp *I, SrArgs *a) {
  SrVal *xy[2] = {a->v[0], a->v[1]};
  if (promote_dtypes(I, 2, xy, 2) < 0) return NULL;
  SrVal *ab[2] = {xy[0], xy[1]};
  int rc = sr_jnp_promote(I, 2, ab, "remainder");
  unref_all(2, xy);
  if (rc < 0) return NULL;
  SrVal *x1 = ab[0], *x2 = ab[1], *r = NULL;
  SrVal *z = sr_int(NULL, 0), *zero = sr_lax_convert(I, z, vtype(I, x1)->dtype, 0, NULL);
  sr_unref(z);
  if (zero && sr_dtype_is_int(vtype(I, x2)->dtype)) {
    SrVal *zi = sr_int(NULL, 0), *oi = sr_int(NULL, 1);
    SrVal *eq = call_np2(I, "equal", x2, zi);
    SrVal *ones = eq ? full_like(I, x2, oi, -1, NULL, NULL) : NULL;
    SrVal *nx2 = ones ? jit_where(I, eq, ones, x2) : NULL;
    SrVal *tmp[] = {zi, oi, eq, ones, x2};
    unref_all(5, tmp);
    x2 = nx2;
  }
  SrVal *tm = zero && x2 ? sr_lax_binary(I, SR_P_rem, x1, x2) : NULL;
  SrVal *tnz = tm ? sr_lax_binary(I, SR_P_ne, tm, zero) : NULL;
  SrVal *l1 = tnz ? sr_lax_binary(I, SR_P_lt, tm, zero) : NULL;
  SrVal *l2 = l1 ? sr_lax_binary(I, SR_P_lt, x2, zero) : NULL;
  SrVal *n12 = l2 ? sr_lax_binary(I, SR_P_ne, l1, l2) : NULL;
  SrVal *plus = n12 ? sr_lax_binary(I, SR_P_and, n12, tnz) : NULL;
  SrVal *ad = plus ? sr_lax_binary(I, SR_P_add, tm, x2) : NULL;
  r = ad ? sr_lax_select(I, plus, ad, tm) : NULL;
  SrVal *tmp[] = {x1, x2, zero, tm, tnz, l1, l2, n12, plus, ad};
  unref_all(10, tmp);
  return r;
}

SrVal *sr_jnp_remainder(SrInterp *I, SrVal *x, SrVal *y) {
  SrVal *v[2] = {x, y};
  return sr_api_jit(I, "remainder", remainder_body, NULL, 2, v);
}

static SrVal *jnp_remainder(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->nkw) return sr_raise(I, "TypeError", "remainder() takes 2 positional arguments");
  return sr_api_jit(I, "remainder", remainder_body, NULL, 2, a->v);
}

static SrVal *jnp_ndim(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "ndim() takes 1 positional argument");
  SrVal *x = arr(I, a->v[0]);
  SrVal *r = x ? sr_int(NULL, vtype(I, x)->ndim) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *jnp_shape(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "shape() takes 1 positional argument");
  SrVal *x = arr(I, a->v[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  int64_t s[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) s[i] = t->dims[i].size;
  SrVal *r = sr_int_tuple(s, t->ndim);
  sr_unref(x);
  return r;
}

/* util.size(a, axis=None): the product of the axes' sizes */
static SrVal *jnp_size(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "size", "a, axis=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  int64_t n = sr_type_numel(t);
  if (p[1] && p[1]->kind != SR_V_NONE) {
    int64_t ax[SR_MAX_RANK];
    int na = 0;
    if (ints_arg(I, p[1], ax, &na, "axis") < 0) {
      sr_unref(x);
      return NULL;
    }
    n = 1;
    int seen[SR_MAX_RANK] = {0};
    for (int i = 0; i < na; i++) {
      int64_t k = ax[i] < 0 ? ax[i] + t->ndim : ax[i];
      if (k < 0 || k >= t->ndim) {
        sr_unref(x);
        return sr_raise(I, "AxisError", "axis %lld is out of bounds for array of dimension %d", (long long)ax[i],
                        t->ndim);
      }
      if (seen[k]++) {
        /* canonicalize_axis_tuple: the canonical axes */
        SrBuf m = SR_BUF_INIT;
        sr_buf_putc(&m, '(');
        for (int q = 0; q < na; q++)
          sr_buf_printf(&m, q ? ", %lld" : "%lld", (long long)(ax[q] < 0 ? ax[q] + t->ndim : ax[q]));
        sr_buf_puts(&m, na == 1 ? ",)" : ")");
        sr_raise(I, "ValueError", "repeated axis: %s", m.p);
        sr_buf_free(&m);
        sr_unref(x);
        return NULL;
      }
      n *= t->dims[k].size;
    }
  }
  sr_unref(x);
  return sr_int(NULL, n);
}

/* jnp.float32(x) and the other dtype objects called as constructors */
SrVal *sr_jnp_dtype_call(SrInterp *I, SrVal *self, SrArgs *a) {
  if (a->n != 1 || a->nkw)
    return sr_raise(I, "TypeError", "%s() takes exactly one argument", sr_dtype_name(self->dtype));
  /* _ScalarMeta.__call__: asarray(x, dtype=self) */
  int dt;
  if (sr_dtype_arg(I, self, &dt, "asarray") < 0) return NULL;
  return sr_jnp_asarray(I, a->v[0], dt);
}

/* ======================================================================
 * indexing: x[...] (indexing.rewriting_take, static and dynamic slices)
 * ====================================================================== */

typedef enum { IX_NONE, IX_ELLIPSIS, IX_INT, IX_SLICE, IX_ARRAY, IX_DSLICE } IxKind;

typedef struct Ix {
  IxKind kind;
  SrVal *v;
  int64_t i;  /* IX_INT */
} Ix;

static int is_ellipsis(const SrVal *v) {
  return v->kind == SR_V_WORD && v->str.n == 8 && memcmp(v->str.s, "Ellipsis", 8) == 0;
}

/* A 0-d integer array with a known value (concrete, or a literal). */
static int known_int(SrInterp *I, SrVal *v, int64_t *out) {
  SrArrayObj *a = sr_array_of(v);
  if (!a || a->type->ndim != 0 || !sr_dtype_is_int(a->type->dtype)) return 0;
  if (a->kind == SR_AV_ABSTRACT && a->has_value) {
    *out = a->value.i;
    return 1;
  }
  if (a->kind == SR_AV_CONCRETE) {
    SrVal *it = sr_unop(I, SR_OP_ITEM, v);
    int ok = it && it->kind == SR_V_INT;
    if (ok) *out = it->i;
    sr_unref(it);
    if (!ok) sr_exc_clear(I);
    return ok;
  }
  return 0;
}

static SrVal *jnp_getitem(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "_getitem(x, key)");
  SrVal *x = arr(I, a->v[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  SrVal *key = a->v[1];
  int nk = key->kind == SR_V_TUPLE ? key->seq.n : 1;
  SrVal **keys = key->kind == SR_V_TUPLE ? key->seq.items : &key;
  Ix ix[SR_MAX_RANK * 2 + 2];
  int n = 0, consumed = 0, ell = -1, dynamic = 0;
  int64_t dstride = 1;
  SrVal *r = NULL, *cur = NULL;
  SrVal *starts[SR_MAX_RANK] = {0};
  if (nk > SR_MAX_RANK * 2) {
    sr_raise(I, "IndexError", "too many indices");
    goto done;
  }
  for (int k = 0; k < nk; k++) {
    SrVal *v = keys[k];
    Ix e = {IX_NONE, v, 0};
    if (v->kind == SR_V_NONE) {
      e.kind = IX_NONE;
    } else if (is_ellipsis(v)) {
      if (ell >= 0) {
        sr_raise(I, "IndexError", "an index can only have a single ellipsis ('...')");
        goto done;
      }
      e.kind = IX_ELLIPSIS;
      ell = n;
    } else if (v->kind == SR_V_INT) {
      e.kind = IX_INT;
      e.i = v->i;
    } else if (sr_is_obj(v, &sr_slice_class)) {
      if (sr_jnp_validate_slice(I, v, k) < 0) goto done;
      e.kind = IX_SLICE;
    } else if (sr_array_of(v) && sr_array_of(v)->type->ndim == 0 && sr_dtype_is_int(sr_array_of(v)->type->dtype)) {
      e.kind = IX_ARRAY;
      dynamic = 1;
    } else if (sr_jnp_dslice_parts(v, &e.v, &e.i, &dstride)) {
      /* a jax.ds Slice: IndexType.DYNAMIC_SLICE, through dynamic_slice */
      if (e.i < 0 || dstride != 1) {
        sr_raise(I, "NotImplementedError", "jax.ds with a traced size or a stride other than 1 is not supported in indexing");
        goto done;
      }
      e.kind = IX_DSLICE;
      dynamic = 1;
    } else {
      r = sr_jnp_index_gather(I, x, key);
      goto done;
    }
    if (e.kind == IX_INT || e.kind == IX_SLICE || e.kind == IX_ARRAY || e.kind == IX_DSLICE) consumed++;
    ix[n++] = e;
  }
  if (consumed > t->ndim) {
    sr_raise(I, "IndexError", "Too many indices: array is %d-dimensional, but %d were indexed", t->ndim, consumed);
    goto done;
  }
  /* expand the ellipsis (or append one at the end) into full slices */
  {
    Ix ex[SR_MAX_RANK * 2 + 2];
    int m = 0;
    int fill = t->ndim - consumed;
    int at = ell >= 0 ? ell : n;
    for (int k = 0; k < n; k++) {
      if (k == at) {
        for (int f = 0; f < fill; f++) ex[m++] = (Ix){IX_SLICE, NULL, 0};
        if (ix[k].kind == IX_ELLIPSIS) continue;
      }
      ex[m++] = ix[k];
    }
    if (at == n)
      for (int f = 0; f < fill; f++) ex[m++] = (Ix){IX_SLICE, NULL, 0};
    memcpy(ix, ex, (size_t)m * sizeof *ix);
    n = m;
  }
  int64_t start[SR_MAX_RANK], limit[SR_MAX_RANK], stride[SR_MAX_RANK], sizes[SR_MAX_RANK];
  int64_t rev[SR_MAX_RANK], sq[SR_MAX_RANK], newax[SR_MAX_RANK];
  int ns = 0, nrev = 0, nsq = 0, nnew = 0, all_one = 1, trivial = 1;
  for (int k = 0; k < n; k++) {
    Ix *e = &ix[k];
    if (e->kind == IX_NONE) {
      newax[nnew] = ns - nsq + nnew;
      nnew++;
      continue;
    }
    int axis = ns;
    int64_t size = t->dims[axis].size;
    if (e->kind == IX_INT || (e->kind == IX_ARRAY && !dynamic)) {
      int64_t i = e->i;
      if (e->kind == IX_INT && I->jax->check_static_indices && sr_jnp_check_static_index(I, i, axis, size, 1) < 0)
        goto done;
      if (size == 0) {
        sr_raise(I, "IndexError", "index is out of bounds for axis %d with size 0", axis);
        goto done;
      }
      /* to_static_slice: normalized, then clamped into range (JAX checks
         bounds only under jax_check_static_indices) */
      if (i < 0) i += size;
      i = i < 0 ? 0 : i >= size ? size - 1 : i;
      start[ns] = i;
      limit[ns] = i + 1;
      stride[ns] = 1;
      sizes[ns] = 1;
      if (dynamic) starts[ns] = sr_int(NULL, i); /* a Python int, promoted below */
      sq[nsq++] = axis;
      trivial = 0;
      ns++;
    } else if (e->kind == IX_DSLICE && e->v->kind == SR_V_INT) {
      starts[ns] = sr_int(NULL, e->v->i < 0 ? e->v->i + size : e->v->i); /* a Python int, promoted below */
      sizes[ns] = e->i;
      trivial = 0;
      ns++;
    } else if (e->kind == IX_ARRAY || e->kind == IX_DSLICE) {
      if (e->kind == IX_ARRAY && size == 0) {
        /* to_dynamic_slice's check (and the gather's it falls back to) */
        sr_raise(I, "IndexError", "index is out of bounds for axis %d with size 0", axis);
        goto done;
      }
      int64_t kv;
      const SrType *it = vtype(I, e->v);
      if (known_int(I, e->v, &kv)) {
        if (kv < 0) kv += size;
        SrVal *iv = sr_int(NULL, kv);
        starts[ns] = sr_lax_convert(I, iv, it->dtype, 0, NULL);
        sr_unref(iv);
      } else if (sr_dtype_kind(it->dtype) == SR_DK_UINT) {
        starts[ns] = sr_ref(e->v);
      } else {
        /* slicing._dynamic_slice_indices: select(i < 0, i + d, i) */
        SrVal *z = sr_int(NULL, 0), *d = sr_int(NULL, size);
        SrVal *dc = sr_lax_convert(I, d, it->dtype, 0, NULL);
        SrVal *neg = dc ? call_np2(I, "less", e->v, z) : NULL;
        SrVal *sum = neg ? call_np2(I, "add", e->v, dc) : NULL;
        starts[ns] = sum ? sr_lax_select(I, neg, sum, e->v) : NULL;
        SrVal *tmp[] = {z, d, dc, neg, sum};
        unref_all(5, tmp);
      }
      if (!starts[ns]) goto done;
      sizes[ns] = e->kind == IX_DSLICE ? e->i : 1;
      if (e->kind == IX_ARRAY) sq[nsq++] = axis;
      trivial = 0;
      ns++;
    } else {
      int64_t s0, s1, st, cnt;
      if (e->v) {
        if (sr_slice_indices(I, e->v, size, &s0, &s1, &st, &cnt) < 0) goto done;
      } else {
        s0 = 0, s1 = size, st = 1;
      }
      if (dynamic && st != 1 && st != -1) {
        r = sr_jnp_index_gather(I, x, key);
        goto done;
      }
      if (st < 0) {
        /* stop + 1 + abs(start - stop - 1) % abs(stride), as _static_slice's indexer */
        int64_t gap = s0 - s1 - 1 < 0 ? s1 + 1 - s0 : s0 - s1 - 1;
        int64_t ns0 = s1 + 1 + gap % (-st);
        if (!dynamic && ns0 > size) ns0 = size;
        start[ns] = ns0;
        limit[ns] = s0 + 1 > ns0 ? s0 + 1 : ns0;
        stride[ns] = -st;
        sizes[ns] = s0 + 1 - ns0 > 0 ? s0 + 1 - ns0 : 0;
        rev[nrev++] = axis;
        trivial = 0;
      } else {
        start[ns] = s0;
        limit[ns] = s1 > s0 ? s1 : s0;
        stride[ns] = st;
        sizes[ns] = s1 - s0 > 0 ? s1 - s0 : 0;
        if (s0 != 0 || s1 != size || st != 1) trivial = 0;
      }
      if (stride[ns] != 1) all_one = 0;
      if (dynamic) starts[ns] = sr_int(NULL, start[ns]); /* a Python int, promoted below */
      ns++;
    }
  }
  if (!dynamic) {
    int triv = all_one && ns == t->ndim;
    for (int i = 0; triv && i < ns; i++) triv = start[i] == 0 && limit[i] == t->dims[i].size;
    cur = triv ? sr_ref(x) : sr_lax_slice(I, x, start, limit, all_one ? NULL : stride);
  } else if (trivial) {
    cur = sr_ref(x);
  } else {
    /* to_dynamic_slice: with more than one start, every start is converted
       to lax_utils.int_dtype_for_shape(shape, signed=True) -- int32 unless
       a dimension exceeds it -- so that an int8 index and a static 999
       agree (jax issue 31396); a single start keeps its dtype */
    int weak = 0;
    SrDtype sdt = SR_I32;
    for (int i = 0; i < t->ndim; i++)
      if (t->dims[i].size > INT32_MAX) sdt = SR_I64;
    if (ns == 1) sdt = sr_jnp_result_dtype(I, ns, starts, &weak);
    for (int i = 0; i < ns; i++) {
      SrVal *c = sr_lax_convert(I, starts[i], sdt, weak, NULL);
      sr_unref(starts[i]);
      starts[i] = c;
      if (!c) goto done;
    }
    cur = sr_lax_dynamic_slice(I, x, starts, sizes);
  }
  if (cur && nrev) {
    SrVal *y = sr_lax_rev(I, cur, rev, nrev);
    sr_unref(cur);
    cur = y;
  }
  if (cur && nsq) {
    SrVal *y = sr_lax_squeeze(I, cur, sq, nsq);
    sr_unref(cur);
    cur = y;
  }
  if (cur && nnew) {
    SrVal *y = sr_lax_expand_dims(I, cur, newax, nnew);
    sr_unref(cur);
    cur = y;
  }
  r = cur;
done:
  for (int i = 0; i < SR_MAX_RANK; i++) sr_unref(starts[i]);
  sr_unref(x);
  return r;
}

/* ======================================================================
 * registration
 * ====================================================================== */

/* The elementwise functions of jax.numpy's core (ufuncs.py), registered
   before the rest (sr_jnp_init). */
void sr_numpy_elementwise_init(void) {
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
}

void sr_jnp_api_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax.numpy.reshape", jnp_reshape, "reshape(a, shape, order='C', *, out_sharding=None)"},
    {"jax.numpy.ravel jax.Array.method.flatten", jnp_ravel, "ravel(a, order='C', *, out_sharding=None): a reshape to one dimension"},
    {"jax.numpy.transpose jax.numpy.permute_dims", jnp_transpose, "transpose(a, axes=None)"},
    {"jax.numpy.swapaxes", jnp_swapaxes, "swapaxes(a, axis1, axis2)"},
    {"jax.numpy.moveaxis", jnp_moveaxis, "moveaxis(a, source, destination)"},
    {"jax.numpy.squeeze", jnp_squeeze, "squeeze(a, axis=None)"},
    {"jax.numpy.expand_dims", jnp_expand_dims, "expand_dims(a, axis): a broadcast_in_dim"},
    {"jax.numpy.broadcast_to", jnp_broadcast_to, "broadcast_to(array, shape, *, out_sharding=None)"},
    {"jax.numpy.sum", jnp_sum, "sum(a, axis=None, dtype=None, keepdims=False): reduce_sum"},
    {"jax.numpy.prod", jnp_prod, "prod(a, axis=None, dtype=None, keepdims=False): reduce_prod"},
    {"jax.numpy.max jax.numpy.amax", jnp_max, "max(a, axis=None, keepdims=False): reduce_max"},
    {"jax.numpy.min jax.numpy.amin", jnp_min, "min(a, axis=None, keepdims=False): reduce_min"},
    {"jax.numpy.all", jnp_all, "all(a, axis=None, keepdims=False): reduce_and"},
    {"jax.numpy.any", jnp_any, "any(a, axis=None, keepdims=False): reduce_or"},
    {"jax.numpy.mean", jnp_mean, "mean(a, axis=None, dtype=None, keepdims=False): reduce_sum, then div"},
    {"jax.numpy.argmax", jnp_argmax, "argmax(a, axis=None, keepdims=False)"},
    {"jax.numpy.argmin", jnp_argmin, "argmin(a, axis=None, keepdims=False)"},
    {"jax.numpy.cumsum", jnp_cumsum, "cumsum(a, axis=None, dtype=None): jit[name=cumsum]"},
    {"jax.numpy.cumprod", jnp_cumprod, "cumprod(a, axis=None, dtype=None): jit[name=cumprod]"},
    {"jax.numpy.dot", jnp_dot, "dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None)"},
    {"jax.numpy.matmul", jnp_matmul,
     "matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None): also x @ y"},
    {"jax.numpy.zeros", jnp_zeros, "zeros(shape, dtype=None, *, out_sharding=None)"},
    {"jax.numpy.ones", jnp_ones, "ones(shape, dtype=None, *, out_sharding=None)"},
    {"jax.numpy.empty", jnp_empty, "empty(shape, dtype=None, *, out_sharding=None)"},
    {"jax.numpy.full", jnp_full, "full(shape, fill_value, dtype=None, *, out_sharding=None)"},
    {"jax.numpy.zeros_like", jnp_zeros_like, "zeros_like(a, dtype=None, shape=None, *, out_sharding=None)"},
    {"jax.numpy.ones_like", jnp_ones_like, "ones_like(a, dtype=None, shape=None, *, out_sharding=None)"},
    {"jax.numpy.empty_like", jnp_empty_like, "empty_like(a, dtype=None, shape=None, *, out_sharding=None)"},
    {"jax.numpy.full_like", jnp_full_like, "full_like(a, fill_value, dtype=None, shape=None, *, out_sharding=None)"},
    {"jax.numpy.arange numpy.arange", jnp_arange, "arange(start, stop=None, step=None, dtype=None, *, out_sharding=None): iota"},
    {"jax.numpy.eye", jnp_eye, "eye(N, M=None, k=0, dtype=None)"},
    {"jax.numpy.linspace", jnp_linspace, "linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0)"},
    {"jax.numpy.concatenate jax.numpy.concat", jnp_concatenate, "concatenate(arrays, axis=0, dtype=None)"},
    {"jax.numpy.stack", jnp_stack, "stack(arrays, axis=0, dtype=None)"},
    {"jax.numpy.where", jnp_where, "where(condition, x, y): a select_n (false case first) in jit[name=_where]"},
    {"jax.numpy.clip", jnp_clip, "clip(arr, min=None, max=None): jit[name=clip]"},
    {"jax.numpy.round jax.numpy.around", jnp_round, "round(a, decimals=0): jit[name=round]"},
    {"jax.numpy.isclose", jnp_isclose, "isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)"},
    {"jax.numpy.allclose", jnp_allclose, "allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)"},
    {"jax.numpy.square", jnp_square, "square(x)"},
    {"jax.numpy.exp2", jnp_exp2, "exp2(x)"},
    {"jax.numpy.log1p", jnp_log1p, "log1p(x)"},
    {"jax.numpy.expm1", jnp_expm1, "expm1(x)"},
    {"jax.numpy.floor", jnp_floor, "floor(x)"},
    {"jax.numpy.ceil", jnp_ceil, "ceil(x)"},
    {"jax.numpy.astype", jnp_astype, "astype(x, dtype): convert_element_type"},
    {"jax.numpy._getitem", jnp_getitem, "x[key]: static slices, scalar dynamic indices, and gathers for index arrays"},
    {NULL, NULL, NULL},
  }, defs2[] = {
    {"jax.numpy.logical_and", jnp_logical_and, "logical_and(x, y)"},
    {"jax.numpy.logical_or", jnp_logical_or, "logical_or(x, y)"},
    {"jax.numpy.logical_xor", jnp_logical_xor, "logical_xor(x, y)"},
    {"jax.numpy.logical_not", jnp_logical_not, "logical_not(x)"},
    {"jax.numpy.isnan", jnp_isnan, "isnan(x): x != x"},
    {"jax.numpy.isfinite", jnp_isfinite, "isfinite(x)"},
    {"jax.numpy.reciprocal", jnp_reciprocal, "reciprocal(x): integer_pow[y=-1]"},
    {"jax.numpy.floor_divide", jnp_floor_divide, "floor_divide(x, y): x // y, jit[name=floor_divide]"},
    {"jax.numpy.remainder jax.numpy.mod", jnp_remainder, "remainder(x, y): x % y, jit[name=remainder]"},
    {"jax.numpy.ndim", jnp_ndim, "ndim(x)"},
    {"jax.numpy.shape", jnp_shape, "shape(x)"},
    {"jax.numpy.size", jnp_size, "size(x)"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  sr_nn_init();
  sr_jnp_sort_init();
  sr_jnp_searchsorted_init();
  sr_jnp_setops_init();
  sr_jnp_stats_init();
  sr_jnp_shape_init();
  sr_jnp_pad_init();
  sr_scipy_ndimage_init();
  sr_jnp_misc_init();
  sr_printoptions_init();
  sr_jnp_build_init();
  sr_jnp_apiC_init();
  sr_scopes_init();
  sr_user_context_init();
  sr_jnp_linalg_init();
  sr_jnp_einsum_init();
  sr_jnp_info_init();
  sr_jnp_norm_init();
  sr_jnp_apiD_init();
  sr_lax_linalg_api_init();
  sr_linalg16_api_init();
  sr_linalg18_api_init();
  sr_misc16_init();
  for (int i = 0; defs2[i].names; i++) sr_def(defs2[i].names, defs2[i].fn, defs2[i].doc);
  static const struct {
    const char *name;
    double v;
  } consts[] = {{"pi", M_PI}, {"e", M_E}, {"inf", INFINITY}, {"nan", NAN}, {"euler_gamma", 0.5772156649015329}};
  for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++) {
    char q[64];
    snprintf(q, sizeof q, "jax.numpy.%s", consts[i].name);
    sr_register(q, sr_float(NULL, consts[i].v));
    snprintf(q, sizeof q, "numpy.%s", consts[i].name);
    sr_register(q, sr_float(NULL, consts[i].v));
  }
  sr_register("jax.numpy.newaxis", sr_none());
  sr_register("numpy.newaxis", sr_none());
}

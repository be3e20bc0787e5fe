/* ops.c: the one lax-op layer of ops.h, and the rules' faces of it
 * (ad_rules.h's sr_ad_*: the target type's sharding, results pooled).
 *
 * Each operation follows the jax.lax function of the same name, including
 * the shortcuts that decide whether an equation is emitted at all (an
 * identity transpose or reshape is skipped; a scalar constant under a mesh
 * becomes `reshard`), because those decide what a printed jaxpr shows.
 */
#include "ad/ops.h"

#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "check/rule.h"
#include "core/jaxstate.h"
#include "exec/prng.h"
#include "text/print_val.h"
#include "util/mem.h"

/* ---- binding ---- */

SrVal *sr_op_bind(const SrBinder *b, int prim_id, int nin, SrVal **in, int nparams, const SrParam *params) {
  for (int i = 0; i < nin; i++)
    if (!in[i]) return NULL;
  SrInterp *I = b->I;
  if (!b->ad) return sr_bind(I, prim_id, nin, in, nparams, params);
  SrTrace *saved = I->trace;
  I->trace = sr_ad_pick_trace(b->ad, nin, in);
  SrVal *r = sr_bind(I, prim_id, nin, in, nparams, params);
  I->trace = saved;
  return r;
}

SrVal *sr_op_bindva(const SrBinder *b, int prim_id, int nin, SrVal **in, va_list ap) {
  SrPList ps = {0};
  for (;;) {
    const char *k = va_arg(ap, const char *);
    if (!k) break;
    sr_plist_add(&ps, k, va_arg(ap, SrVal *));
  }
  SrVal *r = sr_op_bind(b, prim_id, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

SrVal *sr_op_bindv(const SrBinder *b, int prim_id, int nin, SrVal **in, ...) {
  va_list ap;
  va_start(ap, in);
  SrVal *r = sr_op_bindva(b, prim_id, nin, in, ap);
  va_end(ap);
  return r;
}

SrVal *sr_bindv(SrInterp *I, int prim_id, int nin, SrVal **in, ...) {
  va_list ap;
  va_start(ap, in);
  SrVal *r = sr_op_bindva(SR_BINDER(I), prim_id, nin, in, ap);
  va_end(ap);
  return r;
}

SrVal *sr_op_first(SrVal *r) {
  if (!r || !sr_is_seq(r)) return r;
  SrVal *x = r->seq.n ? sr_ref(r->seq.items[0]) : NULL;
  sr_unref(r);
  return x;
}

/* ---- params ---- */

SrVal *sr_int_tuple(const int64_t *v, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_int(NULL, v[i]));
  return t;
}

SrVal *sr_op_axes_tuple(const SrMesh *m, SrAxes axes) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, sr_axes_count(axes));
  for (int i = 0; m && i < m->n; i++)
    if (axes & (1u << i)) sr_seq_push(NULL, t, sr_str_cstr(NULL, m->names[i]));
  return t;
}

SrAxes sr_op_axes_on(const SrType *t, SrAxes axes, const SrMesh *m) {
  if (!t || !t->mesh || !m) return 0;
  return sr_axes_remap(axes, t->mesh, m);
}

static const SrType *vtype(const SrBinder *b, SrVal *v) { return v ? sr_value_type(b->I, v) : NULL; }
static const SrMesh *ctx_mesh(const SrBinder *b) { return sr_jax_abstract_mesh(b->I->jax); }
static SrVal *sharding_or_none(SrVal *sh) { return sh ? sr_ref(sh) : sr_none(); }

/* Is v a Python scalar or a literal value (whose type has an empty mesh in
   JAX)? */
static int is_literalish(SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  if (!a) return v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL || v->kind == SR_V_COMPLEX;
  return a->kind == SR_AV_ABSTRACT && a->has_value;
}

/* A constant of a rule (a literal value, or no array at all): a numpy
   constant in JAX, not a jax.Array. */
static int is_const(SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  return !a || (a->kind == SR_AV_ABSTRACT && a->has_value);
}

/* ---- shardings of values ---- */

static SrVal *type_spec(const SrType *t) {
  SrShardSpec s;
  sr_shard_of_type(t, &s);
  if (!s.mesh) s.mesh = sr_mesh_empty();
  return sr_shard_to_spec_val(&s);
}

SrVal *sr_op_normalized_sharding(SrVal *sh, int nd) {
  const SrSpec *s = sh->sh.spec;
  if (s->n >= nd) return sr_ref(sh);
  SrSpec t = *s;
  SrSpecEntry e[SR_MAX_RANK];
  for (int i = 0; i < nd && i < SR_MAX_RANK; i++) e[i] = i < s->n ? s->e[i] : (SrSpecEntry){0, NULL};
  t.e = e;
  t.n = nd;
  return sr_sharding_val(NULL, sh->sh.mesh, &t, sh->sh.memory_kind);
}

int sr_op_has_sharding(SrInterp *I, SrVal *x, SrVal *sh) {
  const SrType *t = sr_value_type(I, x);
  if (is_literalish(x)) return 0;
  SrVal *a = type_spec(t);
  SrVal *b = sr_op_normalized_sharding(sh, t->ndim);
  SrVal *bs = sr_spec_val(NULL, b->sh.spec);
  SrBuf x1 = SR_BUF_INIT, x2 = SR_BUF_INIT;
  sr_val_repr(&x1, a);
  sr_val_repr(&x2, bs);
  int eq = strcmp(sr_buf_str(&x1), sr_buf_str(&x2)) == 0;
  sr_buf_free(&x1);
  sr_buf_free(&x2);
  sr_unref(a);
  sr_unref(b);
  sr_unref(bs);
  return eq;
}

/* ---- pvary and auto_insert_reshard (core.py) ---- */

SrVal *sr_op_axes_cast(const SrBinder *b, int prim, SrVal *x, SrAxes axes, const SrMesh *m) {
  if (!x) return NULL;
  if (!axes) return sr_ref(x);
  if (!m) m = ctx_mesh(b);
  if (!b->I->jax->check_vma) {
    /* pvary is a no-op on manual axes outside check_vma */
    int all_manual = 1;
    for (int i = 0; i < m->n; i++)
      if ((axes & (1u << i)) && m->types[i] != SR_AXIS_MANUAL) all_manual = 0;
    if (all_manual) return sr_ref(x);
  }
  return sr_op_first(sr_op_bindv(b, prim, 1, &x, "axes", sr_op_axes_tuple(m, axes), NULL));
}

/* core.insert_reduced_reshard: outside shard_map, a rank-0 operand that is
   replicated where the other operand is reduced becomes reduced too. */
static int insert_reduced_reshard(const SrBinder *b, int n, SrVal **args) {
  const SrMesh *m = ctx_mesh(b);
  for (int i = 0; i < m->n; i++)
    if (m->types[i] != SR_AXIS_EXPLICIT) return 0;
  if (n != 2 || !m->n) return 0;
  SrAxes red[2], out = 0;
  for (int i = 0; i < 2; i++) {
    const SrType *t = vtype(b, args[i]);
    red[i] = t ? sr_op_axes_on(t, t->reduced, m) : 0;
    out |= red[i];
  }
  if (!out) return 0;
  for (int i = 0; i < 2; i++) {
    const SrType *t = vtype(b, args[i]);
    if (!t || t->ndim != 0) continue;
    SrAxes used = sr_op_axes_on(t, t->unreduced | t->reduced, m);
    if ((~used & out) != out) continue;
    const char *names[SR_MAX_AXES];
    int k = 0;
    for (int a = 0; a < m->n; a++)
      if (out & (1u << a)) names[k++] = m->names[a];
    SrSpec s = {0};
    s.reduced = names;
    s.nreduced = k;
    SrVal *sh = sr_sharding_val(NULL, m, &s, NULL);
    SrVal *r = sr_op_bindv(b, SR_P_reshard, 1, &args[i], "dst_sharding", sh, "concrete_mesh", sr_none(), NULL);
    if (!r) return -1;
    sr_unref(args[i]);
    args[i] = r;
  }
  return 0;
}

int sr_op_auto_insert(const SrBinder *b, int n, SrVal **args) {
  if (n <= 0) return 0;
  for (int i = 0; i < n; i++)
    if (!args[i]) return -1;
  if (!b->I->jax->check_vma) return insert_reduced_reshard(b, n, args);
  if (b->I->jax->no_auto_pcast) return 0;
  const SrMesh *m = ctx_mesh(b);
  SrAxes vma[64], red[64], all = 0;
  if (n > 64) return 0;
  SrAxes manual = sr_mesh_axes_of_type(m, SR_AXIS_MANUAL);
  for (int i = 0; i < n; i++) {
    const SrType *t = vtype(b, args[i]);
    vma[i] = t ? sr_op_axes_on(t, t->varying, m) : 0;
    red[i] = t ? sr_op_axes_on(t, t->reduced, m) & manual : 0;
    all |= vma[i];
  }
  for (int i = 0; i < n; i++) {
    SrAxes rest = all & ~vma[i];
    if (!rest || !vtype(b, args[i])) continue;
    int prim = red[i] == rest ? SR_P_reduced_vary_cast : SR_P_pvary;
    SrVal *r = sr_op_axes_cast(b, prim, args[i], rest, m);
    if (!r) return -1;
    sr_unref(args[i]);
    args[i] = r;
  }
  return 0;
}

/* ---- elementwise ---- */

SrVal *sr_op_unary(const SrBinder *b, int prim, SrVal *x) {
  if (sr_prims[prim].pp == SR_PP_ACCURACY) return sr_op_bindv(b, prim, 1, &x, "accuracy", sr_none(), NULL);
  return sr_op_bind(b, prim, 1, &x, 0, NULL);
}

SrVal *sr_op_binary(const SrBinder *b, int prim, SrVal *x, SrVal *y) {
  if (!x || !y) return NULL;
  SrVal *args[2] = {sr_ref(x), sr_ref(y)};
  SrVal *r = NULL;
  if (sr_op_auto_insert(b, 2, args) == 0) {
    if (prim == SR_P_mul) r = sr_op_bindv(b, prim, 2, args, "out_dtype", sr_none(), NULL);
    else r = sr_op_bind(b, prim, 2, args, 0, NULL);
  }
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

SrVal *sr_op_select_n(const SrBinder *b, int n, SrVal **in) {
  for (int i = 0; i < n; i++)
    if (!in[i]) return NULL;
  SrVal *small[8], **args = n <= 8 ? small : sr_xcalloc((size_t)n, sizeof *args);
  for (int i = 0; i < n; i++) args[i] = sr_ref(in[i]);
  SrVal *r = NULL;
  if (sr_op_auto_insert(b, n, args) == 0) r = sr_op_bind(b, SR_P_select_n, n, args, 0, NULL);
  for (int i = 0; i < n; i++) sr_unref(args[i]);
  if (args != small) free(args);
  return r;
}

/* A literal of dtype dt with x's value: a concrete array outside a trace. */
static SrVal *retyped_literal(SrInterp *I, SrVal *x, const SrType *t, SrDtype dt, int weak) {
  SrArrayObj *a = sr_array_of(x);
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
  if (sr_backend_hooks.from_scalar && !I->trace) {
    struct SrArray *arr = sr_backend_hooks.from_scalar(I, nt, re, im, iv);
    return arr ? sr_array_concrete(arr) : NULL;
  }
  return sr_array_scalar(nt, re, im, iv);
}

SrVal *sr_op_convert(const SrBinder *b, SrVal *x, SrDtype dt, int weak, SrVal *sharding) {
  if (!x) return NULL;
  SrInterp *I = b->I;
  const SrType *t = vtype(b, x);
  if (!t) return sr_raise(I, "TypeError", "cannot convert %s to an array", sr_val_kind_name(x));
  if (t->dtype == dt && t->weak == weak && !sharding) return sr_ref(x);
  /* Python scalars (and literal values) become literals of the new dtype */
  if (!sharding && is_literalish(x)) return retyped_literal(I, x, t, dt, weak);
  /* an array whose weakness alone changes still gets an equation
     (lax._convert_element_type binds whenever dtype or weak_type differ) */
  return sr_op_bindv(b, SR_P_convert_element_type, 1, &x, "new_dtype", sr_dtype_val(NULL, dt), "weak_type",
                     sr_bool(weak), "sharding", sharding_or_none(sharding), NULL);
}

/* ---- structure ---- */

SrVal *sr_op_reshape(const SrBinder *b, SrVal *x, const int64_t *shape, int nd, SrVal *sharding) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  int same = t->ndim == nd;
  for (int i = 0; same && i < nd; i++) same = t->dims[i].size == shape[i];
  if (t->ndim && same && (!sharding || sr_op_has_sharding(b->I, x, sharding)) && sr_array_of(x) &&
      !is_literalish(x))
    return sr_ref(x);
  return sr_op_bindv(b, SR_P_reshape, 1, &x, "new_sizes", sr_int_tuple(shape, nd), "dimensions", sr_none(),
                     "sharding", sharding_or_none(sharding), NULL);
}

SrVal *sr_op_transpose(const SrBinder *b, SrVal *x, const int64_t *perm, int n) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  int ident = n == t->ndim;
  for (int i = 0; ident && i < n; i++) ident = perm[i] == i;
  /* lax.transpose returns a jax.Array unchanged, binds for a constant */
  if (ident && (b->rule ? !is_const(x) : sr_array_of(x) != NULL)) return sr_ref(x);
  return sr_op_bindv(b, SR_P_transpose, 1, &x, "permutation", sr_int_tuple(perm, n), NULL);
}

SrVal *sr_op_broadcast_in_dim(const SrBinder *b, SrVal *x, const int64_t *shape, int nd, const int64_t *bdims,
                              int nb, SrVal *sharding) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  if (t->ndim == nd && !nb && sr_array_of(x) && !is_literalish(x) && !sharding) return sr_ref(x);
  int same_shape = t->ndim == nd && nb == t->ndim;
  for (int i = 0; same_shape && i < nd; i++) same_shape = t->dims[i].size == shape[i] && bdims[i] == i;
  if (same_shape && sharding && !sr_op_has_sharding(b->I, x, sharding))
    return sr_op_reshard(b, x, sharding, NULL);
  return sr_op_bindv(b, SR_P_broadcast_in_dim, 1, &x, "shape", sr_int_tuple(shape, nd), "broadcast_dimensions",
                     sr_int_tuple(bdims, nb), "sharding", sharding_or_none(sharding), NULL);
}

SrVal *sr_op_expand_dims(const SrBinder *b, SrVal *x, const int64_t *dims, int n) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  SrInterp *I = b->I;
  int nd = t->ndim + n;
  if (nd > SR_MAX_RANK) return sr_raise(I, "ValueError", "too many dimensions");
  int is_new[SR_MAX_RANK] = {0};
  /* lax.expand_dims: repeated dimensions as given, then canonicalized */
  for (int i = 0; i < n; i++)
    for (int k = 0; k < i; k++)
      if (dims[k] == dims[i]) {
        SrBuf m = SR_BUF_INIT;
        sr_buf_putc(&m, '(');
        for (int j = 0; j < n; j++) sr_buf_printf(&m, j ? ", %lld" : "%lld", (long long)dims[j]);
        sr_buf_puts(&m, n == 1 ? ",)" : ")");
        sr_raise(I, "ValueError", "repeated axis in lax.expand_dims: %s", m.p);
        sr_buf_free(&m);
        return NULL;
      }
  for (int i = 0; i < n; i++) {
    int64_t d = dims[i];
    if (d < -nd || d >= nd)
      return sr_raise(I, "AxisError", "axis %lld is out of bounds for array of dimension %d", (long long)d, nd);
    if (d < 0) d += nd;
    if (is_new[d]) {
      SrBuf m = SR_BUF_INIT;
      sr_buf_putc(&m, '[');
      for (int j = 0; j < n; j++) sr_buf_printf(&m, j ? ", %lld" : "%lld", (long long)(dims[j] < 0 ? dims[j] + nd : dims[j]));
      sr_buf_putc(&m, ']');
      sr_raise(I, "ValueError", "repeated axis in lax.expand_dims: %s", m.p);
      sr_buf_free(&m);
      return NULL;
    }
    is_new[d] = 1;
  }
  int64_t shape[SR_MAX_RANK], bd[SR_MAX_RANK];
  int k = 0, nb = 0;
  for (int i = 0; i < nd; i++) {
    if (is_new[i]) {
      shape[i] = 1;
    } else {
      shape[i] = t->dims[k++].size;
      bd[nb++] = i;
    }
  }
  return sr_op_broadcast_in_dim(b, x, shape, nd, bd, nb, NULL);
}

SrVal *sr_op_full(const SrBinder *b, const int64_t *shape, int nd, SrVal *fill, int dtype, SrVal *sharding) {
  if (!fill) return NULL;
  SrInterp *I = b->I;
  const SrType *ft = vtype(b, fill);
  if (!ft) return sr_raise(I, "TypeError", "fill_value must be a scalar");
  if (ft->ndim) {
    SrBuf s = SR_BUF_INIT;
    sr_buf_putc(&s, '(');
    for (int i = 0; i < ft->ndim; i++) sr_buf_printf(&s, i ? ", %lld" : "%lld", (long long)ft->dims[i].size);
    sr_buf_puts(&s, ft->ndim == 1 ? ",)" : ")");
    sr_raise(I, "TypeError", "full must be called with scalar fill_value, got fill_value.shape %s.", s.p);
    sr_buf_free(&s);
    return NULL;
  }
  int weak = dtype < 0 ? ft->weak : 0;
  SrDtype dt = dtype < 0 ? ft->dtype : (SrDtype)dtype;
  int impl = sr_prng_impl_of(dt);
  if (impl >= 0) {
    /* prng.KeyTyRules.full: key data of shape (*shape, *key_shape) -- the
       fill key's data broadcast, or uint32s of the fill value -- wrapped */
    int64_t ps[SR_MAX_RANK + 1];
    int nw = (int)(sr_dtype_info(dt)->size / 4);
    if (nd) memcpy(ps, shape, (size_t)nd * sizeof *shape);
    ps[nd] = nw;
    SrVal *data;
    if (sr_prng_impl_of(ft->dtype) >= 0) {
      SrVal *u = sr_op_bindv(b, SR_P_random_unwrap, 1, &fill, NULL);
      int64_t bd[1] = {nd};
      data = u && nd ? sr_op_broadcast_in_dim(b, u, ps, nd + 1, bd, 1, NULL) : u ? sr_ref(u) : NULL;
      sr_unref(u);
    } else {
      data = sr_op_full(b, ps, nd + 1, fill, SR_U32, NULL);
    }
    if (!data) return NULL;
    const char *tag = sr_prng_impl_tag(impl);
    SrVal *r = sr_op_bindv(b, SR_P_random_wrap, 1, &data, "impl", sr_word(NULL, tag, strlen(tag)), NULL);
    sr_unref(data);
    return r;
  }
  SrVal *f = sr_op_convert(b, fill, dt, weak, NULL);
  if (!f) return NULL;
  if (nd == 0 && !sharding) return f;
  SrVal *r = sr_op_broadcast_in_dim(b, f, shape, nd, NULL, 0, sharding);
  sr_unref(f);
  return r;
}

SrVal *sr_op_reduce(const SrBinder *b, int prim, SrVal *x, const int64_t *axes, int n, SrVal *out_sharding) {
  SrVal *r;
  if (prim == SR_P_reduce_sum || prim == SR_P_reduce_max || prim == SR_P_reduce_min)
    r = sr_op_bindv(b, prim, 1, &x, "axes", sr_int_tuple(axes, n), "out_sharding", sharding_or_none(out_sharding),
                    NULL);
  else
    r = sr_op_bindv(b, prim, 1, &x, "axes", sr_int_tuple(axes, n), NULL);
  if (!r) return NULL;
  /* monoid reducers set weak_type explicitly (lax.reduce) */
  const SrType *t = vtype(b, r);
  if (t->weak) {
    SrVal *c = sr_op_convert(b, r, t->dtype, 0, NULL);
    sr_unref(r);
    r = c;
  }
  return r;
}

SrVal *sr_op_reshard(const SrBinder *b, SrVal *x, SrVal *sharding, SrVal *concrete_mesh) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  return sr_op_bindv(b, SR_P_reshard, 1, &x, "dst_sharding", sr_op_normalized_sharding(sharding, t->ndim),
                     "concrete_mesh", sharding_or_none(concrete_mesh), NULL);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* A possibly negative axis for rank nd, canonical (numpy's AxisError). */
static int canon_axis(SrInterp *I, int64_t axis, int nd, int64_t *out) {
  if (axis < -nd || axis >= nd) {
    sr_raise(I, "AxisError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, nd);
    return -1;
  }
  *out = axis < 0 ? axis + nd : axis;
  return 0;
}

SrVal *sr_op_squeeze(const SrBinder *b, SrVal *x, const int64_t *dims, int n) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  int64_t d[SR_MAX_RANK];
  if (n > SR_MAX_RANK) return sr_raise(b->I, "ValueError", "too many dimensions");
  for (int i = 0; i < n; i++)
    if (canon_axis(b->I, dims[i], t->ndim, &d[i]) < 0) return NULL;
  qsort(d, (size_t)n, sizeof *d, cmp_i64);
  if (!n && sr_array_of(x)) return sr_ref(x);
  return sr_op_bindv(b, SR_P_squeeze, 1, &x, "dimensions", sr_int_tuple(d, n), NULL);
}

SrVal *sr_op_iota(const SrBinder *b, SrDtype dt, const int64_t *shape, int nd, int dim, SrVal *sharding) {
  return sr_op_bindv(b, SR_P_iota, 0, NULL, "dtype", sr_dtype_val(NULL, dt), "shape", sr_int_tuple(shape, nd),
                  "dimension", sr_int(NULL, dim), "sharding", sharding_or_none(sharding), NULL);
}

SrVal *sr_op_argminmax(const SrBinder *b, int prim, SrVal *x, int64_t axis, SrDtype index_dtype) {
  return sr_op_bindv(b, prim, 1, &x, "axes", sr_int_tuple(&axis, 1), "index_dtype", sr_dtype_val(NULL, index_dtype),
                  NULL);
}

SrVal *sr_op_dot_general(const SrBinder *b, SrVal *lhs, SrVal *rhs, const int64_t *lc, int nlc, const int64_t *rc,
                          int nrc, const int64_t *lb, int nlb, const int64_t *rb, int nrb,
                          SrVal *precision, int pref, SrVal *out_sharding) {
  SrVal *args[2] = {sr_ref(lhs), sr_ref(rhs)};
  SrVal *r = NULL;
  if (sr_op_auto_insert(b, 2, args) == 0) {
    SrVal *c = sr_seq(NULL, SR_V_TUPLE, 2), *bt = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, c, sr_int_tuple(lc, nlc));
    sr_seq_push(NULL, c, sr_int_tuple(rc, nrc));
    sr_seq_push(NULL, bt, sr_int_tuple(lb, nlb));
    sr_seq_push(NULL, bt, sr_int_tuple(rb, nrb));
    SrVal *dn = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, dn, c);
    sr_seq_push(NULL, dn, bt);
    r = sr_op_bindv(b, SR_P_dot_general, 2, args, "dimension_numbers", dn, "precision",
                 precision ? sr_ref(precision) : sr_none(), "preferred_element_type",
                 pref >= 0 ? sr_dtype_val(NULL, (SrDtype)pref) : sr_none(), "out_sharding",
                 sharding_or_none(out_sharding), NULL);
  }
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

SrVal *sr_op_concatenate(const SrBinder *b, int n, SrVal **xs, int dim) {
  if (n == 0) return sr_raise(b->I, "ValueError", "concatenate requires a non-empty sequences of arrays");
  if (n == 1 && sr_array_of(xs[0])) return sr_ref(xs[0]);
  SrVal **args = sr_xcalloc((size_t)n + 1, sizeof *args);
  for (int i = 0; i < n; i++) args[i] = sr_ref(xs[i]);
  SrVal *r = NULL;
  if (sr_op_auto_insert(b, n, args) == 0)
    r = sr_op_bindv(b, SR_P_concatenate, n, args, "dimension", sr_int(NULL, dim), NULL);
  for (int i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  return r;
}

SrVal *sr_op_slice(const SrBinder *b, SrVal *x, const int64_t *start, const int64_t *limit, const int64_t *strides) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  return sr_op_bindv(b, SR_P_slice, 1, &x, "start_indices", sr_int_tuple(start, t->ndim), "limit_indices",
                  sr_int_tuple(limit, t->ndim), "strides", strides ? sr_int_tuple(strides, t->ndim) : sr_none(),
                  NULL);
}

SrVal *sr_op_dynamic_slice(const SrBinder *b, SrVal *x, SrVal **starts, const int64_t *sizes) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  int n = t->ndim + 1;
  SrVal **args = sr_xcalloc((size_t)n + 1, sizeof *args);
  args[0] = sr_ref(x);
  for (int i = 0; i < t->ndim; i++) args[i + 1] = sr_ref(starts[i]);
  SrVal *r = NULL;
  if (sr_op_auto_insert(b, n, args) == 0)
    r = sr_op_bindv(b, SR_P_dynamic_slice, n, args, "slice_sizes", sr_int_tuple(sizes, t->ndim), NULL);
  for (int i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  return r;
}

/* lax.pad: cfg holds (low, high, interior) per dimension of x. */
SrVal *sr_op_pad(const SrBinder *b, SrVal *x, SrVal *padding_value, const int64_t *cfg, int nd) {
  SrVal *pc = sr_seq(NULL, SR_V_TUPLE, nd);
  for (int i = 0; i < nd; i++) sr_seq_push(NULL, pc, sr_int_tuple(cfg + 3 * i, 3));
  SrVal *args[2] = {sr_ref(x), sr_ref(padding_value)}, *r = NULL;
  if (sr_op_auto_insert(b, 2, args) == 0) r = sr_op_bindv(b, SR_P_pad, 2, args, "padding_config", pc, NULL);
  else sr_unref(pc);
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

SrVal *sr_op_rev(const SrBinder *b, SrVal *x, const int64_t *dims, int n) {
  return sr_op_bindv(b, SR_P_rev, 1, &x, "dimensions", sr_int_tuple(dims, n), NULL);
}

SrVal *sr_op_broadcast_to(const SrBinder *b, SrVal *x, const int64_t *shape, int nd, SrVal *sharding) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  int same = t->ndim == nd;
  for (int i = 0; same && i < nd; i++) same = t->dims[i].size == shape[i];
  if (same && (!sharding || sr_op_has_sharding(b->I, x, sharding))) return sr_ref(x);
  int lead = nd - t->ndim, ok = lead >= 0;
  if (!ok) {
    SrBuf s = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_buf_putc(&s, '(');
    for (int i = 0; i < t->ndim; i++) sr_buf_printf(&s, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
    sr_buf_puts(&s, t->ndim == 1 ? ",)" : ")");
    sr_buf_putc(&c, '(');
    for (int i = 0; i < nd; i++) sr_buf_printf(&c, i ? ", %lld" : "%lld", (long long)shape[i]);
    sr_buf_puts(&c, nd == 1 ? ",)" : ")");
    sr_raise(b->I, "ValueError", "Cannot broadcast to shape with fewer dimensions: arr_shape=%s shape=%s", s.p, c.p);
    sr_buf_free(&s);
    sr_buf_free(&c);
    return NULL;
  }
  for (int i = 0; ok && i < t->ndim; i++) ok = t->dims[i].size == 1 || t->dims[i].size == shape[lead + i];
  /* lax.broadcast_to: each input dimension's axes are none or the
     requested ones (the sharding's spec padded to the shape's rank) */
  const SrSpec *sp = sharding && sharding->kind == SR_V_SHARDING ? sharding->sh.spec : NULL;
  for (int i = 0; ok && sp && i < t->ndim; i++) {
    const SrDim *d = &t->dims[i];
    if (!d->nax) continue;
    const SrSpecEntry *en = lead + i < sp->n ? &sp->e[lead + i] : NULL;
    ok = en && en->n == d->nax;
    for (int k = 0; ok && k < d->nax; k++) ok = t->mesh && en->names[k] == t->mesh->names[d->ax[k]];
  }
  if (!ok) {
    SrBuf s = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_type_long(&s, t);
    sr_buf_printf(&c, "%s[", sr_dtype_name(t->dtype));
    for (int i = 0; i < nd; i++) {
      sr_buf_printf(&c, i ? ",%lld" : "%lld", (long long)shape[i]);
      const SrSpecEntry *en = sp && i < sp->n ? &sp->e[i] : NULL;
      if (!en || !en->n) continue;
      if (en->n == 1) sr_buf_printf(&c, "@%s", en->names[0]);
      else
        for (int k = 0; k < en->n; k++) sr_buf_printf(&c, k ? ",%s" : "@(%s", en->names[k]);
      if (en->n > 1) sr_buf_putc(&c, ')');
    }
    sr_buf_putc(&c, ']');
    sr_raise(b->I, "ValueError", "Incompatible types for broadcasting: input type=%s and requested type=%s", s.p, c.p);
    sr_buf_free(&s);
    sr_buf_free(&c);
    return NULL;
  }
  int64_t bd[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) bd[i] = lead + i;
  return sr_op_broadcast_in_dim(b, x, shape, nd, bd, t->ndim, sharding);
}

SrVal *sr_op_dynamic_update_slice(const SrBinder *b, SrVal *x, SrVal *update, SrVal **starts) {
  const SrType *t = vtype(b, x);
  if (!t) return NULL;
  int n = t->ndim + 2;
  SrVal **args = sr_xcalloc((size_t)n + 1, sizeof *args);
  args[0] = sr_ref(x);
  args[1] = sr_ref(update);
  for (int i = 0; i < t->ndim; i++) args[i + 2] = sr_ref(starts[i]);
  SrVal *r = NULL;
  if (sr_op_auto_insert(b, n, args) == 0) r = sr_op_bind(b, SR_P_dynamic_update_slice, n, args, 0, NULL);
  for (int i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  return r;
}

/* ======================================================================
 * The rules' faces (ad_rules.h): the target sharding from a type, the
 * results kept in the rule's pool.
 * ====================================================================== */

/* The names of a type's axes on a dimension, to compare types of
   different meshes. */
static int dim_axes_equal(const SrType *a, int i, const SrType *b, int k) {
  const SrDim *da = &a->dims[i], *db = &b->dims[k];
  if (da->nax != db->nax) return 0;
  for (int x = 0; x < da->nax; x++)
    if (a->mesh->names[da->ax[x]] != b->mesh->names[db->ax[x]]) return 0;
  return 1;
}

static int axes_names_equal(SrAxes x, const SrMesh *mx, SrAxes y, const SrMesh *my) {
  if (!x || !y) return x == y;
  if (mx == my) return x == y;
  return sr_axes_remap(x, mx, my) == y && sr_axes_remap(y, my, mx) == x;
}

/* aval.sharding == other.sharding, for two types of the same rank. */
static int same_sharding(const SrType *a, const SrType *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (!dim_axes_equal(a, i, b, i)) return 0;
  return axes_names_equal(a->unreduced, a->mesh, b->unreduced, b->mesh) &&
         axes_names_equal(a->reduced, a->mesh, b->reduced, b->mesh) && a->ukind == b->ukind;
}

static int same_shape(const SrType *a, const SrType *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (!sr_dim_same(&a->dims[i], &b->dims[i])) return 0;
  return 1;
}

static int type_shape(const SrType *t, int64_t *shape) {
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  return t->ndim;
}

/* t's sharding as a param (NULL: None, no mesh in context); counted. */
static SrVal *target_sharding(SrAd *ad, const SrType *t) {
  SrVal *sh = sr_ad_sharding_param(ad, t);
  if (sh->kind != SR_V_NONE) return sh;
  sr_unref(sh);
  return NULL;
}

SrVal *sr_ad_pvary_to(SrAd *ad, SrVal *x, SrAxes axes, const SrMesh *m) {
  return sr_ad_keep(ad, sr_op_axes_cast(SR_AD_BINDER(ad), SR_P_pvary, x, axes, m));
}

SrVal *sr_ad_unop(SrAd *ad, int prim, SrVal *x) { return sr_ad_keep(ad, sr_op_unary(SR_AD_BINDER(ad), prim, x)); }

SrVal *sr_ad_binop(SrAd *ad, int prim, SrVal *x, SrVal *y) {
  return sr_ad_keep(ad, sr_op_binary(SR_AD_BINDER(ad), prim, x, y));
}

SrVal *sr_ad_mul(SrAd *ad, SrVal *x, SrVal *y) { return sr_ad_binop(ad, SR_P_mul, x, y); }
SrVal *sr_ad_div(SrAd *ad, SrVal *x, SrVal *y) { return sr_ad_binop(ad, SR_P_div, x, y); }
SrVal *sr_ad_neg(SrAd *ad, SrVal *x) { return sr_ad_unop(ad, SR_P_neg, x); }
SrVal *sr_ad_add_any(SrAd *ad, SrVal *x, SrVal *y) { return sr_ad_binop(ad, SR_P_add_any, x, y); }

SrVal *sr_ad_add_tangents(SrAd *ad, SrVal *x, SrVal *y) {
  if (!x) return y;
  if (!y) return x;
  return sr_ad_add_any(ad, x, y);
}

SrVal *sr_ad_select_n(SrAd *ad, SrVal *which, int n, SrVal **cases) {
  SrVal *a[64];
  if (n > 63) n = 63;
  a[0] = which;
  for (int i = 0; i < n; i++) a[i + 1] = cases[i];
  return sr_ad_keep(ad, sr_op_select_n(SR_AD_BINDER(ad), n + 1, a));
}

SrVal *sr_ad_reshard(SrAd *ad, SrVal *x, const SrType *t) {
  if (!x) return NULL;
  SrVal *sh = target_sharding(ad, t);
  if (!sh) return x; /* no mesh: nothing to reshard to */
  SrVal *r = sr_op_reshard(SR_AD_BINDER(ad), x, sh, NULL);
  sr_unref(sh);
  return sr_ad_keep(ad, r);
}

SrVal *sr_ad_full(SrAd *ad, const SrType *t, double v) {
  SrVal *lit = sr_ad_scalar(ad, t->dtype, t->weak, v);
  SrVal *sh = target_sharding(ad, t);
  int64_t shape[SR_MAX_RANK];
  int nd = type_shape(t, shape);
  SrVal *r = sr_ad_keep(ad, sr_op_full(SR_AD_BINDER(ad), shape, nd, lit, -1, sh));
  sr_unref(sh);
  if (r && t->varying && ad->I->jax->check_vma) r = sr_ad_pvary_to(ad, r, t->varying, t->mesh);
  return r;
}

SrVal *sr_ad_full_zeros(SrAd *ad, const SrType *t) { return sr_ad_full(ad, t, 0.0); }

SrVal *sr_ad_zeros_staged(SrAd *ad, const SrType *t) {
  ad->staged++;
  SrVal *z = sr_ad_full(ad, t, 0.0);
  ad->staged--;
  return z;
}

SrVal *sr_ad_scalar_like(SrAd *ad, SrVal *x, double v) {
  const SrType *t = sr_ad_type(ad, x);
  if (!t) return NULL;
  SrVal *lit = sr_ad_scalar(ad, t->dtype, t->weak && is_const(x), v);
  if (sr_ad_value_mesh(ad)) lit = sr_ad_reshard(ad, lit, sr_type_scalar(t->dtype));
  if (!lit) return NULL;
  SrVal *a[2] = {sr_ref(lit), sr_ref(x)};
  if (sr_op_auto_insert(SR_AD_BINDER(ad), 2, a) < 0) a[0] = NULL;
  sr_unref(a[1]);
  return sr_ad_keep(ad, a[0]);
}

SrVal *sr_ad_broadcast_in_dim(SrAd *ad, SrVal *x, const SrType *t, const int64_t *dims, int ndims,
                              int with_sharding) {
  const SrType *xt = sr_ad_type(ad, x);
  if (!xt) return NULL;
  SrVal *sh = with_sharding ? target_sharding(ad, t) : NULL;
  /* a scalar, constants included, stays itself */
  if (xt->ndim == 0 && t->ndim == 0 && ndims == 0 && !sh) return x;
  int64_t shape[SR_MAX_RANK];
  int nd = type_shape(t, shape);
  SrVal *r = sr_op_broadcast_in_dim(SR_AD_BINDER(ad), x, shape, nd, dims, ndims, sh);
  sr_unref(sh);
  return sr_ad_keep(ad, r);
}

SrVal *sr_ad_reduce_sum(SrAd *ad, SrVal *x, const int64_t *axes, int naxes, const SrType *t) {
  if (!x) return NULL;
  SrVal *sh = t ? target_sharding(ad, t) : NULL;
  SrVal *r = sr_op_reduce(SR_AD_BINDER(ad), SR_P_reduce_sum, x, axes, naxes, sh);
  sr_unref(sh);
  return sr_ad_keep(ad, r);
}

static SrVal *reshape_to(SrAd *ad, SrVal *x, const SrType *t, int with_sharding) {
  if (!x) return NULL;
  SrVal *sh = with_sharding ? target_sharding(ad, t) : NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = type_shape(t, shape);
  SrVal *r = sr_op_reshape(SR_AD_BINDER(ad), x, shape, nd, sh);
  sr_unref(sh);
  return sr_ad_keep(ad, r);
}

SrVal *sr_ad_reshape(SrAd *ad, SrVal *x, const SrType *t) { return reshape_to(ad, x, t, 1); }

SrVal *sr_ad_reshape_plain(SrAd *ad, SrVal *x, const SrType *t) { return reshape_to(ad, x, t, 0); }

SrVal *sr_ad_transpose_dims(SrAd *ad, SrVal *x, const int64_t *perm, int n) {
  return sr_ad_keep(ad, sr_op_transpose(SR_AD_BINDER(ad), x, perm, n));
}

SrVal *sr_ad_expand_dims(SrAd *ad, SrVal *x, const int64_t *dims, int n) {
  if (!x) return NULL;
  if (n == 0) return x;
  return sr_ad_keep(ad, sr_op_expand_dims(SR_AD_BINDER(ad), x, dims, n));
}

SrVal *sr_ad_convert(SrAd *ad, SrVal *x, SrDtype dt, int weak) {
  return sr_ad_keep(ad, sr_op_convert(SR_AD_BINDER(ad), x, dt, weak, NULL));
}

SrVal *sr_ad_unbroadcast(SrAd *ad, const SrType *t, SrVal *x) {
  const SrType *xt = sr_ad_type(ad, x);
  if (!xt) return NULL;
  if (same_shape(xt, t) && same_sharding(xt, t)) return x;
  int64_t dims[SR_MAX_RANK];
  int nd = 0;
  if (t->ndim == 0) {
    for (int i = 0; i < xt->ndim; i++) dims[nd++] = i;
    return sr_ad_reduce_sum(ad, x, dims, nd, NULL);
  }
  for (int i = 0; i < xt->ndim && i < t->ndim; i++)
    if (!sr_dim_same(&xt->dims[i], &t->dims[i])) dims[nd++] = i;
  if (nd) x = sr_ad_reduce_sum(ad, x, dims, nd, NULL);
  return sr_ad_reshape(ad, x, t);
}

SrVal *sr_ad_maybe_broadcast(SrAd *ad, SrVal *x, const SrType *t) {
  const SrType *xt = sr_ad_type(ad, x);
  if (!xt) return NULL;
  if (same_shape(xt, t) && same_sharding(xt, t)) return x;
  if (xt->ndim == 0) return sr_ad_broadcast_in_dim(ad, x, t, NULL, 0, 1);
  int64_t dims[SR_MAX_RANK];
  int nd = 0;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = xt->dtype;
  for (int i = 0; i < xt->ndim && i < t->ndim; i++)
    if (sr_dim_same(&xt->dims[i], &t->dims[i])) {
      b.dims[nd] = xt->dims[i];
      b.dims[nd].nax = 0;
      dims[nd++] = i;
    }
  b.ndim = (uint8_t)nd;
  SrVal *sq = reshape_to(ad, x, sr_type_get(&b), 0);
  return sr_ad_broadcast_in_dim(ad, sq, t, dims, nd, 1);
}

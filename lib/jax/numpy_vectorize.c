/* numpy_vectorize.c: jax.numpy.vectorize (numpy/vectorize.py), written
 * with the same calls in the same order as JAX's Python: the excluded
 * arguments partially applied, the arguments made arrays, their
 * broadcast (non-core) dimensions squeezed where of size 1, and one
 * jax.vmap per broadcast dimension that some argument has, innermost
 * first, so that the jaxpr is JAX's; the dimensions no argument has are
 * expand_dims'ed back.  Registered by sr_jnp_vectorize_init (jax.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/misc16.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/intern.h"

#define MAX_ARGS 64
#define MAX_CORE 32

/* ---- a function with arguments put back in (_apply_excluded's new_func) */

typedef struct {
  SrVal *fn;
  int n;          /* static positional arguments, by index, ascending */
  int64_t *idx;
  SrVal **val;
  int nkw;        /* static keyword arguments */
  const char **kw;
  SrVal **kwv;
} Inserted;

static void inserted_free(void *d) {
  Inserted *p = d;
  sr_unref(p->fn);
  for (int i = 0; i < p->n; i++) sr_unref(p->val[i]);
  for (int i = 0; i < p->nkw; i++) sr_unref(p->kwv[i]);
  free(p->idx);
  free(p->val);
  free(p->kw);
  free(p->kwv);
  free(p);
}

/* new_func(*args, **kwargs): args.insert(i, arg) for each static
   argument, then func(*args, **kwargs, **static_kwargs) */
static SrVal *inserted_call(SrInterp *I, SrArgs *a) {
  Inserted *p = sr_current_builtin(I)->data;
  int n = a->n + p->n, nkw = a->nkw + p->nkw;
  SrVal **v = sr_xcalloc((size_t)n + 1, sizeof *v);
  const char **kw = sr_xcalloc((size_t)nkw + 1, sizeof *kw);
  SrVal **kwv = sr_xcalloc((size_t)nkw + 1, sizeof *kwv);
  int m = a->n;
  for (int i = 0; i < a->n; i++) v[i] = a->v[i];
  for (int j = 0; j < p->n; j++) { /* list.insert: clipped to the end */
    int64_t at = p->idx[j] < m ? p->idx[j] : m;
    memmove(v + at + 1, v + at, (size_t)(m - at) * sizeof *v);
    v[at] = p->val[j];
    m++;
  }
  for (int i = 0; i < a->nkw; i++) {
    kw[i] = a->kw[i];
    kwv[i] = a->kwv[i];
  }
  SrVal *r = NULL;
  for (int i = 0; i < p->nkw; i++) {
    for (int k = 0; k < a->nkw; k++)
      if (a->kw[k] == p->kw[i]) {
        sr_raise(I, "TypeError", "%s() got multiple values for keyword argument '%s'", "new_func", p->kw[i]);
        goto out;
      }
    kw[a->nkw + i] = p->kw[i];
    kwv[a->nkw + i] = p->kwv[i];
  }
  SrArgs ca = {n, v, nkw, kw, kwv, NULL};
  r = sr_call(I, p->fn, &ca);
out:
  free(v);
  free(kw);
  free(kwv);
  return r;
}

/* whether e is in the excluded collection (a set, frozenset, list,
   tuple or dict of ints and strs) */
static int in_excluded(SrVal *excl, SrVal *e) {
  if (!excl || excl->kind == SR_V_NONE) return 0;
  if (excl->kind == SR_V_DICT) return sr_dict_get(excl, e) != NULL;
  if (!sr_is_seq(excl)) return 0;
  for (int i = 0; i < excl->seq.n; i++)
    if (sr_val_equal(excl->seq.items[i], e) && excl->seq.items[i]->kind == e->kind) return 1;
  return 0;
}

/* _apply_excluded(func, excluded, args, kwargs): a new reference to the
   function with the excluded arguments put back in, and the dynamic ones
   in dyn (borrowed), their count in *ndyn, the dynamic keywords in
   dkw/dkwv (*ndkw) */
static SrVal *apply_excluded(SrVal *fn, SrVal *excl, int n, SrVal **v, int nkw, const char **kw, SrVal **kwv,
                             SrVal **dyn, int *ndyn, const char **dkw, SrVal **dkwv, int *ndkw) {
  Inserted *p = sr_xcalloc(1, sizeof *p);
  p->idx = sr_xcalloc((size_t)n + 1, sizeof *p->idx);
  p->val = sr_xcalloc((size_t)n + 1, sizeof *p->val);
  p->kw = sr_xcalloc((size_t)nkw + 1, sizeof *p->kw);
  p->kwv = sr_xcalloc((size_t)nkw + 1, sizeof *p->kwv);
  *ndyn = *ndkw = 0;
  for (int i = 0; i < n; i++) {
    SrVal *iv = sr_int(NULL, i);
    if (in_excluded(excl, iv)) {
      p->idx[p->n] = i;
      p->val[p->n++] = sr_ref(v[i]);
    } else {
      dyn[(*ndyn)++] = v[i];
    }
    sr_unref(iv);
  }
  for (int i = 0; i < nkw; i++) {
    SrVal *k = sr_str_cstr(NULL, kw[i]);
    if (in_excluded(excl, k)) {
      p->kw[p->nkw] = kw[i];
      p->kwv[p->nkw++] = sr_ref(kwv[i]);
    } else {
      dkw[*ndkw] = kw[i];
      dkwv[(*ndkw)++] = kwv[i];
    }
    sr_unref(k);
  }
  p->fn = sr_ref(fn);
  return sr_builtin_with("new_func", inserted_call, p, inserted_free);
}

/* ---- signatures */

typedef struct {
  int n;
  const char *dim[MAX_CORE]; /* interned */
} CoreDims;

/* one "(a,b)" at *p; -1 when it is not one */
static int parse_arg(const char **pp, CoreDims *c) {
  const char *p = *pp;
  c->n = 0;
  if (*p++ != '(') return -1;
  while (*p != ')') {
    const char *s = p;
    while (isalnum((unsigned char)*p) || *p == '_') p++;
    if (p == s || c->n == MAX_CORE) return -1;
    c->dim[c->n++] = sr_intern(s, (size_t)(p - s));
    if (*p == ',') {
      p++;
      if (*p == ')') return -1;
    } else if (*p != ')') {
      return -1;
    }
  }
  *pp = p + 1;
  return 0;
}

/* an argument list "(..),(..)" ending at end; its count or -1 */
static int parse_list(const char **pp, char end, CoreDims *out) {
  int n = 0;
  for (;;) {
    if (n == MAX_ARGS || parse_arg(pp, &out[n]) < 0) return -1;
    n++;
    if (**pp == end) return n;
    if (**pp != ',') return -1;
    (*pp)++;
  }
}

/* _parse_gufunc_signature; 0 or -1 with JAX's ValueError */
static int parse_signature(SrInterp *I, const char *sig, CoreDims *in, int *nin, CoreDims *out, int *nout) {
  const char *p = sig;
  if ((*nin = parse_list(&p, '-', in)) < 0 || strncmp(p, "->", 2) || (p += 2, *nout = parse_list(&p, '\0', out)) < 0) {
    sr_raise(I, "ValueError", "not a valid gufunc signature: %s", sig);
    return -1;
  }
  return 0;
}

static void repr_dims(SrBuf *b, const CoreDims *c) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, c->n);
  for (int i = 0; i < c->n; i++) sr_seq_push(NULL, t, sr_str_cstr(NULL, c->dim[i]));
  sr_val_repr(b, t);
  sr_unref(t);
}

static void repr_shape(SrBuf *b, int nd, const int64_t *shape) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, nd);
  for (int i = 0; i < nd; i++) sr_seq_push(NULL, t, sr_int(NULL, shape[i]));
  sr_val_repr(b, t);
  sr_unref(t);
}

typedef struct {
  int n;
  const char *name[MAX_ARGS * MAX_CORE];
  int64_t size[MAX_ARGS * MAX_CORE];
} DimSizes;

/* _update_dim_sizes; 0 or -1 with JAX's ValueError */
static int update_dim_sizes(SrInterp *I, DimSizes *d, int nd, const int64_t *shape, const CoreDims *c,
                            const char *ctx, int is_input) {
  if (is_input ? nd < c->n : nd != c->n) {
    SrBuf s = {0}, k = {0};
    repr_shape(&s, nd, shape);
    repr_dims(&k, c);
    if (is_input)
      sr_raise(I, "ValueError", "input with shape %s does not have enough dimensions for all core dimensions %s %s",
               s.p, k.p, ctx);
    else
      sr_raise(I, "ValueError", "output shape %s does not match core dimensions %s %s", s.p, k.p, ctx);
    sr_buf_free(&s);
    sr_buf_free(&k);
    return -1;
  }
  const int64_t *core = shape + nd - c->n;
  for (int i = 0; i < c->n; i++) {
    int j = 0;
    while (j < d->n && d->name[j] != c->dim[i]) j++;
    if (j == d->n) {
      d->name[d->n] = c->dim[i];
      d->size[d->n++] = core[i];
    } else if (core[i] != d->size[j]) {
      sr_raise(I, "ValueError", "inconsistent size for core dimension '%s': %lld vs %lld %s", c->dim[i],
               (long long)core[i], (long long)d->size[j], ctx);
      return -1;
    }
  }
  return 0;
}

/* ---- _check_output_dims's wrapped */

typedef struct {
  SrVal *fn;
  DimSizes sizes;
  int nout;
  CoreDims out[MAX_ARGS];
  char *ctx;
} Checked;

static void checked_free(void *d) {
  Checked *c = d;
  sr_unref(c->fn);
  free(c->ctx);
  free(c);
}

/* np.shape(x) of a result: its rank and dims; -1 with an error */
static int shape_of(SrInterp *I, SrVal *x, int64_t *dims) {
  SrVal *a = sr_jnp_asarray(I, x, -1);
  if (!a) return -1;
  const SrType *t = sr_value_type(I, a);
  int nd = t->ndim;
  for (int i = 0; i < nd; i++) dims[i] = t->dims[i].size;
  sr_unref(a);
  return nd;
}

static SrVal *checked_call(SrInterp *I, SrArgs *a) {
  Checked *c = sr_current_builtin(I)->data;
  SrVal *out = sr_call(I, c->fn, a);
  if (!out) return NULL;
  int is_tuple = out->kind == SR_V_TUPLE;
  if (c->nout > 1 && !is_tuple) {
    SrBuf b = {0};
    sr_val_repr(&b, out);
    sr_raise(I, "TypeError", "output must be a tuple when multiple outputs are expected, got: %s\n%s", b.p, c->ctx);
    sr_buf_free(&b);
    sr_unref(out);
    return NULL;
  }
  int n = is_tuple ? out->seq.n : 1;
  if (n != c->nout) {
    sr_raise(I, "TypeError", "wrong number of output arguments: expected %d, got %d %s", c->nout, n, c->ctx);
    sr_unref(out);
    return NULL;
  }
  DimSizes *sizes = sr_xmalloc(sizeof *sizes);
  *sizes = c->sizes;
  for (int i = 0; i < n; i++) {
    int64_t dims[SR_MAX_RANK];
    int nd = shape_of(I, is_tuple ? out->seq.items[i] : out, dims);
    if (nd < 0 || update_dim_sizes(I, sizes, nd, dims, &c->out[i], c->ctx, 0) < 0) {
      free(sizes);
      sr_unref(out);
      return NULL;
    }
  }
  free(sizes);
  return out;
}

/* ---- vectorize */

typedef struct {
  SrVal *fn, *excluded;
  char *signature; /* NULL: None */
} Vectorized;

static void vectorized_free(void *d) {
  Vectorized *v = d;
  sr_unref(v->fn);
  sr_unref(v->excluded);
  free(v->signature);
  free(v);
}

/* lax.broadcast_shapes of n shapes into out; its rank, or -1 with JAX's
   ValueError */
static int broadcast_shapes(SrInterp *I, int n, const int *nd, int64_t (*shapes)[SR_MAX_RANK], int64_t *out) {
  int r = 0;
  for (int i = 0; i < n; i++)
    if (nd[i] > r) r = nd[i];
  for (int k = 0; k < r; k++) out[k] = 1;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < nd[i]; k++) {
      int64_t s = shapes[i][k], *o = &out[r - nd[i] + k];
      if (s == *o || s == 1) continue;
      if (*o == 1) {
        *o = s;
        continue;
      }
      SrBuf b = {0};
      sr_buf_puts(&b, "[");
      for (int j = 0; j < n; j++) {
        if (j) sr_buf_puts(&b, ", ");
        repr_shape(&b, nd[j], shapes[j]);
      }
      sr_buf_puts(&b, "]");
      sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=%s", b.p);
      sr_buf_free(&b);
      return -1;
    }
  return r;
}

static SrVal *int_tuple(SrNnScope *s, int n, const int64_t *v) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_int(NULL, v[i]));
  return sr_nn_keep(s, t);
}

static SrVal *vectorized_call(SrInterp *I, SrArgs *a) {
  Vectorized *V = sr_current_builtin(I)->data;
  if (a->n > MAX_ARGS) return sr_raise(I, "TypeError", "vectorize: at most %d positional arguments", MAX_ARGS);
  SrNnScope s = {I, {0}, 0};
  SrBuf ctx = {0};
  sr_buf_puts(&ctx, "on vectorized function with excluded=");
  sr_val_repr(&ctx, V->excluded);
  sr_buf_puts(&ctx, " and signature=");
  if (V->signature) {
    SrVal *sv = sr_str_cstr(NULL, V->signature);
    sr_val_repr(&ctx, sv);
    sr_unref(sv);
  } else {
    sr_buf_puts(&ctx, "None");
  }
  SrVal *dyn[MAX_ARGS], *dkwv[MAX_ARGS + 64], *r = NULL;
  const char *dkw[MAX_ARGS + 64];
  int ndyn, ndkw;
  if (a->nkw > 64) {
    sr_raise(I, "TypeError", "vectorize: too many keyword arguments");
    goto out;
  }
  SrVal *func = sr_nn_keep(&s, apply_excluded(V->fn, V->excluded, a->n, a->v, a->nkw, a->kw, a->kwv, dyn, &ndyn,
                                              dkw, dkwv, &ndkw));
  CoreDims *in = sr_xcalloc(MAX_ARGS, sizeof *in), *outd = NULL;
  int nin = ndyn, nout = 0;
  if (V->signature) {
    outd = sr_xcalloc(MAX_ARGS, sizeof *outd);
    if (parse_signature(I, V->signature, in, &nin, outd, &nout) < 0) goto out_free;
  }
  /* None arguments (with () core dims) are partially applied too */
  int anynone = 0;
  for (int i = 1; i < ndyn; i++) anynone |= dyn[i]->kind == SR_V_NONE; /* any({0}) is False */
  if (anynone) {
    SrVal *set = sr_nn_keep(&s, sr_seq(NULL, SR_V_SET, 0));
    for (int i = 0; i < ndyn; i++)
      if (dyn[i]->kind == SR_V_NONE) sr_seq_push(NULL, set, sr_int(NULL, i));
    for (int i = 0; i < ndyn; i++)
      if (dyn[i]->kind == SR_V_NONE && (i >= nin || in[i].n)) {
        SrBuf b = {0};
        sr_val_repr(&b, set);
        sr_raise(I, "ValueError", "Cannot pass None at locations %s with signature=%s", b.p, V->signature);
        sr_buf_free(&b);
        goto out_free;
      }
    SrVal *d2[MAX_ARGS];
    const char *k2[1];
    SrVal *kv2[1];
    int n2, nk2;
    func = sr_nn_keep(&s, apply_excluded(func, set, ndyn, dyn, 0, NULL, NULL, d2, &n2, k2, kv2, &nk2));
    int m = 0;
    for (int i = 0; i < ndyn; i++)
      if (dyn[i]->kind != SR_V_NONE && i < nin) in[m++] = in[i];
    if (!V->signature) m = n2;
    nin = m;
    ndyn = n2;
    memcpy(dyn, d2, (size_t)n2 * sizeof *dyn);
  }
  if (!V->signature)
    for (int i = 0; i < ndyn; i++) in[i].n = 0;
  if (V->signature && ndyn != nin) {
    sr_raise(I, "TypeError", "wrong number of positional arguments: expected %d, got %d %s", nin, ndyn, ctx.p);
    goto out_free;
  }
  nin = ndyn;
  SrVal *args[MAX_ARGS];
  int nd[MAX_ARGS];
  int64_t(*shapes)[SR_MAX_RANK] = sr_xcalloc(MAX_ARGS, sizeof *shapes);
  DimSizes *sizes = sr_xcalloc(1, sizeof *sizes);
  for (int i = 0; i < nin; i++) {
    args[i] = sr_nn_keep(&s, sr_jnp_asarray(I, dyn[i], -1));
    if (!args[i]) goto out_shapes;
  }
  for (int i = 0; i < nin; i++) {
    const SrType *t = sr_value_type(I, args[i]);
    int64_t dims[SR_MAX_RANK];
    for (int k = 0; k < t->ndim; k++) dims[k] = t->dims[k].size;
    if (update_dim_sizes(I, sizes, t->ndim, dims, &in[i], ctx.p, 1) < 0) goto out_shapes;
    nd[i] = t->ndim - in[i].n;
    memcpy(shapes[i], dims, (size_t)nd[i] * sizeof dims[0]);
  }
  int64_t bshape[SR_MAX_RANK];
  int br = broadcast_shapes(I, nin, nd, shapes, bshape);
  if (br < 0) goto out_shapes;
  SrVal *checked = func;
  if (V->signature) {
    Checked *c = sr_xcalloc(1, sizeof *c);
    c->fn = sr_ref(func);
    c->sizes = *sizes;
    c->nout = nout;
    memcpy(c->out, outd, (size_t)nout * sizeof *outd);
    c->ctx = sr_xstrdup(ctx.p);
    checked = sr_nn_keep(&s, sr_builtin_with("wrapped", checked_call, c, checked_free));
  }
  /* squeeze the size-1 broadcast dims; one vmap per broadcast dim that
     some argument has, from the last */
  SrVal *sq[MAX_ARGS];
  for (int i = 0; i < nin; i++) {
    int64_t ix[SR_MAX_RANK];
    int m = 0;
    for (int k = 0; k < nd[i]; k++)
      if (shapes[i][k] == 1) ix[m++] = k;
    const char *kw[1] = {"axis"};
    SrVal *kv[1] = {int_tuple(&s, m, ix)};
    sq[i] = sr_nn_call(&s, "jax.numpy.squeeze", 1, &args[i], 1, kw, kv);
    if (!sq[i]) goto out_shapes;
  }
  SrVal *vf = checked;
  int64_t expand[SR_MAX_RANK];
  int nexp = 0;
  for (int neg = 0; neg < br; neg++) {
    SrVal *axes = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, nin));
    int all_none = 1;
    for (int i = 0; i < nin; i++) {
      int k = nd[i] - 1 - neg; /* the filled shape's size, 1 when padded */
      int64_t size = k >= 0 ? shapes[i][k] : 1;
      sr_seq_push(NULL, axes, size == 1 ? sr_none() : sr_int(NULL, 0));
      all_none &= size == 1;
    }
    if (all_none) {
      expand[nexp++] = br - 1 - neg;
    } else {
      SrVal *fa[2] = {vf, axes};
      vf = sr_nn_call(&s, "jax.vmap", 2, fa, 0, NULL, NULL);
      if (!vf) goto out_shapes;
    }
  }
  SrArgs ca = {nin, sq, 0, NULL, NULL, NULL};
  SrVal *res = sr_nn_keep(&s, sr_call(I, vf, &ca));
  if (!res || !nexp) {
    r = res;
  } else {
    SrVal *ex = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, nexp));
    for (int i = 0; i < nexp; i++) sr_seq_push(NULL, ex, sr_int(NULL, expand[i]));
    const char *kw[1] = {"axis"};
    if (res->kind == SR_V_TUPLE) {
      SrVal *t = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, res->seq.n));
      for (int i = 0; i < res->seq.n; i++) {
        SrVal *e = sr_nn_call(&s, "jax.numpy.expand_dims", 1, &res->seq.items[i], 1, kw, &ex);
        if (!e) goto out_shapes;
        sr_seq_push(NULL, t, sr_ref(e));
      }
      r = t;
    } else {
      r = sr_nn_call(&s, "jax.numpy.expand_dims", 1, &res, 1, kw, &ex);
    }
  }
out_shapes:
  free(shapes);
  free(sizes);
out_free:
  free(in);
  free(outd);
out:
  sr_buf_free(&ctx);
  return sr_nn_done(&s, r);
}

/* jnp.vectorize(pyfunc, *, excluded=frozenset(), signature=None) */
static SrVal *jnp_vectorize(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "vectorize", "pyfunc, *, excluded=, signature=", p) < 0) return NULL;
  SrVal *excl = p[1] ? sr_ref(p[1]) : sr_seq(NULL, SR_V_FROZENSET, 0);
  if (excl->kind == SR_V_DICT || sr_is_seq(excl)) {
    int n = excl->kind == SR_V_DICT ? excl->dict.n : excl->seq.n;
    for (int i = 0; i < n; i++) {
      SrVal *e = excl->kind == SR_V_DICT ? excl->dict.keys[i] : excl->seq.items[i];
      if (e->kind != SR_V_INT && e->kind != SR_V_BOOL && e->kind != SR_V_STR) {
        SrBuf b = {0};
        sr_val_repr(&b, excl);
        sr_raise(I, "TypeError",
                 "jax.numpy.vectorize can only exclude integer or string arguments, but excluded=%s", b.p);
        sr_buf_free(&b);
        sr_unref(excl);
        return NULL;
      }
    }
    for (int i = 0; i < n; i++) {
      SrVal *e = excl->kind == SR_V_DICT ? excl->dict.keys[i] : excl->seq.items[i];
      if (e->kind == SR_V_INT && e->i < 0) {
        SrBuf b = {0};
        sr_val_repr(&b, excl);
        sr_raise(I, "ValueError", "excluded=%s contains negative numbers", b.p);
        sr_buf_free(&b);
        sr_unref(excl);
        return NULL;
      }
    }
  }
  const char *sig = NULL;
  if (p[2] && p[2]->kind != SR_V_NONE) {
    if (p[2]->kind != SR_V_STR) {
      sr_unref(excl);
      return sr_raise(I, "TypeError", "expected string or bytes-like object, got '%s'", sr_val_kind_name(p[2]));
    }
    sig = p[2]->str.s;
  }
  Vectorized *v = sr_xcalloc(1, sizeof *v);
  v->fn = sr_ref(p[0]);
  v->excluded = excl;
  v->signature = sig ? sr_xstrdup(sig) : NULL;
  SrVal *name = sr_getattr(I, p[0], "__name__");
  if (!name) sr_exc_clear(I);
  SrVal *r = sr_builtin_with(name && name->kind == SR_V_STR ? sr_intern_cstr(name->str.s) : "wrapped", vectorized_call, v,
                             vectorized_free);
  sr_unref(name);
  return r;
}

void sr_jnp_vectorize_init(void) {
  sr_def("jax.numpy.vectorize", jnp_vectorize,
         "vectorize(pyfunc, *, excluded=frozenset(), signature=None): pyfunc broadcast over leading dims (vmap)");
}

void sr_misc16_init(void) {
  sr_jnp_vectorize_init();
  sr_lax_assoc_scan_init();
  sr_custom_gradient_init();
  sr_tree_more_init();
  sr_jnp_small16_init();
}

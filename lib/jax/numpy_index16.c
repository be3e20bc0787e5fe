/* numpy_index16.c: lax.stack and lax.unstack (lax.py: stack_p,
 * unstack_p) and jnp.unstack (lax_numpy.py: an inline jit of
 * lax.unstack); jnp.partition and argpartition (sorting.py: jits of
 * lax.top_k from both ends). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jax/api.h"

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "util/intern.h"
#include "jax/tracers.h"

/* util.canonicalize_axis: axis in [-nd, nd) made non-negative, else its
   ValueError */
static int canon_axis(SrInterp *I, int64_t axis, int64_t nd, int64_t *out) {
  if (axis < -nd || axis >= nd) {
    sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %lld", (long long)axis, (long long)nd);
    return -1;
  }
  *out = axis < 0 ? axis + nd : axis;
  return 0;
}

/* ---- lax.stack, lax.unstack, jnp.unstack ---- */

static SrVal *lax_stack(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "stack", "operands, axis=", p) < 0) return NULL;
  if (!sr_is_seq(p[0])) return sr_raise(I, "TypeError", "stack: operands must be a sequence of arrays");
  int n = p[0]->seq.n;
  if (!n) return sr_raise(I, "IndexError", "list index out of range");
  SrVal **xs = sr_xcalloc((size_t)n + 1, sizeof *xs), *r = NULL;
  int ok = 1;
  for (int i = 0; i < n && ok; i++) ok = (xs[i] = sr_jnp_asarray(I, p[0]->seq.items[i], -1)) != NULL;
  int64_t axis = 0;
  if (ok && (!p[1] || sr_as_int(I, p[1], "axis", &axis) == 0) &&
      canon_axis(I, axis, sr_value_type(I, xs[0])->ndim + 1, &axis) == 0 && sr_auto_insert_reshard(I, n, xs) == 0) {
    SrPList ps = {0};
    sr_plist_add(&ps, "axis", sr_int(NULL, axis));
    r = sr_bind_prim(I, sr_prim_lookup("stack", 5), n, xs, ps.n, ps.p, NULL, 0);
    sr_plist_free(&ps);
  }
  for (int i = 0; i < n; i++) sr_unref(xs[i]);
  free(xs);
  return r;
}

/* unstack_p.bind(x, axis=axis): a tuple of x.shape[axis] arrays. */
static SrVal *unstack(SrInterp *I, SrVal *x0, SrVal *axisv) {
  SrVal *x = sr_jnp_asarray(I, x0, -1), *r = NULL;
  if (!x) return NULL;
  const SrType *t = sr_value_type(I, x);
  int64_t axis = 0;
  if (t->ndim == 0) {
    sr_raise(I, "ValueError", "unstack requires arrays with rank > 0, however a scalar array of shape () was passed.");
  } else if ((!axisv || sr_as_int(I, axisv, "axis", &axis) == 0) && canon_axis(I, axis, t->ndim, &axis) == 0) {
    int64_t n = t->dims[axis].size;
    if (n == 0) {
      r = sr_seq(NULL, SR_V_TUPLE, 0);
    } else {
      SrPList ps = {0};
      sr_plist_add(&ps, "axis", sr_int(NULL, axis));
      r = sr_bind_prim(I, sr_prim_lookup("unstack", 7), 1, &x, ps.n, ps.p, NULL, (uint32_t)n);
      sr_plist_free(&ps);
      if (r && r->kind == SR_V_LIST) r->kind = SR_V_TUPLE;
    }
  }
  sr_unref(x);
  return r;
}

static SrVal *lax_unstack(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "unstack", "x, axis=", p) < 0) return NULL;
  return unstack(I, p[0], p[1]);
}

static SrVal *jnp_unstack(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "unstack", "x, *, axis=", p) < 0) return NULL;
  /* util.ensure_arraylike */
  if (p[0]->kind == SR_V_LIST || p[0]->kind == SR_V_TUPLE)
    return sr_raise(I, "TypeError", "unstack requires ndarray or scalar arguments, got <class '%s'> at position 0.",
                    sr_val_kind_name(p[0]));
  return unstack(I, p[0], p[1]);
}

/* ---- jnp.partition, jnp.argpartition ---- */

/* qualname(*args, **kw): the NULL-terminated keyword pairs after the
   positional arguments (borrowed); a new reference or NULL. */
static SrVal *call(SrInterp *I, const char *qualname, int n, SrVal **args, ...) {
  SrVal *fn = sr_lookup_qualname(qualname);
  if (!fn) return sr_raise(I, "NotImplementedError", "%s is not available", qualname);
  const char *kw[4];
  SrVal *kwv[4];
  int nkw = 0;
  va_list ap;
  va_start(ap, args);
  for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
    SrVal *v = va_arg(ap, SrVal *);
    if (nkw < 4) kw[nkw] = sr_intern_cstr(k), kwv[nkw++] = v;
  }
  va_end(ap);
  SrArgs ca = {n, args, nkw, kw, kwv, NULL};
  return sr_call(I, fn, &ca);
}

static SrVal *call1(SrInterp *I, const char *q, SrVal *x) { return call(I, q, 1, &x, NULL); }

static SrVal *call2(SrInterp *I, const char *q, SrVal *x, SrVal *y) {
  SrVal *a[2] = {x, y};
  return call(I, q, 2, a, NULL);
}

typedef struct PartArg {
  int64_t kth, axis;
  int arg; /* argpartition */
} PartArg;

/* lax.top_k(x, k)[which] */
static SrVal *top_k(SrInterp *I, SrVal *x, int64_t k, int which) {
  SrVal *kv = sr_int(NULL, k), *r = call2(I, "jax.lax.top_k", x, kv), *y = NULL;
  sr_unref(kv);
  if (r && sr_is_seq(r) && r->seq.n == 2) y = sr_ref(r->seq.items[which]);
  sr_unref(r);
  return y;
}

/* set_to_zero(a, i) = a.at[i].set(0), vmapped over the leading dims */
static SrVal *set_to_zero(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "set_to_zero takes 2 arguments");
  SrVal *at = sr_getattr(I, a->v[0], "at"), *ref = at ? sr_getitem(I, at, a->v[1]) : NULL;
  SrVal *set = ref ? sr_getattr(I, ref, "set") : NULL, *zero = sr_int(NULL, 0), *r = NULL;
  if (set) {
    SrArgs ca = {1, &zero, 0, NULL, NULL, NULL};
    r = sr_call(I, set, &ca);
  }
  sr_unref(zero);
  sr_unref(set);
  sr_unref(ref);
  sr_unref(at);
  return r;
}

static SrVal *partition_body(SrInterp *I, SrArgs *a) {
  const PartArg *pa = sr_current_builtin(I)->data;
  SrVal *ax = sr_int(NULL, pa->axis), *m1 = sr_int(NULL, -1), *one = sr_int(NULL, 1), *r = NULL;
  SrVal *sa[3] = {a->v[0], ax, m1};
  SrVal *arr = call(I, "jax.numpy.swapaxes", 3, sa, NULL);
  SrVal *neg = NULL, *lo = NULL, *hi = NULL, *cat = NULL;
  if (!arr) goto out;
  const SrType *t = sr_value_type(I, arr);
  int64_t n = t->dims[t->ndim - 1].size;
  int uns = sr_dtype_kind(t->dtype) == SR_DK_UINT;
  /* -(arr + 1) for unsigned ints (0 stays the least), else -arr */
  SrVal *p1 = uns ? call2(I, "jax.numpy.add", arr, one) : sr_ref(arr);
  neg = p1 ? call1(I, "jax.numpy.negative", p1) : NULL;
  sr_unref(p1);
  if (!neg) goto out;
  if (!pa->arg) {
    SrVal *b = top_k(I, neg, pa->kth + 1, 0), *nb = b ? call1(I, "jax.numpy.negative", b) : NULL;
    lo = nb && uns ? call2(I, "jax.numpy.subtract", nb, one) : nb ? sr_ref(nb) : NULL;
    sr_unref(b);
    sr_unref(nb);
    hi = lo ? top_k(I, arr, n - pa->kth - 1, 0) : NULL;
  } else {
    lo = top_k(I, neg, pa->kth + 1, 1);
    /* proxy = set_to_zero(lax.full(arr.shape, 1.0), bottom_ind) */
    SrVal *f = lo ? sr_builtin_with("<lambda>", set_to_zero, NULL, NULL) : NULL;
    for (int i = 0; f && i < t->ndim - 1; i++) {
      SrVal *v = call1(I, "jax.vmap", f);
      sr_unref(f);
      f = v;
    }
    int64_t shape[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
    SrVal *onef = sr_float(NULL, 1.0), *full = f ? sr_lax_full(I, shape, t->ndim, onef, -1, NULL) : NULL;
    SrVal *fa[2] = {full, lo}, *proxy = NULL;
    if (full) {
      SrArgs ca = {2, fa, 0, NULL, NULL, NULL};
      proxy = sr_call(I, f, &ca);
    }
    hi = proxy ? top_k(I, proxy, n - pa->kth - 1, 1) : NULL;
    sr_unref(onef);
    sr_unref(full);
    sr_unref(proxy);
    sr_unref(f);
  }
  if (!hi) goto out;
  SrVal *parts = sr_seq(NULL, SR_V_LIST, 2);
  sr_seq_push(NULL, parts, sr_ref(lo));
  sr_seq_push(NULL, parts, sr_ref(hi));
  SrVal *dim = sr_int(NULL, t->ndim - 1);
  cat = call(I, "jax.lax.concatenate", 1, &parts, "dimension", dim, NULL);
  sr_unref(parts);
  sr_unref(dim);
  if (cat) {
    SrVal *sb[3] = {cat, m1, ax};
    r = call(I, "jax.numpy.swapaxes", 3, sb, NULL);
  }
out:
  sr_unref(ax);
  sr_unref(m1);
  sr_unref(one);
  sr_unref(arr);
  sr_unref(neg);
  sr_unref(lo);
  sr_unref(hi);
  sr_unref(cat);
  return r;
}

static SrVal *partition_api(SrInterp *I, SrArgs *a, int arg) {
  const char *name = arg ? "argpartition" : "partition";
  SrVal *p[3];
  if (sr_args_parse(I, a, name, "a, kth, axis=", p) < 0) return NULL;
  if (p[0]->kind == SR_V_LIST || p[0]->kind == SR_V_TUPLE)
    return sr_raise(I, "TypeError", "partition requires ndarray or scalar arguments, got <class '%s'> at position 0.",
                    sr_val_kind_name(p[0]));
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *r = NULL;
  if (!x) return NULL;
  const SrType *t = sr_value_type(I, x);
  PartArg pa = {0, -1, arg};
  if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    sr_raise(I, "NotImplementedError", "jnp.%s for complex dtype is not implemented.", name);
  } else if (sr_as_int(I, p[1], "kth", &pa.kth) == 0 && (!p[2] || sr_as_int(I, p[2], "axis", &pa.axis) == 0) &&
             canon_axis(I, pa.axis, t->ndim, &pa.axis) == 0 &&
             canon_axis(I, pa.kth, (int)t->dims[pa.axis].size, &pa.kth) == 0) {
    PartArg *d = sr_xmalloc(sizeof *d);
    *d = pa;
    SrVal *fn = sr_builtin_with(name, partition_body, d, free);
    SrArgs ca = {1, &x, 0, NULL, NULL, NULL};
    r = sr_jit_call(I, fn, name, &ca);
    sr_unref(fn);
  }
  sr_unref(x);
  return r;
}

static SrVal *jnp_partition(SrInterp *I, SrArgs *a) { return partition_api(I, a, 0); }
static SrVal *jnp_argpartition(SrInterp *I, SrArgs *a) { return partition_api(I, a, 1); }

/* ---- jnp.top_k ---- */

typedef struct TopK {
  int64_t k, axis;
  int smallest;
} TopK;

static SrVal *top_k_body(SrInterp *I, SrArgs *a) {
  const TopK *tk = sr_current_builtin(I)->data;
  SrVal *arr = a->v[0], *kv = sr_int(NULL, tk->k), *axv = sr_int(NULL, tk->axis), *one = sr_int(NULL, 1), *r = NULL;
  const SrType *t = sr_value_type(I, arr);
  int uns = sr_dtype_kind(t->dtype) == SR_DK_UINT, isbool = t->dtype == SR_BOOL;
  /* the values whose largest are arr's smallest: ~arr, -(arr + 1) or -arr */
  SrVal *inv = NULL;
  if (!tk->smallest) inv = sr_ref(arr);
  else if (isbool) inv = call1(I, "jax.lax.bitwise_not", arr);
  else if (uns) {
    SrVal *p1 = call2(I, "jax.numpy.add", arr, one);
    inv = p1 ? call1(I, "jax.numpy.negative", p1) : NULL;
    sr_unref(p1);
  } else inv = call1(I, "jax.numpy.negative", arr);
  SrVal *ca[2] = {inv, kv};
  SrVal *vi = inv ? call(I, "jax.lax.top_k", 2, ca, "axis", axv, NULL) : NULL;
  if (vi && tk->smallest && sr_is_seq(vi) && vi->seq.n == 2) {
    SrVal *v = vi->seq.items[0], *back = NULL;
    if (isbool) back = call1(I, "jax.lax.bitwise_not", v);
    else if (uns) {
      SrVal *p1 = call2(I, "jax.numpy.add", v, one);
      back = p1 ? call1(I, "jax.numpy.negative", p1) : NULL;
      sr_unref(p1);
    } else back = call1(I, "jax.numpy.negative", v);
    if (back) {
      r = sr_seq(NULL, SR_V_TUPLE, 2);
      sr_seq_push(NULL, r, back);
      sr_seq_push(NULL, r, sr_ref(vi->seq.items[1]));
    }
  } else if (vi) {
    r = sr_ref(vi);
  }
  sr_unref(vi);
  sr_unref(inv);
  sr_unref(kv);
  sr_unref(axv);
  sr_unref(one);
  return r;
}

static SrVal *jnp_top_k(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "top_k", "a, k, *, axis=, mode=, sorted=", p) < 0) return NULL;
  if (p[0]->kind == SR_V_LIST || p[0]->kind == SR_V_TUPLE)
    return sr_raise(I, "TypeError", "top_k requires ndarray or scalar arguments, got <class '%s'> at position 0.",
                    sr_val_kind_name(p[0]));
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *r = NULL;
  if (!x) return NULL;
  const SrType *t = sr_value_type(I, x);
  TopK tk = {0, -1, 0};
  const char *mode = p[3] ? sr_as_str(I, p[3], "mode") : "largest";
  if (!mode || sr_as_int(I, p[1], "k", &tk.k) < 0 || (p[2] && sr_as_int(I, p[2], "axis", &tk.axis) < 0)) {
    /* raised */
  } else if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    sr_raise(I, "ValueError", "top_k is not compatible with complex inputs.");
  } else if (strcmp(mode, "largest") != 0 && strcmp(mode, "smallest") != 0) {
    sr_raise(I, "ValueError", "mode must be 'largest' or 'smallest', got '%s'", mode);
  } else if (canon_axis(I, tk.axis, t->ndim, &tk.axis) == 0) {
    tk.smallest = strcmp(mode, "smallest") == 0;
    TopK *d = sr_xmalloc(sizeof *d);
    *d = tk;
    SrVal *fn = sr_builtin_with("top_k", top_k_body, d, free);
    SrArgs ca = {1, &x, 0, NULL, NULL, NULL};
    r = sr_jit_call(I, fn, "top_k", &ca);
    sr_unref(fn);
  }
  sr_unref(x);
  return r;
}

/* ---- jnp.ravel_multi_index ---- */

static SrVal *jnp_ravel_multi_index(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "ravel_multi_index", "multi_index, dims, mode=, order=, *, dtype=", p) < 0) return NULL;
  if (!sr_is_seq(p[0]) || !sr_is_seq(p[1])) return sr_raise(I, "TypeError", "multi_index and dims must be sequences");
  int n = p[0]->seq.n;
  if (n != p[1]->seq.n)
    return sr_raise(I, "AssertionError", "len(multi_index)=%d != len(dims)=%d", n, p[1]->seq.n);
  if (n > SR_MAX_RANK) return sr_raise(I, "NotImplementedError", "ravel_multi_index of more than %d dims", SR_MAX_RANK);
  int64_t dims[SR_MAX_RANK];
  for (int i = 0; i < n; i++)
    if (sr_as_int(I, p[1]->seq.items[i], "dims", &dims[i]) < 0) return NULL;
  const char *mode = p[2] ? sr_as_str(I, p[2], "mode") : "raise", *order = mode && p[3] ? sr_as_str(I, p[3], "order") : "C";
  if (!mode || !order) return NULL;
  SrVal *xs[SR_MAX_RANK + 1] = {0}, *r = NULL;
  int nx = 0;
  for (; nx < n; nx++) {
    SrVal *v = p[0]->seq.items[nx];
    if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
      sr_raise(I, "TypeError", "ravel_multi_index requires ndarray or scalar arguments, got <class '%s'> at position %d.",
               sr_val_kind_name(v), nx);
      goto out;
    }
    if (!(xs[nx] = sr_jnp_asarray(I, v, -1))) goto out;
  }
  /* dtypes.result_type(int, *multi_index) */
  SrDtype dt;
  if (p[4] && p[4]->kind != SR_V_NONE) {
    int d;
    if (sr_dtype_arg(I, p[4], &d, "ravel_multi_index") < 0) goto out;
    dt = (SrDtype)d;
  } else {
    SrVal *args[SR_MAX_RANK + 2];
    args[0] = sr_int(NULL, 0);
    for (int i = 0; i < n; i++) args[1 + i] = xs[i];
    int weak;
    dt = sr_jnp_result_dtype(I, n + 1, args, &weak);
    sr_unref(args[0]);
  }
  if (!sr_dtype_is_int(dt)) {
    sr_raise(I, "ValueError", "dtype=dtype('%s') is not an integer type.", sr_dtype_name(dt));
    goto out;
  }
  {
    int bits = sr_dtype_info(dt)->bits, uns = sr_dtype_kind(dt) == SR_DK_UINT;
    double mx = bits >= 64 ? (uns ? 18446744073709551615.0 : 9223372036854775807.0) : (double)((1ull << (bits - !uns)) - 1);
    double prod = 1;
    for (int i = 0; i < n; i++) prod *= (double)dims[i];
    if (prod - 1 > mx) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_putc(&b, '(');
      for (int i = 0; i < n; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)dims[i]);
      sr_buf_puts(&b, n == 1 ? ",)" : ")");
      sr_raise(I, "ValueError",
               "jnp.ravel_multi_index: dtype=dtype('%s') not large enough to hold flattened index for dims=%s. Use "
               "the dtype argument to pass a suitable dtype (e.g. dtype=np.min_scalar_type(prod(dims))).",
               sr_dtype_name(dt), sr_buf_str(&b));
      sr_buf_free(&b);
      goto out;
    }
  }
  int raise = strcmp(mode, "raise") == 0;
  for (int i = 0; i < n; i++) {
    SrArrayObj *ao = sr_array_of(xs[i]);
    if (raise && ao && ao->kind != SR_AV_CONCRETE) {
      sr_raise_concretization(I, xs[i],
                              "The error occurred because ravel_multi_index was jit-compiled with mode='raise'. Use "
                              "mode='wrap' or mode='clip' instead.");
      goto out;
    }
    if (!sr_dtype_is_int(sr_value_type(I, xs[i])->dtype)) {
      sr_raise(I, "TypeError", "only int indices permitted");
      goto out;
    }
  }
  for (int i = 0; i < n; i++) {
    SrVal *d = sr_int(NULL, dims[i]), *y = NULL;
    if (raise) {
      /* any((i < 0) | (i >= d)) */
      SrVal *z = sr_int(NULL, 0), *lt = call2(I, "jax.numpy.less", xs[i], z);
      SrVal *ge = lt ? call2(I, "jax.numpy.greater_equal", xs[i], d) : NULL;
      SrVal *o = ge ? call2(I, "jax.numpy.bitwise_or", lt, ge) : NULL, *an = o ? call1(I, "jax.numpy.any", o) : NULL;
      int bad = an ? sr_truthy(I, an) : -1;
      SrVal *tmp[] = {z, lt, ge, o, an};
      for (int k = 0; k < 5; k++) sr_unref(tmp[k]);
      if (bad) {
        if (bad > 0) sr_raise(I, "ValueError", "invalid entry in coordinates array");
        sr_unref(d);
        goto out;
      }
      y = sr_ref(xs[i]);
    } else if (strcmp(mode, "clip") == 0) {
      SrVal *z = sr_int(NULL, 0), *hi = sr_int(NULL, dims[i] - 1), *ca[3] = {xs[i], z, hi};
      y = call(I, "jax.numpy.clip", 3, ca, NULL);
      sr_unref(z);
      sr_unref(hi);
    } else if (strcmp(mode, "wrap") == 0) {
      y = call2(I, "jax.numpy.remainder", xs[i], d);
    } else if (strcmp(mode, "ignore") == 0) {
      y = sr_ref(xs[i]);
    } else {
      sr_raise(I, "ValueError", "invalid mode='%s'. Expected 'raise', 'wrap', 'clip', or 'ignore'.", mode);
    }
    sr_unref(d);
    if (!y) goto out;
    sr_unref(xs[i]);
    xs[i] = y;
  }
  int64_t strides[SR_MAX_RANK];
  if (strcmp(order, "F") == 0) {
    for (int i = 0, s = 1; i < n; s *= (int)dims[i], i++) strides[i] = s;
  } else if (strcmp(order, "C") == 0) {
    int64_t s = 1;
    for (int i = n - 1; i >= 0; s *= dims[i], i--) strides[i] = s;
  } else {
    sr_raise(I, "ValueError", "invalid order='%s'. Expected 'C' or 'F'", order);
    goto out;
  }
  /* result = array(0, dtype); result = result + i.astype(dtype) * int(s) */
  SrVal *z = sr_int(NULL, 0);
  r = sr_jnp_asarray(I, z, dt);
  sr_unref(z);
  SrVal *dv = sr_dtype_val(NULL, dt);
  for (int i = 0; r && i < n; i++) {
    SrVal *ca[2] = {xs[i], dv};
    SrVal *c = call(I, "jax.numpy.astype", 2, ca, NULL), *sv = sr_int(NULL, strides[i]);
    SrVal *m = c ? call2(I, "jax.numpy.multiply", c, sv) : NULL, *nr = m ? call2(I, "jax.numpy.add", r, m) : NULL;
    sr_unref(c);
    sr_unref(sv);
    sr_unref(m);
    sr_unref(r);
    r = nr;
  }
  sr_unref(dv);
out:
  for (int i = 0; i < n; i++) sr_unref(xs[i]);
  return r;
}

void sr_jnp_index16_init(void) {
  sr_def("jax.numpy.top_k", jnp_top_k,
         "top_k(a, k, /, *, axis=-1, mode='largest', sorted=True): jit[name=top_k]: the k largest (or smallest) "
         "values along axis and their indices, by lax.top_k");
  sr_def("jax.numpy.ravel_multi_index", jnp_ravel_multi_index,
         "ravel_multi_index(multi_index, dims, mode='raise', order='C', *, dtype=None): the flat indices of the "
         "index arrays (mode 'raise', 'wrap', 'clip' or 'ignore')");
  sr_def("jax.numpy.partition", jnp_partition,
         "partition(a, kth, axis=-1): jit[name=partition]: the kth+1 least (by top_k of -a) then the rest, each "
         "part sorted (the least ascending, the rest descending)");
  sr_def("jax.numpy.argpartition", jnp_argpartition,
         "argpartition(a, kth, axis=-1): jit[name=argpartition]: the indices of partition's order");
  sr_def("jax.lax.stack", lax_stack,
         "stack(operands, axis=0): the arrays (of one shape and dtype) joined along a new axis (stack_p)");
  sr_def("jax.lax.unstack", lax_unstack, "unstack(x, axis=0): the tuple of x's slices along axis (unstack_p)");
  sr_def("jax.numpy.unstack", jnp_unstack, "unstack(x, /, *, axis=0): lax.unstack(x, axis)");
}

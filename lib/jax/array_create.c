/* array_create.c: jnp.array of sequences holding arrays (tracers too),
 * and the device= / out_sharding= of the array constructors (JAX's
 * numpy/array_constructors.py array(), numpy/util.py
 * choose_device_or_out_sharding). */
#include "jax/array_create.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "text/print_val.h"

/* The containers a walk has seen (lists that share their items make a
   DAG whose paths are exponentially many): an open-addressed set. */
typedef struct Seen {
  const SrVal **slot;
  size_t cap, n;
} Seen;

/* 1 when v was not in the set (and is now), 0 when it was. */
static int seen_add(Seen *s, const SrVal *v) {
  if (2 * (s->n + 1) > s->cap) {
    Seen t = {sr_xcalloc(s->cap ? 2 * s->cap : 64, sizeof *t.slot), s->cap ? 2 * s->cap : 64, 0};
    for (size_t i = 0; i < s->cap; i++)
      if (s->slot[i]) seen_add(&t, s->slot[i]);
    free(s->slot);
    *s = t;
  }
  size_t h = ((uintptr_t)v >> 4) * 0x9E3779B97F4A7C15ull;
  for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
    if (s->slot[i] == v) return 0;
    if (!s->slot[i]) {
      s->slot[i] = v;
      s->n++;
      return 1;
    }
  }
}

static int has_array(const SrVal *v, int depth, Seen *seen) {
  if (depth > SR_VAL_MAX_NEST) return 0;
  if (sr_array_of(v)) return 1;
  if (v->kind != SR_V_LIST && v->kind != SR_V_TUPLE) return 0;
  if (!seen_add(seen, v)) return 0;
  for (int i = 0; i < v->seq.n; i++)
    if (has_array(v->seq.items[i], depth + 1, seen)) return 1;
  return 0;
}

/* Whether a (nested) list or tuple holds an array leaf. */
int sr_jnp_seq_has_array(SrVal *v, int depth) {
  Seen seen = {0};
  int r = has_array(v, depth, &seen);
  free(seen.slot);
  return r;
}

/* the leaves, each shared container walked once: the dtype of their
   lattice is that of the distinct ones */
static void leaves_of(SrVal *v, SrVal *out, Seen *seen, int depth) {
  if ((v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) && depth <= SR_VAL_MAX_NEST) {
    if (!seen_add(seen, v)) return;
    for (int i = 0; i < v->seq.n; i++) leaves_of(v->seq.items[i], out, seen, depth + 1);
    return;
  }
  sr_seq_push(NULL, out, sr_ref(v));
}

/* array(elt, dtype=dtype, copy=False) for one element */
static SrVal *element(SrInterp *I, SrVal *v, SrDtype dt) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    if (!sr_jnp_seq_has_array(v, 0)) return sr_jnp_asarray(I, v, dt);
    if (v->seq.n == 0) return sr_jnp_asarray(I, v, dt);
    SrVal **parts = sr_xcalloc((size_t)v->seq.n + 1, sizeof *parts);
    int n = 0, ok = 1;
    for (int i = 0; i < v->seq.n && ok; i++) {
      if (sr_interrupt_point(I)) {
        sr_raise(I, "KeyboardInterrupt", "interrupted");
        ok = 0;
        break;
      }
      SrVal *e = element(I, v->seq.items[i], dt);
      int64_t zero = 0;
      SrVal *x = e ? sr_lax_expand_dims(I, e, &zero, 1) : NULL;
      sr_unref(e);
      if (x) parts[n++] = x;
      else ok = 0;
    }
    /* a tree of concatenations, 16 at a time */
    while (ok && n > 16) {
      int m = 0;
      for (int i = 0; i < n && ok; i += 16) {
        int k = n - i < 16 ? n - i : 16;
        SrVal *c = sr_lax_concatenate(I, k, parts + i, 0);
        for (int q = 0; q < k; q++) sr_unref(parts[i + q]);
        if (!c) {
          ok = 0;
          for (int q = i + k; q < n; q++) sr_unref(parts[q]);
          n = m;
          break;
        }
        parts[m++] = c;
      }
      if (ok) n = m;
    }
    SrVal *r = ok ? sr_lax_concatenate(I, n, parts, 0) : NULL;
    for (int i = 0; i < n; i++) sr_unref(parts[i]);
    free(parts);
    return r;
  }
  if (sr_array_of(v)) return sr_lax_convert(I, v, dt, 0, NULL);
  return sr_jnp_asarray(I, v, dt);
}

SrVal *sr_jnp_array_of_arrays(SrInterp *I, SrVal *obj, int dtype) {
  SrDtype dt;
  if (dtype >= 0) {
    dt = (SrDtype)dtype;
  } else {
    SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
    Seen seen = {0};
    leaves_of(obj, l, &seen, 0);
    free(seen.slot);
    for (int i = 0; i < l->seq.n; i++)
      if (l->seq.items[i]->kind == SR_V_NONE) {
        sr_unref(l);
        return sr_raise(I, "ValueError", "None is not a valid value for jnp.array");
      }
    int weak;
    dt = sr_jnp_result_dtype(I, l->seq.n, l->seq.items, &weak);
    sr_unref(l);
    if (I->exc) return NULL;
  }
  SrVal *out = element(I, obj, dt);
  if (!out) return NULL;
  SrVal *r = sr_lax_convert(I, out, dt, 0, NULL);
  sr_unref(out);
  return r;
}

int sr_jnp_device_arg(SrInterp *I, SrVal *device, SrVal *out_sharding, const char *name, SrVal **sh, SrVal **dev) {
  *sh = *dev = NULL;
  int hd = device && device->kind != SR_V_NONE, ho = out_sharding && out_sharding->kind != SR_V_NONE;
  if (hd && ho) {
    SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
    sr_val_repr(&a, device);
    sr_val_repr(&b, out_sharding);
    sr_raise(I, "ValueError", "Only one of `device` or `out_sharding` can be set. Got device=%s and out_sharding=%s",
             a.p, b.p);
    sr_buf_free(&a);
    sr_buf_free(&b);
    return -1;
  }
  if (ho) return sr_api_canon_sharding(I, out_sharding, name, sh);
  if (!hd) return 0;
  /* canonicalize_device_to_sharding: a sharding stays one, a Device is
     placed on afterwards (device_put) */
  /* (a concrete sharding is placed on afterwards too: jnp.arange's
     device_put of sharding._is_concrete) */
  if ((device->kind == SR_V_SHARDING && device->sh.mesh->abstract) || device->kind == SR_V_SPEC)
    return sr_api_canon_sharding(I, device, name, sh);
  *dev = sr_ref(device);
  return 0;
}

SrVal *sr_jnp_put_on(SrInterp *I, SrVal *x, SrVal *dev) {
  if (!x || !dev) return x;
  SrVal *put = sr_lookup_qualname("jax.device_put");
  SrVal *argv[2] = {x, dev};
  SrArgs ca = {2, argv, 0, NULL, NULL, NULL};
  SrVal *r = put ? sr_call(I, put, &ca) : NULL;
  sr_unref(x);
  return r;
}

SrVal *sr_jnp_ndmin(SrInterp *I, SrVal *x, int ndmin) {
  const SrType *t = sr_value_type(I, x);
  if (!t || ndmin <= t->ndim) return x;
  int64_t dims[SR_MAX_RANK];
  int n = ndmin - t->ndim;
  if (ndmin > SR_MAX_RANK) {
    sr_unref(x);
    return sr_raise(I, "ValueError", "ndmin bigger than allowable number of dimensions");
  }
  for (int i = 0; i < n; i++) dims[i] = i;
  SrVal *r = sr_lax_expand_dims(I, x, dims, n);
  sr_unref(x);
  return r;
}

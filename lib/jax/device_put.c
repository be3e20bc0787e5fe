/* device_put.c: jax.device_put under a trace (api.py: device_put, which
 * binds dispatch.device_put_p when the trace state is not clean), and the
 * rules of the device_put primitive (dispatch.py):
 *
 *     b:f32[8@x] = device_put[
 *       copy_semantics=(<ArrayCopySemantics.REUSE_INPUT: 1>,)
 *       devices=(NamedSharding(mesh=..., spec=P('x',), memory_kind=device),)
 *       srcs=(None,)
 *     ] a
 *
 * One equation for all the leaves of x: devices and srcs a tuple of one
 * entry per leaf (a sharding, a device or None), src inferred as
 * _infer_src_sharding does (the value's sharding when its mesh is all
 * Explicit), copy_semantics from donate / may_alias.  Its type rule is
 * update_dp_aval (a NamedSharding gives its spec, as reshard's rule
 * computes it, and its memory kind; a device or None keeps the type), its
 * eval moves the data as reshard's does, its JVP is linear_jvp, its
 * transpose a device_put back (devices and srcs swapped, REUSE_INPUT made
 * ALWAYS_COPY) and its batching rule binds it again with the same params
 * (_device_put_batcher). */
#include <stdlib.h>
#include <string.h>

#include "jax/device_put.h"

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "ad/ops.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "jax/array_methods.h"
#include "jax/layout.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"
#include "py/objects.h"
#include "util/intern.h"

static const char *const copy_names[] = {"<ArrayCopySemantics.ALWAYS_COPY: 0>", "<ArrayCopySemantics.REUSE_INPUT: 1>",
                                         "<ArrayCopySemantics.DONATE_INPUT: 2>"};

static SrVal *copy_word(int k) { return sr_word(NULL, copy_names[k], strlen(copy_names[k])); }

/* the target of one leaf: a sharding value (a PartitionSpec made one over
   the mesh in context), a device, or None; a new reference */
static SrVal *target_of(SrInterp *I, SrVal *d, int ndim) {
  if (!d || d->kind == SR_V_NONE) return sr_none();
  if (sr_concrete_device_id(d) >= 0 || d->kind == SR_V_SHARDING) return sr_ref(d);
  if (d->kind == SR_V_SPEC) return sr_sharding_arg(I, d, ndim, "device_put");
  return sr_raise(I, "TypeError", "device_put: a device, a Sharding or None is expected, got %s", sr_val_kind_name(d));
}

/* _infer_src_sharding of a traced value: its type's sharding (memory_kind
   device) when its mesh is all Explicit, else None */
static SrVal *src_of(SrInterp *I, const SrType *t) {
  if (!t) return sr_none();
  const SrMesh *m = t->mesh ? t->mesh : sr_api_mesh(I);
  if (!m || !m->n) return sr_none();
  for (int i = 0; i < m->n; i++)
    if (m->types[i] != SR_AXIS_EXPLICIT) return sr_none();
  SrVal *sh = sr_type_sharding(I, t);
  if (!sh || sh->kind != SR_V_SHARDING) {
    sr_unref(sh);
    return sr_none();
  }
  SrVal *r = sr_sharding_val(NULL, sh->sh.mesh, sh->sh.spec, t->mem && !strcmp(t->mem, "host") ? "pinned_host" : "device");
  sr_unref(sh);
  return r;
}

/* per leaf: the matching item of a tree of targets, or the target itself */
static SrVal *leaf_targets(SrInterp *I, SrVal *x, SrVal *dev, int nleaves) {
  SrVal *out = sr_seq(NULL, SR_V_LIST, nleaves);
  int tree = dev && (dev->kind == SR_V_LIST || dev->kind == SR_V_TUPLE || dev->kind == SR_V_DICT) &&
             (x->kind == SR_V_LIST || x->kind == SR_V_TUPLE || x->kind == SR_V_DICT);
  if (tree) {
    SrVal *dl = sr_pytree_flatten(I, dev);
    if (!dl) {
      sr_unref(out);
      return NULL;
    }
    if (dl->seq.n != nleaves) {
      sr_unref(dl);
      sr_unref(out);
      return sr_raise(I, "ValueError", "device_put: the devices or shardings do not match the structure of the arguments");
    }
    for (int i = 0; i < nleaves; i++) sr_seq_push(NULL, out, sr_ref(dl->seq.items[i]));
    sr_unref(dl);
  } else {
    for (int i = 0; i < nleaves; i++) sr_seq_push(NULL, out, dev ? sr_ref(dev) : sr_none());
  }
  return out;
}

SrVal *sr_device_put_traced(SrInterp *I, SrVal *x, SrVal *device, SrVal *src, SrVal *donate, SrVal *may_alias) {
  SrVal *leaves = sr_pytree_array_leaves(I, x);
  if (!leaves) return NULL;
  int n = leaves->seq.n;
  int d = donate && sr_truthy(I, donate) > 0;
  int m = may_alias && may_alias->kind != SR_V_NONE ? sr_truthy(I, may_alias) > 0 : !d;
  if (m && d) {
    sr_unref(leaves);
    return sr_raise(I, "ValueError", "may_alias and donate cannot be True at the same time.");
  }
  SrVal *devs = leaf_targets(I, x, device && device->kind != SR_V_NONE ? device : NULL, n);
  SrVal *srcs = devs ? leaf_targets(I, x, src && src->kind != SR_V_NONE ? src : NULL, n) : NULL;
  SrVal *r = NULL;
  if (!srcs) goto out;
  SrVal *dt = sr_seq(NULL, SR_V_TUPLE, n), *st = sr_seq(NULL, SR_V_TUPLE, n), *ct = sr_seq(NULL, SR_V_TUPLE, n);
  int ok = 1;
  for (int i = 0; i < n && ok; i++) {
    const SrType *t = sr_value_type(I, leaves->seq.items[i]);
    SrVal *tv = target_of(I, devs->seq.items[i], t ? t->ndim : 0);
    SrVal *sv = srcs->seq.items[i]->kind == SR_V_NONE ? src_of(I, t) : target_of(I, srcs->seq.items[i], t ? t->ndim : 0);
    if (!tv || !sv) {
      sr_unref(tv);
      sr_unref(sv);
      ok = 0;
      break;
    }
    sr_seq_push(NULL, dt, tv);
    sr_seq_push(NULL, st, sv);
    sr_seq_push(NULL, ct, copy_word(m ? 1 : d ? 2 : 0));
  }
  if (!ok) {
    sr_unref(dt);
    sr_unref(st);
    sr_unref(ct);
    goto out;
  }
  SrVal *outs = sr_bindv(I, SR_P_device_put, n, leaves->seq.items, "copy_semantics", ct, "devices", dt, "srcs", st, NULL);
  if (outs) r = sr_pytree_unflatten(x, outs);
  sr_unref(outs);
out:
  sr_unref(devs);
  sr_unref(srcs);
  sr_unref(leaves);
  return r;
}

/* ---- the rules ---- */

static SrVal *tuple_item(SrVal *v, uint32_t i) {
  return v && v->kind == SR_V_TUPLE && (int)i < v->seq.n ? v->seq.items[i] : NULL;
}

static int ty_device_put(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  SrVal *devs = sr_rparam(e, "devices");
  for (uint32_t i = 0; i < e->nin; i++) {
    SrVal *d = tuple_item(devs, i);
    if (!d || d->kind != SR_V_SHARDING) {
      out[i] = e->in[i];
      continue;
    }
    /* dispatch.update_dp_aval: the sharding's spec, as reshard gives it */
    SrParam p = {sr_intern_cstr("dst_sharding"), d};
    SrRuleEqn r = {sr_prim(SR_P_reshard), 1, 1, 1, &e->in[i], NULL, &p, NULL};
    if (sr_prims[SR_P_reshard].type(cx, &r, &out[i]) < 0) return -1;
    if (d->sh.memory_kind) {
      SrTypeBuilder b;
      sr_type_builder(&b, out[i]);
      b.mem = !strcmp(d->sh.memory_kind, "pinned_host") ? sr_intern_cstr("host") : NULL;
      out[i] = sr_type_get(&b);
    }
  }
  return 0;
}

static int ev_device_put(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrVal *devs = sr_ev_param(e, "devices");
  for (uint32_t i = 0; i < e->nin; i++) {
    SrVal *d = tuple_item(devs, i);
    if (d && d->kind == SR_V_SHARDING) {
      SrParam p = {sr_intern_cstr("dst_sharding"), d};
      SrEvalEqn r = {.prim = sr_prim(SR_P_reshard), .params = &p, .nparams = 1, .nin = 1, .nout = 1, .in = &e->in[i], .out_type = &e->out_type[i], .out = &e->out[i], .ns = e->ns};
      if (sr_prims[SR_P_reshard].eval(cx, &r) < 0) return -1;
    } else {
      e->out[i] = sr_array_retype(e->in[i], e->out_type[i], e->in[i]->layout);
    }
  }
  return 0;
}

/* _device_put_transpose: device_put of the cotangents back, devices and
   srcs swapped, REUSE_INPUT made ALWAYS_COPY */
static int tr_device_put(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  SrVal *devs = sr_params_find(e->params, e->nparams, "devices"), *srcs = sr_params_find(e->params, e->nparams, "srcs");
  SrVal *cp = sr_params_find(e->params, e->nparams, "copy_semantics");
  SrVal **in = sr_xcalloc(e->nin + 1, sizeof *in);
  int *at = sr_xcalloc(e->nin + 1, sizeof *at), k = 0, rc = 0;
  SrVal *nd = sr_seq(NULL, SR_V_TUPLE, 0), *ns = sr_seq(NULL, SR_V_TUPLE, 0), *nc = sr_seq(NULL, SR_V_TUPLE, 0);
  for (uint32_t i = 0; i < e->nin; i++) {
    cx[i] = NULL;
    if (x[i] || !ct[i]) continue;
    SrVal *c = tuple_item(cp, i);
    if (c && c->kind == SR_V_WORD && strstr(c->str.s, "DONATE_INPUT")) {
      rc = -1;
      sr_raise(ad->I, "ValueError",
               "donate=True is not allowed during tranposition of device_put. Please file an issue if you want this to "
               "be supported.");
      break;
    }
    at[k] = (int)i;
    in[k++] = ct[i];
    SrVal *s = tuple_item(srcs, i), *d = tuple_item(devs, i);
    if (!s || s->kind == SR_V_NONE) {
      /* no source sharding known: back to the operand's (where JAX leaves
         the cotangent as it is, which the types here would not accept) */
      SrVal *back = d && d->kind == SR_V_SHARDING ? sr_ad_sharding_param(ad, sr_ad_ct_type(e->in[i]->type)) : NULL;
      if (back && back->kind == SR_V_SHARDING) s = sr_ad_keep(ad, back);
      else sr_unref(back);
    }
    sr_seq_push(NULL, nd, sr_ref(s ? s : sr_none()));
    sr_seq_push(NULL, ns, sr_ref(d ? d : sr_none()));
    sr_seq_push(NULL, nc, copy_word(0));
  }
  if (rc == 0 && k) {
    SrParam ps[3] = {{sr_intern_cstr("copy_semantics"), nc}, {sr_intern_cstr("devices"), nd}, {sr_intern_cstr("srcs"), ns}};
    SrVal *r = sr_ad_bind(ad, SR_P_device_put, k, in, 3, ps);
    if (!r) rc = -1;
    for (int j = 0; j < k && r; j++) cx[at[j]] = r->seq.items[j];
  }
  sr_unref(nd);
  sr_unref(ns);
  sr_unref(nc);
  free(in);
  free(at);
  return rc;
}

/* _device_put_batcher: the same params, the same batch dims */
static int batch_device_put(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *r = sr_ad_bind(&b->ad, SR_P_device_put, (int)e->nin, x, (int)e->nparams, e->params);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nout; i++) {
    y[i] = r->seq.items[i];
    ybd[i] = bd[i];
  }
  return 0;
}

static uint32_t nout_device_put(int nin, const SrParam *ps, int np) {
  (void)ps;
  (void)np;
  return (uint32_t)nin;
}

void sr_device_put_init(void) {
  sr_set_type_rule(SR_P_device_put, ty_device_put);
  sr_set_eval_rule(SR_P_device_put, ev_device_put);
  sr_ad_set_jvp(SR_P_device_put, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_device_put, tr_device_put);
  sr_prims[SR_P_device_put].batch = batch_device_put;
  sr_prims[SR_P_device_put].nout = nout_device_put;
}

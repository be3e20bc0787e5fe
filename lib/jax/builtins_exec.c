/* builtins_exec.c: the built-ins of concrete arrays -- devices, x.sharding,
 * x.addressable_shards, jax.device_put, jax.reshard, np.save / np.load,
 * and the array methods that need data (item); jax.random on concrete
 * keys is in random.c, jax.debug.visualize_array_sharding in debug.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/builtins_exec.h"
#include "jax/device_put.h"
#include "jax/array_create.h"

#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/kern.h"
#include "exec/layout.h"
#include "exec/npy.h"
#include "exec/prng.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/jax.h"
#include "jax/tracers.h"
#include "core/jaxstate.h"
#include "jax/np_host.h"
#include "jax/numpy.h"
#include "jax/layout.h"
#include "jax/random.h"
#include "py/objects.h"
#include "core/trace.h"
#include "jax/array_methods.h"
#include "jax/tree_util.h"
#include "check/rule.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"

/* ---- helpers ---- */

void sr_concrete_ctx(SrInterp *I, SrEvalCtx *cx, SrDiags *d, const char *where) {
  sr_eval_ctx_init(cx, I, sr_exec(I), d);
  cx->mesh = I->jax->mesh;
  sr_ev_push(cx, where);
}

/* The concrete array of a value (converting numbers and lists), a new
   reference; NULL (with *v_out set to the value) for tracers and
   abstract values. */
SrArray *sr_concrete_of(SrInterp *I, SrVal *v, SrVal **as_array) {
  SrVal *x = sr_jnp_asarray(I, v, -1);
  if (!x) return NULL;
  SrArrayObj *a = sr_array_of(x);
  if (a && a->kind == SR_AV_CONCRETE) {
    SrArray *r = sr_array_ref(a->data);
    if (as_array) *as_array = x;
    else sr_unref(x);
    return r;
  }
  if (a && a->has_value && a->kind == SR_AV_ABSTRACT && sr_backend_hooks.from_scalar) {
    /* a scalar that only has a value: make it concrete */
    int cx = sr_dtype_kind(a->type->dtype) == SR_DK_COMPLEX;
    double re = cx ? a->value.c[0] : sr_dtype_is_inexact(a->type->dtype) ? a->value.f : (double)a->value.i;
    SrArray *r = sr_backend_hooks.from_scalar(I, a->type, re, cx ? a->value.c[1] : 0, a->value.i);
    if (as_array) *as_array = x;
    else sr_unref(x);
    return r;
  }
  if (as_array) *as_array = x;
  else sr_unref(x);
  return NULL;
}

static const SrMesh *device_mesh(int dev) {
  SrMesh m = {0};
  m.devices = &dev;
  return sr_mesh_intern(&m);
}

/* The whole value on the host (malloc'ed), or NULL with an exception. */
void *sr_concrete_host_data(SrInterp *I, SrArray *a) {
  SrEvalCtx cx;
  SrDiags d = SR_DIAGS_INIT;
  sr_concrete_ctx(I, &cx, &d, "fetch");
  size_t n = (size_t)sr_type_numel(a->type) * sr_elem_size(a->type->dtype);
  void *h = sr_xmalloc(n ? n : 1);
  if (sr_array_to_host(&cx, a, h) < 0) {
    free(h);
    sr_raise_diags(I, &d, "RuntimeError");
    return NULL;
  }
  return h;
}

SrVal *sr_concrete_wrap(SrArray *a) { return a ? sr_array_concrete(a) : NULL; }

/* ---- devices ---- */

static void device_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "CpuDevice(id=%d)", (int)(intptr_t)v->obj.data);
}

static void device_str(SrBuf *out, const SrVal *v) { sr_buf_printf(out, "cpu:%d", (int)(intptr_t)v->obj.data); }

static SrVal *device_getattr(SrInterp *I, SrVal *self, const char *name) {
  int id = (int)(intptr_t)self->obj.data;
  if (strcmp(name, "id") == 0) return sr_int(NULL, id);
  if (strcmp(name, "platform") == 0 || strcmp(name, "device_kind") == 0) return sr_str_cstr(NULL, "cpu");
  if (strcmp(name, "process_index") == 0) {
    SrComm *c = sr_exec(I)->comm;
    return sr_int(NULL, c->nranks > 1 ? (int64_t)id * c->nranks / c->ndev : 0);
  }
  return NULL;
}

static SrVal *device_compare(SrInterp *I, int op, SrVal *a, SrVal *b);
static const SrLangOps device_ops = {.getattr = device_getattr, .compare = device_compare};
static const SrClass device_class = {"CpuDevice", NULL, device_repr, device_str, &device_ops};

static SrVal *device_compare(SrInterp *I, int op, SrVal *a, SrVal *b) {
  (void)I;
  if (!sr_is_obj(a, &device_class) || !sr_is_obj(b, &device_class)) return NULL;
  int eq = a->obj.data == b->obj.data;
  if (op == SR_OP_EQ) return sr_bool(eq);
  if (op == SR_OP_NE) return sr_bool(!eq);
  return NULL;
}

static SrVal *device_val(int id) { return sr_obj(&device_class, (void *)(intptr_t)id); }

SrVal *sr_concrete_device_val(int id) { return device_val(id); }

int sr_concrete_device_id(const SrVal *v) { return sr_is_obj(v, &device_class) ? (int)(intptr_t)v->obj.data : -1; }

static SrVal *bi_devices(SrInterp *I, SrArgs *a) {
  (void)a;
  SrComm *c = sr_exec(I)->comm;
  SrVal *l = sr_seq(NULL, SR_V_LIST, c->ndev);
  for (int i = 0; i < c->ndev; i++) sr_seq_push(NULL, l, device_val(i));
  return l;
}

static SrVal *bi_local_devices(SrInterp *I, SrArgs *a) {
  (void)a;
  SrComm *c = sr_exec(I)->comm;
  SrVal *l = sr_seq(NULL, SR_V_LIST, c->dev_hi - c->dev_lo);
  for (int i = c->dev_lo; i < c->dev_hi; i++) sr_seq_push(NULL, l, device_val(i));
  return l;
}

static SrVal *bi_device_count(SrInterp *I, SrArgs *a) {
  (void)a;
  return sr_int(NULL, sr_exec(I)->comm->ndev);
}

static SrVal *bi_local_device_count(SrInterp *I, SrArgs *a) {
  (void)a;
  SrComm *c = sr_exec(I)->comm;
  return sr_int(NULL, c->dev_hi - c->dev_lo);
}

static SrVal *bi_process_index(SrInterp *I, SrArgs *a) {
  (void)a;
  return sr_int(NULL, sr_exec(I)->comm->rank);
}

static SrVal *bi_process_count(SrInterp *I, SrArgs *a) {
  (void)a;
  return sr_int(NULL, sr_exec(I)->comm->nranks);
}

/* ---- x.sharding ---- */

static int mesh_has_auto(const SrMesh *m) {
  for (int i = 0; m && i < m->n; i++)
    if (m->types[i] == SR_AXIS_AUTO) return 1;
  return 0;
}

/* The concrete sharding of an array: what device_put was given, or the
   layout's (trailing Nones dropped where the evaluator chose Auto axes, as
   XLA's shardings print). */
static SrVal *array_sharding(SrArray *a) {
  if (a->sharding) return sr_ref(a->sharding);
  if (!a->mesh || !a->mesh->n) return sr_single_device_sharding(a->mesh ? sr_mesh_device(a->mesh, 0) : 0);
  SrShardSpec s;
  sr_shard_of_type(a->layout, &s);
  s.mesh = sr_mesh_shape(a->mesh);
  /* the spec XLA's sharding converts to has no trailing Nones; one that
     names Explicit axes and no Auto one is the type's own, in full (pxla's
     out shardings) */
  int explicit = 0, autos = 0;
  for (int i = 0; i < s.ndim; i++)
    for (int k = 0; k < s.nax[i]; k++) {
      explicit |= a->mesh->types[s.ax[i][k]] == SR_AXIS_EXPLICIT;
      autos |= a->mesh->types[s.ax[i][k]] == SR_AXIS_AUTO;
    }
  if (mesh_has_auto(a->mesh) && (!explicit || autos)) {
    /* nor axes of size 1, which an HLO sharding does not show */
    for (int i = 0; i < s.ndim; i++) {
      int n = 0;
      for (int k = 0; k < s.nax[i]; k++)
        if (a->mesh->sizes[s.ax[i][k]] != 1) s.ax[i][n++] = s.ax[i][k];
      s.nax[i] = (uint8_t)n;
    }
    while (s.ndim > 0 && s.nax[s.ndim - 1] == 0) s.ndim--;
  }
  SrVal *spec = sr_shard_to_spec_val(&s);
  /* core.mem_space_to_kind: host memory is pinned_host */
  const char *mk = a->type->mem && strcmp(a->type->mem, "host") == 0 ? "pinned_host" : "device";
  SrVal *r = sr_sharding_val(NULL, a->mesh, spec->spec, sr_intern_cstr(mk));
  sr_unref(spec);
  return r;
}

SrVal *sr_concrete_array_sharding(SrArray *a) { return array_sharding(a); }

void sr_concrete_sharding_str(SrInterp *I, SrBuf *out, SrArray *a) {
  (void)I;
  SrVal *s = array_sharding(a);
  sr_val_str(out, s);
  sr_unref(s);
}

static SrVal *prop_sharding(SrInterp *I, SrArgs *a) {
  SrArrayObj *o = sr_array_of(a->self);
  if (!o) return sr_raise(I, "TypeError", "sharding of a non-array");
  /* Tracer.__getattr__: no sharding on a tracer (its type has it) */
  if (o->kind == SR_AV_TRACER) {
    SrBuf b = SR_BUF_INIT;
    sr_type_str(&b, o->type, 0);
    sr_raise(I, "AttributeError",
             "The 'sharding' attribute is not available on traced array with shape %s. To query sharding "
             "information on tracers, use `jax.typeof(x)`.",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  if (o->kind != SR_AV_CONCRETE) return sr_type_sharding(I, o->type);
  return array_sharding(o->data);
}

/* ---- x.addressable_shards ---- */

typedef struct Shard {
  int device;
  SrVal *data, *index;
  int replica;
} Shard;

static void shard_free(void *p) {
  Shard *s = p;
  sr_unref(s->data);
  sr_unref(s->index);
  free(s);
}

static void shard_repr(SrBuf *out, const SrVal *v) {
  const Shard *s = v->obj.data;
  sr_buf_printf(out, "Shard(device=CpuDevice(id=%d), index=", s->device);
  sr_val_repr(out, s->index);
  sr_buf_printf(out, ", replica_id=%d, data=", s->replica);
  sr_val_str(out, s->data);
  sr_buf_putc(out, ')');
}

static SrVal *shard_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  Shard *s = self->obj.data;
  if (strcmp(name, "device") == 0) return device_val(s->device);
  if (strcmp(name, "data") == 0) return sr_ref(s->data);
  if (strcmp(name, "index") == 0) return sr_ref(s->index);
  if (strcmp(name, "replica_id") == 0) return sr_int(NULL, s->replica);
  return NULL;
}

static const SrLangOps shard_ops = {.getattr = shard_getattr};
static const SrClass shard_class = {"Shard", shard_free, shard_repr, NULL, &shard_ops};

static SrVal *prop_addressable_shards(SrInterp *I, SrArgs *args) {
  SrArrayObj *o = sr_array_of(args->self);
  if (!o || o->kind != SR_AV_CONCRETE)
    return sr_raise(I, "ConcretizationTypeError", "addressable_shards of an abstract or traced array");
  SrArray *a = o->data;
  SrComm *c = sr_exec(I)->comm;
  const SrType *l = a->layout;
  int64_t shape[SR_MAX_RANK];
  sr_layout_shard_shape(l, shape);
  const SrType *st = sr_type_array(a->type->dtype, l->ndim, shape);
  SrVal *list = sr_seq(NULL, SR_V_LIST, a->ndev);
  for (int p = 0; p < a->ndev; p++) {
    /* Under MPI every rank lists every device's shard (one controller's
       view, as in one process); another rank's data is fetched from it
       when used, so all ranks run the same collectives. */
    SrBuffer *b = sr_array_buf(a, p);
    if (!b && sr_comm_local(c, a->mesh, p)) continue;
    int dev = a->mesh ? sr_mesh_device(a->mesh, p) : 0;
    SrArray *d = sr_array_new(st, NULL, device_mesh(dev));
    d->shard[0] = sr_buffer_ref(b);
    d->local = a->local; /* the shard's bytes, in the array's order */
    d->committed = a->committed; /* Shard.data: committed as its array */
    memcpy(d->m2m, a->m2m, sizeof d->m2m);
    Shard *s = sr_xcalloc(1, sizeof *s);
    s->device = dev;
    s->data = sr_array_concrete(d);
    int64_t start[SR_MAX_RANK];
    if (a->mesh) sr_layout_block_start(l, a->mesh, p, start);
    else memset(start, 0, sizeof start);
    s->index = sr_seq(NULL, SR_V_TUPLE, l->ndim);
    for (int i = 0; i < l->ndim; i++) {
      int whole = !l->dims[i].nax;
      sr_seq_push(NULL, s->index,
                  sr_slice_new(whole ? sr_none() : sr_int(NULL, start[i]), whole ? sr_none() : sr_int(NULL, start[i] + shape[i]),
                               sr_none()));
    }
    /* replica_id: how many earlier devices hold the same block */
    int rep = 0;
    for (int q = 0; q < p && a->mesh; q++) {
      int same = 1;
      for (int i = 0; i < l->ndim && same; i++)
        same = sr_layout_block_index(l, a->mesh, q, i) == sr_layout_block_index(l, a->mesh, p, i);
      rep += same;
    }
    s->replica = rep;
    sr_seq_push(NULL, list, sr_obj(&shard_class, s));
  }
  return list;
}

/* x.addressable_data(i): the data of the i-th addressable shard
   (ArrayImpl.addressable_data, self._arrays[index]). */
static SrVal *m_addressable_data(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->v[1]->kind != SR_V_INT)
    return sr_raise(I, "TypeError", "addressable_data() takes one integer argument");
  SrArgs sa = {.self = a->v[0]};
  SrVal *list = prop_addressable_shards(I, &sa);
  if (!list) return NULL;
  int64_t i = a->v[1]->i, n = list->seq.n;
  if (i < 0) i += n;
  if (i < 0 || i >= n) {
    sr_unref(list);
    return sr_raise(I, "IndexError", "list index out of range");
  }
  SrVal *d = sr_ref(((Shard *)list->seq.items[i]->obj.data)->data);
  sr_unref(list);
  return d;
}

/* ---- api.device_put_sharded, api.device_put_replicated (jax._src.api;
   jax's own names were removed in 0.10) ---- */

/* NamedSharding(Mesh(np.array(devices), (name,)), P(name)) */
static SrVal *devices_sharding(SrNnScope *s, SrVal *devices, const char *name) {
  SrVal *nm = sr_nn_keep(s, sr_str_cstr(NULL, name));
  SrVal *names = sr_nn_keep(s, sr_tuple(NULL, 1, (SrVal *[]){sr_ref(nm)}));
  SrVal *mesh = sr_nn_call2(s, "jax.sharding.Mesh", sr_nn_call1(s, "numpy.array", devices), names);
  return sr_nn_call2(s, "jax.sharding.NamedSharding", mesh, sr_nn_call1(s, "jax.sharding.PartitionSpec", nm));
}

static SrVal *bi_device_put_sharded(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "device_put_sharded", "shards, devices", p) < 0) return NULL;
  if (!sr_is_seq(p[0]))
    return sr_raise(I, "TypeError", "device_put_sharded `shards` input must be a sequence; got <class '%s'>",
                    sr_val_kind_name(p[0]));
  int n = sr_is_seq(p[1]) ? p[1]->seq.n : -1;
  if (p[0]->seq.n != n)
    return sr_raise(I, "ValueError", "len(shards) = %d must equal len(devices) = %d.", p[0]->seq.n, n);
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  const SrType *t0 = NULL;
  for (int i = 0; i < n; i++) {
    SrVal *x = sr_nn_keep(s, sr_jnp_asarray(I, p[0]->seq.items[i], -1));
    const SrType *t = x ? sr_value_type(I, x) : NULL;
    if (!t) return sr_nn_done(s, NULL);
    int same = t0 && t->dtype == t0->dtype && t->ndim == t0->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = t->dims[d].size == t0->dims[d].size;
    if (t0 && !same) {
      sr_raise(I, "ValueError",
               "the shards passed to device_put_sharded must have consistent shape and dtype, but got %s and %s.",
               sr_type_short(t0), sr_type_short(t));
      return sr_nn_done(s, NULL);
    }
    t0 = t;
  }
  SrVal *st = sr_nn_call1(s, "jax.numpy.stack", p[0]);
  return sr_nn_done(s, sr_nn_call2(s, "jax.device_put", st, devices_sharding(s, p[1], "_device_put_sharded")));
}

static SrVal *bi_device_put_replicated(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "device_put_replicated", "x, devices", p) < 0) return NULL;
  if (!sr_is_seq(p[1]) || !p[1]->seq.n)
    return sr_raise(I, "ValueError", "`devices` argument to `device_put_replicated must be a non-empty sequence.");
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *x = sr_nn_keep(s, sr_jnp_asarray(I, p[0], -1));
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  if (!t) return sr_nn_done(s, NULL);
  int64_t shape[SR_MAX_RANK + 1];
  shape[0] = p[1]->seq.n;
  for (int i = 0; i < t->ndim; i++) shape[i + 1] = t->dims[i].size;
  SrVal *b = sr_nn_call2(s, "jax.numpy.broadcast_to", x, sr_nn_keep(s, sr_int_tuple(shape, t->ndim + 1)));
  return sr_nn_done(s, sr_nn_call2(s, "jax.device_put", b, devices_sharding(s, p[1], "_device_put_replicated")));
}

/* ---- device_put and reshard ---- */

/* A spec padded with Nones to rank n (PartitionSpec._normalized_spec_for_aval). */
static SrVal *padded_spec(const SrSpec *s, int n) {
  SrSpec c = *s;
  SrSpecEntry e[SR_MAX_RANK];
  int k = 0;
  for (; k < s->n && k < SR_MAX_RANK; k++) e[k] = s->e[k];
  for (; k < n; k++) e[k] = (SrSpecEntry){0, NULL};
  c.e = e;
  c.n = n > s->n ? n : s->n;
  return sr_spec_val(NULL, &c);
}

/* The type a layout gives on mesh m: only its Explicit axes. */
const SrType *sr_concrete_type_of_layout(const SrType *base, const SrType *l, const SrMesh *m) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  b.weak = base->weak;
  SrAxes expl = m ? sr_mesh_axes_of_type(m, SR_AXIS_EXPLICIT) : 0;
  int named = 0;
  for (int i = 0; i < b.ndim; i++) {
    SrDim *d = &b.dims[i];
    int n = 0;
    for (int k = 0; k < d->nax; k++)
      if (expl & (1u << d->ax[k])) d->ax[n++] = d->ax[k];
    for (int k = n; k < SR_MAX_DIM_AXES; k++) d->ax[k] = 0;
    d->nax = (uint8_t)n;
    named |= n > 0;
  }
  b.unreduced &= expl;
  b.reduced &= expl;
  if (!b.unreduced) b.ukind = SR_UK_NONE;
  named |= b.unreduced || b.reduced;
  b.mesh = named && m ? sr_mesh_shape(m) : NULL;
  return sr_type_get(&b);
}

/* sharding._common_shard_shape's IndivisibleError (a ValueError): each
   dimension split into a number of parts that divides it */
int sr_concrete_check_divisible(SrInterp *I, const SrType *l, const SrVal *sh) {
  for (int i = 0; i < l->ndim; i++) {
    int64_t n = sr_layout_splits(l, i);
    if (n > 1 && l->dims[i].size % n) {
      SrBuf b = SR_BUF_INIT, shp = SR_BUF_INIT, parts = SR_BUF_INIT;
      sr_val_str(&b, sh);
      sr_buf_putc(&shp, '(');
      sr_buf_putc(&parts, '(');
      for (int k = 0; k < l->ndim; k++) {
        sr_buf_printf(&shp, k ? ", %lld" : "%lld", (long long)l->dims[k].size);
        sr_buf_printf(&parts, k ? ", %lld" : "%lld", (long long)sr_layout_splits(l, k));
      }
      sr_buf_puts(&shp, l->ndim == 1 ? ",)" : ")");
      sr_buf_puts(&parts, l->ndim == 1 ? ",)" : ")");
      sr_raise(I, "IndivisibleError",
               "%s implies that array axis %d is partitioned %lld times, but the dimension size is %lld (full shape: "
               "%s, per-dimension tiling factors: %s should evenly divide the shape)",
               b.p, i, (long long)n, (long long)l->dims[i].size, shp.p, parts.p);
      sr_buf_free(&b);
      sr_buf_free(&shp);
      sr_buf_free(&parts);
      return -1;
    }
  }
  return 0;
}

/* device_put's target as a concrete sharding value (new ref), a device,
   or NULL (with *dev set) */
SrVal *sr_concrete_target_sharding(SrInterp *I, SrVal *t, int *dev) {
  *dev = -1;
  if (sr_is_obj(t, &device_class)) {
    *dev = (int)(intptr_t)t->obj.data;
    return NULL;
  }
  if (sr_single_device_sharding_id(t) >= 0) {
    *dev = sr_single_device_sharding_id(t);
    return NULL;
  }
  if (t->kind == SR_V_SPEC) {
    if (!I->jax->mesh)
      return sr_raise(I, "ValueError",
                      "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put");
    return sr_sharding_val(NULL, I->jax->mesh, t->spec, sr_intern_cstr("device"));
  }
  if (t->kind == SR_V_SHARDING) {
    if (t->sh.mesh->abstract) return sr_raise(I, "ValueError", "device_put needs a NamedSharding over a concrete Mesh, not an AbstractMesh");
    return sr_sharding_val(NULL, t->sh.mesh, t->sh.spec, t->sh.memory_kind ? t->sh.memory_kind : sr_intern_cstr("device"));
  }
  /* api.py's _check_sharding */
  SrBuf b = SR_BUF_INIT;
  sr_to_str(I, &b, t);
  sr_raise(I, "ValueError",
           "`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, `Format`, "
           "`jax.memory.Space` or a pytree of these values. Received invalid value: %s",
           sr_buf_str(&b));
  sr_buf_free(&b);
  return NULL;
}

static SrVal *bind_reshard(SrInterp *I, SrVal *x, SrVal *target) {
  const SrType *t = sr_value_type(I, x);
  if (!t) return sr_raise(I, "TypeError", "reshard of a non-array");
  SrVal *sh = sr_sharding_arg(I, target, t->ndim, "reshard");
  if (!sh) {
    if (!I->exc)
      sr_raise(I, "ValueError", "Reshard should only be used with out_shardings which are non-None and have a non-empty mesh. Got sharding None.");
    return NULL;
  }
  SrVal *full = padded_spec(sh->sh.spec, t->ndim);
  SrVal *ds = sr_sharding_val(NULL, sh->sh.mesh, full->spec, NULL);
  sr_unref(full);
  sr_unref(sh);
  SrVal *cm = target->kind == SR_V_SHARDING && !target->sh.mesh->abstract ? sr_mesh_val(NULL, target->sh.mesh) : sr_none();
  return sr_bindv(I, SR_P_reshard, 1, &x, "dst_sharding", ds, "concrete_mesh", cm, NULL);
}

static SrVal *bi_device_put(SrInterp *I, SrArgs *args);

/* jax.device_put of a pytree (a list, tuple or dict of arrays): each leaf
   put, the device or sharding broadcast over it, or a tree of them that
   matches it. */
static SrVal *device_put_tree(SrInterp *I, SrVal *x, SrVal *dev, SrVal *don) {
  SrVal *ch = x->kind != SR_V_NONE ? sr_pytree_children(x) : NULL;
  if (!ch) {
    SrVal *v[2] = {x, dev ? dev : sr_none()};
    const char *kw = sr_intern_cstr("donate");
    SrArgs a = {2, v, don ? 1 : 0, &kw, &don, NULL};
    return bi_device_put(I, &a);
  }
  /* donate: a bool for all the leaves, or a tree prefix of x */
  SrVal *donch = don && (don->kind == SR_V_TUPLE || don->kind == SR_V_LIST) ? don : NULL;
  if (donch && donch->seq.n != ch->seq.n) {
    sr_unref(ch);
    return sr_raise(I, "ValueError", "device_put: donate does not match the structure of the arguments");
  }
  SrVal *dch = dev && dev->kind != SR_V_NONE ? sr_pytree_children(dev) : NULL;
  if (dch && dch->seq.n != ch->seq.n) {
    sr_unref(ch);
    sr_unref(dch);
    return sr_raise(I, "ValueError", "device_put: the devices or shardings do not match the structure of the arguments");
  }
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *r = device_put_tree(I, ch->seq.items[i], dch ? dch->seq.items[i] : dev, donch ? donch->seq.items[i] : don);
    if (!r) {
      sr_unref(ch);
      sr_unref(dch);
      return NULL;
    }
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = r;
  }
  SrVal *r = sr_pytree_rebuild(x, ch);
  sr_unref(ch);
  sr_unref(dch);
  return r;
}

static SrVal *device_put1(SrInterp *I, SrArgs *args);
/* device_put(x, donate=True) of an array: x is deleted once copied
   (CopySemantics.DONATE) */
static SrVal *bi_device_put(SrInterp *I, SrArgs *args) {
  SrVal *r = device_put1(I, args);
  if (!r || I->trace || !args->n) return r;
  SrVal *don = NULL;
  for (int k = 0; k < args->nkw; k++)
    if (strcmp(args->kw[k], "donate") == 0) don = args->kwv[k];
  if (!don || don->kind != SR_V_BOOL || !don->i) return r;
  SrArrayObj *xo = sr_array_of(args->v[0]), *ro = sr_array_of(r);
  if (xo && ro && xo != ro && xo->kind == SR_AV_CONCRETE && ro->kind == SR_AV_CONCRETE && xo->data != ro->data)
    xo->deleted = 1;
  return r;
}

static SrVal *device_put1(SrInterp *I, SrArgs *args) {
  SrVal *p[5];
  if (sr_args_parse(I, args, "device_put", "x, device=, *, src=, donate=, may_alias=", p) < 0) return NULL;
  if (sr_check_py_int(I, p[0]) < 0) return NULL;
  /* shard_map.py's _device_put_eager_rule: no device in an eager
     shard_map's body (under jit it is ignored) */
  int dev_id = p[1] ? sr_concrete_device_id(p[1]) : -1;
  if (dev_id >= 0 && sr_tracers_in_eager_smap(I))
    return sr_raise(I, "ValueError",
                    "device_put with explicit device not allowed within shard_map-decorated functions, but got "
                    "device TFRT_CPU_%d", dev_id);
  /* under a trace: the device_put primitive (device_put.c), but for a
     Format, whose layout is handled below */
  SrVal *fsh = p[1], *fl = NULL;
  int fk = 0;
  if (I->trace && sr_format_parts(p[1], &fsh, &fl, &fk) < 0) return sr_device_put_traced(I, p[0], p[1], p[2], p[3], p[4]);
  /* api_util.flatten_axes("device_put device", ...): a tree of devices
     is a prefix of x's */
  if (p[1] && (p[1]->kind == SR_V_LIST || p[1]->kind == SR_V_TUPLE || p[1]->kind == SR_V_DICT) &&
      sr_tree_prefix_check(I, "device_put device", p[1], p[0]) < 0)
    return NULL;
  /* a pytree node (a container, a namedtuple, a registered class): its
     leaves put one by one */
  SrVal *xch = p[0]->kind != SR_V_NONE ? sr_pytree_children(p[0]) : NULL;
  if (xch) {
    sr_unref(xch);
    return device_put_tree(I, p[0], p[1] && p[1]->kind != SR_V_NONE ? p[1] : NULL, p[3]);
  }
  /* a Format: its sharding places, its layout orders each shard */
  SrVal *flayout = NULL;
  int flocal = 0;
  if (sr_format_parts(p[1], &p[1], &flayout, &flocal) >= 0) {
    if (flocal < 0) return sr_raise(I, "ValueError", "device_put does not accept Layout.AUTO: it needs a concrete Layout");
    SrArgs inner = *args;
    SrVal *iv[2] = {p[0], p[1] ? p[1] : sr_none()};
    inner.n = 2;
    inner.v = iv;
    inner.nkw = 0;
    SrVal *r = bi_device_put(I, &inner);
    SrArrayObj *ro = r ? sr_array_of(r) : NULL;
    if (!r || !flocal) return r;
    if (!ro || ro->kind != SR_AV_CONCRETE) {
      sr_unref(r);
      return sr_raise(I, "NotImplementedError", "device_put with a Layout under a trace");
    }
    SrBuf b = SR_BUF_INIT;
    int misfit = sr_layout_misfit(&b, flayout, ro->type);
    if (misfit) sr_raise(I, misfit == 2 ? "JaxRuntimeError" : "ValueError", "%s", b.p);
    sr_buf_free(&b);
    if (misfit) {
      sr_unref(r);
      return NULL;
    }
    uint8_t m2m[SR_MAX_RANK];
    sr_layout_dims(flayout, m2m);
    SrArray *l = sr_array_relayout(ro->data, m2m);
    l->committed = 1;
    sr_unref(r);
    return sr_concrete_wrap(l);
  }
  if (sr_array_of(p[0]) && sr_array_check_deleted(I, p[0]) < 0) return NULL;
  /* api.device_put's copy semantics: may_alias defaults to not donate;
     an array already placed so is itself the result where it may alias
     (dispatch._device_put_sharding_impl's REUSE_INPUT) */
  int donate = p[3] && sr_truthy(I, p[3]) > 0;
  int alias = p[4] && p[4]->kind != SR_V_NONE ? sr_truthy(I, p[4]) > 0 : !donate;
  if (alias && donate) return sr_raise(I, "ValueError", "may_alias and donate cannot be True at the same time.");
  SrArrayObj *xo = sr_array_of(p[0]);
  if (alias && xo && xo->kind == SR_AV_CONCRETE && !xo->deleted && !I->trace) {
    if (!p[1] || p[1]->kind == SR_V_NONE) return sr_ref(p[0]);
    if (xo->data->committed && !sr_is_obj(p[1], &device_class)) {
      /* NamedSharding.__eq__: the same mesh (devices too), spec and
         memory kind */
      SrVal *xs = sr_getattr(I, p[0], "sharding");
      int same = xs && xs->kind == SR_V_SHARDING && p[1]->kind == SR_V_SHARDING && xs->sh.mesh == p[1]->sh.mesh &&
                 sr_val_equal(xs, p[1]);
      if (xs && xs->kind == SR_V_OBJ && p[1]->kind == SR_V_OBJ && strcmp(sr_val_kind_name(xs), "SingleDeviceSharding") == 0 &&
          strcmp(sr_val_kind_name(p[1]), "SingleDeviceSharding") == 0) {
        SrVal *eq = sr_binop(I, SR_OP_EQ, xs, p[1]);
        same = eq && sr_truthy(I, eq) > 0;
        sr_unref(eq);
      } else if (same) {
        const char *kx = xs->sh.memory_kind ? xs->sh.memory_kind : "device";
        const char *ky = p[1]->sh.memory_kind ? p[1]->sh.memory_kind : "device";
        same = strcmp(kx, ky) == 0;
      }
      sr_unref(xs);
      if (I->exc) sr_exc_clear(I);
      if (same) return sr_ref(p[0]);
    }
  }
  SrVal *xv = NULL, *given = p[0];
  /* a Python scalar is put as the weakly typed array it stands for */
  int py = p[0]->kind == SR_V_INT || p[0]->kind == SR_V_FLOAT || p[0]->kind == SR_V_BOOL || p[0]->kind == SR_V_COMPLEX;
  if (py && !(p[0] = sr_call1(I, sr_lookup_qualname("jax.numpy.asarray"), given))) return NULL;
  SrArray *a = sr_concrete_of(I, p[0], &xv);
  if (py) {
    sr_unref(p[0]);
    p[0] = given;
  }
  if (!xv) return NULL;
  if (!a) {
    /* traced: device_put to a sharding is a reshard (but for another
       memory space, which JAX's device_put primitive would carry) */
    const SrType *xt = sr_value_type(I, xv);
    if (p[1] && p[1]->kind == SR_V_SHARDING && p[1]->sh.memory_kind && xt &&
        (strcmp(p[1]->sh.memory_kind, "pinned_host") == 0) != (xt->mem && strcmp(xt->mem, "host") == 0)) {
      sr_unref(xv);
      return sr_raise(I, "NotImplementedError", "device_put to memory_kind=%s under a trace", p[1]->sh.memory_kind);
    }
    SrVal *r = p[1] && p[1]->kind != SR_V_NONE && !sr_is_obj(p[1], &device_class) ? bind_reshard(I, xv, p[1]) : sr_ref(xv);
    sr_unref(xv);
    return r;
  }
  sr_unref(xv);
  if (!p[1] || p[1]->kind == SR_V_NONE) return sr_concrete_wrap(a);
  int dev;
  SrVal *sh = sr_concrete_target_sharding(I, p[1], &dev);
  if ((!sh && dev < 0) || (sh && sr_api_check_spec(I, sh->sh.spec, sh, a->type->ndim) < 0)) {
    sr_unref(sh);
    sr_array_unref(a);
    return NULL;
  }
  SrEvalCtx cx;
  SrDiags d = SR_DIAGS_INIT;
  sr_concrete_ctx(I, &cx, &d, "device_put");
  const SrType *plain = sr_type_strip_sharding(a->type);
  const SrMesh *m;
  const SrType *l;
  if (dev >= 0) {
    if (dev >= cx.comm->ndev) {
      sr_array_unref(a);
      return sr_raise(I, "ValueError", "no device %d", dev);
    }
    m = device_mesh(dev);
    l = sr_layout_of_type(sr_type_with_weak(plain, 0));
  } else {
    m = sh->sh.mesh;
    if (sh->sh.spec->nunreduced && sh->sh.spec->ukind != SR_UK_SUM) {
      sr_unref(sh);
      sr_array_unref(a);
      /* dispatch._device_put_impl raises it bare */
      return sr_raise(I, "NotImplementedError", "%s", "");
    }
    if (sr_mesh_ndev(m) > cx.comm->ndev) {
      sr_unref(sh);
      sr_array_unref(a);
      return sr_raise(I, "ValueError", "the mesh has more devices than the %d there are", cx.comm->ndev);
    }
    if (sr_ev_layout_of_sharding(&cx, plain, sh, m, &l) < 0 || sr_concrete_check_divisible(I, l, sh) < 0) {
      sr_unref(sh);
      sr_array_unref(a);
      if (!I->exc) sr_raise_diags(I, &d, "ValueError");
      return NULL;
    }
  }
  const SrType *t = sr_concrete_type_of_layout(a->type, l, m);
  /* core.mem_kind_to_space: pinned_host is host memory, every other kind
     device memory (dispatch.update_dp_aval) */
  SrTypeBuilder mb;
  sr_type_builder(&mb, t);
  mb.mem = sh && sh->sh.memory_kind && strcmp(sh->sh.memory_kind, "pinned_host") == 0 ? sr_intern_cstr("host") : NULL;
  t = sr_type_get(&mb);
  SrArray *r = sr_redistribute_typed(&cx, a, m, l, t);
  sr_array_unref(a);
  if (!r) {
    sr_unref(sh);
    return sr_raise_diags(I, &d, "RuntimeError");
  }
  SrArray *out = sr_array_retype(r, t, l);
  sr_array_unref(r);
  out->sharding = sh;
  out->committed = 1;
  return sr_concrete_wrap(out);
}

/* ---- np.save / np.load ---- */

static const char *path_arg(SrInterp *I, SrVal *v, const char *what) { return sr_as_path(I, v, what); }

static SrVal *bi_np_save(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "save", "file, arr, allow_pickle=", p) < 0) return NULL;
  const char *path = path_arg(I, p[0], "file");
  if (!path) return NULL;
  SrArray *arr = sr_concrete_of(I, p[1], NULL);
  if (!arr) return I->exc ? NULL : sr_raise(I, "TypeError", "np.save needs a concrete array");
  void *h = sr_concrete_host_data(I, arr);
  if (!h) {
    sr_array_unref(arr);
    return NULL;
  }
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < arr->type->ndim; i++) shape[i] = arr->type->dims[i].size;
  size_t n = strlen(path);
  char *full = sr_xmalloc(n + 5);
  memcpy(full, path, n + 1);
  if (n < 4 || strcmp(path + n - 4, ".npy") != 0) strcat(full, ".npy");
  SrDiags d = SR_DIAGS_INIT;
  int rc = sr_npy_write(full, arr->type->dtype, arr->type->ndim, shape, h, &d);
  free(full);
  free(h);
  sr_array_unref(arr);
  if (rc < 0) return sr_raise_diags(I, &d, "OSError");
  return sr_none();
}

static SrVal *array_from(SrInterp *I, SrDtype dt, int ndim, const int64_t *shape, void *data) {
  const SrType *t = sr_type_array(dt, ndim, shape);
  size_t n = (size_t)sr_type_numel(t) * sr_elem_size(dt);
  SrBuffer *b = sr_buffer_new(n);
  if (n) memcpy(b->data, data, n);
  SrArray *a = sr_array_new(t, NULL, NULL);
  a->shard[0] = b;
  (void)I;
  return sr_concrete_wrap(a);
}

static SrVal *bi_np_load(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "load", "file, allow_pickle=", p) < 0) return NULL;
  const char *path = path_arg(I, p[0], "file");
  if (!path) return NULL;
  SrDiags d = SR_DIAGS_INIT;
  size_t n = strlen(path);
  if (n > 4 && strcmp(path + n - 4, ".npz") == 0) {
    SrNpzEntry *e;
    int ne;
    if (sr_npz_read(path, &e, &ne, &d) < 0) return sr_raise_diags(I, &d, "OSError");
    SrVal *dict = sr_dict(NULL);
    for (int i = 0; i < ne; i++)
      sr_dict_set(NULL, dict, sr_str_cstr(NULL, e[i].name), array_from(I, e[i].dt, e[i].ndim, e[i].shape, e[i].data));
    sr_npz_free(e, ne);
    return dict;
  }
  SrDtype dt;
  int nd;
  int64_t shape[SR_MAX_RANK];
  void *data;
  if (sr_npy_read(path, &dt, &nd, shape, &data, &d) < 0) return sr_raise_diags(I, &d, "OSError");
  SrVal *r = array_from(I, dt, nd, shape, data);
  free(data);
  return r;
}

/* ---- array methods ---- */

/* Array methods get the array as their first argument. */
static SrVal *m_item(SrInterp *I, SrArgs *a) {
  if (a->n > 1) {
    /* np.ndarray.item(*args): a flat index, or one index per axis (as
       ints or one tuple) */
    const SrType *t = sr_value_type(I, a->v[0]);
    if (!t) return NULL;
    SrVal *const *args = a->v + 1;
    int n = a->n - 1;
    if (n == 1 && sr_is_seq(args[0])) {
      n = args[0]->seq.n;
      args = args[0]->seq.items;
    }
    int64_t size = sr_type_numel(t), flat = 0;
    if (n == 1) {
      if (sr_as_int(I, args[0], "item", &flat) < 0) return NULL;
      if (flat < -size || flat >= size)
        return sr_raise(I, "IndexError", "index %lld is out of bounds for size %lld", (long long)flat, (long long)size);
      if (flat < 0) flat += size;
    } else {
      if (n != t->ndim) return sr_raise(I, "ValueError", "incorrect number of indices for array");
      for (int i = 0; i < n; i++) {
        int64_t k, d = t->dims[i].size;
        if (sr_as_int(I, args[i], "item", &k) < 0) return NULL;
        if (k < -d || k >= d)
          return sr_raise(I, "IndexError", "index %lld is out of bounds for axis %d with size %lld", (long long)k, i,
                          (long long)d);
        flat = flat * d + (k < 0 ? k + d : k);
      }
    }
    SrVal *rv = sr_lax_reshape(I, a->v[0], &size, 1, NULL);
    SrVal *iv = sr_int(NULL, flat);
    SrVal *el = rv ? sr_getitem(I, rv, iv) : NULL;
    sr_unref(rv);
    sr_unref(iv);
    if (!el) return NULL;
    SrArgs one = {1, &el, 0, NULL, NULL, NULL};
    SrVal *r = m_item(I, &one);
    sr_unref(el);
    return r;
  }
  if (a->n != 1) return sr_raise(I, "TypeError", "item() takes the array");
  const char *saved = I->item_for;
  I->item_for = NULL;
  SrVal *r = sr_unop(I, SR_OP_ITEM, a->v[0]);
  I->item_for = saved;
  return r;
}

/* x.__getitem__(key): x[key], a bound method (x.__getitem__ passed as a function) */
static SrVal *m_getitem(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->nkw) return sr_raise(I, "TypeError", "__getitem__() takes exactly one argument");
  return sr_getitem(I, a->v[0], a->v[1]);
}

/* round(x[, ndigits]) of an array (array_methods._operator_round):
   jnp.round to ndigits or 0 decimals, then, without ndigits, astype(int)
   as round() of a float gives an int. */
static SrVal *m_round(SrInterp *I, SrArgs *a) {
  SrVal *nd = a->n > 1 ? a->v[1] : NULL;
  for (int i = 0; i < a->nkw; i++)
    if (!strcmp(a->kw[i], "ndigits")) nd = a->kwv[i];
  if (a->n < 1 || a->n > 2) return sr_raise(I, "TypeError", "__round__() takes at most 1 argument");
  SrNnScope s = {I, {0}, 0};
  int given = sr_nn_given(nd);
  const char *kw = "decimals";
  SrVal *dec = given ? nd : sr_nn_int(&s, 0);
  SrVal *r = sr_nn_call(&s, "jax.numpy.round", 1, &a->v[0], 1, &kw, &dec);
  if (r && !given) r = sr_nn_call2(&s, "jax.numpy.astype", r, sr_lookup_qualname("builtins.int"));
  return sr_nn_done(&s, r);
}

/* x.compress(condition, axis=None, *, out=None, size=None, fill_value=0):
   jnp.compress(condition, x, ...) (array_methods._compress) */
static SrVal *m_compress(SrInterp *I, SrArgs *a) {
  if (a->n < 2 || a->n > 3) return sr_raise(I, "TypeError", "compress() takes from 1 to 2 positional arguments");
  SrVal *v[3] = {a->v[1], a->v[0], a->n > 2 ? a->v[2] : NULL};
  SrArgs ca = {a->n, v, a->nkw, a->kw, a->kwv, NULL};
  SrVal *fn = sr_lookup_qualname("jax.numpy.compress");
  return fn ? sr_call(I, fn, &ca) : sr_raise(I, "AttributeError", "jax.numpy has no compress");
}

/* ---- x.view(dtype) ---- */

/* fn(*args, **kw) of a registered function; args borrowed. */
static SrVal *callq(SrInterp *I, const char *qual, int n, SrVal **args, int nkw, const char **kw, SrVal **kwv) {
  SrVal *fn = sr_lookup_qualname(qual);
  if (!fn) return sr_raise(I, "NotImplementedError", "%s is not available", qual);
  SrArgs a = {n, args, nkw, kw, kwv, NULL};
  return sr_call(I, fn, &a);
}

/* obj.name(*args) */
static SrVal *callm(SrInterp *I, SrVal *obj, const char *name, int n, SrVal **args) {
  SrVal *m = sr_getattr(I, obj, name);
  if (!m) return NULL;
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, m, &a);
  sr_unref(m);
  return r;
}

/* The key (..., start::2). */
static SrVal *every_other(int64_t start) {
  SrVal *k = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, k, sr_word(NULL, "Ellipsis", 8));
  sr_seq_push(NULL, k, sr_slice_new(sr_int(NULL, start), sr_none(), sr_int(NULL, 2))); /* steals */
  return k;
}

/* x.reshape(shape) */
static SrVal *reshaped(SrInterp *I, SrVal *x, const int64_t *shape, int nd) {
  SrVal *t = sr_int_tuple(shape, nd), *r = callm(I, x, "reshape", 1, &t);
  sr_unref(t);
  return r;
}

/* lax.bitcast_convert_type(x, dt) */
static SrVal *bitcast(SrInterp *I, SrVal *x, SrDtype dt) {
  SrVal *args[2] = {x, sr_dtype_val(NULL, dt)};
  SrVal *r = callq(I, "jax.lax.bitcast_convert_type", 2, args, 0, NULL, NULL);
  sr_unref(args[1]);
  return r;
}

static SrVal *astype(SrInterp *I, SrVal *x, SrDtype dt) {
  SrVal *d = sr_dtype_val(NULL, dt), *r = callm(I, x, "astype", 1, &d);
  sr_unref(d);
  return r;
}

/* array_methods._view: x's bits as dtype dt, the last axis resized by the
   ratio of the widths; bool through uint8 and complex through its real
   parts interleaved, as JAX has them. */
static SrVal *view_as(SrInterp *I, SrVal *x, SrDtype dt) {
  const SrType *t = sr_value_type(I, x);
  if (!t) return NULL;
  int bin = sr_dtype_info(t->dtype)->bits, bout = sr_dtype_info(dt)->bits;
  if (t->ndim == 0) {
    if (bin != bout) return sr_raise(I, "ValueError", "view() of a 0d array is only supported if the itemsize is unchanged.");
    int64_t ax = 0;
    SrVal *e = sr_lax_expand_dims(I, x, &ax, 1), *v = e ? view_as(I, e, dt) : NULL;
    SrVal *r = v ? callm(I, v, "squeeze", 0, NULL) : NULL;
    sr_unref(e);
    sr_unref(v);
    return r;
  }
  int64_t last = t->dims[t->ndim - 1].size;
  if (!bout || (last * bin) % bout != 0)
    return sr_raise(I, "ValueError",
                    "When changing to a larger dtype, its size must be a divisor of the total size in bytes of the "
                    "last axis of the array.");
  if (t->dtype == dt) return sr_ref(x);
  if (t->dtype == SR_BOOL) {
    SrVal *u = astype(I, x, SR_U8), *r = u ? view_as(I, u, dt) : NULL;
    sr_unref(u);
    return r;
  }
  if (sr_dtype_is_complex(t->dtype)) {
    int64_t shape[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
    shape[t->ndim - 1] *= 2;
    SrVal *ty = callq(I, "jax.typeof", 1, &x, 0, NULL, NULL);
    SrVal *sh = ty ? sr_getattr(I, ty, "sharding") : NULL;
    sr_unref(ty);
    if (!sh) return NULL;
    SrVal *args[2] = {sr_int_tuple(shape, t->ndim), sr_dtype_val(NULL, sr_dtype_real_of(t->dtype))};
    const char *kw = sr_intern_cstr("out_sharding");
    SrVal *z = callq(I, "jax.numpy.zeros", 2, args, 1, &kw, &sh);
    sr_unref(args[0]);
    sr_unref(args[1]);
    sr_unref(sh);
    for (int part = 0; part < 2 && z; part++) {
      SrVal *p = sr_getattr(I, x, part ? "imag" : "real");
      SrVal *at = p ? sr_getattr(I, z, "at") : NULL, *key = every_other(part);
      SrVal *ref = at ? sr_getitem(I, at, key) : NULL;
      SrVal *nz = ref ? callm(I, ref, "set", 1, &p) : NULL;
      sr_unref(p);
      sr_unref(at);
      sr_unref(key);
      sr_unref(ref);
      sr_unref(z);
      z = nz;
    }
    SrVal *r = z ? view_as(I, z, dt) : NULL;
    sr_unref(z);
    return r;
  }
  if (dt == SR_BOOL) {
    SrVal *u = view_as(I, x, SR_U8), *r = u ? astype(I, u, SR_BOOL) : NULL;
    sr_unref(u);
    return r;
  }
  if (sr_dtype_is_complex(dt)) {
    SrVal *f = view_as(I, x, sr_dtype_real_of(dt)), *c = f ? astype(I, f, dt) : NULL, *r = NULL;
    sr_unref(f);
    if (!c) return NULL;
    SrVal *k0 = every_other(0), *k1 = every_other(1);
    SrVal *re = sr_getitem(I, c, k0), *im = re ? sr_getitem(I, c, k1) : NULL;
    SrVal *j = sr_complex(NULL, 0.0, 1.0);
    SrVal *jim = im ? sr_binop(I, SR_OP_MUL, j, im) : NULL;
    if (jim) r = sr_binop(I, SR_OP_ADD, re, jim);
    sr_unref(k0);
    sr_unref(k1);
    sr_unref(re);
    sr_unref(im);
    sr_unref(j);
    sr_unref(jim);
    sr_unref(c);
    return r;
  }
  int64_t shape[SR_MAX_RANK + 1];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  if (bin < bout) {
    int64_t factor = bout / bin;
    shape[t->ndim - 1] = last / factor;
    shape[t->ndim] = factor;
    SrVal *o = reshaped(I, x, shape, t->ndim + 1), *r = o ? bitcast(I, o, dt) : NULL;
    sr_unref(o);
    return r;
  }
  if (bin > bout) {
    SrVal *o = bitcast(I, x, dt);
    if (!o) return NULL;
    shape[t->ndim - 1] = last * (bin / bout);
    SrVal *r = reshaped(I, o, shape, t->ndim);
    sr_unref(o);
    return r;
  }
  return bitcast(I, x, dt);
}

/* x.view(dtype=None, type=None) */
static SrVal *m_view(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "view", "self, dtype=, type=", p) < 0) return NULL;
  if (p[2] && p[2]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "`type` argument of array.view() is not supported.");
  int dt = -1;
  if (p[1] && sr_dtype_arg(I, p[1], &dt, "view") < 0) return NULL;
  if (dt < 0) return sr_ref(p[0]);
  return view_as(I, p[0], (SrDtype)dt);
}

/* x.to_device(device, *, stream=None): jax.device_put(x, device) */
static SrVal *m_to_device(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "to_device() takes exactly one argument (the device)");
  for (int i = 0; i < a->nkw; i++)
    if (strcmp(a->kw[i], "stream")) return sr_raise(I, "TypeError", "to_device() got an unexpected keyword argument '%s'", a->kw[i]);
  SrArgs ca = {2, a->v, 0, NULL, NULL, NULL};
  return sr_call(I, sr_lookup_qualname("jax.device_put"), &ca);
}

static SrVal *m_block_until_ready(SrInterp *I, SrArgs *a) {
  (void)I;
  return a->n ? sr_ref(a->v[0]) : sr_none();
}

/* x.unsafe_buffer_pointer(): the address of x's one buffer (its first
   device's shard) */
static SrVal *m_unsafe_buffer_pointer(SrInterp *I, SrArgs *a) {
  SrArrayObj *o = a->n ? sr_array_of(a->v[0]) : NULL;
  if (!o || o->kind != SR_AV_CONCRETE)
    return sr_raise(I, "ConcretizationTypeError", "unsafe_buffer_pointer() of a traced or abstract array");
  if (sr_array_check_deleted(I, a->v[0]) < 0) return NULL;
  SrArray *arr = o->data;
  for (int i = 0; i < arr->ndev; i++)
    if (arr->shard[i]) return sr_int(NULL, (int64_t)(intptr_t)arr->shard[i]);
  return sr_int(NULL, (int64_t)(intptr_t)arr);
}

/* x.copy_to_host_async(): starts the copy to the host (here the values are
   there already); None, an error for a deleted array */
/* x.on_device_size_in_bytes(): one shard's bytes times the devices
   holding x (ArrayImpl.on_device_size_in_bytes) */
static SrVal *m_on_device_size(SrInterp *I, SrArgs *a) {
  SrArrayObj *o = a->n ? sr_array_of(a->v[0]) : NULL;
  if (!o || o->kind != SR_AV_CONCRETE) return sr_raise(I, "ConcretizationTypeError", "on_device_size_in_bytes of an abstract or traced array");
  if (sr_array_check_deleted(I, a->v[0]) < 0) return NULL;
  return sr_int(NULL, (int64_t)sr_array_shard_bytes(o->data) * o->data->ndev);
}

/* x.is_ready(): whether x's buffers are computed (always, here) */
static SrVal *m_is_ready(SrInterp *I, SrArgs *a) {
  if (a->n && sr_array_check_deleted(I, a->v[0]) < 0) return NULL;
  return sr_bool(1);
}

static SrVal *m_copy_to_host_async(SrInterp *I, SrArgs *a) {
  if (a->n && sr_array_check_deleted(I, a->v[0]) < 0) return NULL;
  return sr_none();
}

static SrVal *m_devices(SrInterp *I, SrArgs *a) {
  SrArrayObj *o = a->n ? sr_array_of(a->v[0]) : NULL;
  if (!o || o->kind != SR_AV_CONCRETE) return sr_raise(I, "ConcretizationTypeError", "devices() of an abstract array");
  SrArray *x = o->data;
  SrVal *s = sr_seq(NULL, SR_V_SET, x->ndev);
  for (int p = 0; p < x->ndev; p++) sr_seq_push(NULL, s, device_val(x->mesh ? sr_mesh_device(x->mesh, p) : 0));
  return s;
}

/* x.committed: placed on purpose (device_put to a device or sharding,
   or computed from such arrays) */
static SrVal *prop_committed(SrInterp *I, SrArgs *a) {
  SrArrayObj *o = sr_array_of(a->self);
  if (!o || o->kind != SR_AV_CONCRETE) return sr_raise(I, "ConcretizationTypeError", "an abstract array");
  return sr_bool(o->data->committed);
}

static SrVal *prop_is_fully_replicated(SrInterp *I, SrArgs *a) {
  SrArrayObj *o = sr_array_of(a->self);
  if (!o || o->kind != SR_AV_CONCRETE) return sr_raise(I, "ConcretizationTypeError", "an abstract array");
  const SrType *l = o->data->layout;
  return sr_bool(sr_type_sharded_axes(l) == 0 && !l->unreduced);
}

/* x.is_fully_addressable: every shard is this controller's (under MPI
   too: each rank holds the one controller's view, addressable_shards) */
static SrVal *prop_is_fully_addressable(SrInterp *I, SrArgs *a) {
  SrArrayObj *o = sr_array_of(a->self);
  if (!o || o->kind != SR_AV_CONCRETE) return sr_raise(I, "ConcretizationTypeError", "an abstract array");
  return sr_bool(1);
}

/* x._value: x as a numpy array (ArrayImpl._value) */
static SrVal *prop_value(SrInterp *I, SrArgs *a) {
  return sr_call1(I, sr_lookup_qualname("numpy.asarray"), a->self);
}

/* x.device: the one device of a single-device array (array.py) */
static SrVal *prop_device(SrInterp *I, SrArgs *a) {
  SrVal *m = sr_getattr(I, a->self, "devices");
  SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
  SrVal *ds = m ? sr_call(I, m, &none) : NULL;
  sr_unref(m);
  if (!ds) return NULL;
  /* ArrayImpl.device: the one device, or else the sharding */
  SrVal *r = NULL;
  if (ds->kind == SR_V_SET && ds->seq.n == 1) r = sr_ref(ds->seq.items[0]);
  else r = sr_getattr(I, a->self, "sharding");
  sr_unref(ds);
  return r;
}

/* jnp.array / jnp.asarray: nested lists of numbers through
   sr_backend_hooks.from_host, arrays (converted to dtype when given). */
/* numpy's (2.x) refusal of a Python int out of the range of the integer
   dtype d it is stored as, anywhere in nested lists and tuples: -1. */
static int ints_fit(SrInterp *I, const SrVal *v, SrDtype d) {
  if (v->kind == SR_V_INT && !sr_int_fits(v->i, d)) {
    sr_raise(I, "OverflowError", "Python integer %lld out of bounds for %s", (long long)v->i, sr_dtype_name(d));
    return -1;
  }
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE)
    for (int i = 0; i < v->seq.n; i++)
      if (ints_fit(I, v->seq.items[i], d) < 0) return -1;
  return 0;
}

static SrVal *array_plain(SrInterp *I, SrVal **p, int dt);

static SrVal *array_impl(SrInterp *I, SrArgs *a, int copy_default) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "array", "object, dtype=, *, copy=, order=, ndmin=, device=, out_sharding=", p) < 0)
    return NULL;
  int dt;
  if (sr_dtype_arg(I, p[1], &dt, "array") < 0) return NULL;
  /* array_create.c: a sequence of arrays (tracers too) is stacked, and
     device= / out_sharding= place the result */
  SrVal *sh = NULL, *dev = NULL;
  if (sr_jnp_device_arg(I, p[5], p[6], "jnp.array", &sh, &dev) < 0) return NULL;
  /* numpy's arrays in lists as JAX takes them (jax/np_host.c) */
  SrVal *obj = sr_np_seq_to_jax(I, p[0], 0), *given = p[0];
  if (!obj) {
    sr_unref(sh);
    sr_unref(dev);
    return NULL;
  }
  p[0] = obj;
  SrVal *r = !sr_array_of(p[0]) && sr_jnp_seq_has_array(p[0], 0) ? sr_jnp_array_of_arrays(I, p[0], dt)
                                                                 : array_plain(I, p, dt);
  p[0] = given;
  sr_unref(obj);
  if (r && p[4] && p[4]->kind == SR_V_INT) r = sr_jnp_ndmin(I, r, (int)p[4]->i);
  if (r && sh) {
    const SrType *t = sr_value_type(I, r);
    SrVal *c = t ? sr_lax_convert(I, r, t->dtype, t->weak, sh) : NULL;
    sr_unref(r);
    r = c;
  }
  sr_unref(sh);
  r = sr_jnp_put_on(I, r, dev);
  sr_unref(dev);
  /* jnp.array copies (copy=True by default): a concrete array given
     comes back as another array, which lives on if the first is deleted
     or donated; jnp.asarray and copy=False may return it as it is */
  int copy = p[2] && p[2]->kind != SR_V_NONE ? sr_truthy(I, p[2]) > 0 : copy_default;
  SrArrayObj *ro = r == given ? sr_array_of(r) : NULL;
  if (copy && ro && ro->kind == SR_AV_CONCRETE && !ro->deleted) {
    SrVal *c = sr_concrete_wrap(sr_array_ref(ro->data));
    sr_unref(r);
    r = c;
  }
  return r;
}

static SrVal *bi_array(SrInterp *I, SrArgs *a) { return array_impl(I, a, 1); }
static SrVal *bi_asarray(SrInterp *I, SrArgs *a) { return array_impl(I, a, 0); }

static SrVal *array_plain(SrInterp *I, SrVal **p, int dt) {
  SrVal *r = sr_jnp_asarray(I, p[0], dt);
  if (!r) return NULL;
  /* lax_numpy.array converts Python data with np.asarray(object, dtype) */
  const SrType *rt = sr_value_type(I, r);
  SrDtype want = dt >= 0 ? (SrDtype)dt : rt ? rt->dtype : SR_F32;
  if (!sr_array_of(p[0]) && sr_dtype_is_int(want)) {
    if (dt < 0 && p[0]->kind == SR_V_INT && !I->jax->enable_x64) want = SR_I32;
    if (dt < 0 && p[0]->kind == SR_V_INT && !sr_int_fits(p[0]->i, want)) {
      /* dtypes.coerce_to_array -> scalar_type_to_dtype's check */
      sr_unref(r);
      return sr_raise(I, "OverflowError", "Python int %lld too large to convert to %s", (long long)p[0]->i,
                      sr_dtype_name(want));
    }
    if (ints_fit(I, p[0], want) < 0) {
      sr_unref(r);
      return NULL;
    }
  }
  /* a Python scalar becomes an array, weakly typed unless a dtype is
     given (array_constructors.array: weak_type = dtype is None and
     dtypes.is_weakly_typed(object); a bool is not weak) */
  SrArrayObj *o = sr_array_of(r);
  if (o && !o->type->weak) return r;
  const SrType *t = sr_value_type(I, r);
  if (!t) return r;
  int keep_weak = dt < 0 && t->weak;
  const SrType *nt = sr_type_with_weak(dt >= 0 ? sr_type_with_dtype(t, (SrDtype)dt) : t, keep_weak);
  if (o && keep_weak) return r;
  if (o) {
    SrVal *c = sr_jnp_convert(I, r, nt->dtype, 0);
    sr_unref(r);
    return c;
  }
  double re = r->kind == SR_V_FLOAT ? r->f : r->kind == SR_V_COMPLEX ? r->c.re : (double)r->i;
  double im = r->kind == SR_V_COMPLEX ? r->c.im : 0;
  int64_t iv = r->kind == SR_V_FLOAT ? sr_f2i64(r->f) : r->kind == SR_V_COMPLEX ? sr_f2i64(r->c.re) : r->i;
  sr_unref(r);
  if (I->trace || !sr_backend_hooks.from_scalar) return sr_array_scalar(nt, re, im, iv);
  SrArray *arr = sr_backend_hooks.from_scalar(I, nt, re, im, iv);
  return arr ? sr_array_concrete(arr) : NULL;
}

/* ---- jax.make_array_from_single_device_arrays, make_array_from_callback ---- */

/* repr(type(v)), with a tracer's class as JAX names it */
static void type_repr(SrInterp *I, SrBuf *out, SrVal *v) {
  SrArrayObj *o = sr_array_of(v);
  if (o && o->kind == SR_AV_TRACER) {
    sr_buf_printf(out, "<class '%s'>", sr_tracers_class_name(v));
    return;
  }
  SrVal *t = sr_call1(I, sr_lookup_qualname("builtins.type"), v);
  if (t) sr_to_repr(I, out, t);
  else sr_exc_clear(I);
  sr_unref(t);
}

/* array._get_and_check_dtype: the dtype given, or the first array's */
static int check_dtype(SrInterp *I, SrVal *arrays, SrVal *dtype, const char *fname, SrDtype *out) {
  int n = arrays->seq.n;
  SrDtype first = SR_F32;
  if (n) {
    const SrType *t = sr_value_type(I, arrays->seq.items[0]);
    if (!t) return -1;
    first = t->dtype;
  }
  if (!dtype || dtype->kind == SR_V_NONE) {
    if (!n) {
      sr_raise(I, "ValueError",
               "If the Array has no addressable shards, `dtype` must be provided via the `dtype` argument to `jax.%s`.",
               fname);
      return -1;
    }
    *out = first;
    return 0;
  }
  int dt;
  if (sr_dtype_arg(I, dtype, &dt, fname) < 0) return -1;
  if (n && (SrDtype)dt != first) {
    sr_raise(I, "ValueError",
             "If `dtype` is provided to `jax.%s`, it must match the dtype of the addressable shards. Got dtype=%s and "
             "shard dtype=%s`.",
             fname, sr_dtype_name((SrDtype)dt), sr_dtype_name(first));
    return -1;
  }
  *out = (SrDtype)dt;
  return 0;
}

static void int_set_str(SrBuf *b, const int *ids, int n) {
  sr_buf_putc(b, '{');
  int k = 0;
  for (int i = 0; i < n; i++)
    if (ids[i] >= 0) sr_buf_printf(b, k++ ? ", %d" : "%d", ids[i]);
  sr_buf_putc(b, '}');
}

/* ArrayImpl(aval, sharding, arrays, committed=True) of concrete
   single-device arrays: _check_and_rearrange's checks in its order, then
   each device's buffer taken as the shard the sharding gives it */
/* array._validate_shape_and_dtype_for_per_device_arrays for one shard
   x of type ti against the sharding sh's shard shape ss, of an Array of
   dtype dt and shape[nd]: -1 with JAX's ValueError where it differs */
static int check_shard(SrInterp *I, SrVal *x, const SrType *ti, SrVal *ss, SrVal *sh, SrDtype dt,
                       const int64_t *shape, int nd) {
  int same = ti->ndim == ss->seq.n;
  for (int d = 0; same && d < ti->ndim; d++) same = ss->seq.items[d]->i == ti->dims[d].size;
  if (ti->dtype == dt && same) return 0;
  SrBuf b = SR_BUF_INIT;
  if (ti->dtype != dt) {
    sr_val_str(&b, x);
    sr_raise(I, "ValueError", "Input buffers to `Array` must have matching dtypes. Got %s, expected %s for buffer: %s",
             sr_dtype_name(ti->dtype), sr_dtype_name(dt), b.p);
  } else {
    SrBuf e = SR_BUF_INIT, g = SR_BUF_INIT, sv = SR_BUF_INIT;
    sr_val_repr(&e, ss);
    sr_shape_str(&g, ti);
    sr_val_str(&sv, sh);
    sr_buf_printf(&b, "%s[", sr_dtype_name(dt));
    for (int d = 0; d < nd; d++) sr_buf_printf(&b, d ? ",%lld" : "%lld", (long long)shape[d]);
    sr_raise(I, "ValueError",
             "Expected shard shape %s doesn't match the single device array shape %s. Shape of Array is %s] with "
             "sharding %s",
             e.p, g.p, b.p, sv.p);
    sr_buf_free(&e);
    sr_buf_free(&g);
    sr_buf_free(&sv);
  }
  sr_buf_free(&b);
  return -1;
}

static SrVal *assemble(SrInterp *I, const int64_t *shape, int nd, SrVal *sh, SrVal *arrays, SrDtype dt) {
  int n = arrays->seq.n;
  int sdev = sr_single_device_sharding_id(sh);
  const SrMesh *m = sdev >= 0 ? device_mesh(sdev) : sh->sh.mesh;
  int nsh = sr_mesh_ndev(m);
  int *dev = sr_xcalloc((size_t)(n ? n : 1), sizeof *dev);
  SrArray **in = sr_xcalloc((size_t)(n ? n : 1), sizeof *in);
  SrVal *r = NULL;
  SrBuf b = SR_BUF_INIT;
  for (int i = 0; i < n; i++) {
    SrArrayObj *o = sr_array_of(arrays->seq.items[i]);
    if (!o || o->kind != SR_AV_CONCRETE) {
      sr_raise(I, "TypeError", "make_array_from_single_device_arrays: an argument is not a jax.Array");
      goto out;
    }
    if (sr_array_check_deleted(I, arrays->seq.items[i]) < 0) goto out;
    in[i] = o->data;
    int nsh_i = sr_mesh_ndev(in[i]->mesh);
    if (nsh_i != 1) {
      sr_raise(I, "ValueError",
               "When making an array from single-device arrays the input arrays must have one shard each. An argument "
               "array had %d shard(s).",
               nsh_i);
      goto out;
    }
    dev[i] = in[i]->mesh ? sr_mesh_device(in[i]->mesh, 0) : 0;
  }
  if (n != nsh) {
    sr_raise(I, "ValueError",
             "Expected %d per-device arrays (this is how many devices are addressable by the sharding), but got %d",
             nsh, n);
    goto out;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (dev[i] == dev[j]) {
        sr_buf_putc(&b, '[');
        for (int k = 0; k < n; k++) sr_buf_printf(&b, k ? ", %d" : "%d", dev[k]);
        sr_buf_putc(&b, ']');
        sr_raise(I, "ValueError",
                 "When making an array from single-device arrays, the input arrays must be from distinct devices, but "
                 "got device IDs %s",
                 b.p);
        goto out;
      }
  {
    /* the devices of the sharding that no array is on, and the arrays'
       devices the sharding lacks, each ascending as Python shows a set */
    int *only_sh = sr_xcalloc((size_t)nsh, sizeof *only_sh), *only_in = sr_xcalloc((size_t)n + 1, sizeof *only_in);
    int nos = 0, noi = 0;
    for (int p = 0; p < nsh; p++) only_sh[p] = -1;
    for (int i = 0; i < n; i++) only_in[i] = -1;
    for (int p = 0; p < nsh; p++) {
      int d = sr_mesh_device(m, p), found = 0;
      for (int i = 0; i < n; i++) found |= dev[i] == d;
      if (!found) only_sh[nos++] = d;
    }
    for (int i = 0; i < n; i++) {
      int found = 0;
      for (int p = 0; p < nsh; p++) found |= sr_mesh_device(m, p) == dev[i];
      if (!found) only_in[noi++] = dev[i];
    }
    for (int i = 0; i < nos; i++)
      for (int j = i + 1; j < nos; j++)
        if (only_sh[j] < only_sh[i]) { int t = only_sh[i]; only_sh[i] = only_sh[j]; only_sh[j] = t; }
    for (int i = 0; i < noi; i++)
      for (int j = i + 1; j < noi; j++)
        if (only_in[j] < only_in[i]) { int t = only_in[i]; only_in[i] = only_in[j]; only_in[j] = t; }
    if (nos || noi) {
      sr_buf_puts(&b, "Addressable devices and per-device arrays devices do not match.");
      if (nos) {
        sr_buf_puts(&b, " Sharding contains devices ");
        int_set_str(&b, only_sh, nos);
        sr_buf_puts(&b, " that are not present in per-device arrays.");
      }
      if (noi) {
        sr_buf_puts(&b, " Per-device arrays contain devices ");
        int_set_str(&b, only_in, noi);
        sr_buf_puts(&b, " that are not present in the sharding.");
      }
      sr_raise(I, "ValueError", "%s", b.p);
    }
    free(only_sh);
    free(only_in);
    if (nos || noi) goto out;
  }
  {
    SrVal *shv = sr_seq(NULL, SR_V_TUPLE, nd);
    for (int d = 0; d < nd; d++) sr_seq_push(NULL, shv, sr_int(NULL, shape[d]));
    SrVal *ss = callm(I, sh, "shard_shape", 1, &shv);
    if (!ss) {
      sr_unref(shv);
      goto out;
    }
    const SrType *plain = sr_type_array(dt, nd, shape);
    for (int i = 0; i < n; i++)
      if (check_shard(I, arrays->seq.items[i], in[i]->type, ss, sh, dt, shape, nd) < 0) break;
    sr_unref(ss);
    sr_unref(shv);
    if (I->exc) goto out;
    SrEvalCtx cx;
    SrDiags d = SR_DIAGS_INIT;
    sr_concrete_ctx(I, &cx, &d, "make_array_from_single_device_arrays");
    const SrType *l;
    if (sdev >= 0) l = sr_layout_of_type(plain);
    else if (sr_ev_layout_of_sharding(&cx, plain, sh, m, &l) < 0) {
      sr_raise_diags(I, &d, "ValueError");
      goto out;
    }
    const SrType *t = sr_concrete_type_of_layout(plain, l, m);
    SrArray *a = sr_array_new(t, l, m);
    for (int p = 0; p < nsh; p++) {
      int dp = sr_mesh_device(m, p);
      for (int i = 0; i < n; i++)
        if (dev[i] == dp) {
          SrArray *rm = sr_array_row_major(in[i]);
          a->shard[p] = sr_buffer_ref(sr_array_buf(rm, 0));
          sr_array_unref(rm);
        }
    }
    a->sharding = sdev >= 0 ? NULL : sr_ref(sh);
    a->committed = 1;
    r = sr_array_concrete(a);
  }
out:
  sr_buf_free(&b);
  free(dev);
  free(in);
  return r;
}

static int is_sharding(SrVal *s) { return s->kind == SR_V_SHARDING || sr_single_device_sharding_id(s) >= 0; }

static SrVal *bi_make_from_single(SrInterp *I, SrArgs *args) {
  SrVal *p[4];
  if (sr_args_parse(I, args, "make_array_from_single_device_arrays", "shape, sharding, arrays, *, dtype=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_shape_arg(I, p[0], shape, &nd, "shape") < 0) return NULL;
  if (p[2]->kind != SR_V_LIST && p[2]->kind != SR_V_TUPLE) {
    SrBuf b = SR_BUF_INIT;
    type_repr(I, &b, p[2]);
    sr_raise(I, "TypeError", "jax.make_array_from_single_device_arrays `arrays` argument must be a list or tuple, but got %s.",
             b.p);
    sr_buf_free(&b);
    return NULL;
  }
  SrDtype dt;
  if (check_dtype(I, p[2], p[3], "make_array_from_single_device_arrays", &dt) < 0) return NULL;
  /* a tracer among them: ArrayImpl's TypeError, reraised so */
  int traced = 0;
  for (int i = 0; i < p[2]->seq.n; i++) {
    SrArrayObj *o = sr_array_of(p[2]->seq.items[i]);
    traced |= o && o->kind != SR_AV_CONCRETE;
  }
  if (traced) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '{');
    int k = 0;
    for (int i = 0; i < p[2]->seq.n; i++) {
      SrBuf t = SR_BUF_INIT;
      type_repr(I, &t, p[2]->seq.items[i]);
      if (!strstr(b.p, t.p)) sr_buf_printf(&b, k++ ? ", %s" : "%s", t.p);
      sr_buf_free(&t);
    }
    sr_buf_putc(&b, '}');
    sr_raise(I, "ValueError",
             "jax.make_array_from_single_device_arrays requires a list of concrete arrays as input, but got types %s", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  if (!is_sharding(p[1])) return sr_raise(I, "TypeError", "make_array_from_single_device_arrays: sharding is not a Sharding");
  return assemble(I, shape, nd, p[1], p[2], dt);
}

static SrVal *bi_make_from_callback(SrInterp *I, SrArgs *args) {
  SrVal *p[4];
  if (sr_args_parse(I, args, "make_array_from_callback", "shape, sharding, data_callback, dtype=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_shape_arg(I, p[0], shape, &nd, "shape") < 0) return NULL;
  SrVal *sh = p[1];
  if (!is_sharding(sh)) {
    SrBuf b = SR_BUF_INIT, t = SR_BUF_INIT;
    sr_to_str(I, &b, sh);
    type_repr(I, &t, sh);
    sr_raise(I, "TypeError", "sharding should be an instance of `jax.sharding`. Got %s of type %s", b.p, t.p);
    sr_buf_free(&b);
    sr_buf_free(&t);
    return NULL;
  }
  SrVal *map = callm(I, sh, "addressable_devices_indices_map", 1, &p[0]);
  if (!map) return NULL;
  SrVal *fr = sr_getattr(I, sh, "is_fully_replicated");
  int full = fr && sr_truthy(I, fr) > 0;
  sr_unref(fr);
  int n = map->dict.n;
  SrVal *vals = sr_seq(NULL, SR_V_LIST, n), *devs = sr_seq(NULL, SR_V_LIST, n), *r = NULL;
  for (int i = 0; i < n; i++) {
    SrVal *v;
    if (full && i > 0) v = sr_ref(vals->seq.items[0]);
    else {
      SrVal *idx = map->dict.vals[i];
      SrVal *got = sr_call1(I, p[2], idx);
      if (!got) goto out;
      SrArrayObj *o = sr_array_of(got);
      if (o && o->kind == SR_AV_TRACER) {
        sr_unref(got);
        sr_raise(I, "UnexpectedTracerError", "jax.make_array_from_callback cannot be called within a traced context.");
        goto out;
      }
      /* dtypes.canonicalize_value: numbers and numpy arrays as the
         arrays they stand for */
      v = sr_jnp_asarray(I, got, -1);
      sr_unref(got);
      if (!v) goto out;
    }
    sr_seq_push(NULL, vals, v);
    sr_seq_push(NULL, devs, sr_ref(map->dict.keys[i]));
  }
  SrDtype dt;
  if (check_dtype(I, vals, p[3], "make_array_from_callback", &dt) < 0) goto out;
  /* _validate_shape_and_dtype_for_per_device_arrays before any copy */
  {
    SrVal *ss = callm(I, sh, "shard_shape", 1, &p[0]);
    if (!ss) goto out;
    for (int i = 0; i < n; i++)
      if (check_shard(I, vals->seq.items[i], sr_value_type(I, vals->seq.items[i]), ss, sh, dt, shape, nd) < 0) break;
    sr_unref(ss);
    if (I->exc) goto out;
  }
  /* each value put on its device, then assembled */
  for (int i = 0; i < n; i++) {
    SrVal *dv[2] = {vals->seq.items[i], devs->seq.items[i]};
    SrArgs da = {2, dv, 0, NULL, NULL, NULL};
    SrVal *put = bi_device_put(I, &da);
    if (!put) goto out;
    sr_unref(vals->seq.items[i]);
    vals->seq.items[i] = put;
  }
  r = assemble(I, shape, nd, sh, vals, dt);
out:
  sr_unref(map);
  sr_unref(vals);
  sr_unref(devs);
  return r;
}

/* global_shape of make_array_from_process_local_data against local_data:
   a shape (a tuple, broadcast_prefix's leaf) or None per leaf; on one
   process each shape given is the leaf's own */
static int is_shape_tuple(const SrVal *v) {
  if (v->kind != SR_V_TUPLE) return 0;
  for (int i = 0; i < v->seq.n; i++)
    if (v->seq.items[i]->kind != SR_V_INT) return 0;
  return 1;
}

static int check_local_shapes(SrInterp *I, SrVal *gs, SrVal *data) {
  if (gs->kind == SR_V_NONE) return 0;
  if (is_shape_tuple(gs)) {
    SrVal *leaves = sr_pytree_flatten(I, data);
    if (!leaves) return -1;
    for (int i = 0; i < leaves->seq.n; i++) {
      const SrType *t = sr_value_type(I, leaves->seq.items[i]);
      if (!t) {
        sr_unref(leaves);
        return -1;
      }
      int same = t->ndim == gs->seq.n;
      for (int d = 0; same && d < t->ndim; d++) same = gs->seq.items[d]->i == t->dims[d].size;
      if (!same) {
        SrBuf g = SR_BUF_INIT, l = SR_BUF_INIT;
        sr_val_repr(&g, gs);
        sr_shape_str(&l, t);
        sr_raise(I, "ValueError",
                 "When calling `make_array_from_process_local_data` on a single process, global_shape should be None "
                 "or equal to local_data.shape.Got global_shape=%s and local_data.shape=%s.",
                 g.p, l.p);
        sr_buf_free(&g);
        sr_buf_free(&l);
        sr_unref(leaves);
        return -1;
      }
    }
    sr_unref(leaves);
    return 0;
  }
  SrVal *cg = sr_pytree_children(gs), *cd = sr_pytree_children(data);
  int ok = cg && cd && gs->kind == data->kind && cg->seq.n == cd->seq.n;
  for (int i = 0; ok && i < cg->seq.n; i++)
    if (check_local_shapes(I, cg->seq.items[i], cd->seq.items[i]) < 0) {
      sr_unref(cg);
      sr_unref(cd);
      return -1;
    }
  sr_unref(cg);
  sr_unref(cd);
  if (!ok) {
    if (sr_pytree_prefix_error(I, gs, data, "global_shape") < 0) return -1;
    sr_raise(I, "ValueError", "global_shape is not a tree prefix of local_data");
    return -1;
  }
  return 0;
}

/* jax.make_array_from_process_local_data on one process: the shapes
   checked, then device_put(local_data, sharding) */
static SrVal *bi_make_from_local(SrInterp *I, SrArgs *args) {
  SrVal *p[3];
  if (sr_args_parse(I, args, "make_array_from_process_local_data", "sharding, local_data, global_shape=", p) < 0)
    return NULL;
  if (p[2] && check_local_shapes(I, p[2], p[1]) < 0) return NULL;
  SrVal *dv[2] = {p[1], p[0]};
  SrArgs da = {2, dv, 0, NULL, NULL, NULL};
  return bi_device_put(I, &da);
}

void sr_builtins_exec_init(void) {
  sr_layout_api_init();
  sr_random_api_init();
  sr_random_more_init();
  sr_random_dists_init();
  sr_random_counts_init();
  sr_def("jax.numpy.array numpy.array", bi_array,
         "array(object, dtype=None, *, copy=True): an array from nested lists of numbers (or an array, copied)");
  sr_def("jax.numpy.asarray numpy.asarray", bi_asarray,
         "asarray(object, dtype=None): array's conversion that may return an array given as it is (copy=None)");
  sr_def("jax.devices", bi_devices, "devices(): the devices, [CpuDevice(id=0), ...]");
  sr_def("jax.local_devices", bi_local_devices, "local_devices(): the devices this process holds");
  sr_def("jax.device_count", bi_device_count, "device_count(): how many devices there are");
  sr_def("jax.local_device_count", bi_local_device_count, "local_device_count(): how many this process holds");
  sr_def("jax.process_index", bi_process_index, "process_index(): this process's index (the MPI rank)");
  sr_def("jax.process_count", bi_process_count, "process_count(): the number of processes");
  sr_def("jax.device_put", bi_device_put,
         "device_put(x, device_or_sharding): x laid out on a device, or as a P (with the mesh in context) or NamedSharding says; under a trace the device_put primitive");
  sr_def("jax.make_array_from_single_device_arrays", bi_make_from_single,
         "make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None): an array whose shards are the single-device arrays given");
  sr_def("jax.make_array_from_callback", bi_make_from_callback,
         "make_array_from_callback(shape, sharding, data_callback, dtype=None): an array whose shards are data_callback(index) of each device's index");
  sr_def("jax.make_array_from_process_local_data", bi_make_from_local,
         "make_array_from_process_local_data(sharding, local_data, global_shape=None): on one process, jax.device_put(local_data, sharding) once global_shape matches");
  sr_debug_init();
  sr_device_put_init();
  sr_random_concrete_init();
  sr_def("numpy.save", bi_np_save, "np.save(file, arr): writes arr to a .npy file");
  sr_def("numpy.load", bi_np_load, "np.load(file): reads a .npy file (or a .npz, as a dict)");
  sr_np_host_init();
  sr_def("jax.Array.property.sharding", prop_sharding, "x.sharding: the concrete sharding, Auto axes included");
  sr_def("jax.Array.property.addressable_shards", prop_addressable_shards,
         "x.addressable_shards: each device's Shard (device, index, replica_id, data)");
  sr_def("jax.Array.property.global_shards", prop_addressable_shards,
         "x.global_shards: every device's Shard (one process holds them all: addressable_shards)");
  sr_def("jax.Array.method.addressable_data", m_addressable_data,
         "x.addressable_data(i): the data of x's i-th addressable shard");
  /* jax/__init__.py's _deprecations, removed in JAX 0.10 */
  sr_register("jax.__removed__.device_put_sharded",
              sr_str_cstr(NULL, "jax.device_put_sharded is deprecated; use jax.device_put instead. See "
                                "https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements for a drop-in "
                                "replacement."));
  sr_register("jax.__removed__.device_put_replicated",
              sr_str_cstr(NULL, "jax.device_put_replicated is deprecated; use jax.device_put instead. See "
                                "https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements for a drop-in "
                                "replacement."));
  sr_def("jax._src.api.device_put_sharded", bi_device_put_sharded,
         "device_put_sharded(shards, devices): the shards stacked, one on each device (jax._src.api; jax's own was "
         "removed in JAX 0.10)");
  sr_def("jax._src.api.device_put_replicated", bi_device_put_replicated,
         "device_put_replicated(x, devices): x stacked once for each device, one copy on each (jax._src.api; jax's "
         "own was removed in JAX 0.10)");
  sr_def("jax.Array.property.is_fully_replicated", prop_is_fully_replicated, "x.is_fully_replicated");
  sr_def("jax.Array.property.is_fully_addressable", prop_is_fully_addressable,
         "x.is_fully_addressable: True (one controller holds every shard)");
  sr_def("jax.Array.property.committed jax.Array.property._committed", prop_committed,
         "x.committed: whether x was placed on its devices on purpose (device_put, or computed from such arrays)");
  sr_def("jax.Array.property.device", prop_device, "x.device: the device of a single-device array, else its sharding");
  sr_def("jax.Array.property._value", prop_value, "x._value: x as a numpy array");
  sr_def("jax.Array.method.item", m_item, "x.item(*args): the value of a size-1 array, or of the element a flat index or an index per axis names");
  sr_def("jax.Array.method.__getitem__", m_getitem, "x.__getitem__(key): x[key]");
  sr_def("jax.Array.method.__round__", m_round, "round(x, ndigits=None): jnp.round, then astype(int) without ndigits");
  sr_def("jax.Array.method.compress", m_compress, "x.compress(condition, axis=None, *, size=None, fill_value=0): jnp.compress(condition, x)");
  sr_def("jax.Array.method.view", m_view, "x.view(dtype=None): x's bits as dtype (lax.bitcast_convert_type, the last axis resized)");
  sr_def("jax.Array.method.to_device", m_to_device, "x.to_device(device): jax.device_put(x, device)");
  sr_def("jax.Array.method.block_until_ready", m_block_until_ready, "x.block_until_ready(): x");
  sr_def("jax.Array.method.unsafe_buffer_pointer", m_unsafe_buffer_pointer,
         "x.unsafe_buffer_pointer(): the address of x's buffer (its first shard's), an int");
  sr_def("jax.Array.method.on_device_size_in_bytes", m_on_device_size,
         "x.on_device_size_in_bytes(): the bytes x's shards take on its devices, all together");
  sr_def("jax.Array.method.is_ready", m_is_ready, "x.is_ready(): True once x is computed (always here)");
  sr_def("jax.Array.method.copy_to_host_async", m_copy_to_host_async,
         "x.copy_to_host_async(): None, once the copy of x to the host has begun");
  sr_def("jax.Array.method.devices", m_devices, "x.devices(): the set of devices holding x");
}

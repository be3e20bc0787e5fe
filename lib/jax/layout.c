/* layout.c: device-local layouts in the language (see layout.h
 * and exec/layout.h), and jit's shardings and layouts (its stages are
 * stages.c).
 *
 * jax.jit(f, in_shardings=, out_shardings=) takes shardings, P (with the
 * mesh in context), Formats, None, or pytree prefixes of them.  A call
 * binds a jit equation whose params carry them flattened (pjit.py:
 * _trace_for_jit); the evaluator moves the inputs and results to them.
 * .trace(*args) gives a Traced stage, .lower() a Lowered one and
 * .compile() a Compiled one, which chooses Layout.AUTO layouts
 * (exec/layout.h: sr_local_auto), reports them in input_formats /
 * output_formats, and when called requires a committed argument to have
 * the layout it was compiled for; an uncommitted one is relaid out.
 */
#include "jax/layout.h"

#include <stdlib.h>
#include <string.h>

#include "exec/array.h"
#include "exec/layout.h"
#include "ir/type.h"
#include "jax/lax.h"
#include "core/jaxstate.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"
#include "py/objects.h"
#include "core/trace.h"
#include "opt/opt.h"
#include "prims/prim.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"

/* ---- Layout and Layout.AUTO ---- */

typedef struct Layout {
  int nd;
  int64_t m2m[SR_MAX_RANK];
} Layout;

/* interned: equal layouts are one Layout, never freed */
static Layout **layouts;
static int nlayouts, caplayouts;

static const Layout *layout_intern(int nd, const int64_t *m2m) {
  for (int i = 0; i < nlayouts; i++)
    if (layouts[i]->nd == nd && memcmp(layouts[i]->m2m, m2m, (size_t)nd * sizeof *m2m) == 0) return layouts[i];
  if (nlayouts == caplayouts) {
    caplayouts = caplayouts ? 2 * caplayouts : 16;
    layouts = sr_xrealloc(layouts, (size_t)caplayouts * sizeof *layouts);
  }
  Layout *l = sr_xcalloc(1, sizeof *l);
  l->nd = nd;
  memcpy(l->m2m, m2m, (size_t)nd * sizeof *m2m);
  layouts[nlayouts++] = l;
  return l;
}

static void layout_repr(SrBuf *out, const SrVal *v) {
  const Layout *l = v->obj.data;
  sr_buf_puts(out, "Layout(major_to_minor=(");
  for (int i = 0; i < l->nd; i++) sr_buf_printf(out, i ? ", %lld" : "%lld", (long long)l->m2m[i]);
  sr_buf_puts(out, l->nd == 1 ? ",), tiling=None, sub_byte_element_size_in_bits=0)" : "), tiling=None, sub_byte_element_size_in_bits=0)");
}

static SrVal *layout_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const Layout *l = self->obj.data;
  if (strcmp(name, "major_to_minor") == 0) return sr_int_tuple(l->m2m, l->nd);
  if (strcmp(name, "tiling") == 0) return sr_none();
  if (strcmp(name, "sub_byte_element_size_in_bits") == 0) return sr_int(NULL, 0);
  if (strcmp(name, "AUTO") == 0) return sr_ref(sr_lookup_qualname("jax.experimental.layout.Layout.AUTO"));
  return NULL;
}

static const SrLangOps layout_ops = {.getattr = layout_getattr};
static const SrClass layout_class = {"Layout", NULL, layout_repr, NULL, &layout_ops};

static void auto_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "AUTO");
}

static int auto_data;
static const SrLangOps auto_ops = {0};
static const SrClass auto_class = {"AutoLayoutSingleton", NULL, auto_repr, NULL, &auto_ops};

static SrVal *layout_val(int nd, const int64_t *m2m) { return sr_obj(&layout_class, (void *)layout_intern(nd, m2m)); }

SrVal *sr_layout_val(int nd, const uint8_t *m2m) {
  int64_t v[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) v[i] = m2m[i];
  return layout_val(nd, v);
}

static SrVal *auto_val(void) { return sr_obj(&auto_class, &auto_data); }
int sr_is_layout(const SrVal *v) { return sr_is_obj(v, &layout_class); }
int sr_is_layout_auto(const SrVal *v) { return sr_is_obj(v, &auto_class); }

/* A Layout's dims as uint8_t, or -1 when it is not a permutation. */
static int layout_m2m(const SrVal *v, uint8_t *m2m) {
  const Layout *l = v->obj.data;
  if (!sr_local_valid(l->nd, l->m2m)) return -1;
  for (int i = 0; i < l->nd; i++) m2m[i] = (uint8_t)l->m2m[i];
  return l->nd;
}

/* The text a Layout or AUTO is in a jaxpr's params (a new reference). */
static SrVal *layout_param(const SrVal *v) {
  if (!v || v->kind == SR_V_NONE) return sr_none();
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, v);
  SrVal *w = sr_word(NULL, b.p, b.len);
  sr_buf_free(&b);
  return w;
}

/* Python's repr of type(v), for JAX's messages. */
static void class_repr(SrBuf *out, const SrVal *v) {
  const char *n;
  if (sr_is_layout(v)) n = "jax._src.layout.Layout";
  else if (sr_is_layout_auto(v)) n = "jax._src.layout.AutoLayoutSingleton";
  else if (v->kind == SR_V_SPEC) n = "jax._src.partition_spec.PartitionSpec";
  else if (v->kind == SR_V_SHARDING) n = "jax._src.named_sharding.NamedSharding";
  else if (v->kind == SR_V_NONE) n = "NoneType";
  else n = sr_val_kind_name(v);
  sr_buf_printf(out, "<class '%s'>", n);
}

static SrVal *bi_layout(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "Layout", "major_to_minor, tiling=, sub_byte_element_size_in_bits=", p) < 0) return NULL;
  int64_t m2m[SR_MAX_RANK];
  int n = 0;
  if (!sr_is_seq(p[0])) return sr_raise(I, "TypeError", "'%s' object is not iterable", sr_val_kind_name(p[0]));
  for (int i = 0; i < p[0]->seq.n; i++) {
    if (n >= SR_MAX_RANK) return sr_raise(I, "ValueError", "major_to_minor has more than %d dims", SR_MAX_RANK);
    if (sr_as_int(I, p[0]->seq.items[i], "major_to_minor", &m2m[n++]) < 0) return NULL;
  }
  if (p[1] && p[1]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "Layout: shardrepl's layouts have no tiling");
  int64_t sub = 0;
  if (p[2] && sr_as_int(I, p[2], "sub_byte_element_size_in_bits", &sub) < 0) return NULL;
  if (sub) return sr_raise(I, "NotImplementedError", "Layout: shardrepl's layouts have no sub-byte elements");
  return layout_val(n, m2m);
}

int sr_layout_misfit(SrBuf *out, const SrVal *layout, const SrType *t) {
  const Layout *l = layout->obj.data;
  if (l->nd != t->ndim) {
    /* layout.py: Layout.check_compatible_aval */
    sr_buf_puts(out, "Length of major_to_minor and the rank of the value should match. Got major_to_minor=(");
    for (int i = 0; i < l->nd; i++) sr_buf_printf(out, i ? ", %lld" : "%lld", (long long)l->m2m[i]);
    sr_buf_puts(out, l->nd == 1 ? ",) and shape=(" : ") and shape=(");
    for (int i = 0; i < t->ndim; i++) sr_buf_printf(out, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
    sr_buf_puts(out, t->ndim == 1 ? ",)" : ")");
    return 1;
  }
  if (sr_local_valid(l->nd, l->m2m)) return 0;
  /* XLA's LayoutUtil::ValidateLayoutForShape, on minor_to_major (the
     reverse of major_to_minor) */
  int dup = 0;
  for (int i = 0; i < l->nd; i++) {
    if (l->m2m[i] < 0 || l->m2m[i] >= l->nd) {
      dup = 0;
      break;
    }
    for (int k = 0; k < i; k++) dup |= l->m2m[k] == l->m2m[i];
  }
  sr_buf_printf(out, "INVALID_ARGUMENT: layout minor_to_major field has %s: {",
                dup ? "duplicate values" : "out-of-bounds value");
  for (int i = l->nd - 1; i >= 0; i--) sr_buf_printf(out, i < l->nd - 1 ? ", %lld" : "%lld", (long long)l->m2m[i]);
  sr_buf_putc(out, '}');
  return 2;
}

/* ---- SingleDeviceSharding ---- */

typedef struct Single {
  int dev;
} Single;

static Single **singles;
static int nsingles;

static void single_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "SingleDeviceSharding(device=CpuDevice(id=%d), memory_kind=device)", ((const Single *)v->obj.data)->dev);
}

/* SingleDeviceSharding.shard_shape(shape): the whole shape;
   devices_indices_map(shape): its one device to the whole array */
static SrVal *single_shard_shape(SrInterp *I, SrArgs *a) {
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (a->n != 1) return sr_raise(I, "TypeError", "shard_shape() takes exactly one argument (%d given)", a->n);
  if (sr_shape_arg(I, a->v[0], shape, &nd, "global_shape") < 0) return NULL;
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, nd);
  for (int d = 0; d < nd; d++) sr_seq_push(NULL, r, sr_int(NULL, shape[d]));
  return r;
}

static SrVal *single_indices_map(SrInterp *I, SrArgs *a) {
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (a->n != 1) return sr_raise(I, "TypeError", "devices_indices_map() takes exactly one argument (%d given)", a->n);
  if (sr_shape_arg(I, a->v[0], shape, &nd, "global_shape") < 0) return NULL;
  SrVal *idx = sr_seq(NULL, SR_V_TUPLE, nd);
  for (int d = 0; d < nd; d++) sr_seq_push(NULL, idx, sr_slice_new(sr_none(), sr_none(), sr_none()));
  SrVal *r = sr_dict(NULL);
  sr_dict_set(NULL, r, sr_concrete_device_val(((const Single *)a->self->obj.data)->dev), idx);
  return r;
}

/* is_equivalent_to(other, ndim): the same device (another
   SingleDeviceSharding's, or a one-device NamedSharding's) */
static SrVal *single_is_equivalent_to(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "is_equivalent_to", "other, ndim", p) < 0) return NULL;
  int dev = ((const Single *)a->self->obj.data)->dev;
  if (sr_single_device_sharding_id(p[0]) >= 0) return sr_bool(sr_single_device_sharding_id(p[0]) == dev);
  if (p[0]->kind != SR_V_SHARDING) return sr_bool(0);
  SrVal *m = sr_getattr(I, p[0], "is_equivalent_to");
  SrVal *argv[2] = {a->self, p[1]};
  SrArgs ca = {2, argv, 0, NULL, NULL, NULL};
  SrVal *r = m ? sr_call(I, m, &ca) : NULL;
  sr_unref(m);
  return r;
}

static SrVal *single_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "is_equivalent_to") == 0) return sr_bound_method(self, name, single_is_equivalent_to);
  if (strcmp(name, "shard_shape") == 0) return sr_bound_method(self, name, single_shard_shape);
  if (strcmp(name, "devices_indices_map") == 0 || strcmp(name, "addressable_devices_indices_map") == 0)
    return sr_bound_method(self, name, single_indices_map);
  int dev = ((const Single *)self->obj.data)->dev;
  if (strcmp(name, "device") == 0) return sr_concrete_device_val(dev);
  if (strcmp(name, "memory_kind") == 0) return sr_str_cstr(NULL, "device");
  if (strcmp(name, "num_devices") == 0) return sr_int(NULL, 1);
  if (strcmp(name, "is_fully_replicated") == 0 || strcmp(name, "is_fully_addressable") == 0) return sr_bool(1);
  if (strcmp(name, "device_set") == 0 || strcmp(name, "addressable_devices") == 0) {
    SrVal *s = sr_seq(NULL, SR_V_SET, 1);
    sr_seq_push(NULL, s, sr_concrete_device_val(dev));
    return s;
  }
  return NULL;
}

static const SrLangOps single_ops = {.getattr = single_getattr};
static const SrClass single_class = {"SingleDeviceSharding", NULL, single_repr, NULL, &single_ops};

SrVal *sr_single_device_sharding(int dev) {
  if (dev >= nsingles) {
    int n = dev + 16;
    singles = sr_xrealloc(singles, (size_t)n * sizeof *singles);
    memset(singles + nsingles, 0, (size_t)(n - nsingles) * sizeof *singles);
    nsingles = n;
  }
  if (!singles[dev]) {
    singles[dev] = sr_xcalloc(1, sizeof **singles);
    singles[dev]->dev = dev;
  }
  return sr_obj(&single_class, singles[dev]);
}

int sr_single_device_sharding_id(const SrVal *v) {
  return v && sr_is_obj(v, &single_class) ? ((const Single *)v->obj.data)->dev : -1;
}

static SrVal *bi_single(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "SingleDeviceSharding", "device, *, memory_kind=", p) < 0) return NULL;
  int dev = sr_concrete_device_id(p[0]);
  if (dev < 0) return sr_raise(I, "TypeError", "SingleDeviceSharding needs a device, got %s", sr_val_kind_name(p[0]));
  return sr_single_device_sharding(dev);
}

static int is_sharding(const SrVal *v) { return v->kind == SR_V_SHARDING || sr_is_obj(v, &single_class); }

/* The text a sharding is in a jaxpr's params (a new reference):
   NamedShardings as themselves, others as their repr. */
static SrVal *sharding_param(SrVal *v) {
  if (!v || v->kind == SR_V_NONE) return sr_word(NULL, "UnspecifiedValue", 16);
  if (v->kind == SR_V_SHARDING) return sr_ref(v);
  return layout_param(v);
}

/* ---- Format ---- */

typedef struct Format {
  SrVal *layout;   /* a Layout, AUTO, or NULL */
  SrVal *sharding; /* a sharding, or NULL */
} Format;

static Format **formats;
static int nformats, capformats;

static void format_repr(SrBuf *out, const SrVal *v) {
  const Format *f = v->obj.data;
  sr_buf_puts(out, "Format(layout=");
  if (f->layout) sr_val_repr(out, f->layout);
  else sr_buf_puts(out, "None");
  sr_buf_puts(out, ", sharding=");
  if (f->sharding) sr_val_repr(out, f->sharding);
  else sr_buf_puts(out, "None");
  sr_buf_putc(out, ')');
}

static SrVal *format_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const Format *f = self->obj.data;
  if (strcmp(name, "layout") == 0) return f->layout ? sr_ref(f->layout) : sr_none();
  if (strcmp(name, "sharding") == 0) return f->sharding ? sr_ref(f->sharding) : sr_none();
  return NULL;
}

static const SrLangOps format_ops = {.getattr = format_getattr};
static const SrClass format_class = {"Format", NULL, format_repr, NULL, &format_ops};

static int same_val(const SrVal *a, const SrVal *b) {
  if (!a || !b) return a == b;
  return sr_val_equal(a, b);
}

/* An interned Format (layout and sharding borrowed; None is NULL). */
SrVal *sr_format_val(SrVal *layout, SrVal *sharding) {
  if (layout && layout->kind == SR_V_NONE) layout = NULL;
  if (sharding && sharding->kind == SR_V_NONE) sharding = NULL;
  for (int i = 0; i < nformats; i++)
    if (same_val(formats[i]->layout, layout) && same_val(formats[i]->sharding, sharding))
      return sr_obj(&format_class, formats[i]);
  if (nformats == capformats) {
    capformats = capformats ? 2 * capformats : 16;
    formats = sr_xrealloc(formats, (size_t)capformats * sizeof *formats);
  }
  Format *f = sr_xcalloc(1, sizeof *f);
  f->layout = layout ? sr_ref(layout) : NULL;
  f->sharding = sharding ? sr_ref(sharding) : NULL;
  formats[nformats++] = f;
  return sr_obj(&format_class, f);
}

static SrVal *bi_format(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "Format", "layout=, sharding=", p) < 0) return NULL;
  SrVal *l = p[0] && p[0]->kind != SR_V_NONE ? p[0] : NULL, *s = p[1] && p[1]->kind != SR_V_NONE ? p[1] : NULL;
  SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
  if (l && sr_is_layout(l) && !s) {
    sr_raise(I, "ValueError",
             "Sharding has to be concrete when layout is of type <class 'jax._src.layout.Layout'>. Please pass a "
             "`jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` to the sharding argument. Got "
             "sharding None");
    return NULL;
  }
  if (l && !sr_is_layout(l) && !sr_is_layout_auto(l)) {
    sr_to_repr(I, &b, l);
    class_repr(&c, l);
    sr_raise(I, "TypeError",
             "Invalid value received for the layout argument. Expected values are `None`, `Layout.AUTO` or an "
             "instance of `Layout`. Got %s of type %s",
             b.p, c.p);
  } else if (s && !is_sharding(s)) {
    sr_to_repr(I, &b, s);
    class_repr(&c, s);
    sr_raise(I, "TypeError",
             "Invalid value received for the sharding argument. Expected values are `None` or an instance of "
             "`jax.Sharding`. Got %s of type %s",
             b.p, c.p);
  }
  sr_buf_free(&b);
  sr_buf_free(&c);
  if (I->exc) return NULL;
  return sr_format_val(l, s);
}

int sr_format_parts(SrVal *v, SrVal **sharding, SrVal **layout, int *has_layout) {
  if (!v || !sr_is_obj(v, &format_class)) return -1;
  const Format *f = v->obj.data;
  *sharding = f->sharding;
  *layout = NULL;
  *has_layout = 0;
  if (f->layout && sr_is_layout_auto(f->layout)) *has_layout = -1;
  if (f->layout && sr_is_layout(f->layout)) {
    *layout = f->layout;
    *has_layout = 1;
  }
  return 0;
}

int sr_layout_dims(const SrVal *layout, uint8_t *m2m) { return layout_m2m(layout, m2m); }

/* ---- x.format ---- */

static SrVal *prop_format(SrInterp *I, SrArgs *a) {
  SrArrayObj *o = sr_array_of(a->self);
  if (!o || o->kind != SR_AV_CONCRETE)
    return sr_raise(I, "ConcretizationTypeError", "format of an abstract or traced array");
  uint8_t m2m[SR_MAX_RANK];
  sr_array_local(o->data, m2m);
  SrVal *l = sr_layout_val(o->type->ndim, m2m);
  SrVal *s = sr_concrete_array_sharding(o->data);
  SrVal *f = sr_format_val(l, s);
  sr_unref(l);
  sr_unref(s);
  return f;
}

/* ---- with_layout_constraint ---- */

static SrVal *bi_with_layout_constraint(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "with_layout_constraint", "x, layouts", p) < 0) return NULL;
  SrVal *leaves = sr_pytree_flatten(I, p[0]);
  if (!leaves) return NULL;
  int n = leaves->seq.n;
  /* one layout for all leaves, or one per item of a list or tuple */
  SrVal **ls = sr_xcalloc((size_t)n + 1, sizeof *ls);
  int ok = 1;
  if (sr_is_seq(p[1]) && sr_is_seq(p[0]) && p[1]->seq.n == p[0]->seq.n) {
    int k = 0;
    for (int i = 0; i < p[0]->seq.n && ok; i++) {
      SrVal *sub = sr_pytree_flatten(I, p[0]->seq.items[i]);
      if (!sub) ok = 0;
      for (int j = 0; sub && j < sub->seq.n && k < n; j++) ls[k++] = p[1]->seq.items[i];
      sr_unref(sub);
    }
  } else {
    for (int i = 0; i < n; i++) ls[i] = p[1];
  }
  for (int i = 0; i < n && ok; i++) {
    if (!ls[i] || !sr_is_layout(ls[i])) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_putc(&b, '[');
      for (int k = 0; k < n; k++) {
        if (k) sr_buf_puts(&b, ", ");
        if (ls[k]) class_repr(&b, ls[k]);
      }
      sr_buf_putc(&b, ']');
      sr_raise(I, "ValueError", "layouts passed to `with_layout_constraint` must be of type `Layout`. Got %s", b.p);
      sr_buf_free(&b);
      ok = 0;
    }
  }
  SrVal *outs = ok ? sr_seq(NULL, SR_V_LIST, n) : NULL;
  for (int i = 0; i < n && ok; i++) {
    SrVal *x = leaves->seq.items[i];
    const SrType *t = sr_value_type(I, x);
    SrBuf e = SR_BUF_INIT;
    int misfit = t ? sr_layout_misfit(&e, ls[i], t) : 0;
    if (misfit) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, ls[i]);
      if (misfit == 2) sr_raise(I, "JaxRuntimeError", "%s", e.p);
      else
        sr_raise(I, "ValueError",
                 "One of with_layout_constraint arguments is incompatible with its layout annotation %s: %s", b.p,
                 e.p);
      sr_buf_free(&b);
      sr_buf_free(&e);
      ok = 0;
      break;
    }
    SrParam ps[1] = {{sr_intern_cstr("layout"), layout_param(ls[i])}};
    SrVal *r = sr_bind(I, SR_P_layout_constraint, 1, &x, 1, ps);
    sr_unref(ps[0].val);
    if (!r) {
      ok = 0;
      break;
    }
    sr_seq_push(NULL, outs, r);
  }
  free(ls);
  SrVal *res = ok ? sr_pytree_unflatten(p[0], outs) : NULL;
  sr_unref(outs);
  sr_unref(leaves);
  return res;
}

/* ---- jit's shardings and layouts ---- */

static void flat_push(SrJitFlat *f, SrVal *sh, SrVal *lay) {
  if (f->n == f->cap) {
    f->cap = f->cap ? 2 * f->cap : 16;
    f->e = sr_xrealloc(f->e, (size_t)f->cap * sizeof *f->e);
  }
  f->e[f->n++] = (SrJitEntry){sh, lay};
}

void sr_jit_flat_free(SrJitFlat *f) {
  free(f->e);
  sr_unref(f->keep);
  memset(f, 0, sizeof *f);
}

/* sharding_impls.prepare_axis_resources at jit's construction: each leaf
   of in_shardings / out_shardings (what) is None, a Sharding (not over an
   empty mesh), a PartitionSpec, or a Format / Layout (split off first). */
static int spec_unconstrained(const SrSpec *sp) {
  for (int i = 0; i < sp->n; i++)
    for (int k = 0; k < sp->e[i].n; k++)
      if (sp->e[i].names[k] == SR_SPEC_UNCONSTRAINED) return 1;
  return 0;
}

int sr_jit_check_axis_resources(SrInterp *I, SrVal *v, const char *what, int depth) {
  if ((v && v->kind == SR_V_SPEC && spec_unconstrained(v->spec)) ||
      (v && v->kind == SR_V_SHARDING && spec_unconstrained(v->sh.spec))) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, v);
    sr_raise(I, "ValueError", "Unconstrained dims are not allowed when passed to %s: %s", what, b.p);
    sr_buf_free(&b);
    return -1;
  }
  if (!v || v->kind == SR_V_NONE || v->kind == SR_V_SPEC || sr_is_obj(v, &format_class) || sr_is_layout(v) ||
      sr_is_layout_auto(v))
    return 0;
  if (is_sharding(v)) {
    if (v->kind == SR_V_SHARDING && !v->sh.mesh->n) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, v);
      sr_raise(I, "ValueError", "One of %s leaf specifications got an empty NamedSharding: %s which is not allowed.",
               what, b.p);
      sr_buf_free(&b);
      return -1;
    }
    return 0;
  }
  SrVal *ch = depth < 64 ? sr_pytree_children(v) : NULL;
  if (ch) {
    int rc = 0;
    for (int i = 0; i < ch->seq.n && rc == 0; i++) rc = sr_jit_check_axis_resources(I, ch->seq.items[i], what, depth + 1);
    sr_unref(ch);
    return rc;
  }
  SrBuf b = SR_BUF_INIT;
  sr_to_str(I, &b, v);
  sr_raise(I, "TypeError", "%s leaf specifications are expected to be PartitionSpec instances or None, but got %s", what,
           b.p);
  sr_buf_free(&b);
  return -1;
}

/* The sharding and layout one leaf of in_shardings / out_shardings gives
   (pjit.py: _split_layout_and_sharding, _create_sharding_for_array). */
static int leaf_entry(SrInterp *I, SrVal *v, const char *what, SrJitFlat *f, SrVal **sh, SrVal **lay) {
  *sh = *lay = NULL;
  if (v->kind == SR_V_NONE) return 0;
  if (sr_is_obj(v, &format_class)) {
    const Format *fm = v->obj.data;
    *lay = fm->layout;
    v = fm->sharding;
    if (!v) return 0;
  } else if (sr_is_layout(v) || sr_is_layout_auto(v)) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, v);
    sr_raise(I, "ValueError",
             "`jax.jit` does not accept device-local layouts directly. Create a `Format` instance wrapping this "
             "device-local layout and pass that to `jit` instead. Got %s",
             b.p);
    sr_buf_free(&b);
    return -1;
  }
  if (v->kind == SR_V_SPEC) {
    const SrMesh *m = sr_jit_ctx_mesh(I);
    if (!m) {
      const SrMesh *am = sr_jax_abstract_mesh(I->jax);
      if (am && am->n) m = am;
    }
    if (!m) {
      sr_raise(I, "RuntimeError",
               "%s requires a non-empty mesh in context if you are passing `PartitionSpec`s to %s. You can define a "
               "context mesh via `jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to %s and then the mesh "
               "context manager is not required.",
               I->jax->pjit_call ? "pjit" : "jit", what, what);
      return -1;
    }
    /* cached_named_sharding -> NamedSharding's check_pspec */
    if (sr_api_check_unique(I, v->spec, "NamedSharding spec") < 0 || sr_mesh_resource_check(I, m, v->spec) < 0)
      return -1;
    /* NamedSharding's constructor: a concrete mesh's default memory kind */
    SrVal *s = sr_sharding_val(NULL, m, v->spec, m->abstract ? NULL : sr_intern_cstr("device"));
    sr_seq_push(NULL, f->keep, s);
    *sh = s;
    return 0;
  }
  if (is_sharding(v)) {
    *sh = v;
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_to_repr(I, &b, v);
  sr_raise(I, "TypeError", "%s leaves must be shardings, PartitionSpecs, Formats or None, got %s", what, b.p);
  sr_buf_free(&b);
  return -1;
}

/* The entries of the prefix `spec` for every leaf of `tree`. */
static int prefix_entries(SrInterp *I, SrVal *spec, SrVal *tree, const char *what, SrJitFlat *f) {
  if ((spec->kind == SR_V_TUPLE || spec->kind == SR_V_LIST) && (tree->kind == SR_V_TUPLE || tree->kind == SR_V_LIST)) {
    if (spec->seq.n != tree->seq.n) {
      sr_raise(I, "ValueError",
               "pjit %s specification must be a tree prefix of the corresponding value, got specification of length "
               "%d for a value of length %d",
               what, spec->seq.n, tree->seq.n);
      return -1;
    }
    for (int i = 0; i < spec->seq.n; i++)
      if (prefix_entries(I, spec->seq.items[i], tree->seq.items[i], what, f) < 0) return -1;
    return 0;
  }
  /* a dict (or a registered node) is a prefix of a node of its kind with
     the same keys: their children pair up in flattening order */
  SrVal *sch = spec->kind == SR_V_NONE || spec->kind == SR_V_TUPLE || spec->kind == SR_V_LIST
                   ? NULL
                   : sr_pytree_children(spec);
  if (sch) {
    SrVal *tch = sr_pytree_children(tree);
    int same = tch && tch->seq.n == sch->seq.n && tree->kind == spec->kind &&
               (spec->kind != SR_V_OBJ || spec->obj.cls == tree->obj.cls);
    if (same && spec->kind == SR_V_DICT)
      for (int i = 0; i < spec->dict.n && same; i++) {
        int found = 0;
        for (int k = 0; k < tree->dict.n && !found; k++) found = sr_val_equal(spec->dict.keys[i], tree->dict.keys[k]);
        same = found;
      }
    int rc = same ? 0 : -1;
    for (int i = 0; same && i < sch->seq.n && rc == 0; i++)
      rc = prefix_entries(I, sch->seq.items[i], tch->seq.items[i], what, f);
    sr_unref(sch);
    sr_unref(tch);
    if (!same) sr_raise(I, "ValueError", "pjit %s specification must be a tree prefix of the corresponding value", what);
    return rc;
  }
  if (spec->kind == SR_V_TUPLE || spec->kind == SR_V_LIST) {
    sr_raise(I, "ValueError", "pjit %s specification must be a tree prefix of the corresponding value", what);
    return -1;
  }
  SrVal *sh, *lay;
  if (leaf_entry(I, spec, what, f, &sh, &lay) < 0) return -1;
  SrVal *leaves = sr_pytree_flatten(I, tree);
  if (!leaves) return -1;
  for (int i = 0; i < leaves->seq.n; i++) flat_push(f, sh, lay);
  sr_unref(leaves);
  return 0;
}

/* SrJitFlat entries for the positional arguments (tupled) or for a result. */
/* Whether the exception raised is prefix_entries' structural one. */
static int prefix_failed(SrInterp *I) {
  const char *m = I->exc ? sr_exc_msg(I->exc) : NULL;
  return m && strncmp(m, "pjit ", 5) == 0 && strstr(m, "specification must be a tree prefix of the corresponding value");
}

/* api_util.flatten_axis_resources' errors, raised in place of
   prefix_entries' own: spec is no prefix of the arguments tuple t
   (tupled) or of the result tree. */
static void prefix_message(SrInterp *I, SrVal *spec, SrVal *t, int tupled, const char *what) {
  char name[64];
  snprintf(name, sizeof name, "pjit %s", what);
  sr_exc_clear(I);
  if (tupled && ((spec->kind != SR_V_TUPLE && spec->kind != SR_V_LIST) || spec->seq.n != t->seq.n)) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_printf(&b,
                  "%s specification must be a tree prefix of the positional arguments tuple. In particular, %s must "
                  "either be a Sharding, a PartitionSpec, or a tuple of length equal to the number of positional "
                  "arguments.",
                  name, name);
    if (spec->kind != SR_V_TUPLE && spec->kind != SR_V_LIST) {
      SrVal *ty = sr_call1(I, sr_lookup_qualname("builtins.type"), spec);
      sr_exc_clear(I);
      sr_buf_printf(&b, " But %s is not a tuple: got ", name);
      if (ty) sr_val_repr(&b, ty);
      sr_unref(ty);
      sr_buf_puts(&b, " instead.");
    } else {
      sr_buf_printf(&b, " But %s is the wrong length: got a tuple or list of length %d for an args tuple of length %d.",
                    name, spec->seq.n, t->seq.n);
    }
    if (t->seq.n == 1) {
      /* the hint: (spec,) would have been a prefix */
      SrJitFlat g = {0};
      g.keep = sr_seq(NULL, SR_V_LIST, 0);
      SrVal *one = sr_seq(NULL, SR_V_TUPLE, 1);
      sr_seq_push(NULL, one, sr_ref(spec));
      if (prefix_entries(I, one, t, what, &g) == 0)
        sr_buf_printf(&b,
                      " Given the corresponding argument being passed, it looks like %s might need to be wrapped in "
                      "a singleton tuple.",
                      name);
      sr_exc_clear(I);
      sr_unref(one);
      sr_jit_flat_free(&g);
    }
    sr_raise(I, "ValueError", "%s", b.p);
    sr_buf_free(&b);
    return;
  }
  SrBuf d = SR_BUF_INIT;
  int n = sr_pytree_prefix_errors(I, spec, t, name, &d);
  if (n > 0) sr_raise(I, "ValueError", "Mismatch details (%d found):\n%s", n, d.p);
  else if (n == 0) sr_raise(I, "ValueError", "%s specification must be a tree prefix of the corresponding value", name);
  sr_buf_free(&d);
}

int sr_jit_flat_entries(SrInterp *I, SrVal *spec, int nargs, SrVal **args, SrVal *tree, const char *what, SrJitFlat *f) {
  f->keep = sr_seq(NULL, SR_V_LIST, 0);
  if (!tree) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, nargs);
    for (int i = 0; i < nargs; i++) sr_seq_push(NULL, t, sr_ref(args[i]));
    int rc;
    if (spec && (spec->kind == SR_V_TUPLE || spec->kind == SR_V_LIST)) rc = prefix_entries(I, spec, t, what, f);
    else rc = prefix_entries(I, spec ? spec : sr_none(), t, what, f);
    if (rc < 0 && spec && prefix_failed(I)) prefix_message(I, spec, t, 1, what);
    sr_unref(t);
    return rc;
  }
  int rc = prefix_entries(I, spec ? spec : sr_none(), tree, what, f);
  if (rc < 0 && spec && prefix_failed(I)) prefix_message(I, spec, tree, 0, what);
  return rc;
}

/* The concrete array of an argument leaf, or NULL. */
SrArray *sr_jit_leaf_array(SrVal *v) {
  SrArrayObj *o = sr_array_of(v);
  return o && o->kind == SR_AV_CONCRETE ? o->data : NULL;
}

/* A NamedSharding with its spec padded with None to n dims. */
static SrVal *padded(const SrVal *sh, int n) {
  SrSpec c = *sh->sh.spec;
  SrSpecEntry e[SR_MAX_RANK];
  int k = 0;
  for (; k < c.n && k < SR_MAX_RANK; k++) e[k] = c.e[k];
  for (; k < n && k < SR_MAX_RANK; k++) e[k] = (SrSpecEntry){0, NULL};
  c.e = e;
  c.n = k;
  return sr_sharding_val(NULL, sh->sh.mesh, &c, NULL);
}

/* Does a committed array's placement differ from a jit sharding?  (P('X')
   and P('X', None) are one placement.) */
/* op_shardings.are_hlo_shardings_equal for two NamedShardings over meshes
   of one shape and device order whose axes may be named otherwise (pmap's
   '_pmap_axis'): each dimension split over the same axis positions, the
   same memory kind. */
static int same_placement(const SrVal *a, const SrVal *b) {
  const SrMesh *ma = a->sh.mesh, *mb = b->sh.mesh;
  if (ma->abstract || mb->abstract || ma->n != mb->n) return 0;
  for (int k = 0; k < ma->n; k++)
    if (ma->sizes[k] != mb->sizes[k]) return 0;
  int nd = sr_mesh_ndev(ma);
  if (nd != sr_mesh_ndev(mb)) return 0;
  for (int p = 0; p < nd; p++)
    if (sr_mesh_device(ma, p) != sr_mesh_device(mb, p)) return 0;
  const SrSpec *sa = a->sh.spec, *sb = b->sh.spec;
  if (sa->n != sb->n || sa->nunreduced || sb->nunreduced) return 0;
  for (int i = 0; i < sa->n; i++) {
    if (sa->e[i].n != sb->e[i].n) return 0;
    for (int k = 0; k < sa->e[i].n; k++)
      if (sr_mesh_axis(ma, sa->e[i].names[k]) != sr_mesh_axis(mb, sb->e[i].names[k])) return 0;
  }
  const char *ka = a->sh.memory_kind ? a->sh.memory_kind : "device", *kb = b->sh.memory_kind ? b->sh.memory_kind : "device";
  return strcmp(ka, kb) == 0;
}

int sr_jit_sharding_differs(SrArray *x, SrVal *sh) {
  SrVal *xs = sr_concrete_array_sharding(x);
  int differs;
  if (xs->kind == SR_V_SHARDING && sh->kind == SR_V_SHARDING) {
    SrVal *a = padded(xs, x->type->ndim), *b = padded(sh, x->type->ndim);
    differs = !sr_val_equal(a, b);
    if (differs) differs = !same_placement(a, b);
    sr_unref(a);
    sr_unref(b);
  } else {
    differs = !sr_val_equal(xs, sh);
  }
  sr_unref(xs);
  return differs;
}

/* repr of an argument's aval: ShapedArray(float32[8,4]) */
static void aval_repr(SrBuf *out, const SrType *t) {
  sr_buf_puts(out, "ShapedArray(");
  sr_type_str(out, t, 0);
  sr_buf_putc(out, ')');
}

/* The sharding JAX gives a value of type t that was given none: its
   type's NamedSharding on the mesh in context, else device 0's. */
SrVal *sr_jit_default_sharding(SrInterp *I, const SrType *t) {
  const SrMesh *m = I->jax->mesh;
  if (!m && t && t->mesh && t->mesh->n) m = t->mesh;
  if (!m || !t) return sr_single_device_sharding(0);
  SrVal *spec = sr_api_type_spec(t);
  SrVal *r = sr_sharding_val(NULL, m, spec->spec, sr_intern_cstr("device"));
  sr_unref(spec);
  return r;
}

/* pjit.pjit_check_aval_sharding for one leaf of type t given sharding sh
   (NULL: unspecified): the spec fits t's rank and, unless uneven, divides
   its shape.  what_aval: "pjit arguments" / "pjit outputs"; name: the
   leaf's key path, or NULL.  -1 with JAX's error raised. */
int sr_jit_check_aval_sharding(SrInterp *I, const SrVal *sh, const SrType *t, const char *what_aval, const char *name,
                               int uneven) {
  if (!sh || !t || sh->kind != SR_V_SHARDING) return 0;
  const SrSpec *s = sh->sh.spec;
  SrBuf ns = SR_BUF_INIT, b = SR_BUF_INIT;
  if (name && *name) sr_buf_printf(&ns, " with pytree key path %s", name);
  sr_val_repr(&b, sh);
  int rc = 0;
  if (s->n > t->ndim) {
    sr_raise(I, "ValueError",
             "One of %s%s is incompatible with its sharding annotation %s: Sharding %s is only valid for values of "
             "rank at least %d, but was applied to a value of rank %d.%s",
             what_aval, sr_buf_str(&ns), b.p, b.p, s->n, t->ndim,
             t->ndim == 0 ? " For scalars the PartitionSpec should be P()" : "");
    rc = -1;
  }
  /* Sharding.shard_shape's divisibility (_common_shard_shape) */
  int64_t w[SR_MAX_RANK];
  int bad = -1;
  for (int d = 0; rc == 0 && d < t->ndim && d < SR_MAX_RANK; d++) {
    w[d] = 1;
    for (int k = 0; d < s->n && k < s->e[d].n; k++) {
      int ax = s->e[d].names[k] == SR_SPEC_UNCONSTRAINED ? -1 : sr_mesh_axis(sh->sh.mesh, s->e[d].names[k]);
      if (ax >= 0) w[d] *= sh->sh.mesh->sizes[ax];
    }
    if (bad < 0 && t->dims[d].size % w[d] != 0) bad = d;
  }
  if (rc == 0 && !uneven && bad >= 0 && sr_mesh_size(sh->sh.mesh) > 1) {
    SrBuf g = SR_BUF_INIT, f = SR_BUF_INIT;
    sr_buf_putc(&g, '(');
    sr_buf_putc(&f, '(');
    for (int d = 0; d < t->ndim; d++) {
      sr_buf_printf(&g, d ? ", %lld" : "%lld", (long long)t->dims[d].size);
      sr_buf_printf(&f, d ? ", %lld" : "%lld", (long long)w[d]);
    }
    sr_buf_puts(&g, t->ndim == 1 ? ",)" : ")");
    sr_buf_puts(&f, t->ndim == 1 ? ",)" : ")");
    /* source_info_util.summarize(current()), which pjit also prints:
       file:line:column (function) of the user's frame, the column from 0 */
    SrBuf sb = SR_BUF_INIT;
    const SrSrc *ss = I->py && I->py->code ? I->py->code->src : NULL;
    if (ss) {
      uint32_t line = 0, col = 0;
      sr_src_linecol(ss, I->py->cur_off, &line, &col);
      if (col > 1) sr_buf_printf(&sb, "%s:%u:%u (%s)", ss->name, line, col - 1, I->py->cur_func ? I->py->cur_func : "<module>");
      else sr_buf_printf(&sb, "%s:%u (%s)", ss->name, line, I->py->cur_func ? I->py->cur_func : "<module>");
      if (I->py->out) fprintf(I->py->out, "%s\n", sb.p);
    }
    const char *src = sb.len ? sb.p : NULL;
    sr_raise(I, "IndivisibleError",
             "One of %s%s was given the sharding %s implies that array axis %d is partitioned %lld times, but the "
             "dimension size is %lld (full shape: %s, per-dimension tiling factors: %s should evenly divide the "
             "shape). This error occurs at source:  %s",
             what_aval, sr_buf_str(&ns), b.p, bad, (long long)w[bad], (long long)t->dims[bad].size, g.p, f.p,
             src ? src : "");
    sr_buf_free(&g);
    sr_buf_free(&f);
    sr_buf_free(&sb);
    rc = -1;
  }
  sr_buf_free(&ns);
  sr_buf_free(&b);
  return rc;
}

/* debug_info's arg names of the positional arguments' leaves (fn's
   parameter names, args[i] without a signature) and result paths */
static char **leaf_names(SrInterp *I, SrVal *fn, int nargs, SrVal **args, SrVal *out_tree, int *n) {
  int cap = 16, k = 0;
  char **out = sr_xcalloc((size_t)cap, sizeof *out);
  SrBuf path = SR_BUF_INIT;
  if (out_tree) {
    SrVal *fl = sr_pytree_flatten(I, out_tree);
    int nl = fl ? fl->seq.n : 0;
    sr_unref(fl);
    while (k + nl + 1 > cap) cap *= 2, out = sr_xrealloc(out, (size_t)cap * sizeof *out);
    sr_buf_puts(&path, "result");
    sr_pytree_leaf_paths(out_tree, &path, out, &k);
  } else {
    SrFunction *f = fn ? sr_as_function(sr_signature_target(I, fn)) : NULL;
    sr_exc_clear(I);
    const SrParams *ps = f && f->node ? f->node->params : NULL;
    int npos = ps ? ps->n - ps->nkwonly : 0;
    for (int i = 0; i < nargs; i++) {
      SrVal *fl = sr_pytree_flatten(I, args[i]);
      int nl = fl ? fl->seq.n : 0;
      sr_unref(fl);
      while (k + nl + 1 > cap) cap *= 2, out = sr_xrealloc(out, (size_t)cap * sizeof *out);
      sr_buf_reset(&path);
      if (ps && i < npos) sr_buf_puts(&path, ps->names[i]);
      else if (ps && ps->star) sr_buf_printf(&path, "%s[%d]", ps->star, i - npos);
      else sr_buf_printf(&path, "args[%d]", i);
      sr_pytree_leaf_paths(args[i], &path, out, &k);
    }
  }
  sr_buf_free(&path);
  *n = k;
  return out;
}

static void names_free(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

int sr_jit_formats(SrInterp *I, SrVal *fn, SrVal *in_sh, SrVal *out_sh, int nargs, SrVal **args, int ncaptured,
                   SrVal *out_tree, SrVal **p) {
  SrJitFlat fi = {0}, fo = {0};
  if (sr_jit_flat_entries(I, in_sh, nargs, args, NULL, "in_shardings", &fi) < 0 ||
      sr_jit_flat_entries(I, out_sh, 0, NULL, out_tree, "out_shardings", &fo) < 0) {
    sr_jit_flat_free(&fi);
    sr_jit_flat_free(&fo);
    return -1;
  }
  /* the argument leaves, for JAX's checks of committed arrays
     (_resolve_in_shardings, _resolve_in_layouts) and of ranks */
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, fi.n);
  for (int i = 0; i < nargs; i++) {
    SrVal *l = sr_pytree_flatten(I, args[i]);
    for (int k = 0; l && k < l->seq.n; k++) sr_seq_push(NULL, leaves, sr_ref(l->seq.items[k]));
    sr_unref(l);
  }
  SrVal *outs = sr_pytree_flatten(I, out_tree);
  int rc = 0;
  /* pjit_check_aval_sharding of the arguments, then of the results */
  {
    int nn = 0, no = 0;
    char **in_names = leaf_names(I, fn, nargs, args, NULL, &nn);
    char **out_names = leaf_names(I, NULL, 0, NULL, out_tree, &no);
    const char *wa = "pjit arguments";
    for (int i = 0; i < fi.n && i < leaves->seq.n && rc == 0; i++)
      rc = sr_jit_check_aval_sharding(I, fi.e[i].sh, sr_value_type(I, leaves->seq.items[i]), wa,
                                      i < nn ? in_names[i] : NULL, 0);
    for (int i = 0; i < fo.n && outs && i < outs->seq.n && rc == 0; i++)
      rc = sr_jit_check_aval_sharding(I, fo.e[i].sh, sr_value_type(I, outs->seq.items[i]), "pjit outputs",
                                      i < no ? out_names[i] : NULL, 0);
    names_free(in_names, nn);
    names_free(out_names, no);
  }
  for (int i = 0; i < fi.n && i < leaves->seq.n && rc == 0; i++) {
    SrVal *x = leaves->seq.items[i];
    const SrType *t = sr_value_type(I, x);
    SrArray *arr = sr_jit_leaf_array(x);
    SrJitEntry *e = &fi.e[i];
    SrBuf r = SR_BUF_INIT;
    int misfit = e->lay && sr_is_layout(e->lay) && t ? sr_layout_misfit(&r, e->lay, t) : 0;
    if (misfit) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, e->lay);
      rc = -1;
      if (misfit == 2) sr_raise(I, "JaxRuntimeError", "%s", r.p);
      else sr_raise(I, "ValueError", "One of jit arguments is incompatible with its layout annotation %s: %s", b.p, r.p);
      sr_buf_free(&b);
      sr_buf_free(&r);
      break;
    }
    sr_buf_free(&r);
    if (!arr || !arr->committed) continue;
    SrBuf d = SR_BUF_INIT;
    aval_repr(&d, t);
    if (e->sh && sr_jit_sharding_differs(arr, e->sh)) {
      SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_val_repr(&b, e->sh);
      SrVal *xs = sr_concrete_array_sharding(arr);
      sr_val_repr(&c, xs);
      sr_unref(xs);
      sr_raise(I, "ValueError",
               "Sharding passed to jit does not match the sharding on the respective arg. Got jit sharding: %s,\narg "
               "sharding: %s for arg type: %s",
               b.p, c.p, d.p);
      sr_buf_free(&b);
      sr_buf_free(&c);
      rc = -1;
    } else if (e->lay) {
      uint8_t want[SR_MAX_RANK], have[SR_MAX_RANK];
      sr_array_local(arr, have);
      /* an array's layout is never AUTO */
      int differs = sr_is_layout_auto(e->lay) || (layout_m2m(e->lay, want), memcmp(want, have, (size_t)t->ndim) != 0);
      if (differs) {
        SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
        sr_val_repr(&b, e->lay);
        sr_local_repr(&c, t->ndim, have);
        sr_raise(I, "ValueError",
                 "Layout passed to jit does not match the layout on the respective arg. Got jit layout: %s,\narg "
                 "layout: %s for arg type: %s.%s",
                 b.p, c.p, d.p,
                 sr_is_layout_auto(e->lay) ? " The layout given to `jax.jit` is `Layout.AUTO` but the corresponding argument "
                                   "passed is a `jax.Array` with a concrete layout. Consider passing a "
                                   "`jax.ShapeDtypeStruct` instead of `jax.Array` as an argument to the jitted "
                                   "function  when using `Layout.AUTO`."
                                 : "");
        sr_buf_free(&b);
        sr_buf_free(&c);
        rc = -1;
      }
    }
    sr_buf_free(&d);
  }
  for (int i = 0; i < fo.n && outs && i < outs->seq.n && rc == 0; i++) {
    const SrType *t = sr_value_type(I, outs->seq.items[i]);
    SrBuf r = SR_BUF_INIT;
    int misfit = fo.e[i].lay && sr_is_layout(fo.e[i].lay) && t ? sr_layout_misfit(&r, fo.e[i].lay, t) : 0;
    if (misfit) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, fo.e[i].lay);
      if (misfit == 2) sr_raise(I, "JaxRuntimeError", "%s", r.p);
      else sr_raise(I, "ValueError", "One of jit outputs is incompatible with its layout annotation %s: %s", b.p, r.p);
      sr_buf_free(&b);
      rc = -1;
    }
    sr_buf_free(&r);
  }
  if (rc == 0) {
    int n = ncaptured + fi.n;
    p[0] = sr_seq(NULL, SR_V_TUPLE, n);
    p[2] = sr_seq(NULL, SR_V_TUPLE, n);
    for (int i = 0; i < ncaptured; i++) {
      sr_seq_push(NULL, p[0], sharding_param(NULL));
      sr_seq_push(NULL, p[2], sr_none());
    }
    for (int i = 0; i < fi.n; i++) {
      sr_seq_push(NULL, p[0], sharding_param(fi.e[i].sh));
      sr_seq_push(NULL, p[2], layout_param(fi.e[i].lay));
    }
    p[1] = sr_seq(NULL, SR_V_TUPLE, fo.n);
    p[3] = sr_seq(NULL, SR_V_TUPLE, fo.n);
    for (int i = 0; i < fo.n; i++) {
      sr_seq_push(NULL, p[1], sharding_param(fo.e[i].sh));
      sr_seq_push(NULL, p[3], layout_param(fo.e[i].lay));
    }
  }
  sr_unref(outs);
  sr_unref(leaves);
  sr_jit_flat_free(&fi);
  sr_jit_flat_free(&fo);
  return rc;
}

/* np.ones / np.zeros: host arrays, here jnp's (float32 rather than
   numpy's float64, which device_put makes float32 anyway with x64 off) */
static SrVal *np_filled(SrInterp *I, SrArgs *a, const char *jnp_name) {
  SrVal *f = sr_lookup_qualname(jnp_name);
  if (!f) return sr_raise(I, "NotImplementedError", "%s is not available", jnp_name);
  return sr_call(I, f, a);
}

static SrVal *np_ones(SrInterp *I, SrArgs *a) { return np_filled(I, a, "jax.numpy.ones"); }
static SrVal *np_zeros(SrInterp *I, SrArgs *a) { return np_filled(I, a, "jax.numpy.zeros"); }

void sr_layout_api_init(void) {
  sr_def("numpy.ones", np_ones, "np.ones(shape, dtype=None): an array of ones (jnp.ones here)");
  sr_def("numpy.zeros", np_zeros, "np.zeros(shape, dtype=None): an array of zeros (jnp.zeros here)");
  sr_def("jax.experimental.layout.Layout", bi_layout,
         "Layout(major_to_minor): a device-local layout, dims from most major to most minor ((1, 0) is column-major)");
  sr_register("jax.experimental.layout.Layout.AUTO", auto_val());
  sr_def("jax.experimental.layout.Format", bi_format,
         "Format(layout=None, sharding=None): a layout with a sharding, for jax.jit and jax.device_put");
  sr_def("jax.experimental.layout.with_layout_constraint", bi_with_layout_constraint,
         "with_layout_constraint(x, layout): x laid out as layout says (a layout_constraint equation)");
  sr_def("jax.sharding.SingleDeviceSharding", bi_single, "SingleDeviceSharding(device): all of an array on one device");
  sr_def("jax.Array.property.format", prop_format, "x.format: Format(layout, sharding) of a concrete array");
}

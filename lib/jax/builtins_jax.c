/* builtins_jax.c: JAX's sharding API: meshes, axis types, PartitionSpecs,
 * NamedShardings, set_mesh and the abstract mesh, jax.config. */
#include <stdlib.h>
#include <string.h>

#include "jax/api.h"
#include "core/jaxstate.h"
#include "jax/array_methods.h"
#include "jax/jnp.h"
#include "py/objects.h"
#include "text/print.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- helpers ---- */

static SrVal *names_tuple(const char *const *names, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_str_cstr(NULL, names[i]));
  return t;
}

static SrVal *names_set(const char *const *names, int n) {
  SrVal *t = sr_seq(NULL, SR_V_FROZENSET, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_str_cstr(NULL, names[i]));
  return t;
}

/* Axis names from a str or a tuple/list of strs. */
static int axis_names(SrInterp *I, SrVal *v, const char **out, int max, const char *what) {
  if (v->kind == SR_V_STR) {
    out[0] = sr_intern(v->str.s, v->str.n);
    return 1;
  }
  if (!sr_is_seq(v)) {
    sr_raise(I, "TypeError", "%s must be a string or a tuple of strings, got %s", what, sr_val_kind_name(v));
    return -1;
  }
  if (v->seq.n > max) {
    sr_raise(I, "ValueError", "%s: at most %d axes", what, max);
    return -1;
  }
  for (int i = 0; i < v->seq.n; i++) {
    const char *s = sr_as_str(I, v->seq.items[i], what);
    if (!s) return -1;
    out[i] = s;
  }
  return v->seq.n;
}

static int axis_type_of(SrInterp *I, SrVal *v, uint8_t *out) {
  if (v->kind == SR_V_AXISTYPE) {
    *out = (uint8_t)v->axistype;
    return 0;
  }
  sr_raise(I, "TypeError", "axis_types must hold jax.sharding.AxisType values, got %s", sr_val_kind_name(v));
  return -1;
}

/* ---- meshes ---- */

static int fill_mesh(SrInterp *I, SrMesh *m, SrVal *sizes, SrVal *names, SrVal *types, int default_type,
                     const char *fname) {
  memset(m, 0, sizeof *m);
  int64_t sz[SR_MAX_AXES];
  int ns;
  if (sizes->kind == SR_V_INT) {
    sz[0] = sizes->i;
    ns = 1;
  } else if (sr_is_seq(sizes)) {
    ns = sizes->seq.n;
    if (ns > SR_MAX_AXES) return sr_raise(I, "ValueError", "%s: at most %d mesh axes", fname, SR_MAX_AXES), -1;
    for (int i = 0; i < ns; i++) {
      if (sizes->seq.items[i]->kind != SR_V_INT)
        return sr_raise(I, "ValueError", "`axis_sizes` passed to `%s` should be a sequence of ints.", fname), -1;
      sz[i] = sizes->seq.items[i]->i;
    }
  } else {
    return sr_raise(I, "ValueError", "`axis_sizes` passed to `%s` should be a sequence of ints.", fname), -1;
  }
  const char *nm[SR_MAX_AXES];
  int nn = axis_names(I, names, nm, SR_MAX_AXES, "axis_names");
  if (nn < 0) return -1;
  if (nn != ns)
    return sr_raise(I, "ValueError",
                    "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second "
                    "argument (`axis_names`), but got devices.ndim == %d and len(axis_names) == %d.", ns, nn),
           -1;
  for (int i = 0; i < ns; i++) {
    if (sz[i] <= 0) return sr_raise(I, "ValueError", "mesh axis sizes must be positive"), -1;
    for (int k = 0; k < i; k++)
      if (nm[k] == nm[i]) return sr_raise(I, "ValueError", "mesh axis names must be unique, got '%s' twice", nm[i]), -1;
    m->names[i] = nm[i];
    m->sizes[i] = sz[i];
    m->types[i] = (uint8_t)default_type;
  }
  m->n = ns;
  if (types && types->kind != SR_V_NONE) {
    if (types->kind == SR_V_AXISTYPE) {
      for (int i = 0; i < ns; i++) m->types[i] = (uint8_t)types->axistype;
    } else if (sr_is_seq(types) && types->seq.n == ns) {
      for (int i = 0; i < ns; i++)
        if (axis_type_of(I, types->seq.items[i], &m->types[i]) < 0) return -1;
    } else {
      SrVal *nt = names_tuple(nm, nn);
      SrBuf b = SR_BUF_INIT;
      sr_buf_puts(&b, "Number of axis names should match the number of axis_types. Got axis_names=");
      sr_val_repr(&b, nt);
      sr_buf_puts(&b, " and axis_types=");
      sr_val_repr(&b, types);
      sr_unref(nt);
      sr_raise(I, "ValueError", "%s", b.p);
      sr_buf_free(&b);
      return -1;
    }
  }
  return 0;
}

static SrVal *bi_make_mesh(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "make_mesh", "axis_shapes, axis_names, axis_types=, *, devices=", p) < 0) return NULL;
  SrMesh m;
  if (fill_mesh(I, &m, p[0], p[1], p[2], SR_AXIS_EXPLICIT, "make_mesh") < 0) return NULL;
  int64_t size = sr_mesh_size_of(m.sizes, m.n); /* -1: more than any count */
  int ndev = I->jax->num_devices;
  if (size < 0 || size > ndev) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < m.n; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)m.sizes[i]);
    sr_buf_puts(&b, m.n == 1 ? ",)" : ")");
    sr_raise(I, "ValueError", "Number of devices %d must be >= the product of mesh_shape %s", ndev, b.p);
    sr_buf_free(&b);
    return NULL;
  }
  I->jax->devices_used = 1;
  return sr_mesh_val(NULL, sr_mesh_intern(&m));
}

static SrVal *bi_abstract_mesh(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "AbstractMesh", "axis_sizes, axis_names, axis_types=", p) < 0) return NULL;
  SrMesh m;
  if (fill_mesh(I, &m, p[0], p[1], p[2], SR_AXIS_AUTO, "AbstractMesh") < 0) return NULL;
  /* its size is a Python int, which is 64-bit here */
  if (sr_mesh_size_of(m.sizes, m.n) < 0)
    return sr_raise(I, "OverflowError", "integer overflow: shardrepl's Python ints are 64-bit");
  m.abstract = 1;
  return sr_mesh_val(NULL, sr_mesh_intern(&m));
}

static SrVal *bi_mesh(SrInterp *I, SrArgs *a) {
  /* Mesh(devices, axis_names, axis_types=): devices is an array of device
     ids (or of devices) whose shape is the mesh's */
  SrVal *p[3];
  if (sr_args_parse(I, a, "Mesh", "devices, axis_names, axis_types=", p) < 0) return NULL;
  /* a (nested) list of devices is np.array'ed first, as JAX does */
  SrVal *devs = p[0]->kind == SR_V_LIST || p[0]->kind == SR_V_TUPLE ? sr_jnp_asarray(I, p[0], -1) : sr_ref(p[0]);
  SrVal *shape = devs ? sr_getattr(I, devs, "shape") : NULL;
  sr_unref(devs);
  if (!shape) return NULL;
  SrMesh m;
  int rc = fill_mesh(I, &m, shape, p[1], p[2], SR_AXIS_AUTO, "Mesh");
  sr_unref(shape);
  if (rc < 0) return NULL;
  int64_t size = sr_mesh_size_of(m.sizes, m.n);
  if (size < 0)
    return sr_raise(I, "ValueError", "Mesh: the devices array holds more than %lld devices, but there are only %d",
                    (long long)INT64_MAX, I->jax->num_devices);
  if (size > I->jax->num_devices)
    return sr_raise(I, "ValueError", "Mesh: the devices array holds %lld devices, but there are only %d",
                    (long long)size, I->jax->num_devices);
  return sr_mesh_val(NULL, sr_mesh_intern(&m));
}

static SrVal *mesh_getattr(SrInterp *I, SrVal *self, const char *name) {
  const SrMesh *m = self->mesh;
  (void)I;
  if (strcmp(name, "axis_names") == 0) return names_tuple(m->names, m->n);
  if (strcmp(name, "axis_sizes") == 0 || strcmp(name, "devices_shape") == 0) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, m->n);
    for (int i = 0; i < m->n; i++) sr_seq_push(NULL, t, sr_int(NULL, m->sizes[i]));
    return t;
  }
  if (strcmp(name, "axis_types") == 0) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, m->n);
    for (int i = 0; i < m->n; i++) sr_seq_push(NULL, t, sr_axistype_val(m->types[i]));
    return t;
  }
  if (strcmp(name, "shape") == 0) {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < m->n; i++) sr_dict_set(NULL, d, sr_str_cstr(NULL, m->names[i]), sr_int(NULL, m->sizes[i]));
    return d;
  }
  if (strcmp(name, "size") == 0) return sr_int(NULL, sr_mesh_size(m));
  if (strcmp(name, "empty") == 0) return sr_bool(m->n == 0);
  if (strcmp(name, "abstract_mesh") == 0) return sr_mesh_val(NULL, sr_mesh_abstract(m, !m->abstract));
  return NULL;
}

/* ---- axis types ---- */

static SrVal *axistype_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "name") == 0) return sr_str_cstr(NULL, sr_axis_type_name(self->axistype));
  return NULL;
}

/* ---- PartitionSpec ---- */

/* CanonicalizePartition: falsy -> None, 1-tuples -> the element, lists ->
   tuples, nested tuples rejected. */
static int spec_entry_of(SrInterp *I, SrVal *v, SrSpecEntry *e, const char **names, int *nn) {
  e->names = names + *nn;
  e->n = 0;
  if (!sr_val_truthy(v) && v->kind != SR_V_OBJ) return 0;
  if (v->kind == SR_V_WORD && v->str.n == 13 && memcmp(v->str.s, "UNCONSTRAINED", 13) == 0) {
    names[(*nn)++] = SR_SPEC_UNCONSTRAINED;
    e->n = 1;
    return 0;
  }
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    for (int i = 0; i < v->seq.n; i++) {
      SrVal *x = v->seq.items[i];
      if (x->kind == SR_V_TUPLE || x->kind == SR_V_LIST) {
        SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
        sr_val_str(&b, v);
        sr_val_str(&c, x);
        sr_raise(I, "ValueError", "A tuple inside PartitionSpec cannot contain a nested tuple. Got partition: %s and the nested tuple: %s", b.p, c.p);
        sr_buf_free(&b);
        sr_buf_free(&c);
        return -1;
      }
      const char *s = sr_as_str(I, x, "a PartitionSpec entry");
      if (!s) return -1;
      if (*nn >= 64) return sr_raise(I, "ValueError", "PartitionSpec too large"), -1;
      names[(*nn)++] = s;
      e->n++;
    }
    return 0;
  }
  const char *s = sr_as_str(I, v, "a PartitionSpec entry");
  if (!s) return -1;
  names[(*nn)++] = s;
  e->n = 1;
  return 0;
}

static int name_set_of(SrInterp *I, SrVal *v, const char **out, int *n, const char *which) {
  *n = 0;
  if (!v) return 0;
  if (v->kind != SR_V_SET && v->kind != SR_V_FROZENSET) {
    sr_raise(I, "TypeError", "%s argument of PartitionSpec should of type `frozenset` or `set`. Got type <class '%s'>",
             which, sr_val_kind_name(v));
    return -1;
  }
  for (int i = 0; i < v->seq.n && i < SR_MAX_AXES; i++) {
    if (v->seq.items[i]->kind == SR_V_NONE) {
      sr_raise(I, "ValueError", "%s cannot contain None. All elements in %s should refer to the mesh axes.", which, which);
      return -1;
    }
    const char *s = sr_as_str(I, v->seq.items[i], which);
    if (!s) return -1;
    out[(*n)++] = s;
  }
  return 0;
}

static SrVal *bi_partition_spec(SrInterp *I, SrArgs *a) {
  SrVal *unred = NULL, *red = NULL, *kind = NULL;
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "unreduced") == 0) unred = a->kwv[k];
    else if (strcmp(a->kw[k], "reduced") == 0) red = a->kwv[k];
    else if (strcmp(a->kw[k], "unreduced_kind") == 0) kind = a->kwv[k];
    else return sr_raise(I, "TypeError", "PartitionSpec() got an unexpected keyword argument '%s'", a->kw[k]);
  }
  if (a->n > SR_MAX_RANK) return sr_raise(I, "ValueError", "PartitionSpec has too many entries");
  SrSpec spec = {0};
  SrSpecEntry entries[SR_MAX_RANK];
  const char *names[64], *un[SR_MAX_AXES], *re[SR_MAX_AXES];
  int nn = 0;
  spec.e = entries;
  spec.n = a->n;
  for (int i = 0; i < a->n; i++)
    if (spec_entry_of(I, a->v[i], &entries[i], names, &nn) < 0) return NULL;
  if (name_set_of(I, unred, un, &spec.nunreduced, "unreduced") < 0) return NULL;
  if (name_set_of(I, red, re, &spec.nreduced, "reduced") < 0) return NULL;
  spec.unreduced = un;
  spec.reduced = re;
  for (int i = 0; i < spec.nunreduced; i++)
    for (int k = 0; k < spec.nreduced; k++)
      if (un[i] == re[k]) {
        SrVal *u = names_set(un, spec.nunreduced), *r = names_set(re, spec.nreduced);
        SrBuf b = SR_BUF_INIT;
        sr_buf_puts(&b, "`unreduced` and `reduced` argument to PartitionSpec cannot overlap. Got unreduced: ");
        sr_val_repr(&b, u);
        sr_buf_puts(&b, " and reduced: ");
        sr_val_repr(&b, r);
        sr_raise(I, "ValueError", "%s", b.p);
        sr_buf_free(&b);
        sr_unref(u);
        sr_unref(r);
        return NULL;
      }
  for (int i = 0; i < spec.n; i++)
    for (int j = 0; j < entries[i].n; j++)
      for (int k = 0; k < spec.nunreduced + spec.nreduced; k++) {
        int is_un = k < spec.nunreduced;
        const char *x = is_un ? un[k] : re[k - spec.nunreduced];
        if (entries[i].names[j] == x) {
          SrVal *pv = sr_spec_val(NULL, &(SrSpec){spec.n, entries, 0, 0, NULL, NULL, 0});
          SrBuf b = SR_BUF_INIT;
          SrVal *t = sr_seq(NULL, SR_V_TUPLE, spec.n);
          for (int q = 0; q < spec.n; q++) sr_seq_push(NULL, t, sr_getindex(I, pv, q));
          sr_val_repr(&b, t);
          SrVal *s = is_un ? names_set(un, spec.nunreduced) : names_set(re, spec.nreduced);
          sr_buf_puts(&b, is_un ? " and unreduced axes: " : " and reduced axes: ");
          sr_val_repr(&b, s);
          sr_raise(I, "ValueError", "partitions cannot overlap with %s axes passed to PartitionSpec. Got partitions: %s",
                   is_un ? "unreduced" : "reduced", b.p);
          sr_buf_free(&b);
          sr_unref(pv);
          sr_unref(t);
          sr_unref(s);
          return NULL;
        }
      }
  spec.ukind = SR_UK_NONE;
  if (kind && kind->kind != SR_V_NONE) {
    const char *k = kind->kind == SR_V_STR || kind->kind == SR_V_WORD ? sr_intern(kind->str.s, kind->str.n) : NULL;
    if (k && strcmp(k, "sum") == 0) spec.ukind = SR_UK_SUM;
    else if (k && strcmp(k, "max") == 0) spec.ukind = SR_UK_MAX;
    else if (k && strcmp(k, "min") == 0) spec.ukind = SR_UK_MIN;
    else return sr_raise(I, "TypeError", "Expected unreduced_kind to be of type `jax.sharding.UnreducedKind`");
    if (!spec.nunreduced)
      return sr_raise(I, "ValueError", "`unreduced_kind` should be `None` when `unreduced` is an empty set.");
  } else if (spec.nunreduced) {
    spec.ukind = SR_UK_SUM;
  }
  return sr_spec_val(NULL, &spec);
}

static SrVal *spec_getattr(SrInterp *I, SrVal *self, const char *name) {
  const SrSpec *s = self->spec;
  (void)I;
  if (strcmp(name, "unreduced") == 0) return names_set(s->unreduced, s->nunreduced);
  if (strcmp(name, "reduced") == 0) return names_set(s->reduced, s->nreduced);
  if (strcmp(name, "unreduced_kind") == 0)
    return s->nunreduced ? sr_word(NULL, sr_ukind_name(s->ukind), strlen(sr_ukind_name(s->ukind))) : sr_none();
  if (strcmp(name, "partitions") == 0) {
    SrSpec plain = *s;
    plain.nunreduced = plain.nreduced = 0;
    SrVal *pv = sr_spec_val(NULL, &plain);
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, s->n);
    for (int i = 0; i < s->n; i++) sr_seq_push(NULL, t, sr_getindex(I, pv, i));
    sr_unref(pv);
    return t;
  }
  return NULL;
}

/* ---- NamedSharding ---- */

static SrVal *bi_named_sharding(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "NamedSharding", "mesh, spec, *, memory_kind=", p) < 0) return NULL;
  if (p[0]->kind != SR_V_MESH)
    return sr_raise(I, "TypeError", "NamedSharding's mesh must be a Mesh or AbstractMesh, got %s", sr_val_kind_name(p[0]));
  if (p[1]->kind != SR_V_SPEC)
    return sr_raise(I, "TypeError", "NamedSharding's spec must be a PartitionSpec, got %s", sr_val_kind_name(p[1]));
  const SrMesh *m = p[0]->mesh;
  const SrSpec *s = p[1]->spec;
  if (sr_api_check_spec(I, s, NULL, -1) < 0) return NULL;
  for (int i = 0; i < s->n; i++)
    for (int j = 0; j < s->e[i].n; j++)
      if (s->e[i].names[j] != SR_SPEC_UNCONSTRAINED && sr_mesh_axis(m, s->e[i].names[j]) < 0) {
        SrBuf b = SR_BUF_INIT, names = SR_BUF_INIT;
        sr_spec_repr(&b, s);
        SrVal *t = names_tuple(m->names, m->n);
        sr_val_repr(&names, t);
        sr_unref(t);
        sr_raise(I, "ValueError", "Resource axis: %s of %s is not found in mesh: %s.", s->e[i].names[j], b.p, names.p);
        sr_buf_free(&b);
        sr_buf_free(&names);
        return NULL;
      }
  const char *mk = NULL;
  if (p[2] && p[2]->kind != SR_V_NONE) mk = sr_as_str(I, p[2], "memory_kind");
  else if (!m->abstract) mk = sr_intern_cstr("device");
  return sr_sharding_val(NULL, m, s, mk);
}

static SrVal *sharding_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "mesh") == 0) return sr_mesh_val(NULL, self->sh.mesh);
  if (strcmp(name, "spec") == 0) return sr_spec_val(NULL, self->sh.spec);
  if (strcmp(name, "memory_kind") == 0)
    return self->sh.memory_kind ? sr_str_cstr(NULL, self->sh.memory_kind) : sr_none();
  return NULL;
}

/* ---- set_mesh and the abstract mesh ---- */

typedef struct SetMesh {
  const SrMesh *mesh, *prev;
  int abstract; /* use_abstract_mesh */
} SetMesh;

static void set_mesh_repr(SrBuf *out, const SrVal *v) {
  const SetMesh *s = v->obj.data;
  sr_buf_puts(out, s->abstract ? "<jax._src.sharding_impls.use_abstract_mesh object>"
                               : "<jax._src.sharding_impls.set_mesh object>");
}

static const SrClass set_mesh_class = {"set_mesh", free, set_mesh_repr, NULL, NULL};

static SrVal *bi_set_mesh(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "set_mesh", "mesh", p) < 0) return NULL;
  if (p[0]->kind != SR_V_NONE && (p[0]->kind != SR_V_MESH || p[0]->mesh->abstract))
    return sr_raise(I, "ValueError", "Expected mesh of type `jax.sharding.Mesh`. Got <class '%s%s'>",
                    p[0]->kind == SR_V_MESH ? "jax._src.mesh." : "", sr_val_kind_name(p[0]));
  SetMesh *s = sr_xcalloc(1, sizeof *s);
  s->prev = I->jax->mesh;
  s->mesh = p[0]->kind == SR_V_NONE ? NULL : p[0]->mesh;
  /* a global setter too: the mesh is set as soon as set_mesh is called */
  I->jax->mesh = s->mesh;
  return sr_obj(&set_mesh_class, s);
}

static SrVal *bi_use_abstract_mesh(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "use_abstract_mesh", "mesh", p) < 0) return NULL;
  if (p[0]->kind != SR_V_MESH || !p[0]->mesh->abstract)
    return sr_raise(I, "ValueError", "Expected an AbstractMesh, got %s", sr_val_kind_name(p[0]));
  SetMesh *s = sr_xcalloc(1, sizeof *s);
  s->mesh = p[0]->mesh;
  s->abstract = 1;
  return sr_obj(&set_mesh_class, s);
}

static SrVal *set_mesh_enter(SrInterp *I, SrVal *self) {
  SetMesh *s = self->obj.data;
  if (s->abstract) {
    if (I->jax->nabstract == 32) return sr_raise(I, "RuntimeError", "abstract meshes nested too deeply");
    I->jax->abstract[I->jax->nabstract++] = s->mesh;
  }
  return sr_ref(self);
}

static void set_mesh_exit(SrInterp *I, SrVal *self) {
  SetMesh *s = self->obj.data;
  if (s->abstract) {
    if (I->jax->nabstract) I->jax->nabstract--;
  } else {
    I->jax->mesh = s->prev;
  }
}

static const SrContextOps set_mesh_ctx = {&set_mesh_class, set_mesh_enter, set_mesh_exit};

static SrVal *bi_get_abstract_mesh(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "get_abstract_mesh() takes no arguments");
  return sr_mesh_val(NULL, sr_jax_abstract_mesh(I->jax));
}

static SrVal *bi_get_mesh(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "get_mesh() takes no arguments");
  if (!I->jax->mesh) {
    SrMesh m = {0};
    return sr_mesh_val(NULL, sr_mesh_intern(&m));
  }
  return sr_mesh_val(NULL, I->jax->mesh);
}

/* ---- jax.config ---- */

static SrVal *bi_config_update(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "update", "name, val", p) < 0) return NULL;
  const char *name = sr_as_str(I, p[0], "the option name");
  if (!name) return NULL;
  if (strcmp(name, "jax_num_cpu_devices") == 0) {
    int64_t n;
    if (sr_as_int(I, p[1], "jax_num_cpu_devices", &n) < 0) return NULL;
    if (n < 1 || n > 4096) return sr_raise(I, "ValueError", "jax_num_cpu_devices must be between 1 and 4096");
    if (I->jax->devices_used && n != I->jax->num_devices)
      return sr_raise(I, "RuntimeError", "jax_num_cpu_devices config should be updated before backends are initialized.");
    /* under MPI the ranks split the devices evenly (the backend takes the
       new count when a device is first used) */
    int ranks = I->jax->num_ranks;
    if (ranks > 1 && n % ranks != 0)
      return sr_raise(I, "ValueError",
                      "jax_num_cpu_devices = %lld cannot be split over the %d MPI ranks of this job: it must be a "
                      "multiple of %d",
                      (long long)n, ranks, ranks);
    I->jax->num_devices = (int)n;
    return sr_none();
  }
  if (strcmp(name, "jax_enable_x64") == 0) {
    I->jax->enable_x64 = sr_val_truthy(p[1]);
    return sr_none();
  }
  /* options that change nothing here are accepted */
  static const char *const accepted[] = {"jax_platforms", "jax_platform_name", "jax_threefry_partitionable",
                                         "jax_pprint_use_color", "jax_default_matmul_precision", NULL};
  for (int i = 0; accepted[i]; i++)
    if (strcmp(name, accepted[i]) == 0) return sr_none();
  return sr_raise(I, "AttributeError", "Unrecognized config option: %s", name);
}

/* ---- jaxprs as values ---- */

static SrVal *jaxpr_getattr(SrInterp *I, SrVal *self, const char *name) {
  SrJaxpr *j = self->jx.jaxpr;
  (void)I;
  if (strcmp(name, "jaxpr") == 0) return sr_ref(self);
  if (strcmp(name, "eqns") == 0) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->neqn);
    for (uint32_t i = 0; i < j->neqn; i++) {
      SrBuf b = SR_BUF_INIT;
      sr_print_eqn(&b, &j->eqns[i]);
      sr_seq_push(NULL, l, sr_word(NULL, b.p, b.len));
      sr_buf_free(&b);
    }
    return l;
  }
  if (strcmp(name, "consts") == 0) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->nconst);
    for (uint32_t i = 0; i < j->nconst; i++) sr_seq_push(NULL, l, sr_ref(j->consts && j->consts[i] ? j->consts[i] : sr_none()));
    return l;
  }
  return NULL;
}

/* ---- registration ---- */

static void reg_dtype(const char *name, SrDtype d) {
  char buf[64];
  snprintf(buf, sizeof buf, "jax.numpy.%s", name);
  sr_register(buf, sr_dtype_val(NULL, d));
  snprintf(buf, sizeof buf, "numpy.%s", name);
  sr_register(buf, sr_dtype_val(NULL, d));
}

void sr_builtins_jax_init(void) {
  sr_array_methods_init();
  sr_def("jax.make_mesh jax.sharding.make_mesh", bi_make_mesh,
         "make_mesh(axis_shapes, axis_names, axis_types=None): a concrete Mesh over the first devices; axis types default to Explicit");
  sr_def("jax.sharding.AbstractMesh", bi_abstract_mesh,
         "AbstractMesh(axis_sizes, axis_names, axis_types=None): a mesh with no devices");
  sr_def("jax.sharding.Mesh", bi_mesh, "Mesh(devices, axis_names, axis_types=None): a mesh over an array or (nested) list of devices");
  sr_def("jax.sharding.PartitionSpec jax.P", bi_partition_spec,
         "P(*partitions, unreduced=set(), reduced=set()): how each array dimension is split over mesh axes");
  sr_def("jax.sharding.NamedSharding jax.NamedSharding", bi_named_sharding,
         "NamedSharding(mesh, spec): a PartitionSpec over a mesh");
  sr_def("jax.set_mesh jax.sharding.set_mesh", bi_set_mesh,
         "set_mesh(mesh): sets the mesh in context (also usable in a with statement)");
  sr_def("jax.sharding.use_abstract_mesh", bi_use_abstract_mesh,
         "use_abstract_mesh(abstract_mesh): a context manager that changes the abstract mesh");
  sr_def("jax.sharding.get_abstract_mesh", bi_get_abstract_mesh,
         "get_abstract_mesh(): the abstract mesh in context");
  sr_def("jax.get_mesh jax.sharding.get_mesh", bi_get_mesh, "get_mesh(): the concrete mesh set with set_mesh");
  sr_def("jax.config.update", bi_config_update,
         "jax.config.update(name, value): jax_num_cpu_devices (before first use), jax_enable_x64");
  sr_register("jax.sharding.AxisType", sr_module("jax.sharding.AxisType"));
  sr_register("jax.sharding.AxisType.Explicit", sr_axistype_val(SR_AXIS_EXPLICIT));
  sr_register("jax.sharding.AxisType.Auto", sr_axistype_val(SR_AXIS_AUTO));
  sr_register("jax.sharding.AxisType.Manual", sr_axistype_val(SR_AXIS_MANUAL));
  sr_register("jax.sharding.PartitionSpec.UNCONSTRAINED", sr_word(NULL, "UNCONSTRAINED", 13));
  /* the modules themselves, so that bare `jax`, `jnp`... resolve */
  sr_register("builtins.jax", sr_module("jax"));
  sr_register("builtins.jnp", sr_module("jax.numpy"));
  sr_register("builtins.lax", sr_module("jax.lax"));
  sr_register("builtins.np", sr_module("numpy"));
  static const struct {
    const char *name;
    SrDtype d;
  } dtypes[] = {
    {"bool_", SR_BOOL}, {"bool", SR_BOOL}, {"int8", SR_I8}, {"int16", SR_I16}, {"int32", SR_I32},
    {"int64", SR_I64}, {"uint8", SR_U8}, {"uint16", SR_U16}, {"uint32", SR_U32}, {"uint64", SR_U64},
    {"float16", SR_F16}, {"bfloat16", SR_BF16}, {"float32", SR_F32}, {"float64", SR_F64},
    {"complex64", SR_C64}, {"complex128", SR_C128}, {"int4", SR_I4}, {"uint4", SR_U4},
    {"float8_e4m3fn", SR_F8_E4M3FN}, {"float8_e5m2", SR_F8_E5M2}, {NULL, 0},
  };
  for (int i = 0; dtypes[i].name; i++) reg_dtype(dtypes[i].name, dtypes[i].d);
  sr_kind_getattr_set(SR_V_MESH, mesh_getattr);
  sr_kind_getattr_set(SR_V_SPEC, spec_getattr);
  sr_kind_getattr_set(SR_V_SHARDING, sharding_getattr);
  sr_kind_getattr_set(SR_V_AXISTYPE, axistype_getattr);
  sr_kind_getattr_set(SR_V_JAXPR, jaxpr_getattr);
  sr_context_register(&set_mesh_ctx);
}

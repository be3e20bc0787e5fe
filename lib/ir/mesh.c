/* mesh.c: interned meshes and their printed forms. */
#include "ir/mesh.h"

#include <string.h>

#include "util/mem.h"
#include "util/pyfmt.h"

/* Few distinct meshes exist in a session, so a list will do. */
static const SrMesh **meshes;
static size_t nmeshes, capmeshes;

static int devices_equal(const SrMesh *a, const SrMesh *b) {
  if (!a->devices || !b->devices) return a->devices == b->devices;
  int64_t n = sr_mesh_size(a);
  return memcmp(a->devices, b->devices, (size_t)n * sizeof(int)) == 0;
}

static int mesh_equal(const SrMesh *a, const SrMesh *b) {
  if (a->n != b->n || a->abstract != b->abstract ||
      a->device_fields != b->device_fields || a->unsized != b->unsized)
    return 0;
  for (int i = 0; i < a->n; i++)
    if (a->names[i] != b->names[i] || a->sizes[i] != b->sizes[i] ||
        a->types[i] != b->types[i])
      return 0;
  return devices_equal(a, b);
}

const SrMesh *sr_mesh_intern(const SrMesh *m) {
  for (size_t i = 0; i < nmeshes; i++)
    if (mesh_equal(meshes[i], m)) return meshes[i];
  SrMesh *c = sr_xmalloc(sizeof *c);
  *c = *m;
  if (m->devices) {
    size_t n = (size_t)sr_mesh_size(m);
    int *d = sr_xmalloc(n * sizeof(int));
    memcpy(d, m->devices, n * sizeof(int));
    c->devices = d;
  }
  if (nmeshes == capmeshes) {
    capmeshes = capmeshes ? 2 * capmeshes : 16;
    meshes = sr_xrealloc(meshes, capmeshes * sizeof *meshes);
  }
  meshes[nmeshes++] = c;
  return c;
}

const SrMesh *sr_mesh_empty(void) {
  SrMesh m = {0};
  return sr_mesh_intern(&m);
}

const SrMesh *sr_mesh_shape(const SrMesh *m) {
  SrMesh s = {0};
  s.n = m->n;
  for (int i = 0; i < m->n; i++) {
    s.names[i] = m->names[i];
    s.sizes[i] = m->sizes[i];
  }
  s.abstract = 1;
  s.unsized = m->unsized;
  return sr_mesh_intern(&s);
}

const SrMesh *sr_mesh_with_types(const SrMesh *m, const uint8_t *types) {
  SrMesh s = *m;
  memcpy(s.types, types, sizeof s.types);
  return sr_mesh_intern(&s);
}

const SrMesh *sr_mesh_abstract(const SrMesh *m, int device_fields) {
  SrMesh s = *m;
  s.abstract = 1;
  s.device_fields = (uint8_t)device_fields;
  s.devices = NULL;
  return sr_mesh_intern(&s);
}

int64_t sr_mesh_size(const SrMesh *m) {
  int64_t n = 1;
  for (int i = 0; i < m->n; i++) n *= m->sizes[i];
  return n;
}

int64_t sr_mesh_size_of(const int64_t *sizes, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++)
    if (__builtin_mul_overflow(p, sizes[i], &p)) return -1;
  return p;
}

int64_t sr_mesh_axes_size(const SrMesh *m, SrAxes axes) {
  int64_t n = 1;
  for (int i = 0; i < m->n; i++)
    if (axes & (1u << i)) n *= m->sizes[i];
  return n;
}

SrAxes sr_mesh_axes_of_type(const SrMesh *m, SrAxisType t) {
  SrAxes a = 0;
  for (int i = 0; i < m->n; i++)
    if (m->types[i] == t) a |= 1u << i;
  return a;
}

const char *sr_axis_type_name(int t) {
  switch (t) {
  case SR_AXIS_AUTO: return "Auto";
  case SR_AXIS_MANUAL: return "Manual";
  default: return "Explicit";
  }
}

static void axis_types_tuple(SrBuf *out, const SrMesh *m) {
  sr_buf_puts(out, "axis_types=(");
  for (int i = 0; i < m->n; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_buf_puts(out, sr_axis_type_name(m->types[i]));
  }
  sr_buf_puts(out, m->n == 1 ? ",)" : ")");
}

void sr_mesh_str(SrBuf *out, const SrMesh *m) {
  if (!m->abstract && m->n == 0) {
    sr_buf_puts(out, "Mesh()");
    return;
  }
  sr_buf_puts(out, m->abstract ? "AbstractMesh(" : "Mesh(");
  if (m->abstract && m->n == 0) sr_buf_puts(out, "(), ");
  for (int i = 0; i < m->n; i++) {
    sr_py_str_repr(out, m->names[i], strlen(m->names[i]));
    sr_buf_printf(out, ": %lld, ", (long long)m->sizes[i]);
  }
  axis_types_tuple(out, m);
  if (m->abstract && m->device_fields)
    sr_buf_puts(out, ", device_kind=cpu, num_cores=None, platform=cpu");
  sr_buf_putc(out, ')');
}

void sr_mesh_repr(SrBuf *out, const SrMesh *m) {
  if (m->abstract) {
    sr_mesh_str(out, m);
    return;
  }
  if (m->n == 0) {
    /* Mesh._repr of the empty mesh names no axis types */
    sr_buf_puts(out, "Mesh(axis_sizes=(), axis_names=())");
    return;
  }
  sr_buf_puts(out, "Mesh(axis_sizes=(");
  for (int i = 0; i < m->n; i++)
    sr_buf_printf(out, i ? ", %lld" : "%lld", (long long)m->sizes[i]);
  sr_buf_puts(out, m->n == 1 ? ",), axis_names=(" : "), axis_names=(");
  for (int i = 0; i < m->n; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_py_str_repr(out, m->names[i], strlen(m->names[i]));
  }
  sr_buf_puts(out, m->n == 1 ? ",), " : "), ");
  axis_types_tuple(out, m);
  sr_buf_putc(out, ')');
}

void sr_axes_tuple_str(SrBuf *out, const SrMesh *m, SrAxes axes) {
  sr_buf_putc(out, '(');
  int k = 0;
  for (int i = 0; i < m->n; i++) {
    if (!(axes & (1u << i))) continue;
    if (k++) sr_buf_puts(out, ", ");
    sr_py_str_repr(out, m->names[i], strlen(m->names[i]));
  }
  sr_buf_puts(out, k == 1 ? ",)" : ")");
}

void sr_axes_suffix_str(SrBuf *out, const SrMesh *m, SrAxes axes) {
  int k = sr_axes_count(axes);
  if (k > 1) sr_buf_putc(out, '(');
  int j = 0;
  for (int i = 0; i < m->n; i++) {
    if (!(axes & (1u << i))) continue;
    if (j++) sr_buf_putc(out, ',');
    sr_buf_puts(out, m->names[i]);
  }
  if (k > 1) sr_buf_putc(out, ')');
}

const char *sr_ukind_name(int k) {
  switch (k) {
  case SR_UK_MAX: return "max";
  case SR_UK_MIN: return "min";
  default: return "sum";
  }
}

const char *sr_ukind_str(int k) {
  switch (k) {
  case SR_UK_SUM: return "UnreducedKind.sum";
  case SR_UK_MAX: return "UnreducedKind.max";
  case SR_UK_MIN: return "UnreducedKind.min";
  default: return "None";
  }
}

static void name_set(SrBuf *out, const char **names, int n) {
  sr_buf_putc(out, '{');
  for (int i = 0; i < n; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_py_str_repr(out, names[i], strlen(names[i]));
  }
  sr_buf_putc(out, '}');
}

void sr_spec_repr(SrBuf *out, const SrSpec *s) {
  sr_buf_puts(out, "P(");
  for (int i = 0; i < s->n; i++) {
    if (i) sr_buf_puts(out, ", ");
    const SrSpecEntry *e = &s->e[i];
    if (e->n == 0) {
      sr_buf_puts(out, "None");
    } else if (e->n == 1 && e->names[0] == SR_SPEC_UNCONSTRAINED) {
      sr_buf_puts(out, "UNCONSTRAINED");
    } else if (e->n == 1) {
      sr_py_str_repr(out, e->names[0], strlen(e->names[0]));
    } else {
      sr_buf_putc(out, '(');
      for (int j = 0; j < e->n; j++) {
        if (j) sr_buf_puts(out, ", ");
        sr_py_str_repr(out, e->names[j], strlen(e->names[j]));
      }
      sr_buf_putc(out, ')');
    }
  }
  int extra = s->nunreduced || s->nreduced;
  /* a 1-tuple keeps its trailing comma only when nothing follows it */
  if (s->n == 1 && !extra) sr_buf_putc(out, ',');
  if (s->n && extra) sr_buf_puts(out, ", ");
  if (s->nunreduced) {
    sr_buf_puts(out, "unreduced=");
    name_set(out, s->unreduced, s->nunreduced);
  }
  if (s->nreduced) {
    if (s->nunreduced) sr_buf_puts(out, ", ");
    sr_buf_puts(out, "reduced=");
    name_set(out, s->reduced, s->nreduced);
  }
  if (s->nunreduced) sr_buf_printf(out, ", unreduced_kind=%s", sr_ukind_name(s->ukind));
  sr_buf_putc(out, ')');
}

void sr_sharding_repr(SrBuf *out, const SrMesh *m, const SrSpec *s, const char *memory_kind) {
  sr_buf_puts(out, "NamedSharding(mesh=");
  sr_mesh_str(out, m);
  sr_buf_puts(out, ", spec=");
  sr_spec_repr(out, s);
  if (memory_kind) sr_buf_printf(out, ", memory_kind=%s", memory_kind);
  sr_buf_putc(out, ')');
}

/* type.c: hash-consed types and their printed forms. */
#include "ir/type.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"
#include "util/mem.h"

static const SrType **table;
static size_t tcap, tcount;
static SrArena *types_arena;

/* Hashing a word at a time: every type an equation makes passes here. */
static inline uint64_t mix(uint64_t h, uint64_t x) {
  h = (h ^ x) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

_Static_assert(SR_MAX_DIM_AXES <= 7, "a dim's axes and their count fit in a word");

static uint32_t hash_builder(const SrTypeBuilder *b) {
  uint64_t h = SR_HASH_INIT;
  h = mix(h, (uint64_t)b->dtype | (uint64_t)b->weak << 16 | (uint64_t)b->ukind << 24 | (uint64_t)b->ndim << 32 | (uint64_t)b->ref << 40);
  h = mix(h, (uintptr_t)b->mem);
  h = mix(h, (uintptr_t)b->named);
  h = mix(h, (uint64_t)b->unreduced | (uint64_t)b->reduced << 32);
  h = mix(h, b->varying);
  h = mix(h, (uintptr_t)b->mesh);
  for (int i = 0; i < b->ndim; i++) {
    const SrDim *d = &b->dims[i];
    uint64_t ax = d->nax; /* the unused slots of ax[] are zero */
    for (int k = 0; k < SR_MAX_DIM_AXES; k++) ax |= (uint64_t)d->ax[k] << (8 * k + 8);
    h = mix(h, (uint64_t)d->size);
    h = mix(h, (uintptr_t)d->sym);
    h = mix(h, ax);
  }
  return (uint32_t)(h ^ (h >> 32));
}

static int dims_equal(const SrDim *a, const SrDim *b, int n) {
  for (int i = 0; i < n; i++)
    if (a[i].size != b[i].size || a[i].sym != b[i].sym || a[i].nax != b[i].nax ||
        memcmp(a[i].ax, b[i].ax, a[i].nax) != 0)
      return 0;
  return 1;
}

static int matches(const SrType *t, const SrTypeBuilder *b) {
  return t->dtype == b->dtype && t->weak == b->weak && t->ukind == b->ukind &&
         t->ndim == b->ndim && t->ref == b->ref && t->mem == b->mem && t->named == b->named && t->unreduced == b->unreduced &&
         t->reduced == b->reduced && t->varying == b->varying && t->mesh == b->mesh &&
         dims_equal(t->dims, b->dims, b->ndim);
}

static void grow(void) {
  size_t n = tcap ? tcap * 2 : 4096;
  const SrType **t = sr_xcalloc(n, sizeof *t);
  for (size_t i = 0; i < tcap; i++) {
    if (!table[i]) continue;
    size_t j = table[i]->hash & (n - 1);
    while (t[j]) j = (j + 1) & (n - 1);
    t[j] = table[i];
  }
  free(table);
  table = t;
  tcap = n;
}

static int is_shape(const SrMesh *m) {
  if (!m->abstract || m->device_fields || m->devices) return 0;
  for (int i = 0; i < m->n; i++)
    if (m->types[i] != SR_AXIS_EXPLICIT) return 0;
  return 1;
}

int sr_type_drop_unit_axes;

void sr_type_set_remove_size_one(int on) { sr_type_drop_unit_axes = on != 0; }
int sr_type_remove_size_one(void) { return sr_type_drop_unit_axes; }

/* the axes of size 1 out of b */
static void drop_size_one(SrTypeBuilder *b) {
  const SrMesh *m = b->mesh;
  SrAxes ones = 0;
  for (int a = 0; a < m->n; a++)
    if (m->sizes[a] == 1) ones |= 1u << a;
  if (!ones) return;
  for (int i = 0; i < b->ndim; i++) {
    SrDim *d = &b->dims[i];
    int n = 0;
    for (int k = 0; k < d->nax; k++)
      if (!(ones & (1u << d->ax[k]))) d->ax[n++] = d->ax[k];
    d->nax = (uint8_t)n;
  }
  b->unreduced &= ~ones;
  b->reduced &= ~ones;
  b->varying &= ~ones;
}

const SrType *sr_type_get(const SrTypeBuilder *b0) {
  /* a copy to canonicalize: the fields and the ndim dims used */
  SrTypeBuilder b;
  memcpy(&b, b0, offsetof(SrTypeBuilder, dims) + (size_t)b0->ndim * sizeof(SrDim));
  if (sr_type_drop_unit_axes && b.mesh) drop_size_one(&b);
  /* canonical form: no mesh when nothing names an axis; no kind when
     nothing is unreduced; unused axis slots zeroed */
  int named = b.unreduced || b.reduced || b.varying;
  for (int i = 0; i < b.ndim; i++) {
    if (b.dims[i].nax) named = 1;
    memset(b.dims[i].ax + b.dims[i].nax, 0, SR_MAX_DIM_AXES - b.dims[i].nax);
  }
  if (!named) b.mesh = NULL;
  /* a type names its axes on the mesh's shape (mesh.h), whatever mesh
     the builder was given */
  if (b.mesh && !is_shape(b.mesh)) b.mesh = sr_mesh_shape(b.mesh);
  if (!b.unreduced) b.ukind = SR_UK_NONE;
  else if (b.ukind == SR_UK_NONE) b.ukind = SR_UK_SUM;

  if (tcount * 2 >= tcap) grow();
  uint32_t h = hash_builder(&b);
  size_t j = h & (tcap - 1);
  while (table[j]) {
    if (table[j]->hash == h && matches(table[j], &b)) return table[j];
    j = (j + 1) & (tcap - 1);
  }
  if (!types_arena) types_arena = sr_arena_new();
  SrType *t = sr_arena_zalloc(types_arena, sizeof *t + (size_t)b.ndim * sizeof(SrDim));
  t->hash = h;
  t->dtype = b.dtype;
  t->weak = b.weak;
  t->ukind = b.ukind;
  t->ndim = b.ndim;
  t->ref = b.ref;
  t->mem = b.mem;
  t->named = b.named;
  t->unreduced = b.unreduced;
  t->reduced = b.reduced;
  t->varying = b.varying;
  t->mesh = b.mesh;
  memcpy(t->dims, b.dims, (size_t)b.ndim * sizeof(SrDim));
  table[j] = t;
  tcount++;
  return t;
}

void sr_type_builder(SrTypeBuilder *b, const SrType *t) {
  memset(b, 0, sizeof *b);
  b->dtype = t->dtype;
  b->weak = t->weak;
  b->ukind = t->ukind;
  b->ndim = t->ndim;
  b->ref = t->ref;
  b->mem = t->mem;
  b->named = t->named;
  b->unreduced = t->unreduced;
  b->reduced = t->reduced;
  b->varying = t->varying;
  b->mesh = t->mesh;
  memcpy(b->dims, t->dims, (size_t)t->ndim * sizeof(SrDim));
}

const SrType *sr_type_array(SrDtype dt, int ndim, const int64_t *shape) {
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = dt;
  b.ndim = (uint8_t)ndim;
  for (int i = 0; i < ndim; i++) b.dims[i].size = shape[i];
  return sr_type_get(&b);
}

const SrType *sr_type_scalar(SrDtype dt) { return sr_type_array(dt, 0, NULL); }

const SrType *sr_type_with_dtype(const SrType *t, SrDtype dt) {
  if (t->dtype == dt) return t;
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.dtype = dt;
  return sr_type_get(&b);
}

const SrType *sr_type_with_weak(const SrType *t, int weak) {
  if (t->weak == weak) return t;
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.weak = (uint8_t)weak;
  return sr_type_get(&b);
}

const SrType *sr_type_strip_sharding(const SrType *t) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.unreduced = b.reduced = b.varying = 0;
  for (int i = 0; i < b.ndim; i++) b.dims[i].nax = 0;
  b.mesh = NULL;
  return sr_type_get(&b);
}

/* A zero size makes the count 0 whatever the others are, as numpy has it
   (np.zeros((2**62, 4, 0)) is fine), so it is looked for first. */
int64_t sr_shape_numel(int ndim, const int64_t *shape) {
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) return -1;
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    if (__builtin_mul_overflow(n, shape[i], &n)) return -1;
  return n;
}

int64_t sr_type_numel(const SrType *t) {
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  return sr_shape_numel(t->ndim, shape);
}

/* The zero sizes are left out: numpy would allow (2**62, 4, 0), but the
   kernels' strides and partial products must all fit in int64. */
int sr_type_too_big(const SrType *t) {
  int64_t n = (int64_t)sr_dtype_info(t->dtype)->size;
  for (int i = 0; i < t->ndim; i++) {
    int64_t d = t->dims[i].size;
    if (d < 0) return 0; /* symbolic: no size to check */
    if (d && __builtin_mul_overflow(n, d, &n)) return 1;
  }
  return 0;
}

SrAxes sr_type_sharded_axes(const SrType *t) {
  SrAxes a = 0;
  for (int i = 0; i < t->ndim; i++) a |= sr_dim_axes(&t->dims[i]);
  return a;
}

int sr_type_equal_mod_mesh(const SrType *a, const SrType *b) {
  if (a == b) return 1;
  if (a->dtype != b->dtype || a->weak != b->weak || a->ukind != b->ukind ||
      a->ndim != b->ndim || a->ref != b->ref || a->mem != b->mem || a->named != b->named)
    return 0;
  if (a->mesh == b->mesh)
    return a->unreduced == b->unreduced && a->reduced == b->reduced &&
           a->varying == b->varying && dims_equal(a->dims, b->dims, a->ndim);
  /* different meshes: compare the axis names */
  return strcmp(sr_type_short(a), sr_type_short(b)) == 0;
}

static void suffix_entry(SrBuf *out, int *first, const char *prefix, const SrMesh *m,
                         SrAxes axes) {
  if (!axes) return;
  sr_buf_puts(out, *first ? "{" : ", ");
  *first = 0;
  sr_buf_puts(out, prefix);
  sr_axes_suffix_str(out, m, axes);
}

static void type_str(SrBuf *out, const SrType *t, int short_dtype);

/* AbstractRef.str_short: Ref{inner} */
void sr_type_str(SrBuf *out, const SrType *t, int short_dtype) {
  if (!t->ref) {
    type_str(out, t, short_dtype);
    return;
  }
  sr_buf_puts(out, "Ref{");
  type_str(out, t, short_dtype);
  sr_buf_putc(out, '}');
}

const SrType *sr_type_ref(const SrType *t) { return t->ref ? t : sr_type_ref_kind(t, 1); }

const SrType *sr_type_ref_kind(const SrType *t, int k) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.ref = (uint8_t)k;
  return sr_type_get(&b);
}

const SrType *sr_type_deref(const SrType *t) {
  if (!t->ref) return t;
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.ref = 0;
  return sr_type_get(&b);
}

static void type_str(SrBuf *out, const SrType *t, int short_dtype) {
  const SrDtypeInfo *di = sr_dtype_info(t->dtype);
  sr_buf_puts(out, short_dtype ? di->short_name : di->name);
  if (di->name[0] == '*') return; /* an old printer's unknown type */
  if (!strcmp(di->name, "Tok") && !t->ndim) return; /* core.AbstractToken's str_short */
  if (t->mem) {
    sr_buf_putc(out, '<');
    sr_buf_puts(out, t->mem);
    sr_buf_putc(out, '>');
  }
  sr_buf_putc(out, '[');
  for (int i = 0; i < t->ndim; i++) {
    const SrDim *d = &t->dims[i];
    if (i) sr_buf_putc(out, ',');
    if (d->sym)
      sr_buf_puts(out, d->sym);
    else
      sr_buf_printf(out, "%lld", (long long)d->size);
    if (d->nax) {
      sr_buf_putc(out, '@');
      if (d->nax > 1) sr_buf_putc(out, '(');
      for (int j = 0; j < d->nax; j++) {
        if (j) sr_buf_putc(out, ',');
        sr_buf_puts(out, t->mesh->names[d->ax[j]]);
      }
      if (d->nax > 1) sr_buf_putc(out, ')');
    }
  }
  if (t->named) {
    sr_buf_putc(out, ';');
    sr_buf_puts(out, t->named);
  }
  sr_buf_putc(out, ']');
  int first = 1;
  const char *u = t->ukind == SR_UK_MAX ? "U_max:" : t->ukind == SR_UK_MIN ? "U_min:" : "U:";
  suffix_entry(out, &first, "V:", t->mesh, t->varying);
  suffix_entry(out, &first, u, t->mesh, t->unreduced);
  suffix_entry(out, &first, "R:", t->mesh, t->reduced);
  if (!first) sr_buf_putc(out, '}');
}

const char *sr_type_short(const SrType *t) {
  if (!t->short_str) {
    SrBuf b = SR_BUF_INIT;
    sr_type_str(&b, t, 1);
    ((SrType *)t)->short_str = sr_buf_steal(&b);
  }
  return t->short_str;
}

void sr_type_long(SrBuf *out, const SrType *t) {
  if (t->weak && !t->ref) sr_buf_putc(out, '~');
  sr_type_str(out, t, 0);
}

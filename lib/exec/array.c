/* array.c: buffers, layouts and arrays. */
#include "exec/array.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/bufpool.h"
#include "util/mem.h"

/* ---- buffers ---- */

/* Owners are one allocation: the header, padding to 64 bytes, the data.
   Freed owners go back to the pool (exec/bufpool.h) for reuse by size. */
#define BUF_HEAD 64

static size_t live_bytes, peak_bytes;

static size_t alloc_size(size_t nbytes) { return BUF_HEAD + ((nbytes + 63) & ~(size_t)63); }

/* A buffer of 4 MiB or more starts on a huge page and asks for
   transparent huge pages (as numpy does for its big arrays): a page fault
   per 2 MiB instead of per 4 KiB when it is first written, and few TLB
   misses when a gemm packs it. */
enum { BIG_BUFFER = 4 << 20, HUGE_ALIGN = 2 << 20 };

static SrBuffer *big_alloc(size_t total) {
  if (total < BIG_BUFFER) return aligned_alloc(64, total);
  void *p = NULL;
  if (posix_memalign(&p, HUGE_ALIGN, total) != 0) return NULL;
  sr_mem_huge(p, total);
  return p;
}

/* NULL when out of memory.  A request past what the process may get
   (sr_mem_limit) is refused without trying: with overcommit malloc would
   grant it, and touching it would drive the machine into swap or the OOM
   killer. */
static SrBuffer *buffer_alloc(size_t nbytes) {
  if (nbytes > sr_mem_limit()) return NULL;
  size_t total = alloc_size(nbytes);
  SrBuffer *b = sr_bufpool_take(total);
  sr_bufpool_count(!b);
  if (!b) {
    b = big_alloc(total);
    if (!b) return NULL;
  }
  b->rc = 1;
  b->nbytes = nbytes;
  b->data = (char *)b + BUF_HEAD;
  b->base = NULL;
  live_bytes += nbytes;
  if (live_bytes > peak_bytes) peak_bytes = live_bytes;
  return b;
}

SrBuffer *sr_buffer_try(size_t nbytes) { return buffer_alloc(nbytes); }

SrBuffer *sr_buffer_new(size_t nbytes) {
  SrBuffer *b = buffer_alloc(nbytes);
  if (!b) sr_oom();
  return b;
}

SrBuffer *sr_buffer_zeros(size_t nbytes) {
  SrBuffer *b = sr_buffer_new(nbytes);
  memset(b->data, 0, nbytes);
  return b;
}

/* The kept zeros: a few sizes, the least recently used replaced.  Below
   ZEROS_KEPT_MIN a fill costs less than keeping the memory. */
enum { ZEROS_KEPT = 4, ZEROS_KEPT_MIN = 1 << 20 };
static SrBuffer *zeros_kept[ZEROS_KEPT];

SrBuffer *sr_buffer_zeros_shared(size_t nbytes) {
  if (nbytes < ZEROS_KEPT_MIN) {
    SrBuffer *b = buffer_alloc(nbytes);
    if (b) memset(b->data, 0, nbytes);
    return b;
  }
  int i = 0;
  while (i < ZEROS_KEPT - 1 && zeros_kept[i] && zeros_kept[i]->nbytes != nbytes) i++;
  SrBuffer *b = zeros_kept[i];
  if (!b || b->nbytes != nbytes) {
    b = buffer_alloc(nbytes);
    if (!b) return NULL;
    memset(b->data, 0, nbytes);
    sr_buffer_unref(zeros_kept[i]); /* the slot found, else the last: the oldest */
  }
  memmove(zeros_kept + 1, zeros_kept, (size_t)i * sizeof *zeros_kept);
  zeros_kept[0] = b;
  return sr_buffer_ref(b);
}

SrBuffer *sr_buffer_copy(const SrBuffer *src) {
  SrBuffer *b = sr_buffer_new(src->nbytes);
  memcpy(b->data, src->data, src->nbytes);
  return b;
}

SrBuffer *sr_buffer_view(SrBuffer *base, size_t off, size_t nbytes) {
  if (off == 0 && nbytes == base->nbytes) return sr_buffer_ref(base);
  SrBuffer *owner = base->base ? base->base : base;
  SrBuffer *v = sr_xmalloc(sizeof *v);
  v->rc = 1;
  v->nbytes = nbytes;
  v->data = (char *)base->data + off;
  v->base = sr_buffer_ref(owner);
  return v;
}

void sr_buffer_unref(SrBuffer *b) {
  if (!b || --b->rc > 0) return;
  if (b->base) {
    sr_buffer_unref(b->base);
    free(b);
    return;
  }
  live_bytes -= b->nbytes;
  sr_bufpool_put(b, alloc_size(b->nbytes));
}

void sr_buffer_stats(size_t *live, size_t *peak) {
  if (live) *live = live_bytes;
  if (peak) *peak = peak_bytes;
}

void sr_buffer_stats_reset_peak(void) { peak_bytes = live_bytes; }

/* ---- meshes ---- */

int64_t sr_mesh_stride(const SrMesh *m, int axis) {
  int64_t s = 1;
  for (int i = m->n - 1; i > axis; i--) s *= m->sizes[i];
  return s;
}

int64_t sr_mesh_coord(const SrMesh *m, int pos, int axis) {
  return (pos / sr_mesh_stride(m, axis)) % m->sizes[axis];
}

/* ---- layouts ---- */

size_t sr_elem_size(SrDtype dt) {
  const SrDtypeInfo *d = sr_dtype_info(dt);
  return d->size;
}

const SrType *sr_layout_of_type(const SrType *t) {
  if (!t->weak && !t->varying) return t;
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.weak = 0;
  b.varying = 0;
  return sr_type_get(&b);
}

int sr_layout_same(const SrType *a, const SrType *b) {
  if (a == b) return 1;
  if (a->ndim != b->ndim || a->unreduced != b->unreduced) return 0;
  if (a->unreduced && a->ukind != b->ukind) return 0;
  for (int i = 0; i < a->ndim; i++) {
    const SrDim *x = &a->dims[i], *y = &b->dims[i];
    if (x->size != y->size || x->nax != y->nax) return 0;
    for (int k = 0; k < x->nax; k++)
      if (x->ax[k] != y->ax[k]) return 0;
  }
  return 1;
}

int64_t sr_layout_splits(const SrType *l, int dim) {
  int64_t s = 1;
  const SrDim *d = &l->dims[dim];
  for (int k = 0; k < d->nax; k++) s *= l->mesh->sizes[d->ax[k]];
  return s;
}

const SrType *sr_layout_even(const SrType *l) {
  int uneven = 0;
  for (int i = 0; i < l->ndim && !uneven; i++) uneven = l->dims[i].nax && l->dims[i].size % sr_layout_splits(l, i);
  if (!uneven) return l;
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  for (int i = 0; i < b.ndim; i++)
    if (b.dims[i].nax && b.dims[i].size % sr_layout_splits(l, i)) b.dims[i].nax = 0;
  return sr_type_get(&b);
}

void sr_array_note_uneven(SrArray *a, const SrType *l, const SrVal *sh) {
  if (!a || a->sharding || a->rc != 1 || sr_layout_even(l) == l || !sh || sh->kind != SR_V_SHARDING ||
      sh->sh.mesh->abstract || a->mesh != sh->sh.mesh)
    return;
  a->sharding = sr_sharding_val(NULL, sh->sh.mesh, sh->sh.spec, sh->sh.memory_kind);
}

void sr_layout_shard_shape(const SrType *l, int64_t *shape) {
  for (int i = 0; i < l->ndim; i++) shape[i] = l->dims[i].size / sr_layout_splits(l, i);
}

int64_t sr_layout_shard_numel(const SrType *l) {
  int64_t n = 1;
  for (int i = 0; i < l->ndim; i++) n *= l->dims[i].size / sr_layout_splits(l, i);
  return n;
}

int64_t sr_layout_block_index(const SrType *l, const SrMesh *m, int pos, int dim) {
  const SrDim *d = &l->dims[dim];
  int64_t idx = 0;
  for (int k = 0; k < d->nax; k++) idx = idx * m->sizes[d->ax[k]] + sr_mesh_coord(m, pos, d->ax[k]);
  return idx;
}

void sr_layout_block_start(const SrType *l, const SrMesh *m, int pos, int64_t *start) {
  for (int i = 0; i < l->ndim; i++) {
    if (!l->dims[i].nax || !m) {
      start[i] = 0;
      continue;
    }
    int64_t per = l->dims[i].size / sr_layout_splits(l, i);
    start[i] = sr_layout_block_index(l, m, pos, i) * per;
  }
}

/* ---- arrays ---- */

/* Array headers are reused too, one free list per device count (a loop
   makes and drops thousands of them). */
#define ARRAY_LISTS 65
static SrArray *free_arrays[ARRAY_LISTS];
static int nfree_arrays[ARRAY_LISTS];

SrArray *sr_array_new(const SrType *type, const SrType *layout, const SrMesh *mesh) {
  int n = sr_mesh_ndev(mesh);
  SrArray *a;
  if (n < ARRAY_LISTS && free_arrays[n]) {
    a = free_arrays[n];
    free_arrays[n] = (SrArray *)a->shard[0];
    nfree_arrays[n]--;
    memset(a, 0, sizeof *a + (size_t)n * sizeof(SrBuffer *));
  } else {
    a = sr_xcalloc(1, sizeof *a + (size_t)n * sizeof(SrBuffer *));
  }
  a->rc = 1;
  a->type = type;
  a->layout = layout ? layout : sr_layout_of_type(type);
  a->mesh = mesh;
  a->ndev = n;
  return a;
}

void sr_array_unref(SrArray *a) {
  if (!a || --a->rc > 0) return;
  for (int i = 0; i < a->ndev; i++) sr_buffer_unref(a->shard[i]);
  sr_unref(a->sharding);
  int n = a->ndev;
  if (n < ARRAY_LISTS && nfree_arrays[n] < 256) {
    a->shard[0] = (SrBuffer *)free_arrays[n];
    free_arrays[n] = a;
    nfree_arrays[n]++;
    return;
  }
  free(a);
}

SrArray *sr_array_retype(SrArray *a, const SrType *type, const SrType *layout) {
  SrArray *r = sr_array_new(type, layout ? layout : a->layout, a->mesh);
  for (int i = 0; i < a->ndev; i++) r->shard[i] = sr_buffer_ref(a->shard[i]);
  if (a->local && type->ndim == a->type->ndim) {
    r->local = 1;
    memcpy(r->m2m, a->m2m, sizeof r->m2m);
  }
  r->committed = a->committed;
  return r;
}

size_t sr_array_shard_bytes(const SrArray *a) {
  return (size_t)sr_layout_shard_numel(a->layout) * sr_elem_size(a->type->dtype);
}

SrArray *sr_array_from_data(const SrType *t, const SrMesh *mesh, const void *data) {
  const SrType *l = sr_layout_of_type(t);
  SrArray *a = sr_array_new(t, l, mesh);
  size_t n = (size_t)sr_type_numel(t) * sr_elem_size(t->dtype);
  SrBuffer *b = sr_buffer_new(n);
  if (n) memcpy(b->data, data, n);
  for (int i = 0; i < a->ndev; i++) a->shard[i] = sr_buffer_ref(b);
  sr_buffer_unref(b);
  return a;
}

/* layout.c: device-local layouts (see layout.h). */
#include "exec/layout.h"

#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "exec/kern.h"
#include "ir/jaxpr.h"
#include "prims/prim.h"
#include "check/rule.h"
#include "text/print_val.h"
#include "util/mem.h"

int sr_local_is_row_major(int nd, const uint8_t *m2m) {
  if (!m2m) return 1;
  for (int i = 0; i < nd; i++)
    if (m2m[i] != i) return 0;
  return 1;
}

int sr_local_valid(int nd, const int64_t *m2m) {
  uint64_t seen = 0;
  if (nd > SR_MAX_RANK) return 0;
  for (int i = 0; i < nd; i++) {
    if (m2m[i] < 0 || m2m[i] >= nd || (seen >> m2m[i] & 1)) return 0;
    seen |= 1ull << m2m[i];
  }
  return 1;
}

void sr_local_strides(int nd, const int64_t *shape, const uint8_t *m2m, int64_t *strides) {
  int64_t s = 1;
  for (int k = nd - 1; k >= 0; k--) {
    int d = m2m ? m2m[k] : k;
    strides[d] = s;
    s *= shape[d];
  }
}

void sr_array_local(const SrArray *a, uint8_t *m2m) {
  int nd = a->type->ndim;
  for (int i = 0; i < nd; i++) m2m[i] = a->local ? a->m2m[i] : (uint8_t)i;
}

/* Where a copy of buffer b was made already: linear for a few distinct
   buffers, which is what meshes have in practice. */
typedef struct Seen {
  SrBuffer **from, **to;
  int n, cap;
} Seen;

static SrBuffer *seen_get(const Seen *s, const SrBuffer *b) {
  for (int i = 0; i < s->n; i++)
    if (s->from[i] == b) return s->to[i];
  return NULL;
}

static void seen_put(Seen *s, SrBuffer *from, SrBuffer *to) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->from = sr_xrealloc(s->from, (size_t)s->cap * sizeof *s->from);
    s->to = sr_xrealloc(s->to, (size_t)s->cap * sizeof *s->to);
  }
  s->from[s->n] = from;
  s->to[s->n++] = to;
}

SrArray *sr_array_relayout(SrArray *a, const uint8_t *m2m) {
  int nd = a->type->ndim;
  int to_default = sr_local_is_row_major(nd, m2m);
  int from_default = !a->local || sr_local_is_row_major(nd, a->m2m);
  if (to_default && from_default) {
    if (!a->local) return sr_array_ref(a);
  } else if (!to_default && !from_default && memcmp(a->m2m, m2m, (size_t)nd) == 0) {
    return sr_array_ref(a);
  }
  SrArray *r = sr_array_retype(a, a->type, a->layout);
  r->local = (uint8_t)!to_default;
  if (!to_default) memcpy(r->m2m, m2m, (size_t)nd);
  r->committed = a->committed;
  r->sharding = a->sharding ? sr_ref(a->sharding) : NULL;
  /* rank 0 and 1, and a copy between equal orders: the same bytes */
  if (nd <= 1 || (to_default && from_default)) return r;
  int64_t shape[SR_MAX_RANK], ss[SR_MAX_RANK], ds[SR_MAX_RANK];
  sr_layout_shard_shape(a->layout, shape);
  sr_local_strides(nd, shape, from_default ? NULL : a->m2m, ss);
  sr_local_strides(nd, shape, to_default ? NULL : m2m, ds);
  size_t es = sr_elem_size(a->type->dtype);
  Seen seen = {0};
  for (int p = 0; p < r->ndev; p++) {
    SrBuffer *b = a->shard[p];
    if (!b) continue;
    SrBuffer *c = seen_get(&seen, b);
    if (!c) {
      c = sr_buffer_new(b->nbytes);
      sr_kern_copy_general(es, nd, shape, b->data, 0, ss, c->data, 0, ds);
      seen_put(&seen, b, c);
    } else {
      sr_buffer_ref(c);
    }
    sr_buffer_unref(r->shard[p]);
    r->shard[p] = c;
  }
  free(seen.from);
  free(seen.to);
  return r;
}

void sr_local_repr(SrBuf *out, int nd, const uint8_t *m2m) {
  sr_buf_puts(out, "Layout(major_to_minor=(");
  for (int i = 0; i < nd; i++) sr_buf_printf(out, i ? ", %d" : "%d", m2m ? m2m[i] : i);
  sr_buf_puts(out, nd == 1 ? ",), tiling=None, sub_byte_element_size_in_bits=0)" : "), tiling=None, sub_byte_element_size_in_bits=0)");
}

/* The ints of "(1, 0)" at s; returns how many, -1 if malformed. */
static int parse_ints(const char *s, const char *end, int64_t *out, int max) {
  while (s < end && *s == ' ') s++;
  if (s >= end || *s != '(') return -1;
  s++;
  int n = 0;
  for (;;) {
    while (s < end && (*s == ' ' || *s == ',')) s++;
    if (s < end && *s == ')') return n;
    if (s >= end || *s < '0' || *s > '9' || n >= max) return -1;
    int64_t v = 0;
    while (s < end && *s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    out[n++] = v;
  }
}

int sr_local_parse(const SrVal *v, int nd, uint8_t *m2m) {
  if (!v || v->kind == SR_V_NONE) return 0;
  int64_t ints[SR_MAX_RANK];
  int n = -1;
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    n = 0;
    for (int i = 0; i < v->seq.n && n < SR_MAX_RANK; i++) {
      if (v->seq.items[i]->kind != SR_V_INT) return -1;
      ints[n++] = v->seq.items[i]->i;
    }
  } else if (v->kind == SR_V_WORD || v->kind == SR_V_STR) {
    const char *s = v->str.s, *end = v->str.s + v->str.n;
    if (v->str.n == 4 && memcmp(s, "AUTO", 4) == 0) return 0;
    if (v->str.n == 4 && memcmp(s, "None", 4) == 0) return 0;
    static const char key[] = "major_to_minor=";
    const char *k = NULL;
    for (const char *p = s; p + sizeof key - 1 <= end && !k; p++)
      if (memcmp(p, key, sizeof key - 1) == 0) k = p + sizeof key - 1;
    if (!k) return -1;
    n = parse_ints(k, end, ints, SR_MAX_RANK);
  }
  if (n != nd || !sr_local_valid(n, ints)) return -1;
  for (int i = 0; i < n; i++) m2m[i] = (uint8_t)ints[i];
  return 1;
}

/* ---- Layout.AUTO ---- */

void sr_local_auto(const SrJaxpr *j, uint32_t arg, int nd, uint8_t *m2m) {
  for (int i = 0; i < nd; i++) m2m[i] = (uint8_t)i;
  if (nd < 2 || arg >= sr_nargs(j)) return;
  const SrVar *v = sr_args(j)[arg];
  int line = -1;
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *q = &j->eqns[k];
    for (uint32_t i = 0; i < q->nin; i++) {
      if (q->in[i] != v) continue;
      /* each use must read it along one dimension (its row's minor rule) */
      int d = q->prim->minor ? q->prim->minor(q, i, nd) : -1;
      if (d < 0 || (line >= 0 && line != d)) return;
      line = d;
    }
  }
  if (line < 0) return;
  int n = 0;
  for (int i = 0; i < nd; i++)
    if (i != line) m2m[n++] = (uint8_t)i;
  m2m[n] = (uint8_t)line;
}

/* ---- jit's in/out shardings and layouts ---- */

static const SrVal *param_item(const SrEvalEqn *e, const char *key, uint32_t i) {
  SrVal *v = sr_ev_param(e, key);
  return v && sr_is_seq(v) && (int)i < v->seq.n ? v->seq.items[i] : NULL;
}

static int is_text(const SrVal *v, const char *prefix) {
  size_t n = strlen(prefix);
  return v && (v->kind == SR_V_WORD || v->kind == SR_V_STR) && v->str.n >= n && memcmp(v->str.s, prefix, n) == 0;
}

static int specified(const SrVal *sh) { return sh && sh->kind != SR_V_NONE && !is_text(sh, "UnspecifiedValue"); }

/* The device of a SingleDeviceSharding's text, or -1. */
static int single_device(const SrVal *v) {
  if (!is_text(v, "SingleDeviceSharding(")) return -1;
  for (size_t k = 0; k + 3 < v->str.n; k++)
    if (memcmp(v->str.s + k, "id=", 3) == 0) return atoi(v->str.s + k + 3);
  return -1;
}

/* a moved to the sharding param sh (a new reference; a itself when sh is
   unspecified or a already has it). */
/* core.update_aval_with_sharding for a jit's result: the type its
   out_sharding's layout l gives on mesh m, only its Explicit axes named
   (a type names no Auto or Manual axis), base's weak type kept. */
static const SrType *out_type_of_layout(const SrType *base, const SrType *l, const SrMesh *m) {
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

static SrArray *to_sharding(SrEvalCtx *cx, SrArray *a, const SrVal *sh, int output) {
  if (!specified(sh)) return sr_array_ref(a);
  int dev = single_device(sh);
  if (dev >= 0) {
    if ((!a->mesh && dev == 0) || (a->mesh && !a->mesh->n && sr_mesh_device(a->mesh, 0) == dev))
      return sr_array_ref(a);
    SrMesh dm = {0};
    dm.devices = &dev;
    const SrMesh *m = sr_mesh_intern(&dm);
    const SrType *l = sr_layout_of_type(sr_type_strip_sharding(sr_type_with_weak(a->type, 0)));
    return sr_redistribute_typed(cx, a, m, l, a->type);
  }
  if (sh->kind != SR_V_SHARDING) {
    sr_ev_err(cx, "TypeError", "jit: a sharding param that is not a sharding");
    return NULL;
  }
  const SrMesh *m = sh->sh.mesh;
  const SrMesh *shape = sr_mesh_shape(m);
  if (m->abstract || !m->devices) {
    if (cx->mesh && sr_mesh_shape(cx->mesh) == shape) m = cx->mesh;
    else if (a->mesh && sr_mesh_shape(a->mesh) == shape) m = a->mesh;
  }
  const SrType *l;
  if (sr_ev_layout_of_sharding(cx, a->type, sh, m, &l) < 0) return NULL;
  SrArray *r = sr_redistribute_typed(cx, a, m, sr_layout_even(l), output ? out_type_of_layout(a->type, l, m) : a->type);
  sr_array_note_uneven(r, l, sh);
  return r;
}

/* a laid out as the layout param lv says (AUTO: as sr_local_auto chooses
   for input `arg` of j; None: as it is, or row-major for an output). */
static SrArray *to_layout(SrEvalCtx *cx, SrArray *a, const SrVal *lv, const SrJaxpr *j, int arg, int output) {
  int nd = a->type->ndim;
  uint8_t m2m[SR_MAX_RANK];
  int k = sr_local_parse(lv, nd, m2m);
  if (k < 0) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, lv);
    sr_ev_err(cx, "ValueError", "jit: %s is not a layout of rank %d", sr_buf_str(&b), nd);
    sr_buf_free(&b);
    return NULL;
  }
  if (k > 0) return sr_array_relayout(a, m2m);
  if (is_text(lv, "AUTO") && !output && j) {
    sr_local_auto(j, (uint32_t)arg, nd, m2m);
    return sr_array_relayout(a, m2m);
  }
  return output ? sr_array_row_major(a) : sr_array_ref(a);
}

int sr_ev_call_inputs(SrEvalCtx *cx, const SrEvalEqn *e, const SrJaxpr *j, SrArray **in) {
  for (uint32_t i = 0; i < e->nin; i++) {
    SrArray *s = to_sharding(cx, in[i], param_item(e, "in_shardings", i), 0);
    if (!s) return -1;
    SrArray *l = to_layout(cx, s, param_item(e, "in_layouts", i), j, (int)i, 0);
    sr_array_unref(s);
    if (!l) return -1;
    sr_array_unref(in[i]);
    in[i] = l;
  }
  return 0;
}

int sr_ev_call_outputs(SrEvalCtx *cx, const SrEvalEqn *e) {
  int committed = 0;
  SrVal *cm = sr_ev_param(e, "ctx_mesh");
  if (cm && cm->kind == SR_V_MESH && cm->mesh->n) committed = 1;
  for (uint32_t i = 0; i < e->nin && !committed; i++)
    committed = e->in[i]->committed || specified(param_item(e, "in_shardings", i));
  for (uint32_t i = 0; i < e->nout && !committed; i++)
    committed = e->out[i]->ndev > 1 || specified(param_item(e, "out_shardings", i));
  for (uint32_t i = 0; i < e->nout; i++) {
    SrArray *s = to_sharding(cx, e->out[i], param_item(e, "out_shardings", i), 1);
    if (!s) return -1;
    SrArray *l = to_layout(cx, s, param_item(e, "out_layouts", i), NULL, 0, 1);
    sr_array_unref(s);
    if (!l) return -1;
    if (l->committed != committed) {
      /* the flag is the result's own: not an input's that passed through */
      SrArray *c = l->rc > 1 ? sr_array_retype(l, l->type, l->layout) : sr_array_ref(l);
      if (c != l && l->sharding) c->sharding = sr_ref(l->sharding);
      sr_array_unref(l);
      l = c;
      l->committed = (uint8_t)committed;
    }
    sr_array_unref(e->out[i]);
    e->out[i] = l;
  }
  return 0;
}

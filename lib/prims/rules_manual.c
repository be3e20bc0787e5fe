/* rules_manual.c: type rules of manual mode -- shard_map, and the
 * collectives and casts that run inside it (reference section 4).
 *
 * Inside a shard_map a value's type says, for each mesh axis the map is
 * manual over, how the devices along it relate: varying, invarying,
 * unreduced or reduced.  This is JAX's ManualAxisType (`aval.mat`).  In
 * this IR a type keeps one varying set and one unreduced and one reduced
 * set; the unreduced and reduced axes that the context makes Manual are the
 * mat's, the others belong to the explicit sharding.  Every collective
 * checks and moves axes between these states, with JAX's messages
 * (lax/parallel.py, core.py, shard_map.py).
 */
#include "prims/rule.h"

#include <stdlib.h>
#include <string.h>

#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"
#include "util/pyfmt.h"

void sr_rules_manual_init(void);

/* ---- axes, states and their text ---- */

/* The mesh a result is built on: the operand's, else the context's shape. */
static const SrMesh *work_mesh(SrTypeCtx *cx, const SrType *t) {
  if (t && t->mesh) return t->mesh;
  if (cx->mesh && cx->mesh->n) return sr_mesh_shape(cx->mesh);
  return NULL;
}

/* The axes of m that a mesh with axis types (a context) makes Manual. */
static SrAxes manual_of(const SrMesh *ctx, const SrMesh *m) {
  SrAxes s = 0;
  if (!m || !ctx) return 0;
  for (int i = 0; i < m->n; i++) {
    int j = sr_mesh_axis(ctx, m->names[i]);
    if (j >= 0 && ctx->types[j] == SR_AXIS_MANUAL) s |= 1u << i;
  }
  return s;
}

static SrAxes manual_in(SrTypeCtx *cx, const SrMesh *m) { return manual_of(cx->mesh, m); }

/* The same axes named on another mesh (names it lacks are dropped). */
static SrAxes rebase(SrAxes a, const SrMesh *from, const SrMesh *to) {
  if (from == to || !a) return a;
  SrAxes r = 0;
  for (int i = 0; from && to && i < from->n; i++) {
    if (!(a & (1u << i))) continue;
    int j = sr_mesh_axis(to, from->names[i]);
    if (j >= 0) r |= 1u << j;
  }
  return r;
}

/* A type's ManualAxisType: varying, and the Manual part of its unreduced
   and reduced sets. */
typedef struct Mat {
  SrAxes v, u, r;
  int ukind;
} Mat;

static Mat mat_of(SrTypeCtx *cx, const SrType *t) {
  SrAxes man = manual_in(cx, t->mesh);
  Mat m = {t->varying, t->unreduced & man, t->reduced & man, SR_UK_NONE};
  if (m.u) m.ukind = t->ukind;
  return m;
}

/* t on mesh m with a new mat; the explicit unreduced/reduced axes stay. */
static void builder_with_mat(SrTypeCtx *cx, SrTypeBuilder *b, const SrType *t, const SrMesh *m, Mat mt) {
  SrAxes man = manual_in(cx, m);
  sr_type_builder(b, t);
  b->mesh = m;
  b->varying = mt.v;
  b->unreduced = (t->unreduced & ~man) | mt.u;
  b->reduced = (t->reduced & ~man) | mt.r;
  b->ukind = mt.u ? mt.ukind : (b->unreduced ? t->ukind : SR_UK_NONE);
}

static const SrType *with_mat(SrTypeCtx *cx, const SrType *t, const SrMesh *m, Mat mt) {
  SrTypeBuilder b;
  builder_with_mat(cx, &b, t, m, mt);
  return sr_type_get(&b);
}

static void put_name(SrBuf *b, const char *s) { sr_py_str_repr(b, s, strlen(s)); }

/* repr(frozenset) of a set of axes, in mesh order: frozenset({'i', 'j'}),
   frozenset() */
static void put_frozenset(SrBuf *b, const SrMesh *m, SrAxes a) {
  if (!a || !m) {
    sr_buf_puts(b, "frozenset()");
    return;
  }
  sr_buf_puts(b, "frozenset({");
  int k = 0;
  for (int i = 0; i < m->n; i++) {
    if (!(a & (1u << i))) continue;
    if (k++) sr_buf_puts(b, ", ");
    put_name(b, m->names[i]);
  }
  sr_buf_puts(b, "})");
}

/* str(UnreducedKind): UnreducedKind.sum, or None */
static const char *ukind_str(int k) {
  switch (k) {
  case SR_UK_SUM: return "UnreducedKind.sum";
  case SR_UK_MAX: return "UnreducedKind.max";
  case SR_UK_MIN: return "UnreducedKind.min";
  default: return "None";
  }
}

/* Reports the message built in b (freeing it).  Returns -1. */
static int report(SrTypeCtx *cx, const char *exc, SrBuf *b) {
  sr_terr(cx, exc, "%s", sr_buf_str(b));
  sr_buf_free(b);
  return -1;
}

/* ---- axis-name params ---- */

#define MAX_NAMES 32

/* The axes a collective names, as written: `axes=('i', 'j')`,
   `axis_name=('i',)` or `axis_name=i`; old psum may also name positional
   (integer) axes. */
typedef struct Names {
  int n, npos;
  const char *name[MAX_NAMES]; /* interned; NULL for an integer entry */
  int64_t pos[MAX_NAMES];
} Names;

static int names_item(SrTypeCtx *cx, const SrRuleEqn *e, const SrVal *v, Names *an) {
  if (an->n == MAX_NAMES) return sr_terr(cx, "ValueError", "%s names too many axes", e->prim->name);
  if (v->kind == SR_V_STR || v->kind == SR_V_WORD) {
    an->name[an->n] = sr_intern(v->str.s, v->str.n);
    an->pos[an->n++] = 0;
    return 0;
  }
  if (v->kind == SR_V_INT) {
    an->name[an->n] = NULL;
    an->pos[an->n++] = v->i;
    an->npos++;
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, v);
  sr_terr(cx, "TypeError", "%s: %s is not a mesh axis name", e->prim->name, sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

static int read_names(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, Names *an) {
  memset(an, 0, sizeof *an);
  SrVal *v = sr_rparam(e, key);
  if (!v) return sr_terr(cx, "TypeError", "%s equation has no '%s' param", e->prim->name, key);
  if (v->kind == SR_V_NONE) return 0;
  if (sr_is_seq(v)) {
    for (int i = 0; i < v->seq.n; i++)
      if (names_item(cx, e, v->seq.items[i], an) < 0) return -1;
    return 0;
  }
  return names_item(cx, e, v, an);
}

static void put_names_item(SrBuf *b, const Names *an, int i) {
  if (an->name[i]) put_name(b, an->name[i]);
  else sr_buf_printf(b, "%lld", (long long)an->pos[i]);
}

/* repr of the names as a tuple, as written: ('i',), ('i', 0) */
static void put_names_tuple(SrBuf *b, const Names *an) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < an->n; i++) {
    if (i) sr_buf_puts(b, ", ");
    put_names_item(b, an, i);
  }
  sr_buf_puts(b, an->n == 1 ? ",)" : ")");
}

/* repr of set(names): {'i', 'j'} */
static void put_names_set(SrBuf *b, const Names *an) {
  if (!an->n) {
    sr_buf_puts(b, "set()");
    return;
  }
  sr_buf_putc(b, '{');
  for (int i = 0; i < an->n; i++) {
    if (i) sr_buf_puts(b, ", ");
    put_names_item(b, an, i);
  }
  sr_buf_putc(b, '}');
}

/* lax/parallel.py: _check_axis_names.  A named axis must be bound by an
   enclosing shard_map (Manual in the context); the names become axes of
   m. */
static int bind_names(SrTypeCtx *cx, const Names *an, const char *api, const SrMesh *m, SrAxes *out) {
  *out = 0;
  for (int i = 0; i < an->n; i++) {
    const char *n = an->name[i];
    if (!n) continue;
    int c = cx->mesh ? sr_mesh_axis(cx->mesh, n) : -1;
    int k = m ? sr_mesh_axis(m, n) : -1;
    if (c < 0 || k < 0 || cx->mesh->types[c] != SR_AXIS_MANUAL)
      return sr_terr(cx, "NameError",
                     "Found an unbound axis name: %s. To fix this, please call %s under `jax.shard_map`.", n, api);
    *out |= 1u << k;
  }
  return 0;
}

/* The product of the sizes of the named axes (lax/parallel.py:
   _axis_size); -1 when the mesh does not know them. */
static int64_t names_size(SrTypeCtx *cx, const Names *an) {
  int64_t n = 1;
  for (int i = 0; i < an->n; i++) {
    int c = an->name[i] && cx->mesh ? sr_mesh_axis(cx->mesh, an->name[i]) : -1;
    if (c < 0 || cx->mesh->sizes[c] <= 0) return -1;
    n *= cx->mesh->sizes[c];
  }
  return n;
}

/* core.py: check_unreduced_args (one argument, kind sum) */
static int check_unreduced_args(SrTypeCtx *cx, const char *name, const SrType *t, const Names *an, SrAxes ax) {
  Mat m = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (m.u & ax) {
    sr_buf_printf(&b, "%s cannot accept args which are unreduced. Got %s and axes=", name, sr_type_short(t));
    put_names_set(&b, an);
    return report(cx, "ValueError", &b);
  }
  if (m.u && m.ukind != SR_UK_SUM) {
    sr_buf_printf(&b, "%s cannot accept args with unreduced_kind=%s. Expected unreduced_kind=%s", name,
                  ukind_str(m.ukind), ukind_str(SR_UK_SUM));
    return report(cx, "ValueError", &b);
  }
  if (m.r & ax) {
    sr_buf_printf(&b, "%s cannot accept args which are reduced. Got %s and axes=", name, sr_type_short(t));
    put_names_set(&b, an);
    return report(cx, "ValueError", &b);
  }
  return 0;
}

/* lax/parallel.py: check_unreduced_kind */
static int check_unreduced_kind(SrTypeCtx *cx, const char *name, Mat m, int kind) {
  if (m.ukind == kind) return 0;
  return sr_terr(cx, "ValueError", "%s cannot accept args with unreduced_kind=%s. Expected unreduced_kind=%s", name,
                 ukind_str(m.ukind), ukind_str(kind));
}

/* lax/parallel.py: collective_vma_rule.  With check_vma the operand must
   vary over every named axis; the result varies as it does.  Without it
   nothing varies. */
static int collective_vma(SrTypeCtx *cx, const char *p, const Names *an, SrAxes ax, const SrType *t, SrAxes *out) {
  *out = 0;
  if (!cx->check_vma) return 0;
  if ((ax & t->varying) != ax || an->npos) {
    SrBuf b = SR_BUF_INIT;
    /* two spaces after "device-varying", as in JAX's source */
    sr_buf_printf(&b, "Collective %s must be applied to a device-varying  type, but got ", p);
    put_frozenset(&b, t->mesh, t->varying);
    sr_buf_puts(&b, " for collective acting over axis name ");
    put_names_tuple(&b, an);
    sr_buf_puts(&b, ". Please open an issue at https://github.com/jax-ml/jax/issues and as a temporary "
                    "workaround pass the check_vma=False argument to `jax.shard_map`");
    return report(cx, "ValueError", &b);
  }
  *out = t->varying;
  return 0;
}

/* Applies a rule to each operand in turn: the collectives and casts bind
   once per array (older psum bound all of them in one equation). */
typedef int (*OneRule)(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *in, const SrType **out);

static int each(SrTypeCtx *cx, const SrRuleEqn *e, OneRule f, const SrType **out) {
  if (e->nout != e->nin)
    return sr_terr(cx, "TypeError", "%s has %u operands but %u results; it maps each operand to one result",
                   e->prim->name, e->nin, e->nout);
  for (uint32_t i = 0; i < e->nin; i++)
    if (f(cx, e, e->in[i], &out[i]) < 0) return -1;
  return 0;
}

/* The numbers of operands and results an equation must have. */
static int arity_is(SrTypeCtx *cx, const SrRuleEqn *e, uint32_t nin, uint32_t nout) {
  if (e->nin == nin && e->nout == nout) return 0;
  return sr_terr(cx, "TypeError", "%s takes %u operand%s and gives %u result%s, but this equation has %u and %u",
                 e->prim->name, nin, nin == 1 ? "" : "s", nout, nout == 1 ? "" : "s", e->nin, e->nout);
}

/* A dimension param (all_gather_dimension...) checked against a rank. */
static int dim_param(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int limit, int64_t *d) {
  if (sr_rparam_int(cx, e, key, 1, d) < 0) return -1;
  if (*d < 0 || *d >= limit)
    return sr_terr(cx, "ValueError", "%s=%lld is out of range for a rank-%d operand", key, (long long)*d,
                   limit > 0 ? limit - 1 : 0);
  return 0;
}

/* ---- psum and the all-reduces ---- */

/* lax/parallel.py: _allreduce_effectful_abstract_eval -- psum, and pmax /
   pmin without check_vma.  Positional (integer) axes reduce dimensions;
   the result is a fresh type: it varies over nothing and is not unreduced
   or reduced. */
static int allreduce_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "psum", m, &ax) < 0) return -1;
  SrVal *groups = sr_rparam(e, "axis_index_groups");
  if (groups && groups->kind != SR_V_NONE && an.npos) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "axis_index_groups can only be used with reductions over named axes, but got: ");
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (check_unreduced_args(cx, "psum", t, &an, ax) < 0) return -1;
  SrAxes drop = 0;
  for (int i = 0; i < an.n; i++) {
    if (an.name[i]) continue;
    int64_t p = an.pos[i];
    if (p < 0 || p >= t->ndim || (drop & (1u << p))) {
      SrBuf b = SR_BUF_INIT;
      Names pos = {0};
      for (int k = 0; k < an.n; k++)
        if (!an.name[k]) pos.pos[pos.n++] = an.pos[k];
      if (p >= 0 && p < t->ndim) {
        sr_buf_puts(&b, "duplicate value in 'axes' of reduction: ");
        put_names_tuple(&b, &pos);
      } else {
        sr_buf_puts(&b, "reduction axes ");
        put_names_tuple(&b, &pos);
        sr_buf_puts(&b, " contains out-of-bounds indices for ");
        sr_type_long(&b, t);
        sr_buf_putc(&b, '.');
      }
      return report(cx, "ValueError", &b);
    }
    drop |= 1u << p;
  }
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.ndim = 0;
  for (int i = 0; i < t->ndim; i++)
    if (!(drop & (1u << i))) b.dims[b.ndim++] = t->dims[i];
  b.varying = b.unreduced = b.reduced = 0;
  b.ukind = SR_UK_NONE;
  b.weak = 0;
  *out = sr_type_get(&b);
  return 0;
}

/* lax/parallel.py: _psum_invariant_abstract_eval -- psum_invariant, and
   pmax / pmin with check_vma: varying over the axes becomes invarying. */
static int invariant_one(SrTypeCtx *cx, const SrRuleEqn *e, const char *name, const SrType *t,
                         const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "psum", m, &ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!(ax & mt.v)) {
    sr_buf_puts(&b, "psum is a variant->invariant collective. This means that the axis names mentioned in "
                    "`axes` passed to `psum` must be present in `jax.typeof(inp).mat.varying`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(inp).mat.varying=");
    put_frozenset(&b, m, mt.v);
    return report(cx, "ValueError", &b);
  }
  if (an.npos) {
    sr_buf_puts(&b, "psum_invariant does not accept integer axes. Got ");
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (check_unreduced_args(cx, name, t, &an, ax) < 0) return -1;
  mt.v &= ~ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

static int psum_invariant_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  return invariant_one(cx, e, "psum_invariant", t, out);
}

/* lax/parallel.py: _pmin_pmax_abstract_eval */
static int pmax_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  if (!cx->check_vma) return allreduce_one(cx, e, t, out);
  return invariant_one(cx, e, e->prim->id == SR_P_pmin ? "pmin" : "pmax", t, out);
}

static int type_psum(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) { return each(cx, e, allreduce_one, out); }
static int type_psum_invariant(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, psum_invariant_one, out);
}
static int type_pmax(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) { return each(cx, e, pmax_one, out); }

/* lax/parallel.py: _unreduced_psum_pmax_pmin_abstract_eval -- unreduced
   over the axes becomes invarying; the kind must be the reduction's. */
static int unreduced_reduce_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  const char *name = e->prim->name;
  int kind = e->prim->id == SR_P_unreduced_pmax ? SR_UK_MAX : e->prim->id == SR_P_unreduced_pmin ? SR_UK_MIN : SR_UK_SUM;
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, name, m, &ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.u) {
    sr_buf_printf(&b, "%s only accepts inputs that are unreduced. Got %s", name, sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.u & ax)) {
    sr_buf_printf(&b, "%s is a Unreduced -> Invariant collective. This means that the axes=", name);
    put_names_tuple(&b, &an);
    sr_buf_printf(&b, " passed to `%s` must be present in jax.typeof(x).mat.unreduced=", name);
    put_frozenset(&b, m, mt.u);
    return report(cx, "ValueError", &b);
  }
  if (mt.v & ax) {
    /* two spaces before axis_name, as in JAX's source */
    sr_buf_printf(&b, "%s's input cannot be varying across the  axis_name provided. Got x=%s and axes=", name,
                  sr_type_short(t));
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (an.npos) {
    sr_buf_printf(&b, "%s does not accept integer axis_name. Got axis_name=", name);
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (check_unreduced_kind(cx, name, mt, kind) < 0) return -1;
  mt.u &= ~ax;
  if (!mt.u) mt.ukind = SR_UK_NONE;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

static int type_unreduced_reduce(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, unreduced_reduce_one, out);
}

/* ---- the casts ---- */

/* lax/parallel.py: _pvary_abstract_eval -- invarying becomes varying. */
static int pvary_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "pvary", m, &ax) < 0) return -1;
  if (check_unreduced_args(cx, "pvary", t, &an, ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  if (ax & mt.v) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "pvary is a invariant->variant collective. This means that the axis names mentioned in "
                    "`axes` passed to `pvary` must not be present in `jax.typeof(inp).mat.varying`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(inp)=");
    sr_type_long(&b, t);
    return report(cx, "ValueError", &b);
  }
  mt.v |= ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

/* lax/parallel.py: _preduced_abstract_eval -- invarying becomes reduced. */
static int preduced_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "preduced", m, &ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (mt.v & ax) {
    sr_buf_puts(&b, "preduced is a Invariant->Reduced collective. This means that the axis names mentioned in "
                    "`axes` passed to `preduced` must not be present in `jax.typeof(inp).mat.varying`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(inp).mat.varying=");
    put_frozenset(&b, m, mt.v);
    return report(cx, "ValueError", &b);
  }
  if (mt.r & ax) {
    sr_buf_printf(&b, "preduced input cannot be reduced across the axis_name provided. Got x=%s and axis_name=",
                  sr_type_short(t));
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (mt.u && check_unreduced_kind(cx, "preduced", mt, SR_UK_SUM) < 0) return -1;
  mt.r |= ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

/* lax/parallel.py: _vary_unreduced_cast_abstract_eval -- varying becomes
   unreduced. */
static int vary_unreduced_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "vary_unreduced_cast", m, &ax) < 0) return -1;
  if (check_unreduced_args(cx, "vary_unreduced_cast", t, &an, ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.v) {
    sr_buf_printf(&b, "vary_unreduced_cast only accepts inputs that are varying. Got %s", sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.v & ax)) {
    sr_buf_puts(&b, "vary_unreduced_cast is a Varying->Unreduced collective. This means that the axis names "
                    "mentioned in `axes` passed to `vary_unreduced_cast` must be present in "
                    "`jax.typeof(x).mat.varying`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(x).mat.varying=");
    put_frozenset(&b, m, mt.v);
    return report(cx, "ValueError", &b);
  }
  if (mt.u & ax) {
    sr_buf_printf(&b, "vary_unreduced_cast input cannot be unreduced across the axis_name provided. Got x=%s and "
                      "axis_name=", sr_type_short(t));
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  /* ManualAxisType gives a new unreduced set the kind sum */
  if (!mt.u) mt.ukind = SR_UK_SUM;
  mt.u |= ax;
  mt.v &= ~ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

/* lax/parallel.py: _reduced_vary_cast_abstract_eval -- reduced becomes
   varying. */
static int reduced_vary_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "reduced_vary_cast", m, &ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.r) {
    sr_buf_printf(&b, "reduced_vary_cast only accepts inputs that are reduced. Got %s", sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.r & ax)) {
    sr_buf_puts(&b, "reduced_vary_cast is a Reduced->Varying collective. This means that the axis names "
                    "mentioned in `axes` passed to `reduced_vary_cast` must be present in "
                    "`jax.typeof(x).mat.reduced`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(x).mat.reduced=");
    put_frozenset(&b, m, mt.r);
    return report(cx, "ValueError", &b);
  }
  if (mt.v & ax) {
    sr_buf_printf(&b, "reduced_vary_cast input cannot be varying across the axis_name provided. Got x=%s and "
                      "axis_name=", sr_type_short(t));
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (mt.u && check_unreduced_kind(cx, "reduced_vary_cast", mt, SR_UK_SUM) < 0) return -1;
  mt.r &= ~ax;
  mt.v |= ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

static int type_pvary(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) { return each(cx, e, pvary_one, out); }
static int type_preduced(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, preduced_one, out);
}
static int type_vary_unreduced(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, vary_unreduced_one, out);
}
static int type_reduced_vary(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, reduced_vary_one, out);
}

/* ---- permutes ---- */

/* lax/parallel.py: _raise_to_shaped_abstract_eval -- ppermute and
   pbroadcast (both say "ppermute"): the type is unchanged. */
static int ppermute_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax, v;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axis_name", &an) < 0 || bind_names(cx, &an, "ppermute", m, &ax) < 0) return -1;
  if (collective_vma(cx, "ppermute", &an, ax, t, &v) < 0) return -1;
  if (check_unreduced_args(cx, "ppermute", t, &an, ax) < 0) return -1;
  *out = t;
  return 0;
}

static int type_ppermute(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, ppermute_one, out);
}

/* ---- gathers and scatters ---- */

typedef struct Gather {
  Names an;
  SrAxes ax;
  const SrMesh *m;
  int64_t dim, size;
  int tiled;
} Gather;

static int read_gather(SrTypeCtx *cx, const SrRuleEqn *e, const char *api, const char *dim_key, const SrType *t,
                       Gather *g) {
  g->m = work_mesh(cx, t);
  g->tiled = 0;
  if (read_names(cx, e, "axis_name", &g->an) < 0 || bind_names(cx, &g->an, api, g->m, &g->ax) < 0) return -1;
  if (sr_rparam_bool(cx, e, "tiled", 0, &g->tiled) < 0) return -1;
  g->size = names_size(cx, &g->an);
  if (sr_rparam_int(cx, e, "axis_size", g->size < 0, &g->size) < 0) return -1;
  int scatter = strcmp(dim_key, "scatter_dimension") == 0;
  if (!scatter && !g->tiled && t->ndim >= SR_MAX_RANK)
    return sr_terr(cx, "ValueError", "%s: a result of rank %d is more than shardrepl handles", e->prim->name,
                   t->ndim + 1);
  return dim_param(cx, e, dim_key, t->ndim + (!scatter && !g->tiled), &g->dim);
}

/* The gathered shape: a tiled gather multiplies the dimension, an untiled
   one inserts a new dimension of the axis size. */
static void gather_shape(SrTypeBuilder *b, const Gather *g) {
  if (g->tiled) {
    b->dims[g->dim].size *= g->size;
    return;
  }
  memmove(&b->dims[g->dim + 1], &b->dims[g->dim], (size_t)(b->ndim - g->dim) * sizeof b->dims[0]);
  memset(&b->dims[g->dim], 0, sizeof b->dims[0]);
  b->dims[g->dim].size = g->size;
  b->ndim++;
}

/* lax/parallel.py: _reduce_scatter_effectful_abstract_eval's shape */
static int scatter_shape(SrTypeCtx *cx, SrTypeBuilder *b, const Gather *g) {
  int64_t n = b->dims[g->dim].size;
  if (g->tiled) {
    if (g->size <= 0 || n % g->size != 0)
      return sr_terr(cx, "ValueError",
                     "tiled reduce_scatter operand scatter dimension size %lld must be divisible by shard_count %lld",
                     (long long)n, (long long)g->size);
    b->dims[g->dim].size = n / g->size;
    return 0;
  }
  if (n != g->size)
    return sr_terr(cx, "ValueError", "reduce_scatter operand scatter dimension size %lld must match shard count %lld",
                   (long long)n, (long long)g->size);
  memmove(&b->dims[g->dim], &b->dims[g->dim + 1], (size_t)(b->ndim - g->dim - 1) * sizeof b->dims[0]);
  b->ndim--;
  return 0;
}

/* lax/parallel.py: _all_gather_effectful_abstract_eval -- varying stays
   varying (with check_vma the operand must vary over the axes). */
static int type_all_gather(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "all_gather", "all_gather_dimension", t, &g) < 0) return -1;
  if (check_unreduced_args(cx, "all_gather", t, &g.an, g.ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  if (collective_vma(cx, "all_gather", &g.an, g.ax, t, &mt.v) < 0) return -1;
  SrTypeBuilder b;
  builder_with_mat(cx, &b, t, g.m, mt);
  gather_shape(&b, &g);
  out[0] = sr_type_get(&b);
  return 0;
}

/* lax/parallel.py: _all_gather_invariant_effectful_abstract_eval --
   varying over the axes becomes invarying. */
static int type_all_gather_invariant(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "all_gather_invariant", "all_gather_dimension", t, &g) < 0) return -1;
  if (check_unreduced_args(cx, "all_gather_invariant", t, &g.an, g.ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  mt.v &= ~g.ax;
  SrTypeBuilder b;
  builder_with_mat(cx, &b, t, g.m, mt);
  gather_shape(&b, &g);
  out[0] = sr_type_get(&b);
  return 0;
}

/* lax/parallel.py: _all_gather_reduced_effectful_abstract_eval -- varying
   over the axes becomes reduced. */
static int type_all_gather_reduced(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "all_gather_reduced", "all_gather_dimension", t, &g) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.v) {
    sr_buf_printf(&b, "all_gather_reduced only accepts inputs that are varying. Got %s", sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.v & g.ax)) {
    sr_buf_puts(&b, "all_gather_reduced is a Varying -> Reduced collective. This means that the axis_name=");
    put_names_tuple(&b, &g.an);
    sr_buf_puts(&b, " passed to `all_gather_reduced` must be present in jax.typeof(x).mat.varying=");
    put_frozenset(&b, g.m, mt.v);
    return report(cx, "ValueError", &b);
  }
  if (mt.r & g.ax) {
    sr_buf_printf(&b, "all_gather_reduced's input cannot be reduced across the axis_name provided. Got x=%s and "
                      "axis_name=", sr_type_short(t));
    put_names_tuple(&b, &g.an);
    return report(cx, "ValueError", &b);
  }
  if (mt.u && check_unreduced_kind(cx, "all_gather_reduced", mt, SR_UK_SUM) < 0) return -1;
  mt.r |= g.ax;
  mt.v &= ~g.ax;
  SrTypeBuilder tb;
  builder_with_mat(cx, &tb, t, g.m, mt);
  gather_shape(&tb, &g);
  out[0] = sr_type_get(&tb);
  return 0;
}

/* lax/parallel.py: _reduce_scatter_effectful_abstract_eval -- varying
   stays varying (with check_vma the operand must vary over the axes). */
static int type_reduce_scatter(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "reduce_scatter", "scatter_dimension", t, &g) < 0) return -1;
  if (check_unreduced_args(cx, "reduce_scatter", t, &g.an, g.ax) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  if (scatter_shape(cx, &b, &g) < 0) return -1;
  Mat mt = mat_of(cx, t);
  if (collective_vma(cx, "reduce_scatter", &g.an, g.ax, t, &mt.v) < 0) return -1;
  const SrType *shaped = sr_type_get(&b);
  out[0] = with_mat(cx, shaped, g.m, mt);
  return 0;
}

/* lax/parallel.py: _unreduced_reduce_scatter_effectful_abstract_eval --
   unreduced over the axes becomes varying. */
static int type_unreduced_reduce_scatter(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "reduce_scatter", "scatter_dimension", t, &g) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.u) {
    sr_buf_printf(&b, "unreduced_psum_scatter only accepts inputs that are unreduced. Got %s", sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.u & g.ax)) {
    sr_buf_puts(&b, "unreduced_psum_scatter is a Unreduced -> Varying collective. This means that the axis_name=");
    put_names_tuple(&b, &g.an);
    sr_buf_puts(&b, " passed to `unreduced_psum_scatter` must be present in jax.typeof(x).mat.unreduced=");
    put_frozenset(&b, g.m, mt.u);
    return report(cx, "ValueError", &b);
  }
  if (mt.v & g.ax) {
    sr_buf_printf(&b, "unreduced_psum_scatter's input cannot be varying across the axis_name provided. Got x=%s and "
                      "axis_name=", sr_type_short(t));
    put_names_tuple(&b, &g.an);
    return report(cx, "ValueError", &b);
  }
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  if (scatter_shape(cx, &tb, &g) < 0) return -1;
  if (check_unreduced_kind(cx, "unreduced_psum_scatter", mt, SR_UK_SUM) < 0) return -1;
  mt.u &= ~g.ax;
  mt.v |= g.ax;
  mt.ukind = mt.u ? SR_UK_SUM : SR_UK_NONE;
  out[0] = with_mat(cx, sr_type_get(&tb), g.m, mt);
  return 0;
}

/* lax/parallel.py: _all_to_all_effectful_abstract_eval -- splits one
   dimension across the axes and concatenates along another. */
static int type_all_to_all(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  const SrMesh *m = work_mesh(cx, t);
  Names an;
  SrAxes ax;
  int64_t split, concat;
  if (read_names(cx, e, "axis_name", &an) < 0 || bind_names(cx, &an, "all_to_all", m, &ax) < 0) return -1;
  if (check_unreduced_args(cx, "all_to_all", t, &an, ax) < 0) return -1;
  if (dim_param(cx, e, "split_axis", t->ndim, &split) < 0 || dim_param(cx, e, "concat_axis", t->ndim, &concat) < 0)
    return -1;
  int64_t size = names_size(cx, &an);
  SrVal *groups = sr_rparam(e, "axis_index_groups");
  if (groups && sr_is_seq(groups) && groups->seq.n && sr_is_seq(groups->seq.items[0]))
    size = groups->seq.items[0]->seq.n;
  if (size <= 0) return sr_terr(cx, "ValueError", "all_to_all: the sizes of the mesh axes it names are not known");
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  if (b.dims[split].size % size != 0)
    /* JAX asserts this; the message is the assert's tuple */
    return sr_terr(cx, "AssertionError", "(%lld, %lld)", (long long)b.dims[split].size, (long long)size);
  b.dims[split].size /= size;
  b.dims[concat].size *= size;
  b.weak = 0;
  const SrType *shaped = sr_type_get(&b);
  Mat mt = mat_of(cx, t);
  if (collective_vma(cx, "all_to_all", &an, ax, t, &mt.v) < 0) return -1;
  out[0] = with_mat(cx, shaped, m, mt);
  return 0;
}

/* lax/parallel.py: _axis_index_effectful_abstract_eval -- an int32 scalar
   that, with check_vma, varies over the axes. */
static int type_axis_index(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 0, 1) < 0) return -1;
  const SrMesh *m = work_mesh(cx, NULL);
  Names an;
  SrAxes ax;
  if (read_names(cx, e, "axis_name", &an) < 0 || bind_names(cx, &an, "axis_index", m, &ax) < 0) return -1;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = SR_I32;
  b.mesh = m;
  if (cx->check_vma && manual_in(cx, m)) b.varying = ax;
  out[0] = sr_type_get(&b);
  return 0;
}

/* ---- shard_map ---- */

/* One PartitionSpec of in_specs or out_specs, as axes of the shard_map's
   mesh. */
typedef struct MSpec {
  const SrVal *val; /* the P, for messages */
  int n;            /* its number of partitions */
  uint8_t nax[SR_MAX_RANK];
  uint8_t ax[SR_MAX_RANK][SR_MAX_DIM_AXES];
  SrAxes parts, u, r; /* _spec_to_vma(spec), unreduced, reduced */
  int ukind;
} MSpec;

typedef struct SMap {
  const SrMesh *mesh;  /* the mesh param, with its axis types */
  const SrMesh *shape; /* its shape: the axes below index it */
  const SrMesh *inner; /* the body's context: the newly manual axes Manual */
  SrAxes all, newly, prev; /* every axis; newly manual; Manual already */
  int check_vma;
  const char *fname;   /* the mapped function's name, for messages */
  uint32_t nin, nout;
  MSpec *in, *out;
} SMap;

/* keystr of entry i of a flat list of n: "" for a lone one, else "[i]" */
static void put_key(SrBuf *b, uint32_t i, uint32_t n) {
  if (n != 1) sr_buf_printf(b, "[%u]", i);
}

static void put_spec(SrBuf *b, const MSpec *s) { sr_val_repr(b, s->val); }

/* tuple(mesh.shape.values()) and mesh.axis_names */
static void put_mesh_shape(SrBuf *b, const SrMesh *m) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < m->n; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)m->sizes[i]);
  sr_buf_puts(b, m->n == 1 ? ",)" : ")");
}

static void put_mesh_line(SrBuf *b, const SMap *sm) {
  sr_buf_puts(b, "The mesh given has shape ");
  put_mesh_shape(b, sm->mesh);
  sr_buf_puts(b, " with corresponding axis names ");
  sr_axes_tuple_str(b, sm->shape, sm->all);
  sr_buf_puts(b, ".\n\n");
}

static int64_t axes_size(const SrMesh *m, const uint8_t *ax, int n) {
  int64_t s = 1;
  for (int k = 0; k < n; k++) s *= m->sizes[ax[k]];
  return s;
}

static int spec_name(SrTypeCtx *cx, const SMap *sm, const char *prefix, const char *name, SrAxes *bit) {
  int a = sr_mesh_axis(sm->shape, name);
  if (a < 0)
    return sr_terr(cx, "ValueError", "%s_specs name the axis '%s', which the shard_map's mesh does not have", prefix,
                   name);
  *bit = 1u << a;
  return 0;
}

/* shard_map.py: _check_specs and _check_unreduced, for in_specs or
   out_specs (n of them). */
static int read_specs(SrTypeCtx *cx, const SrRuleEqn *e, const SMap *sm, const char *key, const char *prefix,
                      uint32_t n, MSpec *specs) {
  SrVal *v = sr_rparam(e, key);
  if (!v) return sr_terr(cx, "TypeError", "shard_map equation has no '%s' param", key);
  if (!sr_is_seq(v) || (uint32_t)v->seq.n != n)
    return sr_terr(cx, "TypeError", "shard_map has %u %sputs but %s has %d entries", n, prefix, key,
                   sr_is_seq(v) ? v->seq.n : 1);
  SrBuf b = SR_BUF_INIT;
  int bad = 0;
  for (uint32_t i = 0; i < n; i++) {
    const SrVal *x = v->seq.items[i];
    if (x->kind == SR_V_SPEC) continue;
    if (!bad++)
      sr_buf_printf(&b, "shard_map %s_specs argument must be a pytree of `jax.sharding.PartitionSpec` instances, but:\n\n",
                    prefix);
    else
      sr_buf_puts(&b, "\n\n");
    sr_buf_printf(&b, "  %s_specs", prefix);
    put_key(&b, i, n);
    sr_buf_puts(&b, " is ");
    sr_val_str(&b, x);
    sr_buf_printf(&b, " of type %s, ", sr_val_kind_name(x));
  }
  if (bad) {
    sr_buf_printf(&b, "\n\nCheck the %s_specs values passed to shard_map.", prefix);
    return report(cx, "TypeError", &b);
  }
  SrAxes manual = sm->newly | sm->prev;
  for (uint32_t i = 0; i < n; i++) {
    const SrSpec *s = v->seq.items[i]->spec;
    for (int d = 0; d < s->n; d++)
      for (int k = 0; k < s->e[d].n; k++) {
        const char *nm = s->e[d].names[k];
        int a = nm == SR_SPEC_UNCONSTRAINED ? -2 : sr_mesh_axis(sm->shape, nm);
        if (a == -2 || (a >= 0 && (manual & (1u << a)))) continue;
        sr_buf_puts(&b, bad++ ? "\n\n" : "");
        sr_buf_printf(&b, "  %s_specs", prefix);
        put_key(&b, i, n);
        sr_buf_puts(&b, " refers to ");
        put_name(&b, nm);
      }
  }
  if (bad) {
    SrBuf m = SR_BUF_INIT;
    sr_buf_printf(&m, "shard_map %s_specs argument must refer to an axis marked as manual (", prefix);
    put_frozenset(&m, sm->shape, manual);
    sr_buf_printf(&m, "), but:\n\n%s\n\nCheck the %s_specs values passed to shard_map.", sr_buf_str(&b), prefix);
    sr_buf_free(&b);
    return report(cx, "ValueError", &m);
  }
  sr_buf_free(&b);
  for (uint32_t i = 0; i < n; i++) {
    const SrSpec *s = v->seq.items[i]->spec;
    MSpec *ms = &specs[i];
    memset(ms, 0, sizeof *ms);
    ms->val = v->seq.items[i];
    if (s->n > SR_MAX_RANK) return sr_terr(cx, "ValueError", "%s_specs entry has too many dimensions", prefix);
    ms->n = s->n;
    for (int d = 0; d < s->n; d++)
      for (int k = 0; k < s->e[d].n; k++) {
        int a = sr_mesh_axis(sm->shape, s->e[d].names[k]);
        if (a < 0) continue; /* UNCONSTRAINED */
        if (ms->nax[d] == SR_MAX_DIM_AXES) return sr_terr(cx, "ValueError", "too many mesh axes on one dimension");
        ms->ax[d][ms->nax[d]++] = (uint8_t)a;
        ms->parts |= 1u << a;
      }
    SrAxes bit = 0;
    for (int k = 0; k < s->nunreduced; k++) {
      if (spec_name(cx, sm, prefix, s->unreduced[k], &bit) < 0) return -1;
      ms->u |= bit;
    }
    for (int k = 0; k < s->nreduced; k++) {
      if (spec_name(cx, sm, prefix, s->reduced[k], &bit) < 0) return -1;
      ms->r |= bit;
    }
    ms->ukind = ms->u ? (s->ukind ? s->ukind : SR_UK_SUM) : SR_UK_NONE;
    /* _check_unreduced */
    if (!ms->u && !ms->r) continue;
    SrAxes explicit = 0;
    for (int a = 0; a < sm->mesh->n; a++)
      if (sm->mesh->types[a] == SR_AXIS_EXPLICIT) explicit |= 1u << a;
    SrBuf m = SR_BUF_INIT;
    if ((sm->newly | sm->prev) != sm->all) {
      sr_buf_printf(&m, "unreduced/reduced can only be passed to %s_specs when shard_map is in full manual mode. Got "
                        "mesh axis names ", prefix);
      sr_axes_tuple_str(&m, sm->shape, sm->all);
      sr_buf_puts(&m, ", manual_axes: ");
      put_frozenset(&m, sm->shape, sm->newly | sm->prev);
      sr_buf_puts(&m, ", specs: ");
      put_spec(&m, ms);
      sr_buf_puts(&m, ". Please file a bug at https://github.com/jax-ml/jax/issues.");
      return report(cx, "NotImplementedError", &m);
    }
    for (int pass = 0; pass < 2; pass++) {
      if (!((pass ? ms->r : ms->u) & ~explicit)) continue;
      sr_buf_printf(&m, "%s in %s_specs ", pass ? "reduced" : "unreduced", prefix);
      put_spec(&m, ms);
      sr_buf_puts(&m, " can only be used when the mesh passed to shard_map contains axis names all of type "
                      "`Explicit`. Got mesh ");
      sr_mesh_str(&m, sm->mesh);
      return report(cx, "ValueError", &m);
    }
  }
  return 0;
}

/* shard_map.py: _spec_rank_error -- specs longer than the rank of the
   values they describe (types[i] on the inputs' or outputs' side). */
static int rank_check(SrTypeCtx *cx, const SMap *sm, int is_out, const SrType *const *types) {
  const char *prefix = is_out ? "out" : "in";
  uint32_t n = is_out ? sm->nout : sm->nin;
  const MSpec *specs = is_out ? sm->out : sm->in;
  SrBuf msgs = SR_BUF_INIT;
  int k = 0, scalar = 0;
  for (uint32_t i = 0; i < n; i++) {
    const SrType *t = types[i];
    if (!t || !specs[i].n || specs[i].n <= t->ndim) continue;
    if (k++) sr_buf_puts(&msgs, "\n\n");
    sr_buf_printf(&msgs, "* %s_specs", prefix);
    put_key(&msgs, i, n);
    sr_buf_puts(&msgs, " is ");
    put_spec(&msgs, &specs[i]);
    sr_buf_printf(&msgs, " which has length %d, but ", specs[i].n);
    if (is_out) {
      sr_buf_printf(&msgs, "%s(*args)", sm->fname);
      put_key(&msgs, i, n);
    } else {
      sr_buf_printf(&msgs, "the passed args[%u]", i);
    }
    sr_buf_puts(&msgs, " has shape ");
    sr_type_str(&msgs, t, 0);
    sr_buf_printf(&msgs, ", which has rank %d (and %d < %d)", t->ndim, t->ndim, specs[i].n);
    if (!t->ndim) scalar = 1;
  }
  if (!k) {
    sr_buf_free(&msgs);
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "shard_map applied to the function '%s' was given an %s_specs entry which is too long to be "
                    "compatible with the corresponding %sput value from the function:\n\n%s\n\n",
                sm->fname, prefix, prefix, sr_buf_str(&msgs) + (k == 1 ? 2 : 0));
  sr_buf_printf(&b, "Entries in %s_specs must be of length no greater than the number of axes in the corresponding "
                    "%sput value.\n\nEither revise the spec to be shorter, or modify '%s' so that its %sputs have "
                    "sufficient rank.",
                prefix, prefix, sm->fname, prefix);
  if (scalar)
    sr_buf_printf(&b, "\n\nFor scalar values (rank 0), consider using an %s_specs entry of `P()`, where "
                      "`P = jax.sharding.PartitionSpec`.", prefix);
  if (scalar && is_out)
    sr_buf_puts(&b, " In particular, for rank 0 outputs which are not constant over the mesh, add at least one "
                    "(singleton) axis to them so that they can be concatenated using out_specs.");
  sr_buf_free(&msgs);
  return report(cx, "ValueError", &b);
}

/* shard_map.py: _spec_divisibility_error -- each input dimension must
   divide by the sizes of the axes its spec splits it over. */
static int divisibility_check(SrTypeCtx *cx, const SMap *sm, const SrType *const *types) {
  SrBuf msgs = SR_BUF_INIT;
  int k = 0;
  for (uint32_t i = 0; i < sm->nin; i++) {
    const MSpec *s = &sm->in[i];
    const SrType *t = types[i];
    for (int d = 0; d < s->n && d < t->ndim; d++) {
      if (!s->nax[d] || t->dims[d].size < 0) continue;
      int64_t sz = axes_size(sm->mesh, s->ax[d], s->nax[d]);
      if (sz <= 0 || t->dims[d].size % sz == 0) continue;
      if (k++) sr_buf_puts(&msgs, "\n\n");
      sr_buf_printf(&msgs, "* the passed args[%u] of shape ", i);
      sr_type_str(&msgs, t, 0);
      sr_buf_puts(&msgs, " corresponds to in_specs");
      put_key(&msgs, i, sm->nin);
      sr_buf_puts(&msgs, " of value ");
      put_spec(&msgs, s);
      sr_buf_printf(&msgs, ", which maps array axis %d (of size %lld) to mesh ", d, (long long)t->dims[d].size);
      if (s->nax[d] > 1) {
        sr_buf_puts(&msgs, "axes (");
        for (int a = 0; a < s->nax[d]; a++) {
          if (a) sr_buf_puts(&msgs, ", ");
          put_name(&msgs, sm->shape->names[s->ax[d][a]]);
        }
        sr_buf_puts(&msgs, ")");
      } else {
        sr_buf_printf(&msgs, "axis '%s'", sm->shape->names[s->ax[d][0]]);
      }
      sr_buf_printf(&msgs, " (of %ssize %lld), but %lld does not evenly divide %lld", s->nax[d] > 1 ? "total " : "",
                    (long long)sz, (long long)sz, (long long)t->dims[d].size);
    }
  }
  if (!k) {
    sr_buf_free(&msgs);
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "shard_map applied to the function '%s' was given argument arrays with axis sizes that are not "
                    "evenly divisible by the corresponding mesh axis sizes:\n\n", sm->fname);
  put_mesh_line(&b, sm);
  sr_buf_printf(&b, "%s\n\nArray arguments' axis sizes must be evenly divisible by the mesh axis or axes indicated by "
                    "the corresponding elements of the argument's in_specs entry. Consider checking that in_specs "
                    "are correct, and if so consider changing the mesh axis sizes or else padding the input and "
                    "adapting '%s' appropriately.",
                sr_buf_str(&msgs) + (k == 1 ? 2 : 0), sm->fname);
  sr_buf_free(&msgs);
  return report(cx, "ValueError", &b);
}

/* shard_map.py: _shard_shaped_array -- an argument's type inside the body:
   each dimension divided by the sizes of the axes its spec names, the
   newly manual axes gone from the sharding, varying over the spec's axes
   (with check_vma), and the argument's unreduced/reduced moved into the
   manual sets. */
static int shard_aval(SrTypeCtx *cx, const SMap *sm, uint32_t i, const SrType *t, const SrType **out) {
  const MSpec *s = &sm->in[i];
  const SrMesh *tm = t->mesh;
  /* outside, the axes of the mesh param that are Manual already (JAX
     requires the context mesh to be the mesh param) */
  SrAxes outer_man = rebase(sm->prev, sm->shape, tm);
  SrAxes au = rebase(t->unreduced & ~outer_man, tm, sm->shape);
  SrAxes ar = rebase(t->reduced & ~outer_man, tm, sm->shape);
  int akind = au ? t->ukind : SR_UK_NONE;
  SrBuf b = SR_BUF_INIT;
  const char *what = s->u != au ? "unreduced" : s->ukind != akind ? "unreduced_kind" : s->r != ar ? "reduced" : NULL;
  if (what) {
    sr_buf_printf(&b, "in_specs containing %s ", what);
    put_spec(&b, s);
    sr_buf_printf(&b, " passed to shard_map should be equal to the %s present on the in_aval %s", what,
                  sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  SrAxes inner_explicit = 0;
  for (int a = 0; a < sm->inner->n; a++)
    if (sm->inner->types[a] == SR_AXIS_EXPLICIT) inner_explicit |= 1u << a;
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  tb.mesh = sm->shape;
  for (int d = 0; d < t->ndim; d++) {
    SrDim *dim = &tb.dims[d];
    dim->nax = 0;
    for (int k = 0; k < t->dims[d].nax; k++) {
      int a = sr_mesh_axis(sm->shape, tm->names[t->dims[d].ax[k]]);
      if (a >= 0 && (inner_explicit & (1u << a))) dim->ax[dim->nax++] = (uint8_t)a;
    }
    if (d < s->n && dim->size >= 0) dim->size /= axes_size(sm->mesh, s->ax[d], s->nax[d]);
  }
  tb.varying = (sm->check_vma ? s->parts : 0) | rebase(t->varying, tm, sm->shape);
  tb.unreduced = (au & inner_explicit) | (sm->check_vma ? au : 0);
  tb.reduced = (ar & inner_explicit) | (sm->check_vma ? ar : 0);
  tb.ukind = tb.unreduced ? t->ukind : SR_UK_NONE;
  *out = sr_type_get(&tb);
  return 0;
}

/* shard_map.py: _check_mats / _valid_repeats / _inout_vma_error -- an
   output may vary (or be unreduced or reduced) only over the mesh axes its
   out_spec mentions. */
static int replication_check(SrTypeCtx *cx, const SMap *sm, const SrType *const *outs) {
  SrBuf msgs = SR_BUF_INIT;
  int k = 0;
  for (uint32_t i = 0; i < sm->nout; i++) {
    const MSpec *s = &sm->out[i];
    const SrType *a = outs[i];
    if (!a) continue;
    SrAxes man = manual_of(sm->inner, a->mesh);
    SrAxes v = rebase(a->varying, a->mesh, sm->shape);
    SrAxes vur = v | rebase((a->unreduced | a->reduced) & man, a->mesh, sm->shape);
    SrAxes unmentioned = sm->all & ~(s->parts | s->u | s->r);
    if (!(unmentioned & ~sm->prev & vur)) continue;
    if (k++) sr_buf_puts(&msgs, "\n\n");
    sr_buf_puts(&msgs, "* out_specs");
    put_key(&msgs, i, sm->nout);
    sr_buf_puts(&msgs, " is ");
    put_spec(&msgs, s);
    if (sr_axes_count(unmentioned) > 1) {
      sr_buf_puts(&msgs, " which implies that the corresponding output value is only varying across mesh axes {");
      for (int pass = 0; pass < 3; pass++) {
        SrAxes set = pass == 0 ? s->parts : pass == 1 ? unmentioned & v : v;
        int j = 0;
        for (int ax = 0; ax < sm->shape->n; ax++)
          if (set & (1u << ax)) sr_buf_printf(&msgs, j++ ? ",%s" : "%s", sm->shape->names[ax]);
        sr_buf_puts(&msgs, pass == 0 ? "} and not {" : pass == 1 ? "}, but it was inferred to be possibly varying over {"
                                                                 : "}");
      }
    } else {
      int ax = __builtin_ctz(unmentioned);
      sr_buf_printf(&msgs, " which implies that the corresponding output value is replicated across mesh axis '%s', "
                           "but could not infer replication over any axes", sm->shape->names[ax]);
    }
  }
  if (!k) {
    sr_buf_free(&msgs);
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "shard_map applied to the function '%s' was given out_specs which require replication which "
                    "can't be statically inferred given the mesh:\n\n", sm->fname);
  put_mesh_line(&b, sm);
  sr_buf_printf(&b, "%s\n\nCheck if these output values are meant to be replicated over those mesh axes. If not, "
                    "consider revising the corresponding out_specs entries. If so, consider disabling the check by "
                    "passing the check_vma=False argument to `jax.shard_map`.",
                sr_buf_str(&msgs) + (k == 1 ? 2 : 0));
  sr_buf_free(&msgs);
  return report(cx, "ValueError", &b);
}

/* shard_map.py: _unshard_shaped_array -- a body output's type outside:
   each dimension multiplied by the sizes of the axes its out_spec names,
   which join the sharding; unreduced/reduced from the out_spec; varying
   only over the axes that stay Manual outside. */
static int unshard_aval(SrTypeCtx *cx, const SMap *sm, uint32_t i, const SrType *a, const SrType **out) {
  const MSpec *s = &sm->out[i];
  const SrMesh *am = a->mesh;
  SrAxes man = manual_of(sm->inner, am);
  if (sm->check_vma) {
    SrAxes mu = rebase(a->unreduced & man, am, sm->shape), mr = rebase(a->reduced & man, am, sm->shape);
    int mkind = mu ? a->ukind : SR_UK_NONE;
    const char *what = s->u != mu ? "unreduced" : s->ukind != mkind ? "unreduced_kind" : s->r != mr ? "reduced" : NULL;
    if (what) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_printf(&b, "out_specs passed to shard_map should be equal to the %s present on the out_aval. Got "
                        "out_specs=", what);
      put_spec(&b, s);
      sr_buf_printf(&b, " and out_aval=%s", sr_type_short(a));
      return report(cx, "ValueError", &b);
    }
  }
  const SrMesh *om = cx->mesh && cx->mesh->n ? sr_mesh_shape(cx->mesh) : sm->shape;
  SrAxes outer_man = rebase(sm->prev, sm->shape, om);
  SrTypeBuilder b;
  sr_type_builder(&b, a);
  b.mesh = om;
  for (int d = 0; d < a->ndim; d++) {
    SrDim *dim = &b.dims[d];
    dim->nax = 0;
    if (d < s->n) {
      if (dim->size >= 0) dim->size *= axes_size(sm->mesh, s->ax[d], s->nax[d]);
      for (int k = 0; k < s->nax[d]; k++) {
        int ax = sr_mesh_axis(om, sm->shape->names[s->ax[d][k]]);
        if (ax >= 0) dim->ax[dim->nax++] = (uint8_t)ax;
      }
    }
    for (int k = 0; k < a->dims[d].nax; k++) {
      int ax = sr_mesh_axis(om, am->names[a->dims[d].ax[k]]);
      if (ax < 0) continue;
      if (dim->nax == SR_MAX_DIM_AXES) return sr_terr(cx, "ValueError", "too many mesh axes on one dimension");
      dim->ax[dim->nax++] = (uint8_t)ax;
    }
  }
  b.unreduced = rebase(s->u, sm->shape, om);
  b.reduced = rebase(s->r, sm->shape, om);
  b.ukind = b.unreduced ? s->ukind : SR_UK_NONE;
  b.varying = rebase(a->varying, am, om) & outer_man;
  *out = sr_type_get(&b);
  return 0;
}

/* shard_map.py: _shard_map_staging / _shard_map_typecheck, with the
   checks of _shard_map and _shmap_checks that a printed equation can
   still fail. */
static int type_shard_map(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  SMap sm;
  memset(&sm, 0, sizeof sm);
  SrVal *jv = sr_rparam(e, "jaxpr");
  if (!jv || jv->kind != SR_V_JAXPR) return sr_terr(cx, "TypeError", "shard_map equation has no 'jaxpr' param");
  const SrJaxpr *body = jv->jx.jaxpr;
  SrVal *mv = sr_rparam(e, "mesh");
  sm.mesh = mv && mv->kind == SR_V_MESH ? mv->mesh : cx->mesh;
  if (!sm.mesh || !sm.mesh->n) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "shard_map requires a non-empty mesh. Got ");
    if (mv) sr_val_str(&b, mv);
    else sr_mesh_str(&b, sr_mesh_empty());
    return report(cx, "ValueError", &b);
  }
  if (sm.mesh->unsized) return sr_terr(cx, "ValueError", "shard_map: the sizes of the mesh's axes are not known");
  sm.shape = sr_mesh_shape(sm.mesh);
  sm.all = (SrAxes)((1ull << sm.mesh->n) - 1);
  for (int a = 0; a < sm.mesh->n; a++)
    if (sm.mesh->types[a] == SR_AXIS_MANUAL) sm.prev |= 1u << a;
  SrVal *nv = sr_rparam(e, "newly_manual_axes"), *auto_v = sr_rparam(e, "auto");
  if (nv) {
    if (sr_names_to_axes(cx, nv, sm.shape, &sm.newly) < 0) return -1;
  } else {
    SrAxes au = 0;
    if (auto_v && sr_names_to_axes(cx, auto_v, sm.shape, &au) < 0) return -1;
    sm.newly = sm.all & ~au & ~sm.prev;
  }
  sm.check_vma = 1;
  if (sr_rparam(e, "check_vma")) {
    if (sr_rparam_bool(cx, e, "check_vma", 1, &sm.check_vma) < 0) return -1;
  } else if (sr_rparam_bool(cx, e, "check_rep", 0, &sm.check_vma) < 0) {
    return -1;
  }
  uint8_t types[SR_MAX_AXES];
  memcpy(types, sm.mesh->types, sizeof types);
  for (int a = 0; a < sm.mesh->n; a++)
    if (sm.newly & (1u << a)) types[a] = SR_AXIS_MANUAL;
  sm.inner = sr_mesh_with_types(sm.mesh, types);
  sm.fname = body->name ? body->name : "f";
  sm.nin = e->nin;
  sm.nout = e->nout;
  if (body->nout != e->nout)
    return sr_terr(cx, "TypeError", "shard_map has %u results but its jaxpr returns %u values", e->nout, body->nout);

  int rc = -1;
  sm.in = sr_xcalloc(e->nin + 1, sizeof *sm.in);
  sm.out = sr_xcalloc(e->nout + 1, sizeof *sm.out);
  const SrType **ins = sr_xcalloc(e->nin + 1, sizeof *ins);
  const SrType **bouts = sr_xcalloc(e->nout + 1, sizeof *bouts);
  if (read_specs(cx, e, &sm, "in_specs", "in", e->nin, sm.in) < 0 ||
      read_specs(cx, e, &sm, "out_specs", "out", e->nout, sm.out) < 0)
    goto done;
  if (rank_check(cx, &sm, 0, e->in) < 0 || divisibility_check(cx, &sm, e->in) < 0) goto done;
  for (uint32_t i = 0; i < e->nin; i++)
    if (shard_aval(cx, &sm, i, e->in[i], &ins[i]) < 0) goto done;
  SrTypeCtx inner = *cx;
  inner.mesh = sm.inner;
  inner.check_vma = sm.check_vma;
  if (cx->check_body) {
    if (cx->check_body(&inner, body, ins, e->nin, bouts) < 0) goto done;
  } else {
    for (uint32_t i = 0; i < body->nout; i++) bouts[i] = body->outvars[i]->type;
  }
  if (rank_check(cx, &sm, 1, bouts) < 0) goto done;
  if (sm.check_vma && replication_check(cx, &sm, bouts) < 0) goto done;
  for (uint32_t i = 0; i < e->nout; i++)
    if (bouts[i] && unshard_aval(cx, &sm, i, bouts[i], &out[i]) < 0) goto done;
  rc = 0;
done:
  free(sm.in);
  free(sm.out);
  free(ins);
  free(bouts);
  return rc;
}

void sr_rules_manual_init(void) {
  sr_set_type_rule(SR_P_shard_map, type_shard_map);
  sr_set_type_rule(SR_P_psum, type_psum);
  sr_set_type_rule(SR_P_pmean, type_psum);
  sr_set_type_rule(SR_P_psum_invariant, type_psum_invariant);
  sr_set_type_rule(SR_P_pmax, type_pmax);
  sr_set_type_rule(SR_P_pmin, type_pmax);
  sr_set_type_rule(SR_P_unreduced_psum, type_unreduced_reduce);
  sr_set_type_rule(SR_P_unreduced_pmax, type_unreduced_reduce);
  sr_set_type_rule(SR_P_unreduced_pmin, type_unreduced_reduce);
  sr_set_type_rule(SR_P_pvary, type_pvary);
  sr_set_type_rule(SR_P_preduced, type_preduced);
  sr_set_type_rule(SR_P_vary_unreduced_cast, type_vary_unreduced);
  sr_set_type_rule(SR_P_reduced_vary_cast, type_reduced_vary);
  sr_set_type_rule(SR_P_ppermute, type_ppermute);
  sr_set_type_rule(SR_P_pbroadcast, type_ppermute);
  sr_set_type_rule(SR_P_all_gather, type_all_gather);
  sr_set_type_rule(SR_P_all_gather_invariant, type_all_gather_invariant);
  sr_set_type_rule(SR_P_all_gather_reduced, type_all_gather_reduced);
  sr_set_type_rule(SR_P_reduce_scatter, type_reduce_scatter);
  sr_set_type_rule(SR_P_unreduced_reduce_scatter, type_unreduced_reduce_scatter);
  sr_set_type_rule(SR_P_all_to_all, type_all_to_all);
  sr_set_type_rule(SR_P_axis_index, type_axis_index);
}

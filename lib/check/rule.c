/* rule.c: helpers shared by the type rules. */
#include "check/rule.h"
#include "check/rule_cache.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "text/print_val.h"
#include "util/intern.h"

int sr_terr(SrTypeCtx *cx, const char *exc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sr_verror(cx->d, SR_E_TYPE, cx->src, cx->off, fmt, ap);
  va_end(ap);
  if (cx->d && exc) cx->d->last->exc = sr_xstrdup(exc);
  return -1;
}

void sr_set_type_rule(int prim_id, SrTypeRule rule) { sr_prims[prim_id].type = rule; }

/* ---- params ---- */

SrVal *sr_rparam(const SrRuleEqn *e, const char *key) {
  for (uint32_t i = 0; i < e->nparams; i++)
    if (strcmp(e->params[i].key, key) == 0) return e->params[i].val;
  return NULL;
}

static int missing(SrTypeCtx *cx, const SrRuleEqn *e, const char *key) {
  return sr_terr(cx, "TypeError", "%s equation has no '%s' param", e->prim->name, key);
}

static int bad_param(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, const SrVal *v, const char *want) {
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  sr_terr(cx, "TypeError", "%s's param %s=%s is not %s", e->prim->name, key, sr_buf_str(&b), want);
  sr_buf_free(&b);
  return -1;
}

int sr_rparam_int(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int required, int64_t *out) {
  SrVal *v = sr_rparam(e, key);
  if (!v) return required ? missing(cx, e, key) : 0;
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = v->i;
    return 0;
  }
  if (v->kind == SR_V_NONE && !required) return 0;
  return bad_param(cx, e, key, v, "an integer");
}

int sr_rparam_bool(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int required, int *out) {
  SrVal *v = sr_rparam(e, key);
  if (!v) return required ? missing(cx, e, key) : 0;
  if (v->kind == SR_V_BOOL || v->kind == SR_V_INT) {
    *out = v->i != 0;
    return 0;
  }
  return bad_param(cx, e, key, v, "True or False");
}

static int flatten_ints(const SrVal *v, int64_t *out, int max, int *n) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    if (*n >= max) return -1;
    out[(*n)++] = v->i;
    return 0;
  }
  if (!sr_is_seq(v)) return -1;
  for (int i = 0; i < v->seq.n; i++)
    if (flatten_ints(v->seq.items[i], out, max, n) < 0) return -1;
  return 0;
}

int sr_val_ints(const SrVal *v, int64_t *out, int max, int *n) {
  *n = 0;
  return flatten_ints(v, out, max, n);
}

int sr_rparam_ints(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int required, int64_t *out,
                   int max, int *n) {
  SrVal *v = sr_rparam(e, key);
  if (!v || v->kind == SR_V_NONE) {
    *n = 0;
    return required ? missing(cx, e, key) : 0;
  }
  if (sr_val_ints(v, out, max, n) < 0) return bad_param(cx, e, key, v, "a tuple of integers");
  return 0;
}

int sr_rparam_dtype(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, SrDtype *out, int *present) {
  SrVal *v = sr_rparam(e, key);
  *present = 0;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (v->kind == SR_V_DTYPE) {
    *out = v->dtype;
    *present = 1;
    return 0;
  }
  if (v->kind == SR_V_WORD || v->kind == SR_V_STR) {
    int d = sr_dtype_lookup(v->str.s, v->str.n);
    if (d < 0) d = sr_dtype_intern(v->str.s, v->str.n);
    *out = (SrDtype)d;
    *present = 1;
    return 0;
  }
  return bad_param(cx, e, key, v, "a dtype");
}

static int name_axis(SrTypeCtx *cx, const SrVal *v, const SrMesh *m, SrAxes *out) {
  if (v->kind != SR_V_STR && v->kind != SR_V_WORD)
    return sr_terr(cx, "TypeError", "a mesh axis name must be a string, got %s", sr_val_kind_name(v));
  const char *name = sr_intern(v->str.s, v->str.n);
  int i = m ? sr_mesh_axis(m, name) : -1;
  if (i < 0) return sr_terr(cx, "NameError", "unbound axis name: %s", name);
  *out |= 1u << i;
  return 0;
}

int sr_names_to_axes(SrTypeCtx *cx, const SrVal *v, const SrMesh *m, SrAxes *out) {
  *out = 0;
  if (v->kind == SR_V_NONE) return 0;
  if (sr_is_seq(v)) {
    for (int i = 0; i < v->seq.n; i++)
      if (name_axis(cx, v->seq.items[i], m, out) < 0) return -1;
    return 0;
  }
  return name_axis(cx, v, m, out);
}

int sr_rparam_axes(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, const SrMesh *m, SrAxes *out) {
  SrVal *v = sr_rparam(e, key);
  if (!v) return missing(cx, e, key);
  return sr_names_to_axes(cx, v, m, out);
}

/* ---- shardings ---- */

/* named_sharding._check_mesh_resource_axis / _check_mesh_unreduced: the
   Resource message puts the spec before the mesh's names, the others
   after. */
static int spec_axis_error(SrTypeCtx *cx, const char *fmt, int spec_first, const char *name, const SrSpec *s,
                           const SrMesh *m) {
  SrBuf sp = SR_BUF_INIT, names = SR_BUF_INIT;
  sr_spec_repr(&sp, s);
  sr_axes_tuple_str(&names, m ? m : sr_mesh_empty(), m ? (SrAxes)((1ull << m->n) - 1) : 0);
  if (spec_first)
    sr_terr(cx, "ValueError", fmt, name, sr_buf_str(&sp), sr_buf_str(&names));
  else
    sr_terr(cx, "ValueError", fmt, name, sr_buf_str(&names), sr_buf_str(&sp));
  sr_buf_free(&sp);
  sr_buf_free(&names);
  return -1;
}

int sr_spec_to_shard(SrTypeCtx *cx, const SrVal *v, const SrMesh *m, int ndim, SrShardSpec *out) {
  memset(out, 0, sizeof *out);
  out->mesh = m;
  out->ndim = ndim;
  const SrSpec *s;
  if (v->kind == SR_V_SHARDING) {
    /* a NamedSharding names the axes of its own mesh (which may not be
       the context's: use_abstract_mesh, explicit_axes) */
    s = v->sh.spec;
    if (v->sh.mesh->n) m = out->mesh = sr_mesh_shape(v->sh.mesh);
  } else if (v->kind == SR_V_SPEC) {
    s = v->spec;
  } else {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, v);
    sr_terr(cx, "TypeError", "expected a PartitionSpec or NamedSharding, got %s", sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (s->n > ndim) {
    /* a type whose spec is longer than its rank: core.get_sharding's
       check, with the sharding over the abstract mesh it would type */
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_spec_repr(&b, s);
    const SrMesh *am = v->kind == SR_V_SHARDING && v->sh.mesh->n ? v->sh.mesh
                       : cx->mesh && cx->mesh->n                  ? cx->mesh
                       : m                                        ? m
                                                                  : sr_mesh_empty();
    sr_sharding_repr(&c, sr_mesh_abstract(am, cx->mesh && cx->mesh->device_fields), s, NULL);
    sr_terr(cx, "ValueError",
            "Length of sharding.spec (%d) must be equal to aval's ndim (%d). Got sharding.spec %s, aval.ndim %d "
            "and sharding %s",
            s->n, ndim, sr_buf_str(&b), ndim, sr_buf_str(&c));
    sr_buf_free(&b);
    sr_buf_free(&c);
    return -1;
  }
  for (int i = 0; i < s->n; i++) {
    const SrSpecEntry *en = &s->e[i];
    for (int k = 0; k < en->n; k++) {
      if (en->names[k] == SR_SPEC_UNCONSTRAINED) continue;
      int a = m ? sr_mesh_axis(m, en->names[k]) : -1;
      if (a < 0) return spec_axis_error(cx, "Resource axis: %s of %s is not found in mesh: %s.", 1, en->names[k], s, m);
      if (out->nax[i] == SR_MAX_DIM_AXES) return sr_terr(cx, "ValueError", "too many mesh axes on one dimension");
      out->ax[i][out->nax[i]++] = (uint8_t)a;
    }
  }
  for (int k = 0; k < s->nunreduced; k++) {
    int a = m ? sr_mesh_axis(m, s->unreduced[k]) : -1;
    if (a < 0)
      return spec_axis_error(cx, "Unreduced axes %s is not found in mesh.axis_names=%s. Got pspec=%s", 0, s->unreduced[k], s, m);
    out->unreduced |= 1u << a;
  }
  for (int k = 0; k < s->nreduced; k++) {
    int a = m ? sr_mesh_axis(m, s->reduced[k]) : -1;
    if (a < 0)
      return spec_axis_error(cx, "Reduced axes %s is not found in mesh.axis_names=%s. Got pspec=%s", 0, s->reduced[k], s, m);
    out->reduced |= 1u << a;
  }
  out->ukind = out->unreduced ? (s->ukind ? s->ukind : SR_UK_SUM) : SR_UK_NONE;
  return 0;
}

int sr_rparam_sharding(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int ndim,
                       SrShardSpec *out, int *present) {
  SrVal *v = sr_rparam(e, key);
  *present = 0;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (v->kind == SR_V_WORD) {
    /* printed text JAX could not give structure to (UnspecifiedValue) */
    if (v->str.n == 16 && memcmp(v->str.s, "UnspecifiedValue", 16) == 0) return 0;
    return bad_param(cx, e, key, v, "a sharding");
  }
  *present = 1;
  return sr_spec_to_shard(cx, v, sr_rule_mesh(cx, e), ndim, out);
}

void sr_apply_shard(SrTypeBuilder *b, const SrShardSpec *s) {
  b->mesh = s->mesh;
  for (int i = 0; i < b->ndim; i++) {
    b->dims[i].nax = i < s->ndim ? s->nax[i] : 0;
    memcpy(b->dims[i].ax, s->ax[i], SR_MAX_DIM_AXES);
  }
  b->unreduced = s->unreduced;
  b->reduced = s->reduced;
  b->ukind = s->ukind;
}

void sr_shard_of_type(const SrType *t, SrShardSpec *s) {
  memset(s, 0, sizeof *s);
  s->mesh = t->mesh;
  s->ndim = t->ndim;
  for (int i = 0; i < t->ndim; i++) {
    s->nax[i] = t->dims[i].nax;
    memcpy(s->ax[i], t->dims[i].ax, SR_MAX_DIM_AXES);
  }
  s->unreduced = t->unreduced;
  s->reduced = t->reduced;
  s->ukind = t->ukind;
}

SrVal *sr_shard_to_spec_val(const SrShardSpec *s) {
  SrSpec spec = {0};
  SrSpecEntry e[SR_MAX_RANK];
  const char *names[SR_MAX_RANK * SR_MAX_DIM_AXES];
  const char *un[SR_MAX_AXES], *re[SR_MAX_AXES];
  int nn = 0;
  spec.n = s->ndim;
  spec.e = e;
  for (int i = 0; i < s->ndim; i++) {
    e[i].n = s->nax[i];
    e[i].names = names + nn;
    for (int k = 0; k < s->nax[i]; k++) names[nn++] = s->mesh->names[s->ax[i][k]];
  }
  for (int i = 0; s->mesh && i < s->mesh->n; i++) {
    if (s->unreduced & (1u << i)) un[spec.nunreduced++] = s->mesh->names[i];
    if (s->reduced & (1u << i)) re[spec.nreduced++] = s->mesh->names[i];
  }
  spec.unreduced = un;
  spec.reduced = re;
  spec.ukind = s->ukind;
  return sr_spec_val(NULL, &spec);
}

/* ---- types ---- */

const SrMesh *sr_rule_mesh(SrTypeCtx *cx, const SrRuleEqn *e) {
  if (cx->mesh && cx->mesh->n) return sr_mesh_shape(cx->mesh);
  for (uint32_t i = 0; i < e->nin; i++)
    if (e->in[i] && e->in[i]->mesh) return e->in[i]->mesh;
  return NULL;
}

int sr_axis_explicit(SrTypeCtx *cx, const SrMesh *m, int axis) {
  if (!cx->mesh || !cx->mesh->n) return 1;
  int i = sr_mesh_axis(cx->mesh, m->names[axis]);
  return i < 0 || cx->mesh->types[i] == SR_AXIS_EXPLICIT;
}

void sr_inputs_str(SrBuf *out, const SrRuleEqn *e) {
  for (uint32_t i = 0; i < e->nin; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_buf_puts(out, e->in[i] ? sr_type_short(e->in[i]) : "?");
  }
}

void sr_dim_spec_str(SrBuf *out, const SrType *t, int dim) {
  const SrDim *d = &t->dims[dim];
  if (!d->nax) {
    sr_buf_puts(out, "None");
    return;
  }
  if (d->nax == 1) {
    sr_buf_printf(out, "'%s'", t->mesh->names[d->ax[0]]);
  } else {
    sr_buf_putc(out, '(');
    for (int k = 0; k < d->nax; k++) sr_buf_printf(out, k ? ", '%s'" : "'%s'", t->mesh->names[d->ax[k]]);
    sr_buf_putc(out, ')');
  }
}

void sr_type_sharding_str(SrBuf *out, SrTypeCtx *cx, const SrType *t) {
  SrShardSpec s;
  sr_shard_of_type(t, &s);
  if (!s.mesh) s.mesh = cx->mesh ? sr_mesh_shape(cx->mesh) : sr_mesh_empty();
  SrVal *spec = sr_shard_to_spec_val(&s);
  const SrMesh *m = cx->mesh && cx->mesh->n ? cx->mesh : s.mesh;
  sr_sharding_repr(out, sr_mesh_abstract(m, cx->mesh && cx->mesh->device_fields), spec->spec, NULL);
  sr_unref(spec);
}

/* Python's repr of a spec's partitions tuple for a builder: ('X', None) */
static void builder_partitions_str(SrBuf *out, const SrTypeBuilder *b) {
  SrTypeBuilder c = *b;
  c.unreduced = c.reduced = c.varying = 0;
  sr_partitions_str(out, sr_type_get(&c), NULL, 0);
}

/* The product of the sizes of d's mesh axes in decimal, exact even past
   int64, as Python's ints print it: schoolbook multiplication in base-10^9
   limbs, least significant first. */
static void product_str(SrBuf *out, const SrMesh *m, const SrDim *d) {
  enum { BASE = 1000000000, MAXL = SR_MAX_DIM_AXES * 3 + 1 };
  uint64_t x[MAXL] = {1};
  int n = 1;
  for (int k = 0; k < d->nax; k++) {
    uint64_t f = (uint64_t)m->sizes[d->ax[k]], fd[3];
    int nf = 0;
    do {
      fd[nf++] = f % BASE;
      f /= BASE;
    } while (f);
    uint64_t r[MAXL] = {0};
    for (int i = 0; i < n; i++) {
      uint64_t carry = 0;
      for (int j = 0; j < nf; j++) {
        uint64_t v = r[i + j] + x[i] * fd[j] + carry; /* < 10^18 + 2 * 10^9 */
        r[i + j] = v % BASE;
        carry = v / BASE;
      }
      for (int j = i + nf; carry; j++) {
        uint64_t v = r[j] + carry;
        r[j] = v % BASE;
        carry = v / BASE;
      }
    }
    n += nf;
    while (n > 1 && !r[n - 1]) n--;
    memcpy(x, r, sizeof x);
  }
  sr_buf_printf(out, "%llu", (unsigned long long)x[n - 1]);
  for (int i = n - 2; i >= 0; i--) sr_buf_printf(out, "%09llu", (unsigned long long)x[i]);
}

int sr_finish_type(SrTypeCtx *cx, const SrRuleEqn *e, SrTypeBuilder *b, const SrType **out) {
  SrAxes used = 0;
  int dup = 0;
  for (int i = 0; i < b->ndim && !dup; i++)
    for (int k = 0; k < b->dims[i].nax; k++) {
      SrAxes bit = 1u << b->dims[i].ax[k];
      if (used & bit) dup = 1;
      used |= bit;
    }
  if (dup) {
    /* DuplicateSpecError, re-raised by call_shape_dtype_sharding_rule with
       the sharding rule's spec: no unreduced/reduced/varying yet */
    SrTypeBuilder c = *b;
    c.unreduced = c.reduced = c.varying = 0;
    const SrType *t = sr_type_get(&c);
    SrBuf ins = SR_BUF_INIT;
    sr_inputs_str(&ins, e);
    sr_terr(cx, "ShardingTypeError", "%s operation with inputs: %s produces an illegally sharded result: %s",
            e->prim->name, sr_buf_str(&ins), sr_type_short(t));
    sr_buf_free(&ins);
    return -1;
  }
  /* partition_spec._check and core._check_mat */
  const SrMesh *mm = b->mesh ? b->mesh : cx->mesh && cx->mesh->n ? sr_mesh_shape(cx->mesh) : NULL;
  struct { SrAxes a, b; const char *fmt; } ov[] = {
    {used, b->unreduced, "partitions cannot overlap with unreduced axes passed to PartitionSpec. Got partitions: %s and unreduced axes: %s"},
    {used, b->reduced, "partitions cannot overlap with reduced axes passed to PartitionSpec. Got partitions: %s and reduced axes: %s"},
    {b->unreduced, b->reduced, "`unreduced` and `reduced` argument to PartitionSpec cannot overlap. Got unreduced: %s and reduced: %s"},
    {b->varying, b->unreduced, "varying and unreduced cannot have common mesh axes. Got varying=%s and unreduced=%s"},
    {b->varying, b->reduced, "varying and reduced cannot have common mesh axes. Got varying=%s and reduced=%s"},
  };
  for (size_t k = 0; k < sizeof ov / sizeof ov[0]; k++) {
    if (!(ov[k].a & ov[k].b)) continue;
    SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
    if (k < 2) builder_partitions_str(&x, b);
    else sr_axes_frozenset_str(&x, mm, ov[k].a);
    sr_axes_frozenset_str(&y, mm, ov[k].b);
    sr_terr(cx, "ValueError", ov[k].fmt, sr_buf_str(&x), sr_buf_str(&y));
    sr_buf_free(&x);
    sr_buf_free(&y);
    return -1;
  }
  const SrType *t = sr_type_get(b);
  if (sr_check_divisible(cx, t) < 0) return -1;
  *out = t;
  return 0;
}

int sr_check_divisible(SrTypeCtx *cx, const SrType *t) {
  const SrMesh *m = t->mesh;
  for (int i = 0; m && !m->unsized && i < t->ndim; i++) {
    const SrDim *d = &t->dims[i];
    if (!d->nax || d->size < 0) continue;
    /* a product past int64 is larger than any size, so it cannot divide
       one (but 0) */
    int64_t parts = 1;
    int over = 0;
    for (int k = 0; k < d->nax && !over; k++) over = __builtin_mul_overflow(parts, m->sizes[d->ax[k]], &parts);
    if ((over && d->size) || (!over && d->size % parts != 0)) {
      /* core._check_divisibility prints the dimension's entry as a tuple */
      SrBuf sb = SR_BUF_INIT, shape = SR_BUF_INIT, sh = SR_BUF_INIT;
      sr_buf_putc(&sb, '(');
      for (int k = 0; k < d->nax; k++) sr_buf_printf(&sb, k ? ", '%s'" : "'%s'", m->names[d->ax[k]]);
      sr_buf_puts(&sb, d->nax == 1 ? ",)" : ")");
      sr_shape_str(&shape, t);
      sr_type_sharding_str(&sh, cx, t);
      SrBuf ps = SR_BUF_INIT;
      product_str(&ps, m, d);
      sr_terr(cx, "ValueError",
              "Sharding spec %s implies that array axis %d is partitioned %s times, but does not evenly "
              "divide the dimension size %lld. Got shape: %s and sharding %s",
              sr_buf_str(&sb), i, sr_buf_str(&ps), (long long)d->size, sr_buf_str(&shape), sr_buf_str(&sh));
      sr_buf_free(&ps);
      sr_buf_free(&sb);
      sr_buf_free(&shape);
      sr_buf_free(&sh);
      return -1;
    }
  }
  return 0;
}

int sr_terr_too_big(SrTypeCtx *cx) {
  return sr_terr(cx, "ValueError", "%s", SR_TOO_BIG_MSG);
}

int sr_type_rule(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) { return sr_type_rule_cached(cx, e, out); }

int sr_type_rule_run(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (e->prim->type(cx, e, out) < 0) return -1;
  for (uint32_t i = 0; i < e->nout; i++)
    if (out[i] && sr_type_too_big(out[i])) return sr_terr_too_big(cx);
  return 0;
}

int sr_all_weak(const SrRuleEqn *e) {
  int any = 0;
  for (uint32_t i = 0; i < e->nin; i++) {
    if (!e->in[i]) continue;
    any = 1;
    if (!e->in[i]->weak) return 0;
  }
  return any;
}

/* ---- the frame of a standard primitive ---- */

/* Same axis names (and sizes, where both know them): the type meshes of a
   parsed text are unsized, those of a traced value are not. */
static int same_mesh_shape(const SrMesh *a, const SrMesh *b) {
  if (a == b) return 1;
  if (!a || !b || a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++) {
    if (a->names[i] != b->names[i]) return 0;
    if (a->sizes[i] && b->sizes[i] && a->sizes[i] != b->sizes[i]) return 0;
  }
  return 1;
}

static int ctx_empty(const SrTypeCtx *cx) { return !cx->mesh || !cx->mesh->n; }

static SrShardMode ctx_mode(const SrTypeCtx *cx) {
  if (ctx_empty(cx)) return SR_MODE_EXPLICIT;
  int manual = 0;
  for (int i = 0; i < cx->mesh->n; i++) {
    if (cx->mesh->types[i] == SR_AXIS_EXPLICIT) return SR_MODE_EXPLICIT;
    if (cx->mesh->types[i] == SR_AXIS_MANUAL) manual++;
  }
  return manual == cx->mesh->n ? SR_MODE_MANUAL : SR_MODE_AUTO;
}

void sr_mesh_for_msg(SrBuf *out, SrTypeCtx *cx, const SrMesh *m) {
  if (!m || !m->n) {
    sr_mesh_str(out, sr_mesh_abstract(sr_mesh_empty(), 0));
  } else if (!ctx_empty(cx) && same_mesh_shape(m, sr_mesh_shape(cx->mesh))) {
    sr_mesh_str(out, sr_mesh_abstract(cx->mesh, cx->mesh->device_fields));
  } else {
    sr_mesh_str(out, sr_mesh_abstract(m, 0));
  }
}

int sr_std_begin(SrTypeCtx *cx, const SrRuleEqn *e, SrStd *s) {
  s->mode = ctx_mode(cx);
  s->mesh = ctx_empty(cx) ? NULL : sr_mesh_shape(cx->mesh);
  for (uint32_t i = 0; i < e->nin; i++) {
    const SrType *t = e->in[i];
    if (!t || !t->mesh) continue;
    if (!s->mesh) s->mesh = t->mesh;
    if (!ctx_empty(cx) && ctx_mode(cx) == SR_MODE_AUTO) continue; /* all-Auto meshes may differ */
    if (ctx_empty(cx) || same_mesh_shape(t->mesh, sr_mesh_shape(cx->mesh))) continue;
    /* core.check_avals_context_mesh; the source summary JAX appends is not
       ours to give */
    SrBuf cur = SR_BUF_INIT, am = SR_BUF_INIT, ts = SR_BUF_INIT;
    sr_mesh_str(&cur, sr_mesh_abstract(cx->mesh, cx->mesh->device_fields));
    sr_mesh_str(&am, sr_mesh_abstract(t->mesh, 0));
    sr_type_str(&ts, t, 0);
    sr_terr(cx, "ValueError", "For primitive %s, context mesh %s should match the aval mesh %s for shape %s.",
            e->prim->name, sr_buf_str(&cur), sr_buf_str(&am), sr_buf_str(&ts));
    sr_buf_free(&cur);
    sr_buf_free(&am);
    sr_buf_free(&ts);
    return -1;
  }
  /* call_sharding_rule: _get_abstract_mesh_from_avals */
  const SrMesh *m;
  if (s->mode == SR_MODE_EXPLICIT && sr_inputs_mesh(cx, e, "ValueError", &m) < 0) return -1;
  return 0;
}

int sr_inputs_mesh(SrTypeCtx *cx, const SrRuleEqn *e, const char *exc, const SrMesh **m) {
  *m = NULL;
  for (uint32_t i = 0; i < e->nin; i++) {
    const SrType *t = e->in[i];
    if (!t || !t->mesh || !t->mesh->n) continue;
    if (*m && !same_mesh_shape(*m, t->mesh)) {
      SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
      sr_mesh_for_msg(&a, cx, *m);
      sr_mesh_for_msg(&b, cx, t->mesh);
      sr_terr(cx, exc, "Mesh for all inputs should be equal. Got one mesh: %s and another mesh: %s", sr_buf_str(&a),
              sr_buf_str(&b));
      sr_buf_free(&a);
      sr_buf_free(&b);
      return -1;
    }
    *m = t->mesh;
  }
  return 0;
}

int sr_in_mesh_empty(SrTypeCtx *cx, const SrRuleEqn *e, uint32_t i) {
  const SrType *t = e->in[i];
  if (t->mesh) return 0;
  if (ctx_empty(cx)) return 1;
  if (e->inv) return e->inv[i]->kind == SR_LIT;
  return t->weak; /* a Python scalar */
}

void sr_builder_replicate(SrTypeBuilder *b) {
  for (int i = 0; i < b->ndim; i++) b->dims[i].nax = 0;
}

/* getu/getr look at the manual sets when every axis is Manual and at the
   explicit ones when every axis is Explicit; a mixed mesh has neither. */
static int sets_visible(SrTypeCtx *cx) {
  if (ctx_empty(cx)) return 1;
  SrAxes all = (SrAxes)((1ull << cx->mesh->n) - 1);
  return sr_mesh_axes_of_type(cx->mesh, SR_AXIS_MANUAL) == all ||
         sr_mesh_axes_of_type(cx->mesh, SR_AXIS_EXPLICIT) == all;
}

int sr_getu_kind(SrTypeCtx *cx, const SrType *t, int kind, SrAxes *out) {
  *out = sets_visible(cx) ? t->unreduced : 0;
  if (*out && t->ukind != kind)
    return sr_terr(cx, "ValueError", "Expected unreduced_kind=%s but got %s", sr_ukind_str(kind), sr_ukind_str(t->ukind));
  return 0;
}

int sr_getu(SrTypeCtx *cx, const SrType *t, SrAxes *out) { return sr_getu_kind(cx, t, SR_UK_SUM, out); }

SrAxes sr_getr(SrTypeCtx *cx, const SrType *t) { return sets_visible(cx) ? t->reduced : 0; }

int sr_ur_none(SrTypeCtx *cx, const SrRuleEqn *e, const SrStd *s, SrAxes out_ur) {
  /* utils.call_ur_rule: only the explicit sets are looked at, so in full
     manual mode the sets just do not pass */
  if (s->mode != SR_MODE_EXPLICIT) return 0;
  int any = out_ur != 0;
  for (uint32_t i = 0; i < e->nin && !any; i++)
    if (e->in[i] && (e->in[i]->unreduced | e->in[i]->reduced)) any = 1;
  if (!any) return 0;
  return sr_terr(cx, "NotImplementedError",
                 "unreduced/reduced rule for %s is not implemented. Please file an issue at "
                 "https://github.com/jax-ml/jax/issues",
                 e->prim->name);
}

void sr_axes_frozenset_str(SrBuf *out, const SrMesh *m, SrAxes axes) {
  if (!axes || !m) {
    sr_buf_puts(out, "frozenset()");
    return;
  }
  sr_buf_puts(out, "frozenset({");
  int first = 1;
  for (int i = 0; i < m->n; i++) {
    if (!(axes & (1u << i))) continue;
    if (!first) sr_buf_puts(out, ", ");
    first = 0;
    sr_buf_printf(out, "'%s'", m->names[i]);
  }
  sr_buf_puts(out, "})");
}

int sr_vma_standard(SrTypeCtx *cx, const SrRuleEqn *e, SrAxes *out) {
  *out = 0;
  if (!cx->check_vma || !e->nin) return 0;
  SrAxes v = e->in[0]->varying;
  uint32_t i;
  for (i = 1; i < e->nin; i++)
    if (e->in[i]->varying != v) break;
  if (i == e->nin) {
    *out = v;
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  const SrMesh *m = NULL;
  for (i = 0; i < e->nin && !m; i++) m = e->in[i]->mesh;
  if (!m && !ctx_empty(cx)) m = sr_mesh_shape(cx->mesh);
  sr_buf_putc(&b, '[');
  for (i = 0; i < e->nin; i++) {
    if (i) sr_buf_puts(&b, ", ");
    sr_axes_frozenset_str(&b, e->in[i]->mesh ? e->in[i]->mesh : m, e->in[i]->varying);
  }
  sr_buf_putc(&b, ']');
  sr_terr(cx, "ValueError",
          "Primitive %s requires varying manual axes to match, but got %s. Please open an issue at "
          "https://github.com/jax-ml/jax/issues and as a temporary workaround pass the check_vma=False "
          "argument to `jax.shard_map`",
          e->prim->name, sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

int sr_mem_default(SrTypeCtx *cx, const SrRuleEqn *e, const char **out) {
  static const char *any;
  if (!any) any = sr_intern_cstr("any");
  uint32_t nany = 0;
  for (uint32_t i = 0; i < e->nin; i++)
    if (e->in[i]->mem == any) nany++;
  if (e->nin && nany == e->nin) {
    *out = any;
    return 0;
  }
  const SrType *prev = NULL;
  for (uint32_t i = 0; i < e->nin; i++) {
    const SrType *t = e->in[i];
    if (!t->ndim) continue;
    if (prev && prev->mem != t->mem) {
      SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
      sr_type_str(&a, prev, 0);
      sr_type_str(&b, t, 0);
      sr_terr(cx, "ValueError",
              "memory_space of all inputs passed to `%s` must be the same. Got one operand with type: %s and "
              "another operand with type: %s",
              e->prim->name, sr_buf_str(&a), sr_buf_str(&b));
      sr_buf_free(&a);
      sr_buf_free(&b);
      return -1;
    }
    prev = t;
  }
  *out = prev ? prev->mem : NULL;
  return 0;
}

int sr_rule_arity(SrTypeCtx *cx, const SrRuleEqn *e, int nin, int nout) {
  if (nin >= 0 && e->nin != (uint32_t)nin)
    return sr_terr(cx, "TypeError", "%s takes %d operand%s, got %u", e->prim->name, nin, nin == 1 ? "" : "s",
                   e->nin);
  if (nout >= 0 && e->nout != (uint32_t)nout)
    return sr_terr(cx, "TypeError", "%s has %d result%s, but %u are bound", e->prim->name, nout,
                   nout == 1 ? "" : "s", e->nout);
  return 0;
}

const SrType *sr_written(const SrRuleEqn *e, uint32_t i) {
  if (!e->written || i >= e->nout) return NULL;
  const SrType *t = e->written[i];
  if (t && sr_dtype_name(t->dtype)[0] == '*') return NULL; /* an old printer's unknown type */
  return t;
}

/* ---- dtypes ---- */

int sr_dtype_in(SrDtype d, unsigned classes) {
  switch (sr_dtype_kind(d)) {
  case SR_DK_BOOL: return (classes & SR_DC_BOOL) != 0;
  case SR_DK_INT: return (classes & SR_DC_SIGNED) != 0;
  case SR_DK_UINT: return (classes & SR_DC_UNSIGNED) != 0;
  case SR_DK_FLOAT:
    return (classes & SR_DC_FLOAT) || (d == SR_F32 && (classes & SR_DC_F32)) || (d == SR_F64 && (classes & SR_DC_F64));
  case SR_DK_COMPLEX: return (classes & SR_DC_COMPLEX) != 0;
  default: return 0;
  }
}

void sr_dtype_classes_str(SrBuf *out, unsigned c) {
  /* JAX joins the __name__s of a Python set of numpy classes, whose order
     is that of their hashes; this is the order lax.py writes them in */
  const char *names[8];
  int n = 0;
  if (c & SR_DC_F32) names[n++] = "float32";
  if (c & SR_DC_F64) names[n++] = "float64";
  if ((c & SR_DC_INT) == SR_DC_INT) names[n++] = "integer";
  else if (c & SR_DC_SIGNED) names[n++] = "signedinteger";
  else if (c & SR_DC_UNSIGNED) names[n++] = "unsignedinteger";
  if (c & SR_DC_FLOAT) names[n++] = "floating";
  if (c & SR_DC_COMPLEX) names[n++] = "complexfloating";
  if (c & SR_DC_BOOL) names[n++] = "bool";
  for (int i = 0; i < n; i++) sr_buf_printf(out, i ? ", %s" : "%s", names[i]);
}

static const char *jnp_equivalent(const char *name) {
  static const char *const tab[][2] = {
    {"abs", "fabs"}, {"acos", "arccos"}, {"acosh", "arccosh"}, {"add", "add"}, {"asin", "arcsin"},
    {"asinh", "arcsinh"}, {"atan", "arctan"}, {"atan2", "arctan2"}, {"atanh", "arctanh"},
    {"bitwise_and", "bitwise_and"}, {"bitwise_not", "bitwise_not"}, {"bitwise_or", "bitwise_or"},
    {"bitwise_xor", "bitwise_xor"}, {"cbrt", "cbrt"}, {"ceil", "ceil"}, {"concatenate", "concatenate"},
    {"cos", "cos"}, {"cosh", "cosh"}, {"div", "divide"}, {"eq", "equal"}, {"exp", "exp"}, {"expm1", "expm1"},
    {"floor", "floor"}, {"greater", "greater"}, {"greater_equal", "greater_equal"}, {"less", "less"},
    {"less_equal", "less_equal"}, {"log", "log"}, {"logical_and", "logical_and"},
    {"logical_not", "logical_not"}, {"logical_or", "logical_or"}, {"logical_xor", "logical_xor"},
    {"log1p", "log1p"}, {"max", "maximum"}, {"min", "minimum"}, {"mul", "multiply"}, {"ne", "not_equal"},
    {"neg", "negative"}, {"nextafter", "nextafter"}, {"pow", "float_power"}, {"round", "round"},
    {"select", "where"}, {"shift_left", "left_shift"}, {"shift_right_logical", "right_shift"},
    {"shift_right_arithmetic", "right_shift"}, {"sign", "sign"}, {"sin", "sin"}, {"sinh", "sinh"},
    {"sqrt", "sqrt"}, {"sub", "subtract"}, {"tan", "tan"}, {"tanh", "tanh"},
  };
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strcmp(tab[i][0], name) == 0) return tab[i][1];
  return NULL;
}

int sr_check_same_dtypes(SrTypeCtx *cx, const char *name, const SrType *const *ts, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (sr_dtype_kind(ts[i]->dtype) == SR_DK_OTHER) return 0; /* extended dtypes go unchecked */
  if (n < 2) return 0;
  uint32_t i;
  for (i = 1; i < n; i++)
    if (ts[i]->dtype != ts[0]->dtype) break;
  if (i == n) return 0;
  SrBuf b = SR_BUF_INIT;
  for (i = 0; i < n; i++) sr_buf_printf(&b, i ? ", %s" : "%s", sr_dtype_name(ts[i]->dtype));
  const char *eq = jnp_equivalent(name);
  if (eq)
    sr_terr(cx, "TypeError",
            "lax.%s requires arguments to have the same dtypes, got %s. (Tip: jnp.%s is a similar function that "
            "does automatic type promotion on inputs).",
            name, sr_buf_str(&b), eq);
  else
    sr_terr(cx, "TypeError", "lax.%s requires arguments to have the same dtypes, got %s.", name, sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

int sr_float0_error(SrTypeCtx *cx, const char *name, int pos) {
  SrBuf at = SR_BUF_INIT;
  if (pos >= 0) sr_buf_printf(&at, " at position %d", pos);
  sr_terr(cx, "TypeError",
          "Called %s with a float0%s%s. float0s do not support any operations by design, because they are not "
          "compatible with non-trivial vector spaces. No implicit dtype conversion is done. You can use "
          "np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular zeros array. \n"
          "If you didn't expect to get a float0 you might have accidentally taken a gradient with respect to "
          "an integer argument.",
          name, pos >= 0 ? "" : " array", sr_buf_str(&at));
  sr_buf_free(&at);
  return -1;
}

void sr_resolve_bare_literals(const SrRuleEqn *e, const SrType **ts) {
  const SrType *typed = NULL;
  for (uint32_t i = 0; i < e->nin; i++) {
    ts[i] = e->in[i];
    if (!typed && !(e->inv && sr_is_bare_lit(e->inv[i]))) typed = e->in[i];
  }
  if (!typed || !e->inv) return;
  for (uint32_t i = 0; i < e->nin; i++) {
    if (!sr_is_bare_lit(e->inv[i])) continue;
    /* an int literal stays an int next to a float operand only if JAX
       would have kept it: weak ints become the float's dtype too */
    ts[i] = sr_type_with_dtype(ts[i], typed->dtype);
  }
}

/* ---- text for messages ---- */

void sr_aval_str(SrBuf *out, const SrType *t) { sr_type_long(out, t); }

void sr_aval_repr(SrBuf *out, const SrType *t) {
  sr_buf_puts(out, "ShapedArray(");
  sr_type_str(out, t, 0);
  if (t->weak) sr_buf_puts(out, ", weak_type=True");
  sr_buf_putc(out, ')');
}

static int axis_type_of(SrTypeCtx *cx, const SrMesh *m, int i) {
  int k = ctx_empty(cx) ? -1 : sr_mesh_axis(cx->mesh, m->names[i]);
  return k < 0 ? SR_AXIS_EXPLICIT : cx->mesh->types[k];
}

void sr_aval_str_axis_types(SrBuf *out, SrTypeCtx *cx, const SrType *t) { sr_aval_str_short(out, cx, t, 0, 1); }

void sr_aval_str_short(SrBuf *out, SrTypeCtx *cx, const SrType *t, int short_dtypes, int mesh_axis_types) {
  sr_type_str(out, t, short_dtypes);
  if (!mesh_axis_types) return;
  const SrMesh *m = t->mesh;
  if (!m && !ctx_empty(cx)) m = cx->mesh;
  /* core._axis_types_dict: {Explicit: ('X', 'Y'), Manual: ('Z',)}, the
     types in order of first appearance */
  sr_buf_puts(out, "({");
  int done[3] = {0, 0, 0}, first = 1;
  for (int i = 0; m && i < m->n; i++) {
    int ty = axis_type_of(cx, m, i);
    if (done[ty]) continue;
    done[ty] = 1;
    sr_buf_printf(out, "%s%s: (", first ? "" : ", ", sr_axis_type_name(ty));
    first = 0;
    int cnt = 0;
    for (int k = i; k < m->n; k++) {
      if (axis_type_of(cx, m, k) != ty) continue;
      sr_buf_printf(out, cnt ? ", '%s'" : "'%s'", m->names[k]);
      cnt++;
    }
    sr_buf_puts(out, cnt == 1 ? ",)" : ")");
  }
  sr_buf_puts(out, "})");
}

void sr_ints_str(SrBuf *out, const int64_t *v, int n) {
  sr_buf_putc(out, '(');
  for (int i = 0; i < n; i++) sr_buf_printf(out, i ? ", %lld" : "%lld", (long long)v[i]);
  sr_buf_puts(out, n == 1 ? ",)" : ")");
}

void sr_shape_str(SrBuf *out, const SrType *t) {
  sr_buf_putc(out, '(');
  for (int i = 0; i < t->ndim; i++) {
    if (i) sr_buf_puts(out, ", ");
    if (t->dims[i].sym)
      sr_buf_puts(out, t->dims[i].sym);
    else
      sr_buf_printf(out, "%lld", (long long)t->dims[i].size);
  }
  sr_buf_puts(out, t->ndim == 1 ? ",)" : ")");
}

void sr_partitions_str(SrBuf *out, const SrType *t, const int64_t *dims, int n) {
  if (!dims) n = t->ndim;
  sr_buf_putc(out, '(');
  for (int i = 0; i < n; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_dim_spec_str(out, t, dims ? (int)dims[i] : i);
  }
  sr_buf_puts(out, n == 1 ? ",)" : ")");
}

void sr_type_spec_repr(SrBuf *out, const SrType *t) {
  SrShardSpec s;
  sr_shard_of_type(t, &s);
  if (!s.mesh) s.mesh = sr_mesh_empty();
  SrVal *v = sr_shard_to_spec_val(&s);
  sr_spec_repr(out, v->spec);
  sr_unref(v);
}

int sr_spec_entry_eq(const SrType *a, int i, const SrType *b, int j) {
  const SrDim *x = &a->dims[i], *y = &b->dims[j];
  if (x->nax != y->nax) return 0;
  for (int k = 0; k < x->nax; k++)
    if (a->mesh->names[x->ax[k]] != b->mesh->names[y->ax[k]]) return 0;
  return 1;
}

SrAxes sr_axes_remap(SrAxes axes, const SrMesh *from, const SrMesh *to) {
  if (!axes || from == to) return axes;
  SrAxes out = 0;
  for (int i = 0; from && i < from->n; i++) {
    if (!(axes & (1u << i))) continue;
    int k = to ? sr_mesh_axis(to, from->names[i]) : -1;
    if (k >= 0) out |= 1u << k;
  }
  return out;
}

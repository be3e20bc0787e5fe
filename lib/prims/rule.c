/* rule.c: helpers shared by the type rules. */
#include "prims/rule.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

int sr_spec_to_shard(SrTypeCtx *cx, const SrVal *v, const SrMesh *m, int ndim, SrShardSpec *out) {
  memset(out, 0, sizeof *out);
  out->mesh = m;
  out->ndim = ndim;
  const SrSpec *s;
  if (v->kind == SR_V_SHARDING) {
    s = v->sh.spec;
    if (!m) m = out->mesh = sr_mesh_shape(v->sh.mesh);
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
    SrBuf b = SR_BUF_INIT;
    sr_spec_repr(&b, s);
    sr_terr(cx, "ValueError",
            "PartitionSpec %s is only valid for values of rank at least %d, but was applied to a value of rank %d.%s",
            sr_buf_str(&b), s->n, ndim, ndim == 0 ? " For scalars the PartitionSpec should be P()" : "");
    sr_buf_free(&b);
    return -1;
  }
  for (int i = 0; i < s->n; i++) {
    const SrSpecEntry *en = &s->e[i];
    for (int k = 0; k < en->n; k++) {
      if (en->names[k] == SR_SPEC_UNCONSTRAINED) continue;
      int a = m ? sr_mesh_axis(m, en->names[k]) : -1;
      if (a < 0) return sr_terr(cx, "ValueError", "Resource axis: %s of a sharding is not found in the mesh", en->names[k]);
      if (out->nax[i] == SR_MAX_DIM_AXES) return sr_terr(cx, "ValueError", "too many mesh axes on one dimension");
      out->ax[i][out->nax[i]++] = (uint8_t)a;
    }
  }
  for (int k = 0; k < s->nunreduced; k++) {
    int a = m ? sr_mesh_axis(m, s->unreduced[k]) : -1;
    if (a < 0) return sr_terr(cx, "ValueError", "Resource axis: %s of a sharding is not found in the mesh", s->unreduced[k]);
    out->unreduced |= 1u << a;
  }
  for (int k = 0; k < s->nreduced; k++) {
    int a = m ? sr_mesh_axis(m, s->reduced[k]) : -1;
    if (a < 0) return sr_terr(cx, "ValueError", "Resource axis: %s of a sharding is not found in the mesh", s->reduced[k]);
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
  SrAxes a = 0;
  for (int k = 0; k < d->nax; k++) a |= 1u << d->ax[k];
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
  SrVal *sh = sr_sharding_val(NULL, sr_mesh_abstract(m, cx->mesh && cx->mesh->device_fields), spec->spec, NULL);
  sr_val_str(out, sh);
  sr_unref(sh);
  sr_unref(spec);
}

int sr_finish_type(SrTypeCtx *cx, const SrRuleEqn *e, SrTypeBuilder *b, const SrType **out) {
  SrAxes used = b->unreduced | b->reduced | b->varying;
  int dup = (b->unreduced & b->reduced) || (b->varying & (b->unreduced | b->reduced));
  for (int i = 0; i < b->ndim && !dup; i++)
    for (int k = 0; k < b->dims[i].nax; k++) {
      SrAxes bit = 1u << b->dims[i].ax[k];
      if (used & bit) dup = 1;
      used |= bit;
    }
  if (dup) {
    /* the type is still printable: build it without checks for the message */
    const SrType *t = sr_type_get(b);
    SrBuf ins = SR_BUF_INIT;
    sr_inputs_str(&ins, e);
    sr_terr(cx, "ShardingTypeError", "%s operation with inputs: %s produces an illegally sharded result: %s",
            e->prim->name, sr_buf_str(&ins), sr_type_short(t));
    sr_buf_free(&ins);
    return -1;
  }
  const SrMesh *m = b->mesh;
  for (int i = 0; m && !m->unsized && i < b->ndim; i++) {
    const SrDim *d = &b->dims[i];
    if (!d->nax || d->size < 0) continue;
    int64_t parts = 1;
    for (int k = 0; k < d->nax; k++) parts *= m->sizes[d->ax[k]];
    if (d->size % parts != 0) {
      const SrType *t = sr_type_get(b);
      SrShardSpec s;
      sr_shard_of_type(t, &s);
      SrVal *spec = sr_shard_to_spec_val(&s);
      SrBuf sb = SR_BUF_INIT, shape = SR_BUF_INIT, sh = SR_BUF_INIT;
      sr_val_repr(&sb, spec);
      sr_buf_putc(&shape, '(');
      for (int k = 0; k < b->ndim; k++) sr_buf_printf(&shape, k ? ", %lld" : "%lld", (long long)b->dims[k].size);
      sr_buf_puts(&shape, b->ndim == 1 ? ",)" : ")");
      sr_type_sharding_str(&sh, cx, t);
      sr_terr(cx, "ValueError",
              "Sharding spec %s implies that array axis %d is partitioned %lld times, but does not evenly "
              "divide the dimension size %lld. Got shape: %s and sharding %s",
              sr_buf_str(&sb), i, (long long)parts, (long long)d->size, sr_buf_str(&shape), sr_buf_str(&sh));
      sr_buf_free(&sb);
      sr_buf_free(&shape);
      sr_buf_free(&sh);
      sr_unref(spec);
      return -1;
    }
  }
  *out = sr_type_get(b);
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

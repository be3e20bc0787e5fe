/* stages.c: the stages of jax.jit (jax._src.stages): jit(f, ...).trace(*args)
 * gives a Traced stage (.jaxpr, .lower()), .lower() a Lowered one
 * (.as_text(), .compile()) and .compile() a Compiled one, which chooses
 * Layout.AUTO layouts (exec/layout.h: sr_local_auto), reports them in
 * input_formats / output_formats, shows the optimized program in
 * as_text(), and when called requires a committed argument to have the
 * sharding and layout it was compiled for (layout.h declares the entry
 * points; the shardings and layouts come from layout.c).
 */
#include "jax/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"
#include "exec/array.h"
#include "exec/layout.h"
#include "jax/api.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "jax/tracers.h"
#include "core/jaxstate.h"
#include "jax/tree_util.h"
#include "util/intern.h"
#include "opt/opt.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/mem.h"

/* ---- the stages: Traced, Lowered, Compiled ---- */

enum { ST_TRACED, ST_LOWERED, ST_COMPILED };

typedef struct Stage {
  int kind;
  SrVal *fn;
  const char *name;
  SrVal *in_sh, *out_sh; /* jit's, or NULL */
  SrVal *jaxpr;          /* the body */
  SrVal *args;           /* a tuple: the positional arguments traced */
  SrVal *kwargs;         /* a dict: the keyword ones */
  SrVal *donated;        /* a tuple: per argument leaf, whether donated */
  SrVal *out_tree;       /* the result, as traced */
  int ncaptured;
  int pjit; /* traced from a jax.experimental.pjit.pjit (its context mesh) */
  SrVal *device; /* jit's device= (its results are put there), or NULL */
  /* compiled: */
  SrVal *in_formats, *out_formats;  /* what input_formats / output_formats show */
  SrVal *call_in, *call_out;        /* the in/out_shardings of its calls */
  SrVal *arg_leaves;                /* per argument leaf: its Format (list) */
  SrVal *call_leaves;               /* per argument leaf: its call's Format */
} Stage;

static void stage_free(void *d) {
  Stage *s = d;
  sr_unref(s->fn);
  sr_unref(s->in_sh);
  sr_unref(s->out_sh);
  sr_unref(s->jaxpr);
  sr_unref(s->args);
  sr_unref(s->kwargs);
  sr_unref(s->donated);
  sr_unref(s->out_tree);
  sr_unref(s->device);
  sr_unref(s->in_formats);
  sr_unref(s->out_formats);
  sr_unref(s->call_in);
  sr_unref(s->call_out);
  sr_unref(s->arg_leaves);
  sr_unref(s->call_leaves);
  free(s);
}

static void stage_repr(SrBuf *out, const SrVal *v);
static SrVal *stage_getattr(SrInterp *I, SrVal *self, const char *name);
static SrVal *stage_call(SrInterp *I, SrVal *self, SrArgs *a);
static const SrLangOps stage_ops = {.call = stage_call, .getattr = stage_getattr};
static const SrClass traced_class = {"Traced", stage_free, stage_repr, NULL, &stage_ops};
static const SrClass lowered_class = {"Lowered", stage_free, stage_repr, NULL, &stage_ops};
static const SrClass compiled_class = {"Compiled", stage_free, stage_repr, NULL, &stage_ops};

static const SrClass *stage_class(int kind) {
  return kind == ST_TRACED ? &traced_class : kind == ST_LOWERED ? &lowered_class : &compiled_class;
}

static Stage *stage_of(const SrVal *v) {
  if (!v || v->kind != SR_V_OBJ) return NULL;
  if (v->obj.cls == &traced_class || v->obj.cls == &lowered_class || v->obj.cls == &compiled_class) return v->obj.data;
  return NULL;
}

static void stage_repr(SrBuf *out, const SrVal *v) {
  const Stage *s = v->obj.data;
  static const char *const names[] = {"Traced", "Lowered", "Compiled"};
  sr_buf_printf(out, "<jax._src.stages.%s object of %s>", names[s->kind], s->name);
}

static Stage *stage_copy(const Stage *s, int kind) {
  Stage *c = sr_xcalloc(1, sizeof *c);
  c->kind = kind;
  c->fn = sr_ref(s->fn);
  c->name = s->name;
  c->in_sh = s->in_sh ? sr_ref(s->in_sh) : NULL;
  c->out_sh = s->out_sh ? sr_ref(s->out_sh) : NULL;
  c->jaxpr = sr_ref(s->jaxpr);
  c->args = sr_ref(s->args);
  c->kwargs = sr_ref(s->kwargs);
  c->donated = sr_ref(s->donated);
  c->out_tree = sr_ref(s->out_tree);
  c->ncaptured = s->ncaptured;
  c->pjit = s->pjit;
  c->device = s->device ? sr_ref(s->device) : NULL;
  return c;
}

SrVal *sr_jit_stage_trace(SrInterp *I, SrVal *fn, const char *name, SrVal *in_sh, SrVal *out_sh, SrArgs *a,
                          const uint8_t *donated, int ndon) {
  if (in_sh && a->nkw) return sr_raise(I, "ValueError", "pjit does not support kwargs when in_shardings is specified.");
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *body = sr_trace_fn(I, fn, a->n, a->v, a->nkw, a->kw, a->kwv, SR_TRACE_KWARGS, &out_tree, &captured);
  if (!body) return NULL;
  return sr_jit_stage_of_trace(I, body, out_tree, captured, fn, name, in_sh, out_sh, a, donated, ndon);
}

SrVal *sr_jit_stage_of_trace(SrInterp *I, SrJaxpr *body, SrVal *out_tree, SrVal *captured, SrVal *fn, const char *name,
                             SrVal *in_sh, SrVal *out_sh, SrArgs *a, const uint8_t *donated, int ndon) {
  Stage *s = sr_xcalloc(1, sizeof *s);
  s->kind = ST_TRACED;
  s->pjit = I->jax->pjit_call;
  s->fn = sr_ref(fn);
  s->name = name;
  s->in_sh = in_sh ? sr_ref(in_sh) : NULL;
  s->out_sh = out_sh ? sr_ref(out_sh) : NULL;
  s->jaxpr = sr_jaxpr_val(NULL, body);
  sr_program_unref(body->prog);
  s->args = sr_seq(NULL, SR_V_TUPLE, a->n);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, s->args, sr_ref(a->v[i]));
  s->kwargs = sr_dict(NULL);
  for (int i = 0; i < a->nkw; i++) sr_dict_set(NULL, s->kwargs, sr_str_cstr(NULL, a->kw[i]), sr_ref(a->kwv[i]));
  SrVal *pair[2] = {sr_ref(s->args), sr_ref(s->kwargs)};
  SrVal *ak = sr_tuple(NULL, 2, pair);
  SrVal *flat = sr_pytree_flatten(I, ak);
  sr_unref(ak);
  int nleaves = flat ? flat->seq.n : 0;
  sr_unref(flat);
  s->donated = sr_seq(NULL, SR_V_TUPLE, nleaves);
  for (int i = 0; i < nleaves; i++) sr_seq_push(NULL, s->donated, sr_bool(donated && i < ndon && donated[i]));
  s->out_tree = out_tree;
  s->ncaptured = captured ? captured->seq.n : 0;
  sr_unref(captured);
  return sr_obj(&traced_class, s);
}

SrVal *sr_jit_stage_lower(SrInterp *I, SrVal *traced) {
  Stage *s = stage_of(traced);
  if (!s) return sr_raise(I, "TypeError", "lower() of something that is not a traced jit");
  return sr_obj(&lowered_class, stage_copy(s, ST_LOWERED));
}

/* The sharding input_formats shows for an argument leaf given none. */
/* The sharding an argument given none is compiled for: a committed
   array's own; else replicated over the computation's devices (da, a
   mesh of several devices: pxla's device assignment), else jit's default */
static SrVal *default_sharding(SrInterp *I, SrVal *x, const SrType *t, const SrMesh *da) {
  SrArrayObj *o = sr_array_of(x);
  if (o && o->kind == SR_AV_CONCRETE && (o->data->committed || !da)) return sr_concrete_array_sharding(o->data);
  if (o && o->sharding) return sr_ref(o->sharding);
  if (da && (!t || !t->mesh || !t->mesh->n)) {
    SrVal *sp = sr_call(I, sr_lookup_qualname("jax.sharding.PartitionSpec"), &(SrArgs){0});
    SrVal *r = sp ? sr_sharding_val(NULL, da, sp->spec, sr_intern_cstr("device")) : NULL;
    sr_unref(sp);
    if (r) return r;
    sr_exc_clear(I);
  }
  return sr_jit_default_sharding(I, t);
}

/* pxla's device assignment of a stage: the context mesh's, else the first
   explicit in/out sharding's, else a committed argument's (NULL: one
   device) */
static const SrMesh *stage_devices(SrInterp *I, Stage *s, const SrJitFlat *fi, const SrJitFlat *fo) {
  const SrMesh *m = sr_jit_ctx_mesh(I);
  if (m && !m->abstract && m->n) return sr_mesh_ndev(m) > 1 ? m : NULL;
  for (int pass = 0; pass < 2; pass++) {
    const SrJitFlat *f = pass ? fo : fi;
    for (int i = 0; i < f->n; i++) {
      SrVal *e = f->e[i].sh;
      if (e && e->kind == SR_V_SHARDING && !e->sh.mesh->abstract && e->sh.mesh->n)
        return sr_mesh_ndev(e->sh.mesh) > 1 ? e->sh.mesh : NULL;
    }
  }
  for (int i = 0; i < s->args->seq.n; i++) {
    SrVal *leaves = sr_pytree_flatten_any(I, s->args->seq.items[i]);
    if (I->exc) sr_exc_clear(I);
    for (int q = 0; leaves && q < leaves->seq.n; q++) {
      SrArrayObj *o = sr_array_of(leaves->seq.items[q]);
      const SrMesh *am = NULL;
      if (o && o->kind == SR_AV_CONCRETE && o->data->committed) am = o->data->mesh;
      else if (o && o->sharding && o->sharding->kind == SR_V_SHARDING && !o->sharding->sh.mesh->abstract)
        am = o->sharding->sh.mesh;
      if (am) {
        sr_unref(leaves);
        return am->n && sr_mesh_ndev(am) > 1 ? am : NULL;
      }
    }
    sr_unref(leaves);
  }
  return NULL;
}

static SrVal *compile_stage1(SrInterp *I, Stage *s);
static SrVal *compile_stage(SrInterp *I, Stage *s) {
  int was = I->jax->pjit_call;
  I->jax->pjit_call = s->pjit;
  SrVal *r = compile_stage1(I, s);
  I->jax->pjit_call = was;
  return r;
}

static SrVal *compile_stage1(SrInterp *I, Stage *s) {
  SrJitFlat fi = {0}, fo = {0};
  SrVal *res = NULL;
  if (sr_jit_flat_entries(I, s->in_sh, s->args->seq.n, s->args->seq.items, NULL, "in_shardings", &fi) < 0 ||
      sr_jit_flat_entries(I, s->out_sh, 0, NULL, s->out_tree, "out_shardings", &fo) < 0)
    goto done;
  const SrJaxpr *j = s->jaxpr->jx.jaxpr;
  const SrMesh *da = stage_devices(I, s, &fi, &fo);
  Stage *c = stage_copy(s, ST_COMPILED);
  /* inputs, per argument: the resolved Formats as input_formats shows
     them, and as the calls use them (the user's sharding, or none) */
  SrVal *shown = sr_seq(NULL, SR_V_TUPLE, s->args->seq.n);
  c->call_in = sr_seq(NULL, SR_V_TUPLE, s->args->seq.n);
  c->arg_leaves = sr_seq(NULL, SR_V_LIST, fi.n);
  c->call_leaves = sr_seq(NULL, SR_V_LIST, fi.n);
  int k = 0;
  for (int i = 0; i < s->args->seq.n; i++) {
    SrVal *arg = s->args->seq.items[i];
    SrVal *leaves = sr_pytree_flatten(I, arg);
    SrVal *fs = sr_seq(NULL, SR_V_LIST, leaves ? leaves->seq.n : 0);
    SrVal *cs = sr_seq(NULL, SR_V_LIST, leaves ? leaves->seq.n : 0);
    for (int q = 0; leaves && q < leaves->seq.n; q++, k++) {
      SrVal *x = leaves->seq.items[q];
      const SrType *t = sr_value_type(I, x);
      SrJitEntry *e = &fi.e[k];
      uint8_t m2m[SR_MAX_RANK];
      int nd = t ? t->ndim : 0;
      if (e->lay && sr_is_layout(e->lay) && sr_layout_dims(e->lay, m2m) == nd) {
      } else if (e->lay && sr_is_layout_auto(e->lay)) {
        sr_local_auto(j, (uint32_t)(s->ncaptured + k), nd, m2m);
      } else {
        for (int d = 0; d < nd; d++) m2m[d] = (uint8_t)d;
      }
      SrVal *lv = sr_layout_val(nd, m2m);
      SrVal *sh = e->sh ? sr_ref(e->sh) : default_sharding(I, x, t, da);
      SrVal *f = sr_format_val(lv, sh);
      sr_seq_push(NULL, c->arg_leaves, sr_ref(f));
      sr_seq_push(NULL, fs, f);
      sr_seq_push(NULL, cs, sr_format_val(lv, e->sh));
      sr_seq_push(NULL, c->call_leaves, sr_format_val(lv, e->sh));
      sr_unref(lv);
      sr_unref(sh);
    }
    sr_seq_push(NULL, shown, sr_pytree_unflatten(arg, fs));
    sr_seq_push(NULL, c->call_in, sr_pytree_unflatten(arg, cs));
    sr_unref(fs);
    sr_unref(cs);
    sr_unref(leaves);
  }
  c->in_formats = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, c->in_formats, shown);
  sr_seq_push(NULL, c->in_formats, sr_dict(NULL));
  /* outputs: AUTO and None are row-major */
  SrVal *outs = sr_pytree_flatten(I, s->out_tree);
  SrVal *os = sr_seq(NULL, SR_V_LIST, fo.n), *ocs = sr_seq(NULL, SR_V_LIST, fo.n);
  for (int q = 0; outs && q < outs->seq.n && q < fo.n; q++) {
    const SrType *t = sr_value_type(I, outs->seq.items[q]);
    int nd = t ? t->ndim : 0;
    uint8_t m2m[SR_MAX_RANK];
    SrJitEntry *e = &fo.e[q];
    if (!(e->lay && sr_is_layout(e->lay) && sr_layout_dims(e->lay, m2m) == nd))
      for (int d = 0; d < nd; d++) m2m[d] = (uint8_t)d;
    SrVal *lv = sr_layout_val(nd, m2m);
    SrVal *sh = e->sh ? sr_ref(e->sh) : sr_jit_default_sharding(I, t);
    sr_seq_push(NULL, os, sr_format_val(lv, sh));
    sr_seq_push(NULL, ocs, sr_format_val(lv, e->sh));
    sr_unref(lv);
    sr_unref(sh);
  }
  c->out_formats = sr_pytree_unflatten(s->out_tree, os);
  c->call_out = sr_pytree_unflatten(s->out_tree, ocs);
  sr_unref(os);
  sr_unref(ocs);
  sr_unref(outs);
  res = sr_obj(&compiled_class, c);
done:
  sr_jit_flat_free(&fi);
  sr_jit_flat_free(&fo);
  return res;
}

/* The name of argument i for messages: its parameter's name when the
   argument is one leaf (JAX names leaves by their key paths), else
   args[i]. */
static void arg_name(SrBuf *out, Stage *s, int i, int single) {
  SrFunction *f = sr_as_function(s->fn);
  if (single && f && f->node && f->node->params && i < f->node->params->n) sr_buf_puts(out, f->node->params->names[i]);
  else sr_buf_printf(out, "args[%d]", i);
}

/* tree_util.equality_errors for a call's (args, kwargs) against the
   compiled ones: the mismatches as stages.py's Compiled.call words them
   ("    * at args[0], seen X but now given Y, so Z"), counted in *n. */
static int same_keys(SrVal *a, SrVal *b);
static SrVal *stage_args_kwargs(Stage *s);

static const char *thing_word(SrVal *v, SrBuf *tmp) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) return "pytree leaf";
  sr_unref(ch);
  sr_buf_reset(tmp);
  sr_buf_printf(tmp, "<class '%s'>", v->kind == SR_V_NONE ? "NoneType" : sr_val_kind_name(v));
  return sr_buf_str(tmp);
}

static void tree_mismatches(SrBuf *msg, SrBuf *path, SrVal *now, SrVal *seen, int *n) {
  SrVal *nc = sr_pytree_children(now), *sc = sr_pytree_children(seen);
  if (!nc && !sc) return;
  SrBuf t1 = SR_BUF_INIT, t2 = SR_BUF_INIT;
  const char *base = path->len && path->p[1] == '1' ? "kwargs" : "args";
  const char *rest = path->len > 3 ? path->p + 3 : "";
  if (!nc || !sc || now->kind != seen->kind || (now->kind == SR_V_OBJ && now->obj.cls != seen->obj.cls)) {
    sr_buf_printf(msg, "\n    * at %s%s, seen %s but now given %s, so their Python types differ", base, rest,
                  thing_word(seen, &t2), thing_word(now, &t1));
    ++*n;
  } else if (nc->seq.n != sc->seq.n && (now->kind == SR_V_TUPLE || now->kind == SR_V_LIST)) {
    sr_buf_printf(msg, "\n    * at %s%s, seen %s of length %d but now given %s of length %d, so the lengths do not match",
                  base, rest, sr_val_kind_name(seen), sc->seq.n, sr_val_kind_name(now), nc->seq.n);
    ++*n;
  } else if (nc->seq.n != sc->seq.n) {
    sr_buf_printf(msg,
                  "\n    * at %s%s, seen <class '%s'> with %d child%s but now given <class '%s'> with %d child%s, so the "
                  "numbers of children do not match",
                  base, rest, sr_val_kind_name(seen), sc->seq.n, sc->seq.n > 1 ? "ren" : "", sr_val_kind_name(now),
                  nc->seq.n, nc->seq.n > 1 ? "ren" : "");
    if (now->kind == SR_V_DICT) {
      /* the symmetric difference of the key sets */
      SrBuf d = SR_BUF_INIT;
      for (int pass = 0; pass < 2; pass++) {
        SrVal *a = pass ? seen : now, *b = pass ? now : seen;
        for (int i = 0; i < a->dict.n; i++)
          if (!sr_dict_get(b, a->dict.keys[i])) {
            if (d.len) sr_buf_putc(&d, ' ');
            sr_val_repr(&d, a->dict.keys[i]);
          }
      }
      if (d.len) sr_buf_printf(msg, ", with the symmetric difference of key sets: {%s}", d.p);
      sr_buf_free(&d);
    }
    ++*n;
  } else if (now->kind == SR_V_DICT && !same_keys(now, seen)) {
    /* the keys are a dict node's metadata */
    SrBuf kn = SR_BUF_INIT, ks = SR_BUF_INIT;
    for (int pass = 0; pass < 2; pass++) {
      SrVal *v = pass ? seen : now;
      SrBuf *b = pass ? &ks : &kn;
      int *ord = sr_pytree_dict_order(v);
      sr_buf_putc(b, '[');
      for (int i = 0; i < v->dict.n; i++) {
        if (i) sr_buf_puts(b, ", ");
        sr_val_repr(b, v->dict.keys[ord[i]]);
      }
      sr_buf_putc(b, ']');
      free(ord);
    }
    sr_buf_printf(msg,
                  "\n    * at %s%s, seen <class 'dict'> with pytree metadata %s but now given <class 'dict'> with pytree "
                  "metadata %s, so the pytree node metadata does not match",
                  base, rest, ks.p, kn.p);
    sr_buf_free(&kn);
    sr_buf_free(&ks);
    ++*n;
  } else {
    size_t at = path->len;
    int *ord = now->kind == SR_V_DICT ? sr_pytree_dict_order(now) : NULL;
    for (int i = 0; i < nc->seq.n; i++) {
      path->len = at;
      if (ord) {
        sr_buf_puts(path, "[");
        sr_val_repr(path, now->dict.keys[ord[i]]);
        sr_buf_puts(path, "]");
      } else {
        sr_buf_printf(path, "[%d]", i);
      }
      tree_mismatches(msg, path, nc->seq.items[i], sc->seq.items[i], n);
    }
    free(ord);
    path->len = at;
    if (path->p) path->p[at] = 0;
  }
  sr_buf_free(&t1);
  sr_buf_free(&t2);
  sr_unref(nc);
  sr_unref(sc);
}

static int same_keys(SrVal *a, SrVal *b) {
  if (a->dict.n != b->dict.n) return 0;
  for (int i = 0; i < a->dict.n; i++)
    if (!sr_dict_get(b, a->dict.keys[i])) return 0;
  return 1;
}

/* Compiled.call's checks before it runs: the same pytree of (args,
   kwargs) as compiled, no tracers (no transformation of a compiled
   function), and pxla.check_arg_avals_for_call: each leaf of the dtype
   and shape it was compiled for.  -1 with JAX's TypeError raised. */
static int call_checks(SrInterp *I, Stage *s, SrArgs *a) {
  SrVal *args = sr_seq(NULL, SR_V_TUPLE, a->n), *kw = sr_dict(NULL);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  for (int i = 0; i < a->nkw; i++) sr_dict_set(NULL, kw, sr_str_cstr(NULL, a->kw[i]), sr_ref(a->kwv[i]));
  SrVal *pair[2] = {args, kw};
  SrVal *now = sr_tuple(NULL, 2, pair), *seen = stage_args_kwargs(s);
  int rc = sr_pytree_check_depth(I, now);
  SrBuf msg = SR_BUF_INIT, path = SR_BUF_INIT;
  int n = 0;
  if (rc == 0) {
    for (int k = 0; k < 2; k++) {
      path.len = 0;
      sr_buf_printf(&path, "[%d]", k);
      tree_mismatches(&msg, &path, now->seq.items[k], seen->seq.items[k], &n);
    }
    if (n) {
      sr_raise(I, "TypeError",
               "Function compiled with input pytree does not match the input pytree it was called with. There are %d "
               "mismatches, including:%s",
               n, msg.p);
      rc = -1;
    }
  }
  SrVal *fl = rc == 0 ? sr_pytree_flatten_any(I, now) : NULL;
  SrVal *fs = rc == 0 ? sr_pytree_flatten_any(I, seen) : NULL;
  if (rc == 0 && (!fl || !fs)) rc = -1;
  for (int i = 0; rc == 0 && i < fl->seq.n; i++) {
    SrArrayObj *o = sr_array_of(fl->seq.items[i]);
    if (o && o->kind == SR_AV_TRACER) {
      sr_raise(I, "TypeError",
               "Cannot apply JAX transformations to a function lowered and compiled for a particular signature. "
               "Detected argument of Tracer type <class '%s'>.",
               sr_tracers_class_name(fl->seq.items[i]));
      rc = -1;
    }
  }
  if (rc == 0) {
    /* the arguments' names: api_util's debug info names a leaf by its
       parameter and key path */
    char **names = sr_xcalloc((size_t)fl->seq.n + 1, sizeof *names);
    int k = 0;
    SrFunction *f = sr_as_function(s->fn);
    const SrParams *ps = f && f->node ? f->node->params : NULL;
    for (int i = 0; i < s->args->seq.n; i++) {
      SrBuf p = SR_BUF_INIT;
      if (ps && i < ps->n - ps->nkwonly) sr_buf_puts(&p, ps->names[i]);
      else if (ps && ps->star) sr_buf_printf(&p, "%s[%d]", ps->star, i - (ps->n - ps->nkwonly));
      else sr_buf_printf(&p, "args[%d]", i);
      sr_pytree_leaf_paths(s->args->seq.items[i], &p, names, &k);
      sr_buf_free(&p);
    }
    int *ord = sr_pytree_dict_order(s->kwargs);
    for (int i = 0; i < s->kwargs->dict.n; i++) {
      SrBuf p = SR_BUF_INIT;
      SrVal *key = s->kwargs->dict.keys[ord[i]];
      sr_buf_putn(&p, key->str.s, key->str.n);
      sr_pytree_leaf_paths(s->kwargs->dict.vals[ord[i]], &p, names, &k);
      sr_buf_free(&p);
    }
    free(ord);
    SrBuf errs = SR_BUF_INIT;
    int nerr = 0;
    for (int i = 0; i < fl->seq.n && i < fs->seq.n; i++) {
      const SrType *want = sr_value_type(I, fs->seq.items[i]), *got = sr_value_type(I, fl->seq.items[i]);
      if (!want || !got) continue;
      int same = want->dtype == got->dtype && want->ndim == got->ndim;
      for (int d = 0; same && d < want->ndim; d++) same = want->dims[d].size == got->dims[d].size;
      if (same) continue;
      if (nerr++ < 5) {
        if (errs.len) sr_buf_putc(&errs, '\n');
        sr_buf_printf(&errs, "Argument '%s' compiled with ", i < k && names[i] ? names[i] : "?");
        sr_type_str(&errs, sr_type_with_weak(sr_type_strip_sharding(want), 0), 0);
        sr_buf_puts(&errs, " and called with ");
        sr_type_str(&errs, sr_type_with_weak(sr_type_strip_sharding(got), 0), 0);
      }
    }
    char first[64];
    snprintf(first, sizeof first, "The first 5 of %d", nerr);
    if (nerr) {
      sr_raise(I, "TypeError",
               "Argument types differ from the types for which this computation was compiled. Perhaps you are "
               "calling the compiled executable with a different enable_x64 mode than when it was AOT compiled? "
               "%s mismatches are:\n%s",
               nerr >= 5 ? first : "The", errs.p);
      rc = -1;
    }
    sr_buf_free(&errs);
    for (int i = 0; i < k; i++) free(names[i]);
    free(names);
  }
  sr_unref(fl);
  sr_unref(fs);
  sr_buf_free(&msg);
  sr_buf_free(&path);
  sr_unref(now);
  sr_unref(seen);
  return rc;
}

/* compiled(*args): JAX's checks of committed arguments
   (pxla.check_array_xla_sharding_layout_match, in the words of JAX 0.7),
   then a jit call with the compiled layouts. */
static SrVal *compiled_call1(SrInterp *I, Stage *s, SrArgs *a);
static SrVal *compiled_call(SrInterp *I, Stage *s, SrArgs *a) {
  int was = I->jax->pjit_call;
  I->jax->pjit_call = s->pjit;
  SrVal *r = compiled_call1(I, s, a);
  I->jax->pjit_call = was;
  /* device=: the device's SingleDeviceSharding in and out (the inputs
     resharded there, check_device_backend_on_shardings) */
  if (r && s->device && !I->trace) {
    SrVal *dv[2] = {r, s->device};
    SrArgs da = {2, dv, 0, NULL, NULL, NULL};
    SrVal *put = sr_call(I, sr_lookup_qualname("jax.device_put"), &da);
    sr_unref(r);
    r = put;
  }
  return r;
}

void sr_jit_stage_set_device(SrVal *stage, SrVal *device) {
  Stage *s = stage && stage->kind == SR_V_OBJ ? stage->obj.data : NULL;
  if (!s || !device) return;
  sr_unref(s->device);
  s->device = sr_ref(device);
}

/* The executable's results have its output avals: a result the compiled
   program types as not weak is not weak, whatever Python scalars it is
   called with (a ShapeDtypeStruct traced int32, called with 3). */
static SrVal *compiled_weak_outs(SrInterp *I, Stage *s, SrVal *r) {
  const SrJaxpr *j = r && s->jaxpr && s->jaxpr->kind == SR_V_JAXPR ? s->jaxpr->jx.jaxpr : NULL;
  if (!j) return r;
  SrVal *leaves = sr_pytree_flatten(I, r);
  if (!leaves) {
    sr_exc_clear(I);
    return r;
  }
  int change = 0;
  if ((uint32_t)leaves->seq.n == j->nout)
    for (int i = 0; i < leaves->seq.n; i++) {
      const SrType *want = j->outvars[i]->type, *got = sr_value_type(I, leaves->seq.items[i]);
      if (!want || !got || want->weak || !got->weak || want->dtype != got->dtype) continue;
      SrVal *c = sr_jnp_convert(I, leaves->seq.items[i], want->dtype, 0);
      if (!c) {
        sr_unref(leaves);
        sr_unref(r);
        return NULL;
      }
      sr_unref(leaves->seq.items[i]);
      leaves->seq.items[i] = c;
      change = 1;
    }
  if (!change) {
    sr_unref(leaves);
    return r;
  }
  SrVal *out = sr_pytree_unflatten(r, leaves);
  sr_unref(leaves);
  sr_unref(r);
  return out;
}

static SrVal *compiled_call1(SrInterp *I, Stage *s, SrArgs *a) {
  if (call_checks(I, s, a) < 0) return NULL;
  /* keyword arguments (no shardings or layouts given: jit's defaults) */
  if (a->nkw && !s->in_sh && !s->out_sh) return compiled_weak_outs(I, s, sr_jit_call(I, s->fn, s->name, a));
  if (a->nkw)
    return sr_raise(I, "NotImplementedError", "calling a compiled function with keyword arguments and shardings");
  /* pxla.check_array_xla_sharding_layout_match: each committed argument
     whose sharding or layout is not the compiled one, named as the
     debug info names it (the parameter and the leaf's key path) */
  SrBuf errs = SR_BUF_INIT, lerrs = SR_BUF_INIT;
  int nerr = 0, nsh = 0, nlay = 0, k = 0;
  for (int i = 0; i < a->n; i++) {
    SrVal *leaves = sr_pytree_flatten(I, a->v[i]);
    if (!leaves) {
      sr_buf_free(&errs);
      sr_buf_free(&lerrs);
      return NULL;
    }
    char **paths = sr_xcalloc((size_t)leaves->seq.n + 1, sizeof *paths);
    {
      SrBuf pb = SR_BUF_INIT;
      arg_name(&pb, s, i, 1);
      int kk = 0;
      sr_pytree_leaf_paths(a->v[i], &pb, paths, &kk);
      sr_buf_free(&pb);
    }
    for (int q = 0; q < leaves->seq.n; q++, k++) {
      if (k >= s->arg_leaves->seq.n) break;
      SrVal *wsh, *wlay, *ush, *ulay;
      int whas, uhas;
      sr_format_parts(s->arg_leaves->seq.items[k], &wsh, &wlay, &whas);
      sr_format_parts(s->call_leaves->seq.items[k], &ush, &ulay, &uhas);
      SrArray *x = sr_jit_leaf_array(leaves->seq.items[q]);
      const SrType *t = sr_value_type(I, leaves->seq.items[q]);
      if (!x || !x->committed) continue;
      uint8_t have[SR_MAX_RANK], want[SR_MAX_RANK];
      sr_array_local(x, have);
      int same = wlay && sr_layout_dims(wlay, want) == t->ndim;
      for (int d = 0; d < t->ndim && same; d++) same = want[d] == have[d];
      const char *nm = paths[q] ? paths[q] : "";
      if (ush && sr_jit_sharding_differs(x, ush)) {
        SrVal *xs = sr_concrete_array_sharding(x);
        if (nerr++ < 5) {
          if (errs.len) sr_buf_putc(&errs, '\n');
          sr_buf_printf(&errs, "Argument %s with shape %s:\n  Passed sharding: ", nm, sr_type_short(t));
          sr_val_str(&errs, xs);
          sr_buf_puts(&errs, "\n  Required sharding: ");
          sr_val_str(&errs, ush);
        }
        nsh++;
        sr_unref(xs);
      }
      if (!same) {
        if (nerr++ < 5) {
          if (errs.len) sr_buf_putc(&errs, '\n');
          sr_buf_printf(&errs, "Argument %s with shape %s:\n  Passed layout: ", nm, sr_type_short(t));
          sr_local_repr(&errs, t->ndim, have);
          sr_buf_puts(&errs, "\n  Required layout: ");
          sr_val_str(&errs, wlay);
          /* the older wording, kept for layouts alone (below) */
          if (lerrs.len) sr_buf_putc(&lerrs, '\n');
          sr_buf_puts(&lerrs, "Got input layout(s) that compiled object was called with: ");
          sr_local_repr(&lerrs, t->ndim, have);
          sr_buf_puts(&lerrs, " and layout(s) the computation was compiled with: ");
          sr_val_repr(&lerrs, wlay);
          sr_buf_puts(&lerrs, " for arg ");
          arg_name(&lerrs, s, i, leaves->seq.n == 1);
          sr_buf_printf(&lerrs, " with shape: %s", sr_type_short(t));
        }
        nlay++;
      }
    }
    for (int q = 0; q < leaves->seq.n; q++) free(paths[q]);
    free(paths);
    sr_unref(leaves);
  }
  if (nerr) {
    const char *kind = !nlay ? "shardings" : !nsh ? "layouts" : "shardings and layouts";
    char num[64];
    if (nerr < 5) snprintf(num, sizeof num, "the %d mismatches", nerr);
    else snprintf(num, sizeof num, "5 mismatches out of %d", nerr);
    /* Layouts alone keep the wording of the JAX the layout document was
       run with ("Compiled object called with input layout(s) does not
       match ...": docs/notebooks/layout.md asserts 'does not match' in
       it, and the seed records that); shardings have 0.11's words
       (pxla.check_array_xla_sharding_layout_match). */
    if (!nsh)
      sr_raise(I, "ValueError",
               "Compiled object called with input layout(s) does not match the layout(s) the computation was compiled "
               "with. Here are %s:\n%s",
               num, lerrs.p);
    else
      sr_raise(I, "ValueError",
               "Computation was compiled for input %s that disagree with the %s of arguments passed to it. Here are "
               "%s:\n%s",
               kind, kind, num, errs.p);
    sr_buf_free(&errs);
    sr_buf_free(&lerrs);
    return NULL;
  }
  sr_buf_free(&lerrs);
  sr_buf_free(&errs);
  return compiled_weak_outs(I, s, sr_jit_call_sharded(I, s->fn, s->name, a, s->call_in, s->call_out));
}

static SrVal *m_lower(SrInterp *I, SrArgs *a) { return sr_jit_stage_lower(I, a->self); }

static SrVal *m_compile(SrInterp *I, SrArgs *a) {
  Stage *s = stage_of(a->self);
  return compile_stage(I, s);
}

/* The text of lib/opt: the program as traced (lowered), or after the
   optimization pass that stands for XLA's (compiled). */
static SrVal *m_as_text(SrInterp *I, SrArgs *a) {
  (void)I;
  Stage *s = stage_of(a->self);
  SrBuf b = SR_BUF_INIT;
  if (s->kind == ST_COMPILED) {
    SrJaxpr *o = sr_opt_optimize(s->jaxpr->jx.jaxpr, s->name, &b, NULL);
    sr_program_unref(o->prog);
  } else {
    sr_opt_text(s->jaxpr->jx.jaxpr, s->name, &b);
  }
  SrVal *r = sr_str(NULL, b.p ? b.p : "", b.len);
  sr_buf_free(&b);
  return r;
}

/* ---- stages.ArgInfo: an argument leaf's aval and whether it is donated ---- */

typedef struct ArgInfo {
  const SrType *t;
  int donated;
} ArgInfo;

static void arg_info_free(void *d) { free(d); }

static void arg_info_repr(SrBuf *out, const SrVal *v) {
  const ArgInfo *a = v->obj.data;
  /* a frozen dataclass's repr, the aval as ShapedArray's repr */
  sr_buf_puts(out, "ArgInfo(_aval=ShapedArray(");
  sr_type_long(out, sr_type_with_weak(a->t, 0));
  sr_buf_printf(out, "%s), donated=%s)", a->t->weak ? ", weak_type=True" : "", a->donated ? "True" : "False");
}

static SrVal *arg_info_getattr(SrInterp *I, SrVal *self, const char *name) {
  const ArgInfo *a = self->obj.data;
  if (strcmp(name, "donated") == 0) return sr_bool(a->donated);
  if (strcmp(name, "_aval") == 0) return sr_aval_new(a->t);
  if (strcmp(name, "shape") == 0 || strcmp(name, "dtype") == 0) {
    SrVal *av = sr_aval_new(a->t);
    SrVal *r = sr_getattr(I, av, name);
    sr_unref(av);
    return r;
  }
  return NULL;
}

static const SrLangOps arg_info_ops = {.getattr = arg_info_getattr};
static const SrClass arg_info_class = {"ArgInfo", arg_info_free, arg_info_repr, NULL, &arg_info_ops};

static SrVal *arg_info_new(const SrType *t, int donated) {
  ArgInfo *a = sr_xcalloc(1, sizeof *a);
  a->t = t;
  a->donated = donated;
  return sr_obj(&arg_info_class, a);
}

/* (args, kwargs) of the trace, a new tuple */
static SrVal *stage_args_kwargs(Stage *s) {
  SrVal *pair[2] = {sr_ref(s->args), sr_ref(s->kwargs)};
  return sr_tuple(NULL, 2, pair);
}

/* in_avals: ((the positional arguments' avals, as their trees), {the
   keyword ones'}), the types the body takes them with (in_shardings
   applied); with info, args_info's ArgInfo(aval, donated) instead */
static SrVal *stage_in_avals_of(SrInterp *I, Stage *s, int info);
static SrVal *stage_in_avals(SrInterp *I, Stage *s) { return stage_in_avals_of(I, s, 0); }

static SrVal *stage_in_avals_of(SrInterp *I, Stage *s, int info) {
  const SrJaxpr *j = s->jaxpr->jx.jaxpr;
  SrVar *const *args = sr_args(j);
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, 0);
  SrVal *ak = stage_args_kwargs(s);
  SrVal *flat = sr_pytree_flatten(I, ak);
  /* lowered: the avals with the jit's in_shardings (pxla's
     update_aval_with_sharding): one for every leaf, or one per argument */
  SrVal *in_sh = s->kind != ST_TRACED && s->in_sh && s->in_sh->kind != SR_V_NONE ? s->in_sh : NULL;
  int per_arg = in_sh && sr_is_seq(in_sh) && in_sh->seq.n == s->args->seq.n && flat && flat->seq.n == s->args->seq.n;
  for (uint32_t i = (uint32_t)s->ncaptured; i < sr_nargs(j); i++) {
    const SrType *t = args[i]->type;
    SrVal *sh = !in_sh ? NULL : per_arg ? in_sh->seq.items[i - s->ncaptured] : sr_is_seq(in_sh) ? NULL : in_sh;
    if (sh && sh->kind != SR_V_NONE) t = sr_api_typed_with_sharding(I, t, sh, "in_shardings");
    if (!t) {
      sr_unref(flat);
      sr_unref(leaves);
      return NULL;
    }
    int k = (int)(i - (uint32_t)s->ncaptured);
    sr_seq_push(NULL, leaves,
                info ? arg_info_new(t, k < s->donated->seq.n && s->donated->seq.items[k]->i) : sr_aval_new(t));
  }
  SrVal *tree = NULL;
  if (flat && flat->seq.n == leaves->seq.n) tree = sr_pytree_unflatten(ak, leaves);
  else if (flat) sr_raise(I, "RuntimeError", "in_avals: the arguments do not match the traced inputs");
  sr_unref(flat);
  sr_unref(leaves);
  sr_unref(ak);
  return tree;
}

/* donate_argnums: the flat indices of the donated argument leaves */
static SrVal *stage_donate_argnums(Stage *s) {
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, 0);
  for (int i = 0; i < s->donated->seq.n; i++)
    if (s->donated->seq.items[i]->i) sr_seq_push(NULL, r, sr_int(NULL, i));
  return r;
}

/* in_tree: the PyTreeDef of (args, kwargs) */
static SrVal *stage_in_tree(SrInterp *I, Stage *s) {
  SrVal *ak = stage_args_kwargs(s);
  SrVal *st = sr_lookup_qualname("jax.tree.structure");
  SrVal *r = st ? sr_call1(I, st, ak) : sr_raise(I, "RuntimeError", "jax.tree.structure is missing");
  sr_unref(ak);
  return r;
}

/* out_info: the results as traced, each an abstract array of its type */
static SrVal *stage_out_info(SrInterp *I, Stage *s) {
  const SrJaxpr *j = s->jaxpr->jx.jaxpr;
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, 0);
  for (uint32_t i = 0; i < j->nout; i++) {
    const SrType *t = j->outvars[i]->type;
    SrVal *o = sr_array_abstract(t);
    /* a type over no mesh gives no sharding (ShapeDtypeStruct's None) */
    if (!t->mesh || !t->mesh->n) ((SrArrayObj *)o->obj.data)->no_sharding = 1;
    sr_seq_push(NULL, leaves, o);
  }
  /* a compiled stage's out_info has the output shardings */
  SrVal *fl = s->kind == ST_COMPILED && s->out_formats ? sr_pytree_flatten_any(I, s->out_formats) : NULL;
  if (I->exc) sr_exc_clear(I);
  for (int i = 0; fl && i < leaves->seq.n && i < fl->seq.n; i++) {
    SrVal *sh = sr_getattr(I, fl->seq.items[i], "sharding");
    SrVal *shape = sh ? sr_getattr(I, leaves->seq.items[i], "shape") : NULL;
    SrVal *dt = shape ? sr_getattr(I, leaves->seq.items[i], "dtype") : NULL;
    SrVal *sds = NULL;
    if (dt) {
      SrVal *pv[2] = {shape, dt};
      const char *kw = sr_intern_cstr("sharding");
      SrArgs sa = {2, pv, 1, &kw, &sh, NULL};
      sds = sr_call(I, sr_lookup_qualname("jax.ShapeDtypeStruct"), &sa);
    }
    sr_unref(sh);
    sr_unref(shape);
    sr_unref(dt);
    if (!sds) {
      sr_exc_clear(I);
      continue;
    }
    sr_unref(leaves->seq.items[i]);
    leaves->seq.items[i] = sds;
  }
  sr_unref(fl);
  SrVal *flat = sr_pytree_flatten(I, s->out_tree);
  SrVal *tree = NULL;
  if (flat && flat->seq.n == leaves->seq.n) tree = sr_pytree_unflatten(s->out_tree, leaves);
  else if (flat) sr_raise(I, "RuntimeError", "out_info: the results do not match the traced outputs");
  sr_unref(flat);
  sr_unref(leaves);
  return tree;
}

/* input_shardings / output_shardings: the formats' shardings, in their
   tree (Compiled's, from the same executable) */
static SrVal *formats_shardings(SrInterp *I, SrVal *f) {
  if (f->kind == SR_V_TUPLE || f->kind == SR_V_LIST) {
    SrVal *r = sr_seq(NULL, f->kind, f->seq.n);
    for (int i = 0; i < f->seq.n; i++) {
      SrVal *x = formats_shardings(I, f->seq.items[i]);
      if (!x) {
        sr_unref(r);
        return NULL;
      }
      sr_seq_push(NULL, r, x);
    }
    return r;
  }
  if (f->kind == SR_V_DICT) {
    SrVal *r = sr_dict(NULL);
    for (int i = 0; i < f->dict.n; i++) {
      SrVal *x = formats_shardings(I, f->dict.vals[i]);
      if (!x) {
        sr_unref(r);
        return NULL;
      }
      sr_dict_set(NULL, r, sr_ref(f->dict.keys[i]), x);
    }
    return r;
  }
  if (f->kind == SR_V_NONE) return sr_none();
  return sr_getattr(I, f, "sharding");
}

static SrVal *stage_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  Stage *s = self->obj.data;
  if (strcmp(name, "jaxpr") == 0) return sr_ref(s->jaxpr);
  if (strcmp(name, "in_avals") == 0) return stage_in_avals(I, s);
  if (strcmp(name, "args_info") == 0) return stage_in_avals_of(I, s, 1);
  if (strcmp(name, "in_tree") == 0) return stage_in_tree(I, s);
  if (strcmp(name, "donate_argnums") == 0) return stage_donate_argnums(s);
  if (strcmp(name, "out_info") == 0) return stage_out_info(I, s);
  if (strcmp(name, "as_text") == 0 && s->kind != ST_TRACED) return sr_bound_method(self, "as_text", m_as_text);
  if (s->kind == ST_TRACED && strcmp(name, "lower") == 0) return sr_bound_method(self, "lower", m_lower);
  if (s->kind == ST_LOWERED && strcmp(name, "compile") == 0) return sr_bound_method(self, "compile", m_compile);
  if (s->kind == ST_COMPILED) {
    if (strcmp(name, "input_formats") == 0) return sr_ref(s->in_formats);
    if (strcmp(name, "input_shardings") == 0 || strcmp(name, "output_shardings") == 0) {
      /* Compiled.input_shardings / output_shardings: the formats' shardings */
      SrVal *fm = name[0] == 'i' ? s->in_formats : s->out_formats;
      SrVal *l = fm ? sr_pytree_flatten_any(I, fm) : NULL;
      if (!l) return NULL;
      for (int i = 0; i < l->seq.n; i++) {
        SrVal *sh = sr_getattr(I, l->seq.items[i], "sharding");
        if (!sh) {
          sr_unref(l);
          return NULL;
        }
        sr_unref(l->seq.items[i]);
        l->seq.items[i] = sh;
      }
      SrVal *r = sr_pytree_unflatten(fm, l);
      sr_unref(l);
      return r;
    }
    if (strcmp(name, "output_formats") == 0) return sr_ref(s->out_formats);
    if (strcmp(name, "input_shardings") == 0) return formats_shardings(I, s->in_formats);
    if (strcmp(name, "output_shardings") == 0) return formats_shardings(I, s->out_formats);
  }
  return NULL;
}

static SrVal *stage_call(SrInterp *I, SrVal *self, SrArgs *a) {
  Stage *s = self->obj.data;
  if (s->kind != ST_COMPILED) return sr_raise(I, "TypeError", "'%s' object is not callable", stage_class(s->kind)->name);
  return compiled_call(I, s, a);
}

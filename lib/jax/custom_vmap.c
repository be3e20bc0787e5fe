/* custom_vmap.c: jax.custom_batching.custom_vmap, f.def_vmap(rule) and
 * jax.custom_batching.sequential_vmap (custom_batching.py).
 *
 * Calling a custom_vmap function traces it and binds one custom_vmap_call
 * equation (its closed-over values leading operands, num_consts), whose
 * rule= param is an object the program keeps by reference:
 *  - evaluated, it runs the traced function (custom_vmap_impl);
 *  - batched, it calls the user's rule(axis_size, in_batched, *args) on
 *    the arguments with their batch dims in front, and checks what the
 *    rule returns as check_vmap_rule_trees does (custom_vmap_batching);
 *  - in forward mode it binds a custom_vmap_call over (primals, tangents)
 *    whose function is the jvp of the traced one and whose rule is
 *    custom_vmap_jvp's jvp_of_rule_rule: the rule vmapped over the
 *    arguments batched in both, jax.jvp of that, and the leaves batched in
 *    only one of the two mapped over unrestricted (the batch of a jaxpr
 *    traced on them, whose batched outputs it reports);
 *  - linearized with a nonzero tangent it is JAX's error (its partial
 *    evaluation makes every output unknown).
 */
#include <stdlib.h>
#include <string.h>

#include "ad/ad.h"
#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "jax/api.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"
#include "jax/vjp.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "util/intern.h"

/* ---- the rule object (rule= of custom_vmap_call) ---- */

typedef struct VRule {
  int rc;
  int jvp;              /* 1: the jvp of inner (operands: primals, tangents) */
  struct VRule *inner;
  SrVal *rule;          /* the user's (jvp 0) */
  const char *rule_name;
  SrVal *in_tree;       /* the arguments (a tuple), leaves numbered */
  SrVal *out_tree;      /* the function's output, leaves numbered */
  int nconsts, nleaves; /* operands: nconsts closed-over values, nleaves argument leaves */
  int nout;
} VRule;

static void vrule_unref(VRule *r) {
  if (!r || --r->rc > 0) return;
  vrule_unref(r->inner);
  sr_unref(r->rule);
  sr_unref(r->in_tree);
  sr_unref(r->out_tree);
  free(r);
}

static void vrule_free(void *d) { vrule_unref(d); }

static void vrule_repr(SrBuf *out, const SrVal *v) {
  const VRule *r = v->obj.data;
  while (r->jvp) r = r->inner;
  sr_buf_puts(out, r->rule_name);
}

static const SrClass vrule_class = {"custom_vmap_rule", vrule_free, vrule_repr, NULL, NULL};

static int vrule_nops(const VRule *r) { return r->jvp ? 2 * vrule_nops(r->inner) : r->nconsts + r->nleaves; }
static int vrule_nouts(const VRule *r) { return r->jvp ? 2 * vrule_nouts(r->inner) : r->nout; }

static SrVal *bools(int n, const uint8_t *f) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, l, sr_bool(f[i]));
  return l;
}

static int apply_rule(SrInterp *I, VRule *r, int64_t size, const uint8_t *inb, SrVal **x, SrVal **out, uint8_t *outb);

/* the user's rule: rule(axis_size, in_batched, *args), its batch dims in
   front; its output's leaves (new references) and batched flags */
static int apply_user(SrInterp *I, VRule *r, int64_t size, const uint8_t *inb, SrVal **x, SrVal **out, uint8_t *outb) {
  for (int i = 0; i < r->nconsts; i++)
    if (inb[i])
      return sr_raise(I, "ValueError",
                      "custom_vmap: a value the function %s closes over is batched (pass it as an argument)",
                      r->rule_name),
             -1;
  SrVal *al = sr_seq(NULL, SR_V_LIST, r->nleaves);
  for (int i = 0; i < r->nleaves; i++) sr_seq_push(NULL, al, sr_ref(x[r->nconsts + i]));
  SrVal *args = sr_pytree_unflatten(r->in_tree, al);
  sr_unref(al);
  SrVal *bl = bools(r->nleaves, inb + r->nconsts);
  SrVal *bt = sr_pytree_unflatten(r->in_tree, bl);
  sr_unref(bl);
  if (!args || !bt) {
    sr_unref(args);
    sr_unref(bt);
    return -1;
  }
  /* ensure_list(in_batched) */
  SrVal *in_batched = sr_seq(NULL, SR_V_LIST, bt->seq.n);
  for (int i = 0; i < bt->seq.n; i++) sr_seq_push(NULL, in_batched, sr_ref(bt->seq.items[i]));
  sr_unref(bt);
  int na = args->seq.n;
  SrVal **argv = sr_xcalloc((size_t)na + 3, sizeof *argv);
  argv[0] = sr_int(NULL, size);
  argv[1] = in_batched;
  for (int i = 0; i < na; i++) argv[2 + i] = args->seq.items[i];
  SrArgs ca = {na + 2, argv, 0, NULL, NULL, NULL};
  SrVal *res = sr_call(I, r->rule, &ca);
  sr_unref(argv[0]);
  sr_unref(argv[1]);
  free(argv);
  sr_unref(args);
  if (!res) return -1;
  int rc = -1;
  SrVal *ol = NULL, *obl = NULL;
  if (!sr_is_seq(res) || res->seq.n != 2) {
    sr_raise(I, "TypeError", "custom vmap rule (%s) must return a pair (output, output batching specification)",
             r->rule_name);
    goto done;
  }
  /* check_vmap_rule_trees */
  SrBuf t1 = SR_BUF_INIT, t2 = SR_BUF_INIT, t0 = SR_BUF_INIT;
  sr_custom_treedef_of(&t1, res->seq.items[0]);
  sr_custom_treedef_of(&t2, res->seq.items[1]);
  sr_vjp_treedef_str(&t0, r->out_tree);
  if (strcmp(sr_buf_str(&t1), sr_buf_str(&t2)) != 0)
    sr_raise(I, "ValueError",
             "structure of output value and output batching specification returned by custom vmap rule (%s) do not "
             "match.\nOutput values: %s\nBatching spec: %s",
             r->rule_name, sr_buf_str(&t1), sr_buf_str(&t2));
  else if (strcmp(sr_buf_str(&t1), sr_buf_str(&t0)) != 0)
    sr_raise(I, "ValueError",
             "structure of output returned by custom vmap rule (%s) does not match that of original custom-vmapped "
             "function.\nOriginal output: %s\nRule output: %s",
             r->rule_name, sr_buf_str(&t0), sr_buf_str(&t1));
  int bad = I->exc != NULL;
  sr_buf_free(&t0);
  sr_buf_free(&t1);
  sr_buf_free(&t2);
  if (bad) goto done;
  ol = sr_pytree_array_leaves(I, res->seq.items[0]);
  obl = ol ? sr_pytree_flatten_any(I, res->seq.items[1]) : NULL;
  if (!obl) goto done;
  if (ol->seq.n != r->nout || obl->seq.n != r->nout) {
    sr_raise(I, "ValueError", "custom vmap rule (%s) returned %d outputs where the function has %d", r->rule_name,
             ol->seq.n, r->nout);
    goto done;
  }
  for (int i = 0; i < r->nout; i++) {
    int t = sr_val_truthy(obl->seq.items[i]);
    if (t < 0) goto done;
    outb[i] = (uint8_t)t;
  }
  for (int i = 0; i < r->nout; i++) out[i] = sr_ref(ol->seq.items[i]);
  rc = 0;
done:
  sr_unref(ol);
  sr_unref(obl);
  sr_unref(res);
  return rc;
}

/* ---- jvp_of_rule_rule ---- */

/* F(*primals): the inner rule applied with the mutually batched flags;
   what it reports batched is kept for the caller. */
typedef struct RuleFn {
  VRule *r;
  int64_t size;
  uint8_t *inb, *outb;
  int have_outb;
} RuleFn;

static void rulefn_free(void *d) {
  RuleFn *f = d;
  vrule_unref(f->r);
  free(f->inb);
  free(f->outb);
  free(f);
}

static SrVal *rulefn_call(SrInterp *I, SrArgs *a) {
  RuleFn *f = sr_current_builtin(I)->data;
  int n = vrule_nops(f->r), no = vrule_nouts(f->r);
  if (a->n != n) return sr_raise(I, "TypeError", "custom_vmap: the rule takes %d operands, not %d", n, a->n);
  SrVal **out = sr_xcalloc((size_t)no + 1, sizeof *out);
  if (apply_rule(I, f->r, f->size, f->inb, a->v, out, f->outb) < 0) {
    free(out);
    return NULL;
  }
  f->have_outb = 1;
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, no);
  for (int i = 0; i < no; i++) sr_seq_push(NULL, t, out[i]);
  free(out);
  return t;
}

/* G(*primals, *tangents) = jax.jvp(F, primals, tangents), flat */
typedef struct JvpFn {
  SrVal *F;
  int n;
} JvpFn;

static void jvpfn_free(void *d) {
  JvpFn *g = d;
  sr_unref(g->F);
  free(g);
}

static SrVal *jvpfn_call(SrInterp *I, SrArgs *a) {
  JvpFn *g = sr_current_builtin(I)->data;
  if (a->n != 2 * g->n) return sr_raise(I, "TypeError", "custom_vmap: the jvp takes %d operands", 2 * g->n);
  SrVal *jvp = sr_lookup_qualname("jax.jvp");
  if (!jvp) return sr_raise(I, "RuntimeError", "jax.jvp is missing");
  SrVal *p = sr_tuple(NULL, 0, NULL), *t = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < g->n; i++) {
    sr_seq_push(NULL, p, sr_ref(a->v[i]));
    sr_seq_push(NULL, t, sr_ref(a->v[g->n + i]));
  }
  SrVal *argv[3] = {g->F, p, t};
  SrArgs ca = {3, argv, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, jvp, &ca);
  sr_unref(p);
  sr_unref(t);
  if (!r) return NULL;
  SrVal *flat = sr_pytree_flatten(I, r);
  sr_unref(r);
  if (!flat) return NULL;
  SrVal *tup = sr_seq(NULL, SR_V_TUPLE, flat->seq.n);
  for (int i = 0; i < flat->seq.n; i++) sr_seq_push(NULL, tup, sr_ref(flat->seq.items[i]));
  sr_unref(flat);
  return tup;
}

static int apply_jvp(SrInterp *I, VRule *r, int64_t size, const uint8_t *inb, SrVal **x, SrVal **out, uint8_t *outb) {
  int n = vrule_nops(r->inner), no = vrule_nouts(r->inner);
  const uint8_t *pb = inb, *tb = inb + n;
  RuleFn *f = sr_xcalloc(1, sizeof *f);
  f->r = r->inner;
  r->inner->rc++;
  f->size = size;
  f->inb = sr_xcalloc((size_t)n + 1, 1);
  f->outb = sr_xcalloc((size_t)no + 1, 1);
  int extra = 0;
  uint8_t *ex = sr_xcalloc((size_t)2 * n + 1, 1);
  for (int i = 0; i < n; i++) {
    f->inb[i] = pb[i] && tb[i];
    ex[i] = pb[i] && !tb[i];
    ex[n + i] = tb[i] && !pb[i];
    extra |= ex[i] | ex[n + i];
  }
  SrVal *F = sr_builtin_with(r->rule_name, rulefn_call, f, rulefn_free);
  JvpFn *g = sr_xcalloc(1, sizeof *g);
  g->F = F;
  g->n = n;
  SrVal *G = sr_builtin_with(r->rule_name, jvpfn_call, g, jvpfn_free);
  int rc = -1;
  uint8_t *eo = sr_xcalloc((size_t)2 * no + 1, 1);
  SrVal *res = NULL;
  if (!extra) {
    SrArgs ca = {2 * n, x, 0, NULL, NULL, NULL};
    res = sr_call(I, G, &ca);
  } else {
    /* vmap_unrestricted over the leaves batched in only one of the two:
       G traced on their examples' types, that jaxpr batched, run */
    SrVal **ab = sr_xcalloc((size_t)2 * n + 1, sizeof *ab);
    for (int i = 0; i < 2 * n; i++) {
      const SrType *t = sr_value_type(I, x[i]);
      ab[i] = sr_array_abstract(ex[i] ? sr_batch_unmapped_type(t, 0) : t);
    }
    SrVal *out_tree = NULL, *captured = NULL;
    SrJaxpr *j = sr_trace_fn(I, G, 2 * n, ab, 0, NULL, NULL, 0, &out_tree, &captured);
    for (int i = 0; i < 2 * n; i++) sr_unref(ab[i]);
    free(ab);
    if (j) {
      int nc = captured->seq.n;
      uint8_t *jb = sr_xcalloc(sr_nargs(j) + 1, 1);
      for (int i = 0; i < 2 * n && nc + i < (int)sr_nargs(j); i++) jb[nc + i] = ex[i];
      uint8_t *ob = sr_xcalloc(j->nout + 1, 1);
      SrBatch b;
      sr_batch_begin(&b, I, size, NULL);
      SrJaxpr *bj = sr_batch_jaxpr(&b, j, jb, NULL, ob);
      sr_batch_end(&b);
      if (bj) {
        SrVal **in = sr_xcalloc(sr_nargs(bj) + 1, sizeof *in);
        for (int i = 0; i < nc; i++) in[i] = captured->seq.items[i];
        for (int i = 0; i < 2 * n; i++) in[nc + i] = x[i];
        SrVal *o = sr_eval_jaxpr(I, bj, nc + 2 * n, in);
        free(in);
        if (o && !sr_is_seq(o)) {
          SrVal *t = sr_tuple(NULL, 0, NULL);
          sr_seq_push(NULL, t, o);
          o = t;
        }
        res = o;
        for (uint32_t i = 0; i < bj->nout && (int)i < 2 * no; i++) eo[i] = ob[i];
        sr_program_unref(bj->prog);
      }
      free(jb);
      free(ob);
      sr_program_unref(j->prog);
    }
    sr_unref(out_tree);
    sr_unref(captured);
  }
  if (res && (!sr_is_seq(res) || res->seq.n != 2 * no)) {
    sr_raise(I, "RuntimeError", "custom_vmap: the jvp of the rule gave %d values, not %d", sr_is_seq(res) ? res->seq.n : 1,
             2 * no);
  } else if (res) {
    for (int i = 0; i < 2 * no; i++) {
      out[i] = sr_ref(res->seq.items[i]);
      /* the mutually batched outputs, or the ones the extra dims reach */
      outb[i] = (uint8_t)(f->outb[i % no] || eo[i]);
    }
    rc = 0;
  }
  sr_unref(res);
  sr_unref(G);
  free(eo);
  free(ex);
  return rc;
}

static int apply_rule(SrInterp *I, VRule *r, int64_t size, const uint8_t *inb, SrVal **x, SrVal **out, uint8_t *outb) {
  return r->jvp ? apply_jvp(I, r, size, inb, x, out, outb) : apply_user(I, r, size, inb, x, out, outb);
}

/* ---- custom_vmap_call's rules ---- */

static VRule *vrule_of(const SrEqn *e) {
  SrVal *v = sr_eqn_param(e, sr_intern_cstr("rule"));
  return v && sr_is_obj(v, &vrule_class) ? v->obj.data : NULL;
}

static SrJaxpr *call_of(const SrEqn *e) {
  SrVal *v = sr_eqn_param(e, sr_intern_cstr("call"));
  return v && v->kind == SR_V_JAXPR ? v->jx.jaxpr : NULL;
}

/* custom_vmap_batching */
static int batch_custom_vmap(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrAd *ad = &b->ad;
  SrInterp *I = ad->I;
  VRule *r = vrule_of(e);
  if (!r) return sr_raise(I, "NotImplementedError", "custom_vmap_call: its rule did not survive printing"), -1;
  int n = (int)e->nin, no = (int)e->nout;
  if (n != vrule_nops(r) || no != vrule_nouts(r))
    return sr_raise(I, "RuntimeError", "custom_vmap_call: its rule does not match its operands"), -1;
  SrVal **in = sr_xcalloc((size_t)n + 1, sizeof *in);
  uint8_t *inb = sr_xcalloc((size_t)n + 1, 1), *outb = sr_xcalloc((size_t)no + 1, 1);
  for (int i = 0; i < n; i++) {
    inb[i] = bd[i] != SR_NOT_MAPPED;
    in[i] = inb[i] ? sr_batch_moveaxis(b, x[i], bd[i], 0) : x[i];
  }
  SrVal **out = sr_xcalloc((size_t)no + 1, sizeof *out);
  int rc = apply_rule(I, r, b->size, inb, in, out, outb);
  if (rc == 0)
    for (int i = 0; i < no; i++) {
      y[i] = sr_ad_keep(ad, out[i]);
      ybd[i] = outb[i] ? 0 : SR_NOT_MAPPED;
    }
  free(out);
  free(in);
  free(inb);
  free(outb);
  return rc;
}

/* the jvp of call, over (primals, tangents), as a function to trace */
typedef struct JvpBody {
  SrJaxpr *j;
} JvpBody;

static void jvpbody_free(void *d) {
  JvpBody *b = d;
  sr_program_unref(b->j->prog);
  free(b);
}

static SrVal *jvpbody_call(SrInterp *I, SrArgs *a) {
  JvpBody *jb = sr_current_builtin(I)->data;
  uint32_t n = sr_nargs(jb->j), no = jb->j->nout;
  if ((uint32_t)a->n != 2 * n) return sr_raise(I, "TypeError", "custom_vmap: the jvp takes %u operands", 2 * n);
  SrVal **o = sr_xcalloc(2 * (size_t)no + 1, sizeof *o);
  if (sr_ad_jvp(I, jb->j, a->v, a->v + n, o, o + no) < 0) {
    free(o);
    return NULL;
  }
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, (int)(2 * no));
  for (uint32_t i = 0; i < no; i++) sr_seq_push(NULL, t, o[i]);
  for (uint32_t i = 0; i < no; i++) {
    SrVal *tv = o[no + i];
    if (!tv) {
      /* ad.instantiate_zeros on the outputs */
      const SrType *tt = sr_ad_tangent_type(sr_value_type(I, o[i]));
      int64_t shape[SR_MAX_RANK];
      for (int d = 0; d < tt->ndim; d++) shape[d] = tt->dims[d].size;
      SrVal *zero = sr_int(NULL, 0);
      tv = sr_lax_full(I, shape, tt->ndim, zero, (int)tt->dtype, NULL);
      sr_unref(zero);
    }
    if (!tv) {
      sr_unref(t);
      free(o);
      return NULL;
    }
    sr_seq_push(NULL, t, tv);
  }
  free(o);
  return t;
}

/* custom_vmap_jvp */
static int jvp_custom_vmap(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrInterp *I = ad->I;
  VRule *r = vrule_of(e);
  SrJaxpr *call = call_of(e);
  if (!r || !call) return sr_lax_jvp_custom_call(ad, e, x, t, y, ty);
  int n = (int)e->nin, no = (int)e->nout;
  int any = 0;
  for (int i = 0; i < n; i++) any |= t[i] != NULL;
  if (!any) {
    SrVal *res = sr_ad_bind_eqn(ad, e, x);
    if (!res) return -1;
    for (int i = 0; i < no; i++) {
      y[i] = res->seq.items[i];
      ty[i] = NULL;
    }
    return 0;
  }
  if (ad->mode == SR_AD_LIN) {
    sr_raise(I, "ValueError",
             "Linearization failed to produce known values for all output primals. This is typically caused by "
             "attempting to differentiate a function uses an operation that does not support reverse-mode "
             "autodiff.");
    return -1;
  }
  /* tangents = map(ad.instantiate_zeros, tangents) */
  SrVal **ops = sr_xcalloc(2 * (size_t)n + 1, sizeof *ops);
  for (int i = 0; i < n; i++) {
    ops[i] = x[i];
    ops[n + i] = t[i] ? t[i] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_value_type(I, x[i])));
    if (!ops[n + i]) {
      free(ops);
      return -1;
    }
  }
  /* jvp_call: call's jvp traced on the operands' types */
  JvpBody *jb = sr_xcalloc(1, sizeof *jb);
  jb->j = call;
  sr_program_ref(call->prog);
  SrVal *fn = sr_builtin_with("jvp", jvpbody_call, jb, jvpbody_free);
  SrVal **ab = sr_xcalloc(2 * (size_t)n + 1, sizeof *ab);
  for (int i = 0; i < 2 * n; i++) ab[i] = sr_array_abstract(sr_value_type(I, ops[i]));
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *jc = sr_trace_fn(I, fn, 2 * n, ab, 0, NULL, NULL, 0, &out_tree, &captured);
  for (int i = 0; i < 2 * n; i++) sr_unref(ab[i]);
  free(ab);
  sr_unref(fn);
  sr_unref(out_tree);
  int rc = -1;
  if (jc && captured->seq.n == 0 && jc->nout == (uint32_t)(2 * no)) {
    VRule *jr = sr_xcalloc(1, sizeof *jr);
    jr->rc = 1;
    jr->jvp = 1;
    jr->inner = r;
    r->rc++;
    jr->rule_name = r->rule_name;
    SrPList ps = {0};
    sr_plist_add(&ps, "call", sr_jaxpr_val(NULL, jc));
    sr_plist_add(&ps, "rule", sr_obj(&vrule_class, jr));
    SrVal *res = sr_ad_bind(ad, SR_P_custom_vmap_call, 2 * n, ops, ps.n, ps.p);
    sr_plist_free(&ps);
    if (res) {
      for (int i = 0; i < no; i++) {
        y[i] = res->seq.items[i];
        ty[i] = res->seq.items[no + i];
      }
      rc = 0;
    }
  } else if (jc) {
    sr_raise(I, "NotImplementedError", "custom_vmap: the jvp of %s closes over values", r->rule_name);
  }
  if (jc) sr_program_unref(jc->prog);
  sr_unref(captured);
  free(ops);
  return rc;
}

/* ---- the custom_vmap object ---- */

typedef struct CustomVmap {
  SrVal *fun, *rule;
  const char *name;
} CustomVmap;

static void cvm_free(void *d) {
  CustomVmap *c = d;
  sr_unref(c->fun);
  sr_unref(c->rule);
  free(c);
}

static void cvm_repr(SrBuf *out, const SrVal *v) {
  const CustomVmap *c = v->obj.data;
  sr_buf_printf(out, "<jax._src.custom_batching.custom_vmap object of <function %s>>", c->name);
}

static SrVal *cvm_call(SrInterp *I, SrVal *self, SrArgs *a) {
  CustomVmap *cv = self->obj.data;
  SrVal *args = sr_custom_resolve_kwargs(I, cv->fun, "custom_vmap", cv->name, a);
  if (!args) return NULL;
  if (!cv->rule) {
    sr_unref(args);
    return sr_raise(I, "AttributeError", "No batching rule defined for custom_vmap function %s using def_vmap.",
                    cv->name);
  }
  SrArgs pa = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
  SrCustomCall cc;
  /* api_util.debug_info("custom_vmap fun", self.fun, args, kwargs) */
  sr_trace_fn_debug_call(I, "custom_vmap fun", cv->fun, a, NULL, 0);
  int rc = sr_custom_call_trace_always(I, cv->fun, cv->name, &pa, &cc);
  sr_trace_fn_debug_clear();
  sr_unref(args);
  if (rc < 0) return NULL;
  VRule *r = sr_xcalloc(1, sizeof *r);
  r->rc = 1;
  r->rule = sr_ref(cv->rule);
  r->rule_name = sr_callable_name(cv->rule);
  int k = 0;
  r->in_tree = sr_pytree_numbered(cc.args, &k);
  r->nleaves = cc.leaves->seq.n;
  k = 0;
  r->out_tree = sr_pytree_numbered(cc.out_tree, &k);
  r->nout = (int)cc.body->nout;
  r->nconsts = cc.captured->seq.n;
  SrPList ps = {0};
  sr_plist_add(&ps, "call", sr_jaxpr_val(NULL, cc.body));
  sr_plist_add(&ps, "num_consts", sr_int(NULL, r->nconsts));
  sr_plist_add(&ps, "rule", sr_obj(&vrule_class, r));
  return sr_custom_call_bind(I, SR_P_custom_vmap_call, &cc, &ps);
}

static SrVal *cvm_def_vmap(SrInterp *I, SrArgs *a) {
  CustomVmap *cv = a->self->obj.data;
  SrVal *p[1];
  if (sr_args_parse(I, a, "def_vmap", "vmap_rule", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "def_vmap(vmap_rule) takes a function");
  sr_unref(cv->rule);
  cv->rule = sr_ref(p[0]);
  return sr_ref(p[0]);
}

static SrVal *cvm_getattr(SrInterp *I, SrVal *self, const char *name) {
  CustomVmap *cv = self->obj.data;
  if (strcmp(name, "def_vmap") == 0) return sr_bound_method(self, "def_vmap", cvm_def_vmap);
  if (strcmp(name, "fun") == 0) return sr_ref(cv->fun);
  if (strcmp(name, "vmap_rule") == 0) return sr_ref(cv->rule ? cv->rule : sr_none());
  if (strcmp(name, "__name__") == 0) return sr_str_cstr(NULL, cv->name);
  if (strcmp(name, "__wrapped__") == 0) return sr_ref(cv->fun); /* functools.update_wrapper */
  /* custom_api_util.forward_attr */
  return sr_getattr(I, cv->fun, name);
}

static const SrLangOps cvm_ops = {.call = cvm_call, .getattr = cvm_getattr};
static const SrClass custom_vmap_class = {"custom_vmap", cvm_free, cvm_repr, NULL, &cvm_ops};

static SrVal *cvm_new(SrVal *fun) {
  CustomVmap *c = sr_xcalloc(1, sizeof *c);
  c->fun = sr_ref(fun);
  c->name = sr_callable_name(fun);
  return sr_obj(&custom_vmap_class, c);
}

static SrVal *jax_custom_vmap(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "custom_vmap", "fun", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "custom_vmap(fun) takes a function");
  return cvm_new(p[0]);
}

/* ---- sequential_vmap: the rule maps f over the batched arguments ---- */

/* to_map(mapped_args): f(*tree_merge(in_batched, mapped_args, bcast_args)) */
typedef struct ToMap {
  SrVal *f, *args, *leaves; /* the arguments (a list) and their leaves */
  uint8_t *batched;         /* per leaf */
} ToMap;

static void tomap_free(void *d) {
  ToMap *m = d;
  sr_unref(m->f);
  sr_unref(m->args);
  sr_unref(m->leaves);
  free(m->batched);
  free(m);
}

static SrVal *tomap_call(SrInterp *I, SrArgs *a) {
  ToMap *m = sr_current_builtin(I)->data;
  if (a->n != 1) return sr_raise(I, "TypeError", "sequential_vmap: to_map takes the mapped arguments");
  SrVal *ml = sr_pytree_flatten_any(I, a->v[0]);
  if (!ml) return NULL;
  int nl = m->leaves->seq.n, k = 0;
  SrVal *l = sr_seq(NULL, SR_V_LIST, nl);
  for (int i = 0; i < nl; i++)
    sr_seq_push(NULL, l, sr_ref(m->batched[i] && k < ml->seq.n ? ml->seq.items[k++] : m->leaves->seq.items[i]));
  sr_unref(ml);
  SrVal *args = sr_pytree_unflatten(m->args, l);
  sr_unref(l);
  if (!args) return NULL;
  SrArgs ca = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, m->f, &ca);
  sr_unref(args);
  return r;
}

static SrVal *seq_rule_new(SrVal *fun);

static SrVal *seq_rule_call(SrInterp *I, SrArgs *a) {
  SrVal *fun = sr_current_builtin(I)->data;
  /* f: the custom_vmap function again (made anew, so that nothing holds
     itself) */
  SrVal *f = cvm_new(fun);
  ((CustomVmap *)f->obj.data)->rule = seq_rule_new(fun);
  if (a->n < 2) return sr_raise(I, "TypeError", "sequential_vmap rule takes (axis_size, in_batched, *args)");
  SrVal *args = sr_seq(NULL, SR_V_LIST, a->n - 2);
  for (int i = 2; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  SrVal *leaves = sr_pytree_flatten_any(I, args);
  SrVal *flags = leaves ? sr_pytree_flatten_any(I, a->v[1]) : NULL;
  if (!flags || flags->seq.n != leaves->seq.n) {
    sr_unref(f);
    sr_unref(args);
    sr_unref(leaves);
    sr_unref(flags);
    if (!I->exc) sr_raise(I, "ValueError", "sequential_vmap: in_batched does not match the arguments");
    return NULL;
  }
  int nl = leaves->seq.n;
  ToMap *m = sr_xcalloc(1, sizeof *m);
  m->f = f;
  m->args = args;
  m->leaves = leaves;
  m->batched = sr_xcalloc((size_t)nl + 1, 1);
  SrVal *ml = sr_seq(NULL, SR_V_LIST, nl);
  for (int i = 0; i < nl; i++) {
    m->batched[i] = (uint8_t)sr_val_truthy(flags->seq.items[i]);
    sr_seq_push(NULL, ml, m->batched[i] ? sr_ref(leaves->seq.items[i]) : sr_none());
  }
  sr_unref(flags);
  /* tree_split(in_batched, list(args)): the mapped half, None elsewhere */
  SrVal *mapped = sr_pytree_unflatten(args, ml);
  sr_unref(ml);
  SrVal *to_map = sr_builtin_with("to_map", tomap_call, m, tomap_free);
  SrVal *map = sr_lookup_qualname("jax.lax.map");
  SrVal *out = NULL;
  if (!map) {
    sr_raise(I, "RuntimeError", "jax.lax.map is missing");
  } else if (mapped) {
    SrVal *argv[2] = {to_map, mapped};
    SrArgs ca = {2, argv, 0, NULL, NULL, NULL};
    out = sr_call(I, map, &ca);
  }
  sr_unref(mapped);
  sr_unref(to_map);
  if (!out) return NULL;
  SrVal *ol = sr_pytree_flatten_any(I, out);
  if (!ol) {
    sr_unref(out);
    return NULL;
  }
  SrVal *tl = sr_seq(NULL, SR_V_LIST, ol->seq.n);
  for (int i = 0; i < ol->seq.n; i++) sr_seq_push(NULL, tl, sr_bool(1));
  sr_unref(ol);
  SrVal *ob = sr_pytree_unflatten(out, tl);
  sr_unref(tl);
  SrVal *items[2] = {out, ob};
  return sr_tuple(NULL, 2, items);
}

static void unref_data(void *d) { sr_unref(d); }

static SrVal *seq_rule_new(SrVal *fun) { return sr_builtin_with("rule", seq_rule_call, sr_ref(fun), unref_data); }

static SrVal *jax_sequential_vmap(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "sequential_vmap", "f", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "sequential_vmap(f) takes a function");
  SrVal *f = cvm_new(p[0]);
  ((CustomVmap *)f->obj.data)->rule = seq_rule_new(p[0]);
  return f;
}

void sr_custom_vmap_init(void) {
  sr_val_keep_class(&vrule_class);
  sr_prims[SR_P_custom_vmap_call].batch = batch_custom_vmap;
  sr_ad_set_jvp(SR_P_custom_vmap_call, jvp_custom_vmap);
  sr_def("jax.custom_batching.custom_vmap", jax_custom_vmap,
         "custom_vmap(fun): fun with a batching rule of its own, set with f.def_vmap(rule); rule(axis_size, "
         "in_batched, *args) returns (out, out_batched)");
  sr_def("jax.custom_batching.sequential_vmap", jax_sequential_vmap,
         "sequential_vmap(f): f batched as lax.map runs it, one example at a time");
}

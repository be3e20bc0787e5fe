/* ad_shard_map.c: rules of shard_map (shard_map.py: _shard_map_jvp,
 * _shard_map_linearize, _shard_map_transpose).
 *
 * The body is transformed inside the manual context the map creates (its
 * mesh with the newly manual axes Manual, and check_vma), so that the type
 * rules see manual-mode types.  Linearized, a shard_map becomes a forward
 * shard_map that also returns the residuals (each with an out_spec that
 * stacks its per-device values: P(varying axes, unreduced=..., reduced=...)
 * as ShapedArray.nospec gives; scalars are given a leading axis of 1 first)
 * and a tangent shard_map of the linear body.  Transposed, the cotangents
 * come in with `out_spec.to_ct_spec()` (reduced <-> unreduced) and leave
 * with `in_spec.to_ct_spec()`.
 */
#include "ad/ad_rules.h"

#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "util/intern.h"

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)
#define JVP(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

typedef struct SMap {
  SrJaxpr *body;
  SrVal *in_specs, *out_specs; /* tuples of P */
  int check_vma;
  const SrMesh *inner;         /* the manual mesh of the body */
  const SrMesh *mesh;          /* the abstract mesh of the map */
  SrAxes newly;                /* newly manual axes, on mesh */
} SMap;

static int smap_read(SrAd *ad, const SrEqn *e, SMap *s) {
  memset(s, 0, sizeof *s);
  SrVal *j = param(e, "jaxpr"), *is = param(e, "in_specs"), *os = param(e, "out_specs");
  SrVal *m = param(e, "mesh"), *cv = param(e, "check_vma"), *nm = param(e, "newly_manual_axes");
  if (!j || j->kind != SR_V_JAXPR || !is || !os || !sr_is_seq(is) || !sr_is_seq(os))
    return sr_raise(ad->I, "TypeError", "shard_map equation without jaxpr, in_specs and out_specs"), -1;
  s->body = j->jx.jaxpr;
  s->in_specs = is;
  s->out_specs = os;
  s->check_vma = cv ? sr_val_truthy(cv) : 1;
  const SrMesh *am = m && m->kind == SR_V_MESH ? m->mesh : NULL;
  if (!am || !am->n) am = ad_ctx_mesh(ad);
  if (!am->n) return sr_raise(ad->I, "ValueError", "shard_map: no mesh to differentiate it on"), -1;
  if (!am->abstract) am = sr_mesh_abstract(am, 1);
  s->mesh = am;
  SrAxes newly = 0;
  if (nm && sr_is_seq(nm)) {
    for (int i = 0; i < nm->seq.n; i++) {
      SrVal *n = nm->seq.items[i];
      if (n->kind != SR_V_STR && n->kind != SR_V_WORD) continue;
      int a = sr_mesh_axis(am, sr_intern(n->str.s, n->str.n));
      if (a >= 0) newly |= 1u << a;
    }
  } else {
    newly = (SrAxes)((1ull << am->n) - 1) & ~sr_mesh_axes_of_type(am, SR_AXIS_MANUAL);
  }
  s->newly = newly;
  uint8_t types[SR_MAX_AXES];
  memcpy(types, am->types, sizeof types);
  for (int i = 0; i < am->n; i++)
    if (newly & (1u << i)) types[i] = SR_AXIS_MANUAL;
  s->inner = sr_mesh_with_types(am, types);
  return 0;
}

/* Entering and leaving the body's manual context. */
typedef struct Ctx {
  int vma;
} Ctx;

static int enter(SrAd *ad, const SMap *s, Ctx *c) {
  SrJaxState *js = ad->I->jax;
  if (js->nabstract == 32) return sr_raise(ad->I, "RuntimeError", "abstract meshes nested too deeply"), -1;
  js->abstract[js->nabstract++] = s->inner;
  c->vma = js->check_vma;
  js->check_vma = s->check_vma;
  return 0;
}

static void leave(SrAd *ad, Ctx *c) {
  SrJaxState *js = ad->I->jax;
  if (js->nabstract) js->nabstract--;
  js->check_vma = c->vma;
}

/* ---- specs ---- */

static const SrSpec *spec_of(const SrVal *v) { return v && v->kind == SR_V_SPEC ? v->spec : NULL; }

/* P.to_ct_spec: unreduced and reduced swapped */
static SrVal *to_ct_spec(const SrVal *v) {
  const SrSpec *s = spec_of(v);
  if (!s) return sr_ref((SrVal *)v);
  SrSpec c = *s;
  c.unreduced = s->reduced;
  c.nunreduced = s->nreduced;
  c.reduced = s->unreduced;
  c.nreduced = s->nunreduced;
  c.ukind = c.nunreduced ? SR_UK_SUM : SR_UK_NONE;
  return sr_spec_val(NULL, &c);
}

/* ShapedArray.nospec: the out_spec of a residual t (a body type). */
static SrVal *nospec(const SMap *s, const SrType *t) {
  SrSpec sp = {0};
  SrSpecEntry en;
  const char *names[SR_MAX_AXES], *un[SR_MAX_AXES], *re[SR_MAX_AXES];
  int nn = 0;
  const SrMesh *m = s->mesh;
  for (int i = 0; i < m->n; i++) {
    int a = t->mesh ? sr_mesh_axis(t->mesh, m->names[i]) : -1;
    int vary = s->check_vma ? a >= 0 && (t->varying & (1u << a)) : (s->newly & (1u << i)) != 0;
    if (vary) names[nn++] = m->names[i];
    if (s->check_vma && a >= 0 && (t->unreduced & (1u << a))) un[sp.nunreduced++] = m->names[i];
    if (s->check_vma && a >= 0 && (t->reduced & (1u << a))) re[sp.nreduced++] = m->names[i];
  }
  if (nn) {
    en.n = nn;
    en.names = names;
    sp.n = 1;
    sp.e = &en;
  }
  sp.unreduced = un;
  sp.reduced = re;
  sp.ukind = sp.nunreduced ? (t->ukind ? t->ukind : SR_UK_SUM) : SR_UK_NONE;
  return sr_spec_val(NULL, &sp);
}

static SrVal *specs_tuple(int n, SrVal **items) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, items[i]);
  return t;
}

static SrVal *bind_smap(SrAd *ad, const SrEqn *e, SrJaxpr *body, SrVal *in_specs, SrVal *out_specs, int nin,
                        SrVal **in) {
  SrPList ps = {0};
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "jaxpr") == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, body));
    else if (strcmp(k, "in_specs") == 0) sr_plist_add(&ps, k, sr_ref(in_specs));
    else if (strcmp(k, "out_specs") == 0) sr_plist_add(&ps, k, sr_ref(out_specs));
    else sr_plist_add(&ps, k, sr_ref(e->params[p].val));
  }
  SrVal *r = ad_bind(ad, SR_P_shard_map, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

/* ---- JVP ---- */

static int smap_jvp_mode(SrAd *ad, const SrEqn *e, const SMap *s, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  uint32_t n = e->nin, no = e->nout;
  uint8_t *nz = sr_xcalloc(n + 1, 1), *onz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) nz[i] = t[i] != NULL;
  Ctx c;
  if (enter(ad, s, &c) < 0) return -1;
  SrJaxpr *J = ad_jvp_jaxpr(ad, s->body, nz, NULL, onz);
  leave(ad, &c);
  int rc = -1;
  if (J) {
    SrVal **in = sr_xcalloc(2 * n + 1, sizeof *in), **isp = sr_xcalloc(2 * n + 1, sizeof *isp);
    SrVal **osp = sr_xcalloc(2 * no + 1, sizeof *osp);
    uint32_t k = 0, m = 0;
    for (uint32_t i = 0; i < n; i++) in[k] = x[i], isp[k++] = sr_ref(s->in_specs->seq.items[i]);
    for (uint32_t i = 0; i < n; i++)
      if (nz[i]) in[k] = t[i], isp[k++] = sr_ref(s->in_specs->seq.items[i]);
    for (uint32_t i = 0; i < no; i++) osp[m++] = sr_ref(s->out_specs->seq.items[i]);
    for (uint32_t i = 0; i < no; i++)
      if (onz[i]) osp[m++] = sr_ref(s->out_specs->seq.items[i]);
    SrVal *ist = specs_tuple((int)k, isp), *ost = specs_tuple((int)m, osp);
    SrVal *r = bind_smap(ad, e, J, ist, ost, (int)k, in);
    if (r) {
      for (uint32_t i = 0, q = no; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = onz[i] ? r->seq.items[q++] : NULL;
      }
      rc = 0;
    }
    sr_unref(ist);
    sr_unref(ost);
    free(in);
    free(isp);
    free(osp);
    sr_program_unref(J->prog);
  }
  free(nz);
  free(onz);
  return rc;
}

/* ---- linearization ---- */

/* F with its scalar residual outputs (from index first) given a leading
   axis of 1 (lax.broadcast(x, (1,))), traced again in the manual context. */
static SrJaxpr *promote_outputs(SrAd *ad, SrJaxpr *F, uint32_t first, const uint8_t *promote) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(F);
  const SrType **types = sr_xcalloc(n + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++) types[i] = sr_args(F)[i]->type;
  SrVal **args = sr_xcalloc(n + 1, sizeof *args);
  SrTrace *tr = ad_trace_begin(ad, (int)n, types, args);
  free(types);
  I->trace = tr;
  SrVal *r = sr_eval_jaxpr(I, F, (int)n, args);
  SrJaxpr *out = NULL;
  if (r) {
    SrAd sub;
    sr_ad_begin(&sub, I, SR_AD_BWD);
    SrVal **outs = sr_xcalloc((size_t)r->seq.n + 1, sizeof *outs);
    int ok = 1;
    for (int i = 0; i < r->seq.n && ok; i++) {
      outs[i] = r->seq.items[i];
      if ((uint32_t)i >= first && promote[i - (int)first]) {
        const SrType *t = ad_type(&sub, outs[i]);
        SrTypeBuilder b;
        sr_type_builder(&b, t);
        b.ndim = 1;
        memset(&b.dims[0], 0, sizeof b.dims[0]);
        b.dims[0].size = 1;
        outs[i] = ad_broadcast_in_dim(&sub, outs[i], sr_type_get(&b), NULL, 0, 0);
        ok = outs[i] != NULL;
      }
    }
    if (ok) out = ad_trace_end(&sub, tr, r->seq.n, outs, NULL);
    else sr_trace_abort(I, tr);
    free(outs);
    sr_ad_end(&sub);
  } else {
    sr_trace_abort(I, tr);
  }
  sr_unref(r);
  for (uint32_t i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  I->trace = saved;
  return out;
}

/* L with its scalar residual arguments taking a leading axis of 1 that
   is squeezed away first (_promote_scalar_residuals_jaxpr). */
static SrJaxpr *promote_args(SrAd *ad, SrJaxpr *L, const uint8_t *promote, uint32_t nprom) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(L);
  const SrType **types = sr_xcalloc(n + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++) {
    const SrType *t = sr_args(L)[i]->type;
    if (i < nprom && promote[i]) {
      SrTypeBuilder b;
      sr_type_builder(&b, t);
      b.ndim = 1;
      memset(&b.dims[0], 0, sizeof b.dims[0]);
      b.dims[0].size = 1;
      t = sr_type_get(&b);
    }
    types[i] = t;
  }
  SrVal **args = sr_xcalloc(n + 1, sizeof *args), **in = sr_xcalloc(n + 1, sizeof *in);
  SrTrace *tr = ad_trace_begin(ad, (int)n, types, args);
  free(types);
  I->trace = tr;
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_BWD);
  int ok = 1;
  for (uint32_t i = 0; i < n && ok; i++) {
    in[i] = args[i];
    if (i < nprom && promote[i]) {
      int64_t d0 = 0;
      in[i] = ad_bindv(&sub, SR_P_squeeze, 1, &args[i], "dimensions", ad_ints(&d0, 1), NULL);
      ok = in[i] != NULL;
    }
  }
  SrVal *r = ok ? sr_eval_jaxpr(I, L, (int)n, in) : NULL;
  SrJaxpr *out = NULL;
  if (r) out = ad_trace_end(&sub, tr, r->seq.n, r->seq.items, NULL);
  else sr_trace_abort(I, tr);
  sr_unref(r);
  sr_ad_end(&sub);
  for (uint32_t i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  free(in);
  I->trace = saved;
  return out;
}

static int smap_lin(SrAd *ad, const SrEqn *e, const SMap *s, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  uint32_t n = e->nin, no = e->nout;
  uint8_t *nz = sr_xcalloc(n + 1, 1);
  for (uint32_t i = 0; i < n; i++) nz[i] = t[i] != NULL;
  Ctx c;
  if (enter(ad, s, &c) < 0) {
    free(nz);
    return -1;
  }
  SrLinJaxprs lj;
  int rc = ad_linearize_jaxpr(ad, s->body, nz, NULL, NULL, &lj);
  if (rc < 0) {
    leave(ad, &c);
    free(nz);
    return -1;
  }
  rc = -1;
  SrJaxpr *F = lj.fwd, *L = lj.lin;
  int nres = lj.nres;
  uint32_t nf = F->nout;
  /* residuals: forwarded inputs (in_fwd), primal outputs (out_fwd), or
     returned by the forward map */
  int *out_fwd = sr_xcalloc((size_t)nres + 1, sizeof *out_fwd), *ret = sr_xcalloc((size_t)nres + 1, sizeof *ret);
  uint8_t *keep = sr_xcalloc(nf + 1, 1), *promote = sr_xcalloc((size_t)nres + 1, 1);
  for (uint32_t i = 0; i < no; i++) keep[i] = 1;
  uint32_t q = no, nkept = no;
  for (int r = 0; r < nres; r++) {
    out_fwd[r] = -1;
    ret[r] = -1;
    if (lj.in_fwd[r]) continue;
    SrVar *v = F->outvars[q];
    for (uint32_t i = 0; i < no && out_fwd[r] < 0; i++)
      if (v->kind == SR_VAR && F->outvars[i] == v) out_fwd[r] = (int)i;
    if (out_fwd[r] < 0) {
      keep[q] = 1;
      ret[r] = (int)nkept++;
      promote[r] = v->type && v->type->ndim == 0;
    }
    q++;
  }
  uint8_t *fprom = sr_xcalloc(nf + 1, 1);
  for (int r = 0, qq = 0; r < nres; r++)
    if (ret[r] >= 0) fprom[qq++] = promote[r];
  SrJaxpr *F2 = F;
  if (nkept != nf) {
    int *ord = sr_xcalloc(nf + 1, sizeof *ord);
    uint32_t k = 0;
    for (uint32_t i = 0; i < nf; i++)
      if (keep[i]) ord[k++] = (int)i;
    SrJaxprBuilder b;
    sr_jb_init(&b, F->prog);
    for (uint32_t i = 0; i < sr_nargs(F); i++) sr_jb_invar(&b, sr_args(F)[i]);
    for (uint32_t kk = 0; kk < F->neqn; kk++) {
      const SrEqn *q2 = &F->eqns[kk];
      sr_jb_eqn(&b, q2->prim, q2->nin, q2->in, q2->nout, q2->out, q2->nparams, q2->params);
    }
    for (uint32_t i = 0; i < k; i++) sr_jb_outvar(&b, F->outvars[ord[i]]);
    F2 = sr_jb_finish(&b);
    lj.fwd = F2;
    free(ord);
  }
  int anyprom = 0;
  for (int r = 0; r < nres; r++) anyprom |= promote[r];
  SrJaxpr *F3 = anyprom ? promote_outputs(ad, F2, no, fprom) : F2;
  SrJaxpr *L2 = anyprom ? promote_args(ad, L, promote, (uint32_t)nres) : L;
  SrVal **rspec = sr_xcalloc((size_t)nres + 1, sizeof *rspec);
  for (int r = 0; r < nres; r++) {
    const SrType *rt = sr_args(L)[r]->type;
    if (lj.in_fwd[r]) rspec[r] = sr_ref(s->in_specs->seq.items[lj.in_fwd[r] - 1]);
    else if (out_fwd[r] >= 0) rspec[r] = sr_ref(s->out_specs->seq.items[out_fwd[r]]);
    else rspec[r] = nospec(s, rt);
  }
  leave(ad, &c);
  if (!F3 || !L2) goto out;
  {
    /* the forward map */
    SrVal **osp = sr_xcalloc(nkept + 1, sizeof *osp);
    for (uint32_t i = 0; i < no; i++) osp[i] = sr_ref(s->out_specs->seq.items[i]);
    for (int r = 0; r < nres; r++)
      if (ret[r] >= 0) osp[ret[r]] = sr_ref(rspec[r]);
    SrVal *ost = specs_tuple((int)nkept, osp);
    free(osp);
    SrVal *rf = bind_smap(ad, e, F3, s->in_specs, ost, (int)n, x);
    sr_unref(ost);
    if (!rf) goto out;
    for (uint32_t i = 0; i < no; i++) y[i] = rf->seq.items[i];
    int anynz = 0;
    for (uint32_t i = 0; i < no; i++) anynz |= lj.out_nz[i];
    if (!anynz) {
      rc = 0;
      goto out;
    }
    /* the tangent map: residuals, then the nonzero tangents */
    uint32_t nl = sr_nargs(L2);
    SrVal **in = sr_xcalloc(nl + 1, sizeof *in), **isp = sr_xcalloc(nl + 1, sizeof *isp);
    uint32_t k = 0;
    for (int r = 0; r < nres; r++) {
      in[k] = lj.in_fwd[r] ? x[lj.in_fwd[r] - 1] : out_fwd[r] >= 0 ? y[out_fwd[r]] : rf->seq.items[ret[r]];
      isp[k++] = sr_ref(rspec[r]);
    }
    for (uint32_t i = 0; i < n; i++)
      if (nz[i]) in[k] = t[i], isp[k++] = sr_ref(s->in_specs->seq.items[i]);
    SrVal **osp2 = sr_xcalloc(no + 1, sizeof *osp2);
    uint32_t m = 0;
    for (uint32_t i = 0; i < no; i++)
      if (lj.out_nz[i]) osp2[m++] = sr_ref(s->out_specs->seq.items[i]);
    SrVal *ist = specs_tuple((int)k, isp), *ost2 = specs_tuple((int)m, osp2);
    SrVal *rt = k == nl ? bind_smap(ad, e, L2, ist, ost2, (int)k, in) : NULL;
    if (rt) {
      for (uint32_t i = 0, mm = 0; i < no; i++) ty[i] = lj.out_nz[i] ? rt->seq.items[mm++] : NULL;
      rc = 0;
    } else if (!ad->I->exc) {
      sr_raise(ad->I, "RuntimeError", "internal error: the tangent shard_map's operands");
    }
    sr_unref(ist);
    sr_unref(ost2);
    free(in);
    free(isp);
    free(osp2);
  }
out:
  if (F3 && F3 != F2) sr_program_unref(F3->prog);
  if (L2 && L2 != L) sr_program_unref(L2->prog);
  for (int r = 0; r < nres; r++) sr_unref(rspec[r]);
  free(rspec);
  free(out_fwd);
  free(ret);
  free(keep);
  free(promote);
  free(fprom);
  free(nz);
  ad_lin_jaxprs_free(&lj);
  return rc;
}

JVP(jvp_shard_map) {
  SMap s;
  if (smap_read(ad, e, &s) < 0) return -1;
  if (ad->mode == SR_AD_LIN) return smap_lin(ad, e, &s, x, t, y, ty);
  return smap_jvp_mode(ad, e, &s, x, t, y, ty);
}

/* ---- transpose ---- */

TR(tr_shard_map) {
  SMap s;
  if (smap_read(ad, e, &s) < 0) return -1;
  SrInterp *I = ad->I;
  SrJaxpr *b = s.body;
  uint32_t n = e->nin, no = e->nout;
  uint8_t *lin = sr_xcalloc(n + 1, 1);
  for (uint32_t i = 0; i < n; i++) lin[i] = x[i] == NULL;
  /* the transposed body: (nonzero cts, non-linear operands) -> nonzero
     cotangents of the linear operands */
  const SrType **types = sr_xcalloc(n + no + 1, sizeof *types);
  uint32_t k = 0;
  for (uint32_t i = 0; i < no; i++)
    if (ct[i]) types[k++] = sr_ad_ct_type(b->outvars[i]->type);
  uint32_t nct = k;
  for (uint32_t i = 0; i < n; i++)
    if (!lin[i]) types[k++] = sr_args(b)[i]->type;
  Ctx c;
  if (enter(ad, &s, &c) < 0) {
    free(lin);
    free(types);
    return -1;
  }
  SrTrace *saved = I->trace;
  SrVal **args = sr_xcalloc(k + 1, sizeof *args);
  SrTrace *tr = ad_trace_begin(ad, (int)k, types, args);
  free(types);
  SrVal **vals = sr_xcalloc(n + 1, sizeof *vals), **cts = sr_xcalloc(no + 1, sizeof *cts);
  SrVal **cin = sr_xcalloc(n + 1, sizeof *cin);
  for (uint32_t i = 0, q = 0; i < no; i++) cts[i] = ct[i] ? args[q++] : NULL;
  for (uint32_t i = 0, q = nct; i < n; i++)
    if (!lin[i]) vals[i] = args[q++];
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_BWD);
  I->trace = tr;
  int rc = ad_backward(&sub, b, lin, vals, cts, cin);
  SrJaxpr *T = NULL;
  uint32_t nout = 0;
  if (rc == 0) {
    SrVal **outs = sr_xcalloc(n + 1, sizeof *outs);
    for (uint32_t i = 0; i < n; i++)
      if (lin[i] && cin[i]) outs[nout++] = cin[i];
    T = ad_trace_end(&sub, tr, (int)nout, outs, NULL);
    free(outs);
  } else {
    sr_trace_abort(I, tr);
  }
  sr_ad_end(&sub);
  I->trace = saved;
  leave(ad, &c);
  for (uint32_t i = 0; i < k; i++) sr_unref(args[i]);
  free(args);
  rc = -1;
  if (T) {
    SrVal **in = sr_xcalloc(n + no + 1, sizeof *in), **isp = sr_xcalloc(n + no + 1, sizeof *isp);
    SrVal **osp = sr_xcalloc(n + 1, sizeof *osp);
    uint32_t m = 0, q = 0;
    for (uint32_t i = 0; i < no; i++)
      if (ct[i]) in[m] = ct[i], isp[m++] = to_ct_spec(s.out_specs->seq.items[i]);
    for (uint32_t i = 0; i < n; i++)
      if (!lin[i]) in[m] = x[i], isp[m++] = sr_ref(s.in_specs->seq.items[i]);
    for (uint32_t i = 0; i < n; i++)
      if (lin[i] && cin[i]) osp[q++] = to_ct_spec(s.in_specs->seq.items[i]);
    SrVal *ist = specs_tuple((int)m, isp), *ost = specs_tuple((int)q, osp);
    SrVal *r = bind_smap(ad, e, T, ist, ost, (int)m, in);
    if (r) {
      for (uint32_t i = 0, z = 0; i < n; i++)
        if (lin[i] && cin[i]) cx[i] = r->seq.items[z++];
      rc = 0;
    }
    sr_unref(ist);
    sr_unref(ost);
    free(in);
    free(isp);
    free(osp);
    sr_program_unref(T->prog);
  }
  for (uint32_t i = 0; i < n; i++) sr_unref(cin[i]);
  free(cin);
  free(vals);
  free(cts);
  free(lin);
  return rc;
}

void sr_ad_rules_shard_map_init(void);

void sr_ad_rules_shard_map_init(void) {
  sr_ad_set_jvp(SR_P_shard_map, jvp_shard_map);
  sr_ad_set_transpose(SR_P_shard_map, tr_shard_map);
}

/* ad_collectives.c: rules of the sharding casts (reshard,
 * sharding_constraint) and of the manual-mode collectives and casts
 * (lax/parallel.py, core.py, pjit.py).
 *
 * All of these are linear: the JVP applies the same operation to the
 * tangent.  The transposes pair them up as the seed's table says: a
 * forward cast to reduced transposes to the reshard from unreduced that is
 * the all-reduce (reshard), psum_invariant <-> pvary, preduced <->
 * unreduced_psum, vary_unreduced_cast <-> reduced_vary_cast, all_gather <->
 * reduce_scatter, all_gather_reduced <-> unreduced_reduce_scatter,
 * ppermute <-> ppermute with the inverse permutation, all_to_all <->
 * all_to_all with split and concat swapped.  pmax and pmin have no rules,
 * as in JAX.
 */
#include "ad/ad_rules.h"

#include <stdlib.h>
#include <string.h>

#include "util/intern.h"

int sr_ad_jvp_linear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)

/* ---- reshard ---- */

TR(tr_reshard) {
  (void)x;
  /* reshard of the cotangent to the input's cotangent sharding
     (_reshard_transpose_fancy): {U:X} -> replicated is the all-reduce */
  cx[0] = ad_reshard(ad, ct[0], sr_ad_ct_type(e->in[0]->type));
  return cx[0] ? 0 : -1;
}

/* sharding_constraint, layout_constraint: the same constraint on ct */
TR(tr_same) {
  (void)x;
  SrVal *r = ad_bind_eqn(ad, e, ct);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nin; i++) cx[i] = r->seq.items[i];
  return 0;
}

/* ---- collectives ---- */

/* Binds prim to the cotangents (zeros instantiated) with e's params, a
   key renamed (from -> to) and one param replaced (key -> val, stolen). */
static int coll_transpose(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **cx, int prim, const char *from,
                          const char *to, const char *key, SrVal *val, const char *drop) {
  SrPList ps = {0};
  for (uint32_t i = 0; i < e->nparams; i++) {
    const char *k = e->params[i].key;
    if (key && strcmp(k, key) == 0) continue;
    if (drop && strcmp(k, drop) == 0) continue;
    if (from && strcmp(k, from) == 0) k = to;
    sr_plist_add(&ps, k, sr_ref(e->params[i].val));
  }
  if (key) sr_plist_add(&ps, key, val);
  SrVal *small[32], **cs = e->nout <= 32 ? small : sr_xcalloc(e->nout, sizeof *cs);
  for (uint32_t i = 0; i < e->nout; i++) cs[i] = ct[i] ? ct[i] : ad_zeros(ad, sr_ad_ct_type(e->out[i]->type));
  SrVal *r = ad_bind(ad, prim, (int)e->nout, cs, ps.n, ps.p);
  sr_plist_free(&ps);
  if (cs != small) free(cs);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nin; i++) cx[i] = r->kind == SR_V_TUPLE ? r->seq.items[i] : r;
  return 0;
}

#define PAIR(name, prim)                                                                              \
  TR(name) {                                                                                          \
    (void)x;                                                                                          \
    return coll_transpose(ad, e, ct, cx, prim, NULL, NULL, NULL, NULL, NULL);                         \
  }
PAIR(tr_psum_invariant, SR_P_pvary)
PAIR(tr_pvary, SR_P_psum_invariant)
PAIR(tr_psum, SR_P_psum)
PAIR(tr_reduced_vary_cast, SR_P_vary_unreduced_cast)
PAIR(tr_vary_unreduced_cast, SR_P_reduced_vary_cast)
PAIR(tr_preduced, SR_P_unreduced_psum)
PAIR(tr_unreduced_psum, SR_P_preduced)

TR(tr_all_gather) {
  (void)x;
  return coll_transpose(ad, e, ct, cx, SR_P_reduce_scatter, "all_gather_dimension", "scatter_dimension", NULL, NULL,
                        NULL);
}

TR(tr_reduce_scatter) {
  (void)x;
  return coll_transpose(ad, e, ct, cx, SR_P_all_gather, "scatter_dimension", "all_gather_dimension", NULL, NULL,
                        NULL);
}

TR(tr_all_gather_reduced) {
  (void)x;
  return coll_transpose(ad, e, ct, cx, SR_P_unreduced_reduce_scatter, "all_gather_dimension", "scatter_dimension",
                        NULL, NULL, "axis_index_groups");
}

TR(tr_unreduced_reduce_scatter) {
  (void)x;
  return coll_transpose(ad, e, ct, cx, SR_P_all_gather_reduced, "scatter_dimension", "all_gather_dimension", NULL,
                        NULL, "axis_index_groups");
}

TR(tr_ppermute) {
  (void)x;
  SrVal *perm = sr_eqn_param(e, sr_intern_cstr("perm"));
  if (!perm || !sr_is_seq(perm)) return sr_raise(ad->I, "TypeError", "ppermute: malformed perm"), -1;
  SrVal *inv = sr_seq(NULL, SR_V_TUPLE, perm->seq.n);
  for (int i = 0; i < perm->seq.n; i++) {
    SrVal *p = perm->seq.items[i];
    if (!sr_is_seq(p) || p->seq.n != 2) {
      sr_unref(inv);
      return sr_raise(ad->I, "TypeError", "ppermute: malformed perm"), -1;
    }
    SrVal *pair = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, pair, sr_ref(p->seq.items[1]));
    sr_seq_push(NULL, pair, sr_ref(p->seq.items[0]));
    sr_seq_push(NULL, inv, pair);
  }
  return coll_transpose(ad, e, ct, cx, SR_P_ppermute, NULL, NULL, "perm", inv, NULL);
}

TR(tr_all_to_all) {
  (void)x;
  SrVal *sa = sr_eqn_param(e, sr_intern_cstr("split_axis")), *ca = sr_eqn_param(e, sr_intern_cstr("concat_axis"));
  if (!sa || !ca) return sr_raise(ad->I, "TypeError", "all_to_all: missing split_axis or concat_axis"), -1;
  SrPList ps = {0};
  for (uint32_t i = 0; i < e->nparams; i++) {
    const char *k = e->params[i].key;
    SrVal *v = e->params[i].val;
    if (strcmp(k, "split_axis") == 0) v = ca;
    else if (strcmp(k, "concat_axis") == 0) v = sa;
    sr_plist_add(&ps, k, sr_ref(v));
  }
  SrVal *c = ct[0];
  cx[0] = ad_bind(ad, SR_P_all_to_all, 1, &c, ps.n, ps.p);
  sr_plist_free(&ps);
  return cx[0] ? 0 : -1;
}

void sr_ad_rules_manual_init(void) {
  static const struct {
    int id;
    SrTransposeRule tr;
  } lin[] = {
      {SR_P_reshard, tr_reshard},
      {SR_P_sharding_constraint, tr_same},
      {SR_P_layout_constraint, tr_same},
      {SR_P_psum_invariant, tr_psum_invariant},
      {SR_P_pvary, tr_pvary},
      {SR_P_psum, tr_psum},
      {SR_P_reduced_vary_cast, tr_reduced_vary_cast},
      {SR_P_vary_unreduced_cast, tr_vary_unreduced_cast},
      {SR_P_preduced, tr_preduced},
      {SR_P_unreduced_psum, tr_unreduced_psum},
      {SR_P_all_gather, tr_all_gather},
      {SR_P_reduce_scatter, tr_reduce_scatter},
      {SR_P_all_gather_reduced, tr_all_gather_reduced},
      {SR_P_unreduced_reduce_scatter, tr_unreduced_reduce_scatter},
      {SR_P_ppermute, tr_ppermute},
      {SR_P_all_to_all, tr_all_to_all},
  };
  for (size_t i = 0; i < sizeof lin / sizeof *lin; i++) {
    sr_ad_set_jvp(lin[i].id, sr_ad_jvp_linear);
    sr_ad_set_transpose(lin[i].id, lin[i].tr);
  }
}

/* lax.h: the primitives' rules, one family file per family of primitives
 * (after the modules of JAX's jax/_src/lax/).
 *
 * DESIGN.  A family file lib/lax/F.c holds, for the primitives of its
 * family, every rule of their rows in the primitive table (prims/prim.def,
 * prims/prim.h) with the family's helpers:
 *
 *   type       their output types (check/rule.h; the checker and bind)
 *   eval       running them on concrete arrays (exec/eval.h)
 *   jvp        forward-mode differentiation (ad/ad_rules.h)
 *   transpose  their transposes (ad/ad_rules.h)
 *   comm       the communication they imply (prim.h's SrCommNote;
 *              :comm-static and the optimizer)
 *
 * side by side, in that order, under a heading per primitive (or per group
 * of primitives sharing rules), after the family's shared helpers and
 * before its registration, which fills the rows' slots.  The families:
 *
 *   elementwise  unary and n-ary elementwise ops, select_n, clamp,
 *                conversions, add_any (lax.py)
 *   structural   shapes and slices: broadcast_in_dim, reshape, transpose,
 *                slice, pad, concatenate, gather, sort, iota, stack, ...
 *                (lax.py, slicing.py)
 *   reduce       reductions, arg-reductions and cumulative ops
 *                (lax.py, control_flow/loops.py's cumulative reductions)
 *   dot          dot_general (lax.py)
 *   sharding     reshard, sharding_constraint, layout_constraint
 *                (pjit.py, layout.py)
 *   control      calls and control flow: jit, remat, custom_jvp/vjp calls,
 *                optimization_barrier, while, scan, cond (control_flow/)
 *   manual       manual mode: shard_map and the collectives and casts
 *                (shard_map.py, parallel.py)
 *   random       the PRNG primitives (prng.py)
 *
 * A row's slots are filled by its family's registration, sr_lax_F_init(),
 * with typed assignments (sr_set_type_rule, sr_set_eval_rule,
 * sr_ad_set_jvp, sr_ad_set_transpose, or the comm slot itself), by the
 * row's SR_P_* id, never by name.  sr_lax_init() (lax.c) calls
 * sr_prims_init() and then every family's registration once, in a fixed
 * order; a slot left NULL is "no rule", which each stage reports in JAX's
 * words.  No layer overrides a slot afterwards: where an upper layer must
 * take part in a rule (custom_jvp's Python rule object), the family's rule
 * calls it through a hook declared here.
 *
 * The family files sit above the engines and use the engines' helpers
 * below them: check/rule.h (type rules), exec/eval.h and exec/kern.h
 * (eval rules), ad/ad_rules.h (the ad_* lax-level operations, the walks
 * for calls), and the runtime the engines use.  The engines (check/,
 * exec/eval.c, ad/ad.c) walk jaxprs through the slots and hold no
 * per-primitive rule.
 */
#ifndef SR_LAX_LAX_H
#define SR_LAX_LAX_H

#include "ad/ad_rules.h"
#include "prims/prim.h"

/* Fills every rule slot of the primitive table (calling sr_prims_init
   first); idempotent.  The program, the tests and the upper layers' inits
   call it before anything runs a rule. */
void sr_lax_init(void);

/* The families' registrations, called by sr_lax_init. */
void sr_lax_elementwise_init(void);
void sr_lax_structural_init(void);
void sr_lax_reduce_init(void);
void sr_lax_dot_init(void);
void sr_lax_sharding_init(void);
void sr_lax_control_init(void);
void sr_lax_solves_init(void); /* solves.c: custom_linear_solve */
void sr_lax_manual_init(void);
void sr_lax_random_init(void);
void sr_lax_sort_init(void); /* sort.c: sort's eval and JVP, top_k */
void sr_lax_cumred_init(void); /* cumred.c: the JVPs of cumprod, cummax, cummin */
void sr_lax_conv_init(void); /* conv.c: conv_general_dilated */
void sr_lax_state_init(void); /* state.c: new_ref, get, swap, addupdate, freeze */

/* The param text ConvDimensionNumbers(lhs_spec=..., rhs_spec=..., out_spec=...)
   of the three specs of nd entries each (conv.c; a new reference). */
SrVal *sr_lax_conv_dn_val(const int64_t *lhs_spec, const int64_t *rhs_spec, const int64_t *out_spec, int nd);
/* slicing._get_sharding_for_varying_out_shape(b's shape, x, name) into b's
   dims (conv.c; the windowed family shares it). */
/* The host loops of the reductions with a computation of the user's
   (reduce.c: reduce, windowed.c: reduce_window): one step of the reducer
   jaxpr on host scalars, written over acc; the host results as e's
   outputs. */
int sr_lax_reducer_step(struct SrEvalCtx *cx, const struct SrEvalEqn *e, const SrJaxpr *j, const char *name,
                        unsigned char *const *acc, unsigned char *const *elem);
int sr_lax_host_outputs(struct SrEvalCtx *cx, const struct SrEvalEqn *e, uint32_t n, unsigned char *const *acc);
/* core.abstract_token as a type: the scalar of the opaque dtype Tok, which
   prints as Tok (structural.c, create_token's) */
const SrType *sr_lax_token_type(void);
int sr_lax_varying_out_sharding(struct SrTypeCtx *cx, const SrType *x, SrTypeBuilder *b, const char *name);
void sr_lax_windowed_init(void); /* windowed.c: reduce_window_*, select_and_{gather,scatter}_add */
void sr_lax_linalg_init(void); /* linalg.c: qr, svd (LAPACK) and triangular_solve */
void sr_lax_linalg16_init(void); /* linalg16.c: cholesky, lu, eigh, lu_pivots_to_permutation */
void sr_lax_linalg21_init(void); /* linalg21.c: eig */
void sr_lax_linalg18_init(void); /* linalg18.c: geqrf, householder_product, ormqr, hessenberg, schur, tridiagonal */
void sr_lax_fft_init(void); /* fft.c: fft */

/* fft.c: the calls of fft's transpose and batching rules that are jits in
   JAX (lax.fft itself, _rfft_transpose), bound into the current trace by
   the jax layer, which sets them at start-up (jax/numpy_fft.c); each
   returns a new reference, or NULL with an exception raised.  A NULL fft
   hook binds the primitive instead; a NULL transpose hook leaves RFFT or
   IRFFT without a transpose. */
typedef struct SrLaxFftHooks {
  SrVal *(*fft)(SrInterp *I, SrVal *x, int fft_type, const int64_t *lengths, int n);
  SrVal *(*rfft_transpose)(SrInterp *I, SrVal *t, const int64_t *lengths, int n);
  SrVal *(*irfft_transpose)(SrInterp *I, SrVal *t, const int64_t *lengths, int n);
} SrLaxFftHooks;
extern SrLaxFftHooks sr_lax_fft_hooks;
/* The FftType a param holds (0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT: its int, or
   a text ending in .FFT, ...), or -1. */
int sr_lax_fft_type_of(const SrVal *v);

/* lax._reduction_jaxpr of a scatter's combiner: the update_jaxpr param of
   scatter-add, -sub, -mul, -min or -max on dtype dt, { lambda ; a:dt[] b:dt[].
   let c:dt[] = add a b in (c,) }, None for scatter (a new reference). */
SrVal *sr_lax_scatter_update_jaxpr(int prim_id, SrDtype dt);

/* The JVP of a custom_jvp_call, custom_vjp_call or custom_vjp_call_jaxpr
   whose rule did not survive printing (a parsed text's): the primal
   function differentiated inline (control.c). */
int sr_lax_jvp_custom_call(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);
/* The hooks of the custom-derivative rows.  jax.custom_jvp and
   jax.custom_vjp put their rules in an equation's params as objects of the
   Python layer (jvp= of custom_jvp_call, bwd= of custom_vjp_call and of
   custom_lin), which only that layer can run.  Each of these rows has its
   rules here (control.c), like every row; a rule whose param is such an
   object calls the hook, when set, and otherwise does what it does for a
   parsed text's equation (whose rule did not survive printing).  The
   Python layer's inits set the hooks (jax/custom_jvp.c, jax/custom_vjp.c);
   the order of the inits does not matter: no init overrides a row. */
typedef struct SrLaxCustomHooks {
  SrJvpRule custom_jvp_call;        /* jvp= an object */
  SrJvpRule custom_vjp_call;        /* bwd= an object */
  SrTypeRule custom_lin_type;       /* bwd= an object */
  SrTransposeRule custom_lin_transpose; /* bwd= an object */
  /* vmap: the jvp= object of a custom_jvp_call batched over `size`
     examples, its operands batched at 0 where in_batched is set and its
     results (of types out_types) batched at 0 where out_batched is set
     (the batched primal function's), unbatched elsewhere; a new
     reference, or NULL with an error raised */
  SrVal *(*custom_jvp_batch)(SrInterp *I, SrVal *jvp, const uint8_t *in_batched, const uint8_t *out_batched,
                             int64_t size, const SrType *const *out_types);
  /* vmap: which results the custom_jvp rule (jvp= an object) gives batched,
     its operands (of the per-example types in_types) batched where
     in_batched is set: force[k] set for each result k whose primal or
     tangent the rule batches (batch_custom_jvp_subtrace's _merge_bdims
     batches the call's result there too); nothing set where the rule
     cannot be traced so (no error left) */
  void (*custom_jvp_batch_outs)(SrInterp *I, SrVal *jvp, const uint8_t *in_batched, int64_t size,
                                const char *axis_name, const SrType *const *in_types, uint8_t *force);
  /* vmap: the bwd= object of a custom_vjp_call batched alike (operands of
     the batched types in_types), with *fwd the matching fwd= object; new
     references, or NULL with an error raised */
  SrVal *(*custom_vjp_batch)(SrInterp *I, SrVal *bwd, const uint8_t *in_batched, const uint8_t *out_batched,
                             int64_t size, const SrType *const *in_types, const SrType *const *out_types,
                             SrVal **fwd);
} SrLaxCustomHooks;
extern SrLaxCustomHooks sr_lax_custom_hooks;

/* manual.c: shard_map's _check_specs_vs_args divisibility check of the
   arguments' types against in_specs (P values, or None for a static
   argument) over mesh, as the shard_map type rule runs it: 0, or -1
   with JAX's ValueError in cx's diagnostics.  jax/shard_map.c runs it
   before the checks JAX makes after it. */
int sr_lax_shard_map_divisible(SrTypeCtx *cx, const SrMesh *mesh, const char *fname, uint32_t nin,
                               const SrType *const *types, SrVal *const *specs);

/* remat_pe.c: remat's linearization with its policy (remat_partial_eval):
   J is the JVP body of the remat equation e (the primals, then the
   nonzero tangents t); fills y[e->nout] and the nonzero output tangents,
   packed, in tpk (pooled).  Returns 0, -1 on error, or 1 when the body
   has what this partial evaluation does not split (the caller does as
   before).  The hook says whether a known equation's outputs may be
   saved under a policy object (1, 0; -1 with an error raised; -2 for a
   param that is no policy object): jax/remat_policies.c sets it. */
/* control.c: the params of a new jit like e's on body, its per-operand
   entries rebuilt: operand i takes e's entry isrc[i] (the default where
   isrc[i] < 0), likewise the results (osrc). */
void sr_lax_call_params(SrPList *ps, const SrEqn *e, SrJaxpr *body, int nin, const int *isrc, int nout,
                        const int *osrc);
/* control.c: the params of a scan like e on body with these operand
   counts (linear all False); and e's operand counts, length and direction
   (0, or -1 with an error raised). */
void sr_lax_scan_params(SrPList *ps, const SrEqn *e, SrJaxpr *body, int nc, int nk, int nx, int reverse);
int sr_lax_scan_shape(SrAd *ad, const SrEqn *e, int *nc, int *nk, int64_t *length, int *reverse);
int sr_lax_remat_lin(SrAd *ad, const SrEqn *e, const SrJaxpr *J, SrVal **x, SrVal **t, SrVal **y, SrVal **tpk);
extern int (*sr_lax_remat_saveable)(SrInterp *I, SrVal *policy, const SrEqn *e);
/* lax_other.logaddexp, the custom_jvp that cumlogsumexp's JVP combines
   with (the jvp of associative_scan over it, cumred.c), bound into the
   current trace: a new reference, or NULL with an error raised.  Set by
   the Python layer's init (jax/nn.c); NULL leaves cumlogsumexp without a
   JVP. */
extern SrVal *(*sr_lax_logaddexp_hook)(SrInterp *I, SrVal *x1, SrVal *x2);


/* params.c: what the family files share for reading their params.  The
   getters read param k of an equation in each stage's form (an
   SrRuleEqn, an SrEvalEqn, an SrEqn), for readers that take the form's
   getter. */
typedef SrVal *(*SrLaxParamGet)(const void *e, const char *k);
SrVal *sr_lax_get_rule(const void *e, const char *k);
SrVal *sr_lax_get_ev(const void *e, const char *k);
SrVal *sr_lax_get_eqn(const void *e, const char *k);
/* A tuple of at most SR_MAX_RANK ints into out[*n]: 0, or -1 when v is
   missing or is no such tuple. */
int sr_lax_ints_of(const SrVal *v, int64_t *out, int *n);
/* A padding param, a tuple of at most SR_MAX_RANK (lo, hi) pairs, into
   lo[*n], hi[*n]: 0, or -1 when p is missing or malformed. */
int sr_lax_pads_of(const SrVal *p, int64_t *lo, int64_t *hi, int *n);
/* The padding param ((lo[0], hi[0]), ...) of n pairs (a new reference). */
SrVal *sr_lax_pads_val(const int64_t *lo, const int64_t *hi, int n);
/* A dim of size d dilated by r (lax._dilate_shape), and floor division. */
int64_t sr_lax_dilate(int64_t d, int64_t r);
int64_t sr_lax_floordiv(int64_t a, int64_t b);
/* The text of a param held as text, a word or a string (*n bytes, not
   terminated), or NULL. */
const char *sr_lax_param_text(const SrVal *v, size_t *n);
/* The field key=(i, j, ...) of a printed dimension-numbers text s[n]
   (GatherDimensionNumbers(offset_dims=(1,), ...)), key a whole name:
   0 with its ints in out[*cnt], 1 when s has no such field (*cnt 0), -1
   when it cannot be read. */
int sr_lax_text_ints(const char *s, size_t n, const char *key, int64_t *out, int *cnt);
/* The param text cls(keys[0]=vals[0], ...) of nf int-tuple fields, ns[i]
   ints each, as JAX prints its dimension numbers (a word; a new
   reference). */
SrVal *sr_lax_dn_text(const char *cls, int nf, const char *const *keys, const int64_t *const *vals, const int *ns);

#endif

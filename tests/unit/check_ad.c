/* check_ad.c: unit tests of autodiff (lib/ad).
 *
 *  - cotangent types as a function of primal types;
 *  - the C API: linearization binds the primal work into the current trace
 *    and leaves a linear jaxpr whose residuals are counted, the VJP of the
 *    linearization, transposition, DCE;
 *  - for every family of differentiable primitives, on several shardings:
 *    the JVP against central finite differences in float64 and the VJP
 *    against the JVP by the dot-product identity <w, J v> = <J^T w, v>
 *    (the REPL's :gradcheck, run through the interpreter);
 *  - gradients of sharded inputs equal those of unsharded inputs;
 *  - a primitive without a rule is JAX's NotImplementedError, not a crash.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad/ad.h"
#include "ir/mesh.h"
#include "ir/type.h"
#include "cmd/linit.h"
#include "py/interp.h"
#include "core/trace.h"
#include "prims/prim.h"
#include "util/intern.h"

/* ---- cotangent types ---- */

static const SrMesh *mesh_x(void) {
  SrMesh m = {0};
  m.n = 2;
  m.names[0] = sr_intern_cstr("X");
  m.names[1] = sr_intern_cstr("Y");
  m.sizes[0] = 2;
  m.sizes[1] = 2;
  m.abstract = 1;
  return sr_mesh_intern(&m);
}

static const SrType *ty(SrDtype dt, int64_t d0, int sharded, SrAxes unred, SrAxes red, SrAxes vary) {
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = dt;
  b.ndim = 2;
  b.dims[0].size = d0;
  b.dims[1].size = 4;
  if (sharded) {
    b.dims[0].nax = 1;
    b.dims[0].ax[0] = 0;
  }
  b.unreduced = unred;
  b.reduced = red;
  b.varying = vary;
  b.mesh = mesh_x();
  return sr_type_get(&b);
}

START_TEST(test_ct_types) {
  /* sharded -> sharded, replicated -> replicated */
  ck_assert_str_eq(sr_type_short(sr_ad_ct_type(ty(SR_F32, 8, 1, 0, 0, 0))), "f32[8@X,4]");
  ck_assert_str_eq(sr_type_short(sr_ad_ct_type(ty(SR_F32, 8, 0, 0, 0, 0))), "f32[8,4]");
  /* reduced -> unreduced (kind sum) and back */
  ck_assert_str_eq(sr_type_short(sr_ad_ct_type(ty(SR_F32, 8, 0, 0, 1, 0))), "f32[8,4]{U:X}");
  ck_assert_str_eq(sr_type_short(sr_ad_ct_type(ty(SR_F32, 8, 0, 1, 0, 0))), "f32[8,4]{R:X}");
  ck_assert_str_eq(sr_type_short(sr_ad_ct_type(ty(SR_F32, 8, 1, 2, 0, 0))), "f32[8@X,4]{R:Y}");
  /* varying stays varying */
  ck_assert_str_eq(sr_type_short(sr_ad_ct_type(ty(SR_F32, 4, 0, 0, 0, 1))), "f32[4,4]{V:X}");
  /* integers: float0 */
  ck_assert_str_eq(sr_type_short(sr_ad_ct_type(ty(SR_I32, 8, 1, 0, 0, 0))), "float0[8@X,4]");
  ck_assert_int_eq(sr_ad_differentiable(ty(SR_I32, 8, 0, 0, 0, 0)), 0);
  ck_assert_int_eq(sr_ad_differentiable(ty(SR_BF16, 8, 0, 0, 0, 0)), 1);
  /* an involution on the float types */
  const SrType *t = ty(SR_F32, 8, 1, 2, 1, 0);
  ck_assert_ptr_eq(sr_ad_ct_type(sr_ad_ct_type(t)), t);
}
END_TEST

/* ---- an interpreter ---- */

typedef struct Session {
  SrInterp *I;
  char *out;
  size_t outlen;
  FILE *f;
} Session;

static void session_open(Session *s) {
  memset(s, 0, sizeof *s);
  s->I = sr_interp_new(&sr_linit);
  s->f = open_memstream(&s->out, &s->outlen);
  ck_assert_ptr_nonnull(s->f);
  s->I->py->out = s->f;
}

static void session_close(Session *s) {
  sr_interp_free(s->I);
  fclose(s->f);
  free(s->out);
}

/* Runs text; returns the number of failed statements, *printed what it
   printed (valid until the next call). */
static int run(Session *s, const char *text, const char **printed) {
  fflush(s->f);
  size_t start = s->outlen;
  SrSrc *src = sr_src_new("t", text, strlen(text), 1);
  int failed = sr_interp_run(s->I, src, 1);
  sr_src_unref(src);
  fflush(s->f);
  if (printed) *printed = s->out + start;
  return failed;
}

static char *errors(SrInterp *I) {
  SrBuf b = SR_BUF_INIT;
  sr_diags_render(&I->py->diags, &b);
  sr_diags_clear(&I->py->diags);
  return sr_buf_steal(&b);
}

static int count(const char *s, const char *word) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, word)) != NULL; p += strlen(word)) n++;
  return n;
}

/* ---- the C API ---- */

START_TEST(test_linearize_api) {
  Session s;
  session_open(&s);
  const char *out;
  ck_assert_int_eq(run(&s,
                       "f = { lambda ; a:f32[3] b:f32[3]. let c:f32[3] = sin a; d:f32[3] = mul c b; "
                       "e:f32[] = reduce_sum[axes=(0,) out_sharding=None] d in (e,) }\n",
                       &out),
                   0);
  SrVal *fv = sr_global_get(s.I, "f");
  ck_assert_ptr_nonnull(fv);
  ck_assert_int_eq(fv->kind, SR_V_JAXPR);
  const SrJaxpr *j = fv->jx.jaxpr;
  /* linearize inside a trace: the primal work lands in it */
  SrTrace *t = sr_trace_begin(s.I);
  const SrType *f3 = sr_args(j)[0]->type;
  SrVal *args[2] = {sr_trace_arg(s.I, t, f3), sr_trace_arg(s.I, t, f3)};
  SrVal *outs[1] = {NULL};
  SrLinear lin;
  ck_assert_int_eq(sr_ad_linearize(s.I, j, args, NULL, NULL, outs, &lin), 0);
  /* residuals: cos a, b (an argument, saved verbatim), sin a */
  ck_assert_int_eq(lin.nres, 3);
  int verbatim = 0;
  for (int r = 0; r < lin.nres; r++) verbatim += lin.res_arg[r] != 0;
  ck_assert_int_eq(verbatim, 1);
  ck_assert_int_eq(lin.out_nz[0], 1);
  ck_assert_int_eq(sr_nargs(lin.jaxpr), 5);
  /* the VJP of the seed 1.0 */
  SrVal *ct = sr_ad_one_ct(s.I, sr_value_type(s.I, outs[0]), NULL);
  SrVal *cin[2] = {NULL, NULL};
  ck_assert_int_eq(sr_ad_vjp_apply(s.I, &lin, &ct, cin, 1), 0);
  ck_assert_ptr_nonnull(cin[0]);
  ck_assert_ptr_nonnull(cin[1]);
  SrJaxpr *g = sr_trace_end(s.I, t, cin, 2, NULL);
  ck_assert_ptr_nonnull(g);
  /* forward: sin, cos, mul, reduce_sum; backward: broadcast, 3 muls */
  ck_assert_int_eq(g->neqn, 8);
  ck_assert_str_eq(g->eqns[0].prim->name, "sin");
  ck_assert_str_eq(g->eqns[1].prim->name, "cos");
  ck_assert_str_eq(g->eqns[4].prim->name, "broadcast_in_dim");
  sr_program_unref(g->prog);
  for (int i = 0; i < 2; i++) {
    sr_unref(cin[i]);
    sr_unref(args[i]);
  }
  sr_unref(ct);
  sr_unref(outs[0]);
  sr_ad_linear_free(&lin);
  session_close(&s);
}
END_TEST

START_TEST(test_transpose_api) {
  Session s;
  session_open(&s);
  ck_assert_int_eq(run(&s,
                       "L = { lambda ; a:f32[3] b:f32[3]. let c:f32[3] = mul a 2.0:f32[]; d:f32[3] = add c b; "
                       "e:f32[3] = neg d in (e, c) }\n",
                       NULL),
                   0);
  const SrJaxpr *j = sr_global_get(s.I, "L")->jx.jaxpr;
  SrTrace *t = sr_trace_begin(s.I);
  const SrType *f3 = sr_args(j)[0]->type;
  SrVal *cts[2] = {sr_trace_arg(s.I, t, f3), NULL};
  uint8_t linear[2] = {1, 1};
  SrVal *vals[2] = {NULL, NULL}, *cin[2] = {NULL, NULL};
  ck_assert_int_eq(sr_ad_transpose(s.I, j, linear, vals, cts, cin), 0);
  /* ct_a = neg(ct) * 2, ct_b = neg(ct); the zero ct of c makes nothing */
  SrJaxpr *g = sr_trace_end(s.I, t, cin, 2, NULL);
  ck_assert_ptr_nonnull(g);
  ck_assert_int_eq(g->neqn, 2);
  ck_assert_str_eq(g->eqns[0].prim->name, "neg");
  ck_assert_str_eq(g->eqns[1].prim->name, "mul");
  sr_program_unref(g->prog);
  sr_unref(cin[0]);
  sr_unref(cin[1]);
  sr_unref(cts[0]);
  session_close(&s);
}
END_TEST

START_TEST(test_missing_rule) {
  Session s;
  session_open(&s);
  const char *out;
  int failed = run(&s,
                   "mesh = jax.make_mesh((2,), ('i',))\n"
                   "xs = jax.ShapeDtypeStruct((4,), jnp.float32, sharding=jax.NamedSharding(mesh, jax.P('i')))\n"
                   "pm = lambda a: jax.shard_map(lambda b: jax.lax.pmax(b, 'i'), mesh=mesh,\n"
                   "    in_specs=jax.P('i'), out_specs=jax.P())(a).sum()\n"
                   ":grad pm(xs)\n"
                   "print('after')\n",
                   &out);
  ck_assert_int_eq(failed, 1);
  ck_assert_str_eq(out, "after\n");
  char *e = errors(s.I);
  ck_assert_ptr_nonnull(strstr(e, "Differentiation rule for 'pmax' not implemented"));
  free(e);
  session_close(&s);
}
END_TEST

/* ---- numerical checks, family by family, sharding by sharding ---- */

static const char *prelude =
    "import jax\n"
    "import jax.numpy as jnp\n"
    "from jax import lax\n"
    "jax.config.update('jax_num_cpu_devices', 2)\n"
    "def A(r, c, off=0.3, scale=0.1):\n"
    "  return jnp.arange(r * c * 1.0).reshape(r, c) * scale + off\n";

/* One function per family of rules; each takes (u, v) of shape [4, 2]. */
static const char *const families[] = {
    "lambda u, v: lax.sin(u) * lax.cos(v) + lax.tanh(u) + lax.exp(u) + lax.log(v) + lax.sqrt(u) + lax.logistic(u)",
    "lambda u, v: lax.integer_pow(u, 3) + lax.rsqrt(v) + lax.expm1(u) + lax.log1p(v) + lax.tan(u) + lax.abs(u - v)",
    "lambda u, v: u * v - u / v + lax.max(u, v) - lax.min(u, v) + lax.pow(u, v) + lax.atan2(u, v) - lax.neg(u)",
    "lambda u, v: jnp.where(u > 0.55, u * 2.0, u * v) + lax.select(u < v, jnp.sin(u), u * v)",
    "lambda u, v: jnp.tanh(u @ jnp.full((2, 3), 0.5)).sum(axis=1) + (jnp.ones((3, 4)) @ (u * v)).sum()",
    "lambda u, v: jnp.sum(u, axis=0) * jnp.sum(v ** 2) + jnp.cumsum(u, axis=1) + jnp.sum(jnp.sin(v), axis=0)",
    "lambda u, v: jnp.concatenate([u.reshape(8), lax.rev(u * v, (0,))[1:3].reshape(4)]) * jnp.sum(u.T[:1])",
    "lambda u, v: lax.dynamic_slice(u * v, (1, 0), (2, 2)) * 3.0 + jnp.broadcast_to(jnp.sum(v, axis=0), (2, 2))",
    "lambda u, v: jax.jit(lambda p, q: jnp.sin(p) * q)(u, v) + lax.optimization_barrier(u * v)",
    "lambda u, v: lax.scan(lambda c, x: (jnp.sin(c * x) + c, jnp.cos(c) * x), jnp.sum(u, axis=1), (u * v).T)",
    "lambda u, v: lax.cond(jnp.sum(u) > 0, lambda p: jnp.sin(p) * v, lambda p: p * 2.0, u)",
    "lambda u, v: jax.reshard(u, jax.P(None, None)) * v",
};

static void gradcheck_families(const char *shard_u, const char *shard_v, int with_mesh) {
  Session s;
  session_open(&s);
  const char *out;
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, prelude);
  if (with_mesh) sr_buf_puts(&b, "jax.set_mesh(jax.make_mesh((2,), ('X',)))\n");
  sr_buf_printf(&b, "u = jax.device_put(A(4, 2), %s)\n", shard_u);
  sr_buf_printf(&b, "v = jax.device_put(A(4, 2, 0.7, 0.05), %s)\n", shard_v);
  ck_assert_int_eq(run(&s, sr_buf_str(&b), &out), 0);
  sr_buf_free(&b);
  for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
    if (!with_mesh && strstr(families[i], "reshard")) continue;
    SrBuf c = SR_BUF_INIT;
    sr_buf_printf(&c, "fam = %s\n:gradcheck fam(u, v)\n", families[i]);
    int failed = run(&s, sr_buf_str(&c), &out);
    char *e = errors(s.I);
    if (failed || count(out, "  ok\n") != 2)
      ck_abort_msg("family %zu (%s) on u %s, v %s:\n%s%s", i, families[i], shard_u, shard_v, out, e);
    free(e);
    sr_buf_free(&c);
  }
  session_close(&s);
}

START_TEST(test_gradcheck_unsharded) { gradcheck_families("None", "None", 0); }
END_TEST

START_TEST(test_gradcheck_sharded_rows) { gradcheck_families("jax.P('X', None)", "jax.P('X', None)", 1); }
END_TEST

START_TEST(test_gradcheck_replicated) { gradcheck_families("jax.P(None, None)", "jax.P(None, None)", 1); }
END_TEST

START_TEST(test_gradcheck_mixed) { gradcheck_families("jax.P('X', None)", "jax.P(None, None)", 1); }
END_TEST

/* reduced weights, unreduced gradients, manual mode */
START_TEST(test_gradcheck_reduced_and_manual) {
  Session s;
  session_open(&s);
  const char *out;
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, prelude);
  sr_buf_puts(&b,
              "jax.set_mesh(jax.make_mesh((2,), ('X',)))\n"
              "x = jax.device_put(A(4, 2), jax.P('X', None))\n"
              "w = jax.device_put(A(2, 2), jax.P(None, None))\n"
              "wr = jax.reshard(w, jax.P(None, None, reduced={'X'}))\n"
              "mlp = lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)\n"
              "mlp_red = lambda w, x: mlp(jax.reshard(w, jax.P(None, None, reduced={'X'})), x)\n"
              "@jax.shard_map(in_specs=(jax.P('X', None), jax.P(None, None)), out_specs=jax.P(None, None))\n"
              "def smap(x, w):\n"
              "  return lax.psum(jnp.tanh(x @ w), 'X')\n"
              "@jax.shard_map(in_specs=(jax.P('X', None),), out_specs=jax.P('X', None))\n"
              "def coll(x):\n"
              "  g = lax.all_gather(x, 'X', tiled=True)\n"
              "  return lax.psum_scatter(jnp.sin(g), 'X', tiled=True) + lax.ppermute(x, 'X', [(0, 1), (1, 0)])\n");
  ck_assert_int_eq(run(&s, sr_buf_str(&b), &out), 0);
  sr_buf_free(&b);
  static const char *const checks[] = {":gradcheck mlp(w, x)\n", ":gradcheck mlp(wr, x)\n",
                                       ":gradcheck mlp_red(w, x)\n", ":gradcheck smap(x, w)\n",
                                       ":gradcheck coll(x)\n"};
  for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
    int failed = run(&s, checks[i], &out);
    char *e = errors(s.I);
    if (failed || count(out, "  ok\n") != 2) ck_abort_msg("%s%s%s", checks[i], out, e);
    free(e);
  }
  /* the same gradient with sharded, reduced and unsharded inputs */
  ck_assert_int_eq(run(&s,
                       "g1 = jax.grad(mlp, argnums=(0, 1))(w, x)\n"
                       "g2 = jax.grad(mlp_red, argnums=(0, 1))(w, x)\n"
                       "print(jax.typeof(g2[0]))\n"
                       "g2 = (jax.reshard(g2[0], jax.P()), g2[1])\n"
                       "xu = jax.device_put(A(4, 2), jax.P(None, None))\n"
                       "g3 = jax.grad(mlp, argnums=(0, 1))(w, xu)\n"
                       "print(jnp.allclose(g1[0], g2[0]), jnp.allclose(g1[1], g2[1]))\n"
                       "print(jnp.allclose(g1[0], g3[0]), jnp.allclose(g1[1], g3[1]))\n",
                       &out),
                   0);
  ck_assert_str_eq(out, "float32[2,2]\nTrue True\nTrue True\n");
  session_close(&s);
}
END_TEST

static Suite *ad_suite(void) {
  Suite *s = suite_create("ad");
  TCase *tc = tcase_create("types");
  tcase_add_test(tc, test_ct_types);
  suite_add_tcase(s, tc);
  tc = tcase_create("api");
  tcase_add_test(tc, test_linearize_api);
  tcase_add_test(tc, test_transpose_api);
  tcase_add_test(tc, test_missing_rule);
  suite_add_tcase(s, tc);
  tc = tcase_create("gradcheck");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_gradcheck_unsharded);
  tcase_add_test(tc, test_gradcheck_sharded_rows);
  tcase_add_test(tc, test_gradcheck_replicated);
  tcase_add_test(tc, test_gradcheck_mixed);
  tcase_add_test(tc, test_gradcheck_reduced_and_manual);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(ad_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

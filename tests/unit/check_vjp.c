/* check_vjp.c: unit tests of first-class VJP objects (lib/jax/vjp_api.c,
 * vjp_io.c, custom_vjp.c) and of the optimization pass (lib/opt).
 *
 *  - saveable_args' tuple-tree flags: broadcasting bools, tuples matching
 *    any container by count, and the prefix errors;
 *  - a VJP object as a pytree: its leaves, a rebuilt copy that shares the
 *    backward pass but not the lists, args_res with the sentinels;
 *  - the optimizer: CSE merges equal equations but nothing through an
 *    optimization_barrier, DCE removes what no output needs, calls are
 *    inlined, a shard_map that reads another's results is fused into it,
 *    and the optimized program computes what the original does;
 *  - save_vjp / load_vjp round trip in one process.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/linit.h"
#include "py/interp.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "jax/vjp.h"
#include "opt/opt.h"
#include "util/intern.h"

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

/* Runs text; the number of failed statements, *printed what it printed
   (valid until the next call). */
static int run(Session *s, const char *text, const char **printed) {
  fflush(s->f);
  size_t start = s->outlen;
  SrSrc *src = sr_src_new("t", text, strlen(text), 1);
  int failed = sr_interp_run(s->I, src, 1);
  sr_src_unref(src);
  fflush(s->f);
  if (printed) *printed = s->out + start;
  if (failed) {
    SrBuf b = SR_BUF_INIT;
    sr_diags_render(&s->I->py->diags, &b);
    fprintf(stderr, "%s", sr_buf_str(&b));
    sr_buf_free(&b);
  }
  sr_diags_clear(&s->I->py->diags);
  return failed;
}

static int count(const char *s, const char *word) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, word)) != NULL; p += strlen(word)) n++;
  return n;
}

static SrJaxpr *global_jaxpr(Session *s, const char *name) {
  SrVal *v = sr_global_get(s->I, sr_intern_cstr(name));
  ck_assert_ptr_nonnull(v);
  ck_assert_int_eq(v->kind, SR_V_JAXPR);
  return v->jx.jaxpr;
}

/* ---- saveable_args ---- */

START_TEST(test_flags) {
  Session s;
  session_open(&s);
  SrInterp *I = s.I;
  /* values: (x, (y, z), {'a': u, 'b': v}) with int leaves */
  SrVal *inner = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, inner, sr_int(NULL, 1));
  sr_seq_push(NULL, inner, sr_int(NULL, 2));
  SrVal *d = sr_dict(NULL);
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "b"), sr_int(NULL, 4));
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "a"), sr_int(NULL, 3));
  SrVal *vals = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, vals, sr_int(NULL, 0));
  sr_seq_push(NULL, vals, inner);
  sr_seq_push(NULL, vals, d);
  uint8_t f[5];
  /* a single bool broadcasts */
  ck_assert_int_eq(sr_vjp_flags(I, sr_bool(0), vals, "saveable_args", "the saveable_args argument to jax.vjp", f, 5), 0);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(f[i], 0);
  /* a tuple matches the dict by count, in sorted key order */
  SrVal *pd = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, pd, sr_bool(0));
  sr_seq_push(NULL, pd, sr_bool(1));
  SrVal *p = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, p, sr_bool(1));
  sr_seq_push(NULL, p, sr_bool(0));
  sr_seq_push(NULL, p, pd);
  ck_assert_int_eq(sr_vjp_flags(I, p, vals, "saveable_args", "the saveable_args argument to jax.vjp", f, 5), 0);
  ck_assert_int_eq(f[0], 1);
  ck_assert_int_eq(f[1], 0);
  ck_assert_int_eq(f[2], 0);
  ck_assert_int_eq(f[3], 0); /* 'a' */
  ck_assert_int_eq(f[4], 1); /* 'b' */
  /* wrong count: JAX's prefix error */
  SrVal *p2 = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, p2, sr_bool(1));
  ck_assert_int_eq(sr_vjp_flags(I, p2, vals, "saveable_args", "the saveable_args argument to jax.vjp", f, 5), -1);
  ck_assert_ptr_nonnull(I->exc);
  ck_assert_ptr_nonnull(strstr(sr_exc_msg(I->exc), "but saveable_args has 1 children while the corresponding container has 3"));
  sr_exc_clear(I);
  sr_unref(p2);
  sr_unref(p);
  sr_unref(vals);
  session_close(&s);
}
END_TEST

/* ---- VJP objects ---- */

static const char *layer_src =
    "import jax\n"
    "import jax.numpy as jnp\n"
    "def layer(W, x):\n"
    "  return jnp.tanh(x @ W)\n"
    "W = jnp.ones((3, 3))\n"
    "x = jnp.ones((2, 3))\n";

START_TEST(test_vjp_pytree) {
  Session s;
  session_open(&s);
  const char *o;
  ck_assert_int_eq(run(&s, layer_src, NULL), 0);
  ck_assert_int_eq(run(&s, "y, f = jax.vjp(layer, W, x, saveable_args=(False, True))\n", NULL), 0);
  SrVal *f = sr_global_get(s.I, sr_intern_cstr("f"));
  SrVjp *v = sr_vjp_of(f);
  ck_assert_ptr_nonnull(v);
  /* two residuals are arguments (W, x), two computed (tanh's) */
  ck_assert_int_eq(v->aux->nres, 4);
  ck_assert_int_eq(v->aux->nleaves, 2);
  ck_assert_int_eq(v->opaque->seq.n, 2);
  ck_assert(sr_is_obj(v->args_res->seq.items[0], &sr_not_saveable_class));
  /* leaves: x and the two opaque residuals; NotSaveable() has none */
  SrVal *l = sr_pytree_flatten(s.I, f);
  ck_assert_ptr_nonnull(l);
  ck_assert_int_eq(l->seq.n, 3);
  /* a copy rebuilt from its leaves shares the backward pass, not the lists */
  SrVal *g = sr_pytree_unflatten(f, l);
  SrVjp *w = sr_vjp_of(g);
  ck_assert_ptr_nonnull(w);
  ck_assert_ptr_eq(w->aux, v->aux);
  ck_assert_ptr_ne(w->args_res, v->args_res);
  ck_assert_ptr_eq(w->args_res->seq.items[1], l->seq.items[0]);
  sr_unref(g);
  sr_unref(l);
  /* restored, it computes what an unmarked VJP object does */
  ck_assert_int_eq(run(&s,
                       "f.args_res[0] = W\n"
                       "a = f(jnp.ones_like(y))\n"
                       "b = jax.vjp(layer, W, x)[1](jnp.ones_like(y))\n"
                       "print(all(jnp.allclose(p, q) for p, q in zip(a, b)))\n"
                       "print(f.out_nzs, f.in_tree, f.out_tree)\n",
                       &o),
                   0);
  ck_assert_str_eq(o, "True\n(True,) PyTreeDef((*, *)) PyTreeDef(*)\n");
  /* through jax.jit both ways */
  ck_assert_int_eq(run(&s,
                       "fwd = jax.jit(lambda W, x: jax.vjp(layer, W, x, saveable_args=(False, True)))\n"
                       "def bwd(f, W, ct):\n"
                       "  f.args_res[0] = W\n"
                       "  return f(ct)\n"
                       "y2, f2 = fwd(W, x)\n"
                       "print(f2.args_res[0], len(jax.tree.leaves(f2)))\n"
                       "c = jax.jit(bwd)(f2, W, jnp.ones_like(y2))\n"
                       "print(all(jnp.allclose(p, q) for p, q in zip(c, b)))\n",
                       &o),
                   0);
  ck_assert_str_eq(o, "NotSaveable() 3\nTrue\n");
  session_close(&s);
}
END_TEST

START_TEST(test_vjp_file) {
  Session s;
  session_open(&s);
  char dir[] = "/tmp/check_vjp.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char text[512];
  snprintf(text, sizeof text,
           "import shardrepl\n"
           "y, f = jax.vjp(layer, W, x)\n"
           "shardrepl.save_vjp('%s/f', f)\n"
           "g = shardrepl.load_vjp('%s/f.npz')\n"
           "print(len(jax.tree.leaves(g)), g.args_res[1].shape)\n"
           "print(all(jnp.allclose(p, q) for p, q in zip(f(jnp.ones_like(y)), g(jnp.ones_like(y)))))\n",
           dir, dir);
  const char *o;
  ck_assert_int_eq(run(&s, layer_src, NULL), 0);
  ck_assert_int_eq(run(&s, text, &o), 0);
  ck_assert_str_eq(o, "4 (2, 3)\nTrue\n");
  char path[600];
  snprintf(path, sizeof path, "%s/f.npz", dir);
  unlink(path);
  rmdir(dir);
  session_close(&s);
}
END_TEST

/* ---- the optimizer ---- */

START_TEST(test_opt_cse_barrier) {
  Session s;
  session_open(&s);
  ck_assert_int_eq(run(&s,
                       "f = { lambda ; a:f32[4]. let\n"
                       "    b:f32[4] = sin a\n"
                       "    c:f32[4] = sin a\n"
                       "    d:f32[4] = add b c\n"
                       "    e:f32[4] = cos a\n"
                       "  in (d,) }\n"
                       "g = { lambda ; a:f32[4]. let\n"
                       "    b:f32[4] = sin a\n"
                       "    e:f32[4] = optimization_barrier a\n"
                       "    c:f32[4] = sin e\n"
                       "    d:f32[4] = add b c\n"
                       "  in (d,) }\n",
                       NULL),
                   0);
  SrOptStats st;
  SrBuf t = SR_BUF_INIT;
  SrJaxpr *o = sr_opt_optimize(global_jaxpr(&s, "f"), "f", &t, &st);
  ck_assert_int_eq(o->neqn, 2);  /* sin, add */
  ck_assert_int_eq(st.cse, 1);
  ck_assert_int_eq(st.dce, 1);   /* cos */
  ck_assert_int_eq(count(sr_buf_str(&t), " = sin("), 1);
  sr_program_unref(o->prog);
  sr_buf_reset(&t);
  o = sr_opt_optimize(global_jaxpr(&s, "g"), "g", &t, &st);
  ck_assert_int_eq(o->neqn, 4);  /* through the barrier: nothing merged */
  ck_assert_int_eq(st.cse, 0);
  ck_assert_int_eq(count(sr_buf_str(&t), " = sin("), 2);
  ck_assert_int_eq(count(sr_buf_str(&t), "opt-barrier("), 1);
  sr_program_unref(o->prog);
  sr_buf_free(&t);
  session_close(&s);
}
END_TEST

START_TEST(test_opt_inline_and_fuse) {
  Session s;
  session_open(&s);
  const char *o;
  ck_assert_int_eq(run(&s,
                       "import jax\n"
                       "import jax.numpy as jnp\n"
                       "_ = jax.set_mesh(jax.make_mesh((4,), ('X',)))\n"
                       "@jax.shard_map(in_specs=jax.P('X'), out_specs=jax.P('X'))\n"
                       "def f(a):\n"
                       "  return jnp.sin(jax.lax.all_gather(a, 'X', tiled=True))[:2]\n"
                       "@jax.shard_map(in_specs=(jax.P('X'), jax.P('X')), out_specs=jax.P('X'))\n"
                       "def g(a, b):\n"
                       "  return jnp.cos(jax.lax.all_gather(a, 'X', tiled=True))[:2] + b\n"
                       "h = jax.jit(lambda a: g(a, jax.jit(f)(a)))\n"
                       "a = jax.device_put(jnp.arange(8.), jax.P('X'))\n"
                       "j = h.trace(a).jaxpr\n"
                       "print(h.lower(a).compile().as_text().count('all-gather('),"
                       " h.lower(a).as_text().count('all-gather('))\n",
                       &o),
                   0);
  /* the two all-gathers of `a` became one */
  ck_assert_str_eq(o, "1 2\n");
  SrOptStats st;
  SrJaxpr *r = sr_opt_optimize(global_jaxpr(&s, "j"), "h", NULL, &st);
  ck_assert_int_eq(st.inlined, 1);
  ck_assert_int_eq(st.fused, 1);
  ck_assert_int_eq(st.cse, 1);
  ck_assert_int_eq(r->neqn, 1);  /* one shard_map */
  SrVal *rv = sr_jaxpr_val(NULL, r);
  sr_program_unref(r->prog);
  sr_global_set(s.I, sr_intern_cstr("r"), rv);
  ck_assert_int_eq(run(&s, "print(jnp.allclose(r(a), h(a)), jax.typeof(r(a)))\n", &o), 0);
  ck_assert_str_eq(o, "True float32[8@X]\n");
  session_close(&s);
}
END_TEST

static Suite *vjp_suite(void) {
  Suite *su = suite_create("vjp");
  TCase *tc = tcase_create("vjp");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_flags);
  tcase_add_test(tc, test_vjp_pytree);
  tcase_add_test(tc, test_vjp_file);
  tcase_add_test(tc, test_opt_cse_barrier);
  tcase_add_test(tc, test_opt_inline_and_fuse);
  suite_add_tcase(su, tc);
  return su;
}

int main(void) {
  SRunner *sr = srunner_create(vjp_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

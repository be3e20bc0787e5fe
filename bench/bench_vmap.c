/* bench_vmap.c: how long batching takes, against jaxpr size, and what
 * running a vmapped function costs against the hand-batched program.
 *
 *     bench_vmap [-n RUNS] [-b BATCH] [-r RUN_BLOCKS] [BLOCKS...]
 *
 * For each size, generates a jaxpr of BLOCKS blocks of six elementwise
 * equations on f32[8,8] values (sin, a mul by the unmapped argument w,
 * tanh, add, logistic, sub), parses it, and times batching it over x
 * with a batch of BATCH (sr_batch_jaxpr, batching.batch_jaxpr: what
 * jax.make_jaxpr(jax.vmap(f, in_axes=(None, 0))) does past tracing f).
 * Prints the best of RUNS and each size's time against the first's: 10x
 * the equations should take at most ~11x the time.
 *
 * Then, on a RUN_BLOCKS program, runs f over a batch of BATCH three ways:
 * jax.vmap(f, in_axes=(None, 0))(w, xs) as a statement (eager: each
 * batched equation runs as it is bound), the batched jaxpr evaluated,
 * and the hand-batched jaxpr (the same equations on f32[BATCH,8,8], w
 * broadcast once) evaluated; each against the hand-batched one.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ad/batch.h"
#include "cmd/linit.h"
#include "core/trace.h"
#include "py/interp.h"
#include "util/buf.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* JAX's variable names: a..z, ba, bb, ... (no leading 'a' digit) */
static void name(SrBuf *b, unsigned long n) {
  char s[16];
  int k = 0;
  do {
    s[k++] = (char)('a' + n % 26);
    n /= 26;
  } while (n);
  while (k--) sr_buf_putc(b, s[k]);
}

static unsigned long fresh;

static unsigned long var(void) {
  unsigned long v = fresh++;
  if (v % 26 == 0 && v >= 26) v = fresh++;
  return v;
}

static void eqn(SrBuf *b, const char *type, unsigned long out, const char *prim, unsigned long a, long c) {
  sr_buf_puts(b, "    ");
  name(b, out);
  sr_buf_printf(b, ":%s = %s ", type, prim);
  name(b, a);
  if (c >= 0) {
    sr_buf_putc(b, ' ');
    name(b, (unsigned long)c);
  }
  sr_buf_putc(b, '\n');
}

/* The program on one example (batch 0) or hand-batched over `batch`. */
static char *gen(int blocks, int batch, size_t *neqn) {
  SrBuf b = SR_BUF_INIT;
  char t[64];
  if (batch) snprintf(t, sizeof t, "f32[%d,8,8]", batch);
  else snprintf(t, sizeof t, "f32[8,8]");
  fresh = 0;
  unsigned long w = var(), x = var();
  sr_buf_puts(&b, "{ lambda ; ");
  name(&b, w);
  sr_buf_puts(&b, ":f32[8,8] ");
  name(&b, x);
  sr_buf_printf(&b, ":%s. let\n", t);
  size_t n = 0;
  if (batch) {
    /* w broadcast once */
    unsigned long wb = var();
    sr_buf_puts(&b, "    ");
    name(&b, wb);
    sr_buf_printf(&b, ":%s = broadcast_in_dim[broadcast_dimensions=(1, 2) shape=(%d, 8, 8) sharding=None] ", t,
                  batch);
    name(&b, w);
    sr_buf_putc(&b, '\n');
    w = wb;
    n++;
  }
  for (int k = 0; k < blocks; k++) {
    unsigned long a = var(), c = var(), d = var(), e = var(), f = var(), l = var();
    eqn(&b, t, a, "sin", x, -1);
    eqn(&b, t, c, "mul", a, (long)w);
    eqn(&b, t, d, "tanh", c, -1);
    eqn(&b, t, e, "add", d, (long)x);
    eqn(&b, t, f, "logistic", e, -1);
    eqn(&b, t, l, "sub", e, (long)f);
    n += 6;
    x = l;
  }
  sr_buf_puts(&b, "  in (");
  name(&b, x);
  sr_buf_puts(&b, ",) }\n");
  *neqn = n;
  return sr_buf_steal(&b);
}

static void run_or_die(SrInterp *I, const char *stmt) {
  SrSrc *src = sr_src_new("bench", stmt, strlen(stmt), 1);
  int failed = sr_interp_run(I, src, 0);
  sr_src_unref(src);
  if (failed) {
    SrBuf e = SR_BUF_INIT;
    sr_diags_render(&I->py->diags, &e);
    fprintf(stderr, "bench_vmap: a statement failed:\n%s", sr_buf_str(&e));
    exit(1);
  }
}

/* Binds NAME = the generated jaxpr; returns it (borrowed from the global). */
static const SrJaxpr *define(SrInterp *I, const char *nm, int blocks, int batch, double *parse_s) {
  size_t neqn;
  char *text = gen(blocks, batch, &neqn);
  SrBuf stmt = SR_BUF_INIT;
  sr_buf_printf(&stmt, "%s = ", nm);
  sr_buf_puts(&stmt, text);
  free(text);
  double p0 = now();
  run_or_die(I, sr_buf_str(&stmt));
  if (parse_s) *parse_s = now() - p0;
  sr_buf_free(&stmt);
  return sr_global_get(I, nm)->jx.jaxpr;
}

static const uint8_t in_batched[2] = {0, 1};

/* Batches j once; returns seconds, *out_eqns the batched size. */
static double batch_once(SrInterp *I, const SrJaxpr *j, int batch, size_t *out_eqns, SrJaxpr **keep) {
  double t0 = now();
  SrBatch b;
  sr_batch_begin(&b, I, batch, NULL);
  uint8_t ob[1];
  SrJaxpr *r = sr_batch_jaxpr(&b, j, in_batched, NULL, ob);
  sr_batch_end(&b);
  double t1 = now();
  if (!r) {
    fprintf(stderr, "bench_vmap: batching failed\n");
    exit(1);
  }
  *out_eqns = r->neqn;
  if (keep) *keep = r;
  else sr_program_unref(r->prog);
  return t1 - t0;
}

static double eval_best(SrInterp *I, const SrJaxpr *j, SrVal **args, int runs) {
  double best = 1e30;
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    SrVal *out = sr_eval_jaxpr(I, j, 2, args);
    double dt = now() - t0;
    if (!out) {
      fprintf(stderr, "bench_vmap: evaluation failed\n");
      exit(1);
    }
    sr_unref(out);
    if (dt < best) best = dt;
  }
  return best;
}

int main(int argc, char **argv) {
  int runs = 3, nsizes = 0, batch = 64, run_blocks = 500;
  int sizes[16];
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "-b") == 0 && i + 1 < argc) batch = atoi(argv[++i]);
    else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) run_blocks = atoi(argv[++i]);
    else if (nsizes < 16) sizes[nsizes++] = atoi(argv[i]);
  }
  if (!nsizes) {
    sizes[nsizes++] = 1667;
    sizes[nsizes++] = 16667;
  }
  SrInterp *I = sr_interp_new(&sr_linit);
  double first_t = 0;
  size_t first_n = 0;
  printf("batching over a batch of %d (sr_batch_jaxpr), best of %d:\n", batch, runs);
  printf("  %-10s %-12s %-12s %-10s %s\n", "equations", "batched eqns", "parse (s)", "batch (s)", "per eqn");
  for (int s = 0; s < nsizes; s++) {
    double parse_s;
    const SrJaxpr *j = define(I, "f", sizes[s], 0, &parse_s);
    double best = 1e30;
    size_t bn = 0;
    for (int r = 0; r < runs; r++) {
      double dt = batch_once(I, j, batch, &bn, NULL);
      if (dt < best) best = dt;
    }
    if (s == 0) {
      first_t = best;
      first_n = j->neqn;
    }
    printf("  %-10u %-12zu %-12.3f %-10.3f %.2f us", j->neqn, bn, parse_s, best, 1e6 * best / j->neqn);
    if (s > 0)
      printf("   %.1fx the equations, %.2fx the time", (double)j->neqn / (double)first_n, best / first_t);
    printf("\n");
  }

  /* running: vmap(f) against the hand-batched program */
  const SrJaxpr *f = define(I, "f", run_blocks, 0, NULL);
  const SrJaxpr *hb = define(I, "hb", run_blocks, batch, NULL);
  char stmt[256];
  snprintf(stmt, sizeof stmt,
           "import jax\nimport jax.numpy as jnp\nw = jnp.ones((8, 8)) * 0.5\nxs = jnp.arange(%d.0 * 64).reshape(%d, "
           "8, 8) / 1000.0\n",
           batch, batch);
  run_or_die(I, stmt);
  SrVal *args[2] = {sr_global_get(I, "w"), sr_global_get(I, "xs")};
  size_t bn;
  SrJaxpr *bj = NULL;
  batch_once(I, f, batch, &bn, &bj);
  double t_hand = eval_best(I, hb, args, runs);
  double t_batched = eval_best(I, bj, args, runs);
  double t_vmap = 1e30;
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    run_or_die(I, "r = jax.vmap(f, in_axes=(None, 0))(w, xs)");
    double dt = now() - t0;
    if (dt < t_vmap) t_vmap = dt;
  }
  run_or_die(I, "ok = bool(jnp.allclose(r, hb(w, xs)))");
  int ok = sr_global_get(I, "ok")->i != 0;
  printf("running %u equations over a batch of %d, best of %d:\n", f->neqn, batch, runs);
  printf("  hand-batched jaxpr (%u eqns)   %.3f s\n", hb->neqn, t_hand);
  printf("  batched jaxpr (%u eqns)        %.3f s   %.2fx the hand-batched\n", bj->neqn, t_batched,
         t_batched / t_hand);
  printf("  jax.vmap(f)(w, xs), eager     %.3f s   %.2fx the hand-batched\n", t_vmap, t_vmap / t_hand);
  printf("  results agree: %s\n", ok ? "yes" : "NO");
  sr_program_unref(bj->prog);
  sr_interp_free(I);
  return ok ? 0 : 1;
}

/* bench_ad.c: how long building a gradient takes, against jaxpr size.
 *
 *     bench_ad [-n RUNS] [BLOCKS...]
 *
 * For each size, generates a loss jaxpr of BLOCKS blocks of ten equations
 * (elementwise ops, a dot_general, a reduction and its broadcast back) on
 * f32[8,8] values, with a nested jit every 50 blocks and a scan every 50
 * blocks (offset by 25), ending in a reduce_sum to a scalar; parses it,
 * then times building jax.grad's jaxpr from it: linearization (the
 * forward and residuals bound into a trace, the linear jaxpr beside it),
 * the backward pass of the seed 1.0, and closing the trace -- what
 * `jax.make_jaxpr(jax.grad(f))` does past tracing f.  Prints the best of
 * RUNS, the equations in and out, and each size's time against the
 * first's: 10x the equations should take at most ~10x the time.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ad/ad.h"
#include "cmd/linit.h"
#include "py/interp.h"
#include "core/trace.h"
#include "util/buf.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* JAX's variable names: a..z, ba, bb, ... */
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

static unsigned long var(SrBuf *b) {
  unsigned long v = fresh++;
  if (v % 26 == 0 && v >= 26) v = fresh++; /* no names with a leading 'a' digit */
  (void)b;
  return v;
}

#define T "f32[8,8]"
#define DOT "dot_general[dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float32]"

static void eqn1(SrBuf *b, unsigned long out, const char *type, const char *prim, unsigned long a) {
  sr_buf_puts(b, "    ");
  name(b, out);
  sr_buf_printf(b, ":%s = %s ", type, prim);
  name(b, a);
  sr_buf_putc(b, '\n');
}

static void eqn2(SrBuf *b, unsigned long out, const char *prim, unsigned long a, unsigned long c) {
  sr_buf_puts(b, "    ");
  name(b, out);
  sr_buf_printf(b, ":" T " = %s ", prim);
  name(b, a);
  sr_buf_putc(b, ' ');
  name(b, c);
  sr_buf_putc(b, '\n');
}

static char *gen(int blocks, size_t *neqn) {
  SrBuf b = SR_BUF_INIT;
  fresh = 0;
  unsigned long w = var(&b), x = var(&b);
  sr_buf_puts(&b, "{ lambda ; ");
  name(&b, w);
  sr_buf_puts(&b, ":" T " ");
  name(&b, x);
  sr_buf_puts(&b, ":" T ". let\n");
  size_t n = 0;
  for (int k = 0; k < blocks; k++) {
    unsigned long a = var(&b), c = var(&b), d = var(&b), e = var(&b), f = var(&b), g = var(&b), h = var(&b),
                  i = var(&b), j = var(&b), l = var(&b);
    eqn1(&b, a, T, "sin", x);
    eqn2(&b, c, "mul", a, w);
    eqn2(&b, d, DOT, c, w);
    eqn1(&b, e, T, "tanh", d);
    eqn1(&b, f, "f32[8]", "reduce_sum[axes=(1,) out_sharding=None]", e);
    eqn1(&b, g, T, "broadcast_in_dim[broadcast_dimensions=(0,) shape=(8, 8) sharding=None]", f);
    eqn2(&b, h, "mul", g, x);
    eqn2(&b, i, "add", e, h);
    eqn1(&b, j, T, "logistic", i);
    eqn2(&b, l, "sub", i, j);
    n += 10;
    x = l;
    if (k % 50 == 49) {
      unsigned long y = var(&b);
      sr_buf_puts(&b, "    ");
      name(&b, y);
      sr_buf_puts(&b, ":" T " = jit[name=block jaxpr={ lambda ; a:" T " b:" T ". let c:" T " = sin a; d:" T
                      " = mul c b; e:" T " = tanh d in (e,) }] ");
      name(&b, x);
      sr_buf_putc(&b, ' ');
      name(&b, w);
      sr_buf_putc(&b, '\n');
      x = y;
      n += 1;
    }
    if (k % 50 == 24) {
      unsigned long y = var(&b);
      sr_buf_puts(&b, "    ");
      name(&b, y);
      sr_buf_puts(&b, ":" T " = scan[_split_transpose=False jaxpr={ lambda ; a:" T " b:" T ". let c:" T
                      " = " DOT " b a; d:" T " = sin c in (d,) } length=2 linear=(False, False) num_carry=1 "
                      "num_consts=1 reverse=False unroll=1] ");
      name(&b, w);
      sr_buf_putc(&b, ' ');
      name(&b, x);
      sr_buf_putc(&b, '\n');
      x = y;
      n += 1;
    }
  }
  unsigned long z = var(&b);
  eqn1(&b, z, "f32[]", "reduce_sum[axes=(0, 1) out_sharding=None]", x);
  sr_buf_puts(&b, "  in (");
  name(&b, z);
  sr_buf_puts(&b, ",) }\n");
  *neqn = n + 1;
  return sr_buf_steal(&b);
}

/* Builds the gradient jaxpr of j once; returns seconds, *out_eqns its size. */
static double grad_once(SrInterp *I, const SrJaxpr *j, size_t *out_eqns) {
  double t0 = now();
  SrTrace *t = sr_trace_begin(I);
  uint32_t n = sr_nargs(j);
  SrVal *args[2];
  for (uint32_t i = 0; i < n; i++) args[i] = sr_trace_arg(I, t, sr_args(j)[i]->type);
  SrVal *out = NULL;
  SrLinear lin;
  if (sr_ad_linearize(I, j, args, NULL, NULL, &out, &lin) < 0) {
    fprintf(stderr, "bench_ad: linearize failed\n");
    exit(1);
  }
  SrVal *ct = sr_ad_one_ct(I, sr_value_type(I, out), NULL);
  SrVal *cin[2] = {NULL, NULL};
  if (sr_ad_vjp_apply(I, &lin, &ct, cin, 1) < 0) {
    fprintf(stderr, "bench_ad: backward pass failed\n");
    exit(1);
  }
  SrJaxpr *g = sr_trace_end(I, t, cin, (int)n, NULL);
  double t1 = now();
  *out_eqns = g->neqn;
  sr_program_unref(g->prog);
  for (uint32_t i = 0; i < n; i++) {
    sr_unref(cin[i]);
    sr_unref(args[i]);
  }
  sr_unref(ct);
  sr_unref(out);
  sr_ad_linear_free(&lin);
  return t1 - t0;
}

int main(int argc, char **argv) {
  int runs = 3, nsizes = 0;
  int sizes[16];
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
    else if (nsizes < 16) sizes[nsizes++] = atoi(argv[i]);
  }
  if (!nsizes) {
    sizes[nsizes++] = 1000;
    sizes[nsizes++] = 10000;
  }
  SrInterp *I = sr_interp_new(&sr_linit);
  double first_t = 0;
  size_t first_n = 0;
  printf("  %-10s %-10s %-12s %-10s %s\n", "equations", "grad eqns", "parse (s)", "grad (s)", "per eqn");
  for (int s = 0; s < nsizes; s++) {
    size_t neqn;
    char *text = gen(sizes[s], &neqn);
    SrBuf stmt = SR_BUF_INIT;
    sr_buf_puts(&stmt, "f = ");
    sr_buf_puts(&stmt, text);
    free(text);
    double p0 = now();
    SrSrc *src = sr_src_new("bench", sr_buf_str(&stmt), stmt.len, 1);
    int failed = sr_interp_run(I, src, 0);
    double p1 = now();
    sr_src_unref(src);
    sr_buf_free(&stmt);
    if (failed) {
      SrBuf e = SR_BUF_INIT;
      sr_diags_render(&I->py->diags, &e);
      fprintf(stderr, "bench_ad: the generated jaxpr did not parse:\n%s", sr_buf_str(&e));
      return 1;
    }
    SrVal *f = sr_global_get(I, "f");
    const SrJaxpr *j = f->jx.jaxpr;
    double best = 1e30;
    size_t gn = 0;
    for (int r = 0; r < runs; r++) {
      double dt = grad_once(I, j, &gn);
      if (dt < best) best = dt;
    }
    if (s == 0) {
      first_t = best;
      first_n = j->neqn;
    }
    printf("  %-10u %-10zu %-12.3f %-10.3f %.2f us", j->neqn, gn, p1 - p0, best, 1e6 * best / j->neqn);
    if (s > 0)
      printf("   %.1fx the equations, %.2fx the time", (double)j->neqn / (double)first_n, best / first_t);
    printf("\n");
  }
  sr_interp_free(I);
  return 0;
}

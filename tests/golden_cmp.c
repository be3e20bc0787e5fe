/* golden_cmp.c: compares what a golden test printed with what it should
 * print, as JAX's tests compare arrays: text exactly, floating-point numbers
 * within their dtype's tolerance.
 *
 *   golden_cmp EXPECTED GOT   exit 0: the same, 1: they differ, 2: trouble
 *   golden_cmp                (no arguments) tests itself; make check runs it
 *
 * Why: the last digits of a float32 result depend on the BLAS kernel
 * OpenBLAS picks for the CPU (each sums in its own order), on the libm
 * variant glibc picks, and on the thread count, so a golden file recorded
 * on one machine fails on another by 7929.6006 against 7929.6.
 *
 * Both texts are cut into tokens: numbers, other runs of non-blank
 * characters ("text"), newlines, and the runs of blanks between them (the
 * "gaps").  A number starts at a digit, or at a sign or a point followed by
 * one, when the character before it is no letter, digit, '_' or '.'; it
 * must not run on into a letter, digit, '_' or ".digit" ("f32", "leaf_1",
 * "0x1f", "0.11.0" are text).  It is a float when it has a point or an
 * exponent, else an integer.  Then:
 *   - text, newlines and integers must be equal byte for byte;
 *   - two floats that differ in their text must satisfy, as numpy's
 *     assert_allclose with atol = rtol = TOL, |got - want| <= TOL + TOL *
 *     |want|, TOL being JAX's default tolerance of the float's dtype
 *     (jax._src.test_util: float64 1e-15, float32 1e-6, float16 1e-3,
 *     bfloat16 1e-2, float8 1e-1);
 *   - a gap must be equal too, except a gap next to a float, inside a
 *     bracketed group (or the line) where some float differs: numpy pads the
 *     elements of an array to one width, so one element's new digits move
 *     the others' padding.
 * The dtype of a float: the nearest "dtype=NAME" after it in its group (an
 * array's repr ends with it), else the type of a jaxpr literal (2.0:f64[]);
 * else float32, the default dtype, conservatively.  A number written with
 * 10 or more significant digits in either text cannot be a float32 (whose
 * shortest repr needs at most 9): it gets float64's tolerance.
 *
 * On a difference it prints each number beyond its tolerance and the first
 * other difference, with their line numbers; on success with numbers that
 * differ within tolerance, one line that counts them. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_TEXT, T_INT, T_FLOAT, T_NL, T_END } Kind;

typedef struct {
  Kind kind;
  const char *p; /* the token's characters */
  size_t n;
  const char *gap; /* the blanks before it */
  size_t ngap;
  int line;  /* 1-based */
  int group; /* a bracketed group, or a line outside brackets */
  int dtype; /* index in dtypes[], for a float */
} Tok;

typedef struct {
  Tok *t;
  size_t n;
} Toks;

static const struct {
  const char *name, *jaxpr; /* as numpy and as a jaxpr print it */
  double tol;
} dtypes[] = {
    {"float32", "f32", 1e-6},     {"float64", "f64", 1e-15},   {"float16", "f16", 1e-3},
    {"bfloat16", "bf16", 1e-2},   {"complex64", "c64", 1e-6},  {"complex128", "c128", 1e-15},
    {"float8_", "f8_", 1e-1},
};
enum { DT_F32, DT_F64 };

static int ident_char(int c) { return isalnum((unsigned char)c) || c == '_'; }

/* Whether c is one of the characters of set (never of a NUL byte). */
static int one_of(int c, const char *set) { return c != 0 && strchr(set, c) != NULL; }

/* The dtype NAME starts with, or -1. */
static int dtype_named(const char *p, size_t n, int jaxpr) {
  for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
    const char *nm = jaxpr ? dtypes[d].jaxpr : dtypes[d].name;
    size_t k = strlen(nm);
    if (k <= n && memcmp(p, nm, k) == 0 && (nm[k - 1] == '_' || k == n || !ident_char(p[k]))) return (int)d;
  }
  return -1;
}

/* The length of the number at s[i] (0 when none starts there); *is_float
 * says whether it has a point or an exponent. */
static size_t number_at(const char *s, size_t i, size_t len, int *is_float) {
  if (i > 0 && (ident_char(s[i - 1]) || s[i - 1] == '.')) return 0;
  size_t k = i, digits = 0;
  *is_float = 0;
  if (k < len && (s[k] == '-' || s[k] == '+')) {
    if (i > 0 && (s[i - 1] == ')' || s[i - 1] == ']')) return 0; /* f(x)-1: an operator */
    k++;
  }
  while (k < len && isdigit((unsigned char)s[k])) k++, digits++;
  if (k < len && s[k] == '.') {
    k++;
    *is_float = 1;
    while (k < len && isdigit((unsigned char)s[k])) k++, digits++;
  }
  if (digits == 0) return 0;
  if (k + 1 < len && (s[k] == 'e' || s[k] == 'E')) {
    size_t e = k + 1;
    if (e < len && (s[e] == '-' || s[e] == '+')) e++;
    if (e < len && isdigit((unsigned char)s[e])) {
      while (e < len && isdigit((unsigned char)s[e])) e++;
      k = e;
      *is_float = 1;
    }
  }
  if (k < len && s[k] == 'j' && (k + 1 == len || !ident_char(s[k + 1]))) k++, *is_float = 1; /* 2.5j */
  if (k < len && ident_char((unsigned char)s[k])) return 0;
  if (k + 1 < len && s[k] == '.' && isdigit((unsigned char)s[k + 1])) return 0;
  return k - i;
}

static void push(Toks *ts, Tok t) {
  if ((ts->n & (ts->n - 1)) == 0) {
    ts->t = realloc(ts->t, (ts->n ? 2 * ts->n : 1) * sizeof *ts->t);
    if (!ts->t) {
      perror("golden_cmp");
      exit(2);
    }
  }
  ts->t[ts->n++] = t;
}

/* Cuts s into tokens, each with the gap before it, ending with T_END (the
 * trailing gap); gives each its line, group and, for floats, dtype. */
static Toks tokenize(const char *s, size_t len) {
  Toks ts = {NULL, 0};
  size_t i = 0;
  int line = 1;
  for (;;) {
    Tok t = {T_END, s + i, 0, s + i, 0, line, 0, DT_F32};
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
    t.ngap = (size_t)(s + i - t.gap);
    t.p = s + i;
    int is_float;
    size_t k;
    if (i == len) {
      push(&ts, t);
      break;
    } else if (s[i] == '\n') {
      t.kind = T_NL, t.n = 1;
      line++;
    } else if ((k = number_at(s, i, len, &is_float)) > 0) {
      t.kind = is_float ? T_FLOAT : T_INT, t.n = k;
    } else {
      size_t j = i + 1;
      while (j < len && !one_of(s[j], " \t\r\n") && number_at(s, j, len, &is_float) == 0) j++;
      t.kind = T_TEXT, t.n = j - i;
    }
    i += t.n;
    push(&ts, t);
  }
  /* groups: a line outside brackets, or from an opening bracket to the end
     of the line where they all close */
  int depth = 0, group = 0;
  for (size_t n = 0; n < ts.n; n++) {
    Tok *t = &ts.t[n];
    t->group = group;
    for (size_t c = 0; t->kind == T_TEXT && c < t->n; c++) {
      if (one_of(t->p[c], "([{")) depth++;
      if (one_of(t->p[c], ")]}") && depth > 0) depth--;
    }
    if (t->kind == T_NL && depth == 0) group++;
  }
  /* dtypes: the next "dtype=NAME" in the group, or a literal's ":f64" */
  int dt = DT_F32, dt_group = -1;
  for (size_t n = ts.n; n-- > 0;) {
    Tok *t = &ts.t[n];
    if (t->group != dt_group) dt = DT_F32, dt_group = t->group;
    if (t->kind == T_TEXT) {
      const char *d = NULL;
      for (const char *p = t->p; p + 6 <= t->p + t->n; p++)
        if (memcmp(p, "dtype=", 6) == 0) d = p + 6;
      int found = d ? dtype_named(d, (size_t)(t->p + t->n - d), 0) : -1;
      if (found >= 0) dt = found;
    } else if (t->kind == T_FLOAT) {
      t->dtype = dt;
      const Tok *next = &ts.t[n + 1];
      if (next->kind == T_TEXT && next->ngap == 0 && next->p[0] == ':') {
        int lit = dtype_named(next->p + 1, next->n - 1, 1);
        if (lit >= 0) t->dtype = lit;
      }
    }
  }
  return ts;
}

/* The significant digits of a number's text. */
static int sig_digits(const Tok *t) {
  int n = 0, leading = 1;
  for (size_t c = 0; c < t->n && t->p[c] != 'e' && t->p[c] != 'E'; c++) {
    if (!isdigit((unsigned char)t->p[c])) continue;
    if (t->p[c] != '0') leading = 0;
    if (!leading) n++;
  }
  return n;
}

static double number(const Tok *t) {
  char buf[128];
  snprintf(buf, sizeof buf, "%.*s", (int)(t->n < 127 ? t->n : 127), t->p);
  return strtod(buf, NULL);
}

static int same(const Tok *a, const Tok *b) { return a->n == b->n && memcmp(a->p, b->p, a->n) == 0; }

static const char *show(const Tok *t) {
  static char buf[2][96];
  static int k;
  k ^= 1;
  if (t->kind == T_NL) return "a newline";
  if (t->kind == T_END) return "the end";
  snprintf(buf[k], sizeof buf[k], "\"%.*s\"", (int)(t->n < 80 ? t->n : 80), t->p);
  return buf[k];
}

/* Compares; prints what differs unless quiet.  0: the same (within
 * tolerance), 1: different. */
static int compare(const char *want, size_t nwant, const char *got, size_t ngot, int quiet) {
  if (nwant == ngot && memcmp(want, got, nwant) == 0) return 0;
  Toks w = tokenize(want, nwant), g = tokenize(got, ngot);
  int fail = 0, beyond = 0, within = 0, groups = w.t[w.n - 1].group + 1;
  double worst = -1;
  size_t worst_at = 0;
  char *moved = calloc((size_t)groups, 1); /* the groups where a float differs */
  size_t n = w.n < g.n ? w.n : g.n, stop = n;
  for (size_t i = 0; i < n; i++) {
    const Tok *a = &w.t[i], *b = &g.t[i];
    if (a->kind == T_FLOAT && b->kind == T_FLOAT && (a->p[a->n - 1] == 'j') == (b->p[b->n - 1] == 'j')) {
      if (same(a, b)) continue;
      int dt = a->dtype;
      if (dtypes[dt].tol > dtypes[DT_F64].tol && (sig_digits(a) >= 10 || sig_digits(b) >= 10)) dt = DT_F64;
      double x = number(a), y = number(b), tol = dtypes[dt].tol + dtypes[dt].tol * fabs(x), d = fabs(y - x);
      moved[a->group] = 1;
      if (d <= tol) {
        within++;
        if (d / tol > worst) worst = d / tol, worst_at = i;
        continue;
      }
      fail = 1;
      if (!quiet && beyond++ < 20)
        printf("line %d: expected %s, got %s: off by %.3g, more than %s's tolerance %.3g (%g + %g * |expected|)\n",
               b->line, show(a), show(b), d, dtypes[dt].name, tol, dtypes[dt].tol, dtypes[dt].tol);
    } else if (a->kind != b->kind || !same(a, b)) {
      stop = i;
      break;
    }
  }
  /* the gaps, up to the first other difference (the T_END of the shorter
     text is one when the lengths differ) */
  for (size_t i = 0; i < stop; i++) {
    const Tok *a = &w.t[i], *b = &g.t[i];
    if (a->ngap == b->ngap && memcmp(a->gap, b->gap, a->ngap) == 0) continue;
    int by_float = a->kind == T_FLOAT || (i > 0 && w.t[i - 1].kind == T_FLOAT);
    if (by_float && (moved[a->group] || (i > 0 && moved[w.t[i - 1].group]))) continue;
    stop = i;
    break;
  }
  if (stop < n) {
    fail = 1;
    if (!quiet) {
      const Tok *a = &w.t[stop], *b = &g.t[stop];
      if (a->kind == b->kind && same(a, b))
        printf("line %d: the spacing differs before %s\n", b->line, show(a));
      else
        printf("line %d: expected %s, got %s\n", b->line, show(a), show(b));
    }
  }
  if (!quiet && within) {
    const Tok *a = &w.t[worst_at], *b = &g.t[worst_at];
    printf("golden_cmp: %d number%s within tolerance (the furthest: line %d, expected %s, got %s, %.2g of its "
           "tolerance)\n",
           within, within == 1 ? " differs" : "s differ", b->line, show(a), show(b), worst);
  }
  free(moved);
  free(w.t);
  free(g.t);
  return fail;
}

/* ---- its own test ---- */

static const struct {
  const char *want, *got;
  int differ;
  const char *what;
} cases[] = {
    {"ok\n", "ok\n", 0, "the same text"},
    {"[[6003.2    7929.6006]\n [6316.8003 8342.4   ]\n [6630.4004 8755.2   ]]\n",
     "[[6003.2    7929.6   ]\n [6316.8003 8342.4   ]\n [6630.4    8755.2   ]]\n", 0,
     "float32 last digits, with numpy's padding"},
    {"(Array([[0.201948  , 0.8420396 ],\n       [0.02732825, 0.39264834]], dtype=float32),)\n",
     "(Array([[0.20194799, 0.8420396 ],\n       [0.02732825, 0.3926484 ]], dtype=float32),)\n", 0,
     "an array repr whose padding goes"},
    {"[ 6.  7.]\n", "[ 6.0000005  7.       ]\n", 0, "padding after a number that did not change"},
    {"[[1.  2. ]\n [3.  4.5]]\n", "[[1.0000001 2.       ]\n [3.        4.5      ]]\n", 0,
     "padding on another line of the same array"},
    {"[[1.  2. ]]\n[[3.  4.5]]\n", "[[1.0000001 2.       ]]\n[[3.        4.5      ]]\n", 1,
     "padding in another array"},
    {"[0. 1.]\n", "[1.e-09 1.e+00]\n", 0, "numpy going to scientific notation"},
    {"relative error 0.00e+00\n", "relative error 2.37e-16\n", 0, "zero against rounding noise (atol)"},
    {"-1.4901161e-08\n", "0.\n", 0, "a sign lost in the noise"},
    {"x = 0.10338251\n", "x = 0.10339\n", 1, "a float32 value beyond tolerance"},
    {"[[6003.2    7929.6006]]\n", "[[6003.2    7929.7   ]]\n", 1, "a float32 value beyond tolerance in an array"},
    {"-0.5\n", "0.5\n", 1, "a changed sign"},
    {"relative error ok\n", "relative error FAILED\n", 1, "a changed word"},
    {"float32[4,2]\n", "float32[4,3]\n", 1, "a changed integer in a type"},
    {"float32[4,2]\n", "float64[4,2]\n", 1, "a changed dtype name"},
    {"foo.jxr:72:3: error\n", "foo.jxr:72:4: error\n", 1, "a changed column"},
    {"exit 0\n", "exit 1\n", 1, "a changed exit status"},
    {"1000000\n", "1000001\n", 1, "integers are exact"},
    {"6944\n", "6944.\n", 1, "an integer against a float"},
    {"leaf_1.npy\n", "leaf_2.npy\n", 1, "digits inside a name"},
    {"jax 0.11.0\n", "jax 0.11.1\n", 1, "a version"},
    {"nan\n", "0.5\n", 1, "nan against a number"},
    {"2.5j\n", "2.5\n", 1, "a complex against a float"},
    {"0.1\n", "0.10000000149011612\n", 1, "a float32 value shown as float64 (10+ digits: float64's tolerance)"},
    {"0.30000000000000004\n", "0.30000000000000010\n", 0, "float64 within 1e-15"},
    {"Array([0.1, 0.2], dtype=float32)\n", "Array([0.1, 0.2000001], dtype=float32)\n", 0, "float32 within 1e-6"},
    {"Array([0.1, 0.2], dtype=float64)\n", "Array([0.1, 0.2000001], dtype=float64)\n", 1, "dtype=float64 is tighter"},
    {"(Array([0.5], dtype=float16), Array([0.5], dtype=float32))\n",
     "(Array([0.5004], dtype=float16), Array([0.5], dtype=float32))\n", 0, "dtype=float16 is looser"},
    {"(Array([0.5], dtype=float16), Array([0.5], dtype=float32))\n",
     "(Array([0.5], dtype=float16), Array([0.5004], dtype=float32))\n", 1, "each array has its own dtype"},
    {"c = mul 2.0:f64[] b\n", "c = mul 2.0000001:f64[] b\n", 1, "a jaxpr literal's f64"},
    {"[1. 2.]\n", "[1.  2.]\n", 1, "padding that moves while no number does"},
    {"a b\n", "a  b\n", 1, "spacing in text"},
    {"    c = sin b\n", "   c = sin b\n", 1, "indentation"},
    {"a\nb\n", "a\nb\nc\n", 1, "a line more"},
    {"a\nb\n", "a\n", 1, "a line less"},
    {"a\n", "a", 1, "the last newline"},
    {"x 1.5\n", "x 1.5 \n", 1, "a trailing blank after a float that did not change"},
};

static int self_test(void) {
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int r = compare(cases[i].want, strlen(cases[i].want), cases[i].got, strlen(cases[i].got), 1);
    if (r != cases[i].differ) {
      printf("FAIL %s: %s, expected %s\n", cases[i].what, r ? "differ" : "the same", r ? "the same" : "differ");
      compare(cases[i].want, strlen(cases[i].want), cases[i].got, strlen(cases[i].got), 0);
      bad = 1;
    } else {
      printf("PASS %s (%s)\n", cases[i].what, r ? "differ" : "the same");
    }
  }
  return bad;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  size_t cap = 1 << 16, n = 0, r;
  char *b = malloc(cap);
  while (b && (r = fread(b + n, 1, cap - n, f)) > 0)
    if ((n += r) == cap) b = realloc(b, cap *= 2);
  if (!b || ferror(f)) {
    perror(path);
    exit(2);
  }
  fclose(f);
  *len = n;
  return b;
}

int main(int argc, char **argv) {
  if (argc == 1) return self_test();
  if (argc != 3) {
    fprintf(stderr, "usage: golden_cmp EXPECTED GOT   (no arguments: its own test)\n");
    return 2;
  }
  size_t nw, ng;
  char *w = slurp(argv[1], &nw), *g = slurp(argv[2], &ng);
  int r = compare(w, nw, g, ng, 0);
  free(w);
  free(g);
  return r;
}

/* check_fuzz.c: the parser and the printer on broken texts, under
 * AddressSanitizer and UndefinedBehaviorSanitizer (`make check`).
 *
 * Built with -fsanitize=address,undefined -fno-sanitize-recover=all from
 * the library's sources (see fuzz.mk), it feeds sr_fuzz_one():
 *  - the regression inputs (regress/: each once crashed or hung) and the
 *    seeds (seeds/: sharded texts the corpus lacks);
 *  - texts nested ten thousand deep (parentheses in a param, jaxprs in
 *    jaxprs, brackets, sets, specs), which must be refused, not overflow
 *    the stack;
 *  - every prefix of the seeds and of a few corpus texts;
 *  - random byte flips, insertions, deletions and splices of every seed
 *    and corpus text, from a fixed seed.
 * Every input must get a located error or a result.  A crash or a
 * sanitizer report aborts the program; an input that takes longer than a
 * few seconds is reported as a hang.  Printing that does not read back or
 * is not a fixed point is counted and shown, but is no failure: odd texts
 * the parser accepts need not print to canonical text.
 *
 *     check_fuzz [-v] [-n MUTANTS] [FILE...]
 *
 * With files, runs just those (to replay a fuzzer's finding).  The corpus
 * is found as tests/corpus.sh finds it; without it the corpus part is
 * skipped and the exit status is 77 (after the other parts pass).
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sanitizer/common_interface_defs.h>)
#include <sanitizer/common_interface_defs.h>
#define HAVE_DEATH_CALLBACK 1
#endif
#endif

#include "fuzz_one.h"
#include "text/parse.h"
#include "text/print.h"

enum { TIME_LIMIT_S = 10, MAX_MUTANTS = 100000 };

static int verbose;
static int nmutants = 600;

/* snprintf that may cut the text short, as paths and descriptions may */
static void format(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void format(char *buf, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, n, fmt, ap);
  va_end(ap);
}

/* ---- the per-input time bound ---- */

static char current[256];
static const uint8_t *current_data;
static size_t current_size;

/* Keeps the input that failed as check_fuzz-failure.txt in the current
   directory, for tests/fuzz/check_fuzz FILE (async-signal-safe). */
static void save_current(void) {
  int fd = open("check_fuzz-failure.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < current_size) {
    ssize_t k = write(fd, current_data + done, current_size - done);
    if (k <= 0) break;
    done += (size_t)k;
  }
  close(fd);
  static const char msg[] = "check_fuzz: input saved as check_fuzz-failure.txt\n";
  if (write(2, msg, sizeof msg - 1) < 0) return;
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "check_fuzz: HANG: more than the time limit on input ";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(1);
  if (write(2, current, strlen(current)) < 0) _exit(1);
  if (write(2, "\n", 1) < 0) _exit(1);
  save_current();
  _exit(1);
}

/* A sanitizer's report says where; this says on what. */
static void on_death(void) {
  static const char msg[] = "check_fuzz: the report above is for input ";
  if (write(2, msg, sizeof msg - 1) < 0) return;
  if (write(2, current, strlen(current)) < 0) return;
  if (write(2, "\n", 1) < 0) return;
  save_current();
}

/* ---- tallies ---- */

static long ninputs, nprinted, nrefused, nunstable;

/* The first few unstable printings are shown, to be looked at. */
static void run(const char *what, const uint8_t *data, size_t n) {
  static char why[8192];
  format(current, sizeof current, "%s (%zu bytes)", what, n);
  current_data = data;
  current_size = n;
  alarm(TIME_LIMIT_S);
  SrFuzzResult r = sr_fuzz_one(data, n, why, sizeof why);
  alarm(0);
  ninputs++;
  switch (r) {
  case SR_FUZZ_PRINTED: nprinted++; break;
  case SR_FUZZ_REFUSED: nrefused++; break;
  case SR_FUZZ_REPARSE:
  case SR_FUZZ_UNSTABLE:
    if (nunstable++ < 3 || verbose)
      fprintf(stderr, "check_fuzz: note: %s: %s\n", current, why);
    break;
  default:
    fprintf(stderr, "check_fuzz: FAIL: %s: %s\n", current, why);
    save_current();
    exit(1);
  }
}

/* ---- files ---- */

typedef struct Text {
  char *name;
  uint8_t *data;
  size_t n;
} Text;

typedef struct Texts {
  Text *t;
  size_t n, cap;
} Texts;

static int read_file(const char *path, Text *t) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t cap = 4096, n = 0;
  uint8_t *d = malloc(cap);
  size_t k;
  while (d && (k = fread(d + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) d = realloc(d, cap *= 2);
  }
  fclose(f);
  if (!d) return -1;
  t->name = strdup(path);
  t->data = d;
  t->n = n;
  return 0;
}

static void add_text(Texts *ts, Text t) {
  if (ts->n == ts->cap) {
    ts->cap = ts->cap ? 2 * ts->cap : 64;
    ts->t = realloc(ts->t, ts->cap * sizeof *ts->t);
    if (!ts->t) abort();
  }
  ts->t[ts->n++] = t;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of dir whose names end in suffix (any if ""), sorted,
   so that the run is the same everywhere. */
static void read_dir(Texts *ts, const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  if (!d) return;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name), sl = strlen(suffix);
    if (e->d_name[0] == '.' || l < sl || strcmp(e->d_name + l - sl, suffix) != 0) continue;
    if (n == cap) names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n; i++) {
    char path[4096];
    format(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat st;
    Text t;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && read_file(path, &t) == 0) add_text(ts, t);
    free(names[i]);
  }
  free(names);
}

static const char *find_corpus(char *buf, size_t n) {
  const char *top = getenv("top_srcdir");
  const char *cands[4] = {getenv("SR_CORPUS"), NULL, NULL, "/work/shared/corpus"};
  char a[4096], b[4096];
  if (top) {
    format(a, sizeof a, "%s/../shared/corpus", top);
    format(b, sizeof b, "%s/../../shared/corpus", top);
    cands[1] = a;
    cands[2] = b;
  }
  for (int i = 0; i < 4; i++) {
    if (!cands[i] || !*cands[i]) continue;
    char idx[4200];
    format(idx, sizeof idx, "%s/INDEX.tsv", cands[i]);
    if (access(idx, R_OK) == 0) {
      format(buf, n, "%s", cands[i]);
      return buf;
    }
  }
  return NULL;
}

/* ---- generated inputs ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* xorshift64*: the same numbers on every machine */
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* Bytes that matter to the grammar, and pieces of it. */
static const char punct[] = "{}[]()=:;,.@<>'\"#\\_ \n\t-+*0123456789abcijnxyzXYUVR";
static const char *const tokens[] = {
  "{ lambda ; . let ", "{ lambda ; a:f32[]. let ", " in (", " in (a,) }", "}", "let f = ",
  "jit[name=f jaxpr=f]", "jaxpr=", "branches=(", "\n    ", "\n      ", " = ", "a:f32[]",
  "_:f32[]", "inf", "nan", "-1e+309", "(1+2j)", "[...]", "f32[8@X,4]", "{U:X}", "{V:X, U:Y}",
  "@(X,Y)", "<host>", "key<fry>[3]", "Mesh('X': 2, axis_types=(Explicit,))", "P('X', None)",
  "frozenset({'X'})", "NamedSharding(mesh=", ":f32[]", "2.0:f32[]", "True:bool[]", " ; ",
  "cond[", "scan[", "pjit[", "(((", ")))", "\0",
};

static void mutate(uint8_t **pd, size_t *pn, size_t *pcap) {
  uint8_t *d = *pd;
  size_t n = *pn;
  int edits = 1 + (int)below(4);
  for (int k = 0; k < edits; k++) {
    size_t at = below(n + 1);
    switch (below(5)) {
    case 0: /* replace a byte */
      if (n) d[below(n)] = below(2) ? (uint8_t)punct[below(sizeof punct - 1)] : (uint8_t)rnd();
      break;
    case 1: { /* insert a byte or a piece of the grammar */
      const char *ins;
      char one;
      size_t il;
      if (below(2)) {
        one = below(2) ? punct[below(sizeof punct - 1)] : (char)rnd();
        ins = &one;
        il = 1;
      } else {
        ins = tokens[below(sizeof tokens / sizeof *tokens)];
        il = ins[0] ? strlen(ins) : 1;
      }
      if (n + il > *pcap) {
        *pcap = 2 * (n + il);
        d = realloc(d, *pcap);
      }
      memmove(d + at + il, d + at, n - at);
      memcpy(d + at, ins, il);
      n += il;
      break;
    }
    case 2: { /* delete a run */
      size_t l = 1 + below(16);
      if (at + l > n) l = n - at;
      memmove(d + at, d + at + l, n - at - l);
      n -= l;
      break;
    }
    case 3: { /* copy a run of the text elsewhere in it */
      if (!n) break;
      size_t from = below(n), l = 1 + below(64);
      if (from + l > n) l = n - from;
      if (n + l > *pcap) {
        *pcap = 2 * (n + l);
        d = realloc(d, *pcap);
      }
      uint8_t tmp[64];
      memcpy(tmp, d + from, l);
      memmove(d + at + l, d + at, n - at);
      memcpy(d + at, tmp, l);
      n += l;
      break;
    }
    default: /* swap two bytes */
      if (n > 1) {
        size_t i = below(n), j = below(n);
        uint8_t c = d[i];
        d[i] = d[j];
        d[j] = c;
      }
    }
  }
  *pd = d;
  *pn = n;
}

static void run_mutants(const Text *t, int count) {
  size_t cap = 2 * t->n + 256;
  uint8_t *d = malloc(cap);
  for (int i = 0; i < count; i++) {
    memcpy(d, t->data, t->n);
    size_t n = t->n;
    mutate(&d, &n, &cap);
    char what[300];
    format(what, sizeof what, "%s, mutant %d", t->name, i);
    run(what, d, n);
  }
  free(d);
}

static void run_prefixes(const Text *t) {
  char what[300];
  for (size_t n = 0; n <= t->n; n++) {
    format(what, sizeof what, "%s, first %zu bytes", t->name, n);
    run(what, t->data, n);
  }
}

/* A text of the form head + open * depth + mid + close * depth + tail. */
static void run_nested(const char *what, const char *head, const char *open, const char *mid,
                       const char *close, const char *tail, int depth) {
  size_t ho = strlen(head), lo = strlen(open), lm = strlen(mid), lc = strlen(close), lt = strlen(tail);
  size_t n = ho + (size_t)depth * (lo + lc) + lm + lt;
  char *s = malloc(n + 1), *p = s;
  memcpy(p, head, ho), p += ho;
  for (int i = 0; i < depth; i++) memcpy(p, open, lo), p += lo;
  memcpy(p, mid, lm), p += lm;
  for (int i = 0; i < depth; i++) memcpy(p, close, lc), p += lc;
  memcpy(p, tail, lt), p += lt;
  run(what, (const uint8_t *)s, n);
  free(s);
}

/* n hoisted jaxprs f0 .. f{n-1}, each calling the next `calls` times:
   once, a chain the printer would nest n deep; twice, a program whose
   equations, written out in full, double at every level. */
static void run_lets(const char *what, int n, int calls) {
  size_t cap = (size_t)n * 160 + 256, len = 0;
  char *s = malloc(cap);
  for (int i = 0; i < n; i++) {
    len += (size_t)snprintf(s + len, cap - len, "let f%d = { lambda ; a:f32[]. let ", i);
    for (int c = 0; c < calls; c++) {
      if (i + 1 < n)
        len += (size_t)snprintf(s + len, cap - len, "b%d:f32[] = jit[name=f%d jaxpr=f%d] a; ", c,
                                i + 1, i + 1);
      else
        len += (size_t)snprintf(s + len, cap - len, "b%d:f32[] = sin a; ", c);
    }
    len += (size_t)snprintf(s + len, cap - len, "c:f32[] = add b0 b%d in (c,) } in\n", calls - 1);
  }
  len += (size_t)snprintf(s + len, cap - len,
                          "{ lambda ; a:f32[]. let b:f32[] = jit[name=f0 jaxpr=f0] a in (b,) }\n");
  run(what, (const uint8_t *)s, len);
  free(s);
}

static void run_deep(void) {
  const int D = 10000;
  const char *eq = "{ lambda ; a:f32[]. let b:f32[] = foo[x=";
  const char *end = "] a in (b,) }";
  run_nested("10000 nested ( in a param", eq, "(", "1", ")", end, D);
  run_nested("10000 unclosed ( in a param", eq, "(", "1", "", end, D);
  run_nested("10000 nested [ in a param", eq, "[", "1", "]", end, D);
  run_nested("10000 nested { in a param", eq, "{", "1", "}", end, D);
  run_nested("10000 nested P( in a param", eq, "P(", "'X'", ")", end, D);
  run_nested("10000 nested frozenset in a param", eq, "frozenset({", "1", "})", end, D);
  run_nested("10000 nested quotes in a param", eq, "('", "1", "')", end, D);
  run_nested("10000 nested jaxprs", "{ lambda ; a:f32[]. let b:f32[] = ",
             "jit[jaxpr={ lambda ; a:f32[]. let b:f32[] = ", "sin a",
             " in (b,) }] a", " in (b,) }", D);
  run_nested("10000 nested jaxpr tuples", "{ lambda ; a:f32[]. let b:f32[] = cond[branches=",
             "(", "{ lambda ; . let  in () }", ")", "] a in (b,) }", D);
  run_nested("10000 nested ( in a type suffix", "{ lambda ; a:f32[8]{V:", "(", "X", ")",
             "}. let  in (a,) }", D);
  run_nested("10000 nested ( in effects", "{ lambda ; a:f32[]. let  in (a,) : {", "{", "e", "}",
             "} }", D);
  run_nested("10000 nested ( as an operand", "{ lambda ; a:f32[]. let b:f32[] = sin ", "(", "1",
             ")", " in (b,) }", D);
  run_nested("10000 lets of one name", "",
             "let f = { lambda ; a:f32[]. let b:f32[] = jit[jaxpr=f] a in (b,) } in\n",
             "{ lambda ; . let  in () }", "", "", D);
  run_lets("10000 lets, each calling the next once", D, 1);
  run_lets("40 lets, each calling the next twice", 40, 2);
  run_nested("10000 binders", "{ lambda ; ", "a:f32[] ", ". let ", "", "in (a,) }", D);
  run_nested("10000 operands", "{ lambda ; a:f32[]. let b:f32[] = add", " a", "", "",
             " in (b,) }", 10 * D);
  run_nested("10000 outputs", "{ lambda ; a:f32[]. let ", "b:f32[] ", "= foo a", "",
             " in (b,) }", D);
  run_nested("a 100000-byte name", "{ lambda ; ", "a", ":f32[]. let  in (a", "", ",) }", 100000);
  run_nested("10000 nested Mesh(", "{ lambda ; . let  in () }\n", "Mesh(", "", ")", "", D);
}

/* JAX's name counter reaches `inf` and `nan`, which are also literals: a
   canonical program of 20000 equations, whose vars are named past them,
   must print back byte for byte (its inf and nan outputs once came back
   `_`, read as literals where they were used). */
static void run_named_inf(void) {
  enum { N = 20000 }; /* past 16384: the equation stack is adopted, not copied */
  char name[16], prev[16];
  size_t cap = 64 * (size_t)N, n = 0;
  char *s = malloc(cap);
  n += (size_t)snprintf(s + n, cap - n, "{ lambda ; a:f32[]. let\n");
  strcpy(prev, "a");
  for (uint32_t k = 1; k <= N; k++) {
    uint32_t x = k;
    char tmp[16];
    int l = 0;
    do tmp[l++] = (char)('a' + x % 26), x /= 26;
    while (x);
    for (int i = 0; i < l; i++) name[i] = tmp[l - 1 - i];
    name[l] = 0;
    /* inf and nan are read where they are bound, as operands */
    n += (size_t)snprintf(s + n, cap - n, "    %s:f32[] = %s %s%s\n", name,
                          strcmp(prev, "inf") == 0 || strcmp(prev, "nan") == 0 ? "add" : "sin", prev,
                          strcmp(prev, "inf") == 0 || strcmp(prev, "nan") == 0 ? " inf:f32[]" : "");
    strcpy(prev, name);
  }
  n += (size_t)snprintf(s + n, cap - n, "  in (inf, nan, %s) }", prev);
  format(current, sizeof current, "%s", "20000 equations with vars named inf and nan");
  alarm(TIME_LIMIT_S);
  SrSrc *src = sr_src_new("<inf>", s, n, 1);
  SrDiags d = SR_DIAGS_INIT;
  size_t end;
  SrProgram *p = sr_parse_program(src, 0, &end, NULL, &d);
  SrBuf out = SR_BUF_INIT;
  if (p) sr_print_jaxpr(&out, p->top);
  alarm(0);
  ninputs++;
  if (!p || out.len != n || memcmp(out.p, s, n) != 0) {
    SrBuf e = SR_BUF_INIT;
    sr_diags_render(&d, &e);
    fprintf(stderr, "check_fuzz: FAIL: %s does not print back%s%s\n", current, p ? "" : ": ",
            sr_buf_str(&e));
    exit(1);
  }
  nprinted++;
  sr_buf_free(&out);
  sr_program_unref(p);
  sr_diags_clear(&d);
  sr_src_unref(src);
  free(s);
}

static void usage(void) {
  fputs("usage: check_fuzz [-v] [-n MUTANTS] [FILE...]\n", stderr);
  exit(2);
}

int main(int argc, char **argv) {
  int opt;
  while ((opt = getopt(argc, argv, "vn:")) != -1) {
    if (opt == 'v') verbose = 1;
    else if (opt == 'n' && atoi(optarg) >= 0 && atoi(optarg) <= MAX_MUTANTS) nmutants = atoi(optarg);
    else usage();
  }
  signal(SIGALRM, on_alarm);
#ifdef HAVE_DEATH_CALLBACK
  __sanitizer_set_death_callback(on_death);
#else
  (void)on_death;
#endif
  time_t t0 = time(NULL);
  if (optind < argc) {
    for (int i = optind; i < argc; i++) {
      Text t;
      if (read_file(argv[i], &t) < 0) {
        fprintf(stderr, "check_fuzz: cannot read %s\n", argv[i]);
        return 2;
      }
      run(t.name, t.data, t.n);
      free(t.name);
      free(t.data);
    }
    printf("check_fuzz: %ld inputs: %ld printed, %ld refused, %ld printed unstably\n", ninputs,
           nprinted, nrefused, nunstable);
    return 0;
  }

  const char *top = getenv("top_srcdir");
  if (!top) top = ".";
  char dir[4096];
  Texts own = {0}, corpus = {0};
  format(dir, sizeof dir, "%s/tests/fuzz/regress", top);
  read_dir(&own, dir, "");
  size_t nregress = own.n;
  format(dir, sizeof dir, "%s/tests/fuzz/seeds", top);
  read_dir(&own, dir, "");
  char cbuf[4096];
  const char *cdir = find_corpus(cbuf, sizeof cbuf);
  if (cdir) {
    format(dir, sizeof dir, "%s/jaxprs", cdir);
    read_dir(&corpus, dir, ".jaxpr");
  }

  /* 1. as they are */
  for (size_t i = 0; i < own.n; i++) run(own.t[i].name, own.t[i].data, own.t[i].n);
  for (size_t i = 0; i < corpus.n; i++) run(corpus.t[i].name, corpus.t[i].data, corpus.t[i].n);
  /* 2. deep nesting, and names that are also literals */
  run_deep();
  run_named_inf();
  /* 3. every prefix of the seeds, and of a few corpus texts: one that
     hoists jaxprs, one with a cond, one with a scan (the first of each) */
  for (size_t i = nregress; i < own.n; i++) run_prefixes(&own.t[i]);
  const char *features[] = {"\nlet ", "cond[", "scan["};
  for (size_t f = 0; f < sizeof features / sizeof *features; f++)
    for (size_t i = 0; i < corpus.n; i++)
      if (corpus.t[i].n < 4096 && memmem(corpus.t[i].data, corpus.t[i].n, features[f], strlen(features[f]))) {
        run_prefixes(&corpus.t[i]);
        break;
      }
  /* 4. mutants */
  for (size_t i = 0; i < own.n; i++) run_mutants(&own.t[i], 4 * nmutants);
  for (size_t i = 0; i < corpus.n; i++) run_mutants(&corpus.t[i], nmutants);

  printf("check_fuzz: %ld inputs in %ld s (%zu regression inputs and seeds, %zu corpus texts): "
         "%ld printed, %ld refused with a located error, %ld printed unstably (odd texts); "
         "no crash, sanitizer report or hang\n",
         ninputs, (long)(time(NULL) - t0), own.n, corpus.n, nprinted, nrefused, nunstable);
  for (size_t i = 0; i < own.n; i++) free(own.t[i].name), free(own.t[i].data);
  for (size_t i = 0; i < corpus.n; i++) free(corpus.t[i].name), free(corpus.t[i].data);
  free(own.t);
  free(corpus.t);
  if (!cdir) {
    printf("check_fuzz: no corpus found (set SR_CORPUS to the folder holding INDEX.tsv): "
           "its part skipped\n");
    return 77;
  }
  return 0;
}

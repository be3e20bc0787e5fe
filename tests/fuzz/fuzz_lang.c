/* fuzz_lang.c: the libFuzzer target for the statement language.
 *
 * Each input runs twice in this process, with a new interpreter each time:
 * as a script (`shardrepl -k FILE`) and as the REPL's stdin, each
 * interrupted as by Ctrl-C after two seconds (SR_FUZZ_SECONDS), so that a
 * script's endless loop is no finding but a loop that ignores Ctrl-C is
 * (libFuzzer's -timeout).  A crash, a sanitizer report, "out of memory"
 * (an abort) or a hang is a failure.  The custom mutator applies
 * lang_mutate.h's mutations (token swaps, interesting numbers, splices of
 * the golden scripts, deep nesting) half of the time and libFuzzer's own
 * otherwise; SR_FUZZ_SEEDS names the source tree whose golden scripts,
 * examples and fuzz seeds it splices from.  Runs happen in a scratch
 * directory of their own (scripts may write files).  See README.md for how
 * to build and run it (`make fuzz-lang`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dirent.h>
#include <fcntl.h>

#include "fuzz_lang_one.h"
#include "lang_mutate.h"
#include "util/buf.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed);

static SrLangPool *pool;
static double seconds = 2;
static char scratch[] = "/tmp/fuzz_lang.XXXXXX";
static int home = -1; /* the directory libFuzzer was started in */

static void add_dir(const char *top, const char *sub, const char *suffix, int jaxprs) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%s", top, sub);
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name), sl = strlen(suffix);
    if (l < sl || strcmp(e->d_name + l - sl, suffix) != 0) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    SrBuf b = SR_BUF_INIT;
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) sr_buf_putn(&b, chunk, k);
    fclose(f);
    if (b.p) {
      if (jaxprs) sr_lang_pool_jaxpr(pool, path, b.p, b.len);
      else sr_lang_pool_script(pool, path, b.p, b.len);
    }
    sr_buf_free(&b);
  }
  closedir(d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (getenv("SR_FUZZ_SECONDS")) seconds = atof(getenv("SR_FUZZ_SECONDS"));
  pool = sr_lang_pool_new();
  const char *top = getenv("SR_FUZZ_SEEDS");
  if (top) {
    add_dir(top, "tests/golden", ".jxr", 0);
    add_dir(top, "examples", ".jxr", 0);
    add_dir(top, "examples/seeds", ".jxr", 0);
    add_dir(top, "tests/fuzz/regress-lang", ".jxr", 0);
    add_dir(top, "tests/fuzz/seeds", ".jaxpr", 1);
  }
  /* inputs run there; libFuzzer reads its inputs and writes its findings
   * here, so relative paths on its command line work */
  home = open(".", O_RDONLY | O_DIRECTORY);
  if (home < 0 || !mkdtemp(scratch)) {
    perror("fuzz_lang: a scratch directory");
    exit(1);
  }
  if (sr_fuzz_lang_init() < 0) {
    perror("fuzz_lang: timer_create");
    exit(1);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SrFuzzLangOpts o = {0, 1, 0, seconds, 0};
  if (chdir(scratch) != 0) abort();
  sr_fuzz_lang_run(data, size, &o);
  o.repl = 1;
  sr_fuzz_lang_run(data, size, &o);
  if (fchdir(home) != 0) abort();
  return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed) {
  uint64_t r = seed ? seed : 1;
  if (!pool || sr_lang_rand(&r) % 2 == 0) return LLVMFuzzerMutate(data, size, max);
  SrLangMutant m = {SR_BUF_INIT, 0, 0, ""};
  if (sr_lang_rand(&r) % 8 == 0 && sr_lang_pool_nscripts(pool)) {
    sr_lang_generate(pool, &r, &m);
  } else {
    sr_lang_mutate(pool, &r, (const char *)data, size, &m.text, m.what, sizeof m.what);
  }
  size_t n = m.text.len < max ? m.text.len : max;
  memcpy(data, m.text.p, n);
  sr_buf_free(&m.text);
  return n;
}

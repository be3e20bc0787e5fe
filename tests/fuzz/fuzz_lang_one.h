/* fuzz_lang_one.h: one input through the statement language, in this
 * process, for the libFuzzer target (fuzz_lang.c) and the children of the
 * sanitizer test of `make check` (check_fuzz_lang.c).
 */
#ifndef SR_TESTS_FUZZ_LANG_ONE_H
#define SR_TESTS_FUZZ_LANG_ONE_H

#include <stddef.h>
#include <stdint.h>

typedef struct SrFuzzLangOpts {
  int repl;        /* 1: the bytes are the REPL's stdin (`shardrepl < FILE`);
                      0: a script (`shardrepl FILE`) */
  int keep_going;  /* -k (a script; the REPL always goes on) */
  int devices;     /* --devices N; 0: the default */
  double seconds;  /* after this much CPU time the run is interrupted as by
                      Ctrl-C, every 10 ms until it ends; 0: never */
  int show;        /* print what the run prints; else its printing goes to
                      /dev/null (diagnostics still go to stderr) */
} SrFuzzLangOpts;

/* Once, before the first run: makes the built-ins (so that a forked child
   starts with them) and the signal that interrupts runs.  Returns 0, or -1
   with errno when the timer cannot be made. */
int sr_fuzz_lang_init(void);

/* Runs the bytes as `shardrepl [-k] [--devices N] FILE` or `shardrepl <
   FILE` does, with a new interpreter that is freed afterwards, so that
   nothing of one input is left to the next but the interned strings and
   types.  Returns shardrepl's exit status (0 ok, 1 a runtime error, 3 a
   parse or type error).  The REPL reads the bytes from fd 0, which it
   replaces. */
int sr_fuzz_lang_run(const uint8_t *data, size_t size, const SrFuzzLangOpts *o);

/* Was the last run interrupted by its time limit? */
int sr_fuzz_lang_expired(void);

#endif

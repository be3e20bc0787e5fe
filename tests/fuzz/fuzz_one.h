/* fuzz_one.h: one input through the parser and the printer, for the
 * libFuzzer target (fuzz_parse.c) and the sanitizer test of `make check`
 * (check_fuzz.c).
 */
#ifndef SR_TESTS_FUZZ_ONE_H
#define SR_TESTS_FUZZ_ONE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  SR_FUZZ_PRINTED,  /* every program in the input parsed, printed, and its
                       printing parsed back and printed the same */
  SR_FUZZ_REFUSED,  /* refused with a located error */
  /* the failures: */
  SR_FUZZ_NO_ERROR, /* refused without a located diagnostic */
  SR_FUZZ_STUCK,    /* a program that ends where it starts */
  SR_FUZZ_REPARSE,  /* the printing does not parse */
  SR_FUZZ_UNSTABLE, /* the printing parses but prints differently */
} SrFuzzResult;

/* Does what `shardrepl --fmt` does with the bytes: parses every program
   in them, one after another, and prints each.  On success the printed
   text is parsed and printed again, which must give the same text.  If
   `why` is not NULL, a failure is described there (at most n bytes).
   Crashes, sanitizer reports and hangs are the caller's to catch. */
SrFuzzResult sr_fuzz_one(const uint8_t *data, size_t size, char *why, size_t n);

static inline int sr_fuzz_failed(SrFuzzResult r) { return r > SR_FUZZ_REFUSED; }

#endif

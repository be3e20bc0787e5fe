/* fuzz_parse.c: the libFuzzer target for the parser and the printer.
 *
 * Every input must be refused with a located error or print; a crash, a
 * hang or a sanitizer report is a failure.  With SR_FUZZ_STRICT=1 in the
 * environment, what prints must also parse back and print the same (a
 * fixed point), which odd texts the parser accepts need not satisfy (a
 * param value running over a newline, say).  See README.md for how to
 * build and run it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char why[4096];
  static int strict = -1;
  if (strict < 0) strict = getenv("SR_FUZZ_STRICT") && atoi(getenv("SR_FUZZ_STRICT")) > 0;
  SrFuzzResult r = sr_fuzz_one(data, size, why, sizeof why);
  if (r == SR_FUZZ_NO_ERROR || r == SR_FUZZ_STUCK || (strict && sr_fuzz_failed(r))) {
    fprintf(stderr, "fuzz_parse: %s\n", why);
    abort();
  }
  return 0;
}

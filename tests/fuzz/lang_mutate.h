/* lang_mutate.h: mutants of statement-language scripts, for the sanitizer
 * test of `make check` (check_fuzz_lang.c) and the libFuzzer target's
 * custom mutator (fuzz_lang.c).
 *
 * A pool holds the seed scripts (the golden scripts and the examples), the
 * jaxpr texts found in them and given to it, and the names they use.  From
 * it and a random state come mutants: a seed mutated one to four times --
 * byte flips, token deletion, duplication, swaps and replacement (with
 * interesting numbers: -1, 0, 2**31, 2**63, -2**63, 1e309, nan...),
 * truncation at a statement boundary, statements and lines spliced in from
 * another seed, a token nested thousands deep, blank lines (which end
 * blocks at the REPL) -- or a generated script: every construct nested
 * deep (brackets, calls, lambdas, comprehensions, if/for/def/try blocks,
 * containers built deep at run time, recursion, nested transforms), or a
 * jaxpr of the pool followed by the autodiff commands (:jvp, :vjp, :grad,
 * :transpose, :linearize, :type, :print) and calls with arguments of its
 * input types.  The same random state gives the same mutant everywhere.
 */
#ifndef SR_TESTS_LANG_MUTATE_H
#define SR_TESTS_LANG_MUTATE_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct SrLangPool SrLangPool;

typedef struct SrLangMutant {
  SrBuf text;
  int devices;     /* the seed's --devices, or 0 */
  int repl;        /* the seed is a `# stdin: yes` script */
  char what[512];  /* how it was made: the seed and the mutations */
} SrLangMutant;

SrLangPool *sr_lang_pool_new(void);
void sr_lang_pool_free(SrLangPool *p);
/* Adds a seed script (copied): its jaxprs and names go to the pools too,
   and its header (# args: --devices N, # stdin: yes) is noted. */
void sr_lang_pool_script(SrLangPool *p, const char *name, const char *text, size_t n);
/* Adds a jaxpr text (copied) for the jaxpr-and-autodiff scripts. */
void sr_lang_pool_jaxpr(SrLangPool *p, const char *name, const char *text, size_t n);
size_t sr_lang_pool_nscripts(const SrLangPool *p);

/* xorshift64*; the state must not be 0 */
uint64_t sr_lang_rand(uint64_t *state);

/* Makes the next mutant from the random state into m (its text is reset
   first; m->text's memory is reused). */
void sr_lang_generate(SrLangPool *p, uint64_t *rng, SrLangMutant *m);
/* Mutates the text in[0..n) one to four times into out (reset first),
   appending what was done to what (a string of whatn bytes). */
void sr_lang_mutate(SrLangPool *p, uint64_t *rng, const char *in, size_t n, SrBuf *out, char *what,
                    size_t whatn);

#endif

/* generator.h: Python's generators.
 *
 * Calling a function whose body yields makes a generator (sr_gen_new);
 * its body runs on a stack of its own, switched to by next(), send() and
 * throw() and away from by yield, so a generator may be infinite and its
 * locals live between items, as in CPython.  One thread: the switch is
 * ucontext's, so MPI and the evaluator see one caller as ever.
 */
#ifndef SR_LANG_GENERATOR_H
#define SR_LANG_GENERATOR_H

#include "py/interp.h"
#include "py/objects.h"

/* A generator of fnval (a function value whose def yields) over env, the
   bound arguments (stolen). */
SrVal *sr_gen_new(SrInterp *I, SrVal *fnval, SrEnv *env);
int sr_is_gen(const SrVal *v);
/* The next item: a new reference, or NULL -- at the end with no
   exception set, or with the exception the body raised. */
SrVal *sr_gen_next(SrInterp *I, SrVal *gen);
/* Inside a generator's body: hands v (stolen) to the resumer; returns
   the value sent back in (None for next()), or NULL with the exception
   thrown in (throw(), close()). */
SrVal *sr_gen_yield(SrInterp *I, SrVal *v);
/* yield from it: every item of it handed on, sends passed to a
   generator; the generator's return value (None for other iterables). */
SrVal *sr_gen_yield_from(SrInterp *I, SrVal *it);
/* The items of a finite generator, as a new list (list(g), sorted(g)). */
SrVal *sr_gen_list(SrInterp *I, SrVal *gen);

/* The body runner (interp.c): runs fn's def body in a frame over env
   (borrowed); the return value, None, or NULL on an error. */
SrVal *sr_py_run_def_body(SrInterp *I, SrFunction *fn, SrEnv *env);

void sr_gen_init(void);

#endif

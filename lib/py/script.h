/* script.h: Python's script semantics (script.c): the names a *.py file
 * sees, NameError's "Did you mean", and the traceback of an uncaught
 * exception. */
#ifndef SR_PY_SCRIPT_H
#define SR_PY_SCRIPT_H

#include <stddef.h>

#include "py/interp.h"
#include "py/objects.h"
#include "util/diag.h"

/* Whether name is one of CPython's built-in names (list(builtins.__dict__)):
   all a Python script sees besides its own bindings. */
int sr_py_is_builtin_name(const char *name);
/* What a Python script's bare name finds when it is not bound: the
   built-in of that name (borrowed), or NULL. */
SrVal *sr_py_builtin(const char *name);

/* sys.argv as Python's for a script run from the source named src_name:
   [its file name] ('-c' for -e, '' at the prompt); kept as it is while
   the same one runs. */
void sr_script_argv(const char *src_name);

/* The name CPython's NameError suggests for name ("Did you mean"): the
   nearest of the frame's own locals (NULL at module level), else of the
   globals, else of Python's built-ins, by CPython's Levenshtein distance
   and limits; or NULL.  Borrowed. */
const char *sr_name_suggestion(const SrEnv *locals, const SrEnv *globals, const char *name);

/* Raises NameError: name 'x' is not defined, with the suggestion, shown
   when the error is reported (not in str(e), as in CPython).  NULL. */
SrVal *sr_raise_name_error(SrInterp *I, const SrEnv *locals, const SrEnv *globals, const char *name);

/* Sets what the message of the exception being raised gets when it is
   reported (fmt with one %s, arg). */
void sr_tb_hint(SrInterp *I, const char *fmt, const char *arg);

/* The exception being raised (located, I->exc_located 1) leaves a call
   made at byte off of src from func (NULL: module level): one frame of
   its traceback.  Nothing for an exception not located yet. */
void sr_tb_push(SrInterp *I, SrSrc *src, size_t off, const char *func);

/* Gives g, the diagnostic of the exception being raised, the traceback's
   frames (g->note: "Traceback (most recent call last):" and a located
   line, source line and caret for each caller, outermost first) and the
   hint, and forgets them. */
void sr_tb_attach(SrInterp *I, SrDiag *g);

/* The traceback of the pending exception, located, as
   traceback.format_exc() gives it while it is handled: "Traceback (most
   recent call last):", its callers' frames, the place it was raised, and
   "Type: message".  A malloc'd string. */
char *sr_tb_format(SrInterp *I);

/* Frees what I->py->tb holds (sr_interp_free). */
void sr_tb_free(SrInterp *I);

#endif

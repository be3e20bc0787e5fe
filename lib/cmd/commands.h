/* commands.h: the REPL's colon commands (:help, :load, :type ...).
 *
 * LAYER.  cmd/ is the top of the library: the colon commands (commands.c,
 * the autodiff ones in commands_ad.c), the evaluator's REPL faces
 * (hooks_exec.c: the backend hooks of core/trace.h, :comm, the built-ins
 * of concrete arrays), and linit.c, the init table that builds
 * shardrepl's language on py/ (linit.h).  It may use every layer; src/
 * uses it.
 *
 * The table is data: the REPL's help and tab completion read it.  A command
 * is a line that starts with ':' where a statement could start, in the REPL
 * and in scripts alike.
 */
#ifndef SR_LANG_COMMANDS_H
#define SR_LANG_COMMANDS_H

#include "py/interp.h"

typedef struct SrCommand {
  const char *name;  /* "type" */
  const char *alias; /* "t", or NULL */
  const char *args;  /* "EXPR" */
  const char *help;  /* one line */
  /* arg is the text after the command word, trimmed; errors go to I->py->diags
     (located at src/off); returns 0 or -1 */
  int (*run)(SrInterp *I, const char *arg, SrSrc *src, size_t off);
} SrCommand;

/* The table, ending with a NULL name; later stages add rows. */
const SrCommand *sr_commands(void);
/* Adds a command (for stages that bring their own). */
void sr_command_add(const SrCommand *c);
/* Evaluates a command's argument as an expression, parsed where it stands
   in src so that errors point into the command's line; NULL on error. */
SrVal *sr_command_eval_arg(SrInterp *I, const char *arg, SrSrc *src, size_t off);
/* The same for arg[a..b), a part of the argument: errors point at the
   part and show the command's whole line. */
SrVal *sr_command_eval_part(SrInterp *I, const char *arg, size_t a, size_t b, SrSrc *src, size_t off);
/* The argument of the commands that take a function (target.c): TARGET
   [REST] [as NAME], where TARGET is a jaxpr, a function, or a call
   F(ARGS) of one. */
typedef struct SrTarget {
  SrVal *fn;
  SrVal *args;    /* a tuple of example arguments */
  char *rest;     /* what follows (argnums for :grad) */
  size_t rest_at; /* where rest starts in the argument */
  char *bind;     /* `as NAME`, or NULL */
  int abstract;   /* a jaxpr F without (ARGS): args are its input types */
} SrTarget;
/* Parses arg for the command cmd (its name, for messages); text after
   TARGET is an error unless takes_rest.  Returns 0, or -1 with the error
   in I->py->diags; sr_target_free(t) either way. */
int sr_target_parse(SrInterp *I, const char *arg, SrSrc *src, size_t off, const char *cmd, int takes_rest,
                    SrTarget *t);
void sr_target_free(SrTarget *t);
/* Runs the command line text[off..end) of src. */
int sr_command_run(SrInterp *I, SrSrc *src, size_t off, size_t end);
/* Adds the autodiff commands, :jvp .. :gradcheck (lib/cmd/commands_ad.c;
   the init table's open_modules calls it, lib/cmd/linit.c). */
void sr_commands_ad_init(void);
/* :save and :history (session.c). */
void sr_commands_session_init(void);

/* Installs the evaluator's hooks (core/trace.h, sr_backend_hooks), registers
   :comm and the built-ins of concrete arrays (lib/cmd/hooks_exec.c); call
   once per interpreter, from sr_interp_new.  Returns 0. */
int sr_hooks_exec_init(SrInterp *I);

#endif

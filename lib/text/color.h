/* color.h: colour on the terminal (--color=auto|always|never).
 *
 * One decision for the session's standard output, made once: colours are
 * on under --color=always; under auto (the default) only when stdout is a
 * terminal, NO_COLOR is unset and TERM is not "dumb".  The colour system
 * is rich's reading of the environment (console.py _detect_color_system):
 * COLORTERM=truecolor or 24bit gives 24-bit colour, a TERM ending in
 * -256color or -kitty 256 colours, anything else the 16 standard ones.
 */
#ifndef SR_TEXT_COLOR_H
#define SR_TEXT_COLOR_H

#include "util/buf.h"

typedef enum { SR_COLOR_AUTO, SR_COLOR_ALWAYS, SR_COLOR_NEVER } SrColorMode;
typedef enum { SR_CS_NONE, SR_CS_STANDARD, SR_CS_256, SR_CS_TRUECOLOR } SrColorSystem;

/* Parses --color's argument ("auto", "always", "never"); -1 if none. */
int sr_color_parse(const char *s);
void sr_color_set_mode(SrColorMode m);
/* Under mpirun: a rank's stdout is the pseudo-terminal Open MPI gives it,
   not where mpirun's output goes, so auto does not colour. */
void sr_color_under_mpirun(void);
/* Colours are on for stdout (decided at the first call after a mode). */
int sr_color_on(void);
/* The colour system colours are drawn in: SR_CS_NONE when off. */
SrColorSystem sr_color_system(void);

/* SGR codes of the house styles: diagnostics as gcc colours its (the
   format is gcc's), the exception's type and the prompt as CPython 3.13
   colours its traceback and its REPL's prompt. */
#define SR_SGR_LOCUS "1"      /* file:line:col: */
#define SR_SGR_ERROR "1;31"   /* error: */
#define SR_SGR_WARN "1;35"    /* warning: */
#define SR_SGR_CARET "1;32"   /* the caret under the error */
#define SR_SGR_EXC "1;35"     /* an exception's type (CPython 3.13) */
#define SR_SGR_PROMPT "1;35"  /* >>> and ... (CPython 3.13) */

/* Appends s wrapped in \e[<sgr>m ... \e[0m when colours are on, else s. */
void sr_color_puts(SrBuf *out, const char *sgr, const char *s);
void sr_color_putn(SrBuf *out, const char *sgr, const char *s, size_t n);

/* Appends rendered diagnostics or warnings (text/diag lines), coloured:
   the locus, "error:" or "warning:", the exception type, the caret. */
void sr_color_diags(SrBuf *out, const char *s, size_t n);
/* The prompt for readline, coloured when colours are on (the escapes
   marked with \001 and \002 so that readline measures it right). */
const char *sr_color_prompt(const char *prompt, char *buf, size_t cap);

/* jax.config's jax_pprint_use_color (default True). */
extern int sr_pprint_use_color;
/* Appends the printed jaxpr s coloured as JAX colours it (jaxpr_color.c). */
void sr_color_jaxpr(SrBuf *out, const char *s, size_t n);

#endif

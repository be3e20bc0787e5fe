/* diag.h: source texts and located diagnostics.
 *
 * Library functions never print or exit.  They return a status and append
 * diagnostics to an SrDiags; the caller renders them as
 *
 *     file:line:col: error: message
 *         the source line
 *             ^
 *
 * An SrSrc is one source text (a file, a -e argument, one REPL input).  It
 * is reference-counted because parsed programs and diagnostics point into it.
 */
#ifndef SR_UTIL_DIAG_H
#define SR_UTIL_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct SrSrc {
  char *name;        /* "tour.jxr", "<stdin>", "<-e>" */
  char *text;        /* NUL-terminated copy */
  size_t len;
  uint32_t line0;    /* number of the text's first line, from 1 */
  int rc;
  size_t *bol;       /* offset of each line's first byte (bol[0] = 0), so
                        that sr_src_linecol is a binary search: a trace
                        locates every statement it runs */
  size_t nbol;
} SrSrc;

SrSrc *sr_src_new(const char *name, const char *text, size_t len, uint32_t line0);
SrSrc *sr_src_ref(SrSrc *s);
void sr_src_unref(SrSrc *s);
/* Line (from s->line0) and column (from 1) of byte offset off. */
void sr_src_linecol(const SrSrc *s, size_t off, uint32_t *line, uint32_t *col);

/* What went wrong, which also picks the exit status of a batch run. */
typedef enum {
  SR_E_PARSE = 1, /* malformed text */
  SR_E_TYPE,      /* well-formed but ill-typed */
  SR_E_RUNTIME,   /* failed while running */
  SR_E_USAGE,     /* bad command-line use */
} SrErrKind;

typedef struct SrDiag {
  SrErrKind kind;
  SrSrc *src;          /* NULL when there is no location */
  size_t off;
  char *exc;           /* JAX's exception type ("ShardingTypeError"), or NULL */
  char *msg;
  int rendered;        /* msg is diagnostics already rendered, with their
                          own locations and carets: written as it is */
  char *note;          /* NULL, or lines rendered before the error (the
                          outer frames of a traceback), each ending in '\n' */
  struct SrDiag *next;
} SrDiag;

typedef struct SrDiags {
  SrDiag *first, *last;
  int count;
  /* The text ended where more input could complete it: a REPL asks for
     more instead of reporting the error.  Flags, as Python's REPL tells
     them apart: SR_INCOMPLETE_OPEN, a bracket, a string, a line
     continuation or a jaxpr is open (blank lines go on with it);
     SR_INCOMPLETE_BLOCK, a statement wants its indented block or what must
     follow it (def after a decorator, except after try), and a blank line
     ends the input.  A statement that is wrong where it ends (`1 +`) is
     an error at once. */
  int incomplete;
} SrDiags;

enum { SR_INCOMPLETE_BLOCK = 1, SR_INCOMPLETE_OPEN = 2 };

#define SR_DIAGS_INIT {0, 0, 0, 0}

/* Appends an error; src may be NULL.  Returns -1 so callers can write
   `return sr_error(...)`. */
int sr_error(SrDiags *d, SrErrKind kind, const SrSrc *src, size_t off,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int sr_verror(SrDiags *d, SrErrKind kind, const SrSrc *src, size_t off,
              const char *fmt, va_list ap);
/* Same, with a Python exception type name shown before the message. */
int sr_error_exc(SrDiags *d, SrErrKind kind, const char *exc, const SrSrc *src,
                 size_t off, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Gives every unlocated diagnostic in d the location (src, off). */
void sr_diags_locate(SrDiags *d, const SrSrc *src, size_t off);
/* Moves all of from's diagnostics to the end of to. */
void sr_diags_move(SrDiags *to, SrDiags *from);
void sr_diags_clear(SrDiags *d);
/* The kind of the first diagnostic, or 0. */
SrErrKind sr_diags_kind(const SrDiags *d);

/* The source line holding byte off of s, indented by four blanks, and a
   caret under off (the lines under an error's first). */
void sr_src_render_caret(const SrSrc *s, size_t off, SrBuf *out);
/* Renders every diagnostic, each ending in a newline. */
void sr_diags_render(const SrDiags *d, SrBuf *out);
/* "TypeName: message" or "message": what Python's print(e) shows is the
   message alone, so that is msg; this is for the REPL's one-line form. */
void sr_diag_render_one(const SrDiag *g, SrBuf *out);

#endif

/* lex.h: tokens of the statement language, a small Python.
 *
 * Python's rules: implicit line joining inside brackets, backslash
 * continuation, INDENT/DEDENT from indentation, '#' comments, string
 * prefixes r/f/b, numbers with '_' separators.  One addition: a jaxpr as
 * JAX prints it ("{ lambda ...}" or "let NAME = { ... } in { ... }") is a
 * single token whose value is the parsed program.
 */
#ifndef SR_LANG_LEX_H
#define SR_LANG_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "ir/jaxpr.h"
#include "ir/mesh.h"
#include "util/diag.h"

typedef enum {
  SR_T_END,
  SR_T_NEWLINE,
  SR_T_INDENT,
  SR_T_DEDENT,
  SR_T_NAME,
  SR_T_INT,
  SR_T_FLOAT,
  SR_T_IMAG,
  SR_T_STRING, /* text holds the decoded string; fstring marks f-strings */
  SR_T_OP,     /* text holds the operator: "(", "**=", "->", ... */
  SR_T_JAXPR,
} SrTokKind;

typedef struct SrTok {
  SrTokKind kind;
  size_t off, len;     /* where it is in the source */
  const char *text;    /* NAME / OP (interned), STRING (decoded, in the arena) */
  size_t textlen;
  int64_t i;           /* INT */
  double f;            /* FLOAT, IMAG */
  uint8_t fstring, bytes, raw;
  SrProgram *prog;     /* JAXPR (owned by the SrCode) */
} SrTok;

/* A unit of parsed code: the arena holding its syntax tree and the jaxpr
   literals it contains.  Counted, because functions defined by the code
   keep it alive after the statement that defined them has run. */
typedef struct SrCode {
  int rc;
  SrArena *arena;
  SrSrc *src;
  SrProgram **progs;
  size_t nprogs, capprogs;
  SrVal **held;         /* counted constants of the syntax tree */
  size_t nheld, capheld;
  int python;           /* a Python script's: only Python's built-in names */
} SrCode;

SrCode *sr_code_new(SrSrc *src);
SrCode *sr_code_ref(SrCode *c);
void sr_code_unref(SrCode *c);

typedef struct SrLexer {
  SrSrc *src;
  const char *s;
  size_t len, pos;
  SrCode *code;
  SrArena *a;           /* code->arena */
  SrDiags *d;
  const SrMesh *mesh;   /* context mesh for jaxpr literals */
  int depth;            /* bracket depth */
  int join_lines;       /* an f-string field: newlines are blanks */
  int indents[100];
  int nindent;
  int pending_dedents;
  int at_bol;           /* at the beginning of a logical line */
  int error;
} SrLexer;

/* Lexes src (the code's own source, or the text of an f-string field). */
void sr_lex_init(SrLexer *lx, SrCode *code, SrSrc *src, size_t start, SrDiags *d,
                 const SrMesh *mesh);
/* The next token; an error gives SR_T_END with lx->error set. */
SrTok sr_lex_next(SrLexer *lx);

#endif

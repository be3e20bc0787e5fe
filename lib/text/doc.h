/* doc.h: the layout engine JAX's printer uses (Wadler-Lindig, as in
 * jaxlib/_pretty_printer.cc).
 *
 * Six constructors: nil, text, brk, concat, group, nest.  A group is laid
 * out flat when *it alone* fits in the rest of the line (what follows it is
 * not counted); otherwise its own breaks become newlines.  Docs are built in
 * an arena and formatted into a buffer.
 */
#ifndef SR_TEXT_DOC_H
#define SR_TEXT_DOC_H

#include <stdint.h>

#include "util/buf.h"
#include "util/mem.h"

enum { SR_DOC_TEXT, SR_DOC_BRK, SR_DOC_CAT, SR_DOC_GROUP, SR_DOC_NEST };
enum { SR_MODE_BREAK, SR_MODE_FLAT };

typedef struct SrDoc {
  uint8_t kind;
  int32_t n;    /* NEST: indent; CAT: number of kids */
  int64_t flat; /* width when flat, summed as the doc is built; -1 until
                   measured for a doc built by hand */
  union {
    struct { const char *s; uint32_t len; } t; /* TEXT, BRK */
    struct SrDoc *child;                       /* GROUP, NEST */
    struct SrDoc **kids;                       /* CAT */
  };
} SrDoc;

SrDoc *sr_doc_text(SrArena *a, const char *s, uint32_t len);
SrDoc *sr_doc_textz(SrArena *a, const char *s); /* s must outlive the doc */
SrDoc *sr_doc_brk(SrArena *a, const char *s);   /* " " in flat mode by default */
SrDoc *sr_doc_group(SrArena *a, SrDoc *d);
SrDoc *sr_doc_nest(SrArena *a, int n, SrDoc *d);
/* A concat of n docs (NULL entries are nil). */
SrDoc *sr_doc_cat(SrArena *a, int n, SrDoc **kids);
SrDoc *sr_doc_cat2(SrArena *a, SrDoc *x, SrDoc *y);
SrDoc *sr_doc_cat3(SrArena *a, SrDoc *x, SrDoc *y, SrDoc *z);

/* Width of d laid out flat. */
int64_t sr_doc_flat(SrDoc *d);

/* The formatter's state: the output and its current column. */
typedef struct SrFmt {
  SrBuf *out;
  int64_t k;
  int width;
  struct SrFmtItem *stack;
  size_t cap;
} SrFmt;

void sr_fmt_init(SrFmt *f, SrBuf *out, int width);
void sr_fmt_free(SrFmt *f);
/* Lays d out starting at the current column, with enclosing indent and
   mode (SR_MODE_BREAK at top level). */
void sr_fmt(SrFmt *f, SrDoc *d, int64_t indent, int mode);
/* A break as the formatter would emit it in the given mode. */
void sr_fmt_brk(SrFmt *f, const char *s, int64_t indent, int mode);
void sr_fmt_text(SrFmt *f, const char *s, size_t n);

#endif

/* cell.c: one notebook cell, its outputs captured (see cell.h). */
#include "config.h"

#include "cell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_driver.h"
#include "util/diag.h"
#include "util/mem.h"

static SrCellOut *cur; /* the cell running now */

static void on_echo(SrInterp *I, const char *text, size_t n) {
  (void)I;
  if (cur) sr_buf_putn(&cur->result, text, n);
}

static void on_warn(SrInterp *I, const char *text, size_t n) {
  (void)I;
  if (cur) sr_buf_putn(&cur->warn, text, n);
}

/* The first error of the cell, rendered; ename and evalue from its first
   diagnostic. */
static void on_error(SrInterp *I) {
  SrDiags *d = &I->py->diags;
  if (!d->count) return;
  if (cur && !cur->failed) {
    cur->failed = 1;
    cur->kind = (int)sr_diags_kind(d);
    SrDiag *g = d->first;
    const char *ename = g->exc ? g->exc : g->kind == SR_E_PARSE ? "SyntaxError" : "Error";
    cur->ename = sr_xstrdup(ename);
    cur->evalue = sr_xstrdup(g->msg ? g->msg : "");
    /* a rendered message holds its own location: its exception's words
       are the rendered text's first "Type: message" line */
    sr_diags_render(d, &cur->err);
  }
  sr_diags_clear(d);
}

int sr_cell_run(SrInterp *I, SrSrc *src, SrCellOut *o) {
  FILE *saved_out = I->py->out;
  void (*saved_err)(SrInterp *) = I->py->on_error;
  void (*saved_echo)(SrInterp *, const char *, size_t) = I->py->on_echo;
  void (*saved_warn)(SrInterp *, const char *, size_t) = I->py->on_warn;
  int saved_mode = I->py->echo;
  char *text = NULL;
  size_t len = 0;
  FILE *mem = saved_out ? open_memstream(&text, &len) : NULL;
  cur = o;
  I->py->out = mem;
  I->py->on_error = on_error;
  I->py->on_echo = on_echo;
  I->py->on_warn = on_warn;
  I->py->echo = 2;
  I->interrupted = 0;
  sr_mpi_driver_run(I, src, 0);
  on_error(I);
  I->py->out = saved_out;
  I->py->on_error = saved_err;
  I->py->on_echo = saved_echo;
  I->py->on_warn = saved_warn;
  I->py->echo = saved_mode;
  cur = NULL;
  if (mem) {
    fclose(mem);
    sr_buf_putn(&o->out, text, len);
    free(text);
  }
  return o->failed;
}

void sr_cell_out_free(SrCellOut *o) {
  sr_buf_free(&o->out);
  sr_buf_free(&o->warn);
  sr_buf_free(&o->result);
  sr_buf_free(&o->err);
  free(o->ename);
  free(o->evalue);
}

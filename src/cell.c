/* cell.c: one notebook cell, its outputs captured (see cell.h). */
#include "config.h"

#include "cell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_driver.h"
#include "util/diag.h"
#include "util/mem.h"

static SrCellOut *cur; /* the cell running now */
static struct Stream *cur_stream; /* its stream, when it has one */

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

/* The stream of a cell whose output goes out as it comes. */
typedef struct Stream {
  SrCellOut *o;
  SrCellStream fn;
  void *ctx;
  SrBuf pending;
  double last; /* when pending was last sent */
} Stream;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void stream_send(Stream *st) {
  if (st->pending.len) st->fn(st->ctx, st->pending.p, st->pending.len);
  sr_buf_reset(&st->pending);
  st->last = now();
}

static ssize_t stream_write(void *cookie, const char *buf, size_t n) {
  Stream *st = cookie;
  sr_buf_putn(&st->o->out, buf, n);
  sr_buf_putn(&st->pending, buf, n);
  if (now() - st->last >= 0.05) stream_send(st);
  return (ssize_t)n;
}

static int run(SrInterp *I, SrSrc *src, SrCellOut *o, Stream *st);

void sr_cell_flush(void) {
  if (cur_stream) stream_send(cur_stream);
}

/* input() in a cell whose frontend takes no input (ipykernel's words) */
static int no_stdin(SrInterp *I, const char *prompt, SrBuf *line) {
  (void)prompt;
  (void)line;
  sr_raise(I, "StdinNotImplementedError", "raw_input was called, but this frontend does not support input requests.");
  return -1;
}

int sr_cell_run(SrInterp *I, SrSrc *src, SrCellOut *o) { return run(I, src, o, NULL); }

int sr_cell_run_stream(SrInterp *I, SrSrc *src, SrCellOut *o, SrCellStream fn, void *ctx) {
  Stream st = {o, fn, ctx, SR_BUF_INIT, 0};
  int rc = run(I, src, o, &st);
  stream_send(&st);
  sr_buf_free(&st.pending);
  return rc;
}

static int run(SrInterp *I, SrSrc *src, SrCellOut *o, Stream *st) {
  FILE *saved_out = I->py->out;
  void (*saved_err)(SrInterp *) = I->py->on_error;
  void (*saved_echo)(SrInterp *, const char *, size_t) = I->py->on_echo;
  void (*saved_warn)(SrInterp *, const char *, size_t) = I->py->on_warn;
  int saved_mode = I->py->echo;
  char *text = NULL;
  size_t len = 0;
  FILE *mem = NULL;
  if (saved_out && st) {
    cookie_io_functions_t io = {NULL, stream_write, NULL, NULL};
    mem = fopencookie(st, "w", io);
    if (mem) setvbuf(mem, NULL, _IOLBF, 0);
  } else if (saved_out) {
    mem = open_memstream(&text, &len);
  }
  int (*saved_read)(SrInterp *, const char *, SrBuf *) = I->py->read_line;
  if (!saved_read) I->py->read_line = no_stdin;
  cur = o;
  cur_stream = st;
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
  I->py->read_line = saved_read;
  cur = NULL;
  cur_stream = NULL;
  if (mem) fclose(mem);
  if (text) {
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

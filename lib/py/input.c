/* input.c: the input() built-in, over the embedding's read_line (the
 * REPL's readline, the kernel's stdin channel) or standard input. */
#include <stdio.h>
#include <string.h>

#include "py/objects.h"

static int stdin_line(SrInterp *I, const char *prompt, SrBuf *line) {
  sr_write(I, prompt, strlen(prompt));
  if (I->py->out) fflush(I->py->out);
  int c, any = 0;
  while ((c = getchar()) != EOF) {
    any = 1;
    if (c == '\n') break;
    sr_buf_putc(line, (char)c);
  }
  return any ? 0 : -1;
}

static SrVal *bi_input(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "input() takes no keyword arguments");
  if (a->n > 1) return sr_raise(I, "TypeError", "input expected at most 1 argument, got %d", a->n);
  SrBuf prompt = SR_BUF_INIT, line = SR_BUF_INIT;
  if (a->n && sr_to_str(I, &prompt, a->v[0]) < 0) {
    sr_buf_free(&prompt);
    return NULL;
  }
  int (*read)(SrInterp *, const char *, SrBuf *) = I->py->read_line ? I->py->read_line : stdin_line;
  int rc = I->py->share_line ? I->py->share_line(I, sr_buf_str(&prompt), &line, read)
                             : read(I, sr_buf_str(&prompt), &line);
  SrVal *r = NULL;
  if (rc == 0) r = sr_str(NULL, line.p ? line.p : "", line.len);
  else if (!I->exc) sr_raise(I, "EOFError", "EOF when reading a line");
  sr_buf_free(&prompt);
  sr_buf_free(&line);
  return r;
}

void sr_input_init(void) {
  sr_def("builtins.input", bi_input,
         "input(prompt=''): writes prompt and reads a line (the REPL's line editor, a notebook's input box, "
         "or standard input), without its newline; EOFError at the end of the input");
}

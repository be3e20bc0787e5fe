/* fuzz_one.c: one input through the parser and the printer. */
#include "fuzz_one.h"

#include <stdio.h>
#include <string.h>

#include "text/parse.h"
#include "text/print.h"
#include "util/buf.h"
#include "util/diag.h"

/* Parses every program of src into out, printed and each followed by a
   newline, as --fmt does.  Returns SR_FUZZ_PRINTED, SR_FUZZ_REFUSED,
   SR_FUZZ_NO_ERROR or SR_FUZZ_STUCK; errors are rendered into err. */
static SrFuzzResult fmt_all(SrSrc *src, SrBuf *out, SrBuf *err) {
  SrDiags d = SR_DIAGS_INIT;
  SrFuzzResult r = SR_FUZZ_PRINTED;
  size_t pos = sr_skip_blanks(src->text, src->len, 0);
  while (pos < src->len) {
    size_t end = pos;
    SrProgram *p = sr_parse_program(src, pos, &end, NULL, &d);
    if (!p) {
      /* rendering reads the location: line, column and the caret */
      sr_diags_render(&d, err);
      r = d.first && d.first->src ? SR_FUZZ_REFUSED : SR_FUZZ_NO_ERROR;
      break;
    }
    sr_print_jaxpr(out, p->top);
    sr_buf_putc(out, '\n');
    /* the one-equation form, used in error messages, for a few */
    for (uint32_t i = 0; i < p->top->neqn && i < 8; i++) {
      SrBuf e = SR_BUF_INIT;
      sr_print_eqn(&e, &p->top->eqns[i]);
      sr_buf_free(&e);
    }
    sr_program_unref(p);
    if (end <= pos) {
      r = SR_FUZZ_STUCK;
      break;
    }
    pos = sr_skip_blanks(src->text, src->len, end);
  }
  sr_diags_clear(&d);
  return r;
}

SrFuzzResult sr_fuzz_one(const uint8_t *data, size_t size, char *why, size_t n) {
  SrSrc *src = sr_src_new("<input>", (const char *)data, size, 1);
  SrBuf out = SR_BUF_INIT, err = SR_BUF_INIT;
  SrFuzzResult r = fmt_all(src, &out, &err);
  if (r == SR_FUZZ_NO_ERROR && why) snprintf(why, n, "refused without a located error");
  if (r == SR_FUZZ_STUCK && why) snprintf(why, n, "a program that takes no text");
  if (r == SR_FUZZ_PRINTED && out.len) {
    /* what was printed must read back and print the same */
    SrSrc *again = sr_src_new("<printed>", out.p, out.len, 1);
    SrBuf out2 = SR_BUF_INIT, err2 = SR_BUF_INIT;
    SrFuzzResult r2 = fmt_all(again, &out2, &err2);
    if (r2 != SR_FUZZ_PRINTED) {
      r = SR_FUZZ_REPARSE;
      if (why) snprintf(why, n, "the printing does not parse back:\n%.2000s\n%.1000s", sr_buf_str(&out),
                        sr_buf_str(&err2));
    } else if (out2.len != out.len || memcmp(out2.p, out.p, out.len) != 0) {
      r = SR_FUZZ_UNSTABLE;
      if (why) snprintf(why, n, "printing is not a fixed point:\n%.2000s\nthen\n%.2000s", sr_buf_str(&out),
                        sr_buf_str(&out2));
    }
    sr_buf_free(&out2);
    sr_buf_free(&err2);
    sr_src_unref(again);
  }
  sr_buf_free(&out);
  sr_buf_free(&err);
  sr_src_unref(src);
  return r;
}

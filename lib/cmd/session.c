/* session.c: :save and :history, over the log of the statements that
 * succeeded (SrPyState.log, kept by sr_interp_run). */
#include "cmd/commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py/interp.h"
#include "util/buf.h"
#include "util/diag.h"

/* :save and :history themselves are not part of what they show */
static int shown(const char *stmt) {
  return strncmp(stmt, ":save", 5) != 0 && strncmp(stmt, ":history", 8) != 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A statement ending in a block (its last line indented) needs a blank
   line after it to be read back at a prompt. */
static int ends_in_block(const char *stmt) {
  const char *last = strrchr(stmt, '\n');
  return last && (last[1] == ' ' || last[1] == '\t');
}

static void json_str(SrBuf *b, const char *s, size_t n) {
  sr_buf_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') sr_buf_printf(b, "\\%c", c);
    else if (c == '\n') sr_buf_puts(b, "\\n");
    else if (c == '\t') sr_buf_puts(b, "\\t");
    else if (c < 0x20) sr_buf_printf(b, "\\u%04x", c);
    else sr_buf_putc(b, (char)c);
  }
  sr_buf_putc(b, '"');
}

static void write_script(SrBuf *b, SrPyState *py) {
  for (int i = 0; i < py->nlog; i++) {
    if (!shown(py->log[i])) continue;
    sr_buf_printf(b, "%s\n", py->log[i]);
    if (ends_in_block(py->log[i])) sr_buf_putc(b, '\n');
  }
}

static void write_md(SrBuf *b, SrPyState *py) {
  sr_buf_puts(b, "---\nkernelspec:\n  display_name: shardrepl\n  language: python\n  name: shardrepl\n---\n");
  for (int i = 0; i < py->nlog; i++)
    if (shown(py->log[i])) sr_buf_printf(b, "\n```{code-cell}\n%s\n```\n", py->log[i]);
}

static void write_ipynb(SrBuf *b, SrPyState *py) {
  sr_buf_puts(b, "{\n \"cells\": [");
  int first = 1;
  for (int i = 0; i < py->nlog; i++) {
    const char *s = py->log[i];
    if (!shown(s)) continue;
    sr_buf_printf(b, "%s\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n"
                  "   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [",
                  first ? "" : ",");
    first = 0;
    for (const char *l = s; *l;) {
      const char *nl = strchr(l, '\n');
      size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
      sr_buf_printf(b, "%s\n    ", l == s ? "" : ",");
      json_str(b, l, n);
      l += n;
    }
    sr_buf_puts(b, "\n   ]\n  }");
  }
  sr_buf_puts(b, "\n ],\n \"metadata\": {\n  \"kernelspec\": {\"display_name\": \"shardrepl\", \"language\": \"python\", "
                 "\"name\": \"shardrepl\"},\n  \"language_info\": {\"file_extension\": \".py\", \"mimetype\": "
                 "\"text/x-python\", \"name\": \"python\"}\n },\n \"nbformat\": 4,\n \"nbformat_minor\": 4\n}\n");
}

static int cmd_save(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  if (!*arg) {
    sr_error(&I->py->diags, SR_E_USAGE, src, off, ":save needs a file name (FILE.py, .jxr, .md or .ipynb)");
    return -1;
  }
  SrBuf b = SR_BUF_INIT;
  if (ends_with(arg, ".ipynb")) write_ipynb(&b, I->py);
  else if (ends_with(arg, ".md")) write_md(&b, I->py);
  else write_script(&b, I->py);
  FILE *f = fopen(arg, "wb");
  int bad = !f;
  if (f) {
    bad = fwrite(sr_buf_str(&b), 1, b.len, f) != b.len;
    bad |= fclose(f) != 0;
  }
  if (bad) sr_error(&I->py->diags, SR_E_USAGE, src, off, "cannot write '%s': %s", arg, strerror(errno));
  sr_buf_free(&b);
  return bad ? -1 : 0;
}

static int cmd_history(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  long n = -1;
  if (*arg) {
    char *end;
    n = strtol(arg, &end, 10);
    if (*end || n < 0) {
      sr_error(&I->py->diags, SR_E_USAGE, src, off, ":history takes a number of statements, got '%s'", arg);
      return -1;
    }
  }
  int total = 0;
  for (int i = 0; i < I->py->nlog; i++) total += shown(I->py->log[i]);
  SrBuf b = SR_BUF_INIT;
  int k = 0;
  for (int i = 0; i < I->py->nlog; i++) {
    const char *s = I->py->log[i];
    if (!shown(s)) continue;
    k++;
    if (n >= 0 && k <= total - n) continue;
    sr_buf_printf(&b, "%4d  ", k);
    for (; *s; s++) {
      sr_buf_putc(&b, *s);
      if (*s == '\n') sr_buf_puts(&b, "      ");
    }
    sr_buf_putc(&b, '\n');
  }
  sr_write(I, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return 0;
}

void sr_commands_session_init(void) {
  static const SrCommand cmds[] = {
    {"save", NULL, "FILE",
     "write the statements of the session that succeeded, in order: FILE.py or .jxr a script, .md (MyST) or "
     ".ipynb a notebook of one cell each",
     cmd_save},
    {"history", NULL, "[N]", "list the session's statements that succeeded (the last N)", cmd_history},
  };
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) sr_command_add(&cmds[i]);
}

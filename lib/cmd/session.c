/* session.c: :save and :history, over the log of the statements that
 * succeeded and what each wrote (SrPyState.log, kept by sr_interp_run).
 * A notebook :save writes has a cell a statement, with its outputs: in
 * MyST, the cell-output block --notebook writes (which a run of it
 * replaces); in a .ipynb, a stream and the echo as execute_result. */
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
    const char *t = py->log[i].text;
    if (!shown(t)) continue;
    sr_buf_printf(b, "%s\n", t);
    if (ends_in_block(t)) sr_buf_putc(b, '\n');
  }
}

/* The longest run of backticks in s (NULL: none). */
static size_t backticks(const char *s) {
  size_t run = 0, longest = 0;
  for (; s && *s; s++) {
    run = *s == '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

static void put_text(SrBuf *b, const char *s) {
  if (!s) return;
  sr_buf_puts(b, s);
  if (*s && s[strlen(s) - 1] != '\n') sr_buf_putc(b, '\n');
}

static void write_md(SrBuf *b, SrPyState *py) {
  sr_buf_puts(b, "---\nkernelspec:\n  display_name: shardrepl\n  language: python\n  name: shardrepl\n---\n");
  for (int i = 0; i < py->nlog; i++) {
    const SrLogEntry *e = &py->log[i];
    if (!shown(e->text)) continue;
    size_t n = backticks(e->text) + 1;
    SrBuf fence = SR_BUF_INIT;
    sr_buf_fill(&fence, '`', n < 3 ? 3 : n);
    sr_buf_printf(b, "\n%s{code-cell}\n%s\n%s\n", sr_buf_str(&fence), e->text, sr_buf_str(&fence));
    sr_buf_free(&fence);
    if (!e->out && !e->result) continue;
    n = backticks(e->out) + 1;
    if (backticks(e->result) + 1 > n) n = backticks(e->result) + 1;
    sr_buf_fill(&fence, '`', n < 3 ? 3 : n);
    sr_buf_printf(b, "\n%s{code-block} text\n:class: cell-output\n\n", sr_buf_str(&fence));
    put_text(b, e->out);
    put_text(b, e->result);
    sr_buf_printf(b, "%s\n", sr_buf_str(&fence));
    sr_buf_free(&fence);
  }
}

/* A text as nbformat's list of lines. */
static void json_lines(SrBuf *b, const char *s, size_t len, const char *indent) {
  sr_buf_putc(b, '[');
  for (size_t i = 0; i < len;) {
    const char *nl = memchr(s + i, '\n', len - i);
    size_t n = nl ? (size_t)(nl - s) + 1 - i : len - i;
    sr_buf_printf(b, "%s\n%s", i ? "," : "", indent);
    json_str(b, s + i, n);
    i += n;
  }
  if (len) sr_buf_printf(b, "\n%.*s", (int)strlen(indent) - 1, indent);
  sr_buf_putc(b, ']');
}

static void write_ipynb(SrBuf *b, SrPyState *py) {
  sr_buf_puts(b, "{\n \"cells\": [");
  int count = 0;
  for (int i = 0; i < py->nlog; i++) {
    const SrLogEntry *e = &py->log[i];
    if (!shown(e->text)) continue;
    count++;
    sr_buf_printf(b, "%s\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": %d,\n"
                  "   \"metadata\": {},\n   \"outputs\": [",
                  count > 1 ? "," : "", count);
    if (e->out) {
      sr_buf_puts(b, "\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": ");
      json_lines(b, e->out, strlen(e->out), "      ");
      sr_buf_puts(b, "\n    }");
    }
    if (e->result) {
      size_t n = strlen(e->result);
      if (n && e->result[n - 1] == '\n') n--;
      sr_buf_printf(b, "%s\n    {\n     \"data\": {\n      \"text/plain\": ", e->out ? "," : "");
      json_lines(b, e->result, n, "       ");
      sr_buf_printf(b, "\n     },\n     \"execution_count\": %d,\n     \"metadata\": {},\n"
                    "     \"output_type\": \"execute_result\"\n    }", count);
    }
    sr_buf_printf(b, "%s],\n   \"source\": ", e->out || e->result ? "\n   " : "");
    json_lines(b, e->text, strlen(e->text), "    ");
    sr_buf_puts(b, "\n  }");
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
  /* only the rank that prints writes (every rank has the same log) */
  if (!I->py->out) return 0;
  SrBuf b = SR_BUF_INIT;
  if (ends_with(arg, ".ipynb")) write_ipynb(&b, I->py);
  else if (ends_with(arg, ".md")) write_md(&b, I->py);
  else write_script(&b, I->py);
  if (strcmp(arg, "-") == 0) { /* the script, printed */
    sr_write(I, sr_buf_str(&b), b.len);
    sr_buf_free(&b);
    return 0;
  }
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
  for (int i = 0; i < I->py->nlog; i++) total += shown(I->py->log[i].text);
  SrBuf b = SR_BUF_INIT;
  int k = 0;
  for (int i = 0; i < I->py->nlog; i++) {
    const char *s = I->py->log[i].text;
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
     "write the statements of the session that succeeded, in order: FILE.py or .jxr a script (-: print it), "
     ".md (MyST) or .ipynb a notebook of a cell each, with its outputs",
     cmd_save},
    {"history", NULL, "[N]", "list the session's statements that succeeded (the last N)", cmd_history},
  };
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) sr_command_add(&cmds[i]);
}

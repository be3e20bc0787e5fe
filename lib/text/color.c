/* color.c: colour on the terminal (color.h). */
#include "text/color.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static SrColorMode mode = SR_COLOR_AUTO;
int sr_pprint_use_color = 1;
static int decided = -1; /* -1: not yet; else an SrColorSystem */
static int mpirun;

int sr_color_parse(const char *s) {
  if (strcmp(s, "auto") == 0) return SR_COLOR_AUTO;
  if (strcmp(s, "always") == 0) return SR_COLOR_ALWAYS;
  if (strcmp(s, "never") == 0) return SR_COLOR_NEVER;
  return -1;
}

void sr_color_under_mpirun(void) {
  mpirun = 1;
  decided = -1;
}

void sr_color_set_mode(SrColorMode m) {
  mode = m;
  decided = -1;
}

/* rich's choice of colour system for a terminal. */
static SrColorSystem detect(void) {
  const char *ct = getenv("COLORTERM");
  if (ct && (strcmp(ct, "truecolor") == 0 || strcmp(ct, "24bit") == 0)) return SR_CS_TRUECOLOR;
  const char *term = getenv("TERM");
  const char *dash = term ? strrchr(term, '-') : NULL;
  if (dash && (strcmp(dash + 1, "256color") == 0 || strcmp(dash + 1, "kitty") == 0)) return SR_CS_256;
  return SR_CS_STANDARD;
}

SrColorSystem sr_color_system(void) {
  if (decided < 0) {
    const char *term = getenv("TERM");
    if (mode == SR_COLOR_NEVER) decided = SR_CS_NONE;
    else if (mode == SR_COLOR_ALWAYS) decided = (int)detect();
    else if (mpirun || !isatty(1) || getenv("NO_COLOR") || (term && strcmp(term, "dumb") == 0)) decided = SR_CS_NONE;
    else decided = (int)detect();
  }
  return (SrColorSystem)decided;
}

int sr_color_on(void) { return sr_color_system() != SR_CS_NONE; }

void sr_color_putn(SrBuf *out, const char *sgr, const char *s, size_t n) {
  if (!sr_color_on()) {
    sr_buf_putn(out, s, n);
    return;
  }
  sr_buf_printf(out, "\033[%sm", sgr);
  sr_buf_putn(out, s, n);
  sr_buf_puts(out, "\033[0m");
}

void sr_color_puts(SrBuf *out, const char *sgr, const char *s) { sr_color_putn(out, sgr, s, strlen(s)); }

static int is_exc_char(char c) {
  return c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* One line of a diagnostic. */
static void diag_line(SrBuf *out, const char *s, size_t n) {
  const char *kinds[2] = {"error: ", "warning: "};
  for (int k = 0; k < 2; k++) {
    size_t kl = strlen(kinds[k]);
    /* "LOCUS: error: ..." or "error: ..." at the start */
    size_t at = (size_t)-1;
    if (n >= kl && memcmp(s, kinds[k], kl) == 0) at = 0;
    for (size_t i = 0; at == (size_t)-1 && i + 2 + kl <= n; i++)
      if (s[i] == ':' && s[i + 1] == ' ' && memcmp(s + i + 2, kinds[k], kl) == 0 && memchr(s, ' ', i) == NULL) at = i + 2;
    if (at == (size_t)-1) continue;
    if (at) {
      sr_color_putn(out, SR_SGR_LOCUS, s, at - 1);
      sr_buf_putc(out, ' ');
    }
    sr_color_putn(out, k ? SR_SGR_WARN : SR_SGR_ERROR, s + at, kl - 1);
    sr_buf_putc(out, ' ');
    size_t i = at + kl, e = i;
    while (e < n && is_exc_char(s[e])) e++;
    if (e > i && e + 1 < n && s[e] == ':' && s[e + 1] == ' ' && s[i] >= 'A' && s[i] <= 'Z') {
      sr_color_putn(out, SR_SGR_EXC, s + i, e - i);
      i = e;
    }
    sr_buf_putn(out, s + i, n - i);
    return;
  }
  /* a caret line: blanks and one ^ */
  size_t b = 0;
  while (b < n && (s[b] == ' ' || s[b] == '\t')) b++;
  if (b + 1 == n && s[b] == '^') {
    sr_buf_putn(out, s, b);
    sr_color_putn(out, SR_SGR_CARET, "^", 1);
    return;
  }
  sr_buf_putn(out, s, n);
}

void sr_color_diags(SrBuf *out, const char *s, size_t n) {
  if (!sr_color_on()) {
    sr_buf_putn(out, s, n);
    return;
  }
  for (size_t i = 0; i < n;) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t e = nl ? (size_t)(nl - s) : n;
    diag_line(out, s + i, e - i);
    if (nl) sr_buf_putc(out, '\n');
    i = e + 1;
  }
}

const char *sr_color_prompt(const char *prompt, char *buf, size_t cap) {
  if (!sr_color_on()) return prompt;
  snprintf(buf, cap, "\001\033[%sm\002%s\001\033[0m\002", SR_SGR_PROMPT, prompt);
  return buf;
}

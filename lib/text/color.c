/* color.c: colour on the terminal (color.h). */
#include "text/color.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static SrColorMode mode = SR_COLOR_AUTO;
static int decided = -1; /* -1: not yet; else an SrColorSystem */

int sr_color_parse(const char *s) {
  if (strcmp(s, "auto") == 0) return SR_COLOR_AUTO;
  if (strcmp(s, "always") == 0) return SR_COLOR_ALWAYS;
  if (strcmp(s, "never") == 0) return SR_COLOR_NEVER;
  return -1;
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
    else if (!isatty(1) || getenv("NO_COLOR") || (term && strcmp(term, "dumb") == 0)) decided = SR_CS_NONE;
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

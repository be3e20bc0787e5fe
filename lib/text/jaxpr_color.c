/* jaxpr_color.c: a printed jaxpr coloured as JAX colours it on a terminal
 * (jax_pprint_use_color; color.h).
 *
 * JAX's printer (core.py: pp_jaxpr_skeleton, pp_vars) marks the keywords
 * "lambda ", "let" and "in " (pp.keyword: bright blue) and the type
 * annotations of binders, ":f32[8]" (pp.type_annotation: magenta), and
 * jaxlib's _pretty_printer.cc writes an escape only where the colour of
 * the text changes (UpdateColorAnsi: the codes of what changed, foreground
 * then intensity), nothing for a line's indentation, and returns to the
 * default at the end.  The layout is the same with and without colour, so
 * the colours are put on the laid-out text here: a scan that knows the
 * skeleton "{ lambda CONSTS; INVARS. let EQNS in OUTS }", the binders of
 * equations ("b:f32[8] = ..."), and jaxprs nested in parameters.
 */
#include "text/color.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

enum { C_DEFAULT, C_KEYWORD, C_TYPE, C_NEUTRAL };

typedef struct Scan {
  const char *s;
  size_t n, i;
  unsigned char *cls;
} Scan;

static int at(const Scan *sc, const char *w) {
  size_t k = strlen(w);
  return sc->i + k <= sc->n && memcmp(sc->s + sc->i, w, k) == 0;
}

static void mark(Scan *sc, size_t k, int c) {
  for (size_t e = sc->i + k; sc->i < e && sc->i < sc->n; sc->i++) sc->cls[sc->i] = (unsigned char)c;
}

/* Breaks: spaces in a line are default text, a newline and the indent
   after it are nobody's. */
static void skip_break(Scan *sc) {
  while (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\n')) {
    if (sc->s[sc->i] == '\n') {
      mark(sc, 1, C_NEUTRAL);
      while (sc->i < sc->n && sc->s[sc->i] == ' ') mark(sc, 1, C_NEUTRAL);
    } else {
      mark(sc, 1, C_DEFAULT);
    }
  }
}

static int ident_char(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* At a binder "name:type": its length up to the ':' (0 if not one). */
static size_t binder_name(const Scan *sc) {
  size_t k = 0;
  while (sc->i + k < sc->n && ident_char(sc->s[sc->i + k])) k++;
  return k && sc->i + k < sc->n && sc->s[sc->i + k] == ':' ? k : 0;
}

/* One binder: the name in the default colour, ":type" as a type. */
static void binder(Scan *sc, size_t k) {
  mark(sc, k, C_DEFAULT);
  size_t e = sc->i;
  while (e < sc->n && sc->s[e] != ' ' && sc->s[e] != '\n' && !(sc->s[e] == ';' && e + 1 < sc->n && sc->s[e + 1] == ' ') &&
         !(sc->s[e] == '.' && e + 4 <= sc->n && memcmp(sc->s + e, ". le", 4) == 0))
    e++;
  mark(sc, e - sc->i, C_TYPE);
}

/* Binders up to "stop" (e.g. "; " or ". let"), which is left unread. */
static void binders(Scan *sc, const char *stop) {
  while (sc->i < sc->n && !at(sc, stop)) {
    size_t k = binder_name(sc);
    if (k) binder(sc, k);
    else if (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\n') skip_break(sc);
    else mark(sc, 1, C_DEFAULT);
  }
}

static void jaxpr(Scan *sc);

/* Text outside the skeleton (a parameter's value, outputs): default, with
   any jaxpr in it coloured, up to the end of the bracket it is in, or the
   first of the stops at depth 0 when the line is the expression's own. */
static void plain(Scan *sc, int eqn_end) {
  int depth = 0;
  while (sc->i < sc->n) {
    char c = sc->s[sc->i];
    if (at(sc, "{ lambda ")) {
      jaxpr(sc);
      continue;
    }
    if (depth == 0 && eqn_end && (at(sc, "; ") || at(sc, " in ") || c == '\n')) return;
    if (depth == 0 && !eqn_end && (at(sc, " }"))) return;
    if (c == '(' || c == '[' || c == '{') depth++;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) depth--;
    if (c == '\n') {
      skip_break(sc);
      continue;
    }
    mark(sc, 1, C_DEFAULT);
  }
}

/* The column of the line position i is on. */
static size_t column(const Scan *sc, size_t i) {
  size_t b = i;
  while (b > 0 && sc->s[b - 1] != '\n') b--;
  return i - b;
}

/* "{ lambda ...}" at sc->i. */
static void jaxpr(Scan *sc) {
  mark(sc, 2, C_DEFAULT);
  mark(sc, 7, C_KEYWORD); /* lambda */
  binders(sc, "; ");
  mark(sc, 2, C_DEFAULT);
  binders(sc, ". let");
  mark(sc, 2, C_DEFAULT);
  mark(sc, 3, C_KEYWORD); /* let */
  for (;;) {
    /* the break before an equation or before "in " */
    size_t before = sc->i;
    if (at(sc, "; ")) mark(sc, 1, C_DEFAULT);
    skip_break(sc);
    if (sc->i >= sc->n) return;
    if (at(sc, "in ") && (sc->s[sc->i - 1] == ' ' || sc->s[sc->i - 1] == '\n')) break;
    (void)before;
    /* an equation: binders, " = ", the right-hand side (its continuation
       lines are indented further than the equation) */
    size_t col = column(sc, sc->i);
    for (size_t k; (k = binder_name(sc));) {
      binder(sc, k);
      if (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\n') && !at(sc, " = ")) skip_break(sc);
    }
    for (;;) {
      plain(sc, 1);
      if (sc->i >= sc->n || sc->s[sc->i] != '\n') break;
      /* a newline: more of this equation when indented beyond it */
      size_t j = sc->i + 1, ind = 0;
      while (j + ind < sc->n && sc->s[j + ind] == ' ') ind++;
      if (ind <= col) break;
      skip_break(sc);
    }
  }
  mark(sc, 3, C_KEYWORD); /* in */
  plain(sc, 0);
  mark(sc, 2, C_DEFAULT); /* " }" */
}

/* The codes of a change of colour, as UpdateColorAnsi writes them. */
static void update(SrBuf *out, int from, int to) {
  static const int fg[3] = {39, 34, 35}, in[3] = {22, 1, 22};
  sr_buf_puts(out, "\033[");
  int any = 0;
  if (fg[from] != fg[to]) sr_buf_printf(out, "%d", fg[to]), any = 1;
  if (in[from] != in[to]) sr_buf_printf(out, "%s%d", any ? ";" : "", in[to]);
  sr_buf_putc(out, 'm');
}

void sr_color_jaxpr(SrBuf *out, const char *s, size_t n) {
  Scan sc = {s, n, 0, sr_xcalloc(n + 1, 1)};
  while (sc.i < n) {
    if (at(&sc, "{ lambda ")) jaxpr(&sc);
    else mark(&sc, 1, C_DEFAULT);
  }
  int state = C_DEFAULT;
  for (size_t i = 0; i < n; i++) {
    int c = sc.cls[i];
    if (c != C_NEUTRAL && c != state) {
      update(out, state, c);
      state = c;
    }
    sr_buf_putc(out, s[i]);
  }
  if (state != C_DEFAULT) update(out, state, C_DEFAULT);
  free(sc.cls);
}

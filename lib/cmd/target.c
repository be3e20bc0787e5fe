/* target.c: the one argument grammar of the commands that take a function.
 *
 *   TARGET [REST] [as NAME]
 *
 * TARGET is written without spaces at its top level: a name or attribute
 * (`loss`, `model.apply`), a call or subscript of one (`jax.grad(loss)`,
 * `fs[0]`), or a braced jaxpr literal.  When it ends in a call, the call's
 * arguments are the example arguments and what comes before them is the
 * function: `jax.grad(loss)(w, x)` is jax.grad(loss) on (w, x), as
 * `:comm jax.grad(loss)(w, x)` runs it.  A jaxpr without arguments is
 * taken on its input types.  REST is what :grad (argnums) and :vmap
 * (in_axes) take; `as NAME` binds the jaxpr a command prints.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "core/trace.h"
#include "py/objects.h"
#include "util/intern.h"

void sr_target_free(SrTarget *t) {
  sr_unref(t->fn);
  sr_unref(t->args);
  free(t->rest);
  free(t->bind);
  memset(t, 0, sizeof *t);
}

static int usage(SrInterp *I, SrSrc *src, size_t off, const char *msg) {
  sr_error(&I->py->diags, SR_E_USAGE, src, off, "%s", msg);
  return -1;
}

/* The end of the bracketed group that opens at s[i], or 0 when it does
   not close; string literals inside it are skipped. */
static size_t group_end(const char *s, size_t i) {
  int depth = 0;
  for (; s[i]; i++) {
    char c = s[i];
    if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (s[j] && s[j] != c) j += s[j] == '\\' && s[j + 1] ? 2 : 1;
      if (!s[j]) return 0;
      i = j;
    } else if (c == '(' || c == '[' || c == '{') {
      depth++;
    } else if ((c == ')' || c == ']' || c == '}') && --depth == 0) {
      return i + 1;
    }
  }
  return 0;
}

/* The extent of TARGET in text: [0, *end), and where its last call's
   group starts (*call, or 0 when it does not end in a call). */
static int target_extent(const char *text, size_t *end, size_t *call) {
  size_t i = 0;
  *call = 0;
  while (text[i] && text[i] != ' ' && text[i] != '\t') {
    char c = text[i];
    if (c == '(' || c == '[' || c == '{') {
      size_t e = group_end(text, i);
      if (!e) return -1;
      *call = c == '(' && i > 0 ? i : 0;
      i = e;
    } else if (isalnum((unsigned char)c) || c == '_' || c == '.') {
      *call = 0;
      i++;
    } else {
      break;
    }
  }
  *end = i;
  return 0;
}

/* `(ARGS)` as a tuple of the example arguments */
static SrVal *example_args(SrInterp *I, const char *arg, const char *text, size_t a, size_t b, SrSrc *src,
                           size_t off) {
  int commas = 0, blank = 1;
  for (size_t k = a + 1, d = 0; k + 1 < b; k++) {
    char c = text[k];
    if (c == '\'' || c == '"') {
      size_t j = k + 1;
      while (j + 1 < b && text[j] != c) j += text[j] == '\\' ? 2 : 1;
      k = j;
      blank = 0;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') d++;
    else if (c == ')' || c == ']' || c == '}') d--;
    else if (c == ',' && d == 0) commas++;
    if (c != ' ') blank = 0;
  }
  SrVal *v = sr_command_eval_part(I, arg, a, b, src, off);
  if (!v || commas || blank) return v;
  SrVal *one = sr_seq(NULL, SR_V_TUPLE, 1);
  sr_seq_push(NULL, one, v);
  return one;
}

int sr_target_parse(SrInterp *I, const char *arg, SrSrc *src, size_t off, const char *cmd, int takes_rest,
                    SrTarget *t) {
  memset(t, 0, sizeof *t);
  char *text = sr_xstrdup(arg);
  /* `as NAME` */
  size_t n = strlen(text);
  char *as = NULL;
  for (char *p = text; (p = strstr(p, " as ")) != NULL; p++) as = p;
  if (as) {
    char *nm = as + 4;
    while (*nm == ' ') nm++;
    int ok = *nm && (isalpha((unsigned char)*nm) || *nm == '_');
    for (char *q = nm; *q && ok; q++) ok = isalnum((unsigned char)*q) || *q == '_';
    if (ok) {
      t->bind = sr_xstrdup(nm);
      *as = 0;
      n = strlen(text);
    }
  }
  while (n && text[n - 1] == ' ') text[--n] = 0;
  size_t end, call;
  if (target_extent(text, &end, &call) < 0) {
    free(text);
    return usage(I, src, off, "unbalanced brackets in the function or its arguments");
  }
  if (end == 0) {
    free(text);
    char msg[160];
    snprintf(msg, sizeof msg, ":%s needs a function: a jaxpr, a function name, or a call F(ARGS)", cmd);
    return usage(I, src, off, msg);
  }
  t->fn = sr_command_eval_part(I, arg, 0, call ? call : end, src, off);
  if (!t->fn) {
    free(text);
    return -1;
  }
  if (call) {
    t->args = example_args(I, arg, text, call, end, src, off);
    if (!t->args) {
      free(text);
      return -1;
    }
  } else if (t->fn->kind == SR_V_JAXPR) {
    const SrJaxpr *j = t->fn->jx.jaxpr;
    t->abstract = 1;
    t->args = sr_seq(NULL, SR_V_TUPLE, (int)sr_nargs(j));
    for (uint32_t k = 0; k < sr_nargs(j); k++) sr_seq_push(NULL, t->args, sr_array_abstract(sr_args(j)[k]->type));
  } else {
    free(text);
    char msg[160];
    snprintf(msg, sizeof msg, ":%s of a function that is not a jaxpr needs example arguments: :%s f(x, y)", cmd, cmd);
    return usage(I, src, off, msg);
  }
  size_t i = end;
  while (text[i] == ' ') i++;
  t->rest = sr_xstrdup(text + i);
  t->rest_at = i;
  free(text);
  if (*t->rest && !takes_rest) {
    char msg[160];
    snprintf(msg, sizeof msg, ":%s: unexpected text after the function: %.80s", cmd, t->rest);
    const char *at = src ? strstr(src->text + off, arg) : NULL;
    return usage(I, src, at ? (size_t)(at - src->text) + t->rest_at : off, msg);
  }
  if (!sr_is_callable(I, t->fn)) {
    char msg[128];
    snprintf(msg, sizeof msg, ":%s needs a function, got %s", cmd, sr_val_kind_name(t->fn));
    return usage(I, src, off, msg);
  }
  return 0;
}

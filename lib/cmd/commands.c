/* commands.c: the colon commands. */
#include "cmd/commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py/objects.h"
#include "prims/prim.h"
#include "text/print.h"
#include "text/print_val.h"
#include "util/intern.h"

static int cmd_help(SrInterp *I, const char *arg, SrSrc *src, size_t off);
static int cmd_quit(SrInterp *I, const char *arg, SrSrc *src, size_t off);
static int cmd_load(SrInterp *I, const char *arg, SrSrc *src, size_t off);
static int cmd_type(SrInterp *I, const char *arg, SrSrc *src, size_t off);
static int cmd_print(SrInterp *I, const char *arg, SrSrc *src, size_t off);
static int cmd_reset(SrInterp *I, const char *arg, SrSrc *src, size_t off);
static int cmd_prims(SrInterp *I, const char *arg, SrSrc *src, size_t off);

static SrCommand table[64] = {
  {"help", "h", "[NAME]", "list the commands, or describe a command or built-in", cmd_help},
  {"quit", "q", "", "leave shardrepl (Ctrl-D does too)", cmd_quit},
  {"load", "l", "FILE", "run the statements of FILE in this session", cmd_load},
  {"type", "t", "EXPR", "show the type of EXPR: a jaxpr's signature, an array's jax.typeof", cmd_type},
  {"print", "p", "NAME", "print the value bound to NAME (a jaxpr prints as JAX prints it)", cmd_print},
  {"reset", NULL, "", "forget every binding and the mesh in context", cmd_reset},
  {"prims", NULL, "", "list the primitives and which rules each has (type, eval, jvp, transpose, comm, batch)", cmd_prims},
  {NULL, NULL, NULL, NULL, NULL},
};

const SrCommand *sr_commands(void) { return table; }

void sr_command_add(const SrCommand *c) {
  int n = 0;
  while (table[n].name) n++;
  if (n + 1 < (int)(sizeof table / sizeof *table)) {
    table[n] = *c;
    table[n + 1] = (SrCommand){0};
  }
}

static void out(SrInterp *I, const char *s) { sr_write(I, s, strlen(s)); }

static int cmd_help(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrBuf b = SR_BUF_INIT;
  if (!*arg) {
    sr_buf_puts(&b, "Statements are a small Python with JAX's API (jax., jnp., jax.lax. and\n"
                    "jax.sharding. prefixes are optional); a jaxpr as JAX prints it is a value.\n"
                    "Commands:\n");
    for (const SrCommand *c = table; c->name; c++) {
      char head[64];
      snprintf(head, sizeof head, ":%s%s%s %s", c->name, c->alias ? " (:" : "", c->alias ? c->alias : "", "");
      if (c->alias) snprintf(head, sizeof head, ":%s (:%s) %s", c->name, c->alias, c->args);
      else snprintf(head, sizeof head, ":%s %s", c->name, c->args);
      sr_buf_printf(&b, "  %-24s %s\n", head, c->help);
    }
    sr_buf_puts(&b, ":help NAME describes a built-in, e.g. :help jax.make_mesh\n");
    out(I, b.p);
    sr_buf_free(&b);
    return 0;
  }
  const char *name = arg[0] == ':' ? arg + 1 : arg;
  for (const SrCommand *c = table; c->name; c++)
    if (strcmp(c->name, name) == 0 || (c->alias && strcmp(c->alias, name) == 0)) {
      sr_buf_printf(&b, ":%s %s\n    %s\n", c->name, c->args, c->help);
      out(I, b.p);
      sr_buf_free(&b);
      return 0;
    }
  SrVal *v = sr_lookup_qualname(sr_canonical_module(name));
  if (!v) v = sr_lookup_builtin_name(name);
  if (v && sr_builtin_doc(v)) {
    sr_buf_printf(&b, "%s\n    %s\n", sr_builtin_name(v), sr_builtin_doc(v));
    out(I, b.p);
    sr_buf_free(&b);
    return 0;
  }
  sr_buf_free(&b);
  sr_error(&I->py->diags, SR_E_USAGE, src, off, "no command or built-in named '%s' (:help lists the commands)", name);
  return -1;
}

static int cmd_prims(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  if (*arg) {
    sr_error(&I->py->diags, SR_E_USAGE, src, off, ":prims takes no argument");
    return -1;
  }
  SrBuf b = SR_BUF_INIT;
  sr_prims_matrix(&b);
  out(I, b.p);
  sr_buf_free(&b);
  return 0;
}

static int cmd_quit(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  (void)arg;
  (void)src;
  (void)off;
  I->py->quit = 1;
  return 0;
}

/* :loads run one inside another on the C stack, so a file that loads
   itself (or a cycle of them) stops as runaway recursion does, at as
   many levels as calls may nest */
enum { MAX_LOAD_DEPTH = 400 };

static int cmd_load(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  if (!*arg) {
    sr_error(&I->py->diags, SR_E_USAGE, src, off, ":load needs a file name");
    return -1;
  }
  if (I->py->run_depth > MAX_LOAD_DEPTH) {
    sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
    return -1;
  }
  FILE *f = fopen(arg, "rb");
  if (!f) {
    sr_error(&I->py->diags, SR_E_USAGE, src, off, "cannot open '%s'", arg);
    return -1;
  }
  SrBuf b = SR_BUF_INIT;
  char *chunk = sr_xmalloc(65536);
  size_t n;
  while ((n = fread(chunk, 1, 65536, f)) > 0) sr_buf_putn(&b, chunk, n);
  free(chunk);
  /* a directory opens, and fails only when read */
  int err = ferror(f) ? errno : 0;
  fclose(f);
  if (err) {
    sr_buf_free(&b);
    sr_error(&I->py->diags, SR_E_USAGE, src, off, "cannot read '%s': %s", arg, strerror(err));
    return -1;
  }
  SrSrc *s = sr_src_new(arg, sr_buf_str(&b), b.len, 1);
  sr_buf_free(&b);
  int failed = sr_interp_run(I, s, I->py->keep_going);
  sr_src_unref(s);
  return failed ? -1 : 0;
}

/* The text of the argument as a source of its own, located where it was
   written so that errors point into the command line. */
SrVal *sr_command_eval_arg(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  /* the argument is parsed where it stands, so errors point into the
     command's line: the source is cut at the end of that line */
  if (!src) {
    SrSrc *s = sr_src_new("<command>", arg, strlen(arg), 1);
    SrVal *v = sr_interp_eval_text(I, s, 0);
    sr_src_unref(s);
    return v;
  }
  const char *p = strstr(src->text + off, arg);
  size_t argoff = p ? (size_t)(p - src->text) : off;
  size_t eol = argoff;
  while (eol < src->len && src->text[eol] != '\n') eol++;
  SrSrc *s = sr_src_new(src->name, src->text, eol, src->line0);
  SrVal *v = sr_interp_eval_text(I, s, argoff);
  sr_src_unref(s);
  return v;
}

SrVal *sr_command_eval_part(SrInterp *I, const char *arg, size_t a, size_t b, SrSrc *src, size_t off) {
  const char *p = src ? strstr(src->text + off, arg) : NULL;
  if (!p) {
    SrSrc *s = sr_src_new(src ? src->name : "<command>", arg + a, b - a, 1);
    SrVal *v = sr_interp_eval_text(I, s, 0);
    sr_src_unref(s);
    return v;
  }
  /* parsed where it stands, in a source cut at its end */
  size_t at = (size_t)(p - src->text);
  SrSrc *s = sr_src_new(src->name, src->text, at + b, src->line0);
  SrVal *v = sr_interp_eval_text(I, s, at + a);
  /* the same offsets in the whole source show the whole line */
  for (SrDiag *g = I->py->diags.first; !v && g; g = g->next)
    if (g->src == s) {
      sr_src_unref(s);
      g->src = sr_src_ref(src);
    }
  sr_src_unref(s);
  return v;
}

static void type_text(SrInterp *I, SrBuf *b, SrVal *v) {
  if (v->kind == SR_V_JAXPR) {
    const SrJaxpr *j = v->jx.jaxpr;
    sr_buf_putc(b, '(');
    for (uint32_t i = 0; i < sr_nargs(j); i++) sr_buf_printf(b, i ? ", %s" : "%s", sr_type_short(sr_args(j)[i]->type));
    sr_buf_puts(b, ") -> (");
    for (uint32_t i = 0; i < j->nout; i++) {
      const SrType *t = j->outvars[i]->type;
      sr_buf_printf(b, i ? ", %s" : "%s", t ? sr_type_short(t) : "?");
    }
    sr_buf_puts(b, j->nout == 1 ? ",)" : ")");
    return;
  }
  SrVal *typeof_fn = sr_lookup_qualname("jax.typeof");
  if (typeof_fn && v->kind == SR_V_OBJ) {
    SrVal *t = sr_call1(I, typeof_fn, v);
    if (t) {
      sr_val_str(b, t);
      sr_unref(t);
      return;
    }
    sr_exc_clear(I);
  }
  sr_buf_printf(b, "<class '%s'>", sr_val_kind_name(v));
}

static int cmd_type(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  if (!*arg) {
    sr_error(&I->py->diags, SR_E_USAGE, src, off, ":type needs an expression");
    return -1;
  }
  SrVal *v = sr_command_eval_arg(I, arg, src, off);
  if (!v) return -1;
  SrBuf b = SR_BUF_INIT;
  type_text(I, &b, v);
  sr_buf_putc(&b, '\n');
  out(I, b.p);
  sr_buf_free(&b);
  sr_unref(v);
  return 0;
}

static int cmd_print(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  if (!*arg) {
    sr_error(&I->py->diags, SR_E_USAGE, src, off, ":print needs a name");
    return -1;
  }
  SrVal *v = sr_command_eval_arg(I, arg, src, off);
  if (!v) return -1;
  SrBuf b = SR_BUF_INIT;
  sr_to_str(I, &b, v);
  sr_buf_putc(&b, '\n');
  out(I, b.p);
  sr_buf_free(&b);
  sr_unref(v);
  return 0;
}

static int cmd_reset(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  (void)arg;
  (void)src;
  (void)off;
  sr_interp_reset(I);
  return 0;
}

int sr_command_run(SrInterp *I, SrSrc *src, size_t off, size_t end) {
  const char *s = src->text + off + 1; /* after ':' */
  const char *e = src->text + end;
  const char *w = s;
  while (w < e && *w != ' ' && *w != '\t') w++;
  size_t wl = (size_t)(w - s);
  while (w < e && (*w == ' ' || *w == '\t')) w++;
  while (e > w && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
  char *arg = sr_xstrndup(w, (size_t)(e - w));
  int rc = -1;
  const SrCommand *found = NULL;
  for (const SrCommand *c = table; c->name; c++)
    if ((strlen(c->name) == wl && memcmp(c->name, s, wl) == 0) ||
        (c->alias && strlen(c->alias) == wl && memcmp(c->alias, s, wl) == 0))
      found = c;
  if (found) {
    SrDiag *before = I->py->diags.last;
    rc = found->run(I, arg, src, off);
    /* an error that knows no place of its own is the command's */
    SrDiags mine = {before ? before->next : I->py->diags.first, NULL, 0, 0};
    if (rc < 0 && mine.first) sr_diags_locate(&mine, src, off);
  } else {
    sr_error(&I->py->diags, SR_E_USAGE, src, off, "unknown command ':%.*s' (:help lists the commands)", (int)wl, s);
  }
  free(arg);
  return rc;
}

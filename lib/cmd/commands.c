/* commands.c: the colon commands. */
#include "cmd/commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py/introspect.h"
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

/* ---- :help's examples and module lists ---- */

typedef struct HelpExample {
  const char *name, *sentence, *example;
} HelpExample;

static const HelpExample examples[] = {
#define EX(name, sentence, example) {name, sentence, example},
#include "cmd/help_examples.def"
#undef EX
};

static const HelpExample *example_of(const char *qualname) {
  for (size_t i = 0; i < sizeof examples / sizeof *examples; i++)
    if (strcmp(examples[i].name, qualname) == 0) return &examples[i];
  return NULL;
}

/* The documented built-ins, sorted, that are not internal (no part of the
   name starts with '_'). */
typedef struct Names {
  const char **v;
  size_t n, cap;
  const char *prefix; /* "jax.nn.": only its direct members; NULL: all */
} Names;

static void names_visit(const char *name, void *ctx) {
  Names *ns = ctx;
  SrVal *v = sr_lookup_qualname(name);
  if (!v || !sr_builtin_doc(v) || name[0] == '_' || strstr(name, "._")) return;
  if (ns->prefix) {
    size_t n = strlen(ns->prefix);
    if (strncmp(name, ns->prefix, n) != 0 || strchr(name + n, '.')) return;
  }
  if (ns->n == ns->cap) {
    ns->cap = ns->cap ? 2 * ns->cap : 256;
    ns->v = sr_xrealloc(ns->v, ns->cap * sizeof *ns->v);
  }
  ns->v[ns->n++] = name;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static Names documented(const char *prefix) {
  Names ns = {NULL, 0, 0, prefix};
  sr_registry_names(prefix ? prefix : "", names_visit, &ns);
  if (ns.n) qsort(ns.v, ns.n, sizeof *ns.v, cmp_str);
  return ns;
}

/* The example's lines as typed at Python's prompt: a statement after
   ">>> ", the lines of a block (and a def after its decorator) after
   "... ", and the blank line that ends a block before the next statement. */
static void example_lines(SrBuf *b, const char *ex, const char *indent) {
  int in_block = 0, decorated = 0;
  for (const char *p = ex; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    int body = *p == ' ' || decorated;
    if (in_block && !body) sr_buf_printf(b, "%s...\n", indent);
    sr_buf_printf(b, "%s%s%.*s\n", indent, body ? "... " : ">>> ", (int)n, p);
    decorated = *p == '@';
    in_block = *p == ' ' || decorated || (n && p[n - 1] == ':');
    p += n + (e != NULL);
  }
}

/* The modules of the documented built-ins. */
static void module_list(SrBuf *b) {
  Names all = documented(NULL);
  struct {
    const char *name;
    int len;
  } mods[128];
  int nm = 0;
  for (size_t i = 0; i < all.n; i++) {
    const char *dot = strrchr(all.v[i], '.');
    int len = dot ? (int)(dot - all.v[i]) : 0, k = 0;
    /* a class's members (numpy.ndarray.sum, jax.Array.method.item) are
       not a module's */
    char mod[256];
    snprintf(mod, sizeof mod, "%.*s", len, all.v[i]);
    SrVal *mv = sr_lookup_qualname(mod);
    if (sr_name_internal(all.v[i]) || (mv && !sr_is_obj(mv, &sr_module_class))) continue;
    while (k < nm && !(mods[k].len == len && strncmp(mods[k].name, all.v[i], (size_t)len) == 0)) k++;
    if (k == nm && nm < (int)(sizeof mods / sizeof *mods)) mods[nm++] = (typeof(mods[0])){all.v[i], len};
  }
  for (int i = 1; i < nm; i++) /* by name (few: insertion) */
    for (int k = i; k > 0; k--) {
      int l = mods[k].len < mods[k - 1].len ? mods[k].len : mods[k - 1].len;
      int c = strncmp(mods[k - 1].name, mods[k].name, (size_t)l);
      if (c < 0 || (c == 0 && mods[k - 1].len <= mods[k].len)) break;
      typeof(mods[0]) t = mods[k];
      mods[k] = mods[k - 1];
      mods[k - 1] = t;
    }
  sr_buf_puts(b, "Modules (:help MODULE lists its functions):\n");
  size_t col = 0;
  for (int k = 0; k < nm; k++) {
    char item[128];
    snprintf(item, sizeof item, "%.*s", mods[k].len, mods[k].name);
    if (col && col + strlen(item) + 2 > 78) {
      sr_buf_puts(b, ",\n");
      col = 0;
    }
    sr_buf_printf(b, "%s%s", col ? ", " : "  ", item);
    col += strlen(item) + 2;
  }
  sr_buf_putc(b, '\n');
  free(all.v);
}

/* The first line of a doc, cut to fit a listing. */
static void doc_summary(SrBuf *b, const char *doc, size_t width) {
  size_t n = strcspn(doc, "\n");
  if (n > width) sr_buf_printf(b, "%.*s...", (int)(width - 3), doc);
  else sr_buf_putn(b, doc, n);
}

/* :help --examples [MODULE]: every example as one script, each in a
   fresh session; a built-in without one is a comment that says so. */
static void examples_script(SrBuf *b, const char *module) {
  SrBuf prefix = SR_BUF_INIT;
  if (module) sr_buf_printf(&prefix, "%s.", module);
  Names ns = documented(NULL);
  for (size_t i = 0; i < ns.n; i++) {
    if (module && strncmp(ns.v[i], prefix.p, prefix.len) != 0) continue;
    const HelpExample *ex = example_of(ns.v[i]);
    if (!ex) {
      sr_buf_printf(b, "# no example: %s\n", ns.v[i]);
      continue;
    }
    sr_buf_printf(b, ":reset\nprint('# %s')\n%s\n", ns.v[i], ex->example);
  }
  free(ns.v);
  sr_buf_free(&prefix);
}

static int cmd_help(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrBuf b = SR_BUF_INIT;
  if (strncmp(arg, "--examples", 10) == 0 && (arg[10] == 0 || arg[10] == ' ')) {
    const char *m = arg + 10;
    while (*m == ' ') m++;
    examples_script(&b, *m ? sr_canonical_module(m) : NULL);
    out(I, sr_buf_str(&b));
    sr_buf_free(&b);
    return 0;
  }
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
    module_list(&b);
    sr_buf_puts(&b, ":help NAME describes a built-in, with an example, e.g. :help jax.make_mesh;\n"
                    ":help --examples [MODULE] writes the examples as a script\n");
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
    const char *q = sr_lookup_qualname(sr_canonical_module(name)) ? sr_canonical_module(name) : sr_builtin_name(v);
    const HelpExample *ex = example_of(q);
    if (!ex) ex = example_of(sr_builtin_name(v));
    sr_buf_printf(&b, "%s\n    %s", q, sr_builtin_doc(v));
    if (ex && ex->sentence) sr_buf_printf(&b, ": %s", ex->sentence);
    sr_buf_putc(&b, '\n');
    if (ex) example_lines(&b, ex->example, "    ");
    out(I, b.p);
    sr_buf_free(&b);
    return 0;
  }
  /* a module: its functions */
  char prefix[256];
  snprintf(prefix, sizeof prefix, "%s.", sr_canonical_module(name));
  Names ns = documented(prefix);
  if (ns.n) {
    sr_buf_printf(&b, "%.*s: %zu function%s (:help NAME for one)\n", (int)strlen(prefix) - 1, prefix, ns.n,
                  ns.n == 1 ? "" : "s");
    for (size_t i = 0; i < ns.n; i++) {
      sr_buf_printf(&b, "  %-22s ", ns.v[i] + strlen(prefix));
      doc_summary(&b, sr_builtin_doc(sr_lookup_qualname(ns.v[i])), 54);
      sr_buf_putc(&b, '\n');
    }
    free(ns.v);
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
  /* a *.py file runs as a Python script (py/script.h), whatever loads it */
  size_t an = strlen(arg);
  int saved_python = I->py->python, saved_echo = I->py->echo;
  if (an > 3 && strcmp(arg + an - 3, ".py") == 0) I->py->python = 1, I->py->echo = 0;
  int failed = sr_interp_run(I, s, I->py->keep_going);
  I->py->python = saved_python;
  I->py->echo = saved_echo;
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

/* complete.c: Tab completion (complete.h), after CPython's rlcompleter:
 * attributes are dir()'s names of the value the dotted name before the
 * last dot evaluates to. */
#include "cmd/complete.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/commands.h"
#include "py/introspect.h"
#include "py/objects.h"
#include "util/intern.h"

typedef struct {
  char **v;
  int n, cap;
} Cands;

static void cand_add(Cands *c, const char *s) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->v[i], s) == 0) return;
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 64;
    c->v = sr_xrealloc(c->v, (size_t)c->cap * sizeof *c->v);
  }
  c->v[c->n++] = sr_xstrdup(s);
}

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* rlcompleter's rule: _names only after a typed '_', __names after "__" */
static int shown(const char *name, const char *typed) {
  if (name[0] != '_') return 1;
  if (name[1] == '_') return starts(typed, "__");
  return typed[0] == '_';
}

/* ---- bare names ---- */

typedef struct {
  Cands *c;
  const char *prefix;
} Bare;

static void add_short(const char *name, void *ctx) {
  /* builtins.print -> print; jax.make_mesh -> make_mesh */
  Bare *b = ctx;
  static const char *const pre[] = {"builtins.", "jax.", "jax.numpy.", "jax.lax.", "jax.sharding.", NULL};
  for (int i = 0; pre[i]; i++) {
    size_t n = strlen(pre[i]);
    if (strncmp(name, pre[i], n) == 0 && !strchr(name + n, '.') && starts(name + n, b->prefix) &&
        !sr_name_internal(name) && shown(name + n, b->prefix))
      cand_add(b->c, name + n);
  }
}

static void add_global(const char *name, void *ctx) {
  Bare *b = ctx;
  if (starts(name, b->prefix) && shown(name, b->prefix)) cand_add(b->c, name);
}

static void bare_names(SrInterp *I, Cands *c, const char *text) {
  Bare b = {c, text};
  sr_registry_names("", add_short, &b);
  sr_global_names(I, add_global, &b);
  static const char *const kws[] = {"and", "as", "assert", "break", "class", "continue", "def", "del", "elif",
                                    "else", "except", "finally", "for", "from", "global", "if", "import", "in",
                                    "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
                                    "while", "with", "yield", "None", "True", "False", NULL};
  for (int i = 0; kws[i]; i++) add_global(kws[i], &b);
}

/* ---- attributes ---- */

/* The value the dotted name expr[0..n) names: a binding, a built-in or a
   module, then getattr along it; NULL (no exception left) when it names
   nothing.  A new reference. */
static SrVal *dotted_value(SrInterp *I, const char *expr, size_t n) {
  char buf[512];
  if (n == 0 || n >= sizeof buf) return NULL;
  memcpy(buf, expr, n);
  buf[n] = 0;
  for (size_t i = 0; i < n; i++)
    if (!(buf[i] == '.' || buf[i] == '_' || (buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= 'A' && buf[i] <= 'Z') ||
          (i && buf[i] >= '0' && buf[i] <= '9')))
      return NULL;
  char *dot = strchr(buf, '.');
  if (dot) *dot = 0;
  SrVal *v = sr_global_get(I, buf);
  if (v) sr_ref(v);
  if (!v && sr_lookup_builtin_name(buf)) v = sr_ref(sr_lookup_builtin_name(buf));
  if (!v && sr_module_known(buf)) v = sr_module(buf);
  for (char *seg = dot ? dot + 1 : NULL; v && seg;) {
    char *next = strchr(seg, '.');
    if (next) *next = 0;
    SrVal *a = sr_getattr(I, v, seg);
    sr_unref(v);
    if (!a) sr_exc_clear(I);
    v = a;
    seg = next ? next + 1 : NULL;
  }
  return v;
}

static void attributes(SrInterp *I, Cands *c, const char *text) {
  const char *dot = strrchr(text, '.');
  SrVal *v = dotted_value(I, text, (size_t)(dot - text));
  if (!v) return;
  SrVal *names = sr_dir(I, v);
  sr_unref(v);
  if (!names) {
    sr_exc_clear(I);
    return;
  }
  const char *attr = dot + 1;
  for (int i = 0; i < names->seq.n; i++) {
    const char *nm = names->seq.items[i]->str.s;
    if (!starts(nm, attr) || !shown(nm, attr)) continue;
    char buf[600];
    snprintf(buf, sizeof buf, "%.*s%s", (int)(dot + 1 - text), text, nm);
    cand_add(c, buf);
  }
  sr_unref(names);
}

/* ---- modules ---- */

typedef struct {
  Cands *c;
  const char *typed; /* the word as typed: "jax.n" */
  size_t parent;     /* the length of its module part, "jax." */
} Mods;

static void module_visit(const char *name, void *ctx) {
  Mods *m = ctx;
  if (starts(name, "builtins.") || sr_name_internal(name)) return;
  if (strncmp(name, m->typed, m->parent) != 0) return;
  const char *seg = name + m->parent, *end = strchr(seg, '.');
  if (!end) return; /* a leaf: a function, not a module */
  char mod[512];
  snprintf(mod, sizeof mod, "%.*s", (int)(end - name), name);
  if (starts(mod, m->typed) && shown(mod + m->parent, m->typed + m->parent)) cand_add(m->c, mod);
}

static void modules(Cands *c, const char *text) {
  const char *dot = strrchr(text, '.');
  Mods m = {c, text, dot ? (size_t)(dot + 1 - text) : 0};
  sr_registry_names("", module_visit, &m);
}

/* `from M import <text>`: M's names */
static void from_names(SrInterp *I, Cands *c, const char *mod, size_t n, const char *text) {
  char buf[512];
  if (n >= sizeof buf) return;
  memcpy(buf, mod, n);
  buf[n] = 0;
  if (!sr_module_known(buf)) return;
  SrVal *m = sr_module(buf);
  SrVal *names = sr_dir(I, m);
  sr_unref(m);
  for (int i = 0; names && i < names->seq.n; i++) {
    const char *nm = names->seq.items[i]->str.s;
    if (starts(nm, text) && shown(nm, text)) cand_add(c, nm);
  }
  sr_unref(names);
}

/* ---- file names, after :load ---- */

static void file_names(Cands *c, const char *text) {
  const char *slash = strrchr(text, '/');
  char dir[1024];
  if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - text + 1), text);
  else dir[0] = 0;
  const char *base = slash ? slash + 1 : text;
  DIR *d = opendir(dir[0] ? dir : ".");
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!starts(e->d_name, base) || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (e->d_name[0] == '.' && base[0] != '.') continue;
    char path[2048];
    snprintf(path, sizeof path, "%s%s", dir, e->d_name);
    struct stat st;
    int is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    if (is_dir) strncat(path, "/", sizeof path - strlen(path) - 1);
    cand_add(c, path);
  }
  closedir(d);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int sr_complete(SrInterp *I, const char *line, int start, char ***out) {
  Cands c = {0};
  const char *text = line + start;
  const char *lead = line + strspn(line, " \t");
  const char *sp = memchr(line, ' ', (size_t)start);
  if (line[0] == ':' && !sp) {
    /* the command word, with or without its ':' in the completed text */
    const char *w = text[0] == ':' ? text + 1 : text;
    for (const SrCommand *k = sr_commands(); k->name; k++)
      if (starts(k->name, w)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s%s", text[0] == ':' ? ":" : "", k->name);
        cand_add(&c, buf);
      }
  } else if (line[0] == ':') {
    /* :load FILE (or :l) */
    size_t wl = (size_t)(sp - line);
    if ((wl == 5 && strncmp(line, ":load", 5) == 0) || (wl == 2 && strncmp(line, ":l", 2) == 0)) file_names(&c, text);
  } else if ((starts(lead, "import ") || starts(lead, "from ")) && !strstr(lead, " import ")) {
    /* import a.b, c / from a.b: module names */
    modules(&c, text);
  } else if (starts(lead, "from ") && strstr(lead, " import ")) {
    const char *m = lead + 5;
    m += strspn(m, " ");
    from_names(I, &c, m, strcspn(m, " "), text);
  } else if (strchr(text, '.')) {
    attributes(I, &c, text);
  } else {
    bare_names(I, &c, text);
  }
  if (c.n) qsort(c.v, (size_t)c.n, sizeof *c.v, cmp_str);
  *out = c.v;
  return c.n;
}

char *sr_complete_indent(const char *text, size_t len) {
  /* the last line that is not blank */
  size_t end = len;
  while (end > 0) {
    while (end > 0 && text[end - 1] == '\n') end--;
    size_t st = end;
    while (st > 0 && text[st - 1] != '\n') st--;
    size_t k = st;
    while (k < end && (text[k] == ' ' || text[k] == '\t')) k++;
    if (k < end) {
      size_t ind = k - st;
      size_t e = end;
      while (e > k && (text[e - 1] == ' ' || text[e - 1] == '\t')) e--;
      /* a comment does not open a block; a ':' at the end does */
      int opens = e > k && text[e - 1] == ':';
      char *r = sr_xmalloc(ind + 5);
      memcpy(r, text + st, ind);
      if (opens) memcpy(r + ind, "    ", 4), ind += 4;
      r[ind] = 0;
      return r;
    }
    end = st;
  }
  return sr_xstrdup("");
}

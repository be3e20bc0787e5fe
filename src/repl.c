/* repl.c: the interactive loop -- readline, history, completion, Ctrl-C. */
#include "config.h"

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "lang/commands.h"
#include "lang/jaxstate.h"
#include "lang/objects.h"
#include "mpi_driver.h"
#include "repl.h"
#include "util/intern.h"

static SrInterp *the_interp;
static sigjmp_buf prompt_jmp;
static volatile sig_atomic_t at_prompt;

static void on_sigint(int sig) {
  (void)sig;
  if (at_prompt) siglongjmp(prompt_jmp, 1);
  if (the_interp) the_interp->interrupted = 1;
  sr_mpi_driver_sigint();
}

void sr_repl_report(SrInterp *I) {
  if (!I->diags.count) return;
  if (!I->first_error) I->first_error = sr_diags_kind(&I->diags);
  SrBuf b = SR_BUF_INIT;
  sr_diags_render(&I->diags, &b);
  fflush(stdout);
  fputs(sr_buf_str(&b), stderr);
  fflush(stderr);
  sr_buf_free(&b);
  sr_diags_clear(&I->diags);
}

/* ---- completion ---- */

typedef struct Cands {
  char **v;
  int n, cap;
  const char *prefix;   /* what the user typed */
  const char *qprefix;  /* the same with the module alias expanded */
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

/* A registered name "jax.numpy.sin" offered as the user spelled its module:
   up to the next dot after the typed prefix. */
static void add_registered(const char *name, void *ctx) {
  Cands *c = ctx;
  size_t qn = strlen(c->qprefix);
  const char *rest = name + qn;
  const char *dot = strchr(rest, '.');
  size_t rl = dot ? (size_t)(dot - rest) + 1 : strlen(rest);
  size_t pn = strlen(c->prefix);
  char *s = sr_xmalloc(pn + rl + 1);
  memcpy(s, c->prefix, pn);
  memcpy(s + pn, rest, rl);
  s[pn + rl] = 0;
  cand_add(c, s);
  free(s);
}

static void add_short(const char *name, void *ctx) {
  /* builtins.print -> print; jax.make_mesh -> make_mesh */
  Cands *c = ctx;
  static const char *const pre[] = {"builtins.", "jax.", "jax.numpy.", "jax.lax.", "jax.sharding.", NULL};
  for (int i = 0; pre[i]; i++) {
    size_t n = strlen(pre[i]);
    if (strncmp(name, pre[i], n) == 0 && !strchr(name + n, '.') &&
        strncmp(name + n, c->prefix, strlen(c->prefix)) == 0)
      cand_add(c, name + n);
  }
}

static void add_global(const char *name, void *ctx) {
  Cands *c = ctx;
  if (strncmp(name, c->prefix, strlen(c->prefix)) == 0) cand_add(c, name);
}

static Cands cands;
static int cand_next;

static char *gen(const char *text, int state) {
  (void)text;
  if (!state) cand_next = 0;
  return cand_next < cands.n ? sr_xstrdup(cands.v[cand_next++]) : NULL;
}

static char **complete(const char *text, int start, int end) {
  (void)end;
  for (int i = 0; i < cands.n; i++) free(cands.v[i]);
  cands.n = 0;
  rl_attempted_completion_over = 1;
  int colon = rl_line_buffer[0] == ':' && !memchr(rl_line_buffer, ' ', (size_t)start);
  if (colon) {
    /* the command word, with or without its ':' in the completed text */
    const char *w = text[0] == ':' ? text + 1 : text;
    for (const SrCommand *c = sr_commands(); c->name; c++)
      if (strncmp(c->name, w, strlen(w)) == 0) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s%s", text[0] == ':' ? ":" : "", c->name);
        cand_add(&cands, buf);
      }
  } else {
    cands.prefix = text;
    cands.qprefix = sr_canonical_module(text);
    char q[512];
    snprintf(q, sizeof q, "%s", cands.qprefix);
    cands.qprefix = q;
    if (strchr(text, '.')) {
      sr_registry_names(q, add_registered, &cands);
    } else {
      sr_registry_names("", add_short, &cands);
      sr_global_names(the_interp, add_global, &cands);
      static const char *const kws[] = {"def", "return", "lambda", "for", "while", "if", "else",
                                        "elif", "try", "except", "import", "from", "with", NULL};
      for (int i = 0; kws[i]; i++) add_global(kws[i], &cands);
    }
  }
  if (!cands.n) return NULL;
  return rl_completion_matches(text, gen);
}

/* ---- input ---- */

static char *history_path(void) {
  const char *p = getenv("SHARDREPL_HISTORY");
  if (p) return *p ? sr_xstrdup(p) : NULL;
  const char *home = getenv("HOME");
  if (!home) return NULL;
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "%s/.shardrepl_history", home);
  return sr_buf_steal(&b);
}

/* Is the text a complete input?  1 yes, 0 wants more lines, and an input
   that opened a block ends only with an empty line, as in Python. */
/* Does the text parse as a whole?  If not, its first error goes to I's
   diagnostics: at the prompt an input with a syntax error runs none of its
   lines, as in Python's REPL. */
static int input_parses(SrInterp *I, SrSrc *src) {
  size_t i = 0;
  while (i < src->len && (src->text[i] == ' ' || src->text[i] == '\t' || src->text[i] == '\n')) i++;
  if (i < src->len && src->text[i] == ':') return 1;
  SrCode *code = sr_code_new(src);
  SrDiags d = SR_DIAGS_INIT;
  size_t pos = 0;
  while (sr_lang_parse_stmt(code, &pos, &d, sr_jax_context_mesh(I->jax))) {
  }
  int ok = d.count == 0;
  if (!ok) {
    SrDiag *first = d.first;
    d.first = first->next;
    d.count--;
    first->next = NULL;
    SrDiags one = {first, first, 1, 0};
    sr_diags_move(&I->diags, &one);
  }
  sr_diags_clear(&d);
  sr_code_unref(code);
  return ok;
}

static int input_complete(SrInterp *I, const char *text, size_t len, int last_blank) {
  size_t i = 0;
  while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) i++;
  if (i < len && text[i] == ':') return 1;
  SrSrc *src = sr_src_new("<stdin>", text, len, 1);
  SrCode *code = sr_code_new(src);
  SrDiags d = SR_DIAGS_INIT;
  size_t pos = 0;
  int complete = 1, block = 0;
  for (;;) {
    SrNode *n = sr_lang_parse_stmt(code, &pos, &d, sr_jax_context_mesh(I->jax));
    if (!n) {
      if (d.incomplete) complete = 0;
      break;
    }
    if (n->kind == SR_N_DEF || n->kind == SR_N_IF || n->kind == SR_N_FOR || n->kind == SR_N_WHILE ||
        n->kind == SR_N_TRY || n->kind == SR_N_WITH)
      block = 1;
  }
  sr_diags_clear(&d);
  sr_code_unref(code);
  sr_src_unref(src);
  if (complete && block && !last_blank) return 0;
  return complete;
}

int sr_repl(SrInterp *I) {
  the_interp = I;
  int tty = isatty(0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);

  static char *hist;
  if (tty) {
    rl_readline_name = "shardrepl";
    rl_catch_signals = 0;
    rl_attempted_completion_function = complete;
    rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{(,[+-*/%~^!";
    hist = history_path();
    if (hist) read_history(hist);
    printf("shardrepl %s -- JAX's sharded jaxprs.  :help for help, :quit or Ctrl-D to leave.\n",
           PACKAGE_VERSION);
  }
  SrBuf input = SR_BUF_INIT;
  uint32_t line_no = 1, input_line = 1;
  int status = 0;
  for (;;) {
    if (tty && sigsetjmp(prompt_jmp, 1)) {
      /* Ctrl-C at the prompt: drop what was typed */
      at_prompt = 0;
      rl_free_line_state();
      rl_cleanup_after_signal();
      rl_replace_line("", 0);
      fputs("\nKeyboardInterrupt\n", stdout);
      sr_buf_reset(&input);
      I->interrupted = 0;
    }
    char *line;
    if (tty) {
      at_prompt = 1;
      /* a Ctrl-C that came after the statement's last interrupt point is
         spent: the statement has ended */
      I->interrupted = 0;
      line = readline(input.len ? "... " : ">>> ");
      at_prompt = 0;
    } else {
      SrBuf l = SR_BUF_INIT;
      int ch;
      while ((ch = getchar()) != EOF && ch != '\n') sr_buf_putc(&l, ch);
      line = ch == EOF && l.len == 0 ? NULL : sr_buf_steal(&l);
      if (!line) sr_buf_free(&l);
    }
    if (!line) {
      /* Ctrl-D (or end of input): run what is pending, then leave */
      if (tty) putchar('\n');
      if (input.len) {
        SrSrc *src = sr_src_new("<stdin>", input.p, input.len, input_line);
        if (sr_mpi_driver_run(I, src, 1)) status = 1;
        sr_repl_report(I);
        sr_diags_clear(&I->diags);
        sr_src_unref(src);
      }
      break;
    }
    if (!input.len) input_line = line_no;
    line_no++;
    int blank = line[strspn(line, " \t")] == 0;
    if (input.len || !blank) {
      sr_buf_puts(&input, line);
      sr_buf_putc(&input, '\n');
    }
    if (tty && !blank) add_history(line);
    free(line);
    if (!input.len) continue;
    if (!input_complete(I, input.p, input.len, blank)) continue;
    SrSrc *src = sr_src_new("<stdin>", input.p, input.len, input_line);
    sr_buf_reset(&input);
    if (!input_parses(I, src)) status = 1;
    else if (sr_mpi_driver_run(I, src, 1)) status = 1;
    fflush(stdout);
    sr_repl_report(I);
    sr_diags_clear(&I->diags);
    sr_src_unref(src);
    if (I->quit) break;
  }
  if (hist) {
    write_history(hist);
    free(hist);
  }
  sr_buf_free(&input);
  for (int i = 0; i < cands.n; i++) free(cands.v[i]);
  free(cands.v);
  return status;
}

/* repl.c: the interactive loop -- readline, history, completion, Ctrl-C. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "text/color.h"
#include "cmd/commands.h"
#include "cmd/complete.h"
#include "exec/kern.h"
#include "core/jaxstate.h"
#include "py/objects.h"
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
  if (!I->py->diags.count) return;
  if (!I->py->first_error) I->py->first_error = sr_diags_kind(&I->py->diags);
  SrBuf b = SR_BUF_INIT;
  sr_diags_render(&I->py->diags, &b);
  SrBuf c = SR_BUF_INIT;
  sr_color_diags(&c, b.p, b.len);
  fflush(stdout);
  fputs(sr_buf_str(&c), stderr);
  sr_buf_free(&c);
  fflush(stderr);
  sr_buf_free(&b);
  sr_diags_clear(&I->py->diags);
}

/* ---- completion ---- */

/* the candidates of the last Tab (cmd/complete.h), which gen hands out */
static char **cands;
static int ncands, cand_next;

static void cands_free(void) {
  for (int i = 0; i < ncands; i++) free(cands[i]);
  free(cands);
  cands = NULL;
  ncands = 0;
}

static char *gen(const char *text, int state) {
  (void)text;
  if (!state) cand_next = 0;
  return cand_next < ncands ? sr_xstrdup(cands[cand_next++]) : NULL;
}

static char **complete(const char *text, int start, int end) {
  (void)end;
  rl_attempted_completion_over = 1;
  /* Tab where only blanks precede it on the line indents, as Python's
     REPL */
  int k = 0;
  while (k < end && (rl_line_buffer[k] == ' ' || rl_line_buffer[k] == '\t')) k++;
  if (k == end) {
    rl_insert_text("    ");
    return NULL;
  }
  cands_free();
  char *line = sr_xmalloc((size_t)end + 1);
  memcpy(line, rl_line_buffer, (size_t)end);
  line[end] = 0;
  ncands = sr_complete(the_interp, line, start, &cands);
  free(line);
  if (!ncands) return NULL;
  /* a directory after :load goes on; a file name ends */
  if (ncands == 1 && cands[0][0] && cands[0][strlen(cands[0]) - 1] == '/') rl_completion_append_character = 0;
  return rl_completion_matches(text, gen);
}

/* The indentation a continuation line starts with (rl_startup_hook). */
static char *pending_indent;

static int insert_indent(void) {
  /* lines typed ahead or pasted bring their own indentation */
  struct pollfd p = {fileno(rl_instream ? rl_instream : stdin), POLLIN, 0};
  if (poll(&p, 1, 0) > 0) return 0;
  if (pending_indent && *pending_indent) rl_insert_text(pending_indent);
  return 0;
}

/* ---- history ---- */

/* The history file holds one entry a line, and the lines of a multi-line
   entry but its last end in "\r", as Python 3.13's REPL writes them (a
   reader that knows nothing of it sees each line).  Each input is appended
   when it is complete, under a lock, so that closing the terminal loses
   nothing and sessions sharing the file keep each other's lines; at
   start-up the file is trimmed to its last HISTORY_MAX entries.  A new
   file has mode 0600; the file is never followed through a symbolic link
   (O_NOFOLLOW), and no file's mode is changed. */
enum { HISTORY_MAX = 1000 };

static char *hist_path; /* NULL: no history is kept */

/* Says, on one line, why there is no history, and keeps none from then
   on: the message names the file, or HOME when there is none. */
static void hist_give_up(const char *why) {
  if (hist_path) fprintf(stderr, "shardrepl: history file %s: %s; the history is not saved\n", hist_path, why);
  else fprintf(stderr, "shardrepl: %s; the history is not saved\n", why);
  free(hist_path);
  hist_path = NULL;
}

/* Where the history goes: $SHARDREPL_HISTORY ("" for none), else
   ~/.shardrepl_history while HOME names a directory.  NULL (and a
   warning for an unusable HOME) when there is none. */
static char *history_path(void) {
  const char *p = getenv("SHARDREPL_HISTORY");
  if (p) return *p ? sr_xstrdup(p) : NULL;
  const char *home = getenv("HOME");
  struct stat st;
  if (!home || !*home) {
    hist_give_up("HOME is not set");
    return NULL;
  }
  if (home[0] != '/' || stat(home, &st) < 0 || !S_ISDIR(st.st_mode)) {
    char why[600];
    snprintf(why, sizeof why, "HOME (%.500s) is not a directory", home);
    hist_give_up(why);
    return NULL;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "%s/.shardrepl_history", home);
  return sr_buf_steal(&b);
}

/* The history file opened (created if need be) and locked, never through
   a symbolic link; -1 with the reason given up on. */
static int hist_open(void) {
  for (int tries = 0; tries < 8; tries++) {
    int fd = open(hist_path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st, now;
    if (fd < 0) {
      hist_give_up(errno == ELOOP ? "it is a symbolic link, which shardrepl does not follow" : strerror(errno));
      return -1;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      hist_give_up("it is not a regular file");
      return -1;
    }
    while (flock(fd, LOCK_EX) < 0 && errno == EINTR) {
    }
    /* a session that trimmed the file while we waited replaced it */
    if (lstat(hist_path, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) return fd;
    close(fd);
  }
  hist_give_up("it keeps being replaced");
  return -1;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* An entry as the file holds it: "\r" before each newline inside it. */
static void hist_encode(SrBuf *out, const char *e) {
  for (; *e; e++) {
    if (*e == '\n') sr_buf_putc(out, '\r');
    sr_buf_putc(out, *e);
  }
  sr_buf_putc(out, '\n');
}

/* Reads the history file into readline's history, and trims it to its
   last HISTORY_MAX entries (a new file in its place, with its mode). */
static void history_load(void) {
  int fd = hist_open();
  if (fd < 0) return;
  SrBuf text = SR_BUF_INIT;
  char chunk[65536];
  ssize_t k;
  while ((k = read(fd, chunk, sizeof chunk)) > 0 || (k < 0 && errno == EINTR))
    if (k > 0) sr_buf_putn(&text, chunk, (size_t)k);
  /* the entries: the lines, joined where one ends in "\r" */
  char **entries = NULL;
  int n = 0, cap = 0;
  SrBuf e = SR_BUF_INIT;
  const char *s = sr_buf_str(&text);
  for (size_t i = 0; i < text.len;) {
    const char *nl = memchr(s + i, '\n', text.len - i);
    size_t end = nl ? (size_t)(nl - s) : text.len;
    int more = end > i && s[end - 1] == '\r';
    sr_buf_putn(&e, s + i, end - i - (size_t)more);
    i = end + 1;
    if (more && i < text.len) {
      sr_buf_putc(&e, '\n');
      continue;
    }
    if (e.len) {
      if (n == cap) {
        cap = cap ? 2 * cap : 256;
        entries = sr_xrealloc(entries, (size_t)cap * sizeof *entries);
      }
      entries[n++] = sr_buf_steal(&e);
    }
    sr_buf_reset(&e);
  }
  sr_buf_free(&e);
  int first = n > HISTORY_MAX ? n - HISTORY_MAX : 0;
  for (int i = first; i < n; i++) add_history(entries[i]);
  if (first) {
    SrBuf kept = SR_BUF_INIT, tmp = SR_BUF_INIT;
    for (int i = first; i < n; i++) hist_encode(&kept, entries[i]);
    sr_buf_printf(&tmp, "%s.XXXXXX", hist_path);
    int t = mkstemp(tmp.p);
    struct stat st;
    if (t >= 0) {
      if (fstat(fd, &st) == 0) fchmod(t, st.st_mode & 07777); /* our new file: the old one's mode */
      int bad = write_all(t, kept.p, kept.len) < 0;
      if (close(t) < 0 || bad || rename(tmp.p, hist_path) < 0) unlink(tmp.p);
    }
    sr_buf_free(&kept);
    sr_buf_free(&tmp);
  }
  close(fd);
  for (int i = 0; i < n; i++) free(entries[i]);
  free(entries);
  sr_buf_free(&text);
}

/* One complete input into the history, and at once onto the file's end. */
static void history_add(const char *input, size_t len) {
  while (len && (input[len - 1] == '\n' || input[len - 1] == ' ' || input[len - 1] == '\t')) len--;
  if (!len) return;
  char *entry = sr_xmalloc(len + 1);
  memcpy(entry, input, len);
  entry[len] = 0;
  add_history(entry);
  if (hist_path) {
    SrBuf line = SR_BUF_INIT;
    hist_encode(&line, entry);
    int fd = hist_open();
    if (fd >= 0) {
      if (write_all(fd, line.p, line.len) < 0) hist_give_up(strerror(errno));
      close(fd);
    }
    sr_buf_free(&line);
  }
  free(entry);
}

/* ---- input ---- */

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
    sr_diags_move(&I->py->diags, &one);
  }
  sr_diags_clear(&d);
  sr_code_unref(code);
  return ok;
}

int sr_repl_completions(SrInterp *I, const char *line, int start, char ***out) {
  the_interp = I;
  return sr_complete(I, line, start, out);
}

/* Is the text a complete input?  1 yes, 0 wants more lines.  As in
   Python's REPL, an input goes on while a bracket, a string, a jaxpr or a
   block is open, and one that opened a block ends only with an empty line;
   an error where a line ends (`1 +`) ends it at once. */
int sr_repl_input_complete(SrInterp *I, const char *text, size_t len, int last_blank) {
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
      /* an open bracket, string or jaxpr goes on through blank lines; a
         block still to come ends at one (and is reported then) */
      if (d.incomplete & SR_INCOMPLETE_OPEN) complete = 0;
      else if (d.incomplete & SR_INCOMPLETE_BLOCK) complete = last_blank;
      break;
    }
    if (n->kind == SR_N_DEF || n->kind == SR_N_IF || n->kind == SR_N_FOR || n->kind == SR_N_WHILE ||
        n->kind == SR_N_TRY || n->kind == SR_N_WITH || n->kind == SR_N_CLASS)
      block = 1;
  }
  sr_diags_clear(&d);
  sr_code_unref(code);
  sr_src_unref(src);
  if (complete && block && !last_blank) return 0;
  return complete;
}

/* input() at the terminal: the line editor, with the prompt */
static int repl_read_line(SrInterp *I, const char *prompt, SrBuf *line) {
  (void)I;
  fflush(stdout);
  /* an input() line starts empty: no continuation indentation */
  free(pending_indent);
  pending_indent = NULL;
  char *l = readline(prompt);
  if (!l) return -1;
  sr_buf_puts(line, l);
  free(l);
  return 0;
}

int sr_repl(SrInterp *I) {
  the_interp = I;
  int tty = isatty(0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);

  if (tty) {
    rl_readline_name = "shardrepl";
    rl_catch_signals = 0;
    rl_attempted_completion_function = complete;
    rl_startup_hook = insert_indent;
    rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{(,[+-*/%~^!";
    I->py->read_line = repl_read_line;
    printf("shardrepl %s -- JAX's sharded jaxprs.  :help for help, :quit or Ctrl-D to leave.\n",
           PACKAGE_VERSION);
    fflush(stdout);
    /* a BLAS slower than the CPU allows: said once, at the terminal */
    SrBuf adv = SR_BUF_INIT;
    if (sr_kern_blas_advice(&adv)) fprintf(stderr, "shardrepl: %s\n", adv.p);
    sr_buf_free(&adv);
    stifle_history(HISTORY_MAX);
    hist_path = history_path();
    if (hist_path) history_load();
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
      free(pending_indent);
      pending_indent = input.len ? sr_complete_indent(input.p, input.len) : NULL;
      char pbuf[64];
      line = readline(sr_color_prompt(input.len ? "... " : ">>> ", pbuf, sizeof pbuf));
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
        if (tty) history_add(input.p, input.len);
        SrSrc *src = sr_src_new("<stdin>", input.p, input.len, input_line);
        if (sr_mpi_driver_run(I, src, 1)) status = 1;
        sr_repl_report(I);
        sr_diags_clear(&I->py->diags);
        sr_src_unref(src);
      }
      break;
    }
    if (!input.len) input_line = line_no;
    /* a multi-line entry recalled from the history is several lines */
    for (const char *c = line; *c; c++) line_no += *c == '\n';
    line_no++;
    int blank = line[strspn(line, " \t")] == 0;
    if (input.len || !blank) {
      sr_buf_puts(&input, line);
      sr_buf_putc(&input, '\n');
    }
    free(line);
    if (!input.len) continue;
    if (!sr_repl_input_complete(I, input.p, input.len, blank)) continue;
    /* the whole input is one entry: Up recalls a def whole */
    if (tty) history_add(input.p, input.len);
    SrSrc *src = sr_src_new("<stdin>", input.p, input.len, input_line);
    sr_buf_reset(&input);
    if (!input_parses(I, src)) status = 1;
    else if (sr_mpi_driver_run(I, src, 1)) status = 1;
    fflush(stdout);
    sr_repl_report(I);
    sr_diags_clear(&I->py->diags);
    sr_src_unref(src);
    if (I->py->quit) break;
  }
  free(hist_path);
  hist_path = NULL;
  sr_buf_free(&input);
  cands_free();
  free(pending_indent);
  pending_indent = NULL;
  return status;
}

/* main.c: the shardrepl command. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/parse.h"
#include "text/print.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/mem.h"

enum {
  EXIT_OK = 0,
  EXIT_RUNTIME = 1,
  EXIT_USAGE = 2,
  EXIT_PARSE = 3,
};

static int exit_for(SrErrKind k) {
  switch (k) {
  case SR_E_PARSE:
  case SR_E_TYPE: return EXIT_PARSE;
  case SR_E_USAGE: return EXIT_USAGE;
  default: return EXIT_RUNTIME;
  }
}

/* Reads a whole file ("-" is stdin) into a new source. */
static SrSrc *read_source(const char *path, SrDiags *d) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    sr_error(d, SR_E_USAGE, NULL, 0, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  SrBuf b = SR_BUF_INIT;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sr_buf_putn(&b, chunk, n);
  int err = ferror(f);
  if (f != stdin) fclose(f);
  if (err) {
    sr_buf_free(&b);
    sr_error(d, SR_E_USAGE, NULL, 0, "cannot read '%s'", path);
    return NULL;
  }
  SrSrc *s = sr_src_new(strcmp(path, "-") == 0 ? "<stdin>" : path, sr_buf_str(&b), b.len, 1);
  sr_buf_free(&b);
  return s;
}

static void report(SrDiags *d) {
  SrBuf b = SR_BUF_INIT;
  sr_diags_render(d, &b);
  fputs(sr_buf_str(&b), stderr);
  sr_buf_free(&b);
}

/* --fmt: print the canonical form of every jaxpr in the file. */
static int run_fmt(const char *path) {
  SrDiags d = SR_DIAGS_INIT;
  SrSrc *src = read_source(path, &d);
  if (!src) {
    report(&d);
    sr_diags_clear(&d);
    return EXIT_USAGE;
  }
  SrBuf out = SR_BUF_INIT;
  size_t pos = sr_skip_blanks(src->text, src->len, 0);
  int rc = EXIT_OK, count = 0;
  while (pos < src->len) {
    size_t end;
    SrProgram *p = sr_parse_program(src, pos, &end, NULL, &d);
    if (!p) {
      report(&d);
      rc = exit_for(sr_diags_kind(&d));
      break;
    }
    if (count++) sr_buf_putc(&out, '\n');
    sr_print_jaxpr(&out, p->top);
    sr_buf_putc(&out, '\n');
    sr_program_unref(p);
    pos = sr_skip_blanks(src->text, src->len, end);
  }
  if (rc == EXIT_OK) fwrite(out.p ? out.p : "", 1, out.len, stdout);
  sr_buf_free(&out);
  sr_diags_clear(&d);
  sr_src_unref(src);
  return rc;
}

static void usage(FILE *f) {
  fputs("usage: shardrepl [options] [FILE...]\n"
        "  -e, --eval STATEMENT   run one statement (repeatable)\n"
        "  -k, --keep-going       continue after an error\n"
        "      --fmt FILE         print the canonical form of the jaxprs in FILE ('-': stdin)\n"
        "  -h, --help             show this help\n"
        "  -V, --version          show the version\n",
        f);
}

int main(int argc, char **argv) {
  static const struct option opts[] = {
    {"fmt", required_argument, 0, 'F'},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},
    {0, 0, 0, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
    switch (c) {
    case 'F': return run_fmt(optarg);
    case 'h': usage(stdout); return EXIT_OK;
    case 'V': puts(PACKAGE_STRING); return EXIT_OK;
    default: usage(stderr); return EXIT_USAGE;
    }
  }
  usage(stderr);
  return EXIT_USAGE;
}

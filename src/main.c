/* main.c: the shardrepl command. */
#include "config.h"
#include "lax/lax.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "exec/kern.h"
#include "exec/pool.h"
#include "cmd/linit.h"
#include "py/interp.h"
#include "core/jaxstate.h"
#include "mpi_driver.h"
#include "prims/prim.h"
#include "text/color.h"
#include "repl.h"
#include "kernel.h"
#include "notebook.h"
#include "text/parse.h"
#include "text/print.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/intern.h"
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

static const SrMesh *opt_mesh; /* --mesh */

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
    SrParseOpts po = {opt_mesh};
    SrProgram *p = sr_parse_program(src, pos, &end, &po, &d);
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

/* --mesh X:4,Y:2 -- the mesh --check and --fmt read texts against (all
   axes Explicit); NULL on a malformed spec (an axis named twice, or a
   size that is not a positive int32, as a mesh's device count is). */
static const SrMesh *parse_mesh_opt(const char *spec) {
  SrMesh m;
  memset(&m, 0, sizeof m);
  const char *s = spec;
  while (*s) {
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || m.n == SR_MAX_AXES) return NULL;
    char *end;
    errno = 0;
    long size = strtol(colon + 1, &end, 10);
    if (errno || size <= 0 || size > INT32_MAX || (*end && *end != ',')) return NULL;
    const char *name = sr_intern(s, (size_t)(colon - s));
    for (int i = 0; i < m.n; i++)
      if (m.names[i] == name) return NULL;
    m.names[m.n] = name;
    m.sizes[m.n++] = size;
    s = *end ? end + 1 : end;
  }
  if (!m.n) return NULL;
  m.abstract = 1;
  return sr_mesh_intern(&m);
}

/* --check: type-check every jaxpr in the file. */
static int run_check(const char *path, int devices) {
  SrDiags d = SR_DIAGS_INIT;
  SrSrc *src = read_source(path, &d);
  if (!src) {
    report(&d);
    sr_diags_clear(&d);
    return EXIT_USAGE;
  }
  (void)devices;
  size_t pos = sr_skip_blanks(src->text, src->len, 0);
  int rc = EXIT_OK, count = 0;
  while (pos < src->len) {
    size_t end;
    SrParseOpts po = {opt_mesh};
    SrProgram *p = sr_parse_program(src, pos, &end, &po, &d);
    if (!p) {
      rc = EXIT_PARSE;
      break;
    }
    SrCheckOpts opts = {opt_mesh, 1};
    if (sr_check_jaxpr(p->top, &opts, &d, NULL) > 0 || d.count) rc = EXIT_PARSE;
    count++;
    sr_program_unref(p);
    pos = sr_skip_blanks(src->text, src->len, end);
  }
  if (d.count) {
    report(&d);
  } else {
    printf("%s: ok (%d jaxpr%s)\n", path, count, count == 1 ? "" : "s");
  }
  sr_diags_clear(&d);
  sr_src_unref(src);
  return rc;
}

/* --prims: the rule matrix, as :prims prints it, once every stage has
   registered its rules (which making an interpreter does). */
static int run_prims(void) {
  SrInterp *I = sr_interp_new(&sr_linit);
  SrBuf b = SR_BUF_INIT;
  sr_prims_matrix(&b);
  fputs(b.p, stdout);
  sr_buf_free(&b);
  sr_interp_free(I);
  return EXIT_OK;
}

static void usage(FILE *f) {
  fputs("usage: shardrepl [options] [FILE...]\n"
        "Runs the statements of each FILE (a .jxr script, or a *.py Python script), or\n"
        "reads them from the terminal with line editing when no FILE or -e is given.\n"
        "  -e, --eval STATEMENT   run one statement (repeatable)\n"
        "  -k, --keep-going       continue after an error\n"
        "  -i, --interactive      read from the terminal after the FILEs and -e\n"
        "      --python           run every FILE and -e as a Python script, as a *.py FILE\n"
        "                         runs: only Python's built-in names, bare expressions silent\n"
        "      --jxr              run every FILE as a .jxr script, as other FILEs run: JAX's\n"
        "                         names predefined, bare expressions print their repr\n"
        "      --echo, --no-echo  whether the bare expressions of FILEs and -e print their repr\n"
        "      --devices N        simulate N devices in this process (default 8)\n"
        "      --ranks P          run as an MPI job of P ranks this process starts\n"
        "      --fmt FILE         print the canonical form of the jaxprs in FILE ('-': stdin)\n"
        "      --check FILE       type-check the jaxprs in FILE ('-': stdin)\n"
        "      --mesh X:4,Y:2     the mesh --check and --fmt read jaxprs against\n"
        "      --prims            list the primitives and which rules each has\n"
        "      --notebook FILE    run the code cells of a MyST notebook and write it with their outputs\n"
        "  -o, --output OUT       where --notebook writes (OUT.md or OUT.ipynb; default stdout)\n"
        "      --kernel -f CONNECTION_FILE   run as a Jupyter kernel\n"
        "      --install-kernel   install the Jupyter kernel spec (--user, --prefix DIR; --ranks P)\n"
        "      --color=WHEN       colour the terminal's output: auto (default), always or never\n"
        "  -h, --help             show this help\n"
        "  -V, --version          show the version and the BLAS kernel in use\n"
        "Exit status: 0 success, 1 runtime error, 2 usage error, 3 parse or type error.\n",
        f);
}

/* How the sources run: by their names (*.py as Python scripts), or as
   --python and --jxr say. */
enum { MODE_AUTO, MODE_PYTHON, MODE_JXR };

static int is_py(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".py") == 0;
}

/* A Python script's semantics (python: only Python's built-in names, and
   no echo) or a .jxr script's; echo (0 or 1) overrides the echo, -1 keeps
   the semantics' own. */
static void script_semantics(SrInterp *I, int python, int echo) {
  I->py->python = python;
  I->py->echo = echo >= 0 ? echo : !python;
}

/* The exit status of a run: that of the first error, if any. */
static int status_of(SrInterp *I, int status) {
  if (status == EXIT_OK && I->py->first_error) status = exit_for(I->py->first_error);
  return status;
}

int main(int argc, char **argv) {
  static const struct option opts[] = {
    {"eval", required_argument, 0, 'e'},
    {"keep-going", no_argument, 0, 'k'},
    {"interactive", no_argument, 0, 'i'},
    {"python", no_argument, 0, 'Y'},
    {"jxr", no_argument, 0, 'J'},
    {"echo", no_argument, 0, 'O'},
    {"no-echo", no_argument, 0, 'Q'},
    {"devices", required_argument, 0, 'D'},
    {"fmt", required_argument, 0, 'F'},
    {"check", required_argument, 0, 'C'},
    {"mesh", required_argument, 0, 'M'},
    {"prims", no_argument, 0, 'P'},
    {"notebook", required_argument, 0, 'N'},
    {"output", required_argument, 0, 'o'},
    {"kernel", no_argument, 0, 'K'},
    {"install-kernel", no_argument, 0, 'I'},
    {"user", no_argument, 0, 'U'},
    {"prefix", required_argument, 0, 'X'},
    {"color", required_argument, 0, 'L'},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},
    {0, 0, 0, 0},
  };
  sr_mpi_driver_begin(&argc, argv); /* MPI: --ranks, --worker, mpirun */
  sr_lax_init();
  const char **evals = calloc((size_t)argc + 1, sizeof *evals);
  int nevals = 0, keep_going = 0, interactive = 0, devices = 0, prims = 0;
  const char *fmt_path = NULL, *check_path = NULL;
  const char *notebook = NULL, *output = NULL, *conn_file = NULL, *prefix = NULL;
  int kernel = 0, install_kernel = 0, user = 0;
  int mode = MODE_AUTO, echo = -1;
  int c;
  while ((c = getopt_long(argc, argv, "e:kihVo:f:", opts, NULL)) != -1) {
    switch (c) {
    case 'e': evals[nevals++] = optarg; break;
    case 'k': keep_going = 1; break;
    case 'i': interactive = 1; break;
    case 'Y': mode = MODE_PYTHON; break;
    case 'J': mode = MODE_JXR; break;
    case 'O': echo = 1; break;
    case 'Q': echo = 0; break;
    case 'D': {
      char *end;
      long n = strtol(optarg, &end, 10);
      if (*end || n < 1 || n > 4096) {
        fprintf(stderr, "shardrepl: --devices needs a number from 1 to 4096, got '%s'\n", optarg);
        free(evals);
        return EXIT_USAGE;
      }
      devices = (int)n;
      break;
    }
    case 'F': fmt_path = optarg; break;
    case 'C': check_path = optarg; break;
    case 'P': prims = 1; break;
    case 'N': notebook = optarg; break;
    case 'o': output = optarg; break;
    case 'K': kernel = 1; break;
    case 'f': conn_file = optarg; break;
    case 'I': install_kernel = 1; break;
    case 'U': user = 1; break;
    case 'X': prefix = optarg; break;
    case 'M':
      opt_mesh = parse_mesh_opt(optarg);
      if (!opt_mesh) {
        fprintf(stderr, "shardrepl: --mesh wants NAME:SIZE[,NAME:SIZE...] (distinct names, sizes from 1 to 2147483647), got '%s'\n", optarg);
        free(evals);
        return EXIT_USAGE;
      }
      break;
    case 'L':
      if (sr_color_parse(optarg) < 0) {
        fprintf(stderr, "shardrepl: --color wants auto, always or never, got '%s'\n", optarg);
        free(evals);
        return EXIT_USAGE;
      }
      sr_color_set_mode((SrColorMode)sr_color_parse(optarg));
      break;
    case 'h': usage(stdout); free(evals); return EXIT_OK;
    case 'V': {
      SrBuf b = SR_BUF_INIT;
      sr_kern_blas_describe(&b);
      printf("%s\nBLAS: %s\nkernels: %s\n", PACKAGE_STRING, sr_kern_blas_config(), sr_buf_str(&b));
      sr_buf_reset(&b);
      sr_pool_describe(&b, 0);
      printf("threads: %s\n", sr_buf_str(&b));
      sr_buf_reset(&b);
      if (sr_kern_blas_advice(&b)) printf("%s\n", b.p);
      sr_buf_free(&b);
      free(evals);
      return EXIT_OK;
    }
    default: usage(stderr); free(evals); return EXIT_USAGE;
    }
  }
  if (fmt_path || check_path) {
    free(evals);
    return fmt_path ? run_fmt(fmt_path) : run_check(check_path, devices);
  }
  if (prims) {
    free(evals);
    return run_prims();
  }
  if (install_kernel) {
    free(evals);
    return sr_kernel_install(argv[0], user, prefix, sr_mpi_driver_ranks()) ? EXIT_USAGE : EXIT_OK;
  }
  if (kernel && !conn_file) {
    fprintf(stderr, "shardrepl: --kernel needs -f CONNECTION_FILE\n");
    free(evals);
    return EXIT_USAGE;
  }
#ifndef HAVE_KERNEL
  if (kernel) {
    fprintf(stderr, "shardrepl: --kernel was not built (configure found no libzmq, jansson or libcrypto)\n");
    free(evals);
    return EXIT_USAGE;
  }
#endif
  SrInterp *I = sr_interp_new(&sr_linit);
  I->py->keep_going = keep_going;
  I->py->on_error = sr_repl_report;
  if (devices) I->jax->num_devices = devices;
  int status = EXIT_OK;
  int ran = 0;
  /* MPI: the ranks other than 0 run what rank 0 sends, here */
  if (sr_mpi_driver_attach(I, devices, &status)) goto end;
  if (notebook) {
    int rc = sr_notebook_run(I, notebook, output);
    status = rc < 0 ? EXIT_USAGE : rc ? exit_for((SrErrKind)rc) : EXIT_OK;
    goto end;
  }
#ifdef HAVE_KERNEL
  if (kernel) {
    status = sr_kernel_run(I, conn_file) ? EXIT_RUNTIME : EXIT_OK;
    goto end;
  }
#endif
  for (int i = optind; i < argc && !I->py->quit; i++) {
    if (strcmp(argv[i], "-") == 0) {
      /* standard input, as `shardrepl < FILE` reads it: the REPL's
         semantics, without prompts when it is not a terminal */
      ran = 1;
      script_semantics(I, mode == MODE_PYTHON, echo < 0 ? 1 : echo);
      if (sr_repl(I) && status == EXIT_OK) status = EXIT_RUNTIME;
      status = status_of(I, status);
      if (status != EXIT_OK && !keep_going) break;
      continue;
    }
    SrDiags d = SR_DIAGS_INIT;
    SrSrc *src = read_source(argv[i], &d);
    ran = 1;
    if (!src) {
      report(&d);
      sr_diags_clear(&d);
      status = status == EXIT_OK ? EXIT_USAGE : status;
      if (!keep_going) break;
      continue;
    }
    script_semantics(I, mode == MODE_PYTHON || (mode == MODE_AUTO && is_py(argv[i])), echo);
    sr_mpi_driver_run(I, src, keep_going);
    sr_src_unref(src);
    fflush(stdout);
    status = status_of(I, status);
    sr_repl_report(I);
    sr_diags_clear(&I->py->diags);
    if (status != EXIT_OK && !keep_going) break;
  }
  for (int i = 0; i < nevals && !I->py->quit && (status == EXIT_OK || keep_going); i++) {
    SrSrc *src = sr_src_new("<-e>", evals[i], strlen(evals[i]), 1);
    ran = 1;
    script_semantics(I, mode == MODE_PYTHON, echo);
    sr_mpi_driver_run(I, src, keep_going);
    sr_src_unref(src);
    fflush(stdout);
    status = status_of(I, status);
    sr_repl_report(I);
    sr_diags_clear(&I->py->diags);
  }
  if ((!ran || interactive) && !I->py->quit) {
    /* the prompt is Python's REPL: its bare expressions echo */
    script_semantics(I, mode == MODE_PYTHON, echo < 0 ? 1 : echo);
    if (sr_repl(I) && status == EXIT_OK) status = EXIT_RUNTIME;
  }
end:
  status = sr_mpi_driver_end(I, status); /* MPI: every rank exits with rank 0's status */
  fflush(stdout);
  sr_interp_free(I);
  free(evals);
  return status;
}

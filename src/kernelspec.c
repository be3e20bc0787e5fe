/* kernelspec.c: --install-kernel (see kernel.h). */
#include "config.h"

#include "kernel.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"

/* mkdir -p */
static int make_dirs(const char *path) {
  char *p = strdup(path);
  if (!p) return -1;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    if (mkdir(p, 0755) < 0 && errno != EEXIST) {
      free(p);
      return -1;
    }
    *s = '/';
  }
  int rc = mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
  free(p);
  return rc;
}

/* The program's absolute path: argv0 resolved, or found on PATH. */
static char *program_path(const char *argv0) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = 0;
    return strdup(buf);
  }
  if (strchr(argv0, '/')) return realpath(argv0, NULL);
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *colon = strchr(path, ':');
    size_t len = colon ? (size_t)(colon - path) : strlen(path);
    snprintf(buf, sizeof buf, "%.*s/%s", (int)len, path, argv0);
    if (access(buf, X_OK) == 0) return realpath(buf, NULL);
    path = colon ? colon + 1 : NULL;
  }
  return NULL;
}

static void json_str(SrBuf *b, const char *s) {
  sr_buf_putc(b, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') sr_buf_putc(b, '\\');
    sr_buf_putc(b, *s);
  }
  sr_buf_putc(b, '"');
}

int sr_kernel_install(const char *argv0, int user, const char *prefix, int ranks) {
  SrBuf dir = SR_BUF_INIT;
  if (user && prefix) {
    fprintf(stderr, "shardrepl: --install-kernel takes --user or --prefix, not both\n");
    return 1;
  }
  if (user) {
    const char *data = getenv("JUPYTER_DATA_DIR");
    const char *home = getenv("HOME");
    if (data && *data) sr_buf_puts(&dir, data);
    else if (home && *home) sr_buf_printf(&dir, "%s/.local/share/jupyter", home);
    else {
      fprintf(stderr, "shardrepl: --install-kernel --user: HOME is not set\n");
      return 1;
    }
  } else {
    sr_buf_printf(&dir, "%s/share/jupyter", prefix ? prefix : "/usr/local");
  }
  sr_buf_puts(&dir, "/kernels/shardrepl");
  char *prog = program_path(argv0);
  if (!prog) {
    fprintf(stderr, "shardrepl: --install-kernel: cannot find this program's path\n");
    sr_buf_free(&dir);
    return 1;
  }
  SrBuf j = SR_BUF_INIT;
  sr_buf_puts(&j, "{\n  \"argv\": [");
  json_str(&j, prog);
  if (ranks) sr_buf_printf(&j, ", \"--ranks\", \"%d\"", ranks);
  sr_buf_puts(&j, ", \"--kernel\", \"-f\", \"{connection_file}\"],\n");
  sr_buf_printf(&j, "  \"display_name\": \"shardrepl%s\",\n", ranks ? " (MPI)" : "");
  sr_buf_puts(&j, "  \"language\": \"python\",\n  \"interrupt_mode\": \"signal\",\n"
                  "  \"metadata\": {\"debugger\": false}\n}\n");
  free(prog);
  SrBuf file = SR_BUF_INIT;
  sr_buf_printf(&file, "%s/kernel.json", sr_buf_str(&dir));
  int rc = 0;
  FILE *f = NULL;
  if (make_dirs(sr_buf_str(&dir)) < 0 || !(f = fopen(sr_buf_str(&file), "w"))) {
    fprintf(stderr, "shardrepl: cannot write %s: %s\n", sr_buf_str(&file), strerror(errno));
    rc = 1;
  } else {
    int bad = fwrite(j.p, 1, j.len, f) != j.len;
    if (fclose(f) != 0 || bad) {
      fprintf(stderr, "shardrepl: cannot write %s: %s\n", sr_buf_str(&file), strerror(errno));
      rc = 1;
    } else {
      printf("Installed kernelspec shardrepl in %s\n", sr_buf_str(&dir));
    }
  }
  sr_buf_free(&j);
  sr_buf_free(&file);
  sr_buf_free(&dir);
  return rc;
}

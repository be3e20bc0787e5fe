/* name_stack.c: JAX's name stacks (source_info_util.py); see name_stack.h. */
#include "config.h"

#include <string.h>

#include "ir/name_stack.h"
#include "util/intern.h"

const char *sr_ns_concat(const char *a, const char *b) {
  if (!a || !*a) return b && *b ? b : NULL;
  if (!b || !*b) return a;
  SrBuf buf = SR_BUF_INIT;
  sr_buf_printf(&buf, "%s/%s", a, b);
  const char *r = sr_intern(sr_buf_str(&buf), buf.len);
  sr_buf_free(&buf);
  return r;
}

const char *sr_ns_transform(const char *ns, const char *name) {
  SrBuf buf = SR_BUF_INIT;
  sr_buf_printf(&buf, "%c%s", SR_NS_TRANSFORM, name);
  const char *t = sr_intern(sr_buf_str(&buf), buf.len);
  sr_buf_free(&buf);
  return sr_ns_concat(ns, t);
}

/* The elements of the first n bytes of s, rendered from the innermost
   out as NameStack.__str__ does: a scope is pushed, a transform wraps
   the last pushed (the element after it) or pushes NAME(). */
static void render_n(SrBuf *out, const char *s, size_t n) {
  enum { MAXEL = 256 };
  const char *el[MAXEL];
  size_t len[MAXEL];
  int ne = 0;
  for (size_t i = 0; i < n && ne < MAXEL;) {
    size_t j = i;
    while (j < n && s[j] != '/') j++;
    if (j > i) {
      el[ne] = s + i;
      len[ne++] = j - i;
    }
    i = j + 1;
  }
  /* wrapped[k]: the text of the k-th scope counted from the innermost,
     built up as JAX's list */
  SrBuf parts[MAXEL];
  int np = 0;
  for (int k = ne - 1; k >= 0; k--) {
    if (el[k][0] == SR_NS_TRANSFORM) {
      const char *nm = el[k] + 1;
      int nl = (int)len[k] - 1;
      if (np) {
        SrBuf w = SR_BUF_INIT;
        sr_buf_printf(&w, "%.*s(%s)", nl, nm, sr_buf_str(&parts[np - 1]));
        sr_buf_free(&parts[np - 1]);
        parts[np - 1] = w;
      } else {
        parts[np] = (SrBuf)SR_BUF_INIT;
        sr_buf_printf(&parts[np++], "%.*s()", nl, nm);
      }
    } else {
      parts[np] = (SrBuf)SR_BUF_INIT;
      sr_buf_printf(&parts[np++], "%.*s", (int)len[k], el[k]);
    }
  }
  for (int k = np - 1; k >= 0; k--) {
    sr_buf_puts(out, sr_buf_str(&parts[k]));
    if (k) sr_buf_putc(out, '/');
    sr_buf_free(&parts[k]);
  }
}

void sr_ns_render(SrBuf *out, const char *ns) {
  if (ns) render_n(out, ns, strlen(ns));
}

void sr_ns_render_op(SrBuf *out, const char *path) {
  if (!path) return;
  const char *slash = strrchr(path, '/');
  if (!slash) {
    sr_buf_puts(out, path);
    return;
  }
  size_t before = out->len;
  render_n(out, path, (size_t)(slash - path));
  if (out->len > before) sr_buf_putc(out, '/');
  sr_buf_puts(out, slash + 1);
}

/* npy.c: numpy's .npy and .npz files.
 *
 * .npy: "\x93NUMPY", major, minor, the header's length (2 bytes for 1.0,
 * 4 for 2.0 and 3.0), the header (a Python dict literal ending in '\n',
 * padded so the data starts at a multiple of 64), the data.
 *
 * .npz: a zip archive.  Reading trusts nothing: every offset and size is
 * checked against the file before use, the central directory (not the
 * local headers) gives the sizes, zip64 records are followed, and each
 * member's CRC-32 is checked.
 */
#include "exec/npy.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "util/mem.h"
#include "util/pyfmt.h"

/* numpy's ARRAY_ALIGN and GROWTH_AXIS_MAX_DIGITS */
enum { NPY_ALIGN = 64, NPY_GROWTH_DIGITS = 21 };

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static int host_little(void) {
  uint16_t x = 1;
  unsigned char c;
  memcpy(&c, &x, 1);
  return c == 1;
}

/* ---- errors ---- */

/* An OSError as Python words it: "[Errno 2] No such file or directory:
   'x.npy'", under the exception class Python picks for the errno. */
static int os_error(SrDiags *d, const char *path, int err) {
  const char *exc = "OSError";
  if (err == ENOENT) exc = "FileNotFoundError";
  else if (err == EACCES || err == EPERM) exc = "PermissionError";
  else if (err == EISDIR) exc = "IsADirectoryError";
  else if (err == ENOTDIR) exc = "NotADirectoryError";
  SrBuf q = SR_BUF_INIT;
  sr_py_str_repr(&q, path, strlen(path));
  sr_error_exc(d, SR_E_RUNTIME, exc, NULL, 0, "[Errno %d] %s: %s", err,
               strerror(err), sr_buf_str(&q));
  sr_buf_free(&q);
  return -1;
}

/* ---- dtypes and descrs ---- */

/* The descr shardrepl writes for dt, in the host's byte order; NULL if the
   dtype has no faithful .npy form. */
static const char *descr_for(SrDtype dt, char *buf) {
  const char *code;
  switch (dt) {
  case SR_BOOL: return "|b1";
  case SR_I8: case SR_I2: case SR_I4: return "|i1";
  case SR_U8: case SR_U2: case SR_U4: return "|u1";
  case SR_I16: code = "i2"; break;
  case SR_I32: code = "i4"; break;
  case SR_I64: code = "i8"; break;
  case SR_U16: code = "u2"; break;
  case SR_U32: code = "u4"; break;
  case SR_U64: code = "u8"; break;
  case SR_F16: code = "f2"; break;
  case SR_F32: code = "f4"; break;
  case SR_F64: code = "f8"; break;
  case SR_C64: code = "c8"; break;
  case SR_C128: code = "c16"; break;
  case SR_BF16: code = "V2"; break;
  default: return NULL;
  }
  buf[0] = host_little() ? '<' : '>';
  strcpy(buf + 1, code);
  return buf;
}

/* Parses a simple descr ("<f4", "|b1", ">i8", "<V2"); *swap says its byte
   order is not the host's.  Returns -1 for anything else. */
static int parse_descr(const char *s, size_t n, SrDtype *dt, int *swap) {
  if (n < 3 || n > 4) return -1;
  char order = s[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return -1;
  char kind = s[1];
  int size = 0;
  for (size_t i = 2; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    size = size * 10 + (s[i] - '0');
  }
  static const struct { char kind; int size; SrDtype dt; } tab[] = {
    {'b', 1, SR_BOOL}, {'i', 1, SR_I8}, {'i', 2, SR_I16}, {'i', 4, SR_I32},
    {'i', 8, SR_I64}, {'u', 1, SR_U8}, {'u', 2, SR_U16}, {'u', 4, SR_U32},
    {'u', 8, SR_U64}, {'f', 2, SR_F16}, {'f', 4, SR_F32}, {'f', 8, SR_F64},
    {'c', 8, SR_C64}, {'c', 16, SR_C128}, {'V', 2, SR_BF16},
  };
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
    if (tab[i].kind == kind && tab[i].size == size) {
      *dt = tab[i].dt;
      int file_little = order == '<' || (order == '=' && host_little());
      *swap = size > 1 && order != '|' && file_little != host_little();
      return 0;
    }
  }
  return -1;
}

/* Element count and byte size of a shape, or -1 if they overflow. */
static int shape_bytes(int ndim, const int64_t *shape, size_t esize, size_t *nbytes) {
  uint64_t n = 1;
  int zero = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return -1;
    if (shape[i] == 0) zero = 1;
  }
  if (zero) {
    *nbytes = 0;
    return 0;
  }
  for (int i = 0; i < ndim; i++) {
    if ((uint64_t)shape[i] > (uint64_t)INT64_MAX / n) return -1;
    n *= (uint64_t)shape[i];
  }
  if (n > (uint64_t)SIZE_MAX / esize || n * esize > (uint64_t)INT64_MAX) return -1;
  *nbytes = (size_t)(n * esize);
  return 0;
}

/* ---- writing ---- */

/* The header np.save writes: magic, version, length, the dict padded to
   64 bytes.  Version 1.0 unless the header needs more than 65535 bytes. */
static int npy_header(SrBuf *out, SrDtype dt, int ndim, const int64_t *shape, SrDiags *d) {
  char db[8];
  const char *descr = descr_for(dt, db);
  if (!descr)
    return sr_error(d, SR_E_RUNTIME, NULL, 0,
                    "cannot save dtype %s to .npy (numpy has no such type)",
                    sr_dtype_name(dt));
  if (ndim < 0 || ndim > SR_MAX_RANK)
    return sr_error(d, SR_E_RUNTIME, NULL, 0, "cannot save an array of rank %d", ndim);
  SrBuf h = SR_BUF_INIT;
  sr_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < ndim; i++)
    sr_buf_printf(&h, i ? ", %lld" : "%lld", (long long)shape[i]);
  sr_buf_puts(&h, ndim == 1 ? ",), }" : "), }");
  /* room for the first axis to grow in place, as numpy leaves */
  if (ndim > 0) {
    char tmp[24];
    int w = snprintf(tmp, sizeof tmp, "%lld", (long long)shape[0]);
    if (w < NPY_GROWTH_DIGITS) sr_buf_fill(&h, ' ', (size_t)(NPY_GROWTH_DIGITS - w));
  }
  size_t hlen = h.len + 1; /* the final '\n' */
  int v2 = 0;
  size_t pad = NPY_ALIGN - (8 + 2 + hlen) % NPY_ALIGN;
  if (hlen + pad > 65535) {
    v2 = 1;
    pad = NPY_ALIGN - (8 + 4 + hlen) % NPY_ALIGN;
  }
  size_t total = hlen + pad;
  sr_buf_putn(out, (const char *)npy_magic, 6);
  sr_buf_putc(out, v2 ? 2 : 1);
  sr_buf_putc(out, 0);
  for (int i = 0; i < (v2 ? 4 : 2); i++) sr_buf_putc(out, (int)((total >> (8 * i)) & 0xff));
  sr_buf_putn(out, h.p, h.len);
  sr_buf_fill(out, ' ', pad);
  sr_buf_putc(out, '\n');
  sr_buf_free(&h);
  return 0;
}

int sr_npy_encode(SrBuf *out, SrDtype dt, int ndim, const int64_t *shape,
                  const void *data, SrDiags *d) {
  size_t nbytes;
  if (npy_header(out, dt, ndim, shape, d) < 0) return -1;
  if (shape_bytes(ndim, shape, sr_dtype_info(dt)->size, &nbytes) < 0)
    return sr_error(d, SR_E_RUNTIME, NULL, 0, "array too large to save");
  if (nbytes) sr_buf_putn(out, data, nbytes);
  return 0;
}

static int write_all(FILE *f, const void *p, size_t n) {
  return n == 0 || fwrite(p, 1, n, f) == n ? 0 : -1;
}

int sr_npy_write(const char *path, SrDtype dt, int ndim, const int64_t *shape,
                 const void *data, SrDiags *d) {
  SrBuf h = SR_BUF_INIT;
  size_t nbytes;
  if (npy_header(&h, dt, ndim, shape, d) < 0) return -1;
  if (shape_bytes(ndim, shape, sr_dtype_info(dt)->size, &nbytes) < 0) {
    sr_buf_free(&h);
    return sr_error(d, SR_E_RUNTIME, NULL, 0, "array too large to save");
  }
  FILE *f = fopen(path, "wb");
  if (!f) {
    sr_buf_free(&h);
    return os_error(d, path, errno);
  }
  int rc = write_all(f, h.p, h.len) | write_all(f, data, nbytes);
  int err = errno;
  if (fclose(f) != 0 && rc == 0) {
    rc = -1;
    err = errno;
  }
  sr_buf_free(&h);
  return rc < 0 ? os_error(d, path, err) : 0;
}

/* ---- reading: the header ---- */

typedef struct NpyHead {
  SrDtype dt;
  int swap, fortran, ndim;
  int64_t shape[SR_MAX_RANK];
  size_t data_off;  /* where the data starts */
  size_t nbytes;    /* how much data the header promises */
} NpyHead;

typedef struct Lex {
  const char *p, *end;
} Lex;

static void lex_ws(Lex *x) {
  while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r'))
    x->p++;
}

static int lex_char(Lex *x, char c) {
  lex_ws(x);
  if (x->p < x->end && *x->p == c) {
    x->p++;
    return 1;
  }
  return 0;
}

/* A quoted string without escapes. */
static int lex_string(Lex *x, const char **s, size_t *n) {
  lex_ws(x);
  if (x->p >= x->end || (*x->p != '\'' && *x->p != '"')) return -1;
  char q = *x->p++;
  const char *start = x->p;
  while (x->p < x->end && *x->p != q) {
    if (*x->p == '\\') return -1;
    x->p++;
  }
  if (x->p >= x->end) return -1;
  *s = start;
  *n = (size_t)(x->p - start);
  x->p++;
  return 0;
}

static int lex_word(Lex *x, const char *w) {
  lex_ws(x);
  size_t n = strlen(w);
  if ((size_t)(x->end - x->p) >= n && memcmp(x->p, w, n) == 0) {
    x->p += n;
    return 1;
  }
  return 0;
}

/* (), (3,), (2, 3): non-negative ints, a Python 2 'L' allowed. */
static int lex_shape(Lex *x, int *ndim, int64_t *shape) {
  if (!lex_char(x, '(')) return -1;
  *ndim = 0;
  for (;;) {
    if (lex_char(x, ')')) return 0;
    lex_ws(x);
    if (x->p >= x->end || *x->p < '0' || *x->p > '9') return -1;
    int64_t v = 0;
    while (x->p < x->end && *x->p >= '0' && *x->p <= '9') {
      if (v > (INT64_MAX - 9) / 10) return -1;
      v = v * 10 + (*x->p++ - '0');
    }
    if (x->p < x->end && (*x->p == 'L' || *x->p == 'l')) x->p++;
    if (*ndim == SR_MAX_RANK) return -1;
    shape[(*ndim)++] = v;
    if (lex_char(x, ',')) continue;
    if (lex_char(x, ')')) {
      /* a single element needs its comma: (3) is not a tuple */
      return *ndim == 1 ? -1 : 0;
    }
    return -1;
  }
}

static int bad_header(SrDiags *d, const char *name, const char *what, const char *h, size_t n) {
  SrBuf q = SR_BUF_INIT;
  if (n > 200) n = 200;
  sr_py_str_repr(&q, h, n);
  sr_error_exc(d, SR_E_RUNTIME, "ValueError", NULL, 0, "%s: %s: %s", name, what, sr_buf_str(&q));
  sr_buf_free(&q);
  return -1;
}

/* Parses the dict of a header (text, n bytes). */
static int parse_dict(const char *text, size_t n, const char *name, NpyHead *h, SrDiags *d) {
  Lex x = {text, text + n};
  int have_descr = 0, have_order = 0, have_shape = 0;
  if (!lex_char(&x, '{')) return bad_header(d, name, "Cannot parse header", text, n);
  for (;;) {
    if (lex_char(&x, '}')) break;
    const char *k;
    size_t kn;
    if (lex_string(&x, &k, &kn) < 0 || !lex_char(&x, ':'))
      return bad_header(d, name, "Cannot parse header", text, n);
    if (kn == 5 && memcmp(k, "descr", 5) == 0 && !have_descr) {
      const char *s;
      size_t sn;
      lex_ws(&x);
      if (x.p < x.end && *x.p == '[')
        return bad_header(d, name, "unsupported dtype (structured arrays are not supported)", text, n);
      if (lex_string(&x, &s, &sn) < 0)
        return bad_header(d, name, "descr is not a valid dtype descriptor", text, n);
      if (parse_descr(s, sn, &h->dt, &h->swap) < 0)
        return sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: unsupported dtype '%.*s'", name,
                        (int)(sn > 40 ? 40 : sn), s);
      have_descr = 1;
    } else if (kn == 13 && memcmp(k, "fortran_order", 13) == 0 && !have_order) {
      if (lex_word(&x, "True")) h->fortran = 1;
      else if (lex_word(&x, "False")) h->fortran = 0;
      else return bad_header(d, name, "fortran_order is not a valid bool", text, n);
      have_order = 1;
    } else if (kn == 5 && memcmp(k, "shape", 5) == 0 && !have_shape) {
      if (lex_shape(&x, &h->ndim, h->shape) < 0)
        return bad_header(d, name, "shape is not valid", text, n);
      have_shape = 1;
    } else {
      return bad_header(d, name, "Header does not contain the correct keys", text, n);
    }
    if (lex_char(&x, ',')) continue;
    if (lex_char(&x, '}')) break;
    return bad_header(d, name, "Cannot parse header", text, n);
  }
  if (!have_descr || !have_order || !have_shape)
    return bad_header(d, name, "Header does not contain the correct keys", text, n);
  lex_ws(&x);
  if (x.p != x.end) return bad_header(d, name, "Cannot parse header", text, n);
  if (shape_bytes(h->ndim, h->shape, sr_dtype_info(h->dt)->size, &h->nbytes) < 0)
    return sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: the shape's size overflows", name);
  return 0;
}

/* How long the preamble plus header is, from the first 12 bytes (or fewer
   when avail is short): 0 when more bytes are needed to tell. */
static int head_length(const unsigned char *p, size_t avail, const char *name,
                       size_t *total, SrDiags *d) {
  if (avail < 8 || memcmp(p, npy_magic, 6) != 0) {
    if (avail >= 6 && memcmp(p, npy_magic, 6) != 0)
      return sr_error(d, SR_E_RUNTIME, NULL, 0,
                      "%s: not a .npy file (the magic string is not correct; expected "
                      "b'\\x93NUMPY')", name);
    return sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: not a .npy file (too short)", name);
  }
  int major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    return sr_error(d, SR_E_RUNTIME, NULL, 0,
                    "%s: we only support format version (1,0), (2,0), and (3,0), not (%d, %d)",
                    name, major, minor);
  size_t lenbytes = major == 1 ? 2 : 4;
  if (avail < 8 + lenbytes)
    return sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: truncated header", name);
  uint64_t hl = 0;
  for (size_t i = 0; i < lenbytes; i++) hl |= (uint64_t)p[8 + i] << (8 * i);
  *total = 8 + lenbytes + (size_t)hl;
  return 0;
}

/* Parses the header in p[0..avail), which must hold it whole. */
static int parse_head(const unsigned char *p, size_t avail, const char *name,
                      NpyHead *h, SrDiags *d) {
  size_t total;
  memset(h, 0, sizeof *h);
  if (head_length(p, avail, name, &total, d) < 0) return -1;
  if (total > avail) return sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: truncated header", name);
  size_t start = p[6] == 1 ? 10 : 12;
  if (parse_dict((const char *)p + start, total - start, name, h, d) < 0) return -1;
  h->data_off = total;
  return 0;
}

/* ---- reading: the data ---- */

static void swap_elems(char *p, size_t nbytes, SrDtype dt) {
  size_t part = sr_dtype_info(dt)->size;
  if (dt == SR_C64 || dt == SR_C128) part /= 2;
  for (size_t off = 0; off + part <= nbytes; off += part)
    for (size_t i = 0; i < part / 2; i++) {
      char t = p[off + i];
      p[off + i] = p[off + part - 1 - i];
      p[off + part - 1 - i] = t;
    }
}

/* Column-major data to row-major, in a new buffer. */
static void *fortran_to_c(const char *src, const NpyHead *h) {
  size_t es = sr_dtype_info(h->dt)->size;
  char *dst = sr_xmalloc(h->nbytes ? h->nbytes : 1);
  if (h->nbytes == 0) return dst;
  int64_t idx[SR_MAX_RANK] = {0}, fstride[SR_MAX_RANK];
  int64_t s = 1;
  for (int i = 0; i < h->ndim; i++) {
    fstride[i] = s;
    s *= h->shape[i];
  }
  size_t count = h->nbytes / es;
  for (size_t k = 0; k < count; k++) {
    int64_t off = 0;
    for (int i = 0; i < h->ndim; i++) off += idx[i] * fstride[i];
    memcpy(dst + k * es, src + (size_t)off * es, es);
    for (int i = h->ndim - 1; i >= 0; i--) {
      if (++idx[i] < h->shape[i]) break;
      idx[i] = 0;
    }
  }
  return dst;
}

/* Puts raw file-order data in shardrepl's order; may replace *data. */
static void fix_data(const NpyHead *h, void **data) {
  if (h->swap) swap_elems(*data, h->nbytes, h->dt);
  if (h->fortran && h->ndim > 1) {
    void *c = fortran_to_c(*data, h);
    free(*data);
    *data = c;
  }
}

static void head_out(const NpyHead *h, SrDtype *dt, int *ndim, int64_t *shape) {
  *dt = h->dt;
  *ndim = h->ndim;
  for (int i = 0; i < h->ndim; i++) shape[i] = h->shape[i];
}

int sr_npy_decode(const void *buf, size_t len, const char *name, SrDtype *dt,
                  int *ndim, int64_t *shape, void **data, SrDiags *d) {
  NpyHead h;
  const unsigned char *p = buf;
  if (parse_head(p, len, name, &h, d) < 0) return -1;
  if (len - h.data_off < h.nbytes)
    return sr_error(d, SR_E_RUNTIME, NULL, 0,
                    "%s: truncated data: the header promises %zu bytes, the file holds %zu",
                    name, h.nbytes, len - h.data_off);
  void *out = sr_xmalloc(h.nbytes ? h.nbytes : 1);
  if (h.nbytes) memcpy(out, p + h.data_off, h.nbytes);
  fix_data(&h, &out);
  head_out(&h, dt, ndim, shape);
  *data = out;
  return 0;
}

/* Reads n bytes at the file's current position; -1 on error or short. */
static int read_exact(FILE *f, void *p, size_t n) {
  return n == 0 || fread(p, 1, n, f) == n ? 0 : -1;
}

/* Opens path for reading and gets its size. */
static FILE *open_read(const char *path, size_t *size, SrDiags *d) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    os_error(d, path, errno);
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    os_error(d, path, errno);
    fclose(f);
    return NULL;
  }
  if (S_ISDIR(st.st_mode)) {
    os_error(d, path, EISDIR);
    fclose(f);
    return NULL;
  }
  *size = (size_t)st.st_size;
  return f;
}

int sr_npy_read(const char *path, SrDtype *dt, int *ndim, int64_t *shape,
                void **data, SrDiags *d) {
  size_t fsize;
  FILE *f = open_read(path, &fsize, d);
  if (!f) return -1;
  unsigned char pre[12];
  size_t got = fread(pre, 1, sizeof pre, f);
  size_t total;
  NpyHead h;
  unsigned char *head = NULL;
  void *out = NULL;
  if (head_length(pre, got, path, &total, d) < 0) goto fail;
  if (total > fsize) {
    sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: truncated header", path);
    goto fail;
  }
  /* the header is small: the file's size bounds it */
  head = sr_xmalloc(total);
  if (fseek(f, 0, SEEK_SET) != 0 || read_exact(f, head, total) < 0) {
    sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: cannot read the header", path);
    goto fail;
  }
  if (parse_head(head, total, path, &h, d) < 0) goto fail;
  if (fsize - h.data_off < h.nbytes) {
    sr_error(d, SR_E_RUNTIME, NULL, 0,
             "%s: truncated data: the header promises %zu bytes, the file holds %zu",
             path, h.nbytes, fsize - h.data_off);
    goto fail;
  }
  out = sr_xmalloc(h.nbytes ? h.nbytes : 1);
  if (read_exact(f, out, h.nbytes) < 0) {
    if (ferror(f)) os_error(d, path, errno);
    else sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: truncated data", path);
    goto fail;
  }
  fclose(f);
  free(head);
  fix_data(&h, &out);
  head_out(&h, dt, ndim, shape);
  *data = out;
  return 0;
fail:
  fclose(f);
  free(head);
  free(out);
  return -1;
}

/* ---- zip ---- */

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static void wr16(SrBuf *b, uint32_t v) {
  sr_buf_putc(b, (int)(v & 0xff));
  sr_buf_putc(b, (int)((v >> 8) & 0xff));
}
static void wr32(SrBuf *b, uint32_t v) {
  wr16(b, v & 0xffff);
  wr16(b, v >> 16);
}
static void wr64(SrBuf *b, uint64_t v) {
  wr32(b, (uint32_t)v);
  wr32(b, (uint32_t)(v >> 32));
}

enum {
  ZIP_LOCAL = 0x04034b50, ZIP_CENTRAL = 0x02014b50, ZIP_END = 0x06054b50,
  ZIP64_END = 0x06064b50, ZIP64_LOCATOR = 0x07064b50,
};
#define ZIP_MAX32 UINT64_C(0xffffffff)

/* crc32 of any length (zlib takes uInt lengths). */
static uLong crc_of(uLong crc, const void *p, size_t n) {
  const unsigned char *b = p;
  while (n) {
    uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
    crc = crc32(crc, b, k);
    b += k;
    n -= k;
  }
  return crc;
}

/* Inflates a member's raw deflate data, which must come to exactly usize
   bytes.  The buffer grows with the data actually produced, so a corrupt
   size field cannot make a huge allocation.  Returns a malloc'ed buffer or
   NULL with a diagnostic. */
static unsigned char *inflate_member(const unsigned char *in, size_t csize, size_t usize,
                                     const char *path, const char *member, SrDiags *d) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
    sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: cannot start zlib", path);
    return NULL;
  }
  /* one spare byte shows a member longer than declared */
  size_t limit = usize + 1;
  size_t cap = limit < 65536 + 4 * csize ? limit : 65536 + 4 * csize;
  unsigned char *out = sr_xmalloc(cap);
  size_t in_off = 0, out_len = 0;
  int rc = Z_OK;
  const char *why = NULL;
  for (;;) {
    if (out_len == cap) {
      if (cap == limit) break;
      cap = cap > limit / 2 ? limit : 2 * cap;
      out = sr_xrealloc(out, cap);
    }
    if (zs.avail_in == 0 && in_off < csize) {
      size_t k = csize - in_off > (1u << 30) ? (1u << 30) : csize - in_off;
      zs.next_in = (Bytef *)(in + in_off);
      zs.avail_in = (uInt)k;
      in_off += k;
    }
    size_t room = cap - out_len > (1u << 30) ? (1u << 30) : cap - out_len;
    uInt in_before = zs.avail_in;
    zs.next_out = out + out_len;
    zs.avail_out = (uInt)room;
    rc = inflate(&zs, Z_NO_FLUSH);
    out_len += room - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
    if (zs.avail_out != 0 && zs.avail_in == 0 && in_off == csize) {
      why = "incomplete or truncated stream";
      rc = Z_BUF_ERROR;
      break;
    }
    if (zs.avail_out != 0 && zs.avail_in == in_before) {
      why = "no progress";
      rc = Z_DATA_ERROR;
      break;
    }
  }
  if (rc == Z_STREAM_END && out_len == usize) {
    inflateEnd(&zs);
    return out;
  }
  if (rc == Z_STREAM_END || (rc == Z_OK && out_len > usize))
    sr_error_exc(d, SR_E_RUNTIME, "BadZipFile", NULL, 0,
                 "%s: member '%s' does not inflate to the %zu bytes the zip directory says",
                 path, member, usize);
  else
    sr_error_exc(d, SR_E_RUNTIME, "zlib.error", NULL, 0,
                 "%s: member '%s': Error %d while decompressing data: %s", path, member, rc,
                 zs.msg ? zs.msg : why ? why : "corrupted data");
  inflateEnd(&zs);
  free(out);
  return NULL;
}

static int not_zip(SrDiags *d, const char *path, const char *why) {
  return sr_error_exc(d, SR_E_RUNTIME, "BadZipFile", NULL, 0, "%s: %s", path, why);
}

static int has_npy_suffix(const char *s, size_t n) {
  return n >= 4 && memcmp(s + n - 4, ".npy", 4) == 0;
}

void sr_npz_free(SrNpzEntry *e, int n) {
  if (!e) return;
  for (int i = 0; i < n; i++) {
    free(e[i].name);
    free(e[i].data);
  }
  free(e);
}

/* Reads the whole file: .npz members are read and checked in memory. */
static unsigned char *slurp(const char *path, size_t *len, SrDiags *d) {
  size_t fsize;
  FILE *f = open_read(path, &fsize, d);
  if (!f) return NULL;
  unsigned char *p = sr_xmalloc(fsize ? fsize : 1);
  if (read_exact(f, p, fsize) < 0) {
    if (ferror(f)) os_error(d, path, errno);
    else sr_error(d, SR_E_RUNTIME, NULL, 0, "%s: the file shrank while being read", path);
    fclose(f);
    free(p);
    return NULL;
  }
  fclose(f);
  *len = fsize;
  return p;
}

/* Finds the end of central directory record and from it (and its zip64
   form, when there is one) the directory's place and entry count. */
static int zip_directory(const unsigned char *z, size_t len, const char *path,
                         uint64_t *cd_off, uint64_t *cd_size, uint64_t *count, SrDiags *d) {
  if (len < 22) return not_zip(d, path, "File is not a zip file");
  size_t lo = len - 22 > 65535 ? len - 22 - 65535 : 0;
  size_t at = (size_t)-1;
  for (size_t i = len - 22 + 1; i-- > lo;) {
    if (rd32(z + i) == ZIP_END && i + 22 + rd16(z + i + 20) <= len) {
      at = i;
      break;
    }
  }
  if (at == (size_t)-1) return not_zip(d, path, "File is not a zip file");
  const unsigned char *e = z + at;
  *count = rd16(e + 10);
  *cd_size = rd32(e + 12);
  *cd_off = rd32(e + 16);
  if (at >= 20 && rd32(z + at - 20) == ZIP64_LOCATOR) {
    uint64_t off = rd64(z + at - 20 + 8);
    if (off > len || len - off < 56 || rd32(z + off) != ZIP64_END)
      return not_zip(d, path, "Corrupt zip64 end of central directory record");
    *count = rd64(z + off + 32);
    *cd_size = rd64(z + off + 40);
    *cd_off = rd64(z + off + 48);
  }
  if (*cd_off > len || *cd_size > len - *cd_off)
    return not_zip(d, path, "Bad offset for central directory");
  return 0;
}

int sr_npz_read(const char *path, SrNpzEntry **out, int *nout, SrDiags *d) {
  size_t len = 0;
  *out = NULL;
  *nout = 0;
  unsigned char *z = slurp(path, &len, d);
  if (!z) return -1;
  uint64_t cd_off = 0, cd_size = 0, count = 0;
  SrNpzEntry *ents = NULL;
  int n = 0, cap = 0;
  char *member = NULL;
  unsigned char *raw = NULL;
  if (zip_directory(z, len, path, &cd_off, &cd_size, &count, d) < 0) goto fail;
  size_t pos = (size_t)cd_off, cd_end = (size_t)(cd_off + cd_size);
  for (uint64_t k = 0; k < count; k++) {
    if (cd_end - pos < 46 || rd32(z + pos) != ZIP_CENTRAL) {
      not_zip(d, path, "Bad magic number for central directory");
      goto fail;
    }
    const unsigned char *c = z + pos;
    uint32_t flags = rd16(c + 8), method = rd16(c + 10), crc = rd32(c + 16);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24), loff = rd32(c + 42);
    size_t nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
    if (cd_end - pos - 46 < nlen + xlen + clen) {
      not_zip(d, path, "Truncated central directory entry");
      goto fail;
    }
    free(member);
    member = sr_xstrndup((const char *)c + 46, nlen);
    /* zip64 sizes and offset, each present only when its field is full */
    const unsigned char *x = c + 46 + nlen, *xend = x + xlen;
    while (xend - x >= 4) {
      uint32_t tag = rd16(x), tl = rd16(x + 2);
      if ((size_t)(xend - x - 4) < tl) break;
      if (tag == 1) {
        const unsigned char *q = x + 4, *qend = q + tl;
        if (usize == ZIP_MAX32 && qend - q >= 8) { usize = rd64(q); q += 8; }
        if (csize == ZIP_MAX32 && qend - q >= 8) { csize = rd64(q); q += 8; }
        if (loff == ZIP_MAX32 && qend - q >= 8) { loff = rd64(q); q += 8; }
      }
      x += 4 + tl;
    }
    pos += 46 + nlen + xlen + clen;
    if (!has_npy_suffix(member, nlen) || strlen(member) != nlen) continue;
    if (flags & 1) {
      sr_error_exc(d, SR_E_RUNTIME, "NotImplementedError", NULL, 0,
                   "%s: member '%s' is encrypted", path, member);
      goto fail;
    }
    if (loff > len || len - loff < 30 || rd32(z + loff) != ZIP_LOCAL) {
      not_zip(d, path, "Bad magic number for file header");
      goto fail;
    }
    uint64_t data_off = loff + 30 + rd16(z + loff + 26) + rd16(z + loff + 28);
    if (data_off > len || csize > len - data_off) {
      sr_error_exc(d, SR_E_RUNTIME, "BadZipFile", NULL, 0,
                   "%s: member '%s' is truncated", path, member);
      goto fail;
    }
    if (usize > (uint64_t)SIZE_MAX / 2) {
      sr_error_exc(d, SR_E_RUNTIME, "BadZipFile", NULL, 0,
                   "%s: member '%s' claims an impossible size", path, member);
      goto fail;
    }
    const unsigned char *payload = z + data_off;
    const unsigned char *bytes;
    if (method == 0) {
      if (usize != csize) {
        sr_error_exc(d, SR_E_RUNTIME, "BadZipFile", NULL, 0,
                     "%s: member '%s' is stored with two different sizes", path, member);
        goto fail;
      }
      bytes = payload;
    } else if (method == 8) {
      free(raw);
      raw = inflate_member(payload, (size_t)csize, (size_t)usize, path, member, d);
      if (!raw) goto fail;
      bytes = raw;
    } else {
      sr_error_exc(d, SR_E_RUNTIME, "NotImplementedError", NULL, 0,
                   "%s: member '%s': compression method %u is not supported", path, member,
                   method);
      goto fail;
    }
    if ((uint32_t)crc_of(crc32(0, Z_NULL, 0), bytes, (size_t)usize) != crc) {
      sr_error_exc(d, SR_E_RUNTIME, "BadZipFile", NULL, 0, "Bad CRC-32 for file '%s'", member);
      goto fail;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      ents = sr_xrealloc(ents, (size_t)cap * sizeof *ents);
    }
    SrNpzEntry *e = &ents[n];
    memset(e, 0, sizeof *e);
    SrBuf nm = SR_BUF_INIT;
    sr_buf_printf(&nm, "%s: %s", path, member);
    int rc = sr_npy_decode(bytes, (size_t)usize, nm.p, &e->dt, &e->ndim, e->shape, &e->data, d);
    sr_buf_free(&nm);
    if (rc < 0) goto fail;
    e->name = sr_xstrndup(member, nlen - 4);
    n++;
    free(raw);
    raw = NULL;
  }
  free(member);
  free(z);
  *out = ents;
  *nout = n;
  return 0;
fail:
  free(member);
  free(raw);
  free(z);
  sr_npz_free(ents, n);
  return -1;
}

/* ---- npz writing ---- */

typedef struct ZipMember {
  uint64_t offset, size;
  uint32_t crc;
  int utf8;
} ZipMember;

int sr_npz_write(const char *path, const SrNpzEntry *e, int n, SrDiags *d) {
  /* headers first, so that nothing is written for an unsavable dtype */
  SrBuf *heads = sr_xcalloc(n ? (size_t)n : 1, sizeof *heads);
  ZipMember *zm = sr_xcalloc(n ? (size_t)n : 1, sizeof *zm);
  size_t *nbytes = sr_xcalloc(n ? (size_t)n : 1, sizeof *nbytes);
  SrBuf rec = SR_BUF_INIT, cd = SR_BUF_INIT;
  FILE *f = NULL;
  int rc = -1, err = 0;
  for (int i = 0; i < n; i++) {
    if (npy_header(&heads[i], e[i].dt, e[i].ndim, e[i].shape, d) < 0) goto done;
    if (shape_bytes(e[i].ndim, e[i].shape, sr_dtype_info(e[i].dt)->size, &nbytes[i]) < 0) {
      sr_error(d, SR_E_RUNTIME, NULL, 0, "array '%s' too large to save", e[i].name);
      goto done;
    }
    if (strlen(e[i].name) + 4 > 65535) {
      sr_error(d, SR_E_RUNTIME, NULL, 0, "array name too long for a zip");
      goto done;
    }
  }
  f = fopen(path, "wb");
  if (!f) {
    err = errno;
    goto done;
  }
  uint64_t off = 0;
  for (int i = 0; i < n; i++) {
    size_t nl = strlen(e[i].name) + 4;
    uLong crc = crc_of(crc32(0, Z_NULL, 0), heads[i].p, heads[i].len);
    crc = crc_of(crc, e[i].data, nbytes[i]);
    zm[i].crc = (uint32_t)crc;
    zm[i].size = heads[i].len + nbytes[i];
    zm[i].offset = off;
    for (const char *s = e[i].name; *s; s++)
      if ((unsigned char)*s >= 0x80) zm[i].utf8 = 1;
    /* the local header always carries zip64 sizes, as np.savez's does */
    sr_buf_reset(&rec);
    wr32(&rec, ZIP_LOCAL);
    wr16(&rec, 45);
    wr16(&rec, zm[i].utf8 ? 0x800 : 0);
    wr16(&rec, 0);              /* stored */
    wr16(&rec, 0);              /* 00:00:00 */
    wr16(&rec, (0 << 9) | (1 << 5) | 1); /* 1980-01-01 */
    wr32(&rec, zm[i].crc);
    wr32(&rec, 0xffffffffu);
    wr32(&rec, 0xffffffffu);
    wr16(&rec, (uint32_t)nl);
    wr16(&rec, 20);
    sr_buf_puts(&rec, e[i].name);
    sr_buf_puts(&rec, ".npy");
    wr16(&rec, 1);
    wr16(&rec, 16);
    wr64(&rec, zm[i].size);
    wr64(&rec, zm[i].size);
    if (write_all(f, rec.p, rec.len) < 0 || write_all(f, heads[i].p, heads[i].len) < 0 ||
        write_all(f, e[i].data, nbytes[i]) < 0) {
      err = errno;
      goto done;
    }
    off += rec.len + zm[i].size;
  }
  uint64_t cd_off = off;
  for (int i = 0; i < n; i++) {
    size_t nl = strlen(e[i].name) + 4;
    int big_size = zm[i].size >= ZIP_MAX32, big_off = zm[i].offset >= ZIP_MAX32;
    int xl = (big_size ? 16 : 0) + (big_off ? 8 : 0);
    wr32(&cd, ZIP_CENTRAL);
    wr16(&cd, (3 << 8) | 45);   /* made by unix, zip 4.5 */
    wr16(&cd, 45);
    wr16(&cd, zm[i].utf8 ? 0x800 : 0);
    wr16(&cd, 0);
    wr16(&cd, 0);
    wr16(&cd, (0 << 9) | (1 << 5) | 1);
    wr32(&cd, zm[i].crc);
    wr32(&cd, big_size ? 0xffffffffu : (uint32_t)zm[i].size);
    wr32(&cd, big_size ? 0xffffffffu : (uint32_t)zm[i].size);
    wr16(&cd, (uint32_t)nl);
    wr16(&cd, xl ? (uint32_t)xl + 4 : 0);
    wr16(&cd, 0);               /* comment */
    wr16(&cd, 0);               /* disk */
    wr16(&cd, 0);               /* internal attributes */
    wr32(&cd, 0600u << 16);     /* -rw------- */
    wr32(&cd, big_off ? 0xffffffffu : (uint32_t)zm[i].offset);
    sr_buf_puts(&cd, e[i].name);
    sr_buf_puts(&cd, ".npy");
    if (xl) {
      wr16(&cd, 1);
      wr16(&cd, (uint32_t)xl);
      if (big_size) {
        wr64(&cd, zm[i].size);
        wr64(&cd, zm[i].size);
      }
      if (big_off) wr64(&cd, zm[i].offset);
    }
  }
  uint64_t cd_size = cd.len;
  if (n >= 0xffff || cd_off >= ZIP_MAX32 || cd_size >= ZIP_MAX32) {
    uint64_t z64 = cd_off + cd_size;
    wr32(&cd, ZIP64_END);
    wr64(&cd, 44);
    wr16(&cd, 45);
    wr16(&cd, 45);
    wr32(&cd, 0);
    wr32(&cd, 0);
    wr64(&cd, (uint64_t)n);
    wr64(&cd, (uint64_t)n);
    wr64(&cd, cd_size);
    wr64(&cd, cd_off);
    wr32(&cd, ZIP64_LOCATOR);
    wr32(&cd, 0);
    wr64(&cd, z64);
    wr32(&cd, 1);
  }
  int big = n >= 0xffff || cd_off >= ZIP_MAX32 || cd_size >= ZIP_MAX32;
  wr32(&cd, ZIP_END);
  wr16(&cd, 0);
  wr16(&cd, 0);
  wr16(&cd, big ? 0xffff : (uint32_t)n);
  wr16(&cd, big ? 0xffff : (uint32_t)n);
  wr32(&cd, big ? 0xffffffffu : (uint32_t)cd_size);
  wr32(&cd, big ? 0xffffffffu : (uint32_t)cd_off);
  wr16(&cd, 0);
  if (write_all(f, cd.p, cd.len) < 0) {
    err = errno;
    goto done;
  }
  rc = 0;
done:
  if (f && fclose(f) != 0 && rc == 0) {
    rc = -1;
    err = errno;
  }
  if (rc < 0 && err) os_error(d, path, err);
  for (int i = 0; i < n; i++) sr_buf_free(&heads[i]);
  free(heads);
  free(zm);
  free(nbytes);
  sr_buf_free(&rec);
  sr_buf_free(&cd);
  return rc;
}

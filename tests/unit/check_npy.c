/* check_npy.c: unit tests of lib/exec/npy.
 *
 * Round trips through shardrepl's own writer and reader, the exact bytes
 * np.save writes, hand-made headers (big-endian, Fortran order, version
 * 2.0), an np.savez_compressed file made by numpy, and every truncation and
 * thousands of random mutations of valid files, which must give an error or
 * a result but never a crash.
 *
 * With NPY_XCHECK naming a folder written by tests/npy_numpy.py, one more
 * test reads every file numpy wrote there and writes its own copies for
 * numpy to check (tests/npy_numpy.sh runs both sides).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/npy.h"
#include "util/buf.h"
#include "util/diag.h"

/* np.savez_compressed(f, a=np.arange(6, dtype=np.float32).reshape(2, 3),
   flags=np.array([True, False, True])), from numpy 1.24. */
static const unsigned char compressed_npz[] = {
  0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
  0x21, 0x00, 0x4f, 0xe9, 0x00, 0x2a, 0x55, 0x00, 0x00, 0x00, 0x98, 0x00,
  0x00, 0x00, 0x05, 0x00, 0x14, 0x00, 0x61, 0x2e, 0x6e, 0x70, 0x79, 0x01,
  0x00, 0x10, 0x00, 0x98, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x55,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x9b, 0xec, 0x17, 0xea, 0x1b,
  0x10, 0xc9, 0xc8, 0x50, 0xc6, 0x50, 0xad, 0x9e, 0x92, 0x5a, 0x9c, 0x5c,
  0xa4, 0x6e, 0xa5, 0xa0, 0x6e, 0x93, 0x66, 0xa2, 0xae, 0xa3, 0xa0, 0x9e,
  0x96, 0x5f, 0x54, 0x52, 0x94, 0x98, 0x17, 0x9f, 0x5f, 0x94, 0x92, 0x0a,
  0x12, 0x77, 0x4b, 0xcc, 0x29, 0x4e, 0x05, 0x8a, 0x17, 0x67, 0x24, 0x16,
  0xa4, 0x02, 0xf9, 0x1a, 0x46, 0x3a, 0x0a, 0xc6, 0x9a, 0x3a, 0x0a, 0xb5,
  0x0a, 0x64, 0x03, 0x2e, 0x06, 0x30, 0x68, 0xb0, 0x07, 0x12, 0x0e, 0x40,
  0x04, 0xc4, 0x0d, 0x40, 0xbc, 0xc0, 0x01, 0x00, 0x50, 0x4b, 0x03, 0x04,
  0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21, 0x00, 0x16, 0x93,
  0x8c, 0xbb, 0x47, 0x00, 0x00, 0x00, 0x83, 0x00, 0x00, 0x00, 0x09, 0x00,
  0x14, 0x00, 0x66, 0x6c, 0x61, 0x67, 0x73, 0x2e, 0x6e, 0x70, 0x79, 0x01,
  0x00, 0x10, 0x00, 0x83, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x47,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x9b, 0xec, 0x17, 0xea, 0x1b,
  0x10, 0xc9, 0xc8, 0x50, 0xc6, 0x50, 0xad, 0x9e, 0x92, 0x5a, 0x9c, 0x5c,
  0xa4, 0x6e, 0xa5, 0xa0, 0x5e, 0x93, 0x64, 0xa8, 0xae, 0xa3, 0xa0, 0x9e,
  0x96, 0x5f, 0x54, 0x52, 0x94, 0x98, 0x17, 0x9f, 0x5f, 0x94, 0x92, 0x0a,
  0x12, 0x77, 0x4b, 0xcc, 0x29, 0x4e, 0x05, 0x8a, 0x17, 0x67, 0x24, 0x16,
  0xa4, 0x02, 0xf9, 0x1a, 0xc6, 0x3a, 0x9a, 0x3a, 0x0a, 0xb5, 0x0a, 0x14,
  0x00, 0x2e, 0x46, 0x06, 0x46, 0x00, 0x50, 0x4b, 0x01, 0x02, 0x14, 0x03,
  0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21, 0x00, 0x4f, 0xe9,
  0x00, 0x2a, 0x55, 0x00, 0x00, 0x00, 0x98, 0x00, 0x00, 0x00, 0x05, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01,
  0x00, 0x00, 0x00, 0x00, 0x61, 0x2e, 0x6e, 0x70, 0x79, 0x50, 0x4b, 0x01,
  0x02, 0x14, 0x03, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21,
  0x00, 0x16, 0x93, 0x8c, 0xbb, 0x47, 0x00, 0x00, 0x00, 0x83, 0x00, 0x00,
  0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x80, 0x01, 0x8c, 0x00, 0x00, 0x00, 0x66, 0x6c, 0x61, 0x67, 0x73,
  0x2e, 0x6e, 0x70, 0x79, 0x50, 0x4b, 0x05, 0x06, 0x00, 0x00, 0x00, 0x00,
  0x02, 0x00, 0x02, 0x00, 0x6a, 0x00, 0x00, 0x00, 0x0e, 0x01, 0x00, 0x00,
  0x00, 0x00,
};

static char tmpdir[256];

static const char *tmp_path(const char *name) {
  static char buf[4][512];
  static int k;
  char *p = buf[k++ % 4];
  snprintf(p, 512, "%s/%s", tmpdir, name);
  return p;
}

static void write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fwrite(p, 1, n, f), n);
  fclose(f);
}

static unsigned char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *p = malloc((size_t)len + 1);
  ck_assert_int_eq(fread(p, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  *n = (size_t)len;
  return p;
}

/* The first diagnostic as the REPL shows it. */
static const char *first_error(SrDiags *d) {
  static char out[1024];
  SrBuf b = SR_BUF_INIT;
  ck_assert_ptr_nonnull(d->first);
  sr_diag_render_one(d->first, &b);
  snprintf(out, sizeof out, "%s", sr_buf_str(&b));
  sr_buf_free(&b);
  return out;
}

static size_t nbytes_of(SrDtype dt, int ndim, const int64_t *shape) {
  size_t n = sr_dtype_info(dt)->size;
  for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
  return n;
}

START_TEST(test_roundtrip) {
  static const SrDtype dts[] = {SR_BOOL, SR_I8, SR_I16, SR_I32, SR_I64, SR_U8, SR_U16,
                                SR_U32, SR_U64, SR_F16, SR_BF16, SR_F32, SR_F64,
                                SR_C64, SR_C128, SR_I4, SR_U4, SR_I2, SR_U2};
  static const int64_t shapes[][4] = {{0}, {5}, {2, 3}, {3, 1, 2}, {2, 2, 2, 2}, {0}, {2, 0}};
  static const int ranks[] = {0, 1, 2, 3, 4, 1, 2};
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    for (size_t j = 0; j < sizeof ranks / sizeof ranks[0]; j++) {
      SrDtype dt = dts[i];
      size_t n = nbytes_of(dt, ranks[j], shapes[j]);
      unsigned char *buf = malloc(n + 1);
      for (size_t k = 0; k < n; k++) buf[k] = (unsigned char)(k * 37 + i);
      if (dt == SR_BOOL)
        for (size_t k = 0; k < n; k++) buf[k] &= 1;
      SrDiags d = SR_DIAGS_INIT;
      const char *path = tmp_path("rt.npy");
      ck_assert_int_eq(sr_npy_write(path, dt, ranks[j], shapes[j], buf, &d), 0);
      SrDtype dt2;
      int nd2;
      int64_t sh2[SR_MAX_RANK];
      void *data2;
      ck_assert_int_eq(sr_npy_read(path, &dt2, &nd2, sh2, &data2, &d), 0);
      SrDtype want = dt == SR_I4 || dt == SR_I2 ? SR_I8 : dt == SR_U4 || dt == SR_U2 ? SR_U8 : dt;
      ck_assert_int_eq(dt2, want);
      ck_assert_int_eq(nd2, ranks[j]);
      for (int k = 0; k < nd2; k++) ck_assert_int_eq(sh2[k], shapes[j][k]);
      ck_assert_ptr_nonnull(data2);
      ck_assert(memcmp(data2, buf, n) == 0);
      /* the file's size is a multiple of 64 plus the data */
      size_t flen;
      unsigned char *file = read_file(path, &flen);
      ck_assert_int_eq((flen - n) % 64, 0);
      free(file);
      free(data2);
      free(buf);
      ck_assert_int_eq(d.count, 0);
    }
  }
}
END_TEST

/* The bytes np.save writes for np.arange(6, dtype='<f4').reshape(2, 3). */
START_TEST(test_header_bytes) {
  float v[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {2, 3};
  SrBuf b = SR_BUF_INIT;
  SrDiags d = SR_DIAGS_INIT;
  ck_assert_int_eq(sr_npy_encode(&b, SR_F32, 2, shape, v, &d), 0);
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ck_assert_int_eq(b.len, 128 + 24);
  ck_assert(memcmp(b.p, "\x93NUMPY\x01\x00\x76\x00", 10) == 0);
  ck_assert(memcmp(b.p + 10, dict, strlen(dict)) == 0);
  for (size_t i = 10 + strlen(dict); i < 127; i++) ck_assert_int_eq(b.p[i], ' ');
  ck_assert_int_eq(b.p[127], '\n');
  ck_assert(memcmp(b.p + 128, v, 24) == 0);
  /* rank 0 and rank 1 tuples */
  sr_buf_reset(&b);
  ck_assert_int_eq(sr_npy_encode(&b, SR_BOOL, 0, NULL, "\1", &d), 0);
  ck_assert(strstr(b.p + 10, "'shape': (), }") != NULL);
  sr_buf_reset(&b);
  int64_t s1[1] = {1};
  ck_assert_int_eq(sr_npy_encode(&b, SR_C128, 1, s1, "0123456789abcdef", &d), 0);
  ck_assert(strstr(b.p + 10, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }") != NULL);
  sr_buf_free(&b);
}
END_TEST

/* Builds a .npy from a dict and raw data. */
static void make_npy(SrBuf *b, int major, const char *dict, const void *data, size_t n) {
  size_t lenbytes = major == 1 ? 2 : 4;
  size_t hl = strlen(dict) + 1;
  size_t pad = 64 - (8 + lenbytes + hl) % 64;
  sr_buf_putn(b, "\x93NUMPY", 6);
  sr_buf_putc(b, major);
  sr_buf_putc(b, 0);
  for (size_t i = 0; i < lenbytes; i++) sr_buf_putc(b, (int)(((hl + pad) >> (8 * i)) & 0xff));
  sr_buf_puts(b, dict);
  sr_buf_fill(b, ' ', pad);
  sr_buf_putc(b, '\n');
  sr_buf_putn(b, data, n);
}

START_TEST(test_foreign_layouts) {
  SrBuf b = SR_BUF_INIT;
  SrDiags d = SR_DIAGS_INIT;
  SrDtype dt;
  int nd;
  int64_t sh[SR_MAX_RANK];
  void *data;
  /* Fortran order: the file holds column-major [[0 1 2] [3 4 5]] */
  int16_t fort[6] = {0, 3, 1, 4, 2, 5};
  make_npy(&b, 1, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", fort, 12);
  ck_assert_int_eq(sr_npy_decode(b.p, b.len, "f.npy", &dt, &nd, sh, &data, &d), 0);
  ck_assert_int_eq(dt, SR_I16);
  for (int i = 0; i < 6; i++) ck_assert_int_eq(((int16_t *)data)[i], i);
  free(data);
  /* big-endian floats and complex, a version 2.0 header, double quotes,
     no trailing comma, a Python 2 long */
  sr_buf_reset(&b);
  unsigned char be[8] = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}; /* 1.0, -2.0 */
  make_npy(&b, 2, "{\"shape\": (1L,), \"descr\": \">c8\", \"fortran_order\": False}", be, 8);
  ck_assert_int_eq(sr_npy_decode(b.p, b.len, "b.npy", &dt, &nd, sh, &data, &d), 0);
  ck_assert_int_eq(dt, SR_C64);
  ck_assert(((float *)data)[0] == 1.0f && ((float *)data)[1] == -2.0f);
  free(data);
  /* ml_dtypes' bfloat16 */
  sr_buf_reset(&b);
  uint16_t bf[2] = {0x3f80, 0xc000};
  make_npy(&b, 1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", bf, 4);
  ck_assert_int_eq(sr_npy_decode(b.p, b.len, "bf.npy", &dt, &nd, sh, &data, &d), 0);
  ck_assert_int_eq(dt, SR_BF16);
  ck_assert(memcmp(data, bf, 4) == 0);
  free(data);
  /* a 3-d Fortran array */
  sr_buf_reset(&b);
  uint8_t f3[24], want[24];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) {
        want[(i * 3 + j) * 4 + k] = (uint8_t)(100 * i + 10 * j + k);
        f3[i + 2 * (j + 3 * k)] = (uint8_t)(100 * i + 10 * j + k);
      }
  make_npy(&b, 1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3, 4), }", f3, 24);
  ck_assert_int_eq(sr_npy_decode(b.p, b.len, "f3.npy", &dt, &nd, sh, &data, &d), 0);
  ck_assert(memcmp(data, want, 24) == 0);
  free(data);
  ck_assert_int_eq(d.count, 0);
  sr_buf_free(&b);
}
END_TEST

START_TEST(test_errors) {
  SrDiags d = SR_DIAGS_INIT;
  SrDtype dt;
  int nd;
  int64_t sh[SR_MAX_RANK];
  void *data;
  ck_assert_int_eq(sr_npy_read("/nonexistent-dir/x.npy", &dt, &nd, sh, &data, &d), -1);
  ck_assert_str_eq(first_error(&d),
                   "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent-dir/x.npy'");
  sr_diags_clear(&d);
  SrNpzEntry *e;
  int n;
  ck_assert_int_eq(sr_npz_read("/nonexistent-dir/x.npz", &e, &n, &d), -1);
  ck_assert(strstr(first_error(&d), "No such file or directory") != NULL);
  sr_diags_clear(&d);

  const char *path = tmp_path("bad.npy");
  write_file(path, "PK\3\4 this is not numpy", 23);
  ck_assert_int_eq(sr_npy_read(path, &dt, &nd, sh, &data, &d), -1);
  ck_assert(strstr(first_error(&d), "the magic string is not correct") != NULL);
  sr_diags_clear(&d);

  SrBuf b = SR_BUF_INIT;
  make_npy(&b, 1, "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", "abcdefghijklmnopqrstuvwx", 24);
  write_file(path, b.p, b.len);
  ck_assert_int_eq(sr_npy_read(path, &dt, &nd, sh, &data, &d), -1);
  ck_assert(strstr(first_error(&d), "unsupported dtype '<U3'") != NULL);
  sr_diags_clear(&d);

  sr_buf_reset(&b);
  make_npy(&b, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", "x", 1);
  write_file(path, b.p, b.len);
  ck_assert_int_eq(sr_npy_read(path, &dt, &nd, sh, &data, &d), -1);
  ck_assert(strstr(first_error(&d), "truncated data") != NULL);
  sr_diags_clear(&d);

  float v[4] = {1, 2, 3, 4};
  int64_t s4[1] = {4};
  ck_assert_int_eq(sr_npy_write(path, SR_F32, 1, s4, v, &d), 0);
  size_t len;
  unsigned char *file = read_file(path, &len);
  write_file(path, file, len - 1);
  ck_assert_int_eq(sr_npy_read(path, &dt, &nd, sh, &data, &d), -1);
  ck_assert(strstr(first_error(&d), "truncated data: the header promises 16 bytes, the file holds 15") != NULL);
  sr_diags_clear(&d);
  free(file);

  ck_assert_int_eq(sr_npy_write(path, SR_F8_E4M3FN, 1, s4, v, &d), -1);
  ck_assert(strstr(first_error(&d), "cannot save dtype float8_e4m3fn") != NULL);
  sr_diags_clear(&d);
  ck_assert_int_eq(sr_npy_write("/nonexistent-dir/y.npy", SR_F32, 1, s4, v, &d), -1);
  ck_assert(strstr(first_error(&d), "FileNotFoundError: [Errno 2]") != NULL);
  sr_diags_clear(&d);

  /* a .npz whose stored member has a flipped bit: numpy's CRC words */
  SrNpzEntry in[1] = {{(char *)"a", SR_F32, 1, {4}, v}};
  const char *zpath = tmp_path("crc.npz");
  ck_assert_int_eq(sr_npz_write(zpath, in, 1, &d), 0);
  file = read_file(zpath, &len);
  /* the last data byte sits just before the central directory (46 + 5
     bytes) and the end record (22 bytes) */
  file[len - 22 - 51 - 1] ^= 0x10;
  write_file(zpath, file, len);
  ck_assert_int_eq(sr_npz_read(zpath, &e, &n, &d), -1);
  ck_assert_str_eq(first_error(&d), "BadZipFile: Bad CRC-32 for file 'a.npy'");
  sr_diags_clear(&d);
  write_file(zpath, "not a zip at all, no sir", 24);
  ck_assert_int_eq(sr_npz_read(zpath, &e, &n, &d), -1);
  ck_assert(strstr(first_error(&d), "BadZipFile: ") != NULL);
  ck_assert(strstr(first_error(&d), "File is not a zip file") != NULL);
  sr_diags_clear(&d);
  free(file);
  sr_buf_free(&b);
}
END_TEST

START_TEST(test_npz) {
  SrDiags d = SR_DIAGS_INIT;
  SrNpzEntry *e;
  int n;
  const char *path = tmp_path("c.npz");
  write_file(path, compressed_npz, sizeof compressed_npz);
  ck_assert_int_eq(sr_npz_read(path, &e, &n, &d), 0);
  ck_assert_int_eq(n, 2);
  ck_assert_str_eq(e[0].name, "a");
  ck_assert_int_eq(e[0].dt, SR_F32);
  ck_assert_int_eq(e[0].ndim, 2);
  ck_assert_int_eq(e[0].shape[0], 2);
  ck_assert_int_eq(e[0].shape[1], 3);
  for (int i = 0; i < 6; i++) ck_assert(((float *)e[0].data)[i] == (float)i);
  ck_assert_str_eq(e[1].name, "flags");
  ck_assert_int_eq(e[1].dt, SR_BOOL);
  ck_assert(memcmp(e[1].data, "\1\0\1", 3) == 0);

  /* written back stored, read back the same */
  const char *p2 = tmp_path("s.npz");
  ck_assert_int_eq(sr_npz_write(p2, e, n, &d), 0);
  SrNpzEntry *e2;
  int n2;
  ck_assert_int_eq(sr_npz_read(p2, &e2, &n2, &d), 0);
  ck_assert_int_eq(n2, 2);
  for (int i = 0; i < 2; i++) {
    ck_assert_str_eq(e2[i].name, e[i].name);
    ck_assert_int_eq(e2[i].dt, e[i].dt);
    ck_assert(memcmp(e2[i].data, e[i].data, i ? 3 : 24) == 0);
  }
  sr_npz_free(e2, n2);
  sr_npz_free(e, n);
  /* no members */
  ck_assert_int_eq(sr_npz_write(p2, NULL, 0, &d), 0);
  ck_assert_int_eq(sr_npz_read(p2, &e2, &n2, &d), 0);
  ck_assert_int_eq(n2, 0);
  sr_npz_free(e2, n2);
  ck_assert_int_eq(d.count, 0);
}
END_TEST

/* Reading a corrupted copy must fail cleanly or succeed, never crash. */
static void try_read(const char *path, int npz, const unsigned char *p, size_t n) {
  write_file(path, p, n);
  SrDiags d = SR_DIAGS_INIT;
  if (npz) {
    SrNpzEntry *e;
    int k;
    int rc = sr_npz_read(path, &e, &k, &d);
    if (rc == 0) sr_npz_free(e, k);
    else ck_assert_int_gt(d.count, 0);
  } else {
    SrDtype dt;
    int nd;
    int64_t sh[SR_MAX_RANK];
    void *data;
    int rc = sr_npy_read(path, &dt, &nd, sh, &data, &d);
    if (rc == 0) free(data);
    else ck_assert_int_gt(d.count, 0);
  }
  sr_diags_clear(&d);
}

static void fuzz_file(const char *path, int npz, const unsigned char *good, size_t len,
                      unsigned seed) {
  unsigned char *p = malloc(len);
  for (size_t cut = 0; cut < len; cut++) try_read(path, npz, good, cut);
  srand(seed);
  for (int round = 0; round < 1500; round++) {
    memcpy(p, good, len);
    int flips = 1 + rand() % 4;
    for (int k = 0; k < flips; k++) {
      size_t at = (size_t)rand() % len;
      int how = rand() % 4;
      p[at] = how == 0 ? (unsigned char)rand() : how == 1 ? 0xff : how == 2 ? 0 : (unsigned char)(p[at] ^ (1 << (rand() % 8)));
    }
    try_read(path, npz, p, len);
  }
  free(p);
}

START_TEST(test_corrupt_inputs) {
  SrDiags d = SR_DIAGS_INIT;
  float v[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {2, 3};
  SrBuf b = SR_BUF_INIT;
  ck_assert_int_eq(sr_npy_encode(&b, SR_F32, 2, shape, v, &d), 0);
  fuzz_file(tmp_path("fz.npy"), 0, (const unsigned char *)b.p, b.len, 1);
  SrNpzEntry in[2] = {{(char *)"a", SR_F32, 2, {2, 3}, v}, {(char *)"b", SR_F32, 1, {2}, v}};
  const char *zp = tmp_path("fz.npz");
  ck_assert_int_eq(sr_npz_write(zp, in, 2, &d), 0);
  size_t len;
  unsigned char *z = read_file(zp, &len);
  fuzz_file(zp, 1, z, len, 2);
  free(z);
  fuzz_file(zp, 1, compressed_npz, sizeof compressed_npz, 3);
  sr_buf_free(&b);
}
END_TEST

/* ---- the cross-check with numpy ---- */

typedef struct Rd {
  char *p, *end;
} Rd;

static char *word(Rd *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\n')) r->p++;
  char *w = r->p;
  while (r->p < r->end && *r->p != ' ' && *r->p != '\n') r->p++;
  if (r->p < r->end) *r->p++ = 0;
  return w;
}

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - 'A' + 10;
}

static unsigned char *unhex(const char *h, size_t *n) {
  if (strcmp(h, "-") == 0) h = "";
  size_t len = strlen(h) / 2;
  unsigned char *b = malloc(len ? len : 1);
  for (size_t i = 0; i < len; i++)
    b[i] = (unsigned char)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
  *n = len;
  return b;
}

/* "DTYPE NDIM D0 .. HEX" into an entry. */
static void read_array(Rd *r, SrNpzEntry *e) {
  const char *dn = word(r);
  int dt = sr_dtype_lookup(dn, strlen(dn));
  ck_assert_msg(dt >= 0, "dtype %s", dn);
  e->dt = (SrDtype)dt;
  e->ndim = atoi(word(r));
  for (int i = 0; i < e->ndim; i++) e->shape[i] = atoll(word(r));
  size_t n;
  e->data = unhex(word(r), &n);
  ck_assert_int_eq(n, nbytes_of(e->dt, e->ndim, e->shape));
}

static void same_array(const char *what, const SrNpzEntry *want, SrDtype dt, int nd,
                       const int64_t *sh, const void *data) {
  ck_assert_msg(dt == want->dt, "%s: dtype %s, want %s", what, sr_dtype_name(dt),
                sr_dtype_name(want->dt));
  ck_assert_msg(nd == want->ndim, "%s: rank %d, want %d", what, nd, want->ndim);
  for (int i = 0; i < nd; i++) ck_assert_int_eq(sh[i], want->shape[i]);
  ck_assert_msg(memcmp(data, want->data, nbytes_of(dt, nd, sh)) == 0, "%s: data differs", what);
}

START_TEST(test_numpy_files) {
  const char *dir = getenv("NPY_XCHECK");
  char path[1024];
  snprintf(path, sizeof path, "%s/manifest", dir);
  size_t len;
  unsigned char *text = read_file(path, &len);
  Rd r = {(char *)text, (char *)text + len};
  int nnpy = 0, nnpz = 0;
  SrDiags d = SR_DIAGS_INIT;
  for (;;) {
    char *kind = word(&r);
    if (!*kind) break;
    char *file = word(&r);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (strcmp(kind, "npy") == 0) {
      SrNpzEntry want;
      read_array(&r, &want);
      SrDtype dt;
      int nd;
      int64_t sh[SR_MAX_RANK];
      void *data;
      ck_assert_msg(sr_npy_read(path, &dt, &nd, sh, &data, &d) == 0, "%s: %s", file,
                    d.first ? d.first->msg : "");
      same_array(file, &want, dt, nd, sh, data);
      free(data);
      /* and our own copy, for numpy to read */
      snprintf(path, sizeof path, "%s/out_%s", dir, file);
      ck_assert_int_eq(sr_npy_write(path, want.dt, want.ndim, want.shape, want.data, &d), 0);
      free(want.data);
      nnpy++;
    } else if (strcmp(kind, "npz") == 0) {
      int count = atoi(word(&r));
      SrNpzEntry *want = calloc((size_t)count + 1, sizeof *want);
      for (int i = 0; i < count; i++) {
        ck_assert_str_eq(word(&r), "entry");
        want[i].name = strdup(word(&r));
        read_array(&r, &want[i]);
      }
      SrNpzEntry *got;
      int n;
      ck_assert_msg(sr_npz_read(path, &got, &n, &d) == 0, "%s: %s", file,
                    d.first ? d.first->msg : "");
      ck_assert_int_eq(n, count);
      for (int i = 0; i < n; i++) {
        ck_assert_str_eq(got[i].name, want[i].name);
        same_array(file, &want[i], got[i].dt, got[i].ndim, got[i].shape, got[i].data);
      }
      sr_npz_free(got, n);
      snprintf(path, sizeof path, "%s/out_%s", dir, file);
      ck_assert_int_eq(sr_npz_write(path, want, count, &d), 0);
      sr_npz_free(want, count);
      nnpz++;
    } else {
      ck_abort_msg("bad manifest record %s", kind);
    }
  }
  free(text);
  fprintf(stderr, "npy cross-check: read %d .npy and %d .npz files numpy wrote, wrote them back\n",
          nnpy, nnpz);
  ck_assert_int_gt(nnpy + nnpz, 0);
}
END_TEST

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "%s/check_npy.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return EXIT_FAILURE;
  }
  Suite *s = suite_create("npy");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_roundtrip);
  tcase_add_test(tc, test_header_bytes);
  tcase_add_test(tc, test_foreign_layouts);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_npz);
  tcase_add_test(tc, test_corrupt_inputs);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  if (getenv("NPY_XCHECK")) {
    TCase *xc = tcase_create("numpy");
    tcase_add_test(xc, test_numpy_files);
    tcase_set_timeout(xc, 60);
    suite_add_tcase(s, xc);
  }
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  /* the scratch files */
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* npy.h: numpy's .npy and .npz files.
 *
 * .npy (format 1.0, 2.0 and 3.0 on reading; 1.0, or 2.0 for a header past
 * 64 KiB, on writing) holds one array: a magic string, a Python dict
 * literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded to 64 bytes, and the raw elements.  sr_npy_write writes the same
 * bytes np.save does.  .npz is a zip of "NAME.npy" members: np.savez
 * stores them, np.savez_compressed deflates them; both read back, and
 * sr_npz_write stores, as np.savez does.
 *
 * Arrays here are shardrepl's buffers: little-endian (native) and C order,
 * laid out as numfmt.h describes.  Reading converts big-endian files and
 * fortran_order=True files to that.
 *
 * dtypes and descrs:
 *   bool '|b1', int8..int64 '|i1' '<i2' '<i4' '<i8', uint8..uint64 likewise
 *   with 'u', float16/32/64 '<f2' '<f4' '<f8', complex64/128 '<c8' '<c16'.
 *   bfloat16 is written '<V2', byte for byte what np.save writes for an
 *   ml_dtypes bfloat16 array (numpy has no bfloat16; ml_dtypes' dtype is a
 *   2-byte void to it), and a 2-byte void ('<V2' or '|V2') reads back as
 *   bfloat16.  numpy itself loads such a file as void bytes; convert to
 *   float32 first for a file numpy should read as numbers.
 *   int2/int4/uint2/uint4 (one per byte here) are written as '|i1'/'|u1',
 *   which numpy reads as int8/uint8 with the same values; they read back
 *   as int8/uint8.
 *   The float8 types, float4_e2m1fn, float0 and opaque dtypes are refused
 *   (ml_dtypes writes all 1-byte floats as '|V1', which could not be told
 *   apart on reading), as are structured, string and object descrs.
 *
 * Errors go to the SrDiags (kind SR_E_RUNTIME, Python's exception name
 * where Python has one: "FileNotFoundError: [Errno 2] No such file or
 * directory: 'x.npy'", "BadZipFile: Bad CRC-32 for file 'a.npy'").
 * Corrupt or truncated input is reported, never trusted: no read past the
 * data, no allocation larger than the file can fill.
 */
#ifndef SR_EXEC_NPY_H
#define SR_EXEC_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "ir/dtype.h"
#include "ir/type.h" /* SR_MAX_RANK */
#include "util/buf.h"
#include "util/diag.h"

/* np.save(path, a).  Returns 0, or -1 with a diagnostic. */
int sr_npy_write(const char *path, SrDtype dt, int ndim, const int64_t *shape,
                 const void *data, SrDiags *d);

/* np.load(path) of a .npy file.  On success *data is malloc'ed (never NULL,
   even for an empty array) and owned by the caller; shape must have room
   for SR_MAX_RANK dimensions. */
int sr_npy_read(const char *path, SrDtype *dt, int *ndim, int64_t *shape,
                void **data, SrDiags *d);

/* The same on memory: the bytes of a .npy file appended to out, and a .npy
   file's bytes parsed (name is used in messages). */
int sr_npy_encode(SrBuf *out, SrDtype dt, int ndim, const int64_t *shape,
                  const void *data, SrDiags *d);
int sr_npy_decode(const void *buf, size_t len, const char *name, SrDtype *dt,
                  int *ndim, int64_t *shape, void **data, SrDiags *d);

typedef struct SrNpzEntry {
  char *name;   /* without ".npy" */
  SrDtype dt;
  int ndim;
  int64_t shape[SR_MAX_RANK];
  void *data;
} SrNpzEntry;

/* np.savez(path, **{e[i].name: e[i]...}): members "NAME.npy", stored. */
int sr_npz_write(const char *path, const SrNpzEntry *e, int n, SrDiags *d);

/* All the .npy members of a .npz (stored or deflated), in the zip's order;
   other members are skipped.  *e is malloc'ed, with its names and data:
   free it with sr_npz_free. */
int sr_npz_read(const char *path, SrNpzEntry **e, int *n, SrDiags *d);
void sr_npz_free(SrNpzEntry *e, int n);

#endif

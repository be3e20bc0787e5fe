/* kern_conv.h: the kernel of conv_general_dilated on one shard
 * (kern_conv.c), after XLA's convolution semantics.
 *
 * The operands and the result are row-major buffers whose dimensions are
 * named by the geometry's strides in canonical order: batch, feature,
 * then the spatial dimensions in the kernel's order (ConvDimensionNumbers
 * of JAX's lax.conv_general_dilated).
 */
#ifndef SR_EXEC_KERN_CONV_H
#define SR_EXEC_KERN_CONV_H

#include <stdint.h>

#include "ir/dtype.h"
#include "ir/type.h"

typedef struct SrConvGeom {
  int nsp;                          /* spatial dimensions */
  int64_t n, c;                     /* lhs batch and feature sizes */
  int64_t o, i;                     /* rhs output and input feature sizes */
  int64_t nout;                     /* result batch: n / bgc */
  int64_t in_sp[SR_MAX_RANK], k_sp[SR_MAX_RANK], out_sp[SR_MAX_RANK];
  int64_t lstr[SR_MAX_RANK + 2], rstr[SR_MAX_RANK + 2], ostr[SR_MAX_RANK + 2]; /* element strides */
  int64_t stride[SR_MAX_RANK], lo[SR_MAX_RANK], ldil[SR_MAX_RANK], rdil[SR_MAX_RANK];
  int64_t fgc, bgc;                 /* feature_group_count, batch_group_count */
} SrConvGeom;

/* out = conv(lhs, rhs) for operands of dtype dt and a result of dtype odt;
   -1 when the kernel has no loop for those dtypes. */
int sr_kern_conv(SrDtype dt, SrDtype odt, const SrConvGeom *g, const void *lhs, const void *rhs, void *out);

#endif

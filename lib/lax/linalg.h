/* linalg.h: what linalg.c's qr / svd / triangular_solve rules share with
 * linalg16.c's cholesky, lu, eigh and lu_pivots_to_permutation rules. */
#ifndef SR_LAX_LINALG_H
#define SR_LAX_LINALG_H

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "check/rule.h"

/* linalg_shape_rule's rank-2, dtype and unsharded-matrix checks of input 0 */
int sr_linalg_check_operand(SrTypeCtx *cx, const SrRuleEqn *e, const char *name);
/* x's batch dims then rows x cols (cols < 0: a vector of rows), dtype dt */
const SrType *sr_linalg_result_type(const SrType *x, SrDtype dt, int64_t rows, int64_t cols);
/* a layout like l's on the nd - 2 batch dims, whole on the others */
const SrType *sr_linalg_whole_matrix(const SrType *base, const SrType *l, int nd);
/* x @ y over the last two dims (tx, ty: transposed), batched on the rest */
SrVal *sr_linalg_mm(SrAd *ad, SrVal *x, SrVal *y, int tx, int ty);
/* x with its last two dims swapped */
SrVal *sr_linalg_mT(SrAd *ad, SrVal *x);
/* x where (col cmp row) holds, else 0 (SR_P_le: tril, SR_P_lt: tril(-1)) */
SrVal *sr_linalg_tri_mask(SrAd *ad, SrVal *x, int cmp);
/* the identity of t's last two (square) dims, broadcast to t */
SrVal *sr_linalg_eye_like(SrAd *ad, const SrType *t);
/* expand_dims_batcher: the batch dim moved to the front */
int sr_linalg_batch_front(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd);


#endif

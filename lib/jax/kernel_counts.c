/* kernel_counts.c: shardrepl.kernel_counts(), what the evaluator's kernels
 * have done in this process, for checking that a copy XLA would not make
 * is not made (exec/fold.h). */
#include "exec/eval.h"
#include "exec/fold.h"
#include "exec/kern.h"
#include "jax/api.h"
#include "py/objects.h"

/* {'transposes': the transposes materialized (sr_kern_transposes),
   'folded': the transposes folded into a dot_general (sr_fold_count),
   'accumulated': the adds of a scan's stacked result into an accumulator
   that the scan did in place (sr_ev_accum_count), 'gemm_adds': the gemms
   that added into such an accumulator (sr_kern_dot_adds)}, counted since
   the process started. */
static SrVal *bi_kernel_counts(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "kernel_counts", "", NULL) < 0) return NULL;
  SrVal *d = sr_dict(NULL);
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "transposes"), sr_int(NULL, sr_kern_transposes()));
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "folded"), sr_int(NULL, sr_fold_count()));
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "accumulated"), sr_int(NULL, sr_ev_accum_count()));
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "gemm_adds"), sr_int(NULL, sr_kern_dot_adds()));
  return d;
}

void sr_kernel_counts_init(void) {
  sr_def("shardrepl.kernel_counts", bi_kernel_counts,
         "kernel_counts(): {'transposes': transposes the kernels materialized, 'folded': transposes folded into a "
         "dot_general's gemm, 'accumulated': adds of a scan's stacked result into an accumulator the scan did in place, "
         "'gemm_adds': gemms that added into such an accumulator}, counted since the process started "
         "(SHARDREPL_FOLD=0 turns folding off, SHARDREPL_ACCUM=0 the accumulation)");
}

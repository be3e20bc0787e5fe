/* lax.c: fills the primitive table's rule slots from every family file
 * (lax.h). */
#include "lax/lax.h"

void sr_lax_init(void) {
  static int done;
  if (done) return;
  done = 1;
  sr_prims_init();
  sr_lax_elementwise_init();
  sr_lax_structural_init();
  sr_lax_reduce_init();
  sr_lax_dot_init();
  sr_lax_sharding_init();
  sr_lax_control_init();
  sr_lax_solves_init();
  sr_lax_manual_init();
  sr_lax_random_init();
  sr_lax_sort_init();
  sr_lax_cumred_init();
  sr_lax_conv_init();
  sr_lax_windowed_init();
  sr_lax_linalg_init();
  sr_lax_linalg16_init();
  sr_lax_linalg21_init();
  sr_lax_linalg18_init();
  sr_lax_fft_init();
  sr_lax_state_init();
}

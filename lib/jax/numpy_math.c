#include "jax/jax.h"
#include "jax/math_api.h"
void sr_numpy_math_init(void) {}

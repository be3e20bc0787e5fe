#include "jax/jax.h"
#include "jax/math_api.h"
void sr_scipy_special_more_init(void) {}

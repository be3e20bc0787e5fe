/* math_api.h: the elementwise and mathematical functions of issue 15's
 * list that jax.lax (lax_math.c), jax.numpy (numpy_math.c),
 * jax.scipy.special (scipy_special_more.c) and jax.nn (nn_more.c) lacked.
 */
#ifndef SR_JAX_MATH_API_H
#define SR_JAX_MATH_API_H

#include <stdint.h>

void sr_math_api_init(void);        /* all of them (api.c's sr_jnp_init) */
void sr_lax_math_init(void);        /* lax_math.c */
void sr_numpy_math_init(void);      /* numpy_math.c */
void sr_scipy_special_more_init(void); /* scipy_special_more.c */
void sr_scipy_special_series_init(void); /* scipy_special_series.c */
void sr_nn_more_init(void);         /* nn_more.c */

/* jnp.polyval(p, x, unroll=unroll): the jit named polyval over a scan
   (numpy_math.c); a new reference */
typedef struct SrInterp SrInterp;
typedef struct SrVal SrVal;
SrVal *sr_jnp_polyval(SrInterp *I, SrVal *p, SrVal *x, int64_t unroll);

#endif

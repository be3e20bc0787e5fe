/* device_put.h: jax.device_put under a trace (device_put.c: the
 * device_put primitive), called by builtins_exec.c's jax.device_put when
 * a trace is being built. */
#ifndef SR_JAX_DEVICE_PUT_H
#define SR_JAX_DEVICE_PUT_H

#include "py/interp.h"

/* Binds one device_put for the leaves of x (device, src, donate and
   may_alias as jax.device_put takes them; NULL for absent); the outputs in
   x's structure, or NULL with an exception raised. */
SrVal *sr_device_put_traced(SrInterp *I, SrVal *x, SrVal *device, SrVal *src, SrVal *donate, SrVal *may_alias);
/* The row's rules. */
void sr_device_put_init(void);

#endif

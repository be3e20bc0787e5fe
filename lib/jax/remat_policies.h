/* remat_policies.h: jax.checkpoint_policies (remat_policies.c), for
 * jax.checkpoint (api.c). */
#ifndef SR_JAX_REMAT_POLICIES_H
#define SR_JAX_REMAT_POLICIES_H

#include "ir/val.h"

/* The kind of a checkpoint policy: 0 nothing_saveable (or None), 1
   everything_saveable, more for the others; -1 for a value that is no
   policy object, -2 for an offloading one. */
int sr_remat_policy_kind(const SrVal *v);
/* A policy function of the user's (policy(prim, *avals, **params) -> bool)
   as a policy object, printed as the function is (a new reference). */
SrVal *sr_remat_policy_of(SrVal *fn);

#endif

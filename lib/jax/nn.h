/* nn.h: what jax.nn (nn.c), jax.nn.initializers (nn_initializers.c) and
 * jax.scipy.special (scipy_special.c) share: a scope of temporaries, so
 * that a function written as JAX writes it in Python reads as one line an
 * operation, and JAX's reductions with where= and initial=.
 *
 * Every helper borrows its operands and returns a value the scope owns
 * (borrowed by the caller), or NULL with an exception raised; a NULL
 * operand is passed on as NULL without a call, so a chain of calls stops
 * at its first error.  sr_nn_done returns a new reference to its result
 * and releases everything else the scope holds.
 */
#ifndef SR_JAX_NN_H
#define SR_JAX_NN_H

#include "jax/lax.h"

#define SR_NN_SCOPE_MAX 96

typedef struct SrNnScope {
  SrInterp *I;
  SrVal *v[SR_NN_SCOPE_MAX];
  int n;
} SrNnScope;

/* Takes v (a new reference) into the scope; v may be NULL. */
SrVal *sr_nn_keep(SrNnScope *s, SrVal *v);
/* A new reference to r (NULL stays NULL); empties the scope. */
SrVal *sr_nn_done(SrNnScope *s, SrVal *r);
/* Python floats and ints as weakly typed scalars. */
SrVal *sr_nn_float(SrNnScope *s, double d);
SrVal *sr_nn_int(SrNnScope *s, int64_t i);
/* A registered function by its qualified name (jax.numpy.exp), on n
   positional arguments and the keyword arguments kw[i] = kwv[i] (a NULL
   kwv[i] is left out). */
SrVal *sr_nn_call(SrNnScope *s, const char *q, int n, SrVal **v, int nkw, const char **kw, SrVal **kwv);
SrVal *sr_nn_call1(SrNnScope *s, const char *q, SrVal *x);
SrVal *sr_nn_call2(SrNnScope *s, const char *q, SrVal *x, SrVal *y);
SrVal *sr_nn_call3(SrNnScope *s, const char *q, SrVal *x, SrVal *y, SrVal *z);
/* a op b, Python's operators on arrays (SR_OP_ADD ...). */
SrVal *sr_nn_op(SrNnScope *s, int op, SrVal *a, SrVal *b);
/* jax.numpy's _reduction for max (prim SR_P_reduce_max) and sum
   (SR_P_reduce_sum) of an array: the axes of axis (None or absent: all),
   where (NULL or None: none) as a select with the identity, initial
   (NULL or None: none) folded in after the reduction, keepdims as
   expand_dims. */
SrVal *sr_nn_reduce(SrNnScope *s, int prim, SrVal *x, SrVal *axis, SrVal *where, SrVal *initial, int keepdims);
/* The axes an axis argument names for rank nd (None or NULL: all),
   canonicalized; -1 with an exception raised. */
int sr_nn_axes(SrInterp *I, SrVal *axis, int nd, int64_t *axes, int *n);
/* Whether an optional argument was given (not NULL, not None). */
int sr_nn_given(const SrVal *v);
/* A scalar of dtype dt, as np.array(v, dtype) is: not weak. */
SrVal *sr_nn_typed_scalar(SrNnScope *s, double v, SrDtype dt);
/* promote_args_inexact: args (replaced in place by values the scope
   holds) to one inexact dtype and one rank; -1 with an exception raised. */
int sr_nn_promote_inexact(SrNnScope *s, int n, SrVal **args, const char *fname);
/* A jax.custom_jvp object of fun (a builtin named name) with its rule:
   jvp given to defjvps (defjvps) or to defjvp, rule_name its name; made
   once and kept in *slot. */
SrVal *sr_nn_custom_jvp(SrInterp *I, SrVal **slot, const char *name, SrBuiltinFn fun, const char *rule_name,
                        SrBuiltinFn jvp, int defjvps);
/* lax.full_like(x, v) for a Python number v (an int or a float value). */
SrVal *sr_nn_full_like(SrNnScope *s, SrVal *x, SrVal *v);
/* lax.asarray(x): x if it is an array, else an array of its value, dtype
   and weak type (a Python scalar as jnp.asarray makes it). */
SrVal *sr_nn_array(SrNnScope *s, SrVal *x);
/* Unrefs a value held as a builtin's data. */
void sr_nn_unref_data(void *d);

void sr_nn_initializers_init(void);   /* nn_initializers.c */
void sr_scipy_special_init(void);     /* scipy_special.c */
void sr_scipy_stats_init(void);       /* scipy_stats.c */
/* jax.scipy.special's _xlogx(x), the custom_jvp of x log x (a new reference) */
SrVal *sr_scipy_xlogx(SrInterp *I, SrVal *x);

#endif

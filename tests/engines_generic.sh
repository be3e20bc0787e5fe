#!/bin/sh
# engines_generic.sh: the engines hold no per-primitive code, and the lax
# operations are written once (issue 12).
#
# The engines -- the checker, the core, the evaluator, autodiff and the
# optimizer (lib/check, lib/core, lib/exec, lib/ad, lib/opt) -- walk
# jaxprs; what one primitive does or is (its rules, kernels, result
# count, op_name segment, HLO opcode, effects) is in its row of
# lib/prims/prim.def and the slots its family file in lib/lax/ fills
# (prims/prim.h).  So no engine source names a row's id (SR_P_...), and
# adding a primitive touches only its row, its family file and the
# function that binds it.  The exception is ad/ops.c, the one lax-op
# layer that jax.lax's and jax.numpy's functions and the rules are
# written with (sr_op_*, and their faces sr_lax_*, sr_ad_mul, ...), which
# binds rows by id as jax.lax's functions do.
#
# Environment: top_srcdir (default .).  Exit: 0 pass, 1 fail.
top=${top_srcdir:-.}
LC_ALL=C
export LC_ALL
found=$(cd "$top" && grep -n 'SR_P_[a-z]' lib/check/*.[ch] lib/core/*.[ch] lib/exec/*.[ch] lib/ad/*.[ch] \
  lib/opt/*.[ch] 2>/dev/null | grep -v '^lib/ad/ops\.c:')
if [ -n "$found" ]; then
  echo "FAIL: per-primitive code in the engines (put it in the row's slots, prims/prim.h):"
  echo "$found"
  exit 1
fi
echo "PASS: no engine source names a primitive's row"

# One lax-op layer: the lax operations are defined once, in lib/ad/ops.c
# (sr_op_*); jax/lax.h's sr_lax_*, numpy.h's sr_jnp_convert and
# ad_rules.h's sr_ad_* are faces of it.  A definition of one of them, or
# of a copy of auto_insert_reshard, anywhere else is a second copy.
ops='sr_op_[a-z_]*'
ops="$ops|sr_lax_(unary|binary|convert|reshape|transpose|broadcast_in_dim|expand_dims|full|reduce|select"
ops="$ops|squeeze|iota|argminmax|dot_general|concatenate|slice|dynamic_slice|pad|rev|dynamic_update_slice"
ops="$ops|broadcast_to|pvary|reduced_vary_cast)"
ops="$ops|sr_ad_(unop|binop|convert|reshape|reshape_plain|transpose_dims|broadcast_in_dim|expand_dims|full"
ops="$ops|reduce_sum|select_n|reshard|pvary_to|ints|axes_tuple)"
ops="$ops|sr_api_(axes_tuple|axes_on|first|bind_axes_cast)|sr_auto_insert_reshard|sr_bindv|sr_int_tuple"
ops="$ops|sr_jnp_convert|auto_insert|insert_reduced_reshard"
copies=$(cd "$top" && grep -nE "^(static )?(inline )?[A-Za-z_]+ \*?($ops)\(" lib/*/*.c 2>/dev/null |
  grep -v '^lib/ad/ops\.c:')
if [ -n "$copies" ]; then
  echo "FAIL: a second copy of the one lax-op layer (write it once in lib/ad/ops.c, HACKING.md):"
  echo "$copies"
  exit 1
fi
echo "PASS: the lax operations are defined once (lib/ad/ops.c)"
exit 0

#!/bin/sh
# engines_generic.sh: the engines hold no per-primitive code (issue 12).
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
exit 0

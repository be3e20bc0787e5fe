#!/bin/sh
# blas_kernel.sh: shardrepl names the BLAS kernels it runs and warns when
# they use fewer vector units than the CPU has (issue 17), never forcing
# one: --version shows the kernels, :ranks too, and with the SSE3
# "Prescott" kernels chosen on a CPU with AVX2 (OPENBLAS_CORETYPE) it
# names the fix.
: "${SHARDREPL:=src/shardrepl}"
fail=0
v=$("$SHARDREPL" --version) || fail=1
echo "$v" | grep -q '^kernels: OpenBLAS, [A-Za-z0-9_]* kernels' || { echo "FAIL: --version: $v"; fail=1; }
r=$("$SHARDREPL" -e ':ranks') || fail=1
echo "$r" | grep -q '^BLAS: OpenBLAS, [A-Za-z0-9_]* kernels' || { echo "FAIL: :ranks: $r"; fail=1; }
p=$(OPENBLAS_CORETYPE=Prescott "$SHARDREPL" --version)
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
  echo "$p" | grep -q '^kernels: OpenBLAS, Prescott kernels (SSE)' || { echo "FAIL: Prescott: $p"; fail=1; }
  echo "$p" | grep -q '^warning: OpenBLAS runs its Prescott kernels (SSE) on a CPU with AVX.*OPENBLAS_CORETYPE=' ||
    { echo "FAIL: no warning for Prescott kernels on an AVX2 CPU: $p"; fail=1; }
fi
# kernels as good as the CPU's: no warning
if grep -qw avx2 /proc/cpuinfo 2>/dev/null && ! grep -qw avx512f /proc/cpuinfo; then
  h=$(OPENBLAS_CORETYPE=Haswell "$SHARDREPL" --version)
  echo "$h" | grep -q '^warning' && { echo "FAIL: a warning for Haswell kernels on an AVX2 CPU: $h"; fail=1; }
fi
[ $fail = 0 ] && echo "blas_kernel.sh: ok"
exit $fail

/* blas_cpu.c: which kernels OpenBLAS runs, against what the CPU can do.
 *
 * OpenBLAS picks its kernels by the CPU it knows; an OpenBLAS older than
 * the CPU (Debian's 0.3.21 on an Emerald Rapids) falls back to its SSE3
 * "Prescott" kernels, several times slower at matrix products.  Nothing
 * here forces a kernel (on some CPUs an older one computes wrong
 * results): shardrepl says what runs, and how to choose another.
 */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "exec/kern.h"
#include "util/buf.h"

/* The vector units a kernel family uses, or the CPU has. */
enum { V_UNKNOWN, V_SSE, V_AVX, V_AVX2, V_AVX512 };

static const char *const unit_names[] = {"?", "SSE", "AVX", "AVX2", "AVX-512"};

/* OpenBLAS's core names (its dynamic.c), by the units their kernels use */
static int kernel_units(const char *core) {
  static const struct {
    const char *name;
    int units;
  } cores[] = {
    {"SapphireRapids", V_AVX512}, {"Cooperlake", V_AVX512}, {"SkylakeX", V_AVX512},
    {"Haswell", V_AVX2},          {"Zen", V_AVX2},
    {"Sandybridge", V_AVX},       {"Bulldozer", V_AVX},     {"Piledriver", V_AVX},
    {"Steamroller", V_AVX},       {"Excavator", V_AVX},
    {"Katmai", V_SSE},            {"Coppermine", V_SSE},    {"Northwood", V_SSE},
    {"Prescott", V_SSE},          {"Banias", V_SSE},        {"Atom", V_SSE},
    {"Core2", V_SSE},             {"Penryn", V_SSE},        {"Dunnington", V_SSE},
    {"Nehalem", V_SSE},           {"Athlon", V_SSE},        {"Opteron", V_SSE},
    {"Opteron_SSE3", V_SSE},      {"Barcelona", V_SSE},     {"Nano", V_SSE},
    {"Bobcat", V_SSE},
  };
  for (size_t i = 0; i < sizeof cores / sizeof *cores; i++)
    if (strcasecmp(core, cores[i].name) == 0) return cores[i].units;
  return V_UNKNOWN;
}

static int cpu_units(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return V_AVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return V_AVX2;
  if (__builtin_cpu_supports("avx")) return V_AVX;
  return V_SSE;
#else
  return V_UNKNOWN;
#endif
}

const char *sr_kern_blas_core(void) { return openblas_get_corename(); }

void sr_kern_blas_describe(SrBuf *b) {
  const char *core = sr_kern_blas_core();
  int cpu = cpu_units();
  sr_buf_printf(b, "OpenBLAS, %s kernels", core ? core : "unknown");
  int k = core ? kernel_units(core) : V_UNKNOWN;
  if (k) sr_buf_printf(b, " (%s)", unit_names[k]);
  if (cpu) sr_buf_printf(b, ", on a CPU with %s", unit_names[cpu]);
}

int sr_kern_blas_advice(SrBuf *b) {
  const char *core = sr_kern_blas_core();
  int k = core ? kernel_units(core) : V_UNKNOWN, cpu = cpu_units();
  if (!k || !cpu || k >= cpu) return 0;
  sr_buf_printf(b,
                "warning: OpenBLAS runs its %s kernels (%s) on a CPU with %s, so matrix products run several times "
                "slower than they could; OPENBLAS_CORETYPE=%s (or a newer OpenBLAS) chooses the kernels for it",
                core, unit_names[k], unit_names[cpu], cpu == V_AVX512 ? "SkylakeX" : cpu == V_AVX2 ? "Haswell" : "Sandybridge");
  return 1;
}

/* linit.c: shardrepl's init table for py/ (linit.h). */
#include "cmd/linit.h"

#include "check/check.h"
#include "cmd/commands.h"
#include "core/jaxstate.h"
#include "core/trace.h"
#include "exec/exec.h"
#include "jax/api.h"
#include "jax/np_host.h"
#include "jax/numpy.h"
#include "py/objects.h"

/* The names first: jnp for jax.numpy..., and the prefixes that make
   jax., jax.numpy., jax.lax. and jax.sharding. optional for bare names.
   Then the modules, in the order they register: JAX's sharding API,
   jax.numpy and the rest of JAX's API (autodiff, lax, random...), the
   autodiff commands.  The evaluator's built-ins and :comm come with its
   hooks (sr_hooks_exec_init, in state_new). */
static void open_modules(void) {
  static const char *const aliases[][2] = {
    {"jnp", "jax.numpy"}, {"lax", "jax.lax"}, {"np", "numpy"}, {"onp", "numpy"}, {"jax.P", "jax.sharding.PartitionSpec"},
  };
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++) sr_module_alias(aliases[i][0], aliases[i][1]);
  static const char *const prefixes[] = {"jax.", "jax.numpy.", "jax.lax.", "jax.sharding."};
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) sr_name_prefix(prefixes[i]);
  sr_builtins_jax_init();
  sr_jnp_init();
  sr_commands_ad_init();
  sr_commands_session_init();
  sr_kernel_counts_init();
  sr_jax_src_api_init();
}

static void state_new(SrInterp *I) {
  I->jax = sr_jax_state_new();
  sr_array_printing(I);
  sr_hooks_exec_init(I);
}

/* the traces of jitted functions kept for a statement hold user values */
static void state_clear(SrInterp *I) { sr_jit_cache_clear(I); }

static void state_reset(SrInterp *I) {
  sr_jax_state_reset(I->jax);
  sr_type_set_remove_size_one(0); /* the config option's default */
}

static void state_free(SrInterp *I) {
  sr_exec_free(I);
  sr_jax_state_free(I->jax);
  I->jax = NULL;
}

/* a statement starts with an empty ledger (:comm); the jit traces stay,
   as pjit's cache keeps them across calls: a jitted function traces once
   per signature, so a print in its body shows once */
static void stmt_begin(SrInterp *I) { sr_exec_stmt_begin(I); }

/* a command keeps the last statement's ledger (:comm shows it) */
static int command(SrInterp *I, SrSrc *src, size_t off, size_t end) {
  sr_jit_cache_clear(I);
  return sr_command_run(I, src, off, end);
}

static SrVal *call_jaxpr(SrInterp *I, SrVal *fn, SrArgs *a) { return sr_jaxpr_call_hook()(I, fn, a); }

/* under the mesh in context, trusting primitives without a type rule */
static int check_jaxpr(SrInterp *I, const SrJaxpr *j, SrDiags *d) {
  SrCheckOpts opts = {sr_jax_context_mesh(I->jax), 0};
  return sr_check_jaxpr(j, &opts, d, NULL);
}

static const SrMesh *literal_mesh(SrInterp *I) { return sr_jax_context_mesh(I->jax); }

const SrPyInit sr_linit = {
  .open_modules = open_modules,
  .state_new = state_new,
  .state_clear = state_clear,
  .state_reset = state_reset,
  .state_free = state_free,
  .stmt_begin = stmt_begin,
  .command = command,
  .call_jaxpr = call_jaxpr,
  .call_dtype = sr_np_dtype_call,
  .dtype_instancecheck = sr_np_dtype_instancecheck,
  .check_jaxpr = check_jaxpr,
  .literal_mesh = literal_mesh,
};

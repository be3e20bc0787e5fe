/* builtins_jax.c: the built-ins over JAX's state (core/jaxstate.c holds
 * it: the mesh in context, the abstract meshes, jax.config): set_mesh and
 * the abstract mesh, jaxprs as values, the dtypes and modules as names;
 * meshes, PartitionSpecs and NamedShardings are in sharding.c. */
#include <stdlib.h>
#include <string.h>

#include "jax/api.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "core/jaxstate.h"
#include "jax/array_methods.h"
#include "jax/numpy.h"
#include "jax/random.h"
#include "exec/prng.h"
#include "py/objects.h"
#include "py/enum.h"
#include "text/print.h"
#include "text/print_val.h"
#include "text/color.h"
#include "util/intern.h"


/* ---- set_mesh and the abstract mesh ---- */

typedef struct SetMesh {
  const SrMesh *mesh, *prev;
  int abstract; /* use_abstract_mesh */
} SetMesh;

static void set_mesh_repr(SrBuf *out, const SrVal *v) {
  const SetMesh *s = v->obj.data;
  sr_buf_puts(out, s->abstract ? "<jax._src.sharding_impls.use_abstract_mesh object>"
                               : "<jax._src.sharding_impls.set_mesh object>");
}

static const SrClass set_mesh_class = {"set_mesh", free, set_mesh_repr, NULL, NULL};

static SrVal *bi_set_mesh(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "set_mesh", "mesh", p) < 0) return NULL;
  if (p[0]->kind != SR_V_NONE && (p[0]->kind != SR_V_MESH || p[0]->mesh->abstract))
    return sr_raise(I, "ValueError", "Expected mesh of type `jax.sharding.Mesh`. Got <class '%s%s'>",
                    p[0]->kind == SR_V_MESH ? "jax._src.mesh." : "", sr_val_kind_name(p[0]));
  if (p[0]->kind == SR_V_MESH) {
    int manual = 0;
    for (int i = 0; i < p[0]->mesh->n; i++) manual |= p[0]->mesh->types[i] == SR_AXIS_MANUAL;
    if (manual) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, p[0]);
      sr_raise(I, "ValueError",
               "mesh %s contains manual axes which is not allowed when using `jax.set_mesh`. Please use "
               "`jax.shard_map` to enter into `Manual` mode instead.",
               b.p);
      sr_buf_free(&b);
      return NULL;
    }
  }
  SetMesh *s = sr_xcalloc(1, sizeof *s);
  s->prev = I->jax->mesh;
  s->mesh = p[0]->kind == SR_V_NONE ? NULL : p[0]->mesh;
  /* a global setter too: the mesh is set as soon as set_mesh is called */
  I->jax->mesh = s->mesh;
  return sr_obj(&set_mesh_class, s);
}

static SrVal *bi_use_abstract_mesh(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "use_abstract_mesh", "mesh", p) < 0) return NULL;
  if (p[0]->kind != SR_V_MESH || !p[0]->mesh->abstract)
    return sr_raise(I, "ValueError", "Expected an AbstractMesh, got %s", sr_val_kind_name(p[0]));
  SetMesh *s = sr_xcalloc(1, sizeof *s);
  s->mesh = p[0]->mesh;
  s->abstract = 1;
  return sr_obj(&set_mesh_class, s);
}

static SrVal *set_mesh_enter(SrInterp *I, SrVal *self) {
  SetMesh *s = self->obj.data;
  if (s->abstract) {
    /* use_abstract_mesh.__enter__: the mesh in context keeps its size */
    const SrMesh *prev = sr_jax_abstract_mesh(I->jax);
    if (prev->n && s->mesh->n && sr_mesh_size(prev) != sr_mesh_size(s->mesh)) {
      SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_mesh_str(&b, s->mesh);
      sr_mesh_str(&c, prev);
      sr_raise(I, "ValueError",
               "use_abstract_mesh cannot change the size of the mesh. Got new mesh: %s with size=%lld and prev mesh: "
               "%s with size=%lld",
               b.p, (long long)sr_mesh_size(s->mesh), c.p, (long long)sr_mesh_size(prev));
      sr_buf_free(&b);
      sr_buf_free(&c);
      return NULL;
    }
    if (I->jax->nabstract == 32) return sr_raise(I, "RuntimeError", "abstract meshes nested too deeply");
    I->jax->abstract[I->jax->nabstract++] = s->mesh;
  }
  return sr_ref(self);
}

static void set_mesh_exit(SrInterp *I, SrVal *self) {
  SetMesh *s = self->obj.data;
  if (s->abstract) {
    if (I->jax->nabstract) I->jax->nabstract--;
  } else {
    I->jax->mesh = s->prev;
  }
}

static const SrContextOps set_mesh_ctx = {&set_mesh_class, set_mesh_enter, set_mesh_exit, 0};

static SrVal *bi_get_abstract_mesh(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "get_abstract_mesh() takes no arguments");
  return sr_mesh_val(NULL, sr_jax_abstract_mesh(I->jax));
}

static SrVal *bi_get_mesh(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "get_mesh() takes no arguments");
  if (!I->jax->mesh) {
    SrMesh m = {0};
    return sr_mesh_val(NULL, sr_mesh_intern(&m));
  }
  return sr_mesh_val(NULL, I->jax->mesh);
}

/* ---- jax.config ---- */

static SrVal *bi_config_update(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "update", "name, val", p) < 0) return NULL;
  const char *name = sr_as_str(I, p[0], "the option name");
  if (!name) return NULL;
  if (strcmp(name, "jax_num_cpu_devices") == 0) {
    int64_t n;
    if (sr_as_int(I, p[1], "jax_num_cpu_devices", &n) < 0) return NULL;
    if (n < 1 || n > 4096) return sr_raise(I, "ValueError", "jax_num_cpu_devices must be between 1 and 4096");
    if (I->jax->devices_used && n != I->jax->num_devices)
      return sr_raise(I, "RuntimeError", "jax_num_cpu_devices config should be updated before backends are initialized.");
    /* under MPI the ranks split the devices evenly (the backend takes the
       new count when a device is first used) */
    int ranks = I->jax->num_ranks;
    if (ranks > 1 && n % ranks != 0)
      return sr_raise(I, "ValueError",
                      "jax_num_cpu_devices = %lld cannot be split over the %d MPI ranks of this job: it must be a "
                      "multiple of %d",
                      (long long)n, ranks, ranks);
    I->jax->num_devices = (int)n;
    return sr_none();
  }
  if (strcmp(name, "jax_threefry_partitionable") == 0) {
    I->jax->threefry_original = !sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_enable_custom_prng") == 0) {
    I->jax->enable_custom_prng = sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_random_seed_offset") == 0) {
    int64_t n;
    if (sr_as_int(I, p[1], "jax_random_seed_offset", &n) < 0) return NULL;
    I->jax->random_seed_offset = (int)n;
    return sr_none();
  }
  if (strcmp(name, "jax_default_prng_impl") == 0) {
    int impl = sr_default_prng_impl_value(I, p[1]);
    if (impl < 0) return NULL;
    I->jax->default_prng = impl;
    return sr_none();
  }
  if (strcmp(name, "jax_legacy_prng_key") == 0) {
    int m = sr_legacy_prng_key_mode(I, p[1]);
    if (m < 0) return NULL;
    I->jax->legacy_prng_key = m;
    return sr_none();
  }
  if (strcmp(name, "jax_enable_x64") == 0) {
    I->jax->enable_x64 = sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_explicit_x64_dtypes") == 0) {
    /* config.ExplicitX64Mode: WARN, ERROR, ALLOW (1, 2, 3, or by name) */
    SrVal *v = p[1];
    int m = -1;
    if (v->kind == SR_V_STR) {
      const char *s = v->str.s;
      m = strcmp(s, "warn") == 0 ? 0 : strcmp(s, "error") == 0 ? 1 : strcmp(s, "allow") == 0 ? 2 : -1;
    } else if (v->kind == SR_V_INT && v->i >= 1 && v->i <= 3) {
      m = (int)v->i - 1;
    }
    if (m < 0) {
      SrBuf b = SR_BUF_INIT;
      sr_to_repr(I, &b, v);
      sr_raise(I, "ValueError", "%s is not a valid ExplicitX64Mode", b.p);
      sr_buf_free(&b);
      return NULL;
    }
    I->jax->explicit_x64 = m;
    return sr_none();
  }
  if (strcmp(name, "jax_remove_size_one_mesh_axis_from_type") == 0) {
    sr_type_set_remove_size_one(sr_val_truthy(p[1]));
    return sr_none();
  }
  if (strcmp(name, "jax_default_matmul_precision") == 0) {
    if (p[1]->kind != SR_V_NONE && p[1]->kind != SR_V_STR)
      return sr_raise(I, "ValueError", "new string config value must be None or of type str, got %s.",
                      sr_val_kind_name(p[1]));
    I->jax->mmp_global = p[1]->kind == SR_V_STR ? sr_intern_cstr(p[1]->str.s) : NULL;
    return sr_none();
  }
  if (strcmp(name, "jax_numpy_rank_promotion") == 0) {
    int v = sr_rank_promotion_value(I, p[1]);
    if (v < 0) return NULL;
    I->jax->rank_promotion = v;
    return sr_none();
  }
  if (strcmp(name, "jax_numpy_dtype_promotion") == 0) {
    int v = sr_dtype_promotion_value(I, p[1]);
    if (v < 0) return NULL;
    I->jax->strict_promotion = v;
    return sr_none();
  }
  if (strcmp(name, "jax_allow_f16_reductions") == 0) {
    I->jax->no_f16_reductions = !sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_check_static_indices") == 0) {
    I->jax->check_static_indices = sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_check_tracer_leaks") == 0) {
    I->jax->check_tracer_leaks = sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_softmax_custom_jvp") == 0) {
    I->jax->softmax_custom_jvp = sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_disable_jit") == 0) {
    I->jax->disable_jit = sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_explain_cache_misses") == 0) {
    I->jax->explain_cache_misses = sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_auto_pcast") == 0) {
    I->jax->no_auto_pcast = !sr_val_truthy(p[1]);
    return sr_none();
  }
  if (strcmp(name, "jax_pprint_use_color") == 0) {
    sr_pprint_use_color = sr_val_truthy(p[1]);
    return sr_none();
  }
  /* options that change nothing here are accepted */
  static const char *const accepted[] = {"jax_platforms", "jax_platform_name", NULL};
  for (int i = 0; accepted[i]; i++)
    if (strcmp(name, accepted[i]) == 0) return sr_none();
  return sr_raise(I, "AttributeError", "Unrecognized config option: %s", name);
}

/* ---- jaxprs as values ---- */

static SrVal *jaxpr_getattr(SrInterp *I, SrVal *self, const char *name) {
  SrJaxpr *j = self->jx.jaxpr;
  (void)I;
  if (strcmp(name, "jaxpr") == 0) return sr_ref(self);
  if (strcmp(name, "eqns") == 0) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->neqn);
    for (uint32_t i = 0; i < j->neqn; i++) {
      SrBuf b = SR_BUF_INIT;
      sr_print_eqn(&b, &j->eqns[i]);
      sr_seq_push(NULL, l, sr_word(NULL, b.p, b.len));
      sr_buf_free(&b);
    }
    return l;
  }
  if (strcmp(name, "consts") == 0) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->nconst);
    for (uint32_t i = 0; i < j->nconst; i++) sr_seq_push(NULL, l, sr_ref(j->consts && j->consts[i] ? j->consts[i] : sr_none()));
    return l;
  }
  return NULL;
}

/* jax.config.x64_enabled (config.py's property): jax_enable_x64's value */
static SrVal *config_x64_enabled(SrInterp *I) { return sr_bool(I->jax->enable_x64); }

/* jax.config._read(name): an option's value (the options kept here) */
static SrVal *bi_config_read(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "_read", "name", p) < 0) return NULL;
  const char *name = sr_as_str(I, p[0], "the option name");
  if (!name) return NULL;
  if (strcmp(name, "jax_enable_x64") == 0) return sr_bool(I->jax->enable_x64);
  if (strcmp(name, "jax_numpy_dtype_promotion") == 0)
    return sr_str_cstr(NULL, I->jax->strict_promotion ? "strict" : "standard");
  if (strcmp(name, "jax_numpy_rank_promotion") == 0) {
    static const char *const names[] = {"allow", "warn", "raise"};
    return sr_str_cstr(NULL, names[I->jax->rank_promotion]);
  }
  if (strcmp(name, "jax_disable_jit") == 0) return sr_bool(I->jax->disable_jit);
  if (strcmp(name, "jax_explain_cache_misses") == 0) return sr_bool(I->jax->explain_cache_misses);
  if (strcmp(name, "jax_softmax_custom_jvp") == 0) return sr_bool(I->jax->softmax_custom_jvp);
  return sr_raise(I, "AttributeError", "Unrecognized config option: %s", name);
}

/* ---- registration ---- */

static void reg_dtype(const char *name, SrDtype d) {
  char buf[64];
  snprintf(buf, sizeof buf, "jax.numpy.%s", name);
  sr_register(buf, sr_dtype_val(NULL, d));
  snprintf(buf, sizeof buf, "numpy.%s", name);
  sr_register(buf, sr_dtype_val(NULL, d));
}

void sr_builtins_jax_init(void) {
  sr_array_methods_init();
  sr_sharding_init();
  sr_def("jax.set_mesh jax.sharding.set_mesh", bi_set_mesh,
         "set_mesh(mesh): sets the mesh in context (also usable in a with statement)");
  sr_def("jax.sharding.use_abstract_mesh", bi_use_abstract_mesh,
         "use_abstract_mesh(abstract_mesh): a context manager that changes the abstract mesh");
  sr_def("jax.sharding.get_abstract_mesh", bi_get_abstract_mesh,
         "get_abstract_mesh(): the abstract mesh in context");
  sr_def("jax.get_mesh jax.sharding.get_mesh", bi_get_mesh, "get_mesh(): the concrete mesh set with set_mesh");
  sr_def("jax.config.update", bi_config_update,
         "jax.config.update(name, value): jax_num_cpu_devices (before first use), jax_enable_x64");
  sr_def_private("jax.config._read", sr_builtin_with("jax.config._read", bi_config_read, NULL, NULL));
  sr_def_module_property("jax.config.x64_enabled", config_x64_enabled);
  sr_register("jax.sharding.AxisType", sr_module("jax.sharding.AxisType"));
  sr_register("jax.sharding.AxisType.Explicit", sr_axistype_val(SR_AXIS_EXPLICIT));
  sr_register("jax.sharding.AxisType.Auto", sr_axistype_val(SR_AXIS_AUTO));
  sr_register("jax.sharding.AxisType.Manual", sr_axistype_val(SR_AXIS_MANUAL));
  /* jax.sharding.UnreducedKind: an Enum class, as partition_spec.py
     declares it (sum, max, min = auto()) */
  {
    SrVal *ns = sr_dict(NULL);
    static const int kinds[] = {SR_UK_SUM, SR_UK_MAX, SR_UK_MIN};
    for (int i = 0; i < 3; i++) sr_dict_set(NULL, ns, sr_str_cstr(NULL, sr_ukind_name(kinds[i])), sr_int(NULL, i + 1));
    SrVal *cls = sr_enum_class_new(NULL, "UnreducedKind", sr_lookup_qualname("enum.Enum"), ns);
    sr_register("jax.sharding.UnreducedKind", cls);
    for (int i = 0; i < 3; i++) {
      char q[64];
      snprintf(q, sizeof q, "jax.sharding.UnreducedKind.%s", sr_ukind_name(kinds[i]));
      sr_register(q, sr_getattr(NULL, cls, sr_ukind_name(kinds[i])));
    }
  }
  sr_register("jax.sharding.PartitionSpec.UNCONSTRAINED", sr_word(NULL, "UNCONSTRAINED", 13));
  /* the modules themselves, so that bare `jax`, `jnp`... resolve */
  sr_register("builtins.jax", sr_module("jax"));
  sr_register("builtins.jnp", sr_module("jax.numpy"));
  sr_register("builtins.lax", sr_module("jax.lax"));
  sr_register("builtins.np", sr_module("numpy"));
  static const struct {
    const char *name;
    SrDtype d;
  } dtypes[] = {
    {"bool_", SR_BOOL}, {"bool", SR_BOOL}, {"int8", SR_I8}, {"int16", SR_I16}, {"int32", SR_I32},
    {"int64", SR_I64}, {"uint8", SR_U8}, {"uint16", SR_U16}, {"uint32", SR_U32}, {"uint64", SR_U64},
    {"float16", SR_F16}, {"bfloat16", SR_BF16}, {"float32", SR_F32}, {"float64", SR_F64},
    {"complex64", SR_C64}, {"complex128", SR_C128}, {"int4", SR_I4}, {"uint4", SR_U4},
    {"float8_e4m3fn", SR_F8_E4M3FN}, {"float8_e5m2", SR_F8_E5M2}, {NULL, 0},
  };
  for (int i = 0; dtypes[i].name; i++) reg_dtype(dtypes[i].name, dtypes[i].d);
  /* bool is bool_ (scalar_types.py: one object, as numpy's) */
  sr_register("jax.numpy.bool", sr_ref(sr_lookup_qualname("jax.numpy.bool_")));
  sr_register("numpy.bool", sr_ref(sr_lookup_qualname("numpy.bool_")));
  /* ml_dtypes' other narrow types, jax.numpy's only */
  static const struct {
    const char *name;
    SrDtype d;
  } ml[] = {
    {"float8_e4m3b11fnuz", SR_F8_E4M3B11FNUZ}, {"float8_e4m3fnuz", SR_F8_E4M3FNUZ}, {"float8_e5m2fnuz", SR_F8_E5M2FNUZ},
    {"float8_e3m4", SR_F8_E3M4}, {"float8_e4m3", SR_F8_E4M3}, {"float8_e8m0fnu", SR_F8_E8M0FNU},
    {"float4_e2m1fn", SR_F4_E2M1FN}, {"float6_e2m3fn", SR_F6_E2M3FN}, {"float6_e3m2fn", SR_F6_E3M2FN},
    {"int2", SR_I2}, {"uint2", SR_U2},
  };
  for (size_t i = 0; i < sizeof ml / sizeof *ml; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "jax.numpy.%s", ml[i].name);
    sr_register(buf, sr_dtype_val(NULL, ml[i].d));
  }
  sr_kind_getattr_set(SR_V_JAXPR, jaxpr_getattr);
  sr_context_register(&set_mesh_ctx);
}

/* jax._src.api, as JAX's tests import it (from jax._src import api): the
   public functions it defines, the same objects as jax's (its NotNeeded
   and NotSaveable are vjp_api.c's).  Run after every jax.* name is
   registered. */
void sr_jax_src_api_init(void) {
  static const char *const names[] = {
    "jit", "grad", "value_and_grad", "vjp", "jvp", "linearize", "vmap", "pmap", "jacfwd", "jacrev", "jacobian",
    "hessian", "make_jaxpr", "eval_shape", "named_call", "named_scope", "device_put", "device_get",
    "block_until_ready", "ShapeDtypeStruct", "checkpoint", "remat", "linear_transpose", "disable_jit",
    "ensure_compile_time_eval", "effects_barrier", "devices", "local_devices", "device_count",
    "local_device_count", "process_index", "process_count", "pure_callback", "fwd_and_bwd", "typeof", NULL,
  };
  for (int i = 0; names[i]; i++) {
    char q[96], a[96];
    snprintf(q, sizeof q, "jax.%s", names[i]);
    snprintf(a, sizeof a, "jax._src.api.%s", names[i]);
    SrVal *v = sr_lookup_qualname(q);
    if (v && !sr_lookup_qualname(a)) sr_register(a, sr_ref(v));
  }
}

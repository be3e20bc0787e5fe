/* scopes.c: jax.named_scope and jax.disable_jit, context managers that
 * are decorators too (contextlib's ContextDecorator, as JAX's are).
 * named_scope(name) extends the name stack the equations bound in it are
 * recorded under (source_info_util.extend_name_stack), so their op names
 * in :comm and compile().as_text() read NAME/op; disable_jit(disable=True)
 * makes jax.jit calls (and jax.numpy's own jits) run their function as it
 * is, op by op (api.disable_jit).  Registered by sr_scopes_init (jax.h). */
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "ir/name_stack.h"
#include "jax/api.h"
#include "jax/jax.h"
#include "jax/layout.h"
#include "jax/random.h"
#include "text/print_val.h"
#include "py/objects.h"
#include "util/intern.h"
#include "util/mem.h"

typedef struct Scope {
  const char *name;   /* named_scope's, interned; NULL for disable_jit */
  int disable;        /* disable_jit's value */
  int cte;            /* ensure_compile_time_eval's scope */
  int *flag;          /* a config option's switch (its value: disable) */
  const char **sflag; /* jax_default_matmul_precision's context value (its
                         value: sval) */
  const char *sval, *ssaved;
  const char *saved_ns;
  int saved_disable;
  int depth;          /* times entered and not left */
} Scope;

static void scope_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<contextlib._GeneratorContextManager object at %p>", v->obj.data);
}

static SrVal *scope_call(SrInterp *I, SrVal *self, SrArgs *a);
static const SrLangOps scope_ops = {.call = scope_call};
static const SrClass scope_class = {"_GeneratorContextManager", free, scope_repr, NULL, &scope_ops};

static SrVal *scope_enter(SrInterp *I, SrVal *self) {
  Scope *s = self->obj.data;
  if (s->depth++) return sr_raise(I, "RuntimeError", "generator didn't yield");
  if (s->sflag) {
    /* a context's value overrides the global one while entered */
    s->ssaved = *s->sflag;
    s->saved_disable = I->jax->mmp_ctx_set;
    *s->sflag = s->sval;
    I->jax->mmp_ctx_set = 1;
  } else if (s->flag) {
    s->saved_disable = *s->flag;
    *s->flag = s->disable;
  } else if (s->cte) {
    s->saved_disable = I->jax->compile_time_eval;
    I->jax->compile_time_eval = 1;
  } else if (s->name) {
    s->saved_ns = I->ns;
    I->ns = sr_ns_concat(I->ns, s->name);
  } else {
    s->saved_disable = I->jax->disable_jit;
    I->jax->disable_jit = s->disable;
  }
  return sr_none();
}

static void scope_exit(SrInterp *I, SrVal *self) {
  Scope *s = self->obj.data;
  if (!s->depth) return;
  s->depth--;
  if (s->sflag) {
    *s->sflag = s->ssaved;
    I->jax->mmp_ctx_set = s->saved_disable;
  } else if (s->flag) {
    *s->flag = s->saved_disable;
  } else if (s->cte) {
    I->jax->compile_time_eval = s->saved_disable;
  } else if (s->name) {
    I->ns = s->saved_ns;
  } else {
    I->jax->disable_jit = s->saved_disable;
  }
}

static const SrContextOps scope_ctx = {&scope_class, scope_enter, scope_exit, 0};

/* @named_scope("x") / @disable_jit(): the function called inside a fresh
   entry of the scope */
typedef struct Wrapped {
  SrVal *fn;
  Scope scope;
} Wrapped;

static void wrapped_free(void *d) {
  Wrapped *w = d;
  sr_unref(w->fn);
  free(w);
}

static SrVal *wrapped_call(SrInterp *I, SrArgs *a) {
  Wrapped *w = sr_current_builtin(I)->data;
  Scope *s = sr_xcalloc(1, sizeof *s);
  *s = w->scope;
  s->depth = 0;
  SrVal *ctx = sr_obj(&scope_class, s);
  SrVal *e = scope_enter(I, ctx);
  SrVal *r = e ? sr_call(I, w->fn, a) : NULL;
  sr_unref(e);
  scope_exit(I, ctx);
  sr_unref(ctx);
  return r;
}

static SrVal *scope_call(SrInterp *I, SrVal *self, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "'_GeneratorContextManager' object is not callable");
  Wrapped *w = sr_xcalloc(1, sizeof *w);
  w->fn = sr_ref(a->v[0]);
  w->scope = *(Scope *)self->obj.data;
  SrVal *name = sr_getattr(I, a->v[0], "__name__");
  const char *nm = name && name->kind == SR_V_STR ? sr_intern_cstr(name->str.s) : "wrapped";
  if (!name) sr_exc_clear(I);
  sr_unref(name);
  return sr_builtin_with(nm, wrapped_call, w, wrapped_free);
}

static SrVal *jax_named_scope(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "named_scope", "name", p) < 0) return NULL;
  if (p[0]->kind != SR_V_STR) return sr_raise(I, "TypeError", "named_scope name argument must be a string.");
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->name = sr_intern_cstr(p[0]->str.s);
  return sr_obj(&scope_class, s);
}

/* jax.named_call(fun, *, name=None): fun wrapped in named_scope(name or
   fun.__name__) (api.py: source_info_util.extend_name_stack(name)(fun)) */
static SrVal *jax_named_call(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "named_call", "fun, *, name=", p) < 0) return NULL;
  SrVal *name = p[1] && p[1]->kind != SR_V_NONE ? sr_ref(p[1]) : sr_getattr(I, p[0], "__name__");
  if (!name) return NULL;
  if (name->kind != SR_V_STR) {
    sr_unref(name);
    return sr_raise(I, "TypeError", "named_scope name argument must be a string.");
  }
  Scope sc = {0};
  sc.name = sr_intern_cstr(name->str.s);
  sr_unref(name);
  Wrapped *w = sr_xcalloc(1, sizeof *w);
  w->fn = sr_ref(p[0]);
  w->scope = sc;
  SrVal *fname = sr_getattr(I, p[0], "__name__");
  const char *nm = fname && fname->kind == SR_V_STR ? sr_intern_cstr(fname->str.s) : "wrapped";
  if (!fname) sr_exc_clear(I);
  sr_unref(fname);
  return sr_builtin_with(nm, wrapped_call, w, wrapped_free);
}

static SrVal *jax_disable_jit(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "disable_jit", "disable=", p) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->disable = !p[0] || sr_val_truthy(p[0]);
  return sr_obj(&scope_class, s);
}

/* ensure_compile_time_eval(): operations whose operands are all known
   (no tracer of a trace being built) run then and there, even while
   tracing (core.eval_context) */
static SrVal *jax_ensure_compile_time_eval(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "ensure_compile_time_eval", "", NULL) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->cte = 1;
  return sr_obj(&scope_class, s);
}

/* jax.remove_size_one_mesh_axis_from_type(new_val): the config option as
   a context manager (or decorator); mesh axes of size 1 leave the types
   made in it (ir/type.h) */
static SrVal *jax_remove_size_one(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "remove_size_one_mesh_axis_from_type", "new_val", p) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &sr_type_drop_unit_axes;
  s->disable = sr_val_truthy(p[0]);
  return sr_obj(&scope_class, s);
}

/* jax._src.config.auto_pcast(new_val): jax_auto_pcast as a context
   manager (or decorator) */
static SrVal *config_auto_pcast(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "auto_pcast", "new_val", p) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->no_auto_pcast;
  s->disable = !sr_val_truthy(p[0]);
  return sr_obj(&scope_class, s);
}

/* jax.legacy_prng_key(value) and jax.debug_key_reuse(value): config
   options as context managers (or decorators) whose values here change
   nothing: legacy uint32 keys are allowed and key reuse is not checked
   (JAX's defaults). The values JAX would act on otherwise are
   refused rather than ignored. */
static int noop_switch;

static SrVal *config_noop(SrInterp *I, SrArgs *a, const char *fn) {
  SrVal *p[1];
  if (sr_args_parse(I, a, fn, "new_val", p) < 0) return NULL;
  if (strcmp(fn, "legacy_prng_key") == 0) {
    int m = sr_legacy_prng_key_mode(I, p[0]);
    if (m < 0) return NULL;
    Scope *s = sr_xcalloc(1, sizeof *s);
    s->flag = &I->jax->legacy_prng_key;
    s->disable = m;
    return sr_obj(&scope_class, s);
  } else if (strcmp(fn, "debug_key_reuse") == 0 && sr_val_truthy(p[0])) {
    return sr_raise(I, "NotImplementedError", "debug_key_reuse(True): shardrepl does not check key reuse");
  }
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &noop_switch;
  return sr_obj(&scope_class, s);
}

static SrVal *config_legacy_prng_key(SrInterp *I, SrArgs *a) { return config_noop(I, a, "legacy_prng_key"); }
static SrVal *config_debug_key_reuse(SrInterp *I, SrArgs *a) { return config_noop(I, a, "debug_key_reuse"); }

/* jax.no_tracing(new_val=True) and jax.no_execution(new_val=True): the
   config options as context managers (bool_state's default context
   value is True) */
static SrVal *flag_scope(SrInterp *I, SrArgs *a, const char *name, int *flag) {
  SrVal *p[1];
  if (sr_args_parse(I, a, name, "new_val=", p) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = flag;
  s->disable = !p[0] || sr_val_truthy(p[0]);
  return sr_obj(&scope_class, s);
}

static SrVal *jax_no_tracing(SrInterp *I, SrArgs *a) { return flag_scope(I, a, "no_tracing", &I->jax->no_tracing); }
static SrVal *jax_no_execution(SrInterp *I, SrArgs *a) {
  return flag_scope(I, a, "no_execution", &I->jax->no_execution);
}

/* jax.default_prng_impl(name), jax.enable_custom_prng(new_val=True),
   jax.threefry_partitionable(new_val=True), config.random_seed_offset(n):
   the jax.random options as context managers */
static SrVal *jax_default_prng_impl(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "default_prng_impl", "new_val", p) < 0) return NULL;
  int impl = sr_default_prng_impl_value(I, p[0]);
  if (impl < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->default_prng;
  s->disable = impl;
  return sr_obj(&scope_class, s);
}

static SrVal *jax_enable_custom_prng(SrInterp *I, SrArgs *a) {
  return flag_scope(I, a, "enable_custom_prng", &I->jax->enable_custom_prng);
}

static SrVal *jax_threefry_partitionable(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "threefry_partitionable", "new_val=", p) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->threefry_original;
  s->disable = p[0] && !sr_val_truthy(p[0]);
  return sr_obj(&scope_class, s);
}

static SrVal *jax_random_seed_offset(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  int64_t n;
  if (sr_args_parse(I, a, "random_seed_offset", "new_val", p) < 0 || sr_as_int(I, p[0], "new_val", &n) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->random_seed_offset;
  s->disable = (int)n;
  return sr_obj(&scope_class, s);
}

/* jax.default_device(device): jax_default_device as a context manager;
   a platform's name stands for its first device (here "cpu", device 0).
   A jit call whose arguments are all uncommitted runs there. */
static SrVal *jax_default_device(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "default_device", "new_val", p) < 0) return NULL;
  int id = -1;
  if (p[0]->kind == SR_V_NONE) {
    id = -1;
  } else if (p[0]->kind == SR_V_STR) {
    if (strcmp(p[0]->str.s, "cpu") != 0)
      return sr_raise(I, "RuntimeError",
                      "Unknown backend: '%s' requested, but no platforms that are instances of %s are present. "
                      "Platforms present are: cpu",
                      p[0]->str.s, p[0]->str.s);
    id = 0;
  } else {
    id = sr_concrete_device_id(p[0]);
    if (id < 0) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, p[0]);
      sr_raise(I, "ValueError", "jax.default_device must be passed a Device object (e.g. `jax.devices('cpu')[0]`), got: %s",
               sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
  }
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->default_device;
  s->disable = id + 1;
  return sr_obj(&scope_class, s);
}

/* jax.check_tracer_leaks(new_val=True), jax.checking_leaks(): the
   jax_check_tracer_leaks option as a context manager (or decorator) */
static SrVal *jax_check_tracer_leaks(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "check_tracer_leaks", "new_val=", p) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->check_tracer_leaks;
  s->disable = !p[0] || sr_val_truthy(p[0]);
  return sr_obj(&scope_class, s);
}

static SrVal *jax_checking_leaks(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "checking_leaks", "", NULL) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->check_tracer_leaks;
  s->disable = 1;
  return sr_obj(&scope_class, s);
}

/* jax.default_matmul_precision(new_val): jax_default_matmul_precision
   as a context manager (or decorator); None or a precision's name */
static SrVal *jax_default_matmul_precision(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "default_matmul_precision", "new_val", p) < 0) return NULL;
  if (p[0]->kind != SR_V_NONE && p[0]->kind != SR_V_STR) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, p[0]);
    sr_raise(I, "ValueError", "new string config value must be None or of type str, got %s of type %s.", sr_buf_str(&b),
             sr_val_kind_name(p[0]));
    sr_buf_free(&b);
    return NULL;
  }
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->sflag = &I->jax->mmp_ctx;
  s->sval = p[0]->kind == SR_V_STR ? sr_intern_cstr(p[0]->str.s) : NULL;
  return sr_obj(&scope_class, s);
}

/* jax.allow_f16_reductions(new_val=True): jax_allow_f16_reductions as a
   context manager (or decorator) */
static SrVal *jax_allow_f16_reductions(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "allow_f16_reductions", "new_val=", p) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->no_f16_reductions;
  s->disable = p[0] && !sr_val_truthy(p[0]);
  return sr_obj(&scope_class, s);
}

/* jax.softmax_custom_jvp(new_val=True): jax_softmax_custom_jvp as a
   context manager (or decorator) */
static SrVal *jax_softmax_custom_jvp(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "softmax_custom_jvp", "new_val=", p) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->softmax_custom_jvp;
  s->disable = !p[0] || sr_val_truthy(p[0]);
  return sr_obj(&scope_class, s);
}

/* the value of jax_numpy_rank_promotion: 0 allow, 1 warn, 2 raise;
   -1 with enum_state's ValueError */
int sr_rank_promotion_value(SrInterp *I, SrVal *v) {
  static const char *const names[] = {"allow", "warn", "raise"};
  for (int i = 0; v->kind == SR_V_STR && i < 3; i++)
    if (strcmp(v->str.s, names[i]) == 0) return i;
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  sr_raise(I, "ValueError", "new enum value must be in ['allow', 'warn', 'raise'], got %s of type <class '%s'>.",
           sr_buf_str(&b), sr_val_kind_name(v));
  sr_buf_free(&b);
  return -1;
}

/* jax.numpy_rank_promotion(new_val): jax_numpy_rank_promotion as a context
   manager (or decorator) */
static SrVal *jax_numpy_rank_promotion(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "numpy_rank_promotion", "new_val", p) < 0) return NULL;
  int v = sr_rank_promotion_value(I, p[0]);
  if (v < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->rank_promotion;
  s->disable = v;
  return sr_obj(&scope_class, s);
}

/* the value of jax_numpy_dtype_promotion (config.NumpyDtypePromotion):
   0 standard, 1 strict; -1 with enum_class_state's ValueError */
int sr_dtype_promotion_value(SrInterp *I, SrVal *v) {
  if (v->kind == SR_V_STR && strcmp(v->str.s, "standard") == 0) return 0;
  if (v->kind == SR_V_STR && strcmp(v->str.s, "strict") == 0) return 1;
  SrBuf b = SR_BUF_INIT;
  sr_to_repr(I, &b, v);
  sr_raise(I, "ValueError", "%s is not a valid NumpyDtypePromotion", sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

/* jax.numpy_dtype_promotion(new_val): jax_numpy_dtype_promotion as a
   context manager (or decorator): 'standard' or 'strict' */
static SrVal *jax_numpy_dtype_promotion(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "numpy_dtype_promotion", "new_val", p) < 0) return NULL;
  int v = sr_dtype_promotion_value(I, p[0]);
  if (v < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->strict_promotion;
  s->disable = v;
  return sr_obj(&scope_class, s);
}

/* jax.enable_x64(new_val=True): jax_enable_x64 as a context manager (or
   decorator), config.py's bool_state */
static SrVal *jax_enable_x64(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "enable_x64", "new_val=", p) < 0) return NULL;
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->enable_x64;
  s->disable = !p[0] || sr_val_truthy(p[0]);
  return sr_obj(&scope_class, s);
}

/* jax._src.config.explicit_x64_dtypes(new_val): jax_explicit_x64_dtypes
   as a context manager (config.ExplicitX64Mode: 'warn', 'error', 'allow') */
static SrVal *config_explicit_x64_dtypes(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "explicit_x64_dtypes", "new_val", p) < 0) return NULL;
  static const char *const names[] = {"warn", "error", "allow"};
  int m = -1;
  for (int i = 0; p[0]->kind == SR_V_STR && i < 3; i++)
    if (strcmp(p[0]->str.s, names[i]) == 0) m = i;
  if (m < 0) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, p[0]);
    sr_raise(I, "ValueError", "%s is not a valid ExplicitX64Mode", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  Scope *s = sr_xcalloc(1, sizeof *s);
  s->flag = &I->jax->explicit_x64;
  s->disable = m;
  return sr_obj(&scope_class, s);
}

void sr_scopes_init(void) {
  sr_def("jax.numpy_dtype_promotion jax._src.config.numpy_dtype_promotion", jax_numpy_dtype_promotion,
         "numpy_dtype_promotion(new_val): a context manager (or decorator) in which jax.numpy's implicit dtype "
         "promotion is 'standard' or 'strict' (no promotion between differing strong dtypes)");
  sr_def("jax.enable_x64 jax._src.config.enable_x64", jax_enable_x64,
         "enable_x64(new_val=True): a context manager (or decorator) in which jax_enable_x64 is new_val");
  sr_def("jax._src.config.explicit_x64_dtypes", config_explicit_x64_dtypes,
         "explicit_x64_dtypes(new_val): a context manager (or decorator) in which jax_explicit_x64_dtypes is new_val "
         "('warn', 'error' or 'allow')");
  sr_def("jax.numpy_rank_promotion", jax_numpy_rank_promotion,
         "numpy_rank_promotion(new_val): a context manager (or decorator) in which jax.numpy's implicit rank "
         "promotion is 'allow'ed, 'warn's or 'raise's");
  sr_def("jax.softmax_custom_jvp", jax_softmax_custom_jvp,
         "softmax_custom_jvp(new_val=True): a context manager (or decorator) in which jax.nn.softmax is the "
         "custom_jvp _softmax (jax_softmax_custom_jvp; by default the rule-less one with stop_gradient)");
  sr_def("jax.allow_f16_reductions", jax_allow_f16_reductions,
         "allow_f16_reductions(new_val=True): a context manager (or decorator); with False, reduce_sum of float16 or "
         "bfloat16 over an axis larger than 1 is an error");
  sr_def("jax.default_matmul_precision jax._src.config.default_matmul_precision", jax_default_matmul_precision,
         "default_matmul_precision(new_val): a context manager (or decorator) in which dot products with "
         "precision=None take new_val's precision ('bfloat16', 'tensorfloat32', 'float32', ...)");
  sr_def("jax.check_tracer_leaks", jax_check_tracer_leaks,
         "check_tracer_leaks(new_val=True): a context manager (or decorator) in which a tracer that outlives its "
         "trace is an error (jax_check_tracer_leaks)");
  sr_def("jax.checking_leaks", jax_checking_leaks,
         "checking_leaks(): check_tracer_leaks(True), a context manager in which a tracer that outlives its trace is "
         "an error");
  sr_def("jax.default_device", jax_default_device,
         "default_device(device): a context manager (or decorator) in which jit calls of uncommitted arguments run on "
         "device");
  sr_def("jax.no_tracing", jax_no_tracing,
         "no_tracing(new_val=True): a context manager (or decorator) in which a jit call that would trace raises");
  sr_def("jax.no_execution", jax_no_execution,
         "no_execution(new_val=True): a context manager (or decorator) in which running a jit call raises");
  sr_def("jax.named_call", jax_named_call,
         "named_call(fun, *, name=None): fun, its equations bound under the name scope name (fun.__name__ by default)");
  sr_def("jax.legacy_prng_key jax._src.config.legacy_prng_key", config_legacy_prng_key,
         "legacy_prng_key(new_val): a context manager (or decorator) in which jax.random's legacy uint32 keys are "
         "'allow'ed, 'warn' or are an 'error'");
  sr_def("jax.default_prng_impl jax._src.config.default_prng_impl", jax_default_prng_impl,
         "default_prng_impl(name): a context manager (or decorator) in which jax.random.key and PRNGKey make keys of "
         "that implementation ('threefry2x32', 'rbg', 'unsafe_rbg')");
  sr_def("jax.enable_custom_prng jax._src.config.enable_custom_prng", jax_enable_custom_prng,
         "enable_custom_prng(new_val=True): a context manager (or decorator) in which jax.random returns typed keys "
         "for raw ones (and warns that raw keys are deprecated)");
  sr_def("jax.threefry_partitionable jax._src.config.threefry_partitionable", jax_threefry_partitionable,
         "threefry_partitionable(new_val=True): a context manager (or decorator); with False, threefry2x32 draws the "
         "bits of JAX before 0.5 (jax_threefry_partitionable=False)");
  sr_def("jax._src.config.random_seed_offset", jax_random_seed_offset,
         "random_seed_offset(n): a context manager (or decorator) in which n is added to every seed of "
         "jax.random.key / PRNGKey");
  sr_def("jax.debug_key_reuse", config_debug_key_reuse,
         "debug_key_reuse(False): a context manager (or decorator) in which key reuse is not checked");
  sr_def("jax._src.config.auto_pcast", config_auto_pcast,
         "auto_pcast(new_val): a context manager (or decorator) in which jax_auto_pcast is new_val");
  sr_def("jax.remove_size_one_mesh_axis_from_type jax._src.config.remove_size_one_mesh_axis_from_type",
         jax_remove_size_one,
         "remove_size_one_mesh_axis_from_type(new_val): a context manager (or decorator) in which mesh axes of size 1 "
         "are left out of types' shardings and varying manual axes");
  sr_def("jax.ensure_compile_time_eval jax.core.ensure_compile_time_eval jax.core.eval_context", jax_ensure_compile_time_eval,
         "ensure_compile_time_eval(): a context manager (or decorator) in which operations on known values run while "
         "tracing, giving concrete arrays");
  sr_def("jax.named_scope", jax_named_scope,
         "named_scope(name): a context manager (or decorator) that adds name to the op names of what is traced in it");
  sr_def("jax.disable_jit", jax_disable_jit,
         "disable_jit(disable=True): a context manager (or decorator) in which jax.jit runs functions op by op");
  sr_context_register(&scope_ctx);
}

/* array.c: array values (jax.Array, tracers, ShapeDtypeStruct) and avals
 * (what jax.typeof returns): their data and printing.  Their operators,
 * attributes and methods are the language's (jax/array_methods.c). */
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"
#include "text/print_val.h"
#include "util/mem.h"

/* ---- avals ---- */

static void aval_str(SrBuf *out, const SrVal *v) { sr_type_long(out, v->obj.data); }

static void aval_repr(SrBuf *out, const SrVal *v) {
  const SrType *t = v->obj.data;
  sr_buf_puts(out, "ShapedArray(");
  sr_type_str(out, t, 0);
  if (t->weak) sr_buf_puts(out, ", weak_type=True");
  sr_buf_putc(out, ')');
}

SrVal *sr_shape_tuple(const SrType *t) {
  SrVal *s = sr_seq(NULL, SR_V_TUPLE, t->ndim);
  for (int i = 0; i < t->ndim; i++) sr_seq_push(NULL, s, sr_int(NULL, t->dims[i].size));
  return s;
}

SrClass sr_aval_class = {"ShapedArray", NULL, aval_repr, aval_str, NULL};

SrVal *sr_aval_new(const SrType *t) { return sr_obj(&sr_aval_class, (void *)t); }

/* ---- arrays ---- */

/* Array objects freed lately, kept for the next concrete arrays (an eager
   loop makes and drops one an operation): a list of each thread's own. */
#ifdef SR_ASAN
#define SPARE_ARRAYS 0
#else
#define SPARE_ARRAYS 64
#endif
static _Thread_local struct {
  SrArrayObj *head;
  int n;
} spare;

static SrArrayObj *array_obj_new(void) {
  SrArrayObj *a = spare.head;
  if (!a) return sr_xcalloc(1, sizeof *a);
  spare.head = *(SrArrayObj **)a;
  spare.n--;
  memset(a, 0, sizeof *a);
  return a;
}

static void array_free(void *d) {
  SrArrayObj *a = d;
  if (a->leak) sr_trace_leak_forget(a);
  if (a->data && sr_backend_hooks.array_unref) sr_backend_hooks.array_unref(a->data);
  sr_unref(a->sharding);
  if (spare.n < SPARE_ARRAYS) {
    *(SrArrayObj **)a = spare.head;
    spare.head = a;
    spare.n++;
    return;
  }
  free(a);
}

static SrInterp *printing_interp;

int sr_array_check_deleted(SrInterp *I, const SrVal *v) {
  const SrArrayObj *a = sr_array_of(v);
  if (!a || !a->deleted) return 0;
  SrBuf b = SR_BUF_INIT;
  sr_type_str(&b, a->type, 0);
  sr_raise(I, "RuntimeError", "Array has been deleted with shape=%s.", sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

/* A scalar known while tracing (a constant the trace did not stage) is a
   concrete array in JAX: printed as one, through the backend's own
   printer.  0 when there is no backend. */
static int scalar_print(SrBuf *out, const SrArrayObj *a, int str) {
  if (!sr_backend_hooks.from_scalar || !sr_backend_hooks.array_repr || !sr_backend_hooks.array_str ||
      !sr_backend_hooks.array_unref || !printing_interp || a->type->ndim)
    return 0;
  int cplx = sr_dtype_kind(a->type->dtype) == SR_DK_COMPLEX, inexact = sr_dtype_is_inexact(a->type->dtype);
  double re = cplx ? a->value.c[0] : inexact ? a->value.f : (double)a->value.i;
  double im = cplx ? a->value.c[1] : 0;
  struct SrArray *c = sr_backend_hooks.from_scalar(printing_interp, a->type, re, im, inexact ? (int64_t)re : a->value.i);
  if (!c) return 0;
  if (str) sr_backend_hooks.array_str(printing_interp, out, c);
  else sr_backend_hooks.array_repr(printing_interp, out, c, a->type->weak);
  sr_backend_hooks.array_unref(c);
  return 1;
}

static void array_repr(SrBuf *out, const SrVal *v) {
  const SrArrayObj *a = v->obj.data;
  /* array.py: _value checks first */
  if (a->deleted && printing_interp && !printing_interp->exc) {
    sr_array_check_deleted(printing_interp, v);
    return;
  }
  switch (a->kind) {
  case SR_AV_CONCRETE:
    if (!a->type->ndim && !strcmp(sr_dtype_name(a->type->dtype), "Tok")) {
      /* core.Token, which has no repr of its own */
      sr_buf_printf(out, "<jax._src.core.Token object at %p>", (const void *)v);
      return;
    }
    if (sr_backend_hooks.array_repr && a->type->ref) {
      /* core.Ref.__repr__: "Ref" + repr(the buffer)[5:] */
      SrBuf t = SR_BUF_INIT;
      sr_backend_hooks.array_repr(printing_interp, &t, a->data, a->type->weak);
      sr_buf_puts(out, "Ref");
      sr_buf_puts(out, t.len > 5 ? t.p + 5 : "");
      sr_buf_free(&t);
      return;
    }
    if (sr_backend_hooks.array_repr) {
      sr_backend_hooks.array_repr(printing_interp, out, a->data, a->type->weak);
      return;
    }
    break;
  case SR_AV_TRACER:
    /* a tracer of a trace that has ended prints as DynamicJaxprTracer's */
    if (printing_interp && sr_trace_is_live(printing_interp, a->trace, a->trace_id))
      sr_tracer_repr(printing_interp, a->trace, a->var, a->type, out);
    else
      sr_tracer_repr(printing_interp, NULL, a->var, a->type, out);
    return;
  default:
    break;
  }
  if (a->has_value && scalar_print(out, a, 0)) return;
  if (a->has_value) {
    SrBuf t = SR_BUF_INIT;
    if (sr_dtype_is_inexact(a->type->dtype)) sr_buf_printf(&t, "%.9g", a->value.f);
    else sr_buf_printf(&t, "%lld", (long long)a->value.i);
    sr_buf_printf(out, "Array(%s, dtype=%s)", t.p, sr_dtype_name(a->type->dtype));
    sr_buf_free(&t);
    return;
  }
  /* ShapeDtypeStruct(shape=(8, 4), dtype=float32, sharding=...) */
  sr_buf_puts(out, "ShapeDtypeStruct(shape=");
  SrVal *s = sr_shape_tuple(a->type);
  sr_val_repr(out, s);
  sr_unref(s);
  sr_buf_printf(out, ", dtype=%s", sr_dtype_name(a->type->dtype));
  if (a->sharding) {
    sr_buf_puts(out, ", sharding=");
    sr_val_str(out, a->sharding);
  }
  if (a->type->weak) sr_buf_puts(out, ", weak_type=True");
  sr_buf_putc(out, ')');
}

static void array_str(SrBuf *out, const SrVal *v) {
  const SrArrayObj *a = v->obj.data;
  if (a->deleted || a->type->ref) {
    array_repr(out, v);
    return;
  }
  if (a->kind == SR_AV_CONCRETE && sr_backend_hooks.array_str && strcmp(sr_dtype_name(a->type->dtype), "Tok")) {
    sr_backend_hooks.array_str(printing_interp, out, a->data);
    return;
  }
  if (a->kind == SR_AV_ABSTRACT && a->has_value && scalar_print(out, a, 1)) return;
  array_repr(out, v);
}

SrClass sr_array_class = {"ArrayImpl", array_free, array_repr, array_str, NULL};

SrVal *sr_array_abstract(const SrType *t) {
  SrArrayObj *a = sr_xcalloc(1, sizeof *a);
  a->kind = SR_AV_ABSTRACT;
  a->type = t;
  return sr_obj(&sr_array_class, a);
}

static uint64_t next_serial = 1;

uint64_t sr_array_serial(void) { return next_serial; }

SrVal *sr_array_concrete(struct SrArray *data) {
  SrArrayObj *a = array_obj_new();
  a->kind = SR_AV_CONCRETE;
  a->serial = next_serial++;
  a->data = data;
  a->type = sr_exec_array_type(data);
  return sr_obj(&sr_array_class, a);
}

void sr_array_printing(SrInterp *I) { printing_interp = I; }

SrVal *sr_array_scalar(const SrType *t, double re, double im, int64_t i) {
  SrArrayObj *a = sr_xcalloc(1, sizeof *a);
  a->kind = SR_AV_ABSTRACT;
  a->type = t;
  a->has_value = 1;
  if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    a->value.c[0] = re;
    a->value.c[1] = im;
  } else if (sr_dtype_is_inexact(t->dtype)) {
    a->value.f = t->dtype == SR_F32 ? (double)(float)re : re;
  } else {
    a->value.i = i;
  }
  return sr_obj(&sr_array_class, a);
}


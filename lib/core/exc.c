/* exc.c: exceptions and raising, the interrupt points, and printing that
 * raises (core.h). */
#include "core/core.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"
#include "util/pyfmt.h"

/* ---- exceptions ---- */

typedef struct Exc {
  const char *type; /* interned */
  char *msg;
  int kind;         /* SrErrKind */
} Exc;

static void exc_free(void *d) {
  Exc *e = d;
  free(e->msg);
  free(e);
}

static void exc_repr(SrBuf *out, const SrVal *v) {
  const Exc *e = v->obj.data;
  sr_buf_printf(out, "%s(", e->type);
  sr_py_str_repr(out, e->msg, strlen(e->msg));
  sr_buf_putc(out, ')');
}

static void exc_str(SrBuf *out, const SrVal *v) { sr_buf_puts(out, ((const Exc *)v->obj.data)->msg); }

SrClass sr_exception_class = {"Exception", exc_free, exc_repr, exc_str, NULL};

/* The classes of jax.errors that derive from errors.py's _JAXErrorMixin,
   whose message ends in a line naming the class's entry of JAX's error
   page */
static const char *const jax_mixin_errors[] = {
    "JAXTypeError", "JAXIndexError", "ConcretizationTypeError", "NonConcreteBooleanIndexError",
    "TracerArrayConversionError", "TracerIntegerConversionError", "TracerBoolConversionError",
    "UnexpectedTracerError", "KeyReuseError",
};

SrVal *sr_exc_new(const char *type, const char *msg, int kind) {
  Exc *e = sr_xcalloc(1, sizeof *e);
  e->type = sr_intern_cstr(type);
  e->msg = sr_xstrdup(msg);
  e->kind = kind;
  for (size_t i = 0; i < sizeof jax_mixin_errors / sizeof *jax_mixin_errors; i++) {
    if (strcmp(type, jax_mixin_errors[i]) != 0) continue;
    SrBuf b = SR_BUF_INIT;
    /* ConcretizationTypeError(tracer, context)'s own message ends in a
       newline */
    static const char concrete[] = "Abstract tracer value encountered where concrete value is expected";
    size_t mlen = strlen(msg);
    if (strcmp(type, "ConcretizationTypeError") == 0 && strncmp(msg, concrete, sizeof concrete - 1) == 0 &&
        (mlen == 0 || msg[mlen - 1] != '\n') && !strstr(msg, "\nSee https://docs.jax.dev/"))
      sr_buf_putc(&b, '\n');
    sr_buf_printf(&b, "\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.%s", type);
    /* once: a message made from another such exception's has it already */
    if (!strstr(msg, "\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.")) {
      free(e->msg);
      SrBuf m = SR_BUF_INIT;
      sr_buf_printf(&m, "%s%s", msg, b.p);
      e->msg = sr_buf_steal(&m);
    }
    sr_buf_free(&b);
    break;
  }
  return sr_obj(&sr_exception_class, e);
}

const char *sr_exc_type(const SrVal *exc) { return ((const Exc *)exc->obj.data)->type; }
const char *sr_exc_msg(const SrVal *exc) { return ((const Exc *)exc->obj.data)->msg; }
int sr_exc_kind(const SrVal *exc) { return ((const Exc *)exc->obj.data)->kind; }

void sr_exc_append_msg(SrInterp *I, const char *extra) {
  if (!I->exc) return;
  Exc *e = I->exc->obj.data;
  SrBuf m = SR_BUF_INIT;
  sr_buf_printf(&m, "%s%s", e->msg, extra);
  free(e->msg);
  e->msg = sr_buf_steal(&m);
}

void sr_exc_clear(SrInterp *I) {
  sr_unref(I->exc);
  I->exc = NULL;
  sr_src_unref(I->exc_src);
  I->exc_src = NULL;
  I->exc_located = 0;
}

static void set_exc(SrInterp *I, SrVal *exc) {
  sr_exc_clear(I);
  I->exc = exc;
}

SrVal *sr_raise_kind(SrInterp *I, int kind, const char *type, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  SrBuf b = SR_BUF_INIT;
  sr_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  set_exc(I, sr_exc_new(type, sr_buf_str(&b), kind));
  sr_buf_free(&b);
  return NULL;
}

SrVal *sr_raise(SrInterp *I, const char *type, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  SrBuf b = SR_BUF_INIT;
  sr_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  set_exc(I, sr_exc_new(type, sr_buf_str(&b), SR_E_RUNTIME));
  sr_buf_free(&b);
  return NULL;
}

SrVal *sr_raise_diags(SrInterp *I, SrDiags *d, const char *type) {
  SrDiag *g = d->first;
  if (!g) return sr_raise(I, type, "unknown error");
  /* several errors (a checker reports all of a jaxpr's) travel as one */
  SrBuf b = SR_BUF_INIT;
  if (d->count > 1 && g->src) {
    sr_diags_render(d, &b);
    if (b.len && b.p[b.len - 1] == '\n') b.p[--b.len] = 0;
  } else {
    sr_buf_puts(&b, g->msg);
  }
  set_exc(I, sr_exc_new(g->exc ? g->exc : type, sr_buf_str(&b), g->kind));
  sr_buf_free(&b);
  if (g->src && d->count == 1) {
    I->exc_src = sr_src_ref(g->src);
    I->exc_off = g->off;
    I->exc_located = 1;
  } else if (d->count > 1) {
    I->exc_located = 2; /* the message carries its own locations */
  }
  sr_diags_clear(d);
  return NULL;
}

int sr_interrupt_stop(SrInterp *I) {
  if (I->on_interrupt) return I->on_interrupt(I);
  I->interrupted = 0;
  return 1;
}

void sr_interrupt_restart(SrInterp *I) {
  I->ticks = 0;
  I->stop_at = UINT64_MAX;
}

/* ---- printing that raises ---- */

/* Called after printing: a note left by an earlier printer that could not
   raise is forgotten before each print (sr_to_str, sr_to_repr). */
static int too_deep_to_print(SrInterp *I) {
  if (!sr_val_too_deep()) return 0;
  sr_raise(I, "RecursionError", "maximum recursion depth exceeded while getting the repr of an object");
  return -1;
}

/* A value's printer that cannot return an error raises it on I (an array
   whose copy to the host failed): the print fails. */
int sr_to_str(SrInterp *I, SrBuf *out, SrVal *v) {
  int pending = I->exc != NULL;
  sr_val_too_deep();
  sr_val_str(out, v);
  if (too_deep_to_print(I) < 0) return -1;
  return !pending && I->exc ? -1 : 0;
}

int sr_to_repr(SrInterp *I, SrBuf *out, SrVal *v) {
  int pending = I->exc != NULL;
  sr_val_too_deep();
  sr_val_repr(out, v);
  if (too_deep_to_print(I) < 0) return -1;
  return !pending && I->exc ? -1 : 0;
}


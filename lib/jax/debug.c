/* debug.c: jax.debug (debug.py): visualize_array_sharding, drawn as JAX
 * draws it (debugging.py: visualize_sharding), on a concrete array; and
 * print and callback (debugging.py: debug_print, debug_callback) on
 * concrete values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/builtins_exec.h"
#include "jax/array_create.h"
#include "jax/debug_picture.h"
#include "jax/callback.h"
#include "jax/debug_trace.h"
#include "jax/jax.h"

#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/kern.h"
#include "exec/layout.h"
#include "exec/npy.h"
#include "exec/prng.h"
#include "jax/lax.h"
#include "core/jaxstate.h"
#include "jax/numpy.h"
#include "jax/layout.h"
#include "jax/random.h"
#include "py/objects.h"
#include "py/strfmt.h"
#include "text/print_val.h"
#include "jax/tree_util.h"
#include "core/trace.h"
#include "check/rule.h"
#include "util/intern.h"
#include "util/mem.h"

/* ---- visualize_array_sharding (the picture: debug_picture.c) ---- */

/* visualize_array_sharding's _visualize(sharding): visualize_sharding
   (arr.shape, sharding, **kwargs), the shape and kwargs kept */
typedef struct VisCb {
  SrVal *shape;
  int nkw;
  const char *kw[4];
  SrVal *kwv[4];
} VisCb;

static void viscb_free(void *d) {
  VisCb *c = d;
  sr_unref(c->shape);
  for (int i = 0; i < c->nkw; i++) sr_unref(c->kwv[i]);
  free(c);
}

static SrVal *viscb_call(SrInterp *I, SrArgs *a) {
  VisCb *c = sr_current_builtin(I)->data;
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "_visualize takes one argument");
  SrVal *v[2] = {c->shape, a->v[0]};
  SrArgs va = {2, v, c->nkw, c->kw, c->kwv, NULL};
  SrVal *fn = sr_lookup_qualname("jax.debug.visualize_sharding");
  return fn ? sr_call(I, fn, &va) : sr_raise(I, "RuntimeError", "jax.debug.visualize_sharding is missing");
}

static SrVal *bi_visualize(SrInterp *I, SrArgs *args) {
  SrVal *p[5];
  if (sr_args_parse(I, args, "visualize_array_sharding", "arr, *, use_color=, scale=, min_width=, max_width=", p) < 0)
    return NULL;
  SrArrayObj *o = sr_array_of(p[0]);
  if (o && o->kind != SR_AV_CONCRETE) {
    /* traced: inspect_array_sharding(arr, callback=_visualize) */
    static const char *const names[] = {"use_color", "scale", "min_width", "max_width"};
    VisCb *c = sr_xcalloc(1, sizeof *c);
    SrVal *sh = sr_getattr(I, p[0], "shape");
    if (!sh) {
      free(c);
      return NULL;
    }
    c->shape = sh;
    for (int i = 0; i < 4; i++)
      if (p[1 + i]) {
        c->kw[c->nkw] = sr_intern_cstr(names[i]);
        c->kwv[c->nkw++] = sr_ref(p[1 + i]);
      }
    SrVal *cb = sr_builtin_with("_visualize", viscb_call, c, viscb_free);
    SrVal *inspect = sr_lookup_qualname("jax.debug.inspect_array_sharding");
    const char *kw[1] = {sr_intern_cstr("callback")};
    SrVal *kwv[1] = {cb};
    SrArgs ia = {1, &p[0], 1, kw, kwv, NULL};
    SrVal *r = inspect ? sr_call(I, inspect, &ia) : NULL;
    sr_unref(cb);
    return r;
  }
  if (!o || o->kind != SR_AV_CONCRETE) return sr_raise(I, "TypeError", "visualize_array_sharding needs a concrete array");
  double scale = 1;
  int64_t minw = 9, maxw = 80;
  if (p[2] && sr_as_float(I, p[2], "scale", &scale) < 0) return NULL;
  if (p[3] && sr_as_int(I, p[3], "min_width", &minw) < 0) return NULL;
  if (p[4] && sr_as_int(I, p[4], "max_width", &maxw) < 0) return NULL;
  int use_color = p[1] ? sr_truthy(I, p[1]) : 1;
  if (use_color < 0) return NULL;
  SrPicOpts po = {use_color, scale, (int)minw, (int)maxw, sr_color_system()};
  SrBuf b = SR_BUF_INIT, html = SR_BUF_INIT;
  if (sr_display_fn) {
    /* a notebook: rich's HTML, and its 24-bit text as text/plain */
    po.cs = SR_CS_TRUECOLOR;
    sr_sharding_picture(&b, &html, o->data, &po);
    sr_display_fn(sr_display_ctx, html.p, html.len, b.p, b.len);
  } else {
    sr_sharding_picture(&b, NULL, o->data, &po);
    sr_write(I, b.p, b.len);
  }
  sr_buf_free(&b);
  sr_buf_free(&html);
  return sr_none();
}

/* jax.debug.visualize_sharding(shape, sharding, **kw): the picture of an
   array of that shape placed with that sharding (JAX's 1-D and 2-D only,
   as JAX checks). */
static SrVal *bi_visualize_sharding(SrInterp *I, SrArgs *args) {
  SrVal *p[7];
  if (sr_args_parse(I, args, "visualize_sharding",
                    "shape, sharding, *, use_color=, scale=, min_width=, max_width=, color_map=", p) < 0)
    return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = 0;
  if (sr_shape_arg(I, p[0], shape, &nd, "shape") < 0) return NULL;
  if (nd > 2 || nd < 1) return sr_raise(I, "ValueError", "`visualize_sharding` only works for shapes with 1 and 2 dimensions.");
  SrVal *zeros = sr_lookup_qualname("jax.numpy.zeros");
  SrVal *x = zeros ? sr_call1(I, zeros, p[0]) : NULL;
  x = sr_jnp_put_on(I, x, p[1]);
  if (!x) return NULL;
  SrVal *argv[1] = {x};
  const char *kw[4];
  SrVal *kwv[4];
  int nkw = 0;
  static const char *names[4] = {"use_color", "scale", "min_width", "max_width"};
  for (int k = 0; k < 4; k++)
    if (p[2 + k]) {
      kw[nkw] = sr_intern(names[k], strlen(names[k]));
      kwv[nkw++] = p[2 + k];
    }
  SrArgs va = {1, argv, nkw, kw, kwv, NULL};
  SrVal *r = bi_visualize(I, &va);
  sr_unref(x);
  return r;
}

/* ---- print and callback ---- */

/* Under a trace the staged forms bind the debug_print / debug_callback
   primitives (debug_trace.c); a tracer met with no trace being built (one
   that leaked) raises. */
static int traced(SrVal *v) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    SrArrayObj *o = sr_array_of(v);
    return o && o->kind != SR_AV_CONCRETE;
  }
  int t = 0;
  for (int i = 0; i < ch->seq.n && !t; i++) t = traced(ch->seq.items[i]);
  sr_unref(ch);
  return t;
}

static int check_concrete(SrInterp *I, SrArgs *a, int from, const char *what) {
  for (int i = from; i < a->n + a->nkw; i++) {
    SrVal *v = i < a->n ? a->v[i] : a->kwv[i - a->n];
    if (sr_pytree_check_depth(I, v) < 0) return -1;
    if (traced(v)) {
      sr_raise(I, "NotImplementedError", "%s of a traced value (under jit, scan, vmap, grad or shard_map) is not supported yet", what);
      return -1;
    }
  }
  return 0;
}

/* The options of both: ordered=, partitioned= (and print's
   skip_format_check=) are taken out of a's keywords, into an Opts. */
typedef struct Opts {
  int skip, ordered, partitioned;
} Opts;

static int is_option(const char *k, int print) {
  return !strcmp(k, "ordered") || !strcmp(k, "partitioned") || (print && !strcmp(k, "skip_format_check"));
}

static void take_option(SrInterp *I, const char *k, SrVal *v, Opts *o) {
  int t = sr_truthy(I, v) > 0;
  if (!strcmp(k, "skip_format_check")) o->skip = t;
  else if (!strcmp(k, "ordered")) o->ordered = t;
  else o->partitioned = t;
}

static void drop_options(SrInterp *I, SrArgs *a, int print, Opts *o) {
  int m = 0;
  for (int i = 0; i < a->nkw; i++) {
    if (is_option(a->kw[i], print)) {
      take_option(I, a->kw[i], a->kwv[i], o);
      continue;
    }
    a->kw[m] = a->kw[i];
    a->kwv[m++] = a->kwv[i];
  }
  a->nkw = m;
}

/* Gives a its own copy of its keywords (for drop_options to edit), in
   *kw and *kwv to free. */
static void copy_kwargs(SrArgs *a, const char ***kw, SrVal ***kwv) {
  *kw = a->nkw ? sr_xmalloc(sizeof **kw * (size_t)a->nkw) : NULL;
  *kwv = a->nkw ? sr_xmalloc(sizeof **kwv * (size_t)a->nkw) : NULL;
  if (a->nkw) {
    memcpy(*kw, a->kw, sizeof **kw * (size_t)a->nkw);
    memcpy(*kwv, a->kwv, sizeof **kwv * (size_t)a->nkw);
  }
  a->kw = *kw;
  a->kwv = *kwv;
}

/* _DebugPrintFormatChecker.check_unused_args: the fields of fmt (not
   those nested in a format spec) name positions (auto-numbered when
   empty) and keywords; one given but unused is a ValueError. */
static int check_unused(SrInterp *I, const char *s, size_t n, SrArgs *a) {
  char used[64] = {0};
  char *kwused = a->nkw ? calloc((size_t)a->nkw, 1) : NULL;
  int autonum = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '{') continue;
    if (i + 1 < n && s[i + 1] == '{') { i++; continue; }
    size_t b = ++i;
    while (i < n && !strchr(".[!:}", s[i])) i++;
    size_t len = i - b;
    int depth = 1;
    for (; i < n && depth; i++) depth += s[i] == '{' ? 1 : s[i] == '}' ? -1 : 0;
    i--;
    if (len == 0) {
      if (autonum < 64) used[autonum] = 1;
      autonum++;
    } else if (s[b] >= '0' && s[b] <= '9') {
      int k = atoi(s + b);
      if (k < 64) used[k] = 1;
    } else {
      for (int k = 0; k < a->nkw; k++)
        if (strlen(a->kw[k]) == len && !memcmp(a->kw[k], s + b, len)) kwused[k] = 1;
    }
  }
  SrBuf b = SR_BUF_INIT;
  for (int k = 0; k < a->n; k++)
    if (k >= 64 || !used[k]) {
      sr_buf_puts(&b, b.len ? ", " : "[");
      sr_val_repr(&b, a->v[k]);
    }
  int rc = 0;
  if (b.len) {
    sr_buf_puts(&b, "]");
    sr_raise(I, "ValueError", "Unused positional arguments to `jax.debug.print`: %s", b.p);
    rc = -1;
  } else {
    for (int k = 0; k < a->nkw; k++)
      if (!kwused[k]) sr_buf_printf(&b, "%s'%s'", b.len ? ", " : "[", a->kw[k]);
    if (b.len) {
      sr_raise(I, "ValueError", "Unused keyword arguments to `jax.debug.print`: %s]. You may be passing an f-string "
               "(i.e, `f\"{x}\"`) into `jax.debug.print` and instead should pass in a regular string.", b.p);
      rc = -1;
    }
  }
  sr_buf_free(&b);
  free(kwused);
  return rc;
}

/* has_placeholders: the first item string.Formatter().parse gives has a
   field, i.e. the first brace of fmt opens one. */
static int has_placeholders(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] == '{' || s[i] == '}') return s[i] == '{' && !(i + 1 < n && s[i + 1] == '{');
  return 0;
}

/* The two-call form, f(ordered=...) with no positional argument: the
   second call's function (its data: skip_format_check), or the TypeError
   of one given other keywords. */
static SrVal *second_call(SrInterp *I, SrArgs *a, const char *who, SrBuiltinFn fn, int print) {
  /* a->v[0], if given, is the None of fmt / callback; the rest is what
     the two-call form refuses */
  SrBuf b = SR_BUF_INIT;
  Opts o = {0};
  int nkw = 0;
  for (int i = 0; i < a->nkw; i++) {
    if (is_option(a->kw[i], print)) {
      if (sr_truthy(I, a->kwv[i]) < 0) {
        sr_buf_free(&b);
        return NULL;
      }
      take_option(I, a->kw[i], a->kwv[i], &o);
      continue;
    }
    sr_buf_printf(&b, "%s'%s': ", nkw++ ? ", " : "", a->kw[i]);
    sr_val_repr(&b, a->kwv[i]);
  }
  if (nkw || a->n > 1) {
    SrBuf ab = SR_BUF_INIT;
    sr_buf_putc(&ab, '(');
    for (int i = 1; i < a->n; i++) {
      if (i > 1) sr_buf_puts(&ab, ", ");
      sr_val_repr(&ab, a->v[i]);
    }
    sr_buf_puts(&ab, a->n == 2 ? ",)" : ")");
    sr_raise(I, "TypeError", "%s received unexpected arguments in the two-call form: args=%s kwargs={%s}", who,
             sr_buf_str(&ab), sr_buf_str(&b));
    sr_buf_free(&ab);
    sr_buf_free(&b);
    return NULL;
  }
  sr_buf_free(&b);
  Opts *data = sr_xmalloc(sizeof *data);
  *data = o;
  return sr_builtin_with(print ? "_debug_print" : "_debug_callback", fn, data, free);
}

static SrVal *do_print(SrInterp *I, SrArgs *args, int strip, Opts o);

static SrVal *bi_print2(SrInterp *I, SrArgs *args) {
  if (args->n == 0) return sr_raise(I, "TypeError", "_debug_print() missing 1 required positional argument: 'fmt'");
  return do_print(I, args, 0, *(Opts *)sr_current_builtin(I)->data);
}

static SrVal *bi_print(SrInterp *I, SrArgs *args) {
  if (args->n == 0 || args->v[0]->kind == SR_V_NONE) return second_call(I, args, "debug_print", bi_print2, 1);
  return do_print(I, args, 1, (Opts){0});
}

static SrVal *do_print(SrInterp *I, SrArgs *args, int strip, Opts o) {
  SrArgs a = *args;
  const char **kw;
  SrVal **kwv;
  copy_kwargs(&a, &kw, &kwv);
  if (strip) drop_options(I, &a, 1, &o);
  SrVal *r = NULL;
  SrVal *fmt = a.v[0];
  if (fmt->kind != SR_V_STR) {
    sr_raise(I, "TypeError", "debug_print() argument 'fmt' must be str");
    goto out;
  }
  if (!I->trace && check_concrete(I, &a, 1, "jax.debug.print") < 0) goto out;
  SrArgs fa = a;
  fa.v++;
  fa.n--;
  fa.self = NULL;
  if (!o.skip && check_unused(I, fmt->str.s, fmt->str.n, &fa) < 0) goto out;
  if (I->trace) {
    r = sr_debug_print_staged(I, fmt, &fa, has_placeholders(fmt->str.s, fmt->str.n), o.ordered, o.partitioned);
    goto out;
  }
  SrBuf b = SR_BUF_INIT;
  if (has_placeholders(fmt->str.s, fmt->str.n)) {
    SrVal *msg = sr_str_format(I, fmt, &fa);
    if (!msg) goto out;
    sr_buf_putn(&b, msg->str.s, msg->str.n);
    sr_unref(msg);
  } else {
    sr_buf_putn(&b, fmt->str.s, fmt->str.n);
    for (int i = 0; i < fa.n; i++) {
      sr_buf_puts(&b, " ");
      sr_val_str(&b, fa.v[i]);
    }
  }
  sr_buf_puts(&b, "\n");
  sr_write(I, b.p, b.len);
  sr_buf_free(&b);
  r = sr_none();
out:
  free(kw);
  free(kwv);
  return r;
}

/* debug_callback_impl's device_put: the Python scalars among v's leaves
   become (weakly typed) arrays, the others (strings: _split_callback_args's
   static arguments) stay; a new reference. */
static SrVal *as_arrays(SrInterp *I, SrVal *v) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    SrVal *asarray = sr_lookup_qualname("jax.numpy.asarray");
    if (v->kind < SR_V_BOOL || v->kind > SR_V_COMPLEX || !asarray) return sr_ref(v);
    return sr_call1(I, asarray, v);
  }
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *x = as_arrays(I, ch->seq.items[i]);
    if (!x) {
      sr_unref(ch);
      return NULL;
    }
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = x;
  }
  SrVal *r = sr_pytree_rebuild(v, ch);
  sr_unref(ch);
  return r;
}

static SrVal *do_callback(SrInterp *I, SrArgs *args, int strip, Opts o);

static SrVal *bi_callback2(SrInterp *I, SrArgs *args) {
  if (args->n == 0) return sr_raise(I, "TypeError", "_debug_callback() missing 1 required positional argument: 'callback'");
  return do_callback(I, args, 0, *(Opts *)sr_current_builtin(I)->data);
}

static SrVal *bi_callback(SrInterp *I, SrArgs *args) {
  if (args->n == 0 || args->v[0]->kind == SR_V_NONE) return second_call(I, args, "debug_callback", bi_callback2, 0);
  return do_callback(I, args, 1, (Opts){0});
}

static SrVal *do_callback(SrInterp *I, SrArgs *args, int strip, Opts o) {
  SrArgs a = *args;
  if (!sr_is_callable(I, a.v[0]))
    return sr_raise(I, "TypeError", "first argument to jax.debug.callback must be callable, but got an object of type <class '%s'>",
                    sr_val_kind_name(a.v[0]));
  const char **kw;
  SrVal **kwv;
  copy_kwargs(&a, &kw, &kwv);
  if (strip) drop_options(I, &a, 0, &o);
  SrVal *r = NULL;
  if (I->trace) {
    SrArgs ca = a;
    ca.v++;
    ca.n--;
    ca.self = NULL;
    r = sr_debug_callback_staged(I, a.v[0], &ca, o.ordered, o.partitioned);
  } else if (check_concrete(I, &a, 1, "jax.debug.callback") == 0) {
    SrArgs ca = a;
    ca.v++;
    ca.n--;
    ca.self = NULL;
    SrVal **vals = sr_xcalloc((size_t)(ca.n + ca.nkw) + 1, sizeof *vals);
    int ok = 1;
    for (int i = 0; i < ca.n + ca.nkw && ok; i++)
      ok = (vals[i] = as_arrays(I, i < ca.n ? ca.v[i] : ca.kwv[i - ca.n])) != NULL;
    if (ok) {
      ca.v = vals;
      ca.kwv = vals + ca.n;
      SrVal *res = sr_call(I, a.v[0], &ca);
      if (res) {
        sr_unref(res);
        r = sr_none();
      }
    }
    for (int i = 0; i < ca.n + ca.nkw; i++) sr_unref(vals[i]);
    free(vals);
  }
  free(kw);
  free(kwv);
  return r;
}

/* ---- registration ---- */

void sr_debug_init(void) {
  sr_debug_trace_init();
  sr_callback_init();
  sr_def("jax.debug.visualize_array_sharding", bi_visualize,
         "visualize_array_sharding(x, *, use_color=True, scale=1., min_width=9, max_width=80): which device holds which "
         "block of x, as JAX draws it with rich (coloured on a colour terminal, boxed otherwise, HTML in the kernel)");
  sr_def("jax.debug.visualize_sharding", bi_visualize_sharding,
         "visualize_sharding(shape, sharding, *, use_color=True, scale=1., min_width=9, max_width=80): which device holds "
         "which block of an array of that shape, as JAX draws it");
  sr_def("jax.debug.print", bi_print,
         "print(fmt, *args, ordered=False, **kwargs): prints fmt.format(*args, **kwargs); under jit, scan, vmap or shard_map each time it runs");
  sr_def("jax.debug.callback", bi_callback,
         "callback(fn, *args, ordered=False, **kwargs): calls fn(*args, **kwargs); under a trace each time the program runs");
}

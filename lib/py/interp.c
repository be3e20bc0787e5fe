/* interp.c: evaluating statements and expressions. */
#include "py/interp.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "py/class.h"
#include "py/generator.h"
#include "py/introspect.h"
#include "py/modules.h"
#include "text/color.h"
#include "py/objects.h"
#include "py/range.h"
#include "py/script.h"
#include "util/intern.h"
#include "util/pyfmt.h"

enum { MAX_CALL_DEPTH = 400, MAX_EVAL_DEPTH = 5000 };

/* ---- environments ---- */

static SrEnv *live_envs; /* every environment, newest first */

SrEnv *sr_env_new(SrEnv *parent) {
  SrEnv *e = sr_xcalloc(1, sizeof *e);
  e->rc = 1;
  e->parent = sr_env_ref(parent);
  e->next = live_envs;
  if (live_envs) live_envs->prev = e;
  live_envs = e;
  return e;
}

SrEnv *sr_env_ref(SrEnv *e) {
  if (e) e->rc++;
  return e;
}

void sr_env_clear(SrEnv *e) {
  for (size_t i = 0; i < e->cap; i++)
    if (e->keys[i]) {
      sr_unref(e->vals[i]);
      e->keys[i] = NULL;
      e->vals[i] = NULL;
    }
  e->n = 0;
}

void sr_env_unref(SrEnv *e) {
  if (!e || --e->rc > 0) return;
  sr_env_clear(e);
  free(e->keys);
  free(e->vals);
  sr_env_unref(e->parent);
  if (e->prev) e->prev->next = e->next;
  else live_envs = e->next;
  if (e->next) e->next->prev = e->prev;
  free(e);
}

size_t sr_env_live(void) {
  size_t n = 0;
  for (SrEnv *e = live_envs; e; e = e->next) n++;
  return n;
}

static int env_below(const SrEnv *e, const SrEnv *root) {
  while (e->parent) e = e->parent;
  return e == root && e != NULL;
}

void sr_env_break_cycles(SrEnv *root) {
  size_t n = 0, cap = 16;
  SrEnv **held = sr_xmalloc(cap * sizeof *held);
  for (SrEnv *e = live_envs; e; e = e->next)
    if (e != root && env_below(e, root)) {
      if (n == cap) held = sr_xrealloc(held, (cap *= 2) * sizeof *held);
      held[n++] = sr_env_ref(e); /* alive while the others are emptied */
    }
  for (size_t i = 0; i < n; i++) sr_env_clear(held[i]);
  for (size_t i = 0; i < n; i++) sr_env_unref(held[i]);
  free(held);
}

static size_t slot(const char *k) { return ((uintptr_t)k >> 3) * 2654435761u; }

static size_t env_find(const SrEnv *e, const char *k) {
  size_t m = e->cap - 1;
  size_t i = slot(k) & m;
  while (e->keys[i] && e->keys[i] != k) i = (i + 1) & m;
  return i;
}

SrVal *sr_env_lookup(const SrEnv *e, const char *k) {
  for (; e; e = e->parent) {
    if (!e->cap) continue;
    size_t i = env_find(e, k);
    if (e->keys[i]) return e->vals[i];
  }
  return NULL;
}

void sr_env_set(SrEnv *e, const char *k, SrVal *v) {
  if (2 * (e->n + 1) > e->cap) {
    size_t oldcap = e->cap;
    const char **ok = e->keys;
    SrVal **ov = e->vals;
    e->cap = e->cap ? 2 * e->cap : 16;
    e->keys = sr_xcalloc(e->cap, sizeof *e->keys);
    e->vals = sr_xcalloc(e->cap, sizeof *e->vals);
    for (size_t i = 0; i < oldcap; i++)
      if (ok[i]) {
        size_t j = env_find(e, ok[i]);
        e->keys[j] = ok[i];
        e->vals[j] = ov[i];
      }
    free(ok);
    free(ov);
  }
  size_t i = env_find(e, k);
  if (e->keys[i]) {
    sr_unref(e->vals[i]);
  } else {
    e->keys[i] = k;
    e->n++;
  }
  e->vals[i] = v;
}

int sr_env_del(SrEnv *e, const char *k) {
  if (!e->cap) return -1;
  size_t i = env_find(e, k);
  if (!e->keys[i]) return -1;
  /* re-insert the rest of the cluster (linear probing deletion) */
  sr_unref(e->vals[i]);
  e->keys[i] = NULL;
  e->vals[i] = NULL;
  e->n--;
  size_t m = e->cap - 1;
  for (size_t j = (i + 1) & m; e->keys[j]; j = (j + 1) & m) {
    const char *kk = e->keys[j];
    SrVal *vv = e->vals[j];
    e->keys[j] = NULL;
    e->vals[j] = NULL;
    e->n--;
    sr_env_set(e, kk, vv);
  }
  return 0;
}

/* ---- the interpreter ---- */

static const SrPyInit no_hooks;

/* The session is Python's __main__ module, at the prompt as in a script. */
static void set_main_name(SrInterp *I) { sr_global_set(I, "__name__", sr_str_cstr(NULL, "__main__")); }

SrInterp *sr_interp_new(const SrPyInit *init) {
  static int opened;
  sr_objects_init();
  if (init && init->open_modules && !opened) {
    opened = 1;
    init->open_modules();
  }
  SrInterp *I = sr_xcalloc(1, sizeof *I);
  I->py = sr_xcalloc(1, sizeof *I->py);
  I->py->init = init ? init : &no_hooks;
  I->py->globals = sr_env_new(NULL);
  I->py->out = stdout;
  I->py->echo = 1;
  set_main_name(I);
  sr_script_argv("<stdin>");
  sr_class_set_interp(I);
  I->stop_at = UINT64_MAX;
  if (I->py->init->state_new) I->py->init->state_new(I);
  return I;
}

void sr_interp_free(SrInterp *I) {
  if (!I) return;
  for (int i = 0; i < I->py->nlog; i++) {
    free(I->py->log[i].text);
    free(I->py->log[i].out);
    free(I->py->log[i].result);
  }
  free(I->py->log);
  sr_buf_free(&I->py->stmt_out);
  sr_buf_free(&I->py->stmt_res);
  sr_exc_clear(I);
  free(I->py->handled_tb);
  I->py->handled_tb = NULL;
  sr_unref(I->py->handled);
  sr_unref(I->py->last_echo);
  sr_class_forget_interp(I);
  if (I->py->init->state_clear) I->py->init->state_clear(I);
  /* functions hold the globals they were defined in: emptying the globals
     first breaks those cycles */
  sr_env_clear(I->py->globals);
  sr_env_break_cycles(I->py->globals);
  sr_val_collect_cycles();
  if (I->py->init->state_free) I->py->init->state_free(I);
  sr_tb_free(I);
  sr_env_unref(I->py->globals);
  sr_diags_clear(&I->py->diags);
  for (int i = 0; i < I->py->nwarned; i++) free(I->py->warned[i]);
  free(I->py->warned);
  free(I->py);
  free(I);
}

void sr_interp_reset(SrInterp *I) {
  if (I->py->init->state_clear) I->py->init->state_clear(I);
  sr_env_clear(I->py->globals);
  sr_env_break_cycles(I->py->globals);
  sr_val_collect_cycles();
  set_main_name(I);
  if (I->py->init->state_reset) I->py->init->state_reset(I);
}

SrVal *sr_global_get(SrInterp *I, const char *name) { return sr_env_lookup(I->py->globals, sr_intern_cstr(name)); }
void sr_global_set(SrInterp *I, const char *name, SrVal *v) { sr_env_set(I->py->globals, sr_intern_cstr(name), v); }

void sr_global_names(SrInterp *I, void (*fn)(const char *, void *), void *ctx) {
  for (size_t i = 0; i < I->py->globals->cap; i++)
    if (I->py->globals->keys[i]) fn(I->py->globals->keys[i], ctx);
}

/* What a statement writes is kept for the session's log up to this much. */
enum { LOG_OUT_MAX = 1 << 20 };

static void log_output(SrInterp *I, SrBuf *b, const char *s, size_t n) {
  if (I->py->run_depth < 1 || b->len >= LOG_OUT_MAX) return;
  sr_buf_putn(b, s, n < LOG_OUT_MAX - b->len ? n : LOG_OUT_MAX - b->len);
}

void sr_write(SrInterp *I, const char *s, size_t n) {
  if (!I->py->out) return;
  fwrite(s, 1, n, I->py->out);
  log_output(I, I->py->in_echo ? &I->py->stmt_res : &I->py->stmt_out, s, n);
}

/* ---- exceptions: their attributes (core/exc.c raises them) ---- */

static SrVal *exc_getattr(SrInterp *I, SrVal *self, const char *name) {
  if (strcmp(name, "args") == 0) {
    SrVal *m = sr_str_cstr(NULL, sr_exc_msg(self));
    return sr_tuple(NULL, 1, &m);
  }
  (void)I;
  return NULL;
}

static const SrLangOps exc_ops = {.getattr = exc_getattr};

void sr_exc_methods_init(void) { sr_exception_class.lang = &exc_ops; }

/* Every 65536 steps of the interpreter: MemoryError when the heap nears
   what the process may get (sr_mem_pressure), as CPython's is raised when
   malloc fails -- here before it does, since a failed small allocation
   aborts.  Ticks count on every rank alike, so the ranks ask at the same
   steps. */
static int out_of_memory(SrInterp *I) {
  if ((I->ticks & 65535) || !sr_mem_pressure()) return 0;
  sr_raise(I, "MemoryError", "%s", "");
  return 1;
}

/* Gives a pending exception the location being evaluated, once. */
static void locate(SrInterp *I, uint32_t off) {
  if (I->exc && !I->exc_located && I->py->code) {
    I->exc_src = sr_src_ref(I->py->code->src);
    I->exc_off = off;
    I->exc_located = 1;
  }
}

void sr_warn(SrInterp *I, const char *category, const char *fmt, ...) {
  if (!I->py->out) return;
  SrBuf where = SR_BUF_INIT, b = SR_BUF_INIT;
  const SrSrc *src = I->py->code ? I->py->code->src : NULL;
  uint32_t line = 0, col = 0;
  if (src) {
    sr_src_linecol(src, I->py->cur_off, &line, &col);
    sr_buf_printf(&where, "%s:%u", src->name, line);
  }
  /* Python's default filter shows a warning once per location and
     message text (the registry's key: text, category, line) */
  sr_buf_printf(&where, " %s: ", category);
  {
    va_list ap;
    va_start(ap, fmt);
    sr_buf_vprintf(&where, fmt, ap);
    va_end(ap);
  }
  for (int i = 0; i < I->py->nwarned; i++)
    if (strcmp(I->py->warned[i], sr_buf_str(&where)) == 0) {
      sr_buf_free(&where);
      return;
    }
  I->py->warned = sr_xrealloc(I->py->warned, (size_t)(I->py->nwarned + 1) * sizeof *I->py->warned);
  I->py->warned[I->py->nwarned++] = sr_xstrdup(sr_buf_str(&where));
  if (src) sr_buf_printf(&b, "%s:%u:%u: ", src->name, line, col);
  sr_buf_printf(&b, "warning: %s: ", category);
  va_list ap;
  va_start(ap, fmt);
  sr_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  sr_buf_putc(&b, '\n');
  sr_write_stderr(I, sr_buf_str(&b), b.len, 1);
  sr_buf_free(&b);
  sr_buf_free(&where);
}

void sr_write_stderr(SrInterp *I, const char *text, size_t len, int color) {
  if (I->py->on_warn) {
    I->py->on_warn(I, text, len);
    return;
  }
  if (!I->py->out) return;
  SrBuf c = SR_BUF_INIT;
  if (color) sr_color_diags(&c, text, len);
  fflush(I->py->out);
  fwrite(color ? c.p : text, 1, color ? c.len : len, stderr);
  fflush(stderr);
  sr_buf_free(&c);
}

/* Moves the pending exception into I->py->diags. */
static void exc_to_diag(SrInterp *I) {
  if (!I->exc) return;
  int kind = sr_exc_kind(I->exc);
  const char *type = sr_exc_type(I->exc);
  if (I->exc_located == 2) {
    /* already rendered with locations: a type error of a whole jaxpr */
    sr_error(&I->py->diags, kind, NULL, 0, "%s", sr_exc_msg(I->exc));
    I->py->diags.last->rendered = 1;
  } else {
    sr_error_exc(&I->py->diags, kind, type, I->exc_src, I->exc_off, "%s", sr_exc_msg(I->exc));
  }
  sr_tb_attach(I, I->py->diags.last);
  sr_exc_clear(I);
}

/* ---- arguments ---- */

static const char *kwname(const char *spec, size_t n) { return sr_intern(spec, n); }

int sr_args_parse(SrInterp *I, SrArgs *a, const char *fname, const char *spec, SrVal **out) {
  const char *names[32];
  int optional[32], kwonly[32];
  int n = 0, star = 0;
  const char *s = spec;
  while (*s && n < 32) {
    while (*s == ' ' || *s == ',') s++;
    if (!*s) break;
    if (*s == '*') {
      star = 1;
      s++;
      continue;
    }
    const char *st = s;
    while (*s && *s != ',' && *s != '=' && *s != ' ') s++;
    names[n] = kwname(st, (size_t)(s - st));
    optional[n] = *s == '=';
    kwonly[n] = star;
    if (*s == '=') s++;
    out[n] = NULL;
    n++;
  }
  int npos = 0;
  while (npos < n && !kwonly[npos]) npos++;
  if (a->n > npos)
    return sr_raise(I, "TypeError", "%s() takes %d positional argument%s but %d were given", fname,
                    npos, npos == 1 ? "" : "s", a->n),
           -1;
  for (int i = 0; i < a->n; i++) out[i] = a->v[i];
  for (int k = 0; k < a->nkw; k++) {
    int found = -1;
    for (int i = 0; i < n; i++)
      if (names[i] == a->kw[k]) found = i;
    if (found < 0)
      return sr_raise(I, "TypeError", "%s() got an unexpected keyword argument '%s'", fname, a->kw[k]),
             -1;
    if (out[found])
      return sr_raise(I, "TypeError", "%s() got multiple values for argument '%s'", fname, a->kw[k]), -1;
    out[found] = a->kwv[k];
  }
  for (int i = 0; i < n; i++)
    if (!out[i] && !optional[i])
      return sr_raise(I, "TypeError", "%s() missing required argument: '%s'", fname, names[i]), -1;
  return 0;
}

int sr_as_int(SrInterp *I, SrVal *v, const char *what, int64_t *out) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = v->i;
    return 0;
  }
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->unop) {
    /* a 0-d integer array (an index) */
    const char *saved = I->item_for;
    if (!saved) I->item_for = "index";
    SrVal *r = ops->unop(I, SR_OP_ITEM, v);
    I->item_for = saved;
    if (r && (r->kind == SR_V_INT || r->kind == SR_V_BOOL)) {
      *out = r->i;
      sr_unref(r);
      return 0;
    }
    sr_unref(r);
    if (I->exc) return -1;
  }
  sr_raise(I, "TypeError", "%s must be an integer, not %s", what, sr_val_kind_name(v));
  return -1;
}

int sr_as_index(SrInterp *I, SrVal *v, int64_t *out) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = v->i;
    return 0;
  }
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->unop) {
    SrVal *r = ops->unop(I, SR_OP_INDEX, v);
    if (r && (r->kind == SR_V_INT || r->kind == SR_V_BOOL)) {
      *out = r->i;
      sr_unref(r);
      return 0;
    }
    sr_unref(r);
    if (I->exc) return -1;
  }
  sr_raise(I, "TypeError", "'%s' object cannot be interpreted as an integer", sr_val_kind_name(v));
  return -1;
}

int sr_as_float(SrInterp *I, SrVal *v, const char *what, double *out) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = (double)v->i;
    return 0;
  }
  if (v->kind == SR_V_FLOAT) {
    *out = v->f;
    return 0;
  }
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->unop) {
    const char *saved = I->item_for;
    if (!saved) I->item_for = "float";
    SrVal *r = ops->unop(I, SR_OP_ITEM, v);
    I->item_for = saved;
    if (r && (r->kind == SR_V_FLOAT || r->kind == SR_V_INT || r->kind == SR_V_BOOL)) {
      *out = r->kind == SR_V_FLOAT ? r->f : (double)r->i;
      sr_unref(r);
      return 0;
    }
    sr_unref(r);
    if (I->exc) return -1;
  }
  sr_raise(I, "TypeError", "%s must be a number, not %s", what, sr_val_kind_name(v));
  return -1;
}

const char *sr_as_str(SrInterp *I, SrVal *v, const char *what) {
  if (v->kind == SR_V_STR || v->kind == SR_V_WORD) return sr_intern(v->str.s, v->str.n);
  sr_raise(I, "TypeError", "%s must be a string, not %s", what, sr_val_kind_name(v));
  return NULL;
}

const char *sr_as_path(SrInterp *I, SrVal *v, const char *what) {
  if ((v->kind == SR_V_STR || v->kind == SR_V_WORD) && memchr(v->str.s, 0, v->str.n)) {
    /* PyUnicode_FSConverter's: the C string would name another file */
    sr_raise(I, "ValueError", "embedded null byte");
    return NULL;
  }
  return sr_as_str(I, v, what);
}

/* ---- evaluation ---- */

typedef enum { ST_OK, ST_RETURN, ST_BREAK, ST_CONTINUE, ST_ERROR } Status;

typedef struct Frame {
  SrEnv *env;
  SrVal *ret;
  const char **globals; /* names declared global in this function */
  int nglobals;
  const char **nonlocals; /* and nonlocal */
  int nnonlocals;
  SrEnv *scope;       /* a class body's: where its functions close over (not the class namespace) */
  SrFunction *fn;     /* the function running, for super() */
  int echo_all;       /* the REPL's own frame: every expression statement
                         echoes, nested ones too, as CPython's 'single'
                         mode prints them (not in function bodies) */
} Frame;

static int name_in(const char **names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (names[i] == name) return 1; /* interned */
  return 0;
}

static int is_global(const Frame *f, const char *name) { return name_in(f->globals, f->nglobals, name); }

/* Whether name is bound in e itself, not in a parent. */
static int bound_here(const SrEnv *e, const char *name) { return e->cap && e->keys[env_find(e, name)] != NULL; }

/* Where an assignment to name binds: the module for a global, the nearest
   enclosing function that binds it for a nonlocal, else the frame. */
static SrEnv *binding_env(SrInterp *I, const Frame *f, const char *name) {
  if (is_global(f, name)) return I->py->globals;
  if (name_in(f->nonlocals, f->nnonlocals, name))
    for (SrEnv *e = f->env->parent; e && e != I->py->globals; e = e->parent)
      if (bound_here(e, name)) return e;
  return f->env;
}

static SrVal *eval(SrInterp *I, Frame *f, SrNode *n);
static Status exec_block(SrInterp *I, Frame *f, SrNode **body, int n);

static SrVal *lookup_name(SrInterp *I, Frame *f, const char *name) {
  SrVal *v = sr_env_lookup(f->env, name);
  if (v) return sr_ref(v);
  /* a Python script sees Python's built-ins alone; else the embedding's
     names too (jnp, sin, P...) */
  if (!I->py->code || !I->py->code->python) v = sr_lookup_builtin_name(name);
  else v = sr_py_builtin(name);
  if (v) return sr_ref(v);
  if (I->py->last_echo && name[0] == '_' && name[1] == 0) return sr_ref(I->py->last_echo);
  return sr_raise_name_error(I, f->env == I->py->globals ? NULL : f->env, I->py->globals, name);
}

static SrVal *new_list_from(SrNode *n, SrVal **items, int count) {
  SrValKind k = n->kind == SR_N_TUPLE ? SR_V_TUPLE : n->kind == SR_N_SET ? SR_V_SET : SR_V_LIST;
  SrVal *v = sr_seq(NULL, k, count);
  for (int i = 0; i < count; i++) sr_seq_push(NULL, v, items[i]);
  return v;
}

/* items of a tuple/list/set display, expanding *starred */
static SrVal *eval_seq(SrInterp *I, Frame *f, SrNode *n) {
  SrVal *v = new_list_from(n, NULL, 0);
  for (int i = 0; i < n->n; i++) {
    SrNode *it = n->list[i];
    if (it->kind == SR_N_STARRED) {
      SrVal *x = eval(I, f, it->a);
      SrVal *items = x ? sr_iterate(I, x) : NULL;
      sr_unref(x);
      if (!items) {
        sr_unref(v);
        return NULL;
      }
      for (int k = 0; k < items->seq.n; k++) sr_seq_push(NULL, v, sr_ref(items->seq.items[k]));
      sr_unref(items);
    } else {
      SrVal *x = eval(I, f, it);
      if (!x) {
        sr_unref(v);
        return NULL;
      }
      if (v->kind == SR_V_SET) {
        int dup = 0;
        for (int k = 0; k < v->seq.n && !dup; k++) dup = sr_val_equal(v->seq.items[k], x);
        if (dup) {
          sr_unref(x);
          continue;
        }
      }
      sr_seq_push(NULL, v, x);
    }
  }
  return v;
}

/* super() without arguments: the class the running method was defined
   in, and its first argument (CPython's __class__ cell) */
static SrVal *zero_arg_super(SrInterp *I, Frame *f, SrNode *n) {
  SrFunction *fn = f->fn;
  SrVal *self = fn && fn->node->params->n ? sr_env_lookup(f->env, fn->node->params->names[0]) : NULL;
  if (!self) return sr_raise(I, "RuntimeError", "super(): no arguments");
  if (!fn->owner) return sr_raise(I, "RuntimeError", "super(): __class__ cell not found");
  SrVal *r = sr_class_super(I, fn->owner, self);
  if (!r) locate(I, n->off);
  return r;
}

static SrVal *eval_call(SrInterp *I, Frame *f, SrNode *n) {
  SrVal *fn = eval(I, f, n->a);
  if (!fn) return NULL;
  if (n->a->kind == SR_N_NAME && n->n == 0 && n->n2 == 0 && fn == sr_lookup_qualname("builtins.super")) {
    sr_unref(fn);
    return zero_arg_super(I, f, n);
  }
  if (n->n == 0 && n->n2 == 0 && sr_is_scope_fn(fn)) { /* locals(), vars(), dir(): the caller's scope */
    SrVal *r = sr_scope_call(I, fn, f->env);
    sr_unref(fn);
    return r;
  }
  SrVal *stack_pos[16], *stack_kw[16];
  const char *stack_kwn[16];
  int cap = 16, kcap = 16;
  SrVal **pos = stack_pos, **kwv = stack_kw;
  const char **kwn = stack_kwn;
  int np = 0, nk = 0;
  SrVal *r = NULL;
  int ok = 1;
#define PUSH_POS(X)                                                           \
  do {                                                                        \
    if (np == cap) {                                                          \
      SrVal **q = sr_xmalloc((size_t)cap * 2 * sizeof *q);                    \
      memcpy(q, pos, (size_t)np * sizeof *q);                                 \
      if (pos != stack_pos) free(pos);                                        \
      pos = q;                                                                \
      cap *= 2;                                                               \
    }                                                                         \
    pos[np++] = (X);                                                          \
  } while (0)
#define PUSH_KW(K, X)                                                         \
  do {                                                                        \
    if (nk == kcap) {                                                         \
      SrVal **q = sr_xmalloc((size_t)kcap * 2 * sizeof *q);                   \
      const char **qn = sr_xmalloc((size_t)kcap * 2 * sizeof *qn);            \
      memcpy(q, kwv, (size_t)nk * sizeof *q);                                 \
      memcpy(qn, kwn, (size_t)nk * sizeof *qn);                               \
      if (kwv != stack_kw) {                                                  \
        free(kwv);                                                            \
        free(kwn);                                                            \
      }                                                                       \
      kwv = q;                                                                \
      kwn = qn;                                                               \
      kcap *= 2;                                                              \
    }                                                                         \
    kwn[nk] = (K);                                                            \
    kwv[nk++] = (X);                                                          \
  } while (0)
  for (int i = 0; i < n->n && ok; i++) {
    SrNode *a = n->list[i];
    if (a->kind == SR_N_STARRED) {
      SrVal *x = eval(I, f, a->a);
      SrVal *items = x ? sr_iterate(I, x) : NULL;
      sr_unref(x);
      if (!items) {
        ok = 0;
        break;
      }
      for (int k = 0; k < items->seq.n; k++) PUSH_POS(sr_ref(items->seq.items[k]));
      sr_unref(items);
    } else {
      SrVal *x = eval(I, f, a);
      if (!x) ok = 0;
      else PUSH_POS(x);
    }
  }
  for (int i = 0; i < n->n2 && ok; i++) {
    SrVal *x = eval(I, f, n->list2[i]->kind == SR_N_STARRED ? n->list2[i]->a : n->list2[i]);
    if (!x) {
      ok = 0;
      break;
    }
    if (n->names[i]) {
      PUSH_KW(n->names[i], x);
    } else if (x->kind == SR_V_DICT) {
      for (int k = 0; k < x->dict.n; k++) {
        const char *key = sr_as_str(I, x->dict.keys[k], "a keyword");
        if (!key) {
          ok = 0;
          break;
        }
        PUSH_KW(key, sr_ref(x->dict.vals[k]));
      }
      sr_unref(x);
    } else {
      sr_raise(I, "TypeError", "argument after ** must be a mapping, not %s", sr_val_kind_name(x));
      sr_unref(x);
      ok = 0;
    }
  }
  if (ok) {
    SrArgs args = {np, pos, nk, kwn, kwv, NULL};
    uint32_t saved = I->py->cur_off;
    I->py->cur_off = n->off;
    r = sr_call(I, fn, &args);
    I->py->cur_off = saved;
  }
  /* an error of the call, or of unpacking *args and **kwargs, is the call's
     (one raised inside an argument's expression is located already) */
  if (!r) locate(I, n->off);
  for (int i = 0; i < np; i++) sr_unref(pos[i]);
  for (int i = 0; i < nk; i++) sr_unref(kwv[i]);
  if (pos != stack_pos) free(pos);
  if (kwv != stack_kw) {
    free(kwv);
    free(kwn);
  }
  sr_unref(fn);
#undef PUSH_POS
#undef PUSH_KW
  return r;
}

static Status assign(SrInterp *I, Frame *f, SrNode *t, SrVal *v);

/* A loop's next item: a generator's body runs from the loop's line
   (where an exception it raises leaves the loop's frame). */
static SrVal *loop_next(SrInterp *I, SrIter *it, uint32_t off) {
  uint32_t saved = I->py->cur_off;
  I->py->cur_off = off;
  SrVal *x = sr_iter_next(it);
  I->py->cur_off = saved;
  return x;
}

/* Whether a for clause's current item passes its if clauses: 1, 0, or -1
   with an exception raised. */
static int comp_keep(SrInterp *I, Frame *f, SrNode *gen) {
  for (int k = 0; k < gen->n; k++) {
    SrVal *cond = eval(I, f, gen->list[k]);
    int t = cond ? sr_truthy(I, cond) : -1;
    sr_unref(cond);
    if (t <= 0) return t;
  }
  return 1;
}

static int comp_loop(SrInterp *I, Frame *f, SrNode *c, int g, SrVal *acc) {
  if (g == c->n) {
    if (c->op == SR_COMP_DICT) {
      SrVal *k = eval(I, f, c->a);
      if (!k) return -1;
      SrVal *v = eval(I, f, c->b);
      if (!v) {
        sr_unref(k);
        return -1;
      }
      sr_dict_set(NULL, acc, k, v);
      return 0;
    }
    SrVal *x = eval(I, f, c->a);
    if (!x) return -1;
    if (c->op == SR_COMP_SET)
      for (int k = 0; k < acc->seq.n; k++)
        if (sr_val_equal(acc->seq.items[k], x)) {
          sr_unref(x);
          return 0;
        }
    sr_seq_push(NULL, acc, x);
    return 0;
  }
  SrNode *gen = c->list[g];
  SrVal *src = eval(I, f, gen->b);
  SrIter it;
  int rc = src ? sr_iter_begin(I, &it, src) : -1;
  sr_unref(src);
  if (rc < 0) return -1;
  for (SrVal *x; rc == 0 && (x = loop_next(I, &it, gen->b->off));) {
    if (assign(I, f, gen->a, x) != ST_OK) {
      rc = -1;
      break;
    }
    int keep = comp_keep(I, f, gen);
    if (keep < 0) rc = -1;
    else if (keep) rc = comp_loop(I, f, c, g + 1, acc);
    if (rc == 0 && sr_poll_interrupt(I)) rc = -1;
  }
  if (rc == 0 && sr_iter_failed(&it)) rc = -1;
  sr_iter_end(&it);
  return rc;
}

/* A generator expression: lazy, as in Python.  Its first iterable is
   evaluated (and iter() taken of it) where the expression stands; the
   rest runs a step at a time at each next(), in a scope of its own over
   the enclosing one.  depth is the for clause being walked (-1 once it is
   exhausted or has raised); open[k]: clause k's walk has begun. */
typedef struct GenExpr {
  SrCode *code;
  SrNode *c;
  Frame f;
  const char *func, *qual;
  int depth;
  SrIter *it;
  uint8_t *open;
} GenExpr;

static const char **names_copy(const char **names, int n) {
  if (!n) return NULL;
  const char **c = sr_xmalloc((size_t)n * sizeof *c);
  memcpy(c, names, (size_t)n * sizeof *c);
  return c;
}

static void genexpr_close(GenExpr *g) {
  for (int k = 0; k < g->c->n; k++)
    if (g->open[k]) sr_iter_end(&g->it[k]);
  memset(g->open, 0, (size_t)g->c->n);
  g->depth = -1;
}

static void genexpr_free(void *state) {
  GenExpr *g = state;
  genexpr_close(g);
  sr_env_unref(g->f.env);
  free(g->f.globals);
  free(g->f.nonlocals);
  sr_code_unref(g->code);
  free(g->it);
  free(g->open);
  free(g);
}

static SrVal *genexpr_step(SrInterp *I, void *state) {
  GenExpr *g = state;
  if (g->depth < 0) return NULL;
  SrCode *saved = I->py->code;
  const char *caller = I->py->cur_func, *caller_qual = I->py->cur_qual;
  uint32_t off = I->py->cur_off;
  SrPyCaller cf = {saved, off, caller, I->py->callers, caller_qual};
  I->py->callers = &cf;
  I->py->code = g->code;
  I->py->cur_func = g->func;
  I->py->cur_qual = g->qual;
  SrVal *r = NULL;
  int failed = 0;
  while (!r && !failed) {
    SrNode *gen = g->c->list[g->depth];
    SrIter *it = &g->it[g->depth];
    if (!g->open[g->depth]) {
      SrVal *src = eval(I, &g->f, gen->b);
      if (!src || sr_iter_begin(I, it, src) < 0) failed = 1;
      else g->open[g->depth] = 1;
      sr_unref(src);
      continue;
    }
    SrVal *x = loop_next(I, it, gen->b->off);
    if (!x) {
      failed = sr_iter_failed(it);
      sr_iter_end(it);
      g->open[g->depth] = 0;
      if (!failed && g->depth-- == 0) break; /* the first clause is done: all is */
      continue;
    }
    if (assign(I, &g->f, gen->a, x) != ST_OK) {
      failed = 1;
      break;
    }
    int keep = comp_keep(I, &g->f, gen);
    if (keep < 0 || sr_poll_interrupt(I)) {
      failed = 1;
    } else if (keep) {
      if (g->depth + 1 < g->c->n) g->depth++;
      else if (!(r = eval(I, &g->f, g->c->a))) failed = 1;
    }
  }
  I->py->callers = cf.up;
  I->py->code = saved;
  I->py->cur_func = caller;
  I->py->cur_qual = caller_qual;
  I->py->cur_off = off;
  if (failed) {
    /* a generator that raised is finished */
    if (saved && g->code) sr_tb_push(I, g->code->src, off, caller);
    genexpr_close(g);
  } else if (!r) {
    genexpr_close(g);
  }
  return r;
}

static SrVal *eval_genexpr(SrInterp *I, Frame *f, SrNode *c) {
  SrNode *gen = c->list[0];
  SrVal *src = eval(I, f, gen->b);
  if (!src) return NULL;
  GenExpr *g = sr_xcalloc(1, sizeof *g);
  g->c = c;
  g->it = sr_xcalloc((size_t)c->n, sizeof *g->it);
  g->open = sr_xcalloc((size_t)c->n, 1);
  int rc = sr_iter_begin(I, &g->it[0], src);
  sr_unref(src);
  if (rc < 0) {
    free(g->it);
    free(g->open);
    free(g);
    return NULL;
  }
  g->open[0] = 1;
  g->code = sr_code_ref(I->py->code);
  g->func = I->py->cur_func;
  g->qual = I->py->cur_qual;
  g->f = (Frame){sr_env_new(f->env), NULL, names_copy(f->globals, f->nglobals), f->nglobals,
                 names_copy(f->nonlocals, f->nnonlocals), f->nnonlocals, NULL, NULL, 0};
  return sr_lazy_iter_new("generator", genexpr_step, g, genexpr_free);
}

static SrVal *eval_comp(SrInterp *I, Frame *f, SrNode *c) {
  if (c->op == SR_COMP_GEN) return eval_genexpr(I, f, c);
  /* the comprehension's variables live in a scope of their own */
  Frame inner = {sr_env_new(f->env), NULL, f->globals, f->nglobals, f->nonlocals, f->nnonlocals, NULL, f->fn, 0};
  SrVal *acc = c->op == SR_COMP_DICT ? sr_dict(NULL)
                                     : sr_seq(NULL, c->op == SR_COMP_SET ? SR_V_SET : SR_V_LIST, 0);
  int rc = comp_loop(I, &inner, c, 0, acc);
  sr_env_unref(inner.env);
  if (rc < 0) {
    sr_unref(acc);
    return NULL;
  }
  return acc;
}

/* format(value, spec) for the format-spec mini-language's common subset */
/* Inserts a separator every three digits of the integer part. */
static void group_digits(SrBuf *num, char sep) {
  SrBuf out = SR_BUF_INIT;
  const char *tmp = sr_buf_str(num);
  size_t n = num->len;
  size_t st = tmp[0] == '-' || tmp[0] == '+' || tmp[0] == ' ' ? 1 : 0;
  size_t end = st;
  while (end < n && tmp[end] >= '0' && tmp[end] <= '9') end++;
  sr_buf_putn(&out, tmp, st);
  for (size_t i = st; i < end; i++) {
    sr_buf_putc(&out, tmp[i]);
    size_t left = end - i - 1;
    if (left && left % 3 == 0) sr_buf_putc(&out, sep);
  }
  sr_buf_putn(&out, tmp + end, n - end);
  sr_buf_free(num);
  *num = out;
}

/* printf's %.*f / %.*e / %.*g of ax at precision prec, into out.  Past
   the digits a double has (1074 after the point, 767 significant) the rest
   are zeros: printed as such, so that a precision of a billion costs its
   zeros, not printf's limits (int lengths). */
static void float_digits(SrBuf *out, char type, int64_t prec, double ax) {
  enum { MAXP = 1100 };
  char f[8];
  snprintf(f, sizeof f, "%%.*%c", type);
  size_t at = out->len;
  sr_buf_printf(out, f, (int)(prec < MAXP ? prec : MAXP), ax);
  if (prec <= MAXP || type == 'g' || type == 'G' || !isfinite(ax)) return;
  /* the zeros go before an exponent */
  char *e = strpbrk(out->p + at, "eE");
  size_t tail = e ? out->len - (size_t)(e - out->p) : 0;
  char exp[16] = "";
  if (tail && tail < sizeof exp) memcpy(exp, e, tail + 1);
  out->len -= tail;
  sr_buf_fill(out, '0', (size_t)(prec - MAXP));
  sr_buf_puts(out, exp);
}

/* Reads the digits of a width or precision at *s (none read as 0), as
   CPython does, refusing what does not fit. */
static int spec_number(SrInterp *I, const char **s, int64_t *out) {
  int64_t n = 0;
  for (; **s >= '0' && **s <= '9'; (*s)++)
    if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, **s - '0', &n)) {
      sr_raise(I, "ValueError", "Too many decimal digits in format string");
      return -1;
    }
  *out = n;
  return 0;
}

/* The magnitude of an integer to format: exact for a Python int (INT64_MIN
   included), and from the double for an array scalar, kept in range. */
static uint64_t int_magnitude(const SrVal *v, double ax) {
  if (v->kind != SR_V_OBJ) return v->i < 0 ? 0 - (uint64_t)v->i : (uint64_t)v->i;
  return ax < 0x1p64 ? (uint64_t)ax : UINT64_MAX;
}

/* format(value, spec): Python's format-spec mini-language for numbers and
   strings: [[fill]align][sign][#][0][width][,|_][.precision][type] */
static SrVal *format_value(SrInterp *I, SrVal *v, const char *spec) {
  SrBuf b = SR_BUF_INIT;
  if (!*spec) {
    SrVal *r = sr_to_str(I, &b, v) < 0 ? NULL : sr_str(NULL, sr_buf_str(&b), b.len);
    sr_buf_free(&b);
    return r;
  }
  const char *s = spec;
  char fill = ' ', align = 0, sign = '-';
  if (s[0] && (s[1] == '<' || s[1] == '>' || s[1] == '^' || s[1] == '=')) {
    fill = s[0];
    align = s[1];
    s += 2;
  } else if (*s == '<' || *s == '>' || *s == '^' || *s == '=') {
    align = *s++;
  }
  if (*s == '+' || *s == '-' || *s == ' ') sign = *s++;
  int alt = 0;
  if (*s == '#') {
    alt = 1;
    s++;
  }
  if (*s == '0') {
    if (!align) {
      fill = '0';
      align = '=';
    }
    s++;
  }
  int64_t width64 = 0, prec64 = -1;
  if (spec_number(I, &s, &width64) < 0) return NULL;
  char group = 0;
  if (*s == ',' || *s == '_') group = *s++;
  if (*s == '.') {
    s++;
    if (spec_number(I, &s, &prec64) < 0) return NULL;
  }
  /* a width is that many bytes of result; a number's precision past
     INT_MAX is refused (formatter_unicode.c) and below it costs its digits */
  if (sr_check_mem(I, (uint64_t)width64, 1) < 0) return NULL;
  size_t width = (size_t)width64;
  int64_t prec = prec64;
  char type = *s ? *s : 0;
  if (type && s[1]) {
    sr_raise(I, "ValueError", "Invalid format specifier '%s'", spec);
    return NULL;
  }
  double x = 0;
  int is_int = v->kind == SR_V_INT || v->kind == SR_V_BOOL;
  int is_num = is_int || v->kind == SR_V_FLOAT;
  if (!is_num && v->kind == SR_V_OBJ && type && strchr("fFeEgGd%xXob", type)) {
    if (sr_as_float(I, v, "a formatted value", &x) < 0) return NULL;
    is_num = 1;
    is_int = strchr("dxXob", type) != NULL;
  } else if (is_num) {
    x = v->kind == SR_V_FLOAT ? v->f : (double)v->i;
  }
  if (is_num && prec > INT_MAX) {
    sr_raise(I, "ValueError", "precision too big");
    return NULL;
  }
  if (is_num && prec > 0 && sr_check_mem(I, (uint64_t)prec + 400, 1) < 0) return NULL;
  SrBuf num = SR_BUF_INIT;
  if (is_num) {
    const char *sg = sign == '+' ? "+" : sign == ' ' ? " " : "";
    int neg = x < 0 || (x == 0 && signbit(x));
    double ax = neg ? -x : x;
    if (strchr("xXob", type ? type : 'd') && type) {
      if (!is_int) {
        sr_raise(I, "ValueError", "Unknown format code '%c' for object of type 'float'", type);
        return NULL;
      }
      uint64_t u = int_magnitude(v, ax);
      char digits[80];
      int k = 0;
      int base = type == 'o' ? 8 : type == 'b' ? 2 : 16;
      const char *dig = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
      do {
        digits[k++] = dig[u % (uint64_t)base];
        u /= (uint64_t)base;
      } while (u);
      sr_buf_puts(&num, neg ? "-" : sg);
      if (alt) sr_buf_printf(&num, "0%c", type);
      while (k) sr_buf_putc(&num, digits[--k]);
    } else if (type == 'd' || (!type && is_int)) {
      sr_buf_printf(&num, "%s%llu", neg ? "-" : sg, (unsigned long long)int_magnitude(v, ax));
    } else if (type == '%') {
      sr_buf_puts(&num, neg ? "-" : sg);
      float_digits(&num, 'f', prec < 0 ? 6 : prec, ax * 100);
      sr_buf_putc(&num, '%');
    } else if (type && strchr("fFeEgG", type)) {
      sr_buf_puts(&num, neg ? "-" : sg);
      float_digits(&num, type, prec < 0 ? 6 : prec, ax);
    } else {
      if (!neg) sr_buf_puts(&num, sg);
      if (prec >= 0) float_digits(&num, 'g', prec, x);
      else sr_to_str(I, &num, v);
    }
    if (group) group_digits(&num, group);
    if (!align) align = '>';
  } else {
    if (type && type != 's') {
      sr_raise(I, "ValueError", "Unknown format code '%c' for object of type '%s'", type, sr_val_kind_name(v));
      return NULL;
    }
    sr_to_str(I, &num, v);
    if (prec >= 0 && (uint64_t)prec < num.len) num.p[num.len = (size_t)prec] = 0;
    if (!align) align = '<';
  }
  const char *tmp = sr_buf_str(&num);
  size_t len = num.len;
  size_t pad = len < width ? width - len : 0;
  if (align == '<') {
    sr_buf_puts(&b, tmp);
    sr_buf_fill(&b, fill, pad);
  } else if (align == '^') {
    sr_buf_fill(&b, fill, pad / 2);
    sr_buf_puts(&b, tmp);
    sr_buf_fill(&b, fill, pad - pad / 2);
  } else if (align == '=') {
    size_t pre = tmp[0] == '-' || tmp[0] == '+' || tmp[0] == ' ' ? 1 : 0;
    if (tmp[pre] == '0' && (tmp[pre + 1] == 'x' || tmp[pre + 1] == 'X' || tmp[pre + 1] == 'o' || tmp[pre + 1] == 'b'))
      pre += 2;
    sr_buf_putn(&b, tmp, pre);
    sr_buf_fill(&b, fill, pad);
    sr_buf_puts(&b, tmp + pre);
  } else {
    sr_buf_fill(&b, fill, pad);
    sr_buf_puts(&b, tmp);
  }
  sr_buf_free(&num);
  SrVal *r = sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

SrVal *sr_format(SrInterp *I, SrVal *v, const char *spec) { return format_value(I, v, spec); }

static SrVal *eval_fstring(SrInterp *I, Frame *f, SrNode *n) {
  SrBuf b = SR_BUF_INIT;
  for (int i = 0; i < n->n; i++) {
    SrNode *part = n->list[i];
    if (part->kind == SR_N_CONST) {
      sr_buf_putn(&b, part->val->str.s, part->val->str.n);
      continue;
    }
    SrVal *v = eval(I, f, part->a);
    if (!v) {
      sr_buf_free(&b);
      return NULL;
    }
    if (part->name) sr_buf_puts(&b, part->name);
    SrVal *spec = part->b ? eval(I, f, part->b) : NULL;
    if (part->b && !spec) {
      sr_unref(v);
      sr_buf_free(&b);
      return NULL;
    }
    int rc = 0;
    if (part->op == SR_CONV_REPR && !spec) {
      rc = sr_to_repr(I, &b, v);
    } else if (part->op == SR_CONV_STR && !spec) {
      rc = sr_to_str(I, &b, v);
    } else {
      SrVal *conv = v;
      if (part->op == SR_CONV_REPR || part->op == SR_CONV_STR) {
        SrBuf t = SR_BUF_INIT;
        rc = part->op == SR_CONV_REPR ? sr_to_repr(I, &t, v) : sr_to_str(I, &t, v);
        conv = sr_str(NULL, sr_buf_str(&t), t.len);
        sr_buf_free(&t);
      }
      SrVal *s = rc < 0 ? NULL : format_value(I, conv, spec ? spec->str.s : "");
      if (conv != v) sr_unref(conv);
      if (!s) {
        sr_unref(v);
        sr_unref(spec);
        sr_buf_free(&b);
        return NULL;
      }
      sr_buf_putn(&b, s->str.s, s->str.n);
      sr_unref(s);
    }
    sr_unref(spec);
    sr_unref(v);
    if (rc < 0) {
      sr_buf_free(&b);
      return NULL;
    }
  }
  SrVal *r = sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

static SrVal *make_function(SrInterp *I, Frame *f, SrNode *n) {
  /* defaults are evaluated when the function is made */
  int nd = n->params->n;
  SrVal **defaults = sr_xcalloc((size_t)nd + 1, sizeof *defaults);
  for (int i = 0; i < nd; i++)
    if (n->params->defaults[i]) {
      defaults[i] = eval(I, f, n->params->defaults[i]);
      if (!defaults[i]) {
        for (int k = 0; k < i; k++) sr_unref(defaults[k]);
        free(defaults);
        return NULL;
      }
    }
  SrVal *fv = sr_function_new(I->py->code, n, f->scope ? f->scope : f->env, defaults,
                              n->kind == SR_N_LAMBDA ? "<lambda>" : n->name);
  /* __qualname__: one made inside a function is among its <locals> */
  if (f->fn && !f->scope) {
    SrFunction *nf = fv->obj.data;
    SrBuf q = SR_BUF_INIT;
    sr_buf_printf(&q, "%s.<locals>.%s", f->fn->qualname ? f->fn->qualname : f->fn->name, nf->name);
    nf->qualname = sr_intern_cstr(sr_buf_str(&q));
    sr_buf_free(&q);
  } else if (f->scope && bound_here(f->env, sr_intern_cstr("__qualname__"))) {
    /* one made in a class body is the class's: C.f, before any decorator */
    SrVal *cq = sr_env_lookup(f->env, sr_intern_cstr("__qualname__"));
    if (cq && cq->kind == SR_V_STR) {
      SrFunction *nf = fv->obj.data;
      SrBuf q = SR_BUF_INIT;
      sr_buf_printf(&q, "%.*s.%s", (int)cq->str.n, cq->str.s, nf->name);
      nf->qualname = sr_intern_cstr(sr_buf_str(&q));
      sr_buf_free(&q);
    }
  }
  return fv;
}

/* A jaxpr written in a statement is type-checked when it is first
   evaluated, by the init table's check_jaxpr (shardrepl's checks it under
   the mesh then in context): an equation whose rule fails or whose
   written type is not the one its rule computes refuses the definition,
   with all the errors of the jaxpr at once.  Primitives without a type
   rule are trusted as written (they run only if they have an eval rule).
   n->op marks a literal that passed. */
static int check_literal(SrInterp *I, SrNode *n) {
  if (n->op) return 0;
  SrDiags d = SR_DIAGS_INIT;
  if (I->py->init->check_jaxpr && (I->py->init->check_jaxpr(I, n->prog->top, &d) > 0 || d.count)) {
    sr_raise_diags(I, &d, "TypeError");
    return -1;
  }
  n->op = 1;
  return 0;
}

static SrVal *eval_node(SrInterp *I, Frame *f, SrNode *n);

/* Evaluation recurses down the syntax tree, and a tree can be as deep as
   its source is long (1 + 1 + ... + 1 is a chain of BINOPs), so the depth
   is bounded as CPython bounds it, with RecursionError.  The bound counts
   every evaluation under way, in all the calls under way too (at most
   MAX_CALL_DEPTH of them), which is what the C stack holds. */
/* Where the expression n starts, as Python's positions have it (a binary
   operation, comparison, subscript or attribute starts where its left
   operand does; the nodes keep the operator's offset, for errors): the
   offset the operations it binds are recorded at (source_info). */
static uint32_t expr_start(const SrNode *n) {
  while ((n->kind == SR_N_BINOP || n->kind == SR_N_COMPARE || n->kind == SR_N_SUBSCRIPT || n->kind == SR_N_ATTR) &&
         n->a)
    n = n->a;
  return n->off;
}

/* Runs an operation of the expression n at n's start (py->cur_off). */
#define AT_EXPR(n, stmt)                                                                                               \
  do {                                                                                                                 \
    uint32_t saved_off_ = I->py->cur_off;                                                                              \
    I->py->cur_off = expr_start(n);                                                                                    \
    stmt;                                                                                                              \
    I->py->cur_off = saved_off_;                                                                                       \
  } while (0)

static SrVal *eval(SrInterp *I, Frame *f, SrNode *n) {
  if (I->py->eval_depth >= MAX_EVAL_DEPTH) {
    sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
    locate(I, n->off);
    return NULL;
  }
  I->py->eval_depth++;
  SrVal *r = eval_node(I, f, n);
  I->py->eval_depth--;
  return r;
}

static SrVal *eval_node(SrInterp *I, Frame *f, SrNode *n) {
  if (sr_interrupt_point(I) || out_of_memory(I)) {
    if (!I->exc) sr_raise(I, "KeyboardInterrupt", "interrupted");
    locate(I, n->off);
    return NULL;
  }
  SrVal *r = NULL;
  switch (n->kind) {
  case SR_N_NAME: r = lookup_name(I, f, n->name); break;
  case SR_N_CONST: return sr_ref(n->val);
  case SR_N_JAXPR:
    if (check_literal(I, n) == 0) r = sr_jaxpr_val(NULL, n->prog->top);
    break;
  case SR_N_TUPLE:
  case SR_N_LIST:
  case SR_N_SET: r = eval_seq(I, f, n); break;
  case SR_N_DICT: {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < n->n; i++) {
      SrVal *v = eval(I, f, n->list2[i]);
      if (!v) {
        sr_unref(d);
        d = NULL;
        break;
      }
      if (!n->list[i]) {
        if (v->kind != SR_V_DICT) {
          sr_raise(I, "TypeError", "'%s' object is not a mapping", sr_val_kind_name(v));
          sr_unref(v);
          sr_unref(d);
          d = NULL;
          break;
        }
        for (int k = 0; k < v->dict.n; k++)
          sr_dict_set(NULL, d, sr_ref(v->dict.keys[k]), sr_ref(v->dict.vals[k]));
        sr_unref(v);
        continue;
      }
      SrVal *k = eval(I, f, n->list[i]);
      if (!k) {
        sr_unref(v);
        sr_unref(d);
        d = NULL;
        break;
      }
      sr_dict_set(NULL, d, k, v);
    }
    r = d;
    break;
  }
  case SR_N_ATTR: {
    SrVal *o = eval(I, f, n->a);
    if (!o) return NULL;
    AT_EXPR(n, r = sr_getattr(I, o, n->name));
    sr_unref(o);
    break;
  }
  case SR_N_SUBSCRIPT: {
    SrVal *o = eval(I, f, n->a);
    if (!o) return NULL;
    SrVal *k = eval(I, f, n->b);
    if (k) AT_EXPR(n, r = sr_getitem(I, o, k));
    sr_unref(k);
    sr_unref(o);
    break;
  }
  case SR_N_SLICE: {
    SrVal *parts[3] = {NULL, NULL, NULL};
    SrNode *ns[3] = {n->a, n->b, n->c};
    for (int i = 0; i < 3; i++) {
      parts[i] = ns[i] ? eval(I, f, ns[i]) : sr_none();
      if (!parts[i]) {
        for (int k = 0; k < i; k++) sr_unref(parts[k]);
        return NULL;
      }
    }
    r = sr_slice_new(parts[0], parts[1], parts[2]);
    break;
  }
  case SR_N_CALL: return eval_call(I, f, n);
  case SR_N_BINOP: {
    SrVal *a = eval(I, f, n->a);
    if (!a) return NULL;
    SrVal *b = eval(I, f, n->b);
    if (b) AT_EXPR(n, r = sr_binop(I, n->op, a, b));
    sr_unref(a);
    sr_unref(b);
    break;
  }
  case SR_N_UNARY: {
    SrVal *a = eval(I, f, n->a);
    if (!a) return NULL;
    if (n->op == SR_OP_NOT) {
      int t = sr_truthy(I, a);
      r = t < 0 ? NULL : sr_bool(!t);
    } else {
      AT_EXPR(n, r = sr_unop(I, n->op, a));
    }
    sr_unref(a);
    break;
  }
  case SR_N_COMPARE: {
    SrVal *left = eval(I, f, n->a);
    if (!left) return NULL;
    r = sr_bool(1);
    for (int i = 0; i < n->n; i++) {
      SrVal *right = eval(I, f, n->list[i]);
      if (!right) {
        sr_unref(left);
        return NULL;
      }
      SrVal *c;
      AT_EXPR(n, c = sr_binop(I, n->ops[i], left, right));
      sr_unref(left);
      left = right;
      if (!c) {
        r = NULL; /* left is dropped after the loop */
        break;
      }
      if (n->n == 1) {
        r = c;
        break;
      }
      int t = sr_truthy(I, c);
      if (t <= 0) {
        r = t < 0 ? NULL : c;
        if (t == 0) break;
        sr_unref(c);
        break;
      }
      sr_unref(c);
    }
    if (n->n != 1 || !r) sr_unref(left);
    else sr_unref(left);
    break;
  }
  case SR_N_BOOLOP: {
    for (int i = 0; i < n->n; i++) {
      SrVal *v = eval(I, f, n->list[i]);
      if (!v) return NULL;
      if (i == n->n - 1) return v;
      int t = sr_truthy(I, v);
      if (t < 0) {
        sr_unref(v);
        return NULL;
      }
      if ((n->op == SR_OP_AND && !t) || (n->op == SR_OP_OR && t)) return v;
      sr_unref(v);
    }
    return sr_none();
  }
  case SR_N_IFEXP: {
    SrVal *c = eval(I, f, n->a);
    if (!c) return NULL;
    int t = sr_truthy(I, c);
    sr_unref(c);
    if (t < 0) return NULL;
    return eval(I, f, t ? n->b : n->c);
  }
  case SR_N_LAMBDA: r = make_function(I, f, n); break;
  case SR_N_YIELD:
    if (n->op) {
      SrVal *src = eval(I, f, n->a);
      r = src ? sr_gen_yield_from(I, src) : NULL;
      sr_unref(src);
    } else {
      SrVal *v = n->a ? eval(I, f, n->a) : sr_none();
      r = v ? sr_gen_yield(I, v) : NULL;
    }
    break;
  case SR_N_COMP: r = eval_comp(I, f, n); break;
  case SR_N_FSTRING: r = eval_fstring(I, f, n); break;
  case SR_N_STARRED: r = sr_raise(I, "SyntaxError", "can't use starred expression here"); break;
  default: r = sr_raise(I, "SyntaxError", "not an expression");
  }
  if (!r) locate(I, n->off);
  return r;
}

/* ---- assignment ---- */

static Status assign(SrInterp *I, Frame *f, SrNode *t, SrVal *v) {
  switch (t->kind) {
  case SR_N_NAME:
    sr_env_set(binding_env(I, f, t->name), t->name, v);
    return ST_OK;
  case SR_N_ATTR: {
    SrVal *o = eval(I, f, t->a);
    if (!o) {
      sr_unref(v);
      return ST_ERROR;
    }
    int rc = sr_setattr(I, o, t->name, v);
    sr_unref(o);
    sr_unref(v);
    if (rc < 0) locate(I, t->off);
    return rc < 0 ? ST_ERROR : ST_OK;
  }
  case SR_N_SUBSCRIPT: {
    SrVal *o = eval(I, f, t->a);
    SrVal *k = o ? eval(I, f, t->b) : NULL;
    int rc = k ? sr_setitem(I, o, k, v) : -1;
    sr_unref(o);
    sr_unref(k);
    sr_unref(v);
    if (rc < 0) locate(I, t->off);
    return rc < 0 ? ST_ERROR : ST_OK;
  }
  case SR_N_TUPLE:
  case SR_N_LIST: {
    SrVal *items = sr_iterate(I, v);
    sr_unref(v);
    if (!items) {
      locate(I, t->off);
      return ST_ERROR;
    }
    int star = -1;
    for (int i = 0; i < t->n; i++)
      if (t->list[i]->kind == SR_N_STARRED) star = i;
    int need = star >= 0 ? t->n - 1 : t->n;
    if ((star < 0 && items->seq.n != need) || (star >= 0 && items->seq.n < need)) {
      if (items->seq.n > need)
        sr_raise(I, "ValueError", "too many values to unpack (expected %d)", need);
      else
        sr_raise(I, "ValueError", "not enough values to unpack (expected %d, got %d)", need, items->seq.n);
      sr_unref(items);
      locate(I, t->off);
      return ST_ERROR;
    }
    int k = 0;
    for (int i = 0; i < t->n; i++) {
      Status s;
      if (i == star) {
        int m = items->seq.n - need;
        SrVal *rest = sr_seq(NULL, SR_V_LIST, m);
        for (int j = 0; j < m; j++) sr_seq_push(NULL, rest, sr_ref(items->seq.items[k++]));
        s = assign(I, f, t->list[i]->a, rest);
      } else {
        s = assign(I, f, t->list[i], sr_ref(items->seq.items[k++]));
      }
      if (s != ST_OK) {
        sr_unref(items);
        return s;
      }
    }
    sr_unref(items);
    return ST_OK;
  }
  default:
    sr_unref(v);
    sr_raise(I, "SyntaxError", "cannot assign to this expression");
    locate(I, t->off);
    return ST_ERROR;
  }
}

/* ---- statements ---- */

static int exc_matches(SrInterp *I, SrVal *want, SrVal *exc) {
  if (!want) return 1;
  if (want->kind == SR_V_TUPLE) {
    for (int i = 0; i < want->seq.n; i++)
      if (exc_matches(I, want->seq.items[i], exc)) return 1;
    return 0;
  }
  const char *wn = sr_exception_type_name(want);
  if (!wn) return 0;
  return sr_exception_is_a(sr_exc_type(exc), wn);
}

/* The __exit__ of a with item whose value is not a built-in manager,
   after calling its __enter__ into *entered; NULL with an exception
   raised where either is missing (CPython's TypeError) or __enter__
   fails. */
static SrVal *user_context_hooks(SrInterp *I, SrVal *m, SrVal **entered) {
  SrVal *en = sr_class_of(m) ? sr_getattr(I, m, "__enter__") : NULL;
  SrVal *ex = en ? sr_getattr(I, m, "__exit__") : NULL;
  if (!ex) {
    sr_unref(en);
    sr_exc_clear(I);
    sr_raise(I, "TypeError", "'%s' object does not support the context manager protocol", sr_val_kind_name(m));
    return NULL;
  }
  SrArgs a = {0, NULL, 0, NULL, NULL, NULL};
  *entered = sr_call(I, en, &a);
  sr_unref(en);
  if (!*entered) {
    sr_unref(ex);
    return NULL;
  }
  return ex;
}

/* Calls __exit__(type, value, traceback) for a block that ended with
   status s; a true result swallows an exception. */
static Status user_context_exit(SrInterp *I, SrVal *ex, Status s) {
  SrVal *pending = s == ST_ERROR ? I->exc : NULL;
  SrSrc *psrc = I->exc_src;
  size_t poff = I->exc_off;
  int ploc = I->exc_located;
  if (pending) {
    I->exc = NULL;
    I->exc_src = NULL;
    I->exc_located = 0;
  }
  SrVal *tfn = pending ? sr_lookup_qualname("builtins.type") : NULL;
  SrVal *args[3] = {tfn ? sr_call1(I, tfn, pending) : sr_none(), pending ? sr_ref(pending) : sr_none(), sr_none()};
  if (!args[0]) args[0] = sr_none();
  SrArgs a = {3, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, ex, &a);
  for (int i = 0; i < 3; i++) sr_unref(args[i]);
  if (!r) {
    sr_unref(pending);
    sr_src_unref(psrc);
    return ST_ERROR;
  }
  int t = sr_truthy(I, r);
  sr_unref(r);
  if (pending) {
    if (t > 0) {
      sr_unref(pending);
      sr_src_unref(psrc);
      return ST_OK;
    }
    I->exc = pending;
    I->exc_src = psrc;
    I->exc_off = poff;
    I->exc_located = ploc;
  }
  return t < 0 ? ST_ERROR : s;
}

static Status exec_stmt(SrInterp *I, Frame *f, SrNode *n, int top);

static Status exec_block(SrInterp *I, Frame *f, SrNode **body, int n) {
  for (int i = 0; i < n; i++) {
    /* where evaluation is, until a call inside says more */
    I->py->cur_off = body[i]->off;
    Status s = exec_stmt(I, f, body[i], 0);
    if (s != ST_OK) return s;
  }
  return ST_OK;
}

static int echo_value(SrInterp *I, SrVal *v) {
  if (v->kind == SR_V_NONE) return 0;
  SrBuf b = SR_BUF_INIT;
  int rc = sr_to_repr(I, &b, v);
  sr_buf_putc(&b, '\n');
  if (rc == 0) {
    sr_unref(I->py->last_echo);
    I->py->last_echo = sr_ref(v);
  }
  if (rc == 0 && I->py->on_echo && I->py->out) {
    I->py->on_echo(I, b.p, b.len);
    log_output(I, &I->py->stmt_res, b.p, b.len);
  } else if (rc == 0) {
    I->py->in_echo = 1;
    sr_write(I, b.p, b.len);
    I->py->in_echo = 0;
  }
  sr_buf_free(&b);
  return rc;
}

static void bind_star(const char *name, SrVal *v, void *ctx) {
  sr_env_set(ctx, sr_intern_cstr(name), sr_ref(v));
}

/* import statements: the module (each of a.b.c) must exist in the
   registry (modules.h), else ModuleNotFoundError at the statement */
static Status exec_import(SrInterp *I, Frame *f, SrNode *n) {
  if (n->kind == SR_N_IMPORT) {
    for (int i = 0; i < n->n; i++) {
      SrNode *al = n->list[i];
      const char *full = al->name;
      if (sr_import_check(I, full) < 0) {
        locate(I, al->off);
        return ST_ERROR;
      }
      /* import a.b binds a; import a.b as c binds a.b */
      const char *dot = strchr(full, '.');
      const char *top = dot ? sr_intern(full, (size_t)(dot - full)) : full;
      const char *name = al->name2 ? al->name2 : top;
      sr_env_set(binding_env(I, f, name), name, sr_module(al->name2 ? full : top));
    }
    return ST_OK;
  }
  /* from MODULE import names */
  if (sr_import_check(I, n->name) < 0) {
    locate(I, n->off);
    return ST_ERROR;
  }
  for (int i = 0; i < n->n; i++) {
    SrNode *al = n->list[i];
    if (strcmp(al->name, "*") == 0) {
      sr_import_star(n->name, bind_star, f->env);
      continue;
    }
    SrVal *v = sr_import_name(I, n->name, al->name);
    if (!v) {
      locate(I, al->off);
      return ST_ERROR;
    }
    const char *name = al->name2 ? al->name2 : al->name;
    sr_env_set(binding_env(I, f, name), name, v);
  }
  return ST_OK;
}

/* class NAME(BASE): BODY -- the body runs in a namespace of its own, whose
   functions close over the enclosing scope, then the class is made of it
   and the decorators apply, bottom-up. */
static Status exec_class(SrInterp *I, Frame *f, SrNode *n) {
  SrVal **bases = sr_xcalloc((size_t)n->n3 + 1, sizeof *bases);
  for (int i = 0; i < n->n3; i++)
    if (!(bases[i] = eval(I, f, n->list3[i]))) {
      while (i-- > 0) sr_unref(bases[i]);
      free(bases);
      return ST_ERROR;
    }
  SrVal **decos = sr_xcalloc((size_t)n->n2 + 1, sizeof *decos);
  Status s = ST_OK;
  for (int i = 0; i < n->n2 && s == ST_OK; i++)
    if (!(decos[i] = eval(I, f, n->list2[i]))) s = ST_ERROR;
  SrEnv *ns = sr_env_new(f->env);
  if (s == ST_OK) {
    sr_env_set(ns, sr_intern_cstr("__module__"), sr_str_cstr(NULL, "__main__"));
    sr_env_set(ns, sr_intern_cstr("__qualname__"), sr_str_cstr(NULL, n->name));
    if (n->doc) sr_env_set(ns, sr_intern_cstr("__doc__"), sr_str_cstr(NULL, n->doc));
    Frame cf = {ns, NULL, NULL, 0, NULL, 0, f->env, NULL, 0};
    s = exec_block(I, &cf, n->list, n->n);
    free(cf.globals);
    free(cf.nonlocals);
    if (s != ST_OK && s != ST_ERROR) {
      sr_raise(I, "SyntaxError", "'break' outside loop");
      locate(I, n->off);
      s = ST_ERROR;
    }
  }
  SrVal *cls = NULL;
  if (s == ST_OK) {
    /* the namespace as a dict: the names the body's statements bind, in
       their order (an enum's members), then the rest */
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < n->n; i++) {
      SrNode *st = n->list[i];
      SrNode *one = st->kind == SR_N_ANNOT ? st->a : NULL;
      int nt = st->kind == SR_N_ASSIGN ? st->n : one != NULL;
      for (int k = 0; k < nt; k++) {
        SrNode *t = one ? one : st->list[k];
        SrVal *v = t->kind == SR_N_NAME && bound_here(ns, t->name) ? sr_env_lookup(ns, t->name) : NULL;
        SrVal *key = v ? sr_str_cstr(NULL, t->name) : NULL;
        if (key && !sr_dict_get(d, key)) sr_dict_set(NULL, d, key, sr_ref(v));
        else sr_unref(key);
      }
    }
    for (size_t i = 0; i < ns->cap; i++) {
      SrVal *key = ns->keys[i] ? sr_str_cstr(NULL, ns->keys[i]) : NULL;
      if (key && !sr_dict_get(d, key)) sr_dict_set(NULL, d, key, sr_ref(ns->vals[i]));
      else sr_unref(key);
    }
    cls = sr_class_new_bases(I, n->name, bases, n->n3, d);
    if (!cls) {
      locate(I, n->off);
      s = ST_ERROR;
    }
  }
  sr_env_clear(ns);
  sr_env_unref(ns);
  for (int i = n->n2 - 1; i >= 0 && s == ST_OK; i--) {
    SrVal *g = sr_call1(I, decos[i], cls);
    if (!g) locate(I, n->list2[i]->off);
    sr_unref(cls);
    cls = g;
    if (!g) s = ST_ERROR;
  }
  for (int i = 0; i < n->n2; i++) sr_unref(decos[i]);
  free(decos);
  for (int i = 0; i < n->n3; i++) sr_unref(bases[i]);
  free(bases);
  if (s == ST_OK) sr_env_set(f->env, n->name, cls);
  return s;
}

/* ---- match statements: whether v matches pattern n (PEP 634), binding
   its captures as it goes: 1, 0, -1 with an exception ---- */

static SrVal *callq1(SrInterp *I, const char *qualname, int n, SrVal **args) {
  SrVal *fn = sr_lookup_qualname(qualname);
  if (!fn) return sr_raise(I, "RuntimeError", "%s is missing", qualname);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  return sr_call(I, fn, &a);
}

static int truth_of(SrInterp *I, SrVal *r) {
  if (!r) return -1;
  int t = sr_truthy(I, r);
  sr_unref(r);
  return t;
}

static void bind_capture(SrInterp *I, Frame *f, const char *name, SrVal *v) {
  sr_env_set(binding_env(I, f, name), name, sr_ref(v));
}

/* a sequence pattern's subject: a list, a tuple (a namedtuple too) */
static SrVal *match_seq_items(SrInterp *I, SrVal *v) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) return sr_ref(v);
  if (sr_class_namedtuple_kind(v)) return sr_iterate(I, v);
  return NULL;
}

static int match_pattern(SrInterp *I, Frame *f, SrNode *n, SrVal *v);

/* the positional sub-patterns' attribute names: cls.__match_args__ (a
   namedtuple's _fields, a dataclass's fields) */
static SrVal *match_args(SrInterp *I, SrVal *v) {
  SrVal *m = sr_getattr(I, v, "__match_args__");
  if (m) return m;
  sr_exc_clear(I);
  if (sr_class_namedtuple_kind(v)) {
    m = sr_getattr(I, v, "_fields");
    if (m) return m;
    sr_exc_clear(I);
  }
  SrVal *isdc = callq1(I, "dataclasses.is_dataclass", 1, &v);
  if (isdc && sr_val_truthy(isdc)) {
    sr_unref(isdc);
    SrVal *fl = callq1(I, "dataclasses.fields", 1, &v), *it = fl ? sr_iterate(I, fl) : NULL;
    sr_unref(fl);
    if (!it) return NULL;
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, it->seq.n);
    for (int i = 0; i < it->seq.n; i++) {
      SrVal *nm = sr_getattr(I, it->seq.items[i], "name");
      if (nm) sr_seq_push(NULL, t, nm);
    }
    sr_unref(it);
    return t;
  }
  sr_unref(isdc);
  sr_exc_clear(I);
  return NULL;
}

static int match_class(SrInterp *I, Frame *f, SrNode *n, SrVal *v) {
  SrVal *cls = eval(I, f, n->a);
  if (!cls) return -1;
  SrVal *args[2] = {v, cls};
  int is = truth_of(I, callq1(I, "builtins.isinstance", 2, args));
  if (is <= 0) {
    sr_unref(cls);
    return is;
  }
  int rc = 1;
  if (n->n) {
    /* bool, bytearray, bytes, dict, float, frozenset, int, list, set, str,
       tuple: one positional sub-pattern matches the subject itself */
    static const char *const self_types[] = {"bool", "bytearray", "bytes", "dict", "float", "frozenset",
                                             "int", "list", "set", "str", "tuple"};
    const char *bn = sr_builtin_name(cls);
    int self_match = 0;
    for (size_t k = 0; bn && k < sizeof self_types / sizeof *self_types; k++)
      self_match |= strncmp(bn, "builtins.", 9) == 0 && strcmp(bn + 9, self_types[k]) == 0;
    if (self_match) {
      if (n->n > 1) {
        sr_raise(I, "TypeError", "%s() accepts 1 positional sub-pattern (%d given)", bn + 9, n->n);
        rc = -1;
      } else {
        rc = match_pattern(I, f, n->list[0], v);
      }
    } else {
      SrVal *ma = match_args(I, v), *names = ma ? sr_iterate(I, ma) : NULL;
      sr_unref(ma);
      if (I->exc) {
        rc = -1;
      } else if (!names || names->seq.n < n->n) {
        SrBuf b = SR_BUF_INIT;
        sr_to_str(I, &b, cls);
        sr_raise(I, "TypeError", "%s() accepts %d positional sub-pattern%s (%d given)", sr_buf_str(&b),
                 names ? names->seq.n : 0, names && names->seq.n == 1 ? "" : "s", n->n);
        sr_buf_free(&b);
        rc = -1;
      }
      for (int i = 0; rc == 1 && i < n->n; i++) {
        SrVal *nm = names->seq.items[i];
        SrVal *x = nm->kind == SR_V_STR ? sr_getattr(I, v, nm->str.s) : NULL;
        if (!x) {
          if (I->exc && strcmp(sr_exc_type(I->exc), "AttributeError") == 0) sr_exc_clear(I);
          rc = I->exc ? -1 : 0;
          break;
        }
        rc = match_pattern(I, f, n->list[i], x);
        sr_unref(x);
      }
      sr_unref(names);
    }
  }
  for (int i = 0; rc == 1 && i < n->n2; i++) {
    SrVal *x = sr_getattr(I, v, n->names[i]);
    if (!x) {
      if (I->exc && strcmp(sr_exc_type(I->exc), "AttributeError") == 0) sr_exc_clear(I);
      rc = I->exc ? -1 : 0;
      break;
    }
    rc = match_pattern(I, f, n->list2[i], x);
    sr_unref(x);
  }
  sr_unref(cls);
  return rc;
}

static int match_pattern(SrInterp *I, Frame *f, SrNode *n, SrVal *v) {
  switch (n->kind) {
  case SR_N_PCAPTURE:
    if (n->name) bind_capture(I, f, n->name, v);
    return 1;
  case SR_N_PAS: {
    int rc = match_pattern(I, f, n->a, v);
    if (rc == 1) bind_capture(I, f, n->name, v);
    return rc;
  }
  case SR_N_POR:
    for (int i = 0; i < n->n; i++) {
      int rc = match_pattern(I, f, n->list[i], v);
      if (rc != 0) return rc;
    }
    return 0;
  case SR_N_PVALUE: {
    SrVal *x = eval(I, f, n->a);
    if (!x) return -1;
    int singleton = x->kind == SR_V_NONE || x->kind == SR_V_BOOL;
    int rc = truth_of(I, sr_binop(I, singleton ? SR_OP_IS : SR_OP_EQ, v, x));
    sr_unref(x);
    return rc;
  }
  case SR_N_PSEQ: {
    SrVal *items = match_seq_items(I, v);
    if (!items) return I->exc ? -1 : 0;
    int star = -1;
    for (int i = 0; i < n->n; i++)
      if (n->list[i]->kind == SR_N_PSTAR) star = i;
    int len = items->seq.n, rc = 1;
    if (star < 0 ? len != n->n : len < n->n - 1) rc = 0;
    for (int i = 0; rc == 1 && i < n->n; i++) {
      if (i == star) {
        int m = len - (n->n - 1);
        if (n->list[i]->name) {
          SrVal *l = sr_seq(NULL, SR_V_LIST, m);
          for (int k = 0; k < m; k++) sr_seq_push(NULL, l, sr_ref(items->seq.items[i + k]));
          bind_capture(I, f, n->list[i]->name, l);
          sr_unref(l);
        }
        continue;
      }
      int at = star >= 0 && i > star ? len - (n->n - i) : i;
      rc = match_pattern(I, f, n->list[i], items->seq.items[at]);
    }
    sr_unref(items);
    return rc;
  }
  case SR_N_PMAP: {
    SrVal *d = v->kind == SR_V_DICT ? v : NULL;
    if (!d) return 0;
    int rc = 1;
    SrVal *used = sr_seq(NULL, SR_V_LIST, n->n);
    for (int i = 0; rc == 1 && i < n->n; i++) {
      SrVal *k = eval(I, f, n->list[i]->a);
      if (!k) {
        rc = -1;
        break;
      }
      SrVal *x = sr_dict_get(d, k);
      if (!x) rc = 0;
      else rc = match_pattern(I, f, n->list2[i], x);
      sr_seq_push(NULL, used, k);
    }
    if (rc == 1 && n->name) {
      SrVal *rest = sr_dict(NULL);
      for (int i = 0; i < d->dict.n; i++) {
        int in = 0;
        for (int k = 0; k < used->seq.n && !in; k++) in = sr_val_equal(d->dict.keys[i], used->seq.items[k]);
        if (!in) sr_dict_set(NULL, rest, sr_ref(d->dict.keys[i]), sr_ref(d->dict.vals[i]));
      }
      bind_capture(I, f, n->name, rest);
      sr_unref(rest);
    }
    sr_unref(used);
    return rc;
  }
  case SR_N_PCLASS: return match_class(I, f, n, v);
  default: sr_raise(I, "SyntaxError", "a pattern expected"); return -1;
  }
}

static Status exec_stmt(SrInterp *I, Frame *f, SrNode *n, int top) {
  if (sr_interrupt_point(I) || out_of_memory(I)) {
    if (!I->exc) sr_raise(I, "KeyboardInterrupt", "interrupted");
    locate(I, n->off);
    return ST_ERROR;
  }
  switch (n->kind) {
  case SR_N_SEQ:
    /* `a; b` as a cell's last statement: b echoes */
    if (top && I->py->echo == 2 && n->n) {
      Status s = exec_block(I, f, n->list, n->n - 1);
      return s != ST_OK ? s : exec_stmt(I, f, n->list[n->n - 1], 1);
    }
    return exec_block(I, f, n->list, n->n);
  case SR_N_EXPR: {
    SrVal *v = eval(I, f, n->a);
    if (!v) return ST_ERROR;
    int rc = (top || f->echo_all) && I->py->echo ? echo_value(I, v) : 0;
    sr_unref(v);
    if (rc < 0) {
      locate(I, n->off);
      return ST_ERROR;
    }
    return ST_OK;
  }
  case SR_N_ASSIGN: {
    SrVal *v = eval(I, f, n->a);
    if (!v) return ST_ERROR;
    for (int i = 0; i < n->n; i++) {
      Status s = assign(I, f, n->list[i], i + 1 < n->n ? sr_ref(v) : v);
      if (s != ST_OK) {
        if (i + 1 < n->n) sr_unref(v);
        return s;
      }
    }
    return ST_OK;
  }
  case SR_N_AUGASSIGN: {
    /* x += 1 makes x local to a function, unless declared global or
       nonlocal: it must be bound there already, not only outside */
    if (n->a->kind == SR_N_NAME && f->env != I->py->globals && binding_env(I, f, n->a->name) == f->env &&
        !bound_here(f->env, n->a->name)) {
      sr_raise(I, "UnboundLocalError", "cannot access local variable '%s' where it is not associated with a value",
               n->a->name);
      locate(I, n->a->off);
      return ST_ERROR;
    }
    SrVal *cur = eval(I, f, n->a);
    if (!cur) return ST_ERROR;
    SrVal *rhs = eval(I, f, n->b);
    SrVal *v = rhs ? sr_inplace_binop(I, n->op, cur, rhs) : NULL;
    sr_unref(cur);
    sr_unref(rhs);
    if (!v) {
      locate(I, n->off);
      return ST_ERROR;
    }
    return assign(I, f, n->a, v);
  }
  case SR_N_DEF: {
    SrVal *fn = make_function(I, f, n);
    if (!fn) return ST_ERROR;
    /* decorators apply bottom-up */
    for (int i = n->n2 - 1; i >= 0; i--) {
      SrVal *d = eval(I, f, n->list2[i]);
      if (!d) {
        sr_unref(fn);
        return ST_ERROR;
      }
      SrVal *g = sr_call1(I, d, fn);
      if (!g) locate(I, n->list2[i]->off);
      sr_unref(d);
      sr_unref(fn);
      if (!g) return ST_ERROR;
      fn = g;
    }
    sr_env_set(f->env, n->name, fn);
    return ST_OK;
  }
  case SR_N_CLASS: return exec_class(I, f, n);
  case SR_N_ANNOT:
    /* a class body records the annotation (as its text) in order */
    if (f->scope && n->a->kind == SR_N_NAME) {
      SrVal *ann = sr_env_lookup(f->env, sr_intern_cstr("__annotations__"));
      if (!ann || ann->kind != SR_V_DICT) {
        ann = sr_dict(NULL);
        sr_env_set(f->env, sr_intern_cstr("__annotations__"), ann);
      }
      sr_dict_set(NULL, ann, sr_str_cstr(NULL, n->a->name), sr_str_cstr(NULL, n->doc));
    }
    if (n->b) {
      SrVal *v = eval(I, f, n->b);
      if (!v) return ST_ERROR;
      return assign(I, f, n->a, v);
    }
    return ST_OK;
  case SR_N_RETURN:
    if (n->a) {
      f->ret = eval(I, f, n->a);
      if (!f->ret) return ST_ERROR;
    } else {
      f->ret = sr_none();
    }
    return ST_RETURN;
  case SR_N_IF: {
    SrVal *c = eval(I, f, n->a);
    if (!c) return ST_ERROR;
    int t = sr_truthy(I, c);
    sr_unref(c);
    if (t < 0) {
      locate(I, n->a->off);
      return ST_ERROR;
    }
    return t ? exec_block(I, f, n->list, n->n) : exec_block(I, f, n->list2, n->n2);
  }
  case SR_N_FOR: {
    SrVal *src = eval(I, f, n->b);
    SrIter it;
    int rc = src ? sr_iter_begin(I, &it, src) : -1;
    sr_unref(src);
    if (rc < 0) {
      locate(I, n->b->off);
      return ST_ERROR;
    }
    Status s = ST_OK;
    int broke = 0;
    for (SrVal *x; (x = loop_next(I, &it, n->off));) {
      s = assign(I, f, n->a, x);
      if (s != ST_OK) break;
      s = exec_block(I, f, n->list, n->n);
      if (s == ST_BREAK) {
        s = ST_OK;
        broke = 1;
        break;
      }
      if (s == ST_CONTINUE) s = ST_OK;
      if (s != ST_OK) break;
    }
    if (s == ST_OK && !broke && sr_iter_failed(&it)) {
      locate(I, n->b->off);
      s = ST_ERROR;
    }
    sr_iter_end(&it);
    if (s == ST_OK && !broke) s = exec_block(I, f, n->list2, n->n2);
    return s;
  }
  case SR_N_MATCH: {
    SrVal *v = eval(I, f, n->a);
    if (!v) return ST_ERROR;
    Status st = ST_OK;
    for (int i = 0; i < n->n; i++) {
      SrNode *c = n->list[i];
      int m = match_pattern(I, f, c->a, v);
      if (m == 1 && c->b) m = truth_of(I, eval(I, f, c->b));
      if (m < 0) {
        locate(I, c->off);
        st = ST_ERROR;
        break;
      }
      if (m) {
        st = exec_block(I, f, c->list, c->n);
        break;
      }
    }
    sr_unref(v);
    return st;
  }
  case SR_N_WHILE: {
    for (;;) {
      SrVal *c = eval(I, f, n->a);
      if (!c) return ST_ERROR;
      int t = sr_truthy(I, c);
      sr_unref(c);
      if (t < 0) return ST_ERROR;
      if (!t) return exec_block(I, f, n->list2, n->n2);
      Status s = exec_block(I, f, n->list, n->n);
      if (s == ST_BREAK) return ST_OK;
      if (s == ST_CONTINUE) continue;
      if (s != ST_OK) return s;
    }
  }
  case SR_N_TRY: {
    Status s = exec_block(I, f, n->list, n->n);
    if (s == ST_ERROR && I->exc) {
      for (int i = 0; i < n->n2; i++) {
        SrNode *h = n->list2[i];
        SrVal *want = NULL;
        if (h->a) {
          want = eval(I, f, h->a);
          if (!want) break; /* the new error replaces the old */
        }
        int m = exc_matches(I, want, I->exc);
        sr_unref(want);
        if (!m) continue;
        char *tbtext = sr_tb_format(I);
        SrVal *e = I->exc;
        I->exc = NULL;
        sr_exc_clear(I);
        SrVal *outer = I->py->handled;
        char *outer_tb = I->py->handled_tb;
        I->py->handled = sr_ref(e);
        I->py->handled_tb = tbtext;
        if (h->name) sr_env_set(f->env, h->name, e);
        else sr_unref(e);
        s = exec_block(I, f, h->list, h->n);
        sr_unref(I->py->handled);
        I->py->handled = outer;
        free(I->py->handled_tb);
        I->py->handled_tb = outer_tb;
        break;
      }
    }
    if (n->n3) {
      /* finally: runs whatever happened, keeping a pending exception or
         return value; a return, break or error of its own replaces them */
      SrVal *pending = I->exc;
      SrSrc *psrc = I->exc_src;
      size_t poff = I->exc_off;
      int ploc = I->exc_located;
      SrVal *pret = NULL;
      if (s == ST_RETURN) {
        pret = f->ret;
        f->ret = NULL;
      }
      I->exc = NULL;
      I->exc_src = NULL;
      I->exc_located = 0;
      Status fs = exec_block(I, f, n->list3, n->n3);
      if (fs != ST_OK) {
        sr_unref(pending);
        sr_src_unref(psrc);
        sr_unref(pret);
        return fs;
      }
      if (s == ST_RETURN) f->ret = pret;
      I->exc = pending;
      I->exc_src = psrc;
      I->exc_off = poff;
      I->exc_located = ploc;
    }
    return s;
  }
  case SR_N_WITH: {
    /* context managers: enter each item's value, run, exit in reverse.
       A built-in manager (sr_context_register) has C hooks; any other
       object goes through its __enter__ and __exit__, and an __exit__
       that returns true swallows the block's exception, as in CPython. */
    SrVal **mgrs = sr_xcalloc((size_t)n->n2 + 1, sizeof *mgrs);
    SrVal **exits = sr_xcalloc((size_t)n->n2 + 1, sizeof *exits);
    int nm = 0;
    Status s = ST_OK;
    for (int i = 0; i < n->n2; i++) {
      SrVal *m = eval(I, f, n->list2[i]->a);
      if (!m) {
        s = ST_ERROR;
        break;
      }
      SrVal *entered = NULL, *ex = NULL;
      if (sr_context_builtin(m)) {
        size_t saved = I->py->cur_off;
        I->py->cur_off = n->list2[i]->off;
        entered = sr_context_enter(I, m);
        I->py->cur_off = saved;
      } else {
        ex = user_context_hooks(I, m, &entered);
        if (!ex) entered = NULL;
      }
      if (!entered) {
        sr_unref(m);
        locate(I, n->list2[i]->off);
        s = ST_ERROR;
        break;
      }
      exits[nm] = ex;
      mgrs[nm++] = m;
      if (n->list2[i]->b) {
        s = assign(I, f, n->list2[i]->b, entered);
        if (s != ST_OK) break;
      } else {
        sr_unref(entered);
      }
    }
    if (s == ST_OK) s = exec_block(I, f, n->list, n->n);
    for (int i = nm - 1; i >= 0; i--) {
      if (exits[i]) s = user_context_exit(I, exits[i], s);
      else sr_context_exit(I, mgrs[i]);
      sr_unref(exits[i]);
      sr_unref(mgrs[i]);
    }
    free(mgrs);
    free(exits);
    return s;
  }
  case SR_N_ASSERT: {
    SrVal *c = eval(I, f, n->a);
    if (!c) return ST_ERROR;
    int t = sr_truthy(I, c);
    sr_unref(c);
    if (t < 0) return ST_ERROR;
    if (t) return ST_OK;
    if (n->b) {
      SrVal *m = eval(I, f, n->b);
      if (!m) return ST_ERROR;
      SrBuf b = SR_BUF_INIT;
      sr_to_str(I, &b, m);
      sr_unref(m);
      sr_raise(I, "AssertionError", "%s", sr_buf_str(&b));
      sr_buf_free(&b);
    } else {
      sr_raise(I, "AssertionError", "%s", "");
    }
    locate(I, n->off);
    return ST_ERROR;
  }
  case SR_N_PASS: return ST_OK;
  case SR_N_GLOBAL:
    if (n->op && f->env != I->py->globals) {
      f->globals = sr_xrealloc(f->globals, (size_t)(f->nglobals + n->n) * sizeof *f->globals);
      for (int i = 0; i < n->n; i++) f->globals[f->nglobals++] = n->list[i]->name;
    } else if (!n->op && f->env != I->py->globals) {
      f->nonlocals = sr_xrealloc(f->nonlocals, (size_t)(f->nnonlocals + n->n) * sizeof *f->nonlocals);
      for (int i = 0; i < n->n; i++) f->nonlocals[f->nnonlocals++] = n->list[i]->name;
    }
    return ST_OK;
  case SR_N_BREAK: return ST_BREAK;
  case SR_N_CONTINUE: return ST_CONTINUE;
  case SR_N_IMPORT:
  case SR_N_FROM: return exec_import(I, f, n);
  case SR_N_RAISE: {
    if (!n->a) {
      if (!I->py->handled) {
        sr_raise(I, "RuntimeError", "No active exception to reraise");
        locate(I, n->off);
        return ST_ERROR;
      }
      sr_exc_clear(I);
      I->exc = sr_ref(I->py->handled);
      locate(I, n->off);
      return ST_ERROR;
    }
    SrVal *e = eval(I, f, n->a);
    if (!e) return ST_ERROR;
    if (sr_is_obj(e, &sr_exception_class)) {
      sr_exc_clear(I);
      I->exc = e;
    } else if (sr_exception_type_name(e)) {
      sr_raise(I, sr_exception_type_name(e), "%s", "");
      sr_unref(e);
    } else {
      sr_raise(I, "TypeError", "exceptions must derive from BaseException");
      sr_unref(e);
    }
    locate(I, n->off);
    return ST_ERROR;
  }
  case SR_N_DEL:
    for (int i = 0; i < n->n; i++) {
      SrNode *t = n->list[i];
      if (t->kind == SR_N_NAME) {
        if (sr_env_del(f->env, t->name) < 0) {
          sr_raise(I, "NameError", "name '%s' is not defined", t->name);
          locate(I, t->off);
          return ST_ERROR;
        }
      } else if (t->kind == SR_N_SUBSCRIPT) {
        SrVal *o = eval(I, f, t->a);
        SrVal *k = o ? eval(I, f, t->b) : NULL;
        int rc = k ? sr_delitem(I, o, k) : -1;
        sr_unref(o);
        sr_unref(k);
        if (rc < 0) {
          locate(I, t->off);
          return ST_ERROR;
        }
      }
    }
    return ST_OK;
  default:
    sr_raise(I, "SyntaxError", "not a statement");
    locate(I, n->off);
    return ST_ERROR;
  }
}

/* ---- user functions ---- */

SrVal *sr_function_call(SrInterp *I, SrVal *fnval, SrArgs *a) {
  SrFunction *fn = fnval->obj.data;
  SrNode *def = fn->node;
  SrParams *ps = def->params;
  if (I->py->depth >= MAX_CALL_DEPTH)
    return sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
  SrEnv *env = sr_env_new(fn->closure);
  int npos = ps->n - ps->nkwonly;
  const char *fname = fn->qualname ? fn->qualname : fn->name; /* a method: C.f() */
  /* positional */
  int given = a->n < npos ? a->n : npos;
  for (int i = 0; i < given; i++) sr_env_set(env, ps->names[i], sr_ref(a->v[i]));
  if (a->n > npos) {
    if (!ps->star) {
      sr_env_unref(env);
      return sr_raise(I, "TypeError", "%s() takes %d positional argument%s but %d were given",
                      fname, npos, npos == 1 ? "" : "s", a->n);
    }
  }
  if (ps->star) {
    int extra = a->n > npos ? a->n - npos : 0;
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, extra);
    for (int i = 0; i < extra; i++) sr_seq_push(NULL, t, sr_ref(a->v[npos + i]));
    sr_env_set(env, ps->star, t);
  }
  SrVal *kwargs = ps->kwstar ? sr_dict(NULL) : NULL;
  for (int k = 0; k < a->nkw; k++) {
    int found = -1;
    for (int i = ps->nposonly; i < ps->n; i++)
      if (ps->names[i] == a->kw[k]) found = i;
    if (found < 0) {
      if (kwargs) {
        sr_dict_set(NULL, kwargs, sr_str_cstr(NULL, a->kw[k]), sr_ref(a->kwv[k]));
        continue;
      }
      sr_env_unref(env);
      return sr_raise(I, "TypeError", "%s() got an unexpected keyword argument '%s'", fname, a->kw[k]);
    }
    if (found < given) {
      sr_env_unref(env);
      sr_unref(kwargs);
      return sr_raise(I, "TypeError", "%s() got multiple values for argument '%s'", fname, a->kw[k]);
    }
    sr_env_set(env, ps->names[found], sr_ref(a->kwv[k]));
  }
  if (kwargs) sr_env_set(env, ps->kwstar, kwargs);
  const char *missing[64];
  int nmissing = 0, kwonly_missing = 0;
  for (int i = given; i < ps->n; i++) {
    if (env->cap && env->keys[env_find(env, ps->names[i])]) continue;
    if (fn->defaults[i]) {
      sr_env_set(env, ps->names[i], sr_ref(fn->defaults[i]));
    } else if (nmissing < 64) {
      missing[nmissing++] = ps->names[i];
      kwonly_missing = i >= npos;
    }
  }
  if (nmissing) {
    /* f() missing 2 required positional arguments: 'a' and 'b' */
    SrBuf b = SR_BUF_INIT;
    for (int i = 0; i < nmissing; i++) {
      if (i) sr_buf_puts(&b, i == nmissing - 1 ? (nmissing > 2 ? ", and " : " and ") : ", ");
      sr_buf_printf(&b, "'%s'", missing[i]);
    }
    sr_raise(I, "TypeError", "%s() missing %d required %s argument%s: %s", fname, nmissing,
             kwonly_missing ? "keyword-only" : "positional", nmissing == 1 ? "" : "s", b.p);
    sr_buf_free(&b);
    sr_env_unref(env);
    return NULL;
  }
  /* a generator function: the bound arguments wait for the first next() */
  if (def->kind == SR_N_DEF && def->op == 1) return sr_gen_new(I, fnval, env);
  Frame fr = {env, NULL, NULL, 0, NULL, 0, NULL, fn, 0};
  SrCode *saved = I->py->code;
  uint32_t call_off = I->py->cur_off;
  const char *caller = I->py->cur_func, *caller_qual = I->py->cur_qual;
  SrPyCaller cf = {saved, call_off, caller, I->py->callers, caller_qual};
  I->py->callers = &cf;
  I->py->code = fn->code;
  I->py->cur_func = fn->name;
  I->py->cur_qual = fn->qualname ? fn->qualname : fn->name;
  I->py->depth++;
  SrVal *r = NULL;
  if (def->kind == SR_N_LAMBDA) {
    I->py->cur_off = def->a->off;
    r = eval(I, &fr, def->a);
  } else {
    Status s = exec_block(I, &fr, def->list, def->n);
    if (s == ST_RETURN) r = fr.ret;
    else if (s == ST_OK) r = sr_none();
    else if (s != ST_ERROR) r = sr_raise(I, "SyntaxError", "'break' outside loop");
  }
  I->py->depth--;
  I->py->callers = cf.up;
  I->py->code = saved;
  I->py->cur_func = caller;
  I->py->cur_qual = caller_qual;
  I->py->cur_off = call_off;
  /* an exception leaving the body leaves the caller's frame next */
  if (!r && saved) sr_tb_push(I, saved->src, call_off, caller);
  free(fr.globals);
  free(fr.nonlocals);
  sr_env_unref(env);
  return r;
}

SrVal *sr_py_run_def_body(SrInterp *I, SrFunction *fn, SrEnv *env) {
  SrNode *def = fn->node;
  Frame fr = {env, NULL, NULL, 0, NULL, 0, NULL, fn, 0};
  SrVal *r = NULL;
  Status s = exec_block(I, &fr, def->list, def->n);
  if (s == ST_RETURN) r = fr.ret;
  else if (s == ST_OK) r = sr_none();
  else if (s != ST_ERROR) r = sr_raise(I, "SyntaxError", "'break' outside loop");
  free(fr.globals);
  free(fr.nonlocals);
  return r;
}

/* ---- running sources ---- */

/* After a parse error, the next line that starts at column 0. */
static size_t resync(const SrSrc *src, size_t pos) {
  const char *s = src->text;
  size_t i = pos;
  while (i < src->len && s[i] != '\n') i++;
  while (i < src->len) {
    i++;
    if (i < src->len && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '#') return i;
    while (i < src->len && s[i] != '\n') i++;
  }
  return src->len;
}

/* Hands the diagnostics of a failed statement to the driver at once. */
static void report_now(SrInterp *I) {
  if (!I->py->first_error) I->py->first_error = sr_diags_kind(&I->py->diags);
  if (I->py->on_error) I->py->on_error(I);
}

/* Under MPI all ranks agree on a statement's outcome (interp.h). */
static int stmt_end(SrInterp *I, int failed) {
  return I->py->on_stmt_end ? I->py->on_stmt_end(I, failed) : failed;
}

static char *steal_or_null(SrBuf *b) {
  char *s = b->len ? sr_buf_steal(b) : NULL;
  sr_buf_reset(b);
  return s;
}

/* An outermost statement begins: what it writes is its own. */
static void log_begin(SrInterp *I) {
  if (I->py->run_depth != 1) return;
  sr_buf_reset(&I->py->stmt_out);
  sr_buf_reset(&I->py->stmt_res);
}

/* A statement of an outermost source that succeeded, src->text[a..b),
   into the session's log, with what it wrote. */
static void log_stmt(SrInterp *I, const SrSrc *src, size_t a, size_t b, int bad) {
  if (bad || I->py->run_depth != 1) return;
  while (b > a && (src->text[b - 1] == '\n' || src->text[b - 1] == ' ' || src->text[b - 1] == '\t' ||
                   src->text[b - 1] == '\r'))
    b--;
  if (b == a) return;
  if (I->py->nlog == I->py->caplog) {
    I->py->caplog = I->py->caplog ? 2 * I->py->caplog : 64;
    I->py->log = sr_xrealloc(I->py->log, (size_t)I->py->caplog * sizeof *I->py->log);
  }
  char *t = sr_xmalloc(b - a + 1);
  memcpy(t, src->text + a, b - a);
  t[b - a] = 0;
  SrLogEntry *e = &I->py->log[I->py->nlog++];
  e->text = t;
  e->out = steal_or_null(&I->py->stmt_out);
  e->result = steal_or_null(&I->py->stmt_res);
}

/* The start of the next line holding something, or len. */
static size_t skip_blank_lines(const SrSrc *src, size_t pos) {
  const char *s = src->text;
  for (;;) {
    size_t i = pos;
    while (i < src->len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
    if (i < src->len && s[i] == '#')
      while (i < src->len && s[i] != '\n') i++;
    if (i < src->len && s[i] == '\n') {
      pos = i + 1;
      continue;
    }
    if (i >= src->len) return src->len;
    /* a command starts at its ':'; a statement at its line's start, so
       that an unexpected indent is seen */
    return s[i] == ':' ? i : pos;
  }
}

static const SrMesh *literal_mesh(SrInterp *I) {
  return I->py->init->literal_mesh ? I->py->init->literal_mesh(I) : NULL;
}

int sr_interp_run(SrInterp *I, SrSrc *src, int keep_going) {
  size_t pos = 0;
  int failed = 0, agreed;
  SrCode *code = sr_code_new(src);
  code->python = I->py->python;
  /* output that is not a terminal is flushed after each statement, so that
     a job killed later keeps what it printed */
  int flush = I->py->out && !isatty(fileno(I->py->out));
  if (!I->py->run_depth) sr_script_argv(src->name);
  I->py->run_depth++;
  for (;;) {
    if (flush) fflush(I->py->out);
    pos = skip_blank_lines(src, pos);
    log_begin(I);
    if (pos < src->len && src->text[pos] == ':') {
      /* a colon command takes the rest of its line */
      size_t eol = pos;
      while (eol < src->len && src->text[eol] != '\n') eol++;
      int bad;
      if (I->py->init->command) {
        bad = I->py->init->command(I, src, pos, eol) < 0;
      } else {
        sr_error(&I->py->diags, SR_E_USAGE, src, pos, "colon commands are not available");
        bad = 1;
      }
      if (bad && I->exc) {
        /* an exception that knows no place of its own is the command's */
        if (!I->exc_located) {
          I->exc_src = sr_src_ref(src);
          I->exc_off = pos;
          I->exc_located = 1;
        }
        exc_to_diag(I);
      }
      if ((agreed = stmt_end(I, bad))) {
        report_now(I);
        failed++;
        if (!keep_going || agreed == 2) break;
      }
      log_stmt(I, src, pos, eol, agreed);
      pos = eol;
      if (I->py->quit) break;
      continue;
    }
    SrDiags pd = SR_DIAGS_INIT;
    size_t at = pos;
    SrNode *n = sr_lang_parse_stmt(code, &pos, &pd, literal_mesh(I));
    if (!n) {
      if (!pd.count) break;
      size_t err_at = pd.first && pd.first->src == src && pd.first->off > at ? pd.first->off : at;
      pd.incomplete = 0;
      sr_diags_move(&I->py->diags, &pd);
      agreed = stmt_end(I, 1);
      report_now(I);
      failed++;
      if (!keep_going || agreed == 2) break;
      pos = resync(src, err_at);
      if (pos >= src->len) break;
      continue;
    }
    SrCode *saved = I->py->code;
    I->py->code = code;
    Frame fr = {I->py->globals, NULL, NULL, 0, NULL, 0, NULL, NULL, I->py->echo == 1};
    if (I->py->init->stmt_begin) I->py->init->stmt_begin(I);
    /* a cell echoes its last statement only */
    int top = I->py->echo != 2 || skip_blank_lines(src, pos) >= src->len;
    Status s = exec_stmt(I, &fr, n, top);
    I->py->code = saved;
    if (s == ST_RETURN) sr_unref(fr.ret);
    int bad = 1;
    if (s == ST_ERROR || I->exc) {
      if (!I->exc) sr_raise(I, "RuntimeError", "error");
      locate(I, n->off);
      exc_to_diag(I);
    } else if (s == ST_BREAK || s == ST_CONTINUE) {
      sr_error(&I->py->diags, SR_E_PARSE, src, n->off, "'break' or 'continue' outside a loop");
    } else {
      bad = 0;
    }
    if ((agreed = stmt_end(I, bad))) {
      report_now(I);
      failed++;
      if (!keep_going || agreed == 2) break;
    }
    log_stmt(I, src, at, pos, agreed);
  }
  I->py->run_depth--;
  if (flush) fflush(I->py->out);
  sr_code_unref(code);
  return failed;
}

SrVal *sr_interp_eval_text(SrInterp *I, SrSrc *src, size_t pos) {
  SrCode *code = sr_code_new(src);
  SrDiags pd = SR_DIAGS_INIT;
  SrNode *e = sr_lang_parse_expr(code, pos, &pd, literal_mesh(I));
  SrVal *v = NULL;
  if (!e) {
    sr_diags_move(&I->py->diags, &pd);
  } else {
    SrCode *saved = I->py->code;
    I->py->code = code;
    Frame fr = {I->py->globals, NULL, NULL, 0, NULL, 0, NULL, NULL, 0};
    v = eval(I, &fr, e);
    I->py->code = saved;
    if (!v) {
      locate(I, e->off);
      exc_to_diag(I);
    }
  }
  sr_code_unref(code);
  return v;
}

const char *sr_py_frames_summary(SrInterp *I, int n) {
  SrPyState *py = I->py;
  if (!py || !py->code || !py->code->src || n <= 0) return NULL;
  enum { MAXF = 16 };
  if (n > MAXF) n = MAXF;
  const SrSrc *src[MAXF];
  uint32_t off[MAXF];
  const char *func[MAXF];
  int k = 0;
  src[k] = py->code->src, off[k] = py->cur_off, func[k] = py->cur_qual, k++;
  for (const SrPyCaller *c = py->callers; c && k < n; c = c->up)
    if (c->code && c->code->src) src[k] = c->code->src, off[k] = c->off, func[k] = c->qual, k++;
  /* the last answer is kept: a traced function makes many values at one place */
  static const SrSrc *last_src[MAXF];
  static const char *last_text[MAXF], *last_func[MAXF], *last;
  static uint32_t last_off[MAXF];
  static int last_k;
  int same = last && last_k == k;
  for (int i = 0; i < k && same; i++)
    same = last_src[i] == src[i] && last_text[i] == src[i]->text && last_off[i] == off[i] && last_func[i] == func[i];
  if (same) return last;
  SrBuf b = SR_BUF_INIT;
  for (int i = k; i-- > 0;) {
    uint32_t line = 0, col = 0;
    sr_src_linecol(src[i], off[i], &line, &col);
    /* source_info_util._summarize_frame: the column (from 0) where it is not 0 */
    sr_buf_printf(&b, "%s%s:%u", i == k - 1 ? "" : "\n", src[i]->name, line);
    if (col > 1) sr_buf_printf(&b, ":%u", col - 1);
    sr_buf_printf(&b, " (%s)", func[i] ? func[i] : "<module>");
  }
  last = sr_intern_cstr(sr_buf_str(&b));
  sr_buf_free(&b);
  for (int i = 0; i < k; i++) last_src[i] = src[i], last_text[i] = src[i]->text, last_off[i] = off[i], last_func[i] = func[i];
  last_k = k;
  return last;
}

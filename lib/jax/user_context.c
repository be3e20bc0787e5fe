/* user_context.c: jax.make_user_context(default_value=None) (config.py's
 * UserConfig): a value that is part of every jit's cache key, so a jit
 * retraces when it changes.  cfg.value is the value in effect: the one of
 * the innermost `with cfg(v):` around, or else the global one
 * (cfg.get_global() / cfg.set_global(v), default_value at first).  Every
 * user context made stays (a jit's key holds each one's value,
 * sr_user_context_keys). */
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "py/objects.h"
#include "util/mem.h"

typedef struct UserCfg {
  SrVal *global;
  SrVal *ctx; /* the innermost with's value, or NULL */
} UserCfg;

static SrVal **cfgs; /* the UserConfig objects made, kept */
static int ncfg, capcfg;

static void cfg_free(void *d) {
  UserCfg *c = d;
  sr_unref(c->global);
  sr_unref(c->ctx);
  free(c);
}

static void cfg_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<jax._src.config.UserConfig object at %p>", v->obj.data);
}

static SrVal *cfg_value(const UserCfg *c) { return c->ctx ? c->ctx : c->global; }

void sr_user_context_keys(SrVal *keys) {
  /* as the pytree nodes' (class, aux data) pairs, compared with == */
  for (int i = 0; i < ncfg; i++)
    sr_seq_push(NULL, keys, sr_pair(sr_ref(cfgs[i]), sr_ref(cfg_value(cfgs[i]->obj.data))));
}

/* cfg(v): the context manager of config.py's UserContext */
typedef struct UserCtx {
  SrVal *cfg, *val, *saved;
  int depth;
} UserCtx;

static void ctx_free(void *d) {
  UserCtx *u = d;
  sr_unref(u->cfg);
  sr_unref(u->val);
  sr_unref(u->saved);
  free(u);
}

static void ctx_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<jax._src.config.UserContext object at %p>", v->obj.data);
}

static const SrClass ctx_class = {"UserContext", ctx_free, ctx_repr, NULL, NULL};

static SrVal *ctx_enter(SrInterp *I, SrVal *self) {
  UserCtx *u = self->obj.data;
  if (u->depth++) return sr_raise(I, "RuntimeError", "a UserContext is entered once at a time");
  UserCfg *c = u->cfg->obj.data;
  u->saved = c->ctx;
  c->ctx = sr_ref(u->val);
  return sr_none();
}

static void ctx_exit(SrInterp *I, SrVal *self) {
  (void)I;
  UserCtx *u = self->obj.data;
  if (!u->depth) return;
  u->depth--;
  UserCfg *c = u->cfg->obj.data;
  sr_unref(c->ctx);
  c->ctx = u->saved;
  u->saved = NULL;
}

static const SrContextOps ctx_ops = {&ctx_class, ctx_enter, ctx_exit, 0};

static SrVal *cfg_call(SrInterp *I, SrVal *self, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "UserConfig.__call__() takes one argument, the new value");
  UserCtx *u = sr_xcalloc(1, sizeof *u);
  u->cfg = sr_ref(self);
  u->val = sr_ref(a->v[0]);
  return sr_obj(&ctx_class, u);
}

static SrVal *m_get_global(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "get_global() takes no arguments");
  return sr_ref(((UserCfg *)a->self->obj.data)->global);
}

static SrVal *m_set_global(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "set_global() takes one argument, the new value");
  UserCfg *c = a->self->obj.data;
  sr_unref(c->global);
  c->global = sr_ref(a->v[0]);
  return sr_none();
}

static SrVal *cfg_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "value") == 0) return sr_ref(cfg_value(self->obj.data));
  if (strcmp(name, "get_global") == 0) return sr_bound_method(self, "get_global", m_get_global);
  if (strcmp(name, "set_global") == 0) return sr_bound_method(self, "set_global", m_set_global);
  return NULL;
}

static const SrLangOps cfg_ops = {.call = cfg_call, .getattr = cfg_getattr};
static const SrClass cfg_class = {"UserConfig", cfg_free, cfg_repr, NULL, &cfg_ops};

static SrVal *jax_make_user_context(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "make_user_context", "default_value=", p) < 0) return NULL;
  UserCfg *c = sr_xcalloc(1, sizeof *c);
  c->global = p[0] ? sr_ref(p[0]) : sr_none();
  SrVal *v = sr_obj(&cfg_class, c);
  if (ncfg == capcfg) {
    capcfg = capcfg ? 2 * capcfg : 8;
    cfgs = sr_xrealloc(cfgs, (size_t)capcfg * sizeof *cfgs);
  }
  cfgs[ncfg++] = sr_ref(v);
  return v;
}

void sr_user_context_init(void) {
  sr_context_register(&ctx_ops);
  sr_def("jax.make_user_context", jax_make_user_context,
         "make_user_context(default_value=None): a value in every jit's cache key: cfg(v) is a context manager "
         "setting it, cfg.value the one in effect, cfg.get_global() / cfg.set_global(v) the global one");
}

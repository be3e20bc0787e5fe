/* trace.c: traces, binding primitives, and evaluating jaxprs by binding. */
#include "core/trace.h"

#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/jaxstate.h"
#include "util/intern.h"
#include "util/mem.h"

SrBackendHooks sr_backend_hooks; /* all NULL until the evaluator installs them */

/* ---- params ---- */

void sr_plist_add(SrPList *ps, const char *key, SrVal *v) {
  if (!ps->p) {
    ps->p = ps->inline_p;
    ps->cap = SR_PLIST_INLINE;
  }
  if (ps->n == ps->cap) {
    int cap = ps->cap * 2;
    SrParam *p = sr_xmalloc((size_t)cap * sizeof *p);
    memcpy(p, ps->p, (size_t)ps->n * sizeof *p);
    if (ps->p != ps->inline_p) free(ps->p);
    ps->p = p;
    ps->cap = cap;
  }
  ps->p[ps->n++] = (SrParam){sr_intern_cstr(key), v};
}

void sr_plist_free(SrPList *ps) {
  for (int i = 0; i < ps->n; i++) sr_unref(ps->p[i].val);
  if (ps->p != ps->inline_p) free(ps->p);
  ps->p = NULL;
  ps->n = ps->cap = 0;
}

/* ---- types of values ---- */

const SrType *sr_scalar_type(const SrVal *v) {
  switch (v->kind) {
  case SR_V_BOOL: return sr_type_scalar(SR_BOOL);
  case SR_V_INT: return sr_type_with_weak(sr_type_scalar(SR_I32), 1);
  case SR_V_FLOAT: return sr_type_with_weak(sr_type_scalar(SR_F32), 1);
  case SR_V_COMPLEX: return sr_type_with_weak(sr_type_scalar(SR_C64), 1);
  default: return NULL;
  }
}

SrVal *(*sr_as_array_hook)(SrInterp *I, SrVal *v);

const SrType *sr_value_type(SrInterp *I, SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  if (a) return a->type;
  if (sr_is_obj(v, &sr_aval_class)) return v->obj.data;
  if (v->kind == SR_V_OBJ && sr_as_array_hook && I) {
    SrVal *x = sr_as_array_hook(I, v);
    const SrType *t = sr_array_of(x) ? sr_array_of(x)->type : NULL;
    sr_unref(x);
    if (t) return t;
  }
  const SrType *t = sr_scalar_type(v);
  /* a Python int or float is weakly typed at the default width, 64 bits
     with jax_enable_x64 (dtypes.python_scalar_dtypes); a complex stays
     complex64, the widest complex dtype arrays here hold */
  if (t && t->weak && t->dtype != SR_C64 && I && I->jax && I->jax->enable_x64)
    t = sr_type_with_weak(sr_type_scalar(t->dtype == SR_I32 ? SR_I64 : SR_F64), 1);
  return t;
}

/* ---- traces ---- */

SrTrace *sr_current_trace(SrInterp *I) { return I->trace; }

SrTrace *sr_trace_begin(SrInterp *I) {
  SrTrace *t = sr_xcalloc(1, sizeof *t);
  t->parent = I->trace;
  t->id = ++I->next_trace_id;
  t->level = I->trace ? I->trace->level + 1 : 0;
  t->prog = sr_program_new();
  sr_jb_init(&t->jb, t->prog);
  t->mesh = sr_jax_abstract_mesh(I->jax);
  t->vmesh = I->trace ? I->trace->vmesh : NULL;
  t->check_vma = I->jax->check_vma;
  t->serial = sr_array_serial();
  t->capture_consts = !I->trace;
  t->repr = I->next_tracer_repr;
  t->repr_data = I->next_tracer_data;
  t->origin = I->next_tracer_class ? I->next_tracer_class : "DynamicJaxprTracer";
  I->next_tracer_repr = NULL;
  I->next_tracer_data = NULL;
  I->next_tracer_class = NULL;
  I->trace = t;
  /* pe.trace_to_jaxpr_dynamic: reset_name_stack() */
  t->saved_ns = I->ns;
  I->ns = NULL;
  return t;
}

void sr_trace_next_repr(SrInterp *I, SrTracerReprFn fn, SrVal *data) {
  sr_unref(I->next_tracer_data);
  I->next_tracer_repr = fn;
  I->next_tracer_data = data;
  I->next_tracer_class = NULL;
}

void sr_trace_next_class(SrInterp *I, const char *cls) { I->next_tracer_class = cls; }

void sr_trace_set_debug_info(SrTrace *t, const char *dbg) {
  const char *tab = strchr(t->origin, '\t');
  SrBuf b = SR_BUF_INIT;
  if (tab) sr_buf_putn(&b, t->origin, (size_t)(tab - t->origin));
  else sr_buf_puts(&b, t->origin);
  if (dbg) sr_buf_printf(&b, "\t%s", dbg);
  t->origin = sr_intern_cstr(sr_buf_str(&b));
  sr_buf_free(&b);
}

SrVal *sr_escaped_tracer_error(SrInterp *I, const SrArrayObj *a) {
  SrBuf b = SR_BUF_INIT, ty = SR_BUF_INIT;
  const char *origin = a->origin ? a->origin : "DynamicJaxprTracer";
  const char *tab = strchr(origin, '\t');
  sr_type_str(&ty, a->type, 0);
  sr_buf_printf(&b,
                "Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing for a "
                "reference to an intermediate value with type %s wrapped in a %.*s to escape the scope of the "
                "transformation.\nJAX transformations require that functions explicitly return their outputs, and "
                "disallow saving intermediate values to global state.",
                sr_buf_str(&ty), (int)(tab ? (size_t)(tab - origin) : strlen(origin)), origin);
  if (tab) sr_buf_printf(&b, "\nThe function being traced when the value leaked was %s.", tab + 1);
  if (a->frames) {
    /* the innermost frame is the last line; the frames, at most the
       default jax_tracer_error_num_traceback_frames (5) */
    const char *nl = strrchr(a->frames, '\n');
    const char *divider = "\n------------------------------\n";
    sr_buf_printf(&b, "%sThe leaked intermediate value was created on line %s. %s", divider, nl ? nl + 1 : a->frames,
                  divider);
    sr_buf_printf(&b,
                  "When the value was created, the final 5 stack frames (most recent last) excluding JAX-internal "
                  "frames were:%s%s%s",
                  divider, a->frames, divider);
  }
  sr_buf_puts(&b, "\nTo catch the leak earlier, try setting the environment variable JAX_CHECK_TRACER_LEAKS or "
                  "using the `jax.checking_leaks` context manager.");
  sr_raise(I, "UnexpectedTracerError", "%s", sr_buf_str(&b));
  sr_buf_free(&b);
  sr_buf_free(&ty);
  return NULL;
}

void sr_tracer_repr(SrInterp *I, SrTrace *t, SrVar *v, const SrType *type, SrBuf *out) {
  if (t && t->repr) {
    t->repr(I, t, v, type, out);
    return;
  }
  /* partial_eval.py: DynamicJaxprTracer._short_repr */
  sr_buf_puts(out, "JitTracer(");
  sr_type_long(out, type);
  sr_buf_putc(out, ')');
}

SrJaxpr *sr_trace_snapshot(SrTrace *t, SrVar *v) {
  SrJaxprBuilder *jb = &t->jb;
  SrArena *a = t->prog->arena;
  uint32_t id = 0;
  for (int i = 0; i < t->ncaptured; i++) t->captured_vars[i]->id = id++;
  for (uint32_t i = 0; i < jb->nin; i++) jb->in[i]->id = id++;
  for (uint32_t k = 0; k < jb->neqn; k++)
    for (uint32_t i = 0; i < jb->eqns[k].nout; i++) jb->eqns[k].out[i]->id = id++;
  /* the equations v needs, walking back from it */
  uint8_t *need = sr_xcalloc((size_t)id + 1, 1), *keep = sr_xcalloc((size_t)jb->neqn + 1, 1);
  if (v->kind == SR_VAR) need[v->id] = 1;
  uint32_t nkeep = 0;
  for (uint32_t k = jb->neqn; k-- > 0;) {
    const SrEqn *e = &jb->eqns[k];
    for (uint32_t i = 0; i < e->nout && !keep[k]; i++) keep[k] = e->out[i]->kind == SR_VAR && need[e->out[i]->id];
    if (!keep[k]) continue;
    nkeep++;
    for (uint32_t i = 0; i < e->nin; i++)
      if (e->in[i]->kind == SR_VAR) need[e->in[i]->id] = 1;
  }
  SrJaxpr *j = SR_NEW(a, SrJaxpr);
  j->prog = t->prog;
  j->off = SR_NO_OFF;
  j->nin = (uint32_t)t->ncaptured + jb->nin;
  j->invars = sr_arena_alloc(a, (j->nin + 1) * sizeof *j->invars);
  for (int i = 0; i < t->ncaptured; i++) j->invars[i] = t->captured_vars[i];
  for (uint32_t i = 0; i < jb->nin; i++) j->invars[t->ncaptured + i] = jb->in[i];
  j->nout = 1;
  j->outvars = sr_arena_alloc(a, sizeof *j->outvars);
  j->outvars[0] = v;
  j->eqns = sr_arena_alloc(a, (nkeep + 1) * sizeof *j->eqns);
  id = j->nin;
  for (uint32_t k = 0; k < jb->neqn; k++) {
    if (!keep[k]) continue;
    j->eqns[j->neqn++] = jb->eqns[k];
    for (uint32_t i = 0; i < jb->eqns[k].nout; i++) jb->eqns[k].out[i]->id = id++;
  }
  j->nvars = id;
  free(need);
  free(keep);
  return j;
}

int sr_trace_is_live(SrInterp *I, const SrTrace *t, int id) {
  for (const SrTrace *u = I->trace; u; u = u->parent)
    if (u == t && u->id == id) return 1;
  return 0;
}

const char *(*sr_trace_frames_hook)(SrInterp *I);

/* ---- leak checking ---- */

typedef struct SrLeakNode {
  SrVal *v; /* not counted */
  struct SrLeakNode *prev, *next;
} SrLeakNode;
static SrLeakNode *leak_head;

static void leak_track(SrVal *v) {
  SrLeakNode *n = sr_xcalloc(1, sizeof *n);
  n->v = v;
  n->next = leak_head;
  if (leak_head) leak_head->prev = n;
  leak_head = n;
  ((SrArrayObj *)v->obj.data)->leak = n;
}

void sr_trace_leak_forget(SrArrayObj *a) {
  SrLeakNode *n = a->leak;
  if (n->prev) n->prev->next = n->next;
  else leak_head = n->next;
  if (n->next) n->next->prev = n->prev;
  free(n);
  a->leak = NULL;
}

/* the references to x that the results handed back account for: each
   time it is among their leaves, one from the list of leaves and one from
   the tree they were flattened from */
static int held_count(const SrVal *leaves, const SrVal *x) {
  int n = 0;
  for (int i = 0; leaves && i < leaves->seq.n; i++) n += leaves->seq.items[i] == x;
  return 2 * n;
}

int sr_trace_leaked(SrInterp *I, int trace_id, const char *origin, SrVal *held) {
  SrBuf b = SR_BUF_INIT;
  int nleak = 0;
  for (SrLeakNode *n = leak_head; n; n = n->next) {
    SrArrayObj *a = n->v->obj.data;
    if (a->trace_id != trace_id) continue;
    if (n->v->rc <= held_count(held, n->v)) continue;
    /* Tracer._short_repr: JitTracer<float32[]>, as str(tracer) */
    sr_buf_puts(&b, nleak++ ? "\n\n" : "");
    const char *o = a->origin ? a->origin : "DynamicJaxprTracer";
    size_t cl = strcspn(o, "\t");
    if (cl == strlen("DynamicJaxprTracer") && strncmp(o, "DynamicJaxprTracer", cl) == 0) sr_buf_puts(&b, "JitTracer(");
    else sr_buf_printf(&b, "%.*s<", (int)cl, o);
    sr_type_long(&b, a->type);
    sr_buf_putc(&b, cl == strlen("DynamicJaxprTracer") && strncmp(o, "DynamicJaxprTracer", cl) == 0 ? ')' : '>');
  }
  if (nleak) {
    /* the trace's class: its tracers' without the final r */
    const char *o = origin ? origin : "DynamicJaxprTracer";
    size_t cl = strcspn(o, "\t");
    sr_raise(I, "Exception", "Leaked trace %.*s. Leaked tracer(s):\n\n%s\n", (int)(cl ? cl - 1 : 0), o, sr_buf_str(&b));
  }
  sr_buf_free(&b);
  return nleak ? -1 : 0;
}

static SrVal *tracer(SrInterp *I, SrTrace *t, SrVar *v) {
  SrArrayObj *a = sr_xcalloc(1, sizeof *a);
  a->kind = SR_AV_TRACER;
  a->type = v->type;
  a->trace = t;
  a->trace_id = t->id;
  a->var = v;
  a->origin = t->origin;
  a->arg_names = t->arg_names_key;
  /* only DynamicJaxprTracer keeps where it was made (its _line_info) */
  if (strncmp(t->origin, "DynamicJaxprTracer", 18) == 0 && sr_trace_frames_hook) a->frames = sr_trace_frames_hook(I);
  SrVal *r = sr_obj(&sr_array_class, a);
  if (I->jax && I->jax->check_tracer_leaks) leak_track(r);
  return r;
}

SrVal *sr_trace_arg(SrInterp *I, SrTrace *t, const SrType *type) {
  SrVar *v = sr_jb_var(&t->jb, type);
  sr_jb_invar(&t->jb, v);
  return tracer(I, t, v);
}

SrEqnCtx sr_eqn_ctx_save(SrInterp *I) { return (SrEqnCtx){I->ns, I->loc, I->jax->nabstract}; }

void sr_eqn_ctx_enter(SrInterp *I, const SrEqnCtx *c, const char *ns, const SrEqn *e) {
  I->ns = sr_ns_concat(ns, e->ns);
  sr_jax_leave_eqn_mesh(I->jax, c->md);
  sr_jax_enter_eqn_mesh(I->jax, e->mesh);
  I->loc = e->loc ? e->loc : c->loc;
}

void sr_eqn_ctx_restore(SrInterp *I, const SrEqnCtx *c) {
  I->ns = c->ns;
  sr_jax_leave_eqn_mesh(I->jax, c->md);
  I->loc = c->loc;
}

void sr_trace_set_arg_names(SrTrace *t, const char *const *names, int n) {
  free(t->arg_names);
  t->arg_names = sr_xcalloc((size_t)n + 1, sizeof *t->arg_names);
  SrBuf key = SR_BUF_INIT;
  if (t->result_paths_none) sr_buf_putc(&key, '\x1e');
  for (int i = 0; i < n; i++) {
    t->arg_names[i] = sr_intern_cstr(names[i]);
    sr_buf_putc(&key, '\x1f');
    sr_buf_puts(&key, names[i]);
  }
  t->narg_names = n;
  t->arg_names_key = sr_intern_cstr(sr_buf_str(&key));
  sr_buf_free(&key);
}

static void trace_free(SrTrace *t) {
  free(t->arg_names);
  sr_unref(t->repr_data);
  for (int i = 0; i < t->ncaptured; i++) sr_unref(t->captured[i]);
  free(t->captured);
  free(t->captured_vars);
  free(t->capidx);
  sr_jb_free(&t->jb);
  free(t);
}

void sr_trace_abort(SrInterp *I, SrTrace *t) {
  /* pop it (and anything left above it) */
  while (I->trace && I->trace != t) I->trace = I->trace->parent;
  if (I->trace == t) I->trace = t->parent;
  I->ns = t->saved_ns;
  t->id = -1;
  sr_program_unref(t->prog);
  trace_free(t);
}

/* Is v a tracer of trace t (alive)? */
static int is_tracer_of(const SrArrayObj *a, const SrTrace *t) {
  return a && a->kind == SR_AV_TRACER && a->trace == t && a->trace_id == t->id;
}

/* What makes two captured values the same: a tracer's var, a concrete
   array's data, or else the value itself. */
static const void *cap_key(SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  if (a && a->kind == SR_AV_TRACER) return a->var;
  if (a && a->kind == SR_AV_CONCRETE) return a->data;
  return v;
}

static size_t cap_slot(const void *k, int cap) { return (((uintptr_t)k >> 3) * 2654435761u) & (size_t)(cap - 1); }

static void capidx_grow(SrTrace *t) {
  free(t->capidx);
  t->capidx_cap = t->capidx_cap ? 2 * t->capidx_cap : 64;
  t->capidx = sr_xmalloc((size_t)t->capidx_cap * sizeof *t->capidx);
  for (int i = 0; i < t->capidx_cap; i++) t->capidx[i] = -1;
  for (int i = 0; i < t->ncaptured; i++) {
    size_t j = cap_slot(cap_key(t->captured[i]), t->capidx_cap);
    while (t->capidx[j] >= 0) j = (j + 1) & (size_t)(t->capidx_cap - 1);
    t->capidx[j] = i;
  }
}

/* A value from outside t used inside it: a new input of t, once. */
static SrVar *capture(SrTrace *t, SrVal *outer, const SrType *type) {
  const void *key = cap_key(outer);
  if (2 * (t->ncaptured + 1) > t->capidx_cap) capidx_grow(t);
  size_t j = cap_slot(key, t->capidx_cap);
  for (; t->capidx[j] >= 0; j = (j + 1) & (size_t)(t->capidx_cap - 1))
    if (cap_key(t->captured[t->capidx[j]]) == key) return t->captured_vars[t->capidx[j]];
  if (t->ncaptured == t->capcaptured) {
    t->capcaptured = t->capcaptured ? 2 * t->capcaptured : 8;
    t->captured = sr_xrealloc(t->captured, (size_t)t->capcaptured * sizeof *t->captured);
    t->captured_vars = sr_xrealloc(t->captured_vars, (size_t)t->capcaptured * sizeof *t->captured_vars);
  }
  SrVar *v = sr_jb_var(&t->jb, type);
  t->capidx[j] = t->ncaptured;
  t->captured[t->ncaptured] = sr_ref(outer);
  t->captured_vars[t->ncaptured++] = v;
  return v;
}

static SrVar *literal_for(SrInterp *I, SrTrace *t, SrVal *v, const SrType *type, int *ok) {
  *ok = 1;
  SrProgram *p = t->prog;
  switch (v->kind) {
  case SR_V_BOOL: return sr_lit_bool(p, (int)v->i);
  case SR_V_INT: return sr_lit_int(p, type, v->i);
  case SR_V_FLOAT: return sr_lit_float(p, type, v->f);
  case SR_V_COMPLEX: {
    SrVar *l = sr_lit_float(p, type, v->c.re);
    l->val.c[0] = v->c.re;
    l->val.c[1] = v->c.im;
    return l;
  }
  default: break;
  }
  SrArrayObj *a = sr_array_of(v);
  /* a Ref is never a literal: it is its buffers */
  if (type->ref) {
    *ok = 0;
    return NULL;
  }
  if (a && a->has_value && type->ndim == 0) {
    SrVar *l = sr_lit_int(p, type, 0);
    memcpy(&l->val, &a->value, sizeof l->val);
    return l;
  }
  /* a key is never a literal (it has no Python scalar) */
  if (a && a->kind == SR_AV_CONCRETE && type->ndim == 0 && sr_backend_hooks.array_item &&
      strncmp(sr_dtype_name(type->dtype), "key<", 4) != 0) {
    SrVal *item = sr_backend_hooks.array_item(I, a->data);
    if (item) {
      SrVar *l = literal_for(I, t, item, type, ok);
      l->type = type;
      sr_unref(item);
      return l;
    }
  }
  *ok = 0;
  return NULL;
}

/* Is the trace of id `id` t or one it is nested in?  A tracer's trace may
   have ended and been freed (a tracer kept past its function's return, as
   in a closure called later): only its id is read, never its trace. */
static int trace_live(const SrTrace *t, int id) {
  for (; t; t = t->parent)
    if (t->id == id) return 1;
  return 0;
}

/* The atom standing for an input value inside trace t. */
static SrVar *atom_for(SrInterp *I, SrTrace *t, SrVal *v, const SrType *type) {
  SrArrayObj *a = sr_array_of(v);
  if (is_tracer_of(a, t)) return a->var;
  int ok;
  SrVar *lit = literal_for(I, t, v, type, &ok);
  if (ok) return lit;
  if (a && a->kind == SR_AV_TRACER && !trace_live(t, a->trace_id)) {
    sr_escaped_tracer_error(I, a);
    return NULL;
  }
  /* a ShapeDtypeStruct is captured as any value is: a constant of its
     aval (pytype_aval_mappings[ShapeDtypeStruct]) */
  return capture(t, v, type);
}

/* Whether a captured value becomes a constvar holding it: concrete arrays
   when t->capture_consts, outer tracers too when it is 2 */
static int capture_as_const(const SrTrace *t, const SrArrayObj *a) {
  if (!a || !t->capture_consts) return 0;
  return a->kind == SR_AV_CONCRETE || (t->capture_consts == 2 && a->kind == SR_AV_TRACER);
}

SrJaxpr *sr_trace_end(SrInterp *I, SrTrace *t, SrVal **outs, int nout, SrVal **captured) {
  for (int i = 0; i < nout; i++) {
    const SrType *type = sr_value_type(I, outs[i]);
    if (!type) {
      SrBuf b = SR_BUF_INIT;
      sr_to_repr(I, &b, outs[i]);
      sr_raise(I, "TypeError", "the traced function returned %s, which is not an array", b.p);
      sr_buf_free(&b);
      sr_trace_abort(I, t);
      return NULL;
    }
    /* a numpy array returned as it is: a constant, as the jax.Array it
       stands for */
    SrVal *conv = outs[i]->kind == SR_V_OBJ && !sr_array_of(outs[i]) && sr_as_array_hook
                      ? sr_as_array_hook(I, outs[i])
                      : NULL;
    SrVar *v = atom_for(I, t, conv ? conv : outs[i], type);
    sr_unref(conv);
    if (!v) {
      sr_trace_abort(I, t);
      return NULL;
    }
    sr_jb_outvar(&t->jb, v);
  }
  /* captured values lead the inputs: concrete constants as constvars (at
     top level), the rest as arguments the caller passes */
  SrJaxprBuilder *jb = &t->jb;
  SrVar **args = sr_xmalloc((jb->nin + 1) * sizeof *args);
  uint32_t nargs = jb->nin;
  sr_copy(args, jb->in, nargs * sizeof *args);
  jb->nin = 0;
  SrVal *outer = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < t->ncaptured; i++) {
    SrArrayObj *a = sr_array_of(t->captured[i]);
    if (capture_as_const(t, a)) sr_jb_constvar(jb, t->captured_vars[i], t->captured[i]);
  }
  for (int i = 0; i < t->ncaptured; i++) {
    SrArrayObj *a = sr_array_of(t->captured[i]);
    if (capture_as_const(t, a)) continue;
    sr_jb_invar(jb, t->captured_vars[i]);
    sr_seq_push(NULL, outer, sr_ref(t->captured[i]));
  }
  for (uint32_t i = 0; i < nargs; i++) sr_jb_invar(jb, args[i]);
  free(args);
  SrJaxpr *j = sr_jb_finish(jb);
  I->trace = t->parent;
  I->ns = t->saved_ns;
  t->id = -1; /* its tracers are dead now */
  if (captured) *captured = outer;
  else sr_unref(outer);
  trace_free(t);
  return j;
}

/* ---- binding ---- */

void sr_type_ctx(SrInterp *I, SrTypeCtx *cx, SrDiags *d) {
  memset(cx, 0, sizeof *cx);
  const SrMesh *m = sr_jax_abstract_mesh(I->jax);
  cx->mesh = m->n ? m : NULL;
  cx->check_vma = I->jax->check_vma;
  cx->no_f16_reductions = I->jax->no_f16_reductions;
  cx->vmap_axis = I->jax->vmap_axis;
  cx->vmap_size = I->jax->vmap_size;
  cx->nvmap = I->jax->nvmap;
  cx->d = d;
  cx->off = 0;
  cx->check_body = sr_check_body;
}

/* How many results an equation of prim has: one, its row's count, its
   body's, or one per operand (variadic collectives and casts,
   optimization_barrier). */
static uint32_t prim_nout(const SrPrim *prim, int nin, int nparams, const SrParam *ps) {
  if (!(prim->flags & SR_PF_MULTI)) return 1;
  if (prim->nout) return prim->nout(nin, ps, nparams);
  const SrVal *j = sr_params_find(ps, (uint32_t)nparams, "jaxpr");
  if (!j) j = sr_params_find(ps, (uint32_t)nparams, "call_jaxpr");
  if (!j) j = sr_params_find(ps, (uint32_t)nparams, "call"); /* custom_vmap_call */
  if (j && j->kind == SR_V_JAXPR) return j->jx.jaxpr->nout;
  return (uint32_t)nin;
}

int (*sr_bind_cast_hook)(SrInterp *I, const SrPrim *prim, int nin, SrVal **in, SrVal **cast);

SrVal *sr_bind_prim(SrInterp *I, const SrPrim *prim, int nin, SrVal **in, int nparams,
                    const SrParam *params, const SrType *const *written, uint32_t nout_hint) {
  if (nin > 512) return sr_raise(I, "ValueError", "too many operands for %s", prim->name);
  if (nin > 0 && I->trace && sr_bind_cast_hook) {
    SrVal *cast[512];
    int rc = sr_bind_cast_hook(I, prim, nin, in, cast);
    if (rc < 0) return NULL;
    if (rc > 0) {
      SrVal *r = sr_bind_prim(I, prim, nin, cast, nparams, params, written, nout_hint);
      for (int k = 0; k < nin; k++) sr_unref(cast[k]);
      return r;
    }
  }
  for (int i = 0; i < nin && sr_as_array_hook; i++) {
    if (in[i]->kind != SR_V_OBJ || sr_array_of(in[i]) || sr_is_obj(in[i], &sr_aval_class)) continue;
    SrVal *x = sr_as_array_hook(I, in[i]);
    if (!x) continue;
    /* bind the array-likes as the arrays they give */
    SrVal *conv[512];
    for (int k = 0; k < nin; k++) conv[k] = k == i ? x : sr_ref(in[k]);
    for (int k = i + 1; k < nin; k++) {
      if (conv[k]->kind != SR_V_OBJ || sr_array_of(conv[k])) continue;
      SrVal *y = sr_as_array_hook(I, conv[k]);
      if (y) {
        sr_unref(conv[k]);
        conv[k] = y;
      }
    }
    SrVal *r = sr_bind_prim(I, prim, nin, conv, nparams, params, written, nout_hint);
    for (int k = 0; k < nin; k++) sr_unref(conv[k]);
    return r;
  }
  const SrType *types[512];
  for (int i = 0; i < nin; i++) {
    types[i] = sr_value_type(I, in[i]);
    if (!types[i]) {
      SrBuf b = SR_BUF_INIT;
      sr_to_repr(I, &b, in[i]);
      sr_raise(I, "TypeError", "Value %s of type <class '%s'> is not a valid JAX type", sr_buf_str(&b),
               sr_val_kind_name(in[i]));
      sr_buf_free(&b);
      return NULL;
    }
  }
  uint32_t nout = written || nout_hint ? nout_hint : prim_nout(prim, nin, nparams, params);
  /* up to 16 results live on the stack: an eager operation on small arrays
     costs little more than its kernel */
  const SrType *outs_st[17];
  SrVal *vals_st[17];
  struct SrArray *aout_st[17];
  const SrType **outs = nout <= 16 ? outs_st : sr_xmalloc((nout + 1) * sizeof *outs);
  memset(outs, 0, (nout + 1) * sizeof *outs);
  SrVal *result = NULL;
  if (!prim->type) {
    if (written) {
      for (uint32_t i = 0; i < nout; i++) outs[i] = written[i];
    } else {
      sr_raise(I, "NotImplementedError", "shardrepl has no type rule for the primitive '%s'", prim->name);
      goto done;
    }
  } else {
    SrDiags d = SR_DIAGS_INIT;
    SrTypeCtx cx;
    sr_type_ctx(I, &cx, &d);
    /* a body traced just now was typed while tracing, in the mesh context
       it ran in (use_abstract_mesh, explicit_axes); re-typing it in the
       caller's context would be wrong, and JAX does not either */
    if (!written) cx.check_body = NULL;
    SrRuleEqn re = {prim, (uint32_t)nin, nout, (uint32_t)nparams, types, NULL, params, written};
    if (sr_type_rule(&cx, &re, outs) < 0) {
      sr_raise_diags(I, &d, "TypeError");
      goto done;
    }
    sr_diags_clear(&d);
  }
  SrTrace *t = I->trace;
  if (t && I->jax && I->jax->compile_time_eval) {
    /* core.eval_context: with no tracer among the operands the operation
       runs now */
    int traced = 0;
    for (int i = 0; i < nin && !traced; i++) {
      SrArrayObj *a = sr_array_of(in[i]);
      traced = a && a->kind == SR_AV_TRACER;
    }
    if (!traced) t = NULL;
  }
  SrVal **vals = nout <= 16 ? vals_st : sr_xmalloc((nout + 1) * sizeof *vals);
  memset(vals, 0, (nout + 1) * sizeof *vals);
  if (t) {
    /* record an equation */
    SrVar *ivars[512];
    for (int i = 0; i < nin; i++) {
      ivars[i] = atom_for(I, t, in[i], types[i]);
      if (!ivars[i]) {
        if (vals != vals_st) free(vals);
        goto done;
      }
    }
    SrVar **ovars = sr_xmalloc((nout + 1) * sizeof *ovars);
    for (uint32_t i = 0; i < nout; i++) ovars[i] = sr_jb_var(&t->jb, outs[i]);
    SrParam *ps = sr_xmalloc(((size_t)nparams + 1) * sizeof *ps);
    for (int i = 0; i < nparams; i++) ps[i] = (SrParam){params[i].key, sr_val_to_prog(t->prog, params[i].val)};
    SrEqn *q = sr_jb_eqn(&t->jb, prim, (uint32_t)nin, ivars, nout, ovars, (uint32_t)nparams, ps);
    q->ns = I->ns;
    q->loc = I->loc ? I->loc : sr_trace_loc_hook ? sr_trace_loc_hook(I) : NULL;
    const SrMesh *cur = sr_jax_abstract_mesh(I->jax);
    q->mesh = cur != t->mesh ? cur : NULL;
    free(ps);
    for (uint32_t i = 0; i < nout; i++) vals[i] = tracer(I, t, ovars[i]);
    free(ovars);
  } else {
    int abstract = 0;
    for (int i = 0; i < nin; i++) {
      SrArrayObj *a = sr_array_of(in[i]);
      if (a && a->deleted) {
        sr_array_check_deleted(I, in[i]);
        if (vals != vals_st) free(vals);
        goto done;
      }
      if (a && a->kind == SR_AV_ABSTRACT && !a->has_value) abstract = 1;
      if (a && a->kind == SR_AV_TRACER) {
        sr_escaped_tracer_error(I, a);
        if (vals != vals_st) free(vals);
        goto done;
      }
    }
    if (abstract || !sr_backend_hooks.eqn) {
      for (uint32_t i = 0; i < nout; i++) vals[i] = sr_array_abstract(outs[i]);
    } else {
      struct SrArray *ain[512], **aout = nout <= 16 ? aout_st : sr_xmalloc((nout + 1) * sizeof *aout);
      memset(aout, 0, (nout + 1) * sizeof *aout);
      int made[512], ok = 1;
      memset(made, 0, (size_t)nin * sizeof *made);
      for (int i = 0; i < nin && ok; i++) {
        SrArrayObj *a = sr_array_of(in[i]);
        if (a && a->kind == SR_AV_CONCRETE) {
          ain[i] = a->data;
        } else {
          /* Python scalars and literal values become arrays */
          double re = 0, im = 0;
          int64_t iv = 0;
          if (a) {
            re = a->value.f;
            iv = a->value.i;
            im = sr_dtype_kind(types[i]->dtype) == SR_DK_COMPLEX ? a->value.c[1] : 0;
            if (sr_dtype_kind(types[i]->dtype) == SR_DK_COMPLEX) re = a->value.c[0];
          } else if (in[i]->kind == SR_V_FLOAT) {
            re = in[i]->f;
          } else if (in[i]->kind == SR_V_COMPLEX) {
            re = in[i]->c.re;
            im = in[i]->c.im;
          } else {
            iv = in[i]->i;
            re = (double)iv;
          }
          ain[i] = sr_backend_hooks.from_scalar(I, types[i], re, im, iv);
          made[i] = 1;
          if (!ain[i]) ok = 0;
        }
      }
      SrDiags d = SR_DIAGS_INIT;
      if (ok && sr_backend_hooks.eqn(I, prim, params, nparams, nin, ain, (int)nout, outs, aout, &d) < 0) {
        /* the hook raised its own exception, or reported diagnostics */
        if (!I->exc) sr_raise_diags(I, &d, "RuntimeError");
        ok = 0;
      }
      sr_diags_clear(&d);
      for (int i = 0; i < nin; i++)
        if (made[i] && ain[i]) sr_backend_hooks.array_unref(ain[i]);
      if (!ok || I->exc) {
        for (uint32_t i = 0; i < nout; i++)
          if (aout[i]) sr_backend_hooks.array_unref(aout[i]);
        if (aout != aout_st) free(aout);
        if (vals != vals_st) free(vals);
        if (!I->exc) sr_raise(I, "RuntimeError", "%s failed", prim->name);
        goto done;
      }
      for (uint32_t i = 0; i < nout; i++) {
        /* a Ref passed through (optimization_barrier) is the same Ref */
        SrVal *same = NULL;
        for (int k = 0; k < nin && outs[i] && outs[i]->ref && !same; k++)
          if (!made[k] && types[k]->ref && sr_backend_hooks.array_same &&
              sr_backend_hooks.array_same(ain[k], aout[i]))
            same = in[k];
        if (same) {
          sr_backend_hooks.array_unref(aout[i]);
          vals[i] = sr_ref(same);
        } else {
          vals[i] = sr_array_concrete(aout[i]);
        }
      }
      if (aout != aout_st) free(aout);
    }
  }
  if ((prim->flags & SR_PF_MULTI) || written) {
    result = sr_tuple(NULL, (int)nout, vals);
  } else {
    result = vals[0];
  }
  if (vals != vals_st) free(vals);
done:
  if (outs != outs_st) free(outs);
  return result;
}

SrVal *sr_bind(SrInterp *I, int prim_id, int nin, SrVal **in, int nparams, const SrParam *params) {
  sr_prims_init();
  return sr_bind_prim(I, &sr_prims[prim_id], nin, in, nparams, params, NULL, 0);
}

/* A value for a literal of a jaxpr: an abstract scalar that keeps its
   value (re-tracing makes the same literal; running gives the value). */
static SrVal *literal_value(const SrVar *l) {
  SrArrayObj *a = sr_xcalloc(1, sizeof *a);
  a->kind = SR_AV_ABSTRACT;
  a->type = sr_atom_type(l);
  a->has_value = 1;
  if (l->type) {
    memcpy(&a->value, &l->val, sizeof a->value);
  } else {
    /* bare literals of older texts: the value is in the text */
    const char *t = l->text ? l->text : "0";
    if (sr_dtype_is_inexact(a->type->dtype)) a->value.f = strtod(t, NULL);
    else a->value.i = strcmp(t, "True") == 0 ? 1 : strtoll(t, NULL, 10);
  }
  return sr_obj(&sr_array_class, a);
}

SrVal *sr_array_concretize(SrInterp *I, SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  if (I->trace || !a || a->kind != SR_AV_ABSTRACT || !a->has_value || !sr_backend_hooks.from_scalar) return sr_ref(v);
  int cx = sr_dtype_kind(a->type->dtype) == SR_DK_COMPLEX;
  double re = cx ? a->value.c[0] : sr_dtype_is_inexact(a->type->dtype) ? a->value.f : (double)a->value.i;
  struct SrArray *c = sr_backend_hooks.from_scalar(I, a->type, re, cx ? a->value.c[1] : 0, a->value.i);
  return c ? sr_array_concrete(c) : sr_ref(v);
}

const char *(*sr_trace_loc_hook)(SrInterp *I);

SrVal *sr_eval_jaxpr(SrInterp *I, const SrJaxpr *j, int nin, SrVal **in) {
  uint32_t nargs = sr_nargs(j);
  if ((uint32_t)nin != nargs)
    return sr_raise(I, "TypeError", "the jaxpr takes %u arguments, %d given", nargs, nin);
  if (I->trace && j->prog != I->trace->prog) sr_program_dep(I->trace->prog, j->prog);
  SrVal **env = sr_xcalloc(j->nvars + 1, sizeof *env);
  /* each var's value is dropped after its last use, as the evaluator does
     (sr_ev_jaxpr): a long chain holds a few values, not all of them */
  int32_t *last = sr_jaxpr_last_use(j, NULL);
  for (uint32_t i = 0; i < j->nconst; i++) {
    SrVal *c = j->consts && j->consts[i] ? sr_ref(j->consts[i]) : sr_array_abstract(j->invars[i]->type);
    env[j->invars[i]->id] = c;
  }
  for (uint32_t i = 0; i < nargs; i++) env[sr_args(j)[i]->id] = sr_ref(in[i]);
  SrVal *result = NULL;
  SrVal *argv[512];
  /* core.eval_jaxpr: each equation bound in its own context */
  SrEqnCtx c0 = sr_eqn_ctx_save(I);
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    sr_eqn_ctx_enter(I, &c0, c0.ns, e);
    if (sr_interrupt_point(I)) {
      sr_raise(I, "KeyboardInterrupt", "interrupted");
      goto done;
    }
    if (e->nin > 512) {
      sr_raise(I, "ValueError", "too many operands");
      goto done;
    }
    for (uint32_t i = 0; i < e->nin; i++)
      argv[i] = e->in[i]->kind == SR_LIT ? literal_value(e->in[i]) : sr_ref(env[e->in[i]->id]);
    const SrType *written[512];
    for (uint32_t i = 0; i < e->nout && i < 512; i++) written[i] = e->out[i]->type;
    SrVal *r = sr_bind_prim(I, e->prim, (int)e->nin, argv, (int)e->nparams, e->params, written, e->nout);
    for (uint32_t i = 0; i < e->nin; i++) sr_unref(argv[i]);
    if (!r) goto done;
    for (uint32_t i = 0; i < e->nout; i++) {
      if (!sr_is_read(last, e->out[i])) continue;
      sr_unref(env[e->out[i]->id]);
      env[e->out[i]->id] = sr_ref(r->seq.items[i]);
    }
    sr_unref(r);
    for (uint32_t i = 0; i < e->nin; i++)
      if (sr_dies_at(last, e->in[i], k)) {
        sr_unref(env[e->in[i]->id]);
        env[e->in[i]->id] = NULL;
      }
  }
  sr_eqn_ctx_restore(I, &c0);
  /* run, not traced, and on no abstract input */
  int concrete = !I->trace;
  for (int i = 0; concrete && i < nin; i++) {
    SrArrayObj *a = sr_array_of(in[i]);
    concrete = !a || a->kind == SR_AV_CONCRETE;
  }
  result = sr_seq(NULL, SR_V_TUPLE, (int)j->nout);
  for (uint32_t i = 0; i < j->nout; i++) {
    const SrVar *v = j->outvars[i];
    SrVal *o = v->kind == SR_LIT ? literal_value(v) : sr_ref(env[v->id]);
    if (concrete && v->kind == SR_LIT) {
      SrVal *c = sr_array_concretize(I, o);
      sr_unref(o);
      o = c;
    }
    sr_seq_push(NULL, result, o);
  }
done:
  sr_eqn_ctx_restore(I, &c0);
  for (uint32_t i = 0; i < j->nvars; i++) sr_unref(env[i]);
  free(env);
  free(last);
  return result;
}

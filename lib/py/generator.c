/* generator.c: Python's generators, each body on a stack of its own.
 *
 * A generator is created when a function whose def yields is called
 * (interp.c's sr_function_call: the arguments bound, nothing run).  The
 * first resume (next(), send(None), a for loop's step) makes a context on
 * a fresh stack that runs the body (sr_py_run_def_body); a yield swaps
 * back to the resumer with the item, and the next resume swaps in again,
 * so the body's C frames -- loops, try blocks, with blocks, half-evaluated
 * expressions -- wait on their own stack as CPython's frame waits.  When
 * the body returns or raises, the context ends and the generator is done.
 *
 * What the interpreter keeps per running frame moves with each switch:
 * the code and offset being run, the function's name, the call and
 * expression depths (the generator's own part of them rides on top of its
 * resumer's, so recursion through generators is bounded as calls are),
 * and the exception an except block is handling.
 *
 * Stacks are anonymous mappings of the main stack's size (RLIMIT_STACK,
 * reserved, not committed) with a guard page; a generator freed while
 * suspended is closed first (GeneratorExit thrown in, its finally blocks
 * run), as CPython closes one, with the exception in flight kept. */
#include "py/generator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

#include "py/range.h"
#include "py/script.h"
#include "util/mem.h"

#if defined(__SANITIZE_ADDRESS__)
#define GEN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GEN_ASAN 1
#endif
#endif
#ifdef GEN_ASAN
#include <dlfcn.h>
#include <sanitizer/common_interface_defs.h>
/* ASan's swapcontext interceptor warns on its first use that it may give
   false positives; with the fiber calls below ASan knows every switch, so
   the switches go to libc's own swapcontext. */
static int swap(ucontext_t *from, const ucontext_t *to) {
  static int (*real)(ucontext_t *, const ucontext_t *);
  if (!real) {
    /* libc's own (ASan's library comes before it in the lookup order) */
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (libc) *(void **)&real = dlsym(libc, "swapcontext");
    if (!real) real = swapcontext;
  }
  return real(from, to);
}
#else
#define swap swapcontext
#endif

enum { GEN_CREATED, GEN_SUSPENDED, GEN_RUNNING, GEN_DONE };

typedef struct SrGen {
  SrInterp *I;
  SrVal *fnval;     /* the function, held */
  SrFunction *fn;
  SrEnv *env;       /* the frame's locals, held */
  int state;
  ucontext_t self;  /* where the body goes on */
  ucontext_t back;  /* where the resumer waits */
  char *map;        /* the stack's mapping, guard page first */
  size_t map_size;
  SrVal *inbox;     /* sent in, or NULL */
  SrVal *outbox;    /* yielded out */
  int throw_in;     /* resumed with an exception raised */
  int failed;       /* the body ended with an exception */
  SrVal *retval;    /* what the body returned */
  /* the generator's part of the interpreter's frame state */
  uint32_t off;
  int depth, eval_depth;
  SrVal *handled;
#ifdef GEN_ASAN
  void *fake_back, *fake_self; /* ASan's fake stacks of each side */
  const void *back_bottom;     /* the resumer's stack */
  size_t back_size;
#endif
} SrGen;

static SrGen *running;  /* the innermost generator running its body */
static SrGen *starting; /* handed to a new context's entry */

static void gen_free(void *data);

static void gen_repr(SrBuf *out, const SrVal *v) {
  const SrGen *g = v->obj.data;
  sr_buf_printf(out, "<generator object %s at %p>", g->fn->qualname ? g->fn->qualname : g->fn->name, (void *)g);
}

static const SrLangOps gen_ops;
static const SrClass gen_class = {"generator", gen_free, gen_repr, NULL, &gen_ops};

int sr_is_gen(const SrVal *v) { return sr_is_obj(v, &gen_class); }

SrVal *sr_gen_new(SrInterp *I, SrVal *fnval, SrEnv *env) {
  SrGen *g = sr_xcalloc(1, sizeof *g);
  g->I = I;
  g->fnval = sr_ref(fnval);
  g->fn = sr_as_function(fnval);
  g->env = env;
  g->depth = 1;
  return sr_obj(&gen_class, g);
}

/* ---- switching ---- */

static size_t stack_size(void) {
  struct rlimit rl;
  size_t s = (size_t)8 << 20;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) s = (size_t)rl.rlim_cur;
  if (s < ((size_t)1 << 20)) s = (size_t)1 << 20;
  if (s > ((size_t)64 << 20)) s = (size_t)64 << 20;
  return s;
}

/* ASan follows the stacks through its fiber calls: begin before each
   switch names the stack switched to, end after it names the one left. */
static void to_body(SrGen *g) {
#ifdef GEN_ASAN
  long page = sysconf(_SC_PAGESIZE);
  __sanitizer_start_switch_fiber(&g->fake_back, g->map + page, g->map_size - (size_t)page);
#else
  (void)g;
#endif
}

static void in_resumer(SrGen *g) {
#ifdef GEN_ASAN
  __sanitizer_finish_switch_fiber(g->fake_back, NULL, NULL);
#else
  (void)g;
#endif
}

static void to_resumer(SrGen *g, int dying) {
#ifdef GEN_ASAN
  __sanitizer_start_switch_fiber(dying ? NULL : &g->fake_self, g->back_bottom, g->back_size);
#else
  (void)g, (void)dying;
#endif
}

static void in_body(SrGen *g) {
#ifdef GEN_ASAN
  __sanitizer_finish_switch_fiber(g->fake_self, &g->back_bottom, &g->back_size);
#else
  (void)g;
#endif
}

static void gen_entry(void) {
  SrGen *g = starting;
  in_body(g);
  SrVal *r = sr_py_run_def_body(g->I, g->fn, g->env);
  if (r) g->retval = r;
  else g->failed = 1;
  g->state = GEN_DONE;
  to_resumer(g, 1);
  setcontext(&g->back);
}

static int gen_start(SrInterp *I, SrGen *g) {
  long page = sysconf(_SC_PAGESIZE);
  size_t size = stack_size() + (size_t)page;
  void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (m == MAP_FAILED) {
    sr_raise(I, "MemoryError", "%s", "");
    return -1;
  }
  mprotect(m, (size_t)page, PROT_NONE);
  g->map = m;
  g->map_size = size;
  if (getcontext(&g->self) < 0) {
    sr_raise(I, "MemoryError", "%s", "");
    return -1;
  }
  g->self.uc_stack.ss_sp = g->map + page;
  g->self.uc_stack.ss_size = size - (size_t)page;
  g->self.uc_link = NULL;
  makecontext(&g->self, gen_entry, 0);
  return 0;
}

/* Runs g's body until its next yield or its end: the item (a new
   reference), or NULL -- done (g->retval), or failed with I->exc set.
   sent is borrowed; with throw, the exception to throw in is raised
   already. */
static SrVal *gen_resume(SrInterp *I, SrGen *g, SrVal *sent, int throw) {
  if (g->state == GEN_RUNNING) return sr_raise(I, "ValueError", "generator already executing");
  if (g->state == GEN_DONE) return NULL;
  if (g->state == GEN_CREATED) {
    if (throw) {
      g->state = GEN_DONE;
      return NULL;
    }
    if (sent && sent->kind != SR_V_NONE) {
      return sr_raise(I, "TypeError", "can't send non-None value to a just-started generator");
    }
    if (gen_start(I, g) < 0) {
      g->state = GEN_DONE;
      return NULL;
    }
  }
  if (I->py->depth + g->depth > 400) return sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
  /* the resumer's frame state out, the generator's in */
  SrCode *code = I->py->code;
  uint32_t off = I->py->cur_off;
  const char *func = I->py->cur_func, *qual = I->py->cur_qual;
  int depth = I->py->depth, eval_depth = I->py->eval_depth;
  SrVal *handled = I->py->handled;
  SrPyCaller cf = {code, off, func, I->py->callers, qual};
  I->py->callers = &cf;
  I->py->code = g->fn->code;
  I->py->cur_off = g->off;
  I->py->cur_func = g->fn->name;
  I->py->cur_qual = g->fn->qualname ? g->fn->qualname : g->fn->name;
  I->py->depth = depth + g->depth;
  I->py->eval_depth = eval_depth + g->eval_depth;
  I->py->handled = g->handled;
  g->inbox = sent ? sr_ref(sent) : NULL;
  g->throw_in = throw;
  int fresh = g->state == GEN_CREATED;
  g->state = GEN_RUNNING;
  SrGen *outer = running;
  running = g;
  if (fresh) starting = g;
  to_body(g);
  swap(&g->back, &g->self);
  in_resumer(g);
  running = outer;
  g->off = I->py->cur_off;
  g->depth = I->py->depth - depth;
  g->eval_depth = I->py->eval_depth - eval_depth;
  g->handled = I->py->handled;
  I->py->callers = cf.up;
  I->py->code = code;
  I->py->cur_off = off;
  I->py->cur_func = func;
  I->py->cur_qual = qual;
  I->py->depth = depth;
  I->py->eval_depth = eval_depth;
  I->py->handled = handled;
  if (g->state == GEN_SUSPENDED) {
    SrVal *r = g->outbox;
    g->outbox = NULL;
    return r;
  }
  sr_unref(g->inbox);
  g->inbox = NULL;
  /* the exception leaves the body for the frame that resumed it */
  if (g->failed && code) sr_tb_push(I, code->src, off, func);
  return NULL;
}

SrVal *sr_gen_yield(SrInterp *I, SrVal *v) {
  SrGen *g = running;
  if (!g) {
    sr_unref(v);
    return sr_raise(I, "SyntaxError", "'yield' outside function");
  }
  g->outbox = v;
  g->state = GEN_SUSPENDED;
  to_resumer(g, 0);
  swap(&g->self, &g->back);
  in_body(g);
  if (g->throw_in) {
    g->throw_in = 0;
    return NULL;
  }
  SrVal *s = g->inbox ? g->inbox : sr_none();
  g->inbox = NULL;
  return s;
}

/* ---- the protocol ---- */

SrVal *sr_gen_next(SrInterp *I, SrVal *gen) { return gen_resume(I, gen->obj.data, NULL, 0); }

/* throw an exception into g where it waits: 0 when g is done after it
   (the exception was GeneratorExit or StopIteration, or g was not
   started), -1 with an exception raised otherwise */
static int gen_close(SrInterp *I, SrGen *g) {
  if (g->state == GEN_CREATED) {
    g->state = GEN_DONE;
    return 0;
  }
  if (g->state != GEN_SUSPENDED) return 0;
  sr_raise(I, "GeneratorExit", "%s", "");
  SrVal *r = gen_resume(I, g, NULL, 1);
  if (r) {
    sr_unref(r);
    sr_raise(I, "RuntimeError", "generator ignored GeneratorExit");
    return -1;
  }
  if (!I->exc) return 0;
  const char *t = sr_exc_type(I->exc);
  if (strcmp(t, "GeneratorExit") == 0 || strcmp(t, "StopIteration") == 0) {
    sr_exc_clear(I);
    return 0;
  }
  return -1;
}

static void gen_free(void *data) {
  SrGen *g = data;
  if (g->state == GEN_SUSPENDED && g->I && g->I->py) {
    /* close it, as CPython's finalizer does, keeping the exception
       (and its traceback) that may be unwinding past the last holder */
    SrInterp *I = g->I;
    SrVal *exc = I->exc;
    SrSrc *src = I->exc_src;
    size_t off = I->exc_off;
    int located = I->exc_located;
    struct SrTraceback *tb = I->py->tb;
    I->exc = NULL;
    I->exc_src = NULL;
    I->exc_located = 0;
    I->py->tb = NULL;
    if (gen_close(I, g) < 0) sr_exc_clear(I);
    sr_tb_free(I);
    I->py->tb = tb;
    I->exc = exc;
    I->exc_src = src;
    I->exc_off = off;
    I->exc_located = located;
  }
  if (g->map) munmap(g->map, g->map_size);
  sr_unref(g->retval);
  sr_unref(g->inbox);
  sr_unref(g->outbox);
  sr_env_unref(g->env);
  sr_unref(g->fnval);
  free(g);
}

/* StopIteration, with the return value's text as CPython's str() of
   StopIteration(value) shows it */
static SrVal *stop_iteration(SrInterp *I, SrGen *g) {
  if (!g->retval || g->retval->kind == SR_V_NONE) return sr_raise(I, "StopIteration", "%s", "");
  SrBuf b = SR_BUF_INIT;
  sr_to_str(I, &b, g->retval);
  sr_raise(I, "StopIteration", "%s", sr_buf_str(&b));
  sr_buf_free(&b);
  return NULL;
}

static SrVal *m_next(SrInterp *I, SrArgs *a) {
  SrGen *g = a->self->obj.data;
  SrVal *r = gen_resume(I, g, NULL, 0);
  return r || I->exc ? r : stop_iteration(I, g);
}

static SrVal *m_send(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "generator.send() takes exactly one argument (%d given)", a->n);
  SrGen *g = a->self->obj.data;
  SrVal *r = gen_resume(I, g, a->v[0], 0);
  return r || I->exc ? r : stop_iteration(I, g);
}

/* throw(exc): an exception value, or an exception type (called with no
   arguments, as CPython instantiates it) */
static SrVal *m_throw(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->n > 3) return sr_raise(I, "TypeError", "throw expected at least 1 argument, got %d", a->n);
  SrGen *g = a->self->obj.data;
  SrVal *e = a->v[0];
  SrVal *made = NULL;
  if (!sr_is_obj(e, &sr_exception_class)) {
    made = sr_call(I, e, &(SrArgs){0});
    if (!made) return NULL;
    if (!sr_is_obj(made, &sr_exception_class)) {
      sr_unref(made);
      return sr_raise(I, "TypeError", "exceptions must be classes or instances deriving from BaseException, not %s",
                      sr_val_kind_name(e));
    }
    e = made;
  }
  sr_exc_clear(I);
  I->exc = sr_ref(e);
  sr_unref(made);
  SrVal *r = gen_resume(I, g, NULL, 1);
  return r || I->exc ? r : stop_iteration(I, g);
}

static SrVal *m_close(SrInterp *I, SrArgs *a) {
  SrGen *g = a->self->obj.data;
  return gen_close(I, g) < 0 ? NULL : sr_none();
}

static SrVal *m_iter(SrInterp *I, SrArgs *a) {
  (void)I;
  return sr_ref(a->self);
}

static SrVal *gen_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  static const struct {
    const char *name;
    SrBuiltinFn fn;
  } methods[] = {{"__next__", m_next}, {"send", m_send}, {"throw", m_throw}, {"close", m_close}, {"__iter__", m_iter}};
  for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
    if (strcmp(name, methods[i].name) == 0) return sr_bound_method(self, name, methods[i].fn);
  SrGen *g = self->obj.data;
  if (strcmp(name, "__name__") == 0) return sr_str_cstr(NULL, g->fn->name);
  if (strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, g->fn->qualname ? g->fn->qualname : g->fn->name);
  if (strcmp(name, "gi_running") == 0) return sr_bool(g->state == GEN_RUNNING);
  return NULL;
}

SrVal *sr_gen_list(SrInterp *I, SrVal *gen) {
  SrGen *g = gen->obj.data;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  for (;;) {
    if (sr_interrupt_point(I)) {
      sr_unref(l);
      return sr_raise(I, "KeyboardInterrupt", "interrupted");
    }
    if (l->seq.n >= INT32_MAX / 2 || sr_check_mem(I, (uint64_t)l->seq.n + 1, 2 * sizeof(SrVal *)) < 0) {
      sr_unref(l);
      return NULL;
    }
    SrVal *x = gen_resume(I, g, NULL, 0);
    if (!x) {
      if (I->exc) {
        sr_unref(l);
        return NULL;
      }
      return l;
    }
    sr_seq_push(NULL, l, x);
  }
}

static SrVal *gen_iter(SrInterp *I, SrVal *self) { return sr_gen_list(I, self); }

SrVal *sr_gen_yield_from(SrInterp *I, SrVal *src) {
  if (sr_is_gen(src)) {
    /* delegate: what is sent goes to the inner generator */
    SrGen *inner = src->obj.data;
    SrVal *sent = NULL;
    for (;;) {
      SrVal *x = gen_resume(I, inner, sent, 0);
      sr_unref(sent);
      sent = NULL;
      if (!x) return I->exc ? NULL : sr_ref(inner->retval ? inner->retval : sr_none());
      sent = sr_gen_yield(I, x);
      if (!sent) {
        /* thrown in: thrown on into the inner generator */
        if (inner->state != GEN_SUSPENDED) return NULL;
        x = gen_resume(I, inner, NULL, 1);
        if (!x) return I->exc ? NULL : sr_ref(inner->retval ? inner->retval : sr_none());
        sent = sr_gen_yield(I, x);
        if (!sent) return NULL;
      }
    }
  }
  SrIter it;
  if (sr_iter_begin(I, &it, src) < 0) return NULL;
  for (SrVal *x; (x = sr_iter_next(&it));) {
    SrVal *s = sr_gen_yield(I, x);
    if (!s) {
      sr_iter_end(&it);
      return NULL;
    }
    sr_unref(s);
  }
  int failed = sr_iter_failed(&it);
  sr_iter_end(&it);
  return failed ? NULL : sr_none();
}

static const SrLangOps gen_ops = {.getattr = gen_getattr, .iter = gen_iter};

void sr_gen_init(void) {}

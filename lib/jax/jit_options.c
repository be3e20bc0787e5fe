/* jit_options.c: jax.jit's static and donated arguments (jit_options.h;
 * JAX's pjit.py _parse_jit_arguments, api_util.py resolve_argnums,
 * argnums_partial, donation_vector, and jaxlib's jax_jit.h for the
 * non-hashable static argument). */
#include "jax/jit_options.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "exec/array.h"
#include "jax/api.h"
#include "jax/introspect.h"
#include "jax/jax.h"
#include "jax/tree_util.h"
#include "py/ast.h"
#include "py/introspect.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- resolving the options ---- */

/* _ensure_index_tuple: an int or a sequence of ints */
static int index_tuple(SrInterp *I, SrVal *v, int *out, int *n) {
  *n = 0;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    out[(*n)++] = (int)v->i;
    return 0;
  }
  if (v->kind != SR_V_TUPLE && v->kind != SR_V_LIST) {
    sr_raise(I, "TypeError", "'%s' object cannot be interpreted as an integer", sr_val_kind_name(v));
    return -1;
  }
  for (int i = 0; i < v->seq.n; i++) {
    SrVal *x = v->seq.items[i];
    if (x->kind != SR_V_INT && x->kind != SR_V_BOOL) {
      sr_raise(I, "TypeError", "'%s' object cannot be interpreted as an integer", sr_val_kind_name(x));
      return -1;
    }
    if (*n == SR_JIT_MAX_OPT) {
      sr_raise(I, "ValueError", "jit: more than %d argument numbers", SR_JIT_MAX_OPT);
      return -1;
    }
    out[(*n)++] = (int)x->i;
  }
  return 0;
}

/* _ensure_str_tuple: a str or a sequence of strs */
static int str_tuple(SrInterp *I, SrVal *v, const char **out, int *n) {
  *n = 0;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (v->kind == SR_V_STR) {
    out[(*n)++] = sr_intern(v->str.s, v->str.n);
    return 0;
  }
  if (v->kind != SR_V_TUPLE && v->kind != SR_V_LIST) {
    sr_raise(I, "TypeError", "'%s' object is not iterable", sr_val_kind_name(v));
    return -1;
  }
  for (int i = 0; i < v->seq.n; i++) {
    SrVal *x = v->seq.items[i];
    if (x->kind != SR_V_STR) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, x);
      sr_raise(I, "TypeError", "argument is not a string: %s", sr_buf_str(&b));
      sr_buf_free(&b);
      return -1;
    }
    if (*n == SR_JIT_MAX_OPT) {
      sr_raise(I, "ValueError", "jit: more than %d argument names", SR_JIT_MAX_OPT);
      return -1;
    }
    out[(*n)++] = sr_intern(x->str.s, x->str.n);
  }
  return 0;
}

static int has_num(const int *v, int n, int x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

static int has_name(const char *const *v, int n, const char *x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

/* a tuple's repr, (1,) or (0, 2) */
static void nums_repr(SrBuf *b, const int *v, int n) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < n; i++) sr_buf_printf(b, i ? ", %d" : "%d", v[i]);
  sr_buf_puts(b, n == 1 ? ",)" : ")");
}

/* a set's repr, {'a'} */
static void names_repr(SrBuf *b, const char *const *v, int n) {
  sr_buf_putc(b, '{');
  for (int i = 0; i < n; i++) sr_buf_printf(b, i ? ", '%s'" : "'%s'", v[i]);
  sr_buf_putc(b, '}');
}

/* infer_argnums_and_argnames, then _validate_argnums and
   _validate_argnames, for one pair */
static int resolve(SrInterp *I, const SrParams *ps, int have_nums, int *nums, int *nn, int have_names,
                   const char **names, int *na, const char *what) {
  /* the parameters' count includes the keyword-only ones, after the
     positional ones */
  int npos = ps ? ps->n - ps->nkwonly : 0;
  if (ps && have_nums != have_names) {
    /* only POSITIONAL_OR_KEYWORD parameters have both */
    if (have_nums) {
      *na = 0;
      for (int i = ps->nposonly; i < npos; i++)
        if (has_num(nums, *nn, i)) names[(*na)++] = ps->names[i];
    } else {
      *nn = 0;
      for (int i = ps->nposonly; i < npos; i++)
        if (has_name(names, *na, ps->names[i])) nums[(*nn)++] = i;
    }
  }
  if (!ps) return 0;
  if (*nn && !ps->star) {
    int lo = nums[0], hi = nums[0];
    for (int i = 1; i < *nn; i++) {
      if (nums[i] < lo) lo = nums[i];
      if (nums[i] > hi) hi = nums[i];
    }
    if (-lo > npos || hi >= npos) {
      SrBuf b = SR_BUF_INIT;
      nums_repr(&b, nums, *nn);
      sr_raise(I, "ValueError", "Jitted function has %s_argnums=%s, but only accepts %d positional arguments.", what,
               b.p, npos);
      sr_buf_free(&b);
      return -1;
    }
  }
  const char *bad[SR_JIT_MAX_OPT];
  int nbad = 0;
  for (int i = 0; i < ps->nposonly; i++)
    if (has_name(names, *na, ps->names[i])) bad[nbad++] = ps->names[i];
  if (ps->star)
    for (int k = 0; k < *na; k++)
      if (names[k] == ps->star) bad[nbad++] = names[k];
  if (nbad) {
    SrBuf b = SR_BUF_INIT;
    names_repr(&b, bad, nbad);
    sr_raise(I, "ValueError", "Jitted function has invalid argnames %s in %s_argnames. These are positional-only", b.p,
             what);
    sr_buf_free(&b);
    return -1;
  }
  if (ps->kwstar) return 0;
  for (int k = 0; k < *na; k++) {
    int ok = 0;
    for (int i = ps->nposonly; i < ps->n && !ok; i++) ok = ps->names[i] == names[k];
    if (!ok) bad[nbad++] = names[k];
  }
  if (nbad) {
    SrBuf b = SR_BUF_INIT;
    names_repr(&b, bad, nbad);
    sr_raise(I, "ValueError",
             "Jitted function has invalid argnames %s in %s_argnames. Function does not take these args.", b.p, what);
    sr_buf_free(&b);
    return -1;
  }
  return 0;
}

int sr_jit_opts_parse(SrInterp *I, SrVal *fn, SrVal *static_argnums, SrVal *static_argnames,
                      SrVal *donate_argnums, SrVal *donate_argnames, SrJitOpts *o) {
  memset(o, 0, sizeof *o);
  if (index_tuple(I, static_argnums, o->sn, &o->nsn) < 0 || str_tuple(I, static_argnames, o->sa, &o->nsa) < 0 ||
      index_tuple(I, donate_argnums, o->dn, &o->ndn) < 0 || str_tuple(I, donate_argnames, o->da, &o->nda) < 0)
    return -1;
  SrFunction *uf = fn ? sr_as_function(sr_signature_target(I, fn)) : NULL;
  const SrParams *ps = uf ? uf->node->params : NULL;
  if (!ps && o->nda) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, fn);
    sr_raise(I, "ValueError", "Getting the signature of function %s failed. Pass donate_argnums instead of donate_argnames.",
             b.p);
    sr_buf_free(&b);
    return -1;
  }
  int hs = static_argnums && static_argnums->kind != SR_V_NONE;
  int hsa = static_argnames && static_argnames->kind != SR_V_NONE;
  int hd = donate_argnums && donate_argnums->kind != SR_V_NONE;
  int hda = donate_argnames && donate_argnames->kind != SR_V_NONE;
  if (resolve(I, ps, hs, o->sn, &o->nsn, hsa, o->sa, &o->nsa, "static") < 0 ||
      resolve(I, ps, hd, o->dn, &o->ndn, hda, o->da, &o->nda, "donate") < 0)
    return -1;
  /* _assert_no_intersection */
  const char *both[SR_JIT_MAX_OPT];
  int nb = 0;
  for (int i = 0; i < o->nsa; i++)
    if (has_name(o->da, o->nda, o->sa[i])) both[nb++] = o->sa[i];
  if (nb) {
    SrBuf b = SR_BUF_INIT;
    names_repr(&b, both, nb);
    sr_raise(I, "ValueError",
             "static_argnames and donate_argnames cannot intersect. Argument names %s appear in both static_argnames "
             "and donate_argnames",
             b.p);
    sr_buf_free(&b);
    return -1;
  }
  return 0;
}

/* ---- splitting a call ---- */

typedef struct Bound {
  SrVal *fn;
  int n;           /* positional arguments of the call */
  SrVal **pos;     /* n: the static value, or NULL where dynamic */
  int nkw;
  const char **kw; /* the static keyword arguments */
  SrVal **kwv;
} Bound;

static void bound_free(void *d) {
  Bound *b = d;
  sr_unref(b->fn);
  for (int i = 0; i < b->n; i++) sr_unref(b->pos[i]);
  for (int i = 0; i < b->nkw; i++) sr_unref(b->kwv[i]);
  free(b->pos);
  free(b->kw);
  free(b->kwv);
  free(b);
}

/* api_util._argnums_partial: the static arguments put back in place */
static SrVal *bound_call(SrInterp *I, SrArgs *a) {
  Bound *b = sr_current_builtin(I)->data;
  SrVal **v = sr_xcalloc((size_t)b->n + (size_t)a->n + 1, sizeof *v);
  int n = 0, k = 0;
  for (int i = 0; i < b->n; i++) v[n++] = b->pos[i] ? b->pos[i] : k < a->n ? a->v[k++] : sr_none();
  while (k < a->n) v[n++] = a->v[k++];
  int nkw = a->nkw + b->nkw;
  const char **kw = sr_xcalloc((size_t)nkw + 1, sizeof *kw);
  SrVal **kwv = sr_xcalloc((size_t)nkw + 1, sizeof *kwv);
  for (int i = 0; i < a->nkw; i++) {
    kw[i] = a->kw[i];
    kwv[i] = a->kwv[i];
  }
  for (int i = 0; i < b->nkw; i++) {
    kw[a->nkw + i] = b->kw[i];
    kwv[a->nkw + i] = b->kwv[i];
  }
  SrArgs ca = {n, v, nkw, kw, kwv, NULL};
  SrVal *r = sr_call(I, b->fn, &ca);
  free(v);
  free(kw);
  free(kwv);
  return r;
}

/* hash(x) as jaxlib's jax_jit.h takes it: an array has no hash (a
   ShapeDtypeStruct has: core.ShapeDtypeStruct.__hash__) */
static int check_hashable(SrInterp *I, SrVal *x) {
  SrBuf msg = SR_BUF_INIT;
  if (sr_is_obj(x, &sr_array_class) && sr_array_of(x)->kind != SR_AV_ABSTRACT) {
    sr_buf_printf(&msg, "TypeError: unhashable type: '%s'", sr_val_kind_name(x));
  } else {
    SrVal *h = sr_lookup_qualname("builtins.hash");
    SrArgs ha = {1, &x, 0, NULL, NULL, NULL};
    SrVal *r = h ? sr_call(I, h, &ha) : NULL;
    if (r) {
      sr_unref(r);
      return 0;
    }
    if (!I->exc || strcmp(sr_exc_type(I->exc), "TypeError") != 0) return -1;
    sr_buf_printf(&msg, "TypeError: %s", sr_exc_msg(I->exc));
    sr_exc_clear(I);
  }
  SrBuf s = SR_BUF_INIT;
  sr_to_str(I, &s, x);
  sr_raise(I, "ValueError",
           "Non-hashable static arguments are not supported. An error occurred while trying to hash an object of type "
           "<class '%s'>, %s. The error was:\n%s\n",
           sr_val_kind_name(x), sr_buf_str(&s), msg.p);
  sr_buf_free(&s);
  sr_buf_free(&msg);
  return -1;
}

/* pjit._infer_input_type: every leaf of a dynamic argument must be a JAX
   type; the error names the leaf by its path in the function's
   signature (api_util._non_static_arg_names: a parameter's name,
   the entries of *args or **kwargs, or args[i] and kwargs['k'] without one). */
static int check_dynamic_args(SrInterp *I, SrVal *fn, SrArgs *a, const uint8_t *st, const SrJitOpts *o) {
  SrFunction *uf = sr_as_function(sr_signature_target(I, fn));
  const SrParams *ps = uf ? uf->node->params : NULL;
  for (int i = 0; i < a->n + a->nkw; i++) {
    int kw = i >= a->n;
    if (!kw && st && st[i]) continue;
    if (kw && o && has_name(o->sa, o->nsa, a->kw[i - a->n])) continue;
    SrVal *v = kw ? a->kwv[i - a->n] : a->v[i];
    if (sr_pytree_check_depth(I, v) < 0) return -1;
    SrBuf path = SR_BUF_INIT;
    if (!kw) {
      int npos = ps ? ps->n - ps->nkwonly : 0;
      if (ps && i < npos) sr_buf_printf(&path, "%s", ps->names[i]);
      else if (ps && ps->star) sr_buf_printf(&path, "%s[%d]", ps->star, i - npos);
      else sr_buf_printf(&path, "args[%d]", i);
    } else {
      const char *k = a->kw[i - a->n];
      int named = 0;
      for (int q = ps ? ps->nposonly : 0; ps && q < ps->n; q++) named |= strcmp(ps->names[q], k) == 0;
      if (named) sr_buf_printf(&path, "%s", k);
      else sr_buf_printf(&path, "%s['%s']", ps && ps->kwstar ? ps->kwstar : "kwargs", k);
    }
    SrVal *leaf = NULL;
    if (sr_pytree_bad_leaf(I, v, &path, &leaf)) {
      SrBuf f = SR_BUF_INIT, ty = SR_BUF_INIT;
      sr_to_str(I, &f, fn);
      /* type(leaf): a class of the script is __main__'s; a dtype leaf is
         jnp.int32 and its kin, scalar types */
      SrVal *t = leaf->kind == SR_V_DTYPE ? NULL : sr_type_of(I, leaf);
      if (t) sr_to_repr(I, &ty, t);
      else sr_buf_puts(&ty, "<class 'jax._src.numpy.scalar_types._ScalarMeta'>");
      sr_unref(t);
      sr_raise(I, "TypeError",
               "Error interpreting argument to %s as an abstract array. The problematic value is of type %s "
               "and was passed to the function at path %s.\nThis typically means that a jit-wrapped function was "
               "called with a non-array argument, and this argument was not marked as static using the "
               "static_argnums or static_argnames parameters of jax.jit.",
               sr_buf_str(&f), sr_buf_str(&ty), sr_buf_str(&path));
      sr_buf_free(&f);
      sr_buf_free(&ty);
      sr_buf_free(&path);
      return -1;
    }
    /* a Python int past the default integer type's range */
    if (!I->jax->enable_x64) {
      SrVal *fl = sr_pytree_flatten(I, v);
      int nl = fl ? fl->seq.n : 0, bad = -1;
      for (int q = 0; q < nl && bad < 0; q++) {
        SrVal *x = fl->seq.items[q];
        if (x->kind == SR_V_INT && (x->i > INT32_MAX || x->i < INT32_MIN)) bad = q;
      }
      if (bad >= 0) {
        char **names = sr_xcalloc((size_t)nl + 1, sizeof *names);
        int k = 0;
        sr_pytree_leaf_paths(v, &path, names, &k);
        sr_raise(I, "OverflowError",
                 "An overflow was encountered while parsing an argument to a jitted computation, whose argument "
                 "path is %s. Got <class 'int'> with value %lld",
                 bad < k && names[bad] ? names[bad] : "unknown", (long long)fl->seq.items[bad]->i);
        for (int q = 0; q < k; q++) free(names[q]);
        free(names);
        sr_unref(fl);
        sr_buf_free(&path);
        return -1;
      }
      sr_unref(fl);
    }
    sr_buf_free(&path);
  }
  return 0;
}

int sr_jit_split(SrInterp *I, const SrJitOpts *o, SrVal *fn, const char *name, SrArgs *a, SrJitSplit *s) {
  memset(s, 0, sizeof *s);
  s->a = *a;
  s->a.self = NULL;
  if (!o || (!o->nsn && !o->nsa && !o->ndn && !o->nda)) {
    if (check_dynamic_args(I, fn, a, NULL, NULL) < 0) return -1;
    s->fn = sr_ref(fn);
    return 0;
  }
  /* _ensure_inbounds(allow_invalid=True): numbers past the arguments are
     ignored, negative ones count from the end */
  uint8_t *st = sr_xcalloc((size_t)a->n + 1, 1), *don = sr_xcalloc((size_t)a->n + (size_t)a->nkw + 1, 1);
  for (int pass = 0; pass < 2; pass++) {
    const int *nums = pass ? o->dn : o->sn;
    int nn = pass ? o->ndn : o->nsn;
    for (int k = 0; k < nn; k++) {
      int i = nums[k];
      if (i >= a->n) continue;
      if (i < -a->n) {
        sr_raise(I, "ValueError",
                 "Positional argument indices, e.g. for `static_argnums`, must have value greater than or equal to "
                 "-len(args) and less than len(args), but got value %d for len(args) == %d.",
                 i, a->n);
        free(st);
        free(don);
        return -1;
      }
      if (i < 0) i += a->n;
      if (pass) don[i] = 1;
      else st[i] = 1;
    }
  }
  if (check_dynamic_args(I, fn, a, st, o) < 0) {
    free(st);
    free(don);
    return -1;
  }
  Bound *b = sr_xcalloc(1, sizeof *b);
  b->fn = sr_ref(fn);
  b->n = a->n;
  b->pos = sr_xcalloc((size_t)a->n + 1, sizeof *b->pos);
  b->kw = sr_xcalloc((size_t)a->nkw + 1, sizeof *b->kw);
  b->kwv = sr_xcalloc((size_t)a->nkw + 1, sizeof *b->kwv);
  s->statics = sr_seq(NULL, SR_V_TUPLE, 0);
  s->a.v = sr_xcalloc((size_t)a->n + 1, sizeof *s->a.v);
  s->a.kw = sr_xcalloc((size_t)a->nkw + 1, sizeof *s->a.kw);
  s->a.kwv = sr_xcalloc((size_t)a->nkw + 1, sizeof *s->a.kwv);
  s->a.n = s->a.nkw = 0;
  s->owns = 1;
  s->donated = sr_xcalloc((size_t)a->n + (size_t)a->nkw + 1, 1);
  int any_don = 0, rc = 0;
  for (int i = 0; i < a->n && rc == 0; i++) {
    if (st[i]) {
      rc = check_hashable(I, a->v[i]);
      b->pos[i] = sr_ref(a->v[i]);
      sr_seq_push(NULL, s->statics, sr_ref(a->v[i]));
    } else {
      any_don |= s->donated[s->a.n] = don[i];
      s->a.v[s->a.n++] = a->v[i];
    }
  }
  int ndyn = s->a.n;
  for (int i = 0; i < a->nkw && rc == 0; i++) {
    if (has_name(o->sa, o->nsa, a->kw[i])) {
      rc = check_hashable(I, a->kwv[i]);
      b->kw[b->nkw] = a->kw[i];
      b->kwv[b->nkw++] = sr_ref(a->kwv[i]);
      sr_seq_push(NULL, s->statics, sr_str_cstr(NULL, a->kw[i]));
      sr_seq_push(NULL, s->statics, sr_ref(a->kwv[i]));
    } else {
      any_don |= s->donated[ndyn + s->a.nkw] = (uint8_t)has_name(o->da, o->nda, a->kw[i]);
      s->a.kw[s->a.nkw] = a->kw[i];
      s->a.kwv[s->a.nkw++] = a->kwv[i];
    }
  }
  free(don);
  if (!any_don) {
    free(s->donated);
    s->donated = NULL;
  }
  if (s->statics->seq.n == 0) {
    sr_unref(s->statics);
    s->statics = NULL;
    bound_free(b);
    s->fn = sr_ref(fn);
  } else {
    s->fn = sr_builtin_with(name, bound_call, b, bound_free);
    s->orig = sr_ref(fn);
  }
  if (s->orig && rc == 0) {
    uint8_t *skip = sr_xcalloc((size_t)a->n + (size_t)a->nkw + 1, 1);
    for (int i = 0; i < a->n; i++) skip[i] = st[i];
    for (int i = 0; i < a->nkw; i++) skip[a->n + i] = (uint8_t)has_name(o->sa, o->nsa, a->kw[i]);
    s->names = sr_debug_arg_names(I, fn, a, skip, &s->nnames);
    free(skip);
  }
  free(st);
  if (rc < 0) {
    sr_jit_split_free(s);
    return -1;
  }
  return 0;
}

void sr_jit_split_free(SrJitSplit *s) {
  sr_unref(s->fn);
  sr_unref(s->statics);
  if (s->owns) {
    free(s->a.v);
    free(s->a.kw);
    free(s->a.kwv);
  }
  free(s->donated);
  sr_unref(s->orig);
  if (s->names) sr_debug_arg_names_free(s->names, s->nnames);
  s->owns = 0;
  s->fn = s->statics = s->orig = NULL;
  s->donated = NULL;
  s->names = NULL;
}

void sr_jit_split_debug(const SrJitSplit *s) {
  if (s->orig) sr_trace_fn_debug(s->orig, s->names, s->nnames);
}

int sr_jit_statics_equal(SrInterp *I, const SrVal *a, const SrVal *b) {
  if (!a || !b) return !a && !b;
  if (a->seq.n != b->seq.n) return 0;
  for (int i = 0; i < a->seq.n; i++) {
    SrVal *x = a->seq.items[i], *y = b->seq.items[i];
    if (x->kind != y->kind || (x->kind == SR_V_OBJ && x->obj.cls != y->obj.cls)) return 0;
    if (x->kind == SR_V_OBJ && strcmp(sr_val_kind_name(x), sr_val_kind_name(y)) != 0) return 0;
    if (x == y) continue;
    /* the class's own __eq__ (a class instance's, a tuple's items'); an
       error there is jaxlib's CallSignature's ValueError */
    SrVal *r = sr_binop(I, SR_OP_EQ, x, y);
    int t = r ? sr_truthy(I, r) : -1;
    sr_unref(r);
    if (t < 0) {
      SrBuf m = SR_BUF_INIT, tx = SR_BUF_INIT, ty = SR_BUF_INIT;
      sr_buf_printf(&m, "%s: %s", I->exc ? sr_exc_type(I->exc) : "Exception", I->exc ? sr_exc_msg(I->exc) : "");
      sr_exc_clear(I);
      SrVal *tf = sr_lookup_qualname("builtins.type");
      SrVal *txv = tf ? sr_call1(I, tf, x) : NULL, *tyv = tf ? sr_call1(I, tf, y) : NULL;
      if (txv) sr_to_str(I, &tx, txv);
      if (tyv) sr_to_str(I, &ty, tyv);
      sr_unref(txv);
      sr_unref(tyv);
      sr_exc_clear(I);
      sr_raise(I, "ValueError",
               "static arguments should be comparable using __eq__.The following error was raised when comparing "
               "two objects of types %s and %s. The error was:\n%s",
               sr_buf_str(&tx), sr_buf_str(&ty), sr_buf_str(&m));
      sr_buf_free(&m);
      sr_buf_free(&tx);
      sr_buf_free(&ty);
      return -1;
    }
    if (!t) return 0;
  }
  return 1;
}

/* the array behind a leaf, to tell one buffer passed twice */
static const void *leaf_buffer(SrVal *v) {
  SrArrayObj *o = sr_array_of(v);
  return o && o->kind == SR_AV_CONCRETE ? (const void *)o->data : NULL;
}

int sr_jit_donation_check(SrInterp *I, SrVal **leaves, int n, int ncaptured, const uint8_t *don, int ndon,
                          const SrType *const *outs, int nout, uint8_t **usable) {
  *usable = NULL;
  int any = 0;
  for (int i = 0; i < ndon && i < n; i++) any |= don[i];
  if (!any) return 0;
  uint8_t *u = sr_xcalloc((size_t)n + 1, 1);
  const SrType **in = sr_xcalloc((size_t)n + 1, sizeof *in);
  int multi = 0;
  for (int i = 0; i < n; i++) {
    in[i] = sr_value_type(I, leaves[i]);
    SrArrayObj *o = sr_array_of(leaves[i]);
    if (o && o->kind == SR_AV_CONCRETE && o->data->ndev > 1) multi = 1;
  }
  /* strip_metadata: only the dtype and shape count */
  uint8_t *taken = sr_xcalloc((size_t)nout + 1, 1);
  for (int k = 0; k < nout; k++) {
    const SrType *t = outs[k];
    for (int i = 0; t && i < ndon && i < n; i++) {
      const SrType *s = in[i];
      if (!don[i] || u[i] || !s || s->dtype != t->dtype || s->ndim != t->ndim) continue;
      int same = 1;
      for (int d = 0; d < t->ndim && same; d++) same = s->dims[d].size == t->dims[d].size;
      if (!same) continue;
      u[i] = taken[k] = 1;
      break;
    }
  }
  /* then each donated input left takes a result left of its element count
     (whatever its shape): donated to XLA, it is deleted too */
  for (int i = 0; i < ndon && i < n; i++) {
    if (!don[i] || u[i] || !in[i]) continue;
    int64_t size = sr_type_numel(in[i]);
    for (int k = 0; k < nout; k++)
      if (!taken[k] && outs[k] && sr_type_numel(outs[k]) == size) {
        u[i] = taken[k] = 1;
        break;
      }
  }
  free(taken);
  /* PJRT's TestBufferDonationClashes over the flattened arguments */
  for (int i = ncaptured; i < n; i++) {
    const void *b = leaf_buffer(leaves[i]);
    for (int j = ncaptured; b && j < i; j++) {
      if (leaf_buffer(leaves[j]) != b || (!u[i] && !u[j])) continue;
      const char *what = u[i] && u[j] ? "Attempt to donate the same buffer twice in Execute() ("
                         : u[i]       ? "Attempt to donate a buffer which is also used by the same call to Execute() ("
                                      : "Attempt to use a buffer that was previously donated in the same call to "
                                        "Execute() (";
      const char *toy = u[i] && u[j] ? "f(donate(a), donate(a))" : u[i] ? "f(a, donate(a))" : "f(donate(a), a)";
      sr_raise(I, "JaxRuntimeError",
               "INVALID_ARGUMENT: %sflattened argument %d, replica 0, partition 0, first use: %d). Toy example for "
               "this bug: `%s`.",
               what, i - ncaptured, j - ncaptured, toy);
      free(u);
      free(in);
      return -1;
    }
  }
  if (!multi) {
    SrBuf b = SR_BUF_INIT;
    for (int i = 0; i < ndon && i < n; i++)
      if (don[i] && !u[i] && in[i]) {
        if (b.len) sr_buf_puts(&b, ", ");
        sr_type_long(&b, in[i]);
      }
    if (b.len)
      sr_warn(I, "UserWarning",
              "Some donated buffers were not usable: %s.\nSee an explanation at "
              "https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
              b.p);
    sr_buf_free(&b);
  }
  free(in);
  *usable = u;
  return 0;
}

void sr_jit_donation_finish(SrVal **leaves, int n, const uint8_t *usable) {
  for (int i = 0; usable && i < n; i++) {
    SrArrayObj *o = usable[i] ? sr_array_of(leaves[i]) : NULL;
    if (o && o->kind == SR_AV_CONCRETE) o->deleted = 1;
  }
}

uint8_t *sr_jit_donated_leaves(SrInterp *I, const SrJitSplit *s, int ncaptured, int *n) {
  *n = 0;
  if (!s->donated) return NULL;
  int cap = ncaptured + 16;
  uint8_t *d = sr_xcalloc((size_t)cap, 1);
  *n = ncaptured;
  /* the keyword arguments' leaves in sorted order, as the trace has them */
  int *ord = sr_xcalloc((size_t)s->a.nkw + 1, sizeof *ord);
  sr_kwargs_order(s->a.nkw, s->a.kw, ord);
  for (int i = 0; i < s->a.n + s->a.nkw; i++) {
    int j = i < s->a.n ? i : s->a.n + ord[i - s->a.n];
    SrVal *l = sr_pytree_flatten(I, j < s->a.n ? s->a.v[j] : s->a.kwv[j - s->a.n]);
    int m = l ? l->seq.n : 0;
    if (*n + m >= cap) d = sr_xrealloc(d, (size_t)(cap = 2 * (*n + m) + 1));
    memset(d + *n, s->donated[j], (size_t)m);
    *n += m;
    sr_unref(l);
  }
  free(ord);
  return d;
}

/* ---- x.delete(), x.is_deleted() (array.py) ---- */

static SrVal *m_delete(SrInterp *I, SrArgs *a) {
  (void)I;
  SrArrayObj *o = a->n ? sr_array_of(a->v[0]) : NULL;
  if (o && o->kind == SR_AV_CONCRETE) o->deleted = 1;
  return sr_none();
}

static SrVal *m_is_deleted(SrInterp *I, SrArgs *a) {
  (void)I;
  SrArrayObj *o = a->n ? sr_array_of(a->v[0]) : NULL;
  return sr_bool(o && o->deleted);
}

void sr_jit_options_init(void) {
  sr_introspect_init();
  sr_pe_dce_init();
  sr_def("jax.Array.method.delete", m_delete, "x.delete(): frees x's buffers; using x afterwards raises RuntimeError");
  sr_def("jax.Array.method.is_deleted", m_is_deleted, "x.is_deleted(): whether x was deleted or donated to a jit call");
}

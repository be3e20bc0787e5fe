/* ref.c: jax.ref -- mutable array references (jax/ref.py, core.py's
 * new_ref and freeze, state/primitives.py's ref_get, ref_set, ref_swap,
 * ref_addupdate, and the indexing of state/indexing.py's NDIndexer).
 *
 * A Ref is an array value whose type is a Ref type (lax/state.c says how
 * its buffers are kept).  Reading and writing it with r[idx] and
 * r[idx] = v goes through the array class's getitem and setitem, which
 * send a Ref here (array_methods.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"
#include "jax/jax.h"
#include "jax/ref.h"
#include "jax/vjp.h"
#include "jax/lax.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

static SrVal *ref_at(SrVal *self);

int sr_jax_is_ref(const SrVal *v) {
  const SrArrayObj *a = sr_array_of(v);
  return a && a->type->ref;
}

static SrVal *call_q(SrInterp *I, const char *qualname, int n, SrVal **args) {
  SrVal *fn = sr_lookup_qualname(qualname);
  if (!fn) return sr_raise(I, "NotImplementedError", "%s is not available", qualname);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  return sr_call(I, fn, &a);
}

static int is_ellipsis(const SrVal *v) {
  return v->kind == SR_V_WORD && v->str.n == 8 && memcmp(v->str.s, "Ellipsis", 8) == 0;
}

/* get_ref_and_transforms and NDIndexer.from_indices_shape: the indexer of
   idx over ref as lax/state.c's `tree` param (a new reference), with the
   index arrays appended to ops (new references, *nops counting them) at
   operand positions base, base + 1, ... */
static SrVal *ref_indexer(SrInterp *I, SrVal *ref, SrVal *idx, int base, SrVal **ops, int *nops, const char *fname) {
  *nops = 0;
  const SrType *rt = sr_value_type(I, ref);
  if (!rt || !rt->ref) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, ref);
    sr_raise(I, "ValueError", "Can only call `%s` on a `Ref`: %s.", fname, sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  if (!idx || idx->kind == SR_V_NONE || is_ellipsis(idx)) return sr_none();
  SrVal *one[1] = {idx};
  SrVal **items = idx->kind == SR_V_TUPLE ? idx->seq.items : one;
  int n = idx->kind == SR_V_TUPLE ? idx->seq.n : 1;
  if (n == 0) return sr_none();
  int nell = 0, at = -1;
  for (int i = 0; i < n; i++)
    if (is_ellipsis(items[i])) nell++, at = i;
  if (nell > 1) return sr_raise(I, "ValueError", "Only one ellipsis is supported.");
  int rank = rt->ndim, nfull = nell ? n - 1 : n;
  if (nfull > rank) {
    SrBuf b = SR_BUF_INIT;
    SrVal *s = sr_shape_tuple(rt);
    sr_buf_puts(&b, "`indices` must not be longer than `shape`: indices=");
    sr_to_repr(I, &b, idx->kind == SR_V_TUPLE ? idx : sr_tuple(NULL, 0, NULL));
    sr_buf_puts(&b, ", shape=");
    sr_to_repr(I, &b, s);
    sr_unref(s);
    sr_raise(I, "ValueError", "%s", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  /* the item for each dimension: NULL for slice(None) */
  SrVal *dimitem[SR_MAX_RANK];
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (i == at) {
      for (int j = 0; j < rank - nfull; j++) dimitem[k++] = NULL;
      continue;
    }
    dimitem[k++] = items[i];
  }
  while (k < rank) dimitem[k++] = NULL;
  SrVal *tree = sr_seq(NULL, SR_V_TUPLE, rank);
  int ok = 1;
  for (int d = 0; d < rank && ok; d++) {
    SrVal *it = dimitem[d];
    int64_t dim = rt->dims[d].size;
    if (!it || sr_is_obj(it, &sr_slice_class)) {
      int64_t start = 0, stop = dim, step = 1, count = dim;
      if (it && sr_slice_indices(I, it, dim, &start, &stop, &step, &count) < 0) {
        ok = 0;
        break;
      }
      if (step < 1) {
        sr_raise(I, "ValueError", "slice must have a step >= 1 (found: %lld)", (long long)step);
        ok = 0;
        break;
      }
      SrVal *tr[3] = {sr_int(NULL, start), sr_int(NULL, count), sr_int(NULL, step)};
      sr_seq_push(NULL, tree, sr_tuple(NULL, 3, tr));
      continue;
    }
    /* NDIndexer's validation of a static integer index */
    if (it->kind == SR_V_INT && it->i >= dim) {
      sr_raise(I, "ValueError", "Out of bound indexer: idx=%lld, dim=%lld.", (long long)it->i, (long long)dim);
      ok = 0;
      break;
    }
    SrVal *x = call_q(I, "jax.numpy.asarray", 1, &it);
    if (!x) {
      ok = 0;
      break;
    }
    ops[(*nops)++] = x;
    sr_seq_push(NULL, tree, sr_int(NULL, base + *nops - 1));
  }
  /* the index arrays broadcast to one shape */
  if (ok && *nops > 1) {
    const SrType *ts[SR_MAX_RANK];
    for (int i = 0; i < *nops; i++) ts[i] = sr_value_type(I, ops[i]);
    int same = 1;
    for (int i = 1; i < *nops && same; i++) same = ts[i]->ndim == ts[0]->ndim && !memcmp(ts[i]->dims, ts[0]->dims, ts[0]->ndim * sizeof *ts[0]->dims);
    if (!same) {
      SrVal *shapes[SR_MAX_RANK];
      for (int i = 0; i < *nops; i++) shapes[i] = sr_shape_tuple(ts[i]);
      SrVal *shape = call_q(I, "jax.numpy.broadcast_shapes", *nops, shapes);
      for (int i = 0; i < *nops; i++) sr_unref(shapes[i]);
      if (!shape) ok = 0;
      for (int i = 0; i < *nops && ok; i++) {
        SrVal *args[2] = {ops[i], shape};
        SrVal *y = call_q(I, "jax.numpy.broadcast_to", 2, args);
        if (!y) {
          ok = 0;
          break;
        }
        sr_unref(ops[i]);
        ops[i] = y;
      }
      sr_unref(shape);
    }
  }
  if (!ok) {
    sr_unref(tree);
    for (int i = 0; i < *nops; i++) sr_unref(ops[i]);
    *nops = 0;
    return NULL;
  }
  return tree;
}

static SrVal *bind_state(SrInterp *I, int prim, SrVal *ref, SrVal *val, SrVal *idx, const char *fname) {
  SrArrayObj *o = sr_array_of(ref);
  if (o && o->type->ref && o->kind == SR_AV_TRACER && o->deleted)
    return sr_raise(I, "ValueError", "%s: the Ref was freed (free_ref)", fname);
  SrVal *ops[SR_MAX_RANK + 2];
  int base = val ? 2 : 1, nops = 0;
  SrVal *tree = ref_indexer(I, ref, idx, base, ops + base, &nops, fname);
  if (!tree) return NULL;
  ops[0] = ref;
  if (val) ops[1] = val;
  static const char *tkey;
  if (!tkey) tkey = sr_intern_cstr("tree");
  SrParam p = {tkey, tree};
  SrVal *r = sr_bind(I, prim, base + nops, ops, 1, &p);
  for (int i = 0; i < nops; i++) sr_unref(ops[base + i]);
  sr_unref(tree);
  return r;
}

/* _maybe_implicit_cast: a weak float into a float Ref, an int into an
   int Ref, takes the Ref's dtype */
static SrVal *implicit_cast(SrInterp *I, SrDtype dt, SrVal *v) {
  const SrType *t = sr_value_type(I, v);
  if (!t || t->ref) return sr_ref(v);
  int fl = sr_dtype_is_float(dt) && sr_dtype_is_float(t->dtype);
  int in = sr_dtype_is_int(dt) && sr_dtype_is_int(t->dtype);
  if ((t->weak && fl) || in) return sr_lax_convert(I, v, dt, 0, NULL);
  return sr_ref(v);
}

SrVal *sr_jax_ref_get(SrInterp *I, SrVal *ref, SrVal *idx) {
  return bind_state(I, SR_P_get, ref, NULL, idx, "ref_get");
}

static SrVal *ref_swap(SrInterp *I, SrVal *ref, SrVal *idx, SrVal *v, const char *fname) {
  const SrType *rt = sr_value_type(I, ref);
  SrVal *c = rt && rt->ref ? implicit_cast(I, rt->dtype, v) : sr_ref(v);
  if (!c) return NULL;
  SrVal *r = bind_state(I, SR_P_swap, ref, c, idx, fname);
  sr_unref(c);
  return r;
}

int sr_jax_ref_set(SrInterp *I, SrVal *ref, SrVal *idx, SrVal *v) {
  SrVal *r = ref_swap(I, ref, idx, v, "ref_set");
  sr_unref(r);
  return r ? 0 : -1;
}

int sr_jax_ref_addupdate(SrInterp *I, SrVal *ref, SrVal *idx, SrVal *x) {
  SrVal *r = bind_state(I, SR_P_addupdate, ref, x, idx, "ref_addupdate");
  sr_unref(r);
  return r ? 0 : -1;
}

static SrVal *ref_addupdate(SrInterp *I, SrVal *ref, SrVal *idx, SrVal *x) {
  SrVal *r = bind_state(I, SR_P_addupdate, ref, x, idx, "ref_addupdate");
  if (!r) return NULL;
  sr_unref(r);
  return sr_none();
}

/* ---- the functions ---- */

static SrVal *bi_new_ref(SrInterp *I, SrArgs *a) {
  SrVal *p[4] = {0};
  if (sr_args_parse(I, a, "new_ref", "init_val, *, memory_space=, kind=, pin=", p) < 0) return NULL;
  if (p[1] && p[1]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "array ref with memory space only works inside of a `jit`.");
  if (p[3] && sr_val_truthy(p[3]))
    return sr_raise(I, "NotImplementedError", "pinned array ref only works inside of a `jit`.");
  static const char *k_kind, *k_mem, *k_pin;
  if (!k_kind) {
    k_kind = sr_intern_cstr("kind");
    k_mem = sr_intern_cstr("memory_space");
    k_pin = sr_intern_cstr("pin");
  }
  SrParam ps[3] = {{k_kind, p[2] ? p[2] : sr_none()}, {k_mem, sr_none()}, {k_pin, sr_bool(0)}};
  SrVal *x = p[0];
  if (sr_jax_is_ref(x)) return sr_raise(I, "ValueError", "Cannot store a Ref into another Ref.");
  SrVal *arr = sr_value_type(I, x) ? NULL : call_q(I, "jax.numpy.asarray", 1, &x);
  if (!sr_value_type(I, x) && !arr) return NULL;
  SrVal *r = sr_bind(I, SR_P_new_ref, 1, arr ? &arr : &x, 3, ps);
  sr_unref(arr);
  return r;
}

/* core.empty_ref(ty): a Ref of type ty with no value yet */
static SrVal *bi_empty_ref(SrInterp *I, SrArgs *a) {
  SrVal *p[3] = {0};
  if (sr_args_parse(I, a, "empty_ref", "ty, memory_space=, pin=", p) < 0) return NULL;
  const SrType *t = sr_value_type(I, p[0]);
  if (!t || t->ref) return sr_raise(I, "TypeError", "empty_ref: ty must be a ShapeDtypeStruct or an array type");
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, "ShapedArray(");
  sr_type_str(&b, sr_type_with_weak(t, 0), 0);
  sr_buf_putc(&b, ')');
  static const char *k_ty, *k_mem, *k_pin;
  if (!k_ty) {
    k_ty = sr_intern_cstr("ty");
    k_mem = sr_intern_cstr("memory_space");
    k_pin = sr_intern_cstr("pin");
  }
  SrVal *ty = sr_word(NULL, b.p, b.len);
  sr_buf_free(&b);
  SrParam ps[3] = {{k_mem, sr_none()}, {k_pin, sr_bool(0)}, {k_ty, ty}};
  SrVal *r = sr_bind(I, SR_P_empty_ref, 0, NULL, 3, ps);
  sr_unref(ty);
  return r;
}

/* core.free_ref(ref): the Ref may not be used again */
static SrVal *bi_free_ref(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "free_ref", "ref", p) < 0) return NULL;
  SrArrayObj *o = sr_array_of(p[0]);
  if (o && o->type->ref && o->kind == SR_AV_TRACER && o->deleted)
    return sr_raise(I, "ValueError", "free_ref: the Ref was freed already");
  SrVal *r = sr_bind(I, SR_P_free_ref, 1, p, 0, NULL);
  if (!r) return NULL;
  sr_unref(r);
  if (o && o->kind == SR_AV_TRACER) o->deleted = 1;
  return sr_tuple(NULL, 0, NULL);
}

static SrVal *bi_freeze(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "freeze", "ref", p) < 0) return NULL;
  return sr_bind(I, SR_P_freeze, 1, p, 0, NULL);
}

static SrVal *bi_get(SrInterp *I, SrArgs *a) {
  SrVal *p[2] = {0};
  if (sr_args_parse(I, a, "get", "ref, idx=", p) < 0) return NULL;
  return sr_jax_ref_get(I, p[0], p[1]);
}

static SrVal *bi_set(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "set", "ref, idx, value", p) < 0) return NULL;
  return sr_jax_ref_set(I, p[0], p[1], p[2]) < 0 ? NULL : sr_none();
}

static SrVal *bi_swap(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "swap", "ref, idx, value", p) < 0) return NULL;
  return ref_swap(I, p[0], p[1], p[2], "ref_swap");
}

static SrVal *bi_addupdate(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "addupdate", "ref, idx, x", p) < 0) return NULL;
  return ref_addupdate(I, p[0], p[1], p[2]);
}

/* Ref.addupdate(x, idx=()) */
static SrVal *bi_ref_addupdate_method(SrInterp *I, SrArgs *a) {
  SrVal *p[2] = {0};
  if (sr_args_parse(I, a, "addupdate", "x, idx=", p) < 0) return NULL;
  return ref_addupdate(I, a->self, p[1], p[0]);
}

/* jax.Ref: isinstance holds for Refs, tracers of Ref type included */
static void refclass_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<class 'jax._src.core.Ref'>");
}
static int refclass_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I, (void)self;
  return sr_jax_is_ref(x);
}
static const SrLangOps refclass_ops = {.instancecheck = refclass_instancecheck};
static const SrClass refclass_class = {"type", NULL, refclass_repr, NULL, &refclass_ops};

SrVal *sr_jax_ref_getattr(SrInterp *I, SrVal *ref, const char *name) {
  if (strcmp(name, "addupdate") == 0) return sr_bound_method(ref, "addupdate", bi_ref_addupdate_method);
  if (strcmp(name, "at") == 0) return ref_at(ref);
  (void)I;
  return NULL;
}

void sr_jax_ref_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.new_ref jax.ref.new_ref jax._src.core.new_ref jax.core.new_ref", bi_new_ref,
       "new_ref(init_val, *, memory_space=None, kind=None, pin=False): a mutable array reference holding a copy"},
      {"jax.freeze jax.ref.freeze jax._src.core.freeze jax.core.freeze", bi_freeze,
       "freeze(ref): the final value of a Ref, as an array"},
      {"jax.empty_ref jax.ref.empty_ref jax._src.core.empty_ref", bi_empty_ref,
       "empty_ref(ty): a Ref of type ty (a ShapeDtypeStruct or aval) to be written before it is read"},
      {"jax.free_ref jax.ref.free_ref jax._src.core.free_ref", bi_free_ref,
       "free_ref(ref): ends a Ref's life; using it afterwards is an error"},
      {"jax.ref.get", bi_get, "get(ref, idx=None): ref[idx], read from a Ref"},
      {"jax.ref.set", bi_set, "set(ref, idx, value): ref[idx] = value, in place"},
      {"jax.ref.swap", bi_swap, "swap(ref, idx, value): writes value at ref[idx], returning what was there"},
      {"jax.ref.addupdate", bi_addupdate, "addupdate(ref, idx, x): ref[idx] += x, in place"},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  sr_vjp_refs_init();
  sr_register("jax.Ref", sr_obj(&refclass_class, NULL));
  sr_register("jax.ref.Ref", sr_obj(&refclass_class, NULL));
  sr_register("jax._src.core.Ref", sr_obj(&refclass_class, NULL));
}

/* ---- the checks of jax_mutable_array_checks (api_util.py,
   partial_eval.py) ---- */

static const char *name_at(const char *const *names, int nn, int i) {
  return names && i >= 0 && i < nn && names[i] ? names[i] : "unknown";
}

/* dbg is "f at file:line traced for jit": its function part's length
   (up to " traced for ", else all of it), and what it was traced for */
static int dbg_fn_len(const char *dbg) {
  const char *t = strstr(dbg, " traced for ");
  return (int)(t ? t - dbg : (long)strlen(dbg));
}

static const char *dbg_traced_for(const char *dbg) {
  const char *sp = strrchr(dbg, ' ');
  return sp ? sp + 1 : "jit";
}

int sr_jax_check_ref_args(SrInterp *I, SrTrace *t, const char *dbg, SrVal *const *leaves, int n) {
  return sr_jax_check_ref_args_named(I, t ? t->arg_names : NULL, t ? t->narg_names : 0, dbg, leaves, n);
}

int sr_jax_check_closed_refs(SrInterp *I, SrTrace *t, const char *dbg, SrVal *const *leaves, int n) {
  return sr_jax_check_closed_refs_named(I, t->captured, t->ncaptured, t->arg_names, t->narg_names, dbg, leaves, n);
}

int sr_jax_check_ref_args_named(SrInterp *I, const char *const *names, int nn, const char *dbg, SrVal *const *leaves,
                                int n) {
  for (int i = 0; i < n; i++) {
    if (!sr_jax_is_ref(leaves[i])) continue;
    for (int k = 0; k < i; k++)
      if (leaves[k] == leaves[i]) {
        SrBuf b = SR_BUF_INIT;
        sr_type_str(&b, sr_array_of(leaves[i])->type, 0);
        sr_raise(I, "ValueError",
                 "only one reference to a mutable array may be passed as an argument to a function, but when "
                 "tracing %.*s for %s the mutable array reference of type %s appeared at both %s and %s.",
                 dbg_fn_len(dbg), dbg, dbg_traced_for(dbg), sr_buf_str(&b), name_at(names, nn, k),
                 name_at(names, nn, i));
        sr_buf_free(&b);
        return -1;
      }
  }
  return 0;
}

int sr_jax_check_closed_refs_named(SrInterp *I, SrVal *const *captured, int ncap, const char *const *names, int nn,
                                   const char *dbg, SrVal *const *leaves, int n) {
  for (int c = 0; c < ncap; c++) {
    if (!sr_jax_is_ref(captured[c])) continue;
    for (int i = 0; i < n; i++)
      if (leaves[i] == captured[c]) {
        SrBuf b = SR_BUF_INIT;
        sr_type_str(&b, sr_array_of(leaves[i])->type, 0);
        sr_raise(I, "ValueError",
                 "when tracing %.*s for %s, a mutable array reference of type %s was both closed over and passed "
                 "as the argument %s",
                 dbg_fn_len(dbg), dbg, dbg_traced_for(dbg), sr_buf_str(&b), name_at(names, nn, i));
        sr_buf_free(&b);
        return -1;
      }
  }
  return 0;
}

/* the error of a Ref returned as output i of n, of type ty, origin the
   line that says where it came from (or empty); frees origin */
static int raise_returned(SrInterp *I, const char *dbg, const SrType *ty, uint32_t i, uint32_t n, SrBuf *origin) {
  SrBuf b = SR_BUF_INIT;
  sr_type_str(&b, ty, 0);
  char loc[64] = "";
  if (n > 1) snprintf(loc, sizeof loc, " at output tree path result[%u]", i);
  sr_raise(I, "ValueError",
           "function %s returned a mutable array reference of type %s%s, but mutable array references cannot be "
           "returned.%s",
           dbg, sr_buf_str(&b), loc, sr_buf_str(origin));
  sr_buf_free(origin);
  sr_buf_free(&b);
  return -1;
}

int sr_jax_check_returned_refs(SrInterp *I, SrTrace *t, const char *dbg, SrVal *const *outs, int n) {
  for (int i = 0; i < n; i++) {
    SrArrayObj *a = sr_array_of(outs[i]);
    if (!a || !a->type->ref) continue;
    SrBuf origin = SR_BUF_INIT;
    if (a->kind == SR_AV_TRACER && a->trace == t) {
      for (uint32_t q = 0; q < t->jb.neqn && !origin.len; q++) {
        const SrEqn *e = &t->jb.eqns[q];
        for (uint32_t o = 0; o < e->nout; o++)
          if (e->out[o] == a->var)
            sr_buf_printf(&origin, "\n\nThe returned mutable array was created on line %s.", e->loc ? e->loc : "");
      }
      for (uint32_t k = 0; k < t->jb.nin && !origin.len; k++)
        if (t->jb.in[k] == a->var)
          sr_buf_printf(&origin, "\n\nThe returned mutable array was passed in as the argument %s.",
                        name_at(t->arg_names, t->narg_names, (int)k));
    }
    return raise_returned(I, dbg, a->type, (uint32_t)i, (uint32_t)n, &origin);
  }
  return 0;
}

int sr_jax_check_returned_refs_jaxpr(SrInterp *I, const char *dbg, const SrJaxpr *j) {
  for (uint32_t i = 0; i < j->nout; i++) {
    const SrVar *v = j->outvars[i];
    if (!v->type || !v->type->ref) continue;
    SrBuf origin = SR_BUF_INIT;
    for (uint32_t q = 0; q < j->neqn && !origin.len; q++)
      for (uint32_t o = 0; o < j->eqns[q].nout; o++)
        if (j->eqns[q].out[o] == v)
          sr_buf_printf(&origin, "\n\nThe returned mutable array was created on line %s.",
                        j->eqns[q].loc ? j->eqns[q].loc : "");
    return raise_returned(I, dbg, v->type, i, j->nout, &origin);
  }
  return 0;
}

/* ---- Ref.at[...]: views (state/types.py's TransformedRef, for
   indexers of static slices and integers) ----
 *
 * A view is its base Ref and, per dimension of the base, a static slice
 * (start, size, stride) or a static integer; reading and writing it
 * reads and writes the base at the composed indexer.  It is a pytree
 * node whose one child is the base, so it passes into jit, cond, scan
 * and remat bodies as the Ref it views. */

typedef struct View {
  SrVal *ref;
  int rank;
  uint8_t is_int[SR_MAX_RANK];
  int64_t start[SR_MAX_RANK], size[SR_MAX_RANK], stride[SR_MAX_RANK];
} View;

static void view_free(void *d) {
  View *v = d;
  sr_unref(v->ref);
  free(v);
}

static void view_repr(SrBuf *out, const SrVal *self) {
  const View *v = self->obj.data;
  sr_buf_puts(out, "TransformedRef(ref=");
  sr_val_repr(out, v->ref);
  sr_buf_puts(out, ", transforms=...)");
}

static const SrLangOps view_ops;
static const SrClass view_class = {"TransformedRef", view_free, view_repr, NULL, &view_ops};

static SrVal *view_new(const View *like, SrVal *ref) {
  View *v = malloc(sizeof *v);
  if (!v) abort();
  *v = *like;
  v->ref = sr_ref(ref);
  return sr_obj(&view_class, v);
}

/* the whole of ref as a view */
static void view_whole(View *v, SrVal *ref, const SrType *t) {
  memset(v, 0, sizeof *v);
  v->ref = ref;
  v->rank = t->ndim;
  for (int d = 0; d < t->ndim; d++) {
    v->size[d] = t->dims[d].size;
    v->stride[d] = 1;
  }
}

/* applies index key to the visible (sliced) dimensions of v, in place;
   0, or -1 with an exception */
static int view_apply(SrInterp *I, View *v, SrVal *key) {
  int vis[SR_MAX_RANK], nv = 0;
  for (int d = 0; d < v->rank; d++)
    if (!v->is_int[d]) vis[nv++] = d;
  if (!key || key->kind == SR_V_NONE || is_ellipsis(key)) return 0;
  SrVal *one[1] = {key};
  SrVal **items = key->kind == SR_V_TUPLE ? key->seq.items : one;
  int n = key->kind == SR_V_TUPLE ? key->seq.n : 1, at = -1;
  for (int i = 0; i < n; i++)
    if (is_ellipsis(items[i])) at = i;
  int nfull = at >= 0 ? n - 1 : n;
  if (nfull > nv) {
    sr_raise(I, "ValueError", "`indices` must not be longer than `shape`");
    return -1;
  }
  int j = 0;
  for (int i = 0; i < n; i++) {
    if (i == at) {
      j += nv - nfull;
      continue;
    }
    int d = vis[j++];
    SrVal *it = items[i];
    if (sr_is_obj(it, &sr_slice_class)) {
      int64_t s0, s1, st, cnt;
      if (sr_slice_indices(I, it, v->size[d], &s0, &s1, &st, &cnt) < 0) return -1;
      if (st < 1) {
        sr_raise(I, "ValueError", "slice must have a step >= 1 (found: %lld)", (long long)st);
        return -1;
      }
      v->start[d] += s0 * v->stride[d];
      v->stride[d] *= st;
      v->size[d] = cnt;
      continue;
    }
    int64_t k;
    if (it->kind != SR_V_INT && it->kind != SR_V_BOOL) {
      sr_raise(I, "NotImplementedError", "shardrepl's Ref views take static slices and integers");
      return -1;
    }
    k = it->i;
    if (k < 0) k += v->size[d];
    v->start[d] += k * v->stride[d];
    v->is_int[d] = 1;
  }
  return 0;
}

/* the indexer of v over its base as an index key of static slices and
   ints (a new reference) */
static SrVal *view_key(const View *v) {
  SrVal *key = sr_seq(NULL, SR_V_TUPLE, v->rank);
  for (int d = 0; d < v->rank; d++) {
    if (v->is_int[d]) {
      sr_seq_push(NULL, key, sr_int(NULL, v->start[d]));
      continue;
    }
    SrVal *stop = sr_int(NULL, v->start[d] + v->size[d] * v->stride[d]);
    sr_seq_push(NULL, key, sr_slice_new(sr_int(NULL, v->start[d]), stop, sr_int(NULL, v->stride[d])));
  }
  return key;
}

static SrVal *view_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  View v = *(View *)self->obj.data;
  if (view_apply(I, &v, key) < 0) return NULL;
  SrVal *k = view_key(&v);
  SrVal *r = sr_jax_ref_get(I, v.ref, k);
  sr_unref(k);
  return r;
}

static int view_setitem(SrInterp *I, SrVal *self, SrVal *key, SrVal *x) {
  View v = *(View *)self->obj.data;
  if (view_apply(I, &v, key) < 0) return -1;
  SrVal *k = view_key(&v);
  int rc = sr_jax_ref_set(I, v.ref, k, x);
  sr_unref(k);
  return rc;
}

static SrVal *view_shape(const View *v) {
  SrVal *s = sr_seq(NULL, SR_V_TUPLE, v->rank);
  for (int d = 0; d < v->rank; d++)
    if (!v->is_int[d]) sr_seq_push(NULL, s, sr_int(NULL, v->size[d]));
  return s;
}

static SrVal *bi_at_getitem(SrInterp *I, SrArgs *a);

static SrVal *view_getattr(SrInterp *I, SrVal *self, const char *name) {
  View *v = self->obj.data;
  if (strcmp(name, "shape") == 0) return view_shape(v);
  if (strcmp(name, "ndim") == 0 || strcmp(name, "size") == 0) {
    int64_t nd = 0, sz = 1;
    for (int d = 0; d < v->rank; d++)
      if (!v->is_int[d]) nd++, sz *= v->size[d];
    return sr_int(NULL, strcmp(name, "ndim") == 0 ? nd : sz);
  }
  if (strcmp(name, "dtype") == 0) return sr_dtype_val(NULL, sr_value_type(I, v->ref)->dtype);
  if (strcmp(name, "ref") == 0) return sr_ref(v->ref);
  if (strcmp(name, "at") == 0) return ref_at(self);
  (void)bi_at_getitem;
  return NULL;
}

static SrVal *view_children(SrVal *self) {
  View *v = self->obj.data;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 1);
  sr_seq_push(NULL, l, sr_ref(v->ref));
  return l;
}

static SrVal *view_rebuild(SrVal *self, SrVal *children) {
  return view_new(self->obj.data, children->seq.items[0]);
}

static const SrLangOps view_ops = {.getitem = view_getitem,
                                   .setitem = view_setitem,
                                   .getattr = view_getattr,
                                   .tree_children = view_children,
                                   .tree_rebuild = view_rebuild};

/* r.at and view.at: an object whose [idx] is the view of idx */
static SrVal *at_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  SrVal *base = self->obj.data;
  View v;
  if (sr_is_obj(base, &view_class)) {
    v = *(View *)base->obj.data;
  } else {
    const SrType *t = sr_value_type(I, base);
    view_whole(&v, base, t);
  }
  if (view_apply(I, &v, key) < 0) return NULL;
  return view_new(&v, v.ref);
}
static void at_free(void *d) { sr_unref(d); }
static void at_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "RefIndexer(...)");
}
static const SrLangOps at_ops = {.getitem = at_getitem};
static const SrClass at_class = {"RefIndexer", at_free, at_repr, NULL, &at_ops};

static SrVal *bi_at_getitem(SrInterp *I, SrArgs *a) {
  (void)I, (void)a;
  return sr_obj(&at_class, sr_ref(a->self));
}

static SrVal *ref_at(SrVal *self) { return sr_obj(&at_class, sr_ref(self)); }

/* vmap.c: jax.vmap (api.py's vmap and batching.py's entry), on the
 * batching engine of ad/batch.h.
 *
 * vmap(f)(*args) flattens the arguments, finds each leaf's mapped axis
 * from in_axes (a tree prefix of the arguments; keyword arguments are
 * mapped over their leading axis, as JAX maps them), traces f on one
 * example's types, and batches that jaxpr on the arguments themselves:
 * its equations bind into the current trace, or run where there is none.
 * The outputs' batch axes then go where out_axes puts them.
 */
#include <stdlib.h>
#include <string.h>

#include "ad/batch.h"
#include "jax/tracers.h"
#include "core/jaxstate.h"
#include "jax/api.h"
#include "jax/jax.h"
#include "jax/numpy.h"
#include "jax/ref.h"
#include "jax/vjp.h"
#include "jax/tree_util.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

typedef struct Vmap {
  SrVal *fun, *in_axes, *out_axes;
  const char *axis_name;  /* interned, or NULL */
  int64_t axis_size;      /* -1: from the arguments */
  const char *spmd[SR_MAX_DIM_AXES];
  int nspmd;
  int sum_match; /* an output batched where out_axes is None is summed */
} Vmap;

static void vmap_free(void *d) {
  Vmap *v = d;
  sr_unref(v->fun);
  sr_unref(v->in_axes);
  sr_unref(v->out_axes);
  free(v);
}

/* ---- axis specifications ---- */

static int is_axis_leaf(const SrVal *s) { return s->kind == SR_V_NONE || s->kind == SR_V_INT; }

/* Appends to out an axis (an int, or None) per leaf of v, reading spec as
   a tree prefix of v (api_util.flatten_axes).  -1 when it is not one. */
static int prefix_axes(SrInterp *I, SrVal *spec, SrVal *v, SrVal *out) {
  if (is_axis_leaf(spec)) {
    SrVal *l = sr_pytree_flatten(I, v);
    if (!l) return -1;
    for (int i = 0; i < l->seq.n; i++) sr_seq_push(NULL, out, sr_ref(spec));
    sr_unref(l);
    return 0;
  }
  SrVal *sc = sr_pytree_children(spec), *vc = sr_pytree_children(v);
  int ok = sc && vc && sc->seq.n == vc->seq.n && spec->kind == v->kind;
  if (ok && spec->kind == SR_V_DICT)
    for (int i = 0; i < spec->dict.n && ok; i++) {
      ok = 0;
      for (int k = 0; k < v->dict.n && !ok; k++) ok = sr_val_equal(spec->dict.keys[i], v->dict.keys[k]);
    }
  for (int i = 0; ok && i < sc->seq.n; i++) ok = prefix_axes(I, sc->seq.items[i], vc->seq.items[i], out) == 0;
  sr_unref(sc);
  sr_unref(vc);
  return ok ? 0 : -1;
}

/* Python's type() of a pytree node as JAX's errors print it; a leaf of
   the full tree is api_util's PytreeLeaf. */
static const char *node_type(const SrVal *v, int full) {
  switch (v->kind) {
  case SR_V_TUPLE: return "<class 'tuple'>";
  case SR_V_LIST: return "<class 'list'>";
  case SR_V_DICT: return "<class 'dict'>";
  case SR_V_NONE: return "<class 'NoneType'>";
  default: return full ? "<class 'jax._src.api_util.PytreeLeaf'>" : "<class 'object'>";
  }
}

/* The keys of a node's children, as str(key) prints each (' '-joined). */
static void child_keys(SrBuf *b, const SrVal *v, int n) {
  for (int i = 0; i < n; i++) {
    if (i) sr_buf_putc(b, ' ');
    if (v->kind == SR_V_DICT) {
      sr_buf_putc(b, '[');
      sr_val_repr(b, v->dict.keys[i]);
      sr_buf_putc(b, ']');
    } else {
      sr_buf_printf(b, "[%d]", i);
    }
  }
}

/* Sorted order of dict keys (strs, else by repr). */
static int key_less(const SrVal *a, const SrVal *b) {
  if (a->kind == SR_V_STR && b->kind == SR_V_STR) {
    size_t n = a->str.n < b->str.n ? a->str.n : b->str.n;
    int c = memcmp(a->str.s, b->str.s, n);
    return c < 0 || (c == 0 && a->str.n < b->str.n);
  }
  SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
  sr_val_repr(&x, a);
  sr_val_repr(&y, b);
  int r = strcmp(sr_buf_str(&x), sr_buf_str(&y)) < 0;
  sr_buf_free(&x);
  sr_buf_free(&y);
  return r;
}

/* tree_util._prefix_error: one message per place where prefix is not a
   tree prefix of full (path is the key path so far, name the prefix's
   name); appended to det, "\n  " between them. */
static void prefix_errors(SrBuf *det, int *count, const char *name, SrBuf *path, SrVal *prefix, SrVal *full) {
  if (is_axis_leaf(prefix) || !(prefix->kind == SR_V_TUPLE || prefix->kind == SR_V_LIST || prefix->kind == SR_V_DICT))
    return;
  SrVal *fc = sr_pytree_children(full);
  SrBuf m = SR_BUF_INIT;
  const char *ps = sr_buf_str(path);
  if (prefix->kind != full->kind || !fc) {
    sr_buf_printf(&m,
                  "pytree structure error: different types at key path\n    %s%s\nAt that key path, the prefix pytree "
                  "%s has a subtree of type\n    %s\nbut at the same key path the full pytree has a subtree of "
                  "different type\n    %s.",
                  name, ps, name, node_type(prefix, 0), node_type(full, fc == NULL));
  } else if (prefix->kind != SR_V_DICT && prefix->seq.n != full->seq.n) {
    const char *ty = prefix->kind == SR_V_TUPLE ? "tuple" : "list";
    sr_buf_printf(&m,
                  "pytree structure error: different lengths of %s at key path\n    %s%s\nAt that key path, the prefix "
                  "pytree %s has a subtree of type %s of length %d, but the full pytree has a subtree of the same "
                  "type but of length %d.",
                  ty, name, ps, name, ty, prefix->seq.n, full->seq.n);
  } else if (prefix->kind == SR_V_DICT) {
    int same = prefix->dict.n == full->dict.n;
    for (int i = 0; same && i < prefix->dict.n; i++) {
      same = 0;
      for (int k = 0; k < full->dict.n && !same; k++) same = sr_val_equal(prefix->dict.keys[i], full->dict.keys[k]);
    }
    if (!same) {
      sr_buf_printf(&m,
                    "pytree structure error: different numbers of pytree children at key path\n    %s%s\nAt that key "
                    "path, the prefix pytree %s has a subtree of type\n    <class 'dict'>\nwith %d child keys\n    ",
                    name, ps, name, prefix->dict.n);
      child_keys(&m, prefix, prefix->dict.n);
      sr_buf_printf(&m,
                    "\nbut at the same key path the full pytree has a subtree of the same type but with %d child "
                    "keys\n    ",
                    full->dict.n);
      child_keys(&m, full, full->dict.n);
      sr_buf_puts(&m, "\nso the symmetric difference on key sets is\n    ");
      int first = 1;
      for (int pass = 0; pass < 2; pass++) {
        const SrVal *x = pass ? full : prefix, *y = pass ? prefix : full;
        for (int i = 0; i < x->dict.n; i++) {
          int in = 0;
          for (int k = 0; k < y->dict.n && !in; k++) in = sr_val_equal(x->dict.keys[i], y->dict.keys[k]);
          if (in) continue;
          sr_buf_puts(&m, first ? "[" : " [");
          sr_val_repr(&m, x->dict.keys[i]);
          sr_buf_putc(&m, ']');
          first = 0;
        }
      }
    }
  }
  if (m.len) {
    if ((*count)++) sr_buf_puts(det, "\n  ");
    sr_buf_puts(det, sr_buf_str(&m));
    sr_buf_free(&m);
    sr_unref(fc);
    return;
  }
  sr_buf_free(&m);
  /* the roots agree: look in the children (a dict's by sorted key) */
  SrVal *pc = sr_pytree_children(prefix);
  size_t len = path->len;
  for (int i = 0; i < pc->seq.n && i < fc->seq.n; i++) {
    if (prefix->kind == SR_V_DICT) {
      /* sr_pytree_children gives a dict's values in sorted key order:
         the i-th smallest key */
      SrVal *key = NULL;
      for (int k = 0; k < prefix->dict.n && !key; k++) {
        int rank = 0;
        for (int q = 0; q < prefix->dict.n; q++) rank += key_less(prefix->dict.keys[q], prefix->dict.keys[k]);
        if (rank == i) key = prefix->dict.keys[k];
      }
      sr_buf_putc(path, '[');
      if (key) sr_val_repr(path, key);
      sr_buf_putc(path, ']');
    } else {
      sr_buf_printf(path, "[%d]", i);
    }
    prefix_errors(det, count, name, path, pc->seq.items[i], fc->seq.items[i]);
    path->len = len;
    path->p[len] = 0;
  }
  sr_unref(pc);
  sr_unref(fc);
}

/* api_util.flatten_axes's error: spec is not a tree prefix of tree. */
static SrVal *not_prefix(SrInterp *I, const char *what, SrVal *spec, SrVal *tree) {
  SrBuf det = SR_BUF_INIT, path = SR_BUF_INIT;
  int count = 0;
  sr_buf_puts(&path, "");
  prefix_errors(&det, &count, what, &path, spec, tree);
  if (count)
    sr_raise(I, "ValueError",
             "%s specification must be a tree prefix of the corresponding value; \n  Mismatch details (%d found):\n  "
             "%s",
             what, count, sr_buf_str(&det));
  else
    sr_raise(I, "ValueError", "%s specification must be a tree prefix of the corresponding value", what);
  sr_buf_free(&det);
  sr_buf_free(&path);
  return NULL;
}

int sr_tree_prefix_check(SrInterp *I, const char *what, SrVal *spec, SrVal *tree) {
  SrBuf det = SR_BUF_INIT, path = SR_BUF_INIT;
  int count = 0;
  sr_buf_puts(&path, "");
  prefix_errors(&det, &count, what, &path, spec, tree);
  sr_buf_free(&path);
  if (count) not_prefix(I, what, spec, tree);
  sr_buf_free(&det);
  return count ? -1 : 0;
}

/* Are all leaves of an axis specification ints or None? */
static int axes_ok(SrInterp *I, SrVal *spec) {
  if (is_axis_leaf(spec)) return 1;
  SrVal *l = sr_pytree_flatten(I, spec);
  if (!l) return 0;
  int ok = 1;
  for (int i = 0; i < l->seq.n && ok; i++) ok = l->seq.items[i]->kind == SR_V_INT;
  sr_unref(l);
  return ok;
}

/* ---- the mapped size ---- */

/* inspect.signature's parameters: the positional ones, *args, the
   keyword-only ones, **kwargs */
static int sig_count(const SrParams *ps) { return ps->n + !!ps->star + !!ps->kwstar; }

static const char *sig_name(const SrParams *ps, int i) {
  int npos = ps->n - ps->nkwonly;
  if (i < npos) return ps->names[i];
  if (ps->star && i == npos) return ps->star;
  i -= !!ps->star;
  if (i < ps->n) return ps->names[i];
  return ps->kwstar;
}

/* How _mapped_axis_size names each leaf: "argument x['w'] of type
   float32[3,4]" by the function's parameters (inspect.signature(fn).bind),
   args[i]... past them or for a built-in, kwargs['k'] for keywords. */
static void leaf_names(SrInterp *I, SrVal *fun, SrArgs *a, SrVal *leaves, char **names) {
  SrFunction *fn = sr_as_function(sr_signature_target(I, fun));
  const SrParams *ps = fn && fn->node ? fn->node->params : NULL;
  int k = 0;
  for (int i = 0; i < a->n + a->nkw; i++) {
    SrVal *v = i < a->n ? a->v[i] : a->kwv[i - a->n];
    SrBuf p = SR_BUF_INIT;
    if (i >= a->n) sr_buf_printf(&p, "kwargs['%s']", a->kw[i - a->n]);
    else if (ps && i < ps->n - ps->nkwonly) sr_buf_printf(&p, "argument %s", ps->names[i]);
    /* signature.parameters in order: *args, the keyword-only ones and
       **kwargs come after the positional ones, and a position past the
       positional ones names the parameter at that index all the same */
    else if (ps && i < sig_count(ps)) sr_buf_printf(&p, "argument %s", sig_name(ps, i));
    else sr_buf_printf(&p, "args[%d]", i);
    sr_pytree_leaf_paths(v, &p, names, &k);
    sr_buf_free(&p);
  }
  for (int i = 0; i < k && i < leaves->seq.n; i++) {
    const SrType *t = sr_value_type(I, leaves->seq.items[i]);
    SrBuf b = SR_BUF_INIT;
    sr_buf_printf(&b, "%s of type ", names[i]);
    if (t) sr_type_str(&b, t, 0);
    else sr_buf_puts(&b, "unknown");
    free(names[i]);
    names[i] = strdup(sr_buf_str(&b));
    sr_buf_free(&b);
  }
}

/* _mapped_axis_size: the one size of the mapped axes, or an error in
   JAX's words naming the arguments that disagree. */
static int mapped_size(SrInterp *I, Vmap *vm, SrArgs *a, SrVal *leaves, const int64_t *ax, int64_t *size) {
  int n = leaves->seq.n, nmapped = 0;
  int64_t *sz = sr_xcalloc((size_t)n + 1, sizeof *sz);
  for (int i = 0; i < n; i++) {
    if (ax[i] == INT64_MIN) continue;
    const SrType *t = sr_value_type(I, leaves->seq.items[i]);
    int nd = t ? t->ndim : 0;
    if (ax[i] < -nd || ax[i] >= nd) {
      SrBuf s = SR_BUF_INIT;
      sr_shape_str(&s, t);
      /* unsigned: axis=2**63-1 asks for a rank past int64's range */
      unsigned long long min_rank = ax[i] >= 0 ? (unsigned long long)ax[i] + 1 : 0ULL - (unsigned long long)ax[i];
      sr_raise(I, "ValueError",
               "vmap was requested to map its argument along axis %lld, which implies that its rank should be at "
               "least %llu, but is only %d (its shape is %s)",
               (long long)ax[i], min_rank, nd, sr_buf_str(&s));
      sr_buf_free(&s);
      free(sz);
      return -1;
    }
    sz[i] = t->dims[ax[i] < 0 ? ax[i] + nd : ax[i]].size;
    nmapped++;
  }
  if (!nmapped || (vm->axis_size >= 0 && !n)) {
    free(sz);
    if (vm->axis_size >= 0) return *size = vm->axis_size, 0;
    if (!n) {
      SrBuf s = SR_BUF_INIT, k = SR_BUF_INIT;
      SrVal *args = sr_tuple(NULL, 0, NULL);
      for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
      sr_val_repr(&s, args);
      sr_buf_putc(&k, '{');
      for (int i = 0; i < a->nkw; i++) {
        sr_buf_printf(&k, i ? ", '%s': " : "'%s': ", a->kw[i]);
        sr_val_repr(&k, a->kwv[i]);
      }
      sr_buf_putc(&k, '}');
      sr_raise(I, "ValueError",
               "vmap wrapped function must be passed at least one argument containing an array or axis_size must be "
               "specified, got empty "
               "*args=%s and **kwargs=%s",
               sr_buf_str(&s), sr_buf_str(&k));
      sr_unref(args);
      sr_buf_free(&s);
      sr_buf_free(&k);
      return -1;
    }
    return sr_raise(I, "ValueError", "vmap must have at least one non-None value in in_axes or axis_size must be specified"),
           -1;
  }
  /* the distinct sizes, most common first (Counter.most_common keeps
     first-seen order among equal counts) */
  int64_t dsz[64];
  int dct[64], dfirst[64], nd = 0;
  for (int i = 0; i < n; i++) {
    if (ax[i] == INT64_MIN) continue;
    int k = 0;
    while (k < nd && dsz[k] != sz[i]) k++;
    if (k == nd && nd < 64) {
      dsz[nd] = sz[i];
      dct[nd] = 0;
      dfirst[nd++] = i;
    }
    if (k < 64) dct[k]++;
  }
  if (nd == 1 && (vm->axis_size < 0 || vm->axis_size == dsz[0])) {
    *size = dsz[0];
    free(sz);
    return 0;
  }
  for (int x = 1; x < nd; x++)
    for (int y = x; y > 0 && dct[y] > dct[y - 1]; y--) {
      int64_t ts = dsz[y];
      dsz[y] = dsz[y - 1];
      dsz[y - 1] = ts;
      int tc = dct[y];
      dct[y] = dct[y - 1];
      dct[y - 1] = tc;
      int tf = dfirst[y];
      dfirst[y] = dfirst[y - 1];
      dfirst[y - 1] = tf;
    }
  char **names = sr_xcalloc((size_t)n + 1, sizeof *names);
  leaf_names(I, vm->fun, a, leaves, names);
  SrBuf m = SR_BUF_INIT;
  sr_buf_puts(&m, "vmap got inconsistent sizes for array axes to be mapped:\n");
  if (vm->axis_size >= 0) sr_buf_printf(&m, "  * the `axis_size` argument was %lld;\n", (long long)vm->axis_size);
  for (int k = 0; k < nd; k++) {
    int i = dfirst[k];
    if (k) sr_buf_puts(&m, ";\n");
    if (dct[k] == 1)
      sr_buf_printf(&m, "  * one axis had size %lld: axis %lld of %s", (long long)dsz[k], (long long)ax[i],
                    names[i] ? names[i] : "?");
    else
      sr_buf_printf(&m, "  * %s axes (%d of them) had size %lld, e.g. axis %lld of %s", k ? "some" : "most", dct[k],
                    (long long)dsz[k], (long long)ax[i], names[i] ? names[i] : "?");
  }
  sr_raise(I, "ValueError", "%s", sr_buf_str(&m));
  sr_buf_free(&m);
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  free(sz);
  return -1;
}

/* ---- sharded batch axes ---- */

/* repr of a tuple of axis names: ('i',), ('i', 'j') */
static void names_repr(SrBuf *b, const char *const *n, int k) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < k; i++) sr_buf_printf(b, i ? ", '%s'" : "'%s'", n[i]);
  sr_buf_puts(b, k == 1 ? ",)" : ")");
}

/* A spec entry as str() shows it: None, X, ('X', 'Y') */
static void entry_str(SrBuf *b, const SrType *t, int d) {
  const SrDim *dd = &t->dims[d];
  if (!dd->nax || !t->mesh) {
    sr_buf_puts(b, "None");
  } else if (dd->nax == 1) {
    sr_buf_puts(b, t->mesh->names[dd->ax[0]]);
  } else {
    const char *n[SR_MAX_DIM_AXES];
    for (int k = 0; k < dd->nax; k++) n[k] = t->mesh->names[dd->ax[k]];
    names_repr(b, n, dd->nax);
  }
}

/* api.py: _mapped_axis_spec, _check_ema_unmapped_args and vmap_f's check
   of spmd_axis_name against them.  The mesh axes the mapped dims of the
   arguments are sharded over (the same for all of them) are the batch
   axis' (AxisData.explicit_mesh_axis, where they are Explicit): they go to
   b->spmd, as spmd_axis_name's do, so that what the batching broadcasts or
   makes is sharded there too. */
static int explicit_mesh_axis(SrInterp *I, Vmap *vm, SrVal *leaves, const int *in_bd, SrBatch *b) {
  int nl = leaves->seq.n, first = -1;
  const SrType *ft = NULL;
  for (int i = 0; i < nl; i++) {
    if (in_bd[i] == SR_NOT_MAPPED) continue;
    const SrType *t = sr_value_type(I, leaves->seq.items[i]);
    if (first < 0) {
      first = i;
      ft = t;
      continue;
    }
    const SrDim *a = &ft->dims[in_bd[first]], *c = &t->dims[in_bd[i]];
    int same = a->nax == c->nax;
    for (int k = 0; same && k < a->nax; k++) same = ft->mesh->names[a->ax[k]] == t->mesh->names[c->ax[k]];
    if (!same) {
      SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
      entry_str(&x, ft, in_bd[first]);
      entry_str(&y, t, in_bd[i]);
      sr_raise(I, "ValueError",
               "Mapped away dimension of inputs passed to vmap should be sharded the same. Got inconsistent axis "
               "specs: %s vs %s",
               sr_buf_str(&x), sr_buf_str(&y));
      sr_buf_free(&x);
      sr_buf_free(&y);
      return -1;
    }
  }
  const char *ema[SR_MAX_DIM_AXES];
  int nema = 0;
  if (ft) {
    const SrDim *a = &ft->dims[in_bd[first]];
    for (int k = 0; k < a->nax; k++) ema[nema++] = ft->mesh->names[a->ax[k]];
  }
  if (!nema) return 0;
  for (int i = 0; i < nl; i++) {
    if (in_bd[i] != SR_NOT_MAPPED) continue;
    const SrType *t = sr_value_type(I, leaves->seq.items[i]);
    SrAxes on = t && t->mesh ? sr_type_sharded_axes(t) : 0;
    int hit = 0;
    for (int k = 0; k < nema && on; k++) {
      int ax = sr_mesh_axis(t->mesh, ema[k]);
      hit |= ax >= 0 && (on >> ax & 1);
    }
    if (hit) {
      SrBuf e = SR_BUF_INIT;
      names_repr(&e, ema, nema);
      sr_raise(I, "ValueError",
               "Unmapped values passed to vmap cannot be sharded along the mesh axis you are vmapping over. Got "
               "type: %s, in_axes: None and vmapped mesh axis: %s",
               sr_type_short(t), sr_buf_str(&e));
      sr_buf_free(&e);
      return -1;
    }
  }
  /* explicit_mesh_axis is None unless the axes are Explicit in context */
  const SrMesh *cm = sr_jax_abstract_mesh(I->jax);
  for (int k = 0; k < nema; k++) {
    int ax = sr_mesh_axis(cm, ema[k]);
    if (ax >= 0 && cm->types[ax] != SR_AXIS_EXPLICIT) return 0;
  }
  if (vm->nspmd) {
    /* jax_remove_size_one_mesh_axis_from_type: spmd_axis_name without the
       context mesh's axes of size 1 */
    const char *spmd[SR_MAX_DIM_AXES];
    int nspmd = 0;
    for (int k = 0; k < vm->nspmd && nspmd < SR_MAX_DIM_AXES; k++) {
      int ax = sr_mesh_axis(cm, vm->spmd[k]);
      if (sr_type_remove_size_one() && ax >= 0 && cm->sizes[ax] == 1) continue;
      spmd[nspmd++] = vm->spmd[k];
    }
    int same = nspmd == nema;
    for (int k = 0; same && k < nema; k++) same = spmd[k] == ema[k];
    if (!same) {
      SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
      names_repr(&x, spmd, nspmd);
      names_repr(&y, ema, nema);
      sr_raise(I, "ValueError",
               "Only one of spmd_axis_name or arrays sharded on `Explicit` mesh axis type is allowed. Got "
               "spmd_axis_name=%s and arrays sharded on explicit_mesh_axis=%s",
               sr_buf_str(&x), sr_buf_str(&y));
      sr_buf_free(&x);
      sr_buf_free(&y);
      return -1;
    }
  }
  b->nspmd = nema;
  b->spmd_explicit = 1;
  memcpy(b->spmd, ema, (size_t)nema * sizeof *ema);
  return 0;
}

/* ---- calling a vmapped function ---- */

/* fun called with its keyword arguments passed positionally after the
   others (so that tracing makes them inputs too). */
typedef struct KwCall {
  SrVal *fun;
  int nargs, nkw;
  const char **kw;
} KwCall;

static SrVal *kw_call(SrInterp *I, SrArgs *a) {
  KwCall *k = sr_current_builtin(I)->data;
  SrArgs ca = {k->nargs, a->v, k->nkw, k->kw, a->v + k->nargs, NULL};
  return sr_call(I, k->fun, &ca);
}

/* fun with the unmapped arguments that are not JAX values (a function, a
   string: batching passes them through untouched) put back at their
   positions, where the trace got None for them. */
typedef struct Passthrough {
  SrVal *fun, *vals; /* vals: one per position, NULL where the call's own */
} Passthrough;

static void passthrough_free(void *d) {
  Passthrough *p = d;
  sr_unref(p->fun);
  sr_unref(p->vals);
  free(p);
}

static SrVal *passthrough_call(SrInterp *I, SrArgs *a) {
  Passthrough *p = sr_current_builtin(I)->data;
  SrVal **v = sr_xcalloc((size_t)a->n + 1, sizeof *v);
  for (int i = 0; i < a->n; i++) {
    SrVal *h = i < p->vals->seq.n ? p->vals->seq.items[i] : NULL;
    v[i] = h && h->kind != SR_V_NONE ? h : a->v[i];
  }
  SrArgs ca = {a->n, v, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = sr_call(I, p->fun, &ca);
  free(v);
  return r;
}

/* The note vmap_f adds when a tuple in_axes meets keyword arguments. */
static const char *kw_note(SrArgs *a) {
  static SrBuf b;
  b.len = 0;
  sr_buf_puts(&b, " Note that the function was called with keyword arguments [");
  for (int i = 0; i < a->nkw; i++) sr_buf_printf(&b, i ? ", '%s'" : "'%s'", a->kw[i]);
  sr_buf_puts(&b, "], which the entries of a tuple in_axes never correspond to: keyword arguments are always "
                  "mapped along their leading axis (axis 0). If that is the intended mapping, make in_axes "
                  "correspond to the positional arguments only; otherwise pass the arguments positionally, or "
                  "bind unmapped keyword arguments with functools.partial before applying vmap.");
  return sr_buf_str(&b);
}

static SrVal *vmap_call(SrInterp *I, SrArgs *a) {
  Vmap *vm = sr_current_builtin(I)->data;
  int na = a->n + a->nkw;
  SrVal *all = sr_tuple(NULL, 0, NULL); /* the arguments, keywords last */
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, all, sr_ref(a->v[i]));
  for (int i = 0; i < a->nkw; i++) sr_seq_push(NULL, all, sr_ref(a->kwv[i]));
  SrVal *result = NULL, *axes = sr_seq(NULL, SR_V_LIST, 0), *leaves = NULL, *fun = NULL, **av = NULL;
  SrVal **ex = sr_xcalloc((size_t)na + 1, sizeof *ex);
  int64_t *ax = NULL;
  SrJaxpr *j = NULL;
  SrVal *out_tree = NULL, *captured = NULL;
  SrVal **in = NULL, **out = NULL;
  int *in_bd = NULL, *out_bd = NULL;
  int nvmap = I->jax->nvmap, nspmd_names = I->jax->nspmd_names, nexplicit = I->jax->nexplicit_names;
  SrBatch ema;
  memset(&ema, 0, sizeof ema);
  /* the axes, one per leaf */
  SrVal *spec = vm->in_axes;
  if (spec->kind == SR_V_TUPLE && spec->seq.n != a->n) {
    sr_raise(I, "ValueError",
             "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional arguments "
             "passed to the function, but got len(in_axes)=%d, len(args)=%d.%s",
             spec->seq.n, a->n, a->nkw ? kw_note(a) : "");
    goto done;
  }
  /* an unmapped argument (in_axes None) holding what is not a JAX value
     passes through: the trace sees None in its place */
  SrVal *held = NULL;
  fun = sr_ref(vm->fun);
  av = sr_xcalloc((size_t)a->n + 1, sizeof *av);
  for (int i = 0; i < a->n; i++) {
    av[i] = a->v[i];
    SrVal *s = spec->kind == SR_V_TUPLE ? spec->seq.items[i] : spec, *bad = NULL;
    SrBuf path = SR_BUF_INIT;
    int nonjax = s->kind == SR_V_NONE && sr_pytree_check_depth(I, a->v[i]) == 0 &&
                 sr_pytree_bad_leaf(I, a->v[i], &path, &bad);
    sr_buf_free(&path);
    if (I->exc) goto done;
    if (!nonjax) continue;
    if (!held) {
      held = sr_tuple(NULL, 0, NULL);
      for (int k = 0; k < a->n; k++) sr_seq_push(NULL, held, sr_none());
    }
    sr_unref(held->seq.items[i]);
    held->seq.items[i] = sr_ref(a->v[i]);
    sr_unref(all->seq.items[i]);
    all->seq.items[i] = sr_none();
    av[i] = all->seq.items[i];
  }
  if (held) {
    Passthrough *p = sr_xcalloc(1, sizeof *p);
    p->fun = fun;
    p->vals = held;
    fun = sr_builtin_with(sr_callable_name(vm->fun), passthrough_call, p, passthrough_free);
  }
  for (int i = 0; i < na; i++) {
    SrVal *s = i >= a->n ? NULL : spec->kind == SR_V_TUPLE ? spec->seq.items[i] : spec;
    SrVal *zero = s ? NULL : sr_int(NULL, 0);
    int rc = prefix_axes(I, s ? s : zero, all->seq.items[i], axes);
    sr_unref(zero);
    if (rc < 0) {
      if (I->exc) goto done;
      /* kws=True: the error is about the positional arguments only */
      SrVal *args = sr_tuple(NULL, 0, NULL);
      for (int k = 0; k < a->n; k++) sr_seq_push(NULL, args, sr_ref(a->v[k]));
      not_prefix(I, "vmap in_axes", spec, args);
      sr_unref(args);
      goto done;
    }
  }
  SrArgs a_view = *a;
  a_view.v = av;
  leaves = sr_pytree_flatten(I, all);
  if (!leaves) goto done;
  /* check_no_aliased_ref_args */
  int aliased = 0;
  for (int i = 0; i < leaves->seq.n && !aliased; i++)
    for (int k = 0; k < i && !aliased && sr_jax_is_ref(leaves->seq.items[i]); k++)
      aliased = leaves->seq.items[k] == leaves->seq.items[i];
  if (aliased) {
    int nn = 0;
    char **nm = sr_debug_arg_names(I, vm->fun, a, NULL, &nn);
    if (!nm) sr_exc_clear(I);
    SrBuf dbg = SR_BUF_INIT;
    sr_buf_printf(&dbg, "%s traced for vmap", sr_vjp_fun_info(vm->fun));
    int bad = sr_jax_check_ref_args_named(I, (const char *const *)nm, nn, sr_buf_str(&dbg), leaves->seq.items,
                                          leaves->seq.n) < 0;
    sr_buf_free(&dbg);
    if (nm) sr_debug_arg_names_free(nm, nn);
    if (bad) goto done;
  }
  int nl = leaves->seq.n;
  ax = sr_xcalloc((size_t)nl + 1, sizeof *ax);
  for (int i = 0; i < nl; i++) {
    SrVal *s = axes->seq.items[i];
    ax[i] = s->kind == SR_V_NONE ? INT64_MIN : s->i;
  }
  int64_t size;
  if (mapped_size(I, vm, &a_view, leaves, ax, &size) < 0) goto done;
  /* the axis name is bound while f is traced and batched
     (core.extend_axis_env_nd) */
  if (vm->axis_name) {
    if (nvmap == SR_MAX_VMAP_AXES) {
      sr_raise(I, "NotImplementedError", "vmap: more than %d nested named axes", SR_MAX_VMAP_AXES);
      goto done;
    }
    I->jax->vmap_axis[nvmap] = vm->axis_name;
    I->jax->vmap_size[nvmap] = size;
    I->jax->nvmap = nvmap + 1;
  }
  for (int k = 0; k < vm->nspmd && I->jax->nspmd_names < SR_MAX_VMAP_AXES; k++)
    I->jax->spmd_names[I->jax->nspmd_names++] = vm->spmd[k];
  /* the leaves as arrays, and one example's abstract values */
  SrVal *exl = sr_seq(NULL, SR_V_LIST, nl);
  in_bd = sr_xcalloc((size_t)nl + 1, sizeof *in_bd);
  for (int i = 0; i < nl; i++) {
    SrVal *x = leaves->seq.items[i];
    if (!sr_array_of(x)) {
      SrVal *arr = sr_jnp_asarray(I, x, -1);
      if (!arr) {
        sr_unref(exl);
        goto done;
      }
      sr_unref(leaves->seq.items[i]);
      leaves->seq.items[i] = x = arr;
    }
    const SrType *t = sr_value_type(I, x);
    in_bd[i] = ax[i] == INT64_MIN ? SR_NOT_MAPPED : (int)(ax[i] < 0 ? ax[i] + t->ndim : ax[i]);
    sr_seq_push(NULL, exl, in_bd[i] == SR_NOT_MAPPED ? sr_ref(x)
                                                     : sr_array_abstract(sr_batch_unmapped_type(t, in_bd[i])));
  }
  SrVal *exall = sr_pytree_unflatten(all, exl);
  sr_unref(exl);
  for (int i = 0; i < na; i++) ex[i] = sr_ref(exall->seq.items[i]);
  sr_unref(exall);
  /* the explicit mesh axes mapped away, checked before f is traced and
     bound while it is (core.get_axis_env().explicit_mesh_axis_names) */
  if (explicit_mesh_axis(I, vm, leaves, in_bd, &ema) < 0) goto done;
  for (int k = 0; ema.spmd_explicit && k < ema.nspmd && I->jax->nexplicit_names < SR_MAX_VMAP_AXES; k++)
    I->jax->explicit_names[I->jax->nexplicit_names++] = ema.spmd[k];
  sr_tracers_vmap_next(I, size, vm->axis_name, leaves, in_bd);
  if (a->nkw) {
    KwCall *k = sr_xcalloc(1, sizeof *k);
    k->fun = fun;
    k->nargs = a->n;
    k->nkw = a->nkw;
    k->kw = a->kw;
    SrVal *w = sr_builtin_with(sr_callable_name(vm->fun), kw_call, k, free);
    j = sr_trace_fn(I, w, na, ex, 0, NULL, NULL, SR_TRACE_FOR_VMAP, &out_tree, &captured);
    sr_unref(w);
  } else {
    j = sr_trace_fn(I, fun, na, ex, 0, NULL, NULL, SR_TRACE_FOR_VMAP, &out_tree, &captured);
  }
  sr_trace_next_repr(I, NULL, NULL);
  if (!j) goto done;
  /* batch the example's jaxpr on the captured values and the leaves */
  int nc = captured->seq.n, nin = nc + nl;
  in = sr_xcalloc((size_t)nin + 1, sizeof *in);
  int *bd = sr_xcalloc((size_t)nin + 1, sizeof *bd);
  for (int i = 0; i < nc; i++) {
    in[i] = captured->seq.items[i];
    bd[i] = SR_NOT_MAPPED;
  }
  for (int i = 0; i < nl; i++) {
    in[nc + i] = leaves->seq.items[i];
    bd[nc + i] = in_bd[i];
  }
  free(in_bd);
  in_bd = bd;
  out = sr_xcalloc((size_t)j->nout + 1, sizeof *out);
  out_bd = sr_xcalloc((size_t)j->nout + 1, sizeof *out_bd);
  SrBatch b;
  sr_batch_begin(&b, I, size, vm->axis_name);
  b.nspmd = vm->nspmd;
  memcpy(b.spmd, vm->spmd, sizeof b.spmd);
  int rc = 0;
  if (ema.spmd_explicit) {
    b.nspmd = ema.nspmd;
    b.spmd_explicit = 1;
    memcpy(b.spmd, ema.spmd, sizeof b.spmd);
  }
  /* batching._batch_outer: transform_name_stack('vmap') */
  const char *ns0 = I->ns;
  I->ns = sr_ns_transform(ns0, "vmap");
  if (rc == 0) rc = sr_batch_eval(&b, j, in, in_bd, out, out_bd);
  if (rc == 0) {
    /* the outputs' axes (out_axes, a tree prefix of the result) */
    SrVal *oax = sr_seq(NULL, SR_V_LIST, 0);
    if (prefix_axes(I, vm->out_axes, out_tree, oax) < 0 || oax->seq.n != (int)j->nout) {
      if (!I->exc) not_prefix(I, "vmap out_axes", vm->out_axes, out_tree);
      rc = -1;
    }
    for (uint32_t i = 0; rc == 0 && i < j->nout; i++) {
      SrVal *s = oax->seq.items[i];
      int mark = sr_ad_mark(&b.ad);
      SrVal *m = out[i];
      if (s->kind == SR_V_NONE) {
        if (out_bd[i] != SR_NOT_MAPPED && vm->sum_match) {
          /* batching.matchaxis: dst None with sum_match is x.sum(src) */
          int64_t src = out_bd[i];
          if (!(m = sr_ad_reduce_sum(&b.ad, out[i], &src, 1, NULL))) rc = -1;
        } else if (out_bd[i] != SR_NOT_MAPPED) {
          if (vm->axis_name) {
            sr_raise(I, "ValueError", "vmap has mapped output (axis_name=%s) but out_axes is None", vm->axis_name);
          } else {
            /* api.py's SpecMatchError: the output leaf's key path */
            char **names = sr_xcalloc(j->nout + 1, sizeof *names);
            SrBuf p = SR_BUF_INIT;
            int k = 0;
            sr_buf_puts(&p, "");
            sr_pytree_leaf_paths(out_tree, &p, names, &k);
            sr_raise(I, "ValueError", "at vmap out_axes%s, got axis spec None but output was batched on axis %d",
                     i < (uint32_t)k && names[i] ? names[i] : "", out_bd[i]);
            for (int q = 0; q < k; q++) free(names[q]);
            free(names);
            sr_buf_free(&p);
          }
          rc = -1;
        }
      } else {
        int nd = sr_value_type(I, out[i])->ndim + (out_bd[i] == SR_NOT_MAPPED);
        int64_t d = s->i < 0 ? s->i + nd : s->i;
        if (d < 0 || d >= nd) {
          sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)s->i, nd);
          rc = -1;
        } else {
          m = sr_batch_matchaxis(&b, out[i], out_bd[i], (int)d);
          if (!m) rc = -1;
        }
      }
      if (rc == 0 && m != out[i]) {
        SrVal *c = sr_ref(m);
        sr_unref(out[i]);
        out[i] = c;
      }
      sr_ad_release(&b.ad, mark);
    }
    sr_unref(oax);
  }
  I->ns = ns0;
  sr_batch_end(&b);
  if (rc == 0) {
    SrVal *ol = sr_seq(NULL, SR_V_LIST, (int)j->nout);
    for (uint32_t i = 0; i < j->nout; i++) sr_seq_push(NULL, ol, sr_array_concretize(I, out[i]));
    result = sr_pytree_unflatten(out_tree, ol);
    sr_unref(ol);
  }
  for (uint32_t i = 0; i < j->nout; i++) sr_unref(out[i]);
done:
  sr_unref(fun);
  free(av);
  I->jax->nvmap = nvmap;
  I->jax->nspmd_names = nspmd_names;
  I->jax->nexplicit_names = nexplicit;
  if (j) sr_program_unref(j->prog);
  for (int i = 0; i < na; i++) sr_unref(ex[i]);
  free(ex);
  free(in);
  free(in_bd);
  free(out);
  free(out_bd);
  free(ax);
  sr_unref(out_tree);
  sr_unref(captured);
  sr_unref(leaves);
  sr_unref(axes);
  sr_unref(all);
  return result;
}

/* jax.vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None,
   spmd_axis_name=None, sum_match=False) */
static SrVal *jax_vmap(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "vmap", "fun, in_axes=, out_axes=, axis_name=, axis_size=, spmd_axis_name=, sum_match=",
                    p) < 0)
    return NULL;
  if (!sr_is_callable(I, p[0]))
    return sr_raise(I, "TypeError", "vmap requires a callable, got %s", sr_val_kind_name(p[0]));
  SrVal *in_axes = p[1] ? sr_ref(p[1]) : sr_int(NULL, 0);
  if (in_axes->kind == SR_V_LIST) {
    /* a list stands for the tuple of the positional arguments' axes */
    SrVal *t = sr_tuple(NULL, 0, NULL);
    for (int i = 0; i < in_axes->seq.n; i++) sr_seq_push(NULL, t, sr_ref(in_axes->seq.items[i]));
    sr_unref(in_axes);
    in_axes = t;
  }
  SrBuf s = SR_BUF_INIT;
  if (!(is_axis_leaf(in_axes) || in_axes->kind == SR_V_TUPLE)) {
    sr_val_str(&s, in_axes);
    sr_raise(I, "TypeError",
             "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional arguments "
             "passed to the function, but got %s.",
             sr_buf_str(&s));
  } else if (!axes_ok(I, in_axes)) {
    sr_val_str(&s, in_axes);
    sr_raise(I, "TypeError", "vmap in_axes must be an int, None, or (nested) container with those types as leaves, but got %s.",
             sr_buf_str(&s));
  } else if (p[2] && !axes_ok(I, p[2])) {
    sr_val_str(&s, p[2]);
    sr_raise(I, "TypeError",
             "vmap out_axes must be an int, None, or (nested) container with those types as leaves, but got %s.",
             sr_buf_str(&s));
  }
  sr_buf_free(&s);
  if (I->exc) {
    sr_unref(in_axes);
    return NULL;
  }
  Vmap *vm = sr_xcalloc(1, sizeof *vm);
  vm->fun = sr_ref(p[0]);
  vm->in_axes = in_axes;
  vm->out_axes = p[2] ? sr_ref(p[2]) : sr_int(NULL, 0);
  vm->axis_size = -1;
  vm->sum_match = p[6] && sr_val_truthy(p[6]);
  if (p[3] && p[3]->kind != SR_V_NONE) {
    if (p[3]->kind != SR_V_STR) {
      vmap_free(vm);
      return sr_raise(I, "TypeError", "vmap axis_name must be a hashable axis name, got %s", sr_val_kind_name(p[3]));
    }
    vm->axis_name = sr_intern(p[3]->str.s, p[3]->str.n);
  }
  if (p[4] && p[4]->kind != SR_V_NONE) {
    if (p[4]->kind != SR_V_INT) {
      vmap_free(vm);
      return sr_raise(I, "TypeError", "vmap axis_size must be an int, got %s", sr_val_kind_name(p[4]));
    }
    vm->axis_size = p[4]->i;
  }
  if (p[5] && p[5]->kind != SR_V_NONE) {
    SrVal *sp = p[5];
    int n = sp->kind == SR_V_STR ? 1 : sr_is_seq(sp) ? sp->seq.n : -1;
    for (int i = 0; i < n && n <= SR_MAX_DIM_AXES; i++) {
      SrVal *nm = sp->kind == SR_V_STR ? sp : sp->seq.items[i];
      if (nm->kind != SR_V_STR) n = -1;
      else vm->spmd[vm->nspmd++] = sr_intern(nm->str.s, nm->str.n);
    }
    if (n < 0 || n > SR_MAX_DIM_AXES) {
      vmap_free(vm);
      return sr_raise(I, "TypeError", "spmd_axis_name must be a mesh axis name or a tuple of them");
    }
  }
  return sr_api_wraps_doc(I, sr_builtin_with(sr_callable_name(p[0]), vmap_call, vm, vmap_free), p[0],
                          "Vectorized version of {fun}. Takes similar arguments as {fun} but with additional array "
                          "axes over which {fun} is mapped.",
                          NULL, 1);
}

void sr_vmap_init(void) {
  sr_vmap_hooks_init();
  sr_def("jax.vmap", jax_vmap,
         "vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None, sum_match=False): fun mapped over "
         "an axis of its arguments");
}

/* vjp_io.c: VJP objects in files -- shardrepl.save_vjp(file, f_vjp) and
 * shardrepl.load_vjp(file) -- so that a backward pass can run in another
 * session.
 *
 * The file is a .npz (np.savez's format, lib/exec/npy.h), so numpy reads
 * its arrays:
 *   leaf_0 ... leaf_{k-1}   the VJP object's pytree leaves, in the order of
 *                           jax.tree.leaves(f_vjp): the arrays of args_res,
 *                           then the opaque residuals, as whole (global)
 *                           arrays;
 *   __shardrepl_vjp__       uint8: the UTF-8 text describing the rest, one
 *                           `key value` line each, then the linear jaxpr:
 *
 *     shardrepl-vjp 1
 *     name layer
 *     src_info layer at vjp_objects.jxr:16
 *     in_tree (*, *)          the arguments' structure (* a leaf)
 *     out_tree *
 *     args_res [S, *]         * an array, N NotNeeded(), S NotSaveable()
 *     res a0 a1 o0 o1         per residual: argument leaf i, or opaque i
 *     in_nz 1 1               per input (closed-over values first)
 *     out_nz 1
 *     ncaptured 0
 *     want_logs 0
 *     in_types { lambda ; a:f32[3,3] b:f32[2,3]. let  in () }
 *     out_types { lambda ; a:f32[2,3]. let  in () }
 *     jaxpr
 *     { lambda ; a:f32[3,3] ... }
 *
 * Types (with their shardings) are written as jaxpr binders and read back
 * with the jaxpr parser, against the mesh in context: load a sharded VJP
 * object after jax.set_mesh with the same axes.  Each residual is put back
 * with the sharding the backward pass was built for.  A file that does
 * not parse, or whose arrays do not fit the description, is a ValueError
 * that says what is wrong; nothing is trusted before it is checked.
 * custom_vjp rules are Python functions and are not saved: a VJP object
 * whose linear jaxpr holds a custom_lin saves, but applying it after
 * loading says the rule did not survive.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/array.h"
#include "exec/eval.h"
#include "exec/npy.h"
#include "jax/lax.h"
#include "core/jaxstate.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "jax/vjp.h"
#include "text/parse.h"
#include "text/print_val.h"
#include "util/intern.h"

#define DESC "__shardrepl_vjp__"

/* ---- tree codes: *, N, S, None, (..), [..], {'k': ..} ---- */

static void tree_code(SrBuf *b, SrVal *v) {
  if (sr_is_obj(v, &sr_not_needed_class)) {
    sr_buf_putc(b, 'N');
    return;
  }
  if (sr_is_obj(v, &sr_not_saveable_class)) {
    sr_buf_putc(b, 'S');
    return;
  }
  if (v->kind == SR_V_NONE) {
    sr_buf_puts(b, "None");
    return;
  }
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    sr_buf_putc(b, '*');
    return;
  }
  if (v->kind == SR_V_DICT) {
    /* children in sorted key order: find each one's key */
    sr_buf_putc(b, '{');
    for (int i = 0; i < ch->seq.n; i++) {
      int q = 0;
      while (q < v->dict.n && v->dict.vals[q] != ch->seq.items[i]) q++;
      if (i) sr_buf_puts(b, ", ");
      if (q < v->dict.n) sr_val_repr(b, v->dict.keys[q]);
      sr_buf_puts(b, ": ");
      tree_code(b, ch->seq.items[i]);
    }
    sr_buf_putc(b, '}');
  } else {
    int tuple = v->kind != SR_V_LIST;
    sr_buf_putc(b, tuple ? '(' : '[');
    for (int i = 0; i < ch->seq.n; i++) {
      if (i) sr_buf_puts(b, ", ");
      tree_code(b, ch->seq.items[i]);
    }
    if (tuple && ch->seq.n == 1) sr_buf_putc(b, ',');
    sr_buf_putc(b, tuple ? ')' : ']');
  }
  sr_unref(ch);
}

typedef struct Rd {
  const char *s;
  size_t n, pos;
  int depth;
  SrVal *leaves;  /* values for *, or NULL: numbered ints */
  int next;
  int sentinels;  /* N and S allowed */
} Rd;

static void rd_skip(Rd *r) {
  while (r->pos < r->n && r->s[r->pos] == ' ') r->pos++;
}

static int rd_eat(Rd *r, char c) {
  rd_skip(r);
  if (r->pos < r->n && r->s[r->pos] == c) {
    r->pos++;
    return 1;
  }
  return 0;
}

/* NULL: malformed */
static SrVal *rd_tree(Rd *r) {
  rd_skip(r);
  if (r->pos >= r->n || ++r->depth > 64) return NULL;
  char c = r->s[r->pos];
  SrVal *v = NULL;
  if (c == '*') {
    r->pos++;
    if (!r->leaves) v = sr_int(NULL, r->next++);
    else if (r->next < r->leaves->seq.n) v = sr_ref(r->leaves->seq.items[r->next++]);
  } else if ((c == 'N' || c == 'S') && r->sentinels && !(r->pos + 3 < r->n && !strncmp(r->s + r->pos, "None", 4))) {
    r->pos++;
    v = sr_ref(c == 'N' ? sr_not_needed() : sr_not_saveable());
  } else if (r->pos + 4 <= r->n && !strncmp(r->s + r->pos, "None", 4)) {
    r->pos += 4;
    v = sr_none();
  } else if (c == '(' || c == '[') {
    r->pos++;
    char close = c == '(' ? ')' : ']';
    v = sr_seq(NULL, c == '(' ? SR_V_TUPLE : SR_V_LIST, 0);
    while (!rd_eat(r, close)) {
      SrVal *x = rd_tree(r);
      if (!x) {
        sr_unref(v);
        v = NULL;
        break;
      }
      sr_seq_push(NULL, v, x);
      if (!rd_eat(r, ',')) {
        if (!rd_eat(r, close)) {
          sr_unref(v);
          v = NULL;
        }
        break;
      }
    }
  } else if (c == '{') {
    r->pos++;
    v = sr_dict(NULL);
    while (!rd_eat(r, '}')) {
      rd_skip(r);
      /* a quoted key, as repr writes it */
      if (r->pos >= r->n || (r->s[r->pos] != '\'' && r->s[r->pos] != '"')) goto bad;
      char q = r->s[r->pos++];
      SrBuf k = SR_BUF_INIT;
      while (r->pos < r->n && r->s[r->pos] != q) {
        if (r->s[r->pos] == '\\' && r->pos + 1 < r->n) r->pos++;
        sr_buf_putc(&k, r->s[r->pos++]);
      }
      if (r->pos >= r->n) {
        sr_buf_free(&k);
        goto bad;
      }
      r->pos++;
      SrVal *key = sr_str(NULL, k.p ? k.p : "", k.len);
      sr_buf_free(&k);
      SrVal *x = rd_eat(r, ':') ? rd_tree(r) : NULL;
      if (!x) {
        sr_unref(key);
        goto bad;
      }
      sr_dict_set(NULL, v, key, x);
      if (!rd_eat(r, ',')) {
        if (!rd_eat(r, '}')) goto bad;
        break;
      }
    }
  }
  r->depth--;
  return v;
bad:
  sr_unref(v);
  r->depth--;
  return NULL;
}

static SrVal *parse_tree(const char *s, SrVal *leaves, int sentinels, int *count) {
  Rd r = {s, strlen(s), 0, 0, leaves, 0, sentinels};
  SrVal *v = rd_tree(&r);
  rd_skip(&r);
  if (v && r.pos != r.n) {
    sr_unref(v);
    v = NULL;
  }
  if (count) *count = r.next;
  return v;
}

/* ---- saving ---- */

static void types_jaxpr(SrBuf *b, const SrType *const *t, int n) {
  sr_buf_puts(b, "{ lambda ; ");
  for (int i = 0; i < n; i++) {
    /* binder names: a b c ... z ba bb ... */
    char nm[16];
    int k = i, p = 0;
    char rev[16];
    do {
      rev[p++] = (char)('a' + k % 26);
      k = k / 26;
    } while (k > 0 && p < 15);
    for (int q = 0; q < p; q++) nm[q] = rev[p - 1 - q];
    nm[p] = 0;
    sr_buf_printf(b, "%s%s:%s", i ? " " : "", nm, sr_type_short(t[i]));
  }
  sr_buf_puts(b, ". let  in () }");
}

static SrArray *concrete(SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  return a && a->kind == SR_AV_CONCRETE ? a->data : NULL;
}

static SrVal *save_vjp(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "save_vjp", "file, f_vjp", p) < 0) return NULL;
  const char *path = sr_as_path(I, p[0], "file");
  if (!path) return NULL;
  SrVjp *v = sr_vjp_of(p[1]);
  if (!v) return sr_raise(I, "TypeError", "save_vjp needs a VJP object (what jax.vjp returns), got %s", sr_val_kind_name(p[1]));
  SrVjpAux *x = v->aux;
  SrVal *leaves = sr_pytree_flatten(I, p[1]);
  if (!leaves) return NULL;
  SrBuf d = SR_BUF_INIT;
  SrNpzEntry *e = sr_xcalloc((size_t)leaves->seq.n + 2, sizeof *e);
  int ne = 0;
  SrVal *result = NULL;
  for (int i = 0; i < leaves->seq.n; i++) {
    SrArray *arr = concrete(leaves->seq.items[i]);
    if (!arr) {
      sr_raise(I, "TypeError",
               "save_vjp needs concrete residuals: leaf %d of the VJP object is %s (save it outside jax.jit, from "
               "what a jitted forward pass returns)",
               i, sr_array_of(leaves->seq.items[i]) ? "a tracer or an abstract array" : sr_val_kind_name(leaves->seq.items[i]));
      goto done;
    }
    SrEvalCtx cx;
    SrDiags dg = SR_DIAGS_INIT;
    sr_eval_ctx_init(&cx, I, sr_exec(I), &dg);
    cx.mesh = I->jax->mesh;
    size_t nb = (size_t)sr_type_numel(arr->type) * sr_elem_size(arr->type->dtype);
    void *h = sr_xmalloc(nb ? nb : 1);
    if (sr_array_to_host(&cx, arr, h) < 0) {
      free(h);
      sr_raise_diags(I, &dg, "RuntimeError");
      goto done;
    }
    char nm[32];
    snprintf(nm, sizeof nm, "leaf_%d", i);
    e[ne].name = strdup(nm);
    e[ne].dt = arr->type->dtype;
    e[ne].ndim = arr->type->ndim;
    for (int k = 0; k < arr->type->ndim; k++) e[ne].shape[k] = arr->type->dims[k].size;
    e[ne].data = h;
    ne++;
  }
  /* the description */
  sr_buf_puts(&d, "shardrepl-vjp 1\n");
  sr_buf_printf(&d, "name %s\nsrc_info %s\nin_tree ", x->name, x->src_info);
  tree_code(&d, x->in_tree);
  sr_buf_puts(&d, "\nout_tree ");
  tree_code(&d, x->out_tree);
  sr_buf_puts(&d, "\nargs_res ");
  tree_code(&d, v->args_res);
  sr_buf_puts(&d, "\nres");
  for (int r = 0; r < x->nres; r++) sr_buf_printf(&d, " %c%d", x->res_primal[r] ? 'a' : 'o', x->res_idx[r]);
  sr_buf_puts(&d, "\nin_nz");
  for (int i = 0; i < x->lin.nin; i++) sr_buf_printf(&d, " %d", x->lin.in_nz[i]);
  sr_buf_puts(&d, "\nout_nz");
  for (int i = 0; i < x->lin.nout; i++) sr_buf_printf(&d, " %d", x->lin.out_nz[i]);
  sr_buf_printf(&d, "\nncaptured %d\nwant_logs %d\nin_types ", x->ncaptured, v->want_logs);
  types_jaxpr(&d, x->lin.in_types, x->lin.nin);
  sr_buf_puts(&d, "\nout_types ");
  types_jaxpr(&d, x->lin.out_types, x->lin.nout);
  sr_buf_puts(&d, "\njaxpr\n");
  SrVal *jv = sr_jaxpr_val(NULL, x->lin.jaxpr);
  sr_val_str(&d, jv);
  sr_unref(jv);
  sr_buf_putc(&d, '\n');
  e[ne].name = strdup(DESC);
  e[ne].dt = SR_U8;
  e[ne].ndim = 1;
  e[ne].shape[0] = (int64_t)d.len;
  e[ne].data = sr_xmalloc(d.len + 1);
  memcpy(e[ne].data, d.p, d.len);
  ne++;
  size_t n = strlen(path);
  char *full = sr_xmalloc(n + 5);
  memcpy(full, path, n + 1);
  if (n < 4 || strcmp(path + n - 4, ".npz") != 0) strcat(full, ".npz");
  SrDiags dg = SR_DIAGS_INIT;
  int rc = sr_npz_write(full, e, ne, &dg);
  free(full);
  if (rc < 0) sr_raise_diags(I, &dg, "OSError");
  else result = sr_none();
done:
  for (int i = 0; i < ne; i++) {
    free(e[i].name);
    free(e[i].data);
  }
  free(e);
  sr_buf_free(&d);
  sr_unref(leaves);
  return result;
}

/* ---- loading ---- */

typedef struct Desc {
  char *text;               /* the description, NUL-terminated, edited in place */
  const char *key[16];
  const char *val[16];
  int n;
  const char *jaxpr;        /* the text after the "jaxpr" line */
} Desc;

static const char *dget(const Desc *d, const char *k) {
  for (int i = 0; i < d->n; i++)
    if (strcmp(d->key[i], k) == 0) return d->val[i];
  return NULL;
}

static int bad(SrInterp *I, const char *path, const char *what) {
  sr_raise(I, "ValueError", "%s is not a VJP object file that shardrepl can read: %s", path, what);
  return -1;
}

static int parse_desc(SrInterp *I, const char *path, const SrNpzEntry *e, Desc *d) {
  memset(d, 0, sizeof *d);
  if (e->dt != SR_U8 || e->ndim != 1) return bad(I, path, "its " DESC " member is not a uint8 vector");
  size_t n = (size_t)e->shape[0];
  d->text = sr_xmalloc(n + 1);
  memcpy(d->text, e->data, n);
  d->text[n] = 0;
  if (strlen(d->text) != n) return bad(I, path, "its description holds a NUL byte");
  char *s = d->text;
  char *nl = strchr(s, '\n');
  if (!nl || strncmp(s, "shardrepl-vjp ", 14) != 0) return bad(I, path, "its description does not start with shardrepl-vjp");
  *nl = 0;
  if (strcmp(s + 14, "1") != 0) {
    sr_raise(I, "ValueError", "%s is a VJP object file of version %s; this shardrepl reads version 1", path, s + 14);
    return -1;
  }
  s = nl + 1;
  while (*s) {
    nl = strchr(s, '\n');
    if (!nl) return bad(I, path, "its description ends inside a line");
    *nl = 0;
    if (strcmp(s, "jaxpr") == 0) {
      d->jaxpr = nl + 1;
      return 0;
    }
    char *sp = strchr(s, ' ');
    if (!sp || d->n == 16) return bad(I, path, "a line of its description is not `key value`");
    *sp = 0;
    d->key[d->n] = s;
    d->val[d->n] = sp + 1;
    d->n++;
    s = nl + 1;
  }
  return bad(I, path, "its description has no jaxpr");
}

/* Reads n ints (a line of numbers); -1 when it holds another count. */
static int read_ints(const char *s, int *out, int n) {
  int k = 0;
  while (s && *s) {
    while (*s == ' ') s++;
    if (!*s) break;
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s || k == n || v < 0 || v > 1000000000) return -1;
    out[k++] = (int)v;
    s = e;
  }
  return k == n ? 0 : -1;
}

/* A jaxpr text parsed against the mesh in context; NULL after an error. */
static SrProgram *parse_jaxpr(SrInterp *I, const char *path, const char *text, const char *what) {
  SrSrc *src = sr_src_new(path, text, strlen(text), 1);
  SrParseOpts opts = {sr_jax_context_mesh(I->jax)};
  SrDiags dg = SR_DIAGS_INIT;
  size_t end;
  SrProgram *p = sr_parse_program(src, 0, &end, &opts, &dg);
  if (p && sr_skip_blanks(text, strlen(text), end) != strlen(text)) {
    sr_program_unref(p);
    p = NULL;
  }
  sr_src_unref(src);
  if (!p) {
    const char *m = dg.first ? dg.first->msg : "it does not parse";
    SrBuf b = SR_BUF_INIT;
    sr_buf_printf(&b, "its %s does not parse (%s); a sharded one needs jax.set_mesh with the mesh it was saved under", what, m);
    bad(I, path, sr_buf_str(&b));
    sr_buf_free(&b);
  }
  sr_diags_clear(&dg);
  return p;
}

/* A leaf read from the file, as an array of type t (put with its
   sharding). */
static SrVal *leaf_array(SrInterp *I, const char *path, const SrNpzEntry *e, const SrType *t) {
  int same = e->dt == t->dtype && e->ndim == t->ndim;
  for (int k = 0; same && k < t->ndim; k++) same = e->shape[k] == t->dims[k].size;
  if (!same) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_printf(&b, "its member %s holds a %s array of shape (", e->name, sr_dtype_name(e->dt));
    for (int k = 0; k < e->ndim; k++) sr_buf_printf(&b, k ? ", %lld" : "%lld", (long long)e->shape[k]);
    sr_buf_printf(&b, "%s), but the backward pass needs %s", e->ndim == 1 ? "," : "", sr_type_short(t));
    bad(I, path, sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  const SrType *plain = sr_type_strip_sharding(sr_type_with_weak(t, 0));
  SrArray *a = sr_array_from_data(plain, NULL, e->data);
  if (!a) return bad(I, path, "an array could not be made"), NULL;
  SrVal *arr = sr_array_concrete(a);
  if (plain == sr_type_strip_sharding(t) && !t->mesh) return arr;
  const SrMesh *cm = sr_jax_context_mesh(I->jax);
  if (!cm || !cm->n) {
    sr_unref(arr);
    sr_raise(I, "ValueError",
             "%s holds a residual sharded over mesh axes (%s %s): call jax.set_mesh with the mesh it was saved under "
             "before load_vjp",
             path, e->name, sr_type_short(t));
    return NULL;
  }
  /* jax.device_put(arr, P(...)): the sharding the backward pass expects */
  SrVal *spec = sr_api_type_spec(t);
  SrVal *argv[2] = {arr, spec};
  SrArgs da = {2, argv, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, sr_lookup_qualname("jax.device_put"), &da);
  sr_unref(spec);
  sr_unref(arr);
  return r;
}

static SrVal *load_vjp(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "load_vjp", "file", p) < 0) return NULL;
  const char *path = sr_as_path(I, p[0], "file");
  if (!path) return NULL;
  SrNpzEntry *e = NULL;
  int ne = 0;
  SrDiags dg = SR_DIAGS_INIT;
  if (sr_npz_read(path, &e, &ne, &dg) < 0) return sr_raise_diags(I, &dg, "OSError");
  SrVal *result = NULL, *leaves = NULL, *in_tree = NULL, *out_tree = NULL, *args_res = NULL, *opaque = NULL;
  SrProgram *jp = NULL, *itp = NULL, *otp = NULL;
  Desc d = {0};
  SrVjpAux *x = NULL;
  int di = -1, nleaf = 0;
  for (int i = 0; i < ne; i++) {
    if (strcmp(e[i].name, DESC) == 0) di = i;
    else nleaf++;
  }
  if (di < 0) {
    bad(I, path, "it has no " DESC " member (a .npz of other arrays?)");
    goto done;
  }
  if (parse_desc(I, path, &e[di], &d) < 0) goto done;
  const char *keys[] = {"name", "src_info", "in_tree", "out_tree", "args_res", "res", "in_nz",
                        "out_nz", "ncaptured", "want_logs", "in_types", "out_types"};
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
    if (!dget(&d, keys[k])) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_printf(&b, "its description has no %s line", keys[k]);
      bad(I, path, sr_buf_str(&b));
      sr_buf_free(&b);
      goto done;
    }
  /* the leaves in order */
  leaves = sr_seq(NULL, SR_V_LIST, nleaf);
  const SrNpzEntry **le = sr_xcalloc((size_t)nleaf + 1, sizeof *le);
  for (int i = 0; i < ne; i++) {
    if (i == di) continue;
    int k;
    char tail;
    if (sscanf(e[i].name, "leaf_%d%c", &k, &tail) != 1 || k < 0 || k >= nleaf || le[k]) {
      free(le);
      bad(I, path, "its members are not leaf_0 ... leaf_N");
      goto done;
    }
    le[k] = &e[i];
  }
  /* the types and the jaxpr */
  itp = parse_jaxpr(I, path, dget(&d, "in_types"), "in_types");
  otp = itp ? parse_jaxpr(I, path, dget(&d, "out_types"), "out_types") : NULL;
  jp = otp ? parse_jaxpr(I, path, d.jaxpr, "linear jaxpr") : NULL;
  if (!jp) {
    free(le);
    goto done;
  }
  x = sr_xcalloc(1, sizeof *x);
  x->rc = 1;
  x->lin.jaxpr = jp->top;
  jp = NULL;
  x->lin.nin = (int)sr_nargs(itp->top);
  x->lin.nout = (int)sr_nargs(otp->top);
  x->lin.in_types = sr_xcalloc((size_t)x->lin.nin + 1, sizeof *x->lin.in_types);
  x->lin.out_types = sr_xcalloc((size_t)x->lin.nout + 1, sizeof *x->lin.out_types);
  for (int i = 0; i < x->lin.nin; i++) x->lin.in_types[i] = sr_args(itp->top)[i]->type;
  for (int i = 0; i < x->lin.nout; i++) x->lin.out_types[i] = sr_args(otp->top)[i]->type;
  int *tmp = sr_xcalloc((size_t)x->lin.nin + (size_t)x->lin.nout + 2, sizeof *tmp);
  x->lin.in_nz = sr_xcalloc((size_t)x->lin.nin + 1, 1);
  x->lin.out_nz = sr_xcalloc((size_t)x->lin.nout + 1, 1);
  int ok = read_ints(dget(&d, "in_nz"), tmp, x->lin.nin) == 0;
  for (int i = 0; ok && i < x->lin.nin; i++) x->lin.in_nz[i] = tmp[i] != 0;
  ok = ok && read_ints(dget(&d, "out_nz"), tmp, x->lin.nout) == 0;
  for (int i = 0; ok && i < x->lin.nout; i++) x->lin.out_nz[i] = tmp[i] != 0;
  int want_logs = 0;
  ok = ok && read_ints(dget(&d, "ncaptured"), &x->ncaptured, 1) == 0 && x->ncaptured <= x->lin.nin;
  ok = ok && read_ints(dget(&d, "want_logs"), &want_logs, 1) == 0;
  free(tmp);
  if (!ok) {
    free(le);
    bad(I, path, "its in_nz, out_nz, ncaptured or want_logs line does not fit its types");
    goto done;
  }
  x->nleaves = x->lin.nin - x->ncaptured;
  x->name = sr_intern_cstr(dget(&d, "name"));
  x->src_info = sr_intern_cstr(dget(&d, "src_info"));
  int nl = 0, no = 0;
  in_tree = parse_tree(dget(&d, "in_tree"), NULL, 0, &nl);
  out_tree = parse_tree(dget(&d, "out_tree"), NULL, 0, &no);
  if (!in_tree || in_tree->kind != SR_V_TUPLE || nl != x->nleaves || !out_tree || no != x->lin.nout) {
    free(le);
    bad(I, path, "its in_tree or out_tree does not fit its types");
    goto done;
  }
  x->in_tree = in_tree;
  x->out_tree = out_tree;
  in_tree = out_tree = NULL;
  x->nargs = x->in_tree->seq.n;
  /* residuals: a<i> or o<i> */
  const char *rs = dget(&d, "res");
  int cap = 0;
  for (const char *c = rs; *c; c++) cap += *c == ' ';
  x->res_idx = sr_xcalloc((size_t)cap + 2, sizeof *x->res_idx);
  x->res_primal = sr_xcalloc((size_t)cap + 2, 1);
  int nopaque = 0;
  for (const char *c = rs; *c && ok;) {
    while (*c == ' ') c++;
    if (!*c) break;
    char *end;
    long v = (*c == 'a' || *c == 'o') ? strtol(c + 1, &end, 10) : -1;
    if (v < 0 || end == c + 1 || x->nres > cap) {
      ok = 0;
      break;
    }
    x->res_primal[x->nres] = *c == 'a';
    x->res_idx[x->nres] = (int)v;
    if (*c == 'a' && v >= x->nleaves) ok = 0;
    if (*c == 'o' && v + 1 > nopaque) nopaque = (int)v + 1;
    x->nres++;
    c = end;
  }
  const SrJaxpr *L = x->lin.jaxpr;
  int nnz = 0;
  for (int i = 0; i < x->lin.nin; i++) nnz += x->lin.in_nz[i];
  int nonz = 0;
  for (int i = 0; i < x->lin.nout; i++) nonz += x->lin.out_nz[i];
  if (!ok || L->nconst || (int)sr_nargs(L) != x->nres + nnz || (int)L->nout != nonz) {
    free(le);
    bad(I, path, "its residuals do not fit its linear jaxpr");
    goto done;
  }
  /* args_res: a leaf array for each * */
  int na = 0;
  SrVal *probe = parse_tree(dget(&d, "args_res"), NULL, 1, &na);
  sr_unref(probe);
  if (!probe || na + nopaque != nleaf) {
    free(le);
    bad(I, path, "its args_res and residual lines do not fit its leaf arrays");
    goto done;
  }
  /* which argument leaf each array of args_res is: its place among the
     leaves of args_res, sentinels counted */
  int *arr_leaf = sr_xcalloc((size_t)na + 1, sizeof *arr_leaf);
  {
    SrVal *st = parse_tree(dget(&d, "args_res"), NULL, 1, NULL);
    SrVal *stack = sr_seq(NULL, SR_V_LIST, 0);
    sr_seq_push(NULL, stack, st);
    int pos = 0;
    while (stack->seq.n) {
      SrVal *top = stack->seq.items[--stack->seq.n];
      SrVal *ch = top->kind == SR_V_INT || top->kind == SR_V_OBJ ? NULL : sr_pytree_children(top);
      if (ch) {
        for (int q = ch->seq.n - 1; q >= 0; q--) sr_seq_push(NULL, stack, sr_ref(ch->seq.items[q]));
        sr_unref(ch);
      } else {
        if (top->kind == SR_V_INT && top->i < na) arr_leaf[top->i] = pos;
        pos++;
      }
      sr_unref(top);
    }
    sr_unref(stack);
    if (pos != x->nleaves) ok = 0;
  }
  if (!ok) {
    free(le);
    free(arr_leaf);
    bad(I, path, "its args_res does not mirror its arguments");
    goto done;
  }
  /* the arrays, with the types the backward pass expects */
  for (int i = 0; i < nleaf; i++) {
    const SrType *t = NULL;
    if (i < na) {
      t = x->lin.in_types[x->ncaptured + arr_leaf[i]];
    } else {
      for (int r = 0; r < x->nres && !t; r++)
        if (!x->res_primal[r] && x->res_idx[r] == i - na) t = sr_args(L)[r]->type;
      if (!t) {
        free(le);
        free(arr_leaf);
        bad(I, path, "an opaque residual is not used by its linear jaxpr");
        goto done;
      }
    }
    SrVal *arr = leaf_array(I, path, le[i], t);
    if (!arr) {
      free(le);
      free(arr_leaf);
      goto done;
    }
    sr_seq_push(NULL, leaves, arr);
  }
  free(le);
  free(arr_leaf);
  SrVal *ar_leaves = sr_seq(NULL, SR_V_LIST, na), *op_leaves = sr_seq(NULL, SR_V_LIST, nleaf - na);
  for (int i = 0; i < nleaf; i++) sr_seq_push(NULL, i < na ? ar_leaves : op_leaves, sr_ref(leaves->seq.items[i]));
  args_res = parse_tree(dget(&d, "args_res"), ar_leaves, 1, NULL);
  sr_unref(ar_leaves);
  opaque = op_leaves;
  if (!args_res || args_res->kind != SR_V_LIST || args_res->seq.n != x->nargs) {
    bad(I, path, "its args_res is not a list with one entry per argument");
    goto done;
  }
  result = sr_vjp_make(x, args_res, opaque, sr_seq(NULL, SR_V_LIST, 0), want_logs);
  x = NULL;
  args_res = opaque = NULL;
done:
  if (x) sr_vjp_aux_unref(x);
  if (jp) sr_program_unref(jp);
  if (itp) sr_program_unref(itp);
  if (otp) sr_program_unref(otp);
  sr_unref(leaves);
  sr_unref(in_tree);
  sr_unref(out_tree);
  sr_unref(args_res);
  sr_unref(opaque);
  free(d.text);
  sr_npz_free(e, ne);
  return result;
}

void sr_vjp_io_init(void) {
  sr_def("shardrepl.save_vjp", save_vjp,
         "save_vjp(file, f_vjp): writes a VJP object to a .npz file (its residuals as arrays, its backward pass as "
         "text), for load_vjp in this or another session");
  sr_def("shardrepl.load_vjp", load_vjp,
         "load_vjp(file): the VJP object save_vjp wrote (sharded residuals need jax.set_mesh with the same axes)");
}

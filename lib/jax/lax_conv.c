/* lax_conv.c: jax.lax's convolutions (jax/_src/lax/convolution.py):
 * conv_general_dilated and its wrappers conv, conv_with_general_padding
 * and conv_transpose, conv_dimension_numbers, ConvDimensionNumbers and
 * padtype_to_pads.  They bind conv_general_dilated (lax/conv.c has its
 * rules) with the params JAX's function computes.
 *
 * A ConvDimensionNumbers is the tuple of its three specs here
 * (lhs_spec, rhs_spec, out_spec), each a tuple of ints.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "jax/api.h"
#include "jax/tree_util.h"
#include "lax/lax.h"
#include "core/core.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "py/class.h"
#include "util/mem.h"
#include "text/print_val.h"
#include "util/intern.h"

static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }

typedef struct Dn {
  int64_t l[SR_MAX_RANK], r[SR_MAX_RANK], o[SR_MAX_RANK];
  int nd;
} Dn;

/* A ConvDimensionNumbers: three tuples of ints. */
static int is_dn_tuple(const SrVal *v) {
  if (!v || !sr_is_seq(v) || v->kind == SR_V_SET || v->seq.n != 3) return 0;
  for (int i = 0; i < 3; i++)
    if (!sr_is_seq(v->seq.items[i])) return 0;
  return 1;
}

static int spec_has(const SrVal *s, char ch) {
  int n = 0;
  for (size_t i = 0; i < s->str.n; i++) n += s->str.s[i] == ch;
  return n;
}

/* conv_general_permutations */
static int permutations(SrInterp *I, SrVal *dn, Dn *d) {
  static const char pairs[3][2] = {{'N', 'C'}, {'O', 'I'}, {'N', 'C'}};
  SrVal *s[3] = {dn->seq.items[0], dn->seq.items[1], dn->seq.items[2]};
  for (int i = 0; i < 3; i++) {
    if (spec_has(s[i], pairs[i][0]) != 1 || spec_has(s[i], pairs[i][1]) != 1)
      return sr_raise(I, "TypeError",
                      "convolution dimension_numbers[%d] must contain the characters '%c' and '%c' exactly once, got "
                      "%.*s.",
                      i, pairs[i][0], pairs[i][1], (int)s[i]->str.n, s[i]->str.s),
             -1;
    for (size_t a = 0; a < s[i]->str.n; a++)
      for (size_t b = a + 1; b < s[i]->str.n; b++)
        if (s[i]->str.s[a] == s[i]->str.s[b])
          return sr_raise(I, "TypeError", "convolution dimension_numbers[%d] cannot have duplicate characters, got %.*s.",
                          i, (int)s[i]->str.n, s[i]->str.s),
                 -1;
  }
  /* the same spatial characters in all three */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (size_t a = 0; a < s[i]->str.n; a++) {
        char ch = s[i]->str.s[a];
        if (ch == pairs[i][0] || ch == pairs[i][1]) continue;
        if (!memchr(s[j]->str.s, ch, s[j]->str.n) || ch == pairs[j][0] || ch == pairs[j][1]) {
          SrBuf b = SR_BUF_INIT;
          sr_val_repr(&b, dn);
          sr_raise(I, "TypeError",
                   "convolution dimension_numbers elements must each have the same set of spatial characters, got %s.",
                   sr_buf_str(&b));
          sr_buf_free(&b);
          return -1;
        }
      }
  const SrVal *rs = s[1];
  int64_t *out[3] = {d->l, d->r, d->o};
  for (int i = 0; i < 3; i++) {
    const SrVal *sp = s[i];
    int n = 0;
    out[i][n++] = (const char *)memchr(sp->str.s, pairs[i][0], sp->str.n) - sp->str.s;
    out[i][n++] = (const char *)memchr(sp->str.s, pairs[i][1], sp->str.n) - sp->str.s;
    if (i == 1) {
      for (size_t a = 0; a < sp->str.n; a++)
        if (sp->str.s[a] != 'O' && sp->str.s[a] != 'I') out[i][n++] = (int64_t)a;
    } else {
      /* spatial dims sorted by their place in rhs_spec */
      for (size_t r = 0; r < rs->str.n; r++) {
        char ch = rs->str.s[r];
        if (ch == 'O' || ch == 'I') continue;
        out[i][n++] = (const char *)memchr(sp->str.s, ch, sp->str.n) - sp->str.s;
      }
    }
  }
  d->nd = (int)s[0]->str.n;
  return 0;
}

/* conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) */
static int dimension_numbers(SrInterp *I, int lnd, int rnd, const int64_t *lshape, const int64_t *rshape, SrVal *dn,
                             Dn *d) {
  memset(d, 0, sizeof *d);
  if (dn && sr_class_namedtuple_kind(dn)) {
    /* a ConvDimensionNumbers: its three fields */
    SrVal *items = sr_iterate(I, dn);
    if (!items) return -1;
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, items->seq.n);
    for (int i = 0; i < items->seq.n; i++) sr_seq_push(NULL, t, sr_ref(items->seq.items[i]));
    sr_unref(items);
    int rc = dimension_numbers(I, lnd, rnd, lshape, rshape, t, d);
    sr_unref(t);
    return rc;
  }
  if (is_dn_tuple(dn) && dn->seq.items[0]->kind != SR_V_STR) {
    int n[3];
    for (int i = 0; i < 3; i++)
      if (sr_ints_arg(I, dn->seq.items[i], i == 0 ? d->l : i == 1 ? d->r : d->o, &n[i], "dimension_numbers") < 0)
        return -1;
    if (n[0] != n[1] || n[0] != n[2] || n[0] != lnd)
      return sr_raise(I, "TypeError", "ConvDimensionNumbers specs must have len equal to the ndim of lhs and rhs"), -1;
    d->nd = n[0];
    return 0;
  }
  if (lnd != rnd)
    return sr_raise(I, "TypeError", "convolution requires lhs and rhs ndim to be equal, got %d and %d.", lnd, rnd), -1;
  if (!dn || dn->kind == SR_V_NONE) {
    for (int i = 0; i < lnd; i++) d->l[i] = d->r[i] = d->o[i] = i;
    d->nd = lnd;
    return 0;
  }
  if (dn->kind != SR_V_TUPLE && dn->kind != SR_V_LIST)
    return sr_raise(I, "TypeError", "convolution dimension_numbers must be tuple/list or None, got <class '%s'>.",
                    sr_val_kind_name(dn)),
           -1;
  if (dn->seq.n != 3)
    return sr_raise(I, "TypeError", "convolution dimension_numbers list/tuple must be length 3, got %d.", dn->seq.n),
           -1;
  for (int i = 0; i < 3; i++)
    if (dn->seq.items[i]->kind != SR_V_STR)
      return sr_raise(I, "TypeError", "convolution dimension_numbers elements must be strings, got (<class '%s'>, <class '%s'>, <class '%s'>).",
                      sr_val_kind_name(dn->seq.items[0]), sr_val_kind_name(dn->seq.items[1]),
                      sr_val_kind_name(dn->seq.items[2])),
             -1;
  for (int i = 0; i < 3; i++)
    if ((int)dn->seq.items[i]->str.n != lnd) {
      SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
      sr_ints_str(&a, lshape, lnd);
      sr_ints_str(&b, rshape, rnd);
      sr_raise(I, "TypeError",
               "convolution dimension_numbers[%d] must have len equal to the ndim of lhs and rhs, got %d for lhs and "
               "rhs shapes %s and %s.",
               i, (int)dn->seq.items[i]->str.n, sr_buf_str(&a), sr_buf_str(&b));
      sr_buf_free(&a);
      sr_buf_free(&b);
      return -1;
    }
  return permutations(I, dn, d);
}

/* ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec): convolution.py's
   NamedTuple (its repr names the fields) */
static SrVal *dn_tuple(SrInterp *I, const Dn *d) {
  SrVal *nt = sr_lookup_qualname("collections.namedtuple");
  if (!nt) return sr_raise(I, "RuntimeError", "collections.namedtuple is not registered");
  SrVal *fields = sr_seq(NULL, SR_V_TUPLE, 3);
  sr_seq_push(NULL, fields, sr_str(NULL, "lhs_spec", 8));
  sr_seq_push(NULL, fields, sr_str(NULL, "rhs_spec", 8));
  sr_seq_push(NULL, fields, sr_str(NULL, "out_spec", 8));
  SrVal *ca[2] = {sr_str(NULL, "ConvDimensionNumbers", 20), fields};
  SrArgs cargs = {2, ca, 0, NULL, NULL, NULL};
  SrVal *cls = sr_call(I, nt, &cargs);
  sr_unref(ca[0]);
  sr_unref(fields);
  if (!cls) return NULL;
  SrVal *v[3] = {sr_int_tuple(d->l, d->nd), sr_int_tuple(d->r, d->nd), sr_int_tuple(d->o, d->nd)};
  SrArgs va = {3, v, 0, NULL, NULL, NULL};
  SrVal *t = sr_call(I, cls, &va);
  for (int i = 0; i < 3; i++) sr_unref(v[i]);
  sr_unref(cls);
  return t;
}

static int64_t ceil_div(int64_t a, int64_t b) { return -((-a) / b - ((-a) % b != 0 && ((-a) < 0) != (b < 0))); }

/* lax.padtype_to_pads */
static int padtype_to_pads(SrInterp *I, const int64_t *in, const int64_t *win, const int64_t *ws, int n,
                           const SrVal *pad, int64_t *lo, int64_t *hi) {
  char up[16];
  size_t k = pad->str.n < sizeof up - 1 ? pad->str.n : sizeof up - 1;
  for (size_t i = 0; i < k; i++) up[i] = (char)(pad->str.s[i] >= 'a' && pad->str.s[i] <= 'z' ? pad->str.s[i] - 32 : pad->str.s[i]);
  up[k] = 0;
  int same = strcmp(up, "SAME") == 0 && pad->str.n == 4, lower = strcmp(up, "SAME_LOWER") == 0 && pad->str.n == 10;
  int valid = strcmp(up, "VALID") == 0 && pad->str.n == 5;
  if (!same && !lower && !valid)
    return sr_raise(I, "RuntimeError",
                    "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got %.*s.",
                    (int)pad->str.n, pad->str.s),
           -1;
  for (int i = 0; i < n; i++) {
    /* a stride that is not positive: no padding here, the shape rule's
       error after */
    if (valid || ws[i] <= 0) {
      lo[i] = hi[i] = 0;
      continue;
    }
    int64_t out = ceil_div(in[i], ws[i]);
    int64_t p = (out - 1) * ws[i] + win[i] - in[i];
    if (p < 0) p = 0;
    lo[i] = same ? p / 2 : p - p / 2;
    hi[i] = same ? p - p / 2 : p / 2;
  }
  return 0;
}

/* Explicit padding: a sequence of (low, high) pairs. */
static int pad_pairs(SrInterp *I, SrVal *pad, int64_t *lo, int64_t *hi, int *n) {
  int ok = pad && sr_is_seq(pad) && pad->seq.n <= SR_MAX_RANK;
  for (int i = 0; ok && i < pad->seq.n; i++) {
    SrVal *q = pad->seq.items[i];
    int64_t pr[2];
    int k = 0;
    if (!sr_is_seq(q) || q->seq.n != 2 || q->seq.items[0]->kind != SR_V_INT || q->seq.items[1]->kind != SR_V_INT ||
        sr_val_ints(q, pr, 2, &k) < 0)
      ok = 0;
    else
      lo[i] = pr[0], hi[i] = pr[1];
  }
  if (!ok) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, pad ? pad : sr_none());
    sr_raise(I, "ValueError",
             "padding argument to conv_general_dilated should be a string or a sequence of (low, high) pairs, got %s",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  *n = pad->seq.n;
  return 0;
}

typedef struct ConvArgs {
  SrVal *lhs, *rhs;          /* arrays (borrowed) */
  int64_t ws[SR_MAX_RANK];
  int nws;
  SrVal *padding;            /* a str or pairs */
  int has_ld, has_rd;
  int64_t ld[SR_MAX_RANK], rd[SR_MAX_RANK];
  int nld, nrd;
  SrVal *dn;                 /* None, strings or a ConvDimensionNumbers */
  int have_dn;               /* dn_given is a Dn already */
  Dn dn_given;
  int64_t fgc, bgc;
  SrVal *precision;          /* borrowed or NULL */
  int pref;                  /* -1: None */
  SrVal *out_sharding;       /* counted or NULL */
} ConvArgs;

/* lax.conv_general_dilated on arrays */
static SrVal *conv_bind(SrInterp *I, ConvArgs *c) {
  const SrType *lt = sr_value_type(I, c->lhs), *rt = sr_value_type(I, c->rhs);
  if (!lt || !rt) return NULL;
  int64_t lsh[SR_MAX_RANK], rsh[SR_MAX_RANK];
  for (int i = 0; i < lt->ndim; i++) lsh[i] = lt->dims[i].size;
  for (int i = 0; i < rt->ndim; i++) rsh[i] = rt->dims[i].size;
  Dn d;
  if (c->have_dn) d = c->dn_given;
  else if (dimension_numbers(I, lt->ndim, rt->ndim, lsh, rsh, c->dn, &d) < 0) return NULL;
  int nsp = d.nd - 2;
  if (nsp < 0) return sr_raise(I, "ValueError", "conv_general_dilated needs operands of rank at least 2");
  int strpad = c->padding && c->padding->kind == SR_V_STR;
  if (!c->has_ld) {
    c->nld = nsp;
    for (int i = 0; i < nsp; i++) c->ld[i] = 1;
  } else if (strpad) {
    for (int i = 0; i < c->nld; i++)
      if (c->ld[i] != 1)
        return sr_raise(I, "ValueError",
                        "String padding is not implemented for transposed convolution using this op. Please either "
                        "exactly specify the required padding or use conv_transpose.");
  }
  if (!c->has_rd) {
    c->nrd = rt->ndim - 2;
    for (int i = 0; i < c->nrd; i++) c->rd[i] = 1;
  }
  int64_t lo[SR_MAX_RANK], hi[SR_MAX_RANK];
  int npad = 0;
  if (strpad) {
    int64_t in[SR_MAX_RANK], win[SR_MAX_RANK];
    if (c->nws != nsp || c->nrd != nsp)
      return sr_raise(I, "ValueError",
                      "conv_general_dilated window and window_strides must have the same number of dimensions, but "
                      "got %d and %d",
                      nsp, c->nws);
    for (int i = 0; i < nsp; i++) {
      in[i] = lsh[d.l[2 + i]];
      int64_t k = rsh[d.r[2 + i]];
      win[i] = c->rd[i] == 1 ? k : (1 + c->rd[i] * (k - 1) < 0 ? 0 : 1 + c->rd[i] * (k - 1));
    }
    if (padtype_to_pads(I, in, win, c->ws, nsp, c->padding, lo, hi) < 0) return NULL;
    npad = nsp;
  } else if (pad_pairs(I, c->padding, lo, hi, &npad) < 0) {
    return NULL;
  }
  SrVal *args[2] = {sr_ref(c->lhs), sr_ref(c->rhs)};
  SrVal *prec = NULL;
  if (sr_lax_canon_precision(I, c->precision, &prec) < 0 || sr_auto_insert_reshard(I, 2, args) < 0) {
    sr_unref(prec);
    sr_unref(args[0]);
    sr_unref(args[1]);
    return NULL;
  }
  SrVal *r = sr_bindv(I, SR_P_conv_general_dilated, 2, args, "window_strides", sr_int_tuple(c->ws, c->nws), "padding",
                      sr_lax_pads_val(lo, hi, npad), "lhs_dilation", sr_int_tuple(c->ld, c->nld), "rhs_dilation",
                      sr_int_tuple(c->rd, c->nrd), "dimension_numbers", sr_lax_conv_dn_val(d.l, d.r, d.o, d.nd),
                      "feature_group_count", sr_int(NULL, c->fgc), "batch_group_count", sr_int(NULL, c->bgc),
                      "precision", prec ? prec : sr_none(), "preferred_element_type",
                      c->pref < 0 ? sr_none() : sr_dtype_val(NULL, (SrDtype)c->pref), "out_sharding",
                      c->out_sharding ? sr_ref(c->out_sharding) : sr_none(), NULL);
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

static int opt_ints(SrInterp *I, SrVal *v, int64_t *out, int *n, int *has, const char *what) {
  *has = v && v->kind != SR_V_NONE;
  *n = 0;
  return *has ? sr_ints_arg(I, v, out, n, what) : 0;
}

static SrVal *run_conv(SrInterp *I, ConvArgs *c, SrVal *lhs, SrVal *rhs) {
  SrVal *x = arr(I, lhs), *y = x ? arr(I, rhs) : NULL;
  SrVal *r = NULL;
  if (x && y) {
    c->lhs = x;
    c->rhs = y;
    r = conv_bind(I, c);
  }
  sr_unref(x);
  sr_unref(y);
  sr_unref(c->out_sharding);
  return r;
}

/* What the conv wrappers parse alike, in their order: window_strides and
   padding (p[2], p[3]) and, with dil, lhs_dilation and rhs_dilation
   (p[4], p[5]); then (conv_tail) precision and preferred_element_type. */
static int conv_head(SrInterp *I, ConvArgs *c, SrVal **p, int dil) {
  memset(c, 0, sizeof *c);
  c->fgc = c->bgc = 1;
  if (sr_ints_arg(I, p[2], c->ws, &c->nws, "window_strides") < 0) return -1;
  c->padding = p[3];
  if (!dil) return 0;
  if (opt_ints(I, p[4], c->ld, &c->nld, &c->has_ld, "lhs_dilation") < 0) return -1;
  return opt_ints(I, p[5], c->rd, &c->nrd, &c->has_rd, "rhs_dilation");
}

static int conv_tail(SrInterp *I, ConvArgs *c, SrVal *precision, SrVal *pref) {
  c->precision = precision && precision->kind != SR_V_NONE ? precision : NULL;
  return sr_dtype_arg(I, pref, &c->pref, "conv_general_dilated");
}

static SrVal *lax_conv_general_dilated(SrInterp *I, SrArgs *a) {
  SrVal *p[12];
  if (sr_args_parse(I, a, "conv_general_dilated",
                    "lhs, rhs, window_strides, padding, lhs_dilation=, rhs_dilation=, dimension_numbers=, "
                    "feature_group_count=, batch_group_count=, precision=, preferred_element_type=, out_sharding=",
                    p) < 0)
    return NULL;
  ConvArgs c;
  if (conv_head(I, &c, p, 1) < 0) return NULL;
  c.dn = p[6];
  if (p[7] && sr_as_int(I, p[7], "feature_group_count", &c.fgc) < 0) return NULL;
  if (p[8] && sr_as_int(I, p[8], "batch_group_count", &c.bgc) < 0) return NULL;
  if (conv_tail(I, &c, p[9], p[10]) < 0) return NULL;
  if (sr_api_canon_sharding(I, p[11], "dot_general", &c.out_sharding) < 0) return NULL;
  return run_conv(I, &c, p[0], p[1]);
}

static SrVal *lax_conv(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "conv", "lhs, rhs, window_strides, padding, precision=, preferred_element_type=", p) < 0)
    return NULL;
  ConvArgs c;
  if (conv_head(I, &c, p, 0) < 0 || conv_tail(I, &c, p[4], p[5]) < 0) return NULL;
  return run_conv(I, &c, p[0], p[1]);
}

static SrVal *lax_conv_with_general_padding(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  if (sr_args_parse(I, a, "conv_with_general_padding",
                    "lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=, "
                    "preferred_element_type=",
                    p) < 0)
    return NULL;
  ConvArgs c;
  if (conv_head(I, &c, p, 1) < 0 || conv_tail(I, &c, p[6], p[7]) < 0) return NULL;
  return run_conv(I, &c, p[0], p[1]);
}

/* _conv_transpose_padding(k, s, padding) for 'SAME' (1), 'VALID' (2) or
   the forward conv's pair (lo, hi) */
static void transpose_padding(int64_t k, int64_t s, int mode, int64_t plo, int64_t phi, int64_t *a, int64_t *b) {
  int64_t len, pa;
  if (mode == 1) {
    len = k + s - 2;
    pa = s > k - 1 ? k - 1 : (len + 1) / 2;
  } else if (mode == 2) {
    len = k + s - 2 + (k - s > 0 ? k - s : 0);
    pa = k - 1;
  } else {
    pa = k - plo - 1;
    len = pa + (k - phi - 1);
  }
  *a = pa;
  *b = len - pa;
}

static SrVal *lax_conv_transpose(SrInterp *I, SrArgs *a) {
  SrVal *p[10];
  if (sr_args_parse(I, a, "conv_transpose",
                    "lhs, rhs, strides, padding, rhs_dilation=, dimension_numbers=, transpose_kernel=, precision=, "
                    "preferred_element_type=, use_consistent_padding=",
                    p) < 0)
    return NULL;
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL;
  if (!y) {
    sr_unref(x);
    return NULL;
  }
  SrVal *r = NULL;
  const SrType *lt = sr_value_type(I, x), *rt = sr_value_type(I, y);
  ConvArgs c;
  memset(&c, 0, sizeof c);
  c.fgc = c.bgc = 1;
  int64_t lsh[SR_MAX_RANK], rsh[SR_MAX_RANK], st[SR_MAX_RANK];
  int nst = 0;
  for (int i = 0; i < lt->ndim; i++) lsh[i] = lt->dims[i].size;
  for (int i = 0; i < rt->ndim; i++) rsh[i] = rt->dims[i].size;
  int nd = lt->ndim;
  if (lt->ndim != rt->ndim || nd < 2) {
    r = sr_raise(I, "AssertionError", "%s", "");
    goto done;
  }
  SrVal *dn = p[5];
  SrVal *def = NULL;
  if (!dn || dn->kind == SR_V_NONE) {
    static const char *defs[4][3] = {{"NC", "IO", "NC"}, {"NHC", "HIO", "NHC"}, {"NHWC", "HWIO", "NHWC"},
                                     {"NHWDC", "HWDIO", "NHWDC"}};
    if (nd > 5) {
      r = sr_raise(I, "ValueError", "No 4+ dimensional dimension_number defaults.");
      goto done;
    }
    def = sr_seq(NULL, SR_V_TUPLE, 3);
    for (int i = 0; i < 3; i++) sr_seq_push(NULL, def, sr_str_cstr(NULL, defs[nd - 2][i]));
    dn = def;
  }
  Dn d;
  int rc = dimension_numbers(I, lt->ndim, rt->ndim, lsh, rsh, dn, &d);
  sr_unref(def);
  if (rc < 0) goto done;
  if (sr_ints_arg(I, p[2], st, &nst, "strides") < 0) goto done;
  int nsp = nd - 2, has_rd;
  if (opt_ints(I, p[4], c.rd, &c.nrd, &has_rd, "rhs_dilation") < 0) goto done;
  if (!has_rd) {
    c.nrd = nsp;
    for (int i = 0; i < nsp; i++) c.rd[i] = 1;
  }
  int consistent = p[9] && sr_val_truthy(p[9]);
  SrVal *pad = p[3];
  int mode = pad && pad->kind == SR_V_STR
                 ? (pad->str.n == 4 && memcmp(pad->str.s, "SAME", 4) == 0 ? 1
                    : pad->str.n == 5 && memcmp(pad->str.s, "VALID", 5) == 0 ? 2 : 0)
                 : 0;
  int64_t lo[SR_MAX_RANK], hi[SR_MAX_RANK];
  SrVal *pads = NULL;
  if (consistent || mode) {
    int64_t plo[SR_MAX_RANK] = {0}, phi[SR_MAX_RANK] = {0};
    int np = 0;
    if (!mode) {
      if (pad_pairs(I, pad, plo, phi, &np) < 0) goto done;
    } else if (pad->kind == SR_V_STR && !mode) {
      r = sr_raise(I, "ValueError", "Invalid padding mode: %.*s", (int)pad->str.n, pad->str.s);
      goto done;
    }
    for (int i = 0; i < nst && i < nsp; i++) {
      int64_t k = rsh[d.r[2 + i]];
      int64_t ek = c.rd[i] == 1 ? k : (1 + c.rd[i] * (k - 1) < 0 ? 0 : 1 + c.rd[i] * (k - 1));
      transpose_padding(ek, st[i], mode, plo[i], phi[i], &lo[i], &hi[i]);
    }
    pads = sr_lax_pads_val(lo, hi, nst < nsp ? nst : nsp);
  } else {
    pads = sr_ref(pad);
  }
  SrVal *w = sr_ref(y);
  if (p[6] && sr_val_truthy(p[6])) {
    /* flip the spatial dims and swap the kernel's feature dims */
    int64_t sd[SR_MAX_RANK], perm[SR_MAX_RANK];
    for (int i = 0; i < nsp; i++) sd[i] = d.r[2 + i];
    SrVal *f = sr_lax_rev(I, w, sd, nsp);
    sr_unref(w);
    w = f;
    if (w) {
      for (int i = 0; i < nd; i++) perm[i] = i;
      perm[d.r[0]] = d.r[1];
      perm[d.r[1]] = d.r[0];
      f = sr_lax_transpose(I, w, perm, nd);
      sr_unref(w);
      w = f;
    }
  }
  if (w) {
    c.lhs = x;
    c.rhs = w;
    c.nws = nsp;
    for (int i = 0; i < nsp; i++) c.ws[i] = 1;
    c.padding = pads;
    c.has_ld = 1;
    c.nld = nst;
    memcpy(c.ld, st, sizeof st);
    c.has_rd = 1;
    c.have_dn = 1;
    c.dn_given = d;
    c.precision = p[7] && p[7]->kind != SR_V_NONE ? p[7] : NULL;
    if (sr_dtype_arg(I, p[8], &c.pref, "conv_general_dilated") == 0) r = conv_bind(I, &c);
  }
  sr_unref(w);
  sr_unref(pads);
done:
  sr_unref(x);
  sr_unref(y);
  return r;
}

static int shape_of(SrInterp *I, SrVal *v, int64_t *out, int *n) {
  const SrType *t = v && v->kind != SR_V_TUPLE && v->kind != SR_V_LIST ? sr_value_type(I, v) : NULL;
  if (t) {
    *n = t->ndim;
    for (int i = 0; i < t->ndim; i++) out[i] = t->dims[i].size;
    return 0;
  }
  return sr_ints_arg(I, v, out, n, "shape");
}

static SrVal *lax_conv_dimension_numbers(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "conv_dimension_numbers", "lhs_shape, rhs_shape, dimension_numbers", p) < 0) return NULL;
  int64_t l[SR_MAX_RANK], r[SR_MAX_RANK];
  int nl, nr;
  if (shape_of(I, p[0], l, &nl) < 0 || shape_of(I, p[1], r, &nr) < 0) return NULL;
  Dn d;
  if (dimension_numbers(I, nl, nr, l, r, p[2], &d) < 0) return NULL;
  return dn_tuple(I, &d);
}

static SrVal *lax_conv_dn_class(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "ConvDimensionNumbers", "lhs_spec, rhs_spec, out_spec", p) < 0) return NULL;
  Dn d;
  int n[3];
  for (int i = 0; i < 3; i++)
    if (sr_ints_arg(I, p[i], i == 0 ? d.l : i == 1 ? d.r : d.o, &n[i], "spec") < 0) return NULL;
  if (n[0] != n[1] || n[0] != n[2]) return sr_raise(I, "ValueError", "ConvDimensionNumbers specs must have equal lengths");
  d.nd = n[0];
  return dn_tuple(I, &d);
}

static SrVal *lax_padtype_to_pads(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "padtype_to_pads", "in_shape, window_shape, window_strides, padding", p) < 0) return NULL;
  int64_t in[SR_MAX_RANK], win[SR_MAX_RANK], ws[SR_MAX_RANK], lo[SR_MAX_RANK], hi[SR_MAX_RANK];
  int n1, n2, n3;
  if (sr_ints_arg(I, p[0], in, &n1, "in_shape") < 0 || sr_ints_arg(I, p[1], win, &n2, "window_shape") < 0 ||
      sr_ints_arg(I, p[2], ws, &n3, "window_strides") < 0)
    return NULL;
  if (!p[3] || p[3]->kind != SR_V_STR) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, p[3] ? p[3] : sr_none());
    sr_raise(I, "TypeError", "Unknown padding type: %s.", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  if (padtype_to_pads(I, in, win, ws, n1, p[3], lo, hi) < 0) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, n1);
  for (int i = 0; i < n1; i++) {
    SrVal *q = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, q, sr_int(NULL, lo[i]));
    sr_seq_push(NULL, q, sr_int(NULL, hi[i]));
    sr_seq_push(NULL, l, q);
  }
  return l;
}

/* ---- windowed reductions (windowed_reductions.py) ---- */

/* The value of a concrete scalar init_value; 0 when it is not one. */
static int concrete_scalar(SrInterp *I, SrVal *v, double *out) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL || v->kind == SR_V_FLOAT) return sr_as_float(I, v, "init_value", out) == 0;
  const SrType *t = sr_value_type(I, v);
  if (!t || t->ndim) return 0;
  if (sr_as_float(I, v, "init_value", out) == 0) return 1;
  sr_exc_clear(I);
  return 0;
}

static int is_builtin(SrVal *f, const char *qualname) {
  SrVal *b = sr_lookup_qualname(qualname);
  return b && f == b;
}

/* Whether the computation's output tree is the operands' (else
   windowed_reductions.py's ValueError, raised). */
static int same_tree(SrInterp *I, SrVal *ops, SrVal *out_tree) {
  SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
  int k = 0;
  SrVal *no = sr_pytree_numbered(ops, &k);
  sr_treedef_str(&a, no, sr_pytree_children);
  sr_treedef_str(&b, out_tree, sr_pytree_children);
  int same = strcmp(sr_buf_str(&a), sr_buf_str(&b)) == 0;
  if (!same)
    sr_raise(I, "ValueError", "reduce_window output must have the same tree structure as the operands %s vs. %s",
             sr_buf_str(&a), sr_buf_str(&b));
  sr_unref(no);
  sr_buf_free(&a);
  sr_buf_free(&b);
  return same;
}

/* The general path of lax.reduce_window (_reduce_window without a monoid
   reducer): operands and init values flattened, the computation traced on
   the init values' avals (_variadic_reduction_jaxpr), reduce_window_p
   bound, the results in the operands' structure. */
static SrVal *rw_general(SrInterp *I, SrVal *ops, SrVal *inits, SrVal *computation, const int64_t *win, int nw,
                         const int64_t *st, int nst, const int64_t *lo, const int64_t *hi, int npad, const int64_t *bd,
                         int nbd, const int64_t *wd, int nwd) {
  SrVal *fo = sr_pytree_flatten(I, ops), *fi = fo ? sr_pytree_flatten(I, inits) : NULL, *r = NULL;
  if (!fi) goto out;
  int n = fo->seq.n;
  if (n != fi->seq.n) {
    sr_raise(I, "ValueError", "Must have same total number of operands as init_values:  %d vs. %d", n, fi->seq.n);
    goto out;
  }
  if (n == 0) {
    sr_raise(I, "ValueError", "reduce_window must have at least one operand.");
    goto out;
  }
  SrVal **in = sr_xcalloc(2 * (size_t)n, sizeof *in);
  const SrType **types = sr_xcalloc((size_t)n, sizeof *types);
  int ok = 1;
  for (int i = 0; i < n && ok; i++) {
    in[i] = arr(I, fo->seq.items[i]);
    in[n + i] = in[i] ? arr(I, fi->seq.items[i]) : NULL;
    if (!in[n + i] || !(types[i] = sr_value_type(I, in[n + i]))) ok = 0;
  }
  SrJaxpr *j = NULL;
  SrVal *out_tree = NULL, *captured = NULL;
  if (ok) {
    SrVal *avals = sr_api_abstract_like(inits, types, n);
    SrVal *args[2] = {avals, avals};
    j = sr_trace_fn(I, computation, 2, args, 0, NULL, NULL, SR_TRACE_CONSTVARS, &out_tree, &captured);
    sr_unref(avals);
  }
  if (j && captured && captured->seq.n > 0) {
    sr_raise(I, "NotImplementedError",
             "Reduction computations can't close over Tracers. Please open an issue at https://github.com/jax-ml/jax.");
  } else if (j && !same_tree(I, ops, out_tree)) {
    /* already raised */
  } else if (j && sr_auto_insert_reshard(I, n, in) == 0) {
    SrVal *res = sr_bindv(I, SR_P_reduce_window, 2 * n, in, "base_dilation", sr_int_tuple(bd, nbd), "consts",
                          sr_seq(NULL, SR_V_TUPLE, 0), "jaxpr", sr_jaxpr_val(NULL, j), "padding",
                          sr_lax_pads_val(lo, hi, npad), "window_dilation", sr_int_tuple(wd, nwd), "window_dimensions",
                          sr_int_tuple(win, nw), "window_strides", sr_int_tuple(st, nst), NULL);
    if (res) r = sr_pytree_unflatten(ops, res);
    sr_unref(res);
  }
  if (j) sr_program_unref(j->prog);
  sr_unref(out_tree);
  sr_unref(captured);
  for (int i = 0; i < 2 * n; i++) sr_unref(in[i]);
  free(in);
  free(types);
out:
  sr_unref(fo);
  sr_unref(fi);
  return r;
}

/* lax.reduce_window(operand, init_value, computation, window_dimensions,
   window_strides=None, padding='VALID', base_dilation=None,
   window_dilation=None): lax.add, lax.max and lax.min at their identities
   bind reduce_window_sum, _max and _min (_get_monoid_window_reducer). */
static SrVal *lax_reduce_window(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  if (sr_args_parse(I, a, "reduce_window",
                    "operand, init_value, computation, window_dimensions, window_strides=, padding=, base_dilation=, "
                    "window_dilation=",
                    p) < 0)
    return NULL;
  int64_t win[SR_MAX_RANK], st[SR_MAX_RANK], bd[SR_MAX_RANK], wd[SR_MAX_RANK], lo[SR_MAX_RANK], hi[SR_MAX_RANK];
  int nw, nst = 0, nbd = 0, nwd = 0, has, npad = 0;
  if (sr_ints_arg(I, p[3], win, &nw, "window_dimensions") < 0) return NULL;
  if (opt_ints(I, p[4], st, &nst, &has, "window_strides") < 0) return NULL;
  int has_st = has;
  if (opt_ints(I, p[6], bd, &nbd, &has, "base_dilation") < 0) return NULL;
  if (!has)
    for (nbd = 0; nbd < nw; nbd++) bd[nbd] = 1;
  int has_wd;
  if (opt_ints(I, p[7], wd, &nwd, &has_wd, "window_dilation") < 0) return NULL;
  /* a tree of operands: the first leaf gives the shape for the padding */
  SrVal *leaves = sr_pytree_flatten(I, p[0]);
  if (!leaves) return NULL;
  int tree = leaves->seq.n != 1 || leaves->seq.items[0] != p[0], nleaves = leaves->seq.n;
  SrVal *x = nleaves ? arr(I, leaves->seq.items[0]) : NULL;
  sr_unref(leaves);
  if (!x) return nleaves ? NULL : sr_raise(I, "ValueError", "reduce_window must have at least one operand.");
  const SrType *xt = sr_value_type(I, x);
  SrVal *r = NULL;
  SrVal *pad = p[5];
  if (!pad || pad->kind == SR_V_STR) {
    int64_t in[SR_MAX_RANK], dw[SR_MAX_RANK], sv[SR_MAX_RANK];
    for (int i = 0; i < xt->ndim; i++) in[i] = xt->dims[i].size;
    for (int i = 0; i < nw; i++) {
      dw[i] = has_wd ? (1 + wd[i] * (win[i] - 1) < 0 ? 0 : 1 + wd[i] * (win[i] - 1)) : win[i];
      sv[i] = has_st ? st[i] : 1;
    }
    SrVal *valid = pad ? NULL : sr_str_cstr(NULL, "VALID");
    /* zip(in_shape, window_shape, window_strides): the shortest */
    int nz = xt->ndim < nw ? xt->ndim : nw;
    if (has_st && nst < nz) nz = nst;
    int rc = padtype_to_pads(I, in, dw, sv, nz, pad ? pad : valid, lo, hi);
    sr_unref(valid);
    if (rc < 0) goto done;
    npad = nz;
  } else if (pad_pairs(I, pad, lo, hi, &npad) < 0) {
    goto done;
  }
  if (!has_st)
    for (nst = 0; nst < nw; nst++) st[nst] = 1;
  if (!has_wd)
    for (nwd = 0; nwd < nw; nwd++) wd[nwd] = 1;
  double iv;
  int prim = -1;
  if (!tree && concrete_scalar(I, p[1], &iv)) {
    SrDtype dt = xt->dtype;
    int fl = sr_dtype_is_float(dt);
    /* lax._get_max_identity / _get_min_identity */
    int bits = sr_dtype_info(dt)->bits, k = sr_dtype_kind(dt);
    double lowest = fl ? -INFINITY : k == SR_DK_INT ? -ldexp(1, bits - 1) : k == SR_DK_UINT ? 0 : 0;
    double highest = fl ? INFINITY : k == SR_DK_INT ? ldexp(1, bits - 1) - 1 : k == SR_DK_UINT ? ldexp(1, bits) - 1 : 1;
    if (is_builtin(p[2], "jax.lax.add") && iv == 0) prim = SR_P_reduce_window_sum;
    else if (is_builtin(p[2], "jax.lax.max") && iv == lowest) prim = SR_P_reduce_window_max;
    else if (is_builtin(p[2], "jax.lax.min") && iv == highest) prim = SR_P_reduce_window_min;
  }
  if (prim < 0) {
    r = rw_general(I, p[0], p[1], p[2], win, nw, st, nst, lo, hi, npad, bd, nbd, wd, nwd);
    goto done;
  }
  r = sr_bindv(I, prim, 1, &x, "window_dimensions", sr_int_tuple(win, nw), "window_strides", sr_int_tuple(st, nst),
               "padding", sr_lax_pads_val(lo, hi, npad), "base_dilation", sr_int_tuple(bd, nbd), "window_dilation",
               sr_int_tuple(wd, nwd), NULL);
done:
  sr_unref(x);
  return r;
}

/* ---- jnp.convolve, jnp.correlate (numpy/lax_numpy.py's _conv) ---- */

typedef struct Conv1d {
  int mode;        /* 0 full, 1 same, 2 valid */
  int correlate;
  int pref;        /* -1: None */
} Conv1d;

static SrVal *getitem(SrInterp *I, SrVal *x, SrVal *key) {
  const SrLangOps *ops = sr_ops(x);
  SrVal *r = ops && ops->getitem ? ops->getitem(I, x, key) : sr_raise(I, "TypeError", "not subscriptable");
  sr_unref(key);
  return r;
}

static SrVal *tuple3(SrVal *a, SrVal *b, SrVal *c) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 3);
  sr_seq_push(NULL, t, a);
  sr_seq_push(NULL, t, b);
  sr_seq_push(NULL, t, c);
  return t;
}

/* the jitted body: x, y are 1-d arrays */
static SrVal *conv1d_body(SrInterp *I, SrArgs *a) {
  const Conv1d *c = sr_current_builtin(I)->data;
  const char *op = c->correlate ? "correlate" : "convolve";
  SrVal *xy[2] = {a->v[0], a->v[1]};
  if (sr_jnp_promote(I, 2, xy, op) < 0) return NULL; /* xy: new references */
  SrVal *r = NULL, *y2 = NULL, *xe = NULL, *ye = NULL, *o = NULL;
  SrDtype dt = sr_value_type(I, xy[0])->dtype;
  if (c->pref < 0 && !sr_dtype_is_inexact(dt)) {
    /* promote_dtypes_inexact */
    SrDtype to = I->jax->enable_x64 ? SR_F64 : SR_F32;
    for (int i = 0; i < 2; i++) {
      SrVal *v = sr_jnp_convert(I, xy[i], to, sr_value_type(I, xy[i])->weak);
      sr_unref(xy[i]);
      xy[i] = v;
      if (!v) goto done;
    }
  }
  const SrType *xt = sr_value_type(I, xy[0]), *yt = sr_value_type(I, xy[1]);
  if (xt->dims[0].size == 0 || yt->dims[0].size == 0) {
    r = sr_raise(I, "ValueError", "%s: inputs cannot be empty, got shapes (%lld,) and (%lld,).", op,
                 (long long)xt->dims[0].size, (long long)yt->dims[0].size);
    goto done;
  }
  int reverse = 0;
  if (xt->dims[0].size < yt->dims[0].size) {
    SrVal *t = xy[0];
    xy[0] = xy[1];
    xy[1] = t;
    reverse = c->correlate;
  }
  if (c->correlate) {
    if (sr_dtype_kind(sr_value_type(I, xy[1])->dtype) == SR_DK_COMPLEX) {
      y2 = sr_call1(I, sr_lookup_qualname("jax.numpy.conj"), xy[1]);
      if (!y2) goto done;
      sr_unref(xy[1]);
      xy[1] = y2;
      y2 = NULL;
    }
  } else {
    y2 = sr_call1(I, sr_lookup_qualname("jax.numpy.flip"), xy[1]);
    if (!y2) goto done;
    sr_unref(xy[1]);
    xy[1] = y2;
    y2 = NULL;
  }
  int64_t k = sr_value_type(I, xy[1])->dims[0].size, lo, hi;
  if (c->mode == 2) lo = hi = 0;
  else if (c->mode == 1) lo = k / 2, hi = k - k / 2 - 1;
  else lo = hi = k - 1;
  xe = getitem(I, xy[0], tuple3(sr_none(), sr_none(), sr_slice_new(sr_none(), sr_none(), sr_none())));
  ye = xe ? getitem(I, xy[1], tuple3(sr_none(), sr_none(), sr_slice_new(sr_none(), sr_none(), sr_none()))) : NULL;
  if (!ye) goto done;
  SrVal *pad = sr_seq(NULL, SR_V_LIST, 1), *q = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, q, sr_int(NULL, lo));
  sr_seq_push(NULL, q, sr_int(NULL, hi));
  sr_seq_push(NULL, pad, q);
  ConvArgs ca;
  memset(&ca, 0, sizeof ca);
  ca.fgc = ca.bgc = 1;
  ca.lhs = xe;
  ca.rhs = ye;
  ca.nws = 1;
  ca.ws[0] = 1;
  ca.padding = pad;
  ca.pref = c->pref;
  o = conv_bind(I, &ca);
  sr_unref(pad);
  if (!o) goto done;
  r = getitem(I, o, tuple3(sr_int(NULL, 0), sr_int(NULL, 0),
                           reverse ? sr_slice_new(sr_none(), sr_none(), sr_int(NULL, -1))
                                   : sr_slice_new(sr_none(), sr_none(), sr_none())));
done:
  sr_unref(xy[0]);
  sr_unref(xy[1]);
  sr_unref(xe);
  sr_unref(ye);
  sr_unref(o);
  return r;
}

static SrVal *jnp_conv1d(SrInterp *I, SrArgs *a, int correlate) {
  const char *op = correlate ? "correlate" : "convolve";
  SrVal *p[5];
  if (sr_args_parse(I, a, op, correlate ? "a, v, mode=, *, precision=, preferred_element_type="
                                        : "a, v, mode=, *, precision=, preferred_element_type=", p) < 0)
    return NULL;
  Conv1d c = {correlate ? 2 : 0, correlate, -1};
  if (p[2]) {
    const char *m = p[2]->kind == SR_V_STR ? sr_as_str(I, p[2], "mode") : NULL;
    if (m && strcmp(m, "full") == 0) c.mode = 0;
    else if (m && strcmp(m, "same") == 0) c.mode = 1;
    else if (m && strcmp(m, "valid") == 0) c.mode = 2;
    else return sr_raise(I, "ValueError", "mode must be one of ['full', 'same', 'valid']");
  }
  if (p[3] && p[3]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "%s: only precision=None is implemented", op);
  if (sr_dtype_arg(I, p[4], &c.pref, op) < 0) return NULL;
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL;
  SrVal *r = NULL;
  if (x && y) {
    if (sr_value_type(I, x)->ndim != 1 || sr_value_type(I, y)->ndim != 1) {
      r = sr_raise(I, "ValueError", "%s() only support 1-dimensional inputs.", op);
    } else {
      Conv1d *d = sr_xmalloc(sizeof *d);
      *d = c;
      SrVal *args[2] = {x, y};
      r = sr_api_jit(I, op, conv1d_body, d, 2, args);
    }
  }
  sr_unref(x);
  sr_unref(y);
  return r;
}

static SrVal *jnp_convolve(SrInterp *I, SrArgs *a) { return jnp_conv1d(I, a, 0); }
static SrVal *jnp_correlate(SrInterp *I, SrArgs *a) { return jnp_conv1d(I, a, 1); }

/* ---- conv_general_dilated_patches and _local (lax/other.py) ---- */

/* The registered function qn called on borrowed positional and keyword
   values (kw a NULL-terminated list of names, one value each). */
static SrVal *qcall(SrInterp *I, const char *qn, int n, SrVal **v, const char *const *kw, SrVal **kwv) {
  SrVal *fn = sr_lookup_qualname(qn);
  if (!fn) return sr_raise(I, "RuntimeError", "%s is not registered", qn);
  const char *names[12];
  int nkw = 0;
  for (; kw && kw[nkw]; nkw++) names[nkw] = sr_intern_cstr(kw[nkw]);
  SrArgs a = {n, v, nkw, names, kwv, NULL};
  return sr_call(I, fn, &a);
}

static SrVal *int_tuple_of(int n, const int64_t *v) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_int(NULL, v[i]));
  return t;
}

/* The three specs of a ConvDimensionNumbers (conv_dimension_numbers'). */
static int dn_specs(SrInterp *I, SrVal *dn, int64_t *l, int64_t *r, int64_t *o, int *n) {
  SrVal *items = dn ? sr_iterate(I, dn) : NULL;
  if (!items) return -1;
  int nn[3] = {0, 0, 0}, rc = items->seq.n == 3 ? 0 : -1;
  for (int i = 0; rc == 0 && i < 3; i++)
    rc = sr_ints_arg(I, items->seq.items[i], i == 0 ? l : i == 1 ? r : o, &nn[i], "dimension_numbers");
  sr_unref(items);
  *n = nn[0];
  return rc;
}

/* conv_general_dilated_patches: a grouped conv whose kernel is the
   identity over the window's elements, one output channel per element */
static SrVal *conv_patches(SrInterp *I, SrVal *lhs, SrVal *filter_shape, SrVal *window_strides, SrVal *padding,
                           SrVal *lhs_dilation, SrVal *rhs_dilation, SrVal *dimension_numbers, SrVal *precision,
                           SrVal *preferred) {
  int64_t fs[SR_MAX_RANK], rs[SR_MAX_RANK + 2];
  int nf;
  if (sr_ints_arg(I, filter_shape, fs, &nf, "filter_shape") < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, lhs, -1);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  if (!t) {
    sr_unref(x);
    return NULL;
  }
  int64_t xs[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) xs[i] = t->dims[i].size;
  rs[0] = rs[1] = 1;
  for (int i = 0; i < nf; i++) rs[i + 2] = fs[i];
  SrVal *a[3] = {int_tuple_of(t->ndim, xs), int_tuple_of(nf + 2, rs), dimension_numbers ? dimension_numbers : sr_none()};
  SrVal *dn = qcall(I, "jax.lax.conv_dimension_numbers", 3, a, NULL, NULL);
  sr_unref(a[0]);
  sr_unref(a[1]);
  int64_t lspec[SR_MAX_RANK], rspec[SR_MAX_RANK], ospec[SR_MAX_RANK];
  int nl;
  if (dn_specs(I, dn, lspec, rspec, ospec, &nl) < 0) {
    sr_unref(dn);
    sr_unref(x);
    return NULL;
  }
  int64_t S = 1, C = xs[lspec[1]];
  for (int i = 0; i < nf; i++) S *= fs[i];
  /* rhs = eye(S) broadcast to (C, S, S), reshaped to (C*S, 1, *filter_shape),
     its O and I axes moved to the rhs spec's */
  SrVal *ev[1] = {sr_int(NULL, S)};
  SrVal *ekw[1] = {sr_dtype_val(NULL, t->dtype)};
  static const char *const dtkw[] = {"dtype", NULL};
  SrVal *eye = qcall(I, "jax.numpy.eye", 1, ev, dtkw, ekw);
  sr_unref(ev[0]);
  sr_unref(ekw[0]);
  int64_t bshape[3] = {C, S, S}, bd[2] = {1, 2};
  SrVal *rb = eye ? sr_lax_broadcast_in_dim(I, eye, bshape, 3, bd, 2, NULL) : NULL;
  sr_unref(eye);
  int64_t kshape[SR_MAX_RANK + 2];
  kshape[0] = C * S;
  kshape[1] = 1;
  for (int i = 0; i < nf; i++) kshape[i + 2] = fs[i];
  SrVal *rr = rb ? sr_lax_reshape(I, rb, kshape, nf + 2, NULL) : NULL;
  sr_unref(rb);
  SrVal *rhs = NULL;
  if (rr) {
    int64_t src[2] = {0, 1}, dst[2] = {rspec[0], rspec[1]};
    SrVal *mv[3] = {rr, int_tuple_of(2, src), int_tuple_of(2, dst)};
    rhs = qcall(I, "jax.numpy.moveaxis", 3, mv, NULL, NULL);
    sr_unref(mv[1]);
    sr_unref(mv[2]);
    sr_unref(rr);
  }
  SrVal *r = NULL;
  if (rhs) {
    SrVal *prec = NULL;
    if (precision && precision->kind != SR_V_NONE) {
      SrVal *cls = sr_lookup_qualname("jax.lax.Precision");
      SrVal *def = cls ? sr_getattr(I, cls, "DEFAULT") : NULL;
      if (!def) {
        sr_unref(rhs);
        sr_unref(dn);
        sr_unref(x);
        return NULL;
      }
      prec = sr_seq(NULL, SR_V_TUPLE, 2);
      sr_seq_push(NULL, prec, sr_ref(precision));
      sr_seq_push(NULL, prec, def);
    }
    SrVal *cv[4] = {x, rhs, window_strides, padding};
    SrVal *ckw[6] = {lhs_dilation ? lhs_dilation : sr_none(), rhs_dilation ? rhs_dilation : sr_none(), dn,
                     prec ? prec : sr_none(), sr_int(NULL, C), preferred ? preferred : sr_none()};
    static const char *const names[] = {"lhs_dilation", "rhs_dilation", "dimension_numbers", "precision",
                                        "feature_group_count", "preferred_element_type", NULL};
    r = qcall(I, "jax.lax.conv_general_dilated", 4, cv, names, ckw);
    sr_unref(ckw[4]);
    sr_unref(prec);
    sr_unref(rhs);
  }
  sr_unref(dn);
  sr_unref(x);
  return r;
}

static SrVal *lax_conv_general_dilated_patches(SrInterp *I, SrArgs *a) {
  SrVal *p[9];
  if (sr_args_parse(I, a, "conv_general_dilated_patches",
                    "lhs, filter_shape, window_strides, padding, lhs_dilation=, rhs_dilation=, dimension_numbers=, "
                    "precision=, preferred_element_type=",
                    p) < 0)
    return NULL;
  return conv_patches(I, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
}

/* conv_general_dilated_local: the patches contracted with the per-location
   kernel by a dot_general over the channel and batched over the spatial
   dimensions */
static SrVal *lax_conv_general_dilated_local(SrInterp *I, SrArgs *a) {
  SrVal *p[9];
  if (sr_args_parse(I, a, "conv_general_dilated_local",
                    "lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=, rhs_dilation=, "
                    "dimension_numbers=, precision=",
                    p) < 0)
    return NULL;
  SrVal *lhs_prec = NULL;
  if (p[8] && p[8]->kind != SR_V_NONE) {
    if (sr_is_seq(p[8]) && p[8]->seq.n == 2) lhs_prec = sr_ref(p[8]->seq.items[0]);
    else if (p[8]->kind == SR_V_TUPLE) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, p[8]);
      sr_raise(I, "ValueError", "Unsupported precision for conv_general_dilated_local: %s", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    } else {
      /* canonicalize_precision: one precision is the pair of it */
      lhs_prec = sr_ref(p[8]);
    }
  }
  SrVal *patches = conv_patches(I, p[0], p[4], p[2], p[3], p[5], p[6], p[7], lhs_prec, NULL);
  sr_unref(lhs_prec);
  if (!patches) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  int64_t fs[SR_MAX_RANK], xs[SR_MAX_RANK], rs[SR_MAX_RANK + 2];
  int nf;
  SrVal *r = NULL, *dn = NULL;
  if (t && sr_ints_arg(I, p[4], fs, &nf, "filter_shape") == 0) {
    for (int i = 0; i < t->ndim; i++) xs[i] = t->dims[i].size;
    rs[0] = rs[1] = 1;
    for (int i = 0; i < nf; i++) rs[i + 2] = fs[i];
    SrVal *ca[3] = {int_tuple_of(t->ndim, xs), int_tuple_of(nf + 2, rs), p[7] ? p[7] : sr_none()};
    dn = qcall(I, "jax.lax.conv_dimension_numbers", 3, ca, NULL, NULL);
    sr_unref(ca[0]);
    sr_unref(ca[1]);
  }
  int64_t lspec[SR_MAX_RANK], rspec[SR_MAX_RANK], ospec[SR_MAX_RANK];
  int no;
  if (dn && dn_specs(I, dn, lspec, rspec, ospec, &no) == 0) {
    /* lhs batch dims: the out spec's spatial dims, sorted; the rhs's in
       the same order */
    int nb = no - 2;
    int64_t lb[SR_MAX_RANK], rb[SR_MAX_RANK];
    int order[SR_MAX_RANK];
    for (int i = 0; i < nb; i++) order[i] = i;
    for (int i = 1; i < nb; i++)
      for (int j = i; j > 0 && ospec[2 + order[j - 1]] > ospec[2 + order[j]]; j--) {
        int tmp = order[j];
        order[j] = order[j - 1];
        order[j - 1] = tmp;
      }
    for (int i = 0; i < nb; i++) {
      lb[i] = ospec[2 + order[i]];
      rb[i] = rspec[2 + order[i]];
    }
    int64_t lc = ospec[1], rc = rspec[1];
    SrVal *dims = sr_seq(NULL, SR_V_TUPLE, 2), *c = sr_seq(NULL, SR_V_TUPLE, 2), *b = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, c, int_tuple_of(1, &lc));
    sr_seq_push(NULL, c, int_tuple_of(1, &rc));
    sr_seq_push(NULL, b, int_tuple_of(nb, lb));
    sr_seq_push(NULL, b, int_tuple_of(nb, rb));
    sr_seq_push(NULL, dims, c);
    sr_seq_push(NULL, dims, b);
    SrVal *dv[2] = {patches, p[1]};
    SrVal *dkw[2] = {dims, p[8] ? p[8] : sr_none()};
    static const char *const names[] = {"dimension_numbers", "precision", NULL};
    SrVal *out = qcall(I, "jax.lax.dot_general", 2, dv, names, dkw);
    sr_unref(dims);
    if (out) {
      int64_t src[2] = {-2, -1}, dst[2] = {ospec[0], ospec[1]};
      SrVal *mv[3] = {out, int_tuple_of(2, src), int_tuple_of(2, dst)};
      r = qcall(I, "jax.numpy.moveaxis", 3, mv, NULL, NULL);
      sr_unref(mv[1]);
      sr_unref(mv[2]);
      sr_unref(out);
    }
  }
  sr_unref(dn);
  sr_unref(x);
  sr_unref(patches);
  return r;
}

void sr_lax_conv_api_init(void) {
  sr_def("jax.lax.conv_general_dilated", lax_conv_general_dilated,
         "conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None, "
         "dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None, "
         "preferred_element_type=None): the general convolution (a conv_general_dilated equation)");
  sr_def("jax.lax.conv", lax_conv,
         "conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None): an NCHW/OIHW "
         "convolution");
  sr_def("jax.lax.conv_with_general_padding", lax_conv_with_general_padding,
         "conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation): a convolution "
         "with dilations");
  sr_def("jax.lax.conv_transpose", lax_conv_transpose,
         "conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None, "
         "transpose_kernel=False): a fractionally strided convolution");
  sr_def("jax.lax.conv_general_dilated_patches", lax_conv_general_dilated_patches,
         "conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None, "
         "rhs_dilation=None, dimension_numbers=None, precision=None, preferred_element_type=None): each window's "
         "elements as channels (a grouped conv_general_dilated with an identity kernel)");
  sr_def("jax.lax.conv_general_dilated_local", lax_conv_general_dilated_local,
         "conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None, "
         "rhs_dilation=None, dimension_numbers=None, precision=None): a convolution with a kernel per output "
         "location (patches and a dot_general)");
  sr_def("jax.lax.conv_dimension_numbers", lax_conv_dimension_numbers,
         "conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers): the ConvDimensionNumbers, as a tuple "
         "(lhs_spec, rhs_spec, out_spec)");
  sr_def("jax.lax.ConvDimensionNumbers", lax_conv_dn_class,
         "ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec): a convolution's dimension numbers (a tuple of the "
         "three specs)");
  sr_def("jax.lax.padtype_to_pads", lax_padtype_to_pads,
         "padtype_to_pads(in_shape, window_shape, window_strides, padding): 'SAME', 'SAME_LOWER' or 'VALID' as "
         "(low, high) pairs");
  sr_def("jax.numpy.convolve", jnp_convolve,
         "convolve(a, v, mode='full', *, precision=None, preferred_element_type=None): the discrete linear "
         "convolution of two 1-d arrays (a conv_general_dilated)");
  sr_def("jax.numpy.correlate", jnp_correlate,
         "correlate(a, v, mode='valid', *, precision=None, preferred_element_type=None): the cross-correlation of "
         "two 1-d arrays (a conv_general_dilated)");
  sr_def("jax.lax.reduce_window", lax_reduce_window,
         "reduce_window(operand, init_value, computation, window_dimensions, window_strides=None, padding='VALID', "
         "base_dilation=None, window_dilation=None): computation (lax.add, lax.max, lax.min) over windows");
}

/* image.c: jax.image (jax/_src/image/scale.py): resize and
 * scale_and_translate for the methods nearest, linear (bilinear,
 * trilinear, triangle), cubic (bicubic, tricubic; cubic-pytorch with
 * antialias, which is cubic; without it OpenCV's kernel with edge
 * padding), lanczos3, lanczos5 and area.
 *
 * Written with scale.py's calls in its order: compute_weight_mat builds
 * one (input_size, output_size) weight matrix per resized dimension from
 * the kernel at the distances between the sample points and the input
 * pixels (scaled by the inverse scale when antialiasing a downsample),
 * normalized and zeroed outside the input, and one einsum (precision
 * HIGHEST by default) contracts the image with all of them.  resize is
 * JAX's jit named _resize with its shape, method, antialias and precision
 * static; its scale and translation are Python floats, so the weights'
 * dtype is the default float.  nearest gathers at floor((i + 0.5) * m / n).
 * Registered by sr_image_init (jax.h).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/mem.h"

#define KEEP(v) sr_nn_keep(s, v)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define C1(q, x) sr_nn_call1(s, q, x)
#define C2(q, x, y) sr_nn_call2(s, q, x, y)
#define C3(q, x, y, z) sr_nn_call3(s, q, x, y, z)
#define FL(d) sr_nn_float(s, d)
#define INT(i) sr_nn_int(s, i)

enum { M_NEAREST, M_LINEAR, M_LANCZOS3, M_LANCZOS5, M_CUBIC, M_CUBIC_PYTORCH, M_AREA };

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }

static int str_is(const SrVal *v, const char *w) {
  return v->kind == SR_V_STR && v->str.n == strlen(w) && memcmp(v->str.s, w, v->str.n) == 0;
}

/* ResizeMethod.from_string; -1 with JAX's error raised */
static int method_of(SrInterp *I, SrVal *m) {
  static const struct {
    const char *s;
    int m;
  } names[] = {{"nearest", M_NEAREST},     {"linear", M_LINEAR},         {"bilinear", M_LINEAR},
               {"trilinear", M_LINEAR},    {"triangle", M_LINEAR},       {"lanczos3", M_LANCZOS3},
               {"lanczos5", M_LANCZOS5},   {"cubic", M_CUBIC},           {"bicubic", M_CUBIC},
               {"tricubic", M_CUBIC},      {"cubic-pytorch", M_CUBIC_PYTORCH}, {"bicubic-pytorch", M_CUBIC_PYTORCH},
               {"area", M_AREA}};
  if (m->kind == SR_V_STR) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (str_is(m, names[i].s)) return names[i].m;
    sr_raise(I, "ValueError", "Unknown resize method \"%.*s\"", (int)m->str.n, m->str.s);
    return -1;
  }
  sr_raise(I, "TypeError", "method must be a string naming a resize method (jax.image.ResizeMethod is not implemented)");
  return -1;
}

/* a shape as Python prints a tuple */
static void dims_str(SrBuf *b, const int64_t *d, int n) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < n; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)d[i]);
  sr_buf_puts(b, n == 1 ? ",)" : ")");
}

static int check_rank(SrInterp *I, const int64_t *shape, int nd, const SrType *t) {
  if (nd == t->ndim) return 0;
  int64_t in[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) in[i] = t->dims[i].size;
  SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
  dims_str(&a, shape, nd);
  dims_str(&b, in, t->ndim);
  sr_raise(I, "ValueError", "shape must have length equal to the number of dimensions of x;  %s vs %s", a.p, b.p);
  sr_buf_free(&a);
  sr_buf_free(&b);
  return -1;
}

/* x[key] (key a new reference) */
static SrVal *at(SrNnScope *s, SrVal *x, SrVal *key) {
  KEEP(key);
  return x ? KEEP(sr_getitem(s->I, x, key)) : NULL;
}

static SrVal *int_list(const int64_t *v, int n) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, l, sr_int(NULL, v[i]));
  return l;
}

static SrVal *all(void) { return sr_slice_new(sr_none(), sr_none(), sr_none()); }
/* v[np.newaxis, :] */
static SrVal *row(SrNnScope *s, SrVal *v) { return at(s, v, sr_pair(sr_none(), all())); }
/* v[:, np.newaxis] */
static SrVal *col(SrNnScope *s, SrVal *v) { return at(s, v, sr_pair(all(), sr_none())); }

static SrVal *where(SrNnScope *s, SrVal *c, SrVal *x, SrVal *y) { return C3("jax.numpy.where", c, x, y); }

/* jnp.arange(n, dtype=dt) (one argument: an iota) */
static SrVal *arange1(SrNnScope *s, int64_t n, SrDtype dt) {
  SrVal *v = INT(n), *d = KEEP(sr_dtype_val(NULL, dt));
  const char *kw[1] = {"dtype"};
  return sr_nn_call(s, "jax.numpy.arange", 1, &v, 1, kw, &d);
}

/* jnp.arange(lo, hi, dtype=dt) */
static SrVal *arange2(SrNnScope *s, int64_t lo, int64_t hi, SrDtype dt) {
  SrVal *v[2] = {INT(lo), INT(hi)}, *d = KEEP(sr_dtype_val(NULL, dt));
  const char *kw[1] = {"dtype"};
  return sr_nn_call(s, "jax.numpy.arange", 2, v, 1, kw, &d);
}

/* ---- the kernels ----
   Each line binds one operation at most, so that the equations come in
   Python's order of evaluation (C leaves the order of arguments open). */

static SrVal *lanczos(SrNnScope *s, double radius, SrVal *x) {
  SrVal *y = OP(MUL, FL(radius), C1("jax.numpy.sin", OP(MUL, FL(M_PI), x)));
  SrVal *b = OP(DIV, OP(MUL, FL(M_PI), x), FL(radius));
  y = OP(MUL, y, C1("jax.numpy.sin", b));
  SrVal *big = OP(GT, x, FL(1e-3));
  SrVal *nz = OP(NE, x, INT(0));
  SrVal *den = OP(MUL, FL(M_PI * M_PI), OP(POW, x, INT(2)));
  den = where(s, nz, den, INT(1));
  SrVal *out = where(s, big, C2("jax.numpy.divide", y, den), INT(1));
  SrVal *outside = OP(GT, x, FL(radius));
  return where(s, outside, FL(0.), out);
}

static SrVal *keys_cubic(SrNnScope *s, SrVal *x) {
  SrVal *out = OP(ADD, OP(MUL, OP(MUL, OP(SUB, OP(MUL, FL(1.5), x), FL(2.5)), x), x), FL(1.));
  SrVal *c = OP(GE, x, FL(1.));
  SrVal *far = OP(ADD, OP(MUL, OP(SUB, OP(MUL, OP(ADD, OP(MUL, FL(-0.5), x), FL(2.5)), x), FL(4.)), x), FL(2.));
  out = where(s, c, far, out);
  c = OP(GE, x, FL(2.));
  return where(s, c, FL(0.), out);
}

/* the cubic kernel with a = -0.75 (OpenCV's, PyTorch's without antialias) */
static SrVal *opencv_cubic(SrNnScope *s, SrVal *x) {
  const double a = -0.75;
  SrVal *out = OP(ADD, OP(MUL, OP(MUL, OP(SUB, OP(MUL, FL(a + 2.0), x), FL(a + 3.0)), x), x), FL(1.0));
  SrVal *c = OP(GE, x, FL(1.0));
  SrVal *far = OP(SUB, OP(MUL, OP(ADD, OP(MUL, OP(SUB, OP(MUL, FL(a), x), FL(5.0 * a)), x), FL(8.0 * a)), x), FL(4.0 * a));
  out = where(s, c, far, out);
  c = OP(GE, x, FL(2.0));
  return where(s, c, FL(0.0), out);
}

static SrVal *triangle(SrNnScope *s, SrVal *x) {
  return C2("jax.numpy.maximum", INT(0), OP(SUB, INT(1), C1("jax.numpy.abs", x)));
}

static SrVal *kernel(SrNnScope *s, int method, SrVal *x) {
  switch (method) {
  case M_LINEAR: return triangle(s, x);
  case M_LANCZOS3: return lanczos(s, 3., x);
  case M_LANCZOS5: return lanczos(s, 5., x);
  case M_CUBIC_PYTORCH: return opencv_cubic(s, x);
  default: return keys_cubic(s, x);
  }
}

/* compute_weight_mat(m, n, scale, translation, kernel, antialias,
   edge_padding=False): scale and translation Python floats (resize) or
   0-d arrays (scale_and_translate); a new reference */
/* jnp.clip(expanded.astype(jnp.int32), 0, m - 1), the edge-padded
   pixels' clamped indices */
static SrVal *clamped(SrNnScope *s, SrVal *expanded, int64_t m) {
  SrVal *e = expanded ? KEEP(sr_jnp_convert(s->I, expanded, SR_I32, 0)) : NULL;
  return C3("jax.numpy.clip", e, INT(0), INT(m - 1));
}

static SrVal *weight_mat(SrInterp *I, int64_t m, int64_t n, SrVal *scale, SrVal *translation, int method,
                         int antialias) {
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  int edge = method == M_CUBIC_PYTORCH; /* not antialias: the callers made it cubic otherwise */
  SrVal *sv[2] = {scale, translation};
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, 2, sv, &weak);
  SrVal *inv_scale = OP(DIV, FL(1.), scale);
  SrVal *kernel_scale = antialias ? C2("jax.numpy.maximum", inv_scale, FL(1.)) : FL(1.);
  /* the operations in Python's order of evaluation */
  SrVal *sample_f = OP(MUL, OP(ADD, arange1(s, n, dt), FL(0.5)), inv_scale);
  sample_f = OP(SUB, OP(SUB, sample_f, OP(MUL, translation, inv_scale)), FL(0.5));
  SrVal *w, *expanded = NULL;
  if (method == M_AREA) {
    SrVal *L_i = OP(MUL, arange1(s, n, dt), inv_scale);
    L_i = OP(SUB, L_i, OP(MUL, translation, inv_scale));
    SrVal *R_i = OP(ADD, L_i, inv_scale);
    SrVal *L_j = arange1(s, m, dt);
    SrVal *R_j = OP(ADD, L_j, FL(1.0));
    SrVal *ri = row(s, R_i), *rj = col(s, R_j);
    SrVal *hi = C2("jax.numpy.minimum", ri, rj);
    SrVal *li = row(s, L_i), *lj = col(s, L_j);
    SrVal *lo = C2("jax.numpy.maximum", li, lj);
    w = C2("jax.numpy.maximum", FL(0.0), OP(SUB, hi, lo));
  } else {
    /* edge padding (cubic-pytorch without antialias): k = radius pixels
       past each edge, their weights moved onto the edge pixels */
    expanded = arange2(s, edge ? -2 : 0, m + (edge ? 2 : 0), dt);
    SrVal *sr = row(s, sample_f), *ec = col(s, expanded);
    SrVal *x = C1("jax.numpy.abs", OP(SUB, sr, ec));
    x = OP(DIV, x, kernel_scale);
    w = x ? kernel(s, method, x) : NULL;
  }
  if (w && edge) {
    SrVal *ci = clamped(s, expanded, m);
    SrVal *nv = INT(n);
    SrVal *oi = C1("jax.numpy.arange", nv);
    int64_t zs[2] = {m, n};
    SrVal *zsh = KEEP(sr_int_tuple(zs, 2));
    SrVal *dtv = KEEP(sr_dtype_val(NULL, dt));
    const char *kwd[1] = {"dtype"};
    SrVal *wm = sr_nn_call(s, "jax.numpy.zeros", 1, &zsh, 1, kwd, &dtv);
    int64_t bs[2] = {m + 4, n}, bd[1] = {1};
    SrVal *oe = oi ? KEEP(sr_lax_broadcast_in_dim(I, oi, bs, 2, bd, 1, NULL)) : NULL;
    SrVal *cc = col(s, ci);
    SrVal *key = cc && oe ? KEEP(sr_pair(sr_ref(cc), sr_ref(oe))) : NULL;
    SrVal *atv = wm && key ? KEEP(sr_getattr(I, wm, "at")) : NULL;
    SrVal *ix = atv ? KEEP(sr_getitem(I, atv, key)) : NULL;
    SrVal *add = ix ? KEEP(sr_getattr(I, ix, "add")) : NULL;
    SrArgs aa = {1, &w, 0, NULL, NULL, NULL};
    w = add ? KEEP(sr_call(I, add, &aa)) : NULL;
  }
  SrVal *axv[1] = {w};
  const char *kw[2] = {"axis", "keepdims"};
  SrVal *kv[2] = {INT(0), KEEP(sr_bool(1))};
  SrVal *total = sr_nn_call(s, "jax.numpy.sum", 1, axv, 2, kw, kv);
  SrVal *ok = OP(GT, C1("jax.numpy.abs", total), FL(1000. * (double)FLT_EPSILON));
  SrVal *nz = OP(NE, total, INT(0));
  SrVal *q = C2("jax.numpy.divide", w, where(s, nz, total, INT(1)));
  w = where(s, ok, q, INT(0));
  if (edge) return sr_nn_done(s, w);
  SrVal *ge = OP(GE, sample_f, FL(-0.5));
  SrVal *le = OP(LE, sample_f, FL((double)m - 0.5));
  SrVal *inside = row(s, C2("jax.numpy.logical_and", ge, le));
  w = where(s, inside, w, INT(0));
  return sr_nn_done(s, w);
}

/* _scale_and_translate: scale[i], translation[i] (borrowed) for the
   dimensions dims[i]; a new reference */
static SrVal *scale_translate(SrInterp *I, SrVal *x, const int64_t *shape, const int *dims, int k, SrVal **scale,
                              SrVal **translation, int method, int antialias, SrVal *precision) {
  if (k == 0) return sr_ref(x);
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  const SrType *t = ty(I, x);
  int nd = t->ndim;
  SrDtype dt = t->dtype;
  SrVal *args[2 + 2 * SR_MAX_RANK + 1];
  int na = 0;
  int64_t in_ix[SR_MAX_RANK], out_ix[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) in_ix[i] = out_ix[i] = i;
  args[na++] = x;
  args[na++] = KEEP(int_list(in_ix, nd));
  for (int i = 0; i < k; i++) {
    int d = dims[i];
    SrVal *w = KEEP(weight_mat(I, t->dims[d].size, shape[d], scale[i], translation[i], method, antialias));
    if (!w) return sr_nn_done(s, NULL);
    w = KEEP(sr_jnp_convert(I, w, dt, 0));
    if (!w) return sr_nn_done(s, NULL);
    args[na++] = w;
    int64_t sub[2] = {d, nd + i};
    args[na++] = KEEP(int_list(sub, 2));
    out_ix[d] = nd + i;
  }
  args[na++] = KEEP(int_list(out_ix, nd));
  const char *kw[1] = {"precision"};
  return sr_nn_done(s, sr_nn_call(s, "jax.numpy.einsum", na, args, 1, kw, &precision));
}

/* _resize_nearest: x gathered at floor((arange(n) + 0.5) * m / n) in
   each dimension whose size changes */
static SrVal *resize_nearest(SrInterp *I, SrVal *x, const int64_t *shape) {
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  int nd = ty(I, x)->ndim;
  for (int d = 0; d < nd && x; d++) {
    int64_t m = ty(I, x)->dims[d].size, n = shape[d];
    if (m == n) continue;
    SrVal *off = OP(DIV, OP(MUL, OP(ADD, arange1(s, n, SR_F32), FL(0.5)), INT(m)), INT(n));
    off = off ? KEEP(sr_jnp_convert(I, off, SR_F32, 0)) : NULL;
    off = C1("jax.numpy.floor", off);
    off = off ? KEEP(sr_jnp_convert(I, off, SR_I32, 0)) : NULL;
    if (!off) break;
    SrVal *key = sr_seq(NULL, SR_V_TUPLE, nd);
    for (int i = 0; i < nd; i++) sr_seq_push(NULL, key, i == d ? sr_ref(off) : all());
    x = at(s, x, key);
  }
  return sr_nn_done(s, x);
}

/* the precision as its canonical pair of names, kept in the jit's data */
typedef struct Prec {
  int p0, p1; /* -1: None */
} Prec;

static int prec_index(const SrVal *w) {
  static const char *names[3] = {"DEFAULT", "HIGH", "HIGHEST"};
  if (!w || w->kind != SR_V_WORD || w->str.n < 10) return -3;
  for (int i = 0; i < 3; i++)
    if (w->str.n == 10 + strlen(names[i]) && memcmp(w->str.s + 10, names[i], strlen(names[i])) == 0) return i;
  return -3;
}

/* precision (NULL: HIGHEST) canonicalized; -1 raised */
static int prec_of(SrInterp *I, SrVal *v, Prec *p) {
  p->p0 = p->p1 = 2;
  if (!v) return 0;
  SrVal *c;
  if (sr_lax_canon_precision(I, v, &c) < 0) return -1;
  if (!c) {
    p->p0 = p->p1 = -1;
    return 0;
  }
  int ok = sr_is_seq(c) && c->seq.n == 2;
  if (ok) p->p0 = prec_index(c->seq.items[0]), p->p1 = prec_index(c->seq.items[1]);
  sr_unref(c);
  if (!ok || p->p0 < 0 || p->p1 < 0) {
    sr_raise(I, "NotImplementedError", "jax.image: only lax.Precision values are implemented as precision");
    return -1;
  }
  return 0;
}

static SrVal *prec_val(const Prec *p) {
  static const char *names[3] = {"default", "high", "highest"};
  if (p->p0 < 0) return sr_none();
  return sr_pair(sr_str_cstr(NULL, names[p->p0]), sr_str_cstr(NULL, names[p->p1]));
}

typedef struct Resize {
  int64_t shape[SR_MAX_RANK];
  int nd, method, antialias;
  Prec prec;
} Resize;

/* _resize's body: image the one argument, the rest static */
static SrVal *resize_body(SrInterp *I, SrArgs *a) {
  const Resize *r = sr_current_builtin(I)->data;
  SrVal *x = a->v[0];
  if (check_rank(I, r->shape, r->nd, ty(I, x)) < 0) return NULL;
  if (r->method == M_NEAREST) return resize_nearest(I, x, r->shape);
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  if (sr_nn_promote_inexact(s, 1, &x, "resize") < 0) return sr_nn_done(s, NULL);
  const SrType *t = ty(I, x);
  int dims[SR_MAX_RANK], k = 0;
  SrVal *scale[SR_MAX_RANK], *trans[SR_MAX_RANK];
  for (int d = 0; d < r->nd; d++) {
    if (t->dims[d].size == r->shape[d]) continue;
    dims[k] = d;
    scale[k] = FL(r->shape[d] == 0 ? 1.0 : (double)r->shape[d] / (double)t->dims[d].size);
    trans[k] = FL(0.);
    k++;
  }
  int method = r->method == M_CUBIC_PYTORCH && r->antialias ? M_CUBIC : r->method;
  SrVal *prec = KEEP(prec_val(&r->prec));
  return sr_nn_done(s, KEEP(scale_translate(I, x, r->shape, dims, k, scale, trans, method, r->antialias, prec)));
}

static int shape_of(SrInterp *I, SrVal *v, int64_t *shape, int *nd) { return sr_shape_arg(I, v, shape, nd, "shape"); }

/* antialias as Python's truth; -1 raised */
static int truth(SrInterp *I, SrVal *v) {
  if (!v) return 1;
  return sr_truthy(I, v);
}

/* resize(image, shape, method, antialias=True, precision=Precision.HIGHEST) */
static SrVal *image_resize(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "resize", "image, shape, method, antialias=, precision=", p) < 0) return NULL;
  Resize r;
  memset(&r, 0, sizeof r);
  if (shape_of(I, p[1], r.shape, &r.nd) < 0) return NULL;
  if ((r.method = method_of(I, p[2])) < 0) return NULL;
  if ((r.antialias = truth(I, p[3])) < 0) return NULL;
  if (prec_of(I, p[4], &r.prec) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  Resize *d = sr_xmalloc(sizeof *d);
  *d = r;
  SrVal *out = sr_api_jit(I, "_resize", resize_body, d, 1, &x);
  sr_unref(x);
  return out;
}

/* scale_and_translate(image, shape, spatial_dims, scale, translation,
   method, antialias=True, precision=Precision.HIGHEST) */
static SrVal *image_scale_and_translate(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  if (sr_args_parse(I, a, "scale_and_translate",
                    "image, shape, spatial_dims, scale, translation, method, antialias=, precision=", p) < 0)
    return NULL;
  int64_t shape[SR_MAX_RANK], sd[SR_MAX_RANK];
  int nd, nsd;
  if (shape_of(I, p[1], shape, &nd) < 0) return NULL;
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  if (!x) return sr_nn_done(s, NULL);
  if (check_rank(I, shape, nd, ty(I, x)) < 0) return sr_nn_done(s, NULL);
  int method = method_of(I, p[5]);
  if (method < 0) return sr_nn_done(s, NULL);
  if (method == M_NEAREST)
    return sr_nn_done(s, sr_raise(I, "ValueError",
                                  "Nearest neighbor resampling is not currently supported for scale_and_translate."));
  int antialias = truth(I, p[6]);
  if (antialias < 0) return sr_nn_done(s, NULL);
  if (method == M_CUBIC_PYTORCH && antialias) method = M_CUBIC;
  if (sr_ints_arg(I, p[2], sd, &nsd, "spatial_dims") < 0) return sr_nn_done(s, NULL);
  if (sr_nn_promote_inexact(s, 1, &x, "scale_and_translate") < 0) return sr_nn_done(s, NULL);
  SrVal *st[2] = {p[3], p[4]};
  if (sr_nn_promote_inexact(s, 2, st, "scale_and_translate") < 0) return sr_nn_done(s, NULL);
  const SrType *ts = ty(I, st[0]), *tt = ty(I, st[1]);
  int64_t ns = ts->ndim ? ts->dims[0].size : 1, nt = tt->ndim ? tt->dims[0].size : 1;
  if (ts->ndim != 1 || tt->ndim != 1 || ns != nsd || nt != nsd)
    return sr_nn_done(s, sr_raise(I, "AssertionError",
                                  "scale_and_translate: scale and translation must be 1-d of length len(spatial_dims)"));
  int dims[SR_MAX_RANK];
  SrVal *sc[SR_MAX_RANK], *tr[SR_MAX_RANK];
  for (int i = 0; i < nsd; i++) {
    int64_t d = sd[i];
    if (d < -nd || d >= nd)
      return sr_nn_done(s, sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d",
                                    (long long)d, nd));
    dims[i] = (int)(d < 0 ? d + nd : d);
    sc[i] = at(s, st[0], sr_int(NULL, i));
    tr[i] = at(s, st[1], sr_int(NULL, i));
    if (!sc[i] || !tr[i]) return sr_nn_done(s, NULL);
  }
  Prec pr;
  if (prec_of(I, p[7], &pr) < 0) return sr_nn_done(s, NULL);
  SrVal *prec = KEEP(prec_val(&pr));
  return sr_nn_done(s, KEEP(scale_translate(I, x, shape, dims, nsd, sc, tr, method, antialias, prec)));
}

void sr_image_init(void) {
  sr_def("jax.image.resize", image_resize,
         "resize(image, shape, method, antialias=True, precision=Precision.HIGHEST): image resampled to shape by "
         "'nearest', 'linear', 'cubic', 'cubic-pytorch', 'lanczos3', 'lanczos5' or 'area' (a jit named _resize)");
  sr_def("jax.image.scale_and_translate", image_scale_and_translate,
         "scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True, "
         "precision=Precision.HIGHEST): image resampled at (x - translation) / scale in spatial_dims");
}

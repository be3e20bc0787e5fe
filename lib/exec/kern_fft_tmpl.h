/* kern_fft_tmpl.h: the body of kern_fft.c for one precision, included
 * twice with T (float, double) and S (the names' suffix) defined. */

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define Plan CAT(Plan, S)
#define plan_new CAT(plan_new, S)
#define plan_free CAT(plan_free, S)
#define radix2 CAT(radix2, S)
#define transform CAT(transform, S)
#define along_axis CAT(along_axis, S)
#define run_fft CAT(run_fft, S)
#define mixed CAT(mixed, S)

typedef struct Plan {
  int64_t n, m; /* m: the radix-2 size (n itself when n is a power of 2) */
  T *tw;        /* m/2 twiddles e^{-2 pi i k/m} */
  T *twn;       /* mixed radix: the n twiddles e^{-2 pi i k/n} */
  T *chirp;     /* Bluestein: n chirps e^{-i pi k^2/n} */
  T *filt;      /* Bluestein: the transform of the conjugate chirp, / m */
  T *work;      /* Bluestein: m complex of scratch (mixed radix: n) */
} Plan;

static void plan_free(Plan *p) {
  if (!p) return;
  free(p->tw);
  free(p->twn);
  free(p->chirp);
  free(p->filt);
  free(p->work);
  free(p);
}

/* The iterative radix-2 transform of m (a power of 2) values in place. */
static void radix2(T *x, int64_t m, const T *tw, int inv) {
  for (int64_t i = 1, j = 0; i < m; i++) {
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      T a = x[2 * i], b = x[2 * i + 1];
      x[2 * i] = x[2 * j], x[2 * i + 1] = x[2 * j + 1];
      x[2 * j] = a, x[2 * j + 1] = b;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len >> 1, step = m / len;
    for (int64_t i = 0; i < m; i += len)
      for (int64_t j = 0; j < half; j++) {
        T wr = tw[2 * j * step], wi = inv ? -tw[2 * j * step + 1] : tw[2 * j * step + 1];
        T *u = x + 2 * (i + j), *v = x + 2 * (i + j + half);
        T vr = v[0] * wr - v[1] * wi, vi = v[0] * wi + v[1] * wr;
        v[0] = u[0] - vr, v[1] = u[1] - vi;
        u[0] += vr, u[1] += vi;
      }
  }
}

static Plan *plan_new(int64_t n) {
  Plan *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->n = n;
  int64_t m = 1;
  while (m < n) m <<= 1;
  int blue = m != n;
  if (blue) {
    m = 1;
    while (m < 2 * n - 1) m <<= 1;
  }
  p->m = m;
  p->tw = malloc(sizeof(T) * (size_t)(m > 1 ? m : 2));
  if (!p->tw) goto oom;
  for (int64_t k = 0; k < m / 2; k++) {
    double c, sn;
    sincos_2pi(k, m, &c, &sn);
    p->tw[2 * k] = (T)c, p->tw[2 * k + 1] = sn == 0 ? (T)0 : (T)-sn;
  }
  if (blue && largest_factor(n) <= MIXED_MAX) {
    /* every prime factor small: mixed radix instead of Bluestein */
    p->m = n;
    p->twn = malloc(sizeof(T) * 2 * (size_t)n);
    p->work = malloc(sizeof(T) * 2 * (size_t)n);
    if (!p->twn || !p->work) goto oom;
    for (int64_t k = 0; k < n; k++) {
      double c, sn;
      sincos_2pi(k, n, &c, &sn);
      p->twn[2 * k] = (T)c, p->twn[2 * k + 1] = sn == 0 ? (T)0 : (T)-sn;
    }
    return p;
  }
  if (blue) {
    p->chirp = malloc(sizeof(T) * 2 * (size_t)n);
    p->filt = calloc(2 * (size_t)m, sizeof(T));
    p->work = malloc(sizeof(T) * 2 * (size_t)m);
    if (!p->chirp || !p->filt || !p->work) goto oom;
    for (int64_t k = 0; k < n; k++) {
      /* k^2 mod 2n exactly, so the angle keeps its digits for large k */
      uint64_t q = ((uint64_t)k * (uint64_t)k) % (2 * (uint64_t)n);
      double c, sn;
      sincos_2pi((int64_t)q, 2 * n, &c, &sn);
      p->chirp[2 * k] = (T)c, p->chirp[2 * k + 1] = (T)-sn;
      double fr = c / (double)m, fi = sn / (double)m;
      p->filt[2 * k] = (T)fr, p->filt[2 * k + 1] = (T)fi;
      if (k) p->filt[2 * (m - k)] = (T)fr, p->filt[2 * (m - k) + 1] = (T)fi;
    }
    radix2(p->filt, m, p->tw, 0);
  }
  return p;
oom:
  plan_free(p);
  return NULL;
}

/* Mixed radix, decimation in time: y (contiguous) = the DFT of the n
   values x[0], x[is], ..., with tw the N-point twiddles (N a multiple of
   n).  The smallest prime factor p of n splits it into p transforms of
   n / p, combined by p-point DFTs; a twiddle of exponent 0 is not
   multiplied in (so exact zeros stay +0, as pocketfft's passes keep them). */
static void mixed(const T *x, int64_t is, T *y, int64_t n, const T *tw, int64_t N, int inv) {
  if (n == 1) {
    y[0] = x[0], y[1] = x[1];
    return;
  }
  int64_t p = smallest_factor(n), m = n / p, st = N / n;
  for (int64_t r = 0; r < p; r++) mixed(x + 2 * r * is, is * p, y + 2 * r * m, m, tw, N, inv);
  T t[2 * MIXED_MAX], o[2 * MIXED_MAX];
  for (int64_t k1 = 0; k1 < m; k1++) {
    for (int64_t r = 0; r < p; r++) {
      T yr = y[2 * (r * m + k1)], yi = y[2 * (r * m + k1) + 1];
      int64_t e = (r * k1 * st) % N;
      if (e == 0) {
        t[2 * r] = yr, t[2 * r + 1] = yi;
      } else {
        T wr = tw[2 * e], wi = inv ? -tw[2 * e + 1] : tw[2 * e + 1];
        t[2 * r] = yr * wr - yi * wi, t[2 * r + 1] = yr * wi + yi * wr;
      }
    }
    for (int64_t k2 = 0; k2 < p; k2++) {
      T sr = t[0], si = t[1];
      for (int64_t r = 1; r < p; r++) {
        int64_t e = ((r * k2) % p) * (N / p);
        if (e == 0) {
          sr += t[2 * r], si += t[2 * r + 1];
        } else {
          T wr = tw[2 * e], wi = inv ? -tw[2 * e + 1] : tw[2 * e + 1];
          sr += t[2 * r] * wr - t[2 * r + 1] * wi, si += t[2 * r] * wi + t[2 * r + 1] * wr;
        }
      }
      o[2 * k2] = sr, o[2 * k2 + 1] = si;
    }
    for (int64_t k2 = 0; k2 < p; k2++) y[2 * (k1 + m * k2)] = o[2 * k2], y[2 * (k1 + m * k2) + 1] = o[2 * k2 + 1];
  }
}

/* The transform of p->n values in place: forward or inverse, unnormalized. */
static void transform(Plan *p, T *x, int inv) {
  int64_t n = p->n, m = p->m;
  if (n <= 1) return;
  if (p->twn) {
    T *a = p->work;
    memcpy(a, x, sizeof(T) * 2 * (size_t)n);
    mixed(a, 1, x, n, p->twn, n, inv);
    return;
  }
  if (m == n) {
    radix2(x, n, p->tw, inv);
    return;
  }
  /* Bluestein: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}), w_j = e^{-i pi j^2/n};
     the inverse is the conjugate of the forward transform of conj(x) */
  T *a = p->work, *w = p->chirp, *f = p->filt;
  double sgn = inv ? -1.0 : 1.0;
  for (int64_t j = 0; j < n; j++) {
    T xr = x[2 * j], xi = (T)(sgn * x[2 * j + 1]);
    a[2 * j] = xr * w[2 * j] - xi * w[2 * j + 1];
    a[2 * j + 1] = xr * w[2 * j + 1] + xi * w[2 * j];
  }
  memset(a + 2 * n, 0, sizeof(T) * 2 * (size_t)(m - n));
  radix2(a, m, p->tw, 0);
  for (int64_t k = 0; k < m; k++) {
    T ar = a[2 * k], ai = a[2 * k + 1];
    a[2 * k] = ar * f[2 * k] - ai * f[2 * k + 1];
    a[2 * k + 1] = ar * f[2 * k + 1] + ai * f[2 * k];
  }
  radix2(a, m, p->tw, 1);
  for (int64_t k = 0; k < n; k++) {
    T cr = a[2 * k], ci = a[2 * k + 1];
    x[2 * k] = cr * w[2 * k] - ci * w[2 * k + 1];
    x[2 * k + 1] = (T)(sgn * (cr * w[2 * k + 1] + ci * w[2 * k]));
  }
}

/* Transforms every line of buf (complex, shape shape[nd]) along axis. */
static int along_axis(T *buf, const int64_t *shape, int nd, int axis, int inv) {
  int64_t len = shape[axis], outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= shape[d];
  for (int d = axis + 1; d < nd; d++) inner *= shape[d];
  if (len <= 1 || outer * inner == 0) return 0;
  Plan *p = plan_new(len);
  T *line = inner > 1 ? malloc(sizeof(T) * 2 * (size_t)len) : NULL;
  if (!p || (inner > 1 && !line)) {
    plan_free(p);
    free(line);
    return -1;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      T *base = buf + 2 * (o * len * inner + i);
      if (inner == 1) {
        transform(p, base, inv);
        continue;
      }
      for (int64_t k = 0; k < len; k++) line[2 * k] = base[2 * k * inner], line[2 * k + 1] = base[2 * k * inner + 1];
      transform(p, line, inv);
      for (int64_t k = 0; k < len; k++) base[2 * k * inner] = line[2 * k], base[2 * k * inner + 1] = line[2 * k + 1];
    }
  plan_free(p);
  free(line);
  return 0;
}

static int run_fft(int type, const T *in, const int64_t *ishape, T *out, const int64_t *oshape, int nd,
                   const int64_t *len, int nlen) {
  int64_t in_n = 1, out_n = 1, N = 1;
  for (int d = 0; d < nd; d++) in_n *= ishape[d], out_n *= oshape[d];
  for (int k = 0; k < nlen; k++) N *= len[k];
  int first = nd - nlen, last = nd - 1;
  if (out_n == 0) return 0;
  switch (type) {
  case SR_FFT_FFT:
  case SR_FFT_IFFT: {
    memcpy(out, in, sizeof(T) * 2 * (size_t)out_n);
    for (int d = first; d <= last; d++)
      if (along_axis(out, oshape, nd, d, type == SR_FFT_IFFT) < 0) return -1;
    if (type == SR_FFT_IFFT && N > 1) {
      T sc = (T)(1.0 / (double)N);
      for (int64_t i = 0; i < 2 * out_n; i++) out[i] *= sc;
    }
    return 0;
  }
  case SR_FFT_RFFT: {
    int64_t n = len[nlen - 1], h = oshape[last], rows = out_n / h;
    if (n == 0) {
      memset(out, 0, sizeof(T) * 2 * (size_t)out_n);
      return 0;
    }
    Plan *p = plan_new(n);
    T *line = malloc(sizeof(T) * 2 * (size_t)n);
    if (!p || !line) {
      plan_free(p);
      free(line);
      return -1;
    }
    for (int64_t r = 0; r < rows; r++) {
      const T *x = in + r * n;
      for (int64_t k = 0; k < n; k++) line[2 * k] = x[k], line[2 * k + 1] = 0;
      transform(p, line, 0);
      memcpy(out + 2 * r * h, line, sizeof(T) * 2 * (size_t)h);
    }
    plan_free(p);
    free(line);
    for (int d = first; d < last; d++)
      if (along_axis(out, oshape, nd, d, 0) < 0) return -1;
    return 0;
  }
  case SR_FFT_IRFFT: {
    int64_t n = len[nlen - 1], m = ishape[last], rows = out_n / n;
    T *c = malloc(sizeof(T) * 2 * (size_t)(in_n ? in_n : 1));
    Plan *p = plan_new(n);
    T *line = malloc(sizeof(T) * 2 * (size_t)n);
    int rc = -1;
    if (!c || !p || !line) goto done;
    memcpy(c, in, sizeof(T) * 2 * (size_t)in_n);
    for (int d = first; d < last; d++)
      if (along_axis(c, ishape, nd, d, 1) < 0) goto done;
    T sc = (T)(1.0 / (double)N);
    for (int64_t r = 0; r < rows; r++) {
      const T *x = c + 2 * r * m;
      for (int64_t k = 0; k <= n / 2; k++) {
        line[2 * k] = k < m ? x[2 * k] : 0;
        line[2 * k + 1] = k < m ? x[2 * k + 1] : 0;
      }
      for (int64_t k = n / 2 + 1; k < n; k++) line[2 * k] = line[2 * (n - k)], line[2 * k + 1] = -line[2 * (n - k) + 1];
      transform(p, line, 1);
      for (int64_t j = 0; j < n; j++) out[r * n + j] = line[2 * j] * sc;
    }
    rc = 0;
  done:
    free(c);
    plan_free(p);
    free(line);
    return rc;
  }
  }
  return -1;
}

#undef Plan
#undef plan_new
#undef plan_free
#undef radix2
#undef transform
#undef along_axis
#undef run_fft
#undef mixed
#undef CAT
#undef CAT_

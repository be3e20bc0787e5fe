/* params.c: helpers the family files share for reading their params
 * (lax/lax.h declares them): one getter per stage's form of an equation,
 * int tuples and padding pairs, the fields of the printed dimension
 * numbers, and the integer arithmetic of window shapes.
 */
#include "lax/lax.h"

#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "check/rule.h"
#include "exec/eval.h"
#include "text/print_val.h"
#include "util/intern.h"

SrVal *sr_lax_get_rule(const void *e, const char *k) { return sr_rparam(e, k); }
SrVal *sr_lax_get_ev(const void *e, const char *k) { return sr_ev_param(e, k); }
SrVal *sr_lax_get_eqn(const void *e, const char *k) { return sr_eqn_param(e, sr_intern_cstr(k)); }

int sr_lax_ints_of(const SrVal *v, int64_t *out, int *n) {
  if (!v || !sr_is_seq(v)) return -1;
  return sr_val_ints(v, out, SR_MAX_RANK, n);
}

int sr_lax_pads_of(const SrVal *p, int64_t *lo, int64_t *hi, int *n) {
  if (!p || !sr_is_seq(p) || p->seq.n > SR_MAX_RANK) return -1;
  *n = p->seq.n;
  for (int i = 0; i < p->seq.n; i++) {
    int64_t pr[2];
    int k;
    if (!sr_is_seq(p->seq.items[i]) || sr_val_ints(p->seq.items[i], pr, 2, &k) < 0 || k != 2) return -1;
    lo[i] = pr[0];
    hi[i] = pr[1];
  }
  return 0;
}

SrVal *sr_lax_pads_val(const int64_t *lo, const int64_t *hi, int n) {
  SrVal *p = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) {
    SrVal *q = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, q, sr_int(NULL, lo[i]));
    sr_seq_push(NULL, q, sr_int(NULL, hi[i]));
    sr_seq_push(NULL, p, q);
  }
  return p;
}

int64_t sr_lax_dilate(int64_t d, int64_t r) {
  if (r == 1) return d;
  /* a dilation too big for int64 saturates: the shape rules then refuse it */
  int64_t v;
  if (__builtin_mul_overflow(r, d - 1, &v) || __builtin_add_overflow(v, 1, &v)) return d - 1 < 0 ? 0 : INT64_MAX;
  return v < 0 ? 0 : v;
}

int64_t sr_lax_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

const char *sr_lax_param_text(const SrVal *v, size_t *n) {
  *n = 0;
  if (v && v->text) return *n = v->textlen, v->text;
  if (v && (v->kind == SR_V_WORD || v->kind == SR_V_STR)) return *n = v->str.n, v->str.s;
  return NULL;
}

int sr_lax_text_ints(const char *s, size_t n, const char *key, int64_t *out, int *cnt) {
  *cnt = 0;
  size_t kl = strlen(key);
  for (size_t i = 0; i + kl + 2 <= n; i++) {
    if (memcmp(s + i, key, kl) != 0 || s[i + kl] != '=' || s[i + kl + 1] != '(') continue;
    if (i > 0 && (s[i - 1] == '_' || (s[i - 1] >= 'a' && s[i - 1] <= 'z'))) continue;
    size_t k = i + kl + 2;
    while (k < n && s[k] != ')') {
      while (k < n && (s[k] == ' ' || s[k] == ',')) k++;
      if (k >= n || s[k] == ')') break;
      char *end;
      long long v = strtoll(s + k, &end, 10);
      if (end == s + k || *cnt >= SR_MAX_RANK) return -1;
      out[(*cnt)++] = v;
      k = (size_t)(end - s);
    }
    return k < n ? 0 : -1;
  }
  return 1;
}

SrVal *sr_lax_dn_text(const char *cls, int nf, const char *const *keys, const int64_t *const *vals, const int *ns) {
  SrBuf s = SR_BUF_INIT;
  sr_buf_puts(&s, cls);
  sr_buf_putc(&s, '(');
  for (int i = 0; i < nf; i++) {
    if (i) sr_buf_puts(&s, ", ");
    sr_buf_puts(&s, keys[i]);
    sr_buf_putc(&s, '=');
    sr_ints_str(&s, vals[i], ns[i]);
  }
  sr_buf_putc(&s, ')');
  SrVal *v = sr_word(NULL, sr_buf_str(&s), s.len);
  sr_buf_free(&s);
  return v;
}

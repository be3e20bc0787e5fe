/* check_layout.c: unit tests of device-local layouts (lib/exec/layout.c).
 *
 * That a shard stored in a layout really is in that order (its bytes are
 * compared with the order written out here), that relaying out round
 * trips and keeps shared buffers shared, that every eval rule sees
 * row-major inputs (an equation run on a column-major input gives what it
 * gives on the row-major one), that redistribution and reading back a
 * whole value relay out first, the parsing of layout params, and the
 * Layout.AUTO choice on parsed jaxprs. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "exec/array.h"
#include "lax/lax.h"
#include "exec/comm.h"
#include "exec/eval.h"
#include "exec/layout.h"
#include "text/parse.h"
#include "util/intern.h"
#include "util/mem.h"

/* (a, b) as a tuple value */
static SrVal *pair(int64_t a, int64_t b) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, t, sr_int(NULL, a));
  sr_seq_push(NULL, t, sr_int(NULL, b));
  return t;
}

static SrExec ex;
static SrEvalCtx cx;
static SrDiags diags = SR_DIAGS_INIT;

static void setup(void) {
  sr_lax_init();
  memset(&ex, 0, sizeof ex);
  ex.comm = sr_comm_local_new(4);
  sr_eval_ctx_init(&cx, NULL, &ex, &diags);
}

static void teardown(void) {
  sr_comm_free(ex.comm);
  free(ex.ledger);
  memset(&ex, 0, sizeof ex);
  sr_diags_clear(&diags);
}

static const SrMesh *mesh1(const char *name, int64_t size) {
  SrMesh m = {0};
  m.n = 1;
  m.names[0] = sr_intern_cstr(name);
  m.sizes[0] = size;
  m.types[0] = SR_AXIS_EXPLICIT;
  return sr_mesh_intern(&m);
}

/* float32 0, 1, 2, ... of a shape, meshless or replicated on m. */
static SrArray *iota_array(int nd, const int64_t *shape, const SrMesh *m) {
  const SrType *t = sr_type_array(SR_F32, nd, shape);
  int64_t n = sr_type_numel(t);
  float *d = sr_xmalloc((size_t)n * sizeof *d);
  for (int64_t i = 0; i < n; i++) d[i] = (float)i;
  SrArray *a = sr_array_from_data(t, m, d);
  free(d);
  return a;
}

START_TEST(test_strides) {
  int64_t shape[3] = {2, 3, 4}, st[3];
  sr_local_strides(3, shape, NULL, st);
  ck_assert(st[0] == 12 && st[1] == 4 && st[2] == 1);
  uint8_t cm[3] = {2, 1, 0};
  sr_local_strides(3, shape, cm, st);
  ck_assert(st[0] == 1 && st[1] == 2 && st[2] == 6);
  uint8_t odd[3] = {1, 2, 0};
  sr_local_strides(3, shape, odd, st);
  ck_assert(st[0] == 1 && st[2] == 2 && st[1] == 8);
  int64_t ok[2] = {1, 0}, bad[2] = {1, 1};
  ck_assert(sr_local_valid(2, ok) && !sr_local_valid(2, bad));
  ck_assert(sr_local_is_row_major(2, NULL));
  ck_assert(!sr_local_is_row_major(3, cm));
}
END_TEST

START_TEST(test_column_major_bytes) {
  int64_t shape[2] = {2, 3};
  SrArray *a = iota_array(2, shape, NULL);
  uint8_t cm[2] = {1, 0};
  SrArray *c = sr_array_relayout(a, cm);
  ck_assert(c != a && c->local);
  /* column-major: columns are contiguous */
  float want[6] = {0, 3, 1, 4, 2, 5};
  ck_assert_mem_eq(c->shard[0]->data, want, sizeof want);
  float orig[6] = {0, 1, 2, 3, 4, 5};
  ck_assert_mem_eq(a->shard[0]->data, orig, sizeof orig);
  /* the same layout again is the same array; back to row-major copies */
  SrArray *again = sr_array_relayout(c, cm);
  ck_assert(again == c);
  sr_array_unref(again);
  SrArray *r = sr_array_row_major(c);
  ck_assert(!r->local);
  ck_assert_mem_eq(r->shard[0]->data, a->shard[0]->data, 6 * sizeof(float));
  /* the whole value reads back in logical order */
  float host[6];
  ck_assert_int_eq(sr_array_to_host(&cx, c, host), 0);
  ck_assert_mem_eq(host, a->shard[0]->data, sizeof host);
  sr_array_unref(r);
  sr_array_unref(c);
  sr_array_unref(a);
}
END_TEST

START_TEST(test_rank3) {
  int64_t shape[3] = {2, 3, 4};
  SrArray *a = iota_array(3, shape, NULL);
  uint8_t m2m[3] = {1, 2, 0};
  SrArray *c = sr_array_relayout(a, m2m);
  const float *s = a->shard[0]->data, *d = c->shard[0]->data;
  /* element (i, j, k) sits at j*8 + k*2 + i: dim 1 most major, dim 0 most minor */
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) ck_assert(d[j * 8 + k * 2 + i] == s[i * 12 + j * 4 + k]);
  /* one layout to another directly */
  uint8_t other[3] = {2, 0, 1};
  SrArray *o = sr_array_relayout(c, other);
  const float *e = o->shard[0]->data;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) ck_assert(e[k * 6 + i * 3 + j] == s[i * 12 + j * 4 + k]);
  sr_array_unref(o);
  sr_array_unref(c);
  sr_array_unref(a);
}
END_TEST

START_TEST(test_shared_buffers) {
  int64_t shape[2] = {4, 2};
  const SrMesh *m = mesh1("X", 4);
  SrArray *a = iota_array(2, shape, m);
  ck_assert(a->shard[0] == a->shard[3]);
  uint8_t cm[2] = {1, 0};
  SrArray *c = sr_array_relayout(a, cm);
  for (int p = 1; p < 4; p++) ck_assert(c->shard[p] == c->shard[0]);
  ck_assert(c->shard[0] != a->shard[0]);
  sr_array_unref(c);
  sr_array_unref(a);
}
END_TEST

/* One equation on concrete arrays. */
static SrArray *run1(int prim, SrArray **in, int nin, const SrType *out_type, const SrParam *ps, int np) {
  SrArray *out[1] = {NULL};
  const SrType *ts[1] = {out_type};
  SrEvalEqn e = {sr_prim(prim), ps, (uint32_t)np, (uint32_t)nin, 1, in, ts, out, 0, NULL, 0};
  ck_assert_int_eq(sr_ev_eqn(&cx, &e), 0);
  return out[0];
}

START_TEST(test_rules_see_row_major) {
  int64_t shape[2] = {2, 3};
  SrArray *a = iota_array(2, shape, NULL);
  uint8_t cm[2] = {1, 0};
  SrArray *c = sr_array_relayout(a, cm);
  /* add of a column-major and a row-major operand */
  SrArray *in[2] = {c, a};
  SrArray *r = run1(SR_P_add, in, 2, a->type, NULL, 0);
  ck_assert(!r->local);
  const float *d = r->shard[0]->data;
  for (int i = 0; i < 6; i++) ck_assert(d[i] == 2.0f * (float)i);
  sr_array_unref(r);
  /* a transpose reads through the layout too */
  int64_t tshape[2] = {3, 2};
  SrVal *perm = pair(1, 0);
  SrParam ps[1] = {{sr_intern_cstr("permutation"), perm}};
  SrArray *tin[1] = {c};
  SrArray *t = run1(SR_P_transpose, tin, 1, sr_type_array(SR_F32, 2, tshape), ps, 1);
  float want[6] = {0, 3, 1, 4, 2, 5};
  ck_assert_mem_eq(t->shard[0]->data, want, sizeof want);
  sr_unref(perm);
  sr_array_unref(t);
  /* layout_constraint keeps its input's layout out of the way: it lays
     the result out as its param says */
  static const char lt[] = "Layout(major_to_minor=(1, 0), tiling=None, sub_byte_element_size_in_bits=0)";
  SrVal *lv = sr_word(NULL, lt, strlen(lt));
  SrParam lp[1] = {{sr_intern_cstr("layout"), lv}};
  SrArray *lin[1] = {a};
  SrArray *l = run1(SR_P_layout_constraint, lin, 1, a->type, lp, 1);
  ck_assert(l->local && l->m2m[0] == 1 && l->m2m[1] == 0);
  ck_assert_mem_eq(l->shard[0]->data, want, sizeof want);
  sr_unref(lv);
  sr_array_unref(l);
  sr_array_unref(c);
  sr_array_unref(a);
}
END_TEST

START_TEST(test_redistribute_local) {
  int64_t shape[2] = {4, 2};
  const SrMesh *m = mesh1("X", 4);
  SrArray *a = iota_array(2, shape, m);
  uint8_t cm[2] = {1, 0};
  SrArray *c = sr_array_relayout(a, cm);
  /* split rows over X: each device gets its row, row-major */
  SrTypeBuilder b;
  sr_type_builder(&b, a->layout);
  b.mesh = sr_mesh_shape(m);
  b.dims[0].nax = 1;
  b.dims[0].ax[0] = 0;
  const SrType *split = sr_type_get(&b);
  SrArray *s = sr_redistribute(&cx, c, m, split);
  ck_assert(s && !s->local);
  for (int p = 0; p < 4; p++) {
    const float *d = s->shard[p]->data;
    ck_assert(d[0] == (float)(2 * p) && d[1] == (float)(2 * p + 1));
  }
  /* the same layout: nothing moves, the device-local layout stays */
  SrArray *same = sr_redistribute(&cx, c, m, c->layout);
  ck_assert(same->local && same->shard[0] == c->shard[0]);
  sr_array_unref(same);
  sr_array_unref(s);
  sr_array_unref(c);
  sr_array_unref(a);
}
END_TEST

START_TEST(test_parse) {
  uint8_t m2m[SR_MAX_RANK];
  static const char wt[] = "Layout(major_to_minor=(2, 0, 1), tiling=None, sub_byte_element_size_in_bits=0)";
  SrVal *w = sr_word(NULL, wt, strlen(wt));
  ck_assert_int_eq(sr_local_parse(w, 3, m2m), 1);
  ck_assert(m2m[0] == 2 && m2m[1] == 0 && m2m[2] == 1);
  ck_assert_int_eq(sr_local_parse(w, 2, m2m), -1);
  sr_unref(w);
  SrVal *au = sr_word(NULL, "AUTO", 4);
  ck_assert_int_eq(sr_local_parse(au, 2, m2m), 0);
  sr_unref(au);
  ck_assert_int_eq(sr_local_parse(NULL, 2, m2m), 0);
  ck_assert_int_eq(sr_local_parse(sr_none(), 2, m2m), 0);
  SrVal *t = pair(1, 0);
  ck_assert_int_eq(sr_local_parse(t, 2, m2m), 1);
  ck_assert(m2m[0] == 1 && m2m[1] == 0);
  sr_unref(t);
  SrVal *bad = pair(0, 0);
  ck_assert_int_eq(sr_local_parse(bad, 2, m2m), -1);
  sr_unref(bad);
  SrBuf b = SR_BUF_INIT;
  uint8_t one[1] = {0};
  sr_local_repr(&b, 1, one);
  ck_assert_str_eq(sr_buf_str(&b), "Layout(major_to_minor=(0,), tiling=None, sub_byte_element_size_in_bits=0)");
  sr_buf_free(&b);
}
END_TEST

static SrProgram *parse(const char *text) {
  SrSrc *src = sr_src_new("<test>", text, strlen(text), 1);
  size_t end;
  SrParseOpts o = {NULL};
  SrProgram *p = sr_parse_program(src, 0, &end, &o, &diags);
  sr_src_unref(src);
  if (!p && diags.first) ck_abort_msg("parse: %s", diags.first->msg);
  return p;
}

START_TEST(test_auto) {
  /* apply_fn of the seed: x read as a row, y as a column */
  SrProgram *p = parse("{ lambda ; a:f32[4,8] b:f32[4,8]. let\n"
                       "    c:f32[1,8] = slice[limit_indices=(1, 8) start_indices=(0, 0) strides=None] a\n"
                       "    d:f32[8] = squeeze[dimensions=(0,)] c\n"
                       "    e:f32[4,1] = slice[limit_indices=(4, 1) start_indices=(0, 0) strides=None] b\n"
                       "    f:f32[4] = squeeze[dimensions=(1,)] e\n"
                       "  in (d, f) }");
  uint8_t m2m[2];
  sr_local_auto(p->top, 0, 2, m2m);
  ck_assert(m2m[0] == 0 && m2m[1] == 1);
  sr_local_auto(p->top, 1, 2, m2m);
  ck_assert(m2m[0] == 1 && m2m[1] == 0);
  sr_program_unref(p);
  /* read whole by anything else: row-major */
  p = parse("{ lambda ; a:f32[4,8]. let\n"
            "    b:f32[4,1] = slice[limit_indices=(4, 1) start_indices=(0, 0) strides=None] a\n"
            "    c:f32[4,8] = sin a\n"
            "  in (b, c) }");
  sr_local_auto(p->top, 0, 2, m2m);
  ck_assert(m2m[0] == 0 && m2m[1] == 1);
  sr_program_unref(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("layout");
  TCase *c = tcase_create("layout");
  tcase_add_checked_fixture(c, setup, teardown);
  tcase_add_test(c, test_strides);
  tcase_add_test(c, test_column_major_bytes);
  tcase_add_test(c, test_rank3);
  tcase_add_test(c, test_shared_buffers);
  tcase_add_test(c, test_rules_see_row_major);
  tcase_add_test(c, test_redistribute_local);
  tcase_add_test(c, test_parse);
  tcase_add_test(c, test_auto);
  suite_add_tcase(s, c);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* check_rules.c: unit tests of the type rules (elementwise, structural,
 * reduce, dot, sharding casts) and of the standard-primitive frame of
 * rule.c.
 *
 * Each case runs a rule on input types written as jaxpr types
 * ("f32[8@X,4]") under a context mesh, either directly (an SrRuleEqn as an
 * eager operation builds it: no written result types) or through the
 * checker on a small jaxpr text.  Results compare as short types; errors
 * compare as "ExceptionType: message", JAX's text exactly.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "lax/lax.h"
#include "check/rule.h"
#include "text/parse.h"
#include "util/intern.h"

/* ---- meshes and types ---- */

/* A mesh from "X:2 Y:2"; each axis may end in ":A" (Auto) or ":M"
   (Manual). */
static const SrMesh *mesh(const char *desc) {
  SrMesh m;
  memset(&m, 0, sizeof m);
  m.abstract = 1;
  const char *p = desc;
  while (*p) {
    while (*p == ' ') p++;
    const char *n = p;
    while (*p && *p != ':') p++;
    m.names[m.n] = sr_intern(n, (size_t)(p - n));
    m.sizes[m.n] = strtol(p + 1, (char **)&p, 10);
    if (*p == ':') {
      m.types[m.n] = p[1] == 'A' ? SR_AXIS_AUTO : SR_AXIS_MANUAL;
      p += 2;
    }
    m.n++;
  }
  return sr_mesh_intern(&m);
}

/* A type written as in a jaxpr, its axes naming m's. */
static const SrType *ty(const SrMesh *m, const char *s) {
  char text[512];
  snprintf(text, sizeof text, "{ lambda ; a:%s. let  in (a,) }", s);
  SrDiags d = SR_DIAGS_INIT;
  SrSrc *src = sr_src_new("t", text, strlen(text), 1);
  SrParseOpts o = {m};
  size_t end;
  SrProgram *p = sr_parse_program(src, 0, &end, &o, &d);
  ck_assert_msg(p != NULL, "type %s does not parse", s);
  const SrType *t = p->top->invars[0]->type;
  sr_program_unref(p);
  sr_diags_clear(&d);
  sr_src_unref(src);
  return t;
}

/* ---- running one rule ---- */

/* Splits s at sep into at most max pieces (copied into buf). */
static int split(const char *s, char sep, char *buf, size_t bufsz, char **out, int max) {
  int n = 0;
  if (!s || !*s) return 0;
  snprintf(buf, bufsz, "%s", s);
  char *p = buf;
  while (n < max) {
    out[n++] = p;
    char *q = strchr(p, sep);
    if (!q) break;
    *q = '\0';
    p = q + 1;
    while (*p == ' ') p++;
  }
  return n;
}

typedef struct Run {
  const SrMesh *ctx;  /* the context mesh */
  int check_vma;
  const char *written; /* ';'-separated written result types, or NULL */
  int nout;
} Run;

/* Runs primitive `prim` on the ';'-separated input types with the
   '|'-separated key=value params.  Returns "t1; t2" (the result types)
   or "Exc: message". */
static char *run_rule(const Run *r, const char *prim, const char *ins, const char *params) {
  sr_lax_init();
  const SrPrim *p = sr_prim_lookup(prim, strlen(prim));
  char ib[1024], pb[1024], wb[512];
  char *in_s[16], *par_s[16], *w_s[16];
  int nin = split(ins, ';', ib, sizeof ib, in_s, 16);
  int np = split(params, '|', pb, sizeof pb, par_s, 16);
  int nw = r->written ? split(r->written, ';', wb, sizeof wb, w_s, 16) : 0;
  const SrType *in[16], *written[16], *out[16];
  SrParam ps[16];
  SrVal *vals[16];
  for (int i = 0; i < nin; i++) in[i] = ty(r->ctx, in_s[i]);
  for (int i = 0; i < nw; i++) written[i] = ty(r->ctx, w_s[i]);
  for (int i = 0; i < np; i++) {
    char *eq = strchr(par_s[i], '=');
    ck_assert(eq != NULL);
    *eq = '\0';
    ps[i].key = sr_intern_cstr(par_s[i]);
    ps[i].val = vals[i] = sr_parse_pyval(eq + 1, strlen(eq + 1));
  }
  int nout = r->nout ? r->nout : 1;
  SrRuleEqn e = {p, (uint32_t)nin, (uint32_t)nout, (uint32_t)np, in, NULL, ps, nw ? written : NULL};
  SrDiags d = SR_DIAGS_INIT;
  SrTypeCtx cx;
  memset(&cx, 0, sizeof cx);
  cx.mesh = r->ctx;
  cx.check_vma = r->check_vma;
  cx.d = &d;
  memset(out, 0, sizeof out);
  SrBuf b = SR_BUF_INIT;
  ck_assert_msg(p->type != NULL, "%s has no type rule", prim);
  if (p->type(&cx, &e, out) < 0) {
    ck_assert_msg(d.first != NULL, "%s failed without a message", prim);
    sr_diag_render_one(d.first, &b);
  } else {
    for (int i = 0; i < nout; i++) sr_buf_printf(&b, i ? "; %s" : "%s", out[i] ? sr_type_short(out[i]) : "NULL");
  }
  sr_diags_clear(&d);
  for (int i = 0; i < np; i++) sr_unref(vals[i]);
  return sr_buf_steal(&b);
}

/* Checks a jaxpr text under a context mesh (NULL: the text's own);
   returns "ok" or the first error as "Exc: message". */
static char *check_text(const SrMesh *m, const char *text) {
  SrDiags d = SR_DIAGS_INIT;
  SrSrc *src = sr_src_new("t", text, strlen(text), 1);
  SrParseOpts o = {m};
  size_t end;
  SrProgram *p = sr_parse_program(src, 0, &end, &o, &d);
  SrBuf b = SR_BUF_INIT;
  if (p) {
    SrCheckOpts co = {m, 1};
    sr_check_jaxpr(p->top, &co, &d, NULL);
    sr_program_unref(p);
  }
  if (d.first)
    sr_diag_render_one(d.first, &b);
  else
    sr_buf_puts(&b, "ok");
  sr_diags_clear(&d);
  sr_src_unref(src);
  return sr_buf_steal(&b);
}

static void expect(char *got, const char *want, const char *what) {
  ck_assert_msg(strcmp(got, want) == 0, "%s\n  got:  %s\n  want: %s", what, got, want);
  free(got);
}

static const SrMesh *XY, *XY22, *X4, *XM, *XA, *xy;

static void setup(void) {
  XY = mesh("X:4 Y:2");   /* the seed's mesh */
  XY22 = mesh("X:2 Y:2");
  X4 = mesh("X:4");
  XM = mesh("X:2:M Y:2:M");  /* inside a full-manual shard_map */
  XA = mesh("X:2:A Y:2:A");  /* auto mode */
  xy = mesh("x:2 y:2");
}

#define RULE(ctx, prim, ins, params, want)                                     \
  do {                                                                         \
    Run r_ = {ctx, 0, NULL, 0};                                                \
    expect(run_rule(&r_, prim, ins, params), want, prim " " ins " [" params "]"); \
  } while (0)

#define RULE_VMA(ctx, prim, ins, params, want)                                 \
  do {                                                                         \
    Run r_ = {ctx, 1, NULL, 0};                                                \
    expect(run_rule(&r_, prim, ins, params), want, prim " " ins " [" params "]"); \
  } while (0)

#define RULE_W(ctx, prim, ins, params, written, want)                          \
  do {                                                                         \
    Run r_ = {ctx, 0, written, 0};                                             \
    expect(run_rule(&r_, prim, ins, params), want, prim " " ins " [" params "]"); \
  } while (0)

#define NOTIMPL_U(name)                                                        \
  "NotImplementedError: unreduced rule for " name " is not implemented. Please file an issue at "    \
  "https://github.com/jax-ml/jax/issues"
#define NOTIMPL_UR(name)                                                       \
  "NotImplementedError: unreduced/reduced rule for " name " is not implemented. Please file an issue " \
  "at https://github.com/jax-ml/jax/issues"

/* ---- elementwise ---- */

START_TEST(test_unary) {
  /* seed: jnp.sin(x) keeps x's sharding */
  RULE(XY, "sin", "f32[8@X,4@Y]", "", "f32[8@X,4@Y]");
  RULE(XY, "cos", "f32[8@(X,Y),4]", "", "f32[8@(X,Y),4]");
  RULE(XY, "exp", "f32[8]{R:X}", "", "f32[8]{R:X}");
  RULE(XY, "is_finite", "f32[8@X]", "", "bool[8@X]");
  RULE(XY, "abs", "c64[8@X]", "", "f32[8@X]");
  RULE(XY, "not", "bool[8@X]", "", "bool[8@X]");
  /* unreduced into a unary op, neg included */
  RULE(XY, "cos", "f32[4,4]{U:X}", "", NOTIMPL_U("cos"));
  RULE(XY, "sin", "f32[4]{U:X}", "", NOTIMPL_U("sin"));
  RULE(XY, "neg", "f32[4]{U:X}", "", NOTIMPL_U("neg"));
  /* integer_pow has no ur rule */
  RULE(XY, "integer_pow", "f32[8@X]", "y=2", "f32[8@X]");
  RULE(XY, "integer_pow", "f32[8]{R:X}", "y=2", NOTIMPL_UR("integer_pow"));
  RULE(XY, "integer_pow", "f32[8]{U:X}", "y=2", NOTIMPL_UR("integer_pow"));
  RULE(XY, "integer_pow", "i32[8]", "y=-2",
       "TypeError: Integers cannot be raised to negative powers, got integer_pow(int32[8], -2)");
  /* dtypes */
  RULE(XY, "sin", "i32[8]", "",
       "TypeError: sin does not accept dtype int32. Accepted dtypes are subtypes of floating, complexfloating.");
  RULE(XY, "floor", "i32[8]", "", "TypeError: floor does not accept dtype int32. Accepted dtypes are subtypes of floating.");
  RULE(XY, "abs", "i4[8]", "",
       "TypeError: abs does not accept dtype int4. Support for narrow-width integers is platform-dependent and limited "
       "to a few specific operations, e.g. basic arithmetic and type casting.");
  RULE(XY, "reduce_precision", "f32[8@X]{R:Y}", "exponent_bits=5|mantissa_bits=10", "f32[8@X]{R:Y}");
  RULE(XY, "reduce_precision", "f32[8]", "exponent_bits=0|mantissa_bits=10",
       "ValueError: reduce_precision: exponent_bits must be positive; got 0");
  RULE(XY, "copy_p", "f32[8@X]{U:Y}", "", "f32[8@X]{U:Y}");
  RULE(XY, "stop_gradient", "f32[8@X]", "", "f32[8@X]");
}
END_TEST

START_TEST(test_binary_shardings) {
  /* seed: x:[4@X,1] + y:[1,8@Y] */
  RULE(XY, "add", "i32[4@X,1]; i32[1,8@Y]", "", "i32[4@X,8@Y]");
  /* seed: an axis used twice */
  RULE(XY, "add", "i32[4@X,4]; i32[4,4@X]", "",
       "ShardingTypeError: add operation with inputs: i32[4@X,4], i32[4,4@X] produces an illegally sharded result: "
       "i32[4@X,4@X]");
  /* a sharded dim meets a replicated one of the same size */
  RULE(XY, "mul", "f32[8@X,4]; f32[8,4]", "", "f32[8@X,4]");
  RULE(XY, "sub", "f32[8,4]; f32[8@X,4@Y]", "", "f32[8@X,4@Y]");
  /* scalars take no part */
  RULE(XY, "mul", "f32[]; f32[8@X]", "", "f32[8@X]");
  RULE(XY, "max", "f32[]; f32[]", "", "f32[]");
  /* reference 3.3's message */
  RULE(xy, "mul", "f32[4@x,4@y]; f32[4@y,4@x]", "",
       "ShardingTypeError: mul got incompatible shardings for broadcasting: ('x', 'y'), ('y', 'x').");
  RULE(XY, "add", "f32[8@(X,Y)]; f32[8@X]", "",
       "ShardingTypeError: add got incompatible shardings for broadcasting: (('X', 'Y'),), ('X',).");
  /* shapes */
  RULE(XY, "add", "f32[3]; f32[4]", "", "TypeError: add got incompatible shapes for broadcasting: (3,), (4,).");
  RULE(XY, "add", "f32[3]; f32[4,3]", "", "TypeError: add: arrays must have the same number of dimensions, got {1, 2}");
  RULE(XY, "add", "f32[1,3]; f32[4,1]", "", "f32[4,3]");
  /* comparisons give bool; and/or on ints */
  RULE(XY, "lt", "f32[8@X]; f32[8@X]", "", "bool[8@X]");
  RULE(XY, "eq", "i32[8]; i32[8@Y]", "", "bool[8@Y]");
  RULE(XY, "and", "i32[8@X]; i32[8@X]", "", "i32[8@X]");
  RULE(XY, "pow", "f32[8@X]; i32[8@X]", "", "f32[8@X]");
}
END_TEST

START_TEST(test_binary_dtypes) {
  RULE(XY, "add", "f32[8]; i32[8]", "",
       "TypeError: lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.add is a similar "
       "function that does automatic type promotion on inputs).");
  RULE(XY, "rem", "f32[8]; f16[8]", "",
       "TypeError: lax.rem requires arguments to have the same dtypes, got float32, float16.");
  RULE(XY, "add", "bool[8]; bool[8]", "",
       "TypeError: add does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes of integer, "
       "floating, complexfloating.");
  RULE(XY, "shift_left", "i32[8]; f32[8]", "",
       "TypeError: shift_left does not accept dtype float32 at position 1. Accepted dtypes at position 1 are subtypes of "
       "integer.");
  RULE(XY, "mul", "bf16[8]; bf16[8]", "out_dtype=float32", "f32[8]");
  RULE(XY, "pow", "f32[8]; f16[8]", "",
       "TypeError: the first argument to pow must have an inexact dtype (float or complex), and the second argument "
       "must have an inexact or integer dtype, and two inexact dtypes must match, but got float32 and float16 "
       "respectively.");
}
END_TEST

START_TEST(test_binary_unreduced) {
  /* _add_ur_rule */
  RULE(XY, "add", "f32[8]{U:X}; f32[8]{U:X}", "", "f32[8]{U:X}");
  RULE(XY, "add", "f32[8]{U:X}; f32[8]{U:Y}", "",
       "ShardingTypeError: lhs and rhs to `add` must be unreduced along the same mesh axes. Got lhs=frozenset({'X'}), "
       "rhs=frozenset({'Y'})");
  RULE(XY, "add", "f32[8]{U:X}; f32[8]", "",
       "ShardingTypeError: lhs is unreduced while rhs is not. `add` operation does not allow this because there will be "
       "implicit communication. Please reduce lhs via `reshard` before calling `add`.");
  RULE(XY, "add", "f32[8]; f32[8]{U:X}", "",
       "ShardingTypeError: rhs is unreduced while lhs is not. `add` operation does not allow this because there will be "
       "implicit communication. Please reduce rhs via `reshard` before calling `add`.");
  /* _mul_ur_rule */
  RULE(XY, "mul", "f32[8]{U:X}; f32[8]{R:X}", "", "f32[8]{U:X}");
  RULE(XY, "mul", "f32[8]{R:X}; f32[8]{U:X}", "", "f32[8]{U:X}");
  RULE(XY, "mul", "f32[8]{U:X}; f32[8]{U:X}", "",
       "ShardingTypeError: lhs and rhs to `mul` cannot be unreduced since mul is bilinear. Got lhs=frozenset({'X'}), "
       "rhs=frozenset({'X'})");
  RULE(XY, "mul", "f32[8@Y]{U:X}; f32[8@Y]", "",
       "ShardingTypeError: RHS should be reduced along the same axes LHS is unreduced on. Got lhs=float32[8@Y]{U:X} and "
       "rhs=float32[8@Y]");
  /* _div_ur_rule */
  RULE(XY, "div", "f32[8]{U:X}; f32[8]{R:X}", "", "f32[8]{U:X}");
  RULE(XY, "div", "f32[8]{R:X}; f32[8]{U:X}", "",
       "ValueError: The denominator cannot be unreduced passed to `div`. Got y=ShapedArray(float32[8]{U:X})");
  /* nary_ur_rule */
  RULE(XY, "sub", "f32[8]{U:X}; f32[8]{U:X}", "", NOTIMPL_U("sub"));
  RULE(XY, "max", "f32[8]; f32[8]{U:X}", "", NOTIMPL_U("max"));
  RULE(XY, "ge", "f32[8]{U:X}; f32[8]{U:X}", "", NOTIMPL_U("ge"));
  /* default_nary_reduced_rule */
  RULE(XY, "sub", "f32[8]{R:X}; f32[8]{R:X}", "", "f32[8]{R:X}");
  RULE(XY, "sub", "f32[8]{R:X}; f32[8]{R:Y}", "",
       "ShardingTypeError: All inputs should be reduced across the same mesh axes. Got specs: {frozenset({'X'}), "
       "frozenset({'Y'})}");
  RULE(XY, "sub", "f32[8]{R:X}; f32[8]", "",
       "ShardingTypeError: Inputs cannot be replicated on the same axes that another input is reduced on. Got input "
       "type: float32[8] and reduced spec: frozenset({'X'})");
  RULE(XY, "sub", "f32[8,4@Y]{R:X}; f32[8@X,4@Y]", "",
       "ShardingTypeError: Inputs cannot be sharded/varying on the same axes that another input is reduced on. Reshard "
       "the input which is reduced to be sharded on the mesh axes it is reduced on via `jax.sharding.reshard(inp, "
       "jax.P(...))`. Got input type: float32[8@X,4@Y] and reduced spec: frozenset({'X'})");
}
END_TEST

START_TEST(test_modes_and_vma) {
  /* Auto mode: no sharding rule runs, the result is replicated */
  RULE(XA, "add", "f32[8]; f32[8]", "", "f32[8]");
  RULE(XA, "dot_general", "f32[8,4]; f32[4,16]", "dimension_numbers=(([1], [0]), ([], []))", "f32[8,16]");
  /* full manual mode: the ur rules see the manual sets; a primitive with
     no ur rule drops them silently (utils.call_ur_rule) */
  RULE(XM, "sin", "f32[4]{U:X}", "", NOTIMPL_U("sin"));
  RULE(XM, "add", "f32[4]{V:Y, U:X}; f32[4]{V:Y, U:X}", "", "f32[4]{U:X}");
  RULE(XM, "integer_pow", "f32[4]{U:X}", "y=3", "f32[4]");
  /* standard_vma_rule */
  RULE_VMA(XM, "add", "f32[4]{V:X}; f32[4]{V:X}", "", "f32[4]{V:X}");
  RULE_VMA(XM, "mul", "f32[4]{V:X}; f32[4]", "",
           "ValueError: Primitive mul requires varying manual axes to match, but got [frozenset({'X'}), frozenset()]. "
           "Please open an issue at https://github.com/jax-ml/jax/issues and as a temporary workaround pass the "
           "check_vma=False argument to `jax.shard_map`");
  RULE_VMA(XM, "dot_general", "f32[4,2]{V:(X,Y)}; f32[2,4]{V:X}", "dimension_numbers=(([1], [0]), ([], []))",
           "ValueError: Primitive dot_general requires varying manual axes to match, but got [frozenset({'X', 'Y'}), "
           "frozenset({'X'})]. Please open an issue at https://github.com/jax-ml/jax/issues and as a temporary "
           "workaround pass the check_vma=False argument to `jax.shard_map`");
  /* unary ops keep the operand's varying set unchecked */
  RULE_VMA(XM, "sin", "f32[4]{V:X}", "", "f32[4]{V:X}");
  RULE(XM, "mul", "f32[4]{V:X}; f32[4]", "", "f32[4]");
}
END_TEST

START_TEST(test_select_clamp_convert) {
  RULE(XY, "select_n", "bool[8@X]; f32[8@X]; f32[8@X]", "", "f32[8@X]");
  RULE(XY, "select_n", "bool[]; f32[8@X]{R:Y}; f32[8@X]{R:Y}", "", "f32[8@X]{R:Y}");
  RULE(XY22, "select_n", "bool[8]; f32[8@X]; f32[8@Y]", "",
       "ShardingTypeError: select cases must have the same shardings, got [NamedSharding(mesh=AbstractMesh('X': 2, "
       "'Y': 2, axis_types=(Explicit, Explicit)), spec=P('X',)), NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, "
       "axis_types=(Explicit, Explicit)), spec=P('Y',))].");
  RULE(XY22, "select_n", "bool[8@Y]; f32[8@X]; f32[8@X]", "",
       "ShardingTypeError: select `which` must be scalar or have the same sharding as cases, got `which` sharding "
       "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit)), spec=P('Y',)) but case "
       "sharding NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit)), spec=P('X',)).");
  RULE(XY, "select_n", "bool[]; f32[8]; f32[8]; f32[8]", "",
       "TypeError: select with boolean `which` cannot have > 2 cases.");
  RULE(XY, "select_n", "f32[]; f32[8]; f32[8]", "", "TypeError: select `which` must be boolean or integer type, got float32.");
  RULE(XY, "select_n", "bool[]; f32[8]; f32[4]", "", "TypeError: select cases must have the same shapes, got [(8,), (4,)].");
  RULE(XY, "clamp", "f32[]; f32[8@X]; f32[]", "", "f32[8@X]");
  RULE(XY, "clamp", "f32[4]; f32[8]; f32[]", "",
       "TypeError: clamp requires min.shape == operand.shape or min.shape == (), got min.shape=(4,), operand.shape=(8,).");
  RULE(XY, "clamp", "f32[]; f32[8]{R:X}; f32[]", "", NOTIMPL_UR("clamp"));
  RULE(XY, "convert_element_type", "f32[8@X]{U:Y}", "new_dtype=int32|weak_type=False|sharding=None", "i32[8@X]{U:Y}");
  RULE(XY, "convert_element_type", "f32[8@X]", "new_dtype=bfloat16|weak_type=False|sharding=P(None)", "bf16[8]");
  /* the printer drops `sharding`: the binder stands for it */
  RULE_W(XY, "convert_element_type", "f32[8@X]", "new_dtype=int32|weak_type=False", "i32[8@Y]", "i32[8@Y]");
  RULE(XY, "add_any", "f32[8@X]{U:Y}; f32[8@X]{U:Y}", "", "f32[8@X]{U:Y}");
  RULE(XY, "add_any", "f32[8@X]; f32[8]", "",
       "AssertionError: (ShapedArray(float32[8@X]), ShapedArray(float32[8]))");
}
END_TEST

/* ---- structural ---- */

START_TEST(test_reshape) {
  /* reference 3.6 */
  RULE(XY22, "reshape", "f32[8@X]", "new_sizes=(2, 4)|dimensions=None|sharding=None", "f32[2@X,4]");
  RULE(XY22, "reshape", "f32[4@X,2]", "new_sizes=(8,)|dimensions=None|sharding=None", "f32[8@X]");
  RULE(XY22, "reshape", "f32[4,2@X]", "new_sizes=(8,)|dimensions=None|sharding=None",
       "ShardingTypeError: This reshape is not supported. Please specify the sharding of the output via the "
       "`out_sharding` argument of jax.lax.reshape. Got operand type: float32[4,2@X], new sizes: (8,)");
  RULE(XY22, "reshape", "f32[8@X,4]", "new_sizes=(32,)|dimensions=None|sharding=None", "f32[32@X]");
  RULE(XY22, "reshape", "f32[8@(X,Y)]", "new_sizes=(2, 4)|dimensions=None|sharding=None", "f32[2@X,4@Y]");
  RULE(XY22, "reshape", "f32[8@X,1]", "new_sizes=(1, 8)|dimensions=None|sharding=None", "f32[1,8@X]");
  RULE(XY22, "reshape", "f32[8,4]", "new_sizes=(4, 8)|dimensions=None|sharding=None", "f32[4,8]");
  RULE(XY22, "reshape", "f32[8@X]", "new_sizes=(2, 4)|dimensions=(0,)|sharding=None",
       "ShardingTypeError: This reshape is not supported. Please specify the sharding of the output via the "
       "`out_sharding` argument of jax.lax.reshape. Got operand type: float32[8@X], new sizes: (2, 4)");
  /* a split that is not divisible by the axis */
  RULE(X4, "reshape", "f32[8@X]", "new_sizes=(2, 4)|dimensions=None|sharding=None",
       "ShardingTypeError: This reshape is not supported. Please specify the sharding of the output via the "
       "`out_sharding` argument of jax.lax.reshape. Got operand type: float32[8@X], new sizes: (2, 4)");
  /* two splits */
  RULE(XY22, "reshape", "f32[4@X,4@Y]", "new_sizes=(2, 2, 2, 2)|dimensions=None|sharding=None",
       "ShardingTypeError: This reshape is not supported. Please specify the sharding of the output via the "
       "`out_sharding` argument of jax.lax.reshape. Got operand type: float32[4@X,4@Y], new sizes: (2, 2, 2, 2)");
  /* out_sharding decides; the sets pass through */
  RULE(XY22, "reshape", "f32[4,2@X]", "new_sizes=(8,)|dimensions=None|sharding=P('X')", "f32[8@X]");
  RULE(XY22, "reshape", "f32[8@X]{U:Y}", "new_sizes=(2, 4)|dimensions=None|sharding=None", "f32[2@X,4]{U:Y}");
  RULE(XY22, "reshape", "f32[8]{U:Y}", "new_sizes=(2, 4)|dimensions=None|sharding=P(None, 'X')",
       "ValueError: out_sharding passed to reshape must be unreduced over the same mesh axes as operand. Got "
       "out_sharding: P(None, 'X') and operand type: f32[8]{U:Y}");
  RULE(XY22, "reshape", "f32[8]", "new_sizes=(2, 4)|dimensions=None|sharding=P(None, None, unreduced={'X'})",
       "ValueError: out_sharding passed to `reshape` cannot contain unreduced axes. Got NamedSharding(mesh="
       "AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit)), spec=P(None, None, unreduced={'X'}, "
       "unreduced_kind=sum))");
  RULE(XY22, "reshape", "f32[8]", "new_sizes=(3, 3)|dimensions=None|sharding=None",
       "TypeError: cannot reshape array of shape (8,) (size 8) into shape (3, 3) (size 9)");
}
END_TEST

START_TEST(test_broadcast_transpose_squeeze) {
  /* seed: jnp.sin(x).T */
  RULE(XY, "transpose", "f32[8@X,4@Y]", "permutation=(1, 0)", "f32[4@Y,8@X]");
  RULE(XY, "transpose", "f32[2,4]{U:X}", "permutation=(1, 0)", "f32[4,2]{U:X}");
  RULE(XY, "transpose", "f32[2,4]", "permutation=(0, 0)",
       "TypeError: transpose permutation isn't a permutation of operand dimensions, got permutation (0, 0) for operand "
       "shape (2, 4).");
  RULE(XY, "broadcast_in_dim", "f32[8@X]", "shape=(4, 8)|broadcast_dimensions=(1,)|sharding=None", "f32[4,8@X]");
  RULE(XY, "broadcast_in_dim", "f32[]", "shape=(8, 2)|broadcast_dimensions=()|sharding=P('X', None)", "f32[8@X,2]");
  RULE(XY, "broadcast_in_dim", "f32[8]{U:X}", "shape=(2, 8)|broadcast_dimensions=(1,)|sharding=None", "f32[2,8]{U:X}");
  RULE(XY, "broadcast_in_dim", "f32[3]", "shape=(2, 8)|broadcast_dimensions=(1,)|sharding=None",
       "TypeError: broadcast_in_dim operand dimension sizes must either be 1, or be equal to their corresponding "
       "dimensions in the target broadcast shape; got operand of shape (3,), target broadcast shape (2, 8), "
       "broadcast_dimensions (1,) ");
  /* the printer drops shape and sharding: taken from the binder */
  RULE_W(XY, "broadcast_in_dim", "f32[]", "", "f32[8@X,2]", "f32[8@X,2]");
  RULE(XY, "squeeze", "f32[1,8@X]{R:Y}", "dimensions=(0,)", "f32[8@X]{R:Y}");
  RULE(XY, "squeeze", "f32[2,8]", "dimensions=(0,)",
       "ValueError: cannot select an axis to squeeze out which has size not equal to one, got shape=(2, 8) and "
       "dimensions=(0,)");
  RULE(XY, "expand_dims", "f32[8@X]", "dimensions=(0,)", "f32[1,8@X]");
  RULE(XY, "rev", "f32[8@X]", "dimensions=(0,)", "f32[8@X]");
  RULE(XY, "rev", "f32[8]{U:X}", "dimensions=(0,)", NOTIMPL_UR("rev"));
}
END_TEST

START_TEST(test_concat_slice_pad) {
  RULE(XY22, "concatenate", "f32[4@X]; f32[4@X]", "dimension=0", "f32[8@X]");
  RULE(XY22, "concatenate", "f32[4@X]; f32[4]", "dimension=0",
       "ShardingTypeError: All operands should have the same sharding. Got shardings NamedSharding(mesh=AbstractMesh("
       "'X': 2, 'Y': 2, axis_types=(Explicit, Explicit)), spec=P('X',)), NamedSharding(mesh=AbstractMesh('X': 2, 'Y': "
       "2, axis_types=(Explicit, Explicit)), spec=P(None,))");
  RULE(XY22, "concatenate", "f32[4]{U:X}; f32[4]{U:X}", "dimension=0", "f32[8]{U:X}");
  RULE(XY22, "concatenate", "f32[4]; f32[4,2]", "dimension=0",
       "TypeError: Cannot concatenate arrays with different numbers of dimensions: got (4,), (4, 2).");
  RULE(XY22, "concatenate", "f32[4]; i32[4]", "dimension=0",
       "TypeError: lax.concatenate requires arguments to have the same dtypes, got float32, int32. (Tip: "
       "jnp.concatenate is a similar function that does automatic type promotion on inputs).");
  /* slicing keeps the operand's sharding while divisible */
  RULE(X4, "slice", "f32[8@X]", "start_indices=(0,)|limit_indices=(4,)|strides=None", "f32[4@X]");
  RULE(X4, "slice", "f32[8@X]", "start_indices=(0,)|limit_indices=(6,)|strides=None",
       "ShardingTypeError: slicing on sharded dims where out dim (6) is not divisible by mesh axes (4) with spec (X) "
       "is not implemented. Got input type=f32[8@X] and output shape=(6,)");
  RULE(X4, "slice", "f32[8@X]", "start_indices=(3,)|limit_indices=(4,)|strides=None", "f32[1]");
  RULE(X4, "slice", "f32[8]{U:X}", "start_indices=(0,)|limit_indices=(8,)|strides=(2,)", "f32[4]{U:X}");
  RULE(X4, "dynamic_slice", "f32[8@X]; i32[]", "slice_sizes=(4,)", "f32[4@X]");
  RULE(X4, "dynamic_slice", "f32[8]{U:X}; i32[]", "slice_sizes=(4,)", NOTIMPL_U("dynamic_slice"));
  RULE(X4, "dynamic_slice", "f32[8@X]; i32[]", "slice_sizes=(2,)",
       "ShardingTypeError: dynamic_slice on sharded dims where out dim (2) is not divisible by mesh axes (4) with spec "
       "(X) is not implemented. Got input type=f32[8@X] and output shape=(2,)");
  RULE(X4, "dynamic_update_slice", "f32[8@X]; f32[8@X]; i32[]", "", "f32[8@X]");
  RULE(X4, "dynamic_update_slice", "f32[8@X]; f32[8]; i32[]", "",
       "ShardingTypeError: dynamic_update_slice operand sharding must be equal to update sharding, got operand sharding "
       "float32[8@X]({Explicit: ('X',)}) and update sharding float32[8]({Explicit: ('X',)}).");
  RULE(X4, "pad", "f32[8@X]; f32[]", "padding_config=((0, 4, 0),)", "f32[12@X]");
  RULE(X4, "pad", "f32[8@X]; f32[]", "padding_config=((1, 1, 0),)",
       "ShardingTypeError: padding on sharded dims where out dim (10) is not divisible by mesh axes (4) with spec (X) "
       "is not implemented. Got input type=f32[8@X] and output shape=(10,)");
  RULE(X4, "pad", "f32[8]; i32[]", "padding_config=((1, 1, 0),)",
       "TypeError: pad operand and padding_value must be same dtype: got float32 and int32.");
  Run r = {X4, 0, NULL, 2};
  expect(run_rule(&r, "split", "f32[16@X,2]", "sizes=(8, 8)|axis=0"), "f32[8@X,2]; f32[8@X,2]", "split");
  expect(run_rule(&r, "sort", "f32[8,4@X]; i32[8,4@X]", "dimension=0|is_stable=True|num_keys=1"),
         "f32[8,4@X]; i32[8,4@X]", "sort");
  expect(run_rule(&r, "sort", "f32[8@X]; i32[8@X]", "dimension=0|is_stable=True|num_keys=1"),
         "ShardingTypeError: Arguments to sort must be unsharded over the sorting dimension. Got arg "
         "sharding=NamedSharding(mesh=AbstractMesh('X': 4, axis_types=(Explicit,)), spec=P('X',)) and sorting "
         "dimension=0",
         "sort");
#define GDN "dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), "   \
            "start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())|mode=1"
  /* x[idx] with a full slice of the sharded dim */
  RULE(XY22, "gather", "f32[8,4@X]; i32[3,1]", GDN "|slice_sizes=(1, 4)", "f32[3,4@X]");
  RULE(XY22, "gather", "f32[8,4]{R:Y}; i32[3,1]", GDN "|slice_sizes=(1, 4)", "f32[3,4]{R:Y}");
  RULE(XY22, "gather", "f32[8@X,4]; i32[3,1]", GDN "|slice_sizes=(1, 4)",
       "ShardingTypeError: Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing as "
       "out sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
       "operand=ShapedArray(float32[8@X,4]), indices=ShapedArray(int32[3,1])");
  RULE(XY22, "gather", "f32[8,4]; i32[3@Y,1]", GDN "|slice_sizes=(1, 4)",
       "ShardingTypeError: Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing as "
       "out sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
       "operand=ShapedArray(float32[8,4]), indices=ShapedArray(int32[3@Y,1])");
  RULE(XY22, "gather", "f32[8,4]; i32[3,1]{U:X}", GDN "|slice_sizes=(1, 4)", NOTIMPL_U("gather"));
  RULE(XY22, "gather", "f32[8,4]; i32[3,1]", GDN "|slice_sizes=(2, 4)",
       "TypeError: Gather op can only collapse slice dims with bound 1, but bound is 2 for index 0 at position 0.");
  RULE(XY22, "gather", "f32[8,4]; f32[3,1]", GDN "|slice_sizes=(1, 4)", "ValueError: indices must have an integer type");
  RULE(X4, "iota", "", "dtype=int32|shape=(8,)|dimension=0|sharding=None", "i32[8]");
  RULE(X4, "iota", "", "dtype=int32|shape=(8, 2)|dimension=0|sharding=P('X')", "i32[8@X,2]");
  RULE(X4, "iota", "", "dtype=int32|shape=(6,)|dimension=0|sharding=P('X')",
       "ValueError: Sharding spec ('X',) implies that array axis 0 is partitioned 4 times, but does not evenly divide "
       "the dimension size 6. Got shape: (6,) and sharding NamedSharding(mesh=AbstractMesh('X': 4, "
       "axis_types=(Explicit,)), spec=P('X',))");
}
END_TEST

/* ---- reductions ---- */

START_TEST(test_reduce) {
  /* seed: x.sum(0) */
  RULE(XY, "reduce_sum", "f32[8@X,4@Y]", "axes=(0,)|out_sharding=None", "f32[4@Y]");
  RULE(XY, "reduce_sum", "f32[8@X,4@Y]", "axes=(0, 1)|out_sharding=None", "f32[]");
  RULE(XY, "reduce_sum", "f32[8@X,4]{R:Y}", "axes=(1,)|out_sharding=None", "f32[8@X]{R:Y}");
  RULE(XY, "reduce_sum", "f32[8@X,4]", "axes=(0,)|out_sharding=P(None, unreduced={'X'})", "f32[4]{U:X}");
  RULE(XY, "reduce_sum", "f32[8@X,4]", "axes=(0,)|out_sharding=P('X')", "f32[4@X]");
  RULE(XY, "reduce_max", "f32[8@X]", "axes=(0,)|out_sharding=P(unreduced={'X'}, unreduced_kind=max)", "f32[]{U_max:X}");
  RULE(XY, "reduce_max", "f32[8@X]", "axes=(0,)|out_sharding=P(unreduced={'X'})",
       "ShardingTypeError: reduce_max requires `out_sharding`'s unreduced_kind to be UnreducedKind.max but got "
       "P(unreduced={'X'}, unreduced_kind=sum)");
  RULE(XY, "reduce_sum", "f32[8@X,4@Y]", "axes=(0,)|out_sharding=P(None, unreduced={'Y'})",
       "ShardingTypeError: out_sharding's unreduced axes should be in operand's specs that were reduce_sum over. Got "
       "operand=ShapedArray(float32[8@X,4@Y]), axes=frozenset({0}), unreduced_spec=frozenset({'Y'})");
  RULE(XY, "reduce_sum", "f32[8]", "axes=(0,)|out_sharding=P(reduced={'X'})",
       "ValueError: out_sharding passed to reduce_sum cannot be reduced. Got out_sharding=NamedSharding(mesh="
       "AbstractMesh('X': 4, 'Y': 2, axis_types=(Explicit, Explicit)), spec=P(reduced={'X'}))");
  RULE(XY, "reduce_sum", "f32[8]", "axes=(0, 0)|out_sharding=None", "ValueError: duplicate value in 'axes' of reduction: (0, 0)");
  RULE(XY, "reduce_sum", "f32[8]", "axes=(1,)|out_sharding=None",
       "ValueError: reduction axes (1,) contains out-of-bounds indices for float32[8].");
  RULE(XY, "reduce_sum", "bool[8]", "axes=(0,)|out_sharding=None",
       "TypeError: reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of number.");
  RULE(XY, "reduce_sum", "f32[8]{U:X}", "axes=(0,)|out_sharding=None", "f32[]{U:X}");
  RULE(XY, "reduce_prod", "f32[8@X,4]", "axes=(0,)", "f32[4]");
  RULE(XY, "reduce_prod", "f32[8]{R:X}", "axes=(0,)",
       "ValueError: Using *pspec is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use "
       "*spec.partitions");
  RULE(XY, "reduce_and", "bool[8@X,4@Y]", "axes=(1,)", "bool[8@X]");
  RULE(XY, "reduce_or", "f32[8]", "axes=(0,)", "TypeError: logical reduction requires operand dtype bool or int, got float32.");
  RULE(XY, "argmax", "f32[8@X,4@Y]", "axes=(0,)|index_dtype=int32", "i32[4@Y]");
  RULE(XY, "argmin", "f32[8,4]", "axes=(0,)|index_dtype=float32",
       "TypeError: index_dtype must be an integer type, but got float32");
  RULE(XY, "cumsum", "f32[8@X,4]", "axis=1|reverse=False", "f32[8@X,4]");
  RULE(XY, "cumsum", "f32[8@X,4]", "axis=0|reverse=False",
       "ShardingTypeError: Input should be unsharded over the axis being reduced. Got input type=float32[8@X,4] and "
       "axis=0");
  RULE(XY, "cummax", "f32[8,4]{U:X}", "axis=0|reverse=False",
       "ValueError: Using pspec[...] is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use "
       "spec.partitions[...]");
}
END_TEST

/* ---- dot_general ---- */

#define MATMUL "dimension_numbers=(([1], [0]), ([], []))|precision=None|preferred_element_type=float32"

START_TEST(test_dot_general) {
  /* seed: the ambiguous sharded contraction */
  RULE(XY, "dot_general", "f32[8,4@X]; f32[4@X,16]", MATMUL "|out_sharding=None",
       "ShardingTypeError: Contracting dimensions are sharded and it is ambiguous how the output should be sharded. "
       "Please specify the output sharding via the `out_sharding` parameter. Got lhs_contracting_spec=('X',) and "
       "rhs_contracting_spec=('X',)");
  /* ... resolved by out_sharding (reference 3.4) */
  RULE(XY, "dot_general", "f32[8,4@X]; f32[4@X,16]", MATMUL "|out_sharding=P('X', None)", "f32[8@X,16]");
  RULE(XY, "dot_general", "f32[8,4@X]; f32[4@X,16]", MATMUL "|out_sharding=P(None, None)", "f32[8,16]");
  RULE(XY, "dot_general", "f32[8,4@X]; f32[4@X,16]", MATMUL "|out_sharding=P(None, None, unreduced={'X'})",
       "f32[8,16]{U:X}");
  /* FSDP: one side sharded */
  RULE(XY, "dot_general", "f32[8,4]; f32[4@X,16]", MATMUL "|out_sharding=None", "f32[8,16]");
  RULE(XY, "dot_general", "f32[8@X,4]; f32[4,16@Y]", MATMUL "|out_sharding=None", "f32[8@X,16@Y]");
  /* batch dims */
  RULE(XY, "dot_general", "f32[2@Y,8,4]; f32[2@Y,4,16]", "dimension_numbers=(([2], [1]), ([0], [0]))", "f32[2@Y,8,16]");
  RULE(XY, "dot_general", "f32[2@Y,8,4]; f32[2,4,16]", "dimension_numbers=(([2], [1]), ([0], [0]))",
       "ShardingTypeError: dot_general requires lhs batch dimensions and rhs batch dimensions to have the same "
       "sharding, got ('Y',) and (None,).");
  /* reference 3.4's illegal result */
  RULE(xy, "dot_general", "i32[8@x,2]; i32[2,8@x]", "dimension_numbers=(([1], [0]), ([], []))",
       "ShardingTypeError: dot_general operation with inputs: i32[8@x,2], i32[2,8@x] produces an illegally sharded "
       "result: i32[8@x,8@x]");
  /* unreduced */
  RULE(XY, "dot_general", "f32[8,4]{U:X}; f32[4,16]", MATMUL,
       "ShardingTypeError: lhs or rhs passed to dot_general cannot be unreduced. Got lhs=ShapedArray(float32[8,4]{U:X}) "
       "and rhs=ShapedArray(float32[4,16])");
  RULE(XY, "dot_general", "f32[8,4@X]; f32[4@Y,16]", MATMUL "|out_sharding=P(None, None, unreduced={'X'})",
       "ShardingTypeError: lhs and rhs contracting dims should be sharded identically when out_sharding provided to "
       "dot_general mentions unreduced_axes. Got lhs_contracting_spec=('X',), rhs_contracting_spec=('Y',)");
  RULE(XY, "dot_general", "f32[8,4@X]; f32[4@X,16]", MATMUL "|out_sharding=P(None, None, unreduced={'Y'})",
       "ShardingTypeError: out_sharding's unreduced axes should be equal to the contracting specs. Got unreduced "
       "axes=frozenset({'Y'}) and contracting spec=('X',)");
  /* reduced inputs are accepted and dropped */
  RULE(XY, "dot_general", "f32[8@X,4]; f32[4,2]{R:X}", MATMUL, "f32[8@X,2]");
  /* shapes and dtypes */
  RULE(XY, "dot_general", "f32[8,4]; f32[5,16]", MATMUL,
       "TypeError: dot_general requires contracting dimensions to have the same shape, got (4,) and (5,).");
  RULE(XY, "dot_general", "f32[8,4]; f32[4,16]", "dimension_numbers=(([2], [0]), ([], []))",
       "TypeError: dot_general requires lhs dimension numbers to be nonnegative and less than the number of axes of "
       "the lhs value, got lhs_batch of () and lhs_contracting of (2,) for lhs of rank 2");
  RULE(XY, "dot_general", "bf16[8,4]; bf16[4,16]", MATMUL, "f32[8,16]");
  RULE(XY, "dot_general", "i32[8,4]; i32[4,16]", "dimension_numbers=(([1], [0]), ([], []))|preferred_element_type=int8",
       "TypeError: `preferred_element_type` must not be narrower than the original type, got preferred_element_type of "
       "int8 for result type of int32.");
}
END_TEST

/* ---- sharding casts ---- */

START_TEST(test_reshard) {
  Run r = {X4, 0, "f32[8@X]", 0};
  expect(run_rule(&r, "reshard", "f32[8]", ""), "f32[8@X]", "reshard from the binder");
  RULE(X4, "reshard", "f32[8]", "dst_sharding=P('X')", "f32[8@X]");
  RULE(X4, "reshard", "f32[8]{U:X}", "dst_sharding=P(None)", "f32[8]");
  RULE(X4, "reshard", "f32[8]", "dst_sharding=P(None, reduced={'X'})", "f32[8]{R:X}");
  RULE(X4, "reshard", "f32[8]", "dst_sharding=P(None, unreduced={'X'}, unreduced_kind=max)",
       "ValueError: out_sharding passed to `jax.reshard` cannot be more unreduced than the input. Got input pspec: "
       "P(None,), out pspec: P(None, unreduced={'X'}, unreduced_kind=max)");
  RULE(X4, "reshard", "f32[8]{U_max:X}", "dst_sharding=P(None, unreduced={'X'})",
       "ValueError: The unreduced_kind of input and output sharding passed to `jax.reshard` should be the same. Got "
       "input spec: P(None, unreduced={'X'}, unreduced_kind=max) and output spec: P(None, unreduced={'X'}, "
       "unreduced_kind=sum)");
  RULE(X4, "reshard", "f32[6]", "dst_sharding=P('X')",
       "ValueError: Sharding spec ('X',) implies that array axis 0 is partitioned 4 times, but does not evenly divide "
       "the dimension size 6. Got shape: (6,) and sharding NamedSharding(mesh=AbstractMesh('X': 4, "
       "axis_types=(Explicit,)), spec=P('X',))");
  RULE(X4, "reshard", "f32[8]", "dst_sharding=P('X', reduced={'X'})",
       "ValueError: partitions cannot overlap with reduced axes passed to PartitionSpec. Got partitions: ('X',) and "
       "reduced axes: frozenset({'X'})");
  RULE(X4, "reshard", "f32[8]", "dst_sharding=P('Z')",
       "ValueError: Resource axis: Z of P('Z',) is not found in mesh: ('X',).");
  RULE(X4, "reshard", "f32[8]", "dst_sharding=None",
       "ValueError: Reshard should only be used with out_shardings which are non-None and have a non-empty mesh. Got "
       "sharding None.");
  RULE(X4, "sharding_constraint", "f32[8@X]", "", "f32[8@X]");
  RULE(X4, "layout_constraint", "f32[8@X]", "", "f32[8@X]");
}
END_TEST

/* ---- whole jaxprs through the checker ---- */

START_TEST(test_texts) {
  /* reference 5.6: the gradient with reduced weights */
  expect(check_text(mesh("X:2"),
                    "{ lambda ; a:f32[4,2] b:f32[8@X,4]. let\n"
                    "    c:f32[4,2]{R:X} = reshard a\n"
                    "    d:f32[8@X,2] = dot_general[\n"
                    "      dimension_numbers=(([1], [0]), ([], []))\n"
                    "      preferred_element_type=float32\n"
                    "    ] b c\n"
                    "    e:f32[8@X,2] = integer_pow[y=2] d\n"
                    "    f:f32[8@X,2] = mul 2.0:f32[] d\n"
                    "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] e\n"
                    "    g:f32[] = reshard 1.0:f32[]\n"
                    "    h:f32[8@X,2] = broadcast_in_dim g\n"
                    "    i:f32[8@X,2] = mul h f\n"
                    "    j:f32[2,4]{U:X} = dot_general[\n"
                    "      dimension_numbers=(([0], [0]), ([], []))\n"
                    "      preferred_element_type=float32\n"
                    "    ] i b\n"
                    "    k:f32[4,2]{U:X} = transpose[permutation=(1, 0)] j\n"
                    "    l:f32[4,2] = reshard k\n"
                    "  in (l,) }"),
         "ok", "reference 5.6");
  /* the written binder must agree with the rule */
  expect(check_text(NULL, "{ lambda ; a:f32[8@X]. let b:f32[8] = sin a in (b,) }"),
         "TypeError: sin computes f32[8@X] for its first output, but the jaxpr writes f32[8]", "sin");
  expect(check_text(NULL, "{ lambda ; a:i32[4@X,4] b:i32[4,4@X]. let c:i32[4@X,4] = add a b in (c,) }"),
         "ShardingTypeError: add operation with inputs: i32[4@X,4], i32[4,4@X] produces an illegally sharded result: "
         "i32[4@X,4@X]",
         "seed add");
  expect(check_text(NULL, "{ lambda ; a:f32[8@X,4] b:f32[4,16@Y]. let\n"
                          "    c:f32[8@X,16@Y] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
                          "    d:f32[16@Y,8@X] = transpose[permutation=(1, 0)] c\n"
                          "    e:f32[16@Y] = reduce_max[axes=(1,) out_sharding=None] d\n"
                          "    f:bool[16@Y] = gt e 0.0:f32[]\n"
                          "    h:f32[16@Y] = neg e\n"
                          "    g:f32[16@Y] = select_n f e h\n"
                          "  in (g,) }"),
         "ok", "a chain");
  /* a dot's binder stands for the out_sharding the printer dropped */
  expect(check_text(NULL, "{ lambda ; a:f32[8,4@X] b:f32[4@X,16]. let\n"
                          "    c:f32[8@X,16] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
                          "  in (c,) }"),
         "ok", "dot with out_sharding");
  expect(check_text(NULL, "{ lambda ; a:f32[8,4@X] b:f32[4@Y,16]. let\n"
                          "    c:f32[8,16]{U:X} = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
                          "  in (c,) }"),
         "ShardingTypeError: lhs and rhs contracting dims should be sharded identically when out_sharding provided to "
         "dot_general mentions unreduced_axes. Got lhs_contracting_spec=('X',), rhs_contracting_spec=('Y',)",
         "dot unreduced");
  /* the older printer's untyped literals take the other operand's dtype */
  expect(check_text(NULL, "{ lambda ; a:f16[8]. let b:f16[8] = mul a 2.0 in (b,) }"), "ok", "bare literal");
}
END_TEST

int main(void) {
  sr_lax_init(); /* the rule slots (lax/lax.h) */
  setup();
  Suite *s = suite_create("rules");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_unary);
  tcase_add_test(tc, test_binary_shardings);
  tcase_add_test(tc, test_binary_dtypes);
  tcase_add_test(tc, test_binary_unreduced);
  tcase_add_test(tc, test_modes_and_vma);
  tcase_add_test(tc, test_select_clamp_convert);
  tcase_add_test(tc, test_reshape);
  tcase_add_test(tc, test_broadcast_transpose_squeeze);
  tcase_add_test(tc, test_concat_slice_pad);
  tcase_add_test(tc, test_reduce);
  tcase_add_test(tc, test_dot_general);
  tcase_add_test(tc, test_reshard);
  tcase_add_test(tc, test_texts);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* check_manual.c: unit tests of the control-flow and manual-mode type
 * rules (lib/lax/control.c, lib/lax/manual.c), run through
 * the checker on parsed texts.  Messages are compared whole: they are
 * JAX's, and a changed word is a bug. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "lax/lax.h"
#include "check/rule.h"
#include "text/parse.h"
#include "util/intern.h"

#define MESH_I "AbstractMesh('i': 2, axis_types=(Explicit,), device_kind=cpu, num_cores=None, platform=cpu)"
#define MESH_IJ                                                                                    \
  "AbstractMesh('i': 2, 'j': 2, axis_types=(Explicit, Explicit), device_kind=cpu, num_cores=None, " \
  "platform=cpu)"

/* A shard_map over 'i' (size 2) with one input and one output. */
#define SMAP1(outer_in, outer_out, in_spec, body, out_spec)                     \
  "{ lambda ; " outer_in ". let\n"                                               \
  "    " outer_out " = shard_map[\n"                                             \
  "      check_vma=True\n"                                                       \
  "      in_specs=(" in_spec ",)\n"                                              \
  "      jaxpr=" body "\n"                                                       \
  "      mesh=" MESH_I "\n"                                                      \
  "      newly_manual_axes=frozenset({'i'})\n"                                   \
  "      out_specs=(" out_spec ",)\n"                                            \
  "    ] a\n"                                                                    \
  "  in (b,) }"

typedef struct Result {
  int errors;      /* what sr_check_jaxpr returned, or -1 for a parse error */
  char *first;     /* "Exc: message" of the first diagnostic, or NULL */
  int ndiags;
  int nunknown;
} Result;

/* Parses text and checks it, strict or trusting primitives without
   rules, in the context of mesh (NULL: the text's own). */
static Result run(const char *text, int strict, const SrMesh *mesh) {
  Result r = {0, NULL, 0, 0};
  SrDiags d = SR_DIAGS_INIT;
  SrSrc *src = sr_src_new("t", text, strlen(text), 1);
  size_t end;
  SrProgram *p = sr_parse_program(src, 0, &end, NULL, &d);
  if (!p) {
    r.errors = -1;
  } else {
    SrCheckOpts opts = {mesh, strict};
    SrCheckResult res;
    r.errors = sr_check_jaxpr(p->top, &opts, &d, &res);
    r.nunknown = res.nunknown;
    sr_program_unref(p);
  }
  r.ndiags = d.count;
  if (d.first) {
    SrBuf b = SR_BUF_INIT;
    if (d.first->exc) sr_buf_printf(&b, "%s: ", d.first->exc);
    sr_buf_puts(&b, d.first->msg);
    r.first = sr_buf_steal(&b);
  }
  sr_diags_clear(&d);
  sr_src_unref(src);
  return r;
}

#define CHECK_OK(text)                                                              \
  do {                                                                              \
    Result r_ = run(text, 1, NULL);                                                 \
    ck_assert_msg(r_.errors == 0 && r_.ndiags == 0, "expected ok, got %s", r_.first); \
    free(r_.first);                                                                 \
  } while (0)

/* The first error is exactly msg. */
#define CHECK_ERR(text, msg)                                                              \
  do {                                                                                    \
    Result r_ = run(text, 1, NULL);                                                       \
    ck_assert_msg(r_.first != NULL, "expected an error, the text checked");               \
    ck_assert_str_eq(r_.first, msg);                                                      \
    free(r_.first);                                                                       \
  } while (0)

/* ---- reference examples that must check ---- */

START_TEST(test_reference_shard_map) {
  /* reference 4.1 */
  CHECK_OK("{ lambda ; a:f32[6@i] b:f32[3]. let\n"
           "    c:f32[6@i] = shard_map[\n"
           "      check_vma=True\n"
           "      in_specs=(P('i',), P())\n"
           "      jaxpr={ lambda ; d:f32[3]{V:i} e:f32[3]. let\n"
           "          f:f32[3]{V:i} = pvary[axes=('i',)] e\n"
           "          g:f32[3]{V:i} = mul d f\n"
           "        in (g,) }\n"
           "      mesh=" MESH_I "\n"
           "      newly_manual_axes=frozenset({'i'})\n"
           "      out_specs=(P('i',),)\n"
           "    ] a b\n"
           "  in (c,) }");
  /* reference 4.5: matmul_partial */
  CHECK_OK("{ lambda ; a:f32[2,2@X] b:f32[2@X,2]. let\n"
           "    c:f32[2,2]{U:X} = shard_map[\n"
           "      check_vma=True\n"
           "      in_specs=(P(None, 'X'), P('X', None))\n"
           "      jaxpr={ lambda ; d:f32[2,1]{V:X} e:f32[1,2]{V:X}. let\n"
           "          f:f32[2,2]{V:X} = dot_general[\n"
           "            dimension_numbers=(([1], [0]), ([], []))\n"
           "            preferred_element_type=float32\n"
           "          ] d e\n"
           "          g:f32[2,2]{U:X} = vary_unreduced_cast_p[axes=('X',)] f\n"
           "        in (g,) }\n"
           "      mesh=AbstractMesh('X': 2, axis_types=(Explicit,), device_kind=cpu, num_cores=None, "
           "platform=cpu)\n"
           "      newly_manual_axes=frozenset({'X'})\n"
           "      out_specs=(P(None, None, unreduced={'X'}, unreduced_kind=sum),)\n"
           "    ] a b\n"
           "  in (c,) }");
}
END_TEST

START_TEST(test_reference_control) {
  /* reference 1.3 and 1.11 */
  CHECK_OK("{ lambda ; a:f32[1]. let\n"
           "    b:f32[1] = jit[\n"
           "      name=<lambda>\n"
           "      jaxpr={ lambda ; a:f32[1] c:f32[1] d:f32[1]. let\n"
           "          e:f32[1] = mul a c\n"
           "          b:f32[1] = mul e d\n"
           "        in (b,) }\n"
           "    ] a a a\n"
           "  in (b,) }");
  CHECK_OK("{ lambda ; a:f32[]. let\n"
           "    b:bool[] = ge a 0.0:f32[]\n"
           "    c:f32[] = add a 1.0:f32[]\n"
           "    d:f32[] = add a 2.0:f32[]\n"
           "    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
           "    f:f32[] = cond[\n"
           "      branches=(\n"
           "        { lambda ; g:f32[] h:f32[] i:f32[]. let j:f32[] = sub i g in (j,) }\n"
           "        { lambda ; k:f32[] l:f32[] m:f32[]. let n:f32[] = add l k in (n,) }\n"
           "      )\n"
           "    ] e a c d\n"
           "  in (f,) }");
  CHECK_OK("{ lambda ; a:f32[1]. let\n"
           "    b:i32[] c:f32[1] = jit[\n"
           "      name=<lambda>\n"
           "      jaxpr={ lambda ; a:f32[1]. let  in (2:i32[], a) }\n"
           "    ] a\n"
           "  in (b, c) }");
  /* the 2021-2024 printer: pjit, xla_call, bare literals, a scan with
     num_consts/num_carry, a while with `_:*` outputs, constvars */
  CHECK_OK("{ lambda ; a:f32[] b:f32[3]. let\n"
           "    c:f32[3] = pjit[name=f jaxpr={ lambda ; d:f32[] e:f32[3]. let f:f32[3] = mul e d in (f,) }] a b\n"
           "    g:f32[3] = xla_call[call_jaxpr={ lambda ; h:f32[3]. let i:f32[3] = sin h in (i,) } name=g] c\n"
           "  in (g,) }");
  CHECK_OK("{ lambda ; a:f32[16] b:f32[16]. let\n"
           "    d:f32[] e:f32[16] = scan[\n"
           "      jaxpr={ lambda ; a:f32[] b:f32[] c:f32[] d:f32[]. let\n"
           "          e:f32[] = mul c d\n"
           "          g:f32[] = add b e\n"
           "          h:f32[] = add g a\n"
           "        in (h, b) }\n"
           "      length=16\n"
           "      linear=(False, False, False, False)\n"
           "      num_carry=1\n"
           "      num_consts=1\n"
           "      reverse=False\n"
           "      unroll=1\n"
           "    ] 2.0 0.0 a b\n"
           "  in (d, e) }");
  CHECK_OK("{ lambda ; a:f32[16] b:i32[]. let\n"
           "    _:* _:* e:f32[16] = while[\n"
           "      body_jaxpr={ lambda ; a:f32[16] c:i32[] d:i32[] e:f32[16]. let\n"
           "          f:i32[] = add c 1\n"
           "          i:f32[16] = add e a\n"
           "        in (f, d, i) }\n"
           "      body_nconsts=1\n"
           "      cond_jaxpr={ lambda ; a:i32[] b:i32[] c:f32[16]. let\n"
           "          d:bool[] = lt a b\n"
           "        in (d,) }\n"
           "      cond_nconsts=0\n"
           "    ] a 0 b a\n"
           "  in (e,) }");
  CHECK_OK("{ lambda ; a:f32[] b:f32[1]. let\n"
           "    c:f32[1] = cond[\n"
           "      branches=(\n"
           "        { lambda d:i32[1]; e:f32[1]. let  in (e,) }\n"
           "        { lambda ; f:f32[1]. let g:f32[1] = neg f in (g,) }\n"
           "      )\n"
           "    ] True b\n"
           "  in (c,) }");
}
END_TEST

START_TEST(test_calls_and_barrier) {
  CHECK_OK("{ lambda ; a:f32[2]. let\n"
           "    b:f32[2] = custom_jvp_call[\n"
           "      name=f\n"
           "      call_jaxpr={ lambda ; c:f32[2]. let d:f32[2] = sin c in (d,) }\n"
           "      jvp=f_jvp\n"
           "      symbolic_zeros=False\n"
           "    ] a\n"
           "    e:f32[2] = custom_vjp_call[\n"
           "      name=g\n"
           "      bwd=g_bwd\n"
           "      call_jaxpr={ lambda ; f:f32[2]. let g:f32[2] = cos f in (g,) }\n"
           "      fwd=g_fwd\n"
           "      symbolic_zeros=False\n"
           "    ] b\n"
           "    h:f32[2] = checkpoint[\n"
           "      differentiated=False\n"
           "      jaxpr={ lambda ; i:f32[2]. let j:f32[2] = sin i in (j,) }\n"
           "      policy=None\n"
           "      prevent_cse=True\n"
           "    ] e\n"
           "    k:f32[2] l:f32[2] = optimization_barrier h b\n"
           "  in (k, l) }");
  CHECK_ERR("{ lambda ; a:f32[2]. let\n"
            "    b:f32[2] = jit[name=f jaxpr={ lambda ; c:f32[2] d:f32[2]. let  in (c,) }] a\n"
            "  in (b,) }",
            "JaxprTypeError: Call primitive jit with 1 operands cannot call jaxpr with 2 inputs");
  /* a jit's result is what its body returns */
  CHECK_ERR("{ lambda ; a:f32[2]. let\n"
            "    b:f32[3] = jit[name=f jaxpr={ lambda ; c:f32[2]. let d:f32[2] = sin c in (d,) }] a\n"
            "  in (b,) }",
            "TypeError: jit computes f32[2] for its first output, but the jaxpr writes f32[3]");
}
END_TEST

/* ---- manual mode: results ---- */

START_TEST(test_collective_results) {
  /* the result types the rules compute, seen through a deliberately wrong
     written type */
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[8@i]", "P('i',)",
                  "{ lambda ; c:f32[4]{V:i}. let\n"
                  "          d:f32[4] = all_gather[all_gather_dimension=0 axis_index_groups=None axis_name=('i',) "
                  "axis_size=2 tiled=False] c\n"
                  "        in (d,) }",
                  "P('i',)"),
            "TypeError: all_gather computes f32[2,4]{V:i} for its first output, but the jaxpr writes f32[4]");
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[8@i]", "P('i',)",
                  "{ lambda ; c:f32[4]{V:i}. let\n"
                  "          d:f32[4] = all_gather_invariant[all_gather_dimension=0 axis_name=('i',) "
                  "axis_size=2 tiled=True] c\n"
                  "        in (d,) }",
                  "P('i',)"),
            "TypeError: all_gather_invariant computes f32[8] for its first output, but the jaxpr writes f32[4]");
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[8@i]", "P('i',)",
                  "{ lambda ; c:f32[4]{V:i}. let\n"
                  "          d:f32[4] = axis_index[axis_name=i] \n"
                  "        in (c,) }",
                  "P('i',)"),
            "TypeError: axis_index computes i32[]{V:i} for its first output, but the jaxpr writes f32[4]");
  /* a shard_map's result: dimensions multiplied back, unreduced from the
     out_spec */
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[4]", "P('i',)",
                  "{ lambda ; c:f32[4]{V:i}. let  in (c,) }", "P('i',)"),
            "TypeError: shard_map computes f32[8@i] for its first output, but the jaxpr writes f32[4]");
  /* and an argument's type inside */
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[8@i]", "P('i',)", "{ lambda ; c:f32[8]. let  in (c,) }", "P('i',)"),
            "TypeError: the first input of this jaxpr is written f32[8] but it receives f32[4]{V:i}");
}
END_TEST

START_TEST(test_manual_context) {
  /* a body checked alone in a context whose axis 'i' is Manual, as a
     shard_map checks its body -- but with check_vma off (the checker's
     top level), so all_gather and reduce_scatter give invarying results
     (lax/parallel.py: collective_vma_rule) */
  SrMesh m;
  memset(&m, 0, sizeof m);
  m.n = 1;
  m.names[0] = sr_intern_cstr("i");
  m.sizes[0] = 4;
  m.types[0] = SR_AXIS_MANUAL;
  m.abstract = 1;
  const SrMesh *mesh = sr_mesh_intern(&m);
  const char *body = "{ lambda ; a:f32[8]{V:i} b:f32[8]. let\n"
                     "    c:f32[8] = psum_invariant[axes=('i',)] a\n"
                     "    d:f32[8]{V:i} = pvary[axes=('i',)] b\n"
                     "    e:f32[32] = all_gather[all_gather_dimension=0 axis_index_groups=None "
                     "axis_name=('i',) axis_size=4 tiled=True] d\n"
                     "    f:f32[2] = reduce_scatter[axis_index_groups=None axis_name=('i',) axis_size=4 "
                     "scatter_dimension=0 tiled=True] a\n"
                     "  in (c, e, f) }";
  Result r = run(body, 1, mesh);
  ck_assert_msg(r.errors == 0 && r.ndiags == 0, "%s", r.first);
  free(r.first);
  /* without the context the axis is unbound */
  r = run(body, 1, NULL);
  ck_assert_str_eq(r.first, "NameError: Found an unbound axis name: i. To fix this, please call psum under "
                            "`jax.shard_map`.");
  free(r.first);
  /* non-strict: an unknown primitive in a body is trusted and listed */
  r = run("{ lambda ; a:f32[8]{V:i}. let\n"
          "    b:f32[8]{V:i} = frobnicate a\n"
          "    c:f32[8] = psum_invariant[axes=('i',)] b\n"
          "  in (c,) }",
          0, mesh);
  ck_assert_int_eq(r.errors, 0);
  ck_assert_int_eq(r.nunknown, 1);
  free(r.first);
}
END_TEST

/* ---- manual mode: JAX's errors ---- */

START_TEST(test_collective_errors) {
  CHECK_ERR(SMAP1("a:f32[8]", "b:f32[8]", "P()",
                  "{ lambda ; c:f32[8]. let\n"
                  "          d:f32[8] = psum_invariant[axes=('i',)] c\n"
                  "        in (d,) }",
                  "P()"),
            "ValueError: psum is a variant->invariant collective. This means that the axis names mentioned in "
            "`axes` passed to `psum` must be present in `jax.typeof(inp).mat.varying`. Got axes=('i',) and "
            "jax.typeof(inp).mat.varying=frozenset()");
  CHECK_ERR(SMAP1("a:f32[8]", "b:f32[8]", "P()",
                  "{ lambda ; c:f32[8]. let\n"
                  "          d:f32[8] = ppermute[axis_name=('i',) perm=((0, 1), (1, 0))] c\n"
                  "        in (d,) }",
                  "P()"),
            "ValueError: Collective ppermute must be applied to a device-varying  type, but got frozenset() for "
            "collective acting over axis name ('i',). Please open an issue at https://github.com/jax-ml/jax/issues "
            "and as a temporary workaround pass the check_vma=False argument to `jax.shard_map`");
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[8@i]", "P('i',)",
                  "{ lambda ; c:f32[4]{V:i}. let\n"
                  "          d:f32[4]{V:i} = pvary[axes=('i',)] c\n"
                  "        in (d,) }",
                  "P('i',)"),
            "ValueError: pvary is a invariant->variant collective. This means that the axis names mentioned in "
            "`axes` passed to `pvary` must not be present in `jax.typeof(inp).mat.varying`. Got axes=('i',) and "
            "jax.typeof(inp)=float32[4]{V:i}");
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[8@i]", "P('i',)",
                  "{ lambda ; c:f32[4]{V:i}. let\n"
                  "          d:f32[4]{V:i} = reduce_scatter[axis_index_groups=None axis_name=('i',) axis_size=2 "
                  "scatter_dimension=0 tiled=False] c\n"
                  "        in (d,) }",
                  "P('i',)"),
            "ValueError: reduce_scatter operand scatter dimension size 4 must match shard count 2");
  CHECK_ERR(SMAP1("a:f32[6@i]", "b:f32[6@i]", "P('i',)",
                  "{ lambda ; c:f32[3]{V:i}. let\n"
                  "          d:f32[1]{V:i} = reduce_scatter[axis_index_groups=None axis_name=('i',) axis_size=2 "
                  "scatter_dimension=0 tiled=True] c\n"
                  "        in (d,) }",
                  "P('i',)"),
            "ValueError: tiled reduce_scatter operand scatter dimension size 3 must be divisible by shard_count 2");
  CHECK_ERR(SMAP1("a:f32[8]{U:i}", "b:f32[8]", "P(None, unreduced={'i'}, unreduced_kind=sum)",
                  "{ lambda ; c:f32[8]{U:i}. let\n"
                  "          d:f32[8]{V:i} = all_gather[all_gather_dimension=0 axis_index_groups=None "
                  "axis_name=('i',) axis_size=2 tiled=True] c\n"
                  "        in (d,) }",
                  "P('i',)"),
            "ValueError: all_gather cannot accept args which are unreduced. Got f32[8]{U:i} and axes={'i'}");
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[8@i]", "P('i',)",
                  "{ lambda ; c:f32[4]{V:i}. let\n"
                  "          d:f32[4]{V:i} = unreduced_psum[axes=('i',)] c\n"
                  "        in (d,) }",
                  "P('i',)"),
            "ValueError: unreduced_psum only accepts inputs that are unreduced. Got f32[4]{V:i}");
  CHECK_ERR(SMAP1("a:f32[8]", "b:f32[8]", "P()",
                  "{ lambda ; c:f32[8]. let\n"
                  "          d:f32[8]{V:i} = reduced_vary_cast_p[axes=('i',)] c\n"
                  "        in (d,) }",
                  "P('i',)"),
            "ValueError: reduced_vary_cast only accepts inputs that are reduced. Got f32[8]");
  CHECK_ERR(SMAP1("a:f32[8]", "b:f32[8]", "P()",
                  "{ lambda ; c:f32[8]. let\n"
                  "          d:f32[8]{U:i} = vary_unreduced_cast_p[axes=('i',)] c\n"
                  "        in (d,) }",
                  "P(None, unreduced={'i'}, unreduced_kind=sum)"),
            "ValueError: vary_unreduced_cast only accepts inputs that are varying. Got f32[8]");
}
END_TEST

START_TEST(test_shard_map_errors) {
  /* the reference's replication message, whole */
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[4]", "P('i',)", "{ lambda ; c:f32[4]{V:i}. let  in (c,) }", "P()"),
            "ValueError: shard_map applied to the function 'f' was given out_specs which require replication which "
            "can't be statically inferred given the mesh:\n\n"
            "The mesh given has shape (2,) with corresponding axis names ('i',).\n\n"
            "out_specs is P() which implies that the corresponding output value is replicated across mesh axis "
            "'i', but could not infer replication over any axes\n\n"
            "Check if these output values are meant to be replicated over those mesh axes. If not, consider "
            "revising the corresponding out_specs entries. If so, consider disabling the check by passing the "
            "check_vma=False argument to `jax.shard_map`.");
  /* with check_vma=False nothing is checked and nothing varies */
  CHECK_OK("{ lambda ; a:f32[8@i]. let\n"
           "    b:f32[4] = shard_map[\n"
           "      check_vma=False\n"
           "      in_specs=(P('i',),)\n"
           "      jaxpr={ lambda ; c:f32[4]. let  in (c,) }\n"
           "      mesh=" MESH_I "\n"
           "      newly_manual_axes=frozenset({'i'})\n"
           "      out_specs=(P(),)\n"
           "    ] a\n"
           "  in (b,) }");
  CHECK_ERR(SMAP1("a:f32[8]", "b:f32[8]", "P(None, unreduced={'i'}, unreduced_kind=sum)",
                  "{ lambda ; c:f32[8]{U:i}. let  in (c,) }", "P(None, unreduced={'i'}, unreduced_kind=sum)"),
            "ValueError: in_specs containing unreduced P(None, unreduced={'i'}, unreduced_kind=sum) passed to "
            "shard_map should be equal to the unreduced present on the in_aval f32[8]");
  CHECK_ERR(SMAP1("a:f32[8]{R:i}", "b:f32[8]", "P(None, reduced={'i'})",
                  "{ lambda ; c:f32[8]{R:i}. let  in (c,) }", "P(None, unreduced={'i'}, unreduced_kind=sum)"),
            "ValueError: out_specs passed to shard_map should be equal to the unreduced present on the out_aval. "
            "Got out_specs=P(None, unreduced={'i'}, unreduced_kind=sum) and out_aval=f32[8]{R:i}");
  CHECK_ERR(SMAP1("a:f32[]", "b:f32[]", "P('i',)", "{ lambda ; c:f32[]{V:i}. let  in (c,) }", "P()"),
            "ValueError: shard_map applied to the function 'f' was given an in_specs entry which is too long to be "
            "compatible with the corresponding input value from the function:\n\n"
            "in_specs is P('i',) which has length 1, but the passed args[0] has shape float32[], which has rank 0 "
            "(and 0 < 1)\n\n"
            "Entries in in_specs must be of length no greater than the number of axes in the corresponding input "
            "value.\n\n"
            "Either revise the spec to be shorter, or modify 'f' so that its inputs have sufficient rank.\n\n"
            "For scalar values (rank 0), consider using an in_specs entry of `P()`, where "
            "`P = jax.sharding.PartitionSpec`.");
  CHECK_ERR(SMAP1("a:f32[8@i]", "b:f32[8@i]", "P('i',)",
                  "{ lambda ; c:f32[4]{V:i}. let d:f32[]{V:i} = reduce_sum[axes=(0,) out_sharding=None] c in (d,) }",
                  "P('i',)"),
            "ValueError: shard_map applied to the function 'f' was given an out_specs entry which is too long to "
            "be compatible with the corresponding output value from the function:\n\n"
            "out_specs is P('i',) which has length 1, but f(*args) has shape float32[]{V:i}, which has rank 0 "
            "(and 0 < 1)\n\n"
            "Entries in out_specs must be of length no greater than the number of axes in the corresponding output "
            "value.\n\n"
            "Either revise the spec to be shorter, or modify 'f' so that its outputs have sufficient rank.\n\n"
            "For scalar values (rank 0), consider using an out_specs entry of `P()`, where "
            "`P = jax.sharding.PartitionSpec`. In particular, for rank 0 outputs which are not constant over the "
            "mesh, add at least one (singleton) axis to them so that they can be concatenated using out_specs.");
  CHECK_ERR(SMAP1("a:f32[3]", "b:f32[3]", "P('i',)", "{ lambda ; c:f32[1]{V:i}. let  in (c,) }", "P('i',)"),
            "ValueError: shard_map applied to the function 'f' was given argument arrays with axis sizes that are "
            "not evenly divisible by the corresponding mesh axis sizes:\n\n"
            "The mesh given has shape (2,) with corresponding axis names ('i',).\n\n"
            "the passed args[0] of shape float32[3] corresponds to in_specs of value P('i',), which maps array "
            "axis 0 (of size 3) to mesh axis 'i' (of size 2), but 2 does not evenly divide 3\n\n"
            "Array arguments' axis sizes must be evenly divisible by the mesh axis or axes indicated by the "
            "corresponding elements of the argument's in_specs entry. Consider checking that in_specs are correct, "
            "and if so consider changing the mesh axis sizes or else padding the input and adapting 'f' "
            "appropriately.");
}
END_TEST

/* ---- control flow: JAX's errors ---- */

START_TEST(test_control_errors) {
  CHECK_ERR("{ lambda ; a:f32[] b:i32[8]. let\n"
            "    c:f32[] d:i32[8] = scan[\n"
            "      jaxpr={ lambda ; e:f32[] f:i32[]. let g:i32[] = add f 1:i32[] in (g, g) }\n"
            "      length=8 linear=(False, False) num_carry=1 num_consts=0 reverse=False unroll=1\n"
            "    ] a b\n"
            "  in (c, d) }",
            "TypeError: scan body function carry input and carry output must have equal types, but they "
            "differ:\n\n"
            "The input carry has type float32[] but the corresponding output carry component has type int32[], so "
            "the dtypes do not match.\n\n"
            "Revise the function so that all output types match the corresponding input types.");
  CHECK_ERR("{ lambda ; a:f32[] b:f32[8]. let\n"
            "    c:f32[] d:f32[8] = scan[\n"
            "      jaxpr={ lambda ; e:f32[] f:f32[2]. let  in (e, e) }\n"
            "      length=8 linear=(False, False) num_carry=1 num_consts=0 reverse=False unroll=1\n"
            "    ] a b\n"
            "  in (c, d) }",
            "JaxprTypeError: scan jaxpr takes input sequence types\nfloat32[2],\n"
            "called with sequence whose items have type\nfloat32[]");
  CHECK_ERR("{ lambda ; a:f32[] b:f32[4]. let\n"
            "    c:f32[] d:f32[8] = scan[\n"
            "      jaxpr={ lambda ; e:f32[] f:f32[]. let  in (e, e) }\n"
            "      length=8 linear=(False, False) num_carry=1 num_consts=0 reverse=False unroll=1\n"
            "    ] a b\n"
            "  in (c, d) }",
            "ValueError: scan got `length` argument of 8 which disagrees with leading axis sizes [4].");
  /* two carries that both change: bullets, and the pcast hints */
  CHECK_ERR("{ lambda ; a:f32[8@i] b:f32[] c:f32[]. let\n"
            "    d:f32[] e:f32[] = shard_map[\n"
            "      check_vma=True\n"
            "      in_specs=(P('i',), P(), P())\n"
            "      jaxpr={ lambda ; f:f32[4]{V:i} g:f32[] h:f32[]. let\n"
            "          i:f32[]{V:i} j:f32[]{V:i} = while[\n"
            "            body_jaxpr={ lambda ; k:f32[4]{V:i} l:f32[] m:f32[]. let\n"
            "                n:f32[]{V:i} = reduce_sum[axes=(0,) out_sharding=None] k\n"
            "              in (n, n) }\n"
            "            body_nconsts=1\n"
            "            cond_jaxpr={ lambda ; o:f32[] p:f32[]. let q:bool[] = lt o p in (q,) }\n"
            "            cond_nconsts=0\n"
            "          ] f g h\n"
            "        in (i, j) }\n"
            "      mesh=" MESH_I "\n"
            "      newly_manual_axes=frozenset({'i'})\n"
            "      out_specs=(P(), P())\n"
            "    ] a b c\n"
            "  in (d, e) }",
            "TypeError: while_loop body function carry input and carry output must have equal types, but they "
            "differ:\n\n"
            "  * the input carry at path [0] has type float32[] but the corresponding output carry component has "
            "type float32[]{V:i}, so the manual axis types do not match;\n"
            "  * the input carry at path [1] has type float32[] but the corresponding output carry component has "
            "type float32[]{V:i}, so the manual axis types do not match.\n\n"
            "This might be fixed by:\n"
            "  * applying `jax.lax.pcast(..., ('i',), to='varying')`, to the initial carry value corresponding to "
            "the input carry at path [0];\n"
            "  * applying `jax.lax.pcast(..., ('i',), to='varying')`, to the initial carry value corresponding to "
            "the input carry at path [1].\n"
            "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more information.\n\n"
            "Revise the function so that all output types match the corresponding input types.");
  CHECK_ERR("{ lambda ; a:i32[]. let\n"
            "    b:i32[] = while[\n"
            "      body_jaxpr={ lambda ; c:i32[]. let  in (c,) }\n"
            "      body_nconsts=0\n"
            "      cond_jaxpr={ lambda ; d:i32[]. let  in (d,) }\n"
            "      cond_nconsts=0\n"
            "    ] a\n"
            "  in (b,) }",
            "TypeError: cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(int32[])].");
  CHECK_ERR("{ lambda ; a:i32[] b:f32[]. let\n"
            "    c:f32[] = cond[\n"
            "      branches=(\n"
            "        { lambda ; d:f32[]. let  in (d,) }\n"
            "        { lambda ; e:f32[]. let f:f32[2] = broadcast_in_dim[broadcast_dimensions=() shape=(2,) "
            "sharding=None] e in (f,) }\n"
            "      )\n"
            "    ] a b\n"
            "  in (c,) }",
            "JaxprTypeError: cond branches 0 and 1 have mismatching output types: float32[] vs float32[2]");
  CHECK_ERR("{ lambda ; a:i32[] b:f32[]. let\n"
            "    c:f32[] = cond[\n"
            "      branches=(\n"
            "        { lambda ; d:f32[]. let  in (d,) }\n"
            "        { lambda ; e:f32[] f:f32[]. let  in (e,) }\n"
            "      )\n"
            "    ] a b\n"
            "  in (c,) }",
            "JaxprTypeError: cond branch 0 takes 1 inputs, branch 1 takes 2");
  CHECK_ERR("{ lambda ; a:i32[2] b:f32[]. let\n"
            "    c:f32[] = cond[branches=({ lambda ; d:f32[]. let  in (d,) })] a b\n"
            "  in (c,) }",
            "TypeError: cond index must be a scalar, got an index of shape (2,)");
  CHECK_ERR("{ lambda ; a:i32[] b:i32[]. let\n"
            "    c:f32[] = cond[\n"
            "      branches=(\n"
            "        { lambda ; d:f32[]. let  in (d,) }\n"
            "      )\n"
            "    ] a b\n"
            "  in (c,) }",
            "JaxprTypeError: cond branches take input types float32[], called with operands of type int32[]");
}
END_TEST

/* ---- rules called directly, as tracing calls them (no written types) ---- */

START_TEST(test_direct_rule) {
  sr_lax_init();
  SrMesh m;
  memset(&m, 0, sizeof m);
  m.n = 1;
  m.names[0] = sr_intern_cstr("i");
  m.sizes[0] = 2;
  m.types[0] = SR_AXIS_MANUAL;
  m.abstract = 1;
  SrTypeCtx cx;
  memset(&cx, 0, sizeof cx);
  SrDiags d = SR_DIAGS_INIT;
  cx.mesh = sr_mesh_intern(&m);
  cx.check_vma = 1;
  cx.d = &d;
  int64_t shape[1] = {4};
  const SrType *x = sr_type_array(SR_F32, 1, shape);
  SrVal *axes = sr_parse_pyval("('i',)", 6);
  SrParam p = {sr_intern_cstr("axes"), axes};
  const SrPrim *pvary = sr_prim(SR_P_pvary), *psum = sr_prim(SR_P_psum_invariant);
  const SrType *in[1] = {x}, *out[1] = {NULL};
  SrRuleEqn e = {pvary, 1, 1, 1, in, NULL, &p, NULL};
  ck_assert_int_eq(pvary->type(&cx, &e, out), 0);
  ck_assert_str_eq(sr_type_short(out[0]), "f32[4]{V:i}");
  in[0] = out[0];
  e.prim = psum;
  ck_assert_int_eq(psum->type(&cx, &e, out), 0);
  ck_assert_str_eq(sr_type_short(out[0]), "f32[4]");
  ck_assert_int_eq(d.count, 0);
  sr_unref(axes);
}
END_TEST

int main(void) {
  sr_lax_init(); /* the rule slots (lax/lax.h) */
  Suite *s = suite_create("manual");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_reference_shard_map);
  tcase_add_test(tc, test_reference_control);
  tcase_add_test(tc, test_calls_and_barrier);
  tcase_add_test(tc, test_collective_results);
  tcase_add_test(tc, test_manual_context);
  tcase_add_test(tc, test_collective_errors);
  tcase_add_test(tc, test_shard_map_errors);
  tcase_add_test(tc, test_control_errors);
  tcase_add_test(tc, test_direct_rule);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

# jnp32_nn_gen.py: writes jnp32_nn.jxr (JAX's tests/nn_test.py,
# NNFunctionsTest: the values and assertions) and prints what it must
# print: numpy (1.24) computations for the values (attention by its
# definition: softmax(q k^T / sqrt(H) + bias, masked) v, in float32), the
# literal result of each assertion otherwise:
#   /usr/bin/python3 jnp32_nn_gen.py > want && shardrepl jnp32_nn.jxr > got
#   && golden_cmp want got
import math
import sys
import warnings
import numpy as np

import jnp32_gen

HELPER = """\
def A(shape, k=0, scale=0.37):
  n = int(np.prod(shape))
  return np.sin(np.arange(n) * scale + k).astype('float32').reshape(shape)
"""
np_env = {"np": np, "math": math}
exec(HELPER, np_env)

LINES = []   # (kind, text, expected): kind 'show' (jnp expr, numpy expr), 'stmt' (code, expected output or None), 'note'
def C(jx, nx, note=None):
  LINES.append(("show", jx, nx, note))
def S(code, expected=None, note=None):
  LINES.append(("stmt", code, expected, note))
def N(note):
  LINES.append(("note", note, None, None))

f32 = np.float32
N("NNFunctionsTest.testScaledMatmul / testScaledDotGeneral need mxfp8 configs on a GPU (or CPU scaled dot): not ported; testDotProductAttention's 'cudnn' half needs a GPU")
N("testSoftplusGrad / GradZero / GradNegInf / GradNan, the same for sparse_plus, squareplus, mish: check_grads passes (prints nothing)")
for f, x, o in [("nn.softplus", "1e-8", 4), ("nn.squareplus", "1e-8", 4), ("nn.mish", "1e-8", 4)]:
  S(f"check_grads({f}, ({x},), order={o}, modes=['fwd'])")
  S(f"check_grads({f}, ({x},), order={o}, modes=['rev'])")
for f, x in [("nn.softplus", "0."), ("nn.softplus", "-float('inf')"), ("nn.softplus", "float('nan')"),
             ("nn.sparse_plus", "-2."), ("nn.sparse_plus", "0."), ("nn.squareplus", "0."),
             ("nn.squareplus", "-float('inf')"), ("nn.squareplus", "float('nan')"), ("nn.mish", "0."),
             ("nn.mish", "-float('inf')"), ("nn.mish", "float('nan')")]:
  S(f"check_grads({f}, ({x},), order=1)")
N("testSoftplusGradInf: grad of softplus at inf is 1")
C("jax.grad(nn.softplus)(float('inf'))", "f32(1.)")
N("testSoftplusZero: softplus(0) == log(2) for Python and numpy scalar types of every float and int dtype")
S("print([bool(jnp.log(dt(2)) == nn.softplus(dt(0))) for dt in [int, float, jnp.float16, jnp.bfloat16, jnp.float32, jnp.int8, jnp.int16, jnp.int32]])", "[True, True, True, True, True, True, True, True]")
N("testSparseplusAndSparseSigmoid: sparse_sigmoid is sparse_plus's derivative")
S("print([bool(jax.grad(nn.sparse_plus)(v) == nn.sparse_sigmoid(v)) for v in (0., 2., -2.)])", "[True, True, True]")
N("testSquareplusZero / testMishZero")
S("print([bool(dt(1) == nn.squareplus(dt(0), dt(4))) for dt in [float, jnp.float16, jnp.bfloat16, jnp.float32]])", "[True, True, True, True]")
S("print([bool(dt(0) == nn.mish(dt(0))) for dt in [float, jnp.float16, jnp.bfloat16, jnp.float32]])", "[True, True, True, True]")
N("testReluGrad / testReluGradAtZero / testRelu6Grad: grads at -1, 1 (order 3), 0 and 6 are 0; the grad jaxpr has at least 2 equations")
for f in ["nn.relu", "nn.relu6"]:
  for x in ["1.", "-1."]:
    S(f"check_grads({f}, ({x},), order=3)")
S("print(len(jax.make_jaxpr(jax.grad(nn.relu))(0.).eqns) >= 2)", "True")
C("jax.grad(nn.relu)(0.)", "f32(0.)")
C("jax.grad(nn.relu6)(0.)", "f32(0.)")
C("jax.grad(nn.relu6)(6.)", "f32(0.)")
N("testSoftplusValue / testSparseplusValue / testSparsesigmoidValue / testSquareplusValue / testMishValue / testEluValue / testGluValue")
C("nn.softplus(89.)", "np.logaddexp(f32(89.), f32(0.))")
C("nn.sparse_plus(89.)", "f32(89.)")
C("jnp.array([nn.sparse_sigmoid(-2.), nn.sparse_sigmoid(2.), nn.sparse_sigmoid(0.)])", "np.array([0., 1., 0.5], f32)")
C("nn.squareplus(1e3)", "(f32(1e3) + np.sqrt(f32(1e3) ** 2 + f32(4))) / 2")
C("nn.mish(1e3)", "f32(1e3)")
C("nn.elu(1e4)", "f32(1e4)")
C("nn.glu(jnp.array([1.0, 0.0]), axis=0)", "np.array([0.5], f32)")
N("testEluGrad: check_grads at 1e4 with eps=1, orders up to 4")
S("check_grads(nn.elu, (1e4,), order=4, eps=1., modes=['fwd'])")
S("check_grads(nn.elu, (1e4,), order=4, eps=1., modes=['rev'])")
N("testGeluIntType: gelu of an int array is gelu of the float")
for ap in [False, True]:
  S(f"print(bool(nn.gelu(jnp.array(-1.0), approximate={ap}) == nn.gelu(jnp.array(-1), approximate={ap})))", "True")
N("testGelu: gelu against x * Phi(x) (exact), the tanh approximation within 1e-3")
gx = "np.linspace(-12, 5, 35, dtype=np.float32)"
C(f"nn.gelu(jnp.linspace(-12, 5, 35, dtype=jnp.float32), approximate=False)",
  f"np.array([0.5 * t * math.erfc(-t / math.sqrt(2)) for t in {gx}.astype(np.float64)], np.float32)")
S(f"print(bool(jnp.allclose(nn.gelu(jnp.linspace(-12, 5, 35), approximate=True), jnp.linspace(-12, 5, 35) * jax.scipy.stats.norm.cdf(jnp.linspace(-12, 5, 35)), atol=1e-3)))", "True")
N("testDtypeMatchesInput: each function keeps float32, bfloat16 and float16")
S("""for dt in (jnp.float32, jnp.bfloat16, jnp.float16):
  print([fn(jnp.zeros((), dtype=dt)).dtype == dt for fn in (partial(nn.gelu, approximate=False), partial(nn.gelu, approximate=True), nn.relu, nn.identity, nn.softplus, nn.sparse_plus, nn.sigmoid, nn.squareplus, nn.mish)])""",
  "\n".join(["[True, True, True, True, True, True, True, True, True]"] * 3))
N("testEluMemory / testHardTanhMemory: tracing over 10**12 elements allocates nothing")
S("print(jax.make_jaxpr(lambda: nn.elu(jnp.ones((10 ** 12,))))().out_avals)", "[ShapedArray(float32[1000000000000])]")
S("print(jax.make_jaxpr(lambda: nn.hard_tanh(jnp.ones((10 ** 12,))))().out_avals)", "[ShapedArray(float32[1000000000000])]")
N("testSoftmaxEmptyArray / testSoftmaxEmptyMask / testSoftmaxWhereMask / testSoftmaxWhereGrad (issue 19490)")
sx = "np.array([5.5, 1.3, -4.2, 0.9], np.float32)"
def np_softmax(x): return f"(np.exp({x} - np.max({x})) / np.exp({x} - np.max({x})).sum())"
C("nn.softmax(jnp.array([], dtype=float))", "np.array([], np.float32)")
C("nn.log_softmax(jnp.array([], dtype=float))", "np.array([], np.float32)")
C("nn.softmax(jnp.array([5.5, 1.3, -4.2, 0.9]), where=jnp.zeros(4, dtype=bool))", "np.zeros(4, np.float32)")
C("nn.log_softmax(jnp.array([5.5, 1.3, -4.2, 0.9]), where=jnp.zeros(4, dtype=bool))", "np.full(4, -np.inf, np.float32)")
m = "jnp.array([True, False, True, True])"
C(f"nn.softmax(jnp.array([5.5, 1.3, -4.2, 0.9]), where={m})", f"np.array([{np_softmax(sx + '[[0, 2, 3]]')}[0], 0., {np_softmax(sx + '[[0, 2, 3]]')}[1], {np_softmax(sx + '[[0, 2, 3]]')}[2]], np.float32)")
C(f"nn.log_softmax(jnp.array([5.5, 1.3, -4.2, 0.9]), where={m})[jnp.array([0, 2, 3])]", f"np.log({np_softmax(sx + '[[0, 2, 3]]')})")
C(f"nn.softmax(jnp.array([5.5, 1.3, -4.2, 0.9]), where={m}).sum()", "f32(1.)")
C(f"jnp.exp(nn.log_softmax(jnp.array([5.5, 1.3, -4.2, 0.9]), where={m})).sum()", "f32(1.)")
C("jax.grad(lambda x, mask: nn.softmax(x, where=mask)[0])(jnp.array([36., 10000.]), jnp.array([36., 10000.]) < 1000)", "np.zeros(2, np.float32)")
C("jax.grad(lambda x, mask: nn.log_softmax(x, where=mask)[0])(jnp.array([36., 10000.]), jnp.array([36., 10000.]) < 1000)", "np.zeros(2, np.float32)")
N("testSoftmaxGrad / testSoftmaxGradFlag: check_grads; saved_residuals of softmax: 3 (6 elements) by default (jax_softmax_custom_jvp=False: stop_gradient), 1 (4) with the custom_jvp rule; testSoftmaxGradResiduals is skipped without the flag")
S("check_grads(nn.softmax, (jnp.array([5.5, 1.3, -4.2, 0.9]),), order=2, atol=5e-3)")
S("""with jax.softmax_custom_jvp(False):
  res = ad_checkpoint.saved_residuals(nn.softmax, jnp.array([5.5, 1.3, -4.2, 0.9]))
print(len(res), sum(a.size for a, _ in res))
with jax.softmax_custom_jvp(True):
  res = ad_checkpoint.saved_residuals(nn.softmax, jnp.array([5.5, 1.3, -4.2, 0.9]))
print(len(res), sum(a.size for a, _ in res))
print(len(ad_checkpoint.saved_residuals(nn.softmax, jnp.array([5.5, 1.3, -4.2, 0.9]))))""", "3 6\n1 4\n3")
N("testStandardizeWhereMask / testStandardizeNegativeVariance (issue 30426) / testStandardizeStableAlgorithm (issue 37281)")
xf = "np.array([5.5, -4.2, 0.9], np.float32)"
C(f"jnp.take(nn.standardize(jnp.array([5.5, 1.3, -4.2, 0.9]), where={m}), jnp.array([0, 2, 3]))",
  f"({xf} - {xf}.mean()) / np.sqrt({xf}.var() + f32(1e-5))")
C("nn.standardize(jnp.array([5.5, -4.2, 0.9]))", f"({xf} - {xf}.mean()) / np.sqrt({xf}.var() + f32(1e-5))")
S("print(bool(jnp.any(jnp.isnan(jax.nn.standardize(jnp.array([-11., -11., -11.]) + 3e-6)))))", "False")
S("""x = jnp.array([1e6, 1e6 + 1, 1e6 + 2], dtype=jnp.float32)
result_eager = nn.standardize(x, algorithm="stable")
result_jit = jax.jit(lambda x: nn.standardize(x, algorithm="stable"))(x)
print(bool(jnp.allclose(result_eager, result_jit, atol=1e-5)), bool(jnp.any(jnp.isnan(result_eager))), bool(jnp.any(jnp.isnan(nn.standardize(x, algorithm="fast")))))""", "True False False")
C('nn.standardize(jnp.array([1e6, 1e6 + 1, 1e6 + 2], dtype=jnp.float32), algorithm="stable")', "np.array([-1., 0., 1.], np.float32) / np.sqrt(f32(2. / 3) + f32(1e-5))")
N("testOneHot / OutOfBound / NonArrayInput / CustomDtype / Axis")
C("nn.one_hot(jnp.array([0, 1, 2]), 3)", "np.eye(3, dtype=np.float32)")
C("nn.one_hot(jnp.array([1, 2, 0]), 3)", "np.eye(3, dtype=np.float32)[[1, 2, 0]]")
C("nn.one_hot(jnp.array([-1, 3]), 3)", "np.zeros((2, 3), np.float32)")
C("nn.one_hot([0, 1, 2], 3)", "np.eye(3, dtype=np.float32)")
C("nn.one_hot(jnp.array([0, 1, 2]), 3, dtype=jnp.bool_)", "np.eye(3, dtype=bool)")
C("nn.one_hot(jnp.array([1, 2, 0]), 3, axis=0)", "np.eye(3, dtype=np.float32)[[1, 2, 0]].T")
C("nn.one_hot(jnp.array([1, 2, 0]), 3, axis=-2)", "np.eye(3, dtype=np.float32)[[1, 2, 0]].T")
N("testOneHotConcretizationError (issue 3654): a traced num_classes is a ConcretizationTypeError naming the argument")
S("""try:
  jax.jit(nn.one_hot)(3, 5)
except jax.errors.ConcretizationTypeError as e:
  print(type(e).__name__, str(e).splitlines()[:2])""", "ConcretizationTypeError ['Abstract tracer value encountered where concrete value is expected: traced array with shape int32[]', 'The error arose in jax.nn.one_hot argument `num_classes`.']")
N("testOneHotNonInteger: a float input is deprecated (deprecations.warn 'jax-nn-one-hot-float-input')")
S("print(nn.one_hot(jnp.array([1.0]), 3))", "jnp32_nn.jxr:LINE:7: warning: DeprecationWarning: jax.nn.one_hot input should be integer-typed; got dtype=float32\n[[0. 1. 0.]]")
N("testTanhExists")
S("print(nn.tanh(jnp.float32(0.5)) == jnp.tanh(jnp.float32(0.5)))", "True")
N("testCustomJVPLeak / testCustomJVPLeak2 (issue 8171): a sigmoid (and an old custom_jvp one) in a scan under checking_leaks does not raise")
S("""@jax.jit
def fwd():
  a = jnp.array(1.)
  def f(hx, _):
    hx = jax.nn.sigmoid(hx + a)
    return hx, None
  hx = jnp.array(0.)
  jax.lax.scan(f, hx, None, length=2)
with jax.checking_leaks():
  fwd()
@jax.custom_jvp
def sigmoid(x):
  one = jnp.float32(1)
  return jax.lax.div(one, jax.lax.add(one, jax.lax.exp(jax.lax.neg(x))))
sigmoid.defjvps(lambda g, ans, x: g * ans * (jnp.float32(1) - ans))
@jax.jit
def fwd2():
  a = jnp.array(1., 'float32')
  def f(hx, _):
    hx = sigmoid(hx + a)
    return hx, None
  hx = jnp.array(0., 'float32')
  jax.lax.scan(f, hx, None, length=2)
with jax.checking_leaks():
  fwd2()
print("no leak")""", "no leak")
N("testLogMeanExp: logmeanexp equals log(mean(exp(x))) with axis, where and keepdims")
lx = "A((2, 3, 5)) * 0.9"
lw = "(A((2, 3, 5), k=1) > 0)"
for ax in [0, 1, 2]:
  for kd in [False, True]:
    C(f"nn.logmeanexp({lx}, axis={ax}, keepdims={kd})", f"np.log(np.mean(np.exp({lx}), axis={ax}, keepdims={kd}))")
    C(f"nn.logmeanexp({lx}, axis={ax}, where={lw}, keepdims={kd})", f"np.log(np.mean(np.exp({lx}), axis={ax}, where={lw}, keepdims={kd}))")
C(f"nn.logmeanexp(A((5,)), axis=0)", "np.log(np.mean(np.exp(A((5,)))))")
N("testLog1mExp / testLog1mExpGrad: log(1 - exp(-x)), -inf at 0, nan below, 0 at inf")
C("nn.log1mexp(jnp.array([0.1, 1.1, 0, 1, 1e2, 1e-5, -1, -1e-2, -1e2, jnp.inf]))",
  "np.array([np.log(-np.expm1(-0.1)), np.log(-np.expm1(-1.1)), -np.inf, -0.45867515, -3.783506e-44, np.log(-np.expm1(-1e-5)), np.nan, np.nan, np.nan, -0.], np.float32)")
S("check_grads(nn.log1mexp, (jnp.array([1e-2, 1e-1, 1e0, 1e1, 1e2]),), order=1, rtol=1e-3, atol=1e-3)")

N("testDotProductAttention ('xla' and None, grouped-query heads G = 1, 2, 4, under vmap too) / testDotProductAttentionMask / testDotProductAttentionBiasGradient / testDotProductAttention_localWindowSizeWithoutMask: the outputs and their vjps agree across implementations; here each also against attention's definition in numpy (small B, T, S, N, H)")
B, S_, T, N_, H = 2, 6, 5, 4, 3

def np_attn(q, k, v, bias=None, mask=None, causal=False, qs=None, kvs=None, win=None, lse=False):
  q, k, v = (np.asarray(t, np.float32) for t in (q, k, v))
  Bq, Tq, Nq, Hq = q.shape
  Kk = k.shape[2]
  G = Nq // Kk
  k = np.repeat(k, G, axis=2)
  v = np.repeat(v, G, axis=2)
  logits = np.einsum("BTNH,BSNH->BNTS", q, k) * np.float32(1 / math.sqrt(Hq))
  if bias is not None:
    logits = logits + bias
  comb = np.ones(logits.shape, bool)
  if mask is not None: comb &= mask
  Tn, Sn = logits.shape[2], logits.shape[3]
  if causal: comb &= np.tril(np.ones((Tn, Sn), bool))
  if win is not None:
    qp = np.arange(Tn)[:, None]; kp = np.arange(Sn)[None, :]
    comb &= (qp <= kp + win[0]) & (qp >= kp - win[1])
  if qs is not None: comb &= (np.arange(Tn)[None, :, None] < np.asarray(qs)[:, None, None])[:, None]
  if kvs is not None: comb &= (np.arange(Sn)[None, None, :] < np.asarray(kvs)[:, None, None])[:, None]
  logits = np.where(comb, logits, np.float32(-0.7 * np.finfo(np.float32).max))
  mx = logits.max(-1, keepdims=True)
  e = np.exp(logits - mx)
  probs = e / e.sum(-1, keepdims=True)
  out = np.einsum("BNTS,BSNH->BTNH", probs, v)
  if qs is not None: out = out * (np.arange(Tn)[None, :] < np.asarray(qs)[:, None])[:, :, None, None]
  if lse:
    return (np.log(e.sum(-1)) + mx[..., 0]).transpose(0, 2, 1)
  return out
np_env["np_attn"] = np_attn

Q = f"A(({B}, {T}, {N_}, {H}))"
for G in [1, 2, 4]:
  Kv = f"A(({B}, {S_}, {N_ // G}, {H}), k=1)"
  Vv = f"A(({B}, {S_}, {N_ // G}, {H}), k=2)"
  for impl in ["None", "'xla'"]:
    C(f"nn.dot_product_attention({Q}, {Kv}, {Vv}, implementation={impl})", f"np_attn({Q}, {Kv}, {Vv})",
      note=f"G = {G}" if impl == "None" else None)
  C(f"jax.vmap(partial(nn.dot_product_attention, implementation='xla'), in_axes=(0, 0, 0, None, None), out_axes=0)({Q}, {Kv}, {Vv}, None, None)",
    f"np.stack([np_attn({Q}[b:b+1], {Kv}[b:b+1], {Vv}[b:b+1])[0] for b in range({B})])")
  C(f"nn.dot_product_attention({Q}, {Kv}, {Vv}, return_residual=True)[1]", f"np_attn({Q}, {Kv}, {Vv}, lse=True)",
    note="return_residual: the logsumexp of the logits, [B, T, N]" if G == 1 else None)
Kf = f"A(({B}, {S_}, {N_}, {H}), k=1)"
Vf = f"A(({B}, {S_}, {N_}, {H}), k=2)"
bias = f"A((1, {N_}, {T}, {S_}), k=3)"
cmask = f"np.tril(np.ones(({T}, {S_}), bool))[None, None]"
qs, kvs = f"np.array([{T // 2}, {T - 1}], np.int32)", f"np.array([{S_ // 2}, {S_ - 1}], np.int32)"
for desc, kw, nkw in [
    ("bias", f"bias={bias}", f"bias={bias}"),
    ("causal", "is_causal=True", "causal=True"),
    ("padding", f"query_seq_lengths={qs}, key_value_seq_lengths={kvs}", f"qs={qs}, kvs={kvs}"),
    ("custom", f"mask={cmask}", f"mask={cmask}"),
    ("causal, padding", f"is_causal=True, query_seq_lengths={qs}, key_value_seq_lengths={kvs}", f"causal=True, qs={qs}, kvs={kvs}"),
    ("custom, padding", f"mask={cmask}, query_seq_lengths={qs}, key_value_seq_lengths={kvs}", f"mask={cmask}, qs={qs}, kvs={kvs}"),
    ("bias, causal", f"bias={bias}, is_causal=True", f"bias={bias}, causal=True"),
    ("causal, sliding_window (3, 2)", "is_causal=True, local_window_size=(3, 2)", "causal=True, win=(3, 2)"),
    ("sliding_window (3, 0)", "local_window_size=(3, 0)", "win=(3, 0)"),
    ("local_window_size 1 (symmetric)", "local_window_size=1", "win=(1, 1)"),
    ("query padding only", f"query_seq_lengths={qs}", f"qs={qs}")]:
  C(f"nn.dot_product_attention({Q}, {Kf}, {Vf}, {kw}, implementation='xla')", f"np_attn({Q}, {Kf}, {Vf}, {nkw})", note=f"mask mode: {desc}")
S(f"""o_ref, vjp_ref = jax.vjp(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True, implementation=None), {Q}, {Kf}, {Vf})
o_ans, vjp_ans = jax.vjp(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True, implementation='xla'), {Q}, {Kf}, {Vf})
print([bool(jnp.allclose(a, b, atol=.01, rtol=.01)) for a, b in zip(vjp_ref(o_ref), vjp_ans(o_ref))])""", "[True, True, True]", note="the vjps of the two implementations agree")
S(f"""x = A((2, 8, 4, 4))
bias = A((2, 4, 8, 8), k=1)
mask = jnp.ones((1, 1, 8), dtype=jnp.bool_)
attn = lambda x, bias, mask, impl: jax.nn.dot_product_attention(query=x, key=x, value=x, bias=bias, mask=mask, is_causal=False, implementation=impl)
y_ref = jax.jit(partial(attn, impl=None))(x, bias, mask)
y_ans = jax.jit(jax.vmap(partial(attn, impl='xla'), in_axes=(0, 0, None)))(x[:, None], bias[:, None], mask)[:, 0]
_, f_ref = jax.vjp(partial(attn, impl=None), x, bias, mask)
_, f_ans = jax.vjp(partial(attn, impl='xla'), x, bias, mask)
print(bool(jnp.allclose(y_ref, y_ans, atol=1e-5)), bool(jnp.allclose(f_ref(x)[1], f_ans(x)[1], atol=.1, rtol=.1)), f_ref(x)[1].shape)""",
  "True True (2, 4, 8, 8)", note="testDotProductAttentionBiasGradient: the bias's gradient, batched and under vmap")
S(f"""o1 = nn.dot_product_attention({Q}, {Kf}, {Vf}, mask=None, local_window_size=(4, 4))
o2 = nn.dot_product_attention({Q}, {Kf}, {Vf}, mask=None, local_window_size=(1, 1))
print(bool(jnp.allclose(o1, o2)))""", "False", note="local_window_size changes the output without a mask")
N("testDotProductAttentionFloat64MaskDebugInfs needs x64 (issue 37422); not ported")


def main():
  out = open("jnp32_nn.jxr", "w")
  out.write("""# JAX's tests/nn_test.py (NNFunctionsTest): each value the tests assert
# on, printed as dtype, shape and values, and each assertion's outcome.
# Written by jnp32_nn_gen.py, whose numpy computation (attention by its
# definition) or literal result of each case is what this file's .out was
# checked against (golden_cmp within float tolerance).
from functools import partial
import math
import numpy as np
import jax
import jax.numpy as jnp
from jax import nn
from jax import ad_checkpoint
from jax.test_util import check_grads
import jax.scipy.stats
def show(v):
  v = jnp.asarray(v)
  print(v.dtype, v.shape, v)
""")
  out.write(HELPER)
  np.seterr(all="ignore")
  warnings.simplefilter("ignore")
  env = dict(np_env); env["f32"] = f32
  for kind, a, b, note in LINES:
    if kind == "note":
      out.write(f"# {a}\n")
      continue
    if note:
      out.write(f"# {note}\n")
    if kind == "show":
      out.write(f"show({a})\n")
      try:
        jnp32_gen.show_np(eval(b, env), split_complex=False)
      except Exception as e:
        print("ORACLE FAIL", a, b, e, file=sys.stderr)
        print("?")
    else:
      out.flush()
      line = open("jnp32_nn.jxr").read().count("\n") + 1
      out.write(a + "\n")
      if b is not None:
        print(b.replace("LINE", str(line)))
  out.close()

main()

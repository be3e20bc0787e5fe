# nn_values_oracle.py: what nn_values.jxr must print, computed with numpy
# in float32 and Python's math module (erf, erfc, lgamma; erfinv by
# Newton's method on math.erf; digamma as the derivative of lgamma's
# series), the derivatives written out by hand (nn_oracle.sh compares).
import math
import numpy as np

f32 = np.float32
def A(v): return np.array(v, dtype=f32)
def vec(f, v): return A([f(float(t)) for t in v])

x = A([-2.0, -0.5, 0.0, 0.5, 2.0])
sig = lambda v: 1 / (1 + np.exp(-v))
softplus = lambda v: np.logaddexp(v, f32(0))
print("relu", np.maximum(x, 0))
print("relu6", np.minimum(np.maximum(A([-1.0, 3.0, 7.0]), 0), 6))
print("sigmoid", sig(x))
print("softplus", softplus(x))
print("silu", x * sig(x), x * sig(x))
print("log_sigmoid", -softplus(-x))
elu = lambda v, a: np.where(v > 0, v, f32(a) * np.expm1(np.minimum(v, 0)))
print("elu", elu(x, 1.0), elu(x, 2.0))
print("leaky_relu", np.where(x >= 0, x, f32(0.01) * x), np.where(x >= 0, x, f32(0.2) * x))
print("hard_tanh", np.clip(x, -1, 1))
print("celu", np.maximum(x, 0) + f32(0.5) * np.expm1(np.minimum(x, 0) / f32(0.5)))
print("selu", f32(1.0507009873554804934193349852946) * elu(x, 1.6732632423543772848170429916717))
c = f32(math.sqrt(2 / math.pi))
print("gelu", x * (f32(0.5) * (1 + np.tanh(c * (x + f32(0.044715) * x ** 3)))))
print("gelu_exact", vec(lambda t: 0.5 * t * math.erfc(-t / math.sqrt(2)), x))
print("tanh", np.tanh(x))
print("glu", A([[1.0, 2.0]]) * sig(A([[0.5, -1.0]])))
m = A([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])
def softmax(v, axis=-1, where=None):
    w = np.ones_like(v, dtype=bool) if where is None else where
    e = np.where(w, np.exp(v - np.max(np.where(w, v, -np.inf), axis, keepdims=True)), 0)
    return e / e.sum(axis, keepdims=True)
def lse(v, axis=None, keepdims=False, where=None):
    w = np.ones_like(v, dtype=bool) if where is None else where
    mx = np.max(np.where(w, v, -np.inf), axis, keepdims=True)
    r = np.log(np.where(w, np.exp(v - mx), 0).sum(axis, keepdims=True)) + mx
    return r if keepdims else (r.reshape(()) if axis is None else np.squeeze(r, axis))
print("softmax", softmax(m))
print("softmax0", softmax(m, 0))
print("softmax_where", softmax(m, where=m != 2))
print("log_softmax", m - lse(m, -1, True))
w = m != 2
print("log_softmax_where", np.where(w, m - lse(m, -1, True, w), -np.inf))
print("logsumexp", lse(m), lse(m, 1), lse(m, 0, True))
s = (np.exp(m) * A([1.0, -2.0, 0.5])).sum(1)
print("logsumexp_b", np.log(np.abs(s)), np.sign(s))
print("logsumexp_where", lse(m, 1, where=m > 1.5))
print("one_hot", A([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]))
print("one_hot_axis0", np.array([[0, 1], [1, 0], [0, 0]], dtype=np.int32))
def std(v, axis):
    mu = v.mean(axis, keepdims=True)
    return (v - mu) / np.sqrt(v.var(axis, keepdims=True) + f32(1e-5))
print("standardize", std(m, -1), std(m, 0))
u = A([0.1, 0.5, 0.9])
print("erf", vec(math.erf, u), vec(math.erfc, u))
def erfinv(y):
    t = 0.0
    for _ in range(60):
        t -= (math.erf(t) - y) / (2 / math.sqrt(math.pi) * math.exp(-t * t))
    return t
print("erfinv", vec(erfinv, u))
print("logit", np.log(u / (1 - u)), sig(u))
print("xlogy", u * np.log(f32(2)), f32(0), u * np.log1p(u))
print("entr", A([-np.inf, -0.0, -0.5 * math.log(0.5), -2 * math.log(2)]))
g = [0.5, 1.0, 2.5, 10.0, -1.5]
print("gammaln", vec(math.lgamma, g))
def digamma(t):
    r = 0.0
    if t < 0.5:
        r, t = -math.pi / math.tan(math.pi * t), 1 - t
    while t < 20:
        r, t = r - 1 / t, t + 1
    return r + math.log(t) - 0.5 / t - 1 / (12 * t * t) + 1 / (120 * t ** 4)
print("digamma", vec(digamma, g))
print("grad_relu", (x > 0).astype(f32))
print("grad_relu6", A([0.0, 1.0, 0.0]))
y = softmax(m)
gs = np.zeros_like(m); gs[0] = y[0, 1] * ((np.arange(3) == 1) - y[0])
print("grad_softmax", gs)
gl = np.zeros_like(m); gl[0] = (np.arange(3) == 1) - y[0]
print("grad_log_softmax", gl)
print("grad_softplus", sig(x))
print("grad_logsumexp", np.exp(m - lse(m)))
print("grad_logit", f32(1 / (0.25 * 0.75)), f32(math.log(2)), f32(1.5))
print("grad_entr", f32(-(math.log(0.5) + 1)), f32(digamma(2.5)))

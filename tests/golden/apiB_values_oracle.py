# apiB_values_oracle.py: what apiB_values.jxr must print, computed with
# numpy (a direct loop for XLA's convolution and window reductions).
import numpy as np


def dilate_pad(x, dil, pad, fill):
    """x (spatial dims from 2 on) dilated and padded (pads may be negative)."""
    k = x.ndim - len(dil)
    sh = list(x.shape[:k]) + [(s - 1) * d + 1 if s else 0 for s, d in zip(x.shape[k:], dil)]
    y = np.full(sh, fill, x.dtype)
    y[(slice(None),) * k + tuple(slice(None, None, d) for d in dil)] = x
    for i, (lo, hi) in enumerate(pad):
        ax = k + i
        if lo < 0:
            y = np.take(y, range(-lo, y.shape[ax]), axis=ax)
        if hi < 0:
            y = np.take(y, range(0, y.shape[ax] + hi), axis=ax)
        pw = [(0, 0)] * y.ndim
        pw[ax] = (max(lo, 0), max(hi, 0))
        y = np.pad(y, pw, constant_values=fill)
    return y


def conv(lhs, rhs, ws, pad, ld, rd, fgc=1, bgc=1):
    """canonical NCHW / OIHW / NCHW"""
    N = lhs.shape[0]
    O, I = rhs.shape[:2]
    nsp = lhs.ndim - 2
    xd = dilate_pad(lhs, ld, pad, 0)
    ks = [(k - 1) * d + 1 for k, d in zip(rhs.shape[2:], rd)]
    osp = [max(0, (xd.shape[2 + i] - ks[i]) // ws[i] + 1) for i in range(nsp)]
    nout = N // bgc
    out = np.zeros([nout, O] + osp)
    for of in range(O):
        gf, gb = of // (O // fgc), of // (O // bgc)
        for ob in range(nout):
            for idx in np.ndindex(*osp):
                acc = 0.0
                for kidx in np.ndindex(*rhs.shape[2:]):
                    pos = tuple(idx[d] * ws[d] + kidx[d] * rd[d] for d in range(nsp))
                    acc += np.dot(xd[(gb * nout + ob, slice(gf * I, gf * I + I)) + pos].astype(np.float64),
                                  rhs[(of, slice(None)) + kidx].astype(np.float64))
                out[(ob, of) + idx] = acc
    return out.astype(lhs.dtype)


def same_pads(ins, ks, ss):
    r = []
    for i, k, s in zip(ins, ks, ss):
        o = -(-i // s)
        p = max((o - 1) * s + k - i, 0)
        r.append((p // 2, p - p // 2))
    return r


def window(x, op, win, st, pad, bd=None, wd=None):
    bd = bd or (1,) * x.ndim
    wd = wd or (1,) * x.ndim
    fill = {'max': -np.inf, 'min': np.inf, 'sum': 0}[op]
    xd = dilate_pad(x, bd, pad, fill)
    ks = [(k - 1) * d + 1 for k, d in zip(win, wd)]
    osp = [max(0, (xd.shape[i] - ks[i]) // st[i] + 1) for i in range(x.ndim)]
    out = np.zeros(osp, x.dtype)
    f = {'max': np.max, 'min': np.min, 'sum': np.sum}[op]
    for idx in np.ndindex(*osp):
        sl = tuple(slice(idx[d] * st[d], idx[d] * st[d] + ks[d], wd[d]) for d in range(x.ndim))
        out[idx] = f(xd[sl].astype(np.float64))
    return out


x = (np.arange(2 * 4 * 5 * 6, dtype=np.float32).reshape(2, 4, 5, 6) % 7) / np.float32(10)
w = (np.arange(6 * 2 * 3 * 2, dtype=np.float32).reshape(6, 2, 3, 2) % 5) / np.float32(7) - np.float32(0.3)
one = (1, 1)
print(conv(x[:, :2], w, one, [(0, 0)] * 2, one, one)[1, 3])
print(conv(x[:, :2], w, (2, 1), same_pads((5, 6), (3, 2), (2, 1)), one, one)[0, 5])
print(conv(x, w, (2, 1), ((1, 2), (-1, 1)), (1, 2), (2, 1), fgc=2)[1, 4])
x8 = x.transpose(1, 0, 2, 3).reshape(8, 1, 5, 6)
print(conv(x8, w[:4, :1], (1, 2), ((1, 0), (0, 1)), one, one, bgc=2)[3, 2])
wh = w.transpose(2, 3, 1, 0)[:, :, :, :4]            # HWIO
w_oihw = wh.transpose(3, 2, 0, 1)
print(conv(x[:, :2], w_oihw, one, same_pads((5, 6), (5, 2), one), one, (2, 1)).transpose(0, 2, 3, 1)[0, :, :, 1])
# conv_transpose 'SAME', strides (2, 2): lhs dilation 2, pads from _conv_transpose_padding
print(conv(x[:, :2], w_oihw, one, ((2, 1), (1, 1)), (2, 2), one).transpose(0, 2, 3, 1)[1, :, :, 3])
print(conv(x[:, :2], w, one, ((2, 0), (1, 1)), (2, 1), (1, 2))[0, 0])
y = np.sin(np.arange(2 * 3 * 6 * 5, dtype=np.float32).reshape(2, 6, 5, 3))
print(window(y, 'max', (1, 2, 2, 1), (1, 2, 2, 1), [(0, 0)] * 4)[0, :, :, 0])
print(window(y, 'sum', (1, 3, 3, 1), (1, 2, 2, 1), [(0, 0)] + same_pads((6, 5), (3, 3), (2, 2)) + [(0, 0)])[1, :, :, 2])
pads = ((0, 0), (1, 2), (0, 1), (0, 0))
print(window(y, 'min', (1, 3, 2, 1), (1, 1, 2, 1), pads, bd=(1, 2, 1, 1))[1, :, :, 1])
print(window(y, 'sum', (1, 3, 2, 1), (1, 1, 2, 1), pads, bd=(1, 2, 1, 1), wd=(1, 1, 2, 1))[1, :, :, 2])
# the gradient of a max pool: each window's first maximum gets 1
g = np.zeros_like(y)
pd = [(0, 0)] + same_pads((6, 5), (3, 3), (2, 2)) + [(0, 0)]
yp = dilate_pad(y, (1,) * 4, pd, -np.inf)
for idx in np.ndindex(2, 3, 3, 3):
    win = yp[idx[0], 2 * idx[1]:2 * idx[1] + 3, 2 * idx[2]:2 * idx[2] + 3, idx[3]]
    a, b = np.unravel_index(np.argmax(win), win.shape)
    g[idx[0], 2 * idx[1] + a - pd[1][0], 2 * idx[2] + b - pd[2][0], idx[3]] += 1
print(g[0, :, :, 1])

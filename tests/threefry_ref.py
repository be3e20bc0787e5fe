# threefry_ref.py: a pure-Python threefry2x32 (Salmon et al.; JAX's
# threefry2x32.py, 20 rounds) and JAX's partitionable key(seed) and split
# (jax_threefry_partitionable=True), shared by the random oracles
# random15_values.py and random15_more.py.
M = 0xFFFFFFFF

def rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M

def threefry(key, x):
    rot = [[13, 15, 26, 6], [17, 29, 16, 24]]
    ks = [key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDA]
    x = [(x[0] + ks[0]) & M, (x[1] + ks[1]) & M]
    for i in range(5):
        for r in rot[i % 2]:
            x[0] = (x[0] + x[1]) & M
            x[1] = rotl(x[1], r) ^ x[0]
        x[0] = (x[0] + ks[(i + 1) % 3]) & M
        x[1] = (x[1] + ks[(i + 2) % 3] + i + 1) & M
    return x

def key(seed):
    return [0, seed & M]

def split(k, n=2):
    return [threefry(k, [i >> 32, i & M]) for i in range(n)]

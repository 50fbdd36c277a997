"""evoxc.random: key-based, stateless random numbers (JAX's model). A key is a value; the same key and operands give
the same numbers in any process, on any backend and thread count.

The algorithm is the key's type: splitmix64 (rank-0 int64, the default), threefry2x32 ((2,) uint32, the bits of
jax.random with the same key), philox4x32_10 ((4,) uint32). Leading axes of a key are a batch of keys, each its own
stream; vmap over keys gives the same rows. Samplers run inside a traced function (evoxc.defn, evoxc.evaluate,
evoxc.build); `key(int)` also works outside one and returns a concrete key.
"""

from __future__ import annotations

from . import _core

_r = _core._random

ALGORITHMS = ("splitmix64", "threefry2x32", "philox4x32_10")


def key(seed, algorithm: str = "splitmix64"):
    """A key from an int seed: a concrete Tensor for a Python int, a traced key for a traced rank-0 int."""
    if isinstance(seed, _core.SymbolicTensor):
        return _r.key_traced(seed, algorithm)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _core.DTypeError(f"evoxc.random.key: the seed must be an int, got {type(seed).__name__}")
    if not -(2 ** 63) <= seed < 2 ** 64:
        raise _core.ValidationError(f"evoxc.random.key: seed {seed} does not fit in 64 bits")
    if seed >= 2 ** 63:
        seed -= 2 ** 64
    return _r.key(seed, algorithm)


PRNGKey = key


def _shape(shape):
    if shape is None:
        return ()
    if isinstance(shape, int) or isinstance(shape, _core.Dim):
        return (shape,)
    return tuple(shape)


def split(key, num: int = 2):
    """`num` new keys: key batch + (num,) + key shape."""
    return _r.split(key, num)


def fold_in(key, data):
    """A new key from a key and an int (fold_in(k, d) is split(k, n)[d])."""
    return _r.fold_in(key, data)


def bits(key, shape=(), dtype=None):
    """The key's raw bits: key batch + shape, uint8/16/32/64 (default uint32)."""
    return _r.bits(key, _shape(shape), _core.uint32 if dtype is None else dtype)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Floats in [minval, maxval) (jax.random.uniform's formula; default float32)."""
    return _r.uniform(key, _shape(shape), _core.float32 if dtype is None else dtype, minval, maxval)


def normal(key, shape=(), dtype=None):
    """Standard normal draws: sqrt(2) * erf_inv(uniform(-1, 1)) (jax.random.normal's formula)."""
    return _r.normal(key, _shape(shape), _core.float32 if dtype is None else dtype)


def randint(key, shape, minval, maxval, dtype=None):
    """Ints in [minval, maxval) (maxval <= minval gives minval); default int32."""
    return _r.randint(key, _shape(shape), minval, maxval, _core.int32 if dtype is None else dtype)


def bernoulli(key, p=0.5, shape=None):
    """True with probability p (shape: p's broadcast against `shape`)."""
    return _r.bernoulli(key, p, None if shape is None else _shape(shape))


def gumbel(key, shape=(), dtype=None):
    """Standard Gumbel draws."""
    return _r.gumbel(key, _shape(shape), _core.float32 if dtype is None else dtype)


def exponential(key, shape=(), dtype=None):
    """Standard exponential draws."""
    return _r.exponential(key, _shape(shape), _core.float32 if dtype is None else dtype)


def categorical(key, logits, axis: int = -1, shape=None):
    """A class index (int64) per row of `logits` along `axis`, with probabilities softmax(logits)."""
    return _r.categorical(key, logits, axis, None if shape is None else _shape(shape))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal draws conditioned on [lower, upper]."""
    return _r.truncated_normal(key, lower, upper, None if shape is None else _shape(shape),
                               _core.float32 if dtype is None else dtype)


def permutation(key, x, axis: int = 0):
    """A permutation of arange(x) for an int x (int64), else x shuffled along `axis`."""
    if isinstance(x, int):
        return _r.permutation(key, x)
    return _r.permutation(key, x, axis)


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0):
    """Draws from arange(a) for an int a, else from a's slices along `axis`; uniformly or by the probabilities p,
    with or without replacement (numpy.random.Generator.choice / jax.random.choice)."""
    if isinstance(a, int):
        return _r.choice(key, a, _shape(shape), replace, p)
    return _r.choice(key, a, _shape(shape), replace, p, axis)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) draws (Marsaglia-Tsang rejection in a while_loop); `a` broadcast to `shape`."""
    return _r.gamma(key, a, None if shape is None else _shape(shape), _core.float32 if dtype is None else dtype)


def multinomial(key, n: int, p, shape=None):
    """Counts (int64) of n draws over the categories of p's last axis; each row sums to n."""
    return _r.multinomial(key, n, p, None if shape is None else _shape(shape))


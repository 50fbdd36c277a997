"""Pure-numpy reference implementations of evoxc.random's counter-based generators and stream definitions.

No evoxc import: tests/python/test_random.py checks evoxc against these, and these against published known-answer
vectors (KATS below; `python random_reference.py` runs the self-check) and against jax.random. All arithmetic is
done in uint64 with explicit masks, so nothing depends on numpy's overflow behaviour for scalars.
"""

from __future__ import annotations

import math

import numpy as np

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
GOLDEN64 = 0x9E3779B97F4A7C15  # splitmix64's Weyl increment
SPLIT_SALT64 = 0x6A09E667F3BCC909  # evoxc's splitmix64 split/fold_in salt

ALGORITHMS = ("splitmix64", "threefry2x32", "philox4x32_10")
BITS_DTYPES = (np.uint8, np.uint16, np.uint32, np.uint64)

# ---------------------------------------------------------------- block ciphers

_THREEFRY_ROT = ((13, 15, 26, 6), (17, 29, 16, 24))


def _u32(x):
    """x as a uint64 array holding uint32 values (the working type of the 32-bit ciphers)."""
    return np.asarray(x, dtype=np.uint64) & np.uint64(M32)


def _rotl32(x, r):
    """32-bit left rotation of uint64-held uint32 values."""
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & np.uint64(M32)


def threefry2x32(key0, key1, x0, x1):
    """Threefry-2x32 with 20 rounds (Salmon et al., SC'11) on broadcast uint32 arrays; returns (y0, y1) as uint32."""
    m = np.uint64(M32)
    k0, k1 = _u32(key0), _u32(key1)
    x0, x1 = np.broadcast_arrays(_u32(x0), _u32(x1), k0, k1)[:2]
    ks = (k0, k1, k0 ^ k1 ^ np.uint64(0x1BD11BDA))
    x0 = (x0 + ks[0]) & m
    x1 = (x1 + ks[1]) & m
    for g in range(5):  # five groups of four rounds, a key injection after each
        for r in _THREEFRY_ROT[g % 2]:
            x0 = (x0 + x1) & m
            x1 = _rotl32(x1, r) ^ x0
        inj = g + 1
        x0 = (x0 + ks[inj % 3]) & m
        x1 = (x1 + ks[(inj + 1) % 3] + np.uint64(inj)) & m
    return x0.astype(np.uint32), x1.astype(np.uint32)


PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Philox-4x32 with 10 rounds (Salmon et al., SC'11) on broadcast uint32 arrays; returns 4 uint32 words."""
    m = np.uint64(M32)
    c0, c1, c2, c3, k0, k1 = np.broadcast_arrays(*(_u32(v) for v in (c0, c1, c2, c3, k0, k1)))
    for rnd in range(10):
        if rnd:
            k0 = (k0 + np.uint64(PHILOX_W0)) & m
            k1 = (k1 + np.uint64(PHILOX_W1)) & m
        p0 = np.uint64(PHILOX_M0) * c0  # < 2**64: exact
        p1 = np.uint64(PHILOX_M1) * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & m
        hi1, lo1 = p1 >> np.uint64(32), p1 & m
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return tuple(w.astype(np.uint32) for w in (c0, c1, c2, c3))


def splitmix64_mix(z):
    """splitmix64's output function (Vigna) on uint64 values: the two xor-shift-multiply steps and a final xor-shift."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def splitmix64_stream(seed, n):
    """The first n outputs of Vigna's splitmix64 seeded with `seed` (state += golden gamma, then mix) as uint64."""
    s = int(seed) & M64
    states = np.array([(s + (i + 1) * GOLDEN64) & M64 for i in range(n)], dtype=np.uint64)
    return splitmix64_mix(states)


# ---------------------------------------------------------------- published known-answer vectors

KATS = {
    # Random123 kat_vectors, threefry2x32_20: (key, counter) -> output
    "threefry2x32_20": [
        ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ],
    # Random123 kat_vectors, philox4x32_10: (counter, key) -> output
    "philox4x32_10": [
        ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
         (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
         (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
         (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    ],
    # Vigna's splitmix64.c seeded with 1234567: the first five outputs
    "splitmix64": [
        (1234567, (6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431,
                   16408922859458223821)),
    ],
}


def self_check():
    """Asserts that the reference ciphers reproduce every vector in KATS; returns the number of vectors checked."""
    n = 0
    for (k0, k1), (x0, x1), want in KATS["threefry2x32_20"]:
        got = tuple(int(v) for v in threefry2x32(k0, k1, x0, x1))
        assert got == want, f"threefry2x32 key={k0:#x},{k1:#x} ctr={x0:#x},{x1:#x}: {[hex(v) for v in got]}"
        n += 1
    for ctr, key, want in KATS["philox4x32_10"]:
        got = tuple(int(v) for v in philox4x32_10(*ctr, *key))
        assert got == want, f"philox4x32_10 ctr={ctr} key={key}: {[hex(v) for v in got]}"
        n += 1
    for seed, want in KATS["splitmix64"]:
        got = tuple(int(v) for v in splitmix64_stream(seed, len(want)))
        assert got == want, f"splitmix64 seed={seed}: {got}"
        n += 1
    return n


# ---------------------------------------------------------------- evoxc's stream definitions (one, unbatched key)


def ref_key(seed, algorithm="splitmix64"):
    """evoxc.random.key(seed, algorithm) as a numpy array (int64 scalar, uint32 (2,) or uint32 (4,))."""
    s = int(seed) & M64
    if algorithm == "splitmix64":
        return np.array(s, dtype=np.uint64).view(np.int64).reshape(())
    if algorithm == "threefry2x32":
        return np.array([s >> 32, s & M32], dtype=np.uint32)
    if algorithm == "philox4x32_10":
        return np.array([s & M32, s >> 32, 0, 0], dtype=np.uint32)
    raise ValueError(f"unknown algorithm {algorithm!r}")


def algorithm_of(key):
    """The algorithm of one key: int64/uint64 rank 0 -> splitmix64; (u)int32 (2,) -> threefry2x32, (4,) -> philox."""
    key = np.asarray(key)
    if key.dtype in (np.int64, np.uint64) and key.ndim == 0:
        return "splitmix64"
    if key.dtype in (np.int32, np.uint32) and key.shape == (2,):
        return "threefry2x32"
    if key.dtype in (np.int32, np.uint32) and key.shape == (4,):
        return "philox4x32_10"
    raise TypeError(f"not a single key: {key.dtype} {key.shape}")


def _count(shape):
    return int(math.prod(shape))


def _hi_lo(i):
    i = np.asarray(i, dtype=np.uint64)
    return (i >> np.uint64(32)) & np.uint64(M32), i & np.uint64(M32)


def _splitmix64_out(s, idx):
    """mix(s + (idx + 1) * golden) for uint64 key s and an array of indices."""
    with np.errstate(over="ignore"):
        st = np.uint64(int(s) & M64) + (np.asarray(idx, dtype=np.uint64) + np.uint64(1)) * np.uint64(GOLDEN64)
    return splitmix64_mix(st)


def _raw_bits(key, n, width):
    """n stream elements of `width` bits (8/16/32/64) for one key, as a flat uint64 array."""
    alg = algorithm_of(key)
    i = np.arange(n, dtype=np.uint64)
    if alg == "threefry2x32":
        k0, k1 = (int(v) & M32 for v in np.asarray(key).astype(np.uint32))
        hi, lo = _hi_lo(i)
        b1, b2 = (b.astype(np.uint64) for b in threefry2x32(k0, k1, hi, lo))
        if width == 64:
            return (b1 << np.uint64(32)) | b2
        return (b1 ^ b2) & np.uint64((1 << width) - 1)
    if alg == "philox4x32_10":
        k0, k1, c2, c3 = (int(v) & M32 for v in np.asarray(key).astype(np.uint32))
        if width == 64:
            block, h = i >> np.uint64(1), (i & np.uint64(1)).astype(np.int64)
        else:
            block, w = i >> np.uint64(2), (i & np.uint64(3)).astype(np.int64)
        bhi, blo = _hi_lo(block)
        words = np.stack([x.astype(np.uint64) for x in philox4x32_10(blo, bhi, c2, c3, k0, k1)], axis=0)
        cols = np.arange(n)
        if width == 64:
            return (words[2 * h, cols] << np.uint64(32)) | words[2 * h + 1, cols]
        return words[w, cols] & np.uint64((1 << width) - 1)
    s = int(np.asarray(key).astype(np.int64)) & M64  # splitmix64
    if width == 64:
        return _splitmix64_out(s, i)
    out = _splitmix64_out(s, i >> np.uint64(1))
    word = np.where((i & np.uint64(1)) == 0, out & np.uint64(M32), out >> np.uint64(32))
    return word & np.uint64((1 << width) - 1)


def ref_bits(key, shape=(), dtype=np.uint32):
    """evoxc.random.bits(key, shape, dtype) for one key: element i (row-major) of the stream, dtype uint8..uint64."""
    dtype = np.dtype(dtype)
    if dtype not in [np.dtype(d) for d in BITS_DTYPES]:
        raise TypeError(f"bits: dtype {dtype} is not an unsigned integer type")
    shape = tuple(int(d) for d in shape)
    return _raw_bits(key, _count(shape), 8 * dtype.itemsize).astype(dtype).reshape(shape)


def _splitmix64_split_t(s):
    return int(splitmix64_mix(np.uint64(int(s) & M64))) ^ SPLIT_SALT64


def ref_split(key, num=2):
    """evoxc.random.split(key, num) for one key: shape (num,) + key shape."""
    alg = algorithm_of(key)
    j = np.arange(num, dtype=np.uint64)
    if alg == "threefry2x32":
        k0, k1 = (int(v) & M32 for v in np.asarray(key).astype(np.uint32))
        hi, lo = _hi_lo(j)
        return np.stack(threefry2x32(k0, k1, hi, lo), axis=-1).astype(np.asarray(key).dtype)
    if alg == "philox4x32_10":
        k0, k1, c2, c3 = (int(v) & M32 for v in np.asarray(key).astype(np.uint32))
        hi, lo = _hi_lo(j)
        return np.stack(philox4x32_10(lo, hi, c2, c3, k0, k1), axis=-1).astype(np.asarray(key).dtype)
    t = _splitmix64_split_t(np.asarray(key).astype(np.int64))
    return _splitmix64_out(t, j).view(np.int64).astype(np.asarray(key).dtype)


def ref_fold_in(key, data):
    """evoxc.random.fold_in(key, data) for one key and an integer datum: one key of the same type."""
    alg = algorithm_of(key)
    kd = np.asarray(key).dtype
    if alg == "threefry2x32":
        k0, k1 = (int(v) & M32 for v in np.asarray(key).astype(np.uint32))
        return np.array([int(v) for v in threefry2x32(k0, k1, 0, int(data) & M32)], dtype=np.uint64).astype(kd)
    if alg == "philox4x32_10":
        k0, k1, c2, c3 = (int(v) & M32 for v in np.asarray(key).astype(np.uint32))
        return np.array([int(v) for v in philox4x32_10(int(data) & M32, 0, c2, c3, k0, k1)], dtype=np.uint64).astype(kd)
    t = _splitmix64_split_t(np.asarray(key).astype(np.int64))
    d = int(data) & M64  # uint64(int64(d))
    return np.array(int(splitmix64_mix(np.uint64((t + (d + 1) * GOLDEN64) & M64))), dtype=np.uint64).view(np.int64) \
        .astype(kd).reshape(())


_FLOAT_LAYOUT = {  # dtype name -> (bits drawn, unsigned type holding the float, right shift, bit pattern of 1.0)
    "float16": (16, np.uint16, 6, 0x3C00),
    "float32": (32, np.uint32, 9, 0x3F800000),
    "float64": (64, np.uint64, 12, 0x3FF0000000000000),
    "bfloat16": (8, np.uint16, 1, 0x3F80),
}


def _float_dtype(dtype):
    if dtype == "bfloat16" or getattr(dtype, "name", None) == "bfloat16" or str(dtype) == "bfloat16":
        import ml_dtypes  # noqa: PLC0415  (only bfloat16 needs it)

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def ref_unit(key, shape=(), dtype=np.float32):
    """The [0, 1) floats uniform scales: the top bits of bits(key, shape) as mantissa under the exponent of 1.0, - 1."""
    dt = _float_dtype(dtype)
    nbits, utype, shift, one = _FLOAT_LAYOUT[dt.name]
    raw = ref_bits(key, shape, {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[nbits]).astype(utype)
    fb = (raw >> utype(shift)) | utype(one)
    return fb.view(dt) - dt.type(1.0)


def ref_uniform(key, shape=(), dtype=np.float32, minval=0.0, maxval=1.0):
    """evoxc.random.uniform for one key: max(minval, unit * (maxval - minval) + minval), computed in `dtype`."""
    dt = _float_dtype(dtype)
    f = ref_unit(key, shape, dt)
    lo, hi = dt.type(minval), dt.type(maxval)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.maximum(lo, (f * dt.type(hi - lo) + lo).astype(dt)).astype(dt)


def ref_normal(key, shape=(), dtype=np.float32):
    """evoxc.random.normal for one key (JAX's method): sqrt(2) * erfinv(uniform(nextafter(-1, 0), 1)); needs scipy."""
    from scipy.special import erfinv  # noqa: PLC0415

    dt = np.dtype(dtype)
    lo = np.nextafter(dt.type(-1.0), dt.type(0.0))
    u = ref_uniform(key, shape, dt, lo, 1.0)
    return (np.sqrt(2.0) * erfinv(u.astype(np.float64))).astype(dt)


if __name__ == "__main__":
    print(f"random_reference: {self_check()} known-answer vectors reproduced")

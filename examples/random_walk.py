"""Monte-Carlo with evoxc.random: split keys give independent streams, vmap runs one per key, and the same key gives
the same estimate in any process and on any backend.

1. pi from points in the unit square, 16 batches of 2^16 points, one split key per batch (vmap over the keys).
2. Random walks of +-1 steps: the mean squared distance after T steps is T, the chance to end at or beyond +10
   after 100 steps is about 0.18 (a binomial tail).
"""

import numpy as np

import evoxc


def pi_batch(key):
    xy = evoxc.random.uniform(key, (1 << 16, 2))
    inside = evoxc.sum(xy * xy, axes=1) < 1.0
    return 4.0 * evoxc.mean(inside.astype(evoxc.float32))


@evoxc.defn
def walks(key):
    steps = evoxc.random.bernoulli(key, 0.5, (4096, 100)).astype(evoxc.float32) * 2.0 - 1.0
    end = evoxc.sum(steps, axes=1)
    return evoxc.mean(end * end), evoxc.mean((end >= 10.0).astype(evoxc.float32))


def main():
    key = evoxc.random.key(2026)
    keys = evoxc.evaluate(lambda k: evoxc.random.split(k, 16), key)
    per_batch = evoxc.evaluate(evoxc.vmap(pi_batch), keys).numpy()
    print(f"pi ~ {per_batch.mean():.4f} +- {per_batch.std() / 4:.4f} from 16 split keys (true {np.pi:.4f})")
    assert abs(per_batch.mean() - np.pi) < 0.02

    again = evoxc.evaluate(evoxc.vmap(pi_batch), keys, backend="mlir").numpy() if "mlir" in evoxc.backends() else None
    if again is not None:
        print(f"mlir backend, same keys: identical estimates = {np.array_equal(per_batch, again)}")

    msd, tail = (t.numpy() for t in evoxc.evaluate(walks, evoxc.random.key(7, "threefry2x32")))
    print(f"random walks, 100 steps: mean squared distance {msd:.1f} (theory 100), P(end >= 10) {tail:.3f} "
          f"(theory 0.184)")
    assert abs(msd - 100.0) < 8.0 and abs(tail - 0.184) < 0.03


if __name__ == "__main__":
    main()

"""A custom op with evoxc.block: a name and a portable body (an ordinary traced function), plus an implementation the
interpreter runs instead of the body where one is registered (here numpy's, for a row-wise logsumexp).

The graph records the block's name and its body, so the same graph runs in a process that registered nothing, on the
compiled backends (which inline the body) and under grad (which differentiates the body)."""

import numpy as np

import evoxc


@evoxc.block("example.logsumexp_rows")
def logsumexp_rows(x):
    m = evoxc.max(x, axes=1, keepdims=True)
    return evoxc.log(evoxc.sum(evoxc.exp(x - m), axes=1)) + evoxc.squeeze(m, axes=1)


@logsumexp_rows.impl
def _logsumexp_rows_numpy(x):
    m = x.max(axis=1, keepdims=True)
    return np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]


def loss(x):
    return evoxc.mean(logsumexp_rows(x))


def main():
    x = np.random.default_rng(0).normal(size=(4, 5))
    want = np.mean(np.log(np.exp(x).sum(axis=1)))
    spec = evoxc.TensorSpec((4, 5), evoxc.float64)
    with_impl = evoxc.run(evoxc.build(loss, spec), x).numpy()
    print(f"interp with the numpy implementation: {with_impl:.12f} (numpy {want:.12f})")
    assert abs(with_impl - want) < 1e-12
    logsumexp_rows.unregister()
    body = evoxc.run(evoxc.build(loss, spec), x).numpy()
    print(f"interp with the portable body:        {body:.12f}")
    if "mlir" in evoxc.backends():
        print(f"mlir (the body inlined):              {evoxc.evaluate(loss, x, backend='mlir').numpy():.12f}")
    g = evoxc.evaluate(evoxc.grad(loss), x).numpy()
    softmax = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True) / 4
    print(f"grad through the body equals softmax / 4: {np.allclose(g, softmax, rtol=1e-12)}")
    assert abs(body - want) < 1e-12 and np.allclose(g, softmax, rtol=1e-12)


if __name__ == "__main__":
    main()

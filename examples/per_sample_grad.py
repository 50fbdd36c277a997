"""Transforms compose: a batched per-sample gradient is a vmap of a grad, built from specs into one Graph."""

import numpy as np

import evoxc
from evoxc import TensorSpec


@evoxc.defn
def loss(x, y, w):
    d = evoxc.subtract(evoxc.tanh(evoxc.dot(x, w)), y)
    return evoxc.mean(evoxc.multiply(d, d))  # one scalar per sample


per_sample_grad = evoxc.vmap(evoxc.grad(loss, argnums=(2,)), in_axes=(0, 0, None), out_axes=(0,))
specs = (TensorSpec((8, 4, 8), evoxc.float32), TensorSpec((8, 4, 4), evoxc.float32),
         TensorSpec((8, 4), evoxc.float32))  # 8 samples of [4, 8]; the weights are shared
graph = per_sample_grad(*specs)  # Graph: nothing has run yet
exe = evoxc.load(evoxc.compile(evoxc.lower(graph)), device="cpu")
dw, = evoxc.run(exe, evoxc.ones((8, 4, 8)), evoxc.zeros((8, 4, 4)), evoxc.ones((8, 4)))
print(dw.shape, dw.dtype, dw.device)  # (8, 8, 4) float32 Device(kind='cpu', index=0)

# The same gradient by hand: d/dw mean((tanh(x w) - y)^2) = x^T (2 (t - y) (1 - t^2)) / numel.
x, y, w = np.ones((4, 8), np.float32), np.zeros((4, 4), np.float32), np.ones((8, 4), np.float32)
t = np.tanh(x @ w)
expected = x.T @ (2 * (t - y) * (1 - t * t)) / t.size
print("matches the hand-derived gradient:", np.allclose(dw.numpy()[0], expected, rtol=1e-5, atol=1e-6))

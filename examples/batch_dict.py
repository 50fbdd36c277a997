"""Symbolic shapes and pytree I/O: one executable for any batch size, dict inputs and outputs."""

import evoxc
from evoxc import TensorSpec

B = evoxc.dim("B")


@evoxc.defn
def model(params, batch):
    h = evoxc.tanh(evoxc.dot(batch["x"], params["w1"]) + params["b1"])
    return {"logits": evoxc.dot(h, params["w2"]), "hidden": h}


spec = ({"w1": TensorSpec((4, 8), evoxc.float32), "b1": TensorSpec((8,), evoxc.float32),
         "w2": TensorSpec((8, 3), evoxc.float32)},
        {"x": TensorSpec((B, 4), evoxc.float32)})  # symbolic batch
exe = evoxc.build(model, *spec, device="cpu")  # one executable, any batch size
params = {"w1": evoxc.ones((4, 8)), "b1": evoxc.zeros((8,)), "w2": evoxc.ones((8, 3))}
for n in (5, 2):
    out = evoxc.run(exe, params, {"x": evoxc.ones((n, 4))})
    print({k: v.shape for k, v in sorted(out.items())})  # {'hidden': (5, 8), 'logits': (5, 3)}

"""The quickstart: trace -> lower -> compile -> load -> run, every stage a public object; then the shorthands."""

import evoxc
from evoxc import TensorSpec


@evoxc.defn
def f(x, w):
    return evoxc.sum(evoxc.tanh(evoxc.dot(x, w)), axes=1)


spec_x, spec_w = TensorSpec((4, 8), evoxc.float32), TensorSpec((8, 4), evoxc.float32)
graph = evoxc.trace(f, spec_x, spec_w)  # Graph          (EvoXIR)
lowered = evoxc.lower(graph)  # LoweredProgram
artifact = evoxc.compile(lowered)  # CompiledArtifact
exe = evoxc.load(artifact, device="cpu")  # Executable
y = evoxc.run(exe, evoxc.ones((4, 8)), evoxc.ones((8, 4)))  # Tensor
print(y.numpy())  # [3.999999 3.999999 3.999999 3.999999]
print(graph)  # <Graph 2 tensor inputs, 0 static values>
graph.print()  # the EvoXIR module, one op per line, with this file's line numbers

# The same thing in one call each: documented shorthand, no extra semantics.
exe = evoxc.build(f, spec_x, spec_w, device="cpu")  # trace -> lower -> compile -> load
y = evoxc.evaluate(f, evoxc.ones((4, 8)), evoxc.ones((8, 4)))  # derive specs -> build -> run
print(y.numpy())

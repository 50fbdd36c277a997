"""In-graph control flow: Newton's square root as an evoxc.while_loop, traced into the persisted program."""

import evoxc
from evoxc import TensorSpec


@evoxc.defn
def sqrt_newton(x):
    def cond_fn(s):
        y, prev = s
        return evoxc.greater(evoxc.abs(evoxc.subtract(y, prev)), 1e-6)

    def body_fn(s):
        y, prev = s
        return 0.5 * (y + x / y), y

    y, _prev = evoxc.while_loop(cond_fn, body_fn, (x, evoxc.zeros_like(x)))
    return y


exe = evoxc.build(sqrt_newton, TensorSpec((), evoxc.float32), device="cpu")
print(evoxc.run(exe, evoxc.tensor(2.0)).numpy())  # 1.4142135

# Branching on a symbolic value in Python is a TraceError that names the in-graph alternative.
@evoxc.defn
def bad(x):
    return x if x > 0 else -x


try:
    evoxc.trace(bad, TensorSpec((), evoxc.float32))
except evoxc.TraceError as e:
    print("TraceError:", str(e).splitlines()[0])

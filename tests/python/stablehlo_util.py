"""The real consumer of exported StableHLO in tests: jaxlib's MLIR context (parse + verify with the StableHLO
dialect) and XLA's CPU compiler (compile + run), and the comparison with the interpreter."""

import re

import numpy as np
import pytest

# jax is a test dependency (`make test` installs it into .venv with the bench extras); without it these checks cannot
# run, and the skip says so (pytest -rs, as `make test` runs it, prints the reason). The private modules are jaxlib's
# MLIR context and XLA client: a jax that moves them fails the import loudly rather than skipping.
jax = pytest.importorskip("jax", reason="the StableHLO checks need jax (its MLIR parser and XLA's compiler): "
                                         "`make bench-venv` installs it into .venv")
from jax._src import xla_bridge  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax._src.lib import xla_client  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402

jax.config.update("jax_enable_x64", True)

import conformance  # noqa: E402
import evoxc  # noqa: E402,F401
from compare_util import TOLERANCE, assert_same, random_input  # noqa: E402,F401  (re-exported to the tests)
from conformance import flat_outputs  # noqa: E402,F401  (re-exported to the tests)

_BACKEND = xla_bridge.get_backend("cpu")


def verify_text(text):
    """Parses and verifies StableHLO text with jaxlib's dialects; returns the error text or None."""
    with jax_mlir.make_ir_context():
        try:
            module = ir.Module.parse(text)
        except Exception as e:  # noqa: BLE001  (MLIR raises its own error types)
            return f"parse: {e}"
        if not module.operation.verify():
            return "verify failed"
    return None


def xla_run(text, inputs, strict=False):
    """Compiles the text with XLA's CPU compiler and runs it on numpy inputs; returns numpy outputs. strict: without
    XLA's default xla_allow_excess_precision, under which XLA drops the rounding of a bfloat16 value that is
    converted on to float32 (convert(convert(x, bf16), f32) becomes x)."""
    options = xla_client.CompileOptions()
    if strict:
        options.env_option_overrides = [("xla_allow_excess_precision", False)]
    exe = _BACKEND.compile_and_load(text, xla_client.DeviceList(tuple(_BACKEND.local_devices()[:1])), options)
    bufs = [jax.device_put(np.asarray(x)) for x in inputs]
    outs = exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
    return [np.asarray(o[0]) for o in outs]


def static_main(text, arrays):
    """The exported text with main's arguments given the arrays' static types, each converted to the symbolic type
    the body uses (stablehlo.convert between compatible shapes), ready for jax's shape refinement."""
    m = re.search(r"func\.func public @main\((.*?)\) -> ", text)
    sig, casts = [], []
    for (idx, ty), a in zip(re.findall(r"%arg(\d+): (tensor<[^>]*>)", m.group(1)), arrays):
        elt = ty[len("tensor<"):-1].split("x")[-1]
        st = "tensor<" + "".join(f"{d}x" for d in a.shape) + elt + ">"
        sig.append(f"%sarg{idx}: {st}")
        casts.append(f'    %arg{idx} = "stablehlo.convert"(%sarg{idx}) : ({st}) -> {ty}\n')
    text = text[:m.start(1)] + ", ".join(sig) + text[m.end(1):]
    body = text.index("{\n", text.index("func.func")) + 2
    return text[:body] + "".join(casts) + text[body:]


def runnable(text, arrays):
    """XLA compiles static shapes only: a module with symbolic (`?`) extents gets main's arguments the arrays'
    static types and goes through jax's own shape refinement (the path of jax.export's shape polymorphism)."""
    if "?" not in text:
        return text
    with jax_mlir.make_ir_context():
        return str(jax_mlir.refine_polymorphic_shapes(ir.Module.parse(static_main(text, arrays))))


def run_both(graph, inputs, strict=False):
    """(exported text, XLA's outputs, the interpreter's outputs) as numpy arrays. `inputs`: one argument per graph
    argument (numpy arrays, tensors, or pytrees of tensors). The text must verify with jaxlib as exported (symbolic
    extents included); symbolic modules are refined to the inputs' shapes before XLA compiles them."""
    text, got = conformance.run_on("stablehlo", graph, inputs, strict=strict)
    return text, got, conformance.interpreter(graph, inputs)


def check_graph(graph, inputs, what):
    """conformance.check_graph on the stablehlo export; returns the text."""
    return conformance.check_graph("stablehlo", graph, inputs, what)

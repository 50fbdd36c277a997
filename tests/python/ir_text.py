"""EvoXIR graphs written as text for the backend tests (mlir, StableHLO): dtype names as MLIR element types, tensor
types, and a graph of listed ops parsed by evoxc.Graph.parse."""

import evoxc

MLIR = {"bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "ui8",
        "uint16": "ui16", "uint32": "ui32", "uint64": "ui64", "float16": "f16", "bfloat16": "bf16",
        "float32": "f32", "float64": "f64"}
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]


def ttype(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + MLIR[dtype] + ">"


def ir_graph(inputs, ops, outputs=None):
    """An EvoXIR graph: `inputs` are (shape, dtype) pairs; each op is (name, operand indices (ints: inputs,
    "%k": op k's result), (shape, dtype) of its result, attribute text or ""); the results of the ops listed in
    `outputs` (all by default) are the graph's outputs."""
    outputs = list(range(len(ops))) if outputs is None else outputs
    args = ", ".join(f"%arg{i}: {ttype(*t)}" for i, t in enumerate(inputs))
    outs = [ttype(*ops[k][2]) for k in outputs]
    lines = []
    for k, (name, operands, result, attrs) in enumerate(ops):
        names = ", ".join(o if isinstance(o, str) else f"%arg{o}" for o in operands)
        a = f" attributes {{{attrs}}}" if attrs else ""
        lines.append(f"    %{k} = evoxc.{name}({names}){a} : {ttype(*result)}")
    stars = lambda n: "(" + ", ".join("*" for _ in range(n)) + ("," if n == 1 else "") + ")"  # noqa: E731
    text = (f'module @"main" version 1 attributes {{inputs = "{stars(len(inputs))}", '
            f'outputs = "{stars(len(outputs))}"}} {{\n'
            f"  func @main({args}) -> ({', '.join(outs)}) {{\n" + "\n".join(lines) + "\n"
            f"    evoxc.return({', '.join(f'%{k}' for k in outputs)})\n  }}\n}}\n")
    return evoxc.Graph.parse(text)

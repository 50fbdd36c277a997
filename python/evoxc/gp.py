"""Programs as data for genetic programming: a population of expression programs held as arrays (postfix op codes,
operand slots, per-program constants) and evaluated by one executable that never changes between generations.

    import evoxc.gp
    evaluate = evoxc.gp.evaluator(pset, X, y, loss="mse")   # pset: a DEAP PrimitiveSet; X: (cases, vars) like sklearn
    fitnesses = evaluate(population)                          # [(mse,), ...], one tuple per individual

The population is packed in C++ (no trace, no compile per generation) and run by the interpreter's postfix_eval
kernel over blocks of cases on every core, with the interpreter's own elementwise kernels, so a program's values are
bit for bit those of the same program traced as a graph (Population.to_graphs gives those graphs)."""

from __future__ import annotations

import numpy as _np

from . import _core
from ._core import Evaluator, Population, PrimitiveSet  # noqa: F401

# DEAP primitive names (as DEAP's examples and numpy/operator/math name their functions) -> the standard set's
# primitives. `log` stays the plain log: a protected log is `plog` (where(|x| > 1e-6, log|x|, 0)).
DEAP_NAMES = {
    "add": "add", "sub": "sub", "subtract": "sub", "mul": "mul", "multiply": "mul", "div": "div",
    "truediv": "div", "divide": "div", "true_divide": "div", "protectedDiv": "pdiv", "protected_div": "pdiv",
    "pdiv": "pdiv", "aq": "aq", "neg": "neg", "negative": "neg", "abs": "abs", "absolute": "abs", "fabs": "abs",
    "max": "max", "maximum": "max", "min": "min", "minimum": "min", "pow": "pow", "power": "pow",
    "square": "square", "cube": "cube", "sqrt": "sqrt", "exp": "exp", "log": "log", "plog": "plog",
    "protectedLog": "plog", "logabs": "logabs", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh",
    "sigmoid": "sigmoid",
}


def primitive_set_for(pset, primitives=None):
    """The evoxc PrimitiveSet for a DEAP PrimitiveSet and the DEAP-name -> code map.

    Each DEAP primitive name maps through `primitives` (a dict: name -> a standard primitive's name, or a body in
    postfix over registered elementwise ops such as "$0 $1 add sin"), then DEAP_NAMES, then a standard primitive of
    the same name. An unknown name is a TypeError naming it."""
    standard = PrimitiveSet.standard()
    user = dict(primitives or {})
    s = PrimitiveSet()
    codes = {}
    for plist in pset.primitives.values():
        for prim in plist:
            name = prim.name
            if name in codes:
                continue
            target = user.get(name, DEAP_NAMES.get(name, name))
            if "$" in target:
                body = target
            elif standard.find(target) >= 0:
                body = standard.body(target)
            else:
                raise _core.DTypeError(
                    f"evoxc.gp: unknown DEAP primitive {name!r}: map it with primitives={{{name!r}: 'pdiv'}} (a standard "
                    f"primitive: {', '.join(standard.names)}) or a body such as {{{name!r}: '$0 $1 add'}}")
            codes[name] = s.add(name, body)
    return s, codes


class GPEvaluator:
    """A DEAP population -> fitness tuples, through one Evaluator built at construction. Call it with a list of
    PrimitiveTrees (individuals); `fitness(population)` gives the numpy array instead; `population` is the last
    packed evoxc.gp.Population (its to_graphs() are the programs as graphs)."""

    def __init__(self, pset, X, y, loss="mse", primitives=None, dtype="float32", backend="interp"):
        X = _np.asarray(X)
        if X.ndim != 2:
            raise _core.ValidationError(f"evoxc.gp.evaluator: X must be (cases, variables), got shape {X.shape}")
        nvars = len(pset.arguments)
        if X.shape[1] != nvars:
            raise _core.ValidationError(f"evoxc.gp.evaluator: X has {X.shape[1]} columns but the primitive set takes "
                                        f"{nvars} arguments ({', '.join(pset.arguments)})")
        np_dtype = _np.dtype(dtype)
        self.primitive_set, self._codes = primitive_set_for(pset, primitives)
        self._args = {name: i for i, name in enumerate(pset.arguments)}
        self.loss = loss
        from . import tensor as _tensor
        self.x = _tensor(_np.ascontiguousarray(X.T, dtype=np_dtype))
        self.y = None
        if loss == "mse":
            y = _np.asarray(y, dtype=np_dtype).reshape(-1)
            if y.shape[0] != X.shape[0]:
                raise _core.ValidationError(f"evoxc.gp.evaluator: y has {y.shape[0]} values for {X.shape[0]} cases")
            self.y = _tensor(_np.ascontiguousarray(y))
        elif loss != "none":
            raise _core.ValidationError(f"evoxc.gp.evaluator: loss must be 'mse' or 'none', got {loss!r}")
        self.evaluator = Evaluator(self.primitive_set, nvars, loss, np_dtype.name, backend)
        # predictions() of an MSE evaluator: a second executable (loss 'none'), built on first use.
        self._predictor = self.evaluator if loss == "none" else None
        self._backend = backend
        self.population = Population(self.primitive_set, nvars)

    def __call__(self, individuals):
        """Fitness tuples [(loss,), ...] of the individuals (loss='mse')."""
        if self.loss != "mse":
            raise _core.ValidationError("evoxc.gp.evaluator: fitness tuples need loss='mse'; use predictions()")
        return self.evaluator._evaluate_deap(self.population, individuals, self._codes, self._args, self.x, self.y)

    def fitness(self, individuals):
        """The losses as a numpy array (loss='mse')."""
        return _np.array([f[0] for f in self(individuals)])

    def predictions(self, individuals):
        """Each individual's predictions, (individuals, cases)."""
        self.population.clear()
        self.population._add_deap(individuals, self._codes, self._args)
        if self._predictor is None:
            self._predictor = Evaluator(self.primitive_set, self.population.num_vars, "none", self.x.dtype,
                                        self._backend)
        return self._predictor.evaluate(self.population, self.x).numpy()


def evaluator(pset, X, y, loss="mse", primitives=None, dtype="float32", backend="interp"):
    """A function mapping a DEAP population (a list of PrimitiveTree individuals) to fitness tuples [(mse,), ...].

    pset: the DEAP PrimitiveSet the individuals were made with; X: (cases, variables), one column per argument of
    pset in order; y: (cases,) targets. primitives: {DEAP name: standard primitive name or postfix body}, for
    primitives whose names evoxc does not know (DEAP_NAMES lists the ones it does). Ephemeral constants and numeric
    terminals become per-program constants. Built once; each call packs the trees and runs one executable."""
    return GPEvaluator(pset, X, y, loss=loss, primitives=primitives, dtype=dtype, backend=backend)

"""evoxc.backends as the seed spells it: a namespace with one entry per backend (evoxc.backends.stablehlo.export(graph))
and the listing as evoxc.backends.available(). Calling it, evoxc.backends(), still returns the listing."""

from __future__ import annotations

from . import _core


class _Backend:
    """One backend: its name, its capabilities, and (for stablehlo) the text export."""

    def __init__(self, name):
        self.name = name

    def capabilities(self):
        return _core.capabilities(self.name)

    def __repr__(self):
        return f"<evoxc backend '{self.name}'>"


class _StableHLO(_Backend):
    def export(self, graph) -> str:
        """The graph as StableHLO MLIR text (lower(graph, 'stablehlo').text): what every compiler path takes."""
        return _core.export_stablehlo(graph)


class Backends:
    """The backends of this build: evoxc.backends.available() lists their names, evoxc.backends.<name> is one."""

    def available(self) -> list:
        """The names of the backends this build has, sorted."""
        return list(_core.backends())

    def __call__(self) -> list:
        return self.available()

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in _core.backends():
            raise AttributeError(f"evoxc.backends.{name}: this build has no backend '{name}'; it has "
                                 f"{', '.join(_core.backends())}")
        return _StableHLO(name) if name == "stablehlo" else _Backend(name)

    def __dir__(self):
        return ["available", *_core.backends()]

    def __repr__(self):
        return f"<evoxc.backends: {', '.join(_core.backends())}>"


backends = Backends()

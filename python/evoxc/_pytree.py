"""Pytrees: tuples, lists, dicts (str keys, flattened in sorted key order), None, namedtuples, dataclasses and
registered node types (evoxc.sparse's values: register_node)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

_LEAF, _NONE, _TUPLE, _LIST, _DICT, _NAMEDTUPLE, _DATACLASS, _NODE = range(8)

# Registered node types: type -> (flatten(x) -> (children, aux), unflatten(aux, children) -> x). `aux` is the
# node's static part (hashable); the plain (C++) form of such a node is the tuple of its children.
_NODES: dict = {}


def register_node(t, flatten_fn, unflatten_fn):
    """Makes instances of `t` pytree nodes: flatten_fn(x) -> (children, aux) and unflatten_fn(aux, children)."""
    _NODES[t] = (flatten_fn, unflatten_fn)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_static_config(x) -> bool:
    """A frozen dataclass instance that holds no tensors is a static config value, not a pytree node."""
    if not (dataclasses.is_dataclass(x) and not isinstance(x, type)):
        return False
    params = getattr(type(x), "__dataclass_params__", None)
    return bool(params and params.frozen)


class TreeDef:
    """The structure of a pytree without its leaves."""

    __slots__ = ("kind", "node", "keys", "children", "num_leaves", "plain")

    def __init__(self, kind, node=None, keys=(), children=()):
        self.kind = kind
        self.node = node
        self.keys = keys
        self.children = children
        self.num_leaves = 1 if kind == _LEAF else sum(c.num_leaves for c in children)
        # plain: only tuple/list/dict/None/leaf nodes (the C++ tree kinds)
        self.plain = kind in (_LEAF, _NONE, _TUPLE, _LIST, _DICT) and all(c.plain for c in children)

    def unflatten(self, leaves):
        it = iter(leaves)
        out = self._build(it)
        for _ in it:
            raise ValueError("unflatten: too many leaves")
        return out

    def leaf_paths(self, path: str = "") -> list:
        """The path of each leaf, in flatten's order: "[0]['w']" (indices, then dict keys and dataclass fields)."""
        if self.kind == _LEAF:
            return [path]
        out = []
        if self.kind in (_DICT, _DATACLASS):
            for k, c in zip(self.keys, self.children):
                out += c.leaf_paths(f"{path}[{k!r}]" if self.kind == _DICT else f"{path}.{k}")
        else:
            for i, c in enumerate(self.children):
                out += c.leaf_paths(f"{path}[{i}]")
        return out

    def _build(self, it):
        k = self.kind
        if k == _LEAF:
            return next(it)
        if k == _NONE:
            return None
        kids = [c._build(it) for c in self.children]
        if k == _TUPLE:
            return tuple(kids)
        if k == _LIST:
            return kids
        if k == _DICT:
            return dict(zip(self.keys, kids))
        if k == _NAMEDTUPLE:
            return self.node(*kids)
        if k == _NODE:
            return _NODES[self.node][1](self.keys, kids)
        return self.node(**dict(zip(self.keys, kids)))

    def restore(self, plain):
        """Rebuilds this structure from its plain (C++) form: namedtuples from tuples, dataclasses from dicts."""
        if self.plain:
            return plain
        return self.unflatten(flatten(plain)[0])

    def __eq__(self, other):
        return (isinstance(other, TreeDef) and self.kind == other.kind and self.node is other.node
                and self.keys == other.keys and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, id(self.node), self.keys, self.children))

    def __repr__(self):
        k = self.kind
        if k == _LEAF:
            return "*"
        if k == _NONE:
            return "None"
        inner = [repr(c) for c in self.children]
        if k == _NODE:
            return f"{self.node.__name__}({', '.join(inner)})"
        if k in (_DICT, _DATACLASS):
            inner = [f"{key!r}: {c}" for key, c in zip(self.keys, inner)]
        body = ", ".join(inner)
        if k == _TUPLE:
            return f"({body}{',' if len(inner) == 1 else ''})"
        if k == _LIST:
            return f"[{body}]"
        if k == _DICT:
            return "{" + body + "}"
        return f"{self.node.__name__}({body})"


_LEAF_DEF = TreeDef(_LEAF)
_NONE_DEF = TreeDef(_NONE)


def flatten(x, is_leaf: Callable[[Any], bool] | None = None):
    """(leaves in depth-first order, dict keys sorted, TreeDef)."""
    leaves: list = []
    return leaves, _flatten(x, leaves, is_leaf)


# Types that are always leaves (checked first: most leaves are specs, tensors and scalars).
_ATOMS: set = {int, float, bool, str, complex}


def register_leaf_type(t):
    """Marks a type as always a leaf (the package registers TensorSpec, SymbolicTensor, Tensor, DType)."""
    _ATOMS.add(t)


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF_DEF
    t = type(x)
    if t in _ATOMS:
        leaves.append(x)
        return _LEAF_DEF
    if t is tuple:
        return TreeDef(_TUPLE, children=tuple(_flatten(c, leaves, is_leaf) for c in x))
    if t is list:
        return TreeDef(_LIST, children=tuple(_flatten(c, leaves, is_leaf) for c in x))
    if x is None:
        return _NONE_DEF
    if isinstance(x, dict):
        keys = tuple(sorted(x))
        for k in keys:
            if not isinstance(k, str):
                raise TypeError(f"pytree dict keys must be str, got {type(k).__name__}")
        return TreeDef(_DICT, keys=keys, children=tuple(_flatten(x[k], leaves, is_leaf) for k in keys))
    if t in _NODES:
        children, aux = _NODES[t][0](x)
        return TreeDef(_NODE, node=t, keys=aux, children=tuple(_flatten(c, leaves, is_leaf) for c in children))
    if _is_namedtuple(x):
        return TreeDef(_NAMEDTUPLE, node=t, children=tuple(_flatten(c, leaves, is_leaf) for c in x))
    if isinstance(x, (tuple, list)):
        kind = _TUPLE if isinstance(x, tuple) else _LIST
        return TreeDef(kind, children=tuple(_flatten(c, leaves, is_leaf) for c in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type) and not is_static_config(x):
        keys = tuple(sorted(f.name for f in dataclasses.fields(x)))
        return TreeDef(_DATACLASS, node=t, keys=keys,
                       children=tuple(_flatten(getattr(x, k), leaves, is_leaf) for k in keys))
    leaves.append(x)
    return _LEAF_DEF


def unflatten(treedef: TreeDef, leaves):
    return treedef.unflatten(leaves)


def to_plain(treedef: TreeDef, leaves):
    """The C++ form of a tree: namedtuples as tuples, dataclasses as dicts."""
    it = iter(leaves)
    return _plain(treedef, it)


def _plain(td, it):
    k = td.kind
    if k == _LEAF:
        return next(it)
    if k == _NONE:
        return None
    kids = [_plain(c, it) for c in td.children]
    if k in (_TUPLE, _NAMEDTUPLE, _NODE):
        return tuple(kids)
    if k == _LIST:
        return kids
    return dict(zip(td.keys, kids))


def tree_map(f, tree, *rest, is_leaf=None):
    leaves, td = flatten(tree, is_leaf)
    others = [flatten(r, is_leaf)[0] for r in rest]
    return td.unflatten([f(*xs) for xs in zip(leaves, *others)])


def structure_path_mismatch(a: TreeDef, b: TreeDef, path: str = "") -> str | None:
    """The path of the first node where two structures differ (None when equal)."""
    if a.kind != b.kind or a.node is not b.node or a.keys != b.keys or len(a.children) != len(b.children):
        return path or "<root>"
    for i, (ca, cb) in enumerate(zip(a.children, b.children)):
        sub = f"[{a.keys[i]!r}]" if a.keys and a.kind in (_DICT, _DATACLASS) else f"[{i}]"
        m = structure_path_mismatch(ca, cb, path + sub)
        if m is not None:
            return m
    return None

"""Walking nested outputs: tensors inside lists, tuples (and dicts). Pure functions.

Comparisons of two outputs walk both structures side by side (correctness.py, upstream.py) and
say where they part; everything that looks at one output goes through here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def leaves(value: Any) -> list:
    """The tensors of a (nested) value, in order."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in leaves(item)]
    return []


def map_leaves(value: Any, fn: Callable) -> Any:
    """The same structure with each tensor replaced by fn(tensor)."""
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(map_leaves(item, fn) for item in value)
    return value


def nbytes(value: Any) -> int:
    return sum(t.numel() * t.element_size() for t in leaves(value))

"""pytest-kernelbench: KernelBench-style kernel evaluation as pytest items, and as a Python API
(`evaluate`, `Session`) for loops that judge one attempt at a time."""

from pytest_kernelbench.api import Session, evaluate
from pytest_kernelbench.settings import SettingsError

__all__ = ["Session", "SettingsError", "evaluate"]
__version__ = "0.1.0"

"""pytest-kernelbench: KernelBench-style kernel evaluation as pytest items."""

__version__ = "0.1.0"

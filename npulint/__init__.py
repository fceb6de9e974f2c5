"""npulint: a static linter for Ascend NPU model scripts."""

__version__ = "0.1.0"

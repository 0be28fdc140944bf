"""The tool's name and version, in a module that imports nothing, so any layer may read them."""

__version__ = "0.1.0"
TOOL_NAME = "llm-stability-gate"

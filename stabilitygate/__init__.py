"""llm-stability-gate: measure how non-deterministic an LLM feature is, and gate on it."""

__version__ = "0.1.0"
TOOL_NAME = "llm-stability-gate"

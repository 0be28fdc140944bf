"""llm-stability-gate: measure how non-deterministic an LLM feature is, and gate on it.

The library API (docs/design.md, "Library API")::

    import stabilitygate
    report = stabilitygate.run(".stability/suite.yml")          # sample, measure, judge
    report = stabilitygate.score(["samples.jsonl"], suite="suite.yml")
    report = stabilitygate.merge(["shard1/report.json", "shard2/report.json"])
    report.verdict, report.exit_code, report.to_dict()

Importing the package is cheap: the pipeline loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
TOOL_NAME = "llm-stability-gate"

if TYPE_CHECKING:
    from stabilitygate.api import merge, run, score
    from stabilitygate.report.model import CaseResult, Report, RunFacts

_LAZY = {
    "run": "stabilitygate.api",
    "score": "stabilitygate.api",
    "merge": "stabilitygate.api",
    "Report": "stabilitygate.report.model",
    "CaseResult": "stabilitygate.report.model",
    "RunFacts": "stabilitygate.report.model",
}
__all__ = ["TOOL_NAME", "CaseResult", "Report", "RunFacts", "__version__", "merge", "run", "score"]


def __getattr__(name: str) -> Any:
    """The API on first use, so that `--help` and `validate` never import the pipeline."""
    if name not in _LAZY:
        raise AttributeError(f"module 'stabilitygate' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name]), name)

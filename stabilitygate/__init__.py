"""llm-stability-gate: measure how non-deterministic an LLM feature is, and gate on it.

The library API (docs/design.md, "Library API")::

    import stabilitygate
    report = stabilitygate.run(".stability/suite.yml")          # sample, measure, judge
    report = stabilitygate.score(["samples.jsonl"], suite="suite.yml")
    report = stabilitygate.merge(["shard1/report.json", "shard2/report.json"])
    print("\n".join(stabilitygate.plan(".stability/suite.yml").lines()))  # cost and power, spending nothing
    report.verdict, report.exit_code, report.to_dict()
    case = report.case("checkout")
    case.metrics.cosine_min, case.primary                       # typed: Metrics, Agreement
    if isinstance(case.baseline, stabilitygate.Compared):        # or NotCompared: why not compared
        case.baseline.p_adjusted, case.baseline.detectable_drop

Importing the package is cheap: the pipeline loads on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from stabilitygate.version import TOOL_NAME, __version__

if TYPE_CHECKING:
    from stabilitygate.against_baseline import Compared, NotCompared
    from stabilitygate.api import merge, plan, run, score
    from stabilitygate.errors import BadInput, CannotMeasure
    from stabilitygate.metrics import Agreement, Metrics
    from stabilitygate.pipeline.options import Shard
    from stabilitygate.report.files import ReportFiles
    from stabilitygate.report.model import CaseResult, Report, RunFacts
    from stabilitygate.samples import Sample
    from stabilitygate.suite.load import LoadedSuite

_LAZY = {
    "run": "stabilitygate.api",
    "score": "stabilitygate.api",
    "merge": "stabilitygate.api",
    "plan": "stabilitygate.api",
    "Report": "stabilitygate.report.model",
    "CaseResult": "stabilitygate.report.model",
    "RunFacts": "stabilitygate.report.model",
    "ReportFiles": "stabilitygate.report.files",
    "BadInput": "stabilitygate.errors",
    "CannotMeasure": "stabilitygate.errors",
    "Sample": "stabilitygate.samples",
    "Shard": "stabilitygate.pipeline.options",
    "LoadedSuite": "stabilitygate.suite.load",
    "Metrics": "stabilitygate.metrics",
    "Agreement": "stabilitygate.metrics",
    "Compared": "stabilitygate.against_baseline",
    "NotCompared": "stabilitygate.against_baseline",
}
__all__ = [
    "TOOL_NAME",
    "Agreement",
    "BadInput",
    "CannotMeasure",
    "CaseResult",
    "Compared",
    "LoadedSuite",
    "Metrics",
    "NotCompared",
    "Report",
    "ReportFiles",
    "RunFacts",
    "Sample",
    "Shard",
    "__version__",
    "merge",
    "plan",
    "run",
    "score",
]


def __getattr__(name: str) -> object:
    """The API on first use, so that `--help` and `validate` never import the pipeline."""
    if name not in _LAZY:
        raise AttributeError(f"module 'stabilitygate' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)

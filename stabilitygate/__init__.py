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

Importing the package is cheap: the pipeline loads on first use. Its names (`__all__`) and the modules
of `API_MODULES` are the API; every other module is internal and may change in any release
(docs/design.md, "Library API"). A provider plugin needs only names from here: `Provider`,
`ProviderConfig` (or `KeyedConfig`, `HeaderedConfig`, `EndpointConfig`), `Request`, `Completion`,
`ProviderError`, `FatalProviderError`, the markers `ADDRESS` and `Implied`, and its entry-point
group `ENTRY_POINT_GROUP`; every error the gate raises derives from `GateError`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from stabilitygate.version import TOOL_NAME, __version__

if TYPE_CHECKING:
    from stabilitygate.against_baseline import Compared, NotCompared
    from stabilitygate.api import merge, plan, run, score
    from stabilitygate.errors import BadInput, CannotMeasure, GateError
    from stabilitygate.metrics import Agreement, Metrics
    from stabilitygate.pipeline.options import Shard
    from stabilitygate.providers.config import EndpointConfig, HeaderedConfig, KeyedConfig
    from stabilitygate.providers.interface import Completion, FatalProviderError, Provider, ProviderError, Request
    from stabilitygate.providers.registry import ENTRY_POINT_GROUP
    from stabilitygate.report.files import ReportFiles
    from stabilitygate.report.model import CaseResult, Report, RunFacts
    from stabilitygate.samples import Sample
    from stabilitygate.suite.load import LoadedSuite
    from stabilitygate.suite.model import ADDRESS, Implied, ProviderConfig

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
    "GateError": "stabilitygate.errors",
    "Sample": "stabilitygate.samples",
    "Shard": "stabilitygate.pipeline.options",
    "LoadedSuite": "stabilitygate.suite.load",
    "Metrics": "stabilitygate.metrics",
    "Agreement": "stabilitygate.metrics",
    "Compared": "stabilitygate.against_baseline",
    "NotCompared": "stabilitygate.against_baseline",
    # What a provider plugin needs (docs/providers.md, "Adding a provider").
    "Provider": "stabilitygate.providers.interface",
    "Request": "stabilitygate.providers.interface",
    "Completion": "stabilitygate.providers.interface",
    "ProviderError": "stabilitygate.providers.interface",
    "FatalProviderError": "stabilitygate.providers.interface",
    "ProviderConfig": "stabilitygate.suite.model",
    "ADDRESS": "stabilitygate.suite.model",
    "Implied": "stabilitygate.suite.model",
    "KeyedConfig": "stabilitygate.providers.config",
    "HeaderedConfig": "stabilitygate.providers.config",
    "EndpointConfig": "stabilitygate.providers.config",
    "ENTRY_POINT_GROUP": "stabilitygate.providers.registry",
}
#: The modules besides the package itself that are API: a suite loaded ahead of `run`, the report files
#: a library user writes, and the two a provider plugin has imported from since plugins existed. Every
#: other module is internal (`tests/test_init.py` holds the docs to this list).
API_MODULES = (
    "stabilitygate.cases",
    "stabilitygate.report.files",
    "stabilitygate.providers.interface",
    "stabilitygate.providers.config",
)
__all__ = [
    "ADDRESS",
    "API_MODULES",
    "ENTRY_POINT_GROUP",
    "TOOL_NAME",
    "Agreement",
    "BadInput",
    "CannotMeasure",
    "CaseResult",
    "Compared",
    "Completion",
    "EndpointConfig",
    "FatalProviderError",
    "GateError",
    "HeaderedConfig",
    "Implied",
    "KeyedConfig",
    "LoadedSuite",
    "Metrics",
    "NotCompared",
    "Provider",
    "ProviderConfig",
    "ProviderError",
    "Report",
    "ReportFiles",
    "Request",
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

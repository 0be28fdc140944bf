"""The published JSON Schema of the suite file, generated from the pydantic model.

`python -m stabilitygate.suite.schema > schema/suite.schema.json` regenerates it; a test fails when
the committed copy is stale.
"""

from __future__ import annotations

import json
from typing import Any

from stabilitygate.suite.model import Suite

SCHEMA_ID = "https://github.com/org/llm-stability-gate/raw/main/schema/suite.schema.json"


def suite_json_schema() -> dict[str, Any]:
    schema = Suite.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "llm-stability-gate suite",
        **{k: v for k, v in schema.items() if k != "title"},
    }


def render_schema() -> str:
    return json.dumps(suite_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(render_schema(), end="")

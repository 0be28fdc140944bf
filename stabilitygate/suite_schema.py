"""The published JSON Schema of the suite file, generated from the pydantic models.

`python -m stabilitygate.suite_schema > schema/suite.schema.json` regenerates it; a test fails when
the committed copy is stale. A provider mapping is each built-in type's config model (one of them,
by `type`); a case's provider may set any part of one. Plugins' types are not in the published
schema: they validate when the plugin is installed (docs/providers.md).
"""

from __future__ import annotations

import copy
import json

from pydantic.json_schema import JsonSchemaValue

from stabilitygate.providers.registry import BUILT_IN, config_union
from stabilitygate.suite.model import Suite

SCHEMA_ID = "https://github.com/org/llm-stability-gate/raw/main/schema/suite.schema.json"
REF = "#/$defs/{model}"
OVERRIDE_SUFFIX = "Override"


def suite_json_schema() -> JsonSchemaValue:
    schema = Suite.model_json_schema(by_alias=True, mode="validation", ref_template=REF)
    providers = config_union(BUILT_IN).json_schema(by_alias=True, mode="validation", ref_template=REF)
    definitions = schema.setdefault("$defs", {})
    definitions.update(providers.pop("$defs", {}))
    members = [ref["$ref"].rsplit("/", 1)[-1] for ref in providers["oneOf"]]
    described = {"description": schema["properties"]["provider"].get("description", "")}
    schema["properties"]["provider"] = {**described, **providers}
    judge = definitions["Equivalence"]["properties"]["judge"]  # a whole provider block, as `provider`
    definitions["Equivalence"]["properties"]["judge"] = {"description": judge.get("description", ""), **providers}
    for name in members:
        definitions[name + OVERRIDE_SUFFIX] = _override_of(definitions[name])
    overrides = [{"$ref": REF.format(model=name + OVERRIDE_SUFFIX)} for name in members]
    case_provider = definitions["Case"]["properties"]["provider"]
    definitions["Case"]["properties"]["provider"] = {
        "description": "Overrides any part of the suite's provider (another `type` replaces it whole)",
        "anyOf": [*overrides, {"type": "null"}],
        "default": case_provider.get("default"),
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "llm-stability-gate suite",
        **{k: v for k, v in schema.items() if k != "title"},
    }


def _override_of(config_schema: JsonSchemaValue) -> JsonSchemaValue:
    """A config model's schema with nothing required: a case sets only what it changes."""
    override = copy.deepcopy(config_schema)
    override.pop("required", None)
    override["title"] = override.get("title", "") + OVERRIDE_SUFFIX
    return override


def render_schema() -> str:
    return json.dumps(suite_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(render_schema(), end="")

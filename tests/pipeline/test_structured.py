"""Structured outputs and diagnostics end to end: tool calls, schema validity, logprob near-ties."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.pipeline.conftest import RunCli, write_suite
from tests.support.openai_server import Fault, ScriptedOpenAI

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "answer",
            "parameters": {"type": "object", "properties": {"borough": {"type": "string"}}, "required": ["borough"]},
        },
    }
]
SCHEMA = {"type": "object", "properties": {"borough": {"type": "string"}}, "required": ["borough"]}


def test_tool_call_arguments_are_the_parsed_completion(tmp_path: Path, run_cli: RunCli) -> None:
    script = {"Where?": [('{"borough": "Queens"}', 8), ('{"borough": 5}', 2)]}
    case = {
        "id": "tool",
        "prompt": "Where?",
        "answer": {"json": "/borough", "schema": SCHEMA},
        "expected": "Queens",
        "thresholds": {"min_schema_valid": 0.9},
        "provider": {"params": {"tools": TOOLS, "tool_choice": "required"}},
    }
    with ScriptedOpenAI(script) as server:
        suite = write_suite(tmp_path, server.base_url, [case])
        code, report = run_cli("run", str(suite), "--no-progress")
        sent = server.requests[0].body
    assert sent["tools"] == TOOLS and sent["tool_choice"] == "required"
    assert code == 1 and report is not None
    (result,) = report["cases"]
    assert result["answers"] == [{"answer": '"Queens"', "count": 8}]
    metrics = result["metrics"]
    assert metrics["parse_failures"] == 2 and metrics["schema_valid_share"] == 0.8
    assert metrics["accuracy"] == 0.8 and metrics["parsed_agreement"] == 0.8
    assert result["verdict"] == "fail"
    assert any("schema" in reason and "0.8" in reason for reason in result["reasons"])


def reply(tokens: list[tuple[str, float, str, float]]) -> str:
    """A chat completion whose logprobs are given token by token: (token, logprob, runner-up, its logprob)."""
    content = [
        {"token": t, "logprob": lp, "top_logprobs": [{"token": t, "logprob": lp}, {"token": r, "logprob": rl}]}
        for t, lp, r, rl in tokens
    ]
    body: dict[str, Any] = {
        "id": "x",
        "object": "chat.completion",
        "model": "scripted-model",
        "system_fingerprint": "fp_1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "".join(t[0] for t in tokens)},
                "finish_reason": "stop",
                "logprobs": {"content": content},
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": len(tokens), "total_tokens": 3 + len(tokens)},
    }
    return json.dumps(body)


def test_logprobs_report_names_the_near_tie_position(tmp_path: Path, run_cli: RunCli) -> None:
    # "He was born in Queens" 7 times, "He was born in Manhattan" 3 times: they part at token 5,
    # exactly where the modal completion's top two tokens were 0.05 apart.
    modal = reply(
        [
            ("He", -0.01, "She", -4.0),
            (" was", -0.01, " is", -5.0),
            (" born", -0.02, " raised", -3.0),
            (" in", -0.01, " at", -6.0),
            (" Queens", -0.67, " Manhattan", -0.72),
        ]
    )
    other = reply(
        [
            ("He", -0.01, "She", -4.0),
            (" was", -0.01, " is", -5.0),
            (" born", -0.02, " raised", -3.0),
            (" in", -0.01, " at", -6.0),
            (" Manhattan", -0.69, " Queens", -0.70),
        ]
    )
    faults = [
        Fault("status", status=200, body=other, when=lambda body, n: n % 10 in (3, 6, 9)),
        Fault("status", status=200, body=modal),
    ]
    case = {"id": "born", "prompt": "Where was he born?", "provider": {"params": {"logprobs": True, "top_logprobs": 2}}}
    with ScriptedOpenAI({}, faults=faults) as server:
        suite = write_suite(tmp_path, server.base_url, [case], sampling={"samples": 10, "concurrency": 1})
        code, report = run_cli("run", str(suite), "--no-progress", "--markdown", str(tmp_path / "r.md"))
    assert code == 0 and report is not None
    (result,) = report["cases"]
    assert result["metrics"]["unique_completions"] == 2 and result["metrics"]["divergence_token"] == 5
    diagnostics = result["diagnostics"]
    assert diagnostics["min_margin_position"] == 5
    assert abs(diagnostics["min_margin"] - 0.05) < 1e-6
    assert diagnostics["min_margin_token"] == " Queens" and diagnostics["divergence_at_min_margin"] is True
    assert "5" in (tmp_path / "r.md").read_text()

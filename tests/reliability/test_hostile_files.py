"""Issue 25, items 6 and 7: files whose work no limit bounded, and bad input that ended in exit 3.

Each attack runs through the real command (`python -m stabilitygate` in a subprocess): it must end
in exit 2 with one line naming the file and the place, never a traceback, never a hang. GUARD_S only
bounds a run that hangs (the code under test is then broken); no test measures time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stabilitygate.cli import main
from tests.reliability.conftest import GUARD_S, ROOT
from tests.support.openai_server import ScriptedOpenAI

SUITE = {
    "version": 1,
    "name": "hostile",
    "provider": {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
    "sampling": {"samples": 4},
    "embedding": {"enabled": False},
    "cases": [{"id": "a", "prompt": "q"}],
}


def gate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "stabilitygate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD_S,
        check=False,
    )


def assert_bad_input(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """Exit 2, one line on stderr, naming what the test expects."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr
    return done.stderr.strip()


def suite_file(directory: Path, text: str | None = None, **changes: object) -> Path:
    path = directory / "suite.yml"
    path.write_text(text if text is not None else yaml.safe_dump({**SUITE, **changes}, sort_keys=False))
    return path


def samples_file(directory: Path, texts: list[str], case: str = "a") -> Path:
    path = directory / "samples.jsonl"
    path.write_text("".join(json.dumps({"case": case, "index": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    return path


def shard_report(directory: Path) -> Path:
    """A real shard report (and its samples file beside it), scored in-process."""
    suite = suite_file(directory)
    samples = samples_file(directory, ["x", "x", "y", "x"])
    report = directory / "report.json"
    assert main(["score", str(samples), "--suite", str(suite), "--report-json", str(report)]) in (0, 1)
    data = json.loads(report.read_text())
    data["run"]["sampling"] = {**(data["run"].get("sampling") or {}), "samples_file": samples.name}
    report.write_text(json.dumps(data))
    return report


# --- item 6: work that no limit bounded -------------------------------------------------------------


def alias_bomb(levels: int = 9) -> str:
    lines = ["version: 1", "name: bomb", 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    lines += ["provider: {type: openai, model: m}", f"cases: [{{id: a, prompt: *l{levels - 1}}}]"]
    return "\n".join(lines) + "\n"


def test_a_suite_of_nested_aliases_is_refused_at_its_line(tmp_path: Path) -> None:
    text = alias_bomb()
    assert len(text.encode()) < 700  # the attack's size: 9^9 strings once expanded
    done = gate("validate", str(suite_file(tmp_path, text)), cwd=tmp_path)
    assert_bad_input(done, "suite.yml:", "aliases stand for more than 100,000 nodes")


def test_aliases_that_reuse_a_block_are_fine(tmp_path: Path) -> None:
    text = (
        "version: 1\nname: reuse\nprovider: &p {type: openai, model: m}\n"
        "embedding: {enabled: false}\ncases:\n"
        + "".join(f"  - {{id: c{i}, prompt: q, provider: *p}}\n" for i in range(500))
    )
    assert gate("validate", str(suite_file(tmp_path, text)), cwd=tmp_path).returncode == 0


def test_an_alias_that_contains_itself_is_refused(tmp_path: Path) -> None:
    text = "version: 1\nname: loop\nx: &x [a, *x]\nprovider: {type: openai, model: m}\ncases: [{id: a, prompt: q}]\n"
    assert_bad_input(gate("validate", str(suite_file(tmp_path, text)), cwd=tmp_path), "suite.yml:3:", "contains it")


@pytest.mark.parametrize("what", ["suite", "report", "samples"])
def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path, what: str) -> None:
    fifo = tmp_path / f"{what}.fifo"
    os.mkfifo(fifo)  # nobody ever writes to it: open() alone would block forever
    suite = suite_file(tmp_path)
    args = {
        "suite": ["validate", str(fifo)],
        "report": ["merge", str(fifo)],
        "samples": ["score", str(fifo), "--suite", str(suite)],
    }[what]
    assert_bad_input(gate(*args, cwd=tmp_path), str(fifo), "not a regular file")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [({"regex": "^(a|aa)+$"}, None), ({"text": {"normalize": ["strip"]}}, {"regex": "^(a|aa)+$"})],
    ids=["answer-regex", "expected-regex"],
)
def test_a_regex_that_backtracks_without_end_is_exit_2_naming_it(
    tmp_path: Path, answer: dict[str, object], expected: dict[str, str] | None
) -> None:
    case = {"id": "a", "prompt": "q", "answer": answer, **({"expected": expected} if expected else {})}
    suite = suite_file(tmp_path, cases=[case])
    samples = samples_file(tmp_path, ["a" * 64 + "b"] * 2 + ["aa"] * 2)
    done = gate("score", str(samples), "--suite", str(suite), cwd=tmp_path)
    assert_bad_input(done, "(a|aa)+", "ran past 2 s", "backtracks")


def test_a_regex_that_the_engine_runs_in_linear_time_still_parses(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, cases=[{"id": "a", "prompt": "q", "answer": {"regex": "^(a+)+$"}}])
    samples = samples_file(tmp_path, ["a" * 64 + "b", "aaaa", "aaaa", "aaaa"])
    report = tmp_path / "r.json"
    done = gate("score", str(samples), "--suite", str(suite), "--report-json", str(report), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    case = json.loads(report.read_text())["cases"][0]
    assert case["metrics"]["parse_failures"] == 1 and case["answers"][0] == {"answer": "aaaa", "count": 3}


# --- item 7: exit 2 naming the place, where exit 3 was --------------------------------------------


# --- issue 37, item 2: every input bounded before work starts ------------------------------------


@pytest.mark.parametrize("command", ["run", "plan"])
def test_samples_given_on_the_command_line_obey_the_suites_bound(tmp_path: Path, command: str) -> None:
    """`--samples 1000000000` sampled until killed (`run`), or allocated 3.7 GiB and exited 3 (`plan`)."""
    done = gate(command, str(suite_file(tmp_path)), "--samples", "1000000000", cwd=tmp_path)
    assert_bad_input(done, "1,000,000,000", "expected 2 to 100,000")


BACKTRACKS = "^(a|aa)+$"
PATTERN_SCHEMAS = {
    "pattern": {"type": "object", "properties": {"a": {"type": "string", "pattern": BACKTRACKS}}},
    "patternProperties": {"type": "object", "patternProperties": {BACKTRACKS: {"type": "integer"}}},
    "additionalProperties": {"type": "object", "patternProperties": {BACKTRACKS: {}}, "additionalProperties": False},
    "propertyNames": {"type": "object", "propertyNames": {"pattern": BACKTRACKS}},
}


@pytest.mark.parametrize("keyword", sorted(PATTERN_SCHEMAS))
def test_a_schema_pattern_that_backtracks_runs_under_the_time_limit(tmp_path: Path, keyword: str) -> None:
    """jsonschema ran its patterns with `re`, outside the `regex` limit: 41 characters ran past 60 s."""
    hostile = "a" * 40 + "b"
    answer = json.dumps({"a": hostile} if keyword == "pattern" else {hostile: 1})
    case = {"id": "a", "prompt": "q", "answer": {"json": "", "schema": PATTERN_SCHEMAS[keyword]}}
    samples = samples_file(tmp_path, [answer] * 2 + ['{"a": "aa"}'] * 2)
    done = gate("score", str(samples), "--suite", str(suite_file(tmp_path, cases=[case])), cwd=tmp_path)
    assert_bad_input(done, "(a|aa)+", "ran past 2 s", "backtracks")


def test_unevaluated_properties_beside_pattern_properties_are_refused_at_load(tmp_path: Path) -> None:
    """The one place jsonschema still runs a pattern with `re`: refused before anything is sampled."""
    schema = {"type": "object", "patternProperties": {"^x": {}}, "unevaluatedProperties": False}
    text = yaml.safe_dump({**SUITE, "cases": [{"id": "a", "prompt": "q", "answer": {"json": "", "schema": schema}}]})
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "unevaluatedProperties" in row)
    done = gate("validate", str(suite_file(tmp_path, text)), cwd=tmp_path)
    assert_bad_input(done, f"suite.yml:{line}:", "unevaluatedProperties", "patternProperties")


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("http://127.0.0.1:{port}/schema.json", "outside the schema"),
        ("file:///etc/passwd", "outside the schema"),
        ("other.json#/x", "outside the schema"),
        ("#/$defs/missing", "names nothing in the schema"),
        ("#nowhere", "names nothing in the schema"),
    ],
    ids=["url", "file", "relative", "missing-pointer", "missing-anchor"],
)
def test_a_schema_ref_resolves_only_inside_the_schema(tmp_path: Path, ref: str, why: str) -> None:
    """A `$ref` to a URL was fetched with no timeout, and `file:` exited 3: both exit 2 at the `$ref`'s line."""
    with ScriptedOpenAI({}, default="{}") as server:
        port = server.base_url.split(":")[2].split("/")[0]
        schema = {"type": "object", "properties": {"a": {"$ref": ref.format(port=port)}}, "$defs": {"n": {}}}
        case = {"id": "a", "prompt": "q", "answer": {"json": "", "schema": schema}}
        text = yaml.safe_dump({**SUITE, "cases": [case]}, sort_keys=False)
        line = next(i for i, row in enumerate(text.splitlines(), 1) if "$ref" in row)
        samples = samples_file(tmp_path, ['{"a": 1}'] * 4)
        done = gate("score", str(samples), "--suite", str(suite_file(tmp_path, text)), cwd=tmp_path)
        assert_bad_input(done, f"suite.yml:{line}:", "$ref", why)
        assert server.count == 0


def test_a_schema_ref_inside_the_schema_still_resolves(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/small"}, "b": {"$ref": "#named"}},
        "$defs": {"small": {"type": "integer", "maximum": 5}, "named": {"$anchor": "named", "type": "string"}},
    }
    case = {"id": "a", "prompt": "q", "answer": {"json": "", "schema": schema}}
    samples = samples_file(tmp_path, ['{"a": 1, "b": "x"}'] * 2 + ['{"a": 9}', '{"b": 2}'])
    report = tmp_path / "r.json"
    suite = suite_file(tmp_path, cases=[case])
    done = gate("score", str(samples), "--suite", str(suite), "--report-json", str(report), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(report.read_text())["cases"][0]["metrics"]["schema_valid_share"] == 0.5


def test_a_suite_number_of_5000_digits(tmp_path: Path) -> None:
    text = yaml.safe_dump(SUITE, sort_keys=False).replace("samples: 4", "samples: " + "9" * 5000)
    line = text.splitlines().index("  samples: " + "9" * 5000) + 1
    done = gate("validate", str(suite_file(tmp_path, text)), cwd=tmp_path)
    assert_bad_input(done, f"suite.yml:{line}:", "5,000 digits")


def test_a_base_url_that_is_no_url_is_exit_2_at_its_line(tmp_path: Path) -> None:
    text = yaml.safe_dump(SUITE, sort_keys=False).replace("http://127.0.0.1:9/v1", "http://[::1")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "[::1" in row)
    assert_bad_input(gate("validate", str(suite_file(tmp_path, text)), cwd=tmp_path), f"suite.yml:{line}:", "not a URL")


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"properties": {"a": {"$ref": "#/properties/a"}}},
        {"allOf": [{"$ref": "#/$defs/x"}], "$defs": {"x": {"anyOf": [{"$ref": "#"}]}}},
    ],
    ids=["itself", "a-property-itself", "through-defs"],
)
def test_a_schema_that_applies_itself_without_end_is_exit_2(tmp_path: Path, schema: dict[str, object]) -> None:
    suite = suite_file(tmp_path, cases=[{"id": "a", "prompt": "q", "answer": {"json": "", "schema": schema}}])
    done = gate("validate", str(suite), cwd=tmp_path)
    assert_bad_input(done, "suite.yml:", "applies itself to the same value without end")


def test_a_recursive_schema_that_descends_is_fine(tmp_path: Path) -> None:
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    suite = suite_file(tmp_path, cases=[{"id": "a", "prompt": "q", "answer": {"json": "", "schema": tree}}])
    samples = samples_file(tmp_path, ['{"children": [{"children": []}]}'] * 2 + ['{"children": 1}'] * 2)
    report = tmp_path / "r.json"
    done = gate("score", str(samples), "--suite", str(suite), "--report-json", str(report), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(report.read_text())["cases"][0]["metrics"]["schema_valid_share"] == 0.5


def test_a_report_with_an_integer_of_5000_digits(tmp_path: Path) -> None:
    report = shard_report(tmp_path)
    text = report.read_text().replace('"samples_ok": 4', '"samples_ok": ' + "4" * 5000, 1)
    report.write_text(text)
    line = text[: text.index("4" * 5000)].count("\n") + 1
    assert_bad_input(gate("merge", str(report), cwd=tmp_path), f"report.json:{line}:", "5,000 digits")


def test_a_baseline_with_an_integer_of_5000_digits(tmp_path: Path) -> None:
    suite = suite_file(tmp_path)
    samples = samples_file(tmp_path, ["x"] * 4)
    assert main(["score", str(samples), "--suite", str(suite), "--update-baseline"]) == 0
    baseline = tmp_path / "suite.baseline.json"
    text = baseline.read_text().replace('"n": 4', '"n": ' + "4" * 5000, 1)
    baseline.write_text(text)
    line = text[: text.index("4" * 5000)].count("\n") + 1
    done = gate("score", str(samples), "--suite", str(suite), cwd=tmp_path)
    assert_bad_input(done, f"suite.baseline.json:{line}:", "5,000 digits")


@pytest.mark.parametrize("depth", [500, 980])
def test_a_report_nested_hundreds_deep(tmp_path: Path, depth: int) -> None:
    report = shard_report(tmp_path)
    data = json.loads(report.read_text())
    data["cases"][0]["diagnostics"] = {"suggestion": "x", "x": "DEEP"}
    report.write_text(json.dumps(data).replace('"DEEP"', "[" * depth + "]" * depth))
    where = "cases[0]" if depth < 900 else "column"  # past the parser's own depth: the line and column
    assert_bad_input(gate("merge", str(report), cwd=tmp_path), "report.json:", "nested more than 100 deep", where)


def test_a_samples_line_nested_100k_deep(tmp_path: Path) -> None:
    suite = suite_file(tmp_path)
    samples = samples_file(tmp_path, ["x", "x"])
    with samples.open("a") as handle:
        handle.write('{"case": "a", "index": 2, "text": "x", "usage": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    done = gate("score", str(samples), "--suite", str(suite), cwd=tmp_path)
    assert_bad_input(done, "samples.jsonl:3:", "nested too deeply")

"""The baseline file: round trip, stable bytes, atomic writes, strict reads that never touch the file."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import stat
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.judge.baseline import (
    Baseline,
    baseline_from_run,
    dump_baseline,
    merge_baselines,
    read_baseline,
    write_baseline,
)
from stabilitygate.judge.verdicts import judge_cases
from stabilitygate.results import Agreement, CaseMeasurement
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, Regression, ResolvedCase, Thresholds
from stabilitygate.typed_json import to_json
from tests.support.typed import typed


def case(cid: str, parser: bool = True, prompt: str = "q") -> ResolvedCase:
    return ResolvedCase(
        id=cid,
        line=1,
        messages=(Message(role="user", content=prompt),),
        provider=ProviderConfig(type="openai", model="m"),
        thresholds=Thresholds(),
        answer=AnswerSpec(choice=["A", "B", "C", "D", "E", "F", "G"]) if parser else None,
        expected=None,
        samples=10,
    )


def measured(cid: str, answers: list[str], ok: int | None = None) -> CaseMeasurement:
    n = len(answers) if ok is None else ok
    counts = sorted(Counter(answers).items(), key=lambda kv: (-kv[1], kv[0]))
    return typed(
        CaseMeasurement,
        dict(
            id=cid,
            samples_requested=len(answers),
            samples_ok=n,
            sample_errors=len(answers) - n,
            metrics={
                "unique_completions": len(counts),
                "parsed_agreement": counts[0][1] / len(answers),
                "mode_share": 1 / 3,
                "cosine_min": 0.1 + 0.2,
                "semantic_agreement": None,
            },
            completions=[{"text": f"Réponse {a} ✓", "count": c} for a, c in counts],
            answers=[{"answer": a, "count": c} for a, c in counts],
            fingerprints=[{"fingerprint": "fp_1", "count": n}],
        ),
    )


def sample_baseline() -> Baseline:
    cases = [case("one"), case("two", parser=False)]
    runs = [measured("one", list("AAAAAAABCDEFG")), measured("two", list("AAAAAAAAAB"))]
    return baseline_from_run(cases, runs, "demo")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "suite.baseline.json"
    recorded = sample_baseline()
    write_baseline(path, recorded)
    assert read_baseline(path) == recorded
    entry = recorded.cases["one"]
    assert entry.hash == case("one").definition_hash
    assert entry.primary == Agreement("parsed_agreement", 7, 13)
    assert entry.modal_answer == "A" and entry.modal_completion == "Réponse A ✓"
    assert len(entry.completions) == 5 and len(entry.answers) == 5  # top 5 only
    assert recorded.cases["two"].primary == Agreement("mode_share", 9, 10)
    assert recorded.cases["two"].modal_answer is None


def test_file_is_stable_and_diff_friendly(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write_baseline(path, sample_baseline())
    first = path.read_bytes()
    write_baseline(path, sample_baseline())
    assert path.read_bytes() == first  # re-recording an unchanged run: identical bytes
    text = first.decode("utf-8")
    assert text.endswith("}\n") and "✓" in text  # ensure_ascii=False: readable in the diff
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert data["cases"]["one"]["metrics"]["cosine_min"] == 0.3  # float noise rounded away
    assert "time" not in text and "date" not in text


def test_missing_file_is_none(tmp_path: Path) -> None:
    assert read_baseline(tmp_path / "nope.json") is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"schema_version": 1, "cases": {"capital": {"hash": ', "not valid JSON"),
        (b"", "not valid JSON"),
        (b"[1, 2]", "at the top level"),
        (b'{"schema_version": 3, "suite": "s", "cases": {}}', "schema_version"),
        (b'{"schema_version": 1, "suite": "s", "cases": {"a": {"hash": 3}}}', "cases/a"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{\n<<<<<<< HEAD\n"a": 1\n=======\n"a": 2\n>>>>>>> branch\n}', "merge-conflict"),
    ],
)
def test_damaged_files_are_bad_input_and_untouched(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "suite.baseline.json"
    path.write_bytes(content)
    before = digest(path)
    with pytest.raises(BadInput) as caught:
        read_baseline(path)
    assert str(path) in str(caught.value) and expected in str(caught.value)
    assert caught.value.exit_code == 2
    assert digest(path) == before


def test_truncated_real_baseline_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write_baseline(path, sample_baseline())
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(BadInput) as caught:
        read_baseline(path)
    assert caught.value.line is not None and caught.value.line > 1
    assert path.read_bytes() == whole[: len(whole) // 2]


def test_impossible_counts_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    data = to_json(sample_baseline())
    data["cases"]["one"]["primary"]["k"] = 99  # type: ignore[index,call-overload]
    path.write_text(json.dumps(data))
    with pytest.raises(BadInput, match=r"at cases/one/primary: .*k \(99\) > n \(13\)"):
        read_baseline(path)


@pytest.mark.parametrize(("field", "place"), [("samples", "cases/one/samples"), ("primary", "cases/one/primary/n")])
def test_more_samples_than_a_suite_may_draw_are_refused_before_any_test_weighs_them(
    tmp_path: Path, field: str, place: str
) -> None:
    """An exact test over 10**12 samples would never end: the reader refuses the count instead."""
    path = tmp_path / "b.json"
    data = to_json(sample_baseline())
    entry = data["cases"]["one"]  # type: ignore[index,call-overload]
    if field == "samples":
        entry["samples"] = 10**12
    else:
        entry["primary"] = {"metric": "parsed_agreement", "k": 1, "n": 10**12}
    path.write_text(json.dumps(data))
    with pytest.raises(BadInput, match=rf"at {place}: Input should be less than or equal to 100000"):
        read_baseline(path)


def test_a_directory_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="cannot read"):
        read_baseline(tmp_path)


@contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Writes past `limit` bytes fail with EFBIG: a real write failure, as on a full disk."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the error, not the signal's kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def large_baseline() -> Baseline:
    cases = [case(f"case-{i}") for i in range(60)]
    return baseline_from_run(cases, [measured(c.id, list("AAAAAAABCDEFG")) for c in cases], "demo")


def test_a_write_failing_midway_is_bad_input_and_leaves_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "suite.baseline.json"
    write_baseline(path, sample_baseline())
    before = path.read_bytes()
    limit = 16 * 1024
    assert len(before) < limit < len(dump_baseline(large_baseline()).encode("utf-8"))
    with file_size_limit(limit), pytest.raises(BadInput, match="cannot write the baseline: File too large") as caught:
        write_baseline(path, large_baseline())
    assert str(path) in str(caught.value) and caught.value.exit_code == 2
    assert isinstance(caught.value.__cause__, OSError)  # the cause is kept for --debug tracebacks
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite.baseline.json"]  # no temp file left


def test_a_file_in_the_way_of_the_directory_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / ".stability").write_text("not a directory")
    path = tmp_path / ".stability" / "suite.baseline.json"
    with pytest.raises(BadInput, match="cannot write the baseline") as caught:
        write_baseline(path, sample_baseline())
    assert str(path) in str(caught.value) and isinstance(caught.value.__cause__, OSError)
    assert (tmp_path / ".stability").read_text() == "not a directory"


@pytest.mark.parametrize(
    ("content", "cause"),
    [(b'{"schema_version": 1', json.JSONDecodeError), (b"\xff\xfe{}", UnicodeDecodeError)],
)
def test_unreadable_files_keep_their_cause(tmp_path: Path, content: bytes, cause: type[Exception]) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(content)
    with pytest.raises(BadInput) as caught:
        read_baseline(path)
    assert isinstance(caught.value.__cause__, cause)


def test_written_file_mode_follows_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_baseline(tmp_path / "b.json", sample_baseline())
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "b.json").stat().st_mode) == 0o644


def test_creates_the_directory(tmp_path: Path) -> None:
    path = tmp_path / ".stability" / "suite.baseline.json"
    write_baseline(path, sample_baseline())
    assert read_baseline(path) == sample_baseline()


def test_unmeasurable_cases_are_not_recorded() -> None:
    recorded = baseline_from_run([case("one")], [measured("one", list("AB"), ok=1)], "demo")
    assert recorded.cases == {}


def test_merge_keeps_cases_this_run_did_not_measure() -> None:
    old = sample_baseline()
    new = baseline_from_run([case("one", prompt="edited")], [measured("one", list("BB"))], "demo")
    merged = merge_baselines(old, new, suite_ids={"one", "two"})
    assert merged.cases["one"] == new.cases["one"] and merged.cases["two"] == old.cases["two"]
    assert set(merge_baselines(old, new, suite_ids={"one"}).cases) == {"one"}  # removed cases go
    assert merge_baselines(None, new, suite_ids={"one"}) == new


def test_dump_is_what_is_written(tmp_path: Path) -> None:
    write_baseline(tmp_path / "b.json", sample_baseline())
    assert (tmp_path / "b.json").read_text(encoding="utf-8") == dump_baseline(sample_baseline())


def test_the_verdicts_primary_agreement_is_what_is_recorded() -> None:
    cases = [case("one"), case("two", parser=False)]
    runs = [measured("one", list("AAAAAAABCDEFG")), measured("two", list("AAAAAAAAAB"))]
    verdicts = judge_cases(cases, runs, None, Regression())
    assert baseline_from_run(cases, runs, "demo", verdicts=verdicts) == sample_baseline()
    # The verdict's word is taken as it is, not recomputed.
    told = [replace(verdicts[0], primary=Agreement("parsed_agreement", 3, 13))]
    assert baseline_from_run(cases, runs, "demo", verdicts=told).cases["one"].primary == Agreement(
        "parsed_agreement", 3, 13
    )


def test_the_entry_for_a_case_is_its_own_while_its_definition_holds() -> None:
    recorded = sample_baseline()
    assert recorded.entry_for(case("one")) == recorded.cases["one"]
    assert recorded.entry_for(case("one", prompt="edited")) is None  # the case changed since
    assert recorded.entry_for(case("three")) is None  # never recorded

"""The diagnosis line: each rule of docs/design.md §16, "Diagnosis", in its order, from what was measured."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from stabilitygate.judge.diagnosis import Evidence, concurrency_advice, diagnose, suggestion_from_remedies
from stabilitygate.metrics import Agreement, Metrics
from stabilitygate.remedies import ProbeResult, VariantResult
from stabilitygate.results import (
    AnswerCount,
    CaseMeasurement,
    CompletionCount,
    Diagnostics,
    FingerprintCount,
    VerdictName,
)
from stabilitygate.suite.model import ParserKind


def measured(
    completions: dict[str, int],
    answers: dict[str, int] | None = None,
    *,
    fingerprints: tuple[str, ...] = ("fp_a",),
    **metrics: Any,
) -> CaseMeasurement:
    n = sum(completions.values())
    rows = tuple(CompletionCount(t, c) for t, c in sorted(completions.items(), key=lambda kv: -kv[1]))
    answer_rows = tuple(AnswerCount(a, c) for a, c in sorted((answers or {}).items(), key=lambda kv: -kv[1]))
    numbers = {"unique_completions": len(completions), "length_cut": 0, **metrics}
    if answers is not None:
        numbers.setdefault("parse_failures", n - sum(answers.values()))
        numbers.setdefault("parsed_agreement", max(answers.values(), default=0) / n)
    return CaseMeasurement(
        id="c",
        samples_requested=n,
        samples_ok=n,
        sample_errors=0,
        metrics=Metrics(**numbers),
        completions=rows,
        answers=answer_rows,
        fingerprints=tuple(FingerprintCount(f, n // len(fingerprints)) for f in fingerprints),
    )


def evidence(m: CaseMeasurement, parser: str | None = None, **fields: Any) -> Evidence:
    return Evidence(measurement=m, parser=parser, **fields)


def probe(depends: bool) -> ProbeResult:
    return ProbeResult(
        compared="completions", alone=5, under_load=5, alone_distinct=1, under_load_distinct=4,
        modal_alone=5, modal_under_load=0, p_value=0.004, p_holm=0.004 if depends else 0.3, depends=depends,
    )  # fmt: skip


def variant(
    name: str, k: int, *, answers: int = 1, significant: bool = True, error: str | None = None
) -> VariantResult:
    return VariantResult(
        name=name, overrides=("params",), samples_requested=20, samples_ok=20, sample_errors=0,
        unique_completions=answers, answers=answers, primary=Agreement("parsed_agreement", k, 20),
        p_value=0.001, p_holm=0.002, significant=significant, change="better", error=error,
    )  # fmt: skip


FORMATTED = measured({"A": 6, "The answer is A.": 4}, {"A": 10})
SPLIT = measured({"Yes": 6, "No": 4}, {"yes": 6, "no": 4})


def test_a_stable_case_or_one_sample_gets_no_diagnosis() -> None:
    assert diagnose(evidence(measured({"A": 10}, {"A": 10}), "choice")) is None
    assert diagnose(evidence(measured({"A": 1}, {"A": 1}), "choice")) is None


def test_rule_1_a_fingerprint_that_changed_mid_run_says_the_backend_changed() -> None:
    m = measured({"A": 6, "B": 4}, {"A": 6, "B": 4}, fingerprints=("fp_a", "fp_b"))
    assert diagnose(evidence(m, "choice")) == (
        "the provider changed backends mid-run (2 system_fingerprints: fp_a, fp_b): compare samples of one backend, "
        "or re-run"
    )


def test_rule_2_the_probe_says_answers_depend_on_concurrency() -> None:
    m = measured({"42": 6, "42.": 2, "forty-two": 1, "42!": 1})
    assert diagnose(evidence(m, probe=probe(True))) == (
        "answers depend on concurrency (server-side batching): 1 distinct completion alone, 4 under load "
        "(p = 0.004 after Holm): run at concurrency 1 or serve with batch-invariant kernels"
    )
    assert not (diagnose(evidence(m, probe=probe(False))) or "").startswith("answers depend")


def test_rule_3_one_key_with_several_completions_is_not_idempotent() -> None:
    m = measured({"Answer #1": 1, "Answer #2": 1, "Answer #3": 1})
    assert diagnose(evidence(m, idempotency="shared")) == (
        "not idempotent: 3 distinct completions for one key: the application's cache did not answer the repeated "
        "requests"
    )


def test_completions_cut_at_max_tokens_are_said_beside_the_kind() -> None:
    m = measured({"The answer is": 3, "The answer is 4": 7}, {"4": 7}, length_cut=3)
    assert diagnose(evidence(m, "number")) == (
        "the format varies: 3 of 10 completions do not parse; ask for the number alone; "
        "3 of 10 completions were cut at max_tokens: raise max_tokens"
    )


def test_rule_4_many_completions_one_parsed_answer_is_formatting_only() -> None:
    assert diagnose(evidence(FORMATTED, "choice")) == (
        "formatting only: 2 distinct completions, one parsed answer; the parser already absorbs it"
    )


def test_rule_5_one_meaning_many_wordings_is_wording_only() -> None:
    m = measured({"Paris.": 5, "It is Paris.": 5}, semantic_clusters=1, semantic_agreement=1.0)
    assert diagnose(evidence(m)) == "wording only: 2 wordings of one meaning; judged by meaning"


def test_rule_6_one_answer_where_some_do_not_parse_is_the_format() -> None:
    m = measured({"A": 7, "I am not sure": 3}, {"A": 7})
    assert diagnose(evidence(m, "choice")) == (
        "the format varies: 3 of 10 completions do not parse; ask for the bare label or use an enum of the labels"
    )


def test_rule_7_answers_that_differ_are_the_decision_itself() -> None:
    assert diagnose(evidence(SPLIT, "choice")) == (
        "the decision itself varies: 2 answers, the most frequent in 6 of 10: consider an enum of the labels, or a "
        "less ambiguous prompt"
    )


def test_rule_8_meanings_that_differ_are_the_meaning_itself() -> None:
    m = measured({"Yes.": 6, "No.": 4}, semantic_clusters=2, semantic_agreement=0.6)
    assert diagnose(evidence(m)) == (  # free text: no parser, schema or enum to offer
        "the meaning itself varies: 2 meanings, the largest holding 6 of 10: say in the prompt what the answer must "
        "state, or lower the temperature"
    )


@pytest.mark.parametrize(
    ("kind", "remedy"),
    [
        ("json", "ask for the format explicitly or use a strict schema"),
        ("choice", "ask for the bare label or use an enum of the labels"),
        ("number", "ask for the number alone"),
        ("regex", "ask for the form the regex reads"),
        ("text", "check the text parser's normalisation"),
    ],
)
def test_the_remedy_follows_the_kind_of_answer(kind: ParserKind, remedy: str) -> None:
    m = measured({"A": 7, "I am not sure": 3}, {"A": 7})
    line = diagnose(evidence(m, kind)) or ""
    assert line.endswith(remedy)
    assert ("enum" in line) == (kind == "choice") and ("schema" in line) == (kind == "json")


def test_a_pointer_that_finds_nothing_in_json_completions_is_the_pointer_not_the_format() -> None:
    m = replace(
        measured({'{"category": "a"}': 6, '{"category": "b"}': 4}, {}),
        notes=("10 of 10 answers did not parse (first: the JSON has nothing at /catgory (did you mean /category?))",),
    )
    assert diagnose(evidence(m, "json")) == (
        "the pointer misses: 10 of 10 completions hold JSON with nothing there; check answer.json"
    )


def test_rule_9_otherwise_the_text_varies() -> None:
    assert diagnose(evidence(measured({"a": 5, "b": 3, "c": 2}))) == (
        "the text varies: 3 distinct completions, the most frequent in 5 of 10: add a parser if only the answer matters"
    )


def test_the_best_variant_that_did_better_is_named() -> None:
    variants = (variant("seeded", 12, answers=2, significant=False), variant("strict", 20), variant("x", 4))
    line = diagnose(evidence(SPLIT, "choice", variants=variants))
    assert line == (
        "the decision itself varies: 2 answers, the most frequent in 6 of 10: consider an enum of the labels, or a "
        "less ambiguous prompt; "
        "measured with variant 'strict': 1 answer in 20, agreement 20/20 (p = 0.002 after Holm, significant)"
    )


def test_a_variant_no_better_or_in_error_is_not_named() -> None:
    variants = (variant("worse", 4, answers=2), variant("broken", 20, error="unreachable"))
    assert "variant" not in (diagnose(evidence(SPLIT, "choice", variants=variants)) or "")


def test_the_split_token_is_added_when_logprobs_tell_it() -> None:
    split = Diagnostics(split_position=3, split_token=" Yes", split_runner_up=" No", split_margin=0.04)
    m = replace(SPLIT, metrics=replace(SPLIT.metrics, divergence_token=1), diagnostics=split)
    assert (diagnose(evidence(m, "choice")) or "").endswith(
        "; the texts split at token 1: ' Yes' over ' No', logprob margin 0.04"
    )


def test_the_probe_turns_the_suggestion_to_concurrency() -> None:
    assert suggestion_from_remedies(evidence(SPLIT, "choice", probe=probe(True))) == (
        "The answers depend on concurrency: run the case at concurrency 1, or serve it with batch-invariant kernels "
        "(they cost throughput)."
    )
    assert suggestion_from_remedies(evidence(SPLIT, "choice", probe=probe(False))) is None
    assert suggestion_from_remedies(evidence(measured({"A": 10}, {"A": 10}), "choice", probe=probe(True))) is None


def test_a_variant_that_did_significantly_better_is_the_suggestion() -> None:
    variants = (variant("seeded", 12, answers=2, significant=False), variant("strict", 20))
    assert suggestion_from_remedies(evidence(SPLIT, "choice", variants=variants)) == (
        "Variant 'strict' (params) did significantly better: agreement 20/20, p = 0.002 after Holm. Adopt it if "
        "what it costs fits the feature."
    )
    hopeful = (variant("seeded", 12, answers=2, significant=False),)
    assert suggestion_from_remedies(evidence(SPLIT, "choice", variants=hopeful)) is None


@pytest.mark.parametrize("verdict", ["regressed", "warn"])
def test_another_concurrency_than_the_baseline_turns_the_advice_to_concurrency_1(verdict: VerdictName) -> None:
    differ = ("baseline drawn from host a, this run from host b", "baseline drawn at concurrency 1, this run at 8")
    assert concurrency_advice(differ, verdict, unique=1) == (
        "This run was drawn otherwise than the baseline (baseline drawn at concurrency 1, this run at 8): re-run at "
        "concurrency 1 to tell the server's batching from the model."
    )
    assert concurrency_advice(differ, "pass", unique=3) is not None  # it varies: the server may be why
    assert concurrency_advice(differ, "pass", unique=1) is None  # stable and unchanged: nothing to tell
    assert concurrency_advice(differ[:1], verdict, unique=3) is None  # another host alone says nothing of batching

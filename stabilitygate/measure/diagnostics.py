"""Why a case is unstable: near-ties in the modal completion's logprobs, and what to do about it.

Greedy decoding flips between runs where the top two tokens are nearly tied: a tiny change in the logits
(batch composition, kernel order) swaps them. The smallest margin logprob - runner_up_logprob along the
modal completion is where that is most likely, and when the completions part ways at (or right after)
that token, the near-tie is the likely cause.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stabilitygate.measure.tokens import token_spans
from stabilitygate.plain import round_float
from stabilitygate.results import Diagnostics
from stabilitygate.typed_json import JSON


@dataclass(frozen=True)
class NearTie:
    margin: float  # logprob - runner_up_logprob of the closest call
    position: int  # 1-based position among the provider's tokens
    token: str
    runner_up: str | None
    divergence_at_tie: bool | None  # None when it cannot be told (no divergence, tokens do not spell the text)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _tie_word_range(text: str, tokens: Sequence[str], position: int) -> tuple[int, int] | None:
    """1-based range of the `\\w+|[^\\w\\s]` tokens the provider token at `position` covers.

    For a provider token of only whitespace the range is empty and starts at the next word token.
    None when the provider tokens do not spell the text (byte-level pieces, say).
    """
    if "".join(tokens) != text:
        return None
    start = sum(len(t) for t in tokens[: position - 1])
    token = tokens[position - 1]
    begin, end = start + len(token) - len(token.lstrip()), start + len(token)
    spans = token_spans(text)
    covered = [i + 1 for i, (s, e) in enumerate(spans) if s < end and e > begin]
    if covered:
        return covered[0], covered[-1]
    following = next((i + 1 for i, (s, _e) in enumerate(spans) if s >= end), len(spans) + 1)
    return following, following - 1


def near_tie(logprobs: Sequence[Sequence[Any]], text: str, divergence: int | None) -> NearTie | None:
    """The smallest top-two margin along a completion's tokens (the first such token on equal margins)."""
    best: tuple[float, int] | None = None
    for i, entry in enumerate(logprobs):
        if len(entry) < 4:
            continue
        top, second = _number(entry[1]), _number(entry[3])
        if top is None or second is None:
            continue
        margin = top - second
        if best is None or margin < best[0]:
            best = (margin, i)
    if best is None:
        return None
    margin, i = best
    tokens = ["" if not entry or entry[0] is None else str(entry[0]) for entry in logprobs]
    at_tie: bool | None = None
    if divergence is not None:
        words = _tie_word_range(text, tokens, i + 1)
        if words is not None:
            first, last = words
            at_tie = first <= divergence <= last + 1
    runner_up = logprobs[i][2]
    return NearTie(
        margin=round_float(margin),
        position=i + 1,
        token=tokens[i],
        runner_up=None if runner_up is None else str(runner_up),
        divergence_at_tie=at_tie,
    )


def near_tie_diagnostics(tie: NearTie | None) -> Diagnostics:
    """The report's diagnostics of the closest call (none without one)."""
    if tie is None:
        return Diagnostics()
    return Diagnostics(
        min_margin=tie.margin,
        min_margin_position=tie.position,
        min_margin_token=tie.token,
        min_margin_runner_up=tie.runner_up,
        divergence_at_min_margin=tie.divergence_at_tie,
    )


def suggestion(
    *,
    samples_ok: int,
    unique_completions: int,
    parser: str | None,
    answers: Sequence[tuple[JSON, int]],
    parse_failures: int,
    first_parse_error: str | None,
    tie: NearTie | None,
) -> str | None:
    """One actionable sentence for the report, or None when there is nothing to suggest.

    `answers` are (answer, count) with the most frequent first.
    """
    if parser is None or samples_ok < 2:
        return None
    if len(answers) > 1:
        top = answers[0][1]
        text = (
            f"The answer itself varies: {len(answers)} different answers, the most frequent in {top} of "
            f"{samples_ok} samples. "
        )
        if tie is not None:
            text += (
                f"The modal completion's closest call is token {tie.position} ({tie.token!r} over "
                f"{tie.runner_up!r}, logprob margin {tie.margin:g}); near-ties like this are where decoding "
                "flips between runs. "
            )
        return text + "Make the prompt less ambiguous, pin a model snapshot, or take a majority vote over samples."
    if parse_failures:
        why = f" ({first_parse_error})" if first_parse_error else ""
        return (
            f"{parse_failures} of {samples_ok} answers did not parse{why}: ask for the format explicitly, "
            "or use structured output (a JSON schema) so every completion can be read."
        )
    if unique_completions > 1 and answers:
        constraint = {
            "choice": "an enum of the labels in structured output, or ask for the bare label",
            "json": "structured output with a JSON schema, so the document is written the same way each time",
        }.get(parser, "structured output (a JSON schema, or an enum of the allowed answers)")
        return (
            f"All {samples_ok} answers agree but the text varies ({unique_completions} distinct completions): "
            f"the variation is form only. Constrain the output with {constraint}."
        )
    return None

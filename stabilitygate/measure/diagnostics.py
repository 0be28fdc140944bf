"""Why a case is unstable: near-ties in the modal completion's logprobs, and what to do about it.

Greedy decoding flips between runs where the top two tokens are nearly tied: a tiny change in the logits
(batch composition, kernel order) swaps them. The smallest margin logprob - runner_up_logprob along the
modal completion is where that is most likely, and when the completions part ways at (or right after)
that token, the near-tie is the likely cause.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from stabilitygate.measure.parsers import NOTHING_AT
from stabilitygate.measure.tokens import token_spans
from stabilitygate.plain import round_float
from stabilitygate.results import Diagnostics
from stabilitygate.samples import TokenLogprob
from stabilitygate.typed_json import JSON


@dataclass(frozen=True)
class NearTie:
    margin: float  # logprob - runner_up_logprob of the closest call
    position: int  # 1-based position among the provider's tokens
    token: str
    runner_up: str | None
    divergence_at_tie: bool | None  # None when it cannot be told (no divergence, tokens do not spell the text)


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


def near_tie(logprobs: Sequence[TokenLogprob], text: str, divergence: int | None) -> NearTie | None:
    """The smallest top-two margin along a completion's tokens (the first such token on equal margins)."""
    best: tuple[float, int] | None = None
    for i, entry in enumerate(logprobs):
        margin = _margin(entry)
        if margin is not None and (best is None or margin < best[0]):
            best = (margin, i)
    if best is None:
        return None
    margin, i = best
    tokens = [entry.token for entry in logprobs]
    at_tie: bool | None = None
    if divergence is not None:
        words = _tie_word_range(text, tokens, i + 1)
        if words is not None:
            first, last = words
            at_tie = first <= divergence <= last + 1
    return NearTie(round_float(margin), i + 1, tokens[i], logprobs[i].runner_up, divergence_at_tie=at_tie)


def _margin(entry: TokenLogprob) -> float | None:
    """logprob - runner_up_logprob; None without a runner-up, or where a logprob was not finite."""
    if entry.logprob is None or entry.runner_up_logprob is None:
        return None
    return entry.logprob - entry.runner_up_logprob


def split_tie(logprobs: Sequence[TokenLogprob], text: str, divergence: int | None) -> NearTie | None:
    """The provider's token where the completions part ways (the `divergence`-th word token of `text`)
    and the runner-up it beat there; None when it cannot be told: no divergence, a text that ends
    before it, provider tokens that do not spell the text, or no runner-up at that token."""
    tokens = [entry.token for entry in logprobs]
    spans = token_spans(text)
    if divergence is None or divergence > len(spans) or "".join(tokens) != text:
        return None
    start, offset = spans[divergence - 1][0], 0
    for i, entry in enumerate(logprobs):
        offset += len(entry.token)
        if offset > start:
            margin = _margin(entry)
            return None if margin is None else NearTie(round_float(margin), i + 1, entry.token, entry.runner_up, True)
    return None


def near_tie_diagnostics(tie: NearTie | None, split: NearTie | None = None) -> Diagnostics:
    """The report's diagnostics of the closest call and of the token where the texts split (none without)."""
    found = Diagnostics()
    if tie is not None:
        found = Diagnostics(
            min_margin=tie.margin,
            min_margin_position=tie.position,
            min_margin_token=tie.token,
            min_margin_runner_up=tie.runner_up,
            divergence_at_min_margin=tie.divergence_at_tie,
        )
    if split is None:
        return found
    return replace(
        found,
        split_position=split.position,
        split_token=split.token,
        split_runner_up=split.runner_up,
        split_margin=split.margin,
    )


def tie_sentence(tie: NearTie | None, split: NearTie | None, divergence: int | None) -> str | None:
    """Where decoding flipped, for a person: the token where the texts split and the runner-up it beat,
    else the closest call and whether the texts split there (docs/design.md §16, "Diagnosis")."""
    if split is not None:
        text = f"The texts split at token {divergence}: {_call(split)}"
        if tie is not None and tie.position != split.position:
            text += f"; the closest call elsewhere is token {tie.position} ({_call(tie)})"
        return text + "."
    if tie is None:
        return None
    head = f"The modal completion's closest call is token {tie.position} ({_call(tie)})"
    if divergence is None:
        return head + "."
    if tie.divergence_at_tie is None:
        return f"{head}; whether the texts split there (token {divergence}) cannot be told from the provider's tokens."
    if tie.divergence_at_tie:
        return f"{head}, where the texts split."
    return f"{head}, not where the texts split (token {divergence})."


def _call(tie: NearTie) -> str:
    return f"{tie.token!r} over {tie.runner_up!r}, logprob margin {tie.margin:g}"


def suggestion(
    *,
    samples_ok: int,
    unique_completions: int,
    parser: str | None,
    answers: Sequence[tuple[JSON, int]],
    parse_failures: int,
    first_parse_error: str | None,
    tie: NearTie | None,
    split: NearTie | None = None,
    divergence: int | None = None,
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
        where = tie_sentence(tie, split, divergence)
        if where is not None:
            text += where.removesuffix(".") + ": near-ties like this are where decoding flips between runs. "
        return text + "Make the prompt less ambiguous, pin a model snapshot, or take a majority vote over samples."
    if parse_failures:
        why = f" ({first_parse_error})" if first_parse_error else ""
        if first_parse_error is not None and first_parse_error.startswith(NOTHING_AT):  # JSON, read at a wrong place
            return f"{parse_failures} of {samples_ok} answers did not parse{why}: check the pointer of answer.json."
        return f"{parse_failures} of {samples_ok} answers did not parse{why}: {PARSE_ADVICE[parser]}."
    constraint = FORM_ADVICE.get(parser)
    if unique_completions > 1 and answers and constraint is not None:
        return (
            f"All {samples_ok} answers agree but the text varies ({unique_completions} distinct completions): "
            f"the variation is form only. Constrain the output with {constraint}."
        )
    return None


#: What makes every completion readable, by parser: the kind of answer decides the remedy (docs/design.md §16.2).
PARSE_ADVICE = {
    "json": "ask for the format explicitly, or use structured output (a JSON schema) so every completion can be read",
    "choice": "ask for the bare label, or use structured output with an enum of the labels",
    "number": "ask for the number alone, or for a final line such as 'Answer: 42'",
    "regex": "ask for the format the regex reads explicitly, or widen the regex",
    "text": "check the text parser's normalisation",
}
#: How to make agreeing answers come in one form, by parser; none for `text`, whose normalisation absorbs it.
FORM_ADVICE = {
    "choice": "an enum of the labels in structured output, or ask for the bare label",
    "json": "structured output with a JSON schema, so the document is written the same way each time",
    "number": "a request for the number alone",
    "regex": "a request for the matched form alone",
}

"""Semantic clusters by the entailment judge: bidirectional entailment (docs/design.md §5).

The clustering is written once, as a generator that yields the ordered pairs (premise, hypothesis)
it needs judged and is sent whether the premise entails the hypothesis. The pipeline drives it with
the entailment judge (`pipeline/meanings.py`, asking through `pipeline/entailment_session.py`);
`measure_case` drives it with the judgments already made, so `score` rebuilds a run's clusters
without asking the judge again.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from stabilitygate.measure.entailment import Judgment, PairKey

Pair = tuple[str, str]  # (premise, hypothesis)
Steps = Generator[Pair, bool, list[list[str]]]
T = TypeVar("T")


class MissingJudgment(Exception):
    """A pair the clustering needs was never judged (the judge failed on it, or it was not recorded)."""

    def __init__(self, pair: Pair, why: str | None = None) -> None:
        super().__init__(why or "no judgment of a pair the clustering needs")
        self.pair = pair


def same_meaning_steps(a: str, b: str) -> Generator[Pair, bool, bool]:
    """One meaning when each entails the other; the second question is skipped when the first says no."""
    if a == b:
        return True
    if not (yield (a, b)):
        return False
    return bool((yield (b, a)))


def cluster_steps(counts: Mapping[str, int]) -> Steps:
    """Greedy clusters of the distinct texts, taken as the cosine clustering takes them (count desc,
    then first appearance): each joins the first cluster whose first member means the same."""
    texts = list(counts)
    order = sorted(range(len(texts)), key=lambda i: (-counts[texts[i]], i))
    clusters: list[list[str]] = []
    for i in order:
        text = texts[i]
        for cluster in clusters:
            if (yield from same_meaning_steps(cluster[0], text)):
                cluster.append(text)
                break
        else:
            clusters.append([text])
    return clusters


@dataclass
class JudgmentLookup:
    """Answers the clustering's questions from judgments already made, and counts what it used."""

    judge: str  # the case's judge key
    judgments: Mapping[PairKey, Judgment]
    failures: Mapping[PairKey, str] = field(default_factory=dict)  # pairs the judge failed on, and why
    used: dict[PairKey, Judgment] = field(default_factory=dict)
    # Asks the judge a pair nobody foresaw (None: it could not answer, the reason then in `failures`).
    ask: Callable[[Pair], Judgment | None] | None = None

    def entails(self, pair: Pair) -> bool:
        key = PairKey.of(self.judge, *pair)
        judgment = self.judgments.get(key)
        if judgment is None and key not in self.failures and self.ask is not None:
            judgment = self.ask(pair)
        if judgment is None:
            raise MissingJudgment(pair, self.failures.get(key))
        self.used[key] = judgment
        return judgment.entails


def drive(steps: Generator[Pair, bool, T], entails: Callable[[Pair], bool]) -> T:
    """Run `steps` to the end, answering each pair with `entails`; its return value."""
    try:
        pair = next(steps)
        while True:
            pair = steps.send(entails(pair))
    except StopIteration as stop:
        value: T = stop.value
        return value


def cluster_by_judgments(counts: Mapping[str, int], lookup: JudgmentLookup) -> list[list[str]]:
    """The clusters (lists of distinct texts, first member first); MissingJudgment when one is lacking."""
    return drive(cluster_steps(counts), lookup.entails)


def sizes_of(clusters: Sequence[Sequence[str]], counts: Mapping[str, int]) -> list[int]:
    return [sum(counts[t] for t in cluster) for cluster in clusters]

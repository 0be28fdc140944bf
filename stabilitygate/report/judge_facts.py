"""The entailment judge in the report's run facts (`run.judge`), present only when a case has one.

`calls` and the tokens are the judgments the cases' numbers rest on, as recorded when each was made:
the report must not depend on whether they came from the judge, the cache or the judgments file.
How many questions this run actually sent, and how many were answered by the record or the cache,
is for the job summary and the log only (`compare=False`, never in `to_json()`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

JUDGE_METRICS = ("judge_calls", "judge_prompt_tokens", "judge_completion_tokens")


@dataclass(frozen=True)
class JudgeFacts:
    cases: int  # cases judged
    calls: int
    prompt_tokens: int
    completion_tokens: int
    unreadable_replies: int
    failed_cases: int  # cases whose judge failed after its retries (their verdict is error)
    requests: int | None = field(default=None, compare=False)  # sent this run, retries included
    from_record: int | None = field(default=None, compare=False)
    from_cache: int | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "unreadable_replies": self.unreadable_replies,
            "failed_cases": self.failed_cases,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> JudgeFacts | None:
        if data is None:
            return None
        return cls(*(int(data.get(key) or 0) for key in (
            "cases", "calls", "prompt_tokens", "completion_tokens", "unreadable_replies", "failed_cases")))  # fmt: skip

    @classmethod
    def of_cases(
        cls,
        metrics: Sequence[Mapping[str, Any]],
        *,
        unreadable: int,
        failed: int,
        requests: int | None = None,
        from_record: int | None = None,
        from_cache: int | None = None,
    ) -> JudgeFacts:
        """The totals over the judged cases' metrics."""
        judged = [m for m in metrics if m.get("judge_calls") is not None]
        calls, prompt, completion = (sum(int(m.get(key) or 0) for m in judged) for key in JUDGE_METRICS)
        return cls(len(judged), calls, prompt, completion, unreadable, failed, requests, from_record, from_cache)

    @property
    def summary(self) -> str:
        """One sentence for the comment's footer."""
        tokens = f"{self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion tokens"
        sentence = f"Entailment judge: {_count(self.calls, 'judgment')} over {_count(self.cases, 'case')} ({tokens})"
        if self.unreadable_replies:
            sentence += (
                f"; {_count(self.unreadable_replies, 'reply', 'replies')} named no label "
                "and counted as different meanings"
            )
        if self.failed_cases:
            sentence += f"; it failed on {_count(self.failed_cases, 'case')}, which could not be measured"
        return sentence + "."


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"

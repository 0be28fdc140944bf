"""The entailment judge in the report's run facts (`run.entailment`), present only when a case has one.

`calls` and the tokens are the judgments the cases' numbers rest on, as recorded when each was made:
the report must not depend on whether they came from the judge, the cache or the judgments file.
How many questions this run actually sent, and how many were answered by the record or the cache,
is for the job summary and the log only (never written).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic.json_schema import SkipJsonSchema

from stabilitygate.metrics import Metrics
from stabilitygate.typed_json import Count, not_written


@dataclass(frozen=True)
class EntailmentFacts:
    cases: Count = 0  # cases judged
    calls: Count = 0
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    unreadable_replies: Count = 0
    failed_cases: Count = 0  # cases whose judge failed after its retries (their verdict is error)
    requests: SkipJsonSchema[int | None] = not_written()  # sent this run, retries included
    from_record: SkipJsonSchema[int | None] = not_written()
    from_cache: SkipJsonSchema[int | None] = not_written()

    @classmethod
    def of_cases(
        cls,
        metrics: Sequence[Metrics],
        *,
        unreadable: int,
        failed: int,
        requests: int | None = None,
        from_record: int | None = None,
        from_cache: int | None = None,
    ) -> EntailmentFacts:
        """The totals over the judged cases' metrics."""
        judged = [m for m in metrics if m.entailment_calls is not None]
        calls = sum(m.entailment_calls or 0 for m in judged)
        prompt = sum(m.entailment_prompt_tokens or 0 for m in judged)
        completion = sum(m.entailment_completion_tokens or 0 for m in judged)
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

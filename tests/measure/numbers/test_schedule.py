"""A schedule worked out from a stated duration: the times of day after it are passed over."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.scan import scan
from stabilitygate.measure.numbers.schedule import schedule_spans


def passed(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in schedule_spans(text, scan(text).tokens)]


@pytest.mark.parametrize(
    ("text", "schedule"),
    [
        (
            "Baking takes 45 minutes, so if you start at 2:30 it is ready at 3:15.",
            "so if you start at 2:30 it is ready at 3:15.",
        ),
        ("It lasts 7 hours. Leaving at 8 am, you arrive at 3 pm.", "Leaving at 8 am, you arrive at 3 pm."),
        (
            "The meeting is 75 minutes long. It started at 9, so it ends at 10:15.",
            "It started at 9, so it ends at 10:15.",
        ),
        ("Priya runs for 4 hours and finishes at 1 pm.", "hours and finishes at 1 pm."),  # from the duration on
        (
            "Each lap takes 3 minutes; starting at noon, Leo is done at 12:24.",
            "starting at noon, Leo is done at 12:24.",
        ),
    ],
)
def test_the_times_of_day_after_a_duration_are_a_schedule(text: str, schedule: str) -> None:
    assert passed(text) == [schedule]


@pytest.mark.parametrize(
    "text",
    [
        "The train leaves at 9:10 and the ride takes 50 minutes, so it arrives at 10:00.",  # the clock comes first
        "It takes 45 minutes.",  # no time of day
        "At 3 pm the shop had 40 customers.",  # no duration
        "He was paid at 9 dollars an hour for 5 hours.",  # "at 9 dollars" is no time of day
    ],
)
def test_no_schedule(text: str) -> None:
    assert passed(text) == []

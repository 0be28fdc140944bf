"""The body template renders under limits of time, loop work and size, whatever the template does."""

from __future__ import annotations

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.providers.body_template import MAX_CHARS, BodyTemplate, TemplateProblem, limit_for

VARIABLES = {"prompt": "Where was Feynman born?", "messages": [{"role": "user", "content": "Where?"}]}


class SteppingClock:
    """A clock that moves `step` seconds each time it is read: a render that reads it often grows old."""

    def __init__(self, step: float) -> None:
        self.now, self.step, self.reads = 0.0, step, 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now


def problem(source: str, clock: SteppingClock | None = None) -> str:
    with pytest.raises(TemplateProblem) as caught:
        BodyTemplate(source).render(VARIABLES, limit_s=1.0, clock=clock or SteppingClock(0.0))
    return str(caught.value)


def test_a_plain_body_renders_to_its_json_document() -> None:
    body = '{"q": {{ prompt|tojson }}, "roles": [{% for m in messages %}{{ m.role|tojson }}{% endfor %}]}'
    assert BodyTemplate(body).render(VARIABLES, limit_s=1.0) == {"q": "Where was Feynman born?", "roles": ["user"]}


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (
            "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}{}",
            "more than 100,000 loop",
        ),
        (
            "{% for c in prompt * 1000 %}{% for d in prompt * 1000 %}{% endfor %}{% endfor %}{}",
            "more than 100,000 loop",
        ),
        ("{% for m in messages recursive %}{{ loop([m, m]) }}{% endfor %}{}", "maximum recursion depth exceeded"),
        # 60,000 steps and as many calls of range: the calls count too
        ("{% for n in range(60000) %}{{ range(1)|list }}{% endfor %}{}", "more than 100,000 loop steps and calls"),
        ("{{ prompt * 10000000 }}", f"builds a value longer than {MAX_CHARS:,} with *"),
        ("{{ 2 ** 100000000 }}", "raises a number to a power above 4096"),
        ('{"q": {{ prompt }}}', "did not render valid JSON (Expecting value at line 1 column 7)"),
        ('{"q": {{ nothing|tojson }}}', "the template failed to render: 'nothing' is undefined"),
        ('{"q": {{ "".__class__.__mro__ }}}', "the template failed to render: access to attribute '__class__'"),
    ],
)
def test_what_a_template_cannot_do_is_one_problem(source: str, said: str) -> None:
    assert said in problem(source)


def test_a_render_past_its_time_stops_whatever_the_loop_does() -> None:
    clock = SteppingClock(0.01)  # 100 reads make a second
    slow = "{% for a in range(50000) %}{% endfor %}{}"
    said = problem(slow, clock)
    assert said == "provider.body: the template did not finish rendering within 1 s (nested loops?)"
    assert clock.reads < 200  # it stopped at the limit, not at the end of the loop


def test_the_output_is_bounded_as_it_streams() -> None:
    big = "{% for a in range(60000) %}" + "x" * 400 + "{% endfor %}"
    assert f"rendered more than {MAX_CHARS:,} characters" in problem(big)


def test_a_syntax_error_is_bad_input_and_the_limit_sits_inside_the_request_timeout() -> None:
    with pytest.raises(BadInput, match=r"provider\.body: template syntax error at line 1"):
        BodyTemplate('{"q": {{ prompt }')
    assert limit_for(60) == 5.0 and limit_for(2) == 1.0

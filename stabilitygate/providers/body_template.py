"""The `http` provider's body template: sandboxed jinja2 rendered under limits of time, loop work and size.

A template is code from the suite, and it runs inside a request: a sampler's timeout cannot stop a
render that never returns to the event loop, so the render bounds itself (docs/design.md §11). Every
`{% for %}` iterates through a budget that counts the steps and reads the clock, as does every call
the template makes (`loop(...)` of a recursive loop included); `*` and `**` refuse results past the
size limit; the output is counted as it streams. A render past any limit stops with `TemplateProblem`,
whose message says which; so does a render that fails or does not give JSON. The rendered text is
never shown: it may hold the key.
"""

from __future__ import annotations

import json
import operator
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import jinja2
from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment

from stabilitygate.errors import BadInput

#: The longest a render may take; a request's own timeout may be shorter (`limit_for`).
RENDER_LIMIT_S = 5.0
#: Loop iterations and calls of one render, together: a body iterating the messages takes a handful.
MAX_STEPS = 100_000
#: Characters of one rendered body (a suite is at most 8 MiB, so any real body is far below).
MAX_CHARS = 16 * 1024 * 1024
_BUDGET = "stabilitygate_render_budget"  # the variable through which each render's loops iterate
_POWER_LIMIT = 4096  # the largest integer exponent `**` takes


class TemplateProblem(Exception):
    """A body template that could not give a JSON document; the message is for the user."""


class _OverLimit(jinja2.TemplateRuntimeError):
    """Raised inside a render that went past a limit (caught and worded by `BodyTemplate.render`)."""


def limit_for(timeout_s: float) -> float:
    """How long a render may take under a request timeout: well inside it, at most RENDER_LIMIT_S."""
    return min(RENDER_LIMIT_S, timeout_s / 2)


@dataclass
class _Budget:
    """What one render may still spend."""

    deadline: float
    clock: Callable[[], float]
    limit_s: float
    steps: int = MAX_STEPS

    def step(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise _OverLimit(f"the template did more than {MAX_STEPS:,} loop steps and calls (nested loops?)")
        self.check_clock()

    def check_clock(self) -> None:
        if self.clock() > self.deadline:
            raise _OverLimit(f"the template did not finish rendering within {self.limit_s:g} s (nested loops?)")

    def loop(self, iterable: Iterable[object]) -> Iterator[object]:
        for item in iterable:
            self.step()
            yield item


class _BoundedEnvironment(SandboxedEnvironment):
    """The sandbox, with every call counted and `*` and `**` kept to sizes a body can have."""

    intercepted_binops = frozenset({"*", "**"})

    def call(__self, __context: jinja2.runtime.Context, __obj: object, *args: object, **kwargs: object) -> object:
        budget = __context.get(_BUDGET)
        if isinstance(budget, _Budget):
            budget.step()
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context: jinja2.runtime.Context, op: str, left: object, right: object) -> object:
        if op == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(times, int) and len(seq) * times > MAX_CHARS:
                    raise _OverLimit(f"the template builds a value longer than {MAX_CHARS:,} with *")
            return operator.mul(left, right)
        if isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > _POWER_LIMIT:
            raise _OverLimit(f"the template raises a number to a power above {_POWER_LIMIT}")
        return operator.pow(left, right)


def _not_json(value: object) -> object:
    if isinstance(value, jinja2.Undefined):
        str(value)  # StrictUndefined raises here, naming the variable
    raise jinja2.TemplateRuntimeError(f"tojson cannot serialise a {type(value).__name__}")


def _tojson(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=_not_json)


class BodyTemplate:
    """A compiled body template; `render` gives the JSON document it makes for one request."""

    def __init__(self, source: str) -> None:
        environment = _BoundedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)
        environment.filters["tojson"] = _tojson
        try:
            tree = environment.parse(source)
        except jinja2.TemplateSyntaxError as exc:
            raise BadInput(f"provider.body: template syntax error at line {exc.lineno}: {exc.message}") from exc
        for loop in tree.find_all(nodes.For):  # every loop iterates through the render's budget
            budget_loop = nodes.Getattr(nodes.Name(_BUDGET, "load"), "loop", "load", lineno=loop.lineno)
            loop.iter = nodes.Call(budget_loop, [loop.iter], [], None, None, lineno=loop.lineno)
        self._template = environment.from_string(tree)

    def render(
        self, variables: Mapping[str, object], *, limit_s: float, clock: Callable[[], float] = time.monotonic
    ) -> object:
        """The JSON document the template renders for `variables`; TemplateProblem saying why not."""
        budget = _Budget(clock() + limit_s, clock, limit_s)
        try:
            text = _collect(self._template.generate(**variables, **{_BUDGET: budget}), budget)
        except _OverLimit as exc:
            raise TemplateProblem(f"provider.body: {exc.message}") from exc
        except (jinja2.TemplateError, RecursionError, ValueError, TypeError, ArithmeticError) as exc:
            raise TemplateProblem(f"provider.body: the template failed to render: {exc}") from exc
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            # Never show the rendered text: it may hold the key. The position points at the problem.
            raise TemplateProblem(
                f"provider.body: the template did not render valid JSON ({exc.msg} at line {exc.lineno}"
                f" column {exc.colno}); use the tojson filter for strings, e.g. {{{{ prompt|tojson }}}}"
            ) from exc


def _collect(chunks: Iterator[str], budget: _Budget) -> str:
    """The rendered text, counted and timed as it streams."""
    parts, size = [], 0
    for chunk in chunks:
        size += len(chunk)
        if size > MAX_CHARS:
            raise _OverLimit(f"the template rendered more than {MAX_CHARS:,} characters")
        budget.check_clock()
        parts.append(chunk)
    return "".join(parts)

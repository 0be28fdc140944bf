"""Benchmark of the number reader: agreement with a careful human reading, next to lm-evaluation-harness.

    .venv/bin/python bench/bench_numbers.py [--corpus bench/number_corpus.jsonl] [--misses]

The corpora are ours: bench/number_corpus.jsonl (model-style answers; the classes after
"adversarial" were written for issue 26 before the reader's rules for them) and
bench/number_corpus_heldout.jsonl (`--corpus`; written after the rules, before the reader ran on
them). One JSON object a line: the answer's `class`, its `text` and the `human` reading (a number,
"p/q" for a fraction with no finite decimal, null when the text commits to no single number).
Each reader agrees when it reads the human's value, or reads nothing where the human sees no
committed answer. Readers:

- `number: true` (stabilitygate.measure.numbers.read_number);
- lm-evaluation-harness's GSM8K "flexible-extract": the regex `(-?[$0-9.,]{2,})|(-?[0-9]+)`, the last
  match (group_select -1), then exact_match as the task scores it (ignore_case, and the
  regexes_to_ignore `,`, `\\$`, `(?s).*#### ` and `\\.$` applied to prediction and target, the target
  being the human value as GSM8K writes answers: digits, a decimal, or "p/q"); "[invalid]" when
  nothing matches;
- the same extraction compared as numbers (the extracted text, separators dropped, equal in value),
  which forgives formatting ("19.00" for 19) and shows what the extraction itself gets right;
- "strict-match": `#### (\\-?[0-9\\.\\,]+)`, the first match, scored like flexible-extract.

Prints one row per class and the total; per reader its disagreements, split into abstentions (it
read nothing where the human reads a number) and wrong numbers (it read a number the human does
not: the kind a stability gate cannot afford); the reader's CPU time per answer; and with
--misses every text a reader got wrong.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stabilitygate.measure.canonical import NoAnswer, canonical_fraction
from stabilitygate.measure.numbers import read_number

HERE = Path(__file__).resolve().parent
FLEXIBLE = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")
IGNORED = [re.compile(p) for p in (",", r"\$", r"(?s).*#### ", r"\.$")]
INVALID = "[invalid]"


@dataclass(frozen=True)
class Reading:
    """One reader on one answer: whether it agrees with the human reading, and whether it read nothing."""

    agrees: bool
    abstained: bool


@dataclass(frozen=True)
class Item:
    cls: str
    text: str
    human: Fraction | None


def load(path: Path) -> list[Item]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            human = row["human"]
            items.append(Item(row["class"], row["text"], None if human is None else Fraction(str(human))))
    return items


# -- lm-evaluation-harness, from gsm8k.yaml (filters regex + take_first; metric exact_match) ---------------


def harness_extract(pattern: re.Pattern[str], text: str, group_select: int) -> str:
    """RegexFilter.apply: findall, the selected match, its first non-empty group, stripped."""
    found = pattern.findall(text)
    if not found:
        return INVALID
    match = found[group_select]
    if isinstance(match, tuple):
        match = next(m for m in match if m)
    return str(match).strip()


def exact_match_form(text: str) -> str:
    for pattern in IGNORED:
        text = pattern.sub("", text)
    return text.lower()


def gsm8k_target(human: Fraction) -> str:
    """The human value as GSM8K writes an answer: "19", "0.75", or "2/3" when no decimal ends."""
    value = canonical_fraction(human)
    return value if isinstance(value, str) else format(Decimal(str(value)), "f")


def harness_reading(extracted: str, human: Fraction | None) -> Reading:
    if extracted == INVALID:
        return Reading(human is None, abstained=True)
    if human is None:
        return Reading(False, abstained=False)
    return Reading(exact_match_form(extracted) == exact_match_form(gsm8k_target(human)), abstained=False)


def harness_numeric_reading(extracted: str, human: Fraction | None) -> Reading:
    if extracted == INVALID or human is None:
        return harness_reading(extracted, human)
    try:
        agrees = Fraction(Decimal(re.sub(r"[$,]", "", extracted).rstrip("."))) == human
    except (InvalidOperation, ValueError):
        agrees = False
    return Reading(agrees, abstained=False)


# -- ours ------------------------------------------------------------------------------------------------


def ours_reading(text: str, human: Fraction | None) -> Reading:
    try:
        value = read_number(text)
    except NoAnswer:
        return Reading(human is None, abstained=True)
    return Reading(human is not None and value == canonical_fraction(human), abstained=False)


READERS: dict[str, Callable[[Item], Reading]] = {
    "number: true": lambda item: ours_reading(item.text, item.human),
    "flexible-extract": lambda item: harness_reading(harness_extract(FLEXIBLE, item.text, -1), item.human),
    "flexible, as numbers": lambda item: harness_numeric_reading(harness_extract(FLEXIBLE, item.text, -1), item.human),
    "strict-match": lambda item: harness_reading(harness_extract(STRICT, item.text, 0), item.human),
}


def table(items: list[Item]) -> tuple[list[list[str]], dict[str, list[Item]], dict[str, list[Reading]]]:
    classes = list(dict.fromkeys(item.cls for item in items))
    readings = {name: [reader(item) for item in items] for name, reader in READERS.items()}
    misses = {name: [item for item, r in zip(items, rs, strict=True) if not r.agrees] for name, rs in readings.items()}
    rows = []
    for cls in [*classes, None]:
        group = [i for i, item in enumerate(items) if cls is None or item.cls == cls]
        cells = [cls or "all", str(len(group))]
        for name in READERS:
            agreed = sum(readings[name][i].agrees for i in group)
            cells.append(f"{agreed}/{len(group)} ({100 * agreed / len(group):.0f}%)")
        rows.append(cells)
    return rows, misses, readings


def print_table(rows: list[list[str]], header: list[str]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(" --- " for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def disagreement_rows(readings: dict[str, list[Reading]]) -> list[list[str]]:
    """Per reader: its disagreements, how many read nothing (abstained) and how many read a wrong number."""
    rows = []
    for name, rs in readings.items():
        missed = [r for r in rs if not r.agrees]
        abstained = sum(r.abstained for r in missed)
        share = f"{100 * abstained / len(missed):.0f}%" if missed else "-"
        rows.append([name, str(len(missed)), f"{abstained} ({share})", str(len(missed) - abstained)])
    return rows


def time_per_answer(items: list[Item], rounds: int = 5) -> float:
    """CPU seconds per answer, the best of `rounds` passes (a shared machine moves wall time too much)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for item in items:
            with contextlib.suppress(NoAnswer):
                read_number(item.text)
        best = min(best, time.process_time() - start)
    return best / len(items)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=HERE / "number_corpus.jsonl")
    parser.add_argument("--misses", action="store_true", help="list every text a reader got wrong")
    args = parser.parse_args(argv)
    items = load(args.corpus)
    classes = sorted({item.cls for item in items})
    print(f"corpus: {len(items)} answers in {len(classes)} classes ({', '.join(classes)})\n")
    rows, misses, readings = table(items)
    print_table(rows, ["class", "n", *READERS])
    print()
    print_table(disagreement_rows(readings), ["reader", "disagreements", "abstentions", "wrong numbers"])
    print(f"\nnumber: true reads an answer in {1e6 * time_per_answer(items):.0f} µs of CPU on average")
    if args.misses:
        for name, missed in misses.items():
            print(f"\n{name} misses ({len(missed)}):")
            for item in missed:
                print(f"  [{item.cls}] human={_show(item.human)}: {item.text!r}")
    return 0


def _show(value: Fraction | None) -> Any:
    return None if value is None else canonical_fraction(value)


if __name__ == "__main__":
    raise SystemExit(main())

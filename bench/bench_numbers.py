"""Benchmark of the number reader: agreement with a careful human reading, next to lm-evaluation-harness.

    .venv/bin/python bench/bench_numbers.py [--corpus FILE]... [--classes] [--misses] [--shapes [--shape-sizes 64,1024]]

The corpora are ours, one JSON object a line: the answer's `class`, its `text` and the `human`
reading (a number, "p/q" for a fraction with no finite decimal, null when the text commits to no
single number). Without `--corpus` every bench/number_corpus*.jsonl is read, side by side:
number_corpus.jsonl (model-style answers; the classes after "adversarial" were written for issue
26 before the reader's rules for them), number_corpus_heldout.jsonl (issue 26's held-out set,
written after the rules, before the reader ran on them), number_corpus_dev2.jsonl (issue 38's
kinds, written before the rules for them and used to develop them) and number_corpus_check2.jsonl
(issue 38's kinds, written with the development set and read only once the rules were done).
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

Prints one row per corpus for `number: true`: agreement, confident wrong numbers (a number read
where the human reads another or none: the kind a stability gate cannot afford) and abstentions
(nothing read where the human reads a number), beside flexible-extract's agreement; the reader's
CPU time per answer. `--classes`: per corpus, one row per class and reader, and each reader's
disagreements split the same way. `--misses`: every text `number: true` got wrong (every reader's
with `--classes`). `--shapes`: issue 37's cost per MiB of hostile texts (`2^2^2...` and the others
found by fuzzing), CPU seconds at 64 KiB and 1 MiB (`--shape-sizes` in KiB).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
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
    read: str = ""  # what the reader read, as --misses shows it (ours only)


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
    except NoAnswer as refused:
        return Reading(human is None, abstained=True, read=f"none ({refused})")
    return Reading(human is not None and value == canonical_fraction(human), abstained=False, read=repr(value))


READERS: dict[str, Callable[[Item], Reading]] = {
    "number: true": lambda item: ours_reading(item.text, item.human),
    "flexible-extract": lambda item: harness_reading(harness_extract(FLEXIBLE, item.text, -1), item.human),
    "flexible, as numbers": lambda item: harness_numeric_reading(harness_extract(FLEXIBLE, item.text, -1), item.human),
    "strict-match": lambda item: harness_reading(harness_extract(STRICT, item.text, 0), item.human),
}


def table(items: list[Item]) -> tuple[list[list[str]], dict[str, list[Reading]]]:
    classes = list(dict.fromkeys(item.cls for item in items))
    readings = {name: [reader(item) for item in items] for name, reader in READERS.items()}
    rows = []
    for cls in [*classes, None]:
        group = [i for i, item in enumerate(items) if cls is None or item.cls == cls]
        cells = [cls or "all", str(len(group))]
        for name in READERS:
            agreed = sum(readings[name][i].agrees for i in group)
            cells.append(f"{agreed}/{len(group)} ({100 * agreed / len(group):.0f}%)")
        rows.append(cells)
    return rows, readings


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


def summary_row(path: Path, items: list[Item], readings: dict[str, list[Reading]]) -> list[str]:
    """One corpus: `number: true`'s agreement, confident wrong numbers and abstentions; flexible-extract's agreement."""
    ours, n = readings["number: true"], len(items)
    agreed = sum(r.agrees for r in ours)
    abstained = sum(not r.agrees and r.abstained for r in ours)
    wrong = sum(not r.agrees and not r.abstained for r in ours)
    flexible = sum(r.agrees for r in readings["flexible-extract"])
    return [path.name, str(n), _share(agreed, n), _share(wrong, n), _share(abstained, n), _share(flexible, n)]


def _share(count: int, n: int) -> str:
    return f"{count} ({100 * count / n:.1f}%)"


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


# -- issue 37: the cost of hostile shapes -----------------------------------------------------------------

#: Texts repeated to size: issue 37's `2^2^2...`, and the shapes fuzzing found costly before its fixes
#: (long digit runs converted whole, dense notations, lists), beside ordinary prose with numbers.
SHAPES: dict[str, Callable[[int], str]] = {
    "The answer is 1e999...": lambda n: "The answer is 1e" + "9" * n,  # int() refuses past 4,300 digits
    "2⁹⁹⁹... (superscripts)": lambda n: "2" + "⁹" * n,
    "2^2^2...": lambda n: "2^" * (n // 2) + "2",
    "2^{2^{...": lambda n: "2^{" * (n // 3) + "2" + "}" * (n // 3),
    "9^9 9^9 ...": lambda n: "9^9 " * (n // 4),
    "1e9 1e9 ...": lambda n: "1e9 " * (n // 4),
    "1.999... (one decimal)": lambda n: "1." + "9" * n,
    "0.000...1": lambda n: "0." + "0" * n + "1",
    "999... (one integer)": lambda n: "9" * n,
    "1,2,1,2,... (one list)": lambda n: "1,2" * (n // 3),
    "3 × 10^3 × 10^...": lambda n: "3 × 10^" * (n // 7) + "2",
    "5 m^2 5 m^2 ...": lambda n: "5 m^2 " * (n // 6),
    "-$5 -$5 ...": lambda n: "-$5 " * (n // 4),
    "(1, 2) (1, 2) ...": lambda n: "(1, 2) " * (n // 7),
    "1 + 1 + ... (an answer)": lambda n: "The answer is " + "1 + " * (n // 4) + "1",
    "(((...": lambda n: "(" * n + "5",
    "$$$...": lambda n: "$" * n + "5",
    "prose with numbers": lambda n: _prose(n),
}
KIB = 1024


_PROSE_WORDS = (
    "the a of to and in that it is was for on are with as they be at have this from or had by but some "
    "what there we can out other were all your when up use word how said each she which do their time "
    "if will way about many then them would write like so these her long make thing see him has look"
)


def _prose(size: int) -> str:
    """Sentences of 8 to 25 common words, half of them with a number: about one number per 130 characters."""
    rng = random.Random(1)
    words = _PROSE_WORDS.split()
    parts, length = [], 0
    while length < size:
        sentence = [rng.choice(words) for _ in range(rng.randint(8, 25))]
        if rng.random() < 0.5:
            sentence.insert(rng.randrange(len(sentence)), str(rng.randint(1, 999)))
        parts.append(" ".join(sentence).capitalize() + ". ")
        length += len(parts[-1])
    return "".join(parts)[:size]


def shape_rows(sizes: list[int]) -> list[list[str]]:
    """Per shape: CPU seconds at each size, seconds per MiB at the largest, and what was read."""
    rows = []
    for name, make in SHAPES.items():
        cells, read = [name], ""
        for size in sizes:
            text = make(size)
            start = time.process_time()
            try:
                read = str(read_number(text))[:24]
            except NoAnswer as refused:
                read = f"none: {str(refused)[:48]}"
            except ValueError as crash:  # int()'s 4,300-digit limit, before issue 37
                read = f"crash: {type(crash).__name__}"
            elapsed = time.process_time() - start
            cells.append(f"{elapsed:.3f}")
        cells += [f"{elapsed * 1024 * KIB / len(text):.2f}", read]
        rows.append(cells)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, action="append", help="a corpus to read (repeatable); default: all")
    parser.add_argument("--classes", action="store_true", help="per corpus, one row per class and reader")
    parser.add_argument("--misses", action="store_true", help="list every text a reader got wrong")
    parser.add_argument("--shapes", action="store_true", help="issue 37's cost per MiB of hostile texts")
    parser.add_argument(
        "--shape-sizes", default="64,1024", help="KiB, comma-separated (the tree before issue 37 is quadratic)"
    )
    args = parser.parse_args(argv)
    corpora = args.corpus or sorted(HERE.glob("number_corpus*.jsonl"), key=_corpus_order)
    summary, all_items = [], []
    for path in corpora:
        items = load(path)
        all_items += items
        rows, readings = table(items)
        summary.append(summary_row(path, items, readings))
        if args.classes:
            classes = sorted({item.cls for item in items})
            print(f"\n{path.name}: {len(items)} answers in {len(classes)} classes ({', '.join(classes)})\n")
            print_table(rows, ["class", "n", *READERS])
            print()
            print_table(disagreement_rows(readings), ["reader", "disagreements", "abstentions", "wrong numbers"])
        if args.misses:
            for name in READERS if args.classes else ["number: true"]:
                missed = [(item, r) for item, r in zip(items, readings[name], strict=True) if not r.agrees]
                print(f"\n{path.name}: {name} misses ({len(missed)}):")
                for item, reading in missed:
                    read = f" read {reading.read}" if reading.read else ""
                    print(f"  [{item.cls}] human={_show(item.human)}{read}: {item.text!r}")
    print("\n`number: true` on each corpus (flexible-extract's agreement beside it):\n")
    header = ["corpus", "n", "agreement", "confident wrong", "abstentions", "flexible-extract"]
    print_table(summary, header)
    print(f"\nnumber: true reads an answer in {1e6 * time_per_answer(all_items):.0f} µs of CPU on average")
    if args.shapes:
        sizes = [int(kib) * KIB for kib in args.shape_sizes.split(",")]
        print(f"\nCPU seconds to read one hostile text (issue 37), and per MiB at {sizes[-1] // KIB} KiB:\n")
        header = [f"{size // KIB} KiB" for size in sizes]
        print_table(shape_rows(sizes), ["shape", *header, "s per MiB", f"read (at {sizes[-1] // KIB} KiB)"])
    return 0


def _corpus_order(path: Path) -> tuple[int, str]:
    """The corpora in the order they were written: issue 19's and 26's first, then the others by name."""
    first = ["number_corpus.jsonl", "number_corpus_heldout.jsonl"]
    return (first.index(path.name) if path.name in first else len(first), path.name)


def _show(value: Fraction | None) -> Any:
    return None if value is None else canonical_fraction(value)


if __name__ == "__main__":
    raise SystemExit(main())

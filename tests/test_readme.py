"""What the README shows a new user holds: its suites validate, its Commands block lists every command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stabilitygate.cli import cli, main
from stabilitygate.judge.fail_on import FAIL_ON_CHOICES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
SUITES = [block for block in re.findall(r"```yaml\n(.*?)```", README, re.S) if "\ncases:" in block]


def commands_block() -> str:
    section = README.split("## Commands", 1)[1]
    return section.split("```", 2)[1]


def test_the_commands_block_lists_every_command_and_every_fail_on_choice() -> None:
    block = commands_block()
    for name in cli.commands:
        assert f"stabilitygate {name} " in block, name
    assert f"--fail-on {'|'.join(FAIL_ON_CHOICES)}" in block


@pytest.mark.parametrize("suite", SUITES, ids=[f"suite{i}" for i in range(len(SUITES))])
def test_every_suite_the_readme_shows_validates(tmp_path: Path, suite: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "suite.yml"
    path.write_text(suite)
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err


def test_the_free_text_example_says_how_to_catch_a_changed_fact() -> None:
    first = next(s for s in SUITES if "id: summary" in s)
    assert "expected: {contains: 14 days}" in first and "min_accuracy: 1.0" in first
    after = README.split(first, 1)[1].split("```bash", 1)[0]
    assert "#meaning-by-an-entailment-judge" in after and "0.982" in after


def layout_block() -> str:
    return README.split("### Layout", 1)[1].split("```", 2)[1]


def named_in_layout() -> dict[str, list[str]]:
    """Each package the Layout block starts a line with (`stabilitygate/`, `suite/`, `measure/numbers/`)
    and the module names listed in its part; what is said in parentheses is description, not a name."""
    text = layout_block().replace("suite.yml", " ").replace("->", " ")
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\([^()]*\)", " ", text)
    named: dict[str, list[str]] = {}
    part: list[str] = []
    for line in text.splitlines():
        words = re.findall(r"[\w/]+", line)
        if words and words[0].endswith("/"):  # a part starts with its package's name
            part = named.setdefault(words.pop(0).removeprefix("stabilitygate/"), [])
        part.extend(word for word in words if not word.endswith("/"))  # `numbers/`: named by its own part
    return named


def modules_in_the_tree() -> dict[str, list[str]]:
    package = ROOT / "stabilitygate"
    return {
        f"{init.parent.relative_to(package).as_posix()}/".removeprefix("./"): sorted(
            p.stem for p in init.parent.glob("*.py") if p.stem != "__init__"
        )
        for init in package.rglob("__init__.py")
    }


def test_the_layout_section_names_every_module_of_the_tree_once() -> None:
    assert {part: sorted(names) for part, names in named_in_layout().items()} == modules_in_the_tree()
    duplicated = [name for names in named_in_layout().values() for name in set(names) if names.count(name) > 1]
    assert duplicated == []

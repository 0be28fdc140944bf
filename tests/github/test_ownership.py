from __future__ import annotations

import os
from pathlib import Path

import pytest

from stabilitygate.github import ownership
from stabilitygate.github.ownership import give_back

OWNER = (1234, 2345)
# The run's start and the times files were written, set on them with os.utime: `since` is compared
# with file times, so the test sets both rather than racing the filesystem's clock.
STARTED = 1_761_000_000.0
WRITTEN = STARTED + 5
BEFORE = STARTED - 3600
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")


def owner_of(path: Path) -> tuple[int, int]:
    info = path.lstat()
    return info.st_uid, info.st_gid


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@as_root
def test_written_files_go_back_to_the_workspace_owner(workspace: Path) -> None:
    os.chown(workspace, *OWNER)
    checked_in = workspace / ".stability" / "suite.yml"
    checked_in.parent.mkdir()
    checked_in.write_text("version: 1\n")
    os.chown(checked_in.parent, *OWNER)
    os.chown(checked_in, 4321, 4321)  # someone else's file: left alone
    old = workspace / ".stability" / "notes.txt"
    old.write_text("old, root-owned, not written by this run")
    out = workspace / ".stabilitygate"
    (out / "deep").mkdir(parents=True)
    (out / "report.json").write_text("{}")
    (out / "deep" / "junit.xml").write_text("<x/>")
    (out / "link").symlink_to("/etc/passwd")
    baseline = workspace / ".stability" / "suite.baseline.json"
    baseline.write_text("{}")
    lock = workspace / ".stability" / "suite.baseline.json.lock"
    lock.write_text("")
    os.utime(old, (BEFORE, BEFORE))
    os.utime(lock, (WRITTEN, WRITTEN))

    changed = give_back([out, baseline], workspace, since=STARTED)

    for path in (out, out / "deep", out / "report.json", out / "deep" / "junit.xml", out / "link", baseline, lock):
        assert owner_of(path) == OWNER, path
    assert owner_of(Path("/etc/passwd")) == (0, 0)  # the link itself changed, not its target
    assert owner_of(checked_in) == (4321, 4321)
    assert owner_of(old) == (0, 0)
    assert set(changed) == {
        out,
        out / "deep",
        out / "report.json",
        out / "deep" / "junit.xml",
        out / "link",
        baseline,
        lock,
    }


@as_root
def test_new_parent_directories_are_given_back_too(workspace: Path) -> None:
    os.chown(workspace, *OWNER)
    existing = workspace / "existing"  # root's from before this run; its time says the run left it alone
    baseline = existing / "new" / "dir" / "suite.baseline.json"
    baseline.parent.mkdir(parents=True)
    baseline.write_text("{}")
    for directory, when in ((existing, BEFORE), (existing / "new", WRITTEN), (existing / "new" / "dir", WRITTEN)):
        os.utime(directory, (when, when))
    give_back([baseline], workspace, since=STARTED)
    assert owner_of(existing / "new") == OWNER and owner_of(existing / "new" / "dir") == OWNER
    assert owner_of(existing) == (0, 0)


@as_root
def test_paths_outside_the_workspace_are_left_alone(workspace: Path, tmp_path: Path) -> None:
    os.chown(workspace, *OWNER)
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    assert give_back([outside, workspace / "missing.json"], workspace) == []
    assert owner_of(outside) == (0, 0)


@as_root
def test_nothing_to_do_when_root_owns_the_workspace(workspace: Path) -> None:
    (workspace / "report.json").write_text("{}")
    assert give_back([workspace / "report.json"], workspace) == []


def test_not_root_changes_nothing(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(ownership.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(ownership.os, "chown", lambda *a, **k: calls.append(a))
    (workspace / "report.json").write_text("{}")
    assert give_back([workspace / "report.json"], workspace) == []
    assert calls == []

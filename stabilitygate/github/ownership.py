"""Give the files the gate wrote in the workspace back to the workspace's owner.

A container action runs as root while the workspace belongs to the runner's user; files left
owned by root break later steps (`git clean`, caches, the next checkout). So, when running as
root, whatever the gate created is chowned to the uid/gid of the workspace directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def workspace_owner(workspace: Path) -> tuple[int, int]:
    info = workspace.stat()
    return info.st_uid, info.st_gid


def _chown(path: Path, uid: int, gid: int, changed: list[Path]) -> None:
    info = path.lstat()
    if (info.st_uid, info.st_gid) == (uid, gid) or info.st_uid != os.geteuid():
        return  # already right, or not ours to change
    os.chown(path, uid, gid, follow_symlinks=False)
    changed.append(path)


def _walk(path: Path) -> Iterable[Path]:
    yield path
    if path.is_dir() and not path.is_symlink():
        for root, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                yield Path(root) / name


def _created_since(path: Path, since: float) -> bool:
    try:
        return path.lstat().st_mtime >= since
    except OSError:
        return False


def give_back(paths: Iterable[Path], workspace: Path, *, since: float | None = None) -> list[Path]:
    """Chown `paths` (directories recursively) to the workspace's owner; return what changed.

    With `since`, also the parent directories up to the workspace and the siblings of each file
    that were modified since then (lock and temporary files written next to a baseline).
    Does nothing unless running as root and the owner differs.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    workspace = workspace.resolve()
    uid, gid = workspace_owner(workspace)
    if (uid, gid) == (os.geteuid(), os.getegid()):
        return []
    changed: list[Path] = []
    for given in paths:
        path = Path(os.path.abspath(given))
        if not path.exists() and not path.is_symlink():
            continue
        if workspace not in path.parents:
            continue  # outside the workspace: not the runner's files
        for item in _walk(path):
            _chown(item, uid, gid, changed)
        if since is None:
            continue
        if path.is_file():
            for sibling in path.parent.iterdir():
                if sibling != path and _created_since(sibling, since):
                    _chown(sibling, uid, gid, changed)
        for parent in path.parents:
            if parent == workspace:
                break
            if _created_since(parent, since):
                _chown(parent, uid, gid, changed)
    return changed

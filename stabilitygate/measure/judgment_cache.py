"""An on-disk cache of entailment judgments, beside the embedding cache (docs/design.md §8).

Layout: ROOT/entailment/<judge key>/<2 chars>/<pair digest>.json, one small file per ordered pair,
written atomically like the embeddings. The judge key covers the judge's definition, the prompt and
the case's question, so a changed judge never reads another's judgments. A file that does not read
as a judgment is a miss; an unwritable cache only costs calls, it never fails a run.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from stabilitygate.atomic import write_atomic
from stabilitygate.errors import BadInput
from stabilitygate.measure.embedding_cache import resolve_cache_dir
from stabilitygate.measure.entailment import Judgment, PairKey

log = logging.getLogger(__name__)

SUBDIRECTORY = "entailment"  # no embedding model key has this form (theirs end in -<hash>)


class JudgmentCache:
    """Judgments by (judge key, ordered pair)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._writable = True

    @classmethod
    def at(cls, cache_dir: str | os.PathLike[str] | None) -> JudgmentCache | None:
        """The cache in the embedding cache's directory (None: the default; "off": no cache)."""
        root = resolve_cache_dir(cache_dir)
        return None if root is None else cls(root)

    def _path(self, key: PairKey) -> Path:
        digest = key.digest
        return self.root / SUBDIRECTORY / key.judge / digest[:2] / f"{digest}.json"

    def get(self, key: PairKey) -> Judgment | None:
        try:
            return Judgment.from_json(json.loads(self._path(key).read_text(encoding="utf-8")))
        except (OSError, ValueError, BadInput):
            return None

    def put(self, key: PairKey, judgment: Judgment) -> None:
        if not self._writable:
            return
        blob = json.dumps(judgment.to_json(), ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass")
        try:
            write_atomic(self._path(key), blob, durable=False)  # a lost entry is only asked again
        except OSError as exc:
            self._writable = False
            log.warning("judgment cache %s is not writable, continuing without it: %s", self.root, exc)

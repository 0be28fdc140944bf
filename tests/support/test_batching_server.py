"""The batching server: answers that depend on how many requests it serves at once, batches counted."""

from __future__ import annotations

import json
import threading
import urllib.request

from tests.support.batching_server import BatchingOpenAI

ANSWERS = {"q": ("alone", ["first", "second"])}


def ask(url: str) -> str:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "q"}]}).encode()
    request = urllib.request.Request(url + "/chat/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return str(json.load(reply)["choices"][0]["message"]["content"])


def test_a_lone_request_is_answered_alone_and_a_full_batch_by_position() -> None:
    with BatchingOpenAI(ANSWERS, slots=3, gather_s=0.05) as server:
        assert ask(server.base_url) == "alone"
        texts: list[str] = []
        threads = [threading.Thread(target=lambda: texts.append(ask(server.base_url))) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert server.batches == [1, 3]  # the three waited for each other: the batch filled its slots
    assert sorted(texts) == ["first", "first", "second"]  # positions 0, 1, 2 of the batch

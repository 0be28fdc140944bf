"""The scripted OpenAI server itself: what tests elsewhere rely on it to do."""

from __future__ import annotations

import http.client
import json
import queue
import subprocess
import sys
import threading
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from stabilitygate.providers.httpbase import default_ssl_context
from tests.support.openai_server import Fault, ScriptedOpenAI, from_script

ROOT = Path(__file__).resolve().parents[2]
FEYNMAN = "Where was Feynman born?"


def _body(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": prompt}], **extra}


def _post(
    server: ScriptedOpenAI, body: Any, headers: dict[str, str] | None = None, *, timeout: float | None = 30
) -> httpx.Response:
    # The shared SSL context spares each call loading the CA bundle again (~60 ms).
    url = f"{server.base_url}/chat/completions"
    return httpx.post(url, json=body, headers=headers or {}, timeout=timeout, verify=default_ssl_context())


def _text(response: httpx.Response) -> str:
    return response.json()["choices"][0]["message"]["content"]


def test_distribution_is_served_in_a_cycle_per_prompt_with_a_default() -> None:
    script = {FEYNMAN: [("Queens, New York", 8), ("New York City", 2)], "other": "fixed"}
    with ScriptedOpenAI(script, default=[("d1", 1), ("d2", 1)]) as server:
        feynman = [_text(_post(server, _body(FEYNMAN))) for _ in range(20)]
        others = [_text(_post(server, _body("other"))) for _ in range(2)]
        defaults = [_text(_post(server, _body("unknown prompt"))) for _ in range(3)]
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        assert server.count == 25
    assert feynman[:10] == ["Queens, New York"] * 8 + ["New York City"] * 2
    assert Counter(feynman) == {"Queens, New York": 16, "New York City": 4}
    assert others == ["fixed", "fixed"]
    assert defaults == ["d1", "d2", "d1"]


def test_prompt_is_matched_on_the_last_user_message() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": FEYNMAN},
        ],
    }
    with ScriptedOpenAI({FEYNMAN: "Queens", "first": "wrong"}) as server:
        assert _text(_post(server, body)) == "Queens"


def test_reply_carries_usage_model_fingerprint_and_finish_reason() -> None:
    with ScriptedOpenAI({"q": "two words"}, model="scripted-x", fingerprint="fp_1") as server:
        reply = _post(server, _body("q")).json()
    assert reply["model"] == "scripted-x" and reply["system_fingerprint"] == "fp_1"
    assert reply["usage"] == {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    assert reply["choices"][0]["finish_reason"] == "stop"
    assert reply["choices"][0]["logprobs"] is None


def test_requests_are_recorded_with_bodies_and_lowercase_headers() -> None:
    with ScriptedOpenAI() as server:
        _post(server, _body("a", seed=7), headers={"X-Custom": "yes"})
        (received,) = server.requests
    assert received.number == 1 and received.path == "/v1/chat/completions"
    assert received.body["seed"] == 7 and received.headers["x-custom"] == "yes"


def test_faults_by_every_at_prompt_and_predicate_do_not_advance_the_cycle() -> None:
    faults = [
        Fault("status", status=503, at={1}),
        Fault("status", status=418, prompt="teapot"),
        Fault("status", status=500, when=lambda body, number: body.get("seed") == 99),
        Fault("status", status=429, every=5, retry_after="0.01"),
    ]
    with ScriptedOpenAI({"q": [("a", 1), ("b", 1)]}, faults=faults) as server:
        responses = [
            _post(server, _body("q")),  # 1: at
            _post(server, _body("q")),  # 2: "a"
            _post(server, _body("teapot")),  # 3: prompt
            _post(server, _body("q", seed=99)),  # 4: predicate
            _post(server, _body("q")),  # 5: every
            _post(server, _body("q")),  # 6: "b"
            _post(server, _body("q")),  # 7: "a" again
        ]
    assert [r.status_code for r in responses] == [503, 200, 418, 500, 429, 200, 200]
    # Faulted requests took no completion: the cycle went a, b, a over the good replies only.
    assert [_text(r) for r in responses if r.status_code == 200] == ["a", "b", "a"]
    assert responses[4].headers["retry-after"] == "0.01"
    assert responses[4].json()["error"]["message"] == "scripted 429"


def test_status_fault_with_a_custom_body() -> None:
    with ScriptedOpenAI(faults=[Fault("status", status=400, body='{"error": {"message": "bad param"}}')]) as server:
        response = _post(server, _body("q"))
    assert response.status_code == 400 and response.json() == {"error": {"message": "bad param"}}


def test_not_json_wrong_shape_and_length_faults() -> None:
    faults = [Fault("not_json", at={1}), Fault("wrong_shape", at={2}), Fault("length", at={3})]
    with ScriptedOpenAI({"q": "cut"}, faults=faults) as server:
        not_json, wrong, length = (_post(server, _body("q")) for _ in range(3))
    assert not_json.status_code == 200 and not_json.text.startswith("<html>")
    assert wrong.status_code == 200 and "choices" not in wrong.json()
    assert length.json()["choices"][0]["finish_reason"] == "length" and _text(length) == "cut"


def _raw_post(server: ScriptedOpenAI, body: Any) -> http.client.HTTPResponse:
    url = urllib.parse.urlsplit(server.base_url)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=5)
    connection.request("POST", url.path + "/chat/completions", body=json.dumps(body))
    return connection.getresponse()


def test_truncated_body_is_shorter_than_its_content_length() -> None:
    with ScriptedOpenAI(faults=[Fault("truncated")]) as server:
        response = _raw_post(server, _body("q"))
        with pytest.raises(http.client.IncompleteRead):
            response.read()


def test_reset_closes_the_connection_without_a_reply() -> None:
    with ScriptedOpenAI(faults=[Fault("reset")]) as server, pytest.raises(httpx.TransportError):
        _post(server, _body("q"))


def test_huge_reply_has_the_requested_size_and_is_valid_json() -> None:
    with ScriptedOpenAI({"q": "x"}, faults=[Fault("huge", size=300_000)]) as server:
        response = _post(server, _body("q", logprobs=True, top_logprobs=2))
    assert len(response.content) == 300_000
    assert int(response.headers["content-length"]) == 300_000
    text = _text(response)
    assert len(text) > 290_000 and set(text) == {"a"}


def test_echo_auth_sends_the_authorization_header_back() -> None:
    with ScriptedOpenAI(faults=[Fault("echo_auth")]) as server:
        response = _post(server, _body("q"), headers={"Authorization": "Bearer sk-echo-me"})
    assert response.status_code == 401 and "sk-echo-me" in response.text


def test_api_key_is_enforced() -> None:
    with ScriptedOpenAI(api_key="sk-right") as server:
        refused = _post(server, _body("q"), headers={"Authorization": "Bearer sk-wrong-key"})
        missing = _post(server, _body("q"))
        accepted = _post(server, _body("q"), headers={"Authorization": "Bearer sk-right"})
    assert refused.status_code == 401 and "Incorrect API key" in refused.json()["error"]["message"]
    assert missing.status_code == 401
    assert accepted.status_code == 200


def test_hang_is_released_when_the_server_closes() -> None:
    hanging = threading.Event()

    def arrived(body: object, number: int) -> bool:
        hanging.set()  # the request is in and about to hang
        return True

    server = ScriptedOpenAI(faults=[Fault("hang", when=arrived)]).start()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            # Ended by its timeout, the call would fail with a ReadTimeout, not the drop asserted below.
            _post(server, _body("q"), timeout=120)
        except httpx.HTTPError as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    assert hanging.wait(timeout=30)
    assert thread.is_alive() and errors == []  # still waiting for a reply
    server.close()
    thread.join()
    assert len(errors) == 1 and isinstance(errors[0], httpx.RemoteProtocolError)


class HeldWaits:
    """A `sleep` for the server that reports each wait asked for and holds it until the test lets it go."""

    def __init__(self) -> None:
        self.asked: queue.Queue[float] = queue.Queue()
        self._go_on = threading.Semaphore(0)

    def __call__(self, seconds: float) -> None:
        self.asked.put(seconds)
        if not self._go_on.acquire(timeout=30):
            raise TimeoutError("the test never let this wait go")

    def next_asked(self) -> float:
        return self.asked.get(timeout=30)

    def let_go(self) -> None:
        self._go_on.release()


def test_delay_fault_and_latency_hold_the_reply() -> None:
    waits = HeldWaits()
    replies: list[httpx.Response] = []
    with ScriptedOpenAI(latency_s=0.05, faults=[Fault("delay", at={2}, delay_s=0.2)], sleep=waits) as server:

        def post() -> None:
            replies.append(_post(server, _body("q")))

        first = threading.Thread(target=post)
        first.start()
        assert waits.next_asked() == 0.05  # the latency, before any reply
        assert replies == []
        waits.let_go()
        first.join()
        assert len(replies) == 1

        second = threading.Thread(target=post)
        second.start()
        assert waits.next_asked() == 0.05
        waits.let_go()
        assert waits.next_asked() == 0.2  # then the delay of request 2, still before its reply
        assert len(replies) == 1
        waits.let_go()
        second.join()
    assert [r.status_code for r in replies] == [200, 200] and waits.asked.empty()


def test_a_long_delay_is_cut_short_when_the_server_closes() -> None:
    # Without a test's `sleep` the server waits on its own clock, and closing it ends the wait: the
    # client's timeout, well short of the delay, would otherwise end the call with a ReadTimeout.
    delaying = threading.Event()

    def arrived(body: object, number: int) -> bool:
        delaying.set()
        return True

    server = ScriptedOpenAI(faults=[Fault("delay", delay_s=600, when=arrived)]).start()
    outcomes: list[int | BaseException] = []

    def call() -> None:
        try:
            outcomes.append(_post(server, _body("q"), timeout=120).status_code)
        except httpx.HTTPError as exc:
            outcomes.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    assert delaying.wait(timeout=30)
    assert thread.is_alive() and outcomes == []  # held by the delay
    server.close()
    thread.join()
    assert outcomes == [200]


def test_tools_are_answered_with_a_tool_call() -> None:
    tools = [{"type": "function", "function": {"name": "answer", "parameters": {"type": "object"}}}]
    with ScriptedOpenAI({"q": '{"borough": "Queens"}'}) as server:
        reply = _post(server, _body("q", tools=tools)).json()
    message = reply["choices"][0]["message"]
    assert message["content"] is None and reply["choices"][0]["finish_reason"] == "tool_calls"
    assert message["tool_calls"][0]["function"] == {"name": "answer", "arguments": '{"borough": "Queens"}'}


def test_logprobs_are_returned_when_asked() -> None:
    with ScriptedOpenAI({"q": "Queens, New York"}) as server:
        reply = _post(server, _body("q", logprobs=True, top_logprobs=2)).json()
    content = reply["choices"][0]["logprobs"]["content"]
    assert "".join(entry["token"] for entry in content) == "Queens, New York"
    assert all(len(entry["top_logprobs"]) == 2 for entry in content)
    assert content[0]["top_logprobs"][1]["token"] == "QUEENS"


def test_max_in_flight_counts_concurrent_requests() -> None:
    # A lone request, then five that wait for each other at the server (five in flight at once, by
    # construction), then a lone one again: the count follows the overlap, not the number of requests.
    all_in = threading.Barrier(5, timeout=30)

    def hold_the_five(body: object, number: int) -> bool:
        if 2 <= number <= 6:
            all_in.wait()
        return False

    statuses: list[int] = []
    with ScriptedOpenAI(faults=[Fault("status", when=hold_the_five)]) as server:

        def post() -> None:
            statuses.append(_post(server, _body("q")).status_code)

        post()
        assert server.max_in_flight == 1
        threads = [threading.Thread(target=post) for _ in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        post()
        assert statuses == [200] * 7
        assert server.max_in_flight == 5 and server.count == 7


def test_unknown_paths_are_404() -> None:
    with ScriptedOpenAI() as server:
        response = httpx.post(server.base_url + "/embeddings", json={}, timeout=5)
        get = httpx.get(server.base_url + "/models", timeout=5)
    assert response.status_code == 404 and get.status_code == 404


def test_bad_scripts_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown fault action"):
        Fault("explode")
    with pytest.raises(ValueError, match="unknown script keys"):
        from_script({"completion": {}})


def test_runs_as_a_process_from_a_json_script(tmp_path: Path) -> None:
    script = {
        "completions": {FEYNMAN: [["Queens, New York", 1], ["New York City", 1]]},
        "fingerprint": "fp_process",
        "faults": [{"action": "status", "status": 503, "at": [1]}],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server", "--port", "0", "--script", str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        url = f"{base_url}/chat/completions"
        first = httpx.post(url, json=_body(FEYNMAN), timeout=5)
        second = httpx.post(url, json=_body(FEYNMAN), timeout=5)
        third = httpx.post(url, json=_body(FEYNMAN), timeout=5)
    finally:
        process.terminate()
        code = process.wait(timeout=10)
    assert first.status_code == 503
    assert [_text(second), _text(third)] == ["Queens, New York", "New York City"]
    assert second.json()["system_fingerprint"] == "fp_process"
    assert code == 0

"""The OpenAI-compatible backend (vLLM and hosted APIs) against a real local HTTP server.

`bargain.agents.stub_server.StubServer` records every request body, so these tests pin what vLLM
receives (docs/PROTOCOL.md §5 and §9): which served model, the sampling
fields, vLLM's extra body (top_k, enable_thinking false), and the chat itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bargain.agents.arms import ADAPTERS, BASE, BASE_MODEL, resolve
from bargain.agents.backends import BackendError, Backends, Request, Sampling, generate, openai_server
from bargain.agents.backends.canned import REPLIES, canned_reply
from bargain.agents.backends.openai_server import OpenAIServer
from bargain.agents.llm import REASK, LLMAgent
from bargain.agents.stub_server import StubServer, serve_in_thread
from bargain.engine.game import Action, new_initial_state, replay
from bargain.engine.prompts import PromptVersion, chat_messages, system_prompt
from bargain.engine.replies import parse_reply
from bargain.engine.trial import Condition, Role, Trial
from bargain.runs.episodes import play

ROOT = Path(__file__).resolve().parents[1]
SERVED = [BASE_MODEL, *ADAPTERS]
BUYER_REPLY, SELLER_REPLY = REPLIES[True], REPLIES[False]
GARBAGE = "I refuse to answer in your format."
SAMPLING = Sampling(temperature=0.3, top_p=0.9, top_k=7, presence_penalty=0.25, max_tokens=99)


def buyer_messages(text: str = "Round 1, rounds left 3") -> tuple[dict, ...]:
    return ({"role": "user", "content": f"You are the BUYER in a bargaining negotiation.\n\n{text}"},)


def seller_messages() -> tuple[dict, ...]:
    return ({"role": "user", "content": "You are the SELLER in a bargaining negotiation.\n\nRound 1, rounds left 3"},)


def words(messages) -> int:
    """The stub server's token count: whitespace-separated words."""
    return sum(len(m["content"].split()) for m in messages)


def free_url() -> str:
    """A URL on which nothing listens (a port bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def trial(scenario_set) -> Trial:
    """The buyer adapter's training set-up: seller_unaware, simultaneous, 4 rounds."""
    return Trial(
        trial_id=1,
        scenario=scenario_set.get("low:1508"),
        condition=Condition.SELLER_UNAWARE,
        buyer_price=2.68,
        seller_price=1.22,
        max_rounds=4,
    )


# --- What vLLM receives -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arm, served",
    [(ADAPTERS["buyer-grpo"], "buyer-grpo"), (ADAPTERS["joint-cispo"], "joint-cispo"), (BASE, BASE_MODEL)],
)
def test_vllm_request_body(arm, served):
    messages = buyer_messages()
    with StubServer(SERVED) as server:
        backend = OpenAIServer(server.url)
        assert backend.model_name(arm) == served
        asyncio.run(backend.complete(Request(messages, backend.model_name(arm), SAMPLING)))
    (body,) = server.requests
    assert body["model"] == served
    assert body["messages"] == list(messages)
    assert body["temperature"] == 0.3
    assert body["top_p"] == 0.9
    assert body["presence_penalty"] == 0.25
    assert body["max_tokens"] == 99
    # vLLM's extra body travels at the top level of the JSON body.
    assert body["top_k"] == 7
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "extra_body" not in body
    assert not any("/no_think" in m["content"] for m in body["messages"])


def test_base_model_name_is_configurable():
    with StubServer(["/models/qwen3-8b"]) as server:
        backend = OpenAIServer(server.url, base_model="/models/qwen3-8b")
        done = asyncio.run(backend.complete(Request(buyer_messages(), backend.model_name(BASE), Sampling())))
    assert server.requests[0]["model"] == "/models/qwen3-8b"
    assert done.model == "/models/qwen3-8b"


def test_hosted_api_gets_only_standard_fields():
    with StubServer(["gpt-x"]) as server:
        backend = OpenAIServer(server.url, vllm=False)
        asyncio.run(backend.complete(Request(buyer_messages(), "gpt-x", SAMPLING)))
    (body,) = server.requests
    assert "top_k" not in body
    assert "chat_template_kwargs" not in body
    # hosted APIs take the current name of the length limit (newer OpenAI models refuse max_tokens)
    assert set(body) == {"model", "messages", "temperature", "top_p", "presence_penalty", "max_completion_tokens"}
    assert body["max_completion_tokens"] == 99
    assert backend.describe()["backend"] == "openai"


def test_openai_arms_get_a_hosted_client():
    arm = resolve("openai:gpt-x@http://127.0.0.1:1/v1")
    backends = Backends(remote=["http://127.0.0.1:1/v1"], api_key="sk-test")
    backend = backends.for_arm(arm)
    assert backend.api_key == "sk-test"
    assert isinstance(backend, OpenAIServer) and backend.vllm is False
    assert backend.model_name(arm) == "gpt-x"
    assert backends.for_arm(arm) is backend  # one client per URL
    with pytest.raises(BackendError, match="--backend"):
        backends.for_arm(ADAPTERS["buyer-grpo"])


# --- The completion -----------------------------------------------------------------------------


def test_completion_fields():
    messages = buyer_messages()
    with StubServer(SERVED, delay_s=0.01) as server:
        backend = OpenAIServer(server.url)
        done = asyncio.run(backend.complete(Request(messages, "buyer-grpo", Sampling())))
    assert done.text == BUYER_REPLY
    assert done.prompt_tokens == words(messages) > 0
    assert done.completion_tokens == len(BUYER_REPLY.split()) > 0
    assert done.model == "buyer-grpo"
    assert done.finish_reason == "stop"
    assert done.latency_s > 0
    assert done.from_reasoning is False
    assert backend.describe() == {"backend": "vllm", "base_url": server.url, "base_model": BASE_MODEL}


def test_reply_only_in_reasoning_content_is_recovered():
    with StubServer(SERVED, reasoning_only=True) as server:
        backend = OpenAIServer(server.url)
        done = asyncio.run(backend.complete(Request(seller_messages(), BASE_MODEL, Sampling())))
    assert done.text == SELLER_REPLY
    assert done.from_reasoning is True
    assert parse_reply(done.text).action is Action.OFFER


def test_generate_many():
    with StubServer(SERVED) as server:
        backend = OpenAIServer(server.url)
        done = asyncio.run(
            generate(
                backend,
                [
                    Request(buyer_messages(), "buyer-grpo", Sampling()),
                    Request(seller_messages(), "seller-grpo", Sampling()),
                ],
            )
        )
    assert [c.text for c in done] == [BUYER_REPLY, SELLER_REPLY]
    assert [c.model for c in done] == ["buyer-grpo", "seller-grpo"]


# --- Errors and retries -------------------------------------------------------------------------


def test_transient_error_is_retried():
    with StubServer(SERVED, fail_first=1, fail_status=503) as server:
        backend = OpenAIServer(server.url, max_retries=2)
        done = asyncio.run(backend.complete(Request(buyer_messages(), "buyer-grpo", Sampling())))
    assert done.text == BUYER_REPLY
    assert len(server.requests) == 2
    assert server.requests[0] == server.requests[1]


def test_no_retries_left_raises_backend_error():
    with StubServer(SERVED, fail_first=1, fail_status=503) as server:
        backend = OpenAIServer(server.url, max_retries=0)
        with pytest.raises(BackendError, match="503"):
            asyncio.run(backend.complete(Request(buyer_messages(), "buyer-grpo", Sampling())))
    assert len(server.requests) == 1


def test_nothing_listening():
    url = free_url()
    backend = OpenAIServer(url, max_retries=0, timeout_s=2)
    with pytest.raises(BackendError) as info:
        asyncio.run(backend.complete(Request(buyer_messages(), "buyer-grpo", Sampling())))
    message = str(info.value)
    assert url in message
    assert "python -m bargain serve" in message


def test_unknown_model():
    with StubServer(SERVED) as server:
        backend = OpenAIServer(server.url, max_retries=0)
        with pytest.raises(BackendError) as info:
            asyncio.run(backend.complete(Request(buyer_messages(), "no-such-adapter", Sampling())))
    assert "HTTP 404" in str(info.value)
    assert "no-such-adapter" in str(info.value)


def test_available():
    with StubServer([BASE_MODEL, "buyer-grpo"]) as server:
        backend = OpenAIServer(server.url)

        async def check():
            return {arm.name: await backend.available(arm) for arm in (BASE, *ADAPTERS.values())}

        marks = asyncio.run(check())
        assert asyncio.run(backend.check()) is None
    assert marks == {"base": True, "buyer-grpo": True, **{n: False for n in ADAPTERS if n != "buyer-grpo"}}


def test_available_is_false_when_unreachable():
    backend = OpenAIServer(free_url(), max_retries=0, timeout_s=2)
    assert asyncio.run(backend.available(BASE)) is False
    assert asyncio.run(backend.available(ADAPTERS["buyer-grpo"])) is False


ARMS = [BASE, *ADAPTERS.values()]  # the nine arms the arena checks at start-up


class ModelListing:
    """A server whose GET /v1/models answers with `status` and a model list, or `page` instead when set
    (both changeable while it runs), counting those requests."""

    def __init__(self, status: int):
        self.status, self.listings, self.page = status, 0, b""
        listing = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                listing.listings += 1
                payload = (
                    {"object": "list", "data": [{"id": BASE_MODEL, "object": "model"}]}
                    if listing.status == 200
                    else {"error": {"message": "not today"}}
                )
                data = listing.page or json.dumps(payload).encode()
                self.send_response(listing.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ModelListing:
        serve_in_thread(self.httpd)
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_an_unreachable_server_costs_one_quick_attempt():
    url = free_url()
    backend = OpenAIServer(url)  # the completions' retries and long timeout are not for the availability check

    async def start_up():
        return await backend.check(), [await backend.available(arm) for arm in ARMS]

    start = time.perf_counter()
    reason, marks = asyncio.run(start_up())
    with pytest.raises(BackendError) as info:  # a game start: another event loop, the same remembered failure
        asyncio.run(backend.served_models())
    assert time.perf_counter() - start < 6
    assert marks == [False] * len(ARMS)
    assert url in reason and "python -m bargain serve" in reason
    assert str(info.value) == reason


def test_a_server_that_never_answers_times_out_once(monkeypatch):
    monkeypatch.setattr(openai_server, "PROBE_TIMEOUT_S", 0.5)
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        backend = OpenAIServer(f"http://127.0.0.1:{silent.getsockname()[1]}/v1")
        start = time.perf_counter()
        reason = asyncio.run(backend.check())
        elapsed = time.perf_counter() - start
    assert 0.4 < elapsed < 2.5
    assert "cannot reach" in reason and "timed out" in reason


@pytest.mark.parametrize("status", [401, 404, 500])
def test_an_http_error_on_the_model_list_is_reported(status):
    with ModelListing(status) as server:
        backend = OpenAIServer(server.url)
        reason = asyncio.run(backend.check())
        with pytest.raises(BackendError, match=f"HTTP {status}"):
            asyncio.run(backend.served_models())
    assert f"HTTP {status}" in reason and server.url in reason and "not today" in reason
    assert server.listings == 1  # not retried, and the failure is remembered


def test_a_web_page_instead_of_a_model_list_is_reported():
    with ModelListing(200) as server:
        server.page = b"<html>\n<title>Welcome</title>\n</html>"
        reason = asyncio.run(OpenAIServer(server.url).check())
    assert "sent no model list" in reason and "Welcome" in reason and "\n" not in reason


def test_a_failed_model_list_is_remembered_for_a_while(monkeypatch):
    with ModelListing(500) as server:
        backend = OpenAIServer(server.url)

        async def check_all():
            return await asyncio.gather(*(backend.available(arm) for arm in ARMS))

        assert asyncio.run(check_all()) == [False] * len(ARMS)
        assert asyncio.run(backend.available(BASE)) is False
        assert server.listings == 1  # nine concurrent checks and a later one share one request
        server.status = 200
        assert asyncio.run(backend.check()) is not None  # still remembered
        monkeypatch.setattr(openai_server, "PROBE_FAILURE_TTL_S", 0.0)  # the failure is now too old
        assert asyncio.run(backend.check()) is None
        assert asyncio.run(backend.available(BASE)) is True
        assert asyncio.run(backend.available(ADAPTERS["buyer-grpo"])) is False
    assert server.listings == 2  # a listing, once had, is kept


# --- Concurrency ----------------------------------------------------------------------------------


def _burst(server: StubServer, max_in_flight: int, n: int = 20):
    backend = OpenAIServer(server.url, max_in_flight=max_in_flight)
    requests = [Request(buyer_messages(f"call {i}"), "buyer-grpo", Sampling()) for i in range(n)]
    return asyncio.run(generate(backend, requests))


def test_in_flight_bound():
    with StubServer(SERVED, delay_s=0.05) as server:
        done = _burst(server, max_in_flight=4)
    assert len(done) == 20 and all(c.text == BUYER_REPLY for c in done)
    assert len(server.requests) == 20
    assert 1 <= server.peak_in_flight <= 4


def test_requests_really_overlap():
    with StubServer(SERVED, delay_s=0.05) as server:
        _burst(server, max_in_flight=20)
    assert server.peak_in_flight >= 10


def test_usable_from_successive_event_loops():
    with StubServer(SERVED) as server:
        backend = OpenAIServer(server.url)
        first = asyncio.run(backend.complete(Request(buyer_messages(), "buyer-grpo", Sampling())))
        second = asyncio.run(backend.complete(Request(seller_messages(), BASE_MODEL, Sampling())))
        third = asyncio.run(backend.complete(Request(buyer_messages(), "buyer-grpo", Sampling())))
    assert (first.text, second.text, third.text) == (BUYER_REPLY, SELLER_REPLY, BUYER_REPLY)
    assert len(server.requests) == 3


def test_successive_event_loops_leave_no_traceback():
    script = textwrap.dedent("""
        import asyncio
        from bargain.agents.stub_server import StubServer
        from bargain.agents.backends.openai_server import OpenAIServer
        from bargain.agents.backends import Request, Sampling
        with StubServer(["m"]) as server:
            backend = OpenAIServer(server.url, base_model="m")
            request = Request(({"role": "user", "content": "You are the BUYER"},), "m", Sampling())
            for _ in range(3):
                asyncio.run(backend.complete(request))
        print("done")
    """)
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert run.returncode == 0 and "done" in run.stdout
    assert "Event loop is closed" not in run.stderr
    assert "Traceback" not in run.stderr


# --- LLMAgent through the server ----------------------------------------------------------------


def _side_of(body: dict) -> Role:
    return Role.BUYER if body["messages"][0]["content"].startswith("You are the BUYER") else Role.SELLER


def test_llm_agents_play_a_whole_game(trial):
    with StubServer(SERVED, reply=lambda body: canned_reply(body["messages"])) as server:
        backend = OpenAIServer(server.url)
        buyer_sampling, seller_sampling = Sampling(), Sampling(temperature=0.1, top_p=0.5)
        buyer = LLMAgent(ADAPTERS["buyer-grpo"], backend, buyer_sampling)
        seller = LLMAgent(resolve("arm:base"), backend, seller_sampling, prompt_version=PromptVersion.PAPER_EVAL)
        state = asyncio.run(play(new_initial_state(trial), buyer, seller))

    assert state.is_terminal() and not state.outcome().deal
    assert len(state.turns) == 8
    assert all(t.action is Action.OFFER for t in state.turns)
    assert len(server.requests) == 8
    versions = {Role.BUYER: PromptVersion.TRAIN, Role.SELLER: PromptVersion.PAPER_EVAL}
    agents = {Role.BUYER: buyer, Role.SELLER: seller}
    models = {Role.BUYER: "buyer-grpo", Role.SELLER: BASE_MODEL}
    samplings = {Role.BUYER: buyer_sampling, Role.SELLER: seller_sampling}
    replies = {Role.BUYER: BUYER_REPLY, Role.SELLER: SELLER_REPLY}

    for role in (Role.BUYER, Role.SELLER):
        sent = [body for body in server.requests if _side_of(body) is role]
        assert len(sent) == 4
        for k, body in enumerate(sent):
            observation = replay(trial, state.turns[: 2 * k]).observation(role)
            assert observation.round == k + 1 and observation.to_move
            expected = chat_messages(observation, versions[role])
            assert body["messages"] == expected
            assert agents[role].records[k]["messages"] == expected
            assert body["model"] == models[role]
            assert body["temperature"] == samplings[role].temperature
            assert body["top_p"] == samplings[role].top_p
            assert body["chat_template_kwargs"] == {"enable_thinking": False}
            assert len(expected) == 2 * k + 1
            assert [m["role"] for m in expected] == ["user", "assistant"] * k + ["user"]
            # Each earlier assistant turn is the side's own raw reply.
            assert all(m["content"] == replies[role] for m in expected[1::2])
        first = sent[0]["messages"][0]["content"]
        prompt = system_prompt(new_initial_state(trial).observation(role), versions[role])
        assert first == prompt + "\n\n" + "Round 1, rounds left 3"

    # The buyer's second-round user message, spelt out (docs/PROTOCOL.md §5).
    buyer_round2 = [b for b in server.requests if _side_of(b) is Role.BUYER][1]["messages"][-1]["content"]
    assert buyer_round2 == "Seller said: My offer is 5000.0.\nSeller's offer: 5000.0\nRound 2, rounds left 2"

    for role, agent in agents.items():
        assert len(agent.records) == 4
        sent = [body for body in server.requests if _side_of(body) is role]
        for k, record in enumerate(agent.records):
            assert record["round"] == k + 1
            assert record["role"] == role.value
            assert record["raw"] == replies[role]
            assert record["prompt_tokens"] == words(sent[k]["messages"]) > 0
            assert record["completion_tokens"] == len(replies[role].split())
            assert record["latency_s"] > 0
            assert record["sampling"] == samplings[role].to_dict()
            assert record["backend"] == backend.name
            assert record["model"] == models[role]
            assert record["parsing"] == "strict"
            assert record["prompt_version"] == versions[role].value
            assert record["arm"] == ("arm:buyer-grpo" if role is Role.BUYER else "arm:base")
            assert record["attempts"] == 1 and record["earlier_replies"] == []
            assert record["error"] is None
            assert record["from_reasoning"] is False
    assert [t.raw for t in state.turns if t.role is Role.BUYER] == [BUYER_REPLY] * 4


class GarbageFirst:
    """A reply function that answers garbage to the first request, then valid replies."""

    def __init__(self):
        self.calls = 0

    def __call__(self, body: dict) -> str:
        self.calls += 1
        return GARBAGE if self.calls == 1 else canned_reply(body["messages"])


def test_reask_after_invalid_reply(trial):
    observation = new_initial_state(trial).observation(Role.BUYER)
    with StubServer(SERVED, reply=GarbageFirst()) as server:
        agent = LLMAgent(ADAPTERS["buyer-grpo"], OpenAIServer(server.url), Sampling(), reask=1)
        move = asyncio.run(agent.act(observation))
    assert move.action is Action.OFFER and move.price == 0.5
    assert len(server.requests) == 2
    first, second = (body["messages"] for body in server.requests)
    assert first == chat_messages(observation)
    error = parse_reply(GARBAGE).error
    assert error
    assert second[: len(first)] == first
    assert second[len(first)] == {"role": "assistant", "content": GARBAGE}
    assert second[len(first) + 1]["role"] == "user"
    assert error in second[len(first) + 1]["content"]
    assert second[len(first) + 1]["content"] == REASK.format(error=error)
    assert len(second) == len(first) + 2
    (record,) = agent.records
    assert record["attempts"] == 2
    assert record["earlier_replies"] == [GARBAGE]
    assert record["raw"] == BUYER_REPLY
    assert record["messages"] == first  # the turn's chat, without the re-ask exchange
    assert record["error"] is None
    assert record["prompt_tokens"] == words(first) + words(second)


def test_no_reask_by_default(trial):
    observation = new_initial_state(trial).observation(Role.BUYER)
    with StubServer(SERVED, reply=GarbageFirst()) as server:
        agent = LLMAgent(ADAPTERS["buyer-grpo"], OpenAIServer(server.url), Sampling())
        assert agent.reask == 0
        move = asyncio.run(agent.act(observation))
    assert move.action is Action.INVALID
    assert move.raw == GARBAGE
    assert len(server.requests) == 1
    (record,) = agent.records
    assert record["attempts"] == 1
    assert record["earlier_replies"] == []
    assert record["raw"] == GARBAGE
    assert record["error"] == parse_reply(GARBAGE).error

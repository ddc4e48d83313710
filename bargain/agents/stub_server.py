"""A minimal OpenAI-compatible chat server for tests and pipeline benchmarks (standard library only).

It answers POST /v1/chat/completions after a delay (fixed, or drawn per request) with a canned
valid reply (or a reply function of the request), lists models on GET /v1/models, accepts
runtime LoRA loads and unloads on POST /v1/load_lora_adapter and /v1/unload_lora_adapter (recording
them), records every request body,
and can be told to fail the first N requests with an HTTP status (to exercise retries). Each request
is served on its own thread, so concurrent requests overlap as they would on vLLM.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bargain.agents.backends.canned import canned_reply


def serve_in_thread(httpd: ThreadingHTTPServer) -> None:
    """Serve `httpd` from a daemon thread. A shutdown waits for the serving loop's next look (every 0.5 s by
    default): a twentieth of that keeps a stopped or killed server from holding up its caller."""
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.025}, daemon=True).start()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default backlog of 5 drops connections under a burst of clients


class StubServer:
    """Start with `with StubServer(...) as server:`; `server.url` is the base URL (…/v1)."""

    def __init__(
        self,
        models: list[str],
        delay_s: float | Callable[[], float] = 0.0,
        reply: Callable[[dict], str] | None = None,
        fail_first: int = 0,
        fail_status: int = 503,
        reasoning_only: bool = False,
        load_delay_s: float = 0.0,
    ):
        self.models, self.delay_s, self.reply = (
            list(models),
            delay_s,
            reply or (lambda body: canned_reply(body["messages"])),
        )
        self.fail_first, self.fail_status, self.reasoning_only = fail_first, fail_status, reasoning_only
        self.requests: list[dict] = []
        self.authorizations: list[str | None] = []  # the Authorization header of each chat request
        self.adapter_loads: list[dict] = []  # bodies of POST /v1/load_lora_adapter
        self.adapter_unloads: list[str | None] = []  # names asked of POST /v1/unload_lora_adapter (served or not)
        self.load_delay_s, self.loading = load_delay_s, False  # a load takes time, as in vLLM
        self.dead = False  # after kill()
        self.connections: set[socket.socket] = set()
        self.arrivals: list[tuple[int, bool]] = []  # per request: adapter loads completed, and one under way
        self.lock = threading.Lock()
        self.in_flight = self.peak_in_flight = 0
        self.httpd = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> StubServer:
        serve_in_thread(self.httpd)
        return self

    def __exit__(self, *exc) -> None:
        if not self.dead:
            self.httpd.shutdown()
            self.httpd.server_close()

    def kill(self) -> None:
        """Die as a crashed server does: no new connection is accepted, the open ones are cut, requests in
        progress get no answer."""
        self.dead = True
        self.httpd.shutdown()
        self.httpd.server_close()
        with self.lock:
            for connection in list(self.connections):
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args) -> None:  # quiet
                pass

            def setup(self) -> None:
                super().setup()
                with server.lock:
                    server.connections.add(self.connection)

            def finish(self) -> None:
                with server.lock:
                    server.connections.discard(self.connection)
                try:
                    super().finish()
                except OSError:  # a connection cut by kill()
                    pass

            def _send(self, status: int, payload: dict) -> None:
                if server.dead:  # a killed server answers nothing
                    self.close_connection = True
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in server.models]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                path = self.path.rstrip("/")
                if path.endswith("/unload_lora_adapter"):
                    self._send(*server._unload(body))
                elif path.endswith("/load_lora_adapter"):
                    self._send(*server._load(body))
                else:
                    self._send(*server._chat(body, self.headers.get("Authorization")))

        return Handler

    def _unload(self, body: dict) -> tuple[int, dict]:
        """vLLM's runtime LoRA unloading: a 4xx for a name not served."""
        with self.lock:
            self.adapter_unloads.append(body.get("lora_name"))
            served = body.get("lora_name") in self.models
            if served:
                self.models.remove(body["lora_name"])
        if not served:
            return 404, {"error": {"message": f"the lora adapter {body.get('lora_name')!r} cannot be found"}}
        return 200, {"status": "ok"}

    def _load(self, body: dict) -> tuple[int, dict]:
        """vLLM's runtime LoRA loading, taking `load_delay_s` (`loading` meanwhile)."""
        with self.lock:
            self.loading = True
        time.sleep(self.load_delay_s)
        with self.lock:
            self.adapter_loads.append(body)
            if body.get("lora_name") not in self.models:
                self.models.append(body["lora_name"])
            self.loading = False
        return 200, {"status": "ok"}

    def _chat(self, body: dict, authorization: str | None) -> tuple[int, dict]:
        """A chat completion after the delay, recorded; a failure for the first `fail_first` requests."""
        with self.lock:
            self.requests.append(body)
            self.authorizations.append(authorization)
            self.arrivals.append((len(self.adapter_loads), self.loading))
            failing = len(self.requests) <= self.fail_first
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            time.sleep(self.delay_s() if callable(self.delay_s) else self.delay_s)
            if failing:
                return self.fail_status, {"error": {"message": "temporarily unavailable"}}
            if body.get("model") not in self.models:
                return 404, {"error": {"message": f"model {body.get('model')!r} does not exist"}}
            return 200, self._completion(body)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _completion(self, body: dict) -> dict:
        text = self.reply(body)
        message = {"role": "assistant", "content": "" if self.reasoning_only else text}
        if self.reasoning_only:
            message["reasoning_content"] = text
        prompt_tokens = sum(len(m["content"].split()) for m in body["messages"])
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(text.split()),
                "total_tokens": prompt_tokens + len(text.split()),
            },
        }

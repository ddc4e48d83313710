"""Pipeline efficiency: how close an evaluation comes to keeping a model server saturated.

    python -m benchmarks.pipeline [--delay 0.15] [--waves 120]

A stub OpenAI-compatible server (`bargain.agents.stub_server`, in its own process) answers every
request after a fixed delay with a canned valid reply. An evaluation of the paper-rl-test grid
(LLM agents on both sides, arm:buyer-grpo against arm:base) runs against it with C requests
allowed in flight and twice as many games, so that a request slot never waits for a game. With
a fixed delay d the ideal is C / d requests per second; the figure is the share of it reached,
over the whole run (start and end included). Goal: at least 90% at C = 32 and C = 64.
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time

from bargain.engine import scenarios
from bargain.agents.agent import Side, agent_factory
from bargain.agents.arms import ADAPTERS, BASE_MODEL
from bargain.agents.backends import PRESETS, Backends
from bargain.agents.backends.openai_server import OpenAIServer
from bargain.runs import RunSetup, run

GOAL = 0.90
REQUESTS_PER_GAME = 8  # canned offers never cross: four rounds, two requests each


def _serve(delay: float, urls) -> None:
    from bargain.agents.stub_server import StubServer

    server = StubServer([BASE_MODEL, *ADAPTERS], delay_s=delay)
    urls.put(server.url)
    server.httpd.serve_forever()


def measure(url: str, in_flight: int, delay: float, waves: int) -> tuple[float, float]:
    """(requests per second, share of the ideal) for one setting."""
    games = in_flight * waves // REQUESTS_PER_GAME
    grid = scenarios.grid("paper-rl-test")
    trials = scenarios.make_trials(grid, scenarios.bundled())[:games]
    backends = Backends(OpenAIServer(url, max_in_flight=in_flight))
    buyer_side, seller_side = Side(PRESETS["trained"]), Side(PRESETS["frozen-opponent"])
    setup = RunSetup(grid=grid, seed=42, buyer="arm:buyer-grpo", seller="arm:base", scenarios="bundled",
                     buyer_side=buyer_side, seller_side=seller_side)
    buyer = agent_factory(setup.buyer, backends, buyer_side)
    seller = agent_factory(setup.seller, backends, seller_side)
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        run(setup, trials, lambda t: (buyer(t.trial_id), seller(t.trial_id)), out,
            concurrency=2 * in_flight, progress=False)
        elapsed = time.perf_counter() - start
    rate = len(trials) * REQUESTS_PER_GAME / elapsed
    return rate, rate / (in_flight / delay)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pipeline", description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.15, help="seconds the server takes per request")
    parser.add_argument("--waves", type=int, default=120, help="how many times each request slot is used")
    parser.add_argument("--in-flight", default="32,64", help="comma-separated numbers of requests in flight")
    args = parser.parse_args()
    urls = multiprocessing.get_context("spawn").Queue()
    server = multiprocessing.get_context("spawn").Process(target=_serve, args=(args.delay, urls), daemon=True)
    server.start()
    url = urls.get(timeout=60)
    try:
        for in_flight in (int(c) for c in args.in_flight.split(",")):
            rate, share = measure(url, in_flight, args.delay, args.waves)
            verdict = "ok" if share >= GOAL else "below goal"
            print(f"{in_flight:3d} in flight, {args.delay * 1000:.0f} ms per request: {rate:7.1f} requests/s "
                  f"= {share:.1%} of the ideal {in_flight / args.delay:.0f} ({verdict})")
    finally:
        server.terminate()


if __name__ == "__main__":
    main()

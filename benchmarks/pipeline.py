"""Pipeline efficiency: how close an evaluation comes to keeping its model servers saturated.

    python -m benchmarks.pipeline [--delay 0.15] [--waves 120] [--in-flight 32,64]
    python -m benchmarks.pipeline --replicas 4 [--in-flight 16] [--delay 0.2] [--waves 60]

A stub OpenAI-compatible server (`bargain.agents.stub_server`, in its own process) answers every
request after a fixed delay with a canned valid reply. An evaluation of the paper-rl-test grid
(LLM agents on both sides, arm:buyer-grpo against arm:base) runs against it with C requests
allowed in flight and twice as many games, so that a request slot never waits for a game. With
a fixed delay d the ideal is C / d requests per second; the figure is the share of it reached,
over the whole run (start and end included). Goal: at least 90% at C = 32 and C = 64.

With `--replicas N`, N such servers (each its own process, C requests in flight to each, as to
N GPU servers of C batch slots) are given as one comma-separated `--base-url`; the ideal is
N C / d. Then the same run again, with one server killed (SIGKILL, its connections cut) when half
of the ideal time has passed: the run must finish every game once, and the figure is the time
lost against the ideal of N servers for the first half and N - 1 for the rest.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import threading
import time
from pathlib import Path

from bargain.engine import scenarios
from bargain.agents.agent import Side, agent_factory
from bargain.agents.arms import ADAPTERS, BASE_MODEL
from bargain.agents.backends import PRESETS, Backends
from bargain.agents.backends.build import build_backend
from bargain.runs import RunSetup, run

GOAL = 0.90
REQUESTS_PER_GAME = 8  # canned offers never cross: four rounds, two requests each


def _serve(delay: float, urls) -> None:
    from bargain.agents.stub_server import StubServer

    server = StubServer([BASE_MODEL, *ADAPTERS], delay_s=delay)
    urls.put(server.url)
    server.httpd.serve_forever()


def start_servers(count: int, delay: float) -> tuple[list[multiprocessing.Process], list[str]]:
    """`count` stub servers, each in its own process; their processes and URLs."""
    context = multiprocessing.get_context("spawn")
    urls = context.Queue()
    servers = [context.Process(target=_serve, args=(delay, urls), daemon=True) for _ in range(count)]
    for server in servers:
        server.start()
    return servers, [urls.get(timeout=60) for _ in servers]


def measure(urls: list[str], in_flight: int, waves: int, kill: tuple[multiprocessing.Process, float] | None = None
            ) -> dict:
    """One run over `urls` (C = `in_flight` requests at once to each): requests per second, seconds, games played
    and games recorded twice. `kill` = (a server process, seconds after the start to kill it)."""
    games = in_flight * len(urls) * waves // REQUESTS_PER_GAME
    grid = scenarios.grid("paper-rl-test")
    trials = scenarios.make_trials(grid, scenarios.bundled())[:games]
    backends = Backends(build_backend("vllm", base_url=",".join(urls), max_in_flight=in_flight))
    buyer_side, seller_side = Side(PRESETS["trained"]), Side(PRESETS["frozen-opponent"])
    setup = RunSetup(grid=grid, seed=42, buyer="arm:buyer-grpo", seller="arm:base", scenarios="bundled",
                     buyer_side=buyer_side, seller_side=seller_side)
    buyer = agent_factory(setup.buyer, backends, buyer_side)
    seller = agent_factory(setup.seller, backends, seller_side)
    with tempfile.TemporaryDirectory() as out:
        if kill is not None:
            threading.Timer(kill[1], kill[0].kill).start()
        start = time.perf_counter()
        frame = run(setup, trials, lambda t: (buyer(t.trial_id), seller(t.trial_id)), out,
                    concurrency=2 * in_flight * len(urls), progress=False)
        elapsed = time.perf_counter() - start
        ids = [json.loads(line)["trial"]["trial_id"] for line in (Path(out) / "games.jsonl").open()]
    return {"rate": len(trials) * REQUESTS_PER_GAME / elapsed, "seconds": elapsed, "games": len(trials),
            "finished": len(frame), "twice": len(ids) - len(set(ids))}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pipeline", description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.15, help="seconds the server takes per request")
    parser.add_argument("--waves", type=int, default=120, help="how many times each request slot is used")
    parser.add_argument("--in-flight", default="32,64", help="comma-separated numbers of requests in flight (per server)")
    parser.add_argument("--replicas", type=int, default=1, help="servers behind one comma-separated --base-url")
    args = parser.parse_args()
    processes, urls = start_servers(args.replicas, args.delay)
    try:
        for in_flight in (int(c) for c in args.in_flight.split(",")):
            ideal = args.replicas * in_flight / args.delay
            f = measure(urls, in_flight, args.waves)
            share = f["rate"] / ideal
            print(f"{args.replicas} server(s) x {in_flight} in flight, {args.delay * 1000:.0f} ms per request: "
                  f"{f['rate']:7.1f} requests/s = {share:.1%} of the ideal {ideal:.0f} "
                  f"({'ok' if share >= GOAL else 'below goal'})")
            if args.replicas > 1:
                half = f["games"] * REQUESTS_PER_GAME / ideal / 2
                after = ideal * (args.replicas - 1) / args.replicas
                expected = half + (f["games"] * REQUESTS_PER_GAME - half * ideal) / after
                k = measure(urls, in_flight, args.waves, kill=(processes[0], half))
                print(f"  one of {args.replicas} killed after {half:.1f} s: {k['finished']} of {k['games']} games "
                      f"finished, {k['twice']} recorded twice, {k['seconds']:.1f} s against an ideal "
                      f"{expected:.1f} s with one server fewer from then on ({k['seconds'] / expected - 1:+.1%})")
                (processes[0],), (urls[0],) = start_servers(1, args.delay)  # a live one for the next setting
    finally:
        for process in processes:
            process.kill()


if __name__ == "__main__":
    main()

"""Pipeline efficiency: how close an evaluation comes to keeping its model servers saturated.

    python -m benchmarks.pipeline [--latency lognormal] [--mean 0.2] [--cv 0.5] [--in-flight 32,64] [--waves 120]
    python -m benchmarks.pipeline --latency fixed --deal-rate 0        # the easy case: fixed latency, four rounds
    python -m benchmarks.pipeline --replicas 4 --in-flight 16          # four servers, then one of them killed

A stub OpenAI-compatible server (`bargain.agents.stub_server`, in its own process, so that its
work does not share the client's interpreter) answers every request after a latency drawn from a
distribution: `fixed`, `uniform` or `lognormal`, of a given mean and coefficient of variation.
Its replies are valid moves; in each round the buyer's offer meets the seller's with probability
`--deal-rate` (decided by the game and round, the same in every run), so games end in any round,
as real ones do. An evaluation of paper-rl-test (LLM agents on both sides, arm:buyer-grpo against
arm:base, the code `python -m bargain evaluate` runs, every record written) plays against it with
C requests allowed in flight and twice as many games. The ideal is C / mean latency requests per
second; the figure is the share reached over the whole run, start and end included. Goal: at
least 90% with log-normal latency (mean 0.2 s, CV 0.5) at C = 32 and C = 64.

With `--replicas N`, N such servers (C requests in flight to each, as to N GPU servers of C batch
slots) are given as one comma-separated `--base-url`; the ideal is N C / mean. Then the same run
again, with one server killed (SIGKILL, its connections cut) when half of the ideal time has
passed: every game must finish once, and the figure is the time lost against the ideal of N
servers for the first half and N - 1 for the rest.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing
import random
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from bargain.agents.agent import Side
from bargain.agents.arms import ADAPTERS, BASE_MODEL
from bargain.agents.backends import PRESETS, Backends
from bargain.agents.backends.build import build_backend
from bargain.agents.backends.canned import REPLIES, SELLER_PRICE, reply_text
from bargain.agents.factory import agent_factory
from bargain.engine import scenarios
from bargain.runs.batch import RunSetup, run

GOAL = 0.90
REQUESTS_PER_ROUND = 2  # simultaneous rounds: both sides ask at once


@dataclass(frozen=True)
class Latency:
    """A server's time per request: `kind` fixed, uniform or lognormal, with this mean and coefficient of
    variation (the uniform spans mean +- cv * mean * sqrt(3))."""

    kind: str
    mean: float
    cv: float

    def sampler(self, seed: int):
        rng = random.Random(seed)
        if self.kind == "fixed":
            return lambda: self.mean
        if self.kind == "uniform":
            half = self.cv * self.mean * math.sqrt(3)
            return lambda: rng.uniform(max(0.0, self.mean - half), self.mean + half)
        if self.kind == "lognormal":
            sigma = math.sqrt(math.log(1 + self.cv**2))
            return lambda: rng.lognormvariate(math.log(self.mean) - sigma**2 / 2, sigma)
        raise ValueError(f"unknown latency {self.kind!r}: fixed, uniform or lognormal")

    def __str__(self) -> str:
        spread = "" if self.kind == "fixed" else f", CV {self.cv:g}"
        return f"{self.kind} latency (mean {self.mean * 1000:.0f} ms{spread})"


def reply(deal_rate: float, body: dict) -> str:
    """The stub's reply: the canned offers, except that in a round picked with probability `deal_rate` (by the
    game's first prompt and the round, so every run picks the same) the buyer offers the seller's price: a deal."""
    messages = body["messages"]
    buyer = messages[0]["content"].startswith("You are the BUYER")
    round_key = f"{messages[0]['content']}|{len(messages)}".encode()
    draw = int.from_bytes(hashlib.blake2b(round_key, digest_size=8).digest(), "big") / 2**64
    return reply_text(SELLER_PRICE) if buyer and draw < deal_rate else REPLIES[buyer]


def _serve(latency: Latency, deal_rate: float, seed: int, urls) -> None:
    from functools import partial

    from bargain.agents.stub_server import StubServer

    server = StubServer([BASE_MODEL, *ADAPTERS], delay_s=latency.sampler(seed), reply=partial(reply, deal_rate))
    urls.put(server.url)
    server.httpd.serve_forever()


def start_servers(count: int, latency: Latency, deal_rate: float) -> tuple[list[multiprocessing.Process], list[str]]:
    """`count` stub servers, each in its own process; their processes and URLs."""
    context = multiprocessing.get_context("spawn")
    urls = context.Queue()
    servers = [context.Process(target=_serve, args=(latency, deal_rate, i, urls), daemon=True) for i in range(count)]
    for server in servers:
        server.start()
    return servers, [urls.get(timeout=60) for _ in servers]


def measure(
    urls: list[str], in_flight: int, games: int, kill: tuple[multiprocessing.Process, float] | None = None
) -> dict:
    """One run of `games` games over `urls` (C = `in_flight` requests at once to each): requests per second,
    seconds, games, finished games, games recorded twice, mean rounds. `kill` = (a server, seconds after the
    start to kill it)."""
    grid = scenarios.grid("paper-rl-test")
    trials = scenarios.make_trials(grid, scenarios.bundled())[:games]
    backends = Backends(build_backend("vllm", base_url=",".join(urls), max_in_flight=in_flight))
    buyer_side, seller_side = Side(PRESETS["trained"]), Side(PRESETS["frozen-opponent"])
    setup = RunSetup(
        grid=grid,
        seed=42,
        buyer="arm:buyer-grpo",
        seller="arm:base",
        scenarios="bundled",
        buyer_side=buyer_side,
        seller_side=seller_side,
    )
    buyer = agent_factory(setup.buyer, backends, buyer_side)
    seller = agent_factory(setup.seller, backends, seller_side)
    with tempfile.TemporaryDirectory() as out:
        if kill is not None:
            threading.Timer(kill[1], kill[0].kill).start()
        start = time.perf_counter()
        frame = run(
            setup,
            trials,
            lambda t: (buyer(t.trial_id), seller(t.trial_id)),
            out,
            concurrency=2 * in_flight * len(urls),
            progress=False,
        )
        elapsed = time.perf_counter() - start
        lines = [orjson.loads(line) for line in (Path(out) / "games.jsonl").open("rb")]
    requests = sum(len(line["records"]) for line in lines)
    ids = [line["trial_id"] for line in lines]
    return {
        "rate": requests / elapsed,
        "requests": requests,
        "seconds": elapsed,
        "games": len(trials),
        "finished": len(frame),
        "twice": len(ids) - len(set(ids)),
        "rounds": requests / REQUESTS_PER_ROUND / max(1, len(lines)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pipeline", description=__doc__.splitlines()[0])
    parser.add_argument("--latency", choices=("fixed", "uniform", "lognormal"), default="lognormal")
    parser.add_argument("--mean", type=float, default=0.2, help="mean seconds the server takes per request")
    parser.add_argument("--cv", type=float, default=0.5, help="coefficient of variation of the latency")
    parser.add_argument(
        "--deal-rate",
        type=float,
        default=0.35,
        help="chance that a round ends in a deal (0: every game runs its four rounds)",
    )
    parser.add_argument("--waves", type=int, default=120, help="about how many times each request slot is used")
    parser.add_argument(
        "--in-flight", default="32,64", help="comma-separated numbers of requests in flight (per server)"
    )
    parser.add_argument("--replicas", type=int, default=1, help="servers behind one comma-separated --base-url")
    args = parser.parse_args()
    latency = Latency(args.latency, args.mean, args.cv)
    latency.sampler(0)  # an unknown kind fails here, before any process starts
    # mean rounds of a four-round game whose rounds each end in a deal with probability p
    p = args.deal_rate
    rounds = sum((1 - p) ** k for k in range(4))
    processes, urls = start_servers(args.replicas, latency, p)
    print(f"{latency}, a deal in a round with probability {p:g} (about {rounds:.1f} rounds a game)")
    try:
        for in_flight in (int(c) for c in args.in_flight.split(",")):
            ideal = args.replicas * in_flight / args.mean
            games = max(1, round(args.replicas * in_flight * args.waves / (REQUESTS_PER_ROUND * rounds)))
            f = measure(urls, in_flight, games)
            share = f["rate"] / ideal
            print(
                f"{args.replicas} server(s) x {in_flight} in flight: {f['games']} games ({f['rounds']:.2f} rounds on "
                f"average), {f['rate']:7.1f} requests/s = {share:.1%} of the ideal {ideal:.0f} "
                f"({'ok' if share >= GOAL else 'below goal'})"
            )
            if args.replicas > 1:
                half = f["requests"] / ideal / 2
                after = ideal * (args.replicas - 1) / args.replicas
                expected = half + (f["requests"] - half * ideal) / after
                k = measure(urls, in_flight, games, kill=(processes[0], half))
                print(
                    f"  one of {args.replicas} killed after {half:.1f} s: {k['finished']} of {k['games']} games "
                    f"finished, {k['twice']} recorded twice, {k['seconds']:.1f} s against an ideal "
                    f"{expected:.1f} s with one server fewer from then on ({k['seconds'] / expected - 1:+.1%})"
                )
                (processes[0],), (urls[0],) = start_servers(1, latency, p)  # a live one for the next setting
    finally:
        for process in processes:
            process.kill()


if __name__ == "__main__":
    main()

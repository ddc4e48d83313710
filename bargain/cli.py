"""`python -m bargain ...`: simulate grids, tabulate metrics, print prompts, parse replies.

Every subcommand reports a bad argument as one line on standard error and exit status 2,
never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from bargain import metrics, scenarios
from bargain.agents import AgentSpecError, agent_factory
from bargain.episodes import play_many
from bargain.game import GameError, new_initial_state
from bargain.prompts import PromptVersion, system_prompt
from bargain.replies import Parsing, parse_reply
from bargain.runs import write_run
from bargain.trial import Condition, Mode, Role, Trial, TrialError


def _conditions(text: str) -> tuple[Condition, ...]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    if names == ["all"]:
        return tuple(Condition)
    try:
        return tuple(Condition(n) for n in names)
    except ValueError:
        raise argparse.ArgumentTypeError(f"conditions are a comma-separated list of {', '.join(Condition)} (or all)") from None


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _price(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand (also the source of `--help`)."""
    parser = argparse.ArgumentParser(prog="python -m bargain", description="Bargaining games between language models, tactics and people.")
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="play a grid of trials between two agents and write the results")
    sim.add_argument("--grid", choices=sorted(scenarios.GRIDS), help="a named grid; the flags below override its fields")
    sim.add_argument("--tier", help="price tier (low, medium, high, very_high); default low")
    sim.add_argument("--scenarios-slice", help="scenarios START:STOP of the tier, e.g. 1508:1516 (default 0:10)")
    sim.add_argument("--split", choices=sorted(scenarios.SPLITS), help="one of the paper's splits instead of --tier/--scenarios-slice")
    sim.add_argument("--conditions", type=_conditions, help="comma-separated conditions or 'all' (default all four)")
    sim.add_argument("--trials", type=_positive, help="trials per (scenario, condition) cell (default 8)")
    sim.add_argument("--rounds", type=_positive, help="maximum rounds per game (default 6)")
    sim.add_argument("--mode", choices=[m.value for m in Mode], help="simultaneous (default) or sequential")
    sim.add_argument("--first-actor", choices=[r.value for r in Role], help="who moves first in sequential mode (default buyer)")
    sim.add_argument("--buyer", required=True, help="the buyer agent, e.g. tactic:boulware")
    sim.add_argument("--seller", required=True, help="the seller agent, e.g. tactic:linear")
    sim.add_argument("--seed", type=int, default=42, help="seed of the reservation prices (42 reproduces the paper)")
    sim.add_argument("--scenarios", help="scenario source: a local file, or hub[:REPO[@REV]] (default: the bundled copy)")
    sim.add_argument("--sanity-check", action="store_true", help="apply the training-time offer sanity check (x5)")
    sim.add_argument("--prompt-version", choices=[v.value for v in PromptVersion], help="prompt wording for model agents (default paper-eval for paper grids, else train)")
    sim.add_argument("--concurrency", type=_positive, default=256, help="games in flight at once (default 256)")
    sim.add_argument("--out", required=True, help="output directory")
    sim.add_argument("--quiet", action="store_true", help="no progress bar")

    met = sub.add_parser("metrics", help="per-cell table of a trials file (ours or the paper's layout)")
    met.add_argument("file", help="trials file: .csv, .parquet or .pkl")
    met.add_argument("--by", default="transparency", help="comma-separated columns that define a cell (default transparency)")
    met.add_argument("--json", action="store_true", help="print a JSON list, one object per cell plus the pooled ALL")

    pro = sub.add_parser("prompt", help="print exactly the system prompt an agent gets")
    pro.add_argument("--scenario", required=True, help="scenario reference TIER:INDEX, e.g. low:0")
    pro.add_argument("--role", required=True, choices=[r.value for r in Role])
    pro.add_argument("--condition", required=True, choices=[c.value for c in Condition])
    pro.add_argument("--buyer-price", type=_price, help="v_B (default: drawn from the scenario with --seed)")
    pro.add_argument("--seller-price", type=_price, help="v_S (default: drawn from the scenario with --seed)")
    pro.add_argument("--seed", type=int, default=42, help="seed for prices not given")
    pro.add_argument("--mode", choices=[m.value for m in Mode], default=Mode.SIMULTANEOUS.value)
    pro.add_argument("--version", choices=[v.value for v in PromptVersion], default=PromptVersion.TRAIN.value)
    pro.add_argument("--scenarios", help="scenario source (default: the bundled copy)")

    par = sub.add_parser("parse", help="parse one model reply read from standard input")
    par.add_argument("--lenient", action="store_true", help="accept currency strings and any-case actions")
    return parser


def cmd_simulate(args: argparse.Namespace) -> int:
    """Play a grid and write DIR/trials.{parquet,csv}, games.jsonl, summary.md, config.json."""
    base = scenarios.grid(args.grid) if args.grid else scenarios.GridSpec()
    tier, start, stop = base.tier, base.start, base.stop
    if args.split:
        tier, start, stop = scenarios.SPLITS[args.split]
    if args.tier:
        tier = args.tier
    if args.scenarios_slice:
        start, stop = scenarios.parse_slice(args.scenarios_slice)
    spec = scenarios.GridSpec(
        tier=tier, start=start, stop=stop,
        conditions=args.conditions or base.conditions,
        trials_per_cell=args.trials or base.trials_per_cell,
        max_rounds=args.rounds or base.max_rounds,
        mode=Mode(args.mode) if args.mode else base.mode,
        first_actor=Role(args.first_actor) if args.first_actor else base.first_actor,
        name=args.grid if args.grid and not any((args.split, args.tier, args.scenarios_slice, args.conditions,
                                                 args.trials, args.rounds, args.mode, args.first_actor)) else "custom",
    )
    source = scenarios.load(args.scenarios)
    trials = scenarios.make_trials(spec, source, args.seed)
    buyer, seller = agent_factory(args.buyer), agent_factory(args.seller)  # a bad spec fails before anything runs
    # The paper's grids were evaluated with the paper's wording, also when a flag changes a field.
    version = args.prompt_version or (PromptVersion.PAPER_EVAL if args.grid else PromptVersion.TRAIN)

    def agents_for(trial: Trial):
        # Per-game seeds derived from the run seed and the trial: reruns repeat every move.
        rng = random.Random(f"{args.seed}:{trial.trial_id}")
        return buyer(rng.getrandbits(64)), seller(rng.getrandbits(64))

    episodes = asyncio.run(play_many(trials, agents_for, (args.buyer, args.seller), args.concurrency,
                                     args.sanity_check, progress=not args.quiet, desc=spec.name))
    config = {
        "command": ["python", "-m", "bargain", *args.argv],
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "grid": spec.to_dict(),
        "seed": args.seed,
        "buyer": args.buyer,
        "seller": args.seller,
        "scenarios": source.source,
        "sanity_check": args.sanity_check,
        "prompt_version": str(version),
        "concurrency": args.concurrency,
        "n_trials": len(trials),
        "scenario_names": list(dict.fromkeys(t.scenario.product_name for t in trials)),
    }
    frame = write_run(args.out, episodes, config, {"seed": args.seed, "prompt_version": str(version)})
    print(f"{len(frame)} trials written to {args.out}")
    print((Path(args.out) / "summary.md").read_text(encoding="utf-8"))
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    """Print the per-cell table of a trials file."""
    table = metrics.cell_table(metrics.read_trials(args.file), [c.strip() for c in args.by.split(",") if c.strip()])
    if args.json:
        print(json.dumps(metrics.records(table), indent=2))
    else:
        print(metrics.summary_markdown(table, Path(args.file).name), end="")
    return 0


def cmd_prompt(args: argparse.Namespace) -> int:
    """Print the system prompt of one side of one game."""
    scenario = scenarios.load(args.scenarios).get(args.scenario)
    drawn = scenarios.draw_prices(random.Random(args.seed), scenario)
    trial = Trial(
        trial_id=1, scenario=scenario, condition=Condition(args.condition),
        buyer_price=args.buyer_price if args.buyer_price is not None else drawn[0],
        seller_price=args.seller_price if args.seller_price is not None else drawn[1],
        mode=Mode(args.mode),
    )
    sys.stdout.write(system_prompt(new_initial_state(trial).observation(Role(args.role)), PromptVersion(args.version)) + "\n")
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    """Parse a reply from standard input into thought, message, action and offer price."""
    move = parse_reply(sys.stdin.read(), Parsing.LENIENT if args.lenient else Parsing.STRICT)
    print(json.dumps({"thought": move.thought, "message": move.message, "action": move.action.value,
                      "offer_price": move.price}, ensure_ascii=False, indent=2))
    if move.error:
        print(f"INVALID: {move.error}", file=sys.stderr)
    return 0


COMMANDS = {"simulate": cmd_simulate, "metrics": cmd_metrics, "prompt": cmd_prompt, "parse": cmd_parse}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m bargain`."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    try:
        return COMMANDS[args.command](args)
    except (TrialError, GameError, AgentSpecError, metrics.MetricsError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

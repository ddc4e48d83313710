"""`python -m bargain ...`: play grids, serve the models, list arms, tabulate, print prompts, parse replies.

Every subcommand reports a bad argument or an unusable setting as one line on standard error
with exit status 2, never a traceback. Backend flags have environment variables
(BARGAIN_BACKEND, BARGAIN_BASE_URL, BARGAIN_MODEL, BARGAIN_ADAPTERS_DIR) so a Space or a
cluster job can set them once. pandas, SciPy, SQLAlchemy and asyncio load only inside the
commands that use them: `prompt`, `parse`, `claims` and `--help` start in a fraction of a second
(benchmarks/startup.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bargain.agents.arms import ADAPTERS, Arm, ArmError, catalogue, resolve
from bargain.agents.backends import PRESETS, Backend, BackendError, Backends
from bargain.engine import scenarios
from bargain.engine.game import GameError, new_initial_state
from bargain.engine.prompts import PromptVersion, system_prompt
from bargain.engine.replies import Parsing, parse_reply
from bargain.engine.trial import Condition, Mode, Role, Trial, TrialError
from bargain.flags import add_backend_flags, backend_from

if TYPE_CHECKING:  # the agents load only in the commands that play (a light command starts sooner)
    from bargain.agents.agent import Side

# Errors of modules that only some commands load (pandas, SQLAlchemy), reported like those above.
LOADED_LATER_ERRORS = (
    ("bargain.runs.batch", "RunError"),
    ("bargain.records.store", "StoreError"),
    ("bargain.analysis.metrics", "MetricsError"),
    ("bargain.study.export", "ExportError"),
    ("bargain.records.publish", "PublishError"),
    ("bargain.study.analyse.exported", "AnalysisError"),
    ("bargain.study.plan", "PlanError"),
    ("bargain.study.simulate", "SimulationError"),
)


def _conditions(text: str) -> tuple[Condition, ...]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    if names == ["all"]:
        return tuple(Condition)
    try:
        return tuple(Condition(n) for n in names)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"conditions are a comma-separated list of {', '.join(Condition)} (or all)"
        ) from None


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _shard(text: str) -> tuple[int, int]:
    index, sep, count = text.partition("/")
    try:
        shard = (int(index), int(count))
    except ValueError:
        shard = (0, 0)
    if not sep or not 1 <= shard[0] <= shard[1]:
        raise argparse.ArgumentTypeError("use I/N with 1 <= I <= N, e.g. 2/4")
    return shard


def _price(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _add_side_flags(parser: argparse.ArgumentParser, role: str) -> None:
    parser.add_argument(
        f"--{role}-preset",
        choices=sorted(PRESETS),
        default="trained",
        help=f"sampling preset of the {role} model (trained: T 0.7/top_p 0.8; frozen-opponent: T 0.1/top_p 0.5)",
    )
    parser.add_argument(f"--{role}-sampling", default="", help="overrides, e.g. temperature=0.5,max_tokens=512")
    parser.add_argument(
        f"--{role}-parsing",
        choices=[p.value for p in Parsing],
        default="strict",
        help="strict (the paper's, default) or lenient reply parsing",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand (also the source of `--help`)."""
    parser = argparse.ArgumentParser(
        prog="bargain", description="Bargaining games between language models, tactics and people."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    for name, text in (
        ("simulate", "play a grid of trials between two agents and write the results"),
        ("evaluate", "like simulate, plus figures and the paper's numbers beside ours"),
    ):
        sim = sub.add_parser(name, help=text, description=text)
        sim.add_argument(
            "--grid", choices=sorted(scenarios.GRIDS), help="a named grid; the flags below override its fields"
        )
        sim.add_argument("--tier", help="price tier (low, medium, high, very_high); default low")
        sim.add_argument("--scenarios-slice", help="scenarios START:STOP of the tier, e.g. 1508:1516 (default 0:10)")
        sim.add_argument(
            "--split",
            choices=sorted(scenarios.SPLITS),
            help="one of the paper's splits instead of --tier/--scenarios-slice",
        )
        sim.add_argument(
            "--conditions", type=_conditions, help="comma-separated conditions or 'all' (default all four)"
        )
        sim.add_argument("--trials", type=_positive, help="trials per (scenario, condition) cell (default 8)")
        sim.add_argument("--rounds", type=_positive, help="maximum rounds per game (default 6)")
        sim.add_argument("--mode", choices=[m.value for m in Mode], help="simultaneous (default) or sequential")
        sim.add_argument(
            "--first-actor", choices=[r.value for r in Role], help="who moves first in sequential mode (default buyer)"
        )
        sim.add_argument("--buyer", required=True, help="the buyer: tactic:NAME, arm:NAME or openai:MODEL@URL")
        sim.add_argument("--seller", required=True, help="the seller: tactic:NAME, arm:NAME or openai:MODEL@URL")
        sim.add_argument(
            "--seed", type=int, default=42, help="seed of the reservation prices (42 reproduces the paper)"
        )
        sim.add_argument(
            "--scenarios", help="scenario source: a local file, or hub[:REPO[@REV]] (default: the bundled copy)"
        )
        sim.add_argument("--sanity-check", action="store_true", help="apply the training-time offer sanity check (x5)")
        sim.add_argument(
            "--prompt-version",
            choices=[v.value for v in PromptVersion],
            help="prompt wording (default paper-eval with --grid, else train)",
        )
        sim.add_argument(
            "--reask",
            type=int,
            default=0,
            help="re-ask a model up to N times after an INVALID reply (default 0, as the paper)",
        )
        _add_side_flags(sim, "buyer")
        _add_side_flags(sim, "seller")
        sim.add_argument("--concurrency", type=_positive, default=256, help="games in flight at once (default 256)")
        sim.add_argument(
            "--shard",
            type=_shard,
            help="play only part I of N of the grid (e.g. 2/4: every 4th trial "
            "from the 2nd), one per machine; `python -m bargain merge` joins the parts",
        )
        sim.add_argument("--out", required=True, help="output directory; an interrupted run resumes there")
        sim.add_argument("--quiet", action="store_true", help="no progress bar")
        add_backend_flags(sim)

    arms = sub.add_parser("arms", help="list the arms, what they were trained for, and whether the backend serves them")
    add_backend_flags(arms)

    text = "start vLLM with the base model and the eight adapters (LoRA modules named after their arms)"
    srv = sub.add_parser("serve", help=text, description=f"{text}; needs requirements-gpu.txt")
    srv.add_argument(
        "--model",
        default=os.environ.get("BARGAIN_MODEL"),
        help="base model: Hub id or local path (env BARGAIN_MODEL; default Qwen/Qwen3-8B)",
    )
    srv.add_argument(
        "--adapters", default=",".join(ADAPTERS), help="comma-separated adapters to serve (default all eight)"
    )
    srv.add_argument(
        "--adapters-dir",
        default=os.environ.get("BARGAIN_ADAPTERS_DIR"),
        help="local directory with <arm>/adapter_config.json (env BARGAIN_ADAPTERS_DIR; default: download "
        "from the Hub)",
    )
    srv.add_argument("--adapter-revision", help="revision of the adapter repository to download (default: the latest)")
    srv.add_argument(
        "--host",
        default="127.0.0.1",
        help="address the server listens on (default %(default)s; 0.0.0.0 for every interface)",
    )
    srv.add_argument("--port", type=int, default=8000, help="port the server listens on (default %(default)s)")
    srv.add_argument(
        "--max-model-len", type=int, default=8192, help="context length (default 8192: a game is a few thousand tokens)"
    )
    srv.add_argument(
        "--gpu-memory-utilization", type=float, default=0.90, help="share of GPU memory for vLLM (default 0.90)"
    )
    srv.add_argument(
        "--tensor-parallel-size",
        type=int,
        default=1,
        help="GPUs the model is split across (default %(default)s: Qwen3-8B fits one)",
    )
    srv.add_argument(
        "--data-parallel-size",
        type=int,
        default=1,
        help="copies of the model behind one endpoint, vLLM balancing between them (one GPU each, times "
        "the tensor-parallel size)",
    )
    srv.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="independent servers, each on its own GPUs (from CUDA_VISIBLE_DEVICES, in order) and port "
        "(--port, --port + 1, ...); prints the comma-separated --base-url to pass on",
    )
    srv.add_argument(
        "--timeout",
        type=float,
        default=1800,
        help="seconds to wait for the server to answer before giving up (default %(default)s)",
    )
    srv.add_argument("--dry-run", action="store_true", help="print the vllm command and exit")

    met = sub.add_parser("metrics", help="per-cell table of a trials file (ours or the paper's layout)")
    met.add_argument("file", help="trials file: .csv, .parquet or .pkl")
    met.add_argument(
        "--by", default="transparency", help="comma-separated columns that define a cell (default transparency)"
    )
    met.add_argument("--json", action="store_true", help="print a JSON list, one object per cell plus the pooled ALL")

    pro = sub.add_parser("prompt", help="print exactly the system prompt an agent gets")
    pro.add_argument("--scenario", required=True, help="scenario reference TIER:INDEX, e.g. low:0")
    pro.add_argument("--role", required=True, choices=[r.value for r in Role], help="whose prompt")
    pro.add_argument(
        "--condition",
        required=True,
        choices=[c.value for c in Condition],
        help="information condition: who knows the other side's price",
    )
    pro.add_argument("--buyer-price", type=_price, help="v_B (default: drawn from the scenario with --seed)")
    pro.add_argument("--seller-price", type=_price, help="v_S (default: drawn from the scenario with --seed)")
    pro.add_argument("--seed", type=int, default=42, help="seed for prices not given")
    pro.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        default=Mode.SIMULTANEOUS.value,
        help="simultaneous (default) or sequential",
    )
    pro.add_argument(
        "--version",
        choices=[v.value for v in PromptVersion],
        default=PromptVersion.TRAIN.value,
        help="prompt wording: train (the adapters', default) or paper-eval",
    )
    pro.add_argument("--scenarios", help="scenario source (default: the bundled copy)")

    jud = sub.add_parser("judge", help="rate honesty and credulity with the paper's judge (non-full games)")
    jud.add_argument("run_dir", nargs="?", help="a run directory from simulate or evaluate")
    jud.add_argument(
        "--db",
        help="judge the arena's finished games in this database instead (SQLite file path or "
        "SQLAlchemy URL, as `app.py --db`)",
    )
    jud.add_argument(
        "--judge",
        required=True,
        help="the judge: openai:MODEL@URL (key from OPENAI_API_KEY), or arm:base on the backend below",
    )
    jud.add_argument("--concurrency", type=_positive, default=32, help="judge requests in flight (default 32)")
    jud.add_argument("--temperature", type=float, default=0.0, help="judge temperature (default 0, as the paper)")
    jud.add_argument("--max-tokens", type=_positive, default=2048, help="longest judge reply")
    jud.add_argument("--quiet", action="store_true", help="no progress bar")
    add_backend_flags(jud)

    rep = sub.add_parser(
        "report", help="HTML report of runs (and arena games): outcomes, honesty, claims, paired differences"
    )
    rep.add_argument("run_dirs", nargs="*", help="run directories (judged or not)")
    rep.add_argument(
        "--db", help="add the arena's games from this database (SQLite file path or SQLAlchemy URL, as `app.py --db`)"
    )
    rep.add_argument("--out", required=True, help="report directory")
    rep.add_argument(
        "--claims-model",
        help="read the runs' messages with a model too (openai:MODEL@URL, or an arm on "
        "the backend below), each model claim kept only if the rule reading confirms it; the claim tables "
        "then give the rules' count and the model's additions per game",
    )
    add_backend_flags(rep, model_flag="--base-model")

    mer = sub.add_parser("merge", help="join the shards of one run (--shard I/N) into one run directory")
    mer.add_argument("run_dirs", nargs="+", help="the shards' run directories, 1/N to N/N")
    mer.add_argument("--out", required=True, help="run directory of the whole run")

    spc = sub.add_parser(
        "space-check",
        help="what a Hugging Face Space with this repository and these variables will do",
        description="Read the README header (the Space's configuration) and the environment (the "
        "Space's variables and secrets: set them in your shell to check a plan) and say, line by line, "
        "the hardware path, model, adapters, storage and secrets, and what is missing. Starts nothing.",
    )
    spc.add_argument("--readme", help="the README whose header configures the Space (default: this repository's)")
    spc.add_argument(
        "--hardware",
        help="the Space hardware, e.g. zero-a10g, l4x1, a10g-small, cpu-basic "
        "(default: the header's suggested_hardware)",
    )

    cla = sub.add_parser("claims", help="the price claims in one message read from standard input, as JSON")
    cla.add_argument("--role", required=True, choices=[r.value for r in Role], help="who wrote the message")
    cla.add_argument("--reservation", required=True, type=_price, help="the speaker's true reservation price")
    cla.add_argument(
        "--model",
        dest="claims_model",
        help="also ask a model (openai:MODEL@URL, key from OPENAI_API_KEY, or an arm on the "
        "backend below) to list the claims; each one it names is kept only if the rule reading confirms "
        "it, and the counts of both readers are printed",
    )
    add_backend_flags(cla, model_flag="--base-model")

    exp = sub.add_parser(
        "export",
        help="a study's data for analysis and payment: tables, codebook, bonus file",
        description="Write a study's participants, games, moves and surveys (long and wide; CSV and "
        "Parquet), a codebook of every column, and the payment files (payment/bonuses.csv in the bulk "
        "bonus format of Prolific, payment/payments.csv).",
    )
    exp.add_argument(
        "--db", required=True, help="the study's database (SQLite file path or SQLAlchemy URL, as `app.py --db`)"
    )
    exp.add_argument("--study", required=True, help="the study's name, as in its file")
    exp.add_argument(
        "--version", type=int, help="one version of the study (default: every version, told apart by a version column)"
    )
    exp.add_argument("--out", required=True, help="directory to write into")
    ids = exp.add_mutually_exclusive_group()
    ids.add_argument(
        "--hash-ids",
        dest="hashed",
        action="store_true",
        default=None,
        help="replace participant ids by salted pseudonyms (the default unless the study file turns "
        "hash_participant_ids_in_exports off)",
    )
    ids.add_argument(
        "--no-hash-ids", dest="hashed", action="store_false", help="keep the recruiting platform's ids in every file"
    )
    exp.add_argument(
        "--to-hub",
        metavar="ORG/NAME",
        help="also push the tables and codebook (never payment/) to this private Hugging Face dataset",
    )

    ana = sub.add_parser(
        "analyse",
        help="a study's results from its export: models, leaderboard, the paper beside, one report",
        description="Analyse a study's export (the folder `bargain export` writes, or the dashboard's zip): the "
        "primary sample (finished games of participants not excluded), every outcome's model (a mixed model for "
        "continuous outcomes, GEE for binary ones, a conditional logit in within designs) with contrasts of each "
        "arm with the reference, clustered by participant; a leaderboard of arms with cluster bootstrap intervals; "
        "the cells beside the paper's and your runs'. Writes report.html, report.md, analysis.json, tables/ and "
        "figures/. With --plan-only, writes the analysis plan from the study file alone.",
    )
    ana.add_argument("export", nargs="?", help="the export: a folder, or the zip archive of one")
    ana.add_argument("--out", required=True, help="directory to write the report (or the plan) into")
    ana.add_argument("--reference", help="the arm every other is compared with (default: the study file's first arm)")
    ana.add_argument(
        "--runs", nargs="+", default=[], metavar="RUN_DIR", help="simulate/evaluate run directories of the same arms"
    )
    ana.add_argument("--plan", help="the analysis plan (analysis_plan.json) to report deviations from")
    ana.add_argument("--plan-only", metavar="STUDY_YAML", help="write analysis_plan.json and .md from this study file")
    ana.add_argument("--bootstrap", type=_positive, default=2000, help="cluster bootstrap resamples (default 2000)")
    ana.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    ana.add_argument(
        "--all-participants",
        action="store_true",
        help="also analyse every participant, the excluded included (a sensitivity analysis, reported beside)",
    )
    ana.add_argument("--latex", action="store_true", help="also write each table as LaTeX (tables/NAME.tex)")

    text = "the database's schema: upgrade it to this program's revision, or say which revision it is at"
    dbs = sub.add_parser(
        "db",
        help=text,
        description=f"{text}. The app upgrades its database when it starts; these "
        "commands do it, or check, beforehand (a database versioned by hand before Alembic, schema "
        "version 1 to 4, is adopted in place).",
    )
    actions = dbs.add_subparsers(dest="action", required=True, help="what to do")
    for name, text in (
        (
            "upgrade",
            "create the schema, or upgrade it to this program's revision (once, however "
            "many processes ask at the same time)",
        ),
        ("current", "the schema revision the database is at, changing nothing"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "--db", required=True, help="the database (SQLite file path or SQLAlchemy URL, as `app.py --db`)"
        )

    text = "remake the claim checker's findings of finished games, recording the checker's version with them"
    res = sub.add_parser(
        "rescore",
        help=text,
        description=f"{text} (and the rescore itself, in the rescores table). "
        "By default only the games whose findings this version of the checker did not make: those "
        "of an older version, and those of a database adopted from before Alembic, which keeps the "
        "findings it had (a database from schema version 1 had none).",
    )
    res.add_argument(
        "--db", required=True, help="the arena's database (SQLite file path or SQLAlchemy URL, as `app.py --db`)"
    )
    res.add_argument(
        "--all", dest="every", action="store_true", help="every finished game, whichever checker made its findings"
    )

    _add_plan(sub)

    par = sub.add_parser("parse", help="parse one model reply read from standard input")
    par.add_argument("--lenient", action="store_true", help="accept currency strings and any-case actions")
    return parser


def _add_plan(sub: argparse._SubParsersAction) -> None:
    """`bargain plan`'s flags (bargain.study.plan does the work)."""
    from bargain.study.assumptions import described

    text = "the power of a study's design to find given effects, by simulating the study"
    pla = sub.add_parser(
        "plan",
        help=text,
        description=f"{text}: its cells, games per participant, assignment, distinct arms and quotas, at each "
        "number of participants; each simulated study fitted by cluster-robust least squares (utility) or logit "
        "(deal), about 50 times faster than the mixed model and GEE of the analysis, and each arm minus the "
        "reference tested per condition and averaged, Holm within each outcome, alpha 0.05. Prints the power of "
        "every contrast at every size with its Monte Carlo error, and the smallest size reaching 80% and 90%.",
    )
    pla.add_argument("study", help="the study file (STUDY.yaml; `example` for the bundled example)")
    source = pla.add_mutually_exclusive_group()
    source.add_argument(
        "--pilot",
        metavar="EXPORT_DIR",
        help="take the outcomes' levels and spreads from a pilot study's export (`bargain export`'s directory): "
        "the mixed model's variances and the GEE's correlation, on finished games of participants not excluded",
    )
    source.add_argument(
        "--assume",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help=f"an assumption about the outcomes, repeatable; the names and their defaults: {described()}",
    )
    pla.add_argument(
        "--effect",
        metavar="OUTCOME[:ARM]=VALUE",
        action="append",
        default=[],
        help="an effect to find, repeatable: utility=0.05 (every arm's mean normalised utility 0.05 above the "
        "reference arm's), deal=0.10 (its deal rate 10 points above), utility:b=0.08 (arm b's only); only the "
        "outcomes named are simulated",
    )
    pla.add_argument(
        "--participants",
        default="40:400:40",
        help="the numbers of participants to simulate: START:STOP:STEP, STOP included, or one number "
        "(default 40:400:40)",
    )
    pla.add_argument("--sims", type=_positive, default=400, help="simulated studies per size (default 400)")
    pla.add_argument("--seed", type=int, default=0, help="seed of the simulations (default 0)")
    pla.add_argument("--reference", metavar="ARM", help="the arm the others are compared with (default: the first)")
    pla.add_argument("--quiet", action="store_true", help="no progress bar")


def grid_from(args: argparse.Namespace) -> scenarios.GridSpec:
    """A named grid with any flag overrides, or a custom grid from the flags alone."""
    base = scenarios.grid(args.grid) if args.grid else scenarios.GridSpec()
    tier, start, stop = base.tier, base.start, base.stop
    if args.split:
        tier, start, stop = scenarios.SPLITS[args.split]
    if args.tier:
        tier = args.tier
    if args.scenarios_slice:
        start, stop = scenarios.parse_slice(args.scenarios_slice)
    changed = any(
        (
            args.split,
            args.tier,
            args.scenarios_slice,
            args.conditions,
            args.trials,
            args.rounds,
            args.mode,
            args.first_actor,
        )
    )
    return scenarios.GridSpec(
        tier=tier,
        start=start,
        stop=stop,
        conditions=args.conditions or base.conditions,
        trials_per_cell=args.trials or base.trials_per_cell,
        max_rounds=args.rounds or base.max_rounds,
        mode=Mode(args.mode) if args.mode else base.mode,
        first_actor=Role(args.first_actor) if args.first_actor else base.first_actor,
        name=args.grid if args.grid and not changed else "custom",
    )


def _side(args: argparse.Namespace, role: str, version: PromptVersion) -> Side:
    from bargain.agents.agent import Side

    try:
        sampling = PRESETS[getattr(args, f"{role}_preset")].with_overrides(getattr(args, f"{role}_sampling"))
    except ValueError as exc:
        raise ArmError(f"--{role}-sampling: {exc}") from None
    return Side(sampling, Parsing(getattr(args, f"{role}_parsing")), version, args.reask)


async def unreachable(servers: list) -> str | None:
    """Why one of these backends cannot be asked for anything (None when all answer).

    Model servers answer a quick probe (`check`; the hf backend in this process has none): a run
    against a server that is down stops at once with the reason, instead of spending each game's
    request retries before failing them all.
    """
    for server in servers:
        check = getattr(server, "check", None)
        problem = await check() if check is not None else None
        if problem:
            return problem
    return None


def cmd_play(args: argparse.Namespace, local: Backend | None = None) -> int:
    """simulate / evaluate: play a grid (resuming in --out) and write every output. `local` stands in for the
    backend the flags describe (benchmarks.agents plays through here with an instant one)."""
    import asyncio

    from bargain.agents.factory import arm_factory
    from bargain.runs.batch import RunSetup, run

    spec = grid_from(args)
    source = scenarios.load(args.scenarios)
    trials = scenarios.make_trials(spec, source, args.seed)
    if args.shard:
        from bargain.runs.batch import shard_of

        trials = shard_of(trials, *args.shard)
    # The paper's grids were evaluated with the paper's wording, also when a flag changes a field.
    version = PromptVersion(args.prompt_version or (PromptVersion.PAPER_EVAL if args.grid else PromptVersion.TRAIN))
    arms = {role: resolve(getattr(args, role)) for role in ("buyer", "seller")}  # bad specs fail before any loading
    adapters = sorted({a.name for a in arms.values() if a.kind == "adapter"})
    needs_local = any(a.kind in ("base", "adapter") for a in arms.values())
    backends = Backends(
        (local or backend_from(args, adapters)) if needs_local else None,
        remote=[a.base_url for a in arms.values() if a.kind == "openai"],
    )
    setup = RunSetup(
        grid=spec,
        seed=args.seed,
        buyer=args.buyer,
        seller=args.seller,
        scenarios=source.source,
        buyer_side=_side(args, "buyer", version),
        seller_side=_side(args, "seller", version),
        sanity_check=args.sanity_check,
    )
    makers = {role: arm_factory(arm, backends, setup.side(Role(role))[1]) for role, arm in arms.items()}
    asyncio.run(_refuse_unserved(backends, list(arms.values()), args.backend))

    def agents_for(trial: Trial):
        # Per-game seeds derived from the run seed and the trial: reruns repeat every scripted move.
        rng = random.Random(f"{args.seed}:{trial.trial_id}")
        return makers["buyer"](rng.getrandbits(64)), makers["seller"](rng.getrandbits(64))

    frame = run(
        setup,
        trials,
        agents_for,
        args.out,
        concurrency=args.concurrency,
        progress=not args.quiet,
        evaluate=args.command == "evaluate",
        extra_config={
            "command": ["python", "-m", "bargain", *args.argv],
            "backend": backends.local.describe() if backends.local else None,
            "grid": spec.to_dict(),
            "seed": args.seed,
            "buyer": args.buyer,
            "seller": args.seller,
            "prompt_version": version.value,
            "evaluate": args.command == "evaluate",
            **({"shard": list(args.shard)} if args.shard else {}),
        },
        close=backends.aclose,
    )
    print(f"{len(frame)} of {len(trials)} trials finished in {args.out}")
    print((Path(args.out) / "summary.md").read_text(encoding="utf-8"))
    return 0 if len(frame) == len(trials) else 1


async def _refuse_unserved(backends: Backends, arms: list[Arm], kind: str) -> None:
    """A BackendError before a run starts when a model server of `arms` does not answer, or the local backend (of
    `kind`) does not serve one of them; the backends' connections are closed either way."""
    try:
        models = [a for a in arms if a.kind != "tactic"]
        problem = await unreachable(list({id(b): b for b in map(backends.for_arm, models)}.values()))
        if problem:
            raise BackendError(problem)
        missing = [a.spec for a in models if a.kind != "openai" and not await backends.for_arm(a).available(a)]
    finally:
        await backends.aclose()
    if missing:
        raise BackendError(
            f"the {kind} backend does not serve {', '.join(missing)}; check "
            "`python -m bargain arms` with the same backend flags"
        )


def cmd_arms(args: argparse.Namespace) -> int:
    """List every arm with its training conditions and availability on the configured backend."""
    import asyncio

    backend = backend_from(args) if args.backend != "none" else None

    async def availability() -> list[str]:
        problem = await unreachable([backend])
        if problem:  # every model arm is "no": say why, once
            print(f"warning: {problem}", file=sys.stderr)
        marks = []
        for arm in catalogue():
            if arm.kind == "tactic":
                marks.append("yes")
            elif backend is None:
                marks.append("needs --backend")
            else:
                marks.append("yes" if not problem and await backend.available(arm) else "no")
        await Backends(backend).aclose()
        return marks

    rows = []
    for arm, mark in zip(catalogue(), asyncio.run(availability())):
        trained = (
            "any"
            if arm.kind != "adapter"
            else f"{'+'.join(r.value for r in arm.roles)} / {', '.join(c.value for c in arm.conditions)} / "
            "simultaneous, 4 rounds"
        )
        detail = (
            f"{arm.loss}, {arm.transform} transform, r={arm.lora_rank}, step {arm.checkpoint}"
            if arm.kind == "adapter"
            else arm.kind
        )
        rows.append((arm.spec, detail, trained, mark))
    widths = [max(len(r[i]) for r in rows + [("arm", "", "", "")]) for i in range(4)]
    header = ("arm", "kind", "trained for (role / conditions / rules)", "available")
    for row in [header, *rows]:
        print(
            "  ".join(cell.ljust(w) for cell, w in zip(row, [max(w, len(h)) for w, h in zip(widths, header)])).rstrip()
        )
    print("\nAlso: openai:MODEL@URL for any OpenAI-compatible API (key from OPENAI_API_KEY).")
    if backend is None:
        print(
            "Model arms need a backend: --backend vllm --base-url URL (see `serve`), or "
            "--backend hf --model ID_OR_PATH."
        )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Start vLLM (or print its command with --dry-run)."""
    from bargain.agents.serve import main_serve

    names = [n.strip() for n in args.adapters.split(",") if n.strip()]
    unknown = [n for n in names if n not in ADAPTERS]
    if unknown:
        raise ArmError(f"unknown adapters {', '.join(unknown)}; choose from {', '.join(ADAPTERS)}")
    return main_serve(
        args.model,
        names,
        args.adapters_dir,
        args.adapter_revision,
        args.host,
        args.port,
        args.max_model_len,
        args.gpu_memory_utilization,
        args.tensor_parallel_size,
        args.dry_run,
        args.timeout,
        args.data_parallel_size,
        args.replicas,
    )


def cmd_metrics(args: argparse.Namespace) -> int:
    """Print the per-cell table of a trials file."""
    from bargain.analysis import metrics

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
        trial_id=1,
        scenario=scenario,
        condition=Condition(args.condition),
        buyer_price=args.buyer_price if args.buyer_price is not None else drawn[0],
        seller_price=args.seller_price if args.seller_price is not None else drawn[1],
        mode=Mode(args.mode),
    )
    sys.stdout.write(
        system_prompt(new_initial_state(trial).observation(Role(args.role)), PromptVersion(args.version)) + "\n"
    )
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    """Parse a reply from standard input into thought, message, action and offer price."""
    move = parse_reply(sys.stdin.read(), Parsing.LENIENT if args.lenient else Parsing.STRICT)
    print(
        json.dumps(
            {"thought": move.thought, "message": move.message, "action": move.action.value, "offer_price": move.price},
            ensure_ascii=False,
            indent=2,
        )
    )
    if move.error:
        print(f"INVALID: {move.error}", file=sys.stderr)
    return 0


def _reader_backend(args: argparse.Namespace, spec: str):
    """The backend of a model that reads games or messages (the judge, the claim model): openai:MODEL@URL, or an
    arm on the backend the flags configure."""
    arm = resolve(spec)
    backends = Backends(
        backend_from(args, [arm.name] if arm.kind == "adapter" else []) if arm.kind in ("base", "adapter") else None,
        remote=[arm.base_url] if arm.kind == "openai" else [],
    )
    return backends.for_arm(arm), arm


def cmd_judge(args: argparse.Namespace) -> int:
    """Judge a run directory (or the arena's database) and report the token usage."""
    from bargain.records.database import database_url
    from bargain.runs.judging import judge_db, judge_run, judge_sampling

    if bool(args.run_dir) == bool(args.db):
        raise ArmError("give either a run directory or --db URL")
    backend, _ = _reader_backend(args, args.judge)
    sampling = judge_sampling(args.temperature, args.max_tokens)
    if args.db:
        count, usage = judge_db(
            database_url(args.db), args.judge, backend, sampling, args.concurrency, progress=not args.quiet
        )
        print(f"judged {count} arena games")
    else:
        frame, usage = judge_run(args.run_dir, args.judge, backend, sampling, args.concurrency, progress=not args.quiet)
        scored = (
            frame[["seller_honesty", "buyer_honesty", "buyer_credulity", "seller_credulity"]].notna().any(axis=1).sum()
        )
        missing = frame["judge_error"].notna().sum()
        print(
            f"{scored} trials scored, {missing} with a missing score; written to "
            f"{Path(args.run_dir) / 'trials_with_honesty.csv'}"
        )
    print(
        f"judge tokens this call: {usage['prompt_tokens']} prompt, {usage['completion_tokens']} completion, "
        f"{usage['calls']} calls"
    )
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    """Join shards into one run directory, as an unsharded run writes it."""
    from bargain.runs.batch import merge

    frame = merge(args.run_dirs, args.out)
    print(f"{len(frame)} trials from {len(args.run_dirs)} shards in {args.out}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Write the HTML report and its tables."""
    from bargain.records.database import database_url
    from bargain.runs.report import build

    if not args.run_dirs and not args.db:
        raise ArmError("give at least one run directory or --db URL")

    def read_with_model(messages: list[tuple[str, str]]) -> dict:
        from bargain.analysis.claims_model import read_all

        backend, arm = _reader_backend(args, args.claims_model)
        return read_all(messages, backend, backend.model_name(arm))

    db = database_url(args.db) if args.db else None
    print(f"report written to {build(args.run_dirs, args.out, db, read_with_model if args.claims_model else None)}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write a study's export, and push it to the Hub when asked."""
    from bargain.records.database import database_url, existing_store
    from bargain.records.publish import push_to_hub
    from bargain.study.export import PUBLISHED, export_study

    written = export_study(
        existing_store(database_url(args.db)), args.study, args.version, out_dir=args.out, hashed=args.hashed
    )
    print(f"{len(written)} files written to {args.out}")
    if args.to_hub:
        print(f"pushed to {push_to_hub(args.out, args.to_hub, PUBLISHED)} (private; payment/ stays here)")
    return 0


def cmd_analyse(args: argparse.Namespace) -> int:
    """Analyse a study's export (or write its analysis plan)."""
    from bargain.study.analyse.command import analyse

    print(
        analyse(
            args.export,
            Path(args.out),
            plan_only=args.plan_only,
            reference=args.reference,
            runs=args.runs,
            plan=args.plan,
            bootstrap=args.bootstrap,
            seed=args.seed,
            all_participants=args.all_participants,
            latex=args.latex,
        )
    )
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """Print the power of a study's design to find the effects given."""
    from bargain.study.plan import make_plan

    print(
        make_plan(
            args.study,
            pilot=args.pilot,
            assume=args.assume,
            effects=args.effect,
            participants=args.participants,
            sims=args.sims,
            seed=args.seed,
            reference=args.reference,
            progress=not args.quiet,
        )
    )
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    """Upgrade the database's schema, or say where it is."""
    from bargain.records.database import database_url, schema_state
    from bargain.records.store import Store

    url = database_url(args.db)
    if args.action == "current":
        print(schema_state(url))
        return 0
    before, now = Store(url).upgraded
    if before == now:
        print(f"schema revision {now}: already this program's")
    else:
        print(
            f"schema revision {now}: "
            + (f"upgraded from {before}" if before else "created, or adopted from the schema versioned by hand")
        )
    return 0


def cmd_rescore(args: argparse.Namespace) -> int:
    """Remake the claim findings of finished games and say how many."""
    from bargain.analysis.claims import CHECKER_VERSION
    from bargain.records.database import database_url, existing_store

    count = existing_store(database_url(args.db)).rescore(args.every)
    print(f"{count} finished games scored by claim checker version {CHECKER_VERSION}")
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    """Print the claims of one message (standard input) as JSON."""
    from bargain.analysis.claims import claims_json

    message = sys.stdin.read()
    if not args.claims_model:
        print(json.dumps(claims_json(message, args.role, args.reservation), indent=2))
        return 0
    from bargain.analysis.claims_model import read_all

    backend, arm = _reader_backend(args, args.claims_model)
    assisted = read_all([(message, args.role)], backend, backend.model_name(arm))[(message, args.role)]
    print(
        json.dumps(
            {
                "claims": claims_json(message, args.role, args.reservation, assisted.claims),
                "counts": assisted.counts(),
                "refused": assisted.model_refused,
            },
            indent=2,
        )
    )
    return 0


def cmd_space_check(args: argparse.Namespace) -> int:
    """Say what a Space with this configuration will do."""
    from bargain.space import main as space_check

    return space_check(args.readme, args.hardware)


COMMANDS = {
    "simulate": cmd_play,
    "evaluate": cmd_play,
    "arms": cmd_arms,
    "serve": cmd_serve,
    "metrics": cmd_metrics,
    "prompt": cmd_prompt,
    "parse": cmd_parse,
    "judge": cmd_judge,
    "report": cmd_report,
    "claims": cmd_claims,
    "export": cmd_export,
    "analyse": cmd_analyse,
    "plan": cmd_plan,
    "merge": cmd_merge,
    "space-check": cmd_space_check,
    "db": cmd_db,
    "rescore": cmd_rescore,
}


def reported(exc: Exception) -> bool:
    """Whether `main` reports `exc` as one line. An error of a module that loads later can only have
    been raised once that module was loaded, so it is looked up only then (and never loads it)."""
    known = [TrialError, GameError, ArmError, BackendError, OSError]
    known += [getattr(sys.modules[module], name) for module, name in LOADED_LATER_ERRORS if module in sys.modules]
    return isinstance(exc, tuple(known))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m bargain`."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    try:
        return COMMANDS[args.command](args)
    except Exception as exc:
        if not reported(exc):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2

"""Start the bargaining arena: `bargain-arena` (or `python app.py` in the repository) serves http://127.0.0.1:7860.

Every flag has an environment variable (for a Hugging Face Space): see `bargain-arena --help`.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

# Only what reading the flags needs is imported here: `python app.py --help` (and a mistyped flag) answers at
# once, and Gradio, the database layer and the study code load in `build`.
from bargain.agents.backends import PRESETS, BackendError  # noqa: E402
from bargain.arena import MOVE_DEADLINE_S  # noqa: E402
from bargain.flags import add_backend_flags, backend_from, number  # noqa: E402
from bargain.space import on_space as running_on_space  # noqa: E402

if TYPE_CHECKING:
    from bargain.agents.backends import Backends
    from bargain.arena.controller import Arena
    from bargain.records.publish import HubSync
    from bargain.records.store import Store


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        prog="bargain-arena",
        description="The bargaining arena: a person plays buyer or seller against a "
        "language model or a scripted tactic; every game is recorded. With --backend vllm and no --base-url, "
        "vLLM is started here.",
    )
    on_space = running_on_space()  # serve on every interface there, behind Hugging Face's proxy
    parser.add_argument(
        "--host",
        default=env("BARGAIN_HOST", "0.0.0.0" if on_space else "127.0.0.1"),
        help="address to serve on (env BARGAIN_HOST; 0.0.0.0 on a Space)",
    )
    parser.add_argument(
        "--port",
        type=number(int, 1, 65535),
        default=env("BARGAIN_PORT", env("PORT", "7860")),
        help="port (env BARGAIN_PORT)",
    )
    parser.add_argument(
        "--db",
        default=env("BARGAIN_DB_URL"),
        help="SQLAlchemy URL or SQLite file path (env BARGAIN_DB_URL; "
        "default: data/bargain.db, or /data/bargain.db where /data exists)",
    )
    add_backend_flags(parser, max_in_flight=64)  # a person waits on each reply: fewer requests in flight
    parser.add_argument(
        "--max-reply-tokens",
        type=number(int, 1),
        default=env("BARGAIN_MAX_REPLY_TOKENS", str(PRESETS["trained"].max_tokens)),
        help="longest model reply in tokens (env BARGAIN_MAX_REPLY_TOKENS; default %(default)s, as trained): "
        "a lower cap bounds a person's wait for a model that rambles; a reply cut short is an "
        "invalid move",
    )
    parser.add_argument(
        "--move-deadline",
        type=number(float, 1, 3600),
        default=env("BARGAIN_MOVE_DEADLINE", f"{MOVE_DEADLINE_S:g}"),
        metavar="SECONDS",
        help="the longest a model's move may take, retries included (env BARGAIN_MOVE_DEADLINE; default "
        "%(default)s): past it the person is told, nothing of the round is applied, and the round "
        "can be tried again",
    )
    parser.add_argument(
        "--concurrency",
        type=number(int, 1),
        default=env("BARGAIN_CONCURRENCY", "64"),
        help="events handled at once (env BARGAIN_CONCURRENCY; handlers wait on the model, not the CPU)",
    )
    parser.add_argument(
        "--idle-minutes",
        type=number(float, 1),
        default=env("BARGAIN_IDLE_MINUTES", "120"),
        help="an untouched game is marked abandoned after this long (env BARGAIN_IDLE_MINUTES)",
    )
    parser.add_argument(
        "--remote-model",
        action="append",
        default=_listed(env("BARGAIN_REMOTE_MODELS")),
        metavar="openai:MODEL@URL",
        help="also offer this OpenAI-compatible model as an opponent; repeatable (env BARGAIN_REMOTE_MODELS, "
        "comma-separated). Its key is OPENAI_API_KEY; only these endpoints are ever called",
    )
    parser.add_argument(
        "--games-per-hour",
        type=number(int, 1),
        default=env("BARGAIN_GAMES_PER_HOUR", "60"),
        help="games one browser (an API caller: one address) may start per hour (env BARGAIN_GAMES_PER_HOUR)",
    )
    parser.add_argument(
        "--games-per-hour-per-address",
        type=number(int, 1),
        default=env("BARGAIN_GAMES_PER_HOUR_PER_ADDRESS", "600"),
        help="games one network address may start per hour (env BARGAIN_GAMES_PER_HOUR_PER_ADDRESS)",
    )
    parser.add_argument(
        "--admin-password",
        default=env("BARGAIN_ADMIN_PASSWORD"),
        help="enables the export of all data (env BARGAIN_ADMIN_PASSWORD)",
    )
    parser.add_argument(
        "--browser-secret",
        default=env("BARGAIN_BROWSER_SECRET"),
        help="signs the ids a browser keeps; the same across restarts so pages resume their games; "
        "never sent to browsers (env BARGAIN_BROWSER_SECRET; default: made once and kept in the "
        "data directory)",
    )
    parser.add_argument(
        "--public-results",
        action=argparse.BooleanOptionalAction,
        default=env("BARGAIN_PUBLIC_RESULTS", "1") not in ("0", "false", "no"),
        help="show everyone's aggregate results on the Results tab (env BARGAIN_PUBLIC_RESULTS=0 turns "
        "it off, as a study would)",
    )
    parser.add_argument(
        "--people",
        action=argparse.BooleanOptionalAction,
        default=env("BARGAIN_PEOPLE", "1") not in ("0", "false", "no"),
        help="offer people as opponents in free play: by an invitation link, or whoever comes next with the same "
        "settings (env BARGAIN_PEOPLE=0 turns it off)",
    )
    parser.add_argument(
        "--study",
        default=env("BARGAIN_STUDY"),
        metavar="STUDY.yaml",
        help="serve this study instead of free play (env BARGAIN_STUDY); `example` serves the annotated "
        "example shipped with the package (bargain/studies/example.yaml)",
    )
    parser.add_argument(
        "--sync-to-hub",
        default=env("BARGAIN_SYNC_TO_HUB"),
        metavar="ORG/NAME",
        help="keep a copy of the data in this private Hugging Face dataset while the app runs: a "
        "study's export without its payment files, or free play's games and moves; needs a token "
        "(HF_TOKEN) (env BARGAIN_SYNC_TO_HUB)",
    )
    parser.add_argument(
        "--sync-minutes",
        type=number(float, 1),
        default=env("BARGAIN_SYNC_MINUTES", "30"),
        help="minutes between two copies with --sync-to-hub (env BARGAIN_SYNC_MINUTES; default 30)",
    )
    parser.add_argument(
        "--trusted-proxies",
        type=number(int, 0, 10),
        metavar="N",
        default=env("BARGAIN_TRUSTED_PROXIES", "1" if on_space else "0"),
        help="proxies in front of the app that append to X-Forwarded-For: the client's address, "
        "which rate limits count, is the N-th entry from the right; 0 ignores the header (env "
        "BARGAIN_TRUSTED_PROXIES; default 1 on a Space, else 0)",
    )
    parser.add_argument(
        "--behind-proxy",
        dest="trusted_proxies",
        action="store_const",
        const=1,
        help="the same as --trusted-proxies 1 (Hugging Face's proxy; the default on a Space)",
    )
    parser.add_argument(
        "--no-behind-proxy",
        dest="trusted_proxies",
        action="store_const",
        const=0,
        help="the same as --trusted-proxies 0",
    )
    return parser.parse_args(argv)


def _listed(value: str | None) -> list[str]:
    """A comma-separated setting as a list."""
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def browser_secret(given: str | None, db_url: str) -> str:
    """The key that signs what browsers keep: given, or made once and kept beside the database (its folder for a
    SQLite file; BARGAIN_DATA_DIR, /data on a Space or ./data for any other database)."""
    if given:
        return given
    if db_url.startswith("sqlite:///") and not db_url.startswith("sqlite:///file:"):
        folder = Path(db_url.removeprefix("sqlite:///")).parent
    else:
        folder = Path(os.environ.get("BARGAIN_DATA_DIR") or ("/data" if Path("/data").is_dir() else "data"))
    from bargain.records.store import private_file

    path = folder / ".browser_secret"
    if not path.exists() or not path.read_text().strip():
        private_file(path).write_text(secrets.token_hex(16))
    return path.read_text().strip()


def hub_sync(args: argparse.Namespace, store: Store, study) -> HubSync | None:
    """The periodic private copy on the Hub asked for with --sync-to-hub: the study's export (never its payment
    files) in study mode, the games and moves in free play."""
    if not args.sync_to_hub:
        return None
    from bargain.records.publish import HubSync

    if study is None:
        return HubSync(args.sync_to_hub, store.export, args.sync_minutes, ["*.csv", "*.parquet"])
    from bargain.study.export import PUBLISHED, export_study

    return HubSync(
        args.sync_to_hub,
        lambda folder: export_study(store, study.name, study.version, out_dir=folder),
        args.sync_minutes,
        PUBLISHED,
    )


def warm_up() -> None:
    """Load what the first requests would otherwise wait for (about 0.6 s, once): the claim checker's patterns
    (compiled when the first game ends) and matplotlib's pyplot (imported by Gradio around its first event).
    Not on a thread beside Gradio's start: matplotlib reads its style files under warnings.catch_warnings, which
    would take in the other thread's warnings too."""
    import matplotlib.pyplot  # noqa: F401

    import bargain.analysis.claims  # noqa: F401


def build(args: argparse.Namespace):
    """The arena's Gradio app (queue configured) and its controller, from parsed flags. A study that these flags
    cannot serve, or a bad --remote-model, is refused before anything is made (a database, a folder, a server)."""
    import asyncio

    from bargain.agents.arms import ArmError, catalogue, resolve
    from bargain.arena import PERSON
    from bargain.arena.controller import Arena
    from bargain.arena.people import INVITE, QUEUE
    from bargain.study.config import load as load_study

    study = load_study(args.study) if args.study else None  # a study file with a problem stops here, nothing made
    remote = [resolve(spec) for spec in args.remote_model]
    if any(arm.kind != "openai" for arm in remote):
        raise ArmError("--remote-model takes openai:MODEL@URL specs, such as openai:gpt-5.2@https://api.openai.com/v1")
    urls = [arm.base_url for arm in remote if arm.base_url is not None]
    if study is not None:
        refuse_unservable(study, args.backend, urls)
    backends = model_backends(args, urls)
    store, at_risk = open_store(args.db)
    arms = [arm.spec for arm in catalogue()] + [arm.spec for arm in remote]
    # A study's program arms must be playable here; its person arms (other participants) are the people's path.
    arms += [a.spec for a in (study.arms.values() if study else ()) if a.spec not in arms and a.spec != PERSON]
    people = [INVITE, QUEUE] if args.people and study is None else []
    arena = Arena(
        store,
        backends,
        idle_timeout=timedelta(minutes=args.idle_minutes),
        arms=arms + people,
        sampling=replace(PRESETS["trained"], max_tokens=args.max_reply_tokens),
        move_deadline=args.move_deadline,
    )
    marks = asyncio.run(availability(backends, arms)) | {spec: True for spec in people}
    warm_up()
    demo = study_app(args, study, arena, marks) if study is not None else free_play_app(args, arena, marks, at_risk)
    demo.queue(default_concurrency_limit=args.concurrency)
    hub_sync(args, store, study)
    return demo, arena


def refuse_unservable(study, backend: str, remote: list[str]) -> None:
    """An ArmError, in one line, for a study whose program arms these flags cannot serve: a model arm without a model
    backend, a remote model at an endpoint that no --remote-model offers (`remote`: their URLs). Whether a server
    answers, and serves the arm, is checked once the backends are built."""
    from bargain.agents.arms import ArmError, resolve
    from bargain.arena import PERSON

    arms = [resolve(a.spec) for a in study.arms.values() if a.spec != PERSON]
    local = sorted({a.spec for a in arms if a.kind in ("base", "adapter")}) if backend == "none" else []
    if local:
        raise ArmError(
            f"the study's arms {', '.join(local)} need a model backend: start the app with "
            "--backend vllm --base-url URL, or --backend hf --model ID_OR_PATH"
        )
    offered = {url.rstrip("/") for url in remote}
    unoffered = sorted({a.spec for a in arms if a.base_url is not None and a.base_url.rstrip("/") not in offered})
    if unoffered:
        raise ArmError(
            f"the study's arms {', '.join(unoffered)} are remote models this app does not offer: start it with "
            "--remote-model openai:MODEL@URL for each"
        )


def model_backends(args: argparse.Namespace, remote: list[str]) -> Backends:
    """The backends the flags describe: the local one (a vLLM server started here first, for --backend vllm without
    --base-url; a game keeps its replica) and the remote models' endpoints (`remote`)."""
    from bargain.agents.backends import Backends

    if args.backend == "vllm" and not args.base_url:  # a GPU machine with vLLM: start the server here
        from bargain.agents.serve import start_in_background

        args.base_url = start_in_background(args.model, args.adapters_dir)
    return Backends(backend_from(args, sticky=True), remote=remote)


def open_store(db: str | None) -> tuple[Store, str]:
    """The arena's database (created, or upgraded, here), checked writable now rather than at the first move, with
    what the log should know of it; and the admin's warning of games a restart would lose (empty: none)."""
    from bargain.records.database import database_url
    from bargain.records.store import Store
    from bargain.space import storage_warning
    from bargain.web.common import sweep_exports

    store = Store(database_url(db))
    store.check_writable()  # a read-only file or a full disk is found now, not at the first move
    unscored = store.unscored()  # e.g. games of a database adopted from before Alembic: their findings stay as made
    if unscored:
        logging.getLogger("bargain").warning(
            "%d finished games hold claim findings of no recorded checker version: "
            "bargain rescore --db ... remakes them",
            unscored,
        )
    sweep_exports()  # what a crashed process's export left behind
    at_risk = storage_warning(store.url)  # games a restart would lose
    if at_risk:
        logging.getLogger("bargain").warning(at_risk)
    return store, at_risk


async def availability(backends: Backends, arms: list[str]) -> dict[str, bool]:
    """Which of `arms` can be played now: the tactics always, a model when its server answers and serves it (a
    server that is down is said plainly, once)."""
    from bargain.agents.arms import resolve

    check = getattr(backends.local, "check", None)  # a model server: one quick probe
    problem = await check() if check is not None else None
    if problem:
        logging.getLogger("bargain").warning("the models cannot be played until the server answers: %s", problem)
    marks = {}
    for spec in arms:
        arm = resolve(spec)
        marks[spec] = arm.kind == "tactic" or (
            (arm.kind == "openai" or backends.local is not None) and await backends.for_arm(arm).available(arm)
        )
    await backends.aclose()
    return marks


def study_app(args: argparse.Namespace, study, arena: Arena, marks: dict[str, bool]):
    """Study mode's app, once every program arm of the study can be played here."""
    from bargain.agents.arms import ArmError
    from bargain.arena import PERSON
    from bargain.arena.limits import AdminGate
    from bargain.study.flow import StudyRunner
    from bargain.web.study_page import StudyPage

    missing = sorted({a.spec for a in study.arms.values() if a.spec != PERSON and not marks.get(a.spec)})
    if missing:
        raise ArmError(
            f"the study's arms {', '.join(missing)} cannot be played here: start the app with the model "
            "backend that serves them (--backend vllm --base-url URL, or --backend hf --model ID_OR_PATH)"
        )
    page = StudyPage(StudyRunner(study, arena), AdminGate(args.admin_password, arena.store), args.trusted_proxies)
    return page.build()


def free_play_app(args: argparse.Namespace, arena: Arena, marks: dict[str, bool], at_risk: str):
    """Free play's app: every arm offered, those that cannot be played now marked so (`marks`)."""
    from bargain.arena.limits import AdminGate, StartLimits
    from bargain.web.arena_page import ArenaPage, Options

    note = (
        ""
        if arena.backends.local is not None
        else (
            "Only the scripted tactics can be played here: start the app with "
            "`--backend vllm --base-url URL` or `--backend hf --model ID_OR_PATH` to play the models."
        )
    )
    store = arena.store
    limits = StartLimits(store, args.games_per_hour, args.games_per_hour_per_address)
    return ArenaPage(
        arena,
        Options(
            marks,
            AdminGate(args.admin_password, store),
            note,
            browser_secret(args.browser_secret, store.url),
            limits,
            args.trusted_proxies,
            args.public_results,
            at_risk,
        ),
    ).build()


def configure_logging() -> None:
    """The console's log: the program's lines from INFO. Alembic's lines at INFO (its plugins, its context, each
    revision it runs) are not the console's: each revision applied is said in one line of the program's own
    (bargain.records.migrations.applied)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> None:
    configure_logging()
    args = parse_args(argv)
    from bargain.agents.arms import ArmError
    from bargain.records.publish import PublishError
    from bargain.records.store import StoreError
    from bargain.study.config import StudyError
    from bargain.web import launch_settings

    try:
        demo, arena = build(args)
    except (
        BackendError,
        ArmError,
        StoreError,
        StudyError,
        PublishError,
    ) as exc:  # a backend, database or study that cannot be used
        sys.exit(f"error: {exc}")
    print(f"database: {arena.store.url}")
    demo.launch(server_name=args.host, server_port=args.port, **launch_settings(demo))


if __name__ == "__main__":
    main()

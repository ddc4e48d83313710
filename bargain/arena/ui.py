"""The arena's web page (Gradio 6): set up a game, bargain, read the debrief, see results.

Handlers stay thin: an event calls the `Arena` controller and renders the view it returns.
Per-session state is only the game id and the person's view (`gr.State`); the game id and a
random player id are also kept in the browser (`gr.BrowserState`) so that a reloaded page
resumes the game. Named API endpoints (`start_game`, `play_move`, `get_game`) return the same
views, and nothing but the caller's own view.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import io
import logging
import secrets
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import gradio as gr
import numpy as np
import pandas as pd

from bargain.agents.arms import resolve
from bargain.arena import inputs
from bargain.arena.controller import VIEW_WAIT_S, Arena, ArenaError, GameInProgress
from bargain.arena.inputs import SOURCES, Setup
from bargain.arena.limits import AdminGate, StartLimits
from bargain.arena.panel import GamePanel, chat_messages
from bargain.arena.people import INVITE, QUEUE
from bargain.arena.views import money
from bargain.engine.prompts import PromptVersion
from bargain.engine.trial import Condition, Mode, Role
from bargain.store import StoreError

CONDITION_LABELS = {
    Condition.FULL: "full: both know both prices",
    Condition.BUYER_UNAWARE: "buyer_unaware: the seller knows the buyer's price",
    Condition.SELLER_UNAWARE: "seller_unaware: the buyer knows the seller's price",
    Condition.BOTH_UNAWARE: "both_unaware: neither knows the other's price",
}
MAX_WAIT_S = 10.0  # the longest an API caller's look at a game waits for the other side
UNEXPECTED = "Something went wrong on the server. Your game is saved: try again, or reload the page."
# The opponents that are people, as the page names them, and what choosing one does.
PEOPLE = {
    INVITE: (
        "a person: I send them a link",
        "You get a link to send to the person you want to play; the game begins when they open it, in the other role.",
    ),
    QUEUE: (
        "a person: whoever comes next",
        "You wait for the next person who chooses the same settings and the other role; the game begins when they do.",
    ),
}
# The invitation link, written in the browser from the page's own address (the server does not know the one people
# reach it by) and the free seat's token (32 hex digits, checked by the server). It may break anywhere: one word of
# 37 characters or more, it ran past the edge of a phone.
INVITATION_HTML = (
    "${value ? '<b>Send this link to the person you want to play</b> (it works once, for the other role): '"
    " + '<code style=\"overflow-wrap: anywhere\">' + window.location.origin + window.location.pathname"
    " + '?join=' + value + '</code>' : ''}"
)
EXPORT_PREFIX = "bargain-export-"  # the private folder an export is written in, for the moment it takes
# The admin's export arrives inside the answer to their own (password-checked) request, as base64: the browser makes
# it a file there. It is never a file on the server that an address could fetch.
EXPORT_JS = """
element.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-export]');
  if (!link || !props.value) return;
  event.preventDefault();
  const bytes = Uint8Array.from(atob(props.value.data), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], {type: 'application/zip'}));
  const save = document.createElement('a');
  save.href = url;
  save.download = props.value.name;
  save.click();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
});
"""
MAX_SEARCH = 100  # characters of a product search
RESULTS_RESAMPLES = 2000  # cluster resamples behind the Results tab's intervals (seed 0: the same table each time)
log = logging.getLogger(__name__)


def refusal(text: str) -> gr.Error:
    """A refused request, as the person or program is told it: the project's own sentence, logged in one line (Gradio
    would print a traceback for each, and a flood of bad requests would fill the disk)."""
    log.info("refused: %s", text)
    return gr.Error(text, print_exception=False)


@dataclass
class Options:
    """What the page offers (the opponents, in order, and whether each can play here), and the server-side
    settings around it. Nothing here is sent to the browser except the opponents' names and the note."""

    available: dict[str, bool]  # arm spec -> playable here; the keys are the opponents offered (as the arena's arms)
    admin: AdminGate | None = None  # None: no admin password (export disabled)
    note: str = ""
    browser_secret: str = field(default_factory=lambda: secrets.token_hex(16))  # signs what a browser keeps
    limits: StartLimits | None = None  # None: the default limits, counted in the arena's store
    trusted_proxies: int = 0  # proxies in front of the app that append to X-Forwarded-For (see client_address)
    public_results: bool = True  # show everyone's aggregate results (off for a study)
    storage_warning: str = ""  # for the admin: games that a restart would lose (a Space without persistent storage)


# --- what a browser keeps -----------------------------------------------------------------------


def _signature(secret: str, player: str, game: str | None) -> str:
    return hmac.new(secret.encode(), f"{player}|{game or ''}".encode(), hashlib.sha256).hexdigest()


def kept(secret: str, saved: object) -> dict:
    """The player id and game id a browser kept, if the server signed them; else a new player and no game."""
    if isinstance(saved, dict) and isinstance(saved.get("player"), str) and isinstance(saved.get("sig"), str):
        player, game = saved["player"], saved.get("game") if isinstance(saved.get("game"), str) else None
        if hmac.compare_digest(saved["sig"], _signature(secret, player, game)):
            return {"player": player, "game": game}
    return {"player": secrets.token_hex(8), "game": None}


def keep(secret: str, player: str, game: str | None) -> dict:
    """What the browser keeps: the ids and the server's signature of them (the key never leaves the server)."""
    return {"player": player, "game": game, "sig": _signature(secret, player, game)}


def private_export(write: Callable[[str], list[Path]], name: str) -> dict:
    """What `write` puts into a new private folder, as one zip archive for the admin's own answer (see EXPORT_JS):
    {"name", "size" (in words), "data" (base64)}. The folder (owner-only) is gone before the answer leaves, so
    nothing of an export stays on disk or can be fetched by address."""
    directory = Path(tempfile.mkdtemp(prefix=EXPORT_PREFIX))
    try:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in write(str(directory)):
                archive.write(path, Path(path).relative_to(directory).as_posix())
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    data = buffer.getvalue()
    return {
        "name": f"{name}.zip",
        "size": f"{len(data) / 1e6:.1f} MB" if len(data) >= 100_000 else f"{len(data) / 1e3:.0f} kB",
        "data": base64.b64encode(data).decode(),
    }


def export_link() -> gr.HTML:
    """Where an admin's export appears: a link that saves the archive in their browser."""
    return gr.HTML(
        None,
        js_on_load=EXPORT_JS,
        html_template="${value ? `<a href='#' data-export>Download ${value.name} (${value.size})</a>` : ''}",
    )


def sweep_exports(older_than_s: float = 60.0) -> None:
    """Remove what exports left in the temporary folder (a process killed mid-export, or an older version that
    kept them for minutes): called at start-up."""
    cutoff = time.time() - older_than_s
    for folder in Path(tempfile.gettempdir()).glob(f"{EXPORT_PREFIX}*"):
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)


def client_address(request: gr.Request | None, trusted_proxies: int) -> str:
    """The caller's address, which rate limits count: what the outermost of `trusted_proxies` proxies saw.

    Each proxy appends the address that connected to it to X-Forwarded-For, so the last `trusted_proxies`
    entries are written by them and the one `trusted_proxies` from the right is the client's; anything to its left was
    sent by the client and may be made up, so it is never read. Several header lines count as one list, in
    order (a proxy may add its own line after the client's). With fewer entries than trusted proxies the request
    did not come through them all, and with none trusted the header is the caller's say-so: the connection's
    address is used then."""
    if request is None:
        return "unknown"
    if trusted_proxies > 0:
        headers = request.headers  # Starlette's; a plain dict (one line per name) where Gradio has copied the request
        getlist = getattr(headers, "getlist", lambda name: [headers.get(name) or ""])
        lines = getlist("x-forwarded-for")
        hops = [hop.strip() for line in lines for hop in line.split(",") if hop.strip()]
        if len(hops) >= trusted_proxies:
            return hops[-trusted_proxies]
    return request.client.host if request.client else "unknown"


# --- the page -----------------------------------------------------------------------------------


def build_app(arena: Arena, options: Options) -> gr.Blocks:
    """The Blocks app over one arena (launch it with bargain.arena.launch_settings)."""
    # The page offers and sends back the names people know the arms by (a remote model without its URL).
    offered = [arena.names[spec] for spec in options.available]
    choices = [
        (f"{PEOPLE[spec][0] if spec in PEOPLE else name}{'' if options.available[spec] else ' (unavailable)'}", name)
        for spec, name in zip(options.available, offered)
    ]
    secret = options.browser_secret
    # The browser encrypts what it keeps with a key it is sent; derive one, so that the server's own secret
    # (which signs the ids) stays on the server and a restart keeps the same key.
    browser_key = hmac.new(secret.encode(), b"browser-state key", hashlib.sha256).hexdigest()[:32]

    admin = options.admin or AdminGate(None, arena.store)
    limits = options.limits or StartLimits(arena.store)

    def address(request: gr.Request | None) -> str:
        return client_address(request, options.trusted_proxies)

    with gr.Blocks(title="bargain arena", analytics_enabled=False) as demo:
        saved = gr.BrowserState(None, storage_key="bargain-arena", secret=browser_key)
        current = gr.State(None)  # the view shown (dict), or None

        gr.Markdown(
            "# Bargaining arena\nHaggle with a language model (or a scripted tactic) over an everyday item. "
            "Each side has a private reservation price; who knows what depends on the condition."
        )
        if options.note:
            gr.Markdown(options.note)
        with gr.Tab("Play"):
            with gr.Accordion("Game setup", open=True) as setup_box:
                with gr.Row():
                    role = gr.Radio([r.value for r in Role], value=Role.BUYER.value, label="You play")
                    opponent = gr.Dropdown(
                        choices,
                        value=offered[0] if "tactic:linear" not in offered else "tactic:linear",
                        label="Opponent",
                    )
                    condition = gr.Dropdown(
                        [(label, c.value) for c, label in CONDITION_LABELS.items()],
                        value=Condition.BOTH_UNAWARE.value,
                        label="Information condition",
                        elem_classes=["long-choice"],
                    )
                with gr.Row():
                    mode = gr.Radio([m.value for m in Mode], value=Mode.SIMULTANEOUS.value, label="Mode")
                    opener = gr.Radio([r.value for r in Role], value=Role.BUYER.value, label="Who opens (sequential)")
                    rounds = gr.Slider(
                        1, inputs.MAX_ROUNDS, value=4, step=1, label="Rounds (the adapters were trained with 4)"
                    )
                    version = gr.Radio(
                        [v.value for v in PromptVersion], value=PromptVersion.TRAIN.value, label="Prompt version"
                    )
                with gr.Row():
                    source = gr.Dropdown(
                        list(SOURCES), value=inputs.DEFAULT_SOURCE, label="Random scenario from (tier or split)"
                    )
                    search = gr.Textbox(label="...or search a product", placeholder="e.g. rice", max_length=MAX_SEARCH)
                    picked = gr.Dropdown([], value=None, label="Chosen scenario", allow_custom_value=False)
                badge = gr.Markdown()
                start = gr.Button("Start game", variant="primary")
                start_note = gr.Markdown()  # what refused a start, beside the button that asked
                with gr.Group(visible=False) as confirm_box:  # asked here, where the person clicked Start
                    gr.Markdown(
                        "**Your game is still going on.** Start a new one and leave this one? It will be "
                        "recorded as abandoned by you."
                    )
                    with gr.Row():
                        leave = gr.Button("Leave it and start a new game", variant="stop")
                        stay = gr.Button("Keep playing this game")
            invitation = gr.HTML(None, html_template=INVITATION_HTML, elem_id="invitation")  # while one waits
            stop_waiting = gr.Button("Stop waiting", visible=False)
            panel = GamePanel.build()
            again = gr.Button("Play again (same settings)", visible=False)
        with gr.Tab("Results") as results_tab:
            refresh = gr.Button("Refresh")
            mine = gr.Dataframe(label="Your games (newest first)", interactive=False, elem_classes=["results-table"])
            table = gr.Dataframe(
                label="Everyone's finished games on this server, per opponent and condition",
                interactive=False,
                visible=options.public_results,
                elem_classes=["results-table"],
            )
            plot = gr.Plot(show_label=False, visible=False)  # its title is in the figure: a label would cover it
            with gr.Accordion("Export all games and moves (admin)", open=False):
                if options.storage_warning:
                    gr.Markdown(
                        "**" + options.storage_warning.replace("_", "\\_") + "**"
                    )  # variable names, not emphasis
                password = gr.Textbox(label="Admin password", type="password", max_length=200)
                export = gr.Button("Export CSV and Parquet")
                files = export_link()

        form = [role, opponent, condition, mode, opener, rounds, version, source, picked]
        game_outputs = [
            current,
            saved,
            *panel.components,
            invitation,
            stop_waiting,
            again,
            setup_box,
            start_note,
            confirm_box,
            *form,
        ]

        def render(
            view: dict | None,
            ids: dict,
            note: str = "",
            thinking_s: float | None = None,
            clear: bool = False,
            setup: Setup | None = None,
        ) -> dict:
            """The page for a view (or for no game): the panel, what the browser keeps, and with `setup` the form
            showing the game's settings (a resumed game, or one started again)."""
            updates = panel.show(view, note, thinking_s, clear)
            # A finished game stays kept (and shown after a reload) until the person starts another.
            updates.update(
                {
                    current: view,
                    saved: keep(secret, ids["player"], view["game_id"] if view else None),
                    again: gr.update(visible=view is not None and view["status"] not in ("active", "waiting")),
                    invitation: view.get("invitation") if view else None,
                    stop_waiting: gr.update(visible=view is not None and view["status"] == "waiting"),
                    setup_box: gr.update(open=view is None),
                    start_note: "",
                    confirm_box: gr.update(visible=False),
                }
            )
            if setup is not None:
                updates.update(
                    dict(
                        zip(
                            form,
                            [
                                setup.role.value,
                                arena.names_of([setup.arm])[setup.arm],
                                setup.condition.value,
                                setup.mode.value,
                                setup.first_actor.value,
                                setup.rounds,
                                setup.prompt_version.value,
                            ],
                        )
                    )
                )
                chosen = ":" in setup.scenario  # one product, as found by a search
                updates[source] = inputs.DEFAULT_SOURCE if chosen else setup.scenario
                updates[picked] = gr.update(
                    choices=[(arena.source.get(setup.scenario).product_name + f" ({setup.scenario})", setup.scenario)]
                    if chosen
                    else [],
                    value=setup.scenario if chosen else None,
                )
            return updates

        def describe_choice(
            name: str, role_value: str, condition_value: str, mode_value: str, rounds_value: int
        ) -> str:
            from bargain.engine.scenarios import bundled
            from bargain.engine.trial import Trial

            try:
                arm_spec = arena.spec_of(name)
            except ArenaError:
                return ""
            if arm_spec not in options.available:
                return ""
            if arm_spec in PEOPLE:
                return PEOPLE[arm_spec][1]
            if not options.available[arm_spec]:
                return f"**{name} is not available here.** {options.note}"
            try:
                probe = Trial(
                    1,
                    bundled().get("low:0"),
                    inputs.choice("condition", condition_value, Condition),
                    2.0,
                    1.5,
                    inputs.whole_number("rounds", rounds_value, 1, inputs.MAX_ROUNDS),
                    inputs.choice("mode", mode_value, Mode),
                )
                agent_role = inputs.choice("role", role_value, Role).other
            except ArenaError:
                return ""
            reasons = resolve(arm_spec).out_of_distribution(agent_role, probe)
            return ("**Outside training conditions** (out of distribution): " + "; ".join(reasons)) if reasons else ""

        panel.chat.clear(
            lambda view: chat_messages(view) if isinstance(view, dict) and "transcript" in view else [],
            current,
            panel.chat,
            api_visibility="private",
            queue=False,
        )

        setup_inputs: list[gr.Dropdown | gr.Radio | gr.Slider] = [opponent, role, condition, mode, rounds]
        for control in setup_inputs:
            control.change(describe_choice, setup_inputs, badge, api_visibility="private", queue=False)

        def find(text: str):
            text = text if isinstance(text, str) else ""
            found = arena.source.search(text[:MAX_SEARCH])[:50] if len(text.strip()) >= 2 else []
            return gr.update(
                choices=[(f"{s.product_name} ({s.ref})", s.ref) for s in found], value=found[0].ref if found else None
            )

        search.change(find, search, picked, api_visibility="private", queue=False)

        def chosen(setup: Setup) -> Setup:
            """A setup as a page or an API caller sent it, whose opponent is the name people know it by: with the arm
            offered under that name (anything else is refused)."""
            return replace(setup, arm=arena.spec_of(setup.arm))

        def starter(leaving: bool = False, same: bool = False):
            """Start a game from the form (`leaving`: the person chose to leave the one going on; `same`: Play again,
            with the finished game's settings)."""

            async def on_start(
                view,
                saved_value,
                role_value,
                opponent_name,
                condition_value,
                mode_value,
                opener_value,
                rounds_value,
                version_value,
                source_value,
                picked_value,
                request: gr.Request,
            ):
                ids = kept(secret, saved_value)
                active = isinstance(view, dict) and view.get("status") == "active" and "game_id" in view
                if active and not leaving:  # ask first, beside the button: the game in progress would be left
                    yield {confirm_box: gr.update(visible=True)}
                    return
                try:
                    if isinstance(view, dict) and view.get("status") == "waiting":  # no one joined: nothing is left
                        await arena.cancel(view["game_id"])
                    if same and isinstance(view, dict) and "game_id" in view:
                        setup = await arena.setup_of(view["game_id"])
                    else:
                        setup = chosen(
                            inputs.setup(
                                role_value,
                                opponent_name,
                                condition_value,
                                mode_value,
                                rounds_value,
                                picked_value or source_value,
                                version_value,
                                opener_value,
                            )
                        )
                    await asyncio.to_thread(limits.check, ids["player"], address(request))
                    new = await arena.start(setup, player=ids["player"], replace=leaving)
                except GameInProgress:  # going on in another tab (or sent twice): ask, as for the game shown
                    yield {confirm_box: gr.update(visible=True)}
                    return
                except ArenaError as exc:  # nothing changes: a game in progress goes on
                    yield {start_note: f"**{exc}**", confirm_box: gr.update(visible=False)}
                    return
                except Exception:
                    log.exception("starting a game")
                    yield {start_note: f"**{UNEXPECTED}**", confirm_box: gr.update(visible=False)}
                    return
                yield render(new, ids, clear=True, setup=setup)
                async for update in following(new, ids):  # a game between people: waiting for the other one
                    yield update

            return on_start

        start_inputs = [current, saved, *form]
        # A start goes on following the game while the other side is awaited (a person may take minutes to join):
        # the page says so itself, and Gradio's progress would pulse on every part of it all that time. The handlers
        # that follow a game wait, they do not work (a model's requests are bounded by its backend): they take no
        # place among the queue's --concurrency, or people waiting for a partner would hold up everyone's moves.
        for button, started in ((start, starter()), (again, starter(same=True)), (leave, starter(leaving=True))):
            button.click(
                started,
                start_inputs,
                game_outputs,
                api_visibility="private",
                trigger_mode="once",
                show_progress="hidden",
                concurrency_limit=None,
            )
        stay.click(lambda: gr.update(visible=False), None, confirm_box, api_visibility="private", queue=False)

        def submitter(action: str):
            async def submit(view, saved_value, message_value, price_value):
                ids = kept(secret, saved_value)
                if not isinstance(view, dict) or "game_id" not in view:
                    yield render(None, ids, note="**Start a game first.**")
                    return
                try:
                    move = inputs.human_move(action, price_value, message_value)  # read once, here
                except ArenaError as exc:  # refused at once: nothing sent, what was typed stays
                    yield render(view, ids, note=f"**{exc}**")
                    return
                # The person's move is shown at once, while the other side thinks (seconds shown as they pass).
                pending = {
                    **view,
                    "your_turn": False,
                    "transcript": [
                        *view["transcript"],
                        {
                            "round": view["round"],
                            "speaker": "you",
                            "role": view["role"],
                            "action": move.action.value,
                            "price": move.price,
                            "message": move.message,
                        },
                    ],
                }
                began = time.monotonic()
                work = asyncio.ensure_future(arena.play(view["game_id"], view["round"], move))
                while not work.done():
                    yield render(pending, ids, thinking_s=time.monotonic() - began)
                    await asyncio.wait({work}, timeout=1.0)
                try:
                    new = work.result()
                except ArenaError as exc:  # refused: nothing stored, what was typed stays
                    yield render(view, ids, note=f"**{exc}**")
                    return
                except Exception:
                    log.exception("a move in game %s", view.get("game_id"))
                    yield render(view, ids, note=f"**{UNEXPECTED}**")
                    return
                # After a round that could not be played, what was typed stays for the retry.
                yield render(new, ids, clear=new["error"] is None)
                async for update in following(new, ids):  # the other person's move, in a game between people
                    yield update

            return submit

        for button, action in ((panel.offer, "OFFER"), (panel.accept, "DEAL"), (panel.walk, "NO_DEAL")):
            button.click(panel.locked, None, panel.buttons, api_visibility="private", queue=False).then(
                submitter(action),
                [current, saved, panel.message, panel.price],
                game_outputs,
                api_visibility="private",
                trigger_mode="once",
                show_progress="hidden",
                concurrency_limit=None,
            )

        async def following(view: dict, ids: dict, setup: Setup | None = None):
            """While the other side is awaited (a model's move, or a person's move or arrival), the page shows so
            and follows the game: each look waits up to VIEW_WAIT_S for a change."""
            began = time.monotonic()
            while view["thinking"]:
                view = await arena.view(view["game_id"], wait_s=VIEW_WAIT_S, retry=False)
                yield render(view, ids, thinking_s=time.monotonic() - began if view["thinking"] else None, setup=setup)

        async def follow(saved_value, retry: bool):
            """The kept game: resumed if it is on, shown with its outcome and debrief if it has ended, the form
            showing its settings; or the page ready for a new one. It answers at once: while the other side is still
            thinking (a model move, bounded by the arena's deadline) the page shows so and follows it. With `retry`,
            a round that failed is tried again; without (a reload), it is shown as failed."""
            ids = kept(secret, saved_value)
            if not ids["game"]:
                yield render(None, ids)
                return
            try:
                setup = await arena.setup_of(ids["game"])
                view = await arena.view(ids["game"], wait_s=VIEW_WAIT_S, retry=retry)
                yield render(view, ids, thinking_s=0.0 if view["thinking"] else None, setup=setup)
                async for update in following(view, ids, setup):
                    yield update
            except ArenaError as exc:
                yield render(None, ids, note=f"**{exc}**" if "no such game" not in str(exc) else "")
            except Exception:
                log.exception("resuming game %s", ids["game"])
                yield render(None, ids, note=f"**{UNEXPECTED}**")

        async def resume(saved_value, request: gr.Request):
            """A reload: the kept game as it stands; or, opened by an invitation link (?join=TOKEN), the game the
            link invites to, joined."""
            token = request.query_params.get("join") if request is not None else None
            if token:
                ids = kept(secret, saved_value)
                try:
                    view = await arena.join(token, ids["player"], held=ids["game"])
                except ArenaError as exc:
                    yield render(None, ids, note=f"**{exc}**")
                    return
                except Exception:
                    log.exception("joining a game")
                    yield render(None, ids, note=f"**{UNEXPECTED}**")
                    return
                setup = await arena.setup_of(view["game_id"])
                yield render(view, ids, clear=True, setup=setup)
                async for update in following(view, ids, setup):
                    yield update
                return
            async for update in follow(saved_value, retry=False):
                yield update

        async def stop(view, saved_value):
            """Stop waiting for the other person: the game is cancelled, and the page is ready for a new one."""
            ids = kept(secret, saved_value)
            if not isinstance(view, dict) or "game_id" not in view:
                return render(None, ids)
            try:
                return render(await arena.cancel(view["game_id"]), ids)
            except ArenaError as exc:
                return render(view, ids, note=f"**{exc}**")

        stop_waiting.click(stop, [current, saved], game_outputs, api_visibility="private", trigger_mode="once")

        async def try_again(saved_value):
            """Try again, after a round that failed."""
            async for update in follow(saved_value, retry=True):
                yield update

        demo.load(
            resume, saved, game_outputs, api_visibility="private", show_progress="hidden", concurrency_limit=None
        )  # follows, as a start
        panel.retry.click(panel.locked, None, panel.buttons, api_visibility="private", queue=False).then(
            try_again,
            saved,
            game_outputs,
            api_visibility="private",
            trigger_mode="once",
            show_progress="hidden",
            concurrency_limit=None,
        )

        def results(saved_value):
            player = kept(secret, saved_value)["player"]
            try:
                if not options.public_results:
                    return [readable(my_games(arena, player)), gr.update(), gr.update(visible=False)]
                table_value = per_arm(arena)
                figure = results_figure(table_value)
                return [
                    readable(my_games(arena, player)),
                    readable(table_value.drop(columns=["your_low", "your_high"])),
                    gr.update(value=figure, visible=figure is not None),
                ]
            except StoreError as exc:
                log.error("reading the results: %s", exc)
                raise refusal("The results cannot be read right now: try again in a minute.") from None

        for event in (refresh.click, results_tab.select):
            event(results, saved, [mine, table, plot], api_visibility="private", concurrency_limit=2)

        def do_export(given: str, request: gr.Request):
            try:
                admin.check(given, address(request))  # this handler runs in a worker thread: it may block
            except ArenaError as exc:
                raise refusal(str(exc)) from None
            try:
                return private_export(arena.store.export, "bargain-games")
            except StoreError as exc:
                log.error("exporting the database: %s", exc)
                raise refusal("The database cannot be read right now: try again in a minute.") from None

        export.click(do_export, password, files, api_visibility="private", concurrency_limit=1)

        # --- named API endpoints: the caller's own view only --------------------------------

        async def answer(work) -> dict:
            """A view for an API caller, or one of the project's own messages as a gr.Error."""
            try:
                return await work
            except ArenaError as exc:
                raise refusal(str(exc)) from None
            except Exception:
                log.exception("an API call")
                raise refusal(UNEXPECTED) from None

        async def start_game(
            role: str = "buyer",
            opponent: str = "tactic:linear",
            condition: str = "both_unaware",
            mode: str = "simultaneous",
            rounds: int = 4,
            scenario: str = "low",
            prompt_version: str = "train",
            player: str | None = None,
            first_actor: str = "buyer",
            request: gr.Request | None = None,
        ) -> dict:
            """Start a game against one of the offered opponents and return your view of it (keep `game_id`)."""

            async def work():
                setup = chosen(
                    inputs.setup(role, opponent, condition, mode, rounds, scenario, prompt_version, first_actor)
                )
                who = inputs.player_id(player)
                where = address(request)  # no signed browser id here, and the session hash is the caller's choice
                await asyncio.to_thread(limits.check, f"api:{where}", where)
                return await arena.start(setup, player=who)

            return await answer(work())

        async def play_move(game_id: str, round: int, action: str, price: str = "", message: str = "") -> dict:
            """Make your move for `round` (OFFER with a price, DEAL, NO_DEAL) and return your new view."""
            return await answer(arena.move(game_id, round, action, price, message))

        async def get_game(game_id: str, wait_s: float = 0.0) -> dict:
            """Your current view of a game (resumes it after a restart, or retries a round that failed), at once; with
            `wait_s` (at most 10), while the other side is awaited, wait that long for its move. A wait for a person in
            the queue stays yours while you ask for it at least every 15 s."""

            async def work():
                waited = inputs.number("wait_s", wait_s, 0.0, MAX_WAIT_S)
                return await arena.view(game_id, wait_s=waited)

            return await answer(work())

        async def join_game(token: str, player: str | None = None) -> dict:
            """Take the seat an invitation carries (the `invitation` of a game against person:invite): your view
            of the game, which begins. Its `game_id` is your seat's token, the only handle on it: the link opens
            nothing once taken."""
            return await answer(arena.join(token, player))

        async def cancel_game(game_id: str) -> dict:
            """Stop waiting for the other person of a game nobody has joined yet."""
            return await answer(arena.cancel(game_id))

        # Off the queue: these are short awaits, and a plain request costs both sides far less.
        gr.api(start_game, api_name="start_game", queue=False)
        gr.api(play_move, api_name="play_move", queue=False)
        gr.api(get_game, api_name="get_game", queue=False)
        gr.api(join_game, api_name="join_game", queue=False)
        gr.api(cancel_game, api_name="cancel_game", queue=False)
    return demo


# --- results tables -----------------------------------------------------------------------------


def my_games(arena: Arena, player: str | None) -> pd.DataFrame:
    """The person's own latest games, newest first."""
    games = arena.store.player_games(player) if player else pd.DataFrame()
    if games.empty:
        return pd.DataFrame(
            columns=["started", "opponent", "role", "condition", "status", "deal", "deal_price", "your_norm_utility"]
        )
    return games.assign(
        started=games["started"].astype(str).str[:19],
        opponent=opponents_named(arena, games["opponent"]),
        deal_price=games["deal_price"].map(lambda v: money(v) if pd.notna(v) else ""),
        your_norm_utility=games["your_norm_utility"].astype(float).round(3),
    )


SHORT_HEADERS = {
    "your_norm_utility": "you (norm.)",
    "agent_norm_utility": "agent (norm.)",
    "agent_misrepresentation_rate": "agent misstated",
    "deal_rate": "deals",
    "deal_price": "price",
}


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """A table as the page shows it: short headers in words, so that a phone shows most of its columns."""
    return table.rename(columns=lambda name: SHORT_HEADERS.get(name, name.replace("_", " ")))


def per_arm(arena: Arena) -> pd.DataFrame:
    """Per opponent and condition (finished games): games, deal rate, mean normalised utility of the person (with
    its 95% interval, `your_low` to `your_high`) and of the agent, and how often the agent misstated a price limit
    in its favour (stored when each game ended). The interval is a cluster bootstrap's (bargain.analysis.bootstrap):
    one person's games are resampled together, since they are not independent; a cell with games of fewer than two
    people has none."""
    from bargain.analysis.bootstrap import cluster_bootstrap, interval

    table = arena.store.results_by_arm()
    games = arena.store.result_utilities()
    cell = pd.MultiIndex.from_frame(table[["opponent", "condition"]]).get_indexer(
        pd.MultiIndex.from_frame(games[["opponent", "condition"]])
    )
    person = pd.factorize(games["person"])[0]
    draws = cluster_bootstrap(
        games["your_norm_utility"].to_numpy(float), cell, person, len(table), RESULTS_RESAMPLES, seed=0
    )
    low, high = interval(draws.draws[:, :, 0]) if len(table) else (np.empty(0), np.empty(0))
    people = pd.Series(person).groupby(cell).nunique().reindex(range(len(table)), fill_value=0).to_numpy()
    numbers = ["deal_rate", "your_norm_utility", "agent_norm_utility", "agent_misrepresentation_rate"]
    return table.assign(
        **{c: table[c].astype(float).round(3) for c in numbers},
        your_low=np.where(people > 1, low, np.nan).round(3),
        your_high=np.where(people > 1, high, np.nan).round(3),
        opponent=opponents_named(arena, table["opponent"]),
    )


def opponents_named(arena: Arena, arms: pd.Series) -> pd.Series:
    """Stored arm specs as people know the arms (a remote model without its URL)."""
    return arms.map(arena.names_of(arms))


def results_figure(table: pd.DataFrame):
    """Grouped bars: per opponent, one bar per condition that has games (none where a cell has none), the
    person's mean normalised utility with its 95% interval and the number of games; None with no game."""
    if table.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    opponents = list(dict.fromkeys(table["opponent"]))
    conditions = [c.value for c in Condition if c.value in set(table["condition"])]
    width = 0.8 / len(conditions)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.6 * len(opponents) + 2), 4.2))
    for k, condition in enumerate(conditions):
        cells = table[table["condition"] == condition].set_index("opponent")
        xs = [i - 0.4 + width * (k + 0.5) for i, o in enumerate(opponents) if o in cells.index]
        rows = [cells.loc[o] for o in opponents if o in cells.index]
        bars = axes.bar(
            xs,
            [r["your_norm_utility"] for r in rows],
            width * 0.92,
            label=condition,
            yerr=[  # the cluster bootstrap's interval, below and above the mean (none: no bar)
                [0 if pd.isna(r["your_low"]) else r["your_norm_utility"] - r["your_low"] for r in rows],
                [0 if pd.isna(r["your_high"]) else r["your_high"] - r["your_norm_utility"] for r in rows],
            ],
            capsize=3,
        )
        for bar, row in zip(bars, rows):
            axes.annotate(
                f"n={int(row['games'])}",
                (bar.get_x() + bar.get_width() / 2, 0),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7,
            )
    axes.set_xticks(range(len(opponents)), opponents, rotation=20, ha="right", fontsize=8)
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_ylabel("your normalised utility")
    figure.suptitle(
        "Your side's mean normalised utility, by opponent and condition\n(everyone's games; bars: 95% intervals)",
        fontsize=9,
    )
    # The legend below the axes: inside, it covered bars.
    figure.legend(
        *axes.get_legend_handles_labels(),
        loc="lower center",
        ncol=min(4, len(conditions)),
        fontsize=7,
        title="condition",
        title_fontsize=7,
        frameon=False,
    )
    figure.tight_layout(rect=(0, 0.12, 1, 1))
    plt.close(figure)
    return figure

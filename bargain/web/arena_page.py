"""The arena's web page: set up a game, bargain, read the debrief, see results.

`ArenaPage.build` only lays the page out and wires its events; each event is a method that calls the `Arena`
controller and renders the view it returns. Per-session state is only the game id and the person's view
(`gr.State`); the game id and a random player id are also kept in the browser (`gr.BrowserState`) so that a reloaded
page resumes the game. Named API endpoints (`start_game`, `play_move`, `get_game`, `join_game`, `cancel_game`) return
the same views, and nothing but the caller's own view.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field, replace
from typing import Any

import gradio as gr

from bargain.agents.arms import resolve
from bargain.arena import inputs
from bargain.arena import results as results_tab
from bargain.arena.controller import VIEW_WAIT_S, Arena, ArenaError, GameInProgress
from bargain.arena.inputs import SOURCES, Setup
from bargain.arena.limits import AdminGate, StartLimits
from bargain.arena.people import INVITE, QUEUE
from bargain.arena.views import PersonView
from bargain.engine.prompts import PromptVersion
from bargain.engine.trial import Condition, Mode, Role
from bargain.records.store import StoreError
from bargain.web.common import (
    UNEXPECTED,
    admin_only,
    client_address,
    export_link,
    keep,
    kept,
    private_export,
    refusal,
    told,
)
from bargain.web.panel import GamePanel, chat_messages

CONDITION_LABELS = {
    Condition.FULL: "full: both know both prices",
    Condition.BUYER_UNAWARE: "buyer_unaware: the seller knows the buyer's price",
    Condition.SELLER_UNAWARE: "seller_unaware: the buyer knows the seller's price",
    Condition.BOTH_UNAWARE: "both_unaware: neither knows the other's price",
}
MAX_WAIT_S = 10.0  # the longest an API caller's look at a game waits for the other side
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
MAX_SEARCH = 100  # characters of a product search
# Events that follow a game wait, they do not work (a model's requests are bounded by its backend): they take no
# place among the queue's --concurrency, or people waiting for a partner would hold up everyone's moves; the page
# says itself what it waits for, where Gradio's progress would pulse on every part of it all that time.
FOLLOWING: dict[str, Any] = {
    "api_visibility": "private",
    "trigger_mode": "once",
    "show_progress": "hidden",
    "concurrency_limit": None,
}
log = logging.getLogger(__name__)
Updates = dict[Any, Any]  # a component's new value or gr.update, by component


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


@dataclass
class SetupForm:
    """The game setup's controls, in the order a setup lists them."""

    role: gr.Radio
    opponent: gr.Dropdown
    condition: gr.Dropdown
    mode: gr.Radio
    opener: gr.Radio
    rounds: gr.Slider
    version: gr.Radio
    source: gr.Dropdown
    picked: gr.Dropdown

    @property
    def components(self) -> list:
        return [
            self.role,
            self.opponent,
            self.condition,
            self.mode,
            self.opener,
            self.rounds,
            self.version,
            self.source,
            self.picked,
        ]


class ArenaPage:
    """The Blocks app over one arena (launch it with bargain.web.launch_settings); its handlers are its methods."""

    def __init__(self, arena: Arena, options: Options) -> None:
        self.arena, self.options = arena, options
        self.secret = options.browser_secret
        self.admin = options.admin or AdminGate(None, arena.store)
        self.trusted_proxies = options.trusted_proxies
        self.limits = options.limits or StartLimits(arena.store)
        # The page offers and sends back the names people know the arms by (a remote model without its URL).
        self.offered = [arena.names[spec] for spec in options.available]

    # --- the layout -------------------------------------------------------------------------------

    def build(self) -> gr.Blocks:
        """The page: the Play tab (the setup, then the game), the Results tab, and the API endpoints."""
        with gr.Blocks(title="bargain arena", analytics_enabled=False) as demo:
            # The browser encrypts what it keeps with a key it is sent; derive one, so that the server's own secret
            # (which signs the ids) stays on the server and a restart keeps the same key.
            key = hmac.new(self.secret.encode(), b"browser-state key", hashlib.sha256).hexdigest()[:32]
            self.saved = gr.BrowserState(None, storage_key="bargain-arena", secret=key)
            self.current = gr.State(None)  # the view shown (a PersonView), or None
            gr.Markdown(
                "# Bargaining arena\nHaggle with a language model (or a scripted tactic) over an everyday item. "
                "Each side has a private reservation price; who knows what depends on the condition."
            )
            if self.options.note:
                gr.Markdown(self.options.note)
            with gr.Tab("Play"):
                self._setup_box()
                self._game_box()
            with gr.Tab("Results") as self.results_tab:
                self._results_box()
            self._wire_setup()
            self._wire_game()
            demo.load(  # a reload follows the kept game, as a start does
                self.resume,
                self.saved,
                self.game_outputs,
                api_visibility="private",
                show_progress="hidden",
                concurrency_limit=None,
            )
            self._wire_results()
            self._api()
        return demo

    def _setup_box(self) -> None:
        choices = [
            (f"{PEOPLE[spec][0] if spec in PEOPLE else name}{'' if playable else ' (unavailable)'}", name)
            for (spec, playable), name in zip(self.options.available.items(), self.offered)
        ]
        with gr.Accordion("Game setup", open=True) as self.setup_box:
            with gr.Row():
                role = gr.Radio([r.value for r in Role], value=Role.BUYER.value, label="You play")
                opponent = gr.Dropdown(
                    choices,
                    value=self.offered[0] if "tactic:linear" not in self.offered else "tactic:linear",
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
                self.search = gr.Textbox(label="...or search a product", placeholder="e.g. rice", max_length=MAX_SEARCH)
                picked = gr.Dropdown([], value=None, label="Chosen scenario", allow_custom_value=False)
            self.form = SetupForm(role, opponent, condition, mode, opener, rounds, version, source, picked)
            self.badge = gr.Markdown()
            self.start_button = gr.Button("Start game", variant="primary")
            self.start_note = gr.Markdown()  # what refused a start, beside the button that asked
            with gr.Group(visible=False) as self.confirm_box:  # asked here, where the person clicked Start
                gr.Markdown(
                    "**Your game is still going on.** Start a new one and leave this one? It will be "
                    "recorded as abandoned by you."
                )
                with gr.Row():
                    self.leave = gr.Button("Leave it and start a new game", variant="stop")
                    self.stay = gr.Button("Keep playing this game")

    def _game_box(self) -> None:
        self.invitation = gr.HTML(None, html_template=INVITATION_HTML, elem_id="invitation")  # while one waits
        self.stop_waiting = gr.Button("Stop waiting", visible=False)
        self.panel = GamePanel.build()
        self.again = gr.Button("Play again (same settings)", visible=False)

    def _results_box(self) -> None:
        self.refresh = gr.Button("Refresh")
        self.mine = gr.HTML(elem_classes=["results-table"])  # tables of text (arena.results.as_html)
        self.table = gr.HTML(visible=self.options.public_results, elem_classes=["results-table"])
        self.plot = gr.Plot(show_label=False, visible=False)  # its title is in the figure: a label would cover it
        with gr.Accordion("Export all games and moves (admin)", open=False):
            if self.options.storage_warning:
                warning = self.options.storage_warning.replace("_", "\\_")  # variable names, not emphasis
                gr.Markdown("**" + warning + "**")
            self.password = gr.Textbox(label="Admin password", type="password", max_length=200)
            self.export_button = gr.Button("Export CSV and Parquet")
            self.files = export_link()

    @property
    def game_outputs(self) -> list:
        """Everything a handler that shows a game may change."""
        return [
            self.current,
            self.saved,
            *self.panel.components,
            self.invitation,
            self.stop_waiting,
            self.again,
            self.setup_box,
            self.start_note,
            self.confirm_box,
            *self.form.components,
        ]

    # --- the wiring -------------------------------------------------------------------------------

    def _wire_setup(self) -> None:
        described: list[gr.Dropdown | gr.Radio | gr.Slider] = [
            self.form.opponent,
            self.form.role,
            self.form.condition,
            self.form.mode,
            self.form.rounds,
        ]
        for control in described:
            control.change(self.describe, described, self.badge, api_visibility="private", queue=False)
        self.search.change(self.find, self.search, self.form.picked, api_visibility="private", queue=False)
        given = {self.current, self.saved, *self.form.components}
        for button, started in (
            (self.start_button, self.start),
            (self.again, self.start_again),
            (self.leave, self.start_leaving),
        ):
            button.click(started, given, self.game_outputs, **FOLLOWING)
        self.stay.click(self.keep_playing, None, self.confirm_box, api_visibility="private", queue=False)

    def _wire_game(self) -> None:
        panel = self.panel
        panel.chat.clear(self.redraw, self.current, panel.chat, api_visibility="private", queue=False)
        panel.on_move(
            self.submit, [self.current, self.saved, panel.message, panel.price], self.game_outputs, **FOLLOWING
        )
        self.stop_waiting.click(
            self.stop, [self.current, self.saved], self.game_outputs, api_visibility="private", trigger_mode="once"
        )
        panel.retry.click(panel.locked, None, panel.buttons, api_visibility="private", queue=False).then(
            self.try_again, self.saved, self.game_outputs, **FOLLOWING
        )

    def _wire_results(self) -> None:
        shown = [self.mine, self.table, self.plot]
        for event in (self.refresh.click, self.results_tab.select):
            event(self.results, self.saved, shown, api_visibility="private", concurrency_limit=2)
        self.export_button.click(self.export, self.password, self.files, api_visibility="private", concurrency_limit=1)

    def _api(self) -> None:
        # Off the queue: these are short awaits, and a plain request costs both sides far less.
        for endpoint in (self.start_game, self.play_move, self.get_game, self.join_game, self.cancel_game):
            gr.api(endpoint, api_name=endpoint.__name__, queue=False)

    # --- rendering --------------------------------------------------------------------------------

    def render(
        self,
        view: PersonView | None,
        ids: dict,
        note: str = "",
        thinking_s: float | None = None,
        clear: bool = False,
        setup: Setup | None = None,
    ) -> Updates:
        """The page for a view (or for no game): the panel, what the browser keeps, and with `setup` the form
        showing the game's settings (a resumed game, or one started again)."""
        updates = self.panel.show(view, note, thinking_s, clear)
        # A finished game stays kept (and shown after a reload) until the person starts another; so does the id of a
        # start with a person that was sent and never answered, until a start is answered.
        updates.update(
            {
                self.current: view,
                self.saved: keep(self.secret, ids["player"], view.game_id if view else None, ids.get("starting")),
                self.again: gr.update(visible=view is not None and view.status not in ("active", "waiting")),
                self.invitation: view.invitation if view else None,
                self.stop_waiting: gr.update(visible=view is not None and view.status == "waiting"),
                self.setup_box: gr.update(open=view is None),
                self.start_note: "",
                self.confirm_box: gr.update(visible=False),
            }
        )
        if setup is not None:
            updates.update(self.form_showing(setup))
        return updates

    def form_showing(self, setup: Setup) -> Updates:
        """The setup form showing a game's settings."""
        form = self.form
        chosen = ":" in setup.scenario  # one product, as found by a search
        return {
            form.role: setup.role.value,
            form.opponent: self.arena.names_of([setup.arm])[setup.arm],
            form.condition: setup.condition.value,
            form.mode: setup.mode.value,
            form.opener: setup.first_actor.value,
            form.rounds: setup.rounds,
            form.version: setup.prompt_version.value,
            form.source: inputs.DEFAULT_SOURCE if chosen else setup.scenario,
            form.picked: gr.update(
                choices=[(self.arena.source.get(setup.scenario).product_name + f" ({setup.scenario})", setup.scenario)]
                if chosen
                else [],
                value=setup.scenario if chosen else None,
            ),
        }

    # --- the setup's handlers ---------------------------------------------------------------------

    def describe(self, name: str, role: str, condition: str, mode: str, rounds: int) -> str:
        """What choosing this opponent means: a person's game, an arm not available here, or settings outside
        the ones the arm was trained in."""
        from bargain.engine.scenarios import bundled
        from bargain.engine.trial import Trial

        try:
            spec = self.arena.spec_of(name)
        except ArenaError:
            return ""
        if spec not in self.options.available:
            return ""
        if spec in PEOPLE:
            return PEOPLE[spec][1]
        if not self.options.available[spec]:
            return f"**{name} is not available here.** {self.options.note}"
        try:
            probe = Trial(
                1,
                bundled().get("low:0"),
                inputs.choice("condition", condition, Condition),
                2.0,
                1.5,
                inputs.whole_number("rounds", rounds, 1, inputs.MAX_ROUNDS),
                inputs.choice("mode", mode, Mode),
            )
            agent_role = inputs.choice("role", role, Role).other
        except ArenaError:
            return ""
        reasons = resolve(spec).out_of_distribution(agent_role, probe)
        return ("**Outside training conditions** (out of distribution): " + "; ".join(reasons)) if reasons else ""

    def find(self, text: str) -> dict:
        """The products a search finds (at most 50), the first one chosen."""
        text = text if isinstance(text, str) else ""
        found = self.arena.source.search(text[:MAX_SEARCH])[:50] if len(text.strip()) >= 2 else []
        return gr.update(
            choices=[(f"{s.product_name} ({s.ref})", s.ref) for s in found], value=found[0].ref if found else None
        )

    def chosen(self, setup: Setup) -> Setup:
        """A setup as a page or an API caller sent it, whose opponent is the name people know it by: with the arm
        offered under that name (anything else is refused)."""
        return replace(setup, arm=self.arena.spec_of(setup.arm))

    def keep_playing(self) -> dict:
        """Keep playing the game going on: the question put beside Start goes away."""
        return gr.update(visible=False)

    async def start(
        self, given: dict, request: gr.Request | None, leaving: bool = False, same: bool = False
    ) -> AsyncIterator[Updates]:
        """Start a game from the form (`given`: the page's values by component; `leaving`: the person chose to leave
        the one going on; `same`: Play again, with the finished game's settings), and follow it while the other side
        is awaited."""
        view, ids = given[self.current], kept(self.secret, given[self.saved])
        view = view if isinstance(view, PersonView) else None
        active = view is not None and view.status == "active"
        if active and not leaving:  # ask first, beside the button: the game in progress would be left
            yield {self.confirm_box: gr.update(visible=True)}
            return
        try:
            if view is not None and view.status == "waiting":  # no one joined: nothing is left
                await self.arena.cancel(view.game_id)
            if same and view is not None:
                setup = await self.arena.setup_of(view.game_id)
            else:
                setup = self.chosen(self.setup_given(given))
            await asyncio.to_thread(self.limits.check, ids["player"], client_address(request, self.trusted_proxies))
            starting = None
            if setup.arm in (INVITE, QUEUE):  # kept until answered: a start made again after a lost answer is the same
                starting = ids.get("starting") or secrets.token_urlsafe(16)
                yield {self.saved: keep(self.secret, ids["player"], ids["game"], starting)}
            new = await self.arena.start(setup, player=ids["player"], replace=leaving, start_id=starting)
        except GameInProgress:  # going on in another tab (or sent twice): ask, as for the game shown
            yield {self.confirm_box: gr.update(visible=True)}
            return
        except ArenaError as exc:  # nothing changes: a game in progress goes on
            yield {self.start_note: told(exc), self.confirm_box: gr.update(visible=False)}
            return
        except Exception:
            log.exception("starting a game")
            yield {self.start_note: told(UNEXPECTED), self.confirm_box: gr.update(visible=False)}
            return
        ids = {"player": ids["player"], "game": new.game_id}  # answered: no start is pending
        yield self.render(new, ids, clear=True, setup=setup)
        async for update in self.following(new, ids):  # a game between people: waiting for the other one
            yield update

    def setup_given(self, given: dict) -> Setup:
        """The setup the form's values say (each one checked)."""
        form = self.form
        return inputs.setup(
            given[form.role],
            given[form.opponent],
            given[form.condition],
            given[form.mode],
            given[form.rounds],
            given[form.picked] or given[form.source],
            given[form.version],
            given[form.opener],
        )

    async def start_leaving(self, given: dict, request: gr.Request) -> AsyncIterator[Updates]:
        """Leave the game going on (recorded as abandoned) and start the one the form sets up."""
        async for update in self.start(given, request, leaving=True):
            yield update

    async def start_again(self, given: dict, request: gr.Request) -> AsyncIterator[Updates]:
        """Play again, with the finished game's settings."""
        async for update in self.start(given, request, same=True):
            yield update

    # --- the game's handlers ----------------------------------------------------------------------

    async def submit(self, action: str, view: Any, saved: object, message: str, price: str) -> AsyncIterator[Updates]:
        """Play the person's move: shown at once, while the other side thinks (seconds shown as they pass), then
        the game as it stands; a move refused leaves what was typed for correcting."""
        ids = kept(self.secret, saved)
        if not isinstance(view, PersonView):
            yield self.render(None, ids, note="**Start a game first.**")
            return
        try:
            move = inputs.human_move(action, price, message)  # read once, here
        except ArenaError as exc:  # refused at once: nothing sent, what was typed stays
            yield self.render(view, ids, note=told(exc))
            return
        pending = view.playing(move)
        began = time.monotonic()
        work = asyncio.ensure_future(self.arena.play(view.game_id, view.round, move))
        while not work.done():
            yield self.render(pending, ids, thinking_s=time.monotonic() - began)
            await asyncio.wait({work}, timeout=1.0)
        try:
            new = work.result()
        except ArenaError as exc:  # refused: nothing stored, what was typed stays
            yield self.render(view, ids, note=told(exc))
            return
        except Exception:
            log.exception("a move in game %s", view.game_id)
            yield self.render(view, ids, note=told(UNEXPECTED))
            return
        # After a round that could not be played, what was typed stays for the retry.
        yield self.render(new, ids, clear=new.error is None)
        async for update in self.following(new, ids):  # the other person's move, in a game between people
            yield update

    async def following(self, view: PersonView, ids: dict, setup: Setup | None = None) -> AsyncIterator[Updates]:
        """While the other side is awaited (a model's move, or a person's move or arrival), the page shows so
        and follows the game: each look waits up to VIEW_WAIT_S for a change."""
        began = time.monotonic()
        while view.thinking:
            view = await self.arena.view(view.game_id, wait_s=VIEW_WAIT_S, retry=False)
            thinking_s = time.monotonic() - began if view.thinking else None
            yield self.render(view, ids, thinking_s=thinking_s, setup=setup)

    async def follow(self, saved: object, retry: bool) -> AsyncIterator[Updates]:
        """The kept game: resumed if it is on, shown with its outcome and debrief if it has ended, the form
        showing its settings; or the page ready for a new one. It answers at once: while the other side is still
        thinking (a model move, bounded by the arena's deadline) the page shows so and follows it. With `retry`,
        a round that failed is tried again; without (a reload), it is shown as failed."""
        ids = kept(self.secret, saved)
        if not ids["game"]:
            yield self.render(None, ids)
            return
        try:
            setup = await self.arena.setup_of(ids["game"])
            view = await self.arena.view(ids["game"], wait_s=VIEW_WAIT_S, retry=retry)
            yield self.render(view, ids, thinking_s=0.0 if view.thinking else None, setup=setup)
            async for update in self.following(view, ids, setup):
                yield update
        except ArenaError as exc:
            yield self.render(None, ids, note=told(exc) if "no such game" not in str(exc) else "")
        except Exception:
            log.exception("resuming game %s", ids["game"])
            yield self.render(None, ids, note=told(UNEXPECTED))

    async def resume(self, saved: object, request: gr.Request | None) -> AsyncIterator[Updates]:
        """A reload: the kept game as it stands; or, opened by an invitation link (?join=TOKEN), the game the
        link invites to, joined."""
        token = request.query_params.get("join") if request is not None else None
        if not token:
            async for update in self.follow(saved, retry=False):
                yield update
            return
        ids = kept(self.secret, saved)
        try:
            view = await self.arena.join(token, ids["player"], held=ids["game"])
        except ArenaError as exc:
            yield self.render(None, ids, note=told(exc))
            return
        except Exception:
            log.exception("joining a game")
            yield self.render(None, ids, note=told(UNEXPECTED))
            return
        setup = await self.arena.setup_of(view.game_id)
        yield self.render(view, ids, clear=True, setup=setup)
        async for update in self.following(view, ids, setup):
            yield update

    async def stop(self, view: Any, saved: object) -> Updates:
        """Stop waiting for the other person: the game is cancelled, and the page is ready for a new one."""
        ids = kept(self.secret, saved)
        if not isinstance(view, PersonView):
            return self.render(None, ids)
        try:
            return self.render(await self.arena.cancel(view.game_id), ids)
        except ArenaError as exc:
            return self.render(view, ids, note=told(exc))

    async def try_again(self, saved: object) -> AsyncIterator[Updates]:
        """Try again, after a round that failed."""
        async for update in self.follow(saved, retry=True):
            yield update

    def redraw(self, view: Any) -> list[dict]:
        """The transcript again, should the chat ever be cleared."""
        return chat_messages(view) if isinstance(view, PersonView) else []

    # --- results ----------------------------------------------------------------------------------

    def results(self, saved: object) -> list:
        """The person's own games, and (where results are public) everyone's, as a table and a figure."""
        player = kept(self.secret, saved)["player"]
        try:
            shown = results_tab.shown(self.arena, player, self.options.public_results)
            if shown.everyone is None:
                return [shown.mine, gr.update(), gr.update(visible=False)]
            return [shown.mine, shown.everyone, gr.update(value=shown.figure, visible=shown.figure is not None)]
        except StoreError as exc:
            log.error("reading the results: %s", exc)
            raise refusal("The results cannot be read right now: try again in a minute.") from None

    @admin_only
    def export(self) -> dict:
        """Every game and move, as CSV and Parquet in one archive for the admin's browser."""
        try:
            return private_export(self.arena.store.export, "bargain-games")
        except StoreError as exc:
            log.error("exporting the database: %s", exc)
            raise refusal("The database cannot be read right now: try again in a minute.") from None

    # --- named API endpoints: the caller's own view only ------------------------------------------

    async def answer(self, work: Awaitable[PersonView]) -> dict:
        """A view for an API caller (as JSON), or one of the project's own messages as a gr.Error."""
        try:
            return (await work).to_json()
        except ArenaError as exc:
            raise refusal(str(exc)) from None
        except Exception:
            log.exception("an API call")
            raise refusal(UNEXPECTED) from None

    async def start_game(
        self,
        role: str = "buyer",
        opponent: str = "tactic:linear",
        condition: str = "both_unaware",
        mode: str = "simultaneous",
        rounds: int = 4,
        scenario: str = "low",
        prompt_version: str = "train",
        player: str | None = None,
        first_actor: str = "buyer",
        start_id: str | None = None,
        request: gr.Request | None = None,
    ) -> dict:
        """Start a game against one of the offered opponents and return your view of it (keep `game_id`). With a
        person: send a `start_id` drawn at random (16-64 letters, digits, _ or -), and the same one with the same
        player id when you send this start again after its answer was lost: you are given the game it started, not
        a second one, whose partner would wait for you."""

        async def work() -> PersonView:
            setup = self.chosen(
                inputs.setup(role, opponent, condition, mode, rounds, scenario, prompt_version, first_actor)
            )
            who = inputs.player_id(player)
            where = client_address(request, self.trusted_proxies)  # no signed browser id here, and the session hash
            await asyncio.to_thread(self.limits.check, f"api:{where}", where)  # is the caller's choice
            return await self.arena.start(setup, player=who, start_id=start_id)

        return await self.answer(work())

    async def play_move(self, game_id: str, round: int, action: str, price: str = "", message: str = "") -> dict:
        """Make your move for `round` (OFFER with a price, DEAL, NO_DEAL) and return your new view."""
        return await self.answer(self.arena.move(game_id, round, action, price, message))

    async def get_game(self, game_id: str, wait_s: float = 0.0) -> dict:
        """Your current view of a game (resumes it after a restart, or retries a round that failed), at once; with
        `wait_s` (at most 10), while the other side is awaited, wait that long for its move. A wait for a person in
        the queue stays yours while you ask for it at least every 15 s."""

        async def work() -> PersonView:
            waited = inputs.number("wait_s", wait_s, 0.0, MAX_WAIT_S)
            return await self.arena.view(game_id, wait_s=waited)

        return await self.answer(work())

    async def join_game(self, token: str, player: str | None = None, start_id: str | None = None) -> dict:
        """Take the seat an invitation carries (the `invitation` of a game against person:invite): your view
        of the game, which begins. Its `game_id` is your seat's token, the only handle on it: the link opens
        nothing once taken, but to the same player id with the same `start_id` (drawn at random, as for
        `start_game`), so that a join sent again after its answer was lost is given the seat it took."""
        return await self.answer(self.arena.join(token, player, start_id=start_id))

    async def cancel_game(self, game_id: str) -> dict:
        """Stop waiting for the other person of a game nobody has joined yet."""
        return await self.answer(self.arena.cancel(game_id))

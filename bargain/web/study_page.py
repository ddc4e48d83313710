"""A study's web page: one page whose sections follow the participant's stage.

`StudyPage.build` only lays the page out and wires its events; each event is a method that calls the
`StudyRunner` (bargain.study.flow) with the participant's URL parameters, read once when the page loads and kept
server-side, and renders the page it returns. The sections are built from the study file when the app starts (its
questions and survey items are known then), so nothing but the stage's section is ever shown. Free-play controls do
not exist here. Programs (simulated participants, the benchmark) use the two named endpoints, `study_page` and
`study_step`, which do exactly what the page does. The researcher's dashboard is the same page opened with `?admin`
in its address, behind the admin password.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
import re
import secrets
from collections.abc import AsyncIterator, Awaitable
from dataclasses import replace
from pathlib import Path
from typing import Any

import gradio as gr

from bargain.arena.limits import AdminGate
from bargain.arena.views import PersonView, money
from bargain.records.store import StoreError
from bargain.study import records
from bargain.study.config import TimeoutRule
from bargain.study.flow import ParticipantPage, StudyRunner, StudyStop, attempts_left
from bargain.study.survey import ItemType, SurveyItem
from bargain.web.common import UNEXPECTED, admin_only, export_link, private_export, refusal, told
from bargain.web.panel import GamePanel, claims_markdown, other_markdown

log = logging.getLogger(__name__)
# Said on the game page once a move of the participant's was not made in time, by the study's payment rule.
TIMED_OUT = {
    TimeoutRule.NO_BONUS_FOR_TIMED_OUT_GAMES: "Your time for a move ran out, so it counted as a pass (no offer made). "
    "Under this study's payment rule, a game in which a move was not made in "
    "time earns no bonus.",
    TimeoutRule.BONUS_AS_PLAYED: "Your time for a move ran out, so it counted as a pass (no offer made). The game "
    "still counts towards your bonus as it ends.",
}
CANNOT_REACH = "The study's records cannot be read right now. Nothing is lost: reload this page in a minute."
CANNOT_SAVE = (
    "The study's records cannot be saved right now, so that step was not taken and nothing is lost: "
    "try again in a minute."
)
MAX_PARAMETERS, MAX_VALUE = 16, 256  # what a study link may carry
# The analysis report (one self-contained page) inside the dashboard: a frame of its own, its scripts off.
REPORT_FRAME = 'sandbox="" style="width: 100%; height: 80vh; border: 1px solid #e5e7eb; border-radius: 6px"'
SECTIONS = ("consent", "instructions", "comprehension", "game", "game_survey", "final_survey", "debrief", "end")


def _query(params: Any) -> dict[str, str]:
    """URL parameters as plain bounded strings (anything else is dropped)."""
    if not isinstance(params, dict):
        return {}
    return {str(k)[:64]: v[:MAX_VALUE] for k, v in list(params.items())[:MAX_PARAMETERS] if isinstance(v, str)}


def _classes(item: SurveyItem, unanswered: bool = False) -> list[str]:
    """An item's CSS classes: a Likert scale's (one line on a phone), and the mark of one left wrongly answered."""
    return (["likert"] if item.type is ItemType.LIKERT else []) + (["needs-answer"] if unanswered else [])


def _component(item: SurveyItem) -> gr.components.Component:
    if item.type is ItemType.LIKERT and item.scale is not None:  # a Likert item always has its scale
        low, high = item.scale
        label = f"{item.text} ({low}: {item.anchors[0]}; {high}: {item.anchors[1]})" if item.anchors else item.text
        return gr.Radio([str(v) for v in range(low, high + 1)], label=label, elem_classes=_classes(item))
    if item.type is ItemType.CHOICE:
        return gr.Radio(list(item.options), label=item.text)
    return gr.Textbox(
        label=item.text + ("" if item.required else " (optional)"), max_length=item.max_length or 500, lines=3
    )


def outcome_markdown(outcome: dict) -> str:
    """A finished game's outcome as the participant may see it before the debrief (flow.KNOWN_OUTCOME): the deal's
    price and round, or no deal, and their own utility. Normalised utilities are the debrief's: they would give the
    other side's price away."""
    rounds = outcome["rounds"]
    if outcome["deal"]:
        head = f"**Deal at {money(outcome['deal_price'])} in round {rounds}.**"
    else:
        head = f"**No deal after {rounds} round{'' if rounds == 1 else 's'}.**"
    gained = "what the deal gained you over the market price" if outcome["deal"] else "no deal gains nothing"
    return f"{head} Your utility: **{outcome['your_utility']:.2f}** ({gained})."


# How the debrief names the other side of a game, by who played it (the view's `other`): a program, or another
# participant (a person arm's game; its fallback against a program is a program's game).
OTHER_PARTY = {"agent": ("The other party", "its"), "person": ("The other participant", "their")}


def debrief_markdown(page: ParticipantPage) -> str:
    """The study's debrief, then each game's: who the other party was and their price, a program's strategy, the
    claims checked; a game nobody came to play (a person arm's wait ended), said so."""
    parts = [page.text]
    for number, debrief in enumerate(page.debriefs, 1):
        if debrief is None:
            parts.append(f"### Game {number}\n\nNobody came to play this game with you in time, so it was not played.")
            continue
        who, whose = OTHER_PARTY[debrief["other"]]
        parts.append(
            f"### Game {number}\n\n" + other_markdown(debrief, who) + claims_markdown(debrief["claims"], who, whose)
        )
    return "\n\n".join(parts)


PRIVATE: dict[str, Any] = {"api_visibility": "private", "trigger_mode": "once", "concurrency_limit": None}


class StudyPage:
    """The study's Blocks app (launch it with bargain.web.launch_settings); its handlers are its methods."""

    def __init__(self, runner: StudyRunner, admin: AdminGate | None = None, trusted_proxies: int = 0) -> None:
        self.runner, self.study = runner, runner.study
        self.admin = admin or AdminGate(None, runner.arena.store)
        self.trusted_proxies = trusted_proxies
        self.per_game = [
            *self.study.surveys.per_game,
            *(
                SurveyItem(id=c.id, type=ItemType.CHOICE, text=c.text, options=c.options, values=c.options)
                for c in self.study.attention_checks
            ),
        ]
        self.items = {item.id: item for item in (*self.per_game, *self.study.surveys.final)}

    # --- the layout -------------------------------------------------------------------------------

    def build(self) -> gr.Blocks:
        """The page: one section per stage (only the participant's shown), the researcher's view, the endpoints."""
        study = self.study
        with gr.Blocks(title=study.title, analytics_enabled=False) as demo:
            self.params = gr.State({})
            # A random token the browser keeps (encrypted with a key of this study's): the same browser coming back
            # under another id is flagged for the researcher (records.shared_browsers).
            salt = records.study_salt(self.runner.arena.store, study.name, study.version)
            self.browser = gr.BrowserState(
                "",
                storage_key=f"bargain-study-{study.name}",
                secret=hmac.new(salt.encode(), b"browser token", hashlib.sha256).hexdigest(),
            )
            self.shown = gr.State("")  # the stage whose section is shown
            self.view = gr.State(None)  # the game view shown
            self.note = gr.Markdown()
            self.boxes: dict[str, gr.Column] = {}
            self.fields: dict[str, dict[str, gr.components.Component]] = {}
            self._opening_sections()
            self._game_sections()
            self._closing_sections()
            self._admin_section()
            demo.load(
                self.load, self.browser, [*self.outputs, self.browser], api_visibility="private", concurrency_limit=None
            )
            self._wire_steps()
            self._wire_game()
            self._wire_admin()
            self._api()
        return demo

    def _opening_sections(self) -> None:
        with gr.Column(visible=False) as self.boxes["consent"]:
            self.consent_text = gr.Markdown()
            with gr.Row():
                self.agree = gr.Button("I agree to take part", variant="primary")
                self.decline = gr.Button("I do not agree")
        with gr.Column(visible=False) as self.boxes["instructions"]:
            self.instructions_text = gr.Markdown()
            self.read = gr.Button("I have read the instructions", variant="primary")
        with gr.Column(visible=False) as self.boxes["comprehension"]:
            self.comprehension_head = gr.Markdown()
            self.questions = {q.id: gr.Radio(list(q.options), label=q.text) for q in self.study.comprehension.questions}
            self.check = gr.Button("Check my answers", variant="primary")

    def _game_sections(self) -> None:
        with gr.Column(visible=False) as self.boxes["game"]:
            self.game_head = gr.Markdown()
            # the outcome and debrief wait for the debrief page
            self.panel = GamePanel.build(countdown=True, result=False)
        with gr.Column(visible=False) as self.boxes["game_survey"]:
            self.survey_head = gr.Markdown()
            self.fields["game_survey"] = {item.id: _component(item) for item in self.per_game}
            self.survey_done = gr.Button("Submit", variant="primary")
        with gr.Column(visible=False) as self.boxes["final_survey"]:
            gr.Markdown("### A few last questions")
            self.fields["final_survey"] = {item.id: _component(item) for item in self.study.surveys.final}
            self.final_done = gr.Button("Submit", variant="primary")

    def _closing_sections(self) -> None:
        with gr.Column(visible=False) as self.boxes["debrief"]:
            self.debrief_text = gr.Markdown()
            self.finish = gr.Button("Finish and get my completion code", variant="primary")
        with gr.Column(visible=False) as self.boxes["end"]:
            self.end_text = gr.Markdown()
            self.redirect = gr.Textbox(visible=False)

    def _admin_section(self) -> None:
        with gr.Column(visible=False) as self.admin_box:
            gr.Markdown(f"## {self.study.name}, version {self.study.version}: the researcher's view")
            # The button under the field, as on the arena's admin tab: at the top right a refusal's toast covers it.
            self.password = gr.Textbox(label="Admin password", type="password", max_length=200)
            self.open_dashboard = gr.Button("Open / refresh", variant="primary")
            with gr.Column(visible=False) as self.dashboard_box:
                self._dashboard_tables()
                with gr.Accordion("Export the study's data", open=False):
                    gr.Markdown(
                        "Participants, games, moves and surveys (long and wide) as CSV and Parquet, with a "
                        "codebook; participant ids as the study file sets them (pseudonyms by default). "
                        "`payment/bonuses.csv` is the bulk bonus file of Prolific and carries the real ids: "
                        "keep it private. The archive is made for this page only: it is not kept on the "
                        "server, and no address serves it."
                    )
                    self.export_button = gr.Button("Export")
                    self.export_files = export_link()
                with gr.Accordion("Analyse the data so far", open=False):
                    gr.Markdown(
                        "What `bargain analyse` makes of the study's data so far: models per outcome with the "
                        "participant as the unit, contrasts against the reference arm, the leaderboard of arms and "
                        "the paper's cells beside them (a few seconds). The whole report (tables, figures, "
                        "analysis.json) comes as an archive, made for this page only."
                    )
                    self.analyse_button = gr.Button("Analyse")
                    self.analysis_files = export_link()
                    self.analysis_report = gr.HTML()

    def _dashboard_tables(self) -> None:
        with gr.Row():
            funnel = gr.Dataframe(label="Funnel", interactive=False)
            cells = gr.Dataframe(label="Cells against their quotas", interactive=False)
        with gr.Row():
            times = gr.Dataframe(label="Median seconds per page", interactive=False)
            excluded = gr.Dataframe(label="Excluded (data kept, flagged)", interactive=False)
        browsers = gr.Dataframe(
            label="Ids that came from a browser another id came from (a person "
            "back under a new id, or a shared computer: data kept, flagged)",
            interactive=False,
        )
        games = gr.Dataframe(label="Recent games", interactive=False)
        self.picked_game = gr.Dropdown([], label="Show a game, both sides' private information side by side")
        self.transcript = gr.Markdown()
        self.dashboard_outputs = [self.dashboard_box, funnel, cells, times, excluded, browsers, games, self.picked_game]

    @property
    def outputs(self) -> list:
        """Everything a participant's handler may change, in the order its updates come."""
        return [
            self.params,
            self.shown,
            self.view,
            self.note,
            self.admin_box,
            *self.boxes.values(),
            self.consent_text,
            self.instructions_text,
            self.comprehension_head,
            *self.questions.values(),
            self.game_head,
            *self.panel.components,
            self.survey_head,
            *self.fields["game_survey"].values(),
            *self.fields["final_survey"].values(),
            self.debrief_text,
            self.end_text,
            self.redirect,
        ]

    # --- the wiring -------------------------------------------------------------------------------

    def _wire_steps(self) -> None:
        # Following a game waits, it does not work: no place in the queue's --concurrency is taken (participants
        # waiting for a partner would hold up everyone else's pages).
        self.agree.click(self.agreed, [self.params], self.outputs, **PRIVATE)
        self.decline.click(self.declined, [self.params], self.outputs, **PRIVATE)
        self.read.click(self.instructions_read, [self.params], self.outputs, **PRIVATE)
        self.check.click(self.answered_questions, {self.params, *self.questions.values()}, self.outputs, **PRIVATE)
        for button, survey, answered in (
            (self.survey_done, "game_survey", self.game_survey_answered),
            (self.final_done, "final_survey", self.final_survey_answered),
        ):
            button.click(answered, {self.params, *self.fields[survey].values()}, self.outputs, **PRIVATE)
        self.finish.click(self.finished, [self.params], self.outputs, **PRIVATE)
        self.redirect.change(
            None,
            self.redirect,
            None,
            js="(url) => { if (url) setTimeout(() => { window.location.href = url; }, 4000); }",
        )

    def _wire_game(self) -> None:
        panel = self.panel
        moved = [self.params, self.view, panel.message, panel.price]
        panel.on_move(self.move, moved, self.outputs, show_progress="hidden", **PRIVATE)
        if panel.countdown is None:
            raise RuntimeError("the study's game panel is built with its countdown")
        panel.countdown.click(self.current, [self.params], self.outputs, **PRIVATE)
        panel.retry.click(panel.locked, None, panel.buttons, api_visibility="private", queue=False).then(
            self.try_again, [self.params], self.outputs, **PRIVATE
        )

    def _wire_admin(self) -> None:
        self.open_dashboard.click(
            self.dashboard, self.password, self.dashboard_outputs, api_visibility="private", concurrency_limit=2
        )
        self.picked_game.change(
            self.show_game, [self.password, self.picked_game], self.transcript, api_visibility="private"
        )
        self.export_button.click(
            self.export, self.password, self.export_files, api_visibility="private", concurrency_limit=1
        )
        self.analyse_button.click(
            self.analyse,
            self.password,
            [self.analysis_files, self.analysis_report],
            api_visibility="private",
            concurrency_limit=1,
        )

    def _api(self) -> None:
        # Undocumented: callable by programs that know them, listed nowhere, and no page links to them.
        gr.api(self.study_page, api_name="study_page", queue=False, api_visibility="undocumented")
        gr.api(self.study_step, api_name="study_step", queue=False, api_visibility="undocumented")

    # --- rendering --------------------------------------------------------------------------------

    def render(self, query: dict, page: ParticipantPage, clear: bool = False) -> list:
        """Every output for a page, so that no path returns fewer. `clear`: a move was played, so the message and
        price boxes are emptied (the next game's first round opens with them empty too)."""
        stage = page.stage
        section = stage if stage in SECTIONS else "end"
        errors = page.errors or {}
        # A game's note is said beside its buttons (game_values), where the move it is about was made.
        in_game = stage == "game" and page.view is not None
        note = told(page.note) if page.note and not in_game else ""
        if errors:  # each question named, and marked where it stands
            asked = {q["id"]: q["text"] for q in page.questions or page.items or ()}
            note = "**Please check your answers:**\n" + "\n".join(
                f"- *{asked.get(key, key)}*: {error}" for key, error in errors.items()
            )
        values: dict[Any, Any] = {self.params: query, self.shown: stage, self.note: note, self.view: page.view}
        values.update({box: gr.update(visible=name == section) for name, box in self.boxes.items()})
        if clear:
            values.update(self.panel.cleared())
        values[self.consent_text] = page.text if stage == "consent" else gr.update()
        values[self.instructions_text] = page.text if stage == "instructions" else gr.update()
        if stage == "comprehension":
            values.update(self.comprehension_values(page, errors))
        if stage == "game" and page.view is not None:
            values.update(self.game_values(page, page.view))
        if stage in ("game_survey", "final_survey"):
            values.update(self.survey_values(stage, page, errors))
        if stage == "debrief":
            values[self.debrief_text] = debrief_markdown(page)
        if section == "end":
            values.update(self.end_values(stage, page))
        return [values.get(component, gr.update()) for component in self.outputs]

    def comprehension_values(self, page: ParticipantPage, errors: dict) -> dict:
        """The participant's own questions (a role's are asked of that role only), those wrongly answered marked."""
        asked = {q["id"] for q in page.questions}
        values: dict[Any, Any] = {
            question: gr.update(visible=key in asked, elem_classes=["needs-answer"] if key in errors else [])
            for key, question in self.questions.items()
        }
        values[self.comprehension_head] = (
            f"### Before you start\nAnswer these questions on the instructions ({attempts_left(page.attempts_left)})."
        )
        return values

    def game_values(self, page: ParticipantPage, game: PersonView) -> dict:
        said = []
        if any(t["speaker"] == "you" and t["timed_out"] for t in game.transcript):
            said.append(TIMED_OUT[self.study.payment.timeout_rule])
        if game.notice or game.error:
            said.insert(0, told(game.notice or game.error))
        if page.note:
            said.insert(0, told(page.note))
        values: dict[Any, Any] = {self.game_head: f"## Game {page.game} of {page.games}, against {page.opponent}"}
        values.update(self.panel.show(game, note="\n\n".join(said)))
        return values

    def survey_values(self, stage: str, page: ParticipantPage, errors: dict) -> dict:
        """A survey's items, those wrongly answered marked: a new survey starts empty, a refused one keeps its
        answers."""
        asked = {item["id"]: item for item in page.items}
        fresh = {} if errors else {"value": None}
        values: dict[Any, Any] = {}
        for item_id, component in self.fields[stage].items():
            item = asked.get(item_id)
            values[component] = gr.update(
                visible=item is not None,
                elem_classes=_classes(self.items[item_id], item_id in errors),
                **fresh,
                **({"choices": item["options"]} if item and item["type"] == "choice" else {}),
            )
        if stage == "game_survey" and page.outcome is not None:
            values[self.survey_head] = f"### Game {page.game} is over\n\n{outcome_markdown(page.outcome)}\n\n" + (
                "A few questions about it."
            )
        return values

    def end_values(self, stage: str, page: ParticipantPage) -> dict:
        code, link = page.code, page.redirect
        thanks = "## Thank you!\nYou have completed the study." if stage == "completed" else ""
        lines = [
            page.text or thanks,
            f"Your completion code: **{code}**" if code else "",
            f"You will be taken back in a few seconds, or [follow this link]({link})." if link else "",
        ]
        return {self.end_text: "\n\n".join(filter(None, lines)), self.redirect: link or ""}

    def stopped(self, query: dict, text: str) -> list:
        return self.render(query, ParticipantPage("end", text=text))

    # --- the participant's handlers ---------------------------------------------------------------

    async def current(
        self, query: dict, note: str = "", retry: bool = False, token: str | None = None
    ) -> AsyncIterator[list]:
        """The participant's page as it stands (a load, a reload, the countdown reaching zero; with `retry`, Try
        again after a round that failed; `token`: their browser's, on a load). It answers at once, and while the
        other side of a game is still thinking the page follows it."""
        try:
            page = await self.runner.page(query, retry=retry, browser=token)
            while page.thinking:
                yield self.render(query, page)
                page = await self.runner.page(query)
            yield self.render(query, replace(page, note=note) if note else page)
        except StudyStop as exc:
            yield self.stopped(query, str(exc))
        except StoreError as exc:
            log.error("a study page: %s", exc)
            yield self.stopped(query, CANNOT_REACH)
        except Exception:
            log.exception("a study page")
            yield self.stopped(query, UNEXPECTED)

    async def load(self, kept: str, request: gr.Request | None) -> AsyncIterator[list]:
        """The page opened: the participant's, as their link's parameters name them (their browser's token kept,
        or a new one); or, opened with `?admin`, the researcher's view and no participant."""
        query = _query(dict(request.query_params) if request else {})
        if "admin" in (request.query_params if request else {}):
            shown = (self.admin_box, *self.boxes.values())
            yield [
                gr.update(visible=component is self.admin_box) if component in shown else gr.update()
                for component in self.outputs
            ] + [gr.update()]
            return
        token = kept if isinstance(kept, str) and re.fullmatch(r"[0-9a-f]{32}", kept) else secrets.token_hex(16)
        async for update in self.current(query, token=token):
            yield update + [token]

    async def step(self, query: dict, stage: str, data: dict) -> AsyncIterator[list]:
        """A step made on the page of `stage` with `data`: the page that follows, followed while the other side of
        a game is awaited (a model's move, or another participant's move or arrival)."""
        try:
            page = await self.runner.submit(query, stage, data)
            # A move refused (a note) or a round that could not be played leaves what was typed for correcting.
            played = stage == "game" and not page.note and (page.view is None or page.view.error is None)
            yield self.render(query, page, clear=played)
            while page.thinking:
                page = await self.runner.page(query)
                yield self.render(query, page)
            return
        except StudyStop as exc:
            yield self.stopped(query, str(exc))
            return
        except StoreError as exc:
            log.error("a study step (%s): %s", stage, exc)
            note = CANNOT_SAVE
        except Exception:
            log.exception("a study step (%s)", stage)
            note = UNEXPECTED
        async for update in self.current(query, note):
            yield update

    async def agreed(self, query: dict) -> AsyncIterator[list]:
        async for update in self.step(query, "consent", {"agree": True}):
            yield update

    async def declined(self, query: dict) -> AsyncIterator[list]:
        async for update in self.step(query, "consent", {"agree": False}):
            yield update

    async def instructions_read(self, query: dict) -> AsyncIterator[list]:
        async for update in self.step(query, "instructions", {}):
            yield update

    async def answered_questions(self, given: dict) -> AsyncIterator[list]:
        answers = {key: given[question] for key, question in self.questions.items()}
        async for update in self.step(given[self.params], "comprehension", answers):
            yield update

    async def game_survey_answered(self, given: dict) -> AsyncIterator[list]:
        answers = {key: given[field] for key, field in self.fields["game_survey"].items()}
        async for update in self.step(given[self.params], "game_survey", answers):
            yield update

    async def final_survey_answered(self, given: dict) -> AsyncIterator[list]:
        answers = {key: given[field] for key, field in self.fields["final_survey"].items()}
        async for update in self.step(given[self.params], "final_survey", answers):
            yield update

    async def finished(self, query: dict) -> AsyncIterator[list]:
        async for update in self.step(query, "debrief", {}):
            yield update

    async def move(self, action: str, query: dict, view: Any, message: str, price: str) -> AsyncIterator[list]:
        """A move in the game shown (its round, as the participant saw it)."""
        round_ = view.round if isinstance(view, PersonView) else None
        data = {"round": round_, "action": action, "price": price, "message": message}
        async for update in self.step(query, "game", data):
            yield update

    async def try_again(self, query: dict) -> AsyncIterator[list]:
        async for update in self.current(query, retry=True):
            yield update

    # --- the researcher's handlers ----------------------------------------------------------------

    @admin_only
    def dashboard(self) -> list:
        """The dashboard's tables, and its list of recent games to show."""
        from bargain.study import dashboard as tables

        store, name, version = self.runner.arena.store, self.study.name, self.study.version
        games = tables.recent_games(store, name)
        return [
            gr.update(visible=True),
            tables.funnel(store, name, version),
            tables.cells(store, name, version),
            tables.page_times(store, name, version),
            tables.excluded(store, name, version),
            tables.same_browser(store, name, version),
            games,
            gr.update(choices=[(tables.game_label(g), g.id) for g in games.itertuples()]),
        ]

    @admin_only
    def show_game(self, game_id: object) -> str:
        """A game's transcript, both sides' private information side by side."""
        from bargain.study.dashboard import transcript_markdown

        return transcript_markdown(self.runner.arena.store, game_id) if isinstance(game_id, str) else ""

    @admin_only
    def export(self) -> dict:
        """The study's data as one archive for the researcher's browser."""
        from bargain.study.export import export_study

        study = self.study
        try:
            return private_export(
                lambda out: export_study(self.runner.arena.store, study.name, study.version, out_dir=out),
                f"{study.name}-v{study.version}",
            )
        except Exception:
            log.exception("exporting the study")
            raise refusal("The study's data cannot be exported right now: try again in a minute.") from None

    @admin_only
    def analyse(self) -> list:
        """The report of the data so far, shown here and as an archive (a handler Gradio runs in a thread: the
        fits take seconds of CPU, never on the event loop)."""
        from bargain.study.analyse import AnalysisError, analysis_of, read_export, write_report
        from bargain.study.export import export_study

        study, shown = self.study, {}

        def write(out: str) -> list[Path]:
            data, report = Path(out) / "export", Path(out)
            export_study(self.runner.arena.store, study.name, study.version, out_dir=data)
            written = write_report(analysis_of(read_export(data)), report)
            shown["html"] = (report / "report.html").read_text(encoding="utf-8")
            return written  # the report only: the export (its payment files) goes with the folder

        try:
            archive = private_export(write, f"{study.name}-v{study.version}-analysis")
        except AnalysisError as exc:
            raise refusal(str(exc)) from None
        except Exception:
            log.exception("analysing the study")
            raise refusal("The study's data cannot be analysed right now: try again in a minute.") from None
        frame = f'<iframe srcdoc="{html.escape(shown["html"])}" title="The analysis" {REPORT_FRAME}></iframe>'
        return [archive, frame]

    # --- named endpoints: what the page does, for programs (simulated participants, the benchmark) ------------

    async def answered(self, work: Awaitable[ParticipantPage], doing: str, failed: str) -> dict:
        """A page for a program (as JSON), or one of the project's own sentences as a gr.Error (details in one log
        line, or a traceback for what no one expected)."""
        try:
            return (await work).to_json()
        except StudyStop as exc:
            raise refusal(str(exc)) from None
        except StoreError as exc:
            log.error("%s: %s", doing, exc)
            raise refusal(failed) from None
        except Exception:
            log.exception(doing)
            raise refusal(UNEXPECTED) from None

    async def study_page(self, query: dict) -> dict:
        """The page the participant named by `query` (the study link's parameters) is at (a round of a game
        that failed is tried again). In a game whose other side is still thinking, its view says `thinking`:
        ask again."""
        return await self.answered(self.runner.page(_query(query), retry=True), "a study page", CANNOT_REACH)

    async def study_step(self, query: dict, stage: str, data: dict) -> dict:
        """Make a step on the page of `stage` (consent, instructions, comprehension, game, game_survey,
        final_survey, debrief) with `data`; returns the page that follows."""
        return await self.answered(
            self.runner.submit(_query(query), str(stage)[:32], data if isinstance(data, dict) else {}),
            "a study step",
            CANNOT_SAVE,
        )

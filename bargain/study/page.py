"""The study's web page (Gradio 6): one page whose sections follow the participant's stage.

Handlers stay thin: each calls the `StudyRunner` (bargain.study.flow) with the participant's URL
parameters, read once when the page loads and kept server-side, and renders the dict it returns.
The sections are built from the study file when the app starts (its questions and survey items
are known then), so nothing but the stage's section is ever shown. Free-play controls do not
exist here. Programs (simulated participants, the benchmark) use the two named endpoints,
`study_page` and `study_step`, which do exactly what the page does.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
import re
import secrets
from pathlib import Path
from typing import Any

import gradio as gr

from bargain.arena.inputs import ArenaError
from bargain.arena.limits import AdminGate
from bargain.arena.panel import GamePanel, claims_markdown, other_markdown
from bargain.arena.ui import UNEXPECTED, export_link, private_export, refusal
from bargain.arena.views import money
from bargain.store import StoreError
from bargain.study import records
from bargain.study.config import TimeoutRule
from bargain.study.flow import StudyRunner, StudyStop
from bargain.study.survey import ItemType, SurveyItem

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


def _component(item: SurveyItem) -> gr.components.Component:
    if item.type is ItemType.LIKERT and item.scale is not None:  # a Likert item always has its scale
        low, high = item.scale
        label = f"{item.text} ({low}: {item.anchors[0]}; {high}: {item.anchors[1]})" if item.anchors else item.text
        return gr.Radio([str(v) for v in range(low, high + 1)], label=label)
    if item.type is ItemType.CHOICE:
        return gr.Radio(list(item.options), label=item.text)
    return gr.Textbox(
        label=item.text + ("" if item.required else " (optional)"), max_length=item.max_length or 500, lines=3
    )


# How the debrief names the other side of a game, by who played it (the view's `other`): a program, or another
# participant (a person arm's game; its fallback against a program is a program's game).
OTHER_PARTY = {"agent": ("The other party", "its"), "person": ("The other participant", "their")}


def debrief_markdown(page: dict) -> str:
    """The study's debrief, then each game's: who the other party was and their price, a program's strategy, the
    claims checked; a game nobody came to play (a person arm's wait ended), said so."""
    parts = [page["text"]]
    for number, debrief in enumerate(page["debriefs"], 1):
        if debrief is None:
            parts.append(f"### Game {number}\n\nNobody came to play this game with you in time, so it was not played.")
            continue
        who, whose = OTHER_PARTY[debrief["other"]]
        parts.append(
            f"### Game {number}\n\n" + other_markdown(debrief, who) + claims_markdown(debrief["claims"], who, whose)
        )
    return "\n\n".join(parts)


def build_study_app(runner: StudyRunner, admin: AdminGate | None = None, trusted_proxies: int = 0) -> gr.Blocks:
    """The study's Blocks app (launch it with bargain.arena.launch_settings). The researcher's dashboard is the
    same page opened with `?admin` in its address, behind the admin password."""
    study = runner.study
    admin = admin or AdminGate(None, runner.arena.store)
    per_game = [
        *study.surveys.per_game,
        *(
            SurveyItem(id=c.id, type=ItemType.CHOICE, text=c.text, options=c.options, values=c.options)
            for c in study.attention_checks
        ),
    ]
    with gr.Blocks(title=study.title, analytics_enabled=False) as demo:
        params = gr.State({})
        # A random token the browser keeps (encrypted with a key of this study's): the same browser coming back under
        # another id is flagged for the researcher (records.shared_browsers).
        salt = records.study_salt(runner.arena.store, study.name, study.version)
        browser = gr.BrowserState(
            "",
            storage_key=f"bargain-study-{study.name}",
            secret=hmac.new(salt.encode(), b"browser token", hashlib.sha256).hexdigest(),
        )
        shown = gr.State("")  # the stage whose section is shown
        view = gr.State(None)  # the game view shown
        note = gr.Markdown()
        boxes, fields = {}, {}
        with gr.Column(visible=False) as boxes["consent"]:
            consent_text = gr.Markdown()
            with gr.Row():
                agree = gr.Button("I agree to take part", variant="primary")
                decline = gr.Button("I do not agree")
        with gr.Column(visible=False) as boxes["instructions"]:
            instructions_text = gr.Markdown()
            read = gr.Button("I have read the instructions", variant="primary")
        with gr.Column(visible=False) as boxes["comprehension"]:
            comprehension_head = gr.Markdown()
            questions = {q.id: gr.Radio(list(q.options), label=q.text) for q in study.comprehension.questions}
            check = gr.Button("Check my answers", variant="primary")
        with gr.Column(visible=False) as boxes["game"]:
            game_head = gr.Markdown()
            panel = GamePanel.build(countdown=True, result=False)  # the outcome and debrief wait for the debrief page
        with gr.Column(visible=False) as boxes["game_survey"]:
            survey_head = gr.Markdown()
            fields["game_survey"] = {item.id: _component(item) for item in per_game}
            survey_done = gr.Button("Submit", variant="primary")
        with gr.Column(visible=False) as boxes["final_survey"]:
            gr.Markdown("### A few last questions")
            fields["final_survey"] = {item.id: _component(item) for item in study.surveys.final}
            final_done = gr.Button("Submit", variant="primary")
        with gr.Column(visible=False) as boxes["debrief"]:
            debrief_text = gr.Markdown()
            finish = gr.Button("Finish and get my completion code", variant="primary")
        with gr.Column(visible=False) as boxes["end"]:
            end_text = gr.Markdown()
            redirect = gr.Textbox(visible=False)
        with gr.Column(visible=False) as admin_box:
            gr.Markdown(f"## {study.name}, version {study.version}: the researcher's view")
            with gr.Row():
                password = gr.Textbox(label="Admin password", type="password", max_length=200, scale=3)
                open_dashboard = gr.Button("Open / refresh", variant="primary", scale=1)
            with gr.Column(visible=False) as dashboard_box:
                with gr.Row():
                    funnel_table = gr.Dataframe(label="Funnel", interactive=False)
                    cells_table = gr.Dataframe(label="Cells against their quotas", interactive=False)
                with gr.Row():
                    times_table = gr.Dataframe(label="Median seconds per page", interactive=False)
                    excluded_table = gr.Dataframe(label="Excluded (data kept, flagged)", interactive=False)
                browsers_table = gr.Dataframe(
                    label="Ids that came from a browser another id came from (a person "
                    "back under a new id, or a shared computer: data kept, flagged)",
                    interactive=False,
                )
                games_table = gr.Dataframe(label="Recent games", interactive=False)
                picked_game = gr.Dropdown([], label="Show a game, both sides' private information side by side")
                transcript = gr.Markdown()
                with gr.Accordion("Export the study's data", open=False):
                    gr.Markdown(
                        "Participants, games, moves and surveys (long and wide) as CSV and Parquet, with a "
                        "codebook; participant ids as the study file sets them (pseudonyms by default). "
                        "`payment/bonuses.csv` is the bulk bonus file of Prolific and carries the real ids: "
                        "keep it private. The archive is made for this page only: it is not kept on the "
                        "server, and no address serves it."
                    )
                    export_button = gr.Button("Export")
                    export_files = export_link()
                with gr.Accordion("Analyse the data so far", open=False):
                    gr.Markdown(
                        "What `bargain analyse` makes of the study's data so far: models per outcome with the "
                        "participant as the unit, contrasts against the reference arm, the leaderboard of arms and "
                        "the paper's cells beside them (a few seconds). The whole report (tables, figures, "
                        "analysis.json) comes as an archive, made for this page only."
                    )
                    analyse_button = gr.Button("Analyse")
                    analysis_files = export_link()
                    analysis_report = gr.HTML()

        survey_fields = [*fields["game_survey"].values(), *fields["final_survey"].values()]
        outputs = [
            params,
            shown,
            view,
            note,
            admin_box,
            *boxes.values(),
            consent_text,
            instructions_text,
            comprehension_head,
            *questions.values(),
            game_head,
            *panel.components,
            survey_head,
            *survey_fields,
            debrief_text,
            end_text,
            redirect,
        ]

        def render(query: dict, page: dict) -> list:
            """Every output for a page, so that no path returns fewer."""
            stage = page["stage"]
            section = stage if stage in SECTIONS else "end"
            errors = page.get("errors") or {}
            note_text = f"**{page['note']}**" if page.get("note") else ""
            if errors:  # each question named, and marked where it stands
                asked = {q["id"]: q["text"] for q in page.get("questions") or page.get("items") or ()}
                note_text = "**Please check your answers:**\n" + "\n".join(
                    f"- *{asked.get(key, key)}*: {error}" for key, error in errors.items()
                )
            values: dict[Any, Any] = {params: query, shown: stage, note: note_text, view: page.get("view")}
            if stage == "comprehension":  # the participant's own questions (a role's are asked of that role only)
                asked_ids = {q["id"] for q in page["questions"]}
                for key, question in questions.items():
                    values[question] = gr.update(
                        visible=key in asked_ids, elem_classes=["needs-answer"] if key in errors else []
                    )
            for name, box in boxes.items():
                values[box] = gr.update(visible=name == section)
            values[consent_text] = page.get("text", "") if stage == "consent" else gr.update()
            values[instructions_text] = page.get("text", "") if stage == "instructions" else gr.update()
            if stage == "comprehension":
                values[comprehension_head] = (
                    f"### Before you start\nAnswer these questions on the instructions "
                    f"({page['attempts_left']} attempt(s) left)."
                )
            if stage == "game":
                game = page["view"]
                said = []
                if any(t["speaker"] == "you" and t["timed_out"] for t in game["transcript"]):
                    said.append(TIMED_OUT[study.payment.timeout_rule])
                if game.get("notice") or game.get("error"):
                    said.insert(0, f"**{game.get('notice') or game['error']}**")
                values[game_head] = f"## Game {page['game']} of {page['games']}, against {page['opponent']}"
                values.update(panel.show(game, note="\n\n".join(said)))
            if stage in ("game_survey", "final_survey"):
                asked = {item["id"]: item for item in page["items"]}
                fresh = {} if errors else {"value": None}  # a new survey starts empty; a refused one keeps its answers
                for item_id, component in fields[stage].items():
                    item = asked.get(item_id)
                    values[component] = gr.update(
                        visible=item is not None,
                        elem_classes=["needs-answer"] if item_id in errors else [],
                        **fresh,
                        **({"choices": item["options"]} if item and item["type"] == "choice" else {}),
                    )
                if stage == "game_survey":
                    outcome = page["outcome"]
                    result = f"a deal at {money(outcome['deal_price'])}" if outcome["deal"] else "no deal"
                    values[survey_head] = f"### Game {page['game']} is over: {result}\nA few questions about it."
            if stage == "debrief":
                values[debrief_text] = debrief_markdown(page)
            if section == "end":
                code = page.get("code")
                link = page.get("redirect")
                values[end_text] = "\n\n".join(
                    filter(
                        None,
                        [
                            page.get("text")
                            or ("## Thank you!\nYou have completed the study." if stage == "completed" else ""),
                            f"Your completion code: **{code}**" if code else "",
                            f"You will be taken back in a few seconds, or [follow this link]({link})." if link else "",
                        ],
                    )
                )
                values[redirect] = link or ""
            return [values.get(component, gr.update()) for component in outputs]

        def stopped(query: dict, text: str) -> list:
            return render(query, {"stage": "end", "text": text})

        async def current(query: dict, note_text: str = "", retry: bool = False, token: str | None = None):
            """The participant's page as it stands (a load, a reload, the countdown reaching zero; with `retry`, Try
            again after a round that failed; `token`: their browser's, on a load). It answers at once, and while the
            other side of a game is still thinking the page follows it."""
            try:
                page = await runner.page(query, retry=retry, browser=token)
                while page["stage"] == "game" and page["view"]["thinking"]:
                    yield render(query, page)
                    page = await runner.page(query)
                yield render(query, {**page, **({"note": note_text} if note_text else {})})
            except StudyStop as exc:
                yield stopped(query, str(exc))
            except StoreError as exc:
                log.error("a study page: %s", exc)
                yield stopped(query, CANNOT_REACH)
            except Exception:
                log.exception("a study page")
                yield stopped(query, UNEXPECTED)

        async def on_load(kept: str, request: gr.Request):
            query = _query(dict(request.query_params) if request else {})
            if "admin" in (request.query_params if request else {}):  # the researcher's view: no participant here
                yield [
                    gr.update(visible=component is admin_box)
                    if component in (admin_box, *boxes.values())
                    else gr.update()
                    for component in outputs
                ] + [gr.update()]
                return
            token = kept if isinstance(kept, str) and re.fullmatch(r"[0-9a-f]{32}", kept) else secrets.token_hex(16)
            async for update in current(query, token=token):
                yield update + [token]

        def step(stage: str, collect):
            async def handler(query, *values):
                try:
                    page = await runner.submit(query, stage, collect(*values))
                    yield render(query, page)
                    # the other side is awaited (a model's move, or another participant's move or arrival)
                    while page["stage"] == "game" and page["view"]["thinking"]:
                        page = await runner.page(query)
                        yield render(query, page)
                    return
                except StudyStop as exc:
                    yield stopped(query, str(exc))
                    return
                except StoreError as exc:
                    log.error("a study step (%s): %s", stage, exc)
                    note_text = CANNOT_SAVE
                except Exception:
                    log.exception("a study step (%s)", stage)
                    note_text = UNEXPECTED
                async for update in current(query, note_text):
                    yield update

            return handler

        demo.load(on_load, browser, [*outputs, browser], api_visibility="private", concurrency_limit=None)
        # Following a game waits, it does not work: no place in the queue's --concurrency is taken (participants
        # waiting for a partner would hold up everyone else's pages).
        private: dict[str, Any] = {"api_visibility": "private", "trigger_mode": "once", "concurrency_limit": None}
        agree.click(step("consent", lambda: {"agree": True}), [params], outputs, **private)
        decline.click(step("consent", lambda: {"agree": False}), [params], outputs, **private)
        read.click(step("instructions", lambda: {}), [params], outputs, **private)
        check.click(
            step("comprehension", lambda *v: dict(zip(questions, v))), [params, *questions.values()], outputs, **private
        )
        for button, action in ((panel.offer, "OFFER"), (panel.accept, "DEAL"), (panel.walk, "NO_DEAL")):
            button.click(panel.locked, None, panel.buttons, api_visibility="private", queue=False).then(
                step(
                    "game",
                    lambda shown_view, said, typed, action=action: {
                        "round": (shown_view or {}).get("round"),
                        "action": action,
                        "price": typed,
                        "message": said,
                    },
                ),
                [params, view, panel.message, panel.price],
                outputs,
                show_progress="hidden",
                **private,
            )
        if panel.countdown is None:
            raise RuntimeError("the study's game panel is built with its countdown")
        panel.countdown.click(current, [params], outputs, **private)

        async def try_again(query: dict):
            async for update in current(query, retry=True):
                yield update

        panel.retry.click(panel.locked, None, panel.buttons, api_visibility="private", queue=False).then(
            try_again, [params], outputs, **private
        )
        survey_done.click(
            step("game_survey", lambda *v: dict(zip(fields["game_survey"], v))),
            [params, *fields["game_survey"].values()],
            outputs,
            **private,
        )
        final_done.click(
            step("final_survey", lambda *v: dict(zip(fields["final_survey"], v))),
            [params, *fields["final_survey"].values()],
            outputs,
            **private,
        )
        finish.click(step("debrief", lambda: {}), [params], outputs, **private)
        redirect.change(
            None, redirect, None, js="(url) => { if (url) setTimeout(() => { window.location.href = url; }, 4000); }"
        )

        def dashboard(given: str, request: gr.Request):
            from bargain.arena.ui import client_address
            from bargain.study import dashboard as tables

            try:
                admin.check(given, client_address(request, trusted_proxies))
            except ArenaError as exc:
                raise refusal(str(exc)) from None
            store, name, version = runner.arena.store, study.name, study.version
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

        open_dashboard.click(
            dashboard,
            password,
            [
                dashboard_box,
                funnel_table,
                cells_table,
                times_table,
                excluded_table,
                browsers_table,
                games_table,
                picked_game,
            ],
            api_visibility="private",
            concurrency_limit=2,
        )

        def show_game(game_id: str, given: str, request: gr.Request) -> str:
            from bargain.arena.ui import client_address
            from bargain.study.dashboard import transcript_markdown

            try:
                admin.check(given, client_address(request, trusted_proxies))
            except ArenaError as exc:
                raise refusal(str(exc)) from None
            return transcript_markdown(runner.arena.store, game_id) if isinstance(game_id, str) else ""

        picked_game.change(show_game, [picked_game, password], transcript, api_visibility="private")

        def export(given: str, request: gr.Request) -> dict:
            from bargain.arena.ui import client_address
            from bargain.study.export import export_study

            try:
                admin.check(given, client_address(request, trusted_proxies))
            except ArenaError as exc:
                raise refusal(str(exc)) from None
            try:
                return private_export(
                    lambda out: export_study(runner.arena.store, study.name, study.version, out_dir=out),
                    f"{study.name}-v{study.version}",
                )
            except Exception:
                log.exception("exporting the study")
                raise refusal("The study's data cannot be exported right now: try again in a minute.") from None

        export_button.click(export, password, export_files, api_visibility="private", concurrency_limit=1)

        def analyse(given: str, request: gr.Request) -> list:
            """The report of the data so far, shown here and as an archive (a handler Gradio runs in a thread: the
            fits take seconds of CPU, never on the event loop)."""
            from bargain.arena.ui import client_address
            from bargain.study.analyse import AnalysisError, analysis_of, read_export, write_report
            from bargain.study.export import export_study

            try:
                admin.check(given, client_address(request, trusted_proxies))
            except ArenaError as exc:
                raise refusal(str(exc)) from None
            shown: dict[str, str] = {}

            def write(out: str) -> list[Path]:
                data, report = Path(out) / "export", Path(out)
                export_study(runner.arena.store, study.name, study.version, out_dir=data)
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

        analyse_button.click(
            analyse, password, [analysis_files, analysis_report], api_visibility="private", concurrency_limit=1
        )

        # --- named endpoints: what the page does, for programs (simulated participants, the benchmark) -----------
        async def answered(work, doing: str, failed: str) -> dict:
            """A page for a program, or one of the project's own sentences as a gr.Error (details in one log line,
            or a traceback for what no one expected)."""
            try:
                return await work
            except StudyStop as exc:
                raise refusal(str(exc)) from None
            except StoreError as exc:
                log.error("%s: %s", doing, exc)
                raise refusal(failed) from None
            except Exception:
                log.exception(doing)
                raise refusal(UNEXPECTED) from None

        async def study_page(query: dict) -> dict:
            """The page the participant named by `query` (the study link's parameters) is at (a round of a game
            that failed is tried again). In a game whose other side is still thinking, its view says `thinking`:
            ask again."""
            return await answered(runner.page(_query(query), retry=True), "a study page", CANNOT_REACH)

        async def study_step(query: dict, stage: str, data: dict) -> dict:
            """Make a step on the page of `stage` (consent, instructions, comprehension, game, game_survey,
            final_survey, debrief) with `data`; returns the page that follows."""
            return await answered(
                runner.submit(_query(query), str(stage)[:32], data if isinstance(data, dict) else {}),
                "a study step",
                CANNOT_SAVE,
            )

        # Undocumented: callable by programs that know them, listed nowhere, and no page links to them.
        gr.api(study_page, api_name="study_page", queue=False, api_visibility="undocumented")
        gr.api(study_step, api_name="study_step", queue=False, api_visibility="undocumented")
    return demo

"""The pages' handlers as plain methods: an ArenaPage over a fake arena and a StudyPage over a fake runner, built
(their components exist) but never launched, and no browser. Each handler is called as Gradio would call it, and
what it shows is read from its updates by component."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pandas as pd
import pytest
from arena_helpers import a_view
from test_study_flow import make_study

from bargain.arena.inputs import ArenaError, Setup
from bargain.arena.people import QUEUE
from bargain.arena.views import PersonView
from bargain.engine.game import Action, Move
from bargain.engine.trial import Role
from bargain.records.store import StoreError
from bargain.study.flow import ParticipantPage, StudyStop
from bargain.web import study_page
from bargain.web.arena_page import ArenaPage, Options
from bargain.web.common import keep, kept
from bargain.web.study_page import CANNOT_SAVE, StudyPage

SECRET = "k"
PASSWORD = "s3cret"


def request(query: dict | None = None, host: str = "10.0.0.1") -> SimpleNamespace:
    """What a handler reads of a request: its query parameters, headers and client."""
    return SimpleNamespace(query_params=query or {}, headers={}, client=SimpleNamespace(host=host))


class Gate:
    """The admin password, checked as bargain.arena.limits.AdminGate words a refusal."""

    def __init__(self) -> None:
        self.addresses: list[str] = []

    def check(self, given: object, address: str) -> None:
        self.addresses.append(address)
        if given != PASSWORD:
            raise ArenaError("Wrong admin password.")


class Limits:
    def __init__(self) -> None:
        self.counted: list[tuple[str, str]] = []

    def check(self, browser: str, address: str) -> None:
        self.counted.append((browser, address))


class FakeArena:
    """The controller's calls a page makes, answered with scripted views and recorded."""

    def __init__(self) -> None:
        self.names = {"tactic:linear": "tactic:linear", "tactic:hardliner": "tactic:hardliner"}
        self.source = SimpleNamespace(search=lambda text: [], get=lambda ref: SimpleNamespace(product_name="Rice"))
        self.store = SimpleNamespace(export=self.export, player_games=lambda player: pd.DataFrame())
        self.calls: list[tuple] = []
        self.views: dict[str, PersonView] = {}  # what `view` answers, by game
        self.refuse: Exception | None = None  # what the next start or move raises
        self.start_ids: list[str | None] = []  # each start's start id

    def export(self, out: str) -> list[Path]:
        path = Path(out) / "games.csv"
        path.write_text("id\ng1\n")
        return [path]

    def names_of(self, specs) -> dict[str, str]:
        return {spec: spec for spec in specs}

    def spec_of(self, name: str) -> str:
        if name not in self.names:
            raise ArenaError(f"unknown opponent {name!r}")
        return name

    def _refused(self) -> None:
        if self.refuse is not None:
            raise self.refuse

    async def start(
        self, setup: Setup, player: str | None = None, replace: bool = False, start_id: str | None = None
    ) -> PersonView:
        self.calls.append(("start", setup, player, replace))
        self.start_ids.append(start_id)
        self._refused()
        return a_view()

    async def play(self, game_id: str, round_: int, move: Move) -> PersonView:
        self.calls.append(("play", game_id, round_, move))
        await asyncio.sleep(0)
        self._refused()
        return a_view(
            round=round_ + 1,
            transcript=[{"round": round_, "speaker": "you", "message": "", "action": "OFFER", "price": 1.5}],
        )

    async def move(self, game_id, round_, action, price="", message="") -> PersonView:
        self.calls.append(("move", game_id, round_, action, price, message))
        self._refused()
        return a_view(round=2)

    async def view(self, game_id, wait_s: float = 0.0, retry: bool = True) -> PersonView:
        self.calls.append(("view", game_id, retry))
        if game_id not in self.views:
            raise ArenaError("no such game")
        return self.views[game_id]

    async def cancel(self, game_id) -> PersonView:
        self.calls.append(("cancel", game_id))
        return a_view(status="cancelled", your_turn=False, actions=[])

    async def setup_of(self, game_id) -> Setup:
        return Setup(role=Role.SELLER, arm="tactic:hardliner", rounds=3)


def run(handler) -> list:
    """Every update an async handler gives (a generator's, or a coroutine's one)."""

    async def collect():
        if asyncio.iscoroutine(handler):
            return [await handler]
        return [update async for update in handler]

    return asyncio.run(collect())


# --- the arena's page -----------------------------------------------------------------------------


@pytest.fixture
def arena_page() -> ArenaPage:
    options = Options({"tactic:linear": True, "tactic:hardliner": True}, admin=Gate(), browser_secret=SECRET)
    page = ArenaPage(FakeArena(), options)
    page.limits = Limits()
    page.build()
    return page


def form(page: ArenaPage, view: PersonView | None = None, saved: object = None, **values) -> dict:
    """What the Start buttons send: the view shown, what the browser keeps, and the form, by component."""
    chosen = {
        "role": "buyer",
        "opponent": "tactic:hardliner",
        "condition": "both_unaware",
        "mode": "simultaneous",
        "opener": "buyer",
        "rounds": 4,
        "version": "train",
        "source": "low",
        "picked": None,
        **values,
    }
    return {page.current: view, page.saved: saved, **{getattr(page.form, k): v for k, v in chosen.items()}}


def test_start_plays_the_form_against_the_named_opponent_and_keeps_the_game_signed(arena_page):
    saved = keep(SECRET, "p1", None)
    [shown] = run(arena_page.start(form(arena_page, saved=saved, rounds=3), request(host="10.0.0.5")))
    [(_, setup, player, replacing)] = arena_page.arena.calls
    assert (setup.arm, setup.rounds, setup.role, player, replacing) == ("tactic:hardliner", 3, Role.BUYER, "p1", False)
    assert arena_page.limits.counted == [("p1", "10.0.0.5")]
    assert shown[arena_page.current] == a_view() and kept(SECRET, shown[arena_page.saved]) == {
        "player": "p1",
        "game": "g1",
    }
    assert shown[arena_page.form.opponent] == "tactic:hardliner" and shown[arena_page.form.rounds] == 3
    assert shown[arena_page.start_note] == ""


def test_a_start_over_a_game_going_on_asks_first_and_leaving_replaces_it(arena_page):
    going = form(arena_page, view=a_view(), saved=keep(SECRET, "p1", "g1"))
    assert run(arena_page.start(going, request())) == [{arena_page.confirm_box: gr.update(visible=True)}]
    assert arena_page.arena.calls == []
    run(arena_page.start_leaving(going, request()))
    assert [call[3] for call in arena_page.arena.calls] == [True]


def test_a_start_with_a_person_is_sent_again_with_the_start_id_kept_until_it_is_answered(arena_page):
    """The browser keeps a start with a person's id before the start is made: if its answer is lost (a process
    stopped after the seat was stored), a reload keeps it, and the next Start sends it again (so is given that seat,
    tests/test_people.py); an answered start leaves none pending, and a start against an agent sends none."""
    arena_page.arena.names[QUEUE] = QUEUE
    queue = form(arena_page, saved=keep(SECRET, "p1", None), opponent=QUEUE)
    pending = asyncio.run(anext(arena_page.start(queue, request())))[arena_page.saved]  # then its process is gone
    assert kept(SECRET, pending)["player"] == "p1" and len(kept(SECRET, pending)["starting"]) >= 16
    assert arena_page.arena.start_ids == []
    [reloaded] = run(arena_page.resume(pending, request()))
    assert kept(SECRET, reloaded[arena_page.saved]) == kept(SECRET, pending)  # nothing started: still pending
    [again, shown] = run(arena_page.start({**queue, arena_page.saved: reloaded[arena_page.saved]}, request()))
    assert arena_page.arena.start_ids == [kept(SECRET, pending)["starting"]]  # the lost start's, sent again
    assert kept(SECRET, shown[arena_page.saved]) == {"player": "p1", "game": "g1"}  # answered: none pending
    [fresh, _] = run(arena_page.start(form(arena_page, saved=shown[arena_page.saved], opponent=QUEUE), request()))
    assert kept(SECRET, fresh[arena_page.saved])["starting"] != kept(SECRET, pending)["starting"]
    run(arena_page.start(form(arena_page, saved=shown[arena_page.saved]), request()))
    assert arena_page.arena.start_ids[-1] is None  # against an agent


def test_a_refused_start_says_why_beside_the_button_and_changes_nothing_else(arena_page):
    arena_page.arena.refuse = ArenaError("rounds must be at most 12")
    [shown] = run(arena_page.start(form(arena_page), request()))
    assert shown == {
        arena_page.start_note: "**Rounds must be at most 12**",
        arena_page.confirm_box: gr.update(visible=False),
    }
    [shown] = run(arena_page.start(form(arena_page, opponent="nobody"), request()))
    assert "Unknown opponent" in shown[arena_page.start_note]


def test_a_move_shows_at_once_as_played_then_the_game_as_it_stands(arena_page):
    updates = run(arena_page.submit("OFFER", a_view(), keep(SECRET, "p1", "g1"), "hello", "1.50"))
    [(_, game_id, round_, move)] = arena_page.arena.calls
    assert (game_id, round_, move) == ("g1", 1, Move(Action.OFFER, 1.5, "hello"))
    pending, final = updates[0][arena_page.current], updates[-1][arena_page.current]
    assert (
        not pending.your_turn and pending.transcript[-1]["speaker"] == "you" and pending.transcript[-1]["price"] == 1.5
    )
    assert "thinking" in updates[0][arena_page.panel.status]
    assert final.round == 2 and updates[-1][arena_page.panel.message] == ""  # played: the boxes are emptied


def test_a_move_that_cannot_be_read_is_refused_before_anything_is_sent(arena_page):
    [shown] = run(arena_page.submit("OFFER", a_view(), keep(SECRET, "p1", "g1"), "", "cheap"))
    assert arena_page.arena.calls == [] and "price" in shown[arena_page.panel.note]
    assert arena_page.panel.message not in shown  # what was typed stays
    [shown] = run(arena_page.submit("NO_DEAL", None, None, "", ""))
    assert shown[arena_page.panel.note] == "**Start a game first.**"


def test_a_reload_resumes_the_kept_game_and_a_forged_one_starts_fresh(arena_page):
    arena_page.arena.views["g1"] = a_view(round=3)
    [shown] = run(arena_page.resume(keep(SECRET, "p1", "g1"), request()))
    assert shown[arena_page.current].round == 3 and shown[arena_page.form.rounds] == 3
    assert ("view", "g1", False) in arena_page.arena.calls
    forged = {**keep(SECRET, "p1", "g1"), "game": "g2"}
    [shown] = run(arena_page.resume(forged, request()))
    assert shown[arena_page.current] is None and kept(SECRET, shown[arena_page.saved])["player"] != "p1"
    run(arena_page.try_again(keep(SECRET, "p1", "g1")))
    assert arena_page.arena.calls[-1] == ("view", "g1", True)  # Try again retries the round


def test_stopping_a_wait_cancels_the_game(arena_page):
    shown = asyncio.run(arena_page.stop(a_view(status="waiting"), keep(SECRET, "p1", "g1")))
    assert arena_page.arena.calls == [("cancel", "g1")] and shown[arena_page.current].status == "cancelled"
    assert shown[arena_page.again] == gr.update(visible=True)


def test_the_export_answers_only_the_admin_and_the_private_results_only_the_person(arena_page):
    with pytest.raises(gr.Error, match="Wrong admin password"):
        arena_page.export("guess", request(host="10.0.0.7"))
    archive = arena_page.export(PASSWORD, request(host="10.0.0.7"))
    assert archive["name"] == "bargain-games.zip" and archive["data"]
    assert arena_page.admin.addresses == ["10.0.0.7", "10.0.0.7"]
    arena_page.options.public_results = False
    mine, everyone, plot = arena_page.results(keep(SECRET, "p1", None))
    assert "No games yet" in mine and "<table" not in mine
    assert everyone == gr.update() and plot == gr.update(visible=False)


def test_the_api_answers_json_views_and_the_projects_own_refusals(arena_page):
    view = asyncio.run(arena_page.start_game(opponent="tactic:linear", request=request(host="10.0.0.9")))
    assert view == a_view().to_json() and arena_page.limits.counted == [("api:10.0.0.9", "10.0.0.9")]
    assert asyncio.run(arena_page.play_move("g1", 1, "OFFER", "2", "hi"))["round"] == 2
    with pytest.raises(gr.Error, match="No such game"):
        asyncio.run(arena_page.get_game("nope"))
    arena_page.arena.refuse = RuntimeError("SELECT * FROM secrets")
    with pytest.raises(gr.Error, match="Something went wrong") as refused:
        asyncio.run(arena_page.play_move("g1", 1, "OFFER", "2"))
    assert "SELECT" not in str(refused.value)


# --- a study's page -------------------------------------------------------------------------------


class FakeRunner:
    """A study's runner whose pages are scripted: `pages` are answered in turn (an exception is raised)."""

    def __init__(self, study) -> None:
        self.study = study
        self.arena = SimpleNamespace(store=None)
        self.pages: list[ParticipantPage | Exception] = []
        self.calls: list[tuple] = []

    def _next(self) -> ParticipantPage:
        answer = self.pages.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def page(self, query, retry: bool = False, wait_s=None, browser: str | None = None) -> ParticipantPage:
        self.calls.append(("page", query, retry, browser))
        return self._next()

    async def submit(self, query, stage: str, data) -> ParticipantPage:
        self.calls.append(("submit", query, stage, data))
        return self._next()


@pytest.fixture
def study(tmp_path, monkeypatch) -> StudyPage:
    monkeypatch.setattr(study_page.records, "study_salt", lambda store, name, version: "salt")
    page = StudyPage(FakeRunner(make_study(tmp_path)), Gate())
    page.build()
    return page


def shown(page: StudyPage, update: list) -> dict:
    return dict(zip(page.outputs, update))


def test_a_load_shows_the_participants_stage_and_keeps_a_browser_token(study):
    study.runner.pages = [ParticipantPage("consent", games=2, text="We record your moves.")]
    [update] = run(study.load("", request({"PROLIFIC_PID": "P1"})))
    (_, query, retry, token) = study.runner.calls[0]
    assert query == {"PROLIFIC_PID": "P1"} and not retry and len(token) == 32 and update[-1] == token
    values = shown(study, update[:-1])
    assert values[study.consent_text] == "We record your moves."
    assert values[study.boxes["consent"]] == gr.update(visible=True)
    assert values[study.boxes["game"]] == gr.update(visible=False)


def test_the_admin_view_opens_no_participant(study):
    [update] = run(study.load("", request({"admin": ""})))
    assert study.runner.calls == []
    assert shown(study, update[:-1])[study.admin_box] == gr.update(visible=True)


def test_a_step_sends_the_pages_answers_and_shows_the_next_page(study):
    study.runner.pages = [ParticipantPage("game", games=2, game=1, opponent="the other party", view=a_view())]
    [update] = run(
        study.answered_questions(
            {study.params: {"PROLIFIC_PID": "P1"}, **{q: "Nothing" for q in study.questions.values()}}
        )
    )
    assert study.runner.calls == [("submit", {"PROLIFIC_PID": "P1"}, "comprehension", {"no_deal": "Nothing"})]
    values = shown(study, update)
    assert values[study.game_head] == "## Game 1 of 2, against the other party"
    assert values[study.view] == a_view() and values[study.boxes["game"]] == gr.update(visible=True)


def test_a_move_names_the_round_shown_and_a_thinking_game_is_followed(study):
    thinking = ParticipantPage("game", games=2, game=1, opponent="them", view=a_view(your_turn=False, thinking=True))
    study.runner.pages = [thinking, ParticipantPage("game", games=2, game=1, opponent="them", view=a_view(round=2))]
    updates = run(study.move("OFFER", {"PROLIFIC_PID": "P1"}, a_view(), "hi", "1.50"))
    assert study.runner.calls[0][2:] == ("game", {"round": 1, "action": "OFFER", "price": "1.50", "message": "hi"})
    assert study.runner.calls[1][0] == "page" and len(updates) == 2
    assert shown(study, updates[-1])[study.view].round == 2


def test_a_step_that_cannot_be_saved_says_so_on_the_page_as_it_stands(study):
    study.runner.pages = [StoreError("disk full"), ParticipantPage("instructions", games=2, text="Bargain well.")]
    [update] = run(study.instructions_read({"PROLIFIC_PID": "P1"}))
    values = shown(study, update)
    assert values[study.note] == f"**{CANNOT_SAVE}**" and values[study.instructions_text] == "Bargain well."
    study.runner.pages = [StudyStop("This link has no participant id.")]
    [update] = run(study.agreed({}))
    assert shown(study, update)[study.end_text] == "This link has no participant id."


def test_the_study_endpoints_answer_json_pages_and_the_dashboard_only_the_admin(study):
    study.runner.pages = [ParticipantPage("consent", games=2, text="We record your moves.")]
    page = asyncio.run(study.study_step({"PROLIFIC_PID": "P1"}, "consent", {"agree": True}))
    assert page == {"stage": "consent", "note": "", "errors": {}, "games": 2, "text": "We record your moves."}
    study.runner.pages = [StudyStop("The participant id in the link is not valid.")]
    with pytest.raises(gr.Error, match="not valid"):
        asyncio.run(study.study_page({"PROLIFIC_PID": "?"}))
    for handler, values in ((study.dashboard, ()), (study.show_game, ("g1",)), (study.export, ()), (study.analyse, ())):
        with pytest.raises(gr.Error, match="Wrong admin password"):
            handler("guess", request(), *values)


def test_a_move_played_empties_the_message_and_price_and_a_refused_one_keeps_them(study):
    panel = study.panel
    study.runner.pages = [ParticipantPage("game", games=2, game=1, opponent="them", view=a_view(round=2))]
    [update] = run(study.move("OFFER", {"PROLIFIC_PID": "P1"}, a_view(), "hi", "1.50"))
    values = shown(study, update)
    assert values[panel.message] == "" and values[panel.price] == ""
    # the game's last move leads to its survey: the next game's first round opens with the boxes empty too
    study.runner.pages = [ParticipantPage("game_survey", games=2, game=1, outcome=OUTCOME)]
    [update] = run(study.move("OFFER", {"PROLIFIC_PID": "P1"}, a_view(), "deal?", "2.00"))
    assert shown(study, update)[panel.message] == "" and shown(study, update)[panel.price] == ""
    refused = ParticipantPage("game", games=2, game=1, opponent="them", view=a_view(), note="enter a price")
    study.runner.pages = [refused]
    [update] = run(study.move("OFFER", {"PROLIFIC_PID": "P1"}, a_view(), "hi", ""))
    values = shown(study, update)
    assert values[panel.message] == gr.update() and values[panel.price] == gr.update()
    # said once, beside the buttons, as a sentence
    assert values[panel.note] == "**Enter a price**" and values[study.note] == ""


OUTCOME = {"deal": True, "deal_price": 2.4, "rounds": 3, "paper_rounds": 3, "your_utility": 0.6}


def test_a_games_survey_says_its_outcome_in_money_utility_and_round(study):
    study.runner.pages = [ParticipantPage("game_survey", games=2, game=1, outcome=OUTCOME)]
    [update] = run(study.current({"PROLIFIC_PID": "P1"}))
    head = shown(study, update)[study.survey_head]
    assert "Deal at 2.40 in round 3" in head and "Your utility: **0.60**" in head
    no_deal = {**OUTCOME, "deal": False, "deal_price": None, "rounds": 4, "your_utility": 0.0}
    study.runner.pages = [ParticipantPage("game_survey", games=2, game=2, outcome=no_deal)]
    [update] = run(study.current({"PROLIFIC_PID": "P1"}))
    head = shown(study, update)[study.survey_head]
    assert "No deal after 4 rounds" in head and "Your utility: **0.00**" in head


def test_the_comprehension_check_counts_its_attempts_in_words(study):
    questions = [{"id": "no_deal", "text": "What if nobody agrees?", "options": ["Nothing"]}]
    for left, words in ((1, "1 attempt left"), (2, "2 attempts left")):
        study.runner.pages = [ParticipantPage("comprehension", games=2, questions=questions, attempts_left=left)]
        [update] = run(study.current({"PROLIFIC_PID": "P1"}))
        assert f"({words})" in shown(study, update)[study.comprehension_head]


def test_every_refusal_people_read_starts_with_a_capital():
    from bargain.arena import inputs
    from bargain.web import common

    texts = [common.UNEXPECTED, study_page.CANNOT_REACH, study_page.CANNOT_SAVE]
    for refuse in (lambda: inputs.human_move("OFFER", "", ""), lambda: inputs.human_move("OFFER", "x", "")):
        with pytest.raises(ArenaError) as refused:
            refuse()
        texts.append(common.told(refused.value).strip("*"))
        texts.append(common.refusal(str(refused.value)).message)
    assert texts and not any(text[:1].islower() for text in texts), texts


def test_a_likert_scale_keeps_its_one_line_class_when_marked_unanswered(study):
    from bargain.web import LAUNCH_DEFAULTS

    scale = study.fields["game_survey"]["satisfied"]
    assert "likert" in scale.elem_classes and ".likert .wrap { flex-wrap: nowrap" in LAUNCH_DEFAULTS["css"]
    items = [{"id": "satisfied", "type": "likert", "text": "Satisfied?", "options": ["1", "2", "3", "4", "5"]}]
    page = ParticipantPage("game_survey", games=2, game=1, items=items, errors={"satisfied": "Answer this question."})
    study.runner.pages = [page]
    [update] = run(study.current({"PROLIFIC_PID": "P1"}))
    assert shown(study, update)[scale]["elem_classes"] == ["likert", "needs-answer"]

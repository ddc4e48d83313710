"""A participant's way through a study: consent, instructions, comprehension, the assigned games each
followed by its survey, the final survey, the debrief, the completion code.

`StudyRunner` knows nothing of Gradio: the page (bargain.web.study_page) and any program call `page` and
`submit` with the participant's URL parameters and render the dicts they return. The participant's
stage lives in the database (bargain.study.records), so a reload, a second tab or another app process
finds them exactly where they were; every step names the stage it was made for, and a step for a
stage already left changes nothing (a double submission). What a participant is shown never names
the arm, the model or the backend: the opponent is the study's label, and a game's debrief (the
other party's price and strategy) waits for the debrief page.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import secrets
import weakref
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta

from bargain.arena import PERSON
from bargain.arena.controller import TIMEOUT, VIEW_WAIT_S, Arena, ArenaError
from bargain.arena.inputs import Setup
from bargain.arena.views import PersonView
from bargain.engine.game import Action
from bargain.engine.scenarios import Scenario
from bargain.engine.trial import Role
from bargain.records.store import StoreError, utcnow
from bargain.study import records
from bargain.study.config import Assignment, Conduct, Order, Played, Study
from bargain.study.records import StageError
from bargain.study.survey import ItemType, Question, SurveyItem

log = logging.getLogger(__name__)
SOURCE_PARAMETERS = ("STUDY_ID", "SESSION_ID")  # kept with the participant as given (the platform's ids)
MAX_PARAMETER = 128


class StudyStop(ValueError):
    """A request the study cannot serve (no participant id, a malformed one...): the text says so, for the person."""


def attempts_left(n: int) -> str:
    """ "1 attempt left", "2 attempts left": what a participant reads of their comprehension check's retries."""
    return f"{n} attempt{'' if n == 1 else 's'} left"


# What the page of a stage that ends the study without a code says (a participant who declined is told the study's
# own words).
CLOSING = {
    "full": "Thank you for your interest: the study is full. Please return it on the recruiting platform; you will "
    "not be penalised.",
    "dropped": "This session has ended after a long time without activity. Thank you for your time.",
}
# What each stage's page holds besides its stage, note, errors and number of games (ParticipantPage.to_json).
SHOWN = {
    "consent": ("text",),
    "instructions": ("text",),
    "comprehension": ("questions", "attempts_left"),
    "game": ("game", "opponent", "view"),
    "game_survey": ("items", "game", "outcome"),
    "final_survey": ("items",),
    "debrief": ("text", "debriefs"),
    "completed": ("code", "redirect"),
    "screened_out": ("code", "redirect", "text"),
    "declined": ("text",),
    "full": ("text",),
    "dropped": ("text",),
}


@dataclass(frozen=True)
class ParticipantPage:
    """The page a participant is at: its `stage`, what the runner has to say (`note`, and per question or item the
    `errors` of a page sent back), and what the stage shows (SHOWN: the rest keeps its
    default, and is not sent)."""

    stage: str
    note: str = ""
    errors: dict[str, str] = field(default_factory=dict)
    games: int = 0  # how many games the participant plays
    text: str = ""  # the consent, instructions, debrief or closing text
    questions: list[dict] = field(default_factory=list)  # the comprehension questions, each {id, text, options}
    attempts_left: int = 0
    game: int = 0  # the game's number, from 1 (the game played, or just ended)
    opponent: str = ""  # the study's label of the other side
    view: PersonView | None = None  # the game, blinded (see `blind`)
    items: list[dict] = field(default_factory=list)  # a survey's items (item_dict)
    outcome: dict | None = None  # the game just ended, blinded (KNOWN_OUTCOME)
    debriefs: list[dict | None] = field(default_factory=list)  # each game's debrief; None: nobody came to play it
    code: str | None = None  # the completion code
    redirect: str | None = None  # where the participant is sent back to

    @property
    def thinking(self) -> bool:
        """A game whose other side is still thinking (or yet to arrive): ask again."""
        return self.stage == "game" and self.view is not None and self.view.thinking

    def to_json(self) -> dict:
        """The page as the study's endpoints send it: its stage's keys only."""
        page = {"stage": self.stage, "note": self.note, "errors": self.errors, "games": self.games}
        for key in SHOWN.get(self.stage, ()):
            value = getattr(self, key)
            page[key] = value.to_json() if isinstance(value, PersonView) else value
        return page


@dataclass
class StudyRunner:
    """One study served over one arena (its store and backends)."""

    study: Study
    arena: Arena
    # one step at a time per participant; a participant's lock lives while a request holds it
    _locks: weakref.WeakValueDictionary[int, asyncio.Lock] = field(
        default_factory=weakref.WeakValueDictionary, repr=False
    )
    _released: float = field(default=float("-inf"), repr=False)  # when idle participants were last released

    def __post_init__(self) -> None:
        within = self.study.design.assignment is Assignment.WITHIN
        quota = self.study.design.quota_per_cell
        records.register(
            self.arena.store,
            self.study.name,
            self.study.version,
            self.study.hash,
            self.study.to_dict(),
            {self.study.cell_key(c): quota for c in self.study.cells},
        )
        self.within = within

    # --- who is asking --------------------------------------------------------------------------

    def participant_id(self, params: Mapping[str, str]) -> str:
        """The participant's id from the URL parameters the study names (the first present), checked."""
        for name in self.study.participant_id.parameters:
            value = params.get(name)
            if value:
                if not self.study.participant_id.accepts(name, value):
                    raise StudyStop(
                        "The participant id in the link is not valid. Please open the study again from "
                        "the recruiting platform's link."
                    )
                return value
        raise StudyStop(
            "This link has no participant id. Please open the study from the link on the recruiting platform."
        )

    def _source(self, params: Mapping[str, str]) -> dict:
        return {name: str(params[name])[:MAX_PARAMETER] for name in SOURCE_PARAMETERS if params.get(name)}

    async def _arrive(self, params: Mapping[str, str], browser: str | None = None) -> dict:
        """The participant's record (with the token of the browser they came from, if known); their request counts
        as activity before anyone idle is released."""
        external = self.participant_id(params)
        row = await asyncio.to_thread(
            records.arrive,
            self.arena.store,
            self.study.name,
            self.study.version,
            self.study.hash,
            external,
            self._source(params),
            browser,
        )
        await self.release_idle()
        return row

    # --- the pages ------------------------------------------------------------------------------

    @asynccontextmanager
    async def _turn(self, params: Mapping[str, str], browser: str | None = None) -> AsyncIterator[dict]:
        """The participant's record, for one request at a time per participant in this process (read again when
        another request of theirs went first here; across processes the database's locks and constraints keep
        each step once)."""
        row = await self._arrive(params, browser)
        lock = self._locks.setdefault(row["id"], asyncio.Lock())
        waited = lock.locked()
        async with lock:
            yield (await self._reread(row)) if waited else row

    async def _reread(self, row: dict) -> dict:
        return await asyncio.to_thread(records.arrived, self.arena.store, self.study.name, row["participant"])

    async def page(
        self,
        params: Mapping[str, str],
        retry: bool = False,
        wait_s: float | None = VIEW_WAIT_S,
        browser: str | None = None,
    ) -> ParticipantPage:
        """The page the participant is at (arriving, reloading, or coming back from another tab or process). It
        answers at once: a game whose other side is still thinking is shown so (its view `thinking`: ask again),
        waiting at most `wait_s`; with `retry`, a round of the game that failed is tried again. `browser`: the
        token the participant's browser keeps (records.ParticipantRow.browser)."""
        async with self._turn(params, browser) as row:
            try:
                return await self._page(row, wait_s=wait_s, retry=retry)
            except StageError:  # another process moved this participant on meanwhile: show where they are
                return await self._page(await self._reread(row), wait_s=wait_s, retry=retry)

    async def submit(self, params: Mapping[str, str], stage: str, data: Mapping) -> ParticipantPage:
        """A step made on the page of `stage`; returns the page that follows (or the same one, with what was wrong).
        A step for a stage the participant has already left (sent twice, from another tab or to another process)
        changes nothing and returns the page they are at: answers sent again are taken as already saved, and
        different ones are refused (the first ones sent count)."""
        async with self._turn(params) as row:
            if row["stage"] != stage:
                return await self._page(row, note=await self._already(row, stage, data))
            try:
                return await self._step(row, stage, data)
            except StageError:  # another tab or process moved this participant on meanwhile
                row = await self._reread(row)
                return await self._page(row, note=await self._already(row, stage, data))

    async def _already(self, row: dict, stage: str, data: Mapping) -> str:
        """What to tell a participant whose step was for a page they have left: for a page of answers, whether the
        answers sent are the ones saved."""
        page = await self._saved_page(row, stage)
        if page is None:
            return "That step was already taken; here is where you are now."
        given = self._answers(row, stage, data)
        if given is not None and {k: v for k, (v, _) in given.items.items()} == page:
            return "Your answers were already saved; here is where you are now."
        return (
            "Your answers to that page had already been saved, and the ones first sent count; here is where you "
            "are now."
        )

    async def _saved_page(self, row: dict, stage: str) -> dict[str, str] | None:
        """The stored answers of the last page of `stage` the participant sent (None: not a page of answers)."""
        store, survey = (
            self.arena.store,
            {"comprehension": "comprehension", "game_survey": "per_game", "final_survey": "final"}.get(stage),
        )
        if survey is None:
            return None
        game = row["games_done"] if survey == "per_game" else 0
        saved = await asyncio.to_thread(records.saved_answers, store, row["id"], survey, game)
        if survey == "per_game":
            saved.update(await asyncio.to_thread(records.saved_answers, store, row["id"], "attention", game))
        return saved

    async def _step(self, row: dict, stage: str, data: Mapping) -> ParticipantPage:
        if stage == "consent":
            if data.get("agree") is True:
                return await self._enter(
                    row, "instructions", "consent", consent_version=self.study.texts.consent_version
                )
            if data.get("agree") is False:
                return await self._page(await self._leave(row, "declined", "consent"))
            return await self._page(row)
        if stage == "instructions":
            following = "comprehension" if self._questions(row) else "game"
            return await self._enter(row, following, "instructions")
        if stage == "comprehension":
            return await self._comprehension(row, data)
        if stage == "game":
            return await self._move_in_game(row, data)
        if stage in ("game_survey", "final_survey"):
            return await self._survey(row, stage, data)
        if stage == "debrief":
            return await self._complete(row)
        return await self._page(row)

    async def _move(
        self, row: dict, stage: str, expected: str, answers: tuple[records.Answers, ...] = (), **fields
    ) -> dict:
        """Move the participant on from `expected` to `stage`, saving a page's `answers` in the same transaction."""
        return await asyncio.to_thread(records.move_to, self.arena.store, row["id"], stage, expected, answers, **fields)

    async def _leave(
        self, row: dict, stage: str, expected: str, answers: tuple[records.Answers, ...] = (), **fields
    ) -> dict:
        """Move the participant out of the study before their games (declined, screened out), their slots freed in
        the same step, as an idle participant's are."""
        return await asyncio.to_thread(
            records.leave, self.arena.store, row["id"], stage, expected, answers, self.within, **fields
        )

    async def _enter(
        self, row: dict, stage: str, expected: str, answers: tuple[records.Answers, ...] = (), **fields
    ) -> ParticipantPage:
        """Move on to `stage` of the study proper, taking the participant's slots first if they hold none (or ending:
        the study is full). They are taken on agreeing to the consent: the cells fix the participant's role, which
        the instructions and questions that follow may depend on, and a full study says so before anyone reads them.
        Taking slots is idempotent (a participant's cells are kept with their record), so a process that dies
        after it is repeated by the next request without taking more."""
        if not row["cells"]:
            fixed = (
                [self.study.cell_key(c) for c in self.study.cells] if self.study.design.order is Order.FIXED else None
            )
            cells = await asyncio.to_thread(
                records.assign,
                self.arena.store,
                self.study.name,
                self.study.version,
                row["id"],
                self.study.games_per_participant,
                self.within,
                fixed,
                distinct_arms=self.study.design.distinct_arms,
            )
            if not cells:
                return await self._page(await self._move(row, "full", expected, answers, **fields))
            fields["cells"] = cells
        return await self._page(await self._move(row, stage, expected, answers, **fields))

    # --- comprehension ----------------------------------------------------------------------------

    def _answers(self, row: dict, stage: str, data: Mapping) -> records.Answers | None:
        """A page's answers as stored (item -> (value, correct)) for the comprehension check or a survey, or None if
        the page was not filled in as asked (`_errors` says what is wrong)."""
        if stage == "comprehension":
            questions = self._questions(row)
            if any(data.get(q.id) not in q.options for q in questions):
                return None
            return records.Answers(
                "comprehension",
                0,
                {q.id: (data[q.id], data[q.id] == q.answer) for q in questions},
                row["comprehension_attempts"] + 1,
            )
        items = self._items(row, stage)
        read = {item.id: read_answer(item, data.get(item.id)) for item in items}
        if any(error for _, error in read.values()):
            return None
        checks = {c.id: c for c in self._checks(row, stage)}
        return records.Answers(
            "per_game" if stage == "game_survey" else "final",
            row["games_done"] if stage == "game_survey" else 0,
            {k: (v, v == checks[k].answer if k in checks else None) for k, (v, _) in read.items() if v is not None},
        )

    def _roles(self, row: dict) -> tuple[Role, ...]:
        """The roles the participant plays, in the order of their games (before their cells are taken: every role of
        the study)."""
        if not row["cells"]:
            return self.study.roles
        return tuple(dict.fromkeys(self.study.cell_by_key(cell).role for cell in row["cells"]))

    def _questions(self, row: dict) -> tuple[Question, ...]:
        """The comprehension questions asked of the participant: everyone's and their roles' own."""
        return self.study.comprehension.for_roles(self._roles(row))

    async def _comprehension(self, row: dict, data: Mapping) -> ParticipantPage:
        questions = self._questions(row)
        answers = self._answers(row, "comprehension", data)
        if answers is None:
            return await self._page(
                row, errors={q.id: "Choose one of the options." for q in questions if data.get(q.id) not in q.options}
            )
        attempt = answers.attempt
        saved = await asyncio.to_thread(records.saved_answers, self.arena.store, row["id"], "comprehension", 0, attempt)
        if saved:  # saved by a request that did not move the participant on (an older version died between the two)
            answers = records.Answers(
                "comprehension",
                0,
                {q.id: (saved[q.id], saved[q.id] == q.answer) for q in questions if q.id in saved},
                attempt,
            )
        passed = all(correct for _, correct in answers.items.values()) and len(answers.items) == len(questions)
        if passed:
            return await self._enter(row, "game", "comprehension", (answers,), comprehension_attempts=attempt)
        if attempt >= self.study.comprehension.attempts:
            return await self._page(
                await self._leave(row, "screened_out", "comprehension", (answers,), comprehension_attempts=attempt)
            )
        row = await self._move(row, "comprehension", "comprehension", (answers,), comprehension_attempts=attempt)
        return await self._page(
            row,
            note="Some answers were not right. Read the instructions again and retry: "
            f"{attempts_left(self.study.comprehension.attempts - attempt)}.",
        )

    # --- games ------------------------------------------------------------------------------------

    def _setup(self, cell_key: str, arm_key: str, unmet: list[str]) -> Setup:
        """A game's setup for the participant in `cell_key`, against the arm `arm_key`, over an item they have not
        met (`unmet`: the pool's scenarios left them, `_unmet`)."""
        cell = self.study.cell_by_key(cell_key)
        return Setup(
            role=cell.role,
            arm=self.study.arms[arm_key].spec,
            condition=cell.condition,
            mode=self.study.mode,
            rounds=self.study.rounds,
            scenario=secrets.choice(unmet or [s.ref for s in self._pool]),
            prompt_version=self.study.prompt_version,
            first_actor=self.study.first_actor,
        )

    @functools.cached_property
    def _pool(self) -> tuple[Scenario, ...]:
        """The study's scenarios."""
        return self.study.scenarios.scenarios(self.arena.source)

    def _unmet(self, met: frozenset[str]) -> list[str]:
        """The pool's scenarios whose item (product) is none of those of the scenarios `met`: a participant never
        bargains over the same item twice in a study (the study file allows no more games than items)."""
        items = {self.arena.source.get(ref).product_name for ref in met}
        return [s.ref for s in self._pool if s.product_name not in items]

    async def _unmet_of(self, row: dict) -> list[str]:
        """The pool's scenarios over items the participant has not met in their games so far (cancelled waits for a
        person aside)."""
        store, name = self.arena.store, self.study.name
        return self._unmet(await asyncio.to_thread(records.met_scenarios, store, name, row["participant"]))

    async def _game_id(self, row: dict) -> str:
        """The id of the participant's current game, started (and recorded, once) if it has not been: the database
        holds one game per participant and index, so a reload or a second process starting it at the same time
        gets the same game. Against a person arm, the id is the participant's seat at a game with another
        participant, or at one waiting for them."""
        index = row["games_done"]
        if len(row["games"]) > index:
            return row["games"][index]
        cell = self.study.cell_by_key(row["cells"][index])
        unmet = await self._unmet_of(row)
        setup = self._setup(row["cells"][index], cell.arm, unmet)
        where = {"study": self.study.name, "participant": row["participant"], "game_index": index + 1}
        if setup.arm == PERSON:  # another participant: of the other role, in the same arm and condition
            key = f"study:{self.study.name}:{self.study.version}:{cell.arm}:{cell.condition.value}"
            met = frozenset(s.ref for s in self._pool) - frozenset(unmet)  # the pool's scenarios of items met
            view = await self.arena.pair(setup, key, **where, move_seconds=self.study.timing.move_seconds, avoid=met)
        else:
            view = await self.arena.start(
                setup,
                **where,
                move_seconds=self.study.timing.move_seconds,
                pace=self.study.timing.reply_delay,
                wait=False,
                matching=self.study.timing.matching,  # as long as a partner takes to come, as a person arm waits
            )
        games = await asyncio.to_thread(records.record_game, self.arena.store, row["id"], index + 1, view.game_id)
        return games[index]

    async def _unpaired(self, row: dict, seat: str) -> ParticipantPage:
        """Nobody came for the participant's game against a person within `pairing.max_wait_s`: the game is
        cancelled and, as the study file says, they play its program arm instead (recorded as such) or their study
        ends there (paid the base and `pairing.end_bonus`). A partner arriving meanwhile wins: the game goes on."""
        pairing = self.study.pairing
        view = await self.arena.cancel(seat, study=self.study.name)
        if pairing is None or view.status != "cancelled":
            return await self._page(row, view=view)
        index = row["games_done"] + 1
        if pairing.otherwise == "end":
            following = "final_survey" if self.study.surveys.final else "debrief"
            return await self._page(await self._move(row, following, "game"))
        setup = self._setup(row["cells"][index - 1], pairing.otherwise, await self._unmet_of(row))
        started = await self.arena.start(
            setup,
            study=self.study.name,
            participant=row["participant"],
            game_index=index,
            move_seconds=self.study.timing.move_seconds,
            pace=self.study.timing.reply_delay,
            extra={"instead_of": PERSON},
            wait=False,
        )
        await asyncio.to_thread(records.replace_game, self.arena.store, row["id"], index, seat, started.game_id)
        return await self._page(
            await asyncio.to_thread(records.arrived, self.arena.store, self.study.name, row["participant"]),
            view=started,
        )

    async def _move_in_game(self, row: dict, data: Mapping) -> ParticipantPage:
        game_id = await self._game_id(row)
        try:
            view = await self.arena.move(
                game_id,
                data.get("round"),
                data.get("action"),
                data.get("price"),
                data.get("message"),
                study=self.study.name,
                wait=False,  # as a move against a person answers: when it answers tells nothing of who the other is
            )
        except ArenaError as exc:  # a bad move, or the game ended meanwhile (a timeout): which one, the view says
            view = await self.arena.view(game_id, study=self.study.name)
            if view.status == "active":
                return await self._page(row, note=str(exc))
        return await self._after_game(row, view)

    async def _after_game(self, row: dict, view: PersonView) -> ParticipantPage:
        """Once the current game has ended: its survey (the game counted as done). A game that is not the one
        `row` is playing was counted already, by another request (a tab, a process) that ended it: the page the
        participant is at."""
        if view.status in ("active", "waiting"):
            return await self._page(row, view=view)
        if row["stage"] != "game" or row["games"][row["games_done"] : row["games_done"] + 1] != [view.game_id]:
            return await self._page(row)
        game = stored(await asyncio.to_thread(self.arena.store.game, view.game_id), "a played game")
        role = self.study.cell_by_key(row["cells"][row["games_done"]]).role.value
        row = await self._move(
            row, "game_survey", "game", games_done=row["games_done"] + 1, timeouts=row["timeouts"] + passes(game, role)
        )
        return await self._page(row, view=view)

    # --- surveys ----------------------------------------------------------------------------------

    def _checks(self, row: dict, stage: str) -> list:
        """The attention checks asked on this page (after the game just played)."""
        return [c for c in self.study.attention_checks if stage == "game_survey" and c.after_game == row["games_done"]]

    def _items(self, row: dict, stage: str) -> list[SurveyItem]:
        role = self.study.cell_by_key(row["cells"][0]).role if row["cells"] else None
        if stage == "final_survey":
            return [item.for_role(role) for item in self.study.surveys.final]
        game = row["games_done"]
        role = self.study.cell_by_key(row["cells"][game - 1]).role
        checks = [
            SurveyItem(id=c.id, type=ItemType.CHOICE, text=c.text, options=c.options, values=c.options)
            for c in self._checks(row, stage)
        ]
        return [item.for_role(role) for item in self.study.surveys.per_game] + checks

    async def _survey(self, row: dict, stage: str, data: Mapping) -> ParticipantPage:
        answers = self._answers(row, stage, data)
        if answers is None:
            errors = {
                item.id: error
                for item in self._items(row, stage)
                for _, error in [read_answer(item, data.get(item.id))]
                if error
            }
            return await self._page(row, errors=errors)
        saved = await self._saved_page(row, stage)
        if saved:  # saved by a request that did not move the participant on (an older version died between the two)
            answers = records.Answers(answers.survey, answers.game, {k: (v, None) for k, v in saved.items()})
        checks = {c.id: c for c in self._checks(row, stage)}
        survey = records.Answers(
            answers.survey, answers.game, {k: v for k, v in answers.items.items() if k not in checks}
        )
        attention = records.Answers(
            "attention",
            answers.game,
            {k: (v, v == checks[k].answer) for k, (v, _) in answers.items.items() if k in checks},
        )
        failures = row["attention_failures"] + sum(not ok for _, ok in attention.items.values())
        if stage == "final_survey":
            following = "debrief"
        elif row["games_done"] < self.study.games_per_participant:
            following = "game"
        else:
            following = "final_survey" if self.study.surveys.final else "debrief"
        return await self._page(
            await self._move(row, following, stage, (survey, attention), attention_failures=failures)
        )

    # --- the end ----------------------------------------------------------------------------------

    async def _complete(self, row: dict) -> ParticipantPage:
        """The bonus by the payment rule and the exclusion rules that flag the participant's data (they complete and
        are paid either way), recorded as they complete."""
        games = [
            stored(await asyncio.to_thread(self.arena.store.game, game_id), "a played game") for game_id in row["games"]
        ]
        scored, unpaired, conducted = [], 0, []
        for game, cell in zip(games, row["cells"]):
            role = self.study.cell_by_key(cell).role.value  # the participant's side (in a game between two, one)
            if game["status"] == "cancelled":  # nobody came to pair with them: their study ended there
                unpaired += 1
                continue
            scored.append((game[f"{role}_norm_utility"] or 0.0, passes(game, role) > 0))
            conducted.append(played(game, role))
        end_bonus = self.study.pairing.end_bonus if self.study.pairing and unpaired else 0.0
        bonus = round(self.study.payment.bonus_for(scored) + end_bonus, 2)
        conduct = Conduct(
            row["attention_failures"],
            row["timeouts"],
            (utcnow() - row["created_at"]).total_seconds(),
            tuple(conducted),
        )
        reasons = [f"{rule.rule.value} {rule.threshold}" for rule in self.study.exclusions if rule.excludes(conduct)]
        row = await self._move(
            row, "completed", "debrief", bonus=bonus, excluded=bool(reasons), exclusion_reasons=reasons
        )
        return await self._page(row)

    async def _completion_code(self, row: dict) -> str:
        """The participant's completion code: the study's, or their own (derived with the study's secret salt)."""
        completion = self.study.completion
        salt = (
            await asyncio.to_thread(records.study_salt, self.arena.store, self.study.name, self.study.version)
            if completion.per_participant_codes
            else ""
        )
        return completion.code_for(salt, row["participant"])

    async def release_idle(self) -> None:
        """Drop participants idle past the study's limit and free their slots, and replace the ids of participants
        older than the study's retention by their pseudonyms (at most once a minute)."""
        now = asyncio.get_running_loop().time()
        if now - self._released < 60:
            return
        self._released = now
        try:
            await asyncio.to_thread(
                records.release_idle,
                self.arena.store,
                self.study.name,
                self.study.version,
                timedelta(minutes=self.study.timing.idle_minutes),
                self.within,
            )
            if self.study.retention_days is not None:
                await asyncio.to_thread(
                    records.forget_identifiers,
                    self.arena.store,
                    self.study.name,
                    self.study.version,
                    self.study.retention_days,
                )
        except StoreError as exc:
            log.error("idle participants could not be released, or old identifiers forgotten: %s", exc)

    # --- what the participant sees --------------------------------------------------------------

    async def _page(
        self,
        row: dict,
        note: str = "",
        errors: dict | None = None,
        view: PersonView | None = None,
        wait_s: float | None = None,
        retry: bool = True,
    ) -> ParticipantPage:
        """The page of the participant's stage. `view`: the game view the caller already holds (the game just
        moved in, or just ended), so that it is not fetched twice; `wait_s`: how long to wait for the other side of
        a game (a page load answers at once); `retry`: whether a round that failed is tried again."""
        stage, study = row["stage"], self.study
        page = ParticipantPage(stage, note, errors or {}, study.games_per_participant)
        if stage == "consent":
            return replace(page, text=study.texts.consent)
        if stage == "instructions":
            return replace(page, text=study.texts.instructions_for(self._roles(row)))
        if stage == "comprehension":
            return replace(
                page,
                questions=[{"id": q.id, "text": q.text, "options": list(q.options)} for q in self._questions(row)],
                attempts_left=study.comprehension.attempts - row["comprehension_attempts"],
            )
        if stage == "game":
            game_id = await self._game_id(row)
            if view is None or view.game_id != game_id:
                view = await self.arena.view(game_id, wait_s or 0.0, retry, self.study.name)
            pairing = self.study.pairing
            if pairing is not None and (
                view.status == "cancelled"  # the wait has gone (bargain.arena.people.LIVE_S)
                or (view.waiting_s is not None and view.waiting_s >= pairing.max_wait_s)  # for a person
            ):
                return await self._unpaired(row, game_id)
            if view.status not in ("active", "waiting"):
                return await self._after_game(
                    await asyncio.to_thread(records.arrived, self.arena.store, study.name, row["participant"]), view
                )
            return replace(
                page,
                game=row["games_done"] + 1,
                opponent=study.label(study.cell_by_key(row["cells"][row["games_done"]]).arm),
                view=blind(view),
            )
        if stage in ("game_survey", "final_survey"):
            page = replace(page, items=[item_dict(item) for item in self._items(row, stage)])
            if stage == "game_survey":
                ended = row["games"][row["games_done"] - 1]
                if view is None or view.game_id != ended:
                    view = await self.arena.view(ended, study=study.name)
                page = replace(page, game=row["games_done"], outcome=blind_outcome(view.outcome))
            return page
        if stage == "debrief":
            debriefs = [(await self.arena.view(game_id, study=study.name)).debrief for game_id in row["games"]]
            return replace(page, text=study.texts.debrief, debriefs=debriefs)
        if stage == "completed":
            code = await self._completion_code(row)
            return replace(page, code=code, redirect=study.completion.redirect(code))
        if stage == "screened_out":
            code = study.completion.screened_out_code
            return replace(
                page,
                code=code,
                redirect=study.completion.redirect(code),
                text="Thank you. Your answers show the instructions were not clear enough to go on, so the "
                "study ends here.",
            )
        if stage == "declined":
            return replace(page, text=study.completion.declined_message)
        return replace(page, text=CLOSING.get(stage, ""))


# What a participant may see of a game's outcome before the debrief: all of it follows from the transcript and their
# own price. Both sides' normalised utilities, the agent's utility and the Nash price each give the other side's
# reservation price away (u / u_norm is the surplus v_B - v_S; the NBS price is (v_B + v_S) / 2).
KNOWN_OUTCOME = ("deal", "deal_price", "rounds", "paper_rounds", "your_utility")


def passes(game: dict, role: str) -> int:
    """How many of the moves of the participant playing `role` in a stored game were not made in time (the engine
    passed for them)."""
    return sum(m["actor"] == "human" and m["role"] == role and m["error"] == TIMEOUT for m in game["moves"])


def played(game: dict, role: str) -> Played:
    """What the participant playing `role` did in a stored game: their own moves (a move not made in time is the
    engine's pass, not theirs), how long the game took (to its end, or to its last change: a game abandoned when
    the other participant was dropped as idle has no end), and whether they walked away in its first round."""
    own = [m for m in game["moves"] if m["actor"] == "human" and m["role"] == role and m["error"] != TIMEOUT]
    return Played(
        len(own),
        ((game["finished_at"] or game["updated_at"]) - game["created_at"]).total_seconds(),
        any(m["round"] == 1 and m["action"] == Action.NO_DEAL for m in own),
    )


def blind(view: PersonView) -> PersonView:
    """A game view for a participant: no debrief until the study's debrief page (the other party's price
    and strategy would tell them what the next games hide), of the outcome only what they know already, and nothing
    that tells a person from a program: the other side and its moves are named as an agent's are, and what only a
    game between people fills (how long one has waited, an invitation) is left empty."""
    transcript = [{**t, "speaker": "you" if t["speaker"] == "you" else "agent"} for t in view.transcript]
    return replace(
        view,
        transcript=transcript,
        debrief=None,
        outcome=blind_outcome(view.outcome),
        other="agent",
        waiting_s=None,
        invitation=None,
    )


def blind_outcome(outcome: dict | None) -> dict | None:
    """An outcome as a participant may see it before the debrief (KNOWN_OUTCOME)."""
    return None if outcome is None else {key: outcome[key] for key in KNOWN_OUTCOME}


def item_dict(item: SurveyItem) -> dict:
    """A survey item as the page shows it."""
    return {
        "id": item.id,
        "type": item.type.value,
        "text": item.text,
        "required": item.required,
        "options": list(item.options),
        "scale": list(item.scale) if item.scale else None,
        "anchors": list(item.anchors) if item.anchors else None,
        "max_length": item.max_length,
    }


def stored(row: dict | None, what: str) -> dict:
    """A game the participant played (written moments ago): missing, the database lost it."""
    if row is None:
        raise StoreError(f"{what} is missing from the database")
    return row


def read_answer(item: SurveyItem, given: object) -> tuple[str | None, str | None]:
    """(the value to store, or None for an optional item left empty; the error, if the answer cannot be taken)."""
    if given is None or given == "":
        return None, ("Please answer this question." if item.required else None)
    if item.type is ItemType.LIKERT and item.scale is not None:  # a Likert item always has its scale
        low, high = item.scale
        if (
            isinstance(given, bool)
            or not isinstance(given, (int, float, str))
            or str(given).strip() not in {str(v) for v in range(low, high + 1)}
        ):
            return None, f"Choose a point from {low} to {high}."
        return str(int(str(given).strip())), None
    if item.type is ItemType.CHOICE:
        if given not in item.options:
            return None, "Choose one of the options."
        return str(item.values[item.options.index(given)] if item.values else given), None
    if not isinstance(given, str):
        return None, "Please write your answer as text."
    text = given.strip()
    if len(text) > (item.max_length or 500):
        return None, f"Please keep your answer under {item.max_length or 500} characters."
    if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]", text):
        return None, "Your answer holds characters that cannot be stored: please retype it."
    return (text or None), ("Please answer this question." if item.required and not text else None)

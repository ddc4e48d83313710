"""The arena's game controller: people play arms through the one episode loop, every move stored.

A person is an agent whose move arrives from the UI (`HumanAgent`): each live game runs
`bargain.runs.episodes.play` as a task on the server's event loop, so in simultaneous mode the model
starts on its move for the round while the person is still typing, and the wait after they
submit is close to nothing. Each round's moves are committed to the store before the game goes
on. A game survives a page reload (its id) and a server restart (rebuilt from its stored
moves). What a person is shown is built from their observation only, until the debrief.
This module knows nothing of Gradio: the UI and the API call `Arena` and render its views.

Any request may arrive twice, or at another app process: a game's loop runs where it was last
taken over (the take-over and the read it goes on from are one transaction), and a round written
from a state another process has moved past is refused by the database; the person then gets the
game as stored. A model move has one deadline (`move_deadline`): past it the round is not
applied, the person is told, and the next request retries it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import random
import re
import secrets
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bargain.agents.agent import Agent, Side
from bargain.agents.arms import Arm, catalogue, public_names, resolve
from bargain.agents.backends import PRESETS, BackendError, Backends, Sampling
from bargain.agents.factory import arm_factory
from bargain.arena import MOVE_DEADLINE_S, PERSON, inputs
from bargain.arena.inputs import ArenaError, Setup
from bargain.arena.pacing import Pace, Paced
from bargain.arena.people import INVITE, NO_SUCH_GAME, NOT_JOINED, QUEUE, People, Seat, fresh_player
from bargain.arena.views import ALREADY_PLAYED, TIMEOUT, PersonView, person_view
from bargain.engine import scenarios
from bargain.engine.game import Action, GameState, Move, Observation, Turn, new_initial_state, replay, replay_pending
from bargain.engine.prompts import PromptVersion
from bargain.engine.trial import Mode, Role, Trial
from bargain.records.store import AlreadyStarted, StaleGame, Store, StoreError, outcome_fields, turns_of, utcnow
from bargain.runs.episodes import play

# Words by which an agent could give away that it is a program (blinding in studies): flagged in its move record.
MENTIONS_AI = re.compile(
    r"\b(?:AI|A\.I\.|artificial intelligence|language models?|LLMs?|chat ?bots?|bots?|"
    r"neural|algorithms?|Qwen|GPT|ChatGPT|OpenAI|Anthropic|Claude|Gemini|Alibaba|Llama|Mistral|"
    r"machine learning|assistant)\b",
    re.IGNORECASE,
)
CANNOT_SAVE = "The server cannot save games right now, so nothing was started or changed: try again in a minute."
CHANGED_MEANWHILE = "The game changed elsewhere while your move was sent, and it was not applied: make it again."
VIEW_WAIT_S = 1.0  # how long a view (a reload) waits for the other side's move before showing that it is thinking
ASKED_WAIT_S = 0.5  # how long a start that does not wait for the agent waits for the person to be asked to move
log = logging.getLogger(__name__)


class HumanAgent:
    """The person at the table: `act` waits until the UI submits a move for the turn, or, with a time limit,
    until it runs out: a move not made in time is a pass (the engine's INVALID move), recorded as a timeout."""

    def __init__(self, move_seconds: float | None = None, spent_s: float = 0.0) -> None:
        self.view: Observation | None = None  # the observation of the turn being waited for
        self.move_seconds = move_seconds
        self.asked_at: float | None = None  # when the turn was published (time.monotonic())
        self._spent_s = spent_s  # of the first turn asked, already spent before this process asked it (a take-over)
        self._move: asyncio.Future | None = None
        self.given: tuple[int, Move] | None = None  # the move handed over for the turn, until the rules apply it
        # The person's move of a simultaneous round, stored before the agent's move is in: made once, whatever the
        # process that plays the round (a take-over's, a retry after a failure) asks.
        self.kept: tuple[int, Move] | None = None
        self.asked = asyncio.Event()

    async def act(self, obs: Observation) -> Move:
        """Publish the turn and wait for the person's move (or for the time limit); a move already kept for the
        round is the move, at once."""
        if self.kept is not None and self.kept[0] == obs.round:
            return self.kept[1]
        self._move = asyncio.get_running_loop().create_future()
        self.view, self.asked_at, self.given = obs, time.monotonic() - self._spent_s, None
        self._spent_s = 0.0
        self.asked.set()
        try:
            return await asyncio.wait_for(
                self._move,
                None if self.move_seconds is None else max(0.0, self.move_seconds - (time.monotonic() - self.asked_at)),
            )
        except TimeoutError:
            return Move(Action.INVALID, error=TIMEOUT)
        finally:
            self.view = None

    def stop(self) -> None:
        """The round will not be applied (the loop stopped): no move is waited for any more, from now on
        (a cancelled `act` notices only at the loop's next turn, and a move must not land in between)."""
        if self._move is not None and not self._move.done():
            self._move.cancel()
        self.view, self.given = None, None

    @property
    def waiting(self) -> bool:
        """Whether a move is being waited for."""
        return self._move is not None and not self._move.done() and self.view is not None

    @property
    def seconds_left(self) -> float | None:
        """Time left for the move being waited for (None without a limit or a turn)."""
        if self.move_seconds is None or self.asked_at is None or not self.waiting:
            return None
        return max(0.0, self.move_seconds - (time.monotonic() - self.asked_at))

    def submit(self, move: Move) -> None:
        """Hand over the person's move for the turn being waited for."""
        if not self.waiting or self._move is None or self.view is None:
            raise ArenaError("it is not your turn")
        self.given = (self.view.round, move)
        self._move.set_result(move)


class GameInProgress(ArenaError):
    """The browser already has a game going on (`game_id`), perhaps in another tab: starting one means leaving it."""

    def __init__(self, game_id: str):
        super().__init__(
            "You have a game going on (perhaps in another tab): finish it, or leave it to start a new one."
        )
        self.game_id = game_id


class TooSlow(Exception):
    """A model move did not come within the arena's deadline."""


@dataclass
class Deadline:
    """A model agent whose every move must come within `seconds`, however the backend retries: one deadline for the
    whole move, so that a server that takes connections and never answers costs the person that long, not the
    client's timeout times its retries."""

    agent: Agent
    seconds: float

    @property
    def records(self) -> list[dict]:
        return getattr(self.agent, "records", [])

    async def act(self, obs: Observation) -> Move:
        try:
            async with asyncio.timeout(self.seconds):
                return await self.agent.act(obs)
        except TimeoutError:
            raise TooSlow(f"no move within {self.seconds:g} s") from None


class Acting:
    """A live game's agent, showing while its move is under way (`acting`): a move that is not to wait for the
    other side waits only while the rules apply it and the round is stored, never for a reply still being made."""

    def __init__(self, agent) -> None:
        self.agent, self.acting = agent, asyncio.Event()

    @property
    def instant(self) -> bool:
        return getattr(self.agent, "instant", False)

    @property
    def records(self) -> list[dict]:
        return getattr(self.agent, "records", [])

    @property
    def paced(self) -> dict:
        return getattr(self.agent, "paced", {})

    async def act(self, obs: Observation) -> Move:
        self.acting.set()
        try:
            return await self.agent.act(obs)
        finally:
            self.acting.clear()


@dataclass(frozen=True)
class GameSetup:
    """What a game against an agent is run from here (`Arena._begin`): a new one, or one taken over as stored. The arm
    is resolved where the game's arm spec is read (a start's setup, a stored row), once."""

    game_id: str
    state: GameState
    human_role: Role
    arm: Arm
    side: Side
    seed: int
    generation: int  # as stored when this process took the game over (bargain.records.store.Store.take_over)
    player: str | None = None  # the browser playing it (free play)
    move_seconds: float | None = None  # the time limit of the person's moves (a study's), if any
    spent_s: float = 0.0  # of the person's move under way, the time spent before this process took the game over
    pace: Pace | None = None  # a study's: the agent's replies at a human-like pace
    study: str | None = None
    starts_at: datetime | None = None  # a study's program game: it waits for "the other party" until then
    kept: tuple[int, Move] | None = None  # the person's move of the round under way, stored before the agent's


@dataclass
class LiveGame:
    """A game being played: its state, its two agents and the task running the episode loop."""

    id: str
    state: GameState
    human_role: Role
    human: HumanAgent
    agent: object
    task: asyncio.Task | None = None
    stored: int = 0  # how many turns are in the store
    failure: str | None = None  # why the loop stopped before the end: "agent", "slow", "storage" or "stale"
    status: str = "active"  # as stored: active, finished, abandoned
    findings: list[dict] = field(default_factory=list)  # the claim checker's, once the game has ended
    generation: int = 0  # as stored when this process took the game over (bargain.records.store.Store.take_over)
    player: str | None = None  # the browser playing it (free play)
    study: str | None = None  # the study whose game it is (None: free play's); nobody else reaches it
    starts_at: datetime | None = None  # a study's program game: it waits for "the other party" until then
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one move of the person's at a time
    writing: asyncio.Lock = field(default_factory=asyncio.Lock)  # one write of the game's moves at a time

    @property
    def in_store(self) -> int:
        """How many moves of the game are stored: its applied turns, and the person's kept move."""
        return self.stored + (self.human.kept is not None)

    @property
    def matching(self) -> bool:
        """Whether the game still waits for "the other party" to join (a study's blinding: bargain.study.config)."""
        return self.starts_at is not None and utcnow() < self.starts_at

    @property
    def is_settled(self) -> bool:
        """Whether the person is asked to move, or the game's loop has stopped (nothing is being waited for)."""
        return self.human.waiting or self.task is None or self.task.done()

    async def settled(self, wait_s: float | None = None, or_acting: bool = False) -> None:
        """Wait until the person is asked to move again, or the game's loop has stopped (at most `wait_s`); with
        `or_acting`, or until the agent is making its move (what the person did is applied and stored by then, or
        waits for the agent's move of the same simultaneous round)."""
        deadline = None if wait_s is None else time.monotonic() + wait_s
        acting = self.agent.acting if or_acting and isinstance(self.agent, Acting) else None
        while self.task is not None and not self.is_settled and not (acting is not None and acting.is_set()):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            waiters = {asyncio.ensure_future(event.wait()) for event in (self.human.asked, acting) if event}
            await asyncio.wait({*waiters, self.task}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            for waiter in waiters:
                waiter.cancel()
            self.human.asked.clear()


class Arena:
    """Every live game of one server, over one store and one set of backends.

    `arms` are the opponents this server offers (by default the built-in catalogue); nothing else can
    be played, whatever a caller asks for. People know them by `names` (a remote model without its URL). `sampling`
    is how every model opponent samples (the trained preset unless the operator caps the reply length);
    `move_deadline` bounds each model move. Store calls run in a worker thread, so a slow or locked database never
    holds up the event loop that every other game shares.
    """

    def __init__(
        self,
        store: Store,
        backends: Backends,
        source: scenarios.ScenarioSet | None = None,
        idle_timeout: timedelta = timedelta(hours=2),
        arms: Iterable[str] | None = None,
        sampling: Sampling = PRESETS["trained"],
        move_deadline: float = MOVE_DEADLINE_S,
    ):
        self.store, self.backends, self.sampling = store, backends, sampling
        self.move_deadline = move_deadline
        self.source = source or scenarios.bundled()
        self.idle_timeout = idle_timeout
        self.arms: tuple[str, ...] = tuple(arms) if arms is not None else tuple(a.spec for a in catalogue())
        self.names = public_names(self.arms)  # arm spec -> the name people choose it by and read
        self._named = {name: spec for spec, name in self.names.items()}
        self.live: dict[str, LiveGame] = {}
        self.people = People(store)  # games between two people (INVITE, QUEUE among the arms): no loop to run
        # one rebuild of a stored game at a time: never two loops for one game (other games load meanwhile); a
        # game's lock lives while a request holds it
        self._loading: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        # This process, among all that serve the same database: a game's loop runs in one process at a time,
        # the one that last took it over (a participant's next request may reach any of them).
        self.process = secrets.token_hex(8)
        self._swept = -math.inf  # when idle games were last looked for

    # --- starting ----------------------------------------------------------------------------

    def trial_for(self, setup: Setup, rng: random.Random) -> Trial:
        """The trial of a new game: a chosen scenario, or one drawn from a tier or split."""
        if not 1 <= setup.rounds <= inputs.MAX_ROUNDS:
            raise ArenaError(f"choose between 1 and {inputs.MAX_ROUNDS} rounds")
        if ":" in setup.scenario:
            scenario = self.source.get(setup.scenario)
        elif setup.scenario in scenarios.SPLITS:
            scenario = rng.choice(self.source.split(setup.scenario))
        else:
            scenario = rng.choice(self.source.tier(setup.scenario))
        buyer_price, seller_price = scenarios.draw_prices(rng, scenario)
        return Trial(
            trial_id=1,
            scenario=scenario,
            condition=setup.condition,
            buyer_price=buyer_price,
            seller_price=seller_price,
            max_rounds=setup.rounds,
            mode=setup.mode,
            first_actor=setup.first_actor,
        )

    async def start(
        self,
        setup: Setup,
        player: str | None = None,
        *,
        replace: bool = False,
        study: str | None = None,
        participant: str | None = None,
        game_index: int | None = None,
        move_seconds: float | None = None,
        pace: Pace | None = None,
        extra: dict | None = None,
        wait: bool = True,
        matching: Pace | None = None,
        start_id: object = None,
    ) -> PersonView:
        """Create, store and begin a game; returns the person's first view. The seed is drawn here
        (cryptographically) unless the setup carries one: only the server's own callers can replay a seed.
        A browser (`player`) has one game going on at a time: a start while it has one raises GameInProgress,
        unless `replace` (the person chose to leave it: it is recorded as abandoned by them, in the same
        transaction). A study's game carries the study's name, the participant's id and its index among their
        games, and may limit the time of a move and pace the agent's replies (`pace`: bargain.arena.pacing); starting
        the same index again (a reload, a second process) returns the game that exists. Without `wait`, the view
        comes as soon as the person is asked to move (at most ASKED_WAIT_S), an agent's opening move still under way
        (`thinking`), as a game between people answers. With `matching`, the game first waits for "the other party"
        to join for a time drawn from the game's seed, shown as a game between people waits (`waiting`).
        `extra` is what the caller notes of the game (a study's: played instead of...). `start_id`: the caller's id
        of this start, which makes a start of a game with a person, sent again, give the seat it took (People.start)."""
        await self.sweep()
        player, once = inputs.player_id(player), inputs.start_id(start_id)
        if setup.arm in (INVITE, QUEUE):
            return await self._start_with_person(setup, player, move_seconds, once)
        arm = await self._playable(setup.arm)
        seed, trial = self._trial(setup)
        starts_at = None  # with `matching`: when "the other party" joins
        if matching is not None:
            starts_at = utcnow() + timedelta(seconds=matching.draw(random.Random(f"{seed}:matching")))
        begun = GameSetup(
            secrets.token_hex(16),
            new_initial_state(trial),
            setup.role,
            arm,
            Side(self.sampling, prompt_version=setup.prompt_version, opponent_is_person=True),
            seed,
            generation=1,
            player=player,
            move_seconds=move_seconds,
            pace=pace,
            study=study,
            starts_at=starts_at,
        )
        game = self._stored_fields(setup, begun, participant, game_index, extra or {})
        try:
            await asyncio.to_thread(self.store.create_game, replace_active=replace, **game)
        except AlreadyStarted as exc:
            if study is None:
                raise GameInProgress(exc.game_id) from None
            return await self._view(exc.game_id, study=study)
        except StoreError as exc:
            log.error("a new game could not be stored: %s", exc)
            raise ArenaError(CANNOT_SAVE) from None
        if replace and player is not None:  # the browser's game left behind, if this process runs it
            for left in [g for g in self.live.values() if g.player == player]:
                self._let_go(left)
        live = self._begin(begun)
        await live.settled(None if wait else ASKED_WAIT_S)
        return self.view_of(live)

    async def _start_with_person(
        self, setup: Setup, player: str | None, move_seconds: float | None, start_id: str | None
    ) -> PersonView:
        """A free-play game against another person (`setup.arm`: by invitation, or the queue): seated by `People`."""
        if setup.arm not in self.arms:
            raise ArenaError("playing another person is not offered here")
        seed, trial = self._trial(setup)
        game = people_game(setup, seed, trial, setup.arm, move_seconds)
        return await self.people.start(
            setup, game, player or fresh_player(start_id), public=setup.arm == QUEUE, start_id=start_id
        )

    def _stored_fields(
        self, setup: Setup, begun: GameSetup, participant: str | None, game_index: int | None, extra: dict
    ) -> dict:
        """A new game against an agent as it is stored: what it was begun from, with the arm's sampling and backend,
        whether the trial lies outside the arm's training, and what the caller notes of it (`extra`)."""
        arm, trial = begun.arm, begun.state.trial
        model = arm.kind != "tactic"
        reasons = arm.out_of_distribution(setup.role.other, trial)
        game = game_fields(
            begun.game_id,
            setup,
            trial,
            begun.seed,
            begun.player,
            arm.spec,
            begun.side.parsing.value,
            sampling=begun.side.sampling.to_dict() if model else None,
            backend=self.backends.for_arm(arm).describe() if model else None,
            out_of_distribution=bool(reasons),
            ood_reasons=reasons,
            study=begun.study,
            participant=participant,
            game_index=game_index,
            driver=self.process,
            generation=begun.generation,
        )
        if begun.move_seconds:
            game["extra"]["move_seconds"] = begun.move_seconds
        if begun.pace is not None:
            game["extra"]["pace"] = begun.pace.to_dict()
        if begun.starts_at is not None:
            game["extra"]["starts_at"] = begun.starts_at.isoformat()
        game["extra"].update(extra)
        return game

    async def pair(
        self,
        setup: Setup,
        key: str,
        *,
        study: str,
        participant: str,
        game_index: int,
        move_seconds: float | None = None,
        avoid: frozenset[str] = frozenset(),
    ) -> PersonView:
        """A study participant's game against another participant (a person arm): seated with the next one waiting
        in the other role of the same cell (`key`), over an item they have not met (none of `avoid`) if one is, or
        waiting for one; the same seat on every start of the same game index. The participant's view of it."""
        seed, trial = self._trial(setup)
        game = people_game(setup, seed, trial, "study", move_seconds, study)
        return await self.people.start(
            setup, game, participant, public=True, key=key, place=(study, game_index), avoid=avoid
        )

    def _trial(self, setup: Setup) -> tuple[int, Trial]:
        """A new game's seed (drawn here, cryptographically, unless the setup carries one) and its trial; an
        ArenaError for a scenario that does not exist."""
        seed = setup.seed if setup.seed is not None else secrets.randbits(31)
        try:
            return seed, self.trial_for(setup, random.Random(seed))
        except (scenarios.ScenarioError, KeyError, IndexError) as exc:
            log.info("refused a setup %r: %s", setup, exc)
            raise ArenaError("that scenario does not exist: pick a tier or split, or search for a product") from None

    def spec_of(self, name: object) -> str:
        """The arm offered under `name`, as people know it (`names`); an ArenaError for anything else, an arm's spec
        with a URL included."""
        if not isinstance(name, str) or name not in self._named:
            raise self._not_offered(name)
        return self._named[name]

    def names_of(self, specs: Iterable[str]) -> dict[str, str]:
        """What people are shown of each arm in `specs` (a stored game's): its name here, or for an arm no longer
        offered one of its own, never a URL."""
        return public_names(self.arms, specs)

    def _not_offered(self, value: object) -> ArenaError:
        """The refusal of an opponent not offered here, naming those that are as people know them."""
        return ArenaError(
            f"{inputs.shown(value)} is not an opponent offered here; choose one of: {', '.join(self.names.values())}"
        )

    async def _playable(self, spec: str) -> Arm:
        """The arm named by `spec` if this server offers it and can play it now, else an ArenaError."""
        if spec not in self.arms:
            raise self._not_offered(spec)
        arm, name = resolve(spec), self.names[spec]
        if arm.kind == "tactic":
            return arm
        if arm.kind != "openai" and self.backends.local is None:
            raise ArenaError(
                f"{name} is not available on this server: it was started without a model backend, "
                "so only the scripted tactics can be played"
            )
        try:
            playable = await self.backends.for_arm(arm).available(arm)
        except BackendError as exc:  # no backend for it, or it cannot be reached: the log says which
            log.warning("%s cannot play: %s", spec, exc)
            playable = False
        except Exception:  # what no one expected: the whole story in the log
            log.exception("checking whether %s can play", spec)
            playable = False
        if not playable:
            raise ArenaError(
                f"{name} cannot play right now: its model server does not answer or does not serve it. "
                "Try again in a minute, or choose another opponent."
            )
        return arm

    def _begin(self, begun: GameSetup) -> LiveGame:
        """Run a game here from `begun`: its agent built from the arm (bounded in time, paced in a study), the person
        asked for their moves."""
        agent = arm_factory(begun.arm, self.backends, begun.side)(begun.seed)
        if not getattr(agent, "instant", False):  # a model: its moves are bounded in time
            agent = Deadline(agent, self.move_deadline)
        if begun.pace is not None:  # a study's blinding: replies at a human-like pace
            agent = Paced(agent, begun.pace, begun.seed)
        state = begun.state
        human = HumanAgent(begun.move_seconds, begun.spent_s if begun.human_role in state.current_players() else 0.0)
        human.kept = begun.kept
        live = LiveGame(
            begun.game_id,
            state,
            begun.human_role,
            human,
            Acting(agent),
            stored=len(state.turns),
            generation=begun.generation,
            player=begun.player,
            study=begun.study,
            starts_at=begun.starts_at,
        )
        self.live[begun.game_id] = live
        self._run_loop(live)
        return live

    def _run_loop(self, live: LiveGame) -> None:
        """Run (or run again, after a failure) the game's episode loop from its state."""
        live.failure = None
        buyer, seller = (live.human, live.agent) if live.human_role is Role.BUYER else (live.agent, live.human)
        live.task = asyncio.get_running_loop().create_task(self._run(live, buyer, seller))

    async def _run(self, live: LiveGame, buyer, seller) -> None:
        try:
            if live.matching and live.starts_at is not None:  # nobody is asked to move before "the other party" came
                await asyncio.sleep((live.starts_at - utcnow()).total_seconds())
            await play(live.state, buyer, seller, on_turn=lambda state: self._store(live))
        except StaleGame as exc:  # another process moved the game on: this copy is out of date, and let go
            log.info("game %s: a round was refused, the stored game has moved on (%s)", live.id, exc)
            live.failure = "stale"
            if self.live.get(live.id) is live:
                del self.live[live.id]
        except StoreError as exc:
            log.error("game %s: a round could not be stored; the game is paused: %s", live.id, exc)
            live.failure = "storage"
        except TooSlow as exc:
            log.warning("game %s: the agent was too slow (%s); the round can be retried", live.id, exc)
            live.failure = "slow"
        except BackendError as exc:  # its server is down or refuses: said in one line, the round can be retried
            log.warning("game %s: the agent could not move: %s", live.id, exc)
            live.failure = "agent"
        except Exception:  # the agent (its backend) failed: the round is not applied, the person may retry
            log.exception("game %s: the agent could not move", live.id)
            live.failure = "agent"
        if live.failure is not None:
            live.human.stop()
            if len(live.state.turns) > live.stored:  # never show what is not stored
                live.state = replay(live.state.trial, list(live.state.turns[: live.stored]))

    async def _store(self, live: LiveGame) -> None:
        """Commit the turns not yet stored (after every applied round, before the next), the person's kept move
        aside (stored already); at the end, in the same transaction, the outcome and the claim checker's findings.
        The work runs in a worker thread."""
        async with live.writing:
            new, kept = live.state.turns[live.stored :], live.human.kept
            rows = [
                self._row(live, turn)
                for turn in new
                if kept is None or (turn.round, turn.role) != (kept[0], live.human_role)
            ]
            finished = live.state if live.state.is_terminal() else None

            def commit() -> list[dict]:
                outcome = None if finished is None else outcome_fields(finished, live.human_role.value)
                # A person's move is played wherever it arrives, once: the write names the moves it was based on. A
                # pass made because time ran out comes only from the process driving the game now (its generation).
                timed_out = any(turn.error == TIMEOUT and turn.role is live.human_role for turn in new)
                generation = live.generation if timed_out else None
                self.store.add_moves(live.id, rows, outcome, generation, based_on=live.in_store)
                return [] if outcome is None else outcome["claims"]

            live.findings = await asyncio.to_thread(commit)
            live.stored += len(new)
            if kept is not None and any(turn.round == kept[0] for turn in new):
                live.human.kept = None

    async def _keep(self, live: LiveGame, round_: int, move: Move) -> bool:
        """Store the person's move of a simultaneous round as soon as they make it, before the agent's is in (as a
        game between two people stores it): a move the person was shown as made is never lost with a process that
        dies before the round ends. (If it cannot be stored now, the round stores it with the agent's, as before.)
        Whether it was stored."""
        row = self._row(live, Turn.of(round_, live.human_role, move))
        try:
            await asyncio.to_thread(self.store.add_moves, live.id, [row], None, None, live.in_store)
        except StoreError as exc:  # StaleGame too: the round's own write will find the game moved on
            log.warning("game %s: the person's move could not be kept before the agent's: %s", live.id, exc)
            return False
        except Exception:  # what nobody expected: the round's own write meets it too, and the loop reports it
            log.exception("game %s: keeping the person's move", live.id)
            return False
        live.human.kept = (round_, move)
        return True

    def _row(self, live: LiveGame, turn: Turn) -> dict:
        """A turn of the game as its move row is stored (an agent's with its reply's record, pace and flags)."""
        agent = turn.role is not live.human_role
        records = {(r["round"], r["role"]): r for r in getattr(live.agent, "records", ())} if agent else {}
        record = records.get((turn.round, turn.role.value), {})
        return {
            "round": turn.round,
            "role": turn.role.value,
            "actor": "agent" if agent else "human",
            "action": turn.action.value,
            "price": turn.price,
            "message": turn.message,
            "thought": turn.thought or "",
            "raw": turn.raw,
            "error": turn.error,
            "flags": ["mentions_ai"] if agent and MENTIONS_AI.search(turn.message or "") else [],
            "prompt_messages": record.get("messages"),
            "latency_s": record.get("latency_s"),
            "prompt_tokens": record.get("prompt_tokens"),
            "completion_tokens": record.get("completion_tokens"),
            "endpoint": record.get("endpoint"),
            "paced_s": getattr(live.agent, "paced", {}).get((turn.round, turn.role.value)),
        }

    # --- playing -----------------------------------------------------------------------------

    async def live_game(
        self, game_id: str, wait_s: float | None = None, retry: bool = True, study: str | None = None
    ) -> LiveGame:
        """The game `game_id` (as `inputs.game_id` read it; of `study`'s, or of free play: any other is no such game),
        rebuilt from the store if this server does not hold it as stored (a reload, a restart, another process moved
        it on), with `retry` its loop run again if it stopped on a failure, and settled: waiting for the person, or
        ended (waiting at most `wait_s` for the other side; None: until then)."""
        for _ in range(3):
            live = await self._loaded(game_id, retry, study)
            # An open-ended wait (a move's) does not wait out the other party's arrival: the move is refused meanwhile.
            await live.settled(0.0 if wait_s is None and live.matching else wait_s)
            if live.failure != "stale":  # else a round was refused, the stored game having moved on: read it again
                break
        return live

    async def _loaded(self, game_id: str, retry: bool, study: str | None) -> LiveGame:
        """The game as stored, run here (see live_game), not yet settled."""
        loading = self._loading.setdefault(game_id, asyncio.Lock())
        async with loading:
            live = self.live.get(game_id)
            if live is not None and live.study != study:
                raise ArenaError(NO_SUCH_GAME)
            try:
                version = await asyncio.to_thread(self.store.version, game_id) if live is not None else None
                if live is not None and (version is None or version[:2] != (live.generation, live.in_store)):
                    self._let_go(live)  # another process took the game over or played on meanwhile: this is stale
                    live = None
                if live is None:
                    return await self._rebuilt(game_id, study)
                if retry and live.failure is not None and live.task is not None and live.task.done():
                    self._run_loop(live)
                return live
            except StoreError as exc:
                log.error("game %s could not be read: %s", game_id, exc)
                raise ArenaError("The server cannot read games right now: try again in a minute.") from None

    async def _rebuilt(self, game_id: str, study: str | None) -> LiveGame:
        """Take the game over and run it here from the state read in the same transaction (an ended one is only
        shown). A person's time for the move under way counts from when the round began, wherever it began."""
        row = await asyncio.to_thread(self.store.take_over, game_id, self.process, study)
        if row is None:
            raise ArenaError(NO_SUCH_GAME)
        state, pending = replay_pending(Trial.from_dict(row["trial"]), turns_of(row["moves"]))
        kept = None if pending is None else (pending.round, pending.move)  # the person's, stored before the agent's
        human_role = Role(row["human_role"])
        if row["status"] != "active" or state.is_terminal():
            ended = HumanAgent()
            ended.kept = kept
            return LiveGame(
                game_id,
                state,
                human_role,
                ended,
                None,
                status=row["status"],
                findings=row["claims"] or [],
                stored=len(state.turns),
                study=study,
            )
        side = Side(self.sampling, prompt_version=PromptVersion(row["prompt_version"]), opponent_is_person=True)
        extra = row["extra"] or {}
        starts_at = datetime.fromisoformat(extra["starts_at"]) if extra.get("starts_at") else None
        began = max(row["updated_at"], starts_at or row["updated_at"])
        spent = 0.0 if kept else max(0.0, (utcnow() - began).total_seconds())
        return self._begin(
            GameSetup(
                game_id,
                state,
                human_role,
                resolve(row["arm"]),
                side,
                row["seed"] or 0,
                generation=row["generation"],
                player=row["player"],
                move_seconds=extra.get("move_seconds"),
                spent_s=spent,
                pace=Pace.from_dict(extra["pace"]) if extra.get("pace") else None,
                study=study,
                starts_at=starts_at,
                kept=kept,
            )
        )

    def _let_go(self, live: LiveGame) -> None:
        """Stop running a game here (another process drives it now, or it was abandoned)."""
        self.live.pop(live.id, None)
        if live.task is not None:
            live.task.cancel()
        live.human.stop()

    async def move(
        self,
        game_id: object,
        round_: object,
        action: object,
        price: object = None,
        message: object = "",
        *,
        study: str | None = None,
        wait: bool = True,
    ) -> PersonView:
        """Check a move as a caller sent it (action, price and message as given) and play it (see `play`)."""
        return await self.play(game_id, round_, inputs.human_move(action, price, message), study=study, wait=wait)

    async def play(
        self, game_id: object, round_: object, move: Move, *, study: str | None = None, wait: bool = True
    ) -> PersonView:
        """Apply the person's checked move for `round_` in a game of `study`'s (None: of free play) and return the
        new view. A move for a round already played (sent twice, from another tab or to another process) changes
        nothing: the view is the game as stored, with a notice. If another process moved the game on while this one
        played the round, the round is refused by the database and the move is tried again on the game as stored (a
        few times, then the person is asked to). Without `wait`, the view comes once the move is applied and stored,
        or as soon as the agent is making its own move (`thinking`, the person's move shown as theirs), never after
        the agent's reply: as a move against a person answers, so that in a study when a move is answered tells
        nothing of who the other side is."""
        round_ = inputs.whole_number("the round", round_, 1, 10 * inputs.MAX_ROUNDS)
        token = inputs.game_id(game_id)
        await self.sweep(every=timedelta(minutes=1))  # games idle past the timeout end even when no one starts one
        if await self._seat(token, study) is not None:
            return await self.people.play(token, round_, move, study)
        kept = False  # this request stored the move (the round's own write, elsewhere perhaps, then plays it)
        for _ in range(3):
            live = await self.live_game(token, study=study)
            async with live.lock:
                made = (live.human.given, live.human.kept)
                if any(m is not None and m[0] == round_ for m in made) or any(
                    t.round == round_ and t.role is live.human_role for t in live.state.turns
                ):
                    return dataclasses.replace(self.view_of(live), notice=None if kept else ALREADY_PLAYED)
                self._check(live, round_, move)
                if not live.human.waiting:
                    if live.failure is not None:  # it stopped again at once: say so, as the view does
                        return self.view_of(live)
                    raise ArenaError("wait for the other side's move")
                async with live.writing:  # stored before the round's own write, which skips it
                    live.human.submit(move)
                    if live.state.trial.mode is Mode.SIMULTANEOUS:
                        kept = await self._keep(live, round_, move)
                await live.settled(or_acting=not wait)
                if live.failure != "stale":
                    return self.view_of(live)
        return dataclasses.replace(await self._view(token, study=study), notice=CHANGED_MEANWHILE)

    @staticmethod
    def _check(live: LiveGame, round_: int, move: Move) -> None:
        """Refuse a move that cannot be played in this game now (an ArenaError saying why)."""
        if live.state.is_terminal():
            raise ArenaError("this game is over: start a new one")
        if live.status == "abandoned":
            raise ArenaError("this game was abandoned after being left idle: start a new one")
        if live.matching:
            raise ArenaError(NOT_JOINED)
        if round_ != live.state.round:
            raise ArenaError(f"that move was for round {round_}, and the game is in round {live.state.round}")
        inputs.allowed(live.state, live.human_role, move)

    async def setup_of(self, game_id: object) -> Setup:
        """The setup a free-play game was started with (its seed aside): what "play again" starts anew."""
        token = inputs.game_id(game_id)
        seat = await self._seat(token, None)
        try:
            row = await asyncio.to_thread(self.store.game, seat.game_id if seat else token)
        except StoreError as exc:
            log.error("game %s could not be read: %s", token, exc)
            raise ArenaError("The server cannot read games right now: try again in a minute.") from None
        if row is None or row["study"] is not None:
            raise ArenaError(NO_SUCH_GAME)
        trial = Trial.from_dict(row["trial"])
        return Setup(
            role=seat.role if seat else Role(row["human_role"]),
            arm=(row["extra"] or {}).get("pairing", row["arm"]),
            condition=trial.condition,
            mode=trial.mode,
            rounds=trial.max_rounds,
            scenario=(row["extra"] or {}).get("scenario_choice", trial.scenario.tier),
            prompt_version=PromptVersion(row["prompt_version"]),
            first_actor=trial.first_actor,
        )

    async def view(
        self, game_id: object, wait_s: float = 0.0, retry: bool = True, study: str | None = None
    ) -> PersonView:
        """The person's current view of a game of `study`'s (None: of free play; any other game is no such game),
        resuming it, and with `retry` retrying a failed round. It answers at once, or with `wait_s` waits at most
        that long for the other side's move: its view says `thinking` while that move is under way, and shows a
        failed round as failed."""
        return await self._view(inputs.game_id(game_id), wait_s, retry, study)

    async def _view(self, token: str, wait_s: float = 0.0, retry: bool = True, study: str | None = None) -> PersonView:
        """`view` of a game id as `inputs.game_id` read it."""
        if await self._seat(token, study) is not None:
            return await self.people.view(token, wait_s, study)
        return self.view_of(await self.live_game(token, wait_s, retry, study))

    async def _seat(self, token: str, study: str | None) -> Seat | None:
        """The seat that `token` (a game id as `inputs.game_id` read it) is, when it names a game between two people
        (a game running here is not); the seat of a game that is not `study`'s (None: free play's) is no such game."""
        seat = None if token in self.live else await self.people.seat_of(token)
        if seat is not None and seat.study != study:
            raise ArenaError(NO_SUCH_GAME)
        return seat

    async def join(self, token: object, player: str | None, held: object = None, start_id: object = None) -> PersonView:
        """Take the seat an invitation link carries: the game between two people begins. `held`: the seat token the
        caller's browser keeps (opening the link again, the one who took it gets their own seat); `start_id`: the
        caller's id of this join, which makes the join sent again give the seat it took (People.join)."""
        if QUEUE not in self.arms and INVITE not in self.arms:
            raise ArenaError("playing another person is not offered here")
        token = inputs.game_id(token)
        held = None if held is None else inputs.game_id(held)
        once = inputs.start_id(start_id)
        return await self.people.join(token, inputs.player_id(player) or fresh_player(once), held, once)

    async def cancel(self, game_id: object, study: str | None = None) -> PersonView:
        """Stop waiting for the other person (a game that has begun is played or left, not cancelled)."""
        seat = await self._seat(inputs.game_id(game_id), study)
        if seat is None:
            raise ArenaError("only a game waiting for another person can be cancelled")
        return await self.people.cancel(seat)

    async def sweep(self, every: timedelta = timedelta(0)) -> None:
        """Mark games idle past the timeout as abandoned and stop their loops (at most once per `every`)."""
        now = time.monotonic()
        if now - self._swept < every.total_seconds():
            return
        self._swept = now
        try:
            idle = await asyncio.to_thread(self.store.abandon_idle, self.idle_timeout)
            await asyncio.to_thread(self.people.cancel_gone)  # waits in the queue whose people have gone
        except StoreError as exc:  # the next sweep will try again; play goes on meanwhile
            log.error("idle games could not be marked abandoned, or gone waits cancelled: %s", exc)
            return
        for game_id in idle:
            live = self.live.pop(game_id, None)
            if live is not None and live.task is not None:
                live.task.cancel()

    # --- views -------------------------------------------------------------------------------

    def view_of(self, live: LiveGame) -> PersonView:
        """What the person may see now: their observation (with their own move, handed over and not yet applied),
        and after the end the outcome and debrief."""
        obs = live.state.observation(live.human_role)
        if live.state.is_terminal():
            self.live.pop(live.id, None)
        stopped = live.failure if live.task is not None and live.task.done() else None
        # The person's move of the round under way: kept (stored), or handed over (lost if the round failed).
        given = live.human.kept or (None if stopped else live.human.given)
        applied = given is not None and any(t.round == given[0] and t.role is live.human_role for t in obs.history)
        view = person_view(
            live.id,
            obs,
            live.state if obs.terminal else None,
            live.human.waiting,
            stopped,
            live.status,
            live.findings,
            thinking=not live.is_settled,
            mine=None if applied else given,
        )
        view = dataclasses.replace(view, seconds_left=live.human.seconds_left)
        if live.matching:  # as a game between people waits for its second person
            view = dataclasses.replace(view, status="waiting", thinking=True)
        return view


def game_fields(
    game_id: str,
    setup: Setup,
    trial: Trial,
    seed: int,
    player: str | None,
    arm: str,
    parsing: str,
    **more: object,
) -> dict:
    """A new game's stored fields (a game against an agent, or between two people: `more` adds the rest)."""
    return {
        "id": game_id,
        "player": player,
        "human_role": setup.role.value,
        "arm": arm,
        "scenario": trial.scenario.ref,
        "seed": seed,
        "condition": trial.condition.value,
        "mode": trial.mode.value,
        "max_rounds": trial.max_rounds,
        "first_actor": trial.first_actor.value,
        "buyer_price": trial.buyer_price,
        "seller_price": trial.seller_price,
        "trial": trial.to_dict(),
        "prompt_version": setup.prompt_version.value,
        "parsing": parsing,
        "extra": {"scenario_choice": setup.scenario},
        **more,
    }


def people_game(
    setup: Setup, seed: int, trial: Trial, pairing: str, move_seconds: float | None, study: str | None = None
) -> dict:
    """A new game between two people, its stored fields: how they are paired (`pairing`: an invitation, the queue,
    a study), the time a move may take, and no `player`: who plays is in its seats (a browser's one game going on
    against an agent is not this one)."""
    game = game_fields(secrets.token_hex(16), setup, trial, seed, None, PERSON, "none", study=study)
    game["extra"]["pairing"] = pairing
    if move_seconds:
        game["extra"]["move_seconds"] = move_seconds
    return game

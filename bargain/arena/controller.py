"""The arena's game controller: people play arms through the one episode loop, every move stored.

A person is an agent whose move arrives from the UI (`HumanAgent`): each live game runs
`bargain.episodes.play` as a task on the server's event loop, so in simultaneous mode the model
starts on its move for the round while the person is still typing, and the wait after they
submit is close to nothing. Each round's moves are committed to the store before the game goes
on. A game survives a page reload (its id) and a server restart (rebuilt from its stored
moves). What a person is shown is built from their observation only, until the debrief.
This module knows nothing of Gradio: the UI and the API call `Arena` and render its views.
"""

from __future__ import annotations

import asyncio
import math
import random
import secrets
import time
from dataclasses import dataclass, field
from datetime import timedelta

from bargain import scenarios
from bargain.agents import Side, agent_factory
from bargain.arena.views import person_view
from bargain.arms import ArmError, resolve
from bargain.backends import Backends
from bargain.episodes import play
from bargain.game import Action, GameState, Move, Observation, new_initial_state
from bargain.prompts import PromptVersion
from bargain.store import Store, game_state
from bargain.trial import Condition, Mode, Role, Trial

MAX_MESSAGE = 500  # characters in one public message
MAX_ROUNDS = 20
PRICE_LIMIT = 1e9
DEFAULT_SOURCE = "low"  # random scenarios from the low tier, the adapters' training tier


class ArenaError(ValueError):
    """Something the person (or an API caller) asked for that cannot be done; the text says why."""


class HumanAgent:
    """The person at the table: `act` waits until the UI submits a move for the turn."""

    def __init__(self) -> None:
        self.view: Observation | None = None  # the observation of the turn being waited for
        self._move: asyncio.Future | None = None
        self.asked = asyncio.Event()

    async def act(self, obs: Observation) -> Move:
        """Publish the turn and wait for the person's move."""
        self._move = asyncio.get_running_loop().create_future()
        self.view = obs
        self.asked.set()
        try:
            return await self._move
        finally:
            self.view = None

    @property
    def waiting(self) -> bool:
        """Whether a move is being waited for."""
        return self._move is not None and not self._move.done() and self.view is not None

    def submit(self, move: Move) -> None:
        """Hand over the person's move for the turn being waited for."""
        if not self.waiting:
            raise ArenaError("it is not your turn")
        self._move.set_result(move)


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
    failure: str | None = None
    status: str = "active"  # as stored: active, finished, abandoned
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def settled(self) -> None:
        """Wait until the person is asked to move again, or the game's loop has stopped."""
        while not (self.human.waiting or self.task is None or self.task.done()):
            waiter = asyncio.ensure_future(self.human.asked.wait())
            await asyncio.wait({waiter, self.task}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            self.human.asked.clear()


@dataclass(frozen=True)
class Setup:
    """What a person chooses before a game."""

    role: Role = Role.BUYER
    arm: str = "tactic:linear"
    condition: Condition = Condition.BOTH_UNAWARE
    mode: Mode = Mode.SIMULTANEOUS
    rounds: int = 4
    scenario: str = DEFAULT_SOURCE  # a tier or split to draw from, or a reference TIER:INDEX
    prompt_version: PromptVersion = PromptVersion.TRAIN
    seed: int | None = None
    first_actor: Role = Role.BUYER  # who opens in sequential mode


def parse_price(text: object) -> float:
    """A price typed by a person: a positive finite number of sensible size, or a clear ArenaError."""
    if isinstance(text, bool):
        raise ArenaError("the price must be a number")
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        cleaned = str(text or "").strip().replace(",", "").lstrip("$€£")
        if not cleaned:
            raise ArenaError("enter a price to make an offer")
        try:
            value = float(cleaned)
        except ValueError:
            raise ArenaError(f"{str(text)[:40]!r} is not a price: type a number such as 2.50") from None
    if not math.isfinite(value):
        raise ArenaError("the price must be a finite number")
    if value > PRICE_LIMIT:
        raise ArenaError("that price is absurdly large")
    value = round(value, 2)  # prices are in cents
    if value <= 0:
        raise ArenaError("the price must be at least 0.01")
    return value


def human_move(action: str, price: object, message: str | None) -> Move:
    """Validate what a person submitted and make it a move (nothing is stored on an error)."""
    message = (message or "").strip()
    if len(message) > MAX_MESSAGE:
        raise ArenaError(f"the message is {len(message)} characters long; the limit is {MAX_MESSAGE}")
    try:
        kind = Action(str(action).upper())
    except ValueError:
        raise ArenaError(f"unknown action {action!r}: use OFFER, DEAL or NO_DEAL") from None
    if kind is Action.INVALID:
        raise ArenaError("choose OFFER, DEAL or NO_DEAL")
    if kind is Action.OFFER:
        return Move(Action.OFFER, price=parse_price(price), message=message)
    return Move(kind, message=message)


def _round(value: object) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ArenaError(f"the round must be a whole number, got {value!r}") from None


class Arena:
    """Every live game of one server, over one store and one set of backends."""

    def __init__(self, store: Store, backends: Backends, source: scenarios.ScenarioSet | None = None,
                 idle_timeout: timedelta = timedelta(hours=2)):
        self.store, self.backends = store, backends
        self.source = source or scenarios.bundled()
        self.idle_timeout = idle_timeout
        self.live: dict[str, LiveGame] = {}
        self._swept = -math.inf  # when idle games were last looked for

    # --- starting ----------------------------------------------------------------------------

    def trial_for(self, setup: Setup, rng: random.Random) -> Trial:
        """The trial of a new game: a chosen scenario, or one drawn from a tier or split."""
        if ":" in setup.scenario:
            scenario = self.source.get(setup.scenario)
        elif setup.scenario in scenarios.SPLITS:
            scenario = rng.choice(self.source.split(setup.scenario))
        else:
            scenario = rng.choice(self.source.tier(setup.scenario))
        buyer_price, seller_price = scenarios.draw_prices(rng, scenario)
        if not 1 <= setup.rounds <= MAX_ROUNDS:
            raise ArenaError(f"choose between 1 and {MAX_ROUNDS} rounds")
        return Trial(trial_id=1, scenario=scenario, condition=setup.condition, buyer_price=buyer_price,
                     seller_price=seller_price, max_rounds=setup.rounds, mode=setup.mode, first_actor=setup.first_actor)

    async def start(self, setup: Setup, player: str | None = None) -> dict:
        """Create, store and begin a game; returns the person's first view."""
        await self.sweep()
        try:
            arm = resolve(setup.arm)
        except ArmError as exc:
            raise ArenaError(str(exc)) from None
        if arm.kind != "tactic" and not await self._available(arm):
            raise ArenaError(f"{arm.spec} is not available here: start the app with a model backend "
                             "(--backend vllm --base-url URL, or --backend hf --model ID_OR_PATH)")
        seed = setup.seed if setup.seed is not None else secrets.randbits(31)
        try:
            trial = self.trial_for(setup, random.Random(seed))
        except (scenarios.ScenarioError, ValueError) as exc:
            raise ArenaError(str(exc)) from None
        side = Side(prompt_version=setup.prompt_version)
        agent_role = setup.role.other
        reasons = arm.out_of_distribution(agent_role, trial)
        game_id = secrets.token_hex(16)
        backend = self.backends.for_arm(arm).describe() if arm.kind != "tactic" else None
        self.store.create_game(
            id=game_id, player=player, human_role=setup.role.value, arm=arm.spec, scenario=trial.scenario.ref,
            seed=seed, condition=trial.condition.value, mode=trial.mode.value, max_rounds=trial.max_rounds,
            first_actor=trial.first_actor.value, buyer_price=trial.buyer_price, seller_price=trial.seller_price,
            trial=trial.to_dict(), prompt_version=side.prompt_version.value, parsing=side.parsing.value,
            sampling=side.sampling.to_dict() if arm.kind != "tactic" else None, backend=backend,
            out_of_distribution=bool(reasons), ood_reasons=reasons)
        live = self._begin(game_id, new_initial_state(trial), setup.role, arm.spec, side, seed)
        await live.settled()
        return self.view_of(live)

    async def _available(self, arm) -> bool:
        try:
            return await self.backends.for_arm(arm).available(arm)
        except Exception:  # no backend configured, or it cannot be reached
            return False

    def _begin(self, game_id: str, state: GameState, human_role: Role, arm_spec: str, side: Side, seed: int) -> LiveGame:
        agent = agent_factory(arm_spec, self.backends, side)(seed)
        human = HumanAgent()
        live = LiveGame(game_id, state, human_role, human, agent, stored=len(state.turns))
        buyer, seller = (human, agent) if human_role is Role.BUYER else (agent, human)
        live.task = asyncio.get_running_loop().create_task(self._run(live, buyer, seller))
        self.live[game_id] = live
        return live

    async def _run(self, live: LiveGame, buyer, seller) -> None:
        try:
            await play(live.state, buyer, seller, on_turn=lambda state: self._store(live))
        except Exception as exc:  # the agent failed: the round is not applied, the person may retry
            live.failure = f"{type(exc).__name__}: {exc}"

    def _store(self, live: LiveGame) -> None:
        """Commit the turns not yet stored (called after every applied round, before the next)."""
        new = live.state.turns[live.stored:]
        records = {(r["round"], r["role"]): r for r in getattr(live.agent, "records", ())}
        rows = []
        for turn in new:
            record = records.get((turn.round, turn.role.value), {}) if turn.role is not live.human_role else {}
            rows.append({"round": turn.round, "role": turn.role.value,
                         "actor": "human" if turn.role is live.human_role else "agent",
                         "action": turn.action.value, "price": turn.price, "message": turn.message,
                         "thought": turn.thought or "", "raw": turn.raw, "error": turn.error,
                         "prompt_messages": record.get("messages"), "latency_s": record.get("latency_s"),
                         "prompt_tokens": record.get("prompt_tokens"),
                         "completion_tokens": record.get("completion_tokens")})
        self.store.add_moves(live.id, rows)
        live.stored += len(new)
        if live.state.is_terminal():
            outcome = live.state.outcome()
            self.store.finish_game(live.id, {
                "deal": outcome.deal, "deal_price": outcome.deal_price, "rounds": outcome.rounds,
                "buyer_utility": outcome.buyer_utility, "seller_utility": outcome.seller_utility,
                "buyer_norm_utility": outcome.buyer_norm_utility, "seller_norm_utility": outcome.seller_norm_utility})

    # --- playing -----------------------------------------------------------------------------

    async def live_game(self, game_id: str) -> LiveGame:
        """The live game, rebuilt from the store if this server does not hold it (reload, restart)."""
        if game_id in self.live:
            return self.live[game_id]
        row = self.store.game(str(game_id)) if game_id else None
        if row is None:
            raise ArenaError("no such game: start a new one")
        state = game_state(row)
        side = Side(prompt_version=PromptVersion(row["prompt_version"]))
        if row["status"] != "active" or state.is_terminal():
            return LiveGame(game_id, state, Role(row["human_role"]), HumanAgent(), None, status=row["status"])
        live = self._begin(game_id, state, Role(row["human_role"]), row["arm"], side, row["seed"] or 0)
        await live.settled()
        return live

    async def move(self, game_id: str, round_: int | None, action: str, price: object = None, message: str | None = "") -> dict:
        """Apply the person's move for `round_` (a repeated submission is refused) and return the new view."""
        move = human_move(action, price, message)
        await self.sweep(every=timedelta(minutes=1))  # games idle past the timeout end even when no one starts one
        live = await self.live_game(game_id)
        async with live.lock:
            if live.state.is_terminal():
                raise ArenaError("this game is over: start a new one")
            if live.status == "abandoned":
                raise ArenaError("this game was abandoned after being left idle: start a new one")
            if live.failure is not None:  # the agent failed last time: run the loop again from the stored state
                live.failure = None
                live.task = asyncio.get_running_loop().create_task(self._run(live, *self._sides(live)))
                await live.settled()
            if round_ is not None and _round(round_) != live.state.round:
                raise ArenaError(f"that move was for round {round_}, and the game is in round {live.state.round}")
            if not live.human.waiting:
                raise ArenaError("wait for the other side's move")
            if move.action not in live.state.legal_actions(live.human_role):
                allowed = ", ".join(a.value for a in live.state.legal_actions(live.human_role))
                raise ArenaError(f"{move.action.value} is not possible now (possible: {allowed})")
            live.human.submit(move)
            await live.settled()
            return self.view_of(live)

    def _sides(self, live: LiveGame) -> tuple:
        return (live.human, live.agent) if live.human_role is Role.BUYER else (live.agent, live.human)

    async def view(self, game_id: str) -> dict:
        """The person's current view of a game (resuming it if needed)."""
        return self.view_of(await self.live_game(game_id))

    async def sweep(self, every: timedelta = timedelta(0)) -> None:
        """Mark games idle past the timeout as abandoned and stop their loops (at most once per `every`)."""
        now = time.monotonic()
        if now - self._swept < every.total_seconds():
            return
        self._swept = now
        for game_id in self.store.abandon_idle(self.idle_timeout):
            live = self.live.pop(game_id, None)
            if live is not None and live.task is not None:
                live.task.cancel()

    # --- views -------------------------------------------------------------------------------

    def view_of(self, live: LiveGame) -> dict:
        """What the person may see now: their observation, and after the end the outcome and debrief."""
        obs = live.state.observation(live.human_role)
        if live.state.is_terminal():
            self.live.pop(live.id, None)
        return person_view(live.id, obs, live.state if obs.terminal else None, live.human.waiting, live.failure,
                           live.status)

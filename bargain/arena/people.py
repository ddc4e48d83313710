"""Games between two people: the same engine, rules and records as a game against an agent, and no loop: the
store is the game.

A person who chooses to play a person is seated at a new game (their seat's token is their handle on it, their
`game_id` in every view) and either given an invitation link (which is no handle: whoever takes it is given a seat
token of their own, which the one who invited never sees), or put in the public queue, where the next person to
choose the same settings and the other role takes the free seat. Until then the game is `waiting`; the one who
waits sees so, and may cancel.

Every request reads the game's stored moves and rebuilds it through the rules; each side sees only its own
observation. A move is stored as it is made, with the number of moves it was based on: two people moving at once,
on two app processes, are both applied, once each, in some order (the database refuses the stale write, and that
move is tried again on the game as stored); the second move of a simultaneous round settles it, and a move that
ends the game stores its outcome and claim findings in the same transaction. Someone waiting for the other side
asks again; `view(wait_s=...)` waits at most that long for a change, reading the game's version a few times a
second.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass

from sqlalchemy import select, update

from bargain.arena import PERSON
from bargain.arena.inputs import ArenaError, Setup
from bargain.arena.views import ALREADY_PLAYED, TIMEOUT, person_view
from bargain.engine.game import Action, GameState, Move, Turn, replay
from bargain.engine.trial import Mode, Role, Trial
from bargain.store import (
    ACTIVE,
    GameRow,
    SeatRow,
    StaleGame,
    Store,
    StoreError,
    advisory_lock,
    outcome_fields,
    turns_of,
    utcnow,
)

INVITE, QUEUE = "person:invite", "person:queue"  # what a person chooses as their opponent
WAITING, CANCELLED = "waiting", "cancelled"
GUEST = "guest"  # the person of a seat taken by a caller who gave no player id (an API client)
POLL_S = 0.2  # how often a waiting view reads the game's version
CANNOT_SAVE = "The server cannot save games right now, so nothing was changed: try again in a minute."
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Seat:
    """One side of a game between two people, as stored."""

    token: str
    game_id: str
    role: Role
    person: str | None
    queue: str | None


def queue_key(setup: Setup) -> str:
    """What two people must have chosen alike to be paired (the role aside: theirs are the two sides)."""
    return "|".join(
        (
            setup.condition.value,
            setup.mode.value,
            str(setup.rounds),
            setup.first_actor.value,
            setup.prompt_version.value,
            setup.scenario,
        )
    )


def rebuilt(trial: Trial, turns: list[Turn]) -> tuple[GameState, Turn | None]:
    """The game as its stored turns make it, and the move of a simultaneous round whose other move is not in yet
    (played, not applied: the rules apply a simultaneous round's two moves together)."""
    pending = None
    if trial.mode is Mode.SIMULTANEOUS and turns and sum(t.round == turns[-1].round for t in turns) == 1:
        turns, pending = turns[:-1], turns[-1]
    return replay(trial, turns), pending


class People:
    """The games between two people of one server, over its store."""

    def __init__(self, store: Store):
        self.store = store

    # --- seats -------------------------------------------------------------------------------

    def seat(self, token: str) -> Seat | None:
        """The seat of a token (None: no such seat, so not a game between people)."""
        with self.store.reading() as session:
            row = session.get(SeatRow, token)
            return None if row is None else Seat(row.token, row.game_id, Role(row.role), row.person, row.queue)

    async def seat_of(self, token: str) -> Seat | None:
        try:
            return await asyncio.to_thread(self.seat, token)
        except StoreError as exc:
            log.error("a seat could not be read: %s", exc)
            raise ArenaError("The server cannot read games right now: try again in a minute.") from None

    # --- starting, joining, leaving ------------------------------------------------------------

    async def start(
        self,
        setup: Setup,
        game: dict,
        player: str | None,
        public: bool,
        key: str | None = None,
        place: tuple[str, int] | None = None,
    ) -> dict:
        """Seat `player` at a game for `setup.role` (its stored fields in `game`: the arena drew its trial). Public:
        the free seat of the oldest game waiting in the queue for these settings (or for `key`: a study's cell) and
        this role, if there is one (the new game is then not made), else a new game waiting in the queue; else a new
        game whose other seat is taken by invitation. With `place` (a study's name and the participant's game
        index), the seat is that game of the participant's, once: starting it again gives the seat taken first.
        The person's view of it."""
        key = (key or queue_key(setup)) if public else None
        study, index = place if place is not None else (None, None)
        if place is not None and (taken := await asyncio.to_thread(self._placed, place, player)) is not None:
            return await self.view(taken)

        def seat() -> str:
            with self.store.writing("seat a person in") as session:
                if key is not None:
                    advisory_lock(session, key)  # one pairing at a time per queue
                    query = (
                        select(SeatRow)
                        .join(GameRow, GameRow.id == SeatRow.game_id)
                        .where(
                            SeatRow.queue == key,
                            SeatRow.role == setup.role.value,
                            SeatRow.person.is_(None),
                            GameRow.status == WAITING,
                        )
                        .order_by(SeatRow.created_at)
                        .limit(1)
                        .with_for_update()
                    )
                    if player is not None:  # never seated against oneself
                        seated = select(SeatRow.game_id).where(SeatRow.person == player)
                        query = query.where(GameRow.id.not_in(seated))
                    free = session.scalars(query).first()
                    if free is not None:
                        self._claim(session, free, player)
                        free.study, free.game_index = study, index
                        return free.token
                mine = secrets.token_hex(16)
                session.add(GameRow(**game, status=WAITING))
                session.flush()
                session.add(
                    SeatRow(
                        token=mine,
                        game_id=game["id"],
                        role=setup.role.value,
                        person=player or GUEST,
                        joined_at=utcnow(),
                        study=study,
                        game_index=index,
                    )
                )
                session.add(
                    SeatRow(
                        token=secrets.token_hex(16),
                        game_id=game["id"],
                        role=setup.role.other.value,
                        invitation=None if key else secrets.token_hex(16),
                        queue=key,
                    )
                )
                return mine

        try:
            token = await asyncio.to_thread(seat)
        except StoreError as exc:
            taken = await asyncio.to_thread(self._placed, place, player) if place is not None else None
            if taken is None:  # not the same game of a participant's, started twice at once: a failure
                log.error("a game between people could not be stored: %s", exc)
                raise ArenaError(CANNOT_SAVE) from None
            token = taken
        return await self.view(token)

    def _placed(self, place: tuple[str, int], player: str | None) -> str | None:
        """The seat already taken for a study participant's game (None: none yet)."""
        study, index = place
        with self.store.reading() as session:
            return session.scalars(
                select(SeatRow.token).where(
                    SeatRow.study == study, SeatRow.person == (player or GUEST), SeatRow.game_index == index
                )
            ).first()

    @staticmethod
    def _claim(session, seat: SeatRow, person: str | None) -> None:
        """Take a free seat for `person`; its game begins. The game must still be waiting as this transaction writes
        (not cancelled meanwhile by the one who waited), or nothing is taken."""
        now = utcnow()
        begun = session.execute(
            update(GameRow)
            .where(GameRow.id == seat.game_id, GameRow.status == WAITING)
            .values(status=ACTIVE, updated_at=now)
        )
        if begun.rowcount != 1:
            raise ArenaError("that invitation was already taken, or the game was cancelled")
        seat.person, seat.joined_at = person or GUEST, now

    async def join(self, token: object, player: str | None) -> dict:
        """Take the seat an invitation link carries (the same person again: their view; anyone else after it is
        taken, or its creator: refused)."""
        if not isinstance(token, str):
            raise ArenaError("that invitation link is not valid")

        def take() -> str:
            with self.store.writing("seat a person in") as session:
                seat = session.scalars(select(SeatRow).where(SeatRow.invitation == token).with_for_update()).first()
                if seat is None:
                    raise ArenaError("that invitation link is not valid")
                game = session.get(GameRow, seat.game_id)
                if seat.person is not None and seat.person == player:
                    return seat.token  # a reload of the link
                if game is None or game.status != WAITING or seat.person is not None:
                    raise ArenaError("that invitation was already taken, or the game was cancelled")
                sender = session.scalars(
                    select(SeatRow.person).where(SeatRow.game_id == seat.game_id, SeatRow.token != seat.token)
                ).first()
                if player is not None and sender == player:
                    raise ArenaError("that is your own invitation: send the link to the person you want to play")
                self._claim(session, seat, player)
                return seat.token

        try:
            taken = await asyncio.to_thread(take)
        except StoreError as exc:
            log.error("an invitation could not be taken: %s", exc)
            raise ArenaError(CANNOT_SAVE) from None
        return await self.view(taken)

    async def cancel(self, seat: Seat) -> dict:
        """Stop waiting: a game nobody has joined yet is cancelled (once it has begun, it is played or left)."""

        def stop() -> None:
            with self.store.writing("cancel a game in") as session:
                session.execute(
                    update(GameRow)
                    .where(GameRow.id == seat.game_id, GameRow.status == WAITING)
                    .values(status=CANCELLED, updated_at=utcnow())
                )

        try:
            await asyncio.to_thread(stop)
        except StoreError as exc:
            log.error("a game could not be cancelled: %s", exc)
            raise ArenaError(CANNOT_SAVE) from None
        return await self.view(seat.token)

    # --- playing -----------------------------------------------------------------------------

    def _read(self, seat: Seat) -> dict:
        """The stored game with its moves and, by role, its seats (their person, arrival and invitation)."""
        game = self.store.game(seat.game_id)
        if game is None:
            raise StoreError(f"the game of seat {seat.token} is missing")
        with self.store.reading() as session:
            seats = session.scalars(select(SeatRow).where(SeatRow.game_id == seat.game_id)).all()
            game["seats"] = {Role(s.role): Seat(s.token, s.game_id, Role(s.role), s.person, s.queue) for s in seats}
            arrived = [s.joined_at for s in seats if s.joined_at is not None]
            game["joined_at"] = max(arrived) if len(arrived) == len(seats) else None  # when the second person came
            game["invitation"] = next((s.invitation for s in seats if s.person is None), None)
        return game

    def _expire(self, game: dict) -> bool:
        """Under a move countdown (a study's `move_seconds`), pass for each side whose time for this round has run
        out, as the arena does for a person against an agent; whichever request sees it first writes it, once.
        Whether a pass was written (the game must be read again)."""
        left = seconds_left(game)
        if left is None or left > 0:
            return False
        state, pending = rebuilt(Trial.from_dict(game["trial"]), turns_of(game["moves"]))
        late = [role for role in state.current_players() if pending is None or pending.role is not role]
        if not late:
            return False
        try:
            self._store(game["seats"][late[0]], game, Move(Action.INVALID, error=TIMEOUT))
        except StaleGame:  # another request wrote it, or a move came in meanwhile
            pass
        return True

    async def view(self, token: str, wait_s: float | None = None) -> dict:
        """The person's view of their game. With `wait_s`, while the other side is awaited (their move, or their
        arrival), wait at most that long for the game to change."""
        seat = await self.seat_of(token)
        if seat is None:
            raise ArenaError("no such game: start a new one")
        try:
            game = await asyncio.to_thread(self._current, seat)
            if wait_s and self._shown(seat, game)["thinking"]:  # the game as read is rebuilt once, not at each look
                ends, seen = time.monotonic() + wait_s, (len(game["moves"]), game["status"])
                while time.monotonic() < ends:
                    await asyncio.sleep(POLL_S)
                    version = await asyncio.to_thread(self.store.version, seat.game_id)
                    if version is None or version[1:] != seen or self._due(game):
                        game = await asyncio.to_thread(self._current, seat)
                        break
        except StoreError as exc:
            log.error("game %s could not be read: %s", seat.game_id, exc)
            raise ArenaError("The server cannot read games right now: try again in a minute.") from None
        return self._shown(seat, game)

    def _current(self, seat: Seat) -> dict:
        """The game as it stands, after the passes of any time that has run out."""
        game = self._read(seat)
        while self._expire(game):
            game = self._read(seat)
        return game

    @staticmethod
    def _due(game: dict) -> bool:
        left = seconds_left(game)
        return left is not None and left <= 0

    def _shown(self, seat: Seat, game: dict) -> dict:
        """What the person at `seat` may see of the stored game: their observation, their own move of a round the
        other side has not moved in yet, and at the end the outcome and debrief (the other side was a person)."""
        trial = Trial.from_dict(game["trial"])
        state, pending = rebuilt(trial, turns_of(game["moves"]))
        status = game["status"]
        obs = state.observation(seat.role)
        mine = pending is not None and pending.role is seat.role
        your_turn = status == ACTIVE and seat.role in state.current_players() and not mine
        ended = state if state.is_terminal() else None
        view = person_view(
            seat.token,
            obs,
            ended,
            your_turn,
            None,
            "active" if status in (ACTIVE, WAITING) else status,
            game["claims"] or [],
            thinking=not your_turn,
            other=PERSON,
        )
        if mine and pending is not None:  # the person's own move, played and waiting for the other's
            view["transcript"].append(
                {
                    "round": pending.round,
                    "speaker": "you",
                    "role": pending.role.value,
                    "action": pending.action.value,
                    "price": pending.price,
                    "message": pending.message,
                    "timed_out": False,
                }
            )
        if status in (WAITING, CANCELLED):
            view["status"] = status
            view["thinking"] = status == WAITING  # the other person is awaited
        view["waiting_s"] = (utcnow() - game["created_at"]).total_seconds() if status == WAITING else None
        # The invitation of the free seat, for the link of the one who invited (none for the queue's games).
        invited = status == WAITING and seat.role.value == game["human_role"]
        view["invitation"] = game["invitation"] if invited else None
        view["seconds_left"] = seconds_left(game) if your_turn else None  # a study's move countdown; else None
        return view

    async def play(self, token: str, round_: int, move: Move) -> dict:
        """Store the person's move for `round_` (once, however often it is sent), settling the round when the other
        side's move is in, and the game when it ends; the new view."""
        seat = await self.seat_of(token)
        if seat is None:
            raise ArenaError("no such game: start a new one")
        for _ in range(5):  # the other side's move, stored meanwhile, makes this write stale: read again
            try:
                game = await asyncio.to_thread(self._current, seat)
                view = self._shown(seat, game)
                if any(t["round"] == round_ and t["speaker"] == "you" for t in view["transcript"]):
                    return {**view, "notice": ALREADY_PLAYED}  # sent twice, or from another tab
                if view["status"] == WAITING:
                    raise ArenaError("the other side has not joined yet")
                if view["status"] != "active":
                    raise ArenaError("this game is over: start a new one")
                if not view["your_turn"]:
                    raise ArenaError("wait for the other side's move")
                if round_ != view["round"]:
                    raise ArenaError(f"that move was for round {round_}, and the game is in round {view['round']}")
                await asyncio.to_thread(self._store, seat, game, move)
                return self._shown(seat, await asyncio.to_thread(self._read, seat))
            except StaleGame:
                continue
            except StoreError as exc:
                log.error("a move in game %s could not be stored: %s", seat.game_id, exc)
                raise ArenaError(CANNOT_SAVE) from None
        raise ArenaError("The game changed while your move was sent, and it was not applied: make it again.")

    def _store(self, seat: Seat, game: dict, move: Move) -> None:
        """Write the move based on the game as read; with the outcome and findings when it ends the game."""
        trial = Trial.from_dict(game["trial"])
        turns = turns_of(game["moves"])
        state, pending = rebuilt(trial, turns)
        if move.error != TIMEOUT and move.action not in state.legal_actions(seat.role):
            allowed = ", ".join(a.value for a in state.legal_actions(seat.role))
            raise ArenaError(f"{move.action.value} is not possible now (possible: {allowed})")
        current = state.round  # the round the move is made in
        if trial.mode is Mode.SIMULTANEOUS:
            if pending is not None:
                state.apply_actions({seat.role: move, pending.role: pending.move})
        else:
            state.apply_action(move, seat.role)
        row: dict[str, object] = {
            "round": current,
            "role": seat.role.value,
            "actor": "human",
            "person": seat.person,
            "action": move.action.value,
            "price": move.price,
            "message": move.message,
            "thought": "",
            "raw": None,
            "error": move.error,
            "flags": [],
        }
        outcome = None
        outcome = outcome_fields(state, game["human_role"]) if state.is_terminal() else None
        self.store.add_moves(seat.game_id, [row], outcome, based_on=len(game["moves"]))


def seconds_left(game: dict) -> float | None:
    """The time left for the moves of the current round, under a move countdown (`move_seconds` in the game's
    extra: a study's); None without one, or before both people are there. A round's time starts when the one
    before it was settled (its last move stored), the first round's when the second person arrived."""
    limit = (game["extra"] or {}).get("move_seconds")
    if not limit or game["status"] != ACTIVE or game["joined_at"] is None:
        return None
    moves = game["moves"]
    settled = [m for m in moves if sum(n["round"] == m["round"] for n in moves) == 2] if moves else []
    if Trial.from_dict(game["trial"]).mode is Mode.SEQUENTIAL:
        settled = moves
    began = max([game["joined_at"], *(m["created_at"] for m in settled[-1:])])
    return max(0.0, limit - (utcnow() - began).total_seconds())

"""Games between two people: the same engine, rules and records as a game against an agent, and no loop: the
store is the game.

A person who chooses to play a person is seated at a new game (their seat's token is their handle on it, their
`game_id` in every view) and either given an invitation link (which is no handle: whoever takes it is given a seat
token of their own, which the one who invited never sees), or put in the public queue, where the next person to
choose the same settings and the other role takes the free seat. Until then the game is `waiting`; the one who
waits sees so, and may cancel.

A seat is its token's, and nobody else's: a player id (which a caller may make up) never opens a seat, it only says
who played (a caller who gives none is given a fresh random one, so that two anonymous callers are never taken for
one person), keeps a person from taking their own invitation or their own wait in the queue, and bounds the games
with people a player may have waiting or going on at once (MAX_OPEN). A wait in the queue is live only while its
person keeps asking for it (each look notes the time): one not asked for within LIVE_S is gone, skipped by the queue
and cancelled, and the oldest live wait is paired first.

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
import hashlib
import logging
import secrets
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import CursorResult, Update, and_, case, func, or_, select, update
from sqlalchemy.orm import Session, aliased

from bargain.arena import PERSON
from bargain.arena.inputs import ArenaError, Setup, allowed
from bargain.arena.views import ALREADY_PLAYED, TIMEOUT, PersonView, person_view
from bargain.engine.game import Action, Move, replay_pending
from bargain.engine.trial import Mode, Role, Trial
from bargain.records.store import (
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
GONE = "gone"  # why a wait was cancelled (the game's abandoned_by): its person stopped asking for it
POLL_S = 0.2  # how often a waiting view reads the game's version
LIVE_S = 15.0  # a wait in the queue whose person has not asked for it for this long is gone
SEEN_EVERY_S = 3.0  # a waiting person's looks are noted at most this often (each is a write)
MAX_OPEN = 3  # games with other people a player (free play) may have waiting or going on at once
CANNOT_SAVE = "The server cannot save games right now, so nothing was changed: try again in a minute."
NO_SUCH_GAME = "no such game: start a new one"
NOT_JOINED = "the other side has not joined yet"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Seat:
    """One side of a game between two people, as stored (`study`: the study whose game it is, None in free play)."""

    token: str
    game_id: str
    role: Role
    person: str | None
    queue: str | None
    study: str | None
    seen_at: datetime | None

    @classmethod
    def of(cls, row: SeatRow) -> Seat:
        return cls(row.token, row.game_id, Role(row.role), row.person, row.queue, row.study, row.seen_at)


def fresh_player(start_id: str | None = None) -> str:
    """The player id of a caller who gave none: their own, never shared with another caller; with a start id (drawn
    at random by the caller), one derived from it, so that the start sent again is the same player's."""
    if start_id is None:
        return f"anon-{secrets.token_hex(8)}"
    return f"anon-{hashlib.sha256(start_id.encode()).hexdigest()[:16]}"


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


def _changed(session: Session, statement: Update) -> int:
    """How many rows an UPDATE changed."""
    return cast(CursorResult, session.execute(statement)).rowcount


def _cancel_gone(session: Session, key: str | None = None) -> int:
    """Cancel the waits in the queue (`key`'s, or any) whose person has not asked for them within LIVE_S; how many.
    Their games are locked in the order of their ids first, so that two transactions cancelling some of the same
    waits (a pairing, a sweep) on PostgreSQL never each hold a game the other waits for."""
    now = utcnow()
    free, waiter = aliased(SeatRow), aliased(SeatRow)
    waits = (
        select(free.game_id)
        .join(waiter, and_(waiter.game_id == free.game_id, waiter.token != free.token))
        .where(
            free.person.is_(None),
            free.queue.is_not(None) if key is None else free.queue == key,
            or_(waiter.seen_at.is_(None), waiter.seen_at < now - timedelta(seconds=LIVE_S)),
        )
    )
    gone = session.scalars(
        select(GameRow.id)
        .where(GameRow.id.in_(waits), GameRow.status == WAITING)
        .order_by(GameRow.id)
        .with_for_update()
    ).all()
    if gone:
        session.execute(
            update(GameRow).where(GameRow.id.in_(gone)).values(status=CANCELLED, abandoned_by=GONE, updated_at=now)
        )
    return len(gone)


class People:
    """The games between two people of one server, over its store."""

    def __init__(self, store: Store):
        self.store = store

    # --- seats -------------------------------------------------------------------------------

    def seat(self, token: str) -> Seat | None:
        """The seat of a token (None: no such seat, so not a game between people)."""
        with self.store.reading() as session:
            row = session.get(SeatRow, token)
            return None if row is None else Seat.of(row)

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
        player: str,
        public: bool,
        key: str | None = None,
        place: tuple[str, int] | None = None,
        avoid: frozenset[str] = frozenset(),
        start_id: str | None = None,
    ) -> PersonView:
        """Seat `player` at a game for `setup.role` (its stored fields in `game`: the arena drew its trial). Public:
        the free seat of the oldest live wait in the queue for these settings (or for `key`: a study's cell) and
        this role, if there is one (the new game is then not made), else a new game waiting in the queue; else a new
        game whose other seat is taken by invitation. With `place` (a study's name and the participant's game
        index), the seat is that game of the participant's, once: starting it again gives the seat taken first;
        waits over a scenario in `avoid` (one whose item the participant has met) are taken only when no other is.
        So is a free-play start with a `start_id` (the caller's, drawn for this start): sent again, by the same
        player, after its answer was lost, it gives the seat the first one took, whatever the settings, not a second
        seat whose partner would wait for a person playing elsewhere. Outside a study, a player has at most MAX_OPEN
        games with people waiting or going on. The person's view."""
        key = (key or queue_key(setup)) if public else None
        study = place[0] if place is not None else None
        once = place is not None or start_id is not None
        if once and (taken := await asyncio.to_thread(self._taken, player, place, start_id)) is not None:
            return await self.view(taken, study=study)
        try:
            token = await asyncio.to_thread(self._seated, setup, game, player, key, place, avoid, start_id)
        except StoreError as exc:
            taken = await asyncio.to_thread(self._taken, player, place, start_id) if once else None
            if taken is None:  # not the same start, made twice at once: a failure
                log.error("a game between people could not be stored: %s", exc)
                raise ArenaError(CANNOT_SAVE) from None
            token = taken
        return await self.view(token, study=study)

    def _seated(
        self,
        setup: Setup,
        game: dict,
        player: str,
        key: str | None,
        place: tuple[str, int] | None,
        avoid: frozenset[str],
        start_id: str | None,
    ) -> str:
        """`start`'s transaction: the free seat of the oldest live wait in the queue `key` (if any; those over a
        scenario in `avoid` last) taken, or the new game stored with its two seats; the token of `player`'s seat."""
        study, index = place if place is not None else (None, None)
        with self.store.writing("seat a person in") as session:
            # A player's open games are counted, and a queue paired, by one transaction at a time.
            advisory_lock(session, *([f"player:{player}"] if study is None else []), *([key] if key else []))
            if study is None:
                self._bound(session, player)
            free = self._free_seat(session, key, setup.role, player, avoid) if key is not None else None
            if free is not None:
                self._claim(session, free, player, start_id)
                free.study, free.game_index = study, index
                return free.token
            mine = secrets.token_hex(16)
            session.add(GameRow(**game, status=WAITING))
            session.flush()
            now = utcnow()
            session.add(
                SeatRow(
                    token=mine,
                    game_id=game["id"],
                    role=setup.role.value,
                    person=player,
                    joined_at=now,
                    seen_at=now,
                    study=study,
                    game_index=index,
                    start_id=start_id,
                )
            )
            session.add(
                SeatRow(
                    token=secrets.token_hex(16),
                    game_id=game["id"],
                    role=setup.role.other.value,
                    invitation=None if key else secrets.token_hex(16),
                    queue=key,
                    study=study,
                )
            )
            return mine

    @staticmethod
    def _free_seat(session: Session, key: str, role: Role, player: str, avoid: frozenset[str]) -> SeatRow | None:
        """The free seat for `role` of the oldest wait in the queue `key` (not `player`'s own; those over a scenario in
        `avoid` last), locked; the waits whose people have gone are cancelled first, never paired."""
        _cancel_gone(session, key)
        query = (
            select(SeatRow)
            .join(GameRow, GameRow.id == SeatRow.game_id)
            .where(
                SeatRow.queue == key,
                SeatRow.role == role.value,
                SeatRow.person.is_(None),
                GameRow.status == WAITING,
                GameRow.id.not_in(select(SeatRow.game_id).where(SeatRow.person == player)),  # not oneself
            )
            # a wait over an item the newcomer has not met first; one over an item they have met only when no other
            # is open, since a partner left waiting for a pool that fits them both might wait the study out
            .order_by(case((GameRow.scenario.in_(avoid), 1), else_=0), GameRow.created_at, GameRow.id)
            .limit(1)
            .with_for_update()
        )
        return session.scalars(query).first()

    def _taken(self, player: str, place: tuple[str, int] | None, start_id: str | None) -> str | None:
        """The seat `player` already took for a study's game (`place`) or by a start (`start_id`); None: none yet."""
        with self.store.reading() as session:
            query = select(SeatRow.token).where(SeatRow.person == player)
            if place is not None:
                query = query.where(SeatRow.study == place[0], SeatRow.game_index == place[1])
            else:
                query = query.where(SeatRow.start_id == start_id)
            return session.scalars(query).first()

    @staticmethod
    def _bound(session: Session, player: str) -> None:
        """Refuse a player who already has MAX_OPEN games with people waiting or going on (free play)."""
        open_games = session.execute(
            select(func.count())
            .select_from(SeatRow)
            .join(GameRow, GameRow.id == SeatRow.game_id)
            .where(SeatRow.person == player, SeatRow.study.is_(None), GameRow.status.in_((WAITING, ACTIVE)))
        ).scalar_one()
        if open_games >= MAX_OPEN:
            raise ArenaError(
                f"You already have {MAX_OPEN} games with other people waiting or going on: finish one, or stop "
                "waiting in one, before you start another."
            )

    @staticmethod
    def _claim(session: Session, seat: SeatRow, person: str, start_id: str | None) -> None:
        """Take a free seat for `person` (by the start or join `start_id`, if its caller named one); its game begins.
        The game must still be waiting as this transaction writes (not cancelled meanwhile by the one who waited), or
        nothing is taken."""
        now = utcnow()
        begun = _changed(
            session,
            update(GameRow)
            .where(GameRow.id == seat.game_id, GameRow.status == WAITING)
            .values(status=ACTIVE, updated_at=now),
        )
        if begun != 1:
            raise ArenaError("that invitation was already taken, or the game was cancelled")
        seat.person, seat.joined_at, seat.seen_at, seat.start_id = person, now, now, start_id

    async def join(
        self, token: object, player: str, held: str | None = None, start_id: str | None = None
    ) -> PersonView:
        """Take the seat an invitation link carries for `player`; refused once it is taken (whoever asks: a player
        id proves nothing) and to its sender. `held`: the seat token the caller already holds (a browser keeps it),
        which is how the one who took the link opens it again: their own seat's view. `start_id`: the caller's id of
        this join, as of a start (`start`): the join sent again by the same player gives the seat it took."""
        if not isinstance(token, str):
            raise ArenaError("that invitation link is not valid")

        def take() -> str:
            with self.store.writing("seat a person in") as session:
                advisory_lock(session, f"player:{player}")
                seat = session.scalars(select(SeatRow).where(SeatRow.invitation == token).with_for_update()).first()
                if seat is None or seat.study is not None:  # a study's seats are taken by pairing, never by a link
                    raise ArenaError("that invitation link is not valid")
                if held is not None and seat.person is not None and secrets.compare_digest(held, seat.token):
                    return seat.token  # the link opened again by the one who took it
                if start_id is not None and seat.person == player and seat.start_id == start_id:
                    return seat.token  # the join sent again, its answer lost
                game = session.get(GameRow, seat.game_id)
                if game is None or game.status != WAITING or seat.person is not None:
                    raise ArenaError("that invitation was already taken, or the game was cancelled")
                sender = session.scalars(
                    select(SeatRow.person).where(SeatRow.game_id == seat.game_id, SeatRow.token != seat.token)
                ).first()
                if sender == player:
                    raise ArenaError("that is your own invitation: send the link to the person you want to play")
                self._bound(session, player)
                self._claim(session, seat, player, start_id)
                return seat.token

        try:
            taken = await asyncio.to_thread(take)
        except StoreError as exc:
            log.error("an invitation could not be taken: %s", exc)
            raise ArenaError(CANNOT_SAVE) from None
        return await self.view(taken)

    async def cancel(self, seat: Seat) -> PersonView:
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
        return await self.view(seat.token, study=seat.study)

    def cancel_gone(self) -> int:
        """Cancel every wait in the queue whose person has stopped asking for it (LIVE_S); how many."""
        with self.store.writing("cancel waits in") as session:
            return _cancel_gone(session)

    # --- playing -----------------------------------------------------------------------------

    def _read(self, seat: Seat) -> dict:
        """The stored game with its moves and, by role, its seats (their person, arrival and invitation)."""
        game = self.store.game(seat.game_id)
        if game is None:
            raise StoreError(f"the game of seat {seat.token} is missing")
        with self.store.reading() as session:
            seats = session.scalars(select(SeatRow).where(SeatRow.game_id == seat.game_id)).all()
            game["seats"] = {Role(s.role): Seat.of(s) for s in seats}
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
        state, pending = replay_pending(Trial.from_dict(game["trial"]), turns_of(game["moves"]))
        late = [role for role in state.current_players() if pending is None or pending.role is not role]
        if not late:
            return False
        try:
            self._store(game["seats"][late[0]], game, Move(Action.INVALID, error=TIMEOUT))
        except StaleGame:  # another request wrote it, or a move came in meanwhile
            pass
        return True

    async def view(self, token: str, wait_s: float = 0.0, study: str | None = None) -> PersonView:
        """The person's view of their game (a game of `study`'s, or of free play: any other is no such game). With
        `wait_s`, while the other side is awaited (their move, or their arrival), wait at most that long for the game
        to change. A look at a wait keeps it live (LIVE_S); one looked at after it has gone is cancelled."""
        seat = await self.seat_of(token)
        if seat is None or seat.study != study:
            raise ArenaError(NO_SUCH_GAME)
        try:
            game = await asyncio.to_thread(self._current, seat, True)
            if wait_s and self._shown(seat, game).thinking:  # the game as read is rebuilt once, not at each look
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

    def _current(self, seat: Seat, look: bool = False) -> dict:
        """The game as it stands, after the passes of any time that has run out; with `look` (its person asks for
        it), a wait noted as live, or cancelled if it had gone."""
        game = self._read(seat)
        while self._expire(game):
            game = self._read(seat)
        if look and game["status"] == WAITING and self._looked(seat, game):
            game = self._read(seat)
        return game

    def _looked(self, seat: Seat, game: dict) -> bool:
        """Note that the person waiting at `seat` asked for their game now (at most every SEEN_EVERY_S); a wait in
        the queue not asked for within LIVE_S has gone and is cancelled instead. Whether the game changed. (A note
        that cannot be written is logged, and the game shown as read: the next look writes it.)"""
        now = utcnow()
        seen = game["seats"][seat.role].seen_at
        queued = any(s.queue is not None for s in game["seats"].values())
        gone = queued and (seen is None or now - seen > timedelta(seconds=LIVE_S))
        if not gone and seen is not None and now - seen <= timedelta(seconds=SEEN_EVERY_S):
            return False
        try:
            with self.store.writing("note a look in") as session:
                if gone:
                    cancel = update(GameRow).where(GameRow.id == seat.game_id, GameRow.status == WAITING)
                    return bool(_changed(session, cancel.values(status=CANCELLED, abandoned_by=GONE, updated_at=now)))
                session.execute(update(SeatRow).where(SeatRow.token == seat.token).values(seen_at=now))
        except StoreError as exc:
            log.error("a look at game %s could not be noted: %s", seat.game_id, exc)
        return False

    @staticmethod
    def _due(game: dict) -> bool:
        left = seconds_left(game)
        return left is not None and left <= 0

    def _shown(self, seat: Seat, game: dict) -> PersonView:
        """What the person at `seat` may see of the stored game: their observation, their own move of a round the
        other side has not moved in yet, and at the end the outcome and debrief (the other side was a person)."""
        trial = Trial.from_dict(game["trial"])
        state, pending = replay_pending(trial, turns_of(game["moves"]))
        status = game["status"]
        obs = state.observation(seat.role)
        mine = (pending.round, pending.move) if pending is not None and pending.role is seat.role else None
        your_turn = status == ACTIVE and seat.role in state.current_players() and mine is None
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
            mine=mine,
        )
        if status in (WAITING, CANCELLED):
            view = replace(view, status=status, thinking=status == WAITING)  # the other person is awaited, or was
        # The invitation of the free seat, for the link of the one who invited (none for the queue's games).
        invited = status == WAITING and seat.role.value == game["human_role"]
        return replace(
            view,
            waiting_s=(utcnow() - game["created_at"]).total_seconds() if status == WAITING else None,
            invitation=game["invitation"] if invited else None,
            seconds_left=seconds_left(game) if your_turn else None,  # a study's move countdown; else None
        )

    async def play(self, token: str, round_: int, move: Move, study: str | None = None) -> PersonView:
        """Store the person's move for `round_` (once, however often it is sent), settling the round when the other
        side's move is in, and the game when it ends; the new view (a game of `study`'s, or of free play)."""
        seat = await self.seat_of(token)
        if seat is None or seat.study != study:
            raise ArenaError(NO_SUCH_GAME)
        for _ in range(5):  # the other side's move, stored meanwhile, makes this write stale: read again
            try:
                game = await asyncio.to_thread(self._current, seat)
                view = self._shown(seat, game)
                if any(t["round"] == round_ and t["speaker"] == "you" for t in view.transcript):
                    return replace(view, notice=ALREADY_PLAYED)  # sent twice, or from another tab
                if view.status == WAITING:
                    raise ArenaError(NOT_JOINED)
                if view.status != "active":
                    raise ArenaError("this game is over: start a new one")
                if not view.your_turn:
                    raise ArenaError("wait for the other side's move")
                if round_ != view.round:
                    raise ArenaError(f"that move was for round {round_}, and the game is in round {view.round}")
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
        state, pending = replay_pending(trial, turns)
        if move.error != TIMEOUT:
            allowed(state, seat.role, move)
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

"""What a person is shown of a game: their view while it runs, the outcome and debrief at the end.

Built from the person's observation only; the finished game (`ended`) is the one way anything
the observation hid (the agent's price, its strategy text, the truth of claims) enters a view.
Errors are the project's own sentences: what went wrong inside goes to the server's log.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace

from bargain.engine.game import GameState, Move, Observation
from bargain.engine.trial import Role

ALREADY_PLAYED = "That round was already played (sent twice, or from another tab): this is the game as it is stored."
TIMEOUT = "timeout"  # the error of a pass made because the person's time for a move ran out
# Why a game's loop stopped before its end, in words for the person (bargain.arena.controller sets the kind).
FAILURES = {
    "agent": "The other side is unavailable right now; your game is saved and nothing of this round was applied. "
    "{retry} to retry, now or later.",
    "slow": "The other side took too long to answer; your game is saved and nothing of this round was applied. "
    "{retry} to retry, now or later.",
    "storage": "The game is paused: the server cannot save moves right now. Nothing of this round was applied and "
    "your game is saved up to here. {retry} to retry in a moment.",
    "stale": "This round was played elsewhere meanwhile (another tab, or another server of this site); nothing of it "
    "was applied twice. {retry} to see the game as it is stored.",
}


def _transcript(obs: Observation, other: str, mine: tuple[int, Move] | None) -> list[dict]:
    said = [(t.round, t.role, t.move) for t in obs.history]
    if mine is not None:  # the person's own move of a round whose other move is not in yet: played, not yet applied
        said.append((mine[0], obs.role, mine[1]))
    return [_said(round_, "you" if role is obs.role else other, role.value, move) for round_, role, move in said]


def _said(round_: int, speaker: str, role: str, move: Move) -> dict:
    """A move of the transcript."""
    return {
        "round": round_,
        "speaker": speaker,
        "role": role,
        "action": move.action.value,
        "price": move.price,
        "message": move.message,
        "timed_out": move.error == TIMEOUT,
    }


@dataclass(frozen=True)
class PersonView:
    """A person's view of a game: everything the page shows of it, and (as `to_json`) what a program is sent.

    `transcript` lists the moves made, each {round, speaker ("you", or who the other side is), role, action, price,
    message, timed_out}; `outcome` and `debrief` are set once the game has ended (see `_outcome`, `_debrief`).
    A game between people fills `waiting_s` (how long the one who waits for the other person has waited) and
    `invitation` (the link's token, for the one who invited); every view has the fields, so that no field tells one
    kind of game from the other."""

    game_id: str
    status: str  # active, waiting, finished, abandoned or cancelled
    role: str
    condition: str
    mode: str
    round: int
    max_rounds: int
    item: str
    description: str
    persona: str
    your_price: float
    their_price: float | None  # None: the condition hides it
    their_price_prior: list[float] | None  # [low, high] of the other side's price, where it is hidden
    your_price_prior: list[float] | None  # [low, high] of the person's price as the other side knows it
    transcript: list[dict]
    other: str  # "agent" (a model or a tactic) or "person"
    your_turn: bool
    actions: list[str]  # the moves the person may make now
    retry: bool  # the round failed and the turn is not theirs: Try again
    thinking: bool  # the other side's move (or arrival) is awaited: ask again
    notice: str | None  # what the caller has to say about the request itself (a move sent twice)
    error: str | None
    outcome: dict | None
    debrief: dict | None
    seconds_left: float | None  # a study's move countdown
    waiting_s: float | None
    invitation: str | None

    def to_json(self) -> dict:
        """The view as the API sends it: one key per field, in this order."""
        return asdict(self)

    def playing(self, move: Move) -> PersonView:
        """The view with the person's `move` for this round shown as played, the other side's awaited (what a page
        shows while the move is on its way)."""
        return replace(self, your_turn=False, transcript=[*self.transcript, _said(self.round, "you", self.role, move)])


def person_view(
    game_id: str,
    obs: Observation,
    ended: GameState | None,
    your_turn: bool,
    failure: str | None,
    status: str = "active",
    findings: list[dict] | None = None,
    thinking: bool = False,
    other: str = "agent",
    mine: tuple[int, Move] | None = None,
) -> PersonView:
    """The view of a game for the person playing `obs.role`. Only `ended` (a finished game, with its
    claim `findings`) may bring in what the observation hides, as the debrief. After a `failure` (the loop
    stopped: one of FAILURES), the person may move again if the turn is theirs, or else retry. `thinking`: the
    other side's move is awaited (ask again for the view); `notice` is set by callers that have something to say
    about the request itself (a move sent twice). `other`: who the other side is, "agent" (a model or a tactic) or
    "person" (bargain.arena.people). `mine`: the person's own move of the round under way, played and waiting for
    the other side's (its round and the move), shown in the transcript as theirs. What only a game between people
    or a study fills (`waiting_s`, `invitation`, `seconds_left`) is left empty for its caller to set."""
    status = "finished" if ended is not None else status
    stopped = failure is not None and status == "active"
    your_turn = (bool(obs.legal_actions) if stopped else your_turn) and status == "active" and mine is None
    retry = "Make your move again" if your_turn else "Press Try again"
    return PersonView(
        game_id=game_id,
        status=status,
        role=obs.role.value,
        condition=obs.condition.value,
        mode=obs.mode.value,
        round=obs.round,
        max_rounds=obs.max_rounds,
        item=obs.product_name,
        description=obs.product_description,
        persona=obs.persona,
        your_price=obs.reservation_price,
        their_price=obs.other_price,
        their_price_prior=list(obs.other_prior) if obs.other_prior else None,
        your_price_prior=list(obs.prior_on_me) if obs.prior_on_me else None,
        transcript=_transcript(obs, other, mine),
        other=other,
        your_turn=your_turn,
        actions=[a.value for a in obs.legal_actions] if your_turn else [],
        retry=stopped and not your_turn,
        thinking=thinking and status == "active" and not stopped and not your_turn,
        notice=None,
        error=(
            FAILURES[failure].format(retry=retry)
            if failure is not None and stopped
            else "This game was abandoned after being left idle: start a new one."
            if status == "abandoned"
            else None
        ),
        outcome=None if ended is None else _outcome(ended, obs.role),
        debrief=None if ended is None else _debrief(ended, obs.role, findings or [], other),
        seconds_left=None,
        waiting_s=None,
        invitation=None,
    )


def _outcome(state: GameState, role: Role) -> dict:
    outcome = state.outcome()
    return {
        "deal": outcome.deal,
        "deal_price": outcome.deal_price,
        "rounds": state.turns[-1].round,  # the round in which the game ended
        "paper_rounds": outcome.rounds,  # the paper's metric: a game without a deal counts every round
        "your_utility": outcome.utility(role),
        "agent_utility": outcome.utility(role.other),
        "your_norm_utility": outcome.norm_utility(role),
        "agent_norm_utility": outcome.norm_utility(role.other),
        "nbs_price": outcome.true_nbs_price,
        "nbs_deviation": None if not outcome.deal else outcome.nbs_deviation,
    }


def _debrief(state: GameState, role: Role, findings: list[dict], other: str) -> dict:
    agent = role.other
    return {
        "agent_role": agent.value,
        "agent_price": state.trial.reservation(agent),
        "other": other,  # who played the other side, "agent" or "person": only an agent writes a private strategy
        "strategy": [
            {"round": t.round, "thought": t.thought or "", "action": t.action.value, "price": t.price}
            for t in state.turns
            if t.role is agent and other == "agent"
        ],
        "claims": [{**f, "speaker": "you" if f["role"] == role.value else other} for f in findings],
    }


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>$:])")


def plain(text: str) -> str:
    """Text from a person or a model shown as that text: no Markdown, no HTML, nothing loaded from elsewhere
    (links, images and forms in a message are shown as the characters typed)."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return escaped.replace("&", "&amp;").replace("<", "&lt;")


def money(value: float | None) -> str:
    """A price as people read one: two decimals, thousands grouped (1,250.00)."""
    return "" if value is None else f"{value:,.2f}"

"""What a person is shown of a game: their view while it runs, the outcome and debrief at the end.

Built from the person's observation only; the finished game (`ended`) is the one way anything
the observation hid (the agent's price, its strategy text, the truth of claims) enters a view.
"""

from __future__ import annotations

from bargain.claims import check_turns
from bargain.game import GameState, Observation
from bargain.trial import Role


def _transcript(obs: Observation) -> list[dict]:
    return [{"round": t.round, "speaker": "you" if t.role is obs.role else "agent", "role": t.role.value,
             "action": t.action.value, "price": t.price, "message": t.message} for t in obs.history]


def person_view(game_id: str, obs: Observation, ended: GameState | None, your_turn: bool, failure: str | None,
                status: str = "active") -> dict:
    """The JSON view of a game for the person playing `obs.role`. Only `ended` (a finished game)
    may bring in what the observation hides, as the debrief."""
    status = "finished" if ended is not None else status
    your_turn = your_turn and status == "active"
    view = {
        "game_id": game_id,
        "status": status,
        "role": obs.role.value,
        "condition": obs.condition.value,
        "mode": obs.mode.value,
        "round": obs.round,
        "max_rounds": obs.max_rounds,
        "item": obs.product_name,
        "description": obs.product_description,
        "persona": obs.persona,
        "your_price": obs.reservation_price,
        "their_price": obs.other_price,
        "their_price_prior": list(obs.other_prior) if obs.other_prior else None,
        "your_price_prior": list(obs.prior_on_me) if obs.prior_on_me else None,
        "transcript": _transcript(obs),
        "your_turn": your_turn,
        "actions": [a.value for a in obs.legal_actions] if your_turn else [],
        "error": (f"The agent could not move ({failure}). Nothing of this round was applied: make your move "
                  "(again) to retry." if failure else
                  "This game was abandoned after being left idle: start a new one." if status == "abandoned" else None),
        "outcome": None,
        "debrief": None,
    }
    if ended is not None:
        view["outcome"], view["debrief"] = _outcome(ended, obs.role), _debrief(ended, obs.role)
    return view


def _outcome(state: GameState, role: Role) -> dict:
    outcome = state.outcome()
    return {
        "deal": outcome.deal,
        "deal_price": outcome.deal_price,
        "rounds": outcome.rounds,
        "your_utility": outcome.utility(role),
        "agent_utility": outcome.utility(role.other),
        "your_norm_utility": outcome.norm_utility(role),
        "agent_norm_utility": outcome.norm_utility(role.other),
        "nbs_price": outcome.true_nbs_price,
        "nbs_deviation": None if not outcome.deal else outcome.nbs_deviation,
    }


def _debrief(state: GameState, role: Role) -> dict:
    agent = role.other
    return {
        "agent_role": agent.value,
        "agent_price": state.trial.reservation(agent),
        "strategy": [{"round": t.round, "thought": t.thought or "", "action": t.action.value, "price": t.price}
                     for t in state.turns if t.role is agent],
        "claims": claim_findings(state, role),
    }


def claim_findings(state: GameState, person: Role) -> list[dict]:
    """Each price claim either side made, set against the truth (the claim checker, bargain.claims)."""
    checked = check_turns(state.turns, state.trial.buyer_price, state.trial.seller_price)
    findings = []
    for move in checked["moves"]:
        speaker = Role(move["role"])
        for claim in move["claims"]:
            about = speaker if claim["kind"] != "other_limit" else speaker.other
            findings.append({"round": move["round"], "speaker": "you" if speaker is person else "agent",
                             "role": speaker.value, "kind": claim["kind"], "said": claim["value"],
                             "about": about.value, "truth": state.trial.reservation(about),
                             "misrepresentation": claim["misrepresentation"],
                             "bluff": claim["kind"] == "final_offer" and move["bluff"], "text": claim["text"]})
    return findings

"""The exact prompt text an agent sees (docs/PROTOCOL.md §4-5), rendered from its observation only.

Two wordings exist: `train`, the one the adapters were trained on (the default for the arena),
and `paper-eval`, the earlier wording of the paper's evaluation runs (for reproducing its
tables). They differ only in the first output-format bullet and the example's price line.
Everything here is exact to the byte; tests pin it. Chat histories are rebuilt from the
observation's record of the game, so an agent needs no memory of its own.

One option departs from the paper's bytes, and only for the arena: when the agent's opponent is a
person (`opponent_is_person`), the opponent's message is rendered as one quoted line (`quoted`), so
that nothing a person types can pass for the protocol's own lines. Model-vs-model runs never set it.
"""

from __future__ import annotations

import enum
import json
import unicodedata

from bargain.engine.game import Observation, Turn
from bargain.engine.replies import render_reply
from bargain.engine.trial import Condition, Mode, Role


class PromptVersion(enum.StrEnum):
    """Which wording of the system prompt to use; recorded with every game."""

    TRAIN = "train"
    PAPER_EVAL = "paper-eval"


_STRATEGY_BULLET = {
    PromptVersion.TRAIN: "- Write 1-3 sentences describing your bargaining strategy. This will not be exposed to the other agent.",
    PromptVersion.PAPER_EVAL: "- Write 1\u20133 sentences of describing your barganing strategy. This will not be exposed to the other agent",
}
_PRICE_LINE = {
    PromptVersion.TRAIN: '  "offer_price": 123.45',
    PromptVersion.PAPER_EVAL: '  "offer_price": 123.45   # only required if action is OFFER',
}


def condition_lines(obs: Observation) -> str:
    """What the side is told about the other's reservation price, each line ending in a newline."""
    other = obs.role.other.value
    if obs.condition is Condition.FULL:
        return f"You know the other agent's reservation price is {obs.other_price}.\n"
    if obs.other_price is not None:
        lines = f"You know the {other}'s reservation price is {obs.other_price}.\n"
    else:
        lo, hi = obs.other_bounds
        lines = f"Your prior on the {other}'s reservation price is ~ Uniform[{lo}, {hi}].\n"
    if obs.prior_on_me is not None:
        lo, hi = obs.prior_on_me
        lines += (
            f"The {other} does not know your exact reservation price, "
            f"their prior on your reservation price is ~ Uniform[{lo}, {hi}].\n"
        )
    return lines


def system_prompt(obs: Observation, version: PromptVersion = PromptVersion.TRAIN) -> str:
    """The system prompt of one side, byte for byte as the adapters saw it (no trailing newline)."""
    version = PromptVersion(version)
    market = "buy from" if obs.role is Role.BUYER else "sell to"
    actions = "OFFER / DEAL / NO_DEAL" if obs.mode is Mode.SEQUENTIAL else "OFFER / NO_DEAL"
    return (
        f"You are the {obs.role.value.upper()} in a bargaining negotiation.\n"
        "\n"
        f"Item: {obs.product_name}\n"
        f"Description: {obs.product_description}\n"
        "\n"
        f"Your persona: {obs.persona}\n"
        f"Your reservation price: {obs.reservation_price}. You can always {market} the market at this price if the bargaining fails.\n"
        f"{condition_lines(obs)}"
        "\n"
        "Output format:\n"
        "\n"
        f"{_STRATEGY_BULLET[version]}\n"
        "- Then output a JSON dict inside a code block using triple backticks:\n"
        "\n"
        "```json\n"
        "{\n"
        '  "message": "your message to the other agent",\n'
        f'  "action": "{actions}",\n'
        f"{_PRICE_LINE[version]}\n"
        "}\n"
        "```"
    )


# Escaped in a quoted message although JSON allows them raw: controls, invisible formatting characters (bidi
# controls, zero-width characters, tag characters), lone surrogates and the line and paragraph separators.
_SPELT_OUT = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _spelt_out(char: str) -> str:
    """`char` as a JSON escape when it could break a line, hide or reorder text, or not be sent as UTF-8."""
    if unicodedata.category(char) not in _SPELT_OUT:
        return char
    code = ord(char)
    if code > 0xFFFF:  # JSON spells a character beyond the BMP as a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def quoted(message: str) -> str:
    """A person's message as one JSON string literal: `json.loads` gives the message back exactly.

    A person may type newlines, "Seller's offer: 2", "Round 4, rounds left 0", a fake SYSTEM line
    or a JSON block; verbatim, each would reach the agent as if it were the protocol's own line.
    Quoted, the message is a single line from `"` to `"`: every quote, backslash and line break in
    it is escaped. JSON escapes the control characters below U+0020; the other controls, the line
    and paragraph separators (`str.splitlines` and many renderers break lines there) and invisible
    characters are escaped here too, so nothing in the quote is hidden from whoever reads the
    prompt, and a lone surrogate cannot make it unsendable. Readable text, accents and other
    scripts included, stays as it is, so the model reads the message as the person wrote it.
    """
    return "".join(map(_spelt_out, json.dumps(message, ensure_ascii=False)))


def user_message(
    obs: Observation,
    seen: tuple[Turn, ...],
    round_: int,
    first: bool,
    version: PromptVersion = PromptVersion.TRAIN,
    *,
    opponent_is_person: bool = False,
) -> str:
    """The user message for a turn in `round_`, given the turns `seen` before it (docs/PROTOCOL.md §5).

    With `opponent_is_person` (the arena) the opponent's message is `quoted`; otherwise it is
    verbatim, the paper's bytes, as a model's message was in the runs the adapters learnt from.
    """
    opponent = obs.role.other
    parts = [system_prompt(obs, version) + "\n"] if first else []
    last = next((t for t in reversed(seen) if t.role is opponent), None)
    if last is not None and last.message:
        parts.append(f"{opponent.title} said: {quoted(last.message) if opponent_is_person else last.message}")
    offer = next((t.price for t in reversed(seen) if t.role is opponent and t.price is not None), None)
    if offer:
        parts.append(f"{opponent.title}'s offer: {offer}")
    parts.append(f"Round {round_}, rounds left {obs.max_rounds - round_}")
    return "\n".join(parts)


def _seen_before(obs: Observation, index: int) -> tuple[Turn, ...]:
    """The turns visible when history[index] was chosen: in simultaneous mode, earlier rounds only."""
    if obs.mode is Mode.SIMULTANEOUS:
        round_ = obs.history[index].round
        return tuple(t for t in obs.history if t.round < round_)
    return obs.history[:index]


def chat_messages(
    obs: Observation, version: PromptVersion = PromptVersion.TRAIN, *, opponent_is_person: bool = False
) -> list[dict[str, str]]:
    """The side's whole chat so far (no system role: the prompt opens the first user message).

    Past turns are rebuilt from the observation: each of the side's moves is preceded by the
    user message it answered and recorded as its raw reply (or, for a move that did not come
    from a model, the reply it stands for). When the side is to move, the chat ends with the
    user message of the current turn. `opponent_is_person` quotes the opponent's messages in
    every user message (`user_message`).
    """
    messages: list[dict[str, str]] = []
    own = [i for i, t in enumerate(obs.history) if t.role is obs.role]
    for k, i in enumerate(own):
        turn = obs.history[i]
        asked = user_message(
            obs, _seen_before(obs, i), turn.round, k == 0, version, opponent_is_person=opponent_is_person
        )
        messages.append({"role": "user", "content": asked})
        reply = (
            turn.raw
            if turn.raw is not None
            else render_reply(turn.thought or "", turn.message, turn.action, turn.price)
        )
        messages.append({"role": "assistant", "content": reply})
    if obs.to_move:
        asked = user_message(obs, obs.history, obs.round, not own, version, opponent_is_person=opponent_is_person)
        messages.append({"role": "user", "content": asked})
    return messages

"""The game panel: what a person sees of a game and plays it with, the same on the arena's page and a study's.

The item and the private information, the round, an optional move countdown (studies), the chat, the message and
price boxes, the move buttons and Try again, one line for what the server has to say (beside the buttons, where the
person is), and in free play the outcome and the debrief once the game has ended (a study keeps them for its debrief
page). `GamePanel.show` renders a view into updates keyed by component: a handler updates what it names, never a
position in a list. Everything shown is rendered from the person's view (bargain.arena.views).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, fields
from typing import Any

import gradio as gr

from bargain.arena import inputs
from bargain.arena.views import PersonView, money, plain
from bargain.engine.trial import Mode
from bargain.web.common import told

# A countdown kept by the browser between answers (no request a second); at zero it asks the server for the page.
COUNTDOWN_JS = """
const tick = () => {
  const left = Number(props.value);
  if (!Number.isFinite(left) || left <= 0) return;
  props.value = left - 1;
  if (left - 1 <= 0) trigger('click');
};
setInterval(tick, 1000);
"""


def info_markdown(view: PersonView) -> str:
    """The item, the person's persona and price, and exactly what their condition tells them."""
    other = "seller" if view.role == "buyer" else "buyer"
    lines = [
        f"### {view.item}",
        view.description,
        "",
        f"**You are the {view.role.upper()}.** {view.persona}",
        f"**Your reservation price: {money(view.your_price)}** (you can always "
        f"{'buy from' if view.role == 'buyer' else 'sell to'} the market at this price).",
        "",
    ]
    if view.their_price_prior is None:  # the condition tells it
        lines.append(f"You know the {other}'s reservation price: **{money(view.their_price)}**.")
    else:
        lo, hi = view.their_price_prior
        lines.append(
            f"You do not know the {other}'s reservation price; it is uniformly distributed between "
            f"{money(lo)} and {money(hi)}."
        )
    if view.your_price_prior is not None:
        lo, hi = view.your_price_prior
        lines.append(
            f"The {other} does not know your price; to them it is uniformly distributed between "
            f"{money(lo)} and {money(hi)}."
        )
    else:
        lines.append(f"The {other} knows your reservation price.")
    lines.append(
        f"\n*Mode: {view.mode}; {view.max_rounds} rounds. "
        + (
            "Both sides move at once each round; crossing offers close at their midpoint.*"
            if view.mode == Mode.SIMULTANEOUS
            else "Sides alternate, one move a round; Accept takes the other's last offer.*"
        )
    )
    return "\n".join(lines)


STRATEGY_SHOWN = 300  # characters of an agent's private strategy a debrief shows (the whole text is in the record)
# How the other side is named: an agent (a model or a tactic), or a person (a game between two people). The table's
# row is one short word: "other person" widened the debrief's table past a phone's width, breaking "normalised".
OTHERS = {"agent": ("The agent", "its", "agent"), "person": ("The other person", "their", "them")}


def other_names(view: PersonView) -> tuple[str, str, str]:
    """(subject, possessive, table row) naming the other side of the game `view` shows."""
    return OTHERS[view.other]


def move_words(turn: dict) -> str:
    """A move as people read it: "offers **2.40**", "accepts", "walks away", or a pass and why."""
    if turn.get("timed_out"):
        return "passes: time ran out"
    return {
        "OFFER": f"offers **{money(turn['price'])}**",
        "DEAL": "accepts",
        "NO_DEAL": "walks away",
        "INVALID": "passes (no valid move)",
    }[turn["action"]]


def chat_messages(view: PersonView, typing: bool = False) -> list[dict]:
    """The transcript as chat messages: the person on the right, the agent on the left."""
    messages = []
    for turn in view.transcript:
        text = f"*Round {turn['round']}: {move_words(turn)}*"
        if turn["message"]:
            text = f"{plain(turn['message'])}\n\n{text}"
        messages.append({"role": "user" if turn["speaker"] == "you" else "assistant", "content": text})
    if typing:
        person = view.other == "person"
        waiting = "*waiting for the other person...*" if person else "*the other side is thinking...*"
        messages.append({"role": "assistant", "content": waiting})
    return messages


def strategy_markdown(debrief: dict, who: str) -> str:
    """The other side's reservation price and its private strategy, move by move: a list, which reads on a phone as
    on a desktop; a strategy (for a reply that could not be read, the whole reply) cut to STRATEGY_SHOWN characters."""

    def shown(thought: str) -> str:
        words = " ".join(thought.split())
        cut = len(words) > STRATEGY_SHOWN
        words = words[:STRATEGY_SHOWN].rsplit(" ", 1)[0] if cut else words
        return f"*{plain(words)}{' …' if cut else ''}*" if words else "(no strategy written)"

    moves = "\n".join(f"- **Round {s['round']}**, {move_words(s)}: {shown(s['thought'])}" for s in debrief["strategy"])
    return (
        f"{who} ({debrief['agent_role']}) had a reservation price of **{money(debrief['agent_price'])}**. "
        f"Its private strategy, move by move:\n\n{moves}"
    )


def other_markdown(debrief: dict, who: str) -> str:
    """Who played the other side of a finished game (`who`, as the page names it: "The other person") and their
    reservation price; an agent's, with its private strategy (strategy_markdown)."""
    if debrief["other"] == "person":
        price = money(debrief["agent_price"])
        return f"{who} ({debrief['agent_role']}) had a reservation price of **{price}**."
    return strategy_markdown(debrief, who)


def round_markdown(view: PersonView, thinking_s: float | None = None) -> str:
    """`Round r of R`, the rounds left and what is special about this one; or the end. `thinking_s`: the
    other side is thinking about its move (for that long)."""
    if view.status == "waiting":
        return f"### Waiting for the other {'person' if view.other == 'person' else 'party'} to join"
    if view.status == "cancelled":
        return "### Cancelled: nobody joined"
    if view.status != "active":
        return "### Game over"
    if thinking_s is not None:
        doing = "waiting for the other person" if view.other == "person" else "the other side is thinking"
        waiting = f" ({doing}... {thinking_s:.0f} s)"
    else:
        waiting = "" if view.your_turn or view.error else " (waiting for the other side)"
    round_, last = view.round, view.max_rounds
    left = last - round_ + 1
    lines = [
        f"### Round {round_} of {last}{waiting}",
        "This is the last round." if left == 1 else f"{left} rounds left, this one included.",
    ]
    if view.your_turn and thinking_s is None:
        if view.mode == Mode.SIMULTANEOUS and left == 1:
            lines.append("**Last round:** if your offers do not cross now, the game ends without a deal.")
        elif view.mode == Mode.SEQUENTIAL and left == 1:
            lines.append(
                "**Last move of the game:** it ends after yours. An offer now can no longer be accepted: "
                "accept their offer, or the game ends without a deal."
            )
        elif view.mode == Mode.SEQUENTIAL and left == 2:
            lines.append(
                "**Your last offer:** the game ends after the other side's next move, which can accept it or not."
            )
    return "\n\n".join(lines)


def result_markdown(view: PersonView) -> str:
    """Outcome and debrief of a finished game (empty while it runs)."""
    outcome, debrief = view.outcome, view.debrief
    if outcome is None or debrief is None:
        return ""
    who, whose, row = other_names(view)
    if outcome["deal"]:
        nbs = outcome["nbs_price"]
        yours = (outcome["deal_price"] - nbs) * (1 if view.role == "seller" else -1) > 0
        side = "your" if yours else f"{who.lower()}'s"
        off = abs(outcome["deal_price"] - nbs)
        # Two people who meet in the middle land on it: "0.00 in their favour" would read as if someone had lost.
        where = "right on it" if money(off) == money(0.0) else f"{money(off)} in {side} favour"
        head = (
            f"## Deal at {money(outcome['deal_price'])} in round {outcome['rounds']}\n\n"
            f"The Nash bargaining price (splitting the surplus evenly) was {money(nbs)}: the deal is {where}."
        )
    else:
        head = "## No deal\n\nBoth sides fall back on the market: nobody gains."
    table = (
        "\n\n| | raw utility | normalised |\n|---|---:|---:|\n"
        f"| you | {outcome['your_utility']:.2f} | {outcome['your_norm_utility']:.2f} |\n"
        f"| {row} | {outcome['agent_utility']:.2f} | {outcome['agent_norm_utility']:.2f} |"
    )
    other = other_markdown(debrief, who)
    return head + table + "\n\n### Debrief\n\n" + other + claims_markdown(debrief["claims"], who, whose)


def claims_markdown(findings: list[dict], who: str = "The agent", whose: str = "its") -> str:
    """The claim checker's findings in plain words: what each side said about a price limit, and the truth (`who`
    and `whose` name the other side)."""
    if not findings:
        return "\n\n### Claims\n\nNeither side stated a price limit or called an offer final."
    lines = []
    for f in findings:
        speaker, speakers = ("You", "your") if f["speaker"] == "you" else (who, whose)
        limit = "ceiling" if f["about"] == "buyer" else "floor"
        if f["kind"] == "final_offer":
            said = f" ({money(f['said'])})" if f["said"] is not None else ""
            verdict = "and then improved on it: a bluff" if f["bluff"] else "and kept to it"
            lines.append(f"- Round {f['round']}: {speaker} called an offer final{said} {verdict}.")
            continue
        subject = (
            f"{speakers} {limit}"
            if f["kind"] == "own_limit"
            else (f"the {f['about']}'s {limit}" if f["speaker"] == "you" else f"your {limit}")
        )
        verdict = f": **a misstatement in {speakers} favour**" if f["misrepresentation"] else ""
        truth = f"it was {money(f['truth'])}{verdict}"
        lines.append(f"- Round {f['round']}: {speaker} said {subject} was {money(f['said'])}; {truth}.")
    return "\n\n### Claims\n\n" + "\n".join(lines)


@dataclass
class GamePanel:
    """The components of one game panel, made in the page's layout where `build` is called."""

    info: gr.Markdown
    status: gr.Markdown
    countdown: gr.HTML | None  # a study's move countdown; free play has none
    chat: gr.Chatbot
    message: gr.Textbox
    price: gr.Textbox
    offer: gr.Button
    accept: gr.Button
    walk: gr.Button
    retry: gr.Button
    note: gr.Markdown
    result: gr.Markdown | None  # free play's outcome and debrief; a study shows them on its debrief page

    @classmethod
    def build(cls, countdown: bool = False, result: bool = True) -> GamePanel:
        """The panel's components, in reading order (a phone shows them one under another)."""
        info, status = gr.Markdown(), gr.Markdown()
        clock = (
            gr.HTML(
                None,
                js_on_load=COUNTDOWN_JS,
                elem_id="countdown",
                html_template="${value == null || value === '' ? '' : '<b>' + value + ' s</b> left for this move'}",
            )
            if countdown
            else None
        )
        chat = gr.Chatbot(
            label="Negotiation",
            height=360,
            feedback_options=None,
            buttons=[],
            allow_tags=False,
            sanitize_html=True,
            latex_delimiters=[],
            elem_id="negotiation",
            visible=False,
        )
        with gr.Row():
            message = gr.Textbox(label="Your message (optional)", max_lines=3, scale=3, max_length=inputs.MAX_MESSAGE)
            price = gr.Textbox(label="Price", placeholder="e.g. 2.40", scale=1, max_length=inputs.MAX_PRICE_TEXT)
        with gr.Row():
            offer = gr.Button("Offer", variant="primary", interactive=False)
            accept = gr.Button("Accept their offer", interactive=False, visible=False)
            walk = gr.Button("Walk away", variant="stop", interactive=False)
            retry = gr.Button("Try again", visible=False)
        note = gr.Markdown()
        return cls(
            info,
            status,
            clock,
            chat,
            message,
            price,
            offer,
            accept,
            walk,
            retry,
            note,
            gr.Markdown() if result else None,
        )

    @property
    def components(self) -> list:
        """Every component of the panel (what a handler that shows it lists as outputs)."""
        return [getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None]

    @property
    def buttons(self) -> list[gr.Button]:
        return [self.offer, self.accept, self.walk, self.retry]

    def on_move(self, play: Callable[..., AsyncIterator], inputs: list, outputs: list, **settings: Any) -> None:
        """Each move button, once the buttons are locked, plays its move as `play(action, *inputs)` does."""
        for button, action in ((self.offer, "OFFER"), (self.accept, "DEAL"), (self.walk, "NO_DEAL")):
            button.click(self.locked, None, self.buttons, api_visibility="private", queue=False).then(
                _playing(play, action), inputs, outputs, **settings
            )

    def locked(self) -> dict:
        """The buttons made inactive at once, while a move is on its way (a second click sends nothing)."""
        return {button: gr.update(interactive=False) for button in self.buttons}

    def cleared(self) -> dict:
        """The message and price boxes emptied: a move was played, so the next one starts from nothing (what was
        refused stays for correcting)."""
        return {self.message: "", self.price: ""}

    def show(
        self, view: PersonView | None, note: str = "", thinking_s: float | None = None, clear: bool = False
    ) -> dict:
        """Updates showing `view` (None: no game). `note`: what the page has to say (else the view's notice or
        error); `thinking_s`: the person's move is shown and the other side is thinking (for that long); `clear`
        empties the message and price boxes (after a move was played; what was refused stays for correcting)."""
        updates: dict = self.cleared() if clear else {}
        if view is None:
            updates.update(
                {
                    self.info: "",
                    self.status: "",
                    self.chat: gr.update(value=[], visible=False),
                    self.note: note,
                    self.offer: gr.update(interactive=False),
                    self.walk: gr.update(interactive=False),
                    self.accept: gr.update(interactive=False, visible=False),
                    self.retry: gr.update(visible=False),
                }
            )
            if self.result is not None:
                updates[self.result] = ""
            if self.countdown is not None:
                updates[self.countdown] = None
            return updates
        thinking = thinking_s is not None
        actions = view.actions if view.status == "active" and view.your_turn and not thinking else []
        said = note or (told(view.notice) if view.notice else told(view.error) if view.error and not thinking else "")
        updates.update(
            {
                self.info: info_markdown(view),
                self.status: round_markdown(view, thinking_s),
                self.chat: gr.update(value=chat_messages(view, thinking), visible=True),
                self.note: said,
                self.offer: gr.update(interactive="OFFER" in actions),
                self.accept: gr.update(interactive="DEAL" in actions, visible=view.mode == Mode.SEQUENTIAL),
                self.walk: gr.update(interactive="NO_DEAL" in actions),
                self.retry: gr.update(visible=bool(view.retry) and not thinking),
            }
        )
        if self.result is not None:
            updates[self.result] = result_markdown(view)
        if self.countdown is not None:
            updates[self.countdown] = None if view.seconds_left is None else round(view.seconds_left)
        return updates


def _playing(play: Callable[..., AsyncIterator], action: str) -> Callable[..., AsyncIterator]:
    """`play` with its action given, as a handler (Gradio streams the updates of an async generator function only)."""

    async def handler(*inputs: Any) -> AsyncIterator:
        async for update in play(action, *inputs):
            yield update

    return handler

"""The arena's web page (Gradio 6): set up a game, bargain, read the debrief, see results.

Handlers stay thin: an event calls the `Arena` controller and renders the view it returns.
Per-session state is only the game id and the person's view (`gr.State`); the game id and a
random player id are also kept in the browser (`gr.BrowserState`) so that a reloaded page
resumes the game. Named API endpoints (`start_game`, `play_move`, `get_game`) return the same
views, and nothing but the caller's own view.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import io
import logging
import secrets
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import gradio as gr
import pandas as pd

from bargain.arena import inputs
from bargain.arena.controller import VIEW_WAIT_S, Arena, ArenaError, GameInProgress
from bargain.arena.inputs import SOURCES
from bargain.arena.limits import AdminGate, StartLimits
from bargain.arena.views import money, plain
from bargain.agents.arms import resolve
from bargain.engine.prompts import PromptVersion
from bargain.store import StoreError
from bargain.engine.trial import Condition, Mode, Role

CONDITION_LABELS = {
    Condition.FULL: "full: both know both prices",
    Condition.BUYER_UNAWARE: "buyer_unaware: the seller knows the buyer's price",
    Condition.SELLER_UNAWARE: "seller_unaware: the buyer knows the seller's price",
    Condition.BOTH_UNAWARE: "both_unaware: neither knows the other's price",
}
UNEXPECTED = "Something went wrong on the server. Your game is saved: try again, or reload the page."
EXPORT_PREFIX = "bargain-export-"  # the private folder an export is written in, for the moment it takes
# The admin's export arrives inside the answer to their own (password-checked) request, as base64: the browser makes
# it a file there. It is never a file on the server that an address could fetch.
EXPORT_JS = """
element.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-export]');
  if (!link || !props.value) return;
  event.preventDefault();
  const bytes = Uint8Array.from(atob(props.value.data), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], {type: 'application/zip'}));
  const save = document.createElement('a');
  save.href = url;
  save.download = props.value.name;
  save.click();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
});
"""
MAX_SEARCH = 100  # characters of a product search
log = logging.getLogger(__name__)


def refusal(text: str) -> gr.Error:
    """A refused request, as the person or program is told it: the project's own sentence, logged in one line (Gradio
    would print a traceback for each, and a flood of bad requests would fill the disk)."""
    log.info("refused: %s", text)
    return gr.Error(text, print_exception=False)


@dataclass
class Options:
    """What the page offers (the opponents, in order, and whether each can play here), and the server-side
    settings around it. Nothing here is sent to the browser except the opponents and the note."""

    available: dict[str, bool]  # arm spec -> playable here; the keys are the opponents offered
    admin: AdminGate = field(default_factory=lambda: AdminGate(None))
    note: str = ""
    browser_secret: str = field(default_factory=lambda: secrets.token_hex(16))  # signs what a browser keeps
    limits: StartLimits = field(default_factory=StartLimits)
    trusted_proxies: int = 0  # proxies in front of the app that append to X-Forwarded-For (see client_address)
    public_results: bool = True  # show everyone's aggregate results (off for a study)
    storage_warning: str = ""  # for the admin: games that a restart would lose (a Space without persistent storage)


# --- rendering views ----------------------------------------------------------------------------


def info_markdown(view: dict) -> str:
    """The item, the person's persona and price, and exactly what their condition tells them."""
    other = "seller" if view["role"] == "buyer" else "buyer"
    lines = [f"### {view['item']}", view["description"], "",
             f"**You are the {view['role'].upper()}.** {view['persona']}",
             f"**Your reservation price: {money(view['your_price'])}** (you can always "
             f"{'buy from' if view['role'] == 'buyer' else 'sell to'} the market at this price).", ""]
    if view["their_price"] is not None:
        lines.append(f"You know the {other}'s reservation price: **{money(view['their_price'])}**.")
    else:
        lo, hi = view["their_price_prior"]
        lines.append(f"You do not know the {other}'s reservation price; it is uniformly distributed between "
                     f"{money(lo)} and {money(hi)}.")
    if view["your_price_prior"] is not None:
        lo, hi = view["your_price_prior"]
        lines.append(f"The {other} does not know your price; to them it is uniformly distributed between "
                     f"{money(lo)} and {money(hi)}.")
    else:
        lines.append(f"The {other} knows your reservation price.")
    lines.append(f"\n*Mode: {view['mode']}; {view['max_rounds']} rounds. "
                 + ("Both sides move at once each round; crossing offers close at their midpoint.*"
                    if view["mode"] == Mode.SIMULTANEOUS else "Sides alternate, one move a round; Accept takes the "
                    "other's last offer.*"))
    return "\n".join(lines)


STRATEGY_SHOWN = 300  # characters of an agent's private strategy a debrief shows (the whole text is in the record)


def move_words(turn: dict) -> str:
    """A move as people read it: "offers **2.40**", "accepts", "walks away", or a pass and why."""
    if turn.get("timed_out"):
        return "passes: time ran out"
    return {"OFFER": f"offers **{money(turn['price'])}**", "DEAL": "accepts", "NO_DEAL": "walks away",
            "INVALID": "passes (no valid move)"}[turn["action"]]


def chat_messages(view: dict, typing: bool = False) -> list[dict]:
    """The transcript as chat messages: the person on the right, the agent on the left."""
    messages = []
    for turn in view["transcript"]:
        text = f"*Round {turn['round']}: {move_words(turn)}*"
        if turn["message"]:
            text = f"{plain(turn['message'])}\n\n{text}"
        messages.append({"role": "user" if turn["speaker"] == "you" else "assistant", "content": text})
    if typing:
        messages.append({"role": "assistant", "content": "*the other side is thinking...*"})
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
    return (f"{who} ({debrief['agent_role']}) had a reservation price of **{money(debrief['agent_price'])}**. "
            f"Its private strategy, move by move:\n\n{moves}")


def round_markdown(view: dict, thinking_s: float | None = None) -> str:
    """`Round r of R`, the rounds left and what is special about this one; or the end. `thinking_s`: the
    other side is thinking about its move (for that long)."""
    if view["status"] != "active":
        return "### Game over"
    if thinking_s is not None:
        waiting = f" (the other side is thinking... {thinking_s:.0f} s)"
    else:
        waiting = "" if view["your_turn"] or view.get("error") else " (waiting for the other side)"
    round_, last = view["round"], view["max_rounds"]
    left = last - round_ + 1
    lines = [f"### Round {round_} of {last}{waiting}",
             "This is the last round." if left == 1 else f"{left} rounds left, this one included."]
    if view["your_turn"] and thinking_s is None:
        if view["mode"] == Mode.SIMULTANEOUS and left == 1:
            lines.append("**Last round:** if your offers do not cross now, the game ends without a deal.")
        elif view["mode"] == Mode.SEQUENTIAL and left == 1:
            lines.append("**Last move of the game:** it ends after yours. An offer now can no longer be accepted: "
                         "accept their offer, or the game ends without a deal.")
        elif view["mode"] == Mode.SEQUENTIAL and left == 2:
            lines.append("**Your last offer:** the game ends after the other side's next move, which can accept "
                         "it or not.")
    return "\n\n".join(lines)


def result_markdown(view: dict) -> str:
    """Outcome and debrief of a finished game (empty while it runs)."""
    outcome, debrief = view["outcome"], view["debrief"]
    if outcome is None:
        return ""
    if outcome["deal"]:
        nbs = outcome["nbs_price"]
        side = "your" if (outcome["deal_price"] - nbs) * (1 if view["role"] == "seller" else -1) > 0 else "the agent's"
        head = (f"## Deal at {money(outcome['deal_price'])} in round {outcome['rounds']}\n\n"
                f"The Nash bargaining price (splitting the surplus evenly) was {money(nbs)}: "
                f"the deal is {money(abs(outcome['deal_price'] - nbs))} on {side} side of it.")
    else:
        head = "## No deal\n\nBoth sides fall back on the market: nobody gains."
    table = ("\n\n| | raw utility | normalised |\n|---|---:|---:|\n"
             f"| you | {outcome['your_utility']:.2f} | {outcome['your_norm_utility']:.2f} |\n"
             f"| agent | {outcome['agent_utility']:.2f} | {outcome['agent_norm_utility']:.2f} |")
    return head + table + "\n\n### Debrief\n\n" + strategy_markdown(debrief, "The agent") + claims_markdown(debrief["claims"])


def claims_markdown(findings: list[dict]) -> str:
    """The claim checker's findings in plain words: what each side said about a price limit, and the truth."""
    if not findings:
        return "\n\n### Claims\n\nNeither side stated a price limit or called an offer final."
    lines = []
    for f in findings:
        who, whose = ("You", "your") if f["speaker"] == "you" else ("The agent", "its")
        limit = "ceiling" if f["about"] == "buyer" else "floor"
        if f["kind"] == "final_offer":
            said = f" ({money(f['said'])})" if f["said"] is not None else ""
            verdict = "and then improved on it: a bluff" if f["bluff"] else "and kept to it"
            lines.append(f"- Round {f['round']}: {who} called an offer final{said} {verdict}.")
            continue
        subject = f"{whose} {limit}" if f["kind"] == "own_limit" else (
            f"the {f['about']}'s {limit}" if f["speaker"] == "you" else f"your {limit}")
        verdict = f": **a misstatement in {whose} favour**" if f["misrepresentation"] else ""
        lines.append(f"- Round {f['round']}: {who} said {subject} was {money(f['said'])}; it was "
                     f"{money(f['truth'])}{verdict}.")
    return "\n\n### Claims\n\n" + "\n".join(lines)


# --- what a browser keeps -----------------------------------------------------------------------


def _signature(secret: str, player: str, game: str | None) -> str:
    return hmac.new(secret.encode(), f"{player}|{game or ''}".encode(), hashlib.sha256).hexdigest()


def kept(secret: str, saved: object) -> dict:
    """The player id and game id a browser kept, if the server signed them; else a new player and no game."""
    if isinstance(saved, dict) and isinstance(saved.get("player"), str) and isinstance(saved.get("sig"), str):
        player, game = saved["player"], saved.get("game") if isinstance(saved.get("game"), str) else None
        if hmac.compare_digest(saved["sig"], _signature(secret, player, game)):
            return {"player": player, "game": game}
    return {"player": secrets.token_hex(8), "game": None}


def keep(secret: str, player: str, game: str | None) -> dict:
    """What the browser keeps: the ids and the server's signature of them (the key never leaves the server)."""
    return {"player": player, "game": game, "sig": _signature(secret, player, game)}


def private_export(write: Callable[[str], list[Path]], name: str) -> dict:
    """What `write` puts into a new private folder, as one zip archive for the admin's own answer (see EXPORT_JS):
    {"name", "size" (in words), "data" (base64)}. The folder (owner-only) is gone before the answer leaves, so
    nothing of an export stays on disk or can be fetched by address."""
    directory = Path(tempfile.mkdtemp(prefix=EXPORT_PREFIX))
    try:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in write(str(directory)):
                archive.write(path, Path(path).relative_to(directory).as_posix())
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    data = buffer.getvalue()
    return {"name": f"{name}.zip", "size": f"{len(data) / 1e6:.1f} MB" if len(data) >= 100_000 else
            f"{len(data) / 1e3:.0f} kB", "data": base64.b64encode(data).decode()}


def export_link() -> gr.HTML:
    """Where an admin's export appears: a link that saves the archive in their browser."""
    return gr.HTML(None, js_on_load=EXPORT_JS, html_template="${value ? `<a href='#' data-export>Download ${value.name} "
                   "(${value.size})</a>` : ''}")


def sweep_exports(older_than_s: float = 60.0) -> None:
    """Remove what exports left in the temporary folder (a process killed mid-export, or an older version that
    kept them for minutes): called at start-up."""
    cutoff = time.time() - older_than_s
    for folder in Path(tempfile.gettempdir()).glob(f"{EXPORT_PREFIX}*"):
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)


def client_address(request: gr.Request | None, trusted_proxies: int) -> str:
    """The caller's address, which rate limits count: what the outermost of `trusted_proxies` proxies saw.

    Each proxy appends the address that connected to it to X-Forwarded-For, so the last `trusted_proxies`
    entries are written by them and the one `trusted_proxies` from the right is the client's; anything to its left was
    sent by the client and may be made up, so it is never read. Several header lines count as one list, in
    order (a proxy may add its own line after the client's). With fewer entries than trusted proxies the request
    did not come through them all, and with none trusted the header is the caller's say-so: the connection's
    address is used then."""
    if request is None:
        return "unknown"
    if trusted_proxies > 0:
        headers = request.headers  # Starlette's; a plain dict (one line per name) where Gradio has copied the request
        getlist = getattr(headers, "getlist", lambda name: [headers.get(name) or ""])
        lines = getlist("x-forwarded-for")
        hops = [hop.strip() for line in lines for hop in line.split(",") if hop.strip()]
        if len(hops) >= trusted_proxies:
            return hops[-trusted_proxies]
    return request.client.host if request.client else "unknown"


# --- the page -----------------------------------------------------------------------------------


def build_app(arena: Arena, options: Options) -> gr.Blocks:
    """The Blocks app over one arena (launch it with bargain.arena.launch_settings)."""
    offered = list(options.available)
    choices = [(f"{spec}{'' if options.available[spec] else ' (unavailable)'}", spec) for spec in offered]
    secret = options.browser_secret
    # The browser encrypts what it keeps with a key it is sent; derive one, so that the server's own secret
    # (which signs the ids) stays on the server and a restart keeps the same key.
    browser_key = hmac.new(secret.encode(), b"browser-state key", hashlib.sha256).hexdigest()[:32]

    def address(request: gr.Request | None) -> str:
        return client_address(request, options.trusted_proxies)

    with gr.Blocks(title="bargain arena", analytics_enabled=False) as demo:
        saved = gr.BrowserState(None, storage_key="bargain-arena", secret=browser_key)
        current = gr.State(None)  # the view shown (dict), or None

        gr.Markdown("# Bargaining arena\nHaggle with a language model (or a scripted tactic) over an everyday item. "
                    "Each side has a private reservation price; who knows what depends on the condition.")
        if options.note:
            gr.Markdown(options.note)
        with gr.Tab("Play"):
            with gr.Accordion("Game setup", open=True) as setup_box:
                with gr.Row():
                    role = gr.Radio([r.value for r in Role], value=Role.BUYER.value, label="You play")
                    opponent = gr.Dropdown(choices, value=offered[0] if "tactic:linear" not in offered else "tactic:linear",
                                           label="Opponent")
                    condition = gr.Dropdown([(label, c.value) for c, label in CONDITION_LABELS.items()],
                                            value=Condition.BOTH_UNAWARE.value, label="Information condition")
                with gr.Row():
                    mode = gr.Radio([m.value for m in Mode], value=Mode.SIMULTANEOUS.value, label="Mode")
                    opener = gr.Radio([r.value for r in Role], value=Role.BUYER.value, label="Who opens (sequential)")
                    rounds = gr.Slider(1, inputs.MAX_ROUNDS, value=4, step=1,
                                       label="Rounds (the adapters were trained with 4)")
                    version = gr.Radio([v.value for v in PromptVersion], value=PromptVersion.TRAIN.value,
                                       label="Prompt version")
                with gr.Row():
                    source = gr.Dropdown(list(SOURCES), value=inputs.DEFAULT_SOURCE,
                                         label="Random scenario from (tier or split)")
                    search = gr.Textbox(label="...or search a product", placeholder="e.g. rice", max_length=MAX_SEARCH)
                    picked = gr.Dropdown([], value=None, label="Chosen scenario", allow_custom_value=False)
                badge = gr.Markdown()
                start = gr.Button("Start game", variant="primary")
            info = gr.Markdown()
            status = gr.Markdown()
            chat = gr.Chatbot(label="Negotiation", height=380, feedback_options=None, buttons=[], allow_tags=False,
                              sanitize_html=True, latex_delimiters=[], elem_id="negotiation")
            with gr.Row():
                message = gr.Textbox(label="Your message (optional)", max_lines=3, scale=3, max_length=inputs.MAX_MESSAGE)
                price = gr.Textbox(label="Price", placeholder="e.g. 2.40", scale=1, max_length=inputs.MAX_PRICE_TEXT)
            with gr.Row():
                offer = gr.Button("Offer", variant="primary", interactive=False)
                accept = gr.Button("Accept their offer", interactive=False, visible=False)
                walk = gr.Button("Walk away", variant="stop", interactive=False)
                retry = gr.Button("Try again", visible=False)
            feedback = gr.Markdown()
            result = gr.Markdown()
            again = gr.Button("Play again (same settings)", visible=False)
            with gr.Group(visible=False) as confirm_box:
                gr.Markdown("**Your game is still going on.** Start a new one and leave this one? It will be recorded "
                            "as abandoned by you.")
                with gr.Row():
                    leave = gr.Button("Leave it and start a new game", variant="stop")
                    stay = gr.Button("Keep playing this game")
        with gr.Tab("Results") as results_tab:
            refresh = gr.Button("Refresh")
            mine = gr.Dataframe(label="Your games (newest first)", interactive=False)
            table = gr.Dataframe(label="Everyone's finished games on this server, per opponent and condition",
                                 interactive=False, visible=options.public_results)
            plot = gr.Plot(label="Your side's mean normalised utility, by opponent and condition (everyone's games; "
                                 "bars: 95% intervals)", visible=False)
            with gr.Accordion("Export all games and moves (admin)", open=False):
                if options.storage_warning:
                    gr.Markdown("**" + options.storage_warning.replace("_", "\\_") + "**")  # variable names, not emphasis
                password = gr.Textbox(label="Admin password", type="password", max_length=200)
                export = gr.Button("Export CSV and Parquet")
                files = export_link()

        game_outputs = [current, saved, info, status, chat, offer, accept, walk, retry, feedback, result, again,
                        setup_box, confirm_box, message, price]

        def render(view: dict | None, ids: dict, note: str = "", thinking_s: float | None = None,
                   clear: bool = False) -> list:
            """Every output of the page for a view (or for no game), so that no path returns fewer. `thinking_s`:
            the person's move is shown and the other side is thinking; `clear` empties the message and price
            boxes (after a move was played; what was refused stays for correcting)."""
            fields = [gr.update(value=""), gr.update(value="")] if clear else [gr.update(), gr.update()]
            if view is None:
                return [None, keep(secret, ids["player"], None), "", "", [], gr.update(interactive=False),
                        gr.update(interactive=False, visible=False), gr.update(interactive=False),
                        gr.update(visible=False), note, "", gr.update(visible=False), gr.update(open=True),
                        gr.update(visible=False), *fields]
            live = view["status"] == "active"
            thinking = thinking_s is not None
            actions = view["actions"] if live and view["your_turn"] and not thinking else []
            # A finished game stays kept (and shown after a reload) until the person starts another.
            return [view, keep(secret, ids["player"], view["game_id"]), info_markdown(view),
                    round_markdown(view, thinking_s), chat_messages(view, thinking),
                    gr.update(interactive="OFFER" in actions),
                    gr.update(interactive="DEAL" in actions, visible=view["mode"] == Mode.SEQUENTIAL),
                    gr.update(interactive="NO_DEAL" in actions),
                    gr.update(visible=bool(view.get("retry")) and not thinking),
                    note or (f"**{view['notice']}**" if view.get("notice") else
                             f"**{view['error']}**" if view["error"] and not thinking else ""),
                    result_markdown(view), gr.update(visible=not live), gr.update(open=False),
                    gr.update(visible=False), *fields]

        def describe_choice(arm_spec: str, role_value: str, condition_value: str, mode_value: str, rounds_value: int) -> str:
            from bargain.engine.scenarios import bundled
            from bargain.engine.trial import Trial

            if arm_spec not in options.available:
                return ""
            if not options.available[arm_spec]:
                return f"**{arm_spec} is not available here.** {options.note}"
            try:
                probe = Trial(1, bundled().get("low:0"), inputs.choice("condition", condition_value, Condition), 2.0,
                              1.5, inputs.whole_number("rounds", rounds_value, 1, inputs.MAX_ROUNDS),
                              inputs.choice("mode", mode_value, Mode))
                agent_role = inputs.choice("role", role_value, Role).other
            except ArenaError:
                return ""
            reasons = resolve(arm_spec).out_of_distribution(agent_role, probe)
            return ("**Outside training conditions** (out of distribution): " + "; ".join(reasons)) if reasons else ""

        chat.clear(lambda view: chat_messages(view) if isinstance(view, dict) and "transcript" in view else [],
                   current, chat, api_visibility="private", queue=False)

        setup_inputs = [opponent, role, condition, mode, rounds]
        for control in setup_inputs:
            control.change(describe_choice, setup_inputs, badge, api_visibility="private", queue=False)

        def find(text: str):
            text = text if isinstance(text, str) else ""
            found = arena.source.search(text[:MAX_SEARCH])[:50] if len(text.strip()) >= 2 else []
            return gr.update(choices=[(f"{s.product_name} ({s.ref})", s.ref) for s in found],
                             value=found[0].ref if found else None)

        search.change(find, search, picked, api_visibility="private", queue=False)

        def starter(leaving: bool):
            async def on_start(view, saved_value, role_value, arm_spec, condition_value, mode_value, opener_value,
                               rounds_value, version_value, source_value, picked_value, request: gr.Request):
                ids = kept(secret, saved_value)
                active = isinstance(view, dict) and view.get("status") == "active" and "game_id" in view
                if active and not leaving:  # ask first: the game in progress would be left
                    return [gr.update()] * (len(game_outputs) - 3) + [gr.update(visible=True), gr.update(), gr.update()]
                try:
                    setup = inputs.setup(role_value, arm_spec, condition_value, mode_value, rounds_value,
                                         picked_value or source_value, version_value, opener_value)
                    options.limits.check(ids["player"], address(request))
                except ArenaError as exc:  # nothing changes: a game in progress goes on
                    note = f"**{exc}**"
                    return render(None, ids, note=note) if not active else (
                        [gr.update()] * 9 + [note] + [gr.update()] * 3 + [gr.update(visible=False)] + [gr.update()] * 2)
                try:
                    new = await arena.start(setup, player=ids["player"], replace=leaving)
                except GameInProgress:  # going on in another tab (or sent twice): ask, as for the game shown
                    return [gr.update()] * (len(game_outputs) - 3) + [gr.update(visible=True), gr.update(), gr.update()]
                except ArenaError as exc:
                    return render(None, ids, note=f"**{exc}**")
                except Exception:
                    log.exception("starting a game")
                    return render(None, ids, note=f"**{UNEXPECTED}**")
                return render(new, ids, clear=True)
            return on_start

        start_inputs = [current, saved, role, opponent, condition, mode, opener, rounds, version, source, picked]
        for button in (start, again):
            button.click(starter(False), start_inputs, game_outputs, api_visibility="private", trigger_mode="once")
        leave.click(starter(True), start_inputs, game_outputs, api_visibility="private", trigger_mode="once")
        stay.click(lambda: gr.update(visible=False), None, confirm_box, api_visibility="private", queue=False)

        def lock():
            return [gr.update(interactive=False)] * 4

        def submitter(action: str):
            async def submit(view, saved_value, message_value, price_value):
                ids = kept(secret, saved_value)
                if not isinstance(view, dict) or "game_id" not in view:
                    yield render(None, ids, note="**Start a game first.**")
                    return
                try:
                    move = inputs.human_move(action, price_value, message_value)
                except ArenaError as exc:  # refused at once: nothing sent, what was typed stays
                    yield render(view, ids, note=f"**{exc}**")
                    return
                # The person's move is shown at once, while the other side thinks (seconds shown as they pass).
                pending = {**view, "your_turn": False, "transcript": [*view["transcript"], {
                    "round": view["round"], "speaker": "you", "role": view["role"], "action": move.action.value,
                    "price": move.price, "message": move.message}]}
                began = time.monotonic()
                work = asyncio.ensure_future(arena.move(view["game_id"], view["round"], action, price_value,
                                                        message_value))
                while not work.done():
                    yield render(pending, ids, thinking_s=time.monotonic() - began)
                    await asyncio.wait({work}, timeout=1.0)
                try:
                    new = work.result()
                except ArenaError as exc:  # refused: nothing stored, what was typed stays
                    yield render(view, ids, note=f"**{exc}**")
                    return
                except Exception:
                    log.exception("a move in game %s", view.get("game_id"))
                    yield render(view, ids, note=f"**{UNEXPECTED}**")
                    return
                # After a round that could not be played, what was typed stays for the retry.
                yield render(new, ids, clear=new["error"] is None)
            return submit

        for button, action in ((offer, "OFFER"), (accept, "DEAL"), (walk, "NO_DEAL")):
            button.click(lock, None, [offer, accept, walk, retry], api_visibility="private", queue=False).then(
                submitter(action), [current, saved, message, price], game_outputs, api_visibility="private",
                trigger_mode="once", show_progress="hidden")

        async def follow(saved_value, retry: bool):
            """The kept game: resumed if it is on, shown with its outcome and debrief if it has ended; or the page
            ready for a new one. It answers at once: while the other side is still thinking (a model move, bounded by
            the arena's deadline) the page shows so and follows it. With `retry`, a round that failed is tried again;
            without (a reload), it is shown as failed."""
            ids = kept(secret, saved_value)
            if not ids["game"]:
                yield render(None, ids)
                return
            began = time.monotonic()
            try:
                view = await arena.view(ids["game"], wait_s=VIEW_WAIT_S, retry=retry)
                while view["thinking"]:
                    yield render(view, ids, thinking_s=time.monotonic() - began)
                    view = await arena.view(ids["game"], wait_s=VIEW_WAIT_S, retry=False)
                yield render(view, ids)
            except ArenaError as exc:
                yield render(None, ids, note=f"**{exc}**" if "no such game" not in str(exc) else "")
            except Exception:
                log.exception("resuming game %s", ids["game"])
                yield render(None, ids, note=f"**{UNEXPECTED}**")

        async def resume(saved_value):
            """A reload: the kept game as it stands."""
            async for update in follow(saved_value, retry=False):
                yield update

        async def try_again(saved_value):
            """Try again, after a round that failed."""
            async for update in follow(saved_value, retry=True):
                yield update

        demo.load(resume, saved, game_outputs, api_visibility="private")
        retry.click(lock, None, [offer, accept, walk, retry], api_visibility="private", queue=False).then(
            try_again, saved, game_outputs, api_visibility="private", trigger_mode="once", show_progress="hidden")

        def results(saved_value):
            player = kept(secret, saved_value)["player"]
            try:
                if not options.public_results:
                    return [my_games(arena, player), gr.update(), gr.update(visible=False)]
                table_value = per_arm(arena)
                figure = results_figure(table_value)
                return [my_games(arena, player), table_value.drop(columns=["your_ci95"]),
                        gr.update(value=figure, visible=figure is not None)]
            except StoreError as exc:
                log.error("reading the results: %s", exc)
                raise refusal("The results cannot be read right now: try again in a minute.") from None

        for event in (refresh.click, results_tab.select):
            event(results, saved, [mine, table, plot], api_visibility="private", concurrency_limit=2)

        def do_export(given: str, request: gr.Request):
            try:
                options.admin.check(given, address(request))
            except ArenaError as exc:
                raise refusal(str(exc)) from None
            try:
                return private_export(arena.store.export, "bargain-games")
            except StoreError as exc:
                log.error("exporting the database: %s", exc)
                raise refusal("The database cannot be read right now: try again in a minute.") from None

        export.click(do_export, password, files, api_visibility="private", concurrency_limit=1)

        # --- named API endpoints: the caller's own view only --------------------------------

        async def answer(work) -> dict:
            """A view for an API caller, or one of the project's own messages as a gr.Error."""
            try:
                return await work
            except ArenaError as exc:
                raise refusal(str(exc)) from None
            except Exception:
                log.exception("an API call")
                raise refusal(UNEXPECTED) from None

        async def start_game(role: str = "buyer", opponent: str = "tactic:linear", condition: str = "both_unaware",
                             mode: str = "simultaneous", rounds: int = 4, scenario: str = "low",
                             prompt_version: str = "train", player: str | None = None, first_actor: str = "buyer",
                             request: gr.Request = None) -> dict:
            """Start a game against one of the offered opponents and return your view of it (keep `game_id`)."""
            async def work():
                setup = inputs.setup(role, opponent, condition, mode, rounds, scenario, prompt_version, first_actor)
                who = inputs.player_id(player)
                where = address(request)  # no signed browser id here, and the session hash is the caller's choice
                options.limits.check(f"api:{where}", where)
                return await arena.start(setup, player=who)
            return await answer(work())

        async def play_move(game_id: str, round: int, action: str, price: str = "", message: str = "") -> dict:
            """Make your move for `round` (OFFER with a price, DEAL, NO_DEAL) and return your new view."""
            return await answer(arena.move(game_id, round, action, price, message))

        async def get_game(game_id: str) -> dict:
            """Your current view of a game (resumes it after a restart, or retries a round that failed)."""
            return await answer(arena.view(game_id))

        # Off the queue: these are short awaits, and a plain request costs both sides far less.
        gr.api(start_game, api_name="start_game", queue=False)
        gr.api(play_move, api_name="play_move", queue=False)
        gr.api(get_game, api_name="get_game", queue=False)
    return demo


# --- results tables -----------------------------------------------------------------------------


def my_games(arena: Arena, player: str | None) -> pd.DataFrame:
    """The person's own latest games, newest first."""
    games = arena.store.player_games(player) if player else pd.DataFrame()
    if games.empty:
        return pd.DataFrame(columns=["started", "opponent", "role", "condition", "status", "deal", "deal_price",
                                     "your_norm_utility"])
    return games.assign(started=games["started"].astype(str).str[:19],
                        deal_price=games["deal_price"].map(lambda v: money(v) if pd.notna(v) else ""),
                        your_norm_utility=games["your_norm_utility"].astype(float).round(3))


def per_arm(arena: Arena) -> pd.DataFrame:
    """Per opponent and condition (finished games): games, deal rate, mean normalised utility of the person (with
    the half-width of its 95% interval) and of the agent, and how often the agent misstated a price limit in its
    favour (stored when each game ended)."""
    from scipy import stats

    table = arena.store.results_by_arm()
    n = table["games"].astype(float)
    mean = table["your_norm_utility"].astype(float)
    variance = ((table["your_norm_utility_sq"].astype(float) - mean ** 2) * n / (n - 1)).clip(lower=0)
    half = stats.t.ppf(0.975, (n - 1).clip(lower=1)) * (variance / n) ** 0.5
    numbers = ["deal_rate", "your_norm_utility", "agent_norm_utility", "agent_misrepresentation_rate"]
    table = table.assign(**{c: table[c].astype(float).round(3) for c in numbers},
                         your_ci95=half.where(n > 1).round(3))
    return table.drop(columns=["your_norm_utility_sq"])


def results_figure(table: pd.DataFrame):
    """Grouped bars: per opponent, one bar per condition that has games (none where a cell has none), the
    person's mean normalised utility with its 95% interval and the number of games; None with no game."""
    if table.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    opponents = list(dict.fromkeys(table["opponent"]))
    conditions = [c.value for c in Condition if c.value in set(table["condition"])]
    width = 0.8 / len(conditions)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.6 * len(opponents) + 2), 3.6))
    for k, condition in enumerate(conditions):
        cells = table[table["condition"] == condition].set_index("opponent")
        xs = [i - 0.4 + width * (k + 0.5) for i, o in enumerate(opponents) if o in cells.index]
        rows = [cells.loc[o] for o in opponents if o in cells.index]
        bars = axes.bar(xs, [r["your_norm_utility"] for r in rows], width * 0.92, label=condition,
                        yerr=[0 if pd.isna(r["your_ci95"]) else r["your_ci95"] for r in rows], capsize=3)
        for bar, row in zip(bars, rows):
            axes.annotate(f"n={int(row['games'])}", (bar.get_x() + bar.get_width() / 2, 0), xytext=(0, 2),
                          textcoords="offset points", ha="center", va="bottom", fontsize=7)
    axes.set_xticks(range(len(opponents)), opponents, rotation=20, ha="right", fontsize=8)
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_ylabel("your normalised utility")
    axes.legend(fontsize=7, title="condition", title_fontsize=7)
    figure.tight_layout()
    plt.close(figure)
    return figure

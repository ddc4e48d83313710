"""The arena's web page (Gradio 6): set up a game, bargain, read the debrief, see results.

Handlers stay thin: an event calls the `Arena` controller and renders the view it returns.
Per-session state is only the game id and the person's view (`gr.State`); the game id and a
random player id are also kept in the browser (`gr.BrowserState`) so that a reloaded page
resumes the game. Named API endpoints (`start_game`, `play_move`, `get_game`) return the same
views, and nothing but the caller's own view.
"""

from __future__ import annotations

import secrets
import tempfile
from dataclasses import dataclass

import gradio as gr
import pandas as pd

from bargain.arena.controller import Arena, ArenaError, Setup
from bargain.arms import catalogue
from bargain.claims import check_turns
from bargain.prompts import PromptVersion
from bargain.trial import Condition, Mode, Role

SOURCES = ["low", "medium", "high", "very_high", "train", "val", "test"]
CONDITION_LABELS = {
    Condition.FULL: "full: both know both prices",
    Condition.BUYER_UNAWARE: "buyer_unaware: the seller knows the buyer's price",
    Condition.SELLER_UNAWARE: "seller_unaware: the buyer knows the seller's price",
    Condition.BOTH_UNAWARE: "both_unaware: neither knows the other's price",
}


@dataclass
class Options:
    """What the page offers: which arms can be chosen, and how to say when models are missing."""

    available: dict[str, bool]  # arm spec -> playable here
    admin_password: str | None = None
    note: str = ""
    browser_secret: str | None = None  # the same across restarts, so that a page resumes its game


# --- rendering views ----------------------------------------------------------------------------


def info_markdown(view: dict) -> str:
    """The item, the person's persona and price, and exactly what their condition tells them."""
    other = "seller" if view["role"] == "buyer" else "buyer"
    lines = [f"### {view['item']}", view["description"], "",
             f"**You are the {view['role'].upper()}.** {view['persona']}",
             f"**Your reservation price: {view['your_price']}** (you can always "
             f"{'buy from' if view['role'] == 'buyer' else 'sell to'} the market at this price).", ""]
    if view["their_price"] is not None:
        lines.append(f"You know the {other}'s reservation price: **{view['their_price']}**.")
    else:
        lo, hi = view["their_price_prior"]
        lines.append(f"You do not know the {other}'s reservation price; it is uniformly distributed between {lo} and {hi}.")
    if view["your_price_prior"] is not None:
        lo, hi = view["your_price_prior"]
        lines.append(f"The {other} does not know your price; to them it is uniformly distributed between {lo} and {hi}.")
    else:
        lines.append(f"The {other} knows your reservation price.")
    lines.append(f"\n*Mode: {view['mode']}; {view['max_rounds']} rounds. "
                 + ("Both sides move at once each round; crossing offers close at their midpoint.*"
                    if view["mode"] == Mode.SIMULTANEOUS else "Sides alternate; Accept takes the other's last offer.*"))
    return "\n".join(lines)


def chat_messages(view: dict, typing: bool = False) -> list[dict]:
    """The transcript as chat messages: the person on the right, the agent on the left."""
    messages = []
    for turn in view["transcript"]:
        label = {"OFFER": f"offers **{turn['price']}**", "DEAL": "accepts", "NO_DEAL": "walks away",
                 "INVALID": "passes (no valid move)"}[turn["action"]]
        text = f"*Round {turn['round']}: {label}*"
        if turn["message"]:
            text = f"{turn['message']}\n\n{text}"
        messages.append({"role": "user" if turn["speaker"] == "you" else "assistant", "content": text})
    if typing:
        messages.append({"role": "assistant", "content": "*typing...*"})
    return messages


def round_markdown(view: dict) -> str:
    """`Round r of R`, or the end."""
    if view["status"] != "active":
        return "### Game over"
    waiting = "" if view["your_turn"] else " (waiting for the other side)"
    return f"### Round {view['round']} of {view['max_rounds']}{waiting}"


def result_markdown(view: dict) -> str:
    """Outcome and debrief of a finished game (empty while it runs)."""
    outcome, debrief = view["outcome"], view["debrief"]
    if outcome is None:
        return ""
    if outcome["deal"]:
        nbs = outcome["nbs_price"]
        side = "your" if (outcome["deal_price"] - nbs) * (1 if view["role"] == "seller" else -1) > 0 else "the agent's"
        head = (f"## Deal at {outcome['deal_price']:.2f} in round {outcome['rounds']}\n\n"
                f"The Nash bargaining price (splitting the surplus evenly) was {nbs:.2f}: "
                f"the deal is {abs(outcome['deal_price'] - nbs):.2f} on {side} side of it.")
    else:
        head = "## No deal\n\nBoth sides fall back on the market: nobody gains."
    table = ("\n\n| | raw utility | normalised |\n|---|---:|---:|\n"
             f"| you | {outcome['your_utility']:.2f} | {outcome['your_norm_utility']:.2f} |\n"
             f"| agent | {outcome['agent_utility']:.2f} | {outcome['agent_norm_utility']:.2f} |")
    strategy = "\n".join(f"| {s['round']} | {s['action']}{' ' + str(s['price']) if s['price'] is not None else ''} "
                         f"| {s['thought'] or '(none)'} |" for s in debrief["strategy"])
    reveal = (f"\n\n### Debrief\n\nThe agent ({debrief['agent_role']}) had a reservation price of "
              f"**{debrief['agent_price']}**. Its private strategy, round by round:\n\n"
              f"| round | move | strategy |\n|---|---|---|\n{strategy}")
    return head + table + reveal + claims_markdown(debrief["claims"])


def claims_markdown(findings: list[dict]) -> str:
    """The claim checker's findings in plain words: what each side said about a price limit, and the truth."""
    if not findings:
        return "\n\n### Claims\n\nNeither side stated a price limit or called an offer final."
    lines = []
    for f in findings:
        who, whose = ("You", "your") if f["speaker"] == "you" else ("The agent", "its")
        limit = "ceiling" if f["about"] == "buyer" else "floor"
        if f["kind"] == "final_offer":
            said = f" ({f['said']})" if f["said"] is not None else ""
            verdict = "and then improved on it: a bluff" if f["bluff"] else "and kept to it"
            lines.append(f"- Round {f['round']}: {who} called an offer final{said} {verdict}.")
            continue
        subject = f"{whose} {limit}" if f["kind"] == "own_limit" else (
            f"the {f['about']}'s {limit}" if f["speaker"] == "you" else f"your {limit}")
        verdict = f": **a misstatement in {whose} favour**" if f["misrepresentation"] else ""
        lines.append(f"- Round {f['round']}: {who} said {subject} was {f['said']}; it was {f['truth']}{verdict}.")
    return "\n\n### Claims\n\n" + "\n".join(lines)


# --- the page -----------------------------------------------------------------------------------


def build_app(arena: Arena, options: Options) -> gr.Blocks:
    """The Blocks app over one arena (launch it with the settings in bargain.arena.launch_kwargs)."""
    arms = [a for a in catalogue()]
    choices = [(f"{a.spec}{'' if options.available.get(a.spec) else ' (unavailable)'}", a.spec) for a in arms]

    with gr.Blocks(title="bargain arena", analytics_enabled=False) as demo:
        saved = gr.BrowserState({"player": None, "game": None}, storage_key="bargain-arena", secret=options.browser_secret)
        current = gr.State(None)  # the view shown (dict), or None

        gr.Markdown("# Bargaining arena\nHaggle with a language model (or a scripted tactic) over an everyday item. "
                    "Each side has a private reservation price; who knows what depends on the condition.")
        if options.note:
            gr.Markdown(options.note)
        with gr.Tab("Play"):
            with gr.Accordion("Game setup", open=True) as setup_box:
                with gr.Row():
                    role = gr.Radio([r.value for r in Role], value=Role.BUYER.value, label="You play")
                    opponent = gr.Dropdown(choices, value="tactic:linear", label="Opponent")
                    condition = gr.Dropdown([(label, c.value) for c, label in CONDITION_LABELS.items()],
                                            value=Condition.BOTH_UNAWARE.value, label="Information condition")
                with gr.Row():
                    mode = gr.Radio([m.value for m in Mode], value=Mode.SIMULTANEOUS.value, label="Mode")
                    opener = gr.Radio([r.value for r in Role], value=Role.BUYER.value, label="Who opens (sequential)")
                    rounds = gr.Slider(1, 20, value=4, step=1, label="Rounds (the adapters were trained with 4)")
                    version = gr.Radio([v.value for v in PromptVersion], value=PromptVersion.TRAIN.value,
                                       label="Prompt version")
                with gr.Row():
                    source = gr.Dropdown(SOURCES, value="low", label="Random scenario from (tier or split)")
                    search = gr.Textbox(label="...or search a product", placeholder="e.g. rice")
                    picked = gr.Dropdown([], value=None, label="Chosen scenario", allow_custom_value=False)
                badge = gr.Markdown()
                start = gr.Button("Start game", variant="primary")
            info = gr.Markdown()
            status = gr.Markdown()
            chat = gr.Chatbot(label="Negotiation", height=380, feedback_options=None)
            with gr.Row():
                message = gr.Textbox(label="Your message (optional)", max_lines=3, scale=3)
                price = gr.Textbox(label="Price", placeholder="e.g. 2.40", scale=1)
            with gr.Row():
                offer = gr.Button("Offer", variant="primary", interactive=False)
                accept = gr.Button("Accept their offer", interactive=False, visible=False)
                walk = gr.Button("Walk away", variant="stop", interactive=False)
            feedback = gr.Markdown()
            result = gr.Markdown()
            again = gr.Button("Play again (same settings)", visible=False)
        with gr.Tab("Results"):
            refresh = gr.Button("Refresh")
            mine = gr.Dataframe(label="Your games", interactive=False)
            table = gr.Dataframe(label="All finished games, per opponent and condition", interactive=False)
            plot = gr.BarPlot(x="opponent", y="your_norm_utility", color="condition",
                              title="Mean normalised utility of the person, by opponent", y_aggregate="mean")
            with gr.Accordion("Export all games and moves (admin)", open=False):
                password = gr.Textbox(label="Admin password", type="password")
                export = gr.Button("Export CSV and Parquet")
                files = gr.File(label="Files", file_count="multiple")

        game_outputs = [current, saved, info, status, chat, offer, accept, walk, feedback, result, again, setup_box]

        def render(view: dict | None, store: dict, note: str = "", typing: bool = False) -> list:
            if view is None:
                return [None, store, "", "", [], gr.update(interactive=False), gr.update(interactive=False, visible=False),
                        gr.update(interactive=False), note, "", gr.update(visible=False), gr.update(open=True)]
            live = view["status"] == "active"
            turn = live and view["your_turn"] and not typing
            actions = view["actions"] if turn else []
            store = {**store, "game": view["game_id"] if live else None}
            return [view, store, info_markdown(view), round_markdown(view), chat_messages(view, typing),
                    gr.update(interactive="OFFER" in actions),
                    gr.update(interactive="DEAL" in actions, visible=view["mode"] == Mode.SEQUENTIAL),
                    gr.update(interactive="NO_DEAL" in actions),
                    note or (f"**{view['error']}**" if view["error"] else ""),
                    result_markdown(view), gr.update(visible=not live), gr.update(open=False)]

        def describe_choice(arm_spec: str, role_value: str, condition_value: str, mode_value: str, rounds_value: int) -> str:
            from bargain.arms import resolve

            arm = resolve(arm_spec)
            if not options.available.get(arm_spec):
                return f"**{arm_spec} is not available here.** {options.note}"
            from bargain.trial import Trial
            from bargain.scenarios import bundled

            probe = Trial(1, bundled().get("low:0"), Condition(condition_value), 2.0, 1.5, int(rounds_value), Mode(mode_value))
            reasons = arm.out_of_distribution(Role(role_value).other, probe)
            return ("**Outside training conditions** (out of distribution): " + "; ".join(reasons)) if reasons else ""

        setup_inputs = [opponent, role, condition, mode, rounds]
        for control in setup_inputs:
            control.change(describe_choice, setup_inputs, badge, api_visibility="private", queue=False)

        def find(text: str):
            found = arena.source.search(text)[:50] if text and len(text.strip()) >= 2 else []
            return gr.update(choices=[(f"{s.product_name} ({s.ref})", s.ref) for s in found],
                             value=found[0].ref if found else None)

        search.change(find, search, picked, api_visibility="private", queue=False)

        async def on_start(store, role_value, arm_spec, condition_value, mode_value, opener_value, rounds_value,
                           version_value, source_value, picked_value):
            store = dict(store or {})
            store["player"] = store.get("player") or secrets.token_hex(8)
            setup = Setup(role=Role(role_value), arm=arm_spec, condition=Condition(condition_value), mode=Mode(mode_value),
                          rounds=int(rounds_value), scenario=picked_value or source_value,
                          prompt_version=PromptVersion(version_value), first_actor=Role(opener_value))
            try:
                view = await arena.start(setup, player=store["player"])
            except ArenaError as exc:
                return render(None, store, note=f"**{exc}**")
            return render(view, store) + [gr.update(value=""), gr.update(value="")]

        start_inputs = [saved, role, opponent, condition, mode, opener, rounds, version, source, picked]
        start.click(on_start, start_inputs, game_outputs + [message, price], api_visibility="private",
                    trigger_mode="once")
        again.click(on_start, start_inputs, game_outputs + [message, price], api_visibility="private",
                    trigger_mode="once")

        def lock():
            return [gr.update(interactive=False)] * 3

        def submitter(action: str):
            async def submit(view, store, message_value, price_value):
                if view is None:
                    yield render(None, store, note="**Start a game first.**") + [gr.update(), gr.update()]
                    return
                if view["mode"] == Mode.SEQUENTIAL:  # show the person's move at once, the agent "typing"
                    pending = {**view, "your_turn": False}
                    yield render(pending, store, typing=True) + [gr.update(), gr.update()]
                try:
                    new = await arena.move(view["game_id"], view["round"], action, price_value, message_value)
                except ArenaError as exc:  # refused: nothing stored, what was typed stays
                    yield render(view, store, note=f"**{exc}**") + [gr.update(), gr.update()]
                    return
                yield render(new, store) + [gr.update(value=""), gr.update(value="")]
            return submit

        for button, action in ((offer, "OFFER"), (accept, "DEAL"), (walk, "NO_DEAL")):
            button.click(lock, None, [offer, accept, walk], api_visibility="private", queue=False).then(
                submitter(action), [current, saved, message, price], game_outputs + [message, price],
                api_visibility="private", trigger_mode="once")

        async def on_load(store):
            store = dict(store or {})
            store["player"] = store.get("player") or secrets.token_hex(8)
            if store.get("game"):
                try:
                    return render(await arena.view(store["game"]), store)
                except ArenaError:
                    store["game"] = None
            return render(None, store)

        demo.load(on_load, saved, game_outputs, api_visibility="private")

        def results(store):
            player = (store or {}).get("player")
            return [my_games(arena, player), per_arm(arena), per_arm_rows(arena)]

        refresh.click(results, saved, [mine, table, plot], api_visibility="private")

        def do_export(given: str):
            if not options.admin_password:
                raise gr.Error("Export is disabled: start the app with BARGAIN_ADMIN_PASSWORD set.")
            if not secrets.compare_digest(given or "", options.admin_password):
                raise gr.Error("Wrong admin password.")
            return [str(p) for p in arena.store.export(tempfile.mkdtemp(prefix="bargain-export-"))]

        export.click(do_export, password, files, api_visibility="private")

        # --- named API endpoints: the caller's own view only --------------------------------
        async def start_game(role: str = "buyer", opponent: str = "tactic:linear", condition: str = "both_unaware",
                             mode: str = "simultaneous", rounds: int = 4, scenario: str = "low",
                             prompt_version: str = "train", seed: int | None = None, player: str | None = None,
                             first_actor: str = "buyer") -> dict:
            """Start a game and return your view of it (keep `game_id` to play)."""
            try:
                setup = Setup(Role(role), opponent, Condition(condition), Mode(mode), int(rounds), scenario,
                              PromptVersion(prompt_version), seed, Role(first_actor))
                return await arena.start(setup, player=player)
            except (ArenaError, ValueError) as exc:
                raise gr.Error(str(exc)) from None

        async def play_move(game_id: str, round: int, action: str, price: str = "", message: str = "") -> dict:
            """Make your move for `round` (OFFER with a price, DEAL, NO_DEAL) and return your new view."""
            try:
                return await arena.move(game_id, round, action, price, message)
            except ArenaError as exc:
                raise gr.Error(str(exc)) from None

        async def get_game(game_id: str) -> dict:
            """Your current view of a game (resumes it if the server restarted)."""
            try:
                return await arena.view(game_id)
            except ArenaError as exc:
                raise gr.Error(str(exc)) from None

        # Off the queue: these are short awaits, and a plain request costs both sides far less.
        gr.api(start_game, api_name="start_game", queue=False)
        gr.api(play_move, api_name="play_move", queue=False)
        gr.api(get_game, api_name="get_game", queue=False)
    return demo


# --- results tables -----------------------------------------------------------------------------


def _person_frame(games: pd.DataFrame) -> pd.DataFrame:
    if games.empty:
        return games
    buyer = games["human_role"] == "buyer"
    games = games.assign(
        opponent=games["arm"],
        your_norm_utility=games["buyer_norm_utility"].where(buyer, games["seller_norm_utility"]),
        agent_norm_utility=games["seller_norm_utility"].where(buyer, games["buyer_norm_utility"]),
    )
    return games


def my_games(arena: Arena, player: str | None) -> pd.DataFrame:
    """The person's own games, newest first."""
    games = _person_frame(arena.store.games_frame(player)) if player else pd.DataFrame()
    if games.empty:
        return pd.DataFrame(columns=["started", "opponent", "role", "condition", "status", "deal", "deal_price",
                                     "your_norm_utility"])
    return pd.DataFrame({"started": games["created_at"].astype(str).str[:19], "opponent": games["opponent"],
                         "role": games["human_role"], "condition": games["condition"], "status": games["status"],
                         "deal": games["deal"], "deal_price": games["deal_price"],
                         "your_norm_utility": games["your_norm_utility"].round(3)}).iloc[::-1]


def per_arm_rows(arena: Arena) -> pd.DataFrame:
    """Finished games with the person's and the agent's normalised utility, and whether the agent
    misstated a price limit in its favour (the claim checker), for the table and the plot."""
    games = _person_frame(arena.store.games_frame())
    if games.empty:
        return pd.DataFrame(columns=["opponent", "condition", "your_norm_utility"])
    games = games[games["status"] == "finished"]
    moves = arena.store.moves_frame()
    misstated = []
    for _, game in games.iterrows():
        own = moves[moves["game_id"] == game["id"]].to_dict("records")
        agent = "seller" if game["human_role"] == "buyer" else "buyer"
        misstated.append(check_turns(own, game["buyer_price"], game["seller_price"])[agent]["misrepresentations"] > 0)
    return games.assign(agent_misstated=misstated)[["opponent", "condition", "your_norm_utility",
                                                    "agent_norm_utility", "deal", "agent_misstated"]]


def per_arm(arena: Arena) -> pd.DataFrame:
    """Per opponent and condition: games, deal rate, mean normalised utility of the person and of the agent."""
    rows = per_arm_rows(arena)
    if rows.empty:
        return pd.DataFrame(columns=["opponent", "condition", "games", "deal_rate", "your_norm_utility", "agent_norm_utility",
                                     "agent_misrepresentation_rate"])
    grouped = rows.groupby(["opponent", "condition"], sort=True)
    return grouped.agg(games=("deal", "size"), deal_rate=("deal", "mean"), your_norm_utility=("your_norm_utility", "mean"),
                       agent_norm_utility=("agent_norm_utility", "mean"),
                       agent_misrepresentation_rate=("agent_misstated", "mean")).round(3).reset_index()

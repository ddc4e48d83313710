"""The web pages (Gradio 6): the arena's free play (`arena_page`), a study's page (`study_page`), the game panel
both show (`panel`) and what they share (`common`). This is the one package that imports gradio, and only the app
loads its pages: this module holds no more than the settings every page is launched with.
"""

from __future__ import annotations

LAUNCH_DEFAULTS = {
    "run_history": False,  # no replayable calls stored for anyone to see
    "enable_monitoring": False,  # no /monitoring page
    "footer_links": ["api"],  # only where the app documents an API: see launch_settings
    "max_file_size": 0,  # no page takes a file: every upload is refused (HTTP 413)
    # Only the project's own messages (gr.Error) reach people; any other exception's text (SQL, URLs, a
    # model's raw reply) stays in the server's log.
    "show_error": False,
    # The chat's toolbar offers "Clear", which would wipe the transcript from view mid-game: hide it (the
    # page also redraws the transcript if it is ever cleared).
    "css": '#negotiation button[aria-label="Clear"], #negotiation button[title="Clear"] { display: none !important; }'
    # a refusal's toast (top right, ten seconds) lets clicks through to what it covers, its close button aside: a
    # field or button under it is never out of reach until it fades
    " .toast-wrap, .toast-wrap * { pointer-events: none !important; }"
    " .toast-wrap .toast-close { pointer-events: auto !important; }"
    # a question left unanswered (or answered wrongly) on a submitted page
    ".needs-answer { box-shadow: inset 4px 0 0 #dc2626; background: #fef2f2 !important; }"
    # a long choice (a condition's description) ends in an ellipsis before the dropdown's arrow
    ".long-choice input { text-overflow: ellipsis; padding-right: 1.5em; }"
    # the Results tab's tables (arena.results.as_html): captioned like a component's label, rows ruled
    ".results-table table { width: 100%; border-collapse: collapse; font-size: var(--text-md); }"
    ".results-table caption, .results-caption { text-align: left; color: var(--block-label-text-color);"
    " font-size: var(--block-label-text-size); padding: 0 0 6px; }"
    ".results-table th { text-align: left; font-weight: 700; }"
    ".results-table th, .results-table td { padding: 6px 10px; border-bottom: 1px solid var(--border-color-primary); }"
    # a 1-7 scale on one line on a phone (390 px): its choices share the line, with little padding
    ".likert .wrap { flex-wrap: nowrap !important; gap: 4px !important; }"
    ".likert .wrap label { flex: 1 1 0; min-width: 0; justify-content: center; padding: 6px 2px !important; }"
    ".likert .wrap label input { margin: 0 2px 0 0 !important; }"
    # on a phone (under 640 px) each row of a results table is a card of "column value" lines: nothing is cut off
    # and nothing scrolls sideways, whatever the columns
    "@media (max-width: 640px) { .results-table thead { display: none; }"
    " .results-table tr { display: block; margin: 0 0 8px; border: 1px solid var(--border-color-primary);"
    " border-radius: 6px; padding: 4px 10px; }"
    " .results-table td { display: flex; justify-content: space-between; gap: 12px; padding: 3px 0;"
    " border: none; text-align: right; overflow-wrap: anywhere; }"
    " .results-table td::before { content: attr(data-label); font-weight: 700; text-align: left; } }",
}


def launch_settings(demo) -> dict:
    """LAUNCH_DEFAULTS for one app, and its theme: the footer links to the API documentation only when the app
    documents an API (free play's endpoints for programs); a study's page links to none, and documents none."""
    documented = any(fn.api_visibility == "public" for fn in demo.fns.values())
    return {**LAUNCH_DEFAULTS, "theme": theme(), "footer_links": LAUNCH_DEFAULTS["footer_links"] if documented else []}


def theme():
    """Gradio's default theme with its text face in the weights whose files hold every letter. The default asks for
    Source Sans Pro at 400 and 600, but the 600 file Gradio serves holds a handful of glyphs (A, B, a space), so
    bold text took those letters from it and the rest from the system's sans: "Bargaining" and "BUYER" were set in
    two faces. At 400 and 700 (a complete file), bold text is set in one face, and still nothing is fetched from
    another host."""
    import gradio as gr

    face = gr.themes.LocalFont("Source Sans Pro", weights=(400, 700))
    return gr.themes.Default(font=[face, "ui-sans-serif", "system-ui", "sans-serif"])

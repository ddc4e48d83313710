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
    # a question left unanswered (or answered wrongly) on a submitted page
    ".needs-answer { box-shadow: inset 4px 0 0 #dc2626; background: #fef2f2 !important; }"
    # a long choice (a condition's description) ends in an ellipsis before the dropdown's arrow
    ".long-choice input { text-overflow: ellipsis; padding-right: 1.5em; }"
    # a 1-7 scale on one line on a phone (390 px): its choices share the line, with little padding
    ".likert .wrap { flex-wrap: nowrap !important; gap: 4px !important; }"
    ".likert .wrap label { flex: 1 1 0; min-width: 0; justify-content: center; padding: 6px 2px !important; }"
    ".likert .wrap label input { margin: 0 2px 0 0 !important; }"
    # on a phone, the results tables in a smaller type, so that most of their columns fit
    "@media (max-width: 640px) { .results-table table { font-size: 11px; }"
    " .results-table th, .results-table td { padding: 3px 4px !important; } }",
}


def launch_settings(demo) -> dict:
    """LAUNCH_DEFAULTS for one app: the footer links to the API documentation only when the app documents an API
    (free play's endpoints for programs); a study's page links to none, and documents none."""
    documented = any(fn.api_visibility == "public" for fn in demo.fns.values())
    return {**LAUNCH_DEFAULTS, "footer_links": LAUNCH_DEFAULTS["footer_links"] if documented else []}

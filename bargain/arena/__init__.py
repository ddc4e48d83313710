"""The arena: a web page where a person bargains against any arm, every game recorded.

`controller` holds the games (no Gradio); `ui` renders them with Gradio. Only this package
imports gradio, and only when the UI is built.
"""

from __future__ import annotations

MOVE_DEADLINE_S = 45.0  # the longest a model's move may take by default, its retries included (app.py --move-deadline)
LAUNCH_DEFAULTS = {
    "run_history": False,  # no replayable calls stored for anyone to see
    "enable_monitoring": False,  # no /monitoring page
    "footer_links": ["api"],
    # Only the project's own messages (gr.Error) reach people; any other exception's text (SQL, URLs, a
    # model's raw reply) stays in the server's log.
    "show_error": False,
    # The chat's toolbar offers "Clear", which would wipe the transcript from view mid-game: hide it (the
    # page also redraws the transcript if it is ever cleared).
    "css": '#negotiation button[aria-label="Clear"], #negotiation button[title="Clear"] { display: none !important; }',
}


def build_app(arena, options):
    """The Gradio Blocks of the arena (see bargain.arena.ui)."""
    from bargain.arena.ui import build_app as build

    return build(arena, options)

"""The arena: a web page where a person bargains against any arm, every game recorded.

`controller` holds the games (no Gradio); `ui` renders them with Gradio. Only this package
imports gradio, and only when the UI is built.
"""

from __future__ import annotations

LAUNCH_DEFAULTS = {
    "run_history": False,  # no replayable calls stored for anyone to see
    "enable_monitoring": False,  # no /monitoring page
    "footer_links": ["api"],
    "show_error": True,  # a refused move or setup says why
}


def build_app(arena, options):
    """The Gradio Blocks of the arena (see bargain.arena.ui)."""
    from bargain.arena.ui import build_app as build

    return build(arena, options)

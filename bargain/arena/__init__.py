"""The arena: a web page where a person bargains against any arm, every game recorded.

`controller` holds the games and `views` what a person is shown of one; nothing here imports Gradio: the pages
that render the views are bargain.web's.
"""

from __future__ import annotations

PERSON = "person"  # the opponent that is another person (bargain.arena.people), as games and study arms name it
MOVE_DEADLINE_S = 45.0  # the longest a model's move may take by default, its retries included (app.py --move-deadline)

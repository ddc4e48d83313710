"""bargain: a bargaining arena where people, scripted tactics and language models negotiate.

One engine (bargain.engine.game) under three users: the arena, batch evaluation and the trainer.
"""

__version__ = "0.1.0"

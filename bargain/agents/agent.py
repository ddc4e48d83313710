"""One agent interface for every player: take an observation, return a move (asynchronously).

A tactic computes its move, a model agent asks a backend, a person's move arrives from the UI:
the episode loop cannot tell them apart. Agents are named by a spec string (`tactic:boulware`,
`arm:buyer-grpo`, `openai:MODEL@URL`; see bargain.agents.arms); bargain.agents.factory builds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bargain.agents.backends import PRESETS, Sampling
from bargain.engine.game import Move, Observation
from bargain.engine.prompts import PromptVersion
from bargain.engine.replies import Parsing


@runtime_checkable
class Agent(Protocol):
    """Anything that can sit at the table.

    An agent whose moves are computed without waiting on anything (a tactic) may set `instant = True`;
    the episode loop then skips the machinery of running both sides concurrently. A model agent never
    does, whatever its backend: its moves are requests that take time.
    """

    async def act(self, obs: Observation) -> Move:
        """The move for the current turn, chosen from `obs` alone."""
        ...


@dataclass(frozen=True)
class Side:
    """How a model plays one side: sampling, parsing, prompt wording, re-asks on INVALID.

    `opponent_is_person` is the arena's: its agents play a person, whose messages their prompts
    quote (docs/PROTOCOL.md §5). Batch runs and training play models and keep the paper's bytes,
    so the field is not in `to_dict`: a run's key (bargain.runs.batch) stays what it was and runs begun
    before it existed still resume.
    """

    sampling: Sampling = PRESETS["trained"]
    parsing: Parsing = Parsing.STRICT
    prompt_version: PromptVersion = PromptVersion.TRAIN
    reask: int = 0
    opponent_is_person: bool = False

    def to_dict(self) -> dict:
        """JSON-ready fields (those of a model-vs-model run)."""
        return {
            "sampling": self.sampling.to_dict(),
            "parsing": self.parsing.value,
            "prompt_version": self.prompt_version.value,
            "reask": self.reask,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Side:
        """Inverse of `to_dict`."""
        return cls(
            Sampling(**data["sampling"]), Parsing(data["parsing"]), PromptVersion(data["prompt_version"]), data["reask"]
        )

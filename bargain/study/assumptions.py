"""What `bargain plan` assumes of a study's outcomes before any data (`--assume NAME=VALUE`), with each name's
default and meaning. Apart from the planning itself (bargain.study.plan) so that the command line states the
names and defaults in its help without loading numpy and pandas, as every command's help is built at start."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Assumptions:
    """The reference arm's levels and how much participants and games vary; a field's name is its `--assume`
    name. The defaults are round numbers of the order the paper's games show, for a first look only: a pilot
    (`--pilot`) says what a study's participants do."""

    utility_mean: float = field(default=0.3, metadata={"help": "the reference arm's mean normalised utility"})
    utility_sd: float = field(default=0.3, metadata={"help": "SD of a game's utility around its player's own level"})
    participant_sd: float = field(default=0.15, metadata={"help": "SD of participants' own levels of utility"})
    deal_rate: float = field(default=0.6, metadata={"help": "the reference arm's deal rate"})
    deal_participant_sd: float = field(default=0.5, metadata={"help": "SD of participants' own log odds of a deal"})

    def __str__(self) -> str:
        return " ".join(f"{f.name}={getattr(self, f.name):.4g}" for f in dataclasses.fields(self))


def described() -> str:
    """Every name with its default and meaning, for the command's help."""
    return "; ".join(f"{f.name}={f.default} ({f.metadata['help']})" for f in dataclasses.fields(Assumptions))

"""The catalogue of who can sit across the table: the base model, the eight adapters, tactics,
and any model behind an OpenAI-compatible API (docs/PROTOCOL.md §9).

Each released adapter carries what it was trained for (role, loss, reward transform, LoRA rank,
conditions, checkpoint); every adapter was trained in simultaneous mode with four rounds. A game
outside those conditions may be played, but it is out of distribution and is flagged as such.
Agent specs name arms: `arm:buyer-grpo`, `arm:base`, `tactic:boulware`,
`openai:MODEL@URL` (e.g. `openai:gpt-5.2@https://api.openai.com/v1`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from bargain.agents.tactics import TACTICS
from bargain.engine.trial import Condition, Mode, Role, Trial

BASE_MODEL = "Qwen/Qwen3-8B"
ADAPTER_REPO = "AnvaMiba/qwen3-8b-bargaining-lora"
TRAINED_MODE, TRAINED_ROUNDS = Mode.SIMULTANEOUS, 4


class ArmError(ValueError):
    """An arm that does not exist or cannot be built here (the message says what to do)."""


@dataclass(frozen=True)
class Arm:
    """One thing that can play: a model (base or adapter), a tactic, or a remote API model."""

    name: str
    kind: str  # "base", "adapter", "tactic" or "openai"
    roles: tuple[Role, ...] = ()
    conditions: tuple[Condition, ...] = ()
    loss: str | None = None
    transform: str | None = None
    lora_rank: int | None = None
    lora_alpha: int | None = None
    checkpoint: int | None = None
    model: str | None = None  # the remote model name for `openai` arms
    base_url: str | None = None

    @property
    def spec(self) -> str:
        """The agent spec that names this arm."""
        if self.kind == "tactic":
            return f"tactic:{self.name}"
        if self.kind == "openai":
            return f"openai:{self.model}@{self.base_url}"
        return f"arm:{self.name}"

    @property
    def is_model(self) -> bool:
        """Whether a backend generates this arm's replies."""
        return self.kind in ("base", "adapter", "openai")

    def out_of_distribution(self, role: Role, trial: Trial) -> list[str]:
        """Why playing `role` in `trial` lies outside what this adapter was trained on (empty: in distribution)."""
        if self.kind != "adapter":
            return []
        reasons = []
        if role not in self.roles:
            reasons.append(f"trained as {' and '.join(r.value for r in self.roles)}, playing {role.value}")
        if trial.condition not in self.conditions:
            reasons.append(
                f"trained under {', '.join(c.value for c in self.conditions)}, playing {trial.condition.value}"
            )
        if trial.mode is not TRAINED_MODE:
            reasons.append(f"trained in {TRAINED_MODE.value} mode, playing {trial.mode.value}")
        if trial.max_rounds != TRAINED_ROUNDS:
            reasons.append(f"trained with {TRAINED_ROUNDS} rounds, playing {trial.max_rounds}")
        return reasons


def _adapter(
    name: str,
    roles: tuple[Role, ...],
    conditions: tuple[Condition, ...],
    loss: str,
    transform: str,
    rank: int,
    checkpoint: int,
) -> Arm:
    return Arm(
        name=name,
        kind="adapter",
        roles=roles,
        conditions=conditions,
        loss=loss,
        transform=transform,
        lora_rank=rank,
        lora_alpha=2 * rank,
        checkpoint=checkpoint,
    )


_B, _S, _BOTH = (Role.BUYER,), (Role.SELLER,), (Role.BUYER, Role.SELLER)
_SU, _BU, _ALL = (Condition.SELLER_UNAWARE,), (Condition.BUYER_UNAWARE,), tuple(Condition)

ADAPTERS: dict[str, Arm] = {
    a.name: a
    for a in (
        _adapter("buyer-grpo", _B, _SU, "GRPO", "rank", 16, 24),
        _adapter("buyer-cispo", _B, _SU, "CISPO", "rank", 16, 14),
        _adapter("buyer-grpo-norank", _B, _SU, "GRPO", "none", 16, 21),
        _adapter("buyer-cispo-norank", _B, _SU, "CISPO", "none", 16, 15),
        _adapter("seller-grpo", _S, _BU, "GRPO", "rank", 16, 30),
        _adapter("seller-cispo", _S, _BU, "CISPO", "rank", 16, 37),
        _adapter("joint-grpo", _BOTH, _ALL, "GRPO", "rank", 32, 11),
        _adapter("joint-cispo", _BOTH, _ALL, "CISPO", "rank", 32, 11),
    )
}
RANKS: dict[str, int] = {name: arm.lora_rank for name, arm in ADAPTERS.items() if arm.lora_rank is not None}
BASE = Arm(name="base", kind="base", roles=_BOTH, conditions=_ALL)


def catalogue() -> list[Arm]:
    """Every built-in arm: the base model, the eight adapters, the tactics."""
    return [BASE, *ADAPTERS.values(), *(Arm(name=n, kind="tactic", roles=_BOTH, conditions=_ALL) for n in TACTICS)]


def resolve(spec: str) -> Arm:
    """The arm an agent spec names, or an ArmError listing what exists."""
    kind, sep, name = spec.partition(":")
    if not sep or not name:
        raise ArmError(f"bad agent {spec!r}: expected arm:NAME, tactic:NAME or openai:MODEL@URL")
    if kind == "tactic":
        if name not in TACTICS:
            raise ArmError(f"unknown tactic {name!r}; choose from {', '.join(TACTICS)}")
        return Arm(name=name, kind="tactic", roles=_BOTH, conditions=_ALL)
    if kind == "arm":
        if name == "base":
            return BASE
        if name not in ADAPTERS:
            raise ArmError(f"unknown arm {name!r}; choose from base, {', '.join(ADAPTERS)}")
        return ADAPTERS[name]
    if kind == "openai":
        model, at, url = name.partition("@")
        if not model or not at or not url.startswith(("http://", "https://")):
            raise ArmError(f"bad {spec!r}: expected openai:MODEL@URL such as openai:gpt-5.2@https://api.openai.com/v1")
        return Arm(name=name, kind="openai", roles=_BOTH, conditions=_ALL, model=model, base_url=url)
    raise ArmError(f"unknown agent kind {kind!r} in {spec!r}; use arm:, tactic: or openai:")


def public_names(offered: Iterable[str], others: Iterable[str] = ()) -> dict[str, str]:
    """What people are shown of each arm spec, one distinct name each: a remote model without the URL it is served
    at (`openai:MODEL`; `openai:MODEL#1`, `#2`... in order where several offered servers share the model's name),
    every other arm its spec. `others` (arms not offered, such as a stored game's) get names that none of the
    offered arms has. Where the server's models run is not for its pages to show."""
    offered = list(dict.fromkeys(offered))
    bare = {spec: _without_url(spec) for spec in offered}
    shared = Counter(bare.values())
    numbered: Counter[str] = Counter()
    names = {}
    for spec in offered:
        numbered[bare[spec]] += 1
        names[spec] = bare[spec] if shared[bare[spec]] == 1 else f"{bare[spec]}#{numbered[bare[spec]]}"
    taken = {*names.values(), *(name for name, count in shared.items() if count > 1)}
    for spec in others:
        if spec in names:
            continue
        base, count = _without_url(spec), 1
        name = base
        while name in taken:
            count += 1
            name = f"{base}#{count}"
        names[spec] = name
        taken.add(name)
    return names


def _without_url(spec: str) -> str:
    """An agent spec without the URL of a remote model (`openai:MODEL@URL` -> `openai:MODEL`)."""
    return spec.partition("@")[0] if spec.startswith("openai:") else spec

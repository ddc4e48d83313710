"""What a study's texts tell participants, read against the study itself: warnings for the researcher, never a
refusal (bargain.study.config.load logs them).

Participants read a title, a consent, instructions, arm labels and comprehension questions before they play, and a
debrief after. Four disagreements are caught: a debrief saying they were not told the other party is a program
although a text they read says so; a person-or-program question asked of participants already told; a text that
speaks of the other party as a program while they may play another participant (a person arm), or as a person
while they may play a program; and instructions, a question or the consent that tell one role's participants they
play the other role ("You are the buyer", read by sellers).

The texts are read by rule, with whole-word cues: a cue after a negation in the same clause ("not a person",
"rather than a bot") says what the other party is not, and does not count. A text that speaks of both kinds ("a
person or a program") or of neither ("the other party", which fits every arm) says nothing to check. The cues are
deliberately few: a phrasing they miss costs a warning, a false one a researcher's glance.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bargain.arena import PERSON
from bargain.engine.trial import Role
from bargain.study.survey import Builtin

if TYPE_CHECKING:
    from bargain.study.config import Study

# Words that speak of the other party as a program, and as a person (another participant).
PROGRAM = re.compile(
    r"\b(AI|A\.I\.|artificial intelligence|computers?|software|(chat)?bots?|language models?|LLMs?|"
    r"algorithms?|automated)\b",
    re.IGNORECASE,
)
PERSON_WORDS = re.compile(
    r"\b((another|other|fellow) (participant|person|player|human)|(a|one) (real |live )?(person|human being|human)|"
    r"real (people|persons|humans))\b",
    re.IGNORECASE,
)
# Words of a debrief saying participants were not told what the other party is.
HIDDEN = re.compile(
    r"\b((did|do|could)(n't| not) (tell|inform)|were(n't| not) (told|informed)|decei|deception\b|withh[eo]ld)",
    re.IGNORECASE,
)
# Words that tell the reader which role they play: "You are the **buyer**", "As the seller, ...", "you play the buyer
# or the seller" (both); not "as the seller's price" (a comparison).
YOUR_ROLE = re.compile(
    r"\b(?:you are|you're|you will be|you'll be|you play|you will play|you'll play|as)\s+(?:the|a)\s+[*_]*"
    r"(buyer|seller)\b(?![’']s)(?:[*_]*\s*(?:or|/)\s*(?:the\s+|a\s+)?[*_]*(buyer|seller)\b)?",
    re.IGNORECASE,
)
# A negation earlier in the same clause: the cue after it says what the other party is not.
_NEGATION = re.compile(
    r"\b(not|no|never|nor|neither|rather than|instead of)\b[^.;:!?\n]{0,24}$|n't\b[^.;:!?\n]{0,24}$", re.IGNORECASE
)


def said(cue: re.Pattern[str], words: str) -> str | None:
    """The first words of `cue` in `words` that are not negated, as written; None if there are none."""
    for found in cue.finditer(words):
        if not _NEGATION.search(words[max(0, found.start() - 40) : found.start()]):
            return found.group(0)
    return None


def roles_named(words: str) -> dict[Role, str]:
    """The roles `words` tell their reader they play, each with the first words that say so (Markdown's emphasis
    left out)."""
    named: dict[Role, str] = {}
    for found in YOUR_ROLE.finditer(words):
        for role in filter(None, found.groups()):
            named.setdefault(Role(role.lower()), re.sub(r"[*_]", "", found.group(0)))
    return named


def disclosure_warnings(study: Study) -> list[str]:
    """Where what participants are told disagrees with itself or with the study (the module's four cases), one line
    each, as errors are written: the file, the field and the words."""
    lines = [*_hidden(study), *_other_party(study), *_roles(study)]
    return [f"{study.path}: {line}" for line in lines]


def _instructions(study: Study) -> dict[str, tuple[tuple[Role, ...], str]]:
    """The instructions by field, each with the roles that read it: one text for every role, or one per role."""
    given = study.texts.instructions
    if isinstance(given, str):
        return {"texts.instructions": (study.roles, given)}
    return {f"texts.instructions.{role}": ((role,), words) for role, words in given.items()}


def _before_playing(study: Study) -> dict[str, str]:
    """What participants read before they play, by field."""
    return {
        "texts.consent": study.texts.consent,
        **{field: words for field, (_, words) in _instructions(study).items()},
        "title": study.title,
        **{f"arms.{key}.label": arm.label for key, arm in study.arms.items()},
        **{
            f"comprehension.questions[{i}]": " ".join((q.text, *q.options))
            for i, q in enumerate(study.comprehension.questions)
        },
    }


def _hidden(study: Study) -> list[str]:
    """A debrief that says what a text read before playing told, and a person-or-program question asked after it."""
    told = [(field, word) for field, words in _before_playing(study).items() if (word := said(PROGRAM, words))]
    if not told:
        return []
    field, word = told[0]
    warnings = []
    hidden = HIDDEN.search(study.texts.debrief)
    if hidden:
        warnings.append(
            f"texts.debrief: says participants were not told what the other party is ({hidden.group(0)!r}), but "
            f"{field} tells them it is a program ({word!r}); make the two agree (bargain/studies/example.yaml "
            "explains a disclosed and a deception design)"
        )
    for which in ("per_game", "final"):
        for i, item in enumerate(getattr(study.surveys, which)):
            if item.builtin is Builtin.PERSON_OR_PROGRAM:
                warnings.append(
                    f"surveys.{which}[{i}]: asks whether the other party was a person or a program, but {field} "
                    f"already tells participants it is a program ({word!r}); remove the question, or the disclosure"
                )
    return warnings


def _other_party(study: Study) -> list[str]:
    """A text that calls the other party a program while its readers may play a person arm, or a person while they
    may play a program arm (an arm's label: that arm only). The program a person arm falls back on
    (`pairing.otherwise`) is not counted: a text fits the design, and the debrief tells each game as it was."""
    played = list(dict.fromkeys(cell.arm for cell in study.cells))
    warnings = []
    for field, words in {**_before_playing(study), "texts.debrief": study.texts.debrief}.items():
        label = re.fullmatch(r"arms\.(.+)\.label", field)
        arms = [key for key in played if label is None or key == label.group(1)]
        people = [f"`{key}`" for key in arms if study.arms[key].spec == PERSON]
        programs = [f"`{key}` ({study.arms[key].spec})" for key in arms if study.arms[key].spec != PERSON]
        as_program, as_person = said(PROGRAM, words), said(PERSON_WORDS, words)
        fix = 'speak of "the other party", or of both kinds where participants may meet both'
        if as_program and not as_person and people:
            warnings.append(
                f"{field}: speaks of the other party as a program ({as_program!r}), but participants of "
                f"cells.arms {', '.join(people)} (spec: person) play another participant; {fix}"
            )
        if as_person and not as_program and programs:
            warnings.append(
                f"{field}: speaks of the other party as a person ({as_person!r}), but participants of "
                f"cells.arms {', '.join(programs)} play a program; {fix}"
            )
    return warnings


def _roles(study: Study) -> list[str]:
    """A text or question read by the participants of a role that tells them they play the other role."""
    roles = study.roles
    read = {
        "texts.consent": (roles, study.texts.consent),
        **_instructions(study),
        **{
            f"comprehension.questions[{i}]": ((q.role,) if q.role else roles, " ".join((q.text, *q.options)))
            for i, q in enumerate(study.comprehension.questions)
        },
    }
    warnings = []
    for field, (readers, words) in read.items():
        named = roles_named(words)
        for reader in (r for r in readers if named and r not in named):
            other, word = next(iter(named.items()))
            if len(readers) == 1:
                warnings.append(
                    f"{field}: is read by {reader}s only, but speaks to the {other} ({word!r}); make it speak to "
                    f"the {reader}"
                )
                continue
            fix = {
                "texts.consent": "word it for both roles",
                "texts.instructions": "give each role its own: texts.instructions: {buyer: FILE, seller: FILE}",
            }.get(field, f"give it `role: {other}`, and the {reader}s a question of their own")
            warnings.append(
                f"{field}: speaks to the {other} only ({word!r}), but {reader}s read it too "
                f"(cells.roles: {', '.join(roles)}); {fix}"
            )
    return warnings

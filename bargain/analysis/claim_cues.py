"""The claim checker's lexicon: the cues that make a price in a clause a claim, and the words that
cancel them.

A cue is a short phrase built from a lemma and its function words ("my budget", "cost me", "can't
go above", "at most", "the least I", "you can afford", "final offer"), never a whole sentence: the
price it speaks of is found in the same clause (`Cue.side` says on which side), so a phrasing
the lexicon has not seen is covered when its parts are. `bargain.analysis.claims` applies them.

Each cue has a kind (own limit, other side's limit, final), the direction of the limit it states
("hi" a ceiling, "lo" a floor, None either), and the speakers it makes sense for: a buyer states
ceilings and the seller's floor, a seller floors and the buyer's ceiling, so "I paid 30" is a
seller's cost and no claim from a buyer. Patterns run on a copy of the message in which every
price is masked as "¤" characters and typographic apostrophes are straight, case-insensitive.

Each cue is a named record (`Cue`), as Duckling keeps its rules: its pattern composed of named
parts (the speaker, the other side and the price slot of `claim_parts`, the word lists of
`claim_words`, small parts defined here), its top-level alternatives listed as data
(`Cue.alternatives`, one to a line where it has many), a family that differs in one part made by
one definition (`_both`, `_NOUN_FAMILIES`, `_not_moving`), and beside it the messages it must read
(`fires`, at least one for each of its alternatives) and a near miss it must leave (`misses`), run
by tests/test_claim_cues.py. `python -m benchmarks.claims --cues` counts how often each fires on
the labelled sets. Below the cues: the words the clause splitter and the choice of a cue's price
and person look for (the cancellers' own words are in `claim_cancellers`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bargain.analysis.claim_parts import (
    AFTER_PRICE,
    FIRST_BE,
    FIRST_MODAL,
    FIRST_PERSON,
    FIRST_SUBJECT,
    MASK,
    ME,
    MY,
    PRICE,
    PRICE_NEXT,
    WE,
    YOU,
    YOU_BE,
    YOU_WOULD,
    YOUR,
)
from bargain.analysis.claim_words import (
    ADVERBS,
    ANY_NOUNS,
    COINS,
    CONJUNCTIONS,
    EXPENSES,
    HI_COMPARISONS,
    HI_NOUNS,
    LO_COMPARISONS,
    LO_NOUNS,
    MONEY_VERBS,
    NEGATIONS,
    NOUN_MODIFIERS,
    OBJECTS,
    PERSONS,
    SUBJECT_DROPPERS,
    not_after,
    one_of,
)

_SUBJ = (
    # chat drops the subject: "paid 65 for it new"
    rf"(?:{FIRST_SUBJECT}\s*|^\W*(?:{one_of(SUBJECT_DROPPERS)}\W+)*)"
)
_ADV = rf"(?:{one_of(ADVERBS)}\s+)*"
_OBJ = rf"(?:{one_of(OBJECTS)}(?:\s+[\w'-]+){{0,3}}?)"
_NEG = one_of(NEGATIONS)
_VERB = one_of(MONEY_VERBS)
_COIN = one_of(COINS)
_CENT = rf"(?:a\s+(?:single\s+)?{_COIN}|one\s+(?:single\s+)?{_COIN})"
_EXPENSES = one_of(EXPENSES)
# "I put 2,000 into the transmission": a part, not what the item cost
_NOT_THE_ITEM = (
    rf"(?:{_EXPENSES}|shipping|delivery|fix(?:ing)?|parts|transmission|engine|tyres|tires|brakes|"
    r"battery|clutch)\b"
)
_NOT_AFTER_EXPENSE = not_after(EXPENSES)  # "fuel cost me" is no cost of the item
_NEG_THINK = (
    rf"(?:\b{WE}\s+(?:don['’]?t|do\s+not)\s+(?:think|believe|see\s+how)\s+{WE}\s+(?:can|could))"
)
_OBJ_OPT = (
    r"(?:\s+(?:it|them|this|these|that|those|anything|(?:any\s+)?offers?|"
    r"a\s+(?:cent|penny|dime|dollar|euro|pound)|(?:a\s+)?dime|"
    r"(?:the|my|our|this|that|a|an)\s+[\w-]+(?:\s+[\w-]+)?))?"
)
# "50 for the bike, tops"
_FILLER = r"(?!(?:my|our|your|is|isn['’]t|not|over|under|above|below|beyond|past|than)\b)"
# "I won't go any lower than this" is final, not a limit
_NOT_PRONOUN = r"(?:(?<=than)(?!\s*(?:this|here|what\s+you)\b)|(?<!than))"
_HI_COMP = rf"(?:(?:any|much|a\s+lot)\s+)?{one_of(HI_COMPARISONS)}"
_LO_COMP = rf"(?:(?:any|much|a\s+lot)\s+)?{one_of(LO_COMPARISONS)}"

# A bound on a time or a count, not a price: "at most a week to pay the rest", "at least two days".
_NOT_A_SPAN = (
    r"(?!\s+(?:a|an|one|two|three|four|five|six|\d+)\s+(?:\w+\s+)?"
    r"(?:weeks?|days?|months?|hours?|years?|minutes?|mins?|nights?|times?)\b)"
)

HI, LO = "hi", "lo"
OWN, OTHER, FINAL = "own_limit", "other_limit", "final_offer"
BUYER, SELLER = "buyer", "seller"
BOTH = (BUYER, SELLER)


@dataclass(frozen=True)
class Cue:
    """One cue: the phrase, the claim it makes, and where its price is.

    side: "after" (the price follows the cue), "before" (it precedes), or "near" (the nearest either
    side), "threshold" (a price after a threshold word in the clause or the one before: "anything
    above 1,200 is out of reach", while "1,200 is out of reach" states no limit) or "sentence" (the
    nearest in the sentence). speakers: who can make this claim. conditional: the cue keeps its
    meaning under "if" ("if I go below 30 I lose money"). assertive: the clause must assert it ("I'm
    sure you'd accept 40", not "you'd accept 40"). personal: a bound with no person of its own ("at
    least 600") is the limit of the nearest person before it in the clause ("you can afford at least
    600" is the other side's). stresses_offer: a bound that makes the price before it a final offer,
    not a limit ("I can do 2.10, but not a cent lower"); its direction only says who can say it.
    consequence: a bound that opens its sentence, the speaker's only if a cost to them follows
    ("over 400 and I keep taking the bus"). loss: a price where the speaker loses money, which "at"
    that price only bounds a limit the message may state ("I paid 549, so I'm eating a loss at
    520"). weak: a final-offer cue that only stresses a limit stated in its sentence ("I paid 340,
    so I can't go lower"). relative: a "what I paid" clause, whose truth a negation before it does
    not touch. subjectless: chat may drop its subject ("paid 65 for it new"), so it is the speaker's
    unless the clause before names someone else ("my dad, who'll pay anything, wouldn't go above
    200").
    """

    name: str
    pattern: re.Pattern  # its alternatives, joined
    alternatives: tuple[str, ...]  # its top-level alternatives, in the order they are tried
    kind: str
    direction: str | None
    side: str
    speakers: tuple[str, ...] = BOTH
    conditional: bool = False
    assertive: bool = False
    personal: bool = False
    relative: bool = False
    stresses_offer: bool = False
    loss: bool = False
    consequence: bool = False
    weak: bool = False
    subjectless: bool = False
    # messages in which it must find an asserted price (read without a speaker's side)
    fires: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()  # messages with its words, or near them, in which it must not


Examples = tuple[str, ...] | dict[str | None, tuple[str, ...]]  # a family's are given by direction


def _cue(
    name: str,
    pattern: str | tuple[str, ...],
    kind: str,
    direction: str | None,
    side: str,
    speakers: tuple[str, ...] | None = None,
    fires: Examples = (),
    misses: Examples = (),
    **flags: bool,
) -> Cue:
    """A cue of `pattern`, or of any of its alternatives (compiled case-insensitive), said by
    `speakers` or, by default, by the side whose limit it states; `fires` and `misses` are its own
    examples, or its family's by direction."""
    # a ceiling is a buyer's, a floor a seller's; the other side's the other way round
    if speakers is None:
        hi_speaker = BUYER if kind == OWN else SELLER
        lo_speaker = SELLER if kind == OWN else BUYER
        speakers = (
            BOTH if direction is None else ((hi_speaker,) if direction == HI else (lo_speaker,))
        )
    own_fires = fires[direction] if isinstance(fires, dict) else fires
    own_misses = misses[direction] if isinstance(misses, dict) else misses
    alternatives = (pattern,) if isinstance(pattern, str) else pattern
    return Cue(
        name,
        re.compile("|".join(alternatives), re.IGNORECASE),
        alternatives,
        kind,
        direction,
        side,
        speakers,
        fires=own_fires,
        misses=own_misses,
        **flags,
    )


def _both(
    name: str, template: str, kind: str, side: str, words: dict[str, str], **flags
) -> list[Cue]:
    """A ceiling cue and its floor twin: `template` with "{words}" replaced by each direction's
    words."""
    return [
        _cue(
            f"{name}-{direction}",
            template.replace("{words}", words[direction]),
            kind,
            direction,
            side,
            **flags,
        )
        for direction in (HI, LO)
    ]


# --- limit nouns: whose they are is read from the possessive before them --------------------------
_HI_NOUNS = "|".join(HI_NOUNS)
_LO_NOUNS = "|".join(LO_NOUNS)
_ANY_NOUNS = "|".join(ANY_NOUNS)
NOUN_GROUPS = ((HI, _HI_NOUNS), (LO, _LO_NOUNS), (None, _ANY_NOUNS))
_MODS = rf"(?:{one_of(NOUN_MODIFIERS)}\s+)*"
PEOPLE = rf"{one_of(PERSONS)}['’]?s?\b"


@dataclass(frozen=True)
class _NounFamily:
    """Cues that differ only in their limit noun: one for each direction's nouns (`NOUN_GROUPS`),
    named `name-hi`, `name-lo`, `name-any`, the pattern `template` of the direction's noun
    phrase."""

    name: str
    template: Callable[[str], str | tuple[str, ...]]
    kind: str
    side: str
    directions: tuple[str | None, ...] = (HI, LO, None)
    fires: Examples = ()
    misses: Examples = ()
    personal: bool = False


# Limit nouns owned by the speaker ("my budget", "my labour minimum") or the other side ("your
# floor").
_NOUN_FAMILIES = (
    _NounFamily(
        "my-noun",
        lambda noun: (
            rf"\b{MY}\s+(?!{PEOPLE})(?!(?:final|last|best|"
            rf"first|opening)\b)(?:[\w'’-]+\s+){{0,2}}?{noun}"
        ),
        OWN,
        "near",
        fires={
            HI: ("My cap is €75.", "My budget is 40."),
            LO: ("my floor is 700", "yea 200 is my min"),
            None: ("My limit: 45.", "My hard stop is 9,750."),
        },
        misses={
            HI: ("i didnt say 60 was my max",),
            LO: ("i never said my min was 50",),
            None: ("I never said 30 was my limit.",),
        },
    ),
    _NounFamily(
        "the-noun",
        lambda noun: (
            rf"(?:^\W*|\bthe\s+(?=(?:absolute|hard|real|true|"
            rf"actual|rock)))(?:the\s+)?(?!(?:wholesale|retail|"
            rf"market|going|list|sticker|average|typical|"
            rf"usual)\b){noun}(?:\s+(?:for|on|of)\s+(?:the\s+|"
            rf"a\s+|this\s+|these\s+|my\s+)?[\w-]+"
            rf"(?:\s+[\w-]+){{0,2}}){{0,2}}\s*(?=(?:is|was|"
            rf"['’]s|:|would\s+be|will\s+be|stands\s+at|"
            rf"sits\s+at|at)\b|:)"
        ),
        OWN,
        "after",
        personal=True,
        fires={
            HI: ("Ceiling: 950. Final.", "Budget's 40 max, sorry."),
            LO: ("floor is 9k", "min is 2k. not moving."),
            None: ("Bottom line is 850. That's final.", "The bottom line for me is €6.500."),
        },
        misses={
            HI: ("240? budget is tight",),
            LO: ("Minimum is 5 pieces per order.",),
            None: ("The lower limit on the thermostat is 5 degrees. I'd take 70 for it.",),
        },
    ),
    _NounFamily(
        "thats-the-noun",
        lambda noun: rf"\bthat['’]?s\s+(?:the|our)\s+(?!(?:final|last|number)\b){noun}",
        OWN,
        "before",
        fires={
            HI: (
                "i can stretch to 95 but thats the ceiling",
                "wallet says 14.50 and thats the whole budget",
            ),
            LO: ("3.50 per slice thats the lowest", "no lower than 45, that's the bottom"),
            None: (
                "I can stretch to 19.5k if I have to, but that's the limit.",
                "Ten euros, that's the upper limit I allowed myself for the souvenir.",
            ),
        },
        misses={
            HI: ("My bank approved me for a 12k loan and that's the max I can borrow.",),
            LO: ("That's the lowest I've ever sold one for.",),
            None: ("I can stretch to 19.5k if I have to, but that's the limit?",),
        },
    ),
    _NounFamily(
        "noun-for-me",
        lambda noun: (
            rf"\b(?:the\s+)?{noun}\s+(?:for|to)\s+{ME}\b",
            rf"\bfor\s+{ME},?\s+(?:the\s+|my\s+)?{noun}",
        ),
        OWN,
        "near",
        fires={
            HI: (
                "Top whack for me is 95.",
                "Top dollar for me is 85.",
                "For me the upper bound is 16.5k.",
            ),
            LO: (
                "break even for me is 4.75",
                "Break-even for me is 2.40.",
                "For me minimum price is 60 euro.",
            ),
            None: ("For me the upper bound is 16.5k.", "The bottom line for me is €6.500."),
        },
        misses={
            HI: ("That's a bit over budget for me, honestly.",),
            LO: ("Anything above 4 a dozen and the bake sale won't break even for us.",),
            # "the max for me", "for me the upper bound is 16.5k"
            None: ("For me the upper bound is 16.5k?",),
        },
    ),
    _NounFamily(
        "noun-to-you",
        lambda noun: rf"\b(?:the\s+)?{noun}\s+to\s+(?:you|u)\b",
        OTHER,
        "near",
        directions=(LO,),
        fires={
            LO: (
                "The cost to you is likely below £1.00 per loaf.",
                "The cost to you was 300, I'm sure.",
            )
        },
        misses={LO: ("The cost to you is likely below £1.00 per loaf?",)},
    ),
    _NounFamily(
        "i-have-a-noun",
        lambda noun: (
            rf"{FIRST_SUBJECT}\s*(?:['’]ve|have|['’]ve\s+got|"
            rf"have\s+got|got|set|set\s+(?:myself|"
            rf"ourselves)|['’]m\s+on|am\s+on|"
            rf"['’](?:m|re)\s+working\s+with|"
            rf"(?:am|are)\s+working\s+with|"
            rf"['’]m\s+sticking\s+to|gave\s+myself|"
            rf"['’]ve\s+been\s+given|was\s+given|"
            rf"(?:have|['’]ve)\s+been\s+(?:given|"
            rf"approved\s+for|authori[sz]ed))\s+(?:a|an|"
            rf"the|my)\s+(?:total|{noun})"
        ),
        OWN,
        "after",
        fires={
            HI: ("I have a hard cap of 25 for this.", "I'm working with a budget of 2,500."),
            LO: ("I have a hard floor of 95 and I am not moving.", "I have a floor of 500."),
            None: (
                "I have a hard stop at 220, would you do 200?",
                "I have a limit of $35 for a haircut including tip.",
            ),
        },
        misses={
            HI: ("Last year I set a ceiling of 1,500 for my work laptop, and I came in under it.",),
            LO: ("If i have a hard floor of 95 and I am not moving, fine.",),
            None: ("If i have a hard stop at 220, would you do 200?, fine.",),
        },
    ),
    _NounFamily(
        "a-noun-of",
        lambda noun: (
            rf"\b(?:authori[sz]ed|approved|allowed|given|"
            rf"allocated|set)\s+(?:me\s+|us\s+)?(?:a|"
            rf"an)\s+{noun}\s+of\b"
        ),
        OWN,
        "after",
        fires={
            HI: (
                "I've been given a budget of £275 by my manager.",
                "Me and the wife set a cap of 1,350 a month for rent.",
            ),
            LO: ("The owner authorised me a floor of 500.", "I've been allowed a minimum of 80."),
            None: (
                "My husband set a limit of 90 on the stroller.",
                "The watch is a gift for my wife and I've set a hard limit of 350. I'll offer 300.",
            ),
        },
        misses={
            HI: ("Last year I set a ceiling of 1,500 for my work laptop, and I came in under it.",),
            LO: ("The owner authorised me a floor of 500?",),
            None: ("My husband set a limit of 90 on the stroller?",),
        },
    ),
    _NounFamily(
        "a-noun",
        lambda noun: rf"\b(?:a|an)\s+{_MODS}(?:[\w'’-]+\s+)?{noun}\s+of\b",
        OWN,
        "after",
        personal=True,
        fires={
            HI: ("I have a hard cap of 25 for this.", "I'm working with a budget of 2,500."),
            LO: ("I'm at a hard floor of 4,500.", "I'd need a minimum of 160 to part with it"),
            None: (
                "My husband set a limit of 90 on the stroller.",
                "I have a limit of $35 for a haircut including tip.",
            ),
        },
        misses={
            HI: ("I don't have a hard cap of 60 or anything.",),
            LO: ("You mentioned a minimum of 1,000 earlier. Can we talk about 1,020?",),
            None: ("There's a limit of one per household on these, 4.99 each.",),
        },
    ),
    _NounFamily(
        "you-have-a-noun",
        lambda noun: (
            rf"{YOU}\s+(?:must\s+|surely\s+|"
            rf"probably\s+|clearly\s+)?(?:have|"
            rf"['’]ve\s+got|got)\s+(?:a|an)\s+{noun}"
        ),
        OTHER,
        "after",
        fires={
            HI: (
                "You must have a budget of at least $700 for a sofa.",
                "You must have a budget of 500 for this.",
            ),
            LO: (
                "You must have a floor around 1,000, otherwise you wouldn't have listed it at "
                "1,300.",
                "You must have a floor of 500.",
            ),
            None: ("You must have a limit of 500.", "You probably have a bottom line of 80."),
        },
        misses={
            HI: ("Do you have a budget in mind, like 100 or 200?",),
            LO: (
                "If you must have a floor around 1,000, otherwise you wouldn't have listed it at "
                "1,300, fine.",
            ),
            None: ("You must have a limit of 500?",),
        },
    ),
    _NounFamily(
        "your-noun",
        lambda noun: rf"{YOUR}\s+(?:[\w'’-]+\s+)?{noun}",
        OTHER,
        "near",
        fires={
            HI: ("ur max is prob 900", "bet ur max is around 900"),
            LO: ("ur min is prob 25 tops", "ur floor is def below 3k"),
            None: ("I'm sure your bottom line is 8,000.", "Your limit is surely higher than 250."),
        },
        misses={HI: ("is 50 ur max",), LO: ("is 20 ur lowest?",), None: ("Is 300 your limit?",)},
    ),
)


def noun_cues() -> list[Cue]:
    """The cues of every noun family, direction by direction: "my budget", "the floor is", "your
    max"."""
    return [
        _cue(
            f"{family.name}-{direction or 'any'}",
            family.template(rf"{_MODS}(?:{nouns})\b(?:['’]s)?"),
            family.kind,
            direction,
            family.side,
            fires=family.fires,
            misses=family.misses,
            personal=family.personal,
        )
        for direction, nouns in NOUN_GROUPS
        for family in _NOUN_FAMILIES
        if direction in family.directions
    ]


# --- final offers by refusing to move -------------------------------------------------------------
_WILL_NOT = (
    r"(?:not|won['’]?t|will\s+not|shall\s+not|shan['’]t|refuse\s+to|['’]m\s+not|am\s+not|"
    r"ain['’]?t|"
    r"(?<!can)['’]t)\s*(?:going\s+to\s+|gonna\s+|"
    r"be\s+)?"
)  # "I'm not budging", "I won't be moving"
_CANNOT = (
    r"(?:can['’]?t|cannot|can\s+not|couldn['’]?t|could\s+not|(?:am|['’]m)\s+unable\s+to)\s*"
    r"(?:going\s+to\s+|gonna\s+)?"
)
_STAYING = r"(?:moving|movin|move|budging|budgin|budge|shifting|shift)"  # moving at all
# moving in a direction
_GOING = r"(?:going|go|coming|come|dropping|drop|negotiating|negotiate|bending|bend)"
_MOVING = (
    rf"(?:{_STAYING}\b(?:\s+(?:an\s+inch|any\s+further|any\s+more|anymore|on\s+(?:this|that|"
    rf"price)|"
    r"from\s+(?:this|that|it)(?:\s+(?:figure|price|number|offer))?))?|"
    rf"{_GOING}\s+(?:any\s+)?(?:lower|higher|further|down|up|anywhere|an\s+inch|a\s+(?:cent|"
    rf"penny|dime))\b)"
    # "... than this", "... than my offer of"
    r"(?:\s+than\s+(?:this|that|here|what\s+I(?:['’]ve)?\s+\w+|my\s+(?:\w+\s+)?(?:offer|"
    r"bid)(?:\s+of)?)"
    r"(?:\s+(?:price|offer|one|figure|number))?)?"
    # not "not moving house", "won't go below it unless", "not going out"
    r"(?!\s+(?:than|without|unless|if|either|house|out|away|abroad|in\b|to\b|"
    r"on\s+(?!(?:the\s+)?(?:price|this|that|it)\b|¤)|(?:the|my|our|your)\s+(?!price\b)|"
    r"(?:below|under|above|over|beyond|past)(?!\s+(?:it|that|this)\b)))"
)


def _not_moving(name: str, negation: str, **fields) -> Cue:
    """A refusal to move from the price ("not moving", "can't go any lower"), the subject the
    speaker or dropped: one definition for the family, whose members differ only in `negation`."""
    pattern = rf"(?:{FIRST_BE}|{FIRST_SUBJECT}|^\W*)\s*{negation}{_MOVING}"
    return _cue(name, pattern, FINAL, None, "sentence", **fields)


# --- the lexicon ---------------------------------------------------------------------------------
_PAST = (
    r"(?!\s*(?:['’]?ve|have|had)?\s*(?:ever\s+)?(?:\w+ly\s+)?(?:paid|spent|seen|sold|bought|"
    r"got|gotten|found|heard|"
    r"had)\b)"
)  # "the most I've ever paid"
_CUES: list[Cue] = noun_cues() + [
    # the most I can pay / the least I'd take / the cheapest we can do / 1.9k absolute lowest
    _cue(
        "most-i",
        rf"\b(?:the\s+)?(?:absolute\s+|very\s+|max\s+|maximum\s+)?(?:most|utmost|"
        rf"highest|max(?:imum)?|top|furthest|farthest|largest|biggest)\s+(?:price\s+|"
        rf"amount\s+|number\s+|figure\s+)?(?:that\s+)?(?:{FIRST_SUBJECT}|"
        rf"{MY}\s+[\w-]+\s+(?=can|could|will|would|"
        rf"is\s+(?:willing|able|prepared|allowed))){_PAST}",
        OWN,
        HI,
        "near",
        fires=("Max I can do is 35.", "most i can do is 1.25"),
        misses=("No, 70 is not the most I can do, I just don't want to.",),
    ),
    _cue(
        "least-i",
        rf"\b(?:the\s+)?(?:absolute\s+|very\s+)?(?:least|lowest|minimum|min|bottom|"
        rf"cheapest|smallest)\s+(?:price\s+|amount\s+|number\s+|"
        rf"figure\s+)?(?:that\s+)?(?:{FIRST_SUBJECT}|(?:my|our|the)\s+[\w-]+\s+(?=can|could|will|"
        rf"would|lets|allows|is\s+(?:willing|able|prepared|allowed))){_PAST}",
        OWN,
        LO,
        "near",
        fires=("Least I take: 95.", "lowest i take is 95"),
        misses=("You keep saying 'the least I can take is 90' like it's gospel.",),
    ),
    _cue(
        "top-of-what-i",
        rf"\b(?:top|limit|ceiling|end|upper\s+(?:bound|limit|"
        rf"end))\s+of\s+what\s+{FIRST_SUBJECT}",
        OWN,
        HI,
        "near",
        fires=(
            "On my pension, 175 is the top of what I can spend.",
            "Twelve hundred is the absolute top of what I can afford for a sofa.",
        ),
        misses=("On my pension, 175 is the top of what I can spend?",),
    ),
    _cue(
        "bottom-of-what-i",
        rf"\b(?:bottom|floor|lower\s+(?:bound|limit|end))\s+of\s+what\s+{FIRST_SUBJECT}",
        OWN,
        LO,
        "near",
        fires=("40 is the bottom of what I can take.", "The floor of what I'd accept is 40."),
        misses=("40 is the bottom of what I can take?",),
    ),
    _cue(
        "bare-hi",
        rf"{AFTER_PRICE}(?:\s+(?:a|an|per|each)\s+\w+)?(?:\s+(?:for|on)\s+(?:the\s+|"
        r"a\s+)?[\w-]+(?:\s+[\w-]+)?)?\s*(?:(?:is|'s|would\s+be|"
        r"will\s+be)\s+)?(?:(?:really|truly|honestly|definitely|simply|just|literally|"
        r"absolutely)\s+)?(?:the\s+|my\s+|our\s+)?(?:absolute\s+|very\s+|hard\s+|"
        r"total\s+)?\b(?:max(?:imum)?|ceiling|cap|top|upper\s+limit|highest|most|"
        rf"top\s+of\s+{MY}\s+(?:range|budget|limit))\b(?!\s+(?:of|you|for\s+you|"
        rf"so\s+far|yet|among|{WE}(?:['’]ve|\s+have)))",
        OWN,
        HI,
        "before",
        personal=True,
        fires=("50 max", "3k cap."),
        misses=("i wouldnt say 60 is my max",),
    ),
    _cue(
        "is-all",
        rf"{AFTER_PRICE}(?:\s+for\s+(?:both|the\s+lot|all|each|it|them|the\s+\w+))?\s*(?:\s+is|"
        r"'s)\s+(?:really\s+|literally\s+|truly\s+)?(?:all|"
        r"everything)\b(?!\s+(?:you|of|in|included|inclusive|"
        rf"{WE}(?:['’](?:m|re)|\s+am|\s+are)\s+offering))",
        OWN,
        HI,
        "before",
        fires=("250 is all i got", "$400 is all i have saved"),
        misses=("250 is all i got?",),
    ),
    _cue(
        "bare-lo",
        rf"{AFTER_PRICE}(?:\s+(?:a|an|per|each)\s+\w+)?(?:\s+(?:for|on)\s+(?:the\s+|"
        r"a\s+)?[\w-]+(?:\s+[\w-]+)?)?\s*(?:(?:is|'s|would\s+be|"
        r"will\s+be)\s+)?(?:(?:really|truly|honestly|definitely|simply|just|literally|"
        r"absolutely)\s+)?(?:the\s+|my\s+|our\s+)?(?:absolute\s+|very\s+|hard\s+|"
        r"rock[- ]bottom\s+)?\b(?:min(?:imum)?|floor|lowest|bottom|least|cheapest|"
        r"bottom\s+line|break[- ]?even|rock[- ]bottom)\b(?!\s+(?:of|you|for\s+you|"
        rf"so\s+far|yet|among|{WE}(?:['’]ve|\s+have)(?!\s+been\s+(?:given|set|told|"
        r"allowed|assigned))))",
        OWN,
        LO,
        "before",
        personal=True,
        fires=("20 minimum babe", "160 lowest fr fr"),
        misses=("u said 230 min yesterday lol",),
    ),
    _cue(
        "lowest-is",
        r"^\W*(?:(?:the|my|our)\s+)?(?:absolute\s+|very\s+)?(?:lowest|least|"
        r"cheapest)\s*(?=(?:is|['’]s|:|would\s+be)\b|:)",
        OWN,
        LO,
        "after",
        fires=("My lowest is 15 thousand.", "lowest is 55 cuz i paid 70 tbh"),
        misses=("My lowest is 15 thousand?",),
    ),
    _cue(
        "highest-is",
        r"^\W*(?:(?:the|my|our)\s+)?(?:absolute\s+|very\s+)?(?:highest|"
        r"most)\s*(?=(?:is|['’]s|:|would\s+be)\b|:)",
        OWN,
        HI,
        "after",
        fires=("Highest is 300.", "Highest: 300 for the pair."),
        misses=("Highest is 300?",),
    ),
    *[
        _cue(
            f"the-noun-i-{direction or 'any'}",
            rf"\bthe\s+(?:[\w-]+\s+)?(?:{nouns})\s+"
            rf"(?:that\s+)?{FIRST_SUBJECT}\b{_PAST}[^¤.!?]{{0,60}}?\b"
            rf"(?:is|was|['’]s)\b",
            OWN,
            direction,
            "after",
            fires={
                HI: ("The highest I can go is 2.35.", "The highest I am able to go is 9.90."),
                LO: ("The lowest I can go is 18.", "the least id take is 65 tbh"),
                None: (
                    "Let me be transparent: the upper bound I've been given is 6,250 EUR.",
                    "The reservation value I have been assigned for this transaction is 530.",
                ),
            },
            misses={
                HI: ("The max I can carry is 3 bags, so 3 bags at 4 each?",),
                LO: ("You keep saying 'the least I can take is 90' like it's gospel.",),
                None: ("Let me be transparent: the upper bound I've been given is 6,250 EUR?",),
            },
        )
        for direction, nouns in ((HI, _HI_NOUNS), (LO, _LO_NOUNS), (None, _ANY_NOUNS))
    ],
    _cue(
        "the-amount-i-can",
        rf"\bthe\s+(?:[\w-]+\s+)?(?:amount|sum|total|figure|number|price|"
        rf"money|cash|rent|most)\s+(?:that\s+)?{FIRST_SUBJECT}\s*(?:can|could|['’]ve|"
        rf"have|was|were|am|['’]m)?\s*(?:\w+\s+)?(?:pay|spend|afford|commit|"
        rf"handle|manage|put\s+(?:down|in|up|toward|towards)|available|"
        rf"been\s+(?:given|assigned|authori[sz]ed|allowed|approved)|"
        rf"set\s+(?:myself|aside)|budgeted|to\s+spend)\b[^¤.!?]{{0,40}}?\b"
        rf"(?:is|was|['’]s|comes\s+to)\b",
        OWN,
        HI,
        "after",
        fires=("The most I can pay is 35.", "the most i'd spend is €35"),
        misses=("You keep saying 'the most I can pay is 50', but you arrived in a new car.",),
    ),
    _cue(
        "most-you",
        rf"\b(?:the\s+)?(?:absolute\s+|very\s+)?(?:most|highest|"
        rf"max(?:imum)?)\s+(?:that\s+)?{YOU}",
        OTHER,
        HI,
        "near",
        fires=(
            "I know the most you'd pay is more like 70, not 50.",
            "I reckon the most you'd actually stretch to is around 30.",
        ),
        misses=("Is 40 the most you can pay?",),
    ),
    _cue(
        "least-you",
        rf"\b(?:the\s+)?(?:absolute\s+|very\s+)?(?:least|lowest|minimum|min|"
        rf"cheapest)\s+(?:that\s+)?{YOU}",
        OTHER,
        LO,
        "near",
        fires=("I reckon the least you'd take is 280.", "I bet the least you'd take is 3 euros"),
        misses=("Is 40 the least you'd take?",),
    ),
    # I can't go above / I won't sell for less than / there's no way I'd pay more than / cant go
    # under that
    *_both(
        "neg",
        rf"(?:{_SUBJ}(?:(?:can|could|would|will)\s+)?{_ADV}{_NEG}|{_NEG_THINK}|"
        rf"no\s+way\s+{FIRST_MODAL}|"
        rf"not\s+(?:going|willing|able|prepared|permitted|allowed|authori[sz]ed)\s+to|"
        rf"\b(?:it['’]?s\s+|it\s+is\s+|is\s+)?impossible\s+for\s+(?:me|"
        rf"us)\s+to)\s+{_ADV}{_VERB}"
        rf"{_OBJ_OPT}\s+(?:any\s+)?(?:for\s+)?(?:anything\s+)"
        rf"?{{words}}{_NOT_PRONOUN}",
        OWN,
        "after",
        {HI: _HI_COMP, LO: _LO_COMP},
        subjectless=True,
        fires={
            HI: ("I can't go past 580.", "I can't go over 110."),
            LO: ("i wont sell under 7k", "I can't go under 2.10."),
        },
        misses={
            HI: ("If it has a cracked screen I wouldn't pay more than 100.",),
            LO: ("If I were you I wouldn't take less than 500 for it, but I'm not you.",),
        },
    ),
    _cue(
        "neg-better",
        rf"(?:{_SUBJ}{_ADV}{_NEG}|{_NEG_THINK})\s+{_ADV}(?:do|go|offer|"
        rf"give)(?:\s+(?:you|it))?\s+(?:any\s+)?better\s+than{_NOT_PRONOUN}",
        OWN,
        None,
        "after",
        subjectless=True,
        fires=(
            "I can't do better than 2.45.",
            "My floor is 60 cents per bag, I can't do better than that.",
        ),
        misses=("I can't do better than 2.45?",),
    ),
    _cue(
        "best-i",
        rf"\b(?:the\s+)?(?:absolute\s+|very\s+)?best\s+(?:price\s+|deal\s+|"
        rf"offer\s+)?(?:that\s+)?{FIRST_SUBJECT}\s*(?:can|could|am\s+able\s+to|"
        rf"['’]m\s+able\s+to)\s+(?:possibly\s+|really\s+)?(?:do|offer|go|manage|pay|"
        rf"afford)\b",
        OWN,
        None,
        "near",
        fires=(
            "The best I can do is $2.30, I'm afraid.",
            "Best I can do is 180, that's my whole budget.",
        ),
        misses=("The best I can do is $2.30, I'm afraid?",),
    ),
    _cue(
        "neg-exceed",
        rf"(?:{_SUBJ}{_ADV}{_NEG}|{_NEG_THINK}|\b(?:my|"
        rf"our)\s+(?:[\w'’-]+\s+){{0,2}}?(?:budget|limit|max(?:imum)?|cap|ceiling|"
        rf"funds|means)(?:\s+(?:for|on)\s+(?:the\s+|a\s+|"
        rf"this\s+)?[\w-]+(?:\s+[\w-]+)?)?\s+(?:can['’]?t|cannot|does\s+not|"
        rf"doesn['’]?t|will\s+not|won['’]?t|is\s+not\s+able\s+to))\s+{_ADV}"
        rf"(?:exceed|surpass|top|extend\s+(?:beyond|past|to\s+more\s+than)|"
        rf"stretch\s+(?:beyond|past|to\s+more\s+than)|"
        rf"go\s+(?:above|beyond|over|past))\b",
        OWN,
        HI,
        "after",
        subjectless=True,
        fires=("Can't exceed 9.99.", "I can't go past 580."),
        misses=("Look, I'm not saying I can't go above 200, I'm just saying 200 is a good offer.",),
    ),
    _cue(
        "approved-up-to",
        r"\b(?:authori[sz]ed|approved|pre-?approved|cleared|signed\s+off|"
        r"allowed|permitted)\b[^¤.;!?]{0,40}?\b(?:up\s+to|"
        r"go\s+(?:as\s+high\s+as|to))\b",
        OWN,
        HI,
        "after",
        (BUYER,),
        personal=True,
        fires=(
            "My financing is approved up to $24,000.",
            "I'm authorised up to 7,200 and not beyond.",
        ),
        misses=(
            "My boss approved up to 2,000 for the team lunch, but this chair is coming out of my "
            "own pocket.",
        ),
    ),
    *_both(
        "not-permitted",
        r"(?:\b(?:do|does|will|would)\s*(?:n['’]t|\s+not)|"
        rf"\bwon['’]?t)\s+(?:permit|allow|let)\s+{ME}\s+"
        r"(?:to\s+)?{words}",
        OWN,
        "after",
        {
            HI: r"(?:exceed|go\s+(?:above|over|beyond)|pay\s+(?:more\s+than|over)|"
            r"spend\s+(?:more\s+than|over))",
            LO: r"(?:go\s+(?:below|under|lower\s+than)|(?:sell|accept|"
            r"take)\s+(?:\w+\s+)?(?:for\s+)?(?:less\s+than|under|below))",
        },
        fires={
            HI: (
                "My dad won't let me spend more than 3,400 of the trust money on the horse "
                "trailer.",
                "My instructions do not permit me to exceed $4,500. Accordingly, this is our final "
                "position.",
            ),
            LO: (
                "My boss won't let me go under 18 a box.",
                "My manager won't let me go below 28,990 on this one.",
            ),
        },
        misses={
            HI: (
                "My dad won't let me spend more than 3,400 of the trust money on the horse "
                "trailer?",
            ),
            LO: (
                "That's below our book value of $17,000 for the lot, and finance won't "
                "let us sell under book. I could do $17,800.",
            ),
        },
    ),
    _cue(
        "not-getting-it",
        rf"{YOU}\s*(?:['’]re|are)\s+not\s+getting\s+{_OBJ}\s+for\s+"
        rf"(?:less\s+than|under|below|anything\s+(?:less\s+than|under|below))",
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=(
            "You're not getting the lawnmower for less than two hundred and fifty.",
            "You're not getting it for less than 300.",
        ),
        misses=("You're not getting the lawnmower for less than two hundred and fifty?",),
    ),
    _cue(
        "no-sum-over",
        rf"{_NEG}\s+(?:\w+\s+){{0,3}}?(?:any|a)\s+(?:sum|amount|price|figure|"
        rf"total)\s+(?:exceeding|over|above|beyond|higher\s+than|more\s+than|"
        rf"in\s+excess\s+of){PRICE_NEXT}",
        OWN,
        HI,
        "after",
        fires=(
            "I'm absolutely unable to authorise any sum exceeding $6,200 for the piano, and "
            "I'd wager your client would accept six thousand.",
            "I cannot approve any sum over 500.",
        ),
        misses=(
            "If i'm absolutely unable to authorise any sum exceeding $6,200 for the piano, "
            "and I'd wager your client would accept six thousand, fine.",
        ),
    ),
    _cue(
        "decline-below",
        r"\b(?:decline|refuse|reject|turn\s+down)\s+(?:anything|any\s+offer|"
        r"offers?|any\s+price)\s+(?:below|under|less\s+than|lower\s+than)",
        OWN,
        LO,
        "after",
        fires=(
            "I must decline anything under £640, which is my minimum.",
            "I must respectfully decline any offer below €2,20 per loaf, as that is my production "
            "cost.",
        ),
        misses=("If i must decline anything under £640, which is my minimum, fine.",),
    ),
    _cue(
        "decline-above",
        r"\b(?:decline|refuse|reject|turn\s+down)\s+(?:anything|any\s+price|"
        r"prices?)\s+(?:above|over|more\s+than|higher\s+than)",
        OWN,
        HI,
        "after",
        fires=("I'll decline anything above 500.", "I'll turn down any price over 80."),
        misses=("I'll decline anything above 500?",),
    ),
    _cue(
        "no-more-than",
        (
            r"\b(?:no|not)\s+(?:more|higher)\s+th[ae]n",
            rf"(?<!worth\s)\bat\s+(?:the\s+)?(?:very\s+)?most\b{_NOT_A_SPAN}",
            r"\bup\s+to\s+a\s+max(?:imum)?\s+of",
        ),
        OWN,
        HI,
        "after",
        personal=True,
        fires=(
            "I'll pay up to a maximum of 400.",
            "No more than 1.10 per litre for me.",
            "I can spend at most 260 on the phone.",
        ),
        misses=("At most two of the chairs have scratches, right? I'd offer 30 each.",),
    ),
    _cue(
        "no-less-than",
        (
            r"\b(?:no|not)\s+(?:less|lower|cheaper)\s+th[ae]n",
            rf"(?<!worth\s)\bat\s+(?:the\s+)?(?:very\s+)?least\b{_NOT_A_SPAN}",
        ),
        OWN,
        LO,
        "after",
        personal=True,
        fires=("no lower than 180 sry", "I need at least 2.5k."),
        misses=("You told me on the phone you needed at least 7k.",),
    ),
    _cue(
        "at-most-after",
        rf"{AFTER_PRICE},?\s*(?:{_FILLER}[\w'’]+,?\s+){{0,3}}?"
        rf"(?:at\s+(?:the\s+)?(?:very\s+)?most|max(?:imum)?|tops|absolute\s+max|"
        rf"or\s+(?:lower|below))\b",
        OWN,
        HI,
        "before",
        personal=True,
        fires=("50 max", "0.80 each max"),
        misses=("is 50 ur max",),
    ),
    _cue(
        "at-least-after",
        rf"{AFTER_PRICE}\s*(?:{_FILLER}[\w'’]+,?\s+){{0,3}}?"
        rf"(?:at\s+(?:the\s+)?(?:very\s+)?(?:least|lowest)|min(?:imum)?|"
        rf"or\s+(?:higher|above|up))\b(?!\s+(?:left|ago|later|away|walk|drive|"
        rf"wait|late|of|order|orders|purchase|quantity|qty|stay|term))",
        OWN,
        LO,
        "before",
        personal=True,
        fires=("20 minimum babe", "need 800 min for the laptop"),
        misses=("u said 230 min yesterday lol",),
    ),
    _cue(
        "max-before",
        r"\b(?:max(?:imum)?|tops|budget|ceiling|"
        rf"cap)(?:\s+for\s+{ME}\s+(?:is|would\s+be))?\s*[:=]?\s*"
        rf"(?!{PRICE}\s+per\s+(?:customer|person|household|order|"
        rf"family)\b)(?:between\s+)?(?={MASK})",
        OWN,
        HI,
        "after",
        personal=True,
        fires=("max 2k", "budget 3,5k"),
        misses=("Is your budget 50?",),
    ),
    _cue(
        "min-before",
        rf"\b(?:min(?:imum)?|floor)\s*[:=]?\s*(?={MASK})",
        OWN,
        LO,
        "after",
        personal=True,
        fires=("min 30", "min 350, firm"),
        misses=("min 30?",),
    ),
    # "more than 25 I can't pay", "under 1000 we cannot sell": the bound put first
    *_both(
        "bound-first",
        rf"(?:^\W*|\b(?:but|and|"
        rf"so)\s+)(?:{{words}})(?=\s*{PRICE}\s*,?\s*{FIRST_SUBJECT}\s*{_NEG}\s+(?:\w+\s+)"
        rf"?{_VERB}\b)",
        OWN,
        "after",
        {HI: r"more\s+than|over|above|beyond", LO: r"less\s+than|under|below|lower\s+than"},
        fires={
            HI: (
                "For the bicycle, more than 80,50 € I cannot pay.",
                "hello, the kettle is nice, but 40 is much for a used kettle. i can give "
                "20. more than 25 i can not pay.",
            ),
            LO: (
                "Under EUR 85 I'm not selling.",
                "Under 380 € I will not sell it, then I rather keep it in the cellar.",
            ),
        },
        misses={
            HI: ("For the bicycle, more than 80,50 € I cannot pay?",),
            LO: ("Under EUR 85 I'm not selling?",),
        },
    ),
    # "Above 85 it's cheaper for me to rent one", "below 2.75 a litre I'm pouring money down the
    # drain": the bound opens
    *_both(
        "bound-opens",
        r"^\W*(?:(?:but|so|honestly|look|anything|once\s+it\s+goes)\W+)*"
        r"(?:(?:going|selling|dropping|paying|spending|"
        r"letting\s+it\s+go)\s+(?:for\s+)?)?(?:much\s+)?{words}"
        rf"{PRICE_NEXT}(?!\s*{PRICE}\s*,?\s*{WE}\s+(?:can|could)(?!\s*not|"
        r"n?['’]t))",  # not "more than 25 I can pay"
        OWN,
        "after",
        {
            HI: r"(?:past|over|above|beyond|more\s+than|"
            r"north\s+of)",
            LO: r"(?:below|under|less\s+than|south\s+of)",
        },
        consequence=True,
        fires={
            HI: ("Over 50 and I walk.", "Over 48 and I'm out."),
            LO: ("below 12 i lose money", "Below 50 I lose money."),
        },
        misses={
            HI: ("Over 50 and shipping's free.",),
            LO: ("Under 2 a pot, these usually sell out by noon.",),
        },
    ),
    *_both(
        "struggle",
        rf"\b{WE}(?:['’]d|\s+would)\s+(?:really\s+)?(?:struggle|"
        rf"be\s+hard[- ]pressed)(?:\s+to\s+{_VERB}{_OBJ_OPT})?"
        rf"\s+(?:for\s+)?{{words}}",
        OWN,
        "after",
        {HI: _HI_COMP, LO: _LO_COMP},
        fires={
            HI: ("I'd struggle past 60.", "I'd be hard pressed to go over 1.25."),
            LO: (
                "I'd be hard pressed to do less than 8.",
                "I'd struggle to let it go for under 130.",
            ),
        },
        misses={HI: ("I'd struggle past 60?",), LO: ("I'd be hard pressed to do less than 8?",)},
    ),  # "I'd struggle past 60"
    _cue(
        "up-to",
        rf"{FIRST_MODAL}\s+(?:\w+\s+)?(?:go|pay|spend|afford|stretch|do)\s+(?:up\s+to|"
        rf"as\s+much\s+as)\b",
        OWN,
        HI,
        "after",
        fires=("i can go up to 3.20 tops", "I can spend up to $650 on this."),
        misses=("i can go up to 3.20 tops?",),
    ),
    # as high as I can go / I can go as high as 2.45
    _cue(
        "as-high-as",
        rf"{FIRST_MODAL}\s+{_ADV}(?:go|pay|spend|stretch|come\s+up|do)\s+as\s+(?:high|"
        rf"far|much)\s+as",
        OWN,
        HI,
        "after",
        fires=("I can go as high as 1.60 a pound.", "I can go as high as 2.45, no more."),
        misses=("I can go as high as 1.60 a pound?",),
    ),
    _cue(
        "as-low-as",
        rf"{FIRST_MODAL}\s+{_ADV}(?:go|sell|drop|come\s+down|do|accept|"
        rf"take)\s+as\s+(?:low|far|little)\s+as",
        OWN,
        LO,
        "after",
        fires=(
            "I can go as low as 2.55 for you.",
            "I paid $640 for this sofa two years ago. I'd accept as little as $250 for it now.",
        ),
        misses=("I could go as low as you like if you take all ten.",),
    ),
    _cue(
        "as-high-as-i",
        rf"\bas\s+(?:high|far|much)\s+as\s+{FIRST_SUBJECT}\s*(?:(?:can|could|will|"
        rf"am\s+able\s+to)\b|(?:go|pay|spend|stretch)\b)",
        OWN,
        HI,
        "before",
        fires=("130 is as high as I'd go.", "120 is as far as I can stretch for the bike."),
        misses=("That's as high as I go. My budget only has 75 in it.",),
    ),
    _cue(
        "as-low-as-i",
        rf"\bas\s+(?:low|far)\s+as\s+{FIRST_SUBJECT}\s*(?:(?:can|could|will|"
        rf"(?:['’]m|am)\s+(?:able|allowed|willing|prepared)\s+to)\b|"
        rf"(?:go|sell|drop|come\s+down)\b)",
        OWN,
        LO,
        "before",
        fires=(
            "$3,600 is as low as I'll go for this one.",
            "€380 is as low as I'll go, and that's final.",
        ),
        misses=("That's as low as I go.",),
    ),
    # I can only afford / all I have / I've got 80 set aside / my wallet stops at
    _cue(
        "i-afford",
        (
            rf"{FIRST_SUBJECT}\s+(?:can|could)\s+(?:only\s+|just\s+|barely\s+|"
            rf"realistically\s+)?afford\b(?:\s+up\s+to)?",
            rf"{FIRST_SUBJECT}\s+(?:can|could)\s+only\s+(?:spend|pay|manage|justify|go\s+up\s+to|"
            rf"stretch\s+to|allocate|commit|put(?:\s+(?:in|toward|towards|down))?)\b",
        ),
        OWN,
        HI,
        "after",
        fires=(
            "I can only afford 3.60.",
            "I can afford 60 at most.",
            "I can only pay up to 0.75 for each sticker.",
        ),
        misses=("If I could afford 2,000 I wouldn't be haggling.",),
    ),
    _cue(
        "i-only-have",
        rf"(?:{FIRST_SUBJECT}\s*|^\W*)(?:['’]ve\s+|have\s+)?(?:still\s+)?(?:only|just|"
        rf"literally|barely)\s+(?:have|got|['’]ve\s+got|brought|saved|earned|"
        rf"got\s+left|have\s+left|budgeted)\b",
        OWN,
        HI,
        "after",
        subjectless=True,
        fires=("i only have 50 cents", "i only brought a tenner"),
        misses=("I've only got 2 hours before my train, can we settle at 60?",),
    ),
    _cue(
        "i-have-to-spend",
        rf"{AFTER_PRICE}\s*(?:[\w'’]+\s+){{0,3}}?(?:to\s+spend|on\s+me|"
        r"left(?=\s+(?:on|in|till|until|for|after))|"
        r"in\s+my\s+(?:wallet|pocket|account|budget|purse)|budgeted|"
        r"set\s+aside|saved(?:\s+up)?|earmarked|allocated|allotted|"
        r"to\s+my\s+name|to\s+spare|available)\b",
        OWN,
        HI,
        "before",
        fires=("I only have 7.50 on me.", "only have 0.75 on me lol"),
        misses=("If I had 10k to spend I'd take both.",),
    ),
    _cue(
        "i-have-total",
        rf"{FIRST_SUBJECT}\s*(?:['’]ve|have)?\s*(?:got|have|['’]m\s+working\s+with|"
        rf"am\s+working\s+with)\s+(?:(?:like|about|around|only|just|"
        rf"maybe)\s+)?(?={PRICE}\s+(?:[\w'’]+\s+){{0,2}}?(?:total|in\s+total|"
        rf"altogether|all\s+in)\b)",
        OWN,
        HI,
        "after",
        fires=("i have like 12 bucks total", "I have 200 total for this."),
        misses=("i have like 12 bucks total?",),
    ),
    _cue(
        "you-have-to-spend",
        rf"{AFTER_PRICE}\s*(?:[\w'’]+\s+){{0,2}}?(?:in\s+{YOUR}\s+(?:pocket|"
        rf"wallet|purse|account|budget)|on\s+you|to\s+spend)\b",
        OTHER,
        HI,
        "before",
        fires=("Surely 1.50 fits in your budget.", "you clearly have more than 5k to spend"),
        misses=("Do you really only have 30 on you?",),
    ),
    _cue(
        "where-i-stop",
        (
            rf"\bwhere\s+{FIRST_SUBJECT}\s+(?:stop|draw\s+the\s+line|tap\s+out|max\s+out|"
            rf"bottom\s+out)\b",
            rf"{FIRST_SUBJECT}\s+(?:stop|draw\s+the\s+line|tap\s+out|max\s+out|"
            rf"top\s+out|bottom\s+out)\s+at\b",
        ),
        OWN,
        None,
        "near",
        fires=("Look, ninety is where I stop.", "Ok, I stop at 350. So we're 10 apart."),
        misses=("Look, ninety is where I stop?",),
    ),
    _cue(
        "can-only",
        rf"{_SUBJ}(?:(?:can|could)\s+only|(?:['’]m|am|are|"
        rf"['’]re)\s+only\s+(?:allowed|permitted|authori[sz]ed|"
        rf"cleared)\s+to)\s+(?:swing|spend|afford|manage|pay|stretch\s+to|expense|"
        rf"claim)\b",
        OWN,
        HI,
        "after",
        (BUYER,),
        fires=("I can only afford 3.60.", "i can only swing 120 this month"),
        misses=("I can only afford 3.60?",),
    ),
    _cue(
        "costs-to-make",
        r"\bcosts?\s+(?:me\s+|us\s+)?(?:about\s+|around\s+|roughly\s+|"
        rf"nearly\s+)?(?={PRICE}\s+(?:\w+\s+)?to\s+(?:make|produce|build|grow|bake|"
        r"brew|print|put\s+up|knit|sew|raise))",
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=("it cost me 85 bucks to make", "cost me 22 to make each one so"),
        misses=("it cost me 85 bucks to make?",),
    ),
    _cue(
        "i-have-only",
        rf"{FIRST_SUBJECT}\s*(?:have|['’]ve\s+got|['’]ve|got)\s+(?:only|just|"
        rf"exactly(?=\s*{PRICE}\s+(?:\w+\s+)?(?:for|to\s+spend|to\s+work\s+with)\b))\b",
        OWN,
        HI,
        "after",
        fires=("I've only got a tenner.", "I have exactly €15 for this."),
        misses=("I've only got 2 hours before my train, can we settle at 60?",),
    ),
    _cue(
        "i-have-cash",
        rf"{FIRST_SUBJECT}\s*(?:['’]ve|have)?\s*(?:got|have)\s+(?:(?:like|about|only|just|"
        rf"exactly)\s+)?(?={PRICE}\s+(?:in\s+)?cash\b)",
        OWN,
        HI,
        "after",
        (BUYER,),
        fires=(
            "I have 250 in cash. 250, take it or leave it.",
            "I've got 120 in cash on me and that's the lot.",
        ),
        misses=("If i have 250 in cash. 250, take it or leave it, fine.",),
    ),
    _cue(
        "leaves-me",
        rf"\b(?:leaves|leaving|left)\s+{ME}\s+(?:with\s+)?(?:(?:only|just|about|"
        rf"around|roughly|exactly)\s+)?(?={PRICE}(?:\s+\w+)?\s+(?:for|to\s+spend|"
        r"to\s+put)\b)",
        OWN,
        HI,
        "after",
        (BUYER,),
        fires=(
            "my scholarship stipend leaves me 800 for a laptop",
            "The student loan disbursement left me 900 for a laptop.",
        ),
        misses=("my scholarship stipend leaves me 800 for a laptop?",),
    ),  # "my stipend leaves me 800 for a laptop"
    # money from elsewhere that bounds a buyer: "the grant covers 5,000", "I was approved for
    # 18,000", "my boss gave me 2k for it"
    _cue(
        "covers",
        r"\b(?:grant|sponsor(?:ship)?|insurance|insurer|employer|loan|allowance|"
        r"voucher|stipend|scholarship|fund|funding|hospital|school|department|board|"
        r"company|finance)\s+(?:only\s+)?(?:covers?|allows?|approved|provides?|"
        rf"(?:gave|gives|sent)\s+{ME})\b(?:\s+(?:up\s+to|only|at\s+most))?",
        OWN,
        HI,
        "after",
        (BUYER,),
        fires=(
            "The grant only covers equipment up to 18,500.",
            "The grant only covers 3,500 for the microscope.",
        ),
        misses=("£1,800 is all the grant covers for the software.",),
    ),
    _cue(
        "approved-for",
        rf"{FIRST_SUBJECT}\s*(?:['’]ve|have|was|were|['’]m|am|got|['’]ve\s+been|"
        rf"have\s+been)?\s*(?:pre-?)?approved\s+for\b",
        OWN,
        HI,
        "after",
        (BUYER,),
        fires=(
            "I've been approved for 7,500, so 7,500 is my final offer.",
            "The budget I've been approved for this purchase is 20,000.",
        ),
        misses=("I got approved for a 20,000 home equity line, but that's for the kitchen.",),
    ),
    _cue(
        "as-far-as-my-money",
        rf"{AFTER_PRICE}\s+is\s+as\s+(?:far|much)\s+as\s+my\s+(?:money|budget|cash|"
        r"funds|wallet|savings)\s+(?:goes|stretches|will\s+(?:go|stretch)|"
        r"allows)\b",
        OWN,
        HI,
        "before",
        (BUYER,),
        fires=("honestly 2.20 is as far as my money goes", "200 is as far as my money goes."),
        misses=("honestly 2.20 is as far as my money goes?",),
    ),
    _cue(
        "gave-me-for",
        rf"\b(?:{PEOPLE}|mom|grandma|grandpa|gran|nan)\s+(?:gave|sent|lent|"
        rf"handed)\s+{ME}\s+(?={PRICE}\s+(?:for|to\s+spend)\b)",
        OWN,
        HI,
        "after",
        (BUYER,),
        fires=("Mom gave me 20 for this.", "My boss gave me 2k for the whole setup."),
        misses=("Mom gave me 20 for this?",),
    ),
    _cue(
        "got-for-it",
        rf"{FIRST_SUBJECT}\s*(?:['’]ve|have)?\s*(?:got|have)\s+(?:(?:about|around|like|only|"
        rf"just)\s+)?(?={PRICE}\s+(?:for|toward|towards)\s+(?:it|this|that|these|"
        rf"them)\b)",
        OWN,
        HI,
        "after",
        (BUYER,),
        fires=("i got 60 bucks for this, thats it", "I have 250 for this phone. Final offer."),
        misses=("If i got 60 bucks for this, thats it, fine.",),
    ),
    _cue(
        "keep-it-under",
        r"\b(?:need|have|has|got)\s+to\s+keep\s+(?:it|this|things|"
        r"the\s+\w+\s+)?\s*(?:under|below|within)\b",
        OWN,
        HI,
        "after",
        (BUYER,),
        fires=(
            "I need to keep this under 1,000 — it's a hard ceiling.",
            "I need to keep it under 500.",
        ),
        misses=("If i need to keep this under 1,000 — it's a hard ceiling, fine.",),
    ),
    _cue(
        "may-not-exceed",
        r"\b(?:not\s+to|may\s+not|must\s+not|shall\s+not|should\s+not|"
        r"can['’]?t|cannot|mustn['’]t)\s+exceed\b",
        OWN,
        HI,
        "after",
        personal=True,
        fires=("Can't exceed 9.99.", "We cannot exceed 3.2k on the fence."),
        # "I was told by finance not to exceed 18k"; "your cost can't exceed 600"
        misses=("Can't exceed 9.99?",),
    ),
    _cue(
        "all-my-money",
        rf"\b(?:all|everything)\s+(?:of\s+)?{MY}\s+(?:money|cash|savings|"
        r"funds)\b",
        OWN,
        HI,
        "near",
        (BUYER,),
        fires=(
            "I have only 200 euro for this, is all my money.",
            "I have only 4 euro for the bread, is all my money",
        ),
        misses=("I have only 200 euro for this, is all my money?",),
    ),
    _cue(
        "what-i-have",
        rf"\bwhat\s+{FIRST_SUBJECT}\s*(?:have|['’]ve\s+got|got)\s+(?:in\s+my\s+\w+|on\s+me|"
        rf"left|available|to\s+spend|to\s+work\s+with|"
        rf"for\s+(?:this|it|that|these|them)|until|till)\b",
        OWN,
        HI,
        "near",
        (BUYER,),
        fires=(
            "4 dollars is what I have for this.",
            "Thirty is what I have in my pocket. Can you do it for that?",
        ),
        misses=(
            "Anything north of 3,000 for the car is beyond what I have available. Let's start at "
            "2,600.",
        ),
    ),
    _cue(
        "budgeted",
        rf"{FIRST_SUBJECT}\s*(?:['’]ve|have)?\s*(?:budgeted|earmarked|set\s+aside|"
        rf"saved(?:\s+up)?|allocated|allotted|put\s+aside)\b",
        OWN,
        HI,
        "after",
        fires=("I budgeted €5 for a plant.", "I budgeted $500 for a sofa."),
        misses=("Not a cent more than 60, and that's already over what I budgeted, which was 50.",),
    ),
    _cue(
        "all-i-have",
        rf"\b(?:all|everything|every\s+(?:cent|penny|dollar|euro|pound|buck|quid)|"
        rf"the\s+only\s+money|whatever)\s+(?:the\s+\w+\s+|"
        rf"of\s+the\s+\w+\s+)?(?:that\s+)?{FIRST_SUBJECT}\s*(?:['’]ve|have|can|could|"
        rf"['’]ve\s+got)?\s*(?:got|have|afford|spend|pay|manage|bring|brought|"
        rf"saved|budgeted|scrape\s+(?:together|up)|put\s+(?:toward|towards|into)|"
        rf"allocate|spare|swing|set\s+aside|part\s+with|put\s+up)\b",
        OWN,
        HI,
        "near",
        fires=("250 is all i got", "All I have: 3,200."),
        misses=("22 bucks?? thats literally all i got rn fr",),
    ),
    _cue(
        "what-i-can-afford",
        rf"\bwhat\s+{FIRST_SUBJECT}\s+(?:can|could)\s+(?:realistically\s+|actually\s+|"
        rf"really\s+)?(?:afford|spend|pay|put\s+(?:toward|towards|into)|"
        rf"manage|give)\b",
        OWN,
        HI,
        "near",
        fires=(
            "I'm on a pension; 30 a week is what I can manage.",
            "On my pension, 175 is the top of what I can spend.",
        ),
        misses=("that's way above what i can spend",),
    ),
    _cue(
        "wallet",
        rf"\b{MY}\s+(?:wallet|pocket|purse|bank\s+account|account|budget|funds|"
        r"finances|cash)\s+(?:\w+\s+)?(?:stops|tops\s+out|maxes\s+out|caps\s+out|ends|"
        r"runs\s+out|only\s+(?:has|stretches|goes))\b",
        OWN,
        HI,
        "after",
        fires=("my wallet stops at 90", "my wallet stops at 12 lol"),
        misses=("Forty is where my budget ends for the shoes.",),
    ),
    _cue(
        "wallet-says",
        r"\b(?:my\s+)?(?:wallet|budget|bank\s+account|bank|account|purse)\s+says\b",
        OWN,
        HI,
        "after",
        (BUYER,),
        fires=("lol my wallet says 1.20 and that's it", "Wallet says 35, so that's where I'm at."),
        misses=("Past 8k the bank says no.",),
    ),
    _cue(
        "tops-out",
        (
            r"\b(?:tops|maxes|caps|tapped|topped|maxed)\s+out\s+at\b",
            rf"\b(?:capped|maxed(?:\s+out)?|limited|tapped)(?:\s+{ME})?\s+(?:at|to)\b",
            rf"\bapproved\s+{ME}\s+for\b",
            r"\bcapped\s+(?:\w+\s+){1,7}?at\b",
            r"\b(?:authori[sz]ed|approved|budgeted)\s+(?:\w+\s+)?up\s+to\b",
            r"\b(?:prepared|willing|able|allowed|permitted|authori[sz]ed)\s+to\s+(?:pay|spend|"
            r"go)\s+up\s+to\b",
            rf"\breimburse\s+{ME}\s+(?:for\s+)?up\s+to\b",
            r"\bcaps\s+(?!(?:transfers|withdrawals|payments|deposits)\b)(?:\w+\s+){1,4}at\b",
            rf"\bonly\s+(?:lets|allows|permits)\s+{ME}\s+(?:to\s+)?(?:spend|pay|"
            r"go\s+(?:up\s+)?to)\b",
            rf"\bdown\s+to\s+{MY}\s+last\b",
            rf"\b(?:won['’]?t|doesn['’]?t|will\s+not|does\s+not)\s+let\s+{ME}\s+(?:spend|pay|"
            r"go)\s+(?:more\s+than|over|above|beyond)",
        ),
        OWN,
        HI,
        "after",
        fires=(
            "i'm capped at 1.5",
            "im tapped out at 32",
            "The bank approved me for 9,500, so that's my ceiling.",
            "My boss capped the catering at 900.",
            "My financing is approved up to $24,000.",
            "I have been authorized to spend up to 3,600 on this purchase.",
            "The company will reimburse me up to €900 for the laptop, nothing above that.",
            "The board caps this consulting engagement at 60,000.",
            "My company only lets me spend 2,000 on the workstation.",
            "Im down to my last 20 so thats it for the jacket",
            "My dad won't let me spend more than 3,400 of the trust money on the horse trailer.",
        ),
        misses=("Are you able to go up to 60?",),
    ),
    _cue(
        "only-part-with",
        rf"{FIRST_SUBJECT}\s+(?:can|could)\s+only\s+(?:part\s+with|sell|"
        rf"let)\s+{_OBJ}(?:\s+go)?\s+for\b",
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=(
            "I can only part with the hatchback for 11,200 or more, since I bought it for 11,000 "
            "eight months ago.",
            "I can only part with it for 300 or more.",
        ),
        misses=(
            "If i can only part with the hatchback for 11,200 or more, since I bought it "
            "for 11,000 eight months ago, fine.",
        ),
    ),
    _cue(
        "my-x-budget",
        rf"\b{MY}\s+(?={PRICE}\s+(?!credit\b|weight\b|speed\b|data\b|"
        r"card\b)(?:\w+\s+)?(?:budget|limit|max(?:imum)?|ceiling|cap|floor|"
        r"minimum|allowance)\b)",
        OWN,
        None,
        "after",
        fires=(
            "$5,950 is above our $5,800 ceiling, but if you include the shutters we will find the "
            "difference.",
            "My 500 budget is all there is.",
        ),
        misses=(
            "If $5,950 is above our $5,800 ceiling, but if you include the shutters we will find "
            "the difference, fine.",
        ),
    ),
    _cue(
        "a-x-budget",
        rf"\b(?:a|an)\s+(?={PRICE}\s+(?:budget|allowance|limit|cap|ceiling)\b)",
        OWN,
        HI,
        "after",
        personal=True,
        fires=(
            "I'm working with a 700 euro cap for the wedding cake.",
            "Floor's 4.5k. You're probably sitting on a 5k budget anyway.",
        ),
        misses=("My wife set a 300 limit for Christmas gifts, but this one is for me.",),
    ),
    _cue(
        "i-need-at-least",
        rf"{_SUBJ}(?:really\s+)?(?:need|have\s+to|must|gotta|"
        rf"['’]ve\s+got\s+to|need\s+to)\s+(?:get|make|clear|see|recoup|"
        rf"recover|have|ask)?\s*(?:at\s+least|a\s+minimum\s+of|"
        rf"no\s+less\s+than)",
        OWN,
        LO,
        "after",
        subjectless=True,
        fires=("I need at least 2.5k.", "I need at least 80 for it."),
        misses=("I'll need at least two days' notice.",),
    ),
    _cue(
        "need-to-cover",
        rf"{_SUBJ}(?:really\s+)?(?:need(?:\s+to\s+(?:get|clear|make|charge))?|"
        rf"have\s+to\s+(?:get|charge|ask|clear|make)|"
        rf"must\s+(?:get|charge|ask|clear|make))"
        rf"(?=\s*¤[^.;!?]{{0,30}}?\bto\s+(?:cover|break\s+even|"
        rf"pay\s+(?:for|off)|recoup|recover|make\s+it\s+worth|stay\s+afloat|"
        rf"keep\s+the\s+lights\s+on|make\s+rent)\b)",
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=(
            "I need 2,600 minimum to cover what I paid.",
            "I need to clear 1.05 a can to stay afloat.",
        ),
        misses=("It's not like I need 40 for it to break even.",),
    ),
    _cue(
        "worth-my-while",
        r"\b(?:to\s+make\s+it|for\s+it\s+to\s+be|isn['’]?t|is\s+not|"
        rf"not)\s+worth\s+{MY}\s+(?:while|time)\b",
        OWN,
        LO,
        "near",
        conditional=True,
        fires=(
            "Below 8 quid it's not worth my time.",
            "Under a fiver and it's not worth my time to wrap it.",
        ),
        misses=("Anything below €75 and the repair isn't worth my time.",),
    ),
    # a seller's cost: I paid 30 for it / it cost me 1.50 / I'm in for 460 / what I've got sunk into
    # it
    _cue(
        "i-paid",
        rf"(?:{_SUBJ}|\bhaving\s+)(?<!['’]d\s)(?<!['’]ll\s)(?<!would\s)"
        rf"(?<!will\s){_ADV}(?:paid|pay|gave|spent|"
        rf"dropped(?=\s+(?:like\s+|about\s+|around\s+|over\s+)?¤)|shelled\s+out|"
        rf"forked\s+out|laid\s+out|invested|sank|sunk|"
        rf"put)\b(?!\s+(?:for|on)\s+(?:a|an|another|my|similar|"
        rf"one)\b)(?!.{{0,25}}\b(?:similar|another|one\s+like|new\s+one|other\s+one|"
        rf"replacement|(?:my|our|the|an)\s+(?:other|first|old|"
        rf"previous))\b)(?!.{{0,15}}\b(?:for|on|into)\s+(?:the\s+|"
        rf"new\s+)?{_NOT_THE_ITEM})(?!\s+(?:my|the|"
        rf"our)\s+{_EXPENSES}\b)(?:\s+the\s+\w+)?",
        OWN,
        LO,
        "after",
        (SELLER,),
        subjectless=True,
        fires=("i paid 30 for it", "paid 100, min 110"),
        misses=("if i had 80 id pay 80 lol",),
    ),
    _cue(
        "cost-me",
        (
            r"(?<!would\s)(?<!will\s)(?<!['’]d\s)(?<!['’]ll\s)(?<!could\s)(?<!might\s)"
            rf"{_NOT_AFTER_EXPENSE}\b(?:cost|costs|costed|runs?|ran|charges?|charged|bills?|"
            rf"billed|owes)\s+{ME}\b(?!.{{0,25}}\b(?:for|on)\s+(?:the\s+|my\s+|"
            rf"a\s+)?(?:\w+\s+)?{_EXPENSES}\b)",
            rf"\b{MY}\s+(?:supplier|distributor|wholesaler|farmer|grower|vendor|landlord|"
            r"manufacturer|dealer)\s+(?:\w+\s+)?(?:charges|charged|bills|billed)\b",
            rf"\bset\s+{ME}\s+back\b",
            rf"\bputs?\s+{ME}\s+at\b",
            r"\b(?:averaged?|came|comes|worked|works)\s+out\s+(?:at|to)\b(?=.{0,20}\b(?:to|"
            rf"for)\s+{ME}\b)",
            rf"\b(?:come|comes|came)\s+to\b(?=.{{0,20}}\bfor\s+{ME}\b)",
        ),
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=(
            "cost me 2,50 each",
            "cost me 40, 45 final",
            "Our supplier charges us 6,40 € per bottle, so that's our floor.",
            "These set me back 2,75 each at the wholesaler.",
            "Seed, water and diesel put me at 0.70 a head of lettuce before I earn a thing.",
            "Just so you know, this lens averaged out at 750 to me when I bought the lot.",
            "Ingredients and labels come to 4 a jar for me, so that's the floor.",
        ),
        misses=("Had I bought it new, it would have cost me 900.",),
    ),
    _cue(
        "i-bought-it-for",
        rf"{_SUBJ}{_ADV}(?:bought|buy|got|copped|scored|snagged|purchased|"
        rf"picked\s+up|picked(?=\s+\w+(?:\s+\w+)?\s+up\b)|acquired|"
        rf"sourced)\s+{_OBJ}(?:\s+(?:new|wholesale|myself|brand\s+new|"
        rf"originally|back|second-?hand|used))*(?:\s+(?:in|back\s+in|last|"
        rf"this)\s+\w+)?(?:\s+(?:new|wholesale))?(?:\s+up)?\s+(?:for|at)\b",
        OWN,
        LO,
        "after",
        (SELLER,),
        subjectless=True,
        fires=("got it for 65 myself", "I bought it for 260."),
        misses=("What if I picked it up tonight at 7, could you do 35?",),
    ),
    _cue(
        "what-i-paid",
        (
            rf"\bwhat\s+{FIRST_SUBJECT}\s*(?:['’]ve|have|originally|actually)?\s*(?:paid|spent|"
            rf"sunk|invested|put|got\s+sunk|have\s+sunk|['’]ve\s+got\s+sunk|got\s+in|"
            rf"have\s+in|['’]m\s+in\s+for)\b",
            rf"\bwhat\s+(?:it|they|this|these)\s+costs?\s+{ME}\b",
        ),
        OWN,
        LO,
        "near",
        (SELLER,),
        relative=True,
        fires=(
            "What I paid was 140. I'm firm at 160.",
            "no lower than 45 sorry, that's what i paid",
            "Not a cent under 95, that's what it cost me.",
        ),
        misses=("12 doesn't even cover what I paid.",),
    ),
    _cue(
        "cost-was",
        r"^\W*(?:the\s+|and\s+)?(?:[\w-]+\s+){0,2}?costs?(?:\s+alone)?(?:\s+(?:on|"
        r"for|of|to\s+me\s+on)\s+(?:\w+\s+){0,3}?)?\s*(?=(?:was|is)\b)",
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=("my cost on these is 1.10", "my cost was 0.90 a piece"),
        misses=("if ur cost was like 20 then 25 seems fair no?",),
    ),
    _cue(
        "at-cost",
        r"\b(?:at|below|under)\s+cost\b",
        OWN,
        LO,
        "near",
        (SELLER,),
        relative=True,
        loss=True,
        fires=(
            "At 55 I'm basically at cost, which is 52.",
            "I'm at cost already at 5,400 for the lot of laptops.",
        ),
        misses=("Can't do less than 25, I'm already at cost.",),
    ),
    _cue(
        "thats-all",
        r"\bthat['’]?s\s+all(?:\s+of\s+it|\s+there\s+is)?\b(?!\s+(?:for|from|you|I|"
        r"we|the|my))",
        OWN,
        HI,
        "before",
        (BUYER,),
        fires=(
            "Right, I've got 220 in cash and that's all of it.",
            "I've got 18.50 after the bus ticket, and that's all of it.",
        ),
        misses=("If right, I've got 220 in cash and that's all of it, fine.",),
    ),
    _cue(
        "in-costs",
        rf"{AFTER_PRICE}(?:\s+\w+)?\s+in\s+(?:costs?|materials?|ingredients|yarn|wool|timber|"
        r"fabric|supplies)\b",
        OWN,
        LO,
        "before",
        (SELLER,),
        fires=("Each bar costs me $3 in materials.", "It cost me 120 in materials alone."),
        # "180 in materials", "30 in timber and finishing"
        misses=("Each bar costs me $3 in materials?",),
    ),
    _cue(
        "materials-came-to",
        r"\b(?:materials?|ingredients|yarn|wool|timber|fabric|"
        r"supplies)\s+(?:\w+\s+){0,4}?(?:came\s+to|come\s+to|"
        r"cost(?:s)?(?:\s+me|\s+us)?|ran\s+(?:me\s+)?(?:to\s+)?|"
        r"total(?:led)?)\b",
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=(
            "the wool cost me 8 and I need 12 for the jumper",
            "Ingredients come to about £5 a tray, so I can't go below £7.",
        ),
        misses=("The fabric and batting alone cost me about ninety dollars.",),
    ),
    _cue(
        "is-what-it-cost-me",
        rf"{AFTER_PRICE}(?:\s+[\w'’]+){{0,3}}?\s+(?:is|was|"
        rf"['’]s)\s+what\s+(?:[\w'’]+\s+){{0,4}}?(?:cost\s+{ME}|"
        rf"costs\s+{ME}|{WE}\s+(?:paid|payed|spent)|"
        rf"charges?\s+{ME})\b",
        OWN,
        LO,
        "before",
        (SELLER,),
        fires=(
            "sorry mate 30 quid is what it cost me, 35 is my final",
            "Yeah ok I hear you, but 20 is what I paid, can't go under.",
        ),
        misses=("Two thousand is what the tiles and grout cost me. I won't do the job for less.",),
    ),
    _cue(
        "where-i-lose",
        rf"{AFTER_PRICE}\s+is\s+(?:where|when)\s+{WE}\s+(?:start|begin)\s+(?:losing|"
        r"to\s+lose)\b",
        OWN,
        LO,
        "before",
        (SELLER,),
        fires=(
            "honestly 3k is where i start losing money on this, i put a new engine in it",
            "40 is where I start losing money.",
        ),
        misses=(
            "If honestly 3k is where i start losing money on this, i put a new engine in it, fine.",
        ),
    ),
    _cue(
        "i-owe",
        rf"{FIRST_SUBJECT}\s+(?:still\s+)?owe\b",
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=(
            "I can't go under 4.5k, I still owe that on it.",
            "I owe 11,500 on the loan, so I can't sell for less.",
        ),
        misses=("I need at least 300 to cover what I owe on it.",),
    ),
    _cue(
        "in-for",
        (
            rf"{FIRST_BE}\s+(?:already\s+)?(?:in|into)(?:\s+{_OBJ})?\s+(?:for|at)\b",
            rf"{FIRST_BE}\s+(?:already\s+)?(?:out|down|out\s+of\s+pocket)(?=\s+¤)",
            rf"{FIRST_BE}\s+(?:already\s+)?at(?=\s+{PRICE}\s+(?:all\s+in|cost|in\s+costs?|invested|"
            r"total|"
            r"with|after)\b)",
        ),
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=(
            "im at 200 cost on this. wont go below 230, final",
            "We're in at 21k on this Tacoma, can't drop below.",
            "I'm already down 1,300 on this telescope and I've barely used it.",
        ),
        misses=("If im at 200 cost on this. wont go below 230, final, fine.",),
    ),
    _cue(
        "break-even",
        r"\bto\s+break\s+even\b",
        OWN,
        LO,
        "near",
        (SELLER,),
        conditional=True,
        fires=(
            "to break even on the cake I need 30",
            "I need 1,75 per item to break even after fees.",
        ),
        misses=("It's not like I need 40 for it to break even.",),
    ),
    _cue(
        "anything-over",
        (
            r"\b(?:anything|everything|any\s+price)\s+(?:over|above|north\s+of|past|"
            rf"beyond|more\s+than|higher\s+than){PRICE_NEXT}",
            r"\b(?:no|nope|nothing)\s+(?:to\s+)?(?:anything\s+)?(?:past|over|above|"
            rf"beyond){PRICE_NEXT}",
        ),
        OWN,
        HI,
        "after",
        (BUYER,),
        personal=True,
        fires=("my wallet says no past 40, sorry", "anything over 60 quid and im out"),
        misses=("Has your boss approved anything above 10k?",),
    ),
    _cue(
        "anything-under",
        r"\b(?:anything|everything|any\s+price|no\s+offers?)\s+(?:under|below|"
        rf"south\s+of|less\s+than|lower\s+than){PRICE_NEXT}",
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=("no offers under 100 pls", "I'm losing money on anything below 14."),
        misses=("no offers under 100 pls?",),
    ),
    _cue(
        "got-in-it",
        rf"{FIRST_SUBJECT}\s*(?:['’]ve|have)?\s*(?:got|have)\s+(?:(?:about|like|over|"
        rf"already)\s+)?(?={PRICE}\s+(?:already\s+)?(?:in|into)\s+(?:it|this|them|these|"
        rf"that|the\s+(?!{_NOT_THE_ITEM})\w+)\b)",
        OWN,
        LO,
        "after",
        (SELLER,),
        fires=(
            "I have 1,100 into it with parts.",
            "I've got 25 in it already counting the new battery.",
        ),
        misses=("I have 1,100 into it with parts?",),
    ),
    _cue(
        "sunk",
        rf"{AFTER_PRICE}\s+(?:\w+\s+)?(?:(?:sunk|invested|tied\s+up)\s+(?:in|into)?|"
        rf"into)\s*(?:it|this|them|these|the\s+(?!{_NOT_THE_ITEM})\w+)\b",
        OWN,
        LO,
        "before",
        (SELLER,),
        fires=("I have 1,100 into it with parts.", "Can't go below 5, I've got 5 invested in it."),
        misses=("I have 1,100 into it with parts?",),
    ),
    # losing money: below 1.70 I lose money / I'd be losing money under 4.10 / at 1.20 I only break
    # even
    _cue(
        "loss",
        (
            rf"(?:{FIRST_SUBJECT}|['’]d|['’]m|me|us|my|our)\b(?:(?!\b(?:not|never)\b|"
            rf"n['’]t\b)[^¤]){{0,30}}?\b(?:(?:lose|losing|lost)(?!\s+(?:the|a|this|that|"
            r"your)\s+(?:sale|deal|customer|buyer|sleep))|loss|in\s+the\s+red|underwater|"
            r"under\s+water|out\s+of\s+pocket|break(?:ing)?\s+even|barely\s+cover|"
            r"n['’]?t\s+(?:even\s+)?cover|not\s+(?:even\s+)?cover(?:ing)?|paying\s+to\s+sell|"
            r"giving\s+(?:it|them|\w+|the\s+\w+)\s+away|eat(?:ing)?\s+the\s+cost|"
            r"working\s+for\s+(?:free|nothing)|can['’]?t\s+(?:even\s+)?cover|cannot\s+cover|"
            r"a\s+loss|at\s+a\s+loss|making\s+nothing|make\s+nothing|no\s+profit|zero\s+profit|"
            r"better\s+off|(?:just|rather)\s+keep|prefer\s+to\s+keep|make\s+(?:it|them|"
            r"\w+)\s+pay|(?:don['’]?t|do\s+not)\s+make\s+(?:anything|a\s+(?:penny|cent|dime|"
            r"profit)|any\s+(?:money|profit))|(?:wouldn['’]?t|won['’]?t|doesn['’]?t|"
            r"don['’]?t)\s+(?:even\s+)?cover)\b",
            r"\bloses?\s+(?:me\s+)?money\b",
            rf"\ba\s+loss\s+for\s+{ME}\b",
            rf"\bout\s+of\s+{MY}\s+own\s+pocket\b",
        ),
        OWN,
        LO,
        "threshold",
        (SELLER,),
        conditional=True,
        loss=True,
        fires=(
            "At 30 the rest comes out of my own pocket.",
            "below 12 i lose money",
            "Below 50 I lose money.",
            "After platform fees, anything below 22 dollars loses me money.",
            "below 2.5 it's a loss for me",
        ),
        misses=("I'm not saying I'd lose money at 30, I'm saying I'd prefer 35.",),
    ),
    # refusing everything past a threshold: anything above 1,200 is out of reach / under 7k I'd
    # rather keep it
    _cue(
        "refuse-hi",
        (
            rf"\b(?:out\s+of|beyond|outside(?:\s+of)?|over|above|past)\s+{MY}\s+(?:budget|"
            r"reach|"
            r"range|price\s+range|means|limit|mandate|authority|remit)",
            r"\bout\s+of\s+(?:reach|range|the\s+question)\b",
            rf"\bbeyond\s+{ME}\b",
            rf"\btoo\s+(?:much|rich|steep)\s+for\s+{ME}\b",
            rf"\bmore\s+than\s+{WE}\s+(?:can|could)\b",
            rf"\b{WE}\s*(?:['’]m|am|['’]re|are)\s+out\b",
            rf"\b{WE}\s*(?:['’]ll|will)\s+(?:walk|pass)\b",
            r"\bno\s+deal\b",
            r"\bnot\s+happening\b",
            r"\ba\s+no[- ]go\b",
            r"\bdeal[- ]?breaker\b",
            rf"\b{WE}\s*(?:\w+\s+)?(?:can['’]?t|cannot|won['’]?t|couldn['’]?t)\s+(?:make\s+(?:it|"
            r"this|that|the\s+\w+)\s+work|do|afford|go|justify|swing|manage)\b",
            rf"\b{WE}\s*(?:['’]d|would)\s+(?:rather|sooner)\b",
            r"\bforget\s+it\b",
            r"\bwalk(?:ing)?\s+away\b",
            r"\bI\s*(?:['’]m|am)\s+(?:not\s+)?(?:interested|buying|paying)\b",
            r"\bneeds?\s+(?:a\s+)?sign-?off\b",
            rf"\b(?:doesn['’]?t|won['’]?t|does\s+not|will\s+not)\s+work\s+for\s+{ME}\b",
            r"\boff\s+the\s+table\b",
            r"\b(?:won['’]?t|will\s+not|can['’]?t|cannot)\s+(?:authori[sz]e|approve|sign\s+off)\b",
            rf"\bblows?\s+{MY}\s+\w*\s*budget\b",
        ),
        OWN,
        HI,
        "threshold",
        (BUYER,),
        conditional=True,
        fires=(
            "Anything over 500 is more than I can do.",
            "Anything above 80 and I'll walk.",
            "Anything over 500, no deal.",
            "More than 80 is not happening.",
            "Over 400 is a no-go for me.",
            "Anything above 80 is a deal-breaker.",
            "Anything over 500, forget it.",
            "Anything over 5,000 needs sign-off from my boss.",
            "I can't go past 580.",
            "I can't go over 110.",
            "Anything over 2.5 is out of my budget.",
            "Anything past 1,350 is out of reach.",
            "Everything over 4,000 is beyond me.",
            "Above 50 a month for the parking spot is too much for me.",
            "Over 48 and I'm out.",
            "Above 0.80 a piece I'd rather make them myself.",
            "Anything north of 700 and I'd have to walk away.",
            "I'm not paying more than 22 for the plant, and I bet you'd take 18.",
            "I'd love to, but anything north of 1.8k just doesn't work for me.",
            "Everything above 250 is off the table for me.",
            "If this goes past 60 grand the board won't sign off.",
            "Anything above 5,800 blows our tooling budget.",
        ),
        misses=("I'd rather not lose the sale over five bucks, so let's say 45?",),
    ),
    _cue(
        "refuse-lo",
        (
            rf"\b(?:below|under|beneath)\s+{MY}\s+(?:cost|floor|minimum|limit|break[- ]?even|"
            r"rate)\b",
            rf"\b{WE}\s*(?:['’]d|would)\s+(?:\w+ly\s+)?(?:rather|sooner)\b",
            rf"\bstays?\s+with\s+{ME}\b",
            rf"\b{WE}\s*(?:['’]m|am)\s+(?:not\s+(?:selling|interested)|keeping)\b",
            r"\bno\s+deal\b",
            r"\bnot\s+happening\b",
            r"\bforget\s+it\b",
            r"\bwalk(?:ing)?\s+away\b",
            r"\ba\s+no[- ]go\b",
            rf"\b{WE}\s*(?:['’]ll|will)\s+(?:keep|walk|pass)\b",
            r"\bnot\s+worth\s+(?:it|my\s+time)\b",
            r"\b(?:doesn['’]?t|won['’]?t|does\s+not|will\s+not)\s+(?:really\s+)?work\s+for\s+(?:me|"
            r"us)\b",
            rf"\b{WE}\s*(?:\w+ly\s+)?(?:can['’]?t|cannot|won['’]?t|will\s+not|couldn['’]?t|"
            r"shan['’]t)\s+(?:do|go|let|part|sell|justify|accept)\b",
        ),
        OWN,
        LO,
        "threshold",
        (SELLER,),
        conditional=True,
        fires=(
            "Anything under 30 is below my cost.",
            "Anything under 500, no deal.",
            "Less than 80 is not happening.",
            "Anything under 500, forget it.",
            "Anything below 80 and I'm walking away.",
            "Under 400 is a no-go.",
            "i wont sell under 7k",
            "i wont sell under 40",
            "I'd rather keep it than go below 80.",
            "Anything under 110 bucks and the dresser stays with me.",
            "Under EUR 85 I'm not selling.",
            "I'll keep driving it myself rather than take under 8,500.",
            "Below 8 quid it's not worth my time.",
            "Anything under 300 doesn't work for me.",
        ),
        misses=("7200 or no deal",),
    ),
    # the other side's limit: you can afford 80 / you'd pay a thousand easily / you probably paid
    # under 200
    _cue(
        "you-afford",
        rf"(?:{YOU}|{YOUR}\s+[\w-]+(?:\s+(?:department|team|office|board|manager|"
        rf"budget))?|\b(?:a|an|any)\s+[\w-]+(?:\s+[\w-]+)?\s+like\s+(?:you|"
        rf"yours))\s+(?:\w+ly\s+|still\s+)?(?:can|"
        rf"could)\s+(?:\w+\s+){{0,2}}?(?:afford|spend|"
        rf"pay(?!\s+{PRICE}\s+(?:now|upfront|up\s+front|today|first|down|"
        rf"as\s+a\s+deposit)\b)|handle|stre?tch\s+to|go\s+(?:up\s+)?to|manage|find|"
        rf"swing|spare|come\s+up\s+with|accommodate|absorb|sign\s+off\s+on|approve|"
        rf"part\s+with{PRICE_NEXT})\b(?:\s+(?:at\s+least|more\s+than|up\s+to|"
        rf"as\s+much\s+as|over|above))?",
        OTHER,
        HI,
        "after",
        fires=("u can def afford 80", "i know u can pay 2k"),
        misses=("So you can afford 80?",),
    ),
    _cue(
        "you-have",
        rf"{YOU}\s*(?:['’]ve|have|are)?\s*(?:(?:\w+ly|def|prob|surely|clearly|"
        rf"obviously|still)\s+)*(?:have|got|having)\s+(?:(?:more\s+than|at\s+least|"
        rf"over|well\s+over)\s+)?(?={MASK})(?!{PRICE}\s+(?:down|upfront|deposit)\b)",
        OTHER,
        HI,
        "after",
        fires=("i think u have more than 5 lol", "come on, you've got more than 2 bucks"),
        misses=("u got 50 in cash or nah",),
    ),  # not "you've got 10k down": a down payment
    _cue(
        "you-approved",
        (
            rf"(?:{YOU_BE}|{YOU}['’]ve\s+been|{YOUR}\s+(?:finance|loan|credit|"
            rf"mortgage)\s+(?:is|was|has\s+been))\s+(?:\w+\s+)?(?:pre-?)?approved\s+"
            rf"(?:for|to|up\s+to)\b",
            r"\bapproved\s+(?:you|u)\s+for\b(?:\s+(?:more\s+than|over|at\s+least))?",
        ),
        OTHER,
        HI,
        "after",
        fires=(
            "Your finance is approved to 15k, I know it.",
            "Your bank has clearly approved you for more than 12.5k.",
        ),
        misses=(
            "If your finance is approved to 15k, I know it, "
            # "you're clearly approved for 20k", "your bank has approved you for more than
            # 12.5k"
            "fine.",
        ),
    ),
    _cue(
        "you-are-in-for",
        rf"{YOU_BE}\s+(?:\w+\s+)?(?:in|into)(?:\s+{_OBJ})?\s+for\b",
        OTHER,
        LO,
        "after",
        fires=(
            "You're into this car for less than 6k, no question.",
            "You're in for less than 6k on this car, I'm sure.",
        ),
        misses=(
            "You're flying in for this show, you obviously budgeted at least $600 for tickets.",
        ),
    ),  # "you're into this car for less than 6k"
    _cue(
        "you-value-it",
        rf"{YOU}\s+(?:\w+ly\s+)?value\s+(?:it|this|them|"
        rf"these)\s+at(?:\s+(?:more\s+than|over|above|least))?",
        OTHER,
        HI,
        "after",
        fires=(
            "You clearly value it at more than 50, otherwise you wouldn't have come back three "
            "times.",
            "You value it at 300.",
        ),
        misses=(
            "If you clearly value it at more than 50, otherwise you wouldn't have come back three "
            "times, fine.",
        ),
    ),
    _cue(
        "whatever-you-paid",
        rf"\b(?:whatever|what)\s+{YOU}\s+(?:paid|spent|gave)\b",
        OTHER,
        LO,
        "near",
        (BUYER,),
        relative=True,
        fires=(
            "whatever you paid for it, it was less than 30 i reckon",
            "Whatever you paid for it, I'm sure it was less than 30, so 30 seems fair.",
        ),
        misses=("Is 1.50 below what you paid?",),
    ),
    _cue(
        "you-budgeted",
        rf"(?:{YOU}\s*(?:['’]ve|have)?|{YOUR}\s+[\w-]+(?:\s+[\w-]+)?"
        rf"(?:\s+(?:has|have))?)\s+(?:\w+\s+)?(?:budgeted|set\s+aside|saved|"
        rf"earmarked|approved|allocated)\b(?:\s+(?:at\s+least|more\s+than|over|"
        rf"above))?",
        OTHER,
        HI,
        "after",
        fires=(
            "Your boss approved at least 5k, I'm sure.",
            "Your finance is approved to 15k, I know it.",
        ),
        misses=("Are you approved for more than 20k?",),
    ),
    _cue(
        "you-can-go-above",
        rf"{YOU}\s+(?:can|could)\s+(?:\w+\s+){{0,2}}?(?:go|pay|"
        rf"spend)\s+(?:well\s+|way\s+|much\s+)?(?:above|over|beyond|"
        rf"higher\s+than|more\s+than|past)",
        OTHER,
        HI,
        "after",
        fires=(
            "Clearly you can go higher than 1.80.",
            "My minimum is 65, and I'm sure you can go above 70.",
        ),
        misses=("Clearly you can go higher than 1.80?",),
    ),
    _cue(
        "you-wont-go-below",
        rf"{YOU}\s+(?:\w+\s+)?(?:wouldn['’]?t|won['’]?t|would\s+not|"
        rf"will\s+not|can['’]?t|couldn['’]?t)\s+(?:go|sell|drop|come\s+down|"
        rf"take\s+less)\s+(?:any\s+)?(?:under|below|lower\s+than|"
        rf"less\s+than)",
        OTHER,
        LO,
        "after",
        fires=(
            "bet u wouldnt go lower than 1k on the bike anyway",
            "You probably wouldn't go below 8,500 anyway, so let's not waste time.",
        ),
        misses=("You said you wouldn't go under 70; was that final?",),
    ),
    _cue(
        "you-can-go-below",
        rf"{YOU}\s+(?:can|could)\s+(?:\w+\s+){{0,2}}?(?:go|sell|drop|"
        rf"come\s+down)\s+(?:well\s+|way\s+|much\s+)?(?:below|under|"
        rf"lower\s+than|less\s+than)",
        OTHER,
        LO,
        "after",
        fires=("you can clearly go lower than 90", "You can go below 300, I know it."),
        misses=("you can clearly go lower than 90?",),
    ),
    _cue(
        "you-ready-to-pay",
        rf"{YOU_BE}\s+(?:\w+\s+)?(?:prepared|willing|ready|able|happy|"
        rf"good)\s+(?:to\s+(?:pay|spend|go\s+(?:up\s+)?to|"
        rf"go\s+(?:higher|above|over|beyond|more)(?:\s+than)?)|for)\b",
        OTHER,
        HI,
        "after",
        fires=("ur clearly good for 3k", "ur def good for 370 u just got paid friday"),
        misses=("My neighbour told me you'd be willing to pay 40 for the mower.",),
    ),
    _cue(
        "nothing-for-you",
        (
            rf"{AFTER_PRICE}(?:\s+(?:a|an|per|each)(?:\s+[\w-]+)?|"
            r"\s+for\s+(?:it|this|that|the\s+[\w-]+)(?:\s+one)?)?\s*(?:is|['’]s|"
            r"would\s+be|will\s+be)\s+(?:\w+\s+)?(?:nothing|no\s+problem|peanuts|"
            r"pocket\s+change|small\s+change|chump\s+change)\s+(?:to|"
            r"for)\s+(?:you|u)\b",
            rf"{AFTER_PRICE}\s+(?:won['’]?t|will\s+not|wouldn['’]?t|"
            r"doesn['’]?t|ain['’]?t\s+gonna|isn['’]?t\s+going\s+to)\s+"
            r"(?:break\s+(?:the|your)\s+bank|break\s+(?:you|u|ya)|"
            r"hurt\s+(?:you|u))\b",
        ),
        OTHER,
        HI,
        "before",
        fires=(
            "You gig every weekend, 1,300 is nothing to you.",
            "700 is nothing for you, you'd pay it in a second.",
            "Dealer wanted 900 from you, so I know 600 ain't gonna break you.",
        ),
        misses=("You gig every weekend, 1,300 is nothing to you?",),
    ),
    _cue(
        "nothing-to-you",
        (
            rf"{AFTER_PRICE}\s+(?:would\s+)?(?:makes?|make)\s+(?:you|u)\s+happy\b",
            rf"{AFTER_PRICE}(?:\s+\w+)?\s+(?:(?:would|will|is|ai|wo|does)\s*(?:n['’]?t|"
            r"\s+not)\s+(?:be\s+)?(?:a\s+)?(?:problem|stretch|issue|big\s+deal)|(?:is|would\s+be|"
            r"['’]s)\s+(?:an?\s+)?(?:easy|small|trivial)\s+[\w-]+)\s+(?:for|to)\s+(?:you|u|ya)\b",
            rf"{AFTER_PRICE}\s+(?:is|would\s+be|['’]s)\s+(?:\w+\s+)?(?:fine|ok|okay|"
            r"plenty)\s+for\s+(?:you|u)\b",
            rf"{AFTER_PRICE}(?:\s+(?:a|an|per|each)\s+\w+)?\s+(?:would|"
            r"will)\s+(?:still\s+)?work\s+for\s+(?:you|u)\b",
        ),
        OTHER,
        None,
        "before",
        assertive=True,
        fires=(
            "I'm sure 0.50 per banana would still work for you.",
            "You do this run every day, I'm sure 35 is still fine for you.",
            "Look, you paid maybe 10 € for the whole box at a clearance, I'm sure 25 € makes you "
            "happy.",
            "you run a gallery so i'm guessing 400 wouldn't be a problem for you",
        ),
        misses=("I'm sure 0.50 per banana would still work for you?",),
    ),
    _cue(
        "you-ready-to-sell",
        rf"{YOU_BE}\s+(?:\w+\s+)?(?:prepared|willing|ready|happy|glad|"
        rf"pleased|fine|ok|okay)\s+(?:to\s+(?:sell|accept|take|do|"
        rf"let\s+\w+\s+go|go\s+down\s+to|get)|letting\s+\w+\s+go|selling|"
        rf"with|w/?|at)(?!\w)(?:\s+(?:it|them|for))*",
        OTHER,
        LO,
        "after",
        fires=("I'm sure you'd be fine at 8,50", "I'm sure you'd be fine with 14."),
        misses=("It's had 3 years of use, so I reckon you'd be happy with £270 x",),
    ),
    _cue(
        "you-can-take",
        rf"{YOU}\s+(?:\w+ly\s+)?(?:can|could)\s+(?:\w+\s+){{0,2}}?(?:take|"
        rf"accept|do|go\s+(?:down\s+)?to|go\s+as\s+low\s+as|come\s+down\s+to|"
        rf"sell\s+(?:\w+\s+)?for|let\s+(?:\w+\s+){{1,2}}go\s+for|work\s+with|"
        rf"live\s+with|afford\s+to\s+(?:accept|sell|take|let\s+\w+\s+go))\b",
        OTHER,
        LO,
        "after",
        fires=("u can surely do 2,10 then", "You can surely go down to 70."),
        misses=("You can do 60, or not?",),
    ),
    _cue(
        "you-can-go",
        rf"{YOU}\s+(?:can|could)\s+(?:\w+\s+){{0,2}}?(?:go|"
        rf"do)(?:\s+(?:up\s+)?to)?\b",
        OTHER,
        HI,
        "after",
        fires=("u can do 550 easy", "you can def do 45 for the lamp"),
        misses=("You can do 60, or not?",),
    ),
    _cue(
        "you-content",
        rf"{YOU_WOULD}\s+(?:\w+\s+)?be\s+(?:content|comfortable|happy|fine|ok|"
        rf"okay|satisfied|able\s+to\s+(?:live|work))\s+(?:with|at)\b",
        OTHER,
        None,
        "after",
        assertive=True,
        fires=("I'm sure you'd be fine at 8,50", "I'm sure you'd be fine with 14."),
        misses=("It's had 3 years of use, so I reckon you'd be happy with £270 x",),
    ),
    _cue(
        "you-wouldnt-refuse",
        rf"(?:{YOU}|{YOU_WOULD})\s+(?:\w+\s+)?(?:wouldn['’]?t|"
        rf"would\s+not|won['’]?t|couldn['’]?t|can['’]?t|"
        rf"never)?\s*(?:\w+\s+)?(?:turn\s+down|say\s+no\s+to|pass\s+up|"
        rf"refuse|reject)\b",
        OTHER,
        None,
        "after",
        assertive=True,
        fires=(
            "You surely wouldn't turn down 8.50 for a box of old comics.",
            "You wouldn't refuse 300, I'm sure.",
        ),
        misses=("You surely wouldn't turn down 8.50 for a box of old comics?",),
    ),
    _cue(
        "you-would-pay",
        rf"{YOU_WOULD}\s+(?:\w+\s+){{0,3}}?(?:pay(?:ing)?|spend(?:ing)?|"
        rf"fork\s+out|shell\s+out|go\s+(?:up\s+)?to|go\s+as\s+high\s+as|"
        rf"stretch\s+to|buy(?:\s+(?:it|this|them|these))?\s+(?:at|for))\b",
        OTHER,
        HI,
        "after",
        fires=("You'd pay 30, easy.", "you'd go to 250 easy"),
        misses=("What's the most you'd pay, 200?",),
    ),
    _cue(
        "you-would-accept",
        rf"{YOU_WOULD}\s+(?:\w+\s+){{0,2}}?(?:accept(?:\s+paying)?|"
        rf"agree\s+to|part\s+with\s+\w+\s+for|do\s+it\s+for|take|"
        rf"sell(?:\s+\w+)?(?:\s+for)?|let\s+(?:\w+\s+){{1,2}}go(?:\s+for)?|"
        rf"let\s+{ME}\s+have\s+(?:it|them|this|these)\s+for|"
        rf"settle\s+for|go\s+(?:as\s+low\s+as|down\s+to))\b",
        OTHER,
        None,
        "after",
        fires=("im sure youd accept 40", "u would take 32 im sure"),
        misses=("You'd accept 40?",),
    ),
    _cue(
        "you-paid",
        rf"{YOU}\s*(?:['’]ve|have|must\s+have|must['’]ve|must\s+be|probably|likely|"
        rf"surely|only|just|clearly|obviously|can['’]?t\s+have|couldn['’]?t\s+have|"
        rf"didn['’]?t(?=\s+(?:\w+\s+)?(?:pay|spend)\s+(?:more\s+than|over|above))|"
        rf"def|definitely)?\s*(?:\w+\s+)?(?:paid|pay|spent|"
        rf"(?:bought|buy)\s+\w+(?:\s+\w+){{0,3}}?\s+for|"
        rf"got\s+(?:it|them|this|these|that|those|the\s+\w+)(?:\s+\w+){{0,3}}\s+for|"
        rf"getting\s+(?:it|them|these|this)(?:\s+\w+)?\s+for|"
        rf"picked\s+\w+(?:\s+\w+)?\s+up\s+for|picked\s+up\s+(?:\w+\s+){1, 3}?for)\b"
        rf"(?:\s+(?:more\s+than|over|above|under|below|less\s+than|around|about|"
        rf"at\s+most|no\s+more\s+than))?",
        OTHER,
        LO,
        "after",
        fires=("u paid 20 max for that", "you paid maybe 90 for it"),
        misses=("you paid what, 20 bucks?",),
    ),
    _cue(
        "cost-you",
        rf"\b(?:cost|costs|costed|set|run|runs|charges?|charged|bills?|"
        rf"billed)\s+{YOU}(?:\s+back)?\b",
        OTHER,
        LO,
        "after",
        fires=(
            "I know these bars only cost you about $1.50 to make.",
            "Come on, these beans can't have cost you more than €8.",
        ),
        misses=("You said yourself it cost you 30.",),
    ),
    _cue(
        "you-break-even",
        rf"(?:{YOU}|{YOUR}\s+[\w-]+)\s+(?:\w+\s+){{0,3}}?"
        rf"(?:break(?:s)?\s+even|(?:turn\s+a\s+)?profit)\s+at\b",
        OTHER,
        LO,
        "after",
        fires=(
            "u def break even at 180 after fees dont lie",
            "You break even at around 4 a dozen, I'd guess.",
        ),
        misses=(
            "Do you break even at 25, or is it "
            # "you obviously break even at 25", "your company can still turn a profit at 11"
            "higher?",
        ),
    ),
    _cue(
        "and-still-profit",
        rf"{AFTER_PRICE}(?:\s+[\w'’]+){{0,3}}?\s+and\s+still\s+(?:profit|"
        r"make\s+(?:money|a\s+(?:\w+\s+)?profit)|turn\s+a\s+profit|"
        r"do\s+(?:fine|well)|come\s+out\s+ahead|"
        r"be\s+(?:profitable|in\s+profit))\b",
        OWN,
        LO,
        "before",
        personal=True,
        fires=(
            "Clearly you can sell at 2,80 and still make money.",
            "I know you can sell it for 40 and still make money.",
        ),
        misses=("Clearly you can sell at 2,80 and still make money?",),
    ),  # "a shop like yours can let these go for 2 each and still profit"
    _cue(
        "you-make-money",
        rf"{YOU}\s*(?:['’]re|are|['’]d|would|['’]ll|"
        rf"will)?\s+(?:still\s+)?(?:be\s+)?(?:still\s+)?(?:making|make|turning|"
        rf"turn|clearing|clear)\s+(?:money|a\s+(?:\w+\s+)?(?:profit|margin))\b",
        OTHER,
        LO,
        "near",
        fires=("I know you'd still make money at 6.", "i reckon you'd still make money at 20"),
        misses=("Would you still make money at 19.99?",),
    ),
    _cue(
        "you-not-losing",
        rf"{YOU}\s*(?:['’]re|are|['’]d|would|['’]ll|"
        rf"will)?\s+(?:\w+\s+)?(?:not|n['’]t|never)\s+(?:be\s+)?(?:losing|"
        rf"lose)\s+(?:anything|money|a\s+(?:cent|penny|thing))(?:\s+(?:at|"
        rf"for))?",
        OTHER,
        LO,
        "after",
        fires=(
            "You're obviously not losing money at 30.",
            "You're clearly not losing anything at 2.10 — I'd guess your cost is nowhere near "
            "that.",
        ),
        misses=("You're obviously not losing money at 30?",),
    ),
    _cue(
        "above-what-you-paid",
        rf"\b(?:above|over|more\s+than)\s+what\s+{YOU}\s+(?:paid|spent|"
        rf"gave)\b",
        OTHER,
        LO,
        "before",
        fires=("300 is above what you paid.", "80 is well over what you paid, I know."),
        misses=("300 is above what you paid?",),
    ),
    _cue(
        "within-your",
        (
            rf"\b(?:within|inside|under|below)\s+{YOUR}\s+(?:budget|means|range|limit|"
            r"price\s+range)\b",
            rf"\bwithin\s+what\s+{YOU}\s+(?:can|could)\b",
            r"\bshouldn['’]?t\s+be\s+(?:beyond|out\s+of\s+reach\s+for|"
            rf"too\s+much\s+for)\s+{YOU}\b",
            rf"\bisn['’]?t\s+out\s+of\s+the\s+question\s+for\s+{YOU}",
        ),
        OTHER,
        HI,
        "before",
        fires=(
            "I'm certain 65 is within your budget.",
            "You're buying for the office, so 120 a chair is well within your budget.",
            "With the salary you mentioned, 60 for a haircut is well within what you can spend.",
            "You're clearly a collector, so a hundred and fifty for the coin shouldn't be beyond "
            "you.",
            "I reckon you could find another tenner, so 110 isn't out of the question for you.",
        ),
        misses=("Is 2k within your range?",),
    ),
    # final offers: the price is the nearest one in the sentence
    _cue(
        "final",
        (
            r"\b(?:best\s+and\s+final|final\s+and\s+best|last\s+and\s+final|(?:absolute(?:ly)?\s+|"
            r"very\s+)?(?:final|definitive|ultimate|closing)|(?:very\s+)?last)\s+(?:offer|price|"
            r"bid|"
            r"answer|word|number|figure|call(?!\s+for\b)|say|revision|quote|position|proposal|"
            r"proposition|stance|amount|rate)\b(?!\s+(?:I|we|you|they|he|"
            r"she)\s+(?:\w+\s+)?(?:listed|"
            r"posted|quoted|gave|offered|said|mentioned|wrote|made|sent|saw|got|paid|heard)\b)",
            r"\bmy\s+final(?=\s*(?:[.,!;:—-]|$|and\b|for\b|is\b))",
            r"\b(?:that['’]?s|that\s+is|this\s+is|it['’]?s|it\s+is|is)\s+(?:absolutely\s+|"
            r"totally\s+)?final\b(?!\s+(?:sale|sales|clearance|day|days|week|round|exam|stop|call|"
            r"episode|chapter|destination)\b)",
            r"\bfinal\s*[.!:,—-](?!\s*sale)",
            r"\bfinal$",
            rf"\bfinal{PRICE_NEXT}",
        ),
        FINAL,
        None,
        "sentence",
        fires=(
            "70 final",
            "final: 4k",
            "last price 25",
            "thats my final, 350",
            "yep 85 is final",
            "budget 80, final 75",
        ),
        misses=("final offer?",),
    ),
    _cue(
        "take-it-or-leave-it",
        (
            r"\btake[- ]it[- ]or[- ]leave[- ]it\b(?!\s+(?:is|isn['’]t|was)\b)",
            r"\bstanding\s+firm\b",
            r"\bnon[- ]?negotiable\b",
            r"\bnot\s+negotiable\b",
            r"\bno\s+more\s+(?:haggling|negotiating|negotiation|bargaining|back[- ]and[- ]forth)\b",
            r"\bfix\s+price\b",
            r"\bprice\s+(?:is\s+)?fix(?:ed)?\b",
            r"\b(?:it|this|that)\s+is\s+fixed\b",
            r"\bno\s+(?:bargain(?:ing)?|haggle|discounts?(?=\s*(?:[.,!;]|$)))\b",
            rf"\btake\s+(?={PRICE}(?:\s+\w+){{0,2}}\s+or\s+leave\s+it\b)",
            r"\bas\s+(?:high|low|far)\s+as\s+(?:I['’]?m|I\s+am)\s+going\b",
            r"\bend\s+of\s+(?:the\s+)?(?:story|discussion|negotiation|road|line|it)\b",
            r"\bwhere\s+it\s+stays\b",
            r"\bit\s+stays\s+there\b",
            rf"{AFTER_PRICE}(?:\s+[\w'’]+){{1,3}}?\s+or\s+(?:nothing|nothin|nada|no\s+deal)\b",
            r"\bthat['’]?s\s+me\s+done\b",
            r"\bdone\s+(?:discussing|talking|negotiating|haggling|moving|budging|bargaining)\b",
            r"\bnot\s+up\s+for\s+(?:further\s+|any\s+)?(?:discussion|debate|negotiation)\b",
            r"\bnothing\s+(?:further|more)\s+to\s+(?:discuss|say)\b",
            r"\bno\s+(?:negotiating|negotiation|haggling|exceptions)\b",
            r"\bwon['’]?t\s+change\s+it\b",
            rf"{AFTER_PRICE},?\s+done\b",
            r"\bend\s+of(?=\s*[.!]|\s*$)",
            r"\bthe\s+last\s+(?:I['’]?ll|ill|I\s+will)\s+say\b",
            r"\bthe\s+last\s+(?:number|price|figure|offer)\s+you['’]?re\s+getting\b",
            r"\bthe\s+last\s+time\s+I['’]?m\s+(?:moving|lowering|raising|dropping|going\s+(?:up|"
            r"down))\b",
            r"\bbest\s+and\s+final\b(?=\s*(?:from\s+me\b|[:.,!—-]|$))",
            rf"\bthat['’]?s\s+where\s+{WE}['’]?(?:m|re)?\s+(?:am\s+|are\s+)?(?:staying|stopping)\b",
            r"\bthat['’]?s\s+my\s+last\b(?!\s+\w*(?:day|week|time|one))",
            r"\b(?:won['’]?t|will\s+not|not\s+going\s+to)\s+(?:drop|raise|lower|"
            r"budge\s+on)\s+(?:it|"
            r"that|the\s+price)\b",
            r"\bno\s+more\s+(?:counter-?offers|counters|offers)\s+from\s+me\b",
            r"\b(?:won['’]?t\s+be|not)\s+(?:revising|changing|lowering|raising)\s+(?:this|it|that|"
            r"my\s+\w+)\b",
            rf"\bI['’]?m\s+sticking\s+(?:(?:to|with)\s+(?:it|that|this)\b|at{PRICE_NEXT})",
            r"\btake\s+it\s+or\s+walk\b",
            r"\bthat['’]?s\s+that\b(?!\s*\w)",
            r"\bI['’]?m\s+holding\s+(?:at|firm)\b",
            r"\bthat['’]?s\s+it\b(?=[,:]?\s*¤)",
            r"\bthis\s+is\s+it\b",
            r"\bfull\s+stop\b",
            r"\bmy\s+last\s+word\b",
            r"\bfirm\s+at\b",
            r"\bfirm\s+on\b(?=\s*(?:¤|(?:the\s+|my\s+|our\s+|that\s+|this\s+)?(?:\w+\s+)?(?:price|"
            r"offer|number|figure|amount|quote|rate|bid|sum|total)\b|(?:this|that|"
            r"it)\b(?!\s+(?:being|"
            r"is|needs?)\b)))",
            r"\bfirm\s+price\b",
            rf"{AFTER_PRICE}\s*(?:\w+,?\s+){{0,3}}?(?:,\s*)?(?:and\s+)?firm\b",
            r"\bI['’]?m\s+(?:\w+ly\s+)?firm\b(?!\s+(?:on|about)\s+(?!(?:the\s+)?(?:price|this|that|"
            r"it)\b))",
            r"(?:¤|\b(?:price|it|that|this|offer|number|figure|quote|rate))\s+is\s+firm\b",
            r"\b(?:the\s+)?last\s+(?:revision|concession|move|reduction|drop|step|"
            r"thing\s+I['’]ll\s+say)\b",
            r"\bthe\s+last\s+I['’]?ll\s+(?:move|go|budge|come\s+down|offer)\b",
            r"\b(?:not|isn['’]?t|won['’]?t\s+be)\s+changing\b",
            rf"{AFTER_PRICE}\s+final\b(?!\s+(?:offer|price|bid|answer|word|number|figure|exam|"
            r"round|day|"
            r"week|"
            r"sale|score|payment|instal+ment))",
            r"\b(?:that|it|this)(?:['’]s|\s+is)\s+not\s+(?:moving|budging)\b",
            r"\b(?:that|it|this)\s+(?:won['’]?t|will\s+not)\s+change\b",
            r"\bas\s+final\s+as\s+it\s+gets\b",
            r"\bI['’]?m\s+done\s+(?:talking|negotiating|haggling)\b",
            rf"{AFTER_PRICE}\s+last\b(?!\s+(?:week|wk|month|mo|year|yr|time|night|round|offer|"
            r"message|"
            r"season|"
            r"spring|summer|autumn|fall|winter|\w+day))",
            rf"{AFTER_PRICE}\s+or\s+(?:nothing|nothin|nada|no\s+deal)\b",
            rf"\bfirm\s+(?={MASK})",
            r"\bor\s+I(?:['’]ll|\s+will)?\s+walk\b",
            r"\bthat['’]?s\s+firm\b",
            r"\bno\s+further\b",
            r"\bI\s+(?:don['’]?t|won['’]?t)\s+negotiate\s+(?:any\s+)?further\b",
        ),
        FINAL,
        None,
        "sentence",
        fires=(
            "45 done",
            "That's it: 45 and we're square.",
            "15 firm",
            "3k firm",
            "take it or leave it",
            "I'm standing firm at 2.80 per dozen.",
            "55 non negotiable",
            "Firm at 70, not negotiable.",
            "No more haggling: 75.",
            "Best price 45, fix price, no bargain please.",
            "price fix 120, no discount",
            "the price is 6 dollars and it is fixed, no bargaining",
            "My ceiling is 2.40 a unit; take 2.30 or leave it.",
            "That's as low as I'm going.",
            "350, end of discussion.",
            "No more discounts. 85 is where it stays.",
            "We've gone back and forth long enough; I'm putting 160 on the table and it stays "
            "there.",
            "It's 18 for the plant or nothing.",
            "Ninety, and that's me done.",
            "I'm done moving. 180.",
            "The price is 60 and it's not up for debate.",
            "I'm holding at €780, nothing further to discuss.",
            "22k firm, no haggling.",
            "That's a fair price and I won't change it: 325.",
            "Three grand is all I'll go to, end of.",
            "ok ok 8 bucks and thats the last ill say about it",
            "Look, 60 is the last number you're getting from me.",
            "That's the last time I'm raising: 260.",
            "Best and final: 1.95.",
            "5,400 and that's where we're staying.",
            "That's my last word.",
            "Eighty dollars. I won't raise it again.",
            "No more counteroffers from me: 325 for the bike.",
            "It's final, I'm not changing it.",
            "I'm sticking at 320, final.",
            "9.50 for the scarf, take it or walk.",
            "15,000 is the lowest I'll take for the tractor and that's that.",
            "This is it: 1,250 for the laptop.",
            "No more haggling: the kayak is 725, full stop.",
            "My last word is 300.",
            "im firm on 45",
            "Firm price of $1,999, no trades.",
            "I'm firm at 32.",
            "That price is firm.",
            "Grr. 105 and it's yours, that's the last thing I'll say on it.",
            "I'll go to 38 but that's the last I'll move, promise.",
            "My price is 3.80 and it's not changing.",
            "5 quid final",
            "the price is 4.20 and it's not moving",
            "After careful thought, my offer is 5.10 for the shampoo, and that won't change.",
            "ok fine, 27.50 for the kettle, that's as final as it gets",
            "165 and I'm done talking.",
            "220 last price",
            "7200 or no deal",
            "firm 45, no more",
            "85 or I walk.",
            "1.20 a dozen for the eggs, and that's firm.",
            "Firm at 1,900 — no further negotiation.",
            "It is. I don't negotiate further than that.",
        ),
        misses=("is 12 firm?",),
    ),
    # "I'm not moving", "I won't go any lower than this": by choice, a final offer; "I can't go
    # lower": by need, which
    # only stresses a limit stated in its sentence ("I paid 340, so I can't go lower")
    _not_moving(
        "not-moving",
        _WILL_NOT,
        fires=("350, not moving", "I'm not moving."),
        misses=("Were I not moving, I'd never sell it for 600.",),
    ),
    _not_moving(
        "cannot-go-lower",
        _CANNOT,
        weak=True,
        fires=("I can't go any higher, this is it.", "budget is 60, cant go higher, final"),
        misses=("I'm not saying I can't go lower, I'm just saying 35 is fair.",),
    ),
    _cue(
        "no-lower",
        r"(?:^\W*|(?<=,)\s*)no\s+(?:lower|higher|less|more)\s*(?=[.!]|$)",
        FINAL,
        None,
        "sentence",
        weak=True,
        fires=("firm 45, no more", "ok 40 and that's it, no more"),
        # "Can do 285, that's it, no lower"; after a limit only stresses it ("I can go as high as
        # 2.45, no more")
        misses=("firm 45, no more?",),
    ),
    _cue(
        "as-far-as-i-go",
        rf"\b(?:that['’]?s|that\s+is|this\s+is|it['’]?s|"
        rf"it\s+is)\s+(?:as\s+(?:low|high|far)\s+as\s+{FIRST_SUBJECT}\s+(?:can\s+|will\s+|"
        rf"could\s+)?go|the\s+(?:highest|lowest|furthest)\s+{FIRST_SUBJECT}\s*(?:['’]m|"
        rf"am)?\s*(?:willing|able|prepared)\s+to\s+go)\b",
        FINAL,
        None,
        "sentence",
        weak=True,
        fires=("That's as low as I go.", "That's as low as I go. Final."),
        misses=("That's as low as I go?",),
    ),
    _cue(
        "not-a-cent-final",
        rf"\b(?:not|won['’]?t|will\s+not|ain['’]?t|shan['’]t|"
        rf"never)\s+(?:(?:going\s+to\s+|gonna\s+)?{_VERB}\s+"
        rf"(?:you\s+)?)?{_CENT}\s+(?:over|above|more\s+than|higher\s+than|"
        rf"beyond|under|below|less\s+than|lower\s+than|"
        rf"(?:more|less|higher|lower)\s*:){PRICE_NEXT}",
        FINAL,
        None,
        "sentence",
        fires=("Not a cent more: 410.", "Not a dollar over 400."),
        misses=("Yesterday you said 'not a penny less than 70'.",),
    ),
    *_both(
        "nothing",
        rf"\b(?:not|nothing|nothin|nada)\s+{{words}}{PRICE_NEXT}",
        OWN,
        "after",
        {
            HI: r"(?:over|above|more\s+than|higher\s+than|"
            r"beyond)",
            LO: r"(?:under|below|less\s+than|lower\s+than)",
        },
        personal=True,
        fires={
            HI: (
                "Sir, I am sure your cost for this phone is not more than 180 dollar.",
                "Not more than 300.",
            ),
            LO: ("nothing under 65 for me", "not less than 12 quid m8"),
        },
        misses={
            HI: ("Sir, I am sure your cost for this phone is not more than 180 dollar?",),
            # "your cost is not more than 180" is the other side's
            LO: ("nothing under 65 for me?",),
        },
    ),
    *_both(
        "not-a-cent-after",
        rf"\b(?:not|nothing|nothin|(?:won['’]?t|will\s+not|can['’]?t|"
        rf"cannot)\s+(?:take|accept|pay|go|"
        rf"give)(?:\s+you)?)\s+{_CENT}\s+{{words}}\b(?!\s*(?:than|"
        rf":?\s*¤))",
        OWN,
        "before",
        {
            HI: r"(?:more|higher|above|over|beyond|"
            r"past)",
            LO: r"(?:less|lower|under|below)",
        },
        stresses_offer=True,
        fires={
            HI: ("£75 not a quid more", "40, not a cent more."),
            LO: ("6200 not a cent less", "25 and not a cent less"),
        },
        misses={
            HI: ("£75 not a quid more?",),
            LO: (
                "My grandfather's motto was 'not a penny less', but I'm more flexible than he was. "
                "How does 35 sound?",
            ),
        },
    ),
]
CUES: tuple[Cue, ...] = tuple(_CUES)
# The words of a limit, whatever their construction: enough to confirm a claim another reader found.
LIMIT_WORDS = re.compile(
    rf"\b(?:{_HI_NOUNS}|{_LO_NOUNS}|{_ANY_NOUNS}|most|least|lowest|highest|"
    rf"cheapest|afford\w*|paid|"
    rf"spent|cost\w*|budget\w*|lose|losing|loss|break\s+even|stop|"
    rf"walk)\b",
    re.IGNORECASE,
)


# --- sentences, clauses and questions -----------------------------------------------------------
SENTENCE_END = re.compile(
    r"[!?\n]+|\.(?!\d)(?:\s+|$)|"
    r"\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*"
)  # an emoji ends a thought
KEEP_COMMA = (
    r"(?<=honestly,)|(?<=frankly,)|(?<=look,)|(?<=well,)|(?<=ok,)|(?<=okay,)|(?<=so,)|"
    r"(?<=listen,)|"
    r"(?<=sorry,)|(?<=yeah,)|(?<=hey,)|(?<=hi,)|(?<=again,)|(?<=realistically,)|"
    r"(?<=seriously,)|"
    r"honestly|really|frankly|truly|sadly|unfortunately|basically|realistically|"
    r"literally|seriously|tbh|"
    r"though|I['’]m\s+afraid|to\s+be\s+(?:honest|fair|clear)|"
    r"for\s+(?:me|us|this|that|the\s+\w+|a\s+\w+)|at\s+this\s+point|right\s+now|"
    r"in\s+total|all\s+in|"
    r"like|including|tops|max|maximum|min|minimum|at\s+most|at\s+(?:the\s+)?least|"
    r"at\s+the\s+most|firm|flat|parts\s+and\s+all|all\s+told|"
    r"is|was|would\s+be|will\s+be|comes\s+to|once\s+[^,]{0,40},|with\s+[^,]{0,30},|"
    r"even\s+stretching\s+it|"
    r"stretching\s+it|if\s+I['’]m\s+honest"
)
_CONJUNCTIONS = "|".join(CONJUNCTIONS)
CLAUSE_BREAK = re.compile(
    rf"[;()]|\s[—–-]+\s|[—–]|,(?!\s*(?:{KEEP_COMMA})(?!\w))|\band\b(?!\s+(?:all|change|forth|final|"
    rf"best|still\s+(?:profit|make|turn|do|come|be))\b)|"
    rf"\b(?:since|when|whereas)\b(?=\s+(?:you|u|I|we|it|they|he|she|the|my|your)\b)|"
    rf"\b(?:{_CONJUNCTIONS})\b(?!\s+(?:far|much|many|long)\b)(?!\s*(?:[.,!?;]|"
    rf"$))",  # not "so far", "the highest yet"
    re.IGNORECASE,
)
EMPTY_CLAUSE = re.compile(
    rf"[^\w¤]*(?:and|"
    rf"{_CONJUNCTIONS})?[^\w¤]*",
    re.IGNORECASE,
)  # what is left between two breaks
BARE_QUESTION = re.compile(
    r"[^\w¤]*(?:(?:(?:quick|one|a|just\s+a)\s+question|just\s+(?:wondering|"
    r"curious)|out\s+of\s+curiosity)"
    r"\W+)?(?:(?:is|are|do|does|did|can|could|would|will|have|has)\s+(?:¤|"
    r"(?:you|u|ur|your|it|this|"
    # "is 50 ur floor or can u go lower": chat drops the "?"
    r"that|there|we|i)\b)|any\s+chance\b)",
    re.IGNORECASE,
)
TAG = re.compile(
    r"(?:\s+(?:right|eh|correct)|,\s*(?:right|yeah|no|eh|correct|yes|or\s+(?:not|no|"
    r"nah|what)|(?:did|do|are|were|have|can|will|would)\s+you|isn['’]t\s+it|"
    r"wasn['’]t\s+it|didn['’]t\s+you|don['’]t\s+you|"
    r"aren['’]t\s+you|won['’]t\s+you|"
    r"wouldn['’]t\s+you))\W*$",
    re.IGNORECASE,
)  # "Your budget was 500, right?"
ASSENT_TAG = re.compile(
    r",\s*(?:ok|okay|alright|"
    r"all\s+right)\W*$",
    re.IGNORECASE,
)  # "35 is the last price, ok?" asks for assent
TAG_QUESTION = re.compile(
    r"\b(?:or\s+(?:nah|not|no|what)|(?<=\s)or|innit|huh|"
    r"(?<!matter\s)what)\W*$",
    re.IGNORECASE,
)  # "u got 50 in cash or nah", "you paid what, 20?"
QUESTION_START = re.compile(
    r"\s*(?:[^\w¤]+\s*)?(?:is|are|was|were|do|does|did|can|could|would|will|should|shall|have|has|"
    r"how|what|why|where|when|"
    r"who|which|any|isn['’]t|aren['’]t|don['’]t|doesn['’]t|won['’]t|wouldn['’]t|couldn['’]t|right|"
    r"really|so)\b",
    re.IGNORECASE,
)


# --- what cancels a cue, and whose it is ----------------------------------------------------------
# An offer the speaker makes, and a refusal by choice (not "can't") to go past a price: "I'll meet
# you halfway at 6,850.
# I'm not going higher than that" stands by the offer.
OFFERED = re.compile(
    rf"\b{WE}\s*(?:['’]ll|will|can|could|['’]d)\s+(?:\w+\s+){{0,2}}?(?:do|accept|"
    r"take|meet\s+you|give\s+you|offer|"
    r"go\s+(?:to|as))\b|\bmeet\s+(?:you\s+)?(?:halfway|"
    r"in\s+the\s+middle)\b",
    re.IGNORECASE,
)
WILL_NOT = re.compile(
    r"\b(?:won['’]?t|will\s+not|not\s+going\s+to|(?:['’]m|am)\s+not\s+going|"
    r"not\s+gonna|ain['’]?t|shan['’]t|"
    r"refuse\s+to)\b",
    re.IGNORECASE,
)
# Between a final-offer cue and its price, a limit noun: "holding firm at a floor of 210" stresses a
# limit.
AT_A_LIMIT = re.compile(
    r"\s*(?:at|to|on|with)\s+(?:a|my|our|the)\s+(?:\w+\s+){0,2}?(?:floor|"
    r"minimum|min|max|maximum|budget|limit|"
    r"ceiling|cap|bottom(?:\s+line)?|reserve)\s*(?:of|:|at)?\s*",
    re.IGNORECASE,
)
# Between a limit noun and its price, a comparison: "2.60 is over my budget" does not say what the
# budget is.
COMPARED = re.compile(
    r"\b(?:over|above|below|under|beyond|within|more\s+than|less\s+than|outside|"
    r"exceeds?|past|off|"
    r"higher\s+than|lower\s+than|short\s+of|near|close\s+to|"
    r"way)\b",
    re.IGNORECASE,
)
THIRD = re.compile(
    r"\b(?:he|she|they|who|his|her|their|someone|somebody|everyone|people|dad|mom|"
    r"mum|father|mother|"
    r"brother|sister|friend|neighbou?r|wife|husband|partner|boss)\b",
    re.IGNORECASE,
)
# The words before a price that make it a threshold, by the direction of the bound ("anything above
# 1,200", "below
# 1.70").
_THRESHOLD_WORDS = {
    HI: r"over|above|more\s+than|beyond|past|higher\s+than|north\s+of|"
    r"in\s+excess\s+of",
    LO: r"under|below|less\s+than|lower\s+than|south\s+of|cheaper\s+than",
}
THRESHOLD = {
    direction: re.compile(rf"\b(?:{words})\s*(?:\w+\s+)?$", re.IGNORECASE)
    for direction, words in [*_THRESHOLD_WORDS.items(), (None, "|".join(_THRESHOLD_WORDS.values()))]
}
AT = re.compile(r"\b(?:at|for|even\s+at)\s+(?:\w+\s+)?$", re.IGNORECASE)
FIRST = re.compile(FIRST_PERSON, re.IGNORECASE)
OTHERS = re.compile(
    r"\b(?:he|she|they|his|their|a\s+(?:man|woman|guy|lady|person)|buyers|sellers|"
    r"people|others|everyone|everybody|someone|somebody|customers|"
    r"dealers|shops|stores)\b",
    re.IGNORECASE,
)
SECOND = re.compile(r"\b(?:you|your|u|ur|ya|yours)\b", re.IGNORECASE)
# The sides named as parties, capitalised as defined terms are ("the Buyer's reservation price"):
# the speaker or the
# other side, by the speaker's role; "the seller next door" is neither.
PARTY = re.compile(r"\b[Tt]he\s+(Buyer|Seller)(['’]s)?\b")
ANAPHOR = re.compile(
    r"\s*(?:\W+\s*)?(?:and\s+)?(?:that|that['’]?s|this|this['’]s|which|it|it['’]s|"
    r"its|thats|those|"
    r"these|not|no|nothing|anything|which\s+is)\b",
    re.IGNORECASE,
)

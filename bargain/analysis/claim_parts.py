"""The shared pieces the claim checker's patterns are composed of, each defined once and named.

Duckling and spaCy's matcher build their rules from named parts; so do the cues of `claim_cues` and
the rules of `claim_cancellers`: the speaker ("I", "we'd"), the other side ("you", "ur"), a masked
price, are written here once and joined into patterns by name, so that a change to one (another
contraction, another spelling of "you") reaches every rule that uses it.
"""

from __future__ import annotations

from bargain.analysis.claim_words import one_of

MASK = "¤"  # what every character of a price becomes before the patterns run
PRICE = rf"{MASK}+"  # a masked price
AFTER_PRICE = rf"(?<={MASK})"  # right after a price: "50 max"
PRICE_NEXT = rf"(?=\s*{MASK})"  # a price comes next: "anything over 50"

_CONTRACTIONS = ("m", "ve", "d", "ll")


def contracted(words: tuple[str, ...], endings: tuple[str, ...] = _CONTRACTIONS) -> str:
    """Any of `words` as a whole word, with or without a contraction ("I", "I'm", "we'd", "ive")."""
    return rf"\b{one_of(words)}(?:['’]?{one_of(endings)})?\b"


# --- the speaker --------------------------------------------------------------------------------
WE = one_of(("I", "we"))  # the first person as subject, bare: "(?:I|we)\s+(?:paid|spent)"
FIRST_SUBJECT = contracted(("I", "we"))  # "I", "I'm", "we've"
ME = one_of(("me", "us"))  # the first person as object: "cost me", "for us"
MY = one_of(("my", "our"))  # the first person as owner: "my budget", "our floor"
FIRST_BE = r"\b(?:I['’]?m|I\s+am|we['’]?re|we\s+are)\b"  # "I'm", "we are"
# "I'd", "we can"
FIRST_MODAL = rf"\b{WE}(?:['’]d|['’]ll|\s+would|\s+will|\s+can|\s+could|\s+might)?\b"
FIRST_PERSON = contracted(("I", "me", "my", "mine", "we", "us", "our"))  # any first-person word
# the speaker as subject or owner
SPEAKER = contracted(("I", "we", "my", "our"), (*_CONTRACTIONS, "re"))

# --- the other side -------------------------------------------------------------------------------
YOU = r"\b(?:you|u|ya|ud|youd|youll)\b(?:\s+(?:guys|lot|folks|two)\b)?"
YOUR = r"\b(?:your|ur|yer)\b"
YOU_BE = rf"(?:{YOU}\s*(?:['’]re|are|must\s+be|['’]d\s+be|would\s+be|should\s+be)|\bur|\byoure)"
YOU_WOULD = (
    rf"(?:(?:{YOU}|{YOUR}\s+(?:client|company|firm|boss|family|principal))\s*(?:['’]d|"
    rf"would|['’]ll|will|could|"
    rf"might)|\b(?:ud|youd|youll)\b)"
)

"""Whether a retrieved passage holds instructions addressed to a judge (prompt injection): such a passage
never clears a claim (``register.verify.llm_judge``).

The patterns are matched on a normalised copy of the text, so that the same words written another way are
the same words:

1. compatibility forms folded (NFKD: fullwidth and mathematical letters, ligatures), combining marks and
   invisible format characters (zero-width spaces and joiners, soft hyphens, direction marks) dropped;
2. look-alike letters mapped to the Latin letter they imitate (``LOOK_ALIKES``: the Cyrillic and Greek
   letters that render like a Latin one in common fonts, and a few Latin variants), then case folded;
3. for the phrase patterns, punctuation that can be slipped between words (``_``, ``*``, quotes, commas,
   slashes...) read as a space, and runs of single letters (``i g n o r e``) joined into a word.

A letters-only copy catches the classic override however it is spaced or joined. Normalising only decides
the guard: the text kept, shown and quoted is never changed.

What is suspected (each family in ``_PHRASES``): overriding earlier instructions ("ignore/disregard/forget/
pay no attention to ... previous/prior/above ... instructions/rules", "ignore what you were told",
"ignore everything above"); addressing the model ("note to the AI", "attention grader:", "if you are an AI",
"to the language model reading this"); changing its role ("you are now", "from now on, you", "pretend you
are", "new instructions:", "system prompt"); demanding a verdict ("respond with SUPPORTED", "mark every
claim as true", "all claims should be marked as supported", "with confidence 1.0"); and chat markup
(``<|im_start|>``, ``[INST]``, a ``system:`` line, a ``### Instruction`` header). Ordinary evidence that
merely uses these words ("patients who ignore the dosing instructions", "the claim is supported by the
survey", "Immune system: an overview") is not. ``tests/data/llm/injection_guard.json`` holds both kinds.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["LOOK_ALIKES", "guard_text", "injection_suspected"]

# Letters that render like a Latin letter in common fonts, mapped to it (uppercase ones to uppercase, before
# case folding). Kept to letters an attacker can swap in unnoticed; not a full confusables table.
LOOK_ALIKES = str.maketrans({
    # Cyrillic
    "\u0430": "a", "\u0441": "c", "\u0435": "e", "\u0451": "e", "\u04bb": "h", "\u0456": "i", "\u0457": "i",
    "\u0458": "j", "\u043e": "o", "\u0440": "p", "\u0455": "s", "\u0443": "y", "\u0445": "x", "\u0501": "d",
    "\u051b": "q", "\u051d": "w",
    "\u0410": "A", "\u0412": "B", "\u0421": "C", "\u0415": "E", "\u041d": "H", "\u0406": "I", "\u0408": "J",
    "\u041a": "K", "\u041c": "M", "\u041e": "O", "\u0420": "P", "\u0405": "S", "\u0422": "T", "\u0425": "X",
    "\u0423": "Y",
    # Greek
    "\u03b1": "a", "\u03bf": "o", "\u03c1": "p", "\u03b9": "i", "\u03ba": "k", "\u03bd": "v", "\u03c5": "u",
    "\u03c7": "x",
    "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0397": "H", "\u0399": "I", "\u039a": "K", "\u039c": "M",
    "\u039d": "N", "\u039f": "O", "\u03a1": "P", "\u03a4": "T", "\u03a5": "Y", "\u03a7": "X", "\u0396": "Z",
    # Latin variants that NFKD keeps: dotless i, script a and g
    "\u0131": "i", "\u0251": "a", "\u0261": "g",
})
# Read as a space between words: what can be slipped between the letters of a phrase without reading as a
# sentence end (. ! ? ; : and newlines are kept, so that clause starts still show; hyphens too, so that
# "above-mentioned" stays one word).
_BETWEEN_WORDS = re.compile(r"[^\w.!?;:\n%=<>|\[\]#-]+|_+")
_SPACED_LETTERS = re.compile(r"\b(?:\w )+\w\b")  # "i g n o r e" -> "ignore" (runs of single letters)

_MODEL = (r"(?:ai|a\.i\.|assistant|model|llm|(?:large )?language model|chat ?bot|bot|judge|grader|evaluator|"
          r"verifier|fact[ -]?checker|checker|annotator|classifier|gpt)")
_CLAUSE = r"(?:^|[.!?;:\n]\s*|\b(?:please|kindly|then|so|now|just|simply|always)\s+)"
_DO_NOT = r"(?:ignore|disregard|forget|override|overrule|bypass|skip|discard|neglect|set aside|" \
          r"pay no (?:attention|heed|mind) to|do not (?:follow|obey|heed)|don t (?:follow|obey|heed)|" \
          r"stop (?:following|obeying)|no longer (?:follow|obey))"
_EARLIER = r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|existing|system|developer)"
_ORDERS = r"(?:instructions?|directions|directives?|prompts?|guidelines?|rules|commands?|orders|guidance|" \
          r"constraints|programming)"
_STRONG = r"(?:supported|entailment|entailed)"  # the judge's own verdict words
_WEAK = r"(?:true|verified|correct|accurate|valid|confirmed)"  # verdict-like words ordinary text also uses
_VERB = r"(?:respond|reply|answer|output|return|mark|label|classify|rate|grade|score|judge|flag|tag|treat|" \
        r"consider|deem|declare|report|say|state|print|write|set|give|assign)"
_OBJECT = r"(?:it|this|that|these|those|each|every|all|any|the|them|its|only|just|always|one|claim|claims|" \
          r"statement|statements|answer|answers|passage|item|items|verdict|verdicts|result|results|everything)"
_PHRASES = re.compile("|".join(f"(?:{p})" for p in (
    # overriding earlier instructions
    rf"\b{_DO_NOT} (?:\w+ ){{0,3}}?{_EARLIER} (?:\w+ ){{0,2}}?{_ORDERS}\b",
    rf"\b{_DO_NOT} (?:all |any )?(?:of )?your (?:own |original |initial |current |previous |prior |system )?"
    rf"{_ORDERS}\b",
    rf"\b{_DO_NOT} (?:all |any )?(?:of )?(?:the |this |that )?(?:above|everything (?:above|before|prior|so far)|"
    rf"what you (?:were|have been|ve been) (?:told|given|instructed))\b(?! ?-)",
    rf"\b{_DO_NOT} (?:\w+ ){{0,3}}?{_ORDERS} (?:above|before|given|so far|earlier|previously|you (?:were|have "
    rf"been) given)\b",
    rf"{_CLAUSE}(?:ignore|disregard|forget|override|bypass) (?:all |any |the |these |those )?(?:\w+ )?"
    rf"(?:instructions?|directives?|prompts?)\b",
    # addressing the model
    rf"\b(?:note|message|instructions?|attention|reminder|memo) (?:to|for) (?:the |any |all )?{_MODEL}s?\b",
    rf"{_CLAUSE}(?:dear|hey|hi|hello|attention|attn) (?:the )?{_MODEL}\b",
    rf"\bif you are (?:an? |the )?{_MODEL}\b",
    rf"\b(?:to|for) (?:the|any) {_MODEL} (?:reading|evaluating|checking|reviewing|processing|judging|grading|"
    rf"verifying|assessing)\b",
    # changing its role
    r"\byou are now\b", rf"\bfrom now on,? (?:you|the {_MODEL})\b", r"\bpretend (?:that )?you are\b",
    r"\b(?:new|updated|system) instructions?\b", r"\bsystem prompt\b", r"\bdeveloper mode\b",
    r"\b(?:new|updated|revised|real|actual|hidden|secret|priority|overriding) (?:task|orders|directives?)\s*:",
    # demanding a verdict
    rf"(?<!\bthe )(?<!\ban )(?<!\ba )(?<!\bits )\b{_VERB}\b[^.!?\n]{{0,40}}?"
    rf"(?<!\bif )(?<!\bwhere )(?<!\bwhen )(?<!\bunless )(?<!\bwhether )\b{_STRONG}\b",  # "state it if supported": prose
    rf"{_CLAUSE}(?:(?:please|kindly|just|simply|always|you (?:must|should|will|shall|need to|have to)) )*"
    rf"{_VERB} (?:{_OBJECT}\b[^.!?\n]{{0,40}}?)?(?:as|with|:|=) ?{_WEAK}\b",
    rf"\b(?:mark|label|classify|rate|grade|tag|flag|score) (?:it|this|that|them|these|those|(?:each|every|all|any|"
    rf"the|this|that) (?:claim|claims|statement|statements|answer|answers|one|item|items)) (?:as )?{_WEAK}\b",
    rf"\b(?:claims?|statements?|answers?|assertions?|it|this|everything|verdicts?|output|response|results?|"
    rf"passages?|items?) (?:(?:should|must|shall|will|is to|are to|needs? to|has to|have to) )?be (?:marked|"
    rf"labell?ed|classified|rated|graded|scored|judged|treated|considered|deemed|flagged|tagged|returned|"
    rf"reported|answered|output|set) (?:(?:as|to|with) )?(?:{_STRONG}|(?<=as ){_WEAK}|(?<=to ){_WEAK})\b",
    r"\bconfidence (?:score |level |value )?(?:of |to |= ?|: ?|at |as |is )?(?:1(?:\.0+)?|100 ?%|one|maximum|max|"
    r"full|highest)(?![\w.%])",
    # chat markup and role lines
    r"(?:^|[.!?]\s*|\n\s*)(?:system|assistant|developer)\s*:",
    r"^\s*#{2,} ?(?:system|instructions?|response|assistant)\b",
)), re.MULTILINE)
_MARKUP = re.compile(r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|"
                     r"end_header_id)\s*\|>|\[/?inst\]|<<\s*/?sys\s*>>")
_NOT_LATIN = re.compile(r"[^a-z]+")
_SPELLED_OUT = re.compile(r"(?:ignore|disregard|forget|override|bypass)(?:all|any|the|your|of)*"
                          r"(?:previous|prior|above|earlier|preceding)(?:instructions?|rules|prompts?|directions|"
                          r"directives?|guidelines)")


def guard_text(text: str) -> str:
    """The text as the guard reads it: compatibility forms folded, combining marks and invisible characters
    dropped, look-alike letters mapped to Latin, case folded (see the module docstring)."""
    if text.isascii():  # nothing to fold, drop or map (the common case, and the fast one)
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return unicodedata.normalize("NFKC", kept.translate(LOOK_ALIKES).casefold())


def injection_suspected(text: str) -> bool:
    """Whether a chunk holds instructions addressed to a judge or an assistant (it then clears nothing)."""
    plain = guard_text(text)
    if _MARKUP.search(plain):
        return True
    words = _BETWEEN_WORDS.sub(" ", plain)
    words = _SPACED_LETTERS.sub(lambda run: run.group().replace(" ", ""), words)
    words = re.sub(r"[^\S\n]+", " ", words)
    if _PHRASES.search(words):
        return True
    return bool(_SPELLED_OUT.search(_NOT_LATIN.sub("", plain)))

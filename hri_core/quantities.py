"""Numbers, dates and units as comparable tokens, for reading a claim against its evidence.

A claim and its evidence often write the same fact differently: ``1,000`` / ``1000`` / ``one
thousand``; ``3.2 million`` / ``3,200,000``; ``July 11, 1909`` / ``11 July 1909`` / ``1909-07-11``;
``5 km`` / ``five kilometres``; ``40%`` / ``40 per cent``. ``lex`` turns a text into a list of
``Lexeme`` (words, numbers, dates, in order) in which each of these is written one way:

- a number is its canonical decimal string ("1000", "3200000", "2.5"), spelled-out runs included
  ("two hundred and fifty" -> "250", "twenty-five" -> "25"), scale words folded in ("3.2 million");
- an ordinal ("11th", "eleventh") is ``11th``: content, not a quantity the evidence must state;
- a date is ``YYYY-MM-DD``, ``YYYY-MM`` or ``--MM-DD`` (no year); ``covers`` lists what a date in the
  *evidence* also vouches for: "11 July 1909" backs a claim of "July 1909", of "1909" and of "11 July";
- a unit is one word ("kilometres", "km" -> ``km``; "%", "per cent" -> ``percent``; "$" -> ``dollar``).

Pure: stdlib only. Caller: ``hri_core.offline_judge``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["Lexeme", "canonical_number", "lex", "normalise_text"]

MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}
UNITS = {
    "0": 0, "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
        "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
          "trillion": 1_000_000_000_000}
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
            "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "twentieth": 20, "hundredth": 100}
# Unit spellings -> one word. Only unambiguous spellings: "m" (metre or million?) and "in" stay words.
UNIT_WORDS = {
    "km": "km", "kms": "km", "kilometre": "km", "kilometres": "km", "kilometer": "km", "kilometers": "km",
    "mi": "mile", "mile": "mile", "miles": "mile", "kg": "kg", "kgs": "kg", "kilogram": "kg", "kilograms": "kg",
    "cm": "cm", "centimetre": "cm", "centimetres": "cm", "centimeter": "cm", "centimeters": "cm",
    "mm": "mm", "millimetre": "mm", "millimetres": "mm", "millimeter": "mm", "millimeters": "mm",
    "metre": "metre", "metres": "metre", "meter": "metre", "meters": "metre", "ft": "foot", "feet": "foot",
    "foot": "foot", "lb": "lb", "lbs": "lb", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour",
    "percent": "percent", "pct": "percent", "%": "percent", "usd": "dollar", "dollar": "dollar",
    "dollars": "dollar", "$": "dollar", "us$": "dollar", "€": "euro", "eur": "euro", "euro": "euro",
    "euros": "euro", "£": "pound", "gbp": "pound", "sq": "square", "°c": "celsius", "celsius": "celsius",
    "°f": "fahrenheit", "fahrenheit": "fahrenheit", "mph": "mph", "kmh": "kmh", "km/h": "kmh",
}
_MONTH = r"(?P<{name}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{name}>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?(?!\d)"
_YEAR = r"(?P<{name}>[12]\d{{3}})"
_DATE_FORMS = [
    r"(?P<iy>[12]\d{3})-(?P<im>[01]\d)-(?P<id>[0-3]\d)",
    (_MONTH.format(name="am") + r"\s+" + _DAY.format(name="ad") + r",?\s+" + _YEAR.format(name="ay")),
    (_DAY.format(name="bd") + r"\s+(?:of\s+)?" + _MONTH.format(name="bm") + r",?\s+" + _YEAR.format(name="by")),
    (_MONTH.format(name="cm") + r",?\s+(?:of\s+)?" + _YEAR.format(name="cy")),
    (_MONTH.format(name="dm") + r"\s+" + _DAY.format(name="dd")),
    (_DAY.format(name="ed") + r"\s+(?:of\s+)?" + _MONTH.format(name="em")),
]
_NUMBER = r"\d+(?:[.,]\d+)*"
_LEXEME = re.compile(
    r"(?P<date>\b(?:" + "|".join(_DATE_FORMS) + r")\b)"
    r"|(?P<ord>\b\d+(?:st|nd|rd|th)\b)"
    r"|(?P<num>(?:us\$|\$|€|£)?" + _NUMBER + r"(?:\s*(?:%|(?:hundred|thousand|million|billion|trillion|bn)\b))?)"
    r"|(?P<sym>%|us\$|\$|€|£|°[cf]\b)"
    r"|(?P<word>[^\W\d_]+(?:'[^\W\d_]+)*(?:#|\+\+)?)",
    re.IGNORECASE,
)


def normalise_text(text: str) -> str:
    """NFKC, curly quotes and dashes made plain (what every comparison starts from)."""
    text = unicodedata.normalize("NFKC", text)
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("\u2013", "-").replace("\u2014", "-")


@dataclass(frozen=True)
class Lexeme:
    """One comparable unit of a text, in order.

    ``kind``: ``word`` (``text`` as written, ``value`` lower case), ``number`` (``value`` canonical),
    ``ordinal`` (``value`` like ``11th``), ``date`` (``value`` the most specific form; ``covers`` every
    form it vouches for, itself first) or ``unit`` (``value`` the unit's one word).
    """

    kind: str
    text: str
    value: str
    covers: tuple[str, ...] = ()


def canonical_number(digits: str) -> str | None:
    """The canonical form of a digit string ("6,650" -> "6650", "2.50" -> "2.5", "007" -> "7"), or None."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", digits):
        digits = digits.replace(",", "")
    if not re.fullmatch(r"\d+(?:\.\d+)?", digits):
        return None
    whole, _dot, fraction = digits.partition(".")
    whole, fraction = whole.lstrip("0") or "0", fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def _scaled(number: str, scale: int) -> str:
    """``number`` times ``scale`` in canonical form ("3.2" x 1e6 -> "3200000")."""
    whole, _, fraction = number.partition(".")
    zeros = len(str(scale)) - 1
    fraction = fraction[:zeros]
    value = int(whole + fraction + "0" * (zeros - len(fraction)))
    return str(value)


def _date(match: re.Match[str]) -> Lexeme:
    """A date lexeme from a ``_LEXEME`` match of a date form."""
    g = match.groupdict()
    year = g.get("iy") or g.get("ay") or g.get("by") or g.get("cy")
    month_word = g.get("am") or g.get("bm") or g.get("cm") or g.get("dm") or g.get("em")
    month = int(g["im"]) if g.get("im") else MONTHS[month_word.lower()] if month_word else None
    day_text = g.get("id") or g.get("ad") or g.get("bd") or g.get("dd") or g.get("ed")
    day = int(day_text) if day_text else None
    forms: list[str] = []
    if year and month and day:
        forms = [f"{year}-{month:02d}-{day:02d}", f"{year}-{month:02d}", year, f"--{month:02d}-{day:02d}"]
    elif year and month:
        forms = [f"{year}-{month:02d}", year]
    elif month and day:
        forms = [f"--{month:02d}-{day:02d}"]
    return Lexeme("date", match.group(0), forms[0], tuple(forms))


def _number_lexemes(text: str) -> list[Lexeme]:
    """A number token with its currency sign, scale word or percent sign, as lexemes."""
    out: list[Lexeme] = []
    low = text.lower()
    for sign in ("us$", "$", "€", "£"):
        if low.startswith(sign):
            out.append(Lexeme("unit", sign, UNIT_WORDS[sign]))
            low = low[len(sign):]
            break
    match = re.match(_NUMBER, low)
    assert match is not None  # the lexer matched a number here
    value = canonical_number(match.group(0))
    rest = low[match.end():].strip()
    if value is None:  # "1.2.3" (a version, a section): keep it as written
        out.append(Lexeme("number", match.group(0), match.group(0)))
        return out
    if rest in SCALES or rest == "bn":
        value = _scaled(value, SCALES.get(rest, 1_000_000_000))
        rest = ""
    out.append(Lexeme("number", text, value))
    if rest == "%":
        out.append(Lexeme("unit", "%", "percent"))
    return out


def _fold_number_words(lexemes: list[Lexeme]) -> list[Lexeme]:
    """Runs of number words ("two hundred and fifty", "twenty-five", "3 million") as one number;
    ordinal words ("eleventh") as ordinals; "per cent" as the unit percent."""
    out: list[Lexeme] = []
    i = 0
    while i < len(lexemes):
        lexeme = lexemes[i]
        word = lexeme.value if lexeme.kind == "word" else ""
        if word == "per" and i + 1 < len(lexemes) and lexemes[i + 1].value == "cent":
            out.append(Lexeme("unit", "per cent", "percent"))
            i += 2
            continue
        if word in ORDINALS:
            out.append(Lexeme("ordinal", lexeme.text, f"{ORDINALS[word]}th"))
            i += 1
            continue
        if lexeme.kind == "number" and i + 1 < len(lexemes) and lexemes[i + 1].value in SCALES \
                and canonical_number(lexeme.value) is not None:
            out.append(Lexeme("number", f"{lexeme.text} {lexemes[i + 1].text}",
                              _scaled(lexeme.value, SCALES[lexemes[i + 1].value])))
            i += 2
            continue
        if (word in UNITS and word != "one") or word in TENS or (
                word == "one" and i + 1 < len(lexemes) and lexemes[i + 1].value in SCALES):
            total, current, j = 0, 0, i
            used: list[str] = []
            while j < len(lexemes) and lexemes[j].kind == "word":
                w = lexemes[j].value
                if w in UNITS:
                    current += UNITS[w]
                elif w in TENS:
                    current += TENS[w]
                elif w in SCALES and (current or total):
                    if SCALES[w] == 100:
                        current *= 100
                    else:
                        total += current * SCALES[w]
                        current = 0
                elif w == "and" and used and j + 1 < len(lexemes) and (
                        lexemes[j + 1].value in UNITS or lexemes[j + 1].value in TENS):
                    pass
                else:
                    break
                used.append(lexemes[j].text)
                j += 1
            out.append(Lexeme("number", " ".join(used), str(total + current)))
            i = j
            continue
        out.append(lexeme)
        i += 1
    return out


def lex(text: str) -> list[Lexeme]:
    """The lexemes of ``text`` in order (see the module docstring)."""
    text = normalise_text(text)
    lexemes: list[Lexeme] = []
    for match in _LEXEME.finditer(text):
        kind = match.lastgroup
        token = match.group(0)
        if kind == "date":
            lexemes.append(_date(match))
        elif kind == "ord":
            lexemes.append(Lexeme("ordinal", token, f"{int(token[:-2])}th"))
        elif kind == "num":
            lexemes.extend(_number_lexemes(token))
        elif kind == "sym":
            lexemes.append(Lexeme("unit", token, UNIT_WORDS[token.lower()]))
        else:
            low = token.lower()
            if low in UNIT_WORDS and low not in ("in",):
                lexemes.append(Lexeme("unit", token, UNIT_WORDS[low]))
            else:
                lexemes.append(Lexeme("word", token, low))
    return _fold_number_words(lexemes)

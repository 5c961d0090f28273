"""Every user-visible string, by a stable key, in English, Russian and Georgian.

Catalogs live in ``mafiabot/locales/<lang>.json``. An entry is a template (``str.format`` fields)
or, where a number is involved, a table of plural forms chosen by the ``count`` field with the
language's CLDR rule, as Babel knows it (Russian: one, few, many; English and Georgian: one, other).
Discord localizes command names for ``ru`` through ``MafiaTranslator``; it has no Georgian locale,
so Georgian is chosen by the guild or table setting.

A ruleset speaks in its own words: its card names (the georgian Sheriff is the Detective), its
check answers and its display name come from the ruleset through the helpers here, never from a
key that hard-codes one preset's terms.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from functools import cache, lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

import discord
from babel import Locale
from babel.lists import format_list
from babel.numbers import format_decimal
from discord import app_commands

from engine.ids import Role
from engine.ruleset import PRESETS

if TYPE_CHECKING:
    from engine.ruleset import Ruleset

LANGUAGES = ("en", "ru", "ka")
DEFAULT_LANGUAGE = "en"
RELATIVE_TIME_LANGUAGES = frozenset({"en", "ru"})
"""Languages Discord's clients can write a relative timestamp (``in 30 seconds``) in.

Discord has no Georgian locale, so ``<t:…:R>`` would read "in 30 seconds" or "через 30 секунд" in a
Georgian message; there the bot shows the clock time the timer ends (``<t:…:T>``, each reader's own
time zone) after a Georgian label instead.
"""


class MissingMessageError(KeyError):
    """A key is in no catalog: a programming error, caught by the catalog tests."""


@cache
def catalog(language: str) -> Mapping[str, Any]:
    """The catalog of ``language``, loaded once."""
    path = resources.files("mafiabot").joinpath("locales", f"{language}.json")
    if not path.is_file():
        return {}
    return cast("Mapping[str, Any]", json.loads(path.read_text(encoding="utf-8")))


@cache
def _locale(language: str) -> Locale:
    return Locale.parse(language if language in LANGUAGES else DEFAULT_LANGUAGE)


@lru_cache(maxsize=4096)
def plural_form(language: str, count: int) -> str:
    """The CLDR plural category of a whole ``count`` in ``language`` (cached: every count message asks).

    >>> [plural_form("ru", n) for n in (1, 2, 5, 11, 21, 22, 25)]
    ['one', 'few', 'many', 'many', 'one', 'few', 'many']
    >>> [plural_form("ka", n) for n in (1, 2, 21)]
    ['one', 'other', 'other']
    """
    return str(_locale(language).plural_form(abs(count)))


def plural_categories(language: str) -> frozenset[str]:
    """The categories whole numbers fall into in ``language`` (Russian has no ``other`` for them)."""
    return frozenset(plural_form(language, n) for n in range(200))


def join_list(language: str, items: Sequence[str]) -> str:
    """``A, B and C`` the way ``language`` writes a list (CLDR, through Babel).

    >>> join_list("ru", ["Дон", "Шериф"]), join_list("ka", ["დონი", "დეტექტივი", "ექიმი"])
    ('Дон и Шериф', 'დონი, დეტექტივი და ექიმი')
    """
    return format_list(list(items), locale=_locale(language)) if items else ""


POINT_PLACES = 2
"""A game's points and a league's: judge's points have at most two decimals, as have the rules' own."""
TOURNAMENT_PLACES = 3
"""A tournament's points: Ci is counted in thousandths, as the rating site shows it."""
RATING_PLACES = 1
WEIGHT_PLACES = 2
"""A final round's multiplier: at most two decimals (``tournaments.check_finals``)."""
WRITTEN_OUT = Decimal(10) ** 9
"""Figures below this are written in full; larger ones (only from data before the bounds) in E notation."""


def decimal_text(language: str, value: Decimal | float, places: int, *, signed: bool = False) -> str:
    """A figure with exactly ``places`` decimals, the way ``language`` writes it (CLDR, through Babel).

    Rounded half up, as a judge rounds; ``signed`` writes ``+`` before a positive figure, so extra
    points read as additions.

    >>> decimal_text("en", Decimal("3.3"), 3), decimal_text("ru", Decimal("3.3"), 3), decimal_text("ka", 0.5, 2)
    ('3.300', '3,300', '0,50')
    >>> decimal_text("ru", Decimal("0.25"), 2, signed=True), decimal_text("ru", Decimal("0"), 2, signed=True)
    ('+0,25', '0,00')
    """
    number = Decimal(str(value)) if isinstance(value, float) else value
    if not number.is_finite() or abs(number) >= WRITTEN_OUT:
        return f"{number:.2E}" if number.is_finite() else str(number)
    number = number.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    pattern = "0." + "0" * places if places else "0"
    text = format_decimal(number, format=pattern, locale=_locale(language), decimal_quantization=True)
    return f"+{text}" if signed and number > 0 else text


def t(language: str, key: str, /, **fields: Any) -> str:
    """The message ``key`` in ``language`` (falling back to English), filled with ``fields``.

    Raises:
        MissingMessageError: no catalog has ``key``.
    """
    lang = language if language in LANGUAGES else DEFAULT_LANGUAGE
    entry = catalog(lang).get(key)
    if entry is None:
        lang = DEFAULT_LANGUAGE
        entry = catalog(lang).get(key)
    if entry is None:
        raise MissingMessageError(key)
    if isinstance(entry, Mapping):
        count = fields.get("count", 0)
        form = plural_form(lang, int(count))
        entry = entry.get(form) or entry.get("other") or entry.get("many") or next(iter(entry.values()))
    return str(entry).format(**fields)


def has_key(key: str) -> bool:
    """Whether the English catalog defines ``key``."""
    return key in catalog(DEFAULT_LANGUAGE)


# -- a ruleset in its own words ------------------------------------------------------------------


def role_name(language: str, rules: Ruleset, role: Role) -> str:
    """The role's card name at this ruleset's table (the georgian Sheriff is the Detective)."""
    return t(language, f"role.{rules.card_name(role)}")


def ruleset_name(language: str, rules: Ruleset | str) -> str:
    """A ruleset's display name: a preset's in the reader's language, a club's own name as it is."""
    name = rules if isinstance(rules, str) else rules.name
    return t(language, f"ruleset.{name}") if name in PRESETS else name


def ruleset_names(language: str, names: Iterable[str] = PRESETS) -> str:
    """Several rulesets' display names, as a list."""
    return ", ".join(ruleset_name(language, name) for name in names)


def ordinal(language: str, number: int) -> str:
    """A night or day number where the sentence needs an ordinal: Georgian writes ``მე-2``, not ``2``.

    The Georgian form fits a noun in the nominative, genitive or instrumental (``მე-2 ღამიდან``).

    >>> ordinal("ka", 2), ordinal("ka", 1), ordinal("ru", 2)
    ('მე-2', 'პირველი', '2')
    """
    if language == "ka":
        return "პირველი" if number == 1 else f"მე-{number}"
    return str(number)


def countdown(language: str, deadline: datetime | None) -> str:
    """When a timer ends, as Discord markup every reader of ``language`` can read (see above)."""
    if deadline is None:
        return ""
    style = "R" if language in RELATIVE_TIME_LANGUAGES else "T"
    return f"<t:{int(deadline.timestamp())}:{style}>"


def command_mention(ids: Mapping[str, int], path: str) -> str:
    """``</mafia new:ID>``: each reader's client shows the command's name in its own language.

    Without a known id (the commands were not synced or fetched) it is the plain ``/mafia new``.

    >>> command_mention({"mafia": 42}, "mafia new"), command_mention({}, "mafia new")
    ('</mafia new:42>', '/mafia new')
    """
    command_id = ids.get(path.split()[0])
    return f"</{path}:{command_id}>" if command_id else f"/{path}"


class MafiaTranslator(app_commands.Translator):
    """Localizes command names, descriptions and choices for the locales Discord has (``ru``)."""

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        """Look the string's ``key`` up in the catalog of ``locale``; None keeps the default text."""
        key = string.extras.get("key")
        if not key:
            return None
        language = {discord.Locale.russian: "ru"}.get(locale)
        if language is None:
            return None
        entry = catalog(language).get(key)
        return entry if isinstance(entry, str) else None


PROTOCOL_CAUSES = ("killed", "voted_out", "lifted", "fouls", "technical_fouls", "oaths", "disqualified", "left")
"""How a seat may leave the table, as a game's protocol names it."""


def protocol_cause(lang: str, cause: str) -> str:
    """How a seat left the table, in a few words (a cause this version does not know, as it is)."""
    return t(lang, f"protocol.cause.{cause}") if cause in PROTOCOL_CAUSES else cause

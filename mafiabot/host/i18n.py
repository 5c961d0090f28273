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
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import cache, lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

import discord
from babel import Locale
from babel.lists import format_list
from babel.numbers import get_decimal_symbol
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


def decimal(language: str, value: object) -> str:
    """A number as ``language`` writes it: Russian and Georgian put a comma before the decimals.

    Anything that is not a plain number (``#3``, a name) is left as it is.

    >>> decimal("en", "0.5"), decimal("ru", "+0.25"), decimal("ka", "-1.5"), decimal("ru", "3")
    ('0.5', '+0,25', '-1,5', '3')
    """
    text = str(value)
    if not _NUMBER.fullmatch(text):
        return text
    return text.replace(".", get_decimal_symbol(_locale(language)))


_NUMBER = re.compile("[+\\-\u2212]?\\d+\\.\\d+")


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


PROTOCOL_CAUSES = ("killed", "voted_out", "lifted", "fouls", "oaths", "disqualified", "left")
"""How a seat may leave the table, as a game's protocol names it."""


def protocol_cause(lang: str, cause: str) -> str:
    """How a seat left the table, in a few words (a cause this version does not know, as it is)."""
    return t(lang, f"protocol.cause.{cause}") if cause in PROTOCOL_CAUSES else cause

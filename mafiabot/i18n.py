"""Every user-visible string, by a stable key, in English, Russian and Georgian.

Catalogs live in ``mafiabot/locales/<lang>.json``. An entry is a template (``str.format`` fields)
or, where a number is involved, a table of plural forms chosen by the ``count`` field with the
language's own rule (Russian: one, few, many; English and Georgian: one, other).
Discord localizes command names for ``ru`` through ``MafiaTranslator``; it has no Georgian locale,
so Georgian is chosen by the guild or table setting.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any, cast

import discord
from discord import app_commands

LANGUAGES = ("en", "ru", "ka")
DEFAULT_LANGUAGE = "en"


def _plural_en(n: int) -> str:
    return "one" if n == 1 else "other"


def _plural_ru(n: int) -> str:
    if n % 10 == 1 and n % 100 != 11:
        return "one"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "few"
    return "many"


def _plural_ka(n: int) -> str:
    return "one" if n == 1 else "other"


PLURAL_RULES: dict[str, Callable[[int], str]] = {"en": _plural_en, "ru": _plural_ru, "ka": _plural_ka}


class MissingMessageError(KeyError):
    """A key is in no catalog: a programming error, caught by the catalog tests."""


@cache
def catalog(language: str) -> Mapping[str, Any]:
    """The catalog of ``language``, loaded once."""
    path = resources.files("mafiabot").joinpath("locales", f"{language}.json")
    if not path.is_file():
        return {}
    return cast("Mapping[str, Any]", json.loads(path.read_text(encoding="utf-8")))


def plural_form(language: str, count: int) -> str:
    """The plural category of ``count`` in ``language``.

    >>> [plural_form("ru", n) for n in (1, 2, 5, 11, 21, 22, 25)]
    ['one', 'few', 'many', 'many', 'one', 'few', 'many']
    """
    return PLURAL_RULES.get(language, _plural_en)(abs(count))


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

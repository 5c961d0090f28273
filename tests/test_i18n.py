"""The catalogs: the same keys and fields in every language, the right plural forms, and no text outside them.

Besides the catalogs themselves, the code is read (by its AST, never run) to check that every key it can
ask ``t()`` for exists, that every error code the engine and the table raise has a message, and that no
user-facing text is written as a literal in the cogs or the presenter.
"""

from __future__ import annotations

import ast
import json
import re
import string
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any, cast, get_args, get_type_hints

import discord
import pytest
from discord import app_commands
from discord.app_commands import locale_str

from cogs.protest import RULINGS
from cogs.texts.panel import BUTTONS, CONFIRMABLE, MENUS
from cogs.texts.settings import CLEARABLE
from engine import errors as engine_errors
from engine.ids import Cause, FloorKind, NoVoteReason, Phase, Result, Role, VoteKind
from engine.ruleset import PRESETS, CheckResult, Ruleset
from mafiabot.core.errors import SettingsProblem
from mafiabot.core.protocol import ProtestStatus
from mafiabot.core.records import TIMER_SETTINGS
from mafiabot.core.runtime import Table
from mafiabot.host.i18n import LANGUAGES, MafiaTranslator, plural_categories, plural_form, t
from mafiabot.host.pictures.form import ROLE_LETTERS, TEAMS
from mafiabot.host.places import POWERS
from mafiabot.host.web.server import STRINGS as STREAM_STRINGS

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "mafiabot" / "locales"
PLURAL_FORMS = {"en": {"one", "other"}, "ru": {"one", "few", "many"}, "ka": {"one", "other"}}
"""What CLDR gives whole numbers (``test_plural_categories_come_from_cldr``)."""
KEY = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
DISCORD_MARKUP = re.compile(r"<(?:t:[^>]*|@[!&]?[^>]*|#[^>]*|:[^>]*)>")
COMMAND_DESCRIPTION_LIMIT = 100
COMMAND_NAME_LIMIT = 32

TEXT_CALLS = frozenset({"send", "send_message", "edit_message", "answer"})
"""Calls whose positional arguments are message content."""
TEXT_KEYWORDS = frozenset({"content", "label", "placeholder", "description"})
"""Keywords (of any call) whose value is shown to users."""
TEXT_FILES = (
    *sorted((ROOT / "cogs").rglob("*.py")),
    *sorted((ROOT / "mafiabot" / "host").rglob("*.py")),
    *sorted((ROOT / "mafiabot" / "core").rglob("*.py")),
)
"""Where text for players is made: the cogs, the Discord side and the table core (not the tools or the emulator)."""
KEY_FILES = (*sorted((ROOT / "cogs").rglob("*.py")), *sorted((ROOT / "mafiabot").rglob("*.py")))
ENGINE_FILES = tuple(sorted((ROOT / "engine").glob("*.py")))

# -- the catalogs -----------------------------------------------------------------------------------


@cache
def load(language: str) -> dict[str, Any]:
    """A catalog as the file holds it now (``mafiabot.host.i18n.catalog`` caches per process)."""
    path = LOCALES / f"{language}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def forms(entry: str | Mapping[str, str]) -> dict[str, str]:
    """The templates of an entry, by plural form ("" for a plain template)."""
    return {"": entry} if isinstance(entry, str) else dict(entry)


def fields(template: str) -> set[str]:
    """The ``str.format`` fields of a template."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def english_fields(key: str) -> set[str]:
    """The fields of the English entry (the union over its forms)."""
    return set().union(*(fields(x) for x in forms(load("en")[key]).values()))


def test_every_language_has_a_catalog_and_a_plural_rule() -> None:
    for language in LANGUAGES:
        assert (LOCALES / f"{language}.json").is_file(), language
        assert load(language), language


@pytest.mark.parametrize("language", LANGUAGES)
def test_plural_categories_come_from_cldr(language: str) -> None:
    assert plural_categories(language) == PLURAL_FORMS[language]


@pytest.mark.parametrize("language", LANGUAGES)
def test_catalog_file_is_sorted_json(language: str) -> None:
    text = (LOCALES / f"{language}.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert text.rstrip("\n") == json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)


@pytest.mark.parametrize("language", LANGUAGES)
def test_catalog_has_every_key_of_every_other_catalog(language: str) -> None:
    everything = set().union(*(load(other) for other in LANGUAGES))
    missing = sorted(everything - set(load(language)))
    assert not missing, f"{language}.json lacks {missing}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_catalog_has_exactly_the_english_keys(language: str) -> None:
    catalog = load(language)
    english = load("en")
    assert sorted(set(english) - set(catalog)) == []
    assert sorted(set(catalog) - set(english)) == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_fields_match_the_english_entry(language: str) -> None:
    english = load("en")
    wrong = []
    for key, entry in load(language).items():
        if key not in english:
            continue
        expected = english_fields(key)
        for form, template in forms(entry).items():
            assert isinstance(template, str), (language, key, form)
            assert template.strip(), (language, key, form)
            found = fields(template)
            if form == "one" and _one_is_only_one(language) and found == expected - {"count"}:
                continue  # "once", "ერთხელ": the number in words, where "one" can only be 1
            if found != expected:
                wrong.append(f"{key}[{form}]: {sorted(found)} != {sorted(expected)}")
            if any(not name.isidentifier() for name in found):
                wrong.append(f"{key}[{form}]: only plain field names are allowed: {sorted(found)}")
    assert not wrong, f"{language}.json:\n" + "\n".join(wrong)


def _one_is_only_one(language: str) -> bool:
    """Whether the ``one`` category holds 1 alone (in Russian it also holds 21, 31…)."""
    return [n for n in range(200) if plural_form(language, n) == "one"] == [1]


def test_english_forms_share_their_fields() -> None:
    for key, entry in load("en").items():
        variants = {frozenset(fields(x)) for x in forms(entry).values()}
        assert len(variants) == 1, key


@pytest.mark.parametrize("language", LANGUAGES)
def test_plural_entries_have_the_forms_of_their_language(language: str) -> None:
    english = load("en")
    for key, entry in load(language).items():
        if isinstance(entry, Mapping):
            assert set(entry) == PLURAL_FORMS[language], (language, key, sorted(entry))
        if key in english:
            assert isinstance(entry, Mapping) == isinstance(english[key], Mapping), (language, key)


def test_plural_entries_are_chosen_by_count() -> None:
    plural = {key for key, entry in load("en").items() if isinstance(entry, Mapping)}
    without_count = {key for key in plural if "count" not in english_fields(key)}
    assert not without_count, sorted(without_count)


RUSSIAN = [(1, "one"), (2, "few"), (4, "few"), (5, "many"), (11, "many"), (12, "many"), (14, "many"),
           (21, "one"), (22, "few"), (25, "many"), (111, "many"), (0, "many")]


@pytest.mark.parametrize(("count", "form"), RUSSIAN)
def test_russian_plural_rule(count: int, form: str) -> None:
    assert plural_form("ru", count) == form


@pytest.mark.parametrize(("count", "form"), RUSSIAN)
def test_t_picks_the_russian_form(count: int, form: str) -> None:
    word = {"one": "голос", "few": "голоса", "many": "голосов"}[form]
    text = t("ru", "vote.result_line", target="#3", count=count, voters="#1")
    assert text == load("ru")["vote.result_line"][form].format(target="#3", count=count, voters="#1")
    assert f"{count} {word} (" in text
    fouls = {"one": "фол", "few": "фола", "many": "фолов"}[form]
    assert t("ru", "end.role_line", player="#1", role="Дон", points="0", count=count).endswith(f"{count} {fouls}")


@pytest.mark.parametrize("language", ["en", "ka"])
def test_t_picks_one_or_other(language: str) -> None:
    one = t(language, "vote.result_line", target="#3", count=1, voters="#1")
    other = t(language, "vote.result_line", target="#3", count=2, voters="#1")
    assert one == load(language)["vote.result_line"]["one"].format(target="#3", count=1, voters="#1")
    assert other == load(language)["vote.result_line"]["other"].format(target="#3", count=2, voters="#1")


def test_t_falls_back_to_english_for_an_unknown_language() -> None:
    assert t("xx", "night.done") == load("en")["night.done"]


# -- slash commands ---------------------------------------------------------------------------------

COMMAND_AS_TEXT = re.compile(r"(?<![<\w])/(mafia|мафия|მაფია)\b")


@pytest.mark.parametrize("language", LANGUAGES)
def test_messages_name_commands_by_mention(language: str) -> None:
    """A command in a message is a ``{cmd_…}`` mention: each reader's client shows its own name for it.

    Command descriptions (``cmd.*``) are exempt: Discord itself shows them in the reader's language.
    """
    wrong = [key for key, entry in load(language).items() if not key.startswith("cmd.")
             for text in forms(entry).values() if COMMAND_AS_TEXT.search(text)]
    assert not wrong, wrong
    mentioned = {key for key, entry in load("en").items() for text in forms(entry).values() if "{cmd_" in text}
    assert mentioned >= {"error.lobby.gone", "judge.done.pause", "history.hint"}


def _command_entries(language: str) -> dict[str, str]:
    return {key: value for key, value in load(language).items() if key.startswith("cmd.")}


@pytest.mark.parametrize("language", LANGUAGES)
def test_command_names_follow_discords_rule(language: str) -> None:
    names = {key: value for key, value in _command_entries(language).items() if key.endswith(".name")}
    assert names
    for key, name in names.items():
        assert isinstance(name, str), key
        assert 1 <= len(name) <= COMMAND_NAME_LIMIT, (key, name)
        assert all(ch.isalnum() or ch in "-_" for ch in name), (key, name)
        assert name == name.lower(), (key, name)
    # Discord wants names unique within one group: ``cmd.<sub>.name`` are /mafia's,
    # ``cmd.<group>.<sub>.name`` a subgroup's.
    groups: dict[str, list[str]] = {}
    for key, name in names.items():
        if key != "cmd.mafia.name":
            groups.setdefault(".".join(key.split(".")[1:-2]), []).append(name)
    assert "ruleset" in groups
    for group, subcommands in groups.items():
        assert len(subcommands) == len(set(subcommands)), f"{language}: two subcommands of /mafia {group} share a name"


@pytest.mark.parametrize("language", LANGUAGES)
def test_option_names_follow_discords_rule(language: str) -> None:
    """``option.<name>``: an option's name in that language (Discord's rule for names applies)."""
    names = {key: value for key, value in load(language).items() if key.startswith("option.")}
    assert len(names) >= 15
    for key, name in names.items():
        assert 1 <= len(name) <= COMMAND_NAME_LIMIT, (key, name)
        assert all(ch.isalnum() or ch in "-_" for ch in name), (key, name)
        assert name == name.lower(), (key, name)
        if language == "en":
            assert name == key.removeprefix("option."), key  # the default name is the option's own


@pytest.mark.parametrize("language", LANGUAGES)
def test_command_descriptions_fit(language: str) -> None:
    for key, text in _command_entries(language).items():
        if key.endswith(".name"):
            continue
        assert isinstance(text, str), key
        assert 1 <= len(text) <= COMMAND_DESCRIPTION_LIMIT, (key, len(text))


def _locale_strings() -> Iterator[tuple[str, str, str]]:
    """``(file:line, default text, key)`` of every ``locale_str(..., key=...)`` in the cogs."""
    for path in sorted((ROOT / "cogs").rglob("*.py")):
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.Call) or _callee(node) not in {"_", "locale_str"}:
                continue
            key = next((k.value for k in node.keywords if k.arg == "key"), None)
            if isinstance(key, ast.Constant) and node.args and isinstance(node.args[0], ast.Constant):
                where, default, name = f"{path.relative_to(ROOT)}:{node.lineno}", node.args[0].value, key.value
                assert isinstance(default, str), f"{where}: the text is not a string"
                assert isinstance(name, str), f"{where}: the key is not a string"
                yield where, default, name


def test_command_strings_in_the_code_are_the_english_catalog() -> None:
    found = list(_locale_strings())
    assert found
    english = load("en")
    for where, default, key in found:
        assert key in english, f"{where}: {key} is not in en.json"
        assert english[key] == default, f"{where}: {default!r} differs from en.json's {english[key]!r}"


def _context() -> app_commands.TranslationContext[Any, Any]:
    # The translator reads only the string and the locale; "other" is the location that needs no command.
    return app_commands.TranslationContext(app_commands.TranslationContextLocation.other, None)


async def test_translator_gives_russian_command_names() -> None:
    translator = MafiaTranslator()
    russian = await translator.translate(locale_str("new", key="cmd.new.name"), discord.Locale.russian, _context())
    assert russian == load("ru")["cmd.new.name"]
    assert russian != "new"
    for key, text in _command_entries("ru").items():
        default = load("en")[key]
        assert await translator.translate(locale_str(default, key=key), discord.Locale.russian, _context()) == text


async def test_translator_keeps_the_default_elsewhere() -> None:
    translator = MafiaTranslator()
    string_ = locale_str("new", key="cmd.new.name")
    assert await translator.translate(string_, discord.Locale.german, _context()) is None
    assert await translator.translate(string_, discord.Locale.american_english, _context()) is None
    assert await translator.translate(locale_str("new"), discord.Locale.russian, _context()) is None


# -- reading the code -------------------------------------------------------------------------------


@cache
def _tree(path: Path) -> ast.Module:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            child.parent = parent  # type: ignore[attr-defined]
    return tree


def _callee(call: ast.Call) -> str | None:
    """The called name: ``f`` for ``f(...)`` and ``obj.f(...)``."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _enclosing_function(node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    current = getattr(node, "parent", None)
    while current is not None:
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
            return current
        current = getattr(current, "parent", None)
    return None


def _imports_t(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "mafiabot.host.i18n"
        and any(a.name == "t" for a in node.names)
        for node in ast.walk(tree)
    )


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"


class Values:
    """What a string expression can evaluate to, as far as the code says it statically."""

    def __init__(self) -> None:
        self.literals: set[str] = set()
        self.templates: list[ast.JoinedStr] = []
        self.unresolved: list[str] = []

    def add(self, other: Values) -> None:
        self.literals |= other.literals
        self.templates += other.templates
        self.unresolved += other.unresolved


def _resolve(expr: ast.expr, path: Path, files: tuple[Path, ...], depth: int = 0) -> Values:
    """The strings ``expr`` can be: literals, f-strings, names assigned from them, parameters given them."""
    values = Values()
    if depth > 6:
        values.unresolved.append(_where(path, expr))
    elif isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        values.literals.add(expr.value)
    elif isinstance(expr, ast.JoinedStr):
        values.templates.append(expr)
    elif isinstance(expr, ast.IfExp):
        values.add(_resolve(expr.body, path, files, depth + 1))
        values.add(_resolve(expr.orelse, path, files, depth + 1))
    elif isinstance(expr, ast.BoolOp):
        for operand in expr.values:
            values.add(_resolve(operand, path, files, depth + 1))
    elif isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Dict):
        for item in expr.value.values:
            values.add(_resolve(item, path, files, depth + 1))
    elif isinstance(expr, ast.Name) and (function := _enclosing_function(expr)) is not None:
        values.add(_resolve_name(expr, function, path, files, depth))
    else:
        values.unresolved.append(_where(path, expr))
    return values


def _resolve_name(
    name: ast.Name, function: ast.FunctionDef | ast.AsyncFunctionDef, path: Path, files: tuple[Path, ...], depth: int
) -> Values:
    values = Values()
    params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    keyword_only = [a.arg for a in function.args.kwonlyargs]
    if name.id in params or name.id in keyword_only:
        calls = 0
        for call_path, value in _arguments(function, name.id, files):
            calls += 1
            values.add(_resolve(value, call_path, files, depth + 1))
        if not calls:
            values.unresolved.append(f"{_where(path, name)} (no call gives {function.name}() its {name.id})")
        return values
    assigned = [
        node.value
        for node in ast.walk(function)
        if isinstance(node, ast.Assign) and any(isinstance(x, ast.Name) and x.id == name.id for x in node.targets)
    ]
    if not assigned:
        values.unresolved.append(_where(path, name))
    for value in assigned:
        values.add(_resolve(value, path, files, depth + 1))
    return values


def _arguments(
    function: ast.FunctionDef | ast.AsyncFunctionDef, param: str, files: tuple[Path, ...]
) -> Iterator[tuple[Path, ast.expr]]:
    """Every argument given to ``param`` of ``function`` by a call in ``files``, with the caller's file."""
    params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    method = bool(params) and params[0] in {"self", "cls"}
    for path in files:
        for call in ast.walk(_tree(path)):
            if not isinstance(call, ast.Call) or _callee(call) != function.name:
                continue
            keyword = next((k.value for k in call.keywords if k.arg == param), None)
            if keyword is not None:
                yield path, keyword
                continue
            if param not in params:
                continue
            index = params.index(param) - (1 if method and isinstance(call.func, ast.Attribute) else 0)
            if 0 <= index < len(call.args) and not isinstance(call.args[index], ast.Starred):
                yield path, call.args[index]


def _key_expressions(files: Iterable[Path]) -> Iterator[tuple[Path, ast.expr]]:
    """The key argument of every ``t(language, key, ...)`` call in files that import ``t``."""
    for path in files:
        tree = _tree(path)
        if not _imports_t(tree):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t":
                assert len(node.args) >= 2, f"{_where(path, node)}: t() needs a language and a key"
                yield path, node.args[1]


@cache
def _keys_in_code() -> tuple[frozenset[str], tuple[tuple[str, ast.JoinedStr], ...], tuple[str, ...]]:
    """Every literal key, f-string key and unresolved key expression the code passes to ``t()``."""
    literals: set[str] = set()
    templates: list[tuple[str, ast.JoinedStr]] = []
    unresolved: list[str] = []
    for path, expr in _key_expressions(KEY_FILES):
        values = _resolve(expr, path, KEY_FILES)
        literals |= values.literals
        templates += [(_where(path, x), x) for x in values.templates]
        unresolved += values.unresolved
    return frozenset(literals), tuple(templates), tuple(unresolved)


def test_every_literal_key_is_in_the_catalog() -> None:
    literals, _, unresolved = _keys_in_code()
    assert len(literals) > 50
    english = load("en")
    missing = sorted(key for key in literals if key not in english)
    assert not missing, f"keys used in the code but not in en.json: {missing}"
    assert not unresolved, f"key expressions the test cannot follow (use a literal or an f-string): {unresolved}"


def _error_codes() -> dict[str, str]:
    """Every error code raised by the engine (any ``RulesError`` class) and by ``TableError``."""
    classes = {
        name for name, value in vars(engine_errors).items()
        if isinstance(value, type) and issubclass(value, engine_errors.RulesError)
    }
    codes: dict[str, str] = {}
    unresolved: list[str] = []

    def collect(files: tuple[Path, ...], names: set[str]) -> None:
        for path in files:
            for node in ast.walk(_tree(path)):
                if not isinstance(node, ast.Call) or _callee(node) not in names or not node.args:
                    continue
                values = _resolve(node.args[0], path, files)
                unresolved.extend(values.unresolved + [_where(path, x) for x in values.templates])
                for code in values.literals:
                    codes.setdefault(code, _where(path, node))

    collect(ENGINE_FILES, classes)
    collect(KEY_FILES, {"TableError"})
    assert not unresolved, f"error codes the test cannot follow (use a literal): {unresolved}"
    return codes


def test_every_error_code_has_a_message() -> None:
    codes = _error_codes()
    assert "game.over" in codes
    assert "table.not_seated" in codes
    assert "night.not_the_doctor" in codes  # given to a helper that raises with it
    english = load("en")
    missing = sorted(f"error.{code} ({where})" for code, where in codes.items() if f"error.{code}" not in english)
    assert not missing, f"error codes without a message in en.json: {missing}"


def _returned_strings(path: Path, function: str) -> set[str]:
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function:
            return {
                x.value.value for x in ast.walk(node)
                if isinstance(x, ast.Return) and isinstance(x.value, ast.Constant) and isinstance(x.value.value, str)
            }
    raise AssertionError(f"no function {function} in {path}: the test must follow it where it moved")


def _literal(cls: type, field: str) -> set[str]:
    return {str(x) for x in get_args(get_type_hints(cls)[field])}


def _values() -> dict[str, set[str]]:
    """Every value the code can put after each prefix of an f-string key, from the engine's own types."""
    return {
        "vote.none.": {x.value for x in NoVoteReason},
        "removal.": {x.value for x in Cause if x.is_removal},
        "end.result.": {x.value for x in Result},
        "end.departure.": {x.value for x in Cause},
        "phase.": {x.value for x in Phase},
        "floor.": {x.value for x in FloorKind},
        "vote.started.": {x.value for x in VoteKind},
        "morning.": _literal(Ruleset, "miss_announcement"),
        "lobby.cancelled.": _returned_strings(ROOT / "mafiabot" / "core" / "tables.py", "cancel"),
        "role.": {x.value for x in Role} | _literal(Ruleset, "checker"),
        "ruleset.": set(PRESETS),
        "timer.": set(TIMER_SETTINGS),
        "cmd.settings.clear.": set(CLEARABLE),
        "check.": set(get_args(CheckResult)),
        "check.result.": set(get_args(CheckResult)),
        "end.check.": _literal(Ruleset, "checker"),
        "end.check.don_yes.": _literal(Ruleset, "checker"),
        "end.check.don_no.": _literal(Ruleset, "checker"),
        "night.don_check.": _literal(Ruleset, "checker"),
        "rules.checker.": _literal(Ruleset, "checker"),
        "rules.kill.": _literal(Ruleset, "mafia_kill"),
        "rules.check.": _literal(Ruleset, "check_style"),
        "error.": set(_error_codes()),
        "settings.invalid.": set(get_args(SettingsProblem)),
        "power.": set(POWERS),
        "panel.button.": set(BUTTONS),
        "panel.menu.": set(MENUS),
        "panel.confirm.": set(CONFIRMABLE),
        "form.role.": set(ROLE_LETTERS),
        "form.team.": set(TEAMS),
        "stream.": set(STREAM_STRINGS),
        "card.cause.": {x.value for x in Cause},
        "protest.ruled.": set(RULINGS),
        "protest.button.": set(RULINGS),
        "protest.modal.": set(RULINGS),
        "protest.status.": set(get_args(ProtestStatus)),
        "rules.presence.": _literal(Ruleset, "presence") - {"off"},
    }


def test_every_value_of_each_key_prefix_has_an_entry() -> None:
    english = load("en")
    for prefix, values in _values().items():
        assert values, prefix
        missing = sorted(prefix + value for value in values if prefix + value not in english)
        if prefix == "error.":
            continue  # a code without a message falls back to error.unknown; test_every_error_code_has_a_message
        assert not missing, f"{prefix}: {missing}"


def test_every_f_string_key_can_only_produce_catalog_keys() -> None:
    _, templates, _ = _keys_in_code()
    assert templates
    known = _values()
    english = load("en")
    problems = []
    for where, template in templates:
        parts = template.values
        holes = [p for p in parts if isinstance(p, ast.FormattedValue)]
        if len(holes) != 1:
            problems.append(f"{where}: an f-string key must have exactly one field")
            continue
        index = parts.index(holes[0])
        prefix = "".join(str(p.value) for p in parts[:index] if isinstance(p, ast.Constant))
        suffix = "".join(str(p.value) for p in parts[index + 1:] if isinstance(p, ast.Constant))
        hole = holes[0].value
        if (
            isinstance(hole, ast.IfExp)
            and isinstance(hole.body, ast.Constant)
            and isinstance(hole.orelse, ast.Constant)
        ):
            values = {str(hole.body.value), str(hole.orelse.value)}
        elif prefix in known and not suffix:
            values = known[prefix]
        else:
            problems.append(f"{where}: f-string key {prefix!r}…{suffix!r}: add its prefix to _values() in this test")
            continue
        if prefix == "error.":
            continue  # checked against the codes in test_every_error_code_has_a_message
        problems += [f"{where}: {prefix}{v}{suffix} is not in en.json" for v in sorted(values)
                     if f"{prefix}{v}{suffix}" not in english]
    assert not problems, "\n".join(problems)


def test_the_engine_enums_are_all_spoken_for() -> None:
    """Spot checks that the derived values are what the presenter renders."""
    values = _values()
    assert values["lobby.cancelled."] == {"lobby", "game", "stale"}
    assert values["morning."] == {"nobody_hurt", "mafia_missed"}
    assert "fouls" in values["removal."]
    assert "killed" not in values["removal."]


# -- no text outside the catalogs -------------------------------------------------------------------


def _is_catalog_call(node: ast.AST) -> bool:
    """``t(...)``, or a command string with its catalog key (``locale_str("new", key="cmd.new.name")``)."""
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Name) and node.func.id == "t":
        return True
    return _callee(node) in {"_", "locale_str"} and any(k.arg == "key" for k in node.keywords)


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in DISCORD_MARKUP.sub("", text))


def _literal_text(expr: ast.expr) -> Iterator[ast.AST]:
    """String literals with letters in ``expr``, outside catalog calls."""
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if _is_catalog_call(node):
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _has_letters(node.value):
            yield node
            continue
        if isinstance(node, ast.JoinedStr):
            shape = "".join(str(p.value) if isinstance(p, ast.Constant) else "{}" for p in node.values)
            if _has_letters(shape):
                yield node
            stack.extend(p for p in node.values if isinstance(p, ast.FormattedValue))
            continue
        stack.extend(ast.iter_child_nodes(node))


def _message_text(source: str, filename: str = "<test>") -> list[str]:
    """``line: text`` for every literal passed as message content in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if not isinstance(node, ast.Call):
            continue
        shown: list[ast.expr] = []
        if _callee(node) in TEXT_CALLS:
            shown += node.args
        shown += [k.value for k in node.keywords if k.arg in TEXT_KEYWORDS]
        for expr in shown:
            for literal in _literal_text(expr):
                found.append(f"{filename}:{getattr(literal, 'lineno', '?')}: {ast.unparse(literal)}")
    return found


def test_the_text_check_catches_literals() -> None:
    source = textwrap.dedent("""
        async def f(channel, interaction, lang, seat):
            await channel.send("The game begins")
            await interaction.response.send_message(f"Seat {seat} is out")
            await interaction.response.edit_message(content="Done", view=None)
            await answer(interaction, "Nope: " + reason)
            button = Button(label="Join")
            select = Select(placeholder="Pick one")
            await channel.send(t(lang, "night.done"))
            await channel.send(f"<@{seat}> <t:{seat}:R> #{seat}")
            await channel.send("\\n".join(lines) or "\\u200b")
            await channel.send(t(lang, "vote.window", target=seat_label(seat), countdown=f"<t:{seat}:R>"))
    """)
    found = _message_text(source)
    assert len(found) == 6, found


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_user_text_outside_the_catalogs(path: Path) -> None:
    found = _message_text(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "user-facing literals (put them in mafiabot/locales/en.json and use t()):\n" + "\n".join(found)


# -- each preset in its own words -------------------------------------------------------------------

CHECKER_VARIANTS = re.compile(
    r"^(role|night\.don_check|rules\.checker|end\.check(\.don_(yes|no))?)\.(?P<card>sheriff|detective)$"
)
"""Keys that exist once per checker title; a table only ever reads its own."""
CHECK_WORDS = re.compile(r"^(check|check\.result|rules\.check)\.(?P<answer>black|red|mafia|not_mafia|black_red)$")
SHOWN_ONLY_WITH: dict[str, Role] = {
    "error.doctor.": Role.DOCTOR, "error.night.not_the_doctor": Role.DOCTOR, "night.heal": Role.DOCTOR,
    "night.healed": Role.DOCTOR, "protocol.heal": Role.DOCTOR, "role.doctor": Role.DOCTOR, "rules.doctor": Role.DOCTOR,
    "error.maniac.": Role.MANIAC, "error.night.not_the_maniac": Role.MANIAC, "night.maniac": Role.MANIAC,
    "protocol.maniac_": Role.MANIAC, "role.maniac": Role.MANIAC, "rules.maniac": Role.MANIAC,
    "end.result.maniac": Role.MANIAC, "history.result.maniac": Role.MANIAC, "team.maniac": Role.MANIAC,
    "protocol.reason.maniac_duel": Role.MANIAC,
}
"""Key prefixes the bot shows only at a table that deals the role (the cogs and presenter ask the ruleset)."""
SERVER_WIDE = ("stats.", "cmd.")
"""Answers about every game on a server, or Discord's command texts: not one ruleset's words."""


def _card_stems(language: str, card: str) -> str:
    """A card's name as a lowercase stem that its inflected forms start with (შერიფი → შერიფ)."""
    name = str(load(language)[f"role.{card}"]).lower()
    return name[:-1] if language == "ka" and name.endswith("ი") else name


def _foreign_cards(rules: Ruleset) -> set[str]:
    """Card names a table of ``rules`` never deals."""
    cards = {"sheriff", "detective"} - {rules.checker}
    cards |= {role.value for role in (Role.DOCTOR, Role.MANIAC) if not rules.has_role(role)}
    return cards


def _shown_at(rules: Ruleset, key: str) -> bool:
    if key.startswith(SERVER_WIDE):
        return False
    if (variant := CHECKER_VARIANTS.match(key)) and variant["card"] != rules.checker:
        return False
    if (words := CHECK_WORDS.match(key)) and words["answer"] not in {
        rules.check_style, rules.check_result(black=True), rules.check_result(black=False)
    }:
        return False
    if key.startswith("best_move.") or key in ("rules.best_move", "button.best_move", "phase.best_move"):
        return rules.best_move
    return all(rules.has_role(role) for prefix, role in SHOWN_ONLY_WITH.items() if key.startswith(prefix))


def _sample_fields(language: str, rules: Ruleset, key: str) -> dict[str, Any]:
    """The fields a key's template takes, filled the way the bot fills them at ``rules``' table."""
    from mafiabot.host.i18n import join_list, role_name, ruleset_name

    values: dict[str, Any] = {
        "role": role_name(language, rules, Role.SHERIFF),
        "result": t(language, f"check.result.{rules.check_result(black=True)}"),
        "answer": t(language, f"rules.check.{rules.check_style}"),
        "seen": t(language, f"check.result.{rules.maniac_check_result}"),
        "roles": join_list(language, [role_name(language, rules, r) for r in rules.meets_host(rules.default_players)]),
        "ruleset": ruleset_name(language, rules), "name": ruleset_name(language, rules), "base": "",
    }
    return {name: values.get(name, 3) for name in english_fields(key)}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("preset", PRESETS)
def test_every_message_names_only_the_roles_of_its_preset(language: str, preset: str) -> None:
    rules = PRESETS[preset]
    stems = {card: _card_stems(language, card) for card in _foreign_cards(rules)}
    rendered = {key: t(language, key, **_sample_fields(language, rules, key))
                for key in load("en") if _shown_at(rules, key)}
    assert len(rendered) > 300
    wrong = [f"{key}: names the {card}: {text}" for key, text in rendered.items()
             for card, stem in stems.items() if stem in text.lower()]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("preset", PRESETS)
def test_rules_night_zero_and_checks_speak_the_presets_words(language: str, preset: str) -> None:
    from cogs.texts.rules import rules_lines
    from engine import events as ev
    from mafiabot.host.presenter import check_lines, night_zero_lines

    rules = PRESETS[preset]
    table = cast(Table, _TableStub(language, rules))  # the text helpers read only these three fields
    lines = [*night_zero_lines(table), *check_lines(table, [
        ev.DonChecked(seat=1, target=2, sheriff=True), ev.DonChecked(seat=1, target=3, sheriff=False),
        ev.SheriffChecked(seat=2, target=1, black=True), ev.SheriffChecked(seat=2, target=4, black=False),
    ])]
    for players in rules.player_counts:
        lines += rules_lines(language, rules, players)
    text = "\n".join(lines).lower()
    for card in _foreign_cards(rules):
        assert _card_stems(language, card) in load(language)[f"role.{card}"].lower()
        assert _card_stems(language, card) not in text, (card, text)
    # The checker is named, with its own answers.
    assert _card_stems(language, rules.checker) in text
    for black in (True, False):
        assert t(language, f"check.result.{rules.check_result(black=black)}").lower() in text
    meeters = rules.meets_host(rules.default_players)
    assert all(t(language, f"role.{rules.card_name(role)}").lower() in text for role in meeters)


def test_a_custom_ruleset_keeps_its_own_name_and_names_its_preset_in_the_readers_language() -> None:
    from cogs.texts.rules import rules_lines
    from engine import from_toml
    from mafiabot.host.i18n import ruleset_name

    club = from_toml("name = 'Клуб «Тбилиси»'\nbase = 'georgian'\ndefense_before_vote = false")
    assert ruleset_name("ka", club) == "Клуб «Тбилиси»"
    assert rules_lines("ka", club, 12)[0] == t("ka", "rules.title", name="Клуб «Тбилиси»",
                                               base=t("ka", "rules.base", base=t("ka", "ruleset.georgian")))
    assert ruleset_name("ru", PRESETS["classic"]) == "классические"
    assert ruleset_name("ru", "fiim") == t("ru", "ruleset.fiim")


class _TableStub:
    """What the presenter's pure text helpers read from a table."""

    def __init__(self, language: str, rules: Ruleset) -> None:
        self.language = language
        self.ruleset = rules
        self.seats = [0] * rules.default_players


# -- the players' guide -----------------------------------------------------------------------------

GUIDE_SECTIONS = {"en": "## English", "ru": "## Русский", "ka": "## ქართული"}
GUIDE_LABELS = ("button.join", "button.card", "button.thanks", "button.night_action", "select.nominate")


def _guide_section(language: str) -> str:
    text = (ROOT / "docs" / "playing.md").read_text(encoding="utf-8")
    start = text.index(GUIDE_SECTIONS[language])
    ends = [text.index(h) for h in GUIDE_SECTIONS.values() if text.index(h) > start]
    return text[start:min(ends, default=len(text))]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_players_guide_quotes_the_labels_the_bot_shows(language: str) -> None:
    section = _guide_section(language)
    quoted = set(re.findall(r"\*\*([^*]+)\*\*", section))
    for key in GUIDE_LABELS:
        assert load(language)[key] in quoted, (language, key)
    others = {load(other)[key] for other in LANGUAGES if other != language for key in GUIDE_LABELS}
    assert not quoted & (others - {load(language)[key] for key in GUIDE_LABELS}), quoted & others


def test_the_modules_examples_hold() -> None:
    import doctest

    from mafiabot.host import i18n

    result = doctest.testmod(i18n)
    assert result.attempted >= 5
    assert result.failed == 0

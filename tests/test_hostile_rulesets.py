"""Hostile ruleset files: every one is refused with the key at fault and a reason, never a crash.

A server's admin uploads these and a host drops them in ``[game] rulesets_dir``; both go through
``parse_ruleset``. The bot-side paths (the upload command, ``mafiabot run``) are in
tests/bot/test_rulesets.py; here each file meets the parser directly, so a few hundred cost nothing.
"""

from __future__ import annotations

import dataclasses
import sys

import pytest

from engine import RulesetError, from_toml
from engine.ruleset import NESTED_TOO_DEEPLY, Ruleset
from mafiabot.core.rulesets import MAX_RULESET_BYTES, RulesetFileError, parse_ruleset

DEEP_ARRAY = "name = " + "[" * 3000 + "]" * 3000 + "\n"
DEEP_TABLE = "name = " + "{a = " * 1000 + "1" + "}" * 1000 + "\n"
DEEP_KEY = "[" + ".".join(["a"] * 2000) + "]\nb = 1\n"

HOSTILE: dict[str, tuple[str, str]] = {
    # name: (file text, the key the refusal names)
    "nan text": ('removal_penalty = "NaN"\n', "removal_penalty"),
    "nan float": ("removal_penalty = nan\n", "removal_penalty"),
    "signalling nan": ('removal_penalty = "sNaN"\n', "removal_penalty"),
    "inf float": ("removal_penalty = inf\n", "removal_penalty"),
    "minus inf text": ('removal_penalty = "-Infinity"\n', "removal_penalty"),
    "tiny exponent": ('removal_penalty = "1e-999999999"\n', "removal_penalty"),
    "huge exponent": ('removal_penalty = "1e999999999"\n', "removal_penalty"),
    "penalty list": ("removal_penalty = [1, 2]\n", "removal_penalty"),
    "penalty bool": ("removal_penalty = true\n", "removal_penalty"),
    "penalty deep list": ("removal_penalty = " + "[" * 300 + "]" * 300 + "\n", "removal_penalty"),
    "deep array": (DEEP_ARRAY, "toml"),
    "deep inline table": (DEEP_TABLE, "toml"),
    "deep dotted key": (DEEP_KEY, "toml"),  # refused as too deep, before its unknown key
    "huge int timer": ("speech_seconds = 99999999999999999999\n", "speech_seconds"),
    "float timer": ("speech_seconds = 1e400\n", "speech_seconds"),
    "negative doctor size": ("doctor_min_players = -1\n", "doctor_min_players"),
    "huge doctor size": ("doctor_min_players = 99999999999999999999\n", "doctor_min_players"),
    "negative short speech": ("short_speech_alive = -1\n", "short_speech_alive"),
    "huge setup key": ('[setups."99999999999999999999999"]\ncitizen = 1\n', "setups.99999999999999999999999"),
    "5000-digit setup key": ("[setups." + "9" * 5000 + "]\ncitizen = 1\n", "setups." + "9" * 5000),
    "huge role count": ("[setups.10]\ncitizen = 99999999999999999999\n", "setups.10"),
    "float role count": ("[setups.10]\ncitizen = 1e9\n", "setups.10.citizen"),
    "setups as text": ('setups = "ten"\n', "setups"),
    "setups entry as list": ("[[setups.10]]\ncitizen = 1\n", "setups.10"),
    "meets host as text": ('night_zero_meets_host = "don"\n', "night_zero_meets_host"),
    "meets host nested": ('night_zero_meets_host = [["don"]]\n', "night_zero_meets_host"),
    "base as number": ("base = 5\n", "base"),
    "base as table": ("[base]\na = 1\n", "base"),
    "name as table": ("[name]\na = 1\n", "name"),
    "name with a zero-width space": ('name = "Cl\u200bub"\n', "name"),
    "unknown key": ("speach_seconds = 3\n", "speach_seconds"),
    "not toml": ("name = [\n", "toml"),
}

WRONG_VALUES = ["{ a = 1 }", "[1, 2]", "1.5", "1979-05-27T07:32:00Z", "07:32:00", "nan", "-inf",
                "99999999999999999999", "-99999999999999999999", '"NaN"', "[[[[[[[[[[1]]]]]]]]]]"]
"""A value of the wrong type or range for every setting but the two ``FITS`` names."""
FITS = {("name", '"NaN"'), ("removal_penalty", "1.5")}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_ruleset_is_refused_naming_its_key(name: str) -> None:
    text, key = HOSTILE[name]
    assert len(text.encode("utf-8")) <= MAX_RULESET_BYTES
    with pytest.raises(RulesetFileError) as refused:
        parse_ruleset(text, default_name="hostile")
    assert refused.value.key == key
    assert refused.value.reason


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(Ruleset)])
def test_a_wrong_value_at_every_key_is_refused_naming_that_key(field: str) -> None:
    for value in WRONG_VALUES:
        if (field, value) in FITS:
            continue
        with pytest.raises(RulesetFileError) as refused:
            parse_ruleset(f"{field} = {value}\n", default_name="hostile")
        assert refused.value.key.split(".")[0] == field, value
        assert refused.value.reason, value


@pytest.mark.parametrize("text", [DEEP_ARRAY, DEEP_TABLE, 'removal_penalty = "NaN"\n', "removal_penalty = inf\n"])
def test_the_engine_reader_refuses_them_too(text: str) -> None:
    with pytest.raises(RulesetError) as refused:
        from_toml(text)
    assert refused.value.field
    assert refused.value.reason


def test_a_deep_file_is_refused_as_too_deep_whatever_the_recursion_limit() -> None:
    """A library (mypy, for one) may raise the interpreter's limit: the parser alone would then read the file."""
    was = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        for text in (DEEP_ARRAY, DEEP_TABLE):
            with pytest.raises(RulesetFileError) as refused:
                parse_ruleset(text, default_name="hostile")
            assert (refused.value.key, refused.value.reason) == ("toml", NESTED_TOO_DEEPLY)
    finally:
        sys.setrecursionlimit(was)

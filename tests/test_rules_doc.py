"""docs/rules.md is the rulebook the code cites: every cited section must exist, and stay put."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ANCHOR = re.compile(r'<a id="([a-z0-9-]+)"></a>')
CITATION = re.compile(r"rules(\.ru|\.ka)?\.md#([a-z0-9-]+)")
# The place the rules used to live, outside the repository; the code must not point there again.
OUTSIDE = re.compile(r"SPEC(\.md)? §")


def _anchors(name: str) -> list[str]:
    return ANCHOR.findall((DOCS / name).read_text(encoding="utf-8"))


def _project_files() -> list[Path]:
    """The project's own sources and documents (not the virtualenv, not git's store)."""
    files = [ROOT / "README.md"]
    for folder in ("engine", "mafiabot", "cogs", "tests", "docs", "benchmarks"):
        files += sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in {".py", ".md", ".json", ".toml"})
    return [p for p in files if p.is_file() and "__pycache__" not in p.parts]


def _citations() -> list[tuple[Path, str, str]]:
    found = []
    for path in _project_files():
        if path.name == Path(__file__).name:
            continue  # its own examples
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [(path, lang or "", anchor) for lang, anchor in CITATION.findall(text)]
    return found


@pytest.mark.parametrize("name", ["rules.md", "rules.ru.md", "rules.ka.md"])
def test_section_ids_are_unique(name: str) -> None:
    anchors = _anchors(name)
    assert len(anchors) == len(set(anchors)), sorted(a for a in anchors if anchors.count(a) > 1)


@pytest.mark.parametrize("name", ["rules.ru.md", "rules.ka.md"])
def test_translations_use_the_english_section_ids(name: str) -> None:
    # A link to rules.ru.md#x means the same rule as rules.md#x.
    assert set(_anchors(name)) <= set(_anchors("rules.md"))
    assert {"vote-tie", "lift-vote", "mafia-kill", "win-georgian", "three-fouls"} <= set(_anchors(name))


def test_every_cited_section_exists() -> None:
    anchors = {
        "": set(_anchors("rules.md")),
        ".ru": set(_anchors("rules.ru.md")),
        ".ka": set(_anchors("rules.ka.md")),
    }
    citations = _citations()
    missing = [f"{p.relative_to(ROOT)}: rules{lang}.md#{a}" for p, lang, a in citations if a not in anchors[lang]]
    assert not missing, missing
    # The engine, its tests and the scenarios cite the rulebook; an empty list means the scan broke.
    assert len({a for _, _, a in citations}) >= 20


def test_the_check_catches_a_missing_section() -> None:
    assert CITATION.findall("see rules.md#vote-tie and rules.ka.md#no-such-rule") == [
        ("", "vote-tie"),
        (".ka", "no-such-rule"),
    ]
    assert "no-such-rule" not in _anchors("rules.ka.md")


def test_nothing_cites_the_rules_outside_the_repository() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in _project_files()
        if p.name != "test_rules_doc.py" and OUTSIDE.search(p.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not offenders, offenders

"""How the presenter cuts a long text into Discord messages."""

from __future__ import annotations

import itertools

import pytest

from mafiabot.host.presenter import MESSAGE_LIMIT, split_message


@pytest.mark.parametrize("lines", [["short"], ["a" * 700] * 3, ["b" * 1999, "c"], ["", "d", ""], ["e" * 2000] * 2])
def test_whole_lines_stay_together_and_no_message_is_too_long(lines: list[str]) -> None:
    content = "\n".join(lines)
    parts = split_message(content)
    assert all(len(p) <= MESSAGE_LIMIT for p in parts)
    assert "\n".join(parts) == content
    for part, following in itertools.pairwise(parts):  # as few as whole lines allow
        assert len(part) + 1 + len(following.split("\n")[0]) > MESSAGE_LIMIT


def test_a_text_within_the_limit_is_one_message() -> None:
    content = "\n".join(["x" * 99] * 20)  # 1,999 characters
    assert split_message(content) == [content]


def test_a_line_over_the_limit_is_cut_rather_than_refused() -> None:
    parts = split_message("head\n" + "z" * 4500)
    assert parts == ["head", "z" * 2000, "z" * 2000, "z" * 500]

"""Every end-to-end test in this folder fails if the bot sent Discord a request its spec rejects."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mafiabot import demo


@pytest.fixture(autouse=True)
def no_spec_violations() -> Iterator[None]:
    demo.SPEC_VIOLATIONS.clear()
    yield
    assert demo.SPEC_VIOLATIONS == [], "requests the Discord OpenAPI spec rejects"

"""Every end-to-end test in this folder fails if the bot sent Discord a request its spec rejects.

Without the spec they are skipped before they start, or fail under ``MAFIABOT_REQUIRE_SPEC=1`` (CI).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mafiabot import testing
from mafiabot.emulator.testing import require_spec


@pytest.fixture(autouse=True)
def no_spec_violations() -> Iterator[None]:
    require_spec()
    testing.SPEC_VIOLATIONS.clear()
    yield
    assert testing.SPEC_VIOLATIONS == [], "requests the Discord OpenAPI spec rejects"

"""Fixtures for the emulator tests: a running emulator with a guild, and a real discord.py bot on it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mafiabot.emulator import EmulatorConfig, RateLimitConfig
from mafiabot.emulator.testing import Table, emulated_guild, require_spec, running
from tests.emulator.emulator_bot import MafiaTestBot


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spec_violations_expected: the test sends requests the spec rejects")


@pytest.fixture
def emulator_config() -> EmulatorConfig:
    """Fast limits so rate-limit tests stay short; everything else as Discord."""
    return EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(5, 1.0), reactions=(1, 0.5)))


@pytest.fixture
async def table(request: pytest.FixtureRequest, emulator_config: EmulatorConfig) -> AsyncIterator[Table]:
    """A running emulator with a guild, 4 players and the bot invited; fails on any spec violation.

    Without the spec the test is skipped before it starts (fails under ``MAFIABOT_REQUIRE_SPEC=1``).
    """
    async with emulated_guild(members=4, config=emulator_config) as t:
        require_spec(t.emu.spec)
        yield t
        if request.node.get_closest_marker("spec_violations_expected") is None:
            assert t.emu.violations == [], "requests the OpenAPI spec rejects"


@pytest.fixture
async def bot(table: Table) -> AsyncIterator[MafiaTestBot]:
    """A real ``commands.Bot`` logged in to the emulator and ready."""
    client = MafiaTestBot(table.guild.id)
    async with running(client, table):
        yield client

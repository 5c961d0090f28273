"""The stream server is one per bot: a config that would run several bots of one process on one address is refused."""

from __future__ import annotations

import pytest

from mafiabot.tools.config import ConfigError, parse_config

SHARED = {"database": {"url": "postgresql+psycopg://mafia@127.0.0.1:5432/mafia"}, "web": {"enabled": True}}


def test_streaming_with_several_shared_shards_is_refused_at_start() -> None:
    with pytest.raises(ConfigError, match="shard_ids"):
        parse_config({**SHARED, "discord": {"shard_count": 2}})


@pytest.mark.parametrize("discord", [{"shard_count": 1}, {"shard_count": 2, "shard_ids": [0]}])
def test_streaming_with_one_bot_a_process_is_accepted(discord: dict[str, object]) -> None:
    assert parse_config({**SHARED, "discord": discord}).web.enabled

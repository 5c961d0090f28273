"""The protocol of a running game, fed one command's events at a time, is the protocol of its whole log."""

from __future__ import annotations

import random

from engine import CLASSIC, Game
from mafiabot.core.protocol import GameHeader, ProtocolFollower, build_protocol
from mafiabot.tools.simulate import play_random_game


def test_fed_a_command_at_a_time_it_is_the_whole_log_s_protocol_after_each() -> None:
    rng = random.Random(3)
    for _ in range(5):
        played = play_random_game(CLASSIC, 10, rng)
        game, follower = Game(CLASSIC), ProtocolFollower()
        for command in played.history:
            game.apply(command)
            assert follower.protocol(game.events) == build_protocol(GameHeader(), (), game.events)


def test_another_game_s_log_starts_afresh() -> None:
    """A table whose game is replayed (the store refused a command) has a new event list: nothing of the old is kept."""
    played = play_random_game(CLASSIC, 10, random.Random(5))
    follower = ProtocolFollower()
    follower.protocol(played.events)
    shorter = Game.replay(CLASSIC, played.history[: len(played.history) // 2])
    assert follower.protocol(shorter.events) == build_protocol(GameHeader(), (), shorter.events)
    assert follower.protocol(played.events) == build_protocol(GameHeader(), (), played.events)

"""A stream frame's voting rounds carry every field of the protocol's, as the generic conversion did."""

from __future__ import annotations

import dataclasses
import json
import random

from engine import CLASSIC
from mafiabot.core.protocol import GameHeader, build_protocol
from mafiabot.host.web.frames import vote_round
from mafiabot.tools.simulate import play_random_game


def test_a_voting_round_is_sent_with_every_field_of_the_protocol_s() -> None:
    """A field added to ``VoteRound`` and left out of the frame fails here, not silently on stream."""
    rng = random.Random(11)
    rounds = [vote for _ in range(10)
              for day in build_protocol(GameHeader(), (), play_random_game(CLASSIC, 10, rng).events).days
              for vote in day.votes]
    assert any(vote.tally for vote in rounds)
    for vote in rounds:
        assert vote_round(vote) == json.loads(json.dumps(dataclasses.asdict(vote)))

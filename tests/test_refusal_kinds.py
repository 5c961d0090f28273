"""Which notice the judge gets for each refusal Discord gives, in every language."""

from __future__ import annotations

import discord
import pytest

from mafiabot.host.i18n import LANGUAGES
from mafiabot.host.refusals import Action, refusal_kind, refusal_text


class _Response:
    def __init__(self, status: int) -> None:
        self.status = status
        self.reason = "refused"


def refusal(status: int, code: int) -> discord.HTTPException:
    """An ``HTTPException`` as discord.py raises it for a JSON error answer."""
    return discord.HTTPException(_Response(status), {"code": code, "message": "refused"})


@pytest.mark.parametrize(("action", "status", "code", "kind"), [
    (Action.LOCK_ROOM, 403, 60003, "mfa"),
    (Action.REMOVE_REACTION, 403, 60003, "mfa"),
    (Action.UNLOCK_ROOM, 403, 50013, "permission:manage_threads"),
    (Action.REMOVE_REACTION, 403, 50013, "permission:manage_messages"),
    (Action.CREATE_ROOM, 403, 50001, "permission:create_private_threads"),
    (Action.ADD_TO_ROOM, 403, 50001, "permission:send_messages_in_threads"),
    (Action.SEED_REACTION, 403, 50013, "permission:add_reactions"),
    (Action.DIRECT_MESSAGE, 403, 50007, "dms_closed"),
    (Action.REMOVE_FROM_ROOM, 400, 50083, "archived"),
    (Action.POST_IN_ROOM, 500, 0, "other:500:0"),
])
def test_each_refusal_has_its_kind(action: Action, status: int, code: int, kind: str) -> None:
    assert refusal_kind(action, refusal(status, code)) == kind


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", ["mfa", "dms_closed", "archived", "permission:manage_threads", "other:500:0"])
def test_each_kind_reads_in_every_language(language: str, kind: str) -> None:
    text = refusal_text(language, kind)
    assert text
    assert "{" not in text
    if kind == "mfa":
        assert "60003" in text
        assert "2FA" in text
    if kind.startswith("permission"):
        assert "Manage Threads" in refusal_text("en", kind)


def test_only_room_member_changes_and_fair_play_alerts_tell_of_roles() -> None:
    # A fair-play alert at night tells that someone is awake: its public fallback waits for the end too.
    assert {a for a in Action if a.tells_of_roles} == {Action.ADD_TO_ROOM, Action.REMOVE_FROM_ROOM,
                                                        Action.ALERT_JUDGE}


def test_rules_and_table_refusals_share_one_base_and_one_wording() -> None:
    from engine import InvalidTargetError, RulesError
    from engine.errors import RefusalError
    from mafiabot.core.runtime import TableError
    from mafiabot.host.i18n import t
    from mafiabot.host.refusals import error_text

    rules, table = InvalidTargetError("night.not_the_doctor"), TableError("table.not_seated")
    for refusal in (rules, table):
        assert isinstance(refusal, RefusalError)
        assert error_text("en", refusal) == t("en", f"error.{refusal.code}")
    assert not isinstance(table, RulesError)  # the engine's own ``except RulesError`` never takes a table's refusal
    named = TableError("ruleset.not_found", name="Club")
    assert named.data == {"name": "Club"}
    assert "“Club”" in error_text("en", named, {"cmd_ruleset_list": "/mafia ruleset list"})
    assert error_text("ru", TableError("no.such.code")) == t("ru", "error.unknown", code="no.such.code")

"""Side effects Discord may refuse, and how a table's judge hears of it.

Locking the mafia's room, removing a reaction or a room member, a direct message: a server that
requires two-factor authentication for moderation refuses the Manage-Threads and Manage-Messages
ones (code 60003) when the bot's owner has no 2FA, a moderator may take a permission away or
archive the room, a player may close their DMs. None of it may cost the table a public message,
so each such call is best effort, and the judge is told once per kind of refusal and table, with
the fix, where only the judge sees it: in a direct message, since the bot has no channel of the
judge's own (the judge's ephemeral answers need a fresh click of the judge's). Only when the judge's
DMs are closed too does the notice go to the table's channel, addressed to the judge and naming no
player. A notice caused by a room member change would tell, by its timing, that the departing player
was black, so that public fallback waits for the end of the game.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import discord

from engine.errors import RefusalError
from mafiabot.host.i18n import has_key, t

MFA_REQUIRED = 60003
"""Discord: "Two factor is required for this operation"."""
MISSING_ACCESS = 50001
MISSING_PERMISSIONS = 50013
DMS_CLOSED = 50007
"""Discord: "Cannot send messages to this user"."""
THREAD_ARCHIVED = 50083


class Action(StrEnum):
    """A side effect the bot tries; its permission is what a 50001/50013 answer lacks."""

    CREATE_ROOM = "create_room"
    LOCK_ROOM = "lock_room"
    UNLOCK_ROOM = "unlock_room"
    ARCHIVE_ROOM = "archive_room"
    ADD_TO_ROOM = "add_to_room"
    REMOVE_FROM_ROOM = "remove_from_room"
    POST_IN_ROOM = "post_in_room"
    SEED_REACTION = "seed_reaction"
    REMOVE_REACTION = "remove_reaction"
    DIRECT_MESSAGE = "direct_message"
    ATTACH_PICTURE = "attach_picture"
    """The pictures of a message; refused, the message goes as text alone."""
    ALERT_JUDGE = "alert_judge"
    """A fair-play alert to a judge (``mafiabot.host.fairplay``)."""

    @property
    def tells_of_roles(self) -> bool:
        """Whether its timing tells of roles: who is black (only black players join or leave the room), or awake.

        A fair-play alert at night tells that someone is awake.
        """
        return self in (Action.ADD_TO_ROOM, Action.REMOVE_FROM_ROOM, Action.ALERT_JUDGE)


def refusal_kind(action: Action, exc: discord.HTTPException) -> str:
    """What went wrong, as the judge needs to fix it (``mfa``, ``permission:manage_threads``, ...).

    The judge is told once per kind and table: the fix depends on the kind, not on the action.
    """
    if exc.code == MFA_REQUIRED:
        return "mfa"
    if exc.code == DMS_CLOSED:
        return "dms_closed"
    if exc.code == THREAD_ARCHIVED:
        return "archived"
    if exc.code in (MISSING_ACCESS, MISSING_PERMISSIONS):
        return f"permission:{_PERMISSION[action]}"
    if action is Action.ATTACH_PICTURE:
        return f"picture:{exc.status}:{exc.code}"
    return f"other:{exc.status}:{exc.code}"


_PERMISSION = {
    Action.CREATE_ROOM: "create_private_threads",
    Action.LOCK_ROOM: "manage_threads",
    Action.UNLOCK_ROOM: "manage_threads",
    Action.ARCHIVE_ROOM: "manage_threads",
    Action.ADD_TO_ROOM: "send_messages_in_threads",
    Action.REMOVE_FROM_ROOM: "manage_threads",
    Action.POST_IN_ROOM: "send_messages_in_threads",
    Action.SEED_REACTION: "add_reactions",
    Action.REMOVE_REACTION: "manage_messages",
    Action.DIRECT_MESSAGE: "send_messages",
    Action.ATTACH_PICTURE: "attach_files",
    Action.ALERT_JUDGE: "send_messages",
}


def permission_name(language: str, permission: str) -> str:
    """A permission as Discord's server settings name it."""
    match permission:
        case "create_private_threads":
            return t(language, "permission.create_private_threads")
        case "manage_threads":
            return t(language, "permission.manage_threads")
        case "send_messages_in_threads":
            return t(language, "permission.send_messages_in_threads")
        case "add_reactions":
            return t(language, "permission.add_reactions")
        case "manage_messages":
            return t(language, "permission.manage_messages")
        case "attach_files":
            return t(language, "permission.attach_files")
        case _:
            return t(language, "permission.send_messages")


def refusal_text(language: str, kind: str) -> str:
    """The cause and the fix of a kind of refusal (no table, no player named)."""
    name, _, detail = kind.partition(":")
    if name == "mfa":
        return t(language, "refusal.mfa")
    if name == "dms_closed":
        return t(language, "refusal.dms_closed")
    if name == "archived":
        return t(language, "refusal.archived")
    if name == "permission":
        return t(language, "refusal.permission", permission=permission_name(language, detail))
    status, _, code = detail.partition(":")
    if name == "picture":
        return t(language, "refusal.picture", status=status, code=code)
    return t(language, "refusal.other", status=status, code=code)


__all__ = ["Action", "permission_name", "refusal_kind", "refusal_text"]


def error_text(language: str, exc: RefusalError, commands: dict[str, str] | None = None) -> str:
    """The localized explanation of a refusal; ``commands`` fill the mentions of commands it names."""
    key = f"error.{exc.code}"
    fields: dict[str, Any] = {**(commands or {}), **{k: _plain(v) for k, v in exc.data.items()}}
    if not has_key(key):
        return t(language, "error.unknown", code=exc.code)
    return t(language, key, **fields)


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return value

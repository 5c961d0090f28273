"""The errors a rejected command raises: a stable code plus the data that explains it.

The engine never formats text for users; the bot maps ``code`` to a catalog message and fills it
with ``data``.
"""

from __future__ import annotations

from typing import Any


class RefusalError(Exception):
    """A command refused, by the rules or by the table: a stable ``code`` plus the ``data`` that explains it.

    Every refusal is answered the same way (a private message from the catalog's ``error.<code>``),
    so the bot handles this one class wherever it comes from.
    """

    code: str
    data: dict[str, Any]


class RulesError(RefusalError):
    """Base of every rejection by the rules; the state is untouched when one is raised."""

    def __init__(self, code: str, **data: Any) -> None:
        self.code = code
        self.data: dict[str, Any] = data
        detail = ", ".join(f"{key}={value!r}" for key, value in data.items())
        super().__init__(f"{code}({detail})" if detail else code)


class InvalidCommandError(RulesError, ValueError):
    """The command is malformed: an unknown seat, a wrong shape, a bad value."""


class IllegalActionError(RulesError):
    """The command is well formed but the rules forbid it now."""


class WrongPhaseError(IllegalActionError):
    """The command does not belong to the current phase."""


class NotAlivePlayerError(IllegalActionError):
    """A player who has left the table tried to act, or was targeted where only the living may be."""


class AlreadyActedError(IllegalActionError):
    """The player has already used this action for the round, speech or night."""


class InvalidTargetError(IllegalActionError):
    """The target is not allowed for this action."""


class NotYourTurnError(IllegalActionError):
    """Only the floor holder or the actor the rules name may do this."""


class RulesetError(ValueError):
    """A ruleset is invalid; ``field`` names the offending setting.

    ``code`` is ``invalid`` (``reason`` says why, in English) or ``unknown_setting``, where
    ``suggestion`` is the closest known setting, if any, for the bot to render in the reader's language.
    """

    def __init__(self, field: str, reason: str, *, code: str = "invalid", suggestion: str | None = None) -> None:
        self.field = field
        self.reason = reason
        self.code = code
        self.suggestion = suggestion
        super().__init__(f"{field}: {reason}")

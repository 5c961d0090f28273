"""Discord's JSON error answer, raised by every part of the emulator that refuses something."""

from __future__ import annotations

from .state import JSON


class ApiError(Exception):
    """A Discord JSON error answer."""

    def __init__(self, status: int, code: int, message: str, *, errors: JSON | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    def to_json(self) -> JSON:
        """The error body Discord sends."""
        data: JSON = {"message": self.message, "code": self.code}
        if self.errors is not None:
            data["errors"] = self.errors
        return data


def missing_permissions() -> ApiError:
    """Discord's 403 for a missing permission."""
    return ApiError(403, 50013, "Missing Permissions")


def missing_access() -> ApiError:
    """Discord's 403 for a channel or guild the caller cannot see."""
    return ApiError(403, 50001, "Missing Access")


def two_factor_required() -> ApiError:
    """Discord's 403 for an elevated permission used without 2FA in a guild that requires it."""
    return ApiError(403, 60003, "Two factor is required for this operation")


def wrong_channel_type() -> ApiError:
    """Discord's 400 for an action the channel's type does not allow."""
    return ApiError(400, 50024, "Cannot execute action on this channel type")


def invalid_form_body() -> ApiError:
    """Discord's bare 400/50035, for a body it refuses without naming the field."""
    return ApiError(400, 50035, "Invalid Form Body")


def thread_archived() -> ApiError:
    """Discord's 400 for a change to an archived thread."""
    return ApiError(400, 50083, "Thread is archived")

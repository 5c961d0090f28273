"""A small local Discord (REST + gateway) for tests and the demo."""

from .config import EmulatorConfig, FaultRule, RequestRecord
from .errors import ApiError
from .ratelimit import BucketRule, Clock, ManualClock, RateLimitConfig, RealClock
from .server import Emulator, connect_discord_py, disconnect_discord_py
from .spec import SpecValidator, Violation
from .state import Application, Channel, ChannelType, Guild, Intent, Member, Message, Overwrite, Permission, Role, User
from .users import Reply, ScriptedUser

__all__ = [
    "ApiError",
    "Application",
    "BucketRule",
    "Channel",
    "ChannelType",
    "Clock",
    "Emulator",
    "EmulatorConfig",
    "FaultRule",
    "Guild",
    "Intent",
    "ManualClock",
    "Member",
    "Message",
    "Overwrite",
    "Permission",
    "RateLimitConfig",
    "RealClock",
    "Reply",
    "RequestRecord",
    "Role",
    "ScriptedUser",
    "SpecValidator",
    "User",
    "Violation",
    "connect_discord_py",
    "disconnect_discord_py",
]

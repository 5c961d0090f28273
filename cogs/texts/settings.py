"""``/mafia settings``: a server's settings in words, and the names its options offer."""

from __future__ import annotations

from mafiabot.core.errors import SettingsError
from mafiabot.core.records import TIMER_SETTINGS, GuildSettings
from mafiabot.host.i18n import ruleset_name, t

LANGUAGE_NAMES = {"en": "English", "ru": "Русский", "ka": "ქართული"}
"""Each language by its own name, as ``/mafia settings language:`` offers it."""
CLEARABLE = {"judge_role": "judge_role_id", "timers": "timers", "vote_window": "vote_window",
             "results_channel": "results_channel_id", "organiser_role": "organiser_role_id"}
"""``/mafia settings clear:`` choices and the setting each one resets."""


def _switch(lang: str, *, on: bool) -> str:
    return t(lang, f"settings.{'on' if on else 'off'}")


def settings_lines(settings: GuildSettings) -> list[str]:
    """Every server setting, in the server's language."""
    lang = settings.language
    none = t(lang, "settings.none")
    timers = ", ".join(t(lang, "settings.timer_item", timer=t(lang, f"timer.{name}"), seconds=value)
                       for name, value in sorted(settings.timers.items()))
    return [
        t(lang, "settings.language", value=LANGUAGE_NAMES.get(settings.language, settings.language)),
        t(lang, "settings.judge_role", value=f"<@&{settings.judge_role_id}>" if settings.judge_role_id else none),
        t(lang, "settings.ruleset", value=ruleset_name(lang, settings.default_ruleset)),
        t(lang, "settings.timers", value=timers or t(lang, "settings.ruleset_default")),
        t(lang, "settings.vote_window", value=settings.vote_window or t(lang, "settings.ruleset_default")),
        t(lang, "settings.mute_spectators", value=_switch(lang, on=settings.mute_spectators)),
        t(lang, "settings.voice_cues", value=_switch(lang, on=settings.voice_cues)),
        t(lang, "settings.results_channel",
          value=f"<#{settings.results_channel_id}>" if settings.results_channel_id else none),
        t(lang, "settings.strict_tables", value=_switch(lang, on=settings.strict_tables)),
        t(lang, "settings.seat_nicknames", value=_switch(lang, on=settings.seat_nicknames)),
        t(lang, "settings.judge_sees_roles", value=_switch(lang, on=settings.judge_sees_roles)),
        t(lang, "settings.organiser_role",
          value=f"<@&{settings.organiser_role_id}>" if settings.organiser_role_id else none),
        t(lang, "settings.site_pages", value=_switch(lang, on=settings.site_pages)),
    ]


def invalid_text(lang: str, exc: SettingsError) -> str:
    """Why a setting's value was refused, the timer named in words."""
    data = dict(exc.data)
    if data.get("timer") in TIMER_SETTINGS:
        data["timer"] = t(lang, f"timer.{data['timer']}")
    return t(lang, f"settings.invalid.{exc.problem}", **data)

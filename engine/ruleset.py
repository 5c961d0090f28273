"""Rulesets: every decision the club texts leave open is a flag here.

A ruleset is frozen data. The three presets follow rules.md#presets; a club can start from one of them and
change any flag in TOML (``from_toml``), including the role counts for 6 to 12 players.
"""

from __future__ import annotations

import dataclasses
import difflib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, get_args, get_type_hints

from engine.errors import RulesetError
from engine.ids import Role, Team

MafiaKill = Literal["unanimous", "don_decides"]
ThreeFoulPenalty = Literal["lose_speech", "short_speech", "none"]
CheckStyle = Literal["black_red", "mafia"]
Checker = Literal["sheriff", "detective"]
CheckResult = Literal["black", "red", "mafia", "not_mafia"]
MissAnnouncement = Literal["nobody_hurt", "mafia_missed"]
Presence = Literal["off", "floor", "day"]

NESTED_TOO_DEEPLY = "arrays or tables nested too deeply (a ruleset needs three levels at most)"
"""Python's TOML reader recurses once per level: a few kilobytes of brackets exhaust its stack."""
MIN_PLAYERS = 6
MAX_PLAYERS = 12


def _counts(**counts: int) -> dict[Role, int]:
    return {Role(name): n for name, n in counts.items() if n}


def _classic_setups() -> dict[int, dict[Role, int]]:
    # rules.md#setups (a decision): about 30% black, always with the Don and the Sheriff.
    black = {6: 2, 7: 2, 8: 2, 9: 3, 10: 3, 11: 3, 12: 3}
    return {
        n: _counts(don=1, mafia=b - 1, sheriff=1, citizen=n - b - 1)
        for n, b in black.items()
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class Ruleset:
    """A complete, validated set of rules for one table."""

    name: str
    """The preset or club name this ruleset is known by."""
    base: str = ""
    """The preset a custom ruleset started from ("" for a preset itself)."""
    default_players: int = 10
    setups: Mapping[int, Mapping[Role, int]] = field(default_factory=_classic_setups)
    """Role counts per table size; the player count must be one of these keys."""
    doctor: bool = False
    """Add a Doctor in place of a citizen where a setup has none (rules.md#setups: 8+ players only)."""
    doctor_min_players: int = 8
    doctor_no_repeat_target: bool = False
    """The Doctor may not pick the same seat two nights in a row (classic: rules.md#doctor)."""
    doctor_self_limit: int | None = None
    """How often the Doctor may pick himself in a game (None: no limit)."""
    doctor_each_seat_once: bool = False
    """Each seat, the Doctor's own included, may be picked once per game (georgian)."""
    maniac_shots: int = 2
    maniac_first_kill_night: int = 2
    """The first night the maniac may fire (rules.md#night-zero: Night 2)."""
    maniac_check: Literal["red", "black"] = "red"
    """What the Sheriff/Detective sees when checking the maniac."""
    mafia_kill: MafiaKill = "unanimous"
    first_day_single_nominee_no_vote: bool = True
    defense_before_vote: bool = False
    recap_before_last_speaker: bool = False
    revote_when_tie_shrinks: bool = False
    lift_three_tied_at_nine: bool = True
    self_nomination: bool = True
    three_foul_penalty: ThreeFoulPenalty = "lose_speech"
    """What the foul before removal costs: the next speech, or (``short_speech``) all but its first 30 s."""
    muted_can_nominate: bool = False
    """A player who lost his speech to fouls still gets a silent turn to nominate (fiim)."""
    short_speech_alive: int = 0
    """With this many players alive or fewer, a lost speech becomes a short one instead (fiim: 4)."""
    foul_removal_at: int = 4
    second_oath_removal: bool = True
    technical_fouls: bool = False
    """The judge may give technical fouls, counted apart from the ordinary ones (rules.md#technical-fouls)."""
    technical_foul_removal_at: int = 2
    """The technical foul that removes the player."""
    removal_cancels_vote: bool = True
    best_move: bool = False
    removal_penalty: Decimal = Decimal(0)
    """Points lost by a player removed for fouls, disqualified or gone (fiim: 0.5)."""
    no_departure_draw: bool = False
    last_word_after_end: bool = True
    """The final eliminated player still gets his last word after the result is fixed (rules.md#final-words)."""
    check_style: CheckStyle = "black_red"
    """What the checker learns: black or red (classic), mafia or not (georgian)."""
    checker: Checker = "sheriff"
    """The name the red checker's card carries: the Sheriff (classic) or the Detective (georgian)."""
    night_zero_meets_host: tuple[Role, ...] = (Role.DON, Role.SHERIFF)
    """Who wakes to meet the host on Night 0, in that order (rules.md#night-zero); roles not dealt are skipped."""
    miss_announcement: MissAnnouncement = "nobody_hurt"
    speech_seconds: int = 60
    short_speech_seconds: int = 30
    silent_turn_seconds: int = 10
    defense_seconds: int = 30
    tie_speech_seconds: int = 30
    last_word_seconds: int = 60
    vote_window_seconds: int = 7
    lift_window_seconds: int = 10
    night_seconds: int = 60
    night_zero_seconds: int = 60
    best_move_seconds: int = 30
    technical_pause_seconds: int = 120
    protest_window: int = 600
    """Seconds after the result in which a player may still file a protest (0: during the game only)."""
    presence: Presence = "off"
    """Online play: a player's camera is on while he holds the floor (``floor``) or all day (``day``)."""
    """How long a player who left voice has to come back before he is removed (rules.md#technical-pause)."""

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def player_counts(self) -> tuple[int, ...]:
        """The table sizes this ruleset supports."""
        return tuple(sorted(self.setups))

    def roles_for(self, players: int) -> dict[Role, int]:
        """The role counts for a table of ``players``.

        Raises:
            RulesetError: the ruleset has no setup for that many players.
        """
        if players not in self.setups:
            raise RulesetError("players", f"{players} players are not supported; choose one of {self.player_counts}")
        counts = dict(self.setups[players])
        if self.doctor and Role.DOCTOR not in counts and players >= self.doctor_min_players:
            counts[Role.CITIZEN] -= 1
            counts[Role.DOCTOR] = 1
        return {role: n for role, n in counts.items() if n}

    def has_role(self, role: Role) -> bool:
        """Whether any table size of this ruleset deals ``role``."""
        return any(role in self.roles_for(n) for n in self.setups)

    def card_name(self, role: Role) -> str:
        """The name of ``role``'s card in this ruleset: ``detective`` for the georgian Sheriff.

        >>> GEORGIAN.card_name(Role.SHERIFF), CLASSIC.card_name(Role.SHERIFF), GEORGIAN.card_name(Role.DON)
        ('detective', 'sheriff', 'don')
        """
        return self.checker if role is Role.SHERIFF else role.value

    def check_result(self, *, black: bool) -> CheckResult:
        """What the checker is told about a seat that is (or is seen as) ``black``.

        >>> CLASSIC.check_result(black=True), GEORGIAN.check_result(black=False)
        ('black', 'not_mafia')
        """
        if self.check_style == "mafia":
            return "mafia" if black else "not_mafia"
        return "black" if black else "red"

    @property
    def maniac_check_result(self) -> CheckResult:
        """What a check of the maniac answers (rules.md#checks: "not mafia" in georgian)."""
        return self.check_result(black=self.maniac_check == "black")

    def meets_host(self, players: int) -> tuple[Role, ...]:
        """The roles dealt at a table of ``players`` that meet the host on Night 0, in order."""
        dealt = self.roles_for(players)
        return tuple(role for role in self.night_zero_meets_host if dealt.get(role))

    def replace(self, **changes: Any) -> Ruleset:
        """A copy with some flags changed, validated again."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description that ``from_mapping`` reads back."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "setups":
                value = {str(n): {role.value: c for role, c in counts.items()} for n, counts in value.items()}
            elif isinstance(value, Decimal):
                value = str(value)
            elif f.name == "night_zero_meets_host":
                value = [role.value for role in value]
            out[f.name] = value
        return out


_HOST_MEETERS = frozenset({Role.DON, Role.SHERIFF, Role.DOCTOR, Role.MANIAC})
"""Roles that may wake alone on Night 0: citizens never wake, the mafia meet each other."""


def _validate(rules: Ruleset) -> None:
    for name in (
        "speech_seconds", "short_speech_seconds", "silent_turn_seconds", "defense_seconds", "tie_speech_seconds",
        "last_word_seconds", "vote_window_seconds", "lift_window_seconds", "night_seconds", "night_zero_seconds",
        "best_move_seconds", "technical_pause_seconds",
    ):
        if getattr(rules, name) <= 0:
            raise RulesetError(name, "must be a positive number of seconds")
    if not rules.setups:
        raise RulesetError("setups", "at least one table size is needed")
    if rules.default_players not in rules.setups:
        raise RulesetError("default_players", f"no setup for {rules.default_players} players")
    for name in ("foul_removal_at", "technical_foul_removal_at"):
        if getattr(rules, name) < 1:
            raise RulesetError(name, "must be at least 1")
    for name in ("maniac_shots", "doctor_min_players", "short_speech_alive", "protest_window"):
        if getattr(rules, name) < 0:
            raise RulesetError(name, "must not be negative")
    if not rules.removal_penalty.is_finite():
        raise RulesetError("removal_penalty", "must be a finite number")
    if rules.maniac_first_kill_night < 1:
        raise RulesetError("maniac_first_kill_night", "must be 1 or later")
    if rules.doctor_self_limit is not None and rules.doctor_self_limit < 0:
        raise RulesetError("doctor_self_limit", "must not be negative")
    if len(set(rules.night_zero_meets_host)) != len(rules.night_zero_meets_host):
        raise RulesetError("night_zero_meets_host", "a role is named twice")
    if not set(rules.night_zero_meets_host) <= _HOST_MEETERS:
        raise RulesetError("night_zero_meets_host", "only the Don, the Sheriff, the Doctor and the maniac wake alone")
    for players, counts in rules.setups.items():
        where = f"setups.{players}"
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise RulesetError(where, f"tables have {MIN_PLAYERS} to {MAX_PLAYERS} players")
        if any(n < 0 for n in counts.values()):
            raise RulesetError(where, "role counts must not be negative")
        if sum(counts.values()) != players:
            raise RulesetError(where, f"the roles add up to {sum(counts.values())}, not {players}")
        for role in (Role.DON, Role.SHERIFF, Role.DOCTOR, Role.MANIAC):
            if counts.get(role, 0) > 1:
                raise RulesetError(where, f"at most one {role.value}")
        dealt = rules.roles_for(players)
        black = sum(n for role, n in dealt.items() if role.team is Team.BLACK)
        red = sum(n for role, n in dealt.items() if role.team is Team.RED)
        if black < 1:
            raise RulesetError(where, "the black team needs at least one player")
        if black >= red:
            raise RulesetError(where, f"black ({black}) must be fewer than red ({red}) at the start")


_TYPES = get_type_hints(Ruleset)
_FIELDS = {f.name for f in dataclasses.fields(Ruleset)}
_DOCTOR_LIMITS = ("doctor_no_repeat_target", "doctor_self_limit", "doctor_each_seat_once")


def unknown_setting(key: str) -> RulesetError:
    """The refusal of a setting no ruleset has, naming the closest one: "defence" is spelt "defense" here."""
    close = difflib.get_close_matches(key, sorted(_FIELDS), n=1)
    suggestion = close[0] if close else None
    reason = f"unknown setting; did you mean {suggestion}?" if suggestion else "unknown setting"
    return RulesetError(key, reason, code="unknown_setting", suggestion=suggestion)


def _parse_setups(raw: Any) -> dict[int, dict[Role, int]]:
    if not isinstance(raw, Mapping):
        raise RulesetError("setups", "must be a table of player count -> role counts")
    setups: dict[int, dict[Role, int]] = {}
    for key, counts in raw.items():
        try:
            players = int(key)
        except (TypeError, ValueError):
            raise RulesetError(f"setups.{key}", "the key must be a player count") from None
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise RulesetError(f"setups.{key}", f"tables have {MIN_PLAYERS} to {MAX_PLAYERS} players")
        if not isinstance(counts, Mapping):
            raise RulesetError(f"setups.{key}", "must be a table of role = count")
        parsed: dict[Role, int] = {}
        for role_name, n in counts.items():
            try:
                role = Role(role_name)
            except ValueError:
                known = ", ".join(r.value for r in Role)
                raise RulesetError(f"setups.{key}.{role_name}", f"unknown role; known roles: {known}") from None
            if not isinstance(n, int) or isinstance(n, bool):
                raise RulesetError(f"setups.{key}.{role_name}", "must be a whole number")
            parsed[role] = n
        setups[players] = parsed
    return setups


def _parse_roles(name: str, raw: Any) -> tuple[Role, ...]:
    if not isinstance(raw, list | tuple) or not all(isinstance(x, str) for x in raw):
        raise RulesetError(name, "must be a list of role names")
    try:
        return tuple(Role(x) for x in raw)
    except ValueError:
        known = ", ".join(r.value for r in Role)
        raise RulesetError(name, f"unknown role; known roles: {known}") from None


def _decimal(name: str, value: Any) -> Decimal:
    """A finite number from TOML: NaN and infinity compare with nothing, so they would break every bound."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise RulesetError(name, "must be a number")
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise RulesetError(name, "must be a number") from None
    if not number.is_finite():
        raise RulesetError(name, "must be a finite number")
    return number


def _coerce(name: str, value: Any) -> Any:
    hint = _TYPES[name]
    if name == "setups":
        return _parse_setups(value)
    if name == "night_zero_meets_host":
        return _parse_roles(name, value)
    if hint is Decimal or hint == "Decimal":
        return _decimal(name, value)
    options = get_args(hint)
    if options and all(isinstance(o, str) for o in options):
        if value not in options:
            raise RulesetError(name, f"must be one of {', '.join(map(repr, options))}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise RulesetError(name, "must be true or false")
        return value
    if hint is int or int in options:
        if value is None and type(None) in options:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            raise RulesetError(name, "must be a whole number")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise RulesetError(name, "must be text")
        return value
    if options and set(options) <= {"red", "black"}:
        return value
    return value


def from_mapping(data: Mapping[str, Any]) -> Ruleset:
    """Build a ruleset from plain data, starting from ``base`` (a preset name, default classic).

    Raises:
        RulesetError: a key is unknown or a value is invalid; the error names the key.
    """
    # A preset's own ``to_dict`` has an empty base: it is its own base.
    name = data.get("name")
    base_name = data.get("base") or (name if isinstance(name, str) and name in PRESETS else "classic")
    if not isinstance(base_name, str) or base_name.lower() not in PRESETS:
        raise RulesetError("base", f"unknown preset {base_name!r}; choose one of {', '.join(PRESETS)}")
    base = PRESETS[base_name.lower()]
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key == "base":
            continue
        if key not in _FIELDS:
            raise unknown_setting(key)
        changes[key] = _coerce(key, value)
    changes.setdefault("name", base.name)
    changes.pop("base", None)
    ruleset = dataclasses.replace(base, **changes)
    if ruleset != base:
        ruleset = dataclasses.replace(ruleset, base=base.name)
    # A value equal to the base preset's is not a change, so ``to_dict`` output reads back.
    explicit_limits = [
        k for k in _DOCTOR_LIMITS if k in data and data[k] not in (False, None) and changes[k] != getattr(base, k)
    ]
    if explicit_limits and not ruleset.has_role(Role.DOCTOR):
        raise RulesetError(explicit_limits[0], "doctor limits are set but no setup has a doctor")
    maniac_shots_changed = "maniac_shots" in data and changes["maniac_shots"] != base.maniac_shots
    if maniac_shots_changed and data["maniac_shots"] and not ruleset.has_role(Role.MANIAC):
        raise RulesetError("maniac_shots", "maniac shots are set but no setup has a maniac")
    return ruleset


def from_toml(text: str) -> Ruleset:
    """Parse a custom ruleset from TOML text.

    Raises:
        RulesetError: the TOML is malformed or a setting is invalid.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesetError("toml", str(exc)) from None
    except RecursionError:
        raise RulesetError("toml", NESTED_TOO_DEEPLY) from None
    return from_mapping(data)


CLASSIC = Ruleset(
    name="classic",
    doctor_no_repeat_target=True,
    doctor_self_limit=1,
)

GEORGIAN = Ruleset(
    name="georgian",
    default_players=12,
    setups={
        12: _counts(citizen=6, sheriff=1, doctor=1, mafia=2, don=1, maniac=1),
        11: _counts(citizen=5, sheriff=1, doctor=1, mafia=2, don=1, maniac=1),
    },
    doctor=True,
    doctor_each_seat_once=True,
    mafia_kill="don_decides",
    first_day_single_nominee_no_vote=False,
    defense_before_vote=True,
    recap_before_last_speaker=True,
    three_foul_penalty="none",
    second_oath_removal=False,  # rules.md#fouls-georgian: an oath is one foul, like any other breach.
    check_style="mafia",
    checker="detective",
    night_zero_meets_host=(Role.DON, Role.SHERIFF, Role.DOCTOR),  # rules.md#night-zero, a georgian decision
)

FIIM = Ruleset(
    name="fiim",
    setups={10: _counts(citizen=6, sheriff=1, mafia=2, don=1)},
    revote_when_tie_shrinks=True,
    lift_three_tied_at_nine=False,
    muted_can_nominate=True,
    short_speech_alive=4,
    best_move=True,
    removal_penalty=Decimal("0.5"),
    no_departure_draw=True,
    miss_announcement="mafia_missed",
)

PRESETS: dict[str, Ruleset] = {"classic": CLASSIC, "georgian": GEORGIAN, "fiim": FIIM}
ALIASES: dict[str, str] = {
    "russian": "classic", "club": "classic", "ka": "georgian", "ge": "georgian", "tournament": "fiim",
}


def find_ruleset(name: str) -> Ruleset:
    """Look a preset up by name or alias, case-insensitively.

    Raises:
        RulesetError: no preset has that name.
    """
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in PRESETS:
        raise RulesetError("ruleset", f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return PRESETS[key]

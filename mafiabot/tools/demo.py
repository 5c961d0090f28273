"""A whole table played by scripted players against the real bot on the local emulator.

``mafiabot demo`` shows a game with no Discord account. It is a client of ``mafiabot.testing``, as
any bot's test suite can be: the harness starts the emulator and the real bot, the driver plays the
table through Discord on a scripted clock. Players act only through Discord: they click the bot's
buttons, pick in its menus and react to its vote messages, as people would. The strategy decides
what they do; it may read the bot's table (scripted players know their own cards through "My card" anyway).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mafiabot.core.rulesets import resolve_ruleset
from mafiabot.core.runtime import Table
from mafiabot.emulator.server import EmulatorConfig
from mafiabot.host.i18n import t
from mafiabot.testing import Driver, Harness, ScriptedClock, Strategy, harness, muted_by_bot, open_table, readable
from mafiabot.tools.demo_pictures import posted_pictures, save_pictures

__all__ = ["DemoOptions", "DemoReport", "main", "run_demo"]


@dataclass
class DemoReport:
    """What a demo run produced; ``to_json`` is what ``--report`` writes."""

    result: str | None = None
    reason: str | None = None
    days: int = 0
    requests_by_route: dict[str, int] = field(default_factory=dict)
    max_member_edits_per_floor_change: int = 0
    spec_violations: list[str] = field(default_factory=list)
    spec_unchecked: str | None = None
    """Why the requests were not checked against the spec (it could not be read), if they were not."""
    still_muted: list[int] = field(default_factory=list)
    public_messages: int = 0
    seed: int = 0
    language: str = "en"
    ruleset: str = ""
    players: int = 0
    public_channel: list[str] = field(default_factory=list)
    protocol: dict[str, Any] | None = None
    pictures: list[str] = field(default_factory=list)
    """The files ``--pictures`` saved."""

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "ruleset": self.ruleset,
            "players": self.players,
            "seed": self.seed,
            "language": self.language,
            "result": self.result,
            "reason": self.reason,
            "days_played": self.days,
            "requests_by_route": self.requests_by_route,
            "max_member_edits_per_floor_change": self.max_member_edits_per_floor_change,
            "spec_violations": (
                self.spec_violations if self.spec_unchecked is None else f"not checked: {self.spec_unchecked}"
            ),
            "still_muted_by_bot": self.still_muted,
            "public_messages": self.public_messages,
            "public_channel": self.public_channel,
            "protocol": self.protocol,
        }

    def summary(self) -> list[str]:
        """The end of the demo in words, in its language."""
        lang = self.language
        lines = ["", t(lang, "demo.summary.title")]
        lines.append(t(lang, f"end.result.{self.result}" if self.result else "end.result.abandoned"))
        lines.append(t(lang, "demo.summary.days", count=self.days))
        total = sum(self.requests_by_route.values())
        lines.append(t(lang, "demo.summary.requests", count=total))
        busiest = sorted(self.requests_by_route.items(), key=lambda item: (-item[1], item[0]))[:5]
        lines.extend(f"  {count:>5}  {route}" for route, count in busiest)
        if self.still_muted:
            lines.append(t(lang, "demo.summary.still_muted", count=len(self.still_muted)))
        else:
            lines.append(t(lang, "demo.summary.nobody_muted"))
        if self.spec_violations:
            lines.append(t(lang, "demo.summary.violations", count=len(self.spec_violations)))
        lines.append(t(lang, "demo.summary.seed", seed=self.seed))
        return lines


@dataclass(frozen=True)
class DemoOptions:
    """What ``mafiabot demo`` plays: the same options and seed play the same game."""

    ruleset: str = "classic"
    players: int = 0
    """Table size; 0: the ruleset's own."""
    seed: int = 1
    language: str = "en"
    time_scale: float = 0.02
    """Real seconds per second of the game (0: no pauses at all)."""
    report: str | None = None
    rulesets_dir: str | None = None
    """A host's folder of rulesets, where ``ruleset`` may be found by name."""
    web: tuple[str, int] | None = None
    """Serve the table's stream there (host, port) and print its links."""
    pictures: str | None = None
    """A folder to save every picture the table posted in."""


async def run_demo(
    *, ruleset: str, players: int, seed: int, time_scale: float = 0.02, language: str = "en",
    echo: Callable[[str], None] | None = None, latency_ms: float = 0.0,
    emulator_config: EmulatorConfig | None = None, rulesets_dir: str | None = None,
    web: tuple[str, int] | None = None, pictures: Path | None = None,
) -> DemoReport:
    """Play one whole game on a scripted clock and report on it.

    The seed fixes the seating, the cards and every scripted decision; the clock makes the timing
    part of the script, so the public channel comes out the same on every run. ``ruleset`` is a
    preset, a ``.toml`` file or a name in ``rulesets_dir``; a custom one reaches the bot as a
    host's does, through ``[game] rulesets_dir``.
    """
    named = resolve_ruleset(ruleset, rulesets_dir=rulesets_dir)
    hosted = {} if named.source == "preset" else {f"{named.key}.toml": named.text}
    rules = named.ruleset
    players = players or rules.default_players
    config = emulator_config or EmulatorConfig(latency_ms=latency_ms)
    clock = ScriptedClock()
    settings: dict[str, Any] = {"game": {"language": language}}
    if web is not None:
        settings["web"] = {"enabled": True, "host": web[0], "port": web[1]}
    async with harness(
        players, time_scale=1.0, rate_scale=0.02, emulator_config=config, seed=seed,
        config=settings, clock=lambda: clock, rulesets=hosted,
    ) as h:
        printed = 0
        channel: list[str] = []

        def show() -> None:
            nonlocal printed
            messages = [m for m in h.emu.messages(h.env.text) if m.ephemeral_for is None]
            for message in messages[printed:]:
                if message.content:
                    # Stamped with the table's clock: a message's deadline then reads against its own time.
                    stamp = clock.wall(clock.time()).strftime("%H:%M:%S")
                    line = f"{stamp}  " + readable(h, message.content).replace("\n", "\n" + " " * 10)
                    channel.append(line)
                    if echo is not None:
                        echo(line)
            printed = len(messages)

        h.on_change(show)
        table = await open_table(h, named.key, players)
        if h.bot.stream is not None and echo is not None:
            await stream_links(h, table, time_scale, echo)
        await Driver(h, table, Strategy(seed), clock=clock, pace=time_scale).play()
        await table.done.wait()
        saved: list[Path] = []
        if pictures is not None:
            await h.bot.presenter.sender.drained(table.id)  # the summary and its sheet are out
            saved = save_pictures(pictures, posted_pictures(h.emu, h.env.text, h.bot.user.id if h.bot.user else 0))
        show()
        outcome = table.game.outcome()
        routes = h.emu.route_counts(h.env.app)
        protocol = await h.store.game_protocol(table.id)
        return DemoReport(
            result=outcome.result.value if outcome else None,
            reason=outcome.reason.value if outcome else None,
            days=table.game.state.day,
            requests_by_route=dict(sorted(collections.Counter(routes).items())),
            max_member_edits_per_floor_change=table.voice.stats.most_in_one_change,
            spec_violations=[str(v) for v in h.emu.violations],
            spec_unchecked=h.emu.spec.skip_reason,
            still_muted=muted_by_bot(h, table),
            public_messages=printed,
            seed=seed, language=language, ruleset=rules.name, players=players,
            public_channel=channel,
            protocol=json.loads(json.dumps(dataclasses.asdict(protocol), default=str)),
            pictures=[str(path) for path in saved],
        )


async def stream_links(h: Harness, table: Table, time_scale: float, echo: Callable[[str], None]) -> None:
    """Hand out the table's stream links and print one line per tier (the broadcast tier 120 game seconds behind)."""
    from mafiabot.host.web.server import LAYOUTS

    stream = h.bot.stream
    assert stream is not None  # noqa: S101
    tokens = await stream.issue(table.id, 120 * time_scale)
    for tier, token in tokens.items():
        circle, strip = (stream.url(token, layout) for layout in LAYOUTS)
        echo(t(table.language, "demo.web.link", tier=tier, circle=circle, strip=strip))


def main(options: DemoOptions) -> int:
    """``mafiabot demo``: play, print the public channel and a summary, optionally write the report.

    Returns 0, or 1 when the emulator saw a request Discord would refuse or someone was left muted.

    Raises:
        OSError: the report cannot be written (the caller checked its folder first).
    """
    result = asyncio.run(run_demo(
        ruleset=options.ruleset, players=options.players, seed=options.seed, time_scale=options.time_scale,
        language=options.language, echo=print, rulesets_dir=options.rulesets_dir, web=options.web,
        pictures=Path(options.pictures) if options.pictures else None,
    ))
    if options.report:
        Path(options.report).write_text(json.dumps(result.to_json(), indent=2, ensure_ascii=False), encoding="utf-8")
    for line in result.summary():
        print(line)  # noqa: T201
    if options.report:
        print(t(options.language, "demo.summary.report", path=options.report))  # noqa: T201
    if options.pictures:
        shown = t(options.language, "demo.summary.pictures", count=len(result.pictures), path=options.pictures)
        print(shown)  # noqa: T201
    return 0 if not result.spec_violations and not result.still_muted else 1

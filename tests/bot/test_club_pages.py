"""The bot's web server serves a server's pages once its staff turn them on, and only then."""

from __future__ import annotations

import aiohttp

from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.testing import harness
from tests.harness import FAST, admin_of


async def test_the_bot_serves_the_pages_a_staff_member_turned_on() -> None:
    async with harness(2, emulator_config=FAST, config={"web": {"enabled": True, "port": 0}}) as h, \
            aiohttp.ClientSession() as http:
        assert h.bot.stream is not None
        root = f"{h.bot.stream.base_url}/club/{h.env.guild.id}/"
        async with http.get(root) as response:
            assert response.status == 404  # off until the staff say so
        await admin_of(h).run_command(h.env.text, "mafia settings", site_pages=True)
        async with http.get(root, headers={"Accept-Language": "ka-GE,ka;q=0.9"}) as response:
            assert response.status == 200
            assert str(response.url) == f"{root}ka/index.html"
        await admin_of(h).run_command(h.env.text, "mafia settings", site_pages=False)
        async with http.get(f"{root}ka/index.html") as response:
            assert response.status == 404


async def test_the_pages_stay_unserved_where_the_config_says_so() -> None:
    async with harness(2, emulator_config=FAST,
                       config={"web": {"enabled": True, "port": 0, "club_pages": False}}) as h, \
            aiohttp.ClientSession() as http:
        assert h.bot.stream is not None
        await admin_of(h).run_command(h.env.text, "mafia settings", site_pages=True)
        async with http.get(f"{h.bot.stream.base_url}/club/{h.env.guild.id}/en/index.html") as response:
            assert response.status == 404


async def test_the_organiser_hides_the_last_rounds_from_the_pages_and_others_are_refused_privately() -> None:
    async with harness(2, emulator_config=FAST) as h:
        admin = admin_of(h)
        announced = await admin.run_command(h.env.text, "mafia tournament new", title="Cup", ruleset="fiim",
                                            rounds=3, tables=1)
        assert not announced.ephemeral, announced.content
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        assert tm.site_hidden_rounds == 0

        async def hide(who: ScriptedUser, rounds: int) -> str:
            reply = await who.run_command(h.env.text, "mafia tournament site-hide", rounds=rounds)
            assert reply.ephemeral, reply.content  # a refusal too: only the one who asked sees it
            return reply.content

        assert await hide(h.players[0], 1) == t("en", "error.tournament.not_organiser")
        assert await hide(admin, 4) == t("en", "error.tournament.site_hide", rounds=3)
        assert await hide(admin, 2) == t("en", "tournament.site_hidden", name="Cup", count=2)
        assert (await h.store.guild_tournaments(h.env.guild.id))[0].site_hidden_rounds == 2
        assert await hide(admin, 0) == t("en", "tournament.site_shown", name="Cup")
        assert (await h.store.guild_tournaments(h.env.guild.id))[0].site_hidden_rounds == 0
        assert_no_spec_violations(h.emu)

"""The bot's web server serves a server's pages once its staff turn them on, and only then."""

from __future__ import annotations

import aiohttp

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

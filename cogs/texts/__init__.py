"""What the cogs say, as pure functions of the table, the lobby, the rules or the store's records.

Nothing here talks to Discord or imports a cog, so every cog (and every test) can use these.
"""

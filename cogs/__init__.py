"""discord.py cogs: thin adapters between Discord and the runtime."""

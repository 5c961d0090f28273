"""The table core: a game at a table, its timers, its mutes and its log, with no Discord and no SQL."""

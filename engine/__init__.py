"""The pure sport-Mafia rules engine: commands in, events out, no I/O and no clock."""

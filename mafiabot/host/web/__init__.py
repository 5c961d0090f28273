"""The tables on stream: a live feed of each table in tiers, and the overlay that draws it (docs/broadcast.md)."""

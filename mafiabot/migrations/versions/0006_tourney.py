"""Tournaments: the tournament, its players, its forbidden pairs, its seating schedule and its round tables.

Revision ID: 0006_tourney
Revises: 0005_panel
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_tourney"
down_revision: str | None = "0005_panel"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UTC = sa.DateTime(timezone=True)


def _of_tournament(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["tournament_id"], ["tournaments.id"], name=op.f(f"fk_{table}_tournament_id_tournaments"), ondelete="CASCADE"
    )


def upgrade() -> None:
    """Create the five tournament tables."""
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("ruleset_name", sa.String(length=64), nullable=False),
        sa.Column("ruleset", sa.JSON(), nullable=False),
        sa.Column("scoring", sa.String(length=16), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("tables", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("current_round", sa.Integer(), nullable=False),
        sa.Column("organiser_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", _UTC, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
    )
    op.create_index("ix_tournaments_guild_id_status", "tournaments", ["guild_id", "status"])
    op.create_table(
        "tournament_players",
        sa.Column("tournament_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("display_name", sa.String(length=100), nullable=False),
        sa.Column("joined_at", _UTC, nullable=False),
        _of_tournament("tournament_players"),
        sa.PrimaryKeyConstraint("tournament_id", "user_id", name=op.f("pk_tournament_players")),
    )
    op.create_table(
        "tournament_forbidden",
        sa.Column("tournament_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("low", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("high", sa.BigInteger(), autoincrement=False, nullable=False),
        _of_tournament("tournament_forbidden"),
        sa.PrimaryKeyConstraint("tournament_id", "low", "high", name=op.f("pk_tournament_forbidden")),
    )
    op.create_table(
        "tournament_seats",
        sa.Column("tournament_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("round", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("table_no", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seat", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        _of_tournament("tournament_seats"),
        sa.PrimaryKeyConstraint("tournament_id", "round", "table_no", "seat", name=op.f("pk_tournament_seats")),
    )
    op.create_table(
        "tournament_tables",
        sa.Column("tournament_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("round", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("table_no", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("voice_channel_id", sa.BigInteger(), nullable=False),
        sa.Column("judge_id", sa.BigInteger(), nullable=True),
        sa.Column("game_id", sa.Integer(), nullable=True),
        _of_tournament("tournament_tables"),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_tournament_tables_game_id_games"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("tournament_id", "round", "table_no", name=op.f("pk_tournament_tables")),
    )
    op.create_index("ix_tournament_tables_channel_id", "tournament_tables", ["channel_id"])


def downgrade() -> None:
    """Drop every tournament (their games stay, as ordinary games)."""
    op.drop_index("ix_tournament_tables_channel_id", table_name="tournament_tables")
    op.drop_table("tournament_tables")
    op.drop_table("tournament_seats")
    op.drop_table("tournament_forbidden")
    op.drop_table("tournament_players")
    op.drop_index("ix_tournaments_guild_id_status", table_name="tournaments")
    op.drop_table("tournaments")

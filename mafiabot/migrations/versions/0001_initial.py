"""The store's first tables: games, seats, the command/event log, settings, mutes, results, ratings.

Written out with plain SQLAlchemy types rather than the model classes, so the revision keeps
meaning what it meant when the models change later.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UTC = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create every table of the store."""
    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("voice_channel_id", sa.BigInteger(), nullable=True),
        sa.Column("judge_id", sa.BigInteger(), nullable=True),
        sa.Column("ruleset_name", sa.String(length=64), nullable=False),
        sa.Column("ruleset", sa.JSON(), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", _UTC, nullable=False),
        sa.Column("finished_at", _UTC, nullable=True),
        sa.Column("result", sa.String(length=16), nullable=True),
        sa.Column("reason", sa.String(length=32), nullable=True),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("timer_id", sa.Integer(), nullable=True),
        sa.Column("timer_deadline", _UTC, nullable=True),
        sa.Column("timer_remaining", sa.Float(), nullable=True),
        sa.Column("discord", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
    )
    op.create_index("ix_games_status_guild_id", "games", ["status", "guild_id"])

    op.create_table(
        "guild_settings",
        sa.Column("guild_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("judge_role_id", sa.BigInteger(), nullable=True),
        sa.Column("default_ruleset", sa.String(length=64), nullable=False),
        sa.Column("timers", sa.JSON(), nullable=False),
        sa.Column("vote_window", sa.Integer(), nullable=True),
        sa.Column("mute_spectators", sa.Boolean(), nullable=False),
        sa.Column("voice_cues", sa.Boolean(), nullable=False),
        sa.Column("results_channel_id", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("guild_id", name=op.f("pk_guild_settings")),
    )

    op.create_table(
        "ratings",
        sa.Column("guild_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("ruleset_name", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("updated_at", _UTC, nullable=True),
        sa.PrimaryKeyConstraint("guild_id", "ruleset_name", "user_id", name=op.f("pk_ratings")),
    )

    op.create_table(
        "commands",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("command", sa.JSON(), nullable=False),
        sa.Column("actor_id", sa.BigInteger(), nullable=True),
        sa.Column("at", _UTC, nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_commands_game_id_games"), ondelete="CASCADE"),
        # The uniqueness guard of the log: one command per position of a game, ever.
        sa.PrimaryKeyConstraint("game_id", "seq", name=op.f("pk_commands")),
    )

    op.create_table(
        "mute_ledger",
        sa.Column("guild_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("muted_at", _UTC, nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_mute_ledger_game_id_games"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("guild_id", "user_id", name=op.f("pk_mute_ledger")),
    )

    op.create_table(
        "results",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("display_name", sa.String(length=100), nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("ruleset_name", sa.String(length=64), nullable=False),
        sa.Column("finished_at", _UTC, nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("team", sa.String(length=16), nullable=False),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("draw", sa.Boolean(), nullable=False),
        sa.Column("points", sa.String(length=32), nullable=False),
        sa.Column("extra_points", sa.String(length=32), nullable=False),
        sa.Column("fouls", sa.Integer(), nullable=False),
        sa.Column("best_move_black", sa.Integer(), nullable=True),
        sa.Column("removed", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_results_game_id_games"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("game_id", "seat", name=op.f("pk_results")),
    )
    op.create_index("ix_results_guild_id_finished_at", "results", ["guild_id", "finished_at"])
    op.create_index("ix_results_guild_id_user_id", "results", ["guild_id", "user_id"])

    op.create_table(
        "seats",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("display_name", sa.String(length=100), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_seats_game_id_games"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("game_id", "seat", name=op.f("pk_seats")),
    )
    op.create_index(op.f("ix_seats_user_id"), "seats", ["user_id"])

    op.create_table(
        "events",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("event", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id", "seq"],
            ["commands.game_id", "commands.seq"],
            name=op.f("fk_events_game_id_seq_commands"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "seq", "position", name=op.f("pk_events")),
    )


def downgrade() -> None:
    """Drop every table of the store, and its data with it."""
    op.drop_table("events")
    op.drop_index(op.f("ix_seats_user_id"), table_name="seats")
    op.drop_table("seats")
    op.drop_index("ix_results_guild_id_user_id", table_name="results")
    op.drop_index("ix_results_guild_id_finished_at", table_name="results")
    op.drop_table("results")
    op.drop_table("mute_ledger")
    op.drop_table("commands")
    op.drop_table("ratings")
    op.drop_table("guild_settings")
    op.drop_index("ix_games_status_guild_id", table_name="games")
    op.drop_table("games")

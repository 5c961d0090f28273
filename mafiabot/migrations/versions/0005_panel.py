"""The ``judge_sees_roles`` setting: whether the judge's console (``/mafia panel``) shows every role.

Revision ID: 0005_panel
Revises: 0004_fairplay
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_panel"
down_revision: str | None = "0004_fairplay"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """On for every server, as for a new one: the judge is the host's assistant."""
    with op.batch_alter_table("guild_settings") as batch:
        batch.add_column(sa.Column("judge_sees_roles", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    """Drop the setting."""
    with op.batch_alter_table("guild_settings") as batch:
        batch.drop_column("judge_sees_roles")

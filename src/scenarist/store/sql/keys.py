"""API keys in the database: created (the key returned once), listed, revoked, looked up.

Only the SHA-256 of a key is stored. A key is ``sk_scen_<key id>_<secret>``: the key id
finds the row, then the hashes are compared with :func:`hmac.compare_digest`, so the
comparison takes the same time however much of a wrong key matches.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, false, select, update

from scenarist.errors import UserError
from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import ApiKeyRow, RevokedSessionRow, table_of
from scenarist.store.sql.records import ApiKeyInfo

__all__ = [
    "KEY_PREFIX",
    "SCOPES",
    "KeyQueries",
    "LastActiveKey",
    "hash_key",
    "is_within",
    "parse_key_id",
]

KEY_PREFIX = "sk_scen_"
SCOPES = ("ingest", "read", "admin")
_KEYS = table_of(ApiKeyRow)
_REVOKED = table_of(RevokedSessionRow)


def hash_key(key: str) -> str:
    """The stored form of ``key``: its SHA-256, hex (keys are random: no salt needed)."""
    return hashlib.sha256(key.encode()).hexdigest()


def parse_key_id(key: str) -> str | None:
    """The key id inside ``sk_scen_<id>_<secret>``, or ``None`` if it is not our format."""
    if not key.startswith(KEY_PREFIX):
        return None
    key_id, sep, secret = key[len(KEY_PREFIX) :].partition("_")
    return key_id if sep and key_id and secret else None


def _check_scopes(scopes: list[str]) -> list[str]:
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise UserError(f"scopes must be some of {list(SCOPES)}, got {scopes!r}")
    return sorted(set(scopes), key=SCOPES.index)


class LastActiveKey(UserError):
    """A project-limited admin asked to revoke the server's last active key (a 409)."""


def _info(row: Mapping[Any, Any]) -> ApiKeyInfo:
    projects = row.get("projects")
    return ApiKeyInfo.model_validate(
        {
            **row,
            "scopes": str(row["scopes"]).split(","),
            "projects": None if projects is None else json.loads(projects),
        }
    )


def is_within(projects: list[str] | None, within: list[str]) -> bool:
    """Whether a key opening ``projects`` (``None``: every project) opens only projects
    among ``within``: what an admin key limited to ``within`` may see and revoke."""
    return projects is not None and bool(projects) and set(projects) <= set(within)


def _check_projects(projects: list[str] | None) -> list[str] | None:
    from scenarist.store.projects import check_project

    if projects is None:
        return None
    if not projects:
        raise UserError("a key scoped to projects needs at least one project (or none: all)")
    return sorted({check_project(p, source="key project") for p in projects})


class KeyQueries(Database):
    """API key storage (mixed into :class:`~.store.SqlStore`)."""

    async def create_api_key(
        self, scopes: list[str], name: str | None = None, *, projects: list[str] | None = None
    ) -> tuple[ApiKeyInfo, str]:
        """A new key with ``scopes``: its listing and the key itself (shown only now).
        ``projects``: the only projects the key opens (``None``: every project)."""
        checked = _check_scopes(list(scopes))
        allowed = _check_projects(None if projects is None else list(projects))
        key_id = secrets.token_hex(6)
        key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        row = {
            "key_id": key_id,
            "key_hash": hash_key(key),
            "scopes": ",".join(checked),
            "name": name[:200] if name else None,
            "created_at": datetime.now(UTC),
            "revoked_at": None,
            "projects": None if allowed is None else json.dumps(allowed),
        }
        async with self._write() as connection:
            await connection.execute(_KEYS.insert(), [row])
        return _info(row), key

    async def list_api_keys(self, *, within: list[str] | None = None) -> list[ApiKeyInfo]:
        """Every key ever created (revoked ones too), oldest first; never the keys.
        ``within``: only the keys limited to some of those projects (never a global key),
        what an admin key limited to ``within`` may see."""
        query = select(
            _KEYS.c.key_id,
            _KEYS.c.name,
            _KEYS.c.scopes,
            _KEYS.c.created_at,
            _KEYS.c.revoked_at,
            _KEYS.c.projects,
        ).order_by(_KEYS.c.created_at, _KEYS.c.key_id)
        if within is not None:
            query = query.where(_KEYS.c.projects.is_not(None))
        async with self._read() as connection:
            keys = [_info(row._mapping) for row in (await connection.execute(query)).all()]
        if within is None:
            return keys
        return [k for k in keys if is_within(k.projects, within)]

    async def revoke_api_key(self, key_id: str, *, within: list[str] | None = None) -> bool:
        """Revoke ``key_id``; false when there is no such active key, or (``within``
        given) when the key is not limited to some of those projects: a global key, or
        one that opens another project, is left alone and answered as unknown.

        ``within`` given (a project-limited admin), revoking the server's last active key
        raises :class:`LastActiveKey`: on a loopback server no active key means open
        mode, every project open to anyone, so a tenant could open the others' data and
        mint a global key. The owner (``within`` ``None``) may."""
        match = [_KEYS.c.key_id == key_id, _KEYS.c.revoked_at.is_(None)]
        async with self._write() as connection:
            if within is not None:
                if self.dialect == "sqlite":  # the write lock first: no revocation between
                    await connection.execute(update(_KEYS).where(false()).values(name=None))
                active = select(_KEYS.c.key_id, _KEYS.c.projects).where(
                    _KEYS.c.revoked_at.is_(None)
                )  # locked (PostgreSQL): two tenants revoking their last keys take turns
                rows = (await connection.execute(active.with_for_update())).all()
                projects = next((row.projects for row in rows if row.key_id == key_id), None)
                if projects is None or not is_within(json.loads(projects), within):
                    return False
                if len(rows) == 1:
                    raise LastActiveKey(
                        f"key {key_id!r} is the server's last active key: without it a "
                        "loopback server opens every project to anyone (open mode); create "
                        "its replacement first, or ask the server's owner "
                        "(scenarist keys revoke)"
                    )
                match.append(_KEYS.c.projects == projects)
            done = await connection.execute(
                update(_KEYS).where(*match).values(revoked_at=datetime.now(UTC))
            )
        return bool(done.rowcount)

    async def key_projects(self, key_id: str) -> list[str] | None:
        """The projects ``key_id`` is scoped to; ``None`` when it opens every project."""
        async with self._read() as connection:
            projects = await connection.scalar(
                select(_KEYS.c.projects).where(_KEYS.c.key_id == key_id)
            )
        return None if projects is None else list(json.loads(projects))

    async def has_active_keys(self) -> bool:
        async with self._read() as connection:
            found = await connection.scalar(
                select(_KEYS.c.key_id).where(_KEYS.c.revoked_at.is_(None)).limit(1)
            )
        return found is not None

    async def session_scopes(self, key_id: str, session_id: str) -> list[str] | None:
        """The scopes of a dashboard session of ``key_id``: the key's while it is active
        and the session was not ended by logout (:meth:`revoke_session`); else ``None``.
        One read per request, as for a key alone."""
        ended = select(_REVOKED.c.session_id).where(_REVOKED.c.session_id == session_id)
        query = select(_KEYS.c.scopes).where(
            _KEYS.c.key_id == key_id, _KEYS.c.revoked_at.is_(None), ~ended.exists()
        )
        async with self._read() as connection:
            scopes = await connection.scalar(query)
        return None if scopes is None else str(scopes).split(",")

    async def revoke_session(self, session_id: str, expires_at: datetime) -> None:
        """End the dashboard session ``session_id`` now (its cookie expires at
        ``expires_at``); sessions whose cookies have expired are forgotten meanwhile."""
        now = datetime.now(UTC)
        async with self._write() as connection:
            await connection.execute(delete(_REVOKED).where(_REVOKED.c.expires_at < now))
            if expires_at > now:
                statement = self._insert(_REVOKED).on_conflict_do_nothing(
                    index_elements=["session_id"]
                )
                await connection.execute(
                    statement, [{"session_id": session_id, "expires_at": expires_at}]
                )

    async def verify_api_key(self, key: str) -> list[str] | None:
        """The scopes of ``key`` if it is an active key, else ``None``."""
        key_id = parse_key_id(key)
        if key_id is None:
            return None
        async with self._read() as connection:
            row = (
                await connection.execute(
                    select(_KEYS.c.key_hash, _KEYS.c.scopes).where(
                        _KEYS.c.key_id == key_id, _KEYS.c.revoked_at.is_(None)
                    )
                )
            ).first()
        if row is None or not hmac.compare_digest(row.key_hash, hash_key(key)):
            return None
        return str(row.scopes).split(",")

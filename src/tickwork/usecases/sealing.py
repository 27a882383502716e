"""Sealing action records with the stack's key, and checking the seal before a fire runs."""

from __future__ import annotations

from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.seal import compute_seal, seal_matches

__all__ = ["seal_holds", "seal_of"]


def _sealed_fields(action: Action) -> dict[str, Any]:
    return {
        "action_id": action.id,
        "action": action.action,
        "data": action.data,
        "metadata": action.metadata,
        "schedule": action.schedule.to_dict(),
    }


def seal_of(action: Action, deps: Dependencies) -> str | None:
    key = deps.secret(deps.settings.seal_secret_id)
    return None if key is None else compute_seal(key, **_sealed_fields(action))


def seal_holds(action: Action, deps: Dependencies) -> bool:
    """True if the record is as tickwork wrote it (always, when no seal key is configured)."""
    key = deps.secret(deps.settings.seal_secret_id)
    return key is None or seal_matches(key, action.seal, **_sealed_fields(action))

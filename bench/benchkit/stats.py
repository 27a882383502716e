"""Percentiles and medians for figures (nearest rank: every figure is an observed value)."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["median", "percentile"]


def percentile(values: Sequence[float], pct: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)

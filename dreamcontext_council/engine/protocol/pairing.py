"""Cross-examination pairs: a seeded random derangement of the roster."""

from __future__ import annotations

import random


def derangement(personas: list[str], seed: int) -> dict[str, str]:
    """critic → peer: nobody critiques itself and each persona is critiqued exactly once.

    A random single cycle over a seeded shuffle: the same seed gives the same pairs.
    """
    if len(personas) < 2:
        return {}
    order = list(personas)
    random.Random(seed).shuffle(order)
    return {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}


def new_seed() -> int:
    """A fresh seed to record in debate.md."""
    return random.SystemRandom().randrange(1, 2**31)

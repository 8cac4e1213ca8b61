"""Which frames of a video a prompt shows: the one frame-index rule every media reader follows (standard library).

`uniform_indices(n, k)`: `k` evenly spaced indices over `[0, n - 1]`, first and last frame included, i.e.
`round(linspace(0, n - 1, k))` with half-up rounding, computed exactly with fractions; every frame when the video
has no more than `k`, the middle frame (rounded down) when one is asked for.
"""

from __future__ import annotations

from fractions import Fraction


def uniform_indices(n_total: int, n_wanted: int) -> list[int]:
    """Evenly spaced frame indices over [0, n_total - 1], first and last frame included (see the module docstring);
    a ValueError for a video without frames or a request for none."""
    if n_total <= 0:
        raise ValueError(f"a video needs at least one frame, got {n_total}")
    if n_wanted <= 0:
        raise ValueError(f"ask for at least one frame, got {n_wanted}")
    if n_total <= n_wanted:
        return list(range(n_total))
    if n_wanted == 1:
        return [(n_total - 1) // 2]
    step = Fraction(n_total - 1, n_wanted - 1)
    return [int((index * step * 2 + 1) // 2) for index in range(n_wanted)]

"""Source text shared by the exported `utils.py` files of several benchmarks (pasted into each, since an upstream
task folder cannot import another's).

`FRAME_SAMPLER` needs `functools`, `Fraction` and PIL's `Image` imported by the surrounding text.
"""

from __future__ import annotations

FRAME_SAMPLER = '''def uniform_indices(n_total, n_wanted):
    """Evenly spaced frame indices over [0, n_total - 1], first and last included; every frame when too few."""
    if n_total <= n_wanted:
        return list(range(n_total))
    if n_wanted == 1:
        return [(n_total - 1) // 2]
    step = Fraction(n_total - 1, n_wanted - 1)
    return [int((i * step * 2 + 1) // 2) for i in range(n_wanted)]


@functools.lru_cache(maxsize=4)
def sample_frames(path, n_wanted):
    """`n_wanted` uniformly spaced RGB frames of the video (PyAV: one pass to count the frames, one to keep them)."""
    import av

    with av.open(path) as container:
        total = sum(1 for _ in container.decode(container.streams.video[0]))
    if total == 0:
        raise ValueError(f"{path} holds no video frames")
    wanted = set(uniform_indices(total, n_wanted))
    frames = []
    with av.open(path) as container:
        for index, frame in enumerate(container.decode(container.streams.video[0])):
            if index in wanted:
                frames.append(Image.fromarray(frame.to_ndarray(format="rgb24")))
    return tuple(frames)
'''
"""`uniform_indices` and `sample_frames`: evenly spaced video frames with PyAV, the plugin's rounding rule."""

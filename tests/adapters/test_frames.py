"""Frame sampling: exact uniform indices, decord and PyAV agree, decode once, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmms_agentic.adapters import frames

# 10-second clip at 10 fps = 100 frames -> round(linspace(0, 99, 32)), half up
TEN_SECOND_CLIP_32 = [0, 3, 6, 10, 13, 16, 19, 22, 26, 29, 32, 35, 38, 42, 45, 48, 51, 54, 57, 61, 64, 67, 70, 73,
                      77, 80, 83, 86, 89, 93, 96, 99]


@pytest.mark.parametrize(("total", "wanted", "expected"), [
    (100, 32, TEN_SECOND_CLIP_32),
    (300, 8, [0, 43, 85, 128, 171, 214, 256, 299]),
    (10, 32, list(range(10))),          # shorter than asked: every frame once, no duplicates
    (32, 32, list(range(32))),
    (5, 1, [2]),
    (1, 4, [0]),
    (9, 3, [0, 4, 8]),
    (4, 3, [0, 2, 3]),                  # 1.5 rounds half up
])
def test_uniform_indices(total: int, wanted: int, expected: list[int]) -> None:
    assert frames.uniform_indices(total, wanted) == expected


@pytest.mark.parametrize(("total", "wanted"), [(0, 4), (10, 0)])
def test_uniform_indices_rejects_empty(total: int, wanted: int) -> None:
    with pytest.raises(ValueError):
        frames.uniform_indices(total, wanted)


@pytest.fixture(scope="module")
def ten_second_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from lmms_agentic.tasks.agentvqa.mini import write_videos

    folder = tmp_path_factory.mktemp("videos")
    write_videos(folder)
    return folder / "kitchen_walk.mp4"  # 100 frames at 10 fps


@pytest.mark.parametrize("decoder", ["decord", "pyav"])
def test_ten_second_clip_exact_indices_with_each_decoder(ten_second_clip: Path, decoder: str) -> None:
    sampled = frames.sample_frames(ten_second_clip, 32, use_cache=False, decoders=(decoder,))
    assert sampled.decoder == decoder and sampled.total_frames == 100
    assert list(sampled.indices) == TEN_SECOND_CLIP_32
    assert len(sampled.frames) == 32 and sampled.frames[0].mode == "RGB" and sampled.frames[0].size == (160, 96)
    assert sampled.log() == {"video": str(ten_second_clip), "n_frames": 32, "indices": TEN_SECOND_CLIP_32,
                             "total_frames": 100, "decoder": decoder}


def test_decoders_agree_on_pixels(ten_second_clip: Path) -> None:
    import numpy as np

    a = frames.sample_frames(ten_second_clip, 4, use_cache=False, decoders=("decord",))
    b = frames.sample_frames(ten_second_clip, 4, use_cache=False, decoders=("pyav",))
    for x, y in zip(a.frames, b.frames, strict=True):
        assert np.abs(np.asarray(x, dtype=int) - np.asarray(y, dtype=int)).mean() < 3


def test_a_video_is_decoded_once_per_run(ten_second_clip: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frames.clear_cache()
    calls = []
    real = frames.DECODERS

    def counting(path: str, n: int) -> object:
        calls.append(path)
        return real[0][1](path, n)

    monkeypatch.setattr(frames, "DECODERS", (("decord", counting),))
    first = frames.sample_frames(ten_second_clip, 32, decoders=("decord",))
    for _ in range(4):
        assert frames.sample_frames(ten_second_clip, 32, decoders=("decord",)) is first
    assert len(calls) == 1 and frames.cache_stats()["hits"] == 4
    assert frames.lookup(ten_second_clip) is first


def test_pyav_fallback_when_decord_fails(ten_second_clip: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: str, n: int) -> object:
        raise RuntimeError("decord cannot open this file")

    monkeypatch.setattr(frames, "DECODERS", (("decord", broken), frames.DECODERS[1]))
    sampled = frames.sample_frames(ten_second_clip, 8, use_cache=False)
    assert sampled.decoder == "pyav" and sampled.total_frames == 100


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.mp4 does not exist"):
        frames.sample_frames(tmp_path / "nope.mp4", 8)
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video")
    with pytest.raises(frames.VideoDecodeError, match=r"cannot decode .*junk.mp4: decord: .*; pyav: "):
        frames.sample_frames(junk, 8, use_cache=False)

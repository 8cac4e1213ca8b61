"""Frame sampling: exact uniform indices, decord and PyAV agree, decode once, clear errors, truncation."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmms_agentic.adapters import frames
from lmms_agentic.adapters.core.sampling import uniform_indices
from lmms_agentic.adapters.media import MediaError

from ..bad_data import faststart_copy, remux

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
    assert uniform_indices(total, wanted) == expected


@pytest.mark.parametrize(("total", "wanted"), [(0, 4), (10, 0)])
def test_uniform_indices_rejects_empty(total: int, wanted: int) -> None:
    with pytest.raises(ValueError):
        uniform_indices(total, wanted)


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

    def counting(path: str, n: int, *rule: object) -> object:
        calls.append(path)
        return real[0][1](path, n, *rule)

    monkeypatch.setattr(frames, "DECODERS", (("decord", counting),))
    first = frames.sample_frames(ten_second_clip, 32, decoders=("decord",))
    for _ in range(4):
        assert frames.sample_frames(ten_second_clip, 32, decoders=("decord",)) is first
    assert len(calls) == 1 and frames.cache_stats()["hits"] == 4
    assert frames.lookup(ten_second_clip) is first


def test_pyav_fallback_when_decord_fails(ten_second_clip: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: str, n: int, *rule: object) -> object:
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


# ------------------------------------------------------------------ integrity: truncated, empty, missing videos

def matroska_copy(source: Path, target: Path) -> Path:
    return remux(source, target, format="matroska")


def truncated(source: Path, target: Path, fraction: float) -> Path:
    data = source.read_bytes()
    target.write_bytes(data[: int(len(data) * fraction)])
    return target


WHERE = "agentvqa record 'vsibench_0001', video"


def test_a_truncated_faststart_mp4_is_not_a_shorter_video(ten_second_clip: Path, tmp_path: Path) -> None:
    fast = faststart_copy(ten_second_clip, tmp_path / "fast.mp4")
    assert frames.sample_frames(fast, 8, use_cache=False).total_frames == 100
    frames.check_video(fast, WHERE)
    for fraction in (0.5, 0.9, 0.99):
        cut = truncated(fast, tmp_path / f"cut{fraction}.mp4", fraction)
        with pytest.raises(frames.VideoDecodeError, match=r"cut.*\.mp4: the file is truncated: box 'mdat'"):
            frames.sample_frames(cut, 8, use_cache=False)
        with pytest.raises(MediaError, match=r"agentvqa record 'vsibench_0001', field 'video': video file .*cut"
                                             r".*\.mp4 is truncated: box 'mdat' at byte \d+ declares \d+ bytes"):
            frames.check_video(cut, WHERE)


def test_pyav_compares_decoded_frames_with_the_declared_count(ten_second_clip: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    cut = truncated(faststart_copy(ten_second_clip, tmp_path / "fast.mp4"), tmp_path / "cut.mp4", 0.5)
    monkeypatch.setattr(frames, "_structure_problem", lambda path: None)  # only the decoder's own check
    with pytest.raises(frames.VideoDecodeError, match=r"pyav: VideoDecodeError: truncated: decoded \d+ of the 100"):
        frames.sample_frames(cut, 8, use_cache=False, decoders=("pyav",))


def test_a_truncated_mp4_with_its_index_last(ten_second_clip: Path, tmp_path: Path) -> None:
    cut = truncated(ten_second_clip, tmp_path / "cut.mp4", 0.5)
    with pytest.raises(frames.VideoDecodeError, match="truncated"):
        frames.sample_frames(cut, 8, use_cache=False)
    with pytest.raises(MediaError, match="truncated"):
        frames.check_video(cut, WHERE)


def test_other_containers_are_checked_by_packets(ten_second_clip: Path, tmp_path: Path) -> None:
    mkv = matroska_copy(ten_second_clip, tmp_path / "clip.mkv")  # Matroska declares a duration, no frame count
    frames.check_video(mkv, WHERE)
    assert frames.sample_frames(mkv, 8, use_cache=False).total_frames == 100
    cut = truncated(mkv, tmp_path / "clip_cut.mkv", 0.5)
    with pytest.raises(MediaError, match=r"clip_cut.mkv is truncated: it holds frames up to [\d.]+s of the 10.00s"):
        frames.check_video(cut, WHERE)
    with pytest.raises(frames.VideoDecodeError, match=r"pyav: VideoDecodeError: truncated: decoded frames up to"):
        frames.sample_frames(cut, 8, use_cache=False)


def test_empty_missing_and_junk_videos(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(MediaError, match=r"field 'video': video file .*empty.mp4 is empty \(0 bytes\)"):
        frames.check_video(empty, WHERE)
    with pytest.raises(frames.VideoDecodeError, match="is empty"):
        frames.sample_frames(empty, 8, use_cache=False)
    with pytest.raises(MediaError, match=r"video file .*nope.mp4 does not exist") as missing:
        frames.check_video(tmp_path / "nope.mp4", WHERE)
    assert (missing.value.benchmark, missing.value.record_id, missing.value.field_name) == (
        "agentvqa", "vsibench_0001", "video")
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video" * 10)
    with pytest.raises(MediaError, match=r"junk\.mp4 is not a readable video"):
        frames.check_video(junk, WHERE)


def test_check_video_accepts_every_bundled_video_without_sampling_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    import lmms_agentic

    def no_decode(*args: object, **kwargs: object) -> object:
        raise AssertionError("decoded")

    monkeypatch.setattr(frames, "DECODERS", (("decord", no_decode), ("pyav", no_decode)))
    videos = sorted(Path(lmms_agentic.tasks_dir()).glob("*/data/mini/**/*.mp4"))
    assert len(videos) >= 5
    for video in videos:
        frames.check_video(video, WHERE)


# ------------------------------------------------------------------ whole boxes, no usable frame

def _zeroed(source: Path, target: Path) -> Path:
    from ..bad_data import zeroed_payload

    target.write_bytes(zeroed_payload(source.read_bytes()))
    return target


def _without_frames(source: Path, target: Path) -> Path:
    import av

    with av.open(str(source)) as reader, av.open(str(target), "w") as writer:
        writer.add_stream_from_template(reader.streams.video[0])
        writer.start_encoding()
    return target


@pytest.mark.parametrize(("make", "problem"), [
    (_zeroed, r"is corrupt: its first frame cannot be decoded"),
    (_without_frames, r"(holds no video frames|has no video stream) \(0 frames\)"),
], ids=["zeroed_payload", "no_frames"])
def test_the_load_check_decodes_the_first_frame(ten_second_clip: Path, tmp_path: Path, make: object,
                                               problem: str) -> None:
    video = make(ten_second_clip, tmp_path / "bad.mp4")  # type: ignore[operator]
    assert frames._structure_problem(video) is None  # every box is whole: the structure check alone passed it
    with pytest.raises(MediaError, match=r"field 'video': video file .*bad\.mp4 " + problem):
        frames.check_video(video, WHERE)
    with pytest.raises(frames.VideoDecodeError):  # what the run met at the prompt before the load check saw it
        frames.sample_frames(video, 8, use_cache=False)

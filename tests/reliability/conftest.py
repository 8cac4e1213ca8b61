"""Fixtures of the reliability tests: the ``reliability_slow`` marker, a private datasets cache, loading a corrupted
copy of a benchmark through its hooks, and the "clear error" assertion."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters import bad_records, frames, media, provenance

SLOW = "reliability_slow: heavier reliability tests (real CLI runs, interruptions, judge-down timings); CI runs them"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", SLOW)


@pytest.fixture(scope="session")
def private_datasets_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Arrow caches of the corrupted copies go to a temporary folder, not the user's Hugging Face cache."""
    import datasets

    folder = tmp_path_factory.mktemp("hf-datasets-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(datasets.config, "HF_DATASETS_CACHE", folder)
        yield folder


#: exceptions that mean "a crash deep in a library": never an acceptable answer to bad data
LIBRARY_ERRORS: tuple[type[BaseException], ...] = (UnicodeError, KeyError, IndexError, AttributeError, TypeError,
                                                  AssertionError, RecursionError, MemoryError)


def assert_clear(error: BaseException, patterns: tuple[str, ...]) -> None:
    """``error`` is this project's error (or a FileNotFoundError/ValueError it raised with a message), never a
    library's, and its message matches every regex in ``patterns``."""
    text = str(error)
    kind = type(error)
    assert not isinstance(error, LIBRARY_ERRORS), f"library error {kind.__module__}.{kind.__name__}: {text}"
    assert kind.__module__.startswith("lmms_agentic") or kind in (FileNotFoundError, ValueError), \
        f"not a clear error: {kind.__module__}.{kind.__name__}: {text}"
    assert "_io.BytesIO" not in text, text
    for pattern in patterns:
        assert re.search(pattern, text), f"{pattern!r} not in: {text}"


@pytest.fixture
def point_at(monkeypatch: pytest.MonkeyPatch, private_datasets_cache: Path) -> Callable[..., None]:
    """Point ``benchmark`` at the folder ``copy`` (and set or clear the bad-record skip); forget decoded media
    and recorded provenance, which are keyed by record id, not by data location."""
    def point(benchmark: str, copy: Path, skip: bool = False) -> None:
        monkeypatch.delenv("LMMS_AGENTIC_DATA", raising=False)
        monkeypatch.setenv(f"LMMS_AGENTIC_DATA_{benchmark.upper()}", str(copy))
        if skip:
            monkeypatch.setenv(bad_records.SKIP_ENV, "1")
        else:
            monkeypatch.delenv(bad_records.SKIP_ENV, raising=False)
        media.configure_image_cache(enabled=True, clear=True)
        frames.clear_cache()
        provenance.clear()
    return point


def excluded_ids(benchmark: str) -> list[str]:
    """The record ids the last load excluded, as written into results files."""
    facts: dict[str, Any] = provenance.used().get(benchmark, {})
    return [str(r["id"]) for r in facts.get("excluded", {}).get("records", [])]

"""The viewer's browser tests' page driver: headless Chromium from the distribution, driven by Playwright, with every
script error, console error, failed request and dialog recorded, and screenshots kept as test artefacts (under the
test's tmp folder, or $VIEWER_SCREENSHOTS)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = "no Chromium installed (apt-get install -y chromium): the viewer's browser tests are skipped"
NO_PLAYWRIGHT = "playwright not installed (pip install playwright)"


def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("VIEWER_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"viewer screenshots: {folder}")
    return folder


class Browser:
    """One page; every script error, console error, failed request and dialog is recorded."""

    def __init__(self, page: Any, shots: Path) -> None:
        self.page, self.shots, self.problems = page, shots, []
        page.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))
        page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("requestfailed", lambda request: self.problems.append(f"failed: {request.url}"))
        page.on("dialog", lambda dialog: (self.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))

    def open(self, index: Path, route: str) -> None:
        self.page.goto(f"{index.as_uri()}#{route}")
        self.settle()

    def wait(self, expression: str, timeout: float = 20.0) -> None:
        """Poll ``expression`` until true (Playwright's wait_for_function evaluates strings with eval, which the
        site's Content-Security-Policy forbids; evaluate() is not subject to it)."""
        deadline = time.monotonic() + timeout
        while not self.page.evaluate(expression):
            assert time.monotonic() < deadline, f"timed out waiting for {expression}"
            time.sleep(0.02)

    def settle(self) -> None:
        """The view is rendered and every image has loaded (or failed)."""
        self.wait("!document.getElementById('main').textContent.startsWith('Loading')")
        self.wait("Array.from(document.images).every(i => i.complete)")

    def follow(self, link: Any) -> None:
        """Click `link` and wait until the view it routes to is rendered: the hash changes on the click, but the
        old view stays on screen until the new one is drawn (settling at once could read the old view)."""
        heading = "String((document.querySelector('h1') || {}).textContent)"
        hash_before, heading_before = self.page.evaluate(f"[location.hash, {heading}]")
        link.click()
        self.wait(f"location.hash !== {hash_before!r} && {heading} !== {heading_before!r}")
        self.settle()

    def check(self, name: str) -> None:
        """No problem so far, every image decoded; a screenshot kept as ``name``.png."""
        broken = self.page.evaluate(
            "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
        self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)
        assert broken == [], broken
        assert self.problems == [], self.problems
        assert self.page.evaluate("window.PWNED") is None

    def texts(self, selector: str) -> list[str]:
        return [str(text) for text in self.page.locator(selector).all_inner_texts()]


@contextmanager
def launched(shots: Path) -> Iterator[Browser]:
    """A page in a fresh headless Chromium (the test skips without Chromium or Playwright)."""
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    sync_api = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT)
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield Browser(chromium.new_page(viewport={"width": 1400, "height": 1000}), shots)
        finally:
            chromium.close()

"""`make demo`'s judged run and its viewer: ``run_demo`` without the tiny VLM (the dummy run and the judged Agent-X
run, exactly as ``make demo`` runs them) prints the viewer's path and a finite goal_acc; in a real browser, the
overview's agentx goal_acc value of the judged run leads to a sample the judge failed and to that verdict with its
reason in three clicks, every number shown equal to the run's results and sample files."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters.samples import read_record
from lmms_agentic.cli.demo import run_demo
from lmms_agentic.cli.demo_judged import JUDGE_MODEL, JUDGED_LABEL

from .browser import Browser, launched, screenshots

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Demo:
    output: Path
    printed: str

    @property
    def judged(self) -> Path:
        return self.output / "judged"

    def results(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(next(self.judged.rglob("*_results.json")).read_text(encoding="utf-8"))
        return found

    def goal_acc_lines(self) -> dict[str, dict[str, Any]]:
        """item id -> sample line, of every line that counts for goal_acc."""
        lines = {}
        for path in self.judged.rglob("*_samples_agentx_*.jsonl"):
            for text in path.read_text(encoding="utf-8").splitlines():
                line = json.loads(text)
                record = read_record(line)
                if record is not None and isinstance(line.get("goal_acc"), dict):
                    lines[str(record["id"])] = line
        return lines


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    output = tmp_path_factory.mktemp("demo")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert run_demo(output, with_tiny_vlm=False) == 0
    return Demo(output, printed.getvalue())


def test_the_demo_prints_its_viewer_and_a_judged_goal_acc(demo: Demo) -> None:
    viewer = re.search(r"every sample in a browser \(open from disk\): (\S+)", demo.printed)
    assert viewer is not None and Path(viewer.group(1)) == demo.output / "viewer" / "index.html"
    assert Path(viewer.group(1)).is_file()
    command = next(line for line in demo.printed.splitlines() if "--model agentic_scripted" in line)
    assert command.startswith("$ LMMS_AGENTIC_DATA=mini LMMS_AGENTIC_JUDGE_BASE_URL=http://127.0.0.1:")
    assert f"LMMS_AGENTIC_JUDGE_MODEL={JUDGE_MODEL}" in command and "--tasks agentx " in command
    results = demo.results()["results"]
    goal_acc = results["agentx"]["goal_acc,none"]
    assert isinstance(goal_acc, float) and math.isfinite(goal_acc) and 0.0 < goal_acc < 1.0
    assert f"agentx goal_acc with the scripted judge: {goal_acc:.3f}" in demo.printed
    assert results["agentx_text_answer"]["cov_goal,none"] < 1.0  # some judge replies are left unscored
    assert JUDGED_LABEL in demo.printed and "scripted loopback server" in demo.printed


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    with launched(screenshots(tmp_path_factory)) as opened:
        yield opened


def _failing(line: dict[str, Any]) -> float | None:
    """The line's goal_acc score, None when the judge left it unscored (only for lines below full marks)."""
    score = line["goal_acc"].get("score")
    return None if score is None else float(score)


def test_three_clicks_from_goal_acc_to_the_failing_verdict(demo: Demo, browser: Browser) -> None:
    expected = f"{demo.results()['results']['agentx']['goal_acc,none']:.3f}"
    failing = {item: _failing(line) for item, line in demo.goal_acc_lines().items()
               if line["goal_acc"].get("score") is None or line["goal_acc"]["score"] < 1.0}
    assert any(score is None for score in failing.values()) and any(score == 0.0 for score in failing.values())
    browser.open(demo.output / "viewer" / "index.html", "overview")
    row = browser.page.locator(f"#overview tbody tr[data-task=agentx][data-model='{JUDGED_LABEL}']")
    assert row.locator("td").nth(2).inner_text() == "goal_acc"
    assert row.locator("td.value").inner_text() == expected

    browser.follow(row.locator("td.value a"))  # 1: the samples that did not get full marks on goal_acc
    assert browser.page.inner_text("#count").startswith(f"showing 1–{len(failing)} of {len(failing)} ")
    ids = browser.texts("#samples tbody td:nth-child(3)")
    shown = browser.texts("#samples tbody td:nth-child(10)")
    assert dict(zip(ids, shown, strict=True)) == {
        item: "unscored" if score is None else f"{score:g}" for item, score in failing.items()}
    assert shown[0] == "0"  # the lowest score first
    browser.check("demo-goal-acc-failures")

    browser.follow(browser.page.locator("#samples tbody tr td:nth-child(3) a").first)  # 2: the first (a 0.0)
    entry = read_record(demo.goal_acc_lines()[ids[0]])["judge"]["goal_acc"]  # type: ignore[index]
    assert browser.page.locator("h1").inner_text() == f"agentx_text_answer · {ids[0]}"
    focus = browser.page.inner_text("#focus")
    assert focus.startswith("goal_acc: judge score 0.0 (scored)") and entry["raw_reply"] in focus

    browser.page.click("#jump")  # 3: the verdict's row among every metric's verdicts
    verdict = browser.page.locator("#verdict-focus td").all_inner_texts()
    assert verdict[:3] == ["goal_acc", "0.0", "scored"] and verdict[4] == entry["raw_reply"]
    assert verdict[5] == JUDGE_MODEL and "not a judgement" in verdict[4]
    assert browser.page.evaluate("(() => { const r = document.getElementById('verdict-focus')"
                                 ".getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()")
    browser.check("demo-failing-verdict")

"""The viewer in a real browser (headless Chromium from the distribution, driven by Playwright): built from small real
lmms-eval runs, its overview checked against the results files, filters applied, a sample of every benchmark, a
permutation question and an executed-tools episode opened, two runs compared, hostile replies shown as text, a
10,000-sample run opened in under 2 s. Any script error, console error, failed file or broken image fails the test.
Screenshots are kept under the test's tmp folder (or $VIEWER_SCREENSHOTS)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.report.run_files import open_run
from lmms_agentic.viewer.site import write_site

from .browser import CHROMIUM, NO_CHROMIUM, NO_PLAYWRIGHT, Browser, launched, screenshots
from .runs import HOSTILE, ViewerRuns, kept_or_made

if CHROMIUM is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)
pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT)
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> ViewerRuns:
    return kept_or_made(tmp_path_factory)


@pytest.fixture(scope="module")
def site(runs: ViewerRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_site([runs.scripted, runs.tools, runs.hostile], tmp_path_factory.mktemp("site") / "out",
                      progress=lambda message: None)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    with launched(screenshots(tmp_path_factory)) as opened:
        yield opened


def _expected(path: str, task: str, metric: str) -> str:
    results = open_run(Path(path)).results["results"][task]
    owner = benchmarks.benchmark_of_task(task)
    value = results[f"{metric},none"]
    if not isinstance(value, int | float) or value != value:
        return "n/a"
    return f"{value:.3f}" if owner is not None and owner.scale == "unit" else f"{value:.1f}"


def test_overview_numbers_are_the_results_files(site: Path, runs: ViewerRuns, browser: Browser) -> None:
    browser.open(site, "overview")
    paths = {run["label"]: run["path"] for run in browser.page.evaluate("window.VIEWER_DATA.site.runs")}
    rows = browser.page.evaluate("Array.from(document.querySelectorAll('#overview tbody tr')).map(r => "
                                 "Array.from(r.cells).map(c => c.textContent))")
    shown = {(model, task): (metric, value, n) for model, task, metric, value, _, n, *_ in rows}
    for folder in (runs.scripted, runs.tools, runs.hostile):
        label = next(label for label, path in paths.items() if Path(path) == folder)
        for task in open_run(folder).results["results"]:
            if benchmarks.benchmark_of_task(task) is None or (label, task) not in shown:
                continue
            metric, value, _ = shown[(label, task)]
            assert value == _expected(paths[label], task, metric), (label, task, metric)
    assert shown[(next(lb for lb, p in paths.items() if Path(p) == runs.scripted), "agentvqa")][0] == "accuracy"
    assert {task for _, task in shown} >= {"agentvqa", "agentvqa_random5", "robovista", "agentx", "agentx_tools"}
    assert any("judged" in row[6] for row in rows if row[1] == "agentx_tools")
    browser.check("overview")


def _filter(browser: Browser, name: str, value: str) -> None:
    browser.page.select_option(f"select[data-filter={name}]", value)


def test_filters_and_search(site: Path, browser: Browser) -> None:
    browser.open(site, "samples")
    total = browser.page.inner_text("#count")
    _filter(browser, "status", "wrong")
    assert set(browser.texts("#samples tbody td:nth-child(5)")) == {"wrong"}
    assert browser.page.inner_text("#count") != total
    _filter(browser, "status", "")
    _filter(browser, "tool_error", "true")
    assert set(browser.texts("#samples tbody td:nth-child(3)")) == {"4"}  # task 4 divides by zero
    _filter(browser, "tool_error", "")
    _filter(browser, "task", "agentvqa_random5")
    _filter(browser, "flipped", "true")
    tasks = browser.texts("#samples tbody td:nth-child(2)")
    assert tasks and all(task.startswith("agentvqa_") and task.endswith("_random5") for task in tasks)
    assert all("flipped" in flags for flags in browser.texts("#samples tbody td:nth-child(9)"))
    _filter(browser, "flipped", "")
    _filter(browser, "task", "")
    browser.page.fill("input[data-filter=q]", "roborefit_0001")
    ids = browser.texts("#samples tbody td:nth-child(3)")
    assert ids and all("roborefit_0001" in sample_id for sample_id in ids)
    browser.check("samples-filtered")


def _open_first(browser: Browser, site: Path, query: str) -> None:
    browser.open(site, f"samples?{query}")
    browser.follow(browser.page.locator("#samples tbody tr td:nth-child(3) a").first)


@pytest.mark.parametrize("task", ["agentvqa_robotics", "agentvqa_egocentric_videos", "robovista_domestic",
                                  "agentx_text_answer"])
def test_a_sample_of_each_benchmark(site: Path, browser: Browser, task: str) -> None:
    _open_first(browser, site, f"run=0&task={task}")
    assert browser.page.locator("h1").inner_text().startswith(task)
    assert browser.page.locator(".strip img").count() >= 1  # media rebuilt from the mini split
    assert browser.page.locator("pre.reply").count() == 1
    if task.endswith("videos"):  # the task's sampled frames, shown as frames
        assert "frame 1 of " in browser.page.inner_text(".strip")
    if task.startswith("agentx"):
        verdicts = browser.texts("#verdicts tbody tr")
        assert verdicts and all("scored" in row for row in verdicts)
    else:
        assert "rule" in browser.page.inner_text("main")
    browser.check(f"sample-{task}")


def test_every_order_of_a_permuted_question(site: Path, browser: Browser) -> None:
    _open_first(browser, site, "run=0&task=agentvqa_robotics_random5")
    header = browser.texts("#permutations thead th")
    assert header[1:] == [f"order {i}" for i in range(5)]
    assert "chosen, mapped back" in browser.page.inner_text("#permutations")
    browser.check("sample-permutations")


def test_an_executed_tools_episode(site: Path, browser: Browser) -> None:
    _open_first(browser, site, "run=1&task=agentx_tools_text_answer&q=8x")
    rounds = browser.texts("#rounds tbody tr")
    assert len(rounds) == 4 and "OCR" in rounds[0] and "46" in rounds[1] and "local" in rounds[1]
    assert "DrawBoundingBox" in rounds[2] and "image_2: " in rounds[2]  # the returned image's caption
    returned = browser.page.evaluate(  # the thumbnail the sample log kept, written under media/ and loaded
        "Array.from(document.querySelectorAll('#rounds tbody tr')).map(r => Array.from(r.querySelectorAll('img'))"
        ".map(i => [new URL(i.src).pathname.split('/').slice(-2).join('/'), i.complete, i.naturalWidth]))")
    assert [len(images) for images in returned] == [0, 0, 1, 0]
    (source, complete, width), = returned[2]
    assert source.startswith("media/") and source.endswith("_t.jpg") and complete and width > 0
    browser.check("sample-tools")
    _open_first(browser, site, "run=1&task=agentx_tools_text_answer&tool_error=true")
    assert all("error" in row for row in browser.texts("#rounds tbody tr"))
    browser.check("sample-tool-error")


def test_two_runs_side_by_side(site: Path, browser: Browser) -> None:
    browser.open(site, "overview")
    browser.page.locator("a[href^='#compare/0/2']").click()
    browser.page.wait_for_selector("#compare")
    rows = browser.page.locator("#compare tbody tr")
    assert rows.count() > 0
    rows.first.locator("a").last.click()
    browser.wait("document.querySelector('pre.reply') !== null")
    browser.check("compare")


def test_hostile_replies_stay_text(site: Path, browser: Browser) -> None:
    _open_first(browser, site, "run=2&task=agentvqa_robotics")
    assert browser.page.inner_text("pre.reply") == HOSTILE
    assert browser.page.locator("main img:not(.strip img)").count() == 0
    assert browser.page.locator("main script").count() == 0
    browser.check("hostile-mcq")
    _open_first(browser, site, "run=1&task=agentx_tools_text_answer&tool_error=true")
    assert '<img src=x onerror=\\"window.PWNED = 4' in browser.page.inner_text("#rounds")  # the reply, as text
    browser.check("hostile-tools")
    for data in (site.parent / "data").glob("*.js"):
        assert "</script" not in data.read_text(encoding="utf-8").lower(), data


def _large_run(source: Path, target: Path, n: int) -> Path:
    """A run of ``n`` samples: the hostile run's results file and its AgentVQA robotics lines, repeated with new
    ids (the viewer reads them like any lmms-eval output)."""
    results = next(source.rglob("*_results.json"))
    lines = [json.loads(text) for text in next(source.rglob("*_samples_agentvqa_robotics.jsonl"))
             .read_text(encoding="utf-8").splitlines()]
    target.mkdir(parents=True)
    shutil.copyfile(results, target / results.name)
    stamp = results.name.removesuffix("_results.json")
    with (target / f"{stamp}_samples_agentvqa_robotics.jsonl").open("w", encoding="utf-8") as out:
        for number in range(n):
            line = json.loads(json.dumps(lines[number % len(lines)]))
            line["doc_id"] = number
            line["accuracy"]["id"] = f"{line['accuracy']['id']}-{number}"
            out.write(json.dumps(line) + "\n")
    return target


def test_a_10000_sample_run_opens_in_under_two_seconds(runs: ViewerRuns, browser: Browser,
                                                       tmp_path: Path) -> None:
    index = write_site([_large_run(runs.hostile, tmp_path / "large", 10_000)], tmp_path / "site", media=False,
                       progress=lambda message: None)
    for route, ready in (("overview", "#overview"), ("samples", "#count")):
        started = time.monotonic()
        browser.open(index, route)
        browser.page.wait_for_selector(ready)
        assert time.monotonic() - started < 2.0, route
    assert "of 10000 samples" in browser.page.inner_text("#count")
    assert browser.page.locator("#samples tbody tr").count() == 50  # paged
    browser.check("large-run")
    html = [path for path in index.parent.rglob("*") if path.suffix in (".html", ".js")]
    assert not any("base64" in path.read_text(encoding="utf-8") for path in html)
    assert (index.parent / "data" / "site.js").stat().st_size < 50_000


def test_an_lm_eval_run(browser: Browser, tmp_path: Path) -> None:
    """lm-eval's layout (``results_<date>.json``, samples with the document): the same overview and pages."""
    pytest.importorskip("lm_eval", reason="lm-eval not installed (pip install -e '.[dev]')")
    from ..lmeval import loopback
    from ..lmeval.conftest import _book, _env, _run, lmeval_tasks_dir

    with loopback.judge_server() as judge:
        run = _run("lm-eval", _book(), tmp_path / "lm-eval", _env(judge.base_url, LMMS_AGENTIC_DATA="mini"),
                   ["agentvqa", "agentx"], lmeval_tasks_dir(), isolated=False)
    run.assert_ok(["agentvqa", "agentx"])
    index = write_site([tmp_path / "lm-eval"], tmp_path / "site", progress=lambda message: None)
    browser.open(index, "overview")
    rows = browser.page.evaluate("Array.from(document.querySelectorAll('#overview tbody tr')).map(r => "
                                 "Array.from(r.cells).map(c => c.textContent))")
    path = browser.page.evaluate("window.VIEWER_DATA.site.runs[0].path")
    assert browser.page.evaluate("window.VIEWER_DATA.site.runs[0].harness") == "lm-eval"
    assert {row[1] for row in rows} == {"agentvqa", "agentx"}
    for _, task, metric, value, *_ in rows:
        assert value == _expected(path, task, metric), task
    browser.check("lm-eval-overview")
    _open_first(browser, index, "task=agentvqa_robotics")
    assert browser.page.locator(".strip img").count() >= 1  # media rebuilt for an lm-eval sample too
    assert "Options:" in browser.page.inner_text(".message")  # the prompt as the task rendered it
    browser.check("lm-eval-sample")

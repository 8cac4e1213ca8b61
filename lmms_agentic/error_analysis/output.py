"""What the error analysis writes: assignments CSV, per-domain distributions with 95% intervals, a figure, the
manual-verification export and the markdown summary.

Distributions: per variant and domain (plus ``all`` when every domain shares the taxonomy), the share of each mode
among the *labelled* predictions (judged, or ``correct`` when every prediction is analysed); unscored judge calls and
skipped predictions are left out of the denominator and counted beside it (never guessed).  Every labelled item
weighs the same, as in the papers' sample shares.  Intervals are Wilson score intervals (95%).  Modes with a group
(RoboVista: perception / reasoning) also get ``group:<name>`` rows.

The figure follows AgentVQA's Figure 8: one panel per domain, a bar per mode (share, 95% whisker), the paper's share
as a diamond where the benchmark declares one.
"""

from __future__ import annotations

import csv
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from lmms_agentic.judges.error_modes import ErrorModes, Mode

from .judging import Assignment, one_line

Z95 = 1.959963984540054
ALL = "all"
ASSIGNMENT_COLUMNS = ("variant", "task", "benchmark", "id", "domain", "source", "answer", "pred", "correct",
                      "status", "mode", "mode_name", "group", "reason", "n_images", "judge_model", "template",
                      "request_key", "cached")
VERIFY_COLUMNS = ("variant", "task", "id", "domain", "source", "question", "options", "answer", "pred",
                  "reply_excerpt", "media", "allowed_modes", "judge_mode", "judge_reason", "verified_mode", "notes")


def wilson(count: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of count/n, in percent; (NaN, NaN) for n = 0."""
    if n <= 0:
        return math.nan, math.nan
    p = count / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)


@dataclass(frozen=True)
class Share:
    variant: str
    domain: str
    mode: str
    """A mode key, or ``group:<name>``."""
    name: str
    count: int
    n: int
    paper: float | None

    @property
    def share(self) -> float:
        return 100 * self.count / self.n if self.n else math.nan

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.count, self.n)


def labelled(assignments: Sequence[Assignment]) -> list[Assignment]:
    return [a for a in assignments if a.mode is not None]


def distribution(spec: ErrorModes, variant: str, assignments: Sequence[Assignment]) -> list[Share]:
    """Shares of every mode (and mode group) per domain of one variant."""
    mine = labelled([a for a in assignments if a.item.variant == variant])
    domains = sorted({a.item.domain for a in mine})
    if spec.shared_taxonomy and len(domains) > 1:
        domains.insert(0, ALL)
    rows = []
    for domain in domains:
        members = [a for a in mine if domain in (ALL, a.item.domain)]
        modes = spec.all_modes(domain if domain != ALL else members[0].item.domain)
        keys = [a.mode.key for a in members if a.mode is not None]
        for mode in modes:
            rows.append(Share(variant, domain, mode.key, mode.name, keys.count(mode.key), len(members),
                              spec.reference.get((domain, mode.key))))
        groups = sorted({m.group for m in modes if m.group})
        for group in groups:
            count = sum(1 for a in members if a.mode is not None and a.mode.group == group)
            rows.append(Share(variant, domain, f"group:{group}", group, count, len(members),
                              spec.reference.get((domain, f"group:{group}"))))
    return rows


def write_assignments(path: Path, assignments: Sequence[Assignment]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(ASSIGNMENT_COLUMNS)
        for a in assignments:
            r = a.result
            writer.writerow([
                a.item.variant, a.item.task, a.item.record.get("benchmark", ""), a.item.id, a.item.domain,
                a.item.source, a.item.record.get("answer", ""), a.item.pred or "", a.item.correct, a.status,
                a.mode.key if a.mode else "", a.mode.name if a.mode else "", a.mode.group if a.mode else "",
                a.reason, a.n_images, (r.judge_model or r.judge_model_requested or "") if r else "",
                f"{r.template_id}@{r.template_version}" if r else "", r.request_key or "" if r else "",
                r.cached if r else "",
            ])
    return path


def _pct(value: float) -> str:
    return "n/a" if value != value else f"{value:.1f}"


def write_distribution(path: Path, shares: Sequence[Share]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(("variant", "domain", "mode", "name", "count", "n", "share", "ci_low", "ci_high", "paper"))
        for s in shares:
            low, high = s.ci
            writer.writerow((s.variant, s.domain, s.mode, s.name, s.count, s.n, _pct(s.share), _pct(low),
                             _pct(high), "" if s.paper is None else s.paper))
    return path


def coverage_line(assignments: Sequence[Assignment]) -> str:
    """``n labelled of m analysed; unscored: ...; skipped: ...``."""
    statuses: dict[str, int] = {}
    for a in assignments:
        statuses[a.status] = statuses.get(a.status, 0) + 1
    judged, correct = statuses.pop("judged", 0), statuses.pop("correct", 0)
    extra = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    shown = f"{judged} judged" + (f" + {correct} correct (not judged)" if correct else "")
    return f"{shown} of {len(assignments)} predictions" + (f"; not labelled: {extra}" if extra else "")


def markdown_table(shares: Sequence[Share]) -> list[str]:
    lines = ["| domain | mode | count / n | share % [95% CI] | paper % |", "|---|---|---:|---:|---:|"]
    for s in shares:
        low, high = s.ci
        paper = "" if s.paper is None else f"{s.paper:g}"
        name = f"*{s.name}* (group)" if s.mode.startswith("group:") else s.name
        lines.append(f"| {s.domain} | {name} | {s.count} / {s.n} | {_pct(s.share)} [{_pct(low)}, {_pct(high)}] "
                     f"| {paper} |")
    return lines


def plot_modes(shares: Sequence[Share], target: Path, title: str) -> Path:
    """One panel per domain, a horizontal bar per mode with its 95% interval; the paper's share as a diamond."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    domains = list(dict.fromkeys(s.domain for s in shares))
    ncols = min(3, max(1, len(domains)))
    nrows = math.ceil(len(domains) / ncols)
    height = max(len([s for s in shares if s.domain == d]) for d in domains) * 0.32 + 1.0
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, height * nrows), squeeze=False)
    for ax, domain in zip(axes.flat, domains, strict=False):
        rows = [s for s in shares if s.domain == domain and not s.mode.startswith("group:")]
        ys = list(range(len(rows)))[::-1]
        values = [0.0 if s.share != s.share else s.share for s in rows]
        low = [max(0.0, v - s.ci[0]) if s.n else 0.0 for v, s in zip(values, rows, strict=True)]
        high = [max(0.0, s.ci[1] - v) if s.n else 0.0 for v, s in zip(values, rows, strict=True)]
        ax.barh(ys, values, xerr=[low, high], color="#4C72B0", ecolor="#333333", capsize=2, height=0.6)
        for y, s in zip(ys, rows, strict=True):
            if s.paper is not None:
                ax.plot(s.paper, y, marker="D", color="#C44E52", markersize=5, linestyle="none")
        ax.set_yticks(ys)
        ax.set_yticklabels([s.name for s in rows], fontsize=7)
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of analysed predictions (%)", fontsize=7)
        n = rows[0].n if rows else 0
        ax.set_title(f"{domain.replace('_', ' ')} (n={n})", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    for ax in list(axes.flat)[len(domains):]:
        ax.axis("off")
    fig.suptitle(title + ("   (◆ paper)" if any(s.paper is not None for s in shares) else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target


def hand_verified_rows(path: Path) -> int:
    """Rows of an existing ``verify.csv`` whose ``verified_mode`` someone filled (-1: unreadable, so kept too)."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return sum(bool((row.get("verified_mode") or "").strip()) for row in csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error):
        return -1


def verification_target(folder: Path) -> Path:
    """``verify.csv``, unless one there holds hand-filled rows: then the first free ``verify_<k>.csv`` beside it
    (a user's verification is never overwritten)."""
    target = folder / "verify.csv"
    if not target.exists() or hand_verified_rows(target) == 0:
        return target
    k = 2
    while (folder / f"verify_{k}.csv").exists():
        k += 1
    return folder / f"verify_{k}.csv"


def export_verification(folder: Path, assignments: Sequence[Assignment], n: int, seed: int,
                        specs: dict[str, ErrorModes],
                        images_for: Callable[[Assignment], Sequence[Image.Image]] | None = None) -> Path:
    """A seeded random subset of ``n`` judged assignments as ``verify.csv`` (fill ``verified_mode``), with each
    item's visual input under ``verify_media/`` when ``images_for`` is given."""
    judged = sorted((a for a in assignments if a.status == "judged"), key=lambda a: (a.item.variant, a.item.task,
                                                                                     a.item.id))
    chosen = random.Random(seed).sample(judged, min(n, len(judged)))
    target = verification_target(folder)
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(VERIFY_COLUMNS)
        for a in chosen:
            media: list[str] = []
            if images_for is not None:
                for k, image in enumerate(images_for(a)):
                    relative = Path("verify_media") / f"{a.item.variant}__{a.item.id}__{k}.jpg"
                    (folder / relative).parent.mkdir(parents=True, exist_ok=True)
                    image.convert("RGB").save(folder / relative, quality=90)
                    media.append(relative.as_posix())
            modes: Sequence[Mode] = specs[a.item.benchmark].modes_for(a.item.domain)
            writer.writerow([
                a.item.variant, a.item.task, a.item.id, a.item.domain, a.item.source, a.question, a.options,
                a.item.record.get("answer", ""), a.item.pred or "", one_line(a.item.reply[-600:], 600),
                " ".join(media), " | ".join(m.key for m in modes), a.mode.key if a.mode else "", a.reason, "", "",
            ])
    return target

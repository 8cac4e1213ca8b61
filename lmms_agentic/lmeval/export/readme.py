"""The README of a core-based export, in the harness's task README template (at most 150 lines).

lm-eval's `templates/new_yaml_task/README.md` (Paper, Citation, Groups/Tags/Tasks, Checklist, Changelog), which
also covers what lmms-eval task READMEs hold, plus how to run it, the published numbers of the paper's main table
(the headline metric's rows of the benchmark's reference table) and the source and licence of every verbatim
prompt, parser and table (the benchmark's `upstream.ORIGIN`). Task descriptions are the leading comment lines of
each source YAML, without the sentences that are about the exporting project. Nothing in it names that project.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.reference import load_reference, referenced_benchmarks
from lmms_agentic.adapters.upstream import hooks_of
from lmms_agentic.lmeval.export.layout import ExportedTask

MAX_LINES = 150
MAIN_TABLE_ROWS = 16
PUBLISHED_SOURCES = ("paper", "README table")
"""Where the published numbers come from, in order of preference: the paper's tables, else the authors' README."""
PROJECT = re.compile(r"lmms[_-]agentic|python -m |reference\.csv|benchmark\.json", re.IGNORECASE)
COMMANDS = {
    "lmms-eval": ("python -m lmms_eval --model openai --model_args model_version=gpt-4o-2024-08-06 "
                  "--tasks {task} --log_samples --output_path runs/"),
    "lm-eval": ("lm_eval --model local-chat-completions --model_args model=MODEL,base_url=URL/v1/chat/completions,"
                "max_images=64 --tasks {task} --apply_chat_template --log_samples --output_path runs/"),
}

NOTES = {
    "lmms-eval": "The replies are read raw (`reasoning_tags: none`): the answer parsers handle `<think>` blocks.",
    "lm-eval": ("Pass `--apply_chat_template` (the system prompt is the task's `description`) and, for API models, "
                "`max_images=64` (one image per request by default); `pillow` must be installed."),
}




class ReadmeError(ValueError):
    """The README would break the template's limits or mention the exporting project."""


def description(task: ExportedTask) -> str:
    """The source YAML's leading comment, as sentences, without those about the exporting project."""
    lines = []
    for line in task.source.path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    text = " ".join(lines).strip()
    sentences = re.split(r"(?<=[.;])\s+", text)
    kept = " ".join(s for s in sentences if s and not PROJECT.search(s)).rstrip(";")
    if kept.count("(") > kept.count(")"):  # a parenthesis whose end was in a dropped sentence: drop its start too
        kept = kept[: kept.rfind("(")].rstrip(" ;,")
    return kept + "." if kept and kept[-1] not in ".)]" else kept


def _member(task: ExportedTask, groups: Sequence[ExportedTask]) -> str:
    group = next((g.source.name for g in groups if task.source.name in (g.config.get("task") or [])), "")
    if not group:
        return "see its YAML"
    return f"subtask of `{group}`: {task.source.name.removeprefix(group + '_').replace('_', ' ')}"


def published(benchmark: Benchmark) -> list[str]:
    """The paper's main-table rows of the headline metric, as markdown lines."""
    if benchmark.name not in referenced_benchmarks():
        return ["None recorded."]
    headline = [r for r in load_reference(benchmark.name) if r.metric == benchmark.headline_metric]
    rows = next(([r for r in headline if r.source.startswith(kind)] for kind in PUBLISHED_SOURCES
                 if any(r.source.startswith(kind) for r in headline)), [])
    if not rows:
        return ["None recorded."]
    first = rows[0].source
    rows = [r for r in rows if r.source == first][:MAIN_TABLE_ROWS]
    scale = "%" if benchmark.scale == "percent" else "0-1"
    return [f"`{benchmark.headline_metric}` ({scale}), {first}, protocol `{rows[0].protocol}`:", "",
            "| model | value |", "|---|---:|", *(f"| {r.model} | {r.value_text} |" for r in rows)]


def readme(benchmark: Benchmark, harness: str, tasks: Sequence[ExportedTask]) -> str:
    own = hooks_of(benchmark)
    origin = own.ORIGIN
    groups = [t for t in tasks if t.source.is_group]
    leaves = [t for t in tasks if not t.source.is_group]
    main = (groups or leaves)[0].source.name
    hub = benchmark.source.hub_id
    revision = benchmark.source.revision or "not pinned yet (`main`)"
    verbatim = [f"* {what}: {where}; licence: {licence}." for what, where, licence in origin.verbatim]
    lines = [
        f"# {benchmark.title}", "", "## Paper", "", f"Title: `{origin.paper_title or benchmark.paper}`", "",
        f"Homepage: https://huggingface.co/datasets/{hub} (revision: {revision})", "",
        "### Citation", "", f"From {origin.bibtex_source}:", "", "```bibtex", origin.bibtex, "```", "",
        "### Groups, Tags, and Tasks", "", "#### Groups", "",
        *([f"* `{t.source.name}`: {description(t) or 'see the group YAML'}" for t in groups] or ["* none"]),
        "", "#### Tags", "", "* none", "", "#### Tasks", "",
        *(f"* `{t.source.name}`: {description(t) or _member(t, groups)}" for t in leaves),
        "", "### Running", "", "```bash", COMMANDS[harness].format(task=main), "```", "",
        NOTES[harness], *_benchmark_notes(own.RUNNING_NOTES, harness),
        "", "### Published numbers", "", *published(benchmark), "",
        "### Licences of verbatim material", "", *verbatim, "",
        "The task code in this folder is contributed under the harness's licence (MIT).", "",
        "### Checklist", "", "For adding novel benchmarks/datasets to the library:", "",
        "* [x] Is the task an existing benchmark in the literature?",
        "  * [x] Have you referenced the original paper that introduced the task?",
        "  * [ ] If yes, does the original paper provide a reference implementation? If so, have you checked "
        "against the reference implementation and documented how to run such a test? "
        f"({origin.reference_check})", "",
        "If other tasks on this dataset are already supported:", "",
        f"* [x] Is the \"Main\" variant of this task clearly denoted? (`{main}`)",
        "* [x] Have you provided a short sentence in a README on what each new variant adds / evaluates?",
        "* [x] Have you noted which, if any, published evaluation setups are matched by this variant?", "",
        "### Changelog", "",
        f"* v{_version(tasks)}: first version in this harness.", "",
    ]
    text = "\n".join(lines)
    if len(lines) > MAX_LINES:
        raise ReadmeError(f"{benchmark.name}: the README has {len(lines)} lines (at most {MAX_LINES})")
    left = re.search(r"lmms[_-]agentic", text, re.IGNORECASE)
    if left:
        raise ReadmeError(f"{benchmark.name}: the README mentions the exporting project: {text[left.start():][:60]!r}")
    return text


def _benchmark_notes(notes: Mapping[str, str], harness: str) -> list[str]:
    """The benchmark's own lines of the Running section (those for both harnesses, then this harness's)."""
    return ["", *(notes[key] for key in ("both", harness) if key in notes)] if notes else []


def _version(tasks: Sequence[ExportedTask]) -> str:
    for task in tasks:
        version = (task.config.get("metadata") or {}).get("version")
        if version is not None:
            return str(version)
    return "1.0"

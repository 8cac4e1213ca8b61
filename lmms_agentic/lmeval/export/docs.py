"""The README of an exported task folder (the harness's task README template) and the pull-request notes.

README: lm-eval's template (`templates/new_yaml_task/README.md`: Paper, Citation, Groups/Tags/Tasks, Checklist,
Changelog), which also covers what lmms-eval task READMEs hold. Task descriptions are the first comment line of
each source YAML; the protocol, assumptions, validity checks and changelog are the sections of the benchmark's own
README (`tasks/<b>/README.md`), copied; the published numbers are the headline-metric rows of `reference.csv`
(`adapters.reference`). `pr_notes` lists, for every benchmark exported into a folder, where its files go, the lines
the harness's task index needs, the validation commands, and what the pull request still needs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from lmms_agentic.adapters import benchmarks, reference
from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.lmeval.export.layout import ExportedTask
from lmms_agentic.lmeval.export.upstream import is_thin

SKIPPED_SECTIONS = ("Tasks", "Tasks and variants")
COMMANDS = {
    "lmms-eval": ("python -m lmms_eval --model qwen2_5_vl --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct "
                  "--tasks {task} --limit 8 --log_samples --output_path runs/{task}"),
    "lm-eval": ("lm_eval --model hf-multimodal --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_images=64 "
                "--tasks {task} --apply_chat_template --limit 8 --log_samples --output_path runs/{task}"),
}
API_COMMANDS = {
    "lmms-eval": "python -m lmms_eval --model openai --model_args model_version=gpt-4o-2024-08-06 --tasks {task}",
    "lm-eval": ("lm_eval --model local-chat-completions --model_args model=MODEL,base_url=URL/v1/chat/completions,"
                "max_images=64 --tasks {task} --apply_chat_template"),
}
TEST_DIRS = {"lmms-eval": "test/eval", "lm-eval": "tests"}
TASK_DIRS = {"lmms-eval": "lmms_eval/tasks", "lm-eval": "lm_eval/tasks"}


def _description(task: ExportedTask) -> str:
    for line in task.source.path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
        if line.strip():
            break
    return ""


def _sections(benchmark: Benchmark) -> str:
    """The benchmark README's sections after the first, except the task table (this README lists the tasks)."""
    text = (benchmark.folder / "README.md").read_text(encoding="utf-8")
    parts = re.split(r"(?m)^## ", text)[1:]
    kept = [f"## {part.rstrip()}\n" for part in parts if part.splitlines()[0].strip() not in SKIPPED_SECTIONS]
    return "\n".join(kept)


def _intro(benchmark: Benchmark) -> str:
    text = (benchmark.folder / "README.md").read_text(encoding="utf-8")
    first = re.split(r"(?m)^## ", text)[0]
    return "\n".join(line for line in first.splitlines()[1:]).strip()


def published(benchmark: Benchmark) -> str:
    """The headline metric's published rows as a markdown table (empty when the benchmark has none)."""
    if benchmark.name not in reference.referenced_benchmarks():
        return ""
    rows = [r for r in reference.load_reference(benchmark.name) if r.metric == benchmark.headline_metric]
    if not rows:
        return ""
    lines = ["| model | protocol | variant | judge | value | n | source |", "|---|---|---|---|---:|---:|---|"]
    lines += [f"| {r.model} | {r.protocol} | {r.variant} | {r.judge} | {r.value_text} | {r.n or ''} | {r.source} |"
              for r in rows]
    scale = "percent" if benchmark.scale == "percent" else "0-1"
    return (f"Published `{benchmark.headline_metric}` ({scale}), as printed in the paper or the authors' README "
            f"(lmms-agentic `tasks/{benchmark.name}/reference.csv`, which also has every other metric):\n\n"
            + "\n".join(lines) + "\n")


def _member_of(task: ExportedTask, groups: Sequence[ExportedTask]) -> str:
    group = next((g.source.name for g in groups if task.source.name in (g.config.get("task") or [])), "")
    if not group:
        return "see the task YAML"
    return f"subtask of `{group}`: {task.source.name.removeprefix(group + '_').replace('_', ' ')}"


def readme(benchmark: Benchmark, harness: str, tasks: Sequence[ExportedTask]) -> str:
    groups = [t for t in tasks if t.source.is_group]
    leaves = [t for t in tasks if not t.source.is_group]
    first = (groups or leaves)[0].source.name
    group_lines = "\n".join(f"* `{t.source.name}`: {_description(t) or 'see the group YAML'}" for t in groups)
    task_lines = "\n".join(f"* `{t.source.name}`: {_description(t) or _member_of(t, groups)}" for t in leaves)
    hub = benchmark.source.hub_id
    harness_note = ("Pass `--apply_chat_template` (the system prompt is a system message) and, for API models, "
                    "`max_images=64` (lm-eval sends one image per request by default). Videos are given as sampled "
                    "frames (lm-eval has no video input)." if harness == "lm-eval" else
                    "Backends with native video input (`qwen2_5_vl`, `qwen3_vl`) receive the video file; the "
                    "others receive the sampled frames.")
    return f"""# {benchmark.title}

## Paper

Title: `{benchmark.paper}`

{_intro(benchmark)}

Homepage: https://huggingface.co/datasets/{hub}

### Citation

{benchmark.paper}. The BibTeX entry is added with the pull request (see `UPSTREAM_PR.md`).

### Groups, Tags, and Tasks

#### Groups

{group_lines or '* none'}

#### Tags

* none

#### Tasks

{task_lines}

### Running

```bash
{COMMANDS[harness].format(task=first)}
{API_COMMANDS[harness].format(task=first)}
```

{harness_note} Data: the tasks load `{hub}` from the Hugging Face Hub (offline: a Hugging Face cache that holds it,
with `HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1`).

### Published numbers

{published(benchmark) or 'None recorded.'}
{_sections(benchmark)}
### Checklist

For adding novel benchmarks/datasets to the library:

* [x] Is the task an existing benchmark in the literature?
  * [x] Have you referenced the original paper that introduced the task?
  * [ ] If yes, does the original paper provide a reference implementation? If so, have you checked against the
    reference implementation and documented how to run such a test? (The prompts, parsers and aggregation were
    checked against the reference code in lmms-agentic's tests, see the validity checks above; a full run that
    reproduces a published number on a public model is still to be done.)

If other tasks on this dataset are already supported:

* [x] Is the "Main" variant of this task clearly denoted? (`{first}`)
* [x] Have you provided a short sentence in a README on what each new variant adds / evaluates?
* [x] Have you noted which, if any, published evaluation setups are matched by this variant?

### Changelog

* Exported from lmms-agentic (`python -m lmms_agentic export --harness {harness} --benchmark {benchmark.name}`);
  task versions as in `metadata.version`, history in the changelog section above.
"""


def _index_line(benchmark: Benchmark, harness: str, description: str) -> str:
    if harness == "lmms-eval":
        return f"- [{benchmark.title}](https://huggingface.co/datasets/{benchmark.source.hub_id}) ({benchmark.name})"
    return f"| [{benchmark.name}]({benchmark.name}/README.md) | {description} | Image, Text |"


DEPENDENCIES = {
    "lmms-eval": "only what lmms-eval installs (`datasets`, `pillow`); nothing to add to its extras.",
    "lm-eval": ("`datasets` (lm-eval installs it) and `pillow`, which lm-eval installs only with its `dev` extra\n"
                "(`pip install lm-eval[dev]`; its multimodal model backends import it too); no other package."),
}


BENCHMARK_DEPENDENCIES = {
    ("agentvqa", "lmms-eval"): " Video frames are decoded with PyAV (`av`, which lmms-eval installs).",
    ("agentvqa", "lm-eval"): (" Video frames are decoded with PyAV (`av`), which no lm-eval extra installs: the "
                              "pull request\nadds an extra to `pyproject.toml` (`agentvqa = [\"av\", \"pillow\"]`, as "
                              "task-specific extras such as `ifeval` do)\nand the README names it "
                              "(`pip install lm-eval[agentvqa]`)."),
}
VIDEO_FILES_PINNED = ("agentvqa",)
"""Exports whose utils.py reads media files from the dataset repository at its own `REVISION` constant."""
BENCHMARK_STEPS = {
    "agentvqa": ("- the release schema: the field map in `records.py` (`FIELD_MAP`) was written before the dataset "
                 "card could be read;\n  check it against the card's features and adjust it;\n"
                 "- the BibTeX entry: complete the authors' full names, the year and the arXiv identifier;\n"),
}


def _thin_notes(benchmark: Benchmark, harness: str, where: str) -> str:
    """The notes of a core-based export (nothing in them names the exporting project)."""
    name = benchmark.name
    revision = (f"pinned to `{benchmark.source.revision}`" if benchmark.source.revision else
                "`main` in `_default_template_yaml` (a TODO comment marks it): replace it with the dataset's "
                f"current commit (`huggingface-cli repo info {benchmark.source.hub_id} --repo-type dataset`)"
                + (", and `REVISION` in `utils.py` (the video files) with it" if name in VIDEO_FILES_PINNED else ""))
    steps = BENCHMARK_STEPS.get(name, "")
    return f"""## {benchmark.title} (`{name}`)

Files: `{TASK_DIRS[harness]}/{name}/` and `{TEST_DIRS[harness]}/test_{name}.py`, at the same paths in the
{harness} repository. Line for {where}:

    {_index_line(benchmark, harness, benchmark.paper)}

Dependencies: {DEPENDENCIES[harness]}{BENCHMARK_DEPENDENCIES.get((name, harness), "")}

Checks, in a checkout of {harness} with these files in place:

    pre-commit run --files {TASK_DIRS[harness]}/{name}/*.py {TEST_DIRS[harness]}/test_{name}.py
    python -m pytest {TEST_DIRS[harness]}/test_{name}.py
    {COMMANDS[harness].format(task=name)}

Still needed before opening the pull request:

- dataset access: `{benchmark.source.hub_id}` must be reachable (`huggingface-cli login` and accept its terms if it
  is gated); the revision is {revision};
- a full run on a public model (drop `--limit 8` above) whose headline number is within the published margin
  (README "Published numbers"), attached to the pull request with its `results.json`;
{steps}- permission for the verbatim prompts and parsers whose source repository states no licence (README
  "Licences of verbatim material"), and the contributor agreement if the harness's CLA bot asks for one.
"""


def pr_notes(out_dir: Path, harness: str) -> str:
    """UPSTREAM_PR.md for every benchmark exported for `harness` under `out_dir`."""
    exported = sorted(p.name for p in (out_dir / TASK_DIRS[harness]).iterdir() if p.is_dir())
    where = ("`docs/advanced/current_tasks.md` (a new section, e.g. \"Agentic Tasks\")" if harness == "lmms-eval"
             else "the \"Multimodal Tasks\" table of `lm_eval/tasks/README.md`")
    blocks = []
    for name in exported:
        benchmark = benchmarks.get(name)
        if is_thin(harness, name):
            blocks.append(_thin_notes(benchmark, harness, where))
            continue
        schema = "; the release schema is still an assumption, see the README" if benchmark.schema_assumed else ""
        judge = ", with a judge endpoint for the judged metrics" if benchmark.judged else ""
        blocks.append(f"""## {benchmark.title} (`{name}`)

Files: `{TASK_DIRS[harness]}/{name}/` and `{TEST_DIRS[harness]}/test_{name}.py`, at the same paths in the
{harness} repository. Line for {where}:

    {_index_line(benchmark, harness, benchmark.paper)}

Validation run for the pull request (`--limit 8`, as reviewers ask), then a full run on a public model:

    {COMMANDS[harness].format(task=name)}
    pytest {TEST_DIRS[harness]}/test_{name}.py

Still needed before opening the pull request:

- dataset access: the run above must reach `{benchmark.source.hub_id}` on the Hub (accept its terms if gated) and the
  revision should be pinned (`dataset_kwargs: {{revision: <commit>}}`; lmms-agentic's `benchmark.json` has
  `"revision": "{benchmark.source.revision or ''}"`){schema};
- results on a public model: a full run whose headline number is within the published margin (README "Published
  numbers"){judge};
- the BibTeX entry (README "Citation") and the contributor agreement the harness's CLA bot asks for.
""")
    hooks = ("pre-commit run --files <the files above>   # black -l 240 and isort --profile black; already applied"
             if harness == "lmms-eval" else
             "pre-commit run --files <the files above>   # ruff check --fix and ruff format; already applied")
    return f"# Upstream pull request for {harness}\n\n{hooks}\n\n" + "\n".join(blocks)

"""The pull-request notes of an export (`UPSTREAM_PR.md`): for every benchmark exported into a folder, where its
files go, the line the harness's task index needs, the dependencies, the validation commands, and what the pull
request still needs (nothing in them names the exporting project).
"""

from __future__ import annotations

from pathlib import Path

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.upstream import hooks_of

COMMANDS = {
    "lmms-eval": ("python -m lmms_eval --model qwen2_5_vl --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct "
                  "--tasks {task} --limit 8 --log_samples --output_path runs/{task}"),
    "lm-eval": ("lm_eval --model hf-multimodal --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_images=64 "
                "--tasks {task} --apply_chat_template --limit 8 --log_samples --output_path runs/{task}"),
}
TEST_DIRS = {"lmms-eval": "test/eval", "lm-eval": "tests"}
TASK_DIRS = {"lmms-eval": "lmms_eval/tasks", "lm-eval": "lm_eval/tasks"}


def _index_line(benchmark: Benchmark, harness: str, description: str) -> str:
    if harness == "lmms-eval":
        return f"- [{benchmark.title}](https://huggingface.co/datasets/{benchmark.source.hub_id}) ({benchmark.name})"
    return f"| [{benchmark.name}]({benchmark.name}/README.md) | {description} | Image, Text |"


DEPENDENCIES = {
    "lmms-eval": "only what lmms-eval installs (`datasets`, `pillow`); nothing to add to its extras.",
    "lm-eval": ("`datasets` (lm-eval installs it) and `pillow`, which lm-eval installs only with its `dev` extra\n"
                "(`pip install lm-eval[dev]`; its multimodal model backends import it too); no other package."),
}


def _thin_notes(benchmark: Benchmark, harness: str, where: str) -> str:
    """The notes of a core-based export (nothing in them names the exporting project)."""
    name = benchmark.name
    own = hooks_of(benchmark)
    dependencies = f" {own.DEPENDENCY_NOTES[harness]}" if harness in own.DEPENDENCY_NOTES else ""
    revision = (f"pinned to `{benchmark.source.revision}`" if benchmark.source.revision else
                "`main` in `_default_template_yaml` (a TODO comment marks it): replace it with the dataset's "
                f"current commit (`hf datasets info {benchmark.source.hub_id} --expand sha`)"
                + (f", and the revision in `utils.py` (`HOOKS`, which reads {own.MEDIA_AT_REVISION} at it) with it"
                   if own.MEDIA_AT_REVISION else ""))
    steps = own.PR_STEPS
    return f"""## {benchmark.title} (`{name}`)

Files: `{TASK_DIRS[harness]}/{name}/` and `{TEST_DIRS[harness]}/test_{name}.py`, at the same paths in the
{harness} repository. Line for {where}:

    {_index_line(benchmark, harness, benchmark.paper)}

Dependencies: {DEPENDENCIES[harness]}{dependencies}

Checks, in a checkout of {harness} with these files in place:

    pre-commit run --files {TASK_DIRS[harness]}/{name}/*.py {TEST_DIRS[harness]}/test_{name}.py
    python -m pytest {TEST_DIRS[harness]}/test_{name}.py
    {COMMANDS[harness].format(task=name)}

Still needed before opening the pull request:

- dataset access: `{benchmark.source.hub_id}` must be reachable (`hf auth login` and accept its terms if it
  is gated); the revision is {revision};
- a full run on a public model (drop `--limit 8` above) whose headline number is within the published margin
  (README "Published numbers"), attached to the pull request with its `results.json`;
{steps}- permission for the verbatim prompts and parsers whose source repository states no licence (README
  "Licences of verbatim material"), and the contributor agreement if the harness's CLA bot asks for one.
"""


def pr_notes(out_dir: Path, harness: str) -> str:
    """UPSTREAM_PR.md for every benchmark exported for `harness` under `out_dir`."""
    known = set(benchmarks.all_benchmarks())
    exported = sorted(p.name for p in (out_dir / TASK_DIRS[harness]).iterdir() if p.is_dir() and p.name in known)
    where = ("`docs/advanced/current_tasks.md` (a new section, e.g. \"Agentic Tasks\")" if harness == "lmms-eval"
             else "the \"Multimodal Tasks\" table of `lm_eval/tasks/README.md`")
    blocks = []
    for name in exported:
        blocks.append(_thin_notes(benchmarks.get(name), harness, where))
    hooks = ("pre-commit run --files <the files above>   # black -l 240 and isort --profile black; already applied"
             if harness == "lmms-eval" else
             "pre-commit run --files <the files above>   # ruff check --fix and ruff format; already applied")
    return f"# Upstream pull request for {harness}\n\n{hooks}\n\n" + "\n".join(blocks)

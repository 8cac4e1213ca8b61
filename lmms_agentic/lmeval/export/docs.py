"""The pull-request notes of an export (`UPSTREAM_PR.md`): for every benchmark exported into a folder, where its
files go, the line the harness's task index needs, the dependencies, the validation commands, and what the pull
request still needs (nothing in them names the exporting project).
"""

from __future__ import annotations

from pathlib import Path

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.upstream import hooks_of
from lmms_agentic.lmeval.export import generated, shared

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
    if benchmark.source.revision:
        revision = f"pinned to `{benchmark.source.revision}`"
    elif generated.core_task(name) is not None:
        revision = ("not pinned yet: `main` in `_default_template_yaml` (`dataset_kwargs.revision`) and in `utils.py` "
                    f"(`HOOKS`{', which reads ' + own.MEDIA_AT_REVISION + ' at it' if own.MEDIA_AT_REVISION else ''})"
                    f"; replace both with the dataset's current commit (`hf datasets info {benchmark.source.hub_id} "
                    "--expand sha`)")
    else:
        revision = ("`main` in `_default_template_yaml` (a TODO comment marks it): replace it with the dataset's "
                    f"current commit (`hf datasets info {benchmark.source.hub_id} --expand sha`)"
                    + (f", and `REVISION` in `utils.py` ({own.MEDIA_AT_REVISION}) with it" if own.MEDIA_AT_REVISION
                       else ""))
    steps = own.PR_STEPS
    core_based = generated.core_task(name) is not None
    data = f" and `{TEST_DIRS[harness]}/testdata/{name}_cases.json`" if core_based else ""
    shared_dir = f", the shared module `{shared.SHARED_DIRS[harness]}/` (above)" if core_based else ""
    return f"""## {benchmark.title} (`{name}`)

Files: `{TASK_DIRS[harness]}/{name}/`{shared_dir}, `{TEST_DIRS[harness]}/test_{name}.py`{data}, at the same
paths in the {harness} repository. Line for {where}:

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
    head = f"# Upstream pull request for {harness}\n\n{hooks}\n\n"
    if (out_dir / shared.SHARED_DIRS[harness]).is_dir():
        head += SHARED_NOTES[harness] + "\n" + RUN_NOTES + "\n"
    return head + "\n".join(blocks)


SHARED_NOTES = {
    "lmms-eval": """## The shared module (`lmms_eval/tasks/_task_utils/agentic/`)

lmms-eval keeps code that several task folders use in `lmms_eval/tasks/_task_utils/` (its tasks import
`lmms_eval.tasks._task_utils.<module>`, e.g. `mcq_extract`, `file_utils`). The modules every benchmark folder
imports go into one subpackage there: the answer extraction, schema, scores, text, prompting, few-shot and
coordinate helpers, the interface each benchmark's `task.py` implements, and the lmms-eval hooks built once on that
interface (`lmms_eval_glue.py`, with the media reader `hub_media.py`, `dataset_docs.py` and `scoring.py`). Each
benchmark folder holds only its own modules, its YAMLs, its README and a `utils.py` of assignments from those hooks.
""",
    "lm-eval": """## The shared module (`lm_eval/tasks/agentic_common/`)

lm-eval has no repository-wide folder of shared task code: task folders import other task folders by their
package (`leaderboard/ifeval` imports `lm_eval.tasks.ifeval`; the `score` subtasks import
`lm_eval.tasks.score.utils`). The modules every benchmark folder imports therefore go into one folder without task
YAMLs, `lm_eval/tasks/agentic_common/`: the answer extraction, schema, scores, text, prompting, few-shot and
coordinate helpers, the interface each benchmark's `task.py` implements, and the lm-eval hooks built once on that
interface (`lm_eval_glue.py`, with the media reader `hub_media.py`, `dataset_docs.py` and `scoring.py`). Each
benchmark folder holds only its own modules, its YAMLs, its README and a `utils.py` of assignments from those hooks.
""",
}
RUN_NOTES = """## What was run before this pull request, and what was not

Run offline, without Hub access: each benchmark's own test above (its registration, and on a few documents with
drawn images and encoded videos, every task's prompt, visuals, the scores of known replies and every aggregation;
its statement coverage of the task folder is at least 85%); every metric of every task, through these hooks, on a
bundled sample of each benchmark in the release's schema, equal to the reference implementation's on the same
replies; the harness's pre-commit hooks. Not run, because they need Hub access: loading the released dataset at a
pinned revision, and a full run on a public model with its `results.json` (both listed below, per benchmark).
"""

"""Agent-X's upstream export (`adapters.upstream.UpstreamHooks`): its citation and licences, the notes of its README
and pull request, the tasks left out, and its thin `utils.py`, the hooks its one-shot task YAMLs name on top of the
copied core.

`utils_source(request)` assembles it. It does what
the plugin's `hooks.py` and `aggregations.py` do for the same metrics, with the core doing the work: the release's
`data.json` (read from the dataset repository at the YAML's revision, `huggingface_hub.hf_hub_download`) ->
canonical documents (`records.normalise`, generative tasks by key), the paper prompt (`prompt.build_prompt`: the
released GPT instruction as the system turn, the images in `file_path` order or the video's frames each after
`Frame{i}:`, then `Query: <query>`), the parse and the deterministic fields (`trace.parse_trace`,
`scoring.score_trace`), the judged metrics (`judging.judge_item`) and the aggregations (`metrics.aggregate`).

Judging: lmms-eval's export sends the released judge prompts through `lmms_eval.llm_judge` (`API_TYPE`,
`MODEL_VERSION`, the provider's key such as `OPENAI_API_KEY` / `OPENAI_API_URL`), as lmms-eval's own judged tasks
do; with no key set, nothing is sent and every judged metric is unscored (`not_configured`, coverage 0). lm-eval has
no judge in its core: its export reports the deterministic metrics and leaves the judged ones unscored the same
way (the README documents the separate scoring step).

Not carried (plugin-only): release-schema overrides, bad-record screening, provenance, media integrity checks, the
judge cache and its prompt fencing, the judge-coverage warnings, the thinking-loop metrics, the per-model script
protocols and the multi-turn tool tasks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.upstream import FRAME_SAMPLER, HooksRequest, Origin, lm_eval_docs

ORIGIN = Origin(
    bibtex="""@inproceedings{ashraf2026agentx,
  title     = {Agent-X: Evaluating Deep Multimodal Reasoning in Vision-Centric Agentic Tasks},
  author    = {Ashraf, Tajamul and others},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2026},
  note      = {arXiv:2505.24876},
}""",
    bibtex_source=("the arXiv listing 2505.24876 (the full author list is to be copied from the authors' README, "
                   'github.com/mbzuai-oryx/Agent-X, in the pull request)'),
    verbatim=(
        (('the model instruction, the tool catalogue and the output format block (`release_data.py`, '
          '`toolmeta.json`)'),
         'github.com/mbzuai-oryx/Agent-X `evaluation/scripts` (the GPT inference script)',
         ('no licence file in that repository (all rights reserved by default): permission is requested in the '
          'pull request')),
        ('the nine judge prompts (`judge_prompts.py`) and their user templates (`judging.py`)',
         ('github.com/mbzuai-oryx/Agent-X `evaluation/run_eval_gpt_as_judge.py`, '
          '`evaluation/run_eval_qwen_as_judge.py`'),
         'as above'),
        ('the error-analysis rules (`failure_rules.py`) and the generative task list (`release_data.py`)',
         'github.com/mbzuai-oryx/Agent-X `analysis/error_analysis.ipynb`, `analysis/metrics.ipynb`',
         'as above'),
        ('the dataset (`Tajamul21/Agent-X`)',
         'the Hugging Face dataset card',
         'to be confirmed with the authors in the pull request'),
    ),
    reference_check=("The prompt, the judge prompts and the metric rules are the authors' released scripts; a "
                     "full run with the paper's judge reproducing the table above is still to be done."),
)
NOT_EXPORTED: tuple[str, ...] = ('agentx_script_', 'agentx_tools')
RUNNING_NOTES: dict[str, str] = {
    'both': ('Data: the hooks read `data.json` and `files/` from the dataset repository '
             "(`huggingface_hub.hf_hub_download`, the YAML's revision); videos give 8 uniformly spaced frames "
             '(PyAV), each after a `Frame{i}:` label. Each reply is parsed as a JSON trace, never executed.'),
    'lmms-eval': ('Judged metrics (`ground_s` ... `goal_acc`, `goal_imggen`): the released judge prompts through '
                  '`lmms_eval.llm_judge` (`API_TYPE`, default `openai`; `MODEL_VERSION`, default '
                  '`gpt-4o-2024-08-06`, a dated GPT-4o snapshot; `OPENAI_API_KEY`, `OPENAI_API_URL`). '
                  'Without a key nothing is sent: they are unscored (NaN) and `cov_*` is 0; the deterministic metrics '
                  'are always reported.'),
    'lm-eval': ('lm-eval has no judge in its core: the run reports the deterministic metrics (`toolset_f1_prog`, '
                '`format_error_rate`, `exact_match_acc`, `parse_failure_rate`, `err_*`); the judged ones are '
                'unscored (NaN, `cov_*` 0). To score them, run the lmms-eval version of these tasks with a judge '
                "on the same model, or judge the logged samples (`--log_samples`: each sample's `ground_s` entry "
                'holds the parsed trace) with the prompts of `judge_prompts.py` and `judging.judge_item`, then '
                '`metrics.aggregate`. `av` must be installed for video tasks.'),
}
DEPENDENCY_NOTES: dict[str, str] = {
    'lmms-eval': ("The judged metrics use `lmms_eval.llm_judge` (lmms-eval's own judge client; `API_TYPE`, "
                  '`MODEL_VERSION`,\n`OPENAI_API_KEY`, `OPENAI_API_URL`); video frames are decoded with PyAV '
                  '(`av`, which lmms-eval installs).'),
    'lm-eval': ('Video frames are decoded with PyAV (`av`), which no lm-eval extra installs: the pull request '
                'adds\nan extra (`agentx = ["av", "pillow"]`). No judge client: the run reports the '
                'deterministic metrics and\nleaves the judged ones unscored (lm-eval has no judge in its core; '
                'the README describes the separate scoring step).'),
}
MEDIA_AT_REVISION = 'data.json and the media files'
PR_STEPS = ("- the BibTeX entry: copy the full author list from the authors' README;\n- a full run with the "
            "paper's judge (GPT-4o) whose `goal_acc` is within the published margin;\n")

LEFT_OUT_CORE = ("script_protocols", "script_texts")
"""Core modules only the per-model script protocols use (not exported)."""
SHARED_MODULES = ("scores",)
"""Shared-core modules the hooks import beyond what the benchmark core imports."""
DATA_FILES = ("toolmeta.json",)
"""Data files of the core the copied modules read (next to them)."""

LMMS_EVAL_IMPORTS = '''
import ast
import functools
import json
import math
import os
import re
from fractions import Fraction

import datasets
from huggingface_hub import hf_hub_download
from PIL import Image

from __PACKAGE__.tasks.agentx import metrics
from __PACKAGE__.tasks.agentx.judging import (
    NOT_JUDGEABLE,
    REPORTED_NAMES,
    judge_item,
    judged_metric_names,
    style_for_model,
    user_template,
)
from __PACKAGE__.tasks.agentx.prompt import VideoFile, build_prompt, simple_text
from __PACKAGE__.tasks.agentx.records import normalise, row_order
from __PACKAGE__.tasks.agentx.release_data import GENERATIVE_IDS, LEGACY_ALIASES, TOOL_NAMES
from __PACKAGE__.tasks.agentx.scores import group_mean  # noqa: F401 (named by the group YAML)
from __PACKAGE__.tasks.agentx.scoring import gt_answer, judge_gt, score_trace
from __PACKAGE__.tasks.agentx.trace import parse_trace
'''

LM_EVAL_IMPORTS = '''
import functools
import json
from fractions import Fraction

import datasets
from huggingface_hub import hf_hub_download
from PIL import Image

from __PACKAGE__.tasks.agentx import metrics
from __PACKAGE__.tasks.agentx.judging import NOT_JUDGEABLE, REPORTED_NAMES, judge_item, judged_metric_names
from __PACKAGE__.tasks.agentx.prompt import VideoFile, build_prompt
from __PACKAGE__.tasks.agentx.records import normalise, row_order
from __PACKAGE__.tasks.agentx.release_data import GENERATIVE_IDS, LEGACY_ALIASES, TOOL_NAMES, system_message
from __PACKAGE__.tasks.agentx.scoring import gt_answer, judge_gt, score_trace
from __PACKAGE__.tasks.agentx.trace import parse_trace
'''

DOCSTRING = '''"""Agent-X task hooks: data, prompts, images, video frames, judging and scoring for this folder's YAMLs.

The sibling modules hold the benchmark logic (`records`, `release_data`, `prompt`, `trace`, `trace_search`,
`scoring`, `failure_rules`, `judge_prompts`, `judging`, `metrics`, and the shared `schema`, `scores`, `text`); this
file adapts them to __HARNESS__'s hooks, reads the release (`data.json` and `files/`) from the dataset repository
and samples the frames of video tasks with PyAV.
"""
'''

DOCUMENTS = '''__IMPORTS__
DATASET = "__DATASET__"
REVISION = "__REVISION__"__REVISION_TODO__
"""The dataset revision data.json and the media are read from: keep it equal to `dataset_kwargs.revision`."""
DATA_FILE = "data.json"
MEDIA_FOLDER = "files"
PLUGIN_ONLY = ("loop_rate", "truncation_rate")


# ---------------------------------------------------------------- documents (process_docs)


def _release_file(name):
    return hf_hub_download(DATASET, name, repo_type="dataset", revision=REVISION)


@functools.lru_cache(maxsize=1)
def _all_rows():
    """Every task of data.json as a canonical row (key order), read as released: the harness's own table of the
    file (one wide row) loses the records' shapes, so the hooks read the file itself."""
    with open(_release_file(DATA_FILE), encoding="utf-8") as handle:
        entries = json.load(handle)
    return sorted((normalise(str(key), value, GENERATIVE_IDS) for key, value in entries.items()), key=row_order)


def _tasks(generative):
    return datasets.Dataset.from_list([row for row in _all_rows() if row["is_generative"] == generative])


# ---------------------------------------------------------------- prompt, images and video frames


''' + FRAME_SAMPLER + '''

def _media_file(doc, index):
    return _release_file(f"{MEDIA_FOLDER}/{doc['media'][index]}")


def _image(path):
    image = Image.open(path)
    return image if image.mode == "RGB" else image.convert("RGB")


def _prompt(doc, settings):
    """The paper prompt of one task: its images, the video's sampled frames (`Frame{i}:` before each) or the video
    file (`video_mode: native`), then the query; the system turn is the released GPT instruction."""
    if doc["media_type"] != "video":
        return build_prompt(doc["query"], [_image(_media_file(doc, i)) for i in range(len(doc["media"]))])
    mode = settings["video_mode"]
    if mode == "native":
        return build_prompt(doc["query"], VideoFile(_media_file(doc, 0)))
    if mode != "frames":
        raise ValueError(f"video_mode must be 'frames' or 'native', got {mode!r}")
    return build_prompt(doc["query"], list(sample_frames(_media_file(doc, 0), int(settings["n_frames"]))), frames=True)


def doc_to_target(doc):
    return str(gt_answer(doc).get("value", ""))


'''

LMMS_EVAL_PROMPT = '''KEEP_UNCOUNTED = True
"""A metric a row does not count for is None (every aggregation skips it)."""


def docs_text_answer(dataset):
    """The tasks with a text answer (every key not in the generative id list)."""
    return _tasks(False)


def docs_generative(dataset):
    """The 222 generative (image-output) tasks, by key."""
    return _tasks(True)


def doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    built = _prompt(doc, lmms_eval_specific_kwargs or {})
    return [part.path if isinstance(part, VideoFile) else part for part in built.segments if not isinstance(part, str)]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    """Simple backends: the system message (the instruction and a blank line), then the query line."""
    return simple_text(doc["query"])


def doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """The system turn (or, with `system_role: false`, its text first in the user turn), then the user turn."""
    kwargs = lmms_eval_specific_kwargs or {}
    built = _prompt(doc, kwargs)
    content = []
    for part in built.segments:
        if isinstance(part, Image.Image):
            content.append({"type": "image", "url": part})
        elif isinstance(part, VideoFile):
            content.append({"type": "video", "url": part.path})
        else:
            content.append({"type": "text", "text": part})
    if not kwargs.get("system_role", True):
        return [{"role": "user", "content": [{"type": "text", "text": built.system}, *content]}]
    system = {"role": "system", "content": [{"type": "text", "text": built.system}]}
    return [system, {"role": "user", "content": content}]


# ---------------------------------------------------------------- judging (lmms_eval.llm_judge)

JUDGE_KEYS = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DASHSCOPE_API_KEY")
"""A judge is used when one of these is set (the provider is `API_TYPE`, the model `MODEL_VERSION`)."""
JUDGE_MODEL = os.getenv("MODEL_VERSION", "gpt-4o-2024-08-06")
_FIELD = re.compile(r"\\{\\{\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*\\}\\}")
_SCORE = re.compile(r"[\\'\\"]?score[\\'\\"]?\\s*[:=]\\s*[\\'\\"]?(-?\\d+(?:\\.\\d+)?)", re.IGNORECASE)


def judge_configured():
    return any(os.getenv(key) for key in JUDGE_KEYS)


@functools.lru_cache(maxsize=1)
def _server():
    from lmms_eval.llm_judge import ServerConfig, get_server

    config = ServerConfig(model_name=JUDGE_MODEL, temperature=0.0, max_tokens=1024)
    return get_server(server_name=os.getenv("API_TYPE", "openai"), config=config)


def parse_score(text):
    """The judge's score in [0, 1]: a dict with a numeric `Score` (JSON or Python literal), else `Score: x`; None
    for anything else, out-of-range scores included (another scale, never clamped)."""
    found = re.search(r"\\{.*\\}", text or "", re.DOTALL)
    value = None
    if found:
        for reader in (json.loads, ast.literal_eval):
            try:
                parsed = reader(found.group(0))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(parsed, dict) and "Score" in parsed:
                try:
                    value = float(parsed["Score"])
                except (TypeError, ValueError):
                    value = None
                break
    if value is None:
        match = _SCORE.search(text or "")
        value = float(match.group(1)) if match else None
    return value if value is not None and math.isfinite(value) and 0.0 <= value <= 1.0 else None


def _unscored(reason, detail=""):
    return {"score": None, "unscored_reason": reason, "detail": detail}


def _ask(call):
    from lmms_eval.llm_judge import Request

    user = _FIELD.sub(lambda m: call.values[m.group(1)], user_template(call.code_key, call.style))
    try:
        messages = [{"role": "system", "content": call.system}, {"role": "user", "content": user}]
        response = _server().evaluate(Request(messages=messages))
    except Exception as err:  # a judge failure leaves the item unscored, it does not stop the run
        return _unscored("transport_error", f"{err.__class__.__name__}: {err}")
    if not response.success:
        return _unscored("transport_error", str(response.error_message or ""))
    score = parse_score(response.content)
    if score is None:
        return _unscored("parse_failure", str(response.content)[:200])
    return {"score": score, "raw": response.content}


def _judge(calls):
    if not judge_configured():
        return [_unscored("not_configured") for _ in calls]
    return [_ask(call) for call in calls]


def _judge_style():
    return style_for_model(JUDGE_MODEL)


'''

LM_EVAL_PROMPT = '''KEEP_UNCOUNTED = False
"""A metric a row does not count for is left out: lm-eval averages a group over the subtasks that report it."""
IMAGE_TOKEN = "<image>"


def _settings(doc):
    return json.loads(doc["prompt_settings"])


def _with_settings(docs, settings):
    """The task's prompt settings (SETTINGS) and the system prompt (the YAML's `description`) in every row."""
    system = system_message() if settings.get("system_role", True) else ""
    columns = {"prompt_settings": [json.dumps(settings, sort_keys=True)] * len(docs)}
    columns["system_prompt"] = [system] * len(docs)
    return datasets.concatenate_datasets([docs.flatten_indices(), datasets.Dataset.from_dict(columns)], axis=1)


def _segments(doc):
    settings = _settings(doc)
    built = _prompt(doc, settings)
    return ([] if settings.get("system_role", True) else [built.system]) + list(built.segments)


def doc_to_image(doc):
    """The images in `file_path` order, or the video's sampled frames."""
    return [part for part in _segments(doc) if not isinstance(part, str)]


def doc_to_text(doc):
    """The user turn: its texts with one `<image>` where each image or frame goes (`Frame{i}:` before each frame)."""
    return "".join(part if isinstance(part, str) else IMAGE_TOKEN for part in _segments(doc))


def judge_configured():
    return False


def _judge(calls):
    """lm-eval has no judge in its core: the judged metrics are unscored here and scored in a separate step."""
    return [_unscored("not_configured") for _ in calls]


def _unscored(reason, detail=""):
    return {"score": None, "unscored_reason": reason, "detail": detail}


def _judge_style():
    return "gpt"


'''

SCORING = '''# ---------------------------------------------------------------- scoring


def _judged(doc, prediction):
    """{judged metric: result} of one task: the judge's, or unscored with the reason."""
    if doc.get("judge_blocker"):
        names = judged_metric_names(REPORTED_NAMES, bool(doc["is_generative"]))
        why = f"not judged, as in the released judge scripts: {doc['judge_blocker']}"
        return {name: _unscored(NOT_JUDGEABLE, why) for name in names}
    return judge_item(
        doc["id"],
        judge_gt(doc),
        prediction,
        _judge,
        query_type=doc["query_type"],
        is_generative=bool(doc["is_generative"]),
        style=_judge_style(),
        tool_metadata=json.loads(doc["tool_metadata_json"]),
    )


def _record(doc, results):
    """The per-task record, logged under the first metric: the deterministic fields and every judged result."""
    response = results[0] if results else ""
    scored = score_trace(doc, parse_trace(response, TOOL_NAMES, LEGACY_ALIASES))
    return {
        "id": doc["id"],
        "is_generative": bool(doc["is_generative"]),
        "query_type": doc["query_type"],
        "media_type": doc["media_type"],
        "judge": _judged(doc, scored["prediction"]),
        **scored,
    }


def process_results(doc, results):
    """The record under the task's first metric (`ground_s`), then each other metric's view of it."""
    record = _record(doc, results)
    first, *others = [name for name in metrics.metric_names(bool(doc["is_generative"])) if name not in PLUGIN_ONLY]
    values = {first: record, **{name: metrics.VIEWS[name](record) for name in others}}
    return values if KEEP_UNCOUNTED else {name: value for name, value in values.items() if value is not None}


# ---------------------------------------------------------------- aggregations (named by the task YAMLs)
'''


def _aggregations(names: Sequence[str]) -> str:
    return "\n\n".join(f"def {name}(items):\n    return metrics.aggregate({name!r}, items)\n" for name in names)


def _lm_eval_docs(settings: Mapping[str, Mapping[str, Any]], process_docs: Mapping[str, str]) -> str:
    """lm-eval's per-task prompt settings and each task's process_docs (the task's rows, then the settings); the
    rows come from data.json, not from the split lm-eval loaded (`lm_eval_docs` of the shared helpers would pass it)."""
    table = lm_eval_docs(settings, {})
    blocks = []
    for task, rows in process_docs.items():
        if rows not in ("docs_text_answer", "docs_generative"):
            raise ValueError(f"{task}: process_docs {rows!r} is not an exported Agent-X task's")
        generative = rows == "docs_generative"
        blocks.append(f"def {task}_docs(dataset):\n    return _with_settings(_tasks({generative}), "
                      f"SETTINGS[{task!r}])\n")
    return "\n\n".join([table.rstrip("\n") + "\n", *blocks])


def utils_source(request: HooksRequest) -> str:
    """The complete utils.py: data.json and the media read from the dataset at the request's revision (`main`,
    marked to pin, while none is pinned); an aggregation per metric the YAMLs name; for lm-eval, each task's prompt
    settings and rows function."""
    request.require_frames()
    harness = request.harness
    documents = (DOCUMENTS.replace("__DATASET__", request.hub_id).replace("__REVISION__", request.revision_or_main)
                 .replace("__REVISION_TODO__", request.revision_todo)
                 .replace("__IMPORTS__", LM_EVAL_IMPORTS if harness == "lm-eval" else LMMS_EVAL_IMPORTS))
    parts = [DOCSTRING.replace("__HARNESS__", harness), documents]
    if harness == "lm-eval":
        parts += [LM_EVAL_PROMPT, SCORING, "\n\n" + _aggregations(request.metric_names),
                  "\n\n" + _lm_eval_docs(request.settings, request.rows_by_task)]
    else:
        parts += [LMMS_EVAL_PROMPT, SCORING, "\n\n" + _aggregations(request.metric_names)]
    return "".join(parts).replace("__PACKAGE__", request.package)

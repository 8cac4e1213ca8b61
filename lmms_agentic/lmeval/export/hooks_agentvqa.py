"""AgentVQA's thin `utils.py` for a core-based export: the hooks its task YAMLs name, on top of the copied core.

`utils_source(harness, package, settings, process_docs, variants)` assembles it (`__PACKAGE__` becomes the
harness's package). It does what the plugin's `hooks.py` and `views.py` do for the same metrics, with the core doing
the work: release rows -> canonical documents (`records.normalise`, the release columns renamed by
`records.FIELD_MAP`), the variant's settings written into every document (domain, coordinate convention, action
history: one `process_docs` per task, `variants`), the prompt (`prompt.prompt_text`, `prompt.ordered_visuals`,
`prompt.Prompt.messages`), the per-item fields (`scoring.item_fields`, strict letter by `extract.extract_choice`
against the options as rendered) and the aggregation (`scores.mean_score`).

Video frames are sampled here, harness-side, with PyAV (lmms-eval installs it; for lm-eval it is a declared extra
dependency): every frame decoded, then `n_frames` uniform indices, `round(linspace(0, n - 1, k))` with half-up
rounding, the plugin's rule. The video file is the dataset repository's own (`huggingface_hub.hf_hub_download` at
the YAML's revision). lmms-eval's `video_mode: native` entries hand the path to the backend instead.

Not carried (plugin-only): release-schema overrides, skipping bad records, provenance, media and video integrity
checks, the decoded-media and frame caches beyond one process, the MCQ judge fallback, option permutations and the
thinking-loop metrics.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

SHARED_MODULES = ("extract", "scores", "text")
"""Shared-core modules the hooks import beyond what the benchmark core imports."""
VARIANT = re.compile(r"docs_(?P<domain>[a-z_]+?)"
                     r"(?:_(?P<convention>norm1000_xy|norm1000_yx)|_(?P<nohistory>nohistory))?$")
DEFAULT_CONVENTION = "pixel_xy"

DOCSTRING = '''"""AgentVQA task hooks: data, prompts, images, video frames and scoring for the YAMLs in this folder.

The sibling modules hold the benchmark logic (`records`, `sources`, `prompt`, `scoring`, `metrics`, and the shared
`schema`, `coords`, `text`, `extract`, `scores`); this file adapts them to __HARNESS__'s hooks and samples the
frames of video items with PyAV.
"""
'''

DOCUMENTS = '''
import functools
import io
import json
from fractions import Fraction

import datasets
from huggingface_hub import hf_hub_download
from PIL import Image

from __PACKAGE__.tasks.agentvqa import prompt
from __PACKAGE__.tasks.agentvqa.extract import extract_choice
from __PACKAGE__.tasks.agentvqa.metrics import coords_shown_as_released, metric_names, source_metric
from __PACKAGE__.tasks.agentvqa.records import FIELD_MAP, SOURCES, normalise
from __PACKAGE__.tasks.agentvqa.scores import mean_score  # noqa: F401 (named by the YAMLs)
from __PACKAGE__.tasks.agentvqa.scoring import item_fields
from __PACKAGE__.tasks.agentvqa.text import REQUEST_FAILED_PREFIX

DATASET = "__DATASET__"
REVISION = "__REVISION__"__REVISION_TODO__
"""The dataset revision the video files are read from: keep it equal to `dataset_kwargs.revision` in the YAML."""
IMAGES = "images"
_DOCS = {}


# ---------------------------------------------------------------- documents (process_docs)


def _open(cell):
    return cell if isinstance(cell, Image.Image) else Image.open(io.BytesIO(cell["bytes"]))


def _with_image_size(row, cells):
    """A coordinate item without a recorded image size gets its first image's size (read from the header)."""
    meta = json.loads(row["metadata_json"])
    if meta.get("option_coordinates") and not (meta.get("image_width") and meta.get("image_height")) and cells:
        meta["image_width"], meta["image_height"] = _open(cells[0]).size
        row["metadata_json"] = json.dumps(meta, sort_keys=True, ensure_ascii=False)
    return row


def _canonical(dataset):
    """The release rows as canonical documents (computed once per loaded split); images stay encoded."""
    key = getattr(dataset, "_fingerprint", id(dataset))
    if key not in _DOCS:
        columns = dataset.column_names
        encoded = dataset.rename_columns({c: name for name, c in FIELD_MAP.items() if c != name and c in columns})
        if IMAGES in encoded.column_names:
            encoded = encoded.cast_column(IMAGES, datasets.Sequence(datasets.Image(decode=False)))
            cells = encoded[IMAGES]
        else:
            cells = [[] for _ in range(len(encoded))]
        text = encoded.remove_columns([c for c in (IMAGES,) if c in encoded.column_names]).to_list()
        docs = [_with_image_size(normalise(row, len(images or [])).to_row(), images or [])
                for row, images in zip(text, cells)]
        table = datasets.Dataset.from_list(docs)
        if IMAGES in encoded.column_names:
            table = datasets.concatenate_datasets([table, encoded.select_columns([IMAGES])], axis=1)
        _DOCS[key] = table
    return _DOCS[key]


def _variant(dataset, domain, convention, history):
    """One domain's documents with the variant's settings (coordinate convention, action history) in every row."""
    docs = _canonical(dataset)
    subset = docs.select([i for i, cell in enumerate(docs["domain"]) if cell == domain]).flatten_indices()
    settings = {"coord_convention": [convention] * len(subset), "with_history": [history] * len(subset)}
    return datasets.concatenate_datasets([subset, datasets.Dataset.from_dict(settings)], axis=1)


'''

VISUALS = '''# ---------------------------------------------------------------- images and video frames


def uniform_indices(n_total, n_wanted):
    """Evenly spaced frame indices over [0, n_total - 1], first and last included; every frame when too few."""
    if n_total <= n_wanted:
        return list(range(n_total))
    if n_wanted == 1:
        return [(n_total - 1) // 2]
    step = Fraction(n_total - 1, n_wanted - 1)
    return [int((i * step * 2 + 1) // 2) for i in range(n_wanted)]


@functools.lru_cache(maxsize=4)
def sample_frames(path, n_wanted):
    """`n_wanted` uniformly spaced RGB frames of the video (PyAV: one pass to count the frames, one to keep them)."""
    import av

    with av.open(path) as container:
        total = sum(1 for _ in container.decode(container.streams.video[0]))
    if total == 0:
        raise ValueError(f"{path} holds no video frames")
    wanted = set(uniform_indices(total, n_wanted))
    frames = []
    with av.open(path) as container:
        for index, frame in enumerate(container.decode(container.streams.video[0])):
            if index in wanted:
                frames.append(Image.fromarray(frame.to_ndarray(format="rgb24")))
    return tuple(frames)


def _video_file(doc):
    return hf_hub_download(DATASET, doc["video"], repo_type="dataset", revision=REVISION)


def _images(doc):
    out = []
    for cell in doc.get(IMAGES) or []:
        image = _open(cell)
        out.append(image if image.mode == "RGB" else image.convert("RGB"))
    return out


def _visuals(doc, settings):
    """The images in dataset order, then the video: `n_frames` sampled frames, or its path (`video_mode: native`)."""
    video = None
    if doc["video"]:
        if settings["video_mode"] == "native":
            video = _video_file(doc)
        elif settings["video_mode"] == "frames":
            video = list(sample_frames(_video_file(doc), int(settings["n_frames"])))
        else:
            raise ValueError(f"video_mode must be 'frames' or 'native', got {settings['video_mode']!r}")
    return prompt.ordered_visuals(_images(doc), video)


def doc_to_target(doc):
    return str(doc["answer"])


'''

LMMS_EVAL_PROMPT = '''KEEP_UNCOUNTED = True
"""A metric a row does not count for is None (every aggregation skips it)."""


def doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    return _visuals(doc, lmms_eval_specific_kwargs or {})


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return prompt.prompt_text(doc, lmms_eval_specific_kwargs or {})


def doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """One user turn: the visuals first (images, frames or the video), then the text; no system prompt."""
    kwargs = lmms_eval_specific_kwargs or {}
    return prompt.Prompt(_visuals(doc, kwargs), prompt.prompt_text(doc, kwargs)).messages()


'''

LM_EVAL_PROMPT = '''KEEP_UNCOUNTED = False
"""A metric a row does not count for is left out: lm-eval averages a group over the subtasks that report it."""
IMAGE_TOKEN = "<image>"


def _settings(doc):
    return json.loads(doc["prompt_settings"])


def _with_settings(docs, settings):
    """The task's prompt settings (SETTINGS) and an empty system prompt (the YAML's `description`) in every row."""
    columns = {"prompt_settings": [json.dumps(settings, sort_keys=True)] * len(docs), "system_prompt": [""] * len(docs)}
    return datasets.concatenate_datasets([docs.flatten_indices(), datasets.Dataset.from_dict(columns)], axis=1)


def doc_to_image(doc):
    """The images in dataset order, then the video's sampled frames (lm-eval has no video input)."""
    return _visuals(doc, _settings(doc))


def doc_to_text(doc):
    """The user turn: one `<image>` per image and frame (they come first), then the text."""
    settings = _settings(doc)
    return IMAGE_TOKEN * len(_visuals(doc, settings)) + prompt.prompt_text(doc, settings)


'''

SCORING = '''# ---------------------------------------------------------------- scoring


def _score(value):
    """A percentage view: 100 for true, 0 for false; None = the row does not count for the metric."""
    return None if value is None else {"score": 100.0 if value else 0.0}


VIEWS = {
    "no_answer_rate": lambda r: _score(r["pred"] is None),
    "request_failed_rate": lambda r: _score(r["request_failed"]),
    "coords_as_released": lambda r: _score(coords_shown_as_released(r)),
    **{source_metric(s): (lambda r, s=s: _score(r["correct"]) if r["source"] == s else None) for s in SOURCES},
}


def _record(doc, results):
    """The per-sample record, logged under accuracy: the strict letter against the options as shown, and the fields."""
    response = results[0] if results else ""
    rendered = prompt.rendered_options(doc)
    choice = extract_choice(response, rendered.texts)
    record = {
        "id": str(doc["id"]),
        "domain": str(doc["domain"]),
        "source": str(doc["source"]),
        "answer": str(doc["answer"]),
        "pred": choice.letter,
        "correct": choice.letter == doc["answer"],
        "rule": choice.rule,
        "no_answer_reason": choice.reason,
        "request_failed": isinstance(response, str) and response.lstrip().startswith(REQUEST_FAILED_PREFIX),
    }
    record.update(item_fields(doc, rendered))
    record["score"] = 100.0 if record["correct"] else 0.0
    return record


def process_results(doc, results):
    record = _record(doc, results)
    values = {"accuracy": record, **{name: VIEWS[name](record) for name in metric_names(str(doc["domain"]))[1:]}}
    return values if KEEP_UNCOUNTED else {name: value for name, value in values.items() if value is not None}
'''


def variant_of(rows_function: str) -> tuple[str, str, bool]:
    """(domain, coordinate convention, history shown) of a source `process_docs` name (`docs_games_norm1000_yx`)."""
    found = VARIANT.match(rows_function)
    if found is None:
        raise ValueError(f"{rows_function}: not an AgentVQA variant name (docs_<domain>[_norm1000_xy|_norm1000_yx|"
                         "_nohistory]); add its settings to hooks_agentvqa.variant_of")
    return found["domain"], found["convention"] or DEFAULT_CONVENTION, not found["nohistory"]


def _rows_functions(names: list[str]) -> str:
    blocks = []
    for name in names:
        domain, convention, history = variant_of(name)
        blocks.append(f"def {name}(dataset):\n    return _variant(dataset, {domain!r}, {convention!r}, {history})\n")
    return "\n\n".join(blocks) + "\n\n"


def _lm_eval_docs(settings: Mapping[str, Mapping[str, Any]], process_docs: Mapping[str, str]) -> str:
    """The per-task prompt settings and each task's process_docs (the variant's rows, then the settings)."""
    table = "SETTINGS = " + json.dumps({task: dict(s) for task, s in settings.items()}, indent=4, sort_keys=True)
    table = table.replace(": true", ": True").replace(": false", ": False").replace(": null", ": None")
    blocks = [f"def {task}_docs(dataset):\n    return _with_settings({rows}(dataset), SETTINGS[{task!r}])\n"
              for task, rows in process_docs.items()]
    return "\n\n".join([table + "\n", *blocks])


def utils_source(harness: str, package: str, rows_functions: list[str], dataset: str, revision: str | None,
                 settings: Mapping[str, Mapping[str, Any]] | None = None,
                 process_docs: Mapping[str, str] | None = None) -> str:
    """The complete utils.py: `rows_functions` are the variants' process_docs names, `dataset`/`revision` where the
    videos are read from (`revision` None: `main`, marked to pin); for lm-eval, `settings` and `process_docs` (the
    rows function) name each task's."""
    pinned = bool(revision)
    revision = revision or "main"
    if harness == "lm-eval":
        for task, values in (settings or {}).items():
            if values.get("video_mode") != "frames":
                raise ValueError(f"{task}: lm-eval has no video input; its prompt settings need video_mode: frames")
    todo = "" if pinned else "  # TODO: pin the dataset commit (the same as in _default_template_yaml)"
    documents = (DOCUMENTS.replace("__DATASET__", dataset).replace("__REVISION__", revision)
                 .replace("__REVISION_TODO__", todo))
    parts = [DOCSTRING.replace("__HARNESS__", harness), documents, _rows_functions(rows_functions), VISUALS]
    if harness == "lm-eval":
        parts += [LM_EVAL_PROMPT, SCORING, "\n\n" + _lm_eval_docs(settings or {}, process_docs or {})]
    else:
        parts += [LMMS_EVAL_PROMPT, SCORING]
    return "".join(parts).replace("__PACKAGE__", package)

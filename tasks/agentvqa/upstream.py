"""AgentVQA's upstream export (`adapters.upstream.UpstreamHooks`): its citation and licences, the notes of its README
and pull request, and its thin `utils.py`, the hooks its task YAMLs name on top of the copied core.

`utils_source(request)` assembles it (`__PACKAGE__` becomes the
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

import re

from lmms_agentic.adapters.upstream import FRAME_SAMPLER, HooksRequest, Origin, lm_eval_docs

ORIGIN = Origin(
    bibtex="""@misc{gupta2026agentvqa,
  title  = {AgentVQA: A Unified Benchmark for Agentic Visual Understanding},
  author = {Gupta and Konan and Yin and Sarch and Liu},
  note   = {University of Maryland and Princeton University; arXiv preprint},
}""",
    bibtex_source=("the paper's title page (the authors publish no BibTeX entry yet: full author names, year and "
                   'arXiv identifier are to be completed)'),
    verbatim=(
        ('the prompt layout and instruction (`prompt.py`, the YAMLs)',
         "written for this task from the paper's description (no official prompt file is published)",
         "the harness's licence (MIT)"),
        ('the domain and source names (`records.py`), the per-source sample counts',
         'the paper (Table 2, Fig. 2)',
         'facts from the paper, cited above'),
        ('the published numbers (section above)',
         'the paper, Table 1',
         'quoted with the citation above'),
        ('the dataset (`AgentVQA/AgentVQA`)',
         'the Hugging Face dataset card',
         ('not stated on the card when this task was written (its pre-release pool `AgentVQA/AgentVQA_old` is '
          'MIT): to be confirmed with the authors in the pull request')),
    ),
    paper_title='AgentVQA: A Unified Benchmark for Agentic Visual Understanding',
    reference_check=('The authors publish no evaluation code: the prompt, the answer parser and the scoring '
                     "follow the paper's description; a full run reproducing the table above is still to be "
                     'done.'),
)
NOT_EXPORTED: tuple[str, ...] = ()
RUNNING_NOTES: dict[str, str] = {
    'both': ('Videos: the file is read from the dataset repository (`huggingface_hub.hf_hub_download`, the '
             "YAML's revision) and `n_frames` (32) frames are sampled with PyAV: every frame decoded, then "
             'indices `round(linspace(0, n - 1, 32))` rounded half up (every frame when there are fewer). The '
             'implementation these tasks were ported from uses the same rule but decodes with decord when it is '
             "installed (PyAV otherwise), and decord counts frames from the container's index: frame selection "
             'can differ only for a video whose indexed frame count differs from the frames PyAV decodes '
             '(variable frame rate, damaged or truncated files; that implementation rejects truncated files). On '
             'the test videos both decoders give the same indices and identical pixels.'),
    'lmms-eval': '`qwen2_5_vl` and `qwen3_vl` receive the video file itself (`video_mode: native`).',
    'lm-eval': 'lm-eval has no video input: every model gets the sampled frames; `av` must be installed.',
}
DEPENDENCY_NOTES: dict[str, str] = {
    'lmms-eval': 'Video frames are decoded with PyAV (`av`, which lmms-eval installs).',
    'lm-eval': ('Video frames are decoded with PyAV (`av`), which no lm-eval extra installs: the pull '
                'request\nadds an extra to `pyproject.toml` (`agentvqa = ["av", "pillow"]`, as task-specific '
                'extras such as `ifeval` do)\nand the README names it (`pip install lm-eval[agentvqa]`).'),
}
MEDIA_AT_REVISION = 'the video files'
PR_STEPS = ("- the release schema: the field map in `records.py` (`FIELD_MAP`) was written before the dataset "
            "card could be read;\n  check it against the card's features and adjust it;\n"
            "- the BibTeX entry: complete the authors' full names, the year and the arXiv identifier;\n")
SHARED_MODULES = ("extract", "scores", "text")
"""Shared-core modules the hooks import beyond what the benchmark core imports."""
LEFT_OUT_CORE: tuple[str, ...] = ()
DATA_FILES: tuple[str, ...] = ()
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


''' + FRAME_SAMPLER + '''

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
                         "_nohistory]); add its settings to tasks/agentvqa/upstream.py, variant_of")
    return found["domain"], found["convention"] or DEFAULT_CONVENTION, not found["nohistory"]


def _rows_functions(names: list[str]) -> str:
    blocks = []
    for name in names:
        domain, convention, history = variant_of(name)
        blocks.append(f"def {name}(dataset):\n    return _variant(dataset, {domain!r}, {convention!r}, {history})\n")
    return "\n\n".join(blocks) + "\n\n"


def utils_source(request: HooksRequest) -> str:
    """The complete utils.py: the variants' rows functions; the videos read from the dataset at the request's revision
    (`main`, marked to pin, while none is pinned); for lm-eval, each task's prompt settings and rows function."""
    request.require_frames()
    documents = (DOCUMENTS.replace("__DATASET__", request.hub_id).replace("__REVISION__", request.revision_or_main)
                 .replace("__REVISION_TODO__", request.revision_todo))
    parts = [DOCSTRING.replace("__HARNESS__", request.harness), documents, _rows_functions(request.rows_functions),
             VISUALS]
    if request.harness == "lm-eval":
        parts += [LM_EVAL_PROMPT, SCORING, "\n\n" + lm_eval_docs(request.settings, request.rows_by_task)]
    else:
        parts += [LMMS_EVAL_PROMPT, SCORING]
    return "".join(parts).replace("__PACKAGE__", request.package)

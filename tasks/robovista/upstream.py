"""RoboVista's upstream export (`adapters.upstream.UpstreamHooks`): its citation and licences, the notes of its README
and pull request, and its thin `utils.py`, the hooks its task YAMLs name on top of the copied core.

`utils_source(request)` assembles it (`__PACKAGE__` becomes the harness's
package): the same documents, images and scoring for both harnesses; lmms-eval's prompt hooks take
`lmms_eval_specific_kwargs`, lm-eval's read the prompt settings that each task's `process_docs` wrote into every
document (`SETTINGS`, one entry per task). It does what the plugin's `hooks.py`, `views.py` and
`adapters.samples` do for the same metrics, with the core doing the work: rows -> canonical documents
(`records.normalise`), domain subtasks and in-context examples (`prompt.choose_incontext_examples`), images
(`images.preprocess_image`), prompts (`prompt.build`), the per-item fields (`scoring.score_item`, strict letter by
`extract.extract_choice`) and the aggregations (`scores.mean_score`, `metrics.*`). Not carried (plugin-only):
release-schema overrides, skipping bad records, provenance, media integrity checks, the decoded-media cache, the
MCQ judge fallback, option permutations and the thinking-loop metrics.
"""

from __future__ import annotations

from lmms_agentic.adapters.upstream import HooksRequest, Origin, lm_eval_docs

ORIGIN = Origin(
    bibtex="""@inproceedings{xie2026robovista,
  title     = {RoboVista: Evaluating Vision-Language Models for Diverse Robot Applications},
  author    = {Xie, Shuangyu and Chen, Kaiyuan and Chen, Ziyang and Adebola, Simeon and Huang, Yixuan and
               Ma, Zehan and Qiu, Tianshuang and Yuan, Wentao and Shah, Dhruv and Sanketi, Pannag R. and
               Goldberg, Ken},
  booktitle = {Robotics: Science and Systems (RSS)},
  year      = {2026},
}""",
    bibtex_source="the authors' runner README (github.com/Dimios45/robovista)",
    verbatim=(
        ('prompts (system prompts, suffixes, confidence request, ICL layout; the YAMLs and `prompt.py`)',
         'github.com/Dimios45/robovista `benchmark/prompts.json`, `benchmark/run_benchmark.py`',
         ('no licence file in that repository (all rights reserved by default): permission is requested in the '
          'pull request')),
        ('the two released answer parsers (`parity.py`)',
         'github.com/Dimios45/robovista `benchmark/run_benchmark.py`, `benchmark/run_benchmark_local.py`',
         'as above'),
        ('the dataset (`sy-xie/robovista`)',
         'the Hugging Face dataset card',
         'Apache-2.0'),
    ),
)
NOT_EXPORTED: tuple[str, ...] = ()
RUNNING_NOTES: dict[str, str] = {}
DEPENDENCY_NOTES: dict[str, str] = {}
MEDIA_AT_REVISION = ''
PR_STEPS = ''
SHARED_MODULES: tuple[str, ...] = ()
LEFT_OUT_CORE: tuple[str, ...] = ()
DATA_FILES: tuple[str, ...] = ()

DOCSTRING = '''"""RoboVista task hooks: data, prompts, images and scoring for the YAMLs in this folder.

The sibling modules hold the benchmark logic (`records`, `prompt`, `images`, `parity`, `scoring`, `metrics`, and the
shared `schema`, `text`, `extract`, `prompting`, `fewshot`, `scores`); this file adapts them to __HARNESS__'s hooks.
"""
'''

DOCUMENTS = '''
import io
import json

import datasets
from PIL import Image

from __PACKAGE__.tasks.robovista import prompt
from __PACKAGE__.tasks.robovista.extract import extract_choice
from __PACKAGE__.tasks.robovista.images import ImagePolicy, preprocess_image
from __PACKAGE__.tasks.robovista.metrics import calibration_error, hle_compat_calibration  # noqa: F401 (YAML)
from __PACKAGE__.tasks.robovista.records import ABILITY_SPLIT, DOMAINS, UNKNOWN, normalise
from __PACKAGE__.tasks.robovista.scores import mean_score  # noqa: F401 (named by the YAMLs)
from __PACKAGE__.tasks.robovista.scoring import score_item
from __PACKAGE__.tasks.robovista.text import REQUEST_FAILED_PREFIX

IMAGES = "images"
_DOCS = {}


# ---------------------------------------------------------------- documents (process_docs)


def _canonical(dataset):
    """The release rows as canonical documents (computed once per loaded split); images stay encoded."""
    key = getattr(dataset, "_fingerprint", id(dataset))
    if key not in _DOCS:
        encoded = dataset.cast_column(IMAGES, datasets.Sequence(datasets.Image(decode=False)))
        cells = encoded[IMAGES]
        text = encoded.remove_columns([IMAGES]).to_list()
        docs = [normalise(row, len(images or [])).to_row() for row, images in zip(text, cells)]
        table = datasets.Dataset.from_list(docs)
        _DOCS[key] = datasets.concatenate_datasets([table, encoded.select_columns([IMAGES])], axis=1)
    return _DOCS[key]


def _where(dataset, column, value):
    docs = _canonical(dataset)
    return docs.select([i for i, cell in enumerate(docs[column]) if cell == value])


def load_docs(dataset):
    return _canonical(dataset)


def docs_agriculture(dataset):
    return _where(dataset, "domain", "agriculture")


def docs_autonomous_driving(dataset):
    return _where(dataset, "domain", "autonomous_driving")


def docs_domestic(dataset):
    return _where(dataset, "domain", "domestic")


def docs_industrial_manufacturing(dataset):
    return _where(dataset, "domain", "industrial_manufacturing")


def docs_surgical_robotics(dataset):
    return _where(dataset, "domain", "surgical_robotics")


def docs_open_datasets(dataset):
    return _where(dataset, "domain", "open_datasets")


def docs_unlabeled(dataset):
    """The rows without a domain label (they count in the overall score only)."""
    return _where(dataset, "domain", UNKNOWN)


def _with_incontext_examples(dataset, seed):
    """One same-(task, domain) example per row (paper App. B); rows without one get none."""
    docs = _canonical(dataset)
    chosen = prompt.choose_incontext_examples(docs["id"], docs["metadata_json"], docs["domain"], seed)
    texts = docs.select_columns(["id", "question", "options", "answer", "metadata_json"]).to_list()
    columns = datasets.Dataset.from_dict(
        {
            "icl_seed": [seed] * len(docs),
            "icl_example_id": ["" if c is None else texts[c]["id"] for c in chosen],
            "icl_question": ["" if c is None else texts[c]["question"] for c in chosen],
            "icl_options": [[] if c is None else texts[c]["options"] for c in chosen],
            "icl_answer": ["" if c is None else texts[c]["answer"] for c in chosen],
            "icl_reasoning": ["" if c is None else json.loads(texts[c]["metadata_json"])["reasoning"] for c in chosen],
        }
    )
    rows = [i if c is None else c for i, c in enumerate(chosen)]
    images = docs.select_columns([IMAGES]).select(rows).flatten_indices().rename_column(IMAGES, "icl_images")
    return datasets.concatenate_datasets([docs.flatten_indices(), columns, images], axis=1)


def docs_icl_seed0(dataset):
    return _with_incontext_examples(dataset, 0)


def docs_icl_seed1(dataset):
    return _with_incontext_examples(dataset, 1)


def docs_icl_seed2(dataset):
    return _with_incontext_examples(dataset, 2)


def docs_icl_seed3(dataset):
    return _with_incontext_examples(dataset, 3)


def docs_icl_seed4(dataset):
    return _with_incontext_examples(dataset, 4)


'''

SHARED_PROMPT = '''# ---------------------------------------------------------------- prompt


def _images(doc, column, policy):
    out = []
    for cell in doc[column]:
        image = cell if isinstance(cell, Image.Image) else Image.open(io.BytesIO(cell["bytes"]))
        out.append(preprocess_image(image, policy))
    return out


def _layout(doc, kwargs):
    policy = ImagePolicy.named(kwargs.get("image_preprocess", "paper"))
    examples = _images(doc, "icl_images", policy) if prompt.shows_example(doc, kwargs) else []
    return prompt.build(doc, kwargs, _images(doc, IMAGES, policy), examples)


def doc_to_target(doc):
    return str(doc["answer"])


'''

LMMS_EVAL_PROMPT = '''KEEP_UNCOUNTED = True
"""A metric a row does not count for is None (every aggregation skips it)."""


def doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    _, segments = _layout(doc, lmms_eval_specific_kwargs or {})
    return [image for segment in segments if isinstance(segment, list) for image in segment]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return prompt.text_only(doc, lmms_eval_specific_kwargs or {})


def doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """A system turn (or the system prompt leading the user turn) and one user turn of texts and images."""
    kwargs = lmms_eval_specific_kwargs or {}
    system_prompt, segments = _layout(doc, kwargs)
    content = []
    for segment in segments:
        if isinstance(segment, str):
            content.append({"type": "text", "text": segment})
        else:
            content.extend({"type": "image", "url": image} for image in segment)
    if not kwargs.get("system_role", True):
        content.insert(0, {"type": "text", "text": f"{system_prompt}\\n\\n"})
        return [{"role": "user", "content": content}]
    system = {"role": "system", "content": [{"type": "text", "text": system_prompt}]}
    return [system, {"role": "user", "content": content}]


'''

LM_EVAL_PROMPT = '''KEEP_UNCOUNTED = False
"""A metric a row does not count for is left out: lm-eval averages a group over the subtasks that report it."""
IMAGE_TOKEN = "<image>"


def _settings(doc):
    return json.loads(doc["prompt_settings"])


def _with_settings(docs, settings):
    """The task's prompt settings (SETTINGS) and its system prompt (the YAML's `description`) in every document."""
    rows = docs.remove_columns([c for c in (IMAGES, "icl_images") if c in docs.column_names]).to_list()
    system = [prompt.build(row, settings, [], [])[0] for row in rows]
    columns = {"prompt_settings": [json.dumps(settings, sort_keys=True)] * len(docs), "system_prompt": system}
    return datasets.concatenate_datasets([docs.flatten_indices(), datasets.Dataset.from_dict(columns)], axis=1)


def doc_to_image(doc):
    """The images in prompt order (the in-context example's first), prepared as the paper does."""
    _, segments = _layout(doc, _settings(doc))
    return [image for segment in segments if isinstance(segment, list) for image in segment]


def doc_to_text(doc):
    """The user turn: its texts, one `<image>` per image in order."""
    settings = _settings(doc)
    example = [None] * len(doc.get("icl_images") or []) if prompt.shows_example(doc, settings) else []
    _, segments = prompt.build(doc, settings, [None] * len(doc[IMAGES]), example)
    return "".join(segment if isinstance(segment, str) else IMAGE_TOKEN * len(segment) for segment in segments)


'''

SCORING = '''# ---------------------------------------------------------------- scoring


def _score(value):
    """A percentage view: 100 for true, 0 for false; None = the row does not count for the metric."""
    return None if value is None else {"score": 100.0 if value else 0.0}


def _where_view(record, key, value):
    return _score(record["correct_parity"]) if record.get(key) == value else None


def _confidence(record):
    if record["confidence"] is None:
        return None
    return {"confidence": record["confidence"], "correct": bool(record["correct_parity"])}


VIEWS = {
    "parity_20260714_acc": lambda r: _score(r["parsers"]["parity_20260714"]["correct"]),
    "strict_acc": lambda r: _score(r["correct"]),
    "no_answer_rate": lambda r: _score(r["pred"] is None),
    "request_failed_rate": lambda r: _score(r["request_failed"]),
    "perception_acc": lambda r: _where_view(r, "ability_split", "SC"),
    "planning_acc": lambda r: _where_view(r, "ability_split", "PL"),
    **{f"ability_{a}_acc": (lambda r, a=a: _where_view(r, "ability_type", a)) for a in ABILITY_SPLIT},
    **{f"domain_{d}_acc": (lambda r, d=d: _where_view(r, "domain", d)) for d in DOMAINS},
    "calibration_error": _confidence,
    "hle_compat_calibration": _confidence,
    "confidence_coverage": lambda r: _score(r["confidence"] is not None),
    "icl_fallback_rate": lambda r: _score(not r["icl_example_id"]),
}
DOMAIN_TASK = (
    "parity_20260714_acc", "strict_acc", "no_answer_rate", "request_failed_rate", "perception_acc", "planning_acc"
)
FULL = (*DOMAIN_TASK, *(f"ability_{a}_acc" for a in ABILITY_SPLIT), *(f"domain_{d}_acc" for d in DOMAINS))
CONFIDENCE = (*FULL, "calibration_error", "hle_compat_calibration", "confidence_coverage")
ICL = (*CONFIDENCE, "icl_fallback_rate")


def _record(doc, results):
    """The per-sample record, logged under parity_acc: the strict letter, the runner parsers' fields and the score."""
    response = results[0] if results else ""
    strict = extract_choice(response, doc["options"])
    record = {
        "id": str(doc["id"]),
        "domain": str(doc["domain"]),
        "answer": str(doc["answer"]),
        "pred": strict.letter,
        "correct": strict.letter == doc["answer"],
        "request_failed": isinstance(response, str) and response.lstrip().startswith(REQUEST_FAILED_PREFIX),
    }
    record.update(score_item(doc, response))
    record["score"] = 100.0 if record["correct_parity"] else 0.0
    return record


def _results(metrics):
    def process_results(doc, results):
        record = _record(doc, results)
        values = {"parity_acc": record, **{name: VIEWS[name](record) for name in metrics}}
        return values if KEEP_UNCOUNTED else {name: value for name, value in values.items() if value is not None}

    return process_results


process_results = _results(DOMAIN_TASK)
process_results_full = _results(FULL)
process_results_confidence = _results(CONFIDENCE)
process_results_icl = _results(ICL)
'''


def utils_source(request: HooksRequest) -> str:
    """The complete utils.py; for lm-eval, each task's prompt settings and rows function are baked in."""
    parts = [DOCSTRING.replace("__HARNESS__", request.harness), DOCUMENTS, SHARED_PROMPT]
    if request.harness == "lm-eval":
        parts += [LM_EVAL_PROMPT, SCORING, "\n\n" + lm_eval_docs(request.settings, request.rows_by_task)]
    else:
        parts += [LMMS_EVAL_PROMPT, SCORING]
    return "".join(parts).replace("__PACKAGE__", request.package)

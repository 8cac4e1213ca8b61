"""AgentVQA's upstream export (`adapters.upstream.UpstreamHooks`): its citation and the licences of its verbatim
material, the notes of its README (video frames, the unverified release schema) and pull request.

Everything else of the exported folder is generated from the core (`tasks/agentvqa/core/task.py`) by the exporter:
the copied core, a `utils.py` of assignments from the shared glue, the YAMLs' metric blocks. Video frames are
sampled harness-side by the shared media reader with PyAV: every frame decoded, then `n_frames` uniform indices,
`round(linspace(0, n - 1, k))` with half-up rounding (the rule of this project's frame sampler); the file is the
dataset repository's own (`huggingface_hub.hf_hub_download` at the YAML's revision); lmms-eval's
`video_mode: native` entries hand the file to the backend instead. Not carried (they stay around the core in this
project): release-schema overrides, skipping bad records, provenance, media and video integrity checks, the
decoded-media and frame caches beyond one process, the MCQ judge fallback, option permutations and the
thinking-loop metrics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.upstream import Origin

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
    'both': ('The release schema is unverified: the field map in `records.py` (`FIELD_MAP`) was written before the '
             "dataset card could be read, and the tasks read the release correctly only if its columns are the ones "
             'mapped there. '
             'Videos: the file is read from the dataset repository (`huggingface_hub.hf_hub_download`, the '
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
LEFT_OUT_CORE: tuple[str, ...] = ()
DATA_FILES: tuple[str, ...] = ()


def sample_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows the export's own test samples before the mini split's: the first coordinate item once more without its
    image size (a release record may lack it: the options then render against its first image's size, read from the
    image's header, `documents.with_image_size`)."""
    item = next(row for row in rows if row.get("option_coordinates"))
    return [{**item, "id": f"{item['id']}_unsized", "image_width": None, "image_height": None}]

"""RoboVista's upstream export (`adapters.upstream.UpstreamHooks`): its citation and the licences of its verbatim
material, the notes of its README and pull request, and the core modules and tasks the export leaves out.

Everything else of the exported folder is generated from the core (`tasks/robovista/core/task.py`) by the exporter:
the copied core, a `utils.py` of assignments from the shared glue, the YAMLs' metric blocks. Not carried (they stay
around the core in this project): release-schema overrides, skipping bad records, provenance, media integrity
checks, the decoded-media cache, the MCQ judge fallback, option permutations and the thinking-loop metrics.
"""

from __future__ import annotations

from lmms_agentic.adapters.upstream import Origin

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
LEFT_OUT_CORE: tuple[str, ...] = ()
DATA_FILES: tuple[str, ...] = ()

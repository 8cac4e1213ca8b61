"""What an upstream README must say about each benchmark's origin: the paper's BibTeX entry and the source and
licence of everything an export carries verbatim (prompts, parsers, tables).

Each entry is copied from the authors' own publication channel, named in `source`; a licence that the authors'
repository does not state is written as such (the pull request has to settle it, see `UPSTREAM_PR.md`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Origin:
    """A benchmark's citation and the provenance of its verbatim material."""

    bibtex: str
    bibtex_source: str
    verbatim: tuple[tuple[str, str, str], ...]
    """(what, where it comes from, its licence) for every verbatim prompt, parser or table."""


ORIGINS = {
    "robovista": Origin(
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
            ("prompts (system prompts, suffixes, confidence request, ICL layout; the YAMLs and `prompt.py`)",
             "github.com/Dimios45/robovista `benchmark/prompts.json`, `benchmark/run_benchmark.py`",
             "no licence file in that repository (all rights reserved by default): permission is requested in the "
             "pull request"),
            ("the two released answer parsers (`parity.py`)",
             "github.com/Dimios45/robovista `benchmark/run_benchmark.py`, `benchmark/run_benchmark_local.py`",
             "as above"),
            ("the dataset (`sy-xie/robovista`)", "the Hugging Face dataset card", "Apache-2.0"),
        ),
    ),
}

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
    paper_title: str = ""
    """The paper's title (empty: the benchmark manifest's description is used)."""
    reference_check: str = ("The parsers and prompts are the reference runner's; a full run reproducing the table "
                            "above is still to be done.")
    """What the README's checklist says about checking against the reference implementation."""


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
    "agentvqa": Origin(
        bibtex="""@misc{gupta2026agentvqa,
  title  = {AgentVQA: A Unified Benchmark for Agentic Visual Understanding},
  author = {Gupta and Konan and Yin and Sarch and Liu},
  note   = {University of Maryland and Princeton University; arXiv preprint},
}""",
        bibtex_source=("the paper's title page (the authors publish no BibTeX entry yet: full author names, year "
                       "and arXiv identifier are to be completed)"),
        verbatim=(
            ("the prompt layout and instruction (`prompt.py`, the YAMLs)",
             "written for this task from the paper's description (no official prompt file is published)",
             "the harness's licence (MIT)"),
            ("the domain and source names (`records.py`), the per-source sample counts",
             "the paper (Table 2, Fig. 2)", "facts from the paper, cited above"),
            ("the published numbers (section above)", "the paper, Table 1", "quoted with the citation above"),
            ("the dataset (`AgentVQA/AgentVQA`)", "the Hugging Face dataset card",
             "not stated on the card when this task was written (its pre-release pool `AgentVQA/AgentVQA_old` is "
             "MIT): to be confirmed with the authors in the pull request"),
        ),
        paper_title="AgentVQA: A Unified Benchmark for Agentic Visual Understanding",
        reference_check=("The authors publish no evaluation code: the prompt, the answer parser and the scoring "
                         "follow the paper's description; a full run reproducing the table above is still to be "
                         "done."),
    ),
}

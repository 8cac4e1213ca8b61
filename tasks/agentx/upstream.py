"""Agent-X's upstream export (`adapters.upstream.UpstreamHooks`): its citation and the licences of its verbatim
material, the notes of its README and pull request, the tasks left out and the data file its core reads.

Everything else of the exported folder is generated from the core (`tasks/agentx/core/task.py`) by the exporter:
the copied core, a `utils.py` of assignments from the shared glue (which reads the release's keyed `data.json` and
its `files/` from the dataset repository), the YAMLs' metric blocks. No judge is built into the exported tasks: the
judged metrics are unscored there (the README says how to judge the logged samples). Not carried (they stay around
the core in this project): release-schema overrides, bad-record screening, provenance, media integrity checks, the
judge client, cache and prompt fencing, the judge-coverage warnings, the thinking-loop metrics, the per-model
script tasks and the multi-turn tool tasks.
"""

from __future__ import annotations

from lmms_agentic.adapters.upstream import Origin

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
             '(PyAV), each after a `Frame{i}:` label. Each reply is parsed as a JSON trace, never executed. '
             'No judge runs in these tasks: they report the deterministic metrics (`toolset_f1_prog`, '
             '`format_error_rate`, `exact_match_acc`, `parse_failure_rate`, `err_*`), and the judged ones '
             '(`ground_s` ... `goal_acc`, `goal_imggen`) are unscored (NaN, `cov_*` 0). To score them, judge the '
             "logged samples (`--log_samples`: each sample's `ground_s` entry is the item's record, its parsed "
             'trace included) with the released prompts of `judge_prompts.py` through `judging.judge_item`, then '
             '`metrics.aggregate`.'),
    'lm-eval': '`av` must be installed for video tasks.',
}
DEPENDENCY_NOTES: dict[str, str] = {
    'lmms-eval': 'Video frames are decoded with PyAV (`av`, which lmms-eval installs).',
    'lm-eval': ('Video frames are decoded with PyAV (`av`), which no lm-eval extra installs: the pull request '
                'adds\nan extra (`agentx = ["av", "pillow"]`).'),
}
MEDIA_AT_REVISION = 'data.json and the media files'
PR_STEPS = ("- the BibTeX entry: copy the full author list from the authors' README;\n- a full run with the "
            "paper's judge (GPT-4o) on the logged samples whose `goal_acc` is within the published margin;\n")
LEFT_OUT_CORE: tuple[str, ...] = ()
DATA_FILES = ("toolmeta.json",)
"""Data files of the core the copied modules read (next to them)."""

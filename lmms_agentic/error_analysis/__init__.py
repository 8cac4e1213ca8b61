"""Failure analysis: the papers' error-mode studies as commands over any finished lmms-eval run.

``python -m lmms_agentic errors RUN_DIR`` gives every analysed prediction of a run (AgentVQA: each
incorrect one; RoboVista: every one) to a multimodal LLM judge with the model's visual input, the options, the gold
and chosen answers, the model's full reply and the metadata, and records the single most fitting error mode from the
benchmark's taxonomy with the judge's one-line reason; it writes the assignments, per-domain distributions with 95%
intervals, a figure per variant and a random subset for manual verification.  ``... agreement verify.csv`` reads the
verified labels back (accuracy, Cohen's kappa).

What a benchmark declares is ``lmms_agentic.judges.error_modes.ErrorModes``, returned by its package's ``error_modes()``
(``adapters/interface.py``). Modules: ``run`` (reading a run, documents, stratified sampling), ``judging``
(image-carrying requests on the shared judge layer, image-support declaration), ``output`` (CSV, distributions, figure,
verification export), ``agreement`` (judge vs verifier), ``commands`` (the command line).  Importing this package (or
``commands``) loads nothing heavy; a benchmark's ``error_modes`` imports ``lmms_agentic.judges.error_modes``.
"""

"""Reproducing the papers: running a model preset on a benchmark and comparing with the published numbers
(`command`), scoring logged replies again (`rescore`), Slurm sweeps beyond one node (`slurm`) and the
constant-letter baselines computed from gold letters (`baselines`). The model presets are `lmms_agentic.presets`."""

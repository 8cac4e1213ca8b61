"""Shared machinery used by more than one benchmark: the benchmark registry (`benchmarks`), canonical documents
(`schema`, `docs`), data location (`data`), the sample-record contract (`samples`), strict answer extraction
(`extract`, `text`), media and frames (`media`, `frames`, `lru`), coordinates, prompting, few-shot choice, statistics,
option permutations (`permutation`, `permutation_metrics`), thinking-loop detection (`loops`) and published reference
results (`reference`). Installed as `lmms_agentic.adapters`. Code used by one benchmark only lives in its folder.
"""

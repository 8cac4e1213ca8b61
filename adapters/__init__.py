"""The shared layer, used by more than one benchmark (installed as `lmms_agentic.adapters`).

- `core/`: the harness-neutral part every benchmark core may use (record contract, reply text, the strict
  extractor, prompting, coordinates, few-shot choice, per-task scores); standard library only.
- The plugin's machinery around the cores: the benchmark interface and registry (`interface`, `benchmarks`), data
  location (`data`), canonical documents (`documents`), schema overrides (`release_schema`), bad-record tolerance
  (`bad_records`), media and frames (`media`, `frames`, `lru`), the sample-record contract (`samples`), option
  permutations (`permutation`, `permutation_metrics`), thinking-loop detection (`loops`), provenance, intervals
  (`stats`) and published reference results (`reference`).

Code used by one benchmark only lives in its folder; `make lint` (import-linter) keeps `core/` free of the rest.
"""

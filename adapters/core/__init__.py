"""The harness-neutral shared core: what every benchmark's core (`tasks/<benchmark>/core/`) may use.

Standard library only (numpy and Pillow are allowed, none is needed yet), so both harnesses and an upstream copy of a
benchmark can carry these modules as they are: the record contract (`schema`), reply text handling (`text`), the
strict answer extractor (`extract`), prompt fragments (`prompting`), coordinate conventions (`coords`), seeded
example choice (`fewshot`) and per-task figures (`scores`). Nothing here reads files, the environment or a network;
`make lint` (import-linter) keeps it that way.
"""

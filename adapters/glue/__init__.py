"""Harness glue written once: any benchmark core (`adapters.core.task`) as lmms-eval's or lm-eval's task hooks.

`hub_media` reads media (dataset cells, files of the dataset repository, video frames), `dataset_docs` turns a
loaded split into a variant's documents, and `lmms_eval_glue` / `lm_eval_glue` give each harness's hooks. The
upstream exports copy these modules into one shared module per harness; nothing here is benchmark-specific.
"""

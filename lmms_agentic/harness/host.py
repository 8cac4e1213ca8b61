"""The one module that touches lmms-eval internals: zero-flag task discovery, data provenance in every results
file, and no retries of deterministic data errors.

Why this exists: lmms-eval 0.7 has no entry-point group for *tasks*, only for models
(`lmms_eval.models`), and its `LMMS_EVAL_PLUGINS` variable adds plugin tasks only after the
task index has been built (so it does not work from the CLI). lmms-eval does, however, load every
`lmms_eval.models` entry point when `lmms_eval.models` is first imported, which the CLI does
before it builds its `TaskManager`. `register()` is that entry point: it registers no model and
wraps `TaskManager.initialize_tasks` so that our task folder is appended to every task index.

More adjustments, made at the same moment and under the same guard:
- The agent loop of the tasks that ask for it (`adapters.agentic.switch`), installed once, at the first task index.
- `EvaluationTracker.save_results_aggregated` adds `{"lmms_agentic": {"version", "lmms_eval", "data", "judge",
  "agentic_loop"}}` to every results file (lmms-eval's release beside ours, since its `lmms_eval_version` is the launch
  folder's git commit); which agent loop ran, with its cohort count, when one did (`adapters.agentic.switch`); the judge
  configuration when one is set (never its key; `rescore` reuses it); what data each of our benchmarks
  actually used (Hub id and resolved commit, or local path and fingerprint; rows, excluded records, schema
  override; `adapters.provenance`).
- `ConfigurableTask.download` (which runs `process_docs`) is wrapped by lmms-eval in a retry of 5 attempts (2 s
  apart): a data or record error of ours is deterministic, so it is not retried and reaches the user once, with the
  benchmark, record, field and fix in its message.
- Every loguru record (lmms-eval's log) has secrets redacted before it is written: lmms-eval 0.7.3 logs
  `Evaluation tracker args: {..., 'token': 'hf_...'}` at INFO whenever `HF_TOKEN` is set. The values of the
  variables in `SECRET_ENV_VARS` and anything shaped like a Hugging Face token become `***`.

The wraps are guarded by the lmms-eval version they were written against. If the host is a different version or its
internals are not as expected, `register()` logs one warning that names the supported fallback
(`--include_path "$(python -m lmms_agentic tasks-dir)"`) and changes nothing. Set `LMMS_AGENTIC_AUTO_REGISTER=0` to
opt out of all five.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from lmms_agentic import tasks_dir

SUPPORTED_HOST_VERSIONS = ("0.7.",)
OPT_OUT_ENV = "LMMS_AGENTIC_AUTO_REGISTER"
_WRAPPED_MARKER = "__lmms_agentic_wrapped__"
SECRET_ENV_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                   "LMMS_AGENTIC_JUDGE_API_KEY", "AZURE_OPENAI_API_KEY")
_HF_TOKEN_SHAPE = re.compile(r"\bhf_[A-Za-z0-9]{20,}\b")

log = logging.getLogger("lmms_agentic")


def _fallback_hint() -> str:
    return (
        'run lmms-eval with --include_path "$(python -m lmms_agentic tasks-dir)" '
        "(or TaskManager(include_path=lmms_agentic.tasks_dir()) in Python)"
    )


def _with_our_tasks(include_path: str | list[str] | None) -> list[str]:
    """The caller's include paths plus ours, without duplicates, keeping the caller's order first."""
    paths = [include_path] if isinstance(include_path, str) else list(include_path or [])
    ours = tasks_dir()
    normalised = {os.path.realpath(p) for p in paths}
    if os.path.realpath(ours) not in normalised:
        paths.append(ours)
    return paths


def _host_problem() -> str | None:
    """Why the host cannot be extended automatically, or None when it can."""
    try:
        from importlib.metadata import version

        host_version = version("lmms_eval")
    except Exception as exc:  # the distribution metadata is missing or unreadable
        return f"cannot read the lmms-eval version ({exc})"
    if not host_version.startswith(SUPPORTED_HOST_VERSIONS):
        return f"lmms-eval {host_version} is not a version this hook was written for ({SUPPORTED_HOST_VERSIONS})"
    try:
        from lmms_eval.tasks import TaskManager
    except Exception as exc:
        return f"cannot import lmms_eval.tasks.TaskManager ({exc})"
    method = getattr(TaskManager, "initialize_tasks", None)
    if method is None or "include_path" not in inspect.signature(method).parameters:
        return "TaskManager.initialize_tasks(include_path=...) is not there"
    return None


def _copy_containers(value: Any) -> Any:
    """``value`` with every dict and list copied (recursively) and every other object shared."""
    if isinstance(value, dict):
        return {key: _copy_containers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_containers(item) for item in value]
    return value


@functools.cache
def _libyaml_loader(mode: str) -> Any:
    """lmms-eval's YAML loader (PyYAML's FullLoader with its ``!function`` constructor for ``mode``) on libyaml, or
    None when PyYAML was built without it or lmms-eval's constructors are not where this was written against."""
    import yaml
    from lmms_eval import utils

    base = getattr(yaml, "CFullLoader", None)
    constructor = getattr(utils, {"simple": "ignore_constructor", "full": "import_function"}.get(mode, ""), None)
    if base is None or constructor is None:
        return None

    class Loader(base):  # type: ignore[misc, valid-type]
        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self.name = getattr(stream, "name", "<stream>")  # (lmms-eval's import_function reads the file's folder)

    Loader.add_constructor("!function", constructor)
    return Loader


def _parse_yaml(original: Callable[..., Any], yaml_path: str, yaml_dir: Any, mode: str) -> Any:
    """What ``original`` (lmms-eval's load_yaml_config) returns for ``yaml_path``, with the file read by libyaml
    (the includes and data_files are still resolved by ``original``)."""
    import yaml

    loader = _libyaml_loader(mode)
    config = None  # (then ``original`` reads the file itself)
    if loader is not None:
        with open(yaml_path, "rb") as file:
            config = yaml.load(file, Loader=loader)
    return original(yaml_path=yaml_path, yaml_config=config, yaml_dir=yaml_dir, mode=mode)


@contextlib.contextmanager
def _yaml_parsed_once(folder: str) -> Iterator[None]:
    """While lmms-eval indexes tasks, parse each YAML file of ``folder`` once: every task YAML there includes the
    same templates (and a permutation task its base task), which lmms-eval's ``load_yaml_config`` re-reads with the
    pure-Python YAML parser for every includer.  Copies of the dicts and lists are handed out (callers delete
    "include" from the dict they get); the leaves are shared, as nothing mutates them (in lmms-eval's "simple" mode a
    ``!function`` leaf is a YAML node that ``copy.deepcopy`` would copy with its marks: 850 objects per config, half
    the cost of indexing our folder); each file is read by libyaml, with lmms-eval's loader class and constructors.
    Measured (perf/startup.py): the whole startup 1.12x -> about 1.05x plain lmms-eval with deep copies, 0.38 ->
    0.2 s for our folder with container copies; its parsing 0.25 -> 0.02 s with libyaml (startup 1.06x -> 0.98-1.03x
    in three runs)."""
    from lmms_eval import utils

    original = utils.load_yaml_config
    # (a prefix test first: lmms-eval's own 2,000 files must not pay for resolving links)
    roots = tuple({os.path.join(os.path.abspath(folder), ""), os.path.join(os.path.realpath(folder), "")})
    parsed: dict[tuple[str, str, str, int], Any] = {}

    def load_yaml_config(yaml_path: Any = None, yaml_config: Any = None, yaml_dir: Any = None,
                         mode: str = "full") -> Any:
        if yaml_config is None and yaml_path is not None and str(yaml_path).startswith(roots):
            # the path as spelled: lmms-eval resolves a template's relative data_files against the folder it was
            # reached through ("permutations/../benchmark.json"), so two spellings are two results
            key = (str(yaml_path), str(yaml_dir), mode, os.stat(yaml_path).st_mtime_ns)
            if key not in parsed:
                parsed[key] = _parse_yaml(original, str(yaml_path), yaml_dir, mode)
            return _copy_containers(parsed[key])
        return original(yaml_path=yaml_path, yaml_config=yaml_config, yaml_dir=yaml_dir, mode=mode)

    utils.load_yaml_config = load_yaml_config
    try:
        yield
    finally:
        utils.load_yaml_config = original


def install_task_path() -> bool:
    """Make every `TaskManager` index our tasks. Returns True when the hook is active."""
    if os.environ.get(OPT_OUT_ENV, "1").strip().lower() in {"0", "false", "no", "off"}:
        return False
    problem = _host_problem()
    if problem is not None:
        log.warning("lmms-agentic could not register its tasks automatically: %s. Instead, %s.",
                    problem, _fallback_hint())
        return False

    from lmms_eval.tasks import TaskManager

    original: Callable[..., Any] = TaskManager.initialize_tasks
    if getattr(original, _WRAPPED_MARKER, False):
        return True

    @functools.wraps(original)
    def initialize_tasks(self: Any, include_path: Any = None, include_defaults: bool = True) -> Any:
        _install_agentic_loop()
        with _yaml_parsed_once(tasks_dir()):
            return original(self, include_path=_with_our_tasks(include_path), include_defaults=include_defaults)

    setattr(initialize_tasks, _WRAPPED_MARKER, True)
    TaskManager.initialize_tasks = initialize_tasks
    _record_data_in_results()
    _no_retry_for_data_errors()
    _redact_secrets_in_host_log()
    return True


_AGENTIC_LOOP_INSTALLED: list[bool] = []


def _install_agentic_loop() -> None:
    """Once per process, at the first task index (lmms-eval's evaluator is fully imported by then; at the entry point
    it may still be importing): the agent loop of `adapters.agentic.switch`, which changes only the requests of the
    tasks that ask for it."""
    if _AGENTIC_LOOP_INSTALLED:
        return
    _AGENTIC_LOOP_INSTALLED.append(True)
    from lmms_agentic.adapters.agentic import switch

    switch.install_or_refuse()


def redact_secrets(text: str, environ: Any = None) -> str:
    """``text`` with the values of ``SECRET_ENV_VARS`` (from ``environ``, default ``os.environ``), every known
    secret of ``judges.secrets`` (secret-named variables, URL credentials) and every Hugging-Face-token-shaped
    string replaced by ``***``."""
    from lmms_agentic.judges.secrets import redactor

    env = os.environ if environ is None else environ
    for name in SECRET_ENV_VARS:
        value = env.get(name, "")
        if len(value) >= 8:  # a short value would redact ordinary words
            text = text.replace(value, "***")
    # every other secret-named variable and the credentials written into any URL (judge, model endpoint)
    text = redactor(environ=env).text(text)
    return _HF_TOKEN_SHAPE.sub("***", text)


def _redact_secrets_in_host_log() -> None:
    """Install a loguru patcher (chained after any existing one) that redacts every record's message."""
    from loguru import logger

    core = getattr(logger, "_core", None)
    previous = getattr(core, "patcher", None)
    if getattr(previous, _WRAPPED_MARKER, False):
        return

    def patcher(record: Any) -> None:
        if previous is not None:
            previous(record)
        record["message"] = redact_secrets(record["message"])

    setattr(patcher, _WRAPPED_MARKER, True)
    logger.configure(patcher=patcher)


def deterministic_errors() -> tuple[type[BaseException], ...]:
    """Our errors that a retry cannot fix (bad data, records, manifests, schema overrides, missing media)."""
    from lmms_agentic.adapters.benchmarks import ManifestError
    from lmms_agentic.adapters.core.schema import RecordError
    from lmms_agentic.adapters.data import DataLoadError
    from lmms_agentic.adapters.documents import ReleaseColumnsError
    from lmms_agentic.adapters.release_schema import SchemaOverrideError, UnknownLabelsError

    return (DataLoadError, RecordError, ManifestError, SchemaOverrideError, UnknownLabelsError, ReleaseColumnsError)


def _no_retry_for_data_errors() -> None:
    """Make lmms-eval's dataset-loading retry give up at once on our deterministic errors (re-raised as they are)."""
    from lmms_eval.api.task import ConfigurableTask

    retrying = getattr(ConfigurableTask.download, "retry", None)
    if retrying is None or getattr(retrying, _WRAPPED_MARKER, False):
        return
    import tenacity

    retrying.retry = tenacity.retry_all(retrying.retry, tenacity.retry_if_not_exception_type(deterministic_errors()))
    setattr(retrying, _WRAPPED_MARKER, True)


def _record_data_in_results() -> None:
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    original: Callable[..., Any] = EvaluationTracker.save_results_aggregated
    if getattr(original, _WRAPPED_MARKER, False):
        return

    @functools.wraps(original)
    def save_results_aggregated(self: Any, results: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        from lmms_agentic import __version__
        from lmms_agentic.adapters import provenance
        from lmms_agentic.adapters.agentic import switch
        from lmms_agentic.judges.config import judge_record

        used, agentic_loop = provenance.collected(), switch.record()
        if used or agentic_loop:
            results["lmms_agentic"] = {"version": __version__, "lmms_eval": _lmms_eval_version(), "data": used}
            if agentic_loop:
                results["lmms_agentic"]["agentic_loop"] = agentic_loop
            try:
                judge = judge_record()
            except (ValueError, KeyError) as exc:  # a malformed judge setting already stopped the judged tasks
                log.warning("judge configuration not recorded in the results (%s)", exc)
                judge = None
            if judge is not None:  # never the key (judges.config.judge_record)
                results["lmms_agentic"]["judge"] = judge
        return original(self, results, *args, **kwargs)

    setattr(save_results_aggregated, _WRAPPED_MARKER, True)
    EvaluationTracker.save_results_aggregated = save_results_aggregated
    _facts_from_aggregated_items()


def _facts_from_aggregated_items() -> None:
    """After lmms-eval aggregates a task's gathered items, hand them to `provenance.items_aggregated` (facts that an
    aggregation marked with `provenance.from_items` derives from them go into the results file; the aggregation
    itself writes nothing)."""
    from lmms_eval.evaluator_utils import TaskOutput

    original: Callable[..., Any] = TaskOutput.calculate_aggregate_metric
    if getattr(original, _WRAPPED_MARKER, False):
        return

    @functools.wraps(original)
    def calculate_aggregate_metric(self: Any, *args: Any, **kwargs: Any) -> Any:
        from lmms_agentic.adapters import provenance

        done = original(self, *args, **kwargs)
        aggregations = self.task.aggregation() if self.task is not None else {}
        for (metric, _), items in self.sample_metrics.items():
            if metric in aggregations:
                provenance.items_aggregated(aggregations[metric], items)
        return done

    setattr(calculate_aggregate_metric, _WRAPPED_MARKER, True)
    TaskOutput.calculate_aggregate_metric = calculate_aggregate_metric


def _lmms_eval_version() -> str:
    """lmms-eval's installed release (its own `lmms_eval_version` is the git commit of the launch folder)."""
    from importlib import metadata

    try:
        return metadata.version("lmms_eval")
    except metadata.PackageNotFoundError:
        return "not installed"


def register() -> list[Any]:
    """`lmms_eval.models` entry point: adds our task folder to the task index and registers the offline
    test model `agentic_scripted` (lmms_agentic.harness.offline_model) and `agentic_vllm` (vLLM with the presets'
    `enable_thinking` / `system_role` settings, lmms_agentic.presets.vllm_chat).

    lmms-eval swallows exceptions from entry points, so nothing here may raise: any surprise is
    reported as a single warning with the `--include_path` fallback.
    """
    try:
        install_task_path()
    except Exception as exc:  # never break the host's model registry
        log.warning("lmms-agentic task registration failed (%s). Instead, %s.", exc, _fallback_hint())
    try:
        from lmms_eval.models.registry_v2 import ModelManifest
    except Exception:  # another host version: the model is an extra, the tasks are what matter
        return []
    return [ModelManifest(model_id="agentic_scripted",
                          simple_class_path="lmms_agentic.harness.offline_model.ScriptedChoice"),
            ModelManifest(model_id="agentic_vllm", chat_class_path="lmms_agentic.presets.vllm_chat.AgenticVLLM")]

"""Writes the permutation-variant YAMLs described in `lmms_agentic.permuted` (`python -m lmms_agentic variants`).

Leaf tasks qualify when their resolved `metadata` has `mcq: true` and `n_options`; groups qualify when all their
subtasks qualify. Group variants average the same subtask metrics as the base group (same `weight_by_size`) for
the metrics that are means over questions; spreads and tests (`perm_std_acc`, `letter_bias_p`, letter excesses)
are reported per subtask and pooled over the whole benchmark by `python -m lmms_agentic report`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lmms_agentic.adapters import robustness
from lmms_agentic.permuted import FOLDER, HEADER, MODES, SEED, _read, base_config, task_files

GROUP_METRICS = ("orig_acc", "perm_mean_acc", "circular_acc", "consistency", "flip_rate")
ROBUSTNESS = "lmms_agentic.adapters.robustness"
INIT = '"""Generated option-permutation variants (see lmms_agentic.permuted)."""\n'


def _is_mcq(task: str) -> bool:
    metadata = base_config(task).get("metadata") or {}
    return bool(metadata.get("mcq")) and "n_options" in metadata


def _leaf_yaml(task: str, path: Path, mode: str) -> str:
    config = base_config(task)
    metrics = "\n".join(
        f"  - {{metric: {name}, aggregation: !function {ROBUSTNESS}.{name}, "
        f"higher_is_better: {str(name not in robustness.LOWER_IS_BETTER and not name.startswith('excess_')).lower()}}}"
        for name in robustness.metric_names(int(config["metadata"]["n_options"])))
    meta = config["metadata"]
    return (f"{HEADER}include: ../{path.name}\ntask: {task}_{mode}\n"
            f"process_docs: !function lmms_agentic.permuted.docs__{mode}__{task}\n"
            f"process_results: !function lmms_agentic.permuted.results__{mode}__{task}\n"
            f"metric_list:\n{metrics}\n"
            f"metadata:\n  version: {meta['version']}\n  mcq: true\n  n_options: {meta['n_options']}\n"
            f"  permutation_mode: {mode}\n  permutation_seed: {SEED}\n")


def _group_yaml(group: str, data: dict[str, Any], mode: str) -> str:
    weighted = bool(data["aggregate_metric_list"][0].get("weight_by_size", False))  # the headline metric's weighting
    subtasks = "\n".join(f"  - {task}_{mode}" for task in data["task"])
    metrics = "\n".join(f"  - {{metric: {name}, aggregation: mean, weight_by_size: {str(weighted).lower()}}}"
                        for name in GROUP_METRICS)
    return (f"{HEADER}group: {group}_{mode}\ntask:\n{subtasks}\naggregate_metric_list:\n{metrics}\n"
            f"metadata:\n  version: {data.get('metadata', {}).get('version', 1.0)}\n"
            f"  permutation_mode: {mode}\n  permutation_seed: {SEED}\n")


def render_all() -> dict[Path, str]:
    """Relative path (under the task folder) -> YAML text, for every variant."""
    root = Path(task_files()[next(iter(task_files()))]).parents[1]
    out: dict[Path, str] = {}
    leaves = {name for name, path in task_files().items() if "group" not in _read(path) and _is_mcq(name)}
    for name, path in task_files().items():
        data = _read(path)
        for mode in MODES:
            target = path.parent.relative_to(root) / FOLDER / f"{name}_{mode}.yaml"
            if name in leaves:
                out[target] = _leaf_yaml(name, path, mode)
            elif "group" in data and all(t in leaves for t in data["task"]):
                out[target] = _group_yaml(name, data, mode)
    return out


def write_all(root: Path) -> list[Path]:
    """Write the variants under `root` (the task folder), replacing stale generated files."""
    rendered = render_all()
    for folder in {root / path.parent for path in rendered}:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text(INIT)
        for stale in folder.glob("*.yaml"):
            stale.unlink()
    for path, text in rendered.items():
        (root / path).write_text(text)
    return sorted(root / path for path in rendered)

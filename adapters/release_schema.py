"""How a release's raw fields and label spellings map to what a benchmark's reader expects, with user overrides.

Releases and mirrors differ (a RoboVista copy with `question_id` and `choice_a`..`choice_e`, domain words like
"driving", AgentVQA's legacy domain names). Each benchmark declares a `ReleaseSchema` in its `release.py`: the raw
field each canonical field is read from (defaults), and for each label kind (e.g. `domain`) the canonical values with
the alternative spellings accepted out of the box. A user adapts a release without editing the package with a small
file, found next to the data (`<data folder>/lmms_agentic_schema.yaml`) or named by `LMMS_AGENTIC_SCHEMA_<BENCHMARK>`:

```yaml
fields:                 # canonical field: raw column (or a list of columns gathered into one list)
  id: question_id
  choices: [choice_a, choice_b, choice_c, choice_d, choice_e]
labels:                 # label kind: {spelling in the data: canonical value}
  domain:
    "Field robotics": agriculture
answer: letter          # how the gold answer is written, where the benchmark allows a choice
```

Unknown keys, canonical fields, label kinds or values are refused with an error naming the file and the key. Labels
are resolved for the whole table at once (`LabelResolver.check`), so an unknown spelling is reported with every other
unknown one, their row counts, and the override lines that would map them.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OVERRIDE_FILE = "lmms_agentic_schema.yaml"
ENV_PREFIX = "LMMS_AGENTIC_SCHEMA_"
TOP_KEYS = frozenset({"fields", "labels", "answer"})


class SchemaOverrideError(ValueError):
    """An override file is malformed; the message names the file and the key."""


class UnknownLabelsError(ValueError):
    """Label values no alias maps; the message lists each with its count and the override that would map it."""


def label_key(text: str) -> str:
    """The spelling-insensitive form of a label: lower-cased letters and digits ("Open Datasets" = "open_datasets")."""
    return re.sub(r"[^a-z0-9]+", "", text.lower())


@dataclass(frozen=True)
class LabelKind:
    """The canonical values of one label kind, and the extra spellings each accepts out of the box."""

    canonical: tuple[str, ...]
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    allow_empty: str | None = None
    """The canonical value an empty label stands for (None: empty is unknown)."""


@dataclass(frozen=True)
class ReleaseSchema:
    """A benchmark's defaults: canonical field -> raw field, label kinds, allowed answer formats."""

    benchmark: str
    fields: Mapping[str, str]
    labels: Mapping[str, LabelKind] = field(default_factory=dict)
    answer_formats: tuple[str, ...] = ()
    default_answer_format: str | None = None


@dataclass(frozen=True)
class ResolvedSchema:
    """Defaults merged with the user's override (if any)."""

    schema: ReleaseSchema
    fields: Mapping[str, str | tuple[str, ...]]
    label_overrides: Mapping[str, Mapping[str, str]]
    answer_format: str | None
    source: str
    """Where the override came from ("defaults" when none was found)."""

    def raw_field(self, canonical: str) -> str | tuple[str, ...]:
        return self.fields[canonical]

    def resolver(self, kind: str) -> LabelResolver:
        return LabelResolver(self.schema.benchmark, kind, self.schema.labels[kind],
                             self.label_overrides.get(kind, {}), self.source)

    def describe(self) -> dict[str, Any]:
        """Plain data for results files: what was applied."""
        return {"source": self.source, "fields": {k: list(v) if isinstance(v, tuple) else v
                                                  for k, v in self.fields.items()},
                "labels": {k: dict(v) for k, v in self.label_overrides.items()}, "answer": self.answer_format}


def _override_path(benchmark: str, data_root: Path | None, environ: Mapping[str, str]) -> Path | None:
    named = environ.get(f"{ENV_PREFIX}{benchmark.upper()}", "").strip()
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise SchemaOverrideError(f"{ENV_PREFIX}{benchmark.upper()}={named}: no such file")
        return path
    if data_root is not None and (data_root / OVERRIDE_FILE).is_file():
        return data_root / OVERRIDE_FILE
    return None


def _read(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # any parser error: say which file
        raise SchemaOverrideError(f"{path}: cannot parse the schema override ({exc})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SchemaOverrideError(f"{path}: the schema override must be a mapping with keys {sorted(TOP_KEYS)}")
    return data


def _check_fields(schema: ReleaseSchema, raw: Any, where: str) -> dict[str, str | tuple[str, ...]]:
    if not isinstance(raw, dict):
        raise SchemaOverrideError(f"{where}: 'fields' must map canonical fields to raw column names")
    out: dict[str, str | tuple[str, ...]] = {}
    for canonical, column in raw.items():
        if canonical not in schema.fields:
            raise SchemaOverrideError(f"{where}: fields.{canonical} is not a {schema.benchmark} field; known: "
                                      f"{', '.join(sorted(schema.fields))}")
        if isinstance(column, str) and column:
            out[canonical] = column
        elif isinstance(column, list) and column and all(isinstance(c, str) and c for c in column):
            out[canonical] = tuple(column)
        else:
            raise SchemaOverrideError(f"{where}: fields.{canonical} must be a column name or a list of them")
    return out


def _check_labels(schema: ReleaseSchema, raw: Any, where: str) -> dict[str, dict[str, str]]:
    if not isinstance(raw, dict):
        raise SchemaOverrideError(f"{where}: 'labels' must map label kinds to {{spelling: canonical value}}")
    out: dict[str, dict[str, str]] = {}
    for kind, mapping in raw.items():
        if kind not in schema.labels:
            raise SchemaOverrideError(f"{where}: labels.{kind} is not a {schema.benchmark} label kind; known: "
                                      f"{', '.join(sorted(schema.labels)) or 'none'}")
        if not isinstance(mapping, dict):
            raise SchemaOverrideError(f"{where}: labels.{kind} must map spellings to canonical values")
        allowed = schema.labels[kind].canonical
        for spelling, value in mapping.items():
            if value not in allowed:
                raise SchemaOverrideError(f"{where}: labels.{kind}.{spelling!s} = {value!r} is not one of "
                                          f"{', '.join(allowed)}")
        out[kind] = {str(k): str(v) for k, v in mapping.items()}
    return out


def resolve(schema: ReleaseSchema, data_root: str | Path | None = None,
            environ: Mapping[str, str] | None = None) -> ResolvedSchema:
    """The schema to read a release with: defaults, plus the user's override file when one is found."""
    env = os.environ if environ is None else environ
    path = _override_path(schema.benchmark, Path(data_root) if data_root else None, env)
    fields: dict[str, str | tuple[str, ...]] = dict(schema.fields)
    labels: dict[str, dict[str, str]] = {}
    answer = schema.default_answer_format
    if path is None:
        return ResolvedSchema(schema, fields, labels, answer, "defaults")
    data = _read(path)
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise SchemaOverrideError(f"{path}: unknown key(s) {unknown}; allowed: {sorted(TOP_KEYS)}")
    fields.update(_check_fields(schema, data.get("fields", {}), str(path)))
    labels = _check_labels(schema, data.get("labels", {}), str(path))
    if "answer" in data:
        if data["answer"] not in schema.answer_formats:
            raise SchemaOverrideError(f"{path}: answer = {data['answer']!r} is not one of "
                                      f"{', '.join(schema.answer_formats) or 'none (this benchmark has one format)'}")
        answer = str(data["answer"])
    return ResolvedSchema(schema, fields, labels, answer, str(path))


@dataclass
class LabelResolver:
    """Maps the spellings of one label kind to canonical values (aliases, then the user's override)."""

    benchmark: str
    kind: str
    spec: LabelKind
    overrides: Mapping[str, str]
    source: str
    _table: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        table = {label_key(value): value for value in self.spec.canonical}
        for value, spellings in self.spec.aliases.items():
            table.update({label_key(spelling): value for spelling in spellings})
        table.update({label_key(spelling): value for spelling, value in self.overrides.items()})
        self._table = table

    def get(self, label: object) -> str | None:
        """The canonical value of `label`, or None when no alias maps it."""
        text = "" if label is None else str(label)
        if not text.strip():
            return self.spec.allow_empty
        return self._table.get(label_key(text))

    def check(self, labels: Iterable[object]) -> None:
        """Raise one `UnknownLabelsError` listing every unmapped spelling with its count and the fix."""
        unknown = Counter(str(label) for label in labels if self.get(label) is None)
        if not unknown:
            return
        listed = ", ".join(f"{label!r} ({n} row{'s' if n != 1 else ''})" for label, n in unknown.most_common())
        choices = ", ".join(self.spec.canonical)
        lines = "\n".join(f'    "{label}": <one of: {choices}>' for label in sorted(unknown))
        where = (f"the override file {self.source}" if self.source != "defaults"
                 else f"<data folder>/{OVERRIDE_FILE} (or a file named by {ENV_PREFIX}{self.benchmark.upper()})")
        raise UnknownLabelsError(
            f"{self.benchmark}: unknown {self.kind} label(s) {listed}. Known {self.kind} values: {choices}. "
            f"If these are other spellings, map them in {where}:\nlabels:\n  {self.kind}:\n{lines}")


def gather(row: Mapping[str, Any], raw: str | Sequence[str]) -> Any:
    """A canonical field's value from a raw row: one column, or several gathered into a list (absent -> None)."""
    if isinstance(raw, str):
        return row.get(raw)
    return [row.get(column) for column in raw]


def present(columns: Iterable[str], raw: str | Sequence[str]) -> bool:
    names = set(columns)
    return raw in names if isinstance(raw, str) else all(column in names for column in raw)

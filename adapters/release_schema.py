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

Unknown keys, canonical fields, label kinds or values are refused with an error naming the file and the key, and so
is a spelling that already means another canonical value (`agriculture: domestic` would move every agriculture row
into domestic) unless the file says `remap_known_labels: true`. An empty label is mapped with `"": <value>`. The file
is read as UTF-8 (an error names the byte and line), at most 1 MiB, YAML without aliases (a few hundred bytes of
nested aliases expand to billions of values), and errors never print a value whole. Labels are resolved for the whole
table at once (`check_labels`), so an unknown spelling is reported with every other unknown one of every label kind,
their row counts, and the override lines that would map them.
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
RELABEL = "remap_known_labels"
"""Override key that allows mapping a spelling which already means another canonical value (moves its rows)."""
ENV_PREFIX = "LMMS_AGENTIC_SCHEMA_"
TOP_KEYS = frozenset({"fields", "labels", "answer", RELABEL})


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


#: the largest override file read (a few lines in practice)
MAX_OVERRIDE_BYTES = 1024 * 1024


def _short(value: object, limit: int = 80) -> str:
    """`repr(value)` cut to about `limit` characters, built without expanding nested values (a YAML value may be
    huge: errors must not print it)."""
    import reprlib

    shorter = reprlib.Repr()
    shorter.maxlevel, shorter.maxstring, shorter.maxother = 2, limit, limit
    shorter.maxlist = shorter.maxtuple = shorter.maxdict = shorter.maxset = 6
    text = shorter.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _yaml_loader(where: str) -> Any:
    """PyYAML's safe loader, refusing aliases (`*name`): a schema override needs none, and a few hundred bytes of
    nested aliases expand to billions of values ("billion laughs")."""
    import yaml

    class NoAliases(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event: Any = self.peek_event()  # type: ignore[no-untyped-call]
                raise SchemaOverrideError(f"{where}: line {event.start_mark.line + 1}: YAML aliases "
                                          f"(*{event.anchor}) are not allowed in a schema override; write the "
                                          "value out instead")
            return super().compose_node(parent, index)

    return NoAliases


def _read(path: Path) -> dict[str, Any]:
    try:
        size = path.stat().st_size
        if size > MAX_OVERRIDE_BYTES:
            raise SchemaOverrideError(f"{path}: {size} bytes is too large for a schema override (at most "
                                      f"{MAX_OVERRIDE_BYTES // 1024} KiB; it maps a few fields and labels)")
        raw = path.read_bytes()
    except OSError as exc:
        raise SchemaOverrideError(f"{path}: cannot read the schema override ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SchemaOverrideError(f"{path} is not UTF-8 text: byte {raw[exc.start]:#04x} at offset {exc.start} "
                                  f"(line {line}) cannot be decoded; re-save the file as UTF-8") from None
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.load(text, Loader=_yaml_loader(str(path)))  # a SafeLoader that refuses aliases
    except SchemaOverrideError:
        raise
    except RecursionError:
        raise SchemaOverrideError(f"{path}: the schema override nests too deep to read") from None
    except Exception as exc:  # any parser error: say which file
        raise SchemaOverrideError(f"{path}: cannot parse the schema override ({_short(str(exc), 300)})") from exc
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
            raise SchemaOverrideError(f"{where}: fields.{_short(canonical)} is not a {schema.benchmark} field; known: "
                                      f"{', '.join(sorted(schema.fields))}")
        if isinstance(column, str) and column:
            out[canonical] = column
        elif isinstance(column, list) and column and all(isinstance(c, str) and c for c in column):
            out[canonical] = tuple(column)
        else:
            raise SchemaOverrideError(f"{where}: fields.{canonical} must be a column name or a list of them")
    return out


def builtin_labels(kind: LabelKind) -> dict[str, str]:
    """Spelling-insensitive form -> canonical value of every spelling a label kind accepts out of the box."""
    table = {label_key(value): value for value in kind.canonical}
    for value, spellings in kind.aliases.items():
        table.update({label_key(spelling): value for spelling in spellings})
    return table


def _check_labels(schema: ReleaseSchema, raw: Any, where: str, relabel: bool = False) -> dict[str, dict[str, str]]:
    """The label overrides, each spelling checked: a known label kind, a canonical value, and, unless `relabel`
    (`remap_known_labels: true` in the file), not a spelling that already means another canonical value (remapping
    `agriculture: domestic` moves every row of one domain into another: refused unless asked for)."""
    if not isinstance(raw, dict):
        raise SchemaOverrideError(f"{where}: 'labels' must map label kinds to {{spelling: canonical value}}")
    out: dict[str, dict[str, str]] = {}
    for kind, mapping in raw.items():
        if kind not in schema.labels:
            raise SchemaOverrideError(f"{where}: labels.{_short(kind)} is not a {schema.benchmark} label kind; "
                                      f"known: {', '.join(sorted(schema.labels)) or 'none'}")
        if not isinstance(mapping, dict):
            raise SchemaOverrideError(f"{where}: labels.{kind} must map spellings to canonical values")
        allowed = schema.labels[kind].canonical
        builtin = builtin_labels(schema.labels[kind])
        for spelling, value in mapping.items():
            name = f"labels.{kind}.{_short(spelling) if not isinstance(spelling, str) else spelling}"
            if not isinstance(value, str) or value not in allowed:
                raise SchemaOverrideError(f"{where}: {name} = {_short(value)} is not one of {', '.join(allowed)}")
            meant = builtin.get(label_key(str(spelling))) if str(spelling).strip() else None
            if meant is not None and meant != value and not relabel:
                raise SchemaOverrideError(
                    f"{where}: {name} = {value!r} is refused: {str(spelling)!r} already means {meant!r} (a "
                    f"{schema.benchmark} {kind} or one of its accepted spellings), and remapping it would move "
                    f"every {meant!r} row to {value!r}. Map only spellings that mean nothing yet, or, if this data "
                    f"really uses {str(spelling)!r} for {value!r}, add `{RELABEL}: true` to the file")
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
    unknown = sorted(_short(key) for key in set(data) - TOP_KEYS)
    if unknown:
        raise SchemaOverrideError(f"{path}: unknown key(s) {', '.join(unknown)}; allowed: {sorted(TOP_KEYS)}")
    fields.update(_check_fields(schema, data.get("fields", {}), str(path)))
    relabel = data.get(RELABEL, False)
    if not isinstance(relabel, bool):
        raise SchemaOverrideError(f"{path}: {RELABEL} must be true or false, got {_short(relabel)}")
    labels = _check_labels(schema, data.get("labels", {}), str(path), relabel)
    if "answer" in data:
        if not isinstance(data["answer"], str) or data["answer"] not in schema.answer_formats:
            raise SchemaOverrideError(f"{path}: answer = {_short(data['answer'])} is not one of "
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
        table = builtin_labels(self.spec)
        table.update({label_key(spelling): value for spelling, value in self.overrides.items()})
        self._table = table

    def get(self, label: object) -> str | None:
        """The canonical value of `label`, or None when no alias maps it.  An empty (or missing) label is the kind's
        `allow_empty` value, else whatever an override maps `""` to."""
        text = "" if label is None else str(label)
        if not text.strip():
            return self.spec.allow_empty if self.spec.allow_empty is not None else self._table.get("")
        return self._table.get(label_key(text))

    def unknown(self, labels: Iterable[object]) -> str | None:
        """The description of every unmapped spelling with its count and the override lines that would map it, or
        None when every label is known."""
        unknown = Counter("" if label is None or not str(label).strip() else str(label)
                          for label in labels if self.get(label) is None)
        if not unknown:
            return None
        listed = ", ".join(f"{_short(label)} ({n} row{'s' if n != 1 else ''})" for label, n in unknown.most_common())
        choices = ", ".join(self.spec.canonical)
        lines = "\n".join(f"    {json.dumps(label, ensure_ascii=False)}: <one of: {choices}>"
                          for label in sorted(unknown))
        return (f"unknown {self.kind} label(s) {listed}. Known {self.kind} values: {choices}. "
                f"If these are other spellings, map them in {self.override_place()}:\nlabels:\n  {self.kind}:\n{lines}")

    def override_place(self) -> str:
        return (f"the override file {self.source}" if self.source != "defaults"
                else f"<data folder>/{OVERRIDE_FILE} (or a file named by {ENV_PREFIX}{self.benchmark.upper()})")

    def check(self, labels: Iterable[object]) -> None:
        """Raise one `UnknownLabelsError` listing every unmapped spelling with its count and the fix."""
        problem = self.unknown(labels)
        if problem is not None:
            raise UnknownLabelsError(f"{self.benchmark}: {problem}")


def check_labels(schema: ResolvedSchema, columns: Mapping[str, Iterable[object]]) -> None:
    """Raise ONE `UnknownLabelsError` listing the unmapped spellings of every label kind at once (`columns`: label
    kind -> its values in the table; kinds the table lacks are left out)."""
    problems = [problem for kind in schema.schema.labels if kind in columns
                if (problem := schema.resolver(kind).unknown(columns[kind])) is not None]
    if problems:
        raise UnknownLabelsError(f"{schema.schema.benchmark}: " + f"\n{schema.schema.benchmark}: ".join(problems))


def gather(row: Mapping[str, Any], raw: str | Sequence[str]) -> Any:
    """A canonical field's value from a raw row: one column, or several gathered into a list (absent -> None)."""
    if isinstance(raw, str):
        return row.get(raw)
    return [row.get(column) for column in raw]


def present(columns: Iterable[str], raw: str | Sequence[str]) -> bool:
    names = set(columns)
    return raw in names if isinstance(raw, str) else all(column in names for column in raw)

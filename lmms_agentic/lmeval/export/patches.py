"""Code appended to inlined modules in an exported task folder (see `bundle`): what differs from the plugin.

In lmms-agentic, data is located by the `LMMS_AGENTIC_DATA*` settings and the manifest and the Agent-X tool
catalogue are files of the installed package. An exported folder has neither: the harness loads the table named
by the task YAML (`dataset_path`), and the manifest and the catalogue travel inside `utils.py`.

- `adapters.data`: `use_harness_split(split)` hands the split the harness loaded to the loader; `locate` names the
  Hub dataset of the YAML (keyed by the split's fingerprint, so two different splits never share the canonical
  rows cached per process), and `load_split` returns the handed-over split. Media next to the table (videos,
  `data.json` + files) come from the Hub snapshot (`huggingface_hub.snapshot_download`, which reads the Hugging
  Face cache when `HF_HUB_OFFLINE=1`), as in the plugin.
- `adapters.benchmarks`: the benchmark's `benchmark.json`, inlined; `get` parses it with the plugin's own reader.
- any inlined module that declares `EXPORT_INLINED_FILES = {function: file next to the module}`: the function
  returns the file's text, inlined verbatim (e.g. a benchmark's tool catalogue).
- `lmeval.adapter` (lm-eval exports): document field names without the lmms-agentic prefix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

DATA = '''
# ---- exported task folder: the data comes from the harness (the task YAML's dataset_path) ----
_HARNESS_SPLITS = []


def use_harness_split(split):
    """Hand over the split the harness loaded; process_docs calls this before building the documents."""
    _HARNESS_SPLITS[:] = [split]


def locate(source, environ=None):
    where = source.hub_id + (f"@{source.revision}" if source.revision else "")
    if _HARNESS_SPLITS:
        where += f" (split {getattr(_HARNESS_SPLITS[0], '_fingerprint', id(_HARNESS_SPLITS[0]))})"
    return Location("hub", where, "dataset_path in the task YAML")


def mini_dir(benchmark):
    raise DataLoadError("the bundled mini splits are not part of an exported task folder")


def load_split(source, environ=None):
    if not _HARNESS_SPLITS:
        raise DataLoadError(f"{source.benchmark}: process_docs received no split from the harness")
    location = locate(source)
    if source.snapshot:
        location = replace(location, root=_snapshot(source))
    record_provenance(source, location, len(_HARNESS_SPLITS[0]))
    return _HARNESS_SPLITS[0], location
'''

MANIFEST = '''
# ---- exported task folder: the benchmark's manifest (benchmark.json), inlined ----
_MANIFEST = {manifest}


class _InlineManifest:
    """benchmark.json of this task folder, readable by read_manifest like the file it was."""

    parent = types.SimpleNamespace(name=_MANIFEST["name"])

    def read_text(self, encoding="utf-8"):
        return json.dumps(_MANIFEST)


def get(name, root=None):
    if name != _MANIFEST["name"]:
        raise KeyError(f"no benchmark named {{name!r}} in this task folder (it holds {{_MANIFEST['name']!r}})")
    return read_manifest(_InlineManifest())


def all_benchmarks(root=None):
    return {{_MANIFEST["name"]: get(_MANIFEST["name"])}}
'''

INLINED_FILE = '''
# ---- exported task folder: {file} (next to this module in lmms-agentic), verbatim ----
_INLINED_{function} = {text}


def {function}():
    return _INLINED_{function}
'''

ADAPTER = '''
# ---- exported task folder: document fields named without the lmms-agentic prefix ----
SYSTEM_FIELD = "system_prompt"
TASK_FIELD = "task_name"
'''


def _literal(value: Any) -> str:
    """A Python literal for JSON data (true/false/null as Python)."""
    return repr(value)


def _text_literal(text: str) -> str:
    """A raw triple-quoted literal when the text allows it (readable), else repr()."""
    if "'''" not in text and not text.endswith(("\\", "'")) and "\r" not in text:
        return f"r'''{text}'''"
    return repr(text)


class InlinedFile(NamedTuple):
    """A data file a module reads from its folder: ``function`` (no arguments) returns ``text``, the file's text."""

    function: str
    file: str
    text: str


def inlined_files(files: Sequence[InlinedFile]) -> str:
    """A patch that makes each file's function return the file's text."""
    return "".join(INLINED_FILE.format(file=f.file, function=f.function, text=_text_literal(f.text)) for f in files)


def patches(benchmark: str, manifest: Mapping[str, Any], inlined: Mapping[str, Sequence[InlinedFile]],
            lmeval: bool) -> dict[str, str]:
    """The patches of one export, by module name; ``inlined``: module name -> the files it reads."""
    found = {
        "lmms_agentic.adapters.data": DATA,
        "lmms_agentic.adapters.benchmarks": MANIFEST.format(manifest=_literal(json.loads(json.dumps(manifest)))),
    }
    for module, files in inlined.items():
        found[module] = found.get(module, "") + inlined_files(files)
    if lmeval:
        found["lmms_agentic.lmeval.bridge"] = ADAPTER
    return found

"""Inlining lmms-agentic modules into one file: no lmms-agentic import left, same behaviour, verbatim strings."""

from __future__ import annotations

import ast
import json
import sys
import types
from typing import Any

import pytest

from lmms_agentic.lmeval.export import bundle
from lmms_agentic.lmeval.export.patches import InlinedFile, patches


def _run(code: str) -> dict[str, Any]:
    """Execute a bundle as utils.py would (dataclasses need the module in sys.modules, see export.glue)."""
    namespace: dict[str, Any] = {"__name__": "bundle_under_test", "__file__": "/nowhere/utils.py"}
    sys.modules.setdefault("bundle_under_test", types.ModuleType("bundle_under_test"))
    exec(compile("from __future__ import annotations\nimport types\n" + code, "<bundle>", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def robovista() -> tuple[bundle.Bundle, dict[str, Any]]:
    built = bundle.build(["lmms_agentic.tasks.robovista.hooks", "lmms_agentic.tasks.robovista.core.metrics"])
    return built, _run(built.code)


def test_no_lmms_agentic_import_survives(robovista: tuple[bundle.Bundle, dict[str, Any]]) -> None:
    built, _ = robovista
    assert "lmms_agentic.adapters.core.extract" in built.modules and "lmms_agentic.judges.client" in built.modules
    for node in ast.walk(ast.parse(built.code)):
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("lmms_agentic") for a in node.names)
        if isinstance(node, ast.ImportFrom):
            assert not node.level and not (node.module or "").startswith("lmms_agentic"), ast.unparse(node)
    assert "# inlined from lmms_agentic/adapters/core/extract.py" in built.code
    modules = built.modules
    assert modules.index("lmms_agentic.adapters.core.schema") < modules.index("lmms_agentic.adapters.documents")


@pytest.mark.parametrize("reply", ["The answer is B.", "A robot arm holds it.", "<think>C?</think> Answer: D",
                                   "B and C", ""])
def test_inlined_parsers_behave_like_the_originals(robovista: tuple[bundle.Bundle, dict[str, Any]],
                                                   reply: str) -> None:
    from lmms_agentic.adapters.core.extract import extract_choice
    from lmms_agentic.tasks.robovista.core import parity

    _, namespace = robovista
    options = ["red", "green", "blue", "yellow", "purple"]
    inlined_parity = namespace["_tasks_robovista_core_parity"]
    for mode in parity.PARSER_MODES:
        assert inlined_parity.parse_answer(reply, options, mode).letter == parity.parse_answer(reply, options,
                                                                                                 mode).letter
    assert namespace["_adapters_core_extract"].extract_choice(reply, options).letter == extract_choice(reply,
                                                                                                  options).letter
    assert namespace["_adapters_core_scores"].mean_score([{"score": 100.0}, None, {"score": 0.0}]) == 50.0


def test_comments_and_multiline_strings_are_kept_verbatim() -> None:
    from lmms_agentic.tasks.agentx.core import release_data

    text = release_data.TOOLMETA_PATH.read_text(encoding="utf-8")
    manifest = json.loads((release_data.TOOLMETA_PATH.parents[1] / "benchmark.json").read_text())
    built = bundle.build(["lmms_agentic.tasks.agentx.core.release_data", "lmms_agentic.adapters.benchmarks"],
                         patches("agentx", manifest,
                                 {release_data.__name__: [InlinedFile("_toolmeta_text", "toolmeta.json", text)]},
                                 lmeval=False))
    namespace = _run(built.code)
    inlined = namespace["_tasks_agentx_core_release_data"]
    assert inlined.INSTRUCTION_TEMPLATE == release_data.INSTRUCTION_TEMPLATE
    assert inlined.instruction() == release_data.instruction(), "the catalogue travels inside the file"
    assert namespace["_adapters_benchmarks"].get("agentx").source.hub_id == "Tajamul21/Agent-X"
    assert "# The keys of toolmeta.json, in file order" in built.code


def test_global_becomes_nonlocal_and_the_module_state_is_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("LMMS_AGENTIC_JUDGE_BASE_URL", "LMMS_AGENTIC_JUDGE_MODEL", "LMMS_AGENTIC_JUDGE_PRESET"):
        monkeypatch.delenv(key, raising=False)
    built = bundle.build(["lmms_agentic.judges.client"])
    assert "nonlocal _default" in built.code and "global _default" not in built.code
    client = _run(built.code)["_judges_client"]
    assert client.default_client() is client.default_client()


def test_indent_leaves_the_lines_of_multiline_strings_alone() -> None:
    source = 'x = """a\nb"""\ny = f"""{x}\nc"""\nif x:\n    z = 1\n'
    assert bundle.indent(source) == '    x = """a\nb"""\n    y = f"""{x}\nc"""\n    if x:\n        z = 1\n'


def test_patches_must_name_bundled_modules() -> None:
    with pytest.raises(bundle.BundleError, match="outside the bundle"):
        bundle.build(["lmms_agentic.adapters.core.text"], {"lmms_agentic.adapters.data": "pass"})

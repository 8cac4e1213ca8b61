"""Agent-X protocol data: verbatim strings pinned by SHA-256 digests, counts, instruction assembly.

A digest mismatch means a transcription error: fix the transcription, never the expected digest.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from lmms_agentic.tasks.agentx.core import release_data
from lmms_agentic.tasks.agentx.core.release_data import (
    FORMAT_BLOCK_GPT,
    GENERATIVE_IDS,
    INSTRUCTION_TEMPLATE,
    LEGACY_ALIASES,
    TOOL_NAMES,
    instruction,
    toolmeta,
    toolmeta_json,
)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(("name", "length", "digest"), [
    ("toolmeta_json", 6818, "4537078cb50335fb6fc7969d383c2c97659d55e2f93438fe818449662f138d22"),
    ("INSTRUCTION_TEMPLATE", 409, "84d47fbb4b0851ac44496964b2fd6905f0268f68cb2817e374d02560b03b2d70"),
    ("FORMAT_BLOCK_GPT", 1914, "a36adeb20fc3d7d568ac159c0e797973ccc55ef38ffd84ee428d809ec774abc3"),
])
def test_verbatim_strings_match_the_release_digests(name: str, length: int, digest: str) -> None:
    text = toolmeta_json() if name == "toolmeta_json" else getattr(release_data, name)
    assert len(text) == length
    assert sha256(text) == digest


def test_toolmeta_json_is_default_json_dumps_of_the_file() -> None:
    assert toolmeta_json() == json.dumps(toolmeta())
    assert "\n" not in toolmeta_json()
    assert toolmeta_json().isascii()


def test_toolmeta_file_is_the_released_layout() -> None:
    text = release_data.TOOLMETA_PATH.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=2) + "\n"


def test_tool_names_are_the_catalogue_keys_in_file_order() -> None:
    catalogue = toolmeta()
    assert tuple(catalogue) == TOOL_NAMES
    assert len(TOOL_NAMES) == len(set(TOOL_NAMES)) == 14
    for name, entry in catalogue.items():
        assert entry["name"] == name
        assert list(entry) == ["name", "description", "inputs", "outputs"]


def test_toolmeta_returns_a_fresh_copy() -> None:
    first = toolmeta()
    first["OCR"]["name"] = "changed"
    del first["Calculator"]
    assert toolmeta()["OCR"]["name"] == "OCR"
    assert json.dumps(toolmeta()) == toolmeta_json()


def test_catalogue_is_loaded_lazily() -> None:
    code = ("from lmms_agentic.tasks.agentx.core import release_data as p; "
            "assert p._toolmeta_text.cache_info().currsize == 0; p.toolmeta(); "
            "assert p._toolmeta_text.cache_info().currsize == 1")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_legacy_aliases() -> None:
    assert len(LEGACY_ALIASES) == 10
    assert set(LEGACY_ALIASES.values()) <= set(TOOL_NAMES)
    assert not set(LEGACY_ALIASES) & set(TOOL_NAMES)
    assert LEGACY_ALIASES["TextToBbox"] == LEGACY_ALIASES["DetectGivenObject"] == "LocateObjectByText"
    assert LEGACY_ALIASES["ImageDescription"] == "SceneDescriber"


def test_generative_ids() -> None:
    assert len(GENERATIVE_IDS) == 222
    assert len(release_data._GENERATIVE_INTS) == len(set(release_data._GENERATIVE_INTS)) == 222
    assert list(release_data._GENERATIVE_INTS) == sorted(release_data._GENERATIVE_INTS)
    assert all(isinstance(key, str) and key == str(int(key)) for key in GENERATIVE_IDS)
    ints = {int(key) for key in GENERATIVE_IDS}
    assert min(ints) == 1 and max(ints) == 826
    assert 828 - len(GENERATIVE_IDS) == 606
    assert {"1", "8", "10", "826"} <= GENERATIVE_IDS
    assert not {"0", "19", "827"} & GENERATIVE_IDS


def test_template_details() -> None:
    assert INSTRUCTION_TEMPLATE.count("{TOOLMETA_JSON}") == INSTRUCTION_TEMPLATE.count("{FORMAT_BLOCK}") == 1
    assert "Each reasoning step should include: \n{FORMAT_BLOCK}" in INSTRUCTION_TEMPLATE
    assert INSTRUCTION_TEMPLATE.startswith("You are an intelligent multi-modal agent.")
    assert FORMAT_BLOCK_GPT.startswith('\n    "reasoning_step_format": [')
    assert FORMAT_BLOCK_GPT.endswith("            }\n        }\n")
    assert '"Provide a justification for the final answer."    \n' in FORMAT_BLOCK_GPT
    assert '"tool": "Scene Segmentation Tool"' in FORMAT_BLOCK_GPT  # the example's own `tool` key


def test_instruction_assembly() -> None:
    text = instruction()
    assert len(text) == 409 - len("{TOOLMETA_JSON}") - len("{FORMAT_BLOCK}") + 6818 + 1914 == 9112
    assert "{TOOLMETA_JSON}" not in text and "{FORMAT_BLOCK}" not in text
    head, _, tail = INSTRUCTION_TEMPLATE.partition("{TOOLMETA_JSON}")
    middle = tail.partition("{FORMAT_BLOCK}")[0]
    assert text == head + toolmeta_json() + middle + FORMAT_BLOCK_GPT
    assert text.count(toolmeta_json()) == 1
    assert text.endswith(FORMAT_BLOCK_GPT)
    assert "given as follows:\n" + toolmeta_json() + "\n\nYour objective" in text


def test_system_message_is_the_released_instruction_plus_two_newlines() -> None:
    """run_inference_gpt.py sends `instruction_prompt + '\\n\\n'` as the system message: byte for byte."""
    text = release_data.system_message()
    assert text.encode("utf-8") == instruction().encode("utf-8") + b"\n\n"
    assert len(text) == 9112 + 2 and text.endswith('"\n            }\n        }\n\n\n')
    assert sha256(text) == "05b1d46ab837be13d07547ca177ea9ed3bbc246e39371b2d82cefc8735bebd42"


def test_known_generative_list_mismatches_are_kept() -> None:
    """The list reproduces the published tables, so it is kept as released; the README names these ids."""
    assert {"336", "553", "584", "605", "615", "820"} == release_data.LISTED_TEXT_QUESTIONS
    assert release_data.LISTED_TEXT_QUESTIONS <= GENERATIVE_IDS
    assert {"43", "167", "578", "619", "732", "781", "803", "827"} == release_data.UNLISTED_BOX_QUESTIONS
    assert not release_data.UNLISTED_BOX_QUESTIONS & GENERATIVE_IDS
    readme = (release_data.TOOLMETA_PATH.parents[1] / "README.md").read_text(encoding="utf-8")
    for key in sorted(release_data.LISTED_TEXT_QUESTIONS | release_data.UNLISTED_BOX_QUESTIONS, key=int):
        assert f"{key}" in readme.partition("### Generative ids")[2].partition("\n## ")[0], key

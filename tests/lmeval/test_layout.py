"""Every generated task, one document each: what lm-eval's backends build from it is lmms-eval's user turn, part by
part (the text pieces, and each image at its place), with no loss of images.

lmms-eval's reference is the task's own `doc_to_messages` (what its chat backends send). lm-eval's side is built
by lm-eval's real code on the real task: `Task.fewshot_context` with the chat template, then
- the API backends (`local-chat-completions`, `openai-chat-completions`): `api_models.create_image_prompt`, as
  `TemplateAPI.generate_until` calls it (lmms-agentic's `runtime` puts each image at its placeholder);
- `hf-multimodal`: `HFMultimodalLM.apply_chat_template` (interleave on, its default), with the processor's own
  template replaced by a recorder of the chat it is given; `vllm-vlm` has the same method, checked by source.
The loopback end-to-end test (`test_e2e_harnesses.py`) checks the same on the wire, for the requests of a full run.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.lmeval import generate, runtime, tasks_dir
from lmms_agentic.lmeval.bridge import IMAGE_TOKEN, as_doc
from lmms_agentic.lmeval.sources import all_sources

lm_eval_tasks = pytest.importorskip("lm_eval.tasks", reason="pip install -e '.[lmeval]'")
api_models = pytest.importorskip("lm_eval.models.api_models", reason="pip install -e '.[lmeval]'")
TASKS = sorted(s.name for sources in all_sources().values() for s in sources if not s.is_group
               and s.name not in generate.unsupported(sources))
Part = tuple[str, Any]


def _merged(parts: Sequence[Part]) -> list[Part]:
    out: list[Part] = []
    for kind, value in parts:
        if kind == "text" and not value:
            continue
        if kind == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + value)
        else:
            out.append((kind, value))
    return out


def lmms_eval_turn(doc: Any) -> tuple[str, list[Part]]:
    """(system text, user parts) of lmms-eval's chat messages; images as their index in the user turn."""
    spec = as_doc(doc).spec
    system, parts, index = "", [], 0
    for message in spec.doc_to_messages(doc, spec.kwargs):
        content = message["content"]
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if message["role"] == "system":
                system += part["text"]
            elif part["type"] == "text":
                parts.append(("text", part["text"]))
            else:
                parts.append(("image", index))
                index += 1
    return system, _merged(parts)


@functools.cache
def _loaded() -> dict[str, Any]:
    manager = lm_eval_tasks.TaskManager(include_path=tasks_dir(), include_defaults=False,
                                        metadata={"max_images": 64})
    loaded: dict[str, Any] = manager.load(TASKS)["tasks"]
    return loaded


@pytest.fixture(scope="module")
def built(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        yield _loaded()


def _first(task: Any) -> Any:
    return next(iter(task.eval_docs))


def _chat(task: Any, doc: Any) -> list[dict[str, Any]]:
    """The chat lm-eval builds for the document (`--apply_chat_template`, zero-shot)."""
    rendered = task.fewshot_context(doc, 0, apply_chat_template=True,
                                    chat_template=lambda chat, add_generation_prompt=True: json.dumps(chat))
    chat: list[dict[str, Any]] = json.loads(rendered)
    return chat


def _api_turn(chat: list[dict[str, Any]], images: list[Any]) -> tuple[str, list[Part]]:
    sent = api_models.create_image_prompt(images, chat)
    system = "".join(m["content"] for m in sent if m["role"] == "system")
    parts: list[Part] = []
    pixels = [image.tobytes() for image in images]
    for part in sent[-1]["content"]:
        if part["type"] == "text":
            parts.append(("text", part["text"]))
        else:
            parts.append(("image", len([p for p in parts if p[0] == "image"])))
    assert len([p for p in parts if p[0] == "image"]) == len(pixels)
    return system, _merged(parts)


class _Recorder:
    def __init__(self) -> None:
        self.chat: list[dict[str, Any]] = []

    def apply_chat_template(self, chat: list[dict[str, Any]], **_: Any) -> str:
        self.chat = chat
        return ""


def _hf_turn(chat: list[dict[str, Any]]) -> tuple[str, list[Part]]:
    hf_vlms = pytest.importorskip("lm_eval.models.hf_vlms")
    recorder = _Recorder()
    model = types.SimpleNamespace(interleave=True, max_images=999, processor=recorder, chat_applied=False)
    hf_vlms.HFMultimodalLM.apply_chat_template(model, chat)
    system = "".join(p["text"] for m in recorder.chat if m["role"] == "system" for p in m["content"])
    parts: list[Part] = []
    for part in recorder.chat[-1]["content"]:
        parts.append(("text", part["text"]) if part["type"] == "text"
                     else ("image", len([p for p in parts if p[0] == "image"])))
    return system, _merged(parts)


def test_the_api_backends_get_the_interleaving_adjustment() -> None:
    import lmms_agentic.lmeval.task_functions  # noqa: F401  (what lm-eval imports when it loads a task)

    assert getattr(api_models.create_image_prompt, "lmms_agentic", False)


@pytest.mark.parametrize("name", TASKS)
def test_lm_eval_backends_get_lmms_evals_user_turn(built: dict[str, Any], name: str) -> None:
    task = built[name]
    doc = _first(task)
    system, reference = lmms_eval_turn(doc)
    images = task.doc_to_image(doc)
    assert sum(kind == "image" for kind, _ in reference) == len(images) > 0
    api_system, api = _api_turn(_chat(task, doc), list(images))
    assert api_system == system and api == reference, f"{name}: API request differs from lmms-eval's turn"
    hf_system, hf = _hf_turn(_chat(task, doc))
    assert hf_system == system and hf == reference, f"{name}: hf-multimodal chat differs from lmms-eval's turn"
    assert all(IMAGE_TOKEN not in value for kind, value in api if kind == "text")


def test_robovista_icl_examples_sit_next_to_their_images(built: dict[str, Any]) -> None:
    task = built["robovista_icl_seed0"]
    checked = 0
    for doc in list(task.eval_docs)[:6]:
        _, api = _api_turn(_chat(task, doc), list(task.doc_to_image(doc)))
        if not any(kind == "text" and "=== EXAMPLE ===" in value for kind, value in api):
            continue  # no example drawn for this question (the mini split's domain has no other question)
        checked += 1
        labels = [api[i - 1][1].rstrip("\n").rsplit("\n", 1)[-1] for i, (kind, _) in enumerate(api)
                  if kind == "image" and i and api[i - 1][0] == "text"]
        assert labels[0].startswith("[Image 1: Example") and labels[-1].startswith("[Image 2: Your")
        answer_at = next(i for i, (kind, value) in enumerate(api) if kind == "text" and "Answer: " in value)
        assert any(kind == "image" for kind, _ in api[:answer_at]), "the example's images come before its answer"
    assert checked >= 2


def test_other_requests_keep_lm_evals_own_layout() -> None:
    from PIL import Image

    plain = Image.new("RGB", (4, 4))
    chat = [{"role": "user", "content": f"{IMAGE_TOKEN} what is this?"}]
    sent = api_models.create_image_prompt([plain], json.loads(json.dumps(chat)))
    assert [p["type"] for p in sent[-1]["content"]] == ["image_url", "text"], "untagged images: lm-eval's layout"
    assert runtime.interleaved_content("no placeholder", [plain]) is None


def _method_source(path: Path, cls: str, name: str) -> str:
    tree = ast.parse(path.read_text())
    found = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls)
    method = next(n for n in found.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return "\n".join(ast.dump(statement) for statement in method.body)  # the body: annotations differ


def test_vllm_vlm_lays_out_the_chat_as_hf_multimodal() -> None:
    """vllm-vlm cannot be imported without vLLM; its `apply_chat_template` is checked to be hf-multimodal's."""
    hf_vlms = pytest.importorskip("lm_eval.models.hf_vlms")
    folder = Path(inspect.getfile(hf_vlms)).parent
    assert _method_source(folder / "vllm_vlms.py", "VLLM_VLM", "apply_chat_template") == \
        _method_source(folder / "hf_vlms.py", "HFMultimodalLM", "apply_chat_template")

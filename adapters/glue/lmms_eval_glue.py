"""lmms-eval's task hooks for any benchmark core (`adapters.core.task`), written once.

`LmmsEvalHooks(core, repo_id, revision)` gives what a task YAML names: `process_docs(variant)` per variant,
`doc_to_visual` / `doc_to_text` / `doc_to_messages` from the core's `Prompt` (`visuals`, `text_prompt`,
`chat_messages`; the task's `lmms_eval_specific_kwargs` are the prompt settings), `doc_to_target`,
`process_results(kind)` returning every metric the kind declares (None where an item does not count; the
aggregations skip it) and `aggregation(name)` per metric. Media come from `hub_media.HubMedia` (`video_mode:
native` hands videos over as files).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core.prompting import with_system_prompt
from lmms_agentic.adapters.core.task import CoreTask, Judge, Prompt
from lmms_agentic.adapters.glue.dataset_docs import keyed_rows, variant_docs
from lmms_agentic.adapters.glue.hub_media import HubMedia, LayoutMedia, VideoFile, converts_to_rgb, flat_media
from lmms_agentic.adapters.glue.scoring import ProcessResults, aggregation_function, results_function


def _visual(item: Any) -> Any:
    return item.path if isinstance(item, VideoFile) else item


def _content(parts: Sequence[Any]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, str):
            content.append({"type": "text", "text": part})
            continue
        for item in flat_media([part]):
            if isinstance(item, VideoFile):
                content.append({"type": "video", "url": item.path})
            else:
                content.append({"type": "image", "url": item})
    return content


def visuals(prompt: Prompt) -> list[Any]:
    """`doc_to_visual`: the prompt's images and frames in order, a video handed over as a file by its path."""
    return [_visual(item) for item in flat_media(prompt.parts)]


def chat_messages(prompt: Prompt, settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`doc_to_messages`: a system turn and one user turn of texts, images and videos in prompt order. With
    `system_role: false` the system text leads the user turn instead, followed by a blank line unless it already
    ends in whitespace (a released script's own layout, kept byte for byte)."""
    content = _content(prompt.parts)
    if not prompt.system:
        return [{"role": "user", "content": content}]
    if not settings.get("system_role", True):
        lead = prompt.system if prompt.system[-1:].isspace() else with_system_prompt(prompt.system, "")
        return [{"role": "user", "content": [{"type": "text", "text": lead}, *content]}]
    return [{"role": "system", "content": [{"type": "text", "text": prompt.system}]},
            {"role": "user", "content": content}]


def text_prompt(core: CoreTask, doc: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """`doc_to_text`, the prompt for text-only backends: the core's `text_prompt` where it has one, else the system
    text leading the user turn's texts. No media is read: lmms-eval hands this hook documents without their image
    columns, so the core's `MEDIA_FIELDS` missing from the document are laid out empty."""
    own = getattr(core, "text_prompt", None)
    if own is not None:
        return str(own(doc, settings))
    empty: dict[str, list[Any]] = {name: [] for name in getattr(core, "MEDIA_FIELDS", ()) if doc.get(name) is None}
    prompt = core.prompt({**doc, **empty}, settings, LayoutMedia())
    return with_system_prompt(prompt.system or "", "".join(prompt.texts()))


class PromptHooks:
    """`doc_to_visual`, `doc_to_text` and `doc_to_messages` of a core's `Prompt`; a subclass gives the core and how
    it reads media (`prompt`)."""

    core: CoreTask

    def prompt(self, doc: Mapping[str, Any], settings: Mapping[str, Any] | None) -> Prompt:
        raise NotImplementedError

    def doc_to_visual(self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
                      ) -> list[Any]:
        return visuals(self.prompt(doc, lmms_eval_specific_kwargs))

    def doc_to_text(self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
                    ) -> str:
        return text_prompt(self.core, doc, lmms_eval_specific_kwargs or {})

    def doc_to_messages(self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
                        ) -> list[dict[str, Any]]:
        settings = lmms_eval_specific_kwargs or {}
        return chat_messages(self.prompt(doc, settings), settings)


class LmmsEvalHooks(PromptHooks):
    """The lmms-eval hooks of one benchmark core reading its media from `repo_id` at `revision`."""

    def __init__(self, core: CoreTask, repo_id: str, revision: str, release_file: str | None = None) -> None:
        self.core = core
        self.repo_id = repo_id
        self.revision = revision
        self.release_file = release_file
        """A keyed JSON release read from the dataset repository instead of the loaded split (`dataset_docs`)."""

    def prompt(self, doc: Mapping[str, Any], settings: Mapping[str, Any] | None) -> Prompt:
        settings = settings or {}
        media = HubMedia(self.repo_id, self.revision, native_video=settings.get("video_mode") == "native",
                         rgb=converts_to_rgb(self.core))
        return self.core.prompt(doc, settings, media)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """The hooks themselves: the harness deep-copies task configs, whose hooks are this object's methods (its
        core is a module, which cannot be copied, and nothing in it changes)."""
        return self

    def rows(self, dataset: Any) -> Any:
        """The release rows: the loaded split, or the rows of the keyed release file."""
        if self.release_file is None:
            return dataset
        return keyed_rows(HubMedia(self.repo_id, self.revision).file(self.release_file))

    def process_docs(self, variant: str) -> Callable[[Any], Any]:
        def process_docs(dataset: Any) -> Any:
            return variant_docs(self.core, variant, self.rows(dataset))

        process_docs.__name__ = f"process_docs_{variant}"
        return process_docs

    @staticmethod
    def doc_to_target(doc: Mapping[str, Any]) -> str:
        return str(doc.get("answer", ""))

    def process_results(self, kind: str, judge: Callable[[], Judge | None] = lambda: None) -> ProcessResults:
        return results_function(self.core, kind, judge)

    def aggregation(self, name: str) -> Callable[[Sequence[Any]], float]:
        return aggregation_function(self.core, name)

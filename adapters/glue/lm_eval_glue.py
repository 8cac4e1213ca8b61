"""lm-eval's task hooks for any benchmark core (`adapters.core.task`), written once.

lm-eval's prompt hooks see only the document, so `LmEvalHooks.process_docs(variant, settings)` writes the task's
prompt settings into every document (`prompt_settings`, JSON) with its system text (`system_prompt`, which the YAML
names as `description`). `doc_to_image` gives the prompt's images in order (a video as its sampled frames: lm-eval
has no video input) and `doc_to_text` the user turn with one `<image>` placeholder per image where it stands
(lm-eval's multimodal convention, `DEFAULT_IMAGE_PLACEHOLDER` of its `hf-multimodal` model).
`process_results(kind)` returns every metric the task declares for every row, None where the item does not count
(the core's view; every aggregation skips None, and gives NaN for a task where no item counts). All metrics then
hold one value per document, so lm-eval's task-level sample count is the number of documents for every metric (no
"not scored on the same number of documents" warning) and a group weights each subtask by its documents on any
lm-eval version. The exported groups aggregate only metrics every row counts for (the headline and the rates), so a
breakdown that is NaN in one subtask never reaches a group mean. The aggregations are `aggregation(name)`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core.task import CoreTask, Judge, Prompt
from lmms_agentic.adapters.glue.dataset_docs import keyed_rows, variant_docs
from lmms_agentic.adapters.glue.hub_media import HubMedia, LayoutMedia, converts_to_rgb, flat_media
from lmms_agentic.adapters.glue.scoring import ProcessResults, aggregation_function, results_function

IMAGE_TOKEN = "<image>"
SETTINGS_FIELD = "prompt_settings"
SYSTEM_FIELD = "system_prompt"


def settings_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The prompt settings `process_docs` wrote into the document."""
    settings: dict[str, Any] = json.loads(doc[SETTINGS_FIELD])
    return settings


class LmEvalHooks:
    """The lm-eval hooks of one benchmark core reading its media from `repo_id` at `revision`."""

    def __init__(self, core: CoreTask, repo_id: str, revision: str, release_file: str | None = None) -> None:
        self.core = core
        self.repo_id = repo_id
        self.revision = revision
        self.release_file = release_file
        """A keyed JSON release read from the dataset repository instead of the loaded split (`dataset_docs`)."""
        self.layout = LayoutMedia()

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """The hooks themselves: the harness deep-copies task configs, whose hooks are this object's methods (its
        core is a module, which cannot be copied, and nothing in it changes)."""
        return self

    def rows(self, dataset: Any) -> Any:
        """The release rows: the loaded split, or the rows of the keyed release file."""
        if self.release_file is None:
            return dataset
        return keyed_rows(HubMedia(self.repo_id, self.revision).file(self.release_file))

    def process_docs(self, variant: str, settings: Mapping[str, Any]) -> Callable[[Any], Any]:
        """The documents of `variant`, each carrying the task's prompt settings and system text."""
        text = json.dumps(dict(settings), sort_keys=True)

        def fields(doc: dict[str, Any]) -> dict[str, Any]:
            return {SETTINGS_FIELD: text, SYSTEM_FIELD: self.core.prompt(doc, settings, self.layout).system or ""}

        def process_docs(dataset: Any) -> Any:
            return variant_docs(self.core, variant, self.rows(dataset), fields)

        process_docs.__name__ = f"process_docs_{variant}"
        return process_docs

    def prompt(self, doc: Mapping[str, Any]) -> Prompt:
        return self.core.prompt(doc, settings_of(doc), HubMedia(self.repo_id, self.revision,
                                                                rgb=converts_to_rgb(self.core)))

    def doc_to_image(self, doc: Mapping[str, Any]) -> list[Any]:
        """The prompt's images in order (a video's frames spread out)."""
        return flat_media(self.prompt(doc).parts)

    def doc_to_text(self, doc: Mapping[str, Any]) -> str:
        """The user turn: its texts, one `<image>` per image where it stands (no media decoded)."""
        parts = self.core.prompt(doc, settings_of(doc), self.layout).parts
        return "".join(part if isinstance(part, str) else IMAGE_TOKEN * len(flat_media([part])) for part in parts)

    @staticmethod
    def doc_to_target(doc: Mapping[str, Any]) -> str:
        return str(doc.get("answer", ""))

    def process_results(self, kind: str, judge: Callable[[], Judge | None] = lambda: None) -> ProcessResults:
        """Every metric of `kind` for one row, None where the item does not count (see the module docstring)."""
        return results_function(self.core, kind, judge)

    def aggregation(self, name: str) -> Callable[[Sequence[Any]], float]:
        return aggregation_function(self.core, name)

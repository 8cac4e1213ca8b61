"""What a benchmark declares for the error-mode analysis (the papers' judge-based error-mode studies).

A benchmark takes part by returning an ``ErrorModes`` from its package's ``error_modes()``
(``adapters/interface.py``; by convention it lives in ``tasks/<name>/error_study.py``): its taxonomy per domain,
which predictions are analysed (``population``), how to turn one logged prediction and its source document into a
judge request (``build``), how to restore the document as the model saw it (``prepare_doc``) and the paper's
published shares to compare with (``reference``). Nothing here names a benchmark.

Every judge template shares one reply format, built by ``mode_template``: a JSON object
``{"mode": "<a listed mode>", "reason": "<one sentence>"}`` read by the strict ``JsonObjectParser`` with the domain's
modes as a ``Choice`` (display name or key, case-insensitive), so a reply naming any other mode is a parse failure
(unscored), never a guess.  Mode keys are the slugs of the display names (``slug``), so a human verifier may write
either form.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from lmms_agentic.judges.rubric import Choice, JsonObjectParser, Text
from lmms_agentic.judges.templates import PromptTemplate

if TYPE_CHECKING:
    from PIL import Image

Population = Literal["incorrect", "all"]
ANY_DOMAIN = "*"
REPLY_FORMAT = (
    "Answer with exactly one JSON object and nothing else:\n"
    '{"mode": "<the name of the single most fitting mode, exactly as listed>", '
    '"reason": "<one sentence explaining the choice>"}'
)


def slug(text: str) -> str:
    """``"Action-Time Disconnect"`` -> ``"action_time_disconnect"`` (mode keys; verifiers may write either)."""
    return re.sub(r"[^a-z0-9]+", "_", text.strip().lower()).strip("_")


@dataclass(frozen=True)
class Mode:
    """One error mode: display name, definition for the judge, optional group (e.g. perception / reasoning)."""

    name: str
    definition: str
    group: str = ""

    @property
    def key(self) -> str:
        return slug(self.name)


CORRECT = Mode("Correct", "The prediction is correct (assigned without a judge call).")
"""The pseudo-mode of correct predictions when a benchmark analyses every prediction (``population="all"``)."""


@dataclass(frozen=True)
class Item:
    """One logged prediction of a run: its sample record, the model's full reply and where it was logged."""

    variant: str
    """The reported task or group (a group pools its subtasks)."""
    task: str
    """The lmms-eval task whose sample file holds the line."""
    record: Mapping[str, Any]
    reply: str
    """The model's full reply (lmms-eval's ``resps``: thinking included), or the filtered reply when identical."""
    correct_field: str
    """The record field the benchmark's headline counts (``correct``, RoboVista ``correct_parity``)."""

    @property
    def id(self) -> str:
        return str(self.record["id"])

    @property
    def benchmark(self) -> str:
        return str(self.record.get("benchmark", ""))

    @property
    def base_id(self) -> str:
        """The question's id in the dataset (a permutation row's ``group_id``)."""
        return str(self.record.get("group_id") or self.record["id"])

    @property
    def domain(self) -> str:
        return str(self.record.get("domain", ""))

    @property
    def source(self) -> str:
        return str(self.record.get("source", ""))

    @property
    def correct(self) -> bool:
        return bool(self.record.get(self.correct_field))

    @property
    def pred_field(self) -> str:
        """The letter that goes with ``correct_field`` (``correct_parity`` -> ``pred_parity``)."""
        name = "pred" + self.correct_field.removeprefix("correct")
        return name if name in self.record else "pred"

    @property
    def pred(self) -> str | None:
        value = self.record.get(self.pred_field)
        return None if value is None else str(value)

    @property
    def request_failed(self) -> bool:
        return bool(self.record.get("request_failed"))


@dataclass(frozen=True)
class JudgeInput:
    """What one judge call gets: a template, its field values and the visual input (in the order the model saw it)."""

    template: PromptTemplate
    values: Mapping[str, str]
    images: tuple[Image.Image, ...] = ()


Build = Callable[[Item, Mapping[str, Any], Mapping[str, Any], int | None], JudgeInput]
"""``build(item, doc, task_kwargs, video_frames)``: ``doc`` as the model saw it, ``task_kwargs`` the task's
``lmms_eval_specific_kwargs`` as logged in the results file, ``video_frames`` the judge's frame count (None: the
run's)."""


@dataclass(frozen=True)
class ErrorModes:
    """A benchmark's error-mode study."""

    benchmark: str
    title: str
    population: Population
    """``incorrect``: judge every incorrect prediction (AgentVQA); ``all``: every prediction, correct ones labelled
    ``CORRECT`` without a judge call, shares over all predictions (RoboVista's 143/474)."""
    modes: Mapping[str, tuple[Mode, ...]]
    """Domain -> its modes; ``ANY_DOMAIN`` for a taxonomy every domain shares."""
    build: Build
    prepare_doc: Callable[[Mapping[str, Any], Mapping[str, Any]], Mapping[str, Any]] = lambda doc, record: doc
    """``(doc, record) -> doc`` as the model saw it (variant settings the record logs)."""
    reference: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """(domain or ``all``, mode key or ``group:<name>``) -> the paper's share in percent."""
    reference_note: str = ""
    notes: tuple[str, ...] = ()
    """Assumptions printed with every summary."""

    def modes_for(self, domain: str) -> tuple[Mode, ...]:
        found = self.modes.get(domain) or self.modes.get(ANY_DOMAIN)
        if not found:
            raise KeyError(f"{self.benchmark}: no error taxonomy for domain {domain!r} "
                           f"(known: {', '.join(sorted(self.modes))})")
        return found

    @property
    def shared_taxonomy(self) -> bool:
        return set(self.modes) == {ANY_DOMAIN}

    def all_modes(self, domain: str) -> tuple[Mode, ...]:
        """The modes a domain's items can carry (``CORRECT`` first when every prediction is analysed)."""
        modes = self.modes_for(domain)
        return (CORRECT, *modes) if self.population == "all" else modes


def mode_template(template_id: str, version: str, intro: str, modes: Sequence[Mode], user: str,
                  trusted: Sequence[str]) -> PromptTemplate:
    """A judge template assigning one of ``modes``: static system prompt (``intro``, the numbered taxonomy with
    definitions, the reply format), ``user`` with ``{{field}}`` placeholders, the strict JSON reply parser."""
    lines = [intro.strip(), "", "Error modes:"]
    lines += [f"{i}. {m.name}: {m.definition}" for i, m in enumerate(modes, 1)]
    lines += ["", "Choose the single most fitting mode. If several apply, choose the one that first caused the wrong "
              "answer.", REPLY_FORMAT]
    names = tuple(dict.fromkeys([*(m.name for m in modes), *(m.key for m in modes)]))
    parser = JsonObjectParser(required={"mode": Choice(names), "reason": Text(nonempty=True)})
    return PromptTemplate(id=template_id, version=version, system="\n".join(lines), user=user, parser=parser,
                          trusted=frozenset(trusted), max_tokens=4096)


def mode_of(label: str, modes: Sequence[Mode]) -> Mode | None:
    """The mode a judge or a verifier named (display name or key, any case); None if none matches."""
    wanted = slug(label)
    return next((m for m in modes if m.key == wanted), None)

"""One logged sample line as an Inspect ``EvalSample`` (``python -m lmms_agentic export-inspect``; needs the
``[inspect]`` extra, imported only by ``viewer.inspect_export`` once it is installed).

- input: the prompt as the model got it, as chat messages: lmms-eval's logged ``input`` (one user message), or
  lm-eval's first request argument (the chat it rendered with ``--apply_chat_template``, else its text). The media
  the log names (lmms-eval's ``input_media``; the document's ``video`` and ``media`` in our lm-eval tasks) come first
  in the user message as image / video items holding the file's path (a bare name is looked up under the run's data
  folder); nothing is embedded: inline data and names no file matches become a one-line text note.
- messages: the input, then the reply; an executed-tools episode (``agentx_tools``: the record's ``rounds``) becomes
  one assistant message per round, a tool call and the tool's message (with the error when the call failed) for a
  call, the loop's correction as a user message for an unreadable reply. ``output`` is the last reply. A tool
  message carries the image its tool returned as the sample log keeps it: a PNG thumbnail (at most 256 px a side,
  ``returned_image``), checked and embedded as a data URI, the one inline image of the export.
- scores: one per metric of the log (``metrics``) that the line has a value for (``report.judged.line_value``): the
  number on the benchmark's scale (MCQ: 100 / 0; ``answer`` the letter the extractor read, ``explanation`` its rule
  and the gold letter); a judged metric carries the judge's verdict and reply (and its entry as metadata); one the
  judge did not score is unscored (NaN, which Inspect's metrics skip) with its reason, never 0; a composite view
  (``parts``) maps each part to its score. A metric the line does not count for, or one only defined over whole
  questions (permutation consistency, letter bias), gets no score. A permutation row's record metric counts its
  ``correct`` (as the viewer's overview does).
- metadata: the leaf task, doc_id, the viewer's status and why, the record's header and breakdown fields, error
  modes, permutation order, Agent-X steps and the record itself (less the rounds and judge entries carried above).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from inspect_ai.log import EvalSample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    ContentVideo,
    ModelOutput,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall, ToolCallError

from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.report.judged import line_value
from lmms_agentic.tasks.agentx.tools import returned_image
from lmms_agentic.viewer import samples

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp")
VIDEO_FORMATS: dict[str, Literal["mp4", "mpeg", "mov"]] = {".mp4": "mp4", ".mpeg": "mpeg", ".mpg": "mpeg",
                                                          ".mov": "mov"}
NOTE_CHARS = 120
"""A media reference quoted in a note is cut to this many characters."""
CALL_ERRORS: dict[str, Literal["parsing", "timeout", "unknown"]] = {
    "invalid_arguments": "parsing", "timeout": "timeout", "error": "unknown", "unavailable": "unknown"}
"""Round status of a failed call -> Inspect's tool error type."""


class MediaFinder:
    """The files a sample log names: a path as it is, a bare name under a document's own media folder or the run's
    data folders (indexed once by file name)."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = [root for root in roots if root.is_dir()]
        self._index: dict[str, Path] | None = None

    def find(self, name: str, folder: str | None = None) -> Path | None:
        path = Path(name.removeprefix("file://"))
        if path.is_absolute():
            return path if path.is_file() else None
        for root in [Path(folder)] if folder else []:
            if (root / path).is_file():
                return (root / path).resolve()
        for root in self.roots:
            if (root / path).is_file():
                return (root / path).resolve()
        return self._names().get(path.name)

    def _names(self) -> dict[str, Path]:
        if self._index is None:
            self._index = {}
            for root in self.roots:
                for folder, _, files in os.walk(root):
                    for file in files:
                        if file.lower().endswith(IMAGE_SUFFIXES + tuple(VIDEO_FORMATS)):
                            self._index.setdefault(file, Path(folder, file).resolve())
        return self._index


def media_references(line: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """The media the line names, and the document's own media folder (our lm-eval tasks' ``media_root``)."""
    logged = line.get("input_media")
    if isinstance(logged, list):
        return [item for item in logged if isinstance(item, str)], None
    doc = line.get("doc")
    if not isinstance(doc, Mapping):
        return [], None
    found = [doc["video"]] if isinstance(doc.get("video"), str) and doc["video"] else []
    media = doc.get("media")
    found += [item for item in media if isinstance(item, str) and item] if isinstance(media, list) else []
    root = doc.get("media_root")
    return found, root if isinstance(root, str) else None


def media_item(reference: str, finder: MediaFinder, folder: str | None) -> Content:
    """An image or video item holding the file's path (or URL), or a text note saying why it is not carried."""
    shown = reference if len(reference) <= NOTE_CHARS else reference[:NOTE_CHARS] + "..."
    if reference.startswith("data:"):
        return ContentText(text=f"[inline media of {len(reference):,} characters: not carried]")
    remote = reference.startswith(("http://", "https://"))
    path = None if remote else finder.find(reference, folder)
    if path is None and not remote:
        return ContentText(text=f"[media {shown}: no such file under the run's data folders]")
    location = reference if remote else str(path)
    suffix = Path(location.split("?")[0]).suffix.lower()
    if suffix in VIDEO_FORMATS:
        return ContentVideo(video=location, format=VIDEO_FORMATS[suffix])
    if suffix in IMAGE_SUFFIXES:
        return ContentImage(image=location)
    return ContentText(text=f"[media {shown}: not an image or video format Inspect shows]")


def prompt_turns(line: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of the prompt as the model got it (module docstring)."""
    text = line.get("input")
    if isinstance(text, str):
        return [("user", text)]
    first = _first_argument(line.get("arguments"))
    if isinstance(first, str):
        return _chat(first) or [("user", first)]
    return [("user", "" if first is None else json.dumps(first, ensure_ascii=False))]


def _first_argument(arguments: Any) -> Any:
    """lm-eval's prompt: ``{"gen_args_0": {"arg_0": prompt, "arg_1": generation kwargs, ...}}``."""
    request = next(iter(arguments.values()), None) if isinstance(arguments, Mapping) else arguments
    value = request.get("arg_0") if isinstance(request, Mapping) else request
    while isinstance(value, list) and value and isinstance(value[0], str | list):
        value = value[0]
    return value


def _chat(text: str) -> list[tuple[str, str]]:
    """The turns of a chat lm-eval rendered as JSON; [] when ``text`` is not one."""
    if not text.startswith("["):
        return []
    try:
        turns = json.loads(text)
    except json.JSONDecodeError:
        return []
    if not isinstance(turns, list) or not all(isinstance(t, Mapping) and "role" in t for t in turns):
        return []
    return [(str(turn["role"]), _content_text(turn.get("content"))) for turn in turns]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) if isinstance(part, Mapping) and part.get("type") == "text"
                       else f"[{part.get('type', 'media') if isinstance(part, Mapping) else 'media'}]"
                       for part in content)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def input_messages(line: Mapping[str, Any], finder: MediaFinder) -> list[ChatMessage]:
    """The prompt's messages, the media first in the first user message."""
    references, folder = media_references(line)
    media = [media_item(reference, finder, folder) for reference in references]
    messages: list[ChatMessage] = []
    for role, text in prompt_turns(line):
        if role == "system":
            messages.append(ChatMessageSystem(content=text))
        elif role == "assistant":
            messages.append(ChatMessageAssistant(content=text))
        else:
            messages.append(ChatMessageUser(content=[*media, ContentText(text=text)] if media else text))
            media = []
    if media:  # no user turn: the media stand alone
        messages.append(ChatMessageUser(content=list(media)))
    return messages


def round_messages(rounds: Sequence[Mapping[str, Any]], model: str) -> list[ChatMessage]:
    """An executed-tools episode as a multi-turn trace (module docstring)."""
    messages: list[ChatMessage] = []
    for entry in rounds:
        reply, observation = _text(entry.get("reply")), _text(entry.get("observation"))
        if entry.get("kind") != "call":
            messages.append(ChatMessageAssistant(content=reply, model=model))
            if entry.get("kind") != "final":  # an unreadable reply: the loop's correction is the next user turn
                messages.append(ChatMessageUser(content=observation))
            continue
        call_id, function = f"round_{entry.get('round')}", str(entry.get("tool") or "unknown_tool")
        arguments = entry.get("arguments")
        call = ToolCall(id=call_id, function=function,
                        arguments=dict(arguments) if isinstance(arguments, Mapping) else
                        {} if arguments is None else {"arguments": str(arguments)})
        messages.append(ChatMessageAssistant(content=reply, tool_calls=[call], model=model))
        status = str(entry.get("status"))
        error = ToolCallError(CALL_ERRORS.get(status, "unknown"), observation) \
            if status in samples.FAILED_CALL else None
        messages.append(ChatMessageTool(content=tool_content(observation, entry), tool_call_id=call_id,
                                        function=function, error=error))
    return messages


def tool_content(observation: str, entry: Mapping[str, Any]) -> str | list[Content]:
    """The tool message's content: the observation, then the image the tool returned as the sample log kept it (a
    PNG thumbnail, checked, as a data URI), or a note saying why it is not carried."""
    if not entry.get("image") or entry.get("returned_image") is None:
        return observation
    found = returned_image.read(entry["returned_image"])
    if isinstance(found, str):
        return [ContentText(text=observation), ContentText(text=f"[returned image {entry['image']}: {found}]")]
    return [ContentText(text=observation), ContentImage(image=found.data_uri())]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value, ensure_ascii=False)


def _top(benchmark: Benchmark | None) -> float:
    return 1.0 if benchmark is not None and benchmark.scale == "unit" else 100.0


def metric_score(line: Mapping[str, Any], metric: str, record: Mapping[str, Any],
                 benchmark: Benchmark | None) -> Score | None:
    """The line's score for ``metric`` (module docstring); None when it has none."""
    counts, value, judged = line_value(line, metric)
    own = metric == samples.record_metric(line)
    answer = _text(record.get("pred")) if own and "pred" in record else None
    explanation, metadata = _explain(metric, record, own)
    if own and not counts and "group_id" in record and isinstance(record.get("correct"), bool):
        return Score(value=_top(benchmark) if record["correct"] else 0.0, answer=answer, explanation=explanation)
    if not counts:
        return None
    if value is not None:
        return Score(value=value, answer=answer, explanation=explanation, metadata=metadata)
    view = line.get(metric)
    if isinstance(view, Mapping) and isinstance(view.get("parts"), Mapping):
        return _parts(view["parts"])
    if judged:
        return _unscored(samples._unscored_reason(line, metric, record), metadata, answer)
    return None


def _unscored(reason: str, metadata: dict[str, Any] | None, answer: str | None = None) -> Score:
    """NaN with the reason (newer Inspect versions read ``metadata.unscored_reason`` as the score's reason)."""
    return Score(value=math.nan, answer=answer, explanation=f"unscored: {reason}",
                 metadata={**(metadata or {}), "unscored_reason": reason})


def _parts(parts: Mapping[str, Any]) -> Score:
    """A composite metric: each part's score (None where the part is unscored, with its reason)."""
    values: dict[str, float | None] = {}
    missing = []
    for name, part in parts.items():
        number = part.get("score") if isinstance(part, Mapping) else None
        values[str(name)] = float(number) if isinstance(number, int | float) and not isinstance(number, bool) \
            else None
        if values[str(name)] is None:
            why = part.get("unscored_reason") if isinstance(part, Mapping) else None
            missing.append(f"{name}: {why or 'no score'}")
    if values and all(value is None for value in values.values()):
        return _unscored("; ".join(missing), {"parts": dict(parts)})
    return Score(value=values, explanation="composite of its parts" +
                 (f"; unscored parts: {'; '.join(missing)}" if missing else ""))


def _explain(metric: str, record: Mapping[str, Any], own: bool) -> tuple[str | None, dict[str, Any] | None]:
    """The judge's verdict on ``metric`` (its entry as metadata), else for the record metric what the extractor
    read, by which rule, and the gold answer."""
    for verdict in samples.verdicts(record):
        if verdict["metric"] == metric:
            return (f"{verdict['verdict']} by {verdict['judge']}; dimensions {verdict['dimensions']}; "
                    f"judge reply: {verdict['reason']}"), {"judge": dict(record["judge"][metric])}
    if not own:
        return None, None
    rows = [f"{name}: {value}" for name, value in samples.extraction(record) if value != "—"]
    rows += [f"gold: {_text(record['answer'])}"] if "answer" in record else []
    rows += ["request failed"] if record.get("request_failed") else []
    return "; ".join(rows) or None, None


def sample_metadata(line: Mapping[str, Any], task: str, record: Mapping[str, Any],
                    benchmark: Benchmark | None) -> dict[str, Any]:
    result = samples.outcome(line, benchmark)
    fields = samples.HEADER_FIELDS + (benchmark.breakdowns if benchmark is not None else ())
    found: dict[str, Any] = {"task": task, "doc_id": line.get("doc_id"), "benchmark": record.get("benchmark"),
                             "status": result.status, "why": result.why, "decided_by": result.metric,
                             **{name: record[name] for name in dict.fromkeys(fields) if name in record},
                             "error_modes": samples.error_modes(record), "loop": samples.looped(record)}
    if "group_id" in record:
        order = samples.permutation_row(record, "")
        order.pop("reply")
        found["permutation"] = {"group_id": record["group_id"], **order}
    if samples.steps(record):
        found["agentx_steps"] = samples.steps(record)
        found["agentx_final_answer"] = samples.final_answer(record)
    found["record"] = {key: value for key, value in record.items() if key not in ("rounds", "judge")}
    return found


def eval_sample(line: Mapping[str, Any], task: str, sample_id: str, metrics: Sequence[str], model: str,
                benchmark: Benchmark | None, finder: MediaFinder) -> EvalSample:
    """The sample line as an Inspect sample (module docstring)."""
    record = read_record(line) or {}
    prompt = input_messages(line, finder)
    rounds = samples.rounds(record)
    replies = round_messages(rounds, model) if rounds else \
        [ChatMessageAssistant(content=samples.reply_text(line), model=model)]
    final = _text(rounds[-1].get("reply")) if rounds else samples.reply_text(line)
    scores = {metric: score for metric in metrics
              if (score := metric_score(line, metric, record, benchmark)) is not None}
    target = record.get("answer", line.get("target"))
    return EvalSample(id=sample_id, epoch=1, input=prompt, target=_text(target), messages=[*prompt, *replies],
                      output=ModelOutput.from_content(model=model, content=final), scores=scores or None,
                      metadata=sample_metadata(line, task, record, benchmark))

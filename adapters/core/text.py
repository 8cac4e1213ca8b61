"""Text helpers every reader of model or judge output shares: the `<think>` split, the brace-span finder, and
`REQUEST_FAILED_PREFIX` (how lmms-eval marks the reply of a failed request).

- `answer_text(text, fallback_to_thinking=...)`: the part of a reply after the FIRST `</think>` (case-insensitive,
  `</think >` allowed). With `fallback_to_thinking=True` (strict answer extraction, trace parsing, judge replies), a
  reply whose tail is blank is read from its thinking instead (models that state the answer inside the think block
  and stop), and stray `<think>` / `</think>` markers are removed, keeping their content. With `False` (the RoboVista
  runner's rule) a blank tail stays blank and markers are kept.
- `split_at_think_close(text, exact=...)`: the split both use (and the RoboVista runner's parsers, with `exact=True`:
  only `</think>` as written, in any case).
- `brace_spans(text, ...)`: every brace-balanced `{...}` span in the order its closing brace appears. Quotes are
  tracked only inside braces (so prose apostrophes cannot hide a brace); a quote may be declared to end at a newline
  (model output, where an unterminated quote must not swallow the rest). `top_level=True` keeps only spans that are
  not inside an enclosing brace (an unclosed `{` encloses everything after it).

Both are single linear scans (no regular-expression backtracking), whatever the input.
"""

from __future__ import annotations

import re

__all__ = ["answer_text", "brace_spans", "split_at_think_close"]

_CLOSE_THINK = re.compile(r"</think\s*>", re.IGNORECASE)
_CLOSE_THINK_EXACT = re.compile("</think>", re.IGNORECASE)
_THINK_MARKER = re.compile(r"</?think\s*>", re.IGNORECASE)


REQUEST_FAILED_PREFIX = "[LMMS_EVAL_REQUEST_FAILED"
"""How lmms-eval marks a reply whose request failed (the backend gave up): never an answer."""

def split_at_think_close(text: str, *, exact: bool = False) -> tuple[str, str] | None:
    """(text before, text after) the FIRST closing think tag, or None without one. `exact=True` matches only
    `</think>` (any case), as the RoboVista runner does; otherwise `</think >` counts too."""
    close = (_CLOSE_THINK_EXACT if exact else _CLOSE_THINK).search(text)
    return None if close is None else (text[: close.start()], text[close.end():])


def answer_text(text: str, *, fallback_to_thinking: bool) -> str:
    """The reply without its reasoning block (see the module docstring for both policies)."""
    parts = split_at_think_close(text)
    if parts is None:
        return _THINK_MARKER.sub(" ", text) if fallback_to_thinking else text
    thinking, tail = parts
    if not fallback_to_thinking:
        return tail
    if not tail.strip():
        tail = thinking
    return _THINK_MARKER.sub(" ", tail)


def brace_spans(text: str, *, top_level: bool = False, quote_ends_at_newline: bool = True) -> list[tuple[int, int]]:
    """(start, end) of every balanced `{...}` span, ordered by closing brace (see the module docstring)."""
    stack: list[int] = []
    spans: list[tuple[int, int]] = []
    quote, escaped = "", False
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote or (quote_ends_at_newline and char == "\n"):
                quote = ""
        elif char in "\"'" and stack:
            quote = char
        elif char == "{":
            stack.append(index)
        elif char == "}" and stack:
            start = stack.pop()
            if not top_level or not stack:
                spans.append((start, index + 1))
    return spans

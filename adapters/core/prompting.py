"""Prompt pieces shared by every MCQ benchmark: option lines and simple-backend flattening.

Options are rendered one per line as `"{letter}. {text}"`, skipping empty option slots while the
other letters keep their original positions (RoboVista runner convention).
"""

from __future__ import annotations

from collections.abc import Sequence

from lmms_agentic.adapters.core.schema import LETTERS


def option_lines(options: Sequence[str]) -> str:
    """`A. first\\nB. second ...` for the non-empty options, letters fixed by position."""
    return "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(options) if text)


def mcq_text(question: str, options: Sequence[str], suffix: str) -> str:
    """The standard user text: question, a blank line, `Options:` and the option lines, then the suffix."""
    return f"{question}\n\nOptions:\n{option_lines(options)}\n\n{suffix}"


def with_system_prompt(system_prompt: str, text: str) -> str:
    """Text for backends or models without a system role: the system prompt leads the user text."""
    return f"{system_prompt}\n\n{text}" if system_prompt else text

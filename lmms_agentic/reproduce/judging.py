"""The judge of a rescore: the run's own by default, so a replay scores the judged metrics as the run did.

A run's results carry the judge configuration it used under ``lmms_agentic.judge`` (endpoint with credentials
masked, model, preset, decoding, temperature; never the key), built by ``judges.config.judge_record`` for lmms-eval,
lm-eval and reproduce runs alike. ``rescore`` picks its judge with ``choose``:

- ``--judge none``: no judge; the judged metrics are left unscored (NaN), on purpose;
- a judge set in the environment (``LMMS_AGENTIC_JUDGE_PRESET``, or ``_BASE_URL`` and ``_MODEL``) wins;
- else the run's recorded judge, applied through the same variables (the key, if the endpoint needs one, comes from
  ``LMMS_AGENTIC_JUDGE_API_KEY``; with the judge cache the verdicts are read back and nothing is sent);
- a run whose samples hold judge verdicts but whose results do not say where the judge was stops with the fix,
  instead of turning its judged metrics into NaN.

``summary`` counts the new run's verdicts: ``judge M: N verdicts, N cached, N sent``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lmms_agentic.judges.config import judge_record

if TYPE_CHECKING:
    from lmms_agentic.report.runs import Run

PREFIX = "LMMS_AGENTIC_JUDGE_"
ENDPOINT_VARIABLES = (PREFIX + "PRESET", PREFIX + "DECODING", PREFIX + "BASE_URL", PREFIX + "MODEL",
                      PREFIX + "API_VERSION")
CHOICES = ("run", "none")


class JudgeChoiceError(ValueError):
    """The run's judged metrics cannot be scored again as they were (one line with the fix)."""


@dataclass(frozen=True)
class Choice:
    """The judge a rescore uses: ``source`` is ``none``, ``environment`` or ``run``; ``record`` what is stored."""

    source: str
    record: dict[str, Any] | None
    settings: dict[str, str]
    """The judge variables to set for the replay (every endpoint variable; "" removes one)."""

    def line(self) -> str:
        if self.record is None:
            return ("judge: none (--judge none): the judged metrics are left unscored" if self.source == "none" else
                    "judge: none configured (the run's samples hold no judge verdict)")
        where = {"environment": "from the environment", "run": "the run's, from its results"}[self.source]
        return f"judge: {describe(self.record)} ({where})"


def describe(record: Mapping[str, Any]) -> str:
    preset = f" (preset {record['preset']}, {record.get('decoding') or 'pinned'})" if record.get("preset") else ""
    return f"{record.get('model')} at {record.get('base_url')}{preset}"



def stored(results: Mapping[str, Any]) -> dict[str, Any] | None:
    """The judge configuration a results file records (``lmms_agentic.judge``), or None."""
    found = (results.get("lmms_agentic") or {}).get("judge")
    return dict(found) if isinstance(found, Mapping) and found.get("model") else None


def _judge_results(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every judge result (a dict with ``unscored_reason`` and the judge model) inside a sample line."""
    if isinstance(value, Mapping):
        if "unscored_reason" in value and ("judge_model_requested" in value or "judge_model" in value):
            yield value
            return
        for inner in value.values():
            yield from _judge_results(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _judge_results(inner)


def verdicts(run: Run) -> list[Mapping[str, Any]]:
    """The judge results in a run's sample logs (each judged metric of each item once: the record's copy)."""
    from lmms_agentic.adapters.samples import read_record

    found: list[Mapping[str, Any]] = []
    for task in run.results.get("results", {}):
        for line in run.lines(task):
            record = read_record(line)
            found += list(_judge_results(record if record is not None else line))
    return found


def _requested_models(found: list[Mapping[str, Any]]) -> list[str]:
    return sorted({str(r.get("judge_model_requested") or r.get("judge_model")) for r in found
                   if r.get("unscored_reason") is None and (r.get("judge_model_requested") or r.get("judge_model"))})


def choose(run: Run, option: str = "run", environ: Mapping[str, str] | None = None) -> Choice:
    """The judge for replaying ``run`` (see the module docstring); raises JudgeChoiceError with the fix."""
    env = os.environ if environ is None else environ
    clear = dict.fromkeys(ENDPOINT_VARIABLES, "")
    if option == "none":
        return Choice("none", None, clear)
    if option != "run":
        raise JudgeChoiceError(f"--judge {option!r}: expected one of {', '.join(CHOICES)}")
    current = judge_record(env)
    if current is not None:
        return Choice("environment", current, {})
    recorded = stored(run.results)
    if recorded is not None:
        if "***" in str(recorded.get("base_url")):
            raise JudgeChoiceError(f"the run's judge endpoint {recorded['base_url']} held credentials, which are not "
                                   f"stored: set {PREFIX}BASE_URL (and {PREFIX}MODEL={recorded['model']}), or pass "
                                   "--judge none to leave the judged metrics unscored")
        settings = {**clear, PREFIX + "BASE_URL": str(recorded["base_url"]), PREFIX + "MODEL": str(recorded["model"])}
        if recorded.get("preset"):
            settings.update({PREFIX + "PRESET": str(recorded["preset"]),
                             PREFIX + "DECODING": str(recorded.get("decoding") or "pinned")})
        if recorded.get("api_version"):
            settings[PREFIX + "API_VERSION"] = str(recorded["api_version"])
        return Choice("run", recorded, settings)
    models = _requested_models(verdicts(run))
    if models:
        raise JudgeChoiceError(
            f"{run.results_file}: its judged metrics were scored by {', '.join(models)}, but the results do not record "
            f"the judge's endpoint (a run from before lmms-agentic recorded it); without a judge every judged metric "
            f"would become NaN. Set {PREFIX}PRESET, or {PREFIX}BASE_URL and {PREFIX}MODEL, as for the run (the "
            "judge cache answers what it holds without sending), or pass --judge none to leave them unscored")
    return Choice("environment", None, {})


def apply(choice: Choice, environ: MutableMapping[str, str]) -> dict[str, str | None]:
    """Set the choice's judge variables in ``environ``; returns what to restore (None: remove)."""
    previous = {name: environ.get(name) for name in choice.settings}
    for name, value in choice.settings.items():
        if value:
            environ[name] = value
        else:
            environ.pop(name, None)
    return previous


def restore(previous: Mapping[str, str | None], environ: MutableMapping[str, str]) -> None:
    for name, value in previous.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value


def summary(run: Run) -> str | None:
    """``judge M: N verdicts, N cached, N sent`` (plus the unscored by reason) for a run's samples; None unjudged."""
    found = verdicts(run)
    if not found:
        return None
    scored = [r for r in found if r.get("unscored_reason") is None]
    cached = sum(1 for r in found if r.get("cached"))
    sent = sum(1 for r in found if not r.get("cached") and int(r.get("attempts") or 0) > 0)
    unscored = Counter(str(r.get("unscored_reason")) for r in found if r.get("unscored_reason") is not None)
    models = ", ".join(_requested_models(found)) or "(none)"
    line = f"judge {models}: {len(scored)} verdicts, {cached} cached, {sent} sent"
    if unscored:
        line += "; unscored: " + ", ".join(f"{count} {reason}" for reason, count in sorted(unscored.items()))
    return line

"""Constant-letter baselines computed from the gold letters alone, without a model.

"Always A" scores exactly the share of gold "A" answers, so these are the floors any model is
compared against (AgentVQA App. F: 28 / 27 / 23 / 22% on the real data). For each letter the table
gives the accuracy per domain, the micro average over all rows and the macro average over domains
(AgentVQA's overall score is the macro average). Data is located as for an evaluation
(`LMMS_AGENTIC_DATA`), through the benchmark's own `process_docs` loader.
"""

from __future__ import annotations

from collections import Counter

from lmms_agentic.adapters import benchmarks


def gold_letters(benchmark: str) -> list[tuple[str, str]]:
    """(domain, gold letter) for every row of an MCQ benchmark, loaded like an evaluation would."""
    if not benchmarks.get(benchmark).mcq:
        raise ValueError(f"{benchmark} is not a multiple-choice benchmark; choose one of "
                         f"{', '.join(benchmarks.mcq_benchmarks())}")
    docs = benchmarks.get(benchmark).package().load_docs()
    return list(zip(docs["domain"], docs["answer"], strict=True))


def constant_letter_table(rows: list[tuple[str, str]], letters: str) -> dict[str, dict[str, float]]:
    """letter -> {domain: accuracy %, "micro": ..., "macro": ...} for the strategy "always <letter>"."""
    per_domain: dict[str, Counter[str]] = {}
    for domain, letter in rows:
        per_domain.setdefault(domain, Counter())[letter] += 1
    table = {}
    for letter in letters:
        shares = {d: 100.0 * c[letter] / sum(c.values()) for d, c in sorted(per_domain.items())}
        table[letter] = {**shares, "micro": 100.0 * sum(g == letter for _, g in rows) / len(rows),
                         "macro": sum(shares.values()) / len(shares)}
    return table


def render(benchmark: str, table: dict[str, dict[str, float]]) -> str:
    columns = list(next(iter(table.values())))
    lines = [f"Constant-letter baselines for {benchmark} (accuracy %, from gold letters; no model)",
             "| strategy | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    lines += [f"| always {letter} | " + " | ".join(f"{v:.1f}" for v in row.values()) + " |"
              for letter, row in table.items()]
    return "\n".join(lines)


def main(benchmark: str) -> str:
    rows = gold_letters(benchmark)
    letters = "".join(sorted({letter for _, letter in rows}))
    return render(benchmark, constant_letter_table(rows, letters))

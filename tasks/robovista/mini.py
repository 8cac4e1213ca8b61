"""Builds RoboVista's bundled mini split: 21 self-made items with the real field names and types.

The images are drawn with Pillow (no real data is shipped). Items cover the six domains plus one
row with empty `domain`/`ability_type` (as 6 real rows have), every ability type, 1-3 images of
modes RGB/RGBA/P/L and sizes above and below the 720 px preprocessing limit, one item with an
empty option slot, and gold letters A-E. The split is written as the Hub lays it out
(`data/train-00000-of-00001.parquet`) so the same loader reads the mini split and a local copy.

Regenerate with `python -m lmms_agentic.tasks.robovista.mini tasks/robovista/data/mini`; a test checks
that the committed file matches this builder.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

COLOURS = {"red": (200, 40, 40), "green": (40, 160, 60), "blue": (40, 70, 200), "yellow": (220, 200, 40),
           "purple": (130, 60, 160)}
ORDER = ["red", "green", "blue", "yellow", "purple"]

# (domain, task, ability_type, gold colour index, image sizes, image mode)
PLAN: list[tuple[str, str, str, int, list[tuple[int, int]], str]] = [
    ("agriculture", "weed removal", "scene_understanding", 0, [(1280, 720)], "RGB"),
    ("agriculture", "weed removal", "high_level_decision_making", 1, [(640, 480), (640, 480)], "RGB"),
    ("agriculture", "plant inspection", "scene_understanding", 2, [(800, 1200)], "RGBA"),
    ("autonomous_driving", "self-driving in mcity", "scene_understanding", 0, [(1600, 900)], "RGB"),
    ("autonomous_driving", "self-driving in mcity", "low_level_motion_awareness", 3, [(960, 540)] * 3, "RGB"),
    ("domestic", "domestic tidying", "scene_understanding", 0, [(640, 480)], "P"),
    ("domestic", "domestic tidying", "physical_interaction", 4, [(720, 720)], "RGB"),
    ("domestic", "garment manipulation", "recovery_replanning_robustness", 1, [(500, 375), (500, 375)], "RGB"),
    ("industrial_manufacturing", "bin picking", "scene_understanding", 2, [(1024, 768)], "L"),
    ("industrial_manufacturing", "bin picking", "high_level_decision_making", 0, [(1024, 768)], "RGB"),
    ("industrial_manufacturing", "assembly", "low_level_motion_awareness", 3, [(640, 640)] * 2, "RGB"),
    ("industrial_manufacturing", "1d deformable", "scene_understanding", 1, [(721, 400)], "RGB"),
    ("surgical_robotics", "knot tying", "scene_understanding", 2, [(1920, 1080)], "RGB"),
    ("surgical_robotics", "knot tying", "physical_interaction", 0, [(640, 512)], "RGB"),
    ("surgical_robotics", "debridement", "high_level_decision_making", 4, [(640, 512)] * 3, "RGB"),
    ("open_datasets", "droid", "scene_understanding", 0, [(1280, 720)], "RGB"),
    ("open_datasets", "droid", "recovery_replanning_robustness", 3, [(320, 240)], "RGB"),
    ("open_datasets", "open x-embodiment", "scene_understanding", 1, [(640, 360), (640, 360)], "RGB"),
    ("open_datasets", "open x-embodiment", "low_level_motion_awareness", 2, [(640, 360)], "RGB"),
    ("open_datasets", "agibot", "scene_understanding", 0, [(640, 480)], "RGB"),
    ("", "", "", 1, [(640, 480)], "RGB"),
]


def _scene(size: tuple[int, int], colour: str, view: int, mode: str) -> Image.Image:
    """A table top with a gripper (grey bar) holding a block of `colour`, seen from view `view`."""
    width, height = size
    image = Image.new("RGB", size, (235 - 10 * view, 225, 210))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, int(height * 0.7), width, height], fill=(150, 110, 70))
    for i, other in enumerate(ORDER):
        if other != colour:
            x = int(width * (0.1 + 0.18 * i))
            draw.rectangle([x, int(height * 0.6), x + width // 12, int(height * 0.7)], fill=COLOURS[other])
    cx = int(width * (0.45 + 0.05 * view))
    draw.rectangle([cx - width // 40, 0, cx + width // 40, int(height * 0.35)], fill=(110, 110, 110))
    draw.rectangle([cx - width // 16, int(height * 0.35), cx + width // 16, int(height * 0.45)],
                   fill=COLOURS[colour])
    if mode == "RGBA":
        return image.convert("RGBA")
    if mode == "P":
        return image.convert("P", palette=Image.Palette.ADAPTIVE, colors=32)
    if mode == "L":
        return image.convert("L")
    return image


def build_rows() -> list[dict[str, Any]]:
    """The mini split as a list of RoboVista rows (images as PIL images)."""
    rows = []
    for number, (domain, task, ability, gold, sizes, mode) in enumerate(PLAN):
        colour = ORDER[gold]
        choices = [f"The {name} block" for name in ORDER]
        if number == 9:  # one item with an empty option slot (its letter keeps the position)
            choices[4] = ""
        rows.append({
            "id": f"q_mini_{number:02d}",
            "images": [_scene(size, colour, view, mode) for view, size in enumerate(sizes)],
            "question": (f"The robot is performing {task or 'a task'}. "
                         "Which block is the gripper holding in the image(s)?"),
            "choices": choices,
            "correct_answer": "ABCDE"[gold],
            "reasoning": f"The block between the gripper fingers is {colour}.",
            "domain": domain,
            "task": task,
            "ability_type": ability,
            "ability_subcategory": "object identification" if ability else "",
            "publication_source": "lmms-agentic synthetic mini split",
        })
    return rows


def write(out_dir: Path) -> Path:
    """Write the split as `<out_dir>/data/train-00000-of-00001.parquet` (Hub layout); returns the file."""
    import datasets

    features = datasets.Features({
        "id": datasets.Value("string"),
        "images": datasets.Sequence(datasets.Image()),
        "question": datasets.Value("string"),
        "choices": datasets.Sequence(datasets.Value("string")),
        "correct_answer": datasets.Value("string"),
        "reasoning": datasets.Value("string"),
        "domain": datasets.Value("string"),
        "task": datasets.Value("string"),
        "ability_type": datasets.Value("string"),
        "ability_subcategory": datasets.Value("string"),
        "publication_source": datasets.Value("string"),
    })
    target = out_dir / "data" / "train-00000-of-00001.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(build_rows(), features=features).to_parquet(str(target))
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out_dir", type=Path)
    print(write(parser.parse_args(argv).out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Builds Agent-X's bundled mini split: 10 self-made tasks in the release layout (`data.json` + `files/`).

Keys "0".."9" with the release's meaning: keys "1" and "8" are in the generative id list, so they are
image-output tasks here too. Covered: single image, two images (comma-separated `file_path`), two short real mp4
videos (PyAV), factual ("objective"), interpretive ("subjective") and generative queries, a PNG stored under a
`.jpg` name (the release has such files), and `[[...]]`-wrapped steps. GT tool metadata entries are copied from the
real catalogue. Regenerate with `python -m lmms_agentic.tasks.agentx.mini tasks/agentx/data/mini`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw


def _chart(path: Path) -> None:
    image = Image.new("RGB", (640, 400), "white")
    draw = ImageDraw.Draw(image)
    for colour, heights in (("red", [300, 280, 250, 240]), ("blue", [320, 250, 150, 60]),
                            ("green", [340, 330, 320, 300])):
        points = [(80 + 150 * i, h) for i, h in enumerate(heights)]
        draw.line(points, fill=colour, width=5)
    draw.text((20, 20), "Sales by region", fill="black")
    image.save(path, "JPEG", quality=90)


def _blocks(path: Path, n_red: int, fmt: str = "JPEG") -> None:
    image = Image.new("RGB", (480, 320), (230, 230, 220))
    draw = ImageDraw.Draw(image)
    for i in range(n_red):
        draw.rectangle([30 + 70 * i, 200, 80 + 70 * i, 250], fill="red")
    draw.ellipse([380, 60, 440, 120], fill="blue")
    image.save(path, fmt)


def _sign(path: Path, text: str) -> None:
    image = Image.new("RGB", (400, 240), (40, 120, 60))
    ImageDraw.Draw(image).text((60, 100), text, fill="white")
    image.save(path, "JPEG", quality=90)


def _video(path: Path, n_frames: int) -> None:
    import av
    import numpy as np

    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 160, 96, "yuv420p"
        for i in range(n_frames):
            frame = np.full((96, 160, 3), 30, np.uint8)
            frame[40:60, (3 * i) % 140:(3 * i) % 140 + 20] = (230, 200, 40)
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def _step(n: int, task: str, tool: str, output: str, thought: str, tool_input: str = "image") -> dict[str, Any]:
    return {"step": n, "task": task, "tool": tool, "input": tool_input, "output": output, "thought": thought}


def _task(query: str, file_path: str, query_type: str, steps: list[dict[str, Any]], value: str,
          justification: str, catalogue: dict[str, Any], wrap: bool = False) -> list[dict[str, Any]]:
    tools = {step["tool"] for step in steps}
    return [{"query": query, "file_path": file_path, "query_type": query_type,
             "tool_metadata": {name: catalogue[name] for name in catalogue if name in tools},
             "reasoning_steps": [steps] if wrap else steps,
             "final_answer": {"value": value, "justification": justification}}]


def build_data(catalogue: dict[str, Any]) -> dict[str, Any]:
    s = _step
    return {
        "0": _task("Which colour line grows most rapidly and ends highest on the chart?", "AgentX_0.jpg",
                   "objective", [s(1, "Describe the chart", "SceneDescriber", "A line chart with red, blue and "
                                   "green lines.", "Three series to compare."),
                                 s(2, "Read the legend and axes", "OCR", "Sales by region", "Title read.")],
                   "The blue line", "The blue line rises fastest and ends highest.", catalogue),
        "1": _task("How many moving squares are in the video? Put a box on the square in the last frame.",
                   "AgentX_1.mp4", "subjective",
                   [s(1, "Count the squares", "ObjectCounter", "1", "One square moves."),
                    s(2, "Draw a box around it", "DrawBoundingBox", "image with a box", "Annotated.")],
                   "", "One square, boxed in the output image.", catalogue),
        "2": _task("Which of the two images shows more red blocks, and how many more?", "AgentX_2a.jpg, AgentX_2b.jpg",
                   "objective", [s(1, "Count red blocks in image 1", "ObjectCounter", "3", "Three."),
                                 s(2, "Count red blocks in image 2", "ObjectCounter", "5", "Five."),
                                 s(3, "Subtract", "Calculator", "2", "Difference is two.", "5 - 3")],
                   "The second image, by 2 blocks", "5 red blocks versus 3.", catalogue, wrap=True),
        "3": _task("What is the value of the expression 8x + 5y for the values written on the board?",
                   "AgentX_3.jpg", "objective",
                   [s(1, "Read the values", "OCR", "x = 2, y = 6", "Values found."),
                    s(2, "Evaluate", "Calculator", "46", "8*2 + 5*6 = 46.", "8*2+5*6")],
                   "46", "8 x 2 + 5 x 6 = 46.", catalogue),
        "4": _task("Describe the atmosphere of the scene.", "AgentX_4.jpg", "subjective",
                   [s(1, "Describe the scene", "SceneDescriber", "A quiet table with blocks.", "Calm scene.")],
                   "A calm, orderly tabletop scene", "Few objects, even light.", catalogue),
        "5": _task("In which direction does the yellow square move?", "AgentX_5.mp4", "objective",
                   [s(1, "Describe the motion", "SceneDescriber", "A yellow square moves to the right.",
                      "Direction found.")], "To the right", "Its position increases across frames.", catalogue),
        "6": _task("What does the sign say?", "AgentX_6.jpg", "objective",
                   [s(1, "Read the sign", "OCR", "EXIT 12", "Text read.")], "EXIT 12", "OCR reads EXIT 12.",
                   catalogue),
        "7": _task("How many red blocks are on the table?", "AgentX_7.jpg", "objective",
                   [s(1, "Count red blocks", "ObjectCounter", "4", "Four red blocks.", "image, red block")],
                   "4", "The counter finds four.", catalogue),
        "8": _task("Count the red blocks, stylize the image as a painting and overlay the count in the top-left "
                   "corner.", "AgentX_8.jpg", "subjective",
                   [s(1, "Count red blocks", "ObjectCounter", "2", "Two."),
                    s(2, "Stylize", "ImageStylization", "styled image", "Painting style."),
                    s(3, "Overlay the count", "OverlayText", "final image", "Count written.", "image, 2, top-left")],
                   "", "The stylized image carries the count 2.", catalogue),
        "9": _task("Which city is named on the sign, and what is its population?", "AgentX_9.jpg", "objective",
                   [s(1, "Read the sign", "OCR", "Welcome to Springfield", "City found."),
                    s(2, "Look up the population", "WebSearch", "Springfield: about 170,000", "Found.",
                      "Springfield population")], "Springfield, about 170,000", "Sign plus search.", catalogue),
    }


def write(out_dir: Path) -> Path:
    """Write `<out_dir>/data.json` and `<out_dir>/files/*`; returns data.json."""
    from lmms_agentic.tasks.agentx.core.release_data import toolmeta

    files = out_dir / "files"
    files.mkdir(parents=True, exist_ok=True)
    _chart(files / "AgentX_0.jpg")
    _video(files / "AgentX_1.mp4", 40)
    _blocks(files / "AgentX_2a.jpg", 3)
    _blocks(files / "AgentX_2b.jpg", 5)
    _sign(files / "AgentX_3.jpg", "x = 2, y = 6")
    _blocks(files / "AgentX_4.jpg", 2, fmt="PNG")  # PNG bytes under a .jpg name, as in the release
    _video(files / "AgentX_5.mp4", 30)
    _sign(files / "AgentX_6.jpg", "EXIT 12")
    _blocks(files / "AgentX_7.jpg", 4)
    _blocks(files / "AgentX_8.jpg", 2)
    _sign(files / "AgentX_9.jpg", "Welcome to Springfield")
    target = out_dir / "data.json"
    target.write_text(json.dumps(build_data(toolmeta()), indent=1, ensure_ascii=False) + "\n")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the Agent-X mini split")
    parser.add_argument("out_dir", type=Path)
    print(write(parser.parse_args(argv).out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

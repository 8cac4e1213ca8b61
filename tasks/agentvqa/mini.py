"""Builds AgentVQA's bundled mini split: 15 self-made items in the ASSUMED release schema.

Three items per domain, covering every input kind: single images, a multi-frame web trajectory
with action history (AitW), multi-image items, and short real mp4 videos encoded here with PyAV
(a 10-second clip at 10 fps and two 4-second clips). Coordinate items (ScreenSpot click point,
AitW tap action, RoboRefIt grasp point) carry structured `option_coordinates` in absolute pixels.
Gold letters are spread A-D. Layout as a Hub snapshot: `data/test-00000-of-00001.parquet` plus
`videos/*.mp4`, video paths relative to the dataset folder.

Regenerate with `python -m lmms_agentic.tasks.agentvqa.mini tasks/agentvqa/data/mini`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

VIDEOS = {"kitchen_walk.mp4": (100, 10), "mario_jump.mp4": (40, 10), "egoplan_cut.mp4": (40, 10)}


def _screen(size: tuple[int, int], step: int, target: tuple[int, int]) -> Image.Image:
    """A phone screenshot with a few buttons; the target button is drawn darker."""
    image = Image.new("RGB", size, (245, 245, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, size[0], 60], fill=(30, 90, 200))
    for i in range(4):
        y = 150 + i * 180 + step * 10
        draw.rectangle([80, y, size[0] - 80, y + 120], fill=(200, 210, 230))
    draw.ellipse([target[0] - 40, target[1] - 40, target[0] + 40, target[1] + 40], fill=(20, 20, 120))
    return image


def _scene(size: tuple[int, int], colour: tuple[int, int, int], shift: int = 0) -> Image.Image:
    image = Image.new("RGB", size, (210, 220, 200))
    draw = ImageDraw.Draw(image)
    w, h = size
    draw.rectangle([w // 4 + shift, h // 2, w // 4 + shift + w // 8, h // 2 + h // 6], fill=colour)
    draw.ellipse([w // 2, h // 3, w // 2 + w // 10, h // 3 + w // 10], fill=(90, 60, 30))
    return image


def write_videos(folder: Path) -> None:
    """Encode the mini split's videos (a moving square; frame i puts it at x = i)."""
    import av
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    for name, (n_frames, fps) in VIDEOS.items():
        with av.open(str(folder / name), "w") as container:
            stream = container.add_stream("mpeg4", rate=fps)
            stream.width, stream.height, stream.pix_fmt = 160, 96, "yuv420p"
            for i in range(n_frames):
                frame = np.full((96, 160, 3), 40, np.uint8)
                frame[30:60, i % 140:i % 140 + 20] = (230, 200, 40)
                for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)


def _row(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"images": [], "video": None, "action_history": [], "task_type": "",
                            "option_coordinates": None, "image_width": None, "image_height": None,
                            "coordinate_format": None}
    return base | fields


def build_rows() -> list[dict[str, Any]]:
    phone = (720, 1280)
    tap = [(540, 1010), (212, 880), (360, 200), (600, 1200)]
    click = [(160, 700), (540, 340), (360, 1010), (400, 560)]
    grasp = [(300, 260), (420, 180), (120, 400), (500, 300)]
    return [
        _row(id="aitw_0001", domain="Web Agents", source_dataset="android-in-the-wild", input_type="multi_image",
             output_type="Next UI action", question="Goal: open the settings and turn on dark mode. "
             "The screenshots show the trajectory so far. What is the next action?",
             images=[_screen(phone, step, tap[0]) for step in range(3)],
             action_history=["PRESS_HOME", "tap (360, 200)", "SCROLL_DOWN"],
             options=[f"tap ({x}, {y})" for x, y in tap[:3]] + ["PRESS_BACK"], answer="A",
             option_coordinates=[list(tap[0]), list(tap[1]), list(tap[2]), None], image_width=720,
             image_height=1280, coordinate_format="point_xy_abs"),
        _row(id="screenspot_0001", domain="Web Agents", source_dataset="screenspot", input_type="image",
             output_type="Click coordinates", question="Where should you click to 'Open the menu'?",
             images=[_screen(phone, 0, click[2])], options=[f"({x}, {y})" for x, y in click], answer="C",
             option_coordinates=[list(p) for p in click], image_width=720, image_height=1280,
             coordinate_format="point_xy_abs"),
        _row(id="monday_0001", domain="Web Agents", source_dataset="MONDAY", input_type="image",
             output_type="Next UI action", question="Goal: share the photo. What is the next action?",
             images=[_screen(phone, 1, (360, 1100))], action_history=["open Photos", "select the first photo"],
             options=["tap the share icon", "swipe left", "press back", "open the camera"], answer="A"),
        _row(id="vsibench_0001", domain="Egocentric Videos", source_dataset="VSI-Bench", input_type="video",
             output_type="Spatial answer", question="Which way does the yellow square move during the video?",
             video="videos/kitchen_walk.mp4", options=["up", "down", "left to right", "right to left"], answer="C"),
        _row(id="egoplan_0001", domain="Egocentric Videos", source_dataset="EgoPlan-Bench", input_type="video",
             output_type="Next action", question="Goal: make a sandwich. What should be done next?",
             video="videos/egoplan_cut.mp4", options=["wash the knife", "cut the bread", "open the fridge",
                                                      "turn off the light"], answer="B"),
        _row(id="openeqa_0001", domain="Egocentric Videos", source_dataset="OpenEQA", input_type="video",
             output_type="Environment answer", question="What colour is the moving object?",
             video="videos/kitchen_walk.mp4", options=["red", "green", "blue", "yellow"], answer="D"),
        _row(id="gameqa_0001", domain="Games", source_dataset="GameQA", input_type="image",
             output_type="Game state answer", question="How many brown circles are on the board?",
             images=[_scene((640, 480), (200, 40, 40))], options=["0", "1", "2", "3"], answer="B"),
        _row(id="marioqa_0001", domain="Games", source_dataset="MarioQA", input_type="video",
             output_type="Gameplay event answer", question="Does the character keep moving right?",
             video="videos/mario_jump.mp4", options=["yes", "no", "it stops", "it jumps down"], answer="A"),
        _row(id="atari_0001", domain="Games", source_dataset="Atari", input_type="image",
             output_type="Gameplay action", question="Which action should the player take next?",
             images=[_scene((160, 210), (40, 200, 40))], options=["NOOP", "FIRE", "LEFT", "RIGHT"], answer="D"),
        _row(id="embspatial_0001", domain="Spatial Planning", source_dataset="embspatial-bench", input_type="image",
             output_type="Spatial relation", question="Where is the red box relative to the brown ball?",
             images=[_scene((800, 600), (200, 40, 40))], options=["left of it", "right of it", "on top of it",
                                                                  "behind it"], answer="A"),
        _row(id="space10_0001", domain="Spatial Planning", source_dataset="space-10", input_type="multi_image",
             output_type="Spatial description", question="Across the two views, did the box move?",
             images=[_scene((640, 480), (200, 40, 40)), _scene((640, 480), (200, 40, 40), shift=60)],
             options=["no", "yes, to the right", "yes, to the left", "it disappeared"], answer="B"),
        _row(id="3dsr_0001", domain="Spatial Planning", source_dataset="3DSRBench", input_type="image",
             output_type="3D spatial answer", question="Which object is closer to the camera?",
             images=[_scene((640, 480), (40, 40, 200))], options=["the box", "the ball", "equally close",
                                                                  "cannot tell"], answer="C"),
        _row(id="roborefit_0001", domain="Robotics", source_dataset="RoboRefIt", input_type="image",
             output_type="Grasp coordinates", question="Where should the gripper grasp the brown ball?",
             images=[_scene((640, 480), (40, 200, 40))], options=[f"({x}, {y})" for x, y in grasp], answer="D",
             option_coordinates=[list(p) for p in grasp], image_width=640, image_height=480,
             coordinate_format="point_xy_abs"),
        _row(id="erqa_0001", domain="Robotics", source_dataset="ERQA", input_type="multi_image",
             output_type="Reasoning answer", question="Between the two frames, what did the robot do?",
             images=[_scene((512, 384), (200, 40, 40)), _scene((512, 384), (200, 40, 40), shift=40)],
             options=["pushed the box right", "lifted the box", "nothing", "rotated the ball"], answer="A"),
        _row(id="robo2vlm_0001", domain="Robotics", source_dataset="Robo2VLM", input_type="image",
             output_type="Task state or relation", question="Is the gripper holding the box?",
             images=[_scene((640, 480), (200, 200, 40))], options=["yes", "no", "partially", "it dropped it"],
             answer="B"),
    ]


def release_features() -> Any:
    """The `datasets.Features` of the release layout this mini split (and `make bench`'s synthetic set) use."""
    import datasets

    return datasets.Features({
        "id": datasets.Value("string"), "domain": datasets.Value("string"),
        "source_dataset": datasets.Value("string"), "input_type": datasets.Value("string"),
        "output_type": datasets.Value("string"), "task_type": datasets.Value("string"),
        "question": datasets.Value("string"), "action_history": datasets.Sequence(datasets.Value("string")),
        "options": datasets.Sequence(datasets.Value("string")), "answer": datasets.Value("string"),
        "images": datasets.Sequence(datasets.Image()), "video": datasets.Value("string"),
        "option_coordinates": datasets.Sequence(datasets.Sequence(datasets.Value("int32"))),
        "image_width": datasets.Value("int32"), "image_height": datasets.Value("int32"),
        "coordinate_format": datasets.Value("string"),
    })


def write(out_dir: Path) -> Path:
    """Write `<out_dir>/data/test-00000-of-00001.parquet` and `<out_dir>/videos/*.mp4`; returns the parquet."""
    import datasets

    features = release_features()
    write_videos(out_dir / "videos")
    target = out_dir / "data" / "test-00000-of-00001.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(build_rows(), features=features).to_parquet(str(target))
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the AgentVQA mini split")
    parser.add_argument("out_dir", type=Path)
    print(write(parser.parse_args(argv).out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

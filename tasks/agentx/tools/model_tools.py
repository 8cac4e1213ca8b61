"""The `model` backend: the Agent-X tools that need a model, each configured by the environment.

- LocateObjectByText / ObjectCounter: a transformers zero-shot object detector (OWL-ViT / OWLv2 / Grounding DINO
  class, `pipeline("zero-shot-object-detection")`) from `LMMS_AGENTIC_AGENTX_DETECTOR` (a Hub id already in the
  local cache, or a folder); detections scoring at least `LMMS_AGENTIC_AGENTX_DETECTOR_THRESHOLD` (default 0.1)
  count, boxes are pixel `(x1, y1, x2, y2)`, the highest score first.
- SceneDescriber / RegionDescriber: an OpenAI-compatible VLM endpoint configured like the judge:
  `LMMS_AGENTIC_AGENTX_VLM_BASE_URL`, `_MODEL`, and the key read from the variable `_API_KEY_ENV` names (default
  `OPENAI_API_KEY`; none for a local server); temperature 0, 256 tokens; RegionDescriber sends the crop.
- ImageGenerator / ImageStylization: diffusers (an optional extra, GPU in practice) from
  `LMMS_AGENTIC_AGENTX_DIFFUSION` (text-to-image and image-to-image pipelines of one checkpoint), seed 0.
Every model is loaded on first use and kept for the process; a missing setting is a `ToolError` naming the variable.
"""

from __future__ import annotations

import base64
import io
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from lmms_agentic.tasks.agentx.tools.local import ToolError, ToolOutput, parse_bbox

ENV_DETECTOR = "LMMS_AGENTIC_AGENTX_DETECTOR"
ENV_THRESHOLD = "LMMS_AGENTIC_AGENTX_DETECTOR_THRESHOLD"
ENV_VLM_URL = "LMMS_AGENTIC_AGENTX_VLM_BASE_URL"
ENV_VLM_MODEL = "LMMS_AGENTIC_AGENTX_VLM_MODEL"
ENV_VLM_KEY = "LMMS_AGENTIC_AGENTX_VLM_API_KEY_ENV"
ENV_DIFFUSION = "LMMS_AGENTIC_AGENTX_DIFFUSION"
MODEL_TOOLS = ("LocateObjectByText", "ObjectCounter", "SceneDescriber", "RegionDescriber", "ImageGenerator",
               "ImageStylization")


def _required(env: Mapping[str, str], name: str, tool: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ToolError(f"{tool} on the model backend needs {name} (see tasks/agentx/README.md, Executed tools)")
    return value


def data_url(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


@dataclass
class ModelTools:
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    _detector: Any = None
    _diffusion: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # ------------------------------------------------------------ detection
    def detector(self, tool: str) -> Any:
        with self._lock:
            if self._detector is None:
                from transformers import pipeline

                checkpoint = _required(self.environ, ENV_DETECTOR, tool)
                self._detector = pipeline("zero-shot-object-detection", model=checkpoint, device="cpu")
            return self._detector

    def detections(self, tool: str, image: Image.Image, text: str) -> list[tuple[float, tuple[int, int, int, int]]]:
        threshold = float(self.environ.get(ENV_THRESHOLD, "0.1"))
        found = self.detector(tool)(image.convert("RGB"), candidate_labels=[text], threshold=threshold)
        out = [(round(float(d["score"]), 4), (round(d["box"]["xmin"]), round(d["box"]["ymin"]),
                                             round(d["box"]["xmax"]), round(d["box"]["ymax"]))) for d in found]
        return sorted(out, key=lambda item: (-item[0], item[1]))

    def locate(self, image: Image.Image, text: str, top1: bool) -> ToolOutput:
        found = self.detections("LocateObjectByText", image, text)
        if not found:
            return ToolOutput(f"no {text} found")
        chosen = found[:1] if top1 else found
        return ToolOutput("\n".join(f"({x1}, {y1}, {x2}, {y2}), score {score:.2f}"
                                    for score, (x1, y1, x2, y2) in chosen))

    def count(self, image: Image.Image, text: str) -> ToolOutput:
        return ToolOutput(str(len(self.detections("ObjectCounter", image, text))))

    # ------------------------------------------------------------ describers
    def describe(self, tool: str, image: Image.Image, instruction: str) -> ToolOutput:
        import httpx

        base = _required(self.environ, ENV_VLM_URL, tool).rstrip("/")
        model = _required(self.environ, ENV_VLM_MODEL, tool)
        key = self.environ.get(self.environ.get(ENV_VLM_KEY, "OPENAI_API_KEY"), "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        body = {"model": model, "temperature": 0, "max_tokens": 256, "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": data_url(image)}}, {"type": "text", "text": instruction}]}]}
        try:
            response = httpx.post(f"{base}/chat/completions", json=body, headers=headers, timeout=60)
            response.raise_for_status()
            content = response.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as err:
            raise ToolError(f"the VLM endpoint failed ({err.__class__.__name__}: {err})") from None
        return ToolOutput(str(content or "").strip())

    def scene(self, image: Image.Image) -> ToolOutput:
        return self.describe("SceneDescriber", image, "Describe this image briefly in one or two sentences.")

    def region(self, image: Image.Image, bbox: str, attribute: str) -> ToolOutput:
        crop = image.crop(parse_bbox(bbox, image))
        return self.describe("RegionDescriber", crop, f"Describe the {attribute} of the object in this image region "
                                                      f"in a few words.")

    # ------------------------------------------------------------ diffusion
    def pipeline(self, tool: str, kind: str) -> Any:
        with self._lock:
            if kind not in self._diffusion:
                try:
                    import diffusers
                except ImportError:
                    raise ToolError(f"{tool} on the model backend needs diffusers (pip install diffusers)") from None
                checkpoint = _required(self.environ, ENV_DIFFUSION, tool)
                cls = diffusers.AutoPipelineForText2Image if kind == "text" else diffusers.AutoPipelineForImage2Image
                self._diffusion[kind] = cls.from_pretrained(checkpoint)
            return self._diffusion[kind]

    def generate(self, keywords: str) -> ToolOutput:
        import torch

        pipe = self.pipeline("ImageGenerator", "text")
        image = pipe(prompt=keywords, generator=torch.Generator().manual_seed(0)).images[0]
        return ToolOutput(f"an image of {keywords}", image)

    def stylize(self, image: Image.Image, instruction: str) -> ToolOutput:
        import torch

        pipe = self.pipeline("ImageStylization", "image")
        styled = pipe(prompt=instruction, image=image.convert("RGB"),
                      generator=torch.Generator().manual_seed(0)).images[0]
        return ToolOutput(f"the image restyled: {instruction}", styled)

    def run(self, tool: str, arguments: Mapping[str, Any], images: Mapping[str, Image.Image]) -> ToolOutput:
        if tool == "LocateObjectByText":
            return self.locate(images["image"], arguments["text"], bool(arguments.get("top1", True)))
        if tool == "ObjectCounter":
            return self.count(images["image"], arguments["text"])
        if tool == "SceneDescriber":
            return self.scene(images["image"])
        if tool == "RegionDescriber":
            return self.region(images["image"], arguments["bbox"], arguments["attribute"])
        if tool == "ImageGenerator":
            return self.generate(arguments["keywords"])
        if tool == "ImageStylization":
            return self.stylize(images["image"], arguments["instruction"])
        raise ToolError(f"{tool} has no model backend")

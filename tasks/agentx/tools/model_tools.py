"""The `model` backend: the Agent-X tools that need a model, each configured by the environment.

- LocateObjectByText / ObjectCounter: a transformers zero-shot object detector (OWL-ViT / OWLv2 / Grounding DINO
  class, `pipeline("zero-shot-object-detection")`) from `LMMS_AGENTIC_AGENTX_DETECTOR` (a Hub id already in the
  local cache, or a folder), read as GTA's `TextToBbox` / agentlego's `CountGivenObject` read GLIP: `top1` gives
  the best-scoring box whatever its score; `top1=false` every box scoring above `LMMS_AGENTIC_AGENTX_DETECTOR_
  THRESHOLD` (default `GTA_THRESHOLD`, 0.5), best first; ObjectCounter counts those.  Lines are GTA's
  `(x1, y1, x2, y2), score NN` (pixels, score x 100), `No object found.` when there is none.
- SceneDescriber / RegionDescriber: an OpenAI-compatible VLM endpoint configured like the judge:
  `LMMS_AGENTIC_AGENTX_VLM_BASE_URL`, `_MODEL`, and the key read from the variable `_API_KEY_ENV` names (default
  `OPENAI_API_KEY`; none for a local server); temperature 0, 256 tokens.  RegionDescriber sends the crop with
  GTA's prompt (`REGION_PROMPT`); SceneDescriber asks for the brief description the metadata defines
  (`SCENE_PROMPT`; GTA asked "Describe the image in detail").
  User-info in the URL is never sent in it (nor shown): it becomes a Basic `Authorization` header when no key is
  set.  Each call has a total deadline (`_TIMEOUT`, default 60 s: connect, send, wait and read all together, so a
  server dripping its reply cannot hold a call) and its reply is capped at `MAX_VLM_REPLY_BYTES` before JSON parsing;
  the reply's content must be text and is capped at `MAX_DESCRIPTION_CHARS`.  Errors name no URL and no key.
- ImageGenerator / ImageStylization: diffusers (the `tools` extra; on the GPU when there is one, float32) from
  `LMMS_AGENTIC_AGENTX_DIFFUSION` (its text-to-image pipeline; ImageStylization its image-to-image one), or for
  ImageStylization `LMMS_AGENTIC_AGENTX_DIFFUSION_EDIT` (an instruction-editing checkpoint such as InstructPix2Pix:
  its own pipeline).  The pipeline's default steps and guidance, passed explicitly, seed 0 (a CPU generator); one
  call at a time per pipeline (a pipeline's scheduler is not thread-safe); a restyled image keeps the input's size.
  `ModelTools.diffusion_settings`: each tool's checkpoint, pipeline, steps, guidance and seed (the runtime records
  them).
Every model is loaded on first use and kept for the process.  A missing setting, a model that does not load and an
endpoint that fails are `ToolInfrastructureError`s (the model is told the tool is unavailable; the reason, naming the
variable, goes to the log); `ModelTools.missing` names what a tool lacks before any call (the tool server's check).
"""

from __future__ import annotations

import base64
import importlib.util
import inspect
import io
import json
import os
import threading
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from lmms_agentic.adapters.agentic.tool_io import ToolInfrastructureError, ToolOutput
from lmms_agentic.judges.secrets import redactor
from lmms_agentic.judges.transport import ReplyTooLarge, build_http, exchange
from lmms_agentic.tasks.agentx.tools.local import parse_bbox

ENV_DETECTOR = "LMMS_AGENTIC_AGENTX_DETECTOR"
ENV_THRESHOLD = "LMMS_AGENTIC_AGENTX_DETECTOR_THRESHOLD"
ENV_VLM_URL = "LMMS_AGENTIC_AGENTX_VLM_BASE_URL"
ENV_VLM_MODEL = "LMMS_AGENTIC_AGENTX_VLM_MODEL"
ENV_VLM_KEY = "LMMS_AGENTIC_AGENTX_VLM_API_KEY_ENV"
ENV_VLM_TIMEOUT = "LMMS_AGENTIC_AGENTX_VLM_TIMEOUT"
VLM_TIMEOUT_S = 60.0
MAX_VLM_REPLY_BYTES = 1 << 20
MAX_DESCRIPTION_CHARS = 4_000
ENV_DIFFUSION = "LMMS_AGENTIC_AGENTX_DIFFUSION"
ENV_DIFFUSION_EDIT = "LMMS_AGENTIC_AGENTX_DIFFUSION_EDIT"
DIFFUSION_SEED = 0
DIFFUSION_DEFAULTS = ("num_inference_steps", "guidance_scale", "image_guidance_scale", "strength")
"""The call settings read from a pipeline's own defaults, passed explicitly and recorded (those it takes)."""
GTA_THRESHOLD = 0.5
"""GTA's cut for `top1=false` and counting (`scores > 0.5`, on GLIP's scores)."""
NO_OBJECT = "No object found."
SCENE_PROMPT = "Describe this image briefly in one or two sentences."
REGION_PROMPT = "Describe {attribute} on the image in detail"
"""GTA's `RegionAttributeDescription` question, asked about the crop."""
MODEL_TOOLS = ("LocateObjectByText", "ObjectCounter", "SceneDescriber", "RegionDescriber", "ImageGenerator",
               "ImageStylization")


SETTINGS = {"LocateObjectByText": (ENV_DETECTOR,), "ObjectCounter": (ENV_DETECTOR,),
            "SceneDescriber": (ENV_VLM_URL, ENV_VLM_MODEL), "RegionDescriber": (ENV_VLM_URL, ENV_VLM_MODEL),
            "ImageGenerator": (ENV_DIFFUSION,)}
PACKAGES = {"LocateObjectByText": "transformers", "ObjectCounter": "transformers", "ImageGenerator": "diffusers",
            "ImageStylization": "diffusers"}


def _needs(name: str) -> str:
    return f"the model backend needs {name} (see tasks/agentx/README.md, Executed tools)"


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ToolInfrastructureError(_needs(name))
    return value


def diffusion_variable(tool: str, env: Mapping[str, str]) -> str:
    """The variable naming `tool`'s checkpoint: ImageStylization's own one when set, else the shared one."""
    return ENV_DIFFUSION_EDIT if tool == "ImageStylization" and env.get(ENV_DIFFUSION_EDIT, "").strip() \
        else ENV_DIFFUSION


def _local_path(checkpoint: str) -> bool:
    """Whether `checkpoint` can only be a folder (a Hub id is `owner/name`)."""
    return os.path.isabs(checkpoint) or checkpoint.startswith(("./", "../", "~")) or checkpoint.count("/") > 1


@dataclass
class DiffusionPipe:
    """A loaded pipeline, the settings every call passes (recorded), and the lock its calls take in turn."""

    pipe: Any
    settings: dict[str, Any]
    lock: threading.Lock = field(default_factory=threading.Lock)


def data_url(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def vlm_endpoint(url: str) -> tuple[str, dict[str, str]]:
    """`url` without user-info, and the Basic `Authorization` header the user-info stood for ({} without)."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, {}
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
    header = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), {"Authorization": header}


def vlm_secrets(environ: Mapping[str, str]) -> list[str]:
    """What the describers send as credentials: the key and the Basic header made from the URL's user-info."""
    key = environ.get(environ.get(ENV_VLM_KEY, "") or "OPENAI_API_KEY", "").strip()
    _, headers = vlm_endpoint(environ.get(ENV_VLM_URL, "").strip())
    basic = headers.get("Authorization", "").removeprefix("Basic ")
    return [value for value in (key, basic) if value]


def _description(body: bytes) -> str:
    """The content of a chat completion, checked to be text and capped."""
    try:
        content = json.loads(body)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):
        raise ToolInfrastructureError("the VLM endpoint's reply is not a chat completion") from None
    if content is None:
        return ""
    if not isinstance(content, str):
        raise ToolInfrastructureError(f"the VLM reply's content is {type(content).__name__}, not text")
    content = content.strip()
    return content if len(content) <= MAX_DESCRIPTION_CHARS else content[:MAX_DESCRIPTION_CHARS] + " [truncated]"


@dataclass
class ModelTools:
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    _detector: Any = None
    _diffusion: dict[str, DiffusionPipe] = field(default_factory=dict)
    _http: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def missing(self, tool: str) -> str | None:
        """Why `tool` cannot run on this backend here (a setting or package it lacks), None when it can."""
        if tool == "ImageStylization" and not self.environ.get(diffusion_variable(tool, self.environ), "").strip():
            return _needs(f"{ENV_DIFFUSION_EDIT} or {ENV_DIFFUSION}")
        for name in SETTINGS.get(tool, ()):
            if not self.environ.get(name, "").strip():
                return _needs(name)
        package = PACKAGES.get(tool)
        if package is not None and importlib.util.find_spec(package) is None:
            return f"the model backend needs the {package} package (pip install {package})"
        check = {"SceneDescriber": self.vlm_timeout, "RegionDescriber": self.vlm_timeout,
                 "LocateObjectByText": self.threshold, "ObjectCounter": self.threshold}.get(tool)
        try:
            if check is not None:
                check()
        except ToolInfrastructureError as err:
            return str(err)
        return None

    # ------------------------------------------------------------ detection
    def detector(self, tool: str) -> Any:
        with self._lock:
            if self._detector is None:
                checkpoint = _required(self.environ, ENV_DETECTOR)
                try:
                    from transformers import pipeline

                    self._detector = pipeline("zero-shot-object-detection", model=checkpoint, device="cpu")
                except Exception as err:  # a checkpoint that is missing, not a detector, or does not load
                    raise ToolInfrastructureError(f"the detector {ENV_DETECTOR} names did not load "
                                                  f"({err.__class__.__name__}: {str(err)[:300]})") from None
            return self._detector

    def threshold(self) -> float:
        """The score a box must exceed for `top1=false` and ObjectCounter (`GTA_THRESHOLD` unless configured)."""
        raw = self.environ.get(ENV_THRESHOLD, "").strip()
        try:
            value = float(raw) if raw else GTA_THRESHOLD
        except ValueError:
            raise ToolInfrastructureError(f"{ENV_THRESHOLD}={raw!r} is not a number") from None
        if not 0 <= value < 1:
            raise ToolInfrastructureError(f"{ENV_THRESHOLD}={raw!r} must be a score in [0, 1)")
        return value

    def detections(self, tool: str, image: Image.Image, text: str) -> list[tuple[float, tuple[int, int, int, int]]]:
        """Every box the detector gives for `text` (no threshold), the highest score first."""
        found = self.detector(tool)(image.convert("RGB"), candidate_labels=[text], threshold=0.0)
        out = [(float(d["score"]), (round(d["box"]["xmin"]), round(d["box"]["ymin"]), round(d["box"]["xmax"]),
                                    round(d["box"]["ymax"]))) for d in found]
        return sorted(out, key=lambda item: (-item[0], item[1]))

    def locate(self, image: Image.Image, text: str, top1: bool) -> ToolOutput:
        found = self.detections("LocateObjectByText", image, text)
        chosen = found[:1] if top1 else [item for item in found if item[0] > self.threshold()]
        if not chosen:
            return ToolOutput(NO_OBJECT)
        return ToolOutput("\n".join(f"({x1}, {y1}, {x2}, {y2}), score {score * 100:.0f}"
                                    for score, (x1, y1, x2, y2) in chosen))

    def count(self, image: Image.Image, text: str) -> ToolOutput:
        threshold = self.threshold()
        return ToolOutput(str(sum(score > threshold for score, _ in self.detections("ObjectCounter", image, text))))

    # ------------------------------------------------------------ describers
    def vlm_timeout(self) -> float:
        raw = self.environ.get(ENV_VLM_TIMEOUT, "").strip()
        try:
            timeout = float(raw) if raw else VLM_TIMEOUT_S
        except ValueError:
            raise ToolInfrastructureError(f"{ENV_VLM_TIMEOUT}={raw!r} is not a number of seconds") from None
        if not 0 < timeout < float("inf"):
            raise ToolInfrastructureError(f"{ENV_VLM_TIMEOUT}={raw!r} must be a positive number of seconds")
        return timeout

    def describe(self, tool: str, image: Image.Image, instruction: str) -> ToolOutput:
        import httpx

        base, headers = vlm_endpoint(_required(self.environ, ENV_VLM_URL).rstrip("/"))
        model = _required(self.environ, ENV_VLM_MODEL)
        key = self.environ.get(self.environ.get(ENV_VLM_KEY, "") or "OPENAI_API_KEY", "").strip()
        if key:
            headers = {"Authorization": f"Bearer {key}"}
        timeout = self.vlm_timeout()
        body = {"model": model, "temperature": 0, "max_tokens": 256, "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": data_url(image)}}, {"type": "text", "text": instruction}]}]}
        with self._lock:
            if self._http is None:
                self._http = build_http(timeout, concurrency=16)
            http = self._http
        try:
            reply = exchange(http, f"{base}/chat/completions", json=body, headers=headers, params={},
                             timeout=timeout, max_bytes=MAX_VLM_REPLY_BYTES)
        except httpx.TimeoutException:
            raise ToolInfrastructureError(f"the VLM endpoint did not answer within {timeout:g} s") from None
        except ReplyTooLarge:
            raise ToolInfrastructureError(f"the VLM endpoint's reply is larger than {MAX_VLM_REPLY_BYTES:,} "
                                          "bytes") from None
        except (httpx.HTTPError, httpx.InvalidURL, ValueError) as err:
            shown = redactor(self.environ.get(ENV_VLM_URL), *vlm_secrets(self.environ), environ={}).text(str(err))
            raise ToolInfrastructureError(f"the VLM endpoint failed ({err.__class__.__name__}: "
                                          f"{shown[:300]})") from None
        if reply.status >= 400:
            raise ToolInfrastructureError(f"the VLM endpoint answered HTTP {reply.status}")
        return ToolOutput(_description(reply.body))

    def scene(self, image: Image.Image) -> ToolOutput:
        return self.describe("SceneDescriber", image, SCENE_PROMPT)

    def region(self, image: Image.Image, bbox: str, attribute: str) -> ToolOutput:
        crop = image.crop(parse_bbox(bbox, image))
        return self.describe("RegionDescriber", crop, REGION_PROMPT.format(attribute=attribute))

    # ------------------------------------------------------------ diffusion
    def pipeline(self, tool: str) -> DiffusionPipe:
        """`tool`'s pipeline, loaded on first use: ImageGenerator text-to-image; ImageStylization the checkpoint's own
        pipeline when it takes an image (InstructPix2Pix, image-to-image), else the checkpoint's image-to-image one."""
        with self._lock:
            if tool not in self._diffusion:
                self._diffusion[tool] = self._load(tool)
            return self._diffusion[tool]

    def _load(self, tool: str) -> DiffusionPipe:
        try:
            import diffusers
            import torch
        except ImportError:
            raise ToolInfrastructureError("the model backend needs diffusers (pip install diffusers)") from None
        variable = diffusion_variable(tool, self.environ)
        checkpoint = _required(self.environ, variable)
        named = f"the diffusion checkpoint {checkpoint!r} ({variable})"
        if _local_path(checkpoint) and not os.path.isdir(os.path.expanduser(checkpoint)):
            raise ToolInfrastructureError(f"{named} is not a folder")
        try:
            cls: Any = diffusers.AutoPipelineForText2Image
            if tool == "ImageStylization":
                own = getattr(diffusers, diffusers.DiffusionPipeline.load_config(checkpoint)["_class_name"], None)
                takes_image = own is not None and "image" in inspect.signature(own.__call__).parameters
                cls = own if takes_image else diffusers.AutoPipelineForImage2Image
            pipe = cls.from_pretrained(os.path.expanduser(checkpoint))
            pipe = pipe.to("cuda") if torch.cuda.is_available() else pipe
        except Exception as err:  # a checkpoint that is missing, not a pipeline for this task, or does not load
            detail = f"{err.__class__.__name__}: {str(err)[:300]}"
            raise ToolInfrastructureError(f"{named} did not load ({detail})") from None
        pipe.set_progress_bar_config(disable=True)
        parameters = inspect.signature(pipe.__call__).parameters
        settings = {name: parameters[name].default for name in DIFFUSION_DEFAULTS
                    if name in parameters and isinstance(parameters[name].default, int | float)}
        return DiffusionPipe(pipe, {"variable": variable, "checkpoint": checkpoint, "pipeline": type(pipe).__name__,
                                    **settings, "seed": DIFFUSION_SEED})

    def diffusion_settings(self) -> dict[str, dict[str, Any]]:
        """ImageGenerator's and ImageStylization's settings: the checkpoint and seed; the pipeline, steps and
        guidance once it is loaded (before, `pipeline` is None)."""
        described: dict[str, dict[str, Any]] = {}
        for tool in ("ImageGenerator", "ImageStylization"):
            with self._lock:
                loaded = self._diffusion.get(tool)
            variable = diffusion_variable(tool, self.environ)
            described[tool] = dict(loaded.settings) if loaded is not None else {
                "variable": variable, "checkpoint": self.environ.get(variable, "").strip() or None, "pipeline": None,
                "seed": DIFFUSION_SEED}
        return described

    def diffuse(self, tool: str, prompt: str, image: Image.Image | None = None) -> Image.Image:
        """One pipeline call with its recorded settings and a generator seeded with `DIFFUSION_SEED`."""
        import torch

        loaded = self.pipeline(tool)
        settings = {k: v for k, v in loaded.settings.items() if k in DIFFUSION_DEFAULTS}
        inputs = {} if image is None else {"image": image}
        with loaded.lock:
            result = loaded.pipe(prompt=prompt, **inputs, **settings,
                                 generator=torch.Generator().manual_seed(DIFFUSION_SEED))
        produced: Image.Image = result.images[0]
        return produced

    def generate(self, keywords: str) -> ToolOutput:
        return ToolOutput(f"an image of {keywords}", self.diffuse("ImageGenerator", keywords))

    def stylize(self, image: Image.Image, instruction: str) -> ToolOutput:
        styled = self.diffuse("ImageStylization", instruction, image.convert("RGB"))
        if styled.size != image.size:  # pipelines work on multiples of their latent scale
            styled = styled.resize(image.size, Image.Resampling.BICUBIC)
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
        raise ToolInfrastructureError(f"{tool} has no model backend")

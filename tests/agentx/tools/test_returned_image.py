"""A round whose tool returned an image logs a thumbnail with the image's size and digest (`returned_image`), the
same in both round loops; a logged reference is checked before use (hostile logs never decode into anything
larger than a thumbnail)."""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import struct
import zlib
from typing import Any

import pytest
from PIL import Image, ImageFile

from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.tasks.agentx.tools import hooks, returned_image
from lmms_agentic.tasks.agentx.tools.returned_image import MAX_THUMBNAIL_BYTES, THUMBNAIL_SIDE, ReturnedImage

from .scripts import KWARGS, call, gold_script


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_the_reference_is_a_bounded_thumbnail_with_the_full_size_and_digest() -> None:
    image = Image.linear_gradient("L").convert("RGB").resize((640, 480))
    logged = returned_image.reference(image)
    assert set(logged) == {"png_b64", "width", "height", "pixels_sha256"}
    assert (logged["width"], logged["height"]) == (640, 480)
    assert logged["pixels_sha256"] == hashlib.sha256(image.tobytes()).hexdigest()
    read = returned_image.read(json.loads(json.dumps(logged)))
    assert isinstance(read, ReturnedImage) and read.thumbnail.size == (THUMBNAIL_SIDE, 192)
    assert (read.width, read.height, read.sha256) == (640, 480, logged["pixels_sha256"])
    assert read.data_uri().startswith("data:image/png;base64,") and "640x480" in read.caption()


def test_noise_is_shrunk_until_the_thumbnail_fits() -> None:
    logged = returned_image.reference(Image.effect_noise((1024, 1024), 100).convert("RGB"))
    data = base64.b64decode(logged["png_b64"])
    assert len(data) <= MAX_THUMBNAIL_BYTES and isinstance(returned_image.read(logged), ReturnedImage)


@pytest.mark.parametrize("mode", ["RGBA", "L", "1", "CMYK", "F", "P", "I", "LA", "YCbCr"])
def test_every_image_mode_is_logged_or_says_why(mode: str) -> None:
    logged = returned_image.reference(Image.new("RGB", (300, 40), (200, 30, 30)).convert(mode))
    assert json.dumps(logged) and (logged["width"], logged["height"]) == (300, 40)
    assert isinstance(returned_image.read(logged), ReturnedImage) or "error" in logged


def test_what_is_not_an_image_is_not_logged_as_one() -> None:
    assert "error" in returned_image.reference("image_2")
    assert "error" in returned_image.reference(Image.new("RGB", (0, 5)))


def _declared(width: int, height: int) -> bytes:
    """A small valid PNG whose header claims `width` x `height` (CRC fixed, pixel data not)."""
    data = bytearray(_png(Image.new("RGB", (4, 4))))
    ihdr = bytes(data[12:16]) + struct.pack(">II", width, height) + bytes(data[24:29])
    data[16:29] = ihdr[4:]
    data[29:33] = struct.pack(">I", zlib.crc32(ihdr))
    return bytes(data)


VALID = _b64(_png(Image.new("RGB", (8, 8))))
HOSTILE = {
    "not a mapping": "data:image/png;base64,AAAA",
    "no thumbnail": {"width": 5, "height": 5},
    "a number": {"png_b64": 12},
    "too long": {"png_b64": "A" * (MAX_THUMBNAIL_BYTES * 2)},
    "not base64": {"png_b64": "<img src=x onerror=alert(1)>"},
    "a JPEG": {"png_b64": _b64(b"\xff\xd8\xff\xe0" + bytes(40))},
    "a bomb's header": {"png_b64": _b64(_declared(100_000, 100_000))},
    "too large a thumbnail": {"png_b64": _b64(_png(Image.new("RGB", (THUMBNAIL_SIDE + 1, 4))))},
    "truncated": {"png_b64": _b64(_png(Image.effect_noise((64, 64), 50))[:200])},
}


@pytest.mark.parametrize("lenient", [False, True])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_reference_is_refused_with_why(name: str, lenient: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", lenient)  # lmms-eval's task module sets it to True
    found = returned_image.read(HOSTILE[name])
    assert isinstance(found, str) and found, name


def test_untrusted_sizes_and_digests_are_dropped() -> None:
    found = returned_image.read({"png_b64": VALID, "width": True, "height": 10**9, "pixels_sha256": "</script>"})
    assert isinstance(found, ReturnedImage) and (found.width, found.height, found.sha256) == (None, None, None)
    assert returned_image.read({"error": "a 0x5 image is not logged"}) == "not logged: a 0x5 image is not logged"


def test_the_round_logs_the_image_the_tool_returned(docs: dict[str, Any], runtime: ToolRuntime) -> None:
    outputs = [call("DrawBoundingBox", {"image": "image_1", "bbox": "(2, 2, 30, 30)"})]
    visuals, _, _, _, info = hooks.doc_to_text(docs["6"], KWARGS, previous_output=outputs, round_idx=1,
                                               runtime=runtime)
    entry = info["state"]["rounds"][0]
    logged = entry["returned_image"]
    assert entry["image"] == "image_2" and (logged["width"], logged["height"]) == visuals[-1].size
    assert logged["pixels_sha256"] == hashlib.sha256(visuals[-1].convert("RGB").tobytes()).hexdigest()
    outputs.append(call("Calculator", {"expression": "1+1"}))
    _, _, _, _, info = hooks.doc_to_text(docs["6"], KWARGS, previous_output=outputs, round_idx=2,
                                         previous_round_info=info, runtime=runtime)
    assert info["state"]["rounds"][1]["returned_image"] is None


def test_both_round_loops_log_the_same_returned_images(docs: dict[str, Any], runtime: ToolRuntime) -> None:
    from lmms_eval.api.instance import Instance

    from lmms_agentic.adapters.agentic.loop import lmms_eval_loop, run_generate_until_agentic

    rows = [docs["1"], docs["8"]]  # gold DrawBoundingBox and OverlayText calls, run locally
    script = gold_script()

    class Scripted:
        is_simple = True

        def __init__(self) -> None:
            self.task_dict = {"t": {"test": rows}}
            self.turns: dict[int, int] = {}

        def generate_until(self, requests: list[Any]) -> list[str]:
            out = []
            for request in requests:
                turn = self.turns.get(request.args[3], 0)
                self.turns[request.args[3]] = turn + 1
                replies = script[rows[request.args[3]]["id"]]
                out.append(replies[min(turn, len(replies) - 1)])
            return out

    to_text = functools.partial(hooks.doc_to_text, lmms_eval_specific_kwargs=KWARGS, runtime=runtime)

    def requests() -> list[Any]:
        return [Instance(request_type="generate_until_agentic", idx=0,
                         metadata={"task": "t", "doc_id": i, "repeats": 1},
                         arguments=(hooks.doc_to_text(doc, KWARGS), {"max_agentic_steps": 4, "until": []},
                                    functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=KWARGS),
                                    to_text, i, "t", "test")) for i, doc in enumerate(rows)]

    def logged(responses: list[str]) -> list[Any]:
        return [[entry["returned_image"] for entry in json.loads(r)["state"]["rounds"]] for r in responses]

    sequential = logged(lmms_eval_loop()(Scripted(), requests(), agentic_trace_mode="basic"))
    batched = logged(run_generate_until_agentic(Scripted(), requests(), workers=2))
    assert sequential == batched
    returned = [image for episode in batched for image in episode if image is not None]
    assert len(returned) >= 2 and all(isinstance(returned_image.read(image), ReturnedImage) for image in returned)

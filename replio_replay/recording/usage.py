"""The answers a cassette recorded, read back for `--max-cost`'s estimate of what recording it again
costs: each successful answer with whose it is, the URL it answered and its body, from which the
provider that gave it reads its token usage (`HTTPProvider.answer_usage`, as the run's meter reads
a live answer's)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ReplioError
from .roles import dict_role
from .serializer import load_cassette

__all__ = ["RecordedAnswer", "recorded_answers"]


@dataclass(frozen=True)
class RecordedAnswer:
    """One successful answer of a cassette: the role that asked (`agent`, `user`, `judge`), the URL
    it was sent to, the body and its content type."""

    role: str
    url: str
    body: bytes
    content_type: str | None


def recorded_answers(path: Path) -> list[RecordedAnswer] | None:
    """Each successful answer of the cassette at `path`, in order; None when there is no cassette or
    it cannot be read (a broken one is reported when it is replayed)."""
    try:
        cassette = load_cassette(path.read_text(encoding="utf-8"), str(path))["cassette"]
    except (OSError, UnicodeDecodeError, ReplioError):
        return None
    answers = []
    for interaction in cassette["interactions"]:
        request, response = interaction["request"], interaction["response"]
        if not 200 <= response["status"]["code"] < 300:
            continue
        body = response["body"].get("string") or b""
        kinds = [v for k, v in response.get("headers", {}).items() if k.lower() == "content-type"]
        answers.append(RecordedAnswer(dict_role(request), str(request["uri"]),
                                      body.encode("utf-8") if isinstance(body, str) else body,
                                      kinds[0][0] if kinds and kinds[0] else None))
    return answers

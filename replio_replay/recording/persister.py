"""How cassettes reach disk and come back: an atomic, secret-checking vcrpy persister with errors naming the file."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vcr.request import Request
from vcr.serialize import deserialize, serialize

from .._runtime.atomic import atomic_write
from .._runtime.redact import Redactor
from ..errors import CassetteError
from .scrub import find_secret

__all__ = ["AtomicPersister"]


class AtomicPersister:
    """vcrpy's persister interface (registered with `VCR.register_persister`): loads with errors naming
    the file, saves atomically, refuses secrets.

    Given `kept`, a save puts the checked text there under its path instead of writing it: a caller
    that writes the cassette with other files, all at once (an import), writes it once.
    """

    def __init__(self, secrets: Iterable[str] = (), kept: dict[Path, str] | None = None) -> None:
        self.secrets = tuple(secrets)
        self.kept = kept

    def load_cassette(self, cassette_path: str | Path, serializer: Any) -> tuple[list[Request], list[dict[str, Any]]]:
        """The cassette's requests and responses, through vcrpy's `deserialize` and `serializer`."""
        path = Path(cassette_path)
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError):  # the read finds out; no stat before it (the session made one)
            raise CassetteError(f"no cassette at {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CassetteError(f"cassette {path} cannot be read: {exc}") from None
        if not text.strip():
            raise CassetteError(f"cassette {path} is empty; delete it and record again")
        try:
            return deserialize(text, serializer)  # type: ignore[no-any-return]
        except CassetteError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise CassetteError(f"cassette {path} has the wrong shape: {exc}") from None

    def save_cassette(self, cassette_path: str | Path, cassette_dict: dict[str, Any], serializer: Any) -> None:
        """Write `cassette_dict` (vcrpy's: requests and responses) through vcrpy's `serialize` and `serializer`."""
        path = Path(cassette_path)
        text = serialize(cassette_dict, serializer)
        secrets = Redactor(self.secrets)  # built here: a replay never saves
        where: str | None = None
        if secrets.found(text):
            from .yamlcodec import load_yaml

            where = find_secret(load_yaml(text, str(path)), secrets) or "its text"
        else:  # a body that is not UTF-8 is written as base64 (!!binary), wrapped: the key is whole in its bytes only
            where = find_secret(_interactions(cassette_dict), secrets)
        if where is not None:
            raise CassetteError(
                f"cassette {path} was not written: it would contain the live value of a secret (an API key, or "
                f"a variable an MCP server reads) in {where}; keep it out of that field (a server should not "
                "hand its credentials to the model) and record again"
            )
        if self.kept is not None:
            self.kept[path] = text
        else:
            atomic_write(path, text)


def _interactions(cassette_dict: dict[str, Any]) -> dict[str, Any]:
    """vcrpy's requests and responses as the file holds them (`interactions[0].request.body`), bodies as bytes."""
    pairs = zip(cassette_dict["requests"], cassette_dict["responses"], strict=True)
    return {"interactions": [{"request": _request(request), "response": response} for request, response in pairs]}


def _request(request: Request) -> dict[str, Any]:
    return {"method": request.method, "uri": request.uri, "body": request.body, "headers": dict(request.headers)}

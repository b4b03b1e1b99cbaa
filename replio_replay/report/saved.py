"""A saved result (what `run --output json` and `--output-file` write) read back from its file,
validated like any input: for `report`, `merge`, and a baseline (the CLI's and the pytest plugin's).
A lone surrogate in it (JSON's escape of a file name that is not UTF-8, which a tool listed) is read as
U+FFFD, as in a provider's answer: no report written from it could hold the character."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from .._runtime.jsonin import JsonProblem, read_json
from .._runtime.surrogates import clean
from .._runtime.wording import validation_message
from ..errors import UsageError
from ..judge.results import SavedRuns, saved_runs

__all__ = ["read_saved"]

_HINT = "give a file that replio eval run --output json or --output-file wrote"


def read_saved(path: Path) -> SavedRuns:
    """The saved result at `path`; a UsageError naming the file (and the field) when it is not one."""
    try:
        return saved_runs(clean(read_json(path.read_text(encoding="utf-8"))))
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc}); {_HINT}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}); {_HINT}") from None
    except JsonProblem as exc:
        raise UsageError(f"{path}: {exc}; {_HINT}") from None
    except ValidationError as exc:
        raise UsageError(f"{path}: not a replio result: {validation_message(exc, 'the result format')}; "
                         f"{_HINT}") from None

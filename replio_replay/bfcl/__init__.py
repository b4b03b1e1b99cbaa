"""BFCL (the Berkeley Function Calling Leaderboard) as a fixture source.

`import_bfcl` reads the cases and possible answers of BFCL's single-turn categories from a
`bfcl-eval` wheel, package or data folder (`source`), converts each (`convert`: the question
as the task, the functions as stub tools named by `names`, typed by `schema`, the verdict from
`answers`) and writes one fixture file per case (`importer`).
"""

from .convert import BFCL_CATEGORIES, fixture_id, to_fixture
from .importer import DEFAULT_OUT, ImportReport, import_bfcl
from .names import decode_name, encode_name

__all__ = [
    "BFCL_CATEGORIES",
    "DEFAULT_OUT",
    "ImportReport",
    "decode_name",
    "encode_name",
    "fixture_id",
    "import_bfcl",
    "to_fixture",
]

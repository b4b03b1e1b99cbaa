"""Per model and BFCL category, from a `replio eval run --output json` result on stdin: the cases
that passed (BFCL's accuracy), those cut off by BFCL's step limit, those that outgrew the model's
context window, and the mean number of user turns passed in a row from the first.

    replio eval --path examples/bfcl-multi-turn run --compare A,B --output json | python examples/bfcl-multi-turn/by_category.py
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from typing import Any

_CASE = re.compile(r"bfcl-(multi_turn_\w+?)_\d+$")
_TURN = re.compile(r"turn (\d+): ")


def turns_passed(fixture: dict[str, Any]) -> int:
    """The user turns passed in a row from the first: up to the first turn a reason names, or
    every turn said when none does."""
    failed = [int(m.group(1)) for reason in fixture["reasons"] for m in [_TURN.match(reason)] if m]
    if failed:
        return min(failed) - 1
    return sum(1 for message in fixture.get("conversation", []) if message["role"] == "user")


def main() -> None:
    data = json.load(sys.stdin)
    for run in data.get("runs", [data]):
        by_category: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for fixture in run["fixtures"]:
            match = _CASE.match(fixture["id"])
            if match:
                by_category[match.group(1)].append(fixture)
        for category, fixtures in sorted(by_category.items()):
            passed = sum(1 for f in fixtures if f["pass"])
            cut = sum(1 for f in fixtures if f["status"] == "truncated" and not f["error"])
            full = sum(1 for f in fixtures if f["status"] == "truncated" and f["error"])
            mean = sum(turns_passed(f) for f in fixtures) / len(fixtures)
            print(f"{run['model']}  {category:<22} passed {passed}/{len(fixtures)}  "
                  f"step limit {cut:>2}  context full {full}  turns passed in a row {mean:.2f}")


if __name__ == "__main__":
    main()

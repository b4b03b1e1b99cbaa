"""Per model and τ² domain, from a `replio eval run --output json` result on stdin: the tasks that
passed (τ²'s reward of 1), those cut short at a limit (`truncated`), those the simulated user ended
before the agent was asked anything (its tokens are 0), and the agent's calls per task.

    replio eval --path examples/tau2 run --output json | python examples/tau2/by_domain.py
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from typing import Any


def main() -> None:
    data = json.load(sys.stdin)
    for run in data.get("runs", [data]):
        by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for fixture in run["fixtures"]:
            if fixture["id"].startswith("tau2-"):
                by_domain[fixture["id"].split("-")[1]].append(fixture)
        for domain, fixtures in sorted(by_domain.items()):
            passed = sum(1 for f in fixtures if f["pass"])
            cut = sum(1 for f in fixtures if f["status"] == "truncated")
            quiet = sum(1 for f in fixtures if f["tokens"] == 0)  # the agent was never asked
            calls = sum(f["calls"] for f in fixtures) / len(fixtures)
            print(f"{run['model']}  {domain:<7} passed {passed}/{len(fixtures)}  truncated {cut:>2}  "
                  f"user ended at once {quiet:>2}  calls per task {calls:.1f}")


if __name__ == "__main__":
    main()

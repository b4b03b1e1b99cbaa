"""What a replay imports, and what each import costs: `python bench/imports.py PROJECT [RUN ARGS...]`.

Runs `replio eval --path PROJECT run --record-mode none ...` under `python -X importtime` (the
package byte-compiled first, as an install compiles it) and prints the import time of the whole
run, the share of each top-level package (self time: what its own modules' bodies took), and the
packages first imported beneath vcrpy's patcher module (`vcr.patch` imports, at its own import,
every HTTP client it can patch that is installed, used or not; a few of the standard library's
would be imported later anyway). Self times are microseconds of wall
clock: on a busy machine they grow with the load, the shares much less.
"""

from __future__ import annotations

import compileall
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPLIO = str(Path(sys.executable).with_name("replio"))
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def imports(argv: list[str]) -> list[tuple[int, int, str]]:
    """(self µs, depth, module) of each module `argv` imports, as -X importtime prints them."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"the run failed ({done.returncode}): {done.stderr[-2000:]}")
    return [(int(m[1]), len(m[3]), m[4]) for m in map(_LINE.match, done.stderr.splitlines()) if m]


def vcr_patch_only(rows: list[tuple[int, int, str]]) -> set[str]:
    """The top-level packages first imported beneath `vcr.patch` (importtime lists a module after
    everything it imported, one level deeper)."""
    found: set[str] = set()
    for i, (_, depth, name) in enumerate(rows):
        for _, upper, parent in rows[i + 1:]:
            if upper < depth:
                if parent == "vcr.patch":
                    found.add(name.split(".")[0])
                    break
                depth = upper
    return found - {"vcr"}


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    compileall.compile_dir(ROOT / "replio_replay", quiet=1)
    rows = imports([REPLIO, "eval", "--path", sys.argv[1], "run", "--record-mode", "none", *sys.argv[2:]])
    total = sum(us for us, _, _ in rows)
    by_package: Counter[str] = Counter()
    for us, _, name in rows:
        by_package[name.split(".")[0]] += us
    print(f"{len(rows)} modules imported in {total / 1000:.0f} ms (self times summed)")
    for package, us in by_package.most_common(15):
        print(f"  {us / total:6.1%}  {us / 1000:7.1f} ms  {package}")
    patched = vcr_patch_only(rows)
    share = sum(by_package[p] for p in patched) / total
    print(f"first imported beneath vcr.patch ({share:.0%}): {', '.join(sorted(patched))}")


if __name__ == "__main__":
    main()

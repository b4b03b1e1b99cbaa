"""`replio eval import bfcl`, run as a real command: sources, categories, problems, idempotence."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.helpers import replio_command

DATA = Path(__file__).parent / "data"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_simple",
              "live_multiple")


def replio(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([replio_command(), "eval", "--path", str(project), *args],
                          capture_output=True, text=True, timeout=120)


def cases(category: str) -> list[str]:
    return [json.loads(line)["id"] for line in (DATA / f"BFCL_v4_{category}.json").read_text().splitlines()]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".replio").mkdir(parents=True)
    (path / ".replio" / "config.json").write_text('{"bundled": false}')
    return path


def written(project: Path) -> set[str]:
    return {p.stem for p in (project / ".replio" / "eval" / "bfcl").glob("*.json")}


def test_a_data_folder_imports_every_category_and_names_what_it_skips(project: Path) -> None:
    done = replio(project, "import", "bfcl", str(DATA))
    assert done.returncode == 1, done.stderr
    refused = {"live_multiple_964-207-0", "live_multiple_862-181-3"}
    expected = {f"bfcl-{c}" for category in CATEGORIES for c in cases(category)} - {f"bfcl-{c}" for c in refused}
    assert written(project) == expected
    for case_id in refused:
        assert f"replio: skipped BFCL case {case_id}: BFCL's checker can never accept this case" in done.stderr
    assert "simple_python: 3 written, 0 unchanged" in done.stdout
    listed = replio(project, "list", "--output", "json")
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert found["problems"] == []
    assert {f["id"] for f in found["fixtures"]} == expected
    assert {tuple(f["tags"]) for f in found["fixtures"]} == {("bfcl", c) for c in CATEGORIES}


def test_importing_again_changes_nothing(project: Path) -> None:
    args = ("import", "bfcl", str(DATA), "--category", "simple_python", "--category", "parallel")
    assert replio(project, *args).returncode == 0
    before = {p.name: p.read_bytes() for p in (project / ".replio" / "eval" / "bfcl").iterdir()}
    again = replio(project, *args)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == ["simple_python: 0 written, 3 unchanged", "parallel: 0 written, 2 unchanged"]
    assert {p.name: p.read_bytes() for p in (project / ".replio" / "eval" / "bfcl").iterdir()} == before


def test_limit_and_out(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere"
    done = replio(project, "import", "bfcl", str(DATA), "--category", "simple_python", "--limit", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert {p.stem for p in out.glob("*.json")} == {"bfcl-simple_python_0", "bfcl-simple_python_1"}


def test_a_wheel_and_an_installed_package_are_sources_too(project: Path, tmp_path: Path) -> None:
    package = tmp_path / "site-packages" / "bfcl_eval"
    shutil.copytree(DATA, package / "data")
    wheel = tmp_path / "bfcl_eval-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path in DATA.rglob("BFCL_v4_*.json"):
            archive.write(path, f"bfcl_eval/data/{path.relative_to(DATA).as_posix()}")
    for source in (wheel, package):
        shutil.rmtree(project / ".replio" / "eval", ignore_errors=True)
        done = replio(project, "import", "bfcl", str(source), "--category", "multiple")
        assert done.returncode == 0, done.stderr
        assert written(project) == {f"bfcl-{c}" for c in cases("multiple")}


@pytest.mark.parametrize(("args", "message"), [
    (("--category", "simple_jav"), "unknown BFCL category 'simple_jav'"),
    (("--category", "live_parallel"), "holds no BFCL category 'live_parallel'"),
])
def test_a_bad_category_exits_2(project: Path, args: tuple[str, ...], message: str) -> None:
    done = replio(project, "import", "bfcl", str(DATA), *args)
    assert done.returncode == 2
    assert message in done.stderr


def test_a_bad_source_exits_2(project: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "not.whl").write_text("no zip")
    for source, message in ((tmp_path / "missing", "no such file or folder"),
                            (tmp_path / "empty", "no BFCL data files found"),
                            (tmp_path / "not.whl", "not a wheel or zip file")):
        done = replio(project, "import", "bfcl", str(source))
        assert done.returncode == 2, done.stderr
        assert message in done.stderr
        assert "Traceback" not in done.stderr


def irrelevance_source(tmp_path: Path, ids: list[str]) -> Path:
    """A data folder of irrelevance cases (no answers needed) with these ids, from the first sample case."""
    sample = json.loads((DATA / "BFCL_v4_irrelevance.json").read_text().splitlines()[0])
    source = tmp_path / "crafted"
    source.mkdir()
    lines = [json.dumps({**sample, "id": case_id}) for case_id in ids]
    (source / "BFCL_v4_irrelevance.json").write_text("\n".join(lines) + "\n")
    return source


def test_case_ids_follow_the_fixture_id_rule_and_no_file_leaves_out(project: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim" / "settings.json"
    victim.parent.mkdir()
    victim.write_text("{}")
    escape = "x/" + "../" * 6 + "victim/settings"
    long_id, nul_id = "a" * 300, "nul\0id"
    source = irrelevance_source(tmp_path, ["irrelevance_0", escape, long_id, nul_id, "irrelevance_1", "irrelevance_0"])
    done = replio(project, "import", "bfcl", str(source))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.splitlines() == ["irrelevance: 2 written, 0 unchanged"]
    assert victim.read_text() == "{}"
    assert written(project) == {"bfcl-irrelevance_0", "bfcl-irrelevance_1"}
    assert sorted(p.name for p in (project / ".replio").rglob("*") if p.is_file()) == [
        "bfcl-irrelevance_0.json", "bfcl-irrelevance_1.json", "config.json"]
    skipped = [line for line in done.stderr.splitlines() if line.startswith("replio: skipped BFCL case ")]
    assert len(skipped) == 4, done.stderr
    assert "x/../" in skipped[0] and "is not valid: an id is its own file name" in skipped[0]
    assert "'" + "a" * 80 + "'" in skipped[1] and "1 to 128 letters" in skipped[1]
    assert "\0" not in done.stderr and "'nul\\x00id'" in skipped[2]
    assert skipped[3].startswith("replio: skipped BFCL case irrelevance_0: the id is used by an earlier case")


def test_a_link_in_out_leading_elsewhere_is_not_followed(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    (out / "bfcl-irrelevance_0.json").symlink_to(victim)
    done = replio(project, "import", "bfcl", str(irrelevance_source(tmp_path, ["irrelevance_0", "irrelevance_1"])),
                  "--out", str(out))
    assert done.returncode == 1, done.stderr
    assert victim.read_text() == "{}"
    assert (out / "bfcl-irrelevance_1.json").is_file()
    assert f"replio: skipped BFCL case irrelevance_0: {out / 'bfcl-irrelevance_0.json'} leads outside {out}" in done.stderr


def test_an_out_folder_that_cannot_be_made_is_one_named_line_and_exit_2(project: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    done = replio(project, "import", "bfcl", str(DATA), "--out", str(blocker / "bfcl"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"replio: error: {blocker / 'bfcl'}: the fixtures cannot be written there (")
    assert done.stderr.count("\n") == 1

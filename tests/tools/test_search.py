"""glob, list_dir and grep: results in worktree-relative paths, hidden harness files, escapes refused."""

from __future__ import annotations

import pytest

from tests.tools._tree import Run, Tree

# glob ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("**/*.py", ["src/alias.py", "src/app.py", "src/util/helpers.py"]),
        ("*.md", ["README.md"]),
        ("**/*.md", ["README.md", "docs/guide.md"]),
        ("src/*.py", ["src/alias.py", "src/app.py"]),
        ("src/**", ["src/alias.py", "src/app.py", "src/util/helpers.py"]),
        ("src/a?p.py", ["src/app.py"]),
        ("**/helpers.py", ["src/util/helpers.py"]),
    ],
)
def test_glob_patterns(run: Run, pattern: str, found: list[str]) -> None:
    assert run("glob", pattern=pattern).split("\n") == found


def test_glob_no_match(run: Run) -> None:
    assert run("glob", pattern="**/*.rs") == "No files match **/*.rs."


def test_glob_hides_the_harness_folder_and_links_leading_out(run: Run) -> None:
    everything = run("glob", pattern="**").split("\n")
    assert ".replio/config.json" not in everything
    assert not [f for f in everything if f.startswith(("leakdir", "leak.txt"))]
    assert "README.md" in everything


def test_glob_caps_its_results(run: Run, tree: Tree) -> None:
    for i in range(250):
        (tree.root / "many" / f"f{i:03}.txt").parent.mkdir(exist_ok=True)
        (tree.root / "many" / f"f{i:03}.txt").write_text("")
    lines = run("glob", pattern="many/*.txt").split("\n")
    assert len(lines) == 201
    assert lines[-1] == "(50 more files not shown; narrow the search)"


@pytest.mark.parametrize("pattern", ["../*", "../outside/*", "src/../../*", "/etc/*", "/**"])
def test_glob_cannot_escape(run: Run, pattern: str) -> None:
    assert run("glob", pattern=pattern).startswith("Error: pattern")


def test_glob_into_a_symlinked_folder_leading_out_finds_nothing(run: Run) -> None:
    assert run("glob", pattern="leakdir/*") == "No files match leakdir/*."


# list_dir ------------------------------------------------------------------------------------------


def test_list_dir_root_one_level(run: Run) -> None:
    assert run("list_dir") == "./\nREADME.md\ndocs/\nsrc/"


def test_list_dir_depth(run: Run) -> None:
    assert run("list_dir", path="src", depth=2) == "src/\nalias.py\napp.py\nutil/\n  helpers.py"
    assert run("list_dir", path=".", depth=3).split("\n") == [
        "./", "README.md", "docs/", "  guide.md", "src/", "  alias.py", "  app.py", "  util/", "    helpers.py",
    ]


def test_list_dir_empty_folder(run: Run, tree: Tree) -> None:
    (tree.root / "empty").mkdir()
    assert run("list_dir", path="empty") == "empty/\n(empty)"


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"path": "nope"}, "Error: directory not found: nope"),
        ({"path": "README.md"}, "Error: README.md is a file"),
        ({"depth": 0}, "Error: invalid arguments for list_dir: depth"),
        ({"depth": 11}, "Error: invalid arguments for list_dir: depth"),
    ],
)
def test_list_dir_failures(run: Run, arguments: dict, words: str) -> None:
    assert run("list_dir", arguments).startswith(words)


@pytest.mark.parametrize("path", ["..", "../outside", "a/../../outside", "~", "/tmp", "/", "leakdir"])
def test_list_dir_cannot_escape(run: Run, path: str) -> None:
    assert run("list_dir", path=path).startswith("Error: ")


# grep ----------------------------------------------------------------------------------------------


def test_grep_gives_file_line_text(run: Run) -> None:
    assert run("grep", pattern=r"def \w+\(") == (
        "src/alias.py:4:def main():\nsrc/app.py:4:def main():\nsrc/util/helpers.py:1:def helper():"
    )


def test_grep_a_single_file(run: Run) -> None:
    assert run("grep", pattern="main", path="docs/guide.md") == "docs/guide.md:1:Run main() to start."


def test_grep_a_folder_with_a_file_glob(run: Run) -> None:
    assert run("grep", pattern="main", glob="*.md") == "docs/guide.md:1:Run main() to start."
    assert run("grep", pattern="main", path="src/util") == "src/util/helpers.py:2:    return 'main'"


def test_grep_skips_the_harness_folder_binaries_and_links_leading_out(run: Run, tree: Tree) -> None:
    (tree.root / "blob.bin").write_bytes(b"\xffmain\xfe")
    out = run("grep", pattern="secret|main|SECRET")
    files = {line.split(":")[0] for line in out.split("\n")}
    assert files == {"docs/guide.md", "src/alias.py", "src/app.py", "src/util/helpers.py"}


def test_grep_no_match(run: Run) -> None:
    assert run("grep", pattern="zebra") == "No matches for zebra."


def test_grep_invalid_regex(run: Run) -> None:
    assert run("grep", pattern="(unclosed").startswith("Error: invalid regular expression '(unclosed'")


def test_grep_missing_path(run: Run) -> None:
    assert run("grep", pattern="x", path="nope") == "Error: path not found: nope"


def test_grep_caps_its_matches(run: Run, tree: Tree) -> None:
    (tree.root / "log.txt").write_text("hit\n" * 230)
    lines = run("grep", pattern="hit", path="log.txt").split("\n")
    assert len(lines) == 201
    assert lines[0] == "log.txt:1:hit"
    assert lines[-1] == "(30 more matches not shown; narrow the search)"


@pytest.mark.parametrize(
    "path", ["..", "../outside", "../outside/secret.txt", "a/../../outside", "~", "/etc", "leak.txt", "leakdir"]
)
def test_grep_cannot_escape(run: Run, path: str) -> None:
    assert run("grep", pattern=".", path=path).startswith("Error: ")

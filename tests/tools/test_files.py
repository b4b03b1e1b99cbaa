"""file_read (numbered, paged), file_write and file_edit: results, failures as `Error:`, escapes refused."""

from __future__ import annotations

import os
import stat

import pytest

from replio_replay.tools.files import DEFAULT_READ_LIMIT
from tests.tools._tree import SECRET, Run, Tree

# file_read -----------------------------------------------------------------------------------------


def test_file_read_numbers_lines(run: Run) -> None:
    assert run("file_read", path="README.md") == "     1  # Demo\n     2  A small project."


def test_file_read_offset_and_limit(run: Run) -> None:
    out = run("file_read", path="src/app.py", offset=4, limit=1)
    assert out.startswith("     4  def main():")
    assert "\n(Showing lines 4-4 of 5. Call file_read with offset=5 to read more.)" in out
    assert "os.getcwd" not in out


def test_file_read_to_the_end_has_no_note(run: Run) -> None:
    out = run("file_read", path="src/app.py", offset=4, limit=50)
    assert out == "     4  def main():\n     5      return os.getcwd()"


def test_file_read_default_limit_and_the_paging_note(run: Run, tree: Tree) -> None:
    total = DEFAULT_READ_LIMIT * 2 + 50
    (tree.root / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, total + 1)))
    first = run("file_read", path="big.txt")
    lines = first.split("\n")
    assert lines[0] == "     1  line 1"
    assert lines[DEFAULT_READ_LIMIT - 1] == f"{DEFAULT_READ_LIMIT:>6}  line {DEFAULT_READ_LIMIT}"
    assert f"line {DEFAULT_READ_LIMIT + 1}\n" not in first + "\n"
    assert first.endswith(
        f"(Showing lines 1-{DEFAULT_READ_LIMIT} of {total}. "
        f"Call file_read with offset={DEFAULT_READ_LIMIT + 1} to read more.)"
    )
    last = run("file_read", path="big.txt", offset=2 * DEFAULT_READ_LIMIT + 1)
    assert last.startswith(f"{2 * DEFAULT_READ_LIMIT + 1:>6}  line {2 * DEFAULT_READ_LIMIT + 1}")
    assert last.endswith(f"{total:>6}  line {total}")
    assert "Showing lines" not in last


def test_file_read_cuts_very_long_lines(run: Run, tree: Tree) -> None:
    (tree.root / "wide.txt").write_text("x" * 5000 + "\nshort\n")
    out = run("file_read", path="wide.txt")
    first, second = out.split("\n")
    assert len(first) < 2100 and first.endswith("x")
    assert second == "     2  short"


def test_file_read_empty_file(run: Run, tree: Tree) -> None:
    (tree.root / "empty.txt").write_text("")
    assert run("file_read", path="empty.txt") == "empty.txt is empty."


def test_file_read_through_an_inside_symlink(run: Run) -> None:
    assert "def main():" in run("file_read", path="src/alias.py")


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"path": "nope.txt"}, "Error: file not found: nope.txt"),
        ({"path": "src"}, "Error: src is a directory"),
        ({"path": "README.md", "offset": 9}, "Error: offset 9 is past the end of README.md (2 lines)"),
        ({"path": "README.md", "offset": 0}, "Error: invalid arguments for file_read: offset"),
        ({"path": "README.md", "limit": 0}, "Error: invalid arguments for file_read: limit"),
        ({"path": "README.md", "bogus": 1}, "Error: invalid arguments for file_read: bogus"),
        ({}, "Error: invalid arguments for file_read: path"),
        ({"path": ["README.md"]}, "Error: invalid arguments for file_read: path"),
    ],
)
def test_file_read_failures_are_error_results(run: Run, arguments: dict, words: str) -> None:
    assert run("file_read", arguments).startswith(words)


def test_file_read_binary_file(run: Run, tree: Tree) -> None:
    (tree.root / "blob.bin").write_bytes(b"\xff\xfe\x00\x01")
    assert run("file_read", path="blob.bin") == "Error: blob.bin is not a UTF-8 text file"


# file_write ----------------------------------------------------------------------------------------


def test_file_write_creates_folders_and_reports_lines(run: Run, tree: Tree) -> None:
    assert run("file_write", path="new/deep/out.txt", content="a\nb\nc\n") == "Wrote 3 lines to new/deep/out.txt."
    assert (tree.root / "new" / "deep" / "out.txt").read_text() == "a\nb\nc\n"


def test_file_write_overwrites_and_leaves_no_temp_files(run: Run, tree: Tree) -> None:
    before = sorted(p.name for p in tree.root.iterdir())
    run("file_write", path="README.md", content="replaced")
    assert (tree.root / "README.md").read_text() == "replaced"
    assert sorted(p.name for p in tree.root.iterdir()) == before


def test_a_new_file_gets_the_mode_open_would_give_it(run: Run, tree: Tree) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    run("file_write", path="notes.txt", content="x\n")
    assert stat.S_IMODE((tree.root / "notes.txt").stat().st_mode) == 0o666 & ~umask


def test_written_and_edited_files_follow_the_umask_as_a_plain_write_would(run: Run, tree: Tree) -> None:
    (tree.root / "plain.txt").write_text("x")
    expected = (tree.root / "plain.txt").stat().st_mode & 0o777  # not the temp file's 0600
    run("file_write", path="new.txt", content="a\n")
    run("file_edit", path="README.md", old_string="Demo", new_string="Demo!")
    assert [(tree.root / n).stat().st_mode & 0o777 for n in ("new.txt", "README.md")] == [expected] * 2


def test_file_write_onto_a_directory_fails(run: Run) -> None:
    assert run("file_write", path="src", content="x") == "Error: src is a directory"


def test_file_write_needs_content(run: Run) -> None:
    assert run("file_write", path="x.txt").startswith("Error: invalid arguments for file_write: content")


# file_edit -----------------------------------------------------------------------------------------


def test_file_edit_replaces_one_exact_occurrence(run: Run, tree: Tree) -> None:
    assert run("file_edit", path="src/app.py", old_string="os.getcwd()", new_string="'.'") == "Edited src/app.py."
    assert (tree.root / "src" / "app.py").read_text() == "import os\n\n\ndef main():\n    return '.'\n"


def test_file_edit_keeps_a_script_executable(run: Run, tree: Tree) -> None:
    script = tree.root / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o755)
    assert run("file_edit", path="run.sh", old_string="old", new_string="new") == "Edited run.sh."
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


def test_file_edit_text_not_found(run: Run, tree: Tree) -> None:
    before = (tree.root / "src" / "app.py").read_text()
    out = run("file_edit", path="src/app.py", old_string="os.getpid()", new_string="x")
    assert out.startswith("Error: old_string not found in src/app.py")
    assert (tree.root / "src" / "app.py").read_text() == before


def test_file_edit_ambiguous_text(run: Run, tree: Tree) -> None:
    out = run("file_edit", path="src/app.py", old_string="os", new_string="sys")
    assert out.startswith("Error: old_string occurs 2 times in src/app.py")
    assert "import os" in (tree.root / "src" / "app.py").read_text()


def test_file_edit_empty_old_string_and_missing_file(run: Run) -> None:
    assert run("file_edit", path="README.md", old_string="", new_string="x").startswith("Error: old_string not found")
    assert run("file_edit", path="gone.py", old_string="a", new_string="b") == "Error: file not found: gone.py"


# escapes -------------------------------------------------------------------------------------------

ESCAPES = [
    "/etc/passwd",
    "..",
    "../outside/secret.txt",
    "a/../../outside/secret.txt",
    "~",
    "~/.bashrc",
    "leak.txt",  # a symlinked file pointing outside
    "leakdir/secret.txt",  # a symlinked folder pointing outside
    "src/../../outside/secret.txt",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_file_read_cannot_escape(run: Run, path: str) -> None:
    assert run("file_read", path=path).startswith("Error: ")


@pytest.mark.parametrize("path", [*ESCAPES, "leakdir/new.txt", "../new.txt"])
def test_file_write_cannot_escape(run: Run, tree: Tree, path: str) -> None:
    assert run("file_write", path=path, content="pwned").startswith("Error: ")
    assert (tree.outside / "secret.txt").read_text().startswith(SECRET)
    assert not (tree.outside / "new.txt").exists()
    assert not (tree.tmp / "new.txt").exists()


@pytest.mark.parametrize("path", ["leak.txt", "leakdir/secret.txt", "../outside/secret.txt", "/etc/hostname"])
def test_file_edit_cannot_escape(run: Run, tree: Tree, path: str) -> None:
    assert run("file_edit", path=path, old_string=SECRET, new_string="pwned").startswith("Error: ")
    assert (tree.outside / "secret.txt").read_text().startswith(SECRET)


def test_file_write_through_a_dangling_link_leading_out(run: Run, tree: Tree) -> None:
    (tree.root / "trap.txt").symlink_to(tree.outside / "created.txt")
    assert run("file_write", path="trap.txt", content="x").startswith("Error: ")
    assert not (tree.outside / "created.txt").exists()


def test_nul_in_a_path_is_an_error_result_not_an_exception(run: Run) -> None:
    assert run("file_read", path="README.md\x00").startswith("Error: ")
    assert run("file_write", path="a\x00b", content="x").startswith("Error: ")

"""glob, list_dir and grep: worktree-relative results, hidden harness files, escapes refused, RE2 syntax."""

from __future__ import annotations

import os

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


# glob: the RE2 translation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "same_as"),
    [("**/**/helpers.py", "**/helpers.py"), ("src/**/**/**/*.py", "src/**/*.py"), ("**/**", "**")],
)
def test_glob_repeated_any_depth_is_any_depth(run: Run, pattern: str, same_as: str) -> None:
    assert run("glob", pattern=pattern) == run("glob", pattern=same_as)


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("docs/[g]uide.md", "No files match docs/[g]uide.md."),  # brackets are literal, as before
        ("src/app.py", "src/app.py"),
        ("*", "README.md"),
        ("**/a*", "src/alias.py\nsrc/app.py"),
        ("**.md", "README.md\ndocs/guide.md"),
    ],
)
def test_glob_literals_and_stars(run: Run, pattern: str, found: str) -> None:
    assert run("glob", pattern=pattern) == found


def test_glob_matches_names_with_special_characters_literally(run: Run, tree: Tree) -> None:
    for name in ["a+b (1).txt", "a.b$.txt", "café.txt", r"back\slash.txt"]:
        (tree.root / "odd" / name).parent.mkdir(exist_ok=True)
        (tree.root / "odd" / name).write_text("")
    assert run("glob", pattern="odd/a+b (1).txt") == "odd/a+b (1).txt"
    assert run("glob", pattern="odd/a.b$.*") == "odd/a.b$.txt"
    assert run("glob", pattern="odd/caf?.txt") == "odd/café.txt"
    assert run("glob", pattern=r"odd/back\sl*") == r"odd/back\slash.txt"


def test_glob_a_name_that_is_not_utf8(run: Run, tree: Tree) -> None:
    raw = os.path.join(os.fsencode(tree.root), b"bad\xff.txt")
    try:
        os.close(os.open(raw, os.O_CREAT | os.O_WRONLY))
    except OSError:
        pytest.skip("this filesystem refuses names that are not UTF-8")
    assert run("glob", pattern="bad?.txt") == "bad\udcff.txt"
    assert "bad\udcff.txt" in run("glob", pattern="*.txt").split("\n")


# grep: RE2 syntax ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("getcwd|helper", "src/alias.py:5:    return os.getcwd()\nsrc/app.py:5:    return os.getcwd()\n"
                          "src/util/helpers.py:1:def helper():"),
        ("^def", "src/alias.py:4:def main():\nsrc/app.py:4:def main():\nsrc/util/helpers.py:1:def helper():"),
        (r"\(\)$", "src/alias.py:5:    return os.getcwd()\nsrc/app.py:5:    return os.getcwd()"),
        (r"\bmain\b", "docs/guide.md:1:Run main() to start.\nsrc/alias.py:4:def main():\n"
                      "src/app.py:4:def main():\nsrc/util/helpers.py:2:    return 'main'"),
        (r"\bmai\b", "No matches for \\bmai\\b."),
        ("(?i)DEMO", "README.md:1:# Demo"),
        (r"[A-Z][a-z]+ \w+\(\) to", "docs/guide.md:1:Run main() to start."),
        (r"'[^']*'", "src/util/helpers.py:2:    return 'main'"),
        (r"(?P<kw>import) \w+", "src/alias.py:1:import os\nsrc/app.py:1:import os"),
        (r"^\s*$", "src/alias.py:2:\nsrc/alias.py:3:\nsrc/app.py:2:\nsrc/app.py:3:"),
        (r"\d", "No matches for \\d."),
        (r"proj.ct\.$", "README.md:2:A small project."),
    ],
)
def test_grep_ordinary_regexes(run: Run, pattern: str, found: str) -> None:
    assert run("grep", pattern=pattern) == found


def test_grep_matches_characters_not_bytes(run: Run, tree: Tree) -> None:
    (tree.root / "menu.txt").write_text("naïve café\nplain cafe\n", encoding="utf-8")
    assert run("grep", pattern="caf.$", path="menu.txt") == "menu.txt:1:naïve café\nmenu.txt:2:plain cafe"
    assert run("grep", pattern="(?i)CAFÉ", path="menu.txt") == "menu.txt:1:naïve café"
    assert run("grep", pattern="^.{10}$", path="menu.txt") == "menu.txt:1:naïve café\nmenu.txt:2:plain cafe"


def test_grep_reads_crlf_lines_as_before(run: Run, tree: Tree) -> None:
    (tree.root / "dos.txt").write_bytes(b"first line\r\nsecond\rthird\n")
    assert run("grep", pattern="^(first line|second|third)$", path="dos.txt") == (
        "dos.txt:1:first line\ndos.txt:2:second\ndos.txt:3:third"
    )


def test_grep_refuses_backreferences_and_says_what_to_do(run: Run) -> None:
    assert run("grep", pattern=r"(a)\1") == (
        r"Error: invalid regular expression '(a)\1': backreferences are not supported "
        "(grep uses RE2 syntax, a linear-time engine); rewrite the pattern without them"
    )


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (r"(?P<q>['\"]).*(?P=q)", "backreferences are not supported"),
        ("main(?=\\()", "lookahead assertions are not supported"),
        ("main(?!x)", "lookahead assertions are not supported"),
        ("(?<=def )main", "lookbehind assertions are not supported"),
        ("(?<!x)main", "lookbehind assertions are not supported"),
        ("(?>main)", "atomic groups are not supported"),
        ("(a)?(?(1)b|c)", "conditional groups are not supported"),
        ("(?#why)main", "comments (?#...) are not supported"),
        ("(?x) main", "of the inline flags only i, m, s and U are supported"),
        ("ma*+in", "possessive quantifiers are not supported"),
        (r"main\Z", r"\Z is not supported"),
        (r"caf\u00e9", r"\u, \U and \N escapes are not supported"),
        ("a{1001}", "repetition counts go from 0 to 1000"),
        ("(unclosed", "missing ): (unclosed (grep uses RE2 syntax, a linear-time engine); fix the pattern"),
        ("[a", "missing ]: [a (grep uses RE2 syntax, a linear-time engine); fix the pattern"),
    ],
)
def test_grep_names_what_re2_lacks(run: Run, pattern: str, problem: str) -> None:
    out = run("grep", pattern=pattern)
    assert out.startswith(f"Error: invalid regular expression '{pattern}': {problem}")
    assert "RE2 syntax" in out


def test_grep_a_pattern_with_a_lone_surrogate(run: Run) -> None:
    assert run("grep", pattern="main\udcff").startswith(
        "Error: invalid regular expression 'main\udcff': it holds a lone surrogate character"
    )

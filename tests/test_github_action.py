"""replio's GitHub Action (action.yml): its `run` steps run as GitHub runs them (bash, the step's env with its
`${{ }}` expressions filled in, its `if:` evaluated, GitHub's variables set), with a fake `gh` on PATH
(tests/support/fake_gh.py): the step summary is written, one comment is created then edited, a fork's or a
read-only token's pull request gets none and no failure, the job fails with replio's exit code; the
workflow_run half posts only for the pull request whose head was replayed. The action and the example
workflows are valid against GitHub's schemas (schemastore's, as check-jsonschema ships them)."""

from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

# One xdist worker runs the module (--dist loadgroup): its project, made once for the module,
# is made once, not once by each worker that runs one of its tests.
pytestmark = pytest.mark.xdist_group("github-action")

REPO = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
REPOSITORY = "octo/shop"
HEAD = "a" * 40


EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def _fill(text: object, value: Callable[[str], str]) -> str:
    """`text` with each `${{ name }}` in it replaced by its value."""
    return EXPRESSION.sub(lambda m: value(m[1]), str(text))


def _value(name: str, inputs: dict[str, str], outputs: dict[str, str], temp: Path) -> str:
    """What GitHub puts in place of `${{ name }}` for the expressions action.yml uses."""
    if name.startswith("inputs."):
        key = name.removeprefix("inputs.")
        default = _fill(ACTION["inputs"][key].get("default", ""), lambda name: _value(name, inputs, outputs, temp))
        return inputs.get(key, default)
    fixed = {"github.action_path": str(REPO), "github.token": "ghs_token_of_the_job", "runner.temp": str(temp),
             "steps.replay.outputs.exit-code": outputs.get("exit-code", "")}
    return fixed[name]


def _condition(expression: str, value: Callable[[str], str]) -> bool:
    """An `if:` of action.yml (comparisons of names with strings, && and ||), evaluated."""
    python = re.sub(r"\b(inputs|steps|github|runner)\.[\w.-]+", lambda m: repr(value(m[0])), expression)
    python = python.replace("&&", " and ").replace("||", " or ")
    assert re.fullmatch(r"(\s|'[^']*'|==|!=|\band\b|\bor\b)*", python), python  # strings compared, nothing else
    return bool(eval(python, {"__builtins__": {}}))  # noqa: S307 - the action's own conditions, checked above


class Runner:
    """The runner of one job: its temp folder, GitHub's files and variables, the fake gh's state."""

    def __init__(self, work: Path, event: dict[str, Any], event_name: str = "pull_request") -> None:
        self.work, self.temp = work, work / "runner-temp"
        self.temp.mkdir(parents=True, exist_ok=True)
        self.summary, self.output, self.state = work / "step-summary.md", work / "output.txt", work / "gh.json"
        (work / "event.json").write_text(json.dumps(event), encoding="utf-8")
        bin_dir = work / "bin"
        bin_dir.mkdir(exist_ok=True)
        gh = bin_dir / "gh"
        gh.write_text(f"#!{sys.executable}\n" + (REPO / "tests" / "support" / "fake_gh.py").read_text(), "utf-8")
        gh.chmod(0o755)
        if not self.state.exists():
            self.state.write_text(json.dumps({"comments": {}, "next_id": 1000, "calls": [], "heads": {}}))
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))},
                    "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]),
                    "GITHUB_ACTION_PATH": str(REPO), "GITHUB_EVENT_NAME": event_name,
                    "GITHUB_EVENT_PATH": str(work / "event.json"), "GITHUB_REPOSITORY": REPOSITORY,
                    "GITHUB_SERVER_URL": "https://github.example", "GITHUB_RUN_ID": "77", "RUNNER_TEMP": str(self.temp),
                    "GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_OUTPUT": str(self.output),
                    "FAKE_GH_STATE": str(self.state)}

    def gh(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.state.read_text())
        return data

    def set_gh(self, **changes: Any) -> None:
        self.state.write_text(json.dumps({**self.gh(), **changes}))

    def outputs(self) -> dict[str, str]:
        if not self.output.exists():
            return {}
        return dict(line.split("=", 1) for line in self.output.read_text().splitlines())

    def run(self, inputs: dict[str, str], names: tuple[str, ...] | None = None) -> dict[str, subprocess.CompletedProcess[str]]:
        """Each `run` step of action.yml whose `if:` holds (those in `names`, when given), in order, in the
        project's folder; `uses:` steps are left to GitHub. Stops at the first step that fails."""
        done: dict[str, subprocess.CompletedProcess[str]] = {}
        for step in STEPS:
            if "run" not in step or (names is not None and step["name"] not in names):
                continue

            def value(name: str) -> str:
                return _value(name, inputs, self.outputs(), self.temp)

            if "if" in step and not _condition(step["if"], value):
                continue
            env = {**self.env, **{k: _fill(v, value) for k, v in step.get("env", {}).items()}}
            done[step["name"]] = result = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=self.work / "project",
                                                         env=env, capture_output=True, text=True, timeout=300)
            if result.returncode != 0:
                break
        return done


def pull_request(number: int = 12, fork: bool = False) -> dict[str, Any]:
    head_repo = "stranger/shop" if fork else REPOSITORY
    return {"pull_request": {"number": number, "head": {"sha": HEAD, "repo": {"full_name": head_repo}}}}


REPLAY = ("Replay", "Comment on the pull request", "Fail on drift or a failed gate")


def job(project: Path, tmp_path: Path, event: dict[str, Any]) -> Runner:
    """A job of its own (its runner's files, its gh) on the clone of the catalog."""
    work = tmp_path / "job"
    work.mkdir()
    (work / "project").symlink_to(project / "project")
    return Runner(work, event)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the repository's recorded catalog."""
    root = tmp_path_factory.mktemp("clone")
    for part in ("cassettes", "golden", ".replio"):
        shutil.copytree(REPO / part, root / "project" / part)
    return root


@pytest.fixture(scope="module")
def passing(project: Path) -> Runner:
    """A pull request's job, replayed once (every gate holds)."""
    runner = Runner(project, pull_request())
    done = runner.run({}, ("Replay",))
    assert done["Replay"].returncode == 0, done["Replay"].stdout + done["Replay"].stderr
    return runner


def test_the_replay_writes_the_step_summary_the_report_and_the_review(passing: Runner) -> None:
    out = passing.outputs()
    assert out["exit-code"] == "0"
    summary = passing.summary.read_text()
    assert summary.startswith("## replio eval\n\n**CI: passed.** No score gate was set.\n")
    assert Path(out["report"]).read_text().startswith("<!DOCTYPE html>")
    assert Path(out["review"]).read_text() == summary  # the catalog's review fits a comment whole
    assert (Path(out["output-dir"]) / "pr-number").read_text() == "12\n"
    upload = next(s for s in STEPS if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"] == "${{ runner.temp }}/replio" and Path(out["output-dir"]) == passing.temp / "replio"


def test_no_line_replio_prints_is_a_command_to_the_runner(project: Path, tmp_path: Path) -> None:
    """A fixture, a model or a tool can write a line `::error::…` or `::add-mask::…`, and replio prints it: the replay
    stops the runner's commands around replio (`::stop-commands::TOKEN` … `::TOKEN::`), with a token of its own."""
    runner = job(project, tmp_path, pull_request())
    done = runner.run({"fail-under": "pass_rat=0.9", "comment": "false"}, ("Replay",))["Replay"]
    lines = done.stdout.splitlines()
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0])
    assert token and lines[1].startswith("replio action: replio eval") and lines[-1] == f"::{token[1]}::"
    again = runner.run({"fail-under": "pass_rat=0.9", "comment": "false"}, ("Replay",))["Replay"]
    assert again.stdout.splitlines()[0] != lines[0]  # not one an earlier job's log would tell


def test_one_comment_is_created_then_edited(passing: Runner) -> None:
    done = passing.run({}, ("Comment on the pull request",))
    assert done["Comment on the pull request"].stdout == "replio action: commented on pull request #12\n"
    again = passing.run({}, ("Comment on the pull request",))
    assert again["Comment on the pull request"].stdout == "replio action: updated comment 1001 on pull request #12\n"
    gh = passing.gh()
    (comment,) = gh["comments"]["12"]
    link = "\n\n[The job's summary and HTML report](https://github.example/octo/shop/actions/runs/77)\n"
    # replio's own review is posted as it is: making mentions and references inert leaves it unchanged
    assert comment["body"] == "<!-- replio-review: replio -->\n" + passing.summary.read_text() + link
    assert [(c["method"], c["path"].split("?")[0]) for c in gh["calls"]] == [
        ("GET", "repos/octo/shop/issues/12/comments"), ("POST", "repos/octo/shop/issues/12/comments"),
        ("GET", "repos/octo/shop/issues/12/comments"), ("PATCH", "repos/octo/shop/issues/comments/1001")]
    assert {c["token"] for c in gh["calls"]} == {"ghs_token_of_the_job"}


def test_another_name_keeps_a_comment_of_its_own_and_a_humans_marker_is_not_taken(passing: Runner) -> None:
    before = passing.gh()["comments"].get("12", [])
    human = {"id": 5, "body": "<!-- replio-review: nightly -->\nme", "user": {"login": "mallory", "type": "User"}}
    passing.set_gh(comments={"12": [human, *before]})
    done = passing.run({"name": "nightly"}, ("Comment on the pull request",))
    assert done["Comment on the pull request"].stdout.startswith("replio action: commented on pull request #12")
    bodies = [c["body"].split("\n", 1)[0] for c in passing.gh()["comments"]["12"]]
    assert bodies.count("<!-- replio-review: nightly -->") == 2 and passing.gh()["comments"]["12"][0] == human


def test_a_long_name_or_a_review_long_once_inert_still_fits_a_comment(project: Path, tmp_path: Path) -> None:
    runner, done = workflow_run(project, tmp_path, "7\n", HEAD, b"@a #1 " * 20_000)  # longer once made inert
    assert done.stdout == "replio action: commented on pull request #7\n", done.stdout
    done = runner.run({"mode": "comment", "review": str(runner.temp / "replio-review" / "review.md"),
                       "name": "x" * 2000}, ("Comment on the pull request",))["Comment on the pull request"]
    assert done.stdout == "replio action: commented on pull request #7\n", done.stdout
    bodies = [c["body"] for c in runner.gh()["comments"]["7"]]
    assert bodies[1].startswith("<!-- replio-review: " + "x" * 100 + " -->\n@\u200ba #\u200b1 ")


def test_a_fork_or_a_read_only_token_gets_no_comment_and_no_failure(passing: Runner, tmp_path: Path) -> None:
    fork = Runner(passing.work, pull_request(fork=True))
    fork.state = tmp_path / "gh.json"
    fork.env["FAKE_GH_STATE"] = str(fork.state)
    fork.state.write_text(json.dumps({"comments": {}, "next_id": 1, "calls": [], "heads": {}}))
    done = fork.run({}, ("Comment on the pull request",))["Comment on the pull request"]
    assert done.returncode == 0 and "comes from a fork" in done.stdout and fork.gh()["calls"] == []
    (passing.work / "event.json").write_text(json.dumps(pull_request(number=40)))
    passing.set_gh(read_only=True)
    try:
        done = passing.run({}, ("Comment on the pull request",))["Comment on the pull request"]
    finally:
        passing.set_gh(read_only=False)
        (passing.work / "event.json").write_text(json.dumps(pull_request()))
    assert done.returncode == 0 and "::warning::replio action: could not comment on pull request #40" in done.stdout
    assert "HTTP 403" in done.stdout and passing.gh()["comments"].get("40", []) == []


def test_a_push_has_no_pull_request_to_comment_on(passing: Runner, tmp_path: Path) -> None:
    (passing.work / "event.json").write_text(json.dumps({"ref": "refs/heads/main"}))
    try:
        done = passing.run({}, ("Comment on the pull request",))["Comment on the pull request"]
    finally:
        (passing.work / "event.json").write_text(json.dumps(pull_request()))
    assert done.stdout == "replio action: not a pull request; the review is in the step summary\n"


def test_comment_off_skips_the_step_and_the_job_passes(passing: Runner) -> None:
    done = passing.run({"comment": "false"}, ("Comment on the pull request", "Fail on drift or a failed gate"))
    assert list(done) == ["Fail on drift or a failed gate"] and done["Fail on drift or a failed gate"].returncode == 0


def test_a_failed_gate_fails_the_job_after_the_review_is_written_and_posted(project: Path, tmp_path: Path) -> None:
    runner = job(project, tmp_path, pull_request(number=3))
    done = runner.run({"fail-under": "pass_rate=0.9, accuracy=0.1"}, REPLAY)
    assert list(done) == list(REPLAY)
    assert done["Fail on drift or a failed gate"].returncode == 1
    assert "::error::replio exited 1" in done["Fail on drift or a failed gate"].stdout
    assert runner.outputs()["exit-code"] == "1"
    summary = runner.summary.read_text()
    assert summary.startswith("## replio eval\n\n**CI: failed.** Gates: --fail-under pass\\_rate=0.9; "
                              "--fail-under accuracy=0.1.\n\n- gate failed: pass\\_rate 0.44 &lt; 0.90 \\(--fail-under\\)\n")
    (comment,) = runner.gh()["comments"]["3"]
    assert "**CI: failed.**" in comment["body"]


def test_gates_given_in_args_judge_the_comment_as_they_judge_the_job(project: Path, tmp_path: Path) -> None:
    runner = job(project, tmp_path, pull_request(number=4))
    done = runner.run({"args": "--fail-under=accuracy=0.1 --fail-under pass_rate=0.9"}, REPLAY)
    assert done["Fail on drift or a failed gate"].returncode == 1
    summary = runner.summary.read_text()
    assert summary.startswith("## replio eval\n\n**CI: failed.** Gates: ")
    (comment,) = runner.gh()["comments"]["4"]
    assert comment["body"].split("\n", 1)[1].startswith(summary)  # not "CI: passed" beside a failed check


def test_a_usage_error_fails_the_job_and_says_so(project: Path, tmp_path: Path) -> None:
    runner = job(project, tmp_path, pull_request())
    done = runner.run({"fail-under": "pass_rat=0.9", "comment": "false"}, REPLAY)
    assert done["Fail on drift or a failed gate"].returncode == 2
    assert "did you mean 'pass_rate'" in done["Replay"].stderr
    assert runner.summary.read_text() == ("## replio eval\n\n**CI: failed.** replio exited 2 before it had a result; "
                                          "the job's log says why.\n")


def workflow_run(project: Path, tmp_path: Path, saved: str, head: str,
                 review: bytes = b"## replio eval\n\nfrom the fork\n") -> tuple[Runner, subprocess.CompletedProcess[str]]:
    """The comment workflow's job: the replay's artifact downloaded into the runner's temp folder, then the action in
    comment mode."""
    work = tmp_path / "job"
    (work / "project").mkdir(parents=True)
    runner = Runner(work, {"workflow_run": {"event": "pull_request", "head_sha": HEAD}}, "workflow_run")
    artifact = runner.temp / "replio-review"
    artifact.mkdir()
    (artifact / "review.md").write_bytes(review)
    (artifact / "pr-number").write_text(saved)
    runner.set_gh(heads={"7": head})
    done = runner.run({"mode": "comment", "review": str(artifact / "review.md")})
    assert list(done) == ["Comment on the pull request"]
    return runner, done["Comment on the pull request"]


def test_the_workflow_run_half_posts_the_forks_review_on_its_pull_request(project: Path, tmp_path: Path) -> None:
    runner, done = workflow_run(project, tmp_path, "7\n", HEAD)
    assert done.stdout == "replio action: commented on pull request #7\n", done.stderr
    (comment,) = runner.gh()["comments"]["7"]
    assert comment["body"].startswith("<!-- replio-review: replio -->\n## replio eval\n\nfrom the fork\n")


@pytest.mark.parametrize(("saved", "head", "said"), [
    ("7\n", "b" * 40, "pull request #7's head is bbbb"),
    ("7; rm -rf /", HEAD, "the pull request number the replay saved is not a number: '7; rm -rf /'"),
])
def test_the_workflow_run_half_refuses_a_number_it_cannot_trust(project: Path, tmp_path: Path, saved: str, head: str,
                                                                said: str) -> None:
    runner, done = workflow_run(project, tmp_path, saved, head)
    assert done.returncode == 0 and said in done.stdout
    assert [c["method"] for c in runner.gh()["calls"]] in ([], ["GET"]) and runner.gh()["comments"] == {}


#: What GitHub turns into a ping or a cross-reference in a comment, written straight and as entities.
PINGS = ("@octocat @org/everyone cc:@mallory #12 owner/repo#4 GH-3 gh-5 &#64;octocat &#x40;a &commat;b &#35;6 &num;7 "
         "&#x23;8 &amp;#64;c [x](https://e.example/@d)")


def test_the_workflow_run_half_pings_nobody_whatever_the_forks_artifact_says(project: Path, tmp_path: Path) -> None:
    """The fork's workflow writes the artifact: a review that mentions people and teams and references issues (here
    or on another repository, where GitHub would post a cross-reference) is posted with each of them inert, cut to
    a comment's size however large the file, and a file that is not UTF-8 is posted too."""
    forged = (b"<!-- replio-review: replio -->\n" + PINGS.encode() + b" \xff\xfe " + "漢".encode() * 3_000_000)
    runner, done = workflow_run(project, tmp_path, "7\n", HEAD, forged)
    assert done.returncode == 0 and done.stdout == "replio action: commented on pull request #7\n", done.stderr
    (comment,) = runner.gh()["comments"]["7"]
    body = comment["body"]
    assert body.startswith("<!-- replio-review: replio -->\n<!-- replio-review: replio -->\n") and len(body) < 65_536
    shown = html.unescape(body)  # what GitHub reads once entities are decoded
    assert re.findall(r"@\w|#\d|(?i:\bGH-\d)", shown) == [] and "\ufffd" in shown
    words = shown.replace("\u200b", "")  # every word is still there, an entity shown as written
    assert words.count("@octocat") == 1 and "&#64;octocat &#x40;a &commat;b &#35;6" in words


def test_the_comment_step_never_fails_the_job_on_what_gh_or_the_artifact_does(passing: Runner, tmp_path: Path) -> None:
    passing.set_gh(answer="<html>502 Bad Gateway</html>")
    try:
        done = passing.run({}, ("Comment on the pull request",))["Comment on the pull request"]
    finally:
        state = passing.gh()
        del state["answer"]
        passing.state.write_text(json.dumps(state))
    assert done.returncode == 0, done.stderr
    assert "::warning::replio action: could not comment on pull request #12 (gh api repos/octo/shop/issues/12/" \
           "comments?per_page=100&page=1 answered with what is not JSON: '<html>502 Bad Gateway</html>\\n')" \
           in done.stdout
    runner, done = workflow_run(passing.work, tmp_path / "no-review", "7\n", HEAD)
    (runner.temp / "replio-review" / "review.md").unlink()
    done = runner.run({"mode": "comment", "review": str(runner.temp / "replio-review" / "review.md")},
                      ("Comment on the pull request",))["Comment on the pull request"]
    assert done.returncode == 0 and "::warning::replio action: no review to post" in done.stdout, done.stderr
    runner.set_gh(answer='["not a pull request"]')
    done = runner.run({"mode": "comment", "review": str(runner.temp / "replio-review" / "review.md")},
                      ("Comment on the pull request",))["Comment on the pull request"]
    assert done.returncode == 0 and "pull request #7's head is None, not the commit" in done.stdout, done.stderr


def test_gh_that_cannot_be_run_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("github_action", REPO / "scripts" / "github_action.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("PATH", str(tmp_path))  # no gh anywhere
    with pytest.raises(RuntimeError, match=r"^gh api repos/o/r/pulls/1 could not be run: "):
        module._gh("repos/o/r/pulls/1")


def test_a_step_summary_that_cannot_be_written_or_args_a_shell_cannot_split_are_said(project: Path,
                                                                                      tmp_path: Path) -> None:
    runner = job(project, tmp_path, pull_request())
    runner.env["GITHUB_STEP_SUMMARY"] = str(tmp_path)  # a folder: not writable as a file
    done = runner.run({"fail-under": "pass_rat=0.9", "comment": "false"}, REPLAY)
    assert done["Replay"].returncode == 0 and "::warning::replio action: could not write the step summary (" \
        in done["Replay"].stdout, done["Replay"].stderr
    assert done["Fail on drift or a failed gate"].returncode == 2  # the verdict still stands
    done = runner.run({"args": "--fixture 'unclosed", "comment": "false"}, REPLAY)
    assert done["Replay"].returncode == 1 and "Traceback" not in done["Replay"].stderr
    assert done["Replay"].stderr == ("replio action: input args cannot be split into words as a shell would "
                                     "(No closing quotation): \"--fixture 'unclosed\"\n")


WORKFLOWS = sorted((REPO / "docs").glob("github-actions*.yml"))


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
                          capture_output=True, text=True, timeout=120)


def test_the_action_and_the_workflows_are_valid_against_githubs_schemas(tmp_path: Path) -> None:
    assert len(WORKFLOWS) == 4
    done = check_jsonschema("vendor.github-workflows", *WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr
    done = check_jsonschema("vendor.github-actions", REPO / "action.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    broken = tmp_path / "broken.yml"  # a composite step that runs a command with no shell: the schema sees it
    broken.write_text((REPO / "action.yml").read_text().replace("      shell: bash\n", "", 1))
    assert check_jsonschema("vendor.github-actions", broken).returncode == 1


def test_the_workflows_use_the_action_as_it_is_declared() -> None:
    declared = set(ACTION["inputs"])
    for workflow in WORKFLOWS:
        for job in yaml.safe_load(workflow.read_text())["jobs"].values():
            for step in job["steps"]:
                if step.get("uses") == "./":
                    assert set(step.get("with", {})) <= declared, workflow
    assert all(step.get("shell") == "bash" for step in STEPS if "run" in step)


def test_no_input_is_spliced_into_a_command_and_the_comment_half_runs_nothing_of_the_forks() -> None:
    """The composite action passes every input through the environment (an expression inside `run:` is pasted into the
    script before bash reads it: a `tools` of `$(curl …)` would run). The workflow_run half holds a token that may
    write: it runs no command of its own, checks out only this repository's default branch, unpacks the fork's
    artifact outside the workspace, and asks for no permission beyond reading the artifact and the repository and
    writing the comment; the replay half is a `pull_request` workflow, never `pull_request_target`."""
    assert [step["run"] for step in STEPS if "${{" in step.get("run", "")] == []
    comment = yaml.safe_load((REPO / "docs" / "github-actions-review-comment.yml").read_text())
    replay = yaml.safe_load((REPO / "docs" / "github-actions-review.yml").read_text())
    assert comment["permissions"] == {"actions": "read", "contents": "read", "pull-requests": "write"}
    assert set(comment[True]) == {"workflow_run"} and set(replay[True]) == {"pull_request", "push"}  # YAML's `on`
    (job,) = comment["jobs"].values()
    assert [step for step in job["steps"] if "run" in step] == []
    checkout = next(step for step in job["steps"] if step.get("uses", "").startswith("actions/checkout"))
    assert set(checkout.get("with", {})) == set()  # no ref, no repository: the base's default branch
    download = next(step for step in job["steps"] if step.get("uses", "").startswith("actions/download-artifact"))
    posted = next(step for step in job["steps"] if step.get("uses") == "./")
    assert download["with"]["path"].startswith("${{ runner.temp }}/")
    assert posted["with"]["review"].startswith(download["with"]["path"] + "/")

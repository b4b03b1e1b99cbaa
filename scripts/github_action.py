#!/usr/bin/env python3
"""The steps of replio's GitHub Action (`action.yml`), as one script that the tests run with a fake `gh`.

    python github_action.py replay    replay offline; write the review into the step summary, the HTML
                                      report, and the review sized for a comment; note the exit code
    python github_action.py comment   keep one comment on the pull request up to date with the review
    python github_action.py verdict   exit as the replay did: the job fails on --strict drift or a gate

The inputs come as `INPUT_*` variables (action.yml maps each), GitHub's own as GitHub sets them
(`GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`, `GITHUB_EVENT_NAME`, `GITHUB_EVENT_PATH`, `GITHUB_REPOSITORY`,
`GH_TOKEN`). The review itself is rendered by replio (`--markdown`): this script only runs replio and `gh`.

One comment per pull request and `name`: it starts with a hidden marker, and the next run edits it
(`gh api`, the issue-comments endpoints). A token that may not write (a pull request from a fork gets a
read-only one) is not an error: the review stays in the step summary, and the two-workflow pattern
(docs/how-to/ci.md) posts it from a `workflow_run` workflow that never runs the pull request's code,
with `comment` reading the review and the pull request's number (`pr-number` beside it) from the
replay's artifact.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

#: A comment GitHub takes is at most 65,536 characters: the review leaves room for the marker and the link.
COMMENT_CHARS = 65_000
GATES = ("fail-under", "fail-over", "max-drop")


def _input(name: str, default: str = "") -> str:
    return os.environ.get(f"INPUT_{name.upper().replace('-', '_')}", default).strip()


def _flag(name: str) -> bool:
    value = _input(name, "false").lower()
    if value not in ("true", "false"):
        sys.exit(f"replio action: input {name} is {value!r}; give true or false")
    return value == "true"


def _out() -> Path:
    out = Path(_input("output-dir") or Path(os.environ.get("RUNNER_TEMP", ".")) / "replio")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _judging() -> list[str]:
    """The flags that decide the exit code, shared by the replay and the review re-judged from its result."""
    args = ["--strict"] if _flag("strict") else []
    for gate in GATES:
        args += [part for spec in re.split(r"[\s,]+", _input(gate)) if spec for part in (f"--{gate}", spec)]
    if _flag("fail-if-worse"):
        args.append("--fail-if-worse")
    if _input("baseline"):
        args += ["--baseline", _input("baseline")]
    return args


#: The flags of `run` that `merge` judges by too: given in `args`, the comment's review is judged by them as well.
_SWITCHES, _VALUED = ("--strict", "--fail-if-worse"), ("--fail-under", "--fail-over", "--max-drop", "--baseline")


def _judging_in(words: list[str]) -> list[str]:
    """The judging flags among `words` (the `args` input), with their values."""
    found = []
    for i, word in enumerate(words):
        if word in _SWITCHES or word.split("=", 1)[0] in _VALUED and "=" in word:
            found.append(word)
        elif word in _VALUED and i + 1 < len(words):
            found += [word, words[i + 1]]
    return found


def _output(**values: str) -> None:
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.writelines(f"{key}={value}\n" for key, value in values.items())


def _event() -> dict[str, Any]:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return {}
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def replay() -> int:
    """Replay offline as the inputs say; the exit code goes to the `exit-code` output, not to this step."""
    out, project = _out(), _input("path", ".")
    result, summary, review = out / "replio.json", out / "summary.md", out / "review.md"
    command = ["replio", "eval", "--path", project, "run", "--record-mode", "none", *_judging()]
    for name in ("tools", "compare"):
        if _input(name):
            command += [f"--{name}", _input(name)]
    try:
        extra = shlex.split(_input("args"))
    except ValueError as exc:
        sys.exit(f"replio action: input args cannot be split into words as a shell would ({exc}): {_input('args')!r}")
    command += [*extra, "--output-file", str(result), "--html", str(out / "replio.html"),
                "--markdown", str(summary)]
    for stale in (result, summary, review, out / "pr-number"):  # an earlier use of the action in this job
        stale.unlink(missing_ok=True)
    # What replio prints holds what models, tools and fixtures wrote: a line of it starting `::error::` or
    # `::add-mask::` would be a command to the runner. None is obeyed until the token no one else knows.
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}\nreplio action:", shlex.join(command), flush=True)
    try:
        code = subprocess.run(command, check=False).returncode
        if result.is_file():
            # the same result judged again as the replay judged it, the review cut to a comment's size
            subprocess.run(["replio", "eval", "--path", project, "merge", str(result), *_judging(),
                            *_judging_in(extra), "--output", "json", "--markdown", str(review),
                            "--markdown-max-chars", str(COMMENT_CHARS)], check=False, stdout=subprocess.DEVNULL)
    finally:
        print(f"::{token}::", flush=True)
    if not summary.is_file():
        summary.write_text(f"## replio eval\n\n**CI: failed.** replio exited {code} before it had a result; "
                           "the job's log says why.\n", encoding="utf-8")
    if not review.is_file():
        review.write_text(summary.read_text(encoding="utf-8"), encoding="utf-8")
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        try:
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as step:
                step.write(summary.read_text(encoding="utf-8"))
        except OSError as exc:  # the review is still in the artifact and the comment; the verdict still stands
            print(f"::warning::replio action: could not write the step summary ({exc}); the review is in {summary}")
    number = (_event().get("pull_request") or {}).get("number")
    if number is not None:
        (out / "pr-number").write_text(f"{int(number)}\n", encoding="utf-8")
    _output(**{"exit-code": str(code), "review": str(review), "report": str(out / "replio.html"),
               "output-dir": str(out)})
    return 0


def _gh(*args: str, body: dict[str, Any] | None = None) -> Any:
    """`gh api ARGS`, its JSON answer; a RuntimeError carrying gh's words when it fails, cannot be run, takes
    too long or answers with something that is not JSON."""
    try:
        done = subprocess.run(["gh", "api", *args, *(["--input", "-"] if body is not None else [])],
                              input=None if body is None else json.dumps(body), capture_output=True, text=True,
                              check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"gh api {args[-1]} could not be run: {exc}") from exc
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip() or f"gh exited {done.returncode}")
    try:
        return json.loads(done.stdout) if done.stdout.strip() else None
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"gh api {args[-1]} answered with what is not JSON: {done.stdout[:80]!r}") from exc


def _pull_request(repo: str) -> int | None:
    """The pull request to comment on: the event's; for a `workflow_run`, the number the replay saved,
    taken only when that pull request's head is the commit the replay ran on."""
    event = _event()
    if "pull_request" in event:
        return int(event["pull_request"]["number"])
    run = event.get("workflow_run")
    saved = _review().parent / "pr-number"
    given = _input("pr-number") or (_read(saved, 64).strip() if saved.is_file() else "")
    if run is None or not given:
        return None
    if not re.fullmatch(r"[0-9]{1,9}", given):
        raise RuntimeError(f"the pull request number the replay saved is not a number: {given[:40]!r}")
    pull = _gh(f"repos/{repo}/pulls/{given}")
    head = ((pull.get("head") if isinstance(pull, dict) else None) or {}).get("sha")
    if head != run.get("head_sha"):
        raise RuntimeError(f"pull request #{given}'s head is {head}, not the commit the replay ran on "
                           f"({run.get('head_sha')}); not commenting")
    return int(given)


def _review() -> Path:
    """The review to post: the `review` input (a file from the replay's artifact), else this job's replay's."""
    return Path(_input("review") or _out() / "review.md")


def _marker() -> str:
    """The comment's hidden first line; its name at most 100 characters, so the review keeps its room."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", _input("name", "replio"))[:100]
    return f"<!-- replio-review: {name} -->"


def _ours(repo: str, number: int, marker: str) -> int | None:
    """The id of the comment this action wrote before on `number` (a bot's, starting with `marker`)."""
    page = 1
    while True:
        comments = _gh(f"repos/{repo}/issues/{number}/comments?per_page=100&page={page}")
        if not isinstance(comments, list) or not all(isinstance(c, dict) for c in comments):
            raise RuntimeError(f"gh listed pull request #{number}'s comments as something else than a list of them")
        for comment in comments:
            if str(comment.get("body")).startswith(marker) and (comment.get("user") or {}).get("type") == "Bot":
                return int(comment["id"])
        if len(comments) < 100:
            return None
        page += 1


def _read(path: Path, chars: int) -> str:
    """The first `chars` characters of a file however large it is and whatever it holds (an artifact's)."""
    with open(path, "rb") as file:
        return file.read(chars * 4).decode("utf-8", errors="replace")[:chars]


def _quiet(review: str) -> str:
    """`review` with every mention and reference to an issue made inert, as replio's review makes what a model
    wrote: a review from another workflow's artifact (a fork's) may be written by anyone, and a bot's comment
    must ping nobody nor post a cross-reference on another repository's issue. replio's own review has none
    left, so it is posted as it is."""
    # an entity would be decoded into the `@` or `#` it names: only those replio writes are left as they are
    review = re.sub(r"&(?!(?:amp|lt|gt|#36);)", "&amp;", review)
    review = re.sub("@(?!\u200b)", "@\u200b", review)
    return re.sub(r"(?i)(?<!&)#(?=\d)|\bGH-(?=\d)", lambda m: m[0] + "\u200b", review)


def comment() -> int:
    """Create the review's comment, or edit the one made before; say so, and why not when it cannot."""
    repo = os.environ["GITHUB_REPOSITORY"]
    try:
        number = _pull_request(repo)
    except RuntimeError as exc:
        print(f"::warning::replio action: {exc}")
        return 0
    if number is None:
        print("replio action: not a pull request; the review is in the step summary")
        return 0
    head_repo = ((_event().get("pull_request") or {}).get("head") or {}).get("repo") or {}
    if os.environ.get("GITHUB_EVENT_NAME") == "pull_request" and head_repo.get("full_name") not in (None, repo):
        print(f"::notice::replio action: pull request #{number} comes from a fork, whose token may not comment; "
              "the review is in the step summary (the two-workflow pattern posts it: docs/how-to/ci.md)")
        return 0
    try:
        review = _quiet(_read(_review(), COMMENT_CHARS))[:COMMENT_CHARS]  # cut again: inert is longer
    except OSError as exc:
        print(f"::warning::replio action: no review to post ({exc})")
        return 0
    server, run_id = os.environ.get("GITHUB_SERVER_URL", "https://github.com"), os.environ.get("GITHUB_RUN_ID")
    link = f"\n\n[The job's summary and HTML report]({server}/{repo}/actions/runs/{run_id})\n" if run_id else ""
    marker = _marker()
    body = {"body": f"{marker}\n{review}{link}"}
    try:
        found = _ours(repo, number, marker)
        if found is None:
            _gh("--method", "POST", f"repos/{repo}/issues/{number}/comments", body=body)
            print(f"replio action: commented on pull request #{number}")
        else:
            _gh("--method", "PATCH", f"repos/{repo}/issues/comments/{found}", body=body)
            print(f"replio action: updated comment {found} on pull request #{number}")
    except RuntimeError as exc:
        print(f"::warning::replio action: could not comment on pull request #{number} ({exc}); the token may "
              "not write here (give the job `permissions: pull-requests: write`); the review is in the step summary")
    return 0


def verdict() -> int:
    """The replay's exit code, said: 1 for drift under --strict or a failed gate, 2 for a usage error."""
    code = int(_input("exit-code", "0") or 0)
    if code:
        print(f"::error::replio exited {code}: the review in the step summary says which fixtures and gates failed")
    return code


if __name__ == "__main__":
    steps = {"replay": replay, "comment": comment, "verdict": verdict}
    if len(sys.argv) != 2 or sys.argv[1] not in steps:
        sys.exit(f"usage: {Path(sys.argv[0]).name} {'|'.join(steps)}")
    sys.exit(steps[sys.argv[1]]())

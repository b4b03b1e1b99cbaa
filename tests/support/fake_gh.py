#!/usr/bin/env python3
"""A fake `gh` for the Action's tests: `gh api [--method M] PATH [--input -]` against a JSON file standing
in for GitHub (`FAKE_GH_STATE`): an issue's comments (listed a page at a time, created, edited) and pull
requests' heads. Each call is appended to the file's `calls`. With `read_only` set, writing answers as
GitHub answers a read-only token (HTTP 403), and gh exits 1; with `answer` set, every call is answered with
that text (what a proxy's error page or another API's answer would be) and gh exits 0. A body longer than
GitHub takes (65,536 characters) is refused as GitHub refuses it (HTTP 422)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit


def main(argv: list[str]) -> int:
    state_file = Path(os.environ["FAKE_GH_STATE"])
    state = json.loads(state_file.read_text())
    if argv[:1] != ["api"]:
        print(f"fake gh: only `gh api` is faked, not {argv!r}", file=sys.stderr)
        return 2
    args, method, body = argv[1:], "GET", None
    if "--method" in args:
        i = args.index("--method")
        method = args[i + 1]
        del args[i:i + 2]
    if "--input" in args:
        i = args.index("--input")
        assert args[i + 1] == "-"
        body = json.loads(sys.stdin.read())
        del args[i:i + 2]
    (path,) = args
    state["calls"].append({"method": method, "path": path, "token": os.environ.get("GH_TOKEN")})
    url = urlsplit(path)
    answer: object = None
    if "answer" in state:
        state_file.write_text(json.dumps(state))
        print(state["answer"])
        return 0
    if method != "GET" and state.get("read_only"):
        state_file.write_text(json.dumps(state))
        print('{"message":"Resource not accessible by integration","status":"403"}')
        print("gh: Resource not accessible by integration (HTTP 403)", file=sys.stderr)
        return 1
    if body is not None and len(body["body"]) > 65_536:
        state_file.write_text(json.dumps(state))
        print("gh: Validation Failed: Body is too long (maximum is 65536 characters) (HTTP 422)", file=sys.stderr)
        return 1
    if found := re.fullmatch(r"repos/[^/]+/[^/]+/issues/(\d+)/comments", url.path):
        comments = state["comments"].get(found[1], [])
        if method == "GET":
            query = parse_qs(url.query)
            size, page = int(query.get("per_page", ["30"])[0]), int(query.get("page", ["1"])[0])
            answer = comments[(page - 1) * size:page * size]
        else:
            assert method == "POST" and body is not None
            state["next_id"] += 1
            answer = {"id": state["next_id"], "body": body["body"], "user": {"login": "github-actions[bot]",
                                                                              "type": "Bot"}}
            state["comments"][found[1]] = [*comments, answer]
    elif found := re.fullmatch(r"repos/[^/]+/[^/]+/issues/comments/(\d+)", url.path):
        assert method == "PATCH" and body is not None
        (answer,) = [c for cs in state["comments"].values() for c in cs if c["id"] == int(found[1])]
        answer["body"] = body["body"]
    elif found := re.fullmatch(r"repos/[^/]+/[^/]+/pulls/(\d+)", url.path):
        answer = {"number": int(found[1]), "head": {"sha": state["heads"][found[1]]}}
    else:
        print(f"gh: Not Found (HTTP 404): {path}", file=sys.stderr)
        state_file.write_text(json.dumps(state))
        return 1
    state_file.write_text(json.dumps(state))
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""bench/bfcl_agreement.py's own logic: the responses handed to BFCL's checker, the tally, the report,
and the worker's wiring (against a stand-in `bfcl_eval`: the real one is installed by the script)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import bfcl_agreement as agreement  # noqa: E402

CASES = {
    "simple_python_1": agreement.Case("simple_python", [{"name": "math.factorial"}], [{"math.factorial": {"number": [5]}}]),
    "irrelevance_0": agreement.Case("irrelevance", [{"name": "f"}], None),
}


def result(fixture_id: str, passed: bool, trace: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"id": fixture_id, "pass": passed, "status": "ok", "trace": trace, "answer": "", "reasons": [], **extra}


def test_the_response_is_handed_over_as_bfcls_openai_handler_keeps_it() -> None:
    called = result("x", True, [{"name": "math-factorial", "arguments": {"number": 5}}])
    assert agreement.bfcl_output(called) == [{"math.factorial": '{"number": 5}'}]
    broken = result("x", True, [{"name": "f", "arguments": "{not json"}])
    assert agreement.bfcl_output(broken) == [{"f": "{not json"}]
    assert agreement.bfcl_output(result("x", True, [], answer="No tool fits.")) == "No tool fits."


def test_agreement_per_category_and_every_disagreement() -> None:
    run = {"provider": "llamacpp", "model": "m", "fixtures": [
        result("bfcl-simple_python_1", True, [{"name": "math-factorial", "arguments": {"number": 5}}]),
        result("bfcl-irrelevance_0", False, [{"name": "f", "arguments": {}}], reasons=["match_expected: 1 calls"]),
        result("bfcl-unknown_1", True, []),
        result("bfcl-simple_python_1", False, [], status="error", error="no cassette"),
    ]}
    work, tallies = agreement.items([run], CASES)
    assert [w["id"] for w in work] == ["0/simple_python_1", "0/irrelevance_0"]
    verdicts = {"0/simple_python_1": {"valid": True, "error": []},
                "0/irrelevance_0": {"valid": True, "error": []}}
    tallied = agreement.tally(work, verdicts, tallies)
    lines = agreement.report(tallied)
    assert lines[0] == "llamacpp:m"
    assert any(line.split()[:3] == ["simple_python", "1", "100.0%"] for line in lines)
    assert any(line.split()[:3] == ["irrelevance", "1", "0.0%"] for line in lines)
    assert any(line.startswith("  disagrees: irrelevance_0: replio FAIL (match_expected: 1 calls), BFCL valid")
               for line in lines)
    assert sum(line.startswith("  not compared:") for line in lines) == 2
    assert agreement.worst(tallied) == 0.0


FAKE_CHECKER = '''
from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
def ast_checker(functions, output, answer, language, category, model):
    assert not MODEL_CONFIG_MAPPING[model].underscore_to_dot
    return {"valid": output == [{k: {p: v[0] for p, v in a.items()}} for item in answer for k, a in item.items()],
            "error": ["differs"]}
'''


def test_the_worker_decodes_judges_and_stands_in_for_model_config(tmp_path: Path) -> None:
    package = tmp_path / "bfcl_eval"
    for folder, files in {"": {}, "constants": {"enums.py": "class Language:\n    PYTHON = 'python'\n"},
                          "eval_checker": {}, "eval_checker/ast_eval": {"ast_checker.py": FAKE_CHECKER}}.items():
        (package / folder).mkdir(parents=True, exist_ok=True)
        (package / folder / "__init__.py").write_text("")
        for name, text in files.items():
            (package / folder / name).write_text(text)
    (package / "utils.py").write_text(
        "def is_function_calling_format_output(d):\n    return isinstance(d, list) and all(isinstance(i, dict) for i in d)\n"
        "def is_empty_output(d):\n    return not d\n")
    items = [
        {"id": "a", "category": "simple_python", "functions": [], "ground_truth": [{"math.factorial": {"number": [5]}}],
         "output": [{"math.factorial": '{"number": 5}'}]},
        {"id": "b", "category": "simple_python", "functions": [], "ground_truth": [{"f": {"x": [1]}}],
         "output": "I would call f."},
        {"id": "c", "category": "irrelevance", "functions": [], "ground_truth": None, "output": "No."},
        {"id": "d", "category": "irrelevance", "functions": [], "ground_truth": None, "output": [{"f": "{}"}]},
    ]
    done = subprocess.run([sys.executable, str(REPO / "bench" / "bfcl_worker.py")], input=json.dumps(items),
                          capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path)}, timeout=60)
    assert done.returncode == 0, done.stderr
    verdicts = json.loads(done.stdout)
    assert {k: v["valid"] for k, v in verdicts.items()} == {"a": True, "b": False, "c": True, "d": False}
    assert "Failed to decode AST" in verdicts["b"]["error"][0]


def test_a_conversation_is_handed_over_per_turn_and_response() -> None:
    conversation = [
        {"role": "user", "content": "Delete Drafts."},
        {"role": "assistant", "content": "", "calls": [{"name": "cd", "arguments": {"folder": "Drafts"}},
                                                       {"name": "rm", "arguments": "{cut"}]},
        {"role": "tool", "name": "cd", "content": "{}"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "I have updated some more functions you can choose from. What about now?"},
        {"role": "assistant", "content": "Nothing to do."},
    ]
    assert agreement.bfcl_turns(result("x", True, [], conversation=conversation)) == [
        [[{"cd": '{"folder": "Drafts"}'}, {"rm": "{cut"}]], []]


FAKE_MULTI_TURN = '''
def multi_turn_checker(decoded, truth, entry, category, model):
    assert set(entry) == {"id", "initial_config", "involved_classes"} and model.startswith("replio_")
    return {"valid": [[c for step in turn for c in step] for turn in decoded] == truth, "error_message": "differs"}
'''


def test_the_worker_judges_a_conversation_with_bfcls_multi_turn_checker(tmp_path: Path) -> None:
    package = tmp_path / "bfcl_eval"
    for folder in ("", "constants", "eval_checker", "eval_checker/ast_eval", "eval_checker/multi_turn_eval"):
        (package / folder).mkdir(parents=True, exist_ok=True)
        (package / folder / "__init__.py").write_text("")
    (package / "constants" / "enums.py").write_text("class Language:\n    PYTHON = 'python'\n")
    (package / "eval_checker" / "ast_eval" / "ast_checker.py").write_text("def ast_checker(*a):\n    pass\n")
    (package / "eval_checker" / "multi_turn_eval" / "multi_turn_checker.py").write_text(FAKE_MULTI_TURN)
    (package / "utils.py").write_text("def is_function_calling_format_output(d):\n    pass\n"
                                      "def is_empty_output(d):\n    pass\n")
    entry = {"id": "multi_turn_base_1", "initial_config": {}, "involved_classes": ["GorillaFileSystem"]}
    truth = [["cd(folder='Drafts')", "rm(file_name='a.txt')"], []]
    base = {"category": "multi_turn_base", "functions": [], "ground_truth": truth, "entry": entry}
    items = [
        {"id": "a", **base, "output": [[[{"cd": '{"folder": "Drafts"}'}], [{"rm": '{"file_name": "a.txt"}'}]], []]},
        {"id": "b", **base, "output": [[[{"cd": '{"folder": "Drafts"}'}, {"rm": "{cut"}],
                                        [{"rm": '{"file_name": "a.txt"}'}]], []]},
        {"id": "c", **base, "output": [[[{"cd": '{"folder": "Drafts"}'}]]]},
    ]
    done = subprocess.run([sys.executable, str(REPO / "bench" / "bfcl_worker.py")], input=json.dumps(items),
                          capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path)}, timeout=60)
    assert done.returncode == 0, done.stderr
    verdicts = json.loads(done.stdout)
    # a: the two responses decode to BFCL's calls; b: a response that does not decode is left out, the
    # rest differs; c: one turn of two, cut short
    assert {k: v["valid"] for k, v in verdicts.items()} == {"a": True, "b": False, "c": False}
    assert verdicts["c"]["error"] == ["force-terminated: 1 turns, the answer has 2"]

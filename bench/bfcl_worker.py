"""BFCL's own verdicts on recorded responses: run by `bfcl_agreement.py` inside a throwaway
virtualenv that holds `bfcl-eval` (installed with --no-deps), `filelock` and `mpmath`.

It reads a JSON list of items ``{"id", "category", "functions", "ground_truth", "output"}`` on
stdin, `output` being what BFCL's OpenAI-style function-calling handler keeps of a response
(a list of ``{name: arguments as a JSON string}``, or the text when there is no call), and
writes ``{id: {"valid": bool, "error": [...]}}`` on stdout.

The checks are BFCL's: `ast_checker` (simple, multiple, parallel) and, for irrelevance, the
logic of `eval_runner._evaluate_single_relevance_entry` (a response that decodes to a
function call fails), with `is_empty_output` and `is_function_calling_format_output` from
`bfcl_eval.utils`. The decoding is that of BFCL's OpenAI handler for function-calling models
(`decode_ast`: ``json.loads`` of each call's arguments), and the AST path follows
`eval_runner._evaluate_single_ast_entry`; both modules import every model handler, so their
few lines are repeated here.

A multi-turn item (``"entry"`` set: the case's id, initial_config and involved_classes) holds
per user turn the calls of each model response; it is judged as
`eval_runner._evaluate_single_multi_turn_entry` judges: a conversation with fewer turns than
the answer was cut short (invalid), each response decoded by `convert_to_function_call` (BFCL's
FC handlers' `decode_execute`, repeated here: its module imports tree_sitter; one that does not
decode is left out), then BFCL's
`multi_turn_checker`, unchanged, runs the calls on BFCL's own classes. Each item gets a model
name of its own, since BFCL keeps each model's instances in a module global by that name.

One module is stood in for: `bfcl_eval.constants.model_config` imports every model handler,
and so every provider's SDK (anthropic, openai, google-genai, mistralai, cohere, boto3,
qwen-agent...). The AST checker reads one thing from it, `MODEL_CONFIG_MAPPING[model]
.underscore_to_dot`, to turn the expected dotted names into the underscored ones OpenAI-style
models are given. replio gives `math-factorial` for `math.factorial`, which the caller decodes
back to the dotted name, so the stand-in holds one model, `replio`, with `underscore_to_dot`
false: the names are compared as BFCL wrote them.
"""

from __future__ import annotations

import contextlib
import json
import sys
import types
from typing import Any

MODEL = "replio"

_config = types.ModuleType("bfcl_eval.constants.model_config")
_config.MODEL_CONFIG_MAPPING = {MODEL: types.SimpleNamespace(underscore_to_dot=False)}  # type: ignore[attr-defined]
sys.modules["bfcl_eval.constants.model_config"] = _config

from bfcl_eval.constants.enums import Language  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: E402
from bfcl_eval.utils import is_empty_output, is_function_calling_format_output  # noqa: E402


def decode(output: Any) -> list[dict[str, Any]]:
    """BFCL's OpenAI handler's `decode_ast` for function-calling models; raises on text."""
    decoded = []
    for invoked in output:
        name = list(invoked.keys())[0]
        decoded.append({name: json.loads(invoked[name])})
    return decoded


def verdict(item: dict[str, Any]) -> dict[str, Any]:
    """BFCL's verdict on one item."""
    category = item["category"]
    try:
        decoded = decode(item["output"])
        decode_error = None
    except Exception as exc:  # BFCL: the response is not in function-calling format
        decoded, decode_error = None, f"Failed to decode AST. {exc}"
    if "irrelevance" in category:
        called = decoded is not None and not is_empty_output(decoded)
        return {"valid": not called,
                "error": ["Valid syntax. Successfully decode AST when it should not."] if called else []}
    if decoded is None:
        return {"valid": False, "error": [f"Invalid syntax. {decode_error}"]}
    if not is_function_calling_format_output(decoded):
        return {"valid": False, "error": ["Did not output in the specified format."]}
    result = ast_checker(item["functions"], decoded, item["ground_truth"], Language.PYTHON, category, MODEL)
    return {"valid": bool(result["valid"]), "error": [str(e) for e in result.get("error", [])]}


def convert_to_function_call(calls: list[dict[str, Any]]) -> list[str]:
    """`bfcl_eval.model_handler.utils.convert_to_function_call` (its module imports tree_sitter)."""
    execution_list = []
    for call in calls:
        for key, value in call.items():
            if isinstance(value, str):
                value = json.loads(value)
            execution_list.append(f"{key}({','.join([f'{k}={v!r}' for k, v in value.items()])})")
    return execution_list


def multi_turn_verdict(index: int, item: dict[str, Any]) -> dict[str, Any]:
    """BFCL's verdict on one conversation (imported here: the single-turn path needs none of it)."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    turns, truth = item["output"], item["ground_truth"]
    if len(turns) != len(truth):
        return {"valid": False, "error": [f"force-terminated: {len(turns)} turns, the answer has {len(truth)}"]}
    decoded = []
    for steps in turns:
        kept = []
        for step in steps:
            try:
                calls = convert_to_function_call(step)
            except Exception:  # BFCL leaves a response it cannot decode out
                continue
            if calls:
                kept.append(calls)
        decoded.append(kept)
    result = multi_turn_checker(decoded, truth, item["entry"], item["category"], f"{MODEL}_{index}")
    return {"valid": bool(result["valid"]), "error": [str(result.get("error_message", ""))] if not result["valid"]
            else []}


def main() -> None:
    items = json.load(sys.stdin)
    out = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):  # what BFCL's code prints is not the verdicts
        verdicts = {item["id"]: multi_turn_verdict(i, item) if item.get("entry") else verdict(item)
                    for i, item in enumerate(items)}
    json.dump(verdicts, out)


if __name__ == "__main__":
    main()

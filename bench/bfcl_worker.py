"""BFCL's own verdicts on recorded responses: run by `bfcl_agreement.py` inside a throwaway
virtualenv that holds `bfcl-eval` (installed with --no-deps) and `filelock`.

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

One module is stood in for: `bfcl_eval.constants.model_config` imports every model handler,
and so every provider's SDK (anthropic, openai, google-genai, mistralai, cohere, boto3,
qwen-agent...). The AST checker reads one thing from it, `MODEL_CONFIG_MAPPING[model]
.underscore_to_dot`, to turn the expected dotted names into the underscored ones OpenAI-style
models are given. replio gives `math-factorial` for `math.factorial`, which the caller decodes
back to the dotted name, so the stand-in holds one model, `replio`, with `underscore_to_dot`
false: the names are compared as BFCL wrote them.
"""

from __future__ import annotations

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


def main() -> None:
    items = json.load(sys.stdin)
    json.dump({item["id"]: verdict(item) for item in items}, sys.stdout)


if __name__ == "__main__":
    main()

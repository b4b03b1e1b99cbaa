"""What each wire format's answer says it used, and when that is counted (`Usage.counted`): prompt and
completion tokens as whole numbers, else no cost is counted from it (strings, floats, negative
numbers, a total alone, nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from replio_replay.providers.base import Usage
from replio_replay.providers.wire import anthropic, gemini, ollama, openai, responses


def _chat(usage: Any) -> Usage:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}
    return openai.decode_response(body if usage is None else {**body, "usage": usage}).usage


def _responses(usage: Any) -> Usage:
    body = {"output": [{"type": "message", "content": [{"type": "output_text", "text": "hi"}]}]}
    return responses.decode_response(body if usage is None else {**body, "usage": usage}).usage


def _anthropic(usage: Any) -> Usage:
    body = {"type": "message", "content": [{"type": "text", "text": "hi"}]}
    return anthropic.decode_response(body if usage is None else {**body, "usage": usage}).usage


def _gemini(usage: Any) -> Usage:
    body = {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}]}
    return gemini.decode_response(body if usage is None else {**body, "usageMetadata": usage}).usage


def _ollama(usage: Any) -> Usage:
    return ollama.decode_response({"message": {"role": "assistant", "content": "hi"}, "done": True, **(usage or {})}).usage


@pytest.mark.parametrize(("read", "usage", "expected"), [
    # OpenAI Chat Completions: prompt_tokens and completion_tokens; cached tokens in prompt_tokens_details
    (_chat, {"prompt_tokens": 12, "completion_tokens": 3,
             "prompt_tokens_details": {"cached_tokens": 8}}, (12, 3, 8)),
    (_chat, None, None),
    (_chat, {"total_tokens": 15}, None),
    (_chat, {"prompt_tokens": "12", "completion_tokens": "3"}, None),
    (_chat, {"prompt_tokens": 12.0, "completion_tokens": 3}, None),
    (_chat, {"prompt_tokens": 12, "completion_tokens": -3}, None),
    (_chat, {"prompt_tokens": 12, "completion_tokens": True}, None),
    # OpenAI Responses: input_tokens and output_tokens; cached tokens in input_tokens_details
    (_responses, {"input_tokens": 959, "output_tokens": 494, "input_tokens_details": {"cached_tokens": 900}},
     (959, 494, 900)),
    (_responses, {"total_tokens": 1453}, None),
    (_responses, {"input_tokens": 959}, None),
    # Anthropic: the prompt is the uncached input and both cache counts (left out or null when none)
    (_anthropic, {"input_tokens": 6, "cache_read_input_tokens": 400, "cache_creation_input_tokens": 100,
                  "output_tokens": 12}, (506, 12, 400)),
    (_anthropic, {"input_tokens": 6, "cache_creation_input_tokens": None, "output_tokens": 12}, (6, 12, None)),
    (_anthropic, {"input_tokens": 6, "cache_read_input_tokens": "400", "output_tokens": 12}, None),
    (_anthropic, None, None),
    # Gemini: promptTokenCount; the answer's and the thoughts' counts, each left out when 0
    (_gemini, {"promptTokenCount": 86, "candidatesTokenCount": 1, "thoughtsTokenCount": 450,
               "cachedContentTokenCount": 80}, (86, 451, 80)),
    (_gemini, {"promptTokenCount": 5, "totalTokenCount": 5}, (5, 0, None)),
    (_gemini, {"totalTokenCount": 5}, None),
    (_gemini, {"promptTokenCount": 5, "candidatesTokenCount": "1"}, None),
    (_gemini, None, None),
    # Ollama: eval_count always; prompt_eval_count left out when the whole prompt came from its cache
    (_ollama, {"prompt_eval_count": 26, "eval_count": 244}, (26, 244, None)),
    (_ollama, {"eval_count": 244}, (0, 244, None)),
    (_ollama, {"prompt_eval_count": 26}, None),
    (_ollama, {"prompt_eval_count": 26.5, "eval_count": 244}, None),
])
def test_an_answer_s_usage_is_counted_only_from_whole_prompt_and_completion_counts(read: Any, usage: Any,
                                                                                  expected: Any) -> None:
    found = read(usage)
    if expected is None:
        assert not found.counted
    else:
        assert found.counted and (found.prompt, found.completion, found.cached) == expected

"""The Gemini generateContent converters, on plain data shaped like recorded exchanges."""

from __future__ import annotations

import pytest

from replio_replay.errors import ProviderError, ProviderResponseError
from replio_replay.providers.base import ChatRequest, Message
from replio_replay.providers.wire import gemini as wire
from tests.providers.samples import after_two_calls, first_turn, schema_request, settings


def _body(parts: list, usage: dict | None = None, finish: str = "STOP") -> dict:
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
            "usageMetadata": usage or {"promptTokenCount": 86, "candidatesTokenCount": 1, "totalTokenCount": 537,
                                       "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 86}],
                                       "thoughtsTokenCount": 450},
            "modelVersion": "gemini-2.5-flash", "responseId": "m91N"}


def test_first_request_is_camel_case_with_the_system_prompt_only_in_system_instruction():
    body = wire.encode_request(first_turn(), settings(temperature=0.2, seed=7, max_tokens=300))
    assert list(body) == ["systemInstruction", "contents", "tools", "toolConfig", "generationConfig"]
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "What port?"}]}]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 300, "seed": 7}
    (tools,) = body["tools"]
    assert [d["name"] for d in tools["functionDeclarations"]] == ["file_read", "grep"]
    assert tools["functionDeclarations"][0]["parameters"] == {
        "properties": {"path": {"type": "STRING"}, "offset": {"type": "INTEGER", "default": 1}},
        "required": ["path"], "type": "OBJECT",
    }


def test_a_trial_shifts_the_seed_and_a_tool_without_parameters_declares_none():
    request = ChatRequest((Message("user", "hi"),), ({"name": "now", "description": "The time."},), trial=3)
    body = wire.encode_request(request, settings(seed=10))
    assert body["generationConfig"]["seed"] == 12
    assert body["tools"] == [{"functionDeclarations": [{"name": "now", "description": "The time."}]}]
    assert "systemInstruction" not in body


def test_function_responses_of_one_turn_share_one_user_content_in_call_order():
    contents = wire.encode_request(after_two_calls(), settings())["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"] == [
        {"text": "Let me look."},
        {"functionCall": {"name": "file_read", "args": {"path": "config/server.toml"}}},
        {"functionCall": {"name": "grep", "args": {"pattern": "port"}}},
    ]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "file_read", "response": {"result": "port = 8743"}}},
        {"functionResponse": {"name": "grep", "response": {"error": "Error: no match"}}},
    ]


def test_two_calls_get_stable_ids_and_the_parts_go_back_with_their_thought_signature():
    parts = [{"functionCall": {"name": "file_read", "args": {"path": "a"}}, "thoughtSignature": "c2ln"},
             {"functionCall": {"name": "file_read", "args": {"path": "b"}}}]
    response = wire.decode_response(_body(parts), turn=2)
    assert [(c.id, c.arguments) for c in response.tool_calls] == [("call_2_0", {"path": "a"}), ("call_2_1", {"path": "b"})]
    history = (Message("user", "read a and b"),
               Message("assistant", response.text, response.tool_calls, provider_items=response.provider_items),
               Message("tool", "A", tool_call_id="call_2_0", name="file_read"),
               Message("tool", "B", tool_call_id="call_2_1", name="file_read"))
    contents = wire.encode_request(ChatRequest(history, ()), settings())["contents"]
    assert contents[1] == {"role": "model", "parts": parts}
    # the made ids are never sent: Gemini gave none
    assert contents[2]["parts"] == [{"functionResponse": {"name": "file_read", "response": {"result": "A"}}},
                                    {"functionResponse": {"name": "file_read", "response": {"result": "B"}}}]


def test_ids_gemini_gives_are_kept_and_answered():
    parts = [{"functionCall": {"id": "fc-7x", "name": "grep", "args": {"pattern": "port"}}}]
    response = wire.decode_response(_body(parts))
    assert response.tool_calls[0].id == "fc-7x"
    history = (Message("user", "x"), Message("assistant", "", response.tool_calls, provider_items=response.provider_items),
               Message("tool", "8743", tool_call_id="fc-7x", name="grep"))
    answer = wire.encode_request(ChatRequest(history, ()), settings())["contents"][2]["parts"][0]
    assert answer == {"functionResponse": {"name": "grep", "response": {"result": "8743"}, "id": "fc-7x"}}


def test_thoughts_are_not_the_answer_and_usage_counts_them_as_output():
    parts = [{"text": "internal chain of thought", "thought": True}, {"thoughtSignature": "abc"},
             {"text": "8743", "thoughtSignature": "def"}]
    response = wire.decode_response(_body(parts))
    assert response.text == "8743" and response.tool_calls == ()
    assert (response.usage.prompt, response.usage.completion, response.usage.tokens) == (86, 451, 537)


def test_a_candidate_without_content_is_an_empty_answer():
    data = {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}],
            "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5}}
    response = wire.decode_response(data)
    assert (response.text, response.tool_calls, response.usage.tokens) == ("", (), 5)


@pytest.mark.parametrize(("data", "problem"), [
    ({"promptFeedback": {"blockReason": "SAFETY"}}, r"no candidates \(the prompt was blocked: SAFETY\)"),
    ({"candidates": []}, "no candidates"),
    ({"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}},
     "the server reported an error: API key not valid."),
    (_body([{"functionCall": {"args": {}}}]), r"parts\[0\] is a functionCall without a name"),
    ({"candidates": [{"content": {"parts": "x"}}]}, r"candidates\[0\].content.parts is not a list"),
])
def test_wrong_shapes_are_one_line_errors_naming_the_provider(data, problem):
    with pytest.raises(ProviderResponseError, match=rf"^gemini: unexpected response: {problem}"):
        wire.decode_response(data)


def test_a_schema_gemini_cannot_take_is_refused_naming_the_tool_and_keyword():
    tool = {"name": "tag", "description": "Tag.", "parameters": {
        "type": "object", "properties": {"tags": {"type": "object", "patternProperties": {"^x": {"type": "string"}}}}}}
    with pytest.raises(ProviderError, match=r"^gemini: tool 'tag': parameters\.properties\.tags: 'patternProperties' "
                                            r"has no Gemini equivalent; .*run it with another provider$"):
        wire.encode_request(ChatRequest((Message("user", "x"),), (tool,)), settings())


def test_a_response_schema_is_json_with_the_schema_in_geminis_subset():
    generation = wire.encode_request(schema_request(), settings("gemini"))["generationConfig"]
    assert generation["responseMimeType"] == "application/json"
    assert generation["responseSchema"] == {  # upper-case types; additionalProperties, which Gemini lacks, left out
        "type": "OBJECT", "properties": {"port": {"type": "INTEGER"}, "why": {"type": "STRING"}},
        "required": ["port", "why"]}
    off = wire.encode_request(schema_request(), settings("gemini", structured_output=False))["generationConfig"]
    assert "responseMimeType" not in off and "responseSchema" not in off
    assert "responseSchema" not in wire.encode_request(first_turn(), settings("gemini"))["generationConfig"]

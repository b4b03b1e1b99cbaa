"""The user's side of a conversation: a fixture's task, its scripted turns, or a simulated user.

A simulated user is a model told the fixture's `user.instructions` as its system prompt. It
sees the conversation with the roles swapped, as τ²-bench's user simulator does: its own
earlier messages as `assistant`, the agent's text answers as `user`; the agent's tool calls
and their results are not shown to it. Its view always opens with τ²-bench's fixed greeting
(`OPENING`, as if the agent had said it), which the agent never sees: when the fixture has a
`task`, that is the user's first message and the simulator is first asked after the agent
answered it; otherwise the simulator's reply to the greeting opens the conversation.

A reply holding a stop marker ends the conversation: what comes before the marker, when not
empty, is the user's last message (the agent answers it), the marker and anything after it
are never sent. A reply with no text and no marker ends the fixture in `error`. A user who has said `max_turns` messages without stopping ends the
conversation `truncated`. Its requests go through the fixture's session as role `user`, so
they are recorded in the fixture's cassette beside the agent's and replayed from it.

A user may have tools of its own (`user.tools`, as τ²-bench's dual-control users act on their own
device): they are offered in its requests, never to the agent; it may call them, at most
`MAX_USER_CALLS` times, before each message, each call run at once on the fixture's environments
and its result shown to it alone; each such message and its results are two steps of the
conversation (`engine.Steps`), shared with the agent's. Its calls are kept (`records`) for the result's `user_trace`,
each with the number (from 1) of the message of its that came next as its `turn`: where it
happened among the agent's turns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .._runtime.redact import Redactor
from ..errors import ProviderResponseError
from ..fixtures.cases import Case
from ..fixtures.model import SimulatedUser
from ..judge.results import Status
from ..providers.base import ChatRequest, ChatResponse, Message, Provider, Usage
from ..recording.base import FixtureSession
from ..tools.toolbox import Toolbox
from .engine import CallRecord, NextUser, Steps, scripted
from .sending import chosen_provider, role_sender

__all__ = ["OPENING", "USER", "Simulator", "before_stop", "speaker", "user_view"]

#: The role a simulated user's requests are recorded under.
USER = "user"
#: What the simulator is shown first, as the agent's: τ²-bench's fixed first agent message.
OPENING = "Hi! How can I help you today?"


def user_view(instructions: str, conversation: Sequence[Message],
              own: Mapping[int, Sequence[Message]] | None = None, opening: str | None = OPENING) -> tuple[Message, ...]:
    """What the simulator is sent: its instructions, the `opening` greeting (none when the
    conversation continues an earlier one), then the conversation with roles swapped (its messages
    as `assistant`, the agent's text answers as `user`), the agent's tool calls and results left
    out; its `own` tool calls and their results (by the number of conversation messages they came
    after) in their places."""
    own = own or {}
    view = [Message("system", instructions), *([Message("user", opening)] if opening else [])]
    for i, m in enumerate(conversation):
        view += own.get(i, ())
        if m.role == "user":
            view.append(Message("assistant", m.content))
        elif m.role == "assistant" and not m.tool_calls:
            view.append(Message("user", m.content))
    view += own.get(len(conversation), ())
    return tuple(view)


def before_stop(text: str, markers: Sequence[str]) -> tuple[str, bool]:
    """`text` up to its first stop marker (trimmed) and whether it held one; the whole text
    (trimmed) and False when it holds none."""
    found = [i for i in (text.find(m) for m in markers) if i >= 0]
    if not found:
        return text.strip(), False
    return text[: min(found)].strip(), True


#: Tool calls a simulated user may make before it says its next message.
MAX_USER_CALLS = 10


class Simulator:
    """A simulated user as the engine's `NextUser`; `usage` is each of its answers' token usage,
    `records` the calls it made with its own tools (`user.tools`, run by `tools`)."""

    def __init__(self, fixture_id: str, spec: SimulatedUser, task: str | None,
                 generate: Callable[[ChatRequest], ChatResponse], provider: Provider | None = None,
                 tools: Toolbox | None = None, opening: str | None = OPENING, steps: Steps | None = None):
        self.fixture_id = fixture_id
        self.spec = spec
        self.provider = provider  # who plays the user (None in tests that script it): what prices it
        self.task = task
        self.generate = generate
        self.tools = tools
        self.opening = opening
        self.steps = steps if steps is not None else Steps()
        self.said = 0
        self.stopped = False
        self.usage: list[Usage] = []
        self.records: list[CallRecord] = []
        #: Its tool calls and their results, by the number of conversation messages they came after.
        self.own: dict[int, list[Message]] = {}

    def __call__(self, conversation: Sequence[Message]) -> str | Status:
        if self.stopped:
            return Status.OK
        if self.said >= self.spec.max_turns:
            return Status.TRUNCATED
        if self.said == 0 and self.task is not None:
            self.said = 1
            return self.task
        try:
            reply = self._reply(conversation)
        except _OutOfSteps:
            return Status.TRUNCATED
        text, self.stopped = before_stop(reply, self.spec.stop)
        if self.stopped and not text:
            return Status.OK
        self.said += 1
        if not text:  # an empty user message is refused by some providers, and tells the agent nothing
            raise ProviderResponseError(
                f"fixture {self.fixture_id!r}: the simulated user's reply {self.said} holds no text and no stop "
                "marker, so there is nothing to send the agent; tell it in user.instructions to end with a stop "
                f"marker ({self.spec.stop[0]}) when it is done")
        return text


    def _reply(self, conversation: Sequence[Message]) -> str:
        """Its next message, after the calls of its own tools it makes first (each run at once, its
        result shown to it alone)."""
        specs = self.tools.specs if self.tools is not None else ()
        for _ in range(MAX_USER_CALLS + 1):
            request = ChatRequest(user_view(self.spec.instructions, conversation, self.own, self.opening), specs)
            response = self.generate(request)
            self.usage.append(response.usage)
            if not response.tool_calls or self.tools is None:
                return response.text
            own = self.own.setdefault(len(conversation), [])
            own.append(Message("assistant", response.text, response.tool_calls))
            made = len(self.records)
            for call in response.tool_calls:
                result = self.tools.call(call.name, call.arguments)
                self.records.append(CallRecord(self.said + 1, call, result))
                own.append(Message("tool", result, tool_call_id=call.id, name=call.name))
            self.steps.take()  # its message of calls, then their results: two steps, as τ² counts them
            self.steps.take(self.records[made:])
            if self.steps.over():
                raise _OutOfSteps()
        raise ProviderResponseError(
            f"fixture {self.fixture_id!r}: the simulated user called its tools {MAX_USER_CALLS} times without "
            "saying anything to the agent; tell it in user.instructions to answer the agent after using them")


class _OutOfSteps(Exception):
    """The conversation reached its `max_steps` or `max_tool_errors` while the user called its tools."""


def speaker(case: Case, provider: Provider, session: FixtureSession, users: Mapping[str, Provider | str],
            redactor: Redactor, tools: Toolbox | None = None, steps: Steps | None = None) -> str | NextUser:
    """Who speaks for the user in `case`: its task, its scripted turns, or a `Simulator` sending
    through `session` as role `user`, by the provider its `user.provider` names (`users`: spec ->
    provider, or why it could not be made) or else the agent's, calling its own tools with `tools`."""
    fixture = case.fixture
    if fixture.user is None:
        turns = [t.user for t in fixture.scripted_turns]
        return turns[0] if len(turns) == 1 and fixture.turns is None else scripted(turns)
    chosen = chosen_provider(case, "user.provider", fixture.user.provider, users, provider)
    return Simulator(fixture.id, fixture.user, fixture.task, role_sender(case, USER, chosen, session, redactor), chosen,
                     tools, opening=None if fixture.history else OPENING, steps=steps)

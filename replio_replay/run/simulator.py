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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .._runtime.redact import Redactor
from ..errors import ProviderResponseError
from ..fixtures.cases import Case
from ..fixtures.model import SimulatedUser
from ..judge.results import Status
from ..providers.base import ChatRequest, ChatResponse, Message, Provider
from ..recording.base import FixtureSession
from .engine import NextUser, scripted
from .sending import chosen_provider, role_sender

__all__ = ["OPENING", "USER", "Simulator", "before_stop", "speaker", "user_view"]

#: The role a simulated user's requests are recorded under.
USER = "user"
#: What the simulator is shown first, as the agent's: τ²-bench's fixed first agent message.
OPENING = "Hi! How can I help you today?"


def user_view(instructions: str, conversation: Sequence[Message]) -> tuple[Message, ...]:
    """What the simulator is sent: its instructions, the opening greeting, then the conversation
    with roles swapped (its messages as `assistant`, the agent's text answers as `user`), tool
    calls and results left out."""
    view = [Message("system", instructions), Message("user", OPENING)]
    for m in conversation:
        if m.role == "user":
            view.append(Message("assistant", m.content))
        elif m.role == "assistant" and not m.tool_calls:
            view.append(Message("user", m.content))
    return tuple(view)


def before_stop(text: str, markers: Sequence[str]) -> tuple[str, bool]:
    """`text` up to its first stop marker (trimmed) and whether it held one; the whole text
    (trimmed) and False when it holds none."""
    found = [i for i in (text.find(m) for m in markers) if i >= 0]
    if not found:
        return text.strip(), False
    return text[: min(found)].strip(), True


class Simulator:
    """A simulated user as the engine's `NextUser`; `tokens` are its prompt and completion tokens."""

    def __init__(self, fixture_id: str, spec: SimulatedUser, task: str | None,
                 generate: Callable[[ChatRequest], ChatResponse], provider: Provider | None = None):
        self.fixture_id = fixture_id
        self.spec = spec
        self.provider = provider  # who plays the user (None in tests that script it): what prices it
        self.task = task
        self.generate = generate
        self.said = 0
        self.stopped = False
        self.tokens = {"prompt": 0, "completion": 0}

    def __call__(self, conversation: Sequence[Message]) -> str | Status:
        if self.stopped:
            return Status.OK
        if self.said >= self.spec.max_turns:
            return Status.TRUNCATED
        if self.said == 0 and self.task is not None:
            self.said = 1
            return self.task
        response = self.generate(ChatRequest(user_view(self.spec.instructions, conversation), ()))
        self.tokens["prompt"] += response.usage.prompt or 0
        self.tokens["completion"] += response.usage.completion or 0
        text, self.stopped = before_stop(response.text, self.spec.stop)
        if self.stopped and not text:
            return Status.OK
        self.said += 1
        if not text:  # an empty user message is refused by some providers, and tells the agent nothing
            raise ProviderResponseError(
                f"fixture {self.fixture_id!r}: the simulated user's reply {self.said} holds no text and no stop "
                "marker, so there is nothing to send the agent; tell it in user.instructions to end with a stop "
                f"marker ({self.spec.stop[0]}) when it is done")
        return text


def speaker(case: Case, provider: Provider, session: FixtureSession, users: Mapping[str, Provider | str],
            redactor: Redactor) -> str | NextUser:
    """Who speaks for the user in `case`: its task, its scripted turns, or a `Simulator` sending
    through `session` as role `user`, by the provider its `user.provider` names (`users`: spec ->
    provider, or why it could not be made) or else the agent's."""
    fixture = case.fixture
    if fixture.user is None:
        turns = [t.user for t in fixture.scripted_turns]
        return turns[0] if len(turns) == 1 and fixture.turns is None else scripted(turns)
    chosen = chosen_provider(case, "user.provider", fixture.user.provider, users, provider)
    return Simulator(fixture.id, fixture.user, fixture.task, role_sender(case, USER, chosen, session, redactor), chosen)

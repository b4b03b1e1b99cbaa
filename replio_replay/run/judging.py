"""The LLM judge's I/O: once the conversation ended, each rubric item is sent as role `judge`
through the fixture's session (so recorded in, and replayed from, the fixture's cassette), by the
provider the judge names, else the config's `judge`, else the agent's; its answers are read by
`judge.llm`, its tokens counted apart from the agent's."""

from __future__ import annotations

from collections.abc import Mapping

from .._runtime.deadline import Interrupted
from .._runtime.redact import Redactor
from ..errors import ReplioError
from ..fixtures.cases import Case
from ..judge.llm import judge_request, read_answer
from ..judge.results import Status, TraceCall
from ..providers.base import Provider
from ..recording.base import FixtureSession
from ..recording.roles import JUDGE
from .engine import Transcript
from .sending import chosen_provider, role_sender

__all__ = ["ask_judge"]


def ask_judge(case: Case, transcript: Transcript, agent: Provider, session: FixtureSession,
              providers: Mapping[str, Provider | str], configured: str | None, redactor: Redactor) -> None:
    """Judge `transcript` by the fixture's judge, if it has one and the conversation ran to its end
    (ok or truncated): its verdicts go into `transcript.judged`. A judge that cannot be asked (its
    provider unknown or failing, its request not recorded) ends the fixture in `error`."""
    spec = case.fixture.verifier.judge if case.fixture.verifier is not None else None
    if spec is None or transcript.status not in (Status.OK, Status.TRUNCATED):
        return
    said = [m.content for m in transcript.messages if m.role == "user"]
    trace = [TraceCall(name=r.call.name, arguments=r.call.arguments, result=r.result) for r in transcript.records]
    field = "verifier.judge.provider" if spec.provider else "the config's judge"
    try:
        provider = chosen_provider(case, field, spec.provider or configured, providers, agent)
        send = role_sender(case, JUDGE, provider, session, redactor)
        transcript.spoken_by[JUDGE] = (provider.settings.name, provider.model)
        verdicts = []
        for item in spec.items:
            response = send(judge_request(item, said, trace, transcript.answer, spec.budget))
            transcript.count(JUDGE, response.usage)
            verdicts.append(read_answer(response, item, spec, redactor))
    except Interrupted:
        transcript.status = Status.CANCELLED
        return
    except ReplioError as exc:
        transcript.status, transcript.error = Status.ERROR, f"the judge could not be asked: {exc}"
        return
    transcript.judged = verdicts

"""The user's own agent, run in place of replio's loop: how it is declared (`decl`), what it reads
and writes (`protocol`), and how its process is run and bounded (`process`, `pychild`).

The relay (the loopback endpoint that speaks the providers' wire formats and sends through the
fixture's recording transport) is provider-side, in `providers.relay`; `run.agent` joins the two
for one fixture and reads its trace back from the exchanges (`run.agent_trace`). This folder
imports only `errors` and `_runtime`, so the config and tool-set files can declare an agent.
"""

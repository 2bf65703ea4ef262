"""The mock upstream: the service a capacity test's target calls.

Run as `python -m plimsoll_mock --config FILE` (or with `PLIMSOLL_MOCK_CONFIG`
holding the JSON of `plimsoll.api.upstream.Upstream`). The runner and the
operator start it as a process or a pod; nothing in the core imports it. It
serves plain routes, an MCP server, and OpenAI/Anthropic-style LLM endpoints,
all on one uvloop + httptools protocol so it is never the bottleneck.
"""

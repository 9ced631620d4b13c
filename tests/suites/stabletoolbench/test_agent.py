"""StableToolBench's ReAct agent (benchmarks/suites/stabletoolbench/agent.py).

Pure: no database, no network. Items come from the seed queries through the suite's importer; the
model is a script of canned replies and the virtual API server a toolbox of fake tools.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportBundle
from benchmarks.kit.protocol import (
    Context,
    Item,
    Outcome,
    Prompt,
    Tool,
    ToolSpec,
    ToolUnavailable,
)
from benchmarks.suites import stabletoolbench
from benchmarks.suites.stabletoolbench import agent
from tests.conftest import BENCHMARK_FIXTURES

GROUP = "G1_instruction"
MESSI = "588"  # the first query of the seed file: Messi's career, TheClique's ten APIs
# The names the model sees (ToolBench's) and the tools' keys (TheClique is in category Data).
SEARCH = "transfermarkt_search_for_theclique"
DETAILS = "transfermarkt_details_for_theclique"
SEARCH_KEY, DETAILS_KEY = f"Data/{SEARCH}", f"Data/{DETAILS}"
STEP_KEYS = {"thought", "action", "arguments", "observation", "output", "source", "ok"}


@pytest.fixture(scope="module")
def bundle(seeddata: Path) -> ImportBundle:
    path = seeddata / "stabletoolbench" / "solvable_queries" / "test_instruction"
    return stabletoolbench.import_files([path / f"{GROUP}.first50.json"])


@pytest.fixture(scope="module")
def item(bundle: ImportBundle) -> Item:
    sample = next(s for s in bundle.samples if s.external_id == MESSI)
    return Item(
        split=sample.split,
        external_id=sample.external_id,
        input=sample.input,
        reference=sample.reference,
        kind=sample.kind,
        candidate_tools=tuple(sample.candidate_tools),
        metadata=sample.metadata,
    )


@pytest.fixture(scope="module")
def specs(bundle: ImportBundle) -> dict[str, ToolSpec]:
    return {
        t.name: ToolSpec(
            name=t.name,
            description=t.description,
            parameters=t.parameters,
            returns=t.returns,
            category=t.category,
            raw=t.raw,
        )
        for t in bundle.tools
    }


class Script:
    """A model that gives canned replies in order and keeps the prompts it was sent."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[Prompt] = []

    async def __call__(self, prompt: Prompt) -> str:
        self.prompts.append(prompt)
        if not self.replies:
            raise AssertionError("the agent asked the model more often than the script allows")
        return self.replies.pop(0)


class Server:
    """The virtual API server's tools, faked: every call is recorded."""

    def __init__(self, response: Any = "ok", error: str = "", source: str = "cache") -> None:
        self.response, self.error, self.source = response, error, source
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def tool(self, spec: ToolSpec) -> Tool:
        async def call(arguments: dict[str, Any]) -> str:
            self.calls.append((spec.name, arguments))
            return json.dumps(
                {"error": self.error, "response": self.response, "source": self.source}
            )

        return Tool(spec=spec, call=call)


def make_ctx(
    item: Item,
    specs: dict[str, ToolSpec],
    server: Server,
    *,
    style: str = "chat",
    served: Sequence[str] | None = None,
    **options: Any,
) -> Context:
    names = item.candidate_tools if served is None else served
    return Context(
        task=stabletoolbench.TASKS["pass_rate"],
        style=style,  # type: ignore[arg-type]
        options=dict(options),
        tools={name: specs[name] for name in item.candidate_tools},
        toolbox={name: server.tool(specs[name]) for name in names},
    )


def run(item: Item, ctx: Context, script: Script) -> Outcome:
    return asyncio.run(stabletoolbench.solve(item, ctx, {}, script))


def step(action: str, arguments: Any, thought: str = "I will call a tool.") -> str:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return f"Thought: {thought}\nAction: {action}\nAction Input: {text}"


def answer(text: str) -> str:
    return step("Finish", {"return_type": "give_answer", "final_answer": text}, "I can answer.")


GIVE_UP = step("Finish", {"return_type": "give_up_and_restart"}, "The tools fail me.")


def details(outcome: Outcome) -> list[dict[str, Any]]:
    """The answer object's nodes, in order."""
    nodes, chain = [], json.loads(outcome.output)["answer_details"]
    while chain:
        nodes.append(chain[0])
        chain = chain[0]["next"]
    return nodes


# --- whole attempts ------------------------------------------------------------------------------


def test_a_call_then_finish_gives_the_answer(item: Item, specs: dict[str, ToolSpec]) -> None:
    # given
    server = Server(response=[{"name": "Lionel Messi", "club": "Inter Miami"}])
    ctx = make_ctx(item, specs, server)
    script = Script(
        step(SEARCH, {"name": "messi"}, "I should search for Messi."),
        answer("Lionel Messi plays for Inter Miami."),
    )

    # when
    outcome = run(item, ctx, script)

    # then the call ran with the model's arguments and the answer is the Finish's
    assert server.calls == [(SEARCH_KEY, {"name": "messi"})]
    assert outcome.answer == "Lionel Messi plays for Inter Miami."
    first, last = outcome.trace
    assert set(first) == STEP_KEYS | {"tools", "tool"} and set(last) == STEP_KEYS | {"stop"}
    # The model is shown ToolBench's names; the trace keeps the key of the tool called.
    assert first["tools"] == [name.removeprefix("Data/") for name in item.candidate_tools]
    assert first["tool"] == SEARCH_KEY
    assert first["thought"] == "I should search for Messi."
    assert (first["action"], first["arguments"], first["source"], first["ok"]) == (
        SEARCH,
        {"name": "messi"},
        "cache",
        True,
    )
    # The server's provenance goes to the trace, not to the model.
    observation = json.loads(first["observation"])
    assert observation == {
        "error": "",
        "response": [{"name": "Lionel Messi", "club": "Inter Miami"}],
    }
    assert last["action"] == "Finish" and last["stop"] == "final_answer" and last["ok"] is True
    assert last["arguments"]["final_answer"] == "Lionel Messi plays for Inter Miami."
    assert outcome.note == "stopped: final_answer"
    # The second request carries the step and its observation.
    messages = script.prompts[1].messages
    assert messages[-2]["role"] == "assistant" and f"Action: {SEARCH}" in messages[-2]["content"]
    assert messages[-1] == {"role": "user", "content": f"Observation: {first['observation']}"}

    # the output is ToolBench's answer object, ending with the Finish call
    record = json.loads(outcome.output)
    assert record["method"] == "ReAct@1"
    assert json.loads(record["final_answer"]) == {
        "return_type": "give_answer",
        "final_answer": "Lionel Messi plays for Inter Miami.",
    }
    nodes = details(outcome)
    assert record["total_steps"] == len(nodes)
    assert [n["role"] for n in nodes] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    # system and user nodes empty, as in StableToolBench's converted answers
    assert (nodes[0]["message"], nodes[1]["message"]) == ("", "")
    assert nodes[3]["message"]["name"] == SEARCH
    assert json.loads(nodes[3]["message"]["arguments"]) == {"name": "messi"}
    assert nodes[3]["message"]["response"] == first["observation"]
    assert nodes[-1]["message"]["name"] == "Finish"
    assert stabletoolbench.last_tool_name(record) == "Finish"
    assert stabletoolbench.no_answer_reason(record) is None

    # and the suite's parse and score read it as they read published answers
    parsed = stabletoolbench.parse(outcome.output, item, ctx, {})
    assert parsed.parsed and parsed.answer == outcome.answer
    assert [s["action"] for s in parsed.trace] == [SEARCH, "Finish"]
    assert stabletoolbench.score(outcome, item, ctx, {}) == {"has_final_answer": 1.0}
    assert stabletoolbench.score(parsed, item, ctx, {}) == {"has_final_answer": 1.0}


def test_give_up_is_a_finish_without_an_answer(item: Item, specs: dict[str, ToolSpec]) -> None:
    server = Server(error="Rate limit exceeded", response="")
    ctx = make_ctx(item, specs, server)

    outcome = run(item, ctx, Script(step(SEARCH, {"name": "messi"}), GIVE_UP))

    assert outcome.answer is None
    assert outcome.trace[0]["ok"] is False  # the server reported an error
    assert outcome.trace[-1]["action"] == "Finish" and outcome.trace[-1]["stop"] == "give_up"
    record = json.loads(outcome.output)
    assert "give_up_and_restart" in record["final_answer"]
    assert details(outcome)[-1]["message"]["name"] == "Finish"
    assert stabletoolbench.no_answer_reason(record) == "the model gave up (give_up_and_restart)"
    assert stabletoolbench.parse(outcome.output, item, ctx, {}).answer is None
    assert stabletoolbench.score(outcome, item, ctx, {}) == {"has_final_answer": 0.0}


def test_the_step_limit_ends_the_attempt(item: Item, specs: dict[str, ToolSpec]) -> None:
    server = Server()
    ctx = make_ctx(item, specs, server, max_steps=3)
    script = Script(*(step(SEARCH, {"name": name}) for name in ("messi", "neymar", "xavi")))

    outcome = run(item, ctx, script)

    assert len(script.prompts) == 3 and len(server.calls) == 3
    assert outcome.answer is None and outcome.trace[-1]["stop"] == "step_limit"
    assert "no Finish within 3 model calls" in outcome.note
    assert stabletoolbench.no_answer_reason(json.loads(outcome.output)) == (
        "no Finish call at the end of the answer"
    )
    assert stabletoolbench.score(outcome, item, ctx, {}) == {"has_final_answer": 0.0}


def test_the_default_step_limit_is_six_model_calls(item: Item, specs: dict[str, ToolSpec]) -> None:
    ctx = make_ctx(item, specs, Server())
    script = Script(*(step(SEARCH, {"name": f"player {n}"}) for n in range(6)))

    outcome = run(item, ctx, script)

    assert len(script.prompts) == 6 and outcome.trace[-1]["stop"] == "step_limit"
    assert script.prompts[0].max_tokens == 256


def test_an_unknown_tool_gets_a_reminder_then_ends_the_attempt(
    item: Item, specs: dict[str, ToolSpec]
) -> None:
    server = Server()
    ctx = make_ctx(item, specs, server)
    script = Script(step("weather_for_nowhere", {"city": "Rosario"}), step("google", {"q": "x"}))

    outcome = run(item, ctx, script)

    assert server.calls == [] and len(script.prompts) == 2
    reminder = script.prompts[1].messages[-1]["content"]
    assert reminder.startswith('Observation: "weather_for_nowhere" is not one of the tools.')
    assert all(name.removeprefix("Data/") in reminder for name in item.candidate_tools)
    assert "Data/" not in reminder
    assert outcome.trace[0]["action"] == "weather_for_nowhere"
    assert outcome.trace[-1]["stop"] == "invalid_action" and outcome.answer is None


def test_an_unknown_tool_once_is_forgiven(item: Item, specs: dict[str, ToolSpec]) -> None:
    server = Server()
    ctx = make_ctx(item, specs, server)
    script = Script(
        step("weather_for_nowhere", {"city": "Rosario"}),
        step(SEARCH, {"name": "messi"}),
        step("google", {"q": "x"}),
        answer("Messi."),
    )

    outcome = run(item, ctx, script)

    assert outcome.answer == "Messi." and outcome.trace[-1]["stop"] == "final_answer"


def test_a_repeated_identical_call_ends_the_attempt(item: Item, specs: dict[str, ToolSpec]) -> None:
    server = Server()
    ctx = make_ctx(item, specs, server)
    same = step(SEARCH, {"name": "messi"})
    # The same arguments written differently are the same call.
    script = Script(same, step(SEARCH, "{'name': 'messi'}"), same)

    outcome = run(item, ctx, script)

    assert server.calls == [(SEARCH_KEY, {"name": "messi"})] * 2  # the third is not run
    assert outcome.trace[-1]["stop"] == "repeated_call"
    assert outcome.trace[-1]["observation"].startswith("Not run")
    assert outcome.answer is None


def test_a_long_observation_is_cut(item: Item, specs: dict[str, ToolSpec]) -> None:
    server = Server(response="x" * 5000)
    ctx = make_ctx(item, specs, server)

    outcome = run(item, ctx, Script(step(SEARCH, {"name": "messi"}), answer("Messi.")))

    observation = outcome.trace[0]["observation"]
    full = json.dumps({"error": "", "response": "x" * 5000})
    assert observation.startswith(full[:2000])
    assert observation[2000:] == f" ... [observation cut: {len(full)} characters in all]"

    smaller = make_ctx(item, specs, server, max_observation_chars=100)
    outcome = run(item, smaller, Script(step(SEARCH, {"name": "messi"}), answer("Messi.")))
    assert outcome.trace[0]["observation"].startswith(full[:100] + " ... [observation cut")


def test_an_unavailable_tool_becomes_an_observation(item: Item, specs: dict[str, ToolSpec]) -> None:
    # given a tool the server refuses and one it does not serve at all
    async def refuse(arguments: dict[str, Any]) -> str:
        raise ToolUnavailable("no cached response and no simulator")

    server = Server()
    ctx = make_ctx(item, specs, server, served=[SEARCH_KEY])
    ctx.toolbox = {SEARCH_KEY: Tool(spec=specs[SEARCH_KEY], call=refuse)}
    script = Script(
        step(SEARCH, {"name": "messi"}),
        step(DETAILS, {"type_s": "player", "other": "x"}),
        GIVE_UP,
    )

    # when
    outcome = run(item, ctx, script)

    # then
    first, second, _ = outcome.trace
    assert first["observation"] == (
        f"The tool {SEARCH} is not available on this server: no cached response and no simulator"
    )
    assert second["observation"].startswith(f"The tool {DETAILS} is not available")
    assert first["ok"] is False and second["ok"] is False
    assert outcome.trace[-1]["stop"] == "give_up"


def test_other_tool_errors_pass_through(item: Item, specs: dict[str, ToolSpec]) -> None:
    async def broken(arguments: dict[str, Any]) -> str:
        raise RuntimeError("the server is down")

    ctx = make_ctx(item, specs, Server())
    ctx.toolbox = {SEARCH_KEY: Tool(spec=specs[SEARCH_KEY], call=broken)}

    with pytest.raises(RuntimeError, match="the server is down"):
        run(item, ctx, Script(step(SEARCH, {"name": "messi"})))


@pytest.mark.parametrize(
    "written",
    [
        "{'name': 'messi'}",
        '```json\n{"name": "messi"}\n```',
        '{"name": "messi",}',
        '`{"name": "messi"}` because Messi is the player.',
        '\n{\n  "name": "messi"\n}\nI hope this works.',
    ],
)
def test_malformed_action_input_is_recovered(
    item: Item, specs: dict[str, ToolSpec], written: str
) -> None:
    server = Server()
    ctx = make_ctx(item, specs, server)

    run(item, ctx, Script(step(SEARCH, written), answer("Messi.")))

    assert server.calls == [(SEARCH_KEY, {"name": "messi"})]


def test_action_input_on_the_action_line_or_without_its_marker(
    item: Item, specs: dict[str, ToolSpec]
) -> None:
    server = Server()
    ctx = make_ctx(item, specs, server)
    script = Script(
        f'Thought: search\nAction: {SEARCH} Action Input: {{"name": "messi"}}',
        f'Thought: again\n**Action:** `{SEARCH.upper()}`\n{{"name": "xavi"}}',
        answer("Messi."),
    )

    run(item, ctx, script)

    assert server.calls == [(SEARCH_KEY, {"name": "messi"}), (SEARCH_KEY, {"name": "xavi"})]


def test_unreadable_action_input_asks_for_json(item: Item, specs: dict[str, ToolSpec]) -> None:
    server = Server()
    ctx = make_ctx(item, specs, server)
    script = Script(step(SEARCH, "name=messi"), step(SEARCH, {"name": "messi"}), answer("Messi."))

    outcome = run(item, ctx, script)

    assert server.calls == [(SEARCH_KEY, {"name": "messi"})]
    first = outcome.trace[0]
    assert first["arguments"] == {} and first["ok"] is False
    assert first["observation"].startswith("The Action Input could not be read as a JSON object")
    assert script.prompts[1].messages[-1]["content"] == f"Observation: {first['observation']}"


@pytest.mark.parametrize(
    "written",
    [
        "__import__('os').system('touch /tmp/pwned')",
        "{\"name\": __import__('os').system('touch /tmp/pwned')}",
        "{'name': open('/etc/passwd').read()}",
        '{"name": "messi" + "x"}',
    ],
)
def test_code_in_the_model_output_is_never_run(
    item: Item, specs: dict[str, ToolSpec], written: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[Any] = []
    monkeypatch.setattr(os, "system", lambda *args: ran.append(args))
    server = Server()
    ctx = make_ctx(item, specs, server)

    outcome = run(item, ctx, Script(step(SEARCH, written), GIVE_UP))

    assert ran == [] and server.calls == []
    assert outcome.trace[0]["arguments"] == {}
    assert "could not be read as a JSON object" in outcome.trace[0]["observation"]
    assert agent.parse_arguments(written) is None


def test_a_reply_without_action_is_reminded_once(item: Item, specs: dict[str, ToolSpec]) -> None:
    ctx = make_ctx(item, specs, Server())
    script = Script("I think Messi is great.", "Messi played for Barcelona.")

    outcome = run(item, ctx, script)

    assert script.prompts[1].messages[-1]["content"].startswith("Observation: No Action was found")
    assert [s["action"] for s in outcome.trace] == ["", ""]
    assert outcome.trace[-1]["stop"] == "no_action" and outcome.answer is None
    assert stabletoolbench.score(outcome, item, ctx, {}) == {"has_final_answer": 0.0}


def test_finish_without_an_answer_is_asked_again(item: Item, specs: dict[str, ToolSpec]) -> None:
    ctx = make_ctx(item, specs, Server())
    script = Script(
        step("Finish", {"return_type": "give_answer"}),
        step("finish", '{"return_type": "give_answer", "final_answer": "Messi is 3'),
    )

    outcome = run(item, ctx, script)

    assert outcome.trace[0]["observation"].startswith("Finish needs")
    # A cut-off final answer is read up to its end.
    assert outcome.answer == "Messi is 3" and outcome.trace[-1]["stop"] == "final_answer"


def test_a_hallucinated_observation_and_later_steps_are_ignored(
    item: Item, specs: dict[str, ToolSpec]
) -> None:
    server = Server()
    ctx = make_ctx(item, specs, server)
    reply = (
        step(SEARCH, {"name": "messi"})
        + '\nObservation: {"response": "made up"}\n'
        + answer("Made up.")
    )

    outcome = run(item, ctx, Script(reply, answer("Messi.")))

    assert server.calls == [(SEARCH_KEY, {"name": "messi"})]
    assert outcome.answer == "Messi."


# --- the prompts ---------------------------------------------------------------------------------


def test_chat_prompt_lists_the_tools_and_the_format(item: Item, specs: dict[str, ToolSpec]) -> None:
    ctx = make_ctx(item, specs, Server())
    script = Script(step(SEARCH, {"name": "messi"}), answer("Messi."))

    run(item, ctx, script)

    first = script.prompts[0]
    system, user = first.messages
    assert (system["role"], user) == ("system", {"role": "user", "content": item.input["query"]})
    for name in item.candidate_tools:
        assert f"- {name.removeprefix('Data/')}: " in system["content"]
    assert "Data/" not in system["content"]
    # A parameter without a description shows its published example.
    line = f'- {SEARCH}: Search by name. Parameters: name (string, required): e.g. "messi"'
    assert f"\n{line}\n" in system["content"]
    assert "\n- Finish: " in system["content"]
    for line in ("Thought: ", "Action: ", "Action Input: "):
        assert f"\n{line}" in system["content"]
    assert '"give_up_and_restart"' in system["content"]
    body = first.request("chat")
    assert body["stop"] == ["\nObservation:"] and body["max_tokens"] == 256
    assert "prompt" not in body
    assert len(script.prompts[1].messages) == 4


def test_long_descriptions_are_cut(item: Item, specs: dict[str, ToolSpec]) -> None:
    long = ToolSpec(
        name=SEARCH_KEY, description="word " * 200, parameters=specs[SEARCH_KEY].parameters
    )
    ctx = make_ctx(item, specs, Server())
    ctx.tools = {**ctx.tools, SEARCH_KEY: long}
    script = Script(GIVE_UP)

    run(item, ctx, script)

    line = next(
        x
        for x in script.prompts[0].messages[0]["content"].splitlines()
        if x.startswith(f"- {SEARCH}")
    )
    description = line.split(": ", 1)[1].split(" Parameters:", 1)[0]
    assert description.endswith("...") and len(description) <= 303


def test_completion_prompt_ends_with_thought(item: Item, specs: dict[str, ToolSpec]) -> None:
    # given a base model: its replies continue the "Thought:" the prompt ends with
    server = Server()
    ctx = make_ctx(item, specs, server, style="completion")
    script = Script(
        f' I should search for Messi.\nAction: {SEARCH}\nAction Input: {{"name": "messi"}}',
        ' I know it now.\nAction: Finish\nAction Input: {"return_type": "give_answer", '
        '"final_answer": "Messi."}',
    )

    # when
    outcome = run(item, ctx, script)

    # then
    first, second = script.prompts
    assert first.text is not None and first.text.endswith(f"Query: {item.input['query']}\nThought:")
    assert first.stop == ("\nObservation:",)
    body = first.request("completion")
    assert body["prompt"] == first.text and body["stop"] == ["\nObservation:"]
    # One worked example with a made-up tool, then the real tools.
    assert first.text.count("Example") == 1 and "city_weather_for_demo_weather" in first.text
    assert f"- {SEARCH}: " in first.text
    assert second.text is not None and second.text.startswith(first.text[: -len("Thought:")])
    assert second.text.endswith(
        f"Thought: I should search for Messi.\nAction: {SEARCH}\n"
        f'Action Input: {{"name": "messi"}}\n'
        f"Observation: {outcome.trace[0]['observation']}\nThought:"
    )
    assert outcome.trace[0]["thought"] == "I should search for Messi."
    assert server.calls == [(SEARCH_KEY, {"name": "messi"})] and outcome.answer == "Messi."
    # The answer object keeps the published shape: no prompt in its system node.
    assert details(outcome)[0]["message"] == ""


# --- one function name in two categories ------------------------------------------------------

SHARED = BENCHMARK_FIXTURES / "stabletoolbench_shared_names"


def test_a_name_two_offered_tools_share_is_shown_with_each_category() -> None:
    # given our query that offers Rate Board_v2's Convert from Finance and from Financial
    bundle = stabletoolbench.import_files([SHARED / "test_instruction" / "G3_instruction.json"])
    sample = bundle.samples[0]
    both = Item(
        split=sample.split,
        external_id=sample.external_id,
        input=sample.input,
        candidate_tools=tuple(sample.candidate_tools),
    )
    tools = {
        t.name: ToolSpec(name=t.name, description=t.description, parameters=t.parameters)
        for t in bundle.tools
    }
    server = Server(response={"amount": 15800})
    ctx = make_ctx(both, tools, server)
    script = Script(
        step("convert_for_rate_board_v2", {"from": "USD", "to": "JPY"}),
        step("convert_for_rate_board_v2_for_financial", {"from": "USD", "to": "JPY"}),
        answer("100 dollars are 15,800 yen."),
    )

    # when
    outcome = run(both, ctx, script)

    # then each is shown under its category; ToolBench's shared name alone means neither
    system = script.prompts[0].messages[0]["content"]
    assert "\n- convert_for_rate_board_v2_for_finance: Converts an amount" in system
    assert "\n- convert_for_rate_board_v2_for_financial: Converts between" in system
    assert "\n- boil_water_for_kettle_club: " in system
    first, second, _ = outcome.trace
    assert first["tools"] == [
        "convert_for_rate_board_v2_for_finance",
        "convert_for_rate_board_v2_for_financial",
        "boil_water_for_kettle_club",
    ]
    assert first["observation"].startswith('"convert_for_rate_board_v2" is not one of the tools')
    assert second["tool"] == "Financial/convert_for_rate_board_v2"
    assert server.calls == [("Financial/convert_for_rate_board_v2", {"from": "USD", "to": "JPY"})]
    # The answer object calls tools by the names the model used, as published answers do.
    assert [n["message"]["name"] for n in details(outcome) if n["role"] == "tool"] == [
        "convert_for_rate_board_v2",
        "convert_for_rate_board_v2_for_financial",
        "Finish",
    ]


# --- reading replies -----------------------------------------------------------------------------


def test_parse_reply_takes_the_last_action() -> None:
    reply = agent.parse_reply(
        'Thought: first\nAction: a\nAction Input: {"x": 1}\n'
        'Thought: second\nAction: b\nAction Input:\n{"y": 2}'
    )
    assert reply == agent.Reply(thought="second", action="b", action_input='{"y": 2}')
    assert agent.parse_reply("just text") == agent.Reply("just text", None, None)


def test_parse_arguments_reads_only_data() -> None:
    assert agent.parse_arguments("") == {}
    assert agent.parse_arguments("{'a': True, 'b': None, 'c': [1, 2.5, -3e2,],}") == {
        "a": True,
        "b": None,
        "c": [1, 2.5, -300.0],
    }
    assert agent.parse_arguments("""{'q': "it's", 'r': 'say "hi"'}""") == {
        "q": "it's",
        "r": 'say "hi"',
    }
    assert agent.parse_arguments('["a list"]') is None
    assert agent.parse_arguments("{'a': b}") is None


# --- the suite -----------------------------------------------------------------------------------


def test_the_suite_serves_solve_with_its_options() -> None:
    assert stabletoolbench.solve is agent.solve and "solve" in agent.__all__
    evaluator = stabletoolbench.SUITE.evaluator
    assert all(evaluator.part(name).solve is agent.solve for name in evaluator.tasks)
    for task in stabletoolbench.TASKS.values():
        assert task.agent
        assert {o.name: task.default(o.name) for o in stabletoolbench.AGENT_OPTIONS} == {
            "max_steps": 6,
            "max_observation_chars": 2000,
            "max_tokens": 256,
            "max_same_call": 2,
        }
        assert "not served" not in task.description
        assert "ReAct loop" in task.description

"""MTU-Bench import: the five MTU-Eval test files as published, one sample per turn.

Expectations are hand-checked against /work/shared/seeddata/mtubench (MTU-Bench @d0811f8).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportBundle, ImportFormatError, SampleRecord, validate_bundle
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.services import benchmark_import
from benchmarks.suites import mtubench

DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "mtubench"
FILES = ("S-S_eval.jsonl", "S-M_eval.jsonl", "M-S_eval.jsonl", "M-M_eval.jsonl", "OOD_eval.jsonl")

RULES = (
    "Answer with Thought / Action / Action Input.\n7. Today is Monday, January 4, 2024.\n"
    "The following is a list of APIs and their parameters that you can use:\n"
)
APIS = [
    {
        "name": "GetTide",
        "description": "Tide times for a harbour.",
        "required_parameters": ["harbour"],
        "optional_parameters": {"date": "2024-01-04"},
        "result_parameters": ["high_tide", "low_tide"],
    },
]


@pytest.fixture(scope="module")
def seed(seeddata: Path) -> ImportBundle:
    folder = seeddata / "mtubench"
    return mtubench.import_files([folder / name for name in FILES])


def bare(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata without "published", the layout the exporter writes the record back in
    (test_export_published.py tests it)."""
    return {k: v for k, v in metadata.items() if k != "published"}


def by_id(bundle: ImportBundle, split: str, external_id: str) -> SampleRecord:
    matches = [s for s in bundle.samples if s.split == split and s.external_id == external_id]
    assert len(matches) == 1, (split, external_id, len(matches))
    return matches[0]


def tool_doc(sample: SampleRecord, name: str) -> dict[str, Any]:
    return next(tool for tool in sample.input["tools"] if tool["name"] == name)


def question(apis: Any = None, dialogue: str = "User: When is high tide at Portree?") -> str:
    listing = repr(APIS if apis is None else apis)
    return f"{RULES}{listing}\n{dialogue}"


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows),
        encoding="utf-8",
    )
    return path


GOOD = {"id": "S-S_0", "question": question(), "answer": {"GetTide": {"harbour": "Portree"}}}


# --- the real files -----------------------------------------------------------------------------


def test_counts_per_split_and_dialogues(seed: ImportBundle) -> None:
    validate_bundle(seed)
    assert Counter(s.split for s in seed.samples) == {
        "S-S": 104,
        "S-M": 94,
        "M-S": 136,
        "M-M": 106,
        "OOD": 72,
    }
    for split, dialogues, conversations in (("M-S", 30, 30), ("M-M", 30, 31), ("OOD", 10, 46)):
        samples = [s for s in seed.samples if s.split == split]
        assert len(mtubench.group_dialogues(samples)) == dialogues
        assert len(mtubench.group_dialogues(samples, by="conversation")) == conversations
    assert len({t.name for t in seed.tools}) == len(seed.tools) == 116
    kinds = Counter((s.split, s.kind) for s in seed.samples)
    assert kinds[("S-S", "query")] == 104 and kinds[("M-M", "dialogue")] == 106


def test_progress_counts_every_record(seeddata: Path) -> None:
    calls: list[int] = []
    mtubench.import_files([seeddata / "mtubench"], progress=calls.append)
    assert sum(calls) == 512


def test_single_tool_sample_keeps_prompt_and_candidates(seed: ImportBundle, seeddata: Path) -> None:
    sample = by_id(seed, "S-S", "S-S_0")
    published = json.loads((seeddata / "mtubench" / "S-S_eval.jsonl").read_text().splitlines()[0])
    assert sample.input["prompt"] == published["question"]
    assert sample.source.endswith("S-S_eval.jsonl, line 1")
    assert sample.candidate_tools == ["ReserveRestaurant", "FindRestaurants"]
    assert sample.input["turns"] == [
        {
            "role": "user",
            "content": "Can you help me find a Brazilian restaurant in San Francisco that's "
            "moderately priced and make a reservation for 3 people at 19:30, then book me a "
            "regular cab for 5 to the restaurant?",
        }
    ]
    assert sample.input["query"] == sample.input["turns"][0]["content"]
    assert sample.reference == {
        "calls": [
            {
                "name": "FindRestaurants",
                "arguments": {
                    "city": "San Francisco",
                    "cuisine": "Brazilian",
                    "price_range": "moderate",
                },
            }
        ],
        "answer": {
            "FindRestaurants": {
                "city": "San Francisco",
                "cuisine": "Brazilian",
                "price_range": "moderate",
            }
        },
    }
    assert bare(sample.metadata) == {"id": "S-S_0", "copy": 1, "today": "Monday, January 4, 2024"}


def test_multi_tool_answer_keeps_order_and_output_references(seed: ImportBundle) -> None:
    sample = by_id(seed, "S-M", "S-M_1")
    calls = sample.reference["calls"]
    assert [c["name"] for c in calls] == [
        "get_current_temperature",
        "adjust_room_temperature",
        "AddToPlaylist",
        "RateBook",
        "FindProvider",
        "BookAppointment",
        "add_new_contact",
        "set_appointment_reminder",
    ]
    assert calls[1] == {
        "name": "adjust_room_temperature",
        "arguments": {"temperature": "get_current_temperature.temperature", "location": "bedroom"},
    }
    assert calls[5]["arguments"]["dentist_name"] == "FindProvider.dentist_name"
    assert sample.kind == "query"


def test_no_call_encodings_stay_distinguishable(seed: ImportBundle) -> None:
    m_s = by_id(seed, "M-S", "M-S_0_3")
    assert m_s.reference == {"calls": [], "answer": {"": {}}}
    m_m = by_id(seed, "M-M", "M-M_0_0")
    assert m_m.reference == {"calls": [], "answer": {}}
    ood = by_id(seed, "OOD", "OOD_2_2")
    assert ood.reference == {"calls": [], "answer": {"": "{}"}}
    s_s = by_id(seed, "S-S", "S-S_10")
    assert s_s.reference == {"calls": [], "answer": {"": {}}}


def test_ood_json_string_arguments_are_decoded_and_kept(seed: ImportBundle) -> None:
    first = by_id(seed, "OOD", "OOD_0_0")
    assert first.reference == {
        "calls": [{"name": "get_world_record", "arguments": {"record_category": "biggest snake"}}],
        "answer": {"get_world_record": '{"record_category": "biggest snake"}'},
    }
    assert first.candidate_tools[0] == "get_world_record"


def test_leading_space_in_gold_tool_name_is_stripped_in_calls_only(seed: ImportBundle) -> None:
    sample = by_id(seed, "M-M", "M-M_19_3")
    assert [c["name"] for c in sample.reference["calls"]] == ["GetWeather", "ShareLocation"]
    assert " ShareLocation" in sample.reference["answer"]
    assert sample.reference["calls"][1]["arguments"]["location"] == "FindHomeByArea.address"


def test_repeated_ids_become_copies(seed: ImportBundle) -> None:
    ood = [s for s in seed.samples if s.split == "OOD" and s.metadata["id"] == "OOD_0_0"]
    assert len(ood) == 23
    assert [s.external_id for s in ood[:3]] == ["OOD_0_0", "OOD_0_0#2", "OOD_0_0#3"]
    assert ood[-1].external_id == "OOD_0_0#23"
    assert {s.metadata["turn"] for s in ood} == {0}
    assert ood[1].metadata["conversation"] == "OOD_0#2"
    # M-M_19 holds two different dialogues (lines 68-71 and 72-74) under the same ids.
    conversations = mtubench.group_dialogues(
        [s for s in seed.samples if s.split == "M-M"], by="conversation"
    )
    assert [s.external_id for s in conversations["M-M_19"]] == [
        "M-M_19_0",
        "M-M_19_1",
        "M-M_19_2",
        "M-M_19_3",
    ]
    assert [s.external_id for s in conversations["M-M_19#2"]] == [
        "M-M_19_0#2",
        "M-M_19_1#2",
        "M-M_19_2#2",
    ]
    assert by_id(seed, "M-M", "M-M_19_1#2").source.endswith("M-M_eval.jsonl, line 73")


def test_turns_of_a_dialogue_group_in_integer_order(seed: ImportBundle) -> None:
    dialogues = mtubench.group_dialogues([s for s in seed.samples if s.split == "M-S"])
    # The file has M-S_0 as turns 3, 1, 4, 0, 2.
    assert [s.metadata["turn"] for s in dialogues["M-S_0"]] == [0, 1, 2, 3, 4]
    assert bare(dialogues["M-S_0"][0].metadata) == {
        "id": "M-S_0_0",
        "copy": 1,
        "today": "Monday, January 4, 2024",
        "dialogue": "M-S_0",
        "turn": 0,
        "conversation": "M-S_0",
    }
    assert max(len(turns) for turns in dialogues.values()) == 7  # no real dialogue reaches 10


def test_turn_ten_sorts_after_turn_nine(tmp_path: Path) -> None:
    history = "History Dialog: \nUser: Tide at Portree?"
    rows = [
        {"id": f"M-S_4_{turn}", "question": question(dialogue=history), "answer": {"": {}}}
        for turn in (10, 2, 11, 9, 0, 1, 3, 4, 5, 6, 7, 8)
    ]
    bundle = mtubench.import_files([write_jsonl(tmp_path / "M-S_eval.jsonl", rows)])
    groups = mtubench.group_dialogues(bundle.samples)
    assert list(groups) == ["M-S_4"]
    assert [s.metadata["turn"] for s in groups["M-S_4"]] == list(range(12))
    assert [s.external_id for s in groups["M-S_4"]][-3:] == ["M-S_4_9", "M-S_4_10", "M-S_4_11"]


def test_history_of_a_multi_turn_single_tool_sample(seed: ImportBundle) -> None:
    sample = by_id(seed, "M-S", "M-S_0_3")
    turns = sample.input["turns"]
    assert [t["role"] for t in turns] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert turns[0] == {"role": "user", "content": "Find some music please."}
    assert turns[1]["tool_calls"] == [{"name": "LookupMusic", "arguments": {}}]
    assert turns[1]["content"].startswith("The user has asked for a music recommendation")
    assert turns[2] == {
        "role": "tool",
        "name": "LookupMusic",
        "content": "{'album': 'My Everything', 'artist': 'Ariana Grande', 'genre': 'Pop', "
        "'song_name': 'Be My Baby'}",
    }
    assert turns[3] == {
        "role": "assistant",
        "content": "Ok, how about Be My Baby by Ariana Grande of her My Everything album?",
    }
    # A function block without a call: no tool turn, the repeated observation kept aside.
    assert "tool_calls" not in turns[5] and turns[5]["observation"].startswith("{'album'")
    assert turns[8]["tool_calls"] == [
        {
            "name": "PlayMedia",
            "arguments": {"playback_device": "kitchen speaker", "song_name": "Be My Baby"},
        }
    ]
    assert turns[-1] == {"role": "user", "content": "Tell me what genre is this?"}
    assert sample.input["query"] == "Tell me what genre is this?"
    assert sample.candidate_tools == ["GetWeather", "LookupMusic", "PlayMedia"]


def test_history_of_a_multi_turn_multi_tool_sample(seed: ImportBundle) -> None:
    turns = by_id(seed, "OOD", "OOD_5_4").input["turns"]
    assert [t["role"] for t in turns] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert turns[5] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "name": "get_apartment_listings",
                "arguments": {
                    "location": "New York",
                    "bedrooms": "2",
                    "pet": True,
                    "min_price": "2000",
                    "max_price": "3000",
                },
            },
            {
                "name": "get_apartment_specific_info",
                "arguments": {"apartment_id": "get_apartment_listings.apartment_id"},
            },
        ],
    }
    assert turns[-1] == {"role": "user", "content": "His name is John Doe."}


def test_tool_from_names_and_defaults_style(seed: ImportBundle) -> None:
    tool = next(t for t in seed.tools if t.name == "FindRestaurants")
    assert tool.source.endswith("S-S_eval.jsonl, line 1")
    assert tool.description == "Find a restaurant of a particular cuisine in a city"
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "cuisine": {},
            "city": {},
            "price_range": {"default": "dontcare"},
            "has_live_music": {"default": "dontcare"},
            "serves_alcohol": {"default": "dontcare"},
        },
        "required": ["cuisine", "city"],
    }
    assert list(tool.returns["properties"]) == [
        "restaurant_name",
        "serves_alcohol",
        "has_live_music",
        "phone_number",
        "street_address",
        "price_range",
        "city",
        "cuisine",
    ]
    assert tool.raw["optional_parameters"] == {
        "price_range": "dontcare",
        "has_live_music": "dontcare",
        "serves_alcohol": "dontcare",
    }
    # Another definition of the same name: the sample keeps its own.
    other = tool_doc(by_id(seed, "S-S", "S-S_27"), "FindRestaurants")
    assert other["description"] == "Find restaurants by location and by category"
    assert other["parameters"]["required"] == ["category", "location"]


def test_tool_from_parameter_objects_style(seed: ImportBundle) -> None:
    tool = tool_doc(by_id(seed, "S-M", "S-M_0"), "delete_contact_number")
    params = tool["parameters"]
    assert params["required"] == []
    assert list(params["properties"]) == ["contact_name", "contact_number", "number_order"]
    assert params["properties"]["number_order"]["type"] == "integer"
    assert params["properties"]["number_order"]["default"] == 1
    assert params["properties"]["contact_name"] == {
        "type": "string",
        "description": "The name of the contact from whom the phone number is to be deleted. "
        "The full name is required.",
    }
    temperature = next(t for t in seed.tools if t.name == "adjust_room_temperature")
    assert temperature.parameters["required"] == ["temperature", "location"]
    assert temperature.parameters["properties"]["temperature"]["type"] == "integer"
    assert temperature.returns["properties"]["confirmation"]["type"] == "string"
    contact = next(t for t in seed.tools if t.name == "update_contact_information")
    nested = contact.parameters["properties"]["new_information"]
    assert nested["type"] == "object"  # published as "Dict"
    assert nested["properties"]["new_email"] == {
        "type": "string",
        "format": "email",
        "description": "The new email to be added to the contact list.",
    }


def test_required_parameters_given_as_format_hints(seed: ImportBundle) -> None:
    tool = tool_doc(by_id(seed, "S-M", "S-M_8"), "SearchOnewayFlight")
    params = tool["parameters"]
    assert params["required"] == ["origin_city", "destination_city", "departure_date"]
    assert params["properties"]["departure_date"] == {"pattern": r"^\d{4}-\d{2}-\d{2}$"}
    assert params["properties"]["seating_class"] == {"default": "Economy"}


def test_shared_parameter_pool_and_placeholder_api_list(seed: ImportBundle) -> None:
    pizza = tool_doc(by_id(seed, "OOD", "OOD_0_0#5"), "search_pizza_store")
    assert "name_store" in pizza["parameters"]["properties"]
    assert pizza["parameters"]["required"] == []
    placeholder = by_id(seed, "S-S", "S-S_17")
    assert placeholder.candidate_tools == []
    assert placeholder.metadata["unparsed_apis"] == ["api_descriptions"]


# --- bad input ----------------------------------------------------------------------------------


def error_for(tmp_path: Path, rows: list[Any], name: str = "S-S_eval.jsonl") -> ImportFormatError:
    path = write_jsonl(tmp_path / name, rows)
    with pytest.raises(ImportFormatError) as caught:
        mtubench.import_files([path])
    assert caught.value.file == str(path)
    return caught.value


def test_good_row_imports(tmp_path: Path) -> None:
    bundle = mtubench.import_files([write_jsonl(tmp_path / "S-S_eval.jsonl", [GOOD])])
    assert [s.external_id for s in bundle.samples] == ["S-S_0"]
    assert bundle.tools[0].parameters["properties"]["date"] == {"default": "2024-01-04"}


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        ({"id": "S-S_1", "question": question()}, "answer", "missing"),
        ({**GOOD, "id": 7}, "id", "expected a string"),
        ({**GOOD, "id": "S-S_1_2"}, "id", "S-S_<number>"),
        ({**GOOD, "id": "S-M_1"}, "id", "starting with 'S-S_'"),
        ({**GOOD, "question": "User: hello"}, "question", "no API list"),
        ({**GOOD, "answer": [["GetTide", {}]]}, "answer", "expected an object"),
        ({**GOOD, "answer": {"GetTide": 3}}, "answer", "must be an object"),
        ({**GOOD, "answer": {"GetTide": "{not json"}}, "answer", "not a JSON object"),
        ({**GOOD, "answer": {"": {"harbour": "x"}}}, "answer", "empty tool name"),
        ({**GOOD, "question": question([{"description": "no name"}])}, "question", "no 'name'"),
        ({**GOOD, "question": RULES + "[{'name': 'GetTide'\nUser: hi"}, "question", "API list"),
        ({**GOOD, "question": question(dialogue="")}, "question", "no user turn"),
    ],
)
def test_bad_rows_name_line_and_field(
    tmp_path: Path, row: dict[str, Any], field: str, words: str
) -> None:
    error = error_for(tmp_path, [GOOD | {"id": "S-S_9"}, row])
    assert (error.line, error.field) == (2, field)
    assert words in error.message


def test_python_literal_api_list_with_quotes_escapes_and_words(tmp_path: Path) -> None:
    apis = [
        {
            "name": "GetTide",
            "description": 'The harbour\'s "tide" table\tand more',
            "required_parameters": [{"name": "harbour", "type": "str", "description": "it's"}],
            "optional_parameters": {
                "metric": True,
                "station": None,
                "offset": -1.5e3,
                "note": "True or None",
            },
            "result_parameters": ["high_tide"],
        }
    ]
    listing = repr(apis)
    assert "\\'" in listing or '"' in listing  # repr had to quote or escape something
    bundle = mtubench.import_files(
        [
            write_jsonl(
                tmp_path / "S-S_eval.jsonl",
                [
                    {**GOOD, "question": f"{RULES}{listing}\nUser: Tides?"},
                ],
            )
        ]
    )
    tool = bundle.tools[0]
    assert tool.raw == apis[0]
    assert tool.description == 'The harbour\'s "tide" table\tand more'
    assert tool.parameters["properties"] == {
        "harbour": {"type": "string", "description": "it's"},
        "metric": {"default": True},
        "station": {"default": None},
        "offset": {"default": -1500.0},
        "note": {"default": "True or None"},
    }
    assert bundle.samples[0].input["turns"] == [{"role": "user", "content": "Tides?"}]


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({**GOOD, "question": RULES + '[{"name": "GetTide", "x": NaN}]\nUser: hi'}, "question"),
        ({**GOOD, "question": RULES + "[{'name': 'GetTide', 'x': NaN}]\nUser: hi"}, "question"),
        ({**GOOD, "answer": {"GetTide": '{"harbour": NaN}'}}, "answer"),
    ],
)
def test_nan_is_refused(tmp_path: Path, row: dict[str, Any], field: str) -> None:
    # PostgreSQL's jsonb has no NaN: refuse it while the line number is still known.
    error = error_for(tmp_path, [row])
    assert (error.line, error.field) == (1, field)


def test_malformed_multi_turn_id(tmp_path: Path) -> None:
    row = {**GOOD, "id": "M-S_3"}
    error = error_for(tmp_path, [row], name="M-S_eval.jsonl")
    assert (error.line, error.field) == (1, "id")
    assert "M-S_<dialogue>_<turn>" in error.message


def test_unreadable_history_action_input(tmp_path: Path) -> None:
    dialogue = (
        "History Dialog: \nuser: Tides?\nfunction: \nThought: call it\nAction: GetTide\n"
        "Action Input: {'harbour': \nobservation: : {}\nUser: thanks"
    )
    row = {**GOOD, "id": "M-S_0_1", "question": question(dialogue=dialogue)}
    error = error_for(tmp_path, [row], name="M-S_eval.jsonl")
    assert (error.line, error.field) == (1, "question")
    assert "Action Input" in error.message


def test_line_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    error = error_for(tmp_path, [GOOD, GOOD | {"id": "S-S_1"}, '{"id": "S-S_2", "question": '])
    assert error.line == 3
    assert "not valid JSON" in error.message


def test_record_that_is_not_an_object(tmp_path: Path) -> None:
    error = error_for(tmp_path, [["S-S_0", "q", {}]])
    assert error.line == 1
    assert "expected a JSON object" in error.message


def test_unknown_file_name_lists_accepted_names(tmp_path: Path) -> None:
    error = error_for(tmp_path, [GOOD], name="eval.jsonl")
    assert "S-S_eval.jsonl" in error.message and "OOD_eval.jsonl" in error.message


def test_same_id_in_two_files_of_one_split_is_a_duplicate(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "S-S_eval.jsonl", [GOOD])
    second = write_jsonl(tmp_path / "S-S_more.jsonl", [GOOD])
    bundle = mtubench.import_files([first, second])
    with pytest.raises(ImportFormatError) as caught:
        validate_bundle(bundle)
    assert caught.value.field == "id" and "duplicate" in caught.value.message


# --- the demo and the database ------------------------------------------------------------------


def test_demo_files_parse() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["suite"] == "mtubench" and manifest["benchmark"] == "MTU-Bench (demo)"
    bundle = mtubench.import_files([DEMO / name for name in manifest["files"]])
    validate_bundle(bundle)
    assert Counter(s.split for s in bundle.samples) == {"S-S": 5, "S-M": 3, "M-S": 6}
    assert all(s.input["prompt"].lstrip().startswith("[Demo prompt") for s in bundle.samples)
    names = {t.name for t in bundle.tools}
    for sample in bundle.samples:
        assert set(sample.candidate_tools) <= names
        assert {c["name"] for c in sample.reference["calls"]} <= set(sample.candidate_tools)


@pytest.mark.django_db
def test_import_all_seed_files_then_reimport_writes_nothing(seeddata: Path) -> None:
    paths = [seeddata / "mtubench" / name for name in FILES]
    summary = benchmark_import(suite="mtubench", paths=paths)
    assert summary.benchmark == "MTU-Bench"
    assert summary.samples == {"S-S": 104, "S-M": 94, "M-S": 136, "M-M": 106, "OOD": 72}
    assert summary.tools == 116
    assert (summary.samples_written, summary.tools_written) == (512, 116)
    stored = Sample.objects.get(benchmark__name="MTU-Bench", split="M-S", external_id="M-S_0_3")
    assert stored.reference == {"calls": [], "answer": {"": {}}}
    assert stored.metadata["turn"] == 3
    assert Tool.objects.filter(benchmark__name="MTU-Bench", name="FindRestaurants").exists()

    again = benchmark_import(suite="mtubench", paths=paths)
    assert (again.samples_written, again.tools_written) == (0, 0)
    assert again.unchanged == 512


@pytest.mark.django_db
def test_demo_imports() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text(encoding="utf-8"))
    summary = benchmark_import(
        suite="mtubench",
        paths=[DEMO / name for name in manifest["files"]],
        benchmark_name=manifest["benchmark"],
        is_demo=True,
    )
    assert summary.samples == {"S-S": 5, "S-M": 3, "M-S": 6}
    assert summary.tools == 7
    assert Benchmark.objects.get(name="MTU-Bench (demo)").is_demo

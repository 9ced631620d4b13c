"""StableToolBench import: solvable queries with their API docs, query-id lists, the response cache.

Expectations are hand-checked against /work/shared/seeddata/stabletoolbench (StableToolBench
@aa4ed9f: the first 50 queries of each of the six test groups, and the full query-id lists).
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    SampleRecord,
    ToolRecord,
    validate_bundle,
)
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.services import benchmark_import
from benchmarks.suites import stabletoolbench
from benchmarks.suites.stabletoolbench import CacheEntry, load_response_cache
from tests.conftest import BENCHMARK_FIXTURES

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "benchmarks" / "demo" / "stabletoolbench"
CACHE = BENCHMARK_FIXTURES / "stabletoolbench_cache"
# Our own query files in the published format: one `<api>_for_<tool>` name in two categories.
SHARED = BENCHMARK_FIXTURES / "stabletoolbench_shared_names"
GROUPS = (
    "G1_instruction",
    "G1_category",
    "G1_tool",
    "G2_instruction",
    "G2_category",
    "G3_instruction",
)


def bare(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata without "published", the layout the exporter writes the record back in
    (test_export_published.py tests it)."""
    return {k: v for k, v in metadata.items() if k != "published"}


def seed_queries(seeddata: Path) -> Path:
    return seeddata / "stabletoolbench" / "solvable_queries"


def seed_files(seeddata: Path) -> list[Path]:
    folder = seed_queries(seeddata) / "test_instruction"
    return [folder / f"{group}.first50.json" for group in GROUPS]


@pytest.fixture(scope="module")
def seed(seeddata: Path) -> ImportBundle:
    return stabletoolbench.import_files([seed_queries(seeddata)])


def by_id(bundle: ImportBundle, split: str, external_id: str) -> SampleRecord:
    matches = [s for s in bundle.samples if s.split == split and s.external_id == external_id]
    assert len(matches) == 1, (split, external_id, len(matches))
    return matches[0]


def tool(bundle: ImportBundle, name: str) -> ToolRecord:
    matches = [t for t in bundle.tools if t.name == name]
    assert len(matches) == 1, (name, len(matches))
    return matches[0]


def published(path: Path, query_id: int) -> dict[str, Any]:
    return next(q for q in json.loads(path.read_text("utf-8")) if q["query_id"] == query_id)


def api(tool_name: str = "Kettle Club", api_name: str = "Boil water", **extra: Any) -> dict:
    entry = {
        "category_name": "Food",
        "tool_name": tool_name,
        "api_name": api_name,
        "api_description": "Boils water for tea.",
        "required_parameters": [
            {"name": "litres", "type": "NUMBER", "description": "How much.", "default": "1"}
        ],
        "optional_parameters": [],
        "method": "GET",
    }
    entry.update(extra)
    return entry


def query(query_id: Any = 7, **extra: Any) -> dict:
    record = {
        "api_list": [api()],
        "query": "Please boil a litre of water.",
        "relevant APIs": [["Kettle Club", "Boil water"]],
        "query_id": query_id,
    }
    record.update(extra)
    return record


def write(path: Path, content: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content, indent=1)
    path.write_text(text, encoding="utf-8")
    return path


# --- the real files -----------------------------------------------------------------------------


def test_fifty_queries_per_group_and_one_tool_per_api(seed: ImportBundle) -> None:
    validate_bundle(seed)
    assert Counter(s.split for s in seed.samples) == {group: 50 for group in GROUPS}
    assert {s.kind for s in seed.samples} == {"query"}
    # 1,719 api_list entries over 300 queries name 1,187 distinct (category, tool, api) triples.
    assert len(seed.tools) == len({t.name for t in seed.tools}) == 1187
    offered = {name for s in seed.samples for name in s.candidate_tools}
    assert offered == {t.name for t in seed.tools}


def test_progress_counts_every_query(seeddata: Path) -> None:
    calls: list[int] = []
    stabletoolbench.import_files(seed_files(seeddata), progress=calls.append)
    assert sum(calls) == 300


def test_files_one_by_one_read_like_the_folder(seed: ImportBundle, seeddata: Path) -> None:
    files = stabletoolbench.import_files(seed_files(seeddata))
    assert len(files.samples) == 300
    folder = {(s.split, s.external_id): s for s in seed.samples}
    for sample in files.samples:
        twin = folder[(sample.split, sample.external_id)]
        assert (sample.input, sample.reference, sample.candidate_tools, sample.source) == (
            twin.input,
            twin.reference,
            twin.candidate_tools,
            twin.source,
        )
    assert {t.name for t in files.tools} == {t.name for t in seed.tools}
    # Without the id lists, no sample carries the flag.
    assert all("in_test_query_ids" not in s.metadata for s in files.samples)


def test_first_query_of_g1_instruction(seed: ImportBundle) -> None:
    sample = by_id(seed, "G1_instruction", "588")
    assert sample.source.endswith("G1_instruction.first50.json, line 2")
    assert sample.input == {
        "query": "I'm a football enthusiast and I want to know more about Lionel Messi's career. "
        "Can you provide me with information about Messi's clubs, managers, teammates, and "
        "referees? I'm also curious about any notable transfers he has made."
    }
    # Tools are keyed <category>/<api>_for_<tool>: ToolBench's name is not unique on its own.
    assert sample.candidate_tools == [
        "Data/songkick_concert_for_theclique",
        "Data/songkick_artist_for_theclique",
        "Data/songkick_festivals_for_theclique",
        "Data/transfermarkt_search_for_theclique",
        "Data/list_artist_concerts_for_theclique",
        "Data/get_artist_overview_for_theclique",
        "Data/transfermarkt_details_for_theclique",
        "Data/songkick_search_artist_for_theclique",
        "Data/tunefind_for_details_for_theclique",
        "Data/get_info_about_artist_for_theclique",
    ]
    assert sample.reference == {
        "relevant_apis": [
            ["TheClique", "Transfermarkt search"],
            ["TheClique", "Transfermarkt details"],
        ],
        "relevant_tools": [
            "Data/transfermarkt_search_for_theclique",
            "Data/transfermarkt_details_for_theclique",
        ],
    }
    # Every seed query is in its group's test_query_ids list.
    assert bare(sample.metadata) == {"in_test_query_ids": True}
    assert all(bare(s.metadata) == {"in_test_query_ids": True} for s in seed.samples)


def test_required_and_optional_parameters_with_types(seed: ImportBundle, seeddata: Path) -> None:
    file = seed_queries(seeddata) / "test_instruction" / "G2_category.first50.json"
    sample = by_id(seed, "G2_category", "3942")
    assert sample.source.endswith("G2_category.first50.json, line 4145")
    assert sample.candidate_tools == [
        "Video_Images/modifytiff_for_aspose_imaging_cloud",
        "Video_Images/getimageframeproperties_for_aspose_imaging_cloud",
        "Video_Images/getimageframe_for_aspose_imaging_cloud",
        "Video_Images/getresult_for_videogrammer",
        "Video_Images/nsfw_detection_for_nsfw_nude_detection",
    ]
    assert sample.reference["relevant_tools"] == [
        "Video_Images/modifytiff_for_aspose_imaging_cloud",
        "Video_Images/nsfw_detection_for_nsfw_nude_detection",
    ]
    modify = tool(seed, "Video_Images/modifytiff_for_aspose_imaging_cloud")
    assert modify.category == "Video_Images"
    assert modify.raw == published(file, 3942)["api_list"][0]
    assert modify.raw["api_name"] == "ModifyTiff"
    assert modify.parameters == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Filename of image."},
            "bitdepth": {"type": "number", "description": "Bit depth."},
            "resolutionunit": {
                "type": "string",
                "description": "New resolution unit (none - the default one, inch or centimeter).",
            },
            "folder": {"type": "string", "description": "Folder with image to process."},
            "compression": {
                "type": "string",
                "description": "Compression (none is default). Please, refer to "
                "https://apireference.aspose.com/net/imaging/aspose.imaging.fileformats.tiff."
                "enums/tiffcompressions for all possible values.",
            },
            "storage": {"type": "string", "description": "Your Aspose Cloud Storage name."},
            "horizontalresolution": {
                "type": "number",
                "description": "New horizontal resolution.",
                "examples": [0],
            },
            "fromscratch": {
                "type": "boolean",
                "description": "Specifies where additional parameters we do not support should "
                "be taken from. If this is true \u2013 they will be taken from default values for "
                "standard image, if it is false \u2013 they will be saved from current image. "
                "Default is false.",
                "examples": [False],
            },
            "verticalresolution": {
                "type": "number",
                "description": "New vertical resolution.",
                "examples": [0],
            },
        },
        "required": ["name", "bitdepth"],
    }


def test_reserved_words_dates_enums_and_returns(seed: ImportBundle) -> None:
    dividend = tool(seed, "Finance/api_dividend_for_finanzoo_api_fundamentals")
    assert dividend.category == "Finance"
    assert dividend.description.startswith("Contains the annual dividends (split-adjusted")
    assert dividend.parameters == {
        "type": "object",
        "properties": {
            "is_from": {
                "type": "string",
                "format": "date",
                "description": "",
                "examples": ["1962-01-01"],
            },
            "shareuid": {"type": "number", "description": "", "examples": ["2"]},
            "api_dividend": {"type": "boolean", "description": "", "examples": ["1"]},
            "to": {
                "type": "string",
                "format": "date",
                "description": "",
                "examples": ["2020-03-31"],
            },
        },
        "required": ["is_from", "shareuid", "api_dividend", "to"],
    }
    assert dividend.returns == {
        "type": "object",
        "properties": {"year": {"type": "string"}, "dividend": {"type": "string"}},
    }
    golf = tool(seed, "Sports/tournaments_for_live_golf_data")
    assert golf.parameters["properties"]["orgid"] == {
        "type": "string",
        "description": "Choose 1 for PGA Tour or  2 for LIV Tour.",
    }
    assert golf.parameters["required"] == ["orgid", "tournid", "year"]
    assert golf.returns == {}  # no template_response published
    # A template_response that is a JSON text cut off mid-way gives no schema; raw keeps it.
    movies = tool(seed, "Video_Images/with_rt_ratings_for_list_movies")
    assert isinstance(movies.raw["template_response"], str) and movies.returns == {}
    concert = tool(seed, "Data/songkick_concert_for_theclique")
    assert concert.returns["properties"]["line_up"] == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"link": {"type": "string"}, "name": {"type": "string"}},
        },
    }


def test_a_parameter_listed_twice_keeps_its_first_definition(seed: ImportBundle) -> None:
    riddle = tool(seed, "Entertainment/riddle_by_id_for_riddlie")
    assert riddle.parameters == {
        "type": "object",
        "properties": {
            "is_id": {"type": "string", "description": "", "examples": ["63bdef027183b71946b64ee6"]}
        },
        "required": ["is_id"],
    }
    reqres = tool(seed, "Advertising/user_by_id_for_reqres_dont_change")
    assert reqres.parameters["properties"]["array"] == {
        "type": "array",
        "description": "",
        "examples": ['["asd", "dsa"]'],
    }
    assert reqres.parameters["required"] == ["is_id"]


def test_an_api_offered_by_two_queries_is_one_tool(seed: ImportBundle) -> None:
    first = by_id(seed, "G2_category", "3942")
    second = by_id(seed, "G2_category", "3990")
    assert "Video_Images/modifytiff_for_aspose_imaging_cloud" in first.candidate_tools
    assert second.candidate_tools[3] == "Video_Images/modifytiff_for_aspose_imaging_cloud"
    assert [t.name for t in seed.tools].count(
        "Video_Images/modifytiff_for_aspose_imaging_cloud"
    ) == 1
    assert tool(seed, "Video_Images/modifytiff_for_aspose_imaging_cloud").source.endswith(
        "G2_category.first50.json, line 4145"
    )
    # A relevant API listed twice stays listed twice, as published.
    assert second.reference["relevant_tools"] == [
        "Video_Images/video_downloader_for_video_downloader",
        "Video_Images/generate_pdf_for_web_capture",
        "Video_Images/video_downloader_for_video_downloader",
    ]


# --- ToolBench's names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_name", "api_name", "expected"),
    [
        ("TheClique", "Songkick concert", "songkick_concert_for_theclique"),
        ("Reqres - dont change!", "User by id", "user_by_id_for_reqres_dont_change"),
        ("Riddlie ", "Riddle by ID", "riddle_by_id_for_riddlie"),
        ("10000 Anime Quotes", "id", "is_id_for_get_10000_anime_quotes"),
        ("NSFW / Nude Detection", "NSFW detection", "nsfw_detection_for_nsfw_nude_detection"),
        ("Tool^Two", "__From__", "is_from_for_tool^two"),  # ToolBench keeps "^"
    ],
)
def test_function_names_follow_toolbench(tool_name: str, api_name: str, expected: str) -> None:
    assert stabletoolbench.function_name(tool_name, api_name) == expected


def test_cache_paths_follow_the_virtual_api_server() -> None:
    assert stabletoolbench.standard_category("Business Software") == "Business_Software"
    assert stabletoolbench.standard_category("Data, AI/ML") == "Data_AI_ML"
    entry = api("Aspose.Imaging Cloud", "ModifyTiff", category_name="Video_Images")
    assert stabletoolbench.cache_path(entry) == PurePosixPath(
        "Video_Images/aspose_imaging_cloud_for_Video_Images/modifytiff.json"
    )


# --- query-id lists -----------------------------------------------------------------------------


def test_query_id_list_marks_the_listed_queries(tmp_path: Path) -> None:
    queries = write(tmp_path / "test_instruction" / "G9_tool.json", [query(7), query(8), query(9)])
    ids = write(tmp_path / "test_query_ids" / "G9_tool.json", {"7": 0, "9": 0, "12": 0})
    bundle = stabletoolbench.import_files([ids, queries])  # order does not matter
    assert [(s.external_id, bare(s.metadata)) for s in bundle.samples] == [
        ("7", {"in_test_query_ids": True}),
        ("8", {"in_test_query_ids": False}),
        ("9", {"in_test_query_ids": True}),
    ]
    as_list = write(tmp_path / "lists" / "G9_tool.json", [8])
    bundle = stabletoolbench.import_files([queries, as_list])
    assert [s.metadata["in_test_query_ids"] for s in bundle.samples] == [False, True, False]


def test_query_id_list_alone_is_refused(seeddata: Path) -> None:
    ids = seed_queries(seeddata) / "test_query_ids" / "G1_tool.json"
    with pytest.raises(ImportFormatError) as exc:
        stabletoolbench.import_files([ids])
    assert exc.value.file == str(ids)
    assert "no G1_tool query file is in this import" in exc.value.message


def test_bad_query_id_list(tmp_path: Path) -> None:
    write(tmp_path / "G9_tool.json", [query(7)])
    ids = write(tmp_path / "ids" / "G9_tool.json", {"7": 0, "8": "yes"})
    with pytest.raises(ImportFormatError) as exc:
        stabletoolbench.import_files([tmp_path / "G9_tool.json", ids])
    assert (exc.value.file, exc.value.record) == (str(ids), "8")
    assert "expected a number" in exc.value.message


# --- bad input ----------------------------------------------------------------------------------


def refused(tmp_path: Path, content: Any, name: str = "G9_tool.json") -> ImportFormatError:
    path = write(tmp_path / name, content)
    with pytest.raises(ImportFormatError) as exc:
        stabletoolbench.import_files([path])
    assert exc.value.file == str(path)
    return exc.value


def test_missing_query_id(tmp_path: Path) -> None:
    record = query()
    del record["query_id"]
    error = refused(tmp_path, [query(1), record])
    # indent=1: "[" on line 1, the first record on lines 2-29, the second from line 30.
    assert (error.line, error.record, error.field) == (30, 2, "query_id")
    assert error.message == "missing"


def test_query_id_of_the_wrong_type(tmp_path: Path) -> None:
    error = refused(tmp_path, [query(True)])
    assert (error.line, error.record, error.field) == (2, 1, "query_id")
    assert "got a boolean" in error.message


def test_api_list_not_a_list(tmp_path: Path) -> None:
    error = refused(tmp_path, [query(api_list={"api": api()})])
    assert (error.line, error.record, error.field) == (2, "1 (query_id 7)", "api_list")
    assert error.message == "expected a list, got an object"


def test_empty_api_list(tmp_path: Path) -> None:
    error = refused(tmp_path, [query(api_list=[])])
    assert error.field == "api_list" and "is empty" in error.message


def test_parameter_without_name(tmp_path: Path) -> None:
    entry = api(optional_parameters=[{"type": "STRING", "description": "", "default": ""}])
    error = refused(tmp_path, [query(3, api_list=[api("Other"), entry])])
    assert error.field == "api_list[1].optional_parameters[0].name"
    assert (error.line, error.record, error.message) == (2, "1 (query_id 3)", "missing")


def test_parameter_that_is_not_an_object(tmp_path: Path) -> None:
    error = refused(tmp_path, [query(api_list=[api(required_parameters=["litres"])])])
    assert error.field == "api_list[0].required_parameters[0]"
    assert "expected a JSON object, got a string" in error.message


def test_api_without_tool_name(tmp_path: Path) -> None:
    entry = api()
    del entry["tool_name"]
    error = refused(tmp_path, [query(api_list=[entry])])
    assert (error.field, error.message) == ("api_list[0].tool_name", "missing")


def test_relevant_api_that_is_not_a_pair(tmp_path: Path) -> None:
    error = refused(tmp_path, [query(**{"relevant APIs": [["Kettle Club"]]})])
    assert error.field == "relevant APIs[0]"
    assert "expected [tool_name, api_name]" in error.message


def test_invalid_json_names_its_line(tmp_path: Path) -> None:
    text = json.dumps([query()], indent=1).replace('"query_id": 7', '"query_id": 7,')
    error = refused(tmp_path, text)
    assert text.splitlines()[error.line - 1] == " }"  # the brace after the stray comma
    assert "is not valid JSON" in error.message


def test_empty_file_and_empty_list(tmp_path: Path) -> None:
    assert refused(tmp_path, "  \n").message == "is empty"
    assert "holds no queries" in refused(tmp_path, "[]", "G8_tool.json").message


def test_two_apis_with_one_name_are_refused(tmp_path: Path) -> None:
    # "Boil water" and "Boil-Water" are different APIs that ToolBench's naming cannot tell apart.
    first = query(1)
    second = query(2, api_list=[api(api_name="Boil-Water")])
    error = refused(tmp_path, [first, second])
    assert error.record == "2 (query_id 2)" and error.field == "api_list[0]"
    assert "Food/boil_water_for_kettle_club" in error.message and "line 2" in error.message


def test_a_later_different_document_keeps_the_first(tmp_path: Path) -> None:
    changed = api(api_description="Boils water, now faster.")
    path = write(tmp_path / "G9_tool.json", [query(1), query(2, api_list=[changed])])
    bundle = stabletoolbench.import_files([path])
    assert [t.description for t in bundle.tools] == ["Boils water for tea."]
    assert bare(bundle.samples[1].metadata) == {
        "api_doc_differs": ["Food/boil_water_for_kettle_club"]
    }
    assert bare(bundle.samples[0].metadata) == {}


def test_relevant_api_not_offered_is_kept_and_named(tmp_path: Path) -> None:
    path = write(tmp_path / "G9_tool.json", [query(**{"relevant APIs": [["Tea Shop", "Buy"]]})])
    sample = stabletoolbench.import_files([path]).samples[0]
    assert sample.reference["relevant_tools"] == ["buy_for_tea_shop"]
    assert bare(sample.metadata) == {"relevant_not_offered": ["buy_for_tea_shop"]}


def test_files_the_suite_does_not_read(tmp_path: Path) -> None:
    error = refused(tmp_path, "query_id,query\n1,x\n", "G1_tool.csv")
    assert "test_instruction/<group>.json" in error.message
    error = refused(tmp_path, '"just a string"', "G7_tool.json")
    assert "expected a JSON list of queries" in error.message
    folder = tmp_path / "nothing"
    folder.mkdir()
    with pytest.raises(ImportFormatError, match="holds no StableToolBench files"):
        stabletoolbench.import_files([folder])


def test_a_response_cache_is_not_imported_as_queries() -> None:
    with pytest.raises(ImportFormatError) as exc:
        stabletoolbench.import_files([CACHE])
    assert exc.value.file == str(CACHE) and "load_response_cache" in exc.value.message
    one_file = CACHE / "Travel" / "ferry_times_for_Travel" / "departures.json"
    with pytest.raises(ImportFormatError, match="is a response-cache file"):
        stabletoolbench.import_files([one_file])


# --- the response cache -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cache() -> list[CacheEntry]:
    return list(load_response_cache(CACHE))


def test_cache_entries_in_path_and_file_order(cache: list[CacheEntry]) -> None:
    assert [(e.category, e.tool, e.api) for e in cache] == [
        ("Travel", "ferry_times_for_Travel", "departures"),
    ] * 5 + [("Travel", "ferry_times_for_Travel", "route_by_id")] * 2 + [
        ("Weather", "snow_report", "resorts"),
    ]
    first = cache[0]
    assert first.raw_key == "{'port': 'Oban', 'day': 'monday'}"
    assert first.error == "" and first.response == {"sailings": ["07:15", "11:00", "16:45"]}
    departures = CACHE / "Travel" / "ferry_times_for_Travel" / "departures.json"
    assert first.source == f"{departures}, line 2"
    assert cache[1].source.endswith("departures.json, line 6")


def test_cache_keys_parse_into_argument_dicts(cache: list[CacheEntry]) -> None:
    # Python dict reprs (what the server writes) and JSON keys both parse; key order differs
    # between the first two stored keys, the parsed arguments are equal, the raw keys are kept.
    assert cache[0].arguments == {"port": "Oban", "day": "monday"}
    assert cache[1].arguments == cache[0].arguments and cache[1].raw_key != cache[0].raw_key
    assert list(cache[1].arguments) == ["day", "port"]
    assert cache[2].arguments == {"port": "Craignure", "day": "friday", "late": True}
    assert cache[2].response == '{"sailings": ["21:30"]}'
    assert cache[3].arguments == {}
    assert cache[4].arguments == {"port": "Tobermory", "day": None, "night": False}
    assert cache[4].error == "Rate limit reached, retry later"
    assert cache[5].arguments == {"is_id": 7}
    assert cache[6].arguments == "route seven please"  # not a dict: kept as the key
    assert cache[7].arguments == {"country": "Scotland", "min_depth_cm": 20.5}
    assert cache[7].error == ""  # no "error" field stored


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("{'q': 'a\\\\d'}", {"q": "a\\d"}),
        ("{'q': 'a\\d'}", {"q": "a\\d"}),  # an invalid escape, as scraped text has
        ("{'q': __import__('os')}", "{'q': __import__('os')}"),
        ("{'q': (1, 2)}", "{'q': (1, 2)}"),  # a tuple is no JSON value
        ("{'q': float('inf')}", "{'q': float('inf')}"),
        ("[1, 2]", "[1, 2]"),
        ("", ""),
    ],
)
def test_cache_keys_are_read_never_run(key: str, expected: Any) -> None:
    assert stabletoolbench.parse_cache_key(key) == expected


def test_cache_entries_map_to_tool_names(cache: list[CacheEntry]) -> None:
    assert stabletoolbench.cache_tool_name(cache[0]) == "Travel/departures_for_ferry_times"
    assert stabletoolbench.cache_tool_name(cache[5]) == "Travel/route_by_id_for_ferry_times"
    assert stabletoolbench.cache_tool_name(cache[7]) == "Weather/resorts_for_snow_report"


def broken_cache(tmp_path: Path, content: str) -> Path:
    write(tmp_path / "cache" / "Food" / "kettle_club_for_Food" / "boil_water.json", content)
    return tmp_path / "cache"


def test_cache_with_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    root = broken_cache(tmp_path, '{\n  "{}": {"error": "", "response": 1},\n}\n')
    with pytest.raises(ImportFormatError) as exc:
        list(load_response_cache(root))
    assert exc.value.file.endswith("boil_water.json") and exc.value.line == 3
    assert "is not valid JSON" in exc.value.message


def test_cache_value_without_response_names_key_and_field(tmp_path: Path) -> None:
    text = '{\n "{}": {"error": "", "response": 1},\n "{\'litres\': 2}": {"error": ""}\n}\n'
    with pytest.raises(ImportFormatError) as exc:
        list(load_response_cache(broken_cache(tmp_path, text)))
    error = exc.value
    assert (error.record, error.field, error.line, error.message) == (
        "{'litres': 2}",
        "response",
        3,
        "missing",
    )
    assert error.file.endswith("boil_water.json")


@pytest.mark.parametrize(
    ("content", "record", "field", "fragment"),
    [
        ('{"{}": "hot water"}', "{}", None, "expected an object {error, response}"),
        ('{"{}": {"error": 404, "response": ""}}', "{}", "error", "expected a string"),
        ('[{"error": "", "response": 1}]', None, None, "expected a JSON object"),
        ("", None, None, "is empty"),
    ],
)
def test_bad_cache_files(
    tmp_path: Path, content: str, record: str | None, field: str | None, fragment: str
) -> None:
    with pytest.raises(ImportFormatError) as exc:
        list(load_response_cache(broken_cache(tmp_path, content)))
    assert exc.value.file.endswith("boil_water.json")
    assert (exc.value.record, exc.value.field) == (record, field)
    assert fragment in exc.value.message


def test_bad_cache_layout(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="is not a folder"):
        list(load_response_cache(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImportFormatError, match="holds no cache files"):
        list(load_response_cache(tmp_path / "empty"))
    stray = write(tmp_path / "flat" / "Food" / "boil_water.json", "{}")
    with pytest.raises(ImportFormatError, match="expected a tool folder") as exc:
        list(load_response_cache(tmp_path / "flat"))
    assert exc.value.file == str(stray)
    write(tmp_path / "notes" / "Food" / "kettle_for_Food" / "README.txt", "hello")
    with pytest.raises(ImportFormatError, match=r"expected an <api>\.json file"):
        list(load_response_cache(tmp_path / "notes"))


# --- demo and database --------------------------------------------------------------------------


def demo_manifest() -> dict[str, Any]:
    return json.loads((DEMO / "manifest.json").read_text("utf-8"))


def test_demo_files_parse_and_the_demo_cache_matches_the_demo_tools() -> None:
    manifest = demo_manifest()
    assert manifest["suite"] == "stabletoolbench"
    assert manifest["benchmark"] == "StableToolBench (demo)"
    bundle = stabletoolbench.import_files([DEMO / name for name in manifest["files"]])
    validate_bundle(bundle)
    assert Counter(s.split for s in bundle.samples) == {"G1_instruction": 4, "G2_instruction": 3}
    assert all(s.input["query"].startswith("[Demo]") for s in bundle.samples)
    assert all(bare(s.metadata) == {"in_test_query_ids": True} for s in bundle.samples)
    tools = {t.name: t for t in bundle.tools}
    assert len(tools) == 6
    assert tools["Food/recipe_by_id_for_pantry_recipes_demo"].parameters["required"] == ["is_id"]
    entries = list(load_response_cache(DEMO / manifest["response_cache"]))
    assert len(entries) == 7
    for entry in entries:
        name = stabletoolbench.cache_tool_name(entry)
        assert name in tools, name
        assert stabletoolbench.cache_path(tools[name].raw) == PurePosixPath(
            entry.category, entry.tool, f"{entry.api}.json"
        )
        assert isinstance(entry.arguments, dict)
        assert set(entry.arguments) <= set(tools[name].parameters["properties"])


def test_the_demo_folder_as_one_path_reads_its_solvable_queries() -> None:
    # The folder also holds manifest.json and response_cache/; only solvable_queries/ is read.
    bundle = stabletoolbench.import_files([DEMO])
    assert len(bundle.samples) == 7 and len(bundle.tools) == 6
    assert all(bare(s.metadata) == {"in_test_query_ids": True} for s in bundle.samples)


@pytest.mark.django_db
def test_import_of_the_six_seed_files_and_a_reimport_that_writes_nothing(seeddata: Path) -> None:
    paths = seed_files(seeddata)
    summary = benchmark_import(suite="stabletoolbench", paths=paths)
    assert summary.benchmark == "StableToolBench"
    assert summary.samples == {group: 50 for group in GROUPS}
    assert summary.tools == 1187 and summary.tools_written == 1187
    assert summary.samples_written == 300
    benchmark = Benchmark.objects.get(name="StableToolBench")
    assert Sample.objects.filter(benchmark=benchmark).count() == 300
    stored = Tool.objects.get(
        benchmark=benchmark, name="Video_Images/modifytiff_for_aspose_imaging_cloud"
    )
    assert stored.parameters["required"] == ["name", "bitdepth"]
    assert stored.raw["tool_name"] == "Aspose.Imaging Cloud"
    sample = Sample.objects.get(benchmark=benchmark, split="G1_instruction", external_id="588")
    assert sample.reference["relevant_tools"][0] == "Data/transfermarkt_search_for_theclique"

    again = benchmark_import(suite="stabletoolbench", paths=paths)
    assert (again.samples_written, again.tools_written, again.unchanged) == (0, 0, 300)
    assert again.samples == summary.samples and again.tools == 1187


@pytest.mark.django_db
def test_demo_files_import() -> None:
    manifest = demo_manifest()
    summary = benchmark_import(
        suite=manifest["suite"],
        paths=[DEMO / name for name in manifest["files"]],
        benchmark_name=manifest["benchmark"],
        is_demo=True,
    )
    assert summary.samples == {"G1_instruction": 4, "G2_instruction": 3}
    assert summary.tools == 6
    assert Benchmark.objects.get(name="StableToolBench (demo)").is_demo


# --- one function name in two categories (issue 14) ---------------------------------------------
# The published test files name some APIs alike in two categories ('👋 Demo Project' in Media and
# in Sports, 'Currency Converter_v2' in Finance and in Financial): ToolBench keys tools by
# category, so must the import. The seed data holds only the first 50 queries of each group
# (none of those pairs is among them), so the six full files cannot be imported here: the seed
# slices are imported with our own files that have such pairs.


def shared(*groups: str) -> list[Path]:
    return [SHARED / "test_instruction" / f"{group}.json" for group in groups]


@pytest.mark.django_db
def test_one_function_name_in_two_categories_imports_as_two_tools() -> None:
    summary = benchmark_import(suite="stabletoolbench", paths=shared("G1_instruction", "G1_tool"))
    assert summary.samples == {"G1_instruction": 2, "G1_tool": 2}
    assert summary.tools == 6
    benchmark = Benchmark.objects.get(name="StableToolBench")
    boil = Tool.objects.filter(benchmark=benchmark, raw__api_name="Boil water")
    assert sorted((t.category, t.description) for t in boil) == [
        ("Devices", "Switches the smart kettle on."),
        ("Food", "Boils water for tea."),
    ]
    food = Sample.objects.get(benchmark=benchmark, external_id="900101")
    devices = Sample.objects.get(benchmark=benchmark, external_id="900201")
    assert set(food.candidate_tools).isdisjoint(devices.candidate_tools)


@pytest.mark.django_db
def test_the_seed_slices_and_files_with_shared_names_import_together(seeddata: Path) -> None:
    paths = [*seed_files(seeddata), *shared("G1_instruction", "G1_tool", "G3_instruction")]
    summary = benchmark_import(suite="stabletoolbench", paths=paths)
    assert summary.samples == {
        **{group: 50 for group in GROUPS},
        "G1_instruction": 52,
        "G1_tool": 52,
        "G3_instruction": 51,
    }
    assert summary.tools == 1187 + 6


def test_tools_are_keyed_by_category_and_offered_by_key() -> None:
    bundle = stabletoolbench.import_files([SHARED])
    assert sorted(t.name for t in bundle.tools) == [
        "Devices/boil_water_for_kettle_club",
        "Devices/descale_for_kettle_club",
        "Finance/convert_for_rate_board_v2",
        "Financial/convert_for_rate_board_v2",
        "Food/boil_water_for_kettle_club",
        "Food/steep_tea_for_kettle_club",
    ]
    both = by_id(bundle, "G3_instruction", "900301")
    assert both.candidate_tools == [
        "Finance/convert_for_rate_board_v2",
        "Financial/convert_for_rate_board_v2",
        "Food/boil_water_for_kettle_club",
    ]
    # A relevant API names no category: the first api_list entry with its name is meant.
    assert both.reference["relevant_tools"] == [
        "Finance/convert_for_rate_board_v2",
        "Food/boil_water_for_kettle_club",
    ]
    devices = by_id(bundle, "G1_tool", "900201")
    assert devices.reference["relevant_tools"] == [
        "Devices/descale_for_kettle_club",
        "Devices/boil_water_for_kettle_club",
    ]
    assert all(bare(s.metadata) == {"in_test_query_ids": True} for s in bundle.samples)


def test_a_relevant_api_not_offered_takes_its_tools_category(tmp_path: Path) -> None:
    relevant = [["Kettle Club", "Descale"], ["Tea Shop", "Buy"]]
    path = write(tmp_path / "G9_tool.json", [query(**{"relevant APIs": relevant})])
    sample = stabletoolbench.import_files([path]).samples[0]
    # Kettle Club is offered from Food: its Descale is Food's too; Tea Shop's category is unknown.
    assert sample.reference["relevant_tools"] == [
        "Food/descale_for_kettle_club",
        "buy_for_tea_shop",
    ]
    assert bare(sample.metadata) == {
        "relevant_not_offered": ["Food/descale_for_kettle_club", "buy_for_tea_shop"]
    }


def test_tool_keys_split_at_the_last_slash() -> None:
    key = stabletoolbench.tool_key("Video_Images", "NSFW / Nude Detection", "NSFW detection")
    assert key == "Video_Images/nsfw_detection_for_nsfw_nude_detection"
    assert stabletoolbench.key_parts(key) == (
        "Video_Images",
        "nsfw_detection_for_nsfw_nude_detection",
    )
    assert stabletoolbench.key_parts("Data, AI/ML/x_for_y") == ("Data, AI/ML", "x_for_y")
    assert stabletoolbench.key_parts("calculator") == ("", "calculator")


def test_models_see_toolbench_names_qualified_only_where_two_offered_share_one() -> None:
    assert stabletoolbench.shown_names(
        [
            "Finance/convert_for_rate_board_v2",
            "Financial/convert_for_rate_board_v2",
            "Food/boil_water_for_kettle_club",
            "calculator",
        ]
    ) == {
        "Finance/convert_for_rate_board_v2": "convert_for_rate_board_v2_for_finance",
        "Financial/convert_for_rate_board_v2": "convert_for_rate_board_v2_for_financial",
        "Food/boil_water_for_kettle_club": "boil_water_for_kettle_club",
        "calculator": "calculator",
    }
    # Offered alone, each is shown under ToolBench's name, as the published answers call it.
    assert stabletoolbench.shown_names(["Financial/convert_for_rate_board_v2"]) == {
        "Financial/convert_for_rate_board_v2": "convert_for_rate_board_v2"
    }
    # Categories that standardize alike ("Data" and "data"), and ToolBench names equal to the
    # qualified form: those keep their names, the qualified ones are numbered in offer order.
    assert stabletoolbench.shown_names(
        ["Data/x_for_y", "data/x_for_y", "Other/x_for_y_for_data", "Other/x_for_y_for_data_2"]
    ) == {
        "Data/x_for_y": "x_for_y_for_data_3",
        "data/x_for_y": "x_for_y_for_data_4",
        "Other/x_for_y_for_data": "x_for_y_for_data",
        "Other/x_for_y_for_data_2": "x_for_y_for_data_2",
    }


def _as_before_the_keys(benchmark: Benchmark) -> None:
    """The rows as an import before tools were keyed by category left them."""
    for stored in Tool.objects.filter(benchmark=benchmark):
        stored.name = stabletoolbench.key_parts(stored.name)[1]
        stored.save(update_fields=["name"])
    for sample in Sample.objects.filter(benchmark=benchmark):
        sample.candidate_tools = [stabletoolbench.key_parts(n)[1] for n in sample.candidate_tools]
        relevant = sample.reference["relevant_tools"]
        sample.reference["relevant_tools"] = [stabletoolbench.key_parts(n)[1] for n in relevant]
        sample.save(update_fields=["candidate_tools", "reference"])


@pytest.mark.django_db
def test_the_migration_keys_tools_imported_before_so_a_reimport_changes_nothing() -> None:
    from django.apps import apps

    migration = importlib.import_module("benchmarks.migrations.0003_stabletoolbench_tool_keys")
    # given a benchmark imported under ToolBench's bare names (one file: no name is shared)
    paths = shared("G1_instruction")
    benchmark_import(suite="stabletoolbench", paths=paths)
    benchmark = Benchmark.objects.get(name="StableToolBench")
    keyed = {s.external_id: (s.candidate_tools, s.reference) for s in benchmark.samples.all()}
    _as_before_the_keys(benchmark)
    assert "boil_water_for_kettle_club" in benchmark.tools.values_list("name", flat=True)

    # when
    migration.forwards(apps, None)

    # then the rows are what the import writes now, and importing again writes nothing
    assert sorted(benchmark.tools.values_list("name", flat=True)) == [
        "Finance/convert_for_rate_board_v2",
        "Food/boil_water_for_kettle_club",
        "Food/steep_tea_for_kettle_club",
    ]
    assert {s.external_id: (s.candidate_tools, s.reference) for s in benchmark.samples.all()} == (
        keyed
    )
    again = benchmark_import(suite="stabletoolbench", paths=paths)
    assert (again.tools, again.tools_written, again.samples_written) == (3, 0, 0)

    # and back, while no two categories share a name; with such a pair it refuses
    migration.backwards(apps, None)
    assert "Food/boil_water_for_kettle_club" not in benchmark.tools.values_list("name", flat=True)
    migration.forwards(apps, None)
    benchmark_import(suite="stabletoolbench", paths=shared("G1_tool"))
    with pytest.raises(RuntimeError, match="convert_for_rate_board_v2"):
        migration.backwards(apps, None)


@pytest.mark.django_db
def test_refinement_reads_each_offered_tools_own_schema() -> None:
    from annotation.refinement_workflow import toolset

    benchmark_import(suite="stabletoolbench", paths=shared("G3_instruction"))
    sample = Sample.objects.get(external_id="900301")
    schemas = toolset(sample)
    assert list(schemas) == sample.candidate_tools
    # Finance's Convert needs an amount; Financial's takes it as optional.
    assert schemas["Finance/convert_for_rate_board_v2"]["required"] == ["is_from", "to", "amount"]
    assert schemas["Financial/convert_for_rate_board_v2"]["required"] == ["is_from", "to"]

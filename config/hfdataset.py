"""A Hugging Face dataset folder, written row by row: Parquet files per split under `data/`
and a dataset card (`README.md`) whose YAML header declares the configs, features, splits and
license the Hub reads; `datasets.load_dataset("parquet", data_dir=FOLDER)` reads it back, and
so does `load_dataset(FOLDER)` through the card's configs.

    FOLDER/
      README.md                                 the card: YAML header, then the body
      data/<split>-00000-of-00001.parquet       the default config, one or more files a split
      <config>/<split>-00000-of-00001.parquet   a further config (a benchmark's tools)

Rows are written in row groups of ROWS_PER_GROUP as they come (pyarrow's ParquetWriter), one
writer open per split, so memory holds at most a group per split whatever the size; a split
longer than ROWS_PER_FILE goes on in a further file, and the files are named
`-0000i-of-0000N` once N is known.

Column kinds (what a value is, its Arrow type, its `datasets` feature):
    string   text, or null                   string
    int64    a whole number, or null         int64
    float64  a number, or null               float64
    bool     true/false, or null             bool
    strings  a list of texts                 list of string
    json     any JSON value as its text      string (json.loads gives the value back; null
             (json.dumps, keys in stored     where the value is null or missing)
             order, unicode kept)
JSON columns hold what varies in shape from row to row (a sample's input and reference, an
answer, tool calls, scores): a struct type would have to be the union of every row's shape
and would give back missing keys as nulls, so the value would not come back equal.

Split names: `datasets` accepts names matching `\\w+(\\.\\w+)*` and reads the split from the
file name up to its first `-`, so a name is written with every character outside
[A-Za-z0-9_] as `_` (hf_split_names); the card lists each name that changed.
"""

from __future__ import annotations

import datetime
import functools
import json
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from django.http import StreamingHttpResponse

ROWS_PER_GROUP = 5000
ROWS_PER_FILE = 1_000_000
DEFAULT_CONFIG = "default"
DATA_FOLDER = "data"
CARD = "README.md"

ARROW_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "strings": pa.list_(pa.string()),
    "json": pa.string(),
}
# Each kind's feature in the card, as `datasets.Features(...)._to_yaml_list()` writes it.
FEATURES: dict[str, dict[str, str]] = {
    "string": {"dtype": "string"},
    "int64": {"dtype": "int64"},
    "float64": {"dtype": "float64"},
    "bool": {"dtype": "bool"},
    "strings": {"list": "string"},
    "json": {"dtype": "string"},
}


class HFDatasetError(ValueError):
    """A dataset that cannot be written as asked (no rows, an unknown split, a bad value)."""


@dataclass(frozen=True)
class Column:
    """One column: its name, its kind (ARROW_TYPES) and what it holds, for the card."""

    name: str
    kind: str
    about: str

    def __post_init__(self) -> None:
        if self.kind not in ARROW_TYPES:
            raise HFDatasetError(f"column {self.name!r}: unknown kind {self.kind!r}")


def hf_split_names(names: Iterable[str]) -> dict[str, str]:
    """Each name as a split name `datasets` accepts and reads back from a file name: every
    character outside [A-Za-z0-9_] as `_`, an empty name as `split`, and a name two others
    would share made distinct with `_2`, `_3`... (in the order given)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        if name in out:
            continue
        base = re.sub(r"[^A-Za-z0-9_]", "_", name) or "split"
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}_{n}"
        taken.add(candidate)
        out[name] = candidate
    return out


def json_text(value: Any) -> str | None:
    """A JSON column's cell: the value's JSON text (keys in their order, unicode as is), None
    for null."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


class _Split:
    """The files of one split: an open writer, the rows waiting for the next group."""

    def __init__(self, folder: Path, name: str, schema: pa.Schema) -> None:
        self.folder, self.name, self.schema = folder, name, schema
        self.pending: list[list[Any]] = [[] for _ in schema]
        self.waiting = 0
        self.rows = 0
        self.in_file = 0
        self.files: list[Path] = []
        self.writer: pq.ParquetWriter | None = None

    def add(self, row: Sequence[Any]) -> None:
        for values, value in zip(self.pending, row, strict=True):
            values.append(value)
        self.waiting += 1
        if self.waiting >= ROWS_PER_GROUP:
            self.flush()

    def flush(self) -> None:
        if not self.waiting:
            return
        if self.writer is None or self.in_file >= ROWS_PER_FILE:
            self._next_file()
        assert self.writer is not None
        try:
            batch = pa.record_batch(
                [
                    pa.array(values, type=f.type)
                    for values, f in zip(self.pending, self.schema, strict=True)
                ],
                schema=self.schema,
            )
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
            raise HFDatasetError(f"split {self.name!r}: a value does not fit: {exc}") from None
        self.writer.write_batch(batch)
        self.rows += self.waiting
        self.in_file += self.waiting
        self.pending = [[] for _ in self.schema]
        self.waiting = 0

    def _next_file(self) -> None:
        if self.writer is not None:
            self.writer.close()
        path = self.folder / f".{self.name}-{len(self.files):05d}.parquet.part"
        self.files.append(path)
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self.in_file = 0

    def close(self) -> None:
        """The last rows written, the files named -0000i-of-0000N."""
        self.flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        total = len(self.files)
        for i, path in enumerate(self.files):
            path.rename(self.folder / f"{self.name}-{i:05d}-of-{total:05d}.parquet")


@dataclass
class Config:
    """One config of the dataset: its columns and rows per split (in order of first row)."""

    name: str
    columns: tuple[Column, ...]
    folder: str
    split_rows: dict[str, int] = field(default_factory=dict)


class DatasetWriter:
    """Writes the folder: `add(split, row)` per row (a row holds the config's columns in
    order, JSON columns as their values, which it writes as text), `close(card)` at the end.
    A further config (another table, e.g. a benchmark's tools) is declared with
    `config(name, columns)` and written with `add(split, row, config=name)`."""

    def __init__(self, folder: Path, columns: Sequence[Column]) -> None:
        self.folder = folder
        self.configs: dict[str, Config] = {}
        self._splits: dict[tuple[str, str], _Split] = {}
        self._json: dict[str, list[int]] = {}
        self.config(DEFAULT_CONFIG, columns, folder=DATA_FOLDER)

    def config(self, name: str, columns: Sequence[Column], *, folder: str | None = None) -> None:
        if name in self.configs:
            raise HFDatasetError(f"config {name!r} declared twice")
        self.configs[name] = Config(name, tuple(columns), folder or name)
        self._json[name] = [i for i, c in enumerate(columns) if c.kind == "json"]

    def add(self, split: str, row: Sequence[Any], *, config: str = DEFAULT_CONFIG) -> None:
        key = (config, split)
        writer = self._splits.get(key)
        if writer is None:
            declared = self.configs[config]
            if not re.fullmatch(r"[A-Za-z0-9_]+", split):
                raise HFDatasetError(f"split name {split!r}: use hf_split_names")
            folder = self.folder / declared.folder
            folder.mkdir(parents=True, exist_ok=True)
            writer = self._splits[key] = _Split(folder, split, schema_of(declared.columns))
            declared.split_rows[split] = 0
        json_columns = self._json[config]
        if json_columns:
            row = list(row)
            for i in json_columns:
                row[i] = json_text(row[i])
        writer.add(row)

    def close(self, card: CardText) -> dict[str, dict[str, int]]:
        """Every file closed and named, and the card written; rows per split, per config.
        HFDatasetError when the default config has no row (`datasets` cannot load it)."""
        for (config, split), writer in self._splits.items():
            writer.close()
            self.configs[config].split_rows[split] = writer.rows
        if not self.configs[DEFAULT_CONFIG].split_rows:
            raise HFDatasetError("no rows to write")
        (self.folder / CARD).write_text(card_text(card, list(self.configs.values())), "utf-8")
        return {name: dict(c.split_rows) for name, c in self.configs.items()}


def schema_of(columns: Sequence[Column]) -> pa.Schema:
    return pa.schema([pa.field(c.name, ARROW_TYPES[c.kind]) for c in columns])


# --- the card -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardText:
    """What the card says beyond the files: its title, license (an id the Hub knows, or
    "other"), a paragraph on what the rows are, the provenance (written in the YAML header
    and the body), the split names that changed (original -> written) and further notes."""

    pretty_name: str
    license: str
    summary: str
    provenance: Mapping[str, Any]
    renamed_splits: Mapping[str, str] = field(default_factory=dict)
    notes: Sequence[str] = ()
    tags: Sequence[str] = ("tool-use",)


def _scalar(value: Any) -> str:
    """A JSON scalar as YAML: numbers, true/false/null as JSON writes them, a text in double
    quotes with every character outside printable ASCII escaped (\\uXXXX, and \\UXXXXXXXX
    beyond the BMP, which YAML readers decode whole where JSON's surrogate pairs come back as
    two halves), so no character of a stored text can end or turn the YAML."""
    if isinstance(value, float):
        # YAML 1.1 (PyYAML, the Hub's reader) reads 1e-05 as a text: a float needs its dot
        number = json.dumps(value)
        mantissa, e, exponent = number.partition("e")
        return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else number
    if not isinstance(value, str):
        return json.dumps(value)
    text = json.dumps(value, ensure_ascii=False)
    return "".join(ch if " " <= ch <= "~" else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def yaml_lines(value: Any, indent: int = 0) -> list[str]:
    """`value` (dicts, lists and JSON scalars) in YAML's block style, every scalar quoted."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, (Mapping, list, tuple)) and item:
                lines.append(f"{pad}{_scalar(str(key))}:")
                lines.extend(yaml_lines(item, indent + 2))
            else:
                lines.append(f"{pad}{_scalar(str(key))}: {_flow(item)}")
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, (Mapping, list, tuple)) and item:
                inner = yaml_lines(item, indent + 2)
                lines.append(f"{pad}- {inner[0].lstrip()}")
                lines.extend(inner[1:])
            else:
                lines.append(f"{pad}- {_flow(item)}")
    else:
        lines.append(f"{pad}{_flow(value)}")
    return lines


def _flow(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, (list, tuple)):
        return "[]"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return _scalar(value)
    return _scalar(str(value))


def card_header(card: CardText, configs: Sequence[Config]) -> dict[str, Any]:
    """The YAML header's fields, as the Hub reads them."""
    written = [c for c in configs if c.split_rows]
    return {
        "pretty_name": card.pretty_name,
        "license": card.license,
        "tags": list(card.tags),
        "configs": [
            {
                "config_name": c.name,
                "data_files": [
                    {"split": split, "path": f"{c.folder}/{split}-*"} for split in c.split_rows
                ],
            }
            for c in written
        ],
        "dataset_info": [
            {
                "config_name": c.name,
                "features": [{"name": col.name, **FEATURES[col.kind]} for col in c.columns],
                "splits": [{"name": s, "num_examples": n} for s, n in c.split_rows.items()],
            }
            for c in written
        ],
        "provenance": dict(card.provenance),
    }


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def card_text(card: CardText, configs: Sequence[Config]) -> str:
    """The whole README.md: the YAML header between `---` lines, then the body."""
    lines = ["---", *yaml_lines(card_header(card, configs)), "---", ""]
    lines += [f"# {_cell(card.pretty_name)}", "", card.summary, ""]
    lines += ["## Provenance", ""]
    lines += [f"- **{_cell(k)}**: {_cell(json_text(v))}" for k, v in card.provenance.items()]
    lines += ["", "## Files and columns", ""]
    for c in configs:
        if not c.split_rows:
            continue
        splits = ", ".join(f"`{s}` ({n} rows)" for s, n in c.split_rows.items())
        lines += [f"Config `{c.name}`, in `{c.folder}/`: {splits}.", ""]
        lines += ["| column | type | what it holds |", "|---|---|---|"]
        lines += [
            f"| `{_cell(col.name)}` | {'JSON text' if col.kind == 'json' else col.kind} "
            f"| {_cell(col.about)} |"
            for col in c.columns
        ]
        lines.append("")
    lines += [
        "A JSON column holds the value's JSON text (`json.loads` gives it back; empty where "
        "the value is null), because its shape varies from row to row.",
        "",
    ]
    if card.renamed_splits:
        lines += ["## Split names", "", "Split names as written, for names `datasets` refuses:", ""]
        lines += [f"- `{_cell(a)}` is written as `{b}`" for a, b in card.renamed_splits.items()]
        lines.append("")
    for note in card.notes:
        if note:
            lines += [note, ""]
    lines += [
        "## Use",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        'ds = load_dataset("parquet", data_dir="THIS_FOLDER")',
        '# or, through the configs above: load_dataset("THIS_FOLDER", "default")',
        "```",
        "",
        "Pushing it to the Hugging Face Hub is yours to do (a token with write access):",
        "",
        "```sh",
        "huggingface-cli upload YOUR_NAME/DATASET_NAME THIS_FOLDER . --repo-type dataset",
        "```",
        "",
    ]
    return "\n".join(lines)


# --- provenance ---------------------------------------------------------------------------------


@functools.cache
def platform_version() -> dict[str, str]:
    """The platform's version (pyproject) and, in a git checkout, its commit."""
    root = Path(__file__).resolve().parent.parent
    found: dict[str, str] = {"platform": "toolevals"}
    try:
        text = (root / "pyproject.toml").read_text("utf-8")
        if match := re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE):
            found["version"] = match.group(1)
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        if re.fullmatch(r"[0-9a-f]{40}", commit):
            found["commit"] = commit
    except (OSError, subprocess.SubprocessError):
        pass
    return found


def exported_at() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


# --- the folder as a download -------------------------------------------------------------------

ZIP_BLOCK_BYTES = 256 * 1024


class _Chunks:
    """A write-only stream that keeps what is written until taken (zipfile writes to it as to
    an unseekable file: sizes in data descriptors after each member)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        return data


def zip_chunks(folder: Path, *, root: str, remove: bool = False) -> Iterator[bytes]:
    """The folder as a zip, in blocks of about ZIP_BLOCK_BYTES as it is read (flat memory),
    its files under `root/`; Parquet files stored as they are (already compressed), the card
    deflated. `remove`: the folder is deleted once the zip is read, or abandoned."""
    try:
        out = _Chunks()
        with zipfile.ZipFile(out, "w") as archive:  # type: ignore[arg-type]
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                name = f"{root}/{path.relative_to(folder).as_posix()}"
                method = zipfile.ZIP_STORED if path.suffix == ".parquet" else zipfile.ZIP_DEFLATED
                info = zipfile.ZipInfo.from_file(path, name)
                info.compress_type = method
                with path.open("rb") as source, archive.open(info, "w") as target:
                    while block := source.read(ZIP_BLOCK_BYTES):
                        target.write(block)
                        if out.size >= ZIP_BLOCK_BYTES:
                            yield out.take()
        yield out.take()
    finally:
        if remove:
            shutil.rmtree(folder, ignore_errors=True)


def safe_name(text: str, fallback: str) -> str:
    """A file name's stem from a user's text: letters, digits, -, _ and . only."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in text)
    return safe.strip("_.") or fallback


def folder_zip_response(write: Callable[[Path], Any], name: str) -> StreamingHttpResponse:
    """`write(folder)` into a new temporary folder, then that folder streamed as `name`.zip
    and removed once sent. What `write` raises is raised here, the folder removed."""
    folder = Path(tempfile.mkdtemp(prefix="hf-export-"))
    try:
        write(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    response = StreamingHttpResponse(
        zip_chunks(folder, root=name, remove=True), content_type="application/zip"
    )
    response["Content-Disposition"] = f'attachment; filename="{name}.zip"'
    return response

"""Reading a Hugging Face dataset folder back with the real `datasets` package (a test
dependency only: the platform writes the folders with pyarrow and never imports it), offline,
its cache under the test's own folder."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import datasets
import yaml


def load(folder: Path, cache: Path, **kwargs: Any) -> datasets.DatasetDict:
    """The folder as `datasets.load_dataset("parquet", data_dir=...)` reads it."""
    return datasets.load_dataset("parquet", data_dir=str(folder), cache_dir=str(cache), **kwargs)


def load_by_card(folder: Path, cache: Path, config: str = "default") -> datasets.DatasetDict:
    """The folder as `load_dataset(FOLDER, config)` reads it: through the card's configs."""
    return datasets.load_dataset(str(folder), config, cache_dir=str(cache))


def card(folder: Path) -> tuple[dict[str, Any], str]:
    """The card's YAML header (parsed) and its body."""
    text = (folder / "README.md").read_text("utf-8")
    match = re.fullmatch(r"---\n(.*?)\n---\n(.*)", text, re.DOTALL)
    assert match, text[:200]
    return yaml.safe_load(match.group(1)), match.group(2)


def features_yaml(dataset: datasets.Dataset) -> list[dict[str, Any]]:
    """The features as `datasets` writes them in a card (what the card must declare)."""
    return dataset.features._to_yaml_list()


def decoded(row: dict[str, Any], json_columns: set[str]) -> dict[str, Any]:
    """A row with its JSON columns read back as values."""
    return {
        k: (json.loads(v) if k in json_columns and v is not None else v) for k, v in row.items()
    }

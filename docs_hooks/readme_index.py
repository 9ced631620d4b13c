"""MkDocs hook: the site's home page is the README, its links made relative to docs/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent.parent / "README.md"


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri != "index.md":
        return markdown
    text = README.read_text("utf-8")
    text = text.replace("](docs/", "](")
    # ARCHITECTURE.md lives beside the README, outside the site: name it without a link.
    return re.sub(r"\[([^\]]+)\]\(ARCHITECTURE\.md\)", r"\1 (`ARCHITECTURE.md`)", text)

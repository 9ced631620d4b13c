"""Text embeddings for suites that build candidate lists by similarity (MetaTool's similar tools).

`local_embed` is the platform's default embedder: no model, no download, no network. A text
becomes hashed bag-of-features counts (lower-cased words without common stop words, word
bigrams, and character 3- to 5-grams inside words), sub-linearly weighted, projected onto a
fixed number of dimensions by a stable hash (CRC-32, so every process and machine agrees; the
built-in `hash()` is salted per process) and L2-normalised. It captures shared vocabulary and
word forms, not meaning: candidate lists built with it are lexical neighbours, a stand-in for
the paper's text-embedding-ada-002. A run can pass an OpenAI-compatible /v1/embeddings client
instead; both have the same shape, `texts -> list of unit vectors`.

The cosine helpers accept any embedder's vectors (they re-normalise) and break ties by position,
so that the same vectors always give the same neighbours.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

import numpy as np

DIMENSIONS = 512
# Similarities are rounded before ranking: BLAS may sum in a different order on another machine,
# and a last-bit difference must not reorder two tools that are equally close.
RANK_DIGITS = 9

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# Words that carry no topic; without IDF (which would make a text's vector depend on the batch
# it arrives in) they would otherwise dominate every description.
_STOP = frozenset(
    re.findall(
        r"\S+",
        """a an and are as at be by can for from has have how i in into is it its of on or our
        that the their them then there these this to was we what when where which who will
        with you your""",
    )
)
# Character n-grams are many per word; this keeps their total weight comparable to the words'.
_CHAR_WEIGHT = 0.25
_BIGRAM_WEIGHT = 0.5


@lru_cache(maxsize=1 << 16)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    """The feature's dimension and sign (signed hashing keeps collisions unbiased)."""
    code = zlib.crc32(feature.encode("utf-8"))
    return code % dimensions, (1.0 if code & 0x80000000 else -1.0)


def _features(text: str) -> Counter[str]:
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    counts: Counter[str] = Counter()
    for word in words:
        counts["w:" + word] += 1
        padded = f"<{word}>"
        for size in (3, 4, 5):
            for start in range(len(padded) - size + 1):
                counts["c:" + padded[start : start + size]] += 1
    for left, right in pairwise(words):
        counts[f"b:{left} {right}"] += 1
    return counts


def _weight(feature: str) -> float:
    kind = feature[0]
    if kind == "c":
        return _CHAR_WEIGHT
    if kind == "b":
        return _BIGRAM_WEIGHT
    return 1.0


def local_embed(texts: Sequence[str], dimensions: int = DIMENSIONS) -> list[list[float]]:
    """One unit vector per text (all zeros for a text with no word at all). Deterministic: the
    same text gives the same vector in any process, alone or in any batch."""
    if dimensions < 1:
        raise ValueError(f"dimensions must be positive, got {dimensions}")
    matrix = np.zeros((len(texts), dimensions), dtype=np.float64)
    for row, text in enumerate(texts):
        for feature, count in _features(text).items():
            index, sign = _slot(feature, dimensions)
            matrix[row, index] += sign * _weight(feature) * (1.0 + math.log(count))
    rows: list[list[float]] = unit_rows(matrix).tolist()
    return rows


def unit_rows(vectors: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """The vectors as a float matrix with unit rows (zero rows stay zero)."""
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"expected a list of vectors, got an array of shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def cosine_matrix(vectors: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """Pairwise cosine similarities, rounded to RANK_DIGITS."""
    matrix = unit_rows(vectors)
    similarities: np.ndarray = np.round(matrix @ matrix.T, RANK_DIGITS)
    return similarities


def rank_by_similarity(similarities: Sequence[float] | np.ndarray) -> list[int]:
    """Indices from most to least similar; equal similarities keep index order."""
    values = np.asarray(similarities, dtype=np.float64)
    # lexsort sorts by the last key first: similarity descending, then index ascending.
    order: list[int] = np.lexsort((np.arange(len(values)), -values)).tolist()
    return order


def cosine_top_k(
    query: Sequence[float],
    vectors: Sequence[Sequence[float]] | np.ndarray,
    k: int,
    *,
    exclude: Sequence[int] = (),
) -> list[tuple[int, float]]:
    """The k rows of `vectors` most similar to `query`, as (index, cosine), best first;
    indices in `exclude` are skipped (e.g. the query's own row)."""
    if k <= 0:
        return []
    matrix = unit_rows(vectors)
    target = unit_rows([query])[0]
    similarities = np.round(matrix @ target, RANK_DIGITS)
    skip = set(exclude)
    ranked = [i for i in rank_by_similarity(similarities) if i not in skip]
    return [(i, float(similarities[i])) for i in ranked[:k]]


def nearest_neighbours(vectors: Sequence[Sequence[float]] | np.ndarray, k: int) -> list[list[int]]:
    """For each row, the indices of its k most similar other rows, best first."""
    similarities = cosine_matrix(vectors)
    result = []
    for row in range(len(similarities)):
        ranked = [i for i in rank_by_similarity(similarities[row]) if i != row]
        result.append(ranked[: max(k, 0)])
    return result

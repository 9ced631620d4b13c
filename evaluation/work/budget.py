"""Tokens, cost and budget: pure arithmetic, shared by the engine (which stops at a budget) and
the pages (which show what work spent).

Tokens are the server's own counts (evaluation.work.caller.token_counts), summed over the calls
an item made; a call answered from the response cache costs nothing. Cost is per million
tokens at the endpoint's prices: the prompt tokens the provider's prompt cache served (cached)
at the cached price if the endpoint has one, else at the input price; the other prompt tokens
at the input price; completion tokens at the output price.

A budget is one number. When the endpoint has prices it is a cost in the endpoint's currency;
when it has none it counts tokens (prompt + completion). Work stops starting items when the
next one would pass it (see `Spending.admits`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Tokens:
    prompt: int = 0
    completion: int = 0
    cached: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.prompt + other.prompt,
            self.completion + other.completion,
            self.cached + other.cached,
        )

    @property
    def total(self) -> int:
        return self.prompt + self.completion

    @classmethod
    def of_usage(cls, usage: Any) -> Tokens:
        """From an item's usage (ItemCalls.usage): 0 for what it does not say."""
        if not isinstance(usage, dict):
            return cls()

        def count(name: str) -> int:
            value = usage.get(name)
            return value if isinstance(value, int) and value > 0 else 0

        return cls(count("prompt_tokens"), count("completion_tokens"), count("cached_tokens"))


@dataclass(frozen=True)
class Prices:
    """Per million tokens."""

    input: Decimal
    output: Decimal
    cached: Decimal | None = None

    @classmethod
    def of(cls, endpoint: Any) -> Prices | None:
        """An endpoint's prices; None unless it has both an input and an output price."""
        if endpoint is None or endpoint.price_in is None or endpoint.price_out is None:
            return None
        return cls(endpoint.price_in, endpoint.price_out, endpoint.price_cached)

    def cost(self, tokens: Tokens) -> Decimal:
        cached = min(tokens.cached, tokens.prompt)
        cached_price = self.input if self.cached is None else self.cached
        return (
            (tokens.prompt - cached) * self.input
            + cached * cached_price
            + tokens.completion * self.output
        ) / MILLION


def spent(tokens: Tokens, prices: Prices | None) -> Decimal:
    """What a budget counts: the cost at these prices, or the tokens when there are none."""
    return prices.cost(tokens) if prices is not None else Decimal(tokens.total)


def budget_unit(prices: Prices | None) -> str:
    return "cost" if prices is not None else "tokens"


@dataclass
class Spending:
    """What one execution knows of its parent's spending: what was spent before it started (and
    by how many settled items), plus what its own items spent since, and how many of its items
    are being answered."""

    limit: Decimal
    prices: Prices | None
    tokens: Tokens = Tokens()
    answered: int = 0
    in_flight: int = 0

    def add(self, tokens: Tokens) -> None:
        self.tokens = self.tokens + tokens
        self.answered += 1

    @property
    def spent(self) -> Decimal:
        return spent(self.tokens, self.prices)

    def admits(self) -> bool | None:
        """Whether one more item may start: True; False when it would pass the budget (what an
        item costs is guessed as the mean of the items answered so far, answers from the
        response cache included, and counted for each item being answered); None when that
        cannot be told until an item being answered is done."""
        spent_now = self.spent
        if spent_now >= self.limit:
            return False
        if not self.answered:
            # Nothing to guess from: one item at a time until one has been answered.
            return True if not self.in_flight else None
        mean = spent_now / self.answered
        if spent_now + (self.in_flight + 1) * mean <= self.limit:
            return True
        return None if self.in_flight else False

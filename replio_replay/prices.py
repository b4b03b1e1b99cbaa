"""Pure: what tokens cost. The price table (USD per million tokens per `PROVIDER:MODEL`), its
small dated default, a fixture's cost from its prompt and completion token counts, and amounts of
USD as every message and report writes them (`dollars`).

A price is only ever looked up, never guessed: a model with no entry has no cost (the results
leave `cost` out), never a cost of 0. Cached prompt tokens cost `cached_input` when the entry
has it and the provider reported them, else `input` like the rest of the prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_PRICES", "PRICES_AS_OF", "Price", "PriceKey", "Prices", "cost", "dollars", "price_for",
           "price_table"]


class Price(BaseModel):
    """One model's list price, USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, allow_inf_nan=False)

    input: float = Field(ge=0, le=10_000, description="USD per million prompt tokens.")
    output: float = Field(ge=0, le=10_000, description="USD per million completion tokens.")
    cached_input: float | None = Field(
        None, ge=0, le=10_000, description="USD per million cached prompt tokens (default: `input`).")


#: `PROVIDER:MODEL` -> its price.
Prices = Mapping[str, Price]
#: A price table's key, as the config and tool-set files spell it: `PROVIDER:MODEL`.
PriceKey = Annotated[str, Field(pattern=r"^[^:]+:.+$")]

#: When the default table below was entered; list prices change: check them, and set your own
#: under `"prices"` in .replio/config.json (or a tool-set file), which win over these.
PRICES_AS_OF = "2026-12-04"

DEFAULT_PRICES: dict[str, Price] = {
    "openai:gpt-4o": Price(input=2.50, output=10.00, cached_input=1.25),
    "openai:gpt-4o-mini": Price(input=0.15, output=0.60, cached_input=0.075),
    "openai:gpt-4.1": Price(input=2.00, output=8.00, cached_input=0.50),
    "openai:gpt-4.1-mini": Price(input=0.40, output=1.60, cached_input=0.10),
    "openai:gpt-4.1-nano": Price(input=0.10, output=0.40, cached_input=0.025),
    "anthropic:claude-3-5-haiku-latest": Price(input=0.80, output=4.00, cached_input=0.08),
    "anthropic:claude-sonnet-4-0": Price(input=3.00, output=15.00, cached_input=0.30),
    "anthropic:claude-opus-4-0": Price(input=15.00, output=75.00, cached_input=1.50),
}


def price_table(*tables: Prices | None) -> dict[str, Price]:
    """The defaults overlaid by each of `tables` in turn (later ones win, entry by entry)."""
    merged = dict(DEFAULT_PRICES)
    for table in tables:
        merged.update(table or {})
    return merged


def price_for(provider: str, model: str, *tables: Prices) -> Price | None:
    """The price of `provider:model` in the first of `tables` that has one; None when none has."""
    key = f"{provider}:{model}"
    return next((table[key] for table in tables if key in table), None)


def cost(price: Price, prompt: int, completion: int, cached: int = 0) -> float:
    """USD for `prompt` tokens (of which `cached` were cached) and `completion` tokens, at `price`;
    rounded to a millionth of a dollar, so sums read as they were computed."""
    cached = min(cached, prompt)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    usd = ((prompt - cached) * price.input + cached * cached_rate + completion * price.output) / 1_000_000
    return round(usd, 6)


def dollars(usd: float) -> str:
    """`usd` as every message and report writes an amount (without the `$`): at least two decimals,
    and as many more as it has, so a fraction of a cent is never shown as `0.00` (`0.000042`).
    Costs are counted to a millionth of a dollar; float noise past that (a sum's) is not shown, an
    amount given finer (a limit) is shown whole."""
    counted = round(usd, 6)
    text = f"{counted:.6f}".rstrip("0") if abs(counted - usd) < 1e-12 else format(Decimal(repr(usd)), "f")
    whole, _, decimals = text.partition(".")
    return f"{whole}.{decimals.ljust(2, '0')}"

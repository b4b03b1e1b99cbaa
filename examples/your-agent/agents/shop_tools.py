"""The support desk's tools, shared by both agents: plain functions over orders.json in the
working directory (the fixture's worktree, where replio provisions the file)."""

from __future__ import annotations

import json
from pathlib import Path

RATES = {("EUR", "USD"): 1.09, ("USD", "EUR"): 0.92, ("GBP", "USD"): 1.27, ("USD", "GBP"): 0.79,
         ("EUR", "GBP"): 0.86, ("GBP", "EUR"): 1.16}


def _orders() -> dict:
    return json.loads(Path("orders.json").read_text(encoding="utf-8"))


def lookup_order(order_id: str) -> str:
    """Look up one order by its id (like A-1001): its status, items, total and currency."""
    order = _orders().get(order_id.strip().upper())
    if order is None:
        return f"Error: no order {order_id!r}"
    return json.dumps({"order_id": order_id.upper(), **order})


def list_orders(status: str) -> str:
    """List the ids of the customer's orders that have the given status: pending, shipped or delivered."""
    found = [oid for oid, order in _orders().items() if order["status"] == status.strip().lower()]
    return json.dumps(found)


def refund_order(order_id: str, reason: str) -> str:
    """Refund an order in full. Only for orders that were delivered damaged or never arrived."""
    order = _orders().get(order_id.strip().upper())
    if order is None:
        return f"Error: no order {order_id!r}"
    refunds = Path("refunds.json")
    done = json.loads(refunds.read_text(encoding="utf-8")) if refunds.exists() else []
    done.append({"order_id": order_id.upper(), "amount": order["total"], "reason": reason})
    refunds.write_text(json.dumps(done, indent=2), encoding="utf-8")
    return f"Refunded {order['total']} {order['currency']} for {order_id.upper()}."


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money between EUR, USD and GBP at today's rate."""
    rate = RATES.get((from_currency.upper(), to_currency.upper()))
    if rate is None:
        return f"Error: no rate from {from_currency} to {to_currency}"
    return json.dumps({"amount": amount, "converted": round(amount * rate, 2), "rate": rate})


TOOLS = [lookup_order, list_orders, refund_order, convert_currency]

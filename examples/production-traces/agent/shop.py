"""The support desk's tools: plain functions over the shop's orders (in memory, as a service's
database would be); each returns the text the model reads, an `Error: ...` when it cannot do it."""

from __future__ import annotations

import json

ORDERS = {
    "A-1001": {"status": "shipped", "items": ["desk lamp"], "total": 39.0, "currency": "EUR"},
    "A-1002": {"status": "delivered", "items": ["office chair"], "total": 120.0, "currency": "EUR"},
    "A-1003": {"status": "delivered", "items": ["ceramic mug", "teapot"], "total": 54.5, "currency": "EUR"},
    "A-1004": {"status": "pending", "items": ["monitor arm"], "total": 89.0, "currency": "EUR"},
    "A-1005": {"status": "pending", "items": ["keyboard"], "total": 65.0, "currency": "EUR"},
}
RATES = {("EUR", "USD"): 1.09, ("USD", "EUR"): 0.92, ("GBP", "USD"): 1.27, ("USD", "GBP"): 0.79,
         ("EUR", "GBP"): 0.86, ("GBP", "EUR"): 1.16}


def lookup_order(order_id: str) -> str:
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return f"Error: no order {order_id!r}"
    return json.dumps({"order_id": order_id.strip().upper(), **order})


def list_orders(status: str) -> str:
    return json.dumps([oid for oid, order in ORDERS.items() if order["status"] == status.strip().lower()])


def refund_order(order_id: str, reason: str) -> str:
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return f"Error: no order {order_id!r}"
    return f"Refunded {order['total']} {order['currency']} for {order_id.strip().upper()}."


def cancel_order(order_id: str) -> str:
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return f"Error: no order {order_id!r}"
    if order["status"] != "pending":
        return f"Error: order {order_id.strip().upper()} is {order['status']}; only pending orders can be cancelled"
    return f"Cancelled {order_id.strip().upper()}."


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    rate = RATES.get((from_currency.upper(), to_currency.upper()))
    if rate is None:
        return f"Error: no rate from {from_currency} to {to_currency}"
    return json.dumps({"amount": amount, "converted": round(amount * rate, 2), "rate": rate})


FUNCTIONS = {f.__name__: f for f in (lookup_order, list_orders, refund_order, cancel_order, convert_currency)}


def call(name: str, arguments: str) -> str:
    """Run one call as the model asked for it; the model reads any failure as the result."""
    try:
        return str(FUNCTIONS[name](**json.loads(arguments or "{}")))
    except Exception as exc:  # the model sees what went wrong, as with any agent
        return f"Error: {type(exc).__name__}: {exc}"

"""A shop environment and a slugify tool as a project keeps them, written into a test's project."""

from __future__ import annotations

from pathlib import Path

SHOP = '''
from typing import Literal


class Shop:
    """A tiny shop: orders by id, each with a status."""

    def __init__(self, orders: dict, currency: str = "EUR") -> None:
        self.orders = orders
        self.currency = currency
        self.log: list = []
        self._calls = 0

    def get_order(self, order_id: str) -> dict:
        """Look up an order by its id."""
        self._calls += 1
        if order_id not in self.orders:
            raise KeyError(f"no order {order_id}")
        return self.orders[order_id]

    def cancel_order(self, order_id: str, reason: Literal["customer", "fraud"] = "customer") -> str:
        """Cancel an order.

        Only an open order can be cancelled.
        """
        order = self.get_order(order_id)
        if order["status"] != "open":
            raise ValueError(f"order {order_id} is {order['status']}, not open")
        order["status"] = "cancelled"
        self.log.append(f"cancelled {order_id} ({reason})")
        return f"Order {order_id} cancelled."

    def _helper(self) -> None:
        pass
'''

SLUG = '''
def slugify(text: str, sep: str = "-") -> str:
    """Turn a title into a URL slug."""
    return sep.join(text.lower().split())
'''

ORDERS = {"A-1042": {"status": "open", "total": 30}, "A-1043": {"status": "shipped", "total": 12}}


def write_module(path: Path, source: str = SHOP) -> Path:
    """Write `source` as the Python file `path`, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return path


def shop_decl(python: str = "envs/shop.py:Shop", **more: object) -> dict[str, object]:
    """An environment declaration of the shop with `ORDERS` as its initial state."""
    return {"python": python, "initial": {"orders": ORDERS}, **more}

"""A small online shop: orders a customer can look up, cancel, re-address and return.

The state a conversation leaves is `orders` (and `refunds`); fixtures judge it with `state`.
"""

from __future__ import annotations


class Shop:
    """The shop's order desk, as an agent's tools see it."""

    def __init__(self, orders: dict, customers: dict | None = None) -> None:
        self.orders = orders
        self.customers = customers or {}
        self.refunds: list[dict] = []
        self._reasons: dict[str, str] = {}  # free text: kept out of the judged state

    def _order(self, order_id: str) -> dict:
        order = self.orders.get(order_id.strip().upper())
        if order is None:
            raise ValueError(f"no order {order_id!r}; order ids look like A-1042")
        return order

    def find_orders(self, email: str) -> list[dict]:
        """List the orders placed with a customer's email address.

        Args:
            email: The customer's email address.
        """
        email = email.strip().lower()
        return [{"order_id": oid, "status": o["status"], "items": o["items"]}
                for oid, o in self.orders.items() if o["email"] == email]

    def get_order(self, order_id: str) -> dict:
        """Show one order: its items, status, total and shipping address.

        Args:
            order_id: The order's id, such as A-1042.
        """
        return {"order_id": order_id.strip().upper(), **self._order(order_id)}

    def cancel_order(self, order_id: str, reason: str) -> str:
        """Cancel an order that has not shipped yet. Shipped orders cannot be cancelled: return them instead.

        Args:
            order_id: The order's id, such as A-1042.
            reason: Why the customer cancels, in their words.
        """
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError(f"order {order_id} is {order['status']}; only pending orders can be cancelled")
        order["status"] = "cancelled"
        self._reasons[order_id.strip().upper()] = reason
        self.refunds.append({"order_id": order_id.strip().upper(), "amount": order["total"]})
        return f"order {order_id} cancelled; {order['total']:.2f} will be refunded"

    def change_address(self, order_id: str, address: str) -> str:
        """Change the shipping address of an order that has not shipped yet.

        Args:
            order_id: The order's id, such as A-1042.
            address: The new shipping address, on one line.
        """
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError(f"order {order_id} is {order['status']}; the address can no longer change")
        order["address"] = address.strip()
        return f"order {order_id} will ship to {order['address']}"

    def return_item(self, order_id: str, item: str) -> str:
        """Start the return of one item of a delivered order; the refund follows when it arrives.

        Args:
            order_id: The order's id, such as A-1042.
            item: The item's name as the order lists it.
        """
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError(f"order {order_id} is {order['status']}; only delivered orders can be returned")
        if item not in order["items"]:
            raise ValueError(f"order {order_id} has no item {item!r}; it has {', '.join(order['items'])}")
        order.setdefault("returns", []).append(item)
        return f"return of {item!r} from {order_id} started"

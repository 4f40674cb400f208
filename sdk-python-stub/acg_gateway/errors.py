"""Errors raised by the Python stub client. Every one derives from :class:`AcgError`."""

from __future__ import annotations

from typing import Any, Optional


class AcgError(Exception):
    """Base class of every error this client raises."""


class GatewayError(AcgError):
    """The gateway answered an RFC 9457 problem (``application/problem+json``).

    Attributes: ``status`` (HTTP status), ``title``, ``detail``, ``type``, ``errors`` (list of
    ``{"path": [...], "message": ...}`` for 400 bad input), ``problem`` (the whole body), and for
    a failure after payment ``execution_id`` and ``refund`` (``{"status", "amount"}``, amount in
    USDC base units).
    """

    def __init__(self, problem: dict[str, Any]):
        self.problem = problem
        self.status: int = problem.get("status", 0)
        self.title: str = problem.get("title", "")
        self.detail: str = problem.get("detail", "")
        self.type: str = problem.get("type", "about:blank")
        self.errors: Optional[list[dict[str, Any]]] = problem.get("errors")
        self.execution_id: Optional[str] = problem.get("execution_id")
        self.refund: Optional[dict[str, Any]] = problem.get("refund")
        super().__init__(f"{self.status} {self.title}: {self.detail}")


class PaymentAlreadyUsed(GatewayError):
    """HTTP 409 ``payment_already_used``: the payment sent was settled already and the gateway did
    not see proof that this request comes from its payer (the x402 ``payment-identifier`` id it was
    first sent with, or the payer's bearer token), so it answered the receipt only, never the
    result (README "Resends and the payment-identifier").

    Receipt attributes: ``execution_id`` (``exe_...``; ``operation_id`` for other operations),
    ``payment`` (``{"tx_hash": "0x...", "amount": "<integer USDC base units>"}``), ``result_url``
    (``{base}/api/v1/executions/{id}``: the payer reads the result there with its bearer token,
    :meth:`GatewayClient.get_execution`), and ``payment_identifier`` (the id this client sent, or
    None). Nothing more was charged.
    """

    def __init__(self, problem: dict[str, Any], payment_identifier: Optional[str] = None):
        super().__init__(problem)
        self.operation_id: Optional[str] = problem.get("operation_id") or problem.get("execution_id")
        payment = problem.get("payment")
        self.payment: dict[str, Any] = payment if isinstance(payment, dict) else {}
        self.result_url: Optional[str] = problem.get("result_url")
        self.payment_identifier = payment_identifier


class UnknownCapability(GatewayError):
    """The capability id is not in ``/registry`` (checked before executing), or the gateway said 404."""

    def __init__(self, capability_id: str, available: Optional[list[str]] = None, problem: Optional[dict[str, Any]] = None):
        self.capability_id = capability_id
        self.available = available or []
        super().__init__(
            problem
            or {
                "type": "about:blank",
                "title": "Not Found",
                "status": 404,
                "detail": f'Unknown capability "{capability_id}": it is not listed in the gateway\'s /registry.',
            }
        )


class PaymentRequired(AcgError):
    """HTTP 402: the capability costs money and no ``payment_signer`` was given, or the gateway
    refused the payment that was sent (then ``reason`` says why and nothing was charged).

    ``payment_required`` is the decoded x402 v2 ``PAYMENT-REQUIRED`` header (dict with
    ``x402Version``, ``resource``, ``accepts``; ``accepts[i]["amount"]`` is an integer string of
    USDC base units); ``challenge`` is the JSON body (docs/spec-notes.md 2.9 fields + ``accepts``); ``amount``
    is the first requirement's amount as an int (base units).
    """

    status = 402

    def __init__(self, capability_id: str, payment_required: dict[str, Any], challenge: Any = None, reason: Optional[str] = None, refused: bool = False):
        self.capability_id = capability_id
        self.payment_required = payment_required
        self.challenge = challenge
        self.reason = reason
        accepts = payment_required.get("accepts") or [{}]
        amount = accepts[0].get("amount")
        self.amount: Optional[int] = int(amount) if isinstance(amount, str) and amount.isdigit() else None
        if refused:
            msg = f'The gateway refused the payment for "{capability_id}" ({reason or "invalid"}): {payment_required.get("error", "")}'
        else:
            msg = f'Payment required to execute "{capability_id}": pass payment_signer= to pay ({self.amount} USDC base units asked).'
        super().__init__(msg)


class SpendLimitExceeded(AcgError):
    """Raised before the signer is called when a payment would break a spend limit.

    ``limit`` is ``"per_call"`` or ``"total"``; ``amount``, ``limit_base_units`` and
    ``spent_base_units`` are ints in USDC base units. Nothing was signed or paid.
    """

    def __init__(self, limit: str, amount: int, limit_base_units: int, spent_base_units: int):
        self.limit = limit
        self.amount = amount
        self.limit_base_units = limit_base_units
        self.spent_base_units = spent_base_units
        super().__init__(
            f"Payment of {amount} base units exceeds the {limit} limit of {limit_base_units} base units "
            f"(spent so far: {spent_base_units}); nothing was paid."
        )


class PaymentTermsMismatch(AcgError):
    """No requirement of the 402 challenge matches the x402 terms ``/registry`` advertises for
    the capability (scheme ``exact``, network ``eip155:8453``, asset, payTo, amount not above the
    advertised price). Nothing was signed or paid. ``problems`` lists why each was rejected."""

    def __init__(self, capability_id: str, problems: list[str]):
        self.capability_id = capability_id
        self.problems = problems
        super().__init__(f'The payment challenge for "{capability_id}" does not match /registry: ' + "; ".join(problems))


class InvalidAmount(AcgError, ValueError):
    """A USDC amount is not a non-negative decimal with at most 6 decimals."""


class GatewayRequestError(AcgError):
    """The gateway could not be reached or did not answer JSON. ``payment_outcome`` is
    ``"unknown"`` when a signed payment was sent and no answer came back, else ``"none"``."""

    def __init__(self, url: str, message: str, payment_outcome: str = "none", status: Optional[int] = None):
        self.url = url
        self.status = status
        self.payment_outcome = payment_outcome
        super().__init__(f"{message} ({url})")

"""The gateway client (stdlib only: urllib, json, base64, re, uuid)."""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
import urllib.error
import urllib.request
import uuid
from typing import Any, Callable, Mapping, Optional, Union

from .errors import (
    GatewayError,
    GatewayRequestError,
    InvalidAmount,
    PaymentAlreadyUsed,
    PaymentRequired,
    PaymentTermsMismatch,
    SpendLimitExceeded,
    UnknownCapability,
)

#: CAIP-2 id of the payment chain, Base (docs/spec-notes.md 2.9).
PAYMENT_NETWORK = "eip155:8453"

USDC_DECIMALS = 6
_DECIMAL = re.compile(r"^(0|[1-9]\d*)(?:\.(\d+))?$")

#: A transport: (method, url, headers, body bytes or None, timeout seconds) -> (status, headers with
#: lower-case names, body bytes). Raises OSError (urllib.error.URLError included) when unreachable.
Transport = Callable[[str, str, Mapping[str, str], Optional[bytes], float], "tuple[int, dict[str, str], bytes]"]

#: A payment signer: takes the x402 v2 PaymentRequired dict (``accepts`` narrowed to the one
#: requirement the client vetted) and returns the base64 value of the PAYMENT-SIGNATURE header,
#: i.e. base64(JSON of an x402 v2 PaymentPayload with an EIP-3009 authorization signed with EIP-712).
PaymentSigner = Callable[[dict], str]

_REASONS = {
    400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
    409: "Conflict", 413: "Content Too Large", 422: "Unprocessable Content", 429: "Too Many Requests",
    500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
}


def parse_usdc(value: Union[str, int, float], label: str = "amount") -> int:
    """Decimal USDC -> integer base units: ``"0.001"`` -> ``1000``, ``"1"`` -> ``1000000``.

    Accepts a decimal string, an int, or a float (via ``repr``); at most 6 decimals, never negative.
    Raises :class:`InvalidAmount` otherwise (``"-1"``, ``"1e-3"``, ``"0.0000001"``).
    """
    if isinstance(value, bool):
        raise InvalidAmount(f"Invalid {label} {value!r}")
    text = repr(value) if isinstance(value, float) else str(value)
    m = _DECIMAL.match(text)
    if not m:
        raise InvalidAmount(f"Invalid {label} {value!r}: not a non-negative decimal USDC amount")
    fraction = (m.group(2) or "").rstrip("0")
    if len(fraction) > USDC_DECIMALS:
        raise InvalidAmount(f"Invalid {label} {value!r}: more than {USDC_DECIMALS} decimals")
    return int(m.group(1)) * 10**USDC_DECIMALS + int(fraction.ljust(USDC_DECIMALS, "0") or "0")


def format_usdc(base_units: int) -> str:
    """Integer base units -> decimal USDC string without trailing zeros: ``1000`` -> ``"0.001"``."""
    if base_units < 0:
        raise InvalidAmount(f"Invalid amount {base_units}: negative")
    whole, frac = divmod(base_units, 10**USDC_DECIMALS)
    frac_s = str(frac).rjust(USDC_DECIMALS, "0").rstrip("0")
    return f"{whole}.{frac_s}" if frac_s else str(whole)


def _b64decode(text: str) -> bytes:
    text = text.strip()
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return base64.urlsafe_b64decode(padded)


def _is_payment_required(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and v.get("x402Version") == 2
        and isinstance(v.get("accepts"), list)
        and all(isinstance(a, dict) for a in v["accepts"])
        and isinstance(v.get("resource"), dict)
    )


def decode_payment_required(header: Optional[str], body: Any = None) -> Optional[dict]:
    """The x402 v2 PaymentRequired of a 402 answer: the base64-JSON ``PAYMENT-REQUIRED`` header,
    else the JSON body when it carries ``x402Version`` 2, ``resource`` and ``accepts``. None when
    neither is usable."""
    if header:
        try:
            decoded = json.loads(_b64decode(header).decode("utf-8"))
            if _is_payment_required(decoded):
                return decoded
        except (ValueError, binascii.Error, UnicodeDecodeError):
            pass
    if _is_payment_required(body):
        keys = ("x402Version", "error", "resource", "accepts", "extensions")
        return {k: body[k] for k in keys if k in body}
    return None


def parse_problem(status: int, body: bytes) -> dict:
    """An error answer as RFC 9457 problem details. A JSON object body is kept (extension members
    such as ``execution_id`` and ``refund`` included) with ``status`` taken from HTTP; anything
    else becomes ``{"type": "about:blank", "title", "status", "detail": <first 200 chars>}``."""
    title = _REASONS.get(status, f"HTTP {status}")
    try:
        parsed = json.loads(body.decode("utf-8")) if body else None
    except (ValueError, UnicodeDecodeError):
        parsed = None
    if isinstance(parsed, dict):
        problem = dict(parsed)
        problem["type"] = parsed.get("type") or "about:blank"
        problem["title"] = parsed.get("title") or title
        problem["status"] = status
        detail = parsed.get("detail", parsed.get("message", parsed.get("error", "")))
        problem["detail"] = detail if isinstance(detail, str) else ""
        return problem
    text = " ".join(body.decode("utf-8", "replace").split())[:200]
    return {"type": "about:blank", "title": title, "status": status, "detail": text}


#: Name of the x402 ``payment-identifier`` extension in ``extensions`` (x402
#: ``specs/extensions/payment_identifier.md``; ``@x402/extensions/payment-identifier``).
PAYMENT_IDENTIFIER = "payment-identifier"
_PAYMENT_ID = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


def new_payment_identifier() -> str:
    """A fresh payment identifier: ``"pay_"`` + 32 lower-case hex digits (a random UUID4 without
    dashes), as the JS SDK makes it; within the extension's 16-128 characters of ``[A-Za-z0-9_-]``."""
    return "pay_" + uuid.uuid4().hex


def with_payment_identifier(extensions: Any, payment_id: Optional[str] = None) -> Any:
    """The 402's ``extensions`` with ``{"payment-identifier": {...declared, "info": {...declared
    info, "id": payment_id}}}`` when the server declares that extension (the gateway does on every
    402); ``extensions`` unchanged otherwise. ``payment_id`` defaults to :func:`new_payment_identifier`;
    raises ValueError when it is not 16-128 characters of ``[A-Za-z0-9_-]``.

    The id never goes on-chain, so a re-send of the same signed payment carrying it proves it comes
    from the payer (README "Resends and the payment-identifier").
    """
    declared = extensions.get(PAYMENT_IDENTIFIER) if isinstance(extensions, dict) else None
    if not isinstance(declared, dict):
        return extensions
    payment_id = payment_id or new_payment_identifier()
    if not _PAYMENT_ID.match(payment_id):
        raise ValueError("a payment identifier is 16 to 128 characters of letters, digits, '-' and '_'")
    info = declared.get("info") if isinstance(declared.get("info"), dict) else {}
    return {**extensions, PAYMENT_IDENTIFIER: {**declared, "info": {**info, "id": payment_id}}}


def _payment_identifier_of(extensions: Any) -> Optional[str]:
    declared = extensions.get(PAYMENT_IDENTIFIER) if isinstance(extensions, dict) else None
    info = declared.get("info") if isinstance(declared, dict) else None
    payment_id = info.get("id") if isinstance(info, dict) else None
    return payment_id if isinstance(payment_id, str) else None


def _carry_payment_identifier(signature: str, extensions: Any) -> str:
    """The ``PAYMENT-SIGNATURE`` value ``signature`` with the client's payment-identifier in its
    PaymentPayload's ``extensions`` when the signer left it out (a signer that does not copy
    ``extensions``); extensions are not signed, so the authorization is untouched. A value that is
    not base64 JSON of an x402 v2 PaymentPayload is returned unchanged."""
    try:
        payload = json.loads(_b64decode(signature).decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return signature
    if not isinstance(payload, dict) or payload.get("x402Version") != 2:
        return signature
    if _payment_identifier_of(payload.get("extensions")) is not None:
        return signature
    mine = extensions.get(PAYMENT_IDENTIFIER) if isinstance(extensions, dict) else None
    theirs = payload.get("extensions") if isinstance(payload.get("extensions"), dict) else {}
    payload["extensions"] = {**theirs, PAYMENT_IDENTIFIER: mine}
    return base64.b64encode(json.dumps(payload, separators=(",", ":")).encode("utf-8")).decode("ascii")


def _advertised_price(capability: dict) -> Optional[int]:
    raw = (capability.get("x402") or {}).get("maxAmountRequired") or capability.get("price_base_units")
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


def select_requirement(capability: dict, payment_required: dict, network: str = PAYMENT_NETWORK) -> "tuple[dict, int]":
    """The first requirement of ``payment_required["accepts"]`` matching the x402 terms
    ``/registry`` advertises for ``capability`` (scheme ``exact``, ``network``, asset and payTo
    case-insensitive, integer amount not above the advertised price), with its amount (int, base
    units). Raises :class:`PaymentTermsMismatch`."""
    cid = capability.get("id", "?")
    terms = capability.get("x402")
    if not terms:
        raise PaymentTermsMismatch(cid, ["/registry advertises no x402 payment terms for this capability"])
    if payment_required.get("x402Version") != 2:
        raise PaymentTermsMismatch(cid, [f"x402Version {payment_required.get('x402Version')} is not 2"])
    ceiling = _advertised_price(capability)
    problems = []
    for i, r in enumerate(payment_required.get("accepts") or []):
        why = []
        if r.get("scheme") != "exact":
            why.append(f"scheme {r.get('scheme')!r} is not 'exact'")
        if r.get("network") != network:
            why.append(f"network {r.get('network')!r} is not {network}")
        elif terms.get("network") != network:
            why.append(f"the registry's network {terms.get('network')!r} is not {network}")
        if str(r.get("asset", "")).lower() != str(terms.get("asset", "")).lower():
            why.append(f"asset {r.get('asset')} differs from the registry's {terms.get('asset')}")
        if str(r.get("payTo", "")).lower() != str(terms.get("payTo", "")).lower():
            why.append(f"payTo {r.get('payTo')} differs from the registry's {terms.get('payTo')}")
        amount = r.get("amount")
        if not (isinstance(amount, str) and amount.isdigit()):
            why.append(f"amount {amount!r} is not an integer string")
        elif ceiling is not None and int(amount) > ceiling:
            why.append(f"amount {amount} is above the advertised price {ceiling}")
        if not why:
            return r, int(amount)
        problems.append(f"accepts[{i}]: " + "; ".join(why))
    raise PaymentTermsMismatch(cid, problems or ["the challenge has no accepts"])


def urllib_transport(method: str, url: str, headers: Mapping[str, str], body: Optional[bytes], timeout: float) -> "tuple[int, dict[str, str], bytes]":
    """The default transport (urllib). HTTP error statuses are returned, not raised."""
    req = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


class GatewayClient:
    """A client of one gateway: discovery from ``GET /registry`` and ``execute``.

    :param base_url: e.g. ``"http://127.0.0.1:8080"``.
    :param spend_limits: ``{"per_call_usdc": "0.01", "total_usdc": "0.05"}`` (decimal USDC);
        checked before the signer is called; the total counts payments made by this object.
    :param transport: see :data:`Transport` (default: urllib).
    :param registry_ttl: seconds the registry is cached (default 60).
    :param max_retries: re-sends of a paid request, with the SAME signed payment (its x402
        ``payment-identifier`` id included), after a network error (default 2); the gateway runs
        and charges one payment once, and answers the payer's re-send with the stored result.
    :param payment_signer: the default signer of :meth:`execute` (see :data:`PaymentSigner`), e.g.
        ``local_signer(private_key)`` from :mod:`acg_gateway.signer` (optional extras); without one
        a paid capability raises :class:`PaymentRequired`.
    """

    def __init__(
        self,
        base_url: str,
        *,
        spend_limits: Optional[Mapping[str, Union[str, int, float]]] = None,
        transport: Optional[Transport] = None,
        timeout: float = 30.0,
        registry_ttl: float = 60.0,
        max_retries: int = 2,
        network: str = PAYMENT_NETWORK,
        payment_signer: Optional[PaymentSigner] = None,
    ):
        if not re.match(r"^https?://", base_url or ""):
            raise ValueError('base_url must be an http(s) URL, e.g. "http://127.0.0.1:8080"')
        self.base_url = base_url.rstrip("/")
        limits = dict(spend_limits or {})
        self.per_call_limit = parse_usdc(limits["per_call_usdc"], "per_call_usdc") if "per_call_usdc" in limits else None
        self.total_limit = parse_usdc(limits["total_usdc"], "total_usdc") if "total_usdc" in limits else None
        self._transport = transport or urllib_transport
        self._timeout = timeout
        self._ttl = registry_ttl
        self._max_retries = max(0, max_retries)
        self._network = network
        self._payment_signer = payment_signer
        self._registry: Optional[dict] = None
        self._registry_at = 0.0
        self._spent = 0

    # -- discovery -------------------------------------------------------------------------------

    def _send(self, method: str, path: str, headers: Optional[Mapping[str, str]] = None, body: Optional[bytes] = None):
        url = self.base_url + path
        h = {"accept": "application/json", **(headers or {})}
        try:
            return self._transport(method, url, h, body, self._timeout)
        except OSError as e:
            raise GatewayRequestError(url, f"Could not reach the gateway: {e}") from e

    def _json(self, path: str, status: int, body: bytes) -> Any:
        try:
            return json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise GatewayRequestError(self.base_url + path, f"HTTP {status} without a JSON body", status=status) from None

    def registry(self, refresh: bool = False) -> dict:
        """The ``GET /registry`` document (cached ``registry_ttl`` seconds)."""
        if not refresh and self._registry is not None and time.monotonic() - self._registry_at < self._ttl:
            return self._registry
        status, _, body = self._send("GET", "/registry")
        if status >= 400:
            raise GatewayError(parse_problem(status, body))
        doc = self._json("/registry", status, body)
        if not isinstance(doc, dict) or not isinstance(doc.get("capabilities"), list):
            raise GatewayRequestError(self.base_url + "/registry", "the registry has no capabilities array", status=status)
        self._registry, self._registry_at = doc, time.monotonic()
        return doc

    def capabilities(self, refresh: bool = False) -> list:
        """Every capability entry of ``/registry`` (dicts with id, status, price, x402, schemas...)."""
        return self.registry(refresh)["capabilities"]

    def capability(self, capability_id: str, refresh: bool = False) -> dict:
        """One entry by id; refetches once when missing, then raises :class:`UnknownCapability`."""
        was_cached = self._registry is not None and not refresh
        caps = self.capabilities(refresh)
        found = next((c for c in caps if c.get("id") == capability_id), None)
        if found is None and was_cached:
            caps = self.capabilities(True)
            found = next((c for c in caps if c.get("id") == capability_id), None)
        if found is None:
            raise UnknownCapability(capability_id, [c.get("id") for c in caps])
        return found

    # -- execution -------------------------------------------------------------------------------

    def spent(self) -> "tuple[int, str]":
        """What this client paid: (integer USDC base units, decimal USDC string)."""
        return self._spent, format_usdc(self._spent)

    def _check_limits(self, amount: int) -> None:
        if self.per_call_limit is not None and amount > self.per_call_limit:
            raise SpendLimitExceeded("per_call", amount, self.per_call_limit, self._spent)
        if self.total_limit is not None and self._spent + amount > self.total_limit:
            raise SpendLimitExceeded("total", amount, self.total_limit, self._spent)

    def _raise_for(self, capability_id: str, status: int, body: bytes):
        problem = parse_problem(status, body)
        if status == 404 and "capabilit" in problem.get("detail", "").lower():
            raise UnknownCapability(capability_id, problem=problem)
        raise GatewayError(problem)

    def execute(
        self,
        capability_id: str,
        input: dict,
        payment_signer: Optional[PaymentSigner] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> dict:
        """``POST /api/v1/execute {capability_id, input}`` (docs/spec-notes.md 2.7).

        Returns ``{"execution_id", "status": "SUCCEEDED", "result", "payment": {"tx_hash",
        "amount"}}`` (amount: integer string, USDC base units).

        On HTTP 402: without ``payment_signer`` (here or the client's) raises :class:`PaymentRequired` holding the decoded
        challenge. With one, vets the challenge against ``/registry`` (:class:`PaymentTermsMismatch`)
        and the spend limits (:class:`SpendLimitExceeded`), then calls
        ``payment_signer(payment_required)`` and retries with its value as ``PAYMENT-SIGNATURE``
        and the same ``Idempotency-Key`` (a random UUID unless given). When the 402 declares the
        x402 ``payment-identifier`` extension, ``payment_required["extensions"]`` given to the
        signer carries a fresh ``info.id`` (``pay_`` + 32 hex, :func:`with_payment_identifier`),
        and the PaymentPayload sent carries it (added if the signer left it out); a re-send after a
        network error sends the same value, so the gateway answers it with the stored result.

        Raises :class:`UnknownCapability`, :class:`PaymentAlreadyUsed` (409 with the receipt only:
        the payment was settled already and this request did not prove its payer),
        :class:`GatewayError` (400 bad input, 409, 422, 502/503 with ``execution_id`` and
        ``refund`` when the capability failed after payment), :class:`GatewayRequestError`.
        """
        payment_signer = payment_signer or self._payment_signer
        cap = self.capability(capability_id)
        headers = {"content-type": "application/json", "idempotency-key": idempotency_key or str(uuid.uuid4())}
        body = json.dumps({"capability_id": capability_id, "input": input}).encode("utf-8")
        path = "/api/v1/execute"

        status, resp_headers, resp_body = self._send("POST", path, headers, body)
        if 200 <= status < 300:
            return self._json(path, status, resp_body)
        if status != 402:
            self._raise_for(capability_id, status, resp_body)

        try:
            challenge = json.loads(resp_body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            challenge = None
        pr = decode_payment_required(resp_headers.get("payment-required"), challenge)
        if pr is None:
            raise GatewayRequestError(self.base_url + path, "402 without a readable x402 PaymentRequired", status=402)
        if payment_signer is None:
            raise PaymentRequired(capability_id, pr, challenge)

        try:
            requirement, amount = select_requirement(cap, pr, self._network)
        except PaymentTermsMismatch:
            requirement, amount = select_requirement(self.capability(capability_id, refresh=True), pr, self._network)
        self._check_limits(amount)
        to_sign = {**pr, "accepts": [requirement]}
        extensions = with_payment_identifier(pr.get("extensions"))
        payment_id = _payment_identifier_of(extensions)
        if payment_id is not None:
            to_sign["extensions"] = extensions
        signature = payment_signer(to_sign)
        if payment_id is not None:
            signature = _carry_payment_identifier(signature, extensions)
        paid_headers = {**headers, "payment-signature": signature}

        for attempt in range(self._max_retries + 1):
            try:
                status, resp_headers, resp_body = self._transport("POST", self.base_url + path, {"accept": "application/json", **paid_headers}, body, self._timeout)
                break
            except OSError as e:
                if attempt == self._max_retries:
                    self._spent += amount  # the gateway may have settled it
                    raise GatewayRequestError(self.base_url + path, f"no answer after sending a signed payment: {e}", payment_outcome="unknown") from e

        if 200 <= status < 300:
            self._spent += amount
            return self._json(path, status, resp_body)
        if status == 402:
            try:
                refusal = json.loads(resp_body.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                refusal = None
            refused_pr = decode_payment_required(resp_headers.get("payment-required"), refusal) or pr
            reason = refusal.get("reason") if isinstance(refusal, dict) else None
            raise PaymentRequired(capability_id, refused_pr, refusal, reason=reason, refused=True)
        problem = parse_problem(status, resp_body)
        if status >= 500 or "execution_id" in problem or "refund" in problem:
            self._spent += amount
        if status == 409 and problem.get("reason") == "payment_already_used":
            raise PaymentAlreadyUsed(problem, payment_id)
        self._raise_for(capability_id, status, resp_body)

    def sign_in(self, signer: Any) -> str:
        """A bearer token of ``signer.address`` by Sign-In with Ethereum (EIP-4361): ``POST
        /v1/auth/nonce {address}`` -> ``{message}``, ``signer.sign_message(message)`` (EIP-191,
        e.g. :class:`~acg_gateway.signer.LocalSigner`), ``POST /v1/auth/token {message,
        signature}`` -> ``{access_token, token_type: "Bearer", expires_in}``. Returns
        ``access_token`` (for :meth:`get_execution`). Raises :class:`GatewayError` (400, 401)."""
        answers = []
        for path, payload in (("/v1/auth/nonce", lambda: {"address": signer.address}),
                              ("/v1/auth/token", lambda: {"message": answers[0]["message"], "signature": signer.sign_message(answers[0]["message"])})):
            status, _, body = self._send("POST", path, {"content-type": "application/json"}, json.dumps(payload()).encode("utf-8"))
            if status >= 400:
                raise GatewayError(parse_problem(status, body))
            answer = self._json(path, status, body)
            if not isinstance(answer, dict):
                raise GatewayRequestError(self.base_url + path, "the answer is not a JSON object", status=status)
            answers.append(answer)
        token = answers[1].get("access_token")
        if not isinstance(token, str):
            raise GatewayRequestError(self.base_url + "/v1/auth/token", "no access_token in the answer", status=200)
        return token

    def get_execution(self, execution_id: str, bearer_token: Optional[str] = None) -> dict:
        """``GET /api/v1/executions/{id}``: the stored execution (result, proof, payment, refund
        state), readable by its payer only: ``bearer_token`` is the payer address's Sign-In with
        Ethereum token (``POST /v1/auth/nonce``, then ``POST /v1/auth/token``). Raises
        :class:`GatewayError`: 402 without a token (a sign-in-with-x challenge; README "Sign-in-with-x"),
        401 with an invalid one, 404 for an unknown id or another payer's."""
        path = "/api/v1/executions/" + urllib.request.quote(execution_id, safe="")
        status, _, body = self._send("GET", path, {"authorization": f"Bearer {bearer_token}"} if bearer_token else None)
        if status >= 400:
            raise GatewayError(parse_problem(status, body))
        return self._json(path, status, body)

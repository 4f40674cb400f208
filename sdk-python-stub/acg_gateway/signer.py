"""An optional x402 payment signer: pays the gateway's challenges with a local private key.

The client itself stays stdlib-only; this module needs one of two optional extras, imported only
when a signer is made:

- ``eth-account`` (``pip install "acg-gateway[signer]"``): used first when importable; it signs
  the EIP-712 typed data with ``LocalAccount.sign_typed_data(full_message=...)``.
- ``coincurve`` + ``pycryptodome`` (``pip install "acg-gateway[signer-light]"``): this module then
  builds the EIP-712 digest itself (Keccak-256 from pycryptodome) and signs it with libsecp256k1
  (coincurve's RFC 6979 deterministic, low-s recoverable signature), which gives the same 65-byte
  signature as eth-account or viem for the same key and message.

What is signed (x402 ``exact`` scheme on EVM, EIP-3009): ``TransferWithAuthorization(address from,
address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce)`` under the
domain ``{name: extra.name, version: extra.version, chainId, verifyingContract: asset}``. The
account sends no transaction and needs no ETH, only USDC.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
from typing import Any, Callable, Optional, Union

#: EIP-712 types of an EIP-3009 ``transferWithAuthorization`` (USDC's FiatTokenV2).
EIP712_TYPES = {
    "EIP712Domain": [
        {"name": "name", "type": "string"},
        {"name": "version", "type": "string"},
        {"name": "chainId", "type": "uint256"},
        {"name": "verifyingContract", "type": "address"},
    ],
    "TransferWithAuthorization": [
        {"name": "from", "type": "address"},
        {"name": "to", "type": "address"},
        {"name": "value", "type": "uint256"},
        {"name": "validAfter", "type": "uint256"},
        {"name": "validBefore", "type": "uint256"},
        {"name": "nonce", "type": "bytes32"},
    ],
}

#: Seconds the authorization is valid before now (clock skew), as the official x402 client sets it.
VALID_AFTER_SKEW = 600

_HEX_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
_HEX32 = re.compile(r"^0x[0-9a-fA-F]{64}$")
_UINT256_MAX = 2**256 - 1


class SignerUnavailable(ImportError):
    """Neither eth-account nor coincurve + pycryptodome can be imported."""


def _encode_type(primary: str) -> bytes:
    fields = ",".join(f"{f['type']} {f['name']}" for f in EIP712_TYPES[primary])
    return f"{primary}({fields})".encode()


_INSTALL_HINT = 'pip install "acg-gateway[signer]" (eth-account) or "acg-gateway[signer-light]" (coincurve, pycryptodome)'


def _keccak() -> Callable[[bytes], bytes]:
    """Keccak-256 (the pre-standard SHA-3 Ethereum uses), from pycryptodome."""
    try:
        from Crypto.Hash import keccak as _k
    except ImportError as e:
        raise SignerUnavailable(f"The built-in signer needs pycryptodome for Keccak-256: {_INSTALL_HINT}") from e

    def keccak(data: bytes) -> bytes:
        return _k.new(digest_bits=256, data=data).digest()

    return keccak


def _uint(value: Union[int, str], label: str) -> int:
    n = int(value) if isinstance(value, int) or (isinstance(value, str) and value.isdigit()) else -1
    if not 0 <= n <= _UINT256_MAX:
        raise ValueError(f"{label} must be an unsigned 256-bit integer, got {value!r}")
    return n


def _address_bytes(value: str, label: str) -> bytes:
    if not isinstance(value, str) or not _HEX_ADDRESS.match(value):
        raise ValueError(f"{label} must be a 0x-prefixed 20-byte hex address, got {value!r}")
    return bytes.fromhex(value[2:])


def checksum_address(address: str) -> str:
    """EIP-55 mixed-case checksum form of a 0x-prefixed 20-byte hex address."""
    keccak = _keccak()
    hex_addr = _address_bytes(address, "address").hex()
    digest = keccak(hex_addr.encode()).hex()
    return "0x" + "".join(c.upper() if int(digest[i], 16) >= 8 else c for i, c in enumerate(hex_addr))


def transfer_authorization_digest(*, chain_id: int, asset: str, name: str, version: str, authorization: dict) -> bytes:
    """The 32-byte EIP-712 digest ``keccak256(0x1901 || domainSeparator || hashStruct(message))``
    of a ``TransferWithAuthorization``. ``authorization``: ``from``, ``to`` (addresses), ``value``,
    ``validAfter``, ``validBefore`` (integers or integer strings; value in token base units),
    ``nonce`` (0x + 64 hex). Raises ValueError on a malformed field."""
    keccak = _keccak()

    def word(n: int) -> bytes:
        return n.to_bytes(32, "big")

    def addr(v: str, label: str) -> bytes:
        return b"\x00" * 12 + _address_bytes(v, label)

    nonce = authorization.get("nonce")
    if not isinstance(nonce, str) or not _HEX32.match(nonce):
        raise ValueError(f"nonce must be 0x followed by 64 hex characters, got {nonce!r}")
    domain_separator = keccak(
        keccak(_encode_type("EIP712Domain"))
        + keccak(name.encode("utf-8"))
        + keccak(version.encode("utf-8"))
        + word(_uint(chain_id, "chainId"))
        + addr(asset, "verifyingContract")
    )
    struct_hash = keccak(
        keccak(_encode_type("TransferWithAuthorization"))
        + addr(authorization.get("from"), "from")
        + addr(authorization.get("to"), "to")
        + word(_uint(authorization.get("value"), "value"))
        + word(_uint(authorization.get("validAfter"), "validAfter"))
        + word(_uint(authorization.get("validBefore"), "validBefore"))
        + bytes.fromhex(nonce[2:])
    )
    return keccak(b"\x19\x01" + domain_separator + struct_hash)


def _key_bytes(private_key: Union[str, bytes]) -> bytes:
    if isinstance(private_key, str):
        text = private_key[2:] if private_key.startswith(("0x", "0X")) else private_key
        if not re.fullmatch(r"[0-9a-fA-F]{64}", text):
            raise ValueError("private_key must be 32 bytes: 64 hex characters, with or without 0x")
        return bytes.fromhex(text)
    if isinstance(private_key, (bytes, bytearray)) and len(private_key) == 32:
        return bytes(private_key)
    raise ValueError("private_key must be 32 bytes: 64 hex characters, with or without 0x")


class _EthAccountBackend:
    name = "eth-account"

    def __init__(self, key: bytes):
        from eth_account import Account

        self._account = Account.from_key(key)
        self.address: str = self._account.address

    def sign(self, *, chain_id: int, asset: str, name: str, version: str, authorization: dict) -> str:
        full_message = {
            "types": EIP712_TYPES,
            "primaryType": "TransferWithAuthorization",
            "domain": {"name": name, "version": version, "chainId": chain_id, "verifyingContract": checksum_or_same(asset)},
            "message": {
                "from": authorization["from"],
                "to": authorization["to"],
                "value": int(authorization["value"]),
                "validAfter": int(authorization["validAfter"]),
                "validBefore": int(authorization["validBefore"]),
                "nonce": bytes.fromhex(authorization["nonce"][2:]),
            },
        }
        signed = self._account.sign_typed_data(full_message=full_message)
        return "0x" + bytes(signed.signature).hex()

    def sign_message(self, message: str) -> str:
        from eth_account.messages import encode_defunct

        return "0x" + bytes(self._account.sign_message(encode_defunct(text=message)).signature).hex()


def checksum_or_same(address: str) -> str:
    """The EIP-55 form when pycryptodome is importable, else the address unchanged (eth-account accepts both)."""
    try:
        return checksum_address(address)
    except SignerUnavailable:
        return address


class _CoincurveBackend:
    name = "coincurve"

    def __init__(self, key: bytes):
        try:
            import coincurve
        except ImportError as e:
            raise SignerUnavailable(f"No signer library: {_INSTALL_HINT}") from e
        keccak = _keccak()
        self._key = coincurve.PrivateKey(key)
        public = self._key.public_key.format(compressed=False)[1:]  # 64 bytes X || Y
        self.address: str = checksum_address("0x" + keccak(public)[-20:].hex())

    def sign(self, *, chain_id: int, asset: str, name: str, version: str, authorization: dict) -> str:
        digest = transfer_authorization_digest(chain_id=chain_id, asset=asset, name=name, version=version, authorization=authorization)
        return self._sign_digest(digest)

    def sign_message(self, message: str) -> str:
        data = message.encode("utf-8")
        return self._sign_digest(_keccak()(b"\x19Ethereum Signed Message:\n" + str(len(data)).encode("ascii") + data))

    def _sign_digest(self, digest: bytes) -> str:
        rsv = self._key.sign_recoverable(digest, hasher=None)  # r (32) || s (32, low-s) || recovery id (0/1)
        return "0x" + (rsv[:64] + bytes([27 + rsv[64]])).hex()


def _backend(key: bytes, backend: str):
    if backend not in ("auto", "eth-account", "coincurve"):
        raise ValueError('backend must be "auto", "eth-account" or "coincurve"')
    if backend in ("auto", "eth-account"):
        try:
            import eth_account  # noqa: F401
        except ImportError as e:
            if backend == "eth-account":
                raise SignerUnavailable('eth-account is not installed: pip install "acg-gateway[signer]"') from e
        else:
            return _EthAccountBackend(key)
    return _CoincurveBackend(key)


class LocalSigner:
    """A ``payment_signer`` holding a private key (see :func:`local_signer`).

    Call it with the x402 v2 PaymentRequired the client vetted (``accepts`` narrowed to one
    requirement); it returns the base64 value of the ``PAYMENT-SIGNATURE`` header: base64 of the
    JSON of ``{"x402Version": 2, "resource", "accepted", "payload": {"signature",
    "authorization": {"from", "to", "value", "validAfter", "validBefore", "nonce"}}, "extensions"}``
    (``value`` = the requirement's ``amount``, integer USDC base units; times in UNIX seconds:
    ``validAfter`` = now - 600, ``validBefore`` = now + ``maxTimeoutSeconds``; ``nonce`` 32 random bytes).

    Attributes: ``address`` (EIP-55 checksummed), ``backend`` (``"eth-account"`` or ``"coincurve"``).
    Raises ValueError for a requirement it cannot sign (not ``exact``, not an ``eip155:<id>``
    network, no EIP-712 ``extra.name``/``extra.version``).
    """

    def __init__(self, private_key: Union[str, bytes], *, backend: str = "auto", clock: Callable[[], float] = time.time):
        impl = _backend(_key_bytes(private_key), backend)
        self._impl = impl
        self._clock = clock
        self.address: str = impl.address
        self.backend: str = impl.name

    def sign_authorization(self, *, chain_id: int, asset: str, name: str, version: str, authorization: dict) -> str:
        """The 65-byte EIP-712 signature (0x + 130 hex, ``r || s || v`` with v 27/28) of a ``TransferWithAuthorization``."""
        return self._impl.sign(chain_id=chain_id, asset=asset, name=name, version=version, authorization=authorization)

    def sign_message(self, message: str) -> str:
        """The EIP-191 ``personal_sign`` signature (0x + 130 hex, v 27/28) of the UTF-8 text
        ``message``, e.g. the gateway's Sign-In with Ethereum message (:meth:`GatewayClient.sign_in`)."""
        return self._impl.sign_message(message)

    def payment_payload(self, payment_required: dict, nonce: Optional[str] = None) -> dict:
        """The x402 v2 PaymentPayload (a dict) paying ``payment_required["accepts"][0]``."""
        accepts = payment_required.get("accepts") or []
        if len(accepts) != 1:
            raise ValueError("payment_required must hold exactly one requirement in accepts (the one the client vetted)")
        req = accepts[0]
        if req.get("scheme") != "exact":
            raise ValueError(f"cannot sign scheme {req.get('scheme')!r}: only 'exact'")
        m = re.fullmatch(r"eip155:(\d+)", str(req.get("network", "")))
        if not m:
            raise ValueError(f"cannot sign for network {req.get('network')!r}: only eip155:<chain id>")
        extra = req.get("extra") or {}
        if not isinstance(extra.get("name"), str) or not isinstance(extra.get("version"), str):
            raise ValueError("the requirement has no EIP-712 domain name/version in extra")
        now = int(self._clock())
        timeout = req.get("maxTimeoutSeconds")
        authorization = {
            "from": self.address,
            "to": checksum_or_same(req["payTo"]),
            "value": str(_uint(req.get("amount"), "amount")),
            "validAfter": str(now - VALID_AFTER_SKEW),
            "validBefore": str(now + (timeout if isinstance(timeout, int) and timeout > 0 else 300)),
            "nonce": nonce or "0x" + os.urandom(32).hex(),
        }
        signature = self.sign_authorization(
            chain_id=int(m.group(1)), asset=req["asset"], name=extra["name"], version=extra["version"], authorization=authorization
        )
        payload: dict[str, Any] = {
            "x402Version": 2,
            "resource": payment_required.get("resource"),
            "accepted": req,
            "payload": {"signature": signature, "authorization": authorization},
        }
        if payment_required.get("extensions"):
            payload["extensions"] = payment_required["extensions"]
        return payload

    def __call__(self, payment_required: dict) -> str:
        payload = self.payment_payload(payment_required)
        return base64.b64encode(json.dumps(payload, separators=(",", ":")).encode("utf-8")).decode("ascii")


def local_signer(private_key: Union[str, bytes], *, backend: str = "auto") -> LocalSigner:
    """A payment signer for ``GatewayClient(..., payment_signer=...)`` or ``execute(...,
    payment_signer=...)`` from a 32-byte private key (hex, with or without 0x).

    ``backend``: ``"auto"`` (eth-account when importable, else coincurve + pycryptodome),
    ``"eth-account"`` or ``"coincurve"``. Raises :class:`SignerUnavailable` (an ImportError) when
    the chosen libraries are missing, ValueError for a malformed key.
    """
    return LocalSigner(private_key, backend=backend)


def signer_available() -> Optional[str]:
    """The backend ``local_signer`` would use (``"eth-account"`` or ``"coincurve"``), or None when neither is installed."""
    try:
        import eth_account  # noqa: F401

        return "eth-account"
    except ImportError:
        pass
    try:
        import coincurve  # noqa: F401

        _keccak()
        return "coincurve"
    except (ImportError, SignerUnavailable):
        return None

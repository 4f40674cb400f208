"""Stdlib-only Python client of the agent capability gateway (a stub; see README.md).

Same shape as the JavaScript SDK (`@acg/sdk`)::

    from acg_gateway import GatewayClient
    gw = GatewayClient("http://127.0.0.1:8080")
    gw.capabilities()                      # list of /registry entries (dicts)
    gw.execute("intelligence.wallet_balances", {"address": "0x..."}, payment_signer=my_signer)

    # with an optional extra (eth-account, or coincurve + pycryptodome) it signs by itself:
    from acg_gateway import local_signer
    gw = GatewayClient("http://127.0.0.1:8080", payment_signer=local_signer(private_key))

Units: ``price`` strings are decimal USDC ("0.001"); ``amount``, ``price_base_units`` and every
``int`` amount in this module are integer USDC base units (6 decimals: 1000 = 0.001 USDC).
"""

from .client import (
    PAYMENT_NETWORK,
    GatewayClient,
    decode_payment_required,
    format_usdc,
    parse_problem,
    parse_usdc,
    select_requirement,
    with_payment_identifier,
)
from .signer import LocalSigner, SignerUnavailable, local_signer, signer_available
from .errors import (
    AcgError,
    GatewayError,
    GatewayRequestError,
    InvalidAmount,
    PaymentAlreadyUsed,
    PaymentRequired,
    PaymentTermsMismatch,
    SpendLimitExceeded,
    UnknownCapability,
)

__all__ = [
    "PAYMENT_NETWORK",
    "GatewayClient",
    "decode_payment_required",
    "format_usdc",
    "parse_problem",
    "parse_usdc",
    "select_requirement",
    "with_payment_identifier",
    "LocalSigner",
    "SignerUnavailable",
    "local_signer",
    "signer_available",
    "AcgError",
    "GatewayError",
    "GatewayRequestError",
    "InvalidAmount",
    "PaymentAlreadyUsed",
    "PaymentRequired",
    "PaymentTermsMismatch",
    "SpendLimitExceeded",
    "UnknownCapability",
]

__version__ = "0.1.0"

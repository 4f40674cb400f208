"""Command line: ``python3 -m acg_gateway [--base-url URL] capabilities | execute ID JSON``.

``execute`` pays with the private key in the ``ACG_PRIVATE_KEY`` environment variable (never on
the command line, where other users could read it) through :func:`acg_gateway.local_signer`,
which needs an optional extra (``eth-account``, or ``coincurve`` + ``pycryptodome``).
Prints JSON on stdout. Exit status: 0 done, 1 the gateway or the client refused (message on
stderr), 2 bad usage, 3 a key was given but no signer library is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .client import GatewayClient
from .errors import AcgError, PaymentRequired
from .signer import SignerUnavailable, local_signer


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m acg_gateway", description="Client of the agent capability gateway.")
    parser.add_argument("--base-url", default=os.environ.get("GATEWAY_URL", "http://127.0.0.1:8080"), help="gateway base URL (env GATEWAY_URL)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("capabilities", help="list /registry: id, status, price (USDC)")
    ex = sub.add_parser("execute", help="run a capability, paying with ACG_PRIVATE_KEY when it costs money")
    ex.add_argument("capability_id")
    ex.add_argument("input", help="the capability's input as JSON")
    ex.add_argument("--per-call-usdc", help="spend limit of one payment, decimal USDC")
    ex.add_argument("--total-usdc", help="spend limit of this run, decimal USDC")
    args = parser.parse_args(argv)

    try:
        if args.command == "capabilities":
            gw = GatewayClient(args.base_url)
            print(json.dumps([{"id": c.get("id"), "status": c.get("status"), "price": c.get("price")} for c in gw.capabilities()]))
            return 0
        try:
            data = json.loads(args.input)
        except ValueError:
            parser.error("input must be JSON")
        limits = {k: v for k, v in (("per_call_usdc", args.per_call_usdc), ("total_usdc", args.total_usdc)) if v is not None}
        key = os.environ.get("ACG_PRIVATE_KEY")
        try:
            signer = local_signer(key) if key else None
        except SignerUnavailable as e:
            print(f"error: {e}", file=sys.stderr)
            return 3
        gw = GatewayClient(args.base_url, spend_limits=limits, payment_signer=signer)
        execution = gw.execute(args.capability_id, data)
        out = {"execution": execution, "spent_base_units": gw.spent()[0]}
        if signer is not None:
            out["signer"] = {"address": signer.address, "backend": signer.backend}
        print(json.dumps(out))
        return 0
    except PaymentRequired as e:
        # a command-line user pays by setting ACG_PRIVATE_KEY (payment_signer= is the Python API's way)
        asked = f"{e.amount / 1_000_000:.6f}".rstrip("0").rstrip(".") + " USDC" if e.amount is not None else "a payment"
        if e.reason or os.environ.get("ACG_PRIVATE_KEY"):
            print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        else:
            print(
                f'error: PaymentRequired: "{e.capability_id}" costs {asked}: set ACG_PRIVATE_KEY=0x... '
                "(a key holding USDC on the gateway's chain; npm start prints a dev-chain key) to pay",
                file=sys.stderr,
            )
        return 1
    except (AcgError, ValueError) as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""The optional signer (acg_gateway.signer). The wiring tests need no library (a stand-in eth_account
module); the known-answer test needs the ``signer-light`` extra (coincurve, pycryptodome) and is
skipped without it. packages/sdk/test/pythonSigner.unit.test.ts compares it with viem on random keys."""

import base64
import json
import sys
import types
import unittest
from unittest import mock

from acg_gateway import GatewayClient, SignerUnavailable, local_signer, signer_available
from acg_gateway.signer import EIP712_TYPES, LocalSigner

try:  # python3 -m unittest (tests is a package) or discover -s tests (it is the top level)
    from .test_client import EXECUTION, FakeGateway, challenge, payment_required, requirement
except ImportError:
    from test_client import EXECUTION, FakeGateway, challenge, payment_required, requirement

KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"  # anvil dev account 1
ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
PAY_TO = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
# viem 2.57 privateKeyToAccount(KEY).signTypedData(TransferWithAuthorization{from: ADDRESS, to: PAY_TO,
# value: 1000, validAfter: 0, validBefore: 1800000000, nonce: 0x11 * 32}) under USD Coin / 2 / 8453 / USDC
VIEM_SIGNATURE = (
    "0xb2ef4ad11bf9289b174c417480b1e7c26a1a515e22ac1de21127dcb6514f748a"
    "2b1569e487145e1bf9ba45c28c0dbc69a7e7a1c3330ce5eb14235a076ebc72121c"
)


def fake_eth_account(calls):
    """A stand-in ``eth_account`` module recording what the signer asks of it."""

    class Signed:
        signature = bytes(range(65))

    class Local:
        address = ADDRESS

        def sign_typed_data(self, **kwargs):
            calls.append(kwargs)
            return Signed()

    class Account:
        @staticmethod
        def from_key(key):
            calls.append({"from_key": key})
            return Local()

    module = types.ModuleType("eth_account")
    module.Account = Account
    return module


class Availability(unittest.TestCase):
    def test_without_any_library_it_says_what_to_install(self):
        with mock.patch.dict(sys.modules, {"eth_account": None, "coincurve": None}):
            self.assertIsNone(signer_available())
            with self.assertRaises(SignerUnavailable) as ctx:
                local_signer(KEY)
            self.assertIn("acg-gateway[signer-light]", str(ctx.exception))
            with self.assertRaises(SignerUnavailable):
                local_signer(KEY, backend="eth-account")

    def test_malformed_keys(self):
        for bad in ("0x1234", "zz" * 32, b"short", 42):
            with self.assertRaises(ValueError, msg=repr(bad)):
                LocalSigner(bad, backend="coincurve")


class EthAccountBackend(unittest.TestCase):
    def test_prefers_eth_account_and_passes_the_eip712_message(self):
        calls = []
        with mock.patch.dict(sys.modules, {"eth_account": fake_eth_account(calls)}):
            signer = local_signer(KEY)
            self.assertEqual((signer.backend, signer.address), ("eth-account", ADDRESS))
            payload = signer.payment_payload(payment_required([requirement(payTo=PAY_TO)]), nonce="0x" + "11" * 32)
        self.assertEqual(calls[0], {"from_key": bytes.fromhex(KEY[2:])})
        full = calls[1]["full_message"]
        self.assertEqual(full["types"], EIP712_TYPES)
        self.assertEqual(full["primaryType"], "TransferWithAuthorization")
        self.assertEqual(full["domain"]["name"], "USD Coin")
        self.assertEqual(full["domain"]["version"], "2")
        self.assertEqual(full["domain"]["chainId"], 8453)
        self.assertEqual(full["domain"]["verifyingContract"].lower(), USDC.lower())
        self.assertEqual(full["message"]["value"], 1000)
        self.assertEqual(full["message"]["nonce"], b"\x11" * 32)
        self.assertEqual(payload["payload"]["signature"], "0x" + bytes(range(65)).hex())

    def test_builds_the_x402_payload_and_refuses_what_it_cannot_sign(self):
        calls = []
        with mock.patch.dict(sys.modules, {"eth_account": fake_eth_account(calls)}):
            signer = LocalSigner(KEY, clock=lambda: 1_800_000_000.7)
            pr = {**payment_required([requirement(payTo=PAY_TO, maxTimeoutSeconds=60)]), "extensions": {"bazaar": {}}}
            header = signer(pr)
            payload = json.loads(base64.b64decode(header))
            self.assertEqual(payload["x402Version"], 2)
            self.assertEqual(payload["resource"], pr["resource"])
            self.assertEqual(payload["accepted"], pr["accepts"][0])
            self.assertEqual(payload["extensions"], {"bazaar": {}})
            auth = payload["payload"]["authorization"]
            self.assertEqual((auth["from"], auth["value"], auth["validAfter"], auth["validBefore"]), (ADDRESS, "1000", "1799999400", "1800000060"))
            self.assertRegex(auth["nonce"], r"^0x[0-9a-f]{64}$")
            self.assertNotEqual(json.loads(base64.b64decode(signer(pr)))["payload"]["authorization"]["nonce"], auth["nonce"])
            for over in ({"scheme": "upto"}, {"network": "solana:mainnet"}, {"extra": {}}):
                with self.assertRaises(ValueError, msg=repr(over)):
                    signer(payment_required([requirement(**over)]))
            with self.assertRaises(ValueError):
                signer(payment_required([requirement(), requirement()]))

    def test_client_uses_its_default_signer(self):
        calls = []
        seen = {}

        def script(headers, n):
            if n == 0:
                return challenge()
            seen["signature"] = headers["payment-signature"]
            return 200, {}, json.dumps(EXECUTION).encode()

        with mock.patch.dict(sys.modules, {"eth_account": fake_eth_account(calls)}):
            client = GatewayClient("http://gw.test", transport=FakeGateway(script), payment_signer=local_signer(KEY))
            self.assertEqual(client.execute("intelligence.wallet_balances", {}), EXECUTION)
        self.assertEqual(json.loads(base64.b64decode(seen["signature"]))["payload"]["authorization"]["from"], ADDRESS)
        self.assertEqual(client.spent(), (1000, "0.001"))


def _coincurve_ready():
    try:
        import coincurve  # noqa: F401
        from Crypto.Hash import keccak  # noqa: F401

        return True
    except Exception:
        return False


@unittest.skipUnless(_coincurve_ready(), 'needs the signer-light extra: pip install "acg-gateway[signer-light]"')
class CoincurveBackend(unittest.TestCase):
    def test_known_answer_from_viem(self):
        signer = LocalSigner(KEY, backend="coincurve")
        self.assertEqual(signer.address, ADDRESS)
        authorization = {"from": ADDRESS, "to": PAY_TO, "value": "1000", "validAfter": "0", "validBefore": "1800000000", "nonce": "0x" + "11" * 32}
        sig = signer.sign_authorization(chain_id=8453, asset=USDC, name="USD Coin", version="2", authorization=authorization)
        self.assertEqual(sig, VIEM_SIGNATURE)


if __name__ == "__main__":
    unittest.main()

"""Pure tests of the stub (no network): python3 -m unittest (from sdk-python-stub/)."""

import base64
import json
import re
import unittest

from acg_gateway import (
    GatewayClient,
    GatewayError,
    InvalidAmount,
    PaymentAlreadyUsed,
    PaymentRequired,
    PaymentTermsMismatch,
    SpendLimitExceeded,
    UnknownCapability,
    decode_payment_required,
    format_usdc,
    parse_problem,
    parse_usdc,
    select_requirement,
    with_payment_identifier,
)

USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
TREASURY = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

# A PAYMENT-REQUIRED header exactly as the gateway sent it for intelligence.wallet_balances.
REAL_HEADER = (
    "eyJ4NDAyVmVyc2lvbiI6MiwiZXJyb3IiOiJQYXltZW50IHJlcXVpcmVkOiBzaWduIGFuIHg0MDIgZXhhY3QgcGF5bWVudCBhbmQgcmV0cnkgd2l0aCBQQVlNRU5ULVNJR05BVFVSRS4i"
    "LCJyZXNvdXJjZSI6eyJ1cmwiOiJodHRwOi8vMTI3LjAuMC4xOjgwODAvYXBpL3YxL2V4ZWN1dGUiLCJkZXNjcmlwdGlvbiI6IkV4ZWN1dGUgaW50ZWxsaWdlbmNlLndhbGxldF9iYWxh"
    "bmNlcyIsIm1pbWVUeXBlIjoiYXBwbGljYXRpb24vanNvbiJ9LCJhY2NlcHRzIjpbeyJzY2hlbWUiOiJleGFjdCIsIm5ldHdvcmsiOiJlaXAxNTU6ODQ1MyIsImFzc2V0IjoiMHg4MzM1"
    "ODlmQ0Q2ZURiNkUwOGY0YzdDMzJENGY3MWI1NGJkQTAyOTEzIiwiYW1vdW50IjoiMTAwMCIsInBheVRvIjoiMHg3MDk5Nzk3MEM1MTgxMmRjM0EwMTBDN2QwMWI1MGUwZDE3ZGM3OUM4"
    "IiwibWF4VGltZW91dFNlY29uZHMiOjMwMCwiZXh0cmEiOnsibmFtZSI6IlVTRCBDb2luIiwidmVyc2lvbiI6IjIifX1dfQ=="
)


def requirement(**over):
    r = {"scheme": "exact", "network": "eip155:8453", "asset": USDC, "amount": "1000", "payTo": TREASURY,
         "maxTimeoutSeconds": 300, "extra": {"name": "USD Coin", "version": "2"}}
    r.update(over)
    return r


def payment_required(accepts=None):
    return {"x402Version": 2, "resource": {"url": "http://gw.test/api/v1/execute"}, "accepts": accepts or [requirement()]}


def capability(**over):
    c = {"id": "intelligence.wallet_balances", "status": "LIVE", "price": "0.001", "price_base_units": "1000",
         "x402": {"x402Version": 2, "scheme": "exact", "network": "eip155:8453", "asset": USDC, "payTo": TREASURY,
                  "resource": "http://gw.test/api/v1/execute", "maxAmountRequired": "1000"}}
    c.update(over)
    return c


class Units(unittest.TestCase):
    def test_parse_usdc(self):
        self.assertEqual(parse_usdc("0.001"), 1000)
        self.assertEqual(parse_usdc("0.01"), 10_000)
        self.assertEqual(parse_usdc(0.05), 50_000)
        self.assertEqual(parse_usdc(1), 1_000_000)
        self.assertEqual(parse_usdc("0.000001"), 1)
        for bad in ("-1", "1e-3", "0.0000001", "", "abc", 0.1 + 0.2, True):
            with self.assertRaises(InvalidAmount, msg=repr(bad)):
                parse_usdc(bad)

    def test_format_usdc(self):
        self.assertEqual(format_usdc(1000), "0.001")
        self.assertEqual(format_usdc(0), "0")
        self.assertEqual(format_usdc(2_500_000), "2.5")


class Decoding(unittest.TestCase):
    def test_decodes_the_gateway_header(self):
        pr = decode_payment_required(REAL_HEADER)
        self.assertEqual(pr["x402Version"], 2)
        self.assertEqual(pr["accepts"][0]["amount"], "1000")
        self.assertEqual(pr["accepts"][0]["network"], "eip155:8453")
        self.assertEqual(pr["accepts"][0]["payTo"], TREASURY)
        self.assertEqual(pr["accepts"][0]["extra"], {"name": "USD Coin", "version": "2"})

    def test_header_without_padding_and_body_fallback(self):
        self.assertEqual(decode_payment_required(REAL_HEADER.rstrip("=")), decode_payment_required(REAL_HEADER))
        body = {**payment_required(), "scheme": "exact", "maxAmountRequired": "1000", "payTo": TREASURY}
        self.assertEqual(decode_payment_required(None, body), payment_required())
        self.assertIsNone(decode_payment_required("!!!", {"detail": "x"}))
        self.assertIsNone(decode_payment_required(base64.b64encode(b'{"x402Version":1}').decode()))

    def test_problem_parsing(self):
        body = {"type": "about:blank", "title": "Bad Request", "status": 400, "detail": "bad input",
                "errors": [{"path": ["input", "address"], "message": "must be 0x followed by 40 hex characters"}]}
        p = parse_problem(400, json.dumps(body).encode())
        self.assertEqual(p, body)
        err = GatewayError(p)
        self.assertEqual((err.status, err.title, err.detail), (400, "Bad Request", "bad input"))
        self.assertEqual(err.errors[0]["path"], ["input", "address"])
        self.assertEqual(parse_problem(502, b"<html>oops</html>"),
                         {"type": "about:blank", "title": "Bad Gateway", "status": 502, "detail": "<html>oops</html>"})
        self.assertEqual(parse_problem(404, b'{"status": 200, "message": "m"}')["status"], 404)

    def test_select_requirement(self):
        r, amount = select_requirement(capability(), payment_required([requirement(payTo=TREASURY.lower())]))
        self.assertEqual(amount, 1000)
        for over in ({"payTo": "0x000000000000000000000000000000000000dEaD"}, {"amount": "1001"},
                     {"network": "eip155:1"}, {"asset": "0x0000000000000000000000000000000000000001"}):
            with self.assertRaises(PaymentTermsMismatch, msg=repr(over)):
                select_requirement(capability(), payment_required([requirement(**over)]))
        with self.assertRaises(PaymentTermsMismatch):
            select_requirement(capability(x402=None), payment_required())


class FakeGateway:
    """Scripted transport: /registry answers one capability; execute answers from `script`."""

    def __init__(self, script):
        self.script = script
        self.calls = []

    def __call__(self, method, url, headers, body, timeout):
        self.calls.append((method, url, dict(headers), body))
        if url.endswith("/registry"):
            return 200, {}, json.dumps({"capabilities": [capability()]}).encode()
        return self.script(dict(headers), len([c for c in self.calls if c[1].endswith("/execute")]) - 1)


def challenge(status=402):
    return status, {"payment-required": REAL_HEADER}, json.dumps({"x402Version": 2, "maxAmountRequired": "1000"}).encode()


EXECUTION = {"execution_id": "exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T", "status": "SUCCEEDED", "result": {},
             "payment": {"tx_hash": "0x" + "ab" * 32, "amount": "1000"}}


def answer_lost_once(first_answer):
    """A FakeGateway script: `first_answer()` to the unpaid execute, a connection reset on the first paid
    one (its answer is lost), EXECUTION after that."""

    def script(headers, n):
        if n == 0:
            return first_answer()
        if n == 1:
            raise ConnectionResetError("the answer was lost")
        return 200, {}, json.dumps(EXECUTION).encode()

    return script


class Flow(unittest.TestCase):
    def test_without_signer_raises_payment_required(self):
        gw = FakeGateway(lambda h, n: challenge())
        with self.assertRaises(PaymentRequired) as ctx:
            GatewayClient("http://gw.test", transport=gw).execute("intelligence.wallet_balances", {"address": TREASURY})
        self.assertEqual(ctx.exception.amount, 1000)
        self.assertEqual(ctx.exception.payment_required["accepts"][0]["asset"], USDC)

    def test_signer_is_called_with_the_vetted_requirement_and_key_is_reused(self):
        seen = {}

        def script(headers, n):
            if n == 0:
                seen["key"] = headers["idempotency-key"]
                return challenge()
            self.assertEqual(headers["payment-signature"], "SIGNED")
            self.assertEqual(headers["idempotency-key"], seen["key"])
            return 200, {}, json.dumps(EXECUTION).encode()

        def signer(pr):
            seen["pr"] = pr
            return "SIGNED"

        client = GatewayClient("http://gw.test", transport=FakeGateway(script), spend_limits={"per_call_usdc": "0.01"})
        self.assertEqual(client.execute("intelligence.wallet_balances", {}, payment_signer=signer), EXECUTION)
        self.assertEqual(len(seen["pr"]["accepts"]), 1)
        self.assertEqual(seen["pr"]["accepts"][0]["amount"], "1000")
        self.assertEqual(client.spent(), (1000, "0.001"))

    def test_spend_limit_is_checked_before_signing(self):
        def signer(pr):
            raise AssertionError("must not be called")

        client = GatewayClient("http://gw.test", transport=FakeGateway(lambda h, n: challenge()),
                               spend_limits={"per_call_usdc": "0.0005"})
        with self.assertRaises(SpendLimitExceeded) as ctx:
            client.execute("intelligence.wallet_balances", {}, payment_signer=signer)
        self.assertEqual((ctx.exception.limit, ctx.exception.amount), ("per_call", 1000))
        self.assertEqual(client.spent(), (0, "0"))

    def test_network_error_resends_the_same_signature(self):
        gw = FakeGateway(answer_lost_once(challenge))
        count = {"n": 0}

        def signer(pr):
            count["n"] += 1
            return "SIGNED"

        GatewayClient("http://gw.test", transport=gw).execute("intelligence.wallet_balances", {}, payment_signer=signer)
        self.assertEqual(count["n"], 1)
        paid = [c for c in gw.calls if "payment-signature" in c[2]]
        self.assertEqual(len(paid), 2)

    def test_errors(self):
        bad = {"type": "about:blank", "title": "Bad Request", "status": 400, "detail": "bad",
               "errors": [{"path": ["input", "address"], "message": "m"}]}
        gw = FakeGateway(lambda h, n: (400, {}, json.dumps(bad).encode()))
        client = GatewayClient("http://gw.test", transport=gw)
        with self.assertRaises(GatewayError) as ctx:
            client.execute("intelligence.wallet_balances", {"address": "x"})
        self.assertEqual(ctx.exception.status, 400)
        with self.assertRaises(UnknownCapability):
            client.execute("no.such", {})


# The payment-identifier declaration the gateway puts in every 402's extensions (built by
# @x402/extensions' declarePaymentIdentifierExtension(false)).
DECLARED = {"info": {"required": False}, "schema": {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
    "properties": {"required": {"type": "boolean"},
                   "id": {"type": "string", "minLength": 16, "maxLength": 128, "pattern": "^[a-zA-Z0-9_-]+$"}},
    "required": ["required"]}}
PAY_ID = re.compile(r"^pay_[0-9a-f]{32}$")


def challenge_with_identifier():
    pr = {**decode_payment_required(REAL_HEADER), "extensions": {"bazaar": {"info": {}}, "payment-identifier": DECLARED}}
    header = base64.b64encode(json.dumps(pr).encode()).decode()
    return 402, {"payment-required": header}, json.dumps({"x402Version": 2, "maxAmountRequired": "1000"}).encode()


def sent_payload(headers):
    return json.loads(base64.b64decode(headers["payment-signature"]))


def payload_signer(pr):
    """A signer that copies extensions into its PaymentPayload, as LocalSigner and the x402 client do."""
    payload = {"x402Version": 2, "resource": pr["resource"], "accepted": pr["accepts"][0],
               "payload": {"signature": "0x" + "11" * 65, "authorization": {}}}
    if pr.get("extensions"):
        payload["extensions"] = pr["extensions"]
    return base64.b64encode(json.dumps(payload).encode()).decode()


RECEIPT = {"type": "about:blank", "title": "Conflict", "status": 409, "reason": "payment_already_used",
           "detail": "This payment was used already.", "operation_id": EXECUTION["execution_id"],
           "execution_id": EXECUTION["execution_id"], "payment": EXECUTION["payment"],
           "result_url": "http://gw.test/api/v1/executions/" + EXECUTION["execution_id"]}


class PaymentIdentifier(unittest.TestCase):
    def test_adds_an_id_to_the_declared_extension_only(self):
        ext = {"bazaar": {"info": {"x": 1}}, "payment-identifier": DECLARED}
        out = with_payment_identifier(ext)
        self.assertRegex(out["payment-identifier"]["info"]["id"], PAY_ID)
        self.assertEqual(out["payment-identifier"]["info"]["required"], False)
        self.assertEqual(out["payment-identifier"]["schema"], DECLARED["schema"])
        self.assertEqual(out["bazaar"], ext["bazaar"])
        self.assertNotIn("id", DECLARED["info"])  # the 402's declaration is not mutated
        self.assertNotEqual(with_payment_identifier(ext)["payment-identifier"]["info"]["id"], out["payment-identifier"]["info"]["id"])
        self.assertEqual(with_payment_identifier(ext, "my-own-id-0123456789")["payment-identifier"]["info"]["id"], "my-own-id-0123456789")
        for bad in ("short", "x" * 129, "has space in it 012345"):
            with self.assertRaises(ValueError, msg=bad):
                with_payment_identifier(ext, bad)
        self.assertEqual(with_payment_identifier({"bazaar": {}}), {"bazaar": {}})
        self.assertIsNone(with_payment_identifier(None))

    def test_a_resend_after_a_network_error_carries_the_same_identifier(self):
        seen = {}

        def signer(pr):
            seen["pr"] = pr
            return payload_signer(pr)

        gw = FakeGateway(answer_lost_once(challenge_with_identifier))
        self.assertEqual(GatewayClient("http://gw.test", transport=gw).execute("intelligence.wallet_balances", {}, payment_signer=signer), EXECUTION)
        given = seen["pr"]["extensions"]["payment-identifier"]["info"]["id"]
        self.assertRegex(given, PAY_ID)
        paid = [c[2] for c in gw.calls if "payment-signature" in c[2]]
        self.assertEqual(len(paid), 2)
        self.assertEqual(paid[0]["payment-signature"], paid[1]["payment-signature"])
        self.assertEqual(sent_payload(paid[1])["extensions"]["payment-identifier"]["info"]["id"], given)

    def test_each_payment_gets_its_own_identifier(self):
        gw = FakeGateway(lambda h, n: challenge_with_identifier() if "payment-signature" not in h else (200, {}, json.dumps(EXECUTION).encode()))
        client = GatewayClient("http://gw.test", transport=gw)
        client.execute("intelligence.wallet_balances", {}, payment_signer=payload_signer)
        client.execute("intelligence.wallet_balances", {}, payment_signer=payload_signer)
        ids = [sent_payload(c[2])["extensions"]["payment-identifier"]["info"]["id"] for c in gw.calls if "payment-signature" in c[2]]
        self.assertEqual(len(ids), 2)
        self.assertNotEqual(ids[0], ids[1])

    def test_a_signer_that_drops_extensions_still_sends_the_identifier(self):
        def bare_signer(pr):
            return payload_signer({k: v for k, v in pr.items() if k != "extensions"})

        gw = FakeGateway(lambda h, n: challenge_with_identifier() if n == 0 else (200, {}, json.dumps(EXECUTION).encode()))
        GatewayClient("http://gw.test", transport=gw).execute("intelligence.wallet_balances", {}, payment_signer=bare_signer)
        payload = sent_payload(gw.calls[-1][2])
        self.assertRegex(payload["extensions"]["payment-identifier"]["info"]["id"], PAY_ID)
        self.assertEqual(payload["payload"]["signature"], "0x" + "11" * 65)

    def test_no_declaration_no_identifier(self):
        gw = FakeGateway(lambda h, n: challenge() if n == 0 else (200, {}, json.dumps(EXECUTION).encode()))
        GatewayClient("http://gw.test", transport=gw).execute("intelligence.wallet_balances", {}, payment_signer=payload_signer)
        self.assertNotIn("extensions", sent_payload(gw.calls[-1][2]))
        opaque = FakeGateway(lambda h, n: challenge_with_identifier() if n == 0 else (200, {}, json.dumps(EXECUTION).encode()))
        GatewayClient("http://gw.test", transport=opaque).execute("intelligence.wallet_balances", {}, payment_signer=lambda pr: "OPAQUE")
        self.assertEqual(opaque.calls[-1][2]["payment-signature"], "OPAQUE")

    def test_payment_already_used_raises_with_the_receipt(self):
        gw = FakeGateway(lambda h, n: challenge_with_identifier() if n == 0 else (409, {}, json.dumps(RECEIPT).encode()))
        client = GatewayClient("http://gw.test", transport=gw)
        with self.assertRaises(PaymentAlreadyUsed) as ctx:
            client.execute("intelligence.wallet_balances", {}, payment_signer=payload_signer)
        e = ctx.exception
        self.assertIsInstance(e, GatewayError)
        self.assertEqual((e.status, e.execution_id, e.operation_id), (409, EXECUTION["execution_id"], EXECUTION["execution_id"]))
        self.assertEqual(e.payment, EXECUTION["payment"])
        self.assertEqual(e.result_url, RECEIPT["result_url"])
        self.assertEqual(e.payment_identifier, sent_payload(gw.calls[-1][2])["extensions"]["payment-identifier"]["info"]["id"])
        other = FakeGateway(lambda h, n: challenge_with_identifier() if n == 0 else (409, {}, json.dumps({"status": 409, "reason": "idempotency"}).encode()))
        with self.assertRaises(GatewayError) as ctx2:
            GatewayClient("http://gw.test", transport=other).execute("intelligence.wallet_balances", {}, payment_signer=payload_signer)
        self.assertNotIsInstance(ctx2.exception, PaymentAlreadyUsed)

    def test_get_execution_sends_the_bearer_token(self):
        seen = []

        def transport(method, url, headers, body, timeout):
            seen.append((method, url, dict(headers)))
            return 200, {}, json.dumps(EXECUTION).encode()

        client = GatewayClient("http://gw.test", transport=transport)
        self.assertEqual(client.get_execution(EXECUTION["execution_id"], bearer_token="tok_abc"), EXECUTION)
        self.assertEqual(seen[0][:2], ("GET", "http://gw.test/api/v1/executions/" + EXECUTION["execution_id"]))
        self.assertEqual(seen[0][2]["authorization"], "Bearer tok_abc")


if __name__ == "__main__":
    unittest.main()

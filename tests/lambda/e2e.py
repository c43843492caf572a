#!/usr/bin/env python3
"""End-to-end test of the real Lambda binaries on the template's wiring (tests/lambda/harness.py).

Proves at run time what infra/check-wiring.py proves on paper: every HTTP route of the
template reaches a function that knows it, the SQS event sources drive the workers
(webhooks, ats-book, batches), documents go through S3, and the operator API is IAM-only.

Usage: e2e.py --bins DIR   (DIR/<binary>/bootstrap as cargo lambda builds, or DIR/<binary>)
Exit 0 when everything held; otherwise 1, each failure named, with the functions' log tails.
"""

import argparse
import collections
import http.client
import json
import re
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import IAM_HEADER, TEMPLATE, Harness, Route  # noqa: E402

VERBOSE = False
OPERATOR = "arn:aws:iam::123456789012:user/ips-e2e-operator"
DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
# The service's answer to a path no operation or resource has (shared/src/error.rs).
UNKNOWN_ROUTE = "Operation or resource not found"
# Parameter sets as tests/params.rs has them.
PARTY = {
    "firstName": "Ann", "lastName": "Lee", "dob": "01-02-1980", "primCountry": "USA",
    "primAddress1": "1 Main St", "primCity": "Austin", "primState": "TX", "primZip": "78701",
    "emailAddress": "ann@example.com",
}
ACCOUNT = {
    "accountRegistration": "Ann Lee", "type": "Individual", "domesticYN": "domestic_account",
    "streetAddress1": "1 Main St", "city": "Austin", "state": "TX", "zip": "78701", "country": "USA",
}
ISSUER = {"issuerName": "Acme Capital", "firstName": "Ada", "lastName": "Stone", "email": "ada@acme.example"}
OFFERING = {
    "issueName": "Acme Series A", "issueType": "Equity", "targetAmount": "50000", "minAmount": "1000",
    "maxAmount": "100000", "unitPrice": "10", "startDate": "01-01-2026", "endDate": "12-31-2026",
    "offeringText": "Shares of Acme", "stampingText": "CONFIDENTIAL", "totalShares": "1000",
}
EXTERNAL = {
    "types": "Account", "ExtAccountfullname": "Ada Stone", "Extnickname": "Main",
    "ExtRoutingnumber": "021000021", "ExtAccountnumber": "000123456789", "ExtBankname": "First Bank",
}
# Methods whose webhooks the journey expects, each exactly once.
HOOKED = [
    "createIssuer", "createOffering", "createParty", "createLink", "createTrade",
    "createExternalAccount", "externalFundMove", "uploadPartyDocument", "matchedTradenotify",
]


class Failed(Exception):
    """A step that later steps depend on failed."""


class Check:
    """Counts assertions; a failed one is recorded (and, with `need`, ends the part)."""

    def __init__(self):
        self.passed = 0
        self.failures = []

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failures.append(what)
            print(f"  FAIL {what}", flush=True)
        return cond

    def need(self, cond, what):
        if not self.ok(cond, what):
            raise Failed(what)


class Receiver:
    """A webhook receiver on 127.0.0.1: records every POST by path."""

    def __init__(self):
        self.got = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.lock:
                    outer.got.append((self.path, body.decode(errors="replace")))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self, method):
        with self.lock:
            return sum(1 for p, _ in self.got if p == f"/hook/{method}")


class Api:
    """Requests through the harness's API Gateway front."""

    def __init__(self, url):
        self.url = url
        self.s = requests.Session()
        self.auth = None
        self.succeeded = collections.Counter()  # method-style calls answered 101, by name

    def call(self, op, params, method="POST"):
        r = self.s.request(method, f"{self.url}/v3/{op}", data=params, headers={"Authorization": self.auth}, timeout=60)
        j = _json(r)
        if code(j) == "101":
            self.succeeded[op] += 1
        return r, j

    def operator(self, method, path, body=None, signed=True):
        headers = {IAM_HEADER: OPERATOR} if signed else {}
        r = self.s.request(method, self.url + path, json=body, headers=headers, timeout=60)
        return r, _json(r)


def _json(r):
    try:
        return r.json()
    except ValueError:
        return None


def wait_for(predicate, seconds, step=0.25):
    end = time.time() + seconds
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


def code(j):
    return (j or {}).get("statusCode")


# ---------------------------------------------------------------- the parts


def part_first_invocations(h, c):
    """Every function answers its first invocation: HTTP functions a ping event, the
    workers an empty SQS batch."""
    r = requests.get(h.url + "/v3/ping", timeout=60)
    # A resource-style path: HTTP 401 with statusCode 103 (CONTRACT, "Order of checks").
    c.ok(r.status_code == 401 and code(_json(r)) == "103", f"GET /v3/ping without credentials: 401 103, got {r.status_code} {r.text[:200]}")
    http = {route.function for route in h.routes}
    for binary, fn in h.functions.items():
        if binary in http:
            route = Route("GET", "/v3/ping", binary, False)
            event = h.http_event("GET", urllib.parse.urlsplit("/v3/ping"), {}, b"", route, None, None)
            ok, payload = h.invoke(binary, event)
            c.ok(ok and isinstance(payload, dict) and "statusCode" in payload, f"{binary} answers a ping event: {payload}")
        else:
            ok, payload = h.invoke(binary, {"Records": []})
            c.ok(ok and payload == {"batchItemFailures": []}, f"{binary} answers an empty SQS batch: {payload}")


def part_operator(h, c, api, hooks):
    """The operator API is IAM-only; a client is created, with webhooks and open markets."""
    intruder = "e2e-intruder"
    r, j = api.operator("POST", "/operator/clients", {"clientId": intruder}, signed=False)
    c.ok(r.status_code == 403 and j == {"message": "Forbidden"}, f"unsigned POST /operator/clients: 403 Forbidden, got {r.status_code} {r.text[:200]}")
    r, j = api.operator("POST", f"/operator/clients/{intruder}/keys", {})
    c.ok(r.status_code == 404, f"the unsigned request created nothing: POST keys of {intruder} is 404, got {r.status_code} {r.text[:200]}")

    client = "e2e-" + uuid.uuid4().hex[:8]
    r, j = api.operator("POST", "/operator/clients", {"clientId": client, "scopes": ["*"]})
    c.need(r.status_code == 201 and j.get("clientId") == client and j.get("apiKey"), f"POST /operator/clients: 201 with a key, got {r.status_code} {r.text[:300]}")
    api.auth = f"Bearer {client}:{j['apiKey']}"
    for method in HOOKED:
        r, j = api.operator("PUT", f"/operator/clients/{client}/webhooks/{method}", {"urls": [f"{hooks.url}/hook/{method}"]})
        c.need(r.status_code == 200, f"webhook registration of {method}: 200, got {r.status_code} {r.text[:200]}")
    # Markets open around the clock, as tests/api/ats.rs does: matching does not depend on
    # the hour the test runs.
    hours = {d: {"closed": False, "start": "00:00", "end": "24:00"} for d in DAYS}
    r, j = api.operator("PUT", f"/operator/clients/{client}/market-hours", hours)
    c.need(r.status_code == 200, f"market hours: 200, got {r.status_code} {r.text[:200]}")
    r = requests.get(h.url + "/v3/ping", headers={"Authorization": api.auth}, timeout=60)
    c.ok(r.status_code == 200 and code(_json(r)) == "101", f"GET /v3/ping with the new key: 101, got {r.status_code} {r.text[:200]}")
    return client


def created(c, api, op, params, key, field, method="PUT"):
    r, j = api.call(op, params, method)
    c.need(code(j) == "101", f"{op}: 101, got {r.status_code} {r.text[:300]}")
    try:
        return j[key][1][0][field] if key != "accountDetails" else j[key][0][field]
    except (KeyError, IndexError, TypeError):
        c.need(False, f"{op}: {key}.{field} in {r.text[:300]}")


def part_journey(h, c, api, client, ids):
    """Issuer, offering, investor, link, trade, funding to FUNDED (ACH through the batch
    queue and the batches function). Fills `ids` as it goes, for the later parts."""
    ids["issuer"] = created(c, api, "createIssuer", ISSUER, "issuerDetails", "issuerId")
    ids["offering"] = created(c, api, "createOffering", {**OFFERING, "issuerId": ids["issuer"]}, "offeringDetails", "offeringId")
    ids["party"] = created(c, api, "createParty", PARTY, "partyDetails", "partyId")
    ids["account"] = created(c, api, "createAccount", ACCOUNT, "accountDetails", "accountId")
    link = {
        "firstEntryType": "Account", "firstEntry": ids["account"], "relatedEntryType": "IndivACParty",
        "relatedEntry": ids["party"], "linkType": "owner", "primary_value": "1",
    }
    r, j = api.call("createLink", link, "PUT")
    c.need(code(j) == "101", f"createLink: 101, got {r.text[:300]}")
    trade = {"accountId": ids["account"], "offeringId": ids["offering"], "transactionType": "ACH", "transactionUnits": "5"}
    ids["trade"] = created(c, api, "createTrade", trade, "purchaseDetails", "tradeId", "POST")
    r, j = api.call("getTrade", {"accountId": ids["account"], "tradeId": ids["trade"]})
    tr = ((j or {}).get("partyDetails") or [{}])[0]
    c.ok(code(j) == "101" and tr.get("partyId") == ids["party"] and tr.get("orderStatus") == "CREATED",
         f"getTrade: 101, the party's CREATED trade, got {r.text[:300]}")

    r, j = api.call("createExternalAccount", {**EXTERNAL, "accountId": ids["account"]})
    c.need(code(j) == "101", f"createExternalAccount: 101, got {r.text[:300]}")
    move = {
        "accountId": ids["account"], "offeringId": ids["offering"], "tradeId": ids["trade"],
        "amount": "50", "description": "Subscription", "checkNumber": ids["trade"],
    }
    r, j = api.call("externalFundMove", move)
    c.need(code(j) == "101", f"externalFundMove: 101, got {r.text[:300]}")
    ids["ref"] = j["TradeFinancialDetails"][0]["RefNum"]
    c.ok(fund_status(api, ids) == "Pending", "the fund move starts Pending")
    ids["batch_path"] = part_batch(h, c, api, client, ids)

    r, j = api.operator("POST", f"/operator/clients/{client}/accounts/{ids['account']}/fund-moves/{ids['ref']}/status", {"status": "Settled"})
    c.ok(r.status_code == 200 and (j or {}).get("fundStatus") == "Settled", f"the bank settles the move: 200 Settled, got {r.status_code} {r.text[:300]}")
    c.ok(trade_status(api, ids["trade"]) == "FUNDED", "the settled trade is FUNDED")


def trade_status(api, trade):
    r, j = api.call("getTradeStatus", {"tradeId": trade})
    try:
        return j["tradeDetails"][0]["orderStatus"]
    except (KeyError, IndexError, TypeError):
        return f"(getTradeStatus: {r.text[:200]})"


def fund_status(api, ids):
    r, j = api.call("getExternalFundMove", {"accountId": ids["account"], "RefNum": ids["ref"]})
    try:
        return j["investorExternalAccountDetails"][0]["fundStatus"]
    except (KeyError, IndexError, TypeError):
        return f"(getExternalFundMove: {r.text[:200]})"


def part_batch(h, c, api, client, ids):
    """The ACH schedule's Input on the batches function, and the item through the batch
    queue. The schedule enqueues only on Eastern business days; on other days the test
    puts on the queue the message the schedule would have sent, so the queue path runs
    every day."""
    before = h.sqs_batches["batches"]
    ok, payload = h.invoke("batches", {"batch": "ach"})
    c.need(ok and isinstance(payload, dict) and payload.get("batch") == "ach", f'batches {{"batch": "ach"}} answers: {payload}')
    enqueued = payload.get("enqueued")
    c.ok(enqueued in (0, 1), f"the ACH schedule enqueues the one pending move or (not a business day) nothing: {payload}")
    if enqueued == 0:
        message = {"batch": "ach", "clientId": client, "id": ids["ref"]}
        h.client("sqs").send_message(QueueUrl=h.refs["BatchQueue"], MessageBody=json.dumps(message))
    status = wait_for(lambda: fund_status(api, ids) == "Submitted", 20)
    c.ok(status, f"the batch queue's item submits the move (batches function via BatchQueue): {fund_status(api, ids)}")
    c.ok(h.sqs_batches["batches"] > before, "the batches function consumed the batch queue")
    print(f"  the ACH item reached the batch queue by {'the schedule' if enqueued else 'a message the test sent (not a business day in New York)'}")
    ok, payload = h.invoke("batches", {"batch": "ats-expiry"})
    c.ok(ok and isinstance(payload, dict) and payload.get("batch") == "ats-expiry", f'batches {{"batch": "ats-expiry"}} answers: {payload}')
    return "schedule" if enqueued else "message"


def part_document(h, c, api, ids):
    """A party document uploaded as multipart and read back byte for byte from S3."""
    data = b"%PDF-1.4\n" + bytes(range(256)) * 8  # binary: exercises base64 both ways
    fields = {"partyId": ids["party"], "documentTitle": "documentTitle0=Passport", "file_name": "filename0=passport.pdf"}
    r = api.s.post(
        f"{api.url}/v3/uploadPartyDocument",
        data=fields,
        files={"userfile0": ("0.pdf", data, "application/octet-stream")},
        headers={"Authorization": api.auth},
        timeout=60,
    )
    j = _json(r)
    c.need(code(j) == "101", f"uploadPartyDocument: 101, got {r.status_code} {r.text[:300]}")
    api.succeeded["uploadPartyDocument"] += 1
    r, j = api.call("getPartyDocument", {"partyId": ids["party"]})
    docs = (j or {}).get("partyDocumentDetails")
    c.need(code(j) == "101" and isinstance(docs, list) and len(docs) == 1, f"getPartyDocument: one document, got {r.text[:300]}")
    url = docs[0].get("documentUrl", "")
    c.ok(url.startswith(h.moto_url), f"the document URL is S3's (moto): {url[:120]}")
    got = requests.get(url, timeout=30)
    c.ok(got.status_code == 200 and got.content == data, f"the document reads back byte for byte: {got.status_code}, {len(got.content)} bytes of {len(data)}")


def part_ats(h, c, api, client, ids):
    """Two crossing orders on an approved offering, matched by ats-book via the FIFO queue."""
    r, j = api.operator("POST", f"/operator/clients/{client}/offerings/{ids['offering']}/approve", {})
    c.need(r.status_code == 200, f"approve the offering: 200, got {r.status_code} {r.text[:200]}")
    seller = created(c, api, "createAccount", ACCOUNT, "accountDetails", "accountId")
    buyer = created(c, api, "createAccount", ACCOUNT, "accountDetails", "accountId")
    before = h.sqs_batches["ats-book"]
    orders = {}
    for member, action in ((seller, "Sell"), (buyer, "Buy")):
        params = {
            "memberid": member, "issuerid": ids["issuer"], "securityid": ids["offering"], "type": "Limit",
            "action": action, "quantity": "10", "price": "10", "expiration": "GTC", "disclosePrice": "Yes",
            "solicited": "Unsolicited",
        }
        r, j = api.call("createOrder", params)
        c.need(code(j) == "101", f"createOrder {action}: 101, got {r.text[:300]}")
        orders[action] = j["orderDetails"]["orderId"]

    def statuses():
        out = {}
        for action, oid in orders.items():
            r, j = api.call("getOrder", {"orderid": oid})
            out[action] = ((j or {}).get("orderDetails") or [{}])[0].get("orderStatus")
        return out

    done = wait_for(lambda: set(statuses().values()) == {"Executed"}, 30, 0.5)
    c.ok(done, f"both orders end Executed (ats-book via OrderQueue): {statuses()}")
    c.ok(h.sqs_batches["ats-book"] > before, "the ats-book function consumed the order queue")
    if done:
        api.succeeded["matchedTradenotify"] += 1  # the one match's webhook


def part_schedules(h, c):
    """Every schedule of the template: its function answers its Input without an error."""
    c.need(h.schedules, "the template has schedules")
    for binary, name, event in h.schedules:
        ok, payload = h.invoke(binary, event)
        c.ok(ok and isinstance(payload, dict), f"schedule {name}: {binary} answers {json.dumps(event)} without an error: {payload}")


def part_dead_letters(h, c):
    """A message its consumer cannot read, on each queue with a dead-letter queue: the
    function reports it failed (ReportBatchItemFailures), SQS hands it out again after the
    visibility timeout (shortened by the harness), and after the template's maxReceiveCount
    receives it is parked in that queue's dead-letter queue, alone: nothing else went there."""
    sqs = h.client("sqs")
    c.need(h.redrives, "the template has queues with dead-letter queues")
    sent = {}
    for queue, dlq, receives in h.redrives:
        body = f"unreadable {queue} message {uuid.uuid4().hex}"
        extra = {}
        if h.atts[(queue, "QueueName")].endswith(".fifo"):
            extra = {"MessageGroupId": "e2e-unreadable", "MessageDeduplicationId": uuid.uuid4().hex}
        sqs.send_message(QueueUrl=h.refs[queue], MessageBody=body, **extra)
        sent[queue] = (dlq, receives, body)
    parked = collections.defaultdict(list)

    def all_parked():
        for queue, (dlq, _, _) in sent.items():
            got = sqs.receive_message(QueueUrl=h.refs[dlq], MaxNumberOfMessages=10, AttributeNames=["All"])
            for m in got.get("Messages", []):
                parked[queue].append(m)
                sqs.delete_message(QueueUrl=h.refs[dlq], ReceiptHandle=m["ReceiptHandle"])
        return all(parked[q] for q in sent)

    wait_for(all_parked, 60, 1)
    time.sleep(1)
    all_parked()  # anything else parked behind it
    for queue, (dlq, receives, body) in sent.items():
        bodies = [m["Body"] for m in parked[queue]]
        c.ok(bodies == [body], f"{queue}: the unreadable message, and only it, is parked in {dlq}: {bodies}")
        # The count moves with the message: the consumer's receives, then the test's own.
        counts = [m["Attributes"].get("ApproximateReceiveCount") for m in parked[queue]]
        c.ok(counts == [str(receives + 1)], f"{queue}: parked after {receives} receives (maxReceiveCount): {counts}")


def part_webhooks(c, api, hooks):
    """Each hooked call that succeeded has its webhook delivered through the webhooks
    function, once per call."""
    expected = {m: api.succeeded[m] for m in HOOKED if api.succeeded[m]}
    wait_for(lambda: all(hooks.count(m) >= n for m, n in expected.items()), 20, 0.5)
    time.sleep(2)  # room for a duplicate to show
    for m, n in expected.items():
        got = hooks.count(m)
        c.ok(got == n, f"webhook {m} arrives {n} time(s) through the webhooks function (got {got})")
    c.ok(len(expected) == len(HOOKED), f"every hooked method was called: missing {sorted(set(HOOKED) - set(expected))}")


def sweep_requests(h, client, ids):
    """One request per HttpApi route of the template, path parameters filled in, and each
    `/v3/` one again under the legacy prefix."""
    fills = {k: ids[v] for k, v in (("accountId", "account"), ("partyId", "party"), ("offeringId", "offering")) if v in ids}
    legacy = next(r for r in h.routes if r.greedy and r.path.startswith("/tapiv3/"))
    out = []
    for route in h.routes:
        if route.path == "$default":
            continue
        path = route.path
        if route.greedy and route.path.startswith("/operator/"):
            path = f"/operator/clients/{client}/keys"
            method = "GET"
        elif route.greedy:
            path = route.path.replace("{proxy+}", "getAccount")
            method = "POST"
        else:
            for seg in route.segments:
                if seg.startswith("{"):
                    path = path.replace(seg, fills.get(seg.strip("{}"), "dummy"))
            method = "POST" if route.method == "ANY" else route.method
        out.append((route, method, path))
        if path.startswith("/v3/"):
            # The incumbent's prefix: the legacy function must know every operation too.
            out.append((legacy, method, "/tapiv3/index.php" + path))
    return out


def part_sweep(h, c, api, client, ids):
    """Every route reaches a function that knows it: no 5xx, JSON, not an unknown route."""
    for route, method, path in sweep_requests(h, client, ids):
        headers = {"Authorization": api.auth}
        if route.iam:
            headers = {IAM_HEADER: OPERATOR}
        kwargs = {}
        if method == "PATCH":
            kwargs["json"] = {"account": {}}
        elif method == "POST" and not route.iam:
            kwargs["data"] = {"accountId": ids.get("account", "A0000000")}
        r = api.s.request(method, h.url + path, headers=headers, timeout=60, **kwargs)
        what = f"{route.key} -> {route.function} ({method} {path}): {r.status_code} {r.text[:200]}"
        j = _json(r)
        if VERBOSE:
            print(f"  {route.key} -> {route.function}: {r.status_code} {code(j) if isinstance(j, dict) else ''}")
        if r.status_code == 304:  # a PATCH that changed nothing: no body, by HTTP's rules
            c.ok(True, what)
            continue
        c.ok(r.status_code < 500, f"no 5xx: {what}")
        c.ok(j is not None, f"a JSON body: {what}")
        unknown = isinstance(j, dict) and code(j) == "1404" and str(j.get("statusDesc", "")).startswith(UNKNOWN_ROUTE)
        c.ok(not unknown, f"the function knows the route: {what}")

    r = api.s.post(h.url + "/v3/noSuchOperation", headers={"Authorization": api.auth}, timeout=60)
    j = _json(r)
    c.ok(r.status_code == 404 and code(j) == "1404", f"$default: an unknown operation is 1404, got {r.status_code} {r.text[:200]}")
    r = api.s.get(h.url + "/tapiv3/index.php/v3/ping", headers={"Authorization": api.auth}, timeout=60)
    c.ok(r.status_code == 200 and code(_json(r)) == "101", f"legacy prefix ping: 101, got {r.status_code} {r.text[:200]}")
    before = h.front_requests
    status = oversized_request(h.url, "/v3/createParty", api.auth)
    c.ok(status == 413 and h.front_requests == before, f"a body over 10 MB: 413 without an invocation, got {status}")
    r = api.s.get(h.url + "/openapi.json", timeout=60)
    j = _json(r)
    c.ok(r.status_code == 200 and isinstance(j, dict) and "openapi" in j and j.get("paths"), f"GET /openapi.json: the document, got {r.status_code} {r.text[:200]}")


def relevant(h, failures):
    """The functions a failure names (every function when none is named)."""
    text = "\n".join(failures)
    named = [b for b in h.functions if re.search(rf"(?<![\w-]){re.escape(b)}(?![\w-])", text)]
    return named or list(h.functions)


def oversized_request(url, path, auth):
    """The status of a POST announcing a body over API Gateway's 10 MB (not sent: the
    gateway answers from the headers)."""
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.putrequest("POST", path)
        conn.putheader("Authorization", auth or "")
        conn.putheader("Content-Type", "application/octet-stream")
        conn.putheader("Content-Length", str(10 * 1024 * 1024 + 1))
        conn.endheaders()
        return conn.getresponse().status
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    finally:
        conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bins", required=True, help="directory of the function binaries")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    parser.add_argument("--verbose", action="store_true", help="print every wiring-sweep answer")
    parser.add_argument("--template", default=str(TEMPLATE), help="another template (to prove the test fails)")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose

    started = time.time()
    c = Check()
    hooks = Receiver()
    h = Harness(args.bins, template=args.template, redrive_visibility=1)
    part = "start"
    try:
        h.start()
        print(f"harness: {len(h.functions)} functions, {len(h.routes)} routes, {len(h.mappings)} SQS mappings "
              f"({time.time() - started:.1f} s); logs in {h.workdir}", flush=True)
        api = Api(h.url)
        parts = [
            ("first invocations", lambda: part_first_invocations(h, c)),
            ("operator API", lambda: ctx.update(client=part_operator(h, c, api, hooks))),
            ("journey and ACH batch", lambda: part_journey(h, c, api, ctx["client"], ids)),
            ("document", lambda: part_document(h, c, api, ids)),
            ("ATS", lambda: part_ats(h, c, api, ctx["client"], ids)),
            ("schedules", lambda: part_schedules(h, c)),
            ("dead letters", lambda: part_dead_letters(h, c)),
            ("webhooks", lambda: ctx["client"] and part_webhooks(c, api, hooks)),
            # Needs nothing from the parts before: wiring mistakes show even when they fail.
            ("wiring sweep", lambda: part_sweep(h, c, api, ctx.get("client", "dummy"), ids)),
        ]
        ctx, ids = {}, {}
        for part, run in parts:
            t0 = time.time()
            n = len(c.failures)
            try:
                run()
            except Failed:
                pass
            except KeyError as e:
                if n == len(c.failures):
                    c.ok(False, f"skipped: needs {e} from an earlier part")
            print(f"{'ok  ' if len(c.failures) == n else 'FAIL'} {part} ({time.time() - t0:.1f} s)", flush=True)
    except Exception as e:  # the harness itself failed
        c.ok(False, f"{part}: {type(e).__name__}: {e}")
    finally:
        dead = h.dead() if h.functions else {}
        h.stop()
    c.ok(not dead, f"no function process died during the run: {dead}")
    for f in h.failures:
        c.ok(False, f"harness saw: {f}")

    elapsed = time.time() - started
    if c.failures:
        print(f"\nFAILED: {len(c.failures)} of {c.passed + len(c.failures)} checks ({elapsed:.1f} s)")
        for f in c.failures:
            print(f"  - {f}")
        named = relevant(h, c.failures)
        for binary in named:
            print(f"\n--- {binary} log (tail) ---\n{h.log_tail(binary, 15 if len(named) < 4 else 5)}")
        print(f"\nlogs: {h.workdir}")
        return 1
    print(f"\nPASSED: {c.passed} checks, {h.front_requests} API requests, "
          f"{sum(h.sqs_batches.values())} SQS batches, {len(h.functions)} functions ({elapsed:.1f} s)")
    if not args.keep:
        h.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())

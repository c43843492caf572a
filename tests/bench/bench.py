#!/usr/bin/env python3
"""The benchmarks of DESIGN.md's budgets, as ratios to references built from this repository
and measured in the same run (these machines are too noisy for absolute figures).

  tests/bench/run.sh [--rounds N] [--duration S] [--coldstarts N] [--only http,cold,size]

- http: the local API (embedded store) against bench-ref-server (bare hyper), taking turns
  for each scenario and round (who goes first alternates), the same requests for both:
  ping, createParty, createTrade, getTrade, a list page of 10 accounts and createOrder
  (every second order matches the one before). The figure is the server's CPU time
  (utime + stime of the whole process) per request, from the run's start until the server
  is idle again (the order books match after the answers; createOrder runs 1 s), and
  requests/s, medians of the rounds.
- cold: each Lambda binary and bench-hello-lambda, spawned in turns against a fake Runtime
  API that hands them an unauthenticated `GET /v3/ping`: process start to the answer of
  that first invocation (the workers and the operator API, which answer no ping, to their first poll).
- size: each Lambda binary stripped, against the hello.

Everything is built with the release profile, as deployed. Needs cargo, wrk, strip and
Python 3 (stdlib).
"""

import argparse
import base64
import http.server
import json
import os
import pathlib
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")
CLIENT, KEY, OPERATOR = "bench-client", "bench-key-0123456789", "bench-operator-token"
HELLO = "bench-hello-lambda"

# ---------------------------------------------------------------- building


def lambda_binaries():
    """The Lambda functions' binaries: every binary of the crates under functions/ but the
    local API's."""
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout
    )
    bins = []
    for package in meta["packages"]:
        if (ROOT / "functions") not in pathlib.Path(package["manifest_path"]).parents:
            continue
        bins += [t["name"] for t in package["targets"] if "bin" in t["kind"] and t["name"] != "local-api"]
    return sorted(bins)


def build(bins):
    cmd = ["cargo", "build", "--release", "--message-format=json-render-diagnostics"]
    for b in bins:
        cmd += ["--bin", b]
    print(f"building {len(bins)} binaries (release profile)...", flush=True)
    out = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    paths = {}
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            paths[msg["target"]["name"]] = msg["executable"]
    return paths


# ---------------------------------------------------------------- http


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def request(base, method, path, form=None, token=None, body=None):
    data = None
    headers = {"Authorization": f"Bearer {token or f'{CLIENT}:{KEY}'}"}
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return {"http": e.code, "body": e.read().decode(errors="replace")}


def ok(reply, what):
    if not isinstance(reply, dict) or reply.get("statusCode") not in (None, "101") or "http" in reply:
        sys.exit(f"bench: seeding failed at {what}: {reply}")
    return reply


def seed(base):
    """The records the scenarios act on: a party linked to two accounts, an approved offering
    of a billion units at 1.00, a market open around the clock, a trade."""
    party = ok(request(base, "PUT", "/v3/createParty", {
        "firstName": "Ann", "lastName": "Lee", "dob": "01-02-1980", "primCountry": "USA",
        "primAddress1": "1 Main St", "primCity": "Austin", "primState": "TX",
        "primZip": "78701", "emailAddress": "ann@example.com"}), "createParty")
    party_id = party["partyDetails"][1][0]["partyId"]
    accounts = []
    for i in range(20):
        a = ok(request(base, "PUT", "/v3/createAccount", {
            "accountRegistration": f"Bench Account {i}", "type": "Individual",
            "domesticYN": "domestic_account", "streetAddress1": "1 Main St", "city": "Austin",
            "state": "TX", "zip": "78701", "country": "USA"}), "createAccount")
        accounts.append(a["accountDetails"][0]["accountId"])
    for a in accounts[:2]:
        ok(request(base, "PUT", "/v3/createLink", {
            "firstEntryType": "Account", "firstEntry": a, "relatedEntryType": "IndivACParty",
            "relatedEntry": party_id, "linkType": "owner", "primary_value": "1"}), "createLink")
    issuer = ok(request(base, "PUT", "/v3/createIssuer", {
        "issuerName": "Acme Capital", "firstName": "Ada", "lastName": "Stone",
        "email": "ada@acme.example"}), "createIssuer")["issuerDetails"][1][0]["issuerId"]
    offering = ok(request(base, "PUT", "/v3/createOffering", {
        "issuerId": issuer, "issueName": "Bench Series A", "issueType": "Equity",
        "targetAmount": "1000", "minAmount": "1", "maxAmount": "1000000000", "unitPrice": "1",
        "startDate": "01-01-2026", "endDate": "12-31-2099", "offeringText": "Bench shares",
        "stampingText": "CONFIDENTIAL"}), "createOffering")["offeringDetails"][1][0]["offeringId"]
    op = f"/operator/clients/{CLIENT}"
    ok(request(base, "POST", f"{op}/offerings/{offering}/approve", token=OPERATOR, body={}), "approve")
    day = {"closed": False, "start": "00:00", "end": "24:00"}
    days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    ok(request(base, "PUT", f"{op}/market-hours", token=OPERATOR, body={d: day for d in days}), "market-hours")
    trade_form = {"accountId": accounts[0], "offeringId": offering, "transactionType": "ACH",
                  "transactionUnits": "1"}
    trade = ok(request(base, "POST", "/v3/createTrade", trade_form), "createTrade")
    trade_id = trade["purchaseDetails"][1][0]["tradeId"]
    order = {"issuerid": issuer, "securityid": offering, "type": "Limit", "quantity": "1",
             "price": "1", "expiration": "GTC", "disclosePrice": "Yes", "solicited": "Unsolicited"}
    sell = urllib.parse.urlencode({**order, "memberid": accounts[0], "action": "Sell"})
    buy = urllib.parse.urlencode({**order, "memberid": accounts[1], "action": "Buy"})
    query = urllib.parse.urlencode({"accountId": accounts[0], "tradeId": trade_id})
    return [
        ("ping", "/v3/ping", ["static", "GET"]),
        ("createParty", "/v3/createParty", ["party", "PUT"]),
        ("createTrade", "/v3/createTrade", ["static", "POST", urllib.parse.urlencode(trade_form)]),
        ("getTrade", f"/v3/getTrade?{query}", ["static", "GET"]),
        ("accounts", "/v3/accounts?limit=10", ["static", "GET"]),
        ("createOrder", "/v3/createOrder", ["alt", "POST", sell, buy]),
    ]


def wrk(base, path, args, duration, runid):
    mode, method, *bodies = args
    cmd = ["wrk", "-t1", "-c32", f"-d{duration}", "--latency", "-H", f"Authorization: Bearer {CLIENT}:{KEY}",
           "-s", str(HERE / "bench.lua"), base + path, "--", mode, method, runid, *bodies]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    stat = next(line for line in out.splitlines() if line.startswith("BENCHSTAT"))
    reqs, errors, bad, not_ok = map(int, stat.split()[1:])
    return reqs, errors + bad + not_ok


def serve(binary, env):
    return subprocess.Popen([binary], env={**os.environ, **env}, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_ready(base, proc):
    for _ in range(600):
        if proc.poll() is not None:
            sys.exit(f"bench: {base} exited with {proc.returncode}")
        try:
            urllib.request.urlopen(base + "/v3/ping", timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"bench: {base} did not answer")


def settle(pid, limit=900):
    """Waits until the server is idle: the work its answers left behind (the order books
    matching what createOrder queued) counts in the run's CPU, and never in the next's."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(0.5)
        if cpu_seconds(pid) - before < 0.02:
            return
    sys.exit(f"bench: the server was still busy {limit} s after a run")


def http_bench(paths, rounds, duration):
    tmp = tempfile.mkdtemp(prefix="ips-bench-")
    ports = {"ref": free_port(), "api": free_port()}
    procs = {
        "ref": serve(paths["bench-ref-server"], {"BENCH_BIND": f"127.0.0.1:{ports['ref']}"}),
        "api": serve(paths["local-api"], {
            "IPS_BIND": f"127.0.0.1:{ports['api']}", "IPS_DATA_DIR": f"{tmp}/data",
            "IPS_DEV_CLIENT_ID": CLIENT, "IPS_DEV_API_KEY": KEY, "IPS_OPERATOR_TOKEN": OPERATOR,
            "RUST_LOG": os.environ.get("RUST_LOG", "info")}),
    }
    bases = {k: f"http://127.0.0.1:{p}" for k, p in ports.items()}
    results = {}
    try:
        for k in procs:
            wait_ready(bases[k], procs[k])
        scenarios = seed(bases["api"])
        for r in range(rounds):
            for name, path, args in scenarios:
                for k in (("ref", "api") if r % 2 == 0 else ("api", "ref")):
                    runid = f"{k}{r}{time.monotonic_ns()}"
                    if r == 0:
                        wrk(bases[k], path, args, "1s", runid + "w")
                        settle(procs[k].pid)
                    before, started = cpu_seconds(procs[k].pid), time.monotonic()
                    # The books match one order at a time after the answers: a short run,
                    # measured until they are idle.
                    reqs, bad = wrk(bases[k], path, args, "1s" if name == "createOrder" else f"{duration}s", runid)
                    elapsed = time.monotonic() - started
                    settle(procs[k].pid)
                    cpu = cpu_seconds(procs[k].pid) - before
                    results.setdefault((name, k), []).append((cpu / reqs * 1e6, reqs / elapsed, bad, reqs))
                    print(f"  round {r + 1} {name:12} {k:3}: {cpu / reqs * 1e6:7.2f} µs/req, {reqs:7d} requests, {bad} not ok", flush=True)
    finally:
        for p in procs.values():
            p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for name, _, _ in scenarios:
        ref, api = results[(name, "ref")], results[(name, "api")]
        cpu = statistics.median(x[0] for x in api) / statistics.median(x[0] for x in ref)
        rps = statistics.median(x[1] for x in api) / statistics.median(x[1] for x in ref)
        bad = sum(x[2] for x in api)
        rows.append((name, statistics.median(x[0] for x in ref), statistics.median(x[0] for x in api), cpu, rps, bad, sum(x[3] for x in api)))
    return rows


# ---------------------------------------------------------------- cold start

PING = {
    "version": "2.0", "routeKey": "$default", "rawPath": "/v3/ping", "rawQueryString": "",
    "headers": {"accept": "*/*", "host": "bench.local"},
    "requestContext": {
        "accountId": "123456789012", "apiId": "bench", "domainName": "bench.local",
        "domainPrefix": "bench", "requestId": "bench", "routeKey": "$default", "stage": "$default",
        "time": "26/Nov/2026:00:00:00 +0000", "timeEpoch": 1795651200000,
        "http": {"method": "GET", "path": "/v3/ping", "protocol": "HTTP/1.1",
                 "sourceIp": "127.0.0.1", "userAgent": "bench"},
    },
    "isBase64Encoded": False,
}


class Runtime(http.server.BaseHTTPRequestHandler):
    """A fake Lambda Runtime API: the first poll gets the ping event; the answer (or error)
    ends the run."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def do_GET(self):
        run = self.server.run
        if run.get("polled"):
            time.sleep(5)  # a second poll: the run is over
            return
        run["polled"] = time.perf_counter()
        body = json.dumps(PING).encode()
        self.send_response(200)
        for k, v in (("Lambda-Runtime-Aws-Request-Id", "bench-1"),
                     ("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 30000)),
                     ("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:bench"),
                     ("Content-Length", str(len(body)))):
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        run = self.server.run
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        run["answered"] = time.perf_counter()
        run["error"] = self.path.endswith("/error")
        run["body"] = body
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()
        run["done"].set()


def answered_ping(raw):
    """Whether a function's answer is the API's `103` to the ping (the body of its API
    Gateway response)."""
    try:
        outer = json.loads(raw)
        inner = outer.get("body") or ""
        if outer.get("isBase64Encoded"):
            inner = base64.b64decode(inner).decode()
        return json.loads(inner).get("statusCode") == "103"
    except (ValueError, AttributeError):
        return False


class RuntimeServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the killed function's held poll resets its connection: expected


def cold_once(binary):
    server = RuntimeServer(("127.0.0.1", 0), Runtime)
    server.run = {"done": threading.Event()}
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{server.server_address[1]}",
        "AWS_LAMBDA_FUNCTION_NAME": "bench", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST", "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "AKIABENCHBENCHBENCH0", "AWS_SECRET_ACCESS_KEY": "bench-not-a-secret",
        "IPS_TABLE": "ips", "IPS_BUCKET": "ips-documents",
        "IPS_WEBHOOK_QUEUE_URL": "http://127.0.0.1:9/000000000000/webhooks",
        "IPS_BATCH_QUEUE_URL": "http://127.0.0.1:9/000000000000/batches",
        "IPS_ORDER_QUEUE_URL": "http://127.0.0.1:9/000000000000/orders.fifo",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "RUST_LOG": "info",
    }
    started = time.perf_counter()
    proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server.run["done"].wait(10)
    proc.kill()
    proc.wait()
    server.shutdown()
    run = server.run
    if "polled" not in run:
        return None, None
    http_ok = "answered" in run and not run["error"] and answered_ping(run["body"])
    return (run["polled"] - started) * 1e3, ((run["answered"] - started) * 1e3 if http_ok else None)


def cold_bench(paths, bins, runs):
    samples = {b: ([], []) for b in [HELLO, *bins]}
    for _ in range(runs):
        for b in samples:
            poll, answer = cold_once(paths[b])
            if poll is not None:
                samples[b][0].append(poll)
            if answer is not None:
                samples[b][1].append(answer)
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    hello = med(samples[HELLO][1])
    return hello, [(b, med(samples[b][0]), med(samples[b][1])) for b in bins]


def stripped_size(binary):
    with tempfile.NamedTemporaryFile() as f:
        shutil.copyfile(binary, f.name)
        subprocess.run(["strip", f.name], check=True)
        return os.path.getsize(f.name)


# ---------------------------------------------------------------- report


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5, help="seconds per measured run")
    ap.add_argument("--coldstarts", type=int, default=20, help="cold starts per binary")
    ap.add_argument("--only", default="http,cold,size")
    a = ap.parse_args()
    parts = set(a.only.split(","))
    fns = lambda_binaries() if parts & {"cold", "size"} else []
    want = (["local-api", "bench-ref-server"] if "http" in parts else []) + ([HELLO] + fns if fns else [])
    paths = build(want)
    budgets = {"ping": 1.3, "createParty": 4, "accounts": 8}
    if "http" in parts:
        rows = http_bench(paths, a.rounds, a.duration)
        print("\n| scenario | bare hyper µs/req | API µs/req | CPU ratio | budget | req/s ratio | not ok |")
        print("|---|---|---|---|---|---|---|")
        for name, ref, api, cpu, rps, bad, total in rows:
            budget = f"≤ {budgets[name]}" if name in budgets else ""
            print(f"| {name} | {ref:.2f} | {api:.2f} | x{cpu:.2f} | {budget} | x{rps:.2f} | {bad} of {total} |")
    if "cold" in parts:
        hello, rows = cold_bench(paths, fns, a.coldstarts)
        if hello is None:
            sys.exit("bench: the hello never answered its ping")
        print(f"\ncold start ({a.coldstarts} runs each, medians), hello answers in {hello:.2f} ms; budget ≤ x1.5")
        print("| function | first poll ms | ping answered ms | ratio to hello |")
        print("|---|---|---|---|")
        for b, poll, answer in rows:
            if poll is None:
                print(f"| {b} | never polled | | |")
                continue
            ratio = f"x{answer / hello:.2f}" if answer and hello else "(no 103 to a ping: a worker or the operator API)"
            print(f"| {b} | {poll:.2f} | {f'{answer:.2f}' if answer else '-'} | {ratio} |")
    if "size" in parts:
        hello = stripped_size(paths[HELLO])
        print(f"\nstripped size, hello {hello / 1e6:.2f} MB; budget ≤ 6 MB (legacy excepted)")
        print("| function | MB | ratio to hello |")
        print("|---|---|---|")
        for b in fns:
            s = stripped_size(paths[b])
            print(f"| {b} | {s / 1e6:.2f} | x{s / hello:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A local stand-in for the AWS the template deploys to, for the real function binaries.

It reads infra/template.yaml and builds, on one machine:

- moto's server (tests/moto_serial.py) holding the template's table, queues and bucket;
- one process per function binary, each talking to its own fake Lambda Runtime API (so the
  binaries run exactly as they do in Lambda: lambda_runtime polls for the next invocation);
- an API Gateway HTTP API front (payload format 2.0) routing the template's HttpApi events,
  with the operator routes behind a stand-in for IAM authorization;
- the SQS event-source mappings (a poller per SQS event, batch item failures honoured).

Schedules do not run on timers: a test invokes a function with a schedule's Input itself.
Run as a script (`.venv/bin/python tests/lambda/harness.py --bins target/debug`), it serves
the stack until interrupted.

    with Harness("target/lambda") as h:
        requests.get(h.url + "/v3/ping")
        ok, payload = h.invoke("batches", {"batch": "ach"})

Only the standard library, boto3 and PyYAML (what moto[server] brings) are used.
"""

import base64
import collections
import hashlib
import importlib.util
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parent.parent.parent
TEMPLATE = ROOT / "infra" / "template.yaml"
REGION = "us-east-1"
ACCOUNT = "123456789012"
API_ID = "e2eharness"
# The header that stands for a SigV4 signature on IAM-authorized routes: its value is the
# caller's ARN. (The front never forwards it to a function.)
IAM_HEADER = "x-harness-iam-caller"
# API Gateway's limits for HTTP APIs and Lambda's for a synchronous response.
MAX_REQUEST_BODY = 10 * 1024 * 1024
MAX_RESPONSE = 6 * 1024 * 1024
# Parameters of the template the harness sets (anything else referenced fails loudly).
PARAMETERS = {"Environment": "sandbox"}
TEXT_TYPES = re.compile(r"^(text/|application/(json|x-www-form-urlencoded|xml|[^;]*\+json|[^;]*\+xml))", re.I)


def _load_check_wiring():
    """infra/check-wiring.py, for its CloudFormation-aware YAML loader (its name has a hyphen)."""
    spec = importlib.util.spec_from_file_location("check_wiring", ROOT / "infra" / "check-wiring.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, lines=40):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(collections.deque(f, lines))
    except OSError as e:
        return f"({e})"


def end_process(proc):
    """Stops a child process: politely, then (after 5 s) for good."""
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class HarnessError(Exception):
    pass


# ---------------------------------------------------------------- Lambda Runtime API


class Invocation:
    def __init__(self, event, deadline_ms, arn):
        self.id = str(uuid.uuid4())
        self.event = event
        self.deadline_ms = deadline_ms
        self.arn = arn
        self.done = threading.Event()
        self.ok = None
        self.payload = None


class FunctionProcess:
    """One function: its settings from the template, its fake Runtime API, its process."""

    def __init__(self, logical_id, binary, path, env, timeout, log_path):
        self.logical_id = logical_id
        self.binary = binary
        self.path = path
        self.env = env
        self.timeout = timeout
        self.log_path = log_path
        self.arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{logical_id}"
        self.pending = queue.Queue()
        self.by_id = {}
        self.lock = threading.Lock()  # one instance: one invocation at a time
        self.init_error = None
        self.proc = None
        self.server = None
        self.stopping = False
        self.invocations = 0

    def start(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _runtime_handler(self))
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        env = dict(self.env, AWS_LAMBDA_RUNTIME_API=f"127.0.0.1:{self.server.server_address[1]}")
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([str(self.path)], env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def exited(self):
        """The exit code when the process has ended (None while it runs)."""
        return self.proc.poll() if self.proc else None

    def invoke(self, event, timeout=None):
        """Queues one invocation and waits for its answer: (ok, payload)."""
        limit = self.timeout if timeout is None else timeout
        with self.lock:
            self.invocations += 1
            inv = Invocation(event, int((time.time() + self.timeout) * 1000), self.arn)
            self.by_id[inv.id] = inv
            self.pending.put(inv)
            # The function's Timeout plus a margin for the start of a debug build.
            end = time.time() + limit + 5
            while not inv.done.wait(0.2):
                if self.init_error is not None:
                    return False, {"errorType": "InitError", "errorMessage": self.init_error}
                code = self.exited()
                if code is not None:
                    return False, {"errorType": "ProcessExited", "errorMessage": f"exit code {code}"}
                if time.time() > end:
                    return False, {"errorType": "Timeout", "errorMessage": f"no answer in {limit} s"}
            return inv.ok, inv.payload

    def stop(self):
        self.stopping = True
        end_process(self.proc)
        if self.server:
            self.server.shutdown()
            self.server.server_close()
        if getattr(self, "log", None):
            self.log.close()


def _runtime_handler(fn):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _send(self, status, body=b"", headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def do_GET(self):
            if self.path != "/2018-06-01/runtime/invocation/next":
                return self._send(404)
            while True:
                try:
                    inv = fn.pending.get(timeout=0.5)
                    break
                except queue.Empty:
                    if fn.stopping:
                        self.close_connection = True
                        return
            self._send(
                200,
                json.dumps(inv.event).encode(),
                [
                    ("Content-Type", "application/json"),
                    ("Lambda-Runtime-Aws-Request-Id", inv.id),
                    ("Lambda-Runtime-Deadline-Ms", str(inv.deadline_ms)),
                    ("Lambda-Runtime-Invoked-Function-Arn", inv.arn),
                    ("Lambda-Runtime-Trace-Id", f"Root=1-{int(time.time()):08x}-{uuid.uuid4().hex[:24]};Sampled=0"),
                ],
            )

        def do_POST(self):
            body = self._body()
            if self.path == "/2018-06-01/runtime/init/error":
                fn.init_error = body.decode(errors="replace") or "init error"
                return self._send(202, b'{"status":"OK"}')
            m = re.fullmatch(r"/2018-06-01/runtime/invocation/([^/]+)/(response|error)", self.path)
            inv = fn.by_id.pop(m.group(1), None) if m else None
            if inv is None:
                return self._send(400, b'{"errorMessage":"unknown request id"}')
            try:
                inv.payload = json.loads(body) if body else None
            except ValueError:
                inv.payload = body.decode(errors="replace")
            inv.ok = m.group(2) == "response"
            inv.done.set()
            self._send(202, b'{"status":"OK"}')

    return Handler


# ---------------------------------------------------------------- API Gateway front


class Route:
    def __init__(self, method, path, function, iam):
        self.method, self.path, self.function, self.iam = method, path, function, iam
        self.key = "$default" if path == "$default" else f"{method} {path}"
        self.segments = [] if path == "$default" else path.strip("/").split("/")
        self.greedy = bool(self.segments) and self.segments[-1].endswith("+}")
        self.params = any(s.startswith("{") for s in self.segments)

    def match(self, method, path):
        """The path parameters when this route takes (method, path), else None."""
        if self.method not in ("ANY", method) or self.path == "$default":
            return None
        got = path.strip("/").split("/")
        fixed = self.segments[:-1] if self.greedy else self.segments
        if len(got) < len(fixed) + (1 if self.greedy else 0) or (not self.greedy and len(got) != len(fixed)):
            return None
        params = {}
        for want, seg in zip(fixed, got):
            if want.startswith("{"):
                if not seg:
                    return None
                params[want.strip("{}")] = urllib.parse.unquote(seg)
            elif want != seg:
                return None
        if self.greedy:
            params[self.segments[-1].strip("{}+")] = urllib.parse.unquote("/".join(got[len(fixed) :]))
        return params

    def rank(self):
        """API Gateway's preference: exact paths, then {param} paths (more literal segments
        first), then greedy ones (longer prefixes first); a method-specific route beats ANY."""
        kind = 2 if self.greedy else 1 if self.params else 0
        literal = sum(1 for s in self.segments if not s.startswith("{"))
        return (kind, -literal, self.method == "ANY")


def select_route(routes, method, path):
    """(route, path parameters) API Gateway would pick, or (None, None)."""
    candidates = []
    for r in routes:
        params = r.match(method, path)
        if params is not None:
            candidates.append((r.rank(), r, params))
    if candidates:
        _, r, params = min(candidates, key=lambda c: c[0])
        return r, params
    default = [r for r in routes if r.path == "$default"]
    return (default[0], None) if default else (None, None)


def _front_handler(h):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _answer(self, status, body, headers=(), cookies=()):
            self.send_response(status)
            sent = set()
            for k, v in headers:
                if k.lower() in ("content-length", "connection", "transfer-encoding"):
                    continue
                self.send_header(k, v)
                sent.add(k.lower())
            for c in cookies:
                self.send_header("Set-Cookie", c)
            if "content-type" not in sent and body:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _gateway_error(self, status, message):
            self._answer(status, json.dumps({"message": message}).encode())

        def _any(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_REQUEST_BODY:
                # API Gateway refuses it before any function runs (and the body is not read).
                self.close_connection = True
                return self._gateway_error(413, "Request Entity Too Large")
            body = self.rfile.read(length) if length else b""
            parsed = urllib.parse.urlsplit(self.path)
            route, params = select_route(h.routes, self.command, parsed.path)
            if route is None:
                return self._gateway_error(404, "Not Found")
            caller = self.headers.get(IAM_HEADER)
            if route.iam and not caller:
                return self._gateway_error(403, "Forbidden")
            event = h.http_event(self.command, parsed, self.headers, body, route, params, caller if route.iam else None)
            h.front_requests += 1
            ok, payload = h.function(route.function).invoke(event)
            if not ok:
                h.note_failure(route.function, f"{self.command} {self.path}: invocation failed: {payload}")
                return self._gateway_error(502, "Internal Server Error")
            status, headers, cookies, out = response_of(payload)
            if out is None or len(out) > MAX_RESPONSE:
                return self._gateway_error(502, "Internal Server Error")
            self._answer(status, out, headers, cookies)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _any

    return Handler


def response_of(payload):
    """A payload-2.0 Lambda response as (status, [(header, value)], cookies, body bytes)."""
    if not isinstance(payload, dict) or "statusCode" not in payload:
        # API Gateway's inference for format 2.0: the whole JSON is the body of a 200.
        return 200, [("content-type", "application/json")], [], json.dumps(payload).encode()
    headers = [(k, str(v)) for k, v in (payload.get("headers") or {}).items()]
    for k, values in (payload.get("multiValueHeaders") or {}).items():
        headers += [(k, str(v)) for v in values if (k, str(v)) not in headers]
    body = payload.get("body") or ""
    try:
        data = base64.b64decode(body) if payload.get("isBase64Encoded") else body.encode()
    except ValueError:
        data = None
    return int(payload["statusCode"]), headers, list(payload.get("cookies") or []), data


# ---------------------------------------------------------------- the harness


class Harness:
    """The template's AWS on this machine. `bins` holds the binaries, as cargo lambda lays
    them out (`bins/<name>/bootstrap`) or cargo does (`bins/<name>`); `only` limits the
    functions started (binary names)."""

    def __init__(self, bins, template=TEMPLATE, only=None, workdir=None, quiet=False, redrive_visibility=None):
        self.bins = Path(bins)
        # Seconds of visibility for the queues with a dead-letter queue, instead of the
        # template's minutes, so that a test sees a failed message parked within seconds.
        self.redrive_visibility = redrive_visibility
        self.redrives = []  # (queue, its dead-letter queue, maxReceiveCount), logical IDs
        self.template_path = Path(template)
        self.only = set(only) if only else None
        self.workdir = Path(workdir) if workdir else None
        self.quiet = quiet
        self.functions = {}  # binary name -> FunctionProcess
        self.routes = []
        self.mappings = []
        self.schedules = []  # (binary, event name, the Input as an object)
        self.failures = []
        self.front_requests = 0
        self.sqs_batches = collections.Counter()
        self._stop = threading.Event()
        self._threads = []
        self._moto = None
        self._clients = {}
        self._front = None
        self._own_workdir = False

    # -- lifecycle

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        cw = _load_check_wiring()
        self.template = cw.load_template(self.template_path)
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="ips-lambda-e2e."))
            self._own_workdir = True
        try:
            self._start_moto()
            self._create_resources(cw)
            self._start_functions(cw)
            self._start_front()
            self._start_mappings()
        except BaseException:
            self.stop()
            raise

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(5)
        if self._front:
            self._front.shutdown()
            self._front.server_close()
        for fn in self.functions.values():
            fn.stop()
        end_process(self._moto)

    def cleanup(self):
        """Removes the work directory (logs included) when the harness made it."""
        if self._own_workdir and self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- moto and the template's resources

    def _start_moto(self):
        port = free_port()
        self.moto_url = f"http://127.0.0.1:{port}"
        self.moto_log = self.workdir / "moto.log"
        python = ROOT / ".venv" / "bin" / "python"
        python = python if python.exists() else Path(sys.executable)
        with open(self.moto_log, "ab") as log:
            self._moto = subprocess.Popen(
                [str(python), str(ROOT / "tests" / "moto_serial.py"), "-H", "127.0.0.1", "-p", str(port)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        end = time.time() + 30
        while time.time() < end:
            try:
                urllib.request.urlopen(self.moto_url + "/moto-api/", timeout=1).read()
                return
            except OSError:
                if self._moto.poll() is not None:
                    break
                time.sleep(0.1)
        raise HarnessError(f"moto did not start:\n{tail(self.moto_log)}")

    def client(self, service):
        """moto's client for `service`, built once (boto3's clients are thread-safe)."""
        if service not in self._clients:
            self._clients[service] = boto3.client(
                service,
                endpoint_url=self.moto_url,
                region_name=REGION,
                aws_access_key_id="test",
                aws_secret_access_key="test",
            )
        return self._clients[service]

    def _resources(self, kind):
        return {k: v for k, v in self.template["Resources"].items() if v.get("Type") == kind}

    def _create_resources(self, cw):
        self.refs = {}  # logical ID -> what !Ref gives
        self.atts = {}  # (logical ID, attribute) -> what !GetAtt gives
        for name, res in self._resources("AWS::DynamoDB::Table").items():
            p = res["Properties"]
            table = f"ips-e2e-{name.lower()}"
            self.client("dynamodb").create_table(
                TableName=table,
                BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=p["AttributeDefinitions"],
                KeySchema=p["KeySchema"],
                GlobalSecondaryIndexes=[
                    {"IndexName": g["IndexName"], "KeySchema": g["KeySchema"], "Projection": {"ProjectionType": "ALL"}}
                    for g in p.get("GlobalSecondaryIndexes", [])
                ],
            )
            ttl = p.get("TimeToLiveSpecification")
            if ttl and ttl.get("Enabled"):
                self.client("dynamodb").update_time_to_live(
                    TableName=table,
                    TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": True},
                )
            self.refs[name] = table
            self.atts[(name, "Arn")] = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table}"
        # Queues without a redrive policy first: the others name their ARNs.
        queues = self._resources("AWS::SQS::Queue")
        sqs = self.client("sqs")
        for name, res in sorted(queues.items(), key=lambda q: "RedrivePolicy" in (q[1].get("Properties") or {})):
            p = res.get("Properties") or {}
            fifo = bool(p.get("FifoQueue"))
            qname = f"ips-e2e-{name}" + (".fifo" if fifo else "")
            attrs = {}
            if fifo:
                attrs["FifoQueue"] = "true"
            for key in ("DelaySeconds", "VisibilityTimeout", "MessageRetentionPeriod", "ContentBasedDeduplication"):
                if key in p:
                    attrs[key] = str(p[key]).lower() if isinstance(p[key], bool) else str(p[key])
            if "RedrivePolicy" in p:
                rp = p["RedrivePolicy"]
                attrs["RedrivePolicy"] = json.dumps(
                    {"deadLetterTargetArn": self.resolve(rp["deadLetterTargetArn"]), "maxReceiveCount": rp["maxReceiveCount"]}
                )
                dlq = cw.getatt_name(rp["deadLetterTargetArn"])
                if dlq is None:
                    raise HarnessError(f"{name}: the harness needs the dead-letter queue as !GetAtt <queue>.Arn")
                self.redrives.append((name, dlq, int(rp["maxReceiveCount"])))
                if self.redrive_visibility is not None:
                    attrs["VisibilityTimeout"] = str(self.redrive_visibility)
            url = sqs.create_queue(QueueName=qname, Attributes=attrs)["QueueUrl"]
            arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            self.refs[name] = url
            self.atts[(name, "Arn")] = arn
            self.atts[(name, "QueueName")] = qname
            self.atts[(name, "QueueUrl")] = url
        for name in self._resources("AWS::S3::Bucket"):
            bucket = f"ips-e2e-{name.lower()}"
            self.client("s3").create_bucket(Bucket=bucket)
            self.refs[name] = bucket
            self.atts[(name, "Arn")] = f"arn:aws:s3:::{bucket}"

    def resolve(self, value):
        """A template value as the deployed stack gives it; an unknown reference fails."""
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, dict) and list(value) == ["Ref"]:
            name = value["Ref"]
            if name in PARAMETERS:
                return PARAMETERS[name]
            if name in self.refs:
                return self.refs[name]
            raise HarnessError(f"the harness cannot resolve !Ref {name}")
        if isinstance(value, dict) and list(value) == ["Fn::GetAtt"]:
            key = tuple(value["Fn::GetAtt"])
            if key in self.atts:
                return self.atts[key]
            raise HarnessError(f"the harness cannot resolve !GetAtt {'.'.join(key)}")
        raise HarnessError(f"the harness cannot resolve {value!r}")

    # -- functions

    def _binary_path(self, binary):
        for p in (self.bins / binary / "bootstrap", self.bins / binary):
            if p.is_file() and os.access(p, os.X_OK):
                return p
        raise HarnessError(f"no binary {binary} in {self.bins} (neither {binary}/bootstrap nor {binary})")

    def _start_functions(self, cw):
        globals_fn = (self.template.get("Globals") or {}).get("Function") or {}
        global_vars = ((globals_fn.get("Environment") or {}).get("Variables")) or {}
        logs = self.workdir / "logs"
        logs.mkdir(exist_ok=True)
        for logical_id, res in cw.functions_of(self.template).items():
            binary = cw.binary_of(res)
            if self.only and binary not in self.only:
                continue
            props = res.get("Properties") or {}
            own = ((props.get("Environment") or {}).get("Variables")) or {}
            env = {k: self.resolve(v) for k, v in {**global_vars, **own}.items()}
            timeout = int(props.get("Timeout", globals_fn.get("Timeout", 3)))
            logging = {**(globals_fn.get("LoggingConfig") or {}), **(props.get("LoggingConfig") or {})}
            env.update(
                {
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "AWS_ENDPOINT_URL": self.moto_url,
                    "AWS_REGION": REGION,
                    "AWS_DEFAULT_REGION": REGION,
                    "AWS_ACCESS_KEY_ID": "test",
                    "AWS_SECRET_ACCESS_KEY": "test",
                    "AWS_LAMBDA_FUNCTION_NAME": logical_id,
                    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(props.get("MemorySize", globals_fn.get("MemorySize", 128))),
                    "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
                    "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
                    "_HANDLER": str(props.get("Handler", globals_fn.get("Handler", "bootstrap"))),
                    "LAMBDA_TASK_ROOT": str(self._binary_path(binary).parent),
                    "TZ": ":UTC",
                    "LANG": "en_US.UTF-8",
                    "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{logical_id}",
                    "AWS_LAMBDA_LOG_STREAM_NAME": f"{time.strftime('%Y/%m/%d')}/[$LATEST]{uuid.uuid4().hex}",
                    # Debug builds need deep stacks on the runtime's threads (tests/run.sh).
                    "RUST_MIN_STACK": os.environ.get("RUST_MIN_STACK", "8388608"),
                }
            )
            if logging.get("LogFormat"):
                env["AWS_LAMBDA_LOG_FORMAT"] = logging["LogFormat"]
            fn = FunctionProcess(logical_id, binary, self._binary_path(binary), env, timeout, logs / f"{binary}.log")
            self.functions[binary] = fn
            for event_name, ev in (props.get("Events") or {}).items():
                ep = ev.get("Properties") or {}
                if ev.get("Type") == "HttpApi":
                    iam = ((ep.get("Auth") or {}).get("Authorizer")) == "AWS_IAM"
                    self.routes.append(Route(str(ep.get("Method", "ANY")).upper(), str(ep.get("Path", "$default")), binary, iam))
                elif ev.get("Type") in ("Schedule", "ScheduleV2"):
                    self.schedules.append((binary, event_name, json.loads(ep["Input"]) if "Input" in ep else {}))
                elif ev.get("Type") == "SQS":
                    queue_name = ep["Queue"]["Fn::GetAtt"][0]
                    self.mappings.append(
                        {
                            "function": binary,
                            "event": event_name,
                            "queue": queue_name,
                            "url": self.refs[queue_name],
                            "arn": self.resolve(ep["Queue"]),
                            "batch": int(ep.get("BatchSize", 10)),
                            "partial": "ReportBatchItemFailures" in (ep.get("FunctionResponseTypes") or []),
                        }
                    )
        for fn in self.functions.values():
            fn.start()

    def function(self, name):
        """A function by binary or logical ID."""
        if name in self.functions:
            return self.functions[name]
        for fn in self.functions.values():
            if fn.logical_id == name:
                return fn
        raise HarnessError(f"no function {name}")

    def invoke(self, name, event, timeout=None):
        """Invokes a function synchronously: (ok, payload); ok is False on an error answer,
        a timeout, an init error or a process that ended."""
        fn = self.function(name)
        ok, payload = fn.invoke(event, timeout)
        if not ok:
            self.note_failure(fn.binary, f"invocation failed: {payload}")
        return ok, payload

    def note_failure(self, binary, what):
        self.failures.append(f"{binary}: {what}")

    def dead(self):
        """Functions whose process ended, with their exit codes."""
        return {b: fn.exited() for b, fn in self.functions.items() if fn.exited() is not None}

    def log_tail(self, binary, lines=40):
        return tail(self.function(binary).log_path, lines)

    # -- API Gateway

    def _start_front(self):
        self._front = ThreadingHTTPServer(("127.0.0.1", 0), _front_handler(self))
        self._front.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._front.server_address[1]}"
        threading.Thread(target=self._front.serve_forever, daemon=True).start()

    def http_event(self, method, parsed, headers, body, route, params, caller):
        """The payload-2.0 event API Gateway sends for this request."""
        hdrs = {}
        cookies = []
        for k, v in headers.items():
            k = k.lower()
            if k == IAM_HEADER:
                continue
            if k == "cookie":
                cookies += [c.strip() for c in v.split(";") if c.strip()]
                continue
            hdrs[k] = f"{hdrs[k]},{v}" if k in hdrs else v
        hdrs.setdefault("x-forwarded-for", "127.0.0.1")
        hdrs.setdefault("x-forwarded-proto", "http")
        query = {}
        for k, v in urllib.parse.parse_qsl(parsed.query, keep_blank_values=True):
            query[k] = f"{query[k]},{v}" if k in query else v
        now = time.time()
        ctx = {
            "accountId": ACCOUNT,
            "apiId": API_ID,
            "domainName": f"{API_ID}.execute-api.{REGION}.amazonaws.com",
            "domainPrefix": API_ID,
            "http": {
                "method": method,
                "path": parsed.path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": base64.b64encode(uuid.uuid4().bytes[:10]).decode(),
            "routeKey": route.key,
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        }
        if caller:
            ctx["authorizer"] = {
                "iam": {
                    "accessKey": "ASIAHARNESS000000001",
                    "accountId": ACCOUNT,
                    "callerId": "AIDAHARNESS000000001",
                    "principalOrgId": None,
                    "userArn": caller,
                    "userId": "AIDAHARNESS000000001",
                }
            }
        event = {
            "version": "2.0",
            "routeKey": route.key,
            "rawPath": parsed.path,
            "rawQueryString": parsed.query,
            "headers": hdrs,
            "requestContext": ctx,
            "isBase64Encoded": False,
        }
        if cookies:
            event["cookies"] = cookies
        if query:
            event["queryStringParameters"] = query
        if params:
            event["pathParameters"] = params
        if body:
            text_like = TEXT_TYPES.match(hdrs.get("content-type", ""))
            try:
                event["body"] = body.decode("utf-8") if text_like else None
            except UnicodeDecodeError:
                event["body"] = None
            if event["body"] is None:
                event["body"] = base64.b64encode(body).decode()
                event["isBase64Encoded"] = True
        return event

    # -- SQS event sources

    def _start_mappings(self):
        for m in self.mappings:
            t = threading.Thread(target=self._poll, args=(m,), daemon=True, name=f"poll-{m['event']}")
            t.start()
            self._threads.append(t)

    def _poll(self, m):
        """One event-source mapping: receive, invoke, delete what succeeded. One batch in
        flight per mapping, which keeps a FIFO queue's order."""
        sqs = self.client("sqs")
        while not self._stop.is_set():
            try:
                got = sqs.receive_message(
                    QueueUrl=m["url"],
                    MaxNumberOfMessages=min(m["batch"], 10),
                    WaitTimeSeconds=1,
                    AttributeNames=["All"],
                    MessageAttributeNames=["All"],
                ).get("Messages", [])
            except Exception as e:  # moto stopping, or a transient error: try again
                if not self._stop.is_set():
                    self.note_failure(m["function"], f"ReceiveMessage on {m['queue']}: {e}")
                    time.sleep(0.5)
                continue
            if not got:
                continue
            records = [self._record(msg, m) for msg in got]
            self.sqs_batches[m["function"]] += 1
            ok, payload = self.invoke(m["function"], {"Records": records})
            if not ok:
                continue  # nothing deleted: SQS redelivers after the visibility timeout
            failed = set()
            if m["partial"] and isinstance(payload, dict):
                failed = {f.get("itemIdentifier") for f in payload.get("batchItemFailures") or []}
            for msg in got:
                if msg["MessageId"] not in failed:
                    sqs.delete_message(QueueUrl=m["url"], ReceiptHandle=msg["ReceiptHandle"])

    def _record(self, msg, m):
        attrs = msg.get("Attributes", {})
        keep = (
            "ApproximateReceiveCount",
            "SentTimestamp",
            "SenderId",
            "ApproximateFirstReceiveTimestamp",
            "MessageGroupId",
            "MessageDeduplicationId",
            "SequenceNumber",
            "AWSTraceHeader",
        )
        mattrs = {}
        for k, v in (msg.get("MessageAttributes") or {}).items():
            mattrs[k] = {
                "stringValue": v.get("StringValue"),
                "binaryValue": base64.b64encode(v["BinaryValue"]).decode() if v.get("BinaryValue") else None,
                "stringListValues": v.get("StringListValues", []),
                "binaryListValues": [base64.b64encode(b).decode() for b in v.get("BinaryListValues", [])],
                "dataType": v.get("DataType"),
            }
        return {
            "messageId": msg["MessageId"],
            "receiptHandle": msg["ReceiptHandle"],
            "body": msg.get("Body", ""),
            "attributes": {k: attrs[k] for k in keep if k in attrs},
            "messageAttributes": mattrs,
            "md5OfBody": msg.get("MD5OfBody") or hashlib.md5(msg.get("Body", "").encode()).hexdigest(),
            "eventSource": "aws:sqs",
            "eventSourceARN": m["arn"],
            "awsRegion": REGION,
        }


def main():
    """Serves the template's stack on this machine until interrupted: the Lambda functions
    as deployed, behind the front's URL, for trying a change by hand."""
    import argparse
    import signal

    def interrupted(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)  # `kill` stops it as cleanly as Ctrl-C
    parser = argparse.ArgumentParser(description="The functions as the template wires them, on this machine.")
    parser.add_argument("--bins", default=str(ROOT / "target" / "debug"), help="directory of the function binaries")
    args = parser.parse_args()
    with Harness(args.bins) as h:
        print(f"API Gateway front: {h.url}  (operator routes: add the header {IAM_HEADER}: <an ARN>)")
        print(f"moto: {h.moto_url}  logs: {h.workdir / 'logs'}  (Ctrl-C stops)", flush=True)
        try:
            while not h.dead():
                time.sleep(1)
            print(f"a function ended: {h.dead()}", file=sys.stderr)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks that infra/template.yaml and the workspace's function binaries agree.

- Every binary of a crate under functions/ (except the local API, which never runs in
  Lambda) is a function of the template, built by cargo lambda as that binary.
- Every function of the template names a real binary and runs as one: provided.al2023,
  arm64, handler `bootstrap`, CodeUri the workspace root.
- Every function states its memory and timeout, logs JSON to its own log group with a
  retention, runs under its own role (no SAM policy templates, no wildcard or Scan action),
  and has an Errors and a Throttles alarm.
- The HTTP routes of each group function are exactly the operations its crate registers
  (`.op("name", ..)` and `.upload("name", ..)` are `ANY /v3/name`, `.resource(Method::GET, "/v3/path", ..)` is
  `GET /v3/path`, `.unprefixed("name")` is also `ANY /name`), plus the kernel's routes
  (`$default`, ping, status, the legacy prefix, the legacy `/getAccount`) on one client
  function. A missing route is printed as the line to paste into the template.
- The legacy binary serves only the legacy prefix and the OpenAPI document, and `all_routes()` (functions/service),
  which it, the operator function, the local API and the tests serve, merges every crate that
  registers routes (client or operator)
  routes (an HTTP API cannot route the prefix by operation name).
- Operator routes (/operator...) are IAM-authorized and lead to the operator function only,
  and the operator function has no other route.

Usage (`--template PATH` first checks another file than infra/template.yaml):
  check-wiring.py              check; exit 1 with one line per problem
  check-wiring.py --binaries   print the template's function binaries, one a line
  check-wiring.py --self-test  break a copy of the template in each way above (a function
                               removed, a made-up binary, ...) and prove the check fails

Needs PyYAML (CI runs it with the tools venv's python) and cargo (for `cargo metadata`).
"""

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "infra" / "template.yaml"
# Binaries that are not Lambda functions.
LOCAL_ONLY = {"local-api"}
OPERATOR_BINARY = "operator"
# Serves the legacy prefix for every group: it registers no route of its own and must link
# every crate that does.
LEGACY_BINARY = "legacy"
LEGACY_ROUTE = ("ANY", "/tapiv3/index.php/v3/{proxy+}")
# The OpenAPI document of every route, which the legacy binary serves since it links them all.
OPENAPI_ROUTE = ("GET", "/openapi.json")
FORBIDDEN_ACTION = "dynamodb:Scan"
# The one table of every crate's routes (`Routes::of(&[investors::routes, ...])`), and how it
# names a crate.
ALL_ROUTES = ROOT / "functions" / "service" / "src" / "lib.rs"
ALL_ROUTES_RE = re.compile(r"\b([A-Za-z0-9_]+)::routes\b")
OPERATOR_RE = re.compile(r"\.operator\(\s*Method::")
# Routes the shared kernel answers itself: unknown operations (1404), health, the legacy prefix.
KERNEL_ROUTES = {
    ("ANY", "$default"),
    ("GET", "/v3/ping"),
    ("GET", "/v3/status"),
    ("ANY", "/tapiv3/index.php/v3/{proxy+}"),
    # The legacy host's getAccount (part 1, Versioning 3), resolved by the router.
    ("ANY", "/getAccount"),
}
OP_RE = re.compile(r'\.(?:op|upload)\(\s*"([A-Za-z0-9_]+)"')
RESOURCE_RE = re.compile(r'\.resource\(\s*Method::([A-Z]+)\s*,\s*"([^"]+)"')
# `.unprefixed("name")`: the operation is also served at `/name` (the spec's path has no /v3).
UNPREFIXED_RE = re.compile(r'\.unprefixed\(\s*"([A-Za-z0-9_]+)"')


class CfnLoader(yaml.SafeLoader):
    """Reads CloudFormation's short forms (!Ref, !GetAtt, !Sub, ...) as their long forms."""


def _intrinsic(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if suffix == "Ref":
        return {"Ref": value}
    if suffix == "GetAtt" and isinstance(value, str):
        return {"Fn::GetAtt": value.split(".", 1)}
    return {"Fn::" + suffix: value}


CfnLoader.add_multi_constructor("!", _intrinsic)


def load_template(path):
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=CfnLoader)


def registered_routes(src_dir):
    """The routes a group crate registers, as (METHOD, path)."""
    routes = set()
    for source in sorted(src_dir.rglob("*.rs")):
        text = source.read_text(encoding="utf-8")
        routes |= {("ANY", "/v3/" + name) for name in OP_RE.findall(text)}
        routes |= {(verb, path) for verb, path in RESOURCE_RE.findall(text)}
        routes |= {("ANY", "/" + name) for name in UNPREFIXED_RE.findall(text)}
    return routes


def all_routes_crates():
    """The crates `all_routes()` merges."""
    text = ALL_ROUTES.read_text(encoding="utf-8")
    start = text.index("pub fn all_routes")
    return set(ALL_ROUTES_RE.findall(text[start : text.index("\n}\n", start)]))


def registers_operator_routes(src_dir):
    return any(OPERATOR_RE.search(p.read_text(encoding="utf-8")) for p in src_dir.rglob("*.rs"))


def workspace_binaries():
    """Binary targets of the workspace's crates under functions/: name -> the routes their
    crate registers (for the legacy binary, the routes of every crate it depends on)."""
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    functions_dir = ROOT / "functions"
    binaries = {}
    crate_routes = {}
    routed = set()
    for package in json.loads(out)["packages"]:
        manifest = Path(package["manifest_path"]).resolve()
        if functions_dir not in manifest.parents:
            continue
        crate_routes[package["name"]] = registered_routes(manifest.parent / "src")
        if crate_routes[package["name"]] or registers_operator_routes(manifest.parent / "src"):
            routed.add(package["name"])
        for target in package["targets"]:
            if "bin" in target["kind"] and target["name"] not in LOCAL_ONLY:
                binaries[target["name"]] = crate_routes[package["name"]]
    if LEGACY_BINARY in binaries:
        binaries[LEGACY_BINARY] = LegacyLinks(routed - all_routes_crates())
    return binaries


class LegacyLinks(frozenset):
    """The legacy binary's entry in `workspace_binaries`: no routes of its own, and the
    routed crates `all_routes()` fails to merge."""

    def __new__(cls, missing):
        obj = super().__new__(cls)
        obj.missing = sorted(missing)
        return obj

    def __deepcopy__(self, memo):
        return self


def ref_name(value):
    return value.get("Ref") if isinstance(value, dict) else None


def getatt_name(value):
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return value["Fn::GetAtt"][0]
    return None


def as_list(value):
    return value if isinstance(value, list) else [value]


def http_routes(function):
    """The function's HttpApi events: (METHOD, path) -> event name."""
    routes = {}
    for event_name, event in ((function.get("Properties") or {}).get("Events") or {}).items():
        if event.get("Type") == "HttpApi":
            ev = event.get("Properties") or {}
            routes[(str(ev.get("Method", "ANY")).upper(), str(ev.get("Path", "$default")))] = event_name
    return routes


def route_line(verb, path):
    """A template line for a missing route."""
    words = re.findall(r"[A-Za-z0-9]+", path.replace("/v3/", "", 1))
    name = "".join(w[:1].upper() + w[1:] for w in words) + ("" if verb in ("ANY", "GET") else verb.title())
    quoted = f'"{path}"' if "{" in path else path
    return f"{name}: {{ Type: HttpApi, Properties: {{ ApiId: !Ref Api, Path: {quoted}, Method: {verb} }} }}"


def functions_of(template):
    resources = template.get("Resources", {})
    return {k: v for k, v in resources.items() if v.get("Type") == "AWS::Serverless::Function"}


def binary_of(function):
    return ((function.get("Metadata") or {}).get("BuildProperties") or {}).get("Binary")


def function_binaries(template):
    return sorted(b for b in (binary_of(f) for f in functions_of(template).values()) if b)


def problems(template, binaries):
    """Everything wrong with the template's wiring, as sentences."""
    found = []
    resources = template.get("Resources", {})
    globals_fn = (template.get("Globals") or {}).get("Function") or {}
    functions = functions_of(template)

    wired = {}
    for name, fn in functions.items():
        props = {**globals_fn, **(fn.get("Properties") or {})}
        meta = fn.get("Metadata") or {}
        binary = binary_of(fn)
        if meta.get("BuildMethod") != "rust-cargolambda":
            found.append(f"{name}: Metadata.BuildMethod must be rust-cargolambda")
        if not binary:
            found.append(f"{name}: no Metadata.BuildProperties.Binary")
        elif binary not in binaries:
            found.append(f"{name}: Binary {binary!r} is not a binary of a crate under functions/")
        elif binary in wired:
            found.append(f"{name}: Binary {binary!r} is also built by {wired[binary]}")
        else:
            wired[binary] = name
        for key, expected in (("Runtime", "provided.al2023"), ("Handler", "bootstrap"), ("CodeUri", "..")):
            if props.get(key) != expected:
                found.append(f"{name}: {key} must be {expected!r}, not {props.get(key)!r}")
        if props.get("Architectures") != ["arm64"]:
            found.append(f"{name}: Architectures must be [arm64]")
        for key in ("MemorySize", "Timeout"):
            if key not in (fn.get("Properties") or {}):
                found.append(f"{name}: no {key} of its own")

        logging = (fn.get("Properties") or {}).get("LoggingConfig") or {}
        group = ref_name(logging.get("LogGroup"))
        if logging.get("LogFormat") != "JSON":
            found.append(f"{name}: LoggingConfig.LogFormat must be JSON")
        if group not in resources or resources[group].get("Type") != "AWS::Logs::LogGroup":
            found.append(f"{name}: LoggingConfig.LogGroup must !Ref a log group of the template")
        elif "RetentionInDays" not in (resources[group].get("Properties") or {}):
            found.append(f"{name}: log group {group} has no RetentionInDays")

        role = getatt_name(props.get("Role"))
        if "Policies" in props:
            found.append(f"{name}: use its own Role, not SAM Policies (they add managed policies on '*')")
        if role not in resources or resources[role].get("Type") != "AWS::IAM::Role":
            found.append(f"{name}: Role must !GetAtt an IAM role of the template")
        else:
            role_props = resources[role].get("Properties") or {}
            if role_props.get("ManagedPolicyArns"):
                found.append(f"{name}: role {role} has managed policies")
            for policy in role_props.get("Policies") or []:
                for statement in as_list((policy.get("PolicyDocument") or {}).get("Statement") or []):
                    for action in as_list(statement.get("Action")):
                        if isinstance(action, str) and (action.endswith("*") or action == FORBIDDEN_ACTION):
                            found.append(f"{name}: role {role} allows {action}")
                    if "*" in as_list(statement.get("Resource")):
                        found.append(f"{name}: role {role} has a statement on Resource '*'")

        for metric in ("Errors", "Throttles"):
            alarmed = any(
                r.get("Type") == "AWS::CloudWatch::Alarm"
                and (r.get("Properties") or {}).get("MetricName") == metric
                and (r.get("Properties") or {}).get("Namespace") == "AWS/Lambda"
                and any(
                    d.get("Name") == "FunctionName" and ref_name(d.get("Value")) == name
                    for d in (r.get("Properties") or {}).get("Dimensions") or []
                )
                for r in resources.values()
            )
            if not alarmed:
                found.append(f"{name}: no {metric} alarm")

        for event_name, event in ((fn.get("Properties") or {}).get("Events") or {}).items():
            if event.get("Type") != "HttpApi":
                continue
            ev = event.get("Properties") or {}
            path = str(ev.get("Path", ""))
            authorizer = (ev.get("Auth") or {}).get("Authorizer")
            if path.startswith("/operator"):
                if authorizer != "AWS_IAM":
                    found.append(f"{name}.{event_name}: operator route {path} must use Auth.Authorizer AWS_IAM")
                if binary != OPERATOR_BINARY:
                    found.append(f"{name}.{event_name}: operator route {path} leads to {binary}, not {OPERATOR_BINARY}")
            elif binary == OPERATOR_BINARY:
                found.append(f"{name}.{event_name}: the operator function serves /operator routes only, not {path}")

        routes = http_routes(fn)
        if binary == LEGACY_BINARY and binary in binaries:
            missing = getattr(binaries[binary], "missing", [])
            if missing:
                found.append(f"{name}: all_routes() must merge every crate that registers routes; add: {', '.join(missing)}")
            if set(routes) != {LEGACY_ROUTE, OPENAPI_ROUTE}:
                found.append(
                    f"{name}: the legacy function serves exactly ANY {LEGACY_ROUTE[1]} and GET {OPENAPI_ROUTE[1]}"
                )
        elif binary in binaries and binary != OPERATOR_BINARY:
            expected = binaries[binary]
            actual = set(routes) - KERNEL_ROUTES
            for verb, path in sorted(expected - actual):
                found.append(
                    f"{name}: no route for {verb} {path}, registered by its crate; add: {route_line(verb, path)}"
                )
            for verb, path in sorted(actual - expected):
                found.append(f"{name}.{routes[(verb, path)]}: route {verb} {path} names nothing its crate registers")

    owners = {}
    for name, fn in functions.items():
        for route in set(http_routes(fn)) & KERNEL_ROUTES:
            owners.setdefault(route, []).append(name)
    for verb, path in sorted(KERNEL_ROUTES):
        holders = owners.get((verb, path), [])
        if len(holders) != 1:
            found.append(f"kernel route {verb} {path} must lead to one client function, not {holders or 'none'}")

    for binary in sorted(binaries.keys() - wired.keys()):
        found.append(f"binary {binary!r} (functions/) is not a function of the template")
    return found


def self_test(template, binaries):
    """Breaks copies of a passing template and checks that each is caught."""
    base = problems(template, binaries)
    if base:
        print("self-test needs a passing template first:", *base, sep="\n  ")
        return False
    functions = functions_of(template)
    cases = []

    for name, fn in functions.items():
        def remove(t, name=name):
            del t["Resources"][name]
        cases.append((f"{name} removed", remove, f"binary {binary_of(fn)!r}"))

    first = next(iter(functions))

    def made_up_binary(t):
        t["Resources"][first]["Metadata"]["BuildProperties"]["Binary"] = "no-such-binary"

    def second_build_of_same_binary(t):
        t["Resources"][first + "Copy"] = copy.deepcopy(t["Resources"][first])

    def no_alarm(t):
        for key, r in list(t["Resources"].items()):
            dims = (r.get("Properties") or {}).get("Dimensions") or []
            if r.get("Type") == "AWS::CloudWatch::Alarm" and any(ref_name(d.get("Value")) == first for d in dims):
                del t["Resources"][key]

    def scan_allowed(t):
        role = getatt_name(t["Resources"][first]["Properties"]["Role"])
        statement = t["Resources"][role]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
        statement.append({"Effect": "Allow", "Action": "dynamodb:Scan", "Resource": "x"})

    def x86(t):
        t["Resources"][first]["Properties"]["Architectures"] = ["x86_64"]

    cases += [
        ("a made-up Binary", made_up_binary),
        ("two functions of one binary", second_build_of_same_binary),
        ("a function without alarms", no_alarm),
        ("a role allowing Scan", scan_allowed),
        ("an x86_64 function", x86),
    ]

    operator = [k for k, f in functions.items() if binary_of(f) == OPERATOR_BINARY]
    client = [k for k, f in functions.items() if binary_of(f) not in (None, OPERATOR_BINARY)]
    if operator:

        def open_operator_route(t):
            for event in t["Resources"][operator[0]]["Properties"]["Events"].values():
                (event.get("Properties") or {}).pop("Auth", None)

        cases.append(("an operator route without IAM", open_operator_route))
    if client:

        def operator_route_on_client_function(t):
            events = t["Resources"][client[0]]["Properties"].setdefault("Events", {})
            events["Stray"] = {
                "Type": "HttpApi",
                "Properties": {"Path": "/operator/x", "Method": "ANY", "Auth": {"Authorizer": "AWS_IAM"}},
            }

        cases.append(("an operator route on a client function", operator_route_on_client_function))

    grouped = [k for k in client if binaries.get(binary_of(functions[k]))]
    if grouped:
        target = grouped[0]
        verb, path = sorted(binaries[binary_of(functions[target])])[0]

        def route_removed(t):
            events = t["Resources"][target]["Properties"]["Events"]
            del events[http_routes(t["Resources"][target])[(verb, path)]]

        def route_added(t):
            events = t["Resources"][target]["Properties"]["Events"]
            events["Stray"] = {"Type": "HttpApi", "Properties": {"Path": "/v3/noSuchOperation", "Method": "ANY"}}

        def kernel_route_removed(t):
            events = t["Resources"][target]["Properties"]["Events"]
            del events[http_routes(t["Resources"][target])[("GET", "/v3/ping")]]

        cases += [
            (f"the route of {path} removed", route_removed),
            ("a route to no operation", route_added),
            ("the ping route removed", kernel_route_removed),
        ]

    # And the other way round: a binary the template does not know.
    cases.append(("a new binary without a function", None))
    if LEGACY_BINARY in binaries:
        cases.append(("a routed crate all_routes() does not merge", "legacy", "must merge every crate"))

    failed = 0
    for case in cases:
        label, breaker, expected = (case + ("",))[:3]
        broken, bins = copy.deepcopy(template), copy.deepcopy(binaries)
        if breaker is None:
            bins["new-function"] = set()
        elif breaker == "legacy":
            bins[LEGACY_BINARY] = LegacyLinks({"payments"})
        else:
            breaker(broken)
        caught = [p for p in problems(broken, bins) if expected in p]
        if caught:
            print(f"ok: {label}: {caught[0]}")
        else:
            print(f"NOT CAUGHT: {label}")
            failed += 1
    print(f"check-wiring self-test: {len(cases) - failed} passed, {failed} failed")
    return failed == 0


def main(argv):
    args = argv[1:]
    path = TEMPLATE
    if args[:1] == ["--template"] and len(args) >= 2:
        path, args = Path(args[1]), args[2:]
    template = load_template(path)
    if args == ["--binaries"]:
        print("\n".join(function_binaries(template)))
        return 0
    binaries = workspace_binaries()
    if args == ["--self-test"]:
        return 0 if self_test(template, binaries) else 1
    if args:
        print(__doc__, file=sys.stderr)
        return 2
    found = problems(template, binaries)
    for p in found:
        print(f"check-wiring: {p}", file=sys.stderr)
    if found:
        return 1
    print(f"check-wiring: {len(binaries)} function binaries, each wired: {', '.join(sorted(binaries))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

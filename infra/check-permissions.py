#!/usr/bin/env python3
"""Checks each Lambda function's IAM role against the AWS actions its code can reach.

A missing grant is an AccessDenied (HTTP 500) in AWS that no local test sees; an unused grant
breaks least privilege. The actions a function's code can reach are read from the symbols of
its binary: the linker (--gc-sections) keeps only code that is referenced, and every call of
the AWS SDK goes through one operation's fluent builder (`aws_sdk_dynamodb::operation::
put_item::builders::PutItemFluentBuilder::send`, `..GetObjectFluentBuilder::presigned`), so
the builders present name the operations the binary can call. Debug (dev-profile) binaries
are used because they keep their symbol table (release ones are stripped) and are not
LTO-inlined (the builders stay functions of their own); their dependencies are those of
`cargo test`, so after the tests the build is only linking.

What the symbols say, and how it becomes IAM actions:
- an operation is its IAM action (put_item -> dynamodb:PutItem), except batch and
  transaction operations, which IAM authorizes as their items: send_message_batch ->
  sqs:SendMessage, transact_get_items -> dynamodb:GetItem, and transact_write_items -> the
  item kinds the binary builds (`TransactWriteItemBuilder::put` -> dynamodb:PutItem, update,
  delete, condition_check -> dynamodb:ConditionCheckItem);
- a query that names an index (`QueryFluentBuilder::set_index_name`) also needs the table's
  indexes as a resource; DynamoDB actions are on the table, SQS ones on the webhook queue,
  S3 object ones on the documents bucket's objects;
- a function whose code reaches a service must have that service's variable (IPS_TABLE,
  IPS_WEBHOOK_QUEUE_URL, IPS_BUCKET) from Globals or its own Environment;
- a function with IPS_BATCH_QUEUE_URL: !Ref <queue> in its environment whose code reaches
  sqs:SendMessage needs it on that queue too;
- an SQS event source needs sqs:ReceiveMessage, DeleteMessage and GetQueueAttributes on its
  queue (Lambda polls as the function's role);
- logs:* statements (each function's own log group) are not checked.
Linked is not always reached: a trait object links all of its methods, and a runtime flag
does not unlink a branch. The few SDK calls that are linked into the Lambda binaries but
reached only by the local API are listed in LINKED_NOT_REACHED with the symbol of the local
API's code that reaches them (checked on the local-api binary: symbol and actions must be
there); while that symbol is absent from a binary, those actions are neither required nor
allowed for its function (the summary shows them).

Usage:
  check-permissions.py               build the debug binaries, check; exit 1 with one line
                                     per problem, else print what each function reaches
  check-permissions.py --self-test   break copies of the template (a grant removed, one
                                     added, IPS_BUCKET removed, ...) and prove each is caught
Options: --template PATH (another template than infra/template.yaml), --target-dir DIR
(cargo's target directory; default: cargo's own, which honours CARGO_TARGET_DIR), --no-build
(use the debug binaries as they are: run `cargo build --workspace --bins` first).

Needs PyYAML (CI runs it with the tools venv's python), cargo and binutils' nm. Reads the
template with check-wiring.py's loader.
"""

import copy
import fnmatch
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "infra" / "template.yaml"

_spec = importlib.util.spec_from_file_location("check_wiring", Path(__file__).resolve().parent / "check-wiring.py")
wiring = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wiring)

# The template's resources each service's actions apply to, and the variable that names it.
TABLE, QUEUE, BUCKET = "Table", "WebhookQueue", "DocumentsBucket"
ENV_OF_SERVICE = {"dynamodb": ("IPS_TABLE", TABLE), "sqs": ("IPS_WEBHOOK_QUEUE_URL", QUEUE), "s3": ("IPS_BUCKET", BUCKET)}
TABLE_ARN, INDEX_ARN = f"{TABLE}.Arn", f"{TABLE}.Arn/index/*"
# Queues a function's code sends to beside the webhook queue, named by a variable of its
# environment (the batches function enqueues the schedule's items on the batch queue).
SENDS_TO = {"IPS_BATCH_QUEUE_URL": "sqs:SendMessage", "IPS_ORDER_QUEUE_URL": "sqs:SendMessage"}
QUEUE_ARN, OBJECTS_ARN, BUCKET_ARN = f"{QUEUE}.Arn", f"{BUCKET}.Arn/*", f"{BUCKET}.Arn"
S3_BUCKET_ACTIONS = {"s3:ListBucket", "s3:GetBucketLocation"}

# SDK crate -> IAM service prefix, where they differ.
SERVICE_PREFIX = {"cloudwatchlogs": "logs", "sfn": "states", "eventbridge": "events"}
# Operations IAM knows under other actions ([]: none of the function's code's).
OPERATION_ACTIONS = {
    "dynamodb:TransactGetItems": ["dynamodb:GetItem"],
    "dynamodb:TransactWriteItems": [],  # its items' actions (TRANSACT_ITEM_ACTIONS)
    "sqs:SendMessageBatch": ["sqs:SendMessage"],
    "sqs:DeleteMessageBatch": ["sqs:DeleteMessage"],
    "sqs:ChangeMessageVisibilityBatch": ["sqs:ChangeMessageVisibility"],
    "s3:HeadObject": ["s3:GetObject"],
    "s3:HeadBucket": ["s3:ListBucket"],
    "s3:ListObjectsV2": ["s3:ListBucket"],
    "s3:ListObjects": ["s3:ListBucket"],
    "s3:DeleteObjects": ["s3:DeleteObject"],
    "s3:CopyObject": ["s3:GetObject", "s3:PutObject"],
    "s3:CreateMultipartUpload": ["s3:PutObject"],
    "s3:UploadPart": ["s3:PutObject"],
    "s3:CompleteMultipartUpload": ["s3:PutObject"],
    # The S3 client's own S3 Express (directory bucket) session auth, linked into every S3
    # client; the documents bucket is a general purpose bucket, and no code calls it.
    "s3:CreateSession": [],
}
TRANSACT_ITEM_ACTIONS = {
    "put": "dynamodb:PutItem",
    "update": "dynamodb:UpdateItem",
    "delete": "dynamodb:DeleteItem",
    "condition_check": "dynamodb:ConditionCheckItem",
}
# SDK calls linked into Lambda binaries that only the local API makes: (actions, the symbol
# of the local API's code that reaches them, why they are linked anyway). While that symbol
# is absent from a binary, its function neither needs nor may be granted the actions. (The
# symbols cannot tell a runtime flag's value: Lambda code that called aws_ports(.., true)
# would go unnoticed here.)
LINKED_NOT_REACHED = [
    (
        {"dynamodb:CreateTable", "dynamodb:DescribeTable", "sqs:CreateQueue", "sqs:GetQueueUrl"},
        "shared::config::Config::local_ports",
        "Config::aws_ports(sdk, create) creates a missing table and queue when `create` is true; "
        "Lambda functions pass false, local_ports passes true",
    ),
    (
        {"sqs:ReceiveMessage", "sqs:DeleteMessage"},
        "shared::webhooks::run_worker",
        "receive and ack are methods of the SqsQueue trait object (its vtable links them); only "
        "the local API's worker calls them (Lambda polls the queue for the webhooks function)",
    ),
]
# The local API's binary: not a function, read only to prove that each guard symbol of
# LINKED_NOT_REACHED still names real code (a renamed one would exempt its actions for good).
LOCAL_BINARY = "local-api"
# What an event source of the function needs from its role.
EVENT_SOURCE_ACTIONS = {"SQS": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]}

OPERATION_RE = re.compile(
    r"aws_sdk_([a-z0-9]+)::operation::([a-z0-9_]+)::builders::([A-Za-z0-9]+)FluentBuilder::(?:send|presigned)$"
)
TRANSACT_ITEM_RE = re.compile(
    r"aws_sdk_dynamodb::types::_transact_write_item::TransactWriteItemBuilder::(?:set_)?(put|update|delete|condition_check)$"
)
INDEX_QUERY_RE = re.compile(
    r"aws_sdk_dynamodb::operation::query::(?:builders::QueryFluentBuilder|_query_input::QueryInputBuilder)::(?:set_)?index_name$"
)
GUARD_RE = re.compile(r"(?<![\w:])(" + "|".join(re.escape(g) for _, g, _ in LINKED_NOT_REACHED) + r")(?!\w)")


class Reach:
    """What one binary's symbols say: the SDK operations it calls (as `service:Operation`),
    the transaction item kinds it builds, whether it queries an index, and which of
    LINKED_NOT_REACHED's guard symbols it has."""

    def __init__(self, operations=(), items=(), index_query=False, guards=()):
        self.operations, self.items = set(operations), set(items)
        self.index_query, self.guards = index_query, set(guards)

    def actions(self):
        """(actions the code reaches, actions linked but not reached, problems)."""
        reached, problems = set(), []
        for op in self.operations:
            mapped = OPERATION_ACTIONS.get(op, [op])
            reached.update(mapped)
            if op == "dynamodb:TransactWriteItems":
                if not self.items:
                    problems.append("reaches dynamodb:TransactWriteItems but builds no item kind the check knows")
                reached.update(TRANSACT_ITEM_ACTIONS[k] for k in self.items)
        unreached = set()
        for actions, guard, _ in LINKED_NOT_REACHED:
            if guard not in self.guards:
                unreached |= reached & actions
        return reached - unreached, unreached, problems


def scan_binary(path):
    """Reads one binary's demangled symbols (one nm run, streamed)."""
    reach = Reach()
    proc = subprocess.Popen(
        ["nm", "-C", "-p", "--defined-only", str(path)], stdout=subprocess.PIPE, text=True, errors="replace"
    )
    for line in proc.stdout:
        if "aws_sdk_" in line:
            name = line.rstrip("\n").split(" ", 2)[-1]
            m = OPERATION_RE.search(name)
            if m:
                crate, _module, camel = m.groups()
                reach.operations.add(f"{SERVICE_PREFIX.get(crate, crate)}:{camel}")
            elif m := TRANSACT_ITEM_RE.search(name):
                reach.items.add(m.group(1))
            elif INDEX_QUERY_RE.search(name):
                reach.index_query = True
        elif "shared::" in line:
            m = GUARD_RE.search(line)
            if m:
                reach.guards.add(m.group(1))
    if proc.wait() != 0:
        raise RuntimeError(f"nm {path} failed (exit {proc.returncode})")
    return reach


def target_directory(explicit):
    if explicit:
        return Path(explicit).resolve()
    meta = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
        cwd=ROOT, capture_output=True, text=True,
    )
    if meta.returncode == 0:
        return Path(json.loads(meta.stdout)["target_directory"])
    return Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()


def build(target_dir):
    cmd = ["cargo", "build", "--workspace", "--bins", "--target-dir", str(target_dir)]
    print("check-permissions: " + " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, check=True)


def scan_binaries(template, target_dir):
    """binary name -> Reach (None for a binary that is not built), one nm per binary; the
    template's function binaries and the local API's."""
    binaries = sorted({b for b in (wiring.binary_of(f) for f in wiring.functions_of(template).values()) if b} | {LOCAL_BINARY})
    paths = {b: target_dir / "debug" / b for b in binaries}
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        scans = dict(zip(binaries, pool.map(lambda b: scan_binary(paths[b]) if paths[b].is_file() else None, binaries)))
    return scans


# ---------------------------------------------------------------------------- the template


def resource_key(value):
    """A statement's resource as the template spells it: `Table.Arn`, `Table.Arn/index/*`."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return ".".join(value["Fn::GetAtt"])
    if isinstance(value, dict) and "Fn::Sub" in value:
        text = value["Fn::Sub"][0] if isinstance(value["Fn::Sub"], list) else value["Fn::Sub"]
        return re.sub(r"\$\{([^}!]+)\}", r"\1", text)
    return json.dumps(value, sort_keys=True)


def role_statements(template, role):
    """The policy statements of a role: its inline policies and the template's policies that
    name it in their Roles."""
    resources = template.get("Resources", {})
    props = resources[role].get("Properties") or {}
    documents = [p.get("PolicyDocument") or {} for p in props.get("Policies") or []]
    for r in resources.values():
        if r.get("Type") in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            rp = r.get("Properties") or {}
            if any(wiring.ref_name(x) == role for x in rp.get("Roles") or []):
                documents.append(rp.get("PolicyDocument") or {})
    return [s for d in documents for s in wiring.as_list(d.get("Statement") or [])]


def grants_of(template, fn_name, found):
    """The role's allowed (action, resource) pairs, logs:* left out. Problems go to `found`."""
    fn = wiring.functions_of(template)[fn_name]
    role = wiring.getatt_name((fn.get("Properties") or {}).get("Role"))
    if role not in template.get("Resources", {}):
        found.append("no Role: !GetAtt of an IAM role of the template")
        return []
    grants = []
    for s in role_statements(template, role):
        if s.get("Effect") != "Allow":
            continue
        if "NotAction" in s or "NotResource" in s:
            found.append(f"role {role} has a NotAction/NotResource statement (not checkable)")
            continue
        for action in wiring.as_list(s.get("Action")):
            if not isinstance(action, str) or action.lower().startswith("logs:"):
                continue
            for resource in wiring.as_list(s.get("Resource")):
                grants.append((action, resource_key(resource)))
    return grants


def environment_of(template, fn):
    g = ((template.get("Globals") or {}).get("Function") or {}).get("Environment") or {}
    own = (fn.get("Properties") or {}).get("Environment") or {}
    return {**(g.get("Variables") or {}), **(own.get("Variables") or {})}


def needs_of(template, fn, reach):
    """(action, resource) -> why, for everything the function's role must allow; and the
    actions linked but not reached."""
    reached, unreached, problems = reach.actions()
    needs = {}
    for action in reached:
        service = action.split(":", 1)[0]
        if service == "dynamodb":
            needs[(action, TABLE_ARN)] = "code reaches it"
            if action == "dynamodb:Query" and reach.index_query:
                needs[(action, INDEX_ARN)] = "code queries an index"
        elif service == "sqs":
            needs[(action, QUEUE_ARN)] = "code reaches it"
            for var, sent in SENDS_TO.items():
                queue = wiring.ref_name(environment_of(template, fn).get(var))
                if action == sent and queue:
                    needs[(action, f"{queue}.Arn")] = f"code sends to {var}"
        elif service == "s3":
            needs[(action, BUCKET_ARN if action in S3_BUCKET_ACTIONS else OBJECTS_ARN)] = "code reaches it"
        else:
            needs[(action, "*")] = "code reaches it"
    for event in ((fn.get("Properties") or {}).get("Events") or {}).values():
        for action in EVENT_SOURCE_ACTIONS.get(event.get("Type"), []):
            queue = (event.get("Properties") or {}).get("Queue")
            needs[(action, resource_key(queue))] = f"its {event['Type']} event source needs it"
    return needs, reached, unreached, problems


def covers(grant, need):
    (ga, gr), (na, nr) = grant, need
    return fnmatch.fnmatchcase(na.lower(), ga.lower()) and (nr == "*" or fnmatch.fnmatchcase(nr, gr))


def problems(template, scans):
    """Every mismatch of roles and code, as `binary: sentence`."""
    found = []
    for fn_name, fn in sorted(wiring.functions_of(template).items(), key=lambda kv: str(wiring.binary_of(kv[1]))):
        binary = wiring.binary_of(fn)
        if binary is None:
            continue  # check-wiring.py reports it
        out = []
        reach = scans.get(binary)
        if reach is None:
            found.append(f"{binary}: no debug binary {binary} to read (cargo build --workspace --bins)")
            continue
        grants = grants_of(template, fn_name, out)
        needs, reached, unreached, reach_problems = needs_of(template, fn, reach)
        out += reach_problems
        for need, why in sorted(needs.items()):
            if any(covers(g, need) for g in grants):
                continue
            action, resource = need
            if any(fnmatch.fnmatchcase(action.lower(), g[0].lower()) for g in grants):
                out.append(f"missing grant {action} on {resource} ({why})")
            else:
                out.append(f"missing grant {action} ({why})")
        unused = {}
        for grant in grants:
            action, resource = grant
            if any(c in action for c in "*?"):
                out.append(f"wildcard grant {action}: grant the actions the code reaches")
            elif not any(covers(grant, need) for need in needs):
                unused.setdefault(action, []).append(resource)
        for action, resources in sorted(unused.items()):
            if any(fnmatch.fnmatchcase(n[0].lower(), action.lower()) for n in needs):
                out.append(f"unused grant {action} on {', '.join(resources)}")
            else:
                why = " (linked, but only the local API calls it)" if action in unreached else ""
                out.append(f"unused grant {action}{why}")
        env = environment_of(template, fn)
        for service in sorted({a.split(":", 1)[0] for a in reached}):
            if service in ENV_OF_SERVICE:
                var, resource = ENV_OF_SERVICE[service]
                if wiring.ref_name(env.get(var)) != resource:
                    out.append(
                        f"code reaches {service} but its environment has no {var}: !Ref {resource} "
                        f"(add it to the function's Environment Variables)"
                    )
        found += [f"{binary}: {p}" for p in dict.fromkeys(out)]
    local = scans.get(LOCAL_BINARY)
    if local is None:
        found.append(f"{LOCAL_BINARY}: no debug binary {LOCAL_BINARY} to read (cargo build --workspace --bins)")
    else:
        local_reached = local.actions()[0]
        for actions, guard, _ in LINKED_NOT_REACHED:
            if guard not in local.guards:
                found.append(f"{LOCAL_BINARY}: has no symbol {guard}: update LINKED_NOT_REACHED in {Path(__file__).name}")
            elif not actions <= local_reached:
                found.append(
                    f"{LOCAL_BINARY}: does not reach {', '.join(sorted(actions - local_reached))}: "
                    f"update LINKED_NOT_REACHED in {Path(__file__).name}"
                )
    return found


def summary(template, scans):
    rows = []
    for fn_name, fn in sorted(wiring.functions_of(template).items(), key=lambda kv: str(wiring.binary_of(kv[1]))):
        binary = wiring.binary_of(fn)
        if binary not in scans or scans[binary] is None:
            continue
        needs, reached, unreached, _ = needs_of(template, fn, scans[binary])
        events = sorted({a for (a, _r), why in needs.items() if "event source" in why} - reached)
        rows.append((binary, sorted(reached), events, sorted(unreached), scans[binary].index_query))
    width = max((len(r[0]) for r in rows), default=8)
    common = set.intersection(*(set(r[3]) for r in rows)) if rows else set()
    print(f"check-permissions: every role allows exactly what its function's code reaches ({len(rows)} functions)")
    for binary, reached, events, unreached, index in rows:
        print(f"  {binary:<{width}}  {', '.join(reached)}" + ("  (and Query on indexes)" if index else ""))
        if events:
            print(f"  {'':<{width}}  + for its event source: {', '.join(events)}")
        if set(unreached) - common:
            print(f"  {'':<{width}}  linked, but only the local API calls: {', '.join(sorted(set(unreached) - common))}")
    if common:
        print(f"  linked into every function, called by the local API only: {', '.join(sorted(common))}")


# ---------------------------------------------------------------------------- self-test


def self_test(template, scans):
    """Breaks copies of a passing template (and of the binaries' symbols) and checks that each
    is caught."""
    base = problems(template, scans)
    if base:
        print("self-test needs a passing template first:", *base, sep="\n  ")
        return False
    functions = wiring.functions_of(template)
    by_binary = {wiring.binary_of(f): k for k, f in functions.items() if scans.get(wiring.binary_of(f))}

    def role_doc(t, fn):
        role = wiring.getatt_name(t["Resources"][fn]["Properties"]["Role"])
        return t["Resources"][role]["Properties"]["Policies"][0]["PolicyDocument"]

    def reaching(action, with_index=False):
        for binary, fn in sorted(by_binary.items()):
            if action in scans[binary].actions()[0] and (scans[binary].index_query or not with_index):
                return binary, fn
        return None, None

    def drop_action(t, fn, action):
        for s in role_doc(t, fn)["Statement"]:
            acts = wiring.as_list(s.get("Action"))
            if action in acts:
                s["Action"] = [a for a in acts if a != action]

    def statement_with(t, fn, action):
        return next(s for s in role_doc(t, fn)["Statement"] if action in wiring.as_list(s.get("Action")))

    cases = []  # (label, break the template, break the symbols, the problem's start; "" = passes)
    for action in ("dynamodb:ConditionCheckItem", "sqs:SendMessage", "s3:PutObject", "dynamodb:Query"):
        binary, fn = reaching(action)
        if fn:
            cases.append((f"{action} removed from the {binary} role",
                          lambda t, fn=fn, a=action: drop_action(t, fn, a), None,
                          f"{binary}: missing grant {action} (code reaches it)"))
    # The first function without an SQS event source: its only SQS grant is SendMessage, so a
    # newly reached queue action is a missing grant of its own.
    def polls_a_queue(fn_name):
        events = (wiring.functions_of(template)[fn_name].get("Properties") or {}).get("Events") or {}
        return any(e.get("Type") == "SQS" for e in events.values())

    first_binary, first = next((b, f) for b, f in sorted(by_binary.items()) if not polls_a_queue(f))
    cases.append(("an extra grant (dynamodb:BatchWriteItem)",
                  lambda t: role_doc(t, first)["Statement"].append(
                      {"Effect": "Allow", "Action": "dynamodb:BatchWriteItem", "Resource": {"Fn::GetAtt": [TABLE, "Arn"]}}),
                  None, f"{first_binary}: unused grant dynamodb:BatchWriteItem"))
    cases.append(("a grant of another service (sns:Publish)",
                  lambda t: role_doc(t, first)["Statement"].append({"Effect": "Allow", "Action": "sns:Publish", "Resource": "x"}),
                  None, f"{first_binary}: unused grant sns:Publish"))
    cases.append(("a wildcard grant (dynamodb:*)",
                  lambda t: role_doc(t, first)["Statement"].append(
                      {"Effect": "Allow", "Action": "dynamodb:*", "Resource": {"Fn::GetAtt": [TABLE, "Arn"]}}),
                  None, f"{first_binary}: wildcard grant dynamodb:*"))
    binary, fn = reaching("dynamodb:GetItem")
    if fn:
        cases.append(("a grant of a local-only action (dynamodb:CreateTable)",
                      lambda t, fn=fn: statement_with(t, fn, "dynamodb:GetItem")["Action"].append("dynamodb:CreateTable"),
                      None, f"{binary}: unused grant dynamodb:CreateTable (linked, but only the local API calls it)"))
    binary, fn = reaching("s3:GetObject")
    if fn:
        def no_bucket_env(t, fn=fn):
            for env in (t["Resources"][fn]["Properties"].get("Environment"), t.get("Globals", {}).get("Function", {}).get("Environment")):
                ((env or {}).get("Variables") or {}).pop("IPS_BUCKET", None)

        def bucket_not_objects(t, fn=fn):
            statement_with(t, fn, "s3:GetObject")["Resource"] = {"Fn::GetAtt": [BUCKET, "Arn"]}

        cases += [
            (f"IPS_BUCKET removed from {binary}", no_bucket_env, None, f"{binary}: code reaches s3 but its environment has no IPS_BUCKET"),
            (f"the {binary} role's S3 grant on the bucket, not its objects", bucket_not_objects, None,
             f"{binary}: missing grant s3:GetObject on {OBJECTS_ARN}"),
        ]
    binary, fn = reaching("dynamodb:Query", with_index=True)
    if fn:
        def no_index(t, fn=fn):
            doc = role_doc(t, fn)
            for s in doc["Statement"]:
                s["Resource"] = [r for r in wiring.as_list(s.get("Resource")) if resource_key(r) != INDEX_ARN]
            doc["Statement"] = [s for s in doc["Statement"] if s["Resource"]]
        cases.append((f"the table's indexes removed from the {binary} role", no_index, None,
                      f"{binary}: missing grant dynamodb:Query on {INDEX_ARN} (code queries an index)"))
    sqs_fn = next((k for k, f in functions.items()
                   if any(e.get("Type") == "SQS" for e in ((f.get("Properties") or {}).get("Events") or {}).values())), None)
    if sqs_fn:
        b = wiring.binary_of(functions[sqs_fn])
        cases.append((f"sqs:ReceiveMessage removed from {b} (SQS event source)",
                      lambda t: drop_action(t, sqs_fn, "sqs:ReceiveMessage"), None,
                      f"{b}: missing grant sqs:ReceiveMessage (its SQS event source needs it)"))

    # And the code side: the binaries' symbols changed.
    def add_op(op):
        def brk(s):
            s[first_binary].operations.add(op)
        return brk

    def link_worker(s):
        s[first_binary].guards.add("shared::webhooks::run_worker")

    def no_condition_checks(s):
        s[first_binary].items.discard("condition_check")

    def no_item_kinds(s):
        s[first_binary].items.clear()

    def missing_binary(s):
        s[first_binary] = None

    def guard_renamed(s):
        s[LOCAL_BINARY].guards.discard(LINKED_NOT_REACHED[0][1])

    def statement_moved(t):
        # Positive control: a statement in a separate AWS::IAM::Policy still counts, so
        # removing it from the role and attaching it elsewhere must leave the check passing.
        role = wiring.getatt_name(t["Resources"][first]["Properties"]["Role"])
        doc = role_doc(t, first)
        moved = [s for s in doc["Statement"] if any(str(a).startswith("dynamodb:") for a in wiring.as_list(s.get("Action")))]
        doc["Statement"] = [s for s in doc["Statement"] if s not in moved]
        t["Resources"]["MovedPolicy"] = {"Type": "AWS::IAM::Policy", "Properties": {
            "PolicyName": "moved", "Roles": [{"Ref": role}], "PolicyDocument": {"Statement": moved}}}

    cases += [
        ("a binary that starts calling dynamodb:BatchGetItem", None, add_op("dynamodb:BatchGetItem"),
         f"{first_binary}: missing grant dynamodb:BatchGetItem (code reaches it)"),
        ("a binary that starts calling s3:ListObjectsV2", None, add_op("s3:ListObjectsV2"),
         f"{first_binary}: missing grant s3:ListBucket"),
        ("a binary that links the local API's queue worker", None, link_worker,
         f"{first_binary}: missing grant sqs:ReceiveMessage (code reaches it)"),
        ("a binary whose transactions stop checking conditions", None, no_condition_checks,
         f"{first_binary}: unused grant dynamodb:ConditionCheckItem"),
        ("transactions with no item kind the check knows", None, no_item_kinds,
         f"{first_binary}: reaches dynamodb:TransactWriteItems but builds no item kind"),
        ("a function whose binary is not built", None, missing_binary, f"{first_binary}: no debug binary"),
        (f"{LINKED_NOT_REACHED[0][1]} renamed", None, guard_renamed, f"{LOCAL_BINARY}: has no symbol"),
        ("a dynamodb statement moved to an AWS::IAM::Policy (must still pass)", statement_moved, None, ""),
    ]

    failed = 0
    for label, break_template, break_scans, expected in cases:
        broken, bins = copy.deepcopy(template), copy.deepcopy(scans)
        if break_template:
            break_template(broken)
        if break_scans:
            break_scans(bins)
        found = problems(broken, bins)
        if expected == "":
            ok, shown = not found, "still passes"
        else:
            hits = [p for p in found if p.startswith(expected)]
            ok, shown = bool(hits), (hits[0] if hits else "")
        print(f"{'ok' if ok else 'NOT CAUGHT'}: {label}: {shown if ok else found}")
        failed += not ok
    print(f"check-permissions self-test: {len(cases) - failed} passed, {failed} failed")
    return failed == 0


def main(argv):
    args = argv[1:]
    template_path, target_dir, do_build, test = TEMPLATE, None, True, False
    while args:
        arg = args.pop(0)
        if arg == "--template" and args:
            template_path = Path(args.pop(0))
        elif arg == "--target-dir" and args:
            target_dir = args.pop(0)
        elif arg == "--no-build":
            do_build = False
        elif arg == "--self-test":
            test = True
        else:
            print(__doc__, file=sys.stderr)
            return 2
    template = wiring.load_template(template_path)
    target_dir = target_directory(target_dir)
    start = time.monotonic()
    if do_build:
        try:
            build(target_dir)
        except subprocess.CalledProcessError:
            print("check-permissions: cargo build failed: no binaries to check", file=sys.stderr)
            return 1
    built = time.monotonic()
    scans = scan_binaries(template, target_dir)
    scanned = time.monotonic()
    timing = f"build {built - start:.1f} s, symbols {scanned - built:.1f} s"
    if test:
        ok = self_test(template, scans)
        print(f"check-permissions: {timing}")
        return 0 if ok else 1
    found = problems(template, scans)
    for p in found:
        print(f"check-permissions: {p}", file=sys.stderr)
    if found:
        print(f"check-permissions: {len(found)} problems ({timing})", file=sys.stderr)
        return 1
    summary(template, scans)
    print(f"check-permissions: {timing}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

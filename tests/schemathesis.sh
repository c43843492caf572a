#!/usr/bin/env bash
# Fuzzes the local API from its own OpenAPI document (/openapi.json) with schemathesis from
# PyPI: every operation, EXAMPLES generated requests each (default 5), and the run fails on a
# single 5xx or an answer that breaks the document (status, content type, envelope schema).
# Then generates the README's Python client from the same document (openapi-python-client from
# PyPI, into .venv-client) and imports every module of it. Installs schemathesis into .venv-st,
# builds and starts local-api on a free loopback port with a fresh embedded store, and stops it
# at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

ST_VERSION=4.32.5
VENV=.venv-st
if [ ! -x "$VENV/bin/st" ] || [ "$(cat "$VENV/.pin" 2>/dev/null)" != "$ST_VERSION" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "schemathesis==$ST_VERSION"
  echo "$ST_VERSION" >"$VENV/.pin"
fi

cargo build --quiet --bin local-api
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
data=$(mktemp -d)
IPS_BIND="127.0.0.1:$port" IPS_DATA_DIR="$data" IPS_DEV_CLIENT_ID=st-client IPS_DEV_API_KEY=st-key \
  "${CARGO_TARGET_DIR:-target}/debug/local-api" >"$data/local-api.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/openapi.json" && break
  sleep 0.1
done

"$VENV/bin/st" run "http://127.0.0.1:$port/openapi.json" \
  -H "Authorization: Bearer st-client:st-key" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --phases examples,fuzzing -n "${EXAMPLES:-5}" -w 2

CLIENT_VERSION="openapi-python-client==0.29.1 ruff==0.17.6"
CLIENT_VENV=.venv-client
if [ ! -x "$CLIENT_VENV/bin/openapi-python-client" ] || [ "$(cat "$CLIENT_VENV/.pin" 2>/dev/null)" != "$CLIENT_VERSION" ]; then
  rm -rf "$CLIENT_VENV"
  python3 -m venv "$CLIENT_VENV"
  # shellcheck disable=SC2086 # two pinned packages
  "$CLIENT_VENV/bin/pip" install --quiet $CLIENT_VERSION
  echo "$CLIENT_VERSION" >"$CLIENT_VENV/.pin"
fi
# The generator formats its output with ruff, found on the PATH.
client_bin="$PWD/$CLIENT_VENV/bin"
(cd "$data" && PATH="$client_bin:$PATH" openapi-python-client \
  generate --url "http://127.0.0.1:$port/openapi.json" --output-path client >client.log 2>&1) ||
  { cat "$data/client.log"; exit 1; }
"$CLIENT_VENV/bin/python" - "$data/client" <<'PY'
import importlib, pathlib, pkgutil, sys
root = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(root))
package = next(p.name for p in root.iterdir() if p.name.endswith("_client"))
count = 0
for module in pkgutil.walk_packages([str(root / package)], prefix=package + "."):
    importlib.import_module(module.name)
    count += 1
print(f"the generated client: {count} modules import")
PY

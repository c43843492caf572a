#!/usr/bin/env bash
# Runs every test on both backends: the embedded store, and DynamoDB + SQS through moto's
# server, which this script installs (into .venv), starts on 127.0.0.1 and stops at the end.
# Without arguments it then checks docs/costs.md (tests/costs.py); arguments go to cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."

source tests/venv.sh

# What the run writes to the temporary directory (the tests' blob stores and data
# directories, moto's log) goes in one directory of its own, removed at the end: left
# behind, a few hundred runs filled the disk.
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/ips-tests.XXXXXX")
export TMPDIR="$run_tmp"
moto_pid=""
trap 'kill $moto_pid 2>/dev/null || true; rm -rf "$run_tmp"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# DynamoDB requests one at a time, as DynamoDB isolates them (see tests/moto_serial.py).
.venv/bin/python tests/moto_serial.py -H 127.0.0.1 -p "$port" >"$run_tmp/moto.log" 2>&1 &
moto_pid=$!
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$port/moto-api/" >/dev/null 2>&1 && break
  sleep 0.1
done

export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test \
  AWS_SECRET_ACCESS_KEY=test
# Debug builds give every local of an async poll its own stack slot, and the SDK's request
# futures make the DynamoDB path deep: 8 MiB per test thread (release builds need a fraction).
export RUST_MIN_STACK="${RUST_MIN_STACK:-8388608}"
# Four tests at a time on two cores: most of a test's time is waiting (for moto, which takes
# one DynamoDB request at a time, and for the webhooks a test expects or rules out). The API
# suite ran in 393 s at four against 500 s at two and 407 s at eight (moto saturates).
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-4}"
if [ $# -gt 0 ]; then
  cargo test --workspace "$@"
  exit 0
fi
# The whole suite also logs each request's store cost, and checks docs/costs.md against it.
costs=target/costs.jsonl
mkdir -p target && rm -f "$costs"
IPS_COSTS_LOG="$PWD/$costs" cargo test --workspace
# (.venv: check-wiring.py, which lists the operations, reads YAML; moto brings PyYAML.)
.venv/bin/python tests/costs.py "$costs"

#!/usr/bin/env bash
# End-to-end test of the Lambda function binaries on the template's wiring, with moto and
# Python only (tests/lambda/e2e.py). Usage: tests/lambda/run.sh [BINS_DIR]
# BINS_DIR holds the binaries as cargo lambda builds them (default target/lambda:
# target/lambda/<binary>/bootstrap) or as cargo does (target/debug/<binary>).
set -euo pipefail
cd "$(dirname "$0")/../.."

# The same venv as tests/run.sh: moto's server, boto3, PyYAML, requests.
source tests/venv.sh

exec .venv/bin/python tests/lambda/e2e.py --bins "${1:-target/lambda}"

#!/usr/bin/env bash
# The benchmarks (tests/bench/bench.py: HTTP CPU per request, cold start and size, each as a
# ratio to a reference built here in the same run). Installs wrk with apt when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v wrk >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get install -y wrk >/dev/null
fi
exec python3 tests/bench/bench.py "$@"

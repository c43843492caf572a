# Sourced by the test scripts: moto's server (with boto3, PyYAML and requests) in .venv,
# installed with pip on first use. Run from the workspace root.
MOTO_VERSION=5.2.5
if [ ! -x .venv/bin/moto_server ]; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet "moto[server]==${MOTO_VERSION}"
fi

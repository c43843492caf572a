#!/usr/bin/env python3
"""moto's server, with DynamoDB requests handled one at a time (tests/run.sh starts it).

moto applies the writes of a TransactWriteItems one by one and undoes a failed one by putting
back a copy of the whole table taken when it started, while its threaded server runs requests
side by side: a concurrent request can see a transaction half done, and a failed transaction
can put back a table that misses another request's committed writes. DynamoDB isolates every
request. Handling DynamoDB requests one at a time gives the concurrency tests DynamoDB's
atomicity; other services (SQS long polls, S3) stay concurrent.

Usage: moto_serial.py -H HOST -p PORT
"""

import argparse
import os
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

DYNAMODB_LOCK = threading.Lock()


class OneDynamoDbRequestAtATime:
    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB"):
            with DYNAMODB_LOCK:
                # The whole response is produced inside the lock.
                return list(self.app(environ, start_response))
        return self.app(environ, start_response)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=5000)
    args = parser.parse_args()
    os.environ.setdefault("MOTO_PORT", str(args.port))
    app = DomainDispatcherApplication(create_backend_app)
    app.debug = True
    run_simple(
        args.host,
        args.port,
        OneDynamoDbRequestAtATime(app),
        threaded=True,
        request_handler=MotoRequestHandler,
    )


if __name__ == "__main__":
    main()

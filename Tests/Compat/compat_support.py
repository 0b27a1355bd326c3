"""What the compat scripts share (imported by each of them; run nothing here): the configuration of
an official Python SDK client of the pnreplicate simulator, and the `ok`/`FAIL` check lines.

Keys are `demo`/`demo` (the simulator's defaults), no TLS, and request timeouts short enough that a
script never hangs on a simulator that stopped answering.
"""

import time

from pubnub.pnconfiguration import PNConfiguration

# The names of the checks that failed, in order (a script exits non-zero when it is not empty).
failures = []


def check(name, condition, detail=""):
    """Prints `ok   <name>` or `FAIL <name>: <detail>` (and records the failure); returns `condition`."""
    if condition:
        print(f"ok   {name}", flush=True)
    else:
        failures.append(name)
        print(f"FAIL {name}{': ' + detail if detail else ''}", flush=True)
    return condition


def configuration(origin, user_id, request_timeout=10):
    """A configuration for `user_id` talking to the simulator at `origin` (`HOST:PORT`)."""
    config = PNConfiguration()
    config.publish_key = "demo"
    config.subscribe_key = "demo"
    config.user_id = user_id
    config.ssl = False
    config.origin = origin
    config.non_subscribe_request_timeout = request_timeout
    config.connect_timeout = 5
    return config


def finish(started):
    """Prints the summary line of a run that began at `started` (`time.monotonic()`); returns the
    exit code: 0 when every check passed, else 1."""
    elapsed = time.monotonic() - started
    if failures:
        print(f"{len(failures)} check(s) failed in {elapsed:.1f} s", flush=True)
        return 1
    print(f"all checks passed in {elapsed:.1f} s", flush=True)
    return 0

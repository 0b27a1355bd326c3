"""What the compat scripts share (imported by each of them; run nothing here): the configuration of
an official Python SDK client of the pnreplicate simulator, and the `ok`/`FAIL` check lines; for the
two Chat SDK peers (python_chat_peer.py, python_chat_conversations.py) also their client, error
descriptions, publish fallback and command line (usage errors, the watchdog, the exit codes).

Keys are `demo`/`demo` (the simulator's defaults), no TLS, and request timeouts short enough that a
script never hangs on a simulator that stopped answering.
"""

import argparse
import os
import sys
import threading
import time

from pubnub.exceptions import PubNubException
from pubnub.pnconfiguration import PNConfiguration
from pubnub.pubnub import PubNub

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


# --- the Chat SDK peers (python_chat_peer.py, python_chat_conversations.py) ------------------------

class PeerError(Exception):
    """A failure with a message for stderr."""


def client(origin, user_id, secret_key=None, token=None):
    """A synchronous client of `origin`; with `secret_key` it signs every request, with `token` (an
    Access Manager v3 token) it sends it as `auth`."""
    config = configuration(origin, user_id)
    if secret_key:
        config.secret_key = secret_key
    pubnub = PubNub(config)
    if token:
        pubnub.set_token(token)
    return pubnub


def describe(error):
    """A PubNubException's status code and body, or the exception."""
    if isinstance(error, PubNubException):
        return f"{error._status_code} {error._errormsg}"
    return repr(error)


def status_code(error):
    return getattr(error, "_status_code", None)


def note(text):
    print(f"note: {text}", file=sys.stderr, flush=True)


def attempt(action):
    """`action()`, or {"error": ...} when the origin refused it (or it failed)."""
    try:
        return action()
    except PubNubException as error:
        return {"error": describe(error)}
    except PeerError as error:
        return {"error": str(error)}


def oldest_first(page_before, page_size, max_pages):
    """Every stored message of a channel, oldest first, paging backwards: `page_before(start)`
    answers the up to `page_size` messages before timetoken `start` (None: the newest); a shorter
    page is the last, and at most `max_pages` are read."""
    items, start = [], None
    for _ in range(max_pages):
        page = page_before(start)
        items = page + items
        if len(page) < page_size:
            break
        start = min(int(item.timetoken) for item in page)
    return items


def publish_with_post_fallback(send, what, channel=None, signs=True):
    """`send(use_post)` (a publish's `.sync()`) with GET; when the origin refuses a signed GET with
    403 "Invalid Signature" it is sent again with POST (a note on stderr naming `channel`, when
    given). The pnreplicate simulator re-encodes the decoded path to check a signature and keeps `,`
    raw, while the SDK sent the JSON's commas as %2C: a signed GET publish of an object with two keys
    is refused. A POST signs no message (version 1), so it goes through. Any other failure is a
    PeerError "<what>: <status> <body>"."""
    for use_post in (False, True):
        try:
            return send(use_post)
        except PubNubException as error:
            if use_post or not signs or status_code(error) != 403 \
                    or "Invalid Signature" not in str(error._errormsg):
                raise PeerError(f"{what}: {describe(error)}") from None
            where = f" to {channel}" if channel is not None else ""
            note(f"the signed GET publish{where} was refused ({describe(error)}); publishing with POST")


class Parser(argparse.ArgumentParser):
    """argparse, exiting 64 on a usage error (2 means the pubnub package is missing)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"FAIL {self.prog}: {message}", file=sys.stderr, flush=True)
        sys.exit(64)


def add_connection_arguments(sub, total_seconds, secret_key_required=False,
                             token_help="an Access Manager token sent as auth"):
    """--origin, --timeout (default `total_seconds`) and --secret-key (required, or optional with
    --token) of a subcommand."""
    sub.add_argument("--origin", required=True, help="HOST:PORT")
    sub.add_argument("--timeout", type=float, default=total_seconds, help="bound on the whole run, seconds")
    if secret_key_required:
        sub.add_argument("--secret-key", required=True)
    else:
        sub.add_argument("--secret-key", help="sign every request with the secret key")
        sub.add_argument("--token", help=token_help)


def parse_command_line(parser):
    """`parser.parse_args()`, exiting 64 when --origin is not HOST:PORT; then a watchdog: nothing
    the SDK does may make the run outlast --timeout (a "FAIL" line on stderr, for selfcheck on
    stdout too, and exit 1)."""
    args = parser.parse_args()
    if ":" not in args.origin:
        print(f"FAIL --origin must be HOST:PORT, not {args.origin!r}", file=sys.stderr)
        sys.exit(64)

    def expire():
        if args.command == "selfcheck":
            print(f"FAIL the whole run within {args.timeout:g} s: timed out", flush=True)
        print(f"FAIL the whole run within {args.timeout:g} s: timed out", file=sys.stderr, flush=True)
        os._exit(1)
    watchdog = threading.Timer(args.timeout, expire)
    watchdog.daemon = True
    watchdog.start()
    return args


def run_subcommand(action):
    """`action()`'s exit code; a failure is one line "FAIL ..." on stderr and exit 1."""
    try:
        return action()
    except PeerError as error:
        print(f"FAIL {error}", file=sys.stderr, flush=True)
        return 1
    except Exception as error:
        print(f"FAIL {describe(error)}", file=sys.stderr, flush=True)
        return 1


def run_selfcheck(selfcheck):
    """`selfcheck()`'s exit code; an exception is the failed check "no exception" and exit 1."""
    try:
        return selfcheck()
    except Exception as error:
        check("no exception", False, str(error) if isinstance(error, PeerError) else describe(error))
        return 1

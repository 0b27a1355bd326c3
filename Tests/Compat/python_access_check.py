#!/usr/bin/env python3
"""Checks that the official PubNub Python SDK's Access Manager v3 works against the pnreplicate
simulator started with a secret key (`pnreplicate simulator serve --secret-key K`), unchanged:
grant_token (channels, a uuid pattern, an authorized uuid, meta, categories, ttl) signed with the
secret key, parse_token on what the simulator minted, set_token on a client without the secret
key (publish allowed on the granted channel, refused with PNAccessDeniedCategory on another and
under another uuid), revoke_token (then refused), a token past its TTL after moving the
simulator's clock (`POST /simulator/clock?advance=SECONDS`), an invalid ttl (400), a wrong secret
key (403), and an admin client (the secret key signs every request) publishing with no token.

Usage:
    python3 Tests/Compat/python_access_check.py 127.0.0.1:PORT --secret-key K
        one line per check on stdout ("ok ..." or "FAIL ..."); exit 0 only when every check
        passed. The whole run is bounded (TOTAL_SECONDS), so it never hangs.
    python3 Tests/Compat/python_access_check.py 127.0.0.1:PORT --secret-key K --grant CH[,CH...]
            [--authorized-uuid U] [--ttl MINUTES] [--read-pattern REGEX] [--meta JSON]
        grants read and write on the channels (and get, update on the authorized uuid; read on
        the channels the pattern matches; the meta object) with grant_token and prints the token,
        one line: for the command line's checks.

Keys are `demo`/`demo` (the simulator's defaults). Checked with pubnub 10.8.0 (the synchronous
API); the SDK is not changed.
"""

import argparse
import json
import os
import sys
import threading
import time
import urllib.request
import uuid as uuidlib
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)

try:
    from pubnub.enums import PNStatusCategory
    from pubnub.exceptions import PubNubException
    from pubnub.models.consumer.v3.category import Category
    from pubnub.models.consumer.v3.channel import Channel
    from pubnub.models.consumer.v3.uuid import UUID
    from compat_support import check, configuration, finish
    from pubnub.pubnub import PubNub
except ImportError as error:
    print(f"FAIL the pubnub package is not installed ({error}); python3 -m pip install pubnub")
    sys.exit(2)

TOTAL_SECONDS = 60


def client(origin, user_id, secret_key=None):
    """A synchronous client of the simulator; with `secret_key` it signs every request."""
    config = configuration(origin, user_id)
    if secret_key:
        config.secret_key = secret_key
    return PubNub(config)


def refusal(endpoint):
    """Sends `endpoint` (a built request: `alice.publish().channel(...)...`) through the SDK's
    threaded API, whose status carries the category; returns (category, status code, error body)
    when it was refused, None when it succeeded. The synchronous API raises an exception that
    keeps the status code and body but not the category."""
    done = threading.Event()
    outcome = {}

    def callback(result, status):
        outcome["status"] = status
        done.set()

    endpoint.pn_async(callback)
    if not done.wait(20):
        return ("no answer within 20 s", 0, None)
    status = outcome["status"]
    if not status.is_error():
        return None
    body = None
    exception = status.error_data.exception if status.error_data is not None else None
    if exception is not None:
        try:
            body = json.loads(exception._errormsg)
        except (TypeError, ValueError):
            body = exception._errormsg
    return status.category, status.status_code, body


def move_clock(origin, seconds):
    """Moves the simulator's clock forward (its own endpoint, not PubNub's)."""
    request = urllib.request.Request(f"http://{origin}/simulator/clock?advance={seconds}", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def grant(admin, channels, authorized_uuid, ttl, read_pattern=None, meta=None):
    resources = [Channel.id(name).read().write() for name in channels]
    if read_pattern:
        resources.append(Channel.pattern(read_pattern).read())
    builder = admin.grant_token().channels(resources).ttl(ttl)
    if meta is not None:
        builder = builder.meta(meta)
    if authorized_uuid:
        builder = builder.uuids([UUID.id(authorized_uuid).get().update()]).authorized_uuid(authorized_uuid)
    return builder.sync().result.token


def checks(origin, secret_key):
    started = time.monotonic()
    admin = client(origin, "py-access-admin", secret_key)
    room = f"py-access-{uuidlib.uuid4().hex[:8]}"
    other = room + "-other"

    envelope = admin.grant_token() \
        .channels([Channel.id(room).read().write(), Channel.pattern("^thread-.*$").read()]) \
        .uuids([UUID.id("alice").get().update(), UUID.pattern("^user-.*$").get()]) \
        .categories([Category.uuids().get()]) \
        .authorized_uuid("alice").ttl(2).meta({"role": "member"}).sync()
    token = envelope.result.token
    check("grant_token: a token, padded base64url", isinstance(token, str) and len(token) % 4 == 0
          and set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_="), repr(token)[:80])
    check("grant_token: status 200", envelope.status.status_code == 200, str(envelope.status.status_code))

    try:
        parsed = admin.parse_token(token)
    except Exception as error:  # parse_token's base64 step raises outside its own try block
        parsed = None
        check("parse_token: no exception", False, repr(error))
    if parsed is not None:
        check("parse_token: version 2, ttl 2, authorized uuid alice, meta", parsed.get("version") == 2
              and parsed.get("ttl") == 2 and parsed.get("authorized_uuid") == "alice"
              and parsed.get("meta") == {"role": "member"}, str(parsed))
        channel = parsed.get("resources", {}).get("channels", {}).get(room, {})
        check("parse_token: the channel with read and write only", channel.get("read") is True
              and channel.get("write") is True and channel.get("delete") is False and channel.get("get") is False, str(channel))
        check("parse_token: the uuid with get and update",
              parsed["resources"]["uuids"].get("alice", {}).get("update") is True, str(parsed["resources"]["uuids"]))
        check("parse_token: the patterns", parsed["patterns"]["channels"].get("^thread-.*$", {}).get("read") is True
              and parsed["patterns"]["uuids"].get("^user-.*$", {}).get("get") is True, str(parsed["patterns"]))
        check("parse_token: the timestamp is the simulator's now (seconds)",
              abs(parsed.get("timestamp", 0) - time.time()) < 120, str(parsed.get("timestamp")))

    alice = client(origin, "alice")
    alice.set_token(token)
    sent = alice.publish().channel(room).message({"text": "hello"}).sync()
    check("set_token: publish on the granted channel", sent.status.status_code == 200, str(sent.status.status_code))
    history = alice.fetch_messages().channels(room).include_uuid(True).sync().result.channels.get(room, [])
    check("set_token: history of the granted channel", [m.message for m in history] == [{"text": "hello"}]
          and history[0].uuid == "alice", str([(m.message, m.uuid) for m in history]))
    thread = alice.fetch_messages().channels("thread-1").sync()
    check("set_token: history of a channel the read pattern matches", thread.status.status_code == 200)

    refused = refusal(alice.publish().channel(other).message("no"))
    check("publish on another channel: PNAccessDeniedCategory (403) naming the channel",
          refused is not None and refused[0] == PNStatusCategory.PNAccessDeniedCategory and refused[1] == 403
          and isinstance(refused[2], dict) and refused[2].get("payload", {}).get("channels") == [other], str(refused))
    refused = refusal(alice.publish().channel("thread-1").message("no"))
    check("publish where the pattern grants only read: refused (403)", refused is not None
          and refused[0] == PNStatusCategory.PNAccessDeniedCategory and refused[1] == 403, str(refused))

    bob = client(origin, "bob")
    bob.set_token(token)
    refused = refusal(bob.publish().channel(room).message("bob"))
    check("the token under another uuid: refused (403)", refused is not None
          and refused[0] == PNStatusCategory.PNAccessDeniedCategory, str(refused))
    nobody = client(origin, "nobody")
    refused = refusal(nobody.publish().channel(room).message("x"))
    check("no token: refused (403)", refused is not None
          and refused[0] == PNStatusCategory.PNAccessDeniedCategory and refused[1] == 403, str(refused))

    published = admin.publish().channel(other).message("from the admin").sync()
    check("admin (signed with the secret key, no token): publish anywhere", published.status.status_code == 200)

    revoked = admin.revoke_token(token).sync()
    check("revoke_token: status 200", revoked.result.status == 200, str(revoked.result.status))
    refused = refusal(alice.publish().channel(room).message("after revoke"))
    check("after revoke: refused, Token is revoked", refused is not None
          and refused[0] == PNStatusCategory.PNAccessDeniedCategory
          and isinstance(refused[2], dict) and refused[2].get("message") == "Token is revoked", str(refused))

    fresh = grant(admin, [room], "alice", 1)
    alice.set_token(fresh)
    check("a fresh token (ttl 1): publish", alice.publish().channel(room).message("fresh").sync().status.status_code == 200)
    clock = move_clock(origin, 61)
    check("the simulator's clock moved 61 s", clock.get("offset", 0) >= 61, str(clock))
    refused = refusal(alice.publish().channel(room).message("late"))
    check("past the TTL: refused, Token is expired.", refused is not None
          and refused[0] == PNStatusCategory.PNAccessDeniedCategory
          and isinstance(refused[2], dict) and refused[2].get("message") == "Token is expired.", str(refused))
    refused = refusal(admin.revoke_token(fresh))
    check("revoke_token of an expired token: 400, Token is expired.", refused is not None and refused[1] == 400
          and isinstance(refused[2], dict) and refused[2].get("error", {}).get("details", [{}])[0].get("message")
          == "Token is expired.", str(refused))

    refused = refusal(admin.grant_token().channels([Channel.id(room).read()]).ttl(43201))
    check("grant_token ttl 43201: 400 Invalid ttl", refused is not None and refused[1] == 400
          and refused[0] == PNStatusCategory.PNBadRequestCategory, str(refused))
    impostor = client(origin, "py-access-impostor", secret_key + "-wrong")
    refused = refusal(impostor.grant_token().channels([Channel.id(room).read()]).ttl(5))
    check("grant_token with a wrong secret key: 403", refused is not None
          and refused[0] == PNStatusCategory.PNAccessDeniedCategory and refused[1] == 403, str(refused))

    stored = admin.fetch_messages().channels(room).sync().result.channels.get(room, [])
    check("only the allowed publishes were stored", [m.message for m in stored] == [{"text": "hello"}, "fresh"],
          str([m.message for m in stored]))

    return finish(started)


def main():
    parser = argparse.ArgumentParser(description="the official Python SDK's Access Manager against the simulator")
    parser.add_argument("origin", help="HOST:PORT of `pnreplicate simulator serve --secret-key K`")
    parser.add_argument("--secret-key", required=True)
    parser.add_argument("--grant", metavar="CH[,CH...]", help="grant read and write on these channels and print the token")
    parser.add_argument("--authorized-uuid")
    parser.add_argument("--ttl", type=int, default=60)
    parser.add_argument("--read-pattern", metavar="REGEX", help="with --grant: also read on the channels it matches")
    parser.add_argument("--meta", metavar="JSON", type=json.loads, help="with --grant: the token's meta, a JSON object")
    args = parser.parse_args()
    if ":" not in args.origin:
        parser.print_usage(sys.stderr)
        return 64

    # A watchdog: nothing the SDK does may make the run outlast its bound.
    def expire():
        print(f"FAIL the whole run within {TOTAL_SECONDS} s: timed out", flush=True)
        os._exit(1)
    watchdog = threading.Timer(TOTAL_SECONDS, expire)
    watchdog.daemon = True
    watchdog.start()
    if args.grant:
        admin = client(args.origin, "py-access-admin", args.secret_key)
        print(grant(admin, args.grant.split(","), args.authorized_uuid, args.ttl, args.read_pattern, args.meta), flush=True)
        return 0
    try:
        return checks(args.origin, args.secret_key)
    except Exception as error:
        check("no exception from the SDK", False, repr(error))
        return 1


if __name__ == "__main__":
    sys.exit(main())

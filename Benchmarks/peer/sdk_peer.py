#!/usr/bin/env python3
"""The peer of `pnreplicate-bench` (issue 51): the official PubNub Python SDK (the version CI
installs, pubnub==10.8.0) doing the work pnreplicate's CLI rows do, without a store, against the
same simulator (`pnreplicate simulator serve`, plain HTTP, keys demo/demo unless given):

    python3 Benchmarks/peer/sdk_peer.py catchup --origin 127.0.0.1:PORT --channels 100 --per-channel 200
    python3 Benchmarks/peer/sdk_peer.py publish --origin 127.0.0.1:PORT --channel bench-sdk-1 --count 2000

catchup: every channel of a seeded keyset (`simulator serve --keyset-channels N --keyset-messages
M`, whose channels are ch-0000, ch-0001, ...), one after the other as an app would, each paged
backwards with `fetch_messages` (100 a page, `start` = the oldest timetoken of the page before)
until a page comes back short; asks for the fields `pnreplicate sync` asks for (meta, uuid,
message type, custom message type) and checks it got N x M distinct messages.

publish: `count` messages published one by one with `publish().sync()` (the SDK's default, GET;
`--post` for POST, as pnreplicate publishes), each as pnreplicate's `send --text bench --count`
publishes it: the payload {"createdAt": ISO 8601, "id": a UUID, "text": "bench N"} and the meta
{"pnr_op": a UUID} (the op id pnreplicate's outbox deduplicates by), so both sides send the same
fields.

Prints `bench: peer.<mode>.seconds S` (the work only: client creation to the last answer, the
import excluded) and `bench: peer.<mode>.requests R`; `pnreplicate-bench` also times the whole
process. Exit status: 0 done, 1 the work failed or came out wrong (a `sdk_peer: ... failed` line on
stdout, which `pnreplicate-bench` reads; it drops stderr), 2 the pubnub package is missing, 64 a
usage error. Nothing subscribes (no subscription manager), the SDK's one other thread (its request
watchdog) is a daemon, and the HTTP session is closed before exit, so the process ends as soon as
the work does.
"""

import argparse
import datetime
import sys
import time
import uuid

try:
    from pubnub.exceptions import PubNubException
    from pubnub.pnconfiguration import PNConfiguration
    from pubnub.pubnub import PubNub
except ImportError as error:
    print(f"sdk_peer: the pubnub package is not installed ({error}); python3 -m pip install pubnub==10.8.0", file=sys.stderr)
    sys.exit(2)

PAGE = 100


def client(arguments):
    """A synchronous client of the simulator at `arguments.origin` (HOST:PORT, plain HTTP), with
    no subscription manager (nothing here subscribes, so no subscribe threads are started)."""
    config = PNConfiguration()
    config.publish_key = arguments.pub_key
    config.subscribe_key = arguments.sub_key
    config.user_id = arguments.user_id
    config.ssl = False
    config.origin = arguments.origin
    config.enable_subscribe = False
    config.non_subscribe_request_timeout = 30
    config.connect_timeout = 5
    return PubNub(config)


def close(pubnub):
    """Stops the request handler's watchdog thread and closes its HTTP session (`PubNub.stop()`
    would refuse: it wants a subscription manager)."""
    handler = pubnub.get_request_handler()
    if hasattr(handler, "close"):
        handler.close()


def channel_id(index):
    """The keyset's channel names (ChatKeyset.channelId): ch-0000, ch-0001, ..."""
    return f"ch-{index:04d}"


def catchup(arguments):
    """Pages every channel's history back to its start; returns (messages, requests)."""
    pubnub = client(arguments)
    requests, total = 0, 0
    try:
        for index in range(arguments.channels):
            channel = channel_id(index)
            timetokens = set()
            start = None
            while True:
                call = (pubnub.fetch_messages().channels(channel).maximum_per_channel(PAGE)
                        .include_meta(True).include_uuid(True).include_message_type(True)
                        .include_custom_message_type(True))
                if start is not None:
                    call = call.start(start)
                envelope = call.sync()
                requests += 1
                page = envelope.result.channels.get(channel, [])
                timetokens.update(int(item.timetoken) for item in page)
                if len(page) < PAGE:
                    break
                start = min(int(item.timetoken) for item in page)
            if len(timetokens) != arguments.per_channel:
                raise RuntimeError(f"{channel}: {len(timetokens)} messages, expected {arguments.per_channel}")
            total += len(timetokens)
    finally:
        close(pubnub)
    return total, requests


def publish(arguments):
    """Publishes `count` messages one by one; returns (messages, requests)."""
    pubnub = client(arguments)
    try:
        for number in range(1, arguments.count + 1):
            created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
            message = {"createdAt": created, "id": str(uuid.uuid4()), "text": f"{arguments.text} {number}"}
            envelope = (pubnub.publish().channel(arguments.channel).message(message)
                        .meta({"pnr_op": str(uuid.uuid4())}).use_post(arguments.post).sync())
            if not envelope.result.timetoken:
                raise RuntimeError(f"publish {number}: no timetoken in the answer")
    finally:
        close(pubnub)
    return arguments.count, arguments.count


def main():
    parser = argparse.ArgumentParser(description="The official Python SDK's side of pnreplicate-bench's peer rows.")
    parser.add_argument("mode", choices=["catchup", "publish"])
    parser.add_argument("--origin", required=True, help="the simulator's HOST:PORT (plain HTTP)")
    parser.add_argument("--pub-key", default="demo")
    parser.add_argument("--sub-key", default="demo")
    parser.add_argument("--user-id", default="sdk-peer")
    parser.add_argument("--channels", type=int, default=100, help="catchup: channels ch-0000 ... to read")
    parser.add_argument("--per-channel", type=int, default=200, help="catchup: messages each channel holds")
    parser.add_argument("--channel", default="bench-sdk", help="publish: the channel")
    parser.add_argument("--count", type=int, default=2000, help="publish: how many messages")
    parser.add_argument("--text", default="bench", help="publish: the text, numbered as pnreplicate send --count numbers it")
    parser.add_argument("--post", action="store_true", help="publish: POST instead of the SDK's default GET")
    arguments = parser.parse_args()
    if arguments.origin.startswith(("http://", "https://")) or arguments.channels < 1 or arguments.per_channel < 0 or arguments.count < 1:
        print("sdk_peer: --origin is HOST:PORT (no scheme); --channels and --count must be positive", file=sys.stderr)
        sys.exit(64)

    started = time.monotonic()
    try:
        messages, requests = catchup(arguments) if arguments.mode == "catchup" else publish(arguments)
    except PubNubException as error:
        print(f"sdk_peer: {arguments.mode} failed: {getattr(error, '_status_code', None)} {getattr(error, '_errormsg', error)}", flush=True)
        sys.exit(1)
    except Exception as error:  # a wrong count or an unexpected answer's shape
        print(f"sdk_peer: {arguments.mode} failed: {error!r}", flush=True)
        sys.exit(1)
    seconds = time.monotonic() - started
    print(f"bench: peer.{arguments.mode}.seconds {seconds:.4f}")
    print(f"bench: peer.{arguments.mode}.messages {messages}")
    print(f"bench: peer.{arguments.mode}.requests {requests}", flush=True)


if __name__ == "__main__":
    main()

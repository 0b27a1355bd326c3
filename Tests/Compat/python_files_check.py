#!/usr/bin/env python3
"""Checks that the official PubNub Python SDK's File Sharing works against the pnreplicate
simulator unchanged: send_file (with a message, stored), list_files (and its paging),
get_file_url, download_file (bytes identical), delete_file and fetch_messages with the message
type, three ways: no cipher key; `config.cipher_key` (the legacy crypto module); and
`config.crypto_module = AesCbcCryptoModule(config)` (the ACRH header). Encrypted runs also check,
with a client without the key, that the simulator stored ciphertext (it never decrypts).

Usage:
    python3 Tests/Compat/python_files_check.py 127.0.0.1:PORT
        one line per check on stdout ("ok ..." or "FAIL ..."); exit 0 only when every check
        passed. The whole run is bounded (TOTAL_SECONDS), so it never hangs.
    python3 Tests/Compat/python_files_check.py 127.0.0.1:PORT --upload CH PATH [--message JSON]
            [--cipher-key K --cryptor legacy|acrh]
        sends the file at PATH to channel CH (stored, with the message if given) and prints one
        JSON line: {"id": ..., "name": ..., "timetoken": ...}.
    python3 Tests/Compat/python_files_check.py 127.0.0.1:PORT --download CH ID NAME
            [--cipher-key K --cryptor legacy|acrh]
        downloads the file (decrypted with the key) and prints the SHA-256 hex of its bytes.

Checked with pubnub 10.8.0 (the synchronous API); the SDK is not changed.
"""

import argparse
import hashlib
import json
import os
import sys
import threading
import time
import uuid as uuidlib
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)

try:
    from pubnub.crypto import AesCbcCryptoModule
    from pubnub.exceptions import PubNubException
    from compat_support import check, configuration, finish
    from pubnub.pubnub import PubNub
except ImportError as error:
    print(f"FAIL the pubnub package is not installed ({error}); python3 -m pip install pubnub")
    sys.exit(2)

TOTAL_SECONDS = 60
CIPHER_KEY = "knightsofni"
MAX_FILE_BYTES = 5 * 1024 * 1024


def client(origin, user_id, cipher_key=None, cryptor=None):
    """A synchronous client of the simulator; with `cipher_key`, the legacy crypto module
    (`cryptor` "legacy", the SDK's default for a cipher key) or the ACRH one ("acrh")."""
    config = configuration(origin, user_id)
    if cipher_key:
        config.cipher_key = cipher_key
        if cryptor == "acrh":
            config.crypto_module = AesCbcCryptoModule(config)
    return PubNub(config)


def send(pubnub, channel, name, data, message=None, store=True):
    envelope = pubnub.send_file().channel(channel).file_name(name).message(message).should_store(store) \
        .file_object(data).sync()
    return envelope.result


def download(pubnub, channel, file_id, name):
    return pubnub.download_file().channel(channel).file_id(file_id).file_name(name).sync().result.data


def run_mode(origin, mode, cipher_key, cryptor):
    """One pass of every check in one crypto mode ("plain", "legacy", "acrh")."""
    tag = f"[{mode}]"
    pubnub = client(origin, f"py-files-{mode}", cipher_key, cryptor)
    plain = client(origin, f"py-files-raw-{mode}")
    channel = f"py-files-{mode}-{uuidlib.uuid4().hex[:8]}"
    data = (b"It is only a model. " * 300) + mode.encode()
    message = {"text": f"a file in {mode}", "n": 1}
    name = "king arthur.txt"

    sent = send(pubnub, channel, name, data, message=message)
    check(f"{tag} send_file: id, echoed name and timetoken", bool(sent.file_id) and sent.name == name
          and str(sent.timestamp).isdigit(), f"{sent.file_id!r} {sent.name!r} {sent.timestamp!r}")

    listed = pubnub.list_files().channel(channel).sync().result
    entry = next((f for f in listed.data if f.get("id") == sent.file_id), None)
    check(f"{tag} list_files: the file, with its name, size and created", entry is not None
          and entry.get("name") == name and isinstance(entry.get("size"), int)
          and str(entry.get("created", "")).endswith("Z") and listed.count == 1, str(listed.data))
    if mode == "plain":
        check(f"{tag} list_files: size is the byte count", entry is not None and entry.get("size") == len(data), str(entry))

    url = pubnub.get_file_url().channel(channel).file_id(sent.file_id).file_name(name).sync().result.file_url
    check(f"{tag} get_file_url: a storage URL on the simulator", url.startswith(f"http://{origin}/")
          and "X-Amz-Signature=" in url and "uuid=" not in url, url)

    got = download(pubnub, channel, sent.file_id, name)
    check(f"{tag} download_file: bytes identical", got == data, f"{len(got)} bytes")

    # fetch_messages decrypts only when asked (decrypt_messages, off by default in 10.8.0).
    history = pubnub.fetch_messages().channels(channel).include_message_type(True).include_meta(False) \
        .decrypt_messages(bool(cipher_key)).sync().result
    items = history.channels.get(channel, [])
    check(f"{tag} fetch_messages: one file message with message_type 4", len(items) == 1
          and str(items[0].message_type) == "4", str([(i.message, i.message_type) for i in items]))
    if items:
        body = items[0].message
        check(f"{tag} fetch_messages: the message and the file reference", isinstance(body, dict)
              and body.get("message") == message and body.get("file", {}).get("id") == sent.file_id
              and body.get("file", {}).get("name") == name, str(body))

    if cipher_key:
        raw = download(plain, channel, sent.file_id, name)
        expected = raw.startswith(b"PNED") if cryptor == "acrh" else not raw.startswith(b"PNED")
        check(f"{tag} storage holds ciphertext, as uploaded", raw != data and expected, raw[:8].hex())
        stored = plain.fetch_messages().channels(channel).include_message_type(True).sync().result
        stored_items = stored.channels.get(channel, [])
        check(f"{tag} history holds the encrypted payload (a string)", len(stored_items) == 1
              and isinstance(stored_items[0].message, str), str([i.message for i in stored_items])[:120])

    deleted = pubnub.delete_file().channel(channel).file_id(sent.file_id).file_name(name).sync().result
    check(f"{tag} delete_file: status 200", deleted.status == 200, str(deleted.status))
    after = pubnub.list_files().channel(channel).sync().result
    check(f"{tag} list_files after delete: empty", after.data == [] and after.count == 0, str(after.data))
    try:
        pubnub.get_file_url().channel(channel).file_id(sent.file_id).file_name(name).sync()
        check(f"{tag} get_file_url after delete: refused", False, "answered")
    except PubNubException as error:
        check(f"{tag} get_file_url after delete: refused (404)", error.get_status_code() == 404, repr(error))


def run_extra_checks(origin):
    """Paging and the size limit, without a cipher key."""
    pubnub = client(origin, "py-files-extra")
    channel = f"py-files-paging-{uuidlib.uuid4().hex[:8]}"
    ids = [send(pubnub, channel, f"f{i}.txt", f"file {i}".encode(), store=False).file_id for i in range(3)]
    seen, cursor, pages = [], None, 0
    while pages < 5:
        builder = pubnub.list_files().channel(channel).limit(2)
        if cursor:
            builder = builder.next(cursor)
        page = builder.sync().result
        seen += [f["id"] for f in page.data]
        pages += 1
        cursor = page.next
        if not cursor:
            break
    check("list_files limit 2: every file once, oldest first, in two pages", seen == ids and pages == 2, f"{seen} in {pages}")
    history = pubnub.fetch_messages().channels(channel).sync().result
    check("should_store(False): no file message in history", history.channels.get(channel, []) == [], str(history.channels))

    big = f"py-files-big-{uuidlib.uuid4().hex[:8]}"
    try:
        send(pubnub, big, "big.bin", b"\0" * (MAX_FILE_BYTES + 1))
        check("send_file over 5 MiB: refused by storage", False, "accepted")
    except PubNubException as error:
        check("send_file over 5 MiB: refused by storage (400)", error.get_status_code() == 400, repr(error))
    check("send_file over 5 MiB: nothing listed, nothing published",
          pubnub.list_files().channel(big).sync().result.data == []
          and pubnub.fetch_messages().channels(big).sync().result.channels.get(big, []) == [])
    try:
        pubnub.list_files().channel(channel).limit(101).sync()
        check("list_files limit 101: refused", False, "accepted")
    except PubNubException as error:
        check("list_files limit 101: refused (400)", error.get_status_code() == 400, repr(error))


def checks(origin):
    started = time.monotonic()
    for mode, key, cryptor in (("plain", None, None), ("legacy", CIPHER_KEY, "legacy"), ("acrh", CIPHER_KEY, "acrh")):
        try:
            run_mode(origin, mode, key, cryptor)
        except Exception as error:  # one mode's SDK exception must not hide the others' results
            check(f"[{mode}] no exception from the SDK", False, repr(error))
    try:
        run_extra_checks(origin)
    except Exception as error:
        check("no exception from the SDK (paging, size limit)", False, repr(error))
    return finish(started)


def main():
    parser = argparse.ArgumentParser(description="the official Python SDK's File Sharing against the simulator")
    parser.add_argument("origin", help="HOST:PORT of `pnreplicate simulator serve`")
    parser.add_argument("--upload", nargs=2, metavar=("CH", "PATH"))
    parser.add_argument("--download", nargs=3, metavar=("CH", "ID", "NAME"))
    parser.add_argument("--message", help="a JSON message sent with --upload")
    parser.add_argument("--cipher-key")
    parser.add_argument("--cryptor", choices=("legacy", "acrh"), default="legacy")
    args = parser.parse_args()
    if ":" not in args.origin or (args.upload and args.download):
        parser.print_usage(sys.stderr)
        return 64
    # A watchdog: nothing the SDK does may make the run outlast its bound.
    def expire():
        print(f"FAIL the whole run within {TOTAL_SECONDS} s: timed out", flush=True)
        os._exit(1)
    watchdog = threading.Timer(TOTAL_SECONDS, expire)
    watchdog.daemon = True
    watchdog.start()
    if args.upload:
        channel, path = args.upload
        with open(path, "rb") as handle:
            data = handle.read()
        message = json.loads(args.message) if args.message is not None else None
        pubnub = client(args.origin, "py-files-upload", args.cipher_key, args.cryptor)
        sent = send(pubnub, channel, os.path.basename(path), data, message=message)
        print(json.dumps({"id": sent.file_id, "name": sent.name, "timetoken": str(sent.timestamp)}), flush=True)
        return 0
    if args.download:
        channel, file_id, name = args.download
        pubnub = client(args.origin, "py-files-download", args.cipher_key, args.cryptor)
        print(hashlib.sha256(download(pubnub, channel, file_id, name)).hexdigest(), flush=True)
        return 0
    return checks(args.origin)


if __name__ == "__main__":
    try:
        code = main()
    except PubNubException as error:
        print(f"error {error!r}", file=sys.stderr, flush=True)
        code = 1
    sys.stdout.flush()
    # Never wait for a lingering SDK thread or connection.
    os._exit(code)

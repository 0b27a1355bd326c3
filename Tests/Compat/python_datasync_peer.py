"""Another client of a DataSync keyset, writing raw DataSync requests the way the Kotlin SDK's
DataSync calls do (`../shared/reference/datasync.md` §2-§7; no official Python SDK speaks DataSync):
paths `/v1/datasync/subkeys/{subKey}/{resource}[/{id}]`, the vendor content type
`application/vnd.pubnub.objects.<res>+json;version=1` on a create, `application/json-patch+json` on
a JSON Patch with the record's eTag as `If-Match`, `uuid` and `pnsdk` in the query, and Access
Manager's request signature (the secret key's holder: an app's server, an admin tool).

Standard library only (urllib, hmac), so it runs wherever python3 does. Used by
Tests/CLITests/DataSyncPeerTests.swift against `pnreplicate simulator serve --secret-key`.

    python3 python_datasync_peer.py --origin 127.0.0.1:PORT --secret-key KEY get channels ch-0000
    python3 python_datasync_peer.py ... create users peer-1 '{"name": "Peer"}'
    python3 python_datasync_peer.py ... create memberships m-1 '{}' --channel ch-0000 --user peer-1 --status joined
    python3 python_datasync_peer.py ... patch channels ch-0000 /payload/name '"Renamed"'
    python3 python_datasync_peer.py ... --as u-0001 raw POST /publish/demo/demo/0/ch-0003/0 --body '"hi"'
    python3 python_datasync_peer.py ... define-class entity Poll 1 '{"properties": [{"name": "closed",
        "path": "/payload/closed", "valueKind": "boolean", "filtering": "simple"}]}'

`define-class` is the Admin API (§16): `POST /v2/datasync/subkeys/{subKey}/{entity|relationship}-classes/
{Name}/versions/{n}` with `Authorization: <admin key>` (`--admin-key`, else the secret key), as a
team's script defines its classes; it prints the class answered.

Each prints the record the server answered as one JSON line (`get` of a missing record prints
`null`); a failed request is a `FAIL <status> <body>` line on stderr and exit 1; a usage error 64.
"""

import argparse
import base64
import hashlib
import hmac
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

PNSDK = "PubNub-Kotlin/12.0.0"
SINGULAR = {"users": "user", "channels": "channel", "memberships": "membership"}


class Peer:
    def __init__(self, origin, secret_key, publish_key="demo", subscribe_key="demo", user_id="peer"):
        self.origin, self.secret_key = origin, secret_key
        self.publish_key, self.subscribe_key, self.user_id = publish_key, subscribe_key, user_id

    @staticmethod
    def encode(value):
        """Access Manager's query encoding (`pam_encode`): only A-Z a-z 0-9 _ . - stay."""
        return urllib.parse.quote(value, safe="").replace("~", "%7E")

    def request(self, method, resource, record_id=None, body=None, content_type=None, if_match=None):
        """Sends one signed DataSync request; returns (status, parsed JSON body or None)."""
        path = f"/v1/datasync/subkeys/{self.subscribe_key}/{resource}"
        if record_id is not None:
            path += "/" + urllib.parse.quote(record_id, safe="")
        text = None if body is None else json.dumps(body, separators=(",", ":"))
        return self.send(method, path, {}, text, content_type, if_match)

    def send(self, method, path, extra_query, text=None, content_type=None, if_match=None):
        """Sends `method path?query` with body `text`, signed as Access Manager wants: version 2
        (`v2.` + base64url without padding over METHOD, publish key, path, sorted query, body),
        or version 1 for a POST to /publish (subscribe key, publish key, path, query; padding
        kept, no prefix). `path` is sent as given (already escaped). Returns (status, JSON or
        text or None)."""
        query = dict(extra_query)
        query.update({"uuid": self.user_id, "pnsdk": PNSDK, "timestamp": str(int(time.time()))})
        signed_query = "&".join(f"{name}={self.encode(query[name])}" for name in sorted(query))
        if method == "POST" and path.startswith("/publish"):
            signed, prefix, strip = f"{self.subscribe_key}\n{self.publish_key}\n{path}\n{signed_query}", "", False
        else:
            signed, prefix, strip = f"{method}\n{self.publish_key}\n{path}\n{signed_query}\n{text or ''}", "v2.", True
        digest = base64.urlsafe_b64encode(hmac.new(self.secret_key.encode(), signed.encode(), hashlib.sha256).digest()).decode()
        query["signature"] = prefix + (digest.rstrip("=") if strip else digest)
        url = f"http://{self.origin}{path}?" + "&".join(f"{k}={self.encode(v)}" for k, v in query.items())
        body = text
        headers = {}
        if content_type:
            headers["Content-Type"] = content_type
        if if_match:
            headers["If-Match"] = if_match
        return exchange(method, url, body.encode() if body is not None else None, headers)

    def get(self, resource, record_id):
        """The record, or None when there is none (404)."""
        status, body = self.request("GET", resource, record_id)
        if status == 404:
            return None
        expect(status, 200, body)
        return body["data"]

    def create(self, resource, record_id, payload, channel=None, user=None, status=None):
        """`createUser`/`createChannel`/`createMembership`: a POST of {"data": {...}} in the
        resource's vendor type (class version 1, the built-in class)."""
        data = {"id": record_id, "payload": payload}
        if resource == "memberships":
            data.update({"channelId": channel, "userId": user, "relationshipClassVersion": 1})
        else:
            data["entityClassVersion"] = 1
        if status is not None:
            data["status"] = status
        content_type = f"application/vnd.pubnub.objects.{SINGULAR[resource]}+json;version=1"
        answer_status, body = self.request("POST", resource, body={"data": data}, content_type=content_type)
        expect(answer_status, 201, body)
        return body["data"]

    def patch(self, resource, record_id, pointer, value):
        """`updateX(id, operations = [Add(pointer, value)], ifMatch = eTag)`: the record is read
        first for its eTag, as an app holding it would have it."""
        current = self.get(resource, record_id)
        if current is None:
            fail(404, f"no {resource} {record_id}")
        operations = [{"op": "add", "path": pointer, "value": value}]
        status, body = self.request(
            "PATCH", resource, record_id, body=operations, content_type="application/json-patch+json",
            if_match=current["eTag"])
        expect(status, 200, body)
        return body["data"]

    def define_class(self, kind, name, version, definition, admin_key):
        """The Admin API's class definition: {"data": definition} in the class vendor type."""
        path = (f"/v2/datasync/subkeys/{self.subscribe_key}/{kind}-classes/"
                f"{urllib.parse.quote(name, safe='')}/versions/{version}")
        headers = {"Authorization": admin_key, "PubNub-Version": "2026-09-17",
                   "Content-Type": f"application/vnd.pubnub.objects.{kind}-class+json;version=1"}
        body = json.dumps({"data": definition}, separators=(",", ":")).encode()
        return exchange("POST", f"http://{self.origin}{path}", body, headers)


def exchange(method, url, data, headers):
    """One HTTP request; returns (status, parsed JSON body, or its text, or None when empty)."""
    http = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(http, timeout=30) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode(errors="replace")


def expect(status, wanted, body):
    if status != wanted:
        fail(status, body)


def fail(status, body):
    print(f"FAIL {status} {json.dumps(body) if not isinstance(body, str) else body}", file=sys.stderr, flush=True)
    sys.exit(1)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"FAIL {self.prog}: {message}", file=sys.stderr, flush=True)
        sys.exit(64)


def main():
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origin", required=True, help="HOST:PORT")
    parser.add_argument("--secret-key", required=True)
    parser.add_argument("--subscribe-key", default="demo")
    parser.add_argument("--publish-key", default="demo")
    parser.add_argument("--as", dest="acting", default="peer", help="the uuid the requests carry")
    commands = parser.add_subparsers(dest="command", required=True)
    get = commands.add_parser("get")
    get.add_argument("resource", choices=sorted(SINGULAR))
    get.add_argument("id")
    create = commands.add_parser("create")
    create.add_argument("resource", choices=sorted(SINGULAR))
    create.add_argument("id")
    create.add_argument("payload", help="a JSON object")
    create.add_argument("--channel")
    create.add_argument("--user")
    create.add_argument("--status")
    patch = commands.add_parser("patch")
    patch.add_argument("resource", choices=sorted(SINGULAR))
    patch.add_argument("id")
    patch.add_argument("pointer", help="an RFC 6901 pointer, e.g. /payload/name")
    patch.add_argument("value", help="a JSON value")
    define = commands.add_parser("define-class", help="define a class through the Admin API")
    define.add_argument("kind", choices=["entity", "relationship"])
    define.add_argument("name")
    define.add_argument("version", type=int)
    define.add_argument("definition", help="the JSON object under data (properties, config, ...)")
    define.add_argument("--admin-key", help="the Admin API key (default: the secret key)")
    define.add_argument("--exists-ok", action="store_true",
                        help="a 409 (the class exists: a retry whose first answer was lost) is success")
    seed = commands.add_parser("seed-entities", help="create COUNT entities of CLASS, ids PREFIX.0 ... (one request each)")
    seed.add_argument("entity_class")
    seed.add_argument("prefix")
    seed.add_argument("count", type=int)
    seed.add_argument("payload", help="a JSON object; {i} in a string is replaced by the record's number")
    raw = commands.add_parser("raw", help="any signed request; prints the answer's body")
    raw.add_argument("method", choices=["GET", "POST", "PATCH", "PUT", "DELETE"])
    raw.add_argument("path", help="the path as sent, escaped")
    raw.add_argument("--query", action="append", default=[], help="NAME=VALUE (repeatable)")
    raw.add_argument("--body", help="the body's text")
    raw.add_argument("--content-type", default="application/json")
    args = parser.parse_args()
    peer = Peer(args.origin, args.secret_key, args.publish_key, args.subscribe_key, args.acting)
    try:
        if args.command == "raw":
            extra = dict(item.split("=", 1) for item in args.query)
            status, body = peer.send(args.method, args.path, extra, args.body,
                                     args.content_type if args.body is not None else None)
            if not 200 <= status < 300:
                fail(status, body)
            print(json.dumps(body) if not isinstance(body, str) else body, flush=True)
            return 0
        if args.command == "seed-entities":
            path = f"/v1/datasync/subkeys/{peer.subscribe_key}/entities"
            for number in range(args.count):
                payload = json.loads(args.payload.replace("{i}", str(number)))
                body = {"data": {"id": f"{args.prefix}.{number}", "entityClass": args.entity_class,
                                 "entityClassVersion": 1, "payload": payload}}
                status, answer = peer.send("POST", path, {}, json.dumps(body, separators=(",", ":")),
                                           "application/vnd.pubnub.objects.entity+json;version=1")
                expect(status, 201, answer)
            print(json.dumps({"created": args.count}), flush=True)
            return 0
        if args.command == "define-class":
            status, body = peer.define_class(args.kind, args.name, args.version, json.loads(args.definition),
                                             args.admin_key or args.secret_key)
            if status == 409 and args.exists_ok:
                status, body = 201, {"data": {"name": args.name, "exists": True}}
            expect(status, 201, body)
            record = body["data"]
        elif args.command == "get":
            record = peer.get(args.resource, args.id)
        elif args.command == "create":
            record = peer.create(args.resource, args.id, json.loads(args.payload), args.channel, args.user, args.status)
        else:
            record = peer.patch(args.resource, args.id, args.pointer, json.loads(args.value))
    except (urllib.error.URLError, OSError, ValueError) as error:
        print(f"FAIL {error!r}", file=sys.stderr, flush=True)
        return 1
    print(json.dumps(record, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

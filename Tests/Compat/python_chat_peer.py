#!/usr/bin/env python3
"""A peer on the official PubNub Python SDK that stands in for PubNub Chat SDK (kmp-chat) clients
doing moderation on a keyset, against the pnreplicate simulator (`pnreplicate simulator serve
[--secret-key K]`) or any PubNub origin. It writes exactly what kmp-chat writes:

- restrictions (`ChatImpl.setRestrictions`, needs the secret key): channel metadata
  `PUBNUB_INTERNAL_MODERATION_<C>` with type `pn.prv`; for ban/mute the user object, then the user
  as a member of that channel with custom {"ban": bool, "mute": bool, "reason": string|null}; for a
  lift remove_channel_members; then a publish to `PUBNUB_INTERNAL_MODERATION.<U>` (a dot) of
  {"type":"moderation","channelId":"PUBNUB_INTERNAL_MODERATION_<C>","restriction":
  "banned"|"muted"|"lifted","reason":..} with custom_message_type `moderated`;
- the mute list (`MutedUsersManagerImpl`): user object `PN_PRV.<U>.mute1`, name U, type `pn.prv`,
  custom {"m": "a,b"}, written as U with include_custom false;
- a message report (`BaseMessage.report`): a publish to `PUBNUB_INTERNAL_MODERATION_<C>` of
  {"type":"report","text":..,"reason":..,"reportedMessageTimetoken":"<tt>",
  "reportedMessageChannelId":C,"reportedUserId":A};
- a text message (`BaseChannel.sendText`): {"type":"text","text":..,"files":[]} on C.

Usage (O is HOST:PORT; every subcommand takes --origin O and --timeout SECONDS, default 60, the
bound on the whole run):
    python3 Tests/Compat/python_chat_peer.py ban  --origin O --secret-key K --user U --channel C [--reason R] [--both]
    python3 Tests/Compat/python_chat_peer.py mute --origin O --secret-key K --user U --channel C [--reason R]
    python3 Tests/Compat/python_chat_peer.py lift --origin O --secret-key K --user U --channel C [--reason R]
        sets the restriction as an admin client (user id chat-peer-admin, signing with K); prints one
        JSON line {"channelId":C,"userId":U,"ban":b,"mute":m,"reason":R|null,
        "restriction":"banned"|"muted"|"lifted","timetoken":<the moderation event's publish timetoken>}.
        ban = ban true, mute false (--both: ban and mute true); mute = mute true, ban false; lift =
        neither (remove_channel_members). No --reason: reason null.
    python3 Tests/Compat/python_chat_peer.py mutelist --origin O --user U [--muted a,b] [AUTH]
        writes U's mute list as U (no --muted: the empty list, custom.m ""); prints one JSON line
        {"id":"PN_PRV.U.mute1","name":U,"type":"pn.prv","muted":["a","b"]} (id, name, type as answered).
    python3 Tests/Compat/python_chat_peer.py report --origin O --as U --channel C --timetoken TT --text T --author A --reason R [AUTH]
    python3 Tests/Compat/python_chat_peer.py send --origin O --as U --channel C --text T [AUTH]
        publishes as U; prints the publish timetoken (an integer), one line.
    python3 Tests/Compat/python_chat_peer.py reports --origin O --channel C [--as U] [AUTH]
        the history of PUBNUB_INTERNAL_MODERATION_C (fetch_messages with include_uuid and
        include_message_type, paged backwards 100 at a time) as U (default chat-peer-moderator),
        oldest first; one JSON line per message whose type is "report":
        {"timetoken":<integer>,"message":{..the report body..},"uuid":<the reporter>}. None: no output.
    python3 Tests/Compat/python_chat_peer.py restrictions --origin O --user U [--as V] [AUTH]
        get_memberships(uuid=U, filter="channel.id LIKE 'PUBNUB_INTERNAL_MODERATION_*'", custom) as V
        (default U), every page; one JSON line per restriction, in the origin's order:
        {"channelId":C (prefix stripped),"ban":b,"mute":m,"reason":R|null}. None: no output. When
        the origin refuses the filter (400) or ignores it (answers other channels), the rows are
        filtered here and a "note: ..." line goes to stderr.
    python3 Tests/Compat/python_chat_peer.py token --origin O --secret-key K --user U --channel C[,C...] [--ttl MIN]
        grants U (authorized uuid) what the commands above need on an origin that enforces Access
        Manager: read+write on C and PUBNUB_INTERNAL_MODERATION_C, read on
        PUBNUB_INTERNAL_MODERATION.U, get+update on U and PN_PRV.U.mute1; prints the token, one line.
    python3 Tests/Compat/python_chat_peer.py selfcheck --origin O --secret-key K
        runs each of the above once against the origin (fresh random ids; users hold tokens from
        `token` unless the origin has no Access Manager); one line per check on stdout ("ok ..." or
        "FAIL ..."), then a summary line; exit 0 only when every check passed.
    AUTH is [--token T] (sent as auth) and/or [--secret-key K] (signs every request); a simulator
    started with --secret-key refuses unsigned requests without a token.

The admin publishes the moderation event with GET; if the origin answers 403 "Invalid Signature"
(the pnreplicate simulator re-encodes a `,` of the path raw while the SDK sent %2C) it publishes
again with POST and says so on stderr.

Exit status: 0 on success; 1 on a failure, with one line "FAIL <what>: <status> <body>" on stderr
(for selfcheck: a check failed); 2 when the pubnub package is missing; 64 on a usage error. Keys
are `demo`/`demo` (the simulator's defaults), ssl off. Checked with pubnub 10.8.0 (the synchronous
API); the SDK is not changed.
"""

import json
import sys
import time
import uuid as uuidlib
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)

try:
    from pubnub.endpoints.fetch_messages import FetchMessages
    from pubnub.exceptions import PubNubException
    from pubnub.models.consumer.v3.channel import Channel
    from pubnub.models.consumer.v3.uuid import UUID
    from pubnub.models.consumer.objects_v2.channel_members import PNUserMember
    from pubnub.models.consumer.objects_v2.memberships import PNChannelMembership
    from pubnub.models.consumer.objects_v2.page import Next
    from compat_support import (PeerError, Parser, add_connection_arguments, attempt, check, client, describe,
                                finish, note, oldest_first, parse_command_line, publish_with_post_fallback,
                                run_selfcheck, run_subcommand, status_code)
except ImportError as error:
    print(f"FAIL the pubnub package is not installed ({error}); python3 -m pip install pubnub==10.8.0", file=sys.stderr)
    sys.exit(2)

TOTAL_SECONDS = 60
MODERATION_PREFIX = "PUBNUB_INTERNAL_MODERATION_"   # the App Context channel that holds restrictions and reports
MODERATION_EVENTS = "PUBNUB_INTERNAL_MODERATION."   # + user id: the channel of the moderation events
MODERATION_FILTER = f"channel.id LIKE '{MODERATION_PREFIX}*'"
HISTORY_PAGE = 100


# --- restrictions (ChatImpl.setRestrictions) -----------------------------------------------------

def set_restriction(origin, secret_key, user, channel, ban, mute, reason):
    admin = client(origin, "chat-peer-admin", secret_key)
    moderation_channel = MODERATION_PREFIX + channel
    try:  # the Chat SDK's createChannel; "already exists" is ignored there, a plain set never refuses that
        admin.set_channel_metadata(channel=moderation_channel, type="pn.prv").sync()
    except PubNubException as error:
        if status_code(error) not in (409, 412):
            raise PeerError(f"set_channel_metadata {moderation_channel}: {describe(error)}")
    if ban or mute:
        try:  # the user object is created when missing
            admin.set_uuid_metadata(uuid=user).sync()
        except PubNubException:
            pass
        custom = {"ban": ban, "mute": mute, "reason": reason}
        try:
            admin.set_channel_members(channel=moderation_channel, uuids=[PNUserMember(user, custom=custom)]).sync()
        except PubNubException as error:
            raise PeerError(f"set_channel_members {moderation_channel}: {describe(error)}")
    else:
        try:
            admin.remove_channel_members(channel=moderation_channel, uuids=[PNUserMember(user)]).sync()
        except PubNubException as error:
            raise PeerError(f"remove_channel_members {moderation_channel}: {describe(error)}")
    restriction = "banned" if ban else "muted" if mute else "lifted"
    event = {"type": "moderation", "channelId": moderation_channel, "restriction": restriction, "reason": reason}
    sent = publish_with_post_fallback(
        lambda use_post: admin.publish().channel(MODERATION_EVENTS + user).message(event)
        .custom_message_type("moderated").use_post(use_post).sync(),
        f"publish the moderation event to {MODERATION_EVENTS + user}")
    return {"channelId": channel, "userId": user, "ban": ban, "mute": mute, "reason": reason,
            "restriction": restriction, "timetoken": int(sent.result.timetoken)}


def restrictions(origin, user, as_user=None, auth=None):
    """U's restrictions as the Chat SDK reads them (User.getChannelsRestrictions): memberships on
    the moderation channels with custom. Returns (list, filtered_by_server): rows the origin
    answered outside the moderation channels (a filter ignored) are dropped here, with a note on
    stderr, as are all rows when the origin refused the filter."""
    reader = client(origin, as_user or user, **(auth or {}))

    def pages(filter_expression):
        rows, page = [], None
        for _ in range(100):
            builder = reader.get_memberships(uuid=user, include_custom=True, limit=100)
            if filter_expression:
                builder = builder.filter(filter_expression)
            if page is not None:
                builder = builder.page(page)
            result = builder.sync().result
            rows.extend(result.data)
            if not result.data or result.next is None:
                break
            page = Next(result.next.hash)
        return rows

    server_side = True
    try:
        rows = pages(MODERATION_FILTER)
    except PubNubException as error:
        if status_code(error) != 400:
            raise PeerError(f"get_memberships of {user} with {MODERATION_FILTER!r}: {describe(error)}")
        note(f"the origin refused the filter {MODERATION_FILTER!r} ({describe(error)}); filtering client-side")
        server_side = False
        try:
            rows = pages(None)
        except PubNubException as error2:
            raise PeerError(f"get_memberships of {user}: {describe(error2)}")
    found, ignored = [], []
    for row in rows:
        channel_id = (row.get("channel") or {}).get("id", "")
        if not channel_id.startswith(MODERATION_PREFIX):
            ignored.append(channel_id)
            continue
        custom = row.get("custom") or {}
        found.append({"channelId": channel_id[len(MODERATION_PREFIX):], "ban": custom.get("ban") is True,
                      "mute": custom.get("mute") is True, "reason": custom.get("reason")})
    if server_side and ignored:
        note(f"get_memberships with the filter {MODERATION_FILTER!r} also answered {ignored} "
             "(the filter was ignored); filtering client-side")
        server_side = False
    return found, server_side


# --- the mute list (MutedUsersManagerImpl) -------------------------------------------------------

def mute_list_id(user):
    return f"PN_PRV.{user}.mute1"


def write_mute_list(origin, user, muted, auth=None):
    me = client(origin, user, **(auth or {}))
    try:
        written = me.set_uuid_metadata(uuid=mute_list_id(user), name=user, type="pn.prv",
                                       custom={"m": ",".join(muted)}, include_custom=False).sync()
    except PubNubException as error:
        raise PeerError(f"set_uuid_metadata {mute_list_id(user)}: {describe(error)}")
    data = written.result.data or {}
    return {"id": data.get("id"), "name": data.get("name"), "type": data.get("type"), "muted": list(muted)}


# --- messages and reports ------------------------------------------------------------------------

def publish(origin, as_user, channel, message, auth=None):
    sender = client(origin, as_user, **(auth or {}))
    try:
        return int(sender.publish().channel(channel).message(message).sync().result.timetoken)
    except PubNubException as error:
        raise PeerError(f"publish to {channel} as {as_user}: {describe(error)}")


def send_text(origin, as_user, channel, text, auth=None):
    return publish(origin, as_user, channel, {"type": "text", "text": text, "files": []}, auth)


def report(origin, as_user, channel, timetoken, text, author, reason, auth=None):
    body = {"type": "report", "text": text, "reason": reason, "reportedMessageTimetoken": str(timetoken),
            "reportedMessageChannelId": channel, "reportedUserId": author}
    return publish(origin, as_user, MODERATION_PREFIX + channel, body, auth)


def history(origin, as_user, channel, auth=None):
    """Every stored message of `channel`, oldest first, paging backwards HISTORY_PAGE at a time."""
    reader = client(origin, as_user, **(auth or {}))

    def page_before(start):
        builder = reader.fetch_messages().channels(channel).count(HISTORY_PAGE) \
            .include_uuid(True).include_message_type(True)
        if start is not None:
            builder = builder.start(start)
        try:
            return builder.sync().result.channels.get(channel, [])
        except PubNubException as error:
            raise PeerError(f"fetch_messages {channel}: {describe(error)}")
    return oldest_first(page_before, HISTORY_PAGE, 1000)


def reports(origin, channel, as_user=None, auth=None):
    found = []
    for item in history(origin, as_user or "chat-peer-moderator", MODERATION_PREFIX + channel, auth):
        if isinstance(item.message, dict) and item.message.get("type") == "report":
            found.append({"timetoken": int(item.timetoken), "message": item.message, "uuid": getattr(item, "uuid", None)})
    return found


class RawFetchMessages(FetchMessages):
    """fetch_messages that also keeps the origin's JSON answer: PNFetchMessageItem of pubnub
    10.8.0 drops custom_message_type even when include_custom_message_type is asked for."""

    raw = None

    def create_response(self, envelope):
        self.raw = envelope
        return super().create_response(envelope)


def raw_history(origin, channel, auth=None):
    """The origin's answer to fetch_messages(channel) with include_uuid, include_message_type and
    include_custom_message_type, as JSON."""
    reader = client(origin, "chat-peer-raw", **(auth or {}))
    request = RawFetchMessages(reader).channels(channel).count(25).include_uuid(True) \
        .include_message_type(True).include_custom_message_type(True)
    request.sync()
    return request.raw


# --- tokens --------------------------------------------------------------------------------------

def chat_token(origin, secret_key, user, channels, ttl=60):
    """What a Chat SDK client of `user` needs for the subcommands above on an origin that enforces
    Access Manager: read and write on each channel C, on PUBNUB_INTERNAL_MODERATION_C (reports) and
    read on PUBNUB_INTERNAL_MODERATION.<user> (moderation events); get and update on the user and
    its mute list object; the token is bound to the user (authorized uuid)."""
    admin = client(origin, "chat-peer-admin", secret_key)
    resources = []
    for channel in channels:
        resources += [Channel.id(channel).read().write(), Channel.id(MODERATION_PREFIX + channel).read().write()]
    resources.append(Channel.id(MODERATION_EVENTS + user).read())
    try:
        return admin.grant_token().channels(resources) \
            .uuids([UUID.id(user).get().update(), UUID.id(mute_list_id(user)).get().update()]) \
            .authorized_uuid(user).ttl(ttl).sync().result.token
    except PubNubException as error:
        raise PeerError(f"grant_token for {user}: {describe(error)}")


# --- selfcheck -----------------------------------------------------------------------------------

def selfcheck(origin, secret_key):
    """Every subcommand once against `origin`, as Chat SDK clients holding tokens (the admin signs
    with the secret key)."""
    started = time.monotonic()
    tag = uuidlib.uuid4().hex[:8]
    room, user, author, reporter = f"room-{tag}", f"user-{tag}", f"author-{tag}", f"reporter-{tag}"
    admin_auth = {"secret_key": secret_key}
    try:
        auth = {name: {"token": chat_token(origin, secret_key, name, [room])} for name in (user, author, reporter)}
        check("grant_token: a token for each Chat SDK user", all(a["token"] for a in auth.values()))
    except PeerError as error:
        if " 404 " not in str(error) + " ":
            raise
        note(f"no Access Manager at {origin} (grant_token: 404); the users go without tokens")
        auth = {name: {} for name in (user, author, reporter)}

    tt = send_text(origin, author, room, "hello from the peer", auth[author])
    check("send: a timetoken", tt > 10 ** 16, str(tt))
    stored = history(origin, author, room, auth[author])
    check("send: the text message is stored with its publisher",
          [(m.message, getattr(m, "uuid", None)) for m in stored]
          == [({"type": "text", "text": "hello from the peer", "files": []}, author)],
          str([(m.message, getattr(m, "uuid", None)) for m in stored]))

    admin = client(origin, "chat-peer-admin", secret_key)
    probe = attempt(lambda: admin.publish().channel(room + "-probe").message({"a": 1, "b": [1, 2]}).sync().result.timetoken)
    check("a GET publish signed with the secret key whose JSON has commas (%2C in the path)",
          isinstance(probe, int), str(probe))

    banned = set_restriction(origin, secret_key, user, room, True, False, "spam")
    check("ban: restriction banned, a timetoken", banned["restriction"] == "banned"
          and banned["timetoken"] > tt, str(banned))
    meta = attempt(lambda: admin.get_channel_metadata(channel=MODERATION_PREFIX + room, include_type=True)
                   .sync().result.data)
    check("ban: the moderation channel exists with type pn.prv", meta.get("type") == "pn.prv", str(meta))
    members = attempt(lambda: admin.get_channel_members(channel=MODERATION_PREFIX + room, include_custom=True)
                      .sync().result.data)
    check("ban: the user is the channel's member with custom ban/mute/reason",
          isinstance(members, list) and [(m.get("uuid", {}).get("id"), m.get("custom")) for m in members]
          == [(user, {"ban": True, "mute": False, "reason": "spam"})], str(members))
    # the user is also a member of the room itself, as a Chat SDK user who joined it: the filter
    # must leave that membership out
    joined = attempt(lambda: admin.set_memberships(uuid=user, channel_memberships=[PNChannelMembership.channel(room)])
                     .sync().result.data)
    check("set_memberships: the user joined the room", isinstance(joined, list), str(joined))
    found, server_side = restrictions(origin, user, auth=auth[user])
    check("restrictions (as the user): the ban" + ("" if server_side else " (after filtering client-side)"),
          found == [{"channelId": room, "ban": True, "mute": False, "reason": "spam"}], str(found))
    everything = attempt(lambda: admin.get_memberships(uuid=user, filter=MODERATION_FILTER).sync().result.data)
    check(f"get_memberships: the origin applies the filter {MODERATION_FILTER}",
          server_side and isinstance(everything, list)
          and [m.get("channel", {}).get("id") for m in everything] == [MODERATION_PREFIX + room], str(everything))

    events = history(origin, user, MODERATION_EVENTS + user, auth[user])
    check("ban: the moderation event in the history of PUBNUB_INTERNAL_MODERATION.<user> (as the user)",
          [m.message for m in events] == [{"type": "moderation", "channelId": MODERATION_PREFIX + room,
                                           "restriction": "banned", "reason": "spam"}]
          and int(events[0].timetoken) == banned["timetoken"], str([(m.timetoken, m.message) for m in events]))
    raw = attempt(lambda: raw_history(origin, MODERATION_EVENTS + user, admin_auth))
    entries = raw.get("channels", {}).get(MODERATION_EVENTS + user, []) if isinstance(raw, dict) else []
    entry = entries[0] if entries else {}
    check("ban: the event keeps custom_message_type moderated in history",
          entry.get("custom_message_type") == "moderated", json.dumps(raw))
    check("ban: the event's history entry has uuid and message_type",
          entry.get("uuid") == "chat-peer-admin" and "message_type" in entry, json.dumps(entry))

    muted = set_restriction(origin, secret_key, user, room, False, True, None)
    found, _ = restrictions(origin, user, auth=auth[user])
    check("mute: restriction muted, reason null", muted["restriction"] == "muted"
          and found == [{"channelId": room, "ban": False, "mute": True, "reason": None}], str(found))
    members = attempt(lambda: admin.get_channel_members(channel=MODERATION_PREFIX + room, include_custom=True)
                      .sync().result.data)
    check("mute: the member's custom keeps reason null", isinstance(members, list)
          and [m.get("custom") for m in members] == [{"ban": False, "mute": True, "reason": None}], str(members))

    lifted = set_restriction(origin, secret_key, user, room, False, False, None)
    found, _ = restrictions(origin, user, auth=auth[user])
    check("lift: no restriction left", lifted["restriction"] == "lifted" and found == [], str(found))
    events = history(origin, user, MODERATION_EVENTS + user, auth[user])
    check("lift: the events banned, muted, lifted",
          [m.message.get("restriction") for m in events] == ["banned", "muted", "lifted"],
          str([m.message for m in events]))

    written = attempt(lambda: write_mute_list(origin, user, [author, reporter], auth[user]))
    check("mutelist: set_uuid_metadata (as the user) answered the object", written.get("id") == mute_list_id(user)
          and written.get("type") == "pn.prv" and written.get("name") == user, str(written))
    me = client(origin, user, **auth[user])
    stored = attempt(lambda: me.get_uuid_metadata(uuid=mute_list_id(user), include_custom=True).sync().result.data)
    check("mutelist: the stored object has name, type pn.prv and custom.m",
          stored.get("type") == "pn.prv" and stored.get("name") == user
          and stored.get("custom") == {"m": f"{author},{reporter}"}, str(stored))
    attempt(lambda: write_mute_list(origin, user, [], auth[user]))
    stored = attempt(lambda: me.get_uuid_metadata(uuid=mute_list_id(user), include_custom=True).sync().result.data)
    check("mutelist: the empty list is an empty string", stored.get("custom") == {"m": ""}, str(stored))

    reported = report(origin, reporter, room, tt, "hello from the peer", author, "rude", auth[reporter])
    check("report: a timetoken", reported > tt, str(reported))
    expected = {"type": "report", "text": "hello from the peer", "reason": "rude",
                "reportedMessageTimetoken": str(tt), "reportedMessageChannelId": room, "reportedUserId": author}
    listed = reports(origin, room, auth=admin_auth)
    check("reports (as a moderator with the secret key): the report exactly once, with its reporter",
          [(r["timetoken"], r["message"], r["uuid"]) for r in listed] == [(reported, expected, reporter)], str(listed))
    listed = reports(origin, room, reporter, auth[reporter])
    check("reports (as the reporter, with its token): the same", [r["timetoken"] for r in listed] == [reported],
          str(listed))

    bulk = HISTORY_PAGE + 5
    for index in range(bulk):
        report(origin, reporter, room, tt, f"m{index}", author, "bulk", auth[reporter])
    listed = reports(origin, room, auth=admin_auth)
    check(f"reports: paged through {bulk + 1} reports, oldest first, none twice",
          len(listed) == bulk + 1 and len({r["timetoken"] for r in listed}) == bulk + 1
          and listed[0]["timetoken"] == reported and listed[-1]["message"]["text"] == f"m{bulk - 1}"
          and [r["timetoken"] for r in listed] == sorted(r["timetoken"] for r in listed),
          f"{len(listed)} reports, {len({r['timetoken'] for r in listed})} distinct")

    return finish(started)


# --- command line --------------------------------------------------------------------------------

def emit(value):
    print(json.dumps(value, separators=(",", ":")), flush=True)


def main():
    parser = Parser(description="a Chat SDK moderation peer on the official Python SDK")
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name, help_text, credentials="optional"):
        sub = commands.add_parser(name, help=help_text)
        add_connection_arguments(sub, TOTAL_SECONDS, credentials == "required",
                                 "an Access Manager token sent as auth (see the token subcommand)")
        return sub

    for name, help_text in (("ban", "ban the user on the channel"), ("mute", "mute the user on the channel"),
                            ("lift", "lift the user's restriction on the channel")):
        sub = command(name, help_text, "required")
        sub.add_argument("--user", required=True)
        sub.add_argument("--channel", required=True)
        sub.add_argument("--reason")
        if name == "ban":
            sub.add_argument("--both", action="store_true", help="ban and mute")
    sub = command("mutelist", "write the user's mute list as the user")
    sub.add_argument("--user", required=True)
    sub.add_argument("--muted", default="", help="comma-separated user ids")
    sub = command("report", "report a message")
    sub.add_argument("--as", dest="as_user", required=True)
    sub.add_argument("--channel", required=True)
    sub.add_argument("--timetoken", required=True, type=int)
    sub.add_argument("--text", required=True)
    sub.add_argument("--author", required=True)
    sub.add_argument("--reason", required=True)
    sub = command("send", "publish a Chat SDK text message")
    sub.add_argument("--as", dest="as_user", required=True)
    sub.add_argument("--channel", required=True)
    sub.add_argument("--text", required=True)
    sub = command("reports", "list the reports of a channel")
    sub.add_argument("--channel", required=True)
    sub.add_argument("--as", dest="as_user")
    sub = command("restrictions", "list the user's restrictions")
    sub.add_argument("--user", required=True)
    sub.add_argument("--as", dest="as_user")
    sub = command("token", "grant a Chat SDK user what the subcommands need", "required")
    sub.add_argument("--user", required=True)
    sub.add_argument("--channel", required=True, help="comma-separated channel ids")
    sub.add_argument("--ttl", type=int, default=60, help="minutes")
    sub = command("selfcheck", "run every subcommand once and check the results", "required")
    args = parse_command_line(parser)
    auth = {"secret_key": args.secret_key, "token": getattr(args, "token", None)}
    return run_subcommand(lambda: dispatch(args, auth))


def dispatch(args, auth):
    """The subcommand `args.command`; its exit code."""
    if args.command in ("ban", "mute", "lift"):
        ban = args.command == "ban"
        mute = args.command == "mute" or (ban and args.both)
        emit(set_restriction(args.origin, args.secret_key, args.user, args.channel, ban, mute, args.reason))
    elif args.command == "mutelist":
        muted = [name for name in args.muted.split(",") if name]
        emit(write_mute_list(args.origin, args.user, muted, auth))
    elif args.command == "report":
        print(report(args.origin, args.as_user, args.channel, args.timetoken, args.text, args.author,
                     args.reason, auth), flush=True)
    elif args.command == "send":
        print(send_text(args.origin, args.as_user, args.channel, args.text, auth), flush=True)
    elif args.command == "reports":
        for entry in reports(args.origin, args.channel, args.as_user, auth):
            emit(entry)
    elif args.command == "restrictions":
        for entry in restrictions(args.origin, args.user, args.as_user, auth)[0]:
            emit(entry)
    elif args.command == "token":
        print(chat_token(args.origin, args.secret_key, args.user, args.channel.split(","), args.ttl), flush=True)
    elif args.command == "selfcheck":
        return run_selfcheck(lambda: selfcheck(args.origin, args.secret_key))
    return 0

if __name__ == "__main__":
    sys.exit(main())

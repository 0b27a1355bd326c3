#!/usr/bin/env python3
"""A peer on the official PubNub Python SDK that stands in for PubNub Chat SDK (kmp-chat) clients
writing conversations, against the pnreplicate simulator (`pnreplicate simulator serve`) or any
PubNub origin. It makes exactly the requests kmp-chat 1.0.3 (`pubnub/kmp-chat` @ 51ed7bfd) makes,
in its order, with its field values; where kmp-chat runs two requests concurrently (`awaitAll`) they
are made here one after the other, in the order written there. The kmp-chat functions (`impl/` is
`pubnub-chat-impl/src/commonMain/kotlin/com/pubnub/chat/internal/`):

- direct (`ChatImpl.createDirectConversation`): the channel id is `"direct." + cyrb53a(a + "&" + b)`
  with [a, b] the two user ids sorted as Kotlin's `sorted()` sorts strings (by UTF-16 code unit)
  and cyrb53a the 53-bit hash of `impl/utils/hashes.kt` over the UTF-16 code units. Then
  `getChannel` (get_channel_metadata, include custom: 404 means new), `createChannel` (the same
  read again, then set_channel_metadata with name = --name or the channel id, type "direct", include
  custom; a channel that exists is kept as it is), the host's membership (set_memberships as the
  host of {"channel":{"id":C}} with filter "channel.id == 'C'", include
  custom,channel,channel.custom,channel.type, count=true) and `BaseChannel.invite` (below).
- group (`ChatImpl.createGroupConversation`): the same with type "group", id = --id or a random
  UUID, then `BaseChannel.inviteMultiple`: set_channel_members(C, [{"uuid":{"id":V},
  "status":"pending"}...], filter "uuid.id == 'a' || uuid.id == 'b'", include
  custom,status,uuid,uuid.custom,uuid.type, count=true), time(), for each member answered
  `MembershipImpl.setLastReadMessageTimetoken(time)`, then an `invite` event to each user's channel.
- public (`ChatImpl.createPublicConversation` -> `createChannel`): get_channel_metadata (404 wanted:
  an existing channel is an error, CHANNEL_ID_ALREADY_EXIST), set_channel_metadata with name = --name
  or the id, type "public", include custom.
- invite (`BaseChannel.invite`, after `ChatImpl.getChannel` for the channel's type): get_channel_members
  (C, filter "uuid.id == 'V'", include custom,status,type,uuid,uuid.custom,uuid.type, count=true); a
  member already is returned as is (no write, no event). Otherwise set_memberships as V's writer
  (uuid=V) of {"channel":{"id":C},"status":"pending"} (filter "channel.id == 'C'", include
  custom,status,channel,channel.custom,channel.type, count=true), time(), then
  `MembershipImpl.setLastReadMessageTimetoken(time)` and publish of
  {"type":"invite","channelType":<the channel's type, or "unknown">,"channelId":C} to channel V.
- setLastReadMessageTimetoken (`MembershipImpl.setLastReadMessageTimetoken` -> `update` -> `exists`):
  get_memberships(uuid=V, filter "channel.id == 'C'"), set_memberships(uuid=V) of
  {"channel":{"id":C},"custom":{..the membership's custom..,"lastReadMessageTimetoken":"<time>"}}
  (no status, no type: Gson drops nulls) with include custom,status,type,channel,channel.custom,
  channel.type,channel.status, count=true; then a signal {"type":"receipt","messageTimetoken":"<time>"}
  to C unless the channel's type is "public" (`EmitReadReceiptEvents` default) or the client's
  token lacks write on C (`AccessManager.canI`).
- join (`BaseChannel.join`, no arguments): set_memberships as V of
  {"channel":{"id":C},"status":""} (kmp-chat sends "" when no status is given; custom and type
  omitted), filter "channel.id == 'C'", include every membership and channel field, count=true.
- send (`BaseChannel.sendText` / `MessageDraftImpl.send` -> `sendTextInternal`): publish (GET) to C of
  {"type":"text","text":T,"files":[]} with meta {} (`buildMetaForPublish` of nothing) and store=1;
  with mentions the text carries each mention as MessageDraft renders a user link
  (`MessageDraftImpl.render`): `[<name>](pn-user://<id>)`, the name being the user's id (a Chat SDK
  user's default name, `insertSuggestedMention` uses `user.name ?: user.id`); `@V` in T is replaced
  by that link, else the link is appended after a space. After the message, for each mentioned user
  (`BaseChannel.emitUserMention`) a publish to channel V of
  {"type":"mention","messageTimetoken":"<tt>","channel":C}. No push keys (`sendPushes` is false by
  default).
- reply (`BaseMessage.createThread`, `ThreadChannelImpl.createThreadAndSend`, `emitUserMention`):
  the parent message is read first (`BaseChannel.getMessage`: fetch_messages C start=TT+1 end=TT
  count 1 with meta and actions). The thread channel is `PUBNUB_INTERNAL_THREAD_<C>_<TT>`
  (`ChatImpl.getThreadId`). When the parent has no threadRootId action: get_channel_metadata(thread,
  include custom) must answer 404, then set_channel_metadata(thread, description "Thread on channel
  <C> with message timetoken <TT>", nothing else) and add_message_action(C, TT,
  {"type":"threadRootId","value":<thread>}), then the reply. When it has one (`Message.getThread`):
  get_channel_metadata(thread) then the reply. The reply is a text message as in send, on the thread
  channel; mention events carry "channel":<thread>,"parentChannel":C. A first reply without
  mentions is `createThread(text, SendTextParams)`, which reads the parent back at the end.
- forward (`BaseChannel.getMessage` then `ChatImpl.forwardMessage`): the original from C's history
  (as above), then a publish to D (D == C is refused) of its content re-encoded as a text message
  ({"type":"text","text":..,"files":..} with files only when the original had them) with meta =
  the original meta (when an object) + "originalPublisher":<its publisher> +
  "originalChannelId":C.
- push-add / push-list / push-remove (`ChatImpl.registerPushChannels`, `getPushChannels`,
  `unregisterPushChannels`, `unregisterAllPushChannels`): add_channels_to_push,
  list_push_channels, remove_channels_from_push, remove_device_from_push with the device token,
  type fcm or apns2 (apns2: --topic, --environment default development).
- readbacks: `members` (`BaseChannel.getMembers`), `invitees` (`BaseChannel.getInvitees`: filter
  "status == 'pending'"), `memberships` (get_memberships with custom, status, type, channel,
  channel.type), `channel` (`ChatImpl.getChannel`), `history` (`BaseChannel.getHistory`: meta and
  actions, plus uuid and message type), `events` (`ChatImpl.getEventsHistory` on channel U, keeping
  mention and invite events as `getCurrentUserMentions` (which drops a mention whose message cannot
  be read) and `User.onInvited` see them).

The Chat client's own start-up (`ChatImpl.initialize`: get the user, create it when missing) is not
made: the users here are just ids. The User objects kmp-chat's functions take are not read either.

Usage (O is HOST:PORT; every subcommand takes --origin O, --timeout SECONDS (default 60, the bound
on the whole run) and AUTH = [--token T] (sent as auth) [--secret-key K] (signs every request)):
    python3 Tests/Compat/python_chat_conversations.py direct --origin O --as U --with V [--name N] [AUTH]
        one JSON line {"channelId":C,"hostMembership":M,"inviteeMembership":M,
        "inviteTimetoken":<the invite event's publish timetoken, or null when V was already a member>}
    python3 Tests/Compat/python_chat_conversations.py group --origin O --as U --users a,b [--id ID] [--name N] [AUTH]
        one JSON line {"channelId":C,"hostMembership":M,"inviteeMemberships":[M,..],
        "inviteTimetokens":{"a":<tt>,"b":<tt>}} (no --users: no invitations, [] and {})
    python3 Tests/Compat/python_chat_conversations.py public --origin O --as U [--id ID] [--name N] [AUTH]
        one JSON line {"channelId":C,"channel":CH}; exit 1 when the channel exists already
    python3 Tests/Compat/python_chat_conversations.py invite --origin O --as U --channel C --user V [AUTH]
        one JSON line {"channelId":C,"membership":M,"alreadyMember":bool,"inviteTimetoken":<tt>|null}
    python3 Tests/Compat/python_chat_conversations.py join --origin O --as V --channel C [AUTH]
        one JSON line {"channelId":C,"membership":M}
    python3 Tests/Compat/python_chat_conversations.py send --origin O --as U --channel C --text T [--mention V ...] [AUTH]
        the message's publish timetoken (an integer), one line; when a mention event could not be
        published (kmp-chat logs that and goes on) the line is printed, then a FAIL on stderr, exit 1
    python3 Tests/Compat/python_chat_conversations.py reply --origin O --as U --channel C --message TT --text T [--mention V ...] [AUTH]
        one JSON line {"threadChannel":<PUBNUB_INTERNAL_THREAD_C_TT>,"timetoken":<the reply's>}
        (a failed mention event: as for send)
    python3 Tests/Compat/python_chat_conversations.py forward --origin O --as U --channel C --message TT --to D [AUTH]
        the forwarded message's publish timetoken, one line
    python3 Tests/Compat/python_chat_conversations.py push-add --origin O --as U --channels a,b --device-token T --type fcm|apns2 [--topic X] [--environment development|production] [AUTH]
    python3 Tests/Compat/python_chat_conversations.py push-remove --origin O --as U [--channels a,b] --device-token T --type .. [--topic X] [--environment ..] [AUTH]
        one JSON line {"channels":[a,b],"deviceToken":T,"type":"fcm"|"apns2"} (push-remove without
        --channels removes the device: "channels":null)
    python3 Tests/Compat/python_chat_conversations.py push-list --origin O --as U --device-token T --type .. [--topic X] [--environment ..] [AUTH]
        one JSON line {"channels":[..as answered..],"deviceToken":T,"type":..}
    python3 Tests/Compat/python_chat_conversations.py members --origin O --channel C [--as R] [AUTH]
    python3 Tests/Compat/python_chat_conversations.py invitees --origin O --channel C [--as R] [AUTH]
    python3 Tests/Compat/python_chat_conversations.py memberships --origin O --user U [--as R] [AUTH]
        every page; one JSON line M per membership, in the origin's order. None: no output.
    python3 Tests/Compat/python_chat_conversations.py channel --origin O --id C [--as R] [AUTH]
        one JSON line CH, or `null` when the origin answers 404
    python3 Tests/Compat/python_chat_conversations.py history --origin O --channel C [--as R] [AUTH]
        every stored message, oldest first (paged backwards 25 at a time, with meta and actions);
        one JSON line each {"timetoken":<int>,"message":..,"meta":<as answered; "" or absent (null)
        when none>,"uuid":..,"messageType":<as answered or null>,"actions":{type:{value:[{"uuid":..,
        "actionTimetoken":..}]}}}
    python3 Tests/Compat/python_chat_conversations.py events --origin O --user U [--as R] [AUTH]
        the history of channel U (include uuid and message type, no meta or actions, paged
        backwards 100 at a time), oldest first, mention and invite events only, one JSON line each:
        {"type":"mention","timetoken":<event>,"userId":<who mentioned>,"channelId":<the message's
        channel>,"parentChannelId":<thread parent>|null,"messageTimetoken":<int>,"message":<the
        mentioning message's body>,"event":<the raw event>} or {"type":"invite","timetoken":<event>,
        "invitedByUserId":..,"channelId":..,"channelType":..,"event":<the raw event>}
    python3 Tests/Compat/python_chat_conversations.py selfcheck --origin O [AUTH]
        cyrb53a's vectors, then every subcommand once with fresh random ids, reading the results
        back; one line per check ("ok ..." or "FAIL ..."; the push checks are one line "skip
        push-add, push-list, push-remove (origin has no push endpoints): .." when the origin answers
        add_channels_to_push 404), then a summary; exit 0 only when every check passed.
    M (a membership) is {"channelId":..,"userId":..,"status":..,"type":..,"custom":..} (null when
    not answered); CH (a channel) is {"id":..,"name":..,"description":..,"type":..,"status":..,
    "custom":..}. R (the reading user) defaults to chat-conversations-reader (memberships, events:
    to U). U is the acting client's user id (its `uuid`).

A client with --secret-key publishes with GET; if the origin answers 403 "Invalid Signature" (the
pnreplicate simulator re-encodes a `,` of the path raw while the SDK sent %2C) it publishes again
with POST and says so on stderr.

Exit status: 0 on success; 1 on a failure, with one line "FAIL <what>: <status> <body>" on stderr
(for selfcheck: a check failed); 2 when the pubnub package is missing; 64 on a usage error. Keys
are `demo`/`demo` (the simulator's defaults), ssl off. Checked with pubnub 10.8.0 (the synchronous
API); the SDK is not changed: where it writes a request differently from kmp-chat's Kotlin SDK
(a null field sent as null, an empty `meta` or `status` dropped, count=True) a subclass or a wrapper
here writes kmp-chat's form.
"""

import json
import re
import struct
import sys
import time
import uuid as uuidlib
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)

try:
    from pubnub import utils as pnutils
    from pubnub.endpoints.objects_v2.channel.set_channel import SetChannel
    from pubnub.endpoints.pubsub.publish import Publish
    from pubnub.enums import PNPushEnvironment, PNPushType
    from pubnub.exceptions import PubNubException
    from pubnub.models.consumer.message_actions import PNMessageAction
    from pubnub.models.consumer.objects_v2.channel_members import PNUserMember
    from pubnub.models.consumer.objects_v2.common import MemberIncludes, MembershipIncludes
    from pubnub.models.consumer.objects_v2.memberships import PNChannelMembership
    from pubnub.models.consumer.objects_v2.page import Next
    from compat_support import (PeerError, Parser, add_connection_arguments, attempt, check, describe, finish,
                                note, oldest_first, parse_command_line, publish_with_post_fallback,
                                run_selfcheck, run_subcommand, status_code)
    from compat_support import client as pubnub_client
except ImportError as error:
    print(f"FAIL the pubnub package is not installed ({error}); python3 -m pip install pubnub==10.8.0", file=sys.stderr)
    sys.exit(2)

TOTAL_SECONDS = 60
READER = "chat-conversations-reader"
THREAD_PREFIX = "PUBNUB_INTERNAL_THREAD"          # impl/Constants.kt MESSAGE_THREAD_ID_PREFIX
THREAD_ROOT_ID = "threadRootId"                   # impl/Constants.kt THREAD_ROOT_ID
PENDING = "pending"                               # impl/Constants.kt MEMBERSHIP_PENDING_STATUS
LAST_READ = "lastReadMessageTimetoken"            # impl/Constants.kt METADATA_LAST_READ_MESSAGE_TIMETOKEN
ORIGINAL_PUBLISHER = "originalPublisher"          # impl/Constants.kt
ORIGINAL_CHANNEL_ID = "originalChannelId"         # impl/Constants.kt
USER_LINK_SCHEMA = "pn-user://"                   # impl/MessageDraftImpl.kt SCHEMA_USER
HISTORY_PAGE = 25                                 # with message actions the origin answers at most 25
EVENTS_PAGE = 100                                 # getCurrentUserMentions: count <= 100
READ_RECEIPTS = {"direct": True, "group": True, "public": False, "unknown": True}   # EmitReadReceiptEvents()
CHANNEL_TYPES = ("direct", "group", "public", "unknown", "pn.prv")                   # api/types/ChannelType.kt


def channel_type_of(value):
    """`ChannelType.from(type)`: one of the Chat SDK's types, anything else (or none) "unknown"."""
    return value if value in CHANNEL_TYPES else "unknown"


class NotFound(PeerError):
    """The origin answered 404."""


class Client:
    """A synchronous client of `origin` as `user_id`; with `secret_key` it signs every request, with
    `token` (an Access Manager v3 token) it sends it as `auth`."""

    def __init__(self, origin, user_id, auth=None):
        auth = auth or {}
        self.user_id = user_id
        self.token = auth.get("token")
        self.signs = bool(auth.get("secret_key"))
        self.pubnub = pubnub_client(origin, user_id, auth.get("secret_key"), self.token)

    def run(self, what, endpoint):
        """`endpoint.sync().result`, or PeerError (NotFound on a 404) naming `what`."""
        try:
            return endpoint.sync().result
        except PubNubException as error:
            kind = NotFound if status_code(error) == 404 else PeerError
            raise kind(f"{what}: {describe(error)}") from None

    def can_write(self, channel):
        """kmp-chat's `AccessManager.canI(WRITE, CHANNELS, channel)`: true without a token, else the
        token's grant on the channel, or the first pattern that matches it."""
        if not self.token:
            return True
        parsed = self.pubnub.parse_token(self.token)
        granted = parsed.get("resources", {}).get("channels", {}).get(channel)
        if granted is not None:
            return bool(granted.get("write"))
        for pattern, permissions in parsed.get("patterns", {}).get("channels", {}).items():
            if re.fullmatch(pattern, channel):
                return bool(permissions.get("write"))
        return False


# --- the request shapes kmp-chat's Kotlin SDK writes --------------------------------------------

def kotlin_count(endpoint):
    """The Kotlin SDK sends `count=true`; pubnub 10.8.0 sends `count=True`."""
    original = endpoint.custom_params

    def custom_params():
        params = original()
        if params.get("count") is True:
            params["count"] = "true"
        return params
    endpoint.custom_params = custom_params
    return endpoint


def kotlin_partial(key, entry_id, custom, status, entry_type):
    """A `Partial` as the Kotlin SDK writes it (Gson drops nulls and keeps ""):
    {key:{"id":..},"custom":..,"status":..,"type":..}."""
    payload = {key: {"id": str(entry_id)}}
    if custom is not None:
        payload["custom"] = dict(custom)
    if status is not None:
        payload["status"] = str(status)
    if entry_type is not None:
        payload["type"] = str(entry_type)
    return payload


class Membership(PNChannelMembership):
    """`PNChannelMembership.Partial` as the Kotlin SDK writes it:
    {"channel":{"id":..},"custom":..,"status":..,"type":..}. pubnub 10.8.0 drops an empty status."""

    def to_payload_dict(self):
        return kotlin_partial("channel", self._channel, self._custom, self._status, self._type)


class Member(PNUserMember):
    """`PNMember.Partial` as the Kotlin SDK writes it: {"uuid":{"id":..},"custom":..,"status":..}."""

    def to_payload_dict(self):
        return kotlin_partial("uuid", self._user_id, self._custom, self._status, self._type)


class ChatSetChannel(SetChannel):
    """set_channel_metadata with the body the Kotlin SDK writes: the fields given, nulls left out
    (pubnub 10.8.0 writes "description":null and the like, which a PATCH would take as clearing)."""

    def build_data(self):
        payload = json.loads(super().build_data())
        return pnutils.write_value_as_string({key: value for key, value in payload.items() if value is not None})


class ChatPublish(Publish):
    """publish with kmp-chat's `meta` even when it is {} (pubnub 10.8.0 drops an empty meta)."""

    def encoded_params(self):
        return {"meta": pnutils.url_write(self._meta)} if self._meta is not None else {}

    def custom_params(self):
        params = super().custom_params()
        if self._meta is not None:
            params["meta"] = pnutils.write_value_as_string(self._meta)
        return params


# Include sets, as kmp-chat passes them (impl/ChatImpl.kt, BaseChannel.kt, MembershipImpl.kt)
def host_membership_include():   # createDirect/GroupConversation: the host's membership
    return MembershipIncludes(custom=True, channel=True, channel_custom=True, channel_type=True)


def invite_membership_include():  # BaseChannel.invite
    return MembershipIncludes(custom=True, status=True, channel=True, channel_custom=True, channel_type=True)


def full_membership_include():    # MembershipImpl.update, BaseChannel.join
    return MembershipIncludes(custom=True, status=True, type=True, channel=True, channel_custom=True,
                              channel_type=True, channel_status=True)


def members_include():            # BaseChannel.getMembers
    return MemberIncludes(custom=True, status=True, type=True, user=True, user_custom=True, user_type=True)


def invite_multiple_include():    # BaseChannel.inviteMultiple
    return MemberIncludes(custom=True, status=True, user=True, user_custom=True, user_type=True)


# --- output shapes -------------------------------------------------------------------------------

def membership_row(row, user_id):
    """A membership as answered by set/get_memberships (of `user_id`): M."""
    return {"channelId": (row.get("channel") or {}).get("id"), "userId": user_id, "status": row.get("status"),
            "type": row.get("type"), "custom": row.get("custom")}


def member_row(row, channel_id):
    """A member as answered by set/get_channel_members (of `channel_id`): M."""
    return {"channelId": channel_id, "userId": (row.get("uuid") or {}).get("id"), "status": row.get("status"),
            "type": row.get("type"), "custom": row.get("custom")}


def channel_row(data):
    return {"id": data.get("id"), "name": data.get("name"), "description": data.get("description"),
            "type": data.get("type"), "status": data.get("status"), "custom": data.get("custom")}


def emit(value):
    print(json.dumps(value, separators=(",", ":"), ensure_ascii=False), flush=True)


# --- cyrb53a and the direct conversation id (impl/utils/hashes.kt, ChatImpl.createDirectConversation)

def utf16_units(text):
    """The UTF-16 code units of `text` (Kotlin's `Char.code` sequence)."""
    data = text.encode("utf-16-be", "surrogatepass")
    return struct.unpack(f">{len(data) // 2}H", data)


def kotlin_sorted(ids):
    """`List<String>.sorted()`: by UTF-16 code unit, which is byte order of UTF-16BE. (Python's
    own order is by code point: it puts U+E000 before U+1F600, whose high surrogate is 0xD83D.)"""
    return sorted(ids, key=lambda text: text.encode("utf-16-be", "surrogatepass"))


def cyrb53a(text, seed=0):
    """kmp-chat's cyrb53a: 32-bit wrapping arithmetic over the UTF-16 code units; the 53-bit result."""
    mask = 0xFFFFFFFF
    h1 = (0xDEADBEEF ^ seed) & mask
    h2 = (0x41C6CE57 ^ seed) & mask
    for unit in utf16_units(text):
        h1 = ((h1 ^ unit) * 0x85EBCA77) & mask
        h2 = ((h2 ^ unit) * 0xC2B2AE3D) & mask
    h1 ^= ((h1 ^ (h2 >> 15)) * 0x735A2D97) & mask
    h2 ^= ((h2 ^ (h1 >> 15)) * 0xCAF649A9) & mask
    h1 ^= h2 >> 16
    h2 ^= h1 >> 16
    return (2097152 * h2 + (h1 >> 11)) & ((1 << 53) - 1)


def direct_channel_id(me, other):
    first, second = kotlin_sorted([other, me])
    return f"direct.{cyrb53a(first + '&' + second)}"


def thread_channel_id(channel, timetoken):
    """`ChatImpl.getThreadId`."""
    return f"{THREAD_PREFIX}_{channel}_{timetoken}"


# --- the building blocks ---------------------------------------------------------------------------

def get_channel(client, channel_id, include_custom=True):
    """`ChatImpl.getChannel` (include custom) or `pubNub.getChannelMetadata` (not): the metadata, or
    None on 404."""
    try:
        return client.run(f"get_channel_metadata {channel_id}",
                          client.pubnub.get_channel_metadata(channel=channel_id, include_custom=include_custom)).data
    except NotFound:
        return None


def set_channel_metadata(client, channel_id, include_custom=True, **fields):
    """`ChatImpl.setChannelMetadata` (include custom) / `pubNub.setChannelMetadata` (not): the answer."""
    endpoint = ChatSetChannel(client.pubnub, channel=channel_id, include_custom=include_custom,
                              name=fields.get("name"), description=fields.get("description"),
                              status=fields.get("status"), type=fields.get("type"), custom=fields.get("custom"))
    return client.run(f"set_channel_metadata {channel_id}", endpoint).data


def create_channel(client, channel_id, name, channel_type):
    """`ChatImpl.createChannel`: getChannel, then set_channel_metadata; an existing channel is an
    error (CHANNEL_ID_ALREADY_EXIST)."""
    if get_channel(client, channel_id) is not None:
        raise PeerError(f"createChannel {channel_id}: the channel already exists (kmp-chat: CHANNEL_ID_ALREADY_EXIST)")
    return set_channel_metadata(client, channel_id, name=name, type=channel_type)


def publish(client, channel, message, meta=None, store=None, what=None):
    """A publish with GET as the Kotlin SDK does it; a signed GET refused with 403 Invalid Signature
    is published again with POST (a note on stderr). Returns the timetoken."""
    what = what or f"publish to {channel} as {client.user_id}"

    def send(use_post):
        endpoint = ChatPublish(client.pubnub).channel(channel).message(message).use_post(use_post)
        if meta is not None:
            endpoint.meta(meta)
        if store is not None:
            endpoint.should_store(store)
        return endpoint.sync()
    return int(publish_with_post_fallback(send, what, channel, client.signs).result.timetoken)


def signal(client, channel, message):
    try:
        return int(client.pubnub.signal().channel(channel).message(message).sync().result.timetoken)
    except PubNubException as error:
        raise PeerError(f"signal to {channel} as {client.user_id}: {describe(error)}") from None


def server_time(client):
    return int(client.run("time", client.pubnub.time()).value_as_int)


def set_last_read(client, user_id, channel_id, channel_type, custom, timetoken):
    """`MembershipImpl.setLastReadMessageTimetoken(timetoken)` of `user_id`'s membership of
    `channel_id` (its custom `custom`), as `client`. Returns the membership answered."""
    new_custom = dict(custom or {})
    new_custom[LAST_READ] = str(timetoken)
    channel_filter = f"channel.id == '{channel_id}'"
    # MembershipImpl.update -> exists()
    found = client.run(f"get_memberships of {user_id} ({channel_filter})",
                       client.pubnub.get_memberships(uuid=user_id, filter=channel_filter)).data
    if not found:
        raise PeerError(f"setLastReadMessageTimetoken: no membership of {user_id} in {channel_id} "
                        "(kmp-chat: NO_SUCH_MEMBERSHIP_EXISTS)")
    endpoint = kotlin_count(client.pubnub.set_memberships(
        uuid=user_id, channel_memberships=[Membership(channel_id, custom=new_custom)], filter=channel_filter,
        include_total_count=True, include=full_membership_include()))
    answered = client.run(f"set_memberships of {user_id} ({LAST_READ})", endpoint).data
    # the receipt signal (alsoAsync): not for public channels, not without write on the channel
    if READ_RECEIPTS.get(channel_type_of(channel_type), True) is not False:
        if client.can_write(channel_id):
            signal(client, channel_id, {"type": "receipt", "messageTimetoken": str(timetoken)})
        else:
            note(f"no receipt signal to {channel_id}: the token does not grant write (kmp-chat logs this too)")
    if not answered:
        raise PeerError(f"set_memberships of {user_id} ({LAST_READ}) answered no membership")
    return answered[0]


def invite(client, channel_id, channel_type, user_id):
    """`BaseChannel.invite(user)` on a channel of type `channel_type` (None: unknown). Returns
    (membership row M, already a member, the invite event's timetoken or None)."""
    user_filter = f"uuid.id == '{user_id}'"
    endpoint = kotlin_count(client.pubnub.get_channel_members(channel=channel_id, filter=user_filter,
                                                              include_total_count=True, include=members_include()))
    members = client.run(f"get_channel_members {channel_id} ({user_filter})", endpoint).data
    if members:
        return member_row(members[0], channel_id), True, None
    channel_filter = f"channel.id == '{channel_id}'"
    endpoint = kotlin_count(client.pubnub.set_memberships(
        uuid=user_id, channel_memberships=[Membership(channel_id, status=PENDING)], filter=channel_filter,
        include_total_count=True, include=invite_membership_include()))
    answered = client.run(f"set_memberships of {user_id} (pending)", endpoint).data
    if not answered:
        raise PeerError(f"set_memberships of {user_id} (pending) answered no membership")
    pending = answered[0]
    # MembershipImpl.fromMembershipDTO: the channel (and its type) as answered
    membership_channel_type = (pending.get("channel") or {}).get("type")
    now = server_time(client)
    updated = set_last_read(client, user_id, channel_id, membership_channel_type, pending.get("custom"), now)
    event = {"type": "invite", "channelType": channel_type_of(channel_type), "channelId": channel_id}
    event_tt = publish(client, user_id, event, what=f"publish the invite event to {user_id}")
    return membership_row(updated, user_id), False, event_tt


def invite_multiple(client, channel_id, channel_type, user_ids):
    """`BaseChannel.inviteMultiple(users)`. Returns ([M...], {user: invite event timetoken})."""
    if not user_ids:
        return [], {}
    user_filter = " || ".join(f"uuid.id == '{user}'" for user in user_ids)
    endpoint = kotlin_count(client.pubnub.set_channel_members(
        channel=channel_id, uuids=[Member(user, status=PENDING) for user in user_ids], filter=user_filter,
        include_total_count=True, include=invite_multiple_include()))
    answered = client.run(f"set_channel_members {channel_id} (pending)", endpoint).data
    now = server_time(client)
    memberships = []
    for row in answered:   # MembershipImpl.fromChannelMemberDTO(chat, it, this): this channel's type
        user = (row.get("uuid") or {}).get("id")
        updated = set_last_read(client, user, channel_id, channel_type, row.get("custom"), now)
        memberships.append(membership_row(updated, user))
    events = {}
    for user in user_ids:
        event = {"type": "invite", "channelType": channel_type_of(channel_type), "channelId": channel_id}
        events[user] = publish(client, user, event, what=f"publish the invite event to {user}")
    return memberships, events


def host_membership(client, channel_id):
    """The host's membership in createDirect/GroupConversation (membershipCustom null)."""
    endpoint = kotlin_count(client.pubnub.set_memberships(
        uuid=client.user_id, channel_memberships=[Membership(channel_id)], filter=f"channel.id == '{channel_id}'",
        include_total_count=True, include=host_membership_include()))
    answered = client.run(f"set_memberships of {client.user_id} (host)", endpoint).data
    if not answered:
        raise PeerError(f"set_memberships of {client.user_id} (host) answered no membership")
    return membership_row(answered[0], client.user_id)


def get_or_create(client, channel_id, name, channel_type):
    """createDirect/GroupConversation: getChannel, else createChannel. Returns the metadata."""
    existing = get_channel(client, channel_id)
    if existing is not None:
        return existing
    return create_channel(client, channel_id, name or channel_id, channel_type)


# --- the conversations ---------------------------------------------------------------------------

def create_direct(origin, me, other, name=None, auth=None):
    client = Client(origin, me, auth)
    channel_id = direct_channel_id(me, other)
    channel = get_or_create(client, channel_id, name, "direct")
    host = host_membership(client, channel_id)
    invitee, _, invite_tt = invite(client, channel_id, channel.get("type"), other)
    return {"channelId": channel_id, "hostMembership": host, "inviteeMembership": invitee, "inviteTimetoken": invite_tt}


def create_group(origin, me, users, channel_id=None, name=None, auth=None):
    client = Client(origin, me, auth)
    channel_id = channel_id or str(uuidlib.uuid4())
    channel = get_or_create(client, channel_id, name, "group")
    host = host_membership(client, channel_id)
    memberships, events = invite_multiple(client, channel_id, channel.get("type"), users)
    return {"channelId": channel_id, "hostMembership": host, "inviteeMemberships": memberships,
            "inviteTimetokens": events}


def create_public(origin, me, channel_id=None, name=None, auth=None):
    client = Client(origin, me, auth)
    channel_id = channel_id or str(uuidlib.uuid4())
    data = create_channel(client, channel_id, name or channel_id, "public")
    return {"channelId": channel_id, "channel": channel_row(data)}


def invite_user(origin, me, channel_id, user, auth=None):
    client = Client(origin, me, auth)
    channel = get_channel(client, channel_id)
    if channel is None:
        raise PeerError(f"getChannel {channel_id}: no such channel")
    membership, already, event_tt = invite(client, channel_id, channel.get("type"), user)
    return {"channelId": channel_id, "membership": membership, "alreadyMember": already, "inviteTimetoken": event_tt}


def join(origin, me, channel_id, auth=None):
    client = Client(origin, me, auth)
    endpoint = kotlin_count(client.pubnub.set_memberships(
        uuid=me, channel_memberships=[Membership(channel_id, status="")], filter=f"channel.id == '{channel_id}'",
        include_total_count=True, include=full_membership_include()))
    answered = client.run(f"set_memberships of {me} (join)", endpoint).data
    if not answered:
        raise PeerError(f"set_memberships of {me} (join) answered no membership")
    return {"channelId": channel_id, "membership": membership_row(answered[0], me)}


def escape_link_text(text):
    return text.replace("\\", "\\\\").replace("]", "\\]")


def escape_link_url(text):
    return text.replace("\\", "\\\\").replace(")", "\\)")


def render_mentions(text, mentions):
    """The text MessageDraft renders for `text` with a user link for each of `mentions`."""
    for user in mentions:
        link = f"[{escape_link_text(user)}]({escape_link_url(USER_LINK_SCHEMA + user)})"
        if f"@{user}" in text:
            text = text.replace(f"@{user}", link, 1)
        else:
            text = f"{text} {link}" if text else link
    return text


def send_text(client, channel_id, text, mentions, parent_channel=None):
    """`sendTextInternal` on `channel_id` (a thread channel when `parent_channel` is set), then
    `emitUserMention` for each mention. Returns (timetoken, [the failed mention events' errors]):
    kmp-chat logs a failed mention event and goes on, so does this (the caller reports them)."""
    body = {"type": "text", "text": render_mentions(text, mentions), "files": []}
    tt = publish(client, channel_id, body, meta={}, store=True, what=f"publish the text message to {channel_id}")
    failed = []
    for user in mentions:
        event = {"type": "mention", "messageTimetoken": str(tt), "channel": channel_id}
        if parent_channel is not None:
            event["parentChannel"] = parent_channel
        try:
            publish(client, user, event, what=f"publish the mention event to {user}")
        except PeerError as error:
            failed.append(str(error))
    return tt, failed


def send(origin, me, channel_id, text, mentions, auth=None):
    """Returns (the message's timetoken, [failed mention events])."""
    return send_text(Client(origin, me, auth), channel_id, text, mentions)


def fetch_page(client, channel_id, count, start=None, end=None, meta=True, actions=True):
    """One page of fetch_messages of one channel (uuid and message type included)."""
    builder = client.pubnub.fetch_messages().channels(channel_id).count(count) \
        .include_uuid(True).include_message_type(True)
    if meta:
        builder = builder.include_meta(True)
    if actions:
        builder = builder.include_message_actions(True)
    if start is not None:
        builder = builder.start(start)
    if end is not None:
        builder = builder.end(end)
    result = client.run(f"fetch_messages {channel_id}", builder)
    return result.channels.get(channel_id, [])


def get_message(client, channel_id, timetoken):
    """`BaseChannel.getMessage`: fetch_messages start=tt+1, end=tt, count 1, meta and actions."""
    page = fetch_page(client, channel_id, 1, start=timetoken + 1, end=timetoken)
    return page[0] if page else None


def has_thread(item):
    """`BaseMessage.hasThread`: the first threadRootId value has an entry."""
    values = list(((getattr(item, "actions", None) or {}).get(THREAD_ROOT_ID) or {}).values())
    return bool(values and values[0])


def reply(origin, me, channel_id, timetoken, text, mentions, auth=None):
    """Returns ({"threadChannel":..,"timetoken":..}, [failed mention events])."""
    client = Client(origin, me, auth)
    if channel_id.startswith(THREAD_PREFIX):
        raise PeerError("createThread: kmp-chat allows one level of threads (ONLY_ONE_LEVEL_OF_THREAD_NESTING_IS_ALLOWED)")
    parent = get_message(client, channel_id, timetoken)
    if parent is None:
        raise PeerError(f"getMessage {channel_id} {timetoken}: no such message")
    thread_id = thread_channel_id(channel_id, timetoken)
    if has_thread(parent):
        # Message.getThread -> ChatImpl.getThreadChannel: get_channel_metadata without custom
        try:
            client.run(f"get_channel_metadata {thread_id}", client.pubnub.get_channel_metadata(channel=thread_id))
        except NotFound:
            raise PeerError(f"getThread {thread_id}: 404 (kmp-chat: THIS_MESSAGE_IS_NOT_A_THREAD)") from None
        tt, failed = send_text(client, thread_id, text, mentions, parent_channel=channel_id)
        return {"threadChannel": thread_id, "timetoken": tt}, failed
    if "deleted" in ((getattr(parent, "actions", None) or {})):
        raise PeerError("createThread: the message is deleted (YOU_CAN_NOT_CREATE_THREAD_ON_DELETED_MESSAGES)")
    # BaseMessage.createThread(): the thread must not exist yet
    if get_channel(client, thread_id) is not None:
        raise PeerError(f"createThread {thread_id}: THREAD_FOR_THIS_MESSAGE_ALREADY_EXISTS")
    # ThreadChannelImpl.createThreadAndSend
    set_channel_metadata(client, thread_id, include_custom=False,
                         description=f"Thread on channel {channel_id} with message timetoken {timetoken}")
    action = PNMessageAction().create(type=THREAD_ROOT_ID, value=thread_id, message_timetoken=str(timetoken))
    client.run(f"add_message_action {THREAD_ROOT_ID} on {channel_id} {timetoken}",
               client.pubnub.add_message_action(channel=channel_id, message_action=action))
    tt, failed = send_text(client, thread_id, text, mentions, parent_channel=channel_id)
    if not mentions:   # createThread(text, SendTextParams) reads the parent back
        get_message(client, channel_id, timetoken)
    return {"threadChannel": thread_id, "timetoken": tt}, failed


def forwarded_content(message):
    """`defaultGetMessageResponseBody` then `encodeForSending`: the content as a text message."""
    if isinstance(message, str):
        return {"type": "text", "text": message}
    if isinstance(message, dict) and isinstance(message.get("text"), str):
        body = {"type": "text", "text": message["text"]}
        if isinstance(message.get("files"), list):
            body["files"] = [{key: value for key, value in entry.items()
                              if key in ("name", "id", "url", "type") and value is not None}
                             for entry in message["files"] if isinstance(entry, dict)]
        return body
    return {"type": "text", "text": ""}   # UnknownMessageFormat


def forward(origin, me, channel_id, timetoken, destination, auth=None):
    client = Client(origin, me, auth)
    if destination == channel_id:
        raise PeerError("forwardMessage: CANNOT_FORWARD_MESSAGE_TO_THE_SAME_CHANNEL")
    original = get_message(client, channel_id, timetoken)
    if original is None:
        raise PeerError(f"getMessage {channel_id} {timetoken}: no such message")
    meta = dict(original.meta) if isinstance(getattr(original, "meta", None), dict) else {}
    meta[ORIGINAL_PUBLISHER] = getattr(original, "uuid", None)
    meta[ORIGINAL_CHANNEL_ID] = channel_id
    return publish(client, destination, forwarded_content(original.message), meta=meta,
                   what=f"publish the forwarded message to {destination}")


# --- push registration (ChatImpl.registerPushChannels etc.) ---------------------------------------

PUSH_TYPES = {"fcm": PNPushType.FCM, "apns2": PNPushType.APNS2}
PUSH_ENVIRONMENTS = {"development": PNPushEnvironment.DEVELOPMENT, "production": PNPushEnvironment.PRODUCTION}


def push_options(push_type, topic, environment):
    if push_type == "apns2" and not topic:
        raise PeerError("apns2 needs --topic (kmp-chat: APNS_TOPIC_SHOULD_BE_DEFINED_WHEN_DEVICE_GATEWAY_IS_SET_TO_APNS2)")
    return {"push_type": PUSH_TYPES[push_type], "topic": topic,
            "environment": PUSH_ENVIRONMENTS[environment or "development"]}


def push(origin, me, operation, device_token, push_type, channels=None, topic=None, environment=None, auth=None):
    """add / list / remove (channels) / remove (device, `channels` None). Returns the output line."""
    client = Client(origin, me, auth)
    options = push_options(push_type, topic, environment)
    pn = client.pubnub
    line = {"channels": channels, "deviceToken": device_token, "type": push_type}
    if operation == "add":
        client.run("add_channels_to_push", pn.add_channels_to_push(channels=channels, device_id=device_token, **options))
    elif operation == "list":
        result = client.run("list_push_channels", pn.list_push_channels(device_id=device_token, **options))
        line["channels"] = list(result.channels or [])
    elif channels is not None:
        client.run("remove_channels_from_push",
                   pn.remove_channels_from_push(channels=channels, device_id=device_token, **options))
    else:
        client.run("remove_device_from_push", pn.remove_device_from_push(device_id=device_token, **options))
    return line


# --- readbacks -----------------------------------------------------------------------------------

def paged(client, what, make):
    """Every row of a paged App Context list: `make(page)` builds the request for a page (None: the
    first)."""
    rows, page = [], None
    for _ in range(1000):
        result = client.run(what, make(page))
        rows.extend(result.data)
        if not result.data or result.next is None or not getattr(result.next, "hash", None):
            break
        page = Next(result.next.hash)
    return rows


def members(origin, channel_id, as_user=None, pending_only=False, auth=None):
    """`BaseChannel.getMembers` (every page), or `getInvitees` with `pending_only`."""
    client = Client(origin, as_user or READER, auth)
    status_filter = f"status == '{PENDING}'" if pending_only else None
    rows = paged(client, f"get_channel_members {channel_id}", lambda page: kotlin_count(
        client.pubnub.get_channel_members(channel=channel_id, filter=status_filter, include_total_count=True,
                                          include=members_include(), page=page)))
    return [member_row(row, channel_id) for row in rows]


def memberships(origin, user_id, as_user=None, auth=None):
    client = Client(origin, as_user or user_id, auth)
    rows = paged(client, f"get_memberships {user_id}", lambda page: kotlin_count(
        client.pubnub.get_memberships(uuid=user_id, include_total_count=True, page=page, include=MembershipIncludes(
            custom=True, status=True, type=True, channel=True, channel_type=True))))
    return [membership_row(row, user_id) for row in rows]


def channel_metadata(origin, channel_id, as_user=None, auth=None):
    client = Client(origin, as_user or READER, auth)
    data = get_channel(client, channel_id)
    return None if data is None else channel_row(data)


def all_messages(client, channel_id, page_size, meta=True, actions=True):
    """Every stored message of `channel_id`, oldest first, paging backwards."""
    return oldest_first(lambda start: fetch_page(client, channel_id, page_size, start=start, meta=meta,
                                                 actions=actions), page_size, 10000)


def history(origin, channel_id, as_user=None, auth=None):
    client = Client(origin, as_user or READER, auth)
    return [{"timetoken": int(item.timetoken), "message": item.message, "meta": getattr(item, "meta", None),
             "uuid": getattr(item, "uuid", None), "messageType": getattr(item, "message_type", None),
             "actions": getattr(item, "actions", None) or {}}
            for item in all_messages(client, channel_id, HISTORY_PAGE)]


def user_events(origin, user_id, as_user=None, auth=None):
    """The mention and invite events on channel `user_id` (`getEventsHistory`, then as
    `getCurrentUserMentions` and `onInvited` read them)."""
    client = Client(origin, as_user or user_id, auth)
    found = []
    for item in all_messages(client, user_id, EVENTS_PAGE, meta=False, actions=False):
        event = item.message
        if not isinstance(event, dict):
            continue
        publisher = getattr(item, "uuid", None)
        if event.get("type") == "invite":
            found.append({"type": "invite", "timetoken": int(item.timetoken), "invitedByUserId": publisher,
                          "channelId": event.get("channelId"), "channelType": event.get("channelType"),
                          "event": event})
        elif event.get("type") == "mention":
            try:
                message_tt = int(event.get("messageTimetoken"))
            except (TypeError, ValueError):
                note(f"a mention event at {item.timetoken} without a messageTimetoken: {event}")
                continue
            message = get_message(client, event.get("channel"), message_tt)
            if message is None:   # getCurrentUserMentions drops it
                note(f"the mention at {item.timetoken} names a message that cannot be read "
                     f"({event.get('channel')} {message_tt}); dropped as kmp-chat drops it")
                continue
            found.append({"type": "mention", "timetoken": int(item.timetoken), "userId": publisher,
                          "channelId": event.get("channel"), "parentChannelId": event.get("parentChannel"),
                          "messageTimetoken": message_tt, "message": message.message, "event": event})
    return found


# --- selfcheck -----------------------------------------------------------------------------------

HASH_VECTORS = [("mo3k2 ok", 5914255141804885), ("Ąž< 4ó", 5904620407185594),
                ("jio jeroiew mn\nmrie rmw\n!$:@\"", 4876630631559622)]
WORKED_IDS = [("user-a", "user-b", "direct.471133248750172"), ("bob", "alice", "direct.6290047293405539"),
              ("test-user-1", "test-user-2", "direct.6490125275294876"),
              ("Łukasz", "Zoë", "direct.4265565744781141")]


def is_digits(value):
    return isinstance(value, str) and value.isdigit() and len(value) >= 17


def selfcheck(origin, auth):
    started = time.monotonic()
    for text, expected in HASH_VECTORS:
        check(f"cyrb53a({text!r}) = {expected} (kmp-chat HashTest)", cyrb53a(text) == expected, str(cyrb53a(text)))
    for first, second, expected in WORKED_IDS:
        ids = (direct_channel_id(first, second), direct_channel_id(second, first))
        check(f"direct id of {first}, {second} (either order) = {expected}", ids == (expected, expected), str(ids))
    astral, private_use = "\U0001F600x", "\uE000x"
    check("UTF-16 order: the astral id sorts before the U+E000 id (Python's own order is the reverse)",
          kotlin_sorted([private_use, astral]) == [astral, private_use] and sorted([astral, private_use])[0] == private_use)
    expected = f"direct.{cyrb53a(astral + '&' + private_use)}"
    check("direct id of an astral and a U+E000 id hashes astral&private-use, in either order",
          direct_channel_id(private_use, astral) == expected == direct_channel_id(astral, private_use)
          and expected != f"direct.{cyrb53a(private_use + '&' + astral)}", expected)

    tag = uuidlib.uuid4().hex[:8]
    host, guest, third, fourth = (f"{name}-{tag}" for name in ("host", "guest", "third", "fourth"))

    # direct
    direct = create_direct(origin, host, guest, auth=auth)
    channel = direct["channelId"]
    check("direct: the channel id is direct. + cyrb53a(sorted ids joined by &)",
          channel == "direct." + str(cyrb53a("&".join(kotlin_sorted([host, guest])))), channel)
    meta = channel_metadata(origin, channel, auth=auth)
    check("direct: channel metadata type direct, name = the id", meta is not None and meta["type"] == "direct"
          and meta["name"] == channel, str(meta))
    check("direct: the host membership answered", direct["hostMembership"]["channelId"] == channel
          and direct["hostMembership"]["userId"] == host, str(direct["hostMembership"]))
    invitee = direct["inviteeMembership"]
    check("direct: the invitee membership is pending with custom.lastReadMessageTimetoken (a string)",
          invitee["status"] == PENDING and is_digits((invitee["custom"] or {}).get(LAST_READ)), str(invitee))
    listed = members(origin, channel, auth=auth)
    by_user = {row["userId"]: row for row in listed}
    check("direct: members are the host and the invitee (pending)", set(by_user) == {host, guest}
          and by_user[guest]["status"] == PENDING and by_user[host]["status"] != PENDING, str(listed))
    check("direct: the invitee's custom as read back", (by_user.get(guest, {}).get("custom") or {}).get(LAST_READ)
          == (invitee["custom"] or {}).get(LAST_READ), str(by_user.get(guest)))
    invited = [row["userId"] for row in members(origin, channel, pending_only=True, auth=auth)]
    check("invitees: the pending invitee only", invited == [guest], str(invited))
    events = attempt(lambda: user_events(origin, guest, auth=auth))
    check("direct: the invite event on the invitee's channel",
          isinstance(events, list) and [(e["type"], e["timetoken"], e["invitedByUserId"], e["event"]) for e in events]
          == [("invite", direct["inviteTimetoken"], host,
               {"type": "invite", "channelType": "direct", "channelId": channel})], str(events))
    again = create_direct(origin, guest, host, auth=auth)
    check("direct (again, as the other user): the same channel; the host, already a member, gets no invitation",
          again["channelId"] == channel and again["inviteTimetoken"] is None, str(again))
    events = attempt(lambda: user_events(origin, host, auth=auth))
    check("direct (again): no invite event for a member", events == [], str(events))
    mine = memberships(origin, guest, auth=auth)
    check("memberships: the invitee's membership of the direct channel",
          [(row["channelId"], row["status"]) for row in mine] == [(channel, PENDING)], str(mine))

    # join
    joined = join(origin, guest, channel, auth=auth)
    check("join: the membership's status is \"\" (kmp-chat join_shouldClearPendingStatus)",
          joined["membership"]["channelId"] == channel and joined["membership"]["status"] == "", str(joined))
    invited = [row["userId"] for row in members(origin, channel, pending_only=True, auth=auth)]
    check("join: no invitee left", invited == [], str(invited))
    after = {row["userId"]: row for row in members(origin, channel, auth=auth)}.get(guest) or {}
    # a set that leaves custom out keeps it (kmp-chat MembershipIntegrationTest.updatePartially)
    check("join: status \"\" read back; the custom the join left out is kept",
          after.get("status") == "" and (after.get("custom") or {}).get(LAST_READ) == (invitee["custom"] or {}).get(LAST_READ),
          str(after))

    # group and invite
    group_id = f"group-{tag}"
    group = create_group(origin, host, [guest, third], group_id, "The group", auth=auth)
    meta = channel_metadata(origin, group_id, auth=auth)
    check("group: channel metadata type group with the name", meta is not None and meta["type"] == "group"
          and meta["name"] == "The group", str(meta))
    check("group: both invitees pending with lastReadMessageTimetoken",
          sorted(m["userId"] for m in group["inviteeMemberships"]) == sorted([guest, third])
          and all(m["status"] == PENDING and is_digits((m["custom"] or {}).get(LAST_READ))
                  for m in group["inviteeMemberships"]), str(group))
    invited = sorted(row["userId"] for row in members(origin, group_id, pending_only=True, auth=auth))
    check("group: the invitees", invited == sorted([guest, third]), str(invited))
    events = [e for e in user_events(origin, third, auth=auth) if e["type"] == "invite"]
    check("group: the invite event (channelType group)", [(e["timetoken"], e["event"]) for e in events]
          == [(group["inviteTimetokens"][third], {"type": "invite", "channelType": "group", "channelId": group_id})],
          str(events))
    added = invite_user(origin, host, group_id, fourth, auth=auth)
    check("invite: a new member is pending, with an invite event", added["alreadyMember"] is False
          and added["membership"]["status"] == PENDING and isinstance(added["inviteTimetoken"], int), str(added))
    repeat = invite_user(origin, host, group_id, guest, auth=auth)
    check("invite: a member already is returned as is, without an event", repeat["alreadyMember"] is True
          and repeat["inviteTimetoken"] is None and repeat["membership"]["userId"] == guest, str(repeat))

    # public
    public_id = f"public-{tag}"
    public = create_public(origin, host, public_id, auth=auth)
    check("public: type public, name = the id", public["channel"]["type"] == "public"
          and public["channel"]["name"] == public_id, str(public))
    twice = attempt(lambda: create_public(origin, host, public_id, auth=auth))
    check("public: creating it again fails (CHANNEL_ID_ALREADY_EXIST)", "already exists" in str(twice.get("error", "")),
          str(twice))

    # send with a mention
    tt, failed = send(origin, host, channel, f"hello @{guest}!", [guest], auth=auth)
    check("send: the message and its mention event published", not failed, str(failed))
    stored = history(origin, channel, auth=auth)
    text = f"hello [{guest}](pn-user://{guest})!"
    check("send: the text message in kmp-chat's shape, meta {}",
          [(m["timetoken"], m["message"], m["meta"], m["uuid"]) for m in stored]
          == [(tt, {"type": "text", "text": text, "files": []}, {}, host)], str(stored))
    mentions = [e for e in user_events(origin, guest, auth=auth) if e["type"] == "mention"]
    check("send: the mention event on the user's channel",
          [(e["event"], e["userId"], e["message"]) for e in mentions]
          == [({"type": "mention", "messageTimetoken": str(tt), "channel": channel}, host,
               {"type": "text", "text": text, "files": []})] and mentions[0]["timetoken"] > tt, str(mentions))

    # reply
    first, failed = reply(origin, guest, channel, tt, f"reply to @{host}", [host], auth=auth)
    check("reply: the reply and its mention event published", not failed, str(failed))
    thread = thread_channel_id(channel, tt)
    check("reply: the thread channel PUBNUB_INTERNAL_THREAD_<channel>_<tt>", first["threadChannel"] == thread, str(first))
    meta = channel_metadata(origin, thread, auth=auth)
    check("reply: the thread channel's description", meta is not None and meta["description"]
          == f"Thread on channel {channel} with message timetoken {tt}", str(meta))
    parent = [m for m in history(origin, channel, auth=auth) if m["timetoken"] == tt]
    roots = parent[0]["actions"].get(THREAD_ROOT_ID, {}) if parent else {}
    check("reply: the threadRootId action on the parent", list(roots) == [thread] and len(roots[thread]) == 1
          and roots[thread][0].get("uuid") == guest, str(parent))
    second, _ = reply(origin, host, channel, tt, "second reply", [], auth=auth)
    replies = history(origin, thread, auth=auth)
    check("reply: both replies on the thread channel",
          [(m["timetoken"], m["message"]["text"], m["uuid"]) for m in replies]
          == [(first["timetoken"], f"reply to [{host}](pn-user://{host})", guest),
              (second["timetoken"], "second reply", host)], str(replies))
    parent = [m for m in history(origin, channel, auth=auth) if m["timetoken"] == tt]
    check("reply: the second reply adds no second threadRootId action",
          parent and len(parent[0]["actions"].get(THREAD_ROOT_ID, {}).get(thread, [])) == 1, str(parent))
    mentions = [e for e in user_events(origin, host, auth=auth) if e["type"] == "mention"]
    check("reply: the mention event carries parentChannel",
          [(e["event"], e["parentChannelId"]) for e in mentions]
          == [({"type": "mention", "messageTimetoken": str(first["timetoken"]), "channel": thread,
                "parentChannel": channel}, channel)], str(mentions))

    # forward
    forwarded = forward(origin, guest, channel, tt, public_id, auth=auth)
    stored = history(origin, public_id, auth=auth)
    check("forward: the content and meta with originalPublisher and originalChannelId",
          [(m["timetoken"], m["message"], m["meta"], m["uuid"]) for m in stored]
          == [(forwarded, {"type": "text", "text": text, "files": []},
               {ORIGINAL_PUBLISHER: host, ORIGINAL_CHANNEL_ID: channel}, guest)], str(stored))
    refused = attempt(lambda: forward(origin, guest, channel, tt, channel, auth=auth))
    check("forward: to the same channel is refused", "SAME_CHANNEL" in str(refused.get("error", "")), str(refused))

    # push
    device = f"device{tag}"
    added = attempt(lambda: push(origin, host, "add", device, "fcm", [channel, group_id], auth=auth))
    if "error" in added and " 404 " in added["error"] + " ":
        print(f"skip push-add, push-list, push-remove (origin has no push endpoints): {added['error']}", flush=True)
    else:
        check("push-add fcm", "error" not in added, str(added))
        listed = attempt(lambda: push(origin, host, "list", device, "fcm", auth=auth))
        check("push-list fcm: both channels", sorted(listed.get("channels") or []) == sorted([channel, group_id]),
              str(listed))
        removed = attempt(lambda: push(origin, host, "remove", device, "fcm", [group_id], auth=auth))
        listed = attempt(lambda: push(origin, host, "list", device, "fcm", auth=auth))
        check("push-remove fcm one channel", "error" not in removed and listed.get("channels") == [channel],
              f"{removed} {listed}")
        apns = {"topic": "com.example.chat", "environment": "development"}
        added = attempt(lambda: push(origin, host, "add", device, "apns2", [public_id], auth=auth, **apns))
        listed = attempt(lambda: push(origin, host, "list", device, "apns2", auth=auth, **apns))
        check("push apns2: add and list", "error" not in added and listed.get("channels") == [public_id],
              f"{added} {listed}")
        wrong = attempt(lambda: push(origin, host, "list", device, "apns2", auth=auth, topic="com.example.chat",
                                     environment="production"))
        check("push apns2: the production environment is another registration", wrong.get("channels") == [],
              str(wrong))
        removed = attempt(lambda: push(origin, host, "remove", device, "fcm", None, auth=auth))
        listed = attempt(lambda: push(origin, host, "list", device, "fcm", auth=auth))
        check("push-remove fcm device: nothing left", "error" not in removed and listed.get("channels") == [],
              f"{removed} {listed}")
        attempt(lambda: push(origin, host, "remove", device, "apns2", None, auth=auth, **apns))
    return finish(started)


# --- command line --------------------------------------------------------------------------------

def split(value):
    return [item for item in (value or "").split(",") if item]


def main():
    parser = Parser(description="Chat SDK (kmp-chat) conversations written with the official Python SDK")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    def command(name, help_text):
        sub = commands.add_parser(name, help=help_text)
        add_connection_arguments(sub, TOTAL_SECONDS)
        return sub

    sub = command("direct", "createDirectConversation")
    sub.add_argument("--as", dest="as_user", required=True)
    sub.add_argument("--with", dest="with_user", required=True)
    sub.add_argument("--name")
    sub = command("group", "createGroupConversation")
    sub.add_argument("--as", dest="as_user", required=True)
    sub.add_argument("--users", default="", help="comma-separated user ids to invite")
    sub.add_argument("--id")
    sub.add_argument("--name")
    sub = command("public", "createPublicConversation")
    sub.add_argument("--as", dest="as_user", required=True)
    sub.add_argument("--id")
    sub.add_argument("--name")
    sub = command("invite", "Channel.invite")
    sub.add_argument("--as", dest="as_user", required=True)
    sub.add_argument("--channel", required=True)
    sub.add_argument("--user", required=True)
    sub = command("join", "Channel.join")
    sub.add_argument("--as", dest="as_user", required=True)
    sub.add_argument("--channel", required=True)
    for name, help_text in (("send", "Channel.sendText / MessageDraft.send"), ("reply", "a thread reply")):
        sub = command(name, help_text)
        sub.add_argument("--as", dest="as_user", required=True)
        sub.add_argument("--channel", required=True)
        if name == "reply":
            sub.add_argument("--message", required=True, type=int, help="the parent message's timetoken")
        sub.add_argument("--text", required=True)
        sub.add_argument("--mention", action="append", default=[], help="a user id (repeatable)")
    sub = command("forward", "forwardMessage")
    sub.add_argument("--as", dest="as_user", required=True)
    sub.add_argument("--channel", required=True)
    sub.add_argument("--message", required=True, type=int)
    sub.add_argument("--to", required=True)
    for name in ("push-add", "push-list", "push-remove"):
        sub = command(name, {"push-add": "registerPushChannels", "push-list": "getPushChannels",
                             "push-remove": "unregisterPushChannels / unregisterAllPushChannels"}[name])
        sub.add_argument("--as", dest="as_user", required=True)
        if name == "push-add":
            sub.add_argument("--channels", required=True)
        elif name == "push-remove":
            sub.add_argument("--channels", help="without it: the whole device")
        sub.add_argument("--device-token", required=True)
        sub.add_argument("--type", required=True, choices=["fcm", "apns2"])
        sub.add_argument("--topic")
        sub.add_argument("--environment", choices=["development", "production"])
    for name in ("members", "invitees"):
        sub = command(name, "getMembers" if name == "members" else "getInvitees")
        sub.add_argument("--channel", required=True)
        sub.add_argument("--as", dest="as_user")
    sub = command("memberships", "the user's memberships")
    sub.add_argument("--user", required=True)
    sub.add_argument("--as", dest="as_user")
    sub = command("channel", "getChannel")
    sub.add_argument("--id", required=True)
    sub.add_argument("--as", dest="as_user")
    sub = command("history", "getHistory, every page")
    sub.add_argument("--channel", required=True)
    sub.add_argument("--as", dest="as_user")
    sub = command("events", "the user's mention and invite events")
    sub.add_argument("--user", required=True)
    sub.add_argument("--as", dest="as_user")
    command("selfcheck", "run every subcommand once and check the results")
    args = parse_command_line(parser)
    auth = {"secret_key": args.secret_key, "token": args.token}
    return run_subcommand(lambda: dispatch(args, auth))


def dispatch(args, auth):
    """The subcommand `args.command`; its exit code."""
    origin, command_name = args.origin, args.command
    if command_name == "direct":
        emit(create_direct(origin, args.as_user, args.with_user, args.name, auth))
    elif command_name == "group":
        emit(create_group(origin, args.as_user, split(args.users), args.id, args.name, auth))
    elif command_name == "public":
        emit(create_public(origin, args.as_user, args.id, args.name, auth))
    elif command_name == "invite":
        emit(invite_user(origin, args.as_user, args.channel, args.user, auth))
    elif command_name == "join":
        emit(join(origin, args.as_user, args.channel, auth))
    elif command_name in ("send", "reply"):
        if command_name == "send":
            tt, failed = send(origin, args.as_user, args.channel, args.text, args.mention, auth)
            print(tt, flush=True)
        else:
            line, failed = reply(origin, args.as_user, args.channel, args.message, args.text, args.mention, auth)
            emit(line)
        if failed:   # the message went out (its line is printed) but a mention event did not
            raise PeerError("; ".join(failed))
    elif command_name == "forward":
        print(forward(origin, args.as_user, args.channel, args.message, args.to, auth), flush=True)
    elif command_name.startswith("push-"):
        operation = command_name[len("push-"):]
        channels = split(args.channels) if getattr(args, "channels", None) is not None else None
        emit(push(origin, args.as_user, operation, args.device_token, args.type, channels, args.topic,
                  args.environment, auth))
    elif command_name in ("members", "invitees"):
        for row in members(origin, args.channel, args.as_user, command_name == "invitees", auth):
            emit(row)
    elif command_name == "memberships":
        for row in memberships(origin, args.user, args.as_user, auth):
            emit(row)
    elif command_name == "channel":
        emit(channel_metadata(origin, args.id, args.as_user, auth))
    elif command_name == "history":
        for row in history(origin, args.channel, args.as_user, auth):
            emit(row)
    elif command_name == "events":
        for row in user_events(origin, args.user, args.as_user, auth):
            emit(row)
    elif command_name == "selfcheck":
        return run_selfcheck(lambda: selfcheck(origin, auth))
    return 0


if __name__ == "__main__":
    sys.exit(main())

// What `import PubNubReplica` gives an app (docs/api-changes.md): `Replica` and its configuration,
// status and errors (this module), and, one by one, the types their signatures and the queries
// need. The engine (the outbox, the reconciler, live sync, the store's writes, the wire client)
// is not re-exported: it stays in its own products, for advanced use and the testing kit. A type
// an app needs and cannot name is missing here: add it, and `scripts/api-surface` counts it.
//
// Generated from the symbol graph (every type a public, non-deprecated declaration of this
// module reaches, through the members of the types it reaches), then kept by hand.

// The app's own DataSync classes (docs/app-data.md): the declaration (`ReconcilerOptions.appData`),
// the records and their queries (`replica.fetch(AppRecordQueries.records(filter))`), a sync's report.
@_exported import struct ReplicaModel.AppClass
@_exported import struct ReplicaModel.AppProperty
@_exported import enum ReplicaModel.AppSyncRule
@_exported import struct ReplicaModel.AppPredicate
@_exported import enum ReplicaModel.AppEventRouting
@_exported import enum ReplicaModel.AppConcurrency
@_exported import enum ReplicaModel.DataSyncValueKind
@_exported import struct ReplicaModel.AppRecord
@_exported import struct Replicator.AppDataDeclaration
@_exported import enum Replicator.AppDataError
@_exported import struct Replicator.AppClassPullResult
@_exported import struct ReplicaStore.AppRecordFilter
@_exported import struct ReplicaStore.AppRecordPredicate
@_exported import struct ReplicaStore.AppRecordSort
@_exported import enum ReplicaStore.AppRecordQueries

// Where the replica reports its metrics (`ReplicaConfiguration.metrics`; docs/metrics.md).
@_exported import protocol CoreMetrics.MetricsFactory
// The last requests a diagnostics report lists (`DiagnosticsReport.requests`, `RequestJournal.Entry`).
@_exported import class PubNubWire.RequestJournal

// The chat model an app renders and edits: entities, messages, drafts, custom data, timetokens.
@_exported import typealias ReplicaModel.ChannelEdit
@_exported import struct ReplicaModel.ChannelRestriction
@_exported import struct ReplicaModel.ChatChannel
@_exported import protocol ReplicaModel.ChatCustomData
@_exported import struct ReplicaModel.ChatFile
@_exported import struct ReplicaModel.ChatMember
@_exported import struct ReplicaModel.ChatMessage
@_exported import struct ReplicaModel.ChatMessageAction
@_exported import struct ReplicaModel.ChatPushConfiguration
@_exported import struct ReplicaModel.ChatUser
@_exported import struct ReplicaModel.ChatUserEvent
@_exported import protocol ReplicaModel.CustomData
@_exported import enum ReplicaModel.CustomScalar
@_exported import enum ReplicaModel.DefaultChatCustom
@_exported import enum ReplicaModel.DeliveryState
@_exported import struct ReplicaModel.DraftFile
@_exported import struct ReplicaModel.DraftMention
@_exported import struct ReplicaModel.EntityField
@_exported import struct ReplicaModel.FieldChanges
@_exported import enum ReplicaModel.FieldUpdate
@_exported import struct ReplicaModel.FlatCustom
@_exported import struct ReplicaModel.ISOTimestamp
@_exported import enum ReplicaModel.ISOTimestampError
@_exported import enum ReplicaModel.JSONValue
@_exported import typealias ReplicaModel.MemberEdit
@_exported import struct ReplicaModel.MemberKey
@_exported import enum ReplicaModel.MentionTarget
@_exported import struct ReplicaModel.MentionTrigger
@_exported import struct ReplicaModel.MessageDraft
@_exported import enum ReplicaModel.MessageDraftError
@_exported import enum ReplicaModel.MessageElement
@_exported import struct ReplicaModel.MessagePayload
@_exported import enum ReplicaModel.ModelValidationError
@_exported import struct ReplicaModel.ObjectMetadata
@_exported import enum ReplicaModel.PushEnvironment
@_exported import struct ReplicaModel.QuotedMessage
@_exported import struct ReplicaModel.ReactionSummary
@_exported import protocol ReplicaModel.ReplicaClock
@_exported import protocol ReplicaModel.ReplicatedFields
@_exported import struct ReplicaModel.SuggestedMention
@_exported import struct ReplicaModel.SystemClock
@_exported import struct ReplicaModel.Timetoken
@_exported import enum ReplicaModel.TimetokenError
@_exported import typealias ReplicaModel.UserEdit
@_exported import enum ReplicaModel.VersionDecision
@_exported import protocol ReplicaModel.VersionedObject

// Reading: the queries, what they return, drafts' keys, the store's options and errors.
@_exported import struct ReplicaStore.AppliedMigration
@_exported import struct ReplicaStore.ChannelFreshness
@_exported import struct ReplicaStore.ChatInvitation
@_exported import struct ReplicaStore.ChatQueries
@_exported import struct ReplicaStore.ChatThread
@_exported import struct ReplicaStore.ConflictRecord
@_exported import struct ReplicaStore.DraftKey
@_exported import struct ReplicaStore.ExpiringObject
@_exported import enum ReplicaStore.FileShape
@_exported import struct ReplicaStore.InviteNotice
@_exported import struct ReplicaStore.ListingFreshness
@_exported import struct ReplicaStore.MembershipSection
@_exported import struct ReplicaStore.MentionFeedItem
@_exported import struct ReplicaStore.MentionNotice
@_exported import struct ReplicaStore.MessageSearch
@_exported import struct ReplicaStore.MessageSearchResults
@_exported import struct ReplicaStore.RetentionPolicy
@_exported import struct ReplicaStore.RetentionReport
@_exported import struct ReplicaStore.Migration
@_exported import struct ReplicaStore.MigrationReport
@_exported import struct ReplicaStore.OutboxEntry
@_exported import enum ReplicaStore.OutboxErrorClass
@_exported import struct ReplicaStore.OutboxFailure
@_exported import enum ReplicaStore.OutboxKind
@_exported import enum ReplicaStore.OutboxOperation
@_exported import enum ReplicaStore.OutboxState
@_exported import struct ReplicaStore.PushRegistration
@_exported import struct ReplicaStore.ReactionTarget
@_exported import struct ReplicaStore.ReadMark
@_exported import struct ReplicaStore.ReadPositions
@_exported import struct ReplicaStore.ReadReceipt
@_exported import enum ReplicaStore.StoreError
@_exported import struct ReplicaStore.StoreOptions
@_exported import struct ReplicaStore.StoreQuery
@_exported import struct ReplicaStore.StoreStatus
@_exported import struct ReplicaStore.StoredDraft
@_exported import struct ReplicaStore.SuggestionOptions
@_exported import struct ReplicaStore.SyncCheckpoint
@_exported import enum ReplicaStore.UserSuggestionSource

// Writing: receipts, outcomes and events of the outbox; the options of sending, pulling and live sync; conflict policies.
@_exported import typealias Replicator.AccessTokenProvider
@_exported import struct Replicator.AccessTokenRequest
@_exported import struct Replicator.CatchUpProgress
@_exported import struct Replicator.ConflictContext
@_exported import enum Replicator.ConflictDecision
@_exported import enum Replicator.ConflictEntity
@_exported import struct Replicator.ConflictPolicies
@_exported import enum Replicator.ConflictPolicy
@_exported import enum Replicator.ConflictTake
@_exported import enum Replicator.ReconcilerError
@_exported import struct Replicator.ConversationReceipt
@_exported import struct Replicator.DraftSendReceipt
@_exported import struct Replicator.DataSyncOptions
@_exported import struct Replicator.DrainReport
@_exported import struct Replicator.LiveSyncOptions
@_exported import enum Replicator.OutboxDisposition
@_exported import enum Replicator.OutboxError
@_exported import enum Replicator.OutboxEvent
@_exported import struct Replicator.OutboxOptions
@_exported import enum Replicator.OutboxOutcome
@_exported import struct Replicator.OutboxReceipt
@_exported import struct Replicator.OutgoingFile
@_exported import struct Replicator.OutgoingMessage
@_exported import struct Replicator.PresenceOptions
@_exported import struct Replicator.ReconcilerOptions
@_exported import struct Replicator.RetryPolicy
@_exported import enum Replicator.TieRule

// One-shot syncs, the dry run, live activity and presence (`Replica.sync`, `plannedSends`,
// `liveActivity`, `listen`, `hereNow`): their reports and records.
@_exported import struct Replicator.ChannelPullReport
@_exported import struct Replicator.ConflictReport
@_exported import struct Replicator.DecryptPendingReport
@_exported import struct Replicator.GapFillReport
@_exported import enum Replicator.GapReason
@_exported import enum Replicator.LiveActivity
@_exported import struct Replicator.LiveEventRecord
@_exported import enum Replicator.LiveState
@_exported import struct Replicator.ObjectPullReport
@_exported import struct Replicator.ObjectSyncResult
@_exported import struct Replicator.OutboxPlanEntry
@_exported import struct Replicator.PlannedRequest
@_exported import struct Replicator.PlannedStep
@_exported import struct Replicator.PullProgress
@_exported import struct Replicator.ReactionSyncResult
@_exported import struct Replicator.SyncReport
@_exported import struct PubNubWire.ChannelOccupancy
@_exported import enum PubNubWire.DataSyncClassLevel
@_exported import struct PubNubWire.PresentUser

// PubNub: tokens, crypto, push devices, files, errors, and the transport an app may supply.
@_exported import struct PubNubWire.AccessDenial
@_exported import struct PubNubWire.AccessGrants
@_exported import enum PubNubWire.AccessNeed
@_exported import struct PubNubWire.AccessPermissions
@_exported import struct PubNubWire.AccessRequirement
@_exported import enum PubNubWire.AccessResourceKind
@_exported import struct PubNubWire.AccessToken
@_exported import enum PubNubWire.AccessTokenError
@_exported import enum PubNubWire.AccessTokenNeed
@_exported import enum PubNubWire.AccessVerdict
@_exported import enum PubNubWire.CBORError
@_exported import enum PubNubWire.Cryptor
@_exported import struct PubNubWire.FileListPage
@_exported import enum PubNubWire.HTTPMethod
@_exported import struct PubNubWire.Origin
@_exported import struct PubNubWire.PushDevice
@_exported import enum PubNubWire.PushDeviceError
@_exported import enum PubNubWire.PushType
@_exported import struct PubNubWire.QueryItem
@_exported import struct PubNubWire.RemoteFile
@_exported import class PubNubWire.RequestJournal
@_exported import struct PubNubWire.ServiceError
@_exported import protocol PubNubWire.Transport
@_exported import enum PubNubWire.TransportFailure
@_exported import class PubNubWire.URLSessionTransport
@_exported import enum PubNubWire.WireError
@_exported import struct PubNubWire.WireRequest
@_exported import struct PubNubWire.WireResponse

// A test that imports the testing kit gets the simulator it drives (PubNubServer, FaultPlan,
// SubscribeSettings...) with it, and PubNub's wire client (PubNubClient, PublishRequest,
// MembershipSet...), to play the other users of a keyset: `PubNubClient.simulated(...)`.
@_exported import PubNubSimulator
@_exported import PubNubWire

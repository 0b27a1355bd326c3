// A test that imports the testing kit gets the simulator it drives (PubNubServer, FaultPlan,
// SubscribeSettings...) with it.
@_exported import PubNubSimulator

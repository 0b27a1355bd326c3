import Foundation
import PubNubWire

// Pipelined long polls (LiveSyncOptions.pipelinePolls): the next poll goes out while the previous
// answer is stored, so the network wait and the commit overlap.
extension LiveSync {
    /// The answer to `request`: the pipelined poll's when it was sent for exactly this request,
    /// otherwise a new request (a pipelined poll built for something else is dropped).
    func longPoll(_ request: SubscribeRequest) async throws -> SubscribeAnswer {
        guard let pipelined, pipelined.request == request else {
            dropPipelinedPoll()
            return try await reconciler.client.subscribe(request)
        }
        self.pipelined = nil
        let answer = pipelined.answer
        return try await withTaskCancellationHandler { try await answer.value } onCancel: { answer.cancel() }
    }

    /// Sends `request` now; the next ``longPoll(_:)`` for the same request takes its answer.
    func pipeline(_ request: SubscribeRequest) {
        dropPipelinedPoll()
        let client = reconciler.client
        pipelined = (request, Task { try await client.subscribe(request) })
    }

    /// Cancels the pipelined poll, if any (its answer is never applied).
    func dropPipelinedPoll() {
        pipelined?.answer.cancel()
        pipelined = nil
    }

    /// Cancels the pipelined poll and waits until its request has ended (``run()`` stopping).
    func endPipelinedPoll() async {
        let answer = pipelined?.answer
        dropPipelinedPoll()
        _ = try? await answer?.value
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The right to send a store's outbox: at most one holder per store file, across processes.
///
/// Two drainers on one store would publish a message twice: the second would find the first's
/// in-flight op, take it for the leftover of a crash, probe too early and resend. So sending is
/// done only under this lease, and the outbox's in-flight → ambiguous recovery runs only when it
/// has acquired the lease (then no live process can have an op in flight).
///
/// The lease is an exclusive `flock` on a file next to the store, `<store>.lock`, holding the
/// holder's process id. The operating system drops the lock when the process dies, however it
/// dies, so a crashed drainer never blocks the next one. The file itself is left in place (removing
/// it would let two processes lock two different files). An in-memory store has no file and no
/// other process: its lease is always granted.
///
/// Apps rarely touch this: an outbox tries the lease when it is made (to recover a crashed run's
/// ops) and holds it for the length of each drain.
///
/// ```swift
/// if let lease = try store.tryAcquireDrainLease() {
///     defer { lease.release() }
///     // send ops
/// } else {
///     print("another process (pid \(store.drainLeaseHolder() ?? 0)) is sending this store's outbox")
/// }
/// ```
public final class DrainLease: @unchecked Sendable {
    // An NSLock guards the descriptor: release() may race with deinit's release on another thread.
    private let lock = NSLock()
    private var descriptor: Int32
    /// The lock file, or nil for an in-memory store.
    public let lockPath: String?

    init(descriptor: Int32, lockPath: String?) {
        self.descriptor = descriptor
        self.lockPath = lockPath
    }

    /// Gives the lease up (the lock file stays, emptied: a file that still names a process while
    /// nobody holds the lease tells that its holder died holding it, ``DrainLeaseState/abandoned(pid:)``).
    /// Calling it again does nothing.
    public func release() {
        lock.withLock {
            guard descriptor >= 0 else { return }
            _ = ftruncate(descriptor, 0)
            _ = flock(descriptor, LOCK_UN)
            _ = close(descriptor)
            descriptor = -1
        }
    }

    /// Whether the lease is still held.
    public var isHeld: Bool { lock.withLock { descriptor >= 0 || lockPath == nil } }

    deinit { release() }
}


extension DrainLease {
    /// The process id the lease's current (or last) holder wrote into `lockPath`, if it names one.
    static func holder(lockPath: String) -> Int32? {
        guard let data = FileManager.default.contents(atPath: lockPath) else { return nil }
        return Int32(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Takes the lease of the lock file `lockPath` if no other holder has it, without waiting; nil
    /// when another process (or another lease in this one) holds it. A nil path (a store in
    /// memory) gives a lease that holds nothing. ``StoreMaintenance/tryAcquireDrainLease()`` is
    /// the way in.
    static func acquire(lockPath: String?) throws -> DrainLease? {
        guard let lockPath else { return DrainLease(descriptor: -1, lockPath: nil) }
        let fd = SystemCalls.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw StoreError.database(message: "cannot open the drain lease \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            SystemCalls.close(fd)
            if code == EWOULDBLOCK { return nil }
            throw StoreError.database(message: "cannot lock the drain lease \(lockPath): \(String(cString: strerror(code)))")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return DrainLease(descriptor: fd, lockPath: lockPath)
    }
}

/// Who holds a store's drain lease, as a diagnostics check reads it (`pnreplicate doctor`).
package enum DrainLeaseState: Sendable, Hashable {
    /// Nobody holds it, and the last holder gave it up.
    case free
    /// Another process holds it now (a running `listen` or `sync`, an app, an extension).
    case held(pid: Int32?)
    /// This process holds it (a drain of its own is running).
    case heldHere
    /// Nobody holds it, but the file still names a process that is gone: it died holding the
    /// lease (killed mid-drain); the ops it had in flight are probed before they are resent.
    case abandoned(pid: Int32)
}

extension DrainLease {
    /// Who holds the lease of `lockPath` now, without keeping it (nil path: a store in memory, free).
    static func state(lockPath: String?) throws -> DrainLeaseState {
        guard let lockPath, FileManager.default.fileExists(atPath: lockPath) else { return .free }
        let named = holder(lockPath: lockPath)
        // Looked at without taking the lease: a lease taken here would be given up again, and
        // giving it up empties the file this check reads.
        let fd = SystemCalls.open(lockPath, O_RDONLY | O_CLOEXEC, 0)
        guard fd >= 0 else { return .free }
        defer { SystemCalls.close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else {
            return named == getpid() ? .heldHere : .held(pid: named)
        }
        _ = flock(fd, LOCK_UN)
        guard let named, named != getpid() else { return .free }
        return kill(named, 0) == 0 || errno == EPERM ? .free : .abandoned(pid: named)
    }
}

/// The C library calls whose names `ChatStore` members shadow (`open`).
private enum SystemCalls {
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        #if canImport(Glibc)
            Glibc.open(path, flags, mode)
        #else
            Darwin.open(path, flags, mode)
        #endif
    }

    static func close(_ fd: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(fd)
        #else
            _ = Darwin.close(fd)
        #endif
    }
}

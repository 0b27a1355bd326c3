import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a child process ended: an exit with a status, or an uncaught signal with its number (the
/// shape of Foundation's `terminationReason` and `terminationStatus`).
struct Termination: Equatable, Sendable {
    enum Reason: Sendable { case exit, uncaughtSignal }
    var reason: Reason
    /// The exit status, or the signal number.
    var status: Int32
}

struct SpawnError: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// A child process started with `posix_spawn`, for the tests.
///
/// Foundation's `Process.run()` on Linux (swift-corelibs-foundation before PR #5472, still in the
/// 6.3.1 toolchain) reads past a short `dirent` while it lists `/proc/self/fd`, and crashed the
/// suite now and then (signal 11 in `memcpy` under `Process.run`). The tests spawn through this
/// instead. Descriptors the parent keeps are opened with `O_CLOEXEC`, so that children spawned
/// at the same time by other tests do not inherit them (an inherited pipe end would hold off EOF).
/// A thread waits for the child with `waitpid`, so the child is always reaped, and captured
/// pipes are read on their own threads, so a chatty child never blocks on a full pipe.
final class ChildProcess: @unchecked Sendable {
    /// What every child's environment holds unless this process or the test sets it: a PubNub
    /// origin on this machine where nothing listens (port 9, discard).
    static let defaultEnvironment = ["PUBNUB_ORIGIN": "http://127.0.0.1:9"]

    /// What one of the child's standard streams is connected to.
    enum Stream {
        /// The test process's own stream.
        case inherit
        /// `/dev/null`.
        case nullDevice
        /// A pipe: for stdin, written through ``closeStdin()``; for stdout and stderr, read to
        /// EOF on a background thread into ``stdout``/``stderr``.
        case pipe
        /// A file, created or truncated.
        case file(String)
        /// A descriptor of the test process (duplicated onto the stream; the caller keeps it).
        case descriptor(Int32)
        /// No descriptor at all (as `2>&-`).
        case closed
    }

    let pid: pid_t
    private let exited = DispatchGroup()
    private let lock = NSLock()
    private var ending: Termination?
    private var stdinWriter: Int32 = -1
    private let stdoutCapture: Capture?
    private let stderrCapture: Capture?

    /// Starts `executable` (an absolute path) with `arguments`, this process's environment with
    /// `environment` over it, and the given streams.
    init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        stdin: Stream = .nullDevice, stdout: Stream = .inherit, stderr: Stream = .inherit
    ) throws {
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        // Default dispositions and an empty mask, whatever the test runner set up (SIGPIPE ignored,
        // for one, would hide a child that dies of it).
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        #if canImport(Glibc)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        #else
        // POSIX_SPAWN_CLOEXEC_DEFAULT: the child gets only the descriptors of the file actions.
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_CLOEXEC_DEFAULT))
        #endif

        // Parent ends of pipes, and child ends to close in the parent once the child has them.
        var childEnds: [Int32] = []
        var parentEnds: [Int32] = []
        var captures: [Int32: Int32] = [:]  // target stream -> parent read end
        var writer: Int32 = -1
        func release(_ descriptors: [Int32]) { for fd in descriptors { close(fd) } }
        do {
            for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
                switch stream {
                case .inherit:
                    #if !canImport(Glibc)
                    posix_spawn_file_actions_addinherit_np(&actions, target)  // kept despite CLOEXEC_DEFAULT
                    #endif
                case .nullDevice:
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                case .file(let path):
                    posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                case .descriptor(let fd):
                    posix_spawn_file_actions_adddup2(&actions, fd, target)
                case .closed:
                    posix_spawn_file_actions_addclose(&actions, target)
                case .pipe:
                    let (read, write) = try Self.pipe()
                    let (child, parent) = target == 0 ? (read, write) : (write, read)
                    childEnds.append(child)
                    parentEnds.append(parent)
                    posix_spawn_file_actions_adddup2(&actions, child, target)
                    if target == 0 { writer = parent } else { captures[target] = parent }
                }
            }
            // Nothing else of this process reaches the child: not every descriptor is close-on-exec
            // (NIO's sockets on Linux are not; a listening socket inherited by a child would keep
            // its port taken after the test closed it).
            #if canImport(Glibc)
            let code = addclosefrom(&actions, 3)
            guard code == 0 else { throw SpawnError(call: "posix_spawn_file_actions_addclosefrom_np", code: code) }
            #endif
        } catch {
            release(childEnds + parentEnds)
            throw error
        }

        // A child never reaches PubNub's real service by accident (nor is refused for lacking
        // keys there): an unreachable origin on this machine unless this process or the test gives one.
        var environ = ProcessInfo.processInfo.environment.merging(Self.defaultEnvironment) { current, _ in current }
            .merging(environment) { _, new in new }
            .map { "\($0.key)=\($0.value)" }
        environ.sort()
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environ.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }

        var spawned = pid_t()
        let code = posix_spawn(&spawned, executable, &actions, &attributes, argv, envp)
        release(childEnds)
        guard code == 0 else {
            release(parentEnds)
            throw SpawnError(call: "posix_spawn \(executable)", code: code)
        }
        let pid = spawned
        self.pid = pid
        stdinWriter = writer
        stdoutCapture = captures[1].map(Capture.init)
        stderrCapture = captures[2].map(Capture.init)

        exited.enter()
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
            // WIFEXITED / WTERMSIG are macros Swift does not import.
            let signal = status & 0x7f
            let termination =
                signal == 0
                ? Termination(reason: .exit, status: (status >> 8) & 0xff)
                : Termination(reason: .uncaughtSignal, status: signal)
            lock.withLock { ending = termination }
            exited.leave()
        }
    }

    /// A pipe whose two ends are close-on-exec in this process.
    static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        #if canImport(Glibc)
        guard pipe2(&ends, O_CLOEXEC) == 0 else { throw SpawnError(call: "pipe2", code: errno) }
        #else
        // macOS has no pipe2: the two ends are close-on-exec a moment after they exist.
        guard Darwin.pipe(&ends) == 0 else { throw SpawnError(call: "pipe", code: errno) }
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        #endif
        return (ends[0], ends[1])
    }

    /// Whether the child has not been reaped yet.
    var isRunning: Bool { exited.wait(timeout: .now()) == .timedOut }

    /// Waits for the child to end, blocking the calling thread. Unavailable from async code: a
    /// test that blocked a thread of Swift's cooperative pool (two threads on a two-core machine)
    /// stalled every other test's tasks meanwhile, and an in-process server's 10 s deadline fired
    /// in CI. Async code uses ``ended()`` or ``wait(until:)``, or blocks inside ``offPool(_:)``.
    @available(*, noasync, message: "blocks a thread of the cooperative pool: use ended(), wait(until:) or offPool")
    @discardableResult
    func wait() -> Termination {
        exited.wait()
        return lock.withLock { ending! }
    }

    /// Waits at most `limit` for the child to end, blocking the calling thread; nil if it is still
    /// running. Unavailable from async code, as ``wait()``.
    @available(*, noasync, message: "blocks a thread of the cooperative pool: use wait(until:) or offPool")
    func wait(timeout limit: Duration) -> Termination? {
        let nanoseconds = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        guard exited.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else { return nil }
        return lock.withLock { ending }
    }

    /// Waits, without blocking a thread, until the child ends or `deadline` passes (or the task is
    /// cancelled); nil if it is still running.
    func wait(until deadline: ContinuousClock.Instant) async -> Termination? {
        let remaining = deadline - .now
        if remaining > .zero {
            let nanoseconds = remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000
            let once = Once()
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    once.set(continuation)
                    exited.notify(queue: .global()) { once.resume() }
                    DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { once.resume() }
                }
            } onCancel: {
                once.resume()
            }
        }
        return lock.withLock { ending }
    }

    /// Waits, without blocking a thread, until the child ends.
    @discardableResult
    func ended() async -> Termination {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            exited.notify(queue: .global()) { continuation.resume() }
        }
        return lock.withLock { ending! }
    }

    /// SIGTERM now and SIGKILL `grace` later if the child is still there, without waiting for
    /// either: for a `defer` in async code, which cannot wait. The child is reaped by the thread
    /// that watches it.
    func stop(grace: Duration = .seconds(10)) {
        terminate()
        let nanoseconds = grace.components.seconds * 1_000_000_000 + grace.components.attoseconds / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [self] in
            signal(SIGKILL)
        }
    }

    /// Sends `signal` to the child, unless it has been reaped (its pid may be reused).
    func signal(_ signal: Int32) {
        lock.withLock {
            if ending == nil { _ = kill(pid, signal) }
        }
    }

    /// SIGTERM.
    func terminate() { signal(SIGTERM) }

    /// Closes the pipe to the child's stdin (for ``Stream/pipe`` stdin).
    func closeStdin() {
        lock.withLock {
            if stdinWriter >= 0 { close(stdinWriter) }
            stdinWriter = -1
        }
    }

    /// Everything the child wrote to its stdout pipe, once the pipe reached EOF.
    var stdout: String { stdoutCapture?.all() ?? "" }
    /// Everything the child wrote to its stderr pipe, once the pipe reached EOF.
    var stderr: String { stderrCapture?.all() ?? "" }

    /// The child's stdout so far, once `predicate` holds for it or the pipe reaches EOF.
    @available(*, noasync, message: "blocks a thread of the cooperative pool: call it inside offPool")
    func stdout(when predicate: (String) -> Bool) -> String {
        stdoutCapture?.text(when: predicate) ?? ""
    }

    /// The child's stdout so far, once `predicate` holds for it, the pipe reaches EOF or `limit`
    /// has passed (the caller tells which by asking `predicate` again).
    @available(*, noasync, message: "blocks a thread of the cooperative pool: call it inside offPool")
    func stdout(when predicate: (String) -> Bool, within limit: Duration) -> String {
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        return stdoutCapture?.text(when: predicate, until: Date().addingTimeInterval(seconds)) ?? ""
    }

    /// The child's stderr so far, once `predicate` holds for it, the pipe reaches EOF or `limit`
    /// has passed.
    @available(*, noasync, message: "blocks a thread of the cooperative pool: call it inside offPool")
    func stderr(when predicate: (String) -> Bool, within limit: Duration) -> String {
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        return stderrCapture?.text(when: predicate, until: Date().addingTimeInterval(seconds)) ?? ""
    }

    deinit {
        if stdinWriter >= 0 { close(stdinWriter) }
    }
}

#if canImport(Glibc)
/// glibc's `pipe2`, which Swift's Glibc module does not declare (it is behind `_GNU_SOURCE`).
private let pipe2: @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32 = {
    guard let symbol = dlsym(nil, "pipe2") else { fatalError("no pipe2 in this libc") }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
}()

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up the same way.
private let addclosefrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
        fatalError("posix_spawn_file_actions_addclosefrom_np needs glibc 2.34 or later")
    }
    return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}()
#endif

/// One pipe read to EOF on its own thread.
private final class Capture: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var ended = false

    init(_ fd: Int32) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                condition.withLock {
                    if count > 0 { data.append(contentsOf: buffer[..<count]) } else { ended = true }
                    condition.broadcast()
                }
                if count <= 0 { break }
            }
            close(fd)
        }
    }

    /// The text so far once `predicate` holds, the pipe ended or `deadline` (if any) passed.
    func text(when predicate: (String) -> Bool, until deadline: Date? = nil) -> String {
        condition.withLock {
            while true {
                let text = String(decoding: data, as: UTF8.self)
                if ended || predicate(text) { return text }
                // No `wait(until: .distantFuture)`: corelibs Foundation traps converting it to a timespec.
                if let deadline {
                    if !condition.wait(until: deadline) { return String(decoding: data, as: UTF8.self) }
                } else {
                    condition.wait()
                }
            }
        }
    }

    func all() -> String { text { _ in false } }
}

/// Resumes a continuation once, whichever of its resumers comes first.
private final class Once: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?
    private var done = false

    func set(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = lock.withLock {
            if done { return true }
            self.continuation = continuation
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func resume() {
        let pending = lock.withLock {
            done = true
            defer { continuation = nil }
            return continuation
        }
        pending?.resume()
    }
}

// The ResultPromise and swift-nio workloads of the scenarios timed against each other (S1–S5, S8, S9), shared
// by the package-benchmark run (`PromiseBenchmarks`) and the fresh-process timing run (`FreshProcess`), so
// that both time the same code. Every function is `@inlinable`: its body is compiled into the caller's
// module and specialised there, exactly as if it were written in it.
import Dispatch
import NIOCore
import NIOEmbedded
import NIOPosix
import ResultPromise
import Synchronization

/// Steps per iteration.
public let n = 100_000

/// One contender's work in one scenario.
public struct Workload: Sendable {
  /// The scenario's name, as the package-benchmark run labels it ("S1 pending chain").
  public let scenario: String
  /// The contender's name, as the package-benchmark run labels it ("ResultPromise", "NIO embedded").
  public let contender: String
  /// Sets up one iteration, untimed, and returns the part to time.
  public let prepare: @Sendable () -> () -> Void

  /// Work timed whole.
  @inlinable public init(_ scenario: String, _ contender: String, run: @escaping @Sendable () -> Void) {
    self.init(scenario: scenario, contender: contender, prepare: { run })
  }

  /// Work with an untimed set-up: `prepare` sets up and returns the part to time.
  @inlinable public static func withSetUp(
    _ scenario: String, _ contender: String, _ prepare: @escaping @Sendable () -> () -> Void
  ) -> Workload {
    Workload(scenario: scenario, contender: contender, prepare: prepare)
  }

  @usableFromInline init(scenario: String, contender: String, prepare: @escaping @Sendable () -> () -> Void) {
    (self.scenario, self.contender, self.prepare) = (scenario, contender, prepare)
  }
}

/// ResultPromise against swift-nio, scenario by scenario: S1–S5 on an `EmbeddedEventLoop` (no locks), S8
/// on a one-thread `MultiThreadedEventLoopGroup`.
@inlinable public func timedWorkloads() -> [Workload] {
  [
    // The promise's type is written out: inferred from `{ $0.map { $0 + 1 } }` alone, `Failure` would come
    // from the typed-throws `map` overload (`Never`, for a closure that does not throw).
    Workload("S1 pending chain", "ResultPromise") {
      pendingRootChain(n) { (promise: ResultPromise<Int, Never>) in promise.map { $0 + 1 } }
    },
    Workload("S1 pending chain", "NIO embedded") { pendingRootChain(n) { $0.map { $0 + 1 } } },

    Workload("S2 settled chain", "ResultPromise") {
      var tail = ResultPromise<Int, Never>(value: 0)
      for _ in 0..<n { tail = tail.map { $0 + 1 } }
      keepAlive(tail)
    },
    Workload("S2 settled chain", "NIO embedded") {
      var tail = EmbeddedEventLoop().makeSucceededFuture(0)
      for _ in 0..<n { tail = tail.map { $0 + 1 } }
      keepAlive(tail)
    },

    Workload("S3 thenAsync chain", "ResultPromise") {
      pendingRootChain(n) { $0.thenAsync { ResultPromise<Int, Never>(value: $0 + 1) } }
    },
    Workload("S3 thenAsync chain", "NIO embedded") {
      pendingRootChain(n) { tail in
        tail.flatMap { [eventLoop = tail.eventLoop] in eventLoop.makeSucceededFuture($0 + 1) }
      }
    },

    Workload("S4 fan-out", "ResultPromise") {
      let promise = ResultPromise<Int, Never>()
      for _ in 0..<n { promise.await { keepAlive($0) } }
      promise.succeed(1)
    },
    Workload("S4 fan-out", "NIO embedded") {
      let promise = EmbeddedEventLoop().makePromise(of: Int.self)
      for _ in 0..<n { promise.futureResult.whenComplete { keepAlive($0) } }
      promise.succeed(1)
    },

    Workload("S5 all", "ResultPromise") {
      let inputs = (0..<n).map { _ in ResultPromise<Int, Never>() }
      let all = ResultPromise.all(inputs)
      for input in inputs { input.succeed(1) }
      keepAlive(all)
    },
    Workload("S5 all", "NIO embedded whenAllSucceed") {
      let loop = EmbeddedEventLoop()
      let inputs = (0..<n).map { _ in loop.makePromise(of: Int.self) }
      let all = EventLoopFuture.whenAllSucceed(inputs.map(\.futureResult), on: loop)
      for input in inputs { input.succeed(1) }
      keepAlive(all)
    },

    // Settled on one thread while observers attach from another; making the promises is not timed.
    Workload.withSetUp("S8 cross-thread", "ResultPromise") {
      let promises = (0..<n).map { _ in ResultPromise<Int, Never>() }
      return {
        let countdown = Countdown(n)
        DispatchQueue.global().async { for promise in promises { promise.succeed(1) } }
        for promise in promises { promise.await { _ in countdown.arrive() } }
        countdown.done.wait()
      }
    },
    Workload.withSetUp("S8 cross-thread", "NIO multi-threaded loop") {
      let loop = oneThreadGroup.next()
      let promises = (0..<n).map { _ in loop.makePromise(of: Int.self) }
      return {
        let countdown = Countdown(n)
        loop.execute { for promise in promises { promise.succeed(1) } }
        for promise in promises { promise.futureResult.whenComplete { _ in countdown.arrive() } }
        countdown.done.wait()
      }
    },

    // swift-nio has no cancellation: its contender is the plain `map` chain of S1, the same work without it.
    Workload("S9 cancellable chain, settled", "ResultPromise") { cancellableRootChain(n, cancelling: false) },
    Workload("S9 cancellable chain, settled", "NIO embedded") { pendingRootChain(n) { $0.map { $0 + 1 } } },
    Workload("S9 cancellable chain, cancelled", "ResultPromise") {
      cancellableRootChain(n, cancelling: true)
    },
    Workload("S9 cancellable chain, cancelled", "NIO embedded") { pendingRootChain(n) { $0.map { $0 + 1 } } },
  ]
}

// MARK: - Shared by several scenarios

/// Builds `length` steps with `step` on a pending root, then settles the root.
@inlinable public func pendingRootChain<Failure: Error>(
  _ length: Int, _ step: (ResultPromise<Int, Failure>) -> ResultPromise<Int, Failure>
) {
  let root = ResultPromise<Int, Failure>()
  var tail = root
  for _ in 0..<length { tail = step(tail) }
  root.succeed(0)
  keepAlive(tail)
}

/// Builds `length` steps with `step` on a pending root, then settles the root.
@inlinable public func pendingRootChain(_ length: Int, _ step: (EventLoopFuture<Int>) -> EventLoopFuture<Int>)
{
  let root = EmbeddedEventLoop().makePromise(of: Int.self)
  var tail = root.futureResult
  for _ in 0..<length { tail = step(tail) }
  root.succeed(0)
  keepAlive(tail)
}

/// Builds `length` `map` steps on a root made with `ResultPromise { done, onCancel in … }`, then settles
/// the root — or, if `cancelling`, cancels the chain from its end, which reaches the root's handler (the
/// request walks the whole chain) and settles it from there.
@inlinable public func cancellableRootChain(_ length: Int, cancelling: Bool) {
  let fulfil = RootFulfil()
  let root = ResultPromise<Int, Never> { done, onCancel in
    fulfil.call = done
    onCancel { done(.success(-1)) }
  }
  var tail = root
  for _ in 0..<length { tail = tail.map { $0 + 1 } }
  if cancelling { tail.cancel() } else { fulfil.call?(.success(0)) }
  keepAlive(tail)
}

/// The `fulfil` function of a cancellable root, kept to settle it. `@unchecked Sendable`: set and used on
/// one thread.
public final class RootFulfil: @unchecked Sendable {
  /// The root's `fulfil` function, once the root is made.
  public var call: (@Sendable (Result<Int, Never>) -> Void)?
  /// Holds nothing yet.
  @inlinable public init() {}
}

/// Keeps `value` alive to here, and keeps the optimiser from removing the work that made it.
@inline(never) public func keepAlive<T>(_ value: T) { withExtendedLifetime(value) {} }

/// The event loop S8's swift-nio contender settles on, made once.
public let oneThreadGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

/// Counts down from `count` and signals when it reaches zero.
public final class Countdown: Sendable {
  @usableFromInline let remaining: Atomic<Int>
  /// Signalled when the count reaches zero.
  public let done = DispatchSemaphore(value: 0)
  /// A countdown from `count`.
  @inlinable public init(_ count: Int) { remaining = Atomic(count) }
  /// Counts one down, and signals `done` at zero.
  @inlinable public func arrive() {
    if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.signal() }
  }
}

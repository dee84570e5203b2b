import Dispatch
import Foundation
import ResultPromise
import Testing

/// One or more tests per numbered semantic of DESIGN.md (5 and 6 have their own suites,
/// `StackDepthTests` and `LeakTests`; 8 is `TypedErrorTests`; 10 is also `StressTests`).
@Suite("Semantics")
struct SemanticsTests {
  // MARK: 1. Exactly once

  @Test("1: a second fulfil returns false and notifies nobody")
  func secondFulfilNotifiesNobody() {
    let promise = ResultPromise<Int, TestError>()
    let calls = Log<Result<Int, TestError>>()
    promise.await(calls.append)
    promise.await(calls.append)
    #expect(promise.fulfil(with: .success(1)))
    #expect(calls.values == [.success(1), .success(1)])
    #expect(!promise.fulfil(with: .success(2)))
    #expect(!promise.fail(.boom))
    #expect(calls.values == [.success(1), .success(1)])
  }

  @Test("1: every observer runs exactly once, before and after settlement")
  func everyObserverOnce() {
    let promise = ResultPromise<Int, TestError>()
    let counters = (0..<20).map { _ in Counter() }
    for counter in counters[..<10] { promise.await { _ in counter.increment() } }
    promise.succeed(1)
    for counter in counters[10...] { promise.await { _ in counter.increment() } }
    promise.succeed(2)
    #expect(counters.map(\.value) == Array(repeating: 1, count: 20))
  }

  @Test("1: a failure skips every then and map step of a chain and reaches recover, once")
  func failureSkipsStepsAndReachesRecover() {
    let root = ResultPromise<Int, TestError>()
    let stepCalls = Counter()
    let recovered = Log<TestError>()
    let result = Log<Result<String, AppError>>()
    root
      .then { value -> Result<Int, TestError> in
        stepCalls.increment()
        return .success(value + 1)
      }
      .map { value -> Int in
        stepCalls.increment()
        return value * 2
      }
      .recover { error -> Result<Int, AppError> in
        recovered.append(error)
        return .success(-1)
      }
      .map { "\($0)" }
      .await(result.append)
    root.fail(.other(5))
    #expect(stepCalls.value == 0)
    #expect(recovered.values == [.other(5)])
    #expect(result.values == [.success("-1")])
  }

  // MARK: 2. In order

  @Test("2: observers registered before settlement run in registration order")
  func orderBeforeSettlement() {
    let promise = ResultPromise<Int, TestError>()
    let order = Log<Int>()
    for index in 0..<50 { promise.await { _ in order.append(index) } }
    promise.succeed(0)
    #expect(order.values == Array(0..<50))
  }

  @Test("2: observers registered after settlement run in registration order")
  func orderAfterSettlement() {
    let promise = ResultPromise<Int, TestError>(value: 0)
    let order = Log<Int>()
    for index in 0..<50 { promise.await { _ in order.append(index) } }
    #expect(order.values == Array(0..<50))
  }

  @Test("2: an observer added from inside a callback runs after those already registered")
  func orderWithObserverAddedDuringDelivery() {
    let promise = ResultPromise<Int, TestError>()
    let order = Log<String>()
    promise.await { _ in
      order.append("a")
      promise.await { _ in order.append("late") }
    }
    promise.await { _ in order.append("b") }
    promise.await { _ in order.append("c") }
    promise.succeed(0)
    #expect(order.values == ["a", "b", "c", "late"])
  }

  // MARK: 3. Synchronous by default

  @Test("3: an observer registered on a settled promise runs on the caller's thread before await returns")
  func settledObserverRunsSynchronously() {
    let promise = ResultPromise<Int, TestError>(value: 1)
    let thread = currentThreadID()
    let ranOn = Log<ObjectIdentifier>()
    promise.await { _ in ranOn.append(currentThreadID()) }
    #expect(ranOn.values == [thread])
  }

  @Test("3: an observer registered earlier runs on the fulfilling thread before fulfil returns")
  func pendingObserverRunsOnFulfillingThread() async {
    let promise = ResultPromise<Int, TestError>()
    let ranOn = Log<ObjectIdentifier>()
    promise.await { _ in ranOn.append(currentThreadID()) }
    let fulfiller = Log<ObjectIdentifier>()
    let ranBeforeFulfilReturned = Log<Bool>()
    await onSmallStack {
      fulfiller.append(currentThreadID())
      promise.succeed(1)
      ranBeforeFulfilReturned.append(ranOn.count == 1)
    }
    #expect(ranBeforeFulfilReturned.values == [true])
    #expect(ranOn.values == fulfiller.values)
  }

  @Test("3: a nested fulfil settles at once but its observers wait for the current callback to return")
  func nestedFulfilQueuesObservers() {
    let first = ResultPromise<Int, TestError>()
    let second = ResultPromise<Int, TestError>()
    let order = Log<String>()
    second.await { _ in order.append("second's observer") }
    first.await { _ in
      order.append("first's observer begins")
      let settled = second.succeed(2)
      order.append("nested fulfil returned \(settled), pending \(second.isPending)")
      order.append("first's observer ends")
    }
    let outer = first.succeed(1)
    order.append("outer fulfil returned \(outer)")
    #expect(
      order.values == [
        "first's observer begins",
        "nested fulfil returned true, pending false",
        "first's observer ends",
        "second's observer",
        "outer fulfil returned true",
      ])
  }

  @Test("3: queued work runs first in, first out, and work queued by queued work runs after what was waiting")
  func queueIsFirstInFirstOut() {
    let root = ResultPromise<Int, TestError>()
    let a = ResultPromise<Int, TestError>()
    let b = ResultPromise<Int, TestError>()
    let c = ResultPromise<Int, TestError>()
    let order = Log<String>()
    a.await { _ in
      order.append("a")
      c.succeed(3)
    }
    b.await { _ in order.append("b") }
    c.await { _ in order.append("c") }
    root.await { _ in
      order.append("root 1")
      a.succeed(1)
      b.succeed(2)
    }
    root.await { _ in order.append("root 2") }
    root.succeed(0)
    #expect(order.values == ["root 1", "root 2", "a", "b", "c"])
  }

  @Test("3: an await on a settled promise from inside a callback runs after the callback returns")
  func awaitInsideCallbackIsQueued() {
    let settled = ResultPromise<Int, TestError>(value: 7)
    let trigger = ResultPromise<Int, TestError>()
    let order = Log<String>()
    trigger.await { _ in
      settled.await { _ in order.append("inner") }
      order.append("callback ends")
    }
    trigger.succeed(0)
    order.append("fulfil returned")
    #expect(order.values == ["callback ends", "inner", "fulfil returned"])
  }

  @Test("2: an observer registered from another thread during delivery joins it and runs after the others")
  func otherThreadObserverJoinsDelivery() async {
    // Thread A registers 1 and 2; the test settles on thread B; observer 1 (on B) lets A register 3 and
    // waits until A's `await` has returned. 3 must run after 1 and 2, on B, and never alongside them.
    let promise = ResultPromise<Int, TestError>()
    let order = Log<String>()
    let threads = Log<ObjectIdentifier>()
    let firstTwoRegistered = DispatchSemaphore(value: 0)
    let registerThird = DispatchSemaphore(value: 0)
    let thirdRegistered = DispatchSemaphore(value: 0)
    let registrar = Thread {
      promise.await { _ in
        order.append("1 begins")
        threads.append(currentThreadID())
        registerThird.signal()
        thirdRegistered.wait()
        order.append("1 ends")
      }
      promise.await { _ in order.append("2") }
      firstTwoRegistered.signal()
      registerThird.wait()
      promise.await { _ in
        order.append("3")
        threads.append(currentThreadID())
      }
      order.append("A's await returned")
      thirdRegistered.signal()
    }
    registrar.start()
    await onSmallStack {
      firstTwoRegistered.wait()
      promise.succeed(1)
    }
    #expect(order.values == ["1 begins", "A's await returned", "1 ends", "2", "3"])
    #expect(threads.values.count == 2 && threads.values[0] == threads.values[1])
  }

  @Test("2: an observer registered from another thread while a lone observer runs joins its delivery")
  func otherThreadObserverJoinsLoneObserversDelivery() async {
    // The delivery of a promise settled with one observer takes that observer without the lock; one
    // registered from thread A while it runs on thread B must still run after it, on B, once.
    let promise = ResultPromise<Int, TestError>()
    let order = Log<String>()
    let threads = Log<ObjectIdentifier>()
    let registerSecond = DispatchSemaphore(value: 0)
    let secondRegistered = DispatchSemaphore(value: 0)
    promise.await { _ in
      order.append("1 begins")
      threads.append(currentThreadID())
      registerSecond.signal()
      secondRegistered.wait()
      order.append("1 ends")
    }
    let registrar = Thread {
      registerSecond.wait()
      promise.await { _ in
        order.append("2")
        threads.append(currentThreadID())
      }
      order.append("A's await returned")
      secondRegistered.signal()
    }
    registrar.start()
    await onSmallStack { promise.succeed(1) }
    #expect(order.values == ["1 begins", "A's await returned", "1 ends", "2"])
    #expect(threads.values.count == 2 && threads.values[0] == threads.values[1])
  }

  @Test("2: observers added from two threads while a lone observer runs keep their registration order")
  func observersAddedFromTwoThreadsDuringLoneObserverKeepOrder() async {
    // The lone observer runs on thread B. Thread A adds "A1"; B adds "B2" (from inside the observer);
    // then A adds "A3". However the rounds fall, they must run in that order, after the lone one.
    let promise = ResultPromise<Int, TestError>()
    let order = Log<String>()
    let addFirst = DispatchSemaphore(value: 0)
    let addThird = DispatchSemaphore(value: 0)
    let added = DispatchSemaphore(value: 0)
    promise.await { _ in
      order.append("lone")
      addFirst.signal()
      added.wait()
      promise.await { _ in order.append("B2") }
      addThird.signal()
      added.wait()
    }
    let registrar = Thread {
      addFirst.wait()
      promise.await { _ in order.append("A1") }
      added.signal()
      addThird.wait()
      promise.await { _ in order.append("A3") }
      added.signal()
    }
    registrar.start()
    await onSmallStack { promise.succeed(1) }
    #expect(order.values == ["lone", "A1", "B2", "A3"])
  }

  @Test("3: observers added on its thread before and during a lone observer's turn keep their places")
  func observersAddedBeforeAndDuringLoneObserversTurnKeepTheirPlaces() {
    // "before" joins the delivery that `succeed` queued, so it runs right after the lone observer, ahead
    // of `early`'s delivery queued earlier; "during", added by the lone observer after it settled `late`,
    // waits behind `late`'s delivery. The lone observer's promise takes its shorter path here.
    let trigger = ResultPromise<Int, TestError>()
    let promise = ResultPromise<Int, TestError>()
    let early = ResultPromise<Int, TestError>()
    let late = ResultPromise<Int, TestError>()
    let order = Log<String>()
    early.await { _ in order.append("early's observer") }
    late.await { _ in order.append("late's observer") }
    promise.await { _ in
      order.append("lone observer")
      late.succeed(1)
      promise.await { _ in order.append("during") }
    }
    trigger.await { _ in
      promise.succeed(1)  // its delivery waits for this callback
      early.succeed(2)
      promise.await { _ in order.append("before") }
    }
    trigger.succeed(0)
    #expect(order.values == ["lone observer", "before", "early's observer", "late's observer", "during"])
  }

  @Test("3: an observer added by a lone observer to its own promise is queued behind work queued before it")
  func observerAddedByLoneObserverIsQueuedInOrder() {
    for otherFirst in [true, false] {
      let promise = ResultPromise<Int, TestError>()
      let other = ResultPromise<Int, TestError>()
      let order = Log<String>()
      other.await { _ in order.append("other's observer") }
      promise.await { _ in
        order.append("lone observer")
        if otherFirst { other.succeed(1) }
        promise.await { _ in order.append("added from inside") }
        if !otherFirst { other.succeed(1) }
      }
      promise.succeed(0)
      let queuedLater = otherFirst ? "added from inside" : "other's observer"
      let queuedEarlier = otherFirst ? "other's observer" : "added from inside"
      #expect(order.values == ["lone observer", queuedEarlier, queuedLater])
    }
  }

  @Test("2: thenAsync adopting a promise whose delivery is under way on another thread settles after it")
  func adoptionJoinsDeliveryUnderWay() async {
    // Observer 1 of `inner` runs on thread B and lets thread A adopt `inner`, then waits until A's chain
    // has returned. Adopting is observing: the adopting promise settles after observer 1, on B.
    let inner = ResultPromise<Int, TestError>()
    let order = Log<String>()
    let adopt = DispatchSemaphore(value: 0)
    let adopted = DispatchSemaphore(value: 0)
    inner.await { _ in
      order.append("1 begins")
      adopt.signal()
      adopted.wait()
      order.append("1 ends")
    }
    let registrar = Thread {
      adopt.wait()
      ResultPromise<Int, TestError>(value: 0)
        .thenAsync { _ in inner }
        .await { order.append("adopting promise settled with \($0)") }
      order.append("A's chain returned")
      adopted.signal()
    }
    registrar.start()
    await onSmallStack { inner.succeed(7) }
    #expect(
      order.values == [
        "1 begins", "A's chain returned", "1 ends", "adopting promise settled with success(7)",
      ])
  }

  // MARK: 4. No lock held while user code runs

  @Test("4: observers may register observers, read state and resolve promises without deadlock")
  func reentrantCallbacksDoNotDeadlock() {
    let promise = ResultPromise<Int, TestError>()
    let other = ResultPromise<Int, TestError>()
    let seen = Log<String>()
    promise.await { result in
      seen.append("pending \(promise.isPending)")
      promise.await { _ in seen.append("nested observer") }
      #expect(!promise.fulfil(with: .success(99)))
      other.fulfil(with: result)
      _ = promise.map { $0 + 1 }.then { .success($0 * 2) }
    }
    other.await { seen.append("other \($0)") }
    promise.succeed(1)
    #expect(seen.values == ["pending false", "nested observer", "other success(1)"])
  }

  // MARK: 7. Broken promises are reported

  struct DroppedMarker: Sendable {}
  struct QuietMarker: Sendable {}
  struct ChainMarker: Sendable {}
  struct HookMarker: Sendable {}

  @Test("7: a user-created promise dropped while pending with observers is reported once")
  func brokenPromiseReported() {
    BrokenPromiseReports.install()
    do {
      let promise = ResultPromise<DroppedMarker, TestError>()
      promise.await { _ in }
      promise.await { _ in }
    }
    let reports = BrokenPromiseReports.mentioning("DroppedMarker")
    #expect(reports.count == 1)
    #expect(reports.first?.value == 1)
    #expect(reports.first?.key.contains("2 observers") == true)
  }

  @Test("7: promises without observers, settled ones and ones from init(_:) with a result are not reported")
  func quietPromisesNotReported() {
    BrokenPromiseReports.install()
    do {
      _ = ResultPromise<QuietMarker, TestError>()
      let settled = ResultPromise<QuietMarker, TestError>()
      settled.await { _ in }
      settled.succeed(QuietMarker())
      ResultPromise<QuietMarker, TestError>(value: QuietMarker()).await { _ in }
    }
    #expect(BrokenPromiseReports.mentioning("QuietMarker").isEmpty)
  }

  @Test("7: dropping a long pending chain reports once, for its root")
  func chainReportsOnce() {
    BrokenPromiseReports.install()
    do {
      let root = ResultPromise<ChainMarker, TestError>()
      var tail = root
      for _ in 0..<1_000 { tail = tail.map { $0 } }
      tail.await { _ in }
    }
    #expect(BrokenPromiseReports.mentioning("ChainMarker").values.reduce(0, +) == 1)
  }

  struct UncalledFulfilMarker: Sendable {}
  struct AwaitedUncalledMarker: Sendable {}

  @Test(
    "7: a fulfil function released uncalled while its promise is still held is reported, once per promise")
  func droppedFulfilReported() {
    BrokenPromiseReports.install()
    do {
      var fulfil: (@Sendable (Result<UncalledFulfilMarker, TestError>) -> Void)?
      let promise = ResultPromise<UncalledFulfilMarker, TestError> { fulfil = $0 }
      let line = #line - 1
      promise.await { _ in }
      #expect(BrokenPromiseReports.mentioning("UncalledFulfilMarker").isEmpty)
      #expect(fulfil != nil)
      fulfil = nil  // the API drops its completion handler without calling it
      let reports = BrokenPromiseReports.mentioning("UncalledFulfilMarker")
      #expect(reports.count == 1)
      #expect(reports.keys.first?.contains("fulfil function was released uncalled") == true)
      #if DEBUG
        #expect(reports.keys.first?.contains("SemanticsTests.swift:\(line)") == true)
      #endif
    }
    // The promise itself is gone now, pending with an observer: it does not report a second time.
    #expect(BrokenPromiseReports.mentioning("UncalledFulfilMarker").values.reduce(0, +) == 1)
  }

  /// A completion-handler API that keeps the handler and later drops it without calling it.
  final class ForgetfulAPI: Sendable {
    private let handler = Locked<(@Sendable (Result<AwaitedUncalledMarker, TestError>) -> Void)?>(nil)
    let received = DispatchSemaphore(value: 0)
    func load(completion: @escaping @Sendable (Result<AwaitedUncalledMarker, TestError>) -> Void) {
      handler.withLock { $0 = completion }
      received.signal()
    }
    func forget() {
      let dropped = handler.withLock { $0.take() }
      _ = dropped  // released here, outside the lock
    }
  }

  @Test("7: a task awaiting a promise whose completion handler is dropped uncalled is told, not left silent")
  func awaitedPromiseWithDroppedFulfilReported() async {
    BrokenPromiseReports.install()
    let api = ForgetfulAPI()
    let waiter = Task {
      try await ResultPromise { done in api.load(completion: done) }.resultAbandoningOnCancel()
    }
    await Task.detached { api.received.wait() }.value
    #expect(BrokenPromiseReports.mentioning("AwaitedUncalledMarker").isEmpty)
    api.forget()
    #expect(BrokenPromiseReports.mentioning("AwaitedUncalledMarker").values.reduce(0, +) == 1)
    waiter.cancel()
    _ = await waiter.result
    #expect(BrokenPromiseReports.mentioning("AwaitedUncalledMarker").values.reduce(0, +) == 1)
  }

  struct LocatedMarker: Sendable {}

  @Test("7: in debug builds the report names the file and line of the call that made the promise")
  func brokenPromiseNamesItsOrigin() {
    BrokenPromiseReports.install()
    var lines: [Int] = []
    do {
      let pending = ResultPromise<LocatedMarker, TestError>()
      lines.append(#line - 1)
      let wrapping = ResultPromise<LocatedMarker, AppError> { _ in }
      lines.append(#line - 1)
      pending.await { _ in }
      wrapping.await { _ in }
    }
    let reports = BrokenPromiseReports.mentioning("LocatedMarker").keys.sorted()
    #if DEBUG
      let file = "ResultPromiseTests/SemanticsTests.swift"
      #expect(
        reports == [
          "ResultPromise<LocatedMarker, AppError> made at \(file):\(lines[1]) is pending, but its fulfil "
            + "function was released uncalled, so it can never settle (0 observers waiting).",
          "ResultPromise<LocatedMarker, TestError> made at \(file):\(lines[0]) was deallocated while pending; "
            + "its 1 observer will never be called.",
        ])
    #else
      #expect(reports.count == 2)
      #expect(reports.allSatisfy { !$0.contains(" made at ") })
    #endif
  }

  struct SelfAdoptionMarker: Sendable {}

  @Test("7: a promise told to adopt itself by thenAsync is reported, and nothing leaks")
  func selfAdoptionReported() {
    BrokenPromiseReports.install()
    weak var weakAdopter: ResultPromise<SelfAdoptionMarker, TestError>?
    do {
      let root = ResultPromise<Int, TestError>()
      let adopter = Log<ResultPromise<SelfAdoptionMarker, TestError>>()
      let chained = root.thenAsync { _ in adopter.values[0] }  // returns the very promise it settles
      adopter.append(chained)
      weakAdopter = chained
      root.succeed(1)
      #expect(chained.isPending)
    }
    let reports = BrokenPromiseReports.mentioning("SelfAdoptionMarker")
    #expect(reports.count == 1)
    #expect(reports.keys.first?.contains("adopt itself") == true)
    #expect(weakAdopter == nil, "the promise must not observe itself, which would keep it alive forever")
  }

  /// The two tests that replace the process-wide broken-promise handler, one after the other: run at the
  /// same time, one would replace the handler that the other is watching (semantics 4 and 7).
  @Suite("The broken-promise handler", .serialized)
  struct Handler {
    /// Sets the broken-promise handler back to `previous` when released: a "scoped override".
    final class ScopedHandler: Sendable {
      let previous: (@Sendable (String) -> Void)?
      init(previous: (@Sendable (String) -> Void)?) { self.previous = previous }
      deinit { PromiseDiagnostics.brokenPromiseHandler = previous }
    }

    @Test(
      "4: replacing the handler releases the old one outside the lock, so what it held may set the handler")
    func replacedHandlerIsReleasedOutsideTheLock() {
      BrokenPromiseReports.install()
      let installed = PromiseDiagnostics.brokenPromiseHandler
      let finished = DispatchSemaphore(value: 0)
      Thread {
        do {
          let scope = ScopedHandler(previous: installed)
          PromiseDiagnostics.brokenPromiseHandler = { message in
            _ = scope
            installed?(message)
          }
        }
        // Releases the closure above and with it `scope`, whose deinit sets the handler back.
        PromiseDiagnostics.brokenPromiseHandler = { message in installed?(message) }
        finished.signal()
      }.start()
      #expect(finished.wait(timeout: .now() + 10) == .success, "setting the handler deadlocked")
    }

    @Test("7: the hook can be replaced and restored")
    func hookIsSettable() {
      BrokenPromiseReports.install()
      let installed = PromiseDiagnostics.brokenPromiseHandler
      defer { PromiseDiagnostics.brokenPromiseHandler = installed }
      let seen = Log<String>()
      PromiseDiagnostics.brokenPromiseHandler = { message in
        seen.append(message)
        installed?(message)
      }
      do {
        let promise = ResultPromise<HookMarker, AppError> { _ in }
        promise.await { _ in }
      }
      #expect(seen.values.contains { $0.contains("ResultPromise<HookMarker, AppError>") })
    }
  }

  // MARK: 10. Thread-safe

  @Test("10: fulfil, await and isPending from many threads at once settle once and call each observer once")
  func concurrentCallsAreSafe() {
    let promise = ResultPromise<Int, TestError>()
    let calls = Counter()
    let wins = Counter()
    DispatchQueue.concurrentPerform(iterations: 200) { index in
      promise.await { _ in calls.increment() }
      _ = promise.isPending
      if index % 10 == 0, promise.succeed(index) { wins.increment() }
    }
    #expect(wins.value == 1)
    #expect(calls.value == 200)
  }
}

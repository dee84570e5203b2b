import Dispatch
import Foundation
import ResultPromise
import Testing

/// A model object that is not `Sendable`, as Core Data objects and mutable model classes are not.
final class Model {
  var name: String
  var revisions = 0
  init(name: String) { self.name = name }
}

/// Whether the caller runs on the main queue (or on the main thread with the main queue current).
private let mainQueueKey: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()
func isOnMainQueue() -> Bool { DispatchQueue.getSpecific(key: mainQueueKey) == true }

/// Runs `body` on a new thread and blocks the caller until it has finished, so that anything `body` sends
/// to the main queue cannot run before this returns.
func onOtherThreadBlocking(_ body: @escaping @Sendable () -> Void) {
  let done = DispatchSemaphore(value: 0)
  Thread {
    body()
    done.signal()
  }.start()
  done.wait()
}

/// Waits on the main actor until `condition` holds, letting the main queue run meanwhile.
@MainActor func waitOnMainActor(until condition: @MainActor () -> Bool) async {
  while !condition() { await Task.yield() }
}

@Suite("Main actor: onMainActor and MainActorPromise")
@MainActor struct MainActorPromiseTests {
  @Test("a closure runs synchronously when the promise settles on the main actor")
  func synchronousWhenSettledOnMainActor() {
    let promise = ResultPromise<Int, TestError>()
    var seen: [Int] = []
    promise.onMainActor.await { seen.append((try? $0.get()) ?? -1) }
    #expect(seen.isEmpty)
    promise.succeed(7)
    #expect(seen == [7])
  }

  @Test("a closure added on the main actor to a settled promise runs before the call returns")
  func synchronousWhenAlreadySettled() {
    let model = Model(name: "Ada")
    var names: [String] = []
    ResultPromise<Model, TestError>(value: model).onMainActor
      .map { $0.name }
      .onSuccess { names.append($0) }
    #expect(names == ["Ada"])
  }

  @Test("a promise settled on another thread delivers by one hop to the main queue, not on that thread")
  func hopWhenSettledElsewhere() async {
    let promise = ResultPromise<Int, TestError>()
    var runs: [Bool] = []
    promise.onMainActor.await { _ in runs.append(isOnMainQueue()) }
    onOtherThreadBlocking { promise.succeed(1) }
    #expect(runs.isEmpty, "the closure must wait for the main queue, which this test is holding")
    await waitOnMainActor { !runs.isEmpty }
    #expect(runs == [true])
  }

  @Test("closures of one promise keep their order across a hop, also one added while the hop waits")
  func orderAcrossHops() async {
    let promise = ResultPromise<Int, TestError>()
    var order: [String] = []
    promise.onMainActor.await { _ in order.append("A") }
    promise.onMainActor.map { $0 }.await { _ in order.append("A'") }
    promise.onMainActor.await { _ in order.append("B") }
    onOtherThreadBlocking { promise.succeed(1) }
    // Settled, its hops waiting: this one must queue behind them, not run now.
    promise.onMainActor.await { _ in order.append("C") }
    #expect(order.isEmpty)
    await waitOnMainActor { order.count == 4 }
    #expect(order == ["A", "A'", "B", "C"])
    // With no hop waiting any more, a closure on the settled promise runs at once again.
    promise.onMainActor.await { _ in order.append("D") }
    #expect(order.last == "D")
  }

  @Test(
    "a closure added on the main actor while a hop is waiting runs after it, whatever the settling thread does next"
  )
  func closureAddedWhileHopWaitsRunsAfterIt() async {
    let promise = ResultPromise<Int, TestError>()
    let busy = ResultPromise<Void, Never>()
    var order: [String] = []
    promise.onMainActor.await { _ in order.append("first") }
    let hopMade = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    // The settling thread delivers `promise` (its closure hops) and then stays busy inside a callback of
    // another promise, with the main actor free: the hop must already be on its way.
    busy.await { _ in
      hopMade.signal()
      release.wait()
    }
    let settler = Thread {
      ResultPromise<Void, Never>(value: ()).await { _ in
        promise.succeed(1)
        busy.succeed(())
      }
    }
    settler.start()
    hopMade.wait()
    #expect(!promise.isPending)
    promise.onMainActor.await { _ in order.append("second") }  // added on the main actor, hop waiting
    await waitOnMainActor { !order.isEmpty }
    release.signal()
    await waitOnMainActor { order.count == 2 }
    #expect(order == ["first", "second"])
  }

  @Test("work set off inside a main-actor closure is queued behind it, first in first out")
  func reentrancyIsFIFO() {
    let first = ResultPromise<Int, TestError>()
    let second = ResultPromise<Int, TestError>()
    var log: [String] = []
    second.onMainActor.await { _ in log.append("second") }
    first.onMainActor.await { _ in
      log.append("first begins")
      #expect(second.succeed(2))
      log.append("first ends")
    }
    first.onMainActor.await { _ in log.append("first, next observer") }
    first.succeed(1)
    #expect(log == ["first begins", "first ends", "first, next observer", "second"])
  }

  @Test("closures may capture non-Sendable objects and main-actor state, and chain through every operator")
  func everyOperatorOnNonSendableValues() async throws {
    var steps: [String] = []
    // The one way to settle a promise of a non-Sendable value from another thread: `done` takes it `sending`.
    let promise = ResultPromise<Model, TestError> { done in
      DispatchQueue.global().async { done(.success(Model(name: "ada"))) }
    }
    let chained = promise.onMainActor
      .then { model -> Result<Model, TestError> in
        model.revisions += 1
        return .success(model)
      }
      .thenAsync { model in ResultPromise(value: model) }
      .map { model in model.name.capitalized }
      .map { (name) throws(TestError) -> String in
        guard !name.isEmpty else { throw .boom }
        return name + "!"
      }
      .then { _ in Result<String, TestError>.failure(.boom) }
      .mapError { _ in AppError.offline }
      .recover { _ in Result<String, AppError>.success("recovered") }
      .then { _ in Result<String, AppError>.failure(.offline) }
      .recoverAsync { _ in ResultPromise<String, TestError>(value: "adopted") }
      .always { _ in steps.append("always") }
      .onSuccess { steps.append("success \($0)") }
      .onFailure { _ in steps.append("failure") }
    #expect(try await chained.value == "adopted")
    #expect(steps == ["always", "success adopted"])
  }

  @Test("thenAsync and recoverAsync closures may return a main-actor view, single- or multi-statement")
  func asyncStepsReturningViews() async {
    let band = Model(name: "ada")
    var log: [String] = []
    let renamed = ResultPromise<Model, TestError>(value: band).onMainActor
      .thenAsync { model in
        log.append("renaming")
        return ResultPromise<Model, TestError>(value: model).onMainActor.map { model in
          model.name = "Ada"
          return model
        }
      }
      .thenAsync { model in ResultPromise<Int, TestError>(value: model.name.count).onMainActor }
      .then { _ in Result<Int, TestError>.failure(.boom) }
      .recoverAsync { error in ResultPromise<Int, AppError>(value: -1).onMainActor.map { $0 * 2 } }
      .thenAsync { value in ResultPromise<Int, AppError>(value: value) }  // a plain promise still works
    #expect(await renamed.result == .success(-2))
    #expect(band.name == "Ada")
    #expect(log == ["renaming"])
  }

  @Test("value and result await on the main actor; a promise that cannot fail needs no try")
  func awaitingFromMainActor() async {
    let failing = ResultPromise<Model, TestError> { done in
      DispatchQueue.global().async { done(.failure(.other(3))) }
    }
    #expect(await failing.onMainActor.result.map(\.name) == .failure(.other(3)))
    let never = ResultPromise<Int, Never>()
    DispatchQueue.global().async { never.succeed(5) }
    #expect(await never.onMainActor.value == 5)
  }

  @Test(
    "a cancelled main-actor task stops waiting with CancellationError; without cancellation it gets the value"
  )
  func abandoningOnCancel() async throws {
    let pending = ResultPromise<Model, TestError>()
    let waiter = Task { @MainActor in try await pending.onMainActor.valueAbandoningOnCancel().name }
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    #expect(pending.isPending)
    let later = ResultPromise<Model, TestError> { done in
      DispatchQueue.global().async { done(.success(Model(name: "ada"))) }
    }
    #expect(try await later.onMainActor.valueAbandoningOnCancel().name == "ada")
    #expect(try await later.onMainActor.resultAbandoningOnCancel().map(\.name) == .success("ada"))
  }

  @Test(
    "a task awaiting the view of a promise settled elsewhere resumes after the view's closures waiting to hop"
  )
  func awaitingTaskKeepsOrderWithHops() async throws {
    for abandoning in [false, true] {
      let promise = ResultPromise<Int, TestError>()
      var order: [String] = []
      promise.onMainActor.await { _ in order.append("closure") }
      onOtherThreadBlocking { promise.succeed(1) }  // the closure's hop waits: this test holds the main actor
      let value =
        abandoning
        ? try await promise.onMainActor.valueAbandoningOnCancel() : try await promise.onMainActor.value
      order.append("task")
      #expect(value == 1)
      #expect(order == ["closure", "task"])
    }
  }

  @Test("recover keeps the error type when the closure does not name one")
  func recoverKeepsErrorType() async {
    let remote = ResultPromise<Int, TestError>(error: .boom)
    var logged: [TestError] = []
    let view = remote.onMainActor.recover { error in
      logged.append(error)
      return .success(0)
    }
    #expect(type(of: view) == MainActorPromise<Int, TestError>.self)
    #expect(await view.result == .success(0))
    #expect(logged == [.boom])
  }

  @Test("every main-actor closure runs exactly once when settles race on many threads", arguments: [0, 1])
  func exactlyOnceUnderRacingSettles(settledOnMainToo: Int) async {
    let trials = 300
    var runs = Array(repeating: 0, count: trials)
    for trial in 0..<trials {
      let promise = ResultPromise<Int, TestError>()
      promise.onMainActor.map { $0 + 1 }.await { _ in runs[trial] += 1 }
      promise.onMainActor.await { _ in runs[trial] += 1 }
      DispatchQueue.concurrentPerform(iterations: 4) { promise.succeed($0) }
      if settledOnMainToo == 1 { promise.succeed(99) }
    }
    await waitOnMainActor { runs.allSatisfy { $0 == 2 } }
    #expect(runs == Array(repeating: 2, count: trials))
  }

  @Test("a chain's closures are released once they have run, and a view keeps nothing alive")
  func noLeaks() async {
    weak var captured: Tracked?
    weak var root: ResultPromise<Int, TestError>?
    var done = false
    do {
      let tracked = Tracked()
      captured = tracked
      let promise = ResultPromise<Int, TestError>()
      root = promise
      promise.onMainActor.map { value in
        _ = tracked
        return value
      }.await { _ in done = true }
      onOtherThreadBlocking { promise.succeed(1) }
    }
    await waitOnMainActor { done }
    // The hop's block may still be finishing (letting go of what it held) when this task resumes: wait for it,
    // bounded, so that a leak still fails. One `Task.yield()` was once not enough, under ThreadSanitizer with
    // CI's other checks beside.
    let deadline = ContinuousClock.now + .seconds(10)
    while captured != nil || root != nil, ContinuousClock.now < deadline { await Task.yield() }
    #expect(captured == nil)
    #expect(root == nil)
  }

  struct DroppedOnMainActorMarker: Sendable {}

  @Test("a pending promise with main-actor observers is released when dropped, and reported as broken")
  func droppedPendingPromiseIsReleased() {
    BrokenPromiseReports.install()
    weak var weakPromise: ResultPromise<DroppedOnMainActorMarker, TestError>?
    do {
      let promise = ResultPromise<DroppedOnMainActorMarker, TestError>()
      weakPromise = promise
      promise.onMainActor.map { _ in 1 }.await { _ in }
    }
    #expect(weakPromise == nil)
    #expect(BrokenPromiseReports.mentioning("DroppedOnMainActorMarker").count == 1)
  }
}

extension MainActorPromiseTests {
  @Test("setFailureType(to:) and abandoningOnCancel(with:) on the view: the caller that left hears at once")
  func viewSetsFailureTypeAndLeaves() {
    let stops = Counter()
    let download = ResultPromise<Int, Never> { done, onCancel in
      onCancel {
        stops.increment()
        done(.success(0))
      }
    }
    var (leaving, staying): ([Result<Int, TestError>], [Result<Int, TestError>]) = ([], [])
    let first = download.onMainActor.setFailureType(to: TestError.self).abandoningOnCancel(with: .other(1))
    let second = download.onMainActor.setFailureType(to: TestError.self).abandoningOnCancel(with: .other(2))
    first.await { leaving.append($0) }
    second.await { staying.append($0) }
    first.cancel()
    #expect(leaving == [.failure(.other(1))], "at once, on the main actor")
    #expect(stops.value == 0 && staying.isEmpty)
    download.succeed(7)
    #expect(staying == [.success(7)])
    #expect(leaving == [.failure(.other(1))])
    second.map { $0 + 1 }.cancel()
    #expect(stops.value == 0, "the download has settled: nothing to stop")
  }
}

extension LongChains {
  /// Long main-actor chains: one at a time with the other long-chain tests.
  @Suite("Main actor at scale")
  @MainActor struct MainActorAtScaleTests {
    @Test("a long main-actor chain settled on the main actor resolves in constant stack depth")
    func millionStepsSettledOnMainActor() {
      let root = ResultPromise<Int, TestError>()
      var tail = root.onMainActor
      for _ in 0..<LongChains.length { tail = tail.map { $0 + 1 } }
      var result: Int?
      tail.await { result = try? $0.get() }
      root.succeed(0)
      #expect(result == LongChains.length)
    }

    @Test("a long main-actor chain settled off the main actor resolves in constant stack depth")
    func millionStepsSettledElsewhere() async {
      let root = ResultPromise<Int, TestError>()
      var tail = root.onMainActor
      for _ in 0..<LongChains.length { tail = tail.then { .success($0 + 1) } }
      var result: Int?
      tail.await { result = try? $0.get() }
      onOtherThreadBlocking { root.succeed(0) }
      await waitOnMainActor { result != nil }
      #expect(result == LongChains.length)
    }

    @Test("a long main-actor chain of validate, compactMap and alwaysAsync resolves in constant stack depth")
    func millionCheckedStepsOnMainActor() {
      let root = ResultPromise<Int, TestError>()
      var tail = root.onMainActor
      for index in 0..<LongChains.length {
        switch index % 3 {
        case 0: tail = tail.validate(else: .boom) { $0 >= 0 }.map { $0 + 1 }
        case 1: tail = tail.compactMap(else: .boom) { $0 + 1 }
        default: tail = tail.alwaysAsync { _ in ResultPromise(value: ()) }.map { $0 + 1 }
        }
      }
      var result: Int?
      tail.await { result = try? $0.get() }
      root.succeed(0)
      #expect(result == LongChains.length)
    }
  }
}

extension MainActorPromiseTests {
  @Test("settledResult on the view is exact for a non-Sendable value while its hop to the main actor waits")
  func settledResultOnTheView() async {
    let fulfils = Log<@Sendable (sending Result<Model, TestError>) -> Void>()
    let view = ResultPromise<Model, TestError> { done in fulfils.append(done) }.onMainActor
    var delivered: [String] = []
    view.map(\.name).await { delivered.append((try? $0.get()) ?? "failed") }
    #expect(view.settledResult == nil)
    onOtherThreadBlocking { fulfils.values.first?(.success(Model(name: "ada"))) }
    // The view's closure has not run (its hop waits for this main-actor code), but the outcome is there.
    #expect(delivered.isEmpty)
    #expect(view.settledResult.map { (try? $0.get().name) ?? "failed" } == "ada")
    await waitOnMainActor { !delivered.isEmpty }
    #expect(delivered == ["ada"])
  }
}

extension MainActorPromiseTests {
  @Test(
    "the view's validate and compactMap check on the main actor, evaluating the failure only as the outcome")
  func viewValidateAndCompactMap() async {
    var evaluated = 0
    func failure(_ code: Int) -> TestError {
      evaluated += 1
      return .other(code)
    }
    var seen: [Result<String, TestError>] = []
    let fulfils = Log<@Sendable (sending Result<Model, TestError>) -> Void>()
    let input = ResultPromise<Model, TestError> { done in fulfils.append(done) }
    input.onMainActor
      .validate(else: failure(1)) { $0.revisions == 0 }
      .compactMap(else: failure(2)) { $0.name.isEmpty ? nil : $0.name }
      .map { $0.uppercased() }
      .await { seen.append($0) }
    input.onMainActor.validate(else: failure(3)) { $0.revisions > 0 }.map(\.name).await { seen.append($0) }
    input.onMainActor.compactMap(else: failure(4)) { _ -> String? in nil }.await { seen.append($0) }
    #expect(evaluated == 0)
    onOtherThreadBlocking { fulfils.values.first?(.success(Model(name: "ada"))) }
    await waitOnMainActor { seen.count == 3 }
    #expect(seen == [.success("ADA"), .failure(.other(3)), .failure(.other(4))])
    #expect(evaluated == 2)
    let failed = ResultPromise<Model, TestError>(error: .boom).onMainActor.validate(else: failure(5)) { _ in
      false
    }
    #expect(failed.settledResult.map { $0.map(\.name) } == .failure(.boom))
    #expect(evaluated == 2, "a failure passes on without evaluating")
  }

  @Test("the view's alwaysAsync waits for its cleanup on either outcome, and no request reaches the cleanup")
  func viewAlwaysAsync() async {
    let model = Model(name: "ada")
    var cleaned: [String] = []
    let cleanup = ResultPromise<Void, Never>()
    let input = ResultPromise<Model, TestError>()
    let after = input.onMainActor.alwaysAsync { result in
      cleaned.append((try? result.get().name) ?? "failed")
      return cleanup
    }
    var seen: [String] = []
    after.map(\.name).await { seen.append((try? $0.get()) ?? "failed") }
    input.succeed(model)
    #expect(cleaned == ["ada"])
    #expect(after.promise.isPending, "the result waits for the cleanup")
    onOtherThreadBlocking { cleanup.succeed(()) }
    await waitOnMainActor { !seen.isEmpty }
    #expect(seen == ["ada"])

    let stops = Counter()
    let closing = Locked<(@Sendable (Result<Void, Never>) -> Void)?>(nil)
    let failing = ResultPromise<Model, TestError>(error: .boom).onMainActor.alwaysAsync { _ in
      ResultPromise<Void, Never> { done, onCancel in
        closing.withLock { $0 = done }
        onCancel { stops.increment() }
      }
    }
    failing.cancel()
    #expect(stops.value == 0, "the cleanup is shielded from the request")
    closing.withLock { $0 }?(.success(()))
    #expect(failing.settledResult.map { $0.map(\.name) } == .failure(.boom), "and the outcome is the input's")
  }

  @Test("debugDescription names the type and the state, with the value only on the main actor")
  func debugDescriptions() async {
    let pending = ResultPromise<Int, TestError>()
    #expect(String(reflecting: pending) == "ResultPromise<Int, TestError>(pending)")
    #expect(
      String(reflecting: pending.map { $0 + 1 }) == "ResultPromise<Int, TestError>(pending)", "a step too")
    let failed = ResultPromise<Int, TestError>(error: .other(3))
    #expect(
      String(reflecting: failed)
        == "ResultPromise<Int, TestError>(failure(ResultPromiseTests.TestError.other(3)))")
    #expect(failed.settledResult == .failure(.other(3)))  // describing it does not hear its failure
    let model = ResultPromise<Model, TestError>(value: Model(name: "ada"))
    #expect(
      String(reflecting: model).hasPrefix("ResultPromise<Model, TestError>(success(ResultPromiseTests.Model"))
    #expect(
      String(reflecting: model.onMainActor).hasPrefix(
        "MainActorPromise<Model, TestError>(success(ResultPromiseTests.Model"))
    #expect(String(reflecting: pending.onMainActor) == "MainActorPromise<Int, TestError>(pending)")
    let offMain = Log<String>()
    let value = ResultPromise<Int, TestError>(value: 42)
    onOtherThreadBlocking { offMain.append(String(reflecting: value)) }
    #expect(
      offMain.values == ["ResultPromise<Int, TestError>(success)"], "off the main actor, no value is read")
    #expect(String(reflecting: value) == "ResultPromise<Int, TestError>(success(42))")
    #expect("\(pending)" == "ResultPromise<Int, TestError>(pending)", "print and interpolation use it too")
  }
}

import Dispatch
import Foundation
import ResultPromise
import Testing

/// Semantics 1 and 10 under contention: `fulfil` racing `await`, `then` and other `fulfil`s across
/// threads, over many trials, with exact counts. CI also runs this suite under ThreadSanitizer.
@Suite("Stress")
struct StressTests {
  static let trials = TestSize.of(full: 10_000, quick: 2_000)

  @Test("fulfil racing await across threads calls every observer exactly once")
  func fulfilRacesAwait() {
    let calls = Counter()
    let wrongValues = Counter()
    for _ in 0..<Self.trials {
      let promise = ResultPromise<Int, TestError>()
      DispatchQueue.concurrentPerform(iterations: 3) { worker in
        if worker == 0 {
          promise.succeed(7)
        } else {
          for _ in 0..<2 {
            promise.await { result in
              if result != .success(7) { wrongValues.increment() }
              calls.increment()
            }
          }
        }
      }
    }
    #expect(calls.value == Self.trials * 4)
    #expect(wrongValues.value == 0)
  }

  @Test("fulfil racing then and map across threads settles every derived promise exactly once")
  func fulfilRacesThen() {
    let calls = Counter()
    let sum = Counter()
    for trial in 0..<Self.trials {
      let promise = ResultPromise<Int, TestError>()
      DispatchQueue.concurrentPerform(iterations: 2) { worker in
        if worker == 0 {
          promise.succeed(trial)
        } else {
          promise.then { .success($0 + 1) }.map { $0 - trial }.await { result in
            if case .success(let one) = result { for _ in 0..<one { sum.increment() } }
            calls.increment()
          }
        }
      }
    }
    #expect(calls.value == Self.trials)
    #expect(sum.value == Self.trials)
  }

  @Test("competing fulfils from several threads: exactly one wins and observers see its value")
  func competingFulfils() {
    let wins = Counter()
    let agreed = Counter()
    for _ in 0..<Self.trials {
      let promise = ResultPromise<Int, TestError>()
      let winner = Log<Int>()
      let seen = Log<Int>()
      promise.await { if case .success(let value) = $0 { seen.append(value) } }
      DispatchQueue.concurrentPerform(iterations: 4) { worker in
        if promise.succeed(worker) {
          wins.increment()
          winner.append(worker)
        }
      }
      if seen.values == winner.values { agreed.increment() }
    }
    #expect(wins.value == Self.trials)
    #expect(agreed.value == Self.trials)
  }

  @Test("thenAsync adopting a promise settled on another thread resolves exactly once per trial")
  func thenAsyncAcrossThreads() {
    let calls = Counter()
    for trial in 0..<Self.trials {
      let inner = ResultPromise<Int, TestError>()
      let outer = ResultPromise<Int, TestError>()
      DispatchQueue.concurrentPerform(iterations: 3) { worker in
        switch worker {
        case 0: inner.succeed(trial)
        case 1: outer.succeed(0)
        default:
          outer.thenAsync { _ in inner }.await { result in
            if result == .success(trial) { calls.increment() }
          }
        }
      }
    }
    #expect(calls.value == Self.trials)
  }

  @Test("alwaysAsync racing its input, its cleanup, a request and a description: the input's result, once")
  func alwaysAsyncAcrossThreads() {
    let calls = Counter()
    let heard = Counter()
    let oddDescriptions = Counter()
    for trial in 0..<Self.trials {
      let input = ResultPromise<Int, TestError>()
      let finish = Locked<(@Sendable (Result<Void, Never>) -> Void)?>(nil)
      let cleanup = ResultPromise<Void, Never> { done, onCancel in
        finish.withLock { $0 = done }
        onCancel { heard.increment() }  // work that would stop if asked
      }
      let after = input.alwaysAsync { _ in cleanup }
      after.await { result in
        if result == .success(trial) { calls.increment() }
      }
      DispatchQueue.concurrentPerform(iterations: 4) { worker in
        switch worker {
        case 0: input.succeed(trial)
        case 1: finish.withLock { $0 }?(.success(()))
        case 2: after.cancel()
        default:
          let text = String(reflecting: after)
          if text != "ResultPromise<Int, TestError>(pending)",
            text != "ResultPromise<Int, TestError>(success)"
          {
            oddDescriptions.increment()
          }
        }
      }
    }
    #expect(calls.value == Self.trials, "every trial ends with the input's result, once")
    #expect(heard.value == 0, "the cleanup is shielded: no request reaches it")
    #expect(oddDescriptions.value == 0, "off the main actor: pending or success, never the value")
  }

  @Test("many threads registering on one promise while it settles: each observer runs once")
  func manyObserversOneSettle() {
    let calls = Counter()
    let promise = ResultPromise<Int, TestError>()
    DispatchQueue.concurrentPerform(iterations: 8) { worker in
      for index in 0..<(Self.trials / 8) {
        promise.await { _ in calls.increment() }
        if worker == 3, index == Self.trials / 16 { promise.succeed(1) }
      }
    }
    #expect(calls.value == Self.trials / 8 * 8)
  }

  @Test("registration racing settlement keeps every promise's observers in order and never overlapping")
  func registrationRacesSettlementInOrder() {
    let trials = 2_000
    let misordered = Counter()
    let overlapping = Counter()
    let calls = Counter()
    for trial in 0..<trials {
      let promise = ResultPromise<Int, TestError>()
      // Each observer spins, so that the other thread registers while this delivery is under way.
      let observers = TrialObservers<Int>(calls: calls, overlapping: overlapping, spinning: 5_000)
      let order = observers.order
      let observe = observers.observe
      // A thread of its own (concurrentPerform may run both sides on one thread) settles the promise
      // somewhere within this thread's registrations, at a different point each trial.
      let settled = DispatchSemaphore(value: 0)
      Thread {
        spin(nanoseconds: UInt64(trial % 20) * 1_000)
        promise.succeed(1)
        settled.signal()
      }.start()
      do {
        // Plain observers and operator steps, which take a shortcut on a settled promise, alike.
        promise.await(observe(0))
        spin(nanoseconds: 4_000)
        promise.await(observe(1))
        spin(nanoseconds: 4_000)
        _ = promise.map { value in
          observe(2)(.success(value))
          return value
        }
        spin(nanoseconds: 4_000)
        _ = promise.always(observe(3))
        spin(nanoseconds: 4_000)
        promise.await(observe(4))
      }
      settled.wait()
      if order.values != [0, 1, 2, 3, 4] { misordered.increment() }
    }
    #expect(calls.value == trials * 5)
    #expect(misordered.value == 0)
    #expect(overlapping.value == 0)
  }

  @Test("a lone observer that adds observers while another thread adds more: each runs once, in order, alone")
  func loneObserverAddingWhileAnotherThreadAdds() {
    // The promise settles with one observer, which adds two more from inside (on the delivering thread)
    // while another thread adds three at varying moments: the short path for a lone observer, its
    // same-thread joiners and its cross-thread joiners, racing.
    let trials = 2_000
    let calls = Counter()
    let misordered = Counter()
    let overlapping = Counter()
    for trial in 0..<trials {
      let promise = ResultPromise<Int, TestError>()
      let observers = TrialObservers<String>(calls: calls, overlapping: overlapping, spinning: 2_000)
      let order = observers.order
      let observe = observers.observe
      promise.await { result in
        observe("lone")(result)
        promise.await(observe("inner 1"))
        spin(nanoseconds: 3_000)
        promise.await(observe("inner 2"))
      }
      let added = DispatchSemaphore(value: 0)
      Thread {
        spin(nanoseconds: UInt64(trial % 10) * 1_000)
        for index in 1...3 {
          promise.await(observe("outer \(index)"))
          spin(nanoseconds: 2_000)
        }
        added.signal()
      }.start()
      promise.succeed(1)
      added.wait()
      let values = order.values
      let inner = values.filter { $0.hasPrefix("inner") }
      let outer = values.filter { $0.hasPrefix("outer") }
      if values.first != "lone" || inner != ["inner 1", "inner 2"]
        || outer != ["outer 1", "outer 2", "outer 3"]
      {
        misordered.increment()
      }
    }
    #expect(calls.value == trials * 6)
    #expect(misordered.value == 0)
    #expect(overlapping.value == 0)
  }

  @Test("a main-actor closure added while the settling thread is busy after a hop runs after that hop")
  @MainActor func mainActorOrderWhileSettlingThreadIsBusy() async {
    let trials = 300
    var outOfOrder = 0
    for _ in 0..<trials {
      let promise = ResultPromise<Int, TestError>()
      let other = ResultPromise<Void, Never>()
      var order: [Int] = []
      promise.onMainActor.await { _ in order.append(1) }
      other.await { _ in usleep(2_000) }  // the settling thread works on for 2 ms
      DispatchQueue.global().async {
        // A completion handler, itself called back from a promise: settles `promise`, then `other`.
        ResultPromise<Void, Never>(value: ()).await { _ in
          promise.succeed(1)
          other.succeed(())
        }
      }
      try? await Task.sleep(nanoseconds: 1_000_000)
      promise.onMainActor.await { _ in order.append(2) }
      await waitOnMainActor { order.count == 2 }
      if order != [1, 2] { outOfOrder += 1 }
    }
    #expect(outOfOrder == 0)
  }

  @Test(
    "callers leaving while the shared promise settles on another thread: each hears once, the others run in order"
  )
  func withdrawalRacesSettlement() {
    let wrong = Counter()
    let evaluated = Counter()
    let failed = Counter()
    for trial in 0..<Self.trials {
      let shared = ResultPromise<Int, TestError>()
      let first = shared.abandoningOnCancel(with: counted(evaluated, .boom))  // the single-observer slot
      let order = Log<String>()
      shared.await { _ in order.append("a") }
      let second = shared.abandoningOnCancel(with: counted(evaluated, .boom))
      shared.await { _ in order.append("b") }
      let heard = Counter()
      for caller in [first, second] {
        caller.await { result in
          heard.increment()
          if result == .failure(.boom) {
            failed.increment()
          } else if result != .success(trial) {
            wrong.increment()
          }
        }
      }
      DispatchQueue.concurrentPerform(iterations: 3) { worker in
        switch worker {
        case 0: shared.succeed(trial)
        case 1: first.cancel()
        default: second.cancel()
        }
      }
      if heard.value != 2 || order.values != ["a", "b"] { wrong.increment() }
    }
    #expect(wrong.value == 0, "every caller hears once, and those who stay run once, in order")
    #expect(evaluated.value == failed.value, "a failure is evaluated only when it is the outcome")
  }

  @Test("a request made once the shared promise has settled, racing its delivery, never makes a caller leave")
  func lateRequestRacesDelivery() {
    let wrong = Counter()
    for trial in 0..<Self.trials {
      let shared = ResultPromise<Int, TestError>()
      let requested = Counter()
      // An earlier observer, which keeps the delivery busy until the request (100 µs at most).
      shared.await { _ in
        let start = DispatchTime.now().uptimeNanoseconds
        while requested.value == 0 && DispatchTime.now().uptimeNanoseconds - start < 100_000 {}
      }
      let caller = shared.abandoningOnCancel(with: .boom)
      DispatchQueue.concurrentPerform(iterations: 2) { worker in
        if worker == 0 {
          shared.succeed(trial)
        } else {
          while shared.isPending {}
          caller.cancel()
          requested.increment()
        }
      }
      if caller.settledResult != .success(trial) { wrong.increment() }
    }
    #expect(wrong.value == 0, "a request after the settlement decides nothing")
  }

  @Test("a request, a timer and a hand fulfil racing: a failure is evaluated only when it is the outcome")
  func failuresEvaluatedOnlyAsOutcomes() async {
    let evaluated = Counter()
    let failed = Counter()
    for trial in 0..<Self.trials {
      let abandoning = ResultPromise<Int, TestError>().abandoningOnCancel(with: counted(evaluated, .boom))
      let delayed = ResultPromise<Int, TestError>.after(
        .seconds(3_600), value: 0, ifCancelled: counted(evaluated, .boom))
      let timed = ResultPromise<Int, TestError>().timeout(.zero, failure: counted(evaluated, .boom))
      DispatchQueue.concurrentPerform(iterations: 2) { worker in
        for promise in [abandoning, delayed, timed] {
          if worker == 0 { promise.cancel() } else { promise.fulfil(with: .success(trial)) }
        }
      }
      for promise in [abandoning, delayed, timed] where await promise.result == .failure(.boom) {
        failed.increment()
      }
    }
    #expect(evaluated.value == failed.value, "evaluated exactly when it is the outcome")
  }

  @Test("a failure heard on one thread while another settles and releases the promise is never reported")
  func unheardFailureRacingRelease() {
    UnheardFailures.install()
    let heard = Counter()
    for _ in 0..<Self.trials {
      // One reference for each worker and none for this thread: whichever worker lets go last releases it.
      let promise = Unmanaged.passRetained(ResultPromise<Int, Dropped>())
      _ = promise.retain()
      DispatchQueue.concurrentPerform(iterations: 2) { worker in
        let mine = promise.takeRetainedValue()
        if worker == 0 {
          mine.fail(Dropped("stress.heard"))
        } else {
          mine.onFailure { _ in heard.increment() }
        }
      }
    }
    #expect(heard.value == Self.trials)
    #expect(UnheardFailures.messages("stress.heard").isEmpty)
  }

  @Test(
    "a failure that only onSuccess saw, settled and released across threads, is reported exactly once each")
  func unheardFailureReportedOnce() {
    UnheardFailures.install()
    for _ in 0..<Self.trials {
      let promise = Unmanaged.passRetained(ResultPromise<Int, Dropped>())
      _ = promise.retain()
      DispatchQueue.concurrentPerform(iterations: 2) { worker in
        let mine = promise.takeRetainedValue()
        if worker == 0 { mine.fail(Dropped("stress.unheard")) } else { mine.onSuccess { _ in } }
      }
    }
    #expect(UnheardFailures.messages("stress.unheard").count == Self.trials)
  }

  @Test("race and timeout deciding while their shared input settles on another thread: one outcome each")
  func combinatorsWithdrawWhileInputsSettle() async {
    let wrong = Counter()
    let evaluated = Counter()
    let timedOut = Counter()
    for trial in 0..<Self.trials {
      let shared = ResultPromise<Int, TestError>()
      let stayed = Counter()
      shared.await { _ in stayed.increment() }
      let other = ResultPromise<Int, TestError>()
      let raced = ResultPromise.race([shared, other])
      let timed = shared.timeout(DispatchTimeInterval.seconds(0), failure: counted(evaluated, .boom))
      let heard = Counter()
      raced.await { result in
        heard.increment()
        if result != .success(trial) && result != .success(-1) { wrong.increment() }
      }
      DispatchQueue.concurrentPerform(iterations: 2) { worker in
        if worker == 0 { shared.succeed(trial) } else { other.succeed(-1) }
      }
      if await timed.result == .failure(.boom) { timedOut.increment() }
      if heard.value != 1 || stayed.value != 1 { wrong.increment() }
    }
    #expect(wrong.value == 0, "each combinator settles once, and the observer that stays runs once")
    #expect(
      evaluated.value == timedOut.value, "the timeout's failure is evaluated only when it is the outcome")
  }

  @Test("SharedWork: one who comes as the last leaves joins the run or starts another, never a stopped one")
  func sharedWorkJoinerRacingTheLastLeaver() {
    let registry = SharedWork<Int, Int, TestError>()
    let (starts, stops, wrong) = (Counter(), Counter(), Counter())
    for trial in 0..<Self.trials {
      let running = Log<@Sendable (Result<Int, TestError>) -> Void>()
      let start = { @Sendable (_: Int) in
        starts.increment()
        return ResultPromise<Int, TestError> { done, onCancel in
          onCancel {
            stops.increment()
            done(.failure(.stopped))
          }
          running.append(done)
        }
      }
      let leaver = registry.promise(for: trial, leaving: .boom, start: start)
      leaver.onFailure { _ in }
      let joiner = Locked<ResultPromise<Int, TestError>?>(nil)
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        guard side == 1 else { return leaver.cancel() }
        let caller = registry.promise(for: trial, leaving: .boom, start: start)
        joiner.withLock { $0 = caller }
      }
      for done in running.values { done(.success(trial)) }
      if joiner.withLock({ $0?.settledResult }) != .success(trial) { wrong.increment() }
    }
    #expect(wrong.value == 0, "every joiner gets a run's value")
    #expect(stops.value == starts.value - Self.trials, "a second run starts exactly when the first stopped")
  }

  @Test("SharedWork: the last caller out and a dependent made elsewhere, leaving at once, stop the work once")
  func sharedWorkLastOutRacingADependentElsewhere() {
    let registry = SharedWork<Int, Int, TestError>()
    let wrong = Counter()
    for trial in 0..<Self.trials {
      let work = Work()
      let elsewhere = work.promise.map { $0 + 1 }
      let caller = registry.promise(for: trial, leaving: .boom) { _ in work.promise }
      caller.onFailure { _ in }
      elsewhere.onFailure { _ in }
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        if side == 0 { caller.cancel() } else { elsewhere.cancel() }
      }
      if work.requests != 1 || registry.isRunning(trial) || work.promise.isPending { wrong.increment() }
    }
    #expect(wrong.value == 0, "the work is asked to stop exactly once, when both have left")
  }
}

/// The observers of one trial: each records its name in `order`, counts itself in `calls`, counts in
/// `overlapping` if another is running at that moment, on any thread, and spins `spinning` nanoseconds.
struct TrialObservers<Name: Sendable>: Sendable {
  let order = Log<Name>()
  let running = Counter()
  let calls: Counter, overlapping: Counter, spinning: UInt64

  func observe(_ name: Name) -> @Sendable (Result<Int, TestError>) -> Void {
    { [self] _ in
      running.increment()
      if running.value > 1 { overlapping.increment() }
      order.append(name)
      calls.increment()
      spin(nanoseconds: spinning)
      running.decrement()
    }
  }
}

/// Busy-waits for about `nanoseconds`, to widen a race window without yielding the thread.
func spin(nanoseconds: UInt64) {
  let start = DispatchTime.now().uptimeNanoseconds
  while DispatchTime.now().uptimeNanoseconds - start < nanoseconds {}
}

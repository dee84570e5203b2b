import Dispatch
import ResultPromise
import Testing

/// Semantics 23: whoever stops waiting for a promise takes back what it registered there at once, so a
/// long-lived pending promise holds only the callers still waiting.
///
/// Each test of a way to leave makes many callers come to one pending shared promise and leave it, then drops
/// the shared promise: its broken-promise report counts the observers still registered, which must be only
/// the one that stays. The first caller comes before the one that stays, so that its observer is the shared
/// promise's first (the single-observer slot). Where the caller's own promise is what its observer held, a
/// weak reference to it must be `nil` once it has left.
@Suite("23: nothing stays behind")
struct WithdrawalTests {
  static let callers = TestSize.of(full: 100_000, quick: 10_000)

  // One marker type per way to leave: the broken-promise reports are told apart by type name.
  struct AbandonMarker: Sendable, Equatable {}
  struct TaskMarker: Sendable, Equatable {}
  struct TimeoutMarker: Sendable, Equatable {}
  struct RaceMarker: Sendable, Equatable {}
  struct AnyMarker: Sendable, Equatable {}
  struct AllMarker: Sendable, Equatable {}
  struct ZipMarker: Sendable, Equatable {}
  struct PumpMarker: Sendable, Equatable {}
  struct SharedWorkMarker: Sendable, Equatable {}
  struct ViewAbandonMarker: Sendable, Equatable {}
  struct ViewTaskMarker: Sendable, Equatable {}
  struct ViewTimeoutMarker: Sendable, Equatable {}

  /// Makes `callers` callers come to a pending shared promise and leave through `leave`, which returns the
  /// caller's own promise if its observer held it; then drops the shared promise and expects it to report
  /// exactly one waiting observer, the one that stayed.
  func expectNothingStaysBehind<Marker: Sendable>(
    _ marker: Marker.Type, callers: Int = callers, isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation,
    leave: (ResultPromise<Marker, TestError>) async -> (AnyObject & Sendable)?
  ) async {
    BrokenPromiseReports.install()
    var shared: ResultPromise<Marker, TestError>? = ResultPromise<Marker, TestError>()
    var left: [Watched] = []
    for caller in 0..<callers {
      if let promise = await leave(shared!) { left.append(Watched(promise)) }
      if caller == 0 { shared!.onFailure { _ in } }  // the observer that stays, after the first caller's
    }
    // Checked while the shared promise lives: a caller's promise may be held a moment longer by the thread
    // that settled it (a timer's), but not by the shared promise.
    await eventually("every caller that left is released", sourceLocation: sourceLocation) { [left] in
      left.allSatisfy(\.isReleased)
    }
    shared = nil
    let reports = BrokenPromiseReports.mentioning("<\(Marker.self), ")
    #expect(reports.count == 1, "\(reports)", sourceLocation: sourceLocation)
    #expect(
      reports.keys.first?.hasSuffix("its 1 observer will never be called.") == true, "\(reports)",
      sourceLocation: sourceLocation)
  }

  /// `caller`, once its failure has been read (a caller who drops it unread would be reported).
  func heardFailing<Value: Sendable>(
    _ caller: ResultPromise<Value, TestError>, sourceLocation: SourceLocation = #_sourceLocation
  ) -> ResultPromise<Value, TestError> {
    guard case .failure(.boom)? = caller.settledResult else {
      Issue.record("the caller did not fail with .boom", sourceLocation: sourceLocation)
      return caller
    }
    return caller
  }

  @Test("a caller of abandoningOnCancel whose request won leaves nothing on the shared promise")
  func abandoningOnCancel() async {
    await expectNothingStaysBehind(AbandonMarker.self) { shared in
      let caller = shared.abandoningOnCancel(with: .boom)
      caller.cancel()
      #expect(caller.settledResult.map { _ in () } != nil)
      return caller
    }
  }

  @Test("SharedWork: each caller the last out of its run leaves nothing on the promise start gave the run")
  func sharedWork() async {
    let registry = SharedWork<Int, SharedWorkMarker, TestError>()
    await expectNothingStaysBehind(SharedWorkMarker.self) { shared in
      let caller = registry.promise(for: 0, leaving: .boom) { _ in shared }
      caller.cancel()
      #expect(caller.settledResult.map { _ in () } != nil)
      return caller
    }
    #expect(!registry.isRunning(0))
  }

  @Test("a cancelled task awaiting valueAbandoningOnCancel leaves nothing on the shared promise")
  func taskBridge() async {
    await expectNothingStaysBehind(TaskMarker.self, callers: Self.callers / 10) { shared in
      let task = Task { try await shared.valueAbandoningOnCancel() }
      task.cancel()
      _ = await task.result
      return nil
    }
  }

  @Test("a timeout that fired leaves nothing on the shared promise")
  func timeout() async {
    await expectNothingStaysBehind(TimeoutMarker.self, callers: Self.callers / 10) { shared in
      let caller = shared.timeout(DispatchTimeInterval.seconds(0), failure: .boom)
      #expect(await caller.result == .failure(.boom))
      return caller
    }
  }

  @Test("race decided by another input leaves nothing on the shared promise")
  func race() async {
    await expectNothingStaysBehind(RaceMarker.self) { shared in
      ResultPromise.race([shared, ResultPromise(value: RaceMarker())])
    }
  }

  @Test("any decided by a success leaves nothing on the shared promise")
  func any() async {
    await expectNothingStaysBehind(AnyMarker.self) { shared in
      ResultPromise.any([shared, ResultPromise(value: AnyMarker())])
    }
  }

  @Test("all failed by another input leaves nothing on the shared promise")
  func all() async {
    await expectNothingStaysBehind(AllMarker.self) { shared in
      heardFailing(ResultPromise.all([shared, ResultPromise(error: .boom)]))
    }
  }

  @Test("zip failed by another input leaves nothing on the shared promise")
  func zip() async {
    await expectNothingStaysBehind(ZipMarker.self) { shared in
      heardFailing(ResultPromise.zip(shared, ResultPromise<Int, TestError>(error: .boom)))
    }
  }

  @Test("all(_:concurrently:) failed by another input leaves nothing on the shared promise")
  func allConcurrently() async {
    await expectNothingStaysBehind(PumpMarker.self) { shared in
      heardFailing(
        ResultPromise.all(
          [{ shared }, { ResultPromise<PumpMarker, TestError>(error: .boom) }], concurrently: 2))
    }
  }

  @Test("the view's callers who leave — abandoningOnCancel, a cancelled task, a timeout — leave nothing")
  @MainActor func mainActorView() async {
    await expectNothingStaysBehind(ViewAbandonMarker.self) { shared in
      let caller = shared.onMainActor.abandoningOnCancel(with: .boom)
      caller.cancel()
      return caller.promise
    }
    await expectNothingStaysBehind(ViewTaskMarker.self, callers: Self.callers / 10) { shared in
      let task = Task { @MainActor in try await shared.onMainActor.valueAbandoningOnCancel() }
      task.cancel()
      _ = await task.result
      return nil
    }
    await expectNothingStaysBehind(ViewTimeoutMarker.self, callers: Self.callers / 10) { shared in
      let caller = shared.onMainActor.timeout(DispatchTimeInterval.seconds(0), failure: .boom)
      _ = await caller.result
      return caller.promise
    }
  }

  @Test("a delay whose wait is ended by ifCancelled is released at once, not at its deadline")
  func delayIfCancelled() async {
    var stillHeld = 0
    for _ in 0..<1_000 {
      weak var left: ResultPromise<Int, TestError>?
      do {
        let caller = ResultPromise<Int, TestError>.after(.seconds(3_600), value: 1, ifCancelled: .boom)
        left = caller
        caller.cancel()
        #expect(caller.settledResult == .failure(.boom))
      }
      if left != nil { stillHeld += 1 }
    }
    #expect(stillHeld == 0)
  }

  /// Expects every object `watched` holds to be released within 200 milliseconds.
  func expectReleasedSoon(
    _ watched: [Watched], _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let deadline = ContinuousClock.now + .milliseconds(200)
    var released: Bool { watched.allSatisfy { $0.isReleased } }
    while !released && ContinuousClock.now < deadline { await Task.yield() }
    #expect(released, comment, sourceLocation: sourceLocation)
  }

  /// An error whose autoclosure holds `object`, to see when a timer lets its `failure` go.
  static func failure(holding object: Tracked) -> TestError {
    _ = object
    return .boom
  }

  @Test(
    "a timeout settled by hand lets go at once of its timer, its failure and itself: both forms, both views")
  func timeoutSettledByHand() async {
    typealias Make = @Sendable (ResultPromise<Int, TestError>, Tracked) async -> ResultPromise<Int, TestError>
    let forms: [(String, Make)] = [
      ("Duration", { shared, held in shared.timeout(.seconds(3_600), failure: Self.failure(holding: held)) }),
      (
        "Dispatch",
        { shared, held in
          shared.timeout(.seconds(3_600) as DispatchTimeInterval, failure: Self.failure(holding: held))
        }
      ),
      (
        "view, Duration",
        { shared, held in
          await MainActor.run {
            shared.onMainActor.timeout(.seconds(3_600), failure: Self.failure(holding: held)).promise
          }
        }
      ),
      (
        "view, Dispatch",
        { shared, held in
          await MainActor.run {
            shared.onMainActor.timeout(
              .seconds(3_600) as DispatchTimeInterval, failure: Self.failure(holding: held)
            ).promise
          }
        }
      ),
    ]
    for (form, make) in forms {
      let shared = ResultPromise<Int, TestError>()
      var held: Tracked? = Tracked()
      var caller: ResultPromise<Int, TestError>? = await make(shared, held!)
      let watched = [Watched(held!), Watched(caller!)]
      held = nil
      #expect(caller!.succeed(1))
      #expect(caller!.settledResult == .success(1))
      caller = nil
      await expectReleasedSoon(watched, "\(form): the timeout settled by hand is still held")
      shared.succeed(2)
    }
  }

  @Test("a delay with ifCancelled settled by hand lets go of itself at once: both forms")
  func delaySettledByHand() async {
    let forms: [(String, @Sendable (Tracked) -> ResultPromise<Int, TestError>)] = [
      (
        "Duration",
        { held in ResultPromise(value: 1).delay(.seconds(3_600), ifCancelled: Self.failure(holding: held)) }
      ),
      (
        "Dispatch",
        { held in
          ResultPromise(value: 1).delay(
            .seconds(3_600) as DispatchTimeInterval, ifCancelled: Self.failure(holding: held))
        }
      ),
    ]
    for (form, make) in forms {
      var held: Tracked? = Tracked()
      var caller: ResultPromise<Int, TestError>? = make(held!)
      let watched = [Watched(held!), Watched(caller!)]
      held = nil
      #expect(caller!.succeed(2))
      caller = nil
      await expectReleasedSoon(watched, "\(form): the delay settled by hand is still held")
    }
  }

  @Test("abandoningOnCancel's promise settled by hand withdraws from the shared promise at once: both views")
  func abandoningSettledByHand() async {
    let shared = ResultPromise<AbandonMarker, TestError>()
    var callers: [ResultPromise<AbandonMarker, TestError>] = []
    for index in 0..<100 {
      callers.append(
        index.isMultiple(of: 2)
          ? shared.abandoningOnCancel(with: .boom)
          : await MainActor.run { shared.onMainActor.abandoningOnCancel(with: .boom).promise })
    }
    let watched = callers.map(Watched.init)
    for caller in callers { #expect(caller.succeed(AbandonMarker())) }
    callers = []
    await expectReleasedSoon(watched, "a caller settled by hand is still held by the shared promise")
    shared.succeed(AbandonMarker())
  }

  @Test(
    "a request after the shared promise settled changes nothing, while its delivery runs an earlier observer elsewhere"
  )
  func requestAfterSettlementIsLate() async {
    for view in [false, true] {
      let shared = ResultPromise<Int, TestError>()
      let (entered, release, delivered) = (
        DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)
      )
      shared.await { _ in  // an earlier observer, which holds the delivery on the settling thread
        entered.signal()
        release.wait()
      }
      let caller =
        view
        ? await MainActor.run { shared.onMainActor.abandoningOnCancel(with: .boom).promise }
        : shared.abandoningOnCancel(with: .boom)
      onNewThread {
        shared.succeed(1)
        delivered.signal()
      }
      entered.wait()
      #expect(!shared.isPending, "settled: its fulfil has set the outcome")
      caller.cancel()
      #expect(
        caller.isPending, "the request came after the settlement, so it decided nothing (view: \(view))")
      release.signal()
      delivered.wait()
      #expect(await caller.result == .success(1), "view: \(view)")
    }
  }

  @Test("the observers that stay keep their order when others leave, the first among them")
  func orderKept() {
    let shared = ResultPromise<Int, TestError>()
    let order = Log<String>()
    let first = shared.abandoningOnCancel(with: .boom)  // lands in the single-observer slot
    shared.await { _ in order.append("a") }
    let second = shared.abandoningOnCancel(with: .boom)
    shared.await { _ in order.append("b") }
    let third = shared.abandoningOnCancel(with: .boom)
    shared.await { _ in order.append("c") }
    first.cancel()
    third.cancel()  // the last: the gaps at the end go
    second.cancel()  // a gap in the middle
    shared.await { _ in order.append("d") }
    let fourth = shared.abandoningOnCancel(with: .boom)
    fourth.await { _ in order.append("fourth") }
    shared.succeed(1)
    #expect(order.values == ["a", "b", "c", "d", "fourth"])
    for caller in [first, second, third] { #expect(caller.settledResult == .failure(.boom)) }
  }

  @Test("callers leaving in arrival order, in reverse and at random each leave nothing, and the rest run")
  func manyLeavingInAnyOrder() {
    let orders: [[Int]] = [Array(0..<2_000), Array((0..<2_000).reversed()), Array(0..<2_000).shuffled()]
    for order in orders {
      let shared = ResultPromise<Int, TestError>()
      let callers = (0..<2_000).map { _ in shared.abandoningOnCancel(with: .boom) }
      let stayed = Counter()
      for index in order.prefix(1_500) { callers[index].cancel() }
      for index in order.dropFirst(1_500) {
        callers[index].await { if $0 == .success(7) { stayed.increment() } }
      }
      shared.succeed(7)
      #expect(stayed.value == 500)
      #expect(callers.filter { $0.settledResult == .failure(.boom) }.count == 1_500)
    }
  }

  @Test(
    "rounds of callers where all but the newest, or all but every 100th, leave: the rest run once, in order")
  func allButSomeLeave() {
    for keepsEvery in [1_000, 100] {
      let shared = ResultPromise<Int, TestError>()
      let ran = Log<Int>()
      var stayed: [Int] = []
      var departed: [ResultPromise<Int, TestError>] = []
      for round in 0..<4 {
        let callers = (0..<1_000).map { _ in shared.abandoningOnCancel(with: .boom) }
        for (index, caller) in callers.enumerated() {
          let id = round * 1_000 + index
          if (index + 1).isMultiple(of: keepsEvery) {
            caller.await { if $0 == .success(7) { ran.append(id) } }
            stayed.append(id)
          } else {
            caller.cancel()
            departed.append(caller)
          }
        }
      }
      shared.succeed(7)
      #expect(ran.values == stayed, "every \(keepsEvery)th stayed")
      #expect(departed.allSatisfy { $0.settledResult == .failure(.boom) })
    }
  }

  @Test("a hand fulfil made while a request's or a timer's failure is evaluated loses: the failure decided")
  func claimedBeforeEvaluated() async {
    // Each failure, as it is evaluated, tries to settle its own promise by hand: decided first, the
    // promise is already the failure's, so the hand fulfil must return false.
    let handWon = Counter()
    let target = Locked<ResultPromise<Int, TestError>?>(nil)
    @Sendable func failureSettlingByHand() -> TestError {
      if target.withLock({ $0 })?.fulfil(with: .success(99)) == true { handWon.increment() }
      return .boom
    }
    let abandoning = ResultPromise<Int, TestError>().abandoningOnCancel(with: failureSettlingByHand())
    target.withLock { $0 = abandoning }
    abandoning.cancel()
    #expect(abandoning.settledResult == .failure(.boom))

    let delayed = ResultPromise<Int, TestError>.after(
      .seconds(3_600), value: 0, ifCancelled: failureSettlingByHand())
    target.withLock { $0 = delayed }
    delayed.cancel()
    #expect(delayed.settledResult == .failure(.boom))

    let manual = ManualClock()
    let timed = ResultPromise<Int, TestError>().timeout(
      .seconds(1), failure: failureSettlingByHand(), clock: manual)
    target.withLock { $0 = timed }
    manual.advance(by: .seconds(1))
    #expect(await timed.result == .failure(.boom))
    #expect(handWon.value == 0, "no hand fulfil wins once a failure is being evaluated")
  }

  @Test("a request after a hand fulfil evaluates no failure: abandoningOnCancel, timeout, delay")
  func noEvaluationAfterHandFulfil() async {
    let evaluated = Counter()
    let caller = ResultPromise<Int, TestError>().abandoningOnCancel(with: counted(evaluated, .boom))
    caller.succeed(1)
    caller.cancel()
    let manual = ManualClock()
    let timed = ResultPromise<Int, TestError>().timeout(
      .seconds(1), failure: counted(evaluated, .boom), clock: manual)
    timed.succeed(2)
    manual.advance(by: .seconds(2))
    try? await Task.sleep(for: .milliseconds(100))  // for the timer's task to run
    let delayed = ResultPromise<Int, TestError>(value: 3).delay(
      .seconds(1), clock: manual, ifCancelled: counted(evaluated, .boom))
    delayed.succeed(4)
    delayed.cancel()
    manual.advance(by: .seconds(1))  // ends the delay's wait, whose task would otherwise sleep for ever
    #expect(evaluated.value == 0)
    #expect(
      [caller.settledResult, timed.settledResult, delayed.settledResult] == [
        .success(1), .success(2), .success(4),
      ])
  }
}

extension LongChains {
  /// Semantics 23 at length: withdrawals come in a loop, in amortised constant time each, at constant stack
  /// depth (on a 512 KiB stack).
  @Suite("Long chains: callers who leave")
  struct Departures {
    static var length: Int { LongChains.length }

    @Test(
      "as many callers as a long chain has steps leave one pending promise in arrival order, and the rest run"
    )
    func manyCallersLeaveInArrivalOrder() async {
      let outcomes = Counter()
      let stayed = Counter()
      await onSmallStack {
        let shared = ResultPromise<Int, TestError>()
        let callers = (0..<Self.length).map { _ in shared.abandoningOnCancel(with: .boom) }
        shared.await { _ in stayed.increment() }
        for caller in callers {
          caller.cancel()
          if caller.settledResult == .failure(.boom) { outcomes.increment() }
        }
        shared.succeed(1)
      }
      #expect(outcomes.value == Self.length)
      #expect(stayed.value == 1)
    }

    struct Marker: Sendable, Equatable {}

    @Test("race and all over a long list of pending inputs, decided by one, withdraw from all the others")
    func combinatorsWithdrawFromManyInputs() async {
      BrokenPromiseReports.install()
      let results = Log<Result<Int, TestError>>()
      await onSmallStack {
        let inputs = (0..<Self.length).map { _ in ResultPromise<Marker, TestError>() }
        let raced = ResultPromise.race(inputs + [ResultPromise(value: Marker())])
        let all = ResultPromise.all(inputs + [ResultPromise(error: .boom)])
        raced.map { _ in 0 }.await(results.append)
        all.map { $0.count }.await(results.append)
      }  // the inputs are dropped pending: with nothing left registered, none is reported
      #expect(results.values == [.success(0), .failure(.boom)])
      #expect(BrokenPromiseReports.mentioning("<\(Marker.self), ").isEmpty)
    }
  }
}

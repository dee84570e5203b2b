import Dispatch
import ResultPromise
import Testing

/// Semantics 24: a promise that failed and is released without anything having heard the failure is
/// reported once, through `PromiseDiagnostics.unheardFailureHandler`, on the releasing thread.
///
/// Each test drops failures tagged with its own name (`Dropped`), whose reports the test support records
/// instead of printing, and counts them exactly. Synchronous tests release everything before they count.
/// Where a timer or a task may hold a promise a moment longer, the test waits until it holds the last
/// reference and releases it itself (`releaseHere`), so that the report, if any, is made before it counts.
@Suite("24: a failure nobody heard is reported")
struct UnheardFailureTests {
  typealias Promise = ResultPromise<Int, Dropped>

  /// The number of reports of failures tagged `tag` made while `body` ran and released what it made.
  func reports(_ tag: String, _ body: (Dropped) -> Void) -> Int {
    UnheardFailures.install()
    body(Dropped(tag))
    return UnheardFailures.messages(tag).count
  }

  /// `reports` for a body that awaits.
  func reports(
    _ tag: String, isolation: isolated (any Actor)? = #isolation, _ body: (Dropped) async -> Void
  ) async -> Int {
    UnheardFailures.install()
    await body(Dropped(tag))
    return UnheardFailures.messages(tag).count
  }

  /// Waits until `promise` is held by this reference alone, then releases it here.
  func releaseHere<Success, Failure>(
    _ promise: inout ResultPromise<Success, Failure>?, isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let deadline = ContinuousClock.now + .seconds(60)
    while !isKnownUniquelyReferenced(&promise!) && ContinuousClock.now < deadline { await Task.yield() }
    #expect(
      isKnownUniquelyReferenced(&promise!), "nothing else lets go of it", sourceLocation: sourceLocation)
    promise = nil
  }

  // MARK: Not heard: reported once

  @Test("a failed promise that nothing observes is reported once, also ResultPromise(error:)")
  func nothingObserves() {
    #expect(reports("nothingObserves") { _ = Promise(error: $0) } == 1)
    #expect(reports("nothingObserves.fail") { Promise().fail($0) } == 1)
    #expect(
      reports("nothingObserves.success") { _ in _ = Promise(value: 1) } == 0, "a success is never reported")
    #expect(
      reports("nothingObserves.pending") { _ in _ = Promise() } == 0, "nor a promise that never settled")
  }

  @Test("onSuccess does not hear a failure: a chain that ends in it alone is reported")
  func onSuccessAlone() {
    #expect(reports("onSuccessAlone.settled") { Promise(error: $0).onSuccess { _ in } } == 1)
    #expect(
      reports("onSuccessAlone.pending") { error in
        let promise = Promise()
        promise.onSuccess { _ in }
        promise.fail(error)
      } == 1)
    #expect(
      reports("onSuccessAlone.heard") { error in
        Promise(error: error).onSuccess { _ in }.onFailure { _ in }
      } == 0, "with onFailure beside it, it is heard")
  }

  @Test("isPending and the description do not hear")
  func readingStateDoesNotHear() {
    let reported = reports("readingStateDoesNotHear") { error in
      let promise = Promise(error: error)
      #expect(!promise.isPending)
      #expect(String(reflecting: promise).contains("failure"))
    }
    #expect(reported == 1)
  }

  @Test("a dropped chain is reported once, for its last promise, on the already-failed path too")
  func droppedChain() {
    #expect(
      reports("droppedChain.pending") { error in
        let source = Promise()
        _ = source.then { .success($0 + 1) }.map { $0 * 2 }.mapError { $0 }.recover { .failure($0) }
        source.fail(error)
      } == 1)
    #expect(
      reports("droppedChain.failed") { _ = Promise(error: $0).then { .success($0 + 1) }.map { $0 } } == 1)
  }

  @Test("settledResult read while pending does not hear the failure that comes later")
  func settledResultWhilePending() {
    let reported = reports("settledResultWhilePending") { error in
      let promise = Promise()
      #expect(promise.settledResult == nil)
      promise.fail(error)
    }
    #expect(reported == 1)
  }

  @Test("cancel() after the failure came does not excuse it")
  func cancelTooLate() {
    #expect(
      reports("cancelTooLate") { error in
        let promise = Promise { done, _ in done(.failure(error)) }
        promise.cancel()
      } == 1)
  }

  @Test(
    "a caller that drops its abandoningOnCancel promise without cancelling hears the work's failure nowhere")
  func abandoningDropped() {
    #expect(
      reports("abandoningDropped") { error in
        let shared = Promise()
        _ = shared.abandoningOnCancel(with: error)
        shared.onFailure { _ in }
        shared.fail(error)
      } == 1, "the caller's promise; the shared one was heard")
  }

  @Test("dropped results of race, receive(on:), timeout, retry and an async operation are each reported once")
  func droppedOperatorResults() async {
    #expect(reports("dropped.race") { _ = Promise.race([Promise(error: $0), Promise()]) } == 1)
    let queue = DispatchQueue(label: "unheard")
    #expect(
      await reports("dropped.receive") { error in
        var received: Promise? = Promise(error: error).receive(on: queue)
        await releaseHere(&received)
      } == 1)
    #expect(
      await reports("dropped.timeout") { error in
        var timed: Promise? = Promise().timeout(Duration.zero, failure: error)
        await eventually { [timed] in !timed!.isPending }
        await releaseHere(&timed)
      } == 1)
    #expect(
      await reports("dropped.retry") { error in
        var retried: Promise? = Promise.retry(attempts: 2) { Promise(error: error) }
        await eventually { [retried] in !retried!.isPending }
        await releaseHere(&retried)
      } == 1, "the last failure only: retry heard the attempts")
    #expect(
      await reports("dropped.operation") { error in
        var operation: Promise? = Promise(priority: nil) { () async throws(Dropped) -> Int in throw error }
        await eventually { [operation] in !operation!.isPending }
        await releaseHere(&operation)
      } == 1)
  }

  // MARK: Heard: not reported

  @Test("await, onFailure, always and alwaysAsync hear a failure")
  func observersHear() {
    #expect(reports("observersHear.await") { Promise(error: $0).await { _ in } } == 0)
    #expect(reports("observersHear.onFailure") { Promise(error: $0).onFailure { _ in } } == 0)
    #expect(reports("observersHear.always") { _ = Promise(error: $0).always { _ in } } == 0)
    #expect(
      reports("observersHear.alwaysAsync") {
        _ = Promise(error: $0).alwaysAsync { _ in ResultPromise(value: ()) }
      }
        == 0)
  }

  @Test(
    "the promise always returns starts out heard, so a chain may end with always, or always then onSuccess")
  func alwaysReturnsHeard() {
    #expect(
      reports("alwaysReturnsHeard") { error in
        let source = Promise()
        source.always { _ in }.onSuccess { _ in }
        source.alwaysAsync { _ in ResultPromise(value: ()) }.onSuccess { _ in }
        source.fail(error)
      } == 0)
    #expect(
      reports("alwaysReturnsHeard.before") { error in
        _ = Promise(error: error).always { _ in }.map { $0 + 1 }
      } == 1, "a step after always hands the failure on to a promise that must be heard in turn")
  }

  @Test("every operator step hears its input and hands the failure on", arguments: 0..<8)
  func operatorsHear(step: Int) {
    let heard = Log<Int>()
    #expect(
      reports("operatorsHear.\(step)") { error in
        let source = Promise()
        let made: Promise =
          switch step {
          case 0: source.then { .success($0) }
          case 1: source.map { $0 }
          case 2: source.mapError { $0 }
          case 3: source.recover { .failure($0) }
          case 4: source.recoverAsync { ResultPromise(error: $0) }
          case 5: source.thenAsync { ResultPromise(value: $0) }
          case 6: source.validate(else: error) { _ in true }
          default: source.compactMap(else: error) { $0 }
          }
        made.onFailure { _ in heard.append(step) }
        source.fail(error)
      } == 0)
    #expect(heard.values == [step])
  }

  @Test("combinators hear their inputs, also those that fail after the decision")
  func combinatorsHear() {
    #expect(
      reports("combinatorsHear") { error in
        let (late, other) = (Promise(), Promise())
        ResultPromise.race([Promise(value: 1), late]).onSuccess { _ in }
        ResultPromise.any([Promise(value: 1), late]).onSuccess { _ in }
        ResultPromise.all([Promise(error: error), late]).onFailure { _ in }
        ResultPromise.allSettled([Promise(error: error), late]).onSuccess { _ in }
        ResultPromise.zip(Promise(error: error), other).onFailure { _ in }
        ResultPromise.all([{ Promise(error: error) }, { late }], concurrently: 2).onFailure { _ in }
        late.fail(error)
        other.fail(error)
      } == 0)
  }

  @Test("retry hears its failed attempts, a fired timeout its input, delay a failure it passes on at once")
  func timersHear() async {
    let reported = await reports("timersHear") { error in
      let attempts = Log<Int>()
      var retried: Promise? = Promise.retry(attempts: 3) {
        attempts.append(0)
        return Promise(error: error)
      }
      var input: Promise? = Promise { done, onCancel in onCancel { done(.failure(error)) } }
      let timed = input!.timeout(Duration.zero, failure: error)
      #expect(await retried!.result == .failure(error))
      #expect(await timed.result == .failure(error))
      await eventually { [input] in !input!.isPending }
      #expect(attempts.values.count == 3)
      var delayed: Promise? = Promise(error: error).delay(Duration.seconds(1))
      #expect(await delayed!.result == .failure(error))
      await releaseHere(&retried)
      await releaseHere(&input)
      await releaseHere(&delayed)
    }
    #expect(reported == 0)
  }

  @Test("a promise a thenAsync or recoverAsync step adopts is heard, settled or pending")
  func adoptedIsHeard() {
    #expect(
      reports("adoptedIsHeard") { error in
        Promise(value: 1).thenAsync { _ in Promise(error: error) }.onFailure { _ in }
        Promise(error: error).recoverAsync { ResultPromise<Int, Dropped>(error: $0) }.onFailure { _ in }
        let later = Promise()
        Promise(value: 1).thenAsync { _ in later }.onFailure { _ in }
        later.fail(error)
      } == 0)
  }

  @Test("settledResult read after the failure hears it")
  func settledResultHears() {
    let reported = reports("settledResultHears") { error in
      #expect(Promise(error: error).settledResult == .failure(error))
    }
    #expect(reported == 0)
  }

  @Test("a promise asked to cancel while pending is exempt: its failure answers the request")
  func cancelWhilePendingExempts() {
    #expect(
      reports("cancelWhilePendingExempts") { error in
        Promise { done, onCancel in onCancel { done(.failure(error)) } }.cancel()
        let chain = Promise { done, onCancel in onCancel { done(.failure(error)) } }.map { $0 }
        chain.cancel()
        let plain = Promise()
        plain.cancel()  // cannot be cancelled (and says so once), but its caller has let it go
        plain.fail(error)
      } == 0)
  }

  @Test("callers who left through abandoningOnCancel, and the work they stopped, are not reported")
  func abandoningCallersHear() {
    let reported = reports("abandoningCallersHear") { error in
      let shared = Promise { done, onCancel in onCancel { done(.failure(error)) } }
      let callers = [shared.abandoningOnCancel(with: error), shared.abandoningOnCancel(with: error)]
      callers[0].cancel()
      #expect(shared.isPending, "the other caller still wants it")
      callers[1].cancel()
      #expect(!shared.isPending, "the last caller's request stopped the work")
    }
    #expect(reported == 0, "\(UnheardFailures.messages("abandoningCallersHear"))")
  }

  @Test("a task awaiting value or result hears the failure, also a cancelled one")
  func tasksHear() async {
    let reported = await reports("tasksHear") { error in
      var failed: Promise? = Promise(error: error)
      #expect(await failed!.result == .failure(error))
      await #expect(throws: error) { try await failed!.value }
      let task = Task { [failed] in try await failed!.valueAbandoningOnCancel() }
      task.cancel()
      _ = await task.result
      await releaseHere(&failed)
    }
    #expect(reported == 0)
  }

  @Test("a failure heard on one thread and released on another is not reported, in either order")
  func heardOnAnotherThread() {
    for failsFirst in [true, false] {
      let reported = reports("heardOnAnotherThread.\(failsFirst)") { error in
        let promise = Unmanaged.passRetained(Promise())  // released by whoever comes last
        let done = DispatchSemaphore(value: 0)
        if failsFirst { promise.takeUnretainedValue().fail(error) }
        onNewThread {
          do {
            let mine = failsFirst ? promise.takeRetainedValue() : promise.takeUnretainedValue()
            mine.onFailure { _ in }
          }
          done.signal()
        }
        done.wait()
        if !failsFirst { promise.takeRetainedValue().fail(error) }
      }
      #expect(reported == 0)
    }
  }

  // MARK: The main-actor view

  @Test("on the main-actor view, onSuccess alone and a dropped step are reported; the rest hear")
  @MainActor func mainActorView() async {
    #expect(
      await reports("view.onSuccess") { error in
        var failed: Promise? = Promise(error: error)
        failed!.onMainActor.onSuccess { _ in }
        await Task.yield()
        await releaseHere(&failed)
      } == 1)
    #expect(
      await reports("view.then") { error in
        var step: Promise? = Promise(error: error).onMainActor.then { .success($0) }.promise
        await eventually { [step] in !step!.isPending }
        await releaseHere(&step)
      } == 1)
    let reported = await reports("view.heard") { error in
      var failed: Promise? = Promise(error: error)
      do {
        let view = failed!.onMainActor
        view.onFailure { _ in }
        #expect(view.settledResult == .failure(error))
        #expect(await view.always { _ in }.result == .failure(error))
        #expect(
          await view.alwaysAsync { _ in ResultPromise(value: ()) }.onSuccess { _ in }.result
            == .failure(error))
        #expect(await view.map { $0 }.result == .failure(error))
      }
      await releaseHere(&failed)
    }
    #expect(reported == 0)
  }

  @Test("on the main-actor view, settledResult read after the failure hears it")
  @MainActor func mainActorSettledResult() {
    let reported = reports("view.settledResult") { error in
      #expect(Promise(error: error).onMainActor.settledResult == .failure(error))
    }
    #expect(reported == 0)
  }

  @Test("on the main-actor view too, the promise always and alwaysAsync return starts out heard")
  @MainActor func mainActorAlways() async {
    let reported = await reports("view.always") { error in
      var ended: Promise? = Promise(error: error).onMainActor.always { _ in }.promise
      var cleaned: Promise? = Promise(error: error).onMainActor
        .alwaysAsync { _ in ResultPromise(value: ()) }.onSuccess { _ in }.promise
      await eventually { [ended, cleaned] in !ended!.isPending && !cleaned!.isPending }
      await releaseHere(&ended)
      await releaseHere(&cleaned)
    }
    #expect(reported == 0)
  }

  // MARK: The report

  @Test(
    "the report names the type and the error, and, in a debug build, the call that made it and where its chain began"
  )
  func message() {
    UnheardFailures.install()
    let line = #line + 1
    let source = Promise()
    _ = source.map { $0 + 1 }
    source.fail(Dropped("message"))
    var place = ""
    #if DEBUG
      let file = "ResultPromiseTests/UnheardFailureTests.swift"
      place = " made at \(file):\(line + 1) (its chain began at \(file):\(line))"
    #endif
    #expect(
      UnheardFailures.messages("message") == [
        "ResultPromise<Int, Dropped>\(place) failed with ResultPromiseTests.Dropped(tag: \"message\"), and nothing heard it."
      ])
  }
}

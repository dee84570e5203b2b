import Dispatch
import ResultPromise
import Testing

extension TestError {
  /// What the test work reports when a request stops it.
  static let stopped = TestError.other(-1)
}

/// Work behind a cancellable promise, as a test sees it: `requests` counts the handler's runs; a handler
/// that `stops` fails the promise with `.stopped`, as a URLSession task reports `URLError.cancelled`.
final class Work: Sendable {
  let promise: ResultPromise<Int, TestError>
  private let counter: Counter

  init(stops: Bool = true, file: StaticString = #fileID, line: UInt = #line) {
    let counter = Counter()
    self.counter = counter
    promise = ResultPromise(
      { done, onCancel in
        onCancel {
          counter.increment()
          if stops { done(.failure(.stopped)) }
        }
      }, file: file, line: line)
  }

  var requests: Int { counter.value }
}

/// Work behind a cancellable promise of a non-`Sendable` value: a request counts in `stops` and fails it
/// with `.stopped` (`Work` for a `Model`, which cannot be shared as `Work` is).
private func stoppableModel(counting stops: Counter) -> ResultPromise<Model, TestError> {
  ResultPromise { done, onCancel in
    onCancel {
      stops.increment()
      done(.failure(.stopped))
    }
  }
}

/// `error`, counting in `evaluations` each time it is made: to see when an autoclosure is evaluated.
func counted(_ evaluations: Counter, _ error: TestError) -> TestError {
  evaluations.increment()
  return error
}

/// The `fulfil` function of a pending promise, kept outside it: setting it to `nil` lets go of the last
/// hold on the promise but what was made from it.
typealias HeldFulfil<Value> = Locked<(@Sendable (Result<Value, TestError>) -> Void)?>

/// A pending promise that can be cancelled (its handler does nothing), whose `fulfil` function only
/// `holder` keeps.
func cancellable<Value: Sendable>(fulfilledBy holder: HeldFulfil<Value>) -> ResultPromise<Value, TestError> {
  ResultPromise { done, onCancel in
    holder.withLock { $0 = done }
    onCancel {}
  }
}

/// An object to watch for release, captured by a handler.
private final class Token: Sendable {}

/// Types named only in one test each, so that the broken-promise reports they look for are their own.
private struct NeverCancellableMarker {}
private struct OperatorMadeMarker {}
private struct DroppedCancellableMarker {}

@Suite("Cancellation: requests reach the work")
struct CancellationTests {
  // MARK: Sources and requests (semantics 15)

  @Test("cancel() runs the handler once, and the work's typed failure reaches every observer once")
  func requestReachesHandler() {
    let work = Work()
    let seen = Log<Result<Int, TestError>>()
    work.promise.await(seen.append)
    work.promise.onFailure { seen.append(.failure($0)) }
    let step = work.promise.map { $0 + 1 }
    step.await(seen.append)
    work.promise.cancel()
    work.promise.cancel()
    step.cancel()
    #expect(work.requests == 1)
    #expect(seen.values == [.failure(.stopped), .failure(.stopped), .failure(.stopped)])
  }

  @Test("a request never settles a promise by itself: work that ignores it settles as it would have")
  func requestIsNotAnOutcome() {
    let work = Work(stops: false)
    let step = work.promise.map { $0 * 2 }
    step.cancel()
    #expect(work.requests == 1)
    #expect(work.promise.isPending && step.isPending)
    work.promise.succeed(21)
    #expect(step.settledResult == .success(42))
  }

  @Test("a handler registered after the request runs at once; after settlement, never")
  func lateHandlers() {
    let register = Locked<(@Sendable (@escaping @Sendable () -> Void) -> Void)?>(nil)
    let fulfil = Locked<(@Sendable (Result<Int, TestError>) -> Void)?>(nil)
    let promise = ResultPromise<Int, TestError> { done, onCancel in
      register.withLock { $0 = onCancel }
      fulfil.withLock { $0 = done }
    }
    let onCancel = register.withLock { $0! }
    let runs = Log<String>()
    promise.cancel()
    #expect(runs.values == [])
    onCancel { runs.append("late") }
    #expect(runs.values == ["late"])
    let done = fulfil.withLock { $0! }
    done(.failure(.stopped))

    let settled = ResultPromise<Int, TestError> { done, onCancel in
      register.withLock { $0 = onCancel }
      done(.success(1))
    }
    let afterSettlement = register.withLock { $0! }
    afterSettlement { runs.append("after settlement") }
    settled.cancel()
    #expect(runs.values == ["late"])
  }

  @Test("a promise that settles first releases its handlers unrun, with what they capture")
  func settlementReleasesHandlers() {
    weak var weakCaptured: Tracked?
    let promise: ResultPromise<Int, TestError> = {
      let captured = Tracked()
      weakCaptured = captured
      return ResultPromise { done, onCancel in onCancel { _ = (captured, done) } }
    }()
    #expect(weakCaptured != nil)
    promise.succeed(1)
    #expect(weakCaptured == nil)
    promise.cancel()
    #expect(promise.settledResult == .success(1))
  }

  @Test("handlers run on the requesting thread, after the callback that asked")
  func handlersRunAfterTheCallback() {
    let order = Log<String>()
    let work = ResultPromise<Int, TestError> { done, onCancel in
      onCancel {
        order.append("handler")
        done(.failure(.stopped))
      }
    }
    let trigger = ResultPromise<Void, Never>()
    trigger.await { _ in
      work.cancel()
      order.append("callback ends")
    }
    trigger.succeed()
    #expect(order.values == ["callback ends", "handler"])
  }

  @Test("the non-Sendable form wraps work whose value is not Sendable")
  func nonSendableSource() {
    let stops = Counter()
    let promise = stoppableModel(counting: stops)
    promise.cancel()
    #expect(stops.value == 1)
    #expect(promise.isPending == false)
  }

  // MARK: Where a request goes (semantics 16)

  /// The operators a request travels through, each making one promise from an `Int` promise.
  enum Operator: String, CaseIterable, Sendable {
    case then, map, mapThrowing, mapError, recover, recoverAsync, always, thenAsync, receiveOn, timeout
    case validate, compactMap, alwaysAsync

    func add(to promise: ResultPromise<Int, TestError>) -> ResultPromise<Int, TestError> {
      switch self {
      case .then: promise.then { .success($0) }
      case .map: promise.map { $0 }
      case .mapThrowing: promise.map { (value: Int) throws(TestError) -> Int in value }
      case .mapError: promise.mapError { $0 }
      case .recover: promise.recover { .failure($0) }
      case .recoverAsync: promise.recoverAsync { ResultPromise(error: $0) }
      case .always: promise.always { _ in }
      case .thenAsync: promise.thenAsync { ResultPromise(value: $0) }
      case .receiveOn: promise.receive(on: DispatchQueue(label: "cancellation test"))
      case .timeout: promise.timeout(.seconds(3600), failure: .boom)
      case .validate: promise.validate(else: .boom) { _ in true }
      case .compactMap: promise.compactMap(else: .boom) { $0 }
      case .alwaysAsync: promise.alwaysAsync { _ in ResultPromise(value: ()) }
      }
    }
  }

  @Test("a request on a step reaches its input's work, through every operator", arguments: Operator.allCases)
  func throughEveryOperator(op: Operator) async {
    let work = Work()
    let step = op.add(to: op.add(to: work.promise))
    step.cancel()
    #expect(work.requests == 1)
    #expect(await step.result == .failure(.stopped))
  }

  @Test("thenAsync's request reaches the promise it adopts, also one it adopts after the request")
  func thenAsyncReachesAdopted() {
    let input = Work(stops: false)
    let inner = Work()
    let step = input.promise.thenAsync { _ in inner.promise }
    step.cancel()
    #expect(input.requests == 1 && inner.requests == 0)
    input.promise.succeed(1)  // the input ignored the request; the step adopts `inner` now
    #expect(inner.requests == 1, "the adopted promise hears the request as it is adopted")
    #expect(step.settledResult == .failure(.stopped))

    let first = Work()
    let second = Work()
    let chain = first.promise.thenAsync { _ in second.promise }.map { $0 + 1 }
    first.promise.succeed(1)
    chain.cancel()
    #expect(first.requests == 0, "a settled input hears nothing")
    #expect(second.requests == 1)
    #expect(chain.settledResult == .failure(.stopped))
  }

  @Test("recoverAsync's request reaches the promise it adopts")
  func recoverAsyncReachesAdopted() {
    let input = Work()
    let fallback = Work()
    let step = input.promise.recoverAsync { _ in fallback.promise }
    input.promise.fail(.boom)
    step.cancel()
    #expect(input.requests == 0 && fallback.requests == 1)
    #expect(step.settledResult == .failure(.stopped))
  }

  @Test("cancel() on a promise that cannot be cancelled does nothing, and says so once in debug builds")
  func cannotCancelIsReported() {
    BrokenPromiseReports.install()
    let plain = ResultPromise<NeverCancellableMarker, TestError>()
    plain.cancel()
    plain.cancel()
    #expect(plain.isPending)
    let step = ResultPromise<Int, TestError>(value: 1).map { _ in OperatorMadeMarker() }
    step.cancel()
    #if DEBUG
      let reports = BrokenPromiseReports.mentioning("NeverCancellableMarker")
      #expect(reports.count == 1)
      #expect(reports.values.first == 1)
      #expect(reports.keys.first?.contains("ResultPromise+CancellationTests.swift") == true)
      #expect(reports.keys.first?.contains("cannot be cancelled") == true)
      let fromOperator = BrokenPromiseReports.mentioning("OperatorMadeMarker")
      #expect(fromOperator.keys.first?.contains("made by an operator") == true)
    #endif
    plain.succeed(NeverCancellableMarker())
  }

  // MARK: Reach from any head (semantics 16)

  @Test("a chain that starts at a value reaches the work its thenAsync step adopted")
  func reachFromValueHead() {
    let inner = Work()
    let tail = ResultPromise<Int, TestError>(value: 1).thenAsync { _ in inner.promise }.map { $0 + 1 }
    tail.cancel()
    #expect(inner.requests == 1)
    #expect(tail.settledResult == .failure(.stopped))
  }

  @Test("a plain pending head: a request made before the adoption reaches the promise as it is adopted")
  func reachFromPlainHeadBeforeAdoption() {
    let root = ResultPromise<Int, TestError>()
    let inner = Work()
    let tail = root.thenAsync { _ in inner.promise }.map { $0 + 1 }
    tail.cancel()
    #expect(root.isPending && inner.requests == 0)
    root.succeed(1)
    #expect(inner.requests == 1, "the adopted promise hears the request as it is adopted")
    #expect(tail.settledResult == .failure(.stopped))

    let fulfil = HeldFulfil<Int>(nil)
    let wrapped = ResultPromise<Int, TestError> { done in fulfil.withLock { $0 = done } }  // a cache read
    let slow = Work()
    let chain = wrapped.thenAsync { _ in slow.promise }
    fulfil.withLock { $0 }?(.success(1))
    chain.cancel()
    #expect(slow.requests == 1 && chain.settledResult == .failure(.stopped))
  }

  @Test("recoverAsync from a plain head reaches the fallback it adopted")
  func reachThroughRecoverAsync() {
    let root = ResultPromise<Int, TestError>()
    let fallback = Work()
    let tail = root.recoverAsync { _ in fallback.promise }.map { $0 + 1 }
    root.fail(.boom)
    tail.cancel()
    #expect(fallback.requests == 1)
    #expect(tail.settledResult == .failure(.stopped))
  }

  @Test("through ignoringCancel(): the request stops the work a later step adopted, never the shared work")
  func reachThroughIgnoringCancel() {
    let shared = Work()
    let view = shared.promise.ignoringCancel()
    let inner = Work()
    let tail = view.thenAsync { _ in inner.promise }
    tail.cancel()
    #expect(shared.requests == 0 && inner.requests == 0)
    shared.promise.succeed(1)
    #expect(inner.requests == 1 && tail.settledResult == .failure(.stopped))

    let second = Work()
    let afterwards = view.thenAsync { _ in second.promise }  // the shared work has settled now
    afterwards.cancel()
    #expect(second.requests == 1 && shared.requests == 0)
  }

  @Test("adopted work that another chain still wants runs on until that chain lets go too")
  func reachCountsInterest() {
    let inner = Work()
    let other = inner.promise.map { $0 + 10 }
    let tail = ResultPromise<Int, TestError>(value: 1).thenAsync { _ in inner.promise }
    other.cancel()
    #expect(inner.requests == 0 && other.isPending, "the chain that adopted it still wants it")
    tail.cancel()
    #expect(inner.requests == 1)
    #expect(tail.settledResult == .failure(.stopped) && other.settledResult == .failure(.stopped))

    let shared = Work()
    let first = ResultPromise<Int, TestError>(value: 1).thenAsync { _ in shared.promise }
    let second = shared.promise.map { $0 + 10 }
    first.cancel()
    #expect(shared.requests == 0 && first.isPending, "the other chain still wants it")
    second.cancel()
    #expect(shared.requests == 1 && first.settledResult == .failure(.stopped))
  }

  @Test(
    "after a thenAsync on a value, a request passes through every operator", arguments: Operator.allCases)
  func reachThroughEveryOperator(op: Operator) async {
    let inner = Work()
    let head = ResultPromise<Int, TestError>(value: 1).thenAsync { _ in inner.promise }
    let step = op.add(to: op.add(to: head))
    step.cancel()
    #expect(inner.requests == 1)
    inner.promise.fail(.boom)  // too late if the request stopped it; otherwise the await below would hang
    #expect(await step.result == .failure(.stopped))
  }

  @Test("after a thenAsync on a value, a request passes through every combinator")
  func reachThroughCombinators() {
    let works = (0..<5).map { _ in Work() }
    let heads = works.map { work in ResultPromise<Int, TestError>(value: 1).thenAsync { _ in work.promise } }
    let all = ResultPromise.all([heads[0]])
    let race = ResultPromise.race([heads[1]])
    let any = ResultPromise.any([heads[2]])
    let settled = ResultPromise.allSettled([heads[3]])
    let zipped = ResultPromise.zip(heads[4], ResultPromise<String, TestError>(value: "x"))
    all.cancel()
    race.cancel()
    any.cancel()
    settled.cancel()
    zipped.cancel()
    #expect(works.map(\.requests) == [1, 1, 1, 1, 1])
    #expect(all.settledResult == .failure(.stopped) && race.settledResult == .failure(.stopped))
    #expect(settled.settledResult == .success([.failure(.stopped)]))
  }

  @Test("a chain with no thenAsync and no cancellable source stays plain: cancel() does nothing")
  func plainChainsStayPlain() {
    let root = ResultPromise<Int, TestError>()
    let tail = root.map { $0 + 1 }.then { .success($0) }.mapError { $0 }.recover { .failure($0) }
    tail.cancel()
    root.succeed(1)
    #expect(tail.settledResult == .success(2))
  }

  // MARK: Interest (semantics 17)

  @Test("a shared promise stops only when its last dependent lets go")
  func sharedPromiseStopsWhenLastLetsGo() {
    let work = Work()
    let first = work.promise.map { $0 + 1 }
    let second = work.promise.map { $0 + 2 }.map { $0 + 3 }
    first.cancel()
    #expect(work.requests == 0)
    #expect(first.isPending, "the first chain waits for the work, which goes on for the second")
    second.cancel()
    #expect(work.requests == 1)
    #expect(first.settledResult == .failure(.stopped) && second.settledResult == .failure(.stopped))
  }

  @Test("cancel() on a shared promise itself stops it whatever its dependents want")
  func directCancelWins() {
    let work = Work()
    let dependents = (0..<3).map { offset in work.promise.map { $0 + offset } }
    work.promise.cancel()
    #expect(work.requests == 1)
    #expect(dependents.allSatisfy { $0.settledResult == .failure(.stopped) })
  }

  @Test("plain observers are not dependents; a step made and dropped is one, and one that settles lets go")
  func whoIsADependent() {
    let work = Work()
    work.promise.onSuccess { _ in }.onFailure { _ in }.await { _ in }
    let step = work.promise.map { $0 }
    step.cancel()
    #expect(work.requests == 1, "plain observers do not hold the work")

    let shared = Work()
    _ = shared.promise.map { $0 }  // made and dropped: it still waits for the result
    shared.promise.map { $0 }.cancel()
    #expect(shared.requests == 0)
    shared.promise.succeed(0)

    let settling = Work()
    let only = settling.promise.map { $0 }
    only.fulfil(with: .success(0))  // settled by hand: it wants its input no more
    #expect(settling.requests == 1)
  }

  // Along a chain, steps share their first promise's record, each at its depth; a step with a second
  // dependent keeps a count of its own. These attack that sharing: forks and requests in the middle.

  @Test("a request on a middle step stops the work, and a later thenAsync still adopts unasked")
  func middleStepRequest() {
    let work = Work(stops: false)
    let inner = Work()
    let middle = work.promise.map { $0 + 1 }.map { $0 + 1 }
    let tail = middle.map { $0 + 1 }.thenAsync { _ in inner.promise }
    middle.cancel()
    #expect(work.requests == 1)
    work.promise.succeed(1)  // the work ignored the request; the steps after `middle` were never asked
    #expect(inner.requests == 0, "the promise the tail adopts hears no request")
    tail.cancel()
    #expect(inner.requests == 1)
    #expect(tail.settledResult == .failure(.stopped))
  }

  @Test(
    "a fork in the middle of a chain: the work stops only once both branches have let go",
    arguments: [false, true])
  func forkInTheMiddle(branchFirst: Bool) {
    let work = Work()
    let fork = work.promise.map { $0 + 1 }.map { $0 + 1 }
    let chain = fork.map { $0 + 1 }.map { $0 + 1 }
    let branch = fork.map { $0 - 1 }
    (branchFirst ? branch : chain).cancel()
    #expect(work.requests == 0, "the other branch still wants the fork")
    #expect(fork.isPending)
    (branchFirst ? chain : branch).cancel()
    #expect(work.requests == 1)
    #expect(chain.settledResult == .failure(.stopped) && branch.settledResult == .failure(.stopped))
  }

  @Test("cancel() on a fork itself stops the work below it whatever its branches want")
  func directRequestOnAFork() {
    let work = Work()
    let fork = work.promise.map { $0 + 1 }.map { $0 + 1 }
    let branches = (0..<3).map { offset in fork.map { $0 + offset } }
    fork.cancel()
    #expect(work.requests == 1)
    #expect(branches.allSatisfy { $0.settledResult == .failure(.stopped) })
  }

  @Test("forks at several depths: a request travels down until a step that something else still wants")
  func forksAtSeveralDepths() {
    let work = Work()
    let low = work.promise.map { $0 + 1 }
    let high = low.map { $0 + 1 }.map { $0 + 1 }
    let tail = high.map { $0 + 1 }
    let lowBranch = low.map { $0 - 1 }
    let highBranch = high.map { $0 - 1 }
    tail.cancel()
    #expect(work.requests == 0, "highBranch still wants high")
    highBranch.cancel()
    #expect(work.requests == 0, "lowBranch still wants low")
    lowBranch.cancel()
    #expect(work.requests == 1)
    // Requests that come again, or on steps already let go, change nothing.
    tail.cancel()
    high.cancel()
    #expect(work.requests == 1)
    #expect(tail.settledResult == .failure(.stopped) && lowBranch.settledResult == .failure(.stopped))
  }

  @Test(
    "a chain longer than one record holds: a fork anywhere keeps the work until both branches let go",
    arguments: [1, 254, 255, 256, 257, 511, 600])
  func forkInALongChain(at fork: Int) {
    let work = Work()
    var steps = [work.promise]
    for _ in 0..<700 { steps.append(steps[steps.count - 1].map { $0 + 1 }) }
    let branch = steps[fork].map { $0 - 1 }
    steps[699].cancel()
    #expect(work.requests == 0, "the branch still wants step \(fork)")
    branch.cancel()
    #expect(work.requests == 1)
    #expect(steps[700].settledResult == .failure(.stopped) && branch.settledResult == .failure(.stopped))
  }

  @Test("a branch made after the chain below it was asked to stop hears nothing more")
  func branchAfterTheRequest() {
    let work = Work(stops: false)
    let middle = work.promise.map { $0 + 1 }.map { $0 + 1 }
    middle.map { $0 + 1 }.cancel()
    #expect(work.requests == 1)
    let late = middle.map { $0 * 10 }
    late.cancel()
    middle.cancel()
    #expect(work.requests == 1, "a request runs a handler once")
    work.promise.succeed(0)
    #expect(late.settledResult == .success(20))
  }

  @Test("ignoringCancel() on a middle step keeps the work from requests below it, not from one on it")
  func ignoringCancelInTheMiddle() {
    let work = Work()
    let middle = work.promise.map { $0 + 1 }.map { $0 + 1 }
    let shared = middle.ignoringCancel()
    let tail = middle.map { $0 + 1 }
    tail.cancel()
    #expect(work.requests == 0)
    middle.cancel()
    #expect(work.requests == 1)
    #expect(shared.settledResult == .failure(.stopped) && tail.settledResult == .failure(.stopped))
  }

  @Test("a middle step settled by hand lets go of its input, unless the input is wanted elsewhere")
  func middleStepSettledByHand() {
    let work = Work()
    let middle = work.promise.map { $0 + 1 }.map { $0 + 1 }
    middle.fulfil(with: .success(0))
    #expect(work.requests == 1)

    let shared = Work()
    let low = shared.promise.map { $0 + 1 }
    let branch = low.map { $0 - 1 }
    let settled = low.map { $0 + 1 }.map { $0 + 1 }
    settled.fulfil(with: .success(0))
    #expect(shared.requests == 0, "branch still wants low")
    branch.cancel()
    #expect(shared.requests == 1)
  }

  @Test("a step made from a promise with a queue, or between promises that share a record, shares nothing")
  func queuesAndNewSteps() async {
    let work = Work()
    let queued = work.promise.map { $0 + 1 }.receive(on: DispatchQueue(label: "shared record test"))
    let tail = queued.map { $0 + 1 }
    tail.cancel()
    #expect(work.requests == 1)
    #expect(await tail.result == .failure(.stopped))
  }

  @Test("ignoringCancel() keeps the source from every request but one made on it directly")
  func ignoringCancel() {
    let work = Work()
    let shared = work.promise.ignoringCancel()
    let caller = shared.map { $0 + 1 }
    caller.cancel()
    shared.cancel()
    #expect(work.requests == 0)
    let direct = work.promise.map { $0 }
    direct.cancel()
    #expect(work.requests == 0, "ignoringCancel holds its dependent for good")
    work.promise.succeed(1)
    #expect(caller.settledResult == .success(2))
    #expect(direct.settledResult == .success(1))
    work.promise.cancel()
    #expect(work.requests == 0, "a request after settlement does nothing")
  }

  // MARK: Steps that adopt, along a chain (semantics 16, 17)

  @Test("a chain of thenAsync steps: a request from its end reaches only the work adopted now")
  func adoptingChainReachesTheCurrentWork() {
    let (root, first, second) = (Work(), Work(), Work())
    let tail = root.promise.thenAsync { _ in first.promise }.thenAsync { _ in second.promise }.map { $0 + 1 }
    root.promise.succeed(1)
    first.promise.succeed(2)  // the second step adopts `second` now; `first` has settled
    tail.cancel()
    #expect([root.requests, first.requests, second.requests] == [0, 0, 1])
    #expect(tail.settledResult == .failure(.stopped))

    let (head, running, unmade) = (Work(), Work(), Counter())
    let end = head.promise.thenAsync { _ in running.promise }
      .thenAsync { _ in
        unmade.increment()
        return Work().promise
      }
    head.promise.succeed(1)
    end.cancel()
    #expect(head.requests == 0 && running.requests == 1)
    #expect(unmade.value == 0, "the failure passes the second step by")
    #expect(end.settledResult == .failure(.stopped))
  }

  @Test("a thenAsync step reached before its input settled lets go of what it adopts, as it adopts it")
  func adoptingStepReachedBeforeItsInput() {
    // The step is in the middle of a stretch (depth 2), and its input's work ignores the request.
    let (work, inner) = (Work(stops: false), Work())
    let tail = work.promise.map { $0 + 1 }.thenAsync { _ in inner.promise }.map { $0 + 1 }
    tail.cancel()
    #expect(work.requests == 1 && inner.requests == 0)
    work.promise.succeed(1)
    #expect(inner.requests == 1)
    #expect(tail.settledResult == .failure(.stopped))

    // After the first promise of the stretch has settled: a later step adopts when the earlier one settles.
    let (head, earlier, later) = (Work(), Work(stops: false), Work())
    let chain = head.promise.thenAsync { _ in earlier.promise }.map { $0 + 1 }.thenAsync { _ in later.promise
    }
    head.promise.succeed(1)
    chain.cancel()
    #expect(earlier.requests == 1)
    earlier.promise.succeed(2)  // it ignored the request
    #expect(later.requests == 1)
    #expect(chain.settledResult == .failure(.stopped))
  }

  @Test(
    "after the first promise settled, a fork keeps a thenAsync step's work until both branches let go",
    arguments: [false, true])
  func forkKeepsAdoptedWork(forkFirst: Bool) {
    let (root, inner) = (Work(), Work())
    root.promise.succeed(1)
    let step = root.promise.thenAsync { _ in inner.promise }  // it adopts `inner` at once
    let chain = step.map { $0 + 1 }.map { $0 + 1 }
    let fork = step.map { $0 - 1 }  // made after the first promise settled: still counted
    (forkFirst ? fork : chain).cancel()
    #expect(inner.requests == 0, "the other branch still wants the step")
    (forkFirst ? chain : fork).cancel()
    #expect(inner.requests == 1)
    #expect(chain.settledResult == .failure(.stopped) && fork.settledResult == .failure(.stopped))
  }

  @Test("a thenAsync step settled by hand lets go of the promise it adopted, unless something else wants it")
  func adoptingStepSettledByHand() {
    let (root, inner) = (Work(), Work())
    root.promise.succeed(1)
    let step = root.promise.map { $0 + 1 }.thenAsync { _ in inner.promise }
    let tail = step.map { $0 + 1 }
    step.fulfil(with: .success(10))
    #expect(inner.requests == 1)
    #expect(tail.settledResult == .success(11))

    let (head, shared) = (Work(), Work())
    head.promise.succeed(1)
    let keeper = shared.promise.map { $0 }  // another dependent of the shared work
    let adopting = head.promise.map { $0 + 1 }.thenAsync { _ in shared.promise }
    adopting.fulfil(with: .success(10))
    #expect(shared.requests == 0)
    keeper.cancel()
    #expect(shared.requests == 1)
  }

  // MARK: Combinators (semantics 17)

  @Test("race lets its losers go once it settles, unless something else wants them")
  func raceLetsLosersGo() {
    let winner = Work()
    let loser = Work()
    let sharedLoser = Work()
    let other = sharedLoser.promise.map { $0 }
    let race = ResultPromise.race([winner.promise, loser.promise, sharedLoser.promise])
    winner.promise.succeed(1)
    #expect(race.settledResult == .success(1))
    #expect(winner.requests == 0 && loser.requests == 1 && sharedLoser.requests == 0)
    #expect(other.isPending)
    sharedLoser.promise.succeed(2)
  }

  @Test("any lets the rest go after the first success; all and zip after the first failure")
  func combinatorsLetTheRestGo() {
    let a = Work()
    let b = Work()
    let any = ResultPromise.any([a.promise, b.promise])
    a.promise.succeed(1)
    #expect(any.settledResult == .success(1) && b.requests == 1)

    let c = Work()
    let d = Work()
    let all = ResultPromise.all([c.promise, d.promise])
    c.promise.fail(.boom)
    #expect(all.settledResult == .failure(.boom) && d.requests == 1)

    let e = Work()
    let f = Work()
    let zipped = ResultPromise.zip(e.promise, f.promise.map { "\($0)" })
    e.promise.fail(.boom)
    #expect(f.requests == 1)
    if case .failure(let error) = zipped.settledResult { #expect(error == .boom) } else { Issue.record() }
  }

  @Test("allSettled never lets go early; cancelling a combinator's result reaches every input")
  func cancellingCombinedPromises() {
    let a = Work()
    let b = Work(stops: false)
    let settled = ResultPromise.allSettled([a.promise, b.promise])
    a.promise.fail(.boom)
    #expect(b.requests == 0)
    settled.cancel()
    #expect(a.requests == 0 && b.requests == 1)
    b.promise.succeed(2)
    #expect(settled.settledResult == .success([.failure(.boom), .success(2)]))

    let c = Work()
    let d = Work()
    let race = ResultPromise.race([c.promise, d.promise])
    race.cancel()
    #expect(c.requests == 1 && d.requests == 1)
    #expect(race.settledResult == .failure(.stopped))
  }

  @Test(
    "all(_:concurrently:): a request reaches the pending promises, and those made after it hear it at once")
  func concurrentlyCancelled() {
    let works = Locked<[Work]>([])
    let makers = (0..<6).map { _ in
      { () -> ResultPromise<Int, TestError> in
        let work = Work(stops: false)
        works.withLock { $0.append(work) }
        return work.promise
      }
    }
    let all = ResultPromise.all(makers, concurrently: 2)
    #expect(works.withLock { $0.count } == 2)
    all.cancel()
    #expect(works.withLock { $0.map(\.requests) } == [1, 1])
    works.withLock { $0[0] }.promise.succeed(0)  // the work ignored the request; a place is free
    #expect(works.withLock { $0.map(\.requests) } == [1, 1, 1], "a promise made after the request hears it")
    works.withLock { $0[1] }.promise.fail(.stopped)
    #expect(all.settledResult == .failure(.stopped))
    #expect(works.withLock { $0.count } == 3, "no maker is called after the failure")
    works.withLock { $0[2] }.promise.succeed(2)
  }

  @Test("all(_:concurrently:) after a request: a further maker only for a success that came in spite of it")
  func concurrentlyStopsPulling() {
    let works = Locked<[Work]>([])
    let inMaker = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let makers = (0..<10).map { index in
      { () -> ResultPromise<Int, TestError> in
        if index == 5 {  // the pump, on another thread, is inside this maker while the test acts
          inMaker.signal()
          go.wait()
        }
        let work = Work(stops: false)
        works.withLock { $0.append(work) }
        return work.promise
      }
    }
    let all = ResultPromise.all(makers, concurrently: 5)
    let work: @Sendable (Int) -> Work = { index in works.withLock { $0[index] } }
    let pumped = DispatchGroup()
    DispatchQueue.global().async(group: pumped) { work(0).promise.succeed(0) }  // frees a place: maker 5
    inMaker.wait()
    work(1).promise.succeed(1)  // before the request: its place is not to be filled after it
    all.cancel()
    go.signal()
    pumped.wait()
    #expect(works.withLock { $0.map(\.requests) } == [0, 0, 1, 1, 1, 1], "maker 6 is not called")
    work(2).promise.succeed(2)  // in spite of the request: one more maker, whose promise hears it
    #expect(works.withLock { $0.map(\.requests) } == [0, 0, 1, 1, 1, 1, 1])
    work(3).promise.fail(.stopped)
    #expect(all.settledResult == .failure(.stopped))
    #expect(works.withLock { $0.count } == 7, "no maker after the failure")
    for index in 4..<7 { work(index).promise.fail(.stopped) }
  }

  @Test("allSettled(_:concurrently:) after a request still calls every maker; each promise hears it at once")
  func concurrentlySettledCallsEveryMaker() {
    let works = Locked<[Work]>([])
    let makers = (0..<4).map { _ in
      { () -> ResultPromise<Int, TestError> in
        let work = Work()
        works.withLock { $0.append(work) }
        return work.promise
      }
    }
    let settled = ResultPromise.allSettled(makers, concurrently: 1)
    settled.cancel()
    #expect(works.withLock { $0.map(\.requests) } == [1, 1, 1, 1])
    #expect(settled.settledResult == .success(Array(repeating: .failure(.stopped), count: 4)))
  }

  @Test("all(_:concurrently:) lets go of the promises still pending when a failure ends it")
  func concurrentlyLetsGoOnFailure() {
    let works = (0..<3).map { _ in Work() }
    let makers = works.map { work in { work.promise } }
    let all = ResultPromise.all(makers, concurrently: 3)
    works[0].promise.fail(.boom)
    #expect(all.settledResult == .failure(.boom))
    #expect(works.map(\.requests) == [0, 1, 1])
  }

  @Test("a combinator's result made from promises that cannot be cancelled cannot be cancelled either")
  func plainCombinatorsStayPlain() {
    let a = ResultPromise<Int, TestError>()
    let all = ResultPromise.all([a])
    all.cancel()
    a.succeed(1)
    #expect(all.settledResult == .success([1]))
  }

  // MARK: Timers and tasks (semantics 18)

  @Test("timeout passes a request on and keeps its deadline; once fired, it lets its input go")
  func timeoutForwardsAndKeepsDeadline() async {
    let clock = ManualClock()
    let ignoring = Work(stops: false)
    let timed = ignoring.promise.timeout(.seconds(10), failure: .other(408), clock: clock)
    timed.cancel()
    #expect(ignoring.requests == 1)
    await eventually { clock.sleepers == 1 }
    clock.advance(by: .seconds(10))
    #expect(await timed.result == .failure(.other(408)), "the work ignored the request; the deadline holds")
    ignoring.promise.succeed(1)

    let slow = Work()
    let shared = Work()
    let keeper = shared.promise.map { $0 }
    let first = slow.promise.timeout(.seconds(5), failure: .other(408), clock: clock)
    let second = shared.promise.timeout(.seconds(5), failure: .other(408), clock: clock)
    await eventually { clock.sleepers == 2 }
    clock.advance(by: .seconds(5))
    #expect(await first.result == .failure(.other(408)))
    #expect(await second.result == .failure(.other(408)))
    #expect(slow.requests == 1, "a fired timeout lets its input go")
    #expect(shared.requests == 0 && keeper.isPending, "unless something else wants it")
    shared.promise.succeed(1)
  }

  @Test(
    "delay passes a request on while it waits for its input; a request during its wait keeps the deadline")
  func delayOnRequest() async {
    let clock = ManualClock()
    let input = Work()
    let delayed = input.promise.delay(.seconds(5), clock: clock)
    delayed.cancel()
    #expect(input.requests == 1)
    #expect(await delayed.result == .failure(.stopped))

    let ran = Counter()
    let waiting = ResultPromise<Int, TestError>(value: 7).delay(.seconds(5), clock: clock)
    let following = waiting.map { value in
      ran.increment()
      return value
    }
    await eventually { clock.sleepers == 1 }
    following.cancel()
    #expect(following.isPending && ran.value == 0, "the code after the delay does not run sooner than asked")
    #expect(clock.sleepers == 1, "the wait goes on")
    clock.advance(by: .seconds(5))
    #expect(await following.result == .success(7))
    #expect(ran.value == 1)
  }

  @Test("delay with ifCancelled: a request ends the wait at once with that failure, evaluated only then")
  func delayIfCancelled() async {
    let clock = ManualClock()
    let evaluated = Counter()
    let ran = Counter()
    let waiting = ResultPromise<Int, TestError>(value: 7)
      .delay(.seconds(5), clock: clock, ifCancelled: counted(evaluated, .other(499)))
    let following = waiting.map { value in
      ran.increment()
      return value
    }
    await eventually { clock.sleepers == 1 }
    following.cancel()
    #expect(following.settledResult == .failure(.other(499)) && ran.value == 0)
    #expect(evaluated.value == 1)
    await eventually("the timer leaves the clock") { clock.sleepers == 0 }

    let onTime = ResultPromise<Int, TestError>(value: 8)
      .delay(.seconds(5), clock: clock, ifCancelled: counted(evaluated, .other(499)))
    await eventually { clock.sleepers == 1 }
    clock.advance(by: .seconds(5))
    #expect(await onTime.result == .success(8))
    onTime.cancel()
    #expect(evaluated.value == 1, "not evaluated when the deadline decided")

    let late = Work(stops: false)
    let heldBack = late.promise.delay(.seconds(5), clock: clock, ifCancelled: .other(499))
    heldBack.cancel()
    #expect(late.requests == 1)
    late.promise.succeed(3)
    #expect(heldBack.settledResult == .failure(.other(499)), "a request before the wait ends it as it starts")

    let failed = ResultPromise<Int, TestError>(error: .boom)
      .delay(.seconds(5), clock: clock, ifCancelled: counted(evaluated, .other(499)))
    failed.cancel()
    #expect(failed.settledResult == .failure(.boom) && evaluated.value == 1, "a failure passes on at once")

    let never = ResultPromise<Int, TestError>(value: 9)
      .delay(.seconds(Int64.max), clock: clock, ifCancelled: .other(499))
    never.cancel()
    #expect(never.settledResult == .failure(.other(499)), "a wait that would never end, ended by a request")
  }

  @Test("after keeps its deadline on a request; with ifCancelled it fails at once instead")
  func afterOnRequest() async {
    let clock = ManualClock()
    let dismissed = Counter()
    let tick = ResultPromise<String, TestError>.after(.seconds(60), value: "tick", clock: clock)
    tick.onSuccess { _ in dismissed.increment() }
    await eventually { clock.sleepers == 1 }
    tick.cancel()
    #expect(tick.isPending && dismissed.value == 0)
    clock.advance(by: .seconds(60))
    #expect(await tick.result == .success("tick"))
    #expect(dismissed.value == 1)

    let evaluated = Counter()
    let cancellable = ResultPromise<String, TestError>
      .after(.seconds(60), value: "tick", clock: clock, ifCancelled: counted(evaluated, .other(499)))
    cancellable.onSuccess { _ in dismissed.increment() }
    await eventually { clock.sleepers == 1 }
    cancellable.cancel()
    #expect(cancellable.settledResult == .failure(.other(499)))
    #expect(dismissed.value == 1 && evaluated.value == 1)
    await eventually("the timer leaves the clock") { clock.sleepers == 0 }
  }

  @Test(
    "a request racing a delay's deadline: one outcome, ifCancelled evaluated only when it is that outcome")
  func delayRequestRacingDeadline() async {
    let evaluated = Counter()
    var cancelledOutcomes = 0
    for trial in 0..<2_000 {
      let delayed = ResultPromise<Int, TestError>(value: trial)
        .delay(trial.isMultiple(of: 2) ? .zero : .seconds(-1), ifCancelled: counted(evaluated, .other(499)))
      delayed.cancel()
      let outcome = await delayed.result
      #expect(outcome == .success(trial) || outcome == .failure(.other(499)))
      if outcome == .failure(.other(499)) { cancelledOutcomes += 1 }
    }
    #expect(evaluated.value == cancelledOutcomes)
  }

  @Test("timeout never fails a source that has settled: zero and negative durations, on both views")
  func timeoutSettledSourceWins() async {
    for trial in 0..<2_000 {
      let duration: Duration = trial.isMultiple(of: 2) ? .zero : .seconds(-1)
      let source = ResultPromise<Int, TestError>(value: trial)
      let timed = source.timeout(duration, failure: .other(408))
      #expect(await timed.result == .success(trial))
      let viewed = await source.onMainActor.timeout(duration, failure: .other(408)).result
      #expect(viewed == .success(trial))
    }
  }

  @Test("timeout inside a callback that runs past the deadline: the source that settled wins")
  func timeoutInsideSlowCallback() async {
    let clock = ManualClock()
    let results = Log<Result<Int, TestError>>()
    await onSmallStack(stackSize: 1 << 20) {
      let trigger = ResultPromise<Void, Never>()
      trigger.await { _ in
        // The source settles now, but its observers wait behind this callback, on this thread.
        let source = ResultPromise<Int, TestError>()
        source.succeed(1)
        let timed = source.timeout(.milliseconds(10), failure: .other(408), clock: clock)
        timed.await(results.append)
        // The callback runs past the deadline: the timer fires meanwhile, on another thread. Give it time
        // to (wrongly) decide; this thread is not one of Swift's shared pool, which the timer runs on.
        blockUntil(milliseconds: 2_000) { clock.sleepers == 1 }
        clock.advance(by: .milliseconds(10))
        blockUntil(milliseconds: 200) { !timed.isPending }
      }
      trigger.succeed(())
    }
    #expect(results.values == [.success(1)])
  }

  @Test(
    "retry: a request reaches the attempt, whose failure ends it; during a wait, the last failure at once")
  func retryOnRequest() async {
    let clock = ManualClock()
    let attempts = Locked<[Work]>([])
    let retried = ResultPromise.retry(attempts: 5, delay: .seconds(1), clock: clock) {
      let work = Work()
      attempts.withLock { $0.append(work) }
      return work.promise
    }
    retried.cancel()
    #expect(attempts.withLock { $0.map(\.requests) } == [1])
    #expect(await retried.result == .failure(.stopped))

    let failing = Counter()
    let waiting = ResultPromise<Int, TestError>.retry(attempts: 5, delay: .seconds(1), clock: clock) {
      failing.increment()
      return ResultPromise(error: .other(failing.value))
    }
    await eventually { clock.sleepers == 1 }
    waiting.cancel()
    #expect(waiting.settledResult == .failure(.other(1)))
    #expect(failing.value == 1, "no other attempt")
  }

  @Test("init(priority:operation:) cancels its task, whose operation reports its own failure")
  func operationTaskCancelled() async {
    let started = ResultPromise<Void, Never>()
    let promise = ResultPromise<Int, TestError> { () async throws(TestError) -> Int in
      started.succeed()
      while !Task.isCancelled { await Task.yield() }
      throw .stopped
    }
    await started.value
    promise.cancel()
    #expect(await promise.result == .failure(.stopped))
  }

  // MARK: Swift Concurrency (semantics 14)

  @Test("a cancelled task awaiting value lets the promise go: sole, the work stops; shared, it goes on")
  func awaitingTaskLetsGo() async {
    let work = Work()
    let waiting = Task { try await work.promise.map { $0 }.value }
    waiting.cancel()  // before or after the wait begins: either way it lets go
    await #expect(throws: TestError.stopped) { try await waiting.value }
    #expect(work.requests == 1)

    let shared = Work()
    let keeper = shared.promise.map { $0 }
    let other = Task { await shared.promise.result }
    other.cancel()
    #expect(shared.requests == 0, "another dependent still wants it")
    shared.promise.succeed(5)
    #expect(await other.value == .success(5), "the wait ends only when the promise settles")
    #expect(keeper.settledResult == .success(5))
  }

  @Test("resultAbandoningOnCancel returns at once when cancelled and lets the promise go")
  func abandoningLetsGo() async {
    let work = Work()
    let waiting = Task { try await work.promise.valueAbandoningOnCancel() }
    waiting.cancel()
    await #expect(throws: CancellationError.self) { try await waiting.value }
    #expect(work.requests == 1)
    #expect(work.promise.settledResult == .failure(.stopped))
  }

  @Test("a cancelled task awaiting a promise that cannot be cancelled waits as before")
  func plainAwaitUnchanged() async {
    let plain = ResultPromise<Int, TestError>()
    let waiting = Task { await plain.result }
    waiting.cancel()
    plain.succeed(1)
    #expect(await waiting.value == .success(1))
  }

  // MARK: Main actor (semantics 19)

  @Test("the main-actor view's cancel(), steps and awaiting tasks carry requests")
  @MainActor func mainActorView() async {
    let stops = Counter()
    let view = stoppableModel(counting: stops).onMainActor.map { $0.name }
    view.cancel()
    #expect(stops.value == 1)
    #expect(await view.result == .failure(.stopped))

    let work = Work()
    let waiting = Task { @MainActor in await work.promise.onMainActor.map { $0 + 1 }.result }
    waiting.cancel()
    #expect(await waiting.value == .failure(.stopped))
    #expect(work.requests == 1)
  }

  @Test("on the main-actor view, a chain from a value reaches the work its thenAsync or recoverAsync adopted")
  @MainActor func mainActorViewReach() async {
    let inner = Work()
    let view = ResultPromise<Int, TestError>(value: 1).onMainActor.thenAsync { _ in inner.promise }.map {
      $0 + 1
    }
    view.cancel()
    #expect(inner.requests == 1)
    inner.promise.fail(.boom)  // too late if the request stopped it; otherwise the await below would hang
    #expect(await view.result == .failure(.stopped))

    let fallback = Work()
    let recovered = ResultPromise<Int, TestError>(error: .boom).onMainActor.recoverAsync { _ in
      fallback.promise
    }
    recovered.cancel()
    #expect(fallback.requests == 1)
    fallback.promise.fail(.boom)
    #expect(await recovered.result == .failure(.stopped))
  }

  // MARK: Races (semantics 1, 15)

  /// Where the work that a request races sits in a chain: at its root, or adopted by a `thenAsync` step
  /// of a chain that starts at a value.
  enum RacedWork: String, CaseIterable, Sendable {
    case root, adopted

    func chain(to work: Work) -> ResultPromise<Int, TestError> {
      switch self {
      case .root: work.promise.map { $0 }
      case .adopted: ResultPromise<Int, TestError>(value: 1).thenAsync { _ in work.promise }.map { $0 }
      }
    }
  }

  @Test(
    "cancel racing settlement: the handler runs at most once and every observer exactly once",
    arguments: RacedWork.allCases)
  func cancelRacingSettlement(raced: RacedWork) {
    let trials = 5_000
    let handlerRuns = Counter()
    let observerRuns = Counter()
    let stoppedOutcomes = Counter()
    for _ in 0..<trials {
      let work = Work()
      let step = raced.chain(to: work)
      step.await { result in
        observerRuns.increment()
        if result == .failure(.stopped) { stoppedOutcomes.increment() }
      }
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        if side == 0 { step.cancel() } else { work.promise.succeed(1) }
      }
      #expect(work.requests <= 1)
      handlerRuns.add(work.requests)
    }
    #expect(observerRuns.value == trials)
    #expect(stoppedOutcomes.value <= handlerRuns.value)
  }

  @Test("a handler that runs while the work settles: the first outcome stands, and each observer runs once")
  func handlerDuringSettlement() {
    let inHandler = DispatchSemaphore(value: 0)
    let settled = DispatchSemaphore(value: 0)
    let handlerDone = DispatchGroup()
    let promise = ResultPromise<Int, TestError> { done, onCancel in
      onCancel {
        inHandler.signal()
        settled.wait()  // the work settles meanwhile, on the test's thread
        done(.failure(.stopped))  // too late: changes nothing
      }
    }
    let step = promise.map { $0 + 1 }
    let seen = Log<Result<Int, TestError>>()
    step.await(seen.append)
    DispatchQueue.global().async(group: handlerDone) { step.cancel() }
    inHandler.wait()
    #expect(promise.succeed(1))
    settled.signal()
    handlerDone.wait()
    #expect(seen.values == [.success(2)])
    #expect(promise.settledResult == .success(1))
  }

  @Test("cancel racing adoption: the adopted promise hears the request exactly once, whichever comes first")
  func cancelRacingAdoption() {
    let trials = 5_000
    let observerRuns = Counter()
    for _ in 0..<trials {
      let root = ResultPromise<Int, TestError>()
      let inner = Work()
      let tail = root.thenAsync { _ in inner.promise }.map { $0 + 1 }
      tail.await { _ in observerRuns.increment() }
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        if side == 0 { tail.cancel() } else { root.succeed(1) }
      }
      #expect(inner.requests == 1)
      #expect(tail.settledResult == .failure(.stopped))
    }
    #expect(observerRuns.value == trials)
  }

  @Test(
    "dependents letting go from many threads at once stop the shared work exactly once, also past a chain",
    arguments: [0, 2])
  func concurrentWithdrawals(stepsBefore: Int) {
    for _ in 0..<2_000 {
      let work = Work()
      let shared = (0..<stepsBefore).reduce(work.promise) { promise, _ in promise.map { $0 } }
      let dependents = (0..<8).map { offset in shared.map { $0 + offset } }
      DispatchQueue.concurrentPerform(iterations: dependents.count) { dependents[$0].cancel() }
      #expect(work.requests == 1)
      #expect(dependents.allSatisfy { $0.settledResult == .failure(.stopped) })
    }
  }

  @Test("cancel racing the adoption of a step inside a stretch: the adopted work hears exactly one request")
  func cancelRacingSharedAdoption() {
    // The adopting step shares the record of the work before it, at depth 2 and then after a settled step.
    let observerRuns = Counter()
    for trial in 0..<2_000 {
      let (work, inner) = (Work(stops: false), Work())
      let tail = work.promise.map { $0 + 1 }.thenAsync { _ in inner.promise }.map { $0 + 1 }
      tail.await { _ in observerRuns.increment() }
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        if side == trial % 2 { tail.cancel() } else { work.promise.succeed(1) }
      }
      #expect(inner.requests == 1)
      #expect(work.requests <= 1)
      #expect(tail.settledResult == .failure(.stopped))

      let (head, first, second) = (Work(), Work(), Work())
      head.promise.succeed(1)
      let end = head.promise.thenAsync { _ in first.promise }.thenAsync { _ in second.promise }
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        if side == trial % 2 { end.cancel() } else { first.promise.succeed(2) }
      }
      // `first` may hear the request as it settles (its handler races its outcome, as documented); `second`
      // is adopted only if `first` succeeded, and then hears the request exactly once.
      #expect(first.requests <= 1)
      #expect(second.requests == (first.promise.settledResult == .success(2) ? 1 : 0))
      #expect(end.settledResult == .failure(.stopped))
      second.promise.succeed(0)  // if never adopted, its handler holds its `done` until it settles
    }
    #expect(observerRuns.value == 2_000)
  }

  @Test("a thenAsync chain cancelled while its works finish on another thread: the request is never lost")
  func cancelRacingAdoptingChain() {
    // The last work never finishes by itself: the tail settles only if the request reaches whichever work
    // runs when it comes, or the one adopted after it.
    for trial in 0..<2_000 {
      let (first, second, last) = (Work(), Work(), Work())
      let head = ResultPromise<Int, TestError>(value: 0)
      let tail = head.thenAsync { _ in first.promise }.thenAsync { _ in second.promise }
        .map { $0 + 1 }.thenAsync { _ in last.promise }
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        if side == trial % 2 {
          tail.cancel()
        } else {
          first.promise.succeed(1)
          second.promise.succeed(2)
        }
      }
      #expect([first, second, last].allSatisfy { $0.requests <= 1 })
      #expect(tail.settledResult == .failure(.stopped))
      for work in [second, last] { work.promise.succeed(0) }  // any never adopted, so that it is freed
    }
  }

  @Test("a middle step settled by hand while its chain is cancelled from the end: the work hears one request")
  func middleSettlingRacingCancel() {
    // A settled step lets go of its input under one lock, and leaves the request loop to ask the work only
    // when that leaves the first promise unwanted. Each order has a deterministic test above
    // (`middleStepSettledByHand`, and a request from the end of a chain); this attacks the race between them.
    let observerRuns = Counter()
    for _ in 0..<2_000 {
      let work = Work()
      let middle = work.promise.map { $0 + 1 }.map { $0 + 1 }
      let tail = middle.map { $0 + 1 }.map { $0 + 1 }
      tail.await { _ in observerRuns.increment() }
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        if side == 0 { tail.cancel() } else { middle.fulfil(with: .success(0)) }
      }
      #expect(work.requests == 1)
      // Settled by hand first, the middle step passes its value on; otherwise the work's failure came first.
      #expect([.success(2), .failure(.stopped)].contains(tail.settledResult))
    }
    #expect(observerRuns.value == 2_000)
  }

  @Test("a step made while the last other dependent lets go: the work is asked to stop exactly once")
  func extendingWhileWithdrawing() {
    // Either order is right, and each has a deterministic test above (`forkInTheMiddle`, made first;
    // `branchAfterTheRequest`, made after); this attacks the race between them.
    for _ in 0..<2_000 {
      let work = Work()
      let middle = work.promise.map { $0 + 1 }
      let branch = middle.map { $0 - 1 }
      let made = Locked<ResultPromise<Int, TestError>?>(nil)
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        if side == 0 {
          branch.cancel()
        } else {
          let tail = middle.map { $0 + 1 }.map { $0 + 1 }
          made.withLock { $0 = tail }
        }
      }
      // Made first, the tail keeps the work wanted; made after, it chains onto work already asked to stop.
      made.withLock { $0 }?.cancel()
      #expect(work.requests == 1)
      #expect(made.withLock { $0 }?.settledResult == .failure(.stopped))
    }
  }

  @Test("a step made after the last dependent let go hears nothing more, and settles with the work")
  func chainingAfterTheLastWithdrawal() {
    let work = Work(stops: false)
    work.promise.map { $0 }.cancel()
    #expect(work.requests == 1)
    let late = work.promise.map { $0 + 1 }
    late.cancel()
    #expect(work.requests == 1, "a request runs a handler once")
    work.promise.succeed(1)
    #expect(late.settledResult == .success(2))
  }

  @Test("random trees of steps, requests and settlements by hand: the work stops exactly when a model says")
  func randomTreesAgainstAModel() {
    var random = SplitMix64(seed: 0x5EED_CA11)
    var mismatches: [String] = []
    for trial in 0..<3_000 where mismatches.isEmpty {
      let work = Work(stops: false)  // the root stays pending after a request, so later steps still count
      var promises = [work.promise]
      var model = InterestModel()
      for operation in 0..<60 {
        let node = Int(random.next() % UInt64(promises.count))
        switch random.next() % 10 {
        case 0..<5:
          let adopts = random.next() % 4 == 0
          promises.append(
            adopts ? promises[node].thenAsync { ResultPromise(value: $0) } : promises[node].map { $0 + 1 })
          model.add(madeFrom: node)
        case 5..<7:
          promises[node].cancel()
          model.cancel(node)
        case 7:
          _ = promises[node].ignoringCancel()
          model.wantForever(node)
        default:
          promises[node].fulfil(with: .success(0))  // the root in order, any other step by hand
          model.settle(node)
        }
        let pending = promises.map(\.isPending)
        if work.requests != model.requests[0] || pending != model.settled.map(!) {
          mismatches.append(
            "trial \(trial), operation \(operation): requests \(work.requests), model \(model)")
          break
        }
      }
      // Until the work settles or hears a request, its handler holds its `done`, and so the whole tree.
      work.promise.succeed(0)
    }
    #expect(mismatches.isEmpty, "\(mismatches)")
  }

  @Test("random trees with thenAsync steps that adopt work: each work stops exactly when a model says")
  func randomAdoptingTreesAgainstAModel() {
    var random = SplitMix64(seed: 0xADD0_97ED)
    var mismatches: [String] = []
    for trial in 0..<2_000 where mismatches.isEmpty {
      let root = Work(stops: false)  // no work stops on a request, so later steps still count
      let adopted = Locked<[Int: Work]>([:])  // by the index of the step that adopted it
      var promises = [root.promise]
      var model = InterestModel()
      for operation in 0..<60 {
        let node = Int(random.next() % UInt64(promises.count))
        switch random.next() % 12 {
        case 0..<3:
          promises.append(promises[node].map { $0 + 1 })
          model.add(madeFrom: node)
        case 3..<6:
          let index = promises.count
          promises.append(
            promises[node].thenAsync { _ in
              let work = Work(stops: false)
              adopted.withLock { $0[index] = work }
              return work.promise
            })
          model.add(madeFrom: node, adopting: true)
        case 6..<8:
          promises[node].cancel()
          model.cancel(node)
        case 8:
          _ = promises[node].ignoringCancel()
          model.wantForever(node)
        case 9:
          promises[node].fulfil(with: .success(0))  // the root's work, or any step by hand
          model.settle(node)
        default:  // a work that a step adopted finishes
          let works = adopted.withLock { $0 }
          let steps = works.filter { $0.value.promise.isPending }.keys.sorted()
          guard !steps.isEmpty else { continue }
          let step = steps[Int(random.next() % UInt64(steps.count))]
          works[step]?.promise.succeed(0)
          model.settleWork(adoptedBy: step)
        }
        let works = adopted.withLock { $0 }
        let requests = promises.indices.map { $0 == 0 ? root.requests : works[$0]?.requests }
        if requests != model.requests || promises.map(\.isPending) != model.settled.map(!) {
          mismatches.append("trial \(trial), operation \(operation): requests \(requests), model \(model)")
          break
        }
      }
      // Until each work settles, its handler holds its `done`, and so the tree made from it.
      root.promise.succeed(0)
      while let pending = adopted.withLock({ $0.values.first { $0.promise.isPending } }) {
        pending.promise.succeed(0)
      }
    }
    #expect(mismatches.isEmpty, "\(mismatches)")
  }

  // MARK: Lifetimes (semantics 6, 7, 20)

  @Test("a pending cancellable chain dropped is freed, and its root reported once")
  func droppedCancellableChain() {
    BrokenPromiseReports.install()
    weak var weakTail: ResultPromise<Int, TestError>?
    weak var weakRoot: ResultPromise<DroppedCancellableMarker, TestError>?
    let fulfil = HeldFulfil<DroppedCancellableMarker>(nil)
    do {
      let root = cancellable(fulfilledBy: fulfil)
      let tail = root.map { _ in 1 }.thenAsync { ResultPromise(value: $0) }.map { $0 + 1 }
      tail.await { _ in }
      (weakTail, weakRoot) = (tail, root)
    }
    #expect(weakRoot != nil, "its fulfil function holds the root")
    fulfil.withLock { $0 = nil }
    #expect(weakTail == nil && weakRoot == nil)
    #if DEBUG
      #expect(BrokenPromiseReports.mentioning("DroppedCancellableMarker").values.reduce(0, +) == 1)
    #endif
  }

  @Test("a pending chain of thenAsync steps that adopted cancellable promises, dropped, is freed")
  func droppedAdoptingChain() {
    weak var weakTail: ResultPromise<Int, TestError>?
    weak var weakAdopted: ResultPromise<Int, TestError>?
    let fulfil = HeldFulfil<Int>(nil)
    do {
      let adopted = cancellable(fulfilledBy: fulfil)
      let root = Work()
      let tail = root.promise.map { $0 + 1 }.thenAsync { _ in adopted }.thenAsync { _ in Work().promise }
      tail.await { _ in }
      root.promise.succeed(1)  // the step at depth 2 of the shared record adopts `adopted`
      (weakTail, weakAdopted) = (tail, adopted)
    }
    #expect(weakAdopted != nil, "its fulfil function holds the adopted promise, and so the chain")
    fulfil.withLock { $0 = nil }
    #expect(weakTail == nil && weakAdopted == nil)
  }

  @Test("a step that adopted a promise made from an earlier pending step of its chain, dropped, is freed")
  func droppedAdoptionOfAnEarlierStep() {
    // The adopted promise's record points up to the chain's record, which the step shares: the chain's
    // record must not hold it strongly back, or the two would keep each other (and the root's handlers).
    BrokenPromiseReports.install()
    let fulfil = HeldFulfil<Int>(nil)
    let watched = Locked<[Watched]>([])
    do {
      let token = Token()
      let root = ResultPromise<Int, TestError> { done, onCancel in
        fulfil.withLock { $0 = done }
        onCancel { _ = token }
      }
      _ = root.ignoringCancel()  // a dependent for good: no request stops the root, which keeps its handler
      let earlier = root.map { $0 + 1 }
      let middle = earlier.map { $0 + 1 }
      let step = middle.thenAsync { _ in earlier.map { $0 } }
      middle.fulfil(with: .success(1))  // out of order: the step adopts now, while `earlier` is pending
      watched.withLock { $0 = [Watched(token), Watched(step), Watched(root)] }
    }
    fulfil.withLock { $0 = nil }  // the last hold on the pending chain
    #expect(watched.withLock { $0.allSatisfy(\.isReleased) })
  }

  @Test("a settled chain keeps nothing alive through its records")
  func settledChainKeepsNothing() {
    weak var weakRoot: ResultPromise<Int, TestError>?
    weak var weakMiddle: ResultPromise<Int, TestError>?
    let tail: ResultPromise<Int, TestError>
    do {
      let work = Work()
      let middle = work.promise.map { $0 + 1 }
      tail = middle.thenAsync { ResultPromise(value: $0) }
      (weakRoot, weakMiddle) = (work.promise, middle)
      work.promise.succeed(1)
    }
    #expect(weakRoot == nil && weakMiddle == nil)
    tail.cancel()
    #expect(tail.settledResult == .success(2))
  }
}

extension LongChains {
  @Suite("Cancellation: stack depth")
  struct CancellationStackDepthTests {
    static var length: Int { LongChains.length }

    @Test("a request travels a long chain from its end to the work in constant stack depth")
    func cancelThroughMillionSteps() async {
      let work = Work()
      let result = Log<Result<Int, TestError>>()
      await onSmallStack {
        var tail = work.promise
        for _ in 0..<Self.length { tail = tail.map { $0 + 1 } }
        tail.await(result.append)
        tail.cancel()
      }
      #expect(work.requests == 1)
      #expect(result.values == [.failure(.stopped)])
    }

    @Test("a request travels a long chain after a thenAsync to the promise it adopted")
    func cancelThroughAdoptedChain() async {
      let inner = Work()
      let result = Log<Result<Int, TestError>>()
      await onSmallStack {
        let work = Work()
        var tail = work.promise.thenAsync { _ in inner.promise }
        for _ in 0..<Self.length { tail = tail.map { $0 + 1 } }
        tail.await(result.append)
        work.promise.succeed(0)
        tail.cancel()
      }
      #expect(inner.requests == 1)
      #expect(result.values == [.failure(.stopped)])
    }

    @Test("a request from the end of a long chain of callers who leave fails each at once and stops the work")
    func cancelThroughAbandoningChain() async {
      let work = Work()
      let result = Log<Result<Int, TestError>>()
      await onSmallStack {
        var tail = work.promise
        for index in 0..<Self.length { tail = tail.abandoningOnCancel(with: .other(index)) }
        tail.await(result.append)
        tail.cancel()
      }
      #expect(work.requests == 1)
      #expect(result.values == [.failure(.other(Self.length - 1))])
    }

    @Test("a request travels a long chain of thenAsync steps to the work adopted now")
    func cancelThroughMillionAdoptingSteps() async {
      let (root, inner) = (Work(), Work())
      let result = Log<Result<Int, TestError>>()
      let made = Counter()
      await onSmallStack {
        var tail = root.promise.thenAsync { _ in inner.promise }
        for _ in 0..<Self.length {
          tail = tail.thenAsync { value in
            made.increment()
            return ResultPromise(value: value + 1)
          }
        }
        tail.await(result.append)
        root.promise.succeed(0)
        tail.cancel()
      }
      #expect(root.requests == 0 && inner.requests == 1)
      #expect(made.value == 0, "the failure passes every later step by")
      #expect(result.values == [.failure(.stopped)])
    }

    /// Combinators that make one `Int` promise from another, to stack into towers.
    enum Tower: String, CaseIterable, Codable, Sendable {
      case all, zip, race, any

      func add(to promise: ResultPromise<Int, TestError>) -> ResultPromise<Int, TestError> {
        switch self {
        case .all: ResultPromise.all([promise]).map { $0[0] }
        case .zip:
          ResultPromise.zip(promise, ResultPromise<Int, TestError>())
            .map { $0.0 }
        case .race: ResultPromise.race([promise])
        case .any: ResultPromise.any([promise]).mapError { $0.errors.first ?? .boom }
        }
      }
    }

    @Test(
      "a pending tower of 100,000 nested combinators over a cancellable source, dropped, is freed on a 512 KiB stack",
      arguments: Tower.allCases)
    func releaseTower(shape: Tower) async {
      // In a process of its own: a stack overflow fails this test alone.
      await #expect(processExitsWith: .success) { [shape] in
        await onSmallStack {
          let fulfil = HeldFulfil<Int>(nil)
          do {
            var top = cancellable(fulfilledBy: fulfil)
            for _ in 0..<100_000 { top = shape.add(to: top) }
            top.await { _ in }
          }
          fulfil.withLock { $0 = nil }  // the last hold on the pending tower: released here
        }
      }
    }

    @Test("a request travels down a tower of 100,000 nested combinators in constant stack depth")
    func cancelTower() async {
      let work = Work()
      let result = Log<Result<Int, TestError>>()
      await onSmallStack {
        var top = work.promise
        for index in 0..<100_000 { top = Tower.allCases[index % 4].add(to: top) }
        top.await(result.append)
        top.cancel()
      }
      #expect(work.requests == 1)
      #expect(result.values == [.failure(.stopped)])
    }

    @Test("a long pending cancellable chain is released in constant stack depth, cancelled or not")
    func releaseMillionStepCancellableChain() async {
      let watched = Locked<[Watched]>([])
      await onSmallStack {
        let fulfil = HeldFulfil<Int>(nil)
        do {
          let root = cancellable(fulfilledBy: fulfil)
          var tail = root
          for _ in 0..<Self.length { tail = tail.map { $0 + 1 } }
          tail.await { _ in }
          var cancelled = root.map { $0 }
          for _ in 0..<Self.length { cancelled = cancelled.map { $0 + 1 } }
          cancelled.cancel()
          watched.withLock { $0 = [Watched(root), Watched(tail), Watched(cancelled)] }
        }
        fulfil.withLock { $0 = nil }  // the last hold on the pending chains: released here
      }
      #expect(watched.withLock { $0.count == 3 && $0.allSatisfy(\.isReleased) })
    }
  }
}

/// Semantics 17 on a tree of promises, as plainly as it can be said: a promise made from another is its
/// dependent; a dependent lets go once, when it is cancelled or settles; a promise whose last dependent lets
/// go is cancelled in turn, and the root's work hears a request when the root is cancelled. A step that
/// adopts (`adopting`) starts work of its own once its input settles; that work's only dependent is the
/// step, so it hears a request when the step is cancelled or settles first — at once if that came before.
private struct InterestModel: CustomStringConvertible {
  var madeFrom: [Int?] = [nil]
  var made: [[Int]] = [[]]
  var dependents = [0]
  var cancelled = [false]
  var settled = [false]
  var adopts = [false]
  /// The requests each promise's own work has heard: the root's, and that of each step that adopted work
  /// (`nil` for other promises, and for a step that has not adopted yet).
  var requests: [Int?] = [0]
  /// Whether each promise's own work has settled.
  var workSettled = [false]

  var description: String { "requests \(requests), cancelled \(cancelled), settled \(settled)" }

  mutating func add(madeFrom input: Int, adopting: Bool = false) {
    let node = madeFrom.count
    madeFrom.append(input)
    made.append([])
    made[input].append(node)
    dependents.append(0)
    cancelled.append(false)
    settled.append(false)
    adopts.append(adopting)
    requests.append(nil)
    workSettled.append(false)
    // Made from a settled promise, a step settles at once (or adopts at once), wanting nothing from it.
    if settled[input] { inputSettled(node) } else { dependents[input] += 1 }
  }

  mutating func cancel(_ node: Int) {
    if !settled[node], !cancelled[node] { stop(node) }
  }

  mutating func wantForever(_ node: Int) {
    if !settled[node] { dependents[node] += 1 }
  }

  /// `node` settles (by hand, or as its work settles), letting go of its input and of the work it adopted;
  /// then every promise made from it settles, or adopts work.
  mutating func settle(_ node: Int) {
    guard !settled[node] else { return }
    settled[node] = true
    if node == 0 { workSettled[0] = true }  // the root is its work's promise
    if !cancelled[node] {
      if let input = madeFrom[node] { letGo(input) }
      requestWork(of: node)
    }
    for step in made[node] { inputSettled(step) }
  }

  /// The work that the step at `node` adopted settles, and so the step does.
  mutating func settleWork(adoptedBy node: Int) {
    workSettled[node] = true
    settle(node)
  }

  /// `node`'s input has settled: a plain step settles; one that adopts starts its work, which hears a
  /// request at once if the step was cancelled or settled before.
  private mutating func inputSettled(_ node: Int) {
    guard adopts[node] else { return settle(node) }
    requests[node] = cancelled[node] || settled[node] ? 1 : 0
  }

  private mutating func stop(_ node: Int) {
    cancelled[node] = true
    requestWork(of: node)
    if let input = madeFrom[node] { letGo(input) }
  }

  private mutating func requestWork(of node: Int) {
    if let heard = requests[node], !workSettled[node] { requests[node] = heard + 1 }
  }

  private mutating func letGo(_ node: Int) {
    guard !settled[node] else { return }
    dependents[node] -= 1
    if dependents[node] == 0, !cancelled[node] { stop(node) }
  }
}

/// A small, seeded random number generator, so that a failing random test can be run again as it was.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }
}

/// A marker type only the abandoned-input test uses, so that the broken-promise report it causes is its own.
private struct AbandonedInputMarker: Sendable {}

/// The hooks that tie the families together by overload ranking (see "How it works" in the core): each test
/// fails if the cancellation file's overload stops winning and the generic fallback runs instead.
@Suite("Overload ranking: the cancellation file's hooks win")
struct OverloadRankingTests {
  @Test("forStep: a thenAsync step from a value has a record, so a request reaches the work it adopts")
  func forStepGivesAnAdoptingStepARecord() {
    let work = Work()
    let step = ResultPromise<Int, TestError>(value: 1).thenAsync { _ in work.promise }
    step.cancel()
    #expect(work.requests == 1)
    #expect(step.settledResult == .failure(.stopped))
  }

  @Test("requestCancel: onMainActor.cancel() reaches the work")
  @MainActor func requestCancelReachesTheWork() {
    let work = Work()
    work.promise.onMainActor.cancel()
    #expect(work.requests == 1)
  }

  @Test(
    "abandoning: onMainActor.abandoningOnCancel fails its caller at once on a request, and the work goes on")
  @MainActor func abandoningMakesACallersPromise() {
    let work = Work()
    let stays = work.promise.map { $0 }
    let caller = work.promise.onMainActor.abandoningOnCancel(with: .boom)
    caller.cancel()
    #expect(caller.promise.settledResult == .failure(.boom))
    #expect(work.requests == 0, "the map still wants it")
    work.promise.succeed(1)
    #expect(stays.settledResult == .success(1))
  }
}

/// `abandoningOnCancel(with:)`: a caller who leaves hears at once, and shared work stops with the last.
@Suite("Cancellation: callers who leave")
struct AbandoningOnCancelTests {
  @Test("a caller that leaves shared work hears its failure at once; the other still gets the success")
  func oneCallerLeaves() {
    let download = Work(stops: false)
    let (leaving, staying) = (Log<Result<Int, TestError>>(), Log<Result<Int, TestError>>())
    let first = download.promise.abandoningOnCancel(with: .other(1))
    let second = download.promise.abandoningOnCancel(with: .other(2))
    first.await(leaving.append)
    second.await(staying.append)
    first.cancel()
    #expect(leaving.values == [.failure(.other(1))], "at once, not when the download ends")
    #expect(download.requests == 0, "the other caller still wants the download")
    #expect(staying.values.isEmpty)
    download.promise.succeed(7)
    #expect(staying.values == [.success(7)])
    #expect(leaving.values == [.failure(.other(1))], "the caller that left hears nothing more")
    #expect(first.settledResult == .failure(.other(1)))
  }

  @Test("the last caller leaving asks the shared work to stop, exactly once, also through a later step")
  func lastCallerStopsTheWork() {
    let download = Work()
    let callers = (0..<3).map { download.promise.abandoningOnCancel(with: .other($0)) }
    let tail = callers[1].map { $0 + 1 }
    callers[0].cancel()
    callers[2].cancel()
    #expect(download.requests == 0)
    tail.cancel()  // reaches callers[1] through its step: the last to leave
    #expect(download.requests == 1)
    for caller in callers { caller.cancel() }
    tail.cancel()
    #expect(download.requests == 1)
    for (index, caller) in callers.enumerated() { #expect(caller.settledResult == .failure(.other(index))) }
    #expect(tail.settledResult == .failure(.other(1)))
    #expect(download.promise.settledResult == .failure(.stopped))
  }

  @Test("a request during a plain first step fails at once, so the thenAsync after it never starts its work")
  func requestDuringPlainStep() {
    let lookup = ResultPromise<Int, TestError>()  // a plain cache lookup: nothing to stop
    let started = Counter()
    let tail = lookup.abandoningOnCancel(with: .other(0)).thenAsync { value in
      started.increment()
      return ResultPromise(value: value)
    }
    let seen = Log<Result<Int, TestError>>()
    tail.await(seen.append)
    tail.cancel()
    #expect(seen.values == [.failure(.other(0))])
    lookup.succeed(1)
    #expect(started.value == 0)
    #expect(seen.values == [.failure(.other(0))])
  }

  @Test("the failure is evaluated only when it is the outcome, once")
  func failureEvaluatedOnlyWhenOutcome() {
    let evaluations = Counter()
    let input = ResultPromise<Int, TestError>()
    let settledFirst = input.abandoningOnCancel(with: counted(evaluations, .other(1)))
    input.succeed(1)
    settledFirst.cancel()
    #expect(settledFirst.settledResult == .success(1))
    let onSettled = ResultPromise<Int, TestError>(value: 2).abandoningOnCancel(
      with: counted(evaluations, .boom))
    onSettled.cancel()
    #expect(onSettled.settledResult == .success(2))
    #expect(evaluations.value == 0)
    let left = ResultPromise<Int, TestError>().abandoningOnCancel(with: counted(evaluations, .other(3)))
    left.cancel()
    left.cancel()
    #expect(left.settledResult == .failure(.other(3)))
    #expect(evaluations.value == 1)
  }

  @Test("a request racing the input's settlement decides once: one outcome, observers once (2,000 trials)")
  func requestRacesSettlement() {
    var (successes, failures) = (0, 0)
    for _ in 0..<2_000 {
      let evaluations = Counter()
      let input = ResultPromise<Int, TestError>()
      let caller = input.abandoningOnCancel(with: counted(evaluations, .other(0)))
      let seen = Log<Result<Int, TestError>>()
      caller.await(seen.append)
      caller.map { $0 }.await(seen.append)
      let ready = Counter()
      DispatchQueue.concurrentPerform(iterations: 2) { side in
        ready.increment()
        while ready.value < 2 {}  // both sides start together
        if side == 0 { input.succeed(5) } else { caller.cancel() }
      }
      let outcome = seen.values
      #expect(outcome.count == 2 && outcome[0] == outcome[1])
      switch outcome.first {
      case .success(5): successes += 1
      case .failure(.other(0)): failures += 1
      default: Issue.record("unexpected outcome \(outcome)")
      }
      #expect(evaluations.value == (caller.settledResult == .failure(.other(0)) ? 1 : 0))
    }
    // Both orders occur: the request won 10, 111 and 329 of 2,000 trials in three runs here.
    #expect(successes + failures == 2_000)
  }

  @Test("a settlement that comes while a request is deciding is dropped")
  func settlementWhileRequestDecides() {
    let (deciding, go) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
    let input = ResultPromise<Int, TestError>()
    let caller = input.abandoningOnCancel(
      with: {
        deciding.signal()  // the request has won, and is making its failure
        go.wait()
        return TestError.other(0)
      }())
    let seen = Log<Result<Int, TestError>>()
    caller.await(seen.append)
    let requested = DispatchSemaphore(value: 0)
    onNewThread {
      caller.cancel()
      requested.signal()
    }
    // Bounded only so that a broken build fails here instead of hanging; it never times out when correct.
    guard deciding.wait(timeout: .now() + 60) == .success else {
      Issue.record("the request never made its failure")
      go.signal()
      return
    }
    #expect(input.fulfil(with: .success(5)))
    go.signal()
    requested.wait()
    #expect(seen.values == [.failure(.other(0))])
  }

  @Test("a request that comes while the input's result is being delivered changes nothing")
  func requestWhileResultIsDelivered() {
    let (delivering, go) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
    let evaluations = Counter()
    let input = ResultPromise<Int, TestError>()
    let caller = input.abandoningOnCancel(with: counted(evaluations, .other(0)))
    let seen = Log<Result<Int, TestError>>()
    caller.await { result in
      delivering.signal()  // the input's result has settled the caller; its observers run
      go.wait()
      seen.append(result)
    }
    let settled = DispatchSemaphore(value: 0)
    onNewThread {
      input.succeed(5)
      settled.signal()
    }
    guard delivering.wait(timeout: .now() + 60) == .success else {  // bounded as above
      Issue.record("the input's result never reached the caller")
      go.signal()
      return
    }
    caller.cancel()
    go.signal()
    settled.wait()
    #expect(seen.values == [.success(5)])
    #expect(evaluations.value == 0)
  }

  @Test("the promise a caller left is let go at once, and one over a dropped input is freed with it")
  func nothingHeldPastTheOutcome() {
    BrokenPromiseReports.install()
    let input = ResultPromise<Int, TestError>()
    weak var left: ResultPromise<Int, TestError>?
    do {
      let caller = input.abandoningOnCancel(with: .boom)
      left = caller
      caller.cancel()
    }
    #expect(left == nil, "the input, still pending, no longer holds the caller that left")
    weak var dropped: ResultPromise<AbandonedInputMarker, TestError>?
    do {
      let pending = ResultPromise<AbandonedInputMarker, TestError>()
      dropped = pending.abandoningOnCancel(with: .boom)
    }
    #expect(dropped == nil, "no cycle through the request handler")
    #expect(input.isPending)
  }
}

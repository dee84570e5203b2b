import Dispatch
import Foundation
import ResultPromise
import Testing

/// Semantics 25: one run per key, callers who leave, the last one out stops it — without a race.
@Suite("SharedWork: one run per key")
struct SharingTests {
  /// A registry whose runs are `Work`s (a request fails one with `.stopped`), with every run it started.
  final class Loads: Sendable {
    let registry: SharedWork<Int, Int, TestError>
    let runs = Log<Work>()
    let keys = Log<Int>()

    init(stopsWhenAllLeave: Bool = true) {
      registry = SharedWork(stopsWhenAllLeave: stopsWhenAllLeave)
    }

    /// A caller of `key`, who hears `.boom` if it leaves.
    func caller(_ key: Int = 0) -> ResultPromise<Int, TestError> {
      registry.promise(for: key, leaving: .boom) { key in
        let work = Work()
        runs.append(work)
        keys.append(key)
        return work.promise
      }
    }
  }

  @Test("twenty callers share one run, and each gets its value")
  func twentyCallersShareOneRun() {
    let loads = Loads()
    let results = Log<Result<Int, TestError>>()
    for _ in 0..<20 { loads.caller().await { results.append($0) } }
    #expect(loads.runs.count == 1)
    #expect(loads.registry.isRunning(0))
    loads.runs.values[0].promise.succeed(7)
    #expect(results.values == Array(repeating: .success(7), count: 20))
    #expect(loads.runs.values[0].requests == 0)
    #expect(!loads.registry.isRunning(0), "a settled run is forgotten")
  }

  @Test("a caller who leaves hears its own failure at once; the others get the value, and the run goes on")
  func oneLeavesTheOthersGetTheValue() {
    let loads = Loads()
    let leaving = loads.caller()
    let staying = (0..<3).map { _ in loads.caller() }
    let heard = Log<Result<Int, TestError>>()
    leaving.await { heard.append($0) }
    leaving.cancel()
    #expect(heard.values == [.failure(.boom)])
    #expect(loads.runs.values[0].requests == 0, "the others still want the run")
    #expect(loads.registry.isRunning(0))
    let values = Log<Result<Int, TestError>>()
    for caller in staying { caller.await { values.append($0) } }
    loads.runs.values[0].promise.succeed(1)
    #expect(values.values == [.success(1), .success(1), .success(1)])
    #expect(heard.values == [.failure(.boom)], "a result after it left is dropped")
  }

  @Test("the last caller out stops the run once, and the next caller starts a new run")
  func lastOneOutStopsTheRun() {
    let loads = Loads()
    let callers = (0..<5).map { _ in loads.caller() }
    for caller in callers {
      caller.onFailure { _ in }
      caller.cancel()
    }
    let first = loads.runs.values[0]
    #expect(first.requests == 1)
    #expect(first.promise.settledResult == .failure(.stopped))
    #expect(!loads.registry.isRunning(0))
    let next = loads.caller()
    #expect(loads.runs.count == 2)
    loads.runs.values[1].promise.succeed(2)
    #expect(next.settledResult == .success(2))
    #expect(first.requests == 1, "stopped exactly once")
  }

  @Test("a caller settled by hand leaves too: when it was the last, the run stops")
  func aCallerSettledByHandLeaves() {
    let loads = Loads()
    let caller = loads.caller()
    caller.succeed(3)
    #expect(loads.runs.values[0].requests == 1)
    #expect(!loads.registry.isRunning(0))
    #expect(caller.settledResult == .success(3))
  }

  @Test("a caller's timeout that fires leaves the run: the first goes alone, the last stops the run")
  func aTimeoutThatFiresLeaves() async {
    let (loads, clock) = (Loads(), ManualClock())
    let first = loads.caller().timeout(.seconds(1), failure: .other(1), clock: clock)
    let second = loads.caller().timeout(.seconds(2), failure: .other(2), clock: clock)
    await eventually { clock.sleepers == 2 }
    clock.advance(by: .seconds(1))
    await eventually { !first.isPending }
    #expect(first.settledResult == .failure(.other(1)))
    #expect(loads.runs.values[0].requests == 0, "the second caller still wants the run")
    #expect(loads.registry.isRunning(0))
    clock.advance(by: .seconds(1))
    // The fired timeout settles its promise first, then its request leaves the run, on the timer's thread.
    await eventually("the last caller timed out: the run is stopped") { loads.runs.values[0].requests == 1 }
    #expect(second.settledResult == .failure(.other(2)))
    #expect(!loads.registry.isRunning(0))
  }

  @Test("a failed run is forgotten, and every caller gets its failure")
  func aFailedRunIsForgotten() {
    let loads = Loads()
    let callers = (0..<3).map { _ in loads.caller() }
    loads.runs.values[0].promise.fail(.other(5))
    for caller in callers { #expect(caller.settledResult == .failure(.other(5))) }
    #expect(!loads.registry.isRunning(0))
    let next = loads.caller()
    #expect(loads.runs.count == 2, "the next caller starts a new run")
    #expect(loads.runs.values[0].requests == 0, "a settled run is not asked to stop")
    loads.runs.values[1].promise.succeed(6)
    #expect(next.settledResult == .success(6))
  }

  @Test("stopsWhenAllLeave false: the run goes on after every caller left, and later callers join it")
  func runsToItsEnd() {
    let loads = Loads(stopsWhenAllLeave: false)
    let early = loads.caller()
    early.onFailure { _ in }
    early.cancel()
    #expect(early.settledResult == .failure(.boom))
    #expect(loads.runs.values[0].requests == 0)
    #expect(loads.registry.isRunning(0))
    let late = loads.caller()
    #expect(loads.runs.count == 1)
    loads.runs.values[0].promise.succeed(4)
    #expect(late.settledResult == .success(4))
    #expect(!loads.registry.isRunning(0))
  }

  @Test("forget: the next caller starts a new run; the old run's callers keep it, and its last out stops it")
  func forgetStartsANewRunForTheNextCaller() {
    let loads = Loads()
    let old = loads.caller()
    loads.registry.forget(0)
    #expect(!loads.registry.isRunning(0))
    let new = loads.caller()
    #expect(loads.runs.count == 2)
    loads.runs.values[1].promise.succeed(2)
    #expect(new.settledResult == .success(2))
    #expect(old.isPending)
    old.onFailure { _ in }
    old.cancel()
    #expect(loads.runs.values[0].requests == 1)
    #expect(loads.runs.values[1].requests == 0)
    loads.registry.forget(9)  // a key with no run: nothing happens
  }

  @Test("keys are apart: each has its own run, and leaving one stops only that one")
  func keysAreApart() {
    let loads = Loads()
    let (one, two) = (loads.caller(1), loads.caller(2))
    #expect(loads.keys.values == [1, 2])
    one.onFailure { _ in }
    one.cancel()
    #expect(loads.runs.values[0].requests == 1)
    #expect(loads.runs.values[1].requests == 0)
    #expect(!loads.registry.isRunning(1))
    #expect(loads.registry.isRunning(2))
    loads.runs.values[1].promise.succeed(2)
    #expect(two.settledResult == .success(2))
  }

  @Test("start may call the registry, for another key or its own, without a deadlock")
  func startMayCallTheRegistry() {
    let registry = SharedWork<String, Int, TestError>()
    let inner = ResultPromise<Int, TestError>()
    var joined: ResultPromise<Int, TestError>?
    let outer = registry.promise(for: "outer", leaving: .boom) { _ in
      joined = registry.promise(for: "outer", leaving: .boom) { _ in ResultPromise(error: .other(0)) }
      return registry.promise(for: "inner", leaving: .boom) { _ in inner }.map { $0 + 1 }
    }
    #expect(registry.isRunning("outer"))
    #expect(registry.isRunning("inner"))
    inner.succeed(1)
    #expect(outer.settledResult == .success(2))
    #expect(joined?.settledResult == .success(2), "a caller who came while start ran joined its run")
  }

  @Test("start runs once a run, on the calling thread, and a settled promise from it settles every caller")
  func aSettledStart() {
    let registry = SharedWork<Int, Int, TestError>()
    let starts = Counter()
    let thread = currentThreadID()
    let caller = registry.promise(for: 0, leaving: .boom) { key in
      starts.increment()
      #expect(currentThreadID() == thread)
      return ResultPromise(value: key + 1)
    }
    #expect(caller.settledResult == .success(1))
    #expect(starts.value == 1)
    #expect(!registry.isRunning(0))
  }

  @Test("the leaving failure is evaluated only when it is a caller's outcome")
  func theFailureIsEvaluatedOnlyThen() {
    let registry = SharedWork<Int, Int, TestError>()
    let evaluated = Counter()
    @Sendable func failure() -> TestError {
      evaluated.increment()
      return .boom
    }
    let work = Work()
    let (first, second) = (
      registry.promise(for: 0, leaving: failure()) { _ in work.promise },
      registry.promise(for: 0, leaving: failure()) { _ in work.promise }
    )
    second.onFailure { _ in }
    second.cancel()
    work.promise.succeed(1)
    #expect(first.settledResult == .success(1))
    #expect(second.settledResult == .failure(.boom))
    #expect(evaluated.value == 1)
  }

  @Test("a caller who left, and a run that is over, keep nothing: what they captured is released")
  func nothingStaysBehind() {
    let loads = Loads()
    let staying = loads.caller()
    var watched: [Watched] = []
    for _ in 0..<1_000 {
      let leaving = loads.caller()
      watched.append(Watched(leaving))
      leaving.onFailure { _ in }
      leaving.cancel()
    }
    #expect(watched.allSatisfy { $0.isReleased }, "each caller who left is freed at once, the run going on")
    let run = Watched(loads.runs.values[0].promise)
    loads.runs.values[0].promise.succeed(1)
    #expect(staying.settledResult == .success(1))
    let keys = SharedWork<Int, Tracked, TestError>()
    var starts = 0
    var tracked: [Watched] = []
    for key in 0..<1_000 {
      let caller = keys.promise(for: key, leaving: .boom) { _ in
        starts += 1
        return ResultPromise()
      }
      tracked.append(Watched(caller))
      caller.onFailure { _ in }
      caller.cancel()
    }
    #expect(starts == 1_000)
    #expect(tracked.allSatisfy { $0.isReleased })
    #expect((0..<1_000).allSatisfy { !keys.isRunning($0) })
    withExtendedLifetime(run) {}
  }

  @Test("a joiner and the last leaver, made to meet after the decision to stop: the joiner starts a new run")
  func aJoinerAfterTheLastLeaverDecidedStartsANewRun() {
    // The last caller's request stops the run; its handler holds the requesting thread while a new caller comes.
    let (stopping, resume) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
    let registry = SharedWork<Int, Int, TestError>()
    let first = registry.promise(for: 0, leaving: .boom) { _ in
      ResultPromise { done, onCancel in
        onCancel {
          stopping.signal()
          resume.wait()
          done(.failure(.stopped))
        }
      }
    }
    first.onFailure { _ in }
    onNewThread { first.cancel() }
    stopping.wait()
    let starts = Counter()
    let joiner = registry.promise(for: 0, leaving: .boom) { _ in
      starts.increment()
      return ResultPromise(value: 2)
    }
    resume.signal()
    #expect(starts.value == 1, "the joiner started a new run")
    #expect(joiner.settledResult == .success(2))
  }

  // MARK: Interest: the last caller out withdraws, so the work stops only if nothing else wants it

  @Test("the last caller out withdraws the run's interest: a map made elsewhere from the work keeps it going")
  func aMapElsewhereKeepsTheWork() {
    let (work, registry) = (Work(), SharedWork<Int, Int, TestError>())
    let elsewhere = work.promise.map { $0 + 1 }
    let caller = registry.promise(for: 0, leaving: .boom) { _ in work.promise }
    caller.onFailure { _ in }
    caller.cancel()
    #expect(work.requests == 0, "the map made elsewhere still wants the work")
    #expect(!registry.isRunning(0), "the run is forgotten all the same")
    elsewhere.onFailure { _ in }
    elsewhere.cancel()
    #expect(work.requests == 1, "asked to stop once nothing wants it, once")
    #expect(elsewhere.settledResult == .failure(.stopped))
  }

  @Test("two keys whose runs got the same promise: it stops when the last caller of both has left, once")
  func twoKeysShareOnePromise() {
    let (work, registry) = (Work(), SharedWork<Int, Int, TestError>())
    let one = registry.promise(for: 1, leaving: .boom) { _ in work.promise }
    let two = registry.promise(for: 2, leaving: .boom) { _ in work.promise }
    one.onFailure { _ in }
    one.cancel()
    #expect(work.requests == 0, "the run of key 2 still wants it")
    #expect(two.isPending)
    two.onFailure { _ in }
    two.cancel()
    #expect(work.requests == 1)
    #expect(!registry.isRunning(1) && !registry.isRunning(2))
  }

  @Test(
    "stopsWhenAllLeave false: the run wants its work to the end, so a request from elsewhere does not stop it"
  )
  func aRunThatStaysKeepsItsWork() {
    let (work, registry) = (Work(), SharedWork<Int, Int, TestError>(stopsWhenAllLeave: false))
    let caller = registry.promise(for: 0, leaving: .boom) { _ in work.promise }
    let elsewhere = work.promise.map { $0 + 1 }
    elsewhere.cancel()
    #expect(work.requests == 0, "the run still wants the work")
    work.promise.succeed(5)
    #expect(caller.settledResult == .success(5))
    #expect(elsewhere.settledResult == .success(6))
  }

  // MARK: The registry's lock: keys' code runs under no lock that promises or other registries use

  /// A key whose `hash(into:)` and `==` read another registry, a promise and the diagnostics handlers.
  struct Reader: Hashable, Sendable {
    let id: Int
    let reads: SharedWork<Int, Int, TestError>

    static func == (left: Reader, right: Reader) -> Bool {
      left.read()
      return left.id == right.id
    }

    func hash(into hasher: inout Hasher) {
      read()
      hasher.combine(id)
    }

    func read() {
      _ = reads.isRunning(0)
      _ = ResultPromise<Int, Never>(value: 0).isPending
      _ = PromiseDiagnostics.unheardFailureHandler
      _ = PromiseDiagnostics.brokenPromiseHandler
    }
  }

  /// The stripe of the shared lock table that 0.9.1 gave an object at this address (one in 64).
  static func tableStripe(of object: AnyObject) -> Int {
    let address = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
    return Int(truncatingIfNeeded: (address >> 4) ^ (address >> 12)) & 63
  }

  @Test("a key's hash may read another registry that 0.9.1 put on the same lock, and the handlers: no hang")
  func keysMayReadOtherLocks() {
    let first = SharedWork<Reader, Int, TestError>()
    // A registry at an address that 0.9.1's lock table put on the first's stripe: a key of the first that
    // read it spun for ever there, holding that stripe. The others are kept, so that each gets a new address.
    var others = [SharedWork<Int, Int, TestError>()]
    while Self.tableStripe(of: others[others.count - 1]) != Self.tableStripe(of: first) {
      others.append(SharedWork())
    }
    let colliding = others[others.count - 1]
    // And 200 registries whose keys read the handlers: in 0.9.1, each shared the handlers' stripe 1 in 64.
    let registries = (0..<200).map { _ in SharedWork<Reader, Int, TestError>() }
    let done = DispatchSemaphore(value: 0)
    let values = Counter()
    onNewThread {
      for registry in [first] + registries {
        let key = Reader(id: 1, reads: colliding)
        let caller = registry.promise(for: key, leaving: .boom) { _ in ResultPromise(value: 1) }
        if caller.settledResult == .success(1), !registry.isRunning(key) { values.increment() }
      }
      done.signal()
    }
    #expect(done.wait(timeout: .now() + 30) == .success, "a key's hash waited for ever on a lock")
    #expect(values.value == 201)
    withExtendedLifetime(others) {}
  }

  // MARK: A start that returns its own caller

  /// A value type only the next test uses, so that its reports can be told apart from the other suites'.
  struct SelfWaitMarker: Sendable, Equatable {}

  @Test("a start that returns its own run's caller promise is reported in debug builds, naming that call")
  func aStartThatReturnsItsOwnCallerIsReported() {
    BrokenPromiseReports.install()
    let registry = SharedWork<Int, SelfWaitMarker, TestError>()
    let inner = Locked<ResultPromise<SelfWaitMarker, TestError>?>(nil)
    let line = #line + 2
    let outer = registry.promise(for: 0, leaving: .boom) { key in
      let own = registry.promise(for: key, leaving: .other(1)) { _ in ResultPromise(value: SelfWaitMarker()) }
      inner.withLock { $0 = own }
      return own
    }
    let reports = BrokenPromiseReports.mentioning("SelfWaitMarker")
    #if DEBUG
      #expect(reports.count == 1)
      #expect(
        reports.keys.first?.contains("ResultPromiseTests/ResultPromise+SharingTests.swift:\(line)") == true)
      #expect(reports.keys.first?.contains("waits for itself") == true)
    #else
      #expect(reports.isEmpty, "release builds report nothing")
    #endif
    #expect(outer.isPending, "it waits for itself")
    // Its caller leaves, which settles the run, and with it every caller.
    inner.withLock { $0 }?.cancel()
    #expect(outer.settledResult == .failure(.other(1)))
  }
}

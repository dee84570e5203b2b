import Dispatch
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
}

// The scenarios, each contender side by side. A runner performs `ops` operations one after another and
// returns when the last has been delivered; every contender delivers the same values to `sink`.
import Dispatch
import ResultPromise
import Synchronization

typealias Runner = @Sendable (_ ops: Int) -> Void

func makeRunner(_ scenario: String, _ contender: String, _ p: Int) -> Runner? {
  // Consumers reach the sink through a captured reference, as callbacks and tasks capture their context.
  let s = sink
  switch (scenario, contender) {
  // MARK: A1 — bridge one callback, k synchronous steps, deliver to a consumer; driven from sync code
  // T — A1's job under throughput: 100 operations in flight at once, the driver waits for all 100
  case ("A1", _), ("T", _):
    guard let start = startOne(contender, p, s) else { return nil }
    let inFlight = scenario == "T" ? 100 : 1
    return eachInTurn(s, deliveries: inFlight) { operation in
      for i in 0..<inFlight { start(inFlight == 1 ? operation : i) }
    }

  // MARK: A2 — the same job from code that is already async: one task runs all operations
  case ("A2", "rp"):  // the promise awaited from async code
    return { ops in
      runInTask {
        for i in 0..<ops {
          var promise = ResultPromise<Int, E> { done in api(i, completion: done) }
          for _ in 0..<p { promise = promise.map { step($0) } }
          s.add((try? await promise.value) ?? -1)
        }
      }
    }
  case ("A2", "async"), ("A2", "async-unsafe"):
    let unsafe = contender == "async-unsafe"
    return { ops in
      runInTask {
        for i in 0..<ops {
          do {
            var v = unsafe ? try await apiAsyncUnsafe(i) : try await apiAsync(i)
            for _ in 0..<p { v = step(v) }
            s.add(v)
          } catch { s.add(-1) }
        }
      }
    }

  // MARK: B — n sequential asynchronous steps, each a callback on a global queue
  case ("B", "floor"):  // hand-written recursion through the callbacks
    @Sendable func loop(_ v: Int, _ left: Int) {
      if left == 0 { return s.deliver(v) }
      api(v) { r in loop(val(r), left - 1) }
    }
    return eachInTurn(s) { _ in
      loop(0, p)
    }
  case ("B", "rp"):
    return eachInTurn(s) { _ in
      let root = ResultPromise<Int, E>()
      var promise = root
      for _ in 0..<p {
        promise = promise.thenAsync { v in ResultPromise { done in api(v, completion: done) } }
      }
      promise.await { s.deliver(val($0)) }
      root.succeed(0)
    }
  case ("B", "async"), ("B", "async-unsafe"):
    let unsafe = contender == "async-unsafe"
    return eachInTurn(s) { _ in
      Task {
        do {
          var v = 0
          for _ in 0..<p { v = unsafe ? try await apiAsyncUnsafe(v) : try await apiAsync(v) }
          s.deliver(v)
        } catch { s.deliver(-1) }
      }
    }

  // MARK: C — one result, N waiters
  case ("C", "rp"):  // N observers
    return eachInTurn(s, deliveries: p) { _ in
      let promise = ResultPromise<Int, E> { done in api(7, completion: done) }
      for _ in 0..<p { promise.await { s.deliver(val($0)) } }
    }
  case ("C", "rp-tasks"):  // N tasks awaiting the promise's value
    return eachInTurn(s, deliveries: p) { _ in
      let promise = ResultPromise<Int, E> { done in api(7, completion: done) }
      for _ in 0..<p { Task { s.deliver((try? await promise.value) ?? -1) } }
    }
  case ("C", "async"):  // one task whose value N tasks await
    return eachInTurn(s, deliveries: p) { _ in
      let source = Task { try await apiAsync(7) }
      for _ in 0..<p { Task { s.deliver((try? await source.value) ?? -1) } }
    }

  case ("C", "async-immediate"):  // the waiters start at once and register on the source task
    return eachInTurn(s, deliveries: p) { _ in
      let source = Task.immediate { try await apiAsync(7) }
      for _ in 0..<p { Task.immediate { s.deliver((try? await source.value) ?? -1) } }
    }
  // Cx — as C, but each waiter captures two things (the sink and its index), as most real callbacks do
  case ("Cx", "rp"):
    return eachInTurn(s, deliveries: p) { _ in
      let promise = ResultPromise<Int, E> { done in api(7, completion: done) }
      for i in 0..<p { promise.await { s.deliver(val($0) &+ zero(i)) } }
    }
  case ("Cx", "async"):
    return eachInTurn(s, deliveries: p) { _ in
      let source = Task { try await apiAsync(7) }
      for i in 0..<p { Task { s.deliver(((try? await source.value) ?? -1) &+ zero(i)) } }
    }

  // MARK: F — main-thread hop: each operation starts on the main queue and k steps run on the main actor
  // (the driver is a background thread; the main thread runs dispatchMain)
  case ("F", "floor"):
    return eachInTurn(s) { i in
      DispatchQueue.main.async {
        api(i) { r in
          DispatchQueue.main.async {
            guard case .success(var v) = r else { return s.deliver(-1) }
            for _ in 0..<p { v = step(v) }
            s.deliver(v)
          }
        }
      }
    }
  case ("F", "rp"):  // app style: onMainActor
    return eachInTurn(s) { i in
      DispatchQueue.main.async {
        MainActor.assumeIsolated {
          var promise = ResultPromise<Int, E> { done in api(i, completion: done) }.onMainActor
          for _ in 0..<p { promise = promise.map { step($0) } }
          promise.await { s.deliver(val($0)) }
        }
      }
    }
  case ("F", "async"), ("F", "async-immediate"):  // app style: a main-actor task
    let immediate = contender == "async-immediate"
    return eachInTurn(s) { i in
      DispatchQueue.main.async {
        MainActor.assumeIsolated {
          if immediate {
            Task.immediate { @MainActor in await mainStepsAsync(s, i, p) }
          } else {
            Task { @MainActor in await mainStepsAsync(s, i, p) }
          }
        }
      }
    }

  // MARK: D — all of N concurrent callbacks, values in input order
  case ("D", "rp"):
    return eachInTurn(s) { _ in
      let inputs = (0..<p).map { i in ResultPromise<Int, E> { done in api(i, completion: done) } }
      ResultPromise.all(inputs).await { r in
        switch r {
        case .success(let values): s.deliver(values.reduce(0, &+))
        case .failure: s.deliver(-1)
        }
      }
    }
  case ("D", "async"), ("D", "async-immediate"):
    let immediate = contender == "async-immediate"
    return eachInTurn(s) { _ in
      if immediate { Task.immediate { await allAsync(s, p) } } else { Task { await allAsync(s, p) } }
    }

  // MARK: E — one in-flight load shared by 10 callers; 5 leave before it finishes
  case ("E", "rp"):  // callers are observers of abandoningOnCancel promises
    return { ops in
      for _ in 0..<ops {
        let slot = LoadSlot()
        let shared = sharedLoad(slot)
        s.arm(5)
        var callers: [ResultPromise<Int, E>] = []
        callers.reserveCapacity(10)
        for _ in 0..<10 {
          let caller = shared.abandoningOnCancel(with: .cancelled)
          caller.await { r in s.deliver(r.leftOrValue) }
          callers.append(caller)
        }
        for i in 0..<5 { callers[i].cancel() }
        precondition(s.wait(seconds: 20), "E rp: the callers who left were not answered at once")
        finishLoad(slot)
        withExtendedLifetime(shared) {}
      }
    }
  case ("E", "rp-tasks"):  // callers are tasks awaiting valueAbandoningOnCancel()
    return { ops in
      for _ in 0..<ops {
        let slot = LoadSlot()
        let shared = sharedLoad(slot)
        awaitFromTasks(s, "rp-tasks") { try await shared.valueAbandoningOnCancel() }
        finishLoad(slot)
        withExtendedLifetime(shared) {}
      }
    }
  case ("E", "async"):  // callers are tasks awaiting a hand-written shared load (SharedLoad below)
    return { ops in
      for _ in 0..<ops {
        let slot = LoadSlot()
        let shared = SharedLoad(onLastLeave: {})  // the load would stop here
        slot.done = { shared.settle($0) }  // startLoad { shared.settle($0) }
        awaitFromTasks(s, "async") { try await shared.value() }
        finishLoad(slot)
      }
    }
  default:
    return nil
  }
}

/// E's shared load as a promise: its completion handler goes to `slot`; a request would stop the load.
func sharedLoad(_ slot: LoadSlot) -> ResultPromise<Int, E> {
  ResultPromise { done, onCancel in
    slot.done = done
    onCancel {}  // the load would stop here, once every caller has left
  }
}

/// E's callers as tasks: 10 tasks await `value`; 5 are cancelled and must be answered at once, before the
/// load finishes.
func awaitFromTasks(_ s: Sink, _ contender: String, _ value: @escaping @Sendable () async throws -> Int) {
  s.arm(5)
  started.arm(10)
  let tasks = (0..<10).map { _ in
    Task {
      started.deliver(0)
      do { s.deliver(try await value()) } catch { s.deliver(1000) }
    }
  }
  started.wait()
  for i in 0..<5 { tasks[i].cancel() }
  precondition(s.wait(seconds: 20), "E \(contender): the callers who left were not answered at once")
}

/// D's async body: a throwing task group, values put back in input order.
func allAsync(_ s: Sink, _ p: Int) async {
  do {
    let values = try await withThrowingTaskGroup(of: (Int, Int).self, returning: [Int].self) { group in
      for i in 0..<p { group.addTask { (i, try await apiAsync(i)) } }
      var out = [Int](repeating: 0, count: p)
      for try await (i, v) in group { out[i] = v }
      return out
    }
    s.deliver(values.reduce(0, &+))
  } catch { s.deliver(-1) }
}

/// A runner that performs its operations one at a time: arms the sink for `deliveries`, starts operation
/// number `operation` with `start`, and waits for them.
func eachInTurn(
  _ s: Sink, deliveries: Int = 1, _ start: @escaping @Sendable (_ operation: Int) -> Void
) -> Runner {
  { ops in
    for operation in 0..<ops {
      s.arm(deliveries)
      start(operation)
      s.wait()
    }
  }
}

/// Starts one of A1's (and T's) operations on input `i`: `contender`'s way to bridge the API, take `p` steps
/// and deliver to `s`.
func startOne(_ contender: String, _ p: Int, _ s: Sink) -> (@Sendable (_ i: Int) -> Void)? {
  switch contender {
  case "floor":  // hand-written nested callback: the physical floor of this job
    return { i in
      api(i) { r in
        guard case .success(var v) = r else { return s.deliver(-1) }
        for _ in 0..<p { v = step(v) }
        s.deliver(v)
      }
    }
  case "rp":
    return { i in
      var promise = ResultPromise<Int, E> { done in api(i, completion: done) }
      for _ in 0..<p { promise = promise.map { step($0) } }
      promise.await { s.deliver(val($0)) }
    }
  case "async": return { i in Task { await stepsAsync(s, i, p) } }
  case "async-unsafe": return { i in Task { await stepsAsync(s, i, p, unsafe: true) } }
  // Swift 6.2's Task.immediate: runs on the caller's thread up to the first await.
  case "async-immediate": return { i in Task.immediate { await stepsAsync(s, i, p) } }
  default: return nil
  }
}

/// A1's and T's async body: await the API, k steps, deliver.
func stepsAsync(_ s: Sink, _ i: Int, _ p: Int, unsafe: Bool = false) async {
  do {
    var v = unsafe ? try await apiAsyncUnsafe(i) : try await apiAsync(i)
    for _ in 0..<p { v = step(v) }
    s.deliver(v)
  } catch { s.deliver(-1) }
}

/// F's async body, on the main actor: await the API, k steps, deliver.
@MainActor func mainStepsAsync(_ s: Sink, _ i: Int, _ p: Int) async {
  do {
    var v = try await apiAsync(i)
    for _ in 0..<p { v = step(v) }
    s.deliver(v)
  } catch { s.deliver(-1) }
}

extension Result where Success == Int, Failure == E {
  /// 1000 for a caller who left, the value otherwise.
  var leftOrValue: Int { if case .success(let v) = self { return v } else { return 1000 } }
}

/// Completes the shared load from another thread, as its API would, and waits for the 5 callers left.
func finishLoad(_ slot: LoadSlot) {
  sink.arm(5)
  let done = slot.done!
  slot.done = nil
  DispatchQueue.global().async { done(.success(42)) }
  sink.wait()
}

/// What a competent developer writes for E with async/await: a shared result, and per-caller continuations
/// that a caller's cancellation resumes at once (Task.value cannot: it waits for the task to end). When the
/// last waiter leaves before the result, the load is asked to stop.
final class SharedLoad: Sendable {
  struct State: ~Copyable {
    var result: Result<Int, E>?
    var waiters: [Int: CheckedContinuation<Int, Error>] = [:]
    var nextID = 0
  }
  let state = Mutex(State())
  let onLastLeave: @Sendable () -> Void
  init(onLastLeave: @escaping @Sendable () -> Void) { self.onLastLeave = onLastLeave }

  func settle(_ r: Result<Int, E>) {
    let waiters = state.withLock { s -> [Int: CheckedContinuation<Int, Error>] in
      guard s.result == nil else { return [:] }
      s.result = r
      defer { s.waiters = [:] }
      return s.waiters
    }
    for c in waiters.values { c.resume(with: r) }
  }

  func value() async throws -> Int {
    let id = state.withLock { s in
      defer { s.nextID += 1 }
      return s.nextID
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (c: CheckedContinuation<Int, Error>) in
        let now: Result<Int, Error>? = state.withLock { s in
          if let r = s.result { return r.mapError { $0 } }
          if Task.isCancelled { return .failure(CancellationError()) }
          s.waiters[id] = c
          return nil
        }
        if let now { c.resume(with: now) }
      }
    } onCancel: {
      let (c, last) = state.withLock { s in
        let c = s.waiters.removeValue(forKey: id)
        return (c, c != nil && s.waiters.isEmpty && s.result == nil)
      }
      c?.resume(throwing: CancellationError())
      if last { onLastLeave() }
    }
  }
}

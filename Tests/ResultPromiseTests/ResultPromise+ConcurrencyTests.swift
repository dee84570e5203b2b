import Dispatch
import Foundation
import ResultPromise
import Testing

@Suite("Swift Concurrency bridge: value, result, init(priority:operation:)")
struct ConcurrencyTests {
  func later<S: Sendable, F: Error>(_ result: Result<S, F>) -> ResultPromise<S, F> {
    ResultPromise { fulfil in
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { fulfil(result) }
    }
  }

  @Test("value returns the success value")
  func valueSucceeds() async throws {
    #expect(try await later(Result<Int, TestError>.success(4)).value == 4)
  }

  @Test("value throws the typed failure")
  func valueThrowsTypedError() async {
    do throws(TestError) {
      _ = try await later(Result<Int, TestError>.failure(.other(9))).value
      Issue.record("value should have thrown")
    } catch {
      #expect(error == .other(9))
    }
  }

  @Test("value needs no try when Failure is Never")
  func valueWithoutTry() async {
    let promise = ResultPromise<String, Never>(value: "no try")
    let value = await promise.value
    #expect(value == "no try")
  }

  @Test("result returns the whole result")
  func resultReturnsResult() async {
    #expect(await later(Result<Int, TestError>.failure(.boom)).result == .failure(.boom))
  }

  @Test("init(priority:operation:) settles with the operation's value or thrown error")
  func initFromAsyncOperation() async {
    let succeeded = ResultPromise<Int, TestError>(priority: .userInitiated) {
      () async throws(TestError) -> Int in
      try? await Task.sleep(for: .milliseconds(5))
      return 11
    }
    let failed = ResultPromise<Int, TestError> { () async throws(TestError) -> Int in throw .other(12) }
    #expect(await succeeded.result == .success(11))
    #expect(await failed.result == .failure(.other(12)))
  }

  @Test("many tasks awaiting one promise all resume exactly once with its value")
  func manyAwaiters() async {
    let promise = ResultPromise<Int, TestError>()
    let resumed = Counter()
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<500 {
        group.addTask {
          if case .success(42) = await promise.result { resumed.increment() }
        }
      }
      try? await Task.sleep(for: .milliseconds(20))
      promise.succeed(42)
    }
    #expect(resumed.value == 500)
  }

  @Test("a cancelled awaiting task keeps waiting and resumes with the value once the promise settles")
  func cancellationKeepsWaiting() async throws {
    let promise = ResultPromise<Int, TestError>()
    let resumed = Counter()
    let task = Task {
      let value = try await promise.value
      resumed.increment()
      return value
    }
    try await Task.sleep(for: .milliseconds(20))
    task.cancel()
    try await Task.sleep(for: .milliseconds(50))
    #expect(resumed.value == 0)
    promise.succeed(8)
    #expect(try await task.value == 8)
    #expect(resumed.value == 1)
  }

  @Test("a timeout bounds the wait of a cancelled task, as the docs suggest")
  func timeoutBoundsWait() async {
    let promise = ResultPromise<Int, TestError>()
    let task = Task { await promise.timeout(.milliseconds(30), failure: .boom).result }
    task.cancel()
    #expect(await task.value == .failure(.boom))
  }

  // MARK: Abandoning the wait on cancellation

  /// Waits, without blocking a thread, until a task has counted itself started, and a little longer, so
  /// that it is most likely suspended in its wait. (Either way it must end with `CancellationError`.)
  func waitUntilStarted(_ started: Counter) async {
    while started.value == 0 { await Task.yield() }
    try? await Task.sleep(for: .milliseconds(20))
  }

  @Test("a cancelled task returns at once from valueAbandoningOnCancel; the promise goes on for others")
  func abandonOnCancel() async {
    let promise = ResultPromise<Int, TestError>()
    let started = Counter()
    let waiter = Task {
      started.increment()
      return try await promise.valueAbandoningOnCancel()
    }
    await waitUntilStarted(started)
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    #expect(promise.isPending)
    let later = Log<Int>()
    promise.onSuccess(later.append)
    promise.succeed(8)
    #expect(later.values == [8])
  }

  @Test("a task cancelled before the call gets CancellationError without waiting")
  func cancelledBeforeTheCall() async {
    let promise = ResultPromise<Int, TestError>()
    let threw = await Task { () -> Bool in
      withUnsafeCurrentTask { $0?.cancel() }
      do {
        _ = try await promise.resultAbandoningOnCancel()
        return false
      } catch {
        return true
      }
    }.value
    #expect(threw)
    #expect(promise.isPending)
  }

  @Test("without cancellation, the abandoning variants return the result, value or typed failure")
  func behavesLikeValueWithoutCancellation() async throws {
    #expect(try await later(Result<Int, TestError>.success(3)).valueAbandoningOnCancel() == 3)
    #expect(
      try await later(Result<Int, TestError>.failure(.boom)).resultAbandoningOnCancel() == .failure(.boom))
    await #expect(throws: TestError.boom) {
      try await self.later(Result<Int, TestError>.failure(.boom)).valueAbandoningOnCancel()
    }
    // A settled promise answers even a cancelled task: it did not have to wait.
    let settled = ResultPromise<Int, TestError>(value: 4)
    let answer = await Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try? await settled.valueAbandoningOnCancel()
    }.value
    #expect(answer == 4)
  }

  @Test("racing cancellation against settlement resumes every task exactly once, one way or the other")
  func cancelRacesSettle() async {
    let trials = 2_000
    let resumed = Counter()
    let cancelled = Counter()
    let valued = Counter()
    await withTaskGroup(of: Void.self) { group in
      for trial in 0..<trials {
        let promise = ResultPromise<Int, TestError>()
        let waiter = Task {
          defer { resumed.increment() }
          do {
            #expect(try await promise.valueAbandoningOnCancel() == trial)
            valued.increment()
          } catch {
            #expect(error is CancellationError)
            cancelled.increment()
          }
        }
        group.addTask { waiter.cancel() }
        group.addTask { promise.succeed(trial) }
        group.addTask { await waiter.value }
        if trial % 100 == 99 { await group.waitForAll() }
      }
    }
    #expect(resumed.value == trials)
    #expect(cancelled.value + valued.value == trials)
  }

  // `Task.immediate` runs the task on this thread up to its first suspension: here, until the task's wait is
  // registered on the promise. So these races are made in a fixed order, with no timer.

  @Test(
    "a task cancelled while it waits throws CancellationError at once; the work it alone wanted is stopped")
  func cancelWhileSuspended() async throws {
    guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return }
    let work = Work()  // a request fails its promise with `.stopped`
    let waiter = Task.immediate { try await work.promise.valueAbandoningOnCancel() }
    #expect(work.requests == 0)
    waiter.cancel()
    // The task left before the work's answer came, so it hears that it left, not the answer.
    await #expect(throws: CancellationError.self) { try await waiter.value }
    #expect(work.requests == 1)
    #expect(work.promise.settledResult == .failure(.stopped))
  }

  @Test(
    "a task cancelled after the promise settled, while its delivery runs an earlier observer, gets the outcome"
  )
  func cancelAfterSettledWhileDelivering() async throws {
    guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return }
    let promise = ResultPromise<Int, TestError>()
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    promise.await { _ in
      entered.signal()
      gate.wait()
    }
    let waiter = Task.immediate { try await promise.valueAbandoningOnCancel() }
    Thread { promise.succeed(7) }.start()
    entered.wait()  // settled; the delivery holds the earlier observer on the other thread
    waiter.cancel()
    gate.signal()
    #expect(try await waiter.value == 7)
  }

  @Test("tasks awaiting value and result are resumed by the settling thread's delivery, each exactly once")
  func awaitingTasksResumeFromDelivery() async throws {
    guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return }
    let promise = ResultPromise<Int, TestError>()
    let values = (0..<50).map { _ in Task.immediate { try await promise.value } }
    let results = (0..<50).map { _ in Task.immediate { await promise.result } }
    let abandoning = (0..<50).map { _ in Task.immediate { try await promise.valueAbandoningOnCancel() } }
    promise.succeed(3)
    for task in values + abandoning { #expect(try await task.value == 3) }
    for task in results { #expect(await task.value == .success(3)) }
  }

  @Test("an abandoned wait keeps nothing of its task alive while the promise stays pending")
  func abandonedWaitKeepsNothingAlive() async {
    let promise = ResultPromise<Int, TestError>()
    weak var captured: Tracked?
    do {
      let tracked = Tracked()
      captured = tracked
      let started = Counter()
      let waiter = Task {
        started.increment()
        _ = try? await promise.valueAbandoningOnCancel()
        _ = tracked
      }
      await waitUntilStarted(started)
      waiter.cancel()
      await waiter.value
    }
    #expect(captured == nil)
    #expect(promise.isPending)
  }

  @Test("many tasks (100,000 in CI) abandon one promise that never settles, and each returns")
  func manyAbandonedWaiters() async {
    let promise = ResultPromise<Int, TestError>()
    let cancelledCount = Counter()
    let tasks = TestSize.of(full: 100_000, quick: 10_000)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<tasks {
        group.addTask {
          withUnsafeCurrentTask { $0?.cancel() }
          do {
            _ = try await promise.resultAbandoningOnCancel()
          } catch {
            cancelledCount.increment()
          }
        }
      }
    }
    #expect(cancelledCount.value == tasks)
    #expect(promise.isPending)
  }
}

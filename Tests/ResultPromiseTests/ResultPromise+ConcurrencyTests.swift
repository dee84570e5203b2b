import Dispatch
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
}

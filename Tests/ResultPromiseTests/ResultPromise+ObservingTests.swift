import Foundation
import ResultPromise
import Testing

@Suite("Observing: onSuccess, onFailure, always")
struct ObservingTests {
  @Test("onSuccess runs with the value on success and not on failure, and returns the same promise")
  func onSuccess() {
    let seen = Log<Int>()
    let promise = ResultPromise<Int, TestError>()
    #expect(promise.onSuccess(seen.append) === promise)
    ResultPromise<Int, TestError>(error: .boom).onSuccess(seen.append)
    promise.succeed(3)
    #expect(seen.values == [3])
  }

  @Test("onFailure runs with the error on failure and not on success, and returns the same promise")
  func onFailure() {
    let seen = Log<TestError>()
    let promise = ResultPromise<Int, TestError>()
    #expect(promise.onFailure(seen.append) === promise)
    ResultPromise<Int, TestError>(value: 1).onFailure(seen.append)
    promise.fail(.other(2))
    #expect(seen.values == [.other(2)])
  }

  @Test("onSuccess and onFailure chain on one promise and keep registration order")
  func chainedObservers() {
    let order = Log<String>()
    let promise = ResultPromise<Int, TestError>()
    promise
      .onSuccess { order.append("success \($0)") }
      .onFailure { order.append("failure \($0)") }
      .onSuccess { order.append("again \($0)") }
    promise.succeed(1)
    #expect(order.values == ["success 1", "again 1"])
  }

  @Test("always runs on success and on failure, then passes the same result on")
  func alwaysPassesResultOn() {
    let ran = Log<Result<Int, TestError>>()
    let passed = Log<Result<Int, TestError>>()
    ResultPromise<Int, TestError>(value: 1).always(ran.append).await(passed.append)
    ResultPromise<Int, TestError>(error: .boom).always(ran.append).await(passed.append)
    #expect(ran.values == [.success(1), .failure(.boom)])
    #expect(passed.values == ran.values)
  }

  @Test("the promise from always settles only after its body has returned")
  func alwaysSettlesAfterBody() {
    let order = Log<String>()
    let root = ResultPromise<Int, TestError>()
    let next = root.always { _ in order.append("body") }
    next.await { _ in order.append("next observer") }
    #expect(next.isPending)
    root.succeed(1)
    #expect(order.values == ["body", "next observer"])
  }

  @Test("onSuccess, onFailure and always registered earlier run on the thread that settles the promise")
  func observersRunOnSettlingThread() async {
    let success = ResultPromise<Int, TestError>()
    let failure = ResultPromise<Int, TestError>()
    let ranOn = Log<ObjectIdentifier>()
    success.onSuccess { _ in ranOn.append(currentThreadID()) }
    failure.onFailure { _ in ranOn.append(currentThreadID()) }
    success.always { _ in ranOn.append(currentThreadID()) }.onSuccess { _ in ranOn.append(currentThreadID()) }
    let settler = Log<ObjectIdentifier>()
    await onSmallStack {
      settler.append(currentThreadID())
      success.succeed(1)
      failure.fail(.boom)
    }
    #expect(ranOn.count == 4)
    #expect(Set(ranOn.values) == Set(settler.values))
  }

  @Test("on a settled promise, onSuccess and always run on the calling thread before returning")
  func settledObserversRunSynchronously() {
    let ranOn = Log<ObjectIdentifier>()
    let promise = ResultPromise<Int, TestError>(value: 1)
    promise.onSuccess { _ in ranOn.append(currentThreadID()) }
    _ = promise.always { _ in ranOn.append(currentThreadID()) }
    #expect(ranOn.values == [currentThreadID(), currentThreadID()])
  }

  // MARK: settledResult

  @Test("settledResult is nil while pending and the outcome once settled, either way")
  func settledResultBeforeAndAfter() {
    let promise = ResultPromise<Int, TestError>()
    #expect(promise.settledResult == nil)
    promise.succeed(4)
    #expect(promise.settledResult == .success(4))
    #expect(ResultPromise<Int, TestError>(error: .boom).settledResult == .failure(.boom))
    promise.succeed(5)
    #expect(promise.settledResult == .success(4), "a later fulfil changes nothing")
  }

  @Test("settledResult sees the outcome while a delivery is still under way on another thread")
  func settledResultDuringDelivery() {
    let promise = ResultPromise<Int, TestError>()
    let observerRunning = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let delivered = DispatchSemaphore(value: 0)
    promise.await { _ in
      observerRunning.signal()
      release.wait()  // the delivery stays under way until the test has read
    }
    Thread {
      promise.succeed(7)
      delivered.signal()
    }.start()
    observerRunning.wait()
    #expect(promise.settledResult == .success(7))
    release.signal()
    delivered.wait()
    #expect(promise.settledResult == .success(7))
  }

  @Test("settledResult is never stale once fulfil has returned on another thread (2,000 trials)")
  func settledResultNeverStale() {
    let stale = Counter()
    let wrong = Counter()
    for trial in 0..<2_000 {
      let promise = ResultPromise<Int, TestError>()
      let settled = DispatchSemaphore(value: 0)
      let done = DispatchSemaphore(value: 0)
      Thread {
        // Racing reads while the other thread settles: each is nil or the outcome, nothing else.
        for _ in 0..<20 where promise.settledResult.map({ $0 != .success(trial) }) == true {
          wrong.increment()
        }
        settled.wait()
        if promise.settledResult != .success(trial) { stale.increment() }
        done.signal()
      }.start()
      promise.succeed(trial)
      settled.signal()
      done.wait()
    }
    #expect(stale.value == 0)
    #expect(wrong.value == 0)
  }

  @Test("setFailureType(to:) types a promise that cannot fail for a chain that can, and passes requests on")
  func setFailureType() {
    let seen = Log<Result<String, TestError>>()
    let never = ResultPromise<Int, Never>()
    let typed = never.setFailureType(to: TestError.self)
      .then { $0 > 0 ? .success("\($0)") : .failure(.boom) }
    #expect(staticType(of: typed) == ResultPromise<String, TestError>.self)
    typed.await(seen.append)
    never.succeed(1)
    #expect(seen.values == [.success("1")])
    let stops = Counter()
    let work = ResultPromise<Int, Never> { done, onCancel in
      onCancel {
        stops.increment()
        done(.success(0))
      }
    }
    let chained = work.setFailureType(to: TestError.self).map { $0 + 1 }
    chained.cancel()
    #expect(stops.value == 1)
    #expect(chained.settledResult == .success(1))
  }
}

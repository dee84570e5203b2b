// The calls of Calls.swift inside `if #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)`: there they mean
// the `Duration` forms, whatever the deployment target.
import ResultPromise

func callsWhereDurationIsAvailable(_ promise: ResultPromise<Int, TimerError>) {
  if #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *) {
    _ = promise.timeout(.seconds(1), failure: .late)
    _ = promise.delay(.milliseconds(300))
    _ = promise.delay(.milliseconds(300), ifCancelled: .gone)
    _ = ResultPromise<Int, TimerError>.after(.seconds(3), value: 1)
    _ = ResultPromise<Int, TimerError>.after(.seconds(3), value: 1, ifCancelled: .gone)
    _ = ResultPromise<Int, TimerError>.retry(attempts: 3, delay: .milliseconds(200)) { promise }
    _ = ResultPromise<Int, TimerError>.retry(attempts: 3) { promise }
    _ = ResultPromise<Int, TimerError>.retry(attempts: 3, backoff: { .milliseconds(100 << $0) }) { promise }
  }
}

@MainActor func mainActorCallWhereDurationIsAvailable(_ promise: ResultPromise<Int, TimerError>) {
  if #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *) {
    _ = promise.onMainActor.timeout(.seconds(10), failure: .late)
  }
}

// Today's calls of the timed operators, as app code writes them: each literal (`.seconds(1)`) is both a
// `Duration` and a `DispatchTimeInterval`. `check` type-checks this file at iOS 13 and iOS 16 and reads
// which form each call resolved to. Inside `if #available(iOS 16, …)` the same calls are in Available.swift.
import ResultPromise

enum TimerError: Error { case late, gone }

func todaysCalls(_ promise: ResultPromise<Int, TimerError>) {
  _ = promise.timeout(.seconds(1), failure: .late)
  _ = promise.delay(.milliseconds(300))
  _ = promise.delay(.milliseconds(300), ifCancelled: .gone)
  _ = ResultPromise<Int, TimerError>.after(.seconds(3), value: 1)
  _ = ResultPromise<Int, TimerError>.after(.seconds(3), value: 1, ifCancelled: .gone)
  _ = ResultPromise<Int, TimerError>.retry(attempts: 3, delay: .milliseconds(200)) { promise }
  _ = ResultPromise<Int, TimerError>.retry(attempts: 3) { promise }
  _ = ResultPromise<Int, TimerError>.retry(attempts: 3, backoff: { .milliseconds(100 << $0) }) { promise }
}

@MainActor func todaysMainActorCall(_ promise: ResultPromise<Int, TimerError>) {
  _ = promise.onMainActor.timeout(.seconds(10), failure: .late)
}

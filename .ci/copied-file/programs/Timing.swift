// The timing file with what it needs (`Scripts/vendor --with Timing`): a value after a wait, a timeout,
// and a wait that a request ends at once.
// Expect: timing, after: 42
// Expect: timing, timeout: timedOut
// Expect: timing, a cancelled wait: gone
// Expect: timing, after on a Dispatch timer: 43
// Expect: timing, a timeout on a Dispatch timer: timedOut
// Expect: timing, retry with back-off: timedOut
// Expect: timing, retry with back-off on a Dispatch timer: timedOut

import Dispatch

enum LoadError: Error { case timedOut, gone }

show("timing, after:", ResultPromise<Int, LoadError>.after(.milliseconds(10), value: 42))
let never = ResultPromise<Int, LoadError>()  // kept to the end: a dropped pending promise is reported
show("timing, timeout:", never.timeout(.milliseconds(10), failure: .timedOut))
let wait = ResultPromise<Int, LoadError>.after(.seconds(60), value: 0, ifCancelled: .gone)
wait.cancel()
show("timing, a cancelled wait:", wait)
let interval: DispatchTimeInterval = .milliseconds(10)  // the forms for systems older than iOS 16
show("timing, after on a Dispatch timer:", ResultPromise<Int, LoadError>.after(interval, value: 43))
show("timing, a timeout on a Dispatch timer:", never.timeout(interval, failure: .timedOut))
// Three tries, 5 ms and 10 ms apart, each failing: the last failure is reported.
show("timing, retry with back-off:", ResultPromise<Int, LoadError>.retry(attempts: 3, backoff: { .milliseconds(5 * $0) }) {
  ResultPromise(error: .timedOut)
})
let backoff: @Sendable (Int) -> DispatchTimeInterval = { .milliseconds(5 * $0) }
show("timing, retry with back-off on a Dispatch timer:", ResultPromise<Int, LoadError>.retry(attempts: 3, backoff: backoff) {
  ResultPromise(error: .timedOut)
})
never.fail(.gone)

// A main-actor closure that spins a nested run loop (a modal dialog, XCTest's `wait`) lets the main
// queue run the hops of other promises inside it. What those hops run must still wait until the running
// closure returns, in order, as any work set off inside a callback does. This needs a real main run loop,
// which a test runner does not give (on Linux its main actor is a dispatch queue, not the main thread),
// hence a program of its own: exits 0 if the order holds, 1 with the order it saw otherwise.
import Dispatch
import Foundation
import ResultPromise

let outer = ResultPromise<Int, Never>()
let inner = ResultPromise<Int, Never>()
let nested = ResultPromise<Int, Never>()
nonisolated(unsafe) var log: [String] = []  // only touched on the main thread

nested.onMainActor.await { _ in log.append("nested") }
inner.onMainActor.await { _ in
  log.append("inner")
  nested.succeed(3)  // set off inside a callback: queued behind it
  log.append("inner ends")
}
outer.onMainActor.await { _ in
  log.append("outer begins")
  DispatchQueue.global().async { inner.succeed(2) }  // its closure hops to the main queue
  RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.2))  // which this nested loop runs
  log.append("outer ends")
}

// A timer fires on the main thread outside any main-queue block: there a nested run loop runs the main
// queue, as in an app.
let timer = Timer(timeInterval: 0, repeats: false) { _ in
  outer.succeed(1)
  let expected = ["outer begins", "outer ends", "inner", "inner ends", "nested"]
  if log == expected {
    print("ok: a hop run by a nested run loop waits for the running closure: \(log)")
    exit(0)
  }
  print("FAIL: expected \(expected), saw \(log)")
  exit(1)
}
RunLoop.main.add(timer, forMode: .default)
RunLoop.main.run()

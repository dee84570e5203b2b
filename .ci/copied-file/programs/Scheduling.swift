// The core and the scheduling file (`Scripts/vendor --with Scheduling`): observers on a dispatch queue.
// Expect: scheduling: 42 on the queue
import Dispatch

enum LoadError: Error { case offline }

let queue = DispatchQueue(label: "scheduling")
let finished = DispatchSemaphore(value: 0)
ResultPromise<Int, LoadError>(value: 42).receive(on: queue).await { result in
  dispatchPrecondition(condition: .onQueue(queue))
  print("scheduling: \((try? result.get()) ?? -1) on the queue")
  finished.signal()
}
finished.wait()

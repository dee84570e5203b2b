import Dispatch
import ResultPromise
import Testing

@Suite("Scheduling: receive(on:)")
struct SchedulingTests {
  /// A serial queue that can tell whether code runs on it.
  final class MarkedQueue: Sendable {
    let queue = DispatchQueue(label: "SchedulingTests.serial")
    let key = DispatchSpecificKey<Int>()
    init() { queue.setSpecific(key: key, value: 1) }
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == 1 }
  }

  /// Waits until everything submitted to `queue` so far has run.
  func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
  }

  @Test("observers registered before and after settlement all run on the queue, in registration order")
  func observersRunOnQueueInOrder() async {
    let marked = MarkedQueue()
    let root = ResultPromise<Int, TestError>()
    let received = root.receive(on: marked.queue)
    let order = Log<Int>()
    let offQueue = Counter()
    for index in 0..<50 {
      received.await { _ in
        if !marked.isCurrent { offQueue.increment() }
        order.append(index)
      }
    }
    DispatchQueue.global().async { root.succeed(1) }
    for index in 50..<100 {
      received.await { _ in
        if !marked.isCurrent { offQueue.increment() }
        order.append(index)
      }
    }
    while received.isPending { await Task.yield() }
    await drain(marked.queue)
    #expect(order.values == Array(0..<100))
    #expect(offQueue.value == 0)
  }

  @Test("an observer on a settled receive(on:) promise never runs inside the registering call")
  func neverSynchronous() async {
    let marked = MarkedQueue()
    let received = ResultPromise<Int, TestError>(value: 1).receive(on: marked.queue)
    marked.queue.suspend()
    let calls = Counter()
    received.await { _ in calls.increment() }
    #expect(calls.value == 0)
    marked.queue.resume()
    await drain(marked.queue)
    #expect(calls.value == 1)
  }

  @Test("registration order holds on a serial queue while settlement races registration, over many trials")
  func orderUnderRace() async {
    let marked = MarkedQueue()
    var misordered = 0
    for _ in 0..<500 {
      let root = ResultPromise<Int, TestError>()
      let received = root.receive(on: marked.queue)
      let order = Log<Int>()
      DispatchQueue.concurrentPerform(iterations: 2) { worker in
        if worker == 0 {
          root.succeed(0)
        } else {
          for index in 0..<10 { received.await { _ in order.append(index) } }
        }
      }
      await drain(marked.queue)
      if order.values != Array(0..<10) { misordered += 1 }
    }
    #expect(misordered == 0)
  }

  @Test("a failure is delivered on the queue too, and the source promise still calls back synchronously")
  func failureOnQueue() async {
    let marked = MarkedQueue()
    let root = ResultPromise<Int, TestError>()
    let onQueue = Log<Bool>()
    let direct = Log<Bool>()
    root.receive(on: marked.queue).onFailure { _ in onQueue.append(marked.isCurrent) }
    root.onFailure { _ in direct.append(marked.isCurrent) }
    root.fail(.boom)
    #expect(direct.values == [false])
    await drain(marked.queue)
    #expect(onQueue.values == [true])
  }

  @Test("on a concurrent queue every observer runs exactly once")
  func concurrentQueue() async {
    let queue = DispatchQueue(label: "SchedulingTests.concurrent", attributes: .concurrent)
    let received = ResultPromise<Int, TestError>(value: 1).receive(on: queue)
    let calls = Counter()
    for _ in 0..<100 { received.await { _ in calls.increment() } }
    await withCheckedContinuation { continuation in queue.async(flags: .barrier) { continuation.resume() } }
    #expect(calls.value == 100)
  }
}

import ResultPromise
import Testing

/// Semantics 14–18 and 21 against a naive model. Each seed plays a random sequence of operations on a small
/// pool of promises — make a source, map, fork (another map of the same promise), `thenAsync`, a task awaiting
/// `result`, `abandoningOnCancel`, `ignoringCancel`, a request, a settlement (by the work, or by hand), a task
/// cancelled — then settles every source, and checks what the library did against what the model says: each
/// promise heard its outcome exactly once and the right one, each task got its promise's outcome, and exactly
/// the sources the model says were asked to stop ran their handler, once.
///
/// The model keeps no shared records, stretches or branches: one record per promise, pointing up to what it
/// waits for now, and each promise's dependents counted on it. A request on a promise still pending and not
/// asked before marks it, runs a source's handler, fails an `abandoningOnCancel` promise, and withdraws from
/// what it waits for; a promise whose last dependent withdraws is asked in turn. Deliveries and handlers run
/// in the order the library's queue of work on a thread runs them, since some outcomes depend on it (a
/// dependent that comes after the last one withdrew chains onto work already asked to stop). Whatever the
/// library's record looks like, it must agree. A seeded bug shows: a request that walks past a step still
/// wanted by a fork (seed 12), or that forgets what a reached `thenAsync` step adopted (seed 0).
@Suite("Cancellation against a naive model")
struct CancellationModelTests {
  @Test("random sequences of operations: the library agrees with the model, seed after seed")
  func randomSequencesAgreeWithTheModel() async {
    let seeds = TestSize.of(full: 5_000, quick: 400)
    var disagreements: [String] = []
    for seed in 0..<UInt64(seeds) {
      let play = Play(seed: seed)
      if let disagreement = await play.run() {
        if disagreements.isEmpty { print(play.trace.joined(separator: "\n")) }
        disagreements.append("seed \(seed): \(disagreement)")
        if disagreements.count == 5 { break }
      }
    }
    #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
  }
}

/// One seed's play: the real promises, the model beside them, and the tasks awaiting promises.
private final class Play {
  enum Kind {
    case source, plain, map, thenAsync, abandoning, ignoring
  }

  enum Phase {
    case pending, queued, delivering, delivered
  }

  /// The model of one promise.
  struct Node {
    let kind: Kind
    let input: Int?
    let cancellable: Bool
    var outcome: Result<Int, TestError>?
    /// Dependents that still want it.
    var interest = 0
    /// A request reached it while it was pending.
    var asked = false
    /// What it counts as a dependent of now, until it withdraws (settles, or is asked).
    var upstream: Int?
    /// A `thenAsync` step's promise to adopt once its input succeeds, and the one it adopted.
    var toAdopt: Int?
    var adopted: Int?
    var stops = 0
    /// Where its delivery stands: not settled, settled with its delivery queued, delivering, or delivered.
    var phase = Phase.pending
    var isPending: Bool { outcome == nil }
  }

  /// A task awaiting a promise: its index, whether it withdrew, and what it got.
  final class Waiter: Sendable {
    let promise: Int
    let task: Task<Result<Int, TestError>, Never>
    init(_ promise: Int, _ task: Task<Result<Int, TestError>, Never>) {
      (self.promise, self.task) = (promise, task)
    }
  }

  var trace: [String] = []
  var random: SplitMix64
  var nodes: [Node] = []
  var promises: [ResultPromise<Int, TestError>] = []
  var settle: [(@Sendable (Result<Int, TestError>) -> Void)?] = []
  let heard = Locked<[Int: [Result<Int, TestError>]]>([:])
  let stops = Locked<[Int: Int]>([:])
  var waiters: [(waiter: Waiter, withdrew: Bool)] = []

  init(seed: UInt64) { random = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 1) }

  /// A number below `bound`.
  func next(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

  /// Plays the operations, settles every source, and returns the first disagreement, if any.
  func run() async -> String? {
    make(.source, from: nil)
    for step in 0..<40 {
      // Half the time the newest promise: chains, where records are shared, grow from their last step.
      let any = next(2) == 0 ? nodes.count - 1 : next(nodes.count)
      switch next(10) {
      case 0: make(.source, from: nil)
      case 1: make(.plain, from: nil)
      case 2, 3: make(.map, from: any)
      case 4:
        // Half the time a new source to adopt, which nothing else wants: a request that reaches the step stops it.
        if next(2) == 0 { make(.source, from: nil) }
        make(.thenAsync, from: any, adopting: next(2) == 0 ? nodes.count - 1 : next(nodes.count))
      case 5: make(next(2) == 0 ? .abandoning : .ignoring, from: any)
      case 6: wait(for: any)
      case 7: request(any)
      case 8: settle(any, with: next(3) == 0 ? .failure(.other(step)) : .success(step))
      default: cancelTask()
      }
    }
    for index in nodes.indices where nodes[index].kind == .source || nodes[index].kind == .plain {
      settle(index, with: .success(-index))
    }
    return await disagreement()
  }

  // MARK: Operations, on both sides

  func make(_ kind: Kind, from input: Int?, adopting adopt: Int? = nil) {
    let index = nodes.count
    trace.append(
      "\(index) = \(kind)(from: \(input.map(String.init) ?? "-"), adopting: \(adopt.map(String.init) ?? "-"))"
    )
    let promise: ResultPromise<Int, TestError>
    switch kind {
    case .source:
      let stops = self.stops
      let done = Locked<(@Sendable (Result<Int, TestError>) -> Void)?>(nil)
      promise = ResultPromise { fulfil, onCancel in
        onCancel { stops.withLock { $0[index, default: 0] += 1 } }
        done.withLock { $0 = fulfil }
      }
      settle.append(done.withLock { $0 })
    case .plain:
      promise = ResultPromise()
    case .map:
      promise = promises[input!].map { $0 + 1 }
    case .thenAsync:
      let adopted = promises[adopt!]
      promise = promises[input!].thenAsync { _ in adopted }
    case .abandoning:
      promise = promises[input!].abandoningOnCancel(with: .other(1_000 + index))
    case .ignoring:
      promise = promises[input!].ignoringCancel()
    }
    if kind != .source { settle.append(nil) }
    promises.append(promise)
    let heard = self.heard
    promise.await { result in heard.withLock { $0[index, default: []].append(result) } }
    // The model.
    let inputCancellable = input.map { nodes[$0].cancellable } ?? false
    let cancellable: Bool
    switch kind {
    case .source, .thenAsync, .abandoning: cancellable = true
    case .map: cancellable = inputCancellable
    case .plain, .ignoring: cancellable = false
    }
    nodes.append(Node(kind: kind, input: input, cancellable: cancellable, toAdopt: adopt))
    registered.append([])
    guard let input else { return }
    count(index, on: input)
    register(index, on: input)
  }

  func wait(for index: Int) {
    trace.append("task awaits \(index)")
    let promise = promises[index]
    let waiter = Waiter(index, Task.immediate { await promise.result })
    let counted = nodes[index].cancellable && nodes[index].isPending && !nodes[index].asked
    if counted { nodes[index].interest += 1 }
    waiters.append((waiter, !counted))
  }

  func cancelTask() {
    guard let index = waiters.indices.first(where: { !waiters[$0].withdrew }) else { return }
    trace.append("cancel task on \(waiters[index].waiter.promise)")
    waiters[index].withdrew = true
    waiters[index].waiter.task.cancel()
    letGo(waiters[index].waiter.promise)
  }

  /// A request on a promise that can be cancelled (on any other, `cancel()` does nothing, and says so in debug
  /// builds: the Cancellation suite checks that).
  func request(_ index: Int) {
    guard nodes[index].cancellable else { return }
    trace.append("cancel \(index)")
    promises[index].cancel()
    ask(index)
  }

  func settle(_ index: Int, with result: Result<Int, TestError>) {
    trace.append("settle \(index) \(result)")
    if let done = settle[index] { done(result) } else { promises[index].fulfil(with: result) }
    settled(index, result)
  }

  // MARK: The model

  /// What the model runs in order, as the library's queue of work on this thread does: a promise's delivery
  /// to those registered on it, one dependent's delivery, and an `abandoningOnCancel` promise's request handler.
  /// At the outermost call a job runs at once; one that a job sets off waits for those before it.
  enum Job {
    case deliver(Int)
    case step(Int, from: Int)
    case abandon(Int)
  }

  var jobs: [Job] = []
  var draining = false
  /// Who is registered on each promise, in order: the dependents it delivers to (a step's input observer, or a
  /// `thenAsync` step on the promise it adopted).
  var registered: [[Int]] = []

  func perform(_ job: Job) {
    jobs.append(job)
    guard !draining else { return }
    draining = true
    while !jobs.isEmpty {
      switch jobs.removeFirst() {
      case .deliver(let index):
        nodes[index].phase = .delivering
        for dependent in registered[index] { deliver(nodes[index].outcome!, to: dependent) }
        nodes[index].phase = .delivered
      case .step(let index, let from): deliver(nodes[from].outcome!, to: index)
      case .abandon(let index):
        if let input = nodes[index].input, nodes[input].isPending {
          settled(index, .failure(.other(1_000 + index)))
        }
      }
    }
    draining = false
  }

  /// `index` becomes a dependent of `input`, counted while `input` can still be asked.
  func count(_ index: Int, on input: Int) {
    guard nodes[input].cancellable, nodes[input].isPending else { return }
    nodes[index].upstream = input
    if !nodes[input].asked { nodes[input].interest += 1 }
  }

  /// `index` waits for `input`'s outcome: registered there while it is pending or its delivery is queued (it
  /// joins that delivery); once delivering, in a delivery of its own behind the work queued; once delivered,
  /// at once (through the queue, if a job runs).
  func register(_ index: Int, on input: Int) {
    switch nodes[input].phase {
    case .pending, .queued: registered[input].append(index)
    case .delivering, .delivered: perform(.step(index, from: input))
    }
  }

  /// A request reaches `index`: its handlers run (through the queue), then the request goes on up.
  func ask(_ index: Int) {
    guard nodes[index].cancellable, nodes[index].isPending, !nodes[index].asked else { return }
    nodes[index].asked = true
    if nodes[index].kind == .source { nodes[index].stops += 1 }
    if nodes[index].kind == .abandoning { perform(.abandon(index)) }
    withdraw(index)
  }

  /// `index` lets go of what it waits for, once.
  func withdraw(_ index: Int) {
    guard let upstream = nodes[index].upstream else { return }
    nodes[index].upstream = nil
    if nodes[index].kind != .ignoring { letGo(upstream) }
  }

  func letGo(_ index: Int) {
    guard nodes[index].isPending, !nodes[index].asked else { return }
    nodes[index].interest -= 1
    if nodes[index].interest == 0 { ask(index) }
  }

  /// `index` settles: it lets go of what it waited for, and delivers through the queue.
  func settled(_ index: Int, _ result: Result<Int, TestError>) {
    guard nodes[index].isPending else { return }
    nodes[index].outcome = result
    nodes[index].phase = .queued
    withdraw(index)
    perform(.deliver(index))
  }

  /// What `index` waits for (its input, or the promise it adopted) delivers `result` to it.
  func deliver(_ result: Result<Int, TestError>, to index: Int) {
    guard nodes[index].adopted == nil else { return settled(index, result) }  // the promise it adopted
    switch (nodes[index].kind, result) {
    case (.map, .success(let value)): settled(index, .success(value + 1))
    case (.thenAsync, .success):
      // It calls its closure and adopts even when settled by hand; one asked or settled lets go at once.
      let adopt = nodes[index].toAdopt!
      nodes[index].adopted = adopt
      nodes[index].upstream = nil
      count(index, on: adopt)
      if nodes[index].asked || !nodes[index].isPending { withdraw(index) }
      // A promise adopted once it has delivered settles this one at once; otherwise it waits, as a dependent.
      if nodes[adopt].phase == .delivered {
        settled(index, nodes[adopt].outcome!)
      } else {
        register(index, on: adopt)
      }
    default: settled(index, result)
    }
  }

  // MARK: Checking

  func disagreement() async -> String? {
    let heard = self.heard.withLock { $0 }
    let stops = self.stops.withLock { $0 }
    for (index, node) in nodes.enumerated() {
      guard let outcome = node.outcome else {
        return "the model left promise \(index) (\(node.kind)) pending"
      }
      let got = heard[index] ?? []
      if got != [outcome] { return "promise \(index) (\(node.kind)) heard \(got), the model says \(outcome)" }
      if node.kind == .source, stops[index, default: 0] != node.stops {
        return
          "source \(index) was asked to stop \(stops[index, default: 0]) times, the model says \(node.stops)"
      }
    }
    for (waiter, _) in waiters {
      let got = await waiter.task.value
      if got != nodes[waiter.promise].outcome {
        return
          "a task awaiting promise \(waiter.promise) got \(got), the model says \(nodes[waiter.promise].outcome!)"
      }
    }
    return nil
  }
}

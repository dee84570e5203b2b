// Callers who leave a long-lived shared promise (semantics 23), measured three ways (the per-call workloads
// also price the combinators, and a failure nobody heard with no handler set):
//
//   Departures --memory             resident memory each departed caller leaves behind, for every way to
//                                   leave, over 200,000 callers (RSS after the heap is trimmed); then for
//                                   callers who all came first and all but the newest left
//   Departures --list               the per-call workloads, one a line
//   Departures --one NAME --iterations K
//                                   runs a per-call workload K × 100,000 times, for callgrind and memcheck
//                                   (Scripts/departures runs them and prints instructions and mallocs a call)
import Dispatch
import Foundation
import ResultPromise

#if canImport(Glibc)
  import Glibc
  /// glibc's `malloc_trim` (its header is not part of the Glibc module): returns free heap to the system.
  @_silgen_name("malloc_trim") func mallocTrim(_ pad: Int) -> Int32
#endif

enum Left: Error { case early }

/// Calls per iteration of a per-call workload.
let calls = 100_000

// MARK: - Memory left behind

/// The resident set size of this process, in bytes, after handing freed heap back to the system.
func trimmedResidentBytes() -> Int {
  #if canImport(Glibc)
    _ = mallocTrim(0)
  #endif
  guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
    let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
  else { return 0 }
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A way for a caller to come to `shared` and leave it; returns once the caller has left.
typealias Leave = @Sendable (ResultPromise<Int, Left>) async -> Void

let ways: [(String, Leave)] = [
  (
    "abandoningOnCancel, then cancel()",
    { shared in
      shared.abandoningOnCancel(with: .early).cancel()
    }
  ),
  (
    "a task awaiting valueAbandoningOnCancel(), cancelled",
    { shared in
      let task = Task { try await shared.valueAbandoningOnCancel() }
      task.cancel()
      _ = await task.result
    }
  ),
  (
    "timeout(.zero) that fired",
    { shared in
      _ = await shared.timeout(.zero, failure: .early).result
    }
  ),
  (
    "race([shared, settled]) decided by the other input",
    { shared in
      _ = ResultPromise.race([shared, ResultPromise(value: 1)])
    }
  ),
  (
    "any([shared, succeeded])",
    { shared in
      _ = ResultPromise.any([shared, ResultPromise(value: 1)])
    }
  ),
  (
    "all([shared, failed])",
    { shared in
      _ = ResultPromise.all([shared, ResultPromise(error: .early)])
    }
  ),
  (
    "SharedWork, the last caller out of its run, then cancel()",
    { shared in
      sharing.promise(for: ObjectIdentifier(shared), leaving: .early) { _ in shared }.cancel()
    }
  ),
  (
    "zip(shared, failed)",
    { shared in
      _ = ResultPromise.zip(shared, ResultPromise<Int, Left>(error: .early))
    }
  ),
]

/// The registry of the ways that go through `SharedWork`: a run per shared promise, which `start` gives it.
let sharing = SharedWork<ObjectIdentifier, Int, Left>()

/// Bytes left per caller after `callers` came to a pending shared promise and left through `leave`. With
/// `keeper`, the shared promise can be cancelled and one dependent made first keeps it wanted; without, it
/// is a plain promise that nothing else observes, so every caller's observer is its first.
func bytesLeft(by leave: Leave, keeper: Bool, callers: Int = 200_000) async -> Double {
  let shared =
    keeper ? ResultPromise<Int, Left> { _, onCancel in onCancel {} } : ResultPromise<Int, Left>()
  let kept = keeper ? shared.map { $0 } : nil
  for _ in 0..<1_000 { await leave(shared) }  // first-touch costs, and the arrays' first growth
  let before = trimmedResidentBytes()
  for _ in 0..<callers { await leave(shared) }
  let after = trimmedResidentBytes()
  withExtendedLifetime((shared, kept)) {}
  return Double(after - before) / Double(callers)
}

/// A caller who comes to `shared` now and leaves when the returned function is called.
typealias Come = (ResultPromise<Int, Left>) -> () -> Void

let staying: [(String, Come)] = [
  (
    "abandoningOnCancel, then cancel()",
    { shared in
      let caller = shared.abandoningOnCancel(with: .early)
      return { caller.cancel() }
    }
  ),
  (
    "race([shared, other]) decided by the other input",
    { shared in
      let other = ResultPromise<Int, Left>()
      let raced = ResultPromise.race([shared, other])
      return {
        other.succeed(1)
        blackHole(raced)
      }
    }
  ),
  (
    "SharedWork: a caller who leaves a run others wait for",
    { shared in
      let caller = sharing.promise(for: ObjectIdentifier(shared), leaving: .early) { _ in shared }
      return { caller.cancel() }
    }
  ),
]

/// Bytes left per key after `keys` keys each had a run of `SharedWork` that ended: the run's promise
/// succeeded, or its one caller left and stopped it.
func bytesLeftPerKey(stopped: Bool, keys: Int = 200_000) -> Double {
  let registry = SharedWork<Int, Int, Left>()
  let before = trimmedResidentBytes()
  for key in 0..<keys {
    let work = ResultPromise<Int, Left> { _, onCancel in onCancel {} }
    let caller = registry.promise(for: key, leaving: .early) { _ in work }
    if stopped { caller.cancel() } else { work.succeed(key) }
  }
  let after = trimmedResidentBytes()
  withExtendedLifetime(registry) {}
  return Double(after - before) / Double(keys)
}

/// Bytes left per caller after `callers` came to a pending shared promise and all but the newest left, in the
/// order they came (`keeper` as for `bytesLeft`).
func bytesLeftWhileNewestStays(by come: Come, keeper: Bool, callers: Int = 200_000) -> Double {
  let shared =
    keeper ? ResultPromise<Int, Left> { _, onCancel in onCancel {} } : ResultPromise<Int, Left>()
  let kept = keeper ? shared.map { $0 } : nil
  let before = trimmedResidentBytes()
  var leaving = (0..<callers).map { _ in come(shared) }
  for leave in leaving.dropLast() { leave() }
  let newest = leaving.removeLast()
  leaving = []
  let after = trimmedResidentBytes()
  withExtendedLifetime((shared, kept, newest)) {}
  return Double(after - before) / Double(callers - 1)
}

// MARK: - Per-call costs

/// The per-call workloads: each runs `calls` calls.
let perCall: [(String, () -> Void)] = [
  (
    "race([sharedPending, settled])",
    {
      let shared = ResultPromise<Int, Left>()
      for index in 0..<calls { blackHole(ResultPromise.race([shared, ResultPromise(value: index)])) }
    }
  ),
  (
    "race([pending, settled]), a new pending input each call",
    {
      for index in 0..<calls {
        let pending = ResultPromise<Int, Left>()
        blackHole(ResultPromise.race([pending, ResultPromise(value: index)]))
      }
    }
  ),
  (
    "all([a, b]), both succeed",
    {
      for index in 0..<calls {
        let (first, second) = (ResultPromise<Int, Left>(), ResultPromise<Int, Left>())
        let all = ResultPromise.all([first, second])
        first.succeed(index)
        second.succeed(index)
        blackHole(all)
      }
    }
  ),
  (
    "zip(a, b), both succeed",
    {
      for index in 0..<calls {
        let (first, second) = (ResultPromise<Int, Left>(), ResultPromise<String, Left>())
        let zipped = ResultPromise.zip(first, second)
        first.succeed(index)
        second.succeed("")
        blackHole(zipped)
      }
    }
  ),
  (
    "abandoningOnCancel on a source that settles",
    {
      for index in 0..<calls {
        let source = ResultPromise<Int, Left>()
        let caller = source.abandoningOnCancel(with: .early)
        source.succeed(index)
        blackHole(caller)
      }
    }
  ),
  (
    "a dropped two-step chain that succeeds",
    { for index in 0..<calls { droppedChain(failing: false, index) } }
  ),
  (
    "a dropped two-step chain that fails, unheard, no handler set",
    { for index in 0..<calls { droppedChain(failing: true, index) } }
  ),
  (
    "abandoningOnCancel on a long-lived shared promise, then cancel()",
    {
      let shared = ResultPromise<Int, Left> { _, onCancel in onCancel {} }
      let staying = shared.abandoningOnCancel(with: .early)
      for _ in 0..<calls { shared.abandoningOnCancel(with: .early).cancel() }
      blackHole(staying)
    }
  ),
  (
    "SharedWork: joining a running key, then cancel()",
    {
      let registry = SharedWork<Int, Int, Left>()
      let shared = ResultPromise<Int, Left> { _, onCancel in onCancel {} }
      let staying = registry.promise(for: 0, leaving: .early) { _ in shared }
      for _ in 0..<calls { registry.promise(for: 0, leaving: .early) { _ in shared }.cancel() }
      blackHole(staying)
    }
  ),
  (
    "SharedWork: a new run each call, whose work then succeeds",
    {
      let registry = SharedWork<Int, Int, Left>()
      for index in 0..<calls {
        let work = ResultPromise<Int, Left>()
        let caller = registry.promise(for: index, leaving: .early) { _ in work }
        work.succeed(index)
        blackHole(caller)
      }
    }
  ),
  (
    "a lookup in a dictionary of one Int key",
    {
      let dictionary = [0: ResultPromise<Int, Left>()]
      for index in 0..<calls { blackHole(dictionary[index & 1]) }
    }
  ),
  ("10,000 callers leaving in arrival order, per caller", { leaveInArrivalOrder(batch: 10_000) }),
  ("20,000 callers leaving in arrival order, per caller", { leaveInArrivalOrder(batch: 20_000) }),
]

/// A two-step chain on a pending root, dropped, then the root settled. Failing, nobody hears the failure: with no
/// handler set (an optimised build's default), the report should cost only the look at the handler.
@inline(never) func droppedChain(failing: Bool, _ value: Int) {
  let root = ResultPromise<Int, Left>()
  _ = root.map { $0 + 1 }.map { $0 + 1 }
  if failing { root.fail(.early) } else { root.succeed(value) }
}

/// `calls` callers come to one shared promise and leave it in the order they came, `batch` at a time.
func leaveInArrivalOrder(batch: Int) {
  let shared = ResultPromise<Int, Left>()
  for _ in 0..<(calls / batch) {
    let callers = (0..<batch).map { _ in shared.abandoningOnCancel(with: .early) }
    for caller in callers { caller.cancel() }
  }
  blackHole(shared)
}

/// Keeps `value` alive to here, and keeps the optimiser from removing the work that made it.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

// MARK: - Main

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--memory" {
  print("| how the caller stopped waiting | bytes left per caller: shared kept wanted | its observer first |")
  print("| --- | ---: | ---: |")
  for (name, leave) in ways {
    let kept = await bytesLeft(by: leave, keeper: true)
    let alone = await bytesLeft(by: leave, keeper: false)
    print("| \(name) | \(String(format: "%.1f", kept)) | \(String(format: "%.1f", alone)) |")
  }
  print()
  let columns = "bytes left per caller: shared kept wanted | its observer first"
  print("| all came, then all but the newest left | \(columns) |")
  print("| --- | ---: | ---: |")
  for (name, come) in staying {
    let kept = bytesLeftWhileNewestStays(by: come, keeper: true)
    let alone = bytesLeftWhileNewestStays(by: come, keeper: false)
    print("| \(name) | \(String(format: "%.1f", kept)) | \(String(format: "%.1f", alone)) |")
  }
  print()
  print("| SharedWork, 200,000 keys each with a run that ended | bytes left per key |")
  print("| --- | ---: |")
  print("| the run succeeded | \(String(format: "%.1f", bytesLeftPerKey(stopped: false))) |")
  print("| its one caller left, and stopped it | \(String(format: "%.1f", bytesLeftPerKey(stopped: true))) |")
} else if arguments.first == "--list" {
  for (name, _) in perCall { print(name) }
} else if arguments.count == 4, arguments[0] == "--one", arguments[2] == "--iterations",
  let workload = perCall.first(where: { $0.0 == arguments[1] }), let iterations = Int(arguments[3])
{
  for _ in 0..<iterations { workload.1() }
} else {
  print("usage: Departures --memory | --list | --one NAME --iterations K")
}

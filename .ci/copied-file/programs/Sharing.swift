// The sharing file with what it needs (`Scripts/vendor --with Sharing`): two callers of one key share one
// run; a caller who leaves hears its own failure at once, and, the last out, stops its run.
// Expect: sharing, first: 7
// Expect: sharing, second: 7
// Expect: sharing, left: cancelled
// Expect: sharing, still running: false

enum LoadError: Error { case offline, cancelled, stopped }

let loads = SharedWork<String, Int, LoadError>()
let answer = ResultPromise<Int, LoadError>()
let first = loads.promise(for: "answer", leaving: .cancelled) { _ in answer }
let second = loads.promise(for: "answer", leaving: .cancelled) { _ in ResultPromise(error: .offline) }
answer.succeed(7)
show("sharing, first:", first)
show("sharing, second:", second)
let leaving = loads.promise(for: "slow", leaving: .cancelled) { _ in stoppable(reporting: LoadError.stopped) }
leaving.cancel()
show("sharing, left:", leaving)
print("sharing, still running: \(loads.isRunning("slow"))")

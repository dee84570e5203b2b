// The combining file with what it needs (`Scripts/vendor --with Combining`): settled inputs combine at
// once, on this thread.
// Expect: combining, all: [1, 2]
// Expect: combining, zip: (1, "two")
// Expect: combining, race: 1
// Expect: combining, any: 2
// Expect: combining, allSettled: 1 success, 1 failure

enum LoadError: Error { case offline }

let one = ResultPromise<Int, LoadError>(value: 1)
let two = ResultPromise<Int, LoadError>(value: 2)
let failed = ResultPromise<Int, LoadError>(error: .offline)
show("combining, all:", ResultPromise.all([one, two]))
show("combining, zip:", ResultPromise.zip(one, ResultPromise<String, LoadError>(value: "two")))
show("combining, race:", ResultPromise.race([one, two]))
show("combining, any:", ResultPromise.any([failed, two]))
show(
  "combining, allSettled:",
  ResultPromise.allSettled([one, failed]).map { results in
    let successes = results.filter { (try? $0.get()) != nil }.count
    return "\(successes) success, \(results.count - successes) failure"
  })

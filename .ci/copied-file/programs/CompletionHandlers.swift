// The completion-handler file with what it needs (`Scripts/vendor --with CompletionHandlers`): an older
// SDK's `(Value?, Error?)` callback, and an `(Error?)` one whose work can be stopped.
// Expect: completion handlers: 42
// Expect: completion handlers, a stopped upload: cancelled
import Dispatch

enum LoadError: Error { case offline, cancelled }
struct Stopped: Error {}

/// An API in an older SDK's shape.
nonisolated func legacyLoad(_ id: Int, completion: @escaping @Sendable (Int?, (any Error)?) -> Void) {
  DispatchQueue.global().async { completion(id * 2, nil) }
}

show(
  "completion handlers:",
  ResultPromise<Int, LoadError> { done in legacyLoad(21, completion: done) } mapError: { _ in .offline })

let upload = ResultPromise<Void, LoadError> { done, onCancel in
  onCancel { done(Stopped()) }  // such an API calls back with its own error when stopped
} mapError: { $0 is Stopped ? .cancelled : .offline }
upload.cancel()
show("completion handlers, a stopped upload:", upload)

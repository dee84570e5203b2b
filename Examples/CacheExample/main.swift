// A runnable tour of ResultPromise doing its real job: a cache bootstrap, a fetch, a remote update and
// a save — four completion-handler calls — as one flat chain with one failure handler.
//
//   swift run CacheExample                      # success path, in a temporary directory
//   swift run CacheExample --fail-at update     # inject a failure at one step; exits with status 1
//   swift run CacheExample --directory ./cache  # keep the cache in a directory of your choice
import Dispatch
import Foundation
import ResultPromise

let usage = """
  usage: CacheExample [--fail-at \(Step.allCases.map(\.rawValue).joined(separator: "|"))] [--directory PATH]
  """

// MARK: Arguments

var failAt: Step?
var chosenDirectory: URL?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
  switch argument {
  case "--fail-at":
    guard let name = arguments.popFirst(), let step = Step(rawValue: name) else {
      print("error: --fail-at needs one of: \(Step.allCases.map(\.rawValue).joined(separator: ", "))")
      print(usage)
      exit(2)
    }
    failAt = step
  case "--directory":
    guard let path = arguments.popFirst() else {
      print("error: --directory needs a path")
      print(usage)
      exit(2)
    }
    chosenDirectory = URL(fileURLWithPath: path, isDirectory: true)
  case "--help", "-h":
    print(usage)
    exit(0)
  default:
    print("error: unknown argument '\(argument)'")
    print(usage)
    exit(2)
  }
}

let directory =
  chosenDirectory
  ?? FileManager.default.temporaryDirectory.appendingPathComponent("CacheExample-\(UUID().uuidString)")
let cache = DiskCache(directory: directory, failAt: failAt)
let remote = RemoteService(latency: .milliseconds(50), failAt: failAt)
let seed = [
  Profile(id: 1, name: "Ada", visits: 3),
  Profile(id: 2, name: "Grace", visits: 41),
  Profile(id: 3, name: "Barbara", visits: 7),
]

// MARK: The completion-handler APIs, wrapped once each

func bootstrap() -> ResultPromise<Int, ExampleError> {
  ResultPromise { done in cache.bootstrap(seed: seed, completion: done) }
}
/// Every caller of one profile shares one read while it runs; a caller who cancels hears `.cancelled` at once.
let reads = SharedWork<Int, Profile, ExampleError>()
func fetch(_ id: Int) -> ResultPromise<Profile, ExampleError> {
  reads.promise(for: id, leaving: .cancelled) { id in
    ResultPromise { done in cache.load(id: id, completion: done) }
  }
}
func recordVisit(_ profile: Profile) -> ResultPromise<Profile, ExampleError> {
  ResultPromise { done in remote.recordVisit(profile, completion: done) }
}
func save(_ profile: Profile) -> ResultPromise<Profile, ExampleError> {
  ResultPromise { done in cache.store(profile, completion: done) }
}

func describe(_ profile: Profile) -> String {
  "profile \(profile.id) (\(profile.name), \(profile.visits) visits)"
}

// MARK: One flat chain, one failure handler

let finished = DispatchSemaphore(value: 0)

let saved = bootstrap()
  .thenAsync { count in
    print("[1/4] bootstrap: cache at \(cache.file.path) holds \(count) profiles")
    let header = fetch(2)  // another screen asks for the same profile while it loads: one read for both
    header.await { print("      header: \((try? $0.get()).map(describe) ?? "none"), from the same read") }
    return fetch(2)
  }
  .thenAsync { profile in
    print("[2/4] fetch: loaded \(describe(profile))")
    return recordVisit(profile)
  }
  .thenAsync { profile in
    print("[3/4] update: remote service returned \(describe(profile))")
    return save(profile)
  }

saved.await { result in
  switch result {
  case .success(let profile):
    print("[4/4] save: wrote \(describe(profile)) to \(cache.file.lastPathComponent)")
    print("done")
  case .failure(let error):
    print("error: \(error)")
  }
  finished.signal()
}

// The chain runs on the services' queues; the main thread waits for it, tidies up and exits.
finished.wait()
if chosenDirectory == nil { try? FileManager.default.removeItem(at: directory) }
saved.await { exit((try? $0.get()) == nil ? 1 : 0) }

import Foundation

/// A user profile, stored as JSON in the on-disk cache.
struct Profile: Codable, Sendable, Equatable {
  var id: Int
  var name: String
  var visits: Int
}

/// The steps of the example, in order; `--fail-at` names one of them.
enum Step: String, CaseIterable, Sendable {
  case bootstrap, fetch, update, save
}

/// Everything that can go wrong, as one typed error.
enum ExampleError: Error, CustomStringConvertible {
  case injected(Step)
  case io(String)
  case notFound(id: Int)
  case rejected(String)
  case cancelled

  var description: String {
    switch self {
    case .injected(let step): "injected failure at step '\(step.rawValue)'"
    case .io(let message): "cache I/O failed: \(message)"
    case .notFound(let id): "no profile with id \(id) in the cache"
    case .rejected(let reason): "remote service rejected the update: \(reason)"
    case .cancelled: "cancelled"
    }
  }
}

// The two services below have ordinary completion-handler APIs, as most cache, database and network
// code does. They know nothing about promises.

/// A small JSON file cache on disk. All file work happens on a private serial queue.
final class DiskCache: Sendable {
  let file: URL
  private let queue = DispatchQueue(label: "CacheExample.DiskCache")
  private let failAt: Step?

  init(directory: URL, failAt: Step?) {
    self.file = directory.appendingPathComponent("profiles.json")
    self.failAt = failAt
  }

  /// Creates the cache file with `seed` unless it exists; reports how many profiles it holds.
  func bootstrap(seed: [Profile], completion: @escaping @Sendable (Result<Int, ExampleError>) -> Void) {
    queue.async { [self] in
      if failAt == .bootstrap { return completion(.failure(.injected(.bootstrap))) }
      completion(
        Result {
          try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
          if !FileManager.default.fileExists(atPath: file.path) {
            try JSONEncoder().encode(seed).write(to: file, options: .atomic)
          }
          return try readAll().count
        }.mapError { .io("\($0)") })
    }
  }

  /// Loads one profile.
  func load(id: Int, completion: @escaping @Sendable (Result<Profile, ExampleError>) -> Void) {
    queue.async { [self] in
      if failAt == .fetch { return completion(.failure(.injected(.fetch))) }
      do {
        guard let profile = try readAll().first(where: { $0.id == id }) else {
          return completion(.failure(.notFound(id: id)))
        }
        completion(.success(profile))
      } catch {
        completion(.failure(.io("\(error)")))
      }
    }
  }

  /// Replaces the stored profile that has the same id.
  func store(_ profile: Profile, completion: @escaping @Sendable (Result<Profile, ExampleError>) -> Void) {
    queue.async { [self] in
      if failAt == .save { return completion(.failure(.injected(.save))) }
      completion(
        Result {
          var all = try readAll()
          all.removeAll { $0.id == profile.id }
          all.append(profile)
          try JSONEncoder().encode(all.sorted { $0.id < $1.id }).write(to: file, options: .atomic)
          return profile
        }.mapError { .io("\($0)") })
    }
  }

  private func readAll() throws -> [Profile] {
    try JSONDecoder().decode([Profile].self, from: Data(contentsOf: file))
  }
}

/// A stand-in for a remote API: answers on a background queue after some latency.
struct RemoteService: Sendable {
  let latency: DispatchTimeInterval
  let failAt: Step?

  /// Records a visit on the server and returns the server's copy of the profile.
  func recordVisit(
    _ profile: Profile, completion: @escaping @Sendable (Result<Profile, ExampleError>) -> Void
  ) {
    DispatchQueue.global().asyncAfter(deadline: .now() + latency) {
      if failAt == .update { return completion(.failure(.injected(.update))) }
      guard !profile.name.isEmpty else { return completion(.failure(.rejected("profile has no name"))) }
      var updated = profile
      updated.visits += 1
      completion(.success(updated))
    }
  }
}

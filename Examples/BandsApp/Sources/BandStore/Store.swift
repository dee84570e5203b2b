// A persistence layer in the shape of Core Data: model objects are mutable classes that are not
// Sendable, a context owned by the main actor hands them out, and the disk and the server are reached
// through completion handlers that call back on background queues with Sendable snapshots.

import Dispatch

/// A band as the store keeps it: a mutable class, not `Sendable` (like an `NSManagedObject`).
public final class Band {
  /// The band's identifier in the store.
  public let id: Int
  /// The band's name.
  public var name: String
  /// Other names the band has been known by.
  public var otherNames: [String]
  /// The server's revision of this band; 0 until it has been synced.
  public var revision: Int

  init(_ record: BandRecord) {
    id = record.id
    name = record.name
    otherNames = record.otherNames
    revision = record.revision
  }

  /// A `Sendable` snapshot, to send to the disk or the server.
  public var record: BandRecord {
    BandRecord(id: id, name: name, otherNames: otherNames, revision: revision)
  }

  /// Takes over what the server sent back.
  public func apply(_ record: BandRecord) {
    name = record.name
    otherNames = record.otherNames
    revision = record.revision
  }
}

/// A `Sendable` snapshot of a band, as it travels to the disk or the server.
public struct BandRecord: Sendable, Equatable {
  /// The band's identifier.
  public var id: Int
  /// The band's name.
  public var name: String
  /// Other names the band has been known by.
  public var otherNames: [String]
  /// The server's revision; 0 until synced.
  public var revision: Int

  /// A snapshot with these fields.
  public init(id: Int, name: String, otherNames: [String] = [], revision: Int = 0) {
    self.id = id
    self.name = name
    self.otherNames = otherNames
    self.revision = revision
  }
}

/// The steps that can fail, for trying the failure path (`--fail-at STEP`).
public enum Step: String, Sendable, CaseIterable {
  case bootstrap, fetch, update, save
}

/// What went wrong, and at which step.
public enum StoreError: Error, Equatable {
  case unavailable(Step)
  case notFound(id: Int)
}

/// The disk: loads and writes snapshots on a background queue.
public struct Disk: Sendable {
  private let failAt: Step?
  private let queue = DispatchQueue(label: "BandStore.Disk")

  /// A disk that fails at `failAt` if that is `.bootstrap`.
  public init(failAt: Step?) { self.failAt = failAt }

  /// Reads every stored band, calling back on the disk's queue.
  public func loadRecords(completion: @escaping @Sendable (Result<[BandRecord], StoreError>) -> Void) {
    let failAt = self.failAt
    queue.async {
      if failAt == .bootstrap { return completion(.failure(.unavailable(.bootstrap))) }
      completion(.success([BandRecord(id: 1, name: "The Beatles"), BandRecord(id: 2, name: "Queen")]))
    }
  }
}

/// The server: accepts a changed band and answers with the stored revision, on a background queue.
public struct BandServer: Sendable {
  private let failAt: Step?
  private let queue = DispatchQueue(label: "BandStore.BandServer")

  /// A server that fails at `failAt` if that is `.update`.
  public init(failAt: Step?) { self.failAt = failAt }

  /// Stores `record` as the next revision, calling back on the server's queue.
  public func update(
    _ record: BandRecord, completion: @escaping @Sendable (Result<BandRecord, StoreError>) -> Void
  ) {
    let failAt = self.failAt
    queue.asyncAfter(deadline: .now() + .milliseconds(20)) {
      if failAt == .update { return completion(.failure(.unavailable(.update))) }
      var stored = record
      stored.revision += 1
      completion(.success(stored))
    }
  }
}

/// The objects the app works with, owned by the main actor (like a main-queue `NSManagedObjectContext`).
/// Not `Sendable`: it hands out `Band`s and must stay where it was made.
public final class StoreContext {
  private let failAt: Step?
  private var bands: [Int: Band] = [:]
  /// What the last `save()` wrote, by id.
  public private(set) var saved: [Int: BandRecord] = [:]

  /// A context that fails at `failAt` if that is `.fetch` or `.save`.
  public init(failAt: Step?) { self.failAt = failAt }

  /// Registers loaded records as objects, keeping objects that already exist.
  public func insert(_ records: [BandRecord]) {
    for record in records where bands[record.id] == nil { bands[record.id] = Band(record) }
  }

  /// The band with `id`, if the context has it.
  public func fetchBand(id: Int) -> Result<Band, StoreError> {
    if failAt == .fetch { return .failure(.unavailable(.fetch)) }
    guard let band = bands[id] else { return .failure(.notFound(id: id)) }
    return .success(band)
  }

  /// Writes every object's current state.
  public func save() -> Result<Void, StoreError> {
    if failAt == .save { return .failure(.unavailable(.save)) }
    for (id, band) in bands { saved[id] = band.record }
    return .success(())
  }
}

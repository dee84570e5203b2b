// The persistence layer: SQLite through GRDB, whose asynchronous APIs call back on GRDB's own queues.
// Each API is wrapped once, with `ResultPromise { done in … }`. GRDB reports `any Error`; the app's
// code works with a typed `StoreError`, so each wrapper meets GRDB's error at the boundary with
// `mapError(StoreError.init)`, and nothing above it needs a cast.

import Dispatch
import GRDB
import ResultPromise

/// A band as the database stores it: a value, read and written on GRDB's queue.
nonisolated struct BandRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
  static let databaseTableName = "band"
  var id: Int64
  var name: String
  /// Other names, separated by "|".
  var otherNames: String
  var revision: Int
}

/// What can go wrong, as the app sees it.
nonisolated enum StoreError: Error, Equatable {
  case notFound(id: Int64)
  case database(String)
  case server(String)
  /// The work stopped because it was asked to (`cancel()`).
  case cancelled

  /// Meets an `any Error` from GRDB (or from our own code inside its closures) at the boundary.
  init(_ error: any Error) {
    switch error {
    case let error as StoreError: self = error
    case let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT: self = .cancelled
    case let error as DatabaseError: self = .database(error.message ?? "\(error.resultCode)")
    default: self = .database("\(error)")
    }
  }
}

/// Where a run of the example fails on purpose, with a real error from SQLite or the server.
nonisolated enum Step: String, Sendable, CaseIterable {
  case migrate, fetch, update, save
}

/// The database: an in-memory SQLite database behind a GRDB `DatabaseQueue`.
nonisolated struct BandDatabase: Sendable {
  private let queue: DatabaseQueue
  private let failAt: Step?

  init(failAt: Step?) throws {
    queue = try DatabaseQueue()
    self.failAt = failAt
  }

  /// Creates the table and two bands.
  func migrate() -> ResultPromise<Void, StoreError> {
    let failAt = self.failAt
    return ResultPromise<Void, any Error> { done in
      queue.asyncWrite({ db in
        try db.create(table: BandRecord.databaseTableName) { table in
          table.primaryKey("id", .integer)
          table.column("name", .text).notNull().check { length($0) > 0 }
          table.column("otherNames", .text).notNull()
          table.column("revision", .integer).notNull()
        }
        try BandRecord(id: 1, name: "The Beatles", otherNames: "", revision: 0).insert(db)
        try BandRecord(id: 2, name: "Queen", otherNames: "", revision: 0).insert(db)
        if failAt == .migrate { try db.execute(sql: "INSERT INTO band (id) VALUES (3)") }  // NOT NULL fails
      }) { _, result in done(result) }
    }
    .mapError(StoreError.init)
  }

  /// Reads the band with `id`.
  func band(id: Int64) -> ResultPromise<BandRecord, StoreError> {
    let table = failAt == .fetch ? "no_such_table" : BandRecord.databaseTableName
    return ResultPromise<BandRecord, any Error> { done in
      queue.asyncRead { access in
        done(
          Result {
            let db = try access.get()
            let sql = "SELECT * FROM \(table) WHERE id = ?"
            guard let record = try BandRecord.fetchOne(db, sql: sql, arguments: [id]) else {
              throw StoreError.notFound(id: id)
            }
            return record
          })
      }
    }
    .mapError(StoreError.init)
  }

  /// Writes `record` in a transaction.
  func save(_ record: BandRecord) -> ResultPromise<BandRecord, StoreError> {
    var written = record
    if failAt == .save { written.name = "" }  // the CHECK constraint rejects it
    return ResultPromise<BandRecord, any Error> { [written] done in
      queue.asyncWrite({ db in
        try written.update(db)
        return written
      }) { _, result in done(result) }
    }
    .mapError(StoreError.init)
  }

  /// Counts to `limit` in SQL, one row at a time: minutes of work for a billion, unless it is stopped.
  /// A request to cancel interrupts the statement (`sqlite3_interrupt`), which then fails with
  /// `SQLITE_INTERRUPT` — reported as `StoreError.cancelled`. (`interrupt()` stops whatever statement
  /// runs on this database at that moment: the price of SQLite's API.)
  func count(to limit: Int) -> ResultPromise<Int, StoreError> {
    ResultPromise<Int, any Error> { done, onCancel in
      onCancel { queue.interrupt() }
      queue.asyncRead { access in
        done(
          Result {
            let sql = """
              WITH RECURSIVE counter(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counter WHERE n < ?)
              SELECT count(*) FROM counter
              """
            return try Int.fetchOne(try access.get(), sql: sql, arguments: [limit]) ?? 0
          })
      }
    }
    .mapError(StoreError.init)
  }

  /// The band with `id` as stored, read synchronously (for the example's own check).
  func stored(id: Int64) throws -> BandRecord? {
    try queue.read { db in try BandRecord.fetchOne(db, key: id) }
  }
}

/// A remote server, simulated: answers on a background queue after a short delay.
nonisolated struct BandServer: Sendable {
  let failAt: Step?
  private let queue = DispatchQueue(label: "GRDBBands.BandServer")

  /// Stores `record` remotely and answers with the server's copy, one revision later.
  func update(_ record: BandRecord, completion: @escaping @Sendable (Result<BandRecord, StoreError>) -> Void)
  {
    let failAt = self.failAt
    queue.asyncAfter(deadline: .now() + .milliseconds(20)) {
      if failAt == .update { return completion(.failure(.server("503 Service Unavailable"))) }
      var stored = record
      stored.revision += 1
      completion(.success(stored))
    }
  }
}

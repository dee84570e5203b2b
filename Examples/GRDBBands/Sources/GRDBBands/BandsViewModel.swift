// App code: a main-actor view model (this target's default isolation is MainActor, as in a new Xcode 26
// app) that edits a `Band` — a mutable model class that is not `Sendable`. Every closure of the chain
// below runs on the main actor, touches the view model and the model object, and needs no
// `@unchecked Sendable`, `nonisolated(unsafe)` or main-actor assertions.

import ResultPromise

/// The band the screen edits: mutable, and not `Sendable`, like most app models.
nonisolated final class Band {
  let id: Int64
  var name: String
  var otherNames: [String]
  var revision: Int

  init(_ record: BandRecord) {
    id = record.id
    name = record.name
    otherNames = record.otherNames.split(separator: "|").map(String.init)
    revision = record.revision
  }

  /// A snapshot to hand to the database or the server.
  var record: BandRecord {
    BandRecord(id: id, name: name, otherNames: otherNames.joined(separator: "|"), revision: revision)
  }

  /// Takes over what the server stored.
  func apply(_ record: BandRecord) {
    name = record.name
    revision = record.revision
  }
}

final class BandsViewModel {
  private let database: BandDatabase
  private let server: BandServer
  /// What the screen shows.
  private(set) var status = "idle"
  /// The band being edited, once loaded.
  private(set) var band: Band?

  init(database: BandDatabase, server: BandServer) {
    self.database = database
    self.server = server
  }

  /// Adds `alias` to the band with `id`, sends it to the server and saves the server's copy.
  /// The pyramid this replaces nests four completion handlers, each with its own error branch.
  func addAlias(_ alias: String, toBand id: Int64) -> ResultPromise<BandRecord, StoreError> {
    let database = self.database
    let server = self.server
    status = "saving"
    return database.migrate()
      .thenAsync { database.band(id: id) }
      .onMainActor
      .map { record in Band(record) }
      .thenAsync { band in
        self.band = band
        band.otherNames.append(alias)
        return ResultPromise { done in server.update(band.record, completion: done) }
          .onMainActor.map { stored in
            band.apply(stored)
            return band
          }
      }
      .thenAsync { band in database.save(band.record) }
      .always { result in
        switch result {
        case .success(let saved): self.status = "saved \(saved.name) as revision \(saved.revision)"
        case .failure(let error): self.status = "failed: \(error)"
        }
      }
      .promise
  }
}

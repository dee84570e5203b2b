// App code: a main-actor view model that loads a band from the store, changes it, sends it to the
// server and saves it — four asynchronous steps in one flat chain, with one failure handler at the end.
// Every closure of the chain runs on the main actor, touches the view model's state and the
// non-Sendable `Band` and `StoreContext`, and needs no `@unchecked Sendable`, `nonisolated(unsafe)`
// or main-actor assertions.

import BandStore
import ResultPromise

@MainActor final class BandsViewModel {
  private let context: StoreContext
  private let disk: Disk
  private let server: BandServer
  /// What the screen shows.
  private(set) var status = "idle"
  /// The band being edited, once loaded.
  private(set) var band: Band?

  init(failAt: Step?) {
    context = StoreContext(failAt: failAt)
    disk = Disk(failAt: failAt)
    server = BandServer(failAt: failAt)
  }

  /// Loads the store from disk into the context.
  func bootstrap() -> ResultPromise<Void, StoreError> {
    let context = self.context
    return ResultPromise { done in disk.loadRecords(completion: done) }
      .onMainActor.map { records in context.insert(records) }
      .promise
  }

  /// Sends `band` to the server and takes over the server's answer; gives up after 10 seconds.
  func update(_ band: Band) -> ResultPromise<Band, StoreError> {
    ResultPromise { done in server.update(band.record, completion: done) }
      .onMainActor.map { stored in
        band.apply(stored)
        return band
      }
      .timeout(.seconds(10), failure: .unavailable(.update))
      .promise
  }

  /// Adds `alias` to the band with `id`, syncs it and saves it; calls `done` when finished either way.
  func addAlias(_ alias: String, toBand id: Int, done: @escaping @MainActor () -> Void) {
    let context = self.context
    status = "saving"
    bootstrap().onMainActor
      .then { _ in context.fetchBand(id: id) }
      .thenAsync { band in
        self.band = band
        band.otherNames.append(alias)
        return self.update(band)
      }
      .then { _ in context.save() }
      .recover { error in
        self.status = "failed: \(error)"
        return .failure(error)
      }
      .await { result in
        if case .success = result {
          let saved = context.saved[id]
          self.status = "saved \(saved?.name ?? "?") as revision \(saved?.revision ?? 0)"
        }
        done()
      }
  }
}

// An app that imports two libraries, each with its own private copy of different families of
// ResultPromise, and the package.
import Dispatch
import LibraryA
import LibraryB
import ResultPromise

enum AppError: Error { case failed }

@MainActor func run() async {
  let reportsA = LibraryA.countBrokenPromises()
  let reportsB = LibraryB.countBrokenPromises()
  let a = ResultPromise<String, LibraryAError> { done in LibraryA.load(1, completion: done) }
  let b = ResultPromise<[String], LibraryBError> { done in LibraryB.loadAll([2], completion: done) }
  let both = await ResultPromise.zip(a.mapError { _ in AppError.failed }, b.mapError { _ in AppError.failed })
    .onMainActor.map { "\($0.0), \($0.1.joined()) within 60 s" }.result
  let shown = await withCheckedContinuation { continuation in
    LibraryA.show(3) { continuation.resume(returning: $0) }
  }
  LibraryA.dropPendingPromise()
  print("app: \((try? both.get()) ?? "failed"), \(shown) on the main actor; reports: A \(reportsA()), B \(reportsB())")
}

await run()

// Cancellation that reaches real work: `GRDBBands --cancel` starts a SQL query that would run for minutes
// and an HTTP request that a loopback server never answers, then cancels each chain a moment later, as a
// screen that goes away would. The query stops through GRDB's `interrupt()` and reports SQLITE_INTERRUPT;
// the request stops through `URLSessionTask.cancel()` and reports `URLError.cancelled`; both reach the app as
// `StoreError.cancelled`, and the server sees its connection close. The query is stopped twice: once as
// the chain's first promise, and once adopted by a `thenAsync` step after a plain cache read — a chain that
// starts with no work to stop still reaches the work it adopts. Exits 0 if all three stopped early.

import Dispatch
import Foundation
import ResultPromise

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Downloads `url`; a request to cancel cancels the task, which reports `URLError.cancelled`.
nonisolated func download(_ url: URL) -> ResultPromise<Data, StoreError> {
  ResultPromise { done, onCancel in
    let task = URLSession.shared.dataTask(with: url) { data, _, error in
      if let data, error == nil { return done(.success(data)) }
      let cancelled = (error as? URLError)?.code == .cancelled
      done(.failure(cancelled ? .cancelled : .server(error.map { "\($0)" } ?? "no data")))
    }
    onCancel { task.cancel() }
    task.resume()
  }
}

/// How many rows the statistic counts, read from a cache through a completion handler, as apps read
/// settings: a plain promise, with no work to stop.
nonisolated func rowsToCount(completion: @escaping @Sendable (Result<Int, StoreError>) -> Void) {
  DispatchQueue.global().async { completion(.success(1_000_000_000)) }
}

/// Runs the three demonstrations, one after the other, and exits.
@MainActor func demonstrateCancellation(database: BandDatabase) {
  // A screen shows a statistic that takes SQLite minutes to compute, and goes away after 300 ms.
  stopsEarly(database.count(to: 1_000_000_000)) { milliseconds in
    "query stopped after \(milliseconds) ms: SQLITE_INTERRUPT reached the app as StoreError.cancelled"
  }
  // The same, when the chain starts with a cache read and adopts the query.
  .thenAsync { queryStopped in
    let statistic = ResultPromise { done in rowsToCount(completion: done) }
      .thenAsync { rows in database.count(to: rows) }
    return stopsEarly(statistic) { milliseconds in
      "adopted query stopped after \(milliseconds) ms: the request reached it past the cache read"
    }
    .map { queryStopped && $0 }
  }
  // A screen loads from a server that never answers, and goes away after 300 ms.
  .thenAsync { bothStopped in
    let server: LoopbackServer
    do {
      server = try LoopbackServer()
    } catch {
      print("no loopback server: \(error)")
      exit(1)
    }
    return stopsEarly(download(URL(string: "http://127.0.0.1:\(server.port)/slow")!), closing: server) { _ in
      "request stopped: URLError.cancelled reached the app as StoreError.cancelled; the server saw the connection close"
    }
    .map { bothStopped && $0 }
  }
  .await { result in exit(result == .success(true) ? 0 : 1) }
}

/// Cancels `work` after 300 ms, as a screen that goes away would; prints `stopped(milliseconds)` if it
/// then reported `StoreError.cancelled` within ten seconds (and `server`, if given, saw its client close),
/// otherwise what happened. Succeeds with whether it stopped.
@MainActor func stopsEarly<Value>(
  _ work: ResultPromise<Value, StoreError>, closing server: LoopbackServer? = nil,
  stopped: @escaping (_ milliseconds: UInt64) -> String
) -> MainActorPromise<Bool, Never> {
  let started = DispatchTime.now()
  let view = work.onMainActor
  DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(300)) { view.cancel() }
  return view.map { _ in
    print("not stopped: the work finished")
    return false
  }
  .recover { error in
    let milliseconds = (DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000
    let closed = server?.waitForClose(seconds: 10) ?? true
    let early = error == .cancelled && milliseconds < 10_000 && closed
    print(early ? stopped(milliseconds) : "not stopped: \(error) after \(milliseconds) ms, closed: \(closed)")
    return .success(early)
  }
}

/// An HTTP server on 127.0.0.1 that accepts one connection, reads the request and never answers: it
/// waits until the client closes the connection, and says when it has.
nonisolated final class LoopbackServer: Sendable {
  let port: UInt16
  private let closed = DispatchSemaphore(value: 0)

  struct Failure: Error { let call: String }

  init() throws {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard listener >= 0 else { throw Failure(call: "socket") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, length) == 0 && listen(listener, 1) == 0
          && getsockname(listener, $0, &length) == 0
      }
    }
    guard bound else { throw Failure(call: "bind") }
    port = UInt16(bigEndian: address.sin_port)
    let closed = self.closed
    Thread.detachNewThread {
      let connection = accept(listener, nil, nil)
      var buffer = [UInt8](repeating: 0, count: 4096)
      while connection >= 0, recv(connection, &buffer, buffer.count, 0) > 0 {}  // 0: the client closed
      close(connection)
      close(listener)
      closed.signal()
    }
  }

  /// Whether the client closed its connection within `seconds`.
  func waitForClose(seconds: Int) -> Bool {
    closed.wait(timeout: .now() + .seconds(seconds)) == .success
  }
}

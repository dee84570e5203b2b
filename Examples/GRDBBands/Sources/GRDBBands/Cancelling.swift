// Cancellation that reaches real work: `GRDBBands --cancel` starts a SQL query that would run for minutes
// and an HTTP request that a loopback server never answers, then cancels each chain a moment later, as a
// screen that goes away would. The query stops through GRDB's `interrupt()` and reports SQLITE_INTERRUPT;
// the request stops through `URLSessionTask.cancel()` and reports `URLError.cancelled`; both reach the app as
// `StoreError.cancelled`, and the server sees its connection close. Exits 0 if both stopped early.

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

/// Runs both demonstrations, one after the other, and exits.
@MainActor func demonstrateCancellation(database: BandDatabase) {
  let started = DispatchTime.now()
  let milliseconds = { (DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000 }

  // A screen shows a statistic that takes SQLite minutes to compute, and goes away after 300 ms.
  let statistic = database.count(to: 1_000_000_000).onMainActor.map { "counted \($0) rows" }
  DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(300)) { statistic.cancel() }
  statistic.await { result in
    let queryStopped = result == .failure(.cancelled) && milliseconds() < 10_000
    print(
      queryStopped
        ? "query stopped after \(milliseconds()) ms: SQLITE_INTERRUPT reached the app as StoreError.cancelled"
        : "query not stopped: \(result) after \(milliseconds()) ms")

    // A screen loads from a server that never answers, and goes away after 300 ms.
    let server: LoopbackServer
    do {
      server = try LoopbackServer()
    } catch {
      print("no loopback server: \(error)")
      exit(1)
    }
    let page = download(URL(string: "http://127.0.0.1:\(server.port)/slow")!).map { $0.count }
    DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(300)) { page.cancel() }
    page.onMainActor.await { result in
      let closed = server.waitForClose(seconds: 10)
      let requestStopped = result == .failure(.cancelled) && closed
      print(
        requestStopped
          ? "request stopped: URLError.cancelled reached the app as StoreError.cancelled; the server saw the connection close"
          : "request not stopped: \(result); the server saw the connection close: \(closed)")
      exit(queryStopped && requestStopped ? 0 : 1)
    }
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

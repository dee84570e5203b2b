import Dispatch
import Foundation
import ResultPromise
import Testing

@Suite("Combining: all, zip, race, any, allSettled")
struct CombiningTests {
  /// Pending promises and a way to settle them in a chosen order.
  func pending(_ count: Int) -> [ResultPromise<Int, TestError>] {
    (0..<count).map { _ in ResultPromise<Int, TestError>() }
  }

  // MARK: all

  @Test("all succeeds with values in input order whatever order the inputs settle in")
  func allKeepsInputOrder() {
    let inputs = pending(5)
    let result = Log<Result<[Int], TestError>>()
    ResultPromise.all(inputs).await(result.append)
    for index in [3, 0, 4, 1, 2] {
      #expect(result.count == 0)
      inputs[index].succeed(index * 10)
    }
    #expect(result.values == [.success([0, 10, 20, 30, 40])])
  }

  @Test("all fails with the first failure in time, not in input order, and only once")
  func allFailsWithFirstFailure() {
    let inputs = pending(3)
    let result = Log<Result<[Int], TestError>>()
    ResultPromise.all(inputs).await(result.append)
    inputs[2].fail(.other(2))
    inputs[0].fail(.other(0))
    inputs[1].succeed(1)
    #expect(result.values == [.failure(.other(2))])
  }

  @Test("all over an empty collection succeeds at once with []")
  func allEmpty() {
    let result = Log<Result<[Int], TestError>>()
    ResultPromise<Int, TestError>.all([]).await(result.append)
    #expect(result.values == [.success([])])
  }

  @Test("all settles once when its inputs settle at the same moment on different threads")
  func allConcurrentInputs() {
    for _ in 0..<1_000 {
      let inputs = pending(4)
      let calls = Counter()
      let result = Log<Result<[Int], TestError>>()
      ResultPromise.all(inputs).await {
        calls.increment()
        result.append($0)
      }
      DispatchQueue.concurrentPerform(iterations: 4) { inputs[$0].succeed($0) }
      #expect(calls.value == 1)
      #expect(result.values == [.success([0, 1, 2, 3])])
    }
  }

  // MARK: allSettled

  @Test("allSettled reports every outcome in input order and cannot fail")
  func allSettledReportsEverything() {
    let inputs = pending(3)
    let result = Log<Result<[Result<Int, TestError>], Never>>()
    ResultPromise.allSettled(inputs).await(result.append)
    inputs[1].fail(.boom)
    inputs[2].succeed(2)
    #expect(result.count == 0)
    inputs[0].succeed(0)
    #expect(result.values == [.success([.success(0), .failure(.boom), .success(2)])])
  }

  @Test("allSettled over an empty collection succeeds at once with []")
  func allSettledEmpty() {
    let result = Log<Result<[Result<Int, TestError>], Never>>()
    ResultPromise<Int, TestError>.allSettled([]).await(result.append)
    #expect(result.values == [.success([])])
  }

  // MARK: any

  @Test("any succeeds with the first success and ignores earlier failures")
  func anyFirstSuccess() {
    let inputs = pending(3)
    let result = Log<Result<Int, AggregateError<TestError>>>()
    ResultPromise.any(inputs).await(result.append)
    inputs[0].fail(.boom)
    inputs[2].succeed(2)
    inputs[1].succeed(1)
    #expect(result.values == [.success(2)])
  }

  @Test("any fails with every failure in input order when all inputs fail")
  func anyAllFail() {
    let inputs = pending(3)
    let result = Log<Result<Int, AggregateError<TestError>>>()
    ResultPromise.any(inputs).await(result.append)
    inputs[2].fail(.other(2))
    inputs[0].fail(.other(0))
    inputs[1].fail(.other(1))
    #expect(result.values == [.failure(AggregateError(errors: [.other(0), .other(1), .other(2)]))])
  }

  @Test("any over an empty collection fails at once with an empty AggregateError")
  func anyEmpty() {
    let result = Log<Result<Int, AggregateError<TestError>>>()
    ResultPromise<Int, TestError>.any([]).await(result.append)
    #expect(result.values == [.failure(AggregateError(errors: []))])
  }

  // MARK: race

  @Test("race settles like the first input to settle, success or failure")
  func raceFirstSettled() {
    let inputs = pending(3)
    let result = Log<Result<Int, TestError>>()
    ResultPromise.race(inputs).await(result.append)
    inputs[1].fail(.boom)
    inputs[0].succeed(0)
    #expect(result.values == [.failure(.boom)])
    let won = Log<Result<Int, TestError>>()
    ResultPromise.race([ResultPromise(), ResultPromise(value: 7)]).await(won.append)
    #expect(won.values == [.success(7)])
  }

  @Test("race over an empty collection never settles, as documented")
  func raceEmpty() {
    let raced = ResultPromise<Int, TestError>.race([])
    let calls = Counter()
    raced.await { _ in calls.increment() }
    #expect(raced.isPending)
    #expect(calls.value == 0)
  }

  // MARK: zip

  @Test("zip combines promises of different types into a tuple in argument order")
  func zipHeterogeneous() {
    let number = ResultPromise<Int, TestError>()
    let text = ResultPromise<String, TestError>()
    let flag = ResultPromise<Bool, TestError>()
    let result = Log<String>()
    ResultPromise.zip(number, text, flag).onSuccess { result.append("\($0) \($1) \($2)") }
    flag.succeed(true)
    text.succeed("two")
    #expect(result.count == 0)
    number.succeed(1)
    #expect(result.values == ["1 two true"])
  }

  @Test("zip takes any number of promises, including one and six")
  func zipArities() {
    let seen = Log<String>()
    ResultPromise.zip(ResultPromise<Int, TestError>(value: 1)).onSuccess { seen.append("\($0)") }
    ResultPromise.zip(
      ResultPromise<Int, TestError>(value: 1), ResultPromise<Int, TestError>(value: 2),
      ResultPromise<Int, TestError>(value: 3), ResultPromise<Int, TestError>(value: 4),
      ResultPromise<Int, TestError>(value: 5), ResultPromise<String, TestError>(value: "six")
    ).onSuccess { seen.append("\($0)\($1)\($2)\($3)\($4)\($5)") }
    #expect(seen.values == ["1", "12345six"])
  }

  @Test("zip fails with the first failure in time")
  func zipFailure() {
    let number = ResultPromise<Int, TestError>()
    let text = ResultPromise<String, TestError>()
    let result = Log<TestError>()
    ResultPromise.zip(number, text).onFailure(result.append)
    text.fail(.other(1))
    number.fail(.other(0))
    #expect(result.values == [.other(1)])
  }

  @Test("zip with no promises succeeds at once")
  func zipEmpty() {
    let zipped: ResultPromise<Void, TestError> = ResultPromise<Never, TestError>.zip()
    #expect(!zipped.isPending)
  }

  @Test("zip settles once when its inputs settle at the same moment on different threads")
  func zipConcurrentInputs() {
    for _ in 0..<1_000 {
      let a = ResultPromise<Int, TestError>()
      let b = ResultPromise<String, TestError>()
      let calls = Counter()
      ResultPromise.zip(a, b).await { if case .success((1, "b")) = $0 { calls.increment() } }
      DispatchQueue.concurrentPerform(iterations: 2) { if $0 == 0 { a.succeed(1) } else { b.succeed("b") } }
      #expect(calls.value == 1)
    }
  }

  /// The cases `zip` is run in, each in a child process of its own: built optimised, `zip` crashed on its
  /// first call from 0.2.0 to 0.4.6, which ends the whole test process; in a child it fails one test.
  enum ZipCase: String, CaseIterable, Codable, Sendable {
    case noInputs, oneSettledInt, twoSettledInts, threePendingMixed, fourSettledStructsAndClasses
    case sevenPendingMixed, sevenWithAFailure, settledFailure, cancelled

    struct Point: Equatable, Sendable { var x, y: Double }
    final class Name: Sendable {
      let text: String
      init(_ text: String) { self.text = text }
    }

    /// Runs the case in this process; returns a description of what went wrong, or `nil`.
    func run() -> String? {
      func pending<Value>(_: Value.Type) -> ResultPromise<Value, TestError> { ResultPromise() }
      let seen = Log<String>()
      func check(_ expected: String) -> String? {
        seen.values == [expected] ? nil : "\(rawValue): saw \(seen.values), expected [\(expected)]"
      }
      @Sendable func show<Value>(_ result: Result<Value, TestError>) -> String {
        switch result {
        case .success(let value): "success \(value)"
        case .failure(let error): "failure \(error)"
        }
      }
      switch self {
      case .noInputs:
        ResultPromise<Never, TestError>.zip().await { seen.append(show($0)) }
        return check("success ()")
      case .oneSettledInt:
        ResultPromise.zip(ResultPromise<Int, TestError>(value: 1)).await { seen.append(show($0)) }
        return check("success 1")
      case .twoSettledInts:
        ResultPromise.zip(ResultPromise<Int, Never>(value: 1), ResultPromise<Int, Never>(value: 2))
          .await { seen.append("\($0)") }
        return check("success(1, 2)")
      case .threePendingMixed:
        let (a, b, c) = (pending(Int.self), pending(String.self), pending(Double.self))
        ResultPromise.zip(a, b, c).await { seen.append(show($0)) }
        c.succeed(2.5)
        b.succeed("b")
        if !seen.values.isEmpty { return "\(rawValue): settled before its last input" }
        a.succeed(1)
        return check(#"success (1, "b", 2.5)"#)
      case .fourSettledStructsAndClasses:
        ResultPromise.zip(
          ResultPromise<Point, TestError>(value: Point(x: 1, y: 2)),
          ResultPromise<Name, TestError>(value: Name("n")), ResultPromise<String, TestError>(value: "s"),
          ResultPromise<Int, TestError>(value: 4)
        ).await { result in
          seen.append(show(result.map { "\($0.0.x) \($0.0.y) \($0.1.text) \($0.2) \($0.3)" }))
        }
        return check("success 1.0 2.0 n s 4")
      case .sevenPendingMixed, .sevenWithAFailure:
        let (a, b, c) = (pending(Int.self), pending(String.self), pending(Double.self))
        let (d, e, f, g) = (pending(Point.self), pending(Name.self), pending([Int].self), pending(Bool.self))
        ResultPromise.zip(a, b, c, d, e, f, g).await { result in
          seen.append(show(result.map { "\($0.0) \($0.1) \($0.2) \($0.3.x) \($0.4.text) \($0.5) \($0.6)" }))
        }
        g.succeed(true)
        e.succeed(Name("e"))
        a.succeed(1)
        if self == .sevenWithAFailure {
          f.fail(.other(6))
          c.fail(.other(3))
          return check("failure other(6)")
        }
        f.succeed([6])
        c.succeed(3)
        d.succeed(Point(x: 4, y: 0))
        b.succeed("b")
        return check("success 1 b 3.0 4.0 e [6] true")
      case .settledFailure:
        ResultPromise.zip(
          ResultPromise<Int, TestError>(error: .boom), ResultPromise<String, TestError>(value: "s")
        )
        .await { seen.append(show($0)) }
        return check("failure boom")
      case .cancelled:
        let requests = Counter()
        func cancellable<Value>(_: Value.Type) -> ResultPromise<Value, TestError> {
          ResultPromise { done, onCancel in
            onCancel {
              requests.increment()
              done(.failure(.other(requests.value)))
            }
          }
        }
        let zipped = ResultPromise.zip(cancellable(Int.self), cancellable(String.self))
        zipped.await { seen.append(show($0)) }
        zipped.cancel()
        if requests.value != 2 { return "\(rawValue): \(requests.value) inputs heard the request, not 2" }
        return check("failure other(1)")
      }
    }
  }

  @Test(
    "zip gives the right tuple or the first failure, for 0 to 7 inputs of any type, in a child process",
    arguments: ZipCase.allCases)
  func zipInAChildProcess(zipCase: ZipCase) async {
    await #expect(processExitsWith: .success) { [zipCase] in
      if let problem = zipCase.run() {
        print(problem)
        exit(1)
      }
    }
  }

  // MARK: At most n at a time

  /// Makers whose promises settle when the test says, counting how many are pending at once.
  final class Gate: Sendable {
    let pending = Counter()
    let mostPending = Log<Int>()
    let made = Log<Int>()
    let promises = Log<ResultPromise<Int, TestError>>()

    func maker(_ index: Int) -> () -> ResultPromise<Int, TestError> {
      { [self] in
        made.append(index)
        pending.increment()
        mostPending.append(pending.value)
        let promise = ResultPromise<Int, TestError>()
        promises.append(promise)
        return promise.always { _ in self.pending.decrement() }
      }
    }

    /// Settles the `index`-th promise made, from another thread, and waits until it has.
    func settle(_ index: Int, with result: Result<Int, TestError>) {
      let promise = promises.values[index]
      let done = DispatchSemaphore(value: 0)
      Thread {
        promise.fulfil(with: result)
        done.signal()
      }.start()
      done.wait()
    }
  }

  @Test(
    "all(_:concurrently:) never has more than n pending, keeps the makers' order, and pulls as places free")
  func atMostNAtATime() {
    let gate = Gate()
    let combined = ResultPromise.all((0..<10).map(gate.maker), concurrently: 3)
    #expect(gate.made.values == [0, 1, 2], "the first three at once, on the calling thread")
    // Settle out of order; each settlement frees one place.
    for (step, index) in [2, 0, 1, 4, 3, 5, 8, 6, 7, 9].enumerated() {
      #expect(gate.promises.count > index, "the settlement before called the next maker")
      gate.settle(index, with: .success(index * 10))
      #expect(gate.made.count == min(10, step + 4))
    }
    #expect(gate.mostPending.values.max() == 3)
    #expect(combined.settledResult == .success((0..<10).map { $0 * 10 }))
  }

  @Test("all(_:concurrently:) ends with the first failure and calls no further maker")
  func atMostNStopsAtFirstFailure() {
    let gate = Gate()
    let combined = ResultPromise.all((0..<10).map(gate.maker), concurrently: 2)
    gate.settle(1, with: .failure(.other(1)))
    #expect(combined.settledResult == .failure(.other(1)))
    gate.settle(0, with: .success(0))
    #expect(gate.made.values == [0, 1], "no maker after the failure, even when a place frees")
    // Synchronously failing makers: the pump stops at once.
    let calls = Counter()
    let makers = (0..<100).map { index in
      {
        calls.increment()
        return index == 3 ? ResultPromise<Int, TestError>(error: .boom) : ResultPromise(value: index)
      }
    }
    #expect(ResultPromise.all(makers, concurrently: 2).settledResult == .failure(.boom))
    #expect(calls.value == 4)
  }

  @Test("all(_:concurrently:) over no makers succeeds at once, and n above the count or below 1 is fine")
  func atMostNEdges() {
    typealias Makers = [() -> ResultPromise<Int, TestError>]
    #expect(ResultPromise.all(Makers(), concurrently: 4).settledResult == .success([]))
    #expect(
      ResultPromise.allSettled(Makers(), concurrently: 4).settledResult.map { $0.map(\.count) } == .success(0)
    )
    let gate = Gate()
    let wide = ResultPromise.all((0..<3).map(gate.maker), concurrently: 100)
    #expect(gate.made.values == [0, 1, 2])
    for index in 0..<3 { gate.settle(index, with: .success(index)) }
    #expect(wide.settledResult == .success([0, 1, 2]))
    let narrow = Gate()
    let one = ResultPromise.all((0..<3).map(narrow.maker), concurrently: 0)
    #expect(narrow.made.values == [0], "a limit below 1 counts as 1")
    for index in 0..<3 {
      #expect(narrow.promises.count > index, "the settlement before called the next maker")
      narrow.settle(index, with: .success(index))
    }
    #expect(narrow.mostPending.values.max() == 1)
    #expect(one.settledResult == .success([0, 1, 2]))
  }

  @Test("a lazy sequence of makers is pulled only as places free")
  func lazyMakersArePulledLazily() {
    let gate = Gate()
    let pulled = Counter()
    let makers = (0..<1_000).lazy.map { index in
      pulled.increment()
      return gate.maker(index)
    }
    let combined = ResultPromise.all(makers, concurrently: 2)
    #expect(pulled.value == 2)
    gate.settle(0, with: .success(0))
    #expect(pulled.value == 3)
    #expect(combined.isPending)
    // End it, and settle what is still pending, so that nothing is left waiting (the gate holds them).
    gate.settle(1, with: .failure(.boom))
    #expect(combined.settledResult == .failure(.boom))
    gate.settle(2, with: .success(2))
    #expect(pulled.value == 3, "nothing is pulled after the failure")
  }

  @Test("@Sendable makers, as main-actor code writes them, run through the same pump")
  @MainActor func sendableMakersFromTheMainActor() async {
    let pending = Counter()
    let most = Log<Int>()
    let makers = (0..<6).map { index in
      { @Sendable in
        pending.increment()
        most.append(pending.value)
        return ResultPromise<Int, TestError> { done in
          DispatchQueue.global().async {
            pending.decrement()
            done(index == 4 ? .failure(.boom) : .success(index))
          }
        }
      }
    }
    let outcomes = await ResultPromise.allSettled(makers, concurrently: 2).result
    #expect(outcomes.map { $0.map { try? $0.get() } } == .success([0, 1, 2, 3, nil, 5]))
    #expect(most.values.max() ?? 0 <= 2)
    let values = await ResultPromise.all(
      (0..<3).map { index in { @Sendable in ResultPromise<Int, TestError>(value: index) } }, concurrently: 2
    ).result
    #expect(values == .success([0, 1, 2]))
  }

  @Test("allSettled(_:concurrently:) calls every maker and keeps every outcome, in the makers' order")
  func allSettledAtMostN() {
    let gate = Gate()
    let combined = ResultPromise.allSettled((0..<4).map(gate.maker), concurrently: 2)
    gate.settle(1, with: .failure(.boom))
    #expect(gate.promises.count > 2, "the settlement before called the next maker")
    gate.settle(0, with: .success(0))
    #expect(gate.promises.count > 3, "the settlement before called the next maker")
    gate.settle(3, with: .success(3))
    gate.settle(2, with: .failure(.other(2)))
    #expect(gate.made.values == [0, 1, 2, 3])
    #expect(gate.mostPending.values.max() == 2)
    #expect(
      combined.settledResult == .success([.success(0), .failure(.boom), .failure(.other(2)), .success(3)]))
  }

  @Test(
    "all(_:concurrently:) from many threads at once: exact counts, never more than n pending (200 trials)")
  func atMostNUnderStress() async {
    for _ in 0..<200 {
      let pending = Counter()
      let most = Log<Int>()
      let makers = (0..<50).map { index in
        {
          pending.increment()
          most.append(pending.value)
          return ResultPromise<Int, TestError> { done in
            DispatchQueue.global().async {
              pending.decrement()
              done(.success(index))
            }
          }
        }
      }
      let values = await ResultPromise.all(makers, concurrently: 4).result
      #expect(values == .success(Array(0..<50)))
      #expect(most.values.max() ?? 0 <= 4)
      #expect(most.count == 50)
    }
  }

  struct ZipReleasedInputMarker: Sendable {}
  struct ZipAfterFailureMarker: Sendable {}

  @Test("zip holds none of its inputs: a pending input nobody else holds is released and reported once")
  func zipReleasesDroppedInput() {
    BrokenPromiseReports.install()
    weak var weakInput: ResultPromise<ZipReleasedInputMarker, TestError>?
    let other = ResultPromise<Int, TestError>()
    let zipped: ResultPromise<(ZipReleasedInputMarker, Int), TestError>
    do {
      let input = ResultPromise<ZipReleasedInputMarker, TestError>()
      weakInput = input
      zipped = ResultPromise.zip(input, other)
    }
    #expect(weakInput == nil)
    #expect(zipped.isPending)
    #expect(BrokenPromiseReports.mentioning("ZipReleasedInputMarker").values.reduce(0, +) == 1)
  }

  @Test("after one input of zip fails, the others are released as soon as nobody else holds them")
  func zipReleasesInputsAfterFailure() {
    BrokenPromiseReports.install()
    weak var weakInput: ResultPromise<ZipAfterFailureMarker, TestError>?
    let failing = ResultPromise<Int, TestError>()
    let failures = Log<TestError>()
    do {
      let input = ResultPromise<ZipAfterFailureMarker, TestError>()
      weakInput = input
      ResultPromise.zip(input, failing).onFailure(failures.append)
      failing.fail(.boom)
      #expect(failures.values == [.boom])
    }
    #expect(weakInput == nil)
  }
}

extension LongChains {
  /// The combinators over a long run of inputs: one at a time with the other long-chain tests.
  @Suite("Combining at scale")
  struct CombiningAtScaleTests {
    @Test("all and allSettled over a long run of inputs settled one by one resolve in constant stack depth")
    func millionInputs() async {
      let count = LongChains.length
      let sums = Log<Int>()
      await onSmallStack {
        let inputs = (0..<count).map { _ in ResultPromise<Int, TestError>() }
        ResultPromise.all(inputs).onSuccess { sums.append($0.reduce(0, +)) }
        ResultPromise.allSettled(inputs).onSuccess { sums.append($0.count) }
        for (index, input) in inputs.enumerated() { input.succeed(index % 2) }
      }
      #expect(sums.values == [count / 2, count])
    }

    @Test(
      "all(_:concurrently:) over a long run of makers whose promises settle at once keeps constant stack depth"
    )
    func millionMakersSettledAtOnce() async {
      let count = LongChains.length
      let sums = Log<Int>()
      await onSmallStack {
        ResultPromise.all(
          (0..<count).lazy.map { index in { ResultPromise<Int, TestError>(value: index % 2) } },
          concurrently: 4
        )
        .onSuccess { sums.append($0.reduce(0, +)) }
        // And inside a callback, where the promises' observers are queued rather than run at once.
        ResultPromise<Int, TestError>(value: 0).await { _ in
          ResultPromise.allSettled(
            (0..<count).lazy.map { index in { ResultPromise<Int, TestError>(value: index) } }, concurrently: 4
          )
          .onSuccess { sums.append($0.count) }
        }
      }
      #expect(sums.values == [count / 2, count])
    }

    @Test(
      "all over a long run of inputs that settle inside each other's observers keeps constant stack depth")
    func millionInputsCascading() async {
      let count = LongChains.length
      let total = Log<Int>()
      await onSmallStack {
        let inputs = (0..<count).map { _ in ResultPromise<Int, TestError>() }
        for index in 0..<(count - 1) {
          let next = inputs[index + 1]
          inputs[index].await { _ in next.succeed(1) }
        }
        ResultPromise.all(inputs).onSuccess { total.append($0.reduce(0, +)) }
        inputs[0].succeed(1)
      }
      #expect(total.values == [count])
    }
  }
}

import Dispatch
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

extension MillionSteps {
  /// The combinators over 1,000,000 inputs: one at a time with the other million-step tests.
  @Suite("Combining at scale")
  struct CombiningAtScaleTests {
    @Test("all and allSettled over 1,000,000 inputs settled one by one resolve in constant stack depth")
    func millionInputs() async {
      let count = 1_000_000
      let sums = Log<Int>()
      await onSmallStack {
        let inputs = (0..<count).map { _ in ResultPromise<Int, TestError>() }
        ResultPromise.all(inputs).onSuccess { sums.append($0.reduce(0, +)) }
        ResultPromise.allSettled(inputs).onSuccess { sums.append($0.count) }
        for (index, input) in inputs.enumerated() { input.succeed(index % 2) }
      }
      #expect(sums.values == [count / 2, count])
    }

    @Test("all over 1,000,000 inputs that settle inside each other's observers keeps constant stack depth")
    func millionInputsCascading() async {
      let count = 1_000_000
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

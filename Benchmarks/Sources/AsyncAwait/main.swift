// ResultPromise beside plain Swift Concurrency on the same jobs: the same completion-handler API, the same
// steps, the same consumer (`Scenarios.swift`). Each contender runs in a fresh process per round, the
// contenders of a case back to back, in alternating order from round to round.
//
//   swift run -c release AsyncAwait [--rounds N] [--mallocs SHIM] [CASE-PREFIX…]
//
// A process makes one untimed run of the case's operations and 3 timed ones, and prints their median in ns
// per operation and a check value (what the consumer received); the table gives each contender's median
// over the rounds, its range, and its ratio to the `async` contender's median of the same run. With
// `--mallocs SHIM` (a preloadable malloc counter that prints `mallocs: N` at exit; `Scripts/async-await`
// builds one), it also counts mallocs per operation: the difference of two processes, one running twice
// the operations of the other, so that start-up cancels out. `AsyncAwait --one SCENARIO CONTENDER PARAM
// OPS` runs one contender alone; `--list` prints the cases.
import Foundation

/// A case: a scenario, its parameter, how many operations a process runs, and the contenders.
struct Case {
  let scenario: String
  let parameter: Int
  let operations: Int
  let contenders: [String]
  var name: String { "\(scenario) \(parameter)" }
}

let cases = [
  Case(
    scenario: "A1", parameter: 1, operations: 4000, contenders: ["floor", "rp", "async", "async-immediate"]),
  Case(
    scenario: "A1", parameter: 10, operations: 4000, contenders: ["floor", "rp", "async", "async-immediate"]),
  Case(scenario: "A2", parameter: 1, operations: 4000, contenders: ["rp", "async", "async-unsafe"]),
  Case(scenario: "A2", parameter: 10, operations: 4000, contenders: ["rp", "async", "async-unsafe"]),
  Case(scenario: "T", parameter: 1, operations: 500, contenders: ["floor", "rp", "async"]),
  Case(scenario: "T", parameter: 10, operations: 500, contenders: ["floor", "rp", "async"]),
  Case(scenario: "B", parameter: 1000, operations: 20, contenders: ["floor", "rp", "async"]),
  Case(scenario: "C", parameter: 1, operations: 4000, contenders: ["rp", "rp-tasks", "async"]),
  Case(
    scenario: "C", parameter: 100, operations: 500,
    contenders: ["rp", "rp-tasks", "async", "async-immediate"]),
  Case(scenario: "Cx", parameter: 100, operations: 500, contenders: ["rp", "async"]),
  Case(scenario: "D", parameter: 100, operations: 500, contenders: ["rp", "async"]),
  Case(scenario: "E", parameter: 10, operations: 2000, contenders: ["rp", "rp-tasks", "async"]),
  Case(scenario: "F", parameter: 1, operations: 4000, contenders: ["floor", "rp", "async"]),
  Case(scenario: "F", parameter: 10, operations: 4000, contenders: ["floor", "rp", "async"]),
]

let arguments = Array(CommandLine.arguments.dropFirst())

/// The `--one` mode: runs one contender in this process and prints `ns_per_op=… check=…`.
func runOne(_ scenario: String, _ contender: String, _ parameter: Int, _ operations: Int) {
  guard let run = makeRunner(scenario, contender, parameter) else {
    FileHandle.standardError.write(Data("no contender \(contender) in \(scenario)\n".utf8))
    exit(2)
  }
  let measure: @Sendable () -> Void = {
    run(operations)
    var samples: [Double] = []
    var check = 0
    for _ in 0..<3 {
      let before = sink.total.load(ordering: .acquiring)
      let elapsed = ContinuousClock().measure { run(operations) }
      check = sink.total.load(ordering: .acquiring) &- before
      samples.append(Double(elapsed / .nanoseconds(1)) / Double(operations))
    }
    print("ns_per_op=\(samples.sorted()[1]) check=\(check)")
    exit(0)
  }
  // F needs the main queue running: it measures on another thread while the main thread runs the queue.
  guard scenario == "F" else { return measure() }
  Thread.detachNewThread(measure)
  dispatchMain()
}

/// Runs this program on one contender in a new process (with `preload` as `LD_PRELOAD`, if given), and
/// returns what it printed, standard error included.
func spawn(_ one: [String], preload: String? = nil) -> String {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
  process.arguments = ["--one"] + one
  if let preload {
    process.environment = ProcessInfo.processInfo.environment.merging(["LD_PRELOAD": preload]) { $1 }
  }
  let output = Pipe()
  process.standardOutput = output
  process.standardError = output
  do { try process.run() } catch { fatalError("cannot run \(CommandLine.arguments[0]): \(error)") }
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return String(decoding: data, as: UTF8.self)
}

/// The number after `key=` (or `key: `) in `text`.
func number(after key: String, in text: String) -> Double? {
  guard let range = text.range(of: key) else { return nil }
  return Double(text[range.upperBound...].prefix { $0.isNumber || $0 == "." || $0 == "-" })
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  return sorted.count % 2 == 1
    ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func formatted(_ value: Double, decimals: Int = 0) -> String {
  value.formatted(.number.precision(.fractionLength(decimals)).grouping(.automatic))
}

if arguments.first == "--one", arguments.count == 5, let parameter = Int(arguments[3]),
  let operations = Int(arguments[4])
{
  runOne(arguments[1], arguments[2], parameter, operations)
} else if arguments.first == "--list" {
  for item in cases {
    print("\(item.name) (\(item.operations) operations): \(item.contenders.joined(separator: ", "))")
  }
} else {
  var rounds = 5
  var shim: String?
  var prefixes: [String] = []
  var rest = arguments[...]
  while let argument = rest.popFirst() {
    switch argument {
    case "--rounds": rounds = rest.popFirst().flatMap { Int($0) } ?? rounds
    case "--mallocs": shim = rest.popFirst()
    default: prefixes.append(argument)
    }
  }
  let chosen = cases.filter { item in prefixes.isEmpty || prefixes.contains { item.name.hasPrefix($0) } }
  var times: [String: [Double]] = [:]
  var checks: [String: Set<String>] = [:]
  for round in 1...rounds {
    for item in chosen {
      let order = round % 2 == 1 ? item.contenders : item.contenders.reversed()
      for contender in order {
        let output = spawn([item.scenario, contender, "\(item.parameter)", "\(item.operations)"])
        guard let time = number(after: "ns_per_op=", in: output) else {
          fatalError("\(item.name) \(contender): \(output)")
        }
        times["\(item.name) \(contender)", default: []].append(time)
        checks[item.name, default: []].insert(output.components(separatedBy: "check=").last ?? output)
      }
    }
    FileHandle.standardError.write(Data("round \(round) of \(rounds) done\n".utf8))
  }
  print("| case | contender | ns per operation, median (min–max) | ÷ async | mallocs per operation |")
  print("| --- | --- | ---: | ---: | ---: |")
  for item in chosen {
    guard checks[item.name]?.count == 1 else {
      fatalError("\(item.name): contenders disagree: \(checks[item.name]!)")
    }
    let reference = median(times["\(item.name) async"] ?? [.nan])
    for contender in item.contenders {
      let samples = times["\(item.name) \(contender)"]!
      var mallocs = "–"
      if let shim {
        let counts = [1, 2].map { factor in
          let one = [item.scenario, contender, "\(item.parameter)", "\(item.operations * factor)"]
          return number(after: "mallocs: ", in: spawn(one, preload: shim)) ?? .nan
        }
        // A process runs its operations 4 times (one untimed run, 3 timed): the difference is 4 × operations.
        mallocs = formatted((counts[1] - counts[0]) / Double(4 * item.operations), decimals: 1)
      }
      let range = "\(formatted(samples.min()!))–\(formatted(samples.max()!))"
      let ratio = formatted(median(samples) / reference, decimals: 2)
      print(
        "| \(item.name) | \(contender) | \(formatted(median(samples))) (\(range)) | \(ratio) | \(mallocs) |")
    }
  }
}

// Times ResultPromise against swift-nio as an app runs them: each contender in a fresh process per round,
// with the system's allocator (no malloc interposer), on a young heap.
//
//   swift run -c release FreshProcess [--rounds N] [SCENARIO-PREFIX…]
//
// Each round runs, for every scenario, one process per contender, alternating; each process does 1
// untimed warm-up iteration and 3 timed ones and reports the median. The table gives each contender's
// median over the rounds, and the median and range of the per-round ratios. `FreshProcess --one SCENARIO
// CONTENDER [--iterations K]` runs one contender alone: K iterations without a warm-up, for callgrind
// (`Scripts/instructions`); `--list` prints the scenarios and contenders.
import Foundation
import Workloads

let arguments = Array(CommandLine.arguments.dropFirst())

/// One contender in this process: `iterations` timed iterations after `warmUps` untimed ones; prints the
/// median in ns per step.
func runOne(_ workload: Workload, warmUps: Int, iterations: Int) {
  let clock = ContinuousClock()
  var times: [Double] = []
  for iteration in 0..<(warmUps + iterations) {
    let timed = workload.prepare()
    let elapsed = clock.measure { timed() }
    if iteration >= warmUps { times.append(Double(elapsed / .nanoseconds(1)) / Double(n)) }
  }
  print(median(times))
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  return sorted.count % 2 == 1
    ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Runs this program on one contender in a new process, and returns what it printed.
func spawn(_ workload: Workload) -> Double {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
  process.arguments = ["--one", workload.scenario, workload.contender]
  let output = Pipe()
  process.standardOutput = output
  do { try process.run() } catch { fatalError("cannot run \(CommandLine.arguments[0]): \(error)") }
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  guard let text = String(data: data, encoding: .utf8),
    let value = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
  else { fatalError("\(workload.scenario), \(workload.contender) printed no time") }
  return value
}

func formatted(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

if arguments.first == "--list" {
  for workload in timedWorkloads() { print("\(workload.scenario)|\(workload.contender)") }
} else if arguments.first == "--one" {
  guard arguments.count >= 3,
    let workload = timedWorkloads().first(where: {
      $0.scenario == arguments[1] && $0.contender == arguments[2]
    })
  else { fatalError("usage: FreshProcess --one SCENARIO CONTENDER [--iterations K]") }
  if arguments.count == 5, arguments[3] == "--iterations", let iterations = Int(arguments[4]) {
    runOne(workload, warmUps: 0, iterations: iterations)
  } else {
    runOne(workload, warmUps: 1, iterations: 3)
  }
} else {
  var rounds = 5
  var prefixes: [String] = []
  var rest = arguments[...]
  while let argument = rest.popFirst() {
    if argument == "--rounds", let value = rest.popFirst().flatMap({ Int($0) }) {
      rounds = value
    } else {
      prefixes.append(argument)
    }
  }
  let workloads = timedWorkloads().filter { workload in
    prefixes.isEmpty || prefixes.contains { workload.scenario.hasPrefix($0) }
  }
  var scenarios: [String] = []
  for workload in workloads where !scenarios.contains(workload.scenario) {
    scenarios.append(workload.scenario)
  }

  // For each scenario, per round: ResultPromise's and swift-nio's ns per step.
  var times: [String: [[Double]]] = [:]
  for round in 1...rounds {
    for scenario in scenarios {
      let pair = workloads.filter { $0.scenario == scenario }.map(spawn)
      times[scenario, default: []].append(pair)
    }
    FileHandle.standardError.write(Data("round \(round) of \(rounds) done\n".utf8))
  }

  print("| scenario | ResultPromise ns/step | swift-nio ns/step | ratio, median | ratio, range |")
  print("| --- | ---: | ---: | ---: | --- |")
  for scenario in scenarios {
    let rounds = times[scenario] ?? []
    let ratios = rounds.map { $0[0] / $0[1] }
    let ours = formatted(median(rounds.map { $0[0] }), 1)
    let nio = formatted(median(rounds.map { $0[1] }), 1)
    let range = "\(formatted(ratios.min() ?? 0, 2))–\(formatted(ratios.max() ?? 0, 2))"
    print("| \(scenario) | \(ours) | \(nio) | \(formatted(median(ratios), 2)) | \(range) |")
  }
}

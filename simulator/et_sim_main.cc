// et-sim: predicts step time and communication cost of Chakra traces on N
// ranks. Flag parsing only; everything else lives in the et_simulator library.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "simulator/simulation.h"

namespace {

constexpr char kUsage[] =
    "usage: et-sim INPUT [flags]\n"
    "  INPUT                 one .et (every rank runs it), a pattern "
    "'out.%d.et' with\n"
    "                        --ranks N, or a directory of name.<rank>.et "
    "files\n"
    "  --world N             ranks for a single input (default 1)\n"
    "  --ranks N             ranks for a pattern input\n"
    "  --schedule MODE       stream (default: a queue per CPU thread and GPU "
    "stream) or\n"
    "                        astra (one CPU op, one GPU op, one collective at "
    "a time)\n"
    "  --compute MODEL       recorded (default), roofline, calibrated\n"
    "  --calibration FILE    measured op times (docs/calibration-format.md)\n"
    "  --device NAME         roofline device preset: V100, A100, H100 "
    "(default), H200\n"
    "  --device-file FILE    device presets file (default: the shipped "
    "presets)\n"
    "  --compute-scale F     compute runs F times faster (what-if)\n"
    "  --slow-rank R:F       rank R computes F times slower (repeatable)\n"
    "  --comm MODEL          model (default, alpha-beta), recorded, astra, "
    "astra-aware\n"
    "  --algorithm ALG       auto (default), ring, tree, direct, hierarchical\n"
    "  --nccl-efficiency     scale bandwidth by NCCL's size-dependent "
    "efficiency\n"
    "  --topology T          DGX-A100, HGX-H100 (default), DGX-V100, or a "
    "YAML/JSON file\n"
    "                        (ours or ASTRA-sim's network format)\n"
    "  --astra-system FILE   ASTRA-sim system JSON (with --comm "
    "astra|astra-aware)\n"
    "  --no-symmetry         simulate every rank separately\n"
    "  --json                print the report as JSON instead of text\n"
    "  --timeline FILE       write a Chrome/Perfetto trace of the simulated "
    "run\n"
    "  --top N               rows per table in the text report (default 15)\n";

struct Flags {
  et::sim::SimInput input;
  et::sim::SimOptions options;
  bool json = false;
  std::string timeline;
  size_t top = 15;
};

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "et-sim: error: %s\n", message.c_str());
  std::exit(1);
}

template <typename T>
T Number(const std::string& flag, const std::string& value) {
  T out{};
  bool ok;
  if constexpr (std::is_floating_point_v<T>) {
    ok = absl::SimpleAtod(value, &out);
  } else {
    ok = absl::SimpleAtoi(value, &out);
  }
  if (!ok) Fail(flag + ": not a number: '" + value + "'");
  return out;
}

void ParseEnumFlag(const std::string& flag, const std::string& v, Flags* f) {
  using namespace et::sim;
  SimOptions& o = f->options;
  if (flag == "--schedule") {
    if (v == "stream")
      o.scheduling = SchedulingMode::kStreamAware;
    else if (v == "astra")
      o.scheduling = SchedulingMode::kAstraCompat;
    else
      Fail("--schedule: expected stream or astra, got '" + v + "'");
  } else if (flag == "--compute") {
    if (v == "recorded")
      o.compute_model = ComputeModel::kRecorded;
    else if (v == "roofline")
      o.compute_model = ComputeModel::kRoofline;
    else if (v == "calibrated")
      o.compute_model = ComputeModel::kCalibrated;
    else
      Fail("--compute: expected recorded, roofline or calibrated, got '" + v +
           "'");
  } else if (flag == "--comm") {
    if (v == "model")
      o.comm_model = CommModel::kModel;
    else if (v == "recorded")
      o.comm_model = CommModel::kRecorded;
    else if (v == "astra")
      o.comm_model = CommModel::kAstra;
    else if (v == "astra-aware")
      o.comm_model = CommModel::kAstraAware;
    else
      Fail("--comm: expected model, recorded, astra or astra-aware, got '" + v +
           "'");
  } else if (flag == "--algorithm") {
    if (v == "auto")
      o.algorithm = CollectiveAlgorithm::kAuto;
    else if (v == "ring")
      o.algorithm = CollectiveAlgorithm::kRing;
    else if (v == "tree")
      o.algorithm = CollectiveAlgorithm::kTree;
    else if (v == "direct")
      o.algorithm = CollectiveAlgorithm::kDirect;
    else if (v == "hierarchical")
      o.algorithm = CollectiveAlgorithm::kHierarchical;
    else
      Fail("--algorithm: unknown '" + v + "'");
  }
}

void ParseValueFlag(const std::string& flag, const std::string& v, Flags* f) {
  et::sim::SimOptions& o = f->options;
  if (flag == "--world")
    o.world_size = Number<int64_t>(flag, v);
  else if (flag == "--ranks")
    f->input.pattern_ranks = Number<int64_t>(flag, v);
  else if (flag == "--calibration")
    o.calibration_file = v;
  else if (flag == "--device")
    o.device = v;
  else if (flag == "--device-file")
    o.device_file = v;
  else if (flag == "--compute-scale")
    o.compute_scale = Number<double>(flag, v);
  else if (flag == "--topology")
    o.topology = v;
  else if (flag == "--astra-system")
    o.astra_system = v;
  else if (flag == "--timeline")
    f->timeline = v;
  else if (flag == "--top")
    f->top = Number<size_t>(flag, v);
  else if (flag == "--slow-rank") {
    std::vector<std::string> parts = absl::StrSplit(v, ':');
    if (parts.size() != 2)
      Fail("--slow-rank: expected RANK:FACTOR, got '" + v + "'");
    o.rank_slowdown[Number<int64_t>(flag, parts[0])] =
        Number<double>(flag, parts[1]);
  } else {
    ParseEnumFlag(flag, v, f);
  }
}

Flags ParseFlags(int argc, char** argv) {
  static const std::vector<std::string> kValueFlags = {
      "--world",        "--ranks",    "--schedule",    "--compute",
      "--calibration",  "--device",   "--device-file", "--compute-scale",
      "--slow-rank",    "--comm",     "--algorithm",   "--topology",
      "--astra-system", "--timeline", "--top"};
  Flags f;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      positional.push_back(arg);
      continue;
    }
    std::string value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (arg == "--json")
      f.json = true;
    else if (arg == "--no-symmetry")
      f.options.use_rank_symmetry = false;
    else if (arg == "--nccl-efficiency")
      f.options.nccl_efficiency = true;
    else if (std::find(kValueFlags.begin(), kValueFlags.end(), arg) !=
             kValueFlags.end()) {
      if (!has_value) {
        if (i + 1 >= argc) Fail(arg + " needs a value");
        value = argv[++i];
      }
      ParseValueFlag(arg, value, &f);
    } else {
      Fail("unknown flag " + arg + " (see --help)");
    }
  }
  if (positional.size() != 1) {
    std::fputs(kUsage, stderr);
    Fail(positional.empty() ? "no input given"
                            : "expected one input, got extra argument '" +
                                  positional[1] + "'");
  }
  f.input.path = positional[0];
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags = ParseFlags(argc, argv);
  flags.options.keep_timeline = !flags.timeline.empty();
  auto sim = et::sim::Simulation::Run(flags.input, flags.options);
  if (!sim.ok()) Fail(std::string(sim.status().message()));
  const et::sim::Report& report = (*sim)->report();
  const std::string text = flags.json
                               ? et::sim::FormatReportJson(report) + "\n"
                               : et::sim::FormatReportText(report, flags.top);
  std::fputs(text.c_str(), stdout);
  if (!flags.timeline.empty()) {
    absl::Status s = et::sim::WriteTimeline((*sim)->classes(), (*sim)->result(),
                                            flags.timeline);
    if (!s.ok()) Fail(flags.timeline + ": " + std::string(s.message()));
  }
  return 0;
}

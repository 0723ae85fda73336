// NCCL_ALGO / NCCL_PROTO parsing and the knobs' checks; see nccl_settings.h.
// The list syntax follows NCCL's own parser (src/graph/tuning.cc): names
// separated by commas, compared case-insensitively, a leading '^' inverting
// the whole list.
#include "simulator/platform/nccl_settings.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace et::sim {
namespace {

using NameBits = std::vector<std::pair<const char*, unsigned>>;

const NameBits& AlgoNames() {
  static const auto* names =
      new NameBits{{"Ring", kNcclRing},
                   {"Tree", kNcclTree},
                   {"NVLS", kNcclNvls},
                   {"NVLSTree", kNcclNvlsTree},
                   {"CollNetDirect", kNcclCollNetDirect},
                   {"CollNetChain", kNcclCollNetChain},
                   // NCCL before 2.14 had one CollNet algorithm.
                   {"CollNet", kNcclCollNetDirect | kNcclCollNetChain},
                   {"PAT", kNcclPat}};
  return *names;
}

const NameBits& ProtoNames() {
  static const auto* names = new NameBits{
      {"LL", kNcclLl}, {"LL128", kNcclLl128}, {"Simple", kNcclSimple}};
  return *names;
}

absl::StatusOr<unsigned> ParseList(absl::string_view text, const char* what,
                                   const NameBits& names, unsigned all) {
  absl::string_view list = absl::StripAsciiWhitespace(text);
  const bool exclude = absl::ConsumePrefix(&list, "^");
  std::vector<std::string> accepted;
  for (const auto& [name, bits] : names) accepted.push_back(name);
  unsigned selected = 0;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    item = absl::StripAsciiWhitespace(item);
    bool found = false;
    for (const auto& [name, bits] : names) {
      if (absl::EqualsIgnoreCase(item, name)) {
        selected |= bits;
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s '%s': unknown name '%s' (NCCL's names: %s; a list, or '^' and "
          "a list to exclude)",
          what, text, item, absl::StrJoin(accepted, ", ")));
    }
  }
  const unsigned result = exclude ? (all & ~selected) : selected;
  if (result == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s '%s' leaves nothing for NCCL to choose", what, text));
  }
  return result;
}

}  // namespace

absl::StatusOr<unsigned> ParseNcclAlgo(absl::string_view text) {
  return ParseList(text, "NCCL_ALGO", AlgoNames(), kNcclAllAlgorithms);
}

absl::StatusOr<unsigned> ParseNcclProto(absl::string_view text) {
  return ParseList(text, "NCCL_PROTO", ProtoNames(), kNcclAllProtocols);
}

absl::Status CheckNcclSettings(const NcclSettings& s) {
  // NCCL's MAXCHANNELS (src/include/device.h) is 64 since 2.x on Hopper.
  constexpr int64_t kMaxChannels = 64;
  for (auto [name, v] : {std::make_pair("min channels", s.min_channels),
                         std::make_pair("max channels", s.max_channels)}) {
    if (v < 0 || v > kMaxChannels) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s %d: expected 1 to %d (0: NCCL's own)", name, v, kMaxChannels));
    }
  }
  if (s.min_channels > 0 && s.max_channels > 0 &&
      s.min_channels > s.max_channels) {
    return absl::InvalidArgumentError(
        absl::StrFormat("min channels %d exceed max channels %d",
                        s.min_channels, s.max_channels));
  }
  if (s.gpus_per_process < 1 || s.gpus_per_process > 64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GPUs per process %d: expected 1 to 64", s.gpus_per_process));
  }
  return absl::OkStatus();
}

std::string DescribeNcclSettings(const NcclSettings& s) {
  std::vector<std::string> parts;
  if (!s.algo_text.empty()) parts.push_back("NCCL_ALGO=" + s.algo_text);
  if (!s.proto_text.empty()) parts.push_back("NCCL_PROTO=" + s.proto_text);
  if (s.min_channels > 0)
    parts.push_back(absl::StrCat("NCCL_MIN_NCHANNELS=", s.min_channels));
  if (s.max_channels > 0)
    parts.push_back(absl::StrCat("NCCL_MAX_NCHANNELS=", s.max_channels));
  if (s.gpus_per_process > 1)
    parts.push_back(absl::StrCat("-g ", s.gpus_per_process));
  return absl::StrJoin(parts, " ");
}

absl::Status ApplyNcclFlags(const NcclFlags& flags, NcclSettings* settings) {
  if (!flags.algo.empty()) {
    absl::StatusOr<unsigned> algo = ParseNcclAlgo(flags.algo);
    if (!algo.ok()) return algo.status();
    settings->algorithms = *algo;
    settings->algo_text = flags.algo;
  }
  if (!flags.proto.empty()) {
    absl::StatusOr<unsigned> proto = ParseNcclProto(flags.proto);
    if (!proto.ok()) return proto.status();
    settings->protocols = *proto;
    settings->proto_text = flags.proto;
  }
  if (flags.min_channels != 0) settings->min_channels = flags.min_channels;
  if (flags.max_channels != 0) settings->max_channels = flags.max_channels;
  if (flags.gpus_per_process != 0)
    settings->gpus_per_process = flags.gpus_per_process;
  return CheckNcclSettings(*settings);
}

}  // namespace et::sim

// Host op <-> Kineto CPU op matching: record-function ids first, sequence alignment
// per thread otherwise.
#include "converter/kineto/host_op_matcher.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "converter/kineto/sequence_aligner.h"

namespace et::kineto {
namespace {

// One ET thread's ops in start order, as name ids of the Kineto trace.
struct EtThread {
  int64_t tid = 0;
  std::vector<int32_t> ops;  // host op indices
  std::vector<uint32_t> names;
};

// A Kineto thread's CPU ops as name ids, with their position index.
struct KinetoSequence {
  std::vector<uint32_t> names;
  SymbolPositions index;
};

// One scored way to align an ET thread.
struct Placement {
  int64_t score = 0;
  int64_t first_ts_ns = 0;
  size_t kineto_thread = 0;
  int64_t start = 0;
};

bool MatchByRecordFunctionId(const KinetoTrace& trace, const CpuOpNesting& nesting,
                             absl::Span<const HostOpView> host_ops, HostMatch* match) {
  absl::flat_hash_map<int64_t, int32_t> by_rf;
  int64_t with_rf = 0;
  for (const KinetoThread& thread : nesting.threads()) {
    for (int32_t e : thread.ops) {
      const int64_t rf = trace.events()[e].record_function_id;
      if (rf < 0) continue;
      ++with_rf;
      by_rf.emplace(rf, e);
    }
  }
  // Old profilers write "Record function id": 0 on every op: useless, not an id.
  if (with_rf == 0 || static_cast<double>(by_rf.size()) < 0.9 * with_rf) return false;
  int64_t considered = 0;
  int64_t matched = 0;
  for (size_t h = 0; h < host_ops.size(); ++h) {
    if (!match->considered[h]) continue;
    ++considered;
    if (host_ops[h].rf_id < 0) continue;
    auto it = by_rf.find(host_ops[h].rf_id);
    if (it == by_rf.end() || trace.name(trace.events()[it->second].name) != host_ops[h].name) {
      continue;
    }
    match->twin[h] = it->second;
    ++matched;
  }
  if (matched * 2 < considered) {  // ids from another run: fall back to alignment
    std::fill(match->twin.begin(), match->twin.end(), -1);
    return false;
  }
  return true;
}

std::vector<EtThread> GroupEtThreads(const KinetoTrace& trace,
                                     absl::Span<const HostOpView> host_ops,
                                     const std::vector<uint8_t>& considered) {
  std::map<int64_t, EtThread> by_tid;
  for (size_t h = 0; h < host_ops.size(); ++h) {
    if (!considered[h]) continue;
    EtThread& thread = by_tid[host_ops[h].tid];
    thread.tid = host_ops[h].tid;
    thread.ops.push_back(static_cast<int32_t>(h));
  }
  absl::flat_hash_map<absl::string_view, uint32_t> name_ids;
  std::vector<EtThread> threads;
  for (auto& [tid, thread] : by_tid) {
    std::stable_sort(thread.ops.begin(), thread.ops.end(), [&](int32_t x, int32_t y) {
      return std::make_pair(host_ops[x].order, host_ops[x].et_id) <
             std::make_pair(host_ops[y].order, host_ops[y].et_id);
    });
    thread.names.reserve(thread.ops.size());
    for (int32_t h : thread.ops) {
      auto [it, inserted] = name_ids.try_emplace(host_ops[h].name, kNoName);
      if (inserted) it->second = trace.FindName(host_ops[h].name).value_or(kNoName);
      thread.names.push_back(it->second);
    }
    threads.push_back(std::move(thread));
  }
  std::stable_sort(threads.begin(), threads.end(), [](const EtThread& x, const EtThread& y) {
    return x.ops.size() > y.ops.size();
  });
  return threads;
}

// All scored placements of `et` in the free Kineto threads.
std::vector<Placement> ScorePlacements(const KinetoTrace& trace, const CpuOpNesting& nesting,
                                       const EtThread& et, const SymbolPositions& et_index,
                                       const std::vector<KinetoSequence>& sequences,
                                       const std::vector<bool>& taken,
                                       const LinkOptions& options, double keep_fraction) {
  AlignOptions align;
  align.lookahead = options.lookahead;
  std::vector<Placement> placements;
  std::vector<int32_t> a_to_b;
  int64_t best = 0;
  for (size_t k = 0; k < sequences.size(); ++k) {
    if (taken[k] || sequences[k].names.empty()) continue;
    const KinetoSequence& seq = sequences[k];
    for (int64_t start : CandidateStarts(et.names, seq.names, seq.index, options.max_candidates)) {
      const int64_t give_up = static_cast<int64_t>(keep_fraction * best);
      const int64_t score =
          AlignFrom(et.names, et_index, seq.names, seq.index, start, align, give_up, &a_to_b);
      if (score <= 0 || score < give_up) continue;
      best = std::max(best, score);
      Placement p{score, 0, k, start};
      for (int32_t b : a_to_b) {
        if (b >= 0) {
          p.first_ts_ns = trace.events()[nesting.threads()[k].ops[b]].ts_ns;
          break;
        }
      }
      placements.push_back(p);
    }
  }
  return placements;
}

// The first thread takes the best score (earliest on ties); later threads take, among
// scores within 1% of the best, the one starting at or soonest after `anchor_ts_ns`.
const Placement* ChoosePlacement(const std::vector<Placement>& placements, bool have_anchor,
                                 int64_t anchor_ts_ns) {
  if (placements.empty()) return nullptr;
  int64_t best = 0;
  for (const Placement& p : placements) best = std::max(best, p.score);
  const Placement* chosen = nullptr;
  if (!have_anchor) {
    for (const Placement& p : placements) {
      if (p.score == best) return &p;
    }
  }
  const int64_t floor = best - std::max<int64_t>(1, best / 100);
  auto key = [&](const Placement& p) {
    const bool before = p.first_ts_ns < anchor_ts_ns;
    const int64_t distance = before ? anchor_ts_ns - p.first_ts_ns : p.first_ts_ns - anchor_ts_ns;
    return std::make_tuple(before, distance, -p.score, p.kineto_thread, p.start);
  };
  for (const Placement& p : placements) {
    if (p.score < floor) continue;
    if (chosen == nullptr || key(p) < key(*chosen)) chosen = &p;
  }
  return chosen;
}

void MatchByAlignment(const KinetoTrace& trace, const CpuOpNesting& nesting,
                      absl::Span<const HostOpView> host_ops, const LinkOptions& options,
                      HostMatch* match) {
  const uint32_t alphabet = static_cast<uint32_t>(trace.name_count());
  std::vector<KinetoSequence> sequences;
  sequences.reserve(nesting.threads().size());
  for (const KinetoThread& thread : nesting.threads()) {
    std::vector<uint32_t> names;
    names.reserve(thread.ops.size());
    for (int32_t e : thread.ops) names.push_back(trace.events()[e].name);
    SymbolPositions index(names, alphabet);
    sequences.push_back(KinetoSequence{std::move(names), std::move(index)});
  }
  std::vector<bool> taken(sequences.size(), false);
  bool have_anchor = false;
  int64_t anchor_ts_ns = 0;
  AlignOptions align;
  align.lookahead = options.lookahead;
  std::vector<int32_t> a_to_b;
  for (const EtThread& et : GroupEtThreads(trace, host_ops, match->considered)) {
    ThreadMatchStats stats;
    stats.tid = et.tid;
    stats.host_ops = static_cast<int64_t>(et.ops.size());
    SymbolPositions et_index(et.names, alphabet);
    const std::vector<Placement> placements =
        ScorePlacements(trace, nesting, et, et_index, sequences, taken, options,
                        have_anchor ? 0.99 : 1.0);
    const Placement* chosen = ChoosePlacement(placements, have_anchor, anchor_ts_ns);
    if (chosen != nullptr) {
      const KinetoSequence& seq = sequences[chosen->kineto_thread];
      stats.matched = AlignFrom(et.names, et_index, seq.names, seq.index, chosen->start, align,
                                0, &a_to_b);
      const KinetoThread& kthread = nesting.threads()[chosen->kineto_thread];
      for (size_t i = 0; i < a_to_b.size(); ++i) {
        if (a_to_b[i] >= 0) match->twin[et.ops[i]] = kthread.ops[a_to_b[i]];
      }
      stats.kineto_tid = kthread.tid;
      taken[chosen->kineto_thread] = true;
      if (!have_anchor) {
        have_anchor = true;
        anchor_ts_ns = chosen->first_ts_ns;
      }
    }
    match->per_thread.push_back(stats);
  }
  std::sort(match->per_thread.begin(), match->per_thread.end(),
            [](const ThreadMatchStats& x, const ThreadMatchStats& y) { return x.tid < y.tid; });
}

// Per-thread statistics from the twins (record-function-id mode).
void CountPerThread(const KinetoTrace& trace, absl::Span<const HostOpView> host_ops,
                    HostMatch* match) {
  std::map<int64_t, ThreadMatchStats> by_tid;
  std::map<int64_t, std::map<int64_t, int64_t>> kineto_tids;
  for (size_t h = 0; h < host_ops.size(); ++h) {
    if (!match->considered[h]) continue;
    ThreadMatchStats& stats = by_tid[host_ops[h].tid];
    stats.tid = host_ops[h].tid;
    ++stats.host_ops;
    if (match->twin[h] >= 0) {
      ++stats.matched;
      ++kineto_tids[host_ops[h].tid][trace.events()[match->twin[h]].tid];
    }
  }
  for (auto& [tid, stats] : by_tid) {
    int64_t most = 0;
    for (const auto& [ktid, count] : kineto_tids[tid]) {
      if (count > most) {
        most = count;
        stats.kineto_tid = ktid;
      }
    }
    match->per_thread.push_back(stats);
  }
}

}  // namespace

HostMatch MatchHostOps(const KinetoTrace& trace, const CpuOpNesting& nesting,
                       absl::Span<const HostOpView> host_ops, const LinkOptions& options) {
  HostMatch match;
  match.twin.assign(host_ops.size(), -1);
  match.considered.assign(host_ops.size(), 1);
  for (size_t h = 0; h < host_ops.size(); ++h) {
    if (!options.et_root_prefix.empty() &&
        absl::StartsWith(host_ops[h].name, options.et_root_prefix)) {
      match.considered[h] = 0;
    }
  }
  if (MatchByRecordFunctionId(trace, nesting, host_ops, &match)) {
    match.used_record_function_id = true;
    CountPerThread(trace, host_ops, &match);
  } else {
    MatchByAlignment(trace, nesting, host_ops, options, &match);
  }
  return match;
}

}  // namespace et::kineto

// Host op <-> Kineto CPU op matching: record-function ids first, sequence
// alignment per thread otherwise.
#include "converter/kineto/host_op_matcher.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "base/checked_math.h"
#include "converter/kineto/global_aligner.h"
#include "converter/kineto/sequence_aligner.h"

namespace et::kineto {
namespace {

// The most one-sided ops a global alignment may need: its memory grows as the
// square (2048^2 x 8 bytes = 32 MB). A thread needing more (a 300k-op trace has
// ~1 Kineto-only op in 16) keeps its greedy alignment.
constexpr int64_t kMaxGlobalEdits = 2048;

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

bool MatchByRecordFunctionId(const KinetoTrace& trace,
                             const CpuOpNesting& nesting,
                             absl::Span<const HostOpView> host_ops,
                             HostMatch* match) {
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
  // Old profilers write "Record function id": 0 on every op: useless, not an
  // id.
  if (with_rf == 0 || static_cast<double>(by_rf.size()) < 0.9 * with_rf)
    return false;
  int64_t considered = 0;
  int64_t matched = 0;
  for (size_t h = 0; h < host_ops.size(); ++h) {
    if (!match->considered[h]) continue;
    ++considered;
    if (host_ops[h].rf_id < 0) continue;
    auto it = by_rf.find(host_ops[h].rf_id);
    if (it == by_rf.end() ||
        trace.name(trace.events()[it->second].name) != host_ops[h].name) {
      continue;
    }
    match->twin[h] = it->second;
    ++matched;
  }
  if (matched * 2 <
      considered) {  // ids from another run: fall back to alignment
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
    std::stable_sort(
        thread.ops.begin(), thread.ops.end(), [&](int32_t x, int32_t y) {
          return std::make_pair(host_ops[x].order, host_ops[x].et_id) <
                 std::make_pair(host_ops[y].order, host_ops[y].et_id);
        });
    thread.names.reserve(thread.ops.size());
    for (int32_t h : thread.ops) {
      auto [it, inserted] = name_ids.try_emplace(host_ops[h].name, kNoName);
      if (inserted)
        it->second = trace.FindName(host_ops[h].name).value_or(kNoName);
      thread.names.push_back(it->second);
    }
    threads.push_back(std::move(thread));
  }
  // The thread that starts first in ET order (the main thread) is placed first.
  std::stable_sort(threads.begin(), threads.end(),
                   [&](const EtThread& x, const EtThread& y) {
                     return host_ops[x.ops.front()].order <
                            host_ops[y.ops.front()].order;
                   });
  return threads;
}

// All scored placements of `et` in the free Kineto threads.
std::vector<Placement> ScorePlacements(
    const KinetoTrace& trace, const CpuOpNesting& nesting, const EtThread& et,
    const SymbolPositions& et_index,
    const std::vector<KinetoSequence>& sequences,
    const std::vector<bool>& taken, const LinkOptions& options,
    double keep_fraction) {
  AlignOptions align;
  align.lookahead = options.lookahead;
  std::vector<Placement> placements;
  std::vector<int32_t> a_to_b;
  int64_t best = 0;
  for (size_t k = 0; k < sequences.size(); ++k) {
    if (taken[k] || sequences[k].names.empty()) continue;
    const KinetoSequence& seq = sequences[k];
    for (int64_t start : CandidateStarts(et.names, seq.names, seq.index,
                                         options.max_candidates)) {
      const int64_t give_up = static_cast<int64_t>(keep_fraction * best);
      const int64_t score = AlignFrom(et.names, et_index, seq.names, seq.index,
                                      start, align, give_up, &a_to_b);
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

// Positions in a Kineto thread's op list -> event indices.
std::vector<int32_t> Translate(const KinetoThread& kthread,
                               std::vector<int32_t> a_to_b) {
  for (int32_t& b : a_to_b) {
    if (b >= 0) b = kthread.ops[b];
  }
  return a_to_b;
}

// Twins of one ET thread under a placement: Kineto event index per op, or -1.
std::vector<int32_t> Realize(const CpuOpNesting& nesting, const EtThread& et,
                             const SymbolPositions& et_index,
                             const std::vector<KinetoSequence>& sequences,
                             const Placement& p, const LinkOptions& options,
                             int64_t* matched) {
  AlignOptions align;
  align.lookahead = options.lookahead;
  std::vector<int32_t> a_to_b;
  const KinetoSequence& seq = sequences[p.kineto_thread];
  const KinetoThread& kthread = nesting.threads()[p.kineto_thread];
  *matched = AlignFrom(et.names, et_index, seq.names, seq.index, p.start, align,
                       0, &a_to_b);
  // The greedy pass fixes the window; a global alignment inside it recovers
  // what a wrong resynchronisation lost (on an 8-rank DLRM pair: 91-95% of a
  // thread greedily, 984-986 of 988 ops globally).
  const int64_t n = static_cast<int64_t>(et.names.size());
  if (*matched == n) return Translate(kthread, std::move(a_to_b));
  int64_t last = p.start - 1;
  for (int32_t b : a_to_b) last = std::max<int64_t>(last, b);
  // The greedy path is one way through: a better one has fewer one-sided ops,
  // which also bounds the work.
  const int64_t greedy_edits = (n - *matched) + (last + 1 - p.start - *matched);
  // Kineto ops beyond the ET's count in that window are one-sided whatever
  // the alignment: past the cap, a global pass (O((n+m)·cap) work) cannot
  // succeed, so skip it.
  if (last + 1 - p.start - n > kMaxGlobalEdits) {
    return Translate(kthread, std::move(a_to_b));
  }
  const int64_t slack = std::max<int64_t>(64, n / 8);
  std::vector<int32_t> global;
  const int64_t global_matched = AlignGlobal(
      et.names, seq.names, p.start, last + slack + 1,
      std::min<int64_t>(kMaxGlobalEdits, greedy_edits + slack), &global);
  if (global_matched > *matched) {
    *matched = global_matched;
    a_to_b.swap(global);
  }
  return Translate(kthread, std::move(a_to_b));
}

// Where thread `et` must sit relative to threads already placed: ET orders
// (rf_id or node id) are global, so the placed op just before `et`'s first op
// in ET order must have started before it in Kineto, and the one just after,
// after it.
struct TimeBounds {
  bool has_prev = false, has_next = false;
  int64_t prev_ts_ns = 0, next_ts_ns = 0;
};

TimeBounds BoundsFor(const KinetoTrace& trace,
                     absl::Span<const HostOpView> host_ops, const EtThread& et,
                     const std::vector<const EtThread*>& placed,
                     const std::vector<std::vector<int32_t>>& placed_twins) {
  TimeBounds bounds;
  const int64_t first = host_ops[et.ops.front()].order;
  int64_t prev_order = 0, next_order = 0;
  for (size_t t = 0; t < placed.size(); ++t) {
    for (size_t i = 0; i < placed[t]->ops.size(); ++i) {
      const int32_t twin = placed_twins[t][i];
      if (twin < 0) continue;
      const int64_t order = host_ops[placed[t]->ops[i]].order;
      const int64_t ts = trace.events()[twin].ts_ns;
      if (order < first && (!bounds.has_prev || order > prev_order)) {
        bounds.has_prev = true;
        prev_order = order;
        bounds.prev_ts_ns = ts;
      } else if (order > first && (!bounds.has_next || order < next_order)) {
        bounds.has_next = true;
        next_order = order;
        bounds.next_ts_ns = ts;
      }
    }
  }
  return bounds;
}

// Among placements within 1% of the best score, the one that respects `bounds`
// and sits closest to them; then the earliest.
const Placement* ChoosePlacement(const std::vector<Placement>& placements,
                                 const std::vector<bool>& taken,
                                 const TimeBounds& bounds) {
  int64_t best = 0;
  for (const Placement& p : placements) {
    if (!taken[p.kineto_thread]) best = std::max(best, p.score);
  }
  const int64_t floor = best - best / 100;
  auto key = [&](const Placement& p) {
    int64_t violation = 0, distance = 0;
    if (bounds.has_prev) {
      violation = SaturatingAdd(
          violation, std::max<int64_t>(0, bounds.prev_ts_ns - p.first_ts_ns));
      distance = std::abs(p.first_ts_ns - bounds.prev_ts_ns);
    } else if (bounds.has_next) {
      violation = SaturatingAdd(
          violation, std::max<int64_t>(0, p.first_ts_ns - bounds.next_ts_ns));
      distance = std::abs(bounds.next_ts_ns - p.first_ts_ns);
    }
    if (bounds.has_prev && bounds.has_next) {
      violation = SaturatingAdd(
          violation, std::max<int64_t>(0, p.first_ts_ns - bounds.next_ts_ns));
    }
    return std::make_tuple(violation, distance, -p.score, p.first_ts_ns,
                           p.kineto_thread);
  };
  const Placement* chosen = nullptr;
  for (const Placement& p : placements) {
    if (taken[p.kineto_thread] || p.score <= 0 || p.score < floor) continue;
    if (chosen == nullptr || key(p) < key(*chosen)) chosen = &p;
  }
  return chosen;
}

// A full assignment: a placement (or none) per ET thread, and its twins.
struct Assignment {
  int64_t total = 0;
  int64_t span_ns =
      0;  // from the first matched op's start to the last one's end
  std::vector<const Placement*> chosen;
  std::vector<std::vector<int32_t>> twins;
  std::vector<int64_t> matched;
};

// Places every thread after `first` was put at `first_placement`.
Assignment PlaceAll(const KinetoTrace& trace, const CpuOpNesting& nesting,
                    absl::Span<const HostOpView> host_ops,
                    const std::vector<EtThread>& threads,
                    const std::vector<SymbolPositions>& indexes,
                    const std::vector<std::vector<Placement>>& placements,
                    const std::vector<KinetoSequence>& sequences,
                    const Placement* first_placement,
                    const LinkOptions& options) {
  Assignment a;
  std::vector<bool> taken(sequences.size(), false);
  std::vector<const EtThread*> placed;
  for (size_t t = 0; t < threads.size(); ++t) {
    const Placement* p = first_placement;
    if (t > 0) {
      p = ChoosePlacement(
          placements[t], taken,
          BoundsFor(trace, host_ops, threads[t], placed, a.twins));
    }
    a.chosen.push_back(p);
    int64_t matched = 0;
    if (p != nullptr) {
      a.twins.push_back(Realize(nesting, threads[t], indexes[t], sequences, *p,
                                options, &matched));
      taken[p->kineto_thread] = true;
    } else {
      a.twins.emplace_back(threads[t].ops.size(), -1);
    }
    placed.push_back(&threads[t]);
    a.matched.push_back(matched);
    a.total += matched;
  }
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (const auto& twins : a.twins) {
    for (int32_t e : twins) {
      if (e < 0) continue;
      first = std::min(first, trace.events()[e].ts_ns);
      last = std::max(last, trace.events()[e].ts_ns + trace.events()[e].dur_ns);
    }
  }
  a.span_ns = last >= first ? last - first : 0;
  return a;
}

// ET ops left over (e.g. gloo collectives that the ET files under the main
// thread but Kineto under a worker thread) take the first unclaimed Kineto op
// of the same name, on any thread, that starts after the op's predecessor and
// inside the matched window.
void RescueAcrossThreads(const KinetoTrace& trace, const CpuOpNesting& nesting,
                         const std::vector<EtThread>& threads, Assignment* a) {
  const auto& events = trace.events();
  std::vector<bool> claimed(events.size(), false);
  int64_t window_end = std::numeric_limits<int64_t>::min();
  for (const auto& twins : a->twins) {
    for (int32_t e : twins) {
      if (e < 0) continue;
      claimed[e] = true;
      window_end = std::max(window_end, events[e].ts_ns + events[e].dur_ns);
    }
  }
  absl::flat_hash_map<uint32_t, std::vector<int32_t>>
      by_name;  // unclaimed, by start
  for (const KinetoThread& thread : nesting.threads()) {
    for (int32_t e : thread.ops) {
      if (!claimed[e]) by_name[events[e].name].push_back(e);
    }
  }
  for (auto& [name, list] : by_name) {
    std::sort(list.begin(), list.end(), [&](int32_t x, int32_t y) {
      return std::make_pair(events[x].ts_ns, x) <
             std::make_pair(events[y].ts_ns, y);
    });
  }
  for (size_t t = 0; t < threads.size(); ++t) {
    int64_t prev_ts = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < threads[t].ops.size(); ++i) {
      int32_t& twin = a->twins[t][i];
      if (twin >= 0) {
        prev_ts = events[twin].ts_ns;
        continue;
      }
      if (threads[t].names[i] == kNoName ||
          prev_ts == std::numeric_limits<int64_t>::min()) {
        continue;
      }
      auto it = by_name.find(threads[t].names[i]);
      if (it == by_name.end()) continue;
      for (int32_t e : it->second) {
        if (events[e].ts_ns > window_end) break;
        if (events[e].ts_ns < prev_ts || claimed[e]) continue;
        twin = e;
        claimed[e] = true;
        ++a->matched[t];
        break;
      }
    }
  }
}

void MatchByAlignment(const KinetoTrace& trace, const CpuOpNesting& nesting,
                      absl::Span<const HostOpView> host_ops,
                      const LinkOptions& options, HostMatch* match) {
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
  const std::vector<EtThread> threads =
      GroupEtThreads(trace, host_ops, match->considered);
  if (threads.empty()) return;
  std::vector<SymbolPositions> indexes;
  std::vector<std::vector<Placement>> placements;
  const std::vector<bool> none_taken(sequences.size(), false);
  for (const EtThread& et : threads) {
    indexes.emplace_back(et.names, alphabet);
    placements.push_back(ScorePlacements(trace, nesting, et, indexes.back(),
                                         sequences, none_taken, options, 0.99));
  }
  // Try each near-best placement of the first thread (in ET order); keep the
  // assignment that matches most ops over all threads. Within 0.5% of that, the
  // most compact one wins: an alignment that wanders from one iteration into
  // the next matches as many names but spans more time. Then the earliest.
  std::vector<Assignment> tried;
  std::vector<const Placement*> firsts;
  int64_t top = 0;
  for (const Placement& p : placements[0]) top = std::max(top, p.score);
  for (const Placement& p : placements[0]) {
    if (p.score >= top - top / 100 && p.score > 0) firsts.push_back(&p);
  }
  std::sort(
      firsts.begin(), firsts.end(), [](const Placement* x, const Placement* y) {
        return std::make_tuple(x->first_ts_ns, x->kineto_thread, x->start) <
               std::make_tuple(y->first_ts_ns, y->kineto_thread, y->start);
      });
  if (firsts.empty()) firsts.push_back(nullptr);
  int64_t best_total = 0;
  for (const Placement* first : firsts) {
    tried.push_back(PlaceAll(trace, nesting, host_ops, threads, indexes,
                             placements, sequences, first, options));
    best_total = std::max(best_total, tried.back().total);
  }
  size_t pick = 0;
  bool have_pick = false;
  for (size_t i = 0; i < tried.size(); ++i) {
    if (tried[i].total < best_total - best_total / 200) continue;
    if (!have_pick || tried[i].span_ns < tried[pick].span_ns) {
      pick = i;
      have_pick = true;
    }
  }
  Assignment best = std::move(tried[pick]);
  RescueAcrossThreads(trace, nesting, threads, &best);
  for (size_t t = 0; t < threads.size(); ++t) {
    ThreadMatchStats stats;
    stats.tid = threads[t].tid;
    stats.host_ops = static_cast<int64_t>(threads[t].ops.size());
    stats.matched = best.matched[t];
    if (best.chosen[t] != nullptr) {
      stats.kineto_tid = nesting.threads()[best.chosen[t]->kineto_thread].tid;
    }
    for (size_t i = 0; i < threads[t].ops.size(); ++i) {
      match->twin[threads[t].ops[i]] = best.twins[t][i];
    }
    match->per_thread.push_back(stats);
  }
  std::sort(match->per_thread.begin(), match->per_thread.end(),
            [](const ThreadMatchStats& x, const ThreadMatchStats& y) {
              return x.tid < y.tid;
            });
}

// Per-thread statistics from the twins (record-function-id mode).
void CountPerThread(const KinetoTrace& trace,
                    absl::Span<const HostOpView> host_ops, HostMatch* match) {
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
                       absl::Span<const HostOpView> host_ops,
                       const LinkOptions& options) {
  HostMatch match;
  match.twin.assign(host_ops.size(), -1);
  match.considered.assign(host_ops.size(), 1);
  for (size_t h = 0; h < host_ops.size(); ++h) {
    // The ET's root, and its process-group table: records the ET observer
    // writes, not ops the profiler saw (a recording with --tp warned "thread
    // 0 matched 0 of 1 host ops" for the table alone).
    if ((!options.et_root_prefix.empty() &&
         absl::StartsWith(host_ops[h].name, options.et_root_prefix)) ||
        host_ops[h].name == "## process_group:init ##") {
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

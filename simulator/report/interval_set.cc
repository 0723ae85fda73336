// Interval sets; see interval_set.h.
#include "simulator/report/interval_set.h"

#include <algorithm>

namespace et::sim {

std::vector<Interval> Merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.second <= i.first) continue;
    if (out.empty() || i.first > out.back().second) {
      out.push_back(i);
    } else {
      out.back().second = std::max(out.back().second, i.second);
    }
  }
  return out;
}

int64_t Length(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const Interval& i : merged) total += i.second - i.first;
  return total;
}

std::vector<Interval> Subtract(const std::vector<Interval>& v,
                               const std::vector<Interval>& minus) {
  std::vector<Interval> out;
  size_t j = 0;
  for (Interval i : v) {
    while (j < minus.size() && minus[j].second <= i.first) ++j;
    for (size_t m = j; m < minus.size() && minus[m].first < i.second; ++m) {
      if (minus[m].first > i.first) out.push_back({i.first, minus[m].first});
      i.first = std::max(i.first, minus[m].second);
    }
    if (i.second > i.first) out.push_back(i);
  }
  return out;
}

std::vector<Interval> Clip(const std::vector<Interval>& merged, int64_t lo,
                           int64_t hi) {
  std::vector<Interval> out;
  for (const Interval& i : merged) {
    const Interval c = {std::max(i.first, lo), std::min(i.second, hi)};
    if (c.second > c.first) out.push_back(c);
  }
  return out;
}

std::vector<Interval> Union(const std::vector<Interval>& a,
                            const std::vector<Interval>& b) {
  std::vector<Interval> all = a;
  all.insert(all.end(), b.begin(), b.end());
  return Merge(std::move(all));
}

}  // namespace et::sim

// The floor et-convert competes with: how long a bare JSON parse of a whole
// execution-trace file takes, with simdjson's DOM parser and with nlohmann's
// SAX parser (no tree built), on the same bytes. It prints the node count, the
// read time and, per parser, the parse time and MB/s (simdjson twice: the first
// parse, which also faults in its buffers, and with `all` a second one that
// reuses them). run_benchmarks.sh runs one parser per process to get each
// one's peak RSS and wall time.
//
// Usage: json_parse_floor FILE.json [all|simdjson|nlohmann-sax]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "nlohmann/json.hpp"
#include "simdjson.h"

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Counts every event so that no part of the parse can be optimised away.
struct CountingSax {
  using number_integer_t = nlohmann::json::number_integer_t;
  using number_unsigned_t = nlohmann::json::number_unsigned_t;
  using number_float_t = nlohmann::json::number_float_t;
  using string_t = nlohmann::json::string_t;
  using binary_t = nlohmann::json::binary_t;

  uint64_t values = 0;
  uint64_t string_bytes = 0;
  bool failed = false;

  bool Count() {
    ++values;
    return true;
  }

  bool null() { return Count(); }
  bool boolean(bool) { return Count(); }
  bool number_integer(number_integer_t) { return Count(); }
  bool number_unsigned(number_unsigned_t) { return Count(); }
  bool number_float(number_float_t, const string_t&) { return Count(); }
  bool string(string_t& s) {
    string_bytes += s.size();
    return Count();
  }
  bool binary(binary_t&) { return Count(); }
  bool start_object(std::size_t) { return true; }
  bool key(string_t& k) {
    string_bytes += k.size();
    return true;
  }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception&) {
    failed = true;
    return false;
  }
};

double MegaBytes(size_t bytes) { return static_cast<double>(bytes) / 1e6; }

void PrintRate(const char* parser, double seconds, size_t bytes) {
  std::printf("%s parse_s=%.3f mb_per_s=%.1f\n", parser, seconds,
              MegaBytes(bytes) / seconds);
}

// Parses with simdjson's DOM, a second time if `warm_too`; prints the node
// count. Returns false on error.
bool ParseWithSimdjson(const simdjson::padded_string& text, bool warm_too) {
  simdjson::dom::parser parser;
  Clock::time_point start = Clock::now();
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS) {
    std::fprintf(stderr, "json_parse_floor: error: simdjson parse failed\n");
    return false;
  }
  double seconds = SecondsSince(start);
  // A second parse reuses the parser's buffers: the parse without page faults.
  double warm_seconds = 0;
  if (warm_too) {
    start = Clock::now();
    if (parser.parse(text).get(doc) != simdjson::SUCCESS) return false;
    warm_seconds = SecondsSince(start);
  }
  simdjson::dom::array nodes;
  size_t node_count = 0;
  if (doc["nodes"].get_array().get(nodes) == simdjson::SUCCESS) {
    node_count = nodes.size();
  }
  std::printf("nodes=%zu\n", node_count);
  PrintRate("simdjson-dom", seconds, text.size());
  if (warm_too) PrintRate("simdjson-dom-warm", warm_seconds, text.size());
  return true;
}

// Parses with nlohmann's SAX interface (no DOM). Returns false on error.
bool ParseWithNlohmannSax(const simdjson::padded_string& text) {
  CountingSax sax;
  Clock::time_point start = Clock::now();
  const char* begin = text.data();
  bool ok = nlohmann::json::sax_parse(begin, begin + text.size(), &sax);
  double seconds = SecondsSince(start);
  if (!ok || sax.failed) {
    std::fprintf(stderr, "json_parse_floor: error: nlohmann parse failed\n");
    return false;
  }
  std::printf("nlohmann-sax values=%llu\n",
              static_cast<unsigned long long>(sax.values));
  PrintRate("nlohmann-sax", seconds, text.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr,
                 "usage: json_parse_floor FILE.json "
                 "[all|simdjson|nlohmann-sax]\n");
    return 2;
  }
  const std::string path = argv[1];
  const std::string which = argc == 3 ? argv[2] : "all";
  if (which != "all" && which != "simdjson" && which != "nlohmann-sax") {
    std::fprintf(stderr, "json_parse_floor: error: unknown parser %s\n",
                 which.c_str());
    return 2;
  }
  Clock::time_point start = Clock::now();
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS) {
    std::fprintf(stderr, "json_parse_floor: error: %s: cannot read\n",
                 path.c_str());
    return 1;
  }
  std::printf("file=%s mb=%.1f read_s=%.3f\n", path.c_str(),
              MegaBytes(text.size()), SecondsSince(start));
  bool ok = true;
  if (which != "nlohmann-sax")
    ok = ParseWithSimdjson(text, which == "all") && ok;
  if (which != "simdjson") ok = ParseWithNlohmannSax(text) && ok;
  return ok ? 0 : 1;
}

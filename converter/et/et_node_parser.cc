// ET node parsing with simdjson On-Demand; see et_node_parser.h.
#include "converter/et/et_node_parser.h"

#include <cmath>
#include <cstring>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "base/status_macros.h"
#include "base/string_view_bridge.h"
#include "converter/common/json_text.h"
#include "converter/et/et_json_tokenizer.h"
#include "simdjson.h"

namespace et::convert {
namespace {

namespace od = simdjson::ondemand;

// `s` == `lit`, with the length known when compiling so that the compare is
// inlined (string_view's == calls memcmp: 2% of the instructions).
template <typename S, size_t N>
bool Is(const S& s, const char (&lit)[N]) {
  return s.size() == N - 1 && memcmp(s.data(), lit, N - 1) == 0;
}

}  // namespace

struct EtNodeParser::Impl {
  std::string path;
  StringPool* pool;
  od::parser parser;
  const char* node_begin = nullptr;
  const char* node_end = nullptr;
  std::string scratch;
  HostOp* current = nullptr;  // the op being filled: RawText ranges go into it
  std::vector<TensorRef> in_scratch, out_scratch;  // reused across nodes
  bool bad_value = false;  // set by CollectTensors on a non-JSON token

  absl::Status Error(const HostOp& op, int64_t index,
                     absl::string_view what) const {
    uint64_t id = op.id != 0 ? op.id : IdFromText();
    if (id != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: node %d: %s", path, id, what));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: node #%d (no id yet): %s", path, index, what));
  }

  // The node's `"id": N` found by a plain text search, for errors met before
  // the id field.
  uint64_t IdFromText() const {
    absl::string_view text(node_begin,
                           static_cast<size_t>(node_end - node_begin));
    size_t pos = text.find("\"id\"");
    if (pos == absl::string_view::npos) return 0;
    pos = text.find_first_not_of(" \t\r\n:", pos + 4);
    uint64_t id = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      id = id * 10 + static_cast<uint64_t>(text[pos++] - '0');
    }
    return id;
  }

  // The raw text of `v` (which has not been consumed yet).
  std::string_view RawText(od::value& v) {
    std::string_view tok = v.raw_json_token();
    const size_t rest = static_cast<size_t>(node_end - tok.data());
    size_t length = JsonValueLength(absl::string_view(tok.data(), rest));
    if (length == absl::string_view::npos)
      length = rest;  // simdjson validated it
    return std::string_view(tok.data(), length);
  }

  // Keeps a shapes list after checking that it is one: a list whose leaves
  // are integers (every real trace's shapes are; a string or ["a", 2] was
  // accepted and costed as garbage). A byte scan of the kept text: no parse,
  // no allocation.
  absl::Status KeepShapes(od::value& v, IoPart part, absl::string_view field) {
    Keep(v, part);
    absl::string_view text(node_begin + current->io_begin[part],
                           current->io_len[part]);
    bool ok = !text.empty() && text.front() == '[';
    for (char c : text) {
      if (!ok) break;
      ok = (c >= '0' && c <= '9') || c == '[' || c == ']' || c == ',' ||
           c == '-' || c == ' ' || c == '\n' || c == '\t' || c == '\r';
    }
    if (ok) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "`%s` is not a list of integer shapes: %s", field, text.substr(0, 40)));
  }

  // Records `text` (inside the node) as part `part` of the current op.
  void KeepText(std::string_view text, IoPart part) {
    current->io_begin[part] = static_cast<uint32_t>(text.data() - node_begin);
    current->io_len[part] = static_cast<uint32_t>(text.size());
  }

  // The array text from `begin` ('[') to `end` (the structural character
  // after it, as simdjson's iterator leaves it), or "" when that range does
  // not end in ']' after whitespace.
  static std::string_view ArrayText(const char* begin, const char* end) {
    while (end > begin && (end[-1] == ' ' || end[-1] == '\n' ||
                           end[-1] == '\r' || end[-1] == '\t')) {
      --end;
    }
    if (end <= begin || *begin != '[' || end[-1] != ']') return {};
    return std::string_view(begin, static_cast<size_t>(end - begin));
  }

  // Records the range of `v`'s raw text as part `part` of the current op
  // (consuming `v`). An array's end comes from simdjson's structural index
  // rather than a second scan of its bytes (the node parser's JsonValueLength
  // calls were 6% of the instructions on a 27k-node 1.1.0 trace).
  void Keep(od::value& v, IoPart part) {
    const char* begin = v.raw_json_token().data();
    od::array arr;
    std::string_view raw;
    if (*begin == '[' && v.get_array().get(arr) == simdjson::SUCCESS &&
        arr.raw_json().get(raw) == simdjson::SUCCESS) {
      std::string_view text = ArrayText(begin, raw.data() + raw.size());
      if (!text.empty()) return KeepText(text, part);
    }
    KeepText(RawText(v), part);
  }

  // Walks an argument value collecting tensors ([id, storage, offset, numel,
  // elem_bytes, device]) from any nesting depth (tensor lists, lists of lists).
  void CollectTensors(od::value v, uint16_t arg, int depth,
                      std::vector<TensorRef>* out) {
    od::json_type type;
    if (v.type().get(type) != simdjson::SUCCESS || type != od::json_type::array)
      return;
    od::array arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS) return;
    int64_t ints[5] = {0, 0, 0, 0, 0};
    int n_ints = 0, n_other = 0, n_strings = 0;
    bool nested = false, gpu = false;
    for (auto el_result : arr) {
      od::value el;
      if (std::move(el_result).get(el) != simdjson::SUCCESS) return;
      od::json_type t;
      if (el.type().get(t) != simdjson::SUCCESS) {
        // NaN, Infinity or another token JSON does not have: not silently
        // dropped (it once hid a damaged tensor tuple), but reported.
        bad_value = true;
        return;
      }
      if (t == od::json_type::number) {
        // simdjson classifies lazily: make sure the number really parses.
        double d;
        if (el.get_double().get(d) != simdjson::SUCCESS) {
          bad_value = true;
          return;
        }
      }
      if (t == od::json_type::array) {
        nested = true;
        if (depth < 4) CollectTensors(el, arg, depth + 1, out);
      } else if (t == od::json_type::number) {
        int64_t i;
        if (n_ints < 5 && el.get_int64().get(i) == simdjson::SUCCESS) {
          ints[n_ints] = i;
        } else {
          ++n_other;
        }
        ++n_ints;
      } else if (t == od::json_type::string) {
        std::string_view s;
        if (el.get_string().get(s) == simdjson::SUCCESS) {
          gpu = absl::StartsWith(ToAbsl(s), "cuda") ||
                absl::StartsWith(ToAbsl(s), "hip");
        }
        ++n_strings;
      } else {
        ++n_other;
      }
    }
    if (!nested && n_ints == 5 && n_strings == 1 && n_other == 0 && depth > 0) {
      TensorRef t;
      t.tensor_id = ints[0];
      t.storage_id = ints[1];
      t.num_elem = ints[3];
      t.elem_bytes = static_cast<int32_t>(ints[4]);
      t.arg = arg;
      t.on_gpu = gpu;
      out->push_back(t);
    }
  }

  // A values list: keeps its text and collects tensors per argument.
  absl::Status ParseValues(od::value v, IoPart part,
                           std::vector<TensorRef>* tensors) {
    const char* begin = v.raw_json_token().data();
    od::array arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError("`values` is not a list");
    }
    uint16_t arg = 0;
    for (auto el_result : arr) {
      od::value el;
      if (std::move(el_result).get(el) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError("malformed `values`");
      }
      bad_value = false;
      od::json_type t;
      if (el.type().get(t) != simdjson::SUCCESS) bad_value = true;
      if (!bad_value) CollectTensors(el, arg, 1, tensors);
      if (bad_value) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s argument %d holds a value that is not JSON (NaN or Infinity?)",
            part == kInValues ? "input" : "output", arg));
      }
      ++arg;
    }
    // The iteration leaves simdjson at the token after the closing ']'.
    const char* end = nullptr;
    std::string_view text;
    if (v.current_location().get(end) == simdjson::SUCCESS)
      text = ArrayText(begin, end);
    KeepText(text.empty() ? RawText(v) : text, part);
    return absl::OkStatus();
  }

  // Nested-layout inputs/outputs object.
  absl::Status ParseIoObject(od::value v, bool input) {
    od::object obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(
          input ? "`inputs` is neither a list nor an object"
                : "`outputs` is neither a list nor an object");
    }
    for (auto field_result : obj) {
      od::field field;
      std::string_view key;
      if (std::move(field_result).get(field) != simdjson::SUCCESS ||
          field.unescaped_key().get(key) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError("malformed inputs/outputs object");
      }
      od::value value = field.value();
      if (Is(key, "values")) {
        RETURN_IF_ERROR(ParseValues(value, input ? kInValues : kOutValues,
                                    input ? &in_scratch : &out_scratch));
      } else if (Is(key, "shapes")) {
        RETURN_IF_ERROR(KeepShapes(value, input ? kInShapes : kOutShapes,
                                   input ? "inputs.shapes" : "outputs.shapes"));
      } else if (Is(key, "types")) {
        Keep(value, input ? kInTypes : kOutTypes);
      } else if (Is(key, "strides")) {
        Keep(value, input ? kInStrides : kOutStrides);
      }
    }
    return absl::OkStatus();
  }

  absl::Status ParseAttrs(od::value v, HostOp* op) {
    od::array arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError("`attrs` is not a list");
    }
    for (auto item_result : arr) {
      od::object item;
      if (item_result.get_object().get(item) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError("an `attrs` entry is not an object");
      }
      std::string_view name, type;
      od::value value;
      bool has_value = false;
      for (auto f_result : item) {
        od::field f;
        std::string_view key;
        if (std::move(f_result).get(f) != simdjson::SUCCESS ||
            f.unescaped_key().get(key) != simdjson::SUCCESS) {
          return absl::InvalidArgumentError("malformed `attrs` entry");
        }
        od::value field_value = f.value();
        if (Is(key, "name")) {
          if (field_value.get_string().get(name) != simdjson::SUCCESS) {
            return absl::InvalidArgumentError(
                "`attrs` entry name is not a string");
          }
        } else if (Is(key, "type")) {
          if (field_value.get_string().get(type) != simdjson::SUCCESS) {
            return absl::InvalidArgumentError(
                "`attrs` entry type is not a string");
          }
        } else if (Is(key, "value")) {
          // `name` precedes `value` in every writer we know; keep the value for
          // below.
          value = field_value;
          has_value = true;
          RETURN_IF_ERROR(StoreAttr(ToAbsl(name), ToAbsl(type), value, op));
        }
      }
      if (!has_value)
        return absl::InvalidArgumentError("`attrs` entry without value");
    }
    return absl::OkStatus();
  }

  // Kineto's `args` object on a linked GPU node: `stream` and `device` go to
  // their fields, the rest (correlation, grid, block, ...) become typed
  // attributes, not one string of pretty-printed JSON.
  absl::Status ParseArgs(od::value v, HostOp* op, int64_t* stream) {
    od::object obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError("`args` is not an object");
    }
    for (auto field_result : obj) {
      od::field field;
      std::string_view key;
      if (std::move(field_result).get(field) != simdjson::SUCCESS ||
          field.unescaped_key().get(key) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError("malformed `args`");
      }
      od::value value = field.value();
      int64_t i = 0;
      if (Is(key, "stream") && value.get_int64().get(i) == simdjson::SUCCESS) {
        *stream = i;
      } else if (Is(key, "device") &&
                 value.get_int64().get(i) == simdjson::SUCCESS) {
        op->device = static_cast<int32_t>(i);
      } else {
        op->extra_attrs.push_back(TypedValue(ToAbsl(key), value));
      }
    }
    return absl::OkStatus();
  }

  // An attribute of whatever JSON type `value` has: integer, float, bool,
  // string, list of integers; anything else as its JSON text without
  // whitespace.
  ExtraAttr TypedValue(absl::string_view name, od::value& value) {
    ExtraAttr extra;
    extra.name = pool->Intern(name);
    od::json_type t = od::json_type::null;
    if (value.type().get(t) != simdjson::SUCCESS) t = od::json_type::null;
    if (t == od::json_type::number) {
      if (value.get_int64().get(extra.i) == simdjson::SUCCESS) {
        extra.kind = ExtraAttr::Kind::kInt;
        return extra;
      }
      if (value.get_double().get(extra.d) == simdjson::SUCCESS) {
        extra.kind = ExtraAttr::Kind::kDouble;
        return extra;
      }
    } else if (t == od::json_type::boolean) {
      bool b = false;
      if (value.get_bool().get(b) == simdjson::SUCCESS) {
        extra.kind = ExtraAttr::Kind::kBool;
        extra.i = b;
        return extra;
      }
    } else if (t == od::json_type::string) {
      std::string_view str;
      if (value.get_string().get(str) == simdjson::SUCCESS) {
        extra.s.assign(str.data(), str.size());
        return extra;
      }
    } else if (t == od::json_type::array) {
      const std::string_view raw = RawText(value);
      od::array arr;
      bool ints = value.get_array().get(arr) == simdjson::SUCCESS;
      std::vector<int64_t> list;
      if (ints) {
        for (auto el : arr) {
          int64_t i = 0;
          if (el.get_int64().get(i) != simdjson::SUCCESS) {
            ints = false;
            break;
          }
          list.push_back(i);
        }
      }
      if (ints) {
        extra.kind = ExtraAttr::Kind::kIntList;
        extra.list = std::move(list);
        return extra;
      }
      extra.s = CompactJson(ToAbsl(raw));
      return extra;
    }
    extra.s = CompactJson(ToAbsl(RawText(value)));
    return extra;
  }

  // An integer attribute; ET writers give uint64 for some that fit int64.
  static absl::Status AttrInt(absl::string_view name, od::value& value,
                              int64_t* out) {
    if (value.get_int64().get(*out) == simdjson::SUCCESS)
      return absl::OkStatus();
    uint64_t u;
    if (value.get_uint64().get(u) == simdjson::SUCCESS) {
      *out = static_cast<int64_t>(u);
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute `%s` is not an integer", name));
  }

  // One `attrs` entry: a typed HostOp field when it is one, else an extra
  // attribute typed by its declared `type` and JSON type.
  absl::Status StoreAttr(absl::string_view name, absl::string_view type,
                         od::value& value, HostOp* op) {
    if (Is(name, "rf_id")) return AttrInt(name, value, &op->rf_id);
    if (Is(name, "fw_parent")) return AttrInt(name, value, &op->fw_parent);
    if (Is(name, "seq_id")) return AttrInt(name, value, &op->seq_id);
    if (Is(name, "scope")) return AttrInt(name, value, &op->scope);
    if (Is(name, "tid")) return AttrInt(name, value, &op->tid);
    if (Is(name, "fw_tid")) return AttrInt(name, value, &op->fw_tid);
    if (Is(name, "op_schema")) {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            "attribute `op_schema` is not a string");
      }
      op->op_schema = pool->Intern(ToAbsl(s));
      return absl::OkStatus();
    }
    ExtraAttr extra;
    extra.name = pool->Intern(name);
    RETURN_IF_ERROR(ExtraValue(name, type, value, &extra));
    op->extra_attrs.push_back(std::move(extra));
    return absl::OkStatus();
  }

  // The value of an attribute with no HostOp field: the declared `type`
  // decides between signed and unsigned integers, the JSON type the rest.
  absl::Status ExtraValue(absl::string_view name, absl::string_view type,
                          od::value& value, ExtraAttr* extra) {
    od::json_type t;
    if (value.type().get(t) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(
          absl::StrFormat("attribute `%s` is malformed", name));
    }
    if (t == od::json_type::number && absl::StartsWith(type, "uint")) {
      uint64_t u;
      if (value.get_uint64().get(u) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            absl::StrFormat("attribute `%s` is not an unsigned integer", name));
      }
      extra->kind = ExtraAttr::Kind::kUint;
      extra->i = static_cast<int64_t>(u);
    } else if (t == od::json_type::number && absl::StrContains(type, "int")) {
      extra->kind = ExtraAttr::Kind::kInt;
      RETURN_IF_ERROR(AttrInt(name, value, &extra->i));
    } else if (t == od::json_type::number) {
      extra->kind = ExtraAttr::Kind::kDouble;
      if (value.get_double().get(extra->d) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            absl::StrFormat("attribute `%s` is malformed", name));
      }
    } else if (t == od::json_type::boolean) {
      extra->kind = ExtraAttr::Kind::kBool;
      bool b = false;
      if (value.get_bool().get(b) == simdjson::SUCCESS) extra->i = b;
    } else if (t == od::json_type::string) {
      std::string_view s;
      if (value.get_string().get(s) == simdjson::SUCCESS)
        extra->s.assign(s.data(), s.size());
    } else {
      extra->s.assign(RawText(value));
    }
    return absl::OkStatus();
  }

  // What one node's fields leave for after the last of them.
  struct NodeState {
    int64_t index = 0;
    HostOp* op = nullptr;
    bool has_id = false;
    bool top_level_tid = false;
    int64_t args_stream = -1;
  };

  absl::Status FieldError(const NodeState& node, absl::string_view key,
                          absl::string_view what) const {
    return Error(*node.op, node.index, absl::StrFormat("`%s` %s", key, what));
  }

  absl::Status IntField(const NodeState& node, absl::string_view key,
                        od::value& v, int64_t* out) const {
    if (v.get_int64().get(*out) == simdjson::SUCCESS) return absl::OkStatus();
    return FieldError(node, key, "is not an integer");
  }

  absl::Status IdField(const NodeState& node, absl::string_view key,
                       od::value& v, uint64_t* out) const {
    if (v.get_uint64().get(*out) == simdjson::SUCCESS) return absl::OkStatus();
    return FieldError(node, key, "is not a non-negative integer");
  }

  // Times in microseconds: finite and within +-2^61 ns (as Kineto times), so
  // that conversions to int64 ns and sums of two stay defined; a ts of 1e300
  // was accepted and became garbage. Durations may not be negative.
  absl::Status TimeField(const NodeState& node, absl::string_view key,
                         od::value& v, bool duration, double* out) const {
    if (v.get_double().get(*out) != simdjson::SUCCESS)
      return FieldError(node, key, "is not a number");
    constexpr double kMaxMicros = 2305843009213693.0;  // 2^61 ns in us
    if (!(std::fabs(*out) <= kMaxMicros) || (duration && *out < 0)) {
      return Error(*node.op, node.index,
                   absl::StrFormat("`%s` is %g: out of range (%s to 2.3e15 us)",
                                   key, *out, duration ? "0" : "-2.3e15"));
    }
    return absl::OkStatus();
  }

  // One id or a list of them.
  absl::Status IdListField(const NodeState& node, absl::string_view key,
                           od::value& v, std::vector<uint64_t>* out) const {
    od::json_type t;
    if (v.type().get(t) != simdjson::SUCCESS)
      return Error(*node.op, node.index, "malformed JSON");
    if (t == od::json_type::number) {
      uint64_t u;
      RETURN_IF_ERROR(IdField(node, key, v, &u));
      out->push_back(u);
      return absl::OkStatus();
    }
    od::array arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS)
      return FieldError(node, key, "is not a list of ids");
    for (auto el : arr) {
      uint64_t u;
      if (el.get_uint64().get(u) != simdjson::SUCCESS)
        return FieldError(node, key, "holds a non-id");
      out->push_back(u);
    }
    return absl::OkStatus();
  }

  // A string field interned into *out; `name` is bounded like any value, as
  // it is copied into every output node.
  absl::Status InternedField(const NodeState& node, absl::string_view key,
                             od::value& v, StringPool::Id* out) {
    std::string_view str;
    if (v.get_string().get(str) != simdjson::SUCCESS)
      return FieldError(node, key, "is not a string");
    if (Is(key, "name") && str.size() > kMaxStringBytes) {
      return Error(*node.op, node.index,
                   absl::StrFormat("`name` is over %d MiB, the limit on one "
                                   "string",
                                   kMaxStringBytes >> 20));
    }
    *out = pool->Intern(ToAbsl(str));
    return absl::OkStatus();
  }

  // A node's integer and time fields; false when `key` is none of them.
  bool NumberField(NodeState& node, absl::string_view key, od::value& v,
                   absl::Status* status) {
    int64_t HostOp::*int_field = nullptr;
    if (Is(key, "rf_id")) {
      int_field = &HostOp::rf_id;
    } else if (Is(key, "fw_parent")) {
      int_field = &HostOp::fw_parent;
    } else if (Is(key, "seq_id")) {
      int_field = &HostOp::seq_id;
    } else if (Is(key, "scope")) {
      int_field = &HostOp::scope;
    } else if (Is(key, "tid")) {
      int_field = &HostOp::tid;
    } else if (Is(key, "fw_tid")) {
      int_field = &HostOp::fw_tid;
    } else if (Is(key, "stream")) {
      int_field = &HostOp::stream;
    }
    if (int_field != nullptr) {
      *status = IntField(node, key, v, &(node.op->*int_field));
      if (int_field == &HostOp::tid) node.top_level_tid = status->ok();
      return true;
    }
    double HostOp::*time_field = nullptr;
    if (Is(key, "ts")) {
      time_field = &HostOp::ts_us;
    } else if (Is(key, "inclusive_dur")) {
      time_field = &HostOp::inclusive_dur_us;
    } else if (Is(key, "exclusive_dur")) {
      time_field = &HostOp::exclusive_dur_us;
    } else if (Is(key, "dur")) {
      time_field = &HostOp::dur_us;
    }
    if (time_field == nullptr) return false;
    *status = TimeField(node, key, v, time_field != &HostOp::ts_us,
                        &(node.op->*time_field));
    return true;
  }

  // Inputs, outputs and their 1.0.1 shapes/types lists; false when `key` is
  // none of them.
  bool IoField(NodeState& node, absl::string_view key, od::value& v,
               absl::Status* status) {
    const bool input = Is(key, "inputs");
    if (input || Is(key, "outputs")) {
      od::json_type t;
      if (v.type().get(t) != simdjson::SUCCESS) {
        *status = Error(*node.op, node.index, "malformed JSON");
        return true;
      }
      *status = t == od::json_type::array
                    ? ParseValues(v, input ? kInValues : kOutValues,
                                  input ? &in_scratch : &out_scratch)
                    : ParseIoObject(v, input);
    } else if (Is(key, "input_shapes") || Is(key, "output_shapes")) {
      *status =
          KeepShapes(v, Is(key, "input_shapes") ? kInShapes : kOutShapes, key);
    } else if (Is(key, "input_types")) {
      Keep(v, kInTypes);
    } else if (Is(key, "output_types")) {
      Keep(v, kOutTypes);
    } else {
      return false;
    }
    if (!status->ok()) *status = Error(*node.op, node.index, status->message());
    return true;
  }

  // One field of a node, by key.
  absl::Status ParseField(NodeState& node, absl::string_view key, od::value& v,
                          absl::flat_hash_map<std::string, int64_t>* unknown) {
    HostOp* op = node.op;
    absl::Status s;
    if (Is(key, "id")) {
      s = IdField(node, key, v, &op->id);
      node.has_id = s.ok();
    } else if (Is(key, "name")) {
      s = InternedField(node, key, v, &op->name);
    } else if (Is(key, "parent") || Is(key, "ctrl_deps")) {
      s = IdField(node, key, v, &op->parent);
    } else if (Is(key, "op_schema")) {
      s = InternedField(node, key, v, &op->op_schema);
    } else if (Is(key, "cat")) {
      s = InternedField(node, key, v, &op->category);
    } else if (NumberField(node, key, v, &s) || IoField(node, key, v, &s)) {
    } else if (Is(key, "attrs") || Is(key, "args")) {
      s = Is(key, "attrs") ? ParseAttrs(v, op)
                           : ParseArgs(v, op, &node.args_stream);
      if (!s.ok()) s = Error(*op, node.index, s.message());
    } else if (Is(key, "inter_thread_dep")) {
      s = IdListField(node, key, v, &op->inter_thread_deps);
    } else if (Is(key, "sync_dep")) {
      s = IdListField(node, key, v, &op->sync_deps);
    } else {
      // Kept as a string attribute (e.g. `ph`, `pg_name` on linked GPU nodes).
      ++(*unknown)[std::string(key)];
      op->extra_attrs.push_back(TypedValue(key, v));
    }
    return s;
  }

  // What the fields imply together, and the node's tensors into the arena.
  absl::Status Finish(const NodeState& node, size_t text_length,
                      std::vector<TensorRef>* tensors) {
    HostOp* op = node.op;
    if (!node.has_id) return Error(*op, node.index, "node has no `id`");
    // A GPU node's stream: its own `stream`, else Kineto's `args.stream`,
    // else the Kineto event's `tid`, which is the stream for GPU events.
    if (op->category != 0 && op->stream < 0) {
      op->stream = node.args_stream >= 0 ? node.args_stream
                   : node.top_level_tid  ? op->tid
                                         : -1;
    }
    // Chakra's linker writes no device: a rank's process drives one GPU,
    // which Kineto numbers 0. Without this, nodes with and without
    // `args.device` on one stream would count as two streams and lose their
    // stream order.
    if (op->category != 0 && op->device < 0) op->device = 0;
    // `dur` is the op's span as Kineto measured it (Chakra's 1.0.1 linked
    // files write it on every op, host and GPU); `inclusive_dur` says the
    // same in later schemas. Either one is the op's inclusive duration, so a
    // host op with only `dur` keeps its time (1,415 host ops of one DLRM rank
    // lost theirs: et-sim's recorded step came out 91% short).
    if (op->inclusive_dur_us < 0) op->inclusive_dur_us = op->dur_us;
    if (op->dur_us < 0 && op->is_gpu()) op->dur_us = op->inclusive_dur_us;
    op->text_length = static_cast<uint32_t>(text_length);
    op->tensors_begin = static_cast<uint32_t>(tensors->size());
    op->num_inputs = static_cast<uint32_t>(in_scratch.size());
    op->num_outputs = static_cast<uint32_t>(out_scratch.size());
    tensors->insert(tensors->end(), in_scratch.begin(), in_scratch.end());
    tensors->insert(tensors->end(), out_scratch.begin(), out_scratch.end());
    return absl::OkStatus();
  }
};

EtNodeParser::EtNodeParser(std::string path, StringPool* pool)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  impl_->pool = pool;
}

EtNodeParser::~EtNodeParser() = default;

absl::Status EtNodeParser::Parse(absl::string_view json, int64_t index,
                                 HostOp* op, std::vector<TensorRef>* tensors) {
  Impl& m = *impl_;
  *op = HostOp();
  m.current = op;
  m.in_scratch.clear();
  m.out_scratch.clear();
  m.node_begin = json.data();
  m.node_end = json.data() + json.size();
  od::document doc;
  if (m.parser
          .iterate(simdjson::padded_string_view(json.data(), json.size(),
                                                json.size() + kSpanPadding))
          .get(doc) != simdjson::SUCCESS) {
    return m.Error(*op, index, "malformed JSON");
  }
  od::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) {
    return m.Error(*op, index, "node is not a JSON object");
  }
  Impl::NodeState node;
  node.index = index;
  node.op = op;
  for (auto field_result : obj) {
    od::field field;
    std::string_view key;
    if (std::move(field_result).get(field) != simdjson::SUCCESS ||
        field.unescaped_key().get(key) != simdjson::SUCCESS) {
      return m.Error(*op, index, "malformed JSON");
    }
    od::value v = field.value();
    // Linked files write null for a field they have no value for.
    bool null_value = false;
    if (v.is_null().get(null_value) == simdjson::SUCCESS && null_value) {
      continue;
    }
    RETURN_IF_ERROR(m.ParseField(node, ToAbsl(key), v, &unknown_keys_));
  }
  return m.Finish(node, json.size(), tensors);
}

}  // namespace et::convert

// ET node parsing with simdjson On-Demand; see et_node_parser.h.
#include "converter/et_node_parser.h"

#include <cmath>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "converter/et_json_tokenizer.h"
#include "converter/json_text.h"
#include "proto/input_limits.h"
#include "proto/status_macros.h"
#include "simdjson.h"

namespace et::convert {
namespace {

namespace od = simdjson::ondemand;

absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
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
      if (key == "values") {
        RETURN_IF_ERROR(ParseValues(value, input ? kInValues : kOutValues,
                                    input ? &in_scratch : &out_scratch));
      } else if (key == "shapes") {
        RETURN_IF_ERROR(KeepShapes(value, input ? kInShapes : kOutShapes,
                                   input ? "inputs.shapes" : "outputs.shapes"));
      } else if (key == "types") {
        Keep(value, input ? kInTypes : kOutTypes);
      } else if (key == "strides") {
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
        if (key == "name") {
          if (f.value().get_string().get(name) != simdjson::SUCCESS) {
            return absl::InvalidArgumentError(
                "`attrs` entry name is not a string");
          }
        } else if (key == "type") {
          if (f.value().get_string().get(type) != simdjson::SUCCESS) {
            return absl::InvalidArgumentError(
                "`attrs` entry type is not a string");
          }
        } else if (key == "value") {
          // `name` precedes `value` in every writer we know; keep the value for
          // below.
          value = f.value();
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
      if (key == "stream" && value.get_int64().get(i) == simdjson::SUCCESS) {
        *stream = i;
      } else if (key == "device" &&
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

  absl::Status StoreAttr(absl::string_view name, absl::string_view type,
                         od::value& value, HostOp* op) {
    auto get_int = [&](int64_t* out) -> absl::Status {
      if (value.get_int64().get(*out) == simdjson::SUCCESS)
        return absl::OkStatus();
      uint64_t u;
      if (value.get_uint64().get(u) == simdjson::SUCCESS) {
        *out = static_cast<int64_t>(u);
        return absl::OkStatus();
      }
      return absl::InvalidArgumentError(
          absl::StrFormat("attribute `%s` is not an integer", name));
    };
    if (name == "rf_id") return get_int(&op->rf_id);
    if (name == "fw_parent") return get_int(&op->fw_parent);
    if (name == "seq_id") return get_int(&op->seq_id);
    if (name == "scope") return get_int(&op->scope);
    if (name == "tid") return get_int(&op->tid);
    if (name == "fw_tid") return get_int(&op->fw_tid);
    if (name == "op_schema") {
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
      extra.kind = ExtraAttr::Kind::kUint;
      extra.i = static_cast<int64_t>(u);
    } else if (t == od::json_type::number && absl::StrContains(type, "int")) {
      extra.kind = ExtraAttr::Kind::kInt;
      RETURN_IF_ERROR(get_int(&extra.i));
    } else if (t == od::json_type::number) {
      extra.kind = ExtraAttr::Kind::kDouble;
      if (value.get_double().get(extra.d) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            absl::StrFormat("attribute `%s` is malformed", name));
      }
    } else if (t == od::json_type::boolean) {
      extra.kind = ExtraAttr::Kind::kBool;
      bool b = false;
      if (value.get_bool().get(b) == simdjson::SUCCESS) extra.i = b;
    } else if (t == od::json_type::string) {
      std::string_view s;
      if (value.get_string().get(s) == simdjson::SUCCESS)
        extra.s.assign(s.data(), s.size());
    } else {
      extra.s.assign(RawText(value));
    }
    op->extra_attrs.push_back(std::move(extra));
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
  bool has_id = false;
  bool top_level_tid = false;
  int64_t args_stream = -1;
  for (auto field_result : obj) {
    od::field field;
    std::string_view key_view;
    if (std::move(field_result).get(field) != simdjson::SUCCESS ||
        field.unescaped_key().get(key_view) != simdjson::SUCCESS) {
      return m.Error(*op, index, "malformed JSON");
    }
    const absl::string_view key = ToAbsl(key_view);
    od::value v = field.value();
    auto int_field = [&](int64_t* out) -> absl::Status {
      if (v.get_int64().get(*out) == simdjson::SUCCESS) return absl::OkStatus();
      return m.Error(*op, index,
                     absl::StrFormat("`%s` is not an integer", key));
    };
    auto id_field = [&](uint64_t* out) -> absl::Status {
      if (v.get_uint64().get(*out) == simdjson::SUCCESS)
        return absl::OkStatus();
      return m.Error(
          *op, index,
          absl::StrFormat("`%s` is not a non-negative integer", key));
    };
    auto double_field = [&](double* out) -> absl::Status {
      if (v.get_double().get(*out) == simdjson::SUCCESS)
        return absl::OkStatus();
      return m.Error(*op, index, absl::StrFormat("`%s` is not a number", key));
    };
    // Times in microseconds: finite and within +-2^61 ns (as Kineto times),
    // so that conversions to int64 ns and sums of two stay defined; a ts of
    // 1e300 was accepted and became garbage. Durations may not be negative.
    auto time_field = [&](double* out, bool duration) -> absl::Status {
      RETURN_IF_ERROR(double_field(out));
      constexpr double kMaxMicros = 2305843009213693.0;  // 2^61 ns in us
      if (!(std::fabs(*out) <= kMaxMicros) || (duration && *out < 0)) {
        return m.Error(*op, index,
                       absl::StrFormat("`%s` is %g: out of range (%s to "
                                       "2.3e15 us)",
                                       key, *out, duration ? "0" : "-2.3e15"));
      }
      return absl::OkStatus();
    };
    auto id_list = [&](std::vector<uint64_t>* out) -> absl::Status {
      od::json_type t;
      if (v.type().get(t) != simdjson::SUCCESS)
        return m.Error(*op, index, "malformed JSON");
      if (t == od::json_type::number) {
        uint64_t u;
        RETURN_IF_ERROR(id_field(&u));
        out->push_back(u);
        return absl::OkStatus();
      }
      od::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) {
        return m.Error(*op, index,
                       absl::StrFormat("`%s` is not a list of ids", key));
      }
      for (auto el : arr) {
        uint64_t u;
        if (el.get_uint64().get(u) != simdjson::SUCCESS) {
          return m.Error(*op, index,
                         absl::StrFormat("`%s` holds a non-id", key));
        }
        out->push_back(u);
      }
      return absl::OkStatus();
    };
    // Linked files write null for a field they have no value for.
    bool null_value = false;
    if (v.is_null().get(null_value) == simdjson::SUCCESS && null_value) {
      continue;
    }
    absl::Status s;
    if (key == "id") {
      s = id_field(&op->id);
      has_id = s.ok();
    } else if (key == "name") {
      std::string_view name;
      if (v.get_string().get(name) != simdjson::SUCCESS) {
        return m.Error(*op, index, "`name` is not a string");
      }
      // Interned and copied into every output node: bounded like any value.
      if (name.size() > kMaxStringBytes) {
        return m.Error(*op, index,
                       absl::StrFormat("`name` is over %d MiB, the limit on "
                                       "one string",
                                       kMaxStringBytes >> 20));
      }
      op->name = m.pool->Intern(ToAbsl(name));
    } else if (key == "parent" || key == "ctrl_deps") {
      s = id_field(&op->parent);
    } else if (key == "rf_id") {
      s = int_field(&op->rf_id);
    } else if (key == "fw_parent") {
      s = int_field(&op->fw_parent);
    } else if (key == "seq_id") {
      s = int_field(&op->seq_id);
    } else if (key == "scope") {
      s = int_field(&op->scope);
    } else if (key == "tid") {
      s = int_field(&op->tid);
      top_level_tid = s.ok();
    } else if (key == "fw_tid") {
      s = int_field(&op->fw_tid);
    } else if (key == "op_schema") {
      std::string_view schema;
      if (v.get_string().get(schema) != simdjson::SUCCESS) {
        return m.Error(*op, index, "`op_schema` is not a string");
      }
      op->op_schema = m.pool->Intern(ToAbsl(schema));
    } else if (key == "inputs" || key == "outputs") {
      const bool input = key == "inputs";
      od::json_type t;
      if (v.type().get(t) != simdjson::SUCCESS)
        return m.Error(*op, index, "malformed JSON");
      if (t == od::json_type::array) {
        s = m.ParseValues(v, input ? kInValues : kOutValues,
                          input ? &m.in_scratch : &m.out_scratch);
      } else {
        s = m.ParseIoObject(v, input);
      }
      if (!s.ok()) return m.Error(*op, index, s.message());
    } else if (key == "input_shapes") {
      s = m.KeepShapes(v, kInShapes, "input_shapes");
      if (!s.ok()) return m.Error(*op, index, s.message());
    } else if (key == "input_types") {
      m.Keep(v, kInTypes);
    } else if (key == "output_shapes") {
      s = m.KeepShapes(v, kOutShapes, "output_shapes");
      if (!s.ok()) return m.Error(*op, index, s.message());
    } else if (key == "output_types") {
      m.Keep(v, kOutTypes);
    } else if (key == "attrs") {
      s = m.ParseAttrs(v, op);
      if (!s.ok()) return m.Error(*op, index, s.message());
    } else if (key == "ts") {
      s = time_field(&op->ts_us, false);
    } else if (key == "inclusive_dur") {
      s = time_field(&op->inclusive_dur_us, true);
    } else if (key == "exclusive_dur") {
      s = time_field(&op->exclusive_dur_us, true);
    } else if (key == "dur") {
      s = time_field(&op->dur_us, true);
    } else if (key == "stream") {
      s = int_field(&op->stream);
    } else if (key == "cat") {
      std::string_view cat;
      if (v.get_string().get(cat) != simdjson::SUCCESS) {
        return m.Error(*op, index, "`cat` is not a string");
      }
      op->category = m.pool->Intern(ToAbsl(cat));
    } else if (key == "args") {
      s = m.ParseArgs(v, op, &args_stream);
      if (!s.ok()) return m.Error(*op, index, s.message());
    } else if (key == "inter_thread_dep") {
      s = id_list(&op->inter_thread_deps);
    } else if (key == "sync_dep") {
      s = id_list(&op->sync_deps);
    } else {
      // Kept as a string attribute (e.g. `ph`, `pg_name` on linked GPU nodes).
      ++unknown_keys_[std::string(key)];
      op->extra_attrs.push_back(m.TypedValue(key, v));
    }
    RETURN_IF_ERROR(s);
  }
  if (!has_id) return m.Error(*op, index, "node has no `id`");
  // A GPU node's stream: its own `stream`, else Kineto's `args.stream`, else
  // the Kineto event's `tid`, which is the stream for GPU events.
  if (op->category != 0 && op->stream < 0) {
    op->stream = args_stream >= 0 ? args_stream : top_level_tid ? op->tid : -1;
  }
  // Chakra's linker writes no device: a rank's process drives one GPU, which
  // Kineto numbers 0. Without this, nodes with and without `args.device` on
  // one stream would count as two streams and lose their stream order.
  if (op->category != 0 && op->device < 0) op->device = 0;
  op->text_length = static_cast<uint32_t>(json.size());
  op->tensors_begin = static_cast<uint32_t>(tensors->size());
  op->num_inputs = static_cast<uint32_t>(m.in_scratch.size());
  op->num_outputs = static_cast<uint32_t>(m.out_scratch.size());
  tensors->insert(tensors->end(), m.in_scratch.begin(), m.in_scratch.end());
  tensors->insert(tensors->end(), m.out_scratch.begin(), m.out_scratch.end());
  return absl::OkStatus();
}

}  // namespace et::convert

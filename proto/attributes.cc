// Typed attribute access; see attributes.h.
#include "proto/attributes.h"

namespace et {
namespace {

using ChakraProtoMsg::AttributeProto;

template <typename List>
void AppendInts(const List& list, std::vector<int64_t>* out) {
  for (auto v : list.values()) out->push_back(static_cast<int64_t>(v));
}

// Same name: the length and first byte decide most mismatches without a
// memcmp call (writers add ~25 attributes a node, each after a scan).
bool SameName(const std::string& a, absl::string_view b) {
  return a.size() == b.size() && (b.empty() || a[0] == b[0]) && a == b;
}

AttributeProto* FindOrAdd(AttrList* attrs, absl::string_view name) {
  for (auto& a : *attrs) {
    if (SameName(a.name(), name)) return &a;
  }
  AttributeProto* a = attrs->Add();
  a->set_name(name.data(), name.size());  // no temporary std::string
  return a;
}

}  // namespace

const AttributeProto* FindAttr(const AttrList& attrs, absl::string_view name) {
  for (const auto& a : attrs) {
    if (SameName(a.name(), name)) return &a;
  }
  return nullptr;
}

std::optional<int64_t> IntValue(const AttributeProto& a) {
  switch (a.value_case()) {
    case AttributeProto::kInt32Val:
      return a.int32_val();
    case AttributeProto::kInt64Val:
      return a.int64_val();
    case AttributeProto::kUint32Val:
      return a.uint32_val();
    case AttributeProto::kUint64Val:
      return static_cast<int64_t>(a.uint64_val());
    case AttributeProto::kSint32Val:
      return a.sint32_val();
    case AttributeProto::kSint64Val:
      return a.sint64_val();
    case AttributeProto::kFixed32Val:
      return a.fixed32_val();
    case AttributeProto::kFixed64Val:
      return static_cast<int64_t>(a.fixed64_val());
    case AttributeProto::kSfixed32Val:
      return a.sfixed32_val();
    case AttributeProto::kSfixed64Val:
      return a.sfixed64_val();
    case AttributeProto::kBoolVal:
      return a.bool_val() ? 1 : 0;
    default:
      return std::nullopt;
  }
}

std::optional<double> DoubleValue(const AttributeProto& a) {
  if (a.value_case() == AttributeProto::kDoubleVal) return a.double_val();
  if (a.value_case() == AttributeProto::kFloatVal) return a.float_val();
  std::optional<int64_t> i = IntValue(a);
  if (i.has_value()) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> BoolValue(const AttributeProto& a) {
  if (a.value_case() == AttributeProto::kBoolVal) return a.bool_val();
  std::optional<int64_t> i = IntValue(a);
  if (i.has_value()) return *i != 0;
  return std::nullopt;
}

std::optional<int64_t> GetInt(const AttrList& attrs, absl::string_view name) {
  const AttributeProto* a = FindAttr(attrs, name);
  if (a == nullptr) return std::nullopt;
  return IntValue(*a);
}

std::optional<double> GetDouble(const AttrList& attrs, absl::string_view name) {
  const AttributeProto* a = FindAttr(attrs, name);
  if (a == nullptr) return std::nullopt;
  return DoubleValue(*a);
}

std::optional<bool> GetBool(const AttrList& attrs, absl::string_view name) {
  const AttributeProto* a = FindAttr(attrs, name);
  if (a == nullptr) return std::nullopt;
  return BoolValue(*a);
}

std::optional<std::string> GetString(const AttrList& attrs,
                                     absl::string_view name) {
  const AttributeProto* a = FindAttr(attrs, name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() == AttributeProto::kStringVal) return a->string_val();
  if (a->value_case() == AttributeProto::kBytesVal) return a->bytes_val();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> GetIntList(const AttrList& attrs,
                                               absl::string_view name) {
  const AttributeProto* a = FindAttr(attrs, name);
  if (a == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  switch (a->value_case()) {
    case AttributeProto::kInt32List:
      AppendInts(a->int32_list(), &out);
      break;
    case AttributeProto::kInt64List:
      AppendInts(a->int64_list(), &out);
      break;
    case AttributeProto::kUint32List:
      AppendInts(a->uint32_list(), &out);
      break;
    case AttributeProto::kUint64List:
      AppendInts(a->uint64_list(), &out);
      break;
    case AttributeProto::kSint32List:
      AppendInts(a->sint32_list(), &out);
      break;
    case AttributeProto::kSint64List:
      AppendInts(a->sint64_list(), &out);
      break;
    case AttributeProto::kFixed32List:
      AppendInts(a->fixed32_list(), &out);
      break;
    case AttributeProto::kFixed64List:
      AppendInts(a->fixed64_list(), &out);
      break;
    case AttributeProto::kSfixed32List:
      AppendInts(a->sfixed32_list(), &out);
      break;
    case AttributeProto::kSfixed64List:
      AppendInts(a->sfixed64_list(), &out);
      break;
    case AttributeProto::kBoolList:
      AppendInts(a->bool_list(), &out);
      break;
    default: {
      std::optional<int64_t> single = GetInt(attrs, name);
      if (!single.has_value()) return std::nullopt;
      out.push_back(*single);
    }
  }
  return out;
}

std::optional<std::vector<std::string>> GetStringList(const AttrList& attrs,
                                                      absl::string_view name) {
  const AttributeProto* a = FindAttr(attrs, name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() == AttributeProto::kStringList) {
    return std::vector<std::string>(a->string_list().values().begin(),
                                    a->string_list().values().end());
  }
  if (a->value_case() == AttributeProto::kBytesList) {
    return std::vector<std::string>(a->bytes_list().values().begin(),
                                    a->bytes_list().values().end());
  }
  return std::nullopt;
}

std::optional<std::vector<bool>> GetBoolList(const AttrList& attrs,
                                             absl::string_view name) {
  const AttributeProto* a = FindAttr(attrs, name);
  if (a == nullptr || a->value_case() != AttributeProto::kBoolList) {
    return std::nullopt;
  }
  return std::vector<bool>(a->bool_list().values().begin(),
                           a->bool_list().values().end());
}

void SetInt64(AttrList* attrs, absl::string_view name, int64_t value) {
  FindOrAdd(attrs, name)->set_int64_val(value);
}
void SetUint64(AttrList* attrs, absl::string_view name, uint64_t value) {
  FindOrAdd(attrs, name)->set_uint64_val(value);
}
void SetInt32(AttrList* attrs, absl::string_view name, int32_t value) {
  FindOrAdd(attrs, name)->set_int32_val(value);
}
void SetDouble(AttrList* attrs, absl::string_view name, double value) {
  FindOrAdd(attrs, name)->set_double_val(value);
}
void SetBool(AttrList* attrs, absl::string_view name, bool value) {
  FindOrAdd(attrs, name)->set_bool_val(value);
}
void SetString(AttrList* attrs, absl::string_view name,
               absl::string_view value) {
  FindOrAdd(attrs, name)->set_string_val(value.data(), value.size());
}
void SetInt64List(AttrList* attrs, absl::string_view name,
                  const std::vector<int64_t>& values) {
  auto* list = FindOrAdd(attrs, name)->mutable_int64_list();
  list->clear_values();
  for (int64_t v : values) list->add_values(v);
}
void SetStringList(AttrList* attrs, absl::string_view name,
                   const std::vector<std::string>& values) {
  auto* list = FindOrAdd(attrs, name)->mutable_string_list();
  list->clear_values();
  for (const auto& v : values) list->add_values(v);
}
void SetBoolList(AttrList* attrs, absl::string_view name,
                 const std::vector<bool>& values) {
  auto* list = FindOrAdd(attrs, name)->mutable_bool_list();
  list->clear_values();
  for (bool v : values) list->add_values(v);
}

void SetDoubleList(AttrList* attrs, absl::string_view name,
                   const std::vector<double>& values) {
  auto* list = FindOrAdd(attrs, name)->mutable_double_list();
  list->clear_values();
  for (double v : values) list->add_values(v);
}

std::optional<std::vector<double>> GetDoubleList(const AttrList& attrs,
                                                 absl::string_view name) {
  const AttributeProto* a = FindAttr(attrs, name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() == AttributeProto::kDoubleList) {
    return std::vector<double>(a->double_list().values().begin(),
                               a->double_list().values().end());
  }
  if (a->value_case() == AttributeProto::kFloatList) {
    return std::vector<double>(a->float_list().values().begin(),
                               a->float_list().values().end());
  }
  auto ints = GetIntList(attrs, name);
  if (ints.has_value()) return std::vector<double>(ints->begin(), ints->end());
  auto single = GetDouble(attrs, name);
  if (single.has_value()) return std::vector<double>{*single};
  return std::nullopt;
}

}  // namespace et

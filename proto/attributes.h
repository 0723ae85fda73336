// Typed access to Chakra node and metadata attributes (AttributeProto lists).
// Writers over the years used different integer widths for the same attribute,
// so the getters accept any integer kind of the oneof and convert; setters
// write the width that Chakra's feeder and ASTRA-sim expect for the well-known
// names (see attr_names.h).
#ifndef PROTO_ATTRIBUTES_H_
#define PROTO_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_field.h"
#include "proto/et_def.pb.h"

namespace et {

using AttrList =
    google::protobuf::RepeatedPtrField<ChakraProtoMsg::AttributeProto>;

// Returns the attribute named `name`, or nullptr. Linear: nodes carry few
// attributes.
const ChakraProtoMsg::AttributeProto* FindAttr(const AttrList& attrs,
                                               absl::string_view name);

// The value of one attribute: any integer (or bool) kind as an integer, any
// numeric kind as a double, a bool or any integer as a bool; nullopt when the
// kind does not convert.
std::optional<int64_t> IntValue(const ChakraProtoMsg::AttributeProto& a);
std::optional<double> DoubleValue(const ChakraProtoMsg::AttributeProto& a);
std::optional<bool> BoolValue(const ChakraProtoMsg::AttributeProto& a);

// Integer value of any integer (or bool) kind; nullopt if absent or not an
// integer.
std::optional<int64_t> GetInt(const AttrList& attrs, absl::string_view name);
// Any numeric kind as a double (integers included).
std::optional<double> GetDouble(const AttrList& attrs, absl::string_view name);
std::optional<bool> GetBool(const AttrList& attrs, absl::string_view name);
std::optional<std::string> GetString(const AttrList& attrs,
                                     absl::string_view name);
// Any integer list kind (or a single integer, as a one-element list).
std::optional<std::vector<int64_t>> GetIntList(const AttrList& attrs,
                                               absl::string_view name);
std::optional<std::vector<std::string>> GetStringList(const AttrList& attrs,
                                                      absl::string_view name);
std::optional<std::vector<bool>> GetBoolList(const AttrList& attrs,
                                             absl::string_view name);

// Convenience overloads on a node.
inline std::optional<int64_t> GetInt(const ChakraProtoMsg::Node& n,
                                     absl::string_view name) {
  return GetInt(n.attr(), name);
}
inline std::optional<double> GetDouble(const ChakraProtoMsg::Node& n,
                                       absl::string_view name) {
  return GetDouble(n.attr(), name);
}
inline std::optional<bool> GetBool(const ChakraProtoMsg::Node& n,
                                   absl::string_view name) {
  return GetBool(n.attr(), name);
}
inline std::optional<std::string> GetString(const ChakraProtoMsg::Node& n,
                                            absl::string_view name) {
  return GetString(n.attr(), name);
}

// Setters append a new attribute, or overwrite the value of an existing one.
void SetInt64(AttrList* attrs, absl::string_view name, int64_t value);
void SetUint64(AttrList* attrs, absl::string_view name, uint64_t value);
void SetInt32(AttrList* attrs, absl::string_view name, int32_t value);
void SetDouble(AttrList* attrs, absl::string_view name, double value);
void SetBool(AttrList* attrs, absl::string_view name, bool value);
void SetString(AttrList* attrs, absl::string_view name,
               absl::string_view value);
void SetInt64List(AttrList* attrs, absl::string_view name,
                  const std::vector<int64_t>& values);
void SetStringList(AttrList* attrs, absl::string_view name,
                   const std::vector<std::string>& values);
void SetBoolList(AttrList* attrs, absl::string_view name,
                 const std::vector<bool>& values);
void SetDoubleList(AttrList* attrs, absl::string_view name,
                   const std::vector<double>& values);
// Any numeric list kind as doubles (a single number as a one-element list).
std::optional<std::vector<double>> GetDoubleList(const AttrList& attrs,
                                                 absl::string_view name);

}  // namespace et

#endif  // PROTO_ATTRIBUTES_H_

// .et -> one JSON document; see graph_json.h.
#include "proto/graph_json.h"

#include <cstdio>

#include "absl/strings/str_format.h"
#include "base/atomic_output_file.h"
#include "base/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "proto/et_reader.h"

namespace et {
namespace {

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& msg) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  auto status = google::protobuf::util::MessageToJsonString(msg, &out, options);
  if (!status.ok()) {
    return absl::InternalError(std::string(status.message()));
  }
  return out;
}

}  // namespace

absl::Status EtToJsonFile(const std::string& et_path,
                          const std::string& json_path) {
  ASSIGN_OR_RETURN(auto reader, EtReader::Open(et_path));
  std::string tmp = TempPathFor(json_path);
  FILE* out = fopen(tmp.c_str(), "wb");
  if (out == nullptr) {
    DiscardTempFile(tmp);
    return absl::NotFoundError(
        absl::StrFormat("%s: cannot open for writing", json_path));
  }
  auto fail = [&](absl::Status s) {
    fclose(out);
    DiscardTempFile(tmp);
    return s;
  };
  auto meta = ToJson(reader->metadata());
  if (!meta.ok()) return fail(meta.status());
  fprintf(out, "{\"metadata\": %s,\n\"nodes\": [", meta->c_str());
  ChakraProtoMsg::Node node;
  bool first = true;
  while (true) {
    auto more = reader->Next(&node);
    if (!more.ok()) return fail(more.status());
    if (!*more) break;
    auto text = ToJson(node);
    if (!text.ok()) return fail(text.status());
    fprintf(out, "%s\n%s", first ? "" : ",", text->c_str());
    first = false;
  }
  fprintf(out, "]}\n");
  if (fclose(out) != 0) {
    DiscardTempFile(tmp);
    return absl::InternalError(absl::StrFormat("%s: write failed", json_path));
  }
  return CommitTempFile(tmp, json_path);
}

}  // namespace et

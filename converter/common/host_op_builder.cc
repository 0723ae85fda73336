// HostOps made in memory; see host_op_builder.h.
#include "converter/common/host_op_builder.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "converter/common/huge_pages.h"

namespace et::convert {

namespace {
// The shared text of ops without recorded inputs: every part is this `[]`.
constexpr absl::string_view kEmptyList = "[]";
}  // namespace

HostOpBuilder::HostOpBuilder(std::string path, size_t ops_hint)
    : path_(std::move(path)), pool_(std::make_unique<StringPool>()) {
  parsed_.ops.reserve(ops_hint);
  AdviseHugePages(parsed_.ops);
  text_.assign(kEmptyList.data(), kEmptyList.size());
}

absl::Status HostOpBuilder::Add(uint64_t id, absl::string_view name,
                                uint64_t parent, int64_t tid,
                                const HostOpInputs& inputs) {
  if (name.size() > kMaxStringBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: node %d: `name` is over %d MiB, the limit on one string", path_,
        id, kMaxStringBytes >> 20));
  }
  HostOp& op = parsed_.ops.emplace_back();
  op.id = id;
  op.name = pool_->Intern(name);
  op.parent = parent;
  op.tid = tid;
  op.tensors_begin = static_cast<uint32_t>(parsed_.tensors.size());
  op.io_len[kInValues] = op.io_len[kInShapes] = op.io_len[kInTypes] =
      op.io_len[kOutValues] = op.io_len[kOutShapes] = op.io_len[kOutTypes] =
          static_cast<uint32_t>(kEmptyList.size());
  if (inputs.values == kEmptyList && inputs.shapes == kEmptyList &&
      inputs.types == kEmptyList && inputs.strides.empty()) {
    op.text_offset = 0;  // the shared empty lists; every io_begin is 0
    op.text_length = static_cast<uint32_t>(kEmptyList.size());
    return absl::OkStatus();
  }
  // Its own texts: the outputs' empty list, then each input part.
  op.text_offset = text_.size();
  text_.append(kEmptyList.data(), kEmptyList.size());
  uint32_t at = static_cast<uint32_t>(kEmptyList.size());
  for (auto [part, text] :
       {std::pair{kInValues, inputs.values},
        std::pair{kInShapes, inputs.shapes}, std::pair{kInTypes, inputs.types},
        std::pair{kInStrides, inputs.strides}}) {
    op.io_begin[part] = at;
    op.io_len[part] = static_cast<uint32_t>(text.size());
    text_.append(text.data(), text.size());
    at += static_cast<uint32_t>(text.size());
  }
  op.text_length = at;
  return absl::OkStatus();
}

void HostOpBuilder::AddStringAttr(absl::string_view name,
                                  absl::string_view value) {
  ExtraAttr& extra = parsed_.ops.back().extra_attrs.emplace_back();
  extra.name = pool_->Intern(name);
  extra.kind = ExtraAttr::Kind::kString;
  extra.s.assign(value.data(), value.size());
}

void HostOpBuilder::AddIntAttr(absl::string_view name, int64_t value) {
  ExtraAttr& extra = parsed_.ops.back().extra_attrs.emplace_back();
  extra.name = pool_->Intern(name);
  extra.kind = ExtraAttr::Kind::kInt;
  extra.i = value;
}

void HostOpBuilder::SetField(const std::string& key, std::string json_text) {
  parsed_.fields[key] = std::move(json_text);
}

}  // namespace et::convert

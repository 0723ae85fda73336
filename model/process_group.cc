// Process-group parsing and attribute encoding; see process_group.h.
#include "model/process_group.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"

namespace et {

int64_t ProcessGroup::MemberCount(int64_t world_size) const {
  if (!ranks.empty()) return static_cast<int64_t>(ranks.size());
  if (size > 0) return size;
  return world_size;
}

absl::StatusOr<std::vector<ProcessGroup>> ParseProcessGroupJson(
    absl::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                             /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_array()) {
    return absl::InvalidArgumentError(
        "process-group table is not a JSON array");
  }
  std::vector<ProcessGroup> groups;
  for (const auto& item : doc) {
    if (!item.is_object()) {
      return absl::InvalidArgumentError("process-group entry is not an object");
    }
    ProcessGroup pg;
    auto name = item.find("pg_name");
    if (name == item.end()) {
      return absl::InvalidArgumentError("process-group entry without pg_name");
    }
    pg.name = name->is_string() ? name->get<std::string>() : name->dump();
    if (auto it = item.find("pg_desc"); it != item.end() && it->is_string()) {
      pg.desc = it->get<std::string>();
    }
    if (auto it = item.find("backend_config");
        it != item.end() && it->is_string()) {
      pg.backend = it->get<std::string>();
    }
    if (auto it = item.find("group_size");
        it != item.end() && it->is_number_integer()) {
      pg.size = it->get<int64_t>();
    }
    if (auto it = item.find("backend_id");
        it != item.end() && it->is_number_integer()) {
      pg.backend_id = it->get<int64_t>();
    }
    if (auto it = item.find("ranks"); it != item.end()) {
      // Ranks come as a list, or as a dict {global: local} in some versions.
      if (it->is_array()) {
        for (const auto& r : *it) {
          if (!r.is_number_integer()) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "process group '%s': non-integer rank", pg.name));
          }
          pg.ranks.push_back(r.get<int64_t>());
        }
      } else if (it->is_object()) {
        for (const auto& [key, value] : it->items()) {
          int64_t rank = 0;
          if (!absl::SimpleAtoi(key, &rank)) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "process group '%s': bad rank '%s'", pg.name, key));
          }
          (void)value;
          pg.ranks.push_back(rank);
        }
      }
    }
    groups.push_back(std::move(pg));
  }
  return groups;
}

void EncodeProcessGroups(const std::vector<ProcessGroup>& groups,
                         AttrList* attrs) {
  std::vector<std::string> names, descs, backends;
  std::vector<int64_t> sizes;
  for (const ProcessGroup& pg : groups) {
    names.push_back(pg.name);
    descs.push_back(pg.desc);
    backends.push_back(pg.backend);
    sizes.push_back(pg.size);
  }
  SetStringList(attrs, attr::kPgNames, names);
  SetStringList(attrs, attr::kPgDescs, descs);
  SetStringList(attrs, attr::kPgBackends, backends);
  SetInt64List(attrs, attr::kPgSizes, sizes);
  for (const ProcessGroup& pg : groups) {
    SetInt64List(attrs, absl::StrCat(attr::kPgRanksPrefix, pg.name), pg.ranks);
  }
}

std::vector<ProcessGroup> DecodeProcessGroups(const AttrList& attrs) {
  std::vector<ProcessGroup> groups;
  auto names = GetStringList(attrs, attr::kPgNames);
  if (!names.has_value()) return groups;
  auto descs =
      GetStringList(attrs, attr::kPgDescs).value_or(std::vector<std::string>{});
  auto backends = GetStringList(attrs, attr::kPgBackends)
                      .value_or(std::vector<std::string>{});
  auto sizes =
      GetIntList(attrs, attr::kPgSizes).value_or(std::vector<int64_t>{});
  for (size_t i = 0; i < names->size(); ++i) {
    ProcessGroup pg;
    pg.name = (*names)[i];
    if (i < descs.size()) pg.desc = descs[i];
    if (i < backends.size()) pg.backend = backends[i];
    if (i < sizes.size()) pg.size = sizes[i];
    pg.ranks = GetIntList(attrs, absl::StrCat(attr::kPgRanksPrefix, pg.name))
                   .value_or(std::vector<int64_t>{});
    groups.push_back(std::move(pg));
  }
  return groups;
}

}  // namespace et

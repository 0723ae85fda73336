// The one reader of the YAML/JSON configuration files et-sim takes (platform
// files, topologies: our format and ASTRA-sim's network YAML). It states what
// a valid file is, before any field is read: UTF-8 text, one YAML document (or
// one JSON value with nothing after it), no language-specific tags (`!!python/
// object`, `!foo`: only YAML's core str/int/float/bool/null/map/seq), no key
// twice in one map (yaml-cpp keeps both and `node[key]` reads the first, so a
// second `gpu:` was silently ignored), and nesting within kMaxNestingDepth.
// Anything else is one error naming the file, the key path (`dims[0].npus`)
// or the line. Stateless; thread-safe.
#ifndef SIMULATOR_PLATFORM_YAML_CONFIG_H_
#define SIMULATOR_PLATFORM_YAML_CONFIG_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace et::sim {

// Parses `text` (named `origin` in errors) into its one root node.
absl::StatusOr<YAML::Node> LoadYamlConfig(absl::string_view text,
                                          absl::string_view origin);

}  // namespace et::sim

#endif  // SIMULATOR_PLATFORM_YAML_CONFIG_H_

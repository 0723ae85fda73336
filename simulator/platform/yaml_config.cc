// Checked YAML/JSON configuration text; see yaml_config.h.
#include "simulator/platform/yaml_config.h"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "base/status_macros.h"
#include "base/text_escape.h"
#include "simulator/platform/topology.h"
#include "yaml-cpp/eventhandler.h"

namespace et::sim {
namespace {

// The 1-based line of byte `offset`.
int64_t LineOf(absl::string_view text, size_t offset) {
  int64_t line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i)
    line += text[i] == '\n';
  return line;
}

// The first byte that is not part of valid UTF-8, or npos.
size_t FirstBadUtf8(absl::string_view text) {
  if (IsValidUtf8(text)) return absl::string_view::npos;
  // Narrow it down line by line: config files are small.
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == absl::string_view::npos) end = text.size();
    if (!IsValidUtf8(text.substr(start, end - start))) return start;
    start = end + 1;
  }
  return 0;
}

// When the text is one flow value (JSON: it opens with '{' or '['), the text
// after its closing bracket, else "". yaml-cpp stops at the bracket and
// ignores the rest.
absl::string_view AfterFlowValue(absl::string_view text, size_t* at) {
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i == absl::string_view::npos || (text[i] != '{' && text[i] != '['))
    return "";
  int depth = 0;
  char quote = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      break;
    }
  }
  if (i >= text.size()) return "";  // unclosed: yaml-cpp reports it
  absl::string_view rest = text.substr(i + 1);
  // Blanks and comments may follow.
  size_t j = 0;
  while (j < rest.size()) {
    if (rest[j] == ' ' || rest[j] == '\t' || rest[j] == '\r' ||
        rest[j] == '\n') {
      ++j;
    } else if (rest[j] == '#') {
      while (j < rest.size() && rest[j] != '\n') ++j;
    } else {
      *at = i + 1 + j;
      return rest.substr(j);
    }
  }
  return "";
}

// YAML's core schema: what a plain or quoted scalar, a map or a list is
// tagged with. Every other tag asks a loader for a language's objects.
bool IsCoreTag(const std::string& tag) {
  if (tag.empty() || tag == "?" || tag == "!") return true;
  for (const char* t : {"str", "int", "float", "bool", "null", "map", "seq"}) {
    if (tag == absl::StrCat("tag:yaml.org,2002:", t)) return true;
  }
  return false;
}

// Every node of `root`, depth first with an explicit stack: no key twice in
// a map, keys scalars, only core tags.
absl::Status CheckNodes(const YAML::Node& root, absl::string_view origin) {
  std::vector<std::pair<YAML::Node, std::string>> stack = {{root, ""}};
  while (!stack.empty()) {
    auto [node, path] = std::move(stack.back());
    stack.pop_back();
    const std::string where = path.empty() ? "the top level" : path;
    if (!IsCoreTag(node.Tag())) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s (line %d): tag '%s' is not allowed (only plain YAML values)",
          origin, where, node.Mark().line + 1, EscapeForPrint(node.Tag())));
    }
    if (node.IsSequence()) {
      for (size_t i = node.size(); i-- > 0;)
        stack.emplace_back(node[i], absl::StrFormat("%s[%d]", path, i));
    } else if (node.IsMap()) {
      absl::flat_hash_set<std::string> keys;
      for (const auto& entry : node) {
        if (!entry.first.IsScalar()) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s: %s (line %d): a key that is not a plain value", origin,
              where, entry.first.Mark().line + 1));
        }
        const std::string& key = entry.first.Scalar();
        const std::string child =
            path.empty() ? key : absl::StrCat(path, ".", key);
        if (!keys.insert(key).second) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s: line %d: duplicate key '%s' (each key may appear once)",
              origin, entry.first.Mark().line + 1, EscapeForPrint(child)));
        }
        stack.emplace_back(entry.second, child);
      }
    }
  }
  return absl::OkStatus();
}

// Where each document of a stream starts. yaml-cpp's parser does not consume
// a ',' at the top of a document, so YAML::LoadAll (and any loop over
// HandleNextDocument) yields null documents at that spot forever; a document
// that starts where the one before it started is that ',' and stops the count.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { last_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  const YAML::Mark& last() const { return last_; }

 private:
  YAML::Mark last_ = YAML::Mark::null_mark();
};

// The number of documents in `text`, or an error where the parser stalls.
// Throws YAML::Exception on a syntax error, as yaml-cpp does.
absl::StatusOr<int> CountDocuments(const std::string& text,
                                   absl::string_view origin) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  int documents = 0;
  int previous_pos = -1;
  while (parser.HandleNextDocument(starts)) {
    const YAML::Mark& at = starts.last();
    if (at.pos <= previous_pos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: line %d, column %d: '%s' where a value should start (a ',' "
          "separates items only inside [ ] or { })",
          origin, at.line + 1, at.column + 1,
          EscapeForPrint(absl::string_view(text).substr(at.pos, 1))));
    }
    previous_pos = at.pos;
    ++documents;
  }
  return documents;
}

}  // namespace

absl::StatusOr<YAML::Node> LoadYamlConfig(absl::string_view text,
                                          absl::string_view origin) {
  if (size_t bad = FirstBadUtf8(text); bad != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: line %d: not UTF-8 text", origin, LineOf(text, bad)));
  }
  if (!YamlNestingWithin(text, kMaxNestingDepth)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: nested deeper than %d levels", origin, kMaxNestingDepth));
  }
  size_t trailing_at = 0;
  if (absl::string_view rest = AfterFlowValue(text, &trailing_at);
      !rest.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: line %d: text after the end of the JSON value: '%s'", origin,
        LineOf(text, trailing_at), EscapeForPrint(rest.substr(0, 40))));
  }
  const std::string owned(text);
  YAML::Node root;
  try {  // yaml-cpp reports errors by exception; they stop here.
    ASSIGN_OR_RETURN(const int documents, CountDocuments(owned, origin));
    if (documents > 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: more than one YAML document (%d, separated by '---'): a "
          "configuration file holds one",
          origin, documents));
    }
    root = YAML::Load(owned);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", e.what()));
  }
  try {
    RETURN_IF_ERROR(CheckNodes(root, origin));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", e.what()));
  }
  return root;
}

}  // namespace et::sim

// A self-contained HTML report page: one file with its style and its little
// script inline (tabs, sortable tables, a zoomable track view), and a
// Content-Security-Policy that forbids every fetch, so the page opens from
// disk and asks nothing of the network. Domain-free: the tools fill the tabs
// (et-sim's report, simulator/report/html_report.h). Pure functions.
#ifndef BASE_HTML_PAGE_H_
#define BASE_HTML_PAGE_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace et {

// `text` with &, <, >, " and ' escaped, and made printable (control bytes
// and bytes that are not UTF-8 written as \xNN: base/text_escape.h).
std::string HtmlEscape(absl::string_view text);

// A table whose columns sort on a click of their header. Cells are text
// (escaped when rendered); a numeric column sorts by the number its cell
// starts with and is right-aligned.
struct HtmlTable {
  std::string id;  // the element id (tests find tables by it)
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column; missing entries: text
  std::vector<std::vector<std::string>> rows;
};
std::string RenderHtmlTable(const HtmlTable& table);

// One tab: its id (the URL fragment; the section's id is "tab-" and it, so
// that a fragment selects a tab without scrolling to it), its title on the
// tab bar, and its body (HTML, already escaped by whoever made it).
struct HtmlTab {
  std::string id, title, body_html;
};

// The document. `title` heads the page; `subtitle` is a line under it (text).
// The first tab is shown; a tab is chosen by a click or by #id in the URL.
std::string RenderHtmlPage(absl::string_view title, absl::string_view subtitle,
                           const std::vector<HtmlTab>& tabs);

}  // namespace et

#endif  // BASE_HTML_PAGE_H_

// The page shell: escaping, sortable tables, the tab bar, the inline style
// and script.
#include "base/html_page.h"

#include "absl/strings/str_cat.h"
#include "base/text_escape.h"

namespace et {
namespace {

// Nothing is fetched: no script, style, image, font or connection from
// anywhere but the page itself (images only as data: URLs).
constexpr char kPolicy[] =
    "default-src 'none'; style-src 'unsafe-inline'; script-src "
    "'unsafe-inline'; img-src data:";

constexpr char kStyle[] = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fff}
header{padding:12px 20px 4px;border-bottom:1px solid #ddd}
header h1{font-size:20px;margin:0}
header p{margin:2px 0 8px;color:#555}
nav{display:flex;gap:4px;flex-wrap:wrap}
nav button{font:inherit;border:1px solid #ccc;border-bottom:none;background:#f4f4f4;
 padding:6px 14px;cursor:pointer;border-radius:6px 6px 0 0}
nav button.on{background:#fff;font-weight:600;border-color:#888}
section.tab{padding:12px 20px;overflow-x:auto}
h2{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 14px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}
th,td.num{white-space:nowrap}
td{overflow-wrap:anywhere}td:first-child{min-width:14em}
th{background:#f0f3f7;cursor:pointer;user-select:none}
th[data-dir=asc]::after{content:" \25B2"}th[data-dir=desc]::after{content:" \25BC"}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.figure{font-size:22px;font-weight:600}
.cards{display:flex;gap:12px;flex-wrap:wrap}
.card{border:1px solid #ddd;border-radius:8px;padding:8px 14px;min-width:180px}
.card .label{color:#666;font-size:12px}
.why{color:#666;font-size:12px}
ul.notes li{margin:3px 0}
.rec{border-left:4px solid #e39b2d;padding:4px 10px;margin:6px 0;background:#fdf7ee}
.rec .fig{color:#555;font-size:12px}
svg text{font:11px system-ui,sans-serif;fill:#333}
.tracks{display:grid;grid-template-columns:220px 1fr;align-items:stretch}
.tracks .names div{height:18px;line-height:18px;font-size:12px;overflow:hidden;
 text-overflow:ellipsis;white-space:nowrap}
.tracks svg{width:100%;border:1px solid #ddd;background:#fafafa}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
)css";

constexpr char kScript[] = R"js(
(function(){
var tabs=document.querySelectorAll('section.tab'),buttons=document.querySelectorAll('nav button');
function show(id){tabs.forEach(function(s){s.hidden=s.id!=='tab-'+id;});
 buttons.forEach(function(b){b.classList.toggle('on',b.dataset.tab===id);});}
buttons.forEach(function(b){b.addEventListener('click',function(){show(b.dataset.tab);
 history.replaceState(null,'','#'+b.dataset.tab);});});
var want=location.hash.slice(1),el=want&&document.getElementById('tab-'+want);
show(el&&el.classList.contains('tab')?want:tabs[0].id.slice(4));
document.querySelectorAll('table.sortable').forEach(function(t){
 Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){
  th.addEventListener('click',function(){
   var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
   var num=th.classList.contains('num'),dir=th.dataset.dir==='desc'?'asc':'desc';
   Array.prototype.forEach.call(t.tHead.rows[0].cells,function(c){delete c.dataset.dir;});
   th.dataset.dir=dir;
   rows.sort(function(a,b){var x=a.cells[i].textContent,y=b.cells[i].textContent;
    var c=num?(parseFloat(x)||0)-(parseFloat(y)||0):x.localeCompare(y);
    return dir==='asc'?c:-c;});
   rows.forEach(function(r){body.appendChild(r);});});});});
document.querySelectorAll('svg.zoom').forEach(function(svg){
 var vb=svg.viewBox.baseVal,x0=vb.x,w0=vb.width;
 svg.addEventListener('wheel',function(e){e.preventDefault();
  var r=svg.getBoundingClientRect(),f=(e.clientX-r.left)/r.width,cx=vb.x+f*vb.width;
  var w=Math.min(w0,Math.max(w0/2000,vb.width*(e.deltaY>0?1.25:0.8)));
  var x=Math.max(x0,Math.min(x0+w0-w,cx-f*w));
  svg.setAttribute('viewBox',x+' '+vb.y+' '+w+' '+vb.height);},{passive:false});
 svg.addEventListener('dblclick',function(){
  svg.setAttribute('viewBox',x0+' '+vb.y+' '+w0+' '+vb.height);});});
})();
)js";

}  // namespace

std::string HtmlEscape(absl::string_view text) {
  const std::string printable = EscapeForPrint(text);
  std::string out;
  out.reserve(printable.size());
  for (char c : printable) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderHtmlTable(const HtmlTable& table) {
  auto numeric = [&](size_t col) {
    return col < table.numeric.size() && table.numeric[col];
  };
  std::string out = absl::StrCat("<table class=\"sortable\" id=\"",
                                 HtmlEscape(table.id), "\"><thead><tr>");
  for (size_t c = 0; c < table.header.size(); ++c) {
    absl::StrAppend(&out, numeric(c) ? "<th class=\"num\">" : "<th>",
                    HtmlEscape(table.header[c]), "</th>");
  }
  absl::StrAppend(&out, "</tr></thead><tbody>\n");
  for (const std::vector<std::string>& row : table.rows) {
    absl::StrAppend(&out, "<tr>");
    for (size_t c = 0; c < row.size(); ++c) {
      absl::StrAppend(&out, numeric(c) ? "<td class=\"num\">" : "<td>",
                      HtmlEscape(row[c]), "</td>");
    }
    absl::StrAppend(&out, "</tr>\n");
  }
  absl::StrAppend(&out, "</tbody></table>\n");
  return out;
}

std::string RenderHtmlPage(absl::string_view title, absl::string_view subtitle,
                           const std::vector<HtmlTab>& tabs) {
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"",
      kPolicy, "\">\n<title>", HtmlEscape(title), "</title>\n<style>", kStyle,
      "</style></head>\n<body><header><h1>", HtmlEscape(title), "</h1><p>",
      HtmlEscape(subtitle), "</p><nav>");
  for (const HtmlTab& tab : tabs) {
    absl::StrAppend(&out, "<button type=\"button\" data-tab=\"",
                    HtmlEscape(tab.id), "\">", HtmlEscape(tab.title),
                    "</button>");
  }
  absl::StrAppend(&out, "</nav></header>\n");
  for (const HtmlTab& tab : tabs) {
    absl::StrAppend(&out, "<section class=\"tab\" id=\"tab-",
                    HtmlEscape(tab.id), "\">\n", tab.body_html, "</section>\n");
  }
  absl::StrAppend(&out, "<script>", kScript, "</script>\n</body></html>\n");
  return out;
}

}  // namespace et

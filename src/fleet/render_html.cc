#include <sstream>
#include <unordered_map>
#include <vector>

#include "fleet/render.h"
#include "util/html.h"
#include "util/strings.h"

namespace gp::fleet {
namespace {

// Text and attribute values: printable, and & < > " ' as entities.
std::string Esc(const std::string& s) { return HtmlEscape(s); }

std::string LowerAscii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

const char* kStyle = R"(body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.15em;margin:1.4em 0 .4em;display:inline}
.controls{margin:1em 0;display:flex;gap:1.2em;align-items:center;flex-wrap:wrap}
input,select{font:inherit;padding:.25em .4em}
table{border-collapse:collapse;background:#fff;box-shadow:0 1px 2px #0002;margin-top:.6em}
th,td{border:1px solid #ddd;padding:.3em .6em;text-align:left;white-space:nowrap}
thead th{background:#f0f0f3;position:sticky;top:0}
td.st{text-align:center;font-weight:600}
.s-ok{background:#dcf5e3;color:#135c2a}.s-warn{background:#fff1c2;color:#7a5300}
.s-fail{background:#fbd5d5;color:#8a1010}.s-skip{background:#eee;color:#666}.s-none{color:#aaa}
section.group{background:#fff;border-left:6px solid #ccc;margin:.8em 0;padding:.5em 1em;box-shadow:0 1px 2px #0002}
section.group.s-fail{border-color:#d33}section.group.s-warn{border-color:#e0a800}
section.group h3{font-size:1em;margin:.2em 0}
.badge{display:inline-block;padding:0 .5em;border-radius:.6em;font-size:.85em;text-transform:uppercase}
pre.fix{background:#f4f4f6;padding:.4em .6em;white-space:pre-wrap;margin:.3em 0}
details.hosts summary,details#hosts>summary{cursor:pointer;color:#444}
.hosts p{color:#444;margin:.3em 0;max-height:12em;overflow:auto}
details#hosts{margin-top:1.6em}[hidden]{display:none!important})";

// The filter: a host row is shown when the status selector allows its worst status and the text is in its
// row (label, os, stack, codes) or in a finding group it belongs to (code, messages); a group is shown while
// one of its hosts is. Rows, their search text and each group's rows (data-rows, row numbers) are read once;
// a change touches only the rows whose visibility changes. Typing is debounced; `#filter=TEXT&status=...`
// presets both. The time of the last pass is left in #shown's data-ms (the browser test reads it).
const char* kScript = R"((function(){
var f=document.getElementById('filter'),s=document.getElementById('status'),shown=document.getElementById('shown');
var rows=document.querySelectorAll('tr.host'),gs=document.querySelectorAll('section.group'),n=rows.length;
var text=new Array(n),st=new Array(n),vis=new Uint8Array(n),match=new Uint8Array(n),groups=[];
for(var i=0;i<n;i++){text[i]=rows[i].getAttribute('data-search');st[i]=rows[i].getAttribute('data-status');vis[i]=1;}
for(var j=0;j<gs.length;j++){var d=gs[j].getAttribute('data-rows'),m=d?d.split(' '):[],ix=new Int32Array(m.length);
for(var k=0;k<m.length;k++)ix[k]=+m[k];groups.push({el:gs[j],rows:ix,text:gs[j].getAttribute('data-search'),on:true});}
function apply(){var t0=performance.now(),q=f.value.trim().toLowerCase(),sel=s.value,c=0,g,i,j,k;
if(q){match.fill(0);for(j=0;j<groups.length;j++){g=groups[j];if(g.text.indexOf(q)>=0)for(k=0;k<g.rows.length;k++)match[g.rows[k]]=1;}}
for(i=0;i<n;i++){var d=st[i],ok=sel==='all'||(sel==='fail'&&d==='fail')||(sel==='warn'&&d!=='ok');
if(ok&&q)ok=match[i]===1||text[i].indexOf(q)>=0;if(ok)c++;if(vis[i]!==(ok?1:0)){vis[i]=ok?1:0;rows[i].hidden=!ok;}}
for(j=0;j<groups.length;j++){g=groups[j];var any=false;for(k=0;k<g.rows.length&&!any;k++)if(vis[g.rows[k]])any=true;
if(any!==g.on){g.on=any;g.el.hidden=!any;}}
if((q||sel!=='all')&&c>0&&c<=500)document.getElementById('hosts').open=true;
shown.textContent=c+' of '+n+' hosts shown';shown.setAttribute('data-ms',(performance.now()-t0).toFixed(1));}
var timer=0;function later(){clearTimeout(timer);timer=setTimeout(apply,n>2000?150:0);}
function fromHash(){var p=new URLSearchParams(location.hash.slice(1));
if(p.has('filter'))f.value=p.get('filter');if(p.has('status'))s.value=p.get('status');}
f.addEventListener('input',later);s.addEventListener('change',apply);
window.addEventListener('hashchange',function(){fromHash();apply();});
fromHash();apply();})();)";

constexpr size_t kOpenTableUpTo = 200;  // hosts: more than this and the table starts folded away

void WriteGroup(std::ostream& o, const Group& g, const std::vector<size_t>& rows) {
  std::string search = g.code;
  for (const auto& m : g.messages) search += " " + m;
  o << "<section class=\"group s-" << Esc(g.status) << "\" data-code=\"" << Esc(g.code) << "\" data-search=\""
    << Esc(LowerAscii(search)) << "\" data-rows=\"";
  for (size_t i = 0; i < rows.size(); ++i) o << (i ? " " : "") << rows[i];
  o << "\">\n<h3><span class=\"badge s-" << Esc(g.status) << "\">" << Esc(g.status) << "</span> <code>"
    << Esc(g.code) << "</code> &middot; " << g.hosts.size() << " host" << (g.hosts.size() == 1 ? "" : "s")
    << "</h3>\n<ul>";
  for (const auto& m : g.messages) o << "<li>" << Esc(m) << "</li>";
  o << "</ul>\n";
  for (const auto& f : g.fixes) o << "<pre class=\"fix\">" << Esc(f) << "</pre>\n";
  o << "<details class=\"hosts\"><summary>" << g.hosts.size() << " host" << (g.hosts.size() == 1 ? "" : "s")
    << "</summary><p>";
  for (size_t i = 0; i < g.hosts.size(); ++i) o << (i ? ", " : "") << Esc(g.hosts[i]);
  o << "</p></details>\n</section>\n";
}

void WriteHostRow(std::ostream& o, const Report& r, const Host& h) {
  std::string search = h.label + " " + h.os + " " + h.manifest;
  for (const auto& f : h.findings) search += " " + f.code;
  std::vector<std::string> gpu_ids;
  for (const auto& g : h.gpus)
    gpu_ids.push_back(g.name + " " + (g.uuid.empty() ? g.serial.empty() ? g.pci : g.serial : g.uuid));
  o << "<tr class=\"host\" data-status=\"" << Esc(h.worst) << "\" data-label=\"" << Esc(h.label)
    << "\" data-search=\"" << Esc(LowerAscii(search)) << "\"><th scope=\"row\" title=\"" << Esc(h.file)
    << (h.machine_id.empty() ? "" : " machine-id " + Esc(h.machine_id)) << "\">" << Esc(h.label)
    << "</th><td>" << Esc(h.os) << "</td><td title=\"" << Esc(Join(gpu_ids, "; ")) << "\">" << h.gpus.size()
    << "</td>";
  for (const auto& l : r.layers) {
    auto it = h.layers.find(l);
    if (it == h.layers.end()) {
      o << "<td class=\"st s-none\">-</td>";
      continue;
    }
    std::string title;
    for (const auto& f : h.findings)
      if (f.layer == l) title += (title.empty() ? "" : "\n") + f.code + ": " + f.message;
    o << "<td class=\"st s-" << Esc(it->second) << "\""
      << (title.empty() ? "" : " title=\"" + Esc(title) + "\"") << ">" << Esc(it->second) << "</td>";
  }
  o << "</tr>\n";
}

}  // namespace

void RenderHtml(const Report& r, std::ostream& o) {
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'; "
       "script-src 'unsafe-inline'\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>gpuprep fleet report: " << r.hosts.size() << " hosts</title>\n<style>" << kStyle
    << "</style></head>\n<body>\n<h1>gpuprep fleet report</h1>\n<p id=\"summary\">" << r.hosts.size()
    << " hosts: <b>" << r.failing << " failing</b>, " << r.warning << " with warnings, " << r.ok
    << " ok</p>\n"
    << "<div class=\"controls\"><label>Filter <input id=\"filter\" type=\"search\" "
       "placeholder=\"host, code or text\" autocomplete=\"off\"></label>\n"
    << "<label>Show <select id=\"status\"><option value=\"all\">all hosts</option>"
       "<option value=\"fail\">failing</option><option value=\"warn\">failing or "
       "warning</option></select></label>\n"
    << "<span id=\"shown\"></span></div>\n<h2>Findings by code</h2>\n";
  if (r.groups.empty()) o << "<p id=\"no-findings\">No warnings or failures.</p>\n";
  // Each group's hosts as row numbers (labels are unique: BuildReport made them so).
  std::unordered_map<std::string, size_t> row;
  for (size_t i = 0; i < r.hosts.size(); ++i) row.emplace(r.hosts[i].label, i);
  std::vector<size_t> rows;
  for (const auto& g : r.groups) {
    rows.clear();
    for (const auto& label : g.hosts) rows.push_back(row[label]);
    WriteGroup(o, g, rows);
  }
  o << "<details id=\"hosts\"" << (r.hosts.size() <= kOpenTableUpTo ? " open" : "")
    << "><summary><h2>Hosts</h2> (" << r.hosts.size()
    << ")</summary>\n<table><thead><tr><th>host</th><th>os</th><th>GPUs</th>";
  for (const auto& l : r.layers) o << "<th>" << Esc(l) << "</th>";
  o << "</tr></thead>\n<tbody>\n";
  for (const auto& h : r.hosts) WriteHostRow(o, r, h);
  o << "</tbody></table></details>\n<script>" << kScript << "</script>\n</body></html>\n";
}

std::string RenderHtml(const Report& r) {
  std::ostringstream o;
  RenderHtml(r, o);
  return o.str();
}

}  // namespace gp::fleet

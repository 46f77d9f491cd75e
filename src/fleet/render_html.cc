#include <sstream>

#include "fleet/render.h"
#include "util/strings.h"

namespace gp::fleet {
namespace {

// Text and attribute values: printable, and & < > " ' as entities.
std::string Esc(const std::string& s) {
  std::string out;
  for (char c : Printable(s)) {
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

std::string LowerAscii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

const char* kStyle = R"(body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.15em;margin-top:1.6em}
.controls{margin:1em 0;display:flex;gap:1.2em;align-items:center;flex-wrap:wrap}
input,select{font:inherit;padding:.25em .4em}
table{border-collapse:collapse;background:#fff;box-shadow:0 1px 2px #0002}
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
.hosts{color:#444}[hidden]{display:none!important})";

// Filters rows by the text box (host, os, codes, messages) and the status selector; a finding group is
// shown while one of its hosts is. `#filter=TEXT&status=fail|warn|all` in the URL presets both.
const char* kScript = R"((function(){
var f=document.getElementById('filter'),s=document.getElementById('status');
function apply(){
var q=f.value.trim().toLowerCase(),st=s.value,rows=document.querySelectorAll('tr.host'),vis={},n=0;
for(var i=0;i<rows.length;i++){var r=rows[i],d=r.getAttribute('data-status');
var ok=st==='all'||(st==='fail'&&d==='fail')||(st==='warn'&&d!=='ok');
if(ok&&q)ok=r.getAttribute('data-search').indexOf(q)>=0;
r.hidden=!ok;if(ok){n++;vis[r.getAttribute('data-label')]=1;}}
var gs=document.querySelectorAll('section.group');
for(var j=0;j<gs.length;j++){var hs=gs[j].getAttribute('data-hosts').split('\n'),any=false;
for(var k=0;k<hs.length;k++)if(vis[hs[k]])any=true;gs[j].hidden=!any;}
document.getElementById('shown').textContent=n+' of '+rows.length+' hosts shown';}
function fromHash(){var p=new URLSearchParams(location.hash.slice(1));
if(p.has('filter'))f.value=p.get('filter');if(p.has('status'))s.value=p.get('status');}
f.addEventListener('input',apply);s.addEventListener('change',apply);
window.addEventListener('hashchange',function(){fromHash();apply();});
fromHash();apply();})();)";

}  // namespace

std::string RenderHtml(const Report& r) {
  std::ostringstream o;
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
    << "<span id=\"shown\"></span></div>\n"
    << "<table id=\"hosts\"><thead><tr><th>host</th><th>os</th><th>GPUs</th>";
  for (const auto& l : r.layers) o << "<th>" << Esc(l) << "</th>";
  o << "</tr></thead>\n<tbody>\n";
  for (const auto& h : r.hosts) {
    std::string search = h.label + " " + h.os + " " + h.manifest;
    for (const auto& f : h.findings) search += " " + f.code + " " + f.message;
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
  o << "</tbody></table>\n<h2>Findings by code</h2>\n";
  if (r.groups.empty()) o << "<p id=\"no-findings\">No warnings or failures.</p>\n";
  for (const auto& g : r.groups) {
    o << "<section class=\"group s-" << Esc(g.status) << "\" data-code=\"" << Esc(g.code)
      << "\" data-hosts=\"";
    for (size_t i = 0; i < g.hosts.size(); ++i) o << (i ? "&#10;" : "") << Esc(g.hosts[i]);
    o << "\">\n<h3><span class=\"badge s-" << Esc(g.status) << "\">" << Esc(g.status) << "</span> <code>"
      << Esc(g.code) << "</code> &middot; " << g.hosts.size() << " host" << (g.hosts.size() == 1 ? "" : "s")
      << "</h3>\n<p class=\"hosts\">";
    for (size_t i = 0; i < g.hosts.size(); ++i) o << (i ? ", " : "") << Esc(g.hosts[i]);
    o << "</p>\n<ul>";
    for (const auto& m : g.messages) o << "<li>" << Esc(m) << "</li>";
    o << "</ul>\n";
    for (const auto& f : g.fixes) o << "<pre class=\"fix\">" << Esc(f) << "</pre>\n";
    o << "</section>\n";
  }
  o << "<script>" << kScript << "</script>\n</body></html>\n";
  return o.str();
}

}  // namespace gp::fleet

#include "accept/burn.h"

#include <cstdio>
#include <map>
#include <utility>

#include "accept/format.h"

namespace gp::accept {
namespace {

std::string DigestText(int64_t v) { return std::to_string(v); }

Check BurnCheck(const char* name, int gpu) {
  Check c;
  c.group = "burn";
  c.name = name;
  c.gpu = gpu;
  return c;
}

Check CpuCheck(const Burn& b) {
  Check c = BurnCheck("cpu check", b.gpu);
  c.found =
      DigestText(b.check_values - b.check_wrong) + " of " + DigestText(b.check_values) + " values equal";
  c.expected = "the CPU's product";
  if (b.check_wrong > 0) {
    c.status = Status::kFail;
    c.reason = "its small product differs from the CPU's in " + DigestText(b.check_wrong) + " of " +
               DigestText(b.check_values) + " values: this GPU computes wrong results";
  }
  return c;
}

// GPUs whose products can be compared bit for bit: the same SM count (cuBLAS's condition) and product size.
using BurnPeers = std::pair<int, int64_t>;
BurnPeers BurnPeersOf(const Burn& b) { return {b.sm_count.value_or(-1), b.size}; }

std::string SmCountText(const Burn& b) {
  return b.sm_count ? std::to_string(*b.sm_count) + " SMs" : "its kind";
}
std::string SameSmText(const Burn& b) {
  return b.sm_count ? "the same " + SmCountText(b) : "the same kind of device";
}

// The digest most GPUs of a group share (among those whose own products agreed), or nullopt on a tie.
std::optional<int64_t> ReferenceDigest(const std::vector<const Burn*>& group) {
  std::map<int64_t, int> count;
  for (const Burn* b : group)
    if (b->mismatches == 0 && b->check_wrong == 0) ++count[b->digest];
  std::optional<int64_t> best;
  int most = 0;
  bool tie = false;
  for (const auto& [digest, n] : count) {
    if (n > most) {
      best = digest;
      most = n;
      tie = false;
    } else if (n == most) {
      tie = true;
    }
  }
  if (tie) return std::nullopt;
  return best;
}

std::string GpusWith(const std::vector<const Burn*>& group, const Burn& except,
                     std::optional<int64_t> digest) {
  std::string out;
  for (const Burn* b : group)
    if (b != &except && (!digest || b->digest == *digest))
      out += (out.empty() ? "" : ", ") + std::to_string(b->gpu);
  return out;
}

Check DigestCheck(const Burn& b, const std::vector<const Burn*>& group) {
  Check c = BurnCheck("digest", b.gpu);
  c.found = std::to_string(b.iterations) + " products, digest " + DigestText(b.digest);
  if (b.mismatches > 0) {
    c.status = Status::kFail;
    c.expected = "every product equal to its first";
    c.reason = "at iteration " + std::to_string(*b.first_mismatch_iteration) + " its product's digest was " +
               DigestText(*b.first_mismatch_digest) + ", its first product's " + DigestText(b.digest) + " (" +
               std::to_string(b.mismatches) + " of " + std::to_string(b.iterations) +
               " products differ): this GPU computes wrong results";
    return c;
  }
  if (group.size() < 2) {
    c.expected = "equal to its first product (no other GPU has " + SmCountText(b) + ")";
    return c;
  }
  const std::optional<int64_t> ref = ReferenceDigest(group);
  c.expected = "equal to GPU " + GpusWith(group, b, std::nullopt) + " (" + SameSmText(b) + ")";
  if (!ref) {
    c.status = Status::kFail;
    std::string all;
    for (const Burn* o : group)
      all += (all.empty() ? "" : ", ") + ("GPU " + std::to_string(o->gpu) + " " + DigestText(o->digest));
    c.reason = "the GPUs with " + SameSmText(b) + " disagree and no digest is held by most: " + all;
  } else if (b.digest != *ref) {
    c.status = Status::kFail;
    c.reason = "at iteration 0 its product's digest was " + DigestText(b.digest) + ", that of GPU " +
               GpusWith(group, b, ref) + " (" + SameSmText(b) + ") " + DigestText(*ref) +
               ": this GPU computes wrong results";
  }
  return c;
}

// Reasons that are no finding: an idle GPU, the software power cap (a GPU at its power limit), clocks set by
// the administrator. Any other reason the burn saw is one, with the share of the burn it held.
bool BenignReason(const std::string& r) {
  return r == "gpu_idle" || r == "sw_power_cap" || r == "applications_clocks";
}

std::string Share(double v) {
  const double pct = v * 100;
  char buf[32];
  std::snprintf(buf, sizeof buf, pct > 0 && pct < 1 ? "%.1f%%" : "%.0f%%", pct);
  return buf;
}

Check ClocksCheck(const BurnClocks& b) {
  Check c = BurnCheck("clocks", b.gpu);
  std::string found = std::to_string(b.samples) + " readings";
  if (b.sm_clock_median_mhz)
    found += "; SM clock median " + DigestText(*b.sm_clock_median_mhz) + " MHz, min " +
             DigestText(*b.sm_clock_min_mhz) + " MHz";
  if (b.power_median_w)
    found += "; power median " + FormatFigure(*b.power_median_w) + " W, max " + FormatFigure(*b.power_max_w) +
             " W";
  if (b.temperature_median_c)
    found += "; temperature median " + FormatFigure(*b.temperature_median_c) + " C, max " +
             FormatFigure(*b.temperature_max_c) + " C";
  std::string held, findings;
  for (const auto& [reason, share] : b.reasons) {
    if (share <= 0) continue;
    held += (held.empty() ? "" : ", ") + reason + " " + Share(share);
    if (!BenignReason(reason))
      findings += (findings.empty() ? "" : ", ") + reason + " held " + Share(share) + " of the burn";
  }
  c.found = found + (held.empty() ? "" : "; reasons: " + held);
  c.expected = "no clock-event reason but idle, the software power cap or application clocks";
  if (!findings.empty()) {
    c.status = Status::kFail;
    c.reason = findings;
  }
  return c;
}

Check XidCheck(const BurnClocks& b, const BurnXid& x) {
  Check c = BurnCheck("xid", b.gpu);
  c.found = "Xid " + DigestText(x.code);
  c.status = Status::kFail;
  c.reason = "the driver logged Xid " + DigestText(x.code) + " for this GPU " + FormatFigure(x.at_s) +
             " s into the burn (the kernel log); gpuprep doctor --health names its fix";
  return c;
}

}  // namespace

std::vector<Check> BurnChecks(const Recording& rec) {
  std::vector<Check> out;
  for (const auto& b : rec.burn_clocks) {
    out.push_back(ClocksCheck(b));
    for (const auto& x : b.xids) out.push_back(XidCheck(b, x));
  }
  if (rec.burns.empty()) return out;
  std::map<int, const Burn*> by_gpu;
  std::map<BurnPeers, std::vector<const Burn*>> groups;
  for (const auto& b : rec.burns) {
    by_gpu[b.gpu] = &b;
    groups[BurnPeersOf(b)].push_back(&b);
  }
  for (const auto& g : rec.gpus) {
    auto it = by_gpu.find(g.index);
    if (it == by_gpu.end()) {
      Check c = BurnCheck("digest", g.index);
      c.status = Status::kFail;
      c.reason = "no burn result from this GPU";
      out.push_back(c);
      continue;
    }
    out.push_back(CpuCheck(*it->second));
    out.push_back(DigestCheck(*it->second, groups[BurnPeersOf(*it->second)]));
  }
  return out;
}

}  // namespace gp::accept

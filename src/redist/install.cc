#include "redist/install.h"

#include <cstdio>
#include <exception>
#include <thread>

#include "redist/error.h"
#include "redist/paths.h"
#include "redist/pipe.h"
#include "redist/redistrib.h"
#include "sys/archive.h"
#include "sys/sha256.h"
#include "sys/tree.h"
#include "sys/writeback.h"
#include "util/strings.h"

namespace gp::redist {
namespace {

std::string Parent(const std::string& p) { return p.substr(0, p.rfind('/')); }
std::string Base(const std::string& p) { return p.substr(p.rfind('/') + 1); }

void Sleep(const InstallOptions& opt, std::chrono::milliseconds d) {
  if (opt.sleep)
    opt.sleep(d);
  else
    std::this_thread::sleep_for(d);
}

// Why an extraction stopped, for the user: which bound it hit and what the bound was.
std::string Refusal(const sys::ExtractResult& x, const RedistArchive& a, const UnpackLimit& limit,
                    const std::string& dir) {
  if (x.over == sys::ExtractResult::Over::kBytes)
    return "refused: it unpacks to " + x.error +
           (limit.by_space
                ? ", and that is all the space free on " + dir + " less the " + std::to_string(kKeepFree) +
                      " bytes kept free"
                : ", and " + std::to_string(kUnpackRatio) + " times the archive's " + std::to_string(a.size) +
                      " bytes is the most accepted (a decompression bomb?)");
  if (x.over == sys::ExtractResult::Over::kEntries)
    return "refused: it holds " + x.error + ", the most accepted in one archive";
  return x.error;
}

// Starts the extraction thread of StreamArchive: it decodes what arrives in `pipe` into `staging`, each
// entry placed under the archive's top directory and each written file kicked to `writeback`, and records
// the outcome in `extracted`.
std::thread StartUnpack(BytePipe& pipe, const RedistArchive& a, const std::string& staging,
                        const UnpackLimit& limit, sys::Writeback& writeback, sys::ExtractResult& extracted) {
  return std::thread([&pipe, &a, &staging, &limit, &writeback, &extracted] {
    sys::ArchiveInput input = [&](const void** data) -> long { return pipe.Read(data); };
    ArchivePlacement placement(a.top_dir);
    sys::ArchivePlacer place = [&](const sys::ArchiveEntry& e, std::string& rel, std::string& rel_link) {
      return placement.Place(e, rel, rel_link);
    };
    sys::ArchiveWritten written = [&](const std::string& path) { writeback.Kick(path); };
    try {
      extracted = sys::ExtractTar(input, staging, place, written, {limit.bytes, kMaxEntries});
    } catch (const std::exception& e) {
      extracted.error = e.what();
    }
    pipe.Finish(!extracted.ok());
  });
}

// The download side of StreamArchive: fetches `url` (resuming after retryable failures), hashes each piece
// and pushes it into `pipe`. Sets `got` to the bytes received and `sha_hex` to their digest (on success);
// returns the error, "stopped" when the extraction side stopped the transfer, "" when none.
std::string DownloadArchive(sys::HttpClient& http, const std::string& url, const RedistArchive& a,
                            const InstallOptions& opt, BytePipe& pipe, InstallResult& result, uint64_t& got,
                            std::string& sha_hex) {
  std::string error;
  bool too_big = false;
  uint64_t percent = 0;
  try {
    sys::Sha256 sha;
    auto backoff = opt.backoff;
    for (int attempt = 1;; ++attempt) {
      sys::StreamRequest r;
      r.url = url;
      r.offset = got;
      r.ca_file = opt.ca_file;
      r.on_data = [&](const char* d, size_t n) {
        if (got + n > a.size) {
          too_big = true;
          return false;
        }
        sha.Update(d, n);
        got += n;
        if (opt.bytes && a.size > 0 && got * 100 / a.size != percent) {
          percent = got * 100 / a.size;
          opt.bytes(Base(a.relative_path), got, a.size);
        }
        return pipe.Push(d, n);
      };
      sys::StreamResult res = http.Stream(r);
      result.bytes += res.bytes;
      if (res.ok()) break;
      if (res.stopped) {
        error = too_big
                    ? url + ": larger than the " + std::to_string(a.size) + " bytes the redistrib JSON gives"
                    : "stopped";
        break;
      }
      if (!res.retryable || attempt >= opt.attempts) {
        error = "cannot download " + url + ": " + res.error +
                (attempt > 1 ? " (after " + std::to_string(attempt) + " tries)" : "");
        break;
      }
      if (opt.progress)
        opt.progress(url + ": " + res.error + " at byte " + std::to_string(got) + "; resuming in " +
                     std::to_string(backoff.count()) + " ms");
      Sleep(opt, backoff);
      backoff *= 2;
      ++result.resumes;
    }
    if (error.empty()) sha_hex = sha.FinalHex();
  } catch (const std::exception& e) {
    error = e.what();
  }
  return error;
}

// StreamArchive's verdict once both sides are done: "" when the archive arrived whole, with its digest, and
// unpacked into at least one entry; else the first problem.
std::string ArchiveVerdict(const std::string& url, const RedistArchive& a, const std::string& error,
                           uint64_t got, const std::string& sha_hex, const sys::ExtractResult& extracted,
                           const std::string& refused) {
  // An entry refused (or a corrupt stream) mid-download is why the transfer stopped: say that. Otherwise the
  // transfer, the size and the digest come first; a clean digest with a broken archive last.
  if (error == "stopped" && !extracted.ok()) return url + ": " + refused + "; nothing was installed";
  if (!error.empty()) return error + "; nothing was installed";
  if (got != a.size)
    return url + ": truncated: " + std::to_string(got) + " of " + std::to_string(a.size) +
           " bytes; nothing was installed";
  if (sha_hex != a.sha256)
    return url + ": sha256 mismatch: downloaded " + sha_hex + ", the redistrib JSON gives " + a.sha256 +
           "; nothing was installed";
  if (!extracted.ok()) return url + ": " + refused + "; nothing was installed";
  if (extracted.entries == 0) return url + ": the archive is empty; nothing was installed";
  return "";
}

// One archive, three threads: this one downloads (with resumes) and hashes each piece as it arrives, then
// copies it into the pipe; the extraction thread decodes xz and writes files into `staging`; `writeback`
// starts the disk writes of finished (and large, growing) files meanwhile.
std::string StreamArchive(sys::HttpClient& http, const std::string& url, const RedistArchive& a,
                          const std::string& staging, const InstallOptions& opt, sys::Writeback& writeback,
                          InstallResult& result) {
  BytePipe pipe;
  sys::ExtractResult extracted;
  const UnpackLimit limit = UnpackLimitFor(a.size, sys::FreeBytes(staging));
  std::thread reader = StartUnpack(pipe, a, staging, limit, writeback, extracted);

  uint64_t got = 0;
  std::string sha_hex;
  const std::string error = DownloadArchive(http, url, a, opt, pipe, result, got, sha_hex);
  pipe.Close(!error.empty());
  reader.join();
  result.unpacked += extracted.bytes;
  const std::string refused = extracted.ok() ? "" : Refusal(extracted, a, limit, Parent(staging));
  return ArchiveVerdict(url, a, error, got, sha_hex, extracted, refused);
}

}  // namespace

UnpackLimit UnpackLimitFor(uint64_t archive_size, std::optional<uint64_t> free_bytes) {
  UnpackLimit out;
  out.bytes = archive_size > UINT64_MAX / kUnpackRatio ? UINT64_MAX : archive_size * kUnpackRatio;
  if (free_bytes) {
    const uint64_t usable = *free_bytes > kKeepFree ? *free_bytes - kKeepFree : 0;
    if (usable < out.bytes) out = {usable, true};
  }
  return out;
}

namespace {
// 300 ms -> "0.3 s", 60000 ms -> "60 s".
std::string DeadlineText(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}
}  // namespace

std::string FetchSmall(sys::HttpClient& http, const std::string& url, const InstallOptions& opt,
                       size_t max_bytes, std::string& error) {
  std::string body;
  auto backoff = opt.backoff;
  const auto deadline = std::chrono::steady_clock::now() + opt.fetch_deadline;
  bool late = false;
  const std::string late_error = url + ": not received within " + DeadlineText(opt.fetch_deadline);
  for (int attempt = 1;; ++attempt) {
    body.clear();
    bool too_big = false;
    sys::StreamRequest r;
    r.url = url;
    r.ca_file = opt.ca_file;
    r.on_data = [&](const char* d, size_t n) {
      if (std::chrono::steady_clock::now() > deadline) {
        late = true;
        return false;
      }
      if (body.size() + n > max_bytes) {
        too_big = true;
        return false;
      }
      body.append(d, n);
      return true;
    };
    sys::StreamResult res = http.Stream(r);
    if (late || (!res.ok() && std::chrono::steady_clock::now() > deadline)) {
      error = late_error;
      return "";
    }
    if (res.ok()) return body;
    if (too_big) {
      error = url + ": larger than " + std::to_string(max_bytes) + " bytes";
      return "";
    }
    if (!res.retryable || attempt >= opt.attempts) {
      error = "cannot download " + url + ": " + res.error;
      return "";
    }
    Sleep(opt, backoff);
    backoff *= 2;
  }
}

namespace {

// The redistrib JSON of `req`, checked against its pinned digest, and the archive of each component in it;
// the error ("" when none) when the JSON cannot be had or names no suitable archive.
std::string FindArchives(const Request& req, sys::HttpClient& http, const InstallOptions& opt,
                         std::vector<RedistArchive>& archives) {
  std::string error;
  const std::string json = FetchSmall(http, req.json_url, opt, 16u << 20, error);
  if (!error.empty()) return error;
  if (!req.json_sha256.empty()) {
    const std::string got = sys::Sha256Hex(json);
    if (got != req.json_sha256)
      return req.json_url + ": sha256 mismatch: downloaded " + got + ", the stack pins " + req.json_sha256 +
             "; nothing was installed";
  }
  try {
    for (const auto& comp : req.components) {
      RedistArchive a = FindArchive(json, comp, req.platform, req.cuda_major);
      const std::string problem = VersionProblem(a, req.layer, req.version);
      if (!problem.empty()) throw RedistError(problem);
      archives.push_back(a);
    }
  } catch (const RedistError& e) {
    return req.json_url + ": " + e.what() + "; nothing was installed";
  }
  return "";
}

// Staging trees of a run that was killed (power cut, SIGKILL) are hidden but take space: remove them.
// apply holds its lock, so no other install is writing one now.
void RemoveStaleTrees(const Request& req, sys::Fs& fs, const InstallOptions& opt, const std::string& parent,
                      const std::string& hparent) {
  for (const auto& name : fs.List(parent))
    if (StartsWith(name, "." + Base(req.prefix) + ".partial.") ||
        StartsWith(name, "." + Base(req.prefix) + ".old."))
      if (auto r = sys::RemoveTree(hparent + "/" + name); !r.ok && opt.progress) opt.progress(r.error);
}

// Removes the tree `dir`; `why` with the removal's own error appended when that fails (the next run removes
// what is left).
std::string DiscardTree(const std::string& dir, std::string why) {
  if (auto r = sys::RemoveTree(dir); !r.ok) why += "; " + r.error;
  return why;
}

// The earlier tree, once out of the way: its removal failing leaves a hidden tree the next run removes.
void RetireTree(const std::string& dir, const InstallOptions& opt) {
  if (auto r = sys::RemoveTree(dir); !r.ok && opt.progress) opt.progress(r.error);
}

// Every archive streamed into `staging`, then the tree checked, opened to 0755 and made durable; the error
// ("" when none).
std::string UnpackArchives(const Request& req, sys::Fs& fs, sys::HttpClient& http, const InstallOptions& opt,
                           const std::vector<RedistArchive>& archives, const std::string& parent,
                           const std::string& staging, sys::Writeback& writeback, InstallResult& out) {
  for (const auto& a : archives) {
    if (opt.progress)
      opt.progress("downloading " + a.relative_path + " (" + std::to_string(a.size) + " bytes)");
    std::string error =
        StreamArchive(http, req.archive_base + a.relative_path, a, staging, opt, writeback, out);
    if (!error.empty()) return error;
  }
  writeback.Drain();
  if (!fs.IsDir(parent + "/" + Base(staging) + "/lib"))
    return req.json_url + ": the archives hold no lib/ directory; nothing was installed";
  if (auto m = sys::SetDirMode(staging, 0755); !m.ok) return m.error + "; nothing was installed";
  // Every file and directory of the tree on disk before it becomes visible (most pages are already written
  // out by `writeback`); the renames below fsync their parent directories.
  if (auto s = sys::SyncTree(staging); !s.ok) return s.error;
  return "";
}

// Puts the verified tree at `staging` in the place of the prefix (`name` in `hparent`); the error ("" when
// none), after which the caller removes `staging`.
std::string SwapInTree(const Request& req, sys::Fs& fs, const InstallOptions& opt, const std::string& hparent,
                       const std::string& staging, const std::string& name) {
  const std::string host_prefix = hparent + "/" + name;
  if (fs.Exists(req.prefix) || fs.ReadLink(req.prefix)) {
    // The same version again (a damaged tree, a removed loader entry): the new tree and the old one trade
    // names in one rename, so `current`, which may point at this very name, never dangles. The old tree is
    // then at the staging name and goes.
    bool unsupported = false;
    auto x = sys::ExchangeDirs(staging, host_prefix, unsupported);
    if (!x.ok && !unsupported) return x.error + "; nothing was installed";
    if (!x.ok) {
      // A filesystem without RENAME_EXCHANGE: the old tree is moved aside and the new one renamed in, so
      // `current` dangles between two renames.
      std::string error;
      std::string aside = sys::MakeTempDir(hparent, "." + name + ".old", error);
      if (aside.empty() || !sys::RenameDir(host_prefix, aside + "/tree").ok) {
        std::string why = "cannot move the earlier " + req.prefix + " aside; nothing was installed";
        if (!aside.empty()) why = DiscardTree(aside, why);
        return why;
      }
      auto r = sys::RenameDir(staging, host_prefix);
      if (!r.ok) {  // put the old tree back
        sys::RenameDir(aside + "/tree", host_prefix);
        return DiscardTree(aside, r.error + "; nothing was installed");
      }
      RetireTree(aside, opt);
    } else {
      RetireTree(staging, opt);
    }
  } else if (auto r = sys::RenameDir(staging, host_prefix); !r.ok) {
    return r.error + "; nothing was installed";
  }
  return "";
}

InstallResult InstallOnce(const Request& req, sys::Fs& fs, sys::HttpClient& http, const InstallOptions& opt) {
  InstallResult out;
  out.prefix = req.prefix;
  std::vector<RedistArchive> archives;
  std::string error = FindArchives(req, http, opt, archives);
  if (!error.empty()) return out.error = error, out;

  const std::string parent = Parent(req.prefix);
  auto made = fs.MakeDirs(parent, 0755);
  if (!made.ok) return out.error = made.error, out;
  // Host paths built from the parent's, so that neither `current` nor the prefix is followed if a link.
  const std::string hparent = fs.HostPath(parent);
  RemoveStaleTrees(req, fs, opt, parent, hparent);
  // 0700 while it holds what is not yet verified; the tree's own modes from the archive.
  const std::string staging = sys::MakeTempDir(hparent, "." + Base(req.prefix) + ".partial", error, 0700);
  if (staging.empty()) return out.error = error, out;
  // Every failure from here on removes the staging tree; a removal that fails is part of the error (the next
  // run removes what is left).
  auto fail = [&](const std::string& why) {
    out.error = DiscardTree(staging, why);
    return out;
  };
  sys::Writeback writeback;
  error = UnpackArchives(req, fs, http, opt, archives, parent, staging, writeback, out);
  if (!error.empty()) return fail(error);
  if (auto prev = fs.ReadLink(req.current_link)) out.previous = *prev;
  const std::string name = Base(req.prefix);
  if (Parent(req.current_link) != parent)
    return fail(req.current_link + " is not beside " + req.prefix + "; nothing was installed");
  error = SwapInTree(req, fs, opt, hparent, staging, name);
  if (!error.empty()) return fail(error);
  if (auto r = sys::SwitchSymlink(hparent + "/" + Base(req.current_link), name); !r.ok)
    return out.error = r.error, out;
  // Every other version stays where it is: teams may run several side by side (LD_LIBRARY_PATH on a versioned
  // prefix), and the one `current` pointed at before is a rollback away. Removing one is the owner's choice.
  // The loader entry names `current`, not a version: after a switch it usually says already what it should.
  const std::string ldconf = LdConfText(req.current_link);
  if (fs.Read(req.ldconf_path) == ldconf) return out;
  auto w = fs.WriteAtomic(req.ldconf_path, ldconf, 0644, true);
  if (!w.ok) return out.error = w.error, out;
  return out;
}

}  // namespace

InstallResult Install(const Request& req, sys::Fs& fs, sys::HttpClient& http, const InstallOptions& opt) {
  // The directories this run creates above the prefix (/opt/gpuprep, /opt/gpuprep/cudnn) go again when it
  // fails.
  std::vector<std::string> created;
  for (std::string d = Parent(req.prefix); !d.empty() && !fs.IsDir(d); d = Parent(d)) created.push_back(d);
  InstallResult out;
  try {
    out = InstallOnce(req, fs, http, opt);
  } catch (const std::exception& e) {  // libcrypto or libarchive missing, out of memory
    out.prefix = req.prefix;
    out.error = std::string(e.what()) + "; nothing was installed";
  }
  if (!out.ok())
    for (const auto& d : created) sys::RemoveIfEmpty(fs.HostPath(d));
  return out;
}

}  // namespace gp::redist

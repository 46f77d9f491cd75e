// Property: whatever strings a plan carries (a hostile manifest's names, URLs, titles, file contents),
// `plan --format sh` is a script bash accepts (`bash -n`), and running it runs exactly the planned argv
// vectors, with the planned environment, writes exactly the planned contents, and nothing else.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <sstream>

#include "apply/harness.h"
#include "plan/plan.h"
#include "plan/render.h"
#include "sys/process.h"
#include "util/strings.h"

using namespace gp;

namespace {

// Pieces that break naive quoting: every shell metacharacter, command substitution, heredoc markers,
// comment and line breaks, terminal escapes, non-ASCII.
std::vector<std::string> Fragments(const std::string& marker) {
  return {"\n",
          "\r",
          "'",
          "\"",
          "\\",
          "$",
          "`",
          ";",
          "&",
          "|",
          "(",
          ")",
          "<",
          ">",
          "*",
          "?",
          "[",
          "]",
          "{a,b}",
          "~",
          "#",
          "!",
          " ",
          "\t",
          "=",
          "%",
          "-",
          "--x",
          "$(touch " + marker + ")",
          "`touch " + marker + "`",
          "';touch " + marker + ";'",
          "\";touch " + marker + ";\"",
          "\ntouch " + marker + "\n",
          "GPUPREP_EOF",
          "\nGPUPREP_EOF\ntouch " + marker + "\n",
          "$HOME",
          "${IFS}",
          "\x1b[2J",
          "\x7f",
          "\xc3\xa9",
          "a",
          "b",
          "0"};
}

std::string Hostile(std::mt19937& rng, const std::vector<std::string>& parts, size_t max_parts) {
  std::uniform_int_distribution<size_t> count(0, max_parts), pick(0, parts.size() - 1);
  std::string out;
  for (size_t n = count(rng); n > 0; --n) out += parts[pick(rng)];
  return out;
}

// A stand-in command: appends "ENV\x01ARG1\x01ARG2...\x02" to its log (\x01 and \x02 are never generated).
const char* kRecorder =
    "#!/bin/bash\n"
    "{ printf '%s' \"${GP_PROP_ENV-unset}\"; for a in \"$@\"; do printf '\\001%s' \"$a\"; done; printf "
    "'\\002'; }"
    " >> \"$GP_PROP_LOG\"\n";

std::string Expected(const std::string& env, const std::vector<std::string>& args) {
  std::string out = env;
  for (const auto& a : args) out += "\x01" + a;
  return out + "\x02";
}

}  // namespace

TEST_CASE("plan --format sh: hostile values never escape their quotes", "[plan][property]") {
  test::TempRoot dir;
  const std::string base = dir.path();
  const std::string marker = base + "/PWNED";
  const std::string log = base + "/calls.log";
  {
    std::ofstream rec(base + "/rec");
    rec << kRecorder;
  }
  REQUIRE(::chmod((base + "/rec").c_str(), 0755) == 0);
  const auto parts = Fragments(marker);
  std::mt19937 rng(20240611);  // fixed seed: a failure reproduces
  sys::RealCommandRunner runner;

  // 20 rounds of 3 steps: each fragment lands in every kind of field many times over (about 3,600 picks of 43
  // fragments); each round costs two dozen process starts, the test's whole time.
  for (int round = 0; round < 20; ++round) {
    INFO("round " << round);
    plan::Plan p;
    p.stack = Hostile(rng, parts, 6);
    p.manifest = Hostile(rng, parts, 6);
    plan::LayerDecision l;
    l.name = Hostile(rng, parts, 4);
    l.detail = Hostile(rng, parts, 8);
    p.layers.push_back(l);
    std::string expected;
    std::vector<std::pair<std::string, std::string>> writes;
    for (int s = 0; s < 3; ++s) {
      plan::Step step;
      step.id = Hostile(rng, parts, 4);
      step.title = Hostile(rng, parts, 8);
      std::vector<std::string> argv = {"rec"};
      for (int k = 0; k < 4; ++k) argv.push_back(Hostile(rng, parts, 5));
      const std::string env = Hostile(rng, parts, 5);
      step.actions.push_back(plan::Action::Run(argv, {{"GP_PROP_ENV", env}}));
      expected += Expected(env, {argv.begin() + 1, argv.end()});
      const std::string path = base + "/out" + std::to_string(s);
      const std::string contents = Hostile(rng, parts, 10);
      step.actions.push_back(plan::Action::Write(path, contents, 0600, false));
      writes.emplace_back(path, contents);
      const std::string layer = Hostile(rng, parts, 3);
      step.actions.push_back(plan::Action::Verify(layer));
      std::vector<std::string> verify;
      if (!p.manifest.empty()) verify = {"--manifest", p.manifest};
      verify.insert(verify.end(), {"verify", "--only", layer});
      expected += Expected("unset", verify);
      p.steps.push_back(step);
    }
    const std::string script = plan::RenderSh(p, base + "/rec");
    dir.Write("/plan.sh", script);

    sys::Command check;
    check.argv = {"bash", "-n", base + "/plan.sh"};
    auto syntax = runner.Run(check);
    INFO(script);
    REQUIRE(syntax.ok());

    sys::Command run;
    run.argv = {"bash", base + "/plan.sh"};
    run.env = {{"GP_PROP_LOG", log}, {"PATH", base + ":/usr/bin:/bin"}};
    auto r = runner.Run(run);
    INFO(r.err);
    CHECK(r.ok());
    CHECK(dir.Read("/calls.log") == expected);
    for (const auto& [path, contents] : writes) {
      CHECK(dir.Read(path.substr(base.size())) == contents);  // byte for byte, as apply writes it
    }
    CHECK_FALSE(dir.Exists("/PWNED"));
    ::unlink(log.c_str());
  }
}

TEST_CASE("ShellQuote round trip: bash reads back exactly the word", "[plan][property]") {
  std::mt19937 rng(7);
  const auto parts = Fragments("/nonexistent/PWNED");
  sys::RealCommandRunner runner;
  std::vector<std::string> words = {"A=b", "=", "", "-n", "a'b"};
  for (int i = 0; i < 40; ++i) words.push_back(Hostile(rng, parts, 6));
  // printf '%s\x01' WORD... through bash: each argument arrives byte for byte.
  std::string line = "printf '%s\\001'";
  std::string want;
  for (const auto& w : words) {
    line += " " + sys::ShellQuote(w);
    want += w + "\x01";
  }
  sys::Command c;
  c.argv = {"bash", "-c", line};
  auto r = runner.Run(c);
  CHECK(r.ok());
  CHECK(r.out == want);
  // An assignment-shaped first word stays the command word.
  c.argv = {"bash", "-c", sys::ShellJoin({"A=b", "x"}) + " 2>&1; true"};
  CHECK(runner.Run(c).out.find("A=b: command not found") != std::string::npos);
}

namespace {

// Every entry under `root` (relative path, type, mode and, for files, contents), one per line, sorted.
std::string Tree(const std::string& root) {
  sys::RealCommandRunner runner;
  sys::Command c;
  c.argv = {
      "bash", "-c",
      "cd \"$1\" && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r f; do stat -c '%n %F %a' -- "
      "\"$f\"; if [ -f \"$f\" ] && [ ! -L \"$f\" ]; then cat -- \"$f\"; fi; echo; done",
      "x", root};
  return runner.Run(c).out;
}

// The writes apply makes of system files, with a backup and a keyring directory that does not exist yet.
plan::Plan WritesPlan(const std::string& root) {
  plan::Plan p;
  p.stack = "s";
  plan::Step step;
  step.id = "w";
  step.title = "writes";
  step.actions.push_back(plan::Action::Write(root + "/etc/a.conf", "new\n", 0644, true));
  step.actions.push_back(plan::Action::Write(root + "/etc/b.conf", "no newline", 0600, true));
  step.actions.push_back(
      plan::Action::Write(root + "/etc/keys/k.gpg", std::string("\x99\x01", 2), 0644, true));
  p.steps.push_back(step);
  return p;
}

sys::CommandResult RunScript(const std::string& shell, const std::string& script_path) {
  sys::RealCommandRunner runner;
  sys::Command run;
  run.argv = {shell, script_path};
  return runner.Run(run);
}

}  // namespace

TEST_CASE("plan --format sh writes what apply writes, under bash and dash", "[plan][property]") {
  for (const std::string shell : {"bash", "dash"}) {
    INFO(shell);
    test::TempRoot script_root, apply_root, scratch;
    for (auto* r : {&script_root, &apply_root}) {
      r->Write("/etc/a.conf", "old\n");
      r->Write("/etc/a.conf.gpuprep-bak", "older\n");
    }
    scratch.Write("/plan.sh", plan::RenderSh(WritesPlan(script_root.path()), "gpuprep"));
    auto r = RunScript(shell, scratch.path() + "/plan.sh");
    INFO(r.err);
    REQUIRE(r.ok());
    const plan::Plan applied = WritesPlan("");  // kept alive: a range over a temporary's member is not
    for (const auto& a : applied.steps[0].actions)
      REQUIRE(apply_root.fs().WriteAtomic(a.path, a.contents, a.mode, a.keep_backup).ok);
    CHECK(Tree(script_root.path()) == Tree(apply_root.path()));
  }
}

TEST_CASE("plan --format sh: a planted link beside the file is not followed", "[plan][property]") {
  for (const std::string shell : {"bash", "dash"}) {
    INFO(shell);
    test::TempRoot root, scratch;
    root.Write("/etc/a.conf", "old\n");
    root.Symlink(scratch.path() + "/victim", "/etc/a.conf.gpuprep-new");
    scratch.Write("/plan.sh", plan::RenderSh(WritesPlan(root.path()), "gpuprep"));
    auto r = RunScript(shell, scratch.path() + "/plan.sh");
    INFO(r.err);
    CHECK(r.ok());
    CHECK_FALSE(scratch.Exists("/victim"));
    CHECK(root.Read("/etc/a.conf") == "new\n");
  }
}

TEST_CASE("plan --format sh: a directory where the file goes is refused, as apply refuses it",
          "[plan][property]") {
  for (const std::string shell : {"bash", "dash"}) {
    INFO(shell);
    test::TempRoot root, scratch;
    REQUIRE(root.fs().MakeDirs("/etc/a.conf/inner", 0755).ok);
    CHECK_FALSE(root.fs().WriteAtomic("/etc/a.conf", "new\n", 0644, true).ok);
    scratch.Write("/plan.sh", plan::RenderSh(WritesPlan(root.path()), "gpuprep"));
    auto r = RunScript(shell, scratch.path() + "/plan.sh");
    CHECK_FALSE(r.ok());
    CHECK(root.fs().List("/etc/a.conf") == std::vector<std::string>{"inner"});
    CHECK(r.err.find("is a directory") != std::string::npos);
  }
}

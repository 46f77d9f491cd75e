#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <mutex>
#include <ostream>
#include <string_view>

#include "cli/commands.h"
#include "cli/context.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::cli {
namespace {

// The log's one sink: every message goes through TerminalSafe before it is formatted, since messages quote
// paths, names, server answers and program output from outside. One line per message.
class TerminalSafeSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit TerminalSafeSink(std::ostream& out) : out_(out) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string safe = TerminalSafe(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg escaped = msg;
    escaped.payload = spdlog::string_view_t(safe.data(), safe.size());
    spdlog::memory_buf_t line;
    formatter_->format(escaped, line);
    out_.write(line.data(), static_cast<std::streamsize>(line.size()));
    out_.flush();
  }
  void flush_() override { out_.flush(); }

 private:
  std::ostream& out_;
};

void SetUpLogging(const Context& ctx) {
  auto sink = std::make_shared<TerminalSafeSink>(*ctx.err);
  auto logger = std::make_shared<spdlog::logger>("gpuprep", sink);
  if (ctx.opts.verbose) {
    logger->set_pattern("gpuprep: %H:%M:%S.%e %l: %v");
    logger->set_level(spdlog::level::debug);
  } else {
    logger->set_pattern("gpuprep: %v");
    logger->set_level(ctx.opts.quiet ? spdlog::level::err : spdlog::level::info);
  }
  spdlog::set_default_logger(logger);
}

// "--manifest: message" for a CLI11 error about one option, else CLI11's own text, one line.
std::string OneLine(const std::string& text) {
  std::string s = text;
  for (char& c : s)
    if (c == '\n') c = ' ';
  return std::string(Trim(s));
}

// CLI11's wordings in gpuprep's one-line form: "Could not convert: --nodes = X" -> "--nodes: "X" is not a
// number in range"; "The following argument(s) was/were not expected: X" -> ""X": not an option or argument
// of this command".
std::string Reword(const std::string& msg) {
  static const std::string kConvert = "Could not convert: ";
  if (StartsWith(msg, kConvert)) {
    const std::string rest = msg.substr(kConvert.size());
    if (const size_t eq = rest.find(" = "); eq != std::string::npos)
      return rest.substr(0, eq) + ": \"" + rest.substr(eq + 3) + "\" is not a number in range";
  }
  for (const std::string prefix :
       {"The following argument was not expected: ", "The following arguments were not expected: "})
    if (StartsWith(msg, prefix))
      return "\"" + msg.substr(prefix.size()) + "\": not an option or argument of this command";
  return msg;
}

// CLI11 names an unknown subcommand "The following argument was not expected: X"; add "did you mean".
std::string ExplainExtras(const CLI::App& app, const CLI::ParseError& e) {
  std::string msg = Reword(OneLine(e.what()));
  const auto extras = app.remaining();
  if (!extras.empty() && app.get_subcommands().empty()) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (auto guess = DidYouMean(extras.front(), names))
      return "unknown command \"" + extras.front() + "\" (did you mean \"" + *guess + "\"?)";
    if (extras.front().empty() || extras.front()[0] != '-')
      return "unknown command \"" + extras.front() + "\" (commands: " + Join(names, ", ") + ")";
  }
  return msg;
}

// The logger RunCli installs writes to ctx.err, which the caller owns; the previous default logger comes
// back when RunCli returns, so no logger outlives the stream it writes to (tests call RunCli many times).
class RestoreLogger {
 public:
  RestoreLogger() : saved_(spdlog::default_logger()) {}
  ~RestoreLogger() { spdlog::set_default_logger(saved_); }
  RestoreLogger(const RestoreLogger&) = delete;
  RestoreLogger& operator=(const RestoreLogger&) = delete;

 private:
  std::shared_ptr<spdlog::logger> saved_;
};

}  // namespace

bool Context::use_color() const { return out_is_tty && !opts.json && env.find("NO_COLOR") == env.end(); }

namespace {
// The options every verb takes (ctx.opts).
void AddGlobalOptions(CLI::App& app, Context& ctx) {
  app.add_option("--manifest", ctx.opts.manifest, "Stack: embedded NAME, a YAML PATH, or an https URL")
      ->group("Global");
  app.add_option(
         "--manifest-sha256", ctx.opts.manifest_sha256,
         "With --manifest: refuse the stack unless its documents' sha256 is HEX (plan's scripts pin it)")
      ->group("Global");
  app.add_flag("--json", ctx.opts.json, "Machine-readable output on stdout")->group("Global");
  app.add_option("--root", ctx.opts.root, "Probe the tree under DIR instead of the live host")
      ->group("Global")
      ->check([](const std::string& dir) {
        return dir.empty() ? std::string("must not be empty") : std::string();
      });
  app.add_flag("--verbose", ctx.opts.verbose, "More detail, timestamps in logs")->group("Global");
  app.add_flag("-q,--quiet", ctx.opts.quiet, "Only errors on stderr")->group("Global");
}
// Whether the command line may run `verb`: a word equal to its name (the verb itself, or a value that
// happens to spell it: then it costs only the options' set-up). A verb left out still has its name and
// help, for `gpuprep --help` and "did you mean".
bool NamesVerb(int argc, const char* const* argv, std::string_view verb) {
  for (int i = 1; i < argc; ++i)
    if (argv[i] && verb == argv[i]) return true;
  return false;
}
}  // namespace

int RunCli(int argc, const char* const* argv, Context& ctx) {
  RestoreLogger restore_logger;
  CLI::App app{"gpuprep: turn a GPU server into a verified training host", "gpuprep"};
  app.set_version_flag("--version", std::string("gpuprep ") + GPUPREP_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global options are accepted after the verb too
  AddGlobalOptions(app, ctx);

  int exit_code = kExitOk;
  for (const Verb& verb : kVerbs) {
    CLI::App* sub = app.add_subcommand(verb.name, verb.help);
    if (NamesVerb(argc, argv, verb.name)) verb.add(sub, ctx, exit_code);
  }

  app.parse_complete_callback([&ctx] { SetUpLogging(ctx); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    *ctx.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    *ctx.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    *ctx.out << "gpuprep " << GPUPREP_VERSION << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    *ctx.err << "gpuprep: error: " << TerminalSafe(ExplainExtras(app, e)) << "\n";
    return kExitUsage;
  } catch (const Error& e) {
    // Messages quote file contents and flag values: escaped, so they stay one line with no terminal codes.
    *ctx.err << "gpuprep: error: " << TerminalSafe(e.what()) << "\n";
    return e.code();
  } catch (const std::bad_alloc&) {
    *ctx.err << "gpuprep: error: out of memory\n";
    return kExitFailed;
  } catch (const std::exception& e) {
    // Anything else is a bug or an unexpected system failure: still one line, exit 1.
    *ctx.err << "gpuprep: error: internal error: " << TerminalSafe(e.what()) << "\n";
    return kExitFailed;
  }
  return exit_code;
}

}  // namespace gp::cli

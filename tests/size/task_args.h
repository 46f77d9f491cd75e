// Shared by tests/size/*_test.cc: a task from a command line, through the same settings code the CLI uses
// ("--model llama-2-7b --method lora --chunked-loss"): each flag becomes a Setting with a flag origin.
#pragma once
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "size/hf_config.h"
#include "size/settings.h"
#include "util/strings.h"

namespace gp::test {

inline size::Task TaskFromArgs(const std::string& args) {
  size::Task t;
  const auto words = SplitWords(args);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string flag = words[i], value;
    const size_t eq = flag.find('=');
    if (eq != std::string::npos) value = flag.substr(eq + 1), flag = flag.substr(0, eq);
    const size::KeyInfo* key = nullptr;
    for (const auto& k : size::SettingKeys())
      if (flag == k.flag) key = &k;
    if (!key) throw std::logic_error("TaskFromArgs: unknown flag " + flag);
    if (eq == std::string::npos) {
      if (key->boolean && (i + 1 == words.size() || StartsWith(words[i + 1], "--")))
        value = "true";
      else
        value = words.at(++i);
    }
    size::Apply(t, size::Setting{key->key, value, size::Origin{"", 0, 0, key->flag}});
  }
  if (!t.config_path.empty()) {  // as `gpuprep size --config FILE` reads it, before the checks
    std::ifstream f(t.config_path);
    if (!f) throw std::logic_error("TaskFromArgs: cannot read " + t.config_path);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    t.arch = size::ParseHfConfig(text, t.config_path);
  }
  size::Finish(t);
  return t;
}

}  // namespace gp::test

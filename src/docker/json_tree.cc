#include "docker/json_tree.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "util/error.h"
#include "util/json_locator.h"

namespace gp::docker {
namespace {

// nlohmann's DOM builder (json_sax_dom_parser) but for one thing: each open object keeps an index of its
// keys, so a member is found in constant time instead of by ordered_map's linear scan.
class TreeBuilder {
 public:
  TreeBuilder(ordered_json& root, const std::string& text, const std::string& display_path)
      : root_(root), text_(text), display_path_(display_path) {}

  bool null() { return Value(nullptr); }
  bool boolean(bool v) { return Value(v); }
  bool number_integer(ordered_json::number_integer_t v) { return Value(v); }
  bool number_unsigned(ordered_json::number_unsigned_t v) { return Value(v); }
  bool number_float(ordered_json::number_float_t v, const std::string& /*text*/) { return Value(v); }
  bool string(std::string& v) { return Value(std::move(v)); }
  bool binary(ordered_json::binary_t& /*v*/) { return false; }  // JSON text has none
  bool start_object(size_t /*elements*/) {
    open_.push_back({Value(ordered_json::object()), {}});
    return true;
  }
  bool key(std::string& k) {
    auto& obj = open_.back().value->get_ref<ordered_json::object_t&>();
    auto [it, inserted] = open_.back().index.try_emplace(k, obj.size());
    if (inserted) {
      obj.Container::emplace_back(std::move(k), nullptr);
      slot_ = &obj.Container::back().second;
    } else {
      slot_ = &obj.Container::operator[](it->second).second;  // the last value wins, in the first place
    }
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(size_t /*elements*/) {
    open_.push_back({Value(ordered_json::array()), {}});
    return true;
  }
  bool end_array() { return Close(); }
  bool parse_error(size_t position, const std::string& /*token*/, const nlohmann::detail::exception& e) {
    auto [line, col] = LineColumnAt(text_, position == 0 ? 0 : position - 1);
    std::string why = ParseErrorReason(e.what());
    if (why.rfind("[json.exception.", 0) == 0 && why.find("] ") != std::string::npos)
      why = why.substr(why.find("] ") + 2);  // "[json.exception.out_of_range.406] number overflow ..."
    throw FileError(display_path_, line, col,
                    "not valid JSON: " + why + "; gpuprep leaves the file as it is: correct it by hand");
  }

 private:
  struct Open {
    ordered_json* value;
    std::unordered_map<std::string, size_t> index;  // objects: key -> position in the member vector
  };

  // Places `v` where the parser is: the root, the next array element or the value of the last key.
  ordered_json* Value(ordered_json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    ordered_json& top = *open_.back().value;
    if (top.is_array()) {
      top.get_ref<ordered_json::array_t&>().push_back(std::move(v));
      return &top.get_ref<ordered_json::array_t&>().back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool Close() {
    open_.pop_back();
    return true;
  }

  ordered_json& root_;
  const std::string& text_;
  const std::string& display_path_;
  std::vector<Open> open_;
  ordered_json* slot_ = nullptr;
};

}  // namespace

ordered_json ReadJsonTree(const std::string& text, const std::string& display_path) {
  if (text.size() > kMaxDaemonJsonBytes) {
    auto [line, col] = LineColumnAt(text, kMaxDaemonJsonBytes);
    throw FileError(display_path, line, col,
                    "the file is " + std::to_string(text.size()) + " bytes, more than the " +
                        std::to_string(kMaxDaemonJsonBytes) +
                        " (1 MiB) gpuprep edits; gpuprep leaves the file as it is: shorten it by hand");
  }
  if (auto deep = JsonTooDeepAt(text, kMaxDaemonJsonDepth)) {
    auto [line, col] = LineColumnAt(text, *deep);
    throw FileError(display_path, line, col,
                    "nested deeper than " + std::to_string(kMaxDaemonJsonDepth) +
                        " levels; gpuprep leaves the file as it is: correct it by hand");
  }
  ordered_json root;
  TreeBuilder builder(root, text, display_path);
  ordered_json::sax_parse(text, &builder);  // strict: no comments, one value, trailing blanks only
  return root;
}

std::string WriteJsonTree(const ordered_json& v) {
  struct Frame {
    const ordered_json* value;
    size_t next = 0;
  };
  std::string out;
  std::vector<Frame> stack;
  // Writes a scalar or an empty container whole; opens a non-empty one (its members follow).
  const auto write = [&](const ordered_json& x) {
    if (x.is_object() && !x.empty()) {
      out += "{\n";
      stack.push_back({&x});
    } else if (x.is_array() && !x.empty()) {
      out += "[\n";
      stack.push_back({&x});
    } else {
      out += x.dump();  // a scalar, {} or []: no recursion
    }
  };
  write(v);
  while (!stack.empty()) {
    const size_t depth = stack.size();
    Frame& f = stack.back();
    const ordered_json& c = *f.value;
    if (f.next == c.size()) {
      out += '\n';
      out.append(4 * (depth - 1), ' ');
      out += c.is_object() ? '}' : ']';
      stack.pop_back();
      continue;
    }
    if (f.next > 0) out += ",\n";
    out.append(4 * depth, ' ');
    const size_t i = f.next++;
    if (c.is_object()) {
      const auto& member = c.get_ref<const ordered_json::object_t&>().Container::operator[](i);
      out += ordered_json(member.first).dump();
      out += ": ";
      write(member.second);  // may push: `f` is not used after this
    } else {
      write(c.get_ref<const ordered_json::array_t&>()[i]);
    }
  }
  return out;
}

}  // namespace gp::docker

#include "util/json_keys.hpp"

#include <unordered_set>
#include <vector>

namespace flexmpi {
namespace {

using json = nlohmann::json;

// Follows the parser's events without building anything: the keys seen in
// each open object, and where in the document it is, to name a duplicate by
// its path. (nlohmann::json's parser callback would do it while building the
// document, but it scans the enclosing array at every object's end: an array
// of 250,000 objects took 35 s.)
class UniqueKeys final : public nlohmann::json_sax<json> {
 public:
  bool null() override { return value(); }
  bool boolean(bool /*value*/) override { return value(); }
  bool number_integer(number_integer_t /*value*/) override { return value(); }
  bool number_unsigned(number_unsigned_t /*value*/) override { return value(); }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return value(); }
  bool string(string_t& /*value*/) override { return value(); }
  bool binary(binary_t& /*value*/) override { return value(); }
  bool start_object(std::size_t /*elements*/) override {
    levels_.emplace_back().object = true;
    return true;
  }
  bool key(string_t& name) override {
    Level& object = levels_.back();
    object.key = name;
    if (!object.keys.insert(name).second) throw DuplicateJsonKey{path()};
    return true;
  }
  bool end_object() override { return end(); }
  bool start_array(std::size_t /*elements*/) override {
    levels_.emplace_back().object = false;
    return true;
  }
  bool end_array() override { return end(); }
  // Stops here: json::parse then says what and where.
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    return false;
  }

 private:
  struct Level {
    bool object = false;
    std::unordered_set<std::string> keys;
    std::string key;        // an object's current member
    std::size_t index = 0;  // an array's current element
  };

  bool end() {
    levels_.pop_back();
    return value();
  }

  // A value ended: the next one in an array is the following element.
  bool value() {
    if (!levels_.empty() && !levels_.back().object) ++levels_.back().index;
    return true;
  }

  std::string path() const {
    std::string text;
    for (const Level& level : levels_) {
      if (level.object) {
        text += (text.empty() ? "" : ".") + level.key;
      } else {
        text += "[" + std::to_string(level.index) + "]";
      }
    }
    return text;
  }

  std::vector<Level> levels_;
};

}  // namespace

// Two linear passes: the keys, then the document.
json parse_json_with_unique_keys(std::string_view text) {
  UniqueKeys unique;
  (void)json::sax_parse(text, &unique);
  return json::parse(text);
}

}  // namespace flexmpi

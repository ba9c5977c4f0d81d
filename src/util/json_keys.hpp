// JSON text parsed with every object's keys unique. JSON allows a key twice
// in one object and parsers keep either value ({"gamma":1e300,"gamma":3e-11}:
// nlohmann::json keeps the last) without a word: a settings file written by
// hand, or two files pasted together, would then mean what the user did not.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace flexmpi {

/// A key given twice in one object; `key` is its dotted path
/// ("network.intra_node.bands[0].up_to").
struct DuplicateJsonKey {
  std::string key;
};

/// What a DuplicateJsonKey's message says after the key.
inline constexpr std::string_view kDuplicateJsonKeyWhat =
    "given twice in one object: which value is meant? (JSON readers keep either; remove one)";

/// The document of `text`; nlohmann::json::parse_error if it is not JSON,
/// DuplicateJsonKey if an object has a key twice.
nlohmann::json parse_json_with_unique_keys(std::string_view text);

}  // namespace flexmpi

#include "machine/machine_xml.hpp"

#include <array>
#include <charconv>
#include <optional>
#include <pugixml.hpp>
#include <sstream>

#include "flexmpi/error.hpp"
#include "util/number_range.hpp"
#include "util/split.hpp"
#include "util/text_file.hpp"

namespace flexmpi::machine {
namespace {

// Counts (childrenNum, numnode, CPUs) and ratings, as a machine may have them.
constexpr NumberRange kCount{0, 1 << 20, false, true};
constexpr NumberRange kCpus{1, 1 << 20, false, true};
constexpr NumberRange kFlag{0, 1, false, true};
constexpr NumberRange kMflops{0.0, 1e12, true};  // 1e12 MFLOPS: an exaflop node

class XmlReader {
 public:
  explicit XmlReader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(Errc::invalid_argument, source_ + ": " + what);
  }

  std::string required(const pugi::xml_node& element, const char* attribute,
                       const std::string& where) const {
    const pugi::xml_attribute found = element.attribute(attribute);
    if (!found) fail(where + ": attribute " + attribute + " is missing");
    return found.value();
  }

  double number(const char* text, const char* attribute, const std::string& where,
                const NumberRange& range) const {
    const std::optional<double> value = parse_number(text);
    if (!value || !range.contains(*value)) {
      fail(where + ": attribute " + attribute + ": " + range.expected_word(printable(text), '"'));
    }
    return *value;
  }

  int count(const char* text, const char* attribute, const std::string& where) const {
    return static_cast<int>(number(text, attribute, where, kCount));
  }

  NodeSpec node(const pugi::xml_node& element, int position) const;

 private:
  std::string source_;
};

NodeType node_type(const XmlReader& reader, const std::string& type, const std::string& where) {
  if (type == node_type_name(NodeType::network)) return NodeType::network;
  if (type == node_type_name(NodeType::computing)) return NodeType::computing;
  reader.fail(where + ": unknown node type \"" + type +
              "\" (expected NETWORK_NODE or COMPUTING_NODE)");
}

/// "1;2;" -> {"1", "2"}: the children list of Fig. 3.5, ';'-terminated.
std::vector<std::string> split_children(std::string_view list) {
  std::vector<std::string> children;
  for (const std::string_view part : split(list, ';')) {
    if (!part.empty()) children.emplace_back(part);
  }
  return children;
}

NodeSpec XmlReader::node(const pugi::xml_node& element, int position) const {
  const std::string where =
      "node " + std::to_string(position) + " (name=\"" + element.attribute("name").value() + "\")";
  NodeSpec spec;
  spec.name = required(element, "name", where);
  spec.type = node_type(*this, required(element, "type", where), where);
  spec.description = required(element, "description", where);
  spec.children = split_children(element.attribute("children").value());
  const int declared = count(required(element, "childrenNum", where).c_str(), "childrenNum", where);
  if (declared != static_cast<int>(spec.children.size())) {
    fail(where + ": childrenNum=\"" + std::to_string(declared) + "\" but children=\"" +
         element.attribute("children").value() + "\" lists " +
         std::to_string(spec.children.size()));
  }
  if (const auto monitorable = element.attribute("IsMonitorable")) {
    spec.monitorable = number(monitorable.value(), "IsMonitorable", where, kFlag) != 0;
  }
  if (const auto mflops = element.attribute("MFLOPS")) {
    spec.mflops = number(mflops.value(), "MFLOPS", where, kMflops);
  }
  // Written by flexmpi-drum-config beside the topology: checked when present.
  if (const auto cpus = element.attribute("CPUs")) number(cpus.value(), "CPUs", where, kCpus);
  return spec;
}

/// The shortest text that reads back as the same double.
std::string shortest_text(double value) {
  std::array<char, 32> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  return {text.data(), end};
}

/// "1;2;": the ';'-terminated children list of Fig. 3.5 (";" for a leaf).
std::string children_list(const std::vector<std::string>& children) {
  if (children.empty()) return ";";
  std::string list;
  for (const std::string& child : children) list += child + ";";
  return list;
}

void write_node(pugi::xml_node element, const NodeSpec& spec) {
  element.append_attribute("type") = std::string(node_type_name(spec.type)).c_str();
  element.append_attribute("name") = spec.name.c_str();
  element.append_attribute("description") = spec.description.c_str();
  element.append_attribute("childrenNum") = static_cast<int>(spec.children.size());
  element.append_attribute("children") = children_list(spec.children).c_str();
  element.append_attribute("IsMonitorable") = spec.monitorable ? 1 : 0;
  if (spec.type == NodeType::computing) {
    element.append_attribute("MFLOPS") = shortest_text(spec.mflops).c_str();
  }
}

}  // namespace

std::string write_machine_xml(const std::vector<NodeSpec>& specs,
                              const std::vector<ExtraAttributes>& extra) {
  pugi::xml_document document;
  pugi::xml_node model = document.append_child("machinemodel");
  model.append_attribute("numnode") = static_cast<int>(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    pugi::xml_node element = model.append_child("node");
    write_node(element, specs[i]);
    if (i >= extra.size()) continue;
    for (const auto& [name, value] : extra[i]) {
      element.append_attribute(name.c_str()) = value.c_str();
    }
  }
  std::ostringstream text;
  document.save(text, "  ");
  return text.str();
}

std::vector<NodeSpec> parse_machine_xml(std::string_view text, std::string_view source) {
  const XmlReader reader(source);
  pugi::xml_document document;
  const pugi::xml_parse_result parsed = document.load_buffer(text.data(), text.size());
  if (!parsed) {
    reader.fail(std::string("malformed XML at offset ") + std::to_string(parsed.offset) + ": " +
                parsed.description());
  }
  const pugi::xml_node model = document.child("machinemodel");
  if (!model) reader.fail("no <machinemodel> element");
  std::vector<NodeSpec> specs;
  for (const pugi::xml_node& element : model.children()) {
    if (element.type() != pugi::node_element) continue;
    if (std::string_view(element.name()) != "node") {
      reader.fail(std::string("unexpected element <") + element.name() + "> in <machinemodel>");
    }
    specs.push_back(reader.node(element, static_cast<int>(specs.size()) + 1));
  }
  if (const auto numnode = model.attribute("numnode")) {
    const int declared = reader.count(numnode.value(), "numnode", "<machinemodel>");
    if (declared != static_cast<int>(specs.size())) {
      reader.fail("<machinemodel numnode=\"" + std::to_string(declared) + "\"> but it holds " +
                  std::to_string(specs.size()) + " <node> elements");
    }
  }
  // The tree (known children, one root, no cycle) is checked here, when the
  // file is read, not when the partitioner first builds the model mid-run.
  (void)MachineModel(specs, source);
  return specs;
}

std::vector<NodeSpec> read_machine_xml(const std::string& path) {
  return parse_machine_xml(read_text_file(path, "DRUM XML topology", Errc::bad_config), path);
}

}  // namespace flexmpi::machine

// The settings loader: every FLEXMPI_* setting, declared once (name,
// flexrun option, default, what is accepted, help): the runtime's own here,
// a strategy's in its folder's descriptor (base/setting.hpp). settings()
// joins them into the one table that the parser, the `flexrun` launcher, its
// help and docs/reference/settings.md read. It fills the Config record
// (config/config.hpp) from the strategies' registries, so it sits with the
// composition root.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/setting.hpp"
#include "config/config.hpp"
#include "util/output_file.hpp"

namespace flexmpi {

/// The table of all settings, in documentation order.
const std::vector<SettingDescriptor>& settings();

/// Looks up a variable's value; returns nullptr when it is not set.
using EnvLookup = std::function<const char*(const char*)>;

/// Parses one setting's value into `config`; Error(bad_config) naming the
/// variable, the value and what is accepted otherwise. Settings that depend
/// on each other are checked by load_config, once all are read.
void apply_setting(Config& config, const SettingDescriptor& setting, std::string_view value);

/**
 * Reads every setting through `lookup` and validates it. `names_in_environment`
 * lists the FLEXMPI_* names present, so that a misspelt variable is an error
 * rather than silently ignored. Throws Error(Errc::bad_config) naming the
 * variable, the value and what is accepted, or the settings that do not go together,
 * or an output that would destroy an input or another output or cannot be
 * written (check_outputs).
 */
Config load_config(const EnvLookup& lookup, const std::vector<std::string>& names_in_environment);

/// The files the settings make flexmpi read, by setting (only those set).
std::vector<FileSetting> input_files(const Config& config);

/// The files the settings make flexmpi write, by setting (only those set;
/// FLEXMPI_REPORT=- is standard error, no file).
std::vector<OutputSetting> output_files(const Config& config);

/// load_config over the process environment.
Config load_config_from_environment();

}  // namespace flexmpi

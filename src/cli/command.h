// Subcommands register themselves: each src/cli/cmd_*.cpp defines a setup function that adds its
// CLI11 subcommand (options and callback) to the parent it is given, and a static
// CommandRegistration naming it. A name with a space ("bench select") registers under a group
// ("bench"), which main() creates once. main() adds every registered command in name order. Files
// of this directory are compiled into the binary itself, so the registrations are never dropped by
// the linker. Callbacks only parse, wire and print: the logic lives in the modules.
// The directory is a unity build (CLI11 compiled once per batch): file-scope names are unique
// across it, setup_<command> and <command>_registration.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace kvs::cli {

using CommandSetup = void (*)(CLI::App& parent);

struct CommandRegistration {
  CommandRegistration(const char* name, CommandSetup setup);
};

std::vector<std::pair<std::string, CommandSetup>>& registered_commands();
std::string group_description(const std::string& group);  // help text of "bench", "data", ...

// The command line of this invocation, as typed (recorded with every run).
const std::string& command_line();
void record_command_line(int argc, char** argv);

}  // namespace kvs::cli

#include "app.hpp"

#include <iostream>
#include <string>

#include "commands.hpp"
#include "distributed.hpp"

namespace ecekde::cli {

int run(int argc, char** argv) {
  CLI::App app{"ecekde: the consistent, differentiable L_p calibration error estimator ECE^KDE "
               "(Popordanoska, Sayer & Blaschko, NeurIPS 2022).",
               "ecekde"};
  app.set_version_flag("--version", ECEKDE_VERSION);
  app.require_subcommand(1);
  for (auto add : kCommands) add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
      throw UsageError("unknown command '" + std::string(argv[1]) + "' (expected " + names + ")");
    }
    std::string help = "ecekde --help";
    for (const CLI::App* sub : app.get_subcommands()) help = "ecekde " + sub->get_name() + " --help";
    throw UsageError(std::string(e.what()) + " (see '" + help + "')");
  }
  return 0;
}

int report_error(std::string_view message, int status) {
  std::string line(message);
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  line += before_error_report(status);
  std::cout.flush();
  // One write, so that under mpirun the line reaches the job's stderr whole: written in pieces, Open MPI's
  // abort banner once landed between "ecekde: error: " and the message.
  std::cerr << "ecekde: error: " + line + "\n" << std::flush;
  return status;
}

}  // namespace ecekde::cli

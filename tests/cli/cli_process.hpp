// Running the built ecekde binary from end-to-end tests: arguments quoted for the shell, stdout and
// stderr captured in files of a test's scratch directory.
#pragma once

#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "files.hpp"

namespace clitest {

struct Output {
  int status = -1;
  std::string out, err;
};

/// s in single quotes for the shell.
inline std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  q += '\'';
  return q;
}

/// Runs `program args...` with stdout and stderr captured in files of `dir` and stdin from /dev/null.
inline Output run_program(const testfiles::ScratchDir& dir, const std::string& program,
                          const std::vector<std::string>& args) {
  std::string command = quoted(program);
  for (const auto& a : args) {
    command += ' ';
    command += quoted(a);
  }
  const std::string out = dir.path("stdout.txt"), err = dir.path("stderr.txt");
  command += " >";
  command += quoted(out);
  command += " 2>";
  command += quoted(err);
  command += " </dev/null";
  const int raw = std::system(command.c_str());
  Output o;
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  o.out = testfiles::slurp(out);
  o.err = testfiles::slurp(err);
  return o;
}

/// Runs the ecekde binary under test.
inline Output ecekde_cli(const testfiles::ScratchDir& dir, const std::vector<std::string>& args) {
  return run_program(dir, ECEKDE_CLI_PATH, args);
}

}  // namespace clitest

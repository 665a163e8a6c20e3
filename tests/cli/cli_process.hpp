// Running the built ecekde binary from end-to-end tests: arguments quoted for the shell, stdout and
// stderr captured in files of a test's scratch directory.
#pragma once

#include <algorithm>
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

/// The lines of `text`, without their newlines (a last line without one is dropped).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  return lines;
}

/// The space-separated words of a table line.
inline std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while ((i = line.find_first_not_of(' ', i)) != std::string::npos) {
    const std::size_t end = std::min(line.find(' ', i), line.size());
    words.push_back(line.substr(i, end - i));
    i = end;
  }
  return words;
}

}  // namespace clitest

// The C library's allocator, tuned for the estimators' working memory before the command runs.
#pragma once

#include <optional>
#include <string>

namespace ecekde::cli {

/// GLIBC_TUNABLES as the command runs under it, given its value at start (null: unset): glibc's allocator
/// asking for transparent huge pages and keeping freed memory for reuse (allocator.cpp says why), each
/// tunable the value already names left as it is; nullopt where it names glibc.malloc.hugetlb already (set
/// by the user: hugetlb=0 keeps the allocator as it is; or by tune_allocator() before its exec).
std::optional<std::string> tuned_allocator_settings(const char* current);

/// Where the C library is glibc 2.35 or later (Linux, not under a sanitizer's allocator) and
/// tuned_allocator_settings() has a value, runs this program again with it (exec: the same process,
/// arguments and open files); returns where that does not apply or the exec fails. Call it first in main,
/// before anything reads input or starts MPI.
void tune_allocator(char** argv);

}  // namespace ecekde::cli

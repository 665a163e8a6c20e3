// The C library's allocator, tuned for the estimators' working memory before the command runs.
#pragma once

namespace ecekde::cli {

/// Where the C library is glibc 2.35 or later (Linux) and GLIBC_TUNABLES does not name glibc.malloc.hugetlb
/// yet, runs this program again (exec: the same process, arguments and open files) with glibc's allocator
/// asking for transparent huge pages and keeping freed memory for reuse (allocator.cpp says why); returns
/// where that does not apply or the exec fails. Call it first in main, before anything reads input or
/// starts MPI. Setting glibc.malloc.hugetlb=0 in GLIBC_TUNABLES keeps the allocator as it is.
void tune_allocator(char** argv);

}  // namespace ecekde::cli

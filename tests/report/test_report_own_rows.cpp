// The report from each rank's own rows (Settings::own_rows), ranks as threads of this process
// (thread_ranks.hpp): the whole JSON document against the report alone on the whole input, over ranks
// (including a rank without rows), K = 1, 2, 3, 4 and 10, equal scores, the classes option, renormalised
// rows, and B = 0 and 8. Every number bitwise, but ECE^KDE canonical (the ring: 1e-12 relative).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ecekde/report.hpp"
#include "generate.hpp"
#include "thread_ranks.hpp"
#include "variants.hpp"

namespace {

using Json = nlohmann::ordered_json;

// Rank `rank`'s consecutive share of d's rows, as ecekde's own splits take them.
struct Slice {
  ecekde::ProbsView probs;
  ecekde::LabelsView labels;
};

Slice slice_of(const oracle::Data& d, int rank, int ranks) {
  const std::size_t begin = d.n * static_cast<std::size_t>(rank) / static_cast<std::size_t>(ranks),
                    end = d.n * static_cast<std::size_t>(rank + 1) / static_cast<std::size_t>(ranks);
  return {ecekde::ProbsView::row_major(d.f.data() + begin * d.k, end - begin, d.k),
          ecekde::LabelsView(d.y.data() + begin, end - begin)};
}

// The report's JSON without its settings (which say own_rows).
Json report_json(const ecekde::report::Report& r) {
  Json j = ecekde::report::to_json(r);
  j.erase("settings");
  return j;
}

Json alone(const oracle::Data& d, ecekde::report::Settings s) {
  return report_json(ecekde::report::compute(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                             ecekde::LabelsView(d.y), s));
}

std::vector<Json> on_ranks(const oracle::Data& d, int ranks, const ecekde::report::Settings& s) {
  std::vector<Json> got(static_cast<std::size_t>(ranks));
  ecekde::testing::ThreadRanks group(ranks);
  group.run([&](int rank, ecekde::Communicator& comm) {
    ecekde::report::Settings mine = s;
    mine.communicator = &comm;
    mine.own_rows = true;
    const Slice slice = slice_of(d, rank, ranks);
    got[static_cast<std::size_t>(rank)] = report_json(ecekde::report::compute(slice.probs, slice.labels, mine));
  });
  return got;
}

// Every value of `got` equal to `want`'s: bitwise, or within 1e-12 relative under a canonical ECE^KDE row.
void expect_same(const Json& got, const Json& want, const std::string& path, bool canonical_kde) {
  ASSERT_EQ(got.type(), want.type()) << path;
  if (want.is_object()) {
    ASSERT_EQ(got.size(), want.size()) << path;
    const bool kde_row = want.contains("estimator") && want.contains("type") && want["type"] == "canonical";
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key())) << path << "/" << it.key();
      expect_same(got[it.key()], it.value(), path + "/" + it.key(), canonical_kde || kde_row);
    }
  } else if (want.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << path;
    for (std::size_t i = 0; i < want.size(); ++i)
      expect_same(got[i], want[i], path + "/" + std::to_string(i), canonical_kde);
  } else if (want.is_number_float() && canonical_kde) {
    const double a = got.get<double>(), b = want.get<double>();
    EXPECT_LE(std::fabs(a - b), 1e-12 * std::fabs(b)) << path << ": " << a << " against " << b;
  } else {
    EXPECT_EQ(got, want) << path;
  }
}

void check(const oracle::Data& d, const ecekde::report::Settings& s, const std::string& what) {
  const Json want = alone(d, s);
  for (int ranks : testdata::rank_counts()) {
    const std::vector<Json> got = on_ranks(d, ranks, s);
    for (int r = 0; r < ranks; ++r)
      expect_same(got[static_cast<std::size_t>(r)], want,
                  what + ", " + std::to_string(ranks) + " ranks, rank " + std::to_string(r), false);
  }
}

ecekde::report::Settings settings(std::size_t replicates) {
  ecekde::report::Settings s;
  s.replicates = replicates;
  s.threads = 1;
  s.seed = 11;
  return s;
}

TEST(ReportOwnRows, EveryNumberAsAlone) {
  for (std::size_t B : {std::size_t{0}, std::size_t{8}}) {
    const std::string b = "B " + std::to_string(B);
    check(testdata::softmax_predictions(61, 3, 5), settings(B), "K 3, " + b);
    check(testdata::softmax_predictions(47, 10, 6, 3.0), settings(B), "K 10, " + b);
    check(testdata::softmax_predictions(40, 2, 7), settings(B), "K 2, " + b);
    check(testdata::binary_predictions(45, 8), settings(B), "K 1, " + b);
    check(testdata::softmax_predictions(3, 3, 13), settings(B), "n 3 (4 ranks: one without rows), " + b);
  }
}

TEST(ReportOwnRows, EqualScoresClassesAndRenormalisedRows) {
  oracle::Data d = testdata::softmax_predictions(53, 4, 9);
  for (std::size_t r = 0; r < d.n; r += 3)  // repeated rows: equal scores, shared cells
    for (std::size_t c = 0; c < d.k; ++c) d.f[r * d.k + c] = d.f[c];
  ecekde::report::Settings s = settings(8);
  s.threads = 2;
  check(d, s, "repeated rows, 2 threads");
  s.classes = {2, 0, 3};
  check(d, s, "classes 2, 0, 3");
  oracle::Data scaled = d;
  for (double& v : scaled.f) v *= 1.5;
  ecekde::report::Settings renormalised = settings(0);
  renormalised.renormalize = true;
  check(scaled, renormalised, "renormalised rows");
}

TEST(ReportOwnRows, BadRowStopsEveryRankNamingIt) {
  oracle::Data d = testdata::softmax_predictions(40, 3, 12);
  d.f[33 * 3 + 1] = -0.5;  // row 33 lies on the last of 2 ranks
  for (int ranks : {1, 2, 4}) {
    ecekde::testing::ThreadRanks group(ranks);
    std::vector<std::string> messages(static_cast<std::size_t>(ranks));
    group.run([&](int rank, ecekde::Communicator& comm) {
      ecekde::report::Settings s = settings(4);
      s.communicator = &comm;
      s.own_rows = true;
      const Slice slice = slice_of(d, rank, ranks);
      try {
        ecekde::report::compute(slice.probs, slice.labels, s);
      } catch (const ecekde::Error& e) {
        messages[static_cast<std::size_t>(rank)] = e.what();
      }
    });
    for (const std::string& m : messages) {
      EXPECT_NE(m.find("row 33"), std::string::npos) << m;
      EXPECT_EQ(m, messages.front());
    }
  }
}

}  // namespace

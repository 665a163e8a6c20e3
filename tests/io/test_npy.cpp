// NPY reading and writing: round trips, every supported version, dtype and memory order, zero-copy views,
// and the exact message for every kind of bad file.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/io.hpp"
#include "files.hpp"

namespace {

using ecekde::io::NpyType;
using testfiles::dict;
using testfiles::npy;
using testfiles::raw;

TEST(Npy, Float64RoundTripMatchesNumPyLayout) {
  testfiles::ScratchDir dir;
  const std::vector<double> v{0.1, 0.9, 1.0 / 3, 2.0 / 3, 0.0, 1.0};
  const std::string path = dir.path("p.npy");
  ecekde::io::write_npy(path, v, {3, 2});
  // Byte for byte what numpy.save writes for this array (format 1.0, header padded to 64 bytes).
  EXPECT_EQ(testfiles::slurp(path), npy(dict("<f8", false, "(3, 2)"), raw<double>({0.1, 0.9, 1.0 / 3, 2.0 / 3, 0, 1})));

  const ecekde::io::NpyArray a = ecekde::io::read_npy(path);
  EXPECT_EQ(a.type(), NpyType::float64);
  EXPECT_EQ(a.descr(), "<f8");
  EXPECT_EQ(a.shape(), (std::vector<std::size_t>{3, 2}));
  EXPECT_FALSE(a.fortran_order());
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % alignof(double), 0u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(static_cast<const double*>(a.data())[i], v[i]);
}

TEST(Npy, OtherWritersRoundTrip) {
  testfiles::ScratchDir dir;
  const std::vector<float> f{0.25f, 0.75f};
  ecekde::io::write_npy(dir.path("f.npy"), f, {2});
  EXPECT_EQ(testfiles::slurp(dir.path("f.npy")), npy(dict("<f4", false, "(2,)"), raw<float>({0.25f, 0.75f})));
  const std::vector<std::int64_t> l{3, -1, 7};
  ecekde::io::write_npy(dir.path("l.npy"), l, {3, 1});
  EXPECT_EQ(testfiles::slurp(dir.path("l.npy")), npy(dict("<i8", false, "(3, 1)"), raw<std::int64_t>({3, -1, 7})));
  const std::vector<std::int32_t> i{5};
  ecekde::io::write_npy(dir.path("i.npy"), i, {1});
  EXPECT_EQ(testfiles::slurp(dir.path("i.npy")), npy(dict("<i4", false, "(1,)"), raw<std::int32_t>({5})));
  const std::vector<double> none;
  ecekde::io::write_npy(dir.path("e.npy"), none, {0, 3});
  EXPECT_EQ(ecekde::io::read_npy(dir.path("e.npy")).shape(), (std::vector<std::size_t>{0, 3}));
}

TEST(Npy, WriteChecksTheShape) {
  testfiles::ScratchDir dir;
  const std::vector<double> v{1, 2, 3};
  const std::string path = dir.path("bad.npy");
  EXPECT_ERROR(ecekde::io::write_npy(path, v, {2, 2}),
               path + ": cannot write: shape (2, 2) holds 4 elements, the data has 3");
  EXPECT_ERROR(ecekde::io::write_npy(dir.path("missing/x.npy"), v, {3}),
               dir.path("missing/x.npy") + ": cannot write: No such file or directory");
}

TEST(Npy, Versions2And3AndUnpaddedHeadersRead) {
  testfiles::ScratchDir dir;
  for (int major : {1, 2, 3}) {
    const std::string p = dir.write(std::to_string(major) + ".npy",
                                    npy(dict("<f8", false, "(2,)"), raw<double>({0.5, 0.25}), major));
    const auto a = ecekde::io::read_npy(p);
    EXPECT_EQ(a.shape(), std::vector<std::size_t>{2});
    EXPECT_EQ(static_cast<const double*>(a.data())[1], 0.25);
  }
  // A writer that does not pad, with double quotes, Python 2 long literals and keys in another order.
  const std::string h = "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<i8\"}";
  std::string bytes = "\x93NUMPY\x01";
  bytes += '\0';
  bytes += static_cast<char>(h.size());
  bytes += '\0';
  const std::string p = dir.write("unpadded.npy", bytes + h + raw<std::int64_t>({4, 5}));
  const auto a = ecekde::io::read_npy(p);
  EXPECT_EQ(a.type(), NpyType::int64);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % alignof(std::int64_t), 0u);
  EXPECT_EQ(static_cast<const std::int64_t*>(a.data())[1], 5);
}

// A file whose data is aligned for its type is used in place, in the mapped file; an unaligned one (a
// writer that does not pad its header) is copied; bytes in memory are parsed the same way, copied.
TEST(Npy, AlignedFilesAreReadInPlaceOthersCopied) {
  testfiles::ScratchDir dir;
  const std::string bytes = npy(dict("<f8", false, "(2,)"), raw<double>({0.5, 0.25}));
  const auto mapped = ecekde::io::read_npy(dir.write("a.npy", bytes));
  EXPECT_TRUE(mapped.mapped());
  EXPECT_EQ(static_cast<const double*>(mapped.data())[1], 0.25);

  const std::string h = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}";  // data at byte 65
  std::string odd = "\x93NUMPY\x01";
  odd += '\0';
  odd += static_cast<char>(h.size());
  odd += '\0';
  const auto copied = ecekde::io::read_npy(dir.write("odd.npy", odd + h + raw<double>({0.5, 0.25})));
  EXPECT_FALSE(copied.mapped());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(copied.data()) % alignof(double), 0u);
  EXPECT_EQ(static_cast<const double*>(copied.data())[1], 0.25);

  const auto parsed = ecekde::io::parse_npy("memory", bytes);
  EXPECT_FALSE(parsed.mapped());
  EXPECT_EQ(static_cast<const double*>(parsed.data())[0], 0.5);
  EXPECT_ERROR(ecekde::io::parse_npy("memory", bytes.substr(0, bytes.size() - 1)),
               "memory: truncated data: shape (2,) of '<f8' needs 16 bytes, the file has 15");
  // Views from a mapped file keep the mapping alive after the array and the loader are gone.
  const auto probs = ecekde::io::probabilities_from(ecekde::io::read_npy(dir.path("a.npy")));
  EXPECT_EQ(probs.view().rows(), 2u);
}

// The same 3 x 2 matrix in C and Fortran order gives identical views, and identical estimates.
TEST(Npy, CAndFortranOrderGiveIdenticalViews) {
  testfiles::ScratchDir dir;
  const double m[3][2] = {{0.2, 0.8}, {0.6, 0.4}, {0.7, 0.3}};
  const std::string c = dir.write("c.npy", npy(dict("<f8", false, "(3, 2)"),
                                               raw<double>({m[0][0], m[0][1], m[1][0], m[1][1], m[2][0], m[2][1]})));
  const std::string f = dir.write("f.npy", npy(dict("<f8", true, "(3, 2)"),
                                               raw<double>({m[0][0], m[1][0], m[2][0], m[0][1], m[1][1], m[2][1]})));
  const auto pc = ecekde::io::read_probabilities(c), pf = ecekde::io::read_probabilities(f);
  const ecekde::ProbsView vc = pc.view(), vf = pf.view();
  ASSERT_EQ(vc.rows(), 3u);
  ASSERT_EQ(vf.rows(), 3u);
  ASSERT_EQ(vc.cols(), 2u);
  ASSERT_EQ(vf.cols(), 2u);
  EXPECT_EQ(vc.row_stride(), 2);
  EXPECT_EQ(vc.col_stride(), 1);
  EXPECT_EQ(vf.row_stride(), 1);
  EXPECT_EQ(vf.col_stride(), 3);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(vc(r, k), m[r][k]);
      EXPECT_EQ(vf(r, k), m[r][k]);
    }
  const std::vector<std::int64_t> y{1, 0, 0};
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.bandwidth = 0.1;
  EXPECT_EQ(ecekde::estimate(vc, y, o).ce_pow_p, ecekde::estimate(vf, y, o).ce_pow_p);
}

TEST(Npy, Float32StaysFloat32AndOneDimensionIsOneColumn) {
  testfiles::ScratchDir dir;
  const std::string p = dir.write("p.npy", npy(dict("<f4", false, "(3,)"), raw<float>({0.1f, 0.5f, 0.9f})));
  const auto probs = ecekde::io::read_probabilities(p);
  const ecekde::ProbsView v = probs.view();
  EXPECT_EQ(v.dtype(), ecekde::ProbsView::DType::float32);
  EXPECT_EQ(v.rows(), 3u);
  EXPECT_EQ(v.cols(), 1u);
  EXPECT_EQ(v(2, 0), static_cast<double>(0.9f));

  const std::string f2 = dir.write("f2.npy", npy(dict("<f4", true, "(2, 2)"), raw<float>({0.25f, 0.5f, 0.75f, 0.5f})));
  const auto probs2 = ecekde::io::read_probabilities(f2);
  EXPECT_EQ(probs2.view().dtype(), ecekde::ProbsView::DType::float32);
  EXPECT_EQ(probs2.view()(0, 1), 0.75);
  EXPECT_EQ(probs2.view()(1, 0), 0.5);
}

TEST(Npy, ViewsOutliveTheirLoaders) {
  testfiles::ScratchDir dir;
  const std::string p = dir.write("p.npy", npy(dict("<f8", false, "(2,)"), raw<double>({0.5, 0.25})));
  ecekde::io::Probabilities kept;
  {
    ecekde::io::Probabilities loaded = ecekde::io::read_probabilities(p);
    kept = loaded;
  }
  EXPECT_EQ(kept.view()(1, 0), 0.25);
}

TEST(Npy, EveryIntegerLabelTypeReads) {
  testfiles::ScratchDir dir;
  struct Case {
    const char* descr;
    std::string data;
    ecekde::LabelsView::DType view_type;
  };
  using I64 = ecekde::LabelsView::DType;
  const std::vector<Case> cases{
      {"|i1", raw<std::int8_t>({0, 2, 1}), I64::int64},    {"|u1", raw<std::uint8_t>({0, 2, 1}), I64::int64},
      {"<i2", raw<std::int16_t>({0, 2, 1}), I64::int64},   {"<u2", raw<std::uint16_t>({0, 2, 1}), I64::int64},
      {"<i4", raw<std::int32_t>({0, 2, 1}), I64::int32},   {"<u4", raw<std::uint32_t>({0, 2, 1}), I64::int64},
      {"<i8", raw<std::int64_t>({0, 2, 1}), I64::int64},   {"<u8", raw<std::uint64_t>({0, 2, 1}), I64::int64},
      {"<f8", raw<double>({0, 2, 1}), I64::int64},         {"<f4", raw<float>({0, 2, 1}), I64::int64},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.descr);
    for (const char* shape : {"(3,)", "(3, 1)"}) {
      const std::string p = dir.write("y.npy", npy(dict(c.descr, false, shape), c.data));
      const auto labels = ecekde::io::read_labels(p);
      const ecekde::LabelsView v = labels.view();
      EXPECT_EQ(v.dtype(), c.view_type);
      ASSERT_EQ(v.size(), 3u);
      EXPECT_EQ(v[0], 0);
      EXPECT_EQ(v[1], 2);
      EXPECT_EQ(v[2], 1);
    }
  }
  const std::string b = dir.write("b.npy", npy(dict("|b1", false, "(2,)"), raw<std::uint8_t>({1, 0})));
  const auto labels = ecekde::io::read_labels(b);
  EXPECT_EQ(labels.view()[0], 1);
  EXPECT_EQ(labels.view()[1], 0);
}

TEST(Npy, BadLabelArrays) {
  testfiles::ScratchDir dir;
  const std::string frac = dir.write("frac.npy", npy(dict("<f8", false, "(3,)"), raw<double>({1, 0, 2.5})));
  EXPECT_ERROR(ecekde::io::read_labels(frac), frac + " element 2: '2.5' is not an integer label");
  const std::string big = dir.write("big.npy", npy(dict("<u8", false, "(1,)"), raw<std::uint64_t>({~0ULL})));
  EXPECT_ERROR(ecekde::io::read_labels(big), big + " element 0: label 18446744073709551615 is too large");
  const std::string wide = dir.write("wide.npy", npy(dict("<i8", false, "(2, 2)"), raw<std::int64_t>({0, 1, 1, 0})));
  EXPECT_ERROR(ecekde::io::read_labels(wide), wide + ": labels must be a 1-D array (n,) or (n, 1), got shape (2, 2)");
}

TEST(Npy, BadProbabilityArrays) {
  testfiles::ScratchDir dir;
  const std::string ints = dir.write("ints.npy", npy(dict("<i8", false, "(2,)"), raw<std::int64_t>({0, 1})));
  EXPECT_ERROR(ecekde::io::read_probabilities(ints),
               ints + ": probabilities must be float32 or float64 ('<f4' or '<f8'), got dtype '<i8'");
  const std::string cube = dir.write("cube.npy", npy(dict("<f8", false, "(1, 1, 2)"), raw<double>({0.5, 0.5})));
  EXPECT_ERROR(ecekde::io::read_probabilities(cube),
               cube + ": probabilities must be a 1-D (n,) or 2-D (n, K) array, got shape (1, 1, 2)");
  const std::string scalar = dir.write("scalar.npy", npy(dict("<f8", false, "()"), raw<double>({0.5})));
  EXPECT_ERROR(ecekde::io::read_probabilities(scalar),
               scalar + ": probabilities must be a 1-D (n,) or 2-D (n, K) array, got shape ()");
}

// Every way an .npy file can be broken, with the message each gives.
TEST(Npy, BrokenFilesGiveExactMessages) {
  testfiles::ScratchDir dir;
  const std::string good = npy(dict("<f8", false, "(2,)"), raw<double>({0.5, 0.25}));
  const auto read = [](const std::string& p) { ecekde::io::read_npy(p); };
  const auto bad = [&](const std::string& name, const std::string& bytes, const std::string& message) {
    SCOPED_TRACE(name);
    const std::string p = dir.write(name, bytes);
    EXPECT_ERROR(read(p), p + message);
  };

  const std::string missing = dir.path("missing.npy");
  EXPECT_ERROR(read(missing), missing + ": cannot open: No such file or directory");
  EXPECT_ERROR(read(dir.path("")), dir.path("") + ": cannot read: Is a directory");

  bad("empty.npy", "", ": not an NPY file (the file is empty)");
  bad("magic.npy", "PK\x03\x04 a zip file", ": not an NPY file (it does not start with the magic string \\x93NUMPY)");
  bad("csv.npy", "0.5,0.5\n", ": not an NPY file (it does not start with the magic string \\x93NUMPY)");
  bad("short.npy", "\x93NUM", ": truncated NPY header (the file has only 4 bytes)");
  bad("v4.npy", npy(dict("<f8", false, "(2,)"), "", 4), ": unsupported NPY format version 4.0 (expected 1.0, 2.0 or 3.0)");
  bad("v1_1.npy", npy(dict("<f8", false, "(2,)"), "", 1, 1),
      ": unsupported NPY format version 1.1 (expected 1.0, 2.0 or 3.0)");
  bad("nolen.npy", good.substr(0, 9), ": truncated NPY header (the file ends inside the header length)");
  bad("halfheader.npy", good.substr(0, 40), ": truncated NPY header (it should be 118 bytes, the file has 30)");
  bad("data.npy", good.substr(0, good.size() - 3),
      ": truncated data: shape (2,) of '<f8' needs 16 bytes, the file has 13");
  bad("nodata.npy", npy(dict("<f8", false, "(1000000000000,)"), ""),
      ": truncated data: shape (1000000000000,) of '<f8' needs 8000000000000 bytes, the file has 0");
  bad("huge.npy", npy(dict("<f8", false, "(100000000000, 100000000000)"), ""),
      ": shape (100000000000, 100000000000) is too large");

  bad("bigendian.npy", npy(dict(">f8", false, "(2,)"), raw<double>({0.5, 0.25})),
      ": big-endian dtype '>f8' is not supported (save it little-endian, e.g. a.astype('<f8'))");
  bad("object.npy", npy(dict("|O", false, "(2,)"), raw<std::int64_t>({0, 0})),
      ": object arrays (dtype '|O') are not supported");
  bad("complex.npy", npy(dict("<c16", false, "(1,)"), raw<double>({0, 0})),
      ": unsupported dtype '<c16' (expected float32/float64 probabilities or integer/boolean labels, little-endian)");
  bad("half.npy", npy(dict("<f2", false, "(1,)"), "\0\0"),
      ": unsupported dtype '<f2' (expected float32/float64 probabilities or integer/boolean labels, little-endian)");
  bad("string.npy", npy(dict("<U3", false, "(1,)"), std::string(12, 'a')),
      ": unsupported dtype '<U3' (expected float32/float64 probabilities or integer/boolean labels, little-endian)");
  bad("structured.npy", npy("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", raw<double>({0})),
      ": structured dtypes are not supported");

  bad("nobrace.npy", npy("'descr': '<f8'", ""),
      ": malformed NPY header: expected '{' at character 0 of \"'descr': '<f8'\"");
  bad("nocolon.npy", npy("{'descr' '<f8', 'fortran_order': False, 'shape': (2,), }", ""),
      ": malformed NPY header: expected ':' at character 9 of \"{'descr' '<f8', 'fortran_order': False, 'shape': (2,), }\"");
  bad("noshape.npy", npy("{'descr': '<f8', 'fortran_order': False, }", ""),
      ": malformed NPY header: no 'shape' key in \"{'descr': '<f8', 'fortran_order': False, }\"");
  bad("order.npy", npy("{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }", ""),
      ": malformed NPY header: expected True or False for 'fortran_order' at character 34 of \"{'descr': '<f8', "
      "'fortran_order': 0, 'shape': (2,), }\"");
  bad("negshape.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }", ""),
      ": malformed NPY header: expected a non-negative integer in 'shape' at character 51 of \"{'descr': '<f8', "
      "'fortran_order': False, 'shape': (-2,), }\"");
  bad("quote.npy", npy("{'descr: '<f8'}", ""),
      ": malformed NPY header: expected ':' at character 10 of \"{'descr: '<f8'}\"");
  bad("unterminated.npy", npy("{'descr", ""),
      ": malformed NPY header: unterminated string at character 54 of \"{'descr\"");
  bad("trailing.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", raw<double>({0, 0})),
      ": malformed NPY header: unexpected text after '}' at character 56 of \"{'descr': '<f8', 'fortran_order': "
      "False, 'shape': (2,)} x\"");
}

}  // namespace

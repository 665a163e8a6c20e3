// CSV reading and writing, label and probability extraction, the single-file form, and exact messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ecekde/error.hpp"
#include "ecekde/io.hpp"
#include "files.hpp"

namespace {

TEST(Csv, RoundTripIsExact) {
  testfiles::ScratchDir dir;
  const std::vector<double> v{0.1, 1.0 / 3, 5e-324, 1 - 1e-16, 0, 1, 2, std::nextafter(0.7, 1.0), 1e300};
  const std::string p = dir.path("t.csv");
  ecekde::io::write_csv(p, {"a", "b, with comma", "c \"q\""}, v);
  const auto t = ecekde::io::read_csv(p);
  EXPECT_EQ(t.names, (std::vector<std::string>{"a", "b, with comma", "c \"q\""}));
  EXPECT_EQ(t.rows, 3u);
  EXPECT_EQ(t.cols, 3u);
  EXPECT_EQ(t.values, v);
  EXPECT_EQ(t.lines, (std::vector<std::size_t>{2, 3, 4}));

  ecekde::io::write_csv(p, {}, std::span<const double>(v).first(4), 2);
  EXPECT_EQ(testfiles::slurp(p), "0.1,0.3333333333333333\n5e-324,0.9999999999999999\n");
  const auto u = ecekde::io::read_csv(p);
  EXPECT_FALSE(u.has_header());
  EXPECT_EQ(u.rows, 2u);
  EXPECT_EQ(u(1, 0), 5e-324);
}

TEST(Csv, LenientSyntax) {
  testfiles::ScratchDir dir;
  // BOM, CRLF, spaces and tabs around cells, quoted numbers, '+' signs, exponents, blank lines.
  const std::string p = dir.write("t.csv",
                                  "\xEF\xBB\xBF p0 ,\t\"p1\"\r\n"
                                  "\r\n"
                                  " 0.25 , 0.75\r\n"
                                  "+1e-1,\"0.9\"\n"
                                  "\n"
                                  "  1,0  \n"
                                  "\n\n  \n");
  const auto t = ecekde::io::read_csv(p);
  EXPECT_EQ(t.names, (std::vector<std::string>{"p0", "p1"}));
  EXPECT_EQ(t.values, (std::vector<double>{0.25, 0.75, 0.1, 0.9, 1, 0}));
  EXPECT_EQ(t.lines, (std::vector<std::size_t>{3, 4, 6}));
  ASSERT_TRUE(t.first_non_integer[0]);
  EXPECT_EQ(t.first_non_integer[0]->line, 3u);
  EXPECT_EQ(t.first_non_integer[0]->text, "0.25");
  ASSERT_TRUE(t.first_non_integer[1]);
  EXPECT_EQ(t.first_non_integer[1]->line, 3u);
  EXPECT_EQ(t.first_non_integer[1]->text, "0.75");

  // No header: the first row is all numbers (nan and inf count as numbers; the estimator rejects them).
  const std::string q = dir.write("q.csv", "nan,1\ninf,-inf");
  const auto u = ecekde::io::read_csv(q);
  EXPECT_FALSE(u.has_header());
  EXPECT_TRUE(std::isnan(u(0, 0)));
  EXPECT_EQ(u(1, 1), -std::numeric_limits<double>::infinity());
}

TEST(Csv, BrokenFilesGiveExactMessages) {
  testfiles::ScratchDir dir;
  const auto bad = [&](const std::string& name, const std::string& text, const std::string& message) {
    SCOPED_TRACE(name);
    const std::string p = dir.write(name, text);
    EXPECT_ERROR(ecekde::io::read_csv(p), p + message);
  };
  const std::string missing = dir.path("missing.csv");
  EXPECT_ERROR(ecekde::io::read_csv(missing), missing + ": cannot open: No such file or directory");
  bad("empty.csv", "", ": no data rows");
  bad("blank.csv", "\n \n", ": no data rows");
  bad("header.csv", "a,b\n", ": no data rows");
  bad("ragged.csv", "a,b,c\n1,2,3\n\n4,5\n", " line 4: 2 columns, expected 3 (as in line 1)");
  bad("long.csv", "1,2\n3,4,5\n", " line 2: 3 columns, expected 2 (as in line 1)");
  bad("one.csv", "1,2\n3\n", " line 2: 1 column, expected 2 (as in line 1)");
  bad("text.csv", "a,b\n0.5,0.5\n0.5,abc\n", " line 3, column 1 ('b'): 'abc' is not a number");
  bad("noheader.csv", "0.5,0.5\n0.5,0.5x\n", " line 2, column 1: '0.5x' is not a number");
  bad("emptycell.csv", "a,b\n0.5,\n", " line 2, column 1 ('b'): empty cell");
  bad("quote.csv", "a,b\n\"0.5,0.5\n", " line 2: unterminated quoted cell");
  bad("afterquote.csv", "a,b\n\"0.5\"x,0.5\n", " line 2: unexpected text after a quoted cell");
  bad("semicolon.csv", "a;b\n0.5;0.5\n", " line 2, column 0 ('a;b'): '0.5;0.5' is not a number");
  // Control characters echoed from the file are escaped, so the message stays one printable line (a
  // lone carriage return, a terminal escape sequence; found by fuzzing, in an NPY dtype).
  bad("control.csv", "a,b\n0.5,0.5\n0.5,\x1b[31mred\r\r\n", " line 3, column 1 ('b'): '\\x1b[31mred\\x0d' is not a number");
}

TEST(Csv, Labels) {
  testfiles::ScratchDir dir;
  const std::string p = dir.write("labels.csv", "label\n0\n2\n1.0\n1e0\n");
  const auto labels = ecekde::io::read_labels(p);
  ASSERT_EQ(labels.view().size(), 4u);
  EXPECT_EQ(labels.view()[1], 2);
  EXPECT_EQ(labels.view()[3], 1);

  const std::string frac = dir.write("frac.csv", "label\n0\n1\n1\n2.5\n3.5\n");
  EXPECT_ERROR(ecekde::io::read_labels(frac), frac + " line 5: '2.5' is not an integer label");
  const std::string huge = dir.write("huge.csv", "1e19\n");
  EXPECT_ERROR(ecekde::io::read_labels(huge), huge + " line 1: '1e19' is not an integer label");
  const std::string two = dir.write("two.csv", "0,1\n");
  EXPECT_ERROR(ecekde::io::read_labels(two), two + ": labels must be one column, the file has 2 columns");
}

TEST(Csv, Probabilities) {
  testfiles::ScratchDir dir;
  const std::string p = dir.write("probs.csv", "p0,p1\n0.25,0.75\n0.5,0.5\n");
  const auto probs = ecekde::io::read_probabilities(p);
  const ecekde::ProbsView v = probs.view();
  EXPECT_EQ(v.rows(), 2u);
  EXPECT_EQ(v.cols(), 2u);
  EXPECT_EQ(v(0, 1), 0.75);
  EXPECT_EQ(v.dtype(), ecekde::ProbsView::DType::float64);
}

TEST(Csv, SingleFileForm) {
  testfiles::ScratchDir dir;
  const std::string p = dir.write("data.csv", "p0,label,p1\n0.25,1,0.75\n0.5,0,0.5\n0.9,0,0.1\n");
  for (const char* column : {"label", "1"}) {
    SCOPED_TRACE(column);
    const auto d = ecekde::io::read_predictions_csv(p, column);
    const ecekde::ProbsView v = d.probs.view();
    ASSERT_EQ(v.rows(), 3u);
    ASSERT_EQ(v.cols(), 2u);
    EXPECT_EQ(v(0, 0), 0.25);
    EXPECT_EQ(v(0, 1), 0.75);
    EXPECT_EQ(v(2, 1), 0.1);
    ASSERT_EQ(d.labels.view().size(), 3u);
    EXPECT_EQ(d.labels.view()[0], 1);
    EXPECT_EQ(d.labels.view()[2], 0);
  }
  // A header name wins over an index.
  const std::string named = dir.write("named.csv", "1,x\n0.3,1\n0.7,0\n");
  EXPECT_ERROR(ecekde::io::read_predictions_csv(named, "1"),
               named + " line 2, column 0 ('1'): '0.3' is not an integer label");
  EXPECT_EQ(ecekde::io::read_predictions_csv(named, "x").labels.view()[0], 1);

  EXPECT_ERROR(ecekde::io::read_predictions_csv(p, "y"), p + ": no column named 'y' (columns: p0, label, p1)");
  EXPECT_ERROR(ecekde::io::read_predictions_csv(p, "3"), p + ": label column 3 is out of range (the file has 3 columns)");
  EXPECT_ERROR(ecekde::io::read_predictions_csv(p, "0"), p + " line 2, column 0 ('p0'): '0.25' is not an integer label");
  const std::string plain = dir.write("plain.csv", "0.3,1\n");
  EXPECT_ERROR(ecekde::io::read_predictions_csv(plain, "label"),
               plain + ": no column named 'label' (the file has no header row; give the label column's 0-based index)");
  const std::string twice = dir.write("twice.csv", "y,p,y\n1,0.5,1\n");
  EXPECT_ERROR(ecekde::io::read_predictions_csv(twice, "y"), twice + ": column name 'y' appears more than once");
  const std::string lone = dir.write("lone.csv", "y\n1\n");
  EXPECT_ERROR(ecekde::io::read_predictions_csv(lone, "y"),
               lone + ": needs a label column and at least one probability column, the file has 1 column");
  const std::string npy = dir.write("data.npy", "");
  EXPECT_ERROR(ecekde::io::read_predictions_csv(npy, "0"), npy + ": expected a .csv file");
}

TEST(Files, FormatComesFromTheExtension) {
  testfiles::ScratchDir dir;
  const std::string upper = dir.write("P.CSV", "0.5\n0.25\n");
  EXPECT_EQ(ecekde::io::read_probabilities(upper).view()(1, 0), 0.25);
  const std::string txt = dir.write("p.txt", "0.5\n");
  EXPECT_ERROR(ecekde::io::read_probabilities(txt), txt + ": unknown file type (expected a .npy or .csv file)");
  EXPECT_ERROR(ecekde::io::read_labels(txt), txt + ": unknown file type (expected a .npy or .csv file)");
  const std::string csv_named_npy = dir.write("p.npy", "0.5\n");
  EXPECT_ERROR(ecekde::io::read_probabilities(csv_named_npy),
               csv_named_npy + ": not an NPY file (it does not start with the magic string \\x93NUMPY)");
}

}  // namespace

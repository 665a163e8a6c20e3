#include "core/problems.hpp"

#include <algorithm>

#include "core/messages.hpp"
#include "core/parallel.hpp"

namespace ecekde::detail {

LabelledPoints LabelledPoints::make(const std::vector<double>& x, std::size_t dim,
                                    const std::vector<std::int32_t>& labels, std::size_t classes,
                                    bool one_dimensional) {
  const std::size_t n = labels.size();
  ECEKDE_ASSERT(x.size() == n * dim);
  LabelledPoints lp;
  lp.classes = classes;
  lp.one_dimensional = one_dimensional;
  lp.class_begin.assign(classes + 1, 0);
  for (auto y : labels) ++lp.class_begin[static_cast<std::size_t>(y) + 1];
  for (std::size_t c = 0; c < classes; ++c) lp.class_begin[c + 1] += lp.class_begin[c];
  lp.original.resize(n);
  std::vector<std::size_t> next(lp.class_begin.begin(), lp.class_begin.end() - 1);
  for (std::size_t r = 0; r < n; ++r) lp.original[next[static_cast<std::size_t>(labels[r])]++] = r;
  std::vector<double> sorted(n * dim);
  for (std::size_t j = 0; j < n; ++j)
    std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(lp.original[j] * dim), dim,
                sorted.begin() + static_cast<std::ptrdiff_t>(j * dim));
  lp.points = KernelPoints::from_rows(sorted.data(), n, dim);
  return lp;
}

std::size_t LabelledPoints::label(std::size_t i) const {
  return static_cast<std::size_t>(std::upper_bound(class_begin.begin(), class_begin.end(), i) -
                                  class_begin.begin()) - 1;
}

void check_type_applies(CalibrationType type, std::size_t k) {
  if (type == CalibrationType::binary) {
    if (k > 2)
      fail_with("type binary needs 1 column (P(y = 1)) or 2 columns, probs has ", k, " columns");
  } else if (k < 2) {
    fail_with("type ", to_string(type), " needs at least 2 classes, probs has 1 column");
  }
}

double problem_weight(CalibrationType type) { return type == CalibrationType::binary ? 2.0 : 1.0; }

// rest_j is computed from the other columns where there are any, so it keeps full relative precision
// when s_j is close to 1.
LabelledPoints one_dimensional_problem(const std::vector<double>& s, const std::vector<double>& rest,
                                       const std::vector<std::int32_t>& positive) {
  const std::size_t n = s.size();
  std::vector<double> x(2 * n);
  for (std::size_t j = 0; j < n; ++j) {
    x[2 * j] = s[j];
    x[2 * j + 1] = rest[j];
  }
  return LabelledPoints::make(x, 2, positive, 2, true);
}

namespace {

// Marginal's problem rows, class by class: emit(c, s_c, rest_c, positive_c), on `threads` (each class once).
// rest of class c = (sum of columns before c) + (sum of columns after c): sums of non-negative terms, so
// each keeps full relative precision. The classes go in blocks of 8 (a cache line of a row), in parallel:
// each block reads its columns row by row, once. Each row's running sums are kept at the blocks' edges
// first (the sum before the block's first class, the sum after its last), and each block continues them in
// the same order, so every sum is formed exactly as in one pass.
template <class Emit>
void marginal_blocks(const CheckedPredictions& pred, int threads, Emit emit) {
  const std::size_t n = pred.n, k = pred.k;
  constexpr std::size_t kBlock = 8;
  const std::size_t blocks = (k + kBlock - 1) / kBlock;
  std::vector<double> before_block(n * blocks), after_block(n * blocks);
  for (std::size_t j = 0; j < n; ++j) {
    double acc = 0;
    for (std::size_t c = 0; c < k; ++c) {
      if (c % kBlock == 0) before_block[j * blocks + c / kBlock] = acc;
      acc += pred(j, c);
    }
    acc = 0;
    for (std::size_t c = k; c-- > 0;) {
      if (c % kBlock == kBlock - 1 || c == k - 1) after_block[j * blocks + c / kBlock] = acc;
      acc += pred(j, c);
    }
  }
  parallel_for(blocks, threads, [&](std::size_t b, int) {
    const std::size_t c0 = b * kBlock, width = std::min(kBlock, k - c0);
    std::vector<std::vector<double>> s_of(width, std::vector<double>(n)), rest_of(width, std::vector<double>(n));
    std::vector<std::vector<std::int32_t>> positive_of(width, std::vector<std::int32_t>(n));
    for (std::size_t j = 0; j < n; ++j) {
      double acc = before_block[j * blocks + b];
      for (std::size_t w = 0; w < width; ++w) {
        rest_of[w][j] = acc;
        acc += pred(j, c0 + w);
      }
      acc = after_block[j * blocks + b];
      for (std::size_t w = width; w-- > 0;) {
        rest_of[w][j] += acc;
        acc += pred(j, c0 + w);
        s_of[w][j] = pred(j, c0 + w);
        positive_of[w][j] = static_cast<std::int32_t>(static_cast<std::size_t>(pred.y[j]) == c0 + w);
      }
    }
    for (std::size_t w = 0; w < width; ++w) emit(c0 + w, s_of[w], rest_of[w], positive_of[w]);
  });
}

}  // namespace

MarginalRows marginal_rows(const CheckedPredictions& pred, int threads) {
  MarginalRows out{std::vector<std::vector<double>>(pred.k), std::vector<std::vector<double>>(pred.k),
                   std::vector<std::vector<std::int32_t>>(pred.k)};
  marginal_blocks(pred, threads, [&](std::size_t c, std::vector<double>& s, std::vector<double>& rest,
                                     std::vector<std::int32_t>& positive) {
    out.s[c] = std::move(s);
    out.rest[c] = std::move(rest);
    out.positive[c] = std::move(positive);
  });
  return out;
}

std::size_t top_index(const CheckedPredictions& pred, std::size_t j) {
  std::size_t top = 0;
  for (std::size_t c = 1; c < pred.k; ++c)
    if (pred(j, c) > pred(j, top)) top = c;
  return top;
}

std::vector<LabelledPoints> make_problems(const CheckedPredictions& pred, CalibrationType type, int threads) {
  check_type_applies(type, pred.k);
  const std::size_t n = pred.n, k = pred.k;
  std::vector<LabelledPoints> out;
  std::vector<double> s(n), rest(n);
  std::vector<std::int32_t> positive(n);
  switch (type) {
    case CalibrationType::canonical:
      out.push_back(LabelledPoints::make(pred.f, k, pred.y, k, false));
      break;
    case CalibrationType::binary:
      for (std::size_t j = 0; j < n; ++j) {
        s[j] = pred(j, k - 1);
        rest[j] = k == 1 ? 1 - s[j] : pred(j, 0);
        positive[j] = pred.y[j];
      }
      out.push_back(one_dimensional_problem(s, rest, positive));
      break;
    case CalibrationType::top_label:
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t top = top_index(pred, j);
        double other = 0;
        for (std::size_t c = 0; c < k; ++c)
          if (c != top) other += pred(j, c);
        s[j] = pred(j, top);
        rest[j] = other;
        positive[j] = static_cast<std::int32_t>(static_cast<std::size_t>(pred.y[j]) == top);
      }
      out.push_back(one_dimensional_problem(s, rest, positive));
      break;
    case CalibrationType::marginal:
      out.resize(k);
      marginal_blocks(pred, threads, [&](std::size_t c, std::vector<double>& s_c, std::vector<double>& rest_c,
                                         std::vector<std::int32_t>& positive_c) {
        out[c] = one_dimensional_problem(s_c, rest_c, positive_c);
      });
      break;
  }
  return out;
}

}  // namespace ecekde::detail

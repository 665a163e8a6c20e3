// Sums over distinct indices, the core of every U-statistic with a product kernel.
#pragma once

#include <span>

namespace ecekde::detail {

/// sum over ordered tuples (i_1, ..., i_m) of pairwise distinct indices of prod_t factors[t][i_t], for
/// 1 <= m <= 4 factors of equal length n. Computed in O(n) from the power sums of the factors' products
/// by Moebius inversion over the set partitions of {1, ..., m}: the sum over all tuples constrained only
/// to agree within each block is a product of single sums, and inclusion-exclusion with the weights
/// prod over blocks of (-1)^(|B|-1) (|B|-1)! leaves the tuples with all indices distinct. Dividing by
/// n (n-1) ... (n-m+1) gives the unbiased estimate of prod_t E[factor_t].
double distinct_product_sum(std::span<const std::span<const double>> factors);

/// n (n - 1) ... (n - m + 1).
double falling_factorial(std::size_t n, std::size_t m);

}  // namespace ecekde::detail

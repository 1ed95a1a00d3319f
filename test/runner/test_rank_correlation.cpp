// Spearman's rho and Kendall's tau-b, checked against values worked by hand.

#include "test/catch2_compat.h"

#include "db/rank_correlation.h"

using namespace gpusched::db;

TEST_CASE("rank correlations are 1 for the same order and -1 for the reverse", "[stats]") {
    const std::vector<double> a = {1, 2, 3, 4, 5}, same = {10, 20, 30, 40, 50}, reverse = {5, 4, 3, 2, 1};
    CHECK(*spearman_rho(a, same) == Approx(1.0));
    CHECK(*kendall_tau_b(a, same) == Approx(1.0));
    CHECK(*spearman_rho(a, reverse) == Approx(-1.0));
    CHECK(*kendall_tau_b(a, reverse) == Approx(-1.0));
}

TEST_CASE("rank correlations of a partly swapped order match hand-computed values", "[stats]") {
    // Ranks 1 2 3 4 against 2 1 4 3: d^2 sums to 4, rho = 1 - 6*4/(4*15) = 0.6;
    // pairs: 4 concordant, 2 discordant of 6, tau = 2/6.
    const std::vector<double> a = {1, 2, 3, 4}, b = {2, 1, 4, 3};
    CHECK(*spearman_rho(a, b) == Approx(0.6));
    CHECK(*kendall_tau_b(a, b) == Approx(1.0 / 3.0));
}

TEST_CASE("ties share their average rank and tau-b corrects for them", "[stats]") {
    // b ties its first two: ranks 1.5 1.5 3; tau-b = (2 - 0) / sqrt(3 * 2).
    const std::vector<double> a = {1, 2, 3}, b = {7, 7, 9};
    CHECK(*kendall_tau_b(a, b) == Approx(2.0 / std::sqrt(6.0)));
    CHECK(*spearman_rho(a, b) == Approx(0.8660254));
}

TEST_CASE("rank correlations need two samples and some spread", "[stats]") {
    CHECK_FALSE(spearman_rho({1}, {2}));
    CHECK_FALSE(kendall_tau_b({1}, {2}));
    CHECK_FALSE(spearman_rho({1, 2, 3}, {4, 4, 4}));
    CHECK_FALSE(kendall_tau_b({1, 2, 3}, {4, 4, 4}));
}

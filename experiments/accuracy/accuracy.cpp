// The accuracy study of the default (crossfit) estimator against ground truth, side by side with the
// paper's estimator and its alternatives (docs/validation.md). Writes CSV to stdout:
//   ecekde_accuracy truth       K...           true CE_p^p of every zoo model (p = 1, 2)
//   ecekde_accuracy table       N SETS K...    every estimator, every model, at n = N
//   ecekde_accuracy convergence SETS K N...    crossfit (and paper up to n = 10,000) over n
//   ecekde_accuracy coverage    SETS N K...    crossfit intervals over many data sets
//   ecekde_accuracy cells       SETS [DRAWS]   crossfit on few distinct predictions: mean and coverage, for
//                                              DRAWS models of each shape (draw d: cell seed + 1000 d; 1)
//   ecekde_accuracy held-out    SETS N K...    crossfit on the held-out models (research::held_out): truth,
//                                              mean, its error relative and in standard errors, coverage
//   ecekde_accuracy summary     SETS N K...    the same for the zoo's models (research::family), at any K
//   ecekde_accuracy imagenet-like SETS N K...  the same for research::imagenet_like (its map in closed form)
//   ecekde_accuracy saturated   SETS N K...    the same for research::saturated (exact zeros among f)
// Data set s of a model uses seed 1000 + s (held-out: 500 + s); the truths use 2^22 Monte Carlo draws
// (held-out, summary, imagenet-like and saturated: 2^20, or fewer at large K so that draws x K <= 2^27).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ecekde/binned.hpp"
#include "ecekde/estimate.hpp"
#include "zoo.hpp"
#include "../readings.hpp"

using namespace ecekde;
using research::ZooModel;

namespace {

void row(std::FILE* out, const std::string& prefix, CalibrationType type, double p, const std::string& estimator,
         double ce, double lower, double upper, double h, double seconds) {
  std::fprintf(out, "%s,%s,%g,%s,%.10g,%.10g,%.10g,%.6g,%.4f\n", prefix.c_str(), std::string(to_string(type)).c_str(),
               p, estimator.c_str(), ce, lower, upper, h, seconds);
  std::fflush(out);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void kde(const research::ZooData& d, CalibrationType type, double p, ecekde::Estimator which,
         BandwidthCriterion criterion, KdeForm form, const std::string& name, std::FILE* out, const std::string& prefix) {
  EstimateOptions o;
  o.estimator = which;
  o.type = type;
  o.p = p;
  o.bandwidth_selection.criterion = criterion;
  o.form = form;
  const double t0 = now();
  const Result r = estimate(d.probs_view(), d.labels_view(), o);
  const double lo = r.ce_interval ? r.ce_interval->lower : r.ce, hi = r.ce_interval ? r.ce_interval->upper : r.ce;
  row(out, prefix, type, p, name, r.ce, lo, hi, r.bandwidth, now() - t0);
}

void binned(const research::ZooData& d, CalibrationType type, double p, std::FILE* out, const std::string& prefix) {
  BinnedOptions o;
  o.type = type;
  o.p = p;
  if (type != CalibrationType::top_label) o.bins.reset();  // Doane's bins per class
  const double t0 = now();
  const BinnedResult r = binned_calibration_error(d.probs_view(), d.labels_view(), o);
  row(out, prefix, type, p, "binned", r.ce, r.ce, r.ce, 0, now() - t0);
}

std::vector<std::size_t> numbers(int argc, char** argv, int from) {
  std::vector<std::size_t> v;
  for (int i = from; i < argc; ++i) v.push_back(std::stoul(argv[i]));
  return v;
}

constexpr CalibrationType kTypes[] = {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label};

// Calls run(data, prefix) for data set s = 0 .. sets - 1 (seed 1000 + s) of every zoo model at each K, with
// the CSV prefix "k,model,n,set".
template <class Run>
void for_each_data_set(const std::vector<std::size_t>& ks, std::size_t n, std::size_t sets, Run run) {
  for (std::size_t k : ks)
    for (const ZooModel& m : research::family(k))
      for (std::size_t s = 0; s < sets; ++s)
        run(research::sample(m, n, 1000 + s),
            std::to_string(k) + "," + m.name + "," + std::to_string(n) + "," + std::to_string(s));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  std::FILE* out = stdout;
  if (mode == "truth" && argc > 2) {
    std::printf("k,model,p,canonical,marginal,top_label,canonical_se\n");
    for (std::size_t k : numbers(argc, argv, 2))
      for (const ZooModel& m : research::family(k))
        for (const research::ZooTruth& t : research::truth(m, {1.0, 2.0}, 1 << 22))
          std::printf("%zu,%s,%g,%.10g,%.10g,%.10g,%.3g\n", k, m.name.c_str(), t.p, t.canonical, t.marginal,
                      t.top_label, t.canonical_standard_error);
    return 0;
  }
  if (mode == "cells" && argc > 2) {
    const std::size_t sets = std::stoul(argv[2]), draws = argc > 3 ? std::stoul(argv[3]) : 1;
    struct Spec {
      std::size_t cells, k;
      double gamma;
      std::size_t n;
    };
    std::fprintf(out, "cells,k,gamma,n,draw,type,p,truth,mean,coverage\n");
    for (const Spec spec : {Spec{2, 2, 1.8, 1000}, Spec{3, 2, 1.8, 2000}, Spec{3, 3, 1.8, 1000}, Spec{3, 3, 1.0, 1000},
                            Spec{5, 3, 1.8, 2000}, Spec{5, 3, 0.6, 2000}, Spec{4, 4, 1.8, 4000}, Spec{10, 3, 1.8, 2000}}) {
      for (std::size_t draw = 0; draw < draws; ++draw) {
        const research::CellModel m =
            research::cell_model(spec.cells, spec.k, spec.gamma, 31 * spec.cells + spec.k + 1000 * draw);
        std::vector<research::ZooData> data;
        for (std::size_t s = 0; s < sets; ++s) data.push_back(research::sample(m, spec.n, 1000 + s));
        for (CalibrationType t : kTypes)
          for (double p : {1.0, 2.0}) {
            const research::ZooTruth truth = research::truth(m, p);
            const double target = t == CalibrationType::top_label ? truth.top_label : truth.canonical;
            const research::Readings r = research::crossfit_readings(data, t, p, target);
            std::fprintf(out, "%zu,%zu,%g,%zu,%zu,%s,%g,%.6g,%.6g,%.4f\n", spec.cells, spec.k, spec.gamma, spec.n, draw,
                         std::string(to_string(t)).c_str(), p, target, r.mean, r.coverage);
            std::fflush(out);
          }
      }
    }
    return 0;
  }
  if ((mode == "held-out" || mode == "summary" || mode == "imagenet-like" || mode == "saturated") && argc > 4) {
    const std::size_t sets = std::stoul(argv[2]), n = std::stoul(argv[3]);
    const bool held_out = mode == "held-out";
    std::fprintf(out, "k,model,type,p,truth,mean,relative_error,standard_errors,coverage\n");
    for (std::size_t k : numbers(argc, argv, 4))
      for (const ZooModel& m : held_out                   ? research::held_out(k)
                               : mode == "imagenet-like" ? std::vector<ZooModel>{research::imagenet_like(k)}
                               : mode == "saturated"     ? research::saturated(k)
                                                         : research::family(k)) {
        std::size_t draws = std::size_t{1} << 20;
        while (draws * k > (std::size_t{1} << 27)) draws /= 2;
        const std::vector<research::ZooTruth> truths = research::truth(m, {1.0, 2.0}, draws);
        std::vector<research::ZooData> data;
        for (std::size_t s = 0; s < sets; ++s) data.push_back(research::sample(m, n, (held_out ? 500 : 1000) + s));
        for (CalibrationType t : kTypes)
          for (const research::ZooTruth& truth : truths) {
            const double target = t == CalibrationType::canonical  ? truth.canonical
                                  : t == CalibrationType::marginal ? truth.marginal
                                                                   : truth.top_label;
            const research::Readings r = research::crossfit_readings(data, t, truth.p, target);
            // Calibrated models' truths are 0 up to the Monte Carlo fit: no relative error. A mean of equal
            // readings (all 0) has no standard error either.
            const std::string relative = target > 1e-6 ? std::to_string(r.mean / target - 1) : "";
            const std::string errors =
                r.sd > 0 ? std::to_string((r.mean - target) / (r.sd / std::sqrt(static_cast<double>(sets)))) : "";
            std::fprintf(out, "%zu,%s,%s,%g,%.6g,%.6g,%s,%s,%.3f\n", k, m.name.c_str(),
                         std::string(to_string(t)).c_str(), truth.p, target, r.mean, relative.c_str(), errors.c_str(),
                         r.coverage);
            std::fflush(out);
          }
      }
    return 0;
  }
  std::printf("k,model,n,set,type,p,estimator,ce,lower,upper,bandwidth,seconds\n");
  if (mode == "table" && argc > 4) {
    const std::size_t n = std::stoul(argv[2]), sets = std::stoul(argv[3]);
    for_each_data_set(numbers(argc, argv, 4), n, sets, [&](const research::ZooData& d, const std::string& prefix) {
      for (CalibrationType t : kTypes)
        for (double p : {1.0, 2.0}) {
          kde(d, t, p, ecekde::Estimator::crossfit, BandwidthCriterion::loo_likelihood, KdeForm::plug_in, "crossfit", out, prefix);
          kde(d, t, p, ecekde::Estimator::paper, BandwidthCriterion::loo_likelihood, KdeForm::plug_in, "paper", out, prefix);
          kde(d, t, p, ecekde::Estimator::paper, BandwidthCriterion::loo_regression, KdeForm::plug_in, "loo-regression", out, prefix);
          if (p == 2)
            kde(d, t, p, ecekde::Estimator::paper, BandwidthCriterion::loo_regression, KdeForm::debiased, "debiased", out, prefix);
          binned(d, t, p, out, prefix);
        }
    });
    return 0;
  }
  if (mode == "convergence" && argc > 4) {
    const std::size_t sets = std::stoul(argv[2]), k = std::stoul(argv[3]);
    for (const char* name : {"peaked-overconfident", "top-class-only", "calibrated-peaked"})
      for (std::size_t n : numbers(argc, argv, 4))
        for (std::size_t s = 0; s < sets; ++s) {
          const ZooModel m = research::model_named(name, k);
          const research::ZooData d = research::sample(m, n, 1000 + s);
          const std::string prefix = std::to_string(k) + "," + m.name + "," + std::to_string(n) + "," + std::to_string(s);
          for (CalibrationType t : {CalibrationType::canonical, CalibrationType::marginal})
            for (double p : {1.0, 2.0}) {
              kde(d, t, p, ecekde::Estimator::crossfit, BandwidthCriterion::loo_likelihood, KdeForm::plug_in, "crossfit", out, prefix);
              if (n <= 10000)
                kde(d, t, p, ecekde::Estimator::paper, BandwidthCriterion::loo_likelihood, KdeForm::plug_in, "paper", out, prefix);
            }
        }
    return 0;
  }
  if (mode == "coverage" && argc > 4) {
    const std::size_t sets = std::stoul(argv[2]), n = std::stoul(argv[3]);
    for_each_data_set(numbers(argc, argv, 4), n, sets, [&](const research::ZooData& d, const std::string& prefix) {
      for (CalibrationType t : kTypes)
        for (double p : {1.0, 2.0})
          kde(d, t, p, ecekde::Estimator::crossfit, BandwidthCriterion::loo_likelihood, KdeForm::plug_in, "crossfit", out, prefix);
    });
    return 0;
  }
  std::fprintf(stderr, "usage: ecekde_accuracy truth K... | table N SETS K... | convergence SETS K N... | coverage SETS N K... | cells SETS [DRAWS] | held-out SETS N K... | summary SETS N K... | imagenet-like SETS N K... | saturated SETS N K...\n");
  return 2;
}

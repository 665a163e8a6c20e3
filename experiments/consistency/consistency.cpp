// The consistency study of the default (crossfit) estimator (docs/validation.md, "Consistency on local
// maps"): error against n on research::local_maps, miscalibrations confined to a region of the simplex
// that no parametric pilot follows, with truths by Monte Carlo from the maps themselves (research::truth;
// no estimator involved). Writes CSV to stdout, one line per (K, model, n, type, p):
//   ecekde_consistency DRAW SETS K[,K...] N...
// DRAW picks the models' parameters (research::local_maps; draw 0 is the design set); data set s uses seed
// 700 + s. Columns: the truth, the mean of CE_p^p over the sets, its relative error, the sets' standard
// deviation, the intervals' coverage, the share of sets whose correction bandwidth was the grid's widest
// (the kernel correction flat: the estimate is the pilot's) and the mean seconds per estimate.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "ecekde/estimate.hpp"
#include "zoo.hpp"
#include "../readings.hpp"

using namespace ecekde;

namespace {

std::vector<std::size_t> list_of(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoul(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: ecekde_consistency DRAW SETS K[,K...] N...\n");
    return 2;
  }
  const std::uint64_t draw = std::stoull(argv[1]);
  const std::size_t sets = std::stoul(argv[2]);
  std::vector<std::size_t> ns;
  for (int i = 4; i < argc; ++i) ns.push_back(std::stoul(argv[i]));
  std::printf("draw,k,model,n,type,p,truth,mean,relative_error,sd,coverage,widest,seconds\n");
  for (std::size_t k : list_of(argv[3]))
    for (const research::ZooModel& m : research::local_maps(k, draw)) {
      std::size_t draws = std::size_t{1} << 20;
      while (draws * k > (std::size_t{1} << 26)) draws /= 2;
      const std::vector<research::ZooTruth> truths = research::truth(m, {1.0, 2.0}, draws);
      for (std::size_t n : ns) {
        std::vector<research::ZooData> data;
        for (std::size_t s = 0; s < sets; ++s) data.push_back(research::sample(m, n, 700 + s));
        for (CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal})
          for (const research::ZooTruth& t : truths) {
            const double truth = type == CalibrationType::canonical ? t.canonical : t.marginal;
            const research::Readings r = research::crossfit_readings(data, type, t.p, truth);
            // A calibrated model's truth is 0 up to the Monte Carlo fit: no relative error.
            const std::string relative = truth > 1e-6 ? std::to_string(r.mean / truth - 1) : "";
            std::printf("%llu,%zu,%s,%zu,%s,%g,%.6g,%.6g,%s,%.4g,%.3f,%.3f,%.3f\n",
                        static_cast<unsigned long long>(draw), k, m.name.c_str(), n,
                        std::string(to_string(type)).c_str(), t.p, truth, r.mean, relative.c_str(), r.sd, r.coverage,
                        r.widest, r.seconds);
            std::fflush(stdout);
          }
      }
    }
  return 0;
}

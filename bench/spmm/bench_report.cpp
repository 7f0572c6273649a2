#include "bench/spmm/bench_report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "core/error.hpp"

namespace blockeigs::spmm::bench {
namespace {

bool is_cusparse(const Record& r) { return r.algorithm.rfind("cusparse", 0) == 0; }

std::string fixed(double x, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << x;
  return s.str();
}

}  // namespace

void set_speedups(std::vector<Record>& one_case) {
  double best = 0.0;
  for (const Record& r : one_case)
    if (is_cusparse(r) && r.measured() && r.check == "PASS" && (best == 0.0 || r.seconds < best)) best = r.seconds;
  for (Record& r : one_case) r.speedup = best > 0.0 && r.measured() ? best / r.seconds : 0.0;
}

void print_table_header(std::ostream& out) {
  out << std::left << std::setw(22) << "matrix" << std::setw(6) << "prec" << std::right << std::setw(5) << "n"
      << "  " << std::left << std::setw(28) << "algorithm" << std::right << std::setw(11) << "time_us" << std::setw(9)
      << "GFLOP/s" << std::setw(8) << "%bound" << std::setw(9) << "vs_cusp"
      << "  check\n";
}

void print_record(std::ostream& out, const Record& r) {
  std::string algorithm = r.algorithm;
  if (!r.chosen.empty()) algorithm += "(" + r.chosen + (r.slab > 0 ? " by " + std::to_string(r.slab) : "") + ")";
  out << std::left << std::setw(22) << r.matrix << std::setw(6) << r.precision << std::right << std::setw(5) << r.n
      << "  " << std::left << std::setw(28) << algorithm << std::right;
  if (r.measured())
    out << std::setw(11) << fixed(r.seconds * 1e6, 1) << std::setw(9) << fixed(r.gflops, 1) << std::setw(8)
        << fixed(r.pct_bound, 1) << std::setw(9) << (r.ours() && r.speedup > 0 ? fixed(r.speedup, 2) + "x" : "");
  else
    out << std::setw(11) << "-" << std::setw(9) << "-" << std::setw(8) << "-" << std::setw(9) << "";
  out << "  " << r.check;
  if (!r.note.empty()) out << "  " << r.note;
  out << "\n";
}

void write_csv(const std::string& path, const std::vector<Record>& records) {
  std::ofstream out(path);
  if (!out) throw InputError("cannot write the CSV file " + path);
  out << "matrix,rows,cols,nnz,mean_row_length,max_row_length,scattered,span,precision,n,algorithm,chosen,slab,"
         "time_us,gflops,"
         "pct_bound,speedup_vs_best_cusparse,check,copies,reps,note\n";
  for (const Record& r : records) {
    std::string note = r.note;
    std::replace(note.begin(), note.end(), ',', ';');
    out << r.matrix << ',' << r.rows << ',' << r.cols << ',' << r.nnz << ',' << r.mean_row_length << ','
        << r.max_row_length << ',' << fixed(r.scattered, 4) << ',' << fixed(r.span, 1) << ',' << r.precision << ','
        << r.n << ',' << r.algorithm << ',' << r.chosen << ',' << (r.slab > 0 ? std::to_string(r.slab) : "") << ','
        << (r.measured() ? fixed(r.seconds * 1e6, 3) : "") << ',' << fixed(r.gflops, 3) << ',' << fixed(r.pct_bound, 2)
        << ',' << fixed(r.speedup, 4) << ',' << r.check << ',' << r.copies << ',' << r.reps << ',' << note << '\n';
  }
}

bool print_summary(std::ostream& out, const std::vector<Record>& records) {
  // Index: (precision, matrix, n) -> algorithm -> record.
  std::map<std::string, std::map<std::pair<std::string, std::int64_t>, std::map<std::string, const Record*>>> cases;
  bool all_passed = true;
  for (const Record& r : records) {
    cases[r.precision][{r.matrix, r.n}][r.algorithm] = &r;
    all_passed = all_passed && r.check != "FAIL";
  }
  out << "\n== summary\n";
  for (const auto& [precision, by_case] : cases) {
    double log_sum = 0.0, worst = 0.0;
    std::string worst_case;
    int speedups = 0, compared = 0, within = 0;
    std::vector<std::string> laplacian;
    bool laplacian_ok = true;
    for (const auto& [key, algorithms] : by_case) {
      const auto find = [&](const std::string& name) -> const Record* {
        const auto it = algorithms.find(name);
        return it != algorithms.end() && it->second->measured() && it->second->check == "PASS" ? it->second : nullptr;
      };
      const Record* automatic = find("automatic");
      if (!automatic) continue;
      if (automatic->speedup > 0.0) {
        log_sum += std::log(automatic->speedup);
        ++speedups;
        if (worst == 0.0 || automatic->speedup < worst) {
          worst = automatic->speedup;
          worst_case = key.first + " n=" + std::to_string(key.second);
        }
      }
      const Record* rs = find("row_split");
      const Record* mb = find("merge_based");
      if (rs || mb) {
        const double best = std::min(rs ? rs->seconds : 1e300, mb ? mb->seconds : 1e300);
        ++compared;
        within += automatic->seconds <= 1.05 * best;
      }
      if (key.first.rfind("lap7pt", 0) == 0 && key.second <= 16) {
        laplacian.push_back("n=" + std::to_string(key.second) + ": " + fixed(automatic->pct_bound, 0) + "%");
        laplacian_ok = laplacian_ok && automatic->pct_bound >= 60.0;
      }
    }
    const double geomean = speedups ? std::exp(log_sum / speedups) : 0.0;
    const double fraction = compared ? double(within) / compared : 0.0;
    out << precision << ": automatic vs best cuSPARSE per case: geomean " << fixed(geomean, 2) << "x, min "
        << fixed(worst, 2) << "x (" << worst_case << "), " << speedups << " cases\n";
    out << precision << ": automatic within 5% of the faster of row_split/merge_based in " << within << " of "
        << compared << " cases (" << fixed(100.0 * fraction, 1) << "%)\n";
    out << precision << ": 7-point Laplacian, automatic, % of traffic bound:";
    for (const std::string& s : laplacian) out << "  " << s;
    out << (laplacian.empty() ? "  (not run)" : "") << "\n";
    const bool met = geomean >= 1.5 && worst >= 0.9 && fraction >= 0.95 && laplacian_ok;
    out << precision << ": performance bar (geomean >= 1.5x, min >= 0.9x, heuristic >= 95%, Laplacian >= 60%): "
        << (met ? "met" : "NOT met") << "\n";
  }
  out << "checks: " << (all_passed ? "all passed" : "FAILURES (see FAIL rows)") << "\n";
  return all_passed;
}

}  // namespace blockeigs::spmm::bench

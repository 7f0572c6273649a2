#include "apps/run/window/window_report.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/run/steps/scientific.hpp"

namespace blockeigs::apps {
namespace {

// Whether the pairs found lie within three standard errors (and one pair) of the density's count.
bool count_agrees(const solver::CountEstimate& e, int found) { return std::abs(found - e.count) <= 3 * e.error + 1; }

void print_slices(const solver::WindowReport& report) {
  const bool certified = report.certified >= 0, grouped = report.groups > 1;
  if (grouped)
    std::printf(
        "groups     %d groups of ranks solved the slices side by side (eigensolver.slice_groups), consecutive slices "
        "to each: A copied to the groups in %.3f s, the pairs moved back and merged at the groups' shared ends "
        "in %.3f s\n",
        report.groups, report.time_groups, report.time_merge);
  std::printf("  slice           lower           upper     expected%s  found  block  degree  iterations  seconds%s\n",
              certified ? "  certified" : "", grouped ? "  group  merged" : "");
  for (std::size_t i = 0; i < report.slices.size(); ++i) {
    const solver::SliceReport& s = report.slices[i];
    char count[32] = "";
    if (certified) std::snprintf(count, sizeof count, " %lld", static_cast<long long>(s.certified));
    char group[32] = "";
    if (grouped) std::snprintf(group, sizeof group, "  %5d  %6d", s.group, s.duplicates);
    std::printf("  %5zu  %14.8e  %14.8e  %6.1f ± %-4.1f%*s %6d %6d %7d %11d %8.3f%s%s\n", i, s.lower, s.upper,
                s.expected.count, s.expected.error, certified ? 11 : 0, count, s.found, s.block, s.degree, s.iterations,
                s.seconds, group,
                !s.complete                           ? "  NOT complete"
                : certified && s.found != s.certified ? "  NOT the certified count"
                                                      : "");
  }
}

// The count line and its note where an inertia vouched for the count.
void print_certified(const solver::WindowReport& report, int found) {
  const solver::CountEstimate& e = report.expected;
  std::printf(
      "count      %lld eigenvalue%s in [a, b], certified by inertia (%s, %d factorizations, %.2f s); %d found; "
      "the density of states estimated %.1f ± %.1f\n",
      static_cast<long long>(report.certified), report.certified == 1 ? "" : "s", report.count_method.c_str(),
      report.factorizations, report.time_inertia, found, e.count, e.error);
  if (found == report.certified) return;
  std::printf("note: %d pairs found where the inertia counts %lld in [a, b]:", found,
              static_cast<long long>(report.certified));
  for (std::size_t i = 0; i < report.slices.size(); ++i) {
    const solver::SliceReport& s = report.slices[i];
    if (s.found != s.certified)
      std::printf(" slice %zu [%s, %s] found %d of %lld;", i, scientific(s.lower, 10).c_str(),
                  scientific(s.upper, 10).c_str(), s.found, static_cast<long long>(s.certified));
  }
  std::printf(" %s\n", found < report.certified
                           ? "the pairs missing were not found within eigensolver.max_iterations (a slice's limit)"
                           : "more pairs than eigenvalues: an eigenvalue at a slice's end to within the tolerance was "
                             "taken by both slices, or the tolerance is above the gaps there");
}

}  // namespace

void print_window_report(const solver::WindowReport& report, const solver::WindowOptions& window, int found,
                         const std::string& count_why) {
  std::printf("\nwindow     [%s, %s]; the spectrum within [%s, %s] (Lanczos bounds)\n",
              scientific(window.lower, 10).c_str(), scientific(window.upper, 10).c_str(),
              scientific(report.spectrum_lower, 6).c_str(), scientific(report.spectrum_upper, 6).c_str());
  if (report.outside_spectrum) {
    std::printf("count      0 eigenvalues in [a, b]: the window lies outside the spectrum's bounds\n");
    return;
  }
  if (report.certified >= 0) {
    print_certified(report, found);
    if (!report.slices.empty()) print_slices(report);
    return;
  }
  const solver::CountEstimate& e = report.expected;
  std::printf(
      "count      %d eigenvalue%s found in [a, b]; the density of states estimated %.1f ± %.1f (%d random "
      "vectors, %d moments, %lld column products); %s\n",
      found, found == 1 ? "" : "s", e.count, e.error, report.dos_vectors, report.dos_degree,
      static_cast<long long>(report.dos_products), count_why.c_str());
  if (!count_agrees(e, found))
    std::printf(
        "note: %d pairs found where the density of states estimated %.1f ± %.1f: the estimate is a stochastic "
        "one smoothed over the filter's resolution (more eigensolver.dos_vectors narrow it), and every pair "
        "found passed the test; an eigenvalue the slices missed would have to hide from a filter that keeps "
        "its vector\n",
        found, e.count, e.error);
  if (!report.slices.empty()) print_slices(report);
}

void write_window_datasets(io::Hdf5Writer& w, const solver::WindowReport& report, const solver::WindowOptions& window) {
  w.attribute("/", "interval_lower", window.lower);
  w.attribute("/", "interval_upper", window.upper);
  w.attribute("/", "spectrum_lower", report.spectrum_lower);
  w.attribute("/", "spectrum_upper", report.spectrum_upper);
  w.attribute("/", "outside_spectrum", report.outside_spectrum);
  w.attribute("/", "expected_count", report.expected.count);
  w.attribute("/", "expected_count_error", report.expected.error);
  w.attribute("/", "count_certified", report.certified >= 0);
  if (report.certified >= 0) {
    w.attribute("/", "certified_count", report.certified);
    w.attribute("/", "certified_below", report.certified_below);
    w.attribute("/", "count_method", report.count_method);
    w.attribute("/", "inertia_factorizations", std::int64_t{report.factorizations});
    w.attribute("/", "time_inertia", report.time_inertia);
  }
  w.attribute("/", "dos_vectors", std::int64_t{report.dos_vectors});
  w.attribute("/", "dos_degree", std::int64_t{report.dos_degree});
  w.attribute("/", "slice_groups", std::int64_t{report.groups});
  w.attribute("/", "time_slice_groups", report.time_groups);
  w.attribute("/", "time_slice_merge", report.time_merge);
  if (report.slices.empty()) return;  // outside the spectrum: nothing was solved
  std::vector<double> lower, upper, expected, error, seconds;
  std::vector<std::int64_t> found, certified, block, degree, iterations, products, single, complete, group, merged;
  for (const solver::SliceReport& s : report.slices) {
    lower.push_back(s.lower);
    upper.push_back(s.upper);
    expected.push_back(s.expected.count);
    error.push_back(s.expected.error);
    seconds.push_back(s.seconds);
    found.push_back(s.found);
    certified.push_back(s.certified);
    block.push_back(s.block);
    degree.push_back(s.degree);
    iterations.push_back(s.iterations);
    products.push_back(s.products);
    single.push_back(s.single_products);
    complete.push_back(s.complete ? 1 : 0);
    group.push_back(s.group);
    merged.push_back(s.duplicates);
  }
  w.write("/window/lower", lower);
  w.write("/window/upper", upper);
  w.write("/window/expected", expected);
  w.write("/window/expected_error", error);
  w.write("/window/found", found);
  if (report.certified >= 0) w.write("/window/certified", certified);
  w.write("/window/block", block);
  w.write("/window/degree", degree);
  w.write("/window/iterations", iterations);
  w.write("/window/products", products);
  w.write("/window/products_fp32", single);
  w.write("/window/seconds", seconds);
  w.write("/window/complete", complete);
  w.write("/window/group", group);
  w.write("/window/merged", merged);
  if (!report.density.empty()) {
    w.write("/density/x", report.density[0]);
    w.write("/density/values", report.density[1]);
  }
}

}  // namespace blockeigs::apps

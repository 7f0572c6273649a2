// The window's driver (window.hpp says the method): bounds, density, slices,
// then each slice's iteration and the pairs gathered.
#include "solver/window/window.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <numeric>
#include <type_traits>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/chfsi/spectrum_bounds.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "solver/window/slice_merge.hpp"

namespace blockeigs::solver {
namespace {

constexpr int kLanczosSteps = 60;
constexpr double kMargin = 0.01;          // the scaled spectrum's share of [-1, 1] left free at each end
constexpr double kFilterResolution = 2;   // the filter resolves a slice's Chebyshev angle this many times
constexpr double kReach = 0.01;           // the block holds the eigenvectors the filter keeps above this share
constexpr double kDensityResolution = 4;  // the density's moments resolve the window's angle this many times
constexpr int kMaxDegree = 20000;
constexpr int kPairsPerSlice = 1000;

// Every rank holds the same options, so each finds the same error (fail_input_everywhere: no rank waits).
void check(const WindowOptions& w, const LobpcgOptions& o, int ranks, bool groups_possible) {
  if (!std::isfinite(w.lower) || !std::isfinite(w.upper))
    fail_input_everywhere("eigensolver.interval: its ends must be finite, got [", w.lower, ", ", w.upper, "]");
  if (!(w.lower < w.upper))
    fail_input_everywhere("eigensolver.interval: [a, b] needs a < b, got [", w.lower, ", ", w.upper, "]");
  if (w.slices < 0 || w.dos_vectors < 2 || w.dos_degree < 0 || w.filter_degree < 0)
    fail_input_everywhere(
        "eigensolver: slices, dos_degree and filter_degree must be 0 (automatic) or positive, dos_vectors at "
        "least 2");
  if (!(o.tolerance > 0)) fail_input_everywhere("eigensolver.tolerance must be positive, got ", o.tolerance);
  if (w.groups > ranks)
    fail_input_everywhere("eigensolver.slice_groups: ", w.groups, " groups need as many ranks, the run has ", ranks);
  if (w.groups > 1 && !groups_possible)
    fail_input_everywhere(
        "eigensolver.slice_groups: ", w.groups,
        " groups need a distributed matrix to copy to each group; this operator is not one: give 0 or 1");
}

// The angle acos(alpha) - acos(beta) the window [a, b] spans in the scaled variable.
double chebyshev_angle(const SpectrumScale& s, double a, double b) {
  const double alpha = std::clamp(s.to_unit(a), -1.0, 1.0), beta = std::clamp(s.to_unit(b), -1.0, 1.0);
  return std::max(std::acos(alpha) - std::acos(beta), 1e-12);
}

template <class T>
SpectrumScale spectrum_scale(LinearOperator<T>& A, std::uint64_t seed, MPI_Comm comm, WindowReport& report) {
  const SpectrumEstimate top = lanczos_bounds(A, 1, kLanczosSteps, seed + 1, comm);
  const SpectrumEstimate bottom = lanczos_bounds(A, -1, kLanczosSteps, seed + 2, comm);
  // The Ritz residual bounds (Lanczos' extreme Ritz values converge first) with a margin, kMargin, beyond them.
  report.spectrum_lower = -bottom.residual_bound;
  report.spectrum_upper = top.residual_bound;
  const double half = 0.5 * (report.spectrum_upper - report.spectrum_lower);
  SpectrumScale s;
  s.center = 0.5 * (report.spectrum_upper + report.spectrum_lower);
  s.half_width = std::max(half * (1 + kMargin), 1e-300);
  return s;
}

// The filter's least value on [a, b], sampled (its ends, for a Jackson-damped indicator).
double filter_floor(const WindowFilter& f, double a, double b) {
  double least = std::min(f.value(a), f.value(b));
  for (int i = 1; i < 64; ++i) least = std::min(least, f.value(a + (b - a) * i / 64));
  return least;
}

// Where the filter of [a, b] falls below `value` outward of each end (within the spectrum's bounds).
std::pair<double, double> filter_reach(const WindowFilter& f, double a, double b, double value, double lowest,
                                       double highest) {
  const double step = (b - a) / 64;
  double lo = a, hi = b;
  while (lo > lowest && std::abs(f.value(lo - step)) >= value) lo -= step;
  while (hi < highest && std::abs(f.value(hi + step)) >= value) hi += step;
  return {lo - step, hi + step};
}

// The slices' ends and expected counts.
std::vector<SliceReport> plan_slices(const DensityOfStates& dos, const WindowOptions& w, double expected) {
  const int count = w.slices > 0 ? w.slices : std::max(1, static_cast<int>(std::ceil(expected / kPairsPerSlice)));
  const std::vector<double> x = slice_points(dos, w.lower, w.upper, count);
  std::vector<SliceReport> slices(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    slices[i].lower = x[i];
    slices[i].upper = x[i + 1];
    slices[i].expected = estimate_count(dos, x[i], x[i + 1]);
  }
  return slices;
}

// Slice i's filter, block and count: the block holds every eigenvector the filter keeps above kReach of
// what it keeps inside, so that each round shrinks what lies beyond it to that share (and slice_iteration
// grows a short block), and at least the slice's certified count where there is one.
SliceSpec slice_spec(const WindowReport& report, std::size_t i, const SpectrumScale& scale, const DensityOfStates& dos,
                     const WindowOptions& window, std::uint64_t seed, double norm, double delta) {
  const SliceReport& slice = report.slices[i];
  SliceSpec spec;
  spec.lower = i == 0 ? slice.lower : slice.lower - delta;
  spec.upper = slice.upper;
  spec.filter = window_filter(scale, slice.lower, slice.upper, window.filter_degree, kFilterResolution, kMaxDegree);
  spec.filter_floor = filter_floor(spec.filter, slice.lower, slice.upper);
  const double expected = std::max(slice.expected.count, 0.0);
  spec.guard = std::max(8, static_cast<int>(std::ceil(0.1 * expected)));
  const auto [reach_lo, reach_hi] = filter_reach(spec.filter, slice.lower, slice.upper, kReach * spec.filter_floor,
                                                 report.spectrum_lower, report.spectrum_upper);
  const CountEstimate reach = estimate_count(dos, reach_lo, reach_hi);
  spec.block = static_cast<int>(std::ceil(1.1 * std::max(reach.count, expected) + 3 * reach.error)) + 16;
  if (slice.certified >= 0) {
    spec.target = slice.certified;
    spec.block = std::max(spec.block, static_cast<int>(std::ceil(1.1 * static_cast<double>(slice.certified))) + 16);
  }
  spec.seed = seed + 16 + i;
  spec.norm_estimate = norm;
  return spec;
}

// The columns of `vectors` whose values lie at or above `from`: the fixed columns of the next slice.
template <class T>
dense::DenseBlock<T> near_end(const dense::Context& ctx, const SliceOutcome<T>& s, double from) {
  std::vector<std::int64_t> columns;
  for (std::size_t j = 0; j < s.values.size(); ++j)
    if (s.values[j] >= from) columns.push_back(static_cast<std::int64_t>(j));
  dense::DenseBlock<T> out(ctx.space(), s.vectors.rows(), static_cast<std::int64_t>(columns.size()));
  if (!columns.empty()) select_columns(ctx, s.vectors.cview(), columns, out.view());
  return out;
}

// The certified counts of the window and its slices: eigenvalues <= each slice's upper end less those below
// the window (a null pivot is an eigenvalue at that end, inside both the window and the slice below it).
void certify(InertiaCounter& inertia, double a, WindowReport& report) {
  const double t = MPI_Wtime();
  const Inertia below = inertia.at(a);
  report.certified_below = below.negative;
  std::int64_t previous = below.negative;
  for (SliceReport& slice : report.slices) {
    const Inertia at = inertia.at(slice.upper);
    slice.certified = at.negative + at.zero - previous;
    previous = at.negative + at.zero;
  }
  report.certified = previous - below.negative;
  report.factorizations = static_cast<int>(report.slices.size()) + 1;
  report.time_inertia = MPI_Wtime() - t;
  report.count_method = inertia.name();
}

void add_timings(LobpcgTimings& sum, const LobpcgTimings& t) {
  sum.spmm += t.spmm;
  sum.orthogonalization += t.orthogonalization;
  sum.rayleigh_ritz += t.rayleigh_ritz;
  sum.small_eigenproblem += t.small_eigenproblem;
  sum.filter += t.filter;
  sum.other += t.other;
}

// The pairs of every slice, ascending, as LOBPCG's result.
template <class T>
LobpcgResult<T> gather(const dense::Context& ctx, std::int64_t rows, std::vector<SliceOutcome<T>>& slices,
                       const LobpcgOptions& options, double norm) {
  LobpcgResult<T> r;
  std::int64_t total = 0;
  for (const auto& s : slices) total += static_cast<std::int64_t>(s.values.size());
  r.eigenvectors = dense::DenseBlock<T>(ctx.space(), rows, total);
  std::int64_t at = 0;
  bool complete = true;
  for (auto& s : slices) {
    const auto k = static_cast<std::int64_t>(s.values.size());
    if (k > 0) copy_block(ctx, s.vectors.cview(), column_range(r.eigenvectors.view(), at, k));
    at += k;
    for (std::int64_t j = 0; j < k; ++j) {
      r.eigenvalues.push_back(s.values[j]);
      r.residual_norms.push_back(s.residuals[j]);
      r.relative_residuals.push_back(s.residuals[j] / std::max(std::abs(s.values[j]), 1e-300));
      r.b_norms.push_back(1);
      r.converged.push_back(true);
    }
    complete = complete && s.complete;
    r.iterations += s.iterations;
    r.block_size = std::max(r.block_size, s.block);
    r.stats.filter_products += s.products;
    r.stats.single_filter_products += s.single_products;
    add_timings(r.stats.timings, s.time);
    s.vectors = {};
  }
  r.stop = complete ? LobpcgStop::converged : LobpcgStop::iteration_limit;
  r.norm_estimate = norm;
  lobpcg_detail::mark_tests(options.tolerance, r);
  return r;
}

// Within rounding of a shared end at `at`: a pair the slice below found there may be found again above.
double shared_end_width(const LobpcgOptions& options, double norm, double at) {
  const double scale = options.test == StoppingTest::backward ? norm + std::abs(at) : std::abs(at);
  return 2 * options.tolerance * scale + 16 * std::numeric_limits<double>::epsilon() * norm;
}

// What the slices share: the window's plan and the options, for solve_slices.
struct SlicePlan {
  const LobpcgOptions& options;
  const WindowOptions& window;
  const SpectrumScale& scale;
  const DensityOfStates& dos;
  double norm = 0;
  bool device = false;  // the blocks live on a GPU
};

// Slices [first, last) one after another on A (its ranks, reductions on `comm`), each from the slice below's
// pairs near their shared end where it solved that one too; `report`'s slices get their rows.
template <class T>
std::vector<SliceOutcome<T>> solve_slices(LinearOperator<T>& A, MPI_Comm comm, LinearOperator<single_t<T>>* single,
                                          std::size_t first, std::size_t last, const SlicePlan& plan,
                                          WindowReport& report) {
  const dense::Context& ctx = A.context();
  std::vector<SliceOutcome<T>> solved;
  for (std::size_t i = first; i < last; ++i) {
    SliceReport& slice = report.slices[i];
    const double t_slice = MPI_Wtime();
    const double delta = shared_end_width(plan.options, plan.norm, slice.lower);
    SliceSpec spec = slice_spec(report, i, plan.scale, plan.dos, plan.window, plan.options.seed, plan.norm, delta);
    if (i == first && i > 0) spec.count_from = slice.lower;  // the pairs below are the slice below's, found apart
    const dense::DenseBlock<T> fixed = i == first ? dense::DenseBlock<T>(ctx.space(), A.local_rows(), 0)
                                                  : near_end<T>(ctx, solved.back(), slice.lower - 2 * delta);
    const auto progress = [&](const SliceProgress& p) {
      if (plan.window.progress) plan.window.progress(static_cast<int>(i), p);
    };
    solved.push_back(solve_slice<T>(A, single, plan.options, spec, fixed.cview(), comm, progress));
    const SliceOutcome<T>& s = solved.back();
    slice.found = static_cast<int>(s.values.size());
    slice.block = s.block;
    slice.degree = spec.filter.degree();
    slice.iterations = s.iterations;
    slice.products = s.products;
    slice.single_products = s.single_products;
    slice.complete = s.complete;
    slice.seconds = MPI_Wtime() - t_slice;
  }
  return solved;
}

// What the slices will hold on this rank (`rows` where they run), checked by the caller's check_memory.
void check_memory(const WindowReport& report, const SlicePlan& plan, std::int64_t rows, int value_bytes, bool mixed) {
  if (!plan.window.check_memory) return;
  WindowMemory m;
  m.rows = rows;
  m.value_bytes = value_bytes;
  m.mixed = mixed;
  m.device = plan.device;
  for (std::size_t i = 0; i < report.slices.size(); ++i)
    m.block = std::max<std::int64_t>(
        m.block, slice_spec(report, i, plan.scale, plan.dos, plan.window, plan.options.seed, plan.norm, 0).block);
  m.pairs =
      report.certified >= 0
          ? report.certified
          : static_cast<std::int64_t>(std::ceil(std::max(report.expected.count, 0.0) + 3 * report.expected.error));
  plan.window.check_memory(m);
}

// The groups the slices run on (check() refused a request the run cannot take): as many as asked (0: the
// slices, at most one a rank), at most one a slice.
int group_count(int requested, std::size_t slices, int ranks, bool can) {
  if (!can) return 1;
  const int wanted = requested > 0 ? requested : ranks;
  return std::max(1, std::min(wanted, static_cast<int>(slices)));
}

std::size_t first_slice(std::size_t slices, int group, int groups) {
  return slices * static_cast<std::size_t>(group) / static_cast<std::size_t>(groups);
}

// Every rank's rows of an operator, from each rank's end.
RowPartition operator_partition(std::int64_t first_row, std::int64_t rows, std::int64_t global_rows, MPI_Comm comm) {
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  std::vector<std::int64_t> ends(static_cast<std::size_t>(ranks));
  const std::int64_t end = first_row + rows;
  BLOCKEIGS_MPI_CHECK(MPI_Allgather(&end, 1, MPI_INT64_T, ends.data(), 1, MPI_INT64_T, comm));
  std::vector<std::int64_t> first{0};
  first.insert(first.end(), ends.begin(), ends.end());
  first.back() = global_rows;
  return RowPartition(std::move(first));
}

// Slice i's report and outcome, less its vectors, from its group's rank 0 to every rank.
template <class T>
void share_slice(MPI_Comm comm, int root, SliceReport& slice, SliceOutcome<T>& s) {
  std::vector<double> head{static_cast<double>(s.values.size()), static_cast<double>(slice.block),
                           static_cast<double>(slice.degree),    static_cast<double>(slice.iterations),
                           static_cast<double>(slice.products),  static_cast<double>(slice.single_products),
                           slice.complete ? 1.0 : 0.0,           slice.seconds};
  for (const auto& [name, member] : kLobpcgPhases) head.push_back(s.time.*member);
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(head.data(), static_cast<int>(head.size()), MPI_DOUBLE, root, comm));
  const auto k = static_cast<std::size_t>(head[0]);
  slice.found = static_cast<int>(k);
  slice.block = static_cast<int>(head[1]);
  slice.degree = static_cast<int>(head[2]);
  s.iterations = slice.iterations = static_cast<int>(head[3]);
  s.products = slice.products = static_cast<std::int64_t>(head[4]);
  s.single_products = slice.single_products = static_cast<std::int64_t>(head[5]);
  s.complete = slice.complete = head[6] != 0;
  slice.seconds = head[7];
  s.block = slice.block;
  std::size_t at = 8;
  for (const auto& [name, member] : kLobpcgPhases) s.time.*member = head[at++];
  s.values.resize(k);
  s.residuals.resize(k);
  if (k == 0) return;
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(s.values.data(), static_cast<int>(k), MPI_DOUBLE, root, comm));
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(s.residuals.data(), static_cast<int>(k), MPI_DOUBLE, root, comm));
}

// The slices side by side on `groups` groups of A's ranks, consecutive slices to each; their pairs on A's
// rows, those two groups both found at a shared end merged once.
template <class T>
std::vector<SliceOutcome<T>> solve_in_groups(LinearOperator<T>& A, MPI_Comm comm, int groups,
                                             const GroupOperatorFactory<T>& group_operator, bool mixed,
                                             const SlicePlan& plan, WindowReport& report) {
  const double t_setup = MPI_Wtime();
  const RowPartition world = operator_partition(A.first_row(), A.local_rows(), A.global_rows(), comm);
  const SliceGroups split(comm, world, groups);
  std::unique_ptr<LinearOperator<T>> group_A = group_operator(split);
  std::unique_ptr<LinearOperator<single_t<T>>> single;
  if (mixed) single = rounded_to_single(*group_A);
  report.time_groups = MPI_Wtime() - t_setup;
  check_memory(report, plan, group_A->local_rows(), sizeof(T), mixed);
  const std::size_t count = report.slices.size();
  const std::size_t first = first_slice(count, split.mine(), groups),
                    last = first_slice(count, split.mine() + 1, groups);
  std::vector<SliceOutcome<T>> mine = collectively(comm, [&] {
    const PrivateComm group_comm(split.group_comm());
    return solve_slices<T>(*group_A, group_comm.get(), single.get(), first, last, plan, report);
  });
  const double t_merge = MPI_Wtime();
  std::vector<SliceOutcome<T>> all(count);
  const dense::Context& ctx = A.context();
  int group = 0;
  for (std::size_t i = 0; i < count; ++i) {
    while (i >= first_slice(count, group + 1, groups)) ++group;
    const bool held = group == split.mine();
    if (held) all[i] = std::move(mine[i - first]);
    share_slice<T>(comm, split.first_rank(group), report.slices[i], all[i]);
    report.slices[i].group = group;
    dense::DenseBlock<T> vectors(ctx.space(), A.local_rows(), report.slices[i].found);
    const dense::ConstDenseView<T> from =
        held ? all[i].vectors.cview() : dense::ConstDenseView<T>(ctx.space(), 0, 0, 0, nullptr);
    split.to_world<T>(ctx, group, report.slices[i].found, from, vectors.view());
    all[i].vectors = std::move(vectors);
  }
  for (std::size_t i = 1; i < count; ++i) {
    if (report.slices[i].group == report.slices[i - 1].group) continue;
    const double lower = report.slices[i].lower, delta = shared_end_width(plan.options, plan.norm, lower);
    const MergeOutcome m = merge_shared_end<T>(A, comm, all[i - 1], all[i], lower - 2 * delta, lower + 2 * delta);
    report.slices[i].duplicates = m.candidates_above - m.kept;
    report.slices[i].found = static_cast<int>(all[i].values.size());
  }
  report.time_merge = MPI_Wtime() - t_merge;
  return all;
}

// The phases of the group that took longest (the slices' phases summed where they ran in turn).
LobpcgTimings slowest_group(const WindowReport& report, const std::vector<LobpcgTimings>& times) {
  std::vector<double> seconds(static_cast<std::size_t>(report.groups), 0.0);
  for (const SliceReport& s : report.slices) seconds[s.group] += s.seconds;
  const auto slowest = static_cast<int>(std::max_element(seconds.begin(), seconds.end()) - seconds.begin());
  LobpcgTimings sum;
  for (std::size_t i = 0; i < report.slices.size(); ++i)
    if (report.slices[i].group == slowest) add_timings(sum, times[i]);
  return sum;
}

}  // namespace

template <class T>
WindowResult<T> window_eigs(LinearOperator<T>& A, const LobpcgOptions& options, const WindowOptions& window,
                            const GroupOperatorFactory<T>& group_operator) {
  const double t_begin = MPI_Wtime();
  const PrivateComm private_comm(A.comm());
  const MPI_Comm comm = private_comm.get();
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  check(window, options, ranks, static_cast<bool>(group_operator));
  const dense::Context& ctx = A.context();
  WindowResult<T> out;
  WindowReport& report = out.report;
  const SpectrumScale scale = spectrum_scale(A, options.seed, comm, report);
  const double norm = std::max(std::abs(report.spectrum_lower), std::abs(report.spectrum_upper));
  report.time_bounds = MPI_Wtime() - t_begin;
  report.outside_spectrum = window.upper < report.spectrum_lower || window.lower > report.spectrum_upper;
  if (report.outside_spectrum) {
    std::vector<SliceOutcome<T>> none;
    out.pairs = gather<T>(ctx, A.local_rows(), none, options, norm);
    out.pairs.stats.timings.density = report.time_bounds;
    out.pairs.stats.timings.total = MPI_Wtime() - t_begin;
    return out;
  }
  // The density, its moments resolving the window's angle.
  const double angle = chebyshev_angle(scale, window.lower, window.upper);
  report.dos_degree = window.dos_degree > 0
                          ? window.dos_degree
                          : static_cast<int>(std::clamp(std::ceil(kDensityResolution * std::numbers::pi / angle), 100.0,
                                                        static_cast<double>(kMaxDegree)));
  report.dos_vectors = window.dos_vectors;
  const double t_dos = MPI_Wtime();
  const DensityOfStates dos = kpm_density(A, scale, window.dos_vectors, report.dos_degree, options.seed + 3, comm);
  report.dos_products = dos.products;
  report.expected = estimate_count(dos, window.lower, window.upper);
  report.density = density_curve(dos, 512);
  report.time_dos = MPI_Wtime() - t_dos;
  report.slices = plan_slices(dos, window, report.expected.count);
  if (window.inertia) certify(*window.inertia, window.lower, report);
  report.groups = group_count(window.groups, report.slices.size(), ranks, static_cast<bool>(group_operator));
  const bool mixed = filter_mixed(options.search_precision, ctx.space(), sizeof(real_t<T>));
  const SlicePlan plan{options, window, scale, dos, norm, ctx.space() == Space::device};
  std::vector<SliceOutcome<T>> solved;
  if (report.groups > 1) {
    solved = solve_in_groups<T>(A, comm, report.groups, group_operator, mixed, plan, report);
  } else {
    std::unique_ptr<LinearOperator<single_t<T>>> single;  // A in fp32 where the slices' filters are mixed
    if (mixed) single = rounded_to_single(A);
    check_memory(report, plan, A.local_rows(), sizeof(T), mixed);
    solved = solve_slices<T>(A, comm, single.get(), 0, report.slices.size(), plan, report);
  }
  std::vector<LobpcgTimings> times;
  for (const SliceOutcome<T>& s : solved) times.push_back(s.time);
  out.pairs = gather<T>(ctx, A.local_rows(), solved, options, norm);
  if (report.groups > 1) out.pairs.stats.timings = slowest_group(report, times);
  out.pairs.stats.search_in_fp32 = mixed;
  out.pairs.stats.timings.density = report.time_bounds + report.time_dos;
  out.pairs.stats.timings.total = MPI_Wtime() - t_begin;
  return out;
}

#define BLOCKEIGS_WINDOW_EIGS(T)                                                                       \
  template WindowResult<T> window_eigs(LinearOperator<T>&, const LobpcgOptions&, const WindowOptions&, \
                                       const GroupOperatorFactory<T>&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_WINDOW_EIGS)
#undef BLOCKEIGS_WINDOW_EIGS

}  // namespace blockeigs::solver

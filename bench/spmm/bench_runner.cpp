#include "bench/spmm/bench_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <functional>
#include <memory>
#include <ostream>
#include <regex>
#include <type_traits>

#include "bench/spmm/bench_check.hpp"
#include "bench/spmm/bench_cusparse.hpp"
#include "bench/spmm/bench_device.hpp"
#include "bench/spmm/bench_report.hpp"
#include "bench/spmm/bench_suite.hpp"
#include "bench/spmm/bench_values.cuh"
#include "core/error.hpp"
#include "core/scalar.hpp"
#include "dense/memory.hpp"
#include "spmm/heuristic.hpp"
#include "spmm/local_spmm.hpp"
#include "spmm/plan.hpp"

namespace blockeigs::spmm::bench {
namespace {

constexpr std::uint64_t b_seed = 0x5eed0b, c_seed = 0x5eed0c;
constexpr std::int64_t sampled_rows = 2000;
constexpr std::int64_t check_work_per_row = 1 << 14;
// Row-split runs a row on one group of lanes: rows this long at this width
// would take seconds per run, so it is not timed there (automatic never picks it).
constexpr double row_split_max_work = double(1 << 25);

struct Matrix {
  std::string name;
  HostCsr<double> csr;
  std::int64_t max_row_length = 0;
  double scattered = 0;  // RowShape::scattered
  double span = 0;       // RowShape::span
};

// The suite's matrix in T; complex values give nonzero k a phase from a hash
// of k (|a| kept): the same pattern, values spread over the complex plane.
template <class T>
HostCsr<T> convert(const HostCsr<double>& a) {
  HostCsr<T> out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.row_offsets = a.row_offsets;
  out.col_indices = a.col_indices;
  if constexpr (is_complex_v<T>) {
    out.values.resize(a.values.size());
    for (std::size_t k = 0; k < a.values.size(); ++k)
      out.values[k] = T(std::polar(a.values[k], std::acos(-1.0) * bench_value(0xFA5E, std::int64_t(k), 0)));
  } else {
    out.values.assign(a.values.begin(), a.values.end());
  }
  return out;
}

// Everything one (matrix, precision) pair needs for all widths.
template <class T>
struct PrecisionRun {
  const BenchOptions& options;
  const dense::Context& context;
  const Matrix& matrix;
  const HostCsr<T>& host;
  const std::vector<std::int64_t>& samples;
  double bandwidth;
  std::size_t l2;
  std::vector<Record>& records;
  std::ostream& out;

  void run_all_widths() {
    CsrMatrix<T> A(Space::device, host);
    dense::Buffer<std::int64_t> sample_rows_device(Space::device, samples);
    synchronize_device();  // pageable uploads may still be in flight on the legacy stream
    auto row_split = make_row_split_spmm(context, A.view());
    auto merge_based = make_merge_based_spmm(context, A.view());
    Plan<T> automatic(context, A.view(), Algorithm::automatic);
    std::vector<std::unique_ptr<CusparseRunner<T>>> cusparse;
    for (CusparseVariant v : all_cusparse_variants)
      cusparse.push_back(std::make_unique<CusparseRunner<T>>(context, A.view(), v));
    for (std::int64_t n : options.widths) {
      std::vector<Record> one_case;
      run_width(n, sample_rows_device.data(), *row_split, *merge_based, automatic, cusparse, one_case);
      set_speedups(one_case);
      for (const Record& r : one_case) print_record(out, r);
      out.flush();
      records.insert(records.end(), one_case.begin(), one_case.end());
    }
  }

  Record base_record(std::int64_t n, const std::string& algorithm) const {
    Record r;
    r.matrix = matrix.name;
    r.rows = host.rows;
    r.cols = host.cols;
    r.nnz = host.nnz();
    r.max_row_length = matrix.max_row_length;
    r.scattered = matrix.scattered;
    r.span = matrix.span;
    r.mean_row_length = host.rows ? double(host.nnz()) / double(host.rows) : 0.0;
    r.precision = is_complex_v<T> ? (sizeof(T) == 8 ? "c64" : "c128") : (sizeof(T) == 4 ? "fp32" : "fp64");
    r.n = n;
    r.algorithm = algorithm;
    return r;
  }

  // Checks one algorithm on copy 0, then times it over the copies.
  void measure(Record& r, int copies, const std::function<void(int)>& run, const std::function<void()>& reset_c,
               const Strided<T>& c0, const std::int64_t* rows_device, T* gather_buffer, const Reference& ref) {
    reset_c();
    run(0);
    const CheckResult check = compare(
        ref, gather_rows(c0, rows_device, static_cast<std::int64_t>(samples.size()), gather_buffer, context.stream()));
    r.check = check.ok() ? "PASS" : "FAIL";
    if (!check.ok())
      r.note = std::to_string(check.wrong) + " of " + std::to_string(check.checked) + " wrong; " + check.first;
    const double first = median_seconds(context.stream(), 1, [&](int k) { run(k % copies); });
    int reps = static_cast<int>(std::clamp(options.target_seconds / first, 3.0, double(options.max_reps)));
    if (first > 0.5) reps = 1;
    r.seconds = median_seconds(context.stream(), reps, [&](int k) { run((k + 1) % copies); });
    r.reps = reps;
    r.copies = copies;
    const double s = sizeof(T), m = double(host.rows), k = double(host.cols), nnz = double(host.nnz()), n = double(r.n);
    const double bytes = nnz * (4 + s) + 4 * (m + 1) + k * n * s + m * n * s + (options.beta != 0.0 ? m * n * s : 0.0);
    r.gflops = (is_complex_v<T> ? 8.0 : 2.0) * nnz * n / r.seconds * 1e-9;  // a complex multiply-add: 8 flops
    r.pct_bound = 100.0 * (bytes / bandwidth) / r.seconds;
  }

  void run_width(std::int64_t n, const std::int64_t* rows_device, LocalSpmm<T>& row_split, LocalSpmm<T>& merge_based,
                 Plan<T>& automatic, std::vector<std::unique_ptr<CusparseRunner<T>>>& cusparse,
                 std::vector<Record>& one_case) {
    const std::int64_t m = host.rows, k = host.cols;
    const T alpha = T(1), beta = static_cast<T>(options.beta);
    const std::size_t per_copy = static_cast<std::size_t>((k + m) * n) * sizeof(T);
    const std::size_t budget = free_device_bytes() / 10 * 4;  // row-major now, column-major later
    if (per_copy > budget) {
      skip_width(n, one_case);
      return;
    }
    // Inputs smaller than about 3 L2s are rotated over copies, so that each
    // run finds its B and C in DRAM as a real solver iteration would.
    const int copies =
        static_cast<int>(std::clamp<std::size_t>(std::min((3 * l2 + per_copy - 1) / std::max<std::size_t>(per_copy, 1),
                                                          budget / std::max<std::size_t>(per_copy, 1)),
                                                 1, 4));
    std::vector<dense::Buffer<T>> b, c;
    for (int i = 0; i < copies; ++i) {
      b.emplace_back(Space::device, static_cast<std::size_t>(k * n));
      c.emplace_back(Space::device, static_cast<std::size_t>(m * n));
      fill_block<T>({b.back().data(), k, n, n, 1}, b_seed, false, context.stream());
      fill_block<T>({c.back().data(), m, n, n, 1}, c_seed, false, context.stream());
    }
    dense::Buffer<T> gather(Space::device, samples.size() * static_cast<std::size_t>(n));
    const Reference ref = make_reference(host, samples, n, alpha, beta, b_seed, c_seed, check_work_per_row);
    const Strided<T> c0{c[0].data(), m, n, n, 1};
    // Ours never read C when beta == 0: NaN proves it. cuSPARSE gets finite C.
    const auto reset = [&](bool nan) {
      return [&, nan] { fill_block<T>(c0, c_seed, nan && beta == T(0), context.stream()); };
    };
    const auto view_b = [&](int i) {
      return dense::ConstDenseView<T>(Space::device, k, n, n, b[static_cast<std::size_t>(i)].data());
    };
    const auto view_c = [&](int i) {
      return dense::DenseView<T>{Space::device, m, n, n, c[static_cast<std::size_t>(i)].data()};
    };

    Record rs = base_record(n, "row_split");
    if (double(matrix.max_row_length) * double(n) > row_split_max_work) {
      rs.check = "SKIP";
      rs.note = "rows of " + std::to_string(matrix.max_row_length) + " nonzeros: seconds per run";
    } else {
      measure(
          rs, copies, [&](int i) { row_split.multiply(alpha, view_b(i), beta, view_c(i)); }, reset(true), c0,
          rows_device, gather.data(), ref);
    }
    one_case.push_back(rs);
    Record mb = base_record(n, "merge_based");
    measure(
        mb, copies, [&](int i) { merge_based.multiply(alpha, view_b(i), beta, view_c(i)); }, reset(true), c0,
        rows_device, gather.data(), ref);
    one_case.push_back(mb);
    Record au = base_record(n, "automatic");
    au.chosen = std::string(to_string(automatic.algorithm_for(n)));
    if (const std::int64_t slab = automatic.column_slab(n); slab < n) au.slab = slab;
    measure(
        au, copies, [&](int i) { automatic.multiply(alpha, view_b(i), beta, view_c(i)); }, reset(true), c0, rows_device,
        gather.data(), ref);
    one_case.push_back(au);

    std::vector<const T*> bp;
    std::vector<T*> cp;
    for (int i = 0; i < copies; ++i) {
      bp.push_back(b[static_cast<std::size_t>(i)].data());
      cp.push_back(c[static_cast<std::size_t>(i)].data());
    }
    for (auto& runner : cusparse) {
      const CusparseVariant v = all_cusparse_variants[&runner - cusparse.data()];
      if (column_major(v)) continue;
      time_cusparse(*runner, v, n, bp, n, cp, n, copies, c0, rows_device, gather.data(), ref, one_case);
    }
    // Column-major ALG1: the same B and C in column-major copies, once the row-major ones are freed.
    b.clear();
    c.clear();
    time_column_major(n, copies, rows_device, gather.data(), ref, cusparse, one_case);
  }

  // The three algorithms' records at a width whose B and C do not fit.
  void skip_width(std::int64_t n, std::vector<Record>& one_case) {
    for (const char* a : {"row_split", "merge_based", "automatic"}) {
      Record r = base_record(n, a);
      r.check = "SKIP";
      r.note = "B and C do not fit in device memory twice";
      one_case.push_back(r);
    }
  }

  // cuSPARSE's column-major variants on column-major copies of B and C.
  void time_column_major(std::int64_t n, int copies, const std::int64_t* rows_device, T* gather, const Reference& ref,
                         std::vector<std::unique_ptr<CusparseRunner<T>>>& cusparse, std::vector<Record>& one_case) {
    const std::int64_t m = host.rows, k = host.cols;
    std::vector<dense::Buffer<T>> bc, cc;
    std::vector<const T*> bp;
    std::vector<T*> cp;
    for (int i = 0; i < copies; ++i) {
      bc.emplace_back(Space::device, static_cast<std::size_t>(k * n));
      cc.emplace_back(Space::device, static_cast<std::size_t>(m * n));
      fill_block<T>({bc.back().data(), k, n, 1, k}, b_seed, false, context.stream());
      bp.push_back(bc.back().data());
      cp.push_back(cc.back().data());
    }
    const Strided<T> c0_col{cc[0].data(), m, n, 1, m};
    for (auto& runner : cusparse) {
      const CusparseVariant v = all_cusparse_variants[&runner - cusparse.data()];
      if (column_major(v))
        time_cusparse(*runner, v, n, bp, std::max<std::int64_t>(k, 1), cp, std::max<std::int64_t>(m, 1), copies, c0_col,
                      rows_device, gather, ref, one_case);
    }
  }

  void time_cusparse(CusparseRunner<T>& runner, CusparseVariant v, std::int64_t n, const std::vector<const T*>& b,
                     std::int64_t ldb, const std::vector<T*>& c, std::int64_t ldc, int copies, const Strided<T>& c0,
                     const std::int64_t* rows_device, T* gather, const Reference& ref, std::vector<Record>& one_case) {
    Record r = base_record(n, name(v));
    std::string why_not;
    if (!runner.prepare(n, b, ldb, c, ldc, T(1), static_cast<T>(options.beta), why_not)) {
      r.check = "SKIP";
      r.note = "cuSPARSE refused: " + why_not;
    } else {
      const int used = v == CusparseVariant::alg3_row_major ? 1 : copies;
      measure(
          r, used, [&](int i) { runner.run(i); }, [&] { fill_block<T>(c0, c_seed, false, context.stream()); }, c0,
          rows_device, gather, ref);
    }
    one_case.push_back(r);
  }
};

}  // namespace

int run_bench(const BenchOptions& options, std::ostream& out) {
  if (dense::cuda_device_count() == 0)
    throw Error(
        "needs a GPU, and this machine has none that CUDA can use (run it on a GPU machine; --help works anywhere)");
  const dense::Context context = dense::Context::cuda(options.device);
  const double bandwidth = copy_bandwidth(std::min<std::size_t>(std::size_t(1) << 30, free_device_bytes() / 4));
  const std::size_t l2 = l2_bytes(options.device);
  out << "device: " << device_description(options.device) << "\n"
      << "device-to-device copy bandwidth (read + write): " << bandwidth * 1e-9 << " GB/s\n"
      << "beta = " << options.beta << "; traffic bound: nnz*(4+s) + 4*(m+1) + k*n*s + m*n*s"
      << (options.beta != 0.0 ? " + m*n*s" : "") << " bytes at that bandwidth\n\n";
  BenchOptions o = options;
  if (o.widths.empty())
    o.widths = o.suite == "quick" ? std::vector<std::int64_t>{1, 4, 32, 128}
                                  : std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256};
  std::vector<Record> records;
  const std::regex filter(options.matrices.empty() ? std::string(".*") : options.matrices);
  for (const MatrixSpec& spec : suite_matrices(options.suite, options.data_dir)) {
    if (!std::regex_search(spec.name, filter)) continue;
    const auto start = std::chrono::steady_clock::now();
    Matrix matrix{spec.name, spec.build(), 0};
    const cuda::RowShape shape = cuda::row_shape_host(matrix.csr.row_offsets.data(), matrix.csr.rows, matrix.csr.cols,
                                                      matrix.csr.nnz(), matrix.csr.col_indices.data());
    matrix.max_row_length = static_cast<std::int64_t>(shape.max);
    matrix.scattered = shape.scattered;
    matrix.span = shape.span;
    const std::vector<std::int64_t> samples = sample_rows(matrix.csr, sampled_rows, 7);
    out << "== " << matrix.name << ": " << matrix.csr.rows << " x " << matrix.csr.cols << ", " << matrix.csr.nnz()
        << " nonzeros, mean row " << double(matrix.csr.nnz()) / double(std::max<std::int64_t>(matrix.csr.rows, 1))
        << ", longest " << matrix.max_row_length << ", scattered " << matrix.scattered << ", span " << matrix.span
        << " (built in " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s)\n";
    print_table_header(out);
    for (BenchValues v : options.values) {
      auto run = [&](auto zero) {
        using T = decltype(zero);
        const HostCsr<T> host = convert<T>(matrix.csr);
        PrecisionRun<T>{o, context, matrix, host, samples, bandwidth, l2, records, out}.run_all_widths();
      };
      switch (v) {
        case BenchValues::fp32: run(float{}); break;
        case BenchValues::fp64: run(double{}); break;
        case BenchValues::c64: run(std::complex<float>{}); break;
        case BenchValues::c128: run(std::complex<double>{}); break;
      }
    }
  }
  if (!options.csv.empty()) write_csv(options.csv, records);
  return print_summary(out, records) ? 0 : 1;
}

}  // namespace blockeigs::spmm::bench

// Halo volume against the number of parts, for the scaling model of
// docs/benchmarks/scaling.md: each matrix split into p parts by contiguous
// rows (balanced by nonzeros + rows, as block-eigs does) and by Scotch's
// serial graph partitioner (vertex weight = row nonzeros + 1, as the
// distributed partitioner's), and for each split the halo rows (distinct
// columns a part reads from other parts): total, largest part, largest
// part's neighbours, and the largest part's rows and nonzeros.
//   g++ -O2 -std=c++20 -I. -o /tmp/halo_volume scripts/dev/halo_volume.cpp \
//       build/cuda/io/libblockeigs_io.a build/cuda/core/libblockeigs_core.a \
//       -I/usr/include/scotch -lscotch -lscotcherr -lhdf5_serial -lyaml-cpp -lz -lm \
//       $(pkg-config --cflags --libs hdf5-serial 2>/dev/null)
//   /tmp/halo_volume FILE.mtx[.gz]|grid:N P...
#include <scotch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/generators.hpp"
#include "io/matrix_market.hpp"

namespace {

using blockeigs::io::CsrRows;

struct Split {
  std::int64_t total = 0, largest = 0, neighbours = 0, rows = 0, nnz = 0;
};

// Halo of each part, given each row's part.
Split measure(const CsrRows& A, const std::vector<int>& part, int p) {
  std::vector<std::int64_t> halo(p, 0), rows(p, 0), nnz(p, 0);
  std::vector<std::vector<char>> talks(p, std::vector<char>(p, 0));
  std::vector<int> seen(A.global_rows, -1);  // last part that counted column c
  // Rows of a part in order: group rows by part first.
  std::vector<std::int64_t> order(A.global_rows);
  for (std::int64_t i = 0; i < A.global_rows; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return part[a] < part[b]; });
  for (std::int64_t i : order) {
    const int q = part[i];
    ++rows[q];
    for (std::int64_t e = A.row_offsets[i]; e < A.row_offsets[i + 1]; ++e) {
      const std::int64_t c = A.col_indices[e];
      ++nnz[q];
      if (part[c] == q || seen[c] == q) continue;
      seen[c] = q;
      ++halo[q];
      talks[q][part[c]] = 1;
    }
  }
  Split s;
  int worst = 0;
  for (int q = 0; q < p; ++q) {
    s.total += halo[q];
    if (halo[q] > halo[worst]) worst = q;
  }
  s.largest = halo[worst];
  for (int r = 0; r < p; ++r) s.neighbours += talks[worst][r];
  s.rows = *std::max_element(rows.begin(), rows.end());
  s.nnz = *std::max_element(nnz.begin(), nnz.end());
  return s;
}

// Contiguous rows, each part's share of nonzeros + rows as equal as the rows allow.
std::vector<int> contiguous(const CsrRows& A, int p) {
  const double total = double(A.nnz() + A.global_rows);
  std::vector<int> part(A.global_rows);
  for (std::int64_t i = 0; i < A.global_rows; ++i) {
    const double before = double(A.row_offsets[i] + i);
    part[i] = std::min(p - 1, int(before * p / total));
  }
  return part;
}

std::vector<int> scotch(const CsrRows& A, int p, double& seconds) {
  const SCOTCH_Num n = A.global_rows;
  std::vector<SCOTCH_Num> verttab(n + 1, 0), velotab(n), edgetab;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t e = A.row_offsets[i]; e < A.row_offsets[i + 1]; ++e)
      if (A.col_indices[e] != i) edgetab.push_back(A.col_indices[e]);
    verttab[i + 1] = SCOTCH_Num(edgetab.size());
    velotab[i] = SCOTCH_Num(A.row_offsets[i + 1] - A.row_offsets[i] + 1);
  }
  SCOTCH_Graph graph;
  SCOTCH_Strat strat;
  SCOTCH_graphInit(&graph);
  SCOTCH_stratInit(&strat);
  if (SCOTCH_graphBuild(&graph, 0, n, verttab.data(), nullptr, velotab.data(), nullptr,
                        SCOTCH_Num(edgetab.size()), edgetab.data(), nullptr) != 0 ||
      SCOTCH_stratGraphMapBuild(&strat, SCOTCH_STRATBALANCE, p, 0.05) != 0) {
    std::fprintf(stderr, "Scotch refused the graph\n");
    std::exit(1);
  }
  std::vector<SCOTCH_Num> parttab(n);
  const auto t0 = std::chrono::steady_clock::now();
  if (SCOTCH_graphPart(&graph, p, &strat, parttab.data()) != 0) {
    std::fprintf(stderr, "SCOTCH_graphPart failed\n");
    std::exit(1);
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SCOTCH_stratExit(&strat);
  SCOTCH_graphExit(&graph);
  return std::vector<int>(parttab.begin(), parttab.end());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FILE.mtx[.gz]|grid:N P...\n", argv[0]);
    return 2;
  }
  const std::string source = argv[1];
  CsrRows A;
  if (source.starts_with("grid:")) {
    blockeigs::io::GeneratorSpec spec;
    spec.kind = blockeigs::io::GeneratorKind::laplacian_3d;
    spec.nx = spec.ny = spec.nz = std::atoll(source.c_str() + 5);
    A = blockeigs::io::generate_rows(spec, 0, blockeigs::io::generated_rows(spec));
  } else {
    A = blockeigs::io::read_matrix_market(source).matrix;
  }
  std::printf("# %s: %lld rows, %lld nonzeros\n", source.c_str(), (long long)A.global_rows, (long long)A.nnz());
  std::printf("%6s  %-10s %12s %12s %6s %12s %12s %8s\n", "parts", "split", "halo total", "halo max", "nbrs",
              "rows max", "nnz max", "seconds");
  for (int a = 2; a < argc; ++a) {
    const int p = std::atoi(argv[a]);
    const Split c = measure(A, contiguous(A, p), p);
    std::printf("%6d  %-10s %12lld %12lld %6lld %12lld %12lld %8s\n", p, "contiguous", (long long)c.total,
                (long long)c.largest, (long long)c.neighbours, (long long)c.rows, (long long)c.nnz, "-");
    double seconds = 0;
    const Split g = measure(A, scotch(A, p, seconds), p);
    std::printf("%6d  %-10s %12lld %12lld %6lld %12lld %12lld %8.2f\n", p, "scotch", (long long)g.total,
                (long long)g.largest, (long long)g.neighbours, (long long)g.rows, (long long)g.nnz, seconds);
    std::fflush(stdout);
  }
}

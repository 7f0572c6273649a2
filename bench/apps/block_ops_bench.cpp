// block-ops-bench: times the dense block operations that LOBPCG and block CG
// are built from, on one rank's rows, and reports each as effective bandwidth
// (the bytes the operation must move at least, over its time) next to a plain
// device copy. Finds the operations that run far below the memory system.
//   block-ops-bench [--rows N] [--width K] [--reps R] [--backend cpu|cuda|auto] [--fp32]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/apps/bench_options.hpp"
#include "core/checks.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/search_block_ops.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/blocks/orthonormalize.hpp"

namespace {

using namespace blockeigs;

const char* const usage =
    "usage: block-ops-bench [--rows N] [--width K] [--reps R] [--backend cpu|cuda|auto] [--fp32]\n"
    "Times Gram matrices, norms, block updates, copies and orthonormalisation of N x K blocks.\n"
    "  --help      prints this text\n"
    "  --version   prints the version, commit and build (CUDA, PETSc, HDF5)\n";

struct Case {
  std::string name;
  double blocks;  // block-sized transfers the operation needs at least
  std::function<void()> step;
};

// The blocks and small matrices the cases work on, made once, and the cases,
// by theme. The cases' steps refer to the members: an Inputs outlives them.
template <class T>
struct Inputs {
  Inputs(const apps::BenchOptions& options, MPI_Comm comm);
  dense::DenseView<T> cols(dense::DenseBlock<T>& b, std::int64_t first, std::int64_t count) {
    return solver::column_range(b.view(), first, count);
  }
  dense::ConstDenseView<T> ccols(dense::DenseBlock<T>& b, std::int64_t first, std::int64_t count) {
    return dense::ConstDenseView<T>(cols(b, first, count));
  }
  std::vector<Case> block_cases();   // the operations one by one
  std::vector<Case> lobpcg_cases();  // one LOBPCG iteration's, in the order it runs them
  std::vector<Case> ritz_cases();    // the Ritz update's layouts and shapes
  // The parts of the above and of the constructor.
  std::vector<Case> lobpcg_step_cases();
  std::vector<Case> ortho_cases();
  std::vector<Case> ritz_layout_cases();
  std::vector<Case> ritz_shape_cases();
  std::vector<Case> ritz_apart_cases();
  void make_lobpcg_blocks();
  void make_ritz_matrices();
  void make_locking_blocks();

  MPI_Comm comm;
  const dense::Context context;
  const Space space;
  const std::int64_t m, k;

  dense::DenseBlock<T> X, Y, Z, W, S;
  dense::DenseBlock<T> three;  // block CG's [P Q R]
  solver::HostMatrix coefficients;
  dense::DenseBlock<T> S3, AS3, S3next;
  dense::DenseBlock<T> SAS, SASnext;  // block-eigs' layout: S and A S side by side
  dense::DenseBlock<T> YR, AYc, AZc, AS3next;
  std::vector<double> lambda;
  solver::HostMatrix ritz, projection;
  solver::HostMatrix ritz_short_p;
  solver::HostMatrix ritz_odd_m, ritz_odd_inputs;
  solver::HostMatrix ritz_m2;  // outputs two short (k >= 4)
  solver::HostMatrix ritz_m4;  // and four
  std::vector<std::int64_t> one_locked;
  solver::ImpliedAX implied_ax;
  solver::HostMatrix odd_projection;
  std::vector<std::int64_t> all_but_first;
  const solver::OrthonormalizeTolerances tol = solver::OrthonormalizeTolerances::for_type<T>();
  dense::DenseBlock<T> QW, QW_scratch;
  std::vector<std::int64_t> three_quarters;
  std::int64_t active = 0;
  dense::ConstDenseView<T> x, y;
  const double block_bytes = double(m) * double(k) * sizeof(T);
  dense::DenseBlock<T> Zc, Rc;
  dense::DenseBlock<float> Zf, Rf;
  solver::ImpliedAX implied_apart;
};

template <class T>
Inputs<T>::Inputs(const apps::BenchOptions& options, MPI_Comm comm_)
    : comm(comm_),
      context(solver::make_context(options.backend, comm_)),
      space(context.space()),
      m(options.size),
      k(options.width) {
  X = dense::DenseBlock<T>(space, m, k);
  Y = dense::DenseBlock<T>(space, m, k);
  Z = dense::DenseBlock<T>(space, m, k);
  W = dense::DenseBlock<T>(space, m, k);
  S = dense::DenseBlock<T>(space, m, k);
  three = dense::DenseBlock<T>(space, m, 3 * k);
  solver::fill_random(context, three.view(), 4, 0);
  solver::fill_random(context, X.view(), 1, 0);
  solver::fill_random(context, Y.view(), 2, 0);
  solver::fill_random(context, Z.view(), 3, 0);
  coefficients = solver::HostMatrix(k, k);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < k; ++j) coefficients(i, j) = (i == j ? 1.0 : 0.0) + 1e-3 * double((i + 2 * j) % 5);
  make_lobpcg_blocks();
  make_ritz_matrices();
  make_locking_blocks();
}

template <class T>
void Inputs<T>::make_lobpcg_blocks() {
  // One LOBPCG iteration's operations at block size k: S = [X P W] and A S,
  // 3k columns each, the Ritz update into a second S.
  S3 = dense::DenseBlock<T>(space, m, 3 * k);
  AS3 = dense::DenseBlock<T>(space, m, 3 * k);
  S3next = dense::DenseBlock<T>(space, m, 3 * k);
  SAS = dense::DenseBlock<T>(space, m, 6 * k);
  SASnext = dense::DenseBlock<T>(space, m, 6 * k);
  solver::fill_random(context, S3.view(), 5, 0);
  solver::fill_random(context, AS3.view(), 6, 0);
  solver::fill_random(context, SAS.view(), 7, 0);
  // Layouts with every output row written whole: [Y R] side by side (3k
  // columns), A Y (2k) and A Z (k) each compact.
  YR = dense::DenseBlock<T>(space, m, 3 * k);
  AYc = dense::DenseBlock<T>(space, m, 2 * k);
  AZc = dense::DenseBlock<T>(space, m, k);
  AS3next = dense::DenseBlock<T>(space, m, 3 * k);
  solver::fill_random(context, AZc.view(), 9, 0);
}

template <class T>
void Inputs<T>::make_ritz_matrices() {
  lambda = std::vector<double>(static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < k; ++j) lambda[j] = 1.0 + 0.01 * double(j);
  ritz = solver::HostMatrix(3 * k, 2 * k);
  projection = solver::HostMatrix(2 * k, k);
  for (std::int64_t i = 0; i < 3 * k; ++i)
    for (std::int64_t j = 0; j < 2 * k; ++j) ritz(i, j) = (i == j ? 1.0 : 0.0) + 1e-3 * double((i + j) % 7);
  for (std::int64_t i = 0; i < 2 * k; ++i)
    for (std::int64_t j = 0; j < k; ++j) projection(i, j) = 1e-3 * double((2 * i + j) % 5);
  // The Ritz update as soft locking leaves it: P one column short (R then
  // starts at an odd column), and one residual (k / 4) placed after the
  // active ones (those after it move down a column).
  ritz_short_p = solver::HostMatrix(3 * k - 1, 2 * k - 1);
  for (std::int64_t i = 0; i < 3 * k - 1; ++i)
    for (std::int64_t j = 0; j < 2 * k - 1; ++j) ritz_short_p(i, j) = ritz(i, j);
  ritz_odd_m = solver::HostMatrix(3 * k, 2 * k - 1);
  ritz_odd_inputs = solver::HostMatrix(3 * k - 1, 2 * k);
  ritz_m2 = solver::HostMatrix(3 * k, std::max<std::int64_t>(k, 2 * k - 2));
  ritz_m4 = solver::HostMatrix(3 * k, std::max<std::int64_t>(k, 2 * k - 4));
  for (std::int64_t i = 0; i < 3 * k; ++i)
    for (std::int64_t j = 0; j < 2 * k; ++j) {
      if (j < 2 * k - 1) ritz_odd_m(i, j) = ritz(i, j);
      if (j < 2 * k - 2) ritz_m2(i, j) = ritz(i, j);
      if (j < 2 * k - 4) ritz_m4(i, j) = ritz(i, j);
      if (i < 3 * k - 1) ritz_odd_inputs(i, j) = ritz(i, j);
    }
  one_locked = std::vector<std::int64_t>(static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < k; ++j) one_locked[j] = j < k / 4 ? j : j == k / 4 ? k - 1 : j - 1;
  // A X implied by X Lambda and residuals in S's last k columns, in order.
  implied_ax = solver::ImpliedAX{lambda, 2 * k, {}};
  for (std::int64_t j = 0; j < k; ++j) implied_ax.position.push_back(j);
  odd_projection = solver::HostMatrix(2 * k - 1, k);
  for (std::int64_t i = 0; i < 2 * k - 1; ++i)
    for (std::int64_t j = 0; j < k; ++j) odd_projection(i, j) = projection(i, j);
  for (std::int64_t j = 1; j < k; ++j) all_but_first.push_back(j);
}

template <class T>
void Inputs<T>::make_locking_blocks() {
  // Soft locking with three quarters of the block active: W's orthogonalisation
  // against an orthonormal [X P] in the layout block-eigs uses (QW), either
  // compacting the active residuals first or picking them in the fused pass.
  QW = dense::DenseBlock<T>(space, m, 3 * k);
  QW_scratch = dense::DenseBlock<T>(space, m, 2 * k);
  solver::fill_random(context, QW.view(), 8, 0);
  (void)solver::orthonormalize(context, comm, solver::column_range(QW.view(), 0, 2 * k), QW_scratch.view(), tol);
  for (std::int64_t j = 0; j < k; ++j)
    if (j % 4 != 1) three_quarters.push_back(j);
  active = static_cast<std::int64_t>(three_quarters.size());
  x = X.view();
  y = Y.view();

  Zc = dense::DenseBlock<T>(space, m, k);
  Rc = dense::DenseBlock<T>(space, m, k);
  Zf = dense::DenseBlock<float>(space, m, k);
  Rf = dense::DenseBlock<float>(space, m, k);
  solver::fill_random(context, Zc.view(), 10, 0);
  solver::fill_random(context, Zf.view(), 10, 0);
  implied_apart = solver::ImpliedAX{lambda, 2 * k, implied_ax.position};
}

template <class T>
std::vector<Case> Inputs<T>::block_cases() {
  return {
      {"copy_block          (2 blocks)", 2, [&] { solver::copy_block(context, x, Y.view()); }},
      {"axpby               (3 blocks)", 3, [&] { solver::axpby(context, T(1), x, T(1), Y.view()); }},
      {"gram X^T Y          (2 blocks)", 2, [&] { (void)solver::gram(context, comm, x, y); }},
      {"gram X^T X          (1 block) ", 1, [&] { (void)solver::gram(context, comm, x); }},
      {"column_norms        (1 block) ", 1, [&] { (void)solver::column_norms(context, comm, x); }},
      {"block_update b=0    (2 blocks)", 2,
       [&] { solver::block_update(context, T(1), x, coefficients, T(0), Y.view()); }},
      {"block_update b=1    (3 blocks)", 3,
       [&] { solver::block_update(context, T(1), x, coefficients, T(1), Y.view()); }},
      {"block_combine       (3 blocks)", 3,
       [&] { solver::block_combine(context, T(1), x, coefficients, T(1), y, Z.view()); }},
      {"transform_in_place  (2 blocks)", 2,
       [&] { solver::transform_in_place(context, W.view(), coefficients, S.view()); }},
      {"block_combine_pair  (3 blocks)", 3,
       [&] { solver::block_combine_pair(context, x, coefficients, y, coefficients, Z.view(), S.view()); }},
      {"gram [X Y Z] self   (3 blocks)", 3,
       [&] { (void)solver::gram(context, comm, dense::ConstDenseView<T>(three.view())); }},
      {"condition_basis     (copy+SVQB)", 0,
       [&] {
         solver::copy_block(context, dense::ConstDenseView<T>(Z.view()), W.view());
         (void)solver::condition_basis(context, comm, W.view(), S.view(), tol);
       }},
      {"orthonormalize      (copy+SVQB)", 0,
       [&] {
         solver::copy_block(context, dense::ConstDenseView<T>(Z.view()), W.view());
         (void)solver::orthonormalize(context, comm, W.view(), S.view(), tol);
       }},
  };
}

template <class T>
std::vector<Case> Inputs<T>::lobpcg_cases() {
  std::vector<Case> cases = lobpcg_step_cases();
  for (Case& c : ortho_cases()) cases.push_back(std::move(c));
  return cases;
}

template <class T>
std::vector<Case> Inputs<T>::lobpcg_step_cases() {
  return {
      // LOBPCG, one iteration's block operations in the order it runs them.
      {"lobpcg residuals    (3 blocks)", 3,
       [&] {
         (void)solver::eigen_residuals(context, comm, ccols(S3, 0, k), ccols(AS3, 0, k), lambda, cols(S3, 2 * k, k));
       }},
      {"lobpcg keep_columns (2 blocks)", 2 * double(k - 1) / double(k),
       [&] { solver::keep_columns(context, cols(S3, 2 * k, k), all_but_first); }},
      {"lobpcg [X P]^T W    (3 blocks)", 3,
       [&] { (void)solver::gram(context, comm, ccols(S3, 0, 2 * k), ccols(S3, 2 * k, k)); }},
      {"lobpcg W -= [X P] C (4 blocks)", 4,
       [&] { solver::block_update(context, T(-1), ccols(S3, 0, 2 * k), projection, T(1), cols(S3, 2 * k, k)); }},
      {"lobpcg W^T W        (1 block) ", 1, [&] { (void)solver::gram(context, comm, ccols(S3, 2 * k, k)); }},
      {"lobpcg W T in place (2 blocks)", 2,
       [&] { solver::transform_in_place(context, cols(S3, 2 * k, k), coefficients, S.view()); }},
      // The fused first pass of condition_against: W = [X P] (-C T) + W T in place,
      // with P of k columns (W pair-aligned) and of k - 1 (W at an odd column).
      {"lobpcg [X P W] M    (4 blocks)", 4,
       [&] {
         solver::block_combine_pair(context, ccols(S3, 0, 2 * k), projection, ccols(S3, 2 * k, k), coefficients,
                                    cols(S3, 2 * k, k), S.view());
       }},
      {"lobpcg ... odd P    (4 blocks)", 4 - 1.0 / double(k),
       [&] {
         solver::block_combine_pair(context, ccols(S3, 0, 2 * k - 1), odd_projection, ccols(S3, 2 * k - 1, k),
                                    coefficients, cols(S3, 2 * k - 1, k), S.view());
       }},
      {"lobpcg S^T AS       (6 blocks)", 6,
       [&] { (void)solver::gram(context, comm, ccols(S3, 0, 3 * k), ccols(AS3, 0, 3 * k)); }},
      {"lobpcg S^T S        (3 blocks)", 3, [&] { (void)solver::gram(context, comm, ccols(S3, 0, 3 * k)); }},
      {"lobpcg S^T [S AS]   (6 blocks)", 6,
       [&] { (void)solver::gram(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 0, 6 * k)); }},
  };
}

// Soft locking and W's orthogonalisation against [X P], then W's Gram matrices.
template <class T>
std::vector<Case> Inputs<T>::ortho_cases() {
  return {
      {"lobpcg lock: compact, then ortho", 0,
       [&] {
         solver::copy_block(context, dense::ConstDenseView<T>(Z.view()), cols(QW, 2 * k, k));
         solver::keep_columns(context, cols(QW, 2 * k, k), three_quarters);
         (void)solver::condition_against(context, comm, ccols(QW, 0, 2 * k), cols(QW, 2 * k, active), S.view(), tol);
       }},
      {"lobpcg lock: select in the ortho", 0,
       [&] {
         solver::copy_block(context, dense::ConstDenseView<T>(Z.view()), cols(QW, 2 * k, k));
         solver::BasisOptions select;
         select.columns = &three_quarters;
         (void)solver::condition_against(context, comm, ccols(QW, 0, 2 * k), cols(QW, 2 * k, k), S.view(), tol,
                                         &select);
       }},
      // W left as raw columns and coefficients (BasisOptions::implicit, as
      // LOBPCG runs it): the Gram pass only, plus the compaction when locking.
      {"lobpcg ortho: W formed", 0,
       [&] {
         solver::copy_block(context, dense::ConstDenseView<T>(Z.view()), cols(QW, 2 * k, k));
         (void)solver::condition_against(context, comm, ccols(QW, 0, 2 * k), cols(QW, 2 * k, k), S.view(), tol);
       }},
      {"lobpcg ortho: W as coefficients", 0,
       [&] {
         solver::copy_block(context, dense::ConstDenseView<T>(Z.view()), cols(QW, 2 * k, k));
         solver::BasisOptions implicit;
         implicit.implicit = true;
         (void)solver::condition_against(context, comm, ccols(QW, 0, 2 * k), cols(QW, 2 * k, k), S.view(), tol,
                                         &implicit);
       }},
      {"lobpcg lock: W as coefficients", 0,
       [&] {
         solver::copy_block(context, dense::ConstDenseView<T>(Z.view()), cols(QW, 2 * k, k));
         solver::BasisOptions implicit;
         implicit.columns = &three_quarters;
         implicit.implicit = true;
         (void)solver::condition_against(context, comm, ccols(QW, 0, 2 * k), cols(QW, 2 * k, k), S.view(), tol,
                                         &implicit);
       }},
      // What a step with carried [X P] blocks measures instead: S^T A W.
      {"lobpcg S^T AW       (4 blocks)", 4,
       [&] { (void)solver::gram(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 5 * k, k)); }},
      // Both of W's Gram matrices in one pass over S, as block-eigs runs them
      // (the one-pass kernel up to 64 x 40, else two products).
      {"lobpcg S^T [W AW]   (4 blocks)", 4,
       [&] {
         (void)solver::start_gram_pair(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 2 * k, k), ccols(SAS, 5 * k, k))
             .finish();
       }},
      // One of them through the same kernel: against "lobpcg S^T AW" above.
      {"lobpcg S^T AW 1pass (4 blocks)", 4,
       [&] {
         (void)solver::start_gram_pair(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 5 * k, k), ccols(SAS, 5 * k, 0))
             .finish();
       }},
  };
}

template <class T>
std::vector<Case> Inputs<T>::ritz_cases() {
  std::vector<Case> cases = ritz_layout_cases();
  for (auto more : {ritz_shape_cases(), ritz_apart_cases()}) cases.insert(cases.end(), more.begin(), more.end());
  return cases;
}

// The Ritz update in the layouts block-eigs has used.
template <class T>
std::vector<Case> Inputs<T>::ritz_layout_cases() {
  return {
      {"lobpcg S [Cx Cp]    (5 blocks)", 5,
       [&] { solver::block_update(context, T(1), ccols(S3, 0, 3 * k), ritz, T(0), cols(S3next, 0, 2 * k)); }},
      // Both updates and the next residuals in one pass, as block-eigs runs them.
      {"lobpcg Ritz + R    (11 blocks)", 11,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 3 * k, 3 * k), ritz, lambda,
                                   cols(SASnext, 0, 2 * k), cols(SASnext, 3 * k, 2 * k), cols(SASnext, 2 * k, k));
       }},
      // The same pass as block-eigs runs it without a preconditioner: A X
      // implied by X Lambda and the residuals (S's last k columns), and the
      // next A X left to the residuals; then only the latter.
      {"lobpcg Ritz + R, A X implied (9)", 9,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 3 * k, 3 * k), ritz, lambda,
                                   cols(SASnext, 0, 2 * k), cols(SASnext, 3 * k, 2 * k), cols(SASnext, 2 * k, k), {},
                                   {}, &implied_ax, false);
       }},
      {"lobpcg Ritz + R, A X not stored (10)", 10,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 3 * k, 3 * k), ritz, lambda,
                                   cols(SASnext, 0, 2 * k), cols(SASnext, 3 * k, 2 * k), cols(SASnext, 2 * k, k), {},
                                   {}, nullptr, false);
       }},
      // The same pass with every output row written whole ([Y R] and A Y
      // apart), then also with S and A S read from blocks of their own.
      {"Ritz + R, outputs whole rows", 11,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 3 * k, 3 * k), ritz, lambda,
                                   cols(YR, 0, 2 * k), AYc.view(), cols(YR, 2 * k, k));
       }},
      {"Ritz + R, S AS apart, whole rows", 11,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(S3, 0, 3 * k), ccols(AS3, 0, 3 * k), ritz, lambda,
                                   cols(YR, 0, 2 * k), AYc.view(), cols(YR, 2 * k, k));
       }},
      {"Ritz + R, S AS apart, AY in AS", 11,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(S3, 0, 3 * k), ccols(AS3, 0, 3 * k), ritz, lambda,
                                   cols(YR, 0, 2 * k), cols(AS3next, 0, 2 * k), cols(YR, 2 * k, k));
       }},
      // The Gram pair with [X P Z] in a block of its own and A Z compact.
      {"S^T [W AW], S apart, AW compact", 4,
       [&] {
         (void)solver::start_gram_pair(context, comm, ccols(S3, 0, 3 * k), ccols(S3, 2 * k, k),
                                       dense::ConstDenseView<T>(AZc.view()))
             .finish();
       }},
  };
}

// The Ritz update with odd and short column counts, as soft locking leaves them.
template <class T>
std::vector<Case> Inputs<T>::ritz_shape_cases() {
  std::vector<Case> cases = {
      {"Ritz + R, R at an odd column", 11,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k - 1), ccols(SAS, 3 * k, 3 * k - 1), ritz_short_p,
                                   lambda, cols(SASnext, 0, 2 * k - 1), cols(SASnext, 3 * k, 2 * k - 1),
                                   cols(SASnext, 2 * k - 1, k));
       }},
      // Which part of the odd P costs: an odd output count with R still at an
      // even column, or an odd input count alone.
      {"Ritz + R, odd outputs, R even", 11,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 3 * k, 3 * k), ritz_odd_m, lambda,
                                   cols(SASnext, 0, 2 * k - 1), cols(SASnext, 3 * k, 2 * k - 1),
                                   cols(SASnext, 2 * k, k));
       }},
      {"Ritz + R, odd inputs", 11,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k - 1), ccols(SAS, 3 * k, 3 * k - 1),
                                   ritz_odd_inputs, lambda, cols(SASnext, 0, 2 * k), cols(SASnext, 3 * k, 2 * k),
                                   cols(SASnext, 2 * k, k));
       }},
      {"Ritz + R, one residual last", 11,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 3 * k, 3 * k), ritz, lambda,
                                   cols(SASnext, 0, 2 * k), cols(SASnext, 3 * k, 2 * k), cols(SASnext, 2 * k, k),
                                   one_locked);
       }},
      {"Ritz + R, both", 11,
       [&] {
         (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k - 1), ccols(SAS, 3 * k, 3 * k - 1), ritz_short_p,
                                   lambda, cols(SASnext, 0, 2 * k - 1), cols(SASnext, 3 * k, 2 * k - 1),
                                   cols(SASnext, 2 * k - 1, k), one_locked);
       }},
  };
  // Outputs two and four short of 2k, R at an even column: is it an odd count or
  // a partial 32-byte sector (a count not a multiple of 4) that costs?
  if (k >= 4)
    cases.insert(cases.end(),
                 {{"Ritz + R, outputs 2 short, R even", 11,
                   [&] {
                     (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 3 * k, 3 * k), ritz_m2,
                                               lambda, cols(SASnext, 0, 2 * k - 2), cols(SASnext, 3 * k, 2 * k - 2),
                                               cols(SASnext, 2 * k, k));
                   }},
                  {"Ritz + R, outputs 4 short, R even", 11, [&] {
                     (void)solver::ritz_update(context, comm, ccols(SAS, 0, 3 * k), ccols(SAS, 3 * k, 3 * k), ritz_m4,
                                               lambda, cols(SASnext, 0, 2 * k - 4), cols(SASnext, 3 * k, 2 * k - 4),
                                               cols(SASnext, 2 * k, k));
                   }}});
  return cases;
}

template <class T>
std::vector<Case> Inputs<T>::ritz_apart_cases() {
  std::vector<Case> cases;
  // LOBPCG's step with the residuals Z in a compact block of their own, in
  // fp64 and in fp32 (eigensolver.search_precision), A Z compact in fp64.
  if constexpr (std::is_same_v<T, double>) {
    const solver::SplitColumns<T> s64(ccols(SAS, 0, 2 * k), dense::ConstDenseView<T>(Zc.view())),
        as(ccols(SAS, 3 * k, 2 * k), dense::ConstDenseView<T>(AZc.view()));
    const solver::SplitColumns<T, float> s32(ccols(SAS, 0, 2 * k), dense::ConstDenseView<float>(Zf.view()));
    cases.push_back({"Ritz + R, implied, Z fp64 apart", 9, [&, s64, as] {
                       (void)solver::ritz_update<T>(context, comm, s64, as, ritz, lambda, cols(SASnext, 0, 2 * k),
                                                    cols(SASnext, 3 * k, 2 * k), Rc.view(), {}, {}, &implied_apart,
                                                    false);
                     }});
    cases.push_back({"Ritz + R, implied, Z fp32 apart", 8, [&, s32, as] {
                       (void)solver::ritz_update(context, comm, s32, as, ritz, lambda, cols(SASnext, 0, 2 * k),
                                                 cols(SASnext, 3 * k, 2 * k), Rf.view(), {}, {}, &implied_apart, false);
                     }});
    cases.push_back({"S^T [Z AZ], Z fp64 apart", 4, [&, s64] {
                       (void)solver::start_gram_pair<T>(context, comm, s64, dense::ConstDenseView<T>(Zc.view()),
                                                        dense::ConstDenseView<T>(AZc.view()))
                           .finish();
                     }});
    cases.push_back({"S^T [Z AZ], Z fp32 apart", 3.5, [&, s32] {
                       (void)solver::start_gram_pair(context, comm, s32, dense::ConstDenseView<float>(Zf.view()),
                                                     dense::ConstDenseView<T>(AZc.view()))
                           .finish();
                     }});
  }
  return cases;
}

template <class T>
void run(const apps::BenchOptions& options, MPI_Comm comm) {
  Inputs<T> in(options, comm);
  std::vector<Case> cases = in.block_cases();
  for (auto more : {in.lobpcg_cases(), in.ritz_cases()}) cases.insert(cases.end(), more.begin(), more.end());
  const std::int64_t m = in.m, k = in.k;
  const double block_bytes = in.block_bytes;
  const dense::Context& context = in.context;
  const Space space = in.space;
  std::printf("block-ops-bench: %lld x %lld, %s, %s (one block = %.1f MB)\n", (long long)m, (long long)k,
              sizeof(T) == 8 ? "fp64" : "fp32", space == Space::device ? "cuda" : "cpu", block_bytes / 1e6);
  double copy_rate = 0;
  for (const Case& c : cases) {
    for (int i = 0; i < 2; ++i) c.step();
    context.synchronize();
    std::vector<double> times;
    for (int i = 0; i < options.reps; ++i) {
      const double start = MPI_Wtime();
      c.step();
      context.synchronize();
      times.push_back(MPI_Wtime() - start);
    }
    const double t = apps::median(times);
    const double rate = c.blocks * block_bytes / t / 1e9;
    if (copy_rate == 0) copy_rate = rate;
    if (c.blocks > 0)
      std::printf("  %-32s %9.3f ms  %7.0f GB/s  %4.0f%% of copy\n", c.name.c_str(), t * 1e3, rate,
                  100 * rate / copy_rate);
    else
      std::printf("  %-32s %9.3f ms  = %.1f block transfers at copy rate\n", c.name.c_str(), t * 1e3,
                  t * copy_rate * 1e9 / block_bytes);
    std::printf("CSV,block_ops,%lld,%lld,%s,\"%s\",%.6f\n", (long long)m, (long long)k,
                sizeof(T) == 8 ? "fp64" : "fp32", c.name.c_str(), t * 1e3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!init_mpi(&argc, &argv)) return 1;
  if (apps::answered_info(argc, argv, "block-ops-bench", usage)) {
    finalize_mpi();
    return apps::exit_ok;
  }
  // 2,097,152 rows: the 128^3 Laplacian of the solver benchmarks.
  const std::optional<apps::BenchOptions> options =
      apps::parse_bench_options(argc, argv, "--rows", 2097152, "block-ops-bench", usage);
  int code = options ? 0 : 2;
  if (options) {
    try {
      if (options->fp32)
        run<float>(*options, MPI_COMM_SELF);
      else
        run<double>(*options, MPI_COMM_SELF);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "block-ops-bench: %s\n", e.what());
      code = 1;
    }
  }
  finalize_mpi();
  return code;
}

// LOBPCG's Ritz update with the next residuals in one pass (ritz_update.cpp;
// on the device the one-pass kernel of solver/blocks/cuda/ritz_update.cu
// behind the block operations' device interface).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "solver/blocks/block_ops.hpp"

namespace blockeigs::solver {

// Where LOBPCG's Ritz update finds A X, the first nb columns of the basis'
// A S, when they are not stored: A X(:, j) = theta_j X(:, j) + S(:, first +
// position[j]), X being S's first nb columns and the last residuals
// R = A X - X Theta nb columns of S from `first` >= nb on. (Without a
// preconditioner LOBPCG keeps them after [X P] anyway: the active ones are
// the raw columns of its next W.)
struct ImpliedAX {
  std::vector<double> theta;           // nb values
  std::int64_t first = 0;              // the residuals' first column in S
  std::vector<std::int64_t> position;  // residual j at column first + position[j]
};

// LOBPCG's Ritz update and the next residuals: Y = S C and AY = AS C (C:
// AS.cols() x Y.cols; S and AS may each come in two views, SplitColumns),
// then
// R = AY(:, :nb) - Y(:, :nb) diag(lambda) with
// nb = R.cols = lambda.size() <= Y.cols, and the norms of R's and
// Y(:, :nb)'s columns over all ranks. Y, AY and R must not overlap S, AS or
// each other. One pass over S and AS on the device in fp64 for up to 96
// inputs and 64 outputs (solver/blocks/cuda/ritz_update.cu); otherwise the two
// updates and eigen_residuals, with the same results to rounding.
// `r_position` places R's columns as in eigen_residuals. `meanwhile`, if
// given, runs on the host once Y, AY and R are queued (it may queue work
// that reads them): in the one-pass kernel's case before the norms are
// waited for, so that it overlaps the pass; on the other paths after.
//
// With `implied_ax`, AS(:, :nb) is not read: A X is taken as it describes,
// and S holds every column it names (S.cols >= AS.cols(); C applies to S's
// first AS.cols() columns). With `store_ax` false, AY(:, :nb) (the next A X)
// need not be written; the residuals describe it (the device kernels leave
// it, the other paths write it). Together they spare a pass 2 nb of its
// columns (LOBPCG's 220 at block 20 become 180).
template <class T>
ResidualNorms ritz_update(const dense::Context& context, MPI_Comm comm, const std::type_identity_t<SplitColumns<T>>& S,
                          const std::type_identity_t<SplitColumns<T>>& AS, const HostMatrixFor<T>& C,
                          const std::vector<double>& lambda, dense::DenseView<T> Y, dense::DenseView<T> AY,
                          dense::DenseView<T> R, const std::vector<std::int64_t>& r_position = {},
                          const std::function<void()>& meanwhile = {}, const ImpliedAX* implied_ax = nullptr,
                          bool store_ax = true);
// Whether LOBPCG should hold A X implied (ImpliedAX) for S of up to ns
// columns, A S (the basis) of up to nv and m outputs: where the one-pass
// device kernel takes the shape (fp64, LOBPCG's blocks up to 20 at its
// column alignment). Not on the host, where the implied form's three
// products cost more than the stored form's two (block-ops-bench).
template <class T>
bool ritz_update_prefers_implied_ax(const dense::Context& context, std::int64_t ns, std::int64_t nv, std::int64_t m,
                                    std::int64_t nb);

}  // namespace blockeigs::solver

// A solver's block of results (this rank's rows in the operator's numbering,
// in either memory space and precision) as a result file's block: fp64 rows
// of the input's numbering, with as few full copies as the numbering allows.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/run/output/distributed_output.hpp"
#include "solver/operator/row_numbering.hpp"
#include "dense/dense.hpp"

namespace blockeigs::apps {

// `X` ready to write; X and `numbering` must outlive the write. Written
// straight from X where it is compact fp64 on the host in the input's
// numbering; else copied to the host (widened, permuted where the rows stay
// on their ranks) a piece at a time as the file takes them; where rows move
// between ranks, each piece's rows move in one exchange of every rank
// (DistributedBlock::collective_pieces). A device block that the numbering
// permutes is copied to the host whole first. Pieces of about `piece_bytes`
// in the file. Collective.
template <class T>
DistributedBlock block_in_input_order(const std::string& dataset, dense::ConstDenseView<T> X,
                                      const solver::RowNumbering& numbering, MPI_Comm comm,
                                      std::int64_t piece_bytes = output_piece_bytes);

// The same for rows already on the host in fp64 (`cols` columns, row-major),
// taken over and moved to the input's numbering at once.
DistributedBlock block_in_input_order(const std::string& dataset, std::vector<double> local, std::int64_t cols,
                                      const solver::RowNumbering& numbering, MPI_Comm comm);

// The seconds this rank spent in block_in_input_order's row exchanges since the last call, by step: the
// copy to the host, the exchange's plan (the counting sort), packing the records, the exchanges of counts
// and records, unpacking them. A benchmark's breakdown (output-bench).
struct ExchangeSeconds {
  double to_host = 0, plan = 0, pack = 0, exchange = 0, unpack = 0;
};
ExchangeSeconds take_exchange_seconds();

}  // namespace blockeigs::apps

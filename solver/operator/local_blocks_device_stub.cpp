// The device split where the build has no CUDA: never chosen by
// split_local_rows(context, rows) (a host context), an error if called.
#include "core/error.hpp"
#include "solver/operator/local_blocks.hpp"

namespace blockeigs::solver {

template <class T>
LocalBlocks<T> split_local_rows_on_device(const spmm::Context&, const io::CsrRows&) {
  throw Error("split_local_rows_on_device: block-eigs was built without CUDA");
}

template <class T>
LocalBlocks<T> split_replicated_on_device(const spmm::Context&, const ReplicatedCsr&) {
  throw Error("split_replicated_on_device: block-eigs was built without CUDA");
}

template LocalBlocks<float> split_replicated_on_device(const spmm::Context&, const ReplicatedCsr&);
template LocalBlocks<double> split_replicated_on_device(const spmm::Context&, const ReplicatedCsr&);
template LocalBlocks<float> split_local_rows_on_device(const spmm::Context&, const io::CsrRows&);
template LocalBlocks<double> split_local_rows_on_device(const spmm::Context&, const io::CsrRows&);

}  // namespace blockeigs::solver

// A build without Scotch: no Gibbs-Poole-Stockmeyer ordering to compare with.
#include "core/error.hpp"
#include "solver/operator/partition/band_order.hpp"

namespace blockeigs::solver {

bool scotch_band_order_compiled() { return false; }

std::vector<std::int64_t> scotch_band_order(const CsrRows&, int) {
  throw LibraryError("Scotch's band ordering is not compiled into this build (no Scotch)");
}

}  // namespace blockeigs::solver

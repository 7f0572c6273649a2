// A build without Scotch: local_order.cpp refuses execution.local_order: band
// before it gets here.
#include "core/error.hpp"
#include "solver/operator/partition/band_order.hpp"

namespace blockeigs::solver {

bool band_order_compiled() { return false; }

std::string band_order_name() { return "none"; }

std::vector<std::int64_t> band_order(const io::CsrRows&, int) {
  throw LibraryError("band ordering is not compiled into this build (no Scotch)");
}

}  // namespace blockeigs::solver

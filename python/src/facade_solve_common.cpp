// What the facade's solves share: the caller's blocks in the backend's space,
// the preconditioner a request names, the library's blocks handed to the
// caller, the stop request agreed between iterations, and phase timings.
#include "python/src/facade_internal.hpp"

namespace blockeigs::python {

using namespace internal;

namespace {

template <class Preconditioner>
std::string describe_chebyshev(const Preconditioner& p) {
  const solver::ChebyshevInterval& iv = p.interval();
  return detail::concat("chebyshev, degree ", p.degree(), ", in ", to_string(p.precision()), ", 1/x on [", iv.a, ", ",
                        iv.b, "]");
}

}  // namespace

namespace internal {

// A caller's block as a view in `space`: its own memory where it is there already, else a copy in `copy`.
template <class T>
dense::ConstDenseView<T> in_space(const BlockRef& block, Space space, std::optional<dense::DenseBlock<T>>& copy,
                                  const char* name) {
  if (block.complex != is_complex_v<T>)
    fail_input(name, block.complex ? " is complex, but A is real" : " is real, but A is complex", ": pass ",
               block.complex ? "real" : "complex", " values");
  const Space from = block.device ? Space::device : Space::host;
  const auto* data = reinterpret_cast<const T*>(block.data);
  if (from == space) return {space, block.rows, block.cols, block.ld, data};
  if (from == Space::device)
    fail_input(name, " is a device array, but the backend is the CPU (backend=\"cpu\", or no GPU): pass a host array");
  copy.emplace(space, block.rows, block.cols);
  for (std::int64_t i = 0; i < block.rows; ++i)
    dense::copy_bytes(copy->data() + i * block.cols, space, data + i * block.ld, Space::host, sizeof(T) * block.cols);
  return copy->cview();
}

template dense::ConstDenseView<double> in_space(const BlockRef&, Space, std::optional<dense::DenseBlock<double>>&,
                                                const char*);
template dense::ConstDenseView<std::complex<double>> in_space(const BlockRef&, Space,
                                                              std::optional<dense::DenseBlock<std::complex<double>>>&,
                                                              const char*);

// The preconditioner eigensolver.preconditioner describes, on `op` (null for none).
template <class T>
std::unique_ptr<solver::Preconditioner<T>> make_preconditioner(const solver::PreconditionerOptions& config,
                                                               solver::LinearOperator<T>& op, SpectrumEnd end,
                                                               bool eigensolver, std::string& description) {
  description = std::string(to_string(config.kind));
  if (config.kind == PreconditionerKind::jacobi) return std::make_unique<solver::JacobiPreconditioner<T>>(op);
  if (config.kind == PreconditionerKind::chebyshev) {
    auto chebyshev =
        std::make_unique<solver::ChebyshevPreconditioner<T>>(op, solver::chebyshev_options(config, end, eigensolver));
    description = describe_chebyshev(*chebyshev);
    return chebyshev;
  }
  if (config.kind == PreconditionerKind::petsc)
    solver::fail_input_everywhere("M: type petsc is not offered by the Python module (use jacobi or chebyshev)");
  return nullptr;
}

template std::unique_ptr<solver::Preconditioner<double>> make_preconditioner(const solver::PreconditionerOptions&,
                                                                             solver::LinearOperator<double>&,
                                                                             SpectrumEnd, bool, std::string&);
template std::unique_ptr<solver::Preconditioner<std::complex<double>>> make_preconditioner(
    const solver::PreconditionerOptions&, solver::LinearOperator<std::complex<double>>&, SpectrumEnd, bool,
    std::string&);

template <class T>
OwnedBlock own(dense::DenseBlock<T>&& block, const dense::Context& context) {
  auto kept = std::make_shared<dense::DenseBlock<T>>(std::move(block));
  OwnedBlock out;
  out.data = reinterpret_cast<double*>(kept->data());  // a complex value is two doubles (std::complex's layout)
  out.complex = is_complex_v<T>;
  out.rows = kept->rows();
  out.cols = kept->cols();
  out.ld = kept->ld();
  out.device = kept->space() == Space::device;
  out.device_id = std::max(context.device(), 0);
  out.keep = std::move(kept);
  return out;
}

template OwnedBlock own(dense::DenseBlock<double>&&, const dense::Context&);
template OwnedBlock own(dense::DenseBlock<std::complex<double>>&&, const dense::Context&);

// Between iterations: whether any rank's caller asks to stop. Collective.
std::function<bool()> agreed_stop(const std::function<bool()>& interrupted, MPI_Comm comm) {
  if (!interrupted) return {};
  return [&interrupted, comm] {
    int stop = interrupted() ? 1 : 0;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, comm));
    return stop != 0;
  };
}

void add_phase(Timings& t, const char* name, double seconds) { t.phases.emplace_back(name, seconds); }

}  // namespace internal

}  // namespace blockeigs::python

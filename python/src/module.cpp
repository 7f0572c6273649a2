// The extension module blockeigs._blockeigs: facade.hpp's functions for the
// package's Python code (python/blockeigs/), which checks and converts the
// arguments and shapes the results. Arrays cross as nb::ndarray (DLPack):
// host (NumPy) or CUDA (CuPy) memory, never copied here.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <type_traits>

#include "python/src/facade.hpp"

namespace nb = nanobind;
using namespace nb::literals;
namespace py = blockeigs::python;

namespace {

// A row-major float64 or complex128 block, host or device; the Python code makes it C-contiguous.
using Block = nb::ndarray<nb::ndim<2>, nb::c_contig>;
using HostInts = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
// Host values: float64 or complex128 (checked here).
using HostValues = nb::ndarray<nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using HostBlock = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
// A replicated matrix's arrays: host or device, int32 or int64 indices, float64 or complex128 values (checked here).
using Indices = nb::ndarray<nb::ndim<1>, nb::c_contig>;
using Values = nb::ndarray<nb::ndim<1>, nb::c_contig>;

// Whether `data` holds complex128 values (else float64; anything else refused).
template <class Array>
bool complex_values(const Array& data) {
  if (data.dtype() == nb::dtype<std::complex<double>>()) return true;
  if (data.dtype() == nb::dtype<double>()) return false;
  throw nb::type_error("arrays must hold float64 or complex128 values");
}

// The arrays of a CSR matrix every rank holds whole, where they are (no copy).
py::CsrArrays csr_arrays(std::int64_t n, const Indices& indptr, const Indices& indices, const Values& data) {
  const auto int_width = [](const Indices& a, const char* name) {
    if (a.dtype() == nb::dtype<std::int32_t>()) return false;
    if (a.dtype() == nb::dtype<std::int64_t>()) return true;
    throw nb::type_error((std::string(name) + " must hold int32 or int64").c_str());
  };
  py::CsrArrays a;
  a.n = n;
  a.nnz = static_cast<std::int64_t>(indices.shape(0));
  a.wide = int_width(indptr, "indptr");
  if (int_width(indices, "indices") != a.wide) throw nb::type_error("indptr and indices must have the same dtype");
  if (static_cast<std::int64_t>(indptr.shape(0)) != n + 1 || data.shape(0) != indices.shape(0))
    throw nb::value_error("from_replicated: indptr must have n + 1 entries and data as many as indices");
  const auto device = indptr.device_type();
  if (indices.device_type() != device || data.device_type() != device ||
      (device == nb::device::cuda::value &&
       (indices.device_id() != indptr.device_id() || data.device_id() != indptr.device_id())))
    throw nb::value_error("from_replicated: indptr, indices and data must be in the same memory");
  if (device != nb::device::cpu::value && device != nb::device::cuda::value)
    throw nb::value_error("from_replicated: the arrays must be in host or CUDA device memory");
  a.offsets = indptr.data();
  a.columns = indices.data();
  a.complex = complex_values(data);
  a.values = static_cast<const double*>(data.data());  // complex: (re, im) pairs
  a.device = device == nb::device::cuda::value;
  a.device_id = a.device ? static_cast<int>(indptr.device_id()) : 0;
  return a;
}

py::BlockRef reference(const Block& a) {
  py::BlockRef r;
  r.complex = complex_values(a);
  r.data = static_cast<const double*>(a.data());
  r.rows = static_cast<std::int64_t>(a.shape(0));
  r.cols = static_cast<std::int64_t>(a.shape(1));
  r.ld = r.cols;
  r.device = a.device_type() == nb::device::cuda::value;
  return r;
}

std::optional<py::BlockRef> reference(const std::optional<Block>& a) {
  if (!a) return std::nullopt;
  return reference(*a);
}

// The library's block as a NumPy or CuPy array that keeps it alive.
nb::object to_python(py::OwnedBlock&& b) {
  auto* keep = new std::shared_ptr<void>(std::move(b.keep));
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<void>*>(p); });
  const std::size_t shape[2] = {static_cast<std::size_t>(b.rows), static_cast<std::size_t>(b.cols)};
  const std::int64_t strides[2] = {b.ld, 1};
  if (b.complex) {
    auto* data = reinterpret_cast<std::complex<double>*>(b.data);
    if (b.device)
      return nb::cast(nb::ndarray<nb::cupy, std::complex<double>, nb::ndim<2>>(
          data, 2, shape, owner, strides, nb::dtype<std::complex<double>>(), nb::device::cuda::value, b.device_id));
    return nb::cast(nb::ndarray<nb::numpy, std::complex<double>, nb::ndim<2>>(data, 2, shape, owner, strides));
  }
  if (b.device)
    return nb::cast(nb::ndarray<nb::cupy, double, nb::ndim<2>>(b.data, 2, shape, owner, strides, nb::dtype<double>(),
                                                               nb::device::cuda::value, b.device_id));
  return nb::cast(nb::ndarray<nb::numpy, double, nb::ndim<2>>(b.data, 2, shape, owner, strides));
}

nb::object to_python(std::vector<double>&& v, std::int64_t cols) {
  auto* kept = new std::vector<double>(std::move(v));
  nb::capsule owner(kept, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  const std::size_t shape[2] = {cols > 0 ? kept->size() / static_cast<std::size_t>(cols) : 0,
                                static_cast<std::size_t>(cols)};
  return nb::cast(nb::ndarray<nb::numpy, double, nb::ndim<2>>(kept->data(), 2, shape, owner));
}

// Polled between iterations without the GIL: takes it to run Python's signal
// handlers (Ctrl-C); the KeyboardInterrupt is raised by the Python code once
// the ranks have agreed to stop.
bool interrupted() {
  nb::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return false;
  PyErr_Clear();
  return true;
}

// A list or tuple of ints and floats (an interval's [a, b]) as doubles.
std::vector<double> numbers(const std::string& key, nb::handle value) {
  std::vector<double> out;
  for (nb::handle item : value) {
    if (!nb::isinstance<nb::int_>(item) && !nb::isinstance<nb::float_>(item))
      throw nb::value_error((key + " must be a list of numbers, got an item of type " +
                             nb::cast<std::string>(nb::str(item.type().attr("__name__"))))
                                .c_str());
    out.push_back(nb::cast<double>(item));
  }
  return out;
}

// A config section's keys as Python gives them (a dict of bool, int, float, str
// and dicts; None leaves a key out), for the config's readers, which check them.
blockeigs::cfg::Keywords keywords(const nb::dict& d) {
  blockeigs::cfg::Keywords out;
  for (auto [key, value] : d) {
    if (value.is_none()) continue;
    blockeigs::cfg::Keyword k{nb::cast<std::string>(nb::str(key)), false};
    if (nb::isinstance<nb::bool_>(value))
      k.value = nb::cast<bool>(value);
    else if (nb::isinstance<nb::int_>(value))
      k.value = nb::cast<std::int64_t>(value);
    else if (nb::isinstance<nb::float_>(value))
      k.value = nb::cast<double>(value);
    else if (nb::isinstance<nb::str>(value))
      k.value = nb::cast<std::string>(value);
    else if (nb::isinstance<nb::dict>(value))
      k.value = keywords(nb::cast<nb::dict>(value));
    else if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value))
      k.value = numbers(k.key, value);
    else
      throw nb::value_error((k.key + " must be a bool, an int, a float, a str, a dict or a list of numbers, got " +
                             nb::cast<std::string>(nb::str(value.type().attr("__name__"))))
                                .c_str());
    out.push_back(std::move(k));
  }
  return out;
}

py::Section section(const nb::dict& d, const std::string& source) { return {keywords(d), source}; }

nb::dict timings(const py::Timings& t) {
  nb::dict d;
  d["setup"] = t.setup;
  d["solve"] = t.solve;
  nb::dict phases;
  for (const auto& [name, seconds] : t.phases) phases[name.c_str()] = seconds;
  d["phases"] = phases;
  return d;
}

// A window's account (eigensolver.interval): its counts and each slice's.
nb::dict window(const py::WindowSummary& w) {
  nb::dict d;
  d["interval"] = nb::make_tuple(w.lower, w.upper);
  d["count"] = w.count;
  d["count_method"] = w.count_method;
  d["certified"] = w.certified >= 0 ? nb::cast(w.certified) : nb::none();
  d["certified_below"] = w.certified_below >= 0 ? nb::cast(w.certified_below) : nb::none();
  d["expected"] = nb::make_tuple(w.expected, w.expected_error);
  d["spectrum"] = nb::make_tuple(w.spectrum_lower, w.spectrum_upper);
  d["slice_groups"] = w.groups;
  nb::list slices;
  for (const py::WindowSlice& s : w.slices) {
    nb::dict slice;
    slice["interval"] = nb::make_tuple(s.lower, s.upper);
    slice["expected"] = nb::make_tuple(s.expected, s.expected_error);
    slice["certified"] = s.certified >= 0 ? nb::cast(s.certified) : nb::none();
    slice["found"] = s.found;
    slice["block"] = s.block;
    slice["degree"] = s.degree;
    slice["iterations"] = s.iterations;
    slice["seconds"] = s.seconds;
    slice["complete"] = s.complete;
    slice["group"] = s.group;
    slice["merged"] = s.merged;
    slices.append(slice);
  }
  d["slices"] = slices;
  return d;
}

nb::dict lobpcg(py::Matrix& a, py::Matrix* b, const nb::dict& eigensolver, const nb::dict& execution,
                const std::string& source, std::optional<Block> start, std::optional<Block> constraints,
                bool interruptible) {
  py::EigsRequest request;
  request.eigensolver = section(eigensolver, source);
  request.execution = section(execution, source);
  request.start = reference(start);
  request.constraints = reference(constraints);
  if (interruptible) request.interrupted = interrupted;
  py::EigsResult r;
  {
    nb::gil_scoped_release release;
    r = py::lobpcg(a, b, request);
  }
  nb::dict d;
  d["eigenvalues"] = r.eigenvalues;
  d["residual_norms"] = r.residual_norms;
  d["relative_residuals"] = r.relative_residuals;
  d["converged"] = std::vector<bool>(r.converged.begin(), r.converged.end());
  d["iterations"] = r.iterations;
  d["block_size"] = r.block_size;
  d["stop"] = r.stop;
  d["preconditioner"] = r.preconditioner;
  d["method"] = r.method;
  d["history_eigenvalues"] = r.history_eigenvalues;
  d["history_residual_norms"] = r.history_residual_norms;
  d["timings"] = timings(r.timings);
  if (r.window) d["window"] = window(*r.window);
  d["eigenvectors"] = to_python(std::move(r.eigenvectors));
  return d;
}

nb::dict cg(py::Matrix& a, const Block& rhs, std::optional<Block> start, const nb::dict& block_cg,
            const nb::dict& execution, const std::string& source, bool interruptible) {
  py::CgRequest request;
  request.block_cg = section(block_cg, source);
  request.execution = section(execution, source);
  request.rhs = reference(rhs);
  request.start = reference(start);
  if (interruptible) request.interrupted = interrupted;
  py::CgResult r;
  {
    nb::gil_scoped_release release;
    r = py::cg(a, request);
  }
  nb::dict d;
  d["iterations"] = r.iterations;
  d["converged"] = std::vector<bool>(r.converged.begin(), r.converged.end());
  d["rhs_norms"] = r.rhs_norms;
  d["residual_norms"] = r.residual_norms;
  d["true_residual_norms"] = r.true_residual_norms;
  d["total_iterations"] = r.total_iterations;
  d["stop"] = r.stop;
  d["preconditioner"] = r.preconditioner;
  d["history"] = r.history;
  d["timings"] = timings(r.timings);
  d["solution"] = to_python(std::move(r.solution));
  return d;
}

}  // namespace

namespace {

// MPI, the build's facts and the helpers the package's Python side calls.
void bind_mpi(nb::module_& m) {
  m.def("initialize_mpi", &py::initialize_mpi);
  m.def("finalize_mpi", &py::finalize_mpi);
  m.def("mpi_library", &py::mpi_library);
  m.def("comm_world", &py::comm_world);
  m.def("comm_rank", &py::comm_rank, "comm"_a);
  m.def("comm_size", &py::comm_size, "comm"_a);
  m.def("cuda_compiled", &py::cuda_compiled);
  m.def("version", &py::version);
  m.def("agree_on_input", &py::agree_on_input, "comm"_a, "message"_a);
  m.def("allgather_rows", [](py::CommHandle comm, const HostBlock& block) {
    const auto cols = static_cast<std::int64_t>(block.shape(1));
    std::vector<double> v(block.data(), block.data() + block.size());
    std::vector<double> all;
    {
      nb::gil_scoped_release release;
      all = py::allgather_rows(comm, v, cols);
    }
    return to_python(std::move(all), cols);
  });
  m.def("balanced_partition", [](const HostInts& offsets, int ranks) {
    return py::balanced_partition(offsets.data(), static_cast<std::int64_t>(offsets.shape(0)) - 1, ranks);
  });
}

// Matrix.from_rows: this rank's rows, real or complex values (copied; the GIL released for the checks).
std::shared_ptr<py::Matrix> matrix_from_rows(py::CommHandle comm, std::int64_t n, std::int64_t first_row,
                                             const HostInts& indptr, const HostInts& indices, const HostValues& data,
                                             const std::string& description) {
  std::vector<std::int64_t> offsets(indptr.data(), indptr.data() + indptr.shape(0));
  std::vector<std::int64_t> columns(indices.data(), indices.data() + indices.shape(0));
  const auto take = [&](auto* values) {
    std::vector<std::remove_const_t<std::remove_pointer_t<decltype(values)>>> v(values, values + data.shape(0));
    nb::gil_scoped_release release;
    return py::Matrix::from_rows(comm, n, first_row, std::move(offsets), std::move(columns), std::move(v), description);
  };
  if (complex_values(data)) return take(static_cast<const std::complex<double>*>(data.data()));
  return take(static_cast<const double*>(data.data()));
}

// The distributed matrix: built from rows or a file, distributed, and blocks moved to and from the input's order.
void bind_matrix(nb::module_& m) {
  nb::class_<py::Matrix>(m, "Matrix")
      .def_static("from_rows", &matrix_from_rows, "comm"_a, "n"_a, "first_row"_a, "indptr"_a, "indices"_a, "data"_a,
                  "description"_a)
      .def_static(
          "from_replicated",
          [](py::CommHandle comm, std::int64_t n, const Indices& indptr, const Indices& indices, const Values& data,
             std::vector<std::int64_t> first_rows, const std::string& description) {
            const py::CsrArrays arrays = csr_arrays(n, indptr, indices, data);
            nb::gil_scoped_release release;
            return py::Matrix::from_replicated(comm, arrays, std::move(first_rows), description);
          },
          "comm"_a, "n"_a, "indptr"_a, "indices"_a, "data"_a, "first_rows"_a, "description"_a)
      .def_static(
          "load",
          [](py::CommHandle comm, const std::string& file, const std::string& group) {
            nb::gil_scoped_release release;
            return py::Matrix::load(comm, file, group);
          },
          "comm"_a, "file"_a, "group"_a)
      .def_prop_ro("global_rows", &py::Matrix::global_rows)
      .def_prop_ro("global_nnz", &py::Matrix::global_nnz)
      .def_prop_ro("first_row", &py::Matrix::first_row)
      .def_prop_ro("local_rows", &py::Matrix::local_rows)
      .def_prop_ro("description", &py::Matrix::description)
      .def_prop_ro("comm", &py::Matrix::comm)
      .def_prop_ro("complex", &py::Matrix::complex)
      .def("distribute",
           [](py::Matrix& a, const nb::dict& execution, const std::string& source) {
             const py::Section keys = section(execution, source);
             py::Numbering n;
             {
               nb::gil_scoped_release release;
               n = a.distribute(keys);
             }
             nb::dict d;
             d["input_first"] = n.input_first;
             d["input_rows"] = n.input_rows;
             d["rows"] = n.rows;
             d["identity"] = n.identity;
             d["stay_on_rank"] = n.stay_on_rank;
             d["input_row"] = n.input_row;
             return d;
           })
      .def("distribution_summary", &py::Matrix::distribution_summary)
      .def_prop_ro("distributed_on_device", &py::Matrix::distributed_on_device)
      .def("to_input_order",
           [](const py::Matrix& a, const HostBlock& block) {
             const auto cols = static_cast<std::int64_t>(block.shape(1));
             std::vector<double> v(block.data(), block.data() + block.size());
             std::vector<double> out;
             {
               nb::gil_scoped_release release;
               out = a.to_input_order(v, cols);
             }
             return to_python(std::move(out), cols);
           })
      .def("from_input_order", [](const py::Matrix& a, const HostBlock& block) {
        const auto cols = static_cast<std::int64_t>(block.shape(1));
        std::vector<double> v(block.data(), block.data() + block.size());
        std::vector<double> out;
        {
          nb::gil_scoped_release release;
          out = a.from_input_order(v, cols);
        }
        return to_python(std::move(out), cols);
      });
}

// The two solvers.
void bind_solvers(nb::module_& m) {
  // The options go as the config's sections, keyword by keyword (dicts by config key), to its readers.
  m.def("lobpcg", &lobpcg, "a"_a, "b"_a.none(), "eigensolver"_a, "execution"_a, "source"_a, "start"_a.none(),
        "constraints"_a.none(), "interruptible"_a);
  m.def("cg", &cg, "a"_a, "rhs"_a, "start"_a.none(), "block_cg"_a, "execution"_a, "source"_a, "interruptible"_a);
}

}  // namespace

NB_MODULE(_blockeigs, m) {
  m.doc() = "block-eigs' library for the blockeigs package (use blockeigs.lobpcg, blockeigs.cg)";
  nb::exception<py::InputError>(m, "InputError", PyExc_ValueError);
  nb::exception<py::Error>(m, "LibraryError", PyExc_RuntimeError);

  bind_mpi(m);
  bind_matrix(m);
  bind_solvers(m);
}

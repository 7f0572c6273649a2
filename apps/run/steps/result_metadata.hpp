// What a result file says about its run (the config's text, the provenance
// attributes), and the check that an output path can be written.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "dense/context.hpp"
#include "dense/dense.hpp"
#include "io/hdf5_writer.hpp"

namespace blockeigs::apps {

// The config file's text (stored in result files), read on rank 0, with
// the command line's overrides after it as comments ("# --set eigensolver.k=4").
std::string config_text(const std::string& path, const std::vector<std::string>& overrides, MPI_Comm comm);

// Provenance attributes of a result file's root (rank 0 writes them): app,
// version, commit, backend ("cpu" or "cuda"), ranks (int64) and date (UTC,
// ISO 8601, when the file was written).
void write_provenance(io::Hdf5Writer& writer, const std::string& app, const dense::Context& context, MPI_Comm comm);

// Refuses, on every rank, an output path that cannot be written (empty: none).
void check_output_path(const std::string& path, MPI_Comm comm, const std::string& key = "output.path");

}  // namespace blockeigs::apps

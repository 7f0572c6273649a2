// A window's report (rank 0's lines after the solve: the spectrum's bounds,
// the density's count against the pairs found, the slices) and its result
// file's own datasets and attributes (/window/..., /density/..., the count).
#pragma once

#include <string>

#include "io/hdf5_writer.hpp"
#include "solver/window/window.hpp"

namespace blockeigs::apps {

// The `window` and `count` lines and, past one slice, the slices' table.
// count_why: where the count is the density's, why no inertia counted it (solver::choose_count).
void print_window_report(const solver::WindowReport& report, const solver::WindowOptions& window, int found,
                         const std::string& count_why);

// /window/slices/... (one entry per slice), /density/x and /density/values,
// and the root attributes interval_lower, interval_upper, spectrum_lower,
// spectrum_upper, expected_count, expected_count_error, count_certified,
// dos_vectors, dos_degree and outside_spectrum (rank 0).
void write_window_datasets(io::Hdf5Writer& w, const solver::WindowReport& report, const solver::WindowOptions& window);

}  // namespace blockeigs::apps

#include "apps/run/steps/result_metadata.hpp"

#include <ctime>
#include <fstream>
#include <sstream>

#include "apps/build_info.hpp"
#include "core/checks.hpp"
#include "config/run_config.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::apps {

std::string config_text(const std::string& path, const std::vector<std::string>& overrides, MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank != 0) return {};
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string out = text.str();
  if (!overrides.empty()) {
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += "# overridden on the command line:\n";
    for (const std::string& assignment : overrides) out += "# --set " + assignment + "\n";
  }
  return out;
}

void write_provenance(io::Hdf5Writer& writer, const std::string& app, const dense::Context& context, MPI_Comm comm) {
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  writer.attribute("/", "app", app);
  writer.attribute("/", "version", std::string(version()));
  writer.attribute("/", "commit", std::string(git_commit()));
  writer.attribute("/", "backend", context.space() == Space::device ? "cuda" : "cpu");
  writer.attribute("/", "ranks", std::int64_t{ranks});
  writer.attribute("/", "date", date);
}

void check_output_path(const std::string& path, MPI_Comm comm, const std::string& key) {
  if (path.empty()) return;
  solver::collectively(comm, [&] {
    int rank = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    if (rank == 0) io::check_output_writable(path, key);
  });
}

}  // namespace blockeigs::apps

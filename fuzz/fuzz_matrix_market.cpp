// libFuzzer target: the Matrix Market reader. The first byte picks how the
// rest reaches the reader: 0 a plain .mtx file, 1 the same text gzip-
// compressed as .mtx.gz, 2 the bytes themselves named .mtx.gz (broken and
// truncated gzip streams). Refusals must be InputError.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "fuzz_common.hpp"
#include "io/matrix_market.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] % 3;
  ++data;
  --size;
  static const std::string plain = blockeigs::fuzz::scratch_path(".mtx");
  static const std::string gz = blockeigs::fuzz::scratch_path(".mtx.gz");
  std::string path;
  if (mode == 0) {
    path = plain;
    blockeigs::fuzz::write_bytes(path, data, size);
  } else if (mode == 1) {
    path = gz;
    gzFile f = gzopen(path.c_str(), "wb1");
    if (!f) std::abort();
    if (size && gzwrite(f, data, static_cast<unsigned>(size)) <= 0) std::abort();
    gzclose(f);
  } else {
    path = gz;
    blockeigs::fuzz::write_bytes(path, data, size);
  }
  try {
    (void)blockeigs::io::read_matrix_market(path);
  } catch (const blockeigs::InputError&) {
  }
  std::remove(path.c_str());
  return 0;
}

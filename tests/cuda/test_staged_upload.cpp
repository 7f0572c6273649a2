// Uploads from pageable host memory staged through page-locked buffers
// (dense/staged_upload_cuda.cpp): every byte arrives, in place, whatever the
// size against the pieces (one byte, a piece and a byte, many pieces and a
// tail), the alignment on either side, and whether copy_bytes takes the
// staged path (64 MiB and more from pageable memory) or not (pinned memory,
// small copies). The host's copy is the twin: memcpy. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "dense/memory.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

class StagedUpload : public test::GpuTest {};

// Bytes that differ from piece to piece and from their neighbours.
std::vector<unsigned char> pattern(std::size_t bytes) {
  std::vector<unsigned char> v(bytes);
  std::uint32_t x = 12345;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<unsigned char>(x >> 24);
  }
  return v;
}

// What the device holds in [offset, offset + bytes), read back through a plain copy.
std::vector<unsigned char> read_back(const dense::Buffer<unsigned char>& device, std::size_t offset,
                                     std::size_t bytes) {
  std::vector<unsigned char> out(bytes);
  dense::copy_bytes(out.data(), Space::host, device.data() + offset, Space::device, bytes);
  return out;
}

TEST_F(StagedUpload, EveryByteArrivesInPlace) {
  const std::size_t piece = 4096;
  const std::vector<unsigned char> host = pattern(5 * piece + 64);
  for (std::size_t bytes : {std::size_t(1), piece - 1, piece, piece + 1, 3 * piece + 5})
    for (std::size_t src_offset : {0, 1, 7})
      for (std::size_t dst_offset : {0, 3}) {
        SCOPED_TRACE(testing::Message() << bytes << " bytes, source +" << src_offset << ", target +" << dst_offset);
        dense::Buffer<unsigned char> device(Space::device, bytes + 2 * dst_offset + 1);
        dense::fill_bytes(device.data(), Space::device, 0xab, device.size());
        dense::upload_staged_bytes(device.data() + dst_offset, host.data() + src_offset, bytes, piece);
        EXPECT_EQ(read_back(device, dst_offset, bytes),
                  std::vector<unsigned char>(host.begin() + src_offset, host.begin() + src_offset + bytes));
        // Nothing written around it.
        const std::vector<unsigned char> after = read_back(device, dst_offset + bytes, dst_offset + 1);
        EXPECT_EQ(after, std::vector<unsigned char>(dst_offset + 1, 0xab));
        if (dst_offset > 0) {
          EXPECT_EQ(read_back(device, 0, dst_offset), std::vector<unsigned char>(dst_offset, 0xab));
        }
      }
}

// copy_bytes takes the staged path from 64 MiB of pageable memory (with its
// own pieces: a tail here), and the plain one from page-locked memory.
TEST_F(StagedUpload, CopyBytesAtTheThreshold) {
  for (std::size_t bytes : {(std::size_t(64) << 20) - 1, (std::size_t(64) << 20) + 12345}) {
    SCOPED_TRACE(testing::Message() << bytes << " bytes");
    const std::vector<unsigned char> host = pattern(bytes);
    dense::Buffer<unsigned char> device(Space::device, bytes);
    dense::copy_bytes(device.data(), Space::device, host.data(), Space::host, bytes);
    EXPECT_EQ(read_back(device, 0, bytes), host);
  }
  const std::size_t bytes = (std::size_t(64) << 20) + 1;
  dense::PinnedBuffer<unsigned char> pinned(bytes);
  const std::vector<unsigned char> host = pattern(bytes);
  std::copy(host.begin(), host.end(), pinned.data());
  dense::Buffer<unsigned char> device(Space::device, bytes);
  dense::copy_bytes(device.data(), Space::device, pinned.data(), Space::host, bytes);
  EXPECT_EQ(read_back(device, 0, bytes), host);
}

}  // namespace
}  // namespace blockeigs

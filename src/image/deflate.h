// PNG image data deflated by runs and Huffman codes alone (RFC 1951): the "run coder" of the fast
// levels (png_io.cpp). Filtered rows of photographs and of the smooth images a filter makes are
// mostly small residuals and runs of one byte: a dynamic Huffman code of the bytes, and each run
// as matches at distance 1, codes them smaller than libdeflate's level 4 does (whose matches of a
// few bytes anywhere in the window cost more bits than the literals they replace) in a fifth of
// its time. Drawings, text and repeated patterns are the opposite: there LZ77's matches pay, so
// png_io.cpp asks runs_pay() on a sample of the rows first and keeps libdeflate where they lose.
#pragma once

#include <cstddef>

namespace gpufft {

/// `length` bytes as raw deflate into `out` (deflate_runs_bound() bytes), its size returned:
/// blocks of `block` bytes (0: the default, 128 KiB) each coded by a dynamic Huffman code of its
/// literals and its runs (a byte then at least m repeats of it, as matches at distance 1; m chosen
/// per block by the bits it costs), or stored where coding would not pay. `last`: its last block
/// ends the stream (then padded to a byte); otherwise the part ends with an empty stored block (a
/// sync flush) so that another may follow on the next byte. Nothing refers to bytes before
/// `data`: parts need no dictionary.
size_t deflate_runs(const unsigned char* data, size_t length, bool last, unsigned char* out, size_t block = 0);
/// The most deflate_runs() may write for `length` bytes (with some slack it needs).
size_t deflate_runs_bound(size_t length, size_t block = 0);

/// Whether the run coder codes these filtered rows no larger than libdeflate's `level` does,
/// judged on a sample: bands of 32 KiB spread over them (one a MiB, 2 to 8), each coded alone
/// both ways; rows of 128 KiB or less are coded whole both ways.
bool runs_pay(const unsigned char* data, size_t length, int level);

}  // namespace gpufft

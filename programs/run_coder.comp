// run_coder.comp: PNG image data deflated by the run coder (src/image/deflate.h) on the GPU, in
// three programs queued one after another with nothing back to the CPU between: COUNT the runs,
// PLAN each block's code from its counts exactly as the CPU's coder chooses it, CODE the bits. So
// the stream is deflate_runs()'s, and only it and the blocks' summaries cross the bus.
//
// Reads:  u_filtered, png_filter.comp's stream of u_blocks.x bytes in blocks of u_blocks.y (the
//         last may be shorter), each block in RUN_CHUNKS chunks of u_blocks.z bytes (1024 of 128:
//         gpu_deflate.cpp). One workgroup a block, one invocation a chunk (PLAN: 256 a block), its
//         bytes a run of equal bytes at a time; a run's first byte finds its end, across chunks
//         if need be. Runs are a byte and 8 or more repeats of
//         it, the longest such within the block.
// COUNT writes:
//         u_counts, for each block the words of deflate.h's RunCounts: each byte value's bytes,
//         less the repeats of its runs; the runs of 8-15 repeats by repeats and byte; the matches
//         of longer runs (258 bytes while 3 would be left, as match_lengths() splits them) by
//         length symbol, their extra bits and their number.
//         Then the block's Adler-32 sums (a = the sum of its bytes, b = the sum of each times the
//         bytes from it to the block's end, itself included; mod 65521), which the CPU combines.
//         u_chunks, for each chunk: the run that crosses into it from before (its first byte and
//         its end; 0, 0 where none), which CODE skips where the run is coded as matches; and the
//         end of the run its last byte is in, so that CODE need not look for it again.
// PLAN reads u_counts; writes u_codes, each block's code (kCodeWords words): the minimum run m,
//         the header's bits and their number, the end code, each byte's literal (code | length
//         << 16), each match length's code and bits; and u_summary, each block's bits, whether the
//         CPU's coder would store it, and its Adler-32 sums.
// CODE reads u_chunks, u_codes and u_summary (a block starts after the blocks before it; nothing
//         is written where a block would be stored or the stream passes u_stream's room); writes
//         u_stream, zero before, the deflate stream's bits (first bit lowest in the first word): a
//         block's header, then for each byte its literal, except that a run of m or more repeats is its first byte's
//         literal and then matches at distance 1, then the end code. Each invocation counts its
//         chunk's bits, a prefix sum over the chunks places them, then each writes its own (and
//         invocation 0 the header), by atomicOr: a chunk's first and last words are its
//         neighbours' too.
// Variants: COUNT, PLAN, CODE.
#ifndef RUN_CHUNKS
#error "run_coder.comp: RUN_CHUNKS, a block's chunks (gpu_deflate.cpp)"
#endif
const uint kChunks = uint(RUN_CHUNKS);  // a block's chunks: COUNT's and CODE's invocations
#ifdef PLAN
layout(local_size_x = 256) in;
#else
layout(local_size_x = RUN_CHUNKS) in;
#endif

layout(std430, binding = 3) readonly buffer Filtered { uint u_filtered[]; };
#ifdef COUNT
layout(std430, binding = 4) writeonly buffer Counts { uint u_counts[]; };
layout(std430, binding = 5) buffer Chunks { uvec4 u_chunks[]; };
#elif defined(PLAN)
layout(std430, binding = 4) readonly buffer Counts { uint u_counts[]; };
layout(std430, binding = 6) writeonly buffer Codes { uint u_codes[]; };
layout(std430, binding = 8) writeonly buffer Summary { uvec4 u_summary[]; };
#elif defined(CODE)
layout(std430, binding = 5) readonly buffer Chunks { uvec4 u_chunks[]; };
layout(std430, binding = 6) readonly buffer Codes { uint u_codes[]; };
layout(std430, binding = 7) buffer Stream { uint u_stream[]; };
layout(std430, binding = 8) readonly buffer Summary { uvec4 u_summary[]; };
#else
#error "run_coder.comp: COUNT, PLAN or CODE"
#endif
uniform uvec3 u_blocks;  // the stream's bytes, a block's, a chunk's

const uint kCountWords = 256u + 8u * 256u + 29u + 2u + 2u;  // RunCounts, then the Adler-32 sums
const uint kAdlerBase = 65521u;
// A block's code (kCodeWords words): the minimum run m, the header's bits, the end code and its
// bits, each byte's literal (code | length << 16), each match length's code and its bits, the
// header (at most 4498 bits: 19 3-bit lengths and 316 codes of 7 and 7 extra bits).
const uint kCodeWords = 940u;
const uint kM = 0u, kHeaderBits = 1u, kEndCode = 4u, kEndBits = 5u;
const uint kLiteral = 6u, kMatchCode = 262u, kMatchBits = 521u, kHeader = 780u;

// A match length (3-258): its symbol (RFC 1951 3.2.5, 0-28 above 257) and its extra bits.
uvec2 length_code(uint len) {
    if (len == 258u) return uvec2(28u, 0u);
    if (len < 11u) return uvec2(len - 3u, 0u);
    uint x = len - 3u, e = uint(findMSB(x)) - 2u;  // 8-15: one extra bit, ... 128-254: five
    return uvec2(4u * e + 4u + ((x >> e) & 3u), e);
}

uint byte_at(uint at) { return (u_filtered[at >> 2] >> ((at & 3u) * 8u)) & 255u; }

// The first byte from `at` on, before `limit`, that is not v (else `limit`): four words at a
// time where it can (llvmpipe also ends a loop after 65535 rounds, fewer than a block's bytes).
uint run_end(uint at, uint v, uint limit) {
    for (; at < limit && (at & 3u) != 0u; ++at)
        if (byte_at(at) != v) return at;
    uint same = v * 0x01010101u;
    for (uint w = at >> 2; at + 16u <= limit && u_filtered[w] == same && u_filtered[w + 1u] == same &&
                           u_filtered[w + 2u] == same && u_filtered[w + 3u] == same;
         w += 4u)
        at += 16u;
    for (; at + 4u <= limit && u_filtered[at >> 2] == same;) at += 4u;
    for (; at < limit && byte_at(at) == v;) ++at;
    return at;
}

#ifdef COUNT
shared uint s_bytes[8][256];  // each warp of 32 its own counts (warps 8 apart share), so that fewer increments wait on one another
shared uint s_short[8 * 256];
shared uint s_long[29];
shared uint s_extra, s_matches;
shared uvec2 s_adler[RUN_CHUNKS];

void main() {
    uint t = gl_LocalInvocationIndex, warp = (t >> 5) & 7u;
    for (uint i = t; i < 8u * 256u; i += kChunks) {
        s_bytes[i >> 8][i & 255u] = 0u;
        s_short[i] = 0u;
    }
    if (t < 29u) s_long[t] = 0u;
    if (t == 0u) s_extra = s_matches = 0u;
    uint chunk = gl_WorkGroupID.x * kChunks + t;
    u_chunks[chunk].xy = uvec2(0u);
    memoryBarrierBuffer();
    barrier();

    uint b0 = gl_WorkGroupID.x * u_blocks.y, b1 = min(b0 + u_blocks.y, u_blocks.x);
    uint c0 = min(b0 + t * u_blocks.z, b1), c1 = min(c0 + u_blocks.z, b1), size = c1 - c0;
    uint a = 0u, b = 0u, extra = 0u, matches = 0u;
    for (uint at = c0; at < c1;) {
        uint v = byte_at(at), next = run_end(at + 1u, v, c1);
        uint n = next - at, j = at - c0;
        atomicAdd(s_bytes[warp][v], n);
        a += n * v;
        b += v * (n * size - j * n - n * (n - 1u) / 2u);  // sum of (size - i) for i = j .. j + n - 1
        if (at == b0 || byte_at(at - 1u) != v) {  // a run's first byte
            uint end = next == c1 ? run_end(next, v, b1) : next;
            if (next == c1) u_chunks[chunk].z = end;
            uint r = end - at - 1u;
            if (r >= 8u) {
                atomicAdd(s_bytes[warp][v], 0u - r);
                if (r < 16u) {
                    atomicAdd(s_short[(r - 8u) * 256u + v], 1u);
                } else {
                    for (uint left = r; left > 0u;) {
                        uint take = left > 258u ? (left - 258u >= 3u ? 258u : left - 3u) : left;
                        uvec2 code = length_code(take);
                        atomicAdd(s_long[code.x], 1u);
                        extra += code.y;
                        ++matches;
                        left -= take;
                    }
                }
                for (uint k = (at - b0) / u_blocks.z + 1u; k < kChunks && b0 + k * u_blocks.z < end; ++k)
                    u_chunks[gl_WorkGroupID.x * kChunks + k].xy = uvec2(at, end);
            }
        }
        at = next;
    }
    s_adler[t] = uvec2(a, b) % kAdlerBase;
    atomicAdd(s_extra, extra);
    atomicAdd(s_matches, matches);
    barrier();

    uint base = gl_WorkGroupID.x * kCountWords;
    if (t < 256u) {
        uint total = 0u;
        for (uint w = 0u; w < 8u; ++w) total += s_bytes[w][t];
        u_counts[base + t] = total;
    }
    for (uint i = t; i < 8u * 256u; i += kChunks) u_counts[base + 256u + i] = s_short[i];
    if (t < 29u) u_counts[base + 2304u + t] = s_long[t];
    if (t == 0u) {
        u_counts[base + 2333u] = s_extra;
        u_counts[base + 2334u] = s_matches;
        // The chunks' sums one after another: a chunk of n bytes after bytes with sums (a, b)
        // adds its a to a, and its b and n times the a before to b.
        uvec2 sums = uvec2(0u);
        for (uint i = 0u; i < kChunks; ++i) {
            uint n = min(b0 + (i + 1u) * u_blocks.z, b1) - min(b0 + i * u_blocks.z, b1);
            sums.y = (sums.y + s_adler[i].y + n % kAdlerBase * sums.x) % kAdlerBase;
            sums.x = (sums.x + s_adler[i].x) % kAdlerBase;
        }
        u_counts[base + 2335u] = sums.x;
        u_counts[base + 2336u] = sums.y;
    }
}

#elif defined(PLAN)

// Each block's code from its counts, as deflate.cpp's choose() and make_tables() make it: for each
// minimum run m of 8, 10, 12 and 16 the literal/length frequencies, a Huffman code of them limited
// to 15 bits (two queues; JPEG's K.3 count adjustment), the header (the code lengths run-length
// coded, their own code limited to 7 bits) and the bits of all; the fewest bits taken, the first
// m on a tie. A serial step costs this GPU about half a microsecond, so what can run in parallel
// does: the symbols sorted by a bitonic network, each leaf's depth found from its parents, the
// codes given by length; invocations 0-3 merge the nodes and run-length code the header, one m each.
const uint kLitLen = 286u, kSorted = 512u, kDeepest = 48u;
const uint kOrder[19] = uint[19](16u, 17u, 18u, 0u, 8u, 7u, 9u, 6u, 10u, 5u, 11u, 4u, 12u, 3u, 13u, 2u, 14u, 1u, 15u);
const uint kCodeLengthExtra[19] = uint[19](0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 2u, 3u, 7u);
shared uint s_freq[4][kLitLen];   // each m's literal/length frequencies; at the end the best's codes
shared uint s_key[4][kSorted];    // frequency << 9 | symbol, sorted (unused symbols last)
shared uint s_used[4];
shared uint s_parent[4][kLitLen];  // each node's parent, two 16-bit halves a word (nodes 0 .. 2k-2)
shared uint s_count[4][kDeepest];  // leaves at each depth
shared uint s_len[4][kLitLen];     // each m's code lengths
shared uint s_header[4][kLitLen + 30u];  // each m's header: its symbols, extra bits << 8
shared uint s_header_count[4], s_hlit[4], s_hclen[4], s_clen[4][19];
shared uint s_short_total[16];
shared uint s_bits[4];
shared uint s_best;

uint counts(uint i) { return u_counts[gl_WorkGroupID.x * kCountWords + i]; }
uint heads(uint v) { return counts(v); }
uint short_runs(uint r, uint v) { return counts(256u + (r - 8u) * 256u + v); }  // r repeats, 8-15

// Match length 8-15's symbol (above 257) and extra bits.
uint short_symbol(uint r) { return r <= 10u ? r - 3u : (r - 11u) / 2u + 8u; }
uint short_extra(uint r) { return r <= 10u ? 0u : 1u; }

uint parent_of(uint m, uint node) { return (s_parent[m][node >> 1] >> ((node & 1u) * 16u)) & 0xffffu; }

// Code lengths of the 19 code-length symbols (deflate.cpp's code_lengths(), limit 7), one invocation.
uint c_weight[37], c_parent[37], c_order[19], c_count[20];
void small_huffman(uint freq[19], out uint len[19]) {
    for (uint s = 0u; s < 19u; ++s) len[s] = 0u;
    uint k = 0u;
    for (uint s = 0u; s < 19u; ++s) {  // the symbols used, by frequency, then symbol
        if (freq[s] == 0u) continue;
        uint at = k++;
        for (; at > 0u && freq[c_order[at - 1u]] > freq[s]; --at) c_order[at] = c_order[at - 1u];
        c_order[at] = s;
    }
    if (k < 2u) {
        uint a = k == 1u ? c_order[0] : 0u;
        len[a] = 1u;
        len[a == 0u ? 1u : 0u] = 1u;
        return;
    }
    for (uint i = 0u; i < k; ++i) c_weight[i] = freq[c_order[i]];
    uint leaf = 0u, merged = k;
    for (uint next = k; next < 2u * k - 1u; ++next) {
        uint pair[2];
        for (uint j = 0u; j < 2u; ++j)
            pair[j] = leaf < k && (merged >= next || c_weight[leaf] <= c_weight[merged]) ? leaf++ : merged++;
        c_weight[next] = c_weight[pair[0]] + c_weight[pair[1]];
        c_parent[pair[0]] = next;
        c_parent[pair[1]] = next;
    }
    for (uint i = 0u; i < 20u; ++i) c_count[i] = 0u;
    uint deepest = 0u;
    c_parent[2u * k - 2u] = 0u;  // from here on each node's depth, made from the root down
    for (uint i = 2u * k - 2u; i-- > 0u;) {
        c_parent[i] = c_parent[c_parent[i]] + 1u;
        if (i < k) {
            ++c_count[c_parent[i]];
            deepest = max(deepest, c_parent[i]);
        }
    }
    for (uint i = deepest; i > 7u; --i)
        while (c_count[i] > 0u) {
            uint j = i - 2u;
            while (c_count[j] == 0u) --j;
            c_count[i] -= 2u;
            c_count[i - 1u] += 1u;
            c_count[j + 1u] += 2u;
            c_count[j] -= 1u;
        }
    uint at = k;
    for (uint bits = 1u; bits <= 7u; ++bits)
        for (uint c = 0u; c < c_count[bits]; ++c) len[c_order[--at]] = bits;
}

// The header of m's code (deflate.cpp's make_header()): the lengths run-length coded into
// s_header[m], their code's lengths into s_clen[m]; its bits returned. One invocation.
uint make_header(uint m) {
    uint hlit = kLitLen;
    while (hlit > 257u && s_len[m][hlit - 1u] == 0u) --hlit;
    uint total = hlit + 2u;  // the distance code: symbol 0 and its partner, one bit each
    uint count = 0u, freq[19];
    for (uint s = 0u; s < 19u; ++s) freq[s] = 0u;
    for (uint i = 0u; i < total;) {
        uint v = i < hlit ? s_len[m][i] : 1u;
        uint run = 1u;
        while (i + run < total && (i + run < hlit ? s_len[m][i + run] : 1u) == v) ++run;
        i += run;
        if (v == 0u) {
            for (; run >= 11u; run -= min(run, 138u)) s_header[m][count++] = 18u | (min(run, 138u) - 11u) << 8;
            if (run >= 3u) {
                s_header[m][count++] = 17u | (run - 3u) << 8;
                run = 0u;
            }
        } else {
            s_header[m][count++] = v;
            for (--run; run >= 3u; run -= min(run, 6u)) s_header[m][count++] = 16u | (min(run, 6u) - 3u) << 8;
        }
        for (; run > 0u; --run) s_header[m][count++] = v;
    }
    for (uint i = 0u; i < count; ++i) ++freq[s_header[m][i] & 255u];
    uint len[19];
    small_huffman(freq, len);
    uint hclen = 19u;
    while (hclen > 4u && len[kOrder[hclen - 1u]] == 0u) --hclen;
    uint bits = 3u + 5u + 5u + 4u + 3u * hclen;
    for (uint s = 0u; s < 19u; ++s) {
        bits += freq[s] * (len[s] + kCodeLengthExtra[s]);
        s_clen[m][s] = len[s];
    }
    s_header_count[m] = count;
    s_hlit[m] = hlit;
    s_hclen[m] = hclen;
    return bits;
}

// The header's bits into the block's record, one invocation.
uint w_at, w_fill, w_acc;
void header_put(uint bits, uint n) {
    w_acc |= bits << w_fill;
    w_fill += n;
    if (w_fill >= 32u) {
        u_codes[w_at++] = w_acc;
        w_fill -= 32u;
        w_acc = w_fill == 0u ? 0u : bits >> (n - w_fill);
    }
}

uint reversed(uint code, uint len) { return bitfieldReverse(code) >> (32u - len); }

void main() {
    uint t = gl_LocalInvocationIndex, code = gl_WorkGroupID.x * kCodeWords;
    uint n = min(u_blocks.y, u_blocks.x - gl_WorkGroupID.x * u_blocks.y);
    if (t < 16u) s_short_total[t] = 0u;
    if (t < 4u) {
        s_used[t] = 0u;
        s_bits[t] = 0u;
    }
    for (uint i = t; i < 4u * kDeepest; i += 256u) s_count[i / kDeepest][i % kDeepest] = 0u;
    barrier();
    for (uint r = 8u; r < 16u; ++r) atomicAdd(s_short_total[r], short_runs(r, t));
    barrier();
    // Each m's frequencies, and their sort keys.
    for (uint i = t; i < 4u * kSorted; i += 256u) {
        uint mi = i / kSorted, s = i % kSorted, m = mi == 3u ? 16u : 8u + 2u * mi;
        uint f = 0u;
        if (s < 256u) {
            f = heads(s);
            for (uint r = 8u; r < m; ++r) f += r * short_runs(r, s);
        } else if (s == 256u) {
            f = 1u;
        } else if (s < kLitLen) {
            f = counts(2304u + s - 257u);
            for (uint r = m; r < 16u; ++r)
                if (short_symbol(r) == s - 257u) f += s_short_total[r];
        }
        if (s < kLitLen) s_freq[mi][s] = f;
        if (f > 0u) atomicAdd(s_used[mi], 1u);
        s_key[mi][s] = f > 0u ? f << 9 | s : 0xffffffffu;
    }
    barrier();
    // Bitonic sort of each m's keys, ascending.
    for (uint size = 2u; size <= kSorted; size <<= 1)
        for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
            for (uint i = t; i < 4u * kSorted / 2u; i += 256u) {
                uint mi = i / (kSorted / 2u), p = i % (kSorted / 2u);
                uint a = (p / stride) * 2u * stride + p % stride, b = a + stride;
                bool up = (a & size) == 0u;
                uint x = s_key[mi][a], y = s_key[mi][b];
                if ((x > y) == up) {
                    s_key[mi][a] = y;
                    s_key[mi][b] = x;
                }
            }
            barrier();
        }
    // Invocations 0-3: Huffman's merges by two queues (leaves by weight, then merged nodes in
    // order of weight: leaves 0 .. k-1, merged nodes k .. 2k-2, the root last), each node's parent kept.
    uint weight[kLitLen];  // the merged nodes' weights (node k + i at i)
    if (t < 4u) {
        uint k = s_used[t];
        if (k >= 2u) {
            uint leaf = 0u, merged = k;
            for (uint next = k; next < 2u * k - 1u; ++next) {
                uint pair[2], w[2];
                for (uint j = 0u; j < 2u; ++j) {
                    uint lw = leaf < k ? s_key[t][leaf] >> 9 : 0u, mw = merged < next ? weight[merged - k] : 0u;
                    bool take_leaf = leaf < k && (merged >= next || lw <= mw);
                    pair[j] = take_leaf ? leaf++ : merged++;
                    w[j] = take_leaf ? lw : mw;
                }
                weight[next - k] = w[0] + w[1];
                for (uint j = 0u; j < 2u; ++j) {
                    uint word = pair[j] >> 1, shift = (pair[j] & 1u) * 16u;
                    s_parent[t][word] = (s_parent[t][word] & ~(0xffffu << shift)) | next << shift;
                }
            }
        }
    }
    barrier();
    // Each leaf's depth from its parents, counted by depth.
    for (uint i = t; i < 4u * kLitLen; i += 256u) {
        uint mi = i / kLitLen, leaf = i % kLitLen, k = s_used[mi];
        if (k < 2u || leaf >= k) continue;
        uint depth = 0u;
        for (uint node = leaf; node != 2u * k - 2u; node = parent_of(mi, node)) ++depth;
        atomicAdd(s_count[mi][min(depth, kDeepest - 1u)], 1u);
    }
    barrier();
    // Invocations 0-3: too deep, JPEG's way (ITU T.81, K.3): two leaves at the deepest level become
    // one a level up and one beside a leaf made a node at the deepest level above that has leaves.
    if (t < 4u && s_used[t] >= 2u) {
        for (uint i = kDeepest - 1u; i > 15u; --i)
            while (s_count[t][i] > 0u) {
                uint j = i - 2u;
                while (s_count[t][j] == 0u) --j;
                s_count[t][i] -= 2u;
                s_count[t][i - 1u] += 1u;
                s_count[t][j + 1u] += 2u;
                s_count[t][j] -= 1u;
            }
    }
    barrier();
    // The lengths: the most frequent symbols the shortest; a lone symbol (or none) and a partner one bit.
    for (uint i = t; i < 4u * kLitLen; i += 256u) s_len[i / kLitLen][i % kLitLen] = 0u;
    barrier();
    for (uint i = t; i < 4u * kLitLen; i += 256u) {
        uint mi = i / kLitLen, q = i % kLitLen, k = s_used[mi];
        if (k < 2u) {
            uint a = k == 1u ? s_key[mi][0] & 511u : 0u;
            if (q == a || q == (a == 0u ? 1u : 0u)) s_len[mi][q] = 1u;
            continue;
        }
        if (q >= k) continue;
        uint bits = 1u, before = s_count[mi][1];  // the q-th most frequent: the first length that many reach past q
        while (before <= q) before += s_count[mi][++bits];
        s_len[mi][s_key[mi][k - 1u - q] & 511u] = bits;
    }
    barrier();
    // Each m's bits: the codes, the extra bits, distance 1's bit a match (all under 2^32: a block
    // has 2^17 bytes), then invocations 0-3 the header.
    for (uint i = t; i < 4u * kLitLen; i += 256u) {
        uint mi = i / kLitLen, s = i % kLitLen;
        atomicAdd(s_bits[mi], s_freq[mi][s] * s_len[mi][s]);
    }
    if (t < 4u) {
        uint m = t == 3u ? 16u : 8u + 2u * t;
        uint extra = counts(2333u), matches = counts(2334u);
        for (uint r = m; r < 16u; ++r) {
            extra += s_short_total[r] * short_extra(r);
            matches += s_short_total[r];
        }
        atomicAdd(s_bits[t], make_header(t) + extra + matches);
    }
    barrier();
    if (t == 0u) {
        uint best = 0u;
        for (uint i = 1u; i < 4u; ++i)
            if (s_bits[i] < s_bits[best]) best = i;
        s_best = best;
        // Stored where that takes no more: a block of 65535 bytes at most, 3 + 7 + 32 bits each.
        uint stored = ((n + 65534u) / 65535u) * 42u + 8u * n;
        u_summary[gl_WorkGroupID.x] = uvec4(s_bits[best], s_bits[best] >= stored ? 1u : 0u, counts(2335u), counts(2336u));
    }
    barrier();
    uint best = s_best;
    for (uint i = t; i < kLitLen; i += 256u) s_freq[0][i] = 0u;  // unused symbols: code 0
    barrier();
    // Canonical codes (RFC 1951 3.2.2), bit-reversed as deflate sends them: invocation L gives the
    // symbols of length L theirs, in order, from the first code of that length.
    if (t >= 1u && t <= 15u) {
        uint next = 0u;
        for (uint b = 1u; b < t; ++b) next = (next + s_count[best][b]) << 1;
        // (s_count holds the lengths' counts as K.3 left them; a lone symbol and its partner: none, so 0 and 1)
        for (uint s = 0u; s < kLitLen; ++s)
            if (s_len[best][s] == t) s_freq[0][s] = reversed(next++, t);
    }
    barrier();
    if (t == 0u) {
        uint clen[19], ccode[19], count[8], next[8];
        for (uint b = 0u; b < 8u; ++b) count[b] = 0u;
        for (uint s = 0u; s < 19u; ++s) ++count[clen[s] = s_clen[best][s]];
        count[0] = 0u;
        next[0] = 0u;
        for (uint b = 1u, c = 0u; b < 8u; ++b) next[b] = c = (c + count[b - 1u]) << 1;
        for (uint s = 0u; s < 19u; ++s) ccode[s] = clen[s] == 0u ? 0u : reversed(next[clen[s]]++, clen[s]);
        u_codes[code + kM] = best == 3u ? 16u : 8u + 2u * best;
        u_codes[code + kEndCode] = s_freq[0][256];
        u_codes[code + kEndBits] = s_len[best][256];
        // The header's bits, as deflate.cpp's write_header() writes them.
        w_at = code + kHeader;
        w_fill = 0u;
        w_acc = 0u;
        header_put(gl_WorkGroupID.x + 1u == gl_NumWorkGroups.x ? 5u : 4u, 3u);  // final?, dynamic
        header_put(s_hlit[best] - 257u, 5u);
        header_put(1u, 5u);  // two distance codes
        header_put(s_hclen[best] - 4u, 4u);
        for (uint i = 0u; i < s_hclen[best]; ++i) header_put(clen[kOrder[i]], 3u);
        for (uint i = 0u; i < s_header_count[best]; ++i) {
            uint s = s_header[best][i] & 255u;
            header_put(ccode[s], clen[s]);
            if (kCodeLengthExtra[s] > 0u) header_put(s_header[best][i] >> 8, kCodeLengthExtra[s]);
        }
        if (w_fill > 0u) u_codes[w_at] = w_acc;
        u_codes[code + kHeaderBits] = (w_at - code - kHeader) * 32u + w_fill;
    }
    barrier();
    // Each byte's literal, each match length's code: its length's code and extra bits, then
    // distance 1's (code 0, one bit).
    for (uint v = t; v < 256u; v += 256u) u_codes[code + kLiteral + v] = s_freq[0][v] | s_len[best][v] << 16;
    for (uint len = t; len < 259u; len += 256u) {
        uint symbol = 0u, extra_bits = 0u, extra = 0u;
        if (len >= 3u) {
            uvec2 c = length_code(len);
            symbol = c.x;
            extra_bits = c.y;
            uint base = len == 258u ? 258u : len < 11u ? len : (((len - 3u) >> c.y) << c.y) + 3u;
            extra = len - base;
        }
        uint lit_bits = s_len[best][257u + symbol];
        u_codes[code + kMatchCode + len] = len < 3u ? 0u : s_freq[0][257u + symbol] | extra << lit_bits;
        u_codes[code + kMatchBits + len] = len < 3u ? 0u : lit_bits + extra_bits + 1u;
    }
}

#else  // CODE

shared uint s_bits[RUN_CHUNKS];
// The block's code up to its header (m, the end code, the literals, the match lengths' codes): each
// byte's lookup from shared memory rather than through the buffer.
shared uint s_code[kHeader];

// The bit writer: counting only, or writing at g_word, g_fill bits into it.
bool g_write;
uint g_count, g_word, g_fill, g_acc;

void put(uint bits, uint n) {  // n <= 31
    if (!g_write) {
        g_count += n;
        return;
    }
    g_acc |= bits << g_fill;
    uint filled = g_fill + n;
    if (filled >= 32u) {  // (then g_fill > 0: n < 32)
        atomicOr(u_stream[g_word], g_acc);
        ++g_word;
        g_acc = bits >> (32u - g_fill);
        filled -= 32u;
    }
    g_fill = filled;
}

void flush() {
    if (g_fill > 0u) atomicOr(u_stream[g_word], g_acc);
}

void put_match(uint len) { put(s_code[kMatchCode + len], s_code[kMatchBits + len]); }

// The chunk [c0, c1) of block [b0, b1), its code in s_code.
void code_chunk(uint b0, uint b1, uint c0, uint c1, uint chunk, uvec2 crossing) {
    uint m = s_code[kM];
    uint at = c0;
    if (crossing.y > c0 && crossing.y - crossing.x - 1u >= m) at = min(crossing.y, c1);  // matches coded before
    while (at < c1) {
        uint v = byte_at(at), next = run_end(at + 1u, v, c1);
        uint literal = s_code[kLiteral + v];
        bool first = at == b0 || byte_at(at - 1u) != v;
        uint end = first && next == c1 ? u_chunks[chunk].z : next;
        if (first && end - at - 1u >= m) {
            put(literal & 0xffffu, literal >> 16);
            uint r = end - at - 1u;
            for (; r > 258u; r -= r - 258u >= 3u ? 258u : r - 3u) put_match(r - 258u >= 3u ? 258u : r - 3u);
            put_match(r);
            at = end;
        } else {
            for (; at < next; ++at) put(literal & 0xffffu, literal >> 16);
        }
    }
}

shared uint s_start_word, s_start_bit, s_stored;

void main() {
    uint t = gl_LocalInvocationIndex;
    uint b0 = gl_WorkGroupID.x * u_blocks.y, b1 = min(b0 + u_blocks.y, u_blocks.x);
    uint c0 = min(b0 + t * u_blocks.z, b1), c1 = min(c0 + u_blocks.z, b1);
    uint code = gl_WorkGroupID.x * kCodeWords;
    uint chunk = gl_WorkGroupID.x * kChunks + t;
    uvec2 crossing = u_chunks[chunk].xy;
    for (uint i = t; i < kHeader; i += kChunks) s_code[i] = u_codes[code + i];
    if (t == 0u) {  // where the block starts: after the blocks before it; nothing where one is stored
        uint word = 0u, bit = 0u, stored = 0u, start_word = 0u, start_bit = 0u;
        for (uint b = 0u; b < gl_NumWorkGroups.x; ++b) {
            if (b == gl_WorkGroupID.x) {
                start_word = word;
                start_bit = bit;
            }
            uvec4 s = u_summary[b];
            stored |= s.y;
            bit += s.x % 32u;
            word += s.x / 32u + bit / 32u;
            bit %= 32u;
        }
        s_start_word = start_word;
        s_start_bit = start_bit;
        s_stored = stored != 0u || word + 2u > uint(u_stream.length()) ? 1u : 0u;  // stored, or past the room
    }
    barrier();
    if (s_stored != 0u) return;  // a block stored, or the stream past its room: the CPU's to make

    g_write = false;
    g_count = 0u;
    code_chunk(b0, b1, c0, c1, chunk, crossing);
    s_bits[t] = g_count;
    barrier();
    if (t == 0u) {  // exclusive prefix sums, after the header
        uint sum = u_codes[code + kHeaderBits];
        for (uint i = 0u; i < kChunks; ++i) {
            uint n = s_bits[i];
            s_bits[i] = sum;
            sum += n;
        }
    }
    barrier();

    g_write = true;
    uint start = s_start_bit;
    if (t == 0u) {
        g_word = s_start_word;
        g_fill = start;
        g_acc = 0u;
        uint bits = u_codes[code + kHeaderBits];
        for (uint i = 0u; i < bits; i += 16u) {
            uint w = u_codes[code + kHeader + i / 32u] >> (i % 32u);
            put(w & 0xffffu & ((1u << min(16u, bits - i)) - 1u), min(16u, bits - i));
        }
        flush();
    }
    uint at = start + s_bits[t];
    g_word = s_start_word + at / 32u;
    g_fill = at % 32u;
    g_acc = 0u;
    code_chunk(b0, b1, c0, c1, chunk, crossing);
    if (t == kChunks - 1u) put(s_code[kEndCode], s_code[kEndBits]);
    flush();
}

#endif

// kernel_order.comp: a kernel's spectrum (Eq. 10's compressed layout, a forward transform's result)
// with its rows in the order the compute backend's long filters multiply it. Where a filter's
// columns take the four-step route with one sub-line a workgroup (fft_line.comp's BANDS), step B's
// sub-line k1 multiplies the line's outputs k1 + L1 k2, k2 < L2: every L1-th row of the column.
// Stored at rows k1 L2 + k2 instead, they are one band of rows, read as the sub-line's data is
// (fft_line.comp's KERNEL_STEP_ORDER; ComputeFft::reorder_kernel).
//
// Reads:  u_src, the spectrum (M x N, RGBA32F).
// Writes: u_dst, the same texels, row k1 + L1 k2 at row k1 L2 + k2.
// Variants: WIDTH (M), L1 and L2 (L1 L2 = N, the columns' four-step split).
layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2DRect u_src;
layout(rgba32f, binding = 0) writeonly uniform image2DRect u_dst;

void main() {
    ivec2 g = ivec2(gl_GlobalInvocationID.xy);   // row k1 L2 + k2 of the target
    if (g.x >= WIDTH || g.y >= L1 * L2) return;
    int k1 = g.y / L2, k2 = g.y % L2;
    imageStore(u_dst, g, texelFetch(u_src, ivec2(g.x, k1 + L1 * k2)));
}

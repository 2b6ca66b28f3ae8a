// spectrum.frag: the view of a spectrum as in Figure 4(b): log magnitude, centred (frequency
// (0, 0) at texel (M/2, N/2)). Not a step of the FFT: what the tools show and save.
//
// Reads:  u_src, a spectrum in the compressed layout of Eq. 10 (scaled 1/(MN) like Eq. 1).
// Writes: log(1 + MN |F|) / log(1 + MN) per channel, alpha 1. An image in [0, 1] has
//         MN |F| <= MN (the DC term of a white image), so the view spans [0, 1] with no
//         search for the maximum.
// Variant: BOTTOM_UP for frames stored bottom row first (rendered frames), viewed top row first:
//         flipping an image in y maps F(u, v) to F(u, -v) (times a phase), so the row showing
//         frequency v reads the stored frequency -v: v = (y + N/2 + 1) mod N instead of
//         (y + N/2) mod N. Both tools then show the same picture of the same image.

uniform float u_gain;   // M N

void main() {
    float M = u_size.x, N = u_size.y;
    float u = imod(x_index() + 0.5 * M, M);
#ifdef BOTTOM_UP
    float v = imod(y_index() + 0.5 * N + 1.0, N);
#else
    float v = imod(y_index() + 0.5 * N, N);
#endif
    vec4 re, im;
    if (u == 0.0 || u == 0.5 * M) {          // Eq. 9 along v
        if (v == 0.0 || v == 0.5 * N) {
            re = fetch_xy(u, v);
            im = vec4(0.0);
        } else if (v < 0.5 * N) {
            re = fetch_xy(u, v);
            im = -fetch_xy(u, N - v);
        } else {
            re = fetch_xy(u, N - v);
            im = fetch_xy(u, v);
        }
    } else if (u > 0.5 * M) {                // F(u, v) = A[M-u][v] + j A[u][v]
        re = fetch_xy(M - u, v);
        im = fetch_xy(u, v);
    } else {                                 // F(u, v) = F(M-u, N-v)*
        float w = imod(N - v, N);
        re = fetch_xy(u, w);
        im = -fetch_xy(M - u, w);
    }
    vec4 magnitude = sqrt(re * re + im * im);
    gl_FragColor = vec4((log(1.0 + u_gain * magnitude) / log(1.0 + u_gain)).rgb, 1.0);
}

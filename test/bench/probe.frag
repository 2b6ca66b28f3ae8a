// probe.frag: a synthetic pass for measuring what bounds a fragment pass (bin/bench/passprobe): FETCHES
// texel reads spread along the row as an FFT pass spreads them, summed, written to TARGETS
// render targets. Not part of the chain.

uniform float u_stride;   // distance between the reads, in texels

void main() {
    float x = x_index(), y = y_index();
    vec4 sum = vec4(0.0);
    for (int k = 0; k < FETCHES; ++k) sum += fetch_xy(mod(x + float(k) * u_stride, u_size.x), y);
    for (int t = 0; t < TARGETS; ++t) gl_FragData[t] = sum + float(t);
}

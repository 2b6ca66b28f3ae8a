// scale.frag: the normalisation of the forward transform (Eq. 1's 1/N), where no untangling is
// needed: indices 0 and L/2 of tangled pairs, and every complex column after the column FFT.
// Reads and writes one texel; u_scale is the row or column stage's factor of 1/(MN)
// (sizes.h, normalisation; 1/M and 1/N for the powers of two of the radix-2 chain).

uniform float u_scale;

void main() {
    gl_FragColor = fetch_xy(x_index(), y_index()) * u_scale;
}

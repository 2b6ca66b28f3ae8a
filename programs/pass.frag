// pass.frag: copies a texel unchanged. The inverse transform's counterpart of scale.frag: the
// texels that tangle.frag does not touch still have to reach the other render target.

void main() {
    gl_FragColor = fetch_xy(x_index(), y_index());
}

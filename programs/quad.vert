// quad.vert: the trivial vertex program of every pass. Corners arrive in texels of the M x N
// target (integers); a quad with integer corners covers exactly the texels whose centres lie
// inside it.
attribute vec2 a_position;
uniform vec2 u_size;   // (M, N), the target's size

void main() {
    gl_Position = vec4(2.0 * a_position / u_size - 1.0, 0.0, 1.0);
}

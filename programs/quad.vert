// quad.vert: the trivial vertex program of every pass. Corners arrive in texels of the target
// (integers); a quad with integer corners covers exactly the texels whose centres lie inside it.
attribute vec2 a_position;
uniform vec2 u_target_size;   // the render target's width and height

void main() {
    gl_Position = vec4(2.0 * a_position / u_target_size - 1.0, 0.0, 1.0);
}

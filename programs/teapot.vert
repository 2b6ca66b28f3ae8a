// teapot.vert: the scene's vertex program: eye-space position and normal for lighting.
attribute vec3 a_position;
attribute vec3 a_normal;
uniform mat4 u_model_view;
uniform mat4 u_projection;
uniform mat3 u_normal_matrix;
varying vec3 v_eye;
varying vec3 v_normal;

void main() {
    vec4 eye = u_model_view * vec4(a_position, 1.0);
    v_eye = eye.xyz;
    v_normal = u_normal_matrix * a_normal;
    gl_Position = u_projection * eye;
}

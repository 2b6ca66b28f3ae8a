// teapot.frag: the scene's lighting, in linear radiance: a copper-coloured Blinn-Phong teapot
// under a key light and a dim fill. The specular highlight reaches u_exposure (default 6), far
// above 1, so a wide kernel spreads it into bloom (the frame is float RGBA). LDR clamps the frame
// to [0, 1] for comparisons with files. Alpha is coverage: 1 on the teapot.
uniform vec3 u_light_dir;   // eye space, toward the key light
uniform float u_exposure;   // highlight intensity
varying vec3 v_eye;
varying vec3 v_normal;

void main() {
    vec3 n = normalize(v_normal);
    vec3 v = normalize(-v_eye);
    if (dot(n, v) < 0.0) n = -n;   // two-sided: the inside of the spout and the lid gap
    vec3 l = normalize(u_light_dir);
    vec3 h = normalize(l + v);
    float diffuse = max(dot(n, l), 0.0);
    float fill = max(dot(n, normalize(vec3(-0.6, -0.2, 0.5))), 0.0);
    float specular = diffuse > 0.0 ? pow(max(dot(n, h), 0.0), 90.0) : 0.0;
    vec3 albedo = vec3(0.78, 0.42, 0.20);
    vec3 colour = albedo * (0.06 + 0.85 * diffuse + 0.18 * fill) + vec3(u_exposure * specular);
#ifdef LDR
    colour = min(colour, vec3(1.0));
#endif
    gl_FragColor = vec4(colour, 1.0);
}

// display.frag: shows a float frame on the screen (or in a saved screenshot).
//
// Reads:  u_src, the frame; u_view_scale maps a window pixel to a frame texel:
//         texel = (gl_FragCoord - offset) * scale, so a 1:1 view reads every texel exactly.
// Writes: TONEMAP_ACES: exposure, then Narkowicz's fit of the ACES filmic curve
//         x (2.51 x + 0.03) / (x (2.43 x + 0.59) + 0.14), then the sRGB encoding: highlights far
//         above 1 roll off instead of clipping.
//         TONEMAP_CLAMP: the values clamped to [0, 1], no curve (spectrum views, and frames that
//         tests compare with files).

uniform sampler2DRect u_src;
uniform vec4 u_view_scale;   // (offset x, offset y, texels per pixel x, y)
uniform float u_exposure;

vec3 srgb_encode(vec3 c) {
    vec3 lo = 12.92 * c;
    vec3 hi = 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055;
    return mix(lo, hi, step(vec3(0.0031308), c));
}

void main() {
    vec2 texel = (gl_FragCoord.xy - u_view_scale.xy) * u_view_scale.zw;
    vec3 c = texture2DRect(u_src, texel).rgb;
#if defined(TONEMAP_ACES)
    c = max(c * u_exposure, vec3(0.0));
    c = clamp(c * (2.51 * c + 0.03) / (c * (2.43 * c + 0.59) + 0.14), 0.0, 1.0);
    c = srgb_encode(c);
#elif defined(TONEMAP_CLAMP)
    c = clamp(c, 0.0, 1.0);
#else
#error "display.frag needs TONEMAP_ACES or TONEMAP_CLAMP"
#endif
    gl_FragColor = vec4(c, 1.0);
}

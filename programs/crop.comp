// crop.comp: a filter's result into the caller's texture (the public TextureFilter), in the
// texture's own format: a compute pass where a framebuffer blit would do, because blits run as
// fragment work and the data-centre GPUs this project measures have few units for it (a 1024^2
// blit cost about as much as the whole compute filter there).
//
// Reads:  u_src, the filter's float RGBA result, a rectangle texture; output texel g is source
//         texel u_origin + g (the frame's part of a padded grid, or all of an unpadded one).
// Writes: u_dst, level 0 of the caller's texture: u_extent texels, converted to its format by the
//         image store (IMAGE_FORMAT: rgba32f, rgba16f, rgba8, rgba16, rgb10_a2, ...: clamped and
//         rounded for the normalised ones, as a blit does).
// Variants: IMAGE_FORMAT; DEST_2D for a GL_TEXTURE_2D, else GL_TEXTURE_RECTANGLE.
layout(local_size_x = 16, local_size_y = 16) in;

uniform sampler2DRect u_src;
#ifdef DEST_2D
layout(IMAGE_FORMAT, binding = 0) writeonly uniform image2D u_dst;
#else
layout(IMAGE_FORMAT, binding = 0) writeonly uniform image2DRect u_dst;
#endif
uniform ivec2 u_origin;
uniform ivec2 u_extent;

void main() {
    ivec2 g = ivec2(gl_GlobalInvocationID.xy);
    if (g.x >= u_extent.x || g.y >= u_extent.y) return;
    imageStore(u_dst, g, texelFetch(u_src, u_origin + g));
}

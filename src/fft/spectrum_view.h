// Drawing a spectrum for people (Figure 4b): programs/spectrum.frag over a render target.
#pragma once

#include "gl/program.h"
#include "gl/quad.h"
#include "gl/texture.h"

namespace gpufft {

/// Draws spectra as Figure 4(b) shows them: log magnitude, centred.
class SpectrumView {
public:
    explicit SpectrumView(ProgramCache& programs);
    /// Draws the centred log-magnitude view of `spectrum` (a rectangle texture in the compressed
    /// layout, the size of `view`) into `view`.
    /// `bottom_up`: the transformed image was stored bottom row first (a rendered frame);
    /// the view is oriented for showing top row first either way.
    void draw(GLuint spectrum, RenderTarget& view, bool bottom_up = false);

private:
    ProgramCache& programs_;
    QuadBuffer quads_;
};

}  // namespace gpufft

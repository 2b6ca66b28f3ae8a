#include "fft/spectrum_view.h"

#include <stdexcept>

namespace gpufft {

SpectrumView::SpectrumView(ProgramCache& programs) : programs_(programs) {}

void SpectrumView::draw(GLuint spectrum, RenderTarget& view, bool bottom_up) {
    const Region all{0, 0, view.width(), view.height()};
    quads_.add({all});
    prepare_pass_state();
    const GlProgram& program = programs_.get({"quad.vert", "spectrum.frag", bottom_up ? std::vector<std::string>{"BOTTOM_UP"} : std::vector<std::string>{}, true});
    program.use();
    program.set(Uniform::Size, static_cast<float>(view.width()), static_cast<float>(view.height()));
    program.set(Uniform::TargetSize, static_cast<float>(view.width()), static_cast<float>(view.height()));
    program.set(Uniform::Gain, static_cast<float>(static_cast<double>(view.width()) * view.height()));
    view.bind_for_drawing();
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_RECTANGLE, spectrum);
    quads_.bind();
    quads_.draw(all);
    quads_.unbind();
    glUseProgram(0);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    check_gl("drawing a spectrum view");
}

}  // namespace gpufft

#include "fft/filter.h"

#include <stdexcept>

namespace gpufft {

Filter::Filter(Fft2D& fft, const std::vector<float>& impulse_response) : fft_(fft) { set_impulse_response(impulse_response); }

Filter::Filter(Fft2D& fft, const Texture& impulse_response, bool point_symmetric) : fft_(fft) {
    set_impulse_response(impulse_response, point_symmetric);
}

bool point_symmetric(const std::vector<float>& rgba, int width, int height) {
    if (rgba.size() != static_cast<size_t>(width) * static_cast<size_t>(height) * 4) return false;
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            const size_t at = (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4;
            const size_t mirror = (static_cast<size_t>((height - y) % height) * static_cast<size_t>(width) +
                                   static_cast<size_t>((width - x) % width)) * 4;
            for (size_t c = 0; c < 4; ++c)
                if (!(rgba[at + c] == rgba[mirror + c])) return false;
        }
    return true;
}

void Filter::set_impulse_response(const Texture& impulse_response, bool point_symmetric) {
    if (impulse_response.width() != fft_.width() || impulse_response.height() != fft_.height())
        throw std::invalid_argument("the impulse response must have the transform's size");
    real_ = point_symmetric;
    fft_.prepare_filter(real_);
    if (fft_.reorders_kernel() && !fft_.kernel_reads_spectrum()) {
        // The spectrum waits for spectrum(): keep the impulse response (the caller's texture may
        // change before then).
        spectrum_.reset();
        if (!impulse_ || impulse_->texture().storage() != impulse_response.storage())
            impulse_.emplace(fft_.width(), fft_.height(), impulse_response.storage());
        copy_texture(impulse_response, impulse_->texture());
    } else {
        impulse_.reset();
        if (!spectrum_) spectrum_.emplace(fft_.width(), fft_.height(), Storage::Float32);
        fft_.forward(impulse_response, *spectrum_);
    }
    reorder(impulse_response);
}

void Filter::set_impulse_response(const std::vector<float>& impulse_response) {
    if (impulse_response.size() != static_cast<size_t>(fft_.width()) * static_cast<size_t>(fft_.height()) * 4)
        throw std::invalid_argument("the impulse response must have the transform's size");
    fft_.input().upload(impulse_response.data());
    set_impulse_response(fft_.input(), point_symmetric(impulse_response, fft_.width(), fft_.height()));
}

const RenderTarget& Filter::spectrum() {
    if (!spectrum_) {
        spectrum_.emplace(fft_.width(), fft_.height(), Storage::Float32);
        fft_.forward(impulse_->texture(), *spectrum_);
        impulse_.reset();
    }
    return *spectrum_;
}

void Filter::reorder(const Texture& impulse_response) {
    if (!fft_.reorders_kernel()) return;
    const std::array<int, 2> size = fft_.kernel_size();
    if (!reordered_) reordered_.emplace(size[0], size[1], Storage::Float32);
    fft_.reorder_kernel(impulse_response, spectrum_ ? &spectrum_->texture() : nullptr, *reordered_);
}

void Filter::apply(const Texture& frame, RenderTarget& out, Profile* profile) {
    fft_.filter(frame, kernel(), real_, out, profile);
}

void Filter::apply(const std::vector<const Texture*>& frames, const std::vector<RenderTarget*>& outs, Profile* profile) {
    fft_.filter_batch(frames, kernel(), real_, outs, profile);
}

std::vector<float> Filter::apply(const std::vector<float>& image) {
    if (image.size() != static_cast<size_t>(fft_.width()) * static_cast<size_t>(fft_.height()) * 4)
        throw std::invalid_argument("the image must have the filter's size");
    fft_.input().upload(image.data());
    apply(fft_.input(), fft_.output());
    return fft_.output().download();
}

}  // namespace gpufft

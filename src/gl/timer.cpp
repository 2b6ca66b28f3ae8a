#include "gl/timer.h"


namespace gpufft {

void GpuTimestamps::start() {
    used_ = 0;
    mark();
}

void GpuTimestamps::mark() {
    if (used_ == queries_.size()) queries_.push_back(new_query());
    glQueryCounter(queries_[used_++].get(), GL_TIMESTAMP);
}

std::vector<double> GpuTimestamps::intervals_ms() {
    std::vector<GLuint64> t(used_);
    for (size_t i = 0; i < used_; ++i) glGetQueryObjectui64v(queries_[i].get(), GL_QUERY_RESULT, &t[i]);
    std::vector<double> ms;
    for (size_t i = 0; i + 1 < used_; ++i) ms.push_back(t[i + 1] > t[i] ? static_cast<double>(t[i + 1] - t[i]) * 1e-6 : 0.0);
    return ms;
}

double GpuTimer::milliseconds() {
    std::vector<double> ms = stamps_.intervals_ms();
    return ms.empty() ? 0.0 : ms[0];
}

}  // namespace gpufft

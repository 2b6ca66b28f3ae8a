// GLSL programs: sources embedded in the binary at build time (or read from GPUFFT_PROGRAMS_DIR
// while developing shaders), variants by injected #defines, a cache keyed by (files, defines), and
// uniform locations looked up once at link time.
#pragma once

#include "gl/handle.h"
#include "gl/program_binaries.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace gpufft {

/// Every uniform the project's programs use; locations are looked up once per program at link time.
enum class Uniform {
    Src, Kernel, Twiddle, Planes, Size, TargetSize, Stride, TwiddleStep, Scale, Gain,
    // the teapot scene and the display
    ModelView, Projection, NormalMatrix, LightDir, Exposure, Mode, ViewScale,
    // stored samples in and out (gpu_samples)
    Samples, Table, ImageSize, Origin, Offset, Extent, Channels, Max, Top, StripOrigin, Fold,
    // PNG rows deflated on the GPU (gpu_deflate)
    RowShape, Blocks,
    // the compute FFT (fft_line.comp): channel phases, the grid (M, N), the dispatch's lines
    Phases, Grid, Lines,
    Count
};

/// The source text of programs/<name>: one added by add_program_source(), else the embedded copy,
/// or the file under $GPUFFT_PROGRAMS_DIR.
std::string program_source(const std::string& name);
/// Makes `text` the source of program `name` (for programs that live outside programs/, such as
/// the benchmarks' probes).
void add_program_source(const std::string& name, const std::string& text);

struct ProgramSpec {
    std::string vertex;                ///< file in programs/, empty for compute programs
    std::string fragment;              ///< or the compute shader (.comp)
    std::vector<std::string> defines;  ///< injected as #define lines, in this order
    bool with_common = true;           ///< prepend common.glsl to the fragment program
    bool operator<(const ProgramSpec& o) const;
};

/// A linked program; move-only.
class GlProgram {
public:
    /// A program whose compiles and link are issued but not yet checked (see ProgramCache::prepare).
    class Pending {
    public:
        explicit Pending(const ProgramSpec& spec);
        ~Pending();
        Pending(Pending&&) = default;
        Pending& operator=(Pending&&) = delete;
        const ProgramSpec& spec() const { return spec_; }
        /// Whether the driver has finished its compiles and link (GL_COMPLETION_STATUS_KHR, asked
        /// without waiting); true where it cannot say (no KHR/ARB_parallel_shader_compile).
        bool finished() const;

    private:
        friend class GlProgram;
        ProgramSpec spec_;
        std::vector<GLuint> shaders_;  // none where the program was linked from its binary
        ProgramBinaries binaries_;     // where its binary was looked for
        ProgramBinaries::Key key_;
        bool store_ = false;  // keep the binary there once linked
        ProgramHandle program_;
    };

    GlProgram() = default;
    explicit GlProgram(const ProgramSpec& spec);
    /// Checks the compiles and the link (GlError with the driver's log), then looks up uniforms.
    explicit GlProgram(Pending&& pending);

    GLuint id() const { return id_.get(); }
    GLint location(Uniform u) const { return locations_[static_cast<size_t>(u)]; }
    void use() const { glUseProgram(id_.get()); }
    void set(Uniform u, float v) const;
    void set(Uniform u, float a, float b) const;
    void set(Uniform u, int v) const;
    void set_ivec2(Uniform u, int a, int b) const;
    void set_vec3(Uniform u, const float* v) const;
    void set_vec4(Uniform u, const float* v) const;
    void set_mat3(Uniform u, const float* column_major) const;
    void set_mat4(Uniform u, const float* column_major) const;

private:
    ProgramHandle id_;
    std::array<GLint, static_cast<size_t>(Uniform::Count)> locations_{};
};

/// Programs by (files, defines), compiled on first use and kept for the life of the context.
class ProgramCache {
public:
    ProgramCache() = default;
    ~ProgramCache();
    ProgramCache(const ProgramCache&) = delete;
    ProgramCache& operator=(const ProgramCache&) = delete;
    const GlProgram& get(const ProgramSpec& spec);
    /// Compiles every program of `specs` not yet cached, all issued before any is waited for.
    void prepare(const std::vector<ProgramSpec>& specs);
    /// Issues the compiles and links of every program of `specs` not yet cached or started, and
    /// returns without waiting for any: a driver with KHR/ARB_parallel_shader_compile compiles them
    /// on threads of its own while the caller goes on drawing. get() and prepare() take a started
    /// program when asked for it, waiting for it then.
    void start(const std::vector<ProgramSpec>& specs);
    /// Whether every program of `specs` is linked, asking the driver without waiting: one started
    /// program that it has finished is taken a call (a failed one throws, as prepare() would), so
    /// that a renderer asking once a frame spreads their cost over frames. Where the driver cannot
    /// say (no parallel-compile extension), a started program counts as finished, and taking it
    /// waits. A program neither cached nor started is not.
    bool ready(const std::vector<ProgramSpec>& specs);
    size_t size() const { return programs_.size(); }   ///< programs linked
    size_t started() const { return started_.size(); }   ///< started and not yet taken
    /// Seconds every cache of the process has spent compiling and linking (-v's setup line).
    static double seconds();

private:
    /// The started program of `spec` linked into the cache (waiting for it), if there is one.
    void take(const ProgramSpec& spec);
    std::map<ProgramSpec, GlProgram> programs_;
    std::map<ProgramSpec, GlProgram::Pending> started_;
};

/// Attribute indices of a_position and a_normal (bound before linking).
constexpr GLuint kPositionAttribute = 0;
constexpr GLuint kNormalAttribute = 1;

}  // namespace gpufft

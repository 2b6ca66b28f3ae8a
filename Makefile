# gpufft: Moreland & Angel's "The FFT on a GPU" as a C++ library and three tools. See README.md.
#
#   make            check Debian packages (installs missing ones as root), build bin/
#   make test       build and run every test; ends with "N passed, N failed"
#   make demo       the main job: filter the bundled images/ into out/<filter>/
#   make images     regenerate the bundled images in images/ (needs a GL context)
#   make install    tools, library, headers, gpufft.pc and man pages into PREFIX (/usr/local), under
#                   DESTDIR if set; make uninstall removes them
#   make cufft      the cuFFT peer program bin/cufft_filter (needs nvcc; run on an NVIDIA GPU)
#   make fuzz       build the libFuzzer targets (clang) and run each FUZZ_SECONDS (default 600) on
#                   the project's seed corpus; findings land in out/fuzz/findings/
#   DEBUG=1         -O0 -g, and every GL error printed as it happens (GL debug output)
#   SANITIZE=1      AddressSanitizer + UndefinedBehaviorSanitizer (objects in obj-sanitize/, binaries in
#                   bin/sanitize/); make test SANITIZE=1 runs the whole suite on them
#   SANITIZE=thread ThreadSanitizer (obj-tsan/, bin/tsan/): bin/tsan/test/test_fftfilter runs the batch
#                   pipeline's tests under it (make tsan)

CXX      ?= g++
PKGS     := glew egl glut libpng zlib libdeflate fftw3 fftw3f
# Debian 12 packages: build tools, libraries, Mesa's software GL (llvmpipe) and what the tests drive.
DEB_PACKAGES := g++ make pkg-config libglew-dev libegl-dev libegl-mesa0 libgl1-mesa-dri freeglut3-dev \
                libpng-dev libdeflate-dev libfftw3-dev xvfb xauth xdotool bsdutils gnuplot-nox time help2man

OBJ      := obj
BIN      := bin
ifeq ($(SANITIZE),1)
OBJ      := obj-sanitize
BIN      := bin/sanitize
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -DGPUFFT_SANITIZE
# Mesa's and LLVM's allocations that live until exit are not ours: test/lsan.supp names them.
# intercept_tls_get_addr=0: GCC 12's libsanitizer guesses a dynamic TLS block's extent from a
# "glibc 2.19 header" whenever the block starts 16 bytes past a page, which an ASan heap chunk can;
# it then reads garbage (e.g. tls={0xea7 0x1800001102} under verbosity=2) and the leak checker's
# tracer dies of SIGSEGV at exit. The blocks are ASan heap chunks, found through the DTV, so leak
# checking loses nothing. (LLVM 17 replaced the guess with __sanitizer_get_allocated_begin.)
export ASAN_OPTIONS  := detect_leaks=1:abort_on_error=0:strict_string_checks=1:intercept_tls_get_addr=0
export LSAN_OPTIONS  := suppressions=$(CURDIR)/test/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
endif
ifeq ($(SANITIZE),thread)
OBJ      := obj-tsan
BIN      := bin/tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
# Mesa's and FFTW's own threads are not instrumented: test/tsan.supp names what they report.
export TSAN_OPTIONS := suppressions=$(CURDIR)/test/tsan.supp:halt_on_error=1:report_signal_unsafe=0
endif

CXXFLAGS ?= $(if $(DEBUG),-O0 -g,-O2 -DNDEBUG)
CXXFLAGS += -std=c++17 -fPIC -Wall -Wextra -pedantic -MMD -MP $(SANFLAGS)
CPPFLAGS += -Isrc -I$(OBJ) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS  += $(SANFLAGS)
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lfftw3f_threads -lfftw3_threads -lpthread -lm

# The library (installed: libgpufft.a, libgpufft.so.1, the public headers src/gpufft/*.h) and what
# only the tools share (the teapot scene, options and the batch pipeline), kept out of it.
LIB_SRC  := $(wildcard src/base/*.cpp src/gl/*.cpp src/fft/*.cpp src/reference/*.cpp src/image/*.cpp src/gpufft/*.cpp)
LIB_OBJ  := $(LIB_SRC:%.cpp=$(OBJ)/%.o)
LIB      := $(OBJ)/libgpufft.a
VERSION  := $(shell sed -n 's/^\#define GPUFFT_VERSION "\(.*\)"/\1/p' src/gpufft/gpufft.h)
SONAME   := libgpufft.so.1
SHLIB    := $(OBJ)/libgpufft.so.$(VERSION)
APP_SRC  := $(wildcard src/scene/*.cpp src/app/*.cpp)
APP_LIB  := $(OBJ)/libgpufft-app.a
TOOLS    := $(patsubst src/tools/%.cpp,$(BIN)/%,$(wildcard src/tools/*.cpp))
TESTS    := $(patsubst test/%.cpp,$(BIN)/test/%,$(filter-out test/check.cpp,$(wildcard test/*.cpp)))
PROGRAMS := $(sort $(wildcard programs/*))

# The main job: every bundled image through several filters, and their spectra, into out/.
DEMO_FILTERS := gaussian:4 disk:6 motion:25,30 sharpen:1.5 lowpass:0.1 highpass:0.05 \
                images/kernels/hexagon.png images/kernels/star-streak.png images/kernels/chromatic.png

.PHONY: all deps test bench demo images cufft fuzz fuzzers clean tsan install uninstall man
# Keep the objects of tools and tests: they are not intermediate files to delete.
.SECONDARY:
# The shared library is not built under the sanitizers (their runtime belongs to the executable).
all: deps $(TOOLS) $(TESTS) $(if $(SANFLAGS),,$(SHLIB))

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done | tr '\n' ' '); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing: $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	  else \
	    echo "missing Debian packages; run:  sudo apt-get install -y $$missing"; exit 1; \
	  fi; \
	fi

# The programs are embedded in the binaries, so installed tools work from any directory: each file
# becomes {"name", R"glsl(text)glsl"}, in a .inc file the sources include.
embed = @mkdir -p $(@D); for f in $(1); do printf '{"%s", R"glsl(' "$${f\#\#*/}"; cat "$$f"; printf ')glsl"},\n'; done > $@.tmp && mv $@.tmp $@
$(OBJ)/embedded_programs.inc: $(PROGRAMS) Makefile
	$(call embed,$(PROGRAMS))

$(OBJ)/src/gl/program.o: $(OBJ)/embedded_programs.inc

# deps (apt-get) runs once before any compile, not beside them under make -j.
$(OBJ)/%.o: %.cpp | deps
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(APP_LIB): $(APP_SRC:%.cpp=$(OBJ)/%.o)
	@rm -f $@
	ar rcs $@ $^

# The shared library, from the same (position-independent) objects.
$(SHLIB): $(LIB_OBJ)
	$(CXX) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined $^ $(LDLIBS) -o $@

$(BIN)/%: $(OBJ)/src/tools/%.o $(APP_LIB) $(LIB)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BIN)/test/%: $(OBJ)/test/%.o $(OBJ)/test/check.o $(APP_LIB) $(LIB)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS) $^ $(LDLIBS) -o $@

# `make test`, `make demo` and `make tsan` build on every core: a sub-make with -j (none where the
# command line gave -j, whose jobserver it then shares). CI's three builds on the 2-core machine
# had taken about 11 of its 20 minutes one compile at a time.
JOBS     ?= $(shell nproc 2>/dev/null || echo 1)
build_all = @$(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS)) $(1)

test:
	$(call build_all,all)
	@test/run.sh $(BIN)

# Benchmark programs (test/bench/): built by `make bench`, never by all or test; their own GLSL
# probes (test/bench/*.frag, *.comp) are embedded in them alone.
BENCHES  := $(patsubst test/bench/%.cpp,$(BIN)/bench/%,$(wildcard test/bench/*.cpp))
BENCH_PROGRAMS := $(sort $(wildcard test/bench/*.frag test/bench/*.comp))
$(OBJ)/bench_programs.inc: $(BENCH_PROGRAMS) Makefile
	$(call embed,$(BENCH_PROGRAMS))
$(patsubst $(BIN)/bench/%,$(OBJ)/test/bench/%.o,$(BENCHES)): $(OBJ)/bench_programs.inc
bench: deps $(BENCHES) $(TOOLS)
$(BIN)/bench/%: $(OBJ)/test/bench/%.o $(APP_LIB) $(LIB)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The batch pipeline's tests, the streamed rows' inflater, whole streams inflated in parts and a file's
# channels filtered at once on FFTW, under ThreadSanitizer (llvmpipe without its LLVM passes, as test/run.sh).
tsan:
	$(call build_all,SANITIZE=thread bin/tsan/fftfilter bin/tsan/test/test_fftfilter)
	@SANITIZE=thread GALLIVM_PERF="$${GALLIVM_PERF-nopt}" TSAN_OPTIONS="suppressions=$(CURDIR)/test/tsan.supp:halt_on_error=1:report_signal_unsafe=0" \
	    bin/tsan/test/test_fftfilter shards threads refuses gpu_conversion inflate_and inflate_ahead inflates_in_parts channels_at_once fast_levels host_areas

demo:
	$(call build_all,all)
	@for k in $(DEMO_FILTERS); do \
	  name=$$(basename "$$k" .png | tr ':,' '--'); \
	  echo "== $$k -> out/$$name/"; \
	  $(BIN)/fftfilter -f -k "$$k" -o "out/$$name/" images || exit 1; \
	done
	@echo "== spectra -> out/spectrum/"; $(BIN)/fftfilter -f --spectrum -o out/spectrum/ images
	@echo "Filtered images are in $(CURDIR)/out/ (one folder per filter, spectra in out/spectrum/)."

# The cuFFT peer (test/cufft_filter.cu): only where nvcc exists, never part of all or test.
cufft: $(BIN)/cufft_filter
$(BIN)/cufft_filter: test/cufft_filter.cu
	@command -v nvcc >/dev/null || { echo "make cufft needs nvcc (the CUDA toolkit)"; exit 1; }
	@mkdir -p $(@D)
	nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 $< -o $@ \
	    -lcufft -Xlinker -rpath=/usr/local/cuda/lib64 -lfftw3 -lm

# Fuzzing with clang's libFuzzer (Debian: clang, libclang-rt-14-dev), ASan and UBSan: the PNG reader
# and the kernel-spec parser (test/fuzz/). Only the CPU-side sources they reach are built.
FUZZ_CXX     ?= clang++
FUZZ_SECONDS ?= 600
FUZZ_OBJ     := obj-fuzz
FUZZ_FLAGS   := -std=c++17 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SRC     := src/image/png_io.cpp src/base/core_pool.cpp src/image/inflate.cpp src/image/deflate.cpp src/image/kernels.cpp src/image/files.cpp src/reference/reference.cpp src/base/parse.cpp
FUZZ_LIBOBJ  := $(FUZZ_SRC:%.cpp=$(FUZZ_OBJ)/%.o)
FUZZERS      := $(BIN)/fuzz/fuzz_png $(BIN)/fuzz/fuzz_kernel

$(FUZZ_OBJ)/%.o: %.cpp
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -Isrc $(shell pkg-config --cflags libpng) -MMD -MP -c $< -o $@

$(BIN)/fuzz/fuzz_%: test/fuzz/fuzz_%.cpp test/fuzz/targets.h $(FUZZ_LIBOBJ)
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer -Isrc -Itest $(shell pkg-config --cflags libpng) $< $(FUZZ_LIBOBJ) \
	    $(shell pkg-config --libs libpng zlib libdeflate fftw3) -lfftw3_threads -lpthread -o $@

$(BIN)/fuzz/make_corpus: test/fuzz/make_corpus.cpp test/fuzz/corpus.h test/png_fixture.h
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O1 -Itest $< -lz -o $@

fuzzers:
	@command -v $(FUZZ_CXX) >/dev/null || { echo "make fuzz needs $(FUZZ_CXX): apt-get install -y clang libclang-rt-14-dev"; exit 1; }
	@$(MAKE) --no-print-directory $(FUZZERS) $(BIN)/fuzz/make_corpus

# Each fuzzer grows its corpus in out/fuzz/corpus/NAME from the seeds; a crash, leak, timeout or
# sanitizer report is written to out/fuzz/findings/ (keep it in test/fuzz/regressions/ once fixed).
fuzz: fuzzers
	@mkdir -p out/fuzz/seeds && $(BIN)/fuzz/make_corpus out/fuzz/seeds
	@mkdir -p out/fuzz/findings
	@for t in png kernel; do \
	  mkdir -p out/fuzz/corpus/$$t; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  $(BIN)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
	      -print_final_stats=1 -artifact_prefix=out/fuzz/findings/$$t- out/fuzz/corpus/$$t out/fuzz/seeds/$$t \
	      2> out/fuzz/fuzz_$$t.log || { tail -n 40 out/fuzz/fuzz_$$t.log; exit 1; }; \
	  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|cov: ' out/fuzz/fuzz_$$t.log | tail -n 3; \
	done

# Installing: the three tools, the library (static, and shared with a soname), the public headers,
# gpufft.pc and man pages made from each tool's --help by help2man. Honours PREFIX and DESTDIR;
# `make uninstall` (same PREFIX) removes exactly these files.
PREFIX  ?= /usr/local
BINDIR  := $(PREFIX)/bin
LIBDIR  := $(PREFIX)/lib
INCDIR  := $(PREFIX)/include
MANDIR  := $(PREFIX)/share/man/man1
INSTALL_TOOLS := fftfilter teapot fftcompare
PUBLIC_HEADERS := $(wildcard src/gpufft/*.h)
MAN_PAGES := $(INSTALL_TOOLS:%=$(OBJ)/man/%.1)
INSTALLED := $(INSTALL_TOOLS:%=$(BINDIR)/%) $(LIBDIR)/libgpufft.a $(LIBDIR)/libgpufft.so.$(VERSION) $(LIBDIR)/$(SONAME) \
             $(LIBDIR)/libgpufft.so $(PUBLIC_HEADERS:src/%=$(INCDIR)/%) $(LIBDIR)/pkgconfig/gpufft.pc \
             $(INSTALL_TOOLS:%=$(MANDIR)/%.1)

man_fftfilter  := filter PNG images by convolution through the FFT on the GPU
man_teapot     := the paper's test application: a teapot filtered by the GPU FFT, windowed or headless
man_fftcompare := compare the GPU FFTs with FFTW in accuracy and speed
$(OBJ)/man/%.1: $(BIN)/%
	@mkdir -p $(@D)
	help2man --no-info --no-discard-stderr --version-string=$(VERSION) -n "$(man_$*)" -o $@.tmp ./$< && mv $@.tmp $@
man: $(MAN_PAGES)

# gpufft.pc names PREFIX, so it is written at install time.
define PKG_CONFIG_FILE
prefix=$(PREFIX)
libdir=$${prefix}/lib
includedir=$${prefix}/include

Name: gpufft
Description: Filtering textures by convolution through the FFT on the GPU (OpenGL)
Version: $(VERSION)
Requires: glew egl
Requires.private: libpng zlib libdeflate fftw3 fftw3f
Cflags: -I$${includedir}
Libs: -L$${libdir} -lgpufft
Libs.private: -lfftw3f_threads -lfftw3_threads -lpthread -lm
endef
export PKG_CONFIG_FILE

install: $(INSTALL_TOOLS:%=$(BIN)/%) $(LIB) $(SHLIB) $(MAN_PAGES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/gpufft $(DESTDIR)$(MANDIR)
	install -m 755 $(INSTALL_TOOLS:%=$(BIN)/%) $(DESTDIR)$(BINDIR)/
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libgpufft.a
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/libgpufft.so.$(VERSION)
	ln -sf libgpufft.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libgpufft.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCDIR)/gpufft/
	printf '%s\n' "$$PKG_CONFIG_FILE" > $(DESTDIR)$(LIBDIR)/pkgconfig/gpufft.pc
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(INCDIR)/gpufft 2>/dev/null

images: $(BIN)/makeimages
	$(BIN)/makeimages images

clean:
	rm -rf obj obj-sanitize obj-tsan obj-fuzz bin

-include $(shell find $(OBJ) $(FUZZ_OBJ) -name '*.d' 2>/dev/null)

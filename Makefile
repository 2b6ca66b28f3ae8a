# gpufft: Moreland & Angel's "The FFT on a GPU" as a C++ library and three tools. See README.md.
#
#   make            check Debian packages (installs missing ones as root), build bin/
#   make test       build and run every test; ends with "N passed, N failed"
#   make images     regenerate the bundled images in images/ (needs a GL context)
#   make filter-images  the main job: filter images/ into out/filtered/
#   DEBUG=1         -O0 -g and a glGetError check after GL calls
#   SANITIZE=1      AddressSanitizer + UndefinedBehaviorSanitizer (objects in obj-sanitize/)

CXX      ?= g++
PKGS     := glew egl glut libpng fftw3 fftw3f
# Debian 12 packages: build tools, libraries, Mesa's software GL (llvmpipe) and what the tests drive.
DEB_PACKAGES := g++ make pkg-config libglew-dev libegl-dev libegl-mesa0 libgl1-mesa-dri freeglut3-dev \
                libpng-dev libfftw3-dev xvfb xauth xdotool gnuplot-nox

OBJ      := obj
ifeq ($(SANITIZE),1)
OBJ      := obj-sanitize
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
BIN      := bin

CXXFLAGS ?= $(if $(DEBUG),-O0 -g,-O2 -DNDEBUG)
CXXFLAGS += -std=c++17 -Wall -Wextra -pedantic -MMD -MP $(SANFLAGS)
CPPFLAGS += -Isrc -I$(OBJ) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS  += $(SANFLAGS)
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lfftw3f_threads -lfftw3_threads -lpthread -lm

LIB_SRC  := $(wildcard src/gl/*.cpp src/fft/*.cpp src/image/*.cpp src/scene/*.cpp)
LIB_OBJ  := $(LIB_SRC:%.cpp=$(OBJ)/%.o)
LIB      := $(OBJ)/libgpufft.a
TOOLS    := $(patsubst src/tools/%.cpp,$(BIN)/%,$(wildcard src/tools/*.cpp))
TESTS    := $(patsubst test/%.cpp,$(BIN)/test/%,$(filter-out test/check.cpp,$(wildcard test/*.cpp)))
PROGRAMS := $(sort $(wildcard programs/*))

.PHONY: all deps test images filter-images clean
all: deps $(TOOLS) $(TESTS)

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

# The programs are embedded in the binaries, so installed tools work from any directory.
$(OBJ)/embedded_programs.inc: $(PROGRAMS) Makefile
	@mkdir -p $(@D)
	@for f in $(PROGRAMS); do printf '{"%s", R"glsl(' "$${f#programs/}"; cat "$$f"; printf ')glsl"},\n'; done > $@.tmp
	@mv $@.tmp $@

$(OBJ)/src/gl/program.o: $(OBJ)/embedded_programs.inc

$(OBJ)/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN)/%: $(OBJ)/src/tools/%.o $(LIB)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BIN)/test/%: $(OBJ)/test/%.o $(OBJ)/test/check.o $(LIB)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS) $^ $(LDLIBS) -o $@

test: all
	@test/run.sh $(BIN)

clean:
	rm -rf obj obj-sanitize bin

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

// Writes the fuzzers' seed corpus (corpus.h) into DIR/png and DIR/kernel. Run by `make fuzz`.
#include "corpus.h"

#include <sys/stat.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_corpus DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    int written = 0;
    for (const auto& [sub, seeds] : {std::make_pair(std::string("png"), fuzz::png_seeds()),
                                     std::make_pair(std::string("kernel"), fuzz::kernel_seeds())}) {
        mkdir(dir.c_str(), 0777);
        mkdir((dir + "/" + sub).c_str(), 0777);
        for (const auto& [name, bytes] : seeds) {
            if (!fixture::write_file(dir + "/" + sub + "/" + name, bytes)) {
                std::fprintf(stderr, "make_corpus: %s/%s/%s: cannot write\n", dir.c_str(), sub.c_str(), name.c_str());
                return 1;
            }
            ++written;
        }
    }
    std::printf("make_corpus: %d seeds in %s/png and %s/kernel\n", written, dir.c_str(), dir.c_str());
    return 0;
}

#include "image/files.h"

#include "base/error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpufft {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw Error(path + ": " + what + ": " + std::strerror(errno));
}

mode_t current_umask() {
    mode_t mask = umask(0);
    umask(mask);
    return mask;
}

}  // namespace

std::string base_name(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string strip_extension(const std::string& name) {
    size_t dot = name.find_last_of('.');
    return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

std::string parent_directory(const std::string& path) {
    size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

bool file_exists(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
}

bool is_directory(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool same_file(const std::string& a, const std::string& b) {
    struct stat sa, sb;
    if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void make_directories(const std::string& path) {
    if (path.empty() || is_directory(path)) return;
    std::string parent = parent_directory(path);
    if (parent != path && parent != "." && parent != "/") make_directories(parent);
    if (mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) fail(path, "cannot create directory");
    if (!is_directory(path)) throw Error(path + ": exists and is not a directory");
}

AtomicFile::AtomicFile(const std::string& path, bool overwrite) : path_(path), overwrite_(overwrite) {
    if (path.empty()) throw Error("empty output path");
    if (is_directory(path)) throw Error(path + ": is a directory");
    if (!overwrite && file_exists(path)) throw Error(path + ": already exists (use --force to replace it)");
    temp_ = parent_directory(path) + "/." + base_name(path) + ".tmp-XXXXXX";
    std::vector<char> name(temp_.begin(), temp_.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    if (fd < 0) {
        int saved = errno;
        temp_.clear();
        errno = saved;
        fail(path, "cannot create");
    }
    temp_ = name.data();
    fchmod(fd, 0666 & ~current_umask());  // mkstemp makes 0600; outputs get the usual mode
    file_ = fdopen(fd, "wb");
    if (!file_) {
        close(fd);
        unlink(temp_.c_str());
        fail(path, "cannot open");
    }
}

AtomicFile::~AtomicFile() {
    if (file_) std::fclose(file_);
    if (!committed_ && !temp_.empty()) unlink(temp_.c_str());
}

void AtomicFile::commit() {
    bool ok = std::fflush(file_) == 0 && fsync(fileno(file_)) == 0;
    int saved = errno;
    if (std::fclose(file_) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    file_ = nullptr;
    if (!ok) {
        errno = saved;
        fail(path_, "cannot write");
    }
    int rc;
    if (overwrite_) {
        rc = rename(temp_.c_str(), path_.c_str());
    } else {
        // Refuses atomically if the name appeared meanwhile; link() serves file systems without it.
        rc = renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
        if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
            rc = link(temp_.c_str(), path_.c_str());
            if (rc == 0) unlink(temp_.c_str());
        }
    }
    if (rc != 0) {
        if (errno == EEXIST) throw Error(path_ + ": already exists (use --force to replace it)");
        fail(path_, "cannot rename into place");
    }
    committed_ = true;
}

}  // namespace gpufft

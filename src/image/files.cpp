#include "image/files.h"

#include "base/error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <set>
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

struct Temporaries {
    std::mutex lock;
    std::set<std::string> names;
};

// Never destroyed: a thread may make or drop a file while the process exits.
Temporaries& temporaries() {
    static Temporaries* t = new Temporaries;
    return *t;
}

}  // namespace

int make_temporary_file(std::string& pattern) {
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    Temporaries& t = temporaries();
    std::lock_guard<std::mutex> hold(t.lock);
    const int fd = mkstemp(name.data());
    if (fd < 0) return -1;
    pattern = name.data();
    t.names.insert(pattern);
    return fd;
}

void list_temporary_file(const std::string& path) {
    Temporaries& t = temporaries();
    std::lock_guard<std::mutex> hold(t.lock);
    t.names.insert(path);
}

void forget_temporary_file(const std::string& path) {
    Temporaries& t = temporaries();
    std::lock_guard<std::mutex> hold(t.lock);
    t.names.erase(path);
}

void remove_temporary_file(const std::string& path) {
    Temporaries& t = temporaries();
    std::lock_guard<std::mutex> hold(t.lock);
    unlink(path.c_str());
    t.names.erase(path);
}

int remove_temporary_files_for_exit() {
    Temporaries& t = temporaries();
    t.lock.lock();  // kept: the process ends
    int removed = 0;
    for (const std::string& name : t.names) removed += unlink(name.c_str()) == 0;
    t.names.clear();
    return removed;
}

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

std::optional<FileIdentity> file_identity(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileIdentity(st.st_dev, st.st_ino);
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
    if (path == kStandardOutput) {
        path_ = "standard output";
        if (isatty(STDOUT_FILENO)) throw Error(path_ + ": is a terminal, not a place for a PNG (redirect it to a file or a pipe)");
        file_ = stdout;
        return;
    }
    if (is_directory(path)) throw Error(path + ": is a directory");
    if (!overwrite && file_exists(path)) throw Error(path + ": already exists (use --force to replace it)");
    temp_ = parent_directory(path) + "/." + base_name(path) + ".tmp-XXXXXX";
    int fd = make_temporary_file(temp_);
    if (fd < 0) {
        int saved = errno;
        temp_.clear();
        errno = saved;
        fail(path, "cannot create");
    }
    // mkstemp makes 0600: outputs get the usual mode, and a file they replace keeps its own (as
    // `sed -i` keeps it), so that replacing a group's outputs leaves them the group's.
    struct stat replaced;
    const bool keeps_mode = overwrite && lstat(path.c_str(), &replaced) == 0 && S_ISREG(replaced.st_mode);
    fchmod(fd, keeps_mode ? replaced.st_mode & 0777 : 0666 & ~current_umask());
    file_ = fdopen(fd, "wb");
    if (!file_) {
        int saved = errno;
        close(fd);
        remove_temporary_file(temp_);
        errno = saved;
        fail(path, "cannot open");
    }
}

AtomicFile::~AtomicFile() {
    if (file_ == stdout) return;
    if (file_) std::fclose(file_);
    if (!committed_ && !temp_.empty()) remove_temporary_file(temp_);
}

void AtomicFile::commit() {
    if (file_ == stdout) {
        if (std::fflush(stdout) != 0) fail(path_, "cannot write");
        file_ = nullptr;
        committed_ = true;
        return;
    }
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
    {  // renamed and taken off the list at once: a file is either listed or in place
        Temporaries& t = temporaries();
        std::lock_guard<std::mutex> hold(t.lock);
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
        saved = errno;
        if (rc == 0) t.names.erase(temp_);
    }
    errno = saved;
    if (rc != 0) {
        if (errno == EEXIST) throw Error(path_ + ": already exists (use --force to replace it)");
        fail(path_, "cannot rename into place");
    }
    committed_ = true;
}

}  // namespace gpufft

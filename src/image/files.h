// Files the tools write: whole or not at all, never over an input.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

namespace gpufft {

/// The output path that names standard output.
constexpr const char* kStandardOutput = "-";

/// An output file written under a temporary name in the same directory and renamed over its
/// final name by commit(). Until then the final name is untouched; if the object dies first
/// (an exception, an error), the temporary file is removed, and a tool stopped by a signal removes
/// it too (remove_temporary_files_for_exit). A crash leaves only a hidden ".NAME.tmp-XXXXXX" file,
/// never a partial file under the final name.
class AtomicFile {
public:
    /// Throws gpufft::Error "<path>: ..." when the directory cannot take the file, or when the file
    /// exists and `overwrite` is false. The file gets the usual mode (0666 less the umask); one
    /// that replaces a regular file keeps that file's permission bits.
    /// kStandardOutput ("-") writes to standard output as the bytes come (a pipe has no whole or
    /// absent), unless it is a terminal: errors name it "standard output".
    AtomicFile(const std::string& path, bool overwrite);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    FILE* stream() { return file_; }
    /// Flushes to disk and renames into place (refusing to replace a file unless `overwrite`).
    void commit();

private:
    std::string path_, temp_;
    FILE* file_ = nullptr;
    bool overwrite_;
    bool committed_ = false;
};

/// The process's temporary files. Each is listed from before it exists (mkstemp under the list's
/// lock) until it is renamed into place or removed, so that one call can remove every one that is
/// left when a signal stops the process.
///
/// mkstemp() on `pattern` (ending in XXXXXX, replaced by the name made), the name listed. Returns
/// the descriptor, or -1 with errno set (nothing listed).
int make_temporary_file(std::string& pattern);
/// Lists a name that another program is to create (gnuplot's output), or takes one off the list.
void list_temporary_file(const std::string& path);
void forget_temporary_file(const std::string& path);
/// Removes a temporary file and takes it off the list, at once.
void remove_temporary_file(const std::string& path);
/// Removes every listed file and returns how many it removed. The list stays locked, so that no
/// thread makes, renames or removes a temporary file afterwards: only for a process about to end.
int remove_temporary_files_for_exit();

bool file_exists(const std::string& path);
bool is_directory(const std::string& path);
/// A file's device and inode (symbolic links followed): equal for two paths to one file (hard
/// links and symbolic links included).
using FileIdentity = std::pair<unsigned long long, unsigned long long>;
/// None where the path names no file (or cannot be read).
std::optional<FileIdentity> file_identity(const std::string& path);
/// Creates a directory and its parents; throws gpufft::Error naming the path.
void make_directories(const std::string& path);
/// "dir/name.png" -> "name.png"; "name.png" -> "name"
std::string base_name(const std::string& path);
std::string strip_extension(const std::string& name);
std::string parent_directory(const std::string& path);

}  // namespace gpufft

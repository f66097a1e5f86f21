// Implementation of the filesystem helpers declared in fs.h (POSIX).
#include "lerobot/common/fs.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lerobot/common/error.h"

namespace lerobot {

std::string read_file(const fs::path& path, std::uintmax_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw_data("cannot open file: " + std::string(std::strerror(errno)), path.string(),
               "check that the path exists and is readable");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw_data("not a regular file (a device, FIFO or directory cannot be read as one)", path.string(),
               "replace it with the real file");
  }
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw_data("file is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) +
                   " this kind of file may have",
               path.string(), "the file is damaged or not what its name says");
  }
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string err = std::strerror(errno);
      ::close(fd);
      throw_data("read failed: " + err, path.string());
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {  // a file growing while read
      ::close(fd);
      throw_data("file exceeds " + std::to_string(max_bytes) + " bytes", path.string());
    }
  }
  ::close(fd);
  return out;
}

void fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_runtime("cannot create file: " + std::string(std::strerror(errno)), tmp.string(),
                            "check that the directory is writable and the disk is not full");
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw_runtime("write failed: " + err, path.string(), "check free disk space");
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw_runtime("fsync/close failed: " + std::string(std::strerror(errno)), path.string());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw_runtime("rename failed: " + err, path.string());
  }
  fsync_dir(path.parent_path());
}

MappedFile::MappedFile(const fs::path& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_data("cannot open file: " + std::string(std::strerror(errno)), path.string(),
                         "check that the path exists and is readable");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw_data("cannot stat file", path.string());
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw_data("not a regular file (a device, FIFO or directory cannot be read as one)", path.string(),
               "replace it with the real file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw_data("mmap failed: " + std::string(std::strerror(errno)), path.string());
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), path_(std::move(other.path_)) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

}  // namespace lerobot

#include "support/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tilesmith {

Status WriteFileAtomically(const std::string& path, std::string_view text) {
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  auto fail = [&](const char* what) {
    std::string message = temporary + ": " + what + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    unlink(temporary.c_str());
    return MakeError(ErrorCode::kIo, message);
  };
  if (fd < 0) return fail("open");
  for (size_t done = 0; done < text.size();) {
    ssize_t wrote = write(fd, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return fail("write");
    done += static_cast<size_t>(wrote);
  }
  if (fsync(fd) != 0) return fail("fsync");
  if (close(fd) != 0) {
    fd = -1;
    return fail("close");
  }
  fd = -1;
  if (rename(temporary.c_str(), path.c_str()) != 0) return fail("rename");
  return OkStatus();
}

}  // namespace tilesmith

// DESIGN.md's durability contract, attacked: a writer killed with SIGKILL at random points
// loses no batch it reported and leaves no partial one; a resumed writer skips what was
// committed; a full disk or a read-only file is an error, never a crash or a corrupt file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <set>

#include "db/sqlite_connection.h"
#include "tests/db/db_test_util.h"

namespace tilesmith::db {
namespace {

using testing::H100;
using testing::Kernel;
using testing::OpenStore;
using testing::TempDir;
using testing::Trial;

constexpr int kBatchSize = 40;

const KernelRecord& Gelu() {
  static const KernelRecord kernel = Kernel("gelu");
  return kernel;
}

ResultKey GeluKey() { return {Gelu().fingerprint, H100().Key(), "tilesmith-test-1"}; }

// A trial big enough that a batch takes a while to write, so kills land mid-transaction.
MeasurementRecord TileTrial(int tile, const std::string& job) {
  MeasurementRecord m = Trial(Gelu(), H100(), {{"tile", tile}}, 1.0 + tile % 7);
  m.timing->times_us.assign(200, 1.0 + tile % 7);
  m.job_id = job;
  return m;
}

std::string Integrity(const std::string& path) {
  auto connection = sqlite::Connection::Open(path, sqlite::OpenMode::kReadWrite, 1000);
  if (!connection) return connection.error().message;
  auto check = (*connection)->Prepare("PRAGMA integrity_check");
  if (!check || !check->Step().value_or(false)) return "integrity_check returned nothing";
  return check->Text(0);
}

// Row counts per job id, straight from the file.
std::map<std::string, int64_t> RowsPerJob(const std::string& path) {
  auto connection = sqlite::Connection::Open(path, sqlite::OpenMode::kReadWrite, 1000);
  std::map<std::string, int64_t> rows;
  auto query = (*connection)->Prepare("SELECT job_id, count(*) FROM measurements GROUP BY 1");
  while (query->Step().value_or(false)) rows[query->Text(0)] = query->Int(1);
  return rows;
}

// The child side of a tune: measures tiles 0, 1, 2, … not yet in the store (as a resumed tune
// does), `kBatchSize` per batch, and writes each batch's number to `report_fd` only after
// RecordBatch returned. Stops at `tiles` or when killed. Never returns.
[[noreturn]] void Tune(const std::string& path, int round, int tiles, int report_fd) {
  auto store = SqliteStore::Open(path);
  if (!store) _exit(3);
  auto measured = (*store)->MeasuredConfigs(GeluKey());
  if (!measured) _exit(4);
  std::set<std::string> skip;
  for (const MeasuredConfig& config : *measured) skip.insert(config.config_json);
  std::vector<MeasurementRecord> batch;
  for (int tile = 0, number = 0; tile < tiles; ++tile) {
    if (skip.contains(*CanonicalConfig({{"tile", tile}}))) continue;
    std::string job = "round" + std::to_string(round) + "-batch" + std::to_string(number);
    batch.push_back(TileTrial(tile, job));
    if (static_cast<int>(batch.size()) < kBatchSize && tile + 1 < tiles) continue;
    if (!(*store)->RecordBatch(batch)) _exit(5);
    if (write(report_fd, &number, sizeof number) != sizeof number) _exit(6);
    batch.clear();
    ++number;
  }
  _exit(0);
}

// Starts Tune in a child; returns its pid and the read end of its report pipe.
std::pair<pid_t, int> StartTune(const std::string& path, int round, int tiles) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Tune(path, round, tiles, fds[1]);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// Reads batch numbers until `count` arrived (or EOF); returns them.
std::vector<int> ReadReports(int fd, int count) {
  std::vector<int> reports;
  int number;
  while ((count < 0 || static_cast<int>(reports.size()) < count) &&
         read(fd, &number, sizeof number) == sizeof number) {
    reports.push_back(number);
  }
  return reports;
}

TEST(DurabilityTest, KillNineLosesNoReportedBatchAndResumeSkipsThem) {
  TempDir dir;
  std::string path = dir.File("tune.db");
  {
    auto store = OpenStore(path);
    ASSERT_TRUE(store->PutDevice(H100()) && store->PutKernel(Gelu()));
  }
  std::mt19937 rng(20240501);
  std::set<std::string> reported_jobs;
  constexpr int kRounds = 12;
  constexpr int kTiles = 100000;  // more than any round gets through before its kill
  for (int round = 0; round < kRounds; ++round) {
    auto [pid, fd] = StartTune(path, round, kTiles);
    ASSERT_GT(pid, 0);
    std::vector<int> reports = ReadReports(fd, 1 + rng() % 12);
    usleep(rng() % 4000);  // somewhere inside a later batch, or between two
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status))
        << "the writer stopped on its own (exit " << WEXITSTATUS(status) << ")";
    for (int number : ReadReports(fd, -1)) reports.push_back(number);  // sent before dying
    close(fd);
    for (int number : reports) {
      reported_jobs.insert("round" + std::to_string(round) + "-batch" + std::to_string(number));
    }

    ASSERT_EQ(Integrity(path), "ok") << "round " << round;
    std::map<std::string, int64_t> rows = RowsPerJob(path);
    for (const std::string& job : reported_jobs) {
      EXPECT_EQ(rows[job], kBatchSize) << job << " was reported committed";
    }
    for (const auto& [job, count] : rows) {
      EXPECT_EQ(count, kBatchSize) << job << " is partial";
    }
  }
  // A last resume runs to the end: every tile measured exactly once, none twice.
  auto store = OpenStore(path);
  int64_t committed = store->Stats()->measurements;
  int tiles = static_cast<int>(committed) + 3 * kBatchSize + 7;
  auto [pid, fd] = StartTune(path, kRounds, tiles);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  close(fd);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto measured = store->MeasuredConfigs(GeluKey());
  ASSERT_TRUE(measured.has_value());
  EXPECT_EQ(measured->size(), static_cast<size_t>(tiles));
  for (const MeasuredConfig& config : *measured) {
    EXPECT_EQ(config.trials, 1) << config.config_json << " was measured again after a resume";
  }
  EXPECT_EQ(Integrity(path), "ok");
}

TEST(DurabilityTest, AFullDiskIsAnErrorAndKeepsWhatWasCommitted) {
  TempDir dir;
  std::string path = dir.File("full.db");
  {
    auto store = OpenStore(path);
    ASSERT_TRUE(store->PutDevice(H100()) && store->PutKernel(Gelu()));
    std::vector<MeasurementRecord> first;
    for (int tile = 0; tile < 10; ++tile) first.push_back(TileTrial(tile, "before"));
    ASSERT_TRUE(store->RecordBatch(first).has_value());
    ASSERT_TRUE(store->Vacuum().has_value());
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    // No file of this process may grow past 256 KiB: the disk is "full" for it.
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{256 << 10, 256 << 10};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(2);
    auto store = SqliteStore::Open(path);
    if (!store) _exit(3);
    std::vector<MeasurementRecord> big;
    for (int tile = 10; tile < 2010; ++tile) big.push_back(TileTrial(tile, "too-big"));
    auto result = (*store)->RecordBatch(big);
    if (result) _exit(4);
    std::string message = result.error().message;
    if (write(fds[1], message.data(), message.size()) < 0) _exit(6);
    // The store still answers, with what was committed before.
    auto stats = (*store)->Stats();
    _exit(stats && stats->measurements == 10 ? 0 : 5);
  }
  close(fds[1]);
  std::string message(4096, '\0');
  message.resize(std::max<ssize_t>(0, read(fds[0], message.data(), message.size())));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the writer crashed (signal " << WTERMSIG(status) << ")";
  ASSERT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(message.find(path + ": recording 2000 measurements: "), std::string::npos) << message;
  EXPECT_TRUE(message.find("disk") != std::string::npos) << message;
  EXPECT_EQ(Integrity(path), "ok");
  auto store = OpenStore(path);
  EXPECT_EQ(store->Stats()->measurements, 10);
  EXPECT_TRUE(store->RecordBatch(std::vector{TileTrial(11, "after")}).has_value())
      << "with space again, writing works";
}

TEST(DurabilityTest, AReadOnlyDatabaseIsAClearError) {
  TempDir dir;
  std::string path = dir.File("ro.db");
  {
    auto store = OpenStore(path);
    ASSERT_TRUE(store->PutDevice(H100()) && store->PutKernel(Gelu()));
  }
  auto store = OpenStore(path, {.mode = sqlite::OpenMode::kReadOnly});
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Stats()->kernels, 1) << "reading works";
  auto written = store->RecordBatch(std::vector{TileTrial(1, "ro")});
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(written.error().message.find(path), std::string::npos) << written.error().message;
  EXPECT_NE(written.error().message.find("readonly"), std::string::npos) << written.error().message;
  EXPECT_NE(written.error().message.find("not writable"), std::string::npos)
      << written.error().message;
}

TEST(DurabilityTest, AFileWithoutWritePermissionIsAClearError) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes through file permissions";
  TempDir dir;
  std::string path = dir.File("ro.db");
  ASSERT_NE(OpenStore(path), nullptr);
  std::filesystem::permissions(path, std::filesystem::perms::owner_read);
  auto opened = SqliteStore::Open(path);
  if (opened) {
    auto put = (*opened)->PutKernel(Kernel("other"));
    ASSERT_FALSE(put.has_value());
    EXPECT_NE(put.error().message.find("not writable"), std::string::npos) << put.error().message;
  } else {
    EXPECT_NE(opened.error().message.find(path), std::string::npos) << opened.error().message;
  }
}

}  // namespace
}  // namespace tilesmith::db
